/* Dot products (cosine.h): each path's code is in dots/, one instruction set per file;
   this file chooses among them by level. */
#include "cosine.h"

#include "dots/generic-inl.h"
#include "dots/avx2-inl.h"
#include "dots/avx512-inl.h"

/* an x86-64 CPU without FMA3: the C library's fma is software there, about 50 times
   slower than the emulation (set by fr_cosine_init) */
static int fr_fma_missing = 0;

void fr_cosine_init(void) {
#ifdef FR_X86
    fr_fma_missing = !(fr_cpu_features() & FR_CPU_FMA);
#endif
}

fr_simd_level fr_dots_path(fr_simd_level level) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512) return FR_SIMD_AVX512;
    if (level >= FR_SIMD_AVX2) return FR_SIMD_AVX2;
    if (level == FR_SIMD_POPCNT || fr_fma_missing) return FR_SIMD_POPCNT;
#else
    (void) level;
#endif
    return FR_SIMD_PORTABLE;
}

#ifdef FR_X86
#define FR_DOTS_DISPATCH(T, SFX)                                                   \
    switch (fr_dots_path(level)) {                                                 \
    case FR_SIMD_AVX512: fr_dots_##SFX##_avx512(q, b, s, mq, mb, d); return;       \
    case FR_SIMD_AVX2: fr_dots_##SFX##_avx2(q, b, s, mq, mb, d); return;           \
    case FR_SIMD_POPCNT: fr_dots_##SFX##_emulated(q, b, s, mq, mb, d); return;     \
    default: fr_dots_##SFX##_portable(q, b, s, mq, mb, d); return;                 \
    }
#else
#define FR_DOTS_DISPATCH(T, SFX)                                                   \
    (void) level;                                                                  \
    fr_dots_##SFX##_portable(q, b, s, mq, mb, d);
#endif

void fr_dots_f64(fr_simd_level level, const double* q, const double* b, double* s,
                 int64_t mq, int64_t mb, int64_t d) {
    FR_DOTS_DISPATCH(double, f64)
}

void fr_dots_f32(fr_simd_level level, const float* q, const float* b, float* s, int64_t mq,
                 int64_t mb, int64_t d) {
    FR_DOTS_DISPATCH(float, f32)
}

#ifdef FR_X86
#define FR_MAY_ENTER_DISPATCH(SFX)                                                  \
    switch (fr_dots_path(level)) {                                                  \
    case FR_SIMD_AVX512: return fr_may_enter_##SFX##_avx512(dot, w, n, lo);         \
    case FR_SIMD_AVX2: return fr_may_enter_##SFX##_avx2(dot, w, n, lo);             \
    default: return fr_may_enter_##SFX##_portable(dot, w, n, lo);                   \
    }
#else
#define FR_MAY_ENTER_DISPATCH(SFX)                                                  \
    (void) level;                                                                   \
    return fr_may_enter_##SFX##_portable(dot, w, n, lo);
#endif

uint64_t fr_may_enter_f64(fr_simd_level level, const double* dot, const double* w, int64_t n,
                          double lo) {
    FR_MAY_ENTER_DISPATCH(f64)
}

uint64_t fr_may_enter_f32(fr_simd_level level, const float* dot, const float* w, int64_t n,
                          float lo) {
    FR_MAY_ENTER_DISPATCH(f32)
}

#define FR_MAY_ENTER_ROWS(SFX, PATH)                                                  \
    for (c = 0; 64 * c < n; c++)                                                         \
        masks[c] = fr_may_enter_##SFX##_##PATH(dot + 64 * c, w + 64 * c,                 \
                                               n - 64 * c < 64 ? n - 64 * c : 64, lo);
#ifdef FR_X86
#define FR_MAY_ENTER_ROWS_DISPATCH(SFX)                                              \
    int64_t c;                                                                          \
    switch (fr_dots_path(level)) {                                                      \
    case FR_SIMD_AVX512: FR_MAY_ENTER_ROWS(SFX, avx512) return;                      \
    case FR_SIMD_AVX2: FR_MAY_ENTER_ROWS(SFX, avx2) return;                          \
    default: FR_MAY_ENTER_ROWS(SFX, portable) return;                                \
    }
#else
#define FR_MAY_ENTER_ROWS_DISPATCH(SFX)                                              \
    int64_t c;                                                                          \
    (void) level;                                                                       \
    FR_MAY_ENTER_ROWS(SFX, portable)
#endif

void fr_may_enter_rows_f64(fr_simd_level level, const double* dot, const double* w, int64_t n,
                           double lo, uint64_t* masks) {
    FR_MAY_ENTER_ROWS_DISPATCH(f64)
}

void fr_may_enter_rows_f32(fr_simd_level level, const float* dot, const float* w, int64_t n,
                           float lo, uint64_t* masks) {
    FR_MAY_ENTER_ROWS_DISPATCH(f32)
}

