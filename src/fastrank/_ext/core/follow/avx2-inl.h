/* The draws and the search of the followed shuffle (follow.h) with AVX2: eight steps'
   places a pass, their four numbers mixed in 64-bit lanes (each 64-bit product from three
   32-bit ones); eight places compared a pass. */
#ifndef FR_FOLLOW_AVX2_INL_H
#define FR_FOLLOW_AVX2_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../shuffle.h"
#include "../simd.h"
#include "common-inl.h"

#ifdef FR_X86
/* the low 64 bits of a * c in each lane */
static FR_TARGET_AVX2 inline __m256i fr_mullo64_avx2(__m256i a, uint64_t c) {
    const __m256i c_lo = _mm256_set1_epi64x((long long)(c & 0xFFFFFFFFu));
    const __m256i c_hi = _mm256_set1_epi64x((long long)(c >> 32));
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), c_lo),
                                     _mm256_mul_epu32(a, c_hi));
    return _mm256_add_epi64(_mm256_mul_epu32(a, c_lo), _mm256_slli_epi64(cross, 32));
}

static FR_TARGET_AVX2 inline __m256i fr_splitmix64_mix_avx2(__m256i z) {
    z = fr_mullo64_avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), FR_SPLITMIX_M1);
    z = fr_mullo64_avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), FR_SPLITMIX_M2);
    return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}

/* the lanes of a 64-bit comparison, as four bits */
#define FR_MASK64_AVX2(c) ((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(c)))

/* As fr_draw_places_avx512, eight steps a pass */
static FR_TARGET_AVX2 ptrdiff_t fr_draw_places_avx2(int32_t* places, ptrdiff_t t, ptrdiff_t end,
                                                    ptrdiff_t m, uint64_t row,
                                                    ptrdiff_t step) {
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256i low_word = _mm256_set1_epi64x(0xFFFFFFFFLL);
    __m256i counter = _mm256_add_epi64(
        _mm256_set1_epi64x((long long)(row + (uint64_t)(((step + t) >> 1) + 1)
                                                 * FR_SPLITMIX_GAMMA)),
        fr_mullo64_avx2(lane, FR_SPLITMIX_GAMMA));
    __m256i size_even = _mm256_sub_epi64(_mm256_set1_epi64x((long long)(m - t)),
                                         _mm256_slli_epi64(lane, 1));
    for (; t < end; t += 8) {
        const __m256i size_odd = _mm256_sub_epi64(size_even, _mm256_set1_epi64x(1));
        const __m256i z = fr_splitmix64_mix_avx2(counter);
        const __m256i p_even = _mm256_mul_epu32(_mm256_srli_epi64(z, 32), size_even);
        const __m256i p_odd = _mm256_mul_epu32(z, size_odd);
        const unsigned redo =
            FR_MASK64_AVX2(_mm256_cmpgt_epi64(size_even, _mm256_and_si256(p_even, low_word)))
            | FR_MASK64_AVX2(_mm256_cmpgt_epi64(size_odd, _mm256_and_si256(p_odd, low_word)))
                  << 4;
        _mm256_storeu_si256((__m256i*)(places + t),
                            _mm256_or_si256(_mm256_srli_epi64(p_even, 32),
                                            _mm256_andnot_si256(low_word, p_odd)));
        fr_redraw_places(places, t, redo, 8, m, row, step);
        counter = _mm256_add_epi64(counter,
                                   _mm256_set1_epi64x((long long)(4 * FR_SPLITMIX_GAMMA)));
        size_even = _mm256_sub_epi64(size_even, _mm256_set1_epi64x(8));
    }
    return t;
}

/* As fr_follow_drawn_avx512, the group's steps in up to eight vectors of eight, those
   that hold its steps compared: read whole (places holds m + 16 >= steps + 17 values, and
   the hits past the steps are dropped by FR_FOLLOW_DRAWN) from memory at each search,
   where the draws have just stored them (a copy into an array of registers compiled to
   a call of memcpy) */
static FR_TARGET_AVX2 void fr_follow_drawn_avx2(ptrdiff_t* pos, ptrdiff_t k, ptrdiff_t steps,
                                                const int32_t* places) {
    const int n_vectors = (int) ((steps + 7) / 8);
    const __m256i* const drawn = (const __m256i*) places;
#define FR_DRAWN_AVX2(p, hits)                                                           \
    do {                                                                                 \
        const __m256i want = _mm256_set1_epi32((int32_t) (p));                          \
        int v_;                                                                          \
        hits = 0;                                                                        \
        for (v_ = 0; v_ < n_vectors; v_++)                                               \
            hits |= (uint64_t) (unsigned) _mm256_movemask_ps(_mm256_castsi256_ps(        \
                            _mm256_cmpeq_epi32(_mm256_loadu_si256(drawn + v_), want)))   \
                    << 8 * v_;                                                           \
    } while (0)
    FR_FOLLOW_DRAWN(pos, k, steps, places, FR_DRAWN_AVX2);
#undef FR_DRAWN_AVX2
}

/* As fr_find_place_avx512, eight places a pass (the last few one at a time) */
static FR_TARGET_AVX2 ptrdiff_t fr_find_place_avx2(const int32_t* places, ptrdiff_t from,
                                                   ptrdiff_t to, int32_t p) {
    const __m256i want = _mm256_set1_epi32(p);
    ptrdiff_t u;
    for (u = from; u + 8 <= to; u += 8) {
        unsigned hit = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
            _mm256_loadu_si256((const __m256i*)(places + u)), want)));
        if (hit)
            return u + __builtin_ctz(hit);
    }
    for (; u < to; u++)
        if (places[u] == p)
            return u;
    return to;
}
#endif

#endif
