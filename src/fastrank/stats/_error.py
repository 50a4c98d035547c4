"""Estimating a single-label classifier's error (Monard & Baranauskas 2003, §4.4-4.6):
confusion matrix, cost-weighted error, majority error, mean and standard error over folds,
and the rule comparing two algorithms.
"""
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._validation import as_real_array


#: The most classes :func:`confusion_matrix` and :func:`cost_error` take (a 128 MiB matrix).
MAX_CLASSES = 4096


def _labels_and_codes(y_true, y_pred, labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim != 1 or y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError(f"y_true and y_pred must be non-empty 1-D arrays of the same length, "
                         f"got shapes {y_true.shape} and {y_pred.shape}")
    labels = np.unique(np.concatenate([y_true, y_pred])) if labels is None \
        else np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D list, got shape {labels.shape}")
    k = labels.size
    if k > MAX_CLASSES:
        raise ValueError(f"{k} classes would make a {k} x {k} confusion matrix "
                         f"({k * k * 8 / 2**30:.1f} GiB); at most {MAX_CLASSES} classes are "
                         "supported (y_true and y_pred must be class labels, not scores)")
    index = {lab: i for i, lab in enumerate(labels.tolist())}
    if len(index) != labels.size:
        seen = set()
        repeated = [v for v in labels.tolist()
                    if v in seen or seen.add(v)]  # type: ignore[func-returns-value]
        raise ValueError(f"labels must be distinct; repeated: {repeated[:5]}")
    try:
        t = np.array([index[v] for v in y_true.tolist()])
        p = np.array([index[v] for v in y_pred.tolist()])
    except KeyError as exc:
        raise ValueError(f"class {exc.args[0]!r} is not in labels") from None
    return labels, t, p


def confusion_matrix(y_true: npt.ArrayLike, y_pred: npt.ArrayLike,
                     labels: npt.ArrayLike | None = None) -> np.ndarray:
    """Confusion matrix: ``M[i, j]`` examples of true class ``labels[i]`` predicted as
    ``labels[j]`` (rows = true class).

    Monard & Baranauskas (2003) eq. 4.7. Equals ``sklearn.metrics.confusion_matrix``.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n,)
        True and predicted classes (any hashable values).
    labels : array-like, optional
        The classes, in the matrix's order; default the sorted union of both arrays.

    Returns
    -------
    ndarray of int64, shape (n_classes, n_classes)

    Raises
    ------
    ValueError
        Empty or not 1-D inputs of different lengths, repeated ``labels``, a class missing
        from them, more than :data:`MAX_CLASSES` (4096) classes.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> from fastrank.stats import confusion_matrix
    >>> confusion_matrix(["a", "b", "a", "c"], ["a", "a", "a", "c"])
    array([[2, 0, 0],
           [1, 0, 0],
           [0, 0, 1]])
    """
    labels, t, p = _labels_and_codes(y_true, y_pred, labels)
    k = labels.size
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k)


def _check_cost(cost, k) -> np.ndarray:
    cost = as_real_array(cost, "cost")
    if cost.shape != (k, k):
        raise ValueError(f"cost must be a ({k}, {k}) matrix for {k} classes, got {cost.shape}")
    if not np.isfinite(cost).all():
        raise ValueError("cost contains NaN or infinity; costs must be finite")
    if np.any(np.diag(cost) != 0) or np.any(cost < 0):
        raise ValueError("cost must have a zero diagonal (a correct prediction costs nothing) "
                         "and non-negative entries")
    return cost


def cost_error(y_true: npt.ArrayLike, y_pred: npt.ArrayLike, cost: npt.ArrayLike,
               labels: npt.ArrayLike | None = None) -> float:
    """Cost-sensitive error ``1/n sum_i [y_i != h(x_i)] cost(y_i, h(x_i))``.

    Monard & Baranauskas (2003) eq. 4.15. Equals :func:`confusion_cost_error` of the
    confusion matrix (eq. 4.16).

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n,)
        True and predicted classes.
    cost : array-like, shape (n_classes, n_classes)
        ``cost[i, j]`` is the cost of predicting ``labels[j]`` for true class
        ``labels[i]``: finite, non-negative, zero diagonal.
    labels : array-like, optional
        The classes, as for :func:`confusion_matrix`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Invalid classes (see :func:`confusion_matrix`) or ``cost``.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> from fastrank.stats import cost_error
    >>> cost_error([0, 1, 1, 0], [0, 0, 1, 1], cost=[[0, 1], [5, 0]])   # (5 + 1) / 4
    1.5
    """
    labels, t, p = _labels_and_codes(y_true, y_pred, labels)
    cost = _check_cost(cost, labels.size)
    return float(np.mean((t != p) * cost[t, p]))


def confusion_cost_error(confusion: npt.ArrayLike, cost: npt.ArrayLike) -> float:
    """Cost-sensitive error from a confusion matrix: ``1/n sum_ij M(C_i, C_j) cost(C_i,
    C_j)`` with n the total count (Monard & Baranauskas 2003 eq. 4.16).

    Parameters
    ----------
    confusion : array-like, shape (n_classes, n_classes)
        Counts, rows = true class (non-negative, positive total).
    cost : array-like, shape (n_classes, n_classes)
        As for :func:`cost_error`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A confusion matrix that is not square, has negative or non-finite counts or a zero
        total; an invalid ``cost``.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> from fastrank.stats import confusion_cost_error
    >>> confusion_cost_error([[1, 1], [1, 1]], [[0, 1], [5, 0]])
    1.5
    """
    m = as_real_array(confusion, "confusion")
    if not np.isfinite(m).all():
        raise ValueError("confusion contains NaN or infinity; counts must be finite")
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.sum() <= 0 or (m < 0).any():
        raise ValueError(f"confusion must be a square matrix of non-negative counts with a "
                         f"positive total, got shape {m.shape}")
    cost = _check_cost(cost, m.shape[0])
    return float(np.sum(m * cost) / m.sum())


