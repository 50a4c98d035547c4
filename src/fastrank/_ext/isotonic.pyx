# cython: language_level=3
"""Pool-adjacent-violators over tie groups (matsubara2008 §5.1.2, §5.2). Wrapper:
``fastrank.calibration.Isotonic``, which takes the groups from the ROC kernel
(``roc.coverage_points``: one sort, one block per distinct score), so tied scores are pooled
first and the pooled blocks are the segments of the ROC convex hull (ROCCH == PAV).
"""
from libc.stdint cimport int64_t


def pav(double[::1] thresholds, int64_t[::1] positives, int64_t[::1] counts):
    """Pool blocks given in increasing score order, in place: block b holds counts[b]
    examples scoring thresholds[b], positives[b] of them positive. A block is merged into the
    one below while that one's positive rate is not smaller (rates compared exactly, by
    cross-multiplied counts), so the pooled rates increase strictly. The pooled blocks fill
    the first entries (their threshold is their lowest score); returns their number."""
    cdef Py_ssize_t b, k = 0, m = thresholds.shape[0]
    cdef int64_t g_pos, g_n
    cdef double thr
    with nogil:
        for b in range(m):  # k <= b: writing block k never overwrites an unread block
            g_pos = positives[b]
            g_n = counts[b]
            thr = thresholds[b]
            while k > 0 and positives[k - 1] * g_n >= g_pos * counts[k - 1]:
                k -= 1
                g_pos += positives[k]
                g_n += counts[k]
                thr = thresholds[k]
            thresholds[k] = thr
            positives[k] = g_pos
            counts[k] = g_n
            k += 1
    return k
