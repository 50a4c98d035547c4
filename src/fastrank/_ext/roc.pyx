# cython: language_level=3
"""ROC kernels: AUC of many score lines (columns or rows) with tie blocks, ROC points and
the ROC convex hull (matsubara2008 §4). The Python wrapper is ``fastrank.metrics._roc``.

A *line* is one binary problem: a column of an (n, q) belief matrix (one label), a row (one
document's labels) or the whole flattened matrix (micro). Each line is sorted once with the
shared core (``_tiesort``); a tie group with g+ positives and g- negatives is one diagonal
ROC segment, so AUC counts its g+ * g- pairs as 1/2. Pair counts are kept exactly in int64
(twice the wrong-pair count), so the AUC is exact up to the final division. With per-element
weights the counts become weight sums (float64): a pair (a, b) counts ``w_a * w_b``.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport NAN
from libc.stdint cimport int32_t, int64_t

ctypedef fused count_t:
    int64_t
    double

from _tiesort cimport (
    SortWork, floating, index_t, sort_dense_row, sort_row_at, sort_work_free, sort_work_new,
)


cdef inline double _auc_sorted(const int32_t* order, const int32_t* end, Py_ssize_t m,
                               const unsigned char* truth, Py_ssize_t t_stride) noexcept nogil:
    """AUC of one sorted line: 1 - (wrong pairs + tied pairs / 2) / (P N); NaN if P or N is 0.
    Walking down the ranking, a positive loses to every negative seen in earlier groups."""
    cdef Py_ssize_t start = 0, stop, p
    cdef int64_t g_pos, g_neg, pos = 0, neg = 0, wrong2 = 0
    while start < m:
        stop = end[start]
        g_pos = 0
        for p in range(start, stop):
            g_pos += truth[<Py_ssize_t> order[p] * t_stride]
        g_neg = (stop - start) - g_pos
        wrong2 += g_pos * (2 * neg + g_neg)
        pos += g_pos
        neg += g_neg
        start = stop
    if pos == 0 or neg == 0:
        return NAN
    return 1.0 - <double> wrong2 / (2.0 * <double> pos * <double> neg)


cdef inline double _auc_sorted_weighted(const int32_t* order, const int32_t* end, Py_ssize_t m,
                                        const unsigned char* truth, const double* weight,
                                        Py_ssize_t t_stride, Py_ssize_t w_stride) noexcept nogil:
    """As _auc_sorted with element weights: 1 - (wrong + tied / 2) / (P N), P and N the
    weight sums of the positives and negatives, a pair weighing the product of its weights."""
    cdef Py_ssize_t start = 0, stop, p, e
    cdef double g_pos, g_neg, pos = 0, neg = 0, wrong = 0
    while start < m:
        stop = end[start]
        g_pos = 0
        g_neg = 0
        for p in range(start, stop):
            e = order[p]
            if truth[e * t_stride]:
                g_pos += weight[e * w_stride]
            else:
                g_neg += weight[e * w_stride]
        wrong += g_pos * (neg + 0.5 * g_neg)
        pos += g_pos
        neg += g_neg
        start = stop
    if pos == 0 or neg == 0:
        return NAN
    return 1.0 - wrong / (pos * neg)


def auc_lines(const floating[::1] values, Py_ssize_t line_stride, Py_ssize_t elem_stride,
              const index_t[::1] indices, const index_t[::1] indptr, Py_ssize_t n_lines,
              Py_ssize_t length, const unsigned char[::1] truth, Py_ssize_t t_line_stride,
              Py_ssize_t t_elem_stride, const double[::1] weights, double[::1] out):
    """out[i] <- AUC of line i, in parallel (OpenMP), one sort each. Lines of a dense buffer
    (indices/indptr empty): element e of line i is values[i * line_stride + e *
    elem_stride]; or the lines of a canonical compressed matrix (CSR rows, or CSC columns as
    the CSR of the transpose; strides unused), whose implicit zeros form one tie group.
    The truth of element e of line i is truth[i * t_line_stride + e * t_elem_stride]; its
    weight (when ``weights`` is not empty) weights[e], the same for every line."""
    cdef SortWork* w = NULL  # each thread sets its own
    cdef Py_ssize_t i
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const index_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef const double* wp = &weights[0] if weights.shape[0] else NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(length)
        if w == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for i in prange(n_lines, schedule="dynamic"):
            if w == NULL:
                continue
            sort_row_at(vp, line_stride, elem_stride, ip, pp, i, length, w)
            if wp == NULL:
                out[i] = _auc_sorted(w.order, w.end, length, &truth[i * t_line_stride],
                                     t_elem_stride)
            else:
                out[i] = _auc_sorted_weighted(w.order, w.end, length,
                                              &truth[i * t_line_stride], wp, t_elem_stride, 1)
        sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate AUC scratch")


def coverage_points(const floating[::1] scores, const unsigned char[::1] truth,
                    double[::1] thresholds, count_t[::1] tp, count_t[::1] fp,
                    const double[::1] weights=None):
    """One point per distinct score, in decreasing score order: thresholds[g] is the score of
    tie group g, tp[g]/fp[g] the positives/negatives scoring >= it (counts, int64; or weight
    sums, float64, when ``weights`` are given). Returns the group count."""
    cdef Py_ssize_t m = scores.shape[0], start = 0, stop, p, g = 0
    cdef count_t pos = 0, neg = 0, g_pos, g_neg
    cdef const double* wp = NULL
    if weights is not None and weights.shape[0]:
        wp = &weights[0]
    if count_t is int64_t and wp != NULL:
        raise TypeError("weighted ROC points are float64 sums")
    cdef SortWork* w = sort_work_new(m)
    if w == NULL:
        raise MemoryError("fastrank: cannot allocate ROC scratch")
    with nogil:
        sort_dense_row(&scores[0], 1, m, w)
        while start < m:
            stop = w.end[start]
            g_pos = 0
            g_neg = 0
            if wp == NULL:
                for p in range(start, stop):
                    g_pos += truth[w.order[p]]
                g_neg = (stop - start) - g_pos
            else:
                for p in range(start, stop):
                    if truth[w.order[p]]:
                        g_pos += <count_t> wp[w.order[p]]
                    else:
                        g_neg += <count_t> wp[w.order[p]]
            pos += g_pos
            neg += g_neg
            thresholds[g] = <double> scores[w.order[start]]
            tp[g] = pos
            fp[g] = neg
            g += 1
            start = stop
    sort_work_free(w)
    return g


def upper_hull(const count_t[::1] x, const count_t[::1] y, int64_t[::1] out):
    """Indices of the upper convex hull of points sorted by (x, y) ascending (a coverage
    curve): collinear and dominated points are dropped. Exact integer arithmetic on counts,
    floating point on weight sums (float64)."""
    cdef Py_ssize_t m = x.shape[0], i, k = 0
    cdef int64_t a, b
    with nogil:
        for i in range(m):
            while k >= 2:
                a = out[k - 2]
                b = out[k - 1]
                # pop b unless a -> b -> i turns clockwise (b strictly above chord a -> i)
                if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) >= 0:
                    k -= 1
                else:
                    break
            out[k] = i
            k += 1
    return k
