"""Shared plumbing of the metric suite: input checks, the ranking types, the kernel call.

The compiled kernel (``fastrank._ext.tie_metrics``) sorts each row once and returns, per
document, every ranking-based value of the requested ranking *families* (ordinal; group =
dense/standard/modified; expected) plus the cutoff counts; see its module docstring.
"""
import numpy as np
import scipy.sparse as sp

from .._arrays import as_numpy
from .._ext import tie_metrics as _kernel
from .._validation import check_memory, check_option, check_random_state, check_same_shape, \
    check_scores, check_truth, row_source, sort_scratch_bytes

#: The thesis' four ranking types (the default of :func:`fastrank.metrics.evaluate`).
TIES = ("ordinal", "dense", "standard", "modified")
EXPECTED_TIES = "expected"  # exact expectation of the ordinal value over random orders
#: Every ranking type of the metrics: :data:`TIES` and "expected".
ALL_TIES = TIES + (EXPECTED_TIES,)
_TIE_ALIASES = {"min": "standard", "max": "modified"}

# the kernel's family flags, per-document columns and label-count rows (its own tables)
ORDINAL, GROUP, EXPECTED = (_kernel.FAMILIES[f] for f in ("ordinal", "group", "expected"))
_ORDINAL_COLS = _kernel.DOC_COLUMNS["ordinal"]
_GROUP_COLS = _kernel.DOC_COLUMNS["group"]
_COVERAGE_COLS = _kernel.DOC_COLUMNS["group_coverage"]
_EXPECTED_COLS = _kernel.DOC_COLUMNS["expected"]
N_SLOTS = _kernel.N_DOC_COLUMNS
# label-count rows of `lab` per family: (TP_i, TP_i + FP_i); LAB_REL: TP_i + FN_i
LAB_ROWS = {ORDINAL: _kernel.LAB_ROWS["ordinal"], GROUP: _kernel.LAB_ROWS["group"],
            EXPECTED: _kernel.LAB_ROWS["expected"]}
LAB_REL, LAB_FIXED = _kernel.LAB_ROWS["relevant"], _kernel.LAB_ROWS["fixed"]
N_LAB = _kernel.N_LAB_ROWS
# row chunks of a kernel call, each with its own label counters; their number depends on the
# shapes only, never on the thread count
_MAX_CHUNKS = 256  # 16 per thread on 16 threads, taken as they free up: a slow core waits
_CHUNK_ROWS = 256  # for one chunk of 256 rows at the end, not for a sixteenth of its share
_MIN_CHUNKS = 16
_LAB_BYTES = 32 * 2**20  # label counters beyond which a call has fewer (not under _MIN_CHUNKS)
_MC_BYTES = 64 * 2**20  # bound on the per-chunk Monte-Carlo counters: fewer chunks beyond it
_MC_SALT = 0x5851F42D4C957F2D  # decorrelates the Monte-Carlo draws from the ordinal shuffle
_NO_WEIGHTS = np.empty(0)
BLOCK_ROWS = 1 << 16  # rows per kernel call: bounds the per-document buffer to 14 MiB


def resolve_ties(ties):
    """Canonical ranking type for ``ties`` ("min"/"max" are aliases of standard/modified)."""
    if not isinstance(ties, str):
        raise TypeError(f"ties must be a string, got {type(ties).__name__}")
    ties = _TIE_ALIASES.get(ties, ties)
    return check_option("ties", ties, ALL_TIES + tuple(_TIE_ALIASES))


def family(ties):
    return {"ordinal": ORDINAL, EXPECTED_TIES: EXPECTED}.get(ties, GROUP)


def column(ties, name):
    """Per-document column of value ``name`` under ranking type ``ties``."""
    if ties == EXPECTED_TIES:
        return _EXPECTED_COLS[name]
    if name == "coverage" and ties != "ordinal":
        return _COVERAGE_COLS[ties]
    return (_ORDINAL_COLS if ties == "ordinal" else _GROUP_COLS)[name]


