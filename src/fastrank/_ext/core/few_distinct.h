/* A row's few distinct values, found a vector at a time: the table of 64 slots they are
 * looked up in (what the counting passes' distinct values above a level, tie_counting/,
 * share with the row sort's counting path, _tiesort), and that sort's first pass for
 * float32 rows on AVX2 and AVX-512: each label's distinct value, by number. */
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

/* The end of a pass over a row's values above v (tie_counting/avx2-inl.h, avx512-inl.h):
   seen[0:n] <- the values of the slots in `present`, then of the extras in `extra_present`
   (those the row holds); counts[0:3] <- gt, eq and m - gt - eq - lt (the NaN values) unless
   counts is NULL. Returns n, or -1 past FR_FEW_DISTINCT (nothing written). */
static inline ptrdiff_t fr_few_memo_found(const fr_few_memo_f32* t, uint64_t present,
                                          uint32_t extra_present, float* seen, int64_t* counts,
                                          int64_t gt, int64_t eq, int64_t lt, ptrdiff_t m) {
    ptrdiff_t n = 0;
    if (__builtin_popcountll(present) + __builtin_popcount(extra_present) > FR_FEW_DISTINCT)
        return -1;
    for (; present; present &= present - 1)
        seen[n++] = t->value[__builtin_ctzll(present)];
    for (; extra_present; extra_present &= extra_present - 1)
        seen[n++] = t->extra[__builtin_ctz(extra_present)];
    if (counts) {
        counts[0] = gt;
        counts[1] = eq;
        counts[2] = m - gt - eq - lt;
    }
    return n;
}

/* the numbers a row's index bytes take: the table's 64 slots, then its extras */
#define FR_INDEX_NUMBERS (64 + FR_FEW_DISTINCT)

/* the bytes past a row's index bytes that its buffer holds too, so that the AVX2 byte
   counts read their last vector whole (fr_count_eight_avx2, fr_count_byte_avx2) */
#define FR_INDEX_SLACK 32

/* Puts w, a value of the row that neither a slot nor an extra holds (not NaN), into the
   table: its slot when free, else the extras; *inserted counts the row's values put in.
   Returns its number (the slot, or 64 + its place among the extras), -1 when the row has
   put in more than FR_FEW_DISTINCT values, -2 when the extras are full (the caller empties
   the table and looks again). */
static inline int fr_few_memo_insert(fr_few_memo_f32* t, float w, ptrdiff_t* inserted) {
    unsigned s;
    if ((*inserted)++ == FR_FEW_DISTINCT)
        return -1;
    if (t->n_extra == FR_FEW_DISTINCT)
        return -2;
    s = fr_slot_f32(w);
    if (t->taken >> s & 1) {
        t->extra[t->n_extra] = w;
        return 64 + t->n_extra++;
    }
    t->taken |= (uint64_t) 1 << s;
    t->value[s] = w;
    return (int) s;
}

/* table[0:n] <- the numbers the table holds (its slots taken, then its extras); returns n */
static inline int fr_few_memo_numbers(const fr_few_memo_f32* t, int* table) {
    uint64_t left;
    int n = 0, k;
    for (left = t->taken; left; left &= left - 1)
        table[n++] = __builtin_ctzll(left);
    for (k = 0; k < t->n_extra; k++)
        table[n++] = 64 + k;
    return n;
}

/* numbers, values and counts [n:] <- those of table[0:k] whose count c[] is not 0 (the
   row holds them); returns the new n, or -1 past FR_FEW_DISTINCT */
static inline ptrdiff_t fr_few_memo_held(const fr_few_memo_f32* t, const int* table, int k,
                                         const int64_t* c, ptrdiff_t n, int32_t* numbers,
                                         float* values, int64_t* counts) {
    int i;
    for (i = 0; i < k; i++) {
        if (c[i] == 0)
            continue;
        if (n == FR_FEW_DISTINCT)
            return -1;
        numbers[n] = table[i];
        values[n] = table[i] < 64 ? t->value[table[i]] : t->extra[table[i] - 64];
        counts[n++] = c[i];
    }
    return n;
}

/* A row's numbers, values and counts by place (fr_order_descending_avx512, _avx2) */
typedef struct fr_few_by_place {
    int32_t number[FR_FEW_DISTINCT];
    float value[FR_FEW_DISTINCT];
    int64_t count[FR_FEW_DISTINCT];
} fr_few_by_place;

