/* Dot products with AVX-512 F, DQ (and FMA3): 512-bit micro-kernels, and float32 on
   packed base rows blocked like a GEMM. */
#ifndef FR_DOTS_AVX512_INL_H
#define FR_DOTS_AVX512_INL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "avx2-inl.h"

#ifdef FR_X86
/* AVX-512: a float64 partial-sum vector (8 lanes) fills one 512-bit register; two
   float32 ones (pairs (q, b_j) in lanes 0-7 and (q, b_j+1) in lanes 8-15, the query's 8
   features broadcast to both halves) share one. Same lanes, same fma sequence. */
#define FR_MICRO512_F32(NAME, QR, BP)                                                      \
    FR_TARGET_AVX512_FMA static inline void NAME(const float* a, const float* b, float* s, \
                                                 int64_t ss, int64_t d) {                  \
        __m512 c[QR][BP], x[QR], y;                                                        \
        float p[16];                                                                       \
        int64_t f, l, u, r, h;                                                             \
        for (u = 0; u < (QR); u++)                                                         \
            for (r = 0; r < (BP); r++) c[u][r] = _mm512_setzero_ps();                      \
        for (f = 0; f + 8 <= d; f += 8) {                                                  \
            for (u = 0; u < (QR); u++)                                                     \
                x[u] = _mm512_broadcast_f32x8(_mm256_loadu_ps(a + u * d + f));             \
            for (r = 0; r < (BP); r++) {                                                   \
                y = _mm512_insertf32x8(_mm512_castps256_ps512(                             \
                        _mm256_loadu_ps(b + 2 * r * d + f)),                               \
                    _mm256_loadu_ps(b + (2 * r + 1) * d + f), 1);                          \
                for (u = 0; u < (QR); u++) c[u][r] = _mm512_fmadd_ps(x[u], y, c[u][r]);    \
            }                                                                              \
        }                                                                                  \
        for (u = 0; u < (QR); u++)                                                         \
            for (r = 0; r < (BP); r++) {                                                   \
                _mm512_storeu_ps(p, c[u][r]);                                              \
                for (h = 0; h < 2; h++) {                                                  \
                    float* q8 = p + 8 * h;                                                 \
                    const float* bb = b + (2 * r + h) * d;                                 \
                    for (l = 0; f + l < d; l++)                                            \
                        q8[l] = fmaf(a[u * d + f + l], bb[f + l], q8[l]);                  \
                    s[u * ss + 2 * r + h] = FR_SUM8(q8);                                   \
                }                                                                          \
            }                                                                              \
    }
#define FR_MICRO512_F64(NAME, QR, BR)                                                   \
    FR_TARGET_AVX512_FMA static inline void NAME(const double* a, const double* b,      \
                                                 double* s, int64_t ss, int64_t d) {    \
        __m512d c[QR][BR], x[QR], y;                                                    \
        double p[8];                                                                    \
        int64_t f, l, u, r;                                                             \
        for (u = 0; u < (QR); u++)                                                      \
            for (r = 0; r < (BR); r++) c[u][r] = _mm512_setzero_pd();                   \
        for (f = 0; f + 8 <= d; f += 8) {                                               \
            for (u = 0; u < (QR); u++) x[u] = _mm512_loadu_pd(a + u * d + f);           \
            for (r = 0; r < (BR); r++) {                                                \
                y = _mm512_loadu_pd(b + r * d + f);                                     \
                for (u = 0; u < (QR); u++) c[u][r] = _mm512_fmadd_pd(x[u], y, c[u][r]); \
            }                                                                           \
        }                                                                               \
        for (u = 0; u < (QR); u++)                                                      \
            for (r = 0; r < (BR); r++) {                                                \
                _mm512_storeu_pd(p, c[u][r]);                                           \
                for (l = 0; f + l < d; l++)                                             \
                    p[l] = fma(a[u * d + f + l], b[r * d + f + l], p[l]);               \
                s[u * ss + r] = FR_SUM8(p);                                             \
            }                                                                           \
    }
