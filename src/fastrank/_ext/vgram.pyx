# cython: language_level=3
"""VG-RAM weightless neural network driver: Minchinton-cell encoding into packed bits and
the per-neuron minimum-Hamming-distance search with voting (melotti2009 §2.6).

The Python wrappers are ``fastrank.wnn.VGRAM`` / ``VGRAMCor``; they validate input. The
encoders and the search are C (``core/vgram.h``: ``core/minchinton/`` the encoders,
``core/hamming/`` the popcount scans, ``core/bitsliced/`` the bit-sliced tiles, one
instruction set per file); this module splits the work among threads and votes.

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
The level in use (``fastrank.use_simd``, ``FASTRANK_SIMD``; at import the best the CPU
runs), each compiled for its own instruction set with per-function target attributes, so
the module builds and runs on any CPU: portable C (any architecture), popcnt (x86-64 CPUs
without AVX2), avx2, avx512 (F, BW, VL) and avx512-vpopcntdq (with VPOPCNTDQ and VBMI:
Ice Lake and Zen 4 on). All give the same bits.

Encoding
--------
Up to 64 dense rows are encoded together through their values' ranks within each row
(at most 256 features on the AVX2 and AVX-512 paths, 128 on the portable one): with VBMI
and at most 128 features, a row's ranks are two vectors from which byte permutes gather 64
synapses' ranks at once, so one byte compare gives a word of 64 cells
(``minchinton/vbmi-inl.h``); otherwise byte compares (bytewise subtractions in 64-bit words
on the portable path) give a cell for 64 rows, transposed into the rows' words
(``minchinton/{avx2,avx512,generic}-inl.h``). Wider rows, and rows with a NaN, are
encoded cell by cell (vector compares of 4 to 16 cells on the x86 paths).
A CSR row is scattered once into a per-thread dense buffer and only
the cells with a synapse on one of its stored entries are evaluated (found through
``wiring_index``, the synapses grouped by input position): a cell comparing two zeros is
0. All give identical bits.

Search
------
Test documents are searched in shared batches, one after another: a batch is encoded,
then its neurons, in chunks of NEURON_CHUNK, are the tasks (OpenMP, dynamic schedule, GIL
released), each finding, for every document of the batch, the minimum Hamming distance to
the neuron's memory and the stored documents at it, and voting from that list. A batch
reads the memory once and transposes each stored tile once whatever its size, so batches
are large: up to SHARED_BATCH documents, fewer where the batch's patterns and votes or a
thread's tie lists would pass their bounds (SHARED_BYTES, TIES_BYTES). Where every
thread has TASK_BATCH documents or more and either the chunks of neurons are fewer than
the threads or the votes of a shared batch of TASK_BATCH documents would pass
SHARED_BYTES (very many labels), each task searches its own batch of TASK_BATCH
documents with every neuron instead.
Two searches give the same minimum and the same entries in the same (ascending) order:

* bit-sliced (AVX2 and AVX-512 paths, patterns of 4 to 32 words, a multiple of 4, batches
  of at least 6 test documents; with VPOPCNTDQ and a multiple of 8 words, only where its
  cost model says it beats the scan; ``core/bitsliced/``): each tile of 256 (AVX2) or
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
the whole memory's votes (fastrank._vgram_merge._merge_outcomes).
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

import numpy as np

from fastrank._ext._simd cimport current_level, fr_simd_level, fr_simd_name
from _tiesort cimport floating, index_t, row_state, splitmix64

cdef extern from "vgram.h":
    ctypedef struct Track "fr_track":
        uint32_t m
        int64_t k
    ctypedef struct Scratch "fr_sliced":
        pass
    void fr_vgram_init() noexcept nogil
    void encode_rows_f64 "fr_vgram_encode_rows_f64"(
        fr_simd_level level, const double* X, int64_t n_cols, const int64_t* rows,
        int64_t n_rows, const int32_t* syn, int64_t n_neurons, int64_t S, int64_t W,
        uint64_t* out, int64_t stride, int stream, const uint8_t* wiring) noexcept nogil
    void encode_rows_f32 "fr_vgram_encode_rows_f32"(
        fr_simd_level level, const float* X, int64_t n_cols, const int64_t* rows,
        int64_t n_rows, const int32_t* syn, int64_t n_neurons, int64_t S, int64_t W,
        uint64_t* out, int64_t stride, int stream, const uint8_t* wiring) noexcept nogil
    uint8_t* wiring_new "fr_vgram_wiring_new"(fr_simd_level level, const int32_t* syn,
                                              int64_t n_neurons, int64_t S, int64_t W,
                                              int64_t n_cols) noexcept nogil
    void fr_vgram_wiring_index(const int32_t* syn, int64_t n_neurons, int64_t S,
                               int64_t n_features, int64_t* ptr, int32_t* cell) noexcept nogil
    void encode_csr_row_f64_i32 "fr_vgram_encode_csr_row_f64_i32"(
        const double* data, const int32_t* indices, int64_t nnz, double* xbuf,
        uint64_t* rowbuf, const int64_t* wptr, const int32_t* wcell, int64_t n_neurons,
        int64_t S, int64_t W, uint64_t* out, int64_t stride) noexcept nogil
    void encode_csr_row_f64_i64 "fr_vgram_encode_csr_row_f64_i64"(
        const double* data, const int64_t* indices, int64_t nnz, double* xbuf,
        uint64_t* rowbuf, const int64_t* wptr, const int32_t* wcell, int64_t n_neurons,
        int64_t S, int64_t W, uint64_t* out, int64_t stride) noexcept nogil
    void encode_csr_row_f32_i32 "fr_vgram_encode_csr_row_f32_i32"(
        const float* data, const int32_t* indices, int64_t nnz, float* xbuf,
        uint64_t* rowbuf, const int64_t* wptr, const int32_t* wcell, int64_t n_neurons,
        int64_t S, int64_t W, uint64_t* out, int64_t stride) noexcept nogil
    void encode_csr_row_f32_i64 "fr_vgram_encode_csr_row_f32_i64"(
        const float* data, const int64_t* indices, int64_t nnz, float* xbuf,
        uint64_t* rowbuf, const int64_t* wptr, const int32_t* wcell, int64_t n_neurons,
        int64_t S, int64_t W, uint64_t* out, int64_t stride) noexcept nogil
    Scratch* scratch_new "fr_vgram_scratch_new"(int64_t W, int64_t B) noexcept nogil
    void scratch_free "fr_vgram_scratch_free"(Scratch* s) noexcept nogil
    void min_distances "fr_vgram_min_distances"(
        fr_simd_level level, Scratch* scratch, const uint64_t* M, int64_t n_train,
        const uint64_t* C, int64_t B, int64_t W, int32_t* ties, Track* track) noexcept nogil

cdef extern from "runtime.h":
    int fr_get_max_threads() noexcept nogil

# model and tie-policy codes (MODELS, TIE_POLICIES), and sizes
cdef enum:
    VGRAM = 0      # an entry per (document, label); a neuron outputs one label
    VGRAM_COR = 1  # an entry per document; a neuron outputs a label set
    RANDOM = 0     # the entry at the minimum distance with the smallest key (uniform)
    ALL = 1        # the vote split evenly over every entry at the minimum distance
    ROW_CHUNK = 64      # training rows per encoding task
    TASK_BATCH = 64     # test documents per task where each thread searches its own batches
    SHARED_BATCH = 512  # most test documents searched together with the neurons split
    SHARED_BYTES = 64 << 20  # bound on a shared batch's patterns and per-chunk votes
    TIES_BYTES = 16 << 20    # bound on a thread's tie lists for a batch
    # neurons whose votes are added in order into a partial row, the partial rows then
    # added in order: the tasks of a shared batch
    NEURON_CHUNK = 32


fr_vgram_init()

#: neurons per chunk: each test document's votes are added in order within a chunk of this
#: many neurons, and the chunks' sums in order (fastrank._vgram_merge._merge_outcomes sums alike)
NEURONS_PER_CHUNK = NEURON_CHUNK

#: the codes of the models and of the tie policies (fastrank.wnn reads them)
MODELS = {"vgram": VGRAM, "vgram_cor": VGRAM_COR}
TIE_POLICIES = {"random": RANDOM, "all": ALL}


def simd_path():
    """The instruction-set path the encoders and the search take: the one in use
    (``fastrank.use_simd``), each of the five having its own code."""
    return fr_simd_name(current_level()).decode()


# ---- encoding ---------------------------------------------------------------------------

cdef inline void encode_rows(fr_simd_level lv, const floating* X, Py_ssize_t n_cols,
                             const int64_t* rows, Py_ssize_t n_rows, const int32_t* syn,
                             Py_ssize_t n_neurons, Py_ssize_t S, Py_ssize_t W, uint64_t* out,
                             Py_ssize_t neuron_stride, bint stream,
                             const uint8_t* wiring) noexcept nogil:
    """Patterns of dense rows rows[0 .. n_rows-1] of X (rows NULL: the first n_rows rows)
    for every neuron: pattern (n, i) at out + n * neuron_stride + i * W
    (fr_vgram_encode_rows)."""
    if floating is double:
        encode_rows_f64(lv, X, n_cols, rows, n_rows, syn, n_neurons, S, W, out,
                        neuron_stride, stream, wiring)
    else:
        encode_rows_f32(lv, X, n_cols, rows, n_rows, syn, n_neurons, S, W, out,
                        neuron_stride, stream, wiring)


cdef inline void encode_csr_row(const floating* data, const index_t* indices, Py_ssize_t nnz,
                                floating* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                                const int32_t* wcell, Py_ssize_t n_neurons, Py_ssize_t S,
                                Py_ssize_t W, uint64_t* out,
                                Py_ssize_t neuron_stride) noexcept nogil:
    """The patterns of one CSR row for every neuron, visiting only the synapses wired to its
    stored entries (fr_vgram_encode_csr_row)."""
    if floating is double:
        if index_t is int32_t:
            encode_csr_row_f64_i32(data, indices, nnz, xbuf, rowbuf, wptr, wcell, n_neurons,
                                   S, W, out, neuron_stride)
        else:
            encode_csr_row_f64_i64(data, indices, nnz, xbuf, rowbuf, wptr, wcell, n_neurons,
                                   S, W, out, neuron_stride)
    else:
        if index_t is int32_t:
            encode_csr_row_f32_i32(data, indices, nnz, xbuf, rowbuf, wptr, wcell, n_neurons,
                                   S, W, out, neuron_stride)
        else:
            encode_csr_row_f32_i64(data, indices, nnz, xbuf, rowbuf, wptr, wcell, n_neurons,
                                   S, W, out, neuron_stride)


cdef int encode_dense_f64(const double* X, Py_ssize_t n_rows, Py_ssize_t n_cols,
                          const int32_t* syn, Py_ssize_t n_neurons, Py_ssize_t S,
                          uint64_t* out) noexcept nogil:
    """The patterns of the n_rows dense rows of X for every neuron, pattern (n, i) at
    out + (n * n_rows + i) * W (the memory layout), on the calling thread: the C API's
    encoder (fastrank._ext.capi). Returns 0."""
    cdef Py_ssize_t W = (S + 63) // 64
    encode_rows(current_level(), X, n_cols, NULL, n_rows, syn, n_neurons, S, W, out,
                n_rows * W, False, NULL)
    return 0


cdef int search_nearest(const uint64_t* M, Py_ssize_t n_train, const uint64_t* C,
                        Py_ssize_t n_tests, Py_ssize_t n_neurons, Py_ssize_t W,
                        uint32_t* distance, int64_t* count, int64_t* nearest) noexcept nogil:
    """For each test pattern t (C: n_neurons x n_tests x W words) and neuron n, the minimum
    Hamming distance over the neuron's n_train stored patterns (M: n_neurons x n_train x W),
    how many are at it and the first of them, into distance, count and nearest[t * n_neurons
    + n], on the calling thread, the tests in batches (batch_size): the C API's search
    (fastrank._ext.capi). Returns -1 when out of memory, else 0."""
    cdef Py_ssize_t B = batch_size(n_tests, 0, n_train), n, t0, b, r
    cdef fr_simd_level lv = current_level()
    cdef Scratch* scratch = scratch_new(W, B)
    cdef int32_t* ties = <int32_t*> malloc(B * n_train * sizeof(int32_t))
    cdef Track* track = <Track*> malloc(B * sizeof(Track))
    cdef int status = -1
    if scratch != NULL and ties != NULL and track != NULL:
        for n in range(n_neurons):
            t0 = 0
            while t0 < n_tests:
                b = min(B, n_tests - t0)
                min_distances(lv, scratch, M + n * n_train * W, n_train,
                              C + (n * n_tests + t0) * W, b, W, ties, track)
                for r in range(b):
                    distance[(t0 + r) * n_neurons + n] = track[r].m
                    count[(t0 + r) * n_neurons + n] = track[r].k
                    nearest[(t0 + r) * n_neurons + n] = ties[r * n_train]
                t0 += B
        status = 0
    scratch_free(scratch)
    free(ties)
    free(track)
    return status


def wiring_index(const int32_t[:, ::1] synapses, Py_ssize_t n_features):
    """The synapses grouped by input position (counting sort): those wired to input f are
    cell[e] for e in ptr[f] .. ptr[f + 1] - 1, in (neuron, synapse) order, where cell[e] =
    (neuron n, synapse i, input of synapse i - 1, input of synapse i + 1), cyclically."""
    cdef Py_ssize_t N = synapses.shape[0], S = synapses.shape[1]
    ptr_arr = np.zeros(n_features + 1, dtype=np.int64)
    cell_arr = np.empty((N * S, 4), dtype=np.int32)
    cdef int64_t[::1] ptr = ptr_arr
    cdef int32_t[:, ::1] cell = cell_arr
    if N * S > 0:
        with nogil:
            fr_vgram_wiring_index(&synapses[0, 0], N, S, n_features, &ptr[0], &cell[0, 0])
    return ptr_arr, cell_arr


cdef inline void encode_docs(fr_simd_level lv, const floating* vp, Py_ssize_t n_cols,
                             const index_t* ip, const index_t* pp, const int64_t* rows,
                             Py_ssize_t doc0, Py_ssize_t nb, const int32_t* syn,
                             Py_ssize_t n_neurons, Py_ssize_t S, Py_ssize_t W, uint64_t* out,
                             Py_ssize_t neuron_stride, bint stream, const uint8_t* wiring,
                             floating* xbuf, uint64_t* rowbuf, const int64_t* wptr,
                             const int32_t* wcell) noexcept nogil:
    """The patterns of documents doc0 .. doc0 + nb - 1 (rows of the input, or rows[doc] when
    rows is not NULL) for the n_neurons neurons of syn: document i's pattern for neuron n at
    out + n * neuron_stride + i * W. Dense input (pp NULL: row r at vp + r * n_cols) through
    encode_rows (stream, wiring: as there); CSR input (vp, ip, pp: data, indices, indptr;
    syn then every neuron) row by row through the wiring index (wptr, wcell), with the
    thread's xbuf and rowbuf."""
    cdef Py_ssize_t i, r, lo
    if pp == NULL:
        if rows == NULL:
            encode_rows(lv, vp + doc0 * n_cols, n_cols, NULL, nb, syn, n_neurons, S, W, out,
                        neuron_stride, stream, wiring)
        else:
            encode_rows(lv, vp, n_cols, rows + doc0, nb, syn, n_neurons, S, W, out,
                        neuron_stride, stream, wiring)
        return
    for i in range(nb):
        r = rows[doc0 + i] if rows != NULL else doc0 + i
        lo = pp[r]
        encode_csr_row(vp + lo, ip + lo, pp[r + 1] - lo, xbuf, rowbuf, wptr, wcell, n_neurons,
                       S, W, out + i * W, neuron_stride)


