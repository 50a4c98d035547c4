"""Set-based (bipartition) metrics on a 0/1 prediction (melotti2009 §4.2, gatto).

Every metric is computed from counts: per document ``TP_j`` (predicted and relevant),
``|Ĉ_j|`` (predicted) and ``|C_j|`` (relevant), per label ``TP_i``, ``TP_i + FP_i``,
``TP_i + FN_i``. :func:`fastrank.metrics.evaluate` gets the same counts from its kernel and
calls the same helpers, so both paths give identical numbers.

``zero_division`` (default 0.0) is the value of a ratio whose denominator is 0; it is used
per label / per document before averaging, and for a micro ratio whose pooled denominator
is 0. ``orient="category"`` (``^c``) computes each label's ratio over documents,
``orient="document"`` (``^d``) each document's ratio over labels.

``y_true`` and ``y_pred`` are 0/1 matrices (dense or sparse) or lists of label-index sets.
The number of labels ``q`` comes from whichever of them is a matrix; when both are label
sets it cannot be read off the data (the largest index seen need not be the last label,
and ``q`` changes Hamming loss, the per-label macro averages and the contingency counts),
so ``n_labels`` must then be given.

``sample_weight`` (optional, one finite weight >= 0 per document) weights every average
over documents, and each document adds its weight instead of 1 to the per-label counts of
the category-oriented metrics — as scikit-learn's weighted metrics do.
"""
from collections import namedtuple
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._typing import LabelsLike
from .._validation import check_n_labels, check_option, check_same_shape, check_truth, \
    is_label_sets
from ._common import check_sample_weight

AVERAGES = ("macro", "micro")
F_AVERAGES = ("macro", "micro", "macro_pr")
ORIENTS = ("category", "document")

Contingency = namedtuple("Contingency", "tp fp fn tn")
Contingency.__doc__ = """Contingency counts, one entry per label or document (:func:`contingency`).

Attributes
----------
tp, fp, fn, tn : ndarray of int64
    True positives, false positives, false negatives, true negatives.
"""


# ---- counts ------------------------------------------------------------------------------

class Counts:
    """The counts every set metric is a function of (float64 arrays): per document, and
    per label — there summed over documents, each counting its weight (1 unweighted)."""

    def __init__(self, tp_doc, pred_doc, rel_doc, tp_label, pred_label, rel_label,
                 exact_doc=None, weights=None):
        self.tp_doc, self.pred_doc, self.rel_doc = tp_doc, pred_doc, rel_doc
        self.tp_label, self.pred_label, self.rel_label = tp_label, pred_label, rel_label
        self.n_labels = tp_label.shape[0]
        # per-document [Ĉ_j = C_j]; given when the counts are expectations (ties="expected")
        self.exact_doc = exact_doc
        self.weights = weights  # per-document weights, or None

    @classmethod
    def from_prediction(cls, y_true, y_pred, weights=None):
        t = y_true.astype(bool)
        p = y_pred.astype(bool)
        both = t & p
        f = np.float64
        if weights is None:
            per_label = [both.sum(axis=0, dtype=f), p.sum(axis=0, dtype=f),
                         t.sum(axis=0, dtype=f)]
        else:
            per_label = [weights @ m.astype(f) for m in (both, p, t)]
        return cls(both.sum(axis=1, dtype=f), p.sum(axis=1, dtype=f), t.sum(axis=1, dtype=f),
                   *per_label, weights=weights)

    def side(self, orient):
        """(tp, predicted, relevant) along the orientation's unit (label or document)."""
        if orient == "category":
            return self.tp_label, self.pred_label, self.rel_label
        return self.tp_doc, self.pred_doc, self.rel_doc

    def mean(self, values, orient="document"):
        """Mean over the orientation's units (documents: weighted by their weights)."""
        if orient == "document" and self.weights is not None:
            return float(values @ self.weights / self.weights.sum())
        return float(np.mean(values))

    def total(self, values, orient):
        """Sum over the orientation's units (documents: each times its weight)."""
        if orient == "document" and self.weights is not None:
            return float(values @ self.weights)
        return values.sum()


def _ratio(num, den, zero_division):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, float(zero_division))
    np.divide(num, den, out=out, where=den > 0)
    return out


def _f_from_counts(tp, pred, rel, beta, zero_division):
    """F_beta = (1+β²)TP / (β²(TP+FN) + TP+FP), the harmonic form of eq. 4.25 on counts."""
    b2 = beta * beta
    return _ratio((1.0 + b2) * tp, b2 * rel + pred, zero_division)


