/* Counting passes with AVX-512 F: level counts (FR_LEVELS_VECTOR, for 1, 2 and 4 levels
   a pass), where each comparison gives a mask that adds one to the lanes it selects (one
   instruction, where the vectorised C loop takes two); the gather of a gap's values,
   packed by compress; the distinct values above a level, while few (looked up in a table
   by permutes or a gather); the gather of a row's relevant beliefs by truth masks. */
#ifndef FR_TIE_COUNTING_AVX512_INL_H
#define FR_TIE_COUNTING_AVX512_INL_H

#include <math.h>

#include "avx2-inl.h"

#ifdef FR_X86
/* a comparison's mask within k, adding one to the lanes of acc it selects */
#define FR_COUNT_AVX512_S(acc, k, a, w, PRED)                                             \
    _mm512_mask_add_epi32(acc, _mm512_mask_cmp_ps_mask(k, a, w, PRED), acc,               \
                          _mm512_set1_epi32(1))
#define FR_COUNT_AVX512_D(acc, k, a, w, PRED)                                             \
    _mm512_mask_add_epi64(acc, _mm512_mask_cmp_pd_mask(k, a, w, PRED), acc,               \
                          _mm512_set1_epi64(1))
#define FR_TAIL_AVX512_S(r) ((__mmask16) ((1u << (r)) - 1))
#define FR_TAIL_AVX512_D(r) ((__mmask8) ((1u << (r)) - 1))
#define FR_LEVELS_AVX512_F32(NL, WITH_EQ, NAME)                                           \
    FR_LEVELS_VECTOR(FR_TARGET_AVX512, float, __m512, __m512i, __mmask16, 16,             \
                     _mm512_loadu_ps, _mm512_maskz_loadu_ps, FR_TAIL_AVX512_S,            \
                     (__mmask16) 0xFFFF, _mm512_set1_ps, FR_COUNT_AVX512_S,               \
                     _mm512_setzero_si512(), _mm512_reduce_add_epi32, NL, WITH_EQ, NAME)
#define FR_LEVELS_AVX512_F64(NL, WITH_EQ, NAME)                                           \
    FR_LEVELS_VECTOR(FR_TARGET_AVX512, double, __m512d, __m512i, __mmask8, 8,             \
                     _mm512_loadu_pd, _mm512_maskz_loadu_pd, FR_TAIL_AVX512_D,            \
                     (__mmask8) 0xFF, _mm512_set1_pd, FR_COUNT_AVX512_D,                  \
                     _mm512_setzero_si512(), _mm512_reduce_add_epi64, NL, WITH_EQ, NAME)
FR_LEVELS_AVX512_F32(1, 1, fr_levels1_f32_avx512)
FR_LEVELS_AVX512_F32(2, 1, fr_levels2_f32_avx512)
FR_LEVELS_AVX512_F32(4, 1, fr_levels4_f32_avx512)
FR_LEVELS_AVX512_F64(1, 1, fr_levels1_f64_avx512)
FR_LEVELS_AVX512_F64(2, 1, fr_levels2_f64_avx512)
FR_LEVELS_AVX512_F64(4, 1, fr_levels4_f64_avx512)
/* the values at or above each level: one comparison a level, eight levels a pass */
FR_LEVELS_AVX512_F32(1, 0, fr_at_or_above1_f32_avx512)
FR_LEVELS_AVX512_F32(2, 0, fr_at_or_above2_f32_avx512)
FR_LEVELS_AVX512_F32(4, 0, fr_at_or_above4_f32_avx512)
FR_LEVELS_AVX512_F32(8, 0, fr_at_or_above8_f32_avx512)
FR_LEVELS_AVX512_F64(1, 0, fr_at_or_above1_f64_avx512)
FR_LEVELS_AVX512_F64(2, 0, fr_at_or_above2_f64_avx512)
FR_LEVELS_AVX512_F64(4, 0, fr_at_or_above4_f64_avx512)
FR_LEVELS_AVX512_F64(8, 0, fr_at_or_above8_f64_avx512)

