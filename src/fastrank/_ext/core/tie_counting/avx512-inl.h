/* Counting passes with AVX-512 F: level counts, where each comparison gives a mask that
   adds one to the lanes it selects (one instruction, where the vectorised C loop takes
   two), and the gather of a gap's values, packed by compress. */
#ifndef FR_TIE_COUNTING_AVX512_INL_H
#define FR_TIE_COUNTING_AVX512_INL_H

#include "avx2-inl.h"

#ifdef FR_X86
/* As FR_LEVELS_GENERIC (the same counts), for contiguous rows: W values of type T to a
   vector VT, compared by CMP into a mask of type MASK that adds one to the lanes (ADD) of
   integer counters, summed across lanes by SUM; the row's last values read under a mask.
   Blocks of at most 2^30 values: the lanes' sums cannot wrap. */
#define FR_LEVELS_AVX512_STEP(CMP, ADD, NL, A, K)                                                       \
    do {                                                                                  \
        for (l = 0; l < NL; l++) {                                                        \
            g[l] = ADD(g[l], CMP(K, A, w[l], _CMP_GT_OQ), g[l], one);                     \
            e[l] = ADD(e[l], CMP(K, A, w[l], _CMP_EQ_OQ), e[l], one);                     \
        }                                                                                 \
        if (nan)                                                                          \
            lt = ADD(lt, CMP(K, A, w[0], _CMP_LT_OQ), lt, one);                           \
    } while (0)
#define FR_LEVELS_AVX512(T, VT, W, MASK, LOAD, LOAD_TAIL, SET1, CMP, ADD, ONE, SUM, NL,   \
                         NAME)                                                            \
    static FR_TARGET_AVX512 void NAME(const T* x, ptrdiff_t m, const T* v, int64_t* gt,   \
                                      int64_t* eq, int64_t* nan) {                        \
        const __m512i one = ONE(1);                                                       \
        const MASK all = (MASK) ~0u;                                                      \
        int64_t gs[NL] = {0}, es[NL] = {0}, ls = 0;                                       \
        VT w[NL];                                                                         \
        ptrdiff_t j = 0;                                                                  \
        int l;                                                                            \
        for (l = 0; l < NL; l++)                                                          \
            w[l] = SET1(v[l]);                                                            \
        while (j < m) {                                                                   \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            __m512i g[NL], e[NL], lt = _mm512_setzero_si512();                            \
            for (l = 0; l < NL; l++)                                                      \
                g[l] = e[l] = _mm512_setzero_si512();                                     \
            for (; j + W <= stop; j += W) {                                               \
                VT a = LOAD(x + j);                                                       \
                FR_LEVELS_AVX512_STEP(CMP, ADD, NL, a, all);                                            \
            }                                                                             \
            if (j < stop) {                                                               \
                MASK tail = (MASK) ((1u << (stop - j)) - 1);                              \
                VT a = LOAD_TAIL(tail, x + j);                                            \
                FR_LEVELS_AVX512_STEP(CMP, ADD, NL, a, tail);                                           \
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
#define FR_LEVELS_AVX512_F32(NL, NAME)                                                    \
    FR_LEVELS_AVX512(float, __m512, 16, __mmask16, _mm512_loadu_ps, _mm512_maskz_loadu_ps, \
                     _mm512_set1_ps, _mm512_mask_cmp_ps_mask, _mm512_mask_add_epi32,      \
                     _mm512_set1_epi32, _mm512_reduce_add_epi32, NL, NAME)
#define FR_LEVELS_AVX512_F64(NL, NAME)                                                    \
    FR_LEVELS_AVX512(double, __m512d, 8, __mmask8, _mm512_loadu_pd, _mm512_maskz_loadu_pd, \
                     _mm512_set1_pd, _mm512_mask_cmp_pd_mask, _mm512_mask_add_epi64,      \
                     _mm512_set1_epi64, _mm512_reduce_add_epi64, NL, NAME)
FR_LEVELS_AVX512_F32(1, fr_levels1_f32_avx512)
FR_LEVELS_AVX512_F32(2, fr_levels2_f32_avx512)
FR_LEVELS_AVX512_F32(4, fr_levels4_f32_avx512)
FR_LEVELS_AVX512_F64(1, fr_levels1_f64_avx512)
FR_LEVELS_AVX512_F64(2, fr_levels2_f64_avx512)
FR_LEVELS_AVX512_F64(4, fr_levels4_f64_avx512)

/* As FR_BETWEEN (the same values, in the same order), for contiguous rows: each vector's
   values in the gap packed to its low lanes (compress), widened to double and stored under
   a mask. */
static FR_TARGET_AVX512 ptrdiff_t fr_between_f32_avx512(const float* x, ptrdiff_t m, float lo,
                                                        float hi, int bounded, double* out) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    ptrdiff_t j, k = 0;
    for (j = 0; j < m; j += 16) {
        __mmask16 in = m - j >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (m - j)) - 1);
        __m512 a = _mm512_maskz_loadu_ps(in, x + j), c;
        int n;
        in = _mm512_mask_cmp_ps_mask(in, a, vlo, _CMP_GT_OQ);
        if (bounded)
            in = _mm512_mask_cmp_ps_mask(in, a, vhi, _CMP_LT_OQ);
        if (!in)
            continue;
        n = __builtin_popcount(in);
        c = _mm512_maskz_compress_ps(in, a);
        _mm512_mask_storeu_pd(out + k, (__mmask8) ((1u << (n < 8 ? n : 8)) - 1),
                              _mm512_cvtps_pd(_mm512_castps512_ps256(c)));
        if (n > 8)
            _mm512_mask_storeu_pd(out + k + 8, (__mmask8) ((1u << (n - 8)) - 1),
                                  _mm512_cvtps_pd(_mm256_castpd_ps(
                                      _mm512_extractf64x4_pd(_mm512_castps_pd(c), 1))));
        k += n;
    }
    return k;
}
static FR_TARGET_AVX512 ptrdiff_t fr_between_f64_avx512(const double* x, ptrdiff_t m,
                                                        double lo, double hi, int bounded,
                                                        double* out) {
    const __m512d vlo = _mm512_set1_pd(lo), vhi = _mm512_set1_pd(hi);
    ptrdiff_t j, k = 0;
    for (j = 0; j < m; j += 8) {
        __mmask8 in = m - j >= 8 ? (__mmask8) 0xFF : (__mmask8) ((1u << (m - j)) - 1);
        __m512d a = _mm512_maskz_loadu_pd(in, x + j);
        int n;
        in = _mm512_mask_cmp_pd_mask(in, a, vlo, _CMP_GT_OQ);
        if (bounded)
            in = _mm512_mask_cmp_pd_mask(in, a, vhi, _CMP_LT_OQ);
        if (!in)
            continue;
        n = __builtin_popcount(in);
        _mm512_mask_storeu_pd(out + k, (__mmask8) ((1u << n) - 1),
                              _mm512_maskz_compress_pd(in, a));
        k += n;
    }
    return k;
}

