/* The draws and the search of the followed shuffle (follow.h) with AVX-512: sixteen steps'
   places a pass, their eight numbers mixed in 64-bit lanes (AVX-512 DQ's 64-bit products);
   sixteen places compared a pass. */
#ifndef FR_FOLLOW_AVX512_INL_H
#define FR_FOLLOW_AVX512_INL_H

#include <stddef.h>
#include <stdint.h>

#include "../shuffle.h"
#include "../simd.h"
#include "avx2-inl.h"
#include "common-inl.h"

#ifdef FR_X86
static FR_TARGET_AVX512_DQ inline __m512i fr_splitmix64_mix_avx512(__m512i z) {
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)),
                           _mm512_set1_epi64((long long)FR_SPLITMIX_M1));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)),
                           _mm512_set1_epi64((long long)FR_SPLITMIX_M2));
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* places[t .. ] <- the places steps t .. of the group draw (fr_group_place), step + t
   even, sixteen a pass until end is passed (fr_redraw_places); returns where they stop. */
static FR_TARGET_AVX512_DQ ptrdiff_t fr_draw_places_avx512(int32_t* places, ptrdiff_t t,
                                                           ptrdiff_t end, ptrdiff_t m,
                                                           uint64_t row, ptrdiff_t step) {
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i low_word = _mm512_set1_epi64(0xFFFFFFFFLL);
    __m512i counter = _mm512_add_epi64(
        _mm512_set1_epi64((long long)(row + (uint64_t)(((step + t) >> 1) + 1)
                                                * FR_SPLITMIX_GAMMA)),
        _mm512_mullo_epi64(lane, _mm512_set1_epi64((long long)FR_SPLITMIX_GAMMA)));
    __m512i size_even = _mm512_sub_epi64(_mm512_set1_epi64((long long)(m - t)),
                                         _mm512_slli_epi64(lane, 1));
    for (; t < end; t += 16) {
        const __m512i size_odd = _mm512_sub_epi64(size_even, _mm512_set1_epi64(1));
        const __m512i z = fr_splitmix64_mix_avx512(counter);
        const __m512i p_even = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), size_even);
        const __m512i p_odd = _mm512_mul_epu32(z, size_odd);
        /* (signed: the lanes past the group's last step, their sizes below 1, not redrawn) */
        const unsigned redo =
            _mm512_cmpgt_epi64_mask(size_even, _mm512_and_si512(p_even, low_word))
            | (unsigned)_mm512_cmpgt_epi64_mask(size_odd, _mm512_and_si512(p_odd, low_word))
                  << 8;
        _mm512_storeu_si512(places + t,
                            _mm512_or_si512(_mm512_srli_epi64(p_even, 32),
                                            _mm512_andnot_si512(low_word, p_odd)));
        fr_redraw_places(places, t, redo, 16, m, row, step);
        counter = _mm512_add_epi64(counter,
                                   _mm512_set1_epi64((long long)(8 * FR_SPLITMIX_GAMMA)));
        size_even = _mm512_sub_epi64(size_even, _mm512_set1_epi64(16));
    }
    return t;
}

/* fr_shuffled_positions for a group of 2 .. 65 labels whose steps' places[0:steps] are all
   drawn: held in four vectors, each search of them four comparisons into a 64-bit mask
   of steps (FR_FOLLOW_DRAWN). */
static FR_TARGET_AVX512 void fr_follow_drawn_avx512(ptrdiff_t* pos, ptrdiff_t k,
                                                    ptrdiff_t steps, const int32_t* places) {
    __m512i drawn[4];
    int v;
    for (v = 0; v < 4; v++) {
        const ptrdiff_t left = steps - 16 * v;
        drawn[v] = _mm512_maskz_loadu_epi32(
                left >= 16 ? (__mmask16) ~0u : left > 0 ? (__mmask16) ((1u << left) - 1) : 0,
                places + 16 * v);
    }
#define FR_DRAWN_AVX512(p, hits)                                                         \
    do {                                                                                 \
        const __m512i want = _mm512_set1_epi32((int32_t) (p));                          \
        hits = (uint64_t) _mm512_cmpeq_epi32_mask(drawn[0], want)                        \
               | (uint64_t) _mm512_cmpeq_epi32_mask(drawn[1], want) << 16                \
               | (uint64_t) _mm512_cmpeq_epi32_mask(drawn[2], want) << 32                \
               | (uint64_t) _mm512_cmpeq_epi32_mask(drawn[3], want) << 48;               \
    } while (0)
    FR_FOLLOW_DRAWN(pos, k, steps, places, FR_DRAWN_AVX512);
#undef FR_DRAWN_AVX512
}

/* the first u of from .. to - 1 with places[u] == p; to when none */
static FR_TARGET_AVX512 ptrdiff_t fr_find_place_avx512(const int32_t* places, ptrdiff_t from,
                                                       ptrdiff_t to, int32_t p) {
    const __m512i want = _mm512_set1_epi32(p);
    ptrdiff_t u;
    for (u = from; u < to; u += 16) {
        __mmask16 in = to - u >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (to - u)) - 1);
        __mmask16 hit = _mm512_mask_cmpeq_epi32_mask(
            in, _mm512_maskz_loadu_epi32(in, places + u), want);
        if (hit)
            return u + __builtin_ctz(hit);
    }
    return to;
}
#endif

#endif