/* As FR_COUNT_EQUAL, for contiguous rows: each comparison's mask counted by popcount */
#define FR_COUNT_EQUAL_AVX512(T, VT, MASK, W, SET1, LOADZ, CMP, NAME)                     \
    static FR_TARGET_AVX512 int64_t NAME(const T* x, ptrdiff_t m, T v) {                  \
        const VT vv = SET1(v);                                                            \
        int64_t c = 0;                                                                    \
        ptrdiff_t j;                                                                      \
        for (j = 0; j < m; j += W) {                                                      \
            MASK in = m - j >= W ? (MASK) ~0u : (MASK) ((1u << (m - j)) - 1);             \
            c += __builtin_popcount(CMP(in, LOADZ(in, x + j), vv, _CMP_EQ_OQ));           \
        }                                                                                 \
        return c;                                                                         \
    }
FR_COUNT_EQUAL_AVX512(float, __m512, __mmask16, 16, _mm512_set1_ps, _mm512_maskz_loadu_ps,
                      _mm512_mask_cmp_ps_mask, fr_count_equal_f32_avx512)
FR_COUNT_EQUAL_AVX512(double, __m512d, __mmask8, 8, _mm512_set1_pd, _mm512_maskz_loadu_pd,
                      _mm512_mask_cmp_pd_mask, fr_count_equal_f64_avx512)

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

/* the gather of a float32 row's relevant beliefs (FR_GATHER_VECTOR), 64 truth values
   a vector */
static FR_TARGET_AVX512 inline uint64_t fr_nonzero_bytes_avx512(__m512i t) {
    return _mm512_test_epi8_mask(t, t);
}
static FR_TARGET_AVX512 inline uint64_t fr_fold_avx512(__m512i v) {
    return fr_fold_avx2(_mm256_or_si256(_mm512_castsi512_si256(v),
                                        _mm512_extracti64x4_epi64(v, 1)));
}
FR_GATHER_VECTOR(FR_TARGET_AVX512, float, __m512i, 64, _mm512_setzero_si512(),
                 _mm512_loadu_si512, fr_nonzero_bytes_avx512, _mm512_or_si512,
                 fr_fold_avx512, 1, fr_gather_f32_avx512)
/* fr_relevant_labels (tie_counting.h), 64 truth values a vector: a vector of at most two
   relevant labels writes both places (k advanced by the ones it holds), with no branch on
   whether there are any (a branch a vector mispredicts on one relevant label in a
   hundred); one with more packs each sixteen lanes' labels (compress) and stores them whole
   (labels holds m + 16 values). Whether a vector holds more than two is the one branch,
   taken rarely by a sparse truth row and mostly by a dense one. */
static FR_TARGET_AVX512 ptrdiff_t fr_labels_avx512(const uint8_t* y, ptrdiff_t m,
                                                   int32_t* labels, unsigned* seen) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                           15);
    __m512i all = _mm512_setzero_si512();
    ptrdiff_t j, k = 0;
    int i;
    for (j = 0; j < m; j += 64) {
        const __mmask64 in = m - j >= 64 ? ~(__mmask64) 0 : ((__mmask64) 1 << (m - j)) - 1;
        const __m512i t = _mm512_maskz_loadu_epi8(in, y + j);
        uint64_t rel = _mm512_test_epi8_mask(t, t);
        all = _mm512_or_si512(all, t);
        if (__builtin_popcountll(rel) <= 2) { /* (sparse truth: taken nearly always) */
            labels[k] = (int32_t) (j + __builtin_ctzll(rel | (uint64_t) 1 << 63));
            k += rel != 0;
            rel &= rel - 1;
            labels[k] = (int32_t) (j + __builtin_ctzll(rel | (uint64_t) 1 << 63));
            k += rel != 0;
        } else {
            for (i = 0; i < 4; i++) {
                const __mmask16 r = (__mmask16) (rel >> 16 * i);
                _mm512_storeu_si512(
                        labels + k,
                        _mm512_maskz_compress_epi32(
                                r, _mm512_add_epi32(lane, _mm512_set1_epi32((int) (j + 16 * i)))));
                k += __builtin_popcount(r);
            }
        }
    }
    *seen = (unsigned) fr_or_bytes(fr_fold_avx512(all));
    return k;
}

/* As FR_WHERE_EQUAL, for contiguous rows: each vector's matching labels packed to its low
   lanes (compress) and stored under a mask, with no branch on whether there are any. */
