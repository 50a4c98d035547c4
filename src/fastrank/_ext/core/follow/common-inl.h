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
   the turn moves it to and *t <- the step after the turn. */
static inline int fr_follow_turn(const int32_t* places, ptrdiff_t steps, ptrdiff_t turn,
                                 ptrdiff_t* p, ptrdiff_t* t) {
    if (turn >= steps || places[turn] == *p)
        return 1;
    *p = places[turn];
    *t = turn + 1;
    return 0;
}

#endif
