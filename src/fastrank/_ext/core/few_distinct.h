/* A row's few distinct values, found a vector at a time: the table of 64 slots they are
 * looked up in (what the counting passes' distinct values above a level, tie_counting/,
 * share with the row sort's counting path, _tiesort), and that sort's first pass for
 * float32 rows on AVX-512: each label's distinct value, by number. */
#ifndef FR_FEW_DISTINCT_H
#define FR_FEW_DISTINCT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

/* the most distinct values a row's table takes */
#define FR_FEW_DISTINCT 32

/* A value's slot of the table: the top six bits of its bits times FR_SLOT_MULTIPLIER (a
   float64's: of the exclusive or of its halves). Even: the sign bit drops out of the
   product, so that -0.0 and +0.0, which are equal, share a slot, as x and -x do. */
#define FR_SLOT_MULTIPLIER ((int) 0x3C6EF362u)
static inline unsigned fr_slot_f32(float x) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    return (bits * (uint32_t) FR_SLOT_MULTIPLIER) >> 26;
}
static inline unsigned fr_slot_f64(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    return ((uint32_t) (bits ^ (bits >> 32)) * (uint32_t) FR_SLOT_MULTIPLIER) >> 26;
}

/* A float32 table of few distinct values kept from one row to the next of a call (one per
   thread): rows of one matrix mostly hold the same few values, which a lookup then finds
   instead of inserting (tie_counting/avx512-inl.h). */
typedef struct fr_few_memo_f32 {
    float value[64];              /* by slot (fr_slot_f32); NaN: empty */
    float extra[FR_FEW_DISTINCT]; /* values whose slot another value holds */
    uint64_t taken;               /* the slots holding a value */
    int n_extra;
} fr_few_memo_f32;

/* the empty table */
static inline void fr_few_memo_clear(fr_few_memo_f32* t) {
    int i;
    for (i = 0; i < 64; i++)
        t->value[i] = NAN;
    t->taken = 0;
    t->n_extra = 0;
}

/* The table after a row's lookups returned n (< 0: they failed): emptied when they
   failed, or left more than four values aside, or (where the row is known to hold `held`
   of its values; -1: not known) more than sixteen values the row does not hold, so that
   the next row starts from a table that fits it. Returns n, or -1 for a failure. */
static inline ptrdiff_t fr_few_memo_settle(fr_few_memo_f32* t, ptrdiff_t n, ptrdiff_t held) {
    if (n < 0 || t->n_extra > 4
        || (held >= 0 && __builtin_popcountll(t->taken) + t->n_extra > held + 16)) {
        fr_few_memo_clear(t);
        return n < 0 ? -1 : n;
    }
    return n;
}

/* the numbers a row's index bytes take: the table's 64 slots, then its extras */
#define FR_INDEX_NUMBERS (64 + FR_FEW_DISTINCT)

#ifdef FR_X86
/* numbers, values and counts [0:n] (n <= FR_FEW_DISTINCT) reordered by descending value:
   the values are distinct (no NaN; -0.0 and +0.0 share a number), so each one's place is
   the number of values above it, two comparisons a value. */
static FR_TARGET_AVX512 void fr_order_descending_avx512(int32_t* numbers, float* values,
                                                        int64_t* counts, ptrdiff_t n) {
    const __mmask16 in_low = n >= 16 ? (__mmask16) ~0u : (__mmask16) ((1u << n) - 1);
    const __mmask16 in_high = n >= 32 ? (__mmask16) ~0u
                              : n > 16 ? (__mmask16) ((1u << (n - 16)) - 1) : 0;
    const __m512 low = _mm512_maskz_loadu_ps(in_low, values);
    const __m512 high = _mm512_maskz_loadu_ps(in_high, values + 16);
    int32_t number[FR_FEW_DISTINCT];
    float value[FR_FEW_DISTINCT];
    int64_t count[FR_FEW_DISTINCT];
    ptrdiff_t d;
    for (d = 0; d < n; d++) {
        const __m512 v = _mm512_set1_ps(values[d]);
        const int place = __builtin_popcount(_mm512_mask_cmp_ps_mask(in_low, low, v, _CMP_GT_OQ))
                          + __builtin_popcount(_mm512_mask_cmp_ps_mask(in_high, high, v,
                                                                       _CMP_GT_OQ));
        number[place] = numbers[d];
        value[place] = values[d];
        count[place] = counts[d];
    }
    memcpy(numbers, number, (size_t) n * sizeof(int32_t));
    memcpy(values, value, (size_t) n * sizeof(float));
    memcpy(counts, count, (size_t) n * sizeof(int64_t));
}

