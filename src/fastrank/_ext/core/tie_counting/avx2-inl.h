/* Counting passes with AVX2: level counts (FR_LEVELS_VECTOR, for 1, 2 and 4 levels a
   pass), each comparison giving lanes of all ones (-1), subtracted from integer counters;
   the distinct values above a level, while few (looked up in a table by a gather); the
   walk down a gap's values; the gather of a row's relevant beliefs by truth masks. */
#ifndef FR_TIE_COUNTING_AVX2_INL_H
#define FR_TIE_COUNTING_AVX2_INL_H

#include <math.h>

#include "common-inl.h"
#include "generic-inl.h"

#ifdef FR_X86
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
#define FR_LEVELS_AVX2(T, VT, S, UPPER, W, NL, WITH_EQ, NAME)                             \
    FR_LEVELS_VECTOR(FR_TARGET_AVX2, T, VT, __m256i, __m256i, W, _mm256_loadu_p##S,        \
                     FR_MASKLOAD_AVX2_##UPPER, fr_tail_mask_##S, _mm256_set1_epi32(-1),   \
                     _mm256_set1_p##S, FR_COUNT_AVX2_##UPPER, _mm256_setzero_si256(),      \
                     fr_lane_sum_##S, NL, WITH_EQ, NAME)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 1, 1, fr_levels1_f32_avx2)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 2, 1, fr_levels2_f32_avx2)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 4, 1, fr_levels4_f32_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 1, 1, fr_levels1_f64_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 2, 1, fr_levels2_f64_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 4, 1, fr_levels4_f64_avx2)
/* the values at or above each level: one comparison a level */
FR_LEVELS_AVX2(float, __m256, s, S, 8, 1, 0, fr_at_or_above1_f32_avx2)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 2, 0, fr_at_or_above2_f32_avx2)
FR_LEVELS_AVX2(float, __m256, s, S, 8, 4, 0, fr_at_or_above4_f32_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 1, 0, fr_at_or_above1_f64_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 2, 0, fr_at_or_above2_f64_avx2)
FR_LEVELS_AVX2(double, __m256d, d, D, 4, 4, 0, fr_at_or_above4_f64_avx2)

/* As FR_COUNT_EQUAL, for contiguous rows: each comparison's lanes counted by popcount of
   their sign bits (the tail's lanes beyond the row masked off: a zero lane equals v = 0) */
#define FR_COUNT_EQUAL_AVX2(T, VT, S, UPPER, W, NAME)                                     \
    static FR_TARGET_AVX2 int64_t NAME(const T* x, ptrdiff_t m, T v) {                    \
        const VT vv = _mm256_set1_p##S(v);                                                \
        int64_t c = 0;                                                                    \
        ptrdiff_t j;                                                                      \
        for (j = 0; j + W <= m; j += W)                                                   \
            c += __builtin_popcount(_mm256_movemask_p##S(                                 \
                _mm256_cmp_p##S(_mm256_loadu_p##S(x + j), vv, _CMP_EQ_OQ)));              \
        if (j < m)                                                                        \
            c += __builtin_popcount(                                                      \
                _mm256_movemask_p##S(_mm256_cmp_p##S(                                     \
                    FR_MASKLOAD_AVX2_##UPPER(fr_tail_mask_##S(m - j), x + j), vv,         \
                    _CMP_EQ_OQ))                                                          \
                & ((1 << (m - j)) - 1));                                                  \
        return c;                                                                         \
    }
FR_COUNT_EQUAL_AVX2(float, __m256, s, S, 8, fr_count_equal_f32_avx2)
FR_COUNT_EQUAL_AVX2(double, __m256d, d, D, 4, fr_count_equal_f64_avx2)

/* As FR_WHERE_EQUAL, for contiguous rows, with no branch on whether a vector holds one:
   each 4 lanes' matches as a 4-bit mask, whose labels are its set bits' offsets (a table of
   16) added to the label of its first lane and stored whole, the count advancing by the
   mask's popcount (the stores of a full vector stay below j + 8 <= m); the last m % W
   values by the portable loop. */
