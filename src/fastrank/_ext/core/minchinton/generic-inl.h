/* Minchinton encoders in portable C: one neuron's pattern cell by cell, and 64 rows at
   once through their values' ranks (bytewise subtractions in 64-bit words). */
#ifndef FR_MINCHINTON_GENERIC_INL_H
#define FR_MINCHINTON_GENERIC_INL_H

#include <stdint.h>
#include <string.h>

#include "../bits.h"
#include "../transpose64.h"

/* Minchinton pattern of dense row x for one neuron with the S synapses s (melotti2009
   §2.6): out[w] <- word w of its W = ceil(S / 64) words, bit i = x[s[i]] > x[s[i + 1]],
   the last synapse paired with the first. Padding bits are zero. */
#define FR_ENCODE_NEURON(NAME, T)                                                           \
    static void NAME(const T* x, const int32_t* s, int64_t S, int64_t W, uint64_t* out) {   \
        int64_t w, i, lo, hi;                                                               \
        uint64_t word;                                                                      \
        T cur, nxt, first;                                                                  \
        first = x[s[0]];                                                                    \
        cur = first;                                                                        \
        for (w = 0; w < W; w++) {                                                           \
            lo = 64 * w;                                                                    \
            hi = lo + 64 < S - 1 ? lo + 64 : S - 1; /* bits lo .. hi-1: the next synapse */ \
            word = 0;                                                                       \
            for (i = lo; i < hi; i++) {                                                     \
                nxt = x[s[i + 1]];                                                          \
                word |= ((uint64_t) (cur > nxt)) << (i - lo);                               \
                cur = nxt;                                                                  \
            }                                                                               \
            out[w] = word;                                                                  \
        }                                                                                   \
        out[(S - 1) / 64] |= ((uint64_t) (cur > first)) << ((S - 1) % 64);                  \
    }
FR_ENCODE_NEURON(fr_encode_f64_portable, double)
FR_ENCODE_NEURON(fr_encode_f32_portable, float)

/* The rank encoding in portable C (little-endian CPUs, inputs of at most 128 features,
   so ranks are below 128): the ranks of 64 rows at a feature are 8 words of 8 bytes,
   and x[a] > x[b] for 8 rows at once is the top bit of each byte of
   (R[b] | 0x80..80) - R[a], clear (the subtraction borrows across no byte). The top
   bits of a cell's 8 words are gathered into one 64-bit mask (bit 8 j + k: row
   8 k + j, the 8 x 8 block transposed), 64 cells are transposed as in the vector
   paths, and row r's word is A[8 (r % 8) + r / 8]. RH holds the ranks with the top
   bit set. Returns 0, doing nothing, when a value is NaN or there are more than 128
   features or 64 rows. */
#define FR_ENCODE_RANKED_PORTABLE(NAME, T)                                             \
    static int NAME(const T* X, int64_t n_cols, const int64_t* rows, int64_t n_rows,   \
                    const int32_t* syn, int64_t n_neurons, int64_t S, int64_t W,       \
                    uint64_t* out, int64_t stride) {                                   \
        const uint64_t H = 0x8080808080808080ULL;                                      \
        uint64_t R[128][8], RH[128][8], A[64];                                         \
        int64_t r, n, w, i, si, k, nk, a, b, cells;                                    \
        if (!FR_LITTLE_ENDIAN || n_cols > 128 || n_rows > 64 || n_cols < 1)            \
            return 0;                                                                  \
        memset(R, 0, (size_t) n_cols * sizeof(R[0]));  /* the features' rows */        \
        for (r = 0; r < n_rows; r++) {                                                 \
            const T* x = X + (rows != NULL ? rows[r] : r) * n_cols;                    \
            for (a = 0; a < n_cols; a++) {                                             \
                unsigned rank = 0;                                                     \
                if (x[a] != x[a]) return 0;                                            \
                for (b = 0; b < n_cols; b++) rank += x[b] < x[a];                      \
                ((uint8_t*) R[a])[r] = (uint8_t) rank;                                 \
            }                                                                          \
        }                                                                              \
        for (a = 0; a < n_cols; a++)                                                   \
            for (k = 0; k < 8; k++) RH[a][k] = R[a][k] | H;                            \
        nk = (n_rows + 7) / 8;                                                         \
        for (n = 0; n < n_neurons; n++) {                                              \
            const int32_t* s = syn + n * S;                                            \
            for (w = 0; w < W; w++) {                                                  \
                const uint64_t* cur = R[s[64 * w]];                                    \
                cells = S - 64 * w < 64 ? S - 64 * w : 64;                             \
                for (i = 0; i < cells; i++) {                                          \
                    uint64_t ge = 0;       /* bit 8 j + k: row 8 k + j, next >= cur */ \
                    si = 64 * w + i + 1;                                               \
                    si = s[si < S ? si : 0];                                           \
                    for (k = 0; k < nk; k++)                                           \
                        ge |= ((RH[si][k] - cur[k]) & H) >> (7 - k);                   \
                    A[i] = ~ge;                                                        \
                    cur = R[si];                                                       \
                }                                                                      \
                for (; i < 64; i++) A[i] = 0;                                          \
                FR_TRANSPOSE64(FR_TRANSPOSE_STAGE_U64, A);                             \
                for (r = 0; r < n_rows; r++)                                           \
                    out[n * stride + r * W + w] = A[8 * (r % 8) + r / 8];              \
            }                                                                          \
        }                                                                              \
        return 1;                                                                      \
    }
FR_ENCODE_RANKED_PORTABLE(fr_encode_rows_f64_portable, double)
FR_ENCODE_RANKED_PORTABLE(fr_encode_rows_f32_portable, float)

#endif
