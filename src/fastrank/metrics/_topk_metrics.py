"""The top-k metrics one at a time (:func:`precision_at_k`, :func:`ndcg_at_k`, ...): each
a column of :func:`fastrank.metrics.evaluate_at_k`; definitions and tie semantics in
:mod:`fastrank.metrics._topk`."""
import numbers
from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from .._typing import LabelsLike
from ._topk import evaluate_at_k


def _one(name, y_true, y_score, k, ties, propensity=None, **kw):
    """One metric: a float for an int k, else an array over k."""
    ev = evaluate_at_k(y_true, y_score, k=k, ties=ties, propensity=propensity, **kw)
    values = ev.values[0, ev.metrics.index(name)]
    return float(values[0]) if isinstance(k, numbers.Integral) else values


def precision_at_k(y_true: LabelsLike, y_score: Any, k: int | Sequence[int] = 5,
                   ties: str = "expected", **kwargs: Any) -> Any:
    """precision@k: the share of the first k positions that hold relevant labels (see
    :func:`evaluate_at_k` for the inputs, ``ties`` and the keyword arguments
    ``sample_weight``, ``random_state``, ``n_labels``). A float for an int ``k``, else an
    array over ``k``.

    Examples
    --------
    >>> precision_at_k([[1, 0, 0, 1]], [[.8, .8, .8, .1]], k=3)   # 1 of 3 tied in the top 3
    0.3333333333333333
    """
    return _one("precision", y_true, y_score, k, ties, **kwargs)


def recall_at_k(y_true: LabelsLike, y_score: Any, k: int | Sequence[int] = 5,
                ties: str = "expected", **kwargs: Any) -> Any:
    """recall@k: the share of a document's relevant labels in its first k positions (0 for
    a document without relevant labels); as :func:`precision_at_k`."""
    return _one("recall", y_true, y_score, k, ties, **kwargs)


def dcg_at_k(y_true: LabelsLike, y_score: Any, k: int | Sequence[int] = 5,
             ties: str = "expected", **kwargs: Any) -> Any:
    r"""DCG@k: the sum of :math:`1 / \log_2(p + 2)` over the relevant labels at positions
    :math:`p < k` (0-based); as :func:`precision_at_k`."""
    return _one("dcg", y_true, y_score, k, ties, **kwargs)


def ndcg_at_k(y_true: LabelsLike, y_score: Any, k: int | Sequence[int] = 5,
              ties: str = "expected", **kwargs: Any) -> Any:
    r"""nDCG@k: DCG@k over the DCG@k of the ideal ranking,
    :math:`\sum_{p < \min(k, m)} 1 / \log_2(p + 2)` with :math:`m` relevant labels
    (pyxclib's and napkinXC's normaliser); 0 for a document without
    relevant labels; as :func:`precision_at_k`. With ``ties="expected"`` it equals
    scikit-learn's ``ndcg_score(y_true, y_score, k=k)``."""
    return _one("ndcg", y_true, y_score, k, ties, **kwargs)


def psprecision_at_k(y_true: LabelsLike, y_score: Any, propensity: npt.ArrayLike,
                     k: int | Sequence[int] = 5, ties: str = "expected",
                     normalize: bool = True, **kwargs: Any) -> Any:
    """Propensity-scored precision@k (Jain et al. 2016): :math:`1/k` times the sum of
    :math:`1 / p_l` over the relevant labels in the first k positions, averaged over documents;
    with ``normalize`` (the default, as pyxclib and napkinXC) divided by the average of the
    largest value each document could reach. As :func:`precision_at_k`."""
    name = "psprecision" if normalize else "psprecision_gain"
    return _one(name, y_true, y_score, k, ties, propensity, **kwargs)


def psdcg_at_k(y_true: LabelsLike, y_score: Any, propensity: npt.ArrayLike,
               k: int | Sequence[int] = 5, ties: str = "expected", **kwargs: Any) -> Any:
    r"""Propensity-scored DCG@k (Jain et al. 2016): the sum of
    :math:`1 / (p_l \log_2(p + 2))` over the relevant labels at positions :math:`p < k`,
    averaged over documents (napkinXC's
    ``PSDCGAtK(normalize=False)`` divides it by k too). As :func:`precision_at_k`."""
    return _one("psdcg", y_true, y_score, k, ties, propensity, **kwargs)


def psndcg_at_k(y_true: LabelsLike, y_score: Any, propensity: npt.ArrayLike,
                k: int | Sequence[int] = 5, ties: str = "expected", normalize: bool = True,
                **kwargs: Any) -> Any:
    """Propensity-scored nDCG@k (Jain et al. 2016): PSDCG@k over the document's plain
    IDCG@k, averaged; with ``normalize`` (the default, as pyxclib and napkinXC) divided by
    the average of the largest value each document could reach. As
    :func:`precision_at_k`."""
    name = "psndcg" if normalize else "psndcg_gain"
    return _one(name, y_true, y_score, k, ties, propensity, **kwargs)
