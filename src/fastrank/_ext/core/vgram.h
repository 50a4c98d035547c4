/* VG-RAM weightless neural network kernels (melotti2009 §2.6): Minchinton-cell encoding
   of dense and sparse rows into packed bits, and each neuron's minimum Hamming distance
   over its stored patterns with the stored entries at it.

   Layout: a pattern of S synapses is W = ceil(S / 64) uint64 words, synapse i bit i % 64 of
   word i / 64, padding bits zero; a neuron's wiring is S int32 input positions. Every
   function takes the instruction-set level to run at (simd.h; the best path of the
   kernel at or below it) and gives the same bits at every level. fr_vgram_init is called
   once, before any other function. */
#ifndef FR_VGRAM_H
#define FR_VGRAM_H

#include <stdint.h>

#include "hamming/common.h"
#include "simd.h"

void fr_vgram_init(void);

/* ---- encoding ---- */

/* The pattern of dense row x for one neuron with synapses s: out[0 .. W-1] */
void fr_vgram_encode_f64(fr_simd_level level, const double* x, const int32_t* s, int64_t S,
                         int64_t W, uint64_t* out);
void fr_vgram_encode_f32(fr_simd_level level, const float* x, const int32_t* s, int64_t S,
                         int64_t W, uint64_t* out);

/* The patterns of dense rows rows[0 .. n_rows-1] of X (row i at X + rows[i] * n_cols; rows
   NULL: the first n_rows rows) for every neuron: pattern (n, i) at out + n * stride + i * W.
   `stream`: the patterns are not read again soon (a model's memory), so the AVX-512 paths
   write them past the caches. `wiring`: the byte wiring of fr_vgram_wiring_new, or NULL. */
void fr_vgram_encode_rows_f64(fr_simd_level level, const double* X, int64_t n_cols,
                              const int64_t* rows, int64_t n_rows, const int32_t* syn,
                              int64_t n_neurons, int64_t S, int64_t W, uint64_t* out,
                              int64_t stride, int stream, const uint8_t* wiring);
void fr_vgram_encode_rows_f32(fr_simd_level level, const float* X, int64_t n_cols,
                              const int64_t* rows, int64_t n_rows, const int32_t* syn,
                              int64_t n_neurons, int64_t S, int64_t W, uint64_t* out,
                              int64_t stride, int stream, const uint8_t* wiring);

/* The byte wiring of every neuron that the VBMI encoder of rows of n_cols features takes
   (made once for many calls; free() it), or NULL where that encoder does not run (or
   without memory: each call then makes its own). */
uint8_t* fr_vgram_wiring_new(fr_simd_level level, const int32_t* syn, int64_t n_neurons,
                             int64_t S, int64_t W, int64_t n_cols);

/* The synapses grouped by input position, for the sparse encoder: ptr (n_features + 1,
   zeroed by the caller), cell (4 n_neurons S); see minchinton/csr-inl.h. */
void fr_vgram_wiring_index(const int32_t* syn, int64_t n_neurons, int64_t S,
                           int64_t n_features, int64_t* ptr, int32_t* cell);

/* The patterns of one CSR row (data, indices: its nnz stored entries) for every neuron:
   pattern n at out + n * stride. xbuf: n_features zeros (zeros again on return); rowbuf:
   n_neurons * W words of scratch; wptr, wcell: fr_vgram_wiring_index. */
void fr_vgram_encode_csr_row_f64_i32(const double* data, const int32_t* indices, int64_t nnz,
                                     double* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                     const int32_t* wcell, int64_t n_neurons, int64_t S,
                                     int64_t W, uint64_t* out, int64_t stride);
void fr_vgram_encode_csr_row_f64_i64(const double* data, const int64_t* indices, int64_t nnz,
                                     double* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                     const int32_t* wcell, int64_t n_neurons, int64_t S,
                                     int64_t W, uint64_t* out, int64_t stride);
void fr_vgram_encode_csr_row_f32_i32(const float* data, const int32_t* indices, int64_t nnz,
                                     float* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                     const int32_t* wcell, int64_t n_neurons, int64_t S,
                                     int64_t W, uint64_t* out, int64_t stride);
void fr_vgram_encode_csr_row_f32_i64(const float* data, const int64_t* indices, int64_t nnz,
                                     float* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                     const int32_t* wcell, int64_t n_neurons, int64_t S,
                                     int64_t W, uint64_t* out, int64_t stride);

/* ---- search ---- */

/* Scratch of the search for W-word patterns and batches of up to B test patterns (one per
   thread); NULL when out of memory. */
typedef struct fr_sliced fr_sliced;
fr_sliced* fr_vgram_scratch_new(int64_t W, int64_t B);
void fr_vgram_scratch_free(fr_sliced* s);

/* For each of the B test patterns C (B x W words) against the n_train patterns M of one
   neuron: the minimum Hamming distance and the number of stored entries at it into
   track[b], the entries themselves, ascending, into ties + b * n_train. Every path finds
   the same minima and the same entries in the same order. */
void fr_vgram_min_distances(fr_simd_level level, fr_sliced* scratch, const uint64_t* M,
                            int64_t n_train, const uint64_t* C, int64_t B, int64_t W,
                            int32_t* ties, fr_track* track);

#endif
