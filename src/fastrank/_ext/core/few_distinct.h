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

#ifdef FR_X86
/* index[j] <- the number of x[j]'s value among the row's distinct values in the order they
   first occur (-0.0 == 0.0), values[0:n] <- those values, counts[0:n] <- how many labels
   hold each; returns n, or -1 when the row holds more than FR_FEW_DISTINCT distinct values
   or a NaN (the caller sorts it another way). The table of 64 slots in four registers
   holds the values, four more their numbers: sixteen labels looked up by two two-table
   permutes of each and a blend; a value whose slot was taken kept in a short list of
   extras, compared one by one; a new value's lanes found by one comparison. The counts are
   the index bytes equal to each number, 64 a comparison. */
FR_SINGLE_COPY FR_TARGET_AVX512 ptrdiff_t fr_distinct_index_f32_avx512(
        const float* x, ptrdiff_t m, uint8_t* index, float* values, int64_t* counts) {
    __m512 t[4], a, b, look;
    __m512i u[4], slot, number;
    float lane[16], extra[FR_FEW_DISTINCT];
    int extra_number[FR_FEW_DISTINCT], n_extra = 0, i;
    uint64_t taken = 0;
    ptrdiff_t j, n = 0;
    unsigned s;
    for (i = 0; i < 4; i++) {
        t[i] = _mm512_set1_ps(NAN);
        u[i] = _mm512_setzero_si512();
    }
    for (j = 0; j < m; j += 16) {
        __mmask16 in = m - j >= 16 ? (__mmask16) ~0u : (__mmask16) ((1u << (m - j)) - 1);
        __mmask16 left, hi;
        a = _mm512_maskz_loadu_ps(in, x + j);
        if (_mm512_mask_cmp_ps_mask(in, a, a, _CMP_UNORD_Q))
            return -1;
        slot = _mm512_set1_epi32(FR_SLOT_MULTIPLIER);
        slot = _mm512_srli_epi32(_mm512_mullo_epi32(_mm512_castps_si512(a), slot), 26);
        hi = _mm512_test_epi32_mask(slot, _mm512_set1_epi32(32));
        look = _mm512_mask_blend_ps(hi, _mm512_permutex2var_ps(t[0], slot, t[1]),
                                    _mm512_permutex2var_ps(t[2], slot, t[3]));
        number = _mm512_mask_blend_epi32(hi, _mm512_permutex2var_epi32(u[0], slot, u[1]),
                                         _mm512_permutex2var_epi32(u[2], slot, u[3]));
        left = _mm512_mask_cmp_ps_mask(in, a, look, _CMP_NEQ_UQ); /* NaN: an empty slot */
        for (i = 0; i < n_extra; i++) {
            const __mmask16 e = _mm512_mask_cmp_ps_mask(left, a, _mm512_set1_ps(extra[i]),
                                                        _CMP_EQ_OQ);
            number = _mm512_mask_mov_epi32(number, e, _mm512_set1_epi32(extra_number[i]));
            left &= (__mmask16) ~e;
        }
        if (left)
            _mm512_storeu_ps(lane, a);
        while (left) {
            const float w = lane[__builtin_ctz(left)];
            const __m512i own = _mm512_set1_epi32((int) n);
            __mmask16 same;
            b = _mm512_set1_ps(w);
            same = _mm512_mask_cmp_ps_mask(left, a, b, _CMP_EQ_OQ);
            if (n == FR_FEW_DISTINCT)
                return -1;
            left &= (__mmask16) ~same;
            number = _mm512_mask_mov_epi32(number, same, own);
            s = fr_slot_f32(w);
            if (taken >> s & 1) {
                extra[n_extra] = w;
                extra_number[n_extra++] = (int) n;
            } else {
                taken |= (uint64_t) 1 << s;
                for (i = 0; i < 4; i++) { /* lane s % 16 of t[s / 16] and u[s / 16] */
                    const __mmask16 k = (__mmask16) ((uint64_t) 1 << s >> 16 * i);
                    t[i] = _mm512_mask_mov_ps(t[i], k, b);
                    u[i] = _mm512_mask_mov_epi32(u[i], k, own);
                }
            }
            values[n++] = w;
        }
        _mm_mask_storeu_epi8(index + j, in, _mm512_cvtepi32_epi8(number));
    }
    for (i = 0; i < n; i++) {
        const __m512i want = _mm512_set1_epi8((char) i);
        int64_t c = 0;
        for (j = 0; j < m; j += 64) {
            const __mmask64 in = m - j >= 64 ? ~(__mmask64) 0 : ((__mmask64) 1 << (m - j)) - 1;
            c += __builtin_popcountll(_mm512_mask_cmpeq_epi8_mask(
                in, _mm512_maskz_loadu_epi8(in, index + j), want));
        }
        counts[i] = c;
    }
    return n;
}
#endif

/* fr_distinct_index_f32_avx512 on the AVX-512 level; -1 below it */
static inline ptrdiff_t fr_distinct_index_f32(int level, const float* x, ptrdiff_t m,
                                              uint8_t* index, float* values,
                                              int64_t* counts) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512)
        return fr_distinct_index_f32_avx512(x, m, index, values, counts);
#endif
    (void) level, (void) x, (void) m, (void) index, (void) values, (void) counts;
    return -1;
}

#endif
