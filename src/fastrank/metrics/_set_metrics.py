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

import numpy as np

from .._validation import check_n_labels, check_option, check_same_shape, check_truth, \
    is_label_sets
from ._common import check_sample_weight

AVERAGES = ("macro", "micro")
F_AVERAGES = ("macro", "micro", "macro_pr")
ORIENTS = ("category", "document")

Contingency = namedtuple("Contingency", "tp fp fn tn")
Contingency.__doc__ = """Contingency counts (int64 arrays), one entry per label or document."""


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
    weights = check_sample_weight(sample_weight, y_true.shape[0])
    if weights is not None and not weights.sum() > 0:
        raise ValueError("sample_weight sums to 0: no document to average over")
    return Counts.from_prediction(y_true, y_pred, weights)


def _check_zero_division(zero_division):
    if not isinstance(zero_division, (int, float, np.floating, np.integer)) \
            or not np.isfinite(zero_division):
        raise ValueError(f"zero_division must be a finite number, got {zero_division!r}")
    return float(zero_division)


def hamming_loss(y_true, y_pred, *, n_labels=None, sample_weight=None):
    """Hamming loss ``mean_j |Ĉ_j Δ C_j| / q`` (melotti2009 eq. 4.13-4.14). Lower is better.

    ``y_true`` and ``y_pred``: 0/1 matrices (dense or sparse) or lists of label sets.
    ``n_labels``: the number of labels ``q``; required when both are label sets (it is
    the denominator), else taken from the matrix argument (and checked against it when
    given). Equals ``sklearn.metrics.hamming_loss`` on indicator matrices.
    """
    return score_hamming(_counts(y_true, y_pred, n_labels, sample_weight))


def exact_match(y_true, y_pred, *, n_labels=None, sample_weight=None):
    """Exact match (subset accuracy) ``mean_j [Ĉ_j = C_j]`` (eq. 4.15-4.16).

    A document with ``Ĉ_j = C_j = ∅`` counts as exact. Equals
    ``sklearn.metrics.accuracy_score`` on indicator matrices. (gatto prints 0.980 for
    "subset accuracy" because its R code averages label-wise equality, i.e. 1 - Hamming
    loss; the subset accuracy of its example is 49/51.)
    ``n_labels``: the number of labels ``q``, needed only when both are label sets.
    """
    return score_exact_match(_counts(y_true, y_pred, n_labels, sample_weight))


def zero_one_loss(y_true, y_pred, *, n_labels=None, sample_weight=None):
    """0/1 loss ``1 - exact_match`` (share of documents whose predicted set is not exact).

    ``n_labels``: the number of labels ``q``, needed only when both are label sets.
    """
    return 1.0 - exact_match(y_true, y_pred, n_labels=n_labels, sample_weight=sample_weight)


def accuracy(y_true, y_pred, *, zero_division=0.0, n_labels=None, sample_weight=None):
    """Example-based accuracy (Jaccard) ``mean_j |Ĉ_j ∩ C_j| / |Ĉ_j ∪ C_j|`` (gatto "A").

    A document with ``Ĉ_j = C_j = ∅`` scores ``zero_division`` (0/0). Equals
    ``sklearn.metrics.jaccard_score(average="samples", zero_division=...)``. Not the same as
    scikit-learn's ``accuracy_score``, which is :func:`exact_match`.
    ``n_labels``: the number of labels ``q``, needed only when both are label sets.
    """
    return score_accuracy(_counts(y_true, y_pred, n_labels, sample_weight),
                          _check_zero_division(zero_division))


def precision(y_true, y_pred, *, average="macro", orient="category", zero_division=0.0,
              n_labels=None, sample_weight=None):
    """Precision ``TP / (TP + FP)`` (melotti2009 eq. 4.17-4.20, 4.28-4.31).

    ``orient="category"``: per label over documents; ``"document"``: per document over
    labels. ``average="macro"``: mean of the per-unit ratios over *all* units (a unit with
    nothing predicted scores ``zero_division``); ``"micro"``: pooled counts (the same value
    for both orientations). Category macro/micro equal scikit-learn's
    ``precision_score(average="macro"/"micro")``; document macro equals
    ``average="samples"``.
    ``n_labels``: the number of labels ``q``, needed only when both are label sets.
    """
    check_option("average", average, AVERAGES)
    check_option("orient", orient, ORIENTS)
    return score_precision(_counts(y_true, y_pred, n_labels, sample_weight), average, orient,
                           _check_zero_division(zero_division))


