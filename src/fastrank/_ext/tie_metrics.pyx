# cython: language_level=3
"""Tie-aware multi-label metric kernel: one sort per row, every ranking type from it.

The Python layer is ``fastrank.metrics``; it validates input, calls these kernels and turns
per-document values and per-label counts into the averaged metrics (Melotti 2009, ch. 4).

Per row the kernel sorts the beliefs once (``_tiesort``), then

* the *group* pass walks the tie groups and yields every value of the dense, standard and
  modified rankings (they differ only in coverage, the one metric that reads rank numbers);
* the *expected* pass walks the tie groups again and writes the exact
  expectation of every ordinal value over uniformly random orders inside the groups
  (closed forms below); for the two category-macro metrics, whose per-label denominators
  are random, it records the tie group cut by the cutoff (the only random part of the
  predicted set): each of its labels as a *boundary record* (label, s, d, relevant), the
  label being predicted with probability d/s (see ``boundary_expectations``) — or, for a
  row whose weight is neither 0 nor 1 (and in the C API), it draws ``n_draws`` random
  predicted sets into per-draw label counters ``mc``;
* the *ordinal* pass shuffles the tie groups whose order a value reads with the row's own
  counter-based generator (``row_state(seed, row)``, each group exactly as
  ``fastrank.ranking.rank(..., "ordinal")`` shuffles it) and walks the positions; below
  the cutoff only a group's relevant labels are read, and their places are followed
  through its shuffle (``follow.h``) instead. It runs last: it shuffles ``w.order`` in
  place.

Outputs
-------
doc : float64 (n, N_SLOTS)      per-document values, column codes below (DOC_COLUMNS:
                                fastrank.metrics reads them)
lab : float64 (n_chunks, 9, q)  per chunk of rows, counts per label (LAB_ROWS): rows 0-1
                                (ordinal), 2-3 (group) and 5-6 (expected) are predicted-and-relevant
                                (TP_i) and predicted (TP_i + FP_i) under the cutoff
                                (perfect, or the first top_k positions when top_k >= 0);
                                row 4 is relevant (TP_i + FN_i); rows 7-8 are
                                the expected family's TP_i and TP_i + FP_i from whole groups
                                only (the part every random draw shares).
mc : float64 (n_chunks, n_draws, 2, q)  per draw: TP_i and TP_i + FP_i from the cut group.
returned                        the boundary records of the rows of weight 1 (label, s, d
                                with d/s in lowest terms, relevant or not), counted as
                                ``tabulate`` returns them.
Label counts (``lab``, ``mc``) add each document's weight (1 unless weights are given).
Rows are split into n_chunks fixed chunks; each chunk owns its counters, so sums never race
and never depend on the thread count. r-precision always cuts at |C_j|.

``document_sums`` then sums a block's per-document values per ranking type, the sums side
by side, each in numpy's summation order.
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memset
from cpython.pyport cimport PY_SSIZE_T_MAX

import numpy as np

from fastrank._ext._simd cimport FR_SIMD_AVX2, current_level
from _tiesort cimport (
    FR_FEW_DISTINCT, FR_INDEX_NUMBERS, INSERTION_MAX, SortWork, bounded, desc_key, floating,
    fr_distinct_index_f32, fr_distinct_index_f64, fr_prefetch_bytes, index_t, prefetch_row_at,
    row_state, shuffle_group, shuffle_groups, sort_keys, sort_row_at, sort_work_free,
    sort_work_new,
)

cdef extern from "document_sums.h":
    enum: FR_DOCUMENT_SUMS
    void fr_document_values(const double* doc, int64_t n, int64_t n_cols, const int64_t* cols,
                            int64_t nrel, int k, double q, double zd, const double* w,
                            double* v) noexcept nogil
    double fr_pairwise_sum(const double* a, long long n) noexcept nogil
    double fr_pairwise_sum_strided(const double* a, long long stride, const double* w,
                                   long long n) noexcept nogil
    long long fr_pairwise_pieces(long long n, int depth, long long start,
                                 long long* first) noexcept nogil
    double fr_pairwise_join(const double* sums, long long n, int depth,
                            long long* used) noexcept nogil
cdef extern from "follow.h" nogil:
    void fr_shuffled_positions(int level, Py_ssize_t* pos, Py_ssize_t k, Py_ssize_t m,
                               uint64_t row, Py_ssize_t step, int32_t* places)
    void fr_sort_places(Py_ssize_t* pos, Py_ssize_t k)
cdef extern from "tie_counting.h" nogil:
    Py_ssize_t fr_relevant_labels(int level, const uint8_t* y, Py_ssize_t m, int32_t* labels,
                                  unsigned* seen)
    Py_ssize_t fr_where_equal_f32(int level, const float* x, Py_ssize_t stride, Py_ssize_t m,
                                  float v, int32_t* out)
cdef extern from "few_distinct.h" nogil:
    int fr_index_places(int level, const uint8_t* index, const int32_t* labels, Py_ssize_t k,
                        const int32_t* level_of, int n, const int64_t* rel,
                        Py_ssize_t* places)
cdef extern from "convolution.h" nogil:
    void fr_convolve(int level, const double* src, Py_ssize_t w, const double* ker,
                     Py_ssize_t kw, double* dst)


cdef extern from "expected_precision.h" nogil:
    double* fr_harmonic_numbers_new(int64_t q)
    const double* fr_shared_harmonic_numbers(int64_t q)
    double fr_expected_precision_sum(int64_t c, int64_t a, int64_t s, int64_t start,
                                     const double* h)

# family flags
cdef enum:
    ORDINAL = 1
    GROUP = 2
    EXPECTED = 4

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
    E_ONE_ERROR = 19
    E_COVERAGE = 20
    E_RANKING_LOSS = 21
    E_AP_POSITION = 22
    E_AP_LABEL = 23
    E_R_PRECISION = 24
    E_TP = 25
    E_NPRED = 26
    E_EXACT = 27
    N_SLOTS = 28

# rows of the label counts (lab, per chunk: N_LAB rows of q): the (TP_i, TP_i + FP_i) pair of
# each family at LAB_ORDINAL, LAB_GROUP, LAB_EXPECTED; TP_i + FN_i at LAB_REL; the expected
# family's pair from whole tie groups only at LAB_FIXED
cdef enum:
    LAB_ORDINAL = 0
    LAB_GROUP = 2
    LAB_REL = 4
    LAB_EXPECTED = 5
    LAB_FIXED = 7
    N_LAB = 9

#: the codes and positions above, for the Python layer (fastrank.metrics reads them): the
#: family flags, each family's per-document columns (the group family's coverage per
#: ranking type), and the rows of the label counts
FAMILIES = {"ordinal": ORDINAL, "group": GROUP, "expected": EXPECTED}
DOC_COLUMNS = {
    "n_rel": N_REL,
    "ordinal": dict(one_error=O_ONE_ERROR, coverage=O_COVERAGE, ranking_loss=O_RANKING_LOSS,
                    ap_position=O_AP_POSITION, ap_label=O_AP_LABEL,
                    r_precision=O_R_PRECISION, tp=O_TP, npred=O_NPRED),
    "group": dict(one_error=G_ONE_ERROR, ranking_loss=G_RANKING_LOSS,
                  ap_position=G_AP_POSITION, ap_label=G_AP_LABEL, r_precision=G_R_PRECISION,
                  tp=G_TP, npred=G_NPRED),
    "group_coverage": {"dense": G_COVERAGE_DENSE, "standard": G_COVERAGE_STANDARD,
                       "modified": G_COVERAGE_MODIFIED},
    "expected": dict(one_error=E_ONE_ERROR, coverage=E_COVERAGE, ranking_loss=E_RANKING_LOSS,
                     ap_position=E_AP_POSITION, ap_label=E_AP_LABEL,
                     r_precision=E_R_PRECISION, tp=E_TP, npred=E_NPRED, exact=E_EXACT),
}
N_DOC_COLUMNS = N_SLOTS
LAB_ROWS = {"ordinal": LAB_ORDINAL, "group": LAB_GROUP, "expected": LAB_EXPECTED,
            "relevant": LAB_REL, "fixed": LAB_FIXED}
N_LAB_ROWS = N_LAB


cdef struct Entry:
    int32_t label, s, d  # label -1: an empty slot
    int64_t n_rel, n_irr


cdef enum:
    RAW_MAX = 1 << 16  # a chunk's records kept as they come, then counted in a hash table


cdef struct Records:
    # one chunk's boundary records: the first RAW_MAX as they come, (label, s, d, relevant)
    # int32 quadruples in raw; beyond, all of them counted by (label, s, d) in an
    # open-addressing hash table of cap (a power of 2) slots, at most half full
    int32_t* raw
    Py_ssize_t n_raw, cap_raw
    Entry* slot
    Py_ssize_t n, cap
    bint failed


cdef inline Py_ssize_t _slot(Entry* table, Py_ssize_t cap, int32_t c, int32_t s,
                             int32_t d) noexcept nogil:
    """The slot of (c, s, d) in the table, or the empty slot where it goes."""
    cdef uint64_t h = ((<uint64_t> c * 0x9E3779B97F4A7C15ULL + <uint64_t> s)
                       * 0xC2B2AE3D27D4EB4FULL + <uint64_t> d)
    cdef Py_ssize_t i
    h ^= h >> 31
    h *= 0x94D049BB133111EBULL
    i = <Py_ssize_t> ((h ^ (h >> 29)) & <uint64_t> (cap - 1))
    while table[i].label >= 0 and not (table[i].label == c and table[i].s == s
                                       and table[i].d == d):
        i = (i + 1) & (cap - 1)
    return i


cdef inline void _count(Records* r, int32_t c, int32_t s, int32_t d, int32_t rel) noexcept nogil:
    """Count one boundary record in the hash table."""
    cdef Entry* grown
    cdef Py_ssize_t i, j, cap
    if 2 * (r.n + 1) > r.cap:  # rehash into twice the slots
        cap = 2 * r.cap if r.cap else 1024
        grown = <Entry*> malloc(cap * sizeof(Entry))
        if grown == NULL:
            r.failed = 1
            return
        for i in range(cap):
            grown[i].label = -1
        for i in range(r.cap):
            if r.slot[i].label >= 0:
                j = _slot(grown, cap, r.slot[i].label, r.slot[i].s, r.slot[i].d)
                grown[j] = r.slot[i]
        free(r.slot)
        r.slot, r.cap = grown, cap
    i = _slot(r.slot, r.cap, c, s, d)
    if r.slot[i].label < 0:
        r.slot[i].label, r.slot[i].s, r.slot[i].d = c, s, d
        r.slot[i].n_rel, r.slot[i].n_irr = 0, 0
        r.n += 1
    if rel:
        r.slot[i].n_rel += 1
    else:
        r.slot[i].n_irr += 1


cdef inline void _record(Records* r, int32_t c, int32_t s, int32_t d, int32_t rel) noexcept nogil:
    """Add one boundary record (label c, probability d/s, relevant or not)."""
    cdef Py_ssize_t i
    cdef int32_t* grown
    if r.slot == NULL and r.n_raw < RAW_MAX:
        if r.n_raw == r.cap_raw:
            i = 2 * r.cap_raw if r.cap_raw else 256
            grown = <int32_t*> realloc(r.raw, 4 * i * sizeof(int32_t))
            if grown == NULL:
                r.failed = 1
                return
            r.raw, r.cap_raw = grown, i
        r.raw[4 * r.n_raw] = c
        r.raw[4 * r.n_raw + 1] = s
        r.raw[4 * r.n_raw + 2] = d
        r.raw[4 * r.n_raw + 3] = rel
        r.n_raw += 1
        return
    if r.raw != NULL:  # too many to keep: count them all
        for i in range(r.n_raw):
            _count(r, r.raw[4 * i], r.raw[4 * i + 1], r.raw[4 * i + 2], r.raw[4 * i + 3])
        free(r.raw)
        r.raw, r.n_raw, r.cap_raw = NULL, 0, 0
    _count(r, c, s, d, rel)


cdef inline Py_ssize_t _gcd(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t t
    while b:
        t = a % b
        a, b = b, t
    return a


cdef inline Py_ssize_t _group_cut(const int32_t* end, Py_ssize_t q, Py_ssize_t k) noexcept nogil:
    """End of the shortest prefix of whole tie groups holding at least k labels (0 if k<=0)."""
    cdef Py_ssize_t stop = 0
    if k <= 0:
        return 0
    while stop < q and stop < k:
        stop = end[stop]
    return stop


cdef inline void _group_pass(SortWork* w, Py_ssize_t q, const uint8_t* y, Py_ssize_t n_rel,
                             Py_ssize_t top_k, uint64_t zkey, double wt, double* out,
                             double* lab, const int32_t* group_rel) noexcept nogil:
    """Dense/standard/modified values of one sorted row (whole tie groups), group_rel[start]
    the relevant labels of the group starting at position start."""
    cdef int32_t* order = w.order
    cdef int32_t* end = w.end
    cdef Py_ssize_t start = 0, stop, p, group = 0, rel_g, cum_rel = 0, cum_nonrel = 0
    cdef Py_ssize_t m = 0, c, tp = 0, npred = 0, tp_r = 0, npred_r = 0
    cdef Py_ssize_t cov_dense = 0, cov_standard = 0, cov_modified = 0
    cdef double loss = 0.0, ap_pos = 0.0, ap_lab = 0.0, prec
    cdef bint is_zero, drop_zero = top_k < 0
    cdef Py_ssize_t cut_r = _group_cut(end, q, n_rel)
    cdef Py_ssize_t cut = cut_r if top_k < 0 else _group_cut(end, q, top_k)
    out[G_ONE_ERROR] = 1.0
    while start < q:
        stop = end[start]
        is_zero = w.keys[start] == zkey
        rel_g = group_rel[start]
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
        if stop <= cut_r and not is_zero:
            tp_r += rel_g
            npred_r += stop - start
        if stop <= cut and not (drop_zero and is_zero):
            tp += rel_g
            npred += stop - start
            for p in range(start, stop):
                c = order[p]
                lab[q + c] += wt
                if y[c]:
                    lab[c] += wt
        group += 1
        start = stop
    out[G_COVERAGE_DENSE] = cov_dense
    out[G_COVERAGE_STANDARD] = cov_standard
    out[G_COVERAGE_MODIFIED] = cov_modified
    out[G_RANKING_LOSS] = loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    out[G_AP_POSITION] = ap_pos / m if n_rel > 0 else 1.0
    out[G_AP_LABEL] = ap_lab / n_rel if n_rel > 0 else 1.0
    out[G_R_PRECISION] = <double> tp_r / npred_r if npred_r > 0 else 0.0
    out[G_TP] = tp
    out[G_NPRED] = npred


cdef inline void _ordinal_pass(SortWork* w, Py_ssize_t q, const uint8_t* y, Py_ssize_t n_rel,
                               Py_ssize_t top_k, uint64_t zkey, uint64_t seed, Py_ssize_t row,
                               double wt, double* out, double* lab, const int32_t* group_rel,
                               bint placed, int32_t* places) noexcept nogil:
    """Ordinal values of one sorted row: shuffle inside tie groups, then walk positions.
    Only the groups whose order some value reads are shuffled and walked, each shuffled as
    the whole row's shuffle would (shuffle_group): those starting before position
    max(k, |C|) (the cutoff's labels, r-precision's). A group starting after it that holds
    a relevant label is read only at its relevant labels' positions: those are followed
    through its shuffle (fr_shuffled_positions; ``places`` holds q + 16 values) and walked
    in order, each adding what the walk of the shuffled group adds when it reaches it (the
    same operations, in the same order: the same bits). The other groups only add their
    labels to the irrelevant ones above the next, which changes no value. The groups'
    relevant labels are group_rel[start]; their places in their groups are read from
    w.keys_tmp, group after group, when ``placed`` (_count_groups), else found in the
    group's order."""
    cdef int32_t* order = w.order
    cdef Py_ssize_t* pos = <Py_ssize_t*> w.keys_tmp  # (the sort's spare keys: q values)
    cdef Py_ssize_t p, c, t, cum_rel = 0, cum_nonrel = 0, cov = 0, tp = 0, npred = 0
    cdef Py_ssize_t tp_r = 0, npred_r = 0
    cdef Py_ssize_t k = n_rel if top_k < 0 else top_k
    cdef Py_ssize_t start = 0, stop, groups = 0, rel_g, read = k if k > n_rel else n_rel
    cdef Py_ssize_t first = 0  # the relevant labels of the groups before (placed)
    cdef double loss = 0.0, ap_pos = 0.0, ap_lab = 0.0, prec
    cdef bint is_zero, drop_zero = top_k < 0
    cdef uint64_t stream = row_state(seed, row)
    while start < q:
        stop = w.end[start]
        rel_g = group_rel[start]
        if rel_g == 0 and start >= read:
            cum_nonrel += stop - start
            groups += 1
            start = stop
            continue
        is_zero = w.keys[start] == zkey
        if placed:
            pos = <Py_ssize_t*> w.keys_tmp + first
            first += rel_g
        if start >= read:  # its relevant labels' places, followed
            if not placed:
                rel_g = 0  # (a truth value above 1 counts once, as the walk counts it)
                for p in range(stop - start):
                    pos[rel_g] = p
                    rel_g += y[order[start + p]] != 0
            if rel_g < stop - start:
                fr_shuffled_positions(w.level, pos, rel_g, stop - start, stream,
                                      start - groups, places)
                fr_sort_places(pos, rel_g)
            for t in range(rel_g):
                p = start + pos[t]
                cum_rel += 1
                loss += cum_nonrel + pos[t] - t  # the group's irrelevant labels above it too
                cov = p
                prec = <double> cum_rel / (p + 1)
                ap_lab += prec
                if not is_zero:
                    ap_pos += prec
            cum_nonrel += stop - start - rel_g
            groups += 1
            start = stop
            continue
        if stop - start > 1:
            shuffle_group(order, start, stop - start, stream, start - groups)
        for p in range(start, stop):
            c = order[p]
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
                npred_r += 1
                tp_r += y[c]
            if p < k and not (drop_zero and is_zero):
                npred += 1
                lab[q + c] += wt
                if y[c]:
                    tp += 1
                    lab[c] += wt
        groups += 1
        start = stop
    out[O_ONE_ERROR] = 1.0 - y[order[0]]
    out[O_COVERAGE] = cov
    out[O_RANKING_LOSS] = loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    out[O_AP_POSITION] = ap_pos / n_rel if n_rel > 0 else 1.0
    out[O_AP_LABEL] = ap_lab / n_rel if n_rel > 0 else 1.0
    out[O_R_PRECISION] = <double> tp_r / npred_r if npred_r > 0 else 0.0
    out[O_TP] = tp
    out[O_NPRED] = npred


