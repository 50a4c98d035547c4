/* Exact cosine similarities: dot products summed in one fixed order on every path, and the
   cosine from a dot product and two squared norms. */
#ifndef FR_COSINE_H
#define FR_COSINE_H

#include <math.h>
#include <stdint.h>

#include "simd.h"

/* Run once before the other functions (it reads the CPU's features). */
void fr_cosine_init(void);

/* Row-major s (mq x mb) <- q (mq x d) @ b (mb x d).T, each element summed in the fixed
   order of dots/common.h: a dot product depends only on its two rows, not on the block
   shapes, the rows' positions or the level, which picks the code (fr_dots_path). */
void fr_dots_f64(fr_simd_level level, const double* q, const double* b, double* s,
                 int64_t mq, int64_t mb, int64_t d);
void fr_dots_f32(fr_simd_level level, const float* q, const float* b, float* s, int64_t mq,
                 int64_t mb, int64_t d);

/* out[i] <- row i of x (n rows of m values) times the power of two that brings its
   largest magnitude into [1/2, 1) (a zero row stays zero): exact, barring underflow
   below the smallest normal number, so exact ties survive, cosines are unchanged and
   the sums cannot overflow. Unless sqnorms is NULL, sqnorms[i] <- the squared norm of
   out[i], its dot product with itself as fr_dots computes it, while the row is in
   cache. A row holding NaN or infinity gets a norm that is not finite (its values
   scaled by some power of two). The level picks the code, not the result. */
void fr_scale_rows_f64(fr_simd_level level, const double* x, double* out, double* sqnorms,
                       int64_t n, int64_t m);
void fr_scale_rows_f32(fr_simd_level level, const float* x, float* out, float* sqnorms,
                       int64_t n, int64_t m);

/* Which of n <= 64 base rows may rank among a query's best: bit j is set when
   dot[j] * w[j] (rounded in the type of the search) is not below lo. With w the inverse
   norms of the base rows, and lo a bound below the k-th best cosine divided by the inverse
   norm of the query, widened by the roundings (see cosine_topk.pyx), the search's sieve
   before its finer filter and the exact cosine (fr_cosine): it decides no result. The
   level picks the code, as for the dot products. */
uint64_t fr_may_enter_f64(fr_simd_level level, const double* dot, const double* w, int64_t n,
                          double lo);
uint64_t fr_may_enter_f32(fr_simd_level level, const float* dot, const float* w, int64_t n,
                          float lo);

/* fr_may_enter of n rows, any number: masks[c] <- fr_may_enter of rows 64 c .. 64 c + 63
   (fewer in the last word), for c < ceil(n / 64). */
void fr_may_enter_rows_f64(fr_simd_level level, const double* dot, const double* w, int64_t n,
                           double lo, uint64_t* masks);
void fr_may_enter_rows_f32(fr_simd_level level, const float* dot, const float* w, int64_t n,
                           float lo, uint64_t* masks);

/* The largest dot[j] * w[j] (rounded in the type of the search) of n >= 1 base rows, with
   *at a row that gives it and *next the largest product of the other rows (-inf when
   n = 1; equal to the largest when two rows give it), in one pass; n < 2^31. With w the
   inverse norms of the base rows, the largest is a query's best cosine up to the
   roundings, which the search of its single best row turns into a bar; when *next is
   below the bar's sieve bound, row *at is the only one that passes the sieve, and no
   second pass looks for others (see cosine_topk.pyx). The level picks the code. */
double fr_top2_scaled_f64(fr_simd_level level, const double* dot, const double* w, int64_t n,
                          int64_t* at, double* next);
float fr_top2_scaled_f32(fr_simd_level level, const float* dot, const float* w, int64_t n,
                         int64_t* at, float* next);

/* A lower bound, close below or equal, on the k-th largest dot[j] * w[j] (rounded in the
   type of the search) of n >= k base rows, 1 <= k <= FR_KTH_GROUPS: a product such that
   at least k products are not below it (the k-th largest of the largest products of
   about 4 k groups of rows, bounded in turn by counting them in buckets). With w the
   inverse norms of the base rows, at least k rows reach this value times the query's
   inverse norm, up to the roundings: the search's bar for a query's first block (see
   cosine_topk.pyx). */
#define FR_KTH_GROUPS 1024
#define FR_KTH_BUCKETS 256
double fr_kth_scaled_f64(const double* dot, const double* w, int64_t n, int64_t k);
float fr_kth_scaled_f32(const float* dot, const float* w, int64_t n, int64_t k);

/* acc[j] <- (((acc[j] + w[0] x[0][j]) + w[1] x[1][j]) + ...) + w[m-1] x[m-1][j] for j < n,
   1 <= m <= FR_ADD_LISTS: the CSR search's accumulation of m posting lists that each hold
   every base row, in one pass; each term a multiply then an add (never fused), so the bits
   of adding the lists one after the other, as the scattered lists add. The level picks the
   vector width, not the result. */
#define FR_ADD_LISTS 4
void fr_add_scaled_f64(fr_simd_level level, double* acc, const double* w,
                       const double* const* x, int m, int64_t n);
void fr_add_scaled_f32(fr_simd_level level, float* acc, const float* w,
                       const float* const* x, int m, int64_t n);

/* The level whose code the dot products run at `level`: AVX-512 (F, DQ) from
   FR_SIMD_AVX512 on, AVX2 with FMA3, at FR_SIMD_POPCNT the portable sums with fma
   emulated (x86-64 CPUs without FMA3, whose C library computes fma in software), and at
   FR_SIMD_PORTABLE the portable sums with the C library's fma -- emulated too on an
   x86-64 CPU without FMA3. */
fr_simd_level fr_dots_path(fr_simd_level level);

/* The cosine from a dot product and the two squared norms:
   sign(dot) * sqrt(dot^2 / (aa * bb)), the ratio rounded once (float64), clipped to 1;
   0 when a norm is 0. When dot, aa and bb are exact integers (times powers of two) and
   dot^2 and aa * bb are exact in float64, the result depends only on the rational
   number dot^2 / (aa bb) and the sign: equal cosines give equal bits. */
static inline double fr_cosine(double dot, double aa, double bb) {
    double den = aa * bb, r = den > 0 ? dot * dot / den : 0.0;
    r = sqrt(r < 1.0 ? r : 1.0);
    return dot < 0 ? -r : r;
}

#endif
