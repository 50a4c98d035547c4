# cython: language_level=3
"""Single ranking metrics without a full row sort: counting passes over the beliefs.

The Python layer is ``fastrank.metrics`` (one_error, coverage, ranking_loss,
average_precision, r_precision). Under the dense, standard, modified and expected ranking
types every one of these values is a function of a few counts per *relevant level* (a
belief held by at least one relevant label; r-precision: the boundary belief, below): the
labels strictly above it (``gt``), tied with it (``eq``),
and the relevant labels at it (``rel``) -- exactly the quantities the sort-based kernel
(``tie_metrics``) reads off each tie group holding a relevant label. This module gets them
without sorting the row:

* coverage reads the lowest relevant level, one-error the highest: one pass over the row
  gathers it, a second counts ``gt`` and ``eq`` (dense coverage counts the distinct beliefs
  above it: looked up a vector at a time in a small table while they are few, else in a
  hash set);
* ranking loss and average precision read every relevant level: the (few) relevant beliefs
  are sorted, then counting passes of up to four levels each; a row with more than
  ``MAX_LEVELS`` levels is sorted once (``_tiesort``) and its levels read from the tie
  groups;
* r-precision reads the boundary belief, the |C|-th largest: counting passes down the
  relevant levels find the level or the gap above one that holds it; a gap's few tied
  values are walked down from the largest, else its beliefs gathered for a top-|C|
  selection (a row with more than ``TOP_MAX`` relevant labels is sorted instead).

The values are then formed with the same floating-point operations, in the same order
(descending levels), as the sort-based kernel, so they have the same bits. Under the ordinal
ranking type every value reads the tie groups of the random order it needs, each of whose
shuffles starts at a step found from the counts above it (_tiesort.shuffle_group): one-error
and r-precision one group (the top one; the one holding position |C|), gathered and
shuffled; coverage the lowest relevant group, ranking loss and average precision every
relevant level's group, their relevant labels' places alone followed through the steps
(follow.h).

Each row's first pass over its beliefs and truth also checks them (no NaN belief, every
truth value 0 or 1), so the Python layer does not scan the inputs before the call.

Rows run in parallel (OpenMP, GIL released); each thread owns its scratch. A row's
counting passes also ask for the next row's beliefs and truth to be fetched into the cache,
so its first reads do not each wait on memory.
"""
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from _tiesort cimport (
    FR_FEW_DISTINCT, FR_INDEX_NUMBERS, SortWork, desc_key, floating,
    fr_distinct_index_f32, fr_distinct_index_f64, fr_few_memo_f32, fr_prefetch_bytes,
    index_t, row_state, shuffle_group, sort_keys, sort_row_at, sort_work_free, sort_work_new,
)

cdef extern from "tie_counting.h" nogil:
    int64_t fr_count_equal_f32(int level, const float* x, Py_ssize_t stride, Py_ssize_t m,
                               float v)
    int64_t fr_count_equal_f64(int level, const double* x, Py_ssize_t stride, Py_ssize_t m,
                               double v)
    void fr_count_levels_f32(int level, const float* x, Py_ssize_t stride, Py_ssize_t m,
                             const float* v, Py_ssize_t n, int64_t* gt, int64_t* eq,
                             int64_t* nan, int with_eq)
    void fr_count_levels_f64(int level, const double* x, Py_ssize_t stride, Py_ssize_t m,
                             const double* v, Py_ssize_t n, int64_t* gt, int64_t* eq,
                             int64_t* nan, int with_eq)
    Py_ssize_t fr_relevant_labels(int level, const uint8_t* y, Py_ssize_t m, int32_t* labels,
                                  unsigned* seen)
    Py_ssize_t fr_gather_f32(int level, const float* x, Py_ssize_t stride, const uint8_t* y,
                             Py_ssize_t m, double* out, int32_t* labels, unsigned* seen)
    Py_ssize_t fr_gather_f64(int level, const double* x, Py_ssize_t stride,
                             const uint8_t* y, Py_ssize_t m, double* out, int32_t* labels,
                             unsigned* seen)
    float fr_max_f32(const float* x, Py_ssize_t stride, Py_ssize_t m)
    double fr_max_f64(const double* x, Py_ssize_t stride, Py_ssize_t m)
    Py_ssize_t fr_where_equal_f32(int level, const float* x, Py_ssize_t stride, Py_ssize_t m,
                                  float v, int32_t* out)
    Py_ssize_t fr_where_equal_f64(int level, const double* x, Py_ssize_t stride,
                                  Py_ssize_t m, double v, int32_t* out)
    int fr_gap_top_f32(int level, const float* x, Py_ssize_t stride, Py_ssize_t m, float lo,
                       float hi, int bounded, int64_t r, float* v, int64_t* above,
                       int64_t* at)
    int fr_gap_top_f64(int level, const double* x, Py_ssize_t stride, Py_ssize_t m,
                       double lo, double hi, int bounded, int64_t r, double* v,
                       int64_t* above, int64_t* at)
    Py_ssize_t fr_few_distinct_above_f32(int level, const float* x, Py_ssize_t stride,
                                         Py_ssize_t m, float v, float* seen,
                                         fr_few_memo_f32* memo)
    Py_ssize_t fr_few_distinct_above_f64(int level, const double* x, Py_ssize_t stride,
                                         Py_ssize_t m, double v, double* seen)
    Py_ssize_t fr_few_distinct_above_counted_f32(int level, const float* x, Py_ssize_t stride,
                                                 Py_ssize_t m, float v, float* seen,
                                                 fr_few_memo_f32* memo, int64_t* counts)
    Py_ssize_t fr_top_insert(double* top, Py_ssize_t k, Py_ssize_t r, double v)
    Py_ssize_t fr_between_f32(int level, const float* x, Py_ssize_t stride, Py_ssize_t m,
                              float lo, float hi, int bounded, double* out)
    Py_ssize_t fr_between_f64(int level, const double* x, Py_ssize_t stride, Py_ssize_t m,
                              double lo, double hi, int bounded, double* out)
    Py_ssize_t fr_distinct_keys(int level, const uint64_t* keys, Py_ssize_t n, uint64_t* out,
                                int64_t* count)

cdef extern from "bits.h" nogil:
    unsigned FR_CTZ64(uint64_t x)
cdef extern from "numpy_sum.h" nogil:
    double fr_pairwise_sum_strided(const double* a, long long stride, const double* w,
                                   long long n)
    long long fr_pairwise_pieces(long long n, int depth, long long start, long long* first)
    double fr_pairwise_join(const double* sums, long long n, int depth, long long* used)
cdef extern from "few_distinct.h" nogil:
    int fr_index_places(int level, const uint8_t* index, const int32_t* labels, Py_ssize_t k,
                        const int32_t* level_of, int n, const int64_t* rel,
                        Py_ssize_t* places)
cdef extern from "follow.h" nogil:
    void fr_shuffled_positions(int level, Py_ssize_t* pos, Py_ssize_t k, Py_ssize_t m,
                               uint64_t row, Py_ssize_t step, int32_t* places)
    void fr_sort_places(Py_ssize_t* pos, Py_ssize_t k)
cdef extern from "expected_precision.h" nogil:
    double* fr_harmonic_numbers_new(int64_t q)
    double fr_expected_precision_sum(int64_t c, int64_t a, int64_t s, int64_t start,
                                     const double* h)

from fastrank._ext._simd cimport FR_SIMD_AVX2, FR_SIMD_AVX512, current_level

# metric codes
cdef enum:
    ONE_ERROR = 0
    COVERAGE = 1
    RANKING_LOSS = 2
    AP_POSITION = 3
    AP_LABEL = 4
    R_PRECISION = 5

