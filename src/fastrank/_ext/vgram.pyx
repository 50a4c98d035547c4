# cython: language_level=3
"""VG-RAM weightless neural network kernels: Minchinton-cell encoding into packed bits and
the per-neuron minimum-Hamming-distance search with voting (melotti2009 §2.6).

The Python wrappers are ``fastrank.wnn.VGRAM`` / ``VGRAMCor``; they validate input.

Layout
------
* ``synapses`` int32 (n_neurons, S): input position of every synapse.
* A pattern is ``W = ceil(S / 64)`` uint64 words; synapse ``i`` is bit ``i % 64`` of word
  ``i // 64``; padding bits are zero (so they never add distance).
* Memory ``mem`` uint64 (n_neurons, n_train, W): neuron-major, each neuron's training
  patterns contiguous, so one neuron's search streams one block of memory.
* Labels of stored document ``t``: ``lab_idx[lab_ptr[t]:lab_ptr[t + 1]]`` (ascending).

Code paths
----------
Chosen at run time from the CPU (``simd_path()``; ``use_simd(level)`` forces one for tests),
each compiled for its own instruction set with per-function target attributes, so the
module builds and runs on any CPU: 0 portable C (any architecture), 1 POPCNT (x86-64 CPUs
without AVX2), 2 AVX2 (+ POPCNT), 3 AVX-512 F/BW/VL, 4 the same with VPOPCNTDQ and VBMI
(Ice Lake and Zen 4 on have both). All give the same bits.

Encoding
--------
Up to 64 dense rows are encoded together through their values' ranks within each row
(at most 256 features on the AVX2 and AVX-512 paths, 128 on the portable one): with VBMI
and at most 128 features, a row's ranks are two vectors from which byte permutes gather 64
synapses' ranks at once, so one byte compare gives a word of 64 cells
(``FR_ENCODE_PERMUTED``); otherwise byte compares (bytewise subtractions in 64-bit words on
the portable path) give a cell for 64 rows, transposed into the rows' words
(``FR_ENCODE_RANKED``, ``FR_ENCODE_RANKED_PORTABLE``). Wider rows, and rows with a NaN, are
encoded cell by cell (vector compares of 4 to 16 cells on the x86 paths).
A CSR row is scattered once into a per-thread dense buffer and only
the cells with a synapse on one of its stored entries are evaluated (found through
``wiring_index``, the synapses grouped by input position): a cell comparing two zeros is
0. All give identical bits.

Search
------
More than MAX_BATCH test documents are processed in batches, one batch per task (OpenMP,
dynamic schedule, GIL released): a task encodes its batch, then for every neuron finds,
for each document of the batch, the minimum Hamming distance to the neuron's memory and the
stored documents at it, and votes from that list. Up to MAX_BATCH documents (a few
documents: a search bound by memory bandwidth) are one batch whose neurons, in chunks of
NEURON_CHUNK, are the tasks. Two searches give the same minimum and the same entries in
the same (ascending) order:

* bit-sliced (AVX2 and AVX-512 paths, patterns of 4 to 32 words, a multiple of 4, batches
  of at least SLICED_MIN_BATCH test documents; with VPOPCNTDQ and a multiple of 8 words, only where
  its cost model says it beats the scan; ``fr_tile_*`` below): each tile of 256 (AVX2) or
  512 (AVX-512) stored patterns is transposed once per batch into bit planes, and a test
  pattern's distances to all the tile's entries are computed together with carry-save
  adders over the planes of its set (or clear) bits only -- the work follows the number
  of set bits, so the sparse patterns of text cost little;
* scan (every other case): POPCNT (VPOPCNTDQ: 8 words at a time) of XORed words, 16 KiB
  tiles of stored patterns held in L1 while every test pattern of the batch, its words in
  registers, is compared with them.

A document's votes are added neuron after neuron within each chunk of NEURON_CHUNK
neurons, and the chunks' sums in ascending order, by whichever task; every random choice
takes the tied entry with the smallest key, a function of (seed, document, neuron, entry
number) alone (entry_key) -- so results depend neither on the thread count nor on the
batch size, nor on how the memory is split: a search of part of the memory can report
each neuron's outcome (Summary: the minimum distance and, per policy, the label counts of
the tied documents or the chosen entry and its key), and merging the parts' outcomes gives
the whole memory's votes (fastrank.wnn._merge_outcomes).
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from _tiesort cimport floating, index_t, row_state, splitmix64

cdef extern from *:
    """
    #include "fr_cpu.h"
    #ifdef FR_X86
    #define FR_T_POPCNT __attribute__((target("popcnt")))
    #define FR_T_AVX2 __attribute__((target("avx2,popcnt")))
    #define FR_T_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,popcnt")))
    #define FR_T_VPOPCNT __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq,avx2,popcnt")))
    #define FR_T_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx2,popcnt")))
    #endif

    #if defined(__GNUC__) || defined(__clang__)
    /* the POPCNT instruction in functions compiled for it (FR_T_POPCNT and up), a portable
       compiler routine elsewhere */
    #define FR_POPCOUNT64(x) ((unsigned)__builtin_popcountll(x))
    #define FR_CTZ64(x) ((unsigned)__builtin_ctzll(x))
    #else
    static inline unsigned fr_popcount_swar(unsigned long long x) {
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (unsigned)((x * 0x0101010101010101ULL) >> 56);
    }
    #define FR_POPCOUNT64(x) fr_popcount_swar(x)
    /* trailing zeros of x != 0: the ones below its lowest set bit */
    #define FR_CTZ64(x) fr_popcount_swar(((x) & (0 - (x))) - 1)
    #endif

    /* A 64 x 64 bit transpose in each 64-bit lane of A[0 .. 63], by the STAGE of the
       vector width (or of plain words): bit j of lane l of A[i] becomes bit i of lane l of A[j] */
    #define FR_TRANSPOSE64(STAGE, A) do {                                           \
        STAGE(A, 32, 0x00000000FFFFFFFFULL); STAGE(A, 16, 0x0000FFFF0000FFFFULL);   \
        STAGE(A, 8, 0x00FF00FF00FF00FFULL); STAGE(A, 4, 0x0F0F0F0F0F0F0F0FULL);     \
        STAGE(A, 2, 0x3333333333333333ULL); STAGE(A, 1, 0x5555555555555555ULL);     \
        } while (0)
    #if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) \
        || defined(_MSC_VER)
    #define FR_LITTLE_ENDIAN 1
    #else
    #define FR_LITTLE_ENDIAN 0
    #endif

    /* The code paths, by level: portable C, POPCNT (the scan counts with the instruction),
       AVX2, AVX-512 (F, BW, VL), AVX-512 with VPOPCNTDQ and VBMI. fr_level, the path in use,
       is set at import to the best the CPU runs, and by use_simd. Every path finds the same
       minima and the same tied entries in the same order, and the same bits. */
    enum { FR_L_PORTABLE, FR_L_POPCNT, FR_L_AVX2, FR_L_AVX512, FR_L_VPOPCNT, FR_N_LEVELS };
    static int fr_level = FR_L_PORTABLE;
    static const char* const fr_level_names[FR_N_LEVELS] = {
        "portable", "popcnt", "avx2", "avx512", "avx512-vpopcntdq"};

    static const unsigned fr_level_needs[FR_N_LEVELS] = {
        0,
        FR_CPU_POPCNT,
        FR_CPU_POPCNT | FR_CPU_AVX2,
        FR_CPU_POPCNT | FR_CPU_AVX2 | FR_CPU_AVX512F | FR_CPU_AVX512BW | FR_CPU_AVX512VL,
        FR_CPU_POPCNT | FR_CPU_AVX2 | FR_CPU_AVX512F | FR_CPU_AVX512BW | FR_CPU_AVX512VL
            | FR_CPU_AVX512VPOPCNTDQ | FR_CPU_AVX512VBMI};
    static int fr_best_level(void) { return fr_cpu_best_level(fr_level_needs, FR_N_LEVELS); }

    /* running minimum over one test pattern's distances: the minimum so far, and the
       entries at it (ties[0 .. k-1], ascending) */
    typedef struct { uint32_t m; int64_t k; } fr_track;

    /* d <= m: entry t joins the running minimum (m, k) */
    #define FR_TRACK(d, t) do {                                                     \
            if ((d) <= m) {                                                         \
                if ((d) < m) { m = (d); k = 0; }                                    \
                ties[k++] = (int32_t) (t);                                          \
            } } while (0)

    /* Distances of test pattern q (WW words) to train patterns t0 .. t1-1 of M, updating
       the running minimum r and its entry list ties. */
    #define FR_SCAN_LOOP(WW)                                                        \
        int64_t t; int64_t j;                                                       \
        uint32_t m = r->m; int64_t k = r->k;                                        \
        for (t = t0; t < t1; t++) {                                                 \
            const uint64_t* p = M + t * (WW);                                       \
            uint32_t d = 0;                                                         \
            for (j = 0; j < (WW); j++) d += FR_POPCOUNT64(p[j] ^ q[j]);             \
            FR_TRACK(d, t);                                                         \
        }                                                                           \
        r->m = m; r->k = k;
    /* Fixed widths: the test words are copied to locals, which the compiler keeps in
       registers once the fixed-length loops are unrolled. */
    #define FR_SCAN_FIXED(WW, SFX, ATTR)                                            \
        ATTR static void fr_scan_##WW##SFX(const uint64_t* M, int64_t t0, int64_t t1, \
                                 const uint64_t* c, int32_t* ties, fr_track* r)     \
        { uint64_t q[WW]; int i; for (i = 0; i < (WW); i++) q[i] = c[i];            \
          { FR_SCAN_LOOP(WW) } }
    /* The scan of one path: specialised widths and the generic one. */
    #define FR_SCAN(SFX, ATTR)                                                      \
        FR_SCAN_FIXED(1, SFX, ATTR) FR_SCAN_FIXED(2, SFX, ATTR)                     \
        FR_SCAN_FIXED(4, SFX, ATTR) FR_SCAN_FIXED(8, SFX, ATTR)                     \
        FR_SCAN_FIXED(16, SFX, ATTR) FR_SCAN_FIXED(32, SFX, ATTR)                   \
        ATTR static void fr_scan##SFX(const uint64_t* M, int64_t t0, int64_t t1,    \
                                      const uint64_t* c, int64_t W, int32_t* ties,  \
                                      fr_track* r) {                                \
            switch (W) {                                                            \
            case 1: fr_scan_1##SFX(M, t0, t1, c, ties, r); return;                  \
            case 2: fr_scan_2##SFX(M, t0, t1, c, ties, r); return;                  \
            case 4: fr_scan_4##SFX(M, t0, t1, c, ties, r); return;                  \
            case 8: fr_scan_8##SFX(M, t0, t1, c, ties, r); return;                  \
            case 16: fr_scan_16##SFX(M, t0, t1, c, ties, r); return;                \
            case 32: fr_scan_32##SFX(M, t0, t1, c, ties, r); return;                \
            default: { const uint64_t* q = c; FR_SCAN_LOOP(W) }                     \
            } }
    FR_SCAN(_portable, )

    #ifdef FR_X86
    FR_SCAN(_popcnt, FR_T_POPCNT)

    /* VPOPCNTDQ scan of patterns of 8 k words (k <= 4): each stored pattern's words XORed
       with the test pattern's and counted 8 at a time; the 8 lane sums of 4 patterns are
       packed into 16-bit fields (each at most 256) and added across lanes at once. */
    FR_T_VPOPCNT static void fr_scan_vpopcnt8k(const uint64_t* M, int64_t t0, int64_t t1,
                                               const uint64_t* c, int64_t W, int32_t* ties,
                                               fr_track* r) {
        __m512i q[4], a[4], s;
        uint32_t m = r->m, d;
        int64_t k = r->k, t, e, n = W / 8, j;
        uint64_t packed;
        for (j = 0; j < n; j++) q[j] = _mm512_loadu_si512((const void*) (c + 8 * j));
        for (t = t0; t + 4 <= t1; t += 4) {
            for (e = 0; e < 4; e++) {
                const uint64_t* p = M + (t + e) * W;
                a[e] = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(p), q[0]));
                for (j = 1; j < n; j++)
                    a[e] = _mm512_add_epi64(a[e], _mm512_popcnt_epi64(_mm512_xor_si512(
                        _mm512_loadu_si512((const void*) (p + 8 * j)), q[j])));
            }
            s = _mm512_or_si512(_mm512_or_si512(a[0], _mm512_slli_epi64(a[1], 16)),
                                _mm512_or_si512(_mm512_slli_epi64(a[2], 32),
                                                _mm512_slli_epi64(a[3], 48)));
            packed = (uint64_t) _mm512_reduce_add_epi64(s);
            for (e = 0; e < 4; e++) {
                d = (uint32_t) ((packed >> (16 * e)) & 0xFFFF);
                FR_TRACK(d, t + e);
            }
        }
        for (; t < t1; t++) {
            const uint64_t* p = M + t * W;
            s = _mm512_setzero_si512();
            for (j = 0; j < n; j++)
                s = _mm512_add_epi64(s, _mm512_popcnt_epi64(_mm512_xor_si512(
                    _mm512_loadu_si512((const void*) (p + 8 * j)), q[j])));
            d = (uint32_t) _mm512_reduce_add_epi64(s);
            FR_TRACK(d, t);
        }
        r->m = m; r->k = k;
    }
    FR_T_VPOPCNT static void fr_scan_vpopcnt(const uint64_t* M, int64_t t0, int64_t t1,
                                             const uint64_t* c, int64_t W, int32_t* ties,
                                             fr_track* r) {
        if (W % 8 == 0 && W <= 32) fr_scan_vpopcnt8k(M, t0, t1, c, W, ties, r);
        else fr_scan_popcnt(M, t0, t1, c, W, ties, r);
    }
    #endif

    static void fr_scan(const uint64_t* M, int64_t t0, int64_t t1, const uint64_t* c,
                        int64_t W, int32_t* ties, fr_track* r) {
    #ifdef FR_X86
        if (fr_level >= FR_L_VPOPCNT) { fr_scan_vpopcnt(M, t0, t1, c, W, ties, r); return; }
        if (fr_level >= FR_L_POPCNT) { fr_scan_popcnt(M, t0, t1, c, W, ties, r); return; }
    #endif
        fr_scan_portable(M, t0, t1, c, W, ties, r);
    }

    /* Bit-sliced search (AVX2 and AVX-512 paths), for patterns of 4 to 32 words, a multiple
       of 4. A tile of FR_TILE stored patterns (256 with AVX2, 512 with AVX-512) is
       transposed once into bit planes -- plane i is a vector whose bit e is bit i of entry
       t0 + e -- shared by every test pattern of the batch. For a test pattern q let S be
       its set bits, or its clear bits when more than half are set; the counts
       c_e = |{i in S : bit e of plane i}| of all the tile's entries are summed at once in
       bit-sliced counters (a carry-save adder tree: a few logic operations per plane, two
       ternary-logic instructions with AVX-512), and d_e = |q| + |m_e| - 2 c_e for set bits,
       |q| - |m_e| + 2 c_e for clear bits, with the sizes |m_e| counted the same way when
       the tile is transposed. The minimum and the set of entries at it come from an
       MSB-first search over the bit-sliced values; the tied entries are read off that set
       in ascending order. The work per test pattern and tile is proportional to
       |S| <= 32 W: small for the sparse patterns of text. */
    #ifdef FR_X86
    #define FR_TILE 256            /* AVX2 tile: entries per tile = bits per plane */
    #define FR_MAX_WORDS 32        /* widest pattern: 2048 bits */
    #define FR_COUNT_BITS 12       /* bit-sliced counters hold counts <= 2048 (fr_count_planes
                                      zeroes C[4 .. 11] by name) */

    typedef struct {               /* a transposed AVX2 tile */
        int64_t t0;                /* its first entry */
        __m256i valid;             /* bit e set for the entries present (a last tile is short) */
        __m256i size[FR_COUNT_BITS];   /* bit slices of the entries' sizes |m_e| */
        int size_bits;             /* bits of the largest size */
        __m256i* plane;            /* (64 W) planes */
    } fr_tile;

    typedef struct {               /* a transposed AVX-512 tile: 512 entries (bit e of a
                                      plane: entry t0 + e) */
        int64_t t0;
        __m512i valid;
        __m512i size[FR_COUNT_BITS];
        int size_bits;
        __m512i* plane;
    } fr_tile512;

    typedef struct {               /* a test pattern's planes */
        int32_t n, setbits, size;  /* |S|; S = its set bits (1) or clear bits (0); |q| */
        int16_t bit[32 * FR_MAX_WORDS + 8];  /* S, ascending (8 more: fr_query_init's
                                                 last stores) */
    } fr_query;

    static int16_t fr_every_bit[64 * FR_MAX_WORDS];  /* 0, 1, 2, ...: every plane */

    #define FR_CSA(h, l, a, b, c) do {                                              \
        __m256i u_ = _mm256_xor_si256(a, b);                                        \
        h = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u_, c));       \
        l = _mm256_xor_si256(u_, c); } while (0)
    /* the same with AVX-512 ternary logic: h = majority(a, b, c), l = a ^ b ^ c */
    #define FR_CSA512(h, l, a, b, c) do {                                           \
        __m512i a_ = (a), b_ = (b), c_ = (c);                                       \
        h = _mm512_ternarylogic_epi64(a_, b_, c_, 0xE8);                            \
        l = _mm512_ternarylogic_epi64(a_, b_, c_, 0x96); } while (0)

    /* Planes bit[j] .. bit[j + 3] into the running ones and twos; the fours carried out
       into f */
    #define FR_CSA4(CSA, f, j) do {                                                 \
        CSA(twos_a, ones, P[bit[j]], P[bit[(j) + 1]], ones);                        \
        CSA(twos_b, ones, P[bit[(j) + 2]], P[bit[(j) + 3]], ones);                  \
        CSA(f, twos, twos_a, twos_b, twos); } while (0)

    /* C <- bit slices (C[0] lowest) of, for each entry, how many of the planes
       P[bit[0]], ..., P[bit[n-1]] have it: Harley-Seal carry-save tree over 16 planes at a
       time, then one ripple-carry increment per remaining plane. C[4 ..] collect the
       sixteens (C[0 .. 3] are set at the end); written out, as a loop GCC makes the
       zeroing a `rep stos`, slow at this size. */
    #define FR_COUNT_PLANES(NAME, ATTR, V, CSA, ZERO, AND, XOR)                     \
        ATTR static inline void NAME##_add(V* C, V x, int b0) {                     \
            V carry_out;                                                            \
            int b;                                                                  \
            for (b = b0; b < FR_COUNT_BITS; b++) {                                  \
                carry_out = AND(C[b], x);                                           \
                C[b] = XOR(C[b], x);                                                \
                x = carry_out;                                                      \
            }                                                                       \
        }                                                                           \
        ATTR static void NAME(const V* P, const int16_t* bit, int n, V* C) {        \
            const V zero = ZERO();                                                  \
            V ones = zero, twos = zero, fours = zero, eights = zero;                \
            V twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;       \
            int i = 0;                                                              \
            C[4] = zero; C[5] = zero; C[6] = zero; C[7] = zero;                     \
            C[8] = zero; C[9] = zero; C[10] = zero; C[11] = zero;                   \
            for (; i + 16 <= n; i += 16) {                                          \
                FR_CSA4(CSA, fours_a, i);                                           \
                FR_CSA4(CSA, fours_b, i + 4);                                       \
                CSA(eights_a, fours, fours_a, fours_b, fours);                      \
                FR_CSA4(CSA, fours_a, i + 8);                                       \
                FR_CSA4(CSA, fours_b, i + 12);                                      \
                CSA(eights_b, fours, fours_a, fours_b, fours);                      \
                CSA(sixteens, eights, eights_a, eights_b, eights);                  \
                NAME##_add(C, sixteens, 4);                                         \
            }                                                                       \
            C[0] = ones; C[1] = twos; C[2] = fours; C[3] = eights;                  \
            for (; i < n; i++) NAME##_add(C, P[bit[i]], 0);                         \
        }
    FR_COUNT_PLANES(fr_count_planes, FR_T_AVX2, __m256i, FR_CSA, _mm256_setzero_si256,
                    _mm256_and_si256, _mm256_xor_si256)
    FR_COUNT_PLANES(fr_count_planes512, FR_T_AVX512, __m512i, FR_CSA512,
                    _mm512_setzero_si512, _mm512_and_si512, _mm512_xor_si512)

    /* One stage of a 64 x 64 bit transpose, in each 64-bit lane of A[0 .. 63] at once:
       swap the J x J blocks off the diagonal (J = 32, 16, ..., 1). */
    #define FR_TRANSPOSE_STAGE(A, J, MASK) do {                                      \
        const __m256i mask_ = _mm256_set1_epi64x((long long) (MASK));               \
        int k_;                                                                     \
        for (k_ = 0; k_ < 64; k_ = ((k_ | (J)) + 1) & ~(J)) {                       \
            __m256i t_ = _mm256_and_si256(_mm256_xor_si256(                         \
                _mm256_srli_epi64((A)[k_], J), (A)[k_ | (J)]), mask_);              \
            (A)[k_] = _mm256_xor_si256((A)[k_], _mm256_slli_epi64(t_, J));          \
            (A)[k_ | (J)] = _mm256_xor_si256((A)[k_ | (J)], t_);                    \
        } } while (0)
    /* the same with 512-bit vectors (8 lanes) */
    #define FR_TRANSPOSE_STAGE512(A, J, MASK) do {                                  \
        const __m512i mask_ = _mm512_set1_epi64((long long) (MASK));                \
        int k_;                                                                     \
        for (k_ = 0; k_ < 64; k_ = ((k_ | (J)) + 1) & ~(J)) {                       \
            __m512i t_ = _mm512_and_si512(_mm512_xor_si512(                         \
                _mm512_srli_epi64((A)[k_], J), (A)[k_ | (J)]), mask_);              \
            (A)[k_] = _mm512_xor_si512((A)[k_], _mm512_slli_epi64(t_, J));          \
            (A)[k_ | (J)] = _mm512_xor_si512((A)[k_ | (J)], t_);                    \
        } } while (0)

    /* The 64 W planes of entries t0 .. t0 + n - 1 (n <= 256) of M, 256 bits each: plane p
       into out[p] (absent entries give 0 bits). */
    FR_T_AVX2 static void fr_transpose256(const uint64_t* M, int64_t t0, int64_t n,
                                          int64_t W, __m256i* out) {
        __m256i A[4][64] __attribute__((aligned(32)));
        __m256i e0, e1, e2, e3;
        __m256i* o;
        int64_t j0, t;
        int g, i;
        for (j0 = 0; j0 < W; j0 += 4) {
            for (g = 0; g < 4; g++) {       /* entries 64 g .. 64 g + 63, words j0 .. j0 + 3 */
                for (i = 0; i < 64; i++) {
                    t = 64 * g + i;
                    A[g][i] = t < n
                        ? _mm256_loadu_si256((const __m256i*) (M + (t0 + t) * W + j0))
                        : _mm256_setzero_si256();
                }
                FR_TRANSPOSE64(FR_TRANSPOSE_STAGE, A[g]);
            }
            /* lane l of A[g][i]: bit i of word j0 + l of entries 64 g ..; plane
               64 (j0 + l) + i gathers lane l of A[0][i] .. A[3][i] */
            o = out + 64 * j0;
            for (i = 0; i < 64; i++) {
                e0 = _mm256_unpacklo_epi64(A[0][i], A[1][i]);
                e1 = _mm256_unpackhi_epi64(A[0][i], A[1][i]);
                e2 = _mm256_unpacklo_epi64(A[2][i], A[3][i]);
                e3 = _mm256_unpackhi_epi64(A[2][i], A[3][i]);
                o[i] = _mm256_permute2x128_si256(e0, e2, 0x20);
                o[64 + i] = _mm256_permute2x128_si256(e1, e3, 0x20);
                o[128 + i] = _mm256_permute2x128_si256(e0, e2, 0x31);
                o[192 + i] = _mm256_permute2x128_si256(e1, e3, 0x31);
            }
        }
    }

    /* bit e of the tile's valid mask, for n entries: words of 64 entries */
    static inline uint64_t fr_valid_word(int64_t n, int g) {
        int64_t left = n - 64 * (int64_t) g;
        return left >= 64 ? ~0ULL : left <= 0 ? 0 : (1ULL << left) - 1;
    }

    /* Transpose entries t0 .. t0 + n - 1 (n <= 256) of M into T: planes, sizes, valid. */
    FR_T_AVX2 static void fr_tile_build(const uint64_t* M, int64_t t0, int64_t n, int64_t W,
                                        fr_tile* T) {
        uint64_t valid[4];
        int g, b;
        T->t0 = t0;
        fr_transpose256(M, t0, n, W, T->plane);
        fr_count_planes(T->plane, fr_every_bit, (int) (64 * W), T->size);
        for (g = 0; g < 4; g++) valid[g] = fr_valid_word(n, g);
        T->valid = _mm256_loadu_si256((const __m256i*) valid);
        for (b = 0, T->size_bits = 0; b < FR_COUNT_BITS; b++)
            if (!_mm256_testz_si256(T->size[b], T->size[b])) T->size_bits = b + 1;
    }

    /* The 64 W planes of entries t0 .. t0 + n - 1 (n <= 512) of M, 512 bits each, into
       out[0 .. 64 W - 1], 8 words at a time: for each i < 64, the 8 words of entries i,
       64 + i, ..., 448 + i are transposed as an 8 x 8 matrix of words (unpacks, two-source
       permutes, lane shuffles), giving A[j][i] whose lane g is word j of entry 64 g + i;
       each A[j] is then a 64 x 64 bit transpose in each lane (plane 64 j + b, bit
       64 g + i = bit b of word j of entry 64 g + i). */
    FR_T_AVX512 static void fr_transpose512(const uint64_t* M, int64_t t0, int64_t n,
                                            int64_t W, __m512i* out) {
        __m512i A[8][64];
        __m512i r[8], a[8], b[8];
        const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
        const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
        int64_t j0, t, nw, i, j;
        int g;
        for (j0 = 0; j0 < W; j0 += 8) {
            __mmask8 words;
            nw = W - j0 < 8 ? W - j0 : 8;
            words = (__mmask8) ((1u << nw) - 1);
            for (i = 0; i < 64; i++) {
                for (g = 0; g < 8; g++) {
                    t = 64 * g + i;
                    r[g] = t < n ? _mm512_maskz_loadu_epi64(words, M + (t0 + t) * W + j0)
                                 : _mm512_setzero_si512();
                }
                for (g = 0; g < 8; g += 2) {        /* a[g]: words 0, 2, 4, 6 of rows g, g + 1 */
                    a[g] = _mm512_unpacklo_epi64(r[g], r[g + 1]);
                    a[g + 1] = _mm512_unpackhi_epi64(r[g], r[g + 1]);
                }
                for (g = 0; g < 8; g += 4) {        /* b[g]: words 0, 4 of rows g .. g + 3 */
                    b[g] = _mm512_permutex2var_epi64(a[g], lo, a[g + 2]);
                    b[g + 1] = _mm512_permutex2var_epi64(a[g + 1], lo, a[g + 3]);
                    b[g + 2] = _mm512_permutex2var_epi64(a[g], hi, a[g + 2]);
                    b[g + 3] = _mm512_permutex2var_epi64(a[g + 1], hi, a[g + 3]);
                }
                for (j = 0; j < 4; j++) {
                    A[j][i] = _mm512_shuffle_i64x2(b[j], b[j + 4], 0x44);
                    A[j + 4][i] = _mm512_shuffle_i64x2(b[j], b[j + 4], 0xEE);
                }
            }
            for (j = 0; j < nw; j++) {
                FR_TRANSPOSE64(FR_TRANSPOSE_STAGE512, A[j]);
                for (i = 0; i < 64; i++) out[64 * (j0 + j) + i] = A[j][i];
            }
        }
    }

    /* The same for n <= 512 entries into a 512-entry tile. */
    FR_T_AVX512 static void fr_tile_build512(const uint64_t* M, int64_t t0, int64_t n,
                                             int64_t W, fr_tile512* T) {
        uint64_t valid[8];
        int g, b;
        T->t0 = t0;
        fr_transpose512(M, t0, n, W, T->plane);
        fr_count_planes512(T->plane, fr_every_bit, (int) (64 * W), T->size);
        for (g = 0; g < 8; g++) valid[g] = fr_valid_word(n, g);
        T->valid = _mm512_loadu_si512((const void*) valid);
        for (b = 0, T->size_bits = 0; b < FR_COUNT_BITS; b++)
            if (_mm512_test_epi64_mask(T->size[b], T->size[b])) T->size_bits = b + 1;
    }

    static int16_t fr_byte_bits[256][8];  /* the set bits of each byte value, ascending */

    /* Q <- the bit list of pattern c: each byte's set bits from fr_byte_bits, 8 positions
       stored at once and the count advanced by the byte's popcount (no branch per bit) */
    FR_T_POPCNT static void fr_query_init(const uint64_t* c, int64_t W, fr_query* Q) {
        int64_t j;
        int i;
        uint64_t v;
        unsigned byte;
        Q->size = 0;
        for (j = 0; j < W; j++) Q->size += (int32_t) FR_POPCOUNT64(c[j]);
        Q->setbits = Q->size <= 32 * W;
        Q->n = 0;
        for (j = 0; j < W; j++) {
            v = Q->setbits ? c[j] : ~c[j];
            for (i = 0; i < 8; i++, v >>= 8) {
                byte = (unsigned) (v & 0xFF);
                _mm_storeu_si128((__m128i*) (Q->bit + Q->n), _mm_add_epi16(
                    _mm_loadu_si128((const __m128i*) fr_byte_bits[byte]),
                    _mm_set1_epi16((short) (64 * j + 8 * i))));
                Q->n += (int32_t) FR_POPCOUNT64(byte);
            }
        }
    }

    /* Distances of Q's pattern to tile T's entries, updating the running minimum r and
       its entry list ties (as fr_scan over the tile would): the counts, then
       G <- X - Y = X + ~Y + 1 in `bits`-bit two's complement, where (X, Y) = (|m|, 2c)
       for set bits and (2c, |m|) for clear bits (d = |q| + X - Y), then the MSB-first
       search. */
    #define FR_TILE_SCAN(NAME, ATTR, TILE, V, LANES, COUNT, ZERO, ONES, XOR, AND, OR,   \
                         ANDNOT, NONZERO, STORE)                                         \
        ATTR static void NAME(const TILE* T, const fr_query* Q, int32_t* ties,           \
                              fr_track* r) {                                             \
            const V zero = ZERO(), all = ONES();                                         \
            V C[FR_COUNT_BITS], G[FR_COUNT_BITS + 2];                                    \
            V carry = all, cand = T->valid, x, not_y, u, low;                            \
            uint64_t lanes[LANES], v;                                                    \
            unsigned gmin = 0;                                                           \
            uint32_t d, m = r->m;                                                        \
            int64_t k = r->k;                                                            \
            int b, bits, g;                                                              \
            COUNT(T->plane, Q->bit, Q->n, C);                                            \
            bits = 33 - __builtin_clz((unsigned) Q->n | 1);          /* bits of 2 |S| */ \
            bits = (T->size_bits > bits ? T->size_bits : bits) + 1;  /* and a sign bit */\
            for (b = 0; b < bits; b++) {                                                 \
                V sz = b < FR_COUNT_BITS ? T->size[b] : zero;                            \
                V c2 = b >= 1 && b - 1 < FR_COUNT_BITS ? C[b - 1] : zero;                \
                x = Q->setbits ? sz : c2;                                                \
                not_y = XOR(Q->setbits ? c2 : sz, all);                                  \
                u = XOR(x, not_y);                                                       \
                G[b] = XOR(u, carry);                                                    \
                carry = OR(AND(x, not_y), AND(u, carry));                                \
            }                                                                            \
            G[bits - 1] = XOR(G[bits - 1], all);  /* + 2^(bits-1): unsigned order */     \
            for (b = bits - 1; b >= 0; b--) {   /* minimum, MSB first, and its entries */\
                low = ANDNOT(G[b], cand);                                                \
                if (NONZERO(low)) cand = low;                                            \
                else gmin |= 1u << b;                                                    \
            }                                                                            \
            d = (uint32_t) (Q->size + (int) gmin - (1 << (bits - 1)));                   \
            if (d <= m) {                                                                \
                if (d < m) { m = d; k = 0; }                                             \
                STORE((void*) lanes, cand);                                              \
                for (g = 0; g < (LANES); g++)                                            \
                    for (v = lanes[g]; v; v &= v - 1)                                    \
                        ties[k++] = (int32_t) (T->t0 + 64 * g + FR_CTZ64(v));            \
            }                                                                            \
            r->m = m;                                                                    \
            r->k = k;                                                                    \
        }
    #define FR_NONZERO256(a) (!_mm256_testz_si256(a, a))
    #define FR_NONZERO512(a) (_mm512_test_epi64_mask(a, a) != 0)
    #define FR_STORE256(p, a) _mm256_storeu_si256((__m256i*) (p), a)
    #define FR_ONES256() _mm256_set1_epi32(-1)
    #define FR_ONES512() _mm512_set1_epi32(-1)
    FR_TILE_SCAN(fr_tile_scan, FR_T_AVX2, fr_tile, __m256i, 4, fr_count_planes,
                 _mm256_setzero_si256, FR_ONES256, _mm256_xor_si256, _mm256_and_si256,
                 _mm256_or_si256, _mm256_andnot_si256, FR_NONZERO256, FR_STORE256)
    FR_TILE_SCAN(fr_tile_scan512, FR_T_AVX512, fr_tile512, __m512i, 8, fr_count_planes512,
                 _mm512_setzero_si512, FR_ONES512, _mm512_xor_si512, _mm512_and_si512,
                 _mm512_or_si512, _mm512_andnot_si512, FR_NONZERO512, _mm512_storeu_si512)

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
    #define FR_GT_PD256(a, b) _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_GT_OQ))
    #define FR_GT_PS256(a, b) _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ))
    #define FR_GT_PD512(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
    #define FR_GT_PS512(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
    FR_ENCODE_SIMD(fr_encode_f64_avx2, FR_T_AVX2, double, 4, _mm256_loadu_pd, FR_GT_PD256)
    FR_ENCODE_SIMD(fr_encode_f32_avx2, FR_T_AVX2, float, 8, _mm256_loadu_ps, FR_GT_PS256)
    FR_ENCODE_SIMD(fr_encode_f64_avx512, FR_T_AVX512, double, 8, _mm512_loadu_pd,
                   FR_GT_PD512)
    FR_ENCODE_SIMD(fr_encode_f32_avx512, FR_T_AVX512, float, 16, _mm512_loadu_ps,
                   FR_GT_PS512)

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
    /* The rank of each of the n_cols values of row x (the number of the row's values below
       it) into rank[a * step] for value a; returns 0 when a value is NaN. LANES values a
       at a time, each x[b] broadcast against them and counted where below (4 running
       counts, so the additions overlap). */
    #define FR_ROW_RANKS(NAME, T, VT, LANES, MASKT, MASKZ_LOADU, SET1, CMP, COUNT_T,    \
                         MASK_ADD, SET1_COUNT, ADD_COUNT)                               \
        FR_T_AVX512 static inline int NAME(const T* x, int64_t n_cols, uint8_t* rank,   \
                                           int64_t step) {                              \
            COUNT_T count[LANES] __attribute__((aligned(64)));                          \
            const __m512i one = SET1_COUNT(1);                                          \
            int64_t a, b, l, nv;                                                        \
            for (a = 0; a < n_cols; a += (LANES)) {                                     \
                __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;         \
                VT xa;                                                                  \
                MASKT valid;                                                            \
                nv = n_cols - a < (LANES) ? n_cols - a : (LANES);                       \
                valid = (MASKT) ((1ULL << nv) - 1);                                     \
                xa = MASKZ_LOADU(valid, x + a);                                         \
                if (CMP(xa, xa, _CMP_UNORD_Q) & valid) return 0;                        \
                for (b = 0; b + 4 <= n_cols; b += 4) {                                  \
                    c0 = MASK_ADD(c0, CMP(SET1(x[b]), xa, _CMP_LT_OQ), c0, one);        \
                    c1 = MASK_ADD(c1, CMP(SET1(x[b + 1]), xa, _CMP_LT_OQ), c1, one);    \
                    c2 = MASK_ADD(c2, CMP(SET1(x[b + 2]), xa, _CMP_LT_OQ), c2, one);    \
                    c3 = MASK_ADD(c3, CMP(SET1(x[b + 3]), xa, _CMP_LT_OQ), c3, one);    \
                }                                                                       \
                for (; b < n_cols; b++)                                                 \
                    c0 = MASK_ADD(c0, CMP(SET1(x[b]), xa, _CMP_LT_OQ), c0, one);        \
                _mm512_store_si512((void*) count,                                       \
                                   ADD_COUNT(ADD_COUNT(c0, c1), ADD_COUNT(c2, c3)));    \
                for (l = 0; l < nv; l++) rank[(a + l) * step] = (uint8_t) count[l];     \
            }                                                                           \
            return 1;                                                                   \
        }
    /* AVX2 has a signed byte compare only: its ranks are stored with the top bit flipped
       (rank ^ 0x80), whose signed order is the ranks' order. The rank of each of the
       n_cols values of row x as above, LANES values at a time (the last ones from a
       padded copy), each x[b] broadcast against them and the all-ones lanes where below
       subtracted from 4 running counts. */
    #define FR_ROW_RANKS_AVX2(NAME, T, VT, LANES, LOADU, SET1, CMP, MOVEMASK, CAST, SUB,  \
                              COUNT_T)                                                  \
        FR_T_AVX2 static inline int NAME(const T* x, int64_t n_cols, uint8_t* rank,     \
                                         int64_t step) {                                \
            COUNT_T count[LANES] __attribute__((aligned(32)));                          \
            T pad[LANES];                                                               \
            int64_t a, b, l, nv;                                                        \
            for (a = 0; a < n_cols; a += (LANES)) {                                     \
                __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;         \
                VT xa;                                                                  \
                nv = n_cols - a < (LANES) ? n_cols - a : (LANES);                       \
                for (l = 0; l < (LANES); l++) pad[l] = l < nv ? x[a + l] : 0;           \
                xa = LOADU(pad);                                                        \
                if (MOVEMASK(CMP(xa, xa, _CMP_UNORD_Q)) & ((1 << nv) - 1)) return 0;    \
                for (b = 0; b + 4 <= n_cols; b += 4) {                                  \
                    c0 = SUB(c0, CAST(CMP(SET1(x[b]), xa, _CMP_LT_OQ)));                \
                    c1 = SUB(c1, CAST(CMP(SET1(x[b + 1]), xa, _CMP_LT_OQ)));            \
                    c2 = SUB(c2, CAST(CMP(SET1(x[b + 2]), xa, _CMP_LT_OQ)));            \
                    c3 = SUB(c3, CAST(CMP(SET1(x[b + 3]), xa, _CMP_LT_OQ)));            \
                }                                                                       \
                for (; b < n_cols; b++)                                                 \
                    c0 = SUB(c0, CAST(CMP(SET1(x[b]), xa, _CMP_LT_OQ)));                \
                _mm256_store_si256((__m256i*) count, _mm256_add_epi64(                  \
                    _mm256_add_epi64(c0, c1), _mm256_add_epi64(c2, c3)));               \
                for (l = 0; l < nv; l++)                                                \
                    rank[(a + l) * step] = (uint8_t) (count[l] ^ 0x80);                 \
            }                                                                           \
            return 1;                                                                   \
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
    FR_T_AVX2 static inline fr_ranks64 fr_load_ranks64(const uint8_t* p) {
        fr_ranks64 v;
        v.lo = _mm256_load_si256((const __m256i*) p);
        v.hi = _mm256_load_si256((const __m256i*) (p + 32));
        return v;
    }
    FR_T_AVX2 static inline uint64_t fr_gt_ranks64(fr_ranks64 a, fr_ranks64 b) {
        uint32_t lo = (uint32_t) _mm256_movemask_epi8(_mm256_cmpgt_epi8(a.lo, b.lo));
        uint32_t hi = (uint32_t) _mm256_movemask_epi8(_mm256_cmpgt_epi8(a.hi, b.hi));
        return (uint64_t) lo | (uint64_t) hi << 32;
    }
    #define FR_LOAD_RANKS512(p) _mm512_load_si512((const void*) (p))
    #define FR_GT_RANKS512(a, b) ((uint64_t) _mm512_cmpgt_epu8_mask(a, b))
    /* The encoder of one vector width: LEVEL the least path that runs it; ranks RANKS,
       loaded RV = LOADR(p) and compared GT64(a, b); LANES words TV transposed by STAGE,
       loaded and stored by TLOAD / TSTORE (aligned) / TSTOREU; STREAMS: a model's memory
       is written past the caches (fr_stream_words, AVX-512). */
    #define FR_ENCODE_RANKED(NAME, ATTR, LEVEL, T, RANKS, RV, LOADR, GT64, TV, LANES,   \
                             STAGE, TLOAD, TSTORE, TSTOREU, STREAMS)                    \
        ATTR static int NAME(const T* X, int64_t n_cols, const int64_t* rows,           \
                             int64_t n_rows, const int32_t* syn, int64_t n_neurons,     \
                             int64_t S, int64_t W, uint64_t* out, int64_t stride,       \
                             int stream) {                                              \
            uint8_t R[256 * 64] __attribute__((aligned(64)));                          \
            uint64_t M[64][LANES] __attribute__((aligned(64)));                        \
            uint64_t lanes[LANES] __attribute__((aligned(64)));                        \
            uint64_t rows_out[64 * 32] __attribute__((aligned(64))); /* a neuron's rows */\
            TV A[64];                                                                  \
            int64_t r, g0, l, w, i, si, nl, n;                                         \
            stream = stream && (STREAMS);                                              \
            if (fr_level < (LEVEL) || n_cols > 256 || n_rows > 64 || n_cols < 1)       \
                return 0;                                                              \
            memset(R, 0, (size_t) n_cols * 64);                                        \
            for (r = 0; r < n_rows; r++)                                               \
                if (!RANKS(X + (rows != NULL ? rows[r] : r) * n_cols, n_cols, R + r, 64)) \
                    return 0;                                                          \
            for (g0 = 0; g0 < n_neurons * W; g0 += (LANES)) { /* lane l: word g0 + l */ \
                nl = n_neurons * W - g0 < (LANES) ? n_neurons * W - g0 : (LANES);      \
                for (l = 0; l < (LANES); l++) {   /* of neuron p / W, word p % W */    \
                    const int32_t* s = syn + ((g0 + (l < nl ? l : 0)) / W) * S;        \
                    RV cur, next;                                                      \
                    w = (g0 + l) % W;                                                  \
                    /* cells 64 w .. 64 w + n - 1; each synapse's ranks loaded once */  \
                    n = l >= nl ? 0 : S - 64 * w < 64 ? S - 64 * w : 64;               \
                    cur = LOADR(R + 64 * s[64 * w]);                                   \
                    for (i = 0; i < n; i++) {                                          \
                        si = 64 * w + i + 1;                                           \
                        next = LOADR(R + 64 * s[si < S ? si : 0]);                     \
                        M[i][l] = GT64(cur, next);                                     \
                        cur = next;                                                    \
                    }                                                                  \
                    for (; i < 64; i++) M[i][l] = 0;                                   \
                }                                                                      \
                for (i = 0; i < 64; i++) A[i] = TLOAD((const void*) M[i]);             \
                FR_TRANSPOSE64(STAGE, A);                                              \
                /* A[r] lane l: row r's word of lane l; the LANES words of one neuron   \
                   (W a multiple of LANES) are stored at once */                       \
                for (r = 0; r < n_rows; r++) {                                         \
                    if (W % (LANES) == 0 && stream && W <= 32) {                       \
                        TSTORE((void*) (rows_out + r * W + g0 % W), A[r]);             \
                        continue;                                                      \
                    }                                                                  \
                    if (W % (LANES) == 0) {                                            \
                        TSTOREU((void*) (out + (g0 / W) * stride + r * W + g0 % W), A[r]); \
                        continue;                                                      \
                    }                                                                  \
                    TSTORE((void*) lanes, A[r]);                                       \
                    for (l = 0; l < nl; l++)                                           \
                        out[((g0 + l) / W) * stride + r * W + (g0 + l) % W] = lanes[l];\
                }                                                                      \
                if (W % (LANES) == 0 && stream && W <= 32 && g0 % W + (LANES) == W)    \
                    fr_stream_words(out + (g0 / W) * stride, rows_out, n_rows * W);    \
            }                                                                          \
            if (stream) _mm_sfence();                                                  \
            return 1;                                                                  \
        }
    /* A copy dst[0 .. n-1] <- src[0 .. n-1] with non-temporal stores where dst is 64-byte
       aligned (patterns written once for a model's memory bypass the caches: no read of
       the lines they overwrite), done in steps: words i .. n-1 are left. */
    typedef struct { uint64_t* dst; const uint64_t* src; int64_t i, n; } fr_stream;
    FR_T_AVX512 static inline void fr_stream_begin(fr_stream* c, uint64_t* dst,
                                                   const uint64_t* src, int64_t n) {
        c->dst = dst; c->src = src; c->n = n;
        for (c->i = 0; c->i < n && ((uintptr_t) (dst + c->i) & 63) != 0; c->i++)
            dst[c->i] = src[c->i];
    }
    /* up to `lines` more 64-byte lines of the copy, and its last words after its lines */
    FR_T_AVX512 static inline void fr_stream_step(fr_stream* c, int64_t lines) {
        for (; lines > 0 && c->i + 8 <= c->n; lines--, c->i += 8)
            _mm512_stream_si512((__m512i*) (c->dst + c->i),
                                _mm512_loadu_si512((const void*) (c->src + c->i)));
        if (c->i + 8 > c->n)
            for (; c->i < c->n; c->i++) c->dst[c->i] = c->src[c->i];
    }
    FR_T_AVX512 static void fr_stream_words(uint64_t* dst, const uint64_t* src, int64_t n) {
        fr_stream c;
        fr_stream_begin(&c, dst, src, n);
        fr_stream_step(&c, n);
    }
    FR_ROW_RANKS(fr_row_ranks_f64, double, __m512d, 8, __mmask8, _mm512_maskz_loadu_pd,
                 _mm512_set1_pd, _mm512_cmp_pd_mask, int64_t, _mm512_mask_add_epi64,
                 _mm512_set1_epi64, _mm512_add_epi64)
    FR_ROW_RANKS(fr_row_ranks_f32, float, __m512, 16, __mmask16, _mm512_maskz_loadu_ps,
                 _mm512_set1_ps, _mm512_cmp_ps_mask, int32_t, _mm512_mask_add_epi32,
                 _mm512_set1_epi32, _mm512_add_epi32)
    #define FR_LOAD256(p) _mm256_load_si256((const __m256i*) (p))
    #define FR_STORE256A(p, a) _mm256_store_si256((__m256i*) (p), a)
    #define FR_ENCODE_RANKED512(NAME, T, RANKS)                                        \
        FR_ENCODE_RANKED(NAME, FR_T_AVX512, FR_L_AVX512, T, RANKS, __m512i,            \
                         FR_LOAD_RANKS512, FR_GT_RANKS512, __m512i, 8,                 \
                         FR_TRANSPOSE_STAGE512, _mm512_load_si512, _mm512_store_si512, \
                         _mm512_storeu_si512, 1)
    #define FR_ENCODE_RANKED256(NAME, T, RANKS)                                        \
        FR_ENCODE_RANKED(NAME, FR_T_AVX2, FR_L_AVX2, T, RANKS, fr_ranks64,             \
                         fr_load_ranks64, fr_gt_ranks64, __m256i, 4, FR_TRANSPOSE_STAGE, \
                         FR_LOAD256, FR_STORE256A, FR_STORE256, 0)
    FR_ENCODE_RANKED512(fr_encode_rows_f64_avx512, double, fr_row_ranks_f64)
    FR_ENCODE_RANKED512(fr_encode_rows_f32_avx512, float, fr_row_ranks_f32)
    FR_ENCODE_RANKED256(fr_encode_rows_f64_avx2, double, fr_row_ranks_f64_avx2)
    FR_ENCODE_RANKED256(fr_encode_rows_f32_avx2, float, fr_row_ranks_f32_avx2)

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
    FR_T_VBMI static void fr_permuted_wiring(const int32_t* s, int64_t S, int64_t W,
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
    #define FR_PERMUTED_BLOCK(NW) do {                                                  \
        __m512i ia_[FR_PERMUTED_WORDS], ib_[FR_PERMUTED_WORDS];                         \
        int64_t j_, r_;                                                                 \
        for (j_ = 0; j_ < (NW); j_++) {                                                 \
            ia_[j_] = _mm512_loadu_si512((const void*) (idx + 64 * (w + j_)));          \
            ib_[j_] = _mm512_loadu_si512((const void*) (idx + 64 * (w + j_) + 1));      \
        }                                                                               \
        for (r_ = 0; r_ < g; r_++) {                                                    \
            const __m512i lo_ = _mm512_load_si512((const void*) (R + 128 * (r0 + r_))); \
            if (stream) fr_stream_step(&pending, 1);                                    \
            const __m512i hi_ = _mm512_load_si512((const void*) (R + 128 * (r0 + r_) + 64)); \
            for (j_ = 0; j_ < (NW); j_++)                                               \
                _store_mask64((__mmask64*) (dst + r_ * W + w + j_), _mm512_cmpgt_epu8_mask( \
                    _mm512_permutex2var_epi8(lo_, ia_[j_], hi_),                        \
                    _mm512_permutex2var_epi8(lo_, ib_[j_], hi_)));                      \
        } } while (0)
    #define FR_ENCODE_PERMUTED(NAME, T, RANKS)                                          \
        FR_T_VBMI static int NAME(const T* X, int64_t n_cols, const int64_t* rows,      \
                                  int64_t n_rows, const int32_t* syn, int64_t n_neurons, \
                                  int64_t S, int64_t W, uint64_t* out, int64_t stride,   \
                                  int stream, const uint8_t* wiring) {                  \
            uint8_t R[64 * 128] __attribute__((aligned(64)));   /* row r at R + 128 r */ \
            uint8_t own[FR_PERMUTED_WIRING(FR_PERMUTED_MAX_WORDS)] __attribute__((aligned(64))); \
            uint64_t buf[2][FR_PERMUTED_BUF] __attribute__((aligned(64)));              \
            fr_stream pending = {NULL, NULL, 0, 0};                                     \
            int64_t r, r0, g, w, n, group;                                              \
            int cur = 0;                                                                \
            if (fr_level < FR_L_VPOPCNT || n_cols > 128 || n_rows > 64 || n_cols < 1     \
                || W > FR_PERMUTED_MAX_WORDS) return 0;                                 \
            for (r = 0; r < n_rows; r++)                                                \
                if (!RANKS(X + (rows != NULL ? rows[r] : r) * n_cols, n_cols,           \
                           R + 128 * r, 1)) return 0;                                   \
            group = FR_PERMUTED_BUF / W;                                                \
            for (n = 0; n < n_neurons; n++) {                                           \
                const uint8_t* idx = wiring != NULL ? wiring + n * FR_PERMUTED_WIRING(W) \
                                                    : own;                              \
                uint64_t* o = out + n * stride;                                         \
                if (wiring == NULL) fr_permuted_wiring(syn + n * S, S, W, own);         \
                for (r0 = 0; r0 < n_rows; r0 += group) {                                \
                    uint64_t* dst = stream ? buf[cur] : o + r0 * W;                     \
                    g = n_rows - r0 < group ? n_rows - r0 : group;                      \
                    for (w = 0; w + FR_PERMUTED_WORDS <= W; w += FR_PERMUTED_WORDS)     \
                        FR_PERMUTED_BLOCK(FR_PERMUTED_WORDS);                           \
                    for (; w < W; w++) FR_PERMUTED_BLOCK(1);                            \
                    if (stream) {            /* finish the previous copy, begin this one */ \
                        fr_stream_step(&pending, FR_PERMUTED_BUF);                      \
                        fr_stream_begin(&pending, o + r0 * W, buf[cur], g * W);         \
                        cur ^= 1;                                                       \
                    }                                                                   \
                }                                                                       \
            }                                                                           \
            if (stream) {                                                               \
                fr_stream_step(&pending, FR_PERMUTED_BUF);                              \
                _mm_sfence();                                                           \
            }                                                                           \
            return 1;                                                                   \
        }
    FR_ENCODE_PERMUTED(fr_encode_rows_f64_vbmi, double, fr_row_ranks_f64)
    FR_ENCODE_PERMUTED(fr_encode_rows_f32_vbmi, float, fr_row_ranks_f32)
    #endif

    /* The rank encoding in portable C (little-endian CPUs, inputs of at most 128 features,
       so ranks are below 128): the ranks of 64 rows at a feature are 8 words of 8 bytes,
       and x[a] > x[b] for 8 rows at once is the top bit of each byte of
       (R[b] | 0x80..80) - R[a], clear (the subtraction borrows across no byte). The top
       bits of a cell's 8 words are gathered into one 64-bit mask (bit 8 j + k: row
       8 k + j, the 8 x 8 block transposed), 64 cells are transposed as in the vector
       paths, and row r's word is A[8 (r % 8) + r / 8]. RH holds the ranks with the top
       bit set. Returns 0, doing nothing, when a value is NaN or there are more than 128
       features or 64 rows. */
    #define FR_TRANSPOSE_STAGE_U64(A, J, MASK) do {                                 \
        int k_;                                                                     \
        for (k_ = 0; k_ < 64; k_ = ((k_ | (J)) + 1) & ~(J)) {                       \
            uint64_t t_ = (((A)[k_] >> (J)) ^ (A)[k_ | (J)]) & (MASK);             \
            (A)[k_] ^= t_ << (J);                                                   \
            (A)[k_ | (J)] ^= t_;                                                    \
        } } while (0)
    #define FR_ENCODE_RANKED_PORTABLE(NAME, T)                                         \
        static int NAME(const T* X, int64_t n_cols, const int64_t* rows, int64_t n_rows, \
                        const int32_t* syn, int64_t n_neurons, int64_t S, int64_t W,     \
                        uint64_t* out, int64_t stride) {                                \
            const uint64_t H = 0x8080808080808080ULL;                                  \
            uint64_t R[128][8], RH[128][8], A[64];                                     \
            int64_t r, n, w, i, si, k, nk, a, b, cells;                                \
            if (!FR_LITTLE_ENDIAN || n_cols > 128 || n_rows > 64 || n_cols < 1)       \
                return 0;                                                              \
            memset(R, 0, (size_t) n_cols * sizeof(R[0]));  /* the features' rows */    \
            for (r = 0; r < n_rows; r++) {                                             \
                const T* x = X + (rows != NULL ? rows[r] : r) * n_cols;                \
                for (a = 0; a < n_cols; a++) {                                         \
                    unsigned rank = 0;                                                 \
                    if (x[a] != x[a]) return 0;                                        \
                    for (b = 0; b < n_cols; b++) rank += x[b] < x[a];                  \
                    ((uint8_t*) R[a])[r] = (uint8_t) rank;                             \
                }                                                                      \
            }                                                                          \
            for (a = 0; a < n_cols; a++)                                               \
                for (k = 0; k < 8; k++) RH[a][k] = R[a][k] | H;                        \
            nk = (n_rows + 7) / 8;                                                     \
            for (n = 0; n < n_neurons; n++) {                                          \
                const int32_t* s = syn + n * S;                                        \
                for (w = 0; w < W; w++) {                                              \
                    const uint64_t* cur = R[s[64 * w]];                                \
                    cells = S - 64 * w < 64 ? S - 64 * w : 64;                         \
                    for (i = 0; i < cells; i++) {                                      \
                        uint64_t ge = 0;       /* bit 8 j + k: row 8 k + j, next >= cur */\
                        si = 64 * w + i + 1;                                           \
                        si = s[si < S ? si : 0];                                       \
                        for (k = 0; k < nk; k++)                                       \
                            ge |= ((RH[si][k] - cur[k]) & H) >> (7 - k);               \
                        A[i] = ~ge;                                                    \
                        cur = R[si];                                                   \
                    }                                                                  \
                    for (; i < 64; i++) A[i] = 0;                                      \
                    FR_TRANSPOSE64(FR_TRANSPOSE_STAGE_U64, A);                         \
                    for (r = 0; r < n_rows; r++)                                       \
                        out[n * stride + r * W + w] = A[8 * (r % 8) + r / 8];          \
                }                                                                      \
            }                                                                          \
            return 1;                                                                  \
        }
    FR_ENCODE_RANKED_PORTABLE(fr_encode_rows_f64_portable, double)
    FR_ENCODE_RANKED_PORTABLE(fr_encode_rows_f32_portable, float)

    /* The byte wiring of every neuron for the permuted encoding (n_neurons blocks of
       FR_PERMUTED_WIRING(W) bytes; free()) when it runs for inputs of n_cols features;
       NULL where it does not (or without memory: each call then makes its own). */
    static uint8_t* fr_permuted_wiring_new(const int32_t* syn, int64_t n_neurons, int64_t S,
                                           int64_t W, int64_t n_cols) {
    #ifdef FR_X86
        uint8_t* wiring;
        int64_t n;
        if (fr_level < FR_L_VPOPCNT || n_cols > 128 || n_cols < 1
            || W > FR_PERMUTED_MAX_WORDS)
            return NULL;
        wiring = (uint8_t*) malloc((size_t) (n_neurons * FR_PERMUTED_WIRING(W)));
        if (wiring != NULL)
            for (n = 0; n < n_neurons; n++)
                fr_permuted_wiring(syn + n * S, S, W, wiring + n * FR_PERMUTED_WIRING(W));
        return wiring;
    #else
        return NULL;
    #endif
    }

    /* Encode one neuron with the vector compare of the path in use; returns 0 (doing
       nothing) on the portable path */
    static int fr_encode_f64(const double* x, const int32_t* s, int64_t S, int64_t W,
                             uint64_t* out) {
    #ifdef FR_X86
        if (fr_level >= FR_L_AVX512) { fr_encode_f64_avx512(x, s, S, W, out); return 1; }
        if (fr_level == FR_L_AVX2) { fr_encode_f64_avx2(x, s, S, W, out); return 1; }
    #endif
        return 0;
    }
    static int fr_encode_f32(const float* x, const int32_t* s, int64_t S, int64_t W,
                             uint64_t* out) {
    #ifdef FR_X86
        if (fr_level >= FR_L_AVX512) { fr_encode_f32_avx512(x, s, S, W, out); return 1; }
        if (fr_level == FR_L_AVX2) { fr_encode_f32_avx2(x, s, S, W, out); return 1; }
    #endif
        return 0;
    }

    /* Encode up to 64 dense rows for every neuron by their ranks (AVX2 and AVX-512 paths);
       returns 0 (doing nothing) elsewhere or where it does not apply */
    static int fr_encode_rows_f64(const double* X, int64_t n_cols, const int64_t* rows,
                                  int64_t n_rows, const int32_t* syn, int64_t n_neurons,
                                  int64_t S, int64_t W, uint64_t* out, int64_t stride,
                                  int stream, const uint8_t* wiring) {
    #ifdef FR_X86
        if (fr_level >= FR_L_VPOPCNT
            && fr_encode_rows_f64_vbmi(X, n_cols, rows, n_rows, syn, n_neurons, S, W, out,
                                       stride, stream, wiring))
            return 1;
        if (fr_level >= FR_L_AVX512)
            return fr_encode_rows_f64_avx512(X, n_cols, rows, n_rows, syn, n_neurons, S, W,
                                             out, stride, stream);
        if (fr_level >= FR_L_AVX2)
            return fr_encode_rows_f64_avx2(X, n_cols, rows, n_rows, syn, n_neurons, S, W,
                                           out, stride, stream);
    #endif
        return fr_encode_rows_f64_portable(X, n_cols, rows, n_rows, syn, n_neurons, S, W,
                                           out, stride);
    }
    static int fr_encode_rows_f32(const float* X, int64_t n_cols, const int64_t* rows,
                                  int64_t n_rows, const int32_t* syn, int64_t n_neurons,
                                  int64_t S, int64_t W, uint64_t* out, int64_t stride,
                                  int stream, const uint8_t* wiring) {
    #ifdef FR_X86
        if (fr_level >= FR_L_VPOPCNT
            && fr_encode_rows_f32_vbmi(X, n_cols, rows, n_rows, syn, n_neurons, S, W, out,
                                       stride, stream, wiring))
            return 1;
        if (fr_level >= FR_L_AVX512)
            return fr_encode_rows_f32_avx512(X, n_cols, rows, n_rows, syn, n_neurons, S, W,
                                             out, stride, stream);
        if (fr_level >= FR_L_AVX2)
            return fr_encode_rows_f32_avx2(X, n_cols, rows, n_rows, syn, n_neurons, S, W,
                                           out, stride, stream);
    #endif
        return fr_encode_rows_f32_portable(X, n_cols, rows, n_rows, syn, n_neurons, S, W,
                                           out, stride);
    }

    /* Scratch of the bit-sliced search for W-word patterns and batches of B: one tile of
       each width and its planes (in raw and raw512, 64-byte aligned), and B test patterns'
       bit lists. */
    typedef struct {
        void* raw;
        void* raw512;
    #ifdef FR_X86
        fr_tile* tile;
        fr_tile512* tile512;
        fr_query* query;
    #endif
    } fr_sliced;

    static void fr_sliced_free(fr_sliced* s) {
        if (s == NULL) return;
        free(s->raw);
        free(s->raw512);
    #ifdef FR_X86
        free(s->query);
    #endif
        free(s);
    }

    /* NULL only when out of memory; a scratch for widths the search does not take is
       empty */
    static fr_sliced* fr_sliced_new(int64_t W, int64_t B) {
        fr_sliced* s = (fr_sliced*) calloc(1, sizeof(fr_sliced));
        if (s == NULL) return NULL;
    #ifdef FR_X86
        if (W % 4 == 0 && W <= FR_MAX_WORDS) {
            s->raw = malloc(sizeof(fr_tile) + 64 * W * sizeof(__m256i) + 128);
            s->raw512 = malloc(sizeof(fr_tile512) + 64 * W * sizeof(__m512i) + 128);
            s->query = (fr_query*) malloc(B * sizeof(fr_query));
            if (s->raw == NULL || s->raw512 == NULL || s->query == NULL) {
                fr_sliced_free(s);
                return NULL;
            }
            s->tile = (fr_tile*) (((uintptr_t) s->raw + 63) & ~(uintptr_t) 63);
            s->tile->plane = (__m256i*) (((uintptr_t) (s->tile + 1) + 63) & ~(uintptr_t) 63);
            s->tile512 = (fr_tile512*) (((uintptr_t) s->raw512 + 63) & ~(uintptr_t) 63);
            s->tile512->plane =
                (__m512i*) (((uintptr_t) (s->tile512 + 1) + 63) & ~(uintptr_t) 63);
        }
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
    FR_T_POPCNT static int fr_sliced_pays(const uint64_t* C, int64_t B, int64_t W) {
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
       Returns 0, doing nothing, on the portable path, for widths it does not take, and
       where the VPOPCNTDQ scan is faster. */
    static int fr_sliced_search(fr_sliced* s, const uint64_t* M, int64_t n_train,
                                const uint64_t* C, int64_t B, int64_t W, int32_t* ties,
                                fr_track* track) {
    #ifdef FR_X86
        int64_t b, t0;
        if (fr_level < FR_L_AVX2 || s->raw == NULL) return 0;
        if (fr_level >= FR_L_VPOPCNT && W % 8 == 0 && !fr_sliced_pays(C, B, W)) return 0;
        for (b = 0; b < B; b++) fr_query_init(C + b * W, W, &s->query[b]);
        if (fr_level >= FR_L_AVX512) {
            for (t0 = 0; t0 < n_train; t0 += 2 * FR_TILE) {
                fr_tile_build512(M, t0, n_train - t0 < 2 * FR_TILE ? n_train - t0
                                                                   : 2 * FR_TILE,
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
        return 0;
    #endif
    }

    static void fr_init(void) {
    #ifdef FR_X86
        int i, b, n;
        for (i = 0; i < 64 * FR_MAX_WORDS; i++) fr_every_bit[i] = (int16_t) i;
        for (i = 0; i < 256; i++)
            for (b = 0, n = 0; b < 8; b++)
                if (i >> b & 1) fr_byte_bits[i][n++] = (int16_t) b;
    #endif
        fr_level = fr_best_level();
    }

    /* The path at most `level` (the best the CPU runs below it); returns the previous one */
    static int fr_select(int level) {
        int previous = fr_level, best = fr_best_level();
        fr_level = level < 0 ? 0 : level < best ? level : best;
        return previous;
    }

    #ifdef _OPENMP
    #include <omp.h>
    static int fr_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int fr_max_threads(void) { return 1; }
    #endif
    """
    ctypedef struct Track "fr_track":
        uint32_t m
        int64_t k
    void scan "fr_scan"(const uint64_t* M, int64_t t0, int64_t t1, const uint64_t* c,
                        int64_t W, int32_t* ties, Track* r) noexcept nogil
    int fr_max_threads() noexcept nogil
    int fr_level
    enum: FR_N_LEVELS
    const char* fr_level_names[FR_N_LEVELS]
    int fr_best_level() noexcept nogil
    int fr_select(int level) noexcept nogil
    ctypedef struct Sliced "fr_sliced":
        pass
    Sliced* sliced_new "fr_sliced_new"(int64_t W, int64_t B) noexcept nogil
    void sliced_free "fr_sliced_free"(Sliced* s) noexcept nogil
    int sliced_search "fr_sliced_search"(Sliced* s, const uint64_t* M, int64_t n_train,
                                         const uint64_t* C, int64_t B, int64_t W,
                                         int32_t* ties, Track* track) noexcept nogil
    void fr_init() noexcept nogil
    int encode_f64 "fr_encode_f64"(const double* x, const int32_t* s, int64_t S, int64_t W,
                                   uint64_t* out) noexcept nogil
    int encode_f32 "fr_encode_f32"(const float* x, const int32_t* s, int64_t S, int64_t W,
                                   uint64_t* out) noexcept nogil
    uint8_t* permuted_wiring_new "fr_permuted_wiring_new"(const int32_t* syn,
                                                         int64_t n_neurons, int64_t S,
                                                         int64_t W, int64_t n_cols) noexcept nogil
    int encode_rows_f64 "fr_encode_rows_f64"(const double* X, int64_t n_cols,
                                             const int64_t* rows, int64_t n_rows,
                                             const int32_t* syn, int64_t n_neurons, int64_t S,
                                             int64_t W, uint64_t* out, int64_t stride,
                                             int stream, const uint8_t* wiring) noexcept nogil
    int encode_rows_f32 "fr_encode_rows_f32"(const float* X, int64_t n_cols,
                                             const int64_t* rows, int64_t n_rows,
                                             const int32_t* syn, int64_t n_neurons, int64_t S,
                                             int64_t W, uint64_t* out, int64_t stride,
                                             int stream, const uint8_t* wiring) noexcept nogil

# model and tie-policy codes, mirrored in fastrank/wnn.py
cdef enum:
    VGRAM = 0      # an entry per (document, label); a neuron outputs one label
    VGRAM_COR = 1  # an entry per document; a neuron outputs a label set
    RANDOM = 0     # the entry at the minimum distance with the smallest key (uniform)
    ALL = 1        # the vote split evenly over every entry at the minimum distance
    TILE_BYTES = 16384  # train tile kept in L1 (half of a 32 KiB L1d)
    SYNAPSE_BLOCK_BYTES = 32768  # neurons encoded together: their wiring stays in L1
    ROW_CHUNK = 64      # training rows per encoding task
    # bit-sliced search from this batch size on: transposing a tile costs about as much as
    # scanning it for 6 test patterns (measured on bibtex and Reuters, 512 synapses)
    SLICED_MIN_BATCH = 6
    MAX_BATCH = 64      # test documents searched together (one batch per task)
    # neurons whose votes are added in order into a partial row, the partial rows then
    # added in order: the split of the neurons among threads for a few documents
    NEURON_CHUNK = 32


fr_init()


#: the code paths, by level (use_simd): portable C, POPCNT, AVX2, AVX-512 (F, BW, VL),
#: AVX-512 with VPOPCNTDQ and VBMI; each is compiled for its own instruction set and chosen at
#: run time
SIMD_PATHS = tuple(fr_level_names[i].decode() for i in range(FR_N_LEVELS))


#: neurons per chunk: each test document's votes are added in order within a chunk of this
#: many neurons, and the chunks' sums in order (fastrank.wnn._merge_outcomes sums alike)
NEURONS_PER_CHUNK = NEURON_CHUNK


def simd_levels():
    """The levels of the code paths this CPU runs.

    Returns
    -------
    tuple of int
        0 (portable) up to the best level of the CPU (an index into SIMD_PATHS).
    """
    return tuple(range(fr_best_level() + 1))


def simd_path():
    """Name of the code path in use.

    Returns
    -------
    str
        One of SIMD_PATHS: ``"portable"``, ``"popcnt"``, ``"avx2"``, ``"avx512"`` or
        ``"avx512-vpopcntdq"`` (which also requires AVX-512 VBMI); at import, the best the
        CPU runs.
    """
    return SIMD_PATHS[fr_level]


def use_simd(int level):
    """Use the code path of this level, or the best the CPU runs below it. All paths give
    identical results; tests exercise each.

    Parameters
    ----------
    level : int
        0 portable C (rank encoding of dense rows in 64-bit words); 1 the same with the
        POPCNT instruction in the scan; 2 AVX2 (bit-sliced search, byte compares of 32
        rows); 3 AVX-512 F/BW/VL (512-entry bit-sliced tiles with ternary logic, byte
        compares of 64 rows); 4 also VPOPCNTDQ and VBMI (the VPOPCNTDQ scan, and dense rows
        of at most 128 features encoded by byte permutes).

    Returns
    -------
    int
        The previous level.
    """
    return fr_select(level)


# ---- encoding ---------------------------------------------------------------------------

cdef inline void encode_neuron(const floating* x, const int32_t* s, Py_ssize_t S,
                               Py_ssize_t W, uint64_t* o) noexcept nogil:
    """Pattern of dense row x for one neuron with synapses s: o[w] <- word w. Bit i =
    x[s[i]] > x[s[i + 1]], the last synapse paired with the first (vector compares on the
    x86 paths, this loop on the portable one)."""
    cdef Py_ssize_t w, i, lo, hi
    cdef uint64_t word
    cdef floating cur, nxt, first
    if floating is double:
        if encode_f64(x, s, S, W, o):
            return
    else:
        if encode_f32(x, s, S, W, o):
            return
    first = x[s[0]]
    cur = first
    for w in range(W):
        lo = 64 * w
        hi = min(lo + 64, S - 1)  # bits lo .. hi-1 compare with the next synapse
        word = 0
        for i in range(lo, hi):
            nxt = x[s[i + 1]]
            word |= (<uint64_t> (cur > nxt)) << (i - lo)
            cur = nxt
        o[w] = word
    o[(S - 1) // 64] |= (<uint64_t> (cur > first)) << ((S - 1) % 64)


cdef inline void encode_rows(const floating* X, Py_ssize_t n_cols, const int64_t* rows,
                             Py_ssize_t n_rows, const int32_t* syn, Py_ssize_t n_neurons,
                             Py_ssize_t S, Py_ssize_t W, uint64_t* out,
                             Py_ssize_t neuron_stride, bint stream,
                             const uint8_t* wiring) noexcept nogil:
    """Patterns of dense rows rows[0 .. n_rows-1] of X (row i = X + rows[i] * n_cols; rows
    NULL: the first n_rows rows) for every neuron: pattern (n, i) at out + n * neuron_stride
    + i * W. Neurons are taken in blocks whose synapses (SYNAPSE_BLOCK_BYTES) stay in L1
    while every row uses them: the whole wiring (4 MiB at 1024 x 1024) would otherwise be
    streamed once per row. ``stream``: the patterns are not read again soon (a model's
    memory), so the AVX-512 rank encoding writes them past the caches. ``wiring``: the
    permuted encoding's byte wiring (permuted_wiring_new) or NULL."""
    cdef Py_ssize_t n0 = 0, n, i, block = max(1, SYNAPSE_BLOCK_BYTES // (4 * S))
    cdef const floating* x
    if floating is double:
        if encode_rows_f64(X, n_cols, rows, n_rows, syn, n_neurons, S, W, out, neuron_stride,
                           stream, wiring):
            return
    else:
        if encode_rows_f32(X, n_cols, rows, n_rows, syn, n_neurons, S, W, out, neuron_stride,
                           stream, wiring):
            return
    while n0 < n_neurons:
        for i in range(n_rows):
            x = X + (rows[i] if rows != NULL else i) * n_cols
            for n in range(n0, min(n0 + block, n_neurons)):
                encode_neuron(x, syn + n * S, S, W, out + n * neuron_stride + i * W)
        n0 += block


cdef inline void encode_csr_row(const floating* data, const index_t* indices, Py_ssize_t nnz,
                                floating* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                const int32_t* wcell, Py_ssize_t n_neurons, Py_ssize_t S,
                                Py_ssize_t W, uint64_t* out,
                                Py_ssize_t neuron_stride) noexcept nogil:
    """encode_neuron's bits for one CSR row and every neuron, visiting only the synapses
    wired to its stored entries: a Minchinton cell comparing two zeros is 0, so only a cell
    with a synapse on a stored entry can be 1. The row is scattered once into the all-zero
    buffer xbuf (cleared after), bits are set in the per-thread rowbuf (n_neurons x W) and
    copied to out."""
    cdef Py_ssize_t p, e, i, h, n
    cdef const int32_t* cell
    cdef uint64_t* o
    cdef floating xi
    memset(rowbuf, 0, n_neurons * W * sizeof(uint64_t))
    for p in range(nnz):
        xbuf[indices[p]] = data[p]
    for p in range(nnz):
        xi = data[p]
        for e in range(wptr[indices[p]], wptr[indices[p] + 1]):
            cell = wcell + 4 * e        # neuron, synapse i, inputs of synapses i-1 and i+1
            o = rowbuf + cell[0] * W
            i = cell[1]
            if xi > xbuf[cell[3]]:      # cell i: synapse i against the next
                o[i >> 6] |= (<uint64_t> 1) << (i & 63)
            h = i - 1 if i > 0 else S - 1
            if xbuf[cell[2]] > xi:      # cell h: the previous synapse against i
                o[h >> 6] |= (<uint64_t> 1) << (h & 63)
    for p in range(nnz):
        xbuf[indices[p]] = 0
    for n in range(n_neurons):
        memcpy(out + n * neuron_stride, rowbuf + n * W, W * sizeof(uint64_t))


def wiring_index(const int32_t[:, ::1] synapses, Py_ssize_t n_features):
    """The synapses grouped by input position (counting sort): those wired to input f are
    cell[e] for e in ptr[f] .. ptr[f + 1] - 1, in (neuron, synapse) order, where cell[e] =
    (neuron n, synapse i, input of synapse i - 1, input of synapse i + 1), cyclically."""
    cdef Py_ssize_t N = synapses.shape[0], S = synapses.shape[1], n, i, f
    ptr_arr = np.zeros(n_features + 1, dtype=np.int64)
    cell_arr = np.empty((N * S, 4), dtype=np.int32)
    cdef int64_t[::1] ptr = ptr_arr
    cdef int32_t[:, ::1] cell = cell_arr
    with nogil:
        for n in range(N):
            for i in range(S):
                ptr[synapses[n, i] + 1] += 1
        for f in range(n_features):
            ptr[f + 1] += ptr[f]
        for n in range(N):          # ptr[f] serves as the fill cursor of input f ...
            for i in range(S):
                f = synapses[n, i]
                cell[ptr[f], 0] = <int32_t> n
                cell[ptr[f], 1] = <int32_t> i
                cell[ptr[f], 2] = synapses[n, i - 1 if i > 0 else S - 1]
                cell[ptr[f], 3] = synapses[n, i + 1 if i + 1 < S else 0]
                ptr[f] += 1
        for f in range(n_features, 0, -1):   # ... and is shifted back afterwards
            ptr[f] = ptr[f - 1]
        ptr[0] = 0
    return ptr_arr, cell_arr


def encode_dense(const floating[:, ::1] X, const int64_t[::1] rows,
                 const int32_t[:, ::1] synapses, uint64_t[:, :, ::1] out):
    """out[n, i] <- pattern of row rows[i] of X for neuron n (out: n_neurons, len(rows), W);
    rows in chunks of ROW_CHUNK, one chunk per task (the permuted encoding's byte wiring
    made once for all)."""
    cdef Py_ssize_t k, n_rows = rows.shape[0], S = synapses.shape[1], W = out.shape[2]
    cdef Py_ssize_t n_neurons = synapses.shape[0]
    cdef Py_ssize_t n_chunks = (n_rows + ROW_CHUNK - 1) // ROW_CHUNK
    cdef uint8_t* wiring
    if n_rows == 0:
        return
    with nogil:
        wiring = permuted_wiring_new(&synapses[0, 0], n_neurons, S, W, X.shape[1])
        for k in prange(n_chunks, schedule="static"):
            encode_rows(&X[0, 0], X.shape[1], &rows[k * ROW_CHUNK],
                        min(ROW_CHUNK, n_rows - k * ROW_CHUNK), &synapses[0, 0], n_neurons,
                        S, W, &out[0, k * ROW_CHUNK, 0], n_rows * W, True, wiring)
        free(wiring)


def encode_csr(const floating[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, Py_ssize_t n_features, const int64_t[::1] rows,
               const int32_t[:, ::1] synapses, const int64_t[::1] wptr,
               const int32_t[:, ::1] wcell, uint64_t[:, :, ::1] out):
    """As encode_dense for a canonical CSR matrix, with the wiring_index of synapses; each
    row is scattered once into a per-thread dense buffer of n_features values."""
    cdef Py_ssize_t i, r, lo, n_rows = rows.shape[0], S = synapses.shape[1], W = out.shape[2]
    cdef Py_ssize_t n_neurons = synapses.shape[0]
    cdef floating* xbuf = NULL
    cdef uint64_t* rowbuf = NULL
    cdef int failed[1]
    failed[0] = 0
    if n_rows == 0:
        return
    with nogil, parallel():
        xbuf = <floating*> calloc(n_features, sizeof(floating))
        rowbuf = <uint64_t*> malloc(n_neurons * W * sizeof(uint64_t))
        if xbuf == NULL or rowbuf == NULL:
            failed[0] = 1
        for i in prange(n_rows, schedule="static"):
            if xbuf != NULL and rowbuf != NULL:
                r = rows[i]
                lo = indptr[r]
                encode_csr_row(&data[0] + lo, &indices[0] + lo, indptr[r + 1] - lo, xbuf,
                               rowbuf, &wptr[0], &wcell[0, 0], n_neurons, S, W,
                               &out[0, i, 0], n_rows * W)
        free(xbuf)
        free(rowbuf)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the encoding buffer")


# ---- search and vote --------------------------------------------------------------------

cdef struct Work:
    # per-thread scratch; allocated inside the parallel block, so thread-private
    uint64_t* codes    # (n_neurons, B, W) patterns of a batch (document batches only)
    int32_t* ties      # (B, n_train) stored entries at the minimum, for the current neuron
    Track* track       # (B,) minimum distance and number of entries at it
    double* part       # (B, q) votes of the current chunk of neurons (document batches)
    double* tot        # (B,) labels output by it (VGRAM-COR normaliser)
    double* total      # (B,) labels output by all neurons so far
    int32_t* cnt       # (q,) tied documents carrying each label, zero between uses
    int32_t* touched   # (q,) labels with cnt > 0
    void* xbuf         # (n_features,) zeroed dense row (CSR input only)
    uint64_t* rowbuf   # (n_neurons, W) patterns of one CSR row
    Sliced* sliced     # bit-sliced search scratch (x86 vector paths)


cdef Work* work_new(Py_ssize_t n_neurons, Py_ssize_t B, Py_ssize_t W, Py_ssize_t n_train,
                    Py_ssize_t q, Py_ssize_t xbuf_bytes, bint batch_codes) noexcept nogil:
    """Scratch for batches of B test documents; codes, part and tot only with batch_codes."""
    cdef Work* w = <Work*> calloc(1, sizeof(Work))
    cdef Py_ssize_t n_codes = n_neurons * B * W if batch_codes else 1
    if w == NULL:
        return NULL
    w.codes = <uint64_t*> malloc(n_codes * sizeof(uint64_t))
    w.ties = <int32_t*> malloc(B * n_train * sizeof(int32_t))
    w.track = <Track*> malloc(B * sizeof(Track))
    w.part = <double*> malloc((B * q if batch_codes else 1) * sizeof(double))
    w.tot = <double*> malloc(B * sizeof(double))
    w.total = <double*> malloc(B * sizeof(double))
    w.cnt = <int32_t*> calloc(q, sizeof(int32_t))
    w.touched = <int32_t*> malloc(q * sizeof(int32_t))
    w.xbuf = calloc(xbuf_bytes + 1, 1)
    w.rowbuf = <uint64_t*> malloc(n_neurons * W * sizeof(uint64_t))
    w.sliced = sliced_new(W, B)
    if w.codes == NULL or w.ties == NULL or w.track == NULL or w.part == NULL \
            or w.tot == NULL or w.total == NULL or w.cnt == NULL or w.touched == NULL \
            or w.xbuf == NULL or w.rowbuf == NULL or w.sliced == NULL:
        work_free(w)
        return NULL
    return w


cdef void work_free(Work* w) noexcept nogil:
    if w == NULL:
        return
    free(w.codes)
    free(w.ties)
    free(w.track)
    free(w.part)
    free(w.tot)
    free(w.total)
    free(w.cnt)
    free(w.touched)
    free(w.xbuf)
    free(w.rowbuf)
    sliced_free(w.sliced)
    free(w)


cdef void distances(const uint64_t* M, Py_ssize_t n_train, const uint64_t* C, Py_ssize_t B,
                    Py_ssize_t W, Work* w) noexcept nogil:
    """Hamming distances of the B patterns C to the n_train patterns M of one neuron; keeps
    each document's minimum in w.track and the entries at it in w.ties. The bit-sliced
    search where it applies (x86 vector paths, 4 to 32 words, a multiple of 4, batches of
    SLICED_MIN_BATCH or more); otherwise the scan, the train patterns taken in tiles of
    TILE_BYTES, which stay in L1 while every test pattern of the batch is compared with
    them."""
    cdef Py_ssize_t b, t0, t1, tile = max(1, TILE_BYTES // (8 * W))
    for b in range(B):
        w.track[b].m = 0xFFFFFFFF
        w.track[b].k = 0
    if B >= SLICED_MIN_BATCH and sliced_search(w.sliced, M, n_train, C, B, W, w.ties,
                                               w.track):
        return
    t0 = 0
    while t0 < n_train:
        t1 = min(t0 + tile, n_train)
        for b in range(B):
            scan(M, t0, t1, C + b * W, W, w.ties + b * n_train, &w.track[b])
        t0 = t1


cdef struct Summary:
    # one neuron's outcome per (test document, neuron), element doc * n_neurons + neuron,
    # for merging searches of parts of the memory (fastrank.dask); NULL dist: not wanted
    uint32_t* dist     # minimum Hamming distance (UINT32_MAX: no stored entry)
    int64_t* ndocs     # ALL: stored documents at it
    int32_t* counts    # ALL: (..., q) of them carrying each label
    uint64_t* key      # RANDOM: key of the chosen entry
    int64_t* doc       # RANDOM: its stored document (global index)
    int32_t* label     # RANDOM, VGRAM: its label


cdef inline uint64_t entry_key(uint64_t state, uint64_t entry) noexcept nogil:
    """Key of stored entry number ``entry`` for one (test document, neuron) with generator
    state ``state``: output entry + 1 of the splitmix64 sequence from that state. Distinct
    entries get distinct keys (splitmix64 mixes its counter, state + (entry + 1) * gamma mod
    2^64, by a bijection), so the entry with the smallest key is unique."""
    cdef uint64_t s = state + entry * <uint64_t> 0x9E3779B97F4A7C15
    return splitmix64(&s)


cdef uint64_t pick_entry(const int32_t* ties, int64_t k, const int64_t* lab_ptr,
                         const int32_t* lab_idx, int model, uint64_t state, int64_t entry0,
                         Py_ssize_t q, Py_ssize_t* best_t, Py_ssize_t* best_p) noexcept nogil:
    """RANDOM: among the entries at the minimum (VGRAM: (document, label) pairs; COR:
    documents), the one with the smallest entry_key; entries are numbered by the global
    stored-document index g = entry0 + t (VGRAM: g * q + label). Returns its key; sets the
    document t and (VGRAM) the position p of its label in lab_idx."""
    cdef uint64_t best = 0xFFFFFFFFFFFFFFFF, key
    cdef Py_ssize_t i, t, p
    for i in range(k):
        t = ties[i]
        if model == VGRAM:
            for p in range(lab_ptr[t], lab_ptr[t + 1]):
                key = entry_key(state, <uint64_t> (entry0 + t) * <uint64_t> q
                                + <uint64_t> lab_idx[p])
                if key <= best:
                    best, best_t[0], best_p[0] = key, t, p
        else:
            key = entry_key(state, <uint64_t> (entry0 + t))
            if key <= best:
                best, best_t[0] = key, t
    return best


cdef void vote(Work* w, Py_ssize_t b, Py_ssize_t n_train, const int64_t* lab_ptr,
               const int32_t* lab_idx, int model, int policy, uint64_t state,
               Py_ssize_t q, double* row, double* tot) noexcept nogil:
    """Add one neuron's output for batch document b to its vote row and (VGRAM-COR) to the
    labels output, tot. The stored documents at the minimum are ties[0 .. k-1], ascending."""
    cdef const int32_t* ties = w.ties + b * n_train
    cdef int64_t k = w.track[b].k
    cdef Py_ssize_t i, t = 0, p = 0, c, n_touched = 0
    cdef int64_t total = 0, lsum = 0
    if policy == RANDOM:
        pick_entry(ties, k, lab_ptr, lab_idx, model, state, 0, q, &t, &p)
        if model == VGRAM:      # the chosen (document, label) entry's label
            row[lab_idx[p]] += 1.0
        else:                   # the chosen document's whole label set
            for p in range(lab_ptr[t], lab_ptr[t + 1]):
                row[lab_idx[p]] += 1.0
            tot[0] += <double> (lab_ptr[t + 1] - lab_ptr[t])
        return
    # ALL: count, per label, the tied documents carrying it; add count / normaliser
    for i in range(k):
        t = ties[i]
        for p in range(lab_ptr[t], lab_ptr[t + 1]):
            c = lab_idx[p]
            if w.cnt[c] == 0:
                w.touched[n_touched] = <int32_t> c
                n_touched += 1
            w.cnt[c] += 1
        lsum += lab_ptr[t + 1] - lab_ptr[t]
    # VGRAM: every (document, label) entry gets 1/lsum; COR: every document 1/k
    total = lsum if model == VGRAM else k
    for p in range(n_touched):
        c = w.touched[p]
        row[c] += (<double> w.cnt[c]) / (<double> total)
        w.cnt[c] = 0
    if model == VGRAM_COR:
        tot[0] += (<double> lsum) / (<double> total)


cdef void summarize(Work* w, Py_ssize_t b, Py_ssize_t n_train, const int64_t* lab_ptr,
                    const int32_t* lab_idx, int model, int policy, uint64_t state,
                    int64_t entry0, Py_ssize_t q, Summary* out, Py_ssize_t e) noexcept nogil:
    """One neuron's outcome for batch document b into element e of the summary: what vote
    needs, from this part of the memory, to vote once every part's outcome is known."""
    cdef const int32_t* ties = w.ties + b * n_train
    cdef int64_t k = w.track[b].k
    cdef Py_ssize_t i, t = 0, p = 0
    cdef int32_t* counts
    out.dist[e] = w.track[b].m
    if policy == RANDOM:
        out.key[e] = pick_entry(ties, k, lab_ptr, lab_idx, model, state, entry0, q, &t, &p)
        out.doc[e] = entry0 + t
        out.label[e] = lab_idx[p] if model == VGRAM else -1
        return
    out.ndocs[e] = k
    counts = out.counts + e * q
    for i in range(k):
        t = ties[i]
        for p in range(lab_ptr[t], lab_ptr[t + 1]):
            counts[lab_idx[p]] += 1


cdef struct Search:
    # what every task of one prediction shares
    const uint64_t* mem
    Py_ssize_t n_neurons, n_train, W, q
    const int64_t* lab_ptr
    const int32_t* lab_idx
    int model, policy
    uint64_t seed
    int64_t row0, entry0
    Summary summary
    double* out


cdef void search_chunk(Work* w, const Search* s, const uint64_t* codes, Py_ssize_t B,
                       Py_ssize_t doc0, Py_ssize_t n0, Py_ssize_t n1, double* part,
                       double* tot) noexcept nogil:
    """Neurons n0 .. n1-1 for test documents doc0 .. doc0+B-1 (neuron n's patterns of them
    at codes + (n - n0) * B * W): their votes added in neuron order into part (B, q) and
    tot (B), both zeroed here; or (summary.dist not NULL) their outcomes into the summary.
    Test document i is row row0 + i of the whole query set for the random keys."""
    cdef Py_ssize_t n, b, q = s.q
    cdef uint64_t state
    if s.summary.dist == NULL:
        memset(part, 0, B * q * sizeof(double))
        memset(tot, 0, B * sizeof(double))
    for n in range(n0, n1):
        distances(s.mem + n * s.n_train * s.W, s.n_train, codes + (n - n0) * B * s.W, B,
                  s.W, w)
        for b in range(B):
            state = row_state(s.seed, (s.row0 + doc0 + b) * s.n_neurons + n)
            if s.summary.dist != NULL:
                summarize(w, b, s.n_train, s.lab_ptr, s.lab_idx, s.model, s.policy, state,
                          s.entry0, q, <Summary*> &s.summary, (doc0 + b) * s.n_neurons + n)
            else:
                vote(w, b, s.n_train, s.lab_ptr, s.lab_idx, s.model, s.policy, state, q,
                     part + b * q, tot + b)


cdef void add_chunk(const Search* s, Py_ssize_t B, Py_ssize_t doc0, const double* part,
                    const double* tot, double* total) noexcept nogil:
    """Add a chunk's votes (B, q) and labels output (B) to the rows of documents doc0 ..
    doc0+B-1 and their totals."""
    cdef Py_ssize_t b, c, q = s.q
    cdef double* row
    for b in range(B):
        row = s.out + (doc0 + b) * q
        for c in range(q):
            row[c] += part[b * q + c]
        total[b] += tot[b]


cdef void normalise(const Search* s, Py_ssize_t B, Py_ssize_t doc0,
                    const double* total) noexcept nogil:
    """Votes to beliefs: VGRAM divides by the number of neurons, VGRAM-COR by the labels
    output (a row without any stays zero)."""
    cdef Py_ssize_t b, c, q = s.q
    cdef double* row
    for b in range(B):
        row = s.out + (doc0 + b) * q
        if s.model == VGRAM:
            for c in range(q):
                row[c] = row[c] / s.n_neurons
        elif total[b] > 0:
            for c in range(q):
                row[c] = row[c] / total[b]


cdef void search_batch(Work* w, const Search* s, Py_ssize_t B, Py_ssize_t doc0) noexcept nogil:
    """Beliefs of test documents doc0 .. doc0+B-1 (their patterns in w.codes, neuron-major)
    into out, or their neurons' outcomes into the summary: chunk after chunk of
    NEURON_CHUNK neurons, each chunk's votes added to the rows in turn (as
    merge_few adds them)."""
    cdef Py_ssize_t n0, n1, b
    for b in range(B):
        w.total[b] = 0.0
    n0 = 0
    while n0 < s.n_neurons:
        n1 = min(n0 + NEURON_CHUNK, s.n_neurons)
        search_chunk(w, s, w.codes + n0 * B * s.W, B, doc0, n0, n1, w.part, w.tot)
        if s.summary.dist == NULL:
            add_chunk(s, B, doc0, w.part, w.tot, w.total)
        n0 = n1
    if s.summary.dist == NULL:
        normalise(s, B, doc0, w.total)


def new_summary(Py_ssize_t n_docs, Py_ssize_t n_neurons, Py_ssize_t q, int policy):
    """Arrays for each (test document, neuron)'s outcome of a search (see Summary): dist,
    and ndocs + counts (policy ALL) or key + doc + label (RANDOM); counts zeroed."""
    out = {"dist": np.empty((n_docs, n_neurons), dtype=np.uint32)}
    if policy == ALL:
        out["ndocs"] = np.empty((n_docs, n_neurons), dtype=np.int64)
        out["counts"] = np.zeros((n_docs, n_neurons, q), dtype=np.int32)
    else:
        out["key"] = np.empty((n_docs, n_neurons), dtype=np.uint64)
        out["doc"] = np.empty((n_docs, n_neurons), dtype=np.int64)
        out["label"] = np.empty((n_docs, n_neurons), dtype=np.int32)
    return out


cdef Summary summary_of(dict arrays, Py_ssize_t n_docs, Py_ssize_t n_neurons, Py_ssize_t q,
                        int policy) except *:
    """Pointers into the arrays of new_summary (all NULL for None), shapes checked."""
    cdef Summary sm
    cdef uint32_t[:, ::1] dist
    cdef int64_t[:, ::1] ndocs, doc
    cdef int32_t[:, :, ::1] counts
    cdef uint64_t[:, ::1] key
    cdef int32_t[:, ::1] label
    memset(&sm, 0, sizeof(Summary))
    if arrays is None or n_docs == 0:
        return sm
    dist = arrays["dist"]
    if dist.shape[0] != n_docs or dist.shape[1] != n_neurons:
        raise ValueError("summary arrays do not match the query rows and neurons")
    sm.dist = &dist[0, 0]
    if policy == ALL:
        ndocs = arrays["ndocs"]
        counts = arrays["counts"]
        if counts.shape[2] != q:
            raise ValueError("summary counts do not match the labels")
        sm.ndocs = &ndocs[0, 0]
        sm.counts = &counts[0, 0, 0]
    else:
        key = arrays["key"]
        doc = arrays["doc"]
        label = arrays["label"]
        sm.key = &key[0, 0]
        sm.doc = &doc[0, 0]
        sm.label = &label[0, 0]
    return sm


cdef Search search_of(const uint64_t[:, :, ::1] mem, const int64_t[::1] lab_ptr,
                      const int32_t[::1] lab_idx, int model, int policy, uint64_t seed,
                      double[:, ::1] out, int64_t row0, int64_t entry0, Py_ssize_t n_docs,
                      summary) except *:
    cdef Search s
    s.mem = &mem[0, 0, 0]
    s.n_neurons, s.n_train, s.W = mem.shape[0], mem.shape[1], mem.shape[2]
    s.q = out.shape[1]
    s.lab_ptr = &lab_ptr[0]
    s.lab_idx = &lab_idx[0]
    s.model, s.policy, s.seed, s.row0, s.entry0 = model, policy, seed, row0, entry0
    s.summary = summary_of(summary, n_docs, s.n_neurons, s.q, policy)
    s.out = &out[0, 0] if out.shape[0] > 0 else NULL
    return s


def batch_size(Py_ssize_t n_docs):
    """Test documents per task when the documents are split into batches: up to
    MAX_BATCH, fewer so that every thread gets a task."""
    cdef Py_ssize_t threads = fr_max_threads()
    return max(1, min(MAX_BATCH, (n_docs + threads - 1) // threads))


cdef struct FewDocs:
    # shared scratch of a prediction of at most MAX_BATCH documents, whose neurons are split
    # among the threads
    uint64_t* codes    # (n_neurons, B, W) every neuron's patterns of the documents
    double* parts      # per chunk of NEURON_CHUNK neurons: votes (B, q), labels output (B)
    double* total      # (B,) labels output by all neurons
    Py_ssize_t n_chunks


cdef FewDocs few_new(Py_ssize_t n_neurons, Py_ssize_t B, Py_ssize_t W, Py_ssize_t q) except *:
    cdef FewDocs few
    few.n_chunks = (n_neurons + NEURON_CHUNK - 1) // NEURON_CHUNK
    few.codes = <uint64_t*> malloc(max(1, n_neurons * B * W) * sizeof(uint64_t))
    few.parts = <double*> malloc(max(1, few.n_chunks * B * (q + 1)) * sizeof(double))
    few.total = <double*> malloc(max(1, B) * sizeof(double))
    if few.codes == NULL or few.parts == NULL or few.total == NULL:
        few_free(&few)
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")
    return few


cdef void few_free(FewDocs* few) noexcept nogil:
    free(few.codes)
    free(few.parts)
    free(few.total)


cdef inline void search_few_chunk(Work* w, const Search* s, FewDocs* few, Py_ssize_t B,
                                  Py_ssize_t c) noexcept nogil:
    """Chunk c of the neurons for all B documents (patterns in few.codes), its votes into
    its own part of few.parts."""
    cdef Py_ssize_t n0 = c * NEURON_CHUNK
    cdef double* part = few.parts + c * B * (s.q + 1)
    search_chunk(w, s, few.codes + n0 * B * s.W, B, 0, n0,
                 min(n0 + NEURON_CHUNK, s.n_neurons), part, part + B * s.q)


cdef void merge_few(const Search* s, FewDocs* few, Py_ssize_t B) noexcept nogil:
    """The chunks' votes added to the rows chunk after chunk, then normalised: the sums
    search_batch makes, whichever thread searched a chunk."""
    cdef Py_ssize_t c, b
    cdef double* part
    if s.summary.dist != NULL:
        return
    for b in range(B):
        few.total[b] = 0.0
    for c in range(few.n_chunks):
        part = few.parts + c * B * (s.q + 1)
        add_chunk(s, B, 0, part, part + B * s.q, few.total)
    normalise(s, B, 0, few.total)


def predict_dense(const floating[:, ::1] X, const int32_t[:, ::1] synapses,
                  const uint64_t[:, :, ::1] mem, const int64_t[::1] lab_ptr,
                  const int32_t[::1] lab_idx, int model, int policy, uint64_t seed,
                  double[:, ::1] out, int64_t row0=0, int64_t entry0=0, summary=None):
    """Beliefs of the rows of X into out (n_docs, q), which must be all zeros; or, with
    ``summary`` (from new_summary), each (row, neuron)'s outcome into it (out then only gives
    q: shape (0, q)). Row i of X is test document row0 + i and stored document t is number
    entry0 + t for the random keys (0 and 0 for a whole memory and query set).

    Up to MAX_BATCH rows are one batch whose neurons, in chunks of NEURON_CHUNK, are split
    among the threads (a few documents are a search bound by the memory's bandwidth); more
    rows are split into batches, one per task, each searching every neuron. Each row's
    votes are added chunk after chunk in both cases: the same beliefs."""
    cdef Py_ssize_t n_docs = X.shape[0], q = out.shape[1], n_neurons = mem.shape[0]
    cdef Py_ssize_t n_train = mem.shape[1], W = mem.shape[2], S = synapses.shape[1]
    cdef Py_ssize_t B, n_batches, k, c, n0, doc0, nb
    cdef Work* w = NULL
    cdef Search s = search_of(mem, lab_ptr, lab_idx, model, policy, seed, out, row0, entry0,
                              n_docs, summary)
    cdef FewDocs few
    cdef int failed[1]
    failed[0] = 0
    if n_docs == 0:
        return
    if n_docs <= MAX_BATCH:
        B = n_docs
        few = few_new(n_neurons, B, W, q)
        with nogil, parallel():
            w = work_new(n_neurons, B, W, n_train, q, 0, False)
            if w == NULL:
                failed[0] = 1
            for c in prange(few.n_chunks, schedule="static"):
                n0 = c * NEURON_CHUNK
                encode_rows(&X[0, 0], X.shape[1], NULL, B, &synapses[n0, 0],
                            min(NEURON_CHUNK, n_neurons - n0), S, W, few.codes + n0 * B * W,
                            B * W, False, NULL)
            # every thread must reach the worksharing loop; one without scratch skips its tasks
            for c in prange(few.n_chunks, schedule="dynamic"):
                if w != NULL:
                    search_few_chunk(w, &s, &few, B, c)
            work_free(w)
        if not failed[0]:
            merge_few(&s, &few, B)
        few_free(&few)
    else:
        B = batch_size(n_docs)
        n_batches = (n_docs + B - 1) // B
        with nogil, parallel():
            w = work_new(n_neurons, B, W, n_train, q, 0, True)
            if w == NULL:
                failed[0] = 1
            for k in prange(n_batches, schedule="dynamic"):
                if w != NULL:
                    doc0 = k * B
                    nb = min(B, n_docs - doc0)
                    encode_rows(&X[doc0, 0], X.shape[1], NULL, nb, &synapses[0, 0],
                                n_neurons, S, W, w.codes, nb * W, False, NULL)
                    search_batch(w, &s, nb, doc0)
            work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")


def predict_csr(const floating[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, Py_ssize_t n_features,
                const int64_t[::1] wptr, const int32_t[:, ::1] wcell,
                const int32_t[:, ::1] synapses, const uint64_t[:, :, ::1] mem,
                const int64_t[::1] lab_ptr, const int32_t[::1] lab_idx, int model,
                int policy, uint64_t seed, double[:, ::1] out, int64_t row0=0,
                int64_t entry0=0, summary=None):
    """As predict_dense for a canonical CSR matrix, with the wiring_index of synapses (each
    row scattered once)."""
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1, q = out.shape[1], n_neurons = mem.shape[0]
    cdef Py_ssize_t n_train = mem.shape[1], W = mem.shape[2], S = synapses.shape[1]
    cdef Py_ssize_t B, n_batches, k, c, i, doc0, nb, lo
    cdef Work* w = NULL
    cdef Search s = search_of(mem, lab_ptr, lab_idx, model, policy, seed, out, row0, entry0,
                              n_docs, summary)
    cdef FewDocs few
    cdef int failed[1]
    failed[0] = 0
    if n_docs == 0:
        return
    if n_docs <= MAX_BATCH:
        B = n_docs
        few = few_new(n_neurons, B, W, q)
        with nogil, parallel():
            w = work_new(n_neurons, B, W, n_train, q, n_features * sizeof(floating), False)
            if w == NULL:
                failed[0] = 1
            for i in prange(B, schedule="static"):
                if w != NULL:
                    lo = indptr[i]
                    encode_csr_row(&data[0] + lo, &indices[0] + lo, indptr[i + 1] - lo,
                                   <floating*> w.xbuf, w.rowbuf, &wptr[0], &wcell[0, 0],
                                   n_neurons, S, W, few.codes + i * W, B * W)
            for c in prange(few.n_chunks, schedule="dynamic"):
                if w != NULL:
                    search_few_chunk(w, &s, &few, B, c)
            work_free(w)
        if not failed[0]:
            merge_few(&s, &few, B)
        few_free(&few)
    else:
        B = batch_size(n_docs)
        n_batches = (n_docs + B - 1) // B
        with nogil, parallel():
            w = work_new(n_neurons, B, W, n_train, q, n_features * sizeof(floating), True)
            if w == NULL:
                failed[0] = 1
            for k in prange(n_batches, schedule="dynamic"):
                if w != NULL:
                    doc0 = k * B
                    nb = min(B, n_docs - doc0)
                    for i in range(nb):
                        lo = indptr[doc0 + i]
                        encode_csr_row(&data[0] + lo, &indices[0] + lo,
                                       indptr[doc0 + i + 1] - lo, <floating*> w.xbuf,
                                       w.rowbuf, &wptr[0], &wcell[0, 0], n_neurons, S, W,
                                       w.codes + i * W, nb * W)
                    search_batch(w, &s, nb, doc0)
            work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")
