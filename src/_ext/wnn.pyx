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

Encoding
--------
A dense row is encoded cell by cell. A CSR row is scattered once into a per-thread dense
buffer and only the cells with a synapse on one of its stored entries are evaluated (found
through ``wiring_index``, the synapses grouped by input position): a cell comparing two
zeros is 0. Both give identical bits.

Search
------
Test documents are processed in batches, one batch per task (OpenMP, dynamic schedule, GIL
released). A task encodes its batch, then for every neuron finds, for each document of the
batch, the minimum Hamming distance to the neuron's memory and the stored documents at it,
and votes from that list. Two searches give the same minimum and the same entries in the
same (ascending) order:

* bit-sliced (AVX2, patterns of 4 to 32 words, a multiple of 4, batches of at least
  SLICED_MIN_BATCH test documents; ``fr_tile_*`` below): each tile of 256 stored patterns is
  transposed once per batch into bit planes, and a test pattern's distances to all 256
  entries are computed together with carry-save adders over the planes of its set (or
  clear) bits only -- the work follows the number of set bits, so the sparse patterns of
  text cost little;
* scan (every other case, and CPUs without AVX2): POPCNT of XORed words, 16 KiB tiles of
  stored patterns held in L1 while every test pattern of the batch, its words in
  registers, is compared with them.