/* numbers, values and counts <- those of o: arrays of FR_FEW_DISTINCT entries copied
   whole (a fixed size, moved by vector registers where a copy of the n entries o holds
   was a call of memcpy each), the entries past n as indeterminate as o's */
static inline void fr_few_copy_out(const fr_few_by_place* o, int32_t* numbers, float* values,
                                   int64_t* counts) {
    memcpy(numbers, o->number, sizeof o->number);
    memcpy(values, o->value, sizeof o->value);
    memcpy(counts, o->count, sizeof o->count);
}

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
    fr_few_by_place o;
    ptrdiff_t d;
    for (d = 0; d < n; d++) {
        const __m512 v = _mm512_set1_ps(values[d]);
        const int place = __builtin_popcount(_mm512_mask_cmp_ps_mask(in_low, low, v, _CMP_GT_OQ))
                          + __builtin_popcount(_mm512_mask_cmp_ps_mask(in_high, high, v,
                                                                       _CMP_GT_OQ));
        o.number[place] = numbers[d];
        o.value[place] = values[d];
        o.count[place] = counts[d];
    }
    fr_few_copy_out(&o, numbers, values, counts);
}

/* c[0:8] <- the bytes of index[0:m] equal to each of eight[0:8]: 64 bytes a comparison */
static FR_TARGET_AVX512 void fr_count_eight_avx512(const uint8_t* index, ptrdiff_t m,
                                                   const int* eight, int64_t* c) {
    __m512i want[8];
    int64_t n[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    ptrdiff_t j;
    int i;
    for (i = 0; i < 8; i++)
        want[i] = _mm512_set1_epi8((char) eight[i]);
    for (j = 0; j < m; j += 64) {
        const __mmask64 in = m - j >= 64 ? ~(__mmask64) 0 : ((__mmask64) 1 << (m - j)) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(in, index + j);
        for (i = 0; i < 8; i++)
            n[i] += __builtin_popcountll(_mm512_mask_cmpeq_epi8_mask(in, v, want[i]));
    }
    memcpy(c, n, sizeof(n));
}

/* c[0:8] <- the bytes of index[0:m] (each below 128) equal to each of eight[0:8] (a
   number given twice counted at its first place, 0 at the others), with AVX-512 VBMI:
   each vector of 64 bytes turned into one bit a byte (a two-table byte permute: bit i
   for eight[i]), sixteen such vectors added bit by bit (a carry-save tree of
   three-input logic: the five bits of each count), and each count's bits read by one
   test a bit and weight: one permute a vector where fr_count_eight_avx512 compares eight
   times. */
#define FR_CSA_AVX512(high, low, a, b, c)                                                 \
    do {                                                                                  \
        const __m512i a_ = (a), b_ = (b), c_ = (c);                                       \
        high = _mm512_ternarylogic_epi32(a_, b_, c_, 0xE8); /* majority */                \
        low = _mm512_ternarylogic_epi32(a_, b_, c_, 0x96);  /* odd parity */              \
    } while (0)
static FR_TARGET_VBMI void fr_count_eight_vbmi(const uint8_t* index, ptrdiff_t m,
                                               const int* eight, int64_t* c) {
    __m512i low_table = _mm512_setzero_si512(), high_table = _mm512_setzero_si512();
    __m512i x[16], ones, twos, fours, eights, sixteens;
    __m512i twos_a, twos_b, fours_a, fours_b, eights_of[2];
    int64_t n[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    ptrdiff_t j0;
    int i, v;
    for (i = 7; i >= 0; i--) { /* (in registers: bytes stored and loaded whole would wait) */
        const __m512i bit = _mm512_set1_epi8((char) (1u << i));
        if (eight[i] < 64)
            low_table = _mm512_mask_mov_epi8(low_table, (__mmask64) 1 << eight[i], bit);
        else
            high_table = _mm512_mask_mov_epi8(high_table, (__mmask64) 1 << (eight[i] - 64),
                                              bit);
    }
    for (j0 = 0; j0 < m; j0 += 16 * 64) {
        for (v = 0; v < 16; v++) { /* past the row: 0xFF, whose table byte is 0 */
            const ptrdiff_t left = m - j0 - 64 * v;
            const __mmask64 in = left >= 64 ? ~(__mmask64) 0
                                 : left > 0 ? ((__mmask64) 1 << left) - 1 : 0;
            x[v] = _mm512_permutex2var_epi8(
                    low_table,
                    _mm512_mask_loadu_epi8(_mm512_set1_epi8((char) 0xFF), in,
                                           index + j0 + 64 * v),
                    high_table);
        }
        ones = twos = fours = eights = _mm512_setzero_si512();
        for (v = 0; v < 16; v += 8) { /* eight vectors into eights_of[v / 8] and below */
            FR_CSA_AVX512(twos_a, ones, ones, x[v], x[v + 1]);
            FR_CSA_AVX512(twos_b, ones, ones, x[v + 2], x[v + 3]);
            FR_CSA_AVX512(fours_a, twos, twos, twos_a, twos_b);
            FR_CSA_AVX512(twos_a, ones, ones, x[v + 4], x[v + 5]);
            FR_CSA_AVX512(twos_b, ones, ones, x[v + 6], x[v + 7]);
            FR_CSA_AVX512(fours_b, twos, twos, twos_a, twos_b);
            FR_CSA_AVX512(eights_of[v / 8], fours, fours, fours_a, fours_b);
        }
        FR_CSA_AVX512(sixteens, eights, eights, eights_of[0], eights_of[1]);
        for (i = 0; i < 8; i++) {
            const __m512i bit = _mm512_set1_epi8((char) (1u << i));
            n[i] += __builtin_popcountll(_mm512_test_epi8_mask(ones, bit))
                    + 2 * __builtin_popcountll(_mm512_test_epi8_mask(twos, bit))
                    + 4 * __builtin_popcountll(_mm512_test_epi8_mask(fours, bit))
                    + 8 * __builtin_popcountll(_mm512_test_epi8_mask(eights, bit))
                    + 16 * __builtin_popcountll(_mm512_test_epi8_mask(sixteens, bit));
        }
    }
    memcpy(c, n, sizeof(n));
}
#undef FR_CSA_AVX512

/* As fr_count_eight_avx512, 32 bytes a comparison, each number's matches added up in
   bytes (a match is -1, subtracted) and those summed into c every 255 vectors (before a
   byte can wrap); the last vector read whole (index holds FR_INDEX_SLACK bytes more), its
   bytes past m made 0xFF (no number). The sums go straight into c and the last vector is
   counted after the loop: an array of sums on the stack was cleared by `rep stos` at each
   call and the loop tested every vector for the last (0.6-0.7x the time of that form). */
static FR_TARGET_AVX2 void fr_count_eight_avx2(const uint8_t* index, ptrdiff_t m,
                                               const int* eight, int64_t* c) {
    const __m256i byte_iota = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                               14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                                               25, 26, 27, 28, 29, 30, 31);
    __m256i want[8], in_bytes[8], v;
    ptrdiff_t j = 0, stop;
    int i;
    for (i = 0; i < 8; i++) {
        want[i] = _mm256_set1_epi8((char) eight[i]);
        c[i] = 0;
    }
    while (j < m) {
        stop = m - j > 255 * 32 ? j + 255 * 32 : m;
        for (i = 0; i < 8; i++)
            in_bytes[i] = _mm256_setzero_si256();
        for (; stop - j >= 32; j += 32) {
            v = _mm256_loadu_si256((const __m256i*) (index + j));
            for (i = 0; i < 8; i++)
                in_bytes[i] = _mm256_sub_epi8(in_bytes[i], _mm256_cmpeq_epi8(v, want[i]));
        }
        if (j < stop) { /* the row's last bytes (a chunk of 255 vectors has no such tail) */
            v = _mm256_or_si256(_mm256_loadu_si256((const __m256i*) (index + j)),
                                _mm256_cmpgt_epi8(byte_iota,
                                                  _mm256_set1_epi8((char) (stop - j - 1))));
            for (i = 0; i < 8; i++)
                in_bytes[i] = _mm256_sub_epi8(in_bytes[i], _mm256_cmpeq_epi8(v, want[i]));
            j = stop;
        }
        for (i = 0; i < 8; i++) {
            const __m256i sums = _mm256_sad_epu8(in_bytes[i], _mm256_setzero_si256());
            const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(sums),
                                            _mm256_extracti128_si256(sums, 1));
            c[i] += _mm_cvtsi128_si64(_mm_add_epi64(h, _mm_unpackhi_epi64(h, h)));
        }
    }
}

