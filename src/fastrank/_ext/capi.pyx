# cython: language_level=3
"""fastrank's C API: the table of ``fastrank.h`` (``fastrank.get_include()``), exported as
the capsule ``_C_API`` and read by ``fastrank_import()`` (C) or ``cimport fastrank`` (Cython).

Each entry checks its arguments, records a message per thread on error (``last_error``) and
calls the kernels the Python API calls, on the calling thread and without the GIL: the same
bits as the Python API. The evaluation state holds what ``fastrank.Evaluator`` holds (see
``fastrank.metrics._evaluate``), filled and read the way it fills and reads it.
"""
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcpy, memset
from cpython.pycapsule cimport PyCapsule_New

from fastrank._ext._simd cimport current_level
from fastrank._ext.checks cimport first_nan_f64, first_not_binary_u8
from fastrank._ext.cosine_topk cimport topk_dense_f64
from fastrank._ext.tie_metrics cimport label_sums, metrics_row, row_scratch_size
from fastrank._ext.vgram cimport encode_dense_f64, search_nearest
from _tiesort cimport (
    FRACTIONAL, SortWork, emit_row, sort_dense_row, sort_keys, sort_work_free, sort_work_new,
)

from fastrank._ext import tie_metrics, tie_ranks

# the declarations of fastrank.h (the table, the state, the constants)
from fastrank cimport (
    FASTRANK_CAPI_VERSION_MAJOR, FASTRANK_CAPI_VERSION_MINOR, FASTRANK_EINVAL, FASTRANK_ENOMEM,
    FASTRANK_N_DOC_SUMS, FASTRANK_N_LABEL_ROWS, FASTRANK_N_TIES, FASTRANK_OK,
    FASTRANK_RANK_DENSE, FASTRANK_RANK_FRACTIONAL, FASTRANK_RANK_MODIFIED, FASTRANK_RANK_ORDINAL,
    FASTRANK_RANK_STABLE, FASTRANK_RANK_STANDARD, FASTRANK_TIES_EXPECTED, fastrank_capi,
    fastrank_eval_state,
)

cdef extern from "capi_support.h":
    const char* fr_last_error() noexcept nogil
    int fr_fail(int code, const char* format, ...) noexcept nogil
    double fr_pairwise_sum(const double* a, long long n) noexcept nogil
    ctypedef int fr_thread_key
    int fr_thread_key_create(fr_thread_key* key, void (*release)(void*) noexcept nogil) \
        noexcept nogil
    void* fr_thread_get(fr_thread_key key) noexcept nogil
    int fr_thread_set(fr_thread_key key, void* value) noexcept nogil

# ---- the tables the Python layer reads, read here once --------------------------------------

# The ranking methods' codes are the kernel's (_tiesort), and the C API's promise
if tie_ranks.METHODS != {"ordinal": FASTRANK_RANK_ORDINAL, "stable": FASTRANK_RANK_STABLE,
                         "dense": FASTRANK_RANK_DENSE, "standard": FASTRANK_RANK_STANDARD,
                         "modified": FASTRANK_RANK_MODIFIED,
                         "fractional": FASTRANK_RANK_FRACTIONAL}:
    raise ImportError("fastrank: the ranking kernel's method codes differ from fastrank.h's")

#: the ranking types in the order of the state's rows (FASTRANK_TIES_*)
TIES = ("ordinal", "dense", "standard", "modified", "expected")
# Evaluator's sums per ranking type (fastrank.metrics._evaluate._DOC_SUMS), their positions
cdef enum:
    HAMMING = 5
    EXACT = 6
    PRECISION_D = 7
    RECALL_D = 8
    F1_D = 9
    TP = 10
    NPRED = 11
    NREL = 12
    MAX_DOC_COLUMNS = 64
    N_METRICS = 19

# a boundary record's counts, summed or not: exact in a double
cdef int64_t _COUNT_MAX = 1LL << 53
cdef double _weight_lo, _weight_hi  # a non-zero row weight's range: Evaluator's

cdef int _family[5]       # kernel family flag of each ranking type
cdef int _lab_row[5]      # its (TP_i, TP_i + FP_i) rows of the label counts
cdef int _col[5][8]       # its per-document columns: the five ranking metrics, tp, npred, exact
cdef int _n_rel = tie_metrics.DOC_COLUMNS["n_rel"]
cdef int _lab_rel = tie_metrics.LAB_ROWS["relevant"]
cdef int _lab_fixed = tie_metrics.LAB_ROWS["fixed"]
cdef uint64_t _mc_salt
cdef int64_t _max_draws   # Evaluator's largest n_draws

