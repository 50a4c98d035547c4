/* Dot products with AVX2 and FMA3: micro-kernels of QR query rows x BR base rows. */
#ifndef FR_DOTS_AVX2_INL_H
#define FR_DOTS_AVX2_INL_H

#include <math.h>

#include "../simd.h"
#include "common.h"

#ifdef FR_X86
/* The same sums with 256-bit vectors: partial sums 0-7 are the lanes of one float
   vector, or of two double vectors (lanes 0-3, 4-7). A micro-kernel computes QR x BR
   dot products at once (QR query rows, BR base rows: 8 independent accumulators or
   more for the main block, enough to keep both FMA units busy; float32 takes 3 x 4, 12
   accumulators and 7 loads per 12 fma: 40 % faster than 2 x 4 at 32 to 1 024
   features); the features past the last multiple of 8 go to lanes 0.. with scalar fma,
   as in the portable code. */
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
/* float32: one vector of partial sums per dot product. The features past the last
   multiple of 8 are loaded under a mask and their fma kept only in their lanes (lane l:
   fma(a_f, b_f, p_l), the others untouched, as in the scalar code), and 4 dot products
   are summed in registers in the order of FR_SUM8 (fr_sum8x4: the additions of the
   same pairs) -- at few features the scalar sums cost more than the products. */
__attribute__((target("avx2,fma"))) static inline __m128 fr_sum8x4(__m256 c0, __m256 c1,
                                                                    __m256 c2, __m256 c3) {
    /* hadd(c0, c1) = c0 p0+p1, p2+p3, c1 p0+p1, p2+p3 | the same of p4..p7; once more
       with c2, c3: (p0+p1)+(p2+p3) of c0..c3 | (p4+p5)+(p6+p7) of c0..c3 */
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(c0, c1), _mm256_hadd_ps(c2, c3));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}
#define FR_F32(NAME, QR, BR)                                                             \
    __attribute__((target("avx2,fma"))) static inline void NAME(                         \
            const float* a, const float* b, float* s, int64_t ss, int64_t d) {           \
        __m256 c[QR][BR], x[QR], y, keep;                                                \
        __m256i m;                                                                       \
        float p[8];                                                                      \
        int64_t f, u, r, d8 = d / 8 * 8;                                                 \
        for (u = 0; u < (QR); u++)                                                       \
            for (r = 0; r < (BR); r++) c[u][r] = _mm256_setzero_ps();                    \
        for (f = 0; f < d8; f += 8) {                                                    \
            for (u = 0; u < (QR); u++) x[u] = _mm256_loadu_ps(a + u * d + f);            \
            for (r = 0; r < (BR); r++) {                                                 \
                y = _mm256_loadu_ps(b + r * d + f);                                      \
                for (u = 0; u < (QR); u++) c[u][r] = _mm256_fmadd_ps(x[u], y, c[u][r]);  \
            }                                                                            \
        }                                                                                \
        if (d > d8) {                                                                    \
            m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (d - d8)),                    \
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));           \
            keep = _mm256_castsi256_ps(m);                                               \
            for (u = 0; u < (QR); u++) x[u] = _mm256_maskload_ps(a + u * d + d8, m);     \
            for (r = 0; r < (BR); r++) {                                                 \
                y = _mm256_maskload_ps(b + r * d + d8, m);                               \
                for (u = 0; u < (QR); u++)                                               \
                    c[u][r] = _mm256_blendv_ps(c[u][r],                                  \
                                               _mm256_fmadd_ps(x[u], y, c[u][r]), keep); \
            }                                                                            \
        }                                                                                \
        for (u = 0; u < (QR); u++)                                                       \
            for (r = 0; r + 4 <= (BR); r += 4)                                           \
                _mm_storeu_ps(s + u * ss + r, fr_sum8x4(c[u][r], c[u][r + 1],            \
                                                        c[u][r + 2], c[u][r + 3]));      \
        for (u = 0; u < (QR); u++)                                                       \
            for (r = (BR) / 4 * 4; r < (BR); r++) {                                      \
                _mm256_storeu_ps(p, c[u][r]);                                            \
                s[u * ss + r] = FR_SUM8(p);                                              \
            }                                                                            \
    }
#define FR_F64(NAME, QR, BR) FR_MICRO(NAME, double, __m256d, 2, _mm256_loadu_pd,     \
    _mm256_fmadd_pd, _mm256_storeu_pd, _mm256_setzero_pd, fma, QR, BR)
