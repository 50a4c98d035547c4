/* Counting passes over one row of beliefs, for the sort-free single ranking metrics
 * (driver: _ext/tie_counts.pyx): the level counts, the hot passes, compiled per
 * instruction-set level of simd.h (tie_counting/), and plain loops the compiler vectorises;
 * integer counts only, so every path gives the same result. */
#ifndef FASTRANK_TIE_COUNTING_H
#define FASTRANK_TIE_COUNTING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "prefetch.h"
#define FR_AHEAD 24 /* cache lines a gather of relevant beliefs prefetches ahead */
#include "tie_counting/avx512-inl.h"
#include "simd.h"

/* gt[l] <- the x[j * stride] > v[l], eq[l] <- those == v[l], for the n levels v[0:n] and
 * j < m (-0.0 == 0.0), in the copies of the given instruction-set level
 * (_simd.current_level): contiguous rows four levels (or two, or one) to a pass with AVX2
 * or AVX-512, strided rows (portable C) one; with nan != NULL also *nan <- the NaN beliefs,
 * counted in the first pass. With with_eq 0, gt[l] <- those >= v[l] and eq[l] <- 0: one
 * comparison a level (eight levels a pass with AVX-512), for the metrics that read only
 * the labels at or above each level. Integer counts: every path gives the same result. */
#define FR_LEVELS_PASS4(F, P)                                                             \
    do {                                                                                  \
        if (nl == 4)                                                                      \
            F##4_##P(x, m, v + l, gt + l, eq + l, nan);                                   \
        else if (nl == 2)                                                                 \
            F##2_##P(x, m, v + l, gt + l, eq + l, nan);                                   \
        else                                                                              \
            F##1_##P(x, m, v + l, gt + l, eq + l, nan);                                   \
    } while (0)
#define FR_LEVELS_PASS8(F, P)                                                             \
    do {                                                                                  \
        if (nl == 8)                                                                      \
            F##8_##P(x, m, v + l, gt + l, eq + l, nan);                                   \
        else                                                                              \
            FR_LEVELS_PASS4(F, P);                                                        \
    } while (0)