if tie_metrics.N_DOC_COLUMNS > MAX_DOC_COLUMNS or tie_metrics.N_LAB_ROWS != FASTRANK_N_LABEL_ROWS:
    raise ImportError("fastrank: the metric kernel's tables do not fit fastrank.h's state")


def _read_tables():
    from fastrank.metrics import _common, _evaluate
    global _mc_salt, _max_draws, _weight_lo, _weight_hi
    keys = ("one_error", "coverage", "ranking_loss", "ap_position", "r_precision", "tp",
            "npred")
    if _evaluate._DOC_SUMS[5:] != ("hamming_loss", "exact_match", "precision_d", "recall_d",
                                   "f1_d", "tp", "npred", "nrel"):
        raise ImportError("fastrank: Evaluator's sums differ from the C API's state")
    for t, name in enumerate(TIES):
        _family[t] = _common.family(name)
        _lab_row[t] = _common.LAB_ROWS[_family[t]]
        for k, key in enumerate(keys):
            _col[t][k] = _common.column(name, key)
        _col[t][7] = _common.column(name, "exact") if name == "expected" else -1
    _mc_salt = _common._MC_SALT
    _max_draws = _evaluate.MAX_DRAWS
    _weight_lo, _weight_hi = _common.WEIGHT_RANGE


_read_tables()


# ---- checks -------------------------------------------------------------------------------

cdef inline int _check_scores(const double* scores, int64_t n, const char* name) noexcept nogil:
    cdef Py_ssize_t j
    if scores == NULL:
        return fr_fail(FASTRANK_EINVAL, "%s is NULL", name)
    j = first_nan_f64(scores, n, False)
    if j >= 0:
        return fr_fail(FASTRANK_EINVAL, "%s has NaN at %lld", name, <long long> j)
    return FASTRANK_OK


cdef inline int _check_finite(const double* x, int64_t n, const char* name) noexcept nogil:
    cdef Py_ssize_t j = first_nan_f64(x, n, True)
    if j >= 0:
        return fr_fail(FASTRANK_EINVAL, "%s has NaN or infinity at %lld", name,
                       <long long> j)
    return FASTRANK_OK


cdef inline int _check_labels(int64_t q) noexcept nogil:
    if q < 1 or q > 2147483647:
        return fr_fail(FASTRANK_EINVAL, "n_labels must be from 1 to 2**31 - 1, got %lld",
                       <long long> q)
    return FASTRANK_OK


# ---- the rows' scratch ----------------------------------------------------------------------

cdef struct RowScratch:
    int64_t q
    SortWork* work   # the sort's scratch
    int32_t* row     # metrics_row's (row_scratch_size(q) values)

cdef fr_thread_key _scratch_key


cdef void _release_scratch(void* p) noexcept nogil:
    cdef RowScratch* s = <RowScratch*> p
    if s != NULL:
        sort_work_free(s.work)
        free(s.row)
        free(s)


if fr_thread_key_create(&_scratch_key, _release_scratch):
    raise ImportError("fastrank: cannot create the C API's per-thread scratch key")


cdef RowScratch* _thread_scratch(int64_t q) noexcept nogil:
    """The calling thread's scratch for rows of q labels, or NULL when out of memory: kept
    from one call to the next (a row's own allocation and clearing cost as much as a
    tenth of it), made anew for another number of labels, released when the thread
    ends. The instruction-set level is read at every call (fastrank.use_simd)."""
    cdef RowScratch* s = <RowScratch*> fr_thread_get(_scratch_key)
    if s != NULL and s.q == q:
        s.work.level = current_level()
        return s
    _release_scratch(s)
    fr_thread_set(_scratch_key, NULL)
    s = <RowScratch*> malloc(sizeof(RowScratch))
    if s == NULL:
        return NULL
    s.q = q
    s.work = sort_work_new(q)
    s.row = <int32_t*> malloc(row_scratch_size(q) * sizeof(int32_t))
    if s.work == NULL or s.row == NULL or fr_thread_set(_scratch_key, s):
        _release_scratch(s)
        return NULL
    return s


# ---- ranking --------------------------------------------------------------------------------

