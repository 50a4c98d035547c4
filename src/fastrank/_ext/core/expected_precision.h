/* The expected ranking's average precision, one tie group at a time: the sum that both the
 * sort-based kernel (tie_metrics) and the counting one (tie_counts) add, in one place so
 * that they give the same bits. */
#ifndef FASTRANK_EXPECTED_PRECISION_H
#define FASTRANK_EXPECTED_PRECISION_H

#include <stdint.h>

#include "simd.h"

/* inv[p] <- 1/p for 1 <= p <= q, inv[0] <- 0: the positions' reciprocals, which
 * fr_expected_precision_sum reads */
static inline void fr_position_reciprocals(double* inv, int64_t q) {
    int64_t p;
    inv[0] = 0.0;
    for (p = 1; p <= q; p++)
        inv[p] = 1.0 / (double)p;
}

/* A tie group at positions start + 1 .. start + s, holding a relevant labels, below c
 * relevant labels: in a random order of the group, its label at position start + k is
 * relevant with probability a/s and then has on average (c + 1) + (k - 1)(a - 1)/(s - 1)
 * relevant labels at or above it, so the group adds to the sum of the relevant labels'
 * precisions
 *     (a/s) sum_{k=1..s} [(c + 1)(s - 1) + (k - 1)(a - 1)] / [(s - 1)(start + k)]
 * (s = 1: (c + 1)/(start + 1), one division). Term k is its integer numerator (exact as a
 * double below 2^53) times inv[start + k] (fr_position_reciprocals), both rounded once;
 * it goes to partial sum (k - 1) mod 8, and the eight are added as ((p0 + p1) + (p2 + p3))
 * + ((p4 + p5) + (p6 + p7)), then divided by s - 1: one order on every path (the eight
 * partial sums are the lanes of one AVX-512 or two AVX2 vectors, each lane's products and
 * sums those of the portable loop). Within (s/8 + 6) roundings of the exact value. */
#define FR_EXPECTED_PRECISION_TOTAL(p, a, s)                                              \
    ((((p)[0] + (p)[1]) + ((p)[2] + (p)[3])) + (((p)[4] + (p)[5]) + ((p)[6] + (p)[7])))    \
        / (double)((s) - 1) * ((double)(a) / (double)(s))
static inline double fr_expected_precision_portable(int64_t c, int64_t a, int64_t s,
                                                    const double* r) {
    double p[8] = {0, 0, 0, 0, 0, 0, 0, 0}, num[8];
    double step = (double)(a - 1);
    int64_t k, l;
    for (l = 0; l < 8; l++) /* the numerators of terms l + 1 (integers: exact) */
        num[l] = (double)(c + 1) * (double)(s - 1) + (double)l * step;
    for (k = 0; k + 8 <= s; k += 8)
        for (l = 0; l < 8; l++) {
            p[l] += num[l] * r[k + l];
            num[l] += 8.0 * step;
        }
    for (l = 0; k + l < s; l++)
        p[l] += num[l] * r[k + l];
    return FR_EXPECTED_PRECISION_TOTAL(p, a, s);
}
#ifdef FR_X86
FR_TARGET_AVX512 static inline double fr_expected_precision_avx512(int64_t c, int64_t a,
                                                                   int64_t s,
                                                                   const double* r) {
    const __m512d step = _mm512_set1_pd((double)(a - 1));
    const __m512d step8 = _mm512_set1_pd(8.0 * (double)(a - 1));
    __m512d p = _mm512_setzero_pd();
    __m512d num = _mm512_add_pd(_mm512_set1_pd((double)(c + 1) * (double)(s - 1)),
                                _mm512_mul_pd(_mm512_setr_pd(0, 1, 2, 3, 4, 5, 6, 7), step));
    double lanes[8];
    int64_t k;
    for (k = 0; k + 8 <= s; k += 8) {
        p = _mm512_add_pd(p, _mm512_mul_pd(num, _mm512_loadu_pd(r + k)));
        num = _mm512_add_pd(num, step8);
    }
    if (k < s) {
        __mmask8 tail = (__mmask8)((1u << (s - k)) - 1);
        p = _mm512_mask_add_pd(p, tail, p,
                               _mm512_mul_pd(num, _mm512_maskz_loadu_pd(tail, r + k)));
    }
    _mm512_storeu_pd(lanes, p);
    return FR_EXPECTED_PRECISION_TOTAL(lanes, a, s);
}
FR_TARGET_AVX2 static inline double fr_expected_precision_avx2(int64_t c, int64_t a,
                                                               int64_t s, const double* r) {
    const __m256d step = _mm256_set1_pd((double)(a - 1));
    const __m256d step8 = _mm256_set1_pd(8.0 * (double)(a - 1));
    const __m256d num0 = _mm256_set1_pd((double)(c + 1) * (double)(s - 1));
    __m256d p0 = _mm256_setzero_pd(), p1 = _mm256_setzero_pd();
    __m256d n0 = _mm256_add_pd(num0, _mm256_mul_pd(_mm256_setr_pd(0, 1, 2, 3), step));
    __m256d n1 = _mm256_add_pd(num0, _mm256_mul_pd(_mm256_setr_pd(4, 5, 6, 7), step));
    double lanes[8];
    int64_t k, l;
    for (k = 0; k + 8 <= s; k += 8) {
        p0 = _mm256_add_pd(p0, _mm256_mul_pd(n0, _mm256_loadu_pd(r + k)));
        p1 = _mm256_add_pd(p1, _mm256_mul_pd(n1, _mm256_loadu_pd(r + k + 4)));
        n0 = _mm256_add_pd(n0, step8);
        n1 = _mm256_add_pd(n1, step8);
    }
    _mm256_storeu_pd(lanes, p0);
    _mm256_storeu_pd(lanes + 4, p1);
    {
        double num[8];
        _mm256_storeu_pd(num, n0);
        _mm256_storeu_pd(num + 4, n1);
        for (l = 0; k + l < s; l++)
            lanes[l] += num[l] * r[k + l];
    }
    return FR_EXPECTED_PRECISION_TOTAL(lanes, a, s);
}
#endif

/* The group's sum above, by the path of the given instruction-set level (_simd): the same
 * bits on each. inv: fr_position_reciprocals of at least start + s positions. */
static inline double fr_expected_precision_sum(int level, int64_t c, int64_t a, int64_t s,
                                               int64_t start, const double* inv) {
    (void)level;
    if (s == 1)
        return (double)(c + 1) / (double)(start + 1);
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512)
        return fr_expected_precision_avx512(c, a, s, inv + start + 1);
    if (level >= FR_SIMD_AVX2)
        return fr_expected_precision_avx2(c, a, s, inv + start + 1);
#endif
    return fr_expected_precision_portable(c, a, s, inv + start + 1);
}

#endif
