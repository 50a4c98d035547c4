/* Run-time instruction-set dispatch shared by the kernel modules.

   Each module compiles every vector path for its own target (function attributes, no
   build-wide flags) and numbers its paths 0 (portable C) upwards, each level needing the
   features of the levels below it and more. A module lists, per level, the features the
   level needs (a mask of FR_CPU_* bits); fr_cpu_best_level gives the highest level whose
   features this CPU has. */
#ifndef FR_CPU_H
#define FR_CPU_H

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define FR_X86 1
#endif

enum {
    FR_CPU_POPCNT = 1u << 0,
    FR_CPU_AVX2 = 1u << 1,
    FR_CPU_FMA = 1u << 2,
    FR_CPU_AVX512F = 1u << 3,
    FR_CPU_AVX512BW = 1u << 4,
    FR_CPU_AVX512VL = 1u << 5,
    FR_CPU_AVX512DQ = 1u << 6,
    FR_CPU_AVX512VPOPCNTDQ = 1u << 7,
    FR_CPU_AVX512VBMI = 1u << 8
};

/* The FR_CPU_* features of this CPU (none off x86-64) */
static unsigned fr_cpu_features(void) {
    unsigned f = 0;
#ifdef FR_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("popcnt")) f |= FR_CPU_POPCNT;
    if (__builtin_cpu_supports("avx2")) f |= FR_CPU_AVX2;
    if (__builtin_cpu_supports("fma")) f |= FR_CPU_FMA;
    if (__builtin_cpu_supports("avx512f")) f |= FR_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw")) f |= FR_CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vl")) f |= FR_CPU_AVX512VL;
    if (__builtin_cpu_supports("avx512dq")) f |= FR_CPU_AVX512DQ;
    if (__builtin_cpu_supports("avx512vpopcntdq")) f |= FR_CPU_AVX512VPOPCNTDQ;
    if (__builtin_cpu_supports("avx512vbmi")) f |= FR_CPU_AVX512VBMI;
#endif
    return f;
}

/* The highest level i < n_levels whose needs[i] (and so every lower level's) this CPU has;
   needs[0] is 0, the portable path */
static int fr_cpu_best_level(const unsigned* needs, int n_levels) {
    unsigned have = fr_cpu_features();
    int level = 0;
    while (level + 1 < n_levels && (needs[level + 1] & have) == needs[level + 1]) level++;
    return level;
}

#endif
