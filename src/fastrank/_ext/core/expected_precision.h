/* The expected ranking's average precision, one tie group at a time: the sum that both the
 * sort-based kernel (tie_metrics) and the counting one (tie_counts) add, in one place so
 * that they give the same bits. */
#ifndef FASTRANK_EXPECTED_PRECISION_H
#define FASTRANK_EXPECTED_PRECISION_H

#include <stdint.h>

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
 * + ((p4 + p5) + (p6 + p7)), then divided by s - 1: one order, whether or not the compiler
 * vectorises the loop. Within (s/8 + 6) roundings of the exact value. */
static inline double fr_expected_precision_sum(int64_t c, int64_t a, int64_t s,
                                               int64_t start, const double* inv) {
    double p[8] = {0, 0, 0, 0, 0, 0, 0, 0}, num[8];
    double step;
    const double* r = inv + start + 1;
    int64_t k, l;
    if (s == 1)
        return (double)(c + 1) / (double)(start + 1);
    step = (double)(a - 1);
    for (l = 0; l < 8; l++) /* the numerators of terms l + 1 (integers: exact) */
        num[l] = (double)(c + 1) * (double)(s - 1) + (double)l * step;
    for (k = 0; k + 8 <= s; k += 8)
        for (l = 0; l < 8; l++) {
            p[l] += num[l] * r[k + l];
            num[l] += 8.0 * step;
        }
    for (l = 0; k + l < s; l++)
        p[l] += num[l] * r[k + l];
    return ((((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])))
            / (double)(s - 1) * ((double)a / (double)s));
}

#endif