cdef inline void _expected_pass(SortWork* w, Py_ssize_t q, const uint8_t* y, Py_ssize_t n_rel,
                                Py_ssize_t top_k, uint64_t zkey, uint64_t mc_seed, Py_ssize_t row,
                                Py_ssize_t n_draws, int32_t* scratch, const double* harmonic,
                                double wt, double* out, double* lab, double* mc,
                                Records* rec, const int32_t* group_rel) noexcept nogil:
    """Exact expectations, over uniformly random orders inside every tie group, of the
    ordinal values of one sorted row. For a group of s labels, a of them relevant, starting
    at position B (0-based) after A relevant labels:

    * one-error: 1 - a/s of the top group;
    * coverage: B + a(s+1)/(a+1) - 1 for the last group holding a relevant label (the
      expected maximum of a random a-subset of 1..s);
    * ranking loss: pairs across groups are fixed, a tied pair is an error with
      probability 1/2;
    * average precision: a relevant label sits in slot k of the group with probability
      a/s, and then has on average (k-1)(a-1)/(s-1) relevant labels above it in the group,
      so the group adds (a/s) sum_k (A + 1 + (k-1)(a-1)/(s-1)) / (B + k);
    * cutoff at k positions (perfect: k = |C|, belief-0 labels dropped; top-k): groups
      before position k are taken whole; the group holding it gives d = k - B labels drawn
      without replacement (hypergeometric): each of its labels is predicted with
      probability d/s, all d are relevant with probability prod_{i<d} (a-i)/(s-i). |Ĉ|
      itself is not random (belief-0 labels form one group), so the exact match is
      [|Ĉ| = |C|] times the probability that every predicted label is relevant.

    The group holding position k is recorded in ``rec`` (a row of weight 1; one of weight 0
    adds nothing) or, without ``rec`` or for other weights, drawn ``n_draws`` times into
    ``mc``.
    """
    cdef int32_t* order = w.order
    cdef int32_t* end = w.end
    cdef Py_ssize_t start = 0, stop, p, c, k, j, s, a, d, g, cum_rel = 0, cum_nonrel = 0
    cdef Py_ssize_t cut = n_rel if top_k < 0 else top_k
    cdef double loss = 0.0, ap_pos = 0.0, ap_lab = 0.0, cov = 0.0, tp = 0.0, npred = 0.0
    cdef double tp_r = 0.0, npred_r = 0.0, exact = 1.0, t, share
    cdef bint is_zero, drop_zero = top_k < 0
    cdef int32_t tmp
    cdef double* draw
    cdef uint64_t state
    while start < q:
        stop = end[start]
        s = stop - start
        is_zero = w.keys[start] == zkey
        a = group_rel[start]
        if start == 0:
            out[E_ONE_ERROR] = 1.0 - <double> a / s
        if a > 0:
            cov = start + <double> a * (s + 1) / (a + 1) - 1.0
            loss += <double> a * cum_nonrel + 0.5 * a * (s - a)
            t = fr_expected_precision_sum(cum_rel, a, s, start, harmonic)
            ap_lab += t
            if not is_zero:
                ap_pos += t
        if start < n_rel and not is_zero:  # r-precision: the first |C| positions
            d = (stop if stop < n_rel else n_rel) - start
            npred_r += d
            tp_r += <double> d * a / s
        if start < cut and not (drop_zero and is_zero):  # (partly) inside the cutoff
            d = (stop if stop < cut else cut) - start
            if d == s:
                npred += s
                tp += a
                if a < s:
                    exact = 0.0
                for p in range(start, stop):
                    c = order[p]
                    lab[(LAB_EXPECTED + 1) * q + c] += wt
                    lab[(LAB_FIXED + 1) * q + c] += wt
                    if y[c]:
                        lab[LAB_EXPECTED * q + c] += wt
                        lab[LAB_FIXED * q + c] += wt
            else:
                npred += d
                tp += <double> d * a / s
                for j in range(d):
                    exact *= <double> (a - j) / (s - j) if a > j else 0.0
                share = wt * d / s
                for p in range(start, stop):
                    c = order[p]
                    lab[(LAB_EXPECTED + 1) * q + c] += share
                    if y[c]:
                        lab[LAB_EXPECTED * q + c] += share
                if rec != NULL and (wt == 1.0 or wt == 0.0):
                    g = _gcd(d, s)
                    for p in range(start, stop):
                        if wt == 1.0:
                            c = order[p]
                            _record(rec, <int32_t> c, <int32_t> (s // g), <int32_t> (d // g),
                                    y[c])
                elif n_draws > 0:  # d of the s labels, uniformly, n_draws times
                    state = row_state(mc_seed, row)
                    for p in range(s):
                        scratch[p] = order[start + p]
                    for k in range(n_draws):
                        draw = mc + k * 2 * q
                        for j in range(d):
                            p = j + bounded(&state, <uint32_t> (s - j))
                            tmp = scratch[j]
                            scratch[j] = scratch[p]
                            scratch[p] = tmp
                            c = scratch[j]
                            draw[q + c] += wt
                            if y[c]:
                                draw[c] += wt
        cum_rel += a
        cum_nonrel += s - a
        start = stop
    out[E_COVERAGE] = cov
    out[E_RANKING_LOSS] = loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    out[E_AP_POSITION] = ap_pos / n_rel if n_rel > 0 else 1.0
    out[E_AP_LABEL] = ap_lab / n_rel if n_rel > 0 else 1.0
    out[E_R_PRECISION] = tp_r / npred_r if npred_r > 0 else 0.0
    out[E_TP] = tp
    out[E_NPRED] = npred
    out[E_EXACT] = exact if npred == n_rel else 0.0


cdef double* _harmonic_numbers(Py_ssize_t q, int families) noexcept nogil:
    """The harmonic numbers H_p, p <= q (fr_harmonic_numbers_new), which the expected family's
    average precision reads: a new array, or NULL without that family or memory."""
    return fr_harmonic_numbers_new(q) if families & EXPECTED else NULL


cdef inline Py_ssize_t _row_scratch_size(Py_ssize_t q) noexcept nogil:
    """The int32 values of a row's scratch (_row)."""
    return 2 * q + 16


cdef inline bint _number_row(const floating* given, Py_ssize_t q, const uint8_t* y,
                             Py_ssize_t top_k, SortWork* w, Py_ssize_t* n_labels,
                             unsigned* seen) noexcept nogil:
    """In place of a row sort, for evaluate: a contiguous row of at most FR_FEW_DISTINCT
    distinct beliefs (no NaN) numbered, each label's number in w.slot_of
    (fr_distinct_index_f32; a float64 row through its float32 roundings, in w.keys_tmp,
    where they keep its order, ties and zeros: fr_distinct_index_f64), each
    tie group's key (a float64 row's, its rounding's: the passes compare keys with zero's
    alone) and end written at its start alone, and w.order filled only for the
    groups starting before max(k, |C|, 1), each in label order (fr_where_equal_f32): what
    the passes read of a sorted row, the later groups read by their counts and the
    relevant labels' places (_count_groups). The relevant labels to w.order_tmp, n_labels
    and seen <- their count and the OR of the truth values. w.numbered; False (nothing
    trusted) for another row, to be sorted."""
    cdef uint8_t* index = <uint8_t*> w.slot_of
    cdef float values[FR_FEW_DISTINCT]
    cdef int64_t counts[FR_FEW_DISTINCT]
    cdef int32_t numbers[FR_FEW_DISTINCT]
    cdef Py_ssize_t n, d, k, read, start = 0
    cdef const float* row
    w.numbered = False
    if floating is float:
        row = given
        n = fr_distinct_index_f32(w.level, w.memo, row, q, index, numbers, values, counts)
    else:
        row = <float*> w.keys_tmp
        n = fr_distinct_index_f64(w.level, w.memo, given, q, <float*> w.keys_tmp, index,
                                  numbers, values, counts)
    if n < 0:
        return False
    k = fr_relevant_labels(w.level, y, q, w.order_tmp, seen)
    if k < 0:
        return False
    read = k if top_k < 0 or top_k < k else top_k
    if read < 1:
        read = 1
    for d in range(n):
        w.group_start[numbers[d]] = <int32_t> start
        w.group_number[d] = numbers[d]
        w.keys[start] = desc_key(<double> values[d])
        w.end[start] = <int32_t> (start + counts[d])
        if start < read:
            fr_where_equal_f32(w.level, row, 1, q, values[d], w.order + start)
        start += counts[d]
    w.n_groups = <int> n
    w.numbered = True
    n_labels[0] = k
    return True


cdef inline void _walk_groups(const SortWork* w, Py_ssize_t q, const uint8_t* y,
                              int32_t* group_rel) noexcept nogil:
    """group_rel[start] <- the relevant labels of each tie group of a sorted row, its truth
    summed through the sorted order (a row _count_groups does not serve)."""
    cdef Py_ssize_t start = 0, stop, p, rel_g
    while start < q:
        stop = w.end[start]
        rel_g = 0
        for p in range(start, stop):
            rel_g += y[w.order[p]]
        group_rel[start] = <int32_t> rel_g
        start = stop


cdef inline bint _count_groups(SortWork* w, Py_ssize_t q, const uint8_t* y, double wt,
                               double* rel, int32_t* group_rel, Py_ssize_t n_labels,
                               bint with_places, Py_ssize_t* n_rel,
                               unsigned* seen) noexcept nogil:
    """For a row sorted or numbered by its values (w.numbered), from its relevant labels
    alone (w.order_tmp, n_labels of them when _number_row found them, else found here:
    fr_relevant_labels, AVX2 and up): group_rel[start] <- the relevant labels of each tie
    group (by each label's number, the group it starts), rel[c] += wt for each relevant
    label c, n_rel and seen <- their count and the OR of the truth values; with
    ``with_places``, where each relevant label sits in its group, in label order, group
    after group (fr_index_places) into w.keys_tmp, which the ordinal pass reads. Returns
    False (nothing written) for another row or path, whose passes walk every group's
    labels."""
    cdef int32_t* labels = w.order_tmp
    cdef const uint8_t* index = <const uint8_t*> w.slot_of
    cdef int32_t level_of[FR_INDEX_NUMBERS]  # by number: its group, by descending value
    cdef int64_t rel_of[FR_FEW_DISTINCT]     # by group: its relevant labels
    cdef Py_ssize_t k = n_labels, t, d, start = 0
    if not w.numbered:
        return False
    if k < 0:
        k = fr_relevant_labels(w.level, y, q, labels, seen)
        if k < 0:
            return False
    while start < q:
        group_rel[start] = 0
        start = w.end[start]
    for t in range(k):
        rel[labels[t]] += wt
        group_rel[w.group_start[index[labels[t]]]] += 1
    n_rel[0] = k
    if with_places:
        for d in range(w.n_groups):
            level_of[w.group_number[d]] = <int32_t> d
            rel_of[d] = group_rel[w.group_start[w.group_number[d]]]
        fr_index_places(w.level, index, labels, k, level_of, w.n_groups, rel_of,
                        <Py_ssize_t*> w.keys_tmp)
    return True


cdef inline unsigned _row(SortWork* w, Py_ssize_t q, const uint8_t* y, int families,
                          Py_ssize_t top_k, uint64_t seed, uint64_t mc_seed,
                          Py_ssize_t n_draws, int32_t* scratch, const double* harmonic,
                          Py_ssize_t row, double wt, double* out, double* lab, double* mc,
                          Records* rec, Py_ssize_t n_labels, unsigned seen) noexcept nogil:
    """All requested families for one sorted row, whose label counts weigh ``wt``; the set
    metrics use the perfect cutoff (top_k < 0) or the first top_k positions. ``scratch``
    holds _row_scratch_size(q) int32: the expected family's draws or the ordinal family's
    followed places (q + 16), then the tie groups' relevant labels (_count_groups, or else
    _walk_groups, counts them once for every pass). Returns the bitwise
    OR of the row's truth values (above 1: one is neither 0 nor 1, and the values are
    meaningless). A row numbered by _number_row (w.numbered, its order filled for the
    first groups alone) comes with its n_labels relevant labels and the OR of its truth
    values, seen; another with n_labels -1."""
    cdef Py_ssize_t c, n_rel = 0
    cdef int32_t* group_rel = scratch + q + 16
    cdef uint64_t zkey = desc_key(0.0)
    cdef double* rel = lab + LAB_REL * q
    cdef bint counted = _count_groups(w, q, y, wt, rel, group_rel, n_labels,
                                      families & ORDINAL != 0, &n_rel, &seen)
    if not counted:
        seen = 0
        for c in range(q):
            seen |= y[c]
            n_rel += y[c]
            rel[c] += wt * y[c]
        _walk_groups(w, q, y, group_rel)
    out[N_REL] = n_rel
    if families & GROUP:  # before the ordinal pass, which shuffles w.order in place
        _group_pass(w, q, y, n_rel, top_k, zkey, wt, out, lab + LAB_GROUP * q, group_rel)
    if families & EXPECTED:
        _expected_pass(w, q, y, n_rel, top_k, zkey, mc_seed, row, n_draws, scratch, harmonic,
                       wt, out, lab, mc, rec, group_rel)
    if families & ORDINAL:
        _ordinal_pass(w, q, y, n_rel, top_k, zkey, seed, row, wt, out,
                      lab + LAB_ORDINAL * q, group_rel, counted, scratch)
    return seen


cdef object _collect(Records* rec, Py_ssize_t n_chunks, Py_ssize_t q, bint failed):
    """The chunks' boundary records (rec, freed here) counted by :func:`_tabulated`, each
    chunk's copied to its place in parallel; MemoryError when a chunk (or anything before,
    ``failed``) ran out of memory."""
    cdef Py_ssize_t chunk, i, t, total = 0
    cdef Py_ssize_t* at = <Py_ssize_t*> malloc((n_chunks + 1) * sizeof(Py_ssize_t))
    cdef Entry* e = NULL
    failed |= at == NULL
    for chunk in range(n_chunks if rec != NULL and at != NULL else 0):
        failed |= rec[chunk].failed
        at[chunk] = total
        total += rec[chunk].n + rec[chunk].n_raw
    if not failed:
        e = <Entry*> malloc((2 * total + 1) * sizeof(Entry))
        failed = e == NULL
    for chunk in prange(n_chunks if rec != NULL else 0, nogil=True, schedule="dynamic"):
        t = at[chunk] if not failed else 0
        for i in range(rec[chunk].n_raw if not failed else 0):
            e[t].label = rec[chunk].raw[4 * i]
            e[t].s = rec[chunk].raw[4 * i + 1]
            e[t].d = rec[chunk].raw[4 * i + 2]
            e[t].n_rel = rec[chunk].raw[4 * i + 3]
            e[t].n_irr = 1 - rec[chunk].raw[4 * i + 3]
            t = t + 1
        free(rec[chunk].raw)
        for i in range(rec[chunk].cap if not failed else 0):
            if rec[chunk].slot[i].label >= 0:
                e[t] = rec[chunk].slot[i]
                t = t + 1
        free(rec[chunk].slot)
    free(rec)
    free(at)
    if failed:
        free(e)
        raise MemoryError("fastrank: cannot allocate metric scratch")
    return _tabulated(e, total, q)


def evaluate(const floating[::1] values, Py_ssize_t row_stride, Py_ssize_t col_stride,
             const index_t[::1] indices, const index_t[::1] indptr, Py_ssize_t n, Py_ssize_t q,
             const uint8_t[:, ::1] y, int families, Py_ssize_t top_k, uint64_t seed,
             uint64_t mc_seed, Py_ssize_t first_row, const double[::1] weight,
             double[:, ::1] doc, double[:, :, ::1] lab, double[:, :, :, ::1] mc,
             bint record=True):
    """Fill ``doc``, ``lab`` and ``mc`` (their contents on entry are ignored: each chunk's
    counters are zeroed by the thread that takes the chunk) for an (n, q) belief matrix
    given by ``fastrank._validation.row_source`` (a dense flat buffer with element strides
    and empty index arrays, or a canonical CSR matrix whose implicit zeros are one tie
    group); top_k < 0 is the perfect cutoff. Row i draws its random orders as global row
    ``first_row + i``; its label counts weigh ``weight[i]`` (1 when ``weight`` is empty).
    ``doc`` is never weighted. Returns the boundary records of the expected family counted
    as :func:`tabulate` does (without ``record``, none: every row's cut group is drawn
    into ``mc``), and whether the inputs were sound: False (and the outputs meaningless)
    when a belief is NaN or a truth value is neither 0 nor 1, which the rows' passes find
    as they read them, so the caller need not scan the inputs beforehand."""
    cdef SortWork* w = NULL  # each thread sets its own
    cdef Py_ssize_t chunk, i, lo, hi, n_chunks = lab.shape[0], n_draws = mc.shape[1]
    cdef Py_ssize_t n_labels
    cdef unsigned seen
    cdef Records* rec = <Records*> calloc(n_chunks, sizeof(Records))
    cdef int32_t* scratch = NULL
    cdef double* harmonic = _harmonic_numbers(q, families)  # read by every thread
    cdef double* mcp
    cdef bint weighted = weight.shape[0] > 0
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const index_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef unsigned char* bad = <unsigned char*> calloc(n_chunks, 1)  # per chunk
    cdef int failed[1]
    cdef bint sound = True
    failed[0] = rec == NULL or bad == NULL or (families & EXPECTED and harmonic == NULL)
    with nogil, parallel():
        w = sort_work_new(q)
        scratch = <int32_t*> malloc(_row_scratch_size(q) * sizeof(int32_t))
        if w == NULL or scratch == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for chunk in prange(n_chunks, schedule="dynamic"):
            if w == NULL or scratch == NULL or rec == NULL or bad == NULL \
                    or (families & EXPECTED and harmonic == NULL):
                continue
            mcp = &mc[chunk, 0, 0, 0] if n_draws > 0 else <double*> NULL
            memset(&lab[chunk, 0, 0], 0, lab.shape[1] * q * sizeof(double))
            if n_draws > 0:
                memset(mcp, 0, n_draws * 2 * q * sizeof(double))
            lo = chunk * n // n_chunks
            hi = (chunk + 1) * n // n_chunks
            w.nan_seen = False
            for i in range(lo, hi):
                if i + 1 < hi:
                    prefetch_row_at(vp, row_stride, col_stride, pp, i + 1, q)
                    fr_prefetch_bytes(&y[i + 1, 0], q)
                n_labels = -1
                seen = 0
                if pp == NULL and col_stride == 1 and q > INSERTION_MAX \
                        and w.level >= FR_SIMD_AVX2:
                    if not _number_row(vp + i * row_stride, q, &y[i, 0], top_k, w,
                                       &n_labels, &seen):
                        n_labels = -1
                if n_labels < 0:
                    sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, w)
                if _row(w, q, &y[i, 0], families, top_k, seed, mc_seed, n_draws, scratch,
                        harmonic, first_row + i, weight[i] if weighted else 1.0,
                        &doc[i, 0], &lab[chunk, 0, 0], mcp,
                        &rec[chunk] if record else <Records*> NULL, n_labels, seen) > 1:
                    bad[chunk] = 1
            if w.nan_seen:
                bad[chunk] = 1
        sort_work_free(w)
        free(scratch)
    free(harmonic)
    for chunk in range(n_chunks if bad != NULL else 0):
        sound &= not bad[chunk]
    free(bad)
    return _collect(rec, n_chunks, q, failed[0]), sound


