/* Bit-sliced Hamming search: what the AVX2 and AVX-512 tiles share (the query's bit
   list, the carry-save plane counts and the tile scan, as templates). */
#ifndef FR_BITSLICED_COMMON_INL_H
#define FR_BITSLICED_COMMON_INL_H

#include <stdint.h>

#include "../hamming/common.h"
#include "../simd.h"

/* Bit-sliced search (AVX2 and AVX-512 paths), for patterns of 4 to 32 words, a multiple
   of 4. A tile of FR_TILE stored patterns (256 with AVX2, 512 with AVX-512) is
   transposed once into bit planes -- plane i is a vector whose bit e is bit i of entry
   t0 + e -- shared by every test pattern of the batch. For a test pattern q let S be
   its set bits, or its clear bits when more than half are set; the counts
   c_e = |{i in S : bit e of plane i}| of all the tile's entries are summed at once in
   bit-sliced counters (a carry-save adder tree: a few logic operations per plane, two
   ternary-logic instructions with AVX-512), and d_e = |q| + |m_e| - 2 c_e for set bits,
   |q| - |m_e| + 2 c_e for clear bits, with the sizes |m_e| counted the same way when
   the tile is transposed. The minimum and the set of entries at it come from an
   MSB-first search over the bit-sliced values; the tied entries are read off that set
   in ascending order. The work per test pattern and tile is proportional to
   |S| <= 32 W: small for the sparse patterns of text. */
#ifdef FR_X86
#define FR_MAX_WORDS 32        /* widest pattern: 2048 bits */
#define FR_COUNT_BITS 12       /* bit-sliced counters hold counts <= 2048 (fr_count_planes
                                  zeroes C[4 .. 11] by name) */

typedef struct {               /* a test pattern's planes */
    int32_t n, setbits, size;  /* |S|; S = its set bits (1) or clear bits (0); |q| */
    int16_t bit[32 * FR_MAX_WORDS + 8];  /* S, ascending (8 more: fr_query_init's
                                             last stores) */
} fr_query;

static int16_t fr_every_bit[64 * FR_MAX_WORDS];  /* 0, 1, 2, ...: every plane */

/* Planes bit[j] .. bit[j + 3] into the running ones and twos; the fours carried out
   into f */
#define FR_CSA4(CSA, f, j) do {                                                 \
    CSA(twos_a, ones, P[bit[j]], P[bit[(j) + 1]], ones);                        \
    CSA(twos_b, ones, P[bit[(j) + 2]], P[bit[(j) + 3]], ones);                  \
    CSA(f, twos, twos_a, twos_b, twos); } while (0)

/* C <- bit slices (C[0] lowest) of, for each entry, how many of the planes
   P[bit[0]], ..., P[bit[n-1]] have it: Harley-Seal carry-save tree over 16 planes at a
   time, then one ripple-carry increment per remaining plane. C[4 ..] collect the
   sixteens (C[0 .. 3] are set at the end); written out, as a loop GCC makes the
   zeroing a `rep stos`, slow at this size. */
#define FR_COUNT_PLANES(NAME, ATTR, V, CSA, ZERO, AND, XOR)                     \
    ATTR static inline void NAME##_add(V* C, V x, int b0) {                     \
        V carry_out;                                                            \
        int b;                                                                  \
        for (b = b0; b < FR_COUNT_BITS; b++) {                                  \
            carry_out = AND(C[b], x);                                           \
            C[b] = XOR(C[b], x);                                                \
            x = carry_out;                                                      \
        }                                                                       \
    }                                                                           \
    ATTR static void NAME(const V* P, const int16_t* bit, int n, V* C) {        \
        const V zero = ZERO();                                                  \
        V ones = zero, twos = zero, fours = zero, eights = zero;                \
        V twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;       \
        int i = 0;                                                              \
        C[4] = zero; C[5] = zero; C[6] = zero; C[7] = zero;                     \
        C[8] = zero; C[9] = zero; C[10] = zero; C[11] = zero;                   \
        for (; i + 16 <= n; i += 16) {                                          \
            FR_CSA4(CSA, fours_a, i);                                           \
            FR_CSA4(CSA, fours_b, i + 4);                                       \
            CSA(eights_a, fours, fours_a, fours_b, fours);                      \
            FR_CSA4(CSA, fours_a, i + 8);                                       \
            FR_CSA4(CSA, fours_b, i + 12);                                      \
            CSA(eights_b, fours, fours_a, fours_b, fours);                      \
            CSA(sixteens, eights, eights_a, eights_b, eights);                  \
            NAME##_add(C, sixteens, 4);                                         \
        }                                                                       \
        C[0] = ones; C[1] = twos; C[2] = fours; C[3] = eights;                  \
        for (; i < n; i++) NAME##_add(C, P[bit[i]], 0);                         \
    }

