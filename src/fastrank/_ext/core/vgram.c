/* VG-RAM kernels (vgram.h): each path's code is in the -inl.h files, one instruction set
   per file; this file chooses among them by level. */
#include <stdlib.h>
#include <string.h>

#include "vgram.h"

#include "hamming/generic-inl.h"
#include "hamming/popcnt-inl.h"
#include "hamming/avx512-inl.h"
#include "bitsliced/avx2-inl.h"
#include "bitsliced/avx512-inl.h"
#include "minchinton/generic-inl.h"
#include "minchinton/avx2-inl.h"
#include "minchinton/avx512-inl.h"
#include "minchinton/vbmi-inl.h"
#include "minchinton/csr-inl.h"

/* stored patterns scanned together, a tile kept in L1 (half of a 32 KiB L1d) while every
   test pattern of the batch is compared with it */
#define FR_SCAN_TILE_BYTES 16384
/* the bit-sliced search from this batch size on: transposing a tile costs about as much
   as scanning it for 6 test patterns (measured on bibtex and Reuters, 512 synapses) */
#define FR_SLICED_MIN_BATCH 6
/* neurons encoded together, their wiring kept in L1 while every row uses it */
#define FR_SYNAPSE_BLOCK_BYTES 32768

void fr_vgram_init(void) {
#ifdef FR_X86
    int i, b, n;
    for (i = 0; i < 64 * FR_MAX_WORDS; i++) fr_every_bit[i] = (int16_t) i;
    for (i = 0; i < 256; i++)
        for (b = 0, n = 0; b < 8; b++)
            if (i >> b & 1) fr_byte_bits[i][n++] = (int16_t) b;
#endif
}

/* ---- encoding ---- */

/* The pattern of one neuron with the vector compares of the level (AVX2 and up), cell by
   cell in portable C below it */
#ifdef FR_X86
#define FR_ENCODE_DISPATCH(NAME, T, SFX)                                               \
    void NAME(fr_simd_level level, const T* x, const int32_t* s, int64_t S, int64_t W, \
              uint64_t* out) {                                                         \
        if (level >= FR_SIMD_AVX512) fr_encode_##SFX##_avx512(x, s, S, W, out);        \
        else if (level >= FR_SIMD_AVX2) fr_encode_##SFX##_avx2(x, s, S, W, out);       \
        else fr_encode_##SFX##_portable(x, s, S, W, out);                              \
    }
#else
#define FR_ENCODE_DISPATCH(NAME, T, SFX)                                               \
    void NAME(fr_simd_level level, const T* x, const int32_t* s, int64_t S, int64_t W, \
              uint64_t* out) {                                                         \
        (void) level;                                                                  \
        fr_encode_##SFX##_portable(x, s, S, W, out);                                   \
    }
#endif
FR_ENCODE_DISPATCH(fr_vgram_encode_f64, double, f64)
FR_ENCODE_DISPATCH(fr_vgram_encode_f32, float, f32)

/* Up to 64 dense rows by their ranks (byte permutes with VBMI, byte compares with AVX-512
   and AVX2, bytewise subtractions in portable C) where the rows allow it; otherwise each
   row and neuron cell by cell, neurons taken in blocks whose wiring
   (FR_SYNAPSE_BLOCK_BYTES) stays in L1 while every row uses it -- the whole wiring
   (4 MiB at 1024 x 1024) would otherwise be streamed once per row. */
#ifdef FR_X86
/* (the VBMI encoder called with a constant `stream`, so that the compiler specialises
   it for each: the patterns of a search are not streamed) */