/* numbers, values and counts [0:n] <- the values of the table (memo) that the row's index
   bytes index[0:m] take, and how many labels take each: the bytes equal to each number
   the table holds counted eight numbers a pass over them (fr_count_eight_vbmi, _avx512 or
   _avx2, on the level given). Returns n, or -1 past FR_FEW_DISTINCT. */
static inline ptrdiff_t fr_few_count_held(int level, const fr_few_memo_f32* memo,
                                          const uint8_t* index, ptrdiff_t m, int32_t* numbers,
                                          float* values, int64_t* counts) {
    int table[FR_INDEX_NUMBERS], eight[8], n_table = fr_few_memo_numbers(memo, table), u, i;
    int64_t c[8];
    ptrdiff_t n = 0;
    for (u = 0; u < n_table && n >= 0; u += 8) {
        for (i = 0; i < 8; i++) /* past the last number: the last again, not kept */
            eight[i] = table[u + i < n_table ? u + i : n_table - 1];
        if (level >= FR_SIMD_AVX512_VPOPCNTDQ)
            fr_count_eight_vbmi(index, m, eight, c);
        else if (level >= FR_SIMD_AVX512)
            fr_count_eight_avx512(index, m, eight, c);
        else
            fr_count_eight_avx2(index, m, eight, c);
        n = fr_few_memo_held(memo, table + u, n_table - u < 8 ? n_table - u : 8, c, n, numbers,
                             values, counts);
    }
    return n;
}