static const int32_t fr_set_bits4[16][4] = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
#define FR_WHERE_EQUAL_PUT4(bits, first)                                                  \
    _mm_storeu_si128((__m128i*) (out + k),                                                \
                     _mm_add_epi32(_mm_set1_epi32((int32_t) (first)),                     \
                                   _mm_loadu_si128((const __m128i*) fr_set_bits4[bits]))); \
    k += __builtin_popcount(bits);
#define FR_WHERE_EQUAL_AVX2(T, VT, S, W, NAME)                                            \
    static FR_TARGET_AVX2 ptrdiff_t NAME(const T* x, ptrdiff_t m, T v, int32_t* out) {    \
        const VT vv = _mm256_set1_p##S(v);                                                \
        ptrdiff_t j, k = 0;                                                               \
        for (j = 0; j + W <= m; j += W) {                                                 \
            unsigned bits = (unsigned) _mm256_movemask_p##S(                              \
                _mm256_cmp_p##S(_mm256_loadu_p##S(x + j), vv, _CMP_EQ_OQ));               \
            FR_WHERE_EQUAL_PUT4(bits & 15, j)                                             \
            if (W == 8) {                                                                 \
                FR_WHERE_EQUAL_PUT4(bits >> 4, j + 4)                                     \
            }                                                                             \
        }                                                                                 \
        for (; j < m; j++) {                                                              \
            out[k] = (int32_t) j;                                                         \
            k += x[j] == v;                                                               \
        }                                                                                 \
        return k;                                                                         \
    }
FR_WHERE_EQUAL_AVX2(float, __m256, s, 8, fr_where_equal_f32_avx2)
FR_WHERE_EQUAL_AVX2(double, __m256d, d, 4, fr_where_equal_f64_avx2)

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
            VT a = fr_load_first_p##S(x + j, m - j), gt, eq;                              \
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

/* FR_DISTINCT_ABOVE_VECTOR's lookups with AVX2: the lanes' slots computed side by side,
   the table read by a gather; comparisons give lanes of all ones, whose sign bits are the
   lanes' bits */
#define FR_UNSEEN_AVX2(VT, S, W, SLOTS, GATHER)                                           \
    do {                                                                                  \
        __m256i tail = m - j >= W ? _mm256_set1_epi32(-1) : fr_tail_mask_##S(m - j);      \
        VT in, found;                                                                     \
        a = fr_load_first_p##S(x + j, m - j);                                             \
        in = _mm256_and_p##S(_mm256_castsi256_p##S(tail),                                 \
                             _mm256_cmp_p##S(a, _mm256_set1_p##S(v), _CMP_GT_OQ));        \
        found = _mm256_cmp_p##S(a, GATHER(SLOTS(_mm256_castp##S##_si256(a))), _CMP_EQ_OQ); \
        for (i = 0; i < n_extra; i++)                                                     \
            found = _mm256_or_p##S(found, _mm256_cmp_p##S(a, _mm256_set1_p##S(extra[i]),  \
                                                          _CMP_EQ_OQ));                   \
        left = (unsigned) _mm256_movemask_p##S(_mm256_andnot_p##S(found, in));            \
    } while (0)
/* the slots of four float64 values, from the exclusive or of each one's halves
   (fr_slot_f64) */
#define FR_SLOTS_AVX2_F64(bits)                                                           \
    _mm_srli_epi32(_mm_mullo_epi32(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(    \
                       _mm256_xor_si256(bits, _mm256_srli_epi64(bits, 32)),               \
                       _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6))),                       \
                   _mm_set1_epi32(FR_SLOT_MULTIPLIER)), 26)
#define FR_GATHER_AVX2_F64(slots) _mm256_i32gather_pd(table, slots, 8)
#define FR_UNSEEN_AVX2_F64()                                                              \
    FR_UNSEEN_AVX2(__m256d, d, 4, FR_SLOTS_AVX2_F64, FR_GATHER_AVX2_F64)