cdef int rank_row(const double* scores, int64_t q, int method, uint64_t seed, int64_t row,
                  int32_t* ranks, double* frac_ranks) noexcept nogil:
    cdef int err = _check_labels(q) or _check_scores(scores, q, "scores")
    cdef RowScratch* s
    if err:
        return err
    if method < FASTRANK_RANK_ORDINAL or method > FASTRANK_RANK_FRACTIONAL:
        return fr_fail(FASTRANK_EINVAL, "unknown ranking method %d", method)
    if (method == FRACTIONAL and frac_ranks == NULL) or (method != FRACTIONAL and ranks == NULL):
        return fr_fail(FASTRANK_EINVAL, "the output of ranking method %d is NULL", method)
    if row < 0:
        return fr_fail(FASTRANK_EINVAL, "row must be >= 0, got %lld", <long long> row)
    s = _thread_scratch(q)
    if s == NULL:
        return fr_fail(FASTRANK_ENOMEM, "cannot allocate the scratch of %lld labels",
                       <long long> q)
    sort_dense_row(scores, 1, q, s.work)
    emit_row(s.work.order, s.work.end, q, method, seed, row, ranks, frac_ranks, NULL, NULL)
    return FASTRANK_OK


cdef int tie_groups(const double* scores, int64_t q, int32_t* order, int32_t* end,
                    int64_t* n_groups) noexcept nogil:
    cdef int err = _check_labels(q) or _check_scores(scores, q, "scores")
    cdef RowScratch* s
    cdef SortWork* w
    cdef int64_t p, groups = 0
    if err:
        return err
    if order == NULL or end == NULL or n_groups == NULL:
        return fr_fail(FASTRANK_EINVAL, "an output (order, end or n_groups) is NULL")
    s = _thread_scratch(q)
    if s == NULL:
        return fr_fail(FASTRANK_ENOMEM, "cannot allocate the scratch of %lld labels",
                       <long long> q)
    w = s.work
    sort_dense_row(scores, 1, q, w)
    for p in range(q):
        order[p] = w.order[p]
        end[p] = w.end[p]
        groups += w.end[p] == p + 1
    n_groups[0] = groups
    return FASTRANK_OK


# ---- evaluation ---------------------------------------------------------------------------

cdef inline double _ratio(double num, double den, double zero_division) noexcept nogil:
    """fastrank.metrics' 0/0 convention: num / den, zero_division when den is not > 0."""
    return num / den if den > 0 else zero_division


cdef int eval_init(fastrank_eval_state* s, int64_t q, int ties, int64_t top_k,
                   int64_t n_draws, uint64_t seed, double zero_division, double* labels,
                   double* draws) noexcept nogil:
    cdef int err = _check_labels(q)
    cdef bint expected = ties >> FASTRANK_TIES_EXPECTED & 1
    if err:
        return err
    if s == NULL or labels == NULL:
        return fr_fail(FASTRANK_EINVAL, "state or labels is NULL")
    if ties <= 0 or ties >= 1 << FASTRANK_N_TIES:
        return fr_fail(FASTRANK_EINVAL, "ties must be a non-empty set of FASTRANK_TIES_* bits, "
                       "got %d", ties)
    if top_k != -1 and top_k < 1:
        return fr_fail(FASTRANK_EINVAL, "top_k must be -1 (perfect cutoff) or >= 1, got %lld",
                       <long long> top_k)
    if expected and (n_draws < 2 or n_draws > _max_draws or draws == NULL):
        return fr_fail(FASTRANK_EINVAL, "the expected ranking needs n_draws from 2 to %lld and "
                       "its draws array, got %lld", <long long> _max_draws, <long long> n_draws)
    if not isfinite(zero_division):
        return fr_fail(FASTRANK_EINVAL, "zero_division must be finite")
    memset(s, 0, sizeof(fastrank_eval_state))
    s.n_labels = q
    s.ties = ties
    s.top_k = top_k
    s.n_draws = n_draws if expected else 0
    s.seed = seed
    s.zero_division = zero_division
    s.labels = labels
    s.draws = draws if expected else NULL
    memset(labels, 0, FASTRANK_N_LABEL_ROWS * q * sizeof(double))
    if expected:
        memset(draws, 0, n_draws * 2 * q * sizeof(double))
    return FASTRANK_OK


cdef int _check_state(const fastrank_eval_state* s) noexcept nogil:
    """EINVAL for a state eval_init did not set up (a zeroed one, say)."""
    if s.n_labels < 1 or s.ties <= 0 or s.ties >= 1 << FASTRANK_N_TIES or s.labels == NULL \
            or (s.n_draws > 0 and s.draws == NULL):
        return fr_fail(FASTRANK_EINVAL, "the state is not initialised (eval_init)")
    return FASTRANK_OK


cdef int eval_add_row(fastrank_eval_state* s, const double* scores, const uint8_t* truth,
                      int64_t row, double wt) noexcept nogil:
    return _add_row(s, scores, truth, row, wt, NULL, NULL)


