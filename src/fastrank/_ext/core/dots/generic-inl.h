/* Dot products in portable C: with the C library's fma, or with its exact emulation
   (fma_emulated.h) where the library's fma is software. */
#ifndef FR_DOTS_GENERIC_INL_H
#define FR_DOTS_GENERIC_INL_H

#include <math.h>

#include "../fma_emulated.h"
#include "../simd.h"
#include "common.h"

#define FR_DOTS(NAME, T, FMA)                                                               \
    FR_PORTABLE_HOT static void NAME(const T* q, const T* b, T* s, int64_t mq, int64_t mb, \
                                      int64_t d) {                                          \
        int64_t tile = FR_DOTS_TILE(T, d), j0, j1, r, j, f, l;                              \
        if (tile < 24) tile = 24;                                                           \
        for (j0 = 0; j0 < mb; j0 += tile) {                                                 \
            j1 = j0 + tile < mb ? j0 + tile : mb;                                           \
            for (r = 0; r < mq; r++) {                                                      \
                const T* a = q + r * d;                                                     \
                for (j = j0; j < j1; j++) {                                                 \
                    const T* c = b + j * d;                                                 \
                    T p[8] = {0};                                                           \
                    for (f = 0; f + 8 <= d; f += 8)                                         \
                        for (l = 0; l < 8; l++) p[l] = FMA(a[f + l], c[f + l], p[l]);       \
                    for (l = 0; f + l < d; l++) p[l] = FMA(a[f + l], c[f + l], p[l]);       \
                    s[r * mb + j] = FR_SUM8(p);                                             \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
/* fr_may_enter (cosine.h) in portable C */
#define FR_MAY_ENTER(NAME, T)                                                               \
    static uint64_t NAME(const T* dot, const T* w, int64_t n, T lo) {                       \
        uint64_t m = 0;                                                                     \
        int64_t j;                                                                          \
        for (j = 0; j < n; j++) m |= (uint64_t) (dot[j] * w[j] >= lo) << j;                \
        return m;                                                                           \
    }
FR_MAY_ENTER(fr_may_enter_f64_portable, double)
FR_MAY_ENTER(fr_may_enter_f32_portable, float)
/* fr_top2_scaled (cosine.h) from the largest product of each of `lanes` lanes (m1), the
   row that gives it first (i1) and the lane's second largest (m2), then the rows j .. n - 1
   one by one; the portable code: no lanes, every row. The largest of equal products keeps
   the lower row only within a lane, which matters not: two rows give it, and the second
   largest equals it. */
#define FR_TOP2_FINISH(NAME, T)                                                             \
    static T NAME(const T* m1, const T* m2, const int64_t* i1, int lanes, const T* dot,    \
                  const T* w, int64_t j, int64_t n, int64_t* at, T* next) {                 \
        T m = -INFINITY, x = -INFINITY, p;                                                  \
        int64_t a = 0;                                                                      \
        int l;                                                                              \
        for (l = 0; l < lanes; l++) {                                                       \
            if (m1[l] > m) x = m, m = m1[l], a = i1[l];                                     \
            else x = m1[l] > x ? m1[l] : x;                                                 \
            x = m2[l] > x ? m2[l] : x;                                                      \
        }                                                                                   \
        for (; j < n; j++) {                                                                \
            p = dot[j] * w[j];                                                              \
            if (p > m) x = m, m = p, a = j;                                                 \
            else x = p > x ? p : x;                                                         \
        }                                                                                   \
        *at = a;                                                                            \
        *next = x;                                                                          \
        return m;                                                                           \
    }
FR_TOP2_FINISH(fr_top2_finish_f64, double)
FR_TOP2_FINISH(fr_top2_finish_f32, float)
static double fr_top2_scaled_f64_portable(const double* dot, const double* w, int64_t n,
                                          int64_t* at, double* next) {
    return fr_top2_finish_f64(NULL, NULL, NULL, 0, dot, w, 0, n, at, next);
}
static float fr_top2_scaled_f32_portable(const float* dot, const float* w, int64_t n,
                                         int64_t* at, float* next) {
    return fr_top2_finish_f32(NULL, NULL, NULL, 0, dot, w, 0, n, at, next);
}
FR_DOTS(fr_dots_f64_portable, double, fma)
FR_DOTS(fr_dots_f32_portable, float, fmaf)
#ifdef FR_X86
FR_DOTS(fr_dots_f64_emulated, double, fr_fma_emulated)
FR_DOTS(fr_dots_f32_emulated, float, fr_fmaf_emulated)
#endif

#endif