/* the gather of a float32 row's relevant beliefs (FR_GATHER_VECTOR), 32 truth values
   a vector */
static FR_TARGET_AVX2 inline uint64_t fr_nonzero_bytes_avx2(__m256i t) {
    return (uint32_t) ~_mm256_movemask_epi8(_mm256_cmpeq_epi8(t, _mm256_setzero_si256()));
}
static FR_TARGET_AVX2 inline uint64_t fr_fold_avx2(__m256i v) {
    __m128i h = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return (uint64_t) _mm_cvtsi128_si64(h) | (uint64_t) _mm_extract_epi64(h, 1);
}
#define FR_LOAD_AVX2_BYTES(p) _mm256_loadu_si256((const __m256i*) (p))
FR_GATHER_VECTOR(FR_TARGET_AVX2, float, __m256i, 32, _mm256_setzero_si256(),
                 FR_LOAD_AVX2_BYTES, fr_nonzero_bytes_avx2, _mm256_or_si256,
                 fr_fold_avx2, 1, fr_gather_f32_avx2)
/* its labels alone, of a row in cache (fr_relevant_labels) */
FR_GATHER_VECTOR(FR_TARGET_AVX2, float, __m256i, 32, _mm256_setzero_si256(),
                 FR_LOAD_AVX2_BYTES, fr_nonzero_bytes_avx2, _mm256_or_si256,
                 fr_fold_avx2, 0, fr_labels_avx2)
/* As fr_distinct_above_f32_avx512_pass (avx512-inl.h), with AVX2: the table kept in memo from
   row to row, looked up by a gather (eight lanes), the slots found marked lane by lane in
   two vectors of bits, a value not found put in (fr_few_memo_insert), the values above v,
   equal to it and below it counted in the same pass when counts is not NULL. A table
   emptied for every row inserted its values one by one on every row (the first vectors'
   lanes, a mispredicted branch each). */