# ranking types
cdef enum:
    DENSE = 0
    STANDARD = 1
    MODIFIED = 2
    EXPECTED = 3
    ORDINAL = 4  # the tie groups of the seeded random order that the metric reads

cdef enum:
    MAX_LEVELS = 32  # rows with more relevant levels than this are sorted instead
    TOP_MAX = 64  # r-precision: rows with more relevant labels than this are sorted instead
    AHEAD_PART = 1024  # bytes of the next row prefetched by each counting pass
    WHOLE_TREE = 64  # fr_pairwise_pieces' depth that splits down to the pairwise sum's blocks

#: the codes above, for the Python layer
METRICS = {"one_error": ONE_ERROR, "coverage": COVERAGE, "ranking_loss": RANKING_LOSS,
           "ap_position": AP_POSITION, "ap_label": AP_LABEL, "r_precision": R_PRECISION}
TIES = {"dense": DENSE, "standard": STANDARD, "modified": MODIFIED, "expected": EXPECTED,
        "ordinal": ORDINAL}
#: the (metric, ranking type) pairs this module computes
SERVED = {(m, t) for m in METRICS for t in TIES}


cdef struct Scratch:
    # the sort of rows with many relevant levels; its keys/order also hold the gathered
    # relevant beliefs
    SortWork* w
    uint8_t* zero        # per level: its belief is 0
    int64_t* rel         # per level: relevant labels at it
    int64_t* gt          # per level: labels strictly above it
    int64_t* eq          # per level: labels tied with it
    Py_ssize_t* pos      # ordinal: positions of relevant labels in their tie group
    int32_t* places      # ordinal: the places a group's shuffle draws (q + 16)
    const double* harmonic  # H_p for p <= q, the call's (expected average precision only)
    double value[MAX_LEVELS]  # per level: its belief (as float for float32 rows)
    uint64_t* tab_key    # hash set of keys (dense coverage), 2**tab_bits slots
    uint32_t* tab_stamp  # slot in use in the current row <=> tab_stamp == stamp
    uint32_t stamp
    int tab_bits
    bint bad             # a NaN belief or a truth value other than 0/1 was seen
    int level            # the instruction-set level of the counting passes (_simd)
    const char* ahead    # the next row's beliefs not yet prefetched, up to ahead_end
    const char* ahead_end


cdef Scratch* _scratch_new(Py_ssize_t q, int level, const double* harmonic) noexcept nogil:
    cdef Scratch* s = <Scratch*> calloc(1, sizeof(Scratch))
    if s == NULL:
        return NULL
    s.level = level
    s.tab_bits = 4
    while (<Py_ssize_t> 1 << s.tab_bits) < 2 * q:
        s.tab_bits += 1
    s.w = sort_work_new(q)
    s.zero = <uint8_t*> malloc(q + 1)
    s.rel = <int64_t*> malloc((q + 1) * sizeof(int64_t))
    s.gt = <int64_t*> malloc((q + 1) * sizeof(int64_t))
    s.eq = <int64_t*> malloc((q + 1) * sizeof(int64_t))
    s.pos = <Py_ssize_t*> malloc((q + 1) * sizeof(Py_ssize_t))
    s.places = <int32_t*> malloc((q + 16) * sizeof(int32_t))
    s.tab_key = <uint64_t*> malloc((<size_t> 1 << s.tab_bits) * sizeof(uint64_t))
    s.tab_stamp = <uint32_t*> calloc(<size_t> 1 << s.tab_bits, sizeof(uint32_t))
    s.harmonic = harmonic
    if s.w == NULL or s.zero == NULL or s.rel == NULL or s.gt == NULL or s.eq == NULL \
            or s.pos == NULL or s.places == NULL or s.tab_key == NULL \
            or s.tab_stamp == NULL:
        _scratch_free(s)
        return NULL
    return s


cdef void _scratch_free(Scratch* s) noexcept nogil:
    if s == NULL:
        return
    sort_work_free(s.w)
    free(s.zero)
    free(s.rel)
    free(s.gt)
    free(s.eq)
    free(s.pos)
    free(s.places)
    free(s.tab_key)
    free(s.tab_stamp)
    free(s)


# ---- one row: its beliefs as (stored values, stride, implicit zeros) ------------------------

cdef inline void _ask_ahead(Scratch* s, Py_ssize_t n) noexcept nogil:
    """A part of the next row on its way while this one is read (n levels counted: n parts)."""
    cdef size_t part
    if s.ahead < s.ahead_end:
        part = min(<size_t> (s.ahead_end - s.ahead), AHEAD_PART * <size_t> n)
        fr_prefetch_bytes(s.ahead, part)
        s.ahead += part


cdef inline void _count_levels(const floating* x, Py_ssize_t stride, Py_ssize_t m,
                               Py_ssize_t n_zero, const floating* v, Py_ssize_t n,
                               int64_t* gt, int64_t* eq, Scratch* s, bint check,
                               bint with_eq) noexcept nogil:
    """gt[l] <- labels with belief > v[l], eq[l] <- labels with belief == v[l], l < n (m
    stored values, then n_zero implicit zeros); without ``with_eq``, gt[l] <- labels with
    belief >= v[l] and eq[l] <- 0 (one comparison a level). With ``check`` (the row's first
    pass), s.bad <- True when a stored belief is NaN."""
    cdef int64_t nan = 0
    cdef int64_t* p_nan = &nan if check else NULL
    cdef Py_ssize_t l
    _ask_ahead(s, n)
    if floating is float:
        fr_count_levels_f32(s.level, x, stride, m, v, n, gt, eq, p_nan, with_eq)
    else:
        fr_count_levels_f64(s.level, x, stride, m, v, n, gt, eq, p_nan, with_eq)
    if nan:
        s.bad = True
    for l in range(n):
        if 0.0 > v[l] or (v[l] == 0.0 and not with_eq):
            gt[l] += n_zero
        elif v[l] == 0.0:
            eq[l] += n_zero


cdef inline void _count_level(const floating* x, Py_ssize_t stride, Py_ssize_t m,
                              Py_ssize_t n_zero, double v, int64_t* gt, int64_t* eq,
                              Scratch* s, bint check) noexcept nogil:
    """_count_levels for the one level v (exact as floating: a belief of the row, or 0)."""
    cdef floating w = <floating> v
    _count_levels(x, stride, m, n_zero, &w, 1, gt, eq, s, check, True)


cdef inline Py_ssize_t _distinct_above(const floating* x, Py_ssize_t stride, Py_ssize_t m,
                                       Py_ssize_t n_zero, double v, Scratch* s) noexcept nogil:
    """Number of distinct beliefs > v in the row (v exact as floating): while they are few,
    looked up a vector at a time in a small table (fr_few_distinct_above); else a hash set
    of their keys."""
    cdef Py_ssize_t j, n_above = 0, count = 0
    cdef uint64_t k
    cdef uint64_t* above = s.w.keys
    cdef uint32_t slot, mask = (<uint32_t> 1 << s.tab_bits) - 1
    cdef double xv
    cdef floating* seen = <floating*> s.w.keys
    if floating is float:
        count = fr_few_distinct_above_f32(s.level, x, stride, m, <float> v, seen, s.w.memo)
    else:
        count = fr_few_distinct_above_f64(s.level, x, stride, m, v, seen)
    if count >= 0:
        if n_zero > 0 and 0.0 > v:  # the implicit zeros: one more value, unless seen
            for j in range(count):
                if seen[j] == 0.0:
                    return count
            count += 1
        return count
    count = 0
    s.stamp += 1
    if s.stamp == 0:  # wrapped: forget every earlier row explicitly
        for j in range(mask + 1):
            s.tab_stamp[j] = 0
        s.stamp = 1
    for j in range(m):  # gather the beliefs above v without a branch per label
        xv = <double> x[j * stride] + 0.0  # -0.0 -> +0.0
        memcpy(&above[n_above], &xv, 8)  # its bits (memcpy: no aliasing of the two types)
        n_above += xv > v
    if n_zero > 0 and 0.0 > v:
        above[n_above] = 0  # the bits of +0.0
        n_above += 1
    for j in range(n_above):
        k = above[j]
        slot = <uint32_t> ((k * <uint64_t> 0x9E3779B97F4A7C15) >> (64 - s.tab_bits))
        while s.tab_stamp[slot] == s.stamp and s.tab_key[slot] != k:
            slot = (slot + 1) & mask
        if s.tab_stamp[slot] != s.stamp:
            s.tab_stamp[slot] = s.stamp
            s.tab_key[slot] = k
            count += 1
    return count


