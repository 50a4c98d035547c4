"""Statistics for comparing classifiers (melotti2009 ch. 4; matsubara2008 §3.3; SPEC §6–§8).

* :func:`paired_ttest` -- paired two-tailed Student t-test over folds (the study's test).
"""
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps


def _check_paired(a, b, min_n=2):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"a and b must be 1-D samples, got {a.ndim}-D and {b.ndim}-D")
    if a.shape != b.shape:
        raise ValueError(f"a has {a.size} values but b has {b.size}; paired samples must match")
    if a.size < min_n:
        raise ValueError(f"need at least {min_n} paired values, got {a.size}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("a and b must not contain NaN")
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


def paired_ttest(a, b, alpha=0.05):
    """Paired two-tailed Student t-test of the per-fold values ``a`` against ``b``.

    With ``d = a - b`` over ``n`` folds, ``t = mean(d) / (std(d, ddof=1) / sqrt(n))`` and
    ``p = 2 * P(T_{n-1} >= |t|)``; the difference is significant when ``p < alpha``
    (melotti2009 §4: alpha = 5%, df = folds - 1). Equal to ``scipy.stats.ttest_rel``.

    Conventions: identical samples (every difference exactly 0) give ``statistic = pvalue
    = nan`` (0/0, as SciPy), ``significant=False`` and ``identical=True`` (reported as
    "≡"); a constant nonzero difference (zero variance, nonzero mean) gives ``t = ±inf``
    and ``p = 0`` (significant).

    Raises ValueError for samples that are not 1-D, differ in length, have fewer than two
    values or contain NaN, and for ``alpha`` outside (0, 1).
    """
    a, b = _check_paired(a, b)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    d = a - b
    n = d.size
    df = n - 1
    identical = bool(np.array_equal(a, b))
    if identical:
        return TTestResult(float("nan"), float("nan"), df, False, True)
    mean = d.mean()
    sd = d.std(ddof=1)
    if sd == 0.0:
        t = float(np.copysign(np.inf, mean))
        p = 0.0
    else:
        t = float(mean / (sd / np.sqrt(n)))
        p = float(2.0 * _sps.t.sf(abs(t), df))
    return TTestResult(t, p, df, bool(p < alpha), False)
