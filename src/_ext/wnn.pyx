# cython: language_level=3
"""VG-RAM weightless neural network kernels: Minchinton-cell encoding into packed bits and
the per-neuron minimum-Hamming-distance search with voting (melotti2009 §2.6, SPEC §5).

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
released). A task encodes its batch, then for every neuron computes the Hamming distances of
the batch to the neuron's memory (16 KiB train tiles held in L1 while every test pattern of
the batch, its words in registers, is compared with them), keeping each document's minimum
and the list of stored documents at it, and finally votes from that list. Memories of
sparse patterns (text: most 64-bit words zero) are searched through a word index instead of
the scan (``fr_index_*`` below: per word position, the entries nonzero there), visiting only
the entries that share a nonzero word with the test pattern; it finds the same minimum and
the same entries in the same order, and is chosen per neuron and per test document by a
cost rule (``use_search`` forces either path, for tests and benchmarks). Each
document's output row is written by exactly one task, neurons in ascending order, and every
random choice uses a generator seeded by (seed, document, neuron) -- so results depend
neither on the thread count nor on the batch size.
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np

from _tiesort cimport bounded, floating, index_t, row_state

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

    /* AVX2 path (x86 with GCC/clang, chosen at run time when the CPU has AVX2): popcount
       of 32 bytes at a time by nibble table lookup (vpshufb), bytes summed with vpsadbw.
       Per-byte counts stay <= 8 * W / 4 <= 64 for W <= 32, so the byte sums cannot wrap. */
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #include <immintrin.h>
    #define FR_AVX2_PATH 1
    __attribute__((target("avx2")))
    static inline uint32_t fr_hsum_avx2(__m256i acc) {
        __m256i s = _mm256_sad_epu8(acc, _mm256_setzero_si256());
        __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
        return (uint32_t) _mm_cvtsi128_si64(h);
    }
    #define FR_SCAN_AVX2(WW)                                                        \
        __attribute__((target("avx2")))                                            \
        static void fr_scan_avx2_##WW(const uint64_t* M, int64_t t0, int64_t t1,    \
                                      const uint64_t* c, int32_t* ties, fr_track* r)\
        {                                                                           \
            const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, \
                2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);          \
            const __m256i nib = _mm256_set1_epi8(0x0f);                             \
            __m256i q[(WW) / 4]; int64_t t; int j;                                  \
            uint32_t m = r->m; int64_t k = r->k;                                    \
            for (j = 0; j < (WW) / 4; j++)                                          \
                q[j] = _mm256_loadu_si256((const __m256i*) (c + 4 * j));            \
            for (t = t0; t < t1; t++) {                                             \
                const uint64_t* p = M + t * (WW);                                   \
                __m256i acc = _mm256_setzero_si256();                               \
                uint32_t d;                                                         \
                for (j = 0; j < (WW) / 4; j++) {                                    \
                    __m256i x = _mm256_xor_si256(                                   \
                        _mm256_loadu_si256((const __m256i*) (p + 4 * j)), q[j]);    \
                    __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(x, nib));\
                    __m256i hi = _mm256_shuffle_epi8(                               \
                        lut, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib));       \
                    acc = _mm256_add_epi8(acc, _mm256_add_epi8(lo, hi));            \
                }                                                                   \
                d = fr_hsum_avx2(acc);                                              \
                if (d <= m) {                                                       \
                    if (d < m) { m = d; k = 0; }                                    \
                    ties[k++] = (int32_t) t;                                        \
                }                                                                   \
            }                                                                       \
            r->m = m; r->k = k;                                                     \
        }
    FR_SCAN_AVX2(4)
    FR_SCAN_AVX2(8)
    FR_SCAN_AVX2(16)
    FR_SCAN_AVX2(32)
    #endif

    static int fr_simd = 0;  /* use the AVX2 path; set once at import by fr_simd_init */

    static int fr_simd_available(void) {
    #ifdef FR_AVX2_PATH
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? 1 : 0;
    #else
        return 0;
    #endif
    }

    static void fr_scan(const uint64_t* M, int64_t t0, int64_t t1, const uint64_t* c,
                        int64_t W, int32_t* ties, fr_track* r)
    {
    #ifdef FR_AVX2_PATH
        if (fr_simd) {
            switch (W) {
            case 4: fr_scan_avx2_4(M, t0, t1, c, ties, r); return;
            case 8: fr_scan_avx2_8(M, t0, t1, c, ties, r); return;
            case 16: fr_scan_avx2_16(M, t0, t1, c, ties, r); return;
            case 32: fr_scan_avx2_32(M, t0, t1, c, ties, r); return;
            }
        }
    #endif
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

    /* Word-index path, for memories of sparse patterns (text: a few bits set in hundreds,
       most words zero). d(q, t) = |q| + |t| - 2 |q & t|, and |q & t| sums over only the
       words where q is nonzero, of the entries nonzero there. The index of a neuron's
       memory lists, per word position, the entries nonzero at it; a query then computes
       key[t] = |t| - 2 |q & t| by visiting only the lists of its nonzero words, and the
       entries at the minimum key are those at the minimum distance |q| + min key. Exact:
       the same minimum and the same entries, ascending, as the scan. */
    typedef struct {
        int64_t W, n_train;
        const uint64_t* M;   /* the indexed memory (n_train, W) */
        int32_t* size;       /* (n_train) |t| */
        int32_t* key;        /* (n_train) |t| - 2 |q & t| for the current query */
        int64_t* count;      /* (W) entries nonzero at word j: list[j * n_train ..] */
        int32_t* list;       /* (W, n_train), ascending */
    } fr_index;

    static void fr_index_free(fr_index* x) {
        if (x == NULL) return;
        free(x->size); free(x->key); free(x->count); free(x->list); free(x);
    }

    static fr_index* fr_index_new(int64_t n_train, int64_t W) {
        fr_index* x = (fr_index*) calloc(1, sizeof(fr_index));
        if (x == NULL) return NULL;
        x->W = W;
        x->n_train = n_train;
        x->size = (int32_t*) malloc((n_train + 1) * sizeof(int32_t));
        x->key = (int32_t*) malloc((n_train + 1) * sizeof(int32_t));
        x->count = (int64_t*) malloc(W * sizeof(int64_t));
        x->list = (int32_t*) malloc((W * n_train + 1) * sizeof(int32_t));
        if (x->size == NULL || x->key == NULL || x->count == NULL || x->list == NULL) {
            fr_index_free(x);
            return NULL;
        }
        return x;
    }

    /* Index the n_train patterns of M. Gives up (returns 0) when more than 1 / max_density
       of the words of the first 256 entries are nonzero (the scan is then cheaper); returns
       1 when built. Column by column, so each list's length stays in a register. */
    static int fr_index_build(fr_index* x, const uint64_t* M, int64_t max_density) {
        const int64_t W = x->W, n_train = x->n_train, probe = n_train < 256 ? n_train : 256;
        int64_t t, j, n, nonzero = 0;
        for (t = 0; t < probe * W; t++) nonzero += M[t] != 0;
        if (nonzero * max_density > probe * W) return 0;
        x->M = M;
        for (j = 0; j < W; j++) {
            int32_t* list = x->list + j * n_train;
            for (t = 0, n = 0; t < n_train; t++) {   /* branch-free: append, keep if nonzero */
                list[n] = (int32_t) t;
                n += M[t * W + j] != 0;
            }
            x->count[j] = n;
        }
        for (t = 0; t < n_train; t++) {
            int32_t c = 0;
            for (j = 0; j < W; j++) c += (int32_t) FR_POPCOUNT64(M[t * W + j]);
            x->size[t] = c;
        }
        return 1;
    }

    /* The minimum of key[0 .. n-1], and the t with key[t] == minimum, ascending, into
       ties; returns their number. */
    static int64_t fr_min_ties(const int32_t* key, int64_t n, int32_t* m_out, int32_t* ties) {
        int64_t t, k = 0;
        int32_t m = INT32_MAX;
        for (t = 0; t < n; t++) m = key[t] < m ? key[t] : m;
        for (t = 0; t < n; t++) {               /* branch-free: most entries are not tied */
            ties[k] = (int32_t) t;
            k += key[t] == m;
        }
        *m_out = m;
        return k;
    }
    #ifdef FR_AVX2_PATH
    __attribute__((target("avx2")))
    static int64_t fr_min_ties_avx2(const int32_t* key, int64_t n, int32_t* m_out,
                                    int32_t* ties) {
        int64_t t, k = 0, n8 = n & ~(int64_t) 7;
        int32_t m = INT32_MAX, lanes[8];
        __m256i vm = _mm256_set1_epi32(INT32_MAX), eq;
        int i;
        for (t = 0; t < n8; t += 8)
            vm = _mm256_min_epi32(vm, _mm256_loadu_si256((const __m256i*) (key + t)));
        _mm256_storeu_si256((__m256i*) lanes, vm);
        for (i = 0; i < 8; i++) m = lanes[i] < m ? lanes[i] : m;
        for (t = n8; t < n; t++) m = key[t] < m ? key[t] : m;
        vm = _mm256_set1_epi32(m);
        for (t = 0; t < n8; t += 8) {           /* 8 keys a compare; ties are rare */
            eq = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i*) (key + t)), vm);
            for (unsigned b = (unsigned) _mm256_movemask_ps(_mm256_castsi256_ps(eq));
                 b; b &= b - 1)
                ties[k++] = (int32_t) (t + FR_CTZ64((uint64_t) b));
        }
        for (t = n8; t < n; t++) {
            ties[k] = (int32_t) t;
            k += key[t] == m;
        }
        *m_out = m;
        return k;
    }
    #endif

    /* Minimum distance of pattern c and the entries at it, ascending, into ties and r (as
       a whole-memory fr_scan would). Returns 0, doing nothing, when c's lists hold more than
       max_visits entries (the scan is then cheaper). */
    static int fr_index_query(fr_index* x, const uint64_t* c, int64_t max_visits,
                              int32_t* ties, fr_track* r) {
        const int64_t W = x->W, n_train = x->n_train;
        int32_t* __restrict key = x->key;
        int64_t j, e, visits = 0;
        int32_t qsize = 0, m;
        for (j = 0; j < W; j++) {
            qsize += (int32_t) FR_POPCOUNT64(c[j]);
            visits += c[j] ? x->count[j] : 0;
        }
        if (visits > max_visits) return 0;
        memcpy(key, x->size, n_train * sizeof(int32_t));
        for (j = 0; j < W; j++) {
            const uint64_t cj = c[j];
            const int32_t* list = x->list + j * n_train;
            const uint64_t* col = x->M + j;
            if (cj == 0) continue;
            for (e = 0; e < x->count[j]; e++) {
                int64_t t = list[e];
                key[t] -= 2 * (int32_t) FR_POPCOUNT64(col[t * W] & cj);
            }
        }
    #ifdef FR_AVX2_PATH
        if (fr_simd) r->k = fr_min_ties_avx2(key, n_train, &m, ties);
        else
    #endif
        r->k = fr_min_ties(key, n_train, &m, ties);
        r->m = (uint32_t) (qsize + m);
        return 1;
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
    ctypedef struct Index "fr_index":
        pass
    Index* index_new "fr_index_new"(int64_t n_train, int64_t W) noexcept nogil
    void index_free "fr_index_free"(Index* x) noexcept nogil
    int index_build "fr_index_build"(Index* x, const uint64_t* M,
                                     int64_t max_density) noexcept nogil
    int index_query "fr_index_query"(Index* x, const uint64_t* c, int64_t max_visits,
                                     int32_t* ties, Track* r) noexcept nogil

# model and tie-policy codes, mirrored in fastrank/wnn.py
cdef enum:
    VGRAM = 0      # an entry per (document, label); a neuron outputs one label
    VGRAM_COR = 1  # an entry per document; a neuron outputs a label set
    RANDOM = 0     # one entry chosen uniformly among those at the minimum distance
    ALL = 1        # the vote split evenly over every entry at the minimum distance
    TILE_BYTES = 16384  # train tile kept in L1 (half of a 32 KiB L1d)
    # search paths (module switch, for tests and benchmarks)
    AUTO = 0        # the index when it is cheaper, the scan otherwise
    SCAN = 1        # always the popcount scan
    INDEX = 2       # the inverted index for every query, whatever it costs
    # AUTO's rules (measured on this project's benchmarks): index a neuron's memory for a
    # batch of at least INDEX_MIN_BATCH documents when at most 1 / INDEX_MAX_DENSITY of its
    # words are nonzero; then take the index for a query whose lists hold fewer than
    # n_train (W - 1) / INDEX_VISIT_COST entries (a visit costs about 3 words of scan, and
    # the pass over all keys about 1 word per entry)
    INDEX_MIN_BATCH = 4
    INDEX_MAX_DENSITY = 2
    INDEX_VISIT_COST = 3


fr_simd = fr_simd_available()
cdef int search_path = AUTO
_PATHS = {"auto": AUTO, "scan": SCAN, "index": INDEX}


def simd_available():
    """Whether this CPU and build can use the AVX2 popcount path."""
    return bool(fr_simd_available())


def use_simd(bint enable):
    """Select the AVX2 path (when available) or the scalar POPCNT one; returns the previous
    choice. Both give identical results; tests exercise each."""
    global fr_simd
    previous = bool(fr_simd)
    fr_simd = 1 if (enable and fr_simd_available()) else 0
    return previous


def use_search(str path):
    """Select the search: "auto" (default: the inverted index where the patterns are sparse
    enough for it to be cheaper, the popcount scan elsewhere), "scan" or "index" (every
    query through the index). Returns the previous choice. All give identical results;
    tests exercise each."""
    global search_path
    if path not in _PATHS:
        raise ValueError(f"search path must be one of {sorted(_PATHS)}, got {path!r}")
    previous = [name for name, code in _PATHS.items() if code == search_path][0]
    search_path = _PATHS[path]
    return previous


# ---- encoding ---------------------------------------------------------------------------

cdef inline void encode_row(const floating* x, const int32_t* syn, Py_ssize_t n_neurons,
                            Py_ssize_t S, Py_ssize_t W, uint64_t* out,
                            Py_ssize_t neuron_stride) noexcept nogil:
    """Pattern of dense row x for every neuron: out[n * neuron_stride + w] <- word w.
    Bit i = x[syn[i]] > x[syn[i + 1]], the last synapse paired with the first."""
    cdef Py_ssize_t n, w, i, lo, hi
    cdef const int32_t* s
    cdef uint64_t* o
    cdef uint64_t word
    cdef floating cur, nxt, first
    for n in range(n_neurons):
        s = syn + n * S
        o = out + n * neuron_stride
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


cdef inline void encode_csr_row(const floating* data, const index_t* indices, Py_ssize_t nnz,
                                floating* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                const int32_t* wcell, Py_ssize_t n_neurons, Py_ssize_t S,
                                Py_ssize_t W, uint64_t* out,
                                Py_ssize_t neuron_stride) noexcept nogil:
    """encode_row of one CSR row, visiting only the synapses wired to its stored entries: a
    Minchinton cell comparing two zeros is 0, so only a cell with a synapse on a stored
    entry can be 1. The row is scattered once into the all-zero buffer xbuf (cleared after),
    bits are set in the per-thread rowbuf (n_neurons x W) and copied to out."""
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
    """out[n, i] <- pattern of row rows[i] of X for neuron n (out: n_neurons, len(rows), W)."""
    cdef Py_ssize_t i, n_rows = rows.shape[0], S = synapses.shape[1], W = out.shape[2]
    cdef Py_ssize_t n_neurons = synapses.shape[0]
    if n_rows == 0:
        return
    with nogil:
        for i in prange(n_rows, schedule="static"):
            encode_row(&X[rows[i], 0], &synapses[0, 0], n_neurons, S, W, &out[0, i, 0],
                       n_rows * W)


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
    Index* index       # inverted index of the current neuron's memory


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
    w.index = index_new(n_train, W)
    if w.codes == NULL or w.ties == NULL or w.track == NULL or w.tot == NULL \
            or w.cnt == NULL or w.touched == NULL or w.xbuf == NULL or w.rowbuf == NULL \
            or w.index == NULL:
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
    index_free(w.index)
    free(w)


cdef void distances(const uint64_t* M, Py_ssize_t n_train, const uint64_t* C, Py_ssize_t B,
                    Py_ssize_t W, Work* w) noexcept nogil:
    """Hamming distances of the B patterns C to the n_train patterns M of one neuron; keeps
    each document's minimum in w.track and the entries at it in w.ties. Sparse memories go
    through the inverted index (AUTO's rules above); otherwise the train patterns are taken
    in tiles of TILE_BYTES, which stay in L1 while every test pattern of the batch is
    compared with them."""
    cdef Py_ssize_t b, t0, t1, tile = max(1, TILE_BYTES // (8 * W))
    cdef int64_t max_density = 1 if search_path == INDEX else INDEX_MAX_DENSITY
    cdef int64_t max_visits = 0x7FFFFFFFFFFFFFFF if search_path == INDEX \
        else n_train * (W - 1) // INDEX_VISIT_COST
    for b in range(B):
        w.track[b].m = 0xFFFFFFFF
        w.track[b].k = 0
    if search_path == INDEX or (search_path == AUTO and B >= INDEX_MIN_BATCH):
        if index_build(w.index, M, max_density):
            for b in range(B):
                if not index_query(w.index, C + b * W, max_visits, w.ties + b * n_train,
                                   &w.track[b]):
                    scan(M, 0, n_train, C + b * W, W, w.ties + b * n_train, &w.track[b])
            return
    t0 = 0
    while t0 < n_train:
        t1 = min(t0 + tile, n_train)
        for b in range(B):
            scan(M, t0, t1, C + b * W, W, w.ties + b * n_train, &w.track[b])
        t0 = t1


cdef void vote(Work* w, Py_ssize_t b, Py_ssize_t n_train, const int64_t* lab_ptr,
               const int32_t* lab_idx, int model, int policy, uint64_t* state,
               double* row) noexcept nogil:
    """Add one neuron's output for batch document b to its belief row (votes, unnormalised).
    The stored documents at the minimum are ties[0 .. k-1], ascending."""
    cdef const int32_t* ties = w.ties + b * n_train
    cdef int64_t k = w.track[b].k
    cdef Py_ssize_t i, t, p, c, n_touched = 0
    cdef int64_t total = 0, nl, lsum = 0
    cdef uint32_t pick
    if policy == RANDOM:
        if model == VGRAM:
            # uniform over the (document, label) entries at the minimum, enumerated by
            # document then label: draw pick < their number, walk to entry pick
            for i in range(k):
                total += lab_ptr[ties[i] + 1] - lab_ptr[ties[i]]
            pick = bounded(state, <uint32_t> total)
            for i in range(k):
                t = ties[i]
                nl = lab_ptr[t + 1] - lab_ptr[t]
                if pick < nl:
                    row[lab_idx[lab_ptr[t] + pick]] += 1.0
                    return
                pick -= <uint32_t> nl
        else:
            # uniform over the documents at the minimum; output its whole label set
            t = ties[bounded(state, <uint32_t> k)]
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


cdef void search_batch(Work* w, Py_ssize_t B, Py_ssize_t doc0, const uint64_t* mem,
                       Py_ssize_t n_neurons, Py_ssize_t n_train, Py_ssize_t W,
                       const int64_t* lab_ptr, const int32_t* lab_idx, int model, int policy,
                       uint64_t seed, double* out, Py_ssize_t q) noexcept nogil:
    """Beliefs of test documents doc0 .. doc0+B-1 (their patterns in w.codes) into out."""
    cdef Py_ssize_t n, b, c
    cdef uint64_t state
    cdef double* row
    for b in range(B):
        w.tot[b] = 0.0
    for n in range(n_neurons):
        distances(mem + n * n_train * W, n_train, w.codes + n * B * W, B, W, w)
        for b in range(B):
            state = row_state(seed, (doc0 + b) * n_neurons + n)
            vote(w, b, n_train, lab_ptr, lab_idx, model, policy, &state,
                 out + (doc0 + b) * q)
    for b in range(B):
        row = out + (doc0 + b) * q
        if model == VGRAM:
            for c in range(q):
                row[c] = row[c] / n_neurons
        elif w.tot[b] > 0:
            for c in range(q):
                row[c] = row[c] / w.tot[b]


def batch_size(Py_ssize_t n_docs):
    """Test documents per task: up to 64, fewer so that every thread gets a task."""
    cdef Py_ssize_t threads = fr_max_threads()
    return max(1, min(64, (n_docs + threads - 1) // threads))


def predict_dense(const floating[:, ::1] X, const int32_t[:, ::1] synapses,
                  const uint64_t[:, :, ::1] mem, const int64_t[::1] lab_ptr,
                  const int32_t[::1] lab_idx, int model, int policy, uint64_t seed,
                  double[:, ::1] out):
    """Beliefs of the rows of X into out (n_docs, q), which must be all zeros."""
    cdef Py_ssize_t n_docs = X.shape[0], q = out.shape[1], n_neurons = mem.shape[0]
    cdef Py_ssize_t n_train = mem.shape[1], W = mem.shape[2], S = synapses.shape[1]
    cdef Py_ssize_t B = batch_size(n_docs), n_batches = (n_docs + B - 1) // B
    cdef Py_ssize_t k, i, doc0, nb
    cdef Work* w = NULL
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
                for i in range(nb):
                    encode_row(&X[doc0 + i, 0], &synapses[0, 0], n_neurons, S, W,
                               w.codes + i * W, nb * W)
                search_batch(w, nb, doc0, &mem[0, 0, 0], n_neurons, n_train, W,
                             &lab_ptr[0], &lab_idx[0], model, policy, seed, &out[0, 0], q)
        work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")


def predict_csr(const floating[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, Py_ssize_t n_features,
                const int64_t[::1] wptr, const int32_t[:, ::1] wcell,
                const int32_t[:, ::1] synapses, const uint64_t[:, :, ::1] mem,
                const int64_t[::1] lab_ptr, const int32_t[::1] lab_idx, int model,
                int policy, uint64_t seed, double[:, ::1] out):
    """As predict_dense for a canonical CSR matrix, with the wiring_index of synapses (each
    row scattered once)."""
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1, q = out.shape[1], n_neurons = mem.shape[0]
    cdef Py_ssize_t n_train = mem.shape[1], W = mem.shape[2], S = synapses.shape[1]
    cdef Py_ssize_t B = batch_size(n_docs), n_batches = (n_docs + B - 1) // B
    cdef Py_ssize_t k, i, doc0, nb, lo
    cdef Work* w = NULL
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
                             &lab_ptr[0], &lab_idx[0], model, policy, seed, &out[0, 0], q)
        work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")