def recall(y_true, y_pred, *, average="macro", orient="category", zero_division=0.0,
           n_labels=None, sample_weight=None):
    """Recall ``TP / (TP + FN)`` (eq. 4.21-4.24, 4.32-4.35); averaging as :func:`precision`.

    A unit with no relevant entry (a label no document carries, a document with no
    relevant label) scores ``zero_division``.
    ``n_labels``: the number of labels ``q``, needed only when both are label sets.
    """
    check_option("average", average, AVERAGES)
    check_option("orient", orient, ORIENTS)
    return score_recall(_counts(y_true, y_pred, n_labels, sample_weight), average, orient,
                        _check_zero_division(zero_division))


def fbeta(y_true, y_pred, *, beta=1.0, average="macro", orient="category", zero_division=0.0,
          n_labels=None, sample_weight=None):
    """F_β, the weighted harmonic mean of precision and recall (eq. 4.25-4.27, 4.36-4.38).

    Per unit ``F = (1+β²)TP / ((1+β²)TP + β²FN + FP)``; ``zero_division`` when
    ``TP = FP = FN = 0``. Two macro conventions, named apart:

    * ``average="macro"``: mean of the per-unit F (melotti2009 eq. 4.26; scikit-learn);
    * ``average="macro_pr"``: F of macro-precision and macro-recall (gatto's "MaF1").

    ``average="micro"``: F of the pooled counts (equal for both orientations).
    ``n_labels``: the number of labels ``q``, needed only when both are label sets.
    """
    check_option("average", average, F_AVERAGES)
    check_option("orient", orient, ORIENTS)
    if not np.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
    return score_fbeta(_counts(y_true, y_pred, n_labels, sample_weight), float(beta), average,
                       orient, _check_zero_division(zero_division))


def f1(y_true, y_pred, *, average="macro", orient="category", zero_division=0.0,
       n_labels=None, sample_weight=None):
    """F_1 = :func:`fbeta` with ``beta=1``."""
    return fbeta(y_true, y_pred, beta=1.0, average=average, orient=orient,
                 zero_division=zero_division, n_labels=n_labels, sample_weight=sample_weight)


def contingency(y_true, y_pred, *, orient="category", n_labels=None):
    """TP, FP, FN, TN per label (``orient="category"``, melotti2009 Table 4.7) or per
    document (``"document"``, Table 4.14), as a :class:`Contingency` of int64 arrays.

    ``n_labels``: the number of labels ``q`` (the length of the per-label arrays, and what
    TN counts against); required when both arguments are label sets.
    """
    check_option("orient", orient, ORIENTS)
    y_true, y_pred = _truth_pair(y_true, y_pred, n_labels)
    y_true, y_pred = y_true.astype(bool), y_pred.astype(bool)
    axis = 0 if orient == "category" else 1

    def count(m):
        return m.sum(axis=axis, dtype=np.int64)
    return Contingency(count(y_true & y_pred), count(~y_true & y_pred),
                       count(y_true & ~y_pred), count(~y_true & ~y_pred))


def label_problem_rates(y_true, y_pred, *, n_labels=None):
    """Label-problem rates of Rivolli et al. 2018 (gatto), shares of the ``q`` labels:

    * ``"CLP"``: labels never left out, ``TN_i + FN_i = 0`` (constant label prediction);
    * ``"MLP"``: labels never predicted, ``TP_i + FP_i = 0`` (missing label prediction);
    * ``"WLP"``: labels never predicted correctly, ``TP_i = 0`` (wrong label prediction).

    Returns a dict with these three keys. Lower is better. ``n_labels``: the number of
    labels ``q`` (the denominator of the rates); required when both are label sets.
    """
    c = contingency(y_true, y_pred, orient="category", n_labels=n_labels)
    return {"CLP": float(np.mean(c.tn + c.fn == 0)), "MLP": float(np.mean(c.tp + c.fp == 0)),
            "WLP": float(np.mean(c.tp == 0))}