cdef inline Py_ssize_t _count_level_above(const floating* x, Py_ssize_t stride,
                                          Py_ssize_t m, Py_ssize_t n_zero, double v,
                                          Scratch* s) noexcept nogil:
    """_count_level of v (the row's first pass: its NaN check) and the distinct beliefs above
    v (_distinct_above) in one pass, where the path has it (float32 rows without implicit
    zeros, AVX2 or AVX-512: fr_few_distinct_above_counted); -1 (nothing counted) elsewhere."""
    cdef int64_t counts[3]
    cdef Py_ssize_t n = -1
    if floating is float:
        if n_zero == 0:
            _ask_ahead(s, 1)
            n = fr_few_distinct_above_counted_f32(s.level, x, stride, m, <float> v,
                                                  <float*> s.w.keys, s.w.memo, counts)
        if n >= 0:
            s.gt[0] = counts[0]
            s.eq[0] = counts[1]
            if counts[2]:
                s.bad = True
    return n


cdef inline Py_ssize_t _gather(const floating* x, Py_ssize_t stride, const index_t* idx,
                               Py_ssize_t m, Py_ssize_t q, const uint8_t* y, uint64_t* keys,
                               int32_t* labels, Py_ssize_t* n_rel, Scratch* s) noexcept nogil:
    """keys <- the keys (_tiesort.desc_key) of the relevant labels' stored beliefs (label
    j = idx[p] for a CSR row, p for a dense one, whose idx is NULL); n_rel <- the relevant
    labels of the row; s.bad <- True when a truth value is neither 0 nor 1; with
    ``labels``, a dense row's relevant labels, ascending, to it (beside their keys). Returns
    the number of keys written."""
    cdef Py_ssize_t j, k = 0, r = 0
    cdef unsigned seen = 0
    cdef double xv
    if m == q and idx == NULL:
        if floating is float:
            k = fr_gather_f32(s.level, x, stride, y, m, <double*> keys, labels, &seen)
        else:
            k = fr_gather_f64(s.level, x, stride, y, m, <double*> keys, labels, &seen)
        for j in range(k):  # the gathered doubles' bits -> their keys, in place
            memcpy(&xv, &keys[j], 8)
            keys[j] = desc_key(xv)
        n_rel[0] = k
        if seen > 1:
            s.bad = True
        return k
    for j in range(q):
        r += y[j] != 0  # (a value other than 0/1 is reported; it counts once here)
        seen |= y[j]
    if seen > 1:
        s.bad = True
    for j in range(m):
        if y[idx[j]]:
            keys[k] = desc_key(<double> x[j])
            k += 1
    n_rel[0] = r
    return k


cdef inline double _key_value(uint64_t k) noexcept nogil:
    """The belief of a desc_key key (inverse of desc_key, +0.0 for zero)."""
    cdef uint64_t u = k if k >> 63 else ~k & ~(<uint64_t> 1 << 63)
    cdef double v
    memcpy(&v, &u, 8)
    return v


cdef inline Py_ssize_t _levels(const floating* x, Py_ssize_t stride, const index_t* idx,
                               Py_ssize_t m, Py_ssize_t q, const uint8_t* y, int metric,
                               Scratch* s, Py_ssize_t* n_rel, double* low,
                               int32_t* labels, bint with_eq,
                               Py_ssize_t* n_above) noexcept nogil:
    """Fill s.zero/rel/gt/eq for the relevant levels the metric reads, highest first
    (coverage: the lowest only; one-error: the highest only); without ``with_eq``, the
    levels of ranking loss and average precision get gt <- the labels at or above them, eq
    <- 0 (_count_levels). Returns their number (0 if the row has no relevant label), or -1
    when there are more than MAX_LEVELS: the caller sorts. Coverage with ``n_above`` (not
    NULL) <- the distinct beliefs above the lowest relevant one, counted in the level's pass
    where the path fuses the two (_count_level_above), else -1.
    ``low`` <- the lowest relevant belief. With ``labels`` (s.w.order, which the keys' sort
    carries), a dense row's relevant labels are left there: by level, highest first (each
    level's ascending), when every level is read; in label order otherwise."""
    cdef uint64_t* keys = s.w.keys
    cdef Py_ssize_t n_stored, n_zero = q - m, n_imp, i, n_lev = 0
    cdef uint64_t zkey = desc_key(0.0), kk, best
    n_stored = _gather(x, stride, idx, m, q, y, keys, labels, n_rel, s)
    n_imp = n_rel[0] - n_stored
    if n_rel[0] == 0:  # no level to count: the row's NaN check alone
        _count_level(x, stride, m, n_zero, 0.0, &s.gt[0], &s.eq[0], s, True)
        return 0
    if n_imp > 0:  # relevant labels with an implicit belief of 0
        keys[n_stored] = zkey
        n_stored += 1
    if metric == COVERAGE or metric == ONE_ERROR:
        best = keys[0]
        for i in range(1, n_stored):
            kk = keys[i]
            if (metric == COVERAGE and kk > best) or (metric == ONE_ERROR and kk < best):
                best = kk
        s.rel[0] = 0
        for i in range(n_stored):
            if keys[i] == best:
                s.rel[0] += 1
        if best == zkey and n_imp > 0:
            s.rel[0] += n_imp - 1  # the one zero key above stood for all of them
        s.zero[0] = best == zkey
        low[0] = _key_value(best)
        if n_above != NULL:
            n_above[0] = _count_level_above(x, stride, m, n_zero, low[0], s)
            if n_above[0] >= 0:
                return 1
        _count_level(x, stride, m, n_zero, low[0], &s.gt[0], &s.eq[0], s, True)
        return 1
    # the distinct keys (ascending: descending beliefs) and their relevant labels, to
    # s.w.keys_tmp and s.rel: while few and no labels are carried, without a sort
    n_lev = fr_distinct_keys(s.level, keys, n_stored, s.w.keys_tmp, s.rel) \
        if labels == NULL else -1
    if n_lev < 0:
        sort_keys(keys, s.w.order, n_stored, s.w)  # keys ascending, labels carried
        n_lev = 0
        i = 0
        while i < n_stored:
            if n_lev == MAX_LEVELS:  # the caller sorts; the row's NaN check alone here
                _count_level(x, stride, m, n_zero, 0.0, &s.gt[0], &s.eq[0], s, True)
                return -1
            kk = keys[i]
            s.w.keys_tmp[n_lev] = kk
            s.rel[n_lev] = 0
            while i < n_stored and keys[i] == kk:
                s.rel[n_lev] += 1
                i += 1
            n_lev += 1
    for i in range(n_lev):
        kk = s.w.keys_tmp[i]
        if kk == zkey and n_imp > 0:
            s.rel[i] += n_imp - 1
        s.zero[i] = kk == zkey
        (<floating*> s.value)[i] = <floating> _key_value(kk)
    _count_levels(x, stride, m, n_zero, <floating*> s.value, n_lev, s.gt, s.eq, s, True,
                  with_eq)
    low[0] = _key_value(s.w.keys_tmp[n_lev - 1])
    return n_lev


