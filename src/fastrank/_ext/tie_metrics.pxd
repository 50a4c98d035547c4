# cython: language_level=3
"""What tie_metrics exports to the other kernel modules (fastrank._ext.capi)."""
from libc.stdint cimport uint8_t, uint64_t

# one dense row's per-document values and label counts (see metrics_row in tie_metrics.pyx)
cdef int metrics_row(const double* scores, Py_ssize_t q, const uint8_t* y, int families,
                     Py_ssize_t top_k, uint64_t seed, uint64_t mc_seed, Py_ssize_t n_draws,
                     Py_ssize_t row, double wt, double* doc, double* lab,
                     double* mc) noexcept nogil