cdef int eval_add_row_exact(fastrank_eval_state* s, const double* scores,
                            const uint8_t* truth, int64_t row, double wt, int64_t* records,
                            int64_t* n_records) noexcept nogil:
    if records == NULL or n_records == NULL:
        return fr_fail(FASTRANK_EINVAL, "records or n_records is NULL")
    return _add_row(s, scores, truth, row, wt, records, n_records)


cdef int _add_row(fastrank_eval_state* s, const double* scores, const uint8_t* truth,
                  int64_t row, double wt, int64_t* records, int64_t* n_records) noexcept nogil:
    """eval_add_row; with records, the boundary records of a row of weight 1 written there
    instead of drawn (eval_add_row_exact)."""
    cdef double doc[MAX_DOC_COLUMNS]
    cdef double tp, npred, n_rel, zd
    cdef double* sums
    cdef int64_t j, q, n
    cdef int t, families = 0, err
    cdef RowScratch* scratch
    if s == NULL or truth == NULL:
        return fr_fail(FASTRANK_EINVAL, "state or truth is NULL")
    q = s.n_labels
    err = _check_state(s) or _check_scores(scores, q, "scores")
    if err:
        return err
    j = first_not_binary_u8(truth, q)
    if j >= 0:
        return fr_fail(FASTRANK_EINVAL, "truth must be 0 or 1, got %d at %lld",
                       <int> truth[j], <long long> j)
    if not (wt == 0 or _weight_lo <= wt <= _weight_hi):
        return fr_fail(FASTRANK_EINVAL, "weight must be 0 or from 2**-400 to 2**400 (sums "
                       "of weights stay finite and normal), got %g", wt)
    if row < 0:
        return fr_fail(FASTRANK_EINVAL, "row must be >= 0, got %lld", <long long> row)
    for t in range(FASTRANK_N_TIES):
        if s.ties >> t & 1:
            families |= _family[t]
    scratch = _thread_scratch(q)
    n = -1 if scratch == NULL else metrics_row(
        scores, q, truth, families, s.top_k, s.seed, s.seed ^ _mc_salt, s.n_draws, row, wt,
        doc, s.labels, s.draws, scratch.work, scratch.row, records)
    if n < 0:
        return fr_fail(FASTRANK_ENOMEM, "cannot allocate the scratch of %lld labels",
                       <long long> q)
    if n_records != NULL:
        n_records[0] = n
    # Evaluator._document_sums of this one document, added to the sums
    zd = s.zero_division
    n_rel = doc[_n_rel]
    for t in range(FASTRANK_N_TIES):
        if not s.ties >> t & 1:
            continue
        sums = s.doc[t]
        for j in range(5):
            sums[j] += doc[_col[t][j]] * wt
        tp = doc[_col[t][5]]
        npred = doc[_col[t][6]]
        sums[HAMMING] += (npred + n_rel - 2.0 * tp) / q * wt
        if t == FASTRANK_TIES_EXPECTED:
            sums[EXACT] += doc[_col[t][7]] * wt
        else:
            sums[EXACT] += (1.0 if npred == n_rel and tp == n_rel else 0.0) * wt
        sums[PRECISION_D] += _ratio(tp, npred, zd) * wt
        sums[RECALL_D] += _ratio(tp, n_rel, zd) * wt
        sums[F1_D] += _ratio(2.0 * tp, n_rel + npred, zd) * wt
        sums[TP] += tp * wt
        sums[NPRED] += npred * wt
        sums[NREL] += n_rel * wt
    s.weight += wt
    return FASTRANK_OK


cdef int eval_merge(fastrank_eval_state* into, const fastrank_eval_state* other) noexcept nogil:
    cdef int64_t j, q
    cdef int t, k
    if into == NULL or other == NULL:
        return fr_fail(FASTRANK_EINVAL, "a state is NULL")
    if _check_state(into) or _check_state(other):
        return FASTRANK_EINVAL
    if into.n_labels != other.n_labels or into.ties != other.ties \
            or into.top_k != other.top_k or into.n_draws != other.n_draws \
            or into.seed != other.seed or into.zero_division != other.zero_division:
        return fr_fail(FASTRANK_EINVAL, "cannot merge states of different configurations")
    q = into.n_labels
    for t in range(FASTRANK_N_TIES):
        for k in range(FASTRANK_N_DOC_SUMS):
            into.doc[t][k] += other.doc[t][k]
    for j in range(FASTRANK_N_LABEL_ROWS * q):
        into.labels[j] += other.labels[j]
    for j in range(into.n_draws * 2 * q):
        into.draws[j] += other.draws[j]
    into.weight += other.weight
    return FASTRANK_OK