cdef inline Py_ssize_t _levels_sorted(Scratch* s, Py_ssize_t q, const uint8_t* y,
                                      Py_ssize_t* steps) noexcept nogil:
    """The relevant levels of a row sorted by _tiesort (s.w), from its tie groups; with
    ``steps``, also the step of the row's shuffle at which each level's group starts (a
    group takes m - 1 steps)."""
    cdef SortWork* w = s.w
    cdef Py_ssize_t start = 0, stop, p, rel_g, n_lev = 0, groups = 0
    cdef uint64_t zkey = desc_key(0.0)
    while start < q:
        stop = w.end[start]
        rel_g = 0
        for p in range(start, stop):
            rel_g += y[w.order[p]]
        if rel_g > 0:
            s.rel[n_lev] = rel_g
            s.gt[n_lev] = start
            s.eq[n_lev] = stop - start
            s.zero[n_lev] = w.keys[start] == zkey
            if steps != NULL:
                steps[n_lev] = start - groups
            n_lev += 1
        groups += 1
        start = stop
    return n_lev


# ---- the values, from the levels (the sort-based kernel's operations, in its order) ---------

cdef inline double _value(const Scratch* s, Py_ssize_t n_lev, Py_ssize_t n_rel, Py_ssize_t q,
                          int metric, int ties, Py_ssize_t n_distinct) noexcept nogil:
    cdef Py_ssize_t l, a, sz, start, cum_rel = 0
    cdef double loss = 0.0, ap_pos = 0.0, ap_lab = 0.0, prec, t
    if metric == ONE_ERROR:
        if n_rel == 0 or s.gt[0] > 0:
            return 1.0
        if ties == EXPECTED:
            return 1.0 - <double> s.rel[0] / <double> s.eq[0]
        return 0.0 if s.rel[0] == s.eq[0] else 1.0
    if metric == COVERAGE:
        if n_rel == 0:
            return 0.0
        if ties == DENSE:
            return n_distinct
        if ties == STANDARD:
            return s.gt[0]
        if ties == MODIFIED:
            return s.gt[0] + s.eq[0] - 1
        a = s.rel[0]
        return (s.gt[0] + (<double> a * (s.eq[0] + 1)) / <double> (a + 1)) - 1.0
    for l in range(n_lev):
        a = s.rel[l]
        start = s.gt[l]
        sz = s.eq[l]
        if ties == EXPECTED:
            loss = loss + (<double> a * (start - cum_rel) + (0.5 * a) * (sz - a))
            if metric != RANKING_LOSS:
                t = fr_expected_precision_sum(cum_rel, a, sz, start, s.harmonic)
                ap_lab = ap_lab + t
                if not s.zero[l]:
                    ap_pos = ap_pos + t
            cum_rel += a
        else:
            cum_rel += a
            loss = loss + <double> a * (start + sz - cum_rel)
            prec = <double> cum_rel / <double> (start + sz)
            ap_lab = ap_lab + a * prec
            if not s.zero[l]:
                ap_pos = ap_pos + prec
    if metric == RANKING_LOSS:
        return loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    if n_rel == 0:
        return 1.0
    if metric == AP_LABEL:
        return ap_lab / n_rel
    return ap_pos / (n_rel if ties == EXPECTED else n_lev)


cdef inline Py_ssize_t _group_labels(const floating* x, Py_ssize_t stride,
                                     const index_t* idx, Py_ssize_t m, Py_ssize_t q, double v,
                                     Scratch* s) noexcept nogil:
    """s.w.order <- the labels whose belief is v (a belief of the row, or 0), in ascending
    index: the tie group of v, in the order the stable sort leaves it. Returns its size."""
    cdef SortWork* w = s.w
    cdef Py_ssize_t j, n = 0
    if q > m and v == 0.0:  # the zero group: every label without a non-zero belief
        for j in range(m):
            if x[j] != 0:
                w.mark[idx[j]] = 1
        for j in range(q):
            if w.mark[j]:
                w.mark[j] = 0
            else:
                w.order[n] = <int32_t> j
                n += 1
        return n
    if floating is float:
        n = fr_where_equal_f32(s.level, x, stride, m, <float> v, w.order)
    else:
        n = fr_where_equal_f64(s.level, x, stride, m, v, w.order)
    if idx != NULL:
        for j in range(n):
            w.order[j] = <int32_t> idx[w.order[j]]
    return n


cdef inline Py_ssize_t _shuffled_group(const floating* x, Py_ssize_t stride,
                                       const index_t* idx, Py_ssize_t m, Py_ssize_t q,
                                       double v, int64_t above, uint64_t seed, Py_ssize_t row,
                                       Scratch* s) noexcept nogil:
    """s.w.order <- the tie group of v (_group_labels), which starts after ``above`` labels,
    in the seeded random order, as the row's whole shuffle leaves it: its first step is
    above - (distinct beliefs above v) of the row's, a group of m labels taking m - 1
    (_tiesort.shuffle_group). Returns its size."""
    cdef Py_ssize_t n = _group_labels(x, stride, idx, m, q, v, s)
    cdef int64_t step = above - _distinct_above(x, stride, m, q - m, v, s) if above else 0
    shuffle_group(s.w.order, 0, n, row_state(seed, row), step)
    return n


cdef inline double _ordinal_one_error(const floating* x, Py_ssize_t stride,
                                      const index_t* idx, Py_ssize_t m, Py_ssize_t q,
                                      const uint8_t* y, uint64_t seed, Py_ssize_t row,
                                      Scratch* s) noexcept nogil:
    """1 - y of the label the seeded random order puts first. That order shuffles the top tie
    group from the row's first step, its labels in ascending index (_tiesort.shuffle_groups
    after the stable sort): the same shuffle of the same list here."""
    cdef Py_ssize_t j, n_zero = q - m
    cdef double top = 0.0
    cdef int64_t g, e
    cdef unsigned seen = 0
    for j in range(q):
        seen |= y[j]
    if m > 0:
        if floating is float:
            top = fr_max_f32(x, stride, m)
        else:
            top = fr_max_f64(x, stride, m)
        _count_level(x, stride, m, 0, top, &g, &e, s, True)  # the row's NaN check
    if s.bad or seen > 1:
        s.bad = True
        return 0.0
    if n_zero > 0 and 0.0 > top:
        top = 0.0
    _shuffled_group(x, stride, idx, m, q, top, 0, seed, row, s)
    return 1.0 - y[s.w.order[0]]


cdef inline double _ordinal_coverage(const floating* x, Py_ssize_t stride,
                                     const index_t* idx, Py_ssize_t m, Py_ssize_t q,
                                     const uint8_t* y, uint64_t seed, Py_ssize_t row,
                                     Scratch* s) noexcept nogil:
    """The position of the last relevant label in the seeded random order, found without a
    sort: the lowest relevant tie group starts after the gt labels above it and its shuffle
    at step gt - (distinct beliefs above it); its relevant labels' places in the group are
    followed through the shuffle (fr_shuffled_positions), the last one kept."""
    cdef Py_ssize_t n_rel, t, k = 0, last = 0, n_above = -1
    cdef double low
    cdef bint dense = idx == NULL and m == q  # (as _gather tells them apart)
    cdef int64_t step = 0
    _levels(x, stride, idx, m, q, y, COVERAGE, s, &n_rel, &low,
            s.w.order if dense else NULL, True, &n_above)
    if s.bad or n_rel == 0:
        return 0.0
    if s.rel[0] == s.eq[0]:  # every label of the group relevant: its last place
        return <double> (s.gt[0] + s.eq[0] - 1)
    if dense:  # the gathered relevant labels of the lowest belief, ascending
        for t in range(n_rel):
            if x[s.w.order[t] * stride] == <floating> low:
                s.w.order[k] = s.w.order[t]
                k += 1
    else:
        k = s.rel[0]
    _relevant_places(x, stride, idx, m, q, y, <floating> low, s.w.order if dense else NULL,
                     k, s.eq[0], s)
    if s.gt[0] and n_above < 0:
        n_above = _distinct_above(x, stride, m, q - m, low, s)
    if s.gt[0]:
        step = s.gt[0] - n_above
    fr_shuffled_positions(s.level, s.pos, k, s.eq[0], row_state(seed, row), step,
                          s.places)
    for t in range(k):
        last = s.pos[t] if s.pos[t] > last else last
    return <double> (s.gt[0] + last)


