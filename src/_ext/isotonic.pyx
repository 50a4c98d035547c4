# cython: language_level=3
"""Pool-adjacent-violators isotonic regression of binary labels on scores, tied scores
pooled first (matsubara2008 §5.1.2, §5.2). Wrapper: ``fastrank.calibration.Isotonic``.

The scores are sorted once with the shared core (``_tiesort``, descending); the tie groups
are visited from the lowest score up, each pushed as one block (its positives, its size, its
score), and a block is merged into the one below while that one's positive rate is not
smaller -- so fitted values are nondecreasing and adjacent blocks have distinct values. Rates
are compared exactly (cross-multiplied int64 counts). The blocks are the segments of the ROC
convex hull in coverage space (ROCCH == PAV).
"""
from libc.stdint cimport int64_t

from _tiesort cimport SortWork, floating, sort_dense_row, sort_work_free, sort_work_new


def pav(const floating[::1] scores, const unsigned char[::1] y, double[::1] thresholds,
        int64_t[::1] positives, int64_t[::1] counts):
    """Fit PAV. Block b (ascending) covers the scores from thresholds[b] up to the next
    threshold, holds counts[b] examples of which positives[b] are positive; its calibrated
    value is positives[b] / counts[b]. Outputs need room for len(scores) blocks; returns
    the number of blocks."""
    cdef Py_ssize_t m = scores.shape[0], stop, start, p, k = 0
    cdef int64_t g_pos, g_n
    cdef double thr
    cdef SortWork* w = sort_work_new(m)
    if w == NULL:
        raise MemoryError("fastrank: cannot allocate isotonic scratch")
    with nogil:
        sort_dense_row(&scores[0], 1, m, w)
        stop = m
        while stop > 0:
            # the tie group ending at `stop` (descending order) starts where the previous ends
            start = stop - 1
            while start > 0 and w.end[start - 1] == stop:
                start -= 1
            g_pos = 0
            for p in range(start, stop):
                g_pos += y[w.order[p]]
            g_n = stop - start
            thr = <double> scores[w.order[start]]
            # pool while the block below has a rate >= this one's: pos_b/n_b >= g_pos/g_n
            while k > 0 and positives[k - 1] * g_n >= g_pos * counts[k - 1]:
                k -= 1
                g_pos += positives[k]
                g_n += counts[k]
                thr = thresholds[k]
            thresholds[k] = thr
            positives[k] = g_pos
            counts[k] = g_n
            k += 1
            stop = start
    sort_work_free(w)
    return k
