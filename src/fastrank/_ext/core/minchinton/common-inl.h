/* Minchinton encoders: the templates the vector paths instantiate (cell by cell with
   vector compares; 64 rows at once through their values' ranks). */
#ifndef FR_MINCHINTON_COMMON_INL_H
#define FR_MINCHINTON_COMMON_INL_H

#include <stdint.h>
#include <string.h>
#include "../simd.h"
#include "../transpose64.h"

#ifdef FR_X86
/* Minchinton pattern of one neuron (S synapses s; out: its W = ceil(S / 64) words,
   overwritten) from a dense row, with vector compares, any S: the synapses' inputs are
   copied in blocks of FR_ENCODE_BLOCK to a contiguous buffer y (plus the right-hand
   side of the block's last cell), then y[i] > y[i + 1] is compared LANES cells at a
   time (CMPMASK: one bit per lane). Bit i = x[s[i]] > x[s[i + 1]], the last synapse
   paired with the first: the scalar loop's comparisons, so its bits. */
#define FR_ENCODE_BLOCK 256          /* a multiple of 64: a compare never straddles words */
#define FR_ENCODE_SIMD(NAME, ATTR, T, LANES, LOADU, CMPMASK)                    \
    ATTR static void NAME(const T* x, const int32_t* s, int64_t S, int64_t W,   \
                          uint64_t* out) {                                      \
        T y[FR_ENCODE_BLOCK + 1];                                               \
        int64_t b0, i, j, n, lo;                                                \
        uint64_t word;                                                          \
        for (b0 = 0; b0 < S; b0 += FR_ENCODE_BLOCK) {                           \
            n = S - b0 < FR_ENCODE_BLOCK ? S - b0 : FR_ENCODE_BLOCK;            \
            for (i = 0; i < n; i++) y[i] = x[s[b0 + i]];                        \
            y[n] = x[s[b0 + n < S ? b0 + n : 0]];                               \
            for (lo = 0; lo < n; lo += 64) {       /* word (b0 + lo) / 64 */    \
                word = 0;                                                       \
                for (i = lo; i + (LANES) <= n && i < lo + 64; i += (LANES))     \
                    word |= (uint64_t) CMPMASK(LOADU(y + i), LOADU(y + i + 1))  \
                            << (i - lo);                                        \
                for (j = i; j < n && j < lo + 64; j++)                          \
                    word |= (uint64_t) (y[j] > y[j + 1]) << (j - lo);           \
                out[(b0 + lo) >> 6] = word;                                     \
            }                                                                   \
        }                                                                       \
    }

/* Minchinton patterns of up to 64 dense rows for every neuron at once (AVX2, AVX-512
   BW), for inputs of at most 256 features: a cell x[a] > x[b] only depends on the order
   of the row's values, so each value is replaced by its rank in its row, the number of
   the row's values below it (an integer below 256: x[a] > x[b] exactly when rank a >
   rank b, equal values included). The ranks are stored feature-major, R[f][r] for row
   r, so byte compares of R[a] with R[b] (one with AVX-512, two halves with AVX2) give a
   cell for 64 rows at once (a 64-bit mask, bit r = row r); 64 such masks (a word of
   synapses) of LANES words (of one neuron when W is a multiple of LANES) are transposed
   as a 64 x 64 bit matrix in each 64-bit lane into the rows' words. Returns 0, doing
   nothing, when a value is NaN (compared unlike its rank; input is checked before) or
   there are more than 256 features or 64 rows. */
/* The encoder of one vector width: ranks RANKS, loaded RV = LOADR(p) and compared
   GT64(a, b); LANES words TV transposed by STAGE, loaded and stored by TLOAD / TSTORE
   (aligned) / TSTOREU; STREAMS: a model's memory is written past the caches
   (STREAM_WORDS(dst, src, n) then SFENCE(), AVX-512). */
