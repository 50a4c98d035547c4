# cython: language_level=3
"""Driver of the top-k metrics of extreme multi-label classification (core/tie_topk.h).

The Python wrapper is ``fastrank.metrics._topk``; it validates the input. Documents are cut
into fixed chunks of ``CHUNK_ROWS`` rows; each chunk is evaluated by one thread, in row
order, into its own sums ``out[chunk, mode, value, cut-off]``, so the sums never depend on
the number of threads. The GIL is released; each thread owns its scratch. Rows are read in
place when they are float64 (and int32 labels), else converted row by row.

``err[chunk]`` is set to ``row * 4 + code`` for the first row of the chunk that is invalid
(code: 2 a label listed twice, 3 a label out of range), else -1.
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc

from _tiesort cimport floating, index_t, row_state, shuffle_groups

cdef extern from "core/tie_topk.h" nogil:
    ctypedef struct fr_tk_entry:
        pass
    ctypedef struct fr_tk_rel:
        pass
    ctypedef struct fr_tk_work:
        int32_t* order
        int32_t* end
    enum:
        FR_TK_EXPECTED
        FR_TK_OPTIMISTIC
        FR_TK_PESSIMISTIC
        FR_TK_ORDINAL
        FR_TK_STABLE
        FR_TK_TREC
        FR_TK_N_MODES
        FR_TK_N_VALUES
        FR_TK_MAX_CUTOFFS
        FR_TK_OK
    fr_tk_work* fr_tk_work_new(int64_t q, int64_t K, int nk, const int64_t* ks,
                               const double* disc, const double* dcum, int64_t ns_max,
                               int64_t m_max, int order_modes, int sparse)
    void fr_tk_work_free(fr_tk_work* w)
    void fr_tk_discounts(int64_t K, double* disc, double* dcum)
    int fr_tk_select(fr_tk_work* w, const double* val, const int32_t* lab, int64_t ns,
                     int sorted)
    void fr_tk_group_modes(fr_tk_work* w, int flags, const int32_t* truth, int64_t m,
                           const double* invp, double weight, double* out)
    int64_t fr_tk_order(fr_tk_work* w, int mode)
    void fr_tk_order_modes(fr_tk_work* w, int mode, const int32_t* truth, int64_t m,
                           const double* invp, double weight, double* out)

cdef enum:
    CHUNK = 1024

CHUNK_ROWS = CHUNK
N_MODES = FR_TK_N_MODES
N_VALUES = FR_TK_N_VALUES
MAX_CUTOFFS = FR_TK_MAX_CUTOFFS
cdef int GROUP_FLAGS = (1 << FR_TK_EXPECTED) | (1 << FR_TK_OPTIMISTIC) | (1 << FR_TK_PESSIMISTIC)
cdef int ORDER_FLAGS = (1 << FR_TK_ORDINAL) | (1 << FR_TK_STABLE) | (1 << FR_TK_TREC)


cdef struct Job:
    # what every row shares
    int flags
    uint64_t seed
    int64_t first_row
    const int64_t* tptr     # truth CSR: indptr (n + 1), ascending indices
    const int32_t* tind
    const double* invp      # inverse propensities, or NULL
    const double* weight    # document weights, or NULL
    double* out             # (n_chunks, N_MODES, N_VALUES, nk)
    int64_t* err            # (n_chunks,)
    int nk


cdef inline int _document(fr_tk_work* w, const Job* job, Py_ssize_t row, const double* val,
                          const int32_t* lab, Py_ssize_t ns, int sorted,
                          double* out) noexcept nogil:
    """All requested modes of one document; a row error code, or FR_TK_OK."""
    cdef int code = fr_tk_select(w, val, lab, ns, sorted)
    cdef int mode
    cdef int64_t length
    cdef const int32_t* truth = job.tind + job.tptr[row]
    cdef int64_t m = job.tptr[row + 1] - job.tptr[row]
    cdef double weight = job.weight[row] if job.weight != NULL else 1.0
    if code != FR_TK_OK:
        return code
    if job.flags & GROUP_FLAGS:
        fr_tk_group_modes(w, job.flags, truth, m, job.invp, weight, out)
    for mode in range(FR_TK_ORDINAL, FR_TK_TREC + 1):  # the order modes
        if job.flags & (1 << mode):
            length = fr_tk_order(w, mode)
            if mode == FR_TK_ORDINAL:  # the shuffle of fastrank.ranking.rank, row by row
                shuffle_groups(w.order, w.end, length,
                               row_state(job.seed, job.first_row + row))
            fr_tk_order_modes(w, mode, truth, m, job.invp, weight, out)
    return FR_TK_OK


cdef inline void _record(Job* job, Py_ssize_t chunk, Py_ssize_t row, int code) noexcept nogil:
    if job.err[chunk] < 0:
        job.err[chunk] = row * 4 + code


cdef Job _job(int flags, uint64_t seed, int64_t first_row, const int64_t[::1] tptr,
              const int32_t[::1] tind, const double[::1] invp, const double[::1] weight,
              double[:, :, :, ::1] out, int64_t[::1] err):
    cdef Job job
    job.flags = flags
    job.seed = seed
    job.first_row = first_row
    job.tptr = &tptr[0]
    job.tind = &tind[0] if tind.shape[0] else NULL
    job.invp = &invp[0] if invp.shape[0] else NULL
    job.weight = &weight[0] if weight.shape[0] else NULL
    job.out = &out[0, 0, 0, 0]
    job.err = &err[0]
    job.nk = <int> out.shape[3]
    return job


cdef fr_tk_work* _work(Py_ssize_t q, const int64_t[::1] ks, const double* disc,
                       const double* dcum, Py_ssize_t ns_max, Py_ssize_t m_max, int flags,
                       int sparse) noexcept nogil:
    return fr_tk_work_new(q, ks[ks.shape[0] - 1], <int> ks.shape[0], &ks[0], disc, dcum,
                          ns_max, m_max, (flags & ORDER_FLAGS) != 0, sparse)


def scratch_bytes(Py_ssize_t q, Py_ssize_t K, Py_ssize_t ns_max, Py_ssize_t m_max, int flags,
                  bint sparse):
    """(bytes of the discount tables, bytes each thread allocates) of a run_dense
    (sparse false) or run_sparse call with cut-offs up to K: fr_tk_work_new's scratch and
    the row's copies, at most."""
    cdef Py_ssize_t top = min(2 * K + 64, ns_max + 1)
    cdef Py_ssize_t per = top * sizeof(fr_tk_entry) + (m_max + 1) * sizeof(fr_tk_rel) + 8 * K
    if flags & ORDER_FLAGS:
        per += 2 * q * sizeof(int32_t)  # order, end
    per += q + (ns_max + 1) * (sizeof(double) + sizeof(int32_t)) if sparse else q * sizeof(double)
    return 16 * K + 8, per


