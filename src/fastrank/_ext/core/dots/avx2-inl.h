/* Dot products with AVX2 and FMA3: micro-kernels of QR query rows x BR base rows. */
#ifndef FR_DOTS_AVX2_INL_H
#define FR_DOTS_AVX2_INL_H

#include <math.h>

#include "../simd.h"
#include "common.h"

#ifdef FR_X86
/* The same sums with 256-bit vectors: partial sums 0-7 are the lanes of one float
   vector, or of two double vectors (lanes 0-3, 4-7). A micro-kernel computes QR x BR
   dot products at once (QR query rows, BR base rows: 8 independent accumulators for
   the main block, enough to keep both FMA units busy); the features past the last
   multiple of 8 go to lanes 0.. with scalar fma, as in the portable code. */
#define FR_MICRO(NAME, T, V, N, LOAD, FMADD, STORE, ZERO, FMA, QR, BR)                  \
    __attribute__((target("avx2,fma"))) static inline void NAME(                        \
            const T* a, const T* b, T* s, int64_t ss, int64_t d) {                      \
        V c[QR][BR][N], x[QR], y;                                                       \
        T p[8];                                                                         \
        int64_t f, l, u, r, v;                                                          \
        for (u = 0; u < (QR); u++)                                                      \
            for (r = 0; r < (BR); r++)                                                  \
                for (v = 0; v < (N); v++) c[u][r][v] = ZERO();                          \
        for (f = 0; f + 8 <= d; f += 8)                                                 \
            for (v = 0; v < (N); v++) {                                                 \
                for (u = 0; u < (QR); u++) x[u] = LOAD(a + u * d + f + v * (8 / (N)));  \
                for (r = 0; r < (BR); r++) {                                            \
                    y = LOAD(b + r * d + f + v * (8 / (N)));                            \
                    for (u = 0; u < (QR); u++) c[u][r][v] = FMADD(x[u], y, c[u][r][v]); \
                }                                                                       \
            }                                                                           \
        for (u = 0; u < (QR); u++)                                                      \
            for (r = 0; r < (BR); r++) {                                                \
                for (v = 0; v < (N); v++) STORE(p + v * (8 / (N)), c[u][r][v]);         \
                for (l = 0; f + l < d; l++)                                             \
                    p[l] = FMA(a[u * d + f + l], b[r * d + f + l], p[l]);               \
                s[u * ss + r] = FR_SUM8(p);                                             \
            }                                                                           \
    }
#define FR_DOTS_BLOCKED(NAME, ATTR, T, QR, BR, MAIN, ROWS, COLS, ONE)                   \
    ATTR                                                                                \
    static void NAME(const T* q, const T* b, T* s, int64_t mq, int64_t mb, int64_t d) { \
        int64_t tile = FR_DOTS_TILE(T, d), j0, j1, r, j;                                \
        if (tile < 24) tile = 24;                                                       \
        for (j0 = 0; j0 < mb; j0 += tile) {                                             \
            j1 = j0 + tile < mb ? j0 + tile : mb;                                       \
            for (r = 0; r + (QR) <= mq; r += (QR)) {                                    \
                for (j = j0; j + (BR) <= j1; j += (BR))                                 \
                    MAIN(q + r * d, b + j * d, s + r * mb + j, mb, d);                  \
                for (; j < j1; j++) ROWS(q + r * d, b + j * d, s + r * mb + j, mb, d);  \
            }                                                                           \
            for (; r < mq; r++) {                                                       \
                for (j = j0; j + (BR) <= j1; j += (BR))                                 \
                    COLS(q + r * d, b + j * d, s + r * mb + j, mb, d);                  \
                for (; j < j1; j++) ONE(q + r * d, b + j * d, s + r * mb + j, mb, d);   \
            }                                                                           \
        }                                                                               \
    }
#define FR_F32(NAME, QR, BR) FR_MICRO(NAME, float, __m256, 1, _mm256_loadu_ps,       \
    _mm256_fmadd_ps, _mm256_storeu_ps, _mm256_setzero_ps, fmaf, QR, BR)
#define FR_F64(NAME, QR, BR) FR_MICRO(NAME, double, __m256d, 2, _mm256_loadu_pd,     \
    _mm256_fmadd_pd, _mm256_storeu_pd, _mm256_setzero_pd, fma, QR, BR)
FR_F32(fr_f32_2x4, 2, 4)
FR_F32(fr_f32_2x1, 2, 1)
FR_F32(fr_f32_1x4, 1, 4)
FR_F32(fr_f32_1x1, 1, 1)
FR_F64(fr_f64_2x2, 2, 2)
FR_F64(fr_f64_2x1, 2, 1)
FR_F64(fr_f64_1x2, 1, 2)
FR_F64(fr_f64_1x1, 1, 1)
/* the edges of the AVX-512 blocks (dots/avx512-inl.h) */
FR_F32(fr_f32_4x1, 4, 1)
FR_F64(fr_f64_4x1, 4, 1)
FR_F64(fr_f64_1x3, 1, 3)
FR_DOTS_BLOCKED(fr_dots_f32_avx2, FR_TARGET_AVX2_FMA, float, 2, 4, fr_f32_2x4, fr_f32_2x1,
                fr_f32_1x4, fr_f32_1x1)
FR_DOTS_BLOCKED(fr_dots_f64_avx2, FR_TARGET_AVX2_FMA, double, 2, 2, fr_f64_2x2, fr_f64_2x1,
                fr_f64_1x2, fr_f64_1x1)
#endif

#endif