/* The distinct values of x[0:m] above v (-0.0 == 0.0), while they are at most
   FR_FEW_DISTINCT: returns their number, seen[0:number] <- them; -1 once there are more
   (the caller counts another way). Each vector is compared with every value seen so far
   (comparisons side by side, their masks ORed); its unseen lanes join one by one,
   compared only with those that joined from the same vector. Few distinct values (ties)
   cost a few comparisons a vector, where a hash set costs a probe a label; a row of
   distinct values costs about three vectors' comparisons before the caller's hash set. */
#define FR_FEW_DISTINCT 32
#define FR_DISTINCT_ABOVE_AVX512(T, VT, W, MASK, LOADZ, SET1, CMP, STORE, NAME)           \
    static FR_TARGET_AVX512 ptrdiff_t NAME(const T* x, ptrdiff_t m, T v, T* seen) {       \
        const VT vv = SET1(v);                                                            \
        T lane[W];                                                                        \
        ptrdiff_t j, n = 0, i, l, old;                                                    \
        for (j = 0; j < m; j += W) {                                                      \
            MASK in = m - j >= W ? (MASK) ~0u : (MASK) ((1u << (m - j)) - 1);             \
            MASK f0 = 0, f1 = 0, f2 = 0, f3 = 0;                                          \
            unsigned left;                                                                \
            VT a = LOADZ(in, x + j);                                                      \
            in = CMP(in, a, vv, _CMP_GT_OQ);                                              \
            for (i = 0; i + 4 <= n; i += 4) { /* four independent chains */               \
                f0 |= CMP(in, a, SET1(seen[i]), _CMP_EQ_OQ);                              \
                f1 |= CMP(in, a, SET1(seen[i + 1]), _CMP_EQ_OQ);                          \
                f2 |= CMP(in, a, SET1(seen[i + 2]), _CMP_EQ_OQ);                          \
                f3 |= CMP(in, a, SET1(seen[i + 3]), _CMP_EQ_OQ);                          \
            }                                                                             \
            for (; i < n; i++)                                                            \
                f0 |= CMP(in, a, SET1(seen[i]), _CMP_EQ_OQ);                              \
            left = in & (MASK) ~(f0 | f1 | f2 | f3);                                      \
            if (!left)                                                                    \
                continue;                                                                 \
            STORE(lane, a);                                                               \
            old = n; /* the unseen lanes, lowest first: new, unless one before had it */  \
            for (; left; left &= left - 1) {                                              \
                l = __builtin_ctz(left);                                                  \
                for (i = old; i < n && seen[i] != lane[l]; i++)                           \
                    ;                                                                     \
                if (i < n)                                                                \
                    continue;                                                             \
                if (n == FR_FEW_DISTINCT)                                                 \
                    return -1;                                                            \
                seen[n++] = lane[l];                                                      \
            }                                                                             \
        }                                                                                 \
        return n;                                                                         \
    }
FR_DISTINCT_ABOVE_AVX512(float, __m512, 16, __mmask16, _mm512_maskz_loadu_ps, _mm512_set1_ps,
                         _mm512_mask_cmp_ps_mask, _mm512_storeu_ps, fr_distinct_above_f32_avx512)
FR_DISTINCT_ABOVE_AVX512(double, __m512d, 8, __mmask8, _mm512_maskz_loadu_pd, _mm512_set1_pd,
                         _mm512_mask_cmp_pd_mask, _mm512_storeu_pd, fr_distinct_above_f64_avx512)
#endif

#endif
