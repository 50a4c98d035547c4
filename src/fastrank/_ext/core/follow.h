/* Where a tie group's seeded shuffle (shuffle.h; _tiesort's shuffle_group) moves a few
 * labels, followed without the group's other labels: ordinal coverage, ranking loss and
 * average precision need only the places of a group's relevant labels (driver:
 * _ext/tie_counts.pyx). Step t of a group of m labels (the row's step `step` + t) swaps
 * the group's place m - 1 - t with the place it draws, so a label at place p is moved only
 * by a step that draws p (to that step's last place, where no later step reaches it) or
 * by the step whose last place is p (to the place it draws): each label is followed on its
 * own (two followed labels swapped by one step are each moved by it), by a search of the
 * drawn places for its own. The places are drawn as the search needs them, many steps a
 * pass with AVX2 (follow/avx2-inl.h) and AVX-512 (follow/avx512-inl.h), each step's number
 * computed from its index alone; the same places on every path. With AVX2 or AVX-512 a
 * group of at most 65 labels has its steps all drawn at once and each search is one
 * 64-bit mask of eight or four comparisons: no loop whose exit a branch must guess. */
#ifndef FR_FOLLOW_H
#define FR_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "follow/avx512-inl.h"
#include "shuffle.h"
#include "simd.h"

/* the steps drawn beyond those a search needs, while the group has them (m - 1 in all) */
#define FR_DRAW_AHEAD 16

/* places[0 .. m - 2] (m >= 2) drawn up to index `need` at least, from *drawn on: blocks
 * of steps on the vector paths (which start on an even step of the row), one step at a
 * time otherwise. places holds m + 16 values. */
static inline void fr_draw_places(int level, int32_t* places, ptrdiff_t* drawn,
                                  ptrdiff_t need, ptrdiff_t m, uint64_t row, ptrdiff_t step) {
    ptrdiff_t t = *drawn;
    for (; t < need && (level < FR_SIMD_AVX2 || ((step + t) & 1)); t++)
        places[t] = fr_group_place(row, step, m, t);
#ifdef FR_X86
    if (t < need && level >= FR_SIMD_AVX512)
        t = fr_draw_places_avx512(places, t, need, m, row, step);
    else if (t < need && level >= FR_SIMD_AVX2)
        t = fr_draw_places_avx2(places, t, need, m, row, step);
#endif
    *drawn = t;
}

/* the first u of from .. to - 1 with places[u] == p; to when none */
static inline ptrdiff_t fr_find_place(int level, const int32_t* places, ptrdiff_t from,
                                      ptrdiff_t to, int32_t p) {
    ptrdiff_t u;
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512)
        return fr_find_place_avx512(places, from, to, p);
    if (level >= FR_SIMD_AVX2)
        return fr_find_place_avx2(places, from, to, p);
#endif
    (void)level;
    for (u = from; u < to && places[u] != p; u++)
        ;
    return u;
}

/* pos[0:k] sorted ascending, by insertion (a few followed labels' places) */
static inline void fr_sort_places(ptrdiff_t* pos, ptrdiff_t k) {
    ptrdiff_t t, u, p;
    for (t = 1; t < k; t++) {
        p = pos[t];
        for (u = t; u > 0 && pos[u - 1] > p; u--)
            pos[u] = pos[u - 1];
        pos[u] = p;
    }
}

/* pos[0:k] <- the places where the shuffle of a tie group of m labels, whose first step is
 * the row's step `step`, moves the labels at places pos[0:k]; `places` is scratch for
 * m + 16 values. */
FR_SINGLE_COPY void fr_shuffled_positions(int level, ptrdiff_t* pos, ptrdiff_t k, ptrdiff_t m,
                                          uint64_t row, ptrdiff_t step, int32_t* places) {
    const ptrdiff_t steps = m - 1;
    ptrdiff_t drawn = 0, i;
#ifdef FR_X86
    if (level >= FR_SIMD_AVX2 && steps <= 64) { /* all its steps drawn, then searched */
        fr_draw_places(level, places, &drawn, steps, m, row, step);
        if (level >= FR_SIMD_AVX512)
            fr_follow_drawn_avx512(pos, k, steps, places);
        else
            fr_follow_drawn_avx2(pos, k, steps, places);
        return;
    }
#endif
    for (i = 0; i < k; i++) {
        ptrdiff_t p = pos[i], t = 0;
        for (;;) {
            const ptrdiff_t turn = steps - p; /* the step whose last place is p */
            const ptrdiff_t end = turn < steps ? turn : steps;
            ptrdiff_t found;
            if (drawn < end + 1 && drawn < steps) /* and FR_DRAW_AHEAD more: fewer calls */
                fr_draw_places(level, places, &drawn,
                               end + FR_DRAW_AHEAD < steps ? end + FR_DRAW_AHEAD : steps, m,
                               row, step);
            found = fr_find_place(level, places, t, end, (int32_t)p);
            if (found < end) { /* drawn: to that step's last place, settled */
                p = steps - found;
                break;
            }
            if (fr_follow_turn(places, steps, turn, &p, &t))
                break;
        }
        pos[i] = p;
    }
}

#endif