cdef inline double _macro(const double* tp, const double* pred, const double* rel,
                          int64_t q, double zd, double* buf) noexcept nogil:
    """Mean over the labels of TP_i / pred_i (rel NULL) or of F1_i = 2 TP_i / (rel_i +
    pred_i), summed as numpy.mean sums."""
    cdef int64_t j
    for j in range(q):
        buf[j] = _ratio(tp[j], pred[j], zd) if rel == NULL \
            else _ratio(2.0 * tp[j], rel[j] + pred[j], zd)
    return fr_pairwise_sum(buf, q) / q


cdef inline double _mean_of_sets(const double* x, int64_t sets) noexcept nogil:
    """The mean of the per-draw values x[:sets] as the Evaluator takes it: the value itself
    when no draw differs, else their pairwise sum over sets."""
    cdef int64_t k
    for k in range(1, sets):
        if x[k] != x[0]:
            return fr_pairwise_sum(x, sets) / sets
    return x[0]


cdef int eval_result(const fastrank_eval_state* s, int t, double* values) noexcept nogil:
    cdef int64_t q, j, k, n_draws
    cdef double n, zd, stp, spred, srel
    cdef const double* d
    cdef const double* tp
    cdef const double* pred
    cdef const double* rel
    cdef double* buf
    cdef double* per_p
    cdef double* per_f
    cdef double* tpk
    cdef double* predk
    if s == NULL or values == NULL:
        return fr_fail(FASTRANK_EINVAL, "state or values is NULL")
    if _check_state(s):
        return FASTRANK_EINVAL
    if t < 0 or t >= FASTRANK_N_TIES or not s.ties >> t & 1:
        return fr_fail(FASTRANK_EINVAL, "ranking type %d is not evaluated by this state", t)
    if not s.weight > 0:
        return fr_fail(FASTRANK_EINVAL, "no rows were added, or their total weight is 0")
    q, n, zd = s.n_labels, s.weight, s.zero_division
    d = s.doc[t]
    n_draws = s.n_draws if t == FASTRANK_TIES_EXPECTED else 0
    buf = <double*> calloc(q * 3 + 2 * n_draws, sizeof(double))
    if buf == NULL:
        return fr_fail(FASTRANK_ENOMEM, "cannot allocate the scratch of %lld labels",
                       <long long> q)
    tp = s.labels + _lab_row[t] * q
    pred = tp + q
    rel = s.labels + _lab_rel * q
    stp = fr_pairwise_sum(tp, q)
    spred = fr_pairwise_sum(pred, q)
    srel = fr_pairwise_sum(rel, q)
    for k in range(7):
        values[k] = d[k] / n
    values[7] = _macro(tp, pred, NULL, q, zd, buf)
    values[8] = _ratio(stp, spred, zd)
    values[9] = _macro(tp, rel, NULL, q, zd, buf)
    values[10] = _ratio(stp, srel, zd)
    values[11] = _macro(tp, pred, rel, q, zd, buf)
    values[12] = _ratio(2.0 * stp, srel + spred, zd)
    values[13] = d[PRECISION_D] / n
    values[14] = _ratio(d[TP], d[NPRED], zd)
    values[15] = d[RECALL_D] / n
    values[16] = _ratio(d[TP], d[NREL], zd)
    values[17] = d[F1_D] / n
    values[18] = _ratio(2.0 * d[TP], d[NREL] + d[NPRED], zd)
    if n_draws:
        # the two Monte-Carlo estimates (fastrank.metrics._evaluate._expected_macro with
        # every row drawn): each draw's label counts are the whole groups' plus that draw's
        # cut groups
        per_p, per_f = buf + 3 * q, buf + 3 * q + n_draws
        tpk, predk = buf + q, buf + 2 * q
        for k in range(n_draws):
            for j in range(q):
                tpk[j] = s.labels[_lab_fixed * q + j] + s.draws[(2 * k) * q + j]
                predk[j] = s.labels[(_lab_fixed + 1) * q + j] + s.draws[(2 * k + 1) * q + j]
            per_p[k] = _macro(tpk, predk, NULL, q, zd, buf)
            per_f[k] = _macro(tpk, predk, rel, q, zd, buf)
        values[7] = _mean_of_sets(per_p, n_draws)
        values[11] = _mean_of_sets(per_f, n_draws)
    free(buf)
    return FASTRANK_OK


# ---- the expected ranking's boundary records (exact macro precision and F1 by category) ----