static FR_TARGET_AVX512 ptrdiff_t fr_where_equal_f32_avx512(const float* x, ptrdiff_t m,
                                                            float v, int32_t* out) {
    const __m512 vv = _mm512_set1_ps(v);
    __m512i label = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    ptrdiff_t j, k = 0;
    for (j = 0; j < m; j += 16, label = _mm512_add_epi32(label, _mm512_set1_epi32(16))) {
        __mmask16 in = m - j >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (m - j)) - 1);
        int n;
        in = _mm512_mask_cmp_ps_mask(in, _mm512_maskz_loadu_ps(in, x + j), vv, _CMP_EQ_OQ);
        n = __builtin_popcount(in); /* no branch on it: about half the vectors hold one */
        _mm512_mask_storeu_epi32(out + k, (__mmask16) ((1u << n) - 1),
                                 _mm512_maskz_compress_epi32(in, label));
        k += n;
    }
    return k;
}
static FR_TARGET_AVX512 ptrdiff_t fr_where_equal_f64_avx512(const double* x, ptrdiff_t m,
                                                            double v, int32_t* out) {
    const __m512d vv = _mm512_set1_pd(v);
    __m256i label = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    ptrdiff_t j, k = 0;
    for (j = 0; j < m; j += 8, label = _mm256_add_epi32(label, _mm256_set1_epi32(8))) {
        __mmask8 in = m - j >= 8 ? (__mmask8) 0xFF : (__mmask8) ((1u << (m - j)) - 1);
        int n;
        in = _mm512_mask_cmp_pd_mask(in, _mm512_maskz_loadu_pd(in, x + j), vv, _CMP_EQ_OQ);
        n = __builtin_popcount(in);
        _mm256_mask_storeu_epi32(out + k, (__mmask8) ((1u << n) - 1),
                                 _mm256_maskz_compress_epi32(in, label));
        k += n;
    }
    return k;
}

/* FR_GAP_TOP_VECTOR's pass with AVX-512: masks, a lane's largest value and its count
   moved and added under them */
#define FR_GAP_PASS_AVX512(VT, W, MASK, LOADZ, SET1, CMP, MOV, REDUCE_MAX)                \
    do {                                                                                  \
        const __m512i one = _mm512_set1_epi32(1);                                         \
        const VT vlo = SET1(lo), ceiling = SET1(hi);                                      \
        VT best = SET1(-INFINITY);                                                        \
        __m512i count = _mm512_setzero_si512();                                           \
        ptrdiff_t j;                                                                      \
        for (j = 0; j < m; j += W) {                                                      \
            MASK in = m - j >= W ? (MASK) ~0u : (MASK) ((1u << (m - j)) - 1), gt, eq;     \
            VT a = LOADZ(in, x + j);                                                      \
            in = CMP(in, a, vlo, _CMP_GT_OQ);                                             \
            if (bounded)                                                                  \
                in = CMP(in, a, ceiling, _CMP_LT_OQ);                                     \
            gt = CMP(in, a, best, _CMP_GT_OQ);                                            \
            eq = CMP(in, a, best, _CMP_EQ_OQ);                                            \
            best = MOV(best, gt, a);                                                      \
            count = _mm512_mask_mov_epi32(count, gt, one);                                \
            count = _mm512_mask_add_epi32(count, eq, count, one);                         \
        }                                                                                 \
        top = REDUCE_MAX(best);                                                           \
        c = _mm512_mask_reduce_add_epi32(                                                 \
            (__mmask16) CMP((MASK) ~0u, best, SET1(top), _CMP_EQ_OQ), count);             \
    } while (0)
#define FR_GAP_PASS_AVX512_F32()                                                          \
    FR_GAP_PASS_AVX512(__m512, 16, __mmask16, _mm512_maskz_loadu_ps, _mm512_set1_ps,      \
                       _mm512_mask_cmp_ps_mask, _mm512_mask_mov_ps, _mm512_reduce_max_ps)
#define FR_GAP_PASS_AVX512_F64()                                                          \
    FR_GAP_PASS_AVX512(__m512d, 8, __mmask8, _mm512_maskz_loadu_pd, _mm512_set1_pd,       \
                       _mm512_mask_cmp_pd_mask, _mm512_mask_mov_pd, _mm512_reduce_max_pd)
FR_GAP_TOP_VECTOR(FR_TARGET_AVX512, float, FR_GAP_PASS_AVX512_F32, fr_gap_top_f32_avx512)
FR_GAP_TOP_VECTOR(FR_TARGET_AVX512, double, FR_GAP_PASS_AVX512_F64, fr_gap_top_f64_avx512)

