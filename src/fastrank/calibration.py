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
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from sklearn.base import clone

from ._base import MultiLabelEstimator, NotFittedError
from ._ext import isotonic as _kernel
from ._ext import roc as _roc_kernel
from ._typing import LabelsLike, MatrixLike, PathLikeStr, RandomStateLike
from ._validation import check_csr, check_option, check_random_state, check_same_shape, \
    check_scores, check_truth


def _check_pair(scores, y=None, name="scores", y_name="y"):
    """(scores, y, was_1d): scores as a float 2-D ndarray, y as uint8 of the same shape;
    errors name the arguments ``name`` and ``y_name``."""
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
        raise ValueError(f"{name} is {1 if one_d else 2}-D but {y_name} is {np.ndim(y)}-D")
    y = check_truth(y.reshape(-1, 1) if one_d else y, name=y_name)
    check_same_shape(y.shape, scores.shape, y_name, name)
    return scores, y, one_d


class _Calibrator:
    """fit/transform over the labels (columns); subclasses fit and apply one label's map."""

    _maps: list[Any]
    _one_d: bool
    _fit_one: Any    # (scores, y) of one label -> its map
    _apply_one: Any  # (map, scores) -> probabilities

    def fit(self, scores: MatrixLike, y: LabelsLike) -> Any:
        """Fit one map per label (column) from beliefs and their truth.

        Parameters
        ----------
        scores : array-like, shape (n,) or (n, q), or sparse matrix (n, q)
            Beliefs (sparse input is densified).
        y : 0/1 array-like of the same shape
            The truth.

        Returns
        -------
        self
            The fitted calibrator.

        Raises
        ------
        ValueError
            Shapes that differ, non-binary ``y``, NaN scores (Platt: any non-finite score,
            or an invalid ``max_iter`` or ``tol``).
        """
        scores, y, one_d = _check_pair(scores, y)
        self._one_d = one_d
        self.n_labels_ = scores.shape[1]
        self._maps = [self._fit_one(np.ascontiguousarray(scores[:, j]),
                                    np.ascontiguousarray(y[:, j]))
                      for j in range(scores.shape[1])]
        return self

    def transform(self, scores: MatrixLike) -> np.ndarray:
        """Calibrated probabilities of beliefs.

        Parameters
        ----------
        scores : array-like, shape (n,) or (n, q), or sparse matrix (n, q)
            Beliefs, 1-D or with as many labels as in :meth:`fit`.

        Returns
        -------
        ndarray of float64, same shape as ``scores``

        Raises
        ------
        NotFittedError
            The calibrator is not fitted.
        ValueError
            A shape other than in fit, NaN scores (Platt: any non-finite score).
        """
        if not hasattr(self, "_maps"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        scores, _, one_d = _check_pair(scores)
        if one_d != self._one_d or scores.shape[1] != self.n_labels_:
            expected = "1-D" if self._one_d else f"2-D with {self.n_labels_} labels"
            raise ValueError(f"scores must be {expected} as in fit")
        out = np.column_stack([self._apply_one(m, scores[:, j]) for j, m in enumerate(self._maps)])
        return out.ravel() if one_d else out

    def fit_transform(self, scores: MatrixLike, y: LabelsLike) -> np.ndarray:
        """:meth:`fit`, then :meth:`transform` of the same scores."""
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

    Attributes
    ----------
    thresholds_ : ndarray, or list of ndarray (one per label) for 2-D input
        Lowest score of each pool, increasing.
    values_ : ndarray, or list of ndarray
        Probability of each pool, increasing.
    counts_ : ndarray, or list of ndarray
        Number of fitting examples in each pool.
    n_labels_ : int
        Number of labels (1 for 1-D input).

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §5.1.2, §5.2.
    .. [2] B. Zadrozny and C. Elkan, "Transforming classifier scores into accurate
       multiclass probability estimates", KDD 2002.

    Examples
    --------
    >>> from fastrank.calibration import Isotonic
    >>> s = [.1, .2, .3, .3, .4, .6, .7, .8]
    >>> y = [0, 0, 1, 0, 0, 1, 0, 1]
    >>> iso = Isotonic().fit(s, y)        # the tied .3 scores form one pool
    >>> print(iso.thresholds_, iso.values_.round(4), iso.counts_)
    [0.1 0.3 0.6 0.8] [0.     0.3333 0.5    1.    ] [2 3 2 1]
    >>> iso.transform([.05, .35, .75, .9]).round(4)
    array([0.    , 0.3333, 0.5   , 1.    ])
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

    Parameters
    ----------
    smoothing : bool, default True
        Platt's regularised targets instead of the 0/1 labels.
    max_iter : int, default 100
        Most Newton iterations (>= 1).
    tol : float, default 1e-10
        Stopping tolerance on the gradient (finite, > 0).

    Attributes
    ----------
    a_, b_ : float, or ndarray of shape (q,) for 2-D input
        The fitted ``A`` and ``B``.
    n_labels_ : int
        Number of labels (1 for 1-D input).

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §5.1.1, eq. 5.3-5.5.
    .. [2] J. Platt, "Probabilistic outputs for support vector machines and comparisons to
       regularized likelihood methods", in *Advances in Large Margin Classifiers*, MIT
       Press, 1999.
    .. [3] H.-T. Lin, C.-J. Lin and R. C. Weng, "A note on Platt's probabilistic outputs for
       support vector machines", Machine Learning 68(3), 2007.

    Examples
    --------
    >>> from fastrank.calibration import Platt
    >>> s = [.1, .2, .3, .3, .4, .6, .7, .8]
    >>> y = [0, 0, 1, 0, 0, 1, 0, 1]
    >>> platt = Platt().fit(s, y)
    >>> print(platt.a_.round(4), platt.b_.round(4))
    2.8073 1.6846
    >>> platt.transform([.1, .5, .9]).round(4)
    array([0.1972, 0.4302, 0.6989])
    """

    def __init__(self, smoothing: bool = True, max_iter: int = 100, tol: float = 1e-10) -> None:
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

    def fit(self, scores: MatrixLike, y: LabelsLike) -> "Platt":
        """Fit ``A`` and ``B`` per label (column) from beliefs and their truth.

        Parameters
        ----------
        scores : array-like, shape (n,) or (n, q), or sparse matrix (n, q)
            Finite beliefs (sparse input is densified).
        y : 0/1 array-like of the same shape
            The truth.

        Returns
        -------
        Platt
            The fitted calibrator.

        Raises
        ------
        ValueError
            Non-finite scores, shapes that differ, non-binary ``y``, ``max_iter`` < 1, a
            ``tol`` not finite and > 0.
        TypeError
            A non-integer ``max_iter`` or non-real ``tol``.
        """
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


#: The ``method`` options of :class:`CalibratedClassifier`.
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
        The classifier whose beliefs are calibrated (e.g. :class:`fastrank.KNN`).
    method : {"isotonic", "platt"}, default "isotonic"
        :class:`Isotonic` or :class:`Platt`, one per label.
    cv : int >= 2 or "holdout", default 5
        int k: out-of-fold beliefs from k-fold cross-validation (each fold scored by a copy
        trained on the other folds) fit the calibrators; the final classifier is then
        trained on all the data. "holdout": a copy is trained on a random
        ``1 - validation_size`` part and the calibrators fit on its beliefs for the rest;
        that copy is the final classifier.
    validation_size : float in (0, 1), default 0.25
        Held-out fraction for ``cv="holdout"``.
    random_state : None, int or numpy.random.Generator, default None
        Shuffling of the folds / the split.

    Attributes
    ----------
    estimator_ : classifier
        The final classifier.
    calibrator_ : Isotonic or Platt
        The calibrators, fitted on all labels.
    classes_, n_features_in_, feature_names_in_
        As for :class:`fastrank.KNN`.

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, ch. 5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import KNN, datasets
    >>> from fastrank.calibration import CalibratedClassifier, brier_score
    >>> data = datasets.load("yeast")
    >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
    >>> knn = KNN(k=10)
    >>> calibrated = CalibratedClassifier(knn, cv=3, random_state=0).fit(train.X, train.Y)
    >>> round(brier_score(test.Y, calibrated.predict_proba(test.X)), 4)
    0.1495
    >>> round(brier_score(test.Y, knn.fit(train.X, train.Y).decision_function(test.X)), 4)
    0.1953
    """

    def __init__(self, estimator: Any, method: Literal["isotonic", "platt"] = "isotonic",
                 cv: int | Literal["holdout"] = 5, validation_size: float = 0.25,
                 random_state: RandomStateLike = None) -> None:
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.validation_size = validation_size
        self.random_state = random_state

    def fit(self, X: MatrixLike, Y: LabelsLike) -> "CalibratedClassifier":
        """Fit the classifier and the per-label calibrators (see the class docstring).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Training documents.
        Y : 0/1 array (dense or sparse) of shape (n_documents, n_labels), or label sets
            Their labels.

        Returns
        -------
        CalibratedClassifier
            The fitted model.

        Raises
        ------
        ValueError
            An unknown ``method``, a ``cv`` that is not "holdout" or an int in
            [2, n_documents], a ``validation_size`` outside (0, 1) or leaving an empty part,
            invalid ``X`` or ``Y``.
        """
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

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Calibrated probability of every label (also :meth:`decision_function`).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray of float64, shape (n_documents, n_labels)

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            Invalid ``X``.
        """
        X = self._check_predict_input(X)
        return self.calibrator_.transform(_beliefs(self.estimator_, X))

    decision_function = predict_proba

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Predicted label sets: the labels of calibrated probability >= 0.5.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray, shape (n_documents, n_labels)
            Of the training target's dtype (uint8 when it was label sets).

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            Invalid ``X``.
        """
        return self._as_target_dtype(self.predict_proba(X) >= 0.5)

    def save(self, path: PathLikeStr) -> None:
        """Not supported: the wrapped estimator is arbitrary (any scikit-learn classifier),
        which a pickle-free model file cannot hold. Refit from the data, or save the fitted
        ``estimator_`` (a fastrank classifier) and refit the calibrator on its beliefs.

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError("CalibratedClassifier cannot be saved to a model file (it wraps an "
                        "arbitrary estimator, which a pickle-free file cannot hold); save its "
                        "estimator_ instead")

    @classmethod
    def load(cls, path: PathLikeStr) -> "CalibratedClassifier":
        """Not supported (see :meth:`save`).

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError("CalibratedClassifier cannot be loaded from a model file (it is never "
                        "saved to one); load its estimator_'s class instead")


# ---- probability scores ------------------------------------------------------------------

def brier_score(y_true: npt.ArrayLike, y_prob: MatrixLike) -> float:
    """Brier score: mean of ``(P(x_i) - y_i)^2`` (Matsubara 2008 eq. 5.1). Lower is better.

    Parameters
    ----------
    y_true : 0/1 array-like, shape (n,) or (n, q)
        The truth.
    y_prob : array-like of the same shape
        Probabilities in [0, 1].

    Returns
    -------
    float
        1-D input: the score of one binary problem (equals
        ``sklearn.metrics.brier_score_loss``). (n, q) input: the mean over all entries,
        i.e. the mean of the per-label scores.

    Raises
    ------
    ValueError
        Shapes that differ, non-binary ``y_true``, probabilities outside [0, 1] or NaN.
    TypeError
        ``y_true`` is None.

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §5.1.

    Examples
    --------
    >>> from fastrank.calibration import brier_score
    >>> brier_score([0, 1, 1], [0.5, 0.5, 1.0])
    0.16666666666666666
    """
    prob, y, _ = _check_probabilities(y_true, y_prob)
    return float(np.mean((prob - y) ** 2))


@dataclass(frozen=True)
class BrierDecomposition:
    """The two parts of the Brier score: ``calibration_loss + refinement_loss == brier_score``
    (Matsubara 2008 Theorem 5.1); unpacks as ``(calibration_loss, refinement_loss)``.

    Attributes
    ----------
    calibration_loss : float
        ``1/n sum_k n_k (P_k - p_k)^2``.
    refinement_loss : float
        ``1/n sum_k n_k p_k (1 - p_k)``.
    """

    calibration_loss: float
    refinement_loss: float

    def __iter__(self) -> Any:
        return iter((self.calibration_loss, self.refinement_loss))


def brier_decomposition(y_true: npt.ArrayLike, y_prob: MatrixLike) -> BrierDecomposition:
    """Brier score split over the ROC segments into calibration and refinement loss.

    Matsubara (2008) Theorem 5.1.

    The segments are the tie groups of ``y_prob``: segment k holds ``n_k`` examples, of
    which a fraction ``p_k`` is positive, all predicted ``P_k``. Then
    ``BS = 1/n sum_k n_k (P_k - p_k)^2 + 1/n sum_k n_k p_k (1 - p_k)``:
    calibration loss plus refinement loss. Refinement is 0 iff every segment is pure; the
    calibration loss is 0 after isotonic calibration on the same data.

    1-D input: one binary problem. (n, q) input: per label, then the mean over labels (so
    the two parts still add up to :func:`brier_score`).

    Parameters
    ----------
    y_true : 0/1 array-like, shape (n,) or (n, q)
        The truth.
    y_prob : array-like of the same shape
        Probabilities in [0, 1].

    Returns
    -------
    BrierDecomposition
        Unpacks as ``(calibration_loss, refinement_loss)``.

    Raises
    ------
    ValueError
        As for :func:`brier_score`.
    TypeError
        ``y_true`` is None.

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §5.2, Theorem 5.1.

    Examples
    --------
    >>> from fastrank.calibration import brier_decomposition
    >>> y = [0, 0, 1, 0, 0, 1, 0, 1]
    >>> p = [.1, .2, .3, .3, .4, .6, .7, .8]
    >>> calibration, refinement = brier_decomposition(y, p)
    >>> round(calibration, 4), round(refinement, 4)
    (0.1225, 0.0625)
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


def log_loss(y_true: npt.ArrayLike, y_prob: MatrixLike,
             eps: float | Literal["auto"] = "auto") -> float:
    """Cross-entropy: mean of ``-(y log P + (1 - y) log(1 - P))`` over the examples.

    Matsubara (2008) eq. 5.2, averaged (the thesis prints the second logarithm as
    ``log P``; it is ``log(1 - P)``). Lower is better.

    Probabilities are clipped to ``[eps, 1 - eps]``; ``eps="auto"`` is the machine epsilon
    of float64, as scikit-learn. 1-D input equals ``sklearn.metrics.log_loss``; (n, q)
    input is the mean over all entries (each label a binary problem), which differs from
    scikit-learn's multi-class reading of a matrix.

    Parameters
    ----------
    y_true : 0/1 array-like, shape (n,) or (n, q)
        The truth.
    y_prob : array-like of the same shape
        Probabilities in [0, 1].
    eps : float or "auto", default "auto"
        Clipping bound, ``0 < eps < 0.5``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        An ``eps`` out of range, or invalid input as for :func:`brier_score`.
    TypeError
        A non-number ``eps``, ``y_true`` None.

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §5.1, eq. 5.2.

    Examples
    --------
    >>> from fastrank.calibration import log_loss
    >>> round(log_loss([0, 1, 1], [0.5, 0.5, 1.0]), 4)   # 2 log(2) / 3
    0.4621
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
    prob, y, one_d = _check_pair(y_prob, y_true, name="y_prob", y_name="y_true")
    if prob.min() < 0.0 or prob.max() > 1.0:
        raise ValueError(f"y_prob must be probabilities in [0, 1]; found range "
                         f"[{prob.min()}, {prob.max()}]")
    return prob.astype(np.float64, copy=False), y.astype(np.float64), one_d
