# cython: language_level=3
"""What cosine_topk exports to the other kernel modules (fastrank._ext.capi)."""
from libc.stdint cimport int64_t

# the dense float64 top-k search of one query block, end to end (see cosine_topk.pyx)
cdef int topk_dense_f64(const double* Q, Py_ssize_t nq, const double* B, Py_ssize_t nb,
                        Py_ssize_t d, Py_ssize_t k, double* out_sim,
                        int64_t* out_idx) noexcept nogil
