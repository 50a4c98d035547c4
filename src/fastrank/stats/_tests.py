"""Tests comparing classifiers: the paired t-test and Wilcoxon's signed-rank test of two,
Friedman's test of many, and Holm's correction of many p-values.
"""
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as _sps

from .._validation import as_real_array
from .._vocabulary import check_alpha
from ..ranking import rank


def _check_paired(a, b, min_n=2) -> tuple[np.ndarray, np.ndarray]:
    a = as_real_array(a, "a")
    b = as_real_array(b, "b")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"a and b must be 1-D samples, got {a.ndim}-D and {b.ndim}-D")
    if a.shape != b.shape:
        raise ValueError(f"a has {a.size} values but b has {b.size}; paired samples must match")
    if a.size < min_n:
        raise ValueError(f"need at least {min_n} paired values, got {a.size}")
    for name, v in (("a", a), ("b", b)):
        if not np.isfinite(v).all():
            raise ValueError(f"{name} contains NaN or infinity; paired samples must be finite")
    return a, b


@dataclass(frozen=True)
class TTestResult:
    """Result of :func:`paired_ttest`.

    Attributes
    ----------
    statistic : float
        t statistic of ``a - b`` (positive when ``a`` is larger on average).
    pvalue : float
        Two-tailed p-value.
    df : int
        Degrees of freedom, ``n - 1``.
    significant : bool
        ``pvalue < alpha``.
    identical : bool
        ``a`` and ``b`` are elementwise (exactly) equal -- the thesis writes "≡".
    """

    statistic: float
    pvalue: float
    df: int
    significant: bool
    identical: bool


def paired_ttest(a: npt.ArrayLike, b: npt.ArrayLike, alpha: float = 0.05) -> TTestResult:
    """Paired two-tailed Student t-test of the per-fold values ``a`` against ``b``.

    With ``d = a - b`` over ``n`` folds, ``t = mean(d) / (std(d, ddof=1) / sqrt(n))`` and
    ``p = 2 * P(T_{n-1} >= |t|)``; the difference is significant when ``p < alpha``
    (melotti2009 §4: alpha = 5%, df = folds - 1). Equal to ``scipy.stats.ttest_rel`` up to
    rounding, except where SciPy's arithmetic breaks down: the differences are scaled to a
    largest magnitude of 1 (t does not change; values whose difference overflows are scaled
    before subtracting), so differences whose squares would underflow (``|d| < 1e-154``) or
    whose subtraction would overflow still give the exact t, and equal differences give
    t = ±inf where SciPy can report a huge finite t from rounding noise.

    Conventions: identical samples (every difference exactly 0) give ``statistic = pvalue
    = nan`` (0/0, as SciPy), ``significant=False`` and ``identical=True`` (reported as
    "≡"); a constant nonzero difference (zero variance, nonzero mean) gives ``t = ±inf``
    and ``p = 0`` (significant).

    Parameters
    ----------
    a, b : array-like of float, shape (n,)
        The paired samples (e.g. one metric per fold for two ranking types).
    alpha : float, default 0.05
        Significance level, in (0, 1).

    Returns
    -------
    TTestResult

    Raises
    ------
    ValueError
        Samples that are not 1-D, differ in length, have fewer than two values or contain
        NaN or infinity; ``alpha`` outside (0, 1).
    TypeError
        Non-numeric samples.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, ch. 4-5.

    Examples
    --------
    >>> from fastrank.stats import paired_ttest
    >>> r = paired_ttest([.81, .79, .84, .80, .83], [.78, .79, .80, .77, .80])
    >>> round(r.statistic, 4), round(r.pvalue, 4), r.df, r.significant
    (3.8335, 0.0186, 4, True)
    >>> paired_ttest([.8, .9], [.8, .9]).identical    # the thesis' "≡"
    True
    """
    a, b = _check_paired(a, b)
    alpha = check_alpha(alpha)
    with np.errstate(over="ignore"):  # handled below
        d = a - b
    n = d.size
    df = n - 1
    identical = bool(np.array_equal(a, b))
    if identical:
        return TTestResult(float("nan"), float("nan"), df, False, True)
    # t is scale-free: where a - b overflows, subtract after scaling by the largest |value|;
    # then scale d to a largest magnitude of 1 (its squares cannot underflow)
    if not np.all(np.isfinite(d)):
        scale = max(np.abs(a).max(), np.abs(b).max())
        d = a / scale - b / scale
    d = d / np.abs(d).max()
    mean = d.mean()
    sd = d.std(ddof=1)
    if sd == 0.0:
        t = float(np.copysign(np.inf, mean))
        p = 0.0
    else:
        t = float(mean / (sd / np.sqrt(n)))
        p = float(2.0 * _sps.t.sf(abs(t), df))
    return TTestResult(t, p, df, bool(p < alpha), False)