Each document's output row is written by exactly one task, neurons in ascending order, and
every random choice takes the tied entry with the smallest key, a function of (seed,
document, neuron, entry number) alone (entry_key) -- so results depend neither on the thread
count nor on the batch size, nor on how the memory is split: a search of part of the memory
can report each neuron's outcome (Summary: the minimum distance and, per policy, the label
counts of the tied documents or the chosen entry and its key), and merging the parts'
outcomes gives the whole memory's votes (fastrank.wnn._merge_outcomes).
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from _tiesort cimport floating, index_t, row_state, splitmix64

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    /* one POPCNT instruction when built with -mpopcnt, a portable libgcc routine otherwise */
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
    /* running minimum over one test pattern's distances: the minimum so far, and the
       entries at it (ties[0 .. k-1], ascending) */
    typedef struct { uint32_t m; int64_t k; } fr_track;

    /* Distances of test pattern q (WW words) to train patterns t0 .. t1-1 of M, updating
       the running minimum r and its entry list ties. */
    #define FR_SCAN_LOOP(WW)                                                        \
        int64_t t; int64_t j;                                                       \
        uint32_t m = r->m; int64_t k = r->k;                                        \
        for (t = t0; t < t1; t++) {                                                 \
            const uint64_t* p = M + t * (WW);                                       \
            uint32_t d = 0;                                                         \
            for (j = 0; j < (WW); j++) d += FR_POPCOUNT64(p[j] ^ q[j]);             \
            if (d <= m) {                                                           \
                if (d < m) { m = d; k = 0; }                                        \
                ties[k++] = (int32_t) t;                                            \
            }                                                                       \
        }                                                                           \
        r->m = m; r->k = k;
    /* Fixed widths: the test words are copied to locals, which the compiler keeps in
       registers once the fixed-length loops are unrolled. */
    #define FR_SCAN_FIXED(WW)                                                       \
        static void fr_scan_##WW(const uint64_t* M, int64_t t0, int64_t t1,         \
                                 const uint64_t* c, int32_t* ties, fr_track* r)     \
        { uint64_t q[WW]; int i; for (i = 0; i < (WW); i++) q[i] = c[i];            \
          { FR_SCAN_LOOP(WW) } }
    FR_SCAN_FIXED(1)
    FR_SCAN_FIXED(2)
    FR_SCAN_FIXED(4)
    FR_SCAN_FIXED(8)
    FR_SCAN_FIXED(16)
    FR_SCAN_FIXED(32)

    /* AVX2 paths (x86 with GCC/clang, chosen at run time when the CPU has AVX2): the dense
       encoder's vector compare (below) and, for patterns of 4 to 32 words, a multiple of 4,
       the bit-sliced search. A tile of FR_TILE = 256 stored patterns is transposed once
       into bit planes -- plane i is a 256-bit vector whose bit e is bit i of entry t0 + e
       -- shared by every test pattern of the batch. For a test
       pattern q let S be its set bits, or its clear bits when more than half are set; the
       counts c_e = |{i in S : bit e of plane i}| of all 256 entries are summed at once in
       bit-sliced counters (a carry-save adder tree: a few logic operations per plane), and
       d_e = |q| + |m_e| - 2 c_e for set bits, |q| - |m_e| + 2 c_e for clear bits, with the
       sizes |m_e| counted the same way when the tile is transposed. The minimum and the set
       of entries at it come from an MSB-first search over the bit-sliced values; the tied
       entries are read off that set in ascending order. The work per test pattern and tile
       is proportional to |S| <= 32 W: small for the sparse patterns of text. */
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #include <immintrin.h>
    #define FR_AVX2_PATH 1
    #define FR_TILE 256            /* entries per tile = bits per plane */
    #define FR_MAX_WORDS 32        /* widest pattern: 2048 bits */
    #define FR_COUNT_BITS 12       /* bit-sliced counters hold counts <= 2048 (fr_count_planes
                                      zeroes C[4 .. 11] by name) */

    typedef struct {               /* a transposed tile */
        int64_t t0;                /* its first entry */
        __m256i valid;             /* bit e set for the entries present (a last tile is short) */
        __m256i size[FR_COUNT_BITS];   /* bit slices of the entries' sizes |m_e| */
        int size_bits;             /* bits of the largest size */
        __m256i* plane;            /* (64 W) planes */
    } fr_tile;

    typedef struct {               /* a test pattern's planes */
        int32_t n, setbits, size;  /* |S|; S = its set bits (1) or clear bits (0); |q| */
        int16_t bit[32 * FR_MAX_WORDS];  /* S, ascending */
    } fr_query;

    static int16_t fr_every_bit[64 * FR_MAX_WORDS];  /* 0, 1, 2, ...: every plane */

    #define FR_CSA(h, l, a, b, c) do {                                              \
        __m256i u_ = _mm256_xor_si256(a, b);                                        \
        h = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u_, c));       \
        l = _mm256_xor_si256(u_, c); } while (0)

    /* Add the 0/1 vector x * 2^b0 to the bit-sliced counters C (ripple carry) */
    __attribute__((target("avx2")))
    static inline void fr_slices_add(__m256i* C, __m256i x, int b0) {
        __m256i carry_out;
        int b;
        for (b = b0; b < FR_COUNT_BITS; b++) {
            carry_out = _mm256_and_si256(C[b], x);
            C[b] = _mm256_xor_si256(C[b], x);
            x = carry_out;
        }
    }

    /* Planes bit[j] .. bit[j + 3] into the running ones and twos; the fours carried out
       into f */
    #define FR_CSA4(f, j) do {                                                      \
        FR_CSA(twos_a, ones, P[bit[j]], P[bit[(j) + 1]], ones);                     \
        FR_CSA(twos_b, ones, P[bit[(j) + 2]], P[bit[(j) + 3]], ones);               \
        FR_CSA(f, twos, twos_a, twos_b, twos); } while (0)

    /* C <- bit slices (C[0] lowest) of, for each of the 256 entries, how many of the planes
       P[bit[0]], ..., P[bit[n-1]] have it: Harley-Seal carry-save tree over 16 planes at a
       time, then one ripple-carry increment per remaining plane. */
    __attribute__((target("avx2")))
    static void fr_count_planes(const __m256i* P, const int16_t* bit, int n, __m256i* C) {
        const __m256i zero = _mm256_setzero_si256();
        __m256i ones = zero, twos = zero, fours = zero, eights = zero;
        __m256i twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
        int i = 0;
        /* C[4 ..] collect the sixteens (C[0 .. 3] are set at the end); written out, as a
           loop GCC makes it a `rep stos`, slow at this size */
        C[4] = zero; C[5] = zero; C[6] = zero; C[7] = zero;
        C[8] = zero; C[9] = zero; C[10] = zero; C[11] = zero;
        for (; i + 16 <= n; i += 16) {
            FR_CSA4(fours_a, i);
            FR_CSA4(fours_b, i + 4);
            FR_CSA(eights_a, fours, fours_a, fours_b, fours);
            FR_CSA4(fours_a, i + 8);
            FR_CSA4(fours_b, i + 12);
            FR_CSA(eights_b, fours, fours_a, fours_b, fours);
            FR_CSA(sixteens, eights, eights_a, eights_b, eights);
            fr_slices_add(C, sixteens, 4);
        }
        C[0] = ones; C[1] = twos; C[2] = fours; C[3] = eights;
        for (; i < n; i++) fr_slices_add(C, P[bit[i]], 0);
    }

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

    /* Transpose entries t0 .. t0 + n - 1 (n <= 256) of M into T: planes, sizes, valid. */
    __attribute__((target("avx2")))
    static void fr_tile_build(const uint64_t* M, int64_t t0, int64_t n, int64_t W,
                              fr_tile* T) {
        __m256i A[4][64] __attribute__((aligned(32)));
        __m256i e0, e1, e2, e3;
        __m256i* out;
        uint64_t valid[4];
        int64_t j0, t, left;
        int g, i, b;
        T->t0 = t0;
        for (j0 = 0; j0 < W; j0 += 4) {
            for (g = 0; g < 4; g++) {       /* entries 64 g .. 64 g + 63, words j0 .. j0 + 3 */
                for (i = 0; i < 64; i++) {
                    t = 64 * g + i;
                    A[g][i] = t < n
                        ? _mm256_loadu_si256((const __m256i*) (M + (t0 + t) * W + j0))
                        : _mm256_setzero_si256();
                }
                FR_TRANSPOSE_STAGE(A[g], 32, 0x00000000FFFFFFFFULL);
                FR_TRANSPOSE_STAGE(A[g], 16, 0x0000FFFF0000FFFFULL);
                FR_TRANSPOSE_STAGE(A[g], 8, 0x00FF00FF00FF00FFULL);
                FR_TRANSPOSE_STAGE(A[g], 4, 0x0F0F0F0F0F0F0F0FULL);
                FR_TRANSPOSE_STAGE(A[g], 2, 0x3333333333333333ULL);
                FR_TRANSPOSE_STAGE(A[g], 1, 0x5555555555555555ULL);
            }
            /* lane l of A[g][i]: bit i of word j0 + l of entries 64 g ..; plane
               64 (j0 + l) + i gathers lane l of A[0][i] .. A[3][i] */
            out = T->plane + 64 * j0;
            for (i = 0; i < 64; i++) {
                e0 = _mm256_unpacklo_epi64(A[0][i], A[1][i]);
                e1 = _mm256_unpackhi_epi64(A[0][i], A[1][i]);
                e2 = _mm256_unpacklo_epi64(A[2][i], A[3][i]);
                e3 = _mm256_unpackhi_epi64(A[2][i], A[3][i]);
                out[i] = _mm256_permute2x128_si256(e0, e2, 0x20);
                out[64 + i] = _mm256_permute2x128_si256(e1, e3, 0x20);
                out[128 + i] = _mm256_permute2x128_si256(e0, e2, 0x31);
                out[192 + i] = _mm256_permute2x128_si256(e1, e3, 0x31);
            }
        }
        fr_count_planes(T->plane, fr_every_bit, (int) (64 * W), T->size);
        for (g = 0; g < 4; g++) {
            left = n - 64 * g;
            valid[g] = left >= 64 ? ~0ULL : left <= 0 ? 0 : (1ULL << left) - 1;
        }
        T->valid = _mm256_loadu_si256((const __m256i*) valid);
        for (b = 0, T->size_bits = 0; b < FR_COUNT_BITS; b++)
            if (!_mm256_testz_si256(T->size[b], T->size[b])) T->size_bits = b + 1;
    }

    static void fr_query_init(const uint64_t* c, int64_t W, fr_query* Q) {
        int64_t j;
        uint64_t v;
        Q->size = 0;
        for (j = 0; j < W; j++) Q->size += (int32_t) FR_POPCOUNT64(c[j]);
        Q->setbits = Q->size <= 32 * W;
        Q->n = 0;
        for (j = 0; j < W; j++)
            for (v = Q->setbits ? c[j] : ~c[j]; v; v &= v - 1)
                Q->bit[Q->n++] = (int16_t) (64 * j + FR_CTZ64(v));
    }

    /* Distances of Q's pattern to tile T's entries, updating the running minimum r and
       its entry list ties (as fr_scan over the tile would). */
    __attribute__((target("avx2")))
    static void fr_tile_scan(const fr_tile* T, const fr_query* Q, int32_t* ties,
                             fr_track* r) {
        const __m256i zero = _mm256_setzero_si256(), all = _mm256_set1_epi32(-1);
        __m256i C[FR_COUNT_BITS], G[FR_COUNT_BITS + 2];
        __m256i carry = all, cand = T->valid, x, not_y, u, low;
        uint64_t lanes[4], v;
        unsigned gmin = 0;
        uint32_t d, m = r->m;
        int64_t k = r->k;
        int b, bits, g;
        fr_count_planes(T->plane, Q->bit, Q->n, C);
        bits = 33 - __builtin_clz((unsigned) Q->n | 1);          /* bits of 2 |S| */
        bits = (T->size_bits > bits ? T->size_bits : bits) + 1;  /* and a sign bit */
        /* G <- X - Y = X + ~Y + 1 in `bits`-bit two's complement, where (X, Y) = (|m|, 2c)
           for set bits and (2c, |m|) for clear bits; d = |q| + X - Y */
        for (b = 0; b < bits; b++) {
            __m256i sz = b < FR_COUNT_BITS ? T->size[b] : zero;
            __m256i c2 = b >= 1 && b - 1 < FR_COUNT_BITS ? C[b - 1] : zero;
            x = Q->setbits ? sz : c2;
            not_y = _mm256_xor_si256(Q->setbits ? c2 : sz, all);
            u = _mm256_xor_si256(x, not_y);
            G[b] = _mm256_xor_si256(u, carry);
            carry = _mm256_or_si256(_mm256_and_si256(x, not_y), _mm256_and_si256(u, carry));
        }
        G[bits - 1] = _mm256_xor_si256(G[bits - 1], all);  /* + 2^(bits-1): unsigned order */
        for (b = bits - 1; b >= 0; b--) {   /* minimum, MSB first, and the entries at it */
            low = _mm256_andnot_si256(G[b], cand);
            if (!_mm256_testz_si256(low, low)) cand = low;
            else gmin |= 1u << b;
        }
        d = (uint32_t) (Q->size + (int) gmin - (1 << (bits - 1)));
        if (d <= m) {
            if (d < m) { m = d; k = 0; }
            _mm256_storeu_si256((__m256i*) lanes, cand);
            for (g = 0; g < 4; g++)
                for (v = lanes[g]; v; v &= v - 1)
                    ties[k++] = (int32_t) (T->t0 + 64 * g + FR_CTZ64(v));
        }
        r->m = m;
        r->k = k;
    }

    /* Minchinton pattern of one neuron (S synapses s; out: its W = ceil(S / 64) words,
       overwritten) from a dense row, AVX2, any S: the synapses' inputs are copied in blocks
       of FR_ENCODE_BLOCK to a contiguous buffer y (plus the right-hand side of the block's
       last cell), then y[i] > y[i + 1] is compared 4 (double) or 8 (float) cells at a time.
       Bit i = x[s[i]] > x[s[i + 1]], the last synapse paired with the first: the scalar
       loop's comparisons, so its bits. */
    #define FR_ENCODE_BLOCK 256          /* a multiple of 64: a compare never straddles words */
    #define FR_ENCODE_AVX2(NAME, T, LANES, LOADU, CMP, MOVEMASK)                    \
        __attribute__((target("avx2")))                                            \
        static void NAME(const T* x, const int32_t* s, int64_t S, int64_t W,        \
                         uint64_t* out) {                                           \
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
                        word |= (uint64_t) MOVEMASK(CMP(LOADU(y + i), LOADU(y + i + 1), \
                                                        _CMP_GT_OQ)) << (i - lo);   \
                    for (j = i; j < n && j < lo + 64; j++)                          \
                        word |= (uint64_t) (y[j] > y[j + 1]) << (j - lo);           \
                    out[(b0 + lo) >> 6] = word;                                     \
                }                                                                   \
            }                                                                       \
        }
    FR_ENCODE_AVX2(fr_encode_f64_avx2, double, 4, _mm256_loadu_pd, _mm256_cmp_pd,
                   _mm256_movemask_pd)
    FR_ENCODE_AVX2(fr_encode_f32_avx2, float, 8, _mm256_loadu_ps, _mm256_cmp_ps,
                   _mm256_movemask_ps)
    #endif

    static int fr_simd = 0;  /* use the AVX2 path; set at import, and by use_simd */

    static int fr_simd_available(void) {
    #ifdef FR_AVX2_PATH
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? 1 : 0;
    #else
        return 0;
    #endif
    }

    /* Encode one neuron with the AVX2 compare; returns 0 (doing nothing) when it is off */
    static int fr_encode_f64(const double* x, const int32_t* s, int64_t S, int64_t W,
                             uint64_t* out) {
    #ifdef FR_AVX2_PATH
        if (fr_simd) { fr_encode_f64_avx2(x, s, S, W, out); return 1; }
    #endif
        return 0;
    }
    static int fr_encode_f32(const float* x, const int32_t* s, int64_t S, int64_t W,
                             uint64_t* out) {
    #ifdef FR_AVX2_PATH
        if (fr_simd) { fr_encode_f32_avx2(x, s, S, W, out); return 1; }
    #endif
        return 0;
    }

    /* Scratch of the bit-sliced search for W-word patterns and batches of B: one tile and
       its planes (in raw, 32-byte aligned), and B test patterns' bit lists. */
    typedef struct {
        void* raw;
    #ifdef FR_AVX2_PATH
        fr_tile* tile;
        fr_query* query;
    #endif
    } fr_sliced;

    static void fr_sliced_free(fr_sliced* s) {
        if (s == NULL) return;
        free(s->raw);
    #ifdef FR_AVX2_PATH
        free(s->query);
    #endif
        free(s);
    }

    /* NULL only when out of memory; a scratch for widths the path does not take is empty */
    static fr_sliced* fr_sliced_new(int64_t W, int64_t B) {
        fr_sliced* s = (fr_sliced*) calloc(1, sizeof(fr_sliced));
        if (s == NULL) return NULL;
    #ifdef FR_AVX2_PATH
        if (W % 4 == 0 && W <= FR_MAX_WORDS) {
            s->raw = malloc(sizeof(fr_tile) + 64 * W * sizeof(__m256i) + 32);
            s->query = (fr_query*) malloc(B * sizeof(fr_query));
            if (s->raw == NULL || s->query == NULL) {
                fr_sliced_free(s);
                return NULL;
            }
            s->tile = (fr_tile*) (((uintptr_t) s->raw + 31) & ~(uintptr_t) 31);
            s->tile->plane = (__m256i*) (s->tile + 1);
        }
    #endif
        return s;
    }

    /* The B patterns C against the n_train patterns M of one neuron, by the bit-sliced
       search: each pattern's minimum into track[b] and its entries into ties + b * n_train.
       Returns 0, doing nothing, when the path is off or unavailable for this width. */
    static int fr_sliced_search(fr_sliced* s, const uint64_t* M, int64_t n_train,
                                const uint64_t* C, int64_t B, int64_t W, int32_t* ties,
                                fr_track* track) {
    #ifdef FR_AVX2_PATH
        int64_t b, t0;
        if (!fr_simd || s->raw == NULL) return 0;
        for (b = 0; b < B; b++) fr_query_init(C + b * W, W, &s->query[b]);
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
    #ifdef FR_AVX2_PATH
        int i;
        for (i = 0; i < 64 * FR_MAX_WORDS; i++) fr_every_bit[i] = (int16_t) i;
    #endif
        fr_simd = fr_simd_available();
    }

    static void fr_scan(const uint64_t* M, int64_t t0, int64_t t1, const uint64_t* c,
                        int64_t W, int32_t* ties, fr_track* r)
    {
        switch (W) {
        case 1: fr_scan_1(M, t0, t1, c, ties, r); return;
        case 2: fr_scan_2(M, t0, t1, c, ties, r); return;
        case 4: fr_scan_4(M, t0, t1, c, ties, r); return;
        case 8: fr_scan_8(M, t0, t1, c, ties, r); return;
        case 16: fr_scan_16(M, t0, t1, c, ties, r); return;
        case 32: fr_scan_32(M, t0, t1, c, ties, r); return;
        default: { const uint64_t* q = c; FR_SCAN_LOOP(W) }
        }
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
    int fr_simd
    int fr_simd_available() noexcept nogil
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


fr_init()


def simd_available():
    """Whether this CPU and build can use the AVX2 (bit-sliced) search."""
    return bool(fr_simd_available())


def use_simd(bint enable):
    """Select the AVX2 paths (when available): bit-sliced search and the vector compare of
    the dense encoder; or the POPCNT scan and the scalar encoder alone. Returns the previous
    choice. Both give identical results; tests exercise each."""
    global fr_simd
    previous = bool(fr_simd)
    fr_simd = 1 if (enable and fr_simd_available()) else 0
    return previous


# ---- encoding ---------------------------------------------------------------------------

cdef inline void encode_neuron(const floating* x, const int32_t* s, Py_ssize_t S,
                               Py_ssize_t W, uint64_t* o) noexcept nogil:
    """Pattern of dense row x for one neuron with synapses s: o[w] <- word w. Bit i =
    x[s[i]] > x[s[i + 1]], the last synapse paired with the first (AVX2 when selected,
    this loop otherwise)."""
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
                             Py_ssize_t neuron_stride) noexcept nogil:
    """Patterns of dense rows rows[0 .. n_rows-1] of X (row i = X + rows[i] * n_cols; rows
    NULL: the first n_rows rows) for every neuron: pattern (n, i) at out + n * neuron_stride
    + i * W. Neurons are taken in blocks whose synapses (SYNAPSE_BLOCK_BYTES) stay in L1
    while every row uses them: the whole wiring (4 MiB at 1024 x 1024) would otherwise be
    streamed once per row."""
    cdef Py_ssize_t n0 = 0, n, i, block = max(1, SYNAPSE_BLOCK_BYTES // (4 * S))
    cdef const floating* x
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
    rows in chunks of ROW_CHUNK, one chunk per task."""
    cdef Py_ssize_t k, n_rows = rows.shape[0], S = synapses.shape[1], W = out.shape[2]
    cdef Py_ssize_t n_neurons = synapses.shape[0]
    cdef Py_ssize_t n_chunks = (n_rows + ROW_CHUNK - 1) // ROW_CHUNK
    if n_rows == 0:
        return
    with nogil:
        for k in prange(n_chunks, schedule="static"):
            encode_rows(&X[0, 0], X.shape[1], &rows[k * ROW_CHUNK],
                        min(ROW_CHUNK, n_rows - k * ROW_CHUNK), &synapses[0, 0], n_neurons,
                        S, W, &out[0, k * ROW_CHUNK, 0], n_rows * W)


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
    # per-task scratch; allocated inside the parallel block, so thread-private
    uint64_t* codes    # (n_neurons, B, W) patterns of the batch
    int32_t* ties      # (B, n_train) stored entries at the minimum, for the current neuron
    Track* track       # (B,) minimum distance and number of entries at it
    double* tot        # (B,) labels output (VGRAM-COR normaliser)
    int32_t* cnt       # (q,) tied documents carrying each label, zero between uses
    int32_t* touched   # (q,) labels with cnt > 0
    void* xbuf         # (n_features,) zeroed dense row (CSR input only)
    uint64_t* rowbuf   # (n_neurons, W) patterns of one CSR row
    Sliced* sliced     # bit-sliced search scratch (AVX2)


cdef Work* work_new(Py_ssize_t n_neurons, Py_ssize_t B, Py_ssize_t W, Py_ssize_t n_train,
                    Py_ssize_t q, Py_ssize_t xbuf_bytes) noexcept nogil:
    cdef Work* w = <Work*> calloc(1, sizeof(Work))
    if w == NULL:
        return NULL
    w.codes = <uint64_t*> malloc(n_neurons * B * W * sizeof(uint64_t))
    w.ties = <int32_t*> malloc(B * n_train * sizeof(int32_t))
    w.track = <Track*> malloc(B * sizeof(Track))
    w.tot = <double*> malloc(B * sizeof(double))
    w.cnt = <int32_t*> calloc(q, sizeof(int32_t))
    w.touched = <int32_t*> malloc(q * sizeof(int32_t))
    w.xbuf = calloc(xbuf_bytes + 1, 1)
    w.rowbuf = <uint64_t*> malloc(n_neurons * W * sizeof(uint64_t))
    w.sliced = sliced_new(W, B)
    if w.codes == NULL or w.ties == NULL or w.track == NULL or w.tot == NULL \
            or w.cnt == NULL or w.touched == NULL or w.xbuf == NULL or w.rowbuf == NULL \
            or w.sliced == NULL:
        work_free(w)
        return NULL
    return w


cdef void work_free(Work* w) noexcept nogil:
    if w == NULL:
        return
    free(w.codes)
    free(w.ties)
    free(w.track)
    free(w.tot)
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
    search where it applies (AVX2, 4 to 32 words, batches of SLICED_MIN_BATCH or more);
    otherwise the scan, the train patterns taken in tiles of TILE_BYTES, which stay in L1
    while every test pattern of the batch is compared with them."""
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
               Py_ssize_t q, double* row) noexcept nogil:
    """Add one neuron's output for batch document b to its belief row (votes, unnormalised).
    The stored documents at the minimum are ties[0 .. k-1], ascending."""
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
            w.tot[b] += <double> (lab_ptr[t + 1] - lab_ptr[t])
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
        w.tot[b] += (<double> lsum) / (<double> total)


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


