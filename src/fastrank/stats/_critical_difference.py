"""Critical differences of average ranks: the groups of treatments they join, and the
diagram of Demšar (2006).
"""
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import as_real_array


def _check_mean_ranks(mean_ranks):
    r = as_real_array(mean_ranks, "mean_ranks")
    if r.ndim != 1 or not np.isfinite(r).all():
        raise ValueError(f"mean_ranks must be a 1-D array of finite numbers, got shape "
                         f"{r.shape}")
    return r


def _check_cd(cd):
    if isinstance(cd, bool) or not isinstance(cd, (numbers.Real, np.floating, np.integer)) \
            or not np.isfinite(cd) or cd < 0:
        raise ValueError(f"cd must be a finite number >= 0, got {cd!r}")
    return float(cd)


def critical_difference_groups(mean_ranks: npt.ArrayLike, cd: float) -> list[np.ndarray]:
    """Maximal groups of classifiers whose mean ranks all lie within ``cd`` of each other.

    Classifiers not significantly different: the thick bars of a CD diagram.

    Parameters
    ----------
    mean_ranks : array-like, shape (k,)
        Mean rank of each classifier (e.g. ``FriedmanResult.mean_ranks``).
    cd : float
        The critical difference (e.g. ``FriedmanResult.cd_nemenyi``).

    Returns
    -------
    list of ndarray of int
        Classifier indices of each group, sorted by mean rank; groups ordered by their best
        rank; single classifiers are not listed.

    Raises
    ------
    ValueError
        ``mean_ranks`` not 1-D and finite, ``cd`` not a finite number >= 0.
    TypeError
        Non-real values.

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006.

    Examples
    --------
    >>> from fastrank.stats import critical_difference_groups
    >>> critical_difference_groups([1.2, 1.9, 3.4, 3.5], cd=1.0)
    [array([0, 1]), array([2, 3])]
    """
    r = _check_mean_ranks(mean_ranks)
    cd = _check_cd(cd)
    order = np.argsort(r, kind="stable")
    s = r[order]
    # end[i]: the last position j with s[j] - s[i] <= cd (as computed, so the comparison
    # of two ranks never depends on how the search rounds s[i] + cd): a binary search,
    # then steps over whole runs of equal ranks until that exact test is met
    end = np.searchsorted(s, s + cd, side="right") - 1
    while True:
        up = end + 1 < s.size
        up[up] = s[end[up] + 1] - s[up] <= cd
        if not up.any():
            break
        end[up] = np.searchsorted(s, s[end[up] + 1], side="right") - 1
    while True:
        down = s[end] - s > cd
        if not down.any():
            break
        end[down] = np.searchsorted(s, s[end[down]], side="left") - 1
    # a group starts at i when it reaches past i and past the previous group's end
    # (O(k log k); each group is a view of one sorted index array)
    starts = np.flatnonzero((end > np.arange(s.size)) & (end > np.r_[-1, end[:-1]]))
    return [order[i:end[i] + 1] for i in starts]


def critical_difference_diagram(mean_ranks: npt.ArrayLike, names: Sequence[str], cd: float,
                                ax: Any = None) -> Any:
    """Draw a critical-difference diagram (Demšar 2006; matsubara2008 Fig. 5.6).

    The axis holds the mean ranks (1 = best, on the left); each classifier is labelled,
    the CD is drawn as a bar, and classifiers not significantly different are joined by
    thick lines (:func:`critical_difference_groups`). Needs matplotlib (the ``report``
    extra).

    Parameters
    ----------
    mean_ranks : array-like, shape (k,)
        Mean rank of each classifier.
    names : sequence of str, length k
        Their names.
    cd : float
        The critical difference.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        Invalid ``mean_ranks`` or ``cd`` (see :func:`critical_difference_groups`), or not
        one name per mean rank.
    ImportError
        matplotlib is not installed.

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006.
    .. [2] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, Fig. 5.6.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from fastrank.stats import critical_difference_diagram
    >>> ax = critical_difference_diagram([1.25, 2.0, 2.75], ["kNN", "ML-kNN", "VG-RAM"], 1.66)
    >>> print(*ax.get_xlim())
    0.5 3.5
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("critical_difference_diagram needs matplotlib: "
                          "pip install fastrank-mlc[report]") from None
    r = _check_mean_ranks(mean_ranks)
    cd = _check_cd(cd)
    if len(names) != r.size:
        raise ValueError(f"{len(names)} names for {r.size} mean ranks")
    k = r.size
    order = np.argsort(r, kind="stable")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 1.2 + 0.3 * k))
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-(k // 2 + 2), 2)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black")
    for tick in range(1, k + 1):
        ax.vlines(tick, 0, 0.15, color="black")
        ax.text(tick, 0.3, str(tick), ha="center", va="bottom")
    ax.hlines(1.3, 1, 1 + cd, color="black", linewidth=2)
    ax.text(1 + cd / 2, 1.45, f"CD = {cd:.2f}", ha="center", va="bottom")
    half = (k + 1) // 2
    for pos, j in enumerate(order):
        left = pos < half
        y = -(pos + 1) if left else -(k - pos)
        x_text = 0.6 if left else k + 0.4
        ax.plot([r[j], r[j], x_text], [0, y, y], color="black", linewidth=0.8)
        ax.text(x_text, y, f"{names[j]} ({r[j]:.2f})", ha="right" if left else "left",
                va="center")
    for g, members in enumerate(critical_difference_groups(r, cd)):
        y = -0.35 - 0.25 * g
        ax.hlines(y, r[members[0]] - 0.03, r[members[-1]] + 0.03, color="black", linewidth=4)
    return ax