FR_F32(fr_f32_3x4, 3, 4)
FR_F32(fr_f32_3x1, 3, 1)
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
FR_DOTS_BLOCKED(fr_dots_f32_avx2_rows, FR_TARGET_AVX2_FMA, float, 3, 4, fr_f32_3x4,
                fr_f32_3x1, fr_f32_1x4, fr_f32_1x1)
/* The rows b[0..n) (d features) as panels of w rows (a multiple of 8) at pk:
   pk[p w d + w f + lane] is feature f of row p w + lane, 0 past row n, up to the next
   multiple of 2 w rows. Blocks of 8 rows x 8 features are transposed in registers (the
   unpack / shuffle / lane-swap sequence), the features past the last multiple of 8 one
   by one. */
FR_TARGET_AVX2_FMA static inline void fr_pack_panels(const float* b, int64_t n, int64_t d,
                                                     int64_t w, float* pk) {
    int64_t end = (n + 2 * w - 1) / (2 * w) * (2 * w), j0, f, i, d8 = d / 8 * 8;
    __m256 r[8], t[8], u[8];
    float* out;
    for (j0 = 0; j0 < end; j0 += 8) {
        out = pk + j0 / w * w * d + j0 % w;
        for (f = 0; f < d8; f += 8) {
            for (i = 0; i < 8; i++)
                r[i] = j0 + i < n ? _mm256_loadu_ps(b + (j0 + i) * d + f) : _mm256_setzero_ps();
            for (i = 0; i < 8; i += 2) {
                t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
                t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
            }
            for (i = 0; i < 8; i += 4) {
                u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
                u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
                u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
                u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
            }
            for (i = 0; i < 4; i++) {
                _mm256_storeu_ps(out + w * (f + i), _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
                _mm256_storeu_ps(out + w * (f + i + 4),
                                 _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
            }
        }
        for (; f < d; f++)
            for (i = 0; i < 8; i++) out[w * f + i] = j0 + i < n ? b[(j0 + i) * d + f] : 0;
    }
}
/* float32 panels (dots/common.h) of 8 rows: 3 query rows x 2 panels, the chains two at
   a time (12 independent fma chains), each feature's 2 panel vectors loaded just before
   its 6 fused multiply-adds, the sums of each pair kept in memory (the outputs, a block
   on the stack) while the next pairs run: 15 of the 16 registers, 10 loads per 12 fused
   multiply-adds. */
#define FR_PANEL256_STEP(P, y0, y1, f)                                                   \
    x = _mm256_set1_ps(a[f]);                                                            \
    P##00 = _mm256_fmadd_ps(x, y0, P##00), P##01 = _mm256_fmadd_ps(x, y1, P##01);        \
    x = _mm256_set1_ps(a[d + (f)]);                                                      \
    P##10 = _mm256_fmadd_ps(x, y0, P##10), P##11 = _mm256_fmadd_ps(x, y1, P##11);        \
    x = _mm256_set1_ps(a[2 * d + (f)]);                                                  \
    P##20 = _mm256_fmadd_ps(x, y0, P##20), P##21 = _mm256_fmadd_ps(x, y1, P##21);
/* feature f of the 2 panels at y (panel stride ps) into y0, y1, kept in registers */
#define FR_PANEL256_LOAD(y)                                                              \
    y0 = _mm256_loadu_ps(y), y1 = _mm256_loadu_ps((y) + ps);                             \
    __asm__("" : "+v"(y0), "+v"(y1));
/* (partial sum L) + (partial sum L + 1) of the dot products of 3 query rows (a, row
   stride d) with 2 panels (pb, panel stride ps), into a##ur for query row u, panel r */
#define FR_PANEL256_PAIR(L)                                                              \
    a00 = a01 = a10 = a11 = a20 = a21 = _mm256_setzero_ps();                             \
    b00 = b01 = b10 = b11 = b20 = b21 = _mm256_setzero_ps();                             \
    for (f = (L), y = pb + 8 * (L); f + 1 < d; f += 8, y += 64) {                        \
        FR_PANEL256_LOAD(y) FR_PANEL256_STEP(a, y0, y1, f)                               \
        FR_PANEL256_LOAD(y + 8) FR_PANEL256_STEP(b, y0, y1, f + 1)                       \
    }                                                                                    \
    if (f < d) {                                                                         \
        FR_PANEL256_LOAD(y) FR_PANEL256_STEP(a, y0, y1, f)                               \
    }                                                                                    \
    a00 = _mm256_add_ps(a00, b00), a01 = _mm256_add_ps(a01, b01);                        \
    a10 = _mm256_add_ps(a10, b10), a11 = _mm256_add_ps(a11, b11);                        \
    a20 = _mm256_add_ps(a20, b20), a21 = _mm256_add_ps(a21, b21);
/* t[u ts + 8 r] <- a##ur (+ t[...] where ADD) */
#define FR_PANEL256_PUT(t, ts, ADD)                                                      \
    _mm256_storeu_ps(t, ADD(t, a00)), _mm256_storeu_ps(t + 8, ADD(t + 8, a01));          \
    _mm256_storeu_ps(t + (ts), ADD(t + (ts), a10));                                      \
    _mm256_storeu_ps(t + (ts) + 8, ADD(t + (ts) + 8, a11));                              \
    _mm256_storeu_ps(t + 2 * (ts), ADD(t + 2 * (ts), a20));                              \
    _mm256_storeu_ps(t + 2 * (ts) + 8, ADD(t + 2 * (ts) + 8, a21));
#define FR_PANEL256_SET(p, v) (v)
#define FR_PANEL256_ADD(p, v) _mm256_add_ps(_mm256_loadu_ps(p), v)
FR_TARGET_AVX2_FMA static inline void fr_f32_panels256_3x2(const float* a, int64_t d,
                                                        const float* pb, int64_t ps,
                                                        float* s, int64_t ss) {
    __m256 a00, a01, a10, a11, a20, a21, b00, b01, b10, b11, b20, b21, x, y0, y1;
    float t[48];
    const float* y;
    int64_t f;
    FR_PANEL256_PAIR(0) FR_PANEL256_PUT(s, ss, FR_PANEL256_SET)     /* p0 + p1 */
    FR_PANEL256_PAIR(2) FR_PANEL256_PUT(s, ss, FR_PANEL256_ADD)     /* + (p2 + p3) */
    FR_PANEL256_PAIR(4) FR_PANEL256_PUT(t, 16, FR_PANEL256_SET)     /* p4 + p5 */
    FR_PANEL256_PAIR(6) FR_PANEL256_PUT(t, 16, FR_PANEL256_ADD)     /* + (p6 + p7) */
    a00 = _mm256_loadu_ps(t), a01 = _mm256_loadu_ps(t + 8);
    a10 = _mm256_loadu_ps(t + 16), a11 = _mm256_loadu_ps(t + 24);
    a20 = _mm256_loadu_ps(t + 32), a21 = _mm256_loadu_ps(t + 40);
    FR_PANEL256_PUT(s, ss, FR_PANEL256_ADD)                         /* the two halves */
}
FR_DOTS_PANELS(fr_dots_f32_panels256, FR_TARGET_AVX2_FMA, 8, 3, fr_f32_panels256_3x2)
/* float32 AVX2 on packed base rows, blocked like a GEMM (as on AVX-512, dots/avx512-inl.h):
   a tile of FR_PACK256_ROWS base rows is copied once as groups of 4 rows whose 8-feature
   chunks lie side by side, so the 3 x 4 micro-kernel (12 accumulators, 7 loads per 12 fused
   multiply-adds) reads one stream of them; up to FR_PACK256_CHUNKS chunks a pass, the
   accumulators stored and reloaded unchanged between passes, and FR_PACK256_QUERIES query
   rows a block, whose rows and the tile's stay in L2. The last pass adds the features past
   the last multiple of 8 and sums the lanes as fr_f32_3x4 does: the same fma chains and
   additions, the same bits. At 1 024 features, 10^3 base rows: 0.86x the time of the
   unpacked kernel, whose 4 base rows were 4 streams read from L2 (Zen 4, one thread);
   on bases of 10^4 rows and more, read from memory, the copy cost 1.07-1.09x: they keep
   the unpacked kernel (bases over FR_PACK256_BASE bytes). */
#define FR_PACK256_ROWS 48
#define FR_PACK256_CHUNKS 128
#define FR_PACK256_QUERIES 48
#define FR_PACK256_BASE (8.0 * 1024 * 1024) /* bytes of the largest base packed */
FR_TARGET_AVX2_FMA static inline void fr_f32_3x4_packed(const float* a, int64_t d,
                                                        const float* pb, int64_t ps,
                                                        int64_t t0, int64_t n, float* acc,
                                                        const float* b, float* s, int64_t ss) {
    /* a: 3 query rows (row stride d); pb: a group of 4 packed rows from chunk 0 (one
       group: its stride ps is not used); chunks t0 .. t0 + n; acc: the 12 accumulators
       between passes; b: the 4 base rows (row stride d) and s: the 3 x 4 outputs (row
       stride ss), used on the last pass */
    __m256 c[3][4], x[3], y, keep;
    __m256i m;
    int64_t t, u, r, d8 = d / 8 * 8;
    int first = t0 == 0, last = 8 * (t0 + n) == d8;
    (void) ps;
    for (u = 0; u < 3; u++)
        for (r = 0; r < 4; r++)
            c[u][r] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + 8 * (4 * u + r));
    for (t = t0; t < t0 + n; t++) {
        for (u = 0; u < 3; u++) x[u] = _mm256_loadu_ps(a + u * d + 8 * t);
        for (r = 0; r < 4; r++) {
            y = _mm256_loadu_ps(pb + 32 * t + 8 * r);
            for (u = 0; u < 3; u++) c[u][r] = _mm256_fmadd_ps(x[u], y, c[u][r]);
        }
    }
    if (!last) {
        for (u = 0; u < 3; u++)
            for (r = 0; r < 4; r++) _mm256_storeu_ps(acc + 8 * (4 * u + r), c[u][r]);
        return;
    }
    if (d > d8) {
        m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (d - d8)),
                               _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        keep = _mm256_castsi256_ps(m);
        for (u = 0; u < 3; u++) x[u] = _mm256_maskload_ps(a + u * d + d8, m);
        for (r = 0; r < 4; r++) {
            y = _mm256_maskload_ps(b + r * d + d8, m);
            for (u = 0; u < 3; u++)
                c[u][r] = _mm256_blendv_ps(c[u][r], _mm256_fmadd_ps(x[u], y, c[u][r]), keep);
        }
    }
    for (u = 0; u < 3; u++)
        _mm_storeu_ps(s + u * ss, fr_sum8x4(c[u][0], c[u][1], c[u][2], c[u][3]));
}
FR_DOTS_PACKED(fr_dots_f32_packed256, FR_TARGET_AVX2_FMA, 3, 4, 4, fr_f32_3x4_packed,
               fr_f32_3x1)
