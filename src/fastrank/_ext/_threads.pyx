# cython: language_level=3
"""OpenMP thread count of the calling thread (what every prange in fastrank uses)."""

cdef extern from "runtime.h":
    void fr_set_num_threads(int n) nogil
    int fr_get_max_threads() nogil
    const char* FR_COMPILER
    long FR_OPENMP


def set_num_threads(int n):
    fr_set_num_threads(n)


def get_max_threads():
    return fr_get_max_threads()


def build_info():
    """The compiler that built the kernels and the OpenMP version they were built with
    (``_OPENMP``, a yyyymm date; 0 for a serial build)."""
    return {"compiler": FR_COMPILER.decode("ascii", "replace"), "openmp": FR_OPENMP}
