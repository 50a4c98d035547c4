# cython: language_level=3
"""Tie-aware multi-label metric kernel: one sort per row, every ranking type from it.

The Python layer is ``fastrank.metrics``; it validates input, calls these kernels and turns
per-document values and per-label counts into the averaged metrics (SPEC §2-§4).

Per row the kernel sorts the beliefs once (``_tiesort``), then

* the *group* pass walks the tie groups and yields every value of the dense, standard and
  modified rankings (they differ only in coverage, the one metric that reads rank numbers);
* the *ordinal* pass shuffles each tie group with the row's own counter-based generator
  (``row_state(seed, row)``, exactly as ``fastrank.ranking.rank(..., "ordinal")`` does) and
  walks the positions.

Outputs
-------
doc : float64 (n, N_SLOTS)      per-document values, column codes below (mirrored in
                                fastrank/metrics/_common.py)
lab : float64 (n_chunks, 5, q)  per chunk of rows, counts per label: rows 0-1 (ordinal)
                                and 2-3 (group) are predicted-and-relevant (TP_i) and
                                predicted (TP_i + FP_i) under the perfect cutoff (SPEC §3);
                                row 4 is relevant (TP_i + FN_i).
Rows are split into n_chunks fixed chunks; each chunk owns its counters, so sums never race
and never depend on the thread count.
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from _tiesort cimport (
    SortWork, desc_key, floating, index_t, row_state, shuffle_groups, sort_csr_row,
    sort_dense_row, sort_work_free, sort_work_new,
)

# family flags
cdef enum:
    ORDINAL = 1
    GROUP = 2

# per-document columns
cdef enum:
    N_REL = 0
    O_ONE_ERROR = 1
    O_COVERAGE = 2
    O_RANKING_LOSS = 3
    O_AP_POSITION = 4
    O_AP_LABEL = 5
    O_R_PRECISION = 6
    O_TP = 7
    O_NPRED = 8
    G_ONE_ERROR = 9
    G_COVERAGE_DENSE = 10
    G_COVERAGE_STANDARD = 11
    G_COVERAGE_MODIFIED = 12
    G_RANKING_LOSS = 13
    G_AP_POSITION = 14
    G_AP_LABEL = 15
    G_R_PRECISION = 16
    G_TP = 17
    G_NPRED = 18
    N_SLOTS = 19


cdef inline Py_ssize_t _group_cut(const int32_t* end, Py_ssize_t q, Py_ssize_t k) noexcept nogil:
    """End of the shortest prefix of whole tie groups holding at least k labels (0 if k<=0)."""
    cdef Py_ssize_t stop = 0
    if k <= 0:
        return 0
    while stop < q and stop < k:
        stop = end[stop]
    return stop


cdef inline void _group_pass(SortWork* w, Py_ssize_t q, const uint8_t* y, Py_ssize_t n_rel,
                             uint64_t zkey, double* out, double* lab) noexcept nogil:
    """Dense/standard/modified values of one sorted row (whole tie groups)."""
    cdef int32_t* order = w.order
    cdef int32_t* end = w.end
    cdef Py_ssize_t start = 0, stop, p, group = 0, rel_g, cum_rel = 0, cum_nonrel = 0
    cdef Py_ssize_t m = 0, cut, tp, npred, c
    cdef Py_ssize_t cov_dense = 0, cov_standard = 0, cov_modified = 0
    cdef double loss = 0.0, ap_pos = 0.0, ap_lab = 0.0, prec
    cdef bint is_zero
    cut = _group_cut(end, q, n_rel)
    tp = 0
    npred = 0
    out[G_ONE_ERROR] = 1.0
    while start < q:
        stop = end[start]
        is_zero = w.keys[start] == zkey
        rel_g = 0
        for p in range(start, stop):
            rel_g += y[order[p]]
        cum_rel += rel_g
        cum_nonrel += (stop - start) - rel_g
        if group == 0 and rel_g == stop - start:
            out[G_ONE_ERROR] = 0.0
        if rel_g > 0:
            cov_dense = group
            cov_standard = start
            cov_modified = stop - 1
            loss += <double> rel_g * cum_nonrel
            m += 1
            prec = <double> cum_rel / stop
            ap_lab += rel_g * prec
            if not is_zero:
                ap_pos += prec
        if stop <= cut and not is_zero:
            tp += rel_g
            npred += stop - start
            for p in range(start, stop):
                c = order[p]
                lab[q + c] += 1.0
                if y[c]:
                    lab[c] += 1.0
        group += 1
        start = stop
    out[G_COVERAGE_DENSE] = cov_dense
    out[G_COVERAGE_STANDARD] = cov_standard
    out[G_COVERAGE_MODIFIED] = cov_modified
    out[G_RANKING_LOSS] = loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    out[G_AP_POSITION] = ap_pos / m if n_rel > 0 else 1.0
    out[G_AP_LABEL] = ap_lab / n_rel if n_rel > 0 else 1.0
    out[G_R_PRECISION] = <double> tp / npred if npred > 0 else 0.0
    out[G_TP] = tp
    out[G_NPRED] = npred


cdef inline void _ordinal_pass(SortWork* w, Py_ssize_t q, const uint8_t* y, Py_ssize_t n_rel,
                               uint64_t zkey, uint64_t seed, Py_ssize_t row, double* out,
                               double* lab) noexcept nogil:
    """Ordinal values of one sorted row: shuffle inside tie groups, then walk positions."""
    cdef int32_t* order = w.order
    cdef Py_ssize_t p, c, cum_rel = 0, cum_nonrel = 0, cov = 0, tp = 0, npred = 0
    cdef double loss = 0.0, ap_pos = 0.0, ap_lab = 0.0, prec
    cdef bint is_zero
    cdef uint64_t state = row_state(seed, row)
    shuffle_groups(order, w.end, q, &state)
    for p in range(q):
        c = order[p]
        is_zero = w.keys[p] == zkey
        if y[c]:
            cum_rel += 1
            loss += cum_nonrel
            cov = p
            prec = <double> cum_rel / (p + 1)
            ap_lab += prec
            if not is_zero:
                ap_pos += prec
        else:
            cum_nonrel += 1
        if p < n_rel and not is_zero:
            npred += 1
            lab[q + c] += 1.0
            if y[c]:
                tp += 1
                lab[c] += 1.0
    out[O_ONE_ERROR] = 1.0 - y[order[0]]
    out[O_COVERAGE] = cov
    out[O_RANKING_LOSS] = loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    out[O_AP_POSITION] = ap_pos / n_rel if n_rel > 0 else 1.0
    out[O_AP_LABEL] = ap_lab / n_rel if n_rel > 0 else 1.0
    out[O_R_PRECISION] = <double> tp / npred if npred > 0 else 0.0
    out[O_TP] = tp
    out[O_NPRED] = npred


cdef inline void _row(SortWork* w, Py_ssize_t q, const uint8_t* y, int families, uint64_t seed,
                      Py_ssize_t row, double* out, double* lab) noexcept nogil:
    cdef Py_ssize_t c, n_rel = 0
    cdef uint64_t zkey = desc_key(0.0)
    cdef double* rel = lab + 4 * q
    for c in range(q):
        n_rel += y[c]
        rel[c] += y[c]
    out[N_REL] = n_rel
    if families & GROUP:  # before the ordinal pass, which shuffles w.order in place
        _group_pass(w, q, y, n_rel, zkey, out, lab + 2 * q)
    if families & ORDINAL:
        _ordinal_pass(w, q, y, n_rel, zkey, seed, row, out, lab)


def evaluate_dense(const floating[::1] flat, Py_ssize_t n, Py_ssize_t q, Py_ssize_t row_stride,
                   Py_ssize_t col_stride, const uint8_t[:, ::1] y, int families, uint64_t seed,
                   double[:, ::1] doc, double[:, :, ::1] lab):
    """Fill ``doc`` and ``lab`` (zeroed by the caller) for a dense (n, q) belief matrix given
    as its flat buffer and element strides."""
    cdef SortWork* w
    cdef Py_ssize_t chunk, i, lo, hi, n_chunks = lab.shape[0]
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        else:
            for chunk in prange(n_chunks, schedule="dynamic"):
                lo = chunk * n // n_chunks
                hi = (chunk + 1) * n // n_chunks
                for i in range(lo, hi):
                    sort_dense_row(&flat[i * row_stride], col_stride, q, w)
                    _row(w, q, &y[i, 0], families, seed, i, &doc[i, 0], &lab[chunk, 0, 0])
            sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")


def evaluate_csr(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                 Py_ssize_t q, const uint8_t[:, ::1] y, int families, uint64_t seed,
                 double[:, ::1] doc, double[:, :, ::1] lab):
    """As evaluate_dense for a canonical CSR belief matrix (implicit zeros: one tie group)."""
    cdef SortWork* w
    cdef Py_ssize_t chunk, i, lo, hi, start, nnz, n = indptr.shape[0] - 1
    cdef Py_ssize_t n_chunks = lab.shape[0]
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        else:
            for chunk in prange(n_chunks, schedule="dynamic"):
                lo = chunk * n // n_chunks
                hi = (chunk + 1) * n // n_chunks
                for i in range(lo, hi):
                    start = indptr[i]
                    nnz = indptr[i + 1] - start
                    if nnz > 0:
                        sort_csr_row(&data[start], &indices[start], nnz, q, w)
                    else:
                        sort_csr_row(<floating*> NULL, <index_t*> NULL, 0, q, w)
                    _row(w, q, &y[i, 0], families, seed, i, &doc[i, 0], &lab[chunk, 0, 0])
            sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")


# ---- cutoff: the predicted sets themselves ----------------------------------------------

cdef inline void _cut_row(SortWork* w, Py_ssize_t q, Py_ssize_t k, bint ordinal, bint drop_zero,
                          uint64_t seed, Py_ssize_t row, uint8_t* out) noexcept nogil:
    cdef Py_ssize_t p, cut
    cdef uint64_t zkey = desc_key(0.0)
    cdef uint64_t state
    if ordinal:
        state = row_state(seed, row)
        shuffle_groups(w.order, w.end, q, &state)
        cut = k if k < q else q
        if cut < 0:
            cut = 0
    else:
        cut = _group_cut(w.end, q, k)
    for p in range(cut):
        if not (drop_zero and w.keys[p] == zkey):
            out[w.order[p]] = 1


def cutoff_dense(const floating[::1] flat, Py_ssize_t n, Py_ssize_t q, Py_ssize_t row_stride,
                 Py_ssize_t col_stride, const int64_t[::1] k, bint ordinal, bint drop_zero,
                 uint64_t seed, uint8_t[:, ::1] out):
    """out[i] <- 1 on the first k[i] positions of row i (whole tie groups unless ordinal),
    leaving out labels of belief 0 when drop_zero; ``out`` is zeroed by the caller."""
    cdef SortWork* w
    cdef Py_ssize_t i
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule="static"):
                sort_dense_row(&flat[i * row_stride], col_stride, q, w)
                _cut_row(w, q, k[i], ordinal, drop_zero, seed, i, &out[i, 0])
            sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")


def cutoff_csr(const floating[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
               Py_ssize_t q, const int64_t[::1] k, bint ordinal, bint drop_zero, uint64_t seed,
               uint8_t[:, ::1] out):
    """As cutoff_dense for a canonical CSR belief matrix."""
    cdef SortWork* w
    cdef Py_ssize_t i, start, nnz, n = indptr.shape[0] - 1
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule="static"):
                start = indptr[i]
                nnz = indptr[i + 1] - start
                if nnz > 0:
                    sort_csr_row(&data[start], &indices[start], nnz, q, w)
                else:
                    sort_csr_row(<floating*> NULL, <index_t*> NULL, 0, q, w)
                _cut_row(w, q, k[i], ordinal, drop_zero, seed, i, &out[i, 0])
            sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")