FR_TARGET_AVX2_FMA static void fr_dots_f32_avx2(const float* q, const float* b, float* s,
                                                int64_t mq, int64_t mb, int64_t d) {
    if (d > FR_PANEL_D && mq >= 3 && mb >= 4 && (double) mb * d * sizeof(float) <= FR_PACK256_BASE
        && fr_dots_f32_packed256(q, b, s, mq, mb, d, FR_PACK256_ROWS,
                                 d / 8 < FR_PACK256_CHUNKS ? d / 8 : FR_PACK256_CHUNKS,
                                 FR_PACK256_QUERIES) == 0)
        return;
    if (d > FR_PANEL_D || mq < 4 || mb < 8 ||
        fr_dots_f32_panels256(q, b, s, mq, mb, d) != 0)
        fr_dots_f32_avx2_rows(q, b, s, mq, mb, d);
}
FR_DOTS_BLOCKED(fr_dots_f64_avx2, FR_TARGET_AVX2_FMA, double, 2, 2, fr_f64_2x2, fr_f64_2x1,
                fr_f64_1x2, fr_f64_1x1)
/* fr_may_enter (cosine.h): a vector of rows at a time, the last n % (its width) rows in
   portable code */
#define FR_MAY_ENTER_AVX2(NAME, T, W, V, LOAD, MUL, SET1, CMP, MOVEMASK)                    \
    FR_TARGET_AVX2_FMA static uint64_t NAME(const T* dot, const T* w, int64_t n, T lo) {    \
        const V t = SET1(lo);                                                               \
        uint64_t m = 0;                                                                     \
        int64_t j;                                                                          \
        for (j = 0; j + (W) <= n; j += (W))                                                 \
            m |= (uint64_t) MOVEMASK(CMP(MUL(LOAD(dot + j), LOAD(w + j)), t, _CMP_GE_OQ))   \
                 << j;                                                                      \
        return j < n ? m | NAME##_tail(dot + j, w + j, n - j, lo) << j : m;                 \
    }
