# cython: language_level=3
"""OpenMP thread count of the calling thread (what every prange in fastrank uses)."""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static void fr_set_num_threads(int n) { omp_set_num_threads(n); }
    static int fr_get_max_threads(void) { return omp_get_max_threads(); }
    #define FR_OPENMP _OPENMP
    #else
    static void fr_set_num_threads(int n) { (void)n; }
    static int fr_get_max_threads(void) { return 1; }
    #define FR_OPENMP 0
    #endif
    #define FR_STR2(x) #x
    #define FR_STR(x) FR_STR2(x)
    #if defined(__clang__)
    #define FR_COMPILER "clang " __clang_version__
    #elif defined(__GNUC__)
    #define FR_COMPILER "GCC " __VERSION__
    #elif defined(_MSC_VER)
    #define FR_COMPILER "MSVC " FR_STR(_MSC_FULL_VER)
    #else
    #define FR_COMPILER "unknown"
    #endif
    """
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