def _f_from_pr(p, r, beta, zero_division):
    b2 = beta * beta
    return float(_ratio((1.0 + b2) * p * r, b2 * p + r, zero_division))


def score_precision(c, average, orient, zero_division):
    tp, pred, _ = c.side(orient)
    if average == "micro":
        return float(_ratio(c.total(tp, orient), c.total(pred, orient), zero_division))
    return c.mean(_ratio(tp, pred, zero_division), orient)


def score_recall(c, average, orient, zero_division):
    tp, _, rel = c.side(orient)
    if average == "micro":
        return float(_ratio(c.total(tp, orient), c.total(rel, orient), zero_division))
    return c.mean(_ratio(tp, rel, zero_division), orient)


def score_fbeta(c, beta, average, orient, zero_division):
    tp, pred, rel = c.side(orient)
    if average == "micro":
        return float(_f_from_counts(c.total(tp, orient), c.total(pred, orient),
                                    c.total(rel, orient), beta, zero_division))
    if average == "macro_pr":
        return _f_from_pr(score_precision(c, "macro", orient, zero_division),
                          score_recall(c, "macro", orient, zero_division), beta, zero_division)
    return c.mean(_f_from_counts(tp, pred, rel, beta, zero_division), orient)


def score_hamming(c):
    return c.mean((c.pred_doc + c.rel_doc - 2.0 * c.tp_doc) / c.n_labels)


def score_exact_match(c):
    if c.exact_doc is not None:
        return c.mean(c.exact_doc)
    return c.mean((c.pred_doc == c.rel_doc) & (c.tp_doc == c.rel_doc))


def score_accuracy(c, zero_division):
    return c.mean(_ratio(c.tp_doc, c.pred_doc + c.rel_doc - c.tp_doc, zero_division))


# ---- public functions --------------------------------------------------------------------

def _check_n_labels(n_labels):
    return None if n_labels is None else check_n_labels(n_labels)


def _truth_pair(y_true, y_pred, n_labels):
    """Both arguments as uint8 0/1 matrices of one shape (q: see the module docstring)."""
    n_labels = _check_n_labels(n_labels)
    true_sets, pred_sets = is_label_sets(y_true), is_label_sets(y_pred)
    if n_labels is None and true_sets and pred_sets:
        raise ValueError("y_true and y_pred are both label sets, which do not tell the number "
                         "of labels; pass n_labels=q (guessing it from the largest index "
                         "would change the value)")
    if pred_sets and not true_sets:  # q from the matrix y_true
        y_true = check_truth(y_true, n_labels=n_labels)
        y_pred = check_truth(y_pred, n_labels=y_true.shape[1], name="y_pred")
    else:  # q from n_labels or the matrix y_pred
        y_pred = check_truth(y_pred, n_labels=n_labels, name="y_pred")
        y_true = check_truth(y_true, n_labels=y_pred.shape[1] if true_sets else n_labels)
    check_same_shape(y_true.shape, y_pred.shape, "y_true", "y_pred")
    return y_true, y_pred


def _counts(y_true, y_pred, n_labels, sample_weight=None):
    y_true, y_pred = _truth_pair(y_true, y_pred, n_labels)
    weights = check_sample_weight(sample_weight, y_true.shape[0], averaged=True)
    return Counts.from_prediction(y_true, y_pred, weights)


def _check_zero_division(zero_division):
    if not isinstance(zero_division, (int, float, np.floating, np.integer)) \
            or not np.isfinite(zero_division):
        raise ValueError(f"zero_division must be a finite number, got {zero_division!r}")
    return float(zero_division)


def hamming_loss(y_true: LabelsLike, y_pred: LabelsLike, *, n_labels: int | None = None,
                 sample_weight: npt.ArrayLike | None = None) -> float:
    """Hamming loss ``mean_j |Ĉ_j Δ C_j| / q``: the share of wrong label decisions.

    Melotti (2009) eq. 4.13-4.14. Lower is better. Equals ``sklearn.metrics.hamming_loss``
    on indicator matrices.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, or invalid weights.
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
    >>> from fastrank.metrics import hamming_loss
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> hamming_loss(Y, P)                  # 2 wrong decisions of 8
    0.25
    >>> hamming_loss([{0, 2}, {1}], [{0}, {1, 2}], n_labels=4)
    0.25
    """
    return score_hamming(_counts(y_true, y_pred, n_labels, sample_weight))