#define FR_SCALE_ROWS_PORTABLE(SFX)                                                   \
    int64_t i;                                                                      \
    for (i = 0; i < n; i++) {                                                       \
        fr_scale_row_##SFX##_portable(x + i * m, out + i * m, m);                   \
        if (sqnorms != NULL)                                                        \
            fr_dots_##SFX(level, out + i * m, out + i * m, sqnorms + i, 1, 1, m);    \
    }
#ifdef FR_X86
#define FR_SCALE_ROWS_DISPATCH(SFX)                                                   \
    if (fr_dots_path(level) >= FR_SIMD_AVX2) {                                      \
        fr_scale_rows_##SFX##_avx2(x, out, sqnorms, n, m);                          \
        return;                                                                     \
    }                                                                               \
    FR_SCALE_ROWS_PORTABLE(SFX)
#else
#define FR_SCALE_ROWS_DISPATCH(SFX) FR_SCALE_ROWS_PORTABLE(SFX)
#endif

void fr_scale_rows_f64(fr_simd_level level, const double* x, double* out, double* sqnorms,
                       int64_t n, int64_t m) {
    FR_SCALE_ROWS_DISPATCH(f64)
}

void fr_scale_rows_f32(fr_simd_level level, const float* x, float* out, float* sqnorms,
                       int64_t n, int64_t m) {
    FR_SCALE_ROWS_DISPATCH(f32)
}

#ifdef FR_X86
#define FR_TOP2_SCALED_DISPATCH(SFX)                                                  \
    switch (fr_dots_path(level)) {                                                  \
    case FR_SIMD_AVX512: return fr_top2_scaled_##SFX##_avx512(dot, w, n, at, next); \
    case FR_SIMD_AVX2: return fr_top2_scaled_##SFX##_avx2(dot, w, n, at, next);     \
    default: return fr_top2_scaled_##SFX##_portable(dot, w, n, at, next);           \
    }
#else
#define FR_TOP2_SCALED_DISPATCH(SFX)                                                  \
    (void) level;                                                                   \
    return fr_top2_scaled_##SFX##_portable(dot, w, n, at, next);
#endif

double fr_top2_scaled_f64(fr_simd_level level, const double* dot, const double* w, int64_t n,
                          int64_t* at, double* next) {
    FR_TOP2_SCALED_DISPATCH(f64)
}

float fr_top2_scaled_f32(fr_simd_level level, const float* dot, const float* w, int64_t n,
                         int64_t* at, float* next) {
    FR_TOP2_SCALED_DISPATCH(f32)
}

/* fr_kth_scaled: the largest product of each of G >= k groups of rows (row j in group
   j mod G; G about 4 k) bounds the k-th largest product from below, as k of the groups'
   largest are k rows; the k-th largest of the G maxima is bounded by buckets: a pass for
   their range (16 lanes: a loop the compiler vectorizes), a pass that counts each bucket
   and keeps its smallest value, then the buckets from the top. */
#define FR_KTH_SCALED(T, SFX)                                                            \
    T fr_kth_scaled_##SFX(const T* dot, const T* w, int64_t n, int64_t k) {              \
        int64_t g = (4 * k + 15) / 16 * 16, j, l, b, seen = 0, nbk;                      \
        int64_t count[FR_KTH_BUCKETS] = {0};                                             \
        T top[FR_KTH_GROUPS], low[FR_KTH_BUCKETS], lo[16], hi[16], x;                    \
        double scale;                                                                    \
        g = g < FR_KTH_GROUPS ? g : FR_KTH_GROUPS;                                       \
        g = g < n ? g : n;                                                               \
        top[0] = dot[0] * w[0];                                                          \
        for (j = 1; j < g; j++) top[j] = dot[j] * w[j];                                  \
        for (; j + g <= n; j += g)                                                       \
            for (l = 0; l < g; l++) {                                                    \
                x = dot[j + l] * w[j + l];                                               \
                top[l] = x > top[l] ? x : top[l];                                        \
            }                                                                            \
        for (l = 0; j + l < n; l++) {                                                    \
            x = dot[j + l] * w[j + l];                                                   \
            top[l] = x > top[l] ? x : top[l];                                            \
        }                                                                                \
        for (l = 0; l < 16; l++) lo[l] = hi[l] = top[0];                                 \
        for (j = 0; j + 16 <= g; j += 16)                                                \
            for (l = 0; l < 16; l++) {                                                   \
                lo[l] = top[j + l] < lo[l] ? top[j + l] : lo[l];                         \
                hi[l] = top[j + l] > hi[l] ? top[j + l] : hi[l];                         \
            }                                                                            \
        for (l = 0; j + l < g; l++) {                                                    \
            lo[l] = top[j + l] < lo[l] ? top[j + l] : lo[l];                             \
            hi[l] = top[j + l] > hi[l] ? top[j + l] : hi[l];                             \
        }                                                                                \
        for (l = 1; l < 16; l++) {                                                       \
            lo[0] = lo[l] < lo[0] ? lo[l] : lo[0];                                       \
            hi[0] = hi[l] > hi[0] ? hi[l] : hi[0];                                       \
        }                                                                                \
        if (!(hi[0] > lo[0])) return lo[0];                                              \
        nbk = g < FR_KTH_BUCKETS ? g : FR_KTH_BUCKETS;                                   \
        scale = nbk / ((double) hi[0] - (double) lo[0]);                                 \
        for (b = 0; b < nbk; b++) low[b] = hi[0];                                        \
        for (j = 0; j < g; j++) {                                                        \
            x = top[j];                                                                  \
            b = (int64_t) (((double) x - (double) lo[0]) * scale);                       \
            b = b < nbk ? b : nbk - 1;                                                   \
            count[b]++;                                                                  \
            low[b] = x < low[b] ? x : low[b];                                            \
        }                                                                                \
        for (b = nbk - 1; b > 0; b--) {                                                  \
            seen += count[b];                                                            \
            if (seen >= k) break;                                                        \
        }                                                                                \
        return low[b];                                                                   \
    }