#define FR_LEVELS_TAKE(MAX) (n - l >= (MAX) ? (MAX) : n - l >= 4 ? 4 : n - l >= 2 ? 2 : 1)
#ifdef FR_X86
#define FR_LEVELS_DISPATCH(S)                                                             \
    if (level >= FR_SIMD_AVX512 && stride == 1) {                                         \
        nl = FR_LEVELS_TAKE(with_eq ? 4 : 8);                                             \
        if (with_eq)                                                                      \
            FR_LEVELS_PASS4(fr_levels, S##_avx512);                                       \
        else                                                                              \
            FR_LEVELS_PASS8(fr_at_or_above, S##_avx512);                                  \
        continue;                                                                         \
    }                                                                                     \
    if (level >= FR_SIMD_AVX2 && stride == 1) {                                           \
        nl = FR_LEVELS_TAKE(4);                                                           \
        if (with_eq)                                                                      \
            FR_LEVELS_PASS4(fr_levels, S##_avx2);                                         \
        else                                                                              \
            FR_LEVELS_PASS4(fr_at_or_above, S##_avx2);                                    \
        continue;                                                                         \
    }
#else
#define FR_LEVELS_DISPATCH(S)
#endif
#define FR_COUNT_LEVELS(T, S)                                                             \
    static inline void fr_count_levels_##S(int level, const T* x, ptrdiff_t stride,        \
                                           ptrdiff_t m, const T* v, ptrdiff_t n,           \
                                           int64_t* gt, int64_t* eq, int64_t* nan,         \
                                           int with_eq) {                                 \
        ptrdiff_t l;                                                                      \
        int nl;                                                                           \
        (void)level;                                                                      \
        for (l = 0; l < n; l += nl, nan = NULL) {                                         \
            FR_LEVELS_DISPATCH(S)                                                         \
            nl = 1;                                                                       \
            fr_levels1_##S##_portable(x, stride, m, v + l, gt + l, eq + l, nan);          \
            if (!with_eq) {                                                               \
                gt[l] += eq[l];                                                           \
                eq[l] = 0;                                                                \
            }                                                                             \
        }                                                                                 \
    }
FR_COUNT_LEVELS(float, f32)
FR_COUNT_LEVELS(double, f64)

/* out[0:k] <- the beliefs x[j * stride] (as double) of the labels with y[j] != 0, j < m, in
 * label order, and labels[0:k] <- those labels unless labels is NULL; returns k; *seen <-
 * the bitwise OR of every y[j] (a value other than 0/1 shows in its bits above the lowest).
 * out and labels hold m + 1 values (the vector paths write one past the last).
 * AVX2 and AVX-512, contiguous float32 rows: fr_gather_f32_avx2 / _avx512 (tie_counting/
 * common-inl.h). The portable loop
 * (fr_gather_labels_*_portable; fr_gather_*_portable, a copy without the label stores)
 * reads the truth eight labels to a word; a cache line of beliefs holding a relevant label
 * is copied without a branch per label (a branch per relevant label mispredicts). A
 * contiguous row is prefetched FR_AHEAD cache lines ahead: the few relevant labels'
 * beliefs, read alone, would each wait on memory. */
#define FR_GATHER(T, WITH_LABELS, NAME)                                                   \
    static inline ptrdiff_t NAME(const T* x, ptrdiff_t stride, const uint8_t* y,          \
                                 ptrdiff_t m, double* out, int32_t* labels,               \
                                 unsigned* seen) {                                        \
        const ptrdiff_t line = 64 / sizeof(T); /* 8 or 16 labels: whole words of y */    \
        ptrdiff_t j0, j, k = 0;                                                           \
        uint64_t all = 0;                                                                 \
        if (stride == 1)                                                                  \
            for (j0 = 0; j0 < FR_AHEAD * line && j0 < m; j0 += line)                      \
                FR_PREFETCH(x + j0);                                                      \
        for (j0 = 0; j0 < m; j0 += line) {                                                \
            ptrdiff_t stop = m - j0 < line ? m : j0 + line;                               \
            uint64_t any = 0, word;                                                       \
            if (stride == 1 && j0 + FR_AHEAD * line < m)                                  \
                FR_PREFETCH(x + j0 + FR_AHEAD * line);                                    \
            if (stop - j0 == line)                                                        \
                for (j = j0; j < stop; j += 8) {                                          \
                    memcpy(&word, y + j, 8);                                              \
                    any |= word;                                                          \
                }                                                                         \
            else                                                                          \
                for (j = j0; j < stop; j++)                                               \
                    any |= y[j];                                                          \
            all |= any;                                                                   \
            if (!any)                                                                     \
                continue;                                                                 \
            for (j = j0; j < stop; j++) {                                                 \
                out[k] = (double)x[j * stride];                                           \
                if (WITH_LABELS)                                                          \
                    labels[k] = (int32_t)j;                                               \
                k += y[j] != 0;                                                           \
            }                                                                             \
        }                                                                                 \
        *seen = fr_or_bytes(all);                                                         \
        return k;                                                                         \
    }

FR_GATHER(float, 0, fr_gather_f32_portable)
FR_GATHER(double, 0, fr_gather_f64_portable)
FR_GATHER(float, 1, fr_gather_labels_f32_portable)
FR_GATHER(double, 1, fr_gather_labels_f64_portable)

#ifdef FR_X86
#define FR_GATHER_DISPATCH_f32                                                            \
    if (level >= FR_SIMD_AVX512 && stride == 1)                                           \
        return fr_gather_f32_avx512(x, y, m, out, labels, seen);                          \
    if (level >= FR_SIMD_AVX2 && stride == 1)                                             \
        return fr_gather_f32_avx2(x, y, m, out, labels, seen);
#else
#define FR_GATHER_DISPATCH_f32
#endif
#define FR_GATHER_DISPATCH_f64
#define FR_GATHER_AT(T, S)                                                                \
    static inline ptrdiff_t fr_gather_##S(int level, const T* x, ptrdiff_t stride,         \
                                          const uint8_t* y, ptrdiff_t m, double* out,     \
                                          int32_t* labels, unsigned* seen) {              \
        (void)level;                                                                      \
        FR_GATHER_DISPATCH_##S                                                            \
        if (labels != NULL)                                                               \
            return fr_gather_labels_##S##_portable(x, stride, y, m, out, labels, seen);   \
        return fr_gather_##S##_portable(x, stride, y, m, out, NULL, seen);                \
    }
FR_GATHER_AT(float, f32)
FR_GATHER_AT(double, f64)

/* labels[0:k] <- the relevant labels of a row of m labels (truth y), ascending; *seen <-
 * the bitwise OR of its truth values; returns k. labels holds m + 16 values (AVX-512
 * stores whole vectors). On the levels of the row sort's numbering path (few_distinct.h:
 * AVX2 and up) alone; -1 (nothing written) below. */
static inline ptrdiff_t fr_relevant_labels(int level, const uint8_t* y, ptrdiff_t m,
                                           int32_t* labels, unsigned* seen) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512)
        return fr_labels_avx512(y, m, labels, seen);
    if (level >= FR_SIMD_AVX2)
        return fr_labels_avx2(NULL, y, m, NULL, labels, seen);
#endif
    (void) level, (void) y, (void) m, (void) labels, (void) seen;
    return -1;
}

