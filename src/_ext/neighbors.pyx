# cython: language_level=3
"""Exact top-k cosine neighbours and the label aggregation of kNN / ML-kNN.

The Python wrapper is ``fastrank.neighbors``; it validates input, normalises rows (with the
kernels below) and allocates the outputs.

Neighbour order: similarity descending, then base index ascending. Each query keeps a bounded
min-heap of its k best (similarity, index) pairs *inside its output row* (root = the worst kept
pair), so a query never holds more than k candidates; the heap is sorted in place at the end.
Similarities are clipped to [-1, 1] (rounding can push a normalised dot product past 1).

Dense input: OpenMP over blocks of queries; each thread scans B in blocks, computing each
(query block x base block) similarity block with one single-threaded BLAS GEMM (SciPy's
BLAS through scipy.linalg.cython_blas) and selecting from it.
CSR input: OpenMP over queries; each thread accumulates the dot products of one query with
every base document through the inverted index (B transposed, CSR) into its own dense
accumulator, then selects. Every query is summed in a fixed order, so results do not depend on
the thread count.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport fabs, sqrt
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from scipy.linalg.cython_blas cimport dgemm, sgemm

from _tiesort cimport floating, index_t

# aggregation codes, mirrored in fastrank/neighbors.py (_AGGREGATES)
cdef enum:
    AGG_MAX = 0
    AGG_SUM = 1
    AGG_COUNT = 2


# ---- bounded heap of (similarity, index), root = the pair ranked last ----------------------

cdef inline bint _after(floating va, int64_t ia, floating vb, int64_t ib) noexcept nogil:
    """True when (va, ia) ranks after (vb, ib): lower similarity, or equal and larger index."""
    return va < vb or (va == vb and ia > ib)


cdef inline void _sift_down(floating* hv, int64_t* hi, Py_ssize_t size,
                            Py_ssize_t pos) noexcept nogil:
    cdef Py_ssize_t child
    cdef floating v = hv[pos]
    cdef int64_t j = hi[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and _after(hv[child + 1], hi[child + 1], hv[child], hi[child]):
            child += 1
        if not _after(hv[child], hi[child], v, j):
            break
        hv[pos] = hv[child]
        hi[pos] = hi[child]
        pos = child
    hv[pos] = v
    hi[pos] = j


cdef inline void _push(floating* hv, int64_t* hi, Py_ssize_t* size, Py_ssize_t k,
                       floating v, int64_t j) noexcept nogil:
    """Offer (v, j) to a heap of capacity k holding size[0] pairs."""
    cdef Py_ssize_t pos, parent
    if v > 1:
        v = 1
    elif v < -1:
        v = -1
    if size[0] < k:
        pos = size[0]
        size[0] += 1
        while pos > 0:
            parent = (pos - 1) >> 1
            if not _after(v, j, hv[parent], hi[parent]):
                break
            hv[pos] = hv[parent]
            hi[pos] = hi[parent]
            pos = parent
        hv[pos] = v
        hi[pos] = j
    elif _after(hv[0], hi[0], v, j):
        hv[0] = v
        hi[0] = j
        _sift_down(hv, hi, k, 0)


cdef inline void _sort_heap(floating* hv, int64_t* hi, Py_ssize_t size) noexcept nogil:
    """Heap sort in place: best pair first."""
    cdef Py_ssize_t end
    cdef floating v
    cdef int64_t j
    for end in range(size - 1, 0, -1):
        v = hv[0]
        j = hi[0]
        hv[0] = hv[end]
        hi[0] = hi[end]
        hv[end] = v
        hi[end] = j
        _sift_down(hv, hi, end, 0)


# ---- row normalisation ----------------------------------------------------------------------

cdef inline double _inv_norm(const floating* x, Py_ssize_t m) noexcept nogil:
    """1 / Euclidean norm of x[0..m), 0 for a zero vector (scaled to avoid overflow)."""
    cdef Py_ssize_t j
    cdef double top = 0, ss = 0, t
    for j in range(m):
        t = fabs(x[j])
        if t > top:
            top = t
    if top == 0:
        return 0.0
    for j in range(m):
        t = x[j] / top
        ss += t * t
    return 1.0 / (top * sqrt(ss))


def normalize_dense(const floating[:, ::1] X, floating[:, ::1] out):
    """out[i] <- X[i] / ||X[i]|| (a zero row stays zero)."""
    cdef Py_ssize_t i, j, n = X.shape[0], m = X.shape[1]
    cdef double s
    for i in prange(n, nogil=True, schedule="static"):
        s = _inv_norm(&X[i, 0], m)
        for j in range(m):
            out[i, j] = <floating> (X[i, j] * s)


def normalize_csr(const floating[::1] data, const index_t[::1] indptr, floating[::1] out):
    """The data array of a CSR matrix with unit-norm rows (a zero row stays zero)."""
    cdef Py_ssize_t i, p, lo, hi, n = indptr.shape[0] - 1
    cdef double s
    for i in prange(n, nogil=True, schedule="static"):
        lo = indptr[i]
        hi = indptr[i + 1]
        if hi > lo:
            s = _inv_norm(&data[lo], hi - lo)
            for p in range(lo, hi):
                out[p] = <floating> (data[p] * s)


# ---- top-k search -----------------------------------------------------------------------------

cdef inline void _gemm(const floating* b, const floating* q, floating* s, int mb, int mq,
                       int d) noexcept nogil:
    """Row-major s (mq x mb) <- q (mq x d) @ b (mb x d).T, as column-major s.T = b @ q.T."""
    cdef char ta = b'T', tb = b'N'
    cdef float one_s = 1, zero_s = 0
    cdef double one_d = 1, zero_d = 0
    if floating is float:
        sgemm(&ta, &tb, &mb, &mq, &d, &one_s, <float*> b, &d, <float*> q, &d, &zero_s,
              <float*> s, &mb)
    else:
        dgemm(&ta, &tb, &mb, &mq, &d, &one_d, <double*> b, &d, <double*> q, &d, &zero_d,
              <double*> s, &mb)


def topk_dense(const floating[:, ::1] Q, const floating[:, ::1] B, floating[:, ::1] out_sim,
               int64_t[:, ::1] out_idx, bint exclude_self, Py_ssize_t block_q,
               Py_ssize_t block_b):
    """Top-k of unit-norm rows: out[i] <- the k best (cos, j) of Q[i] against B, sorted.
    With exclude_self, j == i is never a candidate. OpenMP over query blocks; each thread
    computes its (block_q x block_b) similarity blocks with a GEMM and must therefore run
    single-threaded BLAS (the caller sees to it). The blocks are fixed by block_q/block_b,
    not by the thread count, so every similarity is computed the same way on any thread count."""
    cdef Py_ssize_t nq = Q.shape[0], nb = B.shape[0], k = out_sim.shape[1]
    cdef Py_ssize_t n_blocks = (nq + block_q - 1) // block_q
    cdef int d = <int> Q.shape[1]
    cdef Py_ssize_t blk, q0, b0, mq, mb, r, j, i
    cdef floating* row
    cdef floating* S = NULL
    cdef Py_ssize_t* size = NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        S = <floating*> malloc(block_q * block_b * sizeof(floating))
        size = <Py_ssize_t*> malloc(block_q * sizeof(Py_ssize_t))
        if S == NULL or size == NULL:
            failed[0] = 1
        else:
            for blk in prange(n_blocks, schedule="dynamic"):
                q0 = blk * block_q
                mq = min(block_q, nq - q0)
                for r in range(mq):
                    size[r] = 0
                b0 = 0
                while b0 < nb:
                    mb = min(block_b, nb - b0)
                    _gemm(&B[b0, 0], &Q[q0, 0], S, <int> mb, <int> mq, d)
                    for r in range(mq):
                        i = q0 + r
                        row = S + r * mb
                        for j in range(mb):
                            if size[r] == k and row[j] < out_sim[i, 0]:
                                continue  # cannot enter: below the worst kept similarity
                            if exclude_self and b0 + j == i:
                                continue
                            _push(&out_sim[i, 0], &out_idx[i, 0], &size[r], k, row[j], b0 + j)
                    b0 = b0 + block_b
                for r in range(mq):
                    _sort_heap(&out_sim[q0 + r, 0], &out_idx[q0 + r, 0], size[r])
        free(S)
        free(size)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the similarity blocks")


def topk_csr(const floating[::1] q_data, const index_t[::1] q_indices,
             const index_t[::1] q_indptr, const floating[::1] t_data,
             const index_t[::1] t_indices, const index_t[::1] t_indptr, Py_ssize_t nb,
             floating[:, ::1] out_sim, int64_t[:, ::1] out_idx, bint exclude_self):
    """As topk_dense for CSR queries (unit-norm rows) against the transposed base
    (n_features x nb CSR, unit-norm columns). Base documents sharing no feature with the
    query have cosine 0 and are only scanned when fewer than k documents score above 0."""
    cdef Py_ssize_t nq = q_indptr.shape[0] - 1, k = out_sim.shape[1]
    cdef Py_ssize_t i, p, r, t, n_touched, n_pos, size
    cdef int64_t j
    cdef floating w
    cdef floating* acc = NULL
    cdef int64_t* touched = NULL
    cdef unsigned char* mark = NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        acc = <floating*> calloc(nb, sizeof(floating))
        touched = <int64_t*> malloc(nb * sizeof(int64_t))
        mark = <unsigned char*> calloc(nb, 1)
        if acc == NULL or touched == NULL or mark == NULL:
            failed[0] = 1
        else:
            for i in prange(nq, schedule="dynamic", chunksize=16):
                n_touched = 0
                for p in range(q_indptr[i], q_indptr[i + 1]):
                    t = q_indices[p]
                    w = q_data[p]
                    for r in range(t_indptr[t], t_indptr[t + 1]):
                        j = t_indices[r]
                        if not mark[j]:
                            mark[j] = 1
                            touched[n_touched] = j
                            n_touched = n_touched + 1
                        acc[j] += w * t_data[r]
                n_pos = 0
                for r in range(n_touched):
                    j = touched[r]
                    if acc[j] > 0 and not (exclude_self and j == i):
                        n_pos = n_pos + 1
                size = 0
                if n_pos >= k:
                    for r in range(n_touched):
                        j = touched[r]
                        if acc[j] > 0 and not (exclude_self and j == i):
                            _push(&out_sim[i, 0], &out_idx[i, 0], &size, k, acc[j], j)
                else:
                    for j in range(nb):
                        if not (exclude_self and j == i):
                            _push(&out_sim[i, 0], &out_idx[i, 0], &size, k, acc[j], j)
                for r in range(n_touched):
                    acc[touched[r]] = 0
                    mark[touched[r]] = 0
                _sort_heap(&out_sim[i, 0], &out_idx[i, 0], size)
        free(acc)
        free(touched)
        free(mark)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the neighbour-search accumulator")


# ---- from neighbours to labels ---------------------------------------------------------------

def label_counts(const int64_t[:, ::1] neighbors, const int32_t[::1] y_indptr,
                 const int32_t[::1] y_indices, int32_t[:, ::1] out):
    """out[i, c] += number of neighbours of row i that carry label c (eq. 2.4); out zeroed."""
    cdef Py_ssize_t i, m, p, a, n = neighbors.shape[0], k = neighbors.shape[1]
    for i in prange(n, nogil=True, schedule="static"):
        for m in range(k):
            a = neighbors[i, m]
            for p in range(y_indptr[a], y_indptr[a + 1]):
                out[i, y_indices[p]] += 1


def knn_aggregate(const floating[:, ::1] sims, const int64_t[:, ::1] neighbors,
                  const int32_t[::1] y_indptr, const int32_t[::1] y_indices, int mode,
                  double[:, ::1] out):
    """Beliefs of the multi-label kNN from each row's neighbours (out zeroed):
    max -- largest cosine among the neighbours carrying the label;
    sum -- sum of those cosines / k;  count -- number of those neighbours / k.
    Negative cosines count as 0 for max and sum."""
    cdef Py_ssize_t i, m, p, a, c, n = sims.shape[0], k = sims.shape[1]
    cdef double s
    for i in prange(n, nogil=True, schedule="static"):
        for m in range(k):
            a = neighbors[i, m]
            s = sims[i, m]
            if s < 0:
                s = 0
            for p in range(y_indptr[a], y_indptr[a + 1]):
                c = y_indices[p]
                if mode == AGG_MAX:
                    if s > out[i, c]:
                        out[i, c] = s
                elif mode == AGG_SUM:
                    out[i, c] += s
                else:
                    out[i, c] += 1
        if mode != AGG_MAX:
            for c in range(out.shape[1]):
                out[i, c] /= k
