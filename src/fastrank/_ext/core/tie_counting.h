/* Counting passes over one row of beliefs, for the sort-free single ranking metrics
 * (driver: _ext/tie_counts.pyx). Plain loops the compiler vectorises on every instruction
 * set (the level pass, the hot one, compiled once per level of simd.h); integer counts
 * only, so every path gives the same result. */
#ifndef FASTRANK_TIE_COUNTING_H
#define FASTRANK_TIE_COUNTING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

/* gt <- number of x[j * stride] > v, eq <- number == v, over j < m (-0.0 == 0.0); with
 * nan != NULL also nan <- number of NaN (neither above, tied with nor below v): the row's
 * NaN check, fused with its first counting pass. */
#define FR_COUNT_LOOP(X, WITH_NAN)                                                        \
    do {                                                                                  \
        g32 += (X) > v;                                                                   \
        e32 += (X) == v;                                                                  \
        if (WITH_NAN)                                                                     \
            l32 += (X) < v;                                                               \
    } while (0)
#define FR_COUNT_LEVEL(T, NAME, ATTR)                                                     \
    static ATTR void NAME(const T* x, ptrdiff_t stride, ptrdiff_t m, T v, int64_t* gt,    \
                          int64_t* eq, int64_t* nan) {                                    \
        int64_t g = 0, e = 0, l = 0;                                                      \
        ptrdiff_t j = 0;                                                                  \
        while (j < m) { /* blocks of at most 2^30: the 32-bit counters cannot wrap */     \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            int32_t g32 = 0, e32 = 0, l32 = 0;                                            \
            if (stride == 1 && nan)                                                       \
                for (; j < stop; j++)                                                     \
                    FR_COUNT_LOOP(x[j], 1);                                               \
            else if (stride == 1)                                                         \
                for (; j < stop; j++)                                                     \
                    FR_COUNT_LOOP(x[j], 0);                                               \
            else                                                                          \
                for (; j < stop; j++)                                                     \
                    FR_COUNT_LOOP(x[j * stride], nan != NULL);                            \
            g += g32;                                                                     \
            e += e32;                                                                     \
            l += l32;                                                                     \
        }                                                                                 \
        *gt = g;                                                                          \
        *eq = e;                                                                          \
        if (nan)                                                                          \
            *nan = m - g - e - l;                                                         \
    }

/* one copy per instruction-set level (integer counts: the same result on every path), and
 * the entry point that picks the copy of the given level (_simd.current_level); the copies
 * are not inlined: one of each in the module, whatever calls them */
FR_COUNT_LEVEL(float, fr_count_level_f32_portable, FR_PORTABLE_HOT)
FR_COUNT_LEVEL(double, fr_count_level_f64_portable, FR_PORTABLE_HOT)
#ifdef FR_X86
FR_COUNT_LEVEL(float, fr_count_level_f32_avx2, FR_TARGET_AVX2)
FR_COUNT_LEVEL(double, fr_count_level_f64_avx2, FR_TARGET_AVX2)
FR_COUNT_LEVEL(float, fr_count_level_f32_avx512, FR_TARGET_AVX512)
FR_COUNT_LEVEL(double, fr_count_level_f64_avx512, FR_TARGET_AVX512)
#endif
#ifdef FR_X86
#define FR_COUNT_LEVEL_VECTOR(NAME)                                                       \
    if (level >= FR_SIMD_AVX512) {                                                        \
        NAME##_avx512(x, stride, m, v, gt, eq, nan);                                      \
        return;                                                                           \
    }                                                                                     \
    if (level >= FR_SIMD_AVX2) {                                                          \
        NAME##_avx2(x, stride, m, v, gt, eq, nan);                                        \
        return;                                                                           \
    }
#else
#define FR_COUNT_LEVEL_VECTOR(NAME)
#endif
#define FR_COUNT_LEVEL_AT(T, NAME)                                                        \
    static inline void NAME(int level, const T* x, ptrdiff_t stride, ptrdiff_t m, T v,    \
                            int64_t* gt, int64_t* eq, int64_t* nan) {                     \
        FR_COUNT_LEVEL_VECTOR(NAME)                                                       \
        (void)level;                                                                      \
        NAME##_portable(x, stride, m, v, gt, eq, nan);                                    \
    }
FR_COUNT_LEVEL_AT(float, fr_count_level_f32)
FR_COUNT_LEVEL_AT(double, fr_count_level_f64)

#if defined(__GNUC__) || defined(__clang__)
#define FR_PREFETCH(p) __builtin_prefetch(p)
#else
#define FR_PREFETCH(p) ((void)(p))
#endif

/* out[0:k] <- the beliefs x[j * stride] (as double) of the labels with y[j] != 0, j < m, in
 * label order; returns k; *seen <- the bitwise OR of every y[j] (a value other than 0/1
 * shows in its bits above the lowest). A contiguous row is prefetched FR_AHEAD cache lines
 * ahead: the few relevant labels' beliefs, read alone, would each wait on memory. */
