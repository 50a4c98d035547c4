/* The instruction-set levels of every kernel: one numbering, one name per level.

   Each kernel compiles every vector path for its own target (per-function target
   attributes, no build-wide flags), so one build runs on any CPU; the path is chosen at run
   time by a level passed to the kernel, and a kernel takes its best path at or below that
   level. Each level needs the CPU features of the levels below it and more (fr_simd_needs);
   fr_simd_best gives the highest level this CPU runs. Every path gives the same bits.

     FR_SIMD_PORTABLE          portable C, any architecture
     FR_SIMD_POPCNT            x86-64 with POPCNT, without AVX2: VG-RAM counts bits with
                               POPCNT; the dense dot products emulate fma (no FMA3 on these
                               CPUs: the C library's fma is software there)
     FR_SIMD_AVX2              AVX2, FMA3 (and POPCNT)
     FR_SIMD_AVX512            AVX-512 F, BW, VL, DQ (and the above)
     FR_SIMD_AVX512_VPOPCNTDQ  AVX-512 VPOPCNTDQ and VBMI too (Ice Lake, Zen 4 and later) */
#ifndef FR_SIMD_H
#define FR_SIMD_H

#include <stddef.h>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define FR_X86 1
#endif

typedef enum {
    FR_SIMD_PORTABLE,
    FR_SIMD_POPCNT,
    FR_SIMD_AVX2,
    FR_SIMD_AVX512,
    FR_SIMD_AVX512_VPOPCNTDQ,
    FR_SIMD_N_LEVELS
} fr_simd_level;

/* the name of level `level` (FASTRANK_SIMD, fastrank.use_simd) */
static inline const char* fr_simd_name(int level) {
    static const char* const names[FR_SIMD_N_LEVELS] = {
        "portable", "popcnt", "avx2", "avx512", "avx512-vpopcntdq"};
    return names[level];
}

/* CPU features, as bits */
enum {
    FR_CPU_POPCNT = 1u << 0,
    FR_CPU_AVX2 = 1u << 1,
    FR_CPU_FMA = 1u << 2,
    FR_CPU_AVX512F = 1u << 3,
    FR_CPU_AVX512BW = 1u << 4,
    FR_CPU_AVX512VL = 1u << 5,
    FR_CPU_AVX512DQ = 1u << 6,
    FR_CPU_AVX512VPOPCNTDQ = 1u << 7,
    FR_CPU_AVX512VBMI = 1u << 8,
    FR_CPU_N_FEATURES = 9
};

/* the name of feature bit `bit`, as /proc/cpuinfo spells it */
static inline const char* fr_cpu_feature_name(int bit) {
    static const char* const names[FR_CPU_N_FEATURES] = {
        "popcnt", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq",
        "avx512_vpopcntdq", "avx512vbmi"};
    return names[bit];
}

/* the features level `level` needs (those of the levels below it and more) */
static inline unsigned fr_simd_needs(int level) {
    static const unsigned needs[FR_SIMD_N_LEVELS] = {
        0,
        FR_CPU_POPCNT,
        FR_CPU_POPCNT | FR_CPU_AVX2 | FR_CPU_FMA,
        FR_CPU_POPCNT | FR_CPU_AVX2 | FR_CPU_FMA | FR_CPU_AVX512F | FR_CPU_AVX512BW
            | FR_CPU_AVX512VL | FR_CPU_AVX512DQ,
        FR_CPU_POPCNT | FR_CPU_AVX2 | FR_CPU_FMA | FR_CPU_AVX512F | FR_CPU_AVX512BW
            | FR_CPU_AVX512VL | FR_CPU_AVX512DQ | FR_CPU_AVX512VPOPCNTDQ | FR_CPU_AVX512VBMI};
    return needs[level];
}

/* The target attributes of the vector paths' functions: what each may use */
#ifdef FR_X86
#define FR_TARGET_POPCNT __attribute__((target("popcnt")))
#define FR_TARGET_AVX2 __attribute__((target("avx2,popcnt")))
#define FR_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define FR_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,popcnt")))
/* and AVX-512 DQ's 64-bit products, for the functions that need them alone: given to every
   AVX-512 function, it let GCC choose other instructions for the counting passes, and
   one-error and coverage ran about 3 % slower (one thread) */
#define FR_TARGET_AVX512_DQ \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,popcnt")))
#define FR_TARGET_AVX512_FMA __attribute__((target("avx512f,avx512dq,avx2,fma")))
#define FR_TARGET_VPOPCNT \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")))
#define FR_TARGET_VBMI \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx2,popcnt")))

/* the first r (< W) lanes set: 32-bit lanes (s) or 64-bit lanes (d) (AVX2) */
static FR_TARGET_AVX2 inline __m256i fr_tail_mask_s(ptrdiff_t r) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) r),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static FR_TARGET_AVX2 inline __m256i fr_tail_mask_d(ptrdiff_t r) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* The first r lanes at p (AVX2; the lanes past r zero, not read): a whole vector (r >= its
   lanes) by a plain load, a part by a masked load. On AMD Zen 3 a masked load, of a whole
   vector too, in a loop that also gathers or stores took several times a plain load's
   time (the numbering pass of a float32 row of 1 000 labels: 4.5-13 us, 1.5-2.0 us with
   plain loads). */
static FR_TARGET_AVX2 inline __m256 fr_load_first_ps(const float* p, ptrdiff_t r) {
    return r >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, fr_tail_mask_s(r));
}
static FR_TARGET_AVX2 inline __m256d fr_load_first_pd(const double* p, ptrdiff_t r) {
    return r >= 4 ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, fr_tail_mask_d(r));
}
#endif

/* The attribute of a portable path's function with a hot loop: it stays a function of its
   own (not inlined into its dispatcher, where the other paths would change its register
   allocation), and with GCC its loops start on 64-byte boundaries. Placed where they fell,
   the same instructions ran 8 % (emulated float64 dot products) to 20 % (VG-RAM's portable
   scan) slower on one build than on another (x86-64, 1 thread). */
#if defined(__GNUC__) && !defined(__clang__)
#define FR_PORTABLE_HOT __attribute__((noinline, aligned(64), optimize("align-loops=64")))
#elif defined(__clang__)
#define FR_PORTABLE_HOT __attribute__((noinline))
#else
#define FR_PORTABLE_HOT
#endif

/* A function that stays one function, not inlined nor cloned into its callers (where its
   work is its own loops, each copy costs kilobytes of the wheel for nothing), which a
   module may leave unused. */
#if defined(__GNUC__) && !defined(__clang__)
#define FR_SINGLE_COPY __attribute__((noinline, noclone, unused)) static
#elif defined(__GNUC__)
#define FR_SINGLE_COPY __attribute__((noinline, unused)) static
#else
#define FR_SINGLE_COPY static
#endif

/* The FR_CPU_* features of this CPU (none off x86-64) */
static inline unsigned fr_cpu_features(void) {
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

/* The highest level whose features (and so every lower level's) this CPU has */
static inline fr_simd_level fr_simd_best(void) {
    unsigned have = fr_cpu_features();
    int level = FR_SIMD_PORTABLE;
    while (level + 1 < FR_SIMD_N_LEVELS
           && (fr_simd_needs(level + 1) & have) == fr_simd_needs(level + 1))
        level++;
    return (fr_simd_level) level;
}

#endif