cdef struct OrdinalSums:
    # ordinal ranking loss and average precision, summed down the positions
    Py_ssize_t cum_rel  # relevant labels walked so far
    bint with_ap        # the precisions summed too (not for ranking loss)
    # irrelevant labels above each relevant one, summed as an integer: the bits of the
    # sort-based kernel's sum of doubles, which is exact
    Py_ssize_t loss
    double ap_pos       # precision at each relevant label of non-zero belief
    double ap_lab       # precision at each relevant label


cdef inline void _add_relevant(OrdinalSums* a, Py_ssize_t p, bint is_zero) noexcept nogil:
    """Add the next relevant label down the order, at position p, to the sums, with the
    sort-based kernel's operations (tie_metrics' ordinal pass)."""
    cdef double prec
    a.loss += p - a.cum_rel
    a.cum_rel += 1
    if not a.with_ap:
        return
    prec = <double> a.cum_rel / (p + 1)
    a.ap_lab += prec
    if not is_zero:
        a.ap_pos += prec


cdef inline void _walk_group(const int32_t* order, Py_ssize_t n, Py_ssize_t start,
                             const uint8_t* y, bint is_zero, OrdinalSums* a) noexcept nogil:
    """Add the relevant labels of a tie group at positions start .. start + n - 1, its labels
    in their random order order[:n] (NULL: every label relevant, whatever the order), to the
    sums."""
    cdef Py_ssize_t p
    for p in range(n):
        if order == NULL or y[order[p]]:
            _add_relevant(a, start + p, is_zero)


cdef inline void _walk_positions(Py_ssize_t* pos, Py_ssize_t k, Py_ssize_t start,
                                 bint is_zero, OrdinalSums* a) noexcept nogil:
    """Add k relevant labels at positions start + pos[:k] (sorted here, a few) to the sums."""
    cdef Py_ssize_t t
    fr_sort_places(pos, k)
    for t in range(k):
        _add_relevant(a, start + pos[t], is_zero)


cdef inline void _group_indices(const floating* x, Py_ssize_t stride, Py_ssize_t q,
                                floating v, const int32_t* labels, Py_ssize_t k,
                                Py_ssize_t eq, int level, Py_ssize_t* pos) noexcept nogil:
    """pos[:k] <- where each of the labels[:k] (ascending, of belief v, in a dense row
    holding eq labels of belief v) sits among the labels of belief v, in label order: the
    labels of belief v between them counted, from the row's start or, when shorter, from
    its end."""
    cdef Py_ssize_t t, j, c, edge
    if labels[k - 1] <= q - 1 - labels[0]:
        c = -1
        edge = -1
        for t in range(k):
            j = labels[t]
            if floating is float:
                c += 1 + fr_count_equal_f32(level, x + (edge + 1) * stride, stride,
                                            j - edge - 1, v)
            else:
                c += 1 + fr_count_equal_f64(level, x + (edge + 1) * stride, stride,
                                            j - edge - 1, v)
            pos[t] = c
            edge = j
        return
    c = eq
    edge = q
    for t in range(k - 1, -1, -1):
        j = labels[t]
        if floating is float:
            c -= 1 + fr_count_equal_f32(level, x + (j + 1) * stride, stride, edge - j - 1, v)
        else:
            c -= 1 + fr_count_equal_f64(level, x + (j + 1) * stride, stride, edge - j - 1, v)
        pos[t] = c
        edge = j


cdef inline void _csr_group_indices(const floating* x, const index_t* idx, Py_ssize_t m,
                                    Py_ssize_t q, const uint8_t* y, floating v,
                                    Py_ssize_t* pos) noexcept nogil:
    """pos <- where each relevant label of belief v sits among the labels of belief v, in
    label order, for a CSR row (m stored entries, indices ascending). The zero group (v = 0
    with labels not stored) holds every label but the stored non-zero ones: a relevant label
    j is at j less the stored non-zero labels before it, those counted while the relevant
    labels (eight truth values a word) and the stored ones are walked together. Another
    group is stored whole: its labels are counted as its stored entries are read."""
    cdef Py_ssize_t j, b, p = 0, c = 0, k = 0
    cdef uint64_t word
    if v == 0 and q > m:
        for b in range(0, q, 8):
            if q - b >= 8:
                memcpy(&word, &y[b], 8)
            else:
                word = 0
                for j in range(b, q):
                    word |= <uint64_t> (y[j] != 0) << (8 * (j - b))
            while word:
                j = b + (FR_CTZ64(word) >> 3)
                word &= ~(<uint64_t> 0xFF << (8 * (j - b)))
                while p < m and idx[p] < j:
                    c += x[p] != 0
                    p += 1
                if p < m and idx[p] == j and x[p] != 0:
                    continue
                pos[k] = j - c
                k += 1
        return
    for p in range(m):
        if x[p] == v:
            if y[idx[p]]:
                pos[k] = c
                k += 1
            c += 1


cdef inline void _relevant_places(const floating* x, Py_ssize_t stride,
                                  const index_t* idx, Py_ssize_t m, Py_ssize_t q,
                                  const uint8_t* y, floating v, const int32_t* labels,
                                  Py_ssize_t k, Py_ssize_t eq, Scratch* s) noexcept nogil:
    """s.pos[:k] <- where the k relevant labels of belief v sit among the eq labels of
    belief v, in label order: a dense row's (labels[:k], ascending) counted in the row
    (_group_indices), a CSR row's (labels NULL) read off its stored entries
    (_csr_group_indices)."""
    if labels != NULL:
        _group_indices(x, stride, q, v, labels, k, eq, s.level, s.pos)
    else:
        _csr_group_indices(x, idx, m, q, y, v, s.pos)


cdef inline void _walk_level(const floating* x, Py_ssize_t stride, const index_t* idx,
                             Py_ssize_t m, Py_ssize_t q, const uint8_t* y, double v,
                             Py_ssize_t l, const int32_t* labels, uint64_t stream,
                             int64_t step, Scratch* s, OrdinalSums* a) noexcept nogil:
    """The relevant labels of the tie group of relevant level l (belief v; a dense row's
    in labels[:s.rel[l]], ascending; NULL for a CSR row) at their places in its shuffle,
    walked: where each sits in its group before the shuffle (_relevant_places), followed
    through the shuffle's steps (fr_shuffled_positions)."""
    cdef Py_ssize_t k = s.rel[l]
    _relevant_places(x, stride, idx, m, q, y, <floating> v, labels, k, s.eq[l], s)
    fr_shuffled_positions(s.level, s.pos, k, s.eq[l], stream, step, s.places)
    _walk_positions(s.pos, k, s.gt[l], s.zero[l], a)