/* fr_distinct_index_f32's pass on AVX-512 (-2: the extras ran out). The table of 64 slots
   in four registers: sixteen labels looked up by two two-table permutes and a blend (the
   slot is the number), an extra compared one by one, a new value's lanes found by one
   comparison; the counts eight numbers a pass over the index bytes (fr_count_eight_vbmi,
   or with AVX-512 alone fr_count_eight_avx512). */
static FR_TARGET_AVX512 ptrdiff_t fr_distinct_index_f32_pass_avx512(
        int level, fr_few_memo_f32* memo, const float* x, ptrdiff_t m, uint8_t* index,
        int32_t* numbers, float* values, int64_t* counts) {
    __m512 t[4], a, look;
    __m512i slot, number;
    float lane[16];
    ptrdiff_t j, n = 0, inserted = 0;
    int i, n_extra = memo->n_extra;
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
            const __m512 b = _mm512_set1_ps(w);
            __mmask16 same;
            int got;
            if (w != w) /* NaN, which no slot holds: every NaN lane is left */
                return -1;
            same = _mm512_mask_cmp_ps_mask(left, a, b, _CMP_EQ_OQ);
            got = fr_few_memo_insert(memo, w, &inserted);
            if (got < 0)
                return got;
            n_extra = memo->n_extra;
            number = _mm512_mask_mov_epi32(number, same, _mm512_set1_epi32(got));
            left &= (__mmask16) ~same;
            for (i = 0; got < 64 && i < 4; i++) /* lane got % 16 of t[got / 16] */
                t[i] = _mm512_mask_mov_ps(t[i], (__mmask16) ((uint64_t) 1 << got >> 16 * i), b);
        }
        _mm_mask_storeu_epi8(index + j, in, _mm512_cvtepi32_epi8(number));
    }
    n = fr_few_count_held(level, memo, index, m, numbers, values, counts);
    if (n < 0)
        return -1;
    fr_order_descending_avx512(numbers, values, counts, n);
    return n;
}

/* As fr_order_descending_avx512, four comparisons a value (the values' vectors past n
   zero, the last partial one by a masked load) */
static FR_TARGET_AVX2 void fr_order_descending_avx2(int32_t* numbers, float* values,
                                                    int64_t* counts, ptrdiff_t n) {
    const uint32_t in = n >= 32 ? ~(uint32_t) 0 : ((uint32_t) 1 << n) - 1;
    fr_few_by_place o;
    __m256 v[4];
    ptrdiff_t d;
    int k;
    for (k = 0; k < 4; k++)
        v[k] = 8 * k < n ? fr_load_first_ps(values + 8 * k, n - 8 * k) : _mm256_setzero_ps();
    for (d = 0; d < n; d++) {
        const __m256 w = _mm256_set1_ps(values[d]);
        uint32_t above = 0;
        int place;
        for (k = 0; k < 4; k++)
            above |= (uint32_t) _mm256_movemask_ps(_mm256_cmp_ps(v[k], w, _CMP_GT_OQ)) << 8 * k;
        place = __builtin_popcount(above & in);
        o.number[place] = numbers[d];
        o.value[place] = values[d];
        o.count[place] = counts[d];
    }
    fr_few_copy_out(&o, numbers, values, counts);
}