FR_MICRO512_F32(fr_f32_4x4_512, 4, 2)
FR_MICRO512_F64(fr_f64_4x3_512, 4, 3)
FR_DOTS_BLOCKED(fr_dots_f32_avx512_rows, FR_TARGET_AVX512_FMA, float, 4, 4, fr_f32_4x4_512,
                fr_f32_4x1, fr_f32_1x4, fr_f32_1x1)
/* float32 AVX-512 on packed base rows, blocked like a GEMM. A tile of base rows is
   copied once as pairs (b_j, b_j+1) of 8-feature chunks, so that one load gives the 16
   lanes of a pair; the micro-kernel computes 4 query rows x 8 base rows (16
   accumulator registers, 8 loads per 16 fused multiply-adds) over FR_KC chunks of
   features at a time, keeping the tile's slice of those chunks in L1 (8 rows of 1 024
   features: 32 KiB); up to 1 024 features take one pass (passes of 256 features, their
   accumulators stored and reloaded in between, took 12-20 % longer at 512 and 1 024
   features). Between passes the accumulators are stored and reloaded unchanged; the
   last pass adds the features past the last multiple of 8 with a masked fma (lane l:
   fma(a_f, b_f, p_l), the others untouched) and sums the lanes of every dot product in
   registers in the order of FR_SUM8 (additions of the same pairs; a + b == b + a in
   IEEE arithmetic).
   Every dot product is the same fma chain and reduction as in fr_f32_4x4_512: the
   same bits. Rows left over at the edges (fewer than 4 queries or 8 base rows) go to
   the unpacked kernels. */