cdef void search_batch(Work* w, Py_ssize_t B, Py_ssize_t doc0, const uint64_t* mem,
                       Py_ssize_t n_neurons, Py_ssize_t n_train, Py_ssize_t W,
                       const int64_t* lab_ptr, const int32_t* lab_idx, int model, int policy,
                       uint64_t seed, double* out, Py_ssize_t q, int64_t row0,
                       int64_t entry0, Summary* summary) noexcept nogil:
    """Beliefs of test documents doc0 .. doc0+B-1 (their patterns in w.codes) into out, or
    (summary.dist not NULL) their neurons' outcomes into summary. Test document i is row
    row0 + i of the whole query set for the random keys."""
    cdef Py_ssize_t n, b, c
    cdef uint64_t state
    cdef double* row
    for b in range(B):
        w.tot[b] = 0.0
    for n in range(n_neurons):
        distances(mem + n * n_train * W, n_train, w.codes + n * B * W, B, W, w)
        for b in range(B):
            state = row_state(seed, (row0 + doc0 + b) * n_neurons + n)
            if summary.dist != NULL:
                summarize(w, b, n_train, lab_ptr, lab_idx, model, policy, state, entry0, q,
                          summary, (doc0 + b) * n_neurons + n)
            else:
                vote(w, b, n_train, lab_ptr, lab_idx, model, policy, state, q,
                     out + (doc0 + b) * q)
    if summary.dist != NULL:
        return
    for b in range(B):
        row = out + (doc0 + b) * q
        if model == VGRAM:
            for c in range(q):
                row[c] = row[c] / n_neurons
        elif w.tot[b] > 0:
            for c in range(q):
                row[c] = row[c] / w.tot[b]


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


