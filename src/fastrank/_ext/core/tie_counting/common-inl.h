/* What the vector paths of the level counts share (avx2-inl.h, avx512-inl.h). */
#ifndef FR_TIE_COUNTING_COMMON_INL_H
#define FR_TIE_COUNTING_COMMON_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../simd.h"

/* The level counts of FR_LEVELS_GENERIC (the same counts) for contiguous rows, on one
   vector path: W values of type T to a vector VT, integer counter lanes IT, lane masks MT.
   Its operations: LOAD(p); LOAD_TAIL(k, p), the lanes of k = TAIL(r) (the first r) and
   zeros; ALL, every lane; SET1(v); COUNT(acc, k, a, w, PRED), acc plus one in the lanes
   of k where a PRED w; ZERO; SUM(acc), across lanes. Blocks of at most 2^30 values: the
   lanes' sums cannot wrap. */
#define FR_LEVELS_VECTOR_STEP(COUNT, NL, A, K)                                            \
    do {                                                                                  \
        for (l = 0; l < NL; l++) {                                                        \
            g[l] = COUNT(g[l], K, A, w[l], _CMP_GT_OQ);                                   \
            e[l] = COUNT(e[l], K, A, w[l], _CMP_EQ_OQ);                                   \
        }                                                                                 \
        if (nan)                                                                          \
            lt = COUNT(lt, K, A, w[0], _CMP_LT_OQ);                                       \
    } while (0)
#define FR_LEVELS_VECTOR(ATTR, T, VT, IT, MT, W, LOAD, LOAD_TAIL, TAIL, ALL, SET1, COUNT, \
                         ZERO, SUM, NL, NAME)                                             \
    static ATTR void NAME(const T* x, ptrdiff_t m, const T* v, int64_t* gt, int64_t* eq,  \
                          int64_t* nan) {                                                 \
        int64_t gs[NL] = {0}, es[NL] = {0}, ls = 0;                                       \
        VT w[NL];                                                                         \
        ptrdiff_t j = 0;                                                                  \
        int l;                                                                            \
        for (l = 0; l < NL; l++)                                                          \
            w[l] = SET1(v[l]);                                                            \
        while (j < m) {                                                                   \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            IT g[NL], e[NL], lt = ZERO;                                                   \
            for (l = 0; l < NL; l++)                                                      \
                g[l] = e[l] = ZERO;                                                       \
            for (; j + W <= stop; j += W) {                                               \
                VT a = LOAD(x + j);                                                       \
                FR_LEVELS_VECTOR_STEP(COUNT, NL, a, ALL);                                 \
            }                                                                             \
            if (j < stop) {                                                               \
                MT tail = TAIL(stop - j);                                                 \
                VT a = LOAD_TAIL(tail, x + j);                                            \
                FR_LEVELS_VECTOR_STEP(COUNT, NL, a, tail);                                \
                j = stop;                                                                 \
            }                                                                             \
            for (l = 0; l < NL; l++) {                                                    \
                gs[l] += SUM(g[l]);                                                       \
                es[l] += SUM(e[l]);                                                       \
            }                                                                             \
            ls += SUM(lt);                                                                \
        }                                                                                 \
        for (l = 0; l < NL; l++) {                                                        \
            gt[l] = gs[l];                                                                \
            eq[l] = es[l];                                                                \
        }                                                                                 \
        if (nan)                                                                          \
            *nan = m - gs[0] - es[0] - ls;                                                \
    }

#endif
