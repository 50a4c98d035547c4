/* Counting passes with AVX2: level counts (FR_LEVELS_VECTOR, for 1, 2 and 4 levels a
   pass), each comparison giving lanes of all ones (-1), subtracted from integer counters;
   the distinct values above a level, while few (float32: looked up in a table by a
   gather); the walk down a gap's values. */
#ifndef FR_TIE_COUNTING_AVX2_INL_H
#define FR_TIE_COUNTING_AVX2_INL_H

#include <math.h>

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

/* the largest of the lanes of v */
static FR_TARGET_AVX2 inline float fr_lane_max_s(__m256 v) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_shuffle_ps(h, h, 0x4E));
    return _mm_cvtss_f32(_mm_max_ps(h, _mm_shuffle_ps(h, h, 0xB1)));
}
static FR_TARGET_AVX2 inline double fr_lane_max_d(__m256d v) {
    __m128d h = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_max_pd(h, _mm_unpackhi_pd(h, h)));
}

/* FR_GAP_TOP_VECTOR's pass with AVX2: comparisons as lanes of all ones, blends keeping
   each lane's largest value and its count (a tied lane subtracts -1) */
#define FR_GAP_PASS_AVX2(VT, S, W, SUB, ONE)                                              \
    do {                                                                                  \
        const VT vlo = _mm256_set1_p##S(lo), ceiling = _mm256_set1_p##S(hi);             \
        VT best = _mm256_set1_p##S(-INFINITY);                                            \
        __m256i count = _mm256_setzero_si256();                                           \
        ptrdiff_t j;                                                                      \
        for (j = 0; j < m; j += W) {                                                      \
            __m256i in = m - j >= W ? _mm256_set1_epi32(-1) : fr_tail_mask_##S(m - j);    \
            VT a = _mm256_maskload_p##S(x + j, in), gt, eq;                               \
            in = _mm256_and_si256(in, _mm256_castp##S##_si256(                            \
                _mm256_cmp_p##S(a, vlo, _CMP_GT_OQ)));                                    \
            if (bounded)                                                                  \
                in = _mm256_and_si256(in, _mm256_castp##S##_si256(                        \
                    _mm256_cmp_p##S(a, ceiling, _CMP_LT_OQ)));                            \
            gt = _mm256_and_p##S(_mm256_castsi256_p##S(in),                               \
                                 _mm256_cmp_p##S(a, best, _CMP_GT_OQ));                   \
            eq = _mm256_and_p##S(_mm256_castsi256_p##S(in),                               \
                                 _mm256_cmp_p##S(a, best, _CMP_EQ_OQ));                   \
            best = _mm256_blendv_p##S(best, a, gt);                                       \
            count = _mm256_blendv_epi8(count, ONE, _mm256_castp##S##_si256(gt));          \
            count = SUB(count, _mm256_castp##S##_si256(eq));                              \
        }                                                                                 \
        top = fr_lane_max_##S(best);                                                      \
        c = fr_lane_sum_##S(_mm256_and_si256(count, _mm256_castp##S##_si256(              \
            _mm256_cmp_p##S(best, _mm256_set1_p##S(top), _CMP_EQ_OQ))));                  \
    } while (0)
#define FR_GAP_PASS_AVX2_F32()                                                            \
    FR_GAP_PASS_AVX2(__m256, s, 8, _mm256_sub_epi32, _mm256_set1_epi32(1))
#define FR_GAP_PASS_AVX2_F64()                                                            \
    FR_GAP_PASS_AVX2(__m256d, d, 4, _mm256_sub_epi64, _mm256_set1_epi64x(1))
FR_GAP_TOP_VECTOR(FR_TARGET_AVX2, float, FR_GAP_PASS_AVX2_F32, fr_gap_top_f32_avx2)
FR_GAP_TOP_VECTOR(FR_TARGET_AVX2, double, FR_GAP_PASS_AVX2_F64, fr_gap_top_f64_avx2)

/* FR_DISTINCT_ABOVE_VECTOR's comparisons with AVX2 (float64 rows): lanes of all ones, ORed
   four chains side by side, their sign bits taken as the lanes' bits */
#define FR_UNSEEN_AVX2(VT, S, W)                                                          \
    do {                                                                                  \
        __m256i tail = m - j >= W ? _mm256_set1_epi32(-1) : fr_tail_mask_##S(m - j);      \
        VT f0 = _mm256_setzero_p##S(), f1 = f0, f2 = f0, f3 = f0;                         \
        unsigned in;                                                                      \
        a = _mm256_maskload_p##S(x + j, tail);                                            \
        in = (unsigned) _mm256_movemask_p##S(_mm256_and_p##S(                             \
            _mm256_castsi256_p##S(tail), _mm256_cmp_p##S(a, _mm256_set1_p##S(v),          \
                                                         _CMP_GT_OQ)));                   \
        for (i = 0; i + 4 <= n; i += 4) {                                                 \
            f0 = _mm256_or_p##S(f0, _mm256_cmp_p##S(a, _mm256_set1_p##S(seen[i]),         \
                                                    _CMP_EQ_OQ));                         \
            f1 = _mm256_or_p##S(f1, _mm256_cmp_p##S(a, _mm256_set1_p##S(seen[i + 1]),     \
                                                    _CMP_EQ_OQ));                         \
            f2 = _mm256_or_p##S(f2, _mm256_cmp_p##S(a, _mm256_set1_p##S(seen[i + 2]),     \
                                                    _CMP_EQ_OQ));                         \
            f3 = _mm256_or_p##S(f3, _mm256_cmp_p##S(a, _mm256_set1_p##S(seen[i + 3]),     \
                                                    _CMP_EQ_OQ));                         \
        }                                                                                 \
        for (; i < n; i++)                                                                \
            f0 = _mm256_or_p##S(f0, _mm256_cmp_p##S(a, _mm256_set1_p##S(seen[i]),         \
                                                    _CMP_EQ_OQ));                         \
        left = in & ~(unsigned) _mm256_movemask_p##S(                                     \
            _mm256_or_p##S(_mm256_or_p##S(f0, f1), _mm256_or_p##S(f2, f3)));              \
    } while (0)