/* fr_distinct_index_f32's pass on AVX2 (-2: the extras ran out): eight labels a vector,
   each looked up in the table's 64 slots by a gather (the slot is the number), an extra
   compared one by one, a new value's lanes found by one comparison; the counts 32 index
   bytes a comparison, eight numbers a pass over them. */
static FR_TARGET_AVX2 ptrdiff_t fr_distinct_index_f32_pass_avx2(
        fr_few_memo_f32* memo, const float* x, ptrdiff_t m, uint8_t* index,
        int32_t* numbers, float* values, int64_t* counts) {
    float lane[8];
    uint8_t bytes[8];
    ptrdiff_t j, n = 0, inserted = 0;
    int i, n_extra = memo->n_extra;
    for (j = 0; j < m; j += 8) {
        const ptrdiff_t here = m - j < 8 ? m - j : 8;
        const __m256 a = fr_load_first_ps(x + j, here);
        const __m256i slot = _mm256_srli_epi32(
                _mm256_mullo_epi32(_mm256_castps_si256(a), _mm256_set1_epi32(FR_SLOT_MULTIPLIER)),
                26);
        const __m256 look = _mm256_i32gather_ps(memo->value, slot, 4);
        __m256i number = slot;
        __m128i packed;
        unsigned left = (unsigned) _mm256_movemask_ps(_mm256_cmp_ps(a, look, _CMP_NEQ_UQ))
                        & ((1u << here) - 1); /* NaN: an empty slot */
        /* (a value equal to an extra or a new one is in no slot: its lanes are all left,
           so the comparison itself selects them; the padding lanes past m are not stored) */
        for (i = 0; i < n_extra && left; i++) {
            const __m256 e = _mm256_cmp_ps(a, _mm256_set1_ps(memo->extra[i]), _CMP_EQ_OQ);
            number = _mm256_blendv_epi8(number, _mm256_set1_epi32(64 + i), _mm256_castps_si256(e));
            left &= ~(unsigned) _mm256_movemask_ps(e);
        }
        if (left)
            _mm256_storeu_ps(lane, a);
        while (left) {
            const float w = lane[__builtin_ctz(left)];
            __m256 same;
            int got;
            if (w != w) /* NaN, which no slot holds: every NaN lane is left */
                return -1;
            same = _mm256_cmp_ps(a, _mm256_set1_ps(w), _CMP_EQ_OQ);
            got = fr_few_memo_insert(memo, w, &inserted);
            if (got < 0)
                return got;
            n_extra = memo->n_extra;
            number = _mm256_blendv_epi8(number, _mm256_set1_epi32(got), _mm256_castps_si256(same));
            left &= ~(unsigned) _mm256_movemask_ps(same);
        }
        packed = _mm_packs_epi32(_mm256_castsi256_si128(number),
                                 _mm256_extracti128_si256(number, 1));
        packed = _mm_packus_epi16(packed, packed);
        if (here == 8) {
            _mm_storel_epi64((__m128i*) (index + j), packed);
        } else {
            _mm_storel_epi64((__m128i*) bytes, packed);
            memcpy(index + j, bytes, (size_t) here);
        }
    }
    n = fr_few_count_held(FR_SIMD_AVX2, memo, index, m, numbers, values, counts);
    if (n < 0)
        return -1;
    fr_order_descending_avx2(numbers, values, counts, n);
    return n;
}
#endif

/* index[j] <- the number of x[j]'s value in a table of the row's distinct values kept from
   row to row (memo): its slot (below 64), or 64 + i for the i-th value whose slot another
   holds (an extra); numbers[0:n] <- those the row holds by descending value, values and
   counts <- their values and how many labels hold each (each of the three holds
   FR_FEW_DISTINCT entries, written whole, past n too); returns n, or -1 when the row holds
   more than FR_FEW_DISTINCT distinct values or a NaN (the caller sorts it another way), or
   on a level below AVX2 (nothing written). Each label looked up a vector at a
   time (fr_distinct_index_f32_pass_avx512, _avx2), the counts the index bytes equal to
   each number the table holds; a pass whose extras ran out empties the table and looks
   again. The table then settles (fr_few_memo_settle). */
