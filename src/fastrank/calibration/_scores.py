"""Scores of probabilities: the Brier score (matsubara2008 eq. 5.1), its decomposition
(Theorem 5.1) and the log loss (eq. 5.2)."""
import numbers
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._typing import MatrixLike
from ._calibrators import _check_pair


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