FR_KTH_SCALED(double, f64)
FR_KTH_SCALED(float, f32)

/* fr_add_scaled: plain loops, one per number of lists, compiled once per vector width (the
   contraction of a multiply and an add into an fma is off for the whole build) */
#define FR_ADD_SCALED(T, NAME, ATTR)                                                    \
    static ATTR void NAME(T* restrict acc, const T* w, const T* const* x, int m,       \
                          int64_t n) {                                                  \
        const T* restrict x0 = x[0];                                                    \
        const T w0 = w[0];                                                              \
        int64_t j;                                                                      \
        if (m == 1) {                                                                   \
            for (j = 0; j < n; j++) acc[j] = acc[j] + w0 * x0[j];                       \
        } else if (m == 2) {                                                            \
            const T* restrict x1 = x[1];                                                \
            const T w1 = w[1];                                                          \
            for (j = 0; j < n; j++) acc[j] = (acc[j] + w0 * x0[j]) + w1 * x1[j];       \
        } else if (m == 3) {                                                            \
            const T *restrict x1 = x[1], *restrict x2 = x[2];                           \
            const T w1 = w[1], w2 = w[2];                                               \
            for (j = 0; j < n; j++)                                                     \
                acc[j] = ((acc[j] + w0 * x0[j]) + w1 * x1[j]) + w2 * x2[j];             \
        } else {                                                                        \
            const T *restrict x1 = x[1], *restrict x2 = x[2], *restrict x3 = x[3];      \
            const T w1 = w[1], w2 = w[2], w3 = w[3];                                    \
            for (j = 0; j < n; j++)                                                     \
                acc[j] = (((acc[j] + w0 * x0[j]) + w1 * x1[j]) + w2 * x2[j])            \
                         + w3 * x3[j];                                                  \
        }                                                                               \
    }
FR_ADD_SCALED(double, fr_add_scaled_f64_portable, )
FR_ADD_SCALED(float, fr_add_scaled_f32_portable, )
#ifdef FR_X86
FR_ADD_SCALED(double, fr_add_scaled_f64_avx2, FR_TARGET_AVX2)
FR_ADD_SCALED(float, fr_add_scaled_f32_avx2, FR_TARGET_AVX2)
FR_ADD_SCALED(double, fr_add_scaled_f64_avx512, FR_TARGET_AVX512)
FR_ADD_SCALED(float, fr_add_scaled_f32_avx512, FR_TARGET_AVX512)
#define FR_ADD_SCALED_DISPATCH(SFX)                                                     \
    if (level >= FR_SIMD_AVX512) fr_add_scaled_##SFX##_avx512(acc, w, x, m, n);        \
    else if (level >= FR_SIMD_AVX2) fr_add_scaled_##SFX##_avx2(acc, w, x, m, n);       \
    else fr_add_scaled_##SFX##_portable(acc, w, x, m, n);
#else
#define FR_ADD_SCALED_DISPATCH(SFX)                                                     \
    (void) level;                                                                       \
    fr_add_scaled_##SFX##_portable(acc, w, x, m, n);
#endif

void fr_add_scaled_f64(fr_simd_level level, double* acc, const double* w,
                       const double* const* x, int m, int64_t n) {
    FR_ADD_SCALED_DISPATCH(f64)
}

void fr_add_scaled_f32(fr_simd_level level, float* acc, const float* w,
                       const float* const* x, int m, int64_t n) {
    FR_ADD_SCALED_DISPATCH(f32)
}
