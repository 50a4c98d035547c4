# cython: language_level=3
"""What tie_metrics exports to the other kernel modules (fastrank._ext.capi)."""
from libc.stdint cimport int32_t, uint8_t, uint64_t

from _tiesort cimport SortWork

# the int32 values of metrics_row's scratch for rows of q labels
cdef Py_ssize_t row_scratch_size(Py_ssize_t q) noexcept nogil

# one dense row's per-document values and label counts (see metrics_row in tie_metrics.pyx)
cdef int metrics_row(const double* scores, Py_ssize_t q, const uint8_t* y, int families,
                     Py_ssize_t top_k, uint64_t seed, uint64_t mc_seed, Py_ssize_t n_draws,
                     Py_ssize_t row, double wt, double* doc, double* lab,
                     double* mc, SortWork* w, int32_t* scratch) noexcept nogil