@dataclass(frozen=True)
class WilcoxonResult:
    """Result of :func:`wilcoxon`.

    Attributes
    ----------
    statistic : float
        ``min(W+, W-)``.
    pvalue : float
        Two-sided p-value.
    n : int
        Number of differences ranked: the non-zero ones (``zero_method="wilcox"``) or all.
    exact : bool
        The p-value is from the exact distribution.
    significant : bool
        ``pvalue < alpha``.
    identical : bool
        Every difference is exactly 0.
    """

    statistic: float
    pvalue: float
    n: int
    exact: bool
    significant: bool
    identical: bool


def _signed_rank_pvalue(doubled_ranks, w2):
    """Two-sided p of 2 W+ = w2 under independent fair signs, ranks fixed (ties included):
    the exact null distribution, built one rank at a time (O(n^3) for n differences)."""
    probs = np.zeros(int(doubled_ranks.sum()) + 1)
    probs[0] = 1.0
    for r in doubled_ranks:
        shifted = np.zeros_like(probs)
        shifted[r:] = probs[:-r]
        probs = 0.5 * (probs + shifted)
    return min(1.0, 2.0 * min(probs[:w2 + 1].sum(), probs[w2:].sum()))


#: The largest number of differences :func:`wilcoxon` takes with ``method="exact"``: the
#: exact distribution costs O(n^3) time and O(n^2) memory (about a second at 500).
MAX_EXACT_N = 500
#: The treatments of zero differences of :func:`wilcoxon` (SciPy's names).
ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def wilcoxon(a: npt.ArrayLike, b: npt.ArrayLike, alpha: float = 0.05,
             method: Literal["auto", "exact", "approx"] = "auto",
             zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox") -> WilcoxonResult:
    """Wilcoxon signed-rank test of paired samples, two-sided.

    ``d = a - b``; ``|d|`` is ranked with average ranks for ties; ``W+`` (``W-``) sums the
    ranks of positive (negative) differences; the statistic is ``min(W+, W-)``. Zero
    differences, by ``zero_method`` (SciPy's names and definitions):

    * ``"wilcox"`` (default): dropped before ranking (Wilcoxon's convention);
    * ``"pratt"``: ranked with the others, their ranks then left out of ``W+`` and ``W-``;
    * ``"zsplit"``: ranked with the others, their ranks split evenly between ``W+`` and
      ``W-``: Demšar's convention (2006, §3.1.3), except that Demšar ignores one zero
      difference when their number is odd, where this (as SciPy) splits every zero's rank.

    p-value: ``method="exact"`` uses the exact distribution of ``W+`` over the equally
    likely signs of the non-zero differences given the ranks (ties and zeros included);
    ``"approx"`` the normal approximation with tie correction and no continuity
    correction, its mean and variance those of ``W+`` given the ranks ("zsplit", as Demšar
    and SciPy: the variance counts the zero differences' ranks too); ``"auto"`` is exact
    for ``n <= 50``, approximate above. This equals ``scipy.stats.wilcoxon(a, b,
    zero_method=zero_method)`` whenever SciPy is exact, i.e. without ties or zeros for
    n <= 50 and with them for n <= 13; for ties/zeros with 13 < n <= 50 SciPy switches to
    the normal approximation, while this stays exact. ``"approx"`` equals SciPy's
    ``method="asymptotic"``.

    Identical samples: ``statistic = pvalue = nan``, ``identical=True``, not significant.

    Parameters
    ----------
    a, b : array-like of float, shape (n,)
        The paired samples (e.g. one metric per fold for two ranking types).
    alpha : float, default 0.05
        Significance level, in (0, 1).
    method : {"auto", "exact", "approx"}, default "auto"
        How the p-value is computed (see above); "exact" takes at most
        :data:`MAX_EXACT_N` (500) differences.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        How zero differences count (see above).

    Returns
    -------
    WilcoxonResult
        ``n`` counts the differences ranked: the non-zero ones for "wilcox", all of them
        otherwise.

    Raises
    ------
    ValueError
        As :func:`paired_ttest` (one pair is enough here), an unknown ``method`` or
        ``zero_method``, ``method="exact"`` with more than :data:`MAX_EXACT_N` differences.
    TypeError
        Non-numeric samples.

    References
    ----------
    .. [1] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin
       1(6), 80-83, 1945.
    .. [2] J. W. Pratt, "Remarks on zeros and ties in the Wilcoxon signed rank
       procedures", Journal of the American Statistical Association 54, 655-667, 1959.
    .. [3] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006.

    Examples
    --------
    >>> from fastrank.stats import wilcoxon
    >>> a, b = [.81, .79, .84, .80, .83], [.78, .79, .80, .77, .80]
    >>> r = wilcoxon(a, b)
    >>> r.statistic, r.pvalue, r.n, r.exact      # the zero difference is dropped
    (0.0, 0.125, 4, True)
    >>> r = wilcoxon(a, b, zero_method="zsplit")  # its rank 1 split: W+ = 14.5, W- = 0.5
    >>> r.statistic, r.pvalue, r.n
    (0.5, 0.125, 5)
    """
    if method not in ("auto", "exact", "approx"):
        raise ValueError(f"unknown method={method!r}; valid: 'auto', 'exact', 'approx'")
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"unknown zero_method={zero_method!r}; valid: "
                         f"{', '.join(map(repr, ZERO_METHODS))}")
    a, b = _check_paired(a, b, min_n=1)
    alpha = check_alpha(alpha)
    with np.errstate(over="ignore"):  # handled below
        d = a - b
    if not np.all(np.isfinite(d)):  # halved first: the same signs, zeros and order of |d|
        d = np.ldexp(a, -1) - np.ldexp(b, -1)
    if zero_method == "wilcox":
        d = d[d != 0]
    n = d.size
    if not d.any():
        return WilcoxonResult(float("nan"), float("nan"), n, False, False, True)
    exact = method == "exact" or (method == "auto" and n <= 50)
    if exact and n > MAX_EXACT_N:
        raise ValueError(f"method='exact' takes at most {MAX_EXACT_N} differences, got {n}; "
                         "use 'approx' or 'auto'")
    ranks = _sps.rankdata(np.abs(d))  # average ranks: multiples of 1/2
    signed = ranks[d != 0]  # the ranks whose sign is random
    w_plus = float(ranks[d > 0].sum())
    half_zeros = float(ranks[d == 0].sum()) / 2 if zero_method == "zsplit" else 0.0
    statistic = min(w_plus, float(signed.sum()) - w_plus) + half_zeros
    if exact:
        doubled = np.rint(2 * signed).astype(np.int64)
        p = _signed_rank_pvalue(doubled, int(round(2 * w_plus)))
    else:
        spread = ranks if zero_method == "zsplit" else signed
        z = (w_plus - signed.sum() / 2.0) / np.sqrt(np.sum(spread ** 2) / 4.0)
        p = float(min(1.0, 2.0 * _sps.norm.sf(abs(z))))
    return WilcoxonResult(statistic, float(p), n, exact, bool(p < alpha), False)