/* The largest of x[j * stride], j < m (m >= 1); eight independent maxima that the compiler
 * can keep in vectors (a maximum is exact: any order gives it), a contiguous row in a loop
 * of its own (with a stride the compiler keeps them in scalars). */
#define FR_MAX(T, NAME)                                                                   \
    static inline T NAME(const T* x, ptrdiff_t stride, ptrdiff_t m) {                     \
        T acc[8];                                                                         \
        ptrdiff_t j, l;                                                                   \
        for (l = 0; l < 8; l++)                                                           \
            acc[l] = x[0];                                                                \
        if (stride == 1)                                                                  \
            for (j = 0; j + 8 <= m; j += 8)                                               \
                for (l = 0; l < 8; l++)                                                   \
                    acc[l] = x[j + l] > acc[l] ? x[j + l] : acc[l];                       \
        else                                                                              \
            for (j = 0; j + 8 <= m; j += 8)                                               \
                for (l = 0; l < 8; l++)                                                   \
                    acc[l] = x[(j + l) * stride] > acc[l] ? x[(j + l) * stride] : acc[l]; \
        for (; j < m; j++)                                                                \
            acc[0] = x[j * stride] > acc[0] ? x[j * stride] : acc[0];                     \
        for (l = 1; l < 8; l++)                                                           \
            acc[0] = acc[l] > acc[0] ? acc[l] : acc[0];                                   \
        return acc[0];                                                                    \
    }

FR_MAX(float, fr_max_f32)
FR_MAX(double, fr_max_f64)

/* the portable passes that gather few labels test this many values at once for one */
#define FR_BETWEEN_BLOCK 8

/* out[0:k] <- the j < m with x[j * stride] == v, ascending; returns k. Blocks of
 * FR_BETWEEN_BLOCK values without one are passed over in one vectorised test, the others
 * written without a branch per label (AVX2 and AVX-512, contiguous rows: fr_where_equal_*_avx2,
 * fr_where_equal_*_avx512, with no branch on a block either). */
#define FR_WHERE_EQUAL(T, NAME)                                                           \
    static inline ptrdiff_t NAME(const T* x, ptrdiff_t stride, ptrdiff_t m, T v,           \
                                 int32_t* out) {                                          \
        ptrdiff_t j0, j, k = 0;                                                           \
        for (j0 = 0; j0 < m; j0 += FR_BETWEEN_BLOCK) {                                    \
            ptrdiff_t stop = m - j0 < FR_BETWEEN_BLOCK ? m : j0 + FR_BETWEEN_BLOCK;       \
            int any = 0;                                                                  \
            for (j = j0; j < stop; j++)                                                   \
                any |= x[j * stride] == v;                                                \
            if (!any)                                                                     \
                continue;                                                                 \
            for (j = j0; j < stop; j++) {                                                 \
                out[k] = (int32_t)j;                                                      \
                k += x[j * stride] == v;                                                  \
            }                                                                             \
        }                                                                                 \
        return k;                                                                         \
    }

FR_WHERE_EQUAL(float, fr_where_equal_f32_portable)
FR_WHERE_EQUAL(double, fr_where_equal_f64_portable)

#ifdef FR_X86
#define FR_WHERE_EQUAL_DISPATCH(S)                                                        \
    if (level >= FR_SIMD_AVX512 && stride == 1)                                           \
        return fr_where_equal_##S##_avx512(x, m, v, out);                                 \
    if (level >= FR_SIMD_AVX2 && stride == 1)                                             \
        return fr_where_equal_##S##_avx2(x, m, v, out);