#define FR_AHEAD 24
#define FR_GATHER(T, NAME)                                                                \
    static inline ptrdiff_t NAME(const T* x, ptrdiff_t stride, const uint8_t* y,          \
                                 ptrdiff_t m, double* out, unsigned* seen) {              \
        const ptrdiff_t line = 64 / sizeof(T);                                            \
        ptrdiff_t j0, j, k = 0;                                                           \
        unsigned all = 0;                                                                 \
        if (stride == 1)                                                                  \
            for (j0 = 0; j0 < FR_AHEAD * line && j0 < m; j0 += line)                      \
                FR_PREFETCH(x + j0);                                                      \
        for (j0 = 0; j0 < m; j0 += line) {                                                \
            ptrdiff_t stop = m - j0 < line ? m : j0 + line;                               \
            unsigned any = 0;                                                             \
            if (stride == 1 && j0 + FR_AHEAD * line < m)                                  \
                FR_PREFETCH(x + j0 + FR_AHEAD * line);                                    \
            for (j = j0; j < stop; j++)                                                   \
                any |= y[j];                                                              \
            all |= any;                                                                   \
            if (!any)                                                                     \
                continue;                                                                 \
            for (j = j0; j < stop; j++)                                                   \
                if (y[j])                                                                 \
                    out[k++] = (double)x[j * stride];                                     \
        }                                                                                 \
        *seen = all;                                                                      \
        return k;                                                                         \
    }

FR_GATHER(float, fr_gather_f32)
FR_GATHER(double, fr_gather_f64)

/* The largest of x[j * stride], j < m (m >= 1); eight independent maxima that the compiler
 * can keep in one vector (a maximum is exact: any order gives it). */
#define FR_MAX(T, NAME)                                                                   \
    static inline T NAME(const T* x, ptrdiff_t stride, ptrdiff_t m) {                     \
        T acc[8];                                                                         \
        ptrdiff_t j, l;                                                                   \
        for (l = 0; l < 8; l++)                                                           \
            acc[l] = x[0];                                                                \
        for (j = 0; j + 8 <= m; j += 8)                                                   \
            for (l = 0; l < 8; l++)                                                       \
                acc[l] = x[(j + l) * stride] > acc[l] ? x[(j + l) * stride] : acc[l];     \
        for (; j < m; j++)                                                                \
            acc[0] = x[j * stride] > acc[0] ? x[j * stride] : acc[0];                     \
        for (l = 1; l < 8; l++)                                                           \
            acc[0] = acc[l] > acc[0] ? acc[l] : acc[0];                                   \
        return acc[0];                                                                    \
    }

FR_MAX(float, fr_max_f32)
FR_MAX(double, fr_max_f64)

/* out[0:k] <- the j < m with x[j * stride] == v, ascending; returns k (no branch per label). */
#define FR_WHERE_EQUAL(T, NAME)                                                           \
    static inline ptrdiff_t NAME(const T* x, ptrdiff_t stride, ptrdiff_t m, T v,           \
                                 int32_t* out) {                                          \
        ptrdiff_t j, k = 0;                                                               \
        for (j = 0; j < m; j++) {                                                         \
            out[k] = (int32_t)j;                                                          \
            k += x[j * stride] == v;                                                      \
        }                                                                                 \
        return k;                                                                         \
    }

FR_WHERE_EQUAL(float, fr_where_equal_f32)
FR_WHERE_EQUAL(double, fr_where_equal_f64)

/* The r largest values, with multiplicity, kept in top[0:k], k <= r, in descending order:
 * fr_top_insert adds v when it is among them (k grows to r first), returning the new k. The
 * callers insert few values (those of one gap between two relevant levels). */
static inline ptrdiff_t fr_top_insert(double* top, ptrdiff_t k, ptrdiff_t r, double v) {
    ptrdiff_t p;
    if (k == r) {
        if (!(v > top[r - 1]))
            return k;
        k--;
    }
    for (p = k; p > 0 && top[p - 1] < v; p--)
        top[p] = top[p - 1];
    top[p] = v;
    return k + 1;
}

/* out[0:k] <- the x[j * stride] (as double), j < m, with lo < x < hi (with x > lo alone
 * when !bounded), in label order; returns k. Blocks of FR_BETWEEN_BLOCK values without one
 * are passed over in one vectorised test, the others copied without a branch per label. */
#define FR_BETWEEN_BLOCK 8
#define FR_IN_GAP(v) (((v) > lo) & (((v) < hi) | !bounded))
#define FR_BETWEEN(T, NAME)                                                               \
    static inline ptrdiff_t NAME(const T* x, ptrdiff_t stride, ptrdiff_t m, T lo, T hi,   \
                                 int bounded, double* out) {                              \
        ptrdiff_t j0, j, k = 0;                                                           \
        for (j0 = 0; j0 < m; j0 += FR_BETWEEN_BLOCK) {                                    \
            ptrdiff_t stop = m - j0 < FR_BETWEEN_BLOCK ? m : j0 + FR_BETWEEN_BLOCK;       \
            int any = 0;                                                                  \
            for (j = j0; j < stop; j++)                                                   \
                any |= FR_IN_GAP(x[j * stride]);                                          \
            if (!any)                                                                     \
                continue;                                                                 \
            for (j = j0; j < stop; j++) {                                                 \
                T v = x[j * stride];                                                      \
                out[k] = (double)v;                                                       \
                k += FR_IN_GAP(v);                                                        \
            }                                                                             \
        }                                                                                 \
        return k;                                                                         \
    }

FR_BETWEEN(float, fr_between_f32)
FR_BETWEEN(double, fr_between_f64)

#endif
