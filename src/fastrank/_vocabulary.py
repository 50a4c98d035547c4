"""The shared vocabulary of the study, its comparisons and its reports: the names shown for
ranking types and metrics, which metrics are losses, the orientation that makes higher
better, and the range of a significance level.

One place for each: :mod:`fastrank.study`, :mod:`fastrank.stats` and :mod:`fastrank.report`
import them from here.
"""
import numbers

import numpy as np

#: The metrics that are losses.
LOWER_IS_BETTER = frozenset({"one_error", "coverage", "ranking_loss", "hamming_loss"})

#: The letter of each ranking type in the partial orders: the initial of its name (the
#: thesis, written in Portuguese, has P, for "Padrão", where the standard ranking has S).
TIE_LETTERS = {"ordinal": "O", "dense": "D", "standard": "S", "modified": "M",
               "expected": "E"}

#: ranking type -> the name shown in tables and figures
TIE_NAMES = {"ordinal": "Ordinal", "dense": "Dense", "standard": "Standard",
             "modified": "Modified", "expected": "Expected"}

_BASE_NAMES = {"one_error": "One-error", "coverage": "Coverage",
               "ranking_loss": "Ranking loss", "average_precision": "Average precision",
               "r_precision": "R-precision", "hamming_loss": "Hamming loss",
               "exact_match": "Exact match"}
_FAMILIES = {"precision": "Precision", "recall": "Recall", "f1": "F1"}

#: metric key -> the name shown in tables and figures, e.g. "Precision (macro, category)"
METRIC_NAMES = {**_BASE_NAMES, **{
    f"{fam}_{avg}_{side}": f"{name} ({avg}, {'category' if side == 'c' else 'document'})"
    for fam, name in _FAMILIES.items() for avg in ("macro", "micro") for side in "cd"}}


def metric_name(metric: str) -> str:
    """The readable name of a metric key (the key itself when unknown).

    Examples
    --------
    >>> from fastrank.report import metric_name
    >>> metric_name("f1_macro_c")
    'F1 (macro, category)'
    """
    return METRIC_NAMES.get(metric, metric)


def direction(metric: str) -> str:
    """"lower is better" for the losses (one-error, coverage, ranking and Hamming loss),
    "higher is better" for every other metric.

    Examples
    --------
    >>> from fastrank.report import direction
    >>> direction("coverage"), direction("average_precision")
    ('lower is better', 'higher is better')
    """
    return "lower is better" if metric in LOWER_IS_BETTER else "higher is better"


def favourable(values, metric):
    """Values of ``metric`` oriented so that higher is better: negated for a loss
    (:data:`LOWER_IS_BETTER`), as they are otherwise."""
    values = np.asarray(values)
    return -values if metric in LOWER_IS_BETTER else values


def best_mask(values, metric):
    """True where a value of ``metric`` is the most favourable of ``values`` (lowest for a
    loss, highest otherwise; every tied best); along the last axis."""
    v = favourable(values, metric)
    return v == v.max(axis=-1, keepdims=True)


def check_alpha(alpha) -> float:
    """``alpha`` as a float, checked to be a significance level: a real number in (0, 1).

    Raises
    ------
    TypeError
        ``alpha`` is not a real number (a bool neither).
    ValueError
        ``alpha`` is outside (0, 1) or NaN.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a number in (0, 1), got {alpha!r:.80}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return float(alpha)