#else
#define FR_WHERE_EQUAL_DISPATCH(S)
#endif
#define FR_WHERE_EQUAL_AT(T, S)                                                           \
    static inline ptrdiff_t fr_where_equal_##S(int level, const T* x, ptrdiff_t stride,    \
                                               ptrdiff_t m, T v, int32_t* out) {          \
        (void)level;                                                                      \
        FR_WHERE_EQUAL_DISPATCH(S)                                                        \
        return fr_where_equal_##S##_portable(x, stride, m, v, out);                       \
    }
FR_WHERE_EQUAL_AT(float, f32)
FR_WHERE_EQUAL_AT(double, f64)

/* The number of x[j * stride] == v, j < m (-0.0 == 0.0): where a label sits among the labels of its
 * belief (AVX2 and AVX-512, contiguous rows: fr_count_equal_*, a comparison's mask counted
 * by popcount; the portable loop one comparison a value). */
#define FR_COUNT_EQUAL(T, NAME)                                                           \
    static inline int64_t NAME(const T* x, ptrdiff_t stride, ptrdiff_t m, T v) {          \
        int64_t c = 0;                                                                    \
        ptrdiff_t j;                                                                      \
        for (j = 0; j < m; j++)                                                           \
            c += x[j * stride] == v;                                                      \
        return c;                                                                         \
    }
FR_COUNT_EQUAL(float, fr_count_equal_f32_portable)
FR_COUNT_EQUAL(double, fr_count_equal_f64_portable)

#ifdef FR_X86
#define FR_COUNT_EQUAL_DISPATCH(S)                                                        \
    if (level >= FR_SIMD_AVX512 && stride == 1)                                           \
        return fr_count_equal_##S##_avx512(x, m, v);                                      \
    if (level >= FR_SIMD_AVX2 && stride == 1)                                             \
        return fr_count_equal_##S##_avx2(x, m, v);
#else
#define FR_COUNT_EQUAL_DISPATCH(S)
#endif
#define FR_COUNT_EQUAL_AT(T, S)                                                           \
    static inline int64_t fr_count_equal_##S(int level, const T* x, ptrdiff_t stride,      \
                                             ptrdiff_t m, T v) {                          \
        (void)level;                                                                      \
        FR_COUNT_EQUAL_DISPATCH(S)                                                        \
        return fr_count_equal_##S##_portable(x, stride, m, v);                            \
    }
FR_COUNT_EQUAL_AT(float, f32)
FR_COUNT_EQUAL_AT(double, f64)

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

FR_BETWEEN(float, fr_between_f32_portable)
FR_BETWEEN(double, fr_between_f64_portable)

/* FR_BETWEEN in the copy of the given instruction-set level (AVX-512: contiguous rows) */
#ifdef FR_X86
#define FR_BETWEEN_DISPATCH(S)                                                            \
    if (level >= FR_SIMD_AVX512 && stride == 1)                                           \
        return fr_between_##S##_avx512(x, m, lo, hi, bounded, out);
#else
#define FR_BETWEEN_DISPATCH(S)
#endif
#define FR_BETWEEN_AT(T, S)                                                               \
    static inline ptrdiff_t fr_between_##S(int level, const T* x, ptrdiff_t stride,        \
                                           ptrdiff_t m, T lo, T hi, int bounded,          \
                                           double* out) {                                 \
        (void)level;                                                                      \
        FR_BETWEEN_DISPATCH(S)                                                            \
        return fr_between_##S##_portable(x, stride, m, lo, hi, bounded, out);             \
    }
FR_BETWEEN_AT(float, f32)
FR_BETWEEN_AT(double, f64)

/* The r-th largest of a gap, while it lies among few tied values (AVX2 and AVX-512,
 * contiguous rows: fr_gap_top_*); 0 where it does not or on another path (the caller
 * gathers the gap) */
#ifdef FR_X86
#define FR_GAP_TOP_DISPATCH(S)                                                            \
    if (level >= FR_SIMD_AVX512 && stride == 1)                                           \
        return fr_gap_top_##S##_avx512(x, m, lo, hi, bounded, r, v, above, at);           \
    if (level >= FR_SIMD_AVX2 && stride == 1)                                             \
        return fr_gap_top_##S##_avx2(x, m, lo, hi, bounded, r, v, above, at);