cdef inline Py_ssize_t _index_levels(const floating* given, Py_ssize_t q, const uint8_t* y,
                                     Scratch* s, Py_ssize_t* n_rel, int64_t* step,
                                     bint with_places) noexcept nogil:
    """The relevant levels of a contiguous row read off one pass that numbers its distinct
    beliefs (fr_distinct_index_f32: AVX2 and up, at most FR_FEW_DISTINCT, no NaN; a
    float64 row through its float32 roundings, in s.w.keys_tmp, where they keep its order,
    ties and zeros: fr_distinct_index_f64, AVX-512) and counts each:
    s.rel/gt/eq/zero per relevant level, highest first; step[l]
    <- the row's shuffle step at which its group starts (gt less the distinct beliefs
    above; MAX_LEVELS entries); where each level's relevant labels sit among its labels, in
    label order, into s.pos level after level (fr_index_places), when with_places (else
    step is not written either: the expected forms need neither). n_rel <- the row's
    relevant labels (fr_relevant_labels: its truth alone read, and checked, the beliefs
    being in cache). Returns the number of levels, or -1 for a row that takes the counting
    passes (nothing trusted)."""
    cdef uint8_t* index = <uint8_t*> s.w.slot_of
    cdef int32_t* labels = s.w.order_tmp
    cdef float values[FR_FEW_DISTINCT]
    cdef int64_t counts[FR_FEW_DISTINCT]
    cdef int32_t numbers[FR_FEW_DISTINCT]
    cdef int32_t level_of[FR_INDEX_NUMBERS]  # by number: its relevant level
    cdef int64_t rel_of[FR_INDEX_NUMBERS]    # by number: its relevant labels
    cdef Py_ssize_t n, k, d, t, n_lev = 0
    cdef int64_t above = 0
    cdef unsigned seen = 0
    _ask_ahead(s, 4)
    if floating is float:
        n = fr_distinct_index_f32(s.level, s.w.memo, given, q, index, numbers, values, counts)
    else:
        n = fr_distinct_index_f64(s.level, s.w.memo, given, q, <float*> s.w.keys_tmp, index,
                                  numbers, values, counts)
    if n < 0:
        return -1
    k = fr_relevant_labels(s.level, y, q, labels, &seen)
    if k < 0:
        return -1
    n_rel[0] = k
    if seen > 1 or k == 0:
        s.bad |= seen > 1
        return 0
    for d in range(n):
        rel_of[numbers[d]] = 0
    for t in range(k):
        rel_of[index[labels[t]]] += 1
    for d in range(n):  # descending beliefs; a level kept when it holds relevant labels
        level_of[numbers[d]] = <int32_t> n_lev  # (whether kept or not: no branch)
        s.rel[n_lev] = rel_of[numbers[d]]
        s.gt[n_lev] = above
        s.eq[n_lev] = counts[d]
        s.zero[n_lev] = values[d] == 0.0
        if with_places:
            step[n_lev] = above - d
        n_lev += rel_of[numbers[d]] > 0
        above += counts[d]
    if with_places and fr_index_places(s.level, index, labels, k, level_of, <int> n_lev,
                                       s.rel, s.pos) < 0:
        return -1
    return n_lev


cdef inline double _ordinal_ranking(const floating* vp, Py_ssize_t row_stride,
                                    Py_ssize_t col_stride, const index_t* ip,
                                    const index_t* pp, Py_ssize_t i, const floating* x,
                                    Py_ssize_t stride, const index_t* idx, Py_ssize_t m,
                                    Py_ssize_t q, const uint8_t* y, int metric, uint64_t seed,
                                    Py_ssize_t row, Scratch* s) noexcept nogil:
    """Ordinal ranking loss or average precision: every relevant label's position in the
    seeded random order, without a sort. A relevant level's tie group starts after the gt
    labels above it and its shuffle at step gt - (distinct beliefs above it); a contiguous
    row of few distinct beliefs reads them all, and where its relevant labels sit in their
    groups, off one pass that numbers its beliefs (_index_levels); other rows
    count them in passes over the row, the distinct beliefs above the lowest relevant level
    read from one list of them while there are few (else counted per level). Only the
    groups holding relevant and irrelevant labels are shuffled (fr_shuffled_positions). A
    row with more than MAX_LEVELS relevant levels is sorted, and so is every row below the
    AVX2 level, whose passes count one level at a time (the sort is then about 2.5x
    faster)."""
    cdef OrdinalSums a
    cdef Py_ssize_t n_rel = 0, n_lev = -1, l, j, n_seen = -1, n_zero = q - m, first = 0
    cdef int64_t above
    cdef int64_t steps[MAX_LEVELS]
    cdef double low, v
    cdef bint zero_seen = False, dense = pp == NULL
    cdef floating* seen = <floating*> s.w.keys_tmp
    cdef uint64_t stream = row_state(seed, row)
    a.cum_rel = 0
    a.with_ap = metric != RANKING_LOSS
    a.loss = 0
    a.ap_pos = a.ap_lab = 0.0
    if dense and stride == 1:
        n_lev = _index_levels(x, q, y, s, &n_rel, steps, True)
    if n_lev >= 0:
        if s.bad:
            return 0.0
        for l in range(n_lev):  # level l's places at s.pos[first:]
            if s.rel[l] == s.eq[l]:
                _walk_group(NULL, s.eq[l], s.gt[l], y, s.zero[l], &a)
            else:
                fr_shuffled_positions(s.level, s.pos + first, s.rel[l], s.eq[l], stream,
                                      steps[l], s.places)
                _walk_positions(s.pos + first, s.rel[l], s.gt[l], s.zero[l], &a)
            first += s.rel[l]
        return _ordinal_value(&a, metric, n_rel, q)
    n_lev = _levels(x, stride, idx, m, q, y, metric, s, &n_rel, &low, s.w.order, True, NULL)
    if s.bad:
        return 0.0
    if n_lev < 0 or s.level < FR_SIMD_AVX2:  # the sorted row's relevant groups, shuffled
        # as the whole row's would be (the portable counting passes take a level a pass)
        sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, s.w)
        n_lev = _levels_sorted(s, q, y, s.pos)
        for l in range(n_lev):
            if s.rel[l] < s.eq[l]:
                shuffle_group(s.w.order, s.gt[l], s.eq[l], stream, s.pos[l])
            _walk_group(s.w.order + s.gt[l] if s.rel[l] < s.eq[l] else NULL, s.eq[l],
                        s.gt[l], y, s.zero[l], &a)
    elif n_lev > 0:
        if floating is float:
            n_seen = fr_few_distinct_above_f32(s.level, x, stride, m, <float> low, seen,
                                               s.w.memo)
        else:
            n_seen = fr_few_distinct_above_f64(s.level, x, stride, m, low, seen)
        for j in range(n_seen):
            zero_seen |= seen[j] == 0.0
        for l in range(n_lev):
            first += s.rel[l]
            if s.rel[l] == s.eq[l]:
                _walk_group(NULL, s.eq[l], s.gt[l], y, s.zero[l], &a)
                continue
            v = (<floating*> s.value)[l]
            if s.gt[l] == 0:
                above = 0
            elif n_seen >= 0:
                above = n_zero > 0 and 0.0 > v and not zero_seen
                for j in range(n_seen):
                    above += seen[j] > v
            else:
                above = _distinct_above(x, stride, m, n_zero, v, s)
            _walk_level(x, stride, idx, m, q, y, v, l,
                        s.w.order + first - s.rel[l] if dense else NULL, stream,
                        s.gt[l] - above, s, &a)
    return _ordinal_value(&a, metric, n_rel, q)