#define fr_may_enter_f64_avx2_tail fr_may_enter_f64_portable
#define fr_may_enter_f32_avx2_tail fr_may_enter_f32_portable
FR_MAY_ENTER_AVX2(fr_may_enter_f64_avx2, double, 4, __m256d, _mm256_loadu_pd, _mm256_mul_pd,
                  _mm256_set1_pd, _mm256_cmp_pd, _mm256_movemask_pd)
FR_MAY_ENTER_AVX2(fr_may_enter_f32_avx2, float, 8, __m256, _mm256_loadu_ps, _mm256_mul_ps,
                  _mm256_set1_ps, _mm256_cmp_ps, _mm256_movemask_ps)
/* fr_top2_scaled (cosine.h): each lane's largest product, its row and its second largest
   in one pass, a vector of rows at a time (the row numbers in integer lanes of the same
   width, moved by a blend on the comparison), the lanes and the last n % (their number)
   rows then by fr_top2_finish */
#define FR_TOP2_SCALED_AVX2(NAME, T, W, V, IT, LOAD, MUL, MIN, MAX, SET1, CMP, BLENDV,       \
                            CASTI, CASTV, STORE, FIRST, IADD, ISET1, FINISH)                \
    FR_TARGET_AVX2_FMA static T NAME(const T* dot, const T* w, int64_t n, int64_t* at,      \
                                     T* next) {                                             \
        V m1 = SET1(-INFINITY), m2 = m1, p;                                                 \
        __m256i i1 = _mm256_setzero_si256(), row = FIRST, step = ISET1(W);                  \
        T l1[W], l2[W];                                                                     \
        IT li[W];                                                                           \
        int64_t j, l, rows[W];                                                              \
        for (j = 0; j + (W) <= n; j += (W)) {                                               \
            p = MUL(LOAD(dot + j), LOAD(w + j));                                            \
            i1 = CASTI(BLENDV(CASTV(i1), CASTV(row), CMP(p, m1, _CMP_GT_OQ)));              \
            m2 = MAX(m2, MIN(p, m1));                                                       \
            m1 = MAX(m1, p);                                                                \
            row = IADD(row, step);                                                          \
        }                                                                                   \
        STORE(l1, m1), STORE(l2, m2);                                                       \
        _mm256_storeu_si256((__m256i*) li, i1);                                             \
        for (l = 0; l < (W); l++) rows[l] = li[l];                                          \
        return FINISH(l1, l2, rows, (W), dot, w, j, n, at, next);                           \
    }
