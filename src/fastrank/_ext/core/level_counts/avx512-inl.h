/* Level counts with AVX-512 F: each comparison gives a mask that adds one to the lanes it
   selects (one instruction, where the vectorised C loop takes two). */
#ifndef FR_LEVEL_COUNTS_AVX512_INL_H
#define FR_LEVEL_COUNTS_AVX512_INL_H

#include "avx2-inl.h"

#ifdef FR_X86
/* As FR_LEVELS_GENERIC (the same counts), for contiguous rows: W values of type T to a
   vector VT, compared by CMP into a mask of type MASK that adds one to the lanes (ADD) of
   integer counters, summed across lanes by SUM; the row's last values read under a mask.
   Blocks of at most 2^30 values: the lanes' sums cannot wrap. */
#define FR_LEVELS_AVX512_STEP(CMP, ADD, NL, A, K)                                                       \
    do {                                                                                  \
        for (l = 0; l < NL; l++) {                                                        \
            g[l] = ADD(g[l], CMP(K, A, w[l], _CMP_GT_OQ), g[l], one);                     \
            e[l] = ADD(e[l], CMP(K, A, w[l], _CMP_EQ_OQ), e[l], one);                     \
        }                                                                                 \
        if (nan)                                                                          \
            lt = ADD(lt, CMP(K, A, w[0], _CMP_LT_OQ), lt, one);                           \
    } while (0)
#define FR_LEVELS_AVX512(T, VT, W, MASK, LOAD, LOAD_TAIL, SET1, CMP, ADD, ONE, SUM, NL,   \
                         NAME)                                                            \
    static FR_TARGET_AVX512 void NAME(const T* x, ptrdiff_t m, const T* v, int64_t* gt,   \
                                      int64_t* eq, int64_t* nan) {                        \
        const __m512i one = ONE(1);                                                       \
        const MASK all = (MASK) ~0u;                                                      \
        int64_t gs[NL] = {0}, es[NL] = {0}, ls = 0;                                       \
        VT w[NL];                                                                         \
        ptrdiff_t j = 0;                                                                  \
        int l;                                                                            \
        for (l = 0; l < NL; l++)                                                          \
            w[l] = SET1(v[l]);                                                            \
        while (j < m) {                                                                   \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            __m512i g[NL], e[NL], lt = _mm512_setzero_si512();                            \
            for (l = 0; l < NL; l++)                                                      \
                g[l] = e[l] = _mm512_setzero_si512();                                     \
            for (; j + W <= stop; j += W) {                                               \
                VT a = LOAD(x + j);                                                       \
                FR_LEVELS_AVX512_STEP(CMP, ADD, NL, a, all);                                            \
            }                                                                             \
            if (j < stop) {                                                               \
                MASK tail = (MASK) ((1u << (stop - j)) - 1);                              \
                VT a = LOAD_TAIL(tail, x + j);                                            \
                FR_LEVELS_AVX512_STEP(CMP, ADD, NL, a, tail);                                           \
                j = stop;                                                                 \
            }                                                                             \
            for (l = 0; l < NL; l++) {                                                    \
                gs[l] += SUM(g[l]);                                                       \
                es[l] += SUM(e[l]);                                                       \
            }                                                                             \
            ls += SUM(lt);                                                                \
        }                                                                                 \
        for (l = 0; l < NL; l++) {                                                        \
            gt[l] = gs[l];                                                                \
            eq[l] = es[l];                                                                \
        }                                                                                 \
        if (nan)                                                                          \
            *nan = m - gs[0] - es[0] - ls;                                                \
    }
#define FR_LEVELS_AVX512_F32(NL, NAME)                                                    \
    FR_LEVELS_AVX512(float, __m512, 16, __mmask16, _mm512_loadu_ps, _mm512_maskz_loadu_ps, \
                     _mm512_set1_ps, _mm512_mask_cmp_ps_mask, _mm512_mask_add_epi32,      \
                     _mm512_set1_epi32, _mm512_reduce_add_epi32, NL, NAME)
#define FR_LEVELS_AVX512_F64(NL, NAME)                                                    \
    FR_LEVELS_AVX512(double, __m512d, 8, __mmask8, _mm512_loadu_pd, _mm512_maskz_loadu_pd, \
                     _mm512_set1_pd, _mm512_mask_cmp_pd_mask, _mm512_mask_add_epi64,      \
                     _mm512_set1_epi64, _mm512_reduce_add_epi64, NL, NAME)
FR_LEVELS_AVX512_F32(1, fr_levels1_f32_avx512)
FR_LEVELS_AVX512_F32(2, fr_levels2_f32_avx512)
FR_LEVELS_AVX512_F32(4, fr_levels4_f32_avx512)
FR_LEVELS_AVX512_F64(1, fr_levels1_f64_avx512)
FR_LEVELS_AVX512_F64(2, fr_levels2_f64_avx512)
FR_LEVELS_AVX512_F64(4, fr_levels4_f64_avx512)
#endif

#endif
