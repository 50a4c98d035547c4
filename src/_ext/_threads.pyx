# cython: language_level=3
"""OpenMP thread count of the calling thread (what every prange in fastrank uses)."""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static void fr_set_num_threads(int n) { omp_set_num_threads(n); }
    static int fr_get_max_threads(void) { return omp_get_max_threads(); }
    #else
    static void fr_set_num_threads(int n) { (void)n; }
    static int fr_get_max_threads(void) { return 1; }
    #endif
    """
    void fr_set_num_threads(int n) nogil
    int fr_get_max_threads() nogil


def set_num_threads(int n):
    fr_set_num_threads(n)


def get_max_threads():
    return fr_get_max_threads()