cdef inline double _ordinal_value(const OrdinalSums* a, int metric, Py_ssize_t n_rel,
                                  Py_ssize_t q) noexcept nogil:
    """Ordinal ranking loss or average precision of a row from its sums."""
    if metric == RANKING_LOSS:
        return <double> a.loss / (<double> n_rel * (q - n_rel)) if 0 < n_rel < q else 0.0
    if n_rel == 0:
        return 1.0
    return (a.ap_lab if metric == AP_LABEL else a.ap_pos) / n_rel


cdef inline bint _boundary(const floating* x, Py_ssize_t stride, Py_ssize_t m,
                           Py_ssize_t n_zero, Py_ssize_t n_rel, const uint64_t* rel_keys,
                           Py_ssize_t n_keys, Scratch* s, double* v, int64_t* g,
                           int64_t* e) noexcept nogil:
    """v <- the n_rel-th largest belief of the row, g and e <- the labels above and tied with
    it, without sorting: the relevant levels (rel_keys, sorted) are counted from the top
    until one has n_rel labels at or above it; v lies in that level or in the gap above it,
    whose few tied values at the top are walked down (fr_gap_top), or else its beliefs
    gathered for a top-n selection. False when that takes more than MAX_LEVELS levels (the
    caller sorts)."""
    cdef Py_ssize_t p = 0, n_pass = 0, k, t = 0, j, c_hi = 0
    cdef int64_t n_above = 0, n_at = 0
    cdef uint64_t kk
    cdef double lv = 0.0, hi = 0.0, bv = 0.0
    cdef float top_f32 = 0.0
    cdef int found
    cdef bint bounded = False
    cdef double* gap = <double*> s.w.keys_tmp
    cdef double* top = <double*> s.w.keys
    while True:
        if n_pass == MAX_LEVELS:
            return False
        lv = _key_value(rel_keys[p])
        _count_level(x, stride, m, n_zero, lv, g, e, s, n_pass == 0)
        n_pass += 1
        if g[0] + e[0] >= n_rel:
            break
        c_hi = g[0] + e[0]
        hi = lv
        bounded = True
        kk = rel_keys[p]
        while p < n_keys and rel_keys[p] == kk:
            p += 1
        if p == n_keys:  # only with NaN beliefs, which the caller's check reports
            return False
    v[0] = lv
    if g[0] < n_rel:  # the boundary is this level
        return True
    if n_zero == 0:  # few tied values at the top of the gap: walked down, not gathered
        if floating is float:
            found = fr_gap_top_f32(s.level, x, stride, m, <float> lv, <float> hi, bounded,
                                   n_rel - c_hi, &top_f32, &n_above, &n_at)
            bv = top_f32
        else:
            found = fr_gap_top_f64(s.level, x, stride, m, lv, hi, bounded, n_rel - c_hi,
                                   &bv, &n_above, &n_at)
        if found:
            v[0] = bv
            g[0] = c_hi + n_above
            e[0] = n_at
            return True
    if floating is float:  # exact: lv and hi are beliefs of the row (or 0)
        k = fr_between_f32(s.level, x, stride, m, <float> lv, <float> hi, bounded, gap)
    else:
        k = fr_between_f64(s.level, x, stride, m, lv, hi, bounded, gap)
    for j in range(k):
        t = fr_top_insert(top, t, n_rel - c_hi, gap[j])
    if n_zero > 0 and lv < 0.0 and (not bounded or 0.0 < hi):  # implicit zeros in the gap
        for _ in range(min(n_zero, n_rel - c_hi)):
            t = fr_top_insert(top, t, n_rel - c_hi, 0.0)
    v[0] = top[n_rel - c_hi - 1]
    bv = v[0]
    for j in range(k):  # (in locals: the stores through g and e could alias gap)
        n_above += gap[j] > bv
        n_at += gap[j] == bv
    g[0] = c_hi + n_above
    e[0] = n_at
    if n_zero > 0 and lv < 0.0 and (not bounded or 0.0 < hi):
        if 0.0 > v[0]:
            g[0] += n_zero
        elif v[0] == 0.0:
            e[0] += n_zero
    return True


cdef inline double _r_precision(const floating* vp, Py_ssize_t row_stride,
                                Py_ssize_t col_stride, const index_t* ip, const index_t* pp,
                                Py_ssize_t i, const floating* x, Py_ssize_t stride,
                                const index_t* idx, Py_ssize_t m, Py_ssize_t q,
                                const uint8_t* y, int ties, uint64_t seed, Py_ssize_t row,
                                Scratch* s) noexcept nogil:
    """R-precision of one row: the boundary belief v (the |C|-th largest: _boundary, or read
    off the sorted row when |C| > TOP_MAX) splits the row into the g labels above it and
    the e tied with it; a_above and a_at relevant labels among them, z labels of belief 0
    (z_rel relevant) that the prediction drops. The values are the sort-based kernel's
    sums, which hold integers until the boundary group's share (expected). Under ordinal,
    the first d = |C| - g labels of the boundary group's seeded shuffle are predicted: all
    or none of them relevant when the group's labels are, else the group alone is gathered
    and shuffled (_shuffled_group)."""
    cdef uint64_t* rel_keys = s.tab_key  # (the sort and the selection use s.w)
    cdef Py_ssize_t n_rel, n_keys, n_imp, n_zero = q - m, j, d
    cdef int64_t g, e, g0, z = 0, z_rel = 0, a_above = 0, a_at = 0, tp, n_pred, at
    cdef uint64_t kv, zkey = desc_key(0.0)
    cdef double v, t
    n_keys = _gather(x, stride, idx, m, q, y, rel_keys, NULL, &n_rel, s)
    if n_rel == 0:  # nothing predicted: the row's NaN check alone
        _count_level(x, stride, m, n_zero, 0.0, &g, &e, s, True)
        return 0.0
    n_imp = n_rel - n_keys
    if n_imp > 0:  # one key stands for the relevant labels with an implicit belief of 0
        rel_keys[n_keys] = zkey
        n_keys += 1
    sort_keys(rel_keys, s.w.order, n_keys, s.w)
    if n_rel > TOP_MAX or not _boundary(x, stride, m, n_zero, n_rel, rel_keys, n_keys, s,
                                        &v, &g, &e):
        sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, s.w)
        v = _key_value(s.w.keys[n_rel - 1])
        _count_level(x, stride, m, n_zero, v, &g, &e, s, True)
    kv = desc_key(v)
    for j in range(n_keys):
        a_above += rel_keys[j] < kv
        a_at += rel_keys[j] == kv
    if 0.0 > v:  # the belief-0 group lies above the boundary
        _count_level(x, stride, m, n_zero, 0.0, &g0, &z, s, False)
        for j in range(n_keys):
            z_rel += rel_keys[j] == zkey
    if n_imp > 0:  # the zero key counted once for n_imp labels
        a_above += (n_imp - 1) * (0.0 > v)
        a_at += (n_imp - 1) * (v == 0.0)
        z_rel += (n_imp - 1) * (0.0 > v)
    if ties == ORDINAL and v != 0.0:  # the first |C| positions: d of the boundary group's
        d = n_rel - g
        if a_at == 0 or a_at == e:
            at = d if a_at else 0
        else:
            _shuffled_group(x, stride, idx, m, q, v, g, seed, row, s)
            at = 0
            for j in range(d):
                at += y[s.w.order[j]]
        n_pred = g - z + d
        return <double> (a_above - z_rel + at) / <double> n_pred if n_pred > 0 else 0.0
    if ties == EXPECTED:  # the first |C| positions: d of the boundary group's e labels
        d = n_rel - g
        if v == 0.0:
            return <double> a_above / <double> g if g > 0 else 0.0
        t = <double> (a_above - z_rel) + <double> d * a_at / e
        n_pred = g - z + d
        return t / <double> n_pred if n_pred > 0 else 0.0
    if v == 0.0:  # whole tie groups down to the boundary one, belief-0 labels dropped
        tp, n_pred = a_above, g
    else:
        tp, n_pred = a_above + a_at - z_rel, g + e - z
    return <double> tp / n_pred if n_pred > 0 else 0.0