def check_inputs(y_true, y_score, n_draws=0, held=0, scan=True):
    """Validated (y_true uint8 C-contiguous, y_score float ndarray or canonical CSR).

    Per-label counts are inherent to the category-oriented (macro) averages, and a sparse
    y_score declares its number of labels q: before the truth is made dense, ValueError
    naming q when the counts :func:`run_kernel` makes for ``n_draws`` random orders (and
    ``held`` more sets of them that the caller keeps) and the sorting scratch need more
    memory than the process can allocate."""
    y_score = check_scores(y_score, scan=scan)
    n, q = y_score.shape
    chunks = _n_chunks(min(n, BLOCK_ROWS), q, n_draws)
    check_memory(8 * q * (N_LAB + 2 * n_draws) * (chunks + held) + sort_scratch_bytes(chunks, q),
                 f"the per-label counts of {q} labels (n_labels)")
    y_true = check_truth(y_true, n_labels=y_score.shape[1], against="y_score", scan=scan)
    check_same_shape(y_true.shape, y_score.shape)
    return y_true, y_score


def raise_flagged(given, kernel):
    """Raise the error of the inputs a kernel flagged as it read them (a NaN belief, a truth
    value other than 0/1): :func:`check_inputs` of ``given``, the inputs as the caller got
    them, names the first bad row or value; RuntimeError if they pass (or ``given`` is None:
    the caller had scanned them)."""
    if given is not None:
        check_inputs(*given)
    raise RuntimeError(f"fastrank: the {kernel} kernel flagged inputs that the checks accept")


def draw_seed(random_state):
    """64-bit base seed for the ordinal shuffle, drawn as fastrank.ranking.rank draws it."""
    return int(check_random_state(random_state).integers(0, 2**64, dtype=np.uint64))


def score_args(y_score, rows=None):
    """Kernel arguments describing rows ``lo:hi`` of the belief matrix, without copying it:
    :func:`~fastrank._validation.row_source`'s (values, row_stride, col_stride, indices,
    indptr) of those rows, then their number and the number of labels."""
    lo, hi = (0, y_score.shape[0]) if rows is None else rows
    values, row_stride, col_stride, indices, indptr = row_source(y_score)
    if sp.issparse(y_score):  # indptr entries are absolute offsets into data/indices
        indptr = indptr[lo:hi + 1]
    else:
        values = values[lo * row_stride:]
    return values, row_stride, col_stride, indices, indptr, hi - lo, y_score.shape[1]


def run_kernel(y_true, y_score, families, seed, n_draws=0, top_k=None, rows=None, first_row=0,
               sample_weight=None, records=None, given=None):
    """Run the metric kernel on rows ``rows = (lo, hi)`` (default: all); inputs must come
    from :func:`check_inputs` (and :func:`check_sample_weight`), which need not have scanned
    them when ``given`` holds the inputs it was given: the kernel finds NaN beliefs and
    truth values other than 0/1 as it reads them, and :func:`check_inputs` of ``given``
    then raises its error. The set metrics' counts use
    the perfect cutoff, or the first ``top_k`` positions when it is given. Row ``lo + i``
    draws its random orders as global row ``first_row + i``; the label counts add its
    weight ``sample_weight[lo + i]`` (1 without weights). Returns

    * ``doc`` (hi - lo, N_SLOTS): per-document values, unweighted (columns: :func:`column`);
    * ``lab`` (N_LAB, q): per-label counts under the perfect cutoff, rows ``LAB_ROWS[family]``
      (TP_i, TP_i + FP_i), ``LAB_REL`` (TP_i + FN_i), ``LAB_FIXED`` (expected family: the
      TP_i, TP_i + FP_i shared by every random order);
    * ``mc`` (n_draws, 2, q): expected family, per random draw of the cut tie groups of the
      rows weighing neither 0 nor 1 (of every row without ``records``), the TP_i and
      TP_i + FP_i they add to ``lab[LAB_FIXED]``.

    Given a list ``records``, the expected family appends to it the labels of the cut tie
    groups of the rows of weight 1 (each predicted with probability d/s), counted: the
    arguments of :class:`~fastrank.metrics._boundary.BoundaryCounts`.
    """
    lo, hi = (0, y_true.shape[0]) if rows is None else rows
    n, q = hi - lo, y_true.shape[1]
    doc = np.empty((n, N_SLOTS), dtype=np.float64)
    n_draws = n_draws if families & EXPECTED else 0
    n_chunks = _n_chunks(n, q, n_draws)
    # the kernel zeroes each chunk's counters on the thread that takes it: np.zeros would
    # clear these megabytes on one thread first (calloc clears reused heap memory)
    lab = np.empty((n_chunks, N_LAB, q), dtype=np.float64)
    mc = np.empty((n_chunks, n_draws, 2, q), dtype=np.float64)
    weight = _NO_WEIGHTS if sample_weight is None else sample_weight[lo:hi]
    counted, sound = _kernel.evaluate(*score_args(y_score, (lo, hi)), y_true[lo:hi], families,
                                      -1 if top_k is None else top_k, seed, seed ^ _MC_SALT,
                                      first_row, weight, doc, lab, mc, records is not None)
    if not sound:
        raise_flagged(given, "metric")
    if records is not None:
        records.append(counted)
    return doc, _chunk_total(lab), _chunk_total(mc)