def exact_match(y_true: LabelsLike, y_pred: LabelsLike, *, n_labels: int | None = None,
                sample_weight: npt.ArrayLike | None = None) -> float:
    """Exact match (subset accuracy) ``mean_j [Ĉ_j = C_j]``.

    Melotti (2009) eq. 4.15-4.16. Higher is better. A document with ``Ĉ_j = C_j = ∅``
    counts as exact. Equals ``sklearn.metrics.accuracy_score`` on indicator matrices. (Gatto
    prints 0.980 for "subset accuracy" because its R code averages label-wise equality, i.e.
    1 - Hamming loss; the subset accuracy of its example is 49/51.)

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, or invalid weights.
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
    >>> from fastrank.metrics import exact_match
    >>> exact_match([[1, 0], [0, 1]], [[1, 0], [1, 1]])
    0.5
    """
    return score_exact_match(_counts(y_true, y_pred, n_labels, sample_weight))


def zero_one_loss(y_true: LabelsLike, y_pred: LabelsLike, *, n_labels: int | None = None,
                  sample_weight: npt.ArrayLike | None = None) -> float:
    """0/1 loss ``1 - exact_match``: the share of documents whose predicted set is not exact.

    Lower is better.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, or invalid weights.
    TypeError
        Non-numeric input.

    See Also
    --------
    exact_match

    Examples
    --------
    >>> from fastrank.metrics import zero_one_loss
    >>> zero_one_loss([[1, 0], [0, 1]], [[1, 0], [1, 1]])
    0.5
    """
    return 1.0 - exact_match(y_true, y_pred, n_labels=n_labels, sample_weight=sample_weight)


def accuracy(y_true: LabelsLike, y_pred: LabelsLike, *, zero_division: float = 0.0,
             n_labels: int | None = None,
             sample_weight: npt.ArrayLike | None = None) -> float:
    """Example-based accuracy (Jaccard) ``mean_j |Ĉ_j ∩ C_j| / |Ĉ_j ∪ C_j|`` (Gatto's "A").

    Higher is better. A document with ``Ĉ_j = C_j = ∅`` scores ``zero_division``. Equals
    ``sklearn.metrics.jaccard_score(average="samples", zero_division=...)``. Not the same as
    scikit-learn's ``accuracy_score``, which is :func:`exact_match`.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, a non-finite ``zero_division``, or invalid weights.
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
    >>> from fastrank.metrics import accuracy
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> accuracy(Y, P)                      # (1/2 + 1/2) / 2
    0.5
    """
    return score_accuracy(_counts(y_true, y_pred, n_labels, sample_weight),
                          _check_zero_division(zero_division))


def precision(y_true: LabelsLike, y_pred: LabelsLike, *,
              average: Literal["macro", "micro"] = "macro",
              orient: Literal["category", "document"] = "category",
              zero_division: float = 0.0, n_labels: int | None = None,
              sample_weight: npt.ArrayLike | None = None) -> float:
    """Precision ``TP / (TP + FP)``, macro- or micro-averaged over labels or documents.

    Melotti (2009) eq. 4.17-4.20 (category) and 4.28-4.31 (document). Higher is better. A
    unit with nothing predicted scores ``zero_division``. Micro precision is the same for
    both orientations. Category macro/micro equal scikit-learn's
    ``precision_score(average="macro"/"micro")``; document macro equals
    ``average="samples"``.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    average : {"macro", "micro"}, default "macro"
        Mean of the per-unit ratios over *all* units, or the ratio of the pooled counts.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a non-finite
        ``zero_division``, or invalid weights.
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
    >>> from fastrank.metrics import precision
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> precision(Y, P)                     # labels: 1, 1, 0, 0/0 -> 0
    0.5
    >>> precision(Y, P, orient="document")  # documents: 1/1, 1/2
    0.75
    >>> round(precision(Y, P, average="micro"), 4)
    0.6667
    """
    check_option("average", average, AVERAGES)
    check_option("orient", orient, ORIENTS)
    return score_precision(_counts(y_true, y_pred, n_labels, sample_weight), average, orient,
                           _check_zero_division(zero_division))