/* fr_distinct_index_f32 on AVX-512: -2 when the extras run out (the caller empties the
   table and looks again). */
static FR_TARGET_AVX512 ptrdiff_t fr_distinct_index_f32_pass(
        fr_few_memo_f32* memo, const float* x, ptrdiff_t m, uint8_t* index,
        int32_t* numbers, float* values, int64_t* counts) {
    __m512 t[4], a, b, look;
    __m512i slot, number;
    float lane[16];
    uint64_t taken = memo->taken, left_slots;
    ptrdiff_t j, n = 0, inserted = 0;
    int n_extra = memo->n_extra, i, k, u, n_table = 0, table[FR_INDEX_NUMBERS];
    unsigned s;
    for (i = 0; i < 4; i++)
        t[i] = _mm512_loadu_ps(memo->value + 16 * i);
    for (j = 0; j < m; j += 16) {
        __mmask16 in = m - j >= 16 ? (__mmask16) ~0u : (__mmask16) ((1u << (m - j)) - 1);
        __mmask16 left;
        a = _mm512_maskz_loadu_ps(in, x + j);
        slot = _mm512_set1_epi32(FR_SLOT_MULTIPLIER);
        slot = _mm512_srli_epi32(_mm512_mullo_epi32(_mm512_castps_si512(a), slot), 26);
        look = _mm512_mask_blend_ps(_mm512_test_epi32_mask(slot, _mm512_set1_epi32(32)),
                                    _mm512_permutex2var_ps(t[0], slot, t[1]),
                                    _mm512_permutex2var_ps(t[2], slot, t[3]));
        number = slot;
        left = _mm512_mask_cmp_ps_mask(in, a, look, _CMP_NEQ_UQ); /* NaN: an empty slot */
        for (i = 0; i < n_extra && left; i++) {
            const __mmask16 e = _mm512_mask_cmp_ps_mask(left, a, _mm512_set1_ps(memo->extra[i]),
                                                        _CMP_EQ_OQ);
            number = _mm512_mask_mov_epi32(number, e, _mm512_set1_epi32(64 + i));
            left &= (__mmask16) ~e;
        }
        if (left)
            _mm512_storeu_ps(lane, a);
        while (left) {
            const float w = lane[__builtin_ctz(left)];
            __mmask16 same;
            if (w != w) /* NaN, which no slot holds: every NaN lane is left */
                return -1;
            b = _mm512_set1_ps(w);
            same = _mm512_mask_cmp_ps_mask(left, a, b, _CMP_EQ_OQ);
            if (inserted++ == FR_FEW_DISTINCT || n_extra == FR_FEW_DISTINCT) {
                memo->taken = taken;
                memo->n_extra = n_extra;
                return inserted > FR_FEW_DISTINCT ? -1 : -2;
            }
            left &= (__mmask16) ~same;
            s = fr_slot_f32(w);
            if (taken >> s & 1) {
                number = _mm512_mask_mov_epi32(number, same, _mm512_set1_epi32(64 + n_extra));
                memo->extra[n_extra++] = w;
            } else {
                taken |= (uint64_t) 1 << s;
                memo->value[s] = w;
                for (i = 0; i < 4; i++) /* lane s % 16 of t[s / 16] */
                    t[i] = _mm512_mask_mov_ps(t[i], (__mmask16) ((uint64_t) 1 << s >> 16 * i),
                                              b);
            }
        }
        _mm_mask_storeu_epi8(index + j, in, _mm512_cvtepi32_epi8(number));
    }
    memo->taken = taken;
    memo->n_extra = n_extra;
    /* the table's values the row holds: those whose number its index bytes take, eight
       numbers counted a pass over the bytes */
    for (left_slots = taken; left_slots; left_slots &= left_slots - 1)
        table[n_table++] = __builtin_ctzll(left_slots);
    for (k = 0; k < n_extra; k++)
        table[n_table++] = 64 + k;
    for (u = 0; u < n_table; u += 8) {
        __m512i want[8];
        int64_t c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (i = 0; i < 8; i++) /* past the last number: the last again, not kept */
            want[i] = _mm512_set1_epi8((char) table[u + i < n_table ? u + i : n_table - 1]);
        for (j = 0; j < m; j += 64) {
            const __mmask64 in = m - j >= 64 ? ~(__mmask64) 0 : ((__mmask64) 1 << (m - j)) - 1;
            const __m512i v = _mm512_maskz_loadu_epi8(in, index + j);
            for (i = 0; i < 8; i++)
                c[i] += __builtin_popcountll(_mm512_mask_cmpeq_epi8_mask(in, v, want[i]));
        }
        for (i = 0; i < 8 && u + i < n_table; i++) {
            if (c[i] == 0)
                continue;
            if (n == FR_FEW_DISTINCT)
                return -1;
            numbers[n] = table[u + i];
            values[n] = table[u + i] < 64 ? memo->value[table[u + i]]
                                          : memo->extra[table[u + i] - 64];
            counts[n++] = c[i];
        }
    }
    fr_order_descending_avx512(numbers, values, counts, n);
    return n;
}
/* index[j] <- the number of x[j]'s value in a table of the row's distinct values kept from
   row to row (memo): its slot (below 64), or 64 + i for the i-th
   value whose slot another holds (an extra); numbers[0:n] <- those the row holds by
   descending value, values and counts <- their values and how many labels hold each
   (fr_order_descending_avx512); returns n, or -1 when the row
   holds more than FR_FEW_DISTINCT distinct values or a NaN (the caller sorts it another
   way). The table of 64 slots in four registers: sixteen labels looked up by two two-table
   permutes and a blend (the slot is the number), an extra compared one by one, a new
   value's lanes found by one comparison. The counts are the index bytes equal to each
   number the table holds, 64 a comparison, eight numbers a pass over the bytes. The table
   then settles (fr_few_memo_settle). */
