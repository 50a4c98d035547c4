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
/* 2^e, exactly: from its bits where it is a normal number, else ldexp */
static inline double fr_pow2(int e) {
    uint64_t bits;
    double r;
    if (e < -1022 || e > 1023) return ldexp(1.0, e);
    bits = (uint64_t) (e + 1023) << 52;
    memcpy(&r, &bits, 8);
    return r;
}
/* The exponent -e of the power of two 2^-e that brings top >= 0 into [1/2, 1) (frexp's
   exponent, from the bits of a normal number); 0 for 0. */
static inline int fr_pow2_shift(double top) {
    uint64_t bits;
    int e;
    if (top == 0) return 0;
    memcpy(&bits, &top, 8);
    if (bits >> 52 == 0) { /* subnormal: frexp normalizes it */
        frexp(top, &e);
        return -e;
    }
    return 1022 - (int) (bits >> 52);
}
/* The largest magnitude of x[0..m) (0 when m = 0), taken on the bit patterns with the
   sign cleared, which order as the absolute values of finite numbers do. */
#define FR_LARGEST_MAGNITUDE(NAME, T, U, SIGNLESS)                                          \
    static T NAME(const T* x, int64_t m) {                                                  \
        U b, top = 0;                                                                       \
        T t;                                                                                \
        int64_t j;                                                                          \
        for (j = 0; j < m; j++) {                                                           \
            memcpy(&b, x + j, sizeof b);                                                    \
            b &= (SIGNLESS);                                                                \
            top = b > top ? b : top;                                                        \
        }                                                                                   \
        memcpy(&t, &top, sizeof t);                                                         \
        return t;                                                                           \
    }
FR_LARGEST_MAGNITUDE(fr_largest_magnitude_f64, double, uint64_t, 0x7fffffffffffffffULL)
FR_LARGEST_MAGNITUDE(fr_largest_magnitude_f32, float, uint32_t, 0x7fffffffu)
/* fr_scale_rows (cosine.h) of one row, in portable C. float32 multiplies in float32 where
   the power of two is a float32 (one rounding of the exact product either way: the same
   bits); a float64 row whose largest magnitude is subnormal needs a shift past 2^1023,
   the largest power of two a double holds: it is applied in two exact steps. */
static void fr_scale_row_f64_portable(const double* x, double* out, int64_t m) {
    int shift = fr_pow2_shift(fr_largest_magnitude_f64(x, m));
    double s, low;
    int64_t j;
    if (shift <= 1000) {
        s = fr_pow2(shift);
        for (j = 0; j < m; j++) out[j] = x[j] * s;
    } else {
        low = fr_pow2(shift - 1000), s = fr_pow2(1000);
        for (j = 0; j < m; j++) out[j] = x[j] * low * s;
    }
}
static void fr_scale_row_f32_portable(const float* x, float* out, int64_t m) {
    int shift = fr_pow2_shift(fr_largest_magnitude_f32(x, m));
    float s32;
    double s, low;
    int64_t j;
    if (-126 <= shift && shift <= 127) {
        s32 = (float) fr_pow2(shift);
        for (j = 0; j < m; j++) out[j] = x[j] * s32;
    } else if (shift <= 1000) {
        s = fr_pow2(shift);
        for (j = 0; j < m; j++) out[j] = (float) (x[j] * s);
    } else {
        low = fr_pow2(shift - 1000), s = fr_pow2(1000);
        for (j = 0; j < m; j++) out[j] = (float) (x[j] * low * s);
    }
}
FR_DOTS(fr_dots_f64_portable, double, fma)
FR_DOTS(fr_dots_f32_portable, float, fmaf)
#ifdef FR_X86
FR_DOTS(fr_dots_f64_emulated, double, fr_fma_emulated)
FR_DOTS(fr_dots_f32_emulated, float, fr_fmaf_emulated)
#endif

#endif