def _tables(const int64_t[::1] ks):
    import numpy as np
    K = ks[ks.shape[0] - 1]
    disc = np.empty(K, dtype=np.float64)
    dcum = np.empty(K + 1, dtype=np.float64)
    cdef double[::1] d = disc, c = dcum
    fr_tk_discounts(K, &d[0], &c[0])
    return disc, dcum


def run_dense(const floating[::1] values, Py_ssize_t row_stride, Py_ssize_t col_stride,
              Py_ssize_t n, Py_ssize_t q, const int64_t[::1] ks, int flags, uint64_t seed,
              int64_t first_row, const int64_t[::1] tptr, const int32_t[::1] tind,
              Py_ssize_t m_max, const double[::1] invp, const double[::1] weight,
              double[:, :, :, ::1] out, int64_t[::1] err):
    """Dense beliefs: row i is values[i * row_stride + j * col_stride], j < q. ks
    ascending, its last entry K <= q."""
    disc_arr, dcum_arr = _tables(ks)
    cdef double[::1] disc = disc_arr, dcum = dcum_arr
    cdef Job job = _job(flags, seed, first_row, tptr, tind, invp, weight, out, err)
    cdef Py_ssize_t n_chunks = out.shape[0], chunk, row, j
    cdef Py_ssize_t stride = out.shape[1] * out.shape[2] * out.shape[3]
    cdef bint in_place = floating is double and col_stride == 1
    cdef fr_tk_work* w = NULL  # each thread sets its own
    cdef double* buf = NULL
    cdef const double* val
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = _work(q, ks, &disc[0], &dcum[0], q, m_max, flags, 0)
        buf = NULL if in_place else <double*> malloc(q * sizeof(double))
        for chunk in prange(n_chunks, schedule="dynamic"):
            if w == NULL or (buf == NULL and not in_place):
                failed[0] = 1
                continue
            for row in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
                if in_place:
                    val = <const double*> &values[row * row_stride]
                else:
                    for j in range(q):
                        buf[j] = values[row * row_stride + j * col_stride]
                    val = buf
                _document(w, &job, row, val, NULL, q, 0, job.out + chunk * stride)
        fr_tk_work_free(w)
        free(buf)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the top-k metrics' scratch")


