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
    DENSE, FRACTIONAL, GROUPS, MODIFIED, ORDINAL, STABLE, STANDARD, SortWork, emit_row,
    floating, index_t, prefetch_row_at, sort_row_at, sort_work_free, sort_work_new,
)

#: the codes of rank_rows' ranking methods (fastrank.ranking reads them), and of its tie
#: groups output
METHODS = {"ordinal": ORDINAL, "stable": STABLE, "dense": DENSE, "standard": STANDARD,
           "modified": MODIFIED, "fractional": FRACTIONAL}
TIE_GROUPS = GROUPS


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
    # output rows (unused outputs are 0x0: NULL)
    cdef int32_t* oi = &out_int[0, 0] if out_int.shape[0] else NULL
    cdef double* of = &out_frac[0, 0] if out_frac.shape[0] else NULL
    cdef int32_t* oe = &out_end[0, 0] if out_end.shape[0] else NULL
    cdef int32_t* os = &out_start[0, 0] if out_start.shape[0] else NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips.
        # Rows handed out 64 at a time as threads come free (a thread slowed by another
        # process takes fewer).
        for i in prange(n, schedule="dynamic", chunksize=64):
            if w == NULL:
                continue
            if i + 1 < n:
                prefetch_row_at(vp, row_stride, col_stride, pp, i + 1, q)
            sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, w)
            emit_row(w.order, w.end, q, method, seed, i,
                     oi + i * q if oi != NULL else NULL, of + i * q if of != NULL else NULL,
                     oe + i * q if oe != NULL else NULL, os + i * q if os != NULL else NULL)
        sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate ranking scratch")
