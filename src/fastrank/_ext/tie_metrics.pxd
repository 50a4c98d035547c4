# cython: language_level=3
"""What tie_metrics exports to the other kernel modules (fastrank._ext.capi)."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from _tiesort cimport SortWork

# the int32 values of metrics_row's scratch for rows of q labels
cdef Py_ssize_t row_scratch_size(Py_ssize_t q) noexcept nogil

# one dense row's per-document values, label counts and boundary records (see metrics_row
# in tie_metrics.pyx)
cdef Py_ssize_t metrics_row(const double* scores, Py_ssize_t q, const uint8_t* y,
                            int families, Py_ssize_t top_k, uint64_t seed, uint64_t mc_seed,
                            Py_ssize_t n_draws, Py_ssize_t row, double wt, double* doc,
                            double* lab, double* mc, SortWork* w, int32_t* scratch,
                            int64_t* records) noexcept nogil

# one label's exact expected precision and F1 over its boundary record classes (see
# label_sums in tie_metrics.pyx)
cdef int label_sums(const int64_t* s, const int64_t* d, const int64_t* n_rel,
                    const int64_t* n_irr, Py_ssize_t n_classes, Py_ssize_t n_sets,
                    Py_ssize_t stride, const double* a, const double* b, double rel,
                    double zd, double* out_p, double* out_f) noexcept nogil