def recall(y_true: LabelsLike, y_pred: LabelsLike, *, average: Literal["macro", "micro"] = "macro",
           orient: Literal["category", "document"] = "category",
           zero_division: float = 0.0, n_labels: int | None = None,
           sample_weight: npt.ArrayLike | None = None) -> float:
    """Recall ``TP / (TP + FN)``, macro- or micro-averaged over labels or documents.

    Melotti (2009) eq. 4.21-4.24, 4.32-4.35; averaging as :func:`precision`. Higher is
    better. A unit with no relevant entry (a label no document carries, a document with no
    relevant label) scores ``zero_division``.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    average : {"macro", "micro"}, default "macro"
        Mean of the per-unit ratios over *all* units, or the ratio of the pooled counts.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a non-finite
        ``zero_division``, or invalid weights.
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
    >>> from fastrank.metrics import recall
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> recall(Y, P, orient="document")     # documents: 1/2, 1/1
    0.75
    """
    check_option("average", average, AVERAGES)
    check_option("orient", orient, ORIENTS)
    return score_recall(_counts(y_true, y_pred, n_labels, sample_weight), average, orient,
                        _check_zero_division(zero_division))


def fbeta(y_true: LabelsLike, y_pred: LabelsLike, *, beta: float = 1.0,
          average: Literal["macro", "micro", "macro_pr"] = "macro",
          orient: Literal["category", "document"] = "category", zero_division: float = 0.0,
          n_labels: int | None = None,
          sample_weight: npt.ArrayLike | None = None) -> float:
    """F_β, the weighted harmonic mean of precision and recall.

    Melotti (2009) eq. 4.25-4.27, 4.36-4.38. Per unit ``F = (1+β²)TP / ((1+β²)TP + β²FN +
    FP)``; ``zero_division`` when ``TP = FP = FN = 0``. Higher is better. Two macro
    conventions, named apart:

    * ``average="macro"``: mean of the per-unit F (Melotti eq. 4.26; scikit-learn);
    * ``average="macro_pr"``: F of macro-precision and macro-recall (Gatto's "MaF1").

    ``average="micro"``: F of the pooled counts (equal for both orientations).

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    beta : float, default 1.0
        Weight of recall (finite, >= 0).
    average : {"macro", "micro", "macro_pr"}, default "macro"
        See above.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a negative or non-finite
        ``beta`` or ``zero_division``, or invalid weights.
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
    >>> from fastrank.metrics import fbeta
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> round(fbeta(Y, P, beta=2, orient="document"), 4)
    0.6944
    """
    check_option("average", average, F_AVERAGES)
    check_option("orient", orient, ORIENTS)
    if not np.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
    return score_fbeta(_counts(y_true, y_pred, n_labels, sample_weight), float(beta), average,
                       orient, _check_zero_division(zero_division))


def f1(y_true: LabelsLike, y_pred: LabelsLike, *,
       average: Literal["macro", "micro", "macro_pr"] = "macro",
       orient: Literal["category", "document"] = "category", zero_division: float = 0.0,
       n_labels: int | None = None,
       sample_weight: npt.ArrayLike | None = None) -> float:
    """F_1: :func:`fbeta` with ``beta=1``, the harmonic mean of precision and recall.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    average : {"macro", "micro", "macro_pr"}, default "macro"
        See :func:`fbeta`.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a non-finite
        ``zero_division``, or invalid weights.
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
    >>> from fastrank.metrics import f1
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> f1(Y, P)                            # labels: 1, 1, 0, 0
    0.5
    >>> round(f1(Y, P, orient="document"), 4)  # documents: 2/3, 2/3
    0.6667
    """
    return fbeta(y_true, y_pred, beta=1.0, average=average, orient=orient,
                 zero_division=zero_division, n_labels=n_labels, sample_weight=sample_weight)


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
    y_true, y_pred = y_true.astype(bool), y_pred.astype(bool)
    axis = 0 if orient == "category" else 1

    def count(m):
        if weights is None:
            return m.sum(axis=axis, dtype=np.int64)
        return weights @ m if axis == 0 else m.sum(axis=1, dtype=np.float64) * weights
    return Contingency(count(y_true & y_pred), count(~y_true & y_pred),
                       count(y_true & ~y_pred), count(~y_true & ~y_pred))


def label_problem_rates(y_true: LabelsLike, y_pred: LabelsLike, *,
                        n_labels: int | None = None) -> dict[str, float]:
    """Label-problem rates (Rivolli et al. 2018, in Gatto): shares of the ``q`` labels.

    * ``"CLP"``: labels never left out, ``TN_i + FN_i = 0`` (constant label prediction);
    * ``"MLP"``: labels never predicted, ``TP_i + FP_i = 0`` (missing label prediction);
    * ``"WLP"``: labels never predicted correctly, ``TP_i = 0`` (wrong label prediction).

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
