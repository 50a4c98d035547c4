/* The search of fr_first_draw (follow.h) with AVX-512: sixteen steps a pass, their eight
   numbers mixed in 64-bit lanes (AVX-512 DQ's 64-bit products), the steps found by masks. */
#ifndef FR_FOLLOW_AVX512_INL_H
#define FR_FOLLOW_AVX512_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../shuffle.h"
#include "../simd.h"
#include "avx2-inl.h"

#ifdef FR_X86
static FR_TARGET_AVX512_DQ inline __m512i fr_splitmix64_mix_avx512(__m512i z) {
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                           _mm512_set1_epi64((long long)FR_SPLITMIX_M1));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                           _mm512_set1_epi64((long long)FR_SPLITMIX_M2));
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

static FR_TARGET_AVX512_DQ ptrdiff_t fr_first_draw_avx512(const ptrdiff_t* u, ptrdiff_t k,
                                                       ptrdiff_t n, ptrdiff_t size,
                                                       uint64_t row, ptrdiff_t step) {
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i low_word = _mm512_set1_epi64(0xFFFFFFFFLL);
    const ptrdiff_t lead = step & 1, stop = lead + n; /* offsets from the even step b */
    const ptrdiff_t b = step - lead;
    __m512i counter = _mm512_add_epi64(
        _mm512_set1_epi64((long long)(row + (uint64_t)((b >> 1) + 1) * FR_SPLITMIX_GAMMA)),
        _mm512_mullo_epi64(lane, _mm512_set1_epi64((long long)FR_SPLITMIX_GAMMA)));
    __m512i size_even = _mm512_sub_epi64(_mm512_set1_epi64((long long)(size + lead)),
                                         _mm512_slli_epi64(lane, 1));
    __m512i size_odd = _mm512_sub_epi64(size_even, _mm512_set1_epi64(1));
    ptrdiff_t base, t;
    for (base = 0; base < stop; base += 16) {
        __m512i z = fr_splitmix64_mix_avx512(counter);
        __m512i p_even = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), size_even);
        __m512i p_odd = _mm512_mul_epu32(z, size_odd);
        __m512i j_even = _mm512_srli_epi64(p_even, 32), j_odd = _mm512_srli_epi64(p_odd, 32);
        ptrdiff_t n_even = (stop - base + 1) >> 1, n_odd = (stop - base) >> 1;
        __mmask8 even = (__mmask8)(n_even >= 8 ? 0xFFu : (1u << n_even) - 1);
        __mmask8 odd = (__mmask8)(n_odd >= 8 ? 0xFFu : (1u << n_odd) - 1);
        __mmask8 hit_even, hit_odd;
        if (base == 0) /* the first number's high half: the step before */
            even &= (__mmask8) ~(unsigned)lead;
        hit_even = _mm512_mask_cmplt_epu64_mask(even, _mm512_and_si512(p_even, low_word),
                                                size_even);
        hit_odd = _mm512_mask_cmplt_epu64_mask(odd, _mm512_and_si512(p_odd, low_word),
                                               size_odd);
        for (t = 0; t < k; t++) {
            __m512i at = _mm512_set1_epi64((long long)u[t]);
            hit_even |= _mm512_mask_cmpeq_epi64_mask(even, j_even, at);
            hit_odd |= _mm512_mask_cmpeq_epi64_mask(odd, j_odd, at);
        }
        if (hit_even | hit_odd) {
            ptrdiff_t at_even = hit_even ? 2 * __builtin_ctz(hit_even) : 16;
            ptrdiff_t at_odd = hit_odd ? 2 * __builtin_ctz(hit_odd) + 1 : 16;
            return base + (at_even < at_odd ? at_even : at_odd) - lead;
        }
        counter = _mm512_add_epi64(counter,
                                   _mm512_set1_epi64((long long)(8 * FR_SPLITMIX_GAMMA)));
        size_even = _mm512_sub_epi64(size_even, _mm512_set1_epi64(16));
        size_odd = _mm512_sub_epi64(size_odd, _mm512_set1_epi64(16));
    }
    return n;
}
#endif

#endif
