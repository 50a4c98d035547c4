/* Where a tie group's seeded shuffle (shuffle.h; _tiesort's shuffle_group) moves a few
 * labels, followed without the group's other labels: ordinal ranking loss and average
 * precision need only the places of a group's relevant labels (driver: _ext/tie_counts.pyx).
 * A step moves a followed label only when the label sits at the step's last position or
 * the step draws its position; the steps between those are skipped by a search for the
 * next draw of a followed position, many steps a pass with AVX2 (follow/avx2-inl.h) and
 * AVX-512 (follow/avx512-inl.h), each step's number computed from its index alone. The
 * same positions on every path: a step found is taken by the same scalar code. */
#ifndef FR_FOLLOW_H
#define FR_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "follow/avx512-inl.h"
#include "shuffle.h"
#include "simd.h"

/* Step `step` of a shuffle, on the first `size` positions of a tie group, for the
 * unsettled positions pos[0:live]: each moved where the swap of position size - 1 with the
 * drawn one takes its label. Those it leaves at size - 1, which no later step (on fewer
 * positions) reaches, are settled: moved behind the others. Returns how many are left. */
static inline ptrdiff_t fr_follow_step(ptrdiff_t* pos, ptrdiff_t live, ptrdiff_t size,
                                       uint64_t row, ptrdiff_t step) {
    const ptrdiff_t last = size - 1;
    const ptrdiff_t j = fr_step_index(fr_step_bits(row, step), size, row, step);
    ptrdiff_t t, p;
    for (t = 0; t < live; t++) {
        if (pos[t] == last)
            pos[t] = j;
        else if (pos[t] == j)
            pos[t] = last;
    }
    for (t = 0; t < live;) {
        if (pos[t] != last) {
            t++;
            continue;
        }
        p = pos[t];
        pos[t] = pos[--live];
        pos[live] = p;
    }
    return live;
}

/* The first e of 0 .. n - 1 whose step (step + e, on the group's first size - e positions)
 * may move one of the positions u[0:k], all below size - n: its drawn index is one of them,
 * or its product's low word lies below the step's size (where fr_step_index may draw
 * again); n when none does. Below AVX2: 0 (every step is taken). */
static inline ptrdiff_t fr_first_draw(int level, const ptrdiff_t* u, ptrdiff_t k, ptrdiff_t n,
                                      ptrdiff_t size, uint64_t row, ptrdiff_t step) {
    (void)u, (void)k, (void)size, (void)row, (void)step;
    if (n == 0)
        return 0;
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512)
        return fr_first_draw_avx512(u, k, n, size, row, step);
    if (level >= FR_SIMD_AVX2)
        return fr_first_draw_avx2(u, k, n, size, row, step);
#endif
    (void)level;
    return 0;
}

/* pos[0:k] <- the positions, in some order, where the shuffle of a tie group of m labels
 * whose first step is `step` moves the labels at positions pos[0:k] (distinct): the steps
 * that can move them taken one by one, those between skipped (fr_first_draw), until each
 * is settled. */
static inline void fr_shuffled_positions(int level, ptrdiff_t* pos, ptrdiff_t k, ptrdiff_t m,
                                         uint64_t row, ptrdiff_t step) {
    ptrdiff_t live = k, top, t, e;
    while (live > 0 && m > 1) {
        for (top = pos[0], t = 1; t < live; t++)
            top = pos[t] > top ? pos[t] : top;
        e = fr_first_draw(level, pos, live, m - 1 - top, m, row, step);
        m -= e;
        step += e;
        live = fr_follow_step(pos, live, m, row, step);
        m--;
        step++;
    }
}

#endif
