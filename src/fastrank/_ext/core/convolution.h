/* The convolution of a distribution with a kernel, for the exact expected precision^c and
 * F1^c of tie_metrics (a Poisson-binomial distribution built one class of indicators at a
 * time): dst[t] <- the sum over j of ker[j] src[t - j] (0 <= j < kw, 0 <= t - j < w) for
 * t < w + kw - 1, the terms in ascending j, each a product then an addition (never fused),
 * the first taken as it is. Each output in one pass (the kernel's taps read from src, not
 * added into dst tap by tap); with AVX2 four outputs a vector: the same operations in the
 * same order, so the same bits on every path. */
#ifndef FASTRANK_CONVOLUTION_H
#define FASTRANK_CONVOLUTION_H

#include <stddef.h>

#include "simd.h"

/* outputs t0 <= t < t1 */
static inline void fr_convolve_range(const double* src, ptrdiff_t w, const double* ker,
                                     ptrdiff_t kw, double* dst, ptrdiff_t t0, ptrdiff_t t1) {
    ptrdiff_t t, j, lo, hi;
    double x;
    for (t = t0; t < t1; t++) {
        lo = t - w + 1 > 0 ? t - w + 1 : 0;
        hi = t < kw - 1 ? t : kw - 1;
        x = ker[lo] * src[t - lo];
        for (j = lo + 1; j <= hi; j++)
            x += ker[j] * src[t - j];
        dst[t] = x;
    }
}

#ifdef FR_X86
/* the outputs whose every tap lies in src (kw - 1 <= t < w) four at a time, the others by
   fr_convolve_range */
static FR_TARGET_AVX2 void fr_convolve_avx2(const double* src, ptrdiff_t w, const double* ker,
                                            ptrdiff_t kw, double* dst) {
    const ptrdiff_t full = kw - 1 < w ? kw - 1 : w; /* the first such output, or w: none */
    ptrdiff_t t, j;
    __m256d x;
    fr_convolve_range(src, w, ker, kw, dst, 0, full);
    for (t = full; t + 4 <= w; t += 4) {
        x = _mm256_mul_pd(_mm256_set1_pd(ker[0]), _mm256_loadu_pd(src + t));
        for (j = 1; j < kw; j++)
            x = _mm256_add_pd(x, _mm256_mul_pd(_mm256_set1_pd(ker[j]),
                                               _mm256_loadu_pd(src + t - j)));
        _mm256_storeu_pd(dst + t, x);
    }
    fr_convolve_range(src, w, ker, kw, dst, t, w + kw - 1);
}
#endif

static inline void fr_convolve(int level, const double* src, ptrdiff_t w, const double* ker,
                               ptrdiff_t kw, double* dst) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX2) {
        fr_convolve_avx2(src, w, ker, kw, dst);
        return;
    }
#endif
    (void) level;
    fr_convolve_range(src, w, ker, kw, dst, 0, w + kw - 1);
}

#endif
