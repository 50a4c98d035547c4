/* What the kernels run with: the OpenMP thread count, and the compiler that built them. */
#ifndef FR_RUNTIME_H
#define FR_RUNTIME_H

#ifdef _OPENMP
#include <omp.h>
static inline void fr_set_num_threads(int n) { omp_set_num_threads(n); }
static inline int fr_get_max_threads(void) { return omp_get_max_threads(); }
#define FR_OPENMP _OPENMP
#else
static inline void fr_set_num_threads(int n) { (void)n; }
static inline int fr_get_max_threads(void) { return 1; }
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

#endif
