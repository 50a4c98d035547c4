"""Calibration: from beliefs (vote fractions, cosine maxima, ...) to probabilities
(matsubara2008 ch. 5).

* :class:`Isotonic` -- pool-adjacent-violators isotonic regression, tied scores pooled
  first; its blocks are the segments of the ROC convex hull (ROCCH == PAV).
* :class:`Platt` -- sigmoid fit by maximum likelihood (eq. 5.3-5.5).
* :class:`CalibratedClassifier` -- wraps a fastrank classifier (``fit(X, Y)`` /
  ``decision_function(X)``) and calibrates each label on held-out or out-of-fold beliefs.
* :func:`brier_score` (eq. 5.1), :func:`brier_decomposition` (Theorem 5.1),
  :func:`log_loss` (eq. 5.2).

Calibrators accept one binary problem (1-D scores and 0/1 truth) or a belief matrix
(n, q) with its truth matrix, then fit one map per label (column). Sparse beliefs are
densified (calibrated probabilities of zero beliefs are not zero).
"""
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ._base import MultiLabelEstimator, NotFittedError
from ._ext import isotonic as _kernel
from ._ext import roc as _roc_kernel
from ._validation import check_csr, check_option, check_random_state, check_same_shape, \
    check_scores, check_truth


def _check_pair(scores, y=None, name="scores"):
    """(scores, y, was_1d): scores as a float 2-D ndarray, y as uint8 of the same shape."""
    if sp.issparse(scores):
        scores = check_csr(scores, name).toarray()
    scores = np.asarray(scores)
    one_d = scores.ndim == 1
    scores = check_scores(scores.reshape(-1, 1) if one_d else scores, name=name,
                          allow_sparse=False)
    if y is None:
        return scores, None, one_d
    y = np.asarray(y) if not sp.issparse(y) else y
    if one_d != (np.ndim(y) == 1):
        raise ValueError(f"{name} is {1 if one_d else 2}-D but y is {np.ndim(y)}-D")
    y = check_truth(y.reshape(-1, 1) if one_d else y, name="y")
    check_same_shape(y.shape, scores.shape, "y", name)
    return scores, y, one_d