cdef int _check_records(const int64_t* r, int64_t n, int64_t q) noexcept nogil:
    cdef int64_t i
    if n < 0 or (n > 0 and r == NULL):
        return fr_fail(FASTRANK_EINVAL, "records is NULL or n is negative")
    for i in range(n):
        if not (0 <= r[5 * i] < q and 0 < r[5 * i + 2] < r[5 * i + 1] <= q
                and 0 <= r[5 * i + 3] <= _COUNT_MAX and 0 <= r[5 * i + 4] <= _COUNT_MAX):
            return fr_fail(FASTRANK_EINVAL, "record %lld is not (label, s, d, n_rel, n_irr) "
                           "with 0 <= label < n_labels = %lld, 0 < d < s <= n_labels and "
                           "counts from 0 to 2**53", <long long> i, <long long> q)
    return FASTRANK_OK


cdef int _by_class(const void* a, const void* b) noexcept nogil:
    """qsort's order of two records: by (label, s, d)."""
    cdef const int64_t* x = <const int64_t*> a
    cdef const int64_t* y = <const int64_t*> b
    cdef int k
    for k in range(3):
        if x[k] != y[k]:
            return -1 if x[k] < y[k] else 1
    return 0


cdef inline int _bits(uint64_t x) noexcept nogil:
    """The number of bits of x (0 for 0)."""
    cdef int b = 0
    while x:
        b += 1
        x >>= 1
    return b


cdef inline int64_t _add_class(const int64_t* rec, bint same, int64_t m, int64_t n,
                               int64_t* cols) noexcept nogil:
    """_classes' step: record rec added to class m - 1 (same) or starting class m; returns
    the number of classes, or -2 when a class's count passes _COUNT_MAX (checked records:
    the sum of two counts cannot overflow)."""
    cdef int k
    if same:
        cols[3 * n + m - 1] += rec[3]
        cols[4 * n + m - 1] += rec[4]
        if cols[3 * n + m - 1] > _COUNT_MAX or cols[4 * n + m - 1] > _COUNT_MAX:
            return -2
        return m
    for k in range(5):
        cols[k * n + m] = rec[k]
    return m + 1


cdef int64_t _classes(const int64_t* r, int64_t n, int64_t q, int64_t* cols) noexcept nogil:
    """The classes of the (checked) records r[:n]: one per distinct (label, s, d), sorted by
    it, their label, s, d, n_rel and n_irr in cols[0:m], cols[n:n + m], ..., cols[4n:4n + m]
    (cols holds 5n). Returns m; -1 when out of memory, -2 when a class's count passes
    _COUNT_MAX (_class_failure tells which). Where (label, s, d) packs into 64
    bits the records are ordered by the kernel's stable sort of the packed keys (a radix
    sort); else a copy is sorted by qsort. The work and scratch follow n, not q."""
    cdef int64_t i, m = 0, top = 1
    cdef int bits, shift
    cdef SortWork* w
    cdef int64_t* rows
    for i in range(n):
        top = max(top, r[5 * i + 1])
    bits = _bits(<uint64_t> top)
    shift = _bits(<uint64_t> (q - 1))
    if shift + 2 * bits <= 64 and n < 2147483647:
        w = sort_work_new(n)
        if w == NULL:
            return -1
        for i in range(n):
            w.keys[i] = (<uint64_t> r[5 * i] << 2 * bits) | (<uint64_t> r[5 * i + 1] << bits) \
                | <uint64_t> r[5 * i + 2]
            w.order[i] = <int32_t> i
        sort_keys(w.keys, w.order, n, w)
        for i in range(n):
            m = _add_class(r + 5 * w.order[i], i > 0 and w.keys[i] == w.keys[i - 1], m, n,
                           cols)
            if m < 0:
                break
        sort_work_free(w)
        return m
    rows = <int64_t*> malloc(5 * n * sizeof(int64_t) + 1)
    if rows == NULL:
        return -1
    memcpy(rows, r, 5 * n * sizeof(int64_t))
    qsort(rows, n, 5 * sizeof(int64_t), _by_class)
    for i in range(n):
        m = _add_class(rows + 5 * i, i > 0 and _by_class(rows + 5 * (i - 1), rows + 5 * i) == 0,
                       m, n, cols)
        if m < 0:
            break
    free(rows)
    return m


cdef int _class_failure(int64_t m, int64_t n) noexcept nogil:
    """The error of a failed _classes (m < 0) of n records."""
    if m == -2:
        return fr_fail(FASTRANK_EINVAL, "the counts of one (label, s, d) sum past 2**53")
    return fr_fail(FASTRANK_ENOMEM, "cannot allocate the scratch of %lld records",
                   <long long> n)


