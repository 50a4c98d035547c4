/* The popcount scan with AVX-512 VPOPCNTDQ (fr_scan_vpopcnt). */
#ifndef FR_HAMMING_AVX512_INL_H
#define FR_HAMMING_AVX512_INL_H
#include "common.h"
#include "popcnt-inl.h"

#ifdef FR_X86
/* VPOPCNTDQ scan of patterns of 8 k words (k <= 4): each stored pattern's words XORed
   with the test pattern's and counted 8 at a time; the 8 lane sums of 4 patterns are
   packed into 16-bit fields (each at most 256) and added across lanes at once. */
FR_TARGET_VPOPCNT static void fr_scan_vpopcnt8k(const uint64_t* M, int64_t t0, int64_t t1,
                                                const uint64_t* c, int64_t W, int32_t* ties,
                                                fr_track* r) {
    __m512i q[4], a[4], s;
    uint32_t m = r->m, d;
    int64_t k = r->k, t, e, n = W / 8, j;
    uint64_t packed;
    for (j = 0; j < n; j++) q[j] = _mm512_loadu_si512((const void*) (c + 8 * j));
    for (t = t0; t + 4 <= t1; t += 4) {
        for (e = 0; e < 4; e++) {
            const uint64_t* p = M + (t + e) * W;
            a[e] = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(p), q[0]));
            for (j = 1; j < n; j++)
                a[e] = _mm512_add_epi64(a[e], _mm512_popcnt_epi64(_mm512_xor_si512(
                    _mm512_loadu_si512((const void*) (p + 8 * j)), q[j])));
        }
        s = _mm512_or_si512(_mm512_or_si512(a[0], _mm512_slli_epi64(a[1], 16)),
                            _mm512_or_si512(_mm512_slli_epi64(a[2], 32),
                                            _mm512_slli_epi64(a[3], 48)));
        packed = (uint64_t) _mm512_reduce_add_epi64(s);
        for (e = 0; e < 4; e++) {
            d = (uint32_t) ((packed >> (16 * e)) & 0xFFFF);
            FR_TRACK(d, t + e);
        }
    }
    for (; t < t1; t++) {
        const uint64_t* p = M + t * W;
        s = _mm512_setzero_si512();
        for (j = 0; j < n; j++)
            s = _mm512_add_epi64(s, _mm512_popcnt_epi64(_mm512_xor_si512(
                _mm512_loadu_si512((const void*) (p + 8 * j)), q[j])));
        d = (uint32_t) _mm512_reduce_add_epi64(s);
        FR_TRACK(d, t);
    }
    r->m = m; r->k = k;
}
/* the VPOPCNTDQ scan for widths of 8, 16, 24 or 32 words, the POPCNT scan for others */
FR_TARGET_VPOPCNT static void fr_scan_vpopcnt(const uint64_t* M, int64_t t0, int64_t t1,
                                              const uint64_t* c, int64_t W, int32_t* ties,
                                              fr_track* r) {
    if (W % 8 == 0 && W <= 32) fr_scan_vpopcnt8k(M, t0, t1, c, W, ties, r);
    else fr_scan_popcnt(M, t0, t1, c, W, ties, r);
}
#endif

#endif