_NO_INDEX = np.empty(0, dtype=np.int32)
_NO_WIRING = (np.empty(0, dtype=np.int64), np.empty((0, 4), dtype=np.int32))


def _input(X, synapses, index):
    """The arguments of _encode and _predict describing the rows of X: (values, n_cols,
    indices, indptr, wptr, wcell) -- a C-contiguous dense array's flat values and empty
    index arrays, or a canonical CSR matrix's arrays and the wiring_index of synapses
    (``index`` when given: the caller's, for X's width)."""
    if hasattr(X, "indptr"):
        if index is None:
            index = wiring_index(synapses, X.shape[1])
        return (X.data, X.shape[1], X.indices, X.indptr, *index)
    return (X.reshape(-1), X.shape[1], _NO_INDEX, _NO_INDEX, *_NO_WIRING)


def encode(X, const int64_t[::1] rows, const int32_t[:, ::1] synapses,
           uint64_t[:, :, ::1] out, index=None):
    """out[n, i] <- pattern of row rows[i] of X (a C-contiguous float array or a canonical
    CSR matrix) for neuron n (out: n_neurons, len(rows), W). For CSR X, ``index`` may give
    wiring_index(synapses, X.shape[1]), which is otherwise built for the call."""
    _encode(*_input(X, synapses, index), rows, synapses, out)