static FR_TARGET_AVX2 ptrdiff_t fr_distinct_above_f32_avx2_pass(fr_few_memo_f32* memo,
                                                                const float* x, ptrdiff_t m,
                                                                float v, float* seen,
                                                                int64_t* counts) {
    const __m256 vv = _mm256_set1_ps(v);
    const __m256i one = _mm256_set1_epi32(1), low = _mm256_set1_epi32(31),
                  half = _mm256_set1_epi32(32), mult = _mm256_set1_epi32(FR_SLOT_MULTIPLIER);
    __m256i slot, bit, hi, found_lo = _mm256_setzero_si256(), found_hi = found_lo;
    __m256 a, above, hit;
    float lane[8];
    uint32_t fl[8], fh[8];
    uint64_t present = 0;
    uint32_t extra_present = 0;
    int64_t gt = 0, eq = 0, lt = 0;
    ptrdiff_t j, inserted = 0;
    int i, number;
    unsigned in, left, e;
    for (j = 0; j < m; j += 8) {
        const __m256i tail = m - j >= 8 ? _mm256_set1_epi32(-1) : fr_tail_mask_s(m - j);
        in = m - j >= 8 ? 0xFFu : (1u << (m - j)) - 1;
        a = fr_load_first_ps(x + j, m - j);
        above = _mm256_and_ps(_mm256_castsi256_ps(tail), _mm256_cmp_ps(a, vv, _CMP_GT_OQ));
        left = (unsigned) _mm256_movemask_ps(above);
        if (counts) {
            gt += __builtin_popcount(left);
            eq += __builtin_popcount((unsigned) _mm256_movemask_ps(
                _mm256_cmp_ps(a, vv, _CMP_EQ_OQ)) & in);
            lt += __builtin_popcount((unsigned) _mm256_movemask_ps(
                _mm256_cmp_ps(a, vv, _CMP_LT_OQ)) & in);
        }
        slot = _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_castps_si256(a), mult), 26);
        hit = _mm256_and_ps(above, _mm256_cmp_ps(a, _mm256_i32gather_ps(memo->value, slot, 4),
                                                 _CMP_EQ_OQ)); /* NaN: an empty slot */
        bit = _mm256_and_si256(_mm256_castps_si256(hit),
                               _mm256_sllv_epi32(one, _mm256_and_si256(slot, low)));
        hi = _mm256_cmpeq_epi32(_mm256_and_si256(slot, half), half);
        found_lo = _mm256_or_si256(found_lo, _mm256_andnot_si256(hi, bit));
        found_hi = _mm256_or_si256(found_hi, _mm256_and_si256(hi, bit));
        left &= ~(unsigned) _mm256_movemask_ps(hit);
        for (i = 0; i < memo->n_extra && left; i++) {
            e = left & (unsigned) _mm256_movemask_ps(
                _mm256_cmp_ps(a, _mm256_set1_ps(memo->extra[i]), _CMP_EQ_OQ));
            extra_present |= (uint32_t) (e != 0) << i;
            left &= ~e;
        }
        if (!left)
            continue;
        _mm256_storeu_ps(lane, a);
        do {
            const float w = lane[__builtin_ctz(left)];
            left &= (unsigned) _mm256_movemask_ps(
                _mm256_cmp_ps(a, _mm256_set1_ps(w), _CMP_NEQ_UQ));
            number = fr_few_memo_insert(memo, w, &inserted);
            if (number < 0)
                return number;
            if (number < 64)
                present |= (uint64_t) 1 << number;
            else
                extra_present |= (uint32_t) 1 << (number - 64);
        } while (left);
    }
    _mm256_storeu_si256((__m256i*) fl, found_lo);
    _mm256_storeu_si256((__m256i*) fh, found_hi);
    for (i = 0; i < 8; i++)
        present |= (uint64_t) fl[i] | (uint64_t) fh[i] << 32;
    return fr_few_memo_found(memo, present, extra_present, seen, counts, gt, eq, lt, m);
}
FR_DISTINCT_ABOVE_VECTOR(FR_TARGET_AVX2, double, __m256d, 4, _mm256_storeu_pd, fr_slot_f64,
                         FR_UNSEEN_AVX2_F64, fr_distinct_above_f64_avx2)
/* As fr_distinct_keys (tie_counting.h), for n <= 16 keys in four vectors
   (fr_distinct_from_masks): AVX2 compares 64-bit lanes as signed, so the keys' top bits
   are flipped first (the same order). */
static FR_TARGET_AVX2 ptrdiff_t fr_distinct_keys_avx2(const uint64_t* keys, ptrdiff_t n,
                                                      uint64_t* out, int64_t* count) {
    const __m256i flip = _mm256_set1_epi64x((long long) 0x8000000000000000ULL);
    uint64_t padded[16];
    __m256i k[4];
    uint16_t below[16], same[16];
    const unsigned in = (1u << n) - 1;
    ptrdiff_t i;
    int v;
    memcpy(padded, keys, (size_t) n * sizeof(uint64_t));
    memset(padded + n, 0, (size_t) (16 - n) * sizeof(uint64_t));
    for (v = 0; v < 4; v++)
        k[v] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*) (padded + 4 * v)), flip);
    for (i = 0; i < n; i++) {
        const __m256i b = _mm256_xor_si256(_mm256_set1_epi64x((long long) keys[i]), flip);
        unsigned lt = 0, eq = 0;
        for (v = 0; v < 4; v++) {
            lt |= (unsigned) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(b, k[v])))
                  << 4 * v;
            eq |= (unsigned) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(b, k[v])))
                  << 4 * v;
        }
        below[i] = (uint16_t) (lt & in);
        same[i] = (uint16_t) (eq & in);
    }
    return fr_distinct_from_masks(keys, n, below, same, out, count);
}
#endif

#endif