/* bit e of the tile's valid mask, for n entries: words of 64 entries */
static inline uint64_t fr_valid_word(int64_t n, int g) {
    int64_t left = n - 64 * (int64_t) g;
    return left >= 64 ? ~0ULL : left <= 0 ? 0 : (1ULL << left) - 1;
}

static int16_t fr_byte_bits[256][8];  /* the set bits of each byte value, ascending */

/* Q <- the bit list of pattern c: each byte's set bits from fr_byte_bits, 8 positions
   stored at once and the count advanced by the byte's popcount (no branch per bit) */
FR_TARGET_POPCNT static void fr_query_init(const uint64_t* c, int64_t W, fr_query* Q) {
    int64_t j;
    int i;
    uint64_t v;
    unsigned byte;
    Q->size = 0;
    for (j = 0; j < W; j++) Q->size += (int32_t) FR_POPCOUNT64(c[j]);
    Q->setbits = Q->size <= 32 * W;
    Q->n = 0;
    for (j = 0; j < W; j++) {
        v = Q->setbits ? c[j] : ~c[j];
        for (i = 0; i < 8; i++, v >>= 8) {
            byte = (unsigned) (v & 0xFF);
            _mm_storeu_si128((__m128i*) (Q->bit + Q->n), _mm_add_epi16(
                _mm_loadu_si128((const __m128i*) fr_byte_bits[byte]),
                _mm_set1_epi16((short) (64 * j + 8 * i))));
            Q->n += (int32_t) FR_POPCOUNT64(byte);
        }
    }
}

/* Distances of Q's pattern to tile T's entries, updating the running minimum r and
   its entry list ties (as fr_scan over the tile would): the counts, then
   G <- X - Y = X + ~Y + 1 in `bits`-bit two's complement, where (X, Y) = (|m|, 2c)
   for set bits and (2c, |m|) for clear bits (d = |q| + X - Y), then the MSB-first
   search. */
#define FR_TILE_SCAN(NAME, ATTR, TILE, V, LANES, COUNT, ZERO, ONES, XOR, AND, OR,     \
                     ANDNOT, NONZERO, STORE)                                          \
    ATTR static void NAME(const TILE* T, const fr_query* Q, int32_t* ties,            \
                          fr_track* r) {                                              \
        const V zero = ZERO(), all = ONES();                                          \
        V C[FR_COUNT_BITS], G[FR_COUNT_BITS + 2];                                     \
        V carry = all, cand = T->valid, x, not_y, u, low;                             \
        uint64_t lanes[LANES], v;                                                     \
        unsigned gmin = 0;                                                            \
        uint32_t d, m = r->m;                                                         \
        int64_t k = r->k;                                                             \
        int b, bits, g;                                                               \
        COUNT(T->plane, Q->bit, Q->n, C);                                             \
        bits = 33 - __builtin_clz((unsigned) Q->n | 1);          /* bits of 2 |S| */  \
        bits = (T->size_bits > bits ? T->size_bits : bits) + 1;  /* and a sign bit */ \
        for (b = 0; b < bits; b++) {                                                  \
            V sz = b < FR_COUNT_BITS ? T->size[b] : zero;                             \
            V c2 = b >= 1 && b - 1 < FR_COUNT_BITS ? C[b - 1] : zero;                 \
            x = Q->setbits ? sz : c2;                                                 \
            not_y = XOR(Q->setbits ? c2 : sz, all);                                   \
            u = XOR(x, not_y);                                                        \
            G[b] = XOR(u, carry);                                                     \
            carry = OR(AND(x, not_y), AND(u, carry));                                 \
        }                                                                             \
        G[bits - 1] = XOR(G[bits - 1], all);  /* + 2^(bits-1): unsigned order */      \
        for (b = bits - 1; b >= 0; b--) {   /* minimum, MSB first, and its entries */ \
            low = ANDNOT(G[b], cand);                                                 \
            if (NONZERO(low)) cand = low;                                             \
            else gmin |= 1u << b;                                                     \
        }                                                                             \
        d = (uint32_t) (Q->size + (int) gmin - (1 << (bits - 1)));                    \
        if (d <= m) {                                                                 \
            if (d < m) { m = d; k = 0; }                                              \
            STORE((void*) lanes, cand);                                               \
            for (g = 0; g < (LANES); g++)                                             \
                for (v = lanes[g]; v; v &= v - 1)                                     \
                    ties[k++] = (int32_t) (T->t0 + 64 * g + FR_CTZ64(v));             \
        }                                                                             \
        r->m = m;                                                                     \
        r->k = k;                                                                     \
    }
#endif

#endif
