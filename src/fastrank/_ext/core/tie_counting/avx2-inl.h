/* Level counts with AVX2: each comparison gives lanes of all ones (-1), subtracted from
   integer counters. */
#ifndef FR_TIE_COUNTING_AVX2_INL_H
#define FR_TIE_COUNTING_AVX2_INL_H

#include "generic-inl.h"

#ifdef FR_X86
/* As FR_LEVELS_GENERIC (the same counts), for contiguous rows: W values of type T to a
   vector VT (suffix S: ps or pd), whose comparisons are subtracted (SUB) from integer
   lanes, summed across lanes by fr_lane_sum_##S; the row's last values read under a mask
   (and their comparisons masked). Blocks of at most 2^30 values: the lanes cannot wrap. */
#define FR_LEVELS_AVX2_STEP(S, SUB, NL, A, K)                                             \
    do {                                                                                  \
        for (l = 0; l < NL; l++) {                                                        \
            g[l] = SUB(g[l], _mm256_and_si256(                                            \
                K, _mm256_castp##S##_si256(_mm256_cmp_p##S(A, w[l], _CMP_GT_OQ))));       \
            e[l] = SUB(e[l], _mm256_and_si256(                                            \
                K, _mm256_castp##S##_si256(_mm256_cmp_p##S(A, w[l], _CMP_EQ_OQ))));       \
        }                                                                                 \
        if (nan)                                                                          \
            lt = SUB(lt, _mm256_and_si256(                                                \
                K, _mm256_castp##S##_si256(_mm256_cmp_p##S(A, w[0], _CMP_LT_OQ))));       \
    } while (0)
#define FR_LEVELS_AVX2(T, VT, S, W, SUB, NL, NAME)                                        \
    static FR_TARGET_AVX2 void NAME(const T* x, ptrdiff_t m, const T* v, int64_t* gt,     \
                                    int64_t* eq, int64_t* nan) {                          \
        const __m256i all = _mm256_set1_epi32(-1);                                        \
        int64_t gs[NL] = {0}, es[NL] = {0}, ls = 0;                                       \
        VT w[NL];                                                                         \
        ptrdiff_t j = 0;                                                                  \
        int l;                                                                            \
        for (l = 0; l < NL; l++)                                                          \
            w[l] = _mm256_set1_p##S(v[l]);                                                \
        while (j < m) {                                                                   \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            __m256i g[NL], e[NL], lt = _mm256_setzero_si256();                            \
            for (l = 0; l < NL; l++)                                                      \
                g[l] = e[l] = _mm256_setzero_si256();                                     \
            for (; j + W <= stop; j += W) {                                               \
                VT a = _mm256_loadu_p##S(x + j);                                          \
                FR_LEVELS_AVX2_STEP(S, SUB, NL, a, all);                                  \
            }                                                                             \
            if (j < stop) {                                                               \
                __m256i tail = fr_tail_mask_##S(stop - j);                                \
                VT a = _mm256_maskload_p##S(x + j, tail);                                 \
                FR_LEVELS_AVX2_STEP(S, SUB, NL, a, tail);                                 \
                j = stop;                                                                 \
            }                                                                             \
            for (l = 0; l < NL; l++) {                                                    \
                gs[l] += fr_lane_sum_##S(g[l]);                                           \
                es[l] += fr_lane_sum_##S(e[l]);                                           \
            }                                                                             \
            ls += fr_lane_sum_##S(lt);                                                    \
        }                                                                                 \
        for (l = 0; l < NL; l++) {                                                        \
            gt[l] = gs[l];                                                                \
            eq[l] = es[l];                                                                \
        }                                                                                 \
        if (nan)                                                                          \
            *nan = m - gs[0] - es[0] - ls;                                                \
    }

/* the first r (< W) lanes set: 32-bit lanes (s) or 64-bit lanes (d) */
static FR_TARGET_AVX2 inline __m256i fr_tail_mask_s(ptrdiff_t r) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) r),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static FR_TARGET_AVX2 inline __m256i fr_tail_mask_d(ptrdiff_t r) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_setr_epi64x(0, 1, 2, 3));
}
/* the sum of the integer lanes: eight 32-bit (s) or four 64-bit (d) */
static FR_TARGET_AVX2 inline int64_t fr_lane_sum_s(__m256i v) {
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return _mm_cvtsi128_si32(h);
}
static FR_TARGET_AVX2 inline int64_t fr_lane_sum_d(__m256i v) {
    __m128i h = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_cvtsi128_si64(_mm_add_epi64(h, _mm_unpackhi_epi64(h, h)));
}

#define FR_LEVELS_AVX2_SET(T, VT, S, W, SUB, SUFFIX)                                      \
    FR_LEVELS_AVX2(T, VT, S, W, SUB, 1, fr_levels1_##SUFFIX)                              \
    FR_LEVELS_AVX2(T, VT, S, W, SUB, 2, fr_levels2_##SUFFIX)                              \
    FR_LEVELS_AVX2(T, VT, S, W, SUB, 4, fr_levels4_##SUFFIX)
FR_LEVELS_AVX2_SET(float, __m256, s, 8, _mm256_sub_epi32, f32_avx2)
FR_LEVELS_AVX2_SET(double, __m256d, d, 4, _mm256_sub_epi64, f64_avx2)
#endif

#endif