#define FR_KC 128    /* 8-feature chunks per pass */
#define FR_MC 64     /* query rows per pass */
#define FR_L1 24576  /* bytes of the tile's slice of one pass (at least 8 rows) */
#define FR_QBIG (4.0 * 1024 * 1024)  /* bytes of a large query block */
FR_TARGET_AVX512_FMA static inline void fr_f32_4x8_packed(
        const float* a, int64_t d, const float* pb, int64_t ps, int64_t t0, int64_t n,
        float* acc, const float* b, float* s, int64_t ss) {
    /* a: 4 query rows (row stride d); pb: 4 packed pairs (pair stride ps) from chunk 0;
       chunks t0 .. t0 + n; acc: the 16 accumulators between passes; b: the 8 base rows
       (row stride d) and s: the 4 x 8 outputs (row stride ss), used on the last pass */
    __m512 c[4][4], x[4], y, lo, hi;
    int64_t t, u, r, d8 = d / 8 * 8;
    int first = t0 == 0, last = 8 * (t0 + n) == d8;
    for (u = 0; u < 4; u++)
        for (r = 0; r < 4; r++)
            c[u][r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + 16 * (4 * u + r));
    for (t = t0; t < t0 + n; t++) {
        for (u = 0; u < 4; u++)
            x[u] = _mm512_broadcast_f32x8(_mm256_loadu_ps(a + u * d + 8 * t));
        for (r = 0; r < 4; r++) {
            y = _mm512_loadu_ps(pb + r * ps + 16 * t);
            for (u = 0; u < 4; u++) c[u][r] = _mm512_fmadd_ps(x[u], y, c[u][r]);
        }
    }
    if (!last) {
        for (u = 0; u < 4; u++)
            for (r = 0; r < 4; r++) _mm512_storeu_ps(acc + 16 * (4 * u + r), c[u][r]);
        return;
    }
    if (d > d8) {
        __mmask16 m = (__mmask16) ((1u << (d - d8)) - 1), m2 = (__mmask16) (m | (m << 8));
        for (u = 0; u < 4; u++) {
            x[u] = _mm512_maskz_loadu_ps(m, a + u * d + d8);
            x[u] = _mm512_shuffle_f32x4(x[u], x[u], _MM_SHUFFLE(1, 0, 1, 0));
        }
        for (r = 0; r < 4; r++) {
            y = _mm512_maskz_loadu_ps(m, b + 2 * r * d + d8);
            y = _mm512_mask_loadu_ps(y, (__mmask16) (m << 8), b + (2 * r + 1) * d + d8 - 8);
            for (u = 0; u < 4; u++) c[u][r] = _mm512_mask3_fmadd_ps(x[u], y, c[u][r], m2);
        }
    }
    for (u = 0; u < 4; u++) {
        /* lanes 0-7 / 8-15 of c[u][r]: partial sums p0..p7 of base rows 2r / 2r + 1 */
        lo = _mm512_add_ps(_mm512_shuffle_ps(c[u][0], c[u][1], _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm512_shuffle_ps(c[u][0], c[u][1], _MM_SHUFFLE(3, 1, 3, 1)));
        hi = _mm512_add_ps(_mm512_shuffle_ps(c[u][2], c[u][3], _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm512_shuffle_ps(c[u][2], c[u][3], _MM_SHUFFLE(3, 1, 3, 1)));
        /* per 128-bit lane: p0+p1, p2+p3 of two rows, then of two others */
        y = _mm512_add_ps(_mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
        /* 128-bit lanes 0 / 1: (p0+p1)+(p2+p3) / (p4+p5)+(p6+p7) of base rows
           0, 2, 4, 6; lanes 2 / 3 the same for rows 1, 3, 5, 7 */
        y = _mm512_add_ps(y, _mm512_shuffle_f32x4(y, y, _MM_SHUFFLE(2, 3, 0, 1)));
        y = _mm512_permutexvar_ps(_mm512_set_epi32(15, 7, 14, 6, 13, 5, 12, 4,
                                                   11, 3, 10, 2, 9, 1, 8, 0), y);
        _mm256_storeu_ps(s + u * ss, _mm512_castps512_ps256(y));
    }
}
/* float32 panels (dots/common.h) of 16 rows: 3 query rows x 2 panels, the chains two at
   a time (12 independent fma chains, enough to cover the fma latency of two units: one
   chain at a time left a quarter of them idle on a Xeon), adding up as they end: 29 of
   the 32 registers at most. */
/* feature f of 2 panels (y0, y1) added to P##ur, query row u (a, row stride d), panel r */
#define FR_PANEL512_STEP(P, y0, y1, f)                                                   \
    x = _mm512_set1_ps(a[f]);                                                            \
    P##00 = _mm512_fmadd_ps(x, y0, P##00), P##01 = _mm512_fmadd_ps(x, y1, P##01);        \
    x = _mm512_set1_ps(a[d + (f)]);                                                      \
    P##10 = _mm512_fmadd_ps(x, y0, P##10), P##11 = _mm512_fmadd_ps(x, y1, P##11);        \
    x = _mm512_set1_ps(a[2 * d + (f)]);                                                  \
    P##20 = _mm512_fmadd_ps(x, y0, P##20), P##21 = _mm512_fmadd_ps(x, y1, P##21);
#define FR_PANEL512_PAIR(P, Q, L)                                                        \
    P##00 = P##01 = P##10 = P##11 = P##20 = P##21 = _mm512_setzero_ps();                 \
    Q##00 = Q##01 = Q##10 = Q##11 = Q##20 = Q##21 = _mm512_setzero_ps();                 \
    FR_PANEL_PAIR(_mm512_loadu_ps, 16, FR_PANEL512_STEP, P, Q, L)
#define FR_PANEL512_ADD(P, Q)                                                            \
    P##00 = _mm512_add_ps(P##00, Q##00), P##01 = _mm512_add_ps(P##01, Q##01);            \
    P##10 = _mm512_add_ps(P##10, Q##10), P##11 = _mm512_add_ps(P##11, Q##11);            \
    P##20 = _mm512_add_ps(P##20, Q##20), P##21 = _mm512_add_ps(P##21, Q##21);
FR_TARGET_AVX512_FMA static inline void fr_f32_panels_3x2(const float* a, int64_t d,
                                                          const float* pb, int64_t ps,
                                                          float* s, int64_t ss) {
    __m512 a00, a01, a10, a11, a20, a21, b00, b01, b10, b11, b20, b21;
    __m512 c00, c01, c10, c11, c20, c21, e00, e01, e10, e11, e20, e21, x, y0, y1, y2, y3;
    const float* y;
    int64_t f;
    FR_PANEL512_PAIR(a, b, 0) FR_PANEL512_ADD(a, b)                   /* p0 + p1 */
    FR_PANEL512_PAIR(b, c, 2) FR_PANEL512_ADD(b, c)                   /* p2 + p3 */
    FR_PANEL512_ADD(a, b)
    FR_PANEL512_PAIR(b, c, 4) FR_PANEL512_ADD(b, c)                   /* p4 + p5 */
    FR_PANEL512_PAIR(c, e, 6) FR_PANEL512_ADD(c, e)                   /* p6 + p7 */
    FR_PANEL512_ADD(b, c) FR_PANEL512_ADD(a, b)
    _mm512_storeu_ps(s, a00), _mm512_storeu_ps(s + 16, a01);
    _mm512_storeu_ps(s + ss, a10), _mm512_storeu_ps(s + ss + 16, a11);
    _mm512_storeu_ps(s + 2 * ss, a20), _mm512_storeu_ps(s + 2 * ss + 16, a21);
}
FR_DOTS_PANELS(fr_dots_f32_panels512, FR_TARGET_AVX512_FMA, 16, 3, fr_f32_panels_3x2)
FR_DOTS_PACKED(fr_dots_f32_packed512, FR_TARGET_AVX512_FMA, 4, 8, 2, fr_f32_4x8_packed,
               fr_f32_4x1)
FR_TARGET_AVX512_FMA static void fr_dots_f32_avx512(const float* q, const float* b, float* s,
                                                    int64_t mq, int64_t mb, int64_t d) {
    int64_t nch = d / 8, kc = nch < FR_KC ? nch : FR_KC;
    int64_t nt = kc > 0 ? FR_L1 / (32 * kc) / 8 * 8 : 0;
    /* the query block is read again for every tile: when it is large (many features),
       tiles of 4x the rows, their slice in L2, read it a quarter as often */
    if ((double) mq * d * sizeof(float) > FR_QBIG) nt *= 4;
    if (nt < 8) nt = 8;
    if (nch == 0 || mq < 4 || mb < 8)
        return fr_dots_f32_avx512_rows(q, b, s, mq, mb, d);
    if (d <= FR_PANEL_D && fr_dots_f32_panels512(q, b, s, mq, mb, d) == 0) return;
    if (fr_dots_f32_packed512(q, b, s, mq, mb, d, nt, kc, FR_MC) != 0)
        fr_dots_f32_avx512_rows(q, b, s, mq, mb, d);
}
/* fr_may_enter (cosine.h): a vector of rows at a time, the last ones under a mask */
#define FR_MAY_ENTER_AVX512(NAME, T, W, K, LOAD, MUL, SET1, CMP)                            \
    FR_TARGET_AVX512_FMA static uint64_t NAME(const T* dot, const T* w, int64_t n, T lo) {  \
        uint64_t m = 0;                                                                     \
        int64_t j;                                                                          \
        K live;                                                                             \
        for (j = 0; j < n; j += (W)) {                                                      \
            live = (K) (n - j >= (W) ? (1u << (W)) - 1 : (1u << (n - j)) - 1);              \
            m |= (uint64_t) CMP(live, MUL(LOAD(live, dot + j), LOAD(live, w + j)),          \
                                SET1(lo), _CMP_GE_OQ) << j;                                 \
        }                                                                                   \
        return m;                                                                           \
    }
FR_MAY_ENTER_AVX512(fr_may_enter_f64_avx512, double, 8, __mmask8, _mm512_maskz_loadu_pd,
                    _mm512_mul_pd, _mm512_set1_pd, _mm512_mask_cmp_pd_mask)
FR_MAY_ENTER_AVX512(fr_may_enter_f32_avx512, float, 16, __mmask16, _mm512_maskz_loadu_ps,
                    _mm512_mul_ps, _mm512_set1_ps, _mm512_mask_cmp_ps_mask)
/* fr_top2_scaled (cosine.h): each lane's largest product, its row and its second largest
   in one pass, a vector of rows at a time (the last ones under a mask, the rest of their
   lanes -inf; the row numbers in integer lanes of the same width), the lanes then by
   fr_top2_finish */
#define FR_TOP2_SCALED_AVX512(NAME, T, W, K, V, IT, LOAD, MUL, MIN, MAX, SET1, CMP, MOV,    \
                              IMOV, STORE, FIRST, IADD, ISET1, FINISH)                      \
    FR_TARGET_AVX512_FMA static T NAME(const T* dot, const T* w, int64_t n, int64_t* at,    \
                                       T* next) {                                           \
        V m1 = SET1(-INFINITY), m2 = m1, p;                                                 \
        __m512i i1 = _mm512_setzero_si512(), row = FIRST, step = ISET1(W);                  \
        T l1[W], l2[W];                                                                     \
        IT li[W];                                                                           \
        int64_t j, l, rows[W];                                                              \
        K live;                                                                             \
        for (j = 0; j < n; j += (W)) {                                                      \
            live = (K) (n - j >= (W) ? (1u << (W)) - 1 : (1u << (n - j)) - 1);              \
            p = MOV(SET1(-INFINITY), live, MUL(LOAD(live, dot + j), LOAD(live, w + j)));    \
            i1 = IMOV(i1, CMP(p, m1, _CMP_GT_OQ), row);                                     \
            m2 = MAX(m2, MIN(p, m1));                                                       \
            m1 = MAX(m1, p);                                                                \
            row = IADD(row, step);                                                          \
        }                                                                                   \
        STORE(l1, m1), STORE(l2, m2);                                                       \
        _mm512_storeu_si512(li, i1);                                                        \
        for (l = 0; l < (W); l++) rows[l] = li[l];                                          \
        return FINISH(l1, l2, rows, (W), dot, w, n, n, at, next);                           \
    }
FR_TOP2_SCALED_AVX512(fr_top2_scaled_f64_avx512, double, 8, __mmask8, __m512d, int64_t,
                      _mm512_maskz_loadu_pd, _mm512_mul_pd, _mm512_min_pd, _mm512_max_pd,
                      _mm512_set1_pd, _mm512_cmp_pd_mask, _mm512_mask_mov_pd,
                      _mm512_mask_mov_epi64, _mm512_storeu_pd,
                      _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_add_epi64,
                      _mm512_set1_epi64, fr_top2_finish_f64)
FR_TOP2_SCALED_AVX512(fr_top2_scaled_f32_avx512, float, 16, __mmask16, __m512, int32_t,
                      _mm512_maskz_loadu_ps, _mm512_mul_ps, _mm512_min_ps, _mm512_max_ps,
                      _mm512_set1_ps, _mm512_cmp_ps_mask, _mm512_mask_mov_ps,
                      _mm512_mask_mov_epi32, _mm512_storeu_ps,
                      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                      _mm512_add_epi32, _mm512_set1_epi32, fr_top2_finish_f32)

FR_DOTS_BLOCKED(fr_dots_f64_avx512, FR_TARGET_AVX512_FMA, double, 4, 3, fr_f64_4x3_512,
                fr_f64_4x1, fr_f64_1x3, fr_f64_1x1)
#endif

#endif