#define FR_ENCODE_RANKED_DISPATCH(SFX)                                                       \
    if (level >= FR_SIMD_AVX512_VPOPCNTDQ                                                    \
        && (stream ? fr_encode_rows_##SFX##_vbmi(X, n_cols, rows, n_rows, syn, n_neurons, S, \
                                                 W, out, stride, 1, wiring)                  \
                   : fr_encode_rows_##SFX##_vbmi(X, n_cols, rows, n_rows, syn, n_neurons, S, \
                                                 W, out, stride, 0, wiring)))                \
        return;                                                                              \
    if (level >= FR_SIMD_AVX512                                                              \
        && fr_encode_rows_##SFX##_avx512(X, n_cols, rows, n_rows, syn, n_neurons, S, W,      \
                                         out, stride, stream))                               \
        return;                                                                              \
    if (level == FR_SIMD_AVX2                                                                \
        && fr_encode_rows_##SFX##_avx2(X, n_cols, rows, n_rows, syn, n_neurons, S, W,        \
                                       out, stride, stream))                                 \
        return;                                                                              \
    if (level < FR_SIMD_AVX2                                                                 \
        && fr_encode_rows_##SFX##_portable(X, n_cols, rows, n_rows, syn, n_neurons, S,       \
                                           W, out, stride))                                  \
        return;
#else
#define FR_ENCODE_RANKED_DISPATCH(SFX)                                                 \
    (void) stream; (void) wiring;                                                      \
    if (fr_encode_rows_##SFX##_portable(X, n_cols, rows, n_rows, syn, n_neurons, S, W, \
                                        out, stride))                                  \
        return;
#endif
#define FR_ENCODE_ROWS(NAME, T, SFX)                                                \
    void NAME(fr_simd_level level, const T* X, int64_t n_cols, const int64_t* rows, \
              int64_t n_rows, const int32_t* syn, int64_t n_neurons, int64_t S,     \
              int64_t W, uint64_t* out, int64_t stride, int stream,                 \
              const uint8_t* wiring) {                                              \
        int64_t n0, n1, n, i, block = FR_SYNAPSE_BLOCK_BYTES / (4 * S);             \
        if (block < 1) block = 1;                                                   \
        FR_ENCODE_RANKED_DISPATCH(SFX)                                              \
        for (n0 = 0; n0 < n_neurons; n0 += block) {                                 \
            n1 = n0 + block < n_neurons ? n0 + block : n_neurons;                   \
            for (i = 0; i < n_rows; i++) {                                          \
                const T* x = X + (rows != NULL ? rows[i] : i) * n_cols;             \
                for (n = n0; n < n1; n++)                                           \
                    fr_vgram_encode_##SFX(level, x, syn + n * S, S, W,              \
                                          out + n * stride + i * W);                \
            }                                                                       \
        }                                                                           \
    }
FR_ENCODE_ROWS(fr_vgram_encode_rows_f64, double, f64)
FR_ENCODE_ROWS(fr_vgram_encode_rows_f32, float, f32)

uint8_t* fr_vgram_wiring_new(fr_simd_level level, const int32_t* syn, int64_t n_neurons,
                             int64_t S, int64_t W, int64_t n_cols) {
#ifdef FR_X86
    uint8_t* wiring;
    int64_t n;
    if (level < FR_SIMD_AVX512_VPOPCNTDQ || n_cols > 128 || n_cols < 1
        || W > FR_PERMUTED_MAX_WORDS)
        return NULL;
    wiring = (uint8_t*) malloc((size_t) (n_neurons * FR_PERMUTED_WIRING(W)));
    if (wiring != NULL)
        for (n = 0; n < n_neurons; n++)
            fr_permuted_wiring(syn + n * S, S, W, wiring + n * FR_PERMUTED_WIRING(W));
    return wiring;
#else
    (void) level; (void) syn; (void) n_neurons; (void) S; (void) W; (void) n_cols;
    return NULL;
#endif
}

void fr_vgram_wiring_index(const int32_t* syn, int64_t n_neurons, int64_t S,
                           int64_t n_features, int64_t* ptr, int32_t* cell) {
    fr_wiring_index(syn, n_neurons, S, n_features, ptr, cell);
}