FR_SINGLE_COPY ptrdiff_t fr_distinct_index_f32(int level, fr_few_memo_f32* memo, const float* x,
                                               ptrdiff_t m, uint8_t* index, int32_t* numbers,
                                               float* values, int64_t* counts) {
    ptrdiff_t n = -1;
    int attempt;
    for (attempt = 0; attempt < 2; attempt++) {
#ifdef FR_X86
        if (level >= FR_SIMD_AVX512)
            n = fr_distinct_index_f32_pass_avx512(level, memo, x, m, index, numbers, values,
                                                  counts);
        else if (level >= FR_SIMD_AVX2)
            n = fr_distinct_index_f32_pass_avx2(memo, x, m, index, numbers, values, counts);
        else
            return -1;
#else
        (void) level, (void) memo, (void) x, (void) m, (void) index, (void) numbers;
        (void) values, (void) counts;
        return -1;
#endif
        if (n != -2)
            break;
        fr_few_memo_clear(memo);
    }
    return fr_few_memo_settle(memo, n, n);
}

#ifdef FR_X86
/* the bytes of b[0:n] equal to v: 64 a comparison (AVX-512), 32 (AVX2: the last vector read
   whole, b[n:n + 31] being in the buffer, FR_INDEX_SLACK, and its bytes past n dropped; a
   copy of the last few bytes waited on its stores) */
static FR_TARGET_AVX512 inline int64_t fr_count_byte_avx512(const uint8_t* b, ptrdiff_t n,
                                                            uint8_t v) {
    const __m512i want = _mm512_set1_epi8((char) v);
    int64_t c = 0;
    ptrdiff_t j;
    __mmask64 last;
    for (j = 0; n - j >= 64; j += 64)
        c += __builtin_popcountll(_mm512_cmpeq_epi8_mask(_mm512_loadu_si512(b + j), want));
    last = ((__mmask64) 1 << (n - j)) - 1;
    return c + __builtin_popcountll(
                       _mm512_mask_cmpeq_epi8_mask(last, _mm512_maskz_loadu_epi8(last, b + j),
                                                   want));
}
static FR_TARGET_AVX2 inline int64_t fr_count_byte_avx2(const uint8_t* b, ptrdiff_t n,
                                                        uint8_t v) {
    const __m256i want = _mm256_set1_epi8((char) v);
    int64_t c = 0;
    ptrdiff_t j;
    for (j = 0; n - j >= 32; j += 32)
        c += __builtin_popcount((uint32_t) _mm256_movemask_epi8(
                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i*) (b + j)), want)));
    return c + __builtin_popcount(
                       (uint32_t) _mm256_movemask_epi8(_mm256_cmpeq_epi8(
                               _mm256_loadu_si256((const __m256i*) (b + j)), want))
                       & (((uint32_t) 1 << (n - j)) - 1));
}
#endif

/* places[rel[0] + .. + rel[l - 1] + r] <- the place of the r-th of labels[0:k] (ascending)
   whose level is l = level_of[its index byte] (rel[l] of them) among the labels of its
   value, in label order: the bytes equal to its own before it, counted a vector at a time
   (COUNT) from where the level's previous label was counted (its first label: from the
   row's start), so that each level's bytes are read up to its last label only; n <=
   FR_FEW_DISTINCT levels. On one vector path (ATTR). */
#define FR_INDEX_PLACES(ATTR, COUNT, NAME)                                                \
    FR_SINGLE_COPY ATTR void NAME(const uint8_t* index, const int32_t* labels, ptrdiff_t k, \
                                  const int32_t* level_of, int n, const int64_t* rel,     \
                                  ptrdiff_t* places) {                                    \
        ptrdiff_t next[FR_FEW_DISTINCT], from[FR_FEW_DISTINCT], t;                        \
        int64_t count[FR_FEW_DISTINCT];                                                   \
        int l;                                                                            \
        for (l = 0; l < n; l++) {                                                         \
            next[l] = l == 0 ? 0 : next[l - 1] + rel[l - 1];                              \
            from[l] = 0;                                                                  \
            count[l] = 0;                                                                 \
        }                                                                                 \
        for (t = 0; t < k; t++) {                                                         \
            const ptrdiff_t p = labels[t];                                                \
            l = level_of[index[p]];                                                       \
            count[l] += COUNT(index + from[l], p - from[l], index[p]);                    \
            from[l] = p;                                                                  \
            places[next[l]++] = count[l];                                                 \
        }                                                                                 \
    }
#ifdef FR_X86
FR_INDEX_PLACES(FR_TARGET_AVX512, fr_count_byte_avx512, fr_index_places_avx512)
FR_INDEX_PLACES(FR_TARGET_AVX2, fr_count_byte_avx2, fr_index_places_avx2)
#endif

/* FR_INDEX_PLACES on the level's path (0); -1 (nothing written) below AVX2, where no index
   is made (fr_distinct_index_f32) */