#define FR_ENCODE_RANKED(NAME, ATTR, T, RANKS, RV, LOADR, GT64, TV, LANES, STAGE,      \
                         TLOAD, TSTORE, TSTOREU, STREAMS, STREAM_WORDS, SFENCE)        \
    ATTR static int NAME(const T* X, int64_t n_cols, const int64_t* rows,              \
                         int64_t n_rows, const int32_t* syn, int64_t n_neurons,        \
                         int64_t S, int64_t W, uint64_t* out, int64_t stride,          \
                         int stream) {                                                 \
        uint8_t R[256 * 64] __attribute__((aligned(64)));                              \
        uint64_t M[64][LANES] __attribute__((aligned(64)));                            \
        uint64_t lanes[LANES] __attribute__((aligned(64)));                            \
        uint64_t rows_out[64 * 32] __attribute__((aligned(64))); /* a neuron's rows */ \
        TV A[64];                                                                      \
        int64_t r, g0, l, w, i, si, nl, n;                                             \
        stream = stream && (STREAMS);                                                  \
        if (n_cols > 256 || n_rows > 64 || n_cols < 1) return 0;                       \
        memset(R, 0, (size_t) n_cols * 64);                                            \
        for (r = 0; r < n_rows; r++)                                                   \
            if (!RANKS(X + (rows != NULL ? rows[r] : r) * n_cols, n_cols, R + r, 64))  \
                return 0;                                                              \
        for (g0 = 0; g0 < n_neurons * W; g0 += (LANES)) { /* lane l: word g0 + l */    \
            nl = n_neurons * W - g0 < (LANES) ? n_neurons * W - g0 : (LANES);          \
            for (l = 0; l < (LANES); l++) {   /* of neuron p / W, word p % W */        \
                const int32_t* s = syn + ((g0 + (l < nl ? l : 0)) / W) * S;            \
                RV cur, next;                                                          \
                w = (g0 + l) % W;                                                      \
                /* cells 64 w .. 64 w + n - 1; each synapse's ranks loaded once */     \
                n = l >= nl ? 0 : S - 64 * w < 64 ? S - 64 * w : 64;                   \
                cur = LOADR(R + 64 * s[64 * w]);                                       \
                for (i = 0; i < n; i++) {                                              \
                    si = 64 * w + i + 1;                                               \
                    next = LOADR(R + 64 * s[si < S ? si : 0]);                         \
                    M[i][l] = GT64(cur, next);                                         \
                    cur = next;                                                        \
                }                                                                      \
                for (; i < 64; i++) M[i][l] = 0;                                       \
            }                                                                          \
            for (i = 0; i < 64; i++) A[i] = TLOAD((const void*) M[i]);                 \
            FR_TRANSPOSE64(STAGE, A);                                                  \
            /* A[r] lane l: row r's word of lane l; the LANES words of one neuron      \
               (W a multiple of LANES) are stored at once */                           \
            for (r = 0; r < n_rows; r++) {                                             \
                if (W % (LANES) == 0 && stream && W <= 32) {                           \
                    TSTORE((void*) (rows_out + r * W + g0 % W), A[r]);                 \
                    continue;                                                          \
                }                                                                      \
                if (W % (LANES) == 0) {                                                \
                    TSTOREU((void*) (out + (g0 / W) * stride + r * W + g0 % W), A[r]); \
                    continue;                                                          \
                }                                                                      \
                TSTORE((void*) lanes, A[r]);                                           \
                for (l = 0; l < nl; l++)                                               \
                    out[((g0 + l) / W) * stride + r * W + (g0 + l) % W] = lanes[l];    \
            }                                                                          \
            if (W % (LANES) == 0 && stream && W <= 32 && g0 % W + (LANES) == W)        \
                STREAM_WORDS(out + (g0 / W) * stride, rows_out, n_rows * W);           \
        }                                                                              \
        if (stream) SFENCE();                                                          \
        return 1;                                                                      \
    }
#endif

#endif
