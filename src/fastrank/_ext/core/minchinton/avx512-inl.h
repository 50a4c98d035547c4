/* Minchinton encoders with AVX-512 F, BW, VL: vector compares of 8 or 16 cells, and 64
   rows at once through their ranks (one byte compare), written past the caches for a
   model's memory. */
#ifndef FR_MINCHINTON_AVX512_INL_H
#define FR_MINCHINTON_AVX512_INL_H

#include "common-inl.h"

#ifdef FR_X86
#define FR_GT_PD512(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
#define FR_GT_PS512(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
FR_ENCODE_SIMD(fr_encode_f64_avx512, FR_TARGET_AVX512, double, 8, _mm512_loadu_pd,
               FR_GT_PD512)
FR_ENCODE_SIMD(fr_encode_f32_avx512, FR_TARGET_AVX512, float, 16, _mm512_loadu_ps,
               FR_GT_PS512)

/* The rank of each of the n_cols values of row x (the number of the row's values below
   it) into rank[a * step] for value a; returns 0 when a value is NaN. LANES values a
   at a time, each x[b] broadcast against them and counted where below (4 running
   counts, so the additions overlap). */
#define FR_ROW_RANKS(NAME, T, VT, LANES, MASKT, MASKZ_LOADU, SET1, CMP, COUNT_T,       \
                     MASK_ADD, SET1_COUNT, ADD_COUNT)                                  \
    FR_TARGET_AVX512 static inline int NAME(const T* x, int64_t n_cols, uint8_t* rank, \
                                            int64_t step) {                            \
        COUNT_T count[LANES] __attribute__((aligned(64)));                             \
        const __m512i one = SET1_COUNT(1);                                             \
        int64_t a, b, l, nv;                                                           \
        for (a = 0; a < n_cols; a += (LANES)) {                                        \
            __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;            \
            VT xa;                                                                     \
            MASKT valid;                                                               \
            nv = n_cols - a < (LANES) ? n_cols - a : (LANES);                          \
            valid = (MASKT) ((1ULL << nv) - 1);                                        \
            xa = MASKZ_LOADU(valid, x + a);                                            \
            if (CMP(xa, xa, _CMP_UNORD_Q) & valid) return 0;                           \
            for (b = 0; b + 4 <= n_cols; b += 4) {                                     \
                c0 = MASK_ADD(c0, CMP(SET1(x[b]), xa, _CMP_LT_OQ), c0, one);           \
                c1 = MASK_ADD(c1, CMP(SET1(x[b + 1]), xa, _CMP_LT_OQ), c1, one);       \
                c2 = MASK_ADD(c2, CMP(SET1(x[b + 2]), xa, _CMP_LT_OQ), c2, one);       \
                c3 = MASK_ADD(c3, CMP(SET1(x[b + 3]), xa, _CMP_LT_OQ), c3, one);       \
            }                                                                          \
            for (; b < n_cols; b++)                                                    \
                c0 = MASK_ADD(c0, CMP(SET1(x[b]), xa, _CMP_LT_OQ), c0, one);           \
            _mm512_store_si512((void*) count,                                          \
                               ADD_COUNT(ADD_COUNT(c0, c1), ADD_COUNT(c2, c3)));       \
            for (l = 0; l < nv; l++) rank[(a + l) * step] = (uint8_t) count[l];        \
        }                                                                              \
        return 1;                                                                      \
    }
FR_ROW_RANKS(fr_row_ranks_f64, double, __m512d, 8, __mmask8, _mm512_maskz_loadu_pd,
             _mm512_set1_pd, _mm512_cmp_pd_mask, int64_t, _mm512_mask_add_epi64,
             _mm512_set1_epi64, _mm512_add_epi64)
FR_ROW_RANKS(fr_row_ranks_f32, float, __m512, 16, __mmask16, _mm512_maskz_loadu_ps,
             _mm512_set1_ps, _mm512_cmp_ps_mask, int32_t, _mm512_mask_add_epi32,
             _mm512_set1_epi32, _mm512_add_epi32)
#define FR_LOAD_RANKS512(p) _mm512_load_si512((const void*) (p))
#define FR_GT_RANKS512(a, b) ((uint64_t) _mm512_cmpgt_epu8_mask(a, b))
/* A copy dst[0 .. n-1] <- src[0 .. n-1] with non-temporal stores where dst is 64-byte
   aligned (patterns written once for a model's memory bypass the caches: no read of
   the lines they overwrite), done in steps: words i .. n-1 are left. */
typedef struct { uint64_t* dst; const uint64_t* src; int64_t i, n; } fr_stream;
FR_TARGET_AVX512 static inline void fr_stream_begin(fr_stream* c, uint64_t* dst,
                                                    const uint64_t* src, int64_t n) {
    c->dst = dst; c->src = src; c->n = n;
    for (c->i = 0; c->i < n && ((uintptr_t) (dst + c->i) & 63) != 0; c->i++)
        dst[c->i] = src[c->i];
}
/* up to `lines` more 64-byte lines of the copy, and its last words after its lines */
FR_TARGET_AVX512 static inline void fr_stream_step(fr_stream* c, int64_t lines) {
    for (; lines > 0 && c->i + 8 <= c->n; lines--, c->i += 8)
        _mm512_stream_si512((__m512i*) (c->dst + c->i),
                            _mm512_loadu_si512((const void*) (c->src + c->i)));
    if (c->i + 8 > c->n)
        for (; c->i < c->n; c->i++) c->dst[c->i] = c->src[c->i];
}
FR_TARGET_AVX512 static void fr_stream_words(uint64_t* dst, const uint64_t* src, int64_t n) {
    fr_stream c;
    fr_stream_begin(&c, dst, src, n);
    fr_stream_step(&c, n);
}
#define FR_ENCODE_RANKED512(NAME, T, RANKS)                                            \
    FR_ENCODE_RANKED(NAME, FR_TARGET_AVX512, T, RANKS, __m512i, FR_LOAD_RANKS512,      \
                     FR_GT_RANKS512, __m512i, 8, FR_TRANSPOSE_STAGE512,                \
                     _mm512_load_si512, _mm512_store_si512, _mm512_storeu_si512, 1,    \
                     fr_stream_words, _mm_sfence)
FR_ENCODE_RANKED512(fr_encode_rows_f64_avx512, double, fr_row_ranks_f64)
FR_ENCODE_RANKED512(fr_encode_rows_f32_avx512, float, fr_row_ranks_f32)
#endif

#endif
