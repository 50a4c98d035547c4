/* Minchinton encoder with AVX-512 VBMI: 64 rows of at most 128 features by byte
   permutes of their ranks, without transposes. */
#ifndef FR_MINCHINTON_VBMI_INL_H
#define FR_MINCHINTON_VBMI_INL_H

#include <stdlib.h>
#include "avx512-inl.h"

#ifdef FR_X86
/* Minchinton patterns of up to 64 dense rows of at most 128 features for every neuron
   (AVX-512 VBMI), without transposes: a row's ranks (as above) fill two vectors, and
   one two-table byte permute gathers the ranks of 64 synapses at once, so a word of 64
   cells is two permutes (the synapses' ranks and their successors') and one byte
   compare, whose mask is the word. The wiring of a neuron is kept as bytes, the first
   synapse repeated after the last and in the padding (the successor of the last
   synapse is the first; a padding cell compares the first synapse with itself, 0).
   Each neuron's rows are gathered in buf (FR_PERMUTED_BUF words) and, for a model's
   memory (stream), written past the caches. The byte wiring of every neuron can be
   prepared once for many calls (wiring, fr_permuted_wiring_new; NULL: each neuron's is
   made here). Returns 0, doing nothing, when a value is NaN or there are more than 128
   features, 64 rows or 64 words a pattern. */
#define FR_PERMUTED_MAX_WORDS 64
#define FR_PERMUTED_BUF 1024
#define FR_PERMUTED_WIRING(W) (64 * (W) + 64)    /* bytes of a neuron's byte wiring */
/* the byte wiring idx of a neuron with synapses s */
FR_TARGET_VBMI static void fr_permuted_wiring(const int32_t* s, int64_t S, int64_t W,
                                              uint8_t* idx) {
    int64_t i;
    for (i = 0; i + 16 <= S; i += 16)
        _mm_storeu_si128((__m128i*) (idx + i),
                         _mm512_cvtepi32_epi8(_mm512_loadu_si512((const void*) (s + i))));
    for (; i < S; i++) idx[i] = (uint8_t) s[i];
    memset(idx + S, (uint8_t) s[0], (size_t) (FR_PERMUTED_WIRING(W) - S));
}
/* Words w .. w + NW - 1 (NW <= FR_PERMUTED_WORDS, a constant) of rows r0 .. r0 + g - 1
   into dst (row r at dst + r * W): the words' synapse indices stay in registers while
   the rows' ranks pass. */
#define FR_PERMUTED_WORDS 8
#define FR_PERMUTED_BLOCK(NW) do {                                                       \
    __m512i ia_[FR_PERMUTED_WORDS], ib_[FR_PERMUTED_WORDS];                              \
    int64_t j_, r_;                                                                      \
    for (j_ = 0; j_ < (NW); j_++) {                                                      \
        ia_[j_] = _mm512_loadu_si512((const void*) (idx + 64 * (w + j_)));               \
        ib_[j_] = _mm512_loadu_si512((const void*) (idx + 64 * (w + j_) + 1));           \
    }                                                                                    \
    for (r_ = 0; r_ < g; r_++) {                                                         \
        const __m512i lo_ = _mm512_load_si512((const void*) (R + 128 * (r0 + r_)));      \
        if (stream) fr_stream_step(&pending, 1);                                         \
        const __m512i hi_ = _mm512_load_si512((const void*) (R + 128 * (r0 + r_) + 64)); \
        for (j_ = 0; j_ < (NW); j_++)                                                    \
            _store_mask64((__mmask64*) (dst + r_ * W + w + j_), _mm512_cmpgt_epu8_mask(  \
                _mm512_permutex2var_epi8(lo_, ia_[j_], hi_),                             \
                _mm512_permutex2var_epi8(lo_, ib_[j_], hi_)));                           \
    } } while (0)
#define FR_ENCODE_PERMUTED(NAME, T, RANKS)                                                   \
    FR_TARGET_VBMI static int NAME(const T* X, int64_t n_cols, const int64_t* rows,          \
                                   int64_t n_rows, const int32_t* syn, int64_t n_neurons,    \
                                   int64_t S, int64_t W, uint64_t* out, int64_t stride,      \
                                   int stream, const uint8_t* wiring) {                      \
        uint8_t R[64 * 128] __attribute__((aligned(64)));   /* row r at R + 128 r */         \
        uint8_t own[FR_PERMUTED_WIRING(FR_PERMUTED_MAX_WORDS)] __attribute__((aligned(64))); \
        uint64_t buf[2][FR_PERMUTED_BUF] __attribute__((aligned(64)));                       \
        fr_stream pending = {NULL, NULL, 0, 0};                                              \
        int64_t r, r0, g, w, n, group;                                                       \
        int cur = 0;                                                                         \
        if (n_cols > 128 || n_rows > 64 || n_cols < 1 || W > FR_PERMUTED_MAX_WORDS)          \
            return 0;                                                                        \
        for (r = 0; r < n_rows; r++)                                                         \
            if (!RANKS(X + (rows != NULL ? rows[r] : r) * n_cols, n_cols,                    \
                       R + 128 * r, 1)) return 0;                                            \
        group = FR_PERMUTED_BUF / W;                                                         \
        for (n = 0; n < n_neurons; n++) {                                                    \
            const uint8_t* idx = wiring != NULL ? wiring + n * FR_PERMUTED_WIRING(W)         \
                                                : own;                                       \
            uint64_t* o = out + n * stride;                                                  \
            if (wiring == NULL) fr_permuted_wiring(syn + n * S, S, W, own);                  \
            for (r0 = 0; r0 < n_rows; r0 += group) {                                         \
                uint64_t* dst = stream ? buf[cur] : o + r0 * W;                              \
                g = n_rows - r0 < group ? n_rows - r0 : group;                               \
                for (w = 0; w + FR_PERMUTED_WORDS <= W; w += FR_PERMUTED_WORDS)              \
                    FR_PERMUTED_BLOCK(FR_PERMUTED_WORDS);                                    \
                for (; w < W; w++) FR_PERMUTED_BLOCK(1);                                     \
                if (stream) {            /* finish the previous copy, begin this one */      \
                    fr_stream_step(&pending, FR_PERMUTED_BUF);                               \
                    fr_stream_begin(&pending, o + r0 * W, buf[cur], g * W);                  \
                    cur ^= 1;                                                                \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        if (stream) {                                                                        \
            fr_stream_step(&pending, FR_PERMUTED_BUF);                                       \
            _mm_sfence();                                                                    \
        }                                                                                    \
        return 1;                                                                            \
    }
FR_ENCODE_PERMUTED(fr_encode_rows_f64_vbmi, double, fr_row_ranks_f64)
FR_ENCODE_PERMUTED(fr_encode_rows_f32_vbmi, float, fr_row_ranks_f32)
#endif

#endif
