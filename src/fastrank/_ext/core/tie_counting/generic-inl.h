/* Level counts in plain C, one level a pass: the portable path, and every path's for
   strided rows (a column-major matrix's), whose values no vector load reads at once. */
#ifndef FR_TIE_COUNTING_GENERIC_INL_H
#define FR_TIE_COUNTING_GENERIC_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../simd.h"

/* gt[l] <- the x[j * stride] > v[l], eq[l] <- those == v[l], for l < NL and j < m (-0.0 ==
   0.0), in one pass; with nan != NULL also *nan <- the NaN among them (neither above,
   tied with nor below v[0]): the row's NaN check, fused with its first counting pass.
   Blocks of at most 2^30 values: the 32-bit counters cannot wrap. */
#define FR_LEVELS_STEP(T, X, NL, WITH_NAN)                                                   \
    do {                                                                                  \
        T x_ = (X);                                                                       \
        for (l = 0; l < NL; l++) {                                                        \
            g32[l] += x_ > w[l];                                                          \
            e32[l] += x_ == w[l];                                                         \
        }                                                                                 \
        if (WITH_NAN)                                                                     \
            l32 += x_ < w[0];                                                             \
    } while (0)
#define FR_LEVELS_GENERIC(T, NL, NAME, ATTR)                                              \
    static ATTR void NAME(const T* x, ptrdiff_t stride, ptrdiff_t m, const T* v,          \
                          int64_t* gt, int64_t* eq, int64_t* nan) {                       \
        int64_t g[NL] = {0}, e[NL] = {0}, lt = 0;                                         \
        T w[NL];                                                                          \
        ptrdiff_t j = 0;                                                                  \
        int l;                                                                            \
        for (l = 0; l < NL; l++)                                                          \
            w[l] = v[l];                                                                  \
        while (j < m) {                                                                   \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            int32_t g32[NL] = {0}, e32[NL] = {0}, l32 = 0;                                \
            if (stride == 1 && nan)                                                       \
                for (; j < stop; j++)                                                     \
                    FR_LEVELS_STEP(T, x[j], NL, 1);                                          \
            else if (stride == 1)                                                         \
                for (; j < stop; j++)                                                     \
                    FR_LEVELS_STEP(T, x[j], NL, 0);                                          \
            else                                                                          \
                for (; j < stop; j++)                                                     \
                    FR_LEVELS_STEP(T, x[j * stride], NL, nan != NULL);                       \
            for (l = 0; l < NL; l++) {                                                    \
                g[l] += g32[l];                                                           \
                e[l] += e32[l];                                                           \
            }                                                                             \
            lt += l32;                                                                    \
        }                                                                                 \
        for (l = 0; l < NL; l++) {                                                        \
            gt[l] = g[l];                                                                 \
            eq[l] = e[l];                                                                 \
        }                                                                                 \
        if (nan)                                                                          \
            *nan = m - g[0] - e[0] - lt;                                                  \
    }

FR_LEVELS_GENERIC(float, 1, fr_levels1_f32_portable, FR_PORTABLE_HOT)
FR_LEVELS_GENERIC(double, 1, fr_levels1_f64_portable, FR_PORTABLE_HOT)

#endif
