/* Level counts with AVX2 (FR_LEVELS_VECTOR, for 1, 2 and 4 levels a pass): each
   comparison gives lanes of all ones (-1), subtracted from integer counters. */
#ifndef FR_TIE_COUNTING_AVX2_INL_H
#define FR_TIE_COUNTING_AVX2_INL_H

#include "common-inl.h"
#include "generic-inl.h"

#ifdef FR_X86
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

/* a comparison's lanes (all ones where true) under the mask k, subtracted (SUB) from acc */
#define FR_COUNT_AVX2(S, SUB, acc, k, a, w, PRED)                                         \
    SUB(acc, _mm256_and_si256(k, _mm256_castp##S##_si256(_mm256_cmp_p##S(a, w, PRED))))
#define FR_COUNT_AVX2_S(acc, k, a, w, PRED)                                               \
    FR_COUNT_AVX2(s, _mm256_sub_epi32, acc, k, a, w, PRED)
#define FR_COUNT_AVX2_D(acc, k, a, w, PRED)                                               \
    FR_COUNT_AVX2(d, _mm256_sub_epi64, acc, k, a, w, PRED)
#define FR_MASKLOAD_AVX2_S(k, p) _mm256_maskload_ps(p, k)
#define FR_MASKLOAD_AVX2_D(k, p) _mm256_maskload_pd(p, k)
#define FR_LEVELS_AVX2(T, VT, S, UPPER, W, NL, NAME)                                      \
    FR_LEVELS_VECTOR(FR_TARGET_AVX2, T, VT, __m256i, __m256i, W, _mm256_loadu_p##S,        \
                     FR_MASKLOAD_AVX2_##UPPER, fr_tail_mask_##S, _mm256_set1_epi32(-1),   \
                     _mm256_set1_p##S, FR_COUNT_AVX2_##UPPER, _mm256_setzero_si256(),      \
                     fr_lane_sum_##S, NL, NAME)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 1, fr_levels1_f32_avx2)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 2, fr_levels2_f32_avx2)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 4, fr_levels4_f32_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 1, fr_levels1_f64_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 2, fr_levels2_f64_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 4, fr_levels4_f64_avx2)
#endif

#endif