/* FR_DISTINCT_ABOVE_VECTOR's lookups with AVX-512 for float64: eight values looked up by
   a gather of the table (slots of the halves' exclusive or), the lanes left unseen narrowed
   by one masked comparison after another */
#define FR_UNSEEN_AVX512_F64()                                                            \
    do {                                                                                  \
        __mmask8 in = m - j >= 8 ? (__mmask8) ~0u : (__mmask8) ((1u << (m - j)) - 1);     \
        __m512i bits;                                                                     \
        __m256i slot;                                                                     \
        a = _mm512_maskz_loadu_pd(in, x + j);                                             \
        in = _mm512_mask_cmp_pd_mask(in, a, _mm512_set1_pd(v), _CMP_GT_OQ);               \
        bits = _mm512_castpd_si512(a);                                                    \
        slot = _mm512_cvtepi64_epi32(_mm512_xor_si512(bits, _mm512_srli_epi64(bits, 32))); \
        slot = _mm256_srli_epi32(                                                         \
            _mm256_mullo_epi32(slot, _mm256_set1_epi32(FR_SLOT_MULTIPLIER)), 26);         \
        left = _mm512_mask_cmp_pd_mask(in, a, _mm512_i32gather_pd(slot, table, 8),        \
                                       _CMP_NEQ_UQ);                                      \
        for (i = 0; i < n_extra; i++)                                                     \
            left = _mm512_mask_cmp_pd_mask(left, a, _mm512_set1_pd(extra[i]), _CMP_NEQ_UQ); \
    } while (0)
FR_DISTINCT_ABOVE_VECTOR(FR_TARGET_AVX512, double, __m512d, 8, _mm512_storeu_pd, fr_slot_f64,
                         FR_UNSEEN_AVX512_F64, fr_distinct_above_f64_avx512)

/* The distinct values above v of a float32 row, as FR_DISTINCT_ABOVE_VECTOR finds them (the
   same values; in the table's order, not the row's), looked up in a table of 64 slots held
   in four registers and kept from row to row (memo, few_distinct.h): sixteen values looked
   up by two two-table permutes and a blend, each lane found marking its slot (a bit of two
   32-bit lane words per slot half), the lanes not found compared with the extras (values
   whose slot was taken), what is left inserted: its slot's bit set among the taken ones and
   its lane written by a masked move in each register, without a branch. A row's slots and
   extras found say which of the table's values it holds. With counts (counts[0:3]), the
   values above v, equal to it and NaN are counted in the same pass (the level counts of v),
   valid when it returns n >= 0. Returns -1 past FR_FEW_DISTINCT values (the row's or, found
   early, its new ones), -2 when the extras run out (the caller empties the table and looks
   again). Inserting a value took about 30 cycles; a table emptied for every row inserted
   the 21 values of a 21-level row, most of its pass. */