def _encode(const floating[::1] values, Py_ssize_t n_cols, const index_t[::1] indices,
            const index_t[::1] indptr, const int64_t[::1] wptr, const int32_t[:, ::1] wcell,
            const int64_t[::1] rows, const int32_t[:, ::1] synapses, uint64_t[:, :, ::1] out):
    """encode for the input _input describes: rows in chunks of ROW_CHUNK, one chunk per
    task; dense rows with the permuted encoding's byte wiring made once for all, and their
    patterns written past the caches; CSR rows each scattered once into the thread's dense
    buffer of n_cols values."""
    cdef Py_ssize_t k, n_rows = rows.shape[0], S = synapses.shape[1], W = out.shape[2]
    cdef Py_ssize_t n_neurons = synapses.shape[0]
    cdef Py_ssize_t n_chunks = (n_rows + ROW_CHUNK - 1) // ROW_CHUNK
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const index_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef const int64_t* wp = &wptr[0] if wptr.shape[0] else NULL
    cdef const int32_t* cp = &wcell[0, 0] if wcell.shape[0] else NULL
    cdef uint8_t* wiring = NULL
    cdef floating* xbuf = NULL  # (set here too: each thread's copy starts from these values)
    cdef uint64_t* rowbuf = NULL
    cdef bint ready = False
    cdef fr_simd_level lv = current_level()
    cdef int failed[1]
    failed[0] = 0
    if n_rows == 0:
        return
    with nogil:
        if pp == NULL:
            wiring = wiring_new(lv, &synapses[0, 0], n_neurons, S, W, n_cols)
    with nogil, parallel():
        # private to the thread, and assigned in every thread before any use (freeing an
        # unassigned copy crashed GCC 13 builds)
        xbuf = NULL
        rowbuf = NULL
        if pp != NULL:
            xbuf = <floating*> calloc(n_cols, sizeof(floating))
            rowbuf = <uint64_t*> malloc(n_neurons * W * sizeof(uint64_t))
        ready = pp == NULL or (xbuf != NULL and rowbuf != NULL)
        if not ready:
            failed[0] = 1
        for k in prange(n_chunks, schedule="static"):
            if ready:
                encode_docs(lv, vp, n_cols, ip, pp, &rows[0], k * ROW_CHUNK,
                            min(ROW_CHUNK, n_rows - k * ROW_CHUNK), &synapses[0, 0],
                            n_neurons, S, W, &out[0, k * ROW_CHUNK, 0], n_rows * W, True,
                            wiring, xbuf, rowbuf, wp, cp)
        free(xbuf)
        free(rowbuf)
    free(wiring)
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
    Scratch* scratch   # search scratch (bit-sliced tiles on the x86 vector paths)


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
    w.scratch = scratch_new(W, B)
    if w.codes == NULL or w.ties == NULL or w.track == NULL or w.part == NULL \
            or w.tot == NULL or w.total == NULL or w.cnt == NULL or w.touched == NULL \
            or w.xbuf == NULL or w.rowbuf == NULL or w.scratch == NULL:
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
    scratch_free(w.scratch)
    free(w)