@dataclass(frozen=True)
class FriedmanResult:
    """Result of :func:`friedman`.

    Attributes
    ----------
    ranks : ndarray, shape (N, k)
        Rank of each classifier on each data set (1 = best).
    mean_ranks : ndarray, shape (k,)
        Average rank of each classifier.
    chi2, chi2_pvalue : float
        Friedman statistic and its chi²(k - 1) p-value.
    f, f_pvalue : float
        Iman-Davenport statistic and its F(k - 1, (k - 1)(N - 1)) p-value.
    df : tuple of int
        ``(k - 1, (k - 1)(N - 1))``.
    f_critical : float
        Critical value of that F at ``alpha``.
    significant : bool
        ``f_pvalue < alpha`` (reject "all classifiers are equivalent").
    cd_nemenyi, cd_bonferroni_dunn : float
        Critical differences of mean ranks at ``alpha``.
    n_datasets, n_classifiers : int
        N and k.
    alpha : float
        The significance level.
    """

    ranks: np.ndarray
    mean_ranks: np.ndarray
    chi2: float
    chi2_pvalue: float
    f: float
    f_pvalue: float
    df: tuple
    f_critical: float
    significant: bool
    cd_nemenyi: float
    cd_bonferroni_dunn: float
    n_datasets: int
    n_classifiers: int
    alpha: float