class _Calibrator:
    """fit/transform over the labels (columns); subclasses fit and apply one label's map."""

    def fit(self, scores, y):
        """Fit one map per label from beliefs ``scores`` (n,) or (n, q) and 0/1 truth ``y``
        of the same shape. Returns self."""
        scores, y, one_d = _check_pair(scores, y)
        self._one_d = one_d
        self.n_labels_ = scores.shape[1]
        self._maps = [self._fit_one(np.ascontiguousarray(scores[:, j]),
                                    np.ascontiguousarray(y[:, j]))
                      for j in range(scores.shape[1])]
        return self

    def transform(self, scores):
        """Calibrated probabilities, same shape as ``scores`` (float64)."""
        if not hasattr(self, "_maps"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        scores, _, one_d = _check_pair(scores)
        if one_d != self._one_d or scores.shape[1] != self.n_labels_:
            expected = "1-D" if self._one_d else f"2-D with {self.n_labels_} labels"
            raise ValueError(f"scores must be {expected} as in fit")
        out = np.column_stack([self._apply_one(m, scores[:, j]) for j, m in enumerate(self._maps)])
        return out.ravel() if one_d else out

    def fit_transform(self, scores, y):
        return self.fit(scores, y).transform(scores)

    def _per_label(self, values):
        return values[0] if self._one_d else values


class Isotonic(_Calibrator):
    """Isotonic regression by pool-adjacent-violators (PAV), tied scores pooled first.

    Fit (matsubara2008 §5.1.2, Table 5.1): sort the examples by score, make each group of
    tied scores one pool, then merge adjacent pools while a lower-scored pool has a
    positive rate not smaller than the next one's. Each final pool k gets the probability
    ``p_k = n+_k / n_k``; these are nondecreasing in the score and adjacent pools differ.
    The pools are the segments of the ROC convex hull in coverage space (§5.2), so
    calibrating leaves a convex ROC curve and zero calibration loss on the fitting data.

    Transform: the step function of eq. 5.6 -- a score gets the probability of the pool
    with the largest lower threshold ``<= score``; scores below the lowest threshold get the
    first pool's (no interpolation). scikit-learn's ``IsotonicRegression`` (which also pools
    tied scores first) gives the same values at the fitted scores, but interpolates linearly
    between them.

    Only the order of the scores matters, so ``±inf`` scores are accepted in fit and
    transform: ``-inf`` sorts below and ``inf`` above every finite score, into the lowest
    and highest pools (NaN is rejected).

    Attributes (per label; plain arrays when fitted on 1-D scores, lists otherwise)
    ----------
    thresholds_ : lowest score of each pool, increasing
    values_ : probability of each pool, increasing
    counts_ : number of fitting examples in each pool
    """

    def _fit_one(self, s, y):
        m = s.size
        thr = np.empty(m)
        tp = np.empty(m, dtype=np.int64)
        fp = np.empty(m, dtype=np.int64)
        g = _roc_kernel.coverage_points(s, y, thr, tp, fp)  # tie groups, decreasing score
        # per-group counts, in increasing score order for the pooling
        pos = np.diff(tp[:g], prepend=0)[::-1].copy()
        cnt = np.diff(tp[:g] + fp[:g], prepend=0)[::-1].copy()
        thr = thr[:g][::-1].copy()
        k = _kernel.pav(thr, pos, cnt)
        return thr[:k].copy(), pos[:k] / cnt[:k], cnt[:k].copy()

    @staticmethod
    def _apply_one(m, s):
        thr, values, _ = m
        idx = np.searchsorted(thr, s, side="right") - 1
        return values[np.maximum(idx, 0)]

    thresholds_ = property(lambda self: self._per_label([m[0] for m in self._maps]))
    values_ = property(lambda self: self._per_label([m[1] for m in self._maps]))
    counts_ = property(lambda self: self._per_label([m[2] for m in self._maps]))


class Platt(_Calibrator):
    """Platt scaling: ``P(+|s) = 1 / (1 + exp(-A s + B))`` (matsubara2008 eq. 5.3).

    A and B minimise the cross-entropy ``-sum t_i log z_i + (1 - t_i) log(1 - z_i)`` with
    ``z_i`` the sigmoid of score ``s_i`` (eq. 5.4-5.5). The seed writes the targets as the
    labels ``y_i``; with ``smoothing=True`` (default) they are Platt's (1999, §2.2)
    regularised targets ``t+ = (N+ + 1) / (N+ + 2)`` for positives and ``t- = 1 / (N- + 2)``
    for negatives, which keep A finite on separable data (scikit-learn's sigmoid
    calibration uses the same targets, with ``a = -A``, ``b = B``). ``smoothing=False``
    uses ``t = y`` as printed. Minimised by Newton's method with backtracking line search
    (Lin, Lin & Weng 2007) from ``A = 0``, ``B = log((N- + 1) / (N+ + 1))``, at most
    ``max_iter`` (int >= 1) iterations, stopping when the gradient's largest entry is below
    ``tol * max(1, n)`` (``tol`` finite, > 0); both are checked in :meth:`fit`.

    Scores must be finite in fit and transform (a sigmoid of ``±inf`` scores has no
    maximum-likelihood fit and gives NaN for ``A = 0``): ValueError otherwise.

    Attributes: ``a_``, ``b_`` (floats for 1-D input, arrays (q,) otherwise).
    """

    def __init__(self, smoothing=True, max_iter=100, tol=1e-10):
        self.smoothing = smoothing
        self.max_iter = max_iter
        self.tol = tol

    def _check_params(self):
        it = self.max_iter
        if isinstance(it, bool) or not isinstance(it, numbers.Integral):
            raise TypeError(f"max_iter must be an int, got {it!r}")
        if it < 1:
            raise ValueError(f"max_iter must be >= 1, got {it}")
        tol = self.tol
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
            raise TypeError(f"tol must be a real number, got {tol!r}")
        if not (np.isfinite(tol) and tol > 0):
            raise ValueError(f"tol must be finite and > 0, got {tol}")

    @staticmethod
    def _check_finite(s):
        if not np.isfinite(s).all():
            raise ValueError("scores contains infinity; Platt scaling needs finite scores")

    def fit(self, scores, y):
        """As :meth:`Isotonic.fit`; also checks ``max_iter``, ``tol`` and that the scores
        are finite."""
        self._check_params()
        return super().fit(scores, y)

    def _fit_one(self, s, y):
        self._check_finite(s)
        s = s.astype(np.float64)
        n_pos = int(y.sum())
        n_neg = y.size - n_pos
        if self.smoothing:
            t = np.where(y == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
        else:
            t = y.astype(np.float64)

        def loss(a, b):
            z = a * s - b  # logit of P(+|s)
            # -t log sigmoid(z) - (1 - t) log(1 - sigmoid(z)), computed stably
            return float(np.sum((1.0 - t) * z + np.logaddexp(0.0, -z)))

        a, b = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
        f = loss(a, b)
        for _ in range(self.max_iter):
            p = 0.5 * (1.0 + np.tanh(0.5 * (a * s - b)))  # sigmoid, overflow-free
            d = p - t
            g = np.array([d @ s, -d.sum()])
            if np.abs(g).max() < self.tol * max(1.0, s.size):
                break
            w = p * (1.0 - p)
            h = np.array([[w @ (s * s), -(w @ s)], [-(w @ s), w.sum()]]) + 1e-12 * np.eye(2)
            step = np.linalg.solve(h, -g)
            lam = 1.0
            while lam > 1e-12:
                a_new, b_new = a + lam * step[0], b + lam * step[1]
                f_new = loss(a_new, b_new)
                if f_new <= f + 1e-4 * lam * (g @ step):
                    break
                lam *= 0.5
            else:
                break  # no decrease possible: at the minimum up to rounding
            a, b, f = a_new, b_new, f_new
        return a, b

    @staticmethod
    def _apply_one(m, s):
        Platt._check_finite(s)
        a, b = m
        return 0.5 * (1.0 + np.tanh(0.5 * (a * s - b)))

    a_ = property(lambda self: self._per_label(np.array([m[0] for m in self._maps])))
    b_ = property(lambda self: self._per_label(np.array([m[1] for m in self._maps])))


CALIBRATION_METHODS = ("isotonic", "platt")


def _make_calibrator(method):
    return Isotonic() if method == "isotonic" else Platt()


def _beliefs(estimator, X):
    F = estimator.decision_function(X)
    return F.toarray() if sp.issparse(F) else np.asarray(F)


class CalibratedClassifier(MultiLabelEstimator):
    """Calibrate a fastrank classifier's beliefs per label into probabilities.

    ``estimator`` is any classifier with ``fit(X, Y)`` and ``decision_function(X)`` (an
    (n, q) belief matrix) that ``sklearn.base.clone`` can copy (the instance passed in is
    not modified); its parameters are reachable as ``estimator__<name>`` (``GridSearchCV``).

    ``predict_proba`` is one (n_documents, n_labels) array, column ``c`` the calibrated
    probability that label ``c`` applies (scikit-learn's multi-label format of
    ``MLPClassifier``). ``score(X, Y)`` is the tie-aware average precision of those
    probabilities (see :meth:`fastrank._base.MultiLabelEstimator.score`).

    Parameters
    ----------
    estimator : classifier
    method : {"isotonic", "platt"}, default "isotonic"
    cv : int >= 2 or "holdout", default 5
        int k: out-of-fold beliefs from k-fold cross-validation (each fold scored by a copy
        trained on the other folds) fit the calibrators; the final classifier is then
        trained on all the data. "holdout": a copy is trained on a random
        ``1 - validation_size`` part and the calibrators fit on its beliefs for the rest;
        that copy is the final classifier.
    validation_size : float in (0, 1), default 0.25
        Held-out fraction for ``cv="holdout"``.
    random_state : None, int or numpy.random.Generator
        Shuffling of the folds / the split.

    Attributes: ``estimator_`` (the final classifier), ``calibrator_`` (an :class:`Isotonic`
    or :class:`Platt` fitted on all labels).
    """

    def __init__(self, estimator: Any, method: str = "isotonic", cv: int | str = 5,
                 validation_size: float = 0.25,
                 random_state: int | np.random.Generator | None = None) -> None:
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.validation_size = validation_size
        self.random_state = random_state

    def fit(self, X: Any, Y: Any) -> "CalibratedClassifier":
        """Fit the classifier and the per-label calibrators (see the class docstring)."""
        check_option("method", self.method, CALIBRATION_METHODS)
        X, Y = self._check_fit_input(X, Y)
        n = X.shape[0]
        order = check_random_state(self.random_state).permutation(n)
        if self.cv == "holdout":
            if not 0.0 < self.validation_size < 1.0:
                raise ValueError(f"validation_size must be in (0, 1), got {self.validation_size}")
            n_val = int(round(self.validation_size * n))
            if n_val < 1 or n_val >= n:
                raise ValueError(f"validation_size={self.validation_size} leaves an empty part "
                                 f"of {n} documents")
            val, train = order[:n_val], order[n_val:]
            self.estimator_ = clone(self.estimator).fit(X[train], Y[train])
            calib_scores, calib_y = _beliefs(self.estimator_, X[val]), Y[val]
        else:
            if isinstance(self.cv, bool) or not isinstance(self.cv, (int, np.integer)) \
                    or not 2 <= self.cv <= n:
                raise ValueError(f"cv must be 'holdout' or an int in [2, n_samples={n}], "
                                 f"got {self.cv!r}")
            calib_scores = np.empty(Y.shape)
            for fold in np.array_split(order, self.cv):
                rest = np.setdiff1d(order, fold, assume_unique=True)
                model = clone(self.estimator).fit(X[rest], Y[rest])
                calib_scores[fold] = _beliefs(model, X[fold])
            calib_y = Y
            self.estimator_ = clone(self.estimator).fit(X, Y)
        self.calibrator_ = _make_calibrator(self.method).fit(calib_scores, calib_y)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probability of every label, shape (n, q)."""
        X = self._check_predict_input(X)
        return self.calibrator_.transform(_beliefs(self.estimator_, X))

    decision_function = predict_proba

    def predict(self, X: Any) -> np.ndarray:
        """0/1 labels: calibrated probability >= 0.5."""
        return (self.predict_proba(X) >= 0.5).astype(np.uint8)

    def save(self, path: Any) -> None:
        """Not supported: the wrapped estimator is arbitrary (the .npz format holds no
        objects). Refit from the data, or save the parts yourself."""
        raise TypeError("CalibratedClassifier cannot be saved to .npz (it wraps an arbitrary "
                        "estimator)")


# ---- probability scores ------------------------------------------------------------------

def brier_score(y_true, y_prob):
    """Brier score (matsubara2008 eq. 5.1): mean of ``(P(x_i) - y_i)^2``.

    1-D input: one binary problem (equals ``sklearn.metrics.brier_score_loss``). (n, q)
    input: the mean over all entries, i.e. the mean of the per-label scores.
    """
    prob, y, _ = _check_probabilities(y_true, y_prob)
    return float(np.mean((prob - y) ** 2))


@dataclass(frozen=True)
class BrierDecomposition:
    """``calibration_loss + refinement_loss == brier_score`` (Theorem 5.1)."""

    calibration_loss: float
    refinement_loss: float

    def __iter__(self):
        return iter((self.calibration_loss, self.refinement_loss))


def brier_decomposition(y_true, y_prob):
    """Brier score split over the ROC segments (matsubara2008 Theorem 5.1).

    The segments are the tie groups of ``y_prob``: segment k holds ``n_k`` examples, of
    which a fraction ``p_k`` is positive, all predicted ``P_k``. Then
    ``BS = 1/n sum_k n_k (P_k - p_k)^2 + 1/n sum_k n_k p_k (1 - p_k)``:
    calibration loss plus refinement loss. Refinement is 0 iff every segment is pure; the
    calibration loss is 0 after isotonic calibration on the same data.

    1-D input: one binary problem. (n, q) input: per label, then the mean over labels (so
    the two parts still add up to :func:`brier_score`). Returns a
    :class:`BrierDecomposition` (unpacks as ``(calibration_loss, refinement_loss)``).
    """
    prob, y, _ = _check_probabilities(y_true, y_prob)
    cal = ref = 0.0
    for j in range(prob.shape[1]):
        values, seg = np.unique(prob[:, j], return_inverse=True)
        n_k = np.bincount(seg, minlength=values.size)
        p_k = np.bincount(seg, weights=y[:, j], minlength=values.size) / n_k
        cal += float(np.sum(n_k * (values - p_k) ** 2))
        ref += float(np.sum(n_k * p_k * (1.0 - p_k)))
    n_entries = prob.size
    return BrierDecomposition(cal / n_entries, ref / n_entries)


def log_loss(y_true, y_prob, eps="auto"):
    """Cross-entropy (matsubara2008 eq. 5.2, averaged): mean of
    ``-(y log P + (1 - y) log(1 - P))`` over the examples (the seed prints the second
    logarithm as ``log P``; it is ``log(1 - P)``).

    Probabilities are clipped to ``[eps, 1 - eps]``; ``eps="auto"`` is the machine epsilon
    of float64, as scikit-learn. 1-D input equals ``sklearn.metrics.log_loss``; (n, q)
    input is the mean over all entries (each label a binary problem), which differs from
    scikit-learn's multi-class reading of a matrix.

    ``eps`` must be ``"auto"`` or a real number with ``0 < eps < 0.5`` (ValueError
    otherwise; TypeError for a non-number).
    """
    if isinstance(eps, str):
        if eps != "auto":
            raise ValueError(f"eps must be 'auto' or a number in (0, 0.5), got {eps!r}")
        eps = np.finfo(np.float64).eps
    elif isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be 'auto' or a number in (0, 0.5), got {eps!r}")
    elif not 0.0 < eps < 0.5:
        raise ValueError(f"eps must be in (0, 0.5), got {eps}")
    eps = float(eps)
    prob, y, _ = _check_probabilities(y_true, y_prob)
    prob = np.clip(prob, eps, 1.0 - eps)
    return float(-np.mean(y * np.log(prob) + (1.0 - y) * np.log1p(-prob)))


def _check_probabilities(y_true, y_prob):
    if y_true is None:
        raise TypeError("y_true is required: a 0/1 array of the shape of y_prob")
    prob, y, one_d = _check_pair(y_prob, y_true, name="y_prob")
    if prob.min() < 0.0 or prob.max() > 1.0:
        raise ValueError(f"y_prob must be probabilities in [0, 1]; found range "
                         f"[{prob.min()}, {prob.max()}]")
    return prob.astype(np.float64, copy=False), y.astype(np.float64), one_d