cdef struct Summary:
    # one neuron's outcome per (test document, neuron), element doc * n_neurons + neuron,
    # for merging searches of parts of the memory (fastrank.dask); NULL dist: not wanted
    uint32_t* dist     # minimum Hamming distance (UINT32_MAX: no stored entry)
    int64_t* ndocs     # ALL: stored documents at it
    int32_t* counts    # ALL: (..., q) of them carrying each label
    uint64_t* key      # RANDOM: key of the chosen entry
    int64_t* doc       # RANDOM: its stored document (global index)
    int32_t* label     # RANDOM, VGRAM: its label (-1: no stored entry)


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
        out.label[e] = lab_idx[p] if model == VGRAM and k > 0 else -1
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
    fr_simd_level level  # the code path


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
        min_distances(s.level, w.scratch, s.mem + n * s.n_train * s.W, s.n_train,
                      codes + (n - n0) * B * s.W, B, s.W, w.ties, w.track)
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
    merge_shared adds them)."""
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
    s.level = current_level()
    return s


cdef struct SharedBatch:
    # scratch of a batch of documents searched by all the threads, the neurons split among
    # them in chunks of NEURON_CHUNK
    uint64_t* codes    # (n_neurons, B, W) every neuron's patterns of the documents
    double* parts      # per chunk of neurons: votes (B, q), then labels output (B)
    Py_ssize_t n_chunks


cdef Py_ssize_t batch_size(Py_ssize_t n_docs, Py_ssize_t shared_per_doc,
                           Py_ssize_t n_train) noexcept nogil:
    """Documents searched together: as many as SHARED_BATCH (a batch reads the memory once
    and transposes each stored tile once, so larger batches cost less per document), fewer
    where the batch's shared scratch (``shared_per_doc`` bytes a document) would pass
    SHARED_BYTES or a thread's tie lists TIES_BYTES, never under TASK_BATCH; the documents
    are then split evenly among the batches."""
    cdef Py_ssize_t n_batches, B = min(<Py_ssize_t> SHARED_BATCH,
                                       SHARED_BYTES // max(1, shared_per_doc),
                                       TIES_BYTES // (4 * max(1, n_train)))
    B = max(B, <Py_ssize_t> TASK_BATCH)
    n_batches = (n_docs + B - 1) // B
    return (n_docs + n_batches - 1) // n_batches


cdef SharedBatch shared_new(Py_ssize_t n_neurons, Py_ssize_t n_chunks, Py_ssize_t B,
                            Py_ssize_t W, Py_ssize_t q) except *:
    cdef SharedBatch sb
    sb.n_chunks = n_chunks
    sb.codes = <uint64_t*> malloc(max(1, n_neurons * B * W) * sizeof(uint64_t))
    sb.parts = <double*> malloc(max(1, sb.n_chunks * B * (q + 1)) * sizeof(double))
    if sb.codes == NULL or sb.parts == NULL:
        shared_free(&sb)
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")
    return sb


cdef void shared_free(SharedBatch* sb) noexcept nogil:
    free(sb.codes)
    free(sb.parts)


cdef inline void search_shared_chunk(Work* w, const Search* s, SharedBatch* sb, Py_ssize_t B,
                                     Py_ssize_t doc0, Py_ssize_t c) noexcept nogil:
    """Chunk c of the neurons for the B documents doc0 .. doc0+B-1 (patterns in
    sb.codes), its votes into its own part of sb.parts."""
    cdef Py_ssize_t n0 = c * NEURON_CHUNK
    cdef double* part = sb.parts + c * B * (s.q + 1)
    search_chunk(w, s, sb.codes + n0 * B * s.W, B, doc0, n0,
                 min(n0 + NEURON_CHUNK, s.n_neurons), part, part + B * s.q)


cdef void merge_shared(const Search* s, const SharedBatch* sb, Py_ssize_t B, Py_ssize_t doc0,
                       Py_ssize_t b) noexcept nogil:
    """The chunks' votes added to the row of document doc0 + b chunk after chunk, then
    normalised: the sums search_batch makes, whichever thread searched a chunk."""
    cdef Py_ssize_t c
    cdef const double* part
    cdef double total = 0.0
    for c in range(sb.n_chunks):
        part = sb.parts + c * B * (s.q + 1)
        add_chunk(s, 1, doc0 + b, part + b * s.q, part + B * s.q + b, &total)
    normalise(s, 1, doc0 + b, &total)


def predict(X, const int32_t[:, ::1] synapses, const uint64_t[:, :, ::1] mem,
            const int64_t[::1] lab_ptr, const int32_t[::1] lab_idx, int model, int policy,
            uint64_t seed, double[:, ::1] out, int64_t row0=0, int64_t entry0=0,
            summary=None, index=None):
    """Beliefs of the rows of X (a C-contiguous float array or a canonical CSR matrix) into
    out (n_docs, q), which must be all zeros; or, with ``summary`` (from new_summary), each
    (row, neuron)'s outcome into it (out then only gives q: shape (0, q)). Row i of X is
    test document row0 + i and stored document t is number entry0 + t for the random keys
    (0 and 0 for a whole memory and query set). ``index``: as for encode.

    Rows are searched in shared batches, each batch's neurons split among the threads in
    chunks of NEURON_CHUNK; where the rows are many and the chunks fewer than the threads
    (or their votes too large to share), in batches of TASK_BATCH rows, one per task, each
    searching every neuron. Each row's votes are added chunk after chunk in both cases: the
    same beliefs."""
    _predict(*_input(X, synapses, index), synapses, mem, lab_ptr, lab_idx, model, policy, seed,
             out, row0, entry0, summary)


def _predict(const floating[::1] values, Py_ssize_t n_cols, const index_t[::1] indices,
             const index_t[::1] indptr, const int64_t[::1] wptr, const int32_t[:, ::1] wcell,
             const int32_t[:, ::1] synapses, const uint64_t[:, :, ::1] mem,
             const int64_t[::1] lab_ptr, const int32_t[::1] lab_idx, int model, int policy,
             uint64_t seed, double[:, ::1] out, int64_t row0, int64_t entry0, summary):
    """predict for the input _input describes. The patterns of a batch of documents are
    encoded by chunks of neurons (dense rows: up to 64 at once through their
    ranks) or by documents (CSR rows: each scattered once into the thread's dense buffer)."""
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const index_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef const int64_t* wp = &wptr[0] if wptr.shape[0] else NULL
    cdef const int32_t* cp = &wcell[0, 0] if wcell.shape[0] else NULL
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1 if pp != NULL else values.shape[0] // n_cols
    cdef Py_ssize_t q = out.shape[1], n_neurons = mem.shape[0], n_train = mem.shape[1]
    cdef Py_ssize_t W = mem.shape[2], S = synapses.shape[1]
    cdef Py_ssize_t xbuf_bytes = n_cols * sizeof(floating) if pp != NULL else 0
    cdef Py_ssize_t B, n_batches, k, c, i, n0, doc0, nb
    cdef Work* w = NULL
    cdef Search s = search_of(mem, lab_ptr, lab_idx, model, policy, seed, out, row0, entry0,
                              n_docs, summary)
    cdef Py_ssize_t n_chunks = (n_neurons + NEURON_CHUNK - 1) // NEURON_CHUNK
    cdef Py_ssize_t shared_per_doc = 8 * (n_neurons * W + n_chunks * (q + 1))
    cdef SharedBatch sb
    cdef int failed[1]
    failed[0] = 0
    if n_docs == 0:
        return
    if n_docs < TASK_BATCH * fr_get_max_threads() or (
            n_chunks >= fr_get_max_threads() and shared_per_doc * TASK_BATCH <= SHARED_BYTES):
        # too few documents for a batch per thread, or enough chunks of neurons to share
        # among the threads and room for their votes: shared batches one after another, so
        # that the memory is read and its tiles transposed once per batch, not per thread
        B = batch_size(n_docs, shared_per_doc, n_train)
        sb = shared_new(n_neurons, n_chunks, B, W, q)
        for doc0 in range(0, n_docs, B):
            nb = min(B, n_docs - doc0)
            with nogil, parallel():
                w = work_new(n_neurons, nb, W, n_train, q, xbuf_bytes, False)
                if w == NULL:
                    failed[0] = 1
                if pp == NULL:
                    for c in prange(n_chunks, schedule="static"):
                        n0 = c * NEURON_CHUNK
                        encode_docs(s.level, vp, n_cols, ip, pp, NULL, doc0, nb,
                                    &synapses[n0, 0], min(NEURON_CHUNK, n_neurons - n0), S, W,
                                    sb.codes + n0 * nb * W, nb * W, False, NULL, NULL, NULL,
                                    wp, cp)
                else:
                    for i in prange(nb, schedule="static"):
                        if w != NULL:
                            encode_docs(s.level, vp, n_cols, ip, pp, NULL, doc0 + i, 1,
                                        &synapses[0, 0], n_neurons, S, W, sb.codes + i * W,
                                        nb * W, False, NULL, <floating*> w.xbuf, w.rowbuf, wp,
                                        cp)
                # every thread must reach the worksharing loops; one without scratch skips
                for c in prange(n_chunks, schedule="dynamic"):
                    if w != NULL:
                        search_shared_chunk(w, &s, &sb, nb, doc0, c)
                if s.summary.dist == NULL and not failed[0]:  # (every chunk was searched)
                    for i in prange(nb, schedule="static"):
                        merge_shared(&s, &sb, nb, doc0, i)
                work_free(w)
            if failed[0]:
                break
        shared_free(&sb)
    else:
        B = TASK_BATCH
        n_batches = (n_docs + B - 1) // B
        with nogil, parallel():
            w = work_new(n_neurons, B, W, n_train, q, xbuf_bytes, True)
            if w == NULL:
                failed[0] = 1
            for k in prange(n_batches, schedule="dynamic"):
                if w != NULL:
                    doc0 = k * B
                    nb = min(B, n_docs - doc0)
                    encode_docs(s.level, vp, n_cols, ip, pp, NULL, doc0, nb, &synapses[0, 0],
                                n_neurons, S, W, w.codes, nb * W, False, NULL,
                                <floating*> w.xbuf, w.rowbuf, wp, cp)
                    search_batch(w, &s, nb, doc0)
            work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the VG-RAM search scratch")