cdef Py_ssize_t row_scratch_size(Py_ssize_t q) noexcept nogil:
    return _row_scratch_size(q)


cdef Py_ssize_t metrics_row(const double* scores, Py_ssize_t q, const uint8_t* y,
                            int families, Py_ssize_t top_k, uint64_t seed, uint64_t mc_seed,
                            Py_ssize_t n_draws, Py_ssize_t row, double wt, double* doc,
                            double* lab, double* mc, SortWork* w, int32_t* scratch,
                            int64_t* records) noexcept nogil:
    """evaluate for one dense row (q contiguous float64 scores), global row number ``row``:
    doc (N_SLOTS) overwritten, its label counts added to lab (N_LAB x q) and mc (n_draws x
    2 x q); w and scratch (row_scratch_size(q) int32) are the caller's scratch for rows of
    q labels. With ``records`` (room for q rows of 5), a row of weight 1 writes its
    boundary records there as (label, s, d, n_rel, n_irr) rows instead of drawing its cut
    tie group (a row of weight 0 neither), as evaluate's exact form does. The C API's row
    (fastrank._ext.capi); returns the number of records written, -1 when out of memory.
    The harmonic numbers come from the process's one table (fr_shared_harmonic_numbers),
    not built for each row."""
    cdef const double* harmonic = fr_shared_harmonic_numbers(q) if families & EXPECTED \
        else NULL
    cdef Records rec
    cdef Py_ssize_t i, n = 0
    if families & EXPECTED and harmonic == NULL:
        return -1
    memset(&rec, 0, sizeof(Records))
    sort_row_at(scores, 0, 1, <int32_t*> NULL, <int32_t*> NULL, 0, q, w)
    # (its inputs are checked by the C API)
    _row(w, q, y, families, top_k, seed, mc_seed, n_draws, scratch, harmonic,
         row, wt, doc, lab, mc, &rec if records != NULL else NULL, -1, 0)
    for i in range(rec.n_raw):
        records[5 * i] = rec.raw[4 * i]
        records[5 * i + 1] = rec.raw[4 * i + 1]
        records[5 * i + 2] = rec.raw[4 * i + 2]
        records[5 * i + 3] = rec.raw[4 * i + 3]
        records[5 * i + 4] = 1 - rec.raw[4 * i + 3]
    n = rec.n_raw
    for i in range(rec.cap):  # a cut group of more than RAW_MAX labels: counted
        if rec.slot[i].label >= 0:
            records[5 * n] = rec.slot[i].label
            records[5 * n + 1] = rec.slot[i].s
            records[5 * n + 2] = rec.slot[i].d
            records[5 * n + 3] = rec.slot[i].n_rel
            records[5 * n + 4] = rec.slot[i].n_irr
            n += 1
    free(rec.raw)
    free(rec.slot)
    return -1 if rec.failed else n