#define FR_UNSEEN_AVX2_F64() FR_UNSEEN_AVX2(__m256d, d, 4)
FR_DISTINCT_ABOVE_VECTOR(FR_TARGET_AVX2, double, __m256d, 4, _mm256_storeu_pd, FR_NO_STATE,
                         FR_UNSEEN_AVX2_F64, FR_NO_JOIN, fr_distinct_above_f64_avx2)

/* float32 rows: the seen values in FR_TABLE_*'s table, looked up eight at a time by a
   gather */
#define FR_TABLE_UNSEEN_AVX2()                                                            \
    do {                                                                                  \
        __m256i tail = m - j >= 8 ? _mm256_set1_epi32(-1) : fr_tail_mask_s(m - j), slot;  \
        __m256 in, found;                                                                 \
        a = _mm256_maskload_ps(x + j, tail);                                              \
        in = _mm256_and_ps(_mm256_castsi256_ps(tail),                                     \
                           _mm256_cmp_ps(a, _mm256_set1_ps(v), _CMP_GT_OQ));              \
        slot = _mm256_castps_si256(_mm256_add_ps(a, _mm256_setzero_ps())); /* -0 as +0 */   \
        slot = _mm256_mullo_epi32(slot, _mm256_set1_epi32(FR_SLOT_MULTIPLIER));             \
        slot = _mm256_srli_epi32(slot, 26);                                               \
        found = _mm256_cmp_ps(a, _mm256_i32gather_ps(table, slot, 4), _CMP_EQ_OQ);        \
        for (i = 0; i < n_extra; i++)                                                     \
            found = _mm256_or_ps(found, _mm256_cmp_ps(a, _mm256_set1_ps(extra[i]),        \
                                                      _CMP_EQ_OQ));                       \
        left = (unsigned) _mm256_movemask_ps(_mm256_andnot_ps(found, in));                \
    } while (0)
FR_DISTINCT_ABOVE_VECTOR(FR_TARGET_AVX2, float, __m256, 8, _mm256_storeu_ps, FR_TABLE_STATE,
                         FR_TABLE_UNSEEN_AVX2, FR_TABLE_JOIN, fr_distinct_above_f32_avx2)

#endif

#endif
