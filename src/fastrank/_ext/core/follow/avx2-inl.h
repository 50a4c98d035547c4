/* The search of fr_first_draw (follow.h) with AVX2: eight steps a pass, their four numbers
   mixed in 64-bit lanes (each 64-bit product from three 32-bit ones). */
#ifndef FR_FOLLOW_AVX2_INL_H
#define FR_FOLLOW_AVX2_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../shuffle.h"
#include "../simd.h"

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

static FR_TARGET_AVX2 ptrdiff_t fr_first_draw_avx2(const ptrdiff_t* u, ptrdiff_t k,
                                                   ptrdiff_t n, ptrdiff_t size, uint64_t row,
                                                   ptrdiff_t step) {
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256i low_word = _mm256_set1_epi64x(0xFFFFFFFFLL);
    const ptrdiff_t lead = step & 1, stop = lead + n; /* offsets from the even step b */
    const ptrdiff_t b = step - lead;
    __m256i counter = _mm256_add_epi64(
        _mm256_set1_epi64x((long long)(row + (uint64_t)((b >> 1) + 1) * FR_SPLITMIX_GAMMA)),
        fr_mullo64_avx2(lane, FR_SPLITMIX_GAMMA));
    __m256i size_even = _mm256_sub_epi64(_mm256_set1_epi64x((long long)(size + lead)),
                                         _mm256_slli_epi64(lane, 1));
    __m256i size_odd = _mm256_sub_epi64(size_even, _mm256_set1_epi64x(1));
    ptrdiff_t base, t;
    for (base = 0; base < stop; base += 8) {
        __m256i z = fr_splitmix64_mix_avx2(counter);
        __m256i p_even = _mm256_mul_epu32(_mm256_srli_epi64(z, 32), size_even);
        __m256i p_odd = _mm256_mul_epu32(z, size_odd);
        __m256i j_even = _mm256_srli_epi64(p_even, 32), j_odd = _mm256_srli_epi64(p_odd, 32);
        __m256i hit_even = _mm256_cmpgt_epi64(size_even, _mm256_and_si256(p_even, low_word));
        __m256i hit_odd = _mm256_cmpgt_epi64(size_odd, _mm256_and_si256(p_odd, low_word));
        ptrdiff_t n_even = (stop - base + 1) >> 1, n_odd = (stop - base) >> 1;
        unsigned even, odd;
        for (t = 0; t < k; t++) {
            __m256i at = _mm256_set1_epi64x((long long)u[t]);
            hit_even = _mm256_or_si256(hit_even, _mm256_cmpeq_epi64(j_even, at));
            hit_odd = _mm256_or_si256(hit_odd, _mm256_cmpeq_epi64(j_odd, at));
        }
        even = FR_MASK64_AVX2(hit_even) & (n_even >= 4 ? 0xFu : (1u << n_even) - 1);
        odd = FR_MASK64_AVX2(hit_odd) & (n_odd >= 4 ? 0xFu : (1u << n_odd) - 1);
        if (base == 0)
            even &= ~(unsigned)lead; /* the first number's high half: the step before */
        if (even | odd) {
            ptrdiff_t at_even = even ? 2 * __builtin_ctz(even) : 8;
            ptrdiff_t at_odd = odd ? 2 * __builtin_ctz(odd) + 1 : 8;
            return base + (at_even < at_odd ? at_even : at_odd) - lead;
        }
        counter = _mm256_add_epi64(counter,
                                   _mm256_set1_epi64x((long long)(4 * FR_SPLITMIX_GAMMA)));
        size_even = _mm256_sub_epi64(size_even, _mm256_set1_epi64x(8));
        size_odd = _mm256_sub_epi64(size_odd, _mm256_set1_epi64x(8));
    }
    return n;
}
#endif

#endif