FR_SINGLE_COPY FR_TARGET_AVX512 ptrdiff_t fr_distinct_index_f32_avx512(
        fr_few_memo_f32* memo, const float* x, ptrdiff_t m, uint8_t* index, int32_t* numbers,
        float* values, int64_t* counts) {
    ptrdiff_t n = fr_distinct_index_f32_pass(memo, x, m, index, numbers, values, counts);
    if (n == -2) {
        fr_few_memo_clear(memo);
        n = fr_distinct_index_f32_pass(memo, x, m, index, numbers, values, counts);
    }
    return fr_few_memo_settle(memo, n, n);
}
/* places[rel[0] + .. + rel[l - 1] + r] <- the place of the r-th of labels[0:k] (ascending)
   whose level is l = level_of[its index byte] (rel[l] of them) among the labels of its
   value, in label order: the bytes equal
   to its own before it, counted 64 a comparison from where the level's previous label was
   counted (its first label: from the row's start), so that each level's bytes are read up
   to its last label only. */
FR_SINGLE_COPY FR_TARGET_AVX512 void fr_index_places_avx512(
        const uint8_t* index, const int32_t* labels, ptrdiff_t k, const int32_t* level_of,
        int n, const int64_t* rel, ptrdiff_t* places) {
    ptrdiff_t next[32], from[32], t, j;
    int64_t count[32];
    int l;
    for (l = 0; l < n; l++) {
        next[l] = l == 0 ? 0 : next[l - 1] + rel[l - 1];
        from[l] = 0;
        count[l] = 0;
    }
    for (t = 0; t < k; t++) {
        const ptrdiff_t p = labels[t];
        const __m512i want = _mm512_set1_epi8((char) index[p]);
        int64_t c;
        l = level_of[index[p]];
        c = count[l];
        for (j = from[l]; p - j >= 64; j += 64)
            c += __builtin_popcountll(
                    _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(index + j), want));
        c += __builtin_popcountll(_mm512_mask_cmpeq_epi8_mask(
                ((__mmask64) 1 << (p - j)) - 1, _mm512_maskz_loadu_epi8(
                        ((__mmask64) 1 << (p - j)) - 1, index + j), want));
        places[next[l]++] = c;
        from[l] = p;
        count[l] = c;
    }
}
#endif

/* fr_distinct_index_f32_avx512 on the AVX-512 level; -1 below it */
static inline ptrdiff_t fr_distinct_index_f32(int level, fr_few_memo_f32* memo, const float* x,
                                              ptrdiff_t m, uint8_t* index, int32_t* numbers,
                                              float* values, int64_t* counts) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512)
        return fr_distinct_index_f32_avx512(memo, x, m, index, numbers, values, counts);
#endif
    (void) level, (void) memo, (void) x, (void) m, (void) index, (void) numbers;
    (void) values, (void) counts;
    return -1;
}

/* fr_index_places_avx512 on the AVX-512 level (0); -1 (nothing written) below it, where no
   index is made */
static inline int fr_index_places(int level, const uint8_t* index, const int32_t* labels,
                                  ptrdiff_t k, const int32_t* level_of, int n,
                                  const int64_t* rel, ptrdiff_t* places) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512) {
        fr_index_places_avx512(index, labels, k, level_of, n, rel, places);
        return 0;
    }
#endif
    (void) level, (void) index, (void) labels, (void) k, (void) level_of;
    (void) n, (void) rel, (void) places;
    return -1;
}

#endif
