# cython: language_level=3
"""Row-wise tie-aware ranking kernels (descending: rank 1 = highest belief).

The Python wrapper is ``fastrank.ranking``; it validates input and chooses the kernel.
Rows are processed in parallel (OpenMP) with the GIL released; each thread owns its scratch.

Outputs (arrays the wrapper allocates; an unused one is passed as a 0x0 array):
  out_int  -- int32 ranks by label, or for GROUPS the labels in sorted order
  out_frac -- float64 ranks by label (FRACTIONAL only)
  out_end  -- for GROUPS, the exclusive end position of each position's tie group
  out_start -- for GROUPS, the first position of each position's tie group
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, uint64_t

from _tiesort cimport (
    SortWork, floating, index_t, row_state, shuffle_groups, sort_row_at, sort_work_free,
    sort_work_new,
)

# method codes
cdef enum:
    ORDINAL = 0
    STABLE = 1
    DENSE = 2
    STANDARD = 3
    MODIFIED = 4
    FRACTIONAL = 5
    GROUPS = 6

#: the codes of rank_rows' ranking methods (fastrank.ranking reads them), and of its tie
#: groups output
METHODS = {"ordinal": ORDINAL, "stable": STABLE, "dense": DENSE, "standard": STANDARD,
           "modified": MODIFIED, "fractional": FRACTIONAL}
TIE_GROUPS = GROUPS


cdef inline void _emit_row(int32_t* order, int32_t* end, Py_ssize_t q, int method,
                           uint64_t seed, Py_ssize_t row, int32_t[:, ::1] out_int,
                           double[:, ::1] out_frac, int32_t[:, ::1] out_end,
                           int32_t[:, ::1] out_start) noexcept nogil:
    """Write one sorted row (order + tie-group ends) to the outputs of `method`."""
    cdef Py_ssize_t p, start = 0, stop, group = 0
    cdef uint64_t state
    if method == GROUPS:
        while start < q:
            stop = end[start]
            for p in range(start, stop):
                out_int[row, p] = order[p]
                out_end[row, p] = <int32_t> stop
                out_start[row, p] = <int32_t> start
            start = stop
        return
    if method == ORDINAL:
        state = row_state(seed, row)
        shuffle_groups(order, end, q, &state)
    if method == ORDINAL or method == STABLE:
        for p in range(q):
            out_int[row, order[p]] = <int32_t> (p + 1)
        return
    while start < q:
        stop = end[start]
        group += 1
        for p in range(start, stop):
            if method == DENSE:
                out_int[row, order[p]] = <int32_t> group
            elif method == STANDARD:
                out_int[row, order[p]] = <int32_t> (start + 1)
            elif method == MODIFIED:
                out_int[row, order[p]] = <int32_t> stop
            else:
                out_frac[row, order[p]] = 0.5 * (start + 1 + stop)
        start = stop


def rank_rows(const floating[::1] values, Py_ssize_t row_stride, Py_ssize_t col_stride,
              const index_t[::1] indices, const index_t[::1] indptr, Py_ssize_t n,
              Py_ssize_t q, int method, uint64_t seed, int32_t[:, ::1] out_int,
              double[:, ::1] out_frac, int32_t[:, ::1] out_end, int32_t[:, ::1] out_start):
    """Rank every row of an (n, q) matrix given by ``fastrank._validation.row_source``: a
    dense flat buffer with element strides (empty indices/indptr), or a canonical CSR matrix
    whose implicit zeros are one tie group."""
    cdef SortWork* w = NULL  # each thread sets its own
    cdef Py_ssize_t i
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const index_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for i in prange(n, schedule="static"):
            if w == NULL:
                continue
            sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, w)
            _emit_row(w.order, w.end, q, method, seed, i, out_int, out_frac, out_end,
                      out_start)
        sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate ranking scratch")
