/* The expected ranking's average precision, one tie group at a time: the sum that both the
 * sort-based kernel (tie_metrics) and the counting one (tie_counts) add, in one place so
 * that they give the same bits. */
#ifndef FASTRANK_EXPECTED_PRECISION_H
#define FASTRANK_EXPECTED_PRECISION_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* Error-free transformations (Knuth's two-sum, Dekker's product; rounding to nearest, no
 * contraction into FMA): hi + lo equals the exact sum or product. */
static inline void fr_two_sum(double a, double b, double* hi, double* lo) {
    double s = a + b, bb = s - a;
    *hi = s;
    *lo = (a - (s - bb)) + (b - bb);
}
static inline void fr_split(double a, double* hi, double* lo) {
    double t = 134217729.0 * a; /* 2^27 + 1 */
    *hi = t - (t - a);
    *lo = a - *hi;
}
static inline void fr_two_product(double a, double b, double* hi, double* lo) {
    double ah, al, bh, bl, p = a * b;
    fr_split(a, &ah, &al);
    fr_split(b, &bh, &bl);
    *hi = p;
    *lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

/* h[2p] + h[2p + 1] <- the harmonic number H_p = 1 + 1/2 + ... + 1/p, 0 <= p <= q, as an
 * unevaluated sum of two doubles (each 1/p to about 2^-105 of itself, summed with the
 * rounding error of every addition carried along): fr_expected_precision_sum reads them. */
static inline void fr_harmonic_numbers(double* h, int64_t q) {
    double hi = 0.0, lo = 0.0, r, rl, ph, pl, e;
    int64_t p;
    h[0] = h[1] = 0.0;
    for (p = 1; p <= q; p++) {
        r = 1.0 / (double)p;
        fr_two_product(r, (double)p, &ph, &pl);
        rl = ((1.0 - ph) - pl) / (double)p; /* 1/p - r, to about 2^-53 of itself */
        fr_two_sum(hi, r, &hi, &e);
        lo += e + rl;
        fr_two_sum(hi, lo, &hi, &lo);
        h[2 * p] = hi;
        h[2 * p + 1] = lo;
    }
}

/* fr_harmonic_numbers of q positions in a new array (free it); NULL when out of memory. */
static inline double* fr_harmonic_numbers_new(int64_t q) {
    double* h = (double*)malloc(2 * (size_t)(q + 1) * sizeof(double));
    if (h != NULL)
        fr_harmonic_numbers(h, q);
    return h;
}

/* fr_harmonic_numbers of at least q positions, one table for the process: for callers
 * that evaluate a row at a time (the C API), which would otherwise build q of them (about
 * 6 us at q = 1 000) for every row. Built on first use, and again with at least twice the
 * positions when a larger q comes; a replaced table stays allocated, since another thread
 * may still read it (all of them together are under twice the largest). NULL when out of
 * memory. */
typedef struct fr_harmonic_table {
    int64_t q;
    double h[];
} fr_harmonic_table;
static _Atomic(fr_harmonic_table*) fr_harmonic_shared = NULL;
static inline const double* fr_shared_harmonic_numbers(int64_t q) {
    fr_harmonic_table* t = atomic_load_explicit(&fr_harmonic_shared, memory_order_acquire);
    fr_harmonic_table* fresh;
    int64_t size;
    while (t == NULL || t->q < q) {
        size = t != NULL && 2 * t->q > q ? 2 * t->q : q;
        fresh = (fr_harmonic_table*)malloc(sizeof(fr_harmonic_table)
                                           + 2 * (size_t)(size + 1) * sizeof(double));
        if (fresh == NULL)
            return NULL;
        fresh->q = size;
        fr_harmonic_numbers(fresh->h, size);
        if (atomic_compare_exchange_strong_explicit(&fr_harmonic_shared, &t, fresh,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire))
            return fresh->h;
        free(fresh); /* another thread published one first: t is now that one */
    }
    return t->h;
}

/* A tie group at positions start + 1 .. start + s, holding a relevant labels, below c
 * relevant labels: in a random order of the group, its label at position start + k is
 * relevant with probability a/s and then has on average (c + 1) + (k - 1)(a - 1)/(s - 1)
 * relevant labels at or above it, so the group adds to the sum of the relevant labels'
 * precisions
 *     (a/s) sum_{k=1..s} [(c + 1)(s - 1) + (k - 1)(a - 1)] / [(s - 1)(start + k)]
 *   = (a/s) [D (H_{start+s} - H_start) + s (a - 1)] / (s - 1),
 * D = (c + 1)(s - 1) - (start + 1)(a - 1), an integer (s = 1: (c + 1)/(start + 1)). The
 * bracket is formed from the harmonic numbers h (fr_harmonic_numbers, at least start + s
 * of them) in double-double arithmetic and rounded once, so the group's value is within
 * four roundings of the exact one, in constant time, with the same bits on every
 * instruction-set path (plain scalar arithmetic). */
static inline double fr_expected_precision_sum(int64_t c, int64_t a, int64_t s, int64_t start,
                                               const double* h) {
    double dh, dl, e, ph, pl, sh, sl;
    double d = (double)((c + 1) * (s - 1) - (start + 1) * (a - 1));
    if (s == 1)
        return (double)(c + 1) / (double)(start + 1);
    /* H_{start+s} - H_start as dh + dl */
    fr_two_sum(h[2 * (start + s)], -h[2 * start], &dh, &e);
    dl = e + (h[2 * (start + s) + 1] - h[2 * start + 1]);
    fr_two_sum(dh, dl, &dh, &dl);
    /* D (dh + dl) + s (a - 1), the last exact */
    fr_two_product(d, dh, &ph, &pl);
    fr_two_sum(ph, (double)(s * (a - 1)), &sh, &sl);
    return (sh + (sl + (pl + d * dl))) / (double)(s - 1) * ((double)a / (double)s);
}

#endif