FR_TOP2_SCALED_AVX2(fr_top2_scaled_f64_avx2, double, 4, __m256d, int64_t, _mm256_loadu_pd,
                    _mm256_mul_pd, _mm256_min_pd, _mm256_max_pd, _mm256_set1_pd,
                    _mm256_cmp_pd, _mm256_blendv_pd, _mm256_castpd_si256, _mm256_castsi256_pd,
                    _mm256_storeu_pd, _mm256_setr_epi64x(0, 1, 2, 3), _mm256_add_epi64,
                    _mm256_set1_epi64x, fr_top2_finish_f64)
FR_TOP2_SCALED_AVX2(fr_top2_scaled_f32_avx2, float, 8, __m256, int32_t, _mm256_loadu_ps,
                    _mm256_mul_ps, _mm256_min_ps, _mm256_max_ps, _mm256_set1_ps,
                    _mm256_cmp_ps, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
                    _mm256_storeu_ps, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                    _mm256_add_epi32, _mm256_set1_epi32, fr_top2_finish_f32)
/* fr_scale_rows (cosine.h) with 256-bit vectors: a row's largest magnitude from 4 vector
   maxima of the values with the sign cleared (the row then multiplied by its power of
   two, in the row's type: other rows, a float32 one whose power of two is not a
   float32, one with a subnormal largest magnitude, NaN or infinity, go to the portable
   code); the squared norms of 4 rows at a time, their 4 fma chains side by side (one
   chain's latency per row was most of the time at many features), each the chain of
   fr_f32_1x1 / fr_f64_1x1: the same bits. */
