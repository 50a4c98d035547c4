/* numpy's summation order, so that a sum or mean computed in C has the bits numpy gives. */
#ifndef FR_NUMPY_SUM_H
#define FR_NUMPY_SUM_H

/* numpy's sum of n doubles (pairwise: blocks of at most 128 summed with 8 accumulators),
   so that a mean here has the bits of numpy.mean of the same values. */
static double fr_pairwise_sum(const double* a, long long n) {
    if (n < 8) {
        double r = 0.0;
        long long i;
        for (i = 0; i < n; i++) r += a[i];
        return r;
    }
    if (n <= 128) {
        double r[8], res;
        long long i, j;
        for (j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++) r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    } else {
        long long n2 = n / 2;
        n2 -= n2 % 8;
        return fr_pairwise_sum(a, n2) + fr_pairwise_sum(a + n2, n - n2);
    }
}

#endif