# ---- ties="expected": the category-macro ratios from the boundary records -----------------

cdef double TINY = 1e-22  # probabilities below this are left out of a distribution's tails


cdef inline Py_ssize_t _binomial(Py_ssize_t n, double p, double* pk,
                                 Py_ssize_t* lo) noexcept nogil:
    """Binomial(n, p) probabilities in pk[lo[0]:lo[0] + width] (returns width), leaving out
    the tails below TINY times the mode: from the mode outwards by the ratio of successive
    terms, then normalised."""
    cdef Py_ssize_t m = <Py_ssize_t> ((n + 1) * p), j, hi
    cdef double odds = p / (1.0 - p), total = 1.0
    if m > n:
        m = n
    pk[m] = 1.0
    j = m
    while j > 0 and pk[j] >= TINY:
        pk[j - 1] = pk[j] * j / ((n - j + 1) * odds)
        j -= 1
        total += pk[j]
    lo[0] = j
    hi = m
    while hi < n and pk[hi] >= TINY:
        pk[hi + 1] = pk[hi] * (n - hi) / (hi + 1) * odds
        hi += 1
        total += pk[hi]
    for j in range(lo[0], hi + 1):
        pk[j] /= total
    return hi - lo[0] + 1


cdef enum:
    MAX_STEP = 4  # single indicators applied in one pass (a kernel of 5 terms)