static inline int fr_index_places(int level, const uint8_t* index, const int32_t* labels,
                                  ptrdiff_t k, const int32_t* level_of, int n,
                                  const int64_t* rel, ptrdiff_t* places) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512) {
        fr_index_places_avx512(index, labels, k, level_of, n, rel, places);
        return 0;
    }
    if (level >= FR_SIMD_AVX2) {
        fr_index_places_avx2(index, labels, k, level_of, n, rel, places);
        return 0;
    }
#endif
    (void) level, (void) index, (void) labels, (void) k, (void) level_of;
    (void) n, (void) rel, (void) places;
    return -1;
}

/* A float64 row numbered through its float32 roundings (evaluate, where the numbering
   stands in for a sort): rounding to nearest keeps the order of any two values, and the
   row keeps its ties and zeros when no two distinct values round alike (finite ones to
   infinity among them) and none that is not zero rounds to zero (alone in its number, it
   would read as a zero belief). */
#ifdef FR_X86
static FR_TARGET_AVX512 int fr_narrow_f64_avx512(const double* x, ptrdiff_t m, float* out) {
    __m512d v;
    __m256 f;
    __mmask8 live, bad = 0;
    ptrdiff_t j;
    for (j = 0; j < m; j += 8) {
        live = (__mmask8) (m - j >= 8 ? 0xff : (1u << (m - j)) - 1);
        v = _mm512_maskz_loadu_pd(live, x + j);
        f = _mm512_cvtpd_ps(v);
        _mm256_mask_storeu_ps(out + j, live, f);
        bad |= _mm512_mask_cmp_pd_mask(live, v, _mm512_setzero_pd(), _CMP_NEQ_OQ)
               & _mm256_cmp_ps_mask(f, _mm256_setzero_ps(), _CMP_EQ_OQ);
    }
    return bad == 0;
}
/* rep[number] <- the value of each number's first label, 64 index bytes a look */
static FR_TARGET_AVX512 void fr_first_values_f64(const double* x, const uint8_t* index,
                                                 ptrdiff_t m, const int32_t* numbers,
                                                 ptrdiff_t n, double* rep) {
    __mmask64 at;
    ptrdiff_t j, d;
    for (d = 0; d < n; d++)
        for (j = 0; j < m; j += 64) {
            at = _mm512_cmpeq_epi8_mask(
                _mm512_maskz_loadu_epi8(m - j >= 64 ? ~0ULL : (1ULL << (m - j)) - 1, index + j),
                _mm512_set1_epi8((char) numbers[d]));
            if (at) {
                rep[d] = x[j + __builtin_ctzll(at)];
                break;
            }
        }
}
/* Each label's value against its number's: looked up by a gather (rep by number) */
static FR_TARGET_AVX512 int fr_same_by_index_f64_avx512(const double* x, const uint8_t* index,
                                                        ptrdiff_t m, const int32_t* numbers,
                                                        ptrdiff_t n) {
    double first[FR_FEW_DISTINCT], rep[FR_INDEX_NUMBERS];
    __mmask8 bad = 0;
    ptrdiff_t j, d;
    fr_first_values_f64(x, index, m, numbers, n, first);
    for (d = 0; d < n; d++) rep[numbers[d]] = first[d];
    for (j = 0; j + 8 <= m; j += 8)
        bad |= _mm512_cmp_pd_mask(
            _mm512_i64gather_pd(_mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i*) (index + j))),
                                rep, 8),
            _mm512_loadu_pd(x + j), _CMP_NEQ_UQ);
    for (; j < m; j++) bad |= rep[index[j]] != x[j];
    return bad == 0;
}
/* As fr_same_by_index_f64_avx512, by permutes: each label's number made its rank among
   the row's n <= 32 (a byte permute of 64 index bytes), its number's value then one of 32
   in four registers (two two-register permutes; a gather cost 20 cycles a vector) */