def majority_error(y: npt.ArrayLike) -> float:
    """Majority-class error ``1 - max_j distr(C_j)``: the error of always predicting the
    most frequent class (Monard & Baranauskas 2003 eq. 4.6).

    Parameters
    ----------
    y : array-like, shape (n,)
        Classes.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``y`` empty or not 1-D.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.4.

    Examples
    --------
    >>> from fastrank.stats import majority_error
    >>> majority_error([0, 0, 1, 2])
    0.5
    """
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y must be a non-empty 1-D array of classes, got shape {y.shape}")
    _, counts = np.unique(y, return_counts=True)
    return float(1.0 - counts.max() / y.size)


def mean_se(values: npt.ArrayLike) -> tuple[float, float]:
    """Mean and standard error over r folds (Monard & Baranauskas 2003 eq. 4.17-4.19).

    ``mean = 1/r sum e_i``, ``sd = sqrt(1/r * 1/(r-1) sum (e_i - mean)^2)`` -- the
    chapter's "sd" is the standard error of the mean.

    Parameters
    ----------
    values : array-like, shape (r,)
        One error per fold, r >= 2, finite.

    Returns
    -------
    mean, sd : float

    Raises
    ------
    ValueError
        Fewer than 2 values, not 1-D, or non-finite.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.6.1.

    Examples
    --------
    >>> from fastrank.stats import mean_se
    >>> mean, sd = mean_se([.1, .12, .08, .1])
    >>> round(mean, 4), round(sd, 4)
    (0.1, 0.0082)
    """
    v = as_real_array(values, "values")
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"values must be 1-D with at least 2 folds, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("values contains NaN or infinity; fold errors must be finite")
    # on the values times the power of two that brings the largest magnitude into [0.5, 1),
    # scaled back: the same bits, and no sum or square overflows
    shift = int(np.frexp(np.abs(v).max())[1])
    s = np.ldexp(v, -shift)
    return float(np.ldexp(s.mean(), shift)), \
        float(np.ldexp(np.sqrt(s.var(ddof=1) / s.size), shift))


@dataclass(frozen=True)
class TwoAlgorithmComparison:
    """Result of :func:`compare_two`.

    Attributes
    ----------
    difference : float
        ``mean_S - mean_P`` (eq. 4.20).
    sd : float
        ``sqrt((sd_S^2 + sd_P^2) / 2)`` (eq. 4.21).
    ad : float
        ``difference / sd`` (eq. 4.22).
    winner : {"proposed", "standard"}
        "proposed" if ad > 0, else "standard".
    significant : bool
        ``|ad| >= 2`` (95% confidence).
    """

    difference: float
    sd: float
    ad: float
    winner: str
    significant: bool


def compare_two(mean_standard: float, sd_standard: float, mean_proposed: float,
                sd_proposed: float) -> TwoAlgorithmComparison:
    """The chapter's rule for two algorithms' errors (ml-concepts §4.6.2, eq. 4.20-4.22).

    With means and sds (as from :func:`mean_se`) of the *errors* (lower is better) of a
    standard algorithm S and a proposed algorithm P: ``ad = (mean_S - mean_P) /
    sqrt((sd_S^2 + sd_P^2) / 2)``. ad > 0: P beats S; ad <= 0: S beats P; ``|ad| >= 2``: with
    95% confidence. Both sds zero: ad = ±inf for a nonzero difference, 0 otherwise.

    Parameters
    ----------
    mean_standard, sd_standard : float
        Mean error and its sd of the standard algorithm S.
    mean_proposed, sd_proposed : float
        The same of the proposed algorithm P.

    Returns
    -------
    TwoAlgorithmComparison

    Raises
    ------
    ValueError
        A NaN or infinite mean or sd, a negative sd.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.6.2.

    Examples
    --------
    The chapter's example, errors 9 ± 1 against 7.50 ± 0.80:

    >>> from fastrank.stats import compare_two
    >>> r = compare_two(9, 1, 7.5, 0.8)
    >>> round(r.ad, 2), r.winner, r.significant
    (1.66, 'proposed', False)
    """
    args = {"mean_standard": mean_standard, "sd_standard": sd_standard,
            "mean_proposed": mean_proposed, "sd_proposed": sd_proposed}
    for name, value in args.items():
        if not np.isfinite(float(value)):
            raise ValueError(f"{name} contains NaN or infinity ({value}); must be finite")
    if sd_standard < 0 or sd_proposed < 0:
        raise ValueError("standard deviations must be non-negative")
    diff = float(mean_standard) - float(mean_proposed)
    sd = float(np.sqrt((float(sd_standard) ** 2 + float(sd_proposed) ** 2) / 2.0))
    ad = diff / sd if sd > 0 else (float(np.copysign(np.inf, diff)) if diff else 0.0)
    return TwoAlgorithmComparison(diff, sd, ad, "proposed" if ad > 0 else "standard",
                                  bool(abs(ad) >= 2.0))