def batch_size(Py_ssize_t n_docs):
    """Test documents per task: up to 64, fewer so that every thread gets a task."""
    cdef Py_ssize_t threads = fr_max_threads()
    return max(1, min(64, (n_docs + threads - 1) // threads))


def predict_dense(const floating[:, ::1] X, const int32_t[:, ::1] synapses,
                  const uint64_t[:, :, ::1] mem, const int64_t[::1] lab_ptr,
                  const int32_t[::1] lab_idx, int model, int policy, uint64_t seed,
                  double[:, ::1] out, int64_t row0=0, int64_t entry0=0, summary=None):
    """Beliefs of the rows of X into out (n_docs, q), which must be all zeros; or, with
    ``summary`` (from new_summary), each (row, neuron)'s outcome into it (out then only gives
    q: shape (0, q)). Row i of X is test document row0 + i and stored document t is number
    entry0 + t for the random keys (0 and 0 for a whole memory and query set)."""
    cdef Py_ssize_t n_docs = X.shape[0], q = out.shape[1], n_neurons = mem.shape[0]
    cdef Py_ssize_t n_train = mem.shape[1], W = mem.shape[2], S = synapses.shape[1]
    cdef Py_ssize_t B = batch_size(n_docs), n_batches = (n_docs + B - 1) // B
    cdef Py_ssize_t k, doc0, nb
    cdef Work* w = NULL
    cdef Summary sm = summary_of(summary, n_docs, n_neurons, q, policy)
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = work_new(n_neurons, B, W, n_train, q, 0)
        if w == NULL:
            failed[0] = 1
        # every thread must reach the worksharing loop; one without scratch skips its tasks
        for k in prange(n_batches, schedule="dynamic"):
            if w != NULL:
                doc0 = k * B
                nb = min(B, n_docs - doc0)
                encode_rows(&X[doc0, 0], X.shape[1], NULL, nb, &synapses[0, 0], n_neurons,
                            S, W, w.codes, nb * W)
                search_batch(w, nb, doc0, &mem[0, 0, 0], n_neurons, n_train, W,
                             &lab_ptr[0], &lab_idx[0], model, policy, seed, &out[0, 0], q,
                             row0, entry0, &sm)
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
    cdef Py_ssize_t B = batch_size(n_docs), n_batches = (n_docs + B - 1) // B
    cdef Py_ssize_t k, i, doc0, nb, lo
    cdef Work* w = NULL
    cdef Summary sm = summary_of(summary, n_docs, n_neurons, q, policy)
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = work_new(n_neurons, B, W, n_train, q, n_features * sizeof(floating))
        if w == NULL:
            failed[0] = 1
        for k in prange(n_batches, schedule="dynamic"):
            if w != NULL:
                doc0 = k * B
                nb = min(B, n_docs - doc0)
                for i in range(nb):
                    lo = indptr[doc0 + i]
                    encode_csr_row(&data[0] + lo, &indices[0] + lo, indptr[doc0 + i + 1] - lo,
                                   <floating*> w.xbuf, w.rowbuf, &wptr[0], &wcell[0, 0],
                                   n_neurons, S, W, w.codes + i * W, nb * W)
                search_batch(w, nb, doc0, &mem[0, 0, 0], n_neurons, n_train, W,
                             &lab_ptr[0], &lab_idx[0], model, policy, seed, &out[0, 0], q,
                             row0, entry0, &sm)
        work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")

