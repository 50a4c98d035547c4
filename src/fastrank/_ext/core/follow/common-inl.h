/* What the paths of the followed shuffle share (follow.h). */
#ifndef FR_FOLLOW_COMMON_INL_H
#define FR_FOLLOW_COMMON_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../shuffle.h"

/* A pass of W steps' places from t on, their even steps' lanes the low W / 2 bits of
   `redo` and their odd steps' the high: the lanes whose product's low word lies below
   their size (where fr_step_index may draw again) drawn again, those of the group's steps
   (up to m - 2) alone. */
static inline void fr_redraw_places(int32_t* places, ptrdiff_t t, unsigned redo, int W,
                                    ptrdiff_t m, uint64_t row, ptrdiff_t step) {
    for (; redo; redo &= redo - 1) {
        const int l = __builtin_ctz(redo);
        const ptrdiff_t u = t + (l < W / 2 ? 2 * l : 2 * (l - W / 2) + 1);
        if (u < m - 1)
            places[u] = fr_group_place(row, step, m, u);
    }
}

/* A label at place p not drawn before its turn (the step whose last place p is): 1 when
   it stays there (no step ends at p, or that step draws p), else 0 with *p <- the place
   the turn moves it to and *t <- the step after the turn. A turn only moves a label to a
   lower place, so a follow takes at most m steps; a place outside the group (p > steps,
   turn < 0: a wrong count upstream) stays where it is rather than read outside places
   and loop. */
static inline int fr_follow_turn(const int32_t* places, ptrdiff_t steps, ptrdiff_t turn,
                                 ptrdiff_t* p, ptrdiff_t* t) {
    if ((size_t) turn >= (size_t) steps || places[turn] == *p)
        return 1;
    *p = places[turn];
    *t = turn + 1;
    return 0;
}

/* pos[0:k] <- where the group's shuffle moves the labels at places pos[0:k], its steps'
   places (steps of them, at most 64) drawn and held in vectors: DRAWN(p, hits) sets
   hits to the 64-bit mask of the steps that draw place p (bit u for step u; the small-group
   follows, follow/avx512-inl.h and avx2-inl.h). */
#define FR_FOLLOW_DRAWN(pos, k, steps, places, DRAWN)                                     \
    do {                                                                                  \
        ptrdiff_t i_, t_;                                                                 \
        for (i_ = 0; i_ < (k); i_++) {                                                    \
            ptrdiff_t p_ = (pos)[i_];                                                     \
            t_ = 0;                                                                       \
            for (;;) {                                                                    \
                const ptrdiff_t turn = (steps) - p_; /* the step whose last place is p */ \
                const ptrdiff_t end = turn < (steps) ? turn : (steps);                    \
                uint64_t hits;                                                            \
                if (turn < 0) /* outside the group: see fr_follow_turn */                 \
                    break;                                                                \
                DRAWN(p_, hits);                                                          \
                /* the steps t .. end - 1 (both at most 64) */                         \
                hits &= (end == 64 ? ~(uint64_t) 0 : ((uint64_t) 1 << end) - 1)           \
                        & (t_ == 64 ? 0 : ~(uint64_t) 0 << t_);                           \
                if (hits) { /* drawn: to that step's last place, settled */               \
                    p_ = (steps) - __builtin_ctzll(hits);                                 \
                    break;                                                                \
                }                                                                         \
                if (fr_follow_turn(places, (steps), turn, &p_, &t_))                      \
                    break;                                                                \
            }                                                                             \
            (pos)[i_] = p_;                                                               \
        }                                                                                 \
    } while (0)

#endif