#define FR_ENCODE_CSR_API(SFX, T, I)                                                       \
    void fr_vgram_encode_csr_row_##SFX(const T* data, const I* indices, int64_t nnz,       \
                                       T* xbuf, uint64_t* rowbuf, const int64_t* wptr,     \
                                       const int32_t* wcell, int64_t n_neurons, int64_t S, \
                                       int64_t W, uint64_t* out, int64_t stride) {         \
        fr_encode_csr_row_##SFX(data, indices, nnz, xbuf, rowbuf, wptr, wcell, n_neurons,  \
                                S, W, out, stride);                                        \
    }
FR_ENCODE_CSR_API(f64_i32, double, int32_t)
FR_ENCODE_CSR_API(f64_i64, double, int64_t)
FR_ENCODE_CSR_API(f32_i32, float, int32_t)
FR_ENCODE_CSR_API(f32_i64, float, int64_t)

/* ---- search ---- */

/* Scratch of the bit-sliced search for W-word patterns and batches of B: one tile of
   each width and its planes (in raw and raw512, 64-byte aligned), and B test patterns'
   bit lists. */
struct fr_sliced {
    void* raw;
    void* raw512;
#ifdef FR_X86
    fr_tile* tile;
    fr_tile512* tile512;
    fr_query* query;
#endif
};

void fr_vgram_scratch_free(fr_sliced* s) {
    if (s == NULL) return;
    free(s->raw);
    free(s->raw512);
#ifdef FR_X86
    free(s->query);
#endif
    free(s);
}

/* NULL only when out of memory; a scratch for widths the bit-sliced search does not take
   is empty */
fr_sliced* fr_vgram_scratch_new(int64_t W, int64_t B) {
    fr_sliced* s = (fr_sliced*) calloc(1, sizeof(fr_sliced));
    if (s == NULL) return NULL;
#ifdef FR_X86
    if (W % 4 == 0 && W <= FR_MAX_WORDS) {
        s->raw = malloc(sizeof(fr_tile) + 64 * W * sizeof(__m256i) + 128);
        s->raw512 = malloc(sizeof(fr_tile512) + 64 * W * sizeof(__m512i) + 128);
        s->query = (fr_query*) malloc(B * sizeof(fr_query));
        if (s->raw == NULL || s->raw512 == NULL || s->query == NULL) {
            fr_vgram_scratch_free(s);
            return NULL;
        }
        s->tile = (fr_tile*) (((uintptr_t) s->raw + 63) & ~(uintptr_t) 63);
        s->tile->plane = (__m256i*) (((uintptr_t) (s->tile + 1) + 63) & ~(uintptr_t) 63);
        s->tile512 = (fr_tile512*) (((uintptr_t) s->raw512 + 63) & ~(uintptr_t) 63);
        s->tile512->plane =
            (__m512i*) (((uintptr_t) (s->tile512 + 1) + 63) & ~(uintptr_t) 63);
    }
#else
    (void) W; (void) B;
#endif
    return s;
}

#ifdef FR_X86
/* Whether the bit-sliced search beats the VPOPCNTDQ scan (W a multiple of 8) for the
   B patterns C: when the scan work it saves over the batch exceeds the cost of
   transposing the tiles. Costs per stored entry, in hundredths of a nanosecond
   (measured on AMD EPYC with AVX-512, bibtex and yeast): scan 6 per word and test pattern;
   bit-sliced 16 plus 0.14 per plane summed (bit of S) and test pattern; transposition
   70 per word. The dense patterns of yeast (half the bits set) always take the scan,
   the sparse ones of text the bit-sliced search from about 20 test patterns on. */
FR_TARGET_POPCNT static int fr_sliced_pays(const uint64_t* C, int64_t B, int64_t W) {
    int64_t b, j, size, bits = 0;
    for (b = 0; b < B; b++) {
        for (j = 0, size = 0; j < W; j++) size += FR_POPCOUNT64(C[b * W + j]);
        bits += size <= 32 * W ? size : 64 * W - size;
    }
    return 100 * B * (6 * W - 16) - 14 * bits > 7000 * W;
}
#endif

