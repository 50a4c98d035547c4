/* Minchinton encoding of sparse (CSR) rows: only the cells wired to a row's stored
   entries are evaluated, a cell comparing two zeros being 0. */
#ifndef FR_MINCHINTON_CSR_INL_H
#define FR_MINCHINTON_CSR_INL_H

#include <stdint.h>
#include <string.h>

/* The synapses grouped by input position (a counting sort): those wired to input f are
   cell[e] for e in ptr[f] .. ptr[f + 1] - 1, in (neuron, synapse) order, where cell[e] =
   (neuron n, synapse i, input of synapse i - 1, input of synapse i + 1), cyclically.
   syn: (n_neurons, S) input positions below n_features; ptr: n_features + 1 entries,
   zeroed by the caller; cell: 4 n_neurons S entries. */
static void fr_wiring_index(const int32_t* syn, int64_t n_neurons, int64_t S,
                            int64_t n_features, int64_t* ptr, int32_t* cell) {
    int64_t n, i, f;
    for (n = 0; n < n_neurons; n++)
        for (i = 0; i < S; i++) ptr[syn[n * S + i] + 1] += 1;
    for (f = 0; f < n_features; f++) ptr[f + 1] += ptr[f];
    for (n = 0; n < n_neurons; n++) {      /* ptr[f] serves as the fill cursor of input f ... */
        const int32_t* s = syn + n * S;
        for (i = 0; i < S; i++) {
            int32_t* c = cell + 4 * ptr[s[i]];
            c[0] = (int32_t) n;
            c[1] = (int32_t) i;
            c[2] = s[i > 0 ? i - 1 : S - 1];
            c[3] = s[i + 1 < S ? i + 1 : 0];
            ptr[s[i]] += 1;
        }
    }
    for (f = n_features; f > 0; f--) ptr[f] = ptr[f - 1];   /* ... and is shifted back */
    ptr[0] = 0;
}

/* The patterns of one CSR row (nnz stored entries data, indices) for every neuron, as
   the dense encoders give them: pattern n at out + n * stride. The row is scattered once
   into xbuf (n_features values, all zero, and zero again on return); bits are set in
   rowbuf (n_neurons * W words) through the wiring index (wptr, wcell: fr_wiring_index),
   then copied to out. */
#define FR_ENCODE_CSR_ROW(NAME, T, I)                                                    \
    static void NAME(const T* data, const I* indices, int64_t nnz, T* xbuf,              \
                     uint64_t* rowbuf, const int64_t* wptr, const int32_t* wcell,        \
                     int64_t n_neurons, int64_t S, int64_t W, uint64_t* out,             \
                     int64_t stride) {                                                   \
        int64_t p, e, i, h, n;                                                           \
        memset(rowbuf, 0, (size_t) (n_neurons * W) * sizeof(uint64_t));                  \
        for (p = 0; p < nnz; p++) xbuf[indices[p]] = data[p];                            \
        for (p = 0; p < nnz; p++) {                                                      \
            const T xi = data[p];                                                        \
            for (e = wptr[indices[p]]; e < wptr[indices[p] + 1]; e++) {                  \
                /* neuron, synapse i, inputs of synapses i - 1 and i + 1 */              \
                const int32_t* cell = wcell + 4 * e;                                     \
                uint64_t* o = rowbuf + cell[0] * W;                                      \
                i = cell[1];                                                             \
                if (xi > xbuf[cell[3]])     /* cell i: synapse i against the next */     \
                    o[i >> 6] |= (uint64_t) 1 << (i & 63);                               \
                h = i > 0 ? i - 1 : S - 1;                                               \
                if (xbuf[cell[2]] > xi)     /* cell h: the previous synapse against i */ \
                    o[h >> 6] |= (uint64_t) 1 << (h & 63);                               \
            }                                                                            \
        }                                                                                \
        for (p = 0; p < nnz; p++) xbuf[indices[p]] = 0;                                  \
        for (n = 0; n < n_neurons; n++)                                                  \
            memcpy(out + n * stride, rowbuf + n * W, (size_t) W * sizeof(uint64_t));     \
    }
FR_ENCODE_CSR_ROW(fr_encode_csr_row_f64_i32, double, int32_t)
FR_ENCODE_CSR_ROW(fr_encode_csr_row_f64_i64, double, int64_t)
FR_ENCODE_CSR_ROW(fr_encode_csr_row_f32_i32, float, int32_t)
FR_ENCODE_CSR_ROW(fr_encode_csr_row_f32_i64, float, int64_t)

#endif