def _chunk_total(parts):
    """``parts.sum(axis=0)`` (the same bits) of a kernel call's per-chunk counts, its columns
    summed on the threads side by side."""
    out = np.empty(parts.shape[1:])
    _kernel.chunk_total(parts.reshape(parts.shape[0], out.size), out.reshape(-1))
    return out


def _n_chunks(n, q, n_draws):
    """Row chunks of a kernel call on n rows: each has its own label counts, ``lab`` (N_LAB, q)
    and, for ``n_draws`` random orders, ``mc`` (n_draws, 2, q). Depends on the shapes only,
    never on the thread count: one per ``_CHUNK_ROWS`` rows up to ``_MAX_CHUNKS``, fewer
    where the label counts would pass ``_LAB_BYTES``, never under ``_MIN_CHUNKS`` (nor over
    n), or fewer where the Monte-Carlo ones would pass ``_MC_BYTES``."""
    chunks = min(n, max(_MIN_CHUNKS, min(_MAX_CHUNKS, n // _CHUNK_ROWS,
                                         _LAB_BYTES // (8 * N_LAB * q))))
    if n_draws:
        chunks = max(1, min(chunks, _MC_BYTES // (n_draws * 2 * q * 8)))
    return chunks


def column_sum(doc, col, weight=_NO_WEIGHTS):
    """The sum of the per-document column ``col``, each value times its document's weight
    when ``weight`` is not empty: the bits of numpy's sum of that column (as ``np.mean``
    sums it), its parts summed on the threads side by side."""
    return _kernel.document_total(doc[:, col], weight)


#: The range of a non-zero weight: sums of weights, and the products of two that ROC
#: analysis counts, stay finite and far from float64's subnormals.
WEIGHT_RANGE = (2.0**-400, 2.0**400)


def check_sample_weight(sample_weight, n, averaged=False):
    """None, or the per-document weights as a float64 array of length ``n``: finite,
    non-negative (a document of weight 0 counts for nothing), each non-zero one within
    ``WEIGHT_RANGE`` (only their ratios matter: rescale others) and, when the caller
    averages over them (``averaged``), not all 0."""
    if sample_weight is None:
        return None
    w = as_numpy(sample_weight, "sample_weight")
    if w.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must be real numbers, got dtype {w.dtype}")
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},) (one weight per document), "
                         f"got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and >= 0")
    lo, hi = WEIGHT_RANGE
    if ((w > 0) & ((w < lo) | (w > hi))).any():
        raise ValueError("a non-zero sample_weight must lie between 2**-400 and 2**400 (about "
                         "3.9e-121 and 2.6e+120), where sums and products of weights stay "
                         "finite and normal in float64; rescale them (only their ratios "
                         "matter)")
    if averaged and not w.sum() > 0:
        raise ValueError("sample_weight sums to 0: no document to average over")
    return w


def row_blocks(n):
    """Row ranges of at most ``BLOCK_ROWS`` rows: the kernel's per-document output for one
    block is bounded (``BLOCK_ROWS * N_SLOTS`` doubles) however many rows a call has."""
    return [(lo, min(n, lo + BLOCK_ROWS)) for lo in range(0, n, BLOCK_ROWS)]