static FR_TARGET_AVX512 ptrdiff_t fr_distinct_above_f32_avx512_pass(
        fr_few_memo_f32* memo, const float* x, ptrdiff_t m, float v, float* seen,
        int64_t* counts) {
    const __m512 vv = _mm512_set1_ps(v);
    const __m512i one = _mm512_set1_epi32(1), low = _mm512_set1_epi32(31),
                  half = _mm512_set1_epi32(32);
    __m512 t[4], a, b, look;
    __m512i slot, bit, found_lo = _mm512_setzero_si512(), found_hi = _mm512_setzero_si512();
    float lane[16];
    uint64_t taken = memo->taken, present = 0;
    uint32_t extra_present = 0;
    int64_t gt = 0, eq = 0, lt = 0;
    ptrdiff_t j, inserted = 0;
    int n_extra = memo->n_extra, i;
    unsigned s;
    for (i = 0; i < 4; i++)
        t[i] = _mm512_loadu_ps(memo->value + 16 * i);
    for (j = 0; j < m; j += 16) {
        __mmask16 left = m - j >= 16 ? (__mmask16) ~0u : (__mmask16) ((1u << (m - j)) - 1);
        __mmask16 hi, hit;
        a = _mm512_maskz_loadu_ps(left, x + j);
        if (counts) {
            eq += __builtin_popcount(_mm512_mask_cmp_ps_mask(left, a, vv, _CMP_EQ_OQ));
            lt += __builtin_popcount(_mm512_mask_cmp_ps_mask(left, a, vv, _CMP_LT_OQ));
        }
        left = _mm512_mask_cmp_ps_mask(left, a, vv, _CMP_GT_OQ);
        if (counts)
            gt += __builtin_popcount(left);
        slot = _mm512_set1_epi32(FR_SLOT_MULTIPLIER);
        slot = _mm512_srli_epi32(_mm512_mullo_epi32(_mm512_castps_si512(a), slot), 26);
        hi = _mm512_test_epi32_mask(slot, half);
        look = _mm512_mask_blend_ps(hi, _mm512_permutex2var_ps(t[0], slot, t[1]),
                                    _mm512_permutex2var_ps(t[2], slot, t[3]));
        hit = _mm512_mask_cmp_ps_mask(left, a, look, _CMP_EQ_OQ); /* NaN: an empty slot */
        bit = _mm512_sllv_epi32(one, _mm512_and_si512(slot, low));
        found_lo = _mm512_mask_or_epi32(found_lo, hit & (__mmask16) ~hi, found_lo, bit);
        found_hi = _mm512_mask_or_epi32(found_hi, hit & hi, found_hi, bit);
        left &= (__mmask16) ~hit;
        for (i = 0; i < n_extra && left; i++) {
            const __mmask16 e =
                _mm512_mask_cmp_ps_mask(left, a, _mm512_set1_ps(memo->extra[i]), _CMP_EQ_OQ);
            extra_present |= (uint32_t) (e != 0) << i;
            left &= (__mmask16) ~e;
        }
        if (!left)
            continue;
        _mm512_storeu_ps(lane, a);
        do {
            const float w = lane[__builtin_ctz(left)];
            b = _mm512_set1_ps(w);
            left = _mm512_mask_cmp_ps_mask(left, a, b, _CMP_NEQ_UQ);
            if (inserted++ == FR_FEW_DISTINCT || n_extra == FR_FEW_DISTINCT) {
                memo->taken = taken;
                memo->n_extra = n_extra;
                return inserted > FR_FEW_DISTINCT ? -1 : -2;
            }
            s = fr_slot_f32(w);
            if (taken >> s & 1) {
                memo->extra[n_extra] = w;
                extra_present |= (uint32_t) 1 << n_extra++;
                continue;
            }
            taken |= (uint64_t) 1 << s;
            present |= (uint64_t) 1 << s;
            memo->value[s] = w;
            for (i = 0; i < 4; i++) /* lane s % 16 of t[s / 16] */
                t[i] = _mm512_mask_mov_ps(t[i], (__mmask16) ((uint64_t) 1 << s >> 16 * i), b);
        } while (left);
    }
    memo->taken = taken;
    memo->n_extra = n_extra;
    present |= (uint64_t) (uint32_t) _mm512_reduce_or_epi32(found_lo) |
               (uint64_t) (uint32_t) _mm512_reduce_or_epi32(found_hi) << 32;
    return fr_few_memo_found(memo, present, extra_present, seen, counts, gt, eq, lt, m);
}
/* As fr_distinct_keys (tie_counting.h), for n <= 16 keys: each key compared with all in
   two vectors (fr_distinct_from_masks), no branch on the keys' order. */
static FR_TARGET_AVX512 ptrdiff_t fr_distinct_keys_avx512(const uint64_t* keys, ptrdiff_t n,
                                                          uint64_t* out, int64_t* count) {
    const __mmask8 in0 = (__mmask8) (n >= 8 ? 0xFF : (1u << n) - 1);
    const __mmask8 in1 = (__mmask8) (n >= 16 ? 0xFF : n > 8 ? (1u << (n - 8)) - 1 : 0);
    const __m512i k0 = _mm512_maskz_loadu_epi64(in0, keys);
    const __m512i k1 = _mm512_maskz_loadu_epi64(in1, keys + 8);
    uint16_t below[16], same[16];
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        const __m512i b = _mm512_set1_epi64((long long) keys[i]);
        below[i] = (uint16_t) (_mm512_mask_cmplt_epu64_mask(in0, k0, b) |
                               (unsigned) _mm512_mask_cmplt_epu64_mask(in1, k1, b) << 8);
        same[i] = (uint16_t) (_mm512_mask_cmpeq_epu64_mask(in0, k0, b) |
                              (unsigned) _mm512_mask_cmpeq_epu64_mask(in1, k1, b) << 8);
    }
    return fr_distinct_from_masks(keys, n, below, same, out, count);
}
#endif

#endif
