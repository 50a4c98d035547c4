"""Contingency counts per label or per document (:func:`contingency`, :class:`Contingency`)
and the label-problem rates built on them."""
from collections import namedtuple
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._typing import LabelsLike
from .._validation import check_option
from ._common import check_sample_weight
from ._set_counts import ORIENTS, _truth_pair, weighted_label_sums

Contingency = namedtuple("Contingency", "tp fp fn tn")
Contingency.__doc__ = """Contingency counts, one entry per label or document (:func:`contingency`).

Attributes
----------
tp, fp, fn, tn : ndarray of int64
    True positives, false positives, false negatives, true negatives.
"""


def contingency(y_true: LabelsLike, y_pred: LabelsLike, *,
                orient: Literal["category", "document"] = "category",
                n_labels: int | None = None,
                sample_weight: npt.ArrayLike | None = None) -> Contingency:
    """TP, FP, FN, TN per label or per document.

    Per label over documents (``orient="category"``, Melotti 2009 Table 4.7) or per document
    over labels (``"document"``, Table 4.14). With ``sample_weight`` a document counts its
    weight instead of 1: per label the weighted sums over documents, per document its counts
    times its weight (as scikit-learn's ``multilabel_confusion_matrix``).

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    orient : {"category", "document"}, default "category"
        The unit of the counts.
    n_labels : int, optional
        The number of labels ``q`` (the length of the per-label arrays, and what TN counts
        against); required when both arguments are label sets.
    sample_weight : array of shape (n_documents,), optional
        Per-document weights, finite and >= 0.

    Returns
    -------
    Contingency
        Named tuple ``(tp, fp, fn, tn)`` of arrays, one entry per unit: int64 counts, or
        float64 weighted counts with ``sample_weight``.

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``orient``, bad ``sample_weight``.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import contingency
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> c = contingency(Y, P)
    >>> c.tp, c.fp, c.fn, c.tn
    (array([1, 1, 0, 0]), array([0, 0, 1, 0]), array([0, 0, 1, 0]), array([1, 1, 0, 2]))
    >>> contingency(Y, P, sample_weight=[2, 0.5]).tn
    array([0.5, 2. , 0. , 2.5])
    """
    check_option("orient", orient, ORIENTS)
    y_true, y_pred = _truth_pair(y_true, y_pred, n_labels)
    weights = check_sample_weight(sample_weight, y_true.shape[0])
    y_true, y_pred = y_true.view(bool), y_pred.view(bool)
    axis = 0 if orient == "category" else 1

    def count(m):
        if weights is None:
            return m.sum(axis=axis, dtype=np.int64)
        return weighted_label_sums(weights, m) if axis == 0 \
            else m.sum(axis=1, dtype=np.float64) * weights
    cell = np.empty_like(y_true)  # each cell's indicator in turn: one n x q matrix held
    return Contingency(count(np.logical_and(y_true, y_pred, out=cell)),
                       count(np.greater(y_pred, y_true, out=cell)),
                       count(np.greater(y_true, y_pred, out=cell)),
                       count(np.logical_not(np.logical_or(y_true, y_pred, out=cell), out=cell)))


def label_problem_rates(y_true: LabelsLike, y_pred: LabelsLike, *,
                        n_labels: int | None = None) -> dict[str, float]:
    """Label-problem rates (Rivolli et al. 2018, in Gatto): shares of the ``q`` labels.

    * ``"CLP"``: labels never left out, :math:`TN_i + FN_i = 0` (constant label prediction);
    * ``"MLP"``: labels never predicted, :math:`TP_i + FP_i = 0` (missing label prediction);
    * ``"WLP"``: labels never predicted correctly, :math:`TP_i = 0` (wrong label
      prediction).

    Lower is better.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q`` (the denominator of the rates); required when both
        arguments are label sets.

    Returns
    -------
    dict
        ``{"CLP": float, "MLP": float, "WLP": float}``.

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] A. Rivolli, C. Soares and A. C. P. L. F. de Carvalho, "Enhancing multilabel
       classification for food truck recommendation", Expert Systems, 2018.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import label_problem_rates
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> label_problem_rates(Y, P)           # c4 never predicted; c3, c4 never right
    {'CLP': 0.0, 'MLP': 0.25, 'WLP': 0.5}
    """
    c = contingency(y_true, y_pred, orient="category", n_labels=n_labels)
    return {"CLP": float(np.mean(c.tn + c.fn == 0)), "MLP": float(np.mean(c.tp + c.fp == 0)),
            "WLP": float(np.mean(c.tp == 0))}