def run_sparse(const floating[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, Py_ssize_t row_len, int sorted, Py_ssize_t n,
               Py_ssize_t q, const int64_t[::1] ks, int flags, uint64_t seed,
               int64_t first_row, const int64_t[::1] tptr, const int32_t[::1] tind,
               Py_ssize_t m_max, const double[::1] invp, const double[::1] weight,
               double[:, :, :, ::1] out, int64_t[::1] err):
    """Sparse beliefs, the scored labels of row i at data/indices[lo:hi]: a CSR matrix
    (indptr given, indices ascending: sorted=1) or a top-k pair of (n, row_len) arrays
    flattened (empty indptr, rows of row_len entries, labels in any order: sorted=0)."""
    disc_arr, dcum_arr = _tables(ks)
    cdef double[::1] disc = disc_arr, dcum = dcum_arr
    cdef Job job = _job(flags, seed, first_row, tptr, tind, invp, weight, out, err)
    cdef Py_ssize_t n_chunks = out.shape[0], chunk, row, j, lo, ns
    cdef Py_ssize_t stride = out.shape[1] * out.shape[2] * out.shape[3]
    cdef Py_ssize_t ns_max = row_len
    cdef bint csr = indptr.shape[0] > 0
    cdef const floating* dp = &data[0] if data.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    # labels read in place unless there are none stored: a NULL label list means a dense row
    cdef bint direct_val = floating is double, direct_lab = index_t is int32_t and ip != NULL
    cdef fr_tk_work* w = NULL  # each thread sets its own
    cdef double* vbuf = NULL
    cdef int32_t* lbuf = NULL
    cdef const double* val
    cdef const int32_t* lab
    cdef int failed[1]
    cdef int code
    failed[0] = 0
    with nogil, parallel():
        w = _work(q, ks, &disc[0], &dcum[0], ns_max, m_max, flags, 1)
        vbuf = NULL if direct_val else <double*> malloc((ns_max + 1) * sizeof(double))
        lbuf = NULL if direct_lab else <int32_t*> malloc((ns_max + 1) * sizeof(int32_t))
        for chunk in prange(n_chunks, schedule="dynamic"):
            if w == NULL or (vbuf == NULL and not direct_val) or (lbuf == NULL and not direct_lab):
                failed[0] = 1
                continue
            for row in range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK)):
                if csr:
                    lo = indptr[row]
                    ns = indptr[row + 1] - lo
                else:
                    lo = row * row_len
                    ns = row_len
                if direct_val:
                    val = <const double*> (dp + lo)
                else:
                    for j in range(ns):
                        vbuf[j] = dp[lo + j]
                    val = vbuf
                if direct_lab:
                    lab = <const int32_t*> (ip + lo)
                else:
                    for j in range(ns):
                        # an index beyond int32 is out of range (q < 2**31): made negative
                        lbuf[j] = <int32_t> ip[lo + j] if 0 <= ip[lo + j] < q else -1
                    lab = lbuf
                code = _document(w, &job, row, val, lab, ns, sorted, job.out + chunk * stride)
                if code != FR_TK_OK:
                    _record(&job, chunk, row, code)
                    break
        fr_tk_work_free(w)
        free(vbuf)
        free(lbuf)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the top-k metrics' scratch")
