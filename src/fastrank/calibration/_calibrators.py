"""The calibrators: isotonic regression (:class:`Isotonic`) and the sigmoid of Platt
(:class:`Platt`), each fitting one map per label (matsubara2008 ch. 5)."""
import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._base import NotFittedError
from .._ext import isotonic as _kernel
from .._ext import roc as _roc_kernel
from .._typing import LabelsLike, MatrixLike
from .._validation import check_csr, check_same_shape, check_scores, check_truth


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
    ``tol * max(1, n)`` (``tol`` finite, > 0); both are checked in :meth:`fit`. The fit runs
    on the scores scaled by the power of two that brings the largest magnitude into
    [0.5, 1), exactly, so scores scaled by a power of two give the same ``B`` and
    probabilities (and ``A`` scaled inversely): the tolerance does not depend on the
    scores' unit.

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
        # fitted on the scores times the power of two that brings their largest magnitude
        # into [0.5, 1) (exact), A scaled back: scores on any scale give the same fit
        shift = int(np.frexp(np.abs(s).max())[1]) if s.size else 0
        s = np.ldexp(s.astype(np.float64), -shift)
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
        with np.errstate(over="ignore"):  # refused below
            a = float(np.ldexp(a, -shift))
        if not np.isfinite(a):  # scores near the subnormals: 1 / their scale overflows
            raise ValueError(f"scores of largest magnitude {np.ldexp(1.0, shift - 1):g} are "
                             "too small for a finite A; scale them up")
        return a, b

    @staticmethod
    def _apply_one(m, s):
        Platt._check_finite(s)
        a, b = m
        return 0.5 * (1.0 + np.tanh(0.5 * (a * s - b)))

    a_ = property(lambda self: self._per_label(np.array([m[0] for m in self._maps])))
    b_ = property(lambda self: self._per_label(np.array([m[1] for m in self._maps])))