/* The B patterns C against the n_train patterns M of one neuron, by the bit-sliced
   search: each pattern's minimum into track[b] and its entries into ties + b * n_train.
   Returns 0, doing nothing, below the AVX2 level, for widths it does not take, and
   where the VPOPCNTDQ scan is faster. */
static int fr_sliced_search(fr_simd_level level, fr_sliced* s, const uint64_t* M,
                            int64_t n_train, const uint64_t* C, int64_t B, int64_t W,
                            int32_t* ties, fr_track* track) {
#ifdef FR_X86
    int64_t b, t0;
    if (level < FR_SIMD_AVX2 || s->raw == NULL) return 0;
    if (level >= FR_SIMD_AVX512_VPOPCNTDQ && W % 8 == 0 && !fr_sliced_pays(C, B, W))
        return 0;
    for (b = 0; b < B; b++) fr_query_init(C + b * W, W, &s->query[b]);
    if (level >= FR_SIMD_AVX512) {
        for (t0 = 0; t0 < n_train; t0 += FR_TILE512) {
            fr_tile_build512(M, t0, n_train - t0 < FR_TILE512 ? n_train - t0 : FR_TILE512,
                             W, s->tile512);
            for (b = 0; b < B; b++)
                fr_tile_scan512(s->tile512, &s->query[b], ties + b * n_train, &track[b]);
        }
        return 1;
    }
    for (t0 = 0; t0 < n_train; t0 += FR_TILE) {
        fr_tile_build(M, t0, n_train - t0 < FR_TILE ? n_train - t0 : FR_TILE, W, s->tile);
        for (b = 0; b < B; b++)
            fr_tile_scan(s->tile, &s->query[b], ties + b * n_train, &track[b]);
    }
    return 1;
#else
    (void) level; (void) s; (void) M; (void) n_train; (void) C; (void) B; (void) W;
    (void) ties; (void) track;
    return 0;
#endif
}

/* Distances of test pattern c to stored patterns t0 .. t1-1 of M by the scan of the level */
static void fr_scan(fr_simd_level level, const uint64_t* M, int64_t t0, int64_t t1,
                    const uint64_t* c, int64_t W, int32_t* ties, fr_track* r) {
#ifdef FR_X86
    if (level >= FR_SIMD_AVX512_VPOPCNTDQ) {
        fr_scan_vpopcnt(M, t0, t1, c, W, ties, r);
        return;
    }
    if (level >= FR_SIMD_POPCNT) {
        fr_scan_popcnt(M, t0, t1, c, W, ties, r);
        return;
    }
#endif
    fr_scan_portable(M, t0, t1, c, W, ties, r);
}

/* The bit-sliced search where it applies (AVX2 and up, 4 to 32 words, a multiple of 4,
   batches of FR_SLICED_MIN_BATCH or more); otherwise the scan, the stored patterns taken
   in tiles of FR_SCAN_TILE_BYTES. */
void fr_vgram_min_distances(fr_simd_level level, fr_sliced* scratch, const uint64_t* M,
                            int64_t n_train, const uint64_t* C, int64_t B, int64_t W,
                            int32_t* ties, fr_track* track) {
    int64_t b, t0, t1, tile = FR_SCAN_TILE_BYTES / (8 * W);
    if (tile < 1) tile = 1;
    for (b = 0; b < B; b++) {
        track[b].m = 0xFFFFFFFF;
        track[b].k = 0;
    }
    if (B >= FR_SLICED_MIN_BATCH
        && fr_sliced_search(level, scratch, M, n_train, C, B, W, ties, track))
        return;
    for (t0 = 0; t0 < n_train; t0 = t1) {
        t1 = t0 + tile < n_train ? t0 + tile : n_train;
        for (b = 0; b < B; b++)
            fr_scan(level, M, t0, t1, C + b * W, W, ties + b * n_train, &track[b]);
    }
}
