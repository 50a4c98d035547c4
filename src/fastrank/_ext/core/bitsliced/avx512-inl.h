/* Bit-sliced Hamming search on 512-entry tiles (AVX-512 F, BW, VL; ternary logic). */
#ifndef FR_BITSLICED_AVX512_INL_H
#define FR_BITSLICED_AVX512_INL_H

#include <stdint.h>

#include "../transpose64.h"
#include "common-inl.h"

#ifdef FR_X86
#define FR_TILE512 512         /* AVX-512 tile: entries per tile = bits per plane */

typedef struct {               /* a transposed AVX-512 tile: 512 entries (bit e of a
                                  plane: entry t0 + e) */
    int64_t t0;
    __m512i valid;
    __m512i size[FR_COUNT_BITS];
    int size_bits;
    __m512i* plane;
} fr_tile512;

/* the same with AVX-512 ternary logic: h = majority(a, b, c), l = a ^ b ^ c */
#define FR_CSA512(h, l, a, b, c) do {                                           \
    __m512i a_ = (a), b_ = (b), c_ = (c);                                       \
    h = _mm512_ternarylogic_epi64(a_, b_, c_, 0xE8);                            \
    l = _mm512_ternarylogic_epi64(a_, b_, c_, 0x96); } while (0)

FR_COUNT_PLANES(fr_count_planes512, FR_TARGET_AVX512, __m512i, FR_CSA512,
                _mm512_setzero_si512, _mm512_and_si512, _mm512_xor_si512)

/* The 64 W planes of entries t0 .. t0 + n - 1 (n <= 512) of M, 512 bits each, into
   out[0 .. 64 W - 1], 8 words at a time: for each i < 64, the 8 words of entries i,
   64 + i, ..., 448 + i are transposed as an 8 x 8 matrix of words (unpacks, two-source
   permutes, lane shuffles), giving A[j][i] whose lane g is word j of entry 64 g + i;
   each A[j] is then a 64 x 64 bit transpose in each lane (plane 64 j + b, bit
   64 g + i = bit b of word j of entry 64 g + i). */
FR_TARGET_AVX512 static void fr_transpose512(const uint64_t* M, int64_t t0, int64_t n,
                                             int64_t W, __m512i* out) {
    __m512i A[8][64];
    __m512i r[8], a[8], b[8];
    const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    int64_t j0, t, nw, i, j;
    int g;
    for (j0 = 0; j0 < W; j0 += 8) {
        __mmask8 words;
        nw = W - j0 < 8 ? W - j0 : 8;
        words = (__mmask8) ((1u << nw) - 1);
        for (i = 0; i < 64; i++) {
            for (g = 0; g < 8; g++) {
                t = 64 * g + i;
                r[g] = t < n ? _mm512_maskz_loadu_epi64(words, M + (t0 + t) * W + j0)
                             : _mm512_setzero_si512();
            }
            for (g = 0; g < 8; g += 2) {        /* a[g]: words 0, 2, 4, 6 of rows g, g + 1 */
                a[g] = _mm512_unpacklo_epi64(r[g], r[g + 1]);
                a[g + 1] = _mm512_unpackhi_epi64(r[g], r[g + 1]);
            }
            for (g = 0; g < 8; g += 4) {        /* b[g]: words 0, 4 of rows g .. g + 3 */
                b[g] = _mm512_permutex2var_epi64(a[g], lo, a[g + 2]);
                b[g + 1] = _mm512_permutex2var_epi64(a[g + 1], lo, a[g + 3]);
                b[g + 2] = _mm512_permutex2var_epi64(a[g], hi, a[g + 2]);
                b[g + 3] = _mm512_permutex2var_epi64(a[g + 1], hi, a[g + 3]);
            }
            for (j = 0; j < 4; j++) {
                A[j][i] = _mm512_shuffle_i64x2(b[j], b[j + 4], 0x44);
                A[j + 4][i] = _mm512_shuffle_i64x2(b[j], b[j + 4], 0xEE);
            }
        }
        for (j = 0; j < nw; j++) {
            FR_TRANSPOSE64(FR_TRANSPOSE_STAGE512, A[j]);
            for (i = 0; i < 64; i++) out[64 * (j0 + j) + i] = A[j][i];
        }
    }
}

/* The same for n <= 512 entries into a 512-entry tile. */
FR_TARGET_AVX512 static void fr_tile_build512(const uint64_t* M, int64_t t0, int64_t n,
                                              int64_t W, fr_tile512* T) {
    uint64_t valid[8];
    int g, b;
    T->t0 = t0;
    fr_transpose512(M, t0, n, W, T->plane);
    fr_count_planes512(T->plane, fr_every_bit, (int) (64 * W), T->size);
    for (g = 0; g < 8; g++) valid[g] = fr_valid_word(n, g);
    T->valid = _mm512_loadu_si512((const void*) valid);
    for (b = 0, T->size_bits = 0; b < FR_COUNT_BITS; b++)
        if (_mm512_test_epi64_mask(T->size[b], T->size[b])) T->size_bits = b + 1;
}

#define FR_NONZERO512(a) (_mm512_test_epi64_mask(a, a) != 0)
#define FR_ONES512() _mm512_set1_epi32(-1)
FR_TILE_SCAN(fr_tile_scan512, FR_TARGET_AVX512, fr_tile512, __m512i, 8, fr_count_planes512,
             _mm512_setzero_si512, FR_ONES512, _mm512_xor_si512, _mm512_and_si512,
             _mm512_or_si512, _mm512_andnot_si512, FR_NONZERO512, _mm512_storeu_si512)
#endif

#endif
