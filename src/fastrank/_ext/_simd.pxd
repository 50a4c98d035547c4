# cython: language_level=3
"""The instruction-set level every kernel runs at (core/simd.h): one for the process."""

cdef extern from "simd.h":
    ctypedef enum fr_simd_level:
        FR_SIMD_PORTABLE
        FR_SIMD_POPCNT
        FR_SIMD_AVX2
        FR_SIMD_AVX512
        FR_SIMD_AVX512_VPOPCNTDQ
        FR_SIMD_N_LEVELS
    const char* fr_simd_name(int level) noexcept nogil
    unsigned fr_simd_needs(int level) noexcept nogil
    unsigned fr_cpu_features() noexcept nogil
    const char* fr_cpu_feature_name(int bit) noexcept nogil
    enum: FR_CPU_N_FEATURES
    fr_simd_level fr_simd_best() noexcept nogil

# the level in use: what a kernel reads when it is called, and passes down to the C core
cdef fr_simd_level current_level() noexcept nogil
