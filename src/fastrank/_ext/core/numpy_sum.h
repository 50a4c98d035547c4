/* numpy's summation order, so that a sum or mean computed in C has the bits numpy gives. */
#ifndef FR_NUMPY_SUM_H
#define FR_NUMPY_SUM_H

#include <stddef.h>

#include "simd.h"

/* The recursive sums below stay single functions (FR_SINGLE_COPY: inlined into themselves
   and cloned per call site they cost kilobytes for nothing; the work is in their blocks of
   128). */

/* Where numpy's pairwise sum splits n > 128 values: the first half, rounded down to a
   multiple of 8 */
static inline long long fr_pairwise_half(long long n) {
    return n / 2 - (n / 2) % 8;
}

/* numpy's sum of the n values a[i * stride], each times w[i] when w is not NULL (the
   products rounded: numpy's sum of the array a * w): pairwise, blocks of at most 128
   summed with 8 accumulators, so that a mean here has the bits of numpy.mean of the same
   values. */
FR_SINGLE_COPY double fr_pairwise_sum_strided(const double* a, long long stride,
                                              const double* w, long long n) {
#define FR_TERM(i) (w ? a[(i) * stride] * w[i] : a[(i) * stride])
    if (n < 8) {
        double r = 0.0;
        long long i;
        for (i = 0; i < n; i++) r += FR_TERM(i);
        return r;
    }
    if (n <= 128) {
        double r[8], res;
        long long i, j;
        for (j = 0; j < 8; j++) r[j] = FR_TERM(j);
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++) r[j] += FR_TERM(i + j);
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += FR_TERM(i);
        return res;
    } else {
        long long n2 = fr_pairwise_half(n);
        return fr_pairwise_sum_strided(a, stride, w, n2)
            + fr_pairwise_sum_strided(a + n2 * stride, stride, w ? w + n2 : NULL, n - n2);
    }
#undef FR_TERM
}

/* numpy's sum of a[0:n] */
static inline double fr_pairwise_sum(const double* a, long long n) {
    return fr_pairwise_sum_strided(a, 1, NULL, n);
}

/* The same sum in parts, each summed on its own (a thread's work): the pieces of a[0:n]
   are the halves that the pairwise sum splits off, down `depth` levels or to blocks of at
   most 128 values. fr_pairwise_pieces writes their starts, offset by start, to first[0:k]
   and their end, start + n, to first[k], and returns k <= 2^depth; fr_pairwise_join adds
   their sums (in order) as the pairwise sum does: the bits of fr_pairwise_sum_strided over
   the whole. */
FR_SINGLE_COPY long long fr_pairwise_pieces(long long n, int depth, long long start,
                                             long long* first) {
    long long n2 = fr_pairwise_half(n), k;
    if (depth == 0 || n <= 128) {
        first[0] = start;
        first[1] = start + n;
        return 1;
    }
    k = fr_pairwise_pieces(n2, depth - 1, start, first);
    return k + fr_pairwise_pieces(n - n2, depth - 1, start + n2, first + k);
}
FR_SINGLE_COPY double fr_pairwise_join(const double* sums, long long n, int depth,
                                        long long* used) {
    long long n2 = fr_pairwise_half(n);
    double left;
    if (depth == 0 || n <= 128)
        return sums[(*used)++];
    left = fr_pairwise_join(sums, n2, depth - 1, used);
    return left + fr_pairwise_join(sums, n - n2, depth - 1, used);
}

#endif