cdef inline double _row(const floating* vp, Py_ssize_t row_stride, Py_ssize_t col_stride,
                        const index_t* ip, const index_t* pp, Py_ssize_t i, Py_ssize_t q,
                        const uint8_t* y, int metric, int ties, uint64_t seed, Py_ssize_t row,
                        Scratch* s) noexcept nogil:
    cdef const floating* x
    cdef const index_t* idx = NULL
    cdef Py_ssize_t m, stride, n_lev, n_rel, n_distinct = -1
    cdef double low
    if pp == NULL:
        x = vp + i * row_stride
        stride = col_stride
        m = q
    else:
        m = pp[i + 1] - pp[i]
        x = vp + pp[i] if m > 0 else vp  # never read when m == 0
        idx = ip + pp[i] if m > 0 else ip  # NULL only when m == 0 < q
        stride = 1
    if ties == ORDINAL and metric == ONE_ERROR:
        return _ordinal_one_error(x, stride, idx, m, q, y, seed, row, s)
    if ties == ORDINAL and metric == COVERAGE:
        return _ordinal_coverage(x, stride, idx, m, q, y, seed, row, s)
    if ties == ORDINAL and metric != R_PRECISION:
        return _ordinal_ranking(vp, row_stride, col_stride, ip, pp, i, x, stride, idx, m, q,
                                y, metric, seed, row, s)
    if metric == R_PRECISION:
        return _r_precision(vp, row_stride, col_stride, ip, pp, i, x, stride, idx, m, q, y,
                            ties, seed, row, s)
    # (the expected ranking loss and average precision of a contiguous row of few
    # distinct beliefs read every count they need off the pass that numbers its beliefs,
    # where the counting passes take two comparisons a level: on AVX-512, whose pass
    # looks its values up by permutes; the AVX2 pass gathers, slower than the counting
    # passes there (66 against 49 ms on the EPYC). Dense, standard and modified read only
    # the labels at or above each relevant level: one comparison a level)
    if ties == EXPECTED and metric != ONE_ERROR and metric != COVERAGE and pp == NULL \
            and stride == 1 and s.level >= FR_SIMD_AVX512:
        n_lev = _index_levels(x, q, y, s, &n_rel, NULL, False)
        if n_lev >= 0:
            return 0.0 if s.bad else _value(s, n_lev, n_rel, q, metric, ties, -1)
    n_lev = _levels(x, stride, idx, m, q, y, metric, s, &n_rel, &low, NULL, ties == EXPECTED,
                    &n_distinct if metric == COVERAGE and ties == DENSE else NULL)
    if n_lev < 0:
        sort_row_at(vp, row_stride, col_stride, ip, pp, i, q, s.w)
        n_lev = _levels_sorted(s, q, y, NULL)
    if metric == COVERAGE and ties == DENSE and n_rel > 0 and n_distinct < 0:
        n_distinct = _distinct_above(x, stride, m, q - m, low, s)
    return _value(s, n_lev, n_rel, q, metric, ties, n_distinct)


def values(const floating[::1] values, Py_ssize_t row_stride, Py_ssize_t col_stride,
           const int32_t[::1] indices, const int32_t[::1] indptr, Py_ssize_t n, Py_ssize_t q,
           const uint8_t[:, ::1] y, int metric, int ties, uint64_t seed, Py_ssize_t first_row,
           const double[::1] weight, double[::1] out):
    """out[i] <- the per-document value of ``metric`` under ``ties`` (codes: METRICS, TIES,
    a pair in SERVED) for row i of an (n, q) belief matrix given as for
    ``tie_metrics.evaluate`` (a dense flat buffer with element strides, or a canonical CSR
    matrix, its indices int32 here: one copy of the kernel where two index types would take
    two); row i draws its random order as global row ``first_row + i`` from ``seed``.

    Returns ``(sound, total)``. ``total`` is numpy's sum of ``out`` (of ``out * weight`` when
    ``weight`` is not empty), the same bits: the rows run in the blocks of at most 128 that
    numpy's pairwise sum adds with eight accumulators, each block summed as soon as its
    values are written, the blocks' sums joined in numpy's order. The rows' passes check
    their input as they read it: ``sound`` is False (the values then meaningless) when a
    belief is NaN or a truth value is neither 0 nor 1; the caller need not scan the inputs
    for those beforehand."""
    cdef Scratch* s = NULL  # (each thread's copy starts from this value, then allocates)
    cdef Py_ssize_t i, b
    cdef const floating* vp = &values[0] if values.shape[0] else NULL
    cdef const int32_t* ip = &indices[0] if indices.shape[0] else NULL
    cdef const int32_t* pp = &indptr[0] if indptr.shape[0] else NULL
    cdef const double* wp = &weight[0] if weight.shape[0] else NULL
    cdef long long* first = NULL
    cdef double* sums = NULL
    cdef double* harmonic = NULL  # the call's one table, read by every thread
    cdef long long n_blocks, used = 0
    cdef double total
    cdef int failed[1]
    cdef int bad[1]
    cdef int level = current_level()
    if not (0 <= metric <= R_PRECISION and 0 <= ties <= ORDINAL):
        raise ValueError(f"no counting form for metric code {metric} under ranking type "
                         f"code {ties} (see SERVED)")
    if out.shape[0] != n or (wp != NULL and weight.shape[0] != n):
        raise ValueError(f"{n} rows, {out.shape[0]} outputs and {weight.shape[0]} weights")
    first = <long long*> malloc((n // 64 + 2) * sizeof(long long))
    sums = <double*> malloc((n // 64 + 1) * sizeof(double))
    cdef bint expected_ap = ties == EXPECTED and (metric == AP_POSITION or metric == AP_LABEL)
    if expected_ap:
        harmonic = fr_harmonic_numbers_new(q)
    if first == NULL or sums == NULL or (expected_ap and harmonic == NULL):
        free(first)
        free(sums)
        free(harmonic)
        raise MemoryError("fastrank: cannot allocate metric scratch")
    n_blocks = fr_pairwise_pieces(n, WHOLE_TREE, 0, first) if n else 0
    failed[0] = 0
    bad[0] = 0
    with nogil, parallel():
        s = _scratch_new(q, level, harmonic)
        if s == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips.
        # Blocks of rows handed out as threads come free: a thread slowed by another
        # process (a shared machine's core) takes fewer; the sums join in block order.
        for b in prange(n_blocks, schedule="dynamic"):
            if s == NULL:
                continue
            for i in range(first[b], first[b + 1]):
                if pp == NULL and i + 1 < n and col_stride == 1:
                    fr_prefetch_bytes(&y[i + 1, 0], q)
                    s.ahead = <const char*> (vp + (i + 1) * row_stride)
                    s.ahead_end = s.ahead + q * sizeof(floating)
                out[i] = _row(vp, row_stride, col_stride, ip, pp, i, q, &y[i, 0], metric,
                              ties, seed, first_row + i, s)
            sums[b] = fr_pairwise_sum_strided(&out[first[b]], 1,
                                              wp + first[b] if wp != NULL else NULL,
                                              first[b + 1] - first[b])
        if s != NULL and s.bad:
            bad[0] = 1
        _scratch_free(s)
    total = fr_pairwise_join(sums, n, WHOLE_TREE, &used) if n else 0.0
    free(first)
    free(sums)
    free(harmonic)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate metric scratch")
    return not bad[0], total
