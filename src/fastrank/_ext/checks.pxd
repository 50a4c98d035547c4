# cython: language_level=3
"""What checks exports to the other kernel modules (fastrank._ext.capi)."""
from libc.stdint cimport uint8_t

# the first NaN (nonfinite: NaN or infinity) of values[:n], or -1, on the calling thread
cdef Py_ssize_t first_nan_f64(const double* values, Py_ssize_t n,
                              bint nonfinite) noexcept nogil
# the first value of values[:n] other than 0 and 1, or -1, on the calling thread
cdef Py_ssize_t first_not_binary_u8(const uint8_t* values, Py_ssize_t n) noexcept nogil