cdef inline void _step(int level, double** P, double** NP, Py_ssize_t* off,
                       Py_ssize_t* width, const double* ker, Py_ssize_t kw,
                       Py_ssize_t* lo) noexcept nogil:
    """Convolve the distribution (P[0] + off[0])[:width[0]] of a sum starting at lo[0]
    with ker[:kw] into NP[0] (fr_convolve), swap P and NP, and leave out its tails below
    TINY."""
    cdef Py_ssize_t i, w = width[0]
    cdef double* dst = NP[0]
    fr_convolve(level, P[0] + off[0], w, ker, kw, dst)
    NP[0], P[0] = P[0], dst
    w += kw - 1
    i = 0
    while w > 1 and dst[i] < TINY:
        i += 1
        w -= 1
        lo[0] += 1
    while w > 1 and dst[i + w - 1] < TINY:
        w -= 1
    off[0], width[0] = i, w


cdef Py_ssize_t _poisson_binomial(const int64_t* s, const int64_t* d, const int64_t* count,
                                  Py_ssize_t n_classes, double* A, double* B, double* pk,
                                  Py_ssize_t* lo, double** out) noexcept nogil:
    """Distribution of a sum of independent indicators, count[c] of probability d[c]/s[c]
    for each class c: out[0][i] = P(sum = lo[0] + i) for i < width (returned), built
    alternately in A and B (each 1 + sum(count) long; out[0] points into one of them) by
    convolution with Binomial(count[c], d[c]/s[c]) (pk: scratch as long), single
    indicators MAX_STEP at a time (one pass); the tails below TINY left out."""
    cdef Py_ssize_t c, i, n, kw = 1, klo = 0, width = 1, off = 0
    cdef int level = current_level()
    cdef double p
    cdef double ker[MAX_STEP + 1]
    cdef double* P = A
    cdef double* NP = B
    P[0] = 1.0
    ker[0] = 1.0
    lo[0] = 0
    for c in range(n_classes + 1):
        n = count[c] if c < n_classes else 0
        if n == 1:  # one more indicator in the pending kernel
            p = <double> d[c] / s[c]
            ker[kw] = ker[kw - 1] * p
            for i in range(kw - 1, 0, -1):
                ker[i] = ker[i] * (1.0 - p) + ker[i - 1] * p
            ker[0] *= 1.0 - p
            kw += 1
        if kw > 1 and (kw > MAX_STEP or n > 1 or c == n_classes):
            _step(level, &P, &NP, &off, &width, ker, kw, lo)
            ker[0], kw = 1.0, 1
        if n > 1:
            kw = _binomial(n, <double> d[c] / s[c], pk, &klo)
            lo[0] += klo
            _step(level, &P, &NP, &off, &width, pk + klo, kw, lo)
            kw = 1
    out[0] = P + off
    return width


