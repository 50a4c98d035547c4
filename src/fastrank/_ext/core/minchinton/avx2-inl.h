/* Minchinton encoders with AVX2: vector compares of 4 or 8 cells, and 64 rows at once
   through their ranks (two 256-bit halves of byte compares). */
#ifndef FR_MINCHINTON_AVX2_INL_H
#define FR_MINCHINTON_AVX2_INL_H

#include "common-inl.h"

#ifdef FR_X86
#define FR_GT_PD256(a, b) _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_GT_OQ))
#define FR_GT_PS256(a, b) _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ))
FR_ENCODE_SIMD(fr_encode_f64_avx2, FR_TARGET_AVX2, double, 4, _mm256_loadu_pd, FR_GT_PD256)
FR_ENCODE_SIMD(fr_encode_f32_avx2, FR_TARGET_AVX2, float, 8, _mm256_loadu_ps, FR_GT_PS256)

/* AVX2 has a signed byte compare only: its ranks are stored with the top bit flipped
   (rank ^ 0x80), whose signed order is the ranks' order. The rank of each of the
   n_cols values of row x as above, LANES values at a time (the last ones from a
   padded copy), each x[b] broadcast against them and the all-ones lanes where below
   subtracted from 4 running counts. */
#define FR_ROW_RANKS_AVX2(NAME, T, VT, LANES, LOADU, SET1, CMP, MOVEMASK, CAST, SUB, \
                          COUNT_T)                                                   \
    FR_TARGET_AVX2 static inline int NAME(const T* x, int64_t n_cols, uint8_t* rank, \
                                          int64_t step) {                            \
        COUNT_T count[LANES] __attribute__((aligned(32)));                           \
        T pad[LANES];                                                                \
        int64_t a, b, l, nv;                                                         \
        for (a = 0; a < n_cols; a += (LANES)) {                                      \
            __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;          \
            VT xa;                                                                   \
            nv = n_cols - a < (LANES) ? n_cols - a : (LANES);                        \
            for (l = 0; l < (LANES); l++) pad[l] = l < nv ? x[a + l] : 0;            \
            xa = LOADU(pad);                                                         \
            if (MOVEMASK(CMP(xa, xa, _CMP_UNORD_Q)) & ((1 << nv) - 1)) return 0;     \
            for (b = 0; b + 4 <= n_cols; b += 4) {                                   \
                c0 = SUB(c0, CAST(CMP(SET1(x[b]), xa, _CMP_LT_OQ)));                 \
                c1 = SUB(c1, CAST(CMP(SET1(x[b + 1]), xa, _CMP_LT_OQ)));             \
                c2 = SUB(c2, CAST(CMP(SET1(x[b + 2]), xa, _CMP_LT_OQ)));             \
                c3 = SUB(c3, CAST(CMP(SET1(x[b + 3]), xa, _CMP_LT_OQ)));             \
            }                                                                        \
            for (; b < n_cols; b++)                                                  \
                c0 = SUB(c0, CAST(CMP(SET1(x[b]), xa, _CMP_LT_OQ)));                 \
            _mm256_store_si256((__m256i*) count, _mm256_add_epi64(                   \
                _mm256_add_epi64(c0, c1), _mm256_add_epi64(c2, c3)));                \
            for (l = 0; l < nv; l++)                                                 \
                rank[(a + l) * step] = (uint8_t) (count[l] ^ 0x80);                  \
        }                                                                            \
        return 1;                                                                    \
    }
FR_ROW_RANKS_AVX2(fr_row_ranks_f64_avx2, double, __m256d, 4, _mm256_loadu_pd,
                  _mm256_set1_pd, _mm256_cmp_pd, _mm256_movemask_pd,
                  _mm256_castpd_si256, _mm256_sub_epi64, int64_t)
FR_ROW_RANKS_AVX2(fr_row_ranks_f32_avx2, float, __m256, 8, _mm256_loadu_ps,
                  _mm256_set1_ps, _mm256_cmp_ps, _mm256_movemask_ps,
                  _mm256_castps_si256, _mm256_sub_epi32, int32_t)
/* the ranks of 64 rows at one feature (two AVX2 halves), and the cells of 64 rows
   where a's rank is above b's */
typedef struct { __m256i lo, hi; } fr_ranks64;
FR_TARGET_AVX2 static inline fr_ranks64 fr_load_ranks64(const uint8_t* p) {
    fr_ranks64 v;
    v.lo = _mm256_load_si256((const __m256i*) p);
    v.hi = _mm256_load_si256((const __m256i*) (p + 32));
    return v;
}
FR_TARGET_AVX2 static inline uint64_t fr_gt_ranks64(fr_ranks64 a, fr_ranks64 b) {
    uint32_t lo = (uint32_t) _mm256_movemask_epi8(_mm256_cmpgt_epi8(a.lo, b.lo));
    uint32_t hi = (uint32_t) _mm256_movemask_epi8(_mm256_cmpgt_epi8(a.hi, b.hi));
    return (uint64_t) lo | (uint64_t) hi << 32;
}
#define FR_LOAD256(p) _mm256_load_si256((const __m256i*) (p))
#define FR_STORE256A(p, a) _mm256_store_si256((__m256i*) (p), a)
#define FR_STOREU256(p, a) _mm256_storeu_si256((__m256i*) (p), a)
#define FR_NO_STREAM(dst, src, n) ((void) 0)   /* never called: AVX2 does not stream */
#define FR_NO_SFENCE() ((void) 0)
#define FR_ENCODE_RANKED256(NAME, T, RANKS)                                            \
    FR_ENCODE_RANKED(NAME, FR_TARGET_AVX2, T, RANKS, fr_ranks64, fr_load_ranks64,      \
                     fr_gt_ranks64, __m256i, 4, FR_TRANSPOSE_STAGE256, FR_LOAD256,     \
                     FR_STORE256A, FR_STOREU256, 0, FR_NO_STREAM, FR_NO_SFENCE)
FR_ENCODE_RANKED256(fr_encode_rows_f64_avx2, double, fr_row_ranks_f64_avx2)
FR_ENCODE_RANKED256(fr_encode_rows_f32_avx2, float, fr_row_ranks_f32_avx2)
#endif

#endif