def friedman(table: npt.ArrayLike, higher_is_better: bool = True, alpha: float = 0.05,
             tie_correction: bool = False) -> FriedmanResult:
    """Friedman test over a (data sets x classifiers) table, with its post-hoc critical
    differences (Demšar 2006; matsubara2008 Tables 3.6 and 5.2).

    Each row is ranked (1 = best; ``higher_is_better=False`` for errors such as the Brier
    score), tied values getting the average of their positions. With N rows, k columns and
    mean ranks ``R_j``::

        chi2 = 12 N / (k (k + 1)) * (sum_j R_j^2 - k (k + 1)^2 / 4)
        F    = (N - 1) chi2 / (N (k - 1) - chi2)          (Iman-Davenport)
        CD   = q_alpha * sqrt(k (k + 1) / (6 N))

    with ``q_alpha`` the studentized range quantile over sqrt(2) (Nemenyi: all pairs) or
    the normal quantile ``z_{1 - alpha / (2 (k - 1))}`` (Bonferroni-Dunn: against one
    control). Two mean ranks differing by more than CD are significantly different.

    ``tie_correction=True`` divides chi2 by ``1 - sum(t^3 - t) / (N k (k^2 - 1))`` over
    the tie groups of the rows, which equals ``scipy.stats.friedmanchisquare``; the default
    (no correction) is the formula of Demšar and the thesis.

    Edge cases. When every row ranks the classifiers identically, chi2 takes its largest
    value, ``N (k - 1)`` (as ``scipy.stats.friedmanchisquare`` gives it, with its
    chi-square p-value), and the denominator of ``F`` is 0: ``F`` is infinite (its limit)
    and the F distribution gives no p-value there (its limit, 0, would call two data sets
    that agree on two classifiers significant). ``f_pvalue`` is then the exact probability,
    under the null hypothesis that each row's ranks are in random order, that every row
    ranks the classifiers alike: ``M^-(N - 1)`` with ``M = k! / prod(t!)`` the distinct
    orders of a row whose tie groups have sizes ``t`` (``k!^-(N - 1)`` without ties).
    With ties and no correction, identical rows do not reach the largest chi2 and take
    the usual F test. When every row is fully tied (all classifiers equal on every data
    set) there is no evidence of a difference: ``chi2 = F = 0``, both p-values 1, not
    significant (with ``tie_correction=True`` the correction factor is 0 there, and the
    0/0 is defined as this limit).

    Values are only ranked, so ±inf entries are ranked like any other value (inf is the
    largest).

    Parameters
    ----------
    table : array-like, shape (N, k)
        One row per data set, one column per classifier.
    higher_is_better : bool, default True
        Rank the largest value first (False for errors).
    alpha : float, default 0.05
        Significance level, in (0, 1).
    tie_correction : bool, default False
        Apply the tie correction of ``scipy.stats.friedmanchisquare``.

    Returns
    -------
    FriedmanResult

    Raises
    ------
    ValueError
        Fewer than 2 data sets or classifiers, NaN in the table, ``alpha`` outside (0, 1).
    TypeError
        A non-numeric table.

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006.
    .. [2] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §3.4, §5.2.2.

    Examples
    --------
    >>> from fastrank.stats import friedman
    >>> r = friedman([[.9, .8, .7], [.85, .86, .7], [.8, .75, .6], [.9, .7, .72]])
    >>> r.mean_ranks
    array([1.25, 2.  , 2.75])
    >>> round(r.chi2, 4), round(r.f, 4), r.df, r.significant
    (4.5, 3.8571, (2, 6), False)
    >>> round(r.cd_nemenyi, 4)
    1.6572
    """
    t = as_real_array(table, "table")
    if t.ndim != 2 or t.shape[0] < 2 or t.shape[1] < 2:
        raise ValueError(f"table must be 2-D (data sets x classifiers) with at least 2 of "
                         f"each, got shape {t.shape}")
    if np.isnan(t).any():
        raise ValueError("table contains NaN")
    alpha = check_alpha(alpha)
    n, k = t.shape
    ranks = rank(t if higher_is_better else -t, method="fractional")
    mean_ranks = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (np.sum(mean_ranks ** 2) - k * (k + 1) ** 2 / 4.0)
    if tie_correction:
        ties = sum(np.sum(c ** 3 - c) for c in
                   (np.unique(row, return_counts=True)[1] for row in ranks))
        correction = 1.0 - ties / (n * k * (k * k - 1.0))
        # correction == 0 only when every row is fully tied: then chi2 is 0 (no evidence),
        # not 0/0 = NaN.
        chi2 = chi2 / correction if correction > 0 else 0.0
    if not np.isfinite(chi2):  # pragma: no cover - guarded above; never report NaN as inf
        raise ValueError(f"Friedman statistic is not finite ({chi2}) for this table")
    df1, df2 = k - 1, (k - 1) * (n - 1)
    groups = np.unique(ranks[0], return_counts=True)[1]  # tie-group sizes of the first row
    if (ranks == ranks[0]).all() and (tie_correction or groups.size == k):
        # every row alike: chi2 at its largest (0 when fully tied), F's denominator 0
        orders = math.factorial(k) // math.prod(math.factorial(int(g)) for g in groups)
        f, f_p = (float("inf"), 1 / orders ** (n - 1)) if orders > 1 else (0.0, 1.0)
    else:
        f = (n - 1) * chi2 / (n * (k - 1) - chi2)
        f_p = float(_sps.f.sf(f, df1, df2))
    scale = np.sqrt(k * (k + 1) / (6.0 * n))
    q_nemenyi = _sps.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0)
    q_dunn = _sps.norm.ppf(1.0 - alpha / (2.0 * (k - 1)))
    return FriedmanResult(
        ranks=ranks, mean_ranks=mean_ranks, chi2=float(chi2),
        chi2_pvalue=float(_sps.chi2.sf(chi2, df1)),
        f=float(f), f_pvalue=f_p, df=(df1, df2),
        f_critical=float(_sps.f.ppf(1.0 - alpha, df1, df2)), significant=bool(f_p < alpha),
        cd_nemenyi=float(q_nemenyi * scale), cd_bonferroni_dunn=float(q_dunn * scale),
        n_datasets=n, n_classifiers=k, alpha=alpha)


