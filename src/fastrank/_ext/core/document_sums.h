/* The per-document sums of a block of evaluate's rows (fastrank.metrics.Evaluator), each
   in numpy's summation order (numpy_sum.h) over values computed as NumPy computes them:
   the bits of the NumPy form of these sums, for any number of threads. */
#ifndef FR_DOCUMENT_SUMS_H
#define FR_DOCUMENT_SUMS_H

#include <stdint.h>

#include "numpy_sum.h"

/* Sums per ranking type: the five ranking metrics, then Hamming loss, exact match,
   precision, recall, F1, tp, npred and |C| of each document. */
#define FR_DOCUMENT_SUMS 13

/* v[i] <- value k (0 .. FR_DOCUMENT_SUMS - 1) of document i of the n rows of doc (n_cols
   doubles each), times w[i] when w is not NULL. cols: the ranking type's columns of the
   five ranking metrics, tp, npred and exact match (-1: exact when npred = tp = |C|);
   nrel: the column of |C|. Values 5 to 9: (npred + |C| - 2 tp) / q, exact match,
   tp / npred, tp / |C| and 2 tp / (|C| + npred), each zd where its denominator is 0. */
static void fr_document_values(const double* doc, int64_t n, int64_t n_cols,
                               const int64_t* cols, int64_t nrel, int k, double q, double zd,
                               const double* w, double* v) {
    int64_t i;
    for (i = 0; i < n; i++) {
        const double* row = doc + i * n_cols;
        double tp = row[cols[5]], npred = row[cols[6]], rel = row[nrel], x, den;
        switch (k) {
        case 5: x = ((npred + rel) - 2.0 * tp) / q; break;
        case 6: x = cols[7] >= 0 ? row[cols[7]] : (npred == rel && tp == rel) ? 1.0 : 0.0;
                break;
        case 7: x = npred > 0 ? tp / npred : zd; break;
        case 8: x = rel > 0 ? tp / rel : zd; break;
        case 9: den = rel + npred; x = den > 0 ? (2.0 * tp) / den : zd; break;
        case 10: x = tp; break;
        case 11: x = npred; break;
        case 12: x = rel; break;
        default: x = row[cols[k]];   /* 0 .. 4: the ranking metrics */
        }
        v[i] = w != NULL ? x * w[i] : x;
    }
}

#endif