cdef int label_sums(const int64_t* s, const int64_t* d, const int64_t* n_rel,
                    const int64_t* n_irr, Py_ssize_t n_classes, Py_ssize_t n_sets,
                    Py_ssize_t stride, const double* a, const double* b, double rel,
                    double zd, double* out_p, double* out_f) noexcept nogil:
    """One label's E[(a + X) / (b + X + Y)] and E[2 (a + X) / (rel + b + X + Y)] (zd where
    the denominator is 0) for each of the n_sets offsets a[k * stride], b[k * stride],
    written to out_p[k * stride], out_f[k * stride]: X and Y count the label's relevant and
    irrelevant boundary records that are predicted, independently, record (s, d) with
    probability d/s; n_rel[c] relevant and n_irr[c] irrelevant records in class c (counts
    >= 0). Returns -1 when out of memory, or when the records number more than any memory
    could hold (their scratch is 56 bytes a record)."""
    cdef Py_ssize_t cap = 1, c, k, i, j, wx, wy, lx = 0, ly = 0
    cdef Py_ssize_t most = PY_SSIZE_T_MAX // (7 * sizeof(double))
    cdef double num, den, acc_p, acc_f, x
    cdef double* buf
    for c in range(n_classes):
        if n_rel[c] > most - cap or n_irr[c] > most - cap - n_rel[c]:
            return -1  # (the sum cannot wrap around)
        cap += n_rel[c] + n_irr[c]
    buf = <double*> malloc(7 * cap * sizeof(double))
    if buf == NULL:
        return -1
    cdef double* X
    cdef double* Y
    cdef double* P = buf + 4 * cap  # P(X + Y = lx + ly + i)
    cdef double* H = buf + 5 * cap  # E[X; X + Y = lx + ly + i]
    # X and Y are independent: their distributions apart, then Z = X + Y with E[X; Z = z]
    wx = _poisson_binomial(s, d, n_rel, n_classes, buf, buf + cap, buf + 6 * cap, &lx, &X)
    wy = _poisson_binomial(s, d, n_irr, n_classes, buf + 2 * cap, buf + 3 * cap, buf + 6 * cap,
                           &ly, &Y)
    for i in range(wx + wy - 1):
        P[i] = 0.0
        H[i] = 0.0
    for i in range(wx):
        x = X[i] * (lx + i)
        for j in range(wy):
            P[i + j] += X[i] * Y[j]
            H[i + j] += x * Y[j]
    for k in range(n_sets):
        acc_p = 0.0
        acc_f = 0.0
        for i in range(wx + wy - 1):
            num = a[k * stride] * P[i] + H[i]
            den = b[k * stride] + (lx + ly + i)
            acc_p += num / den if den > 0 else zd * P[i]
            acc_f += 2.0 * num / (rel + den) if rel + den > 0 else zd * P[i]
        out_p[k * stride] = acc_p
        out_f[k * stride] = acc_f
    free(buf)
    return 0


