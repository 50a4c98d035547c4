"""Shared plumbing of the metric suite: input checks, the ranking types, the kernel call.

The compiled kernel (``fastrank._ext.metrics``) sorts each row once and returns, per
document, every ranking-based value of the requested ranking *families* (ordinal; group =
dense/standard/modified) plus the perfect-cutoff counts; see its module docstring.
"""
import numpy as np
import scipy.sparse as sp

from .._ext import metrics as _kernel
from .._validation import check_option, check_random_state, check_same_shape, check_scores, \
    check_truth

TIES = ("ordinal", "dense", "standard", "modified")
_TIE_ALIASES = {"min": "standard", "max": "modified"}

# kernel family flags and per-document columns, mirrored from src/_ext/metrics.pyx
ORDINAL, GROUP = 1, 2
N_REL = 0
_ORDINAL_COLS = dict(one_error=1, coverage=2, ranking_loss=3, ap_position=4, ap_label=5,
                     r_precision=6, tp=7, npred=8)
_GROUP_COLS = dict(one_error=9, ranking_loss=13, ap_position=14, ap_label=15, r_precision=16,
                   tp=17, npred=18)
_COVERAGE_COLS = {"dense": 10, "standard": 11, "modified": 12}
N_SLOTS = 19
_N_CHUNKS = 64  # fixed row chunks, each with its own label counters (thread-count independent)


def resolve_ties(ties):
    """Canonical ranking type for ``ties`` ("min"/"max" are aliases of standard/modified)."""
    if not isinstance(ties, str):
        raise TypeError(f"ties must be a string, got {type(ties).__name__}")
    ties = _TIE_ALIASES.get(ties, ties)
    return check_option("ties", ties, TIES + tuple(_TIE_ALIASES))


def family(ties):
    return ORDINAL if ties == "ordinal" else GROUP


def column(ties, name):
    """Per-document column of value ``name`` under ranking type ``ties``."""
    if name == "coverage" and ties != "ordinal":
        return _COVERAGE_COLS[ties]
    return (_ORDINAL_COLS if ties == "ordinal" else _GROUP_COLS)[name]


def check_inputs(y_true, y_score):
    """Validated (y_true uint8 C-contiguous, y_score float ndarray or canonical CSR)."""
    y_score = check_scores(y_score)
    y_true = check_truth(y_true, n_labels=y_score.shape[1])
    check_same_shape(y_true.shape, y_score.shape)
    return y_true, y_score


def draw_seed(random_state):
    """64-bit base seed for the ordinal shuffle, drawn as fastrank.ranking.rank draws it."""
    return int(check_random_state(random_state).integers(0, 2**64, dtype=np.uint64))


def score_args(y_score):
    """Kernel arguments describing the belief matrix (flat buffer + strides, or CSR arrays)."""
    if sp.issparse(y_score):
        return "csr", (y_score.data, y_score.indices, y_score.indptr, y_score.shape[1])
    n, q = y_score.shape
    item = y_score.itemsize
    return "dense", (y_score.ravel(order="K"), n, q, y_score.strides[0] // item,
                     y_score.strides[1] // item)


def run_kernel(y_true, y_score, families, seed):
    """Per-document values ``doc`` (n, N_SLOTS) and per-label counts ``lab`` (5, q): TP_i
    and TP_i + FP_i under the perfect cutoff for the ordinal (rows 0, 1) and group (rows
    2, 3) families, and TP_i + FN_i (row 4). Inputs must come from :func:`check_inputs`."""
    n, q = y_true.shape
    doc = np.empty((n, N_SLOTS), dtype=np.float64)
    lab = np.zeros((min(n, _N_CHUNKS), 5, q), dtype=np.float64)
    kind, args = score_args(y_score)
    if kind == "csr":
        _kernel.evaluate_csr(*args, y_true, families, seed, doc, lab)
    else:
        _kernel.evaluate_dense(*args, y_true, families, seed, doc, lab)
    return doc, lab.sum(axis=0)