static FR_TARGET_VBMI int fr_same_by_index_f64_vbmi(const double* x, const uint8_t* index,
                                                    ptrdiff_t m, const int32_t* numbers,
                                                    ptrdiff_t n) {
    uint8_t rank_of[128] = {0};
    double first[32] = {0};
    __m512i lo, hi, sixteen = _mm512_set1_epi64(16), ranks, r;
    __m512d f0, f1, f2, f3;
    __m128i quarter;
    __mmask8 bad = 0, live;
    ptrdiff_t j, t, d;
    fr_first_values_f64(x, index, m, numbers, n, first);
    for (d = 0; d < n; d++) rank_of[numbers[d]] = (uint8_t) d;
    lo = _mm512_loadu_si512(rank_of), hi = _mm512_loadu_si512(rank_of + 64);
    f0 = _mm512_loadu_pd(first), f1 = _mm512_loadu_pd(first + 8);
    f2 = _mm512_loadu_pd(first + 16), f3 = _mm512_loadu_pd(first + 24);
#define FR_SAME_BY_RANK(QUARTER, HALF, LIVE, AT)                                          \
    r = _mm512_cvtepu8_epi64((HALF) ? _mm_unpackhi_epi64(QUARTER, QUARTER) : (QUARTER)); \
    bad |= _mm512_mask_cmp_pd_mask(                                                       \
        LIVE,                                                                             \
        _mm512_mask_blend_pd(_mm512_test_epi64_mask(r, sixteen),                          \
                             _mm512_permutex2var_pd(f0, r, f1),                           \
                             _mm512_permutex2var_pd(f2, r, f3)),                          \
        _mm512_maskz_loadu_pd(LIVE, AT), _CMP_NEQ_UQ);
    for (j = 0; j < m; j += 64) {
        ranks = _mm512_permutex2var_epi8(
            lo, _mm512_maskz_loadu_epi8(m - j >= 64 ? ~0ULL : (1ULL << (m - j)) - 1, index + j),
            hi);
        for (t = 0; t < 64 && j + t < m; t += 16) {
            quarter = t == 0 ? _mm512_castsi512_si128(ranks)
                    : t == 16 ? _mm512_extracti32x4_epi32(ranks, 1)
                    : t == 32 ? _mm512_extracti32x4_epi32(ranks, 2)
                              : _mm512_extracti32x4_epi32(ranks, 3);
            live = (__mmask8) (m - j - t >= 8 ? 0xff : (1u << (m - j - t)) - 1);
            FR_SAME_BY_RANK(quarter, 0, live, x + j + t)
            if (j + t + 8 < m) {
                live = (__mmask8) (m - j - t >= 16 ? 0xff : (1u << (m - j - t - 8)) - 1);
                FR_SAME_BY_RANK(quarter, 1, live, x + j + t + 8)
            }
        }
    }
#undef FR_SAME_BY_RANK
    return bad == 0;
}
#endif

/* out[0:m] <- x[0:m] rounded to float32; 1 when no value that is not zero rounds to zero
   (NaN is left to the numbering), else 0 (out partly written). 0 below AVX-512. */
static inline int fr_narrow_f64(int level, const double* x, ptrdiff_t m, float* out) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512) return fr_narrow_f64_avx512(x, m, out);
#endif
    (void) level, (void) x, (void) m, (void) out;
    return 0;
}

/* 1 when every x[j] equals the values of the other labels of its number index[j] (the
   numbers[0:n] of fr_distinct_index_f32): a row numbered through its float32 roundings
   (fr_narrow_f64) then holds no two distinct values in one number, its ties exactly those
   numbered. 0 otherwise, and below AVX-512. */
static inline int fr_same_by_index_f64(int level, const double* x, const uint8_t* index,
                                       ptrdiff_t m, const int32_t* numbers, ptrdiff_t n) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512_VPOPCNTDQ)
        return fr_same_by_index_f64_vbmi(x, index, m, numbers, n);
    if (level >= FR_SIMD_AVX512) return fr_same_by_index_f64_avx512(x, index, m, numbers, n);
#endif
    (void) level, (void) x, (void) index, (void) m, (void) numbers, (void) n;
    return 0;
}

/* fr_distinct_index_f32 of a float64 row x[0:m] through its float32 roundings, written to
   narrow[0:m] (values[] are those roundings), where they keep the row's order, ties and
   zeros (fr_narrow_f64, fr_same_by_index_f64); -1 otherwise, and below AVX-512 (the
   caller sorts or counts the row another way). */
static inline ptrdiff_t fr_distinct_index_f64(int level, fr_few_memo_f32* memo, const double* x,
                                              ptrdiff_t m, float* narrow, uint8_t* index,
                                              int32_t* numbers, float* values,
                                              int64_t* counts) {
    ptrdiff_t n;
    if (!fr_narrow_f64(level, x, m, narrow))
        return -1;
    n = fr_distinct_index_f32(level, memo, narrow, m, index, numbers, values, counts);
    return n >= 0 && fr_same_by_index_f64(level, x, index, m, numbers, n) ? n : -1;
}

#endif
