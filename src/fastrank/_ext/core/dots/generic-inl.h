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
/* fr_max_scaled (cosine.h) in portable C */
#define FR_MAX_SCALED(NAME, T)                                                              \
    static T NAME(const T* dot, const T* w, int64_t n) {                                    \
        T m = dot[0] * w[0], x;                                                             \
        int64_t j;                                                                          \
        for (j = 1; j < n; j++) {                                                           \
            x = dot[j] * w[j];                                                              \
            m = x > m ? x : m;                                                              \
        }                                                                                   \
        return m;                                                                           \
    }
FR_MAX_SCALED(fr_max_scaled_f64_portable, double)
FR_MAX_SCALED(fr_max_scaled_f32_portable, float)
FR_DOTS(fr_dots_f64_portable, double, fma)
FR_DOTS(fr_dots_f32_portable, float, fmaf)
#ifdef FR_X86
FR_DOTS(fr_dots_f64_emulated, double, fr_fma_emulated)
FR_DOTS(fr_dots_f32_emulated, float, fr_fmaf_emulated)
#endif

#endif