#else
#define FR_GAP_TOP_DISPATCH(S)
#endif
#define FR_GAP_TOP_AT(T, S)                                                               \
    static inline int fr_gap_top_##S(int level, const T* x, ptrdiff_t stride, ptrdiff_t m, \
                                     T lo, T hi, int bounded, int64_t r, T* v,            \
                                     int64_t* above, int64_t* at) {                       \
        (void)level, (void)x, (void)stride, (void)m, (void)lo, (void)hi, (void)bounded;   \
        (void)r, (void)v, (void)above, (void)at;                                          \
        FR_GAP_TOP_DISPATCH(S)                                                            \
        return 0;                                                                         \
    }
FR_GAP_TOP_AT(float, f32)
FR_GAP_TOP_AT(double, f64)

/* fr_few_distinct_above_f32 with the level counts of v in the same pass: counts[0:3] <- the
 * values above v, equal to it and NaN (those of fr_count_levels), valid when it returns n
 * >= 0 (counts may be NULL); -1 where the values are more than few or on a path without
 * the pass (AVX2 and AVX-512, contiguous rows): the caller counts in separate passes then.
 * The pass's table is the one memo keeps from row to row: emptied where it ran out of
 * extras (and the row looked up again), then settled (fr_few_memo_settle; n counts only
 * the values above v, not those the row holds). */
static inline ptrdiff_t fr_few_distinct_above_counted_f32(int level, const float* x,
                                                          ptrdiff_t stride, ptrdiff_t m, float v,
                                                          float* seen, fr_few_memo_f32* memo,
                                                          int64_t* counts) {
    (void)level, (void)x, (void)stride, (void)m, (void)v, (void)seen, (void)memo, (void)counts;
#ifdef FR_X86
    if (level >= FR_SIMD_AVX2 && stride == 1) {
        ptrdiff_t (*pass)(fr_few_memo_f32*, const float*, ptrdiff_t, float, float*, int64_t*) =
            level >= FR_SIMD_AVX512 ? fr_distinct_above_f32_avx512_pass
                                    : fr_distinct_above_f32_avx2_pass;
        ptrdiff_t n = pass(memo, x, m, v, seen, counts);
        if (n == -2) {
            fr_few_memo_clear(memo);
            n = pass(memo, x, m, v, seen, counts);
        }
        return fr_few_memo_settle(memo, n, -1);
    }
#endif
    return -1;
}

/* The distinct values of x[j * stride] (j < m) above v while there are few (AVX2 and
 * AVX-512, contiguous rows: float32 by fr_few_distinct_above_counted_f32, in the order of
 * its table; float64 by fr_distinct_above_f64_*); -1 where there are more or on another
 * path (the caller counts them in a hash set). */
static inline ptrdiff_t fr_few_distinct_above_f32(int level, const float* x, ptrdiff_t stride,
                                                  ptrdiff_t m, float v, float* seen,
                                                  fr_few_memo_f32* memo) {
    return fr_few_distinct_above_counted_f32(level, x, stride, m, v, seen, memo, NULL);
}
static inline ptrdiff_t fr_few_distinct_above_f64(int level, const double* x, ptrdiff_t stride,
                                                  ptrdiff_t m, double v, double* seen) {
    (void)level, (void)x, (void)stride, (void)m, (void)v, (void)seen;
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512 && stride == 1)
        return fr_distinct_above_f64_avx512(x, m, v, seen);
    if (level >= FR_SIMD_AVX2 && stride == 1)
        return fr_distinct_above_f64_avx2(x, m, v, seen);
#endif
    return -1;
}

/* out[0:d] <- the d distinct values of keys[0:n] in ascending order, count[0:d] <- how
 * often each occurs; returns d, or -1 (nothing written) where n > 16 or below AVX2 (the
 * caller sorts the keys): the few relevant levels of a row, without the mispredicted
 * branches of a small sort. */
static inline ptrdiff_t fr_distinct_keys(int level, const uint64_t* keys, ptrdiff_t n,
                                         uint64_t* out, int64_t* count) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512 && n <= 16)
        return fr_distinct_keys_avx512(keys, n, out, count);
    if (level >= FR_SIMD_AVX2 && n <= 16)
        return fr_distinct_keys_avx2(keys, n, out, count);
#endif
    (void)level, (void)keys, (void)n, (void)out, (void)count;
    return -1;
}

#endif