@dataclass(frozen=True)
class HolmResult:
    """Result of :func:`holm`.

    Attributes
    ----------
    adjusted : ndarray
        Holm-adjusted p-values, in the order of the input.
    reject : ndarray of bool
        ``adjusted <= alpha``: the hypotheses the step-down procedure rejects.
    alpha : float
    """

    adjusted: np.ndarray
    reject: np.ndarray
    alpha: float


def holm(pvalues, alpha=0.05):
    """Holm's step-down correction of ``m`` p-values for multiple comparisons (Holm 1979;
    Demšar 2006 §3.2.2).

    With the p-values sorted increasingly, ``p_(1) <= ... <= p_(m)``, the procedure rejects
    ``H_(1), ..., H_(i-1)`` where ``i`` is the first index with ``p_(i) > alpha / (m - i +
    1)``. Equivalently, the adjusted p-values ``p~_(i) = max_{j <= i} min(1, (m - j + 1)
    p_(j))`` are compared with ``alpha`` (the procedure's rejections are exactly
    ``p~ <= alpha``); this equals ``statsmodels.stats.multitest.multipletests(p,
    method="holm")``.

    Parameters
    ----------
    pvalues : 1-D array_like of floats in [0, 1]
    alpha : float in (0, 1), default 0.05

    Returns
    -------
    HolmResult

    Raises
    ------
    ValueError
        For an empty or non-1-D input, p-values outside [0, 1] or NaN, or ``alpha``
        outside (0, 1).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).adjusted
    array([0.03, 0.06, 0.06])
    """
    p = as_real_array(pvalues, "pvalues")
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"pvalues must be a non-empty 1-D array, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("pvalues must lie in [0, 1] (no NaN)")
    alpha = check_alpha(alpha)
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(steps)
    return HolmResult(adjusted, adjusted <= alpha, float(alpha))