#define FR_SCALE_ROWS_AVX2(NAME, T, V, N, LOAD, STORE, MUL, AND, MAX, SET1, ZERO, FMADD,    \
                           FMA, SIGNLESS, FAST)                                             \
    FR_TARGET_AVX2_FMA static void NAME##_row(const T* x, T* out, int64_t m) {              \
        const V keep = SIGNLESS;                                                            \
        V a0 = ZERO(), a1 = a0, a2 = a0, a3 = a0, s;                                        \
        T lanes[8 / (N)], top = 0, t, sc;                                                  \
        int64_t j, l;                                                                       \
        int shift;                                                                          \
        for (j = 0; j + 32 / (N) <= m; j += 32 / (N)) {                                     \
            a0 = MAX(a0, AND(LOAD(x + j), keep));                                           \
            a1 = MAX(a1, AND(LOAD(x + j + 8 / (N)), keep));                                 \
            a2 = MAX(a2, AND(LOAD(x + j + 16 / (N)), keep));                                \
            a3 = MAX(a3, AND(LOAD(x + j + 24 / (N)), keep));                                \
        }                                                                                   \
        for (; j + 8 / (N) <= m; j += 8 / (N)) a0 = MAX(a0, AND(LOAD(x + j), keep));        \
        STORE(lanes, MAX(MAX(a0, a1), MAX(a2, a3)));                                        \
        for (l = 0; l < 8 / (N); l++) top = lanes[l] > top ? lanes[l] : top;                \
        for (; j < m; j++) {                                                                \
            t = x[j] < 0 ? -x[j] : x[j];                                                    \
            top = t > top ? t : top;                                                        \
        }                                                                                   \
        shift = fr_pow2_shift((double) top);                                                \
        if (!(top < INFINITY) || !(FAST)) {                                                 \
            NAME##_slow(x, out, m);                                                         \
            return;                                                                         \
        }                                                                                   \
        sc = (T) fr_pow2(shift), s = SET1(sc);                                              \
        for (j = 0; j + 8 / (N) <= m; j += 8 / (N)) STORE(out + j, MUL(LOAD(x + j), s));    \
        for (; j < m; j++) out[j] = x[j] * sc;                                              \
    }                                                                                       \
    FR_TARGET_AVX2_FMA static void NAME(const T* x, T* out, T* sqnorms, int64_t n,          \
                                        int64_t m) {                                        \
        const int64_t m8 = m / 8 * 8;                                                       \
        const T* o[4];                                                                      \
        V c[4][N], y;                                                                       \
        T p[8];                                                                             \
        int64_t i0, r, rows, f, v, l;                                                       \
        for (i0 = 0; i0 < n; i0 += 4) {                                                     \
            rows = n - i0 < 4 ? n - i0 : 4;                                                 \
            for (r = 0; r < rows; r++) NAME##_row(x + (i0 + r) * m, out + (i0 + r) * m, m); \
            if (sqnorms == NULL) continue;                                                  \
            for (r = 0; r < 4; r++) {                                                       \
                o[r] = out + (i0 + (r < rows ? r : rows - 1)) * m;                          \
                for (v = 0; v < (N); v++) c[r][v] = ZERO();                                 \
            }                                                                               \
            for (f = 0; f < m8; f += 8)                                                     \
                for (r = 0; r < 4; r++)                                                     \
                    for (v = 0; v < (N); v++) {                                             \
                        y = LOAD(o[r] + f + v * (8 / (N)));                                 \
                        c[r][v] = FMADD(y, y, c[r][v]);                                     \
                    }                                                                       \
            for (r = 0; r < rows; r++) {                                                    \
                for (v = 0; v < (N); v++) STORE(p + v * (8 / (N)), c[r][v]);                \
                for (l = 0; m8 + l < m; l++) p[l] = FMA(o[r][m8 + l], o[r][m8 + l], p[l]);  \
                sqnorms[i0 + r] = FR_SUM8(p);                                               \
            }                                                                               \
        }                                                                                   \
    }
#define fr_scale_rows_f64_avx2_slow fr_scale_row_f64_portable
#define fr_scale_rows_f32_avx2_slow fr_scale_row_f32_portable
FR_SCALE_ROWS_AVX2(fr_scale_rows_f64_avx2, double, __m256d, 2, _mm256_loadu_pd,
                   _mm256_storeu_pd, _mm256_mul_pd, _mm256_and_pd, _mm256_max_pd,
                   _mm256_set1_pd, _mm256_setzero_pd, _mm256_fmadd_pd, fma,
                   _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL)),
                   shift <= 1000 && shift >= -1022)
FR_SCALE_ROWS_AVX2(fr_scale_rows_f32_avx2, float, __m256, 1, _mm256_loadu_ps,
                   _mm256_storeu_ps, _mm256_mul_ps, _mm256_and_ps, _mm256_max_ps,
                   _mm256_set1_ps, _mm256_setzero_ps, _mm256_fmadd_ps, fmaf,
                   _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)),
                   shift >= -126 && shift <= 127)
#endif

#endif
