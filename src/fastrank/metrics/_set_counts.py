"""The counts every set-based metric is computed from (:class:`Counts`), the metrics' values
from them, and the checks of a (truth, prediction) pair: shared by the set metrics and
:func:`fastrank.metrics.evaluate`, so both paths give identical numbers."""
import numpy as np

from .._validation import check_memory, check_n_labels, check_same_shape, check_truth, \
    is_label_sets
from ._common import check_sample_weight

AVERAGES = ("macro", "micro")
F_AVERAGES = ("macro", "micro", "macro_pr")
ORIENTS = ("category", "document")


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
        """The counts of the uint8 0/1 matrices of :func:`_truth_pair` (one more n x q
        matrix of bytes, their intersection, held while they are counted)."""
        t, p = y_true.view(bool), y_pred.view(bool)
        both = t & p
        f = np.float64
        if weights is None:
            per_label = [both.sum(axis=0, dtype=f), p.sum(axis=0, dtype=f),
                         t.sum(axis=0, dtype=f)]
        else:
            per_label = [weighted_label_sums(weights, m) for m in (both, p, t)]
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


# ---- checks of the arguments ----------------------------------------------------------

def _check_n_labels(n_labels):
    return None if n_labels is None else check_n_labels(n_labels)


#: Entries of a 0/1 matrix made float64 at a time by :func:`weighted_label_sums`.
_BLOCK_ENTRIES = 2**22


def weighted_label_sums(weights, m):
    """``weights @ m`` for an (n, q) 0/1 matrix ``m``, its rows made float64 a block of
    about ``_BLOCK_ENTRIES`` entries at a time (one block: the bits of ``weights @ m``)."""
    rows = max(1, _BLOCK_ENTRIES // max(1, m.shape[1]))
    out = np.zeros(m.shape[1])  # 0 + x is x: one block gives the bits of weights @ m
    for lo in range(0, m.shape[0], rows):
        out += weights[lo:lo + rows] @ m[lo:lo + rows].astype(np.float64)
    return out


def _truth_pair(y_true, y_pred, n_labels):
    """Both arguments as uint8 0/1 matrices of one shape (q: see the module docstring);
    refused up front (ValueError) when the two and a third of their size, which the
    counts hold while they are made, need more memory than the process can allocate."""
    n_labels = _check_n_labels(n_labels)
    true_sets, pred_sets = is_label_sets(y_true), is_label_sets(y_pred)
    if n_labels is None and true_sets and pred_sets:
        raise ValueError("y_true and y_pred are both label sets, which do not tell the number "
                         "of labels; pass n_labels=q (guessing it from the largest index "
                         "would change the value)")
    if pred_sets and not true_sets:  # q from the matrix y_true
        y_true = check_truth(y_true, n_labels=n_labels)
        _check_counting_memory(y_true.shape)
        y_pred = check_truth(y_pred, n_labels=y_true.shape[1], name="y_pred")
    else:  # q from n_labels or the matrix y_pred
        y_pred = check_truth(y_pred, n_labels=n_labels, name="y_pred")
        _check_counting_memory(y_pred.shape)
        y_true = check_truth(y_true, n_labels=y_pred.shape[1] if true_sets else n_labels)
    check_same_shape(y_true.shape, y_pred.shape, "y_true", "y_pred")
    return y_true, y_pred


def _check_counting_memory(shape):
    """Refuse, once the first of the pair is made, a pair whose second matrix and the third
    the counts hold do not fit."""
    n, q = shape
    check_memory(2 * n * q, f"counting a {n} x {q} truth and prediction (two more bytes an "
                            "entry)")


def _counts(y_true, y_pred, n_labels, sample_weight=None):
    y_true, y_pred = _truth_pair(y_true, y_pred, n_labels)
    weights = check_sample_weight(sample_weight, y_true.shape[0], averaged=True)
    return Counts.from_prediction(y_true, y_pred, weights)


def _check_zero_division(zero_division):
    if not isinstance(zero_division, (int, float, np.floating, np.integer)) \
            or not np.isfinite(zero_division):
        raise ValueError(f"zero_division must be a finite number, got {zero_division!r}")
    return float(zero_division)
