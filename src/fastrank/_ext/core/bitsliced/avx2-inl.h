/* Bit-sliced Hamming search on 256-entry tiles (AVX2). */
#ifndef FR_BITSLICED_AVX2_INL_H
#define FR_BITSLICED_AVX2_INL_H

#include <stdint.h>

#include "../transpose64.h"
#include "common-inl.h"

#ifdef FR_X86
#define FR_TILE 256            /* AVX2 tile: entries per tile = bits per plane */

typedef struct {               /* a transposed AVX2 tile */
    int64_t t0;                /* its first entry */
    __m256i valid;             /* bit e set for the entries present (a last tile is short) */
    __m256i size[FR_COUNT_BITS];   /* bit slices of the entries' sizes |m_e| */
    int size_bits;             /* bits of the largest size */
    __m256i* plane;            /* (64 W) planes */
} fr_tile;

#define FR_CSA(h, l, a, b, c) do {                                              \
    __m256i u_ = _mm256_xor_si256(a, b);                                        \
    h = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u_, c));       \
    l = _mm256_xor_si256(u_, c); } while (0)

FR_COUNT_PLANES(fr_count_planes, FR_TARGET_AVX2, __m256i, FR_CSA, _mm256_setzero_si256,
                _mm256_and_si256, _mm256_xor_si256)

/* The 64 W planes of entries t0 .. t0 + n - 1 (n <= 256) of M, 256 bits each: plane p
   into out[p] (absent entries give 0 bits). */
FR_TARGET_AVX2 static void fr_transpose256(const uint64_t* M, int64_t t0, int64_t n,
                                           int64_t W, __m256i* out) {
    __m256i A[4][64] __attribute__((aligned(32)));
    __m256i e0, e1, e2, e3;
    __m256i* o;
    int64_t j0, t;
    int g, i;
    for (j0 = 0; j0 < W; j0 += 4) {
        for (g = 0; g < 4; g++) {       /* entries 64 g .. 64 g + 63, words j0 .. j0 + 3 */
            for (i = 0; i < 64; i++) {
                t = 64 * g + i;
                A[g][i] = t < n
                    ? _mm256_loadu_si256((const __m256i*) (M + (t0 + t) * W + j0))
                    : _mm256_setzero_si256();
            }
            FR_TRANSPOSE64(FR_TRANSPOSE_STAGE256, A[g]);
        }
        /* lane l of A[g][i]: bit i of word j0 + l of entries 64 g ..; plane
           64 (j0 + l) + i gathers lane l of A[0][i] .. A[3][i] */
        o = out + 64 * j0;
        for (i = 0; i < 64; i++) {
            e0 = _mm256_unpacklo_epi64(A[0][i], A[1][i]);
            e1 = _mm256_unpackhi_epi64(A[0][i], A[1][i]);
            e2 = _mm256_unpacklo_epi64(A[2][i], A[3][i]);
            e3 = _mm256_unpackhi_epi64(A[2][i], A[3][i]);
            o[i] = _mm256_permute2x128_si256(e0, e2, 0x20);
            o[64 + i] = _mm256_permute2x128_si256(e1, e3, 0x20);
            o[128 + i] = _mm256_permute2x128_si256(e0, e2, 0x31);
            o[192 + i] = _mm256_permute2x128_si256(e1, e3, 0x31);
        }
    }
}

/* Transpose entries t0 .. t0 + n - 1 (n <= 256) of M into T: planes, sizes, valid. */
FR_TARGET_AVX2 static void fr_tile_build(const uint64_t* M, int64_t t0, int64_t n, int64_t W,
                                         fr_tile* T) {
    uint64_t valid[4];
    int g, b;
    T->t0 = t0;
    fr_transpose256(M, t0, n, W, T->plane);
    fr_count_planes(T->plane, fr_every_bit, (int) (64 * W), T->size);
    for (g = 0; g < 4; g++) valid[g] = fr_valid_word(n, g);
    T->valid = _mm256_loadu_si256((const __m256i*) valid);
    for (b = 0, T->size_bits = 0; b < FR_COUNT_BITS; b++)
        if (!_mm256_testz_si256(T->size[b], T->size[b])) T->size_bits = b + 1;
}

#define FR_NONZERO256(a) (!_mm256_testz_si256(a, a))
#define FR_STORE256(p, a) _mm256_storeu_si256((__m256i*) (p), a)
#define FR_ONES256() _mm256_set1_epi32(-1)
FR_TILE_SCAN(fr_tile_scan, FR_TARGET_AVX2, fr_tile, __m256i, 4, fr_count_planes,
             _mm256_setzero_si256, FR_ONES256, _mm256_xor_si256, _mm256_and_si256,
             _mm256_or_si256, _mm256_andnot_si256, FR_NONZERO256, FR_STORE256)
#endif

#endif
