# cython: language_level=3
"""What vgram exports to the other kernel modules (fastrank._ext.capi)."""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

# dense float64 rows' patterns, and each test pattern's nearest stored ones (see vgram.pyx)
cdef int encode_dense_f64(const double* X, Py_ssize_t n_rows, Py_ssize_t n_cols,
                          const int32_t* syn, Py_ssize_t n_neurons, Py_ssize_t S,
                          uint64_t* out) noexcept nogil
cdef int search_nearest(const uint64_t* M, Py_ssize_t n_train, const uint64_t* C,
                        Py_ssize_t n_tests, Py_ssize_t n_neurons, Py_ssize_t W,
                        uint32_t* distance, int64_t* count, int64_t* nearest) noexcept nogil