cdef int eval_count_records(int64_t q, int64_t* records, int64_t n,
                            int64_t* n_out) noexcept nogil:
    cdef int64_t j, k, m
    cdef int64_t* cols
    cdef int err = _check_labels(q) or _check_records(records, n, q)
    if err:
        return err
    if n_out == NULL:
        return fr_fail(FASTRANK_EINVAL, "n_out is NULL")
    cols = <int64_t*> malloc(5 * n * sizeof(int64_t) + 1)
    m = -1 if cols == NULL else _classes(records, n, q, cols)
    if m < 0:
        free(cols)
        return _class_failure(m, n)
    for j in range(m):  # the classes back as rows
        for k in range(5):
            records[5 * j + k] = cols[k * n + j]
    free(cols)
    n_out[0] = m
    return FASTRANK_OK


cdef int eval_result_exact(const fastrank_eval_state* s, int t, const int64_t* records,
                           int64_t n, double* values) noexcept nogil:
    """eval_result, then macro precision^c and F1^c of the expected ranking from the
    records: fastrank.metrics._evaluate._expected_macro (its label counts offset by each
    draw's where rows were drawn), each label's expectations by the kernel's label_sums."""
    cdef int64_t q, i, k, m, j, sets = 1
    cdef int64_t* cls
    cdef int64_t* start
    cdef double* buf
    cdef double* a
    cdef double* b
    cdef double* p
    cdef double* f
    cdef double own[N_METRICS]  # values are written only on success
    cdef int err
    if values == NULL:
        return fr_fail(FASTRANK_EINVAL, "state or values is NULL")
    err = eval_result(s, t, own)
    if err:
        return err
    if t != FASTRANK_TIES_EXPECTED:
        memcpy(values, own, sizeof(own))
        return FASTRANK_OK
    q = s.n_labels
    err = _check_records(records, n, q)
    if err:
        return err
    for j in range(s.n_draws * 2 * q):
        if s.draws[j] != 0:  # rows of other weights were drawn: each draw's counts
            sets = s.n_draws
            break
    # the classes' columns (5n), then label i's classes start[i] .. start[i + 1] - 1 (q + 1)
    cls = <int64_t*> malloc((5 * n + q + 1) * sizeof(int64_t))
    buf = <double*> malloc((4 * sets * q + 2 * sets) * sizeof(double))
    m = -1 if cls == NULL or buf == NULL else _classes(records, n, q, cls)
    if m < 0:
        free(cls)
        free(buf)
        return _class_failure(m, n)
    start = cls + 5 * n
    j = 0
    for i in range(q + 1):
        while j < m and cls[j] < i:
            j += 1
        start[i] = j
    a, b, p, f = buf, buf + sets * q, buf + 2 * sets * q, buf + 3 * sets * q
    for k in range(sets):
        for i in range(q):
            a[k * q + i] = s.labels[_lab_fixed * q + i] \
                + (s.draws[(2 * k) * q + i] if sets > 1 else 0.0)
            b[k * q + i] = s.labels[(_lab_fixed + 1) * q + i] \
                + (s.draws[(2 * k + 1) * q + i] if sets > 1 else 0.0)
    for i in range(q):
        if label_sums(cls + n + start[i], cls + 2 * n + start[i], cls + 3 * n + start[i],
                      cls + 4 * n + start[i], start[i + 1] - start[i], sets, q, a + i, b + i,
                      s.labels[_lab_rel * q + i], s.zero_division, p + i, f + i):
            free(cls)
            free(buf)
            return fr_fail(FASTRANK_ENOMEM, "cannot allocate the boundary distributions")
    for k in range(sets):  # each set's mean over the labels, then over the sets
        buf[4 * sets * q + k] = fr_pairwise_sum(p + k * q, q) / q
        buf[4 * sets * q + sets + k] = fr_pairwise_sum(f + k * q, q) / q
    own[7] = _mean_of_sets(buf + 4 * sets * q, sets)
    own[11] = _mean_of_sets(buf + 4 * sets * q + sets, sets)
    memcpy(values, own, sizeof(own))
    free(cls)
    free(buf)
    return FASTRANK_OK


# ---- search -------------------------------------------------------------------------------

cdef inline bint _too_many(int64_t a, int64_t b, int64_t c) noexcept nogil:
    """a * b * c (sizes >= 1) past 2**59: more elements than any buffer holds, and products
    of the sizes that could wrap around."""
    cdef int64_t most = 1LL << 59
    return a > most // b or a * b > most // c


cdef inline int _sizes_fail() noexcept nogil:
    return fr_fail(FASTRANK_EINVAL, "the sizes describe buffers of more than 2**59 elements")


