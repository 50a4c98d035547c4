/* 64 x 64 bit transposes: in plain 64-bit words, or in each 64-bit lane of 256- or 512-bit
   vectors at once (the STAGE of the width). */
#ifndef FR_TRANSPOSE64_H
#define FR_TRANSPOSE64_H

#include "simd.h"

/* A 64 x 64 bit transpose in each 64-bit lane of A[0 .. 63], by the STAGE of the vector
   width (or of plain words): bit j of lane l of A[i] becomes bit i of lane l of A[j] */
#define FR_TRANSPOSE64(STAGE, A) do {                                           \
    STAGE(A, 32, 0x00000000FFFFFFFFULL); STAGE(A, 16, 0x0000FFFF0000FFFFULL);   \
    STAGE(A, 8, 0x00FF00FF00FF00FFULL); STAGE(A, 4, 0x0F0F0F0F0F0F0F0FULL);     \
    STAGE(A, 2, 0x3333333333333333ULL); STAGE(A, 1, 0x5555555555555555ULL);     \
    } while (0)

/* One stage of the transpose: swap the J x J blocks off the diagonal (J = 32, 16, ..., 1),
   in plain words */
#define FR_TRANSPOSE_STAGE_U64(A, J, MASK) do {                                 \
    int k_;                                                                     \
    for (k_ = 0; k_ < 64; k_ = ((k_ | (J)) + 1) & ~(J)) {                       \
        uint64_t t_ = (((A)[k_] >> (J)) ^ (A)[k_ | (J)]) & (MASK);              \
        (A)[k_] ^= t_ << (J);                                                   \
        (A)[k_ | (J)] ^= t_;                                                    \
    } } while (0)

#ifdef FR_X86
/* the same in each 64-bit lane of 256-bit vectors (AVX2) */
#define FR_TRANSPOSE_STAGE256(A, J, MASK) do {                                  \
    const __m256i mask_ = _mm256_set1_epi64x((long long) (MASK));               \
    int k_;                                                                     \
    for (k_ = 0; k_ < 64; k_ = ((k_ | (J)) + 1) & ~(J)) {                       \
        __m256i t_ = _mm256_and_si256(_mm256_xor_si256(                         \
            _mm256_srli_epi64((A)[k_], J), (A)[k_ | (J)]), mask_);              \
        (A)[k_] = _mm256_xor_si256((A)[k_], _mm256_slli_epi64(t_, J));          \
        (A)[k_ | (J)] = _mm256_xor_si256((A)[k_ | (J)], t_);                    \
    } } while (0)
/* and of 512-bit vectors (AVX-512 F) */
#define FR_TRANSPOSE_STAGE512(A, J, MASK) do {                                  \
    const __m512i mask_ = _mm512_set1_epi64((long long) (MASK));                \
    int k_;                                                                     \
    for (k_ = 0; k_ < 64; k_ = ((k_ | (J)) + 1) & ~(J)) {                       \
        __m512i t_ = _mm512_and_si512(_mm512_xor_si512(                         \
            _mm512_srli_epi64((A)[k_], J), (A)[k_ | (J)]), mask_);              \
        (A)[k_] = _mm512_xor_si512((A)[k_], _mm512_slli_epi64(t_, J));          \
        (A)[k_ | (J)] = _mm512_xor_si512((A)[k_ | (J)], t_);                    \
    } } while (0)
#endif

#endif