cdef enum:
    DOC_PIECE_ROWS = 1024  # document_sums reads its rows in pieces of about this many


def document_sums(const double[:, ::1] doc, const int64_t[:, ::1] cols, Py_ssize_t q,
                  double zero_division, const double[::1] weight, double[:, ::1] out):
    """out[t, k] <- sum k (document_sums.h: the five ranking metrics, Hamming loss, exact
    match, precision, recall, F1, tp, npred, |C|) of the rows of doc for the ranking type
    whose columns are cols[t] (its five ranking metrics, tp, npred, exact or -1), each
    document's value times its weight when ``weight`` is not empty. Each sum runs in numpy's
    order, the bits of summing the same values with numpy, for any number of threads: the
    rows are cut where numpy's pairwise sum splits them, into pieces of about
    DOC_PIECE_ROWS, each piece's rows read once (in parallel) for every sum over it, and
    each sum's pieces joined as the pairwise sum joins them."""
    cdef Py_ssize_t n = doc.shape[0], n_sums = cols.shape[0] * FR_DOCUMENT_SUMS, task, piece
    cdef Py_ssize_t lo, m, longest = 1
    cdef int depth = 0
    cdef long long n_pieces, used
    cdef long long* first = NULL
    cdef double* sums = NULL
    cdef const double* w = &weight[0] if weight.shape[0] else NULL
    cdef const double* d = &doc[0, 0] if n else NULL
    cdef double* v = NULL  # (each thread's copy starts from this value, then allocates)
    cdef int failed[1]
    while (n >> depth) > DOC_PIECE_ROWS:
        depth += 1
    first = <long long*> malloc(((1 << depth) + 1) * sizeof(long long))
    if first == NULL:
        raise MemoryError("fastrank: cannot allocate metric scratch")
    n_pieces = fr_pairwise_pieces(n, depth, 0, first)
    for piece in range(n_pieces):
        longest = max(longest, first[piece + 1] - first[piece])
    sums = <double*> malloc(max(n_pieces * n_sums, 1) * sizeof(double))
    failed[0] = sums == NULL
    with nogil, parallel():
        v = <double*> malloc(longest * sizeof(double))
        if v == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for piece in prange(n_pieces, schedule="dynamic"):
            if v == NULL or sums == NULL:
                continue
            lo = first[piece]
            m = first[piece + 1] - lo
            for task in range(n_sums):
                fr_document_values(d + lo * doc.shape[1] if d != NULL else d, m, doc.shape[1],
                                   &cols[task // FR_DOCUMENT_SUMS, 0], N_REL,
                                   task % FR_DOCUMENT_SUMS, <double> q, zero_division,
                                   w + lo if w != NULL else w, v)
                sums[task * n_pieces + piece] = fr_pairwise_sum(v, m)
        free(v)
    if not failed[0]:
        for task in range(n_sums):
            used = 0
            out[task // FR_DOCUMENT_SUMS, task % FR_DOCUMENT_SUMS] = fr_pairwise_join(
                &sums[task * n_pieces], n, depth, &used)
    free(first)
    free(sums)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")


cdef enum:
    PIECE_DEPTH = 6  # document_total's pieces: at most 2^6, a few for each of 16 threads
    PIECES = 1 << PIECE_DEPTH
    PARALLEL_SUM_MIN = 1 << 14  # shorter sums stay on the calling thread
    COLUMN_RUN = 512  # chunk_total's columns per task: each chunk's part of a run is 4 KiB


def document_total(const double[:] values, const double[::1] weight):
    """numpy's sum of ``values`` (of ``values * weight`` when ``weight`` is not empty): the
    same bits, the pairwise sum's top halves summed on the threads side by side (the time
    of a pass over values that left the caches)."""
    cdef Py_ssize_t n = values.shape[0], k
    cdef long long stride = values.strides[0] // sizeof(double)
    cdef long long first[PIECES + 1]
    cdef double sums[PIECES]
    cdef long long used = 0
    cdef const double* a = &values[0] if n else NULL
    cdef const double* w = &weight[0] if weight.shape[0] else NULL
    if weight.shape[0] and weight.shape[0] != n:
        raise ValueError(f"{weight.shape[0]} weights for {n} values")
    if n < PARALLEL_SUM_MIN:
        return fr_pairwise_sum_strided(a, stride, w, n)
    cdef long long n_pieces = fr_pairwise_pieces(n, PIECE_DEPTH, 0, first)
    for k in prange(n_pieces, nogil=True, schedule="static", chunksize=1):
        sums[k] = fr_pairwise_sum_strided(a + first[k] * stride, stride,
                                          w + first[k] if w != NULL else NULL,
                                          first[k + 1] - first[k])
    return fr_pairwise_join(sums, n, PIECE_DEPTH, &used)


cdef inline void _chunk_run(const double* a, Py_ssize_t n_parts, Py_ssize_t width,
                            Py_ssize_t lo, Py_ssize_t hi, double* o) noexcept nogil:
    """o[lo:hi] <- the columns lo .. hi - 1 of the n_parts rows of a, added row by row."""
    cdef Py_ssize_t j, c
    for j in range(lo, hi):
        o[j] = a[j]
    for c in range(1, n_parts):
        for j in range(lo, hi):
            o[j] = o[j] + a[c * width + j]


def chunk_total(const double[:, ::1] parts, double[::1] out):
    """out[j] <- the sum over the chunks c of parts[c, j], added in chunk order: the bits of
    numpy's ``parts.sum(axis=0)`` when there are two or more columns (numpy adds a single
    one pairwise), runs of columns summed on the threads side by side (on the calling
    thread below PARALLEL_SUM_MIN values)."""
    cdef Py_ssize_t n_parts = parts.shape[0], width = parts.shape[1], run
    cdef Py_ssize_t n_runs = (width + COLUMN_RUN - 1) // COLUMN_RUN
    cdef double* o = &out[0] if width else NULL
    cdef const double* a = &parts[0, 0] if n_parts and width else NULL
    if out.shape[0] != width:
        raise ValueError(f"{width} columns summed into {out.shape[0]}")
    if n_parts == 0:
        out[:] = 0.0
    elif n_parts * width < PARALLEL_SUM_MIN:
        _chunk_run(a, n_parts, width, 0, width, o)
    else:
        for run in prange(n_runs, nogil=True, schedule="static"):
            _chunk_run(a, n_parts, width, run * COLUMN_RUN,
                       min(width, (run + 1) * COLUMN_RUN), o)


def boundary_expectations(const int64_t[::1] start, const int64_t[:, ::1] classes,
                          const double[:, :, ::1] counts, const double[::1] rel,
                          double zero_division, double[:, :, ::1] out):
    """Per label i and offset set k, the expectations over the boundary records of
    precision_i = TP_i / (TP_i + FP_i) and F1_i = 2 TP_i / (TP_i + FN_i + TP_i + FP_i)
    (``zero_division`` for 0/0), with TP_i = counts[0, k, i] + X_i and TP_i + FP_i =
    counts[1, k, i] + X_i + Y_i and ``rel[i]`` = TP_i + FN_i, into ``out[0, k, i]`` and
    ``out[1, k, i]``. Label i's record classes are ``start[i]:start[i + 1]``, the columns
    of ``classes`` (rows s, d, n_rel, n_irr): n_rel relevant and n_irr irrelevant records,
    each predicted independently with probability d/s (Poisson-binomial sums, computed
    exactly but for tails below 1e-22)."""
    cdef Py_ssize_t i, q = rel.shape[0], n_sets = counts.shape[1]
    cdef const int64_t* c = &classes[0, 0] if classes.shape[1] else <const int64_t*> NULL
    cdef Py_ssize_t k = classes.shape[1]
    cdef int failed[1]
    failed[0] = 0
    if q == 0 or n_sets == 0:
        return
    with nogil:
        for i in prange(q, schedule="dynamic"):
            if label_sums(c + start[i], c + k + start[i], c + 2 * k + start[i],
                          c + 3 * k + start[i], start[i + 1] - start[i], n_sets, q,
                          &counts[0, 0, i], &counts[1, 0, i], rel[i], zero_division,
                          &out[0, 0, i], &out[1, 0, i]):
                failed[0] = 1
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the boundary distributions")


cdef enum:
    SORT_BLOCKS = 64            # blocks of the entries counted side by side, at most
    SORT_BLOCK_MIN = 4096       # entries a block, at least
    SORT_COUNTERS = 1 << 22     # label counters of all blocks together, at most


def tabulate(const int64_t[:, ::1] rows, Py_ssize_t q):
    """The boundary record classes, counted: the columns of ``rows`` (5, n), (label, s, d,
    n_rel, n_irr), in any order and with repeats, summed into one per (label, s, d), sorted
    by it. Returns ``start`` (q + 1; label i's classes are ``start[i]:start[i + 1]``) and
    the classes, int64 (4, n_classes): rows s, d, n_rel, n_irr."""
    cdef Py_ssize_t n = rows.shape[1], i
    cdef Entry* e = <Entry*> calloc(2 * n + 1, sizeof(Entry))
    if e == NULL:
        raise MemoryError("fastrank: cannot allocate the boundary record classes")
    for i in range(n):
        e[i].label, e[i].s, e[i].d = <int32_t> rows[0, i], <int32_t> rows[1, i], \
            <int32_t> rows[2, i]
        e[i].n_rel, e[i].n_irr = rows[3, i], rows[4, i]
    return _tabulated(e, n, q)


cdef object _tabulated(Entry* a, Py_ssize_t n, Py_ssize_t q):
    """:func:`tabulate` of the n entries a[:n] (a holds 2n + 1, and is freed): a stable
    counting sort by label (the entries cut into blocks fixed by n and q, whose label
    counts and writes run in parallel), then each label's entries sorted by (s, d) and the
    equal ones added up, labels in parallel. The classes are the same, in the same order,
    however many threads run."""
    cdef Py_ssize_t i, j, k, lo, hi, blk, c, m = 0, max_k = 0
    cdef Py_ssize_t n_blocks = max(1, min(<Py_ssize_t> SORT_BLOCKS, n // SORT_BLOCK_MIN,
                                          SORT_COUNTERS // (q + 1)))
    cdef Entry* b = a + n
    cdef int64_t* count = <int64_t*> calloc(n_blocks * q + 1, sizeof(int64_t))
    cdef int64_t* first = <int64_t*> malloc((q + 1) * sizeof(int64_t))  # label i: b[first[i]:]
    cdef int64_t* kept = <int64_t*> malloc((q + 1) * sizeof(int64_t))  # its classes
    cdef int64_t total = 0, t
    cdef SortWork* w = NULL
    cdef int failed[1]
    failed[0] = count == NULL or first == NULL or kept == NULL
    if failed[0]:
        free(a)
        free(count)
        free(first)
        free(kept)
        raise MemoryError("fastrank: cannot allocate the boundary record classes")
    with nogil:
        for blk in prange(n_blocks, schedule="static"):  # each block's label counts
            for i in range(blk * n // n_blocks, (blk + 1) * n // n_blocks):
                count[blk * q + a[i].label] += 1
        for c in range(q):  # each block's place for each label, label by label
            first[c] = total
            for blk in range(n_blocks):
                t = count[blk * q + c]
                count[blk * q + c] = total
                total = total + t
            max_k = max(max_k, total - first[c])
        first[q] = total
        for blk in prange(n_blocks, schedule="static"):  # stable: block by block
            for i in range(blk * n // n_blocks, (blk + 1) * n // n_blocks):
                b[count[blk * q + a[i].label]] = a[i]
                count[blk * q + a[i].label] += 1
        with parallel():
            w = sort_work_new(max(max_k, 1))
            if w == NULL:
                failed[0] = 1
            # every thread must reach the work-shared loop (OpenMP); one without scratch
            # skips
            for c in prange(q, schedule="dynamic"):
                kept[c] = 0
                if w == NULL:
                    continue
                lo = first[c]
                hi = first[c + 1]
                for i in range(hi - lo):  # by (s, d): keys and positions, stably
                    w.keys[i] = (<uint64_t> <uint32_t> b[lo + i].s << 32) \
                        | <uint64_t> <uint32_t> b[lo + i].d
                    w.order[i] = <int32_t> i
                sort_keys(w.keys, w.order, hi - lo, w)
                k = 0  # the label's classes, added up, into a[lo:lo + k]
                for i in range(hi - lo):
                    j = lo + w.order[i]
                    if k and w.keys[i] == w.keys[i - 1]:
                        a[lo + k - 1].n_rel += b[j].n_rel
                        a[lo + k - 1].n_irr += b[j].n_irr
                    else:
                        a[lo + k] = b[j]
                        k = k + 1
                kept[c] = k
            sort_work_free(w)
    free(count)
    if failed[0]:
        free(a)
        free(first)
        free(kept)
        raise MemoryError("fastrank: cannot allocate the boundary record classes")
    start = np.empty(q + 1, dtype=np.int64)
    cdef int64_t[::1] st = start
    st[0] = 0
    for c in range(q):
        st[c + 1] = st[c] + kept[c]
    m = st[q]
    out = np.empty((4, m), dtype=np.int64)
    cdef int64_t[:, ::1] o = out
    for c in prange(q, nogil=True, schedule="static"):
        for i in range(kept[c]):
            j = first[c] + i
            k = st[c] + i
            o[0, k] = a[j].s
            o[1, k] = a[j].d
            o[2, k] = a[j].n_rel
            o[3, k] = a[j].n_irr
    free(a)
    free(first)
    free(kept)
    return start, out


# ---- cutoff: the predicted sets themselves ----------------------------------------------

cdef inline void _cut_row(SortWork* w, Py_ssize_t q, Py_ssize_t k, bint ordinal, bint drop_zero,
                          uint64_t seed, Py_ssize_t row, uint8_t* out) noexcept nogil:
    cdef Py_ssize_t p, cut
    cdef uint64_t zkey = desc_key(0.0)
    if ordinal:
        shuffle_groups(w.order, w.end, q, row_state(seed, row))
        cut = k if k < q else q
        if cut < 0:
            cut = 0
    else:
        cut = _group_cut(w.end, q, k)
    for p in range(cut):
        if not (drop_zero and w.keys[p] == zkey):
            out[w.order[p]] = 1


def cutoff(const floating[::1] values, Py_ssize_t row_stride, Py_ssize_t col_stride,
           const index_t[::1] indices, const index_t[::1] indptr, Py_ssize_t n, Py_ssize_t q,
           const int64_t[::1] k, bint ordinal, bint drop_zero, uint64_t seed,
           uint8_t[:, ::1] out):
    """out[i] <- 1 on the first k[i] positions of row i (whole tie groups unless ordinal),
    leaving out labels of belief 0 when drop_zero, for an (n, q) belief matrix given as for
    evaluate; ``out`` is zeroed by the caller."""
    cdef SortWork* w = NULL  # each thread sets its own
    cdef Py_ssize_t i
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const index_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const index_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        w = sort_work_new(q)
        if w == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for i in prange(n, schedule="static"):
            if w == NULL:
                continue
            sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, w)
            _cut_row(w, q, k[i], ordinal, drop_zero, seed, i, &out[i, 0])
        sort_work_free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")