cdef int cosine_topk(const double* Q, int64_t nq, const double* B, int64_t nb, int64_t d,
                     int64_t k, double* sims, int64_t* indices) noexcept nogil:
    cdef int err
    if nq < 1 or nb < 1 or d < 1:
        return fr_fail(FASTRANK_EINVAL, "n_queries, n_base and n_features must be >= 1, got "
                       "%lld, %lld, %lld", <long long> nq, <long long> nb, <long long> d)
    if k < 1 or k > nb:
        return fr_fail(FASTRANK_EINVAL, "k must be from 1 to n_base = %lld, got %lld",
                       <long long> nb, <long long> k)
    if _too_many(nq, d, 1) or _too_many(nb, d, 1) or _too_many(nq, k, 1):
        return _sizes_fail()
    if sims == NULL or indices == NULL:
        return fr_fail(FASTRANK_EINVAL, "sims or indices is NULL")
    if Q == NULL or B == NULL:
        return fr_fail(FASTRANK_EINVAL, "Q or B is NULL")
    # a cosine has no value for an infinite feature (as fastrank.topk_cosine refuses it)
    err = _check_finite(Q, nq * d, "Q") or _check_finite(B, nb * d, "B")
    if err:
        return err
    if topk_dense_f64(Q, nq, B, nb, d, k, sims, indices):
        return fr_fail(FASTRANK_ENOMEM, "cannot allocate the search's scratch")
    return FASTRANK_OK


cdef int vgram_encode(const double* X, int64_t n_rows, int64_t n_features,
                      const int32_t* synapses, int64_t n_neurons, int64_t S,
                      uint64_t* patterns) noexcept nogil:
    cdef int64_t j
    cdef int err
    if n_rows < 1 or n_features < 1 or n_neurons < 1 or S < 1:
        return fr_fail(FASTRANK_EINVAL, "n_rows, n_features, n_neurons and n_synapses must be "
                       ">= 1")
    if _too_many(n_rows, n_features, 1) or _too_many(n_neurons, S, 1) \
            or _too_many(n_neurons, n_rows, (S + 63) // 64):
        return _sizes_fail()
    if synapses == NULL or patterns == NULL:
        return fr_fail(FASTRANK_EINVAL, "synapses or patterns is NULL")
    err = _check_scores(X, n_rows * n_features, "X")
    if err:
        return err
    for j in range(n_neurons * S):
        if synapses[j] < 0 or synapses[j] >= n_features:
            return fr_fail(FASTRANK_EINVAL, "synapse %lld is %d, not an input position "
                           "(0 to %lld)", <long long> j, synapses[j], <long long> n_features - 1)
    return encode_dense_f64(X, n_rows, n_features, synapses, n_neurons, S, patterns)


cdef int vgram_search(const uint64_t* memory, int64_t n_train, const uint64_t* tests,
                      int64_t n_tests, int64_t n_neurons, int64_t W, uint32_t* distance,
                      int64_t* count, int64_t* nearest) noexcept nogil:
    if n_train < 1 or n_tests < 1 or n_neurons < 1 or W < 1:
        return fr_fail(FASTRANK_EINVAL, "n_train, n_tests, n_neurons and W must be >= 1")
    if _too_many(n_neurons, n_train, W) or _too_many(n_neurons, n_tests, W):
        return _sizes_fail()
    if memory == NULL or tests == NULL or distance == NULL or count == NULL or nearest == NULL:
        return fr_fail(FASTRANK_EINVAL, "an input or output is NULL")
    if search_nearest(memory, n_train, tests, n_tests, n_neurons, W, distance, count, nearest):
        return fr_fail(FASTRANK_ENOMEM, "cannot allocate the search's scratch")
    return FASTRANK_OK


# ---- the table --------------------------------------------------------------------------------

cdef fastrank_capi _table
_table.version_major = FASTRANK_CAPI_VERSION_MAJOR
_table.version_minor = FASTRANK_CAPI_VERSION_MINOR
_table.size = sizeof(fastrank_capi)
_table.last_error = fr_last_error
_table.rank_row = rank_row
_table.tie_groups = tie_groups
_table.eval_init = eval_init
_table.eval_add_row = eval_add_row
_table.eval_merge = eval_merge
_table.eval_result = eval_result
_table.cosine_topk = cosine_topk
_table.vgram_encode = vgram_encode
_table.vgram_search = vgram_search
_table.eval_add_row_exact = eval_add_row_exact
_table.eval_count_records = eval_count_records
_table.eval_result_exact = eval_result_exact

#: the C API version of this build (fastrank.h's)
VERSION = (FASTRANK_CAPI_VERSION_MAJOR, FASTRANK_CAPI_VERSION_MINOR)
_C_API = PyCapsule_New(<void*> &_table, b"fastrank._ext.capi._C_API", NULL)
