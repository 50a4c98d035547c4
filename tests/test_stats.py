import itertools
import math

import numpy as np
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fastrank.stats import (
    compare_two, confusion_cost_error, confusion_matrix, cost_error, critical_difference_diagram,
    critical_difference_groups, friedman, holm, majority_error, mean_se, paired_ttest, wilcoxon,
)

# ---- paired t-test ------------------------------------------------------------------------


def test_paired_ttest_matches_scipy_ttest_rel():
    rng = np.random.default_rng(0)
    for n in (2, 3, 10, 30):
        a = rng.normal(size=n)
        b = a + rng.normal(0.3, 1.0, size=n)
        res = paired_ttest(a, b)
        ref = sps.ttest_rel(a, b)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
        assert res.df == n - 1
        assert res.significant == (ref.pvalue < 0.05)
        assert not res.identical


def test_paired_ttest_by_hand():
    # d = (1, 2, 3): mean 2, sd 1, t = 2 / (1 / sqrt 3) = 2 sqrt 3, df 2
    res = paired_ttest([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert res.statistic == pytest.approx(2 * math.sqrt(3))
    # two-tailed p for t_2: 1 - t / sqrt(t^2 + 2)  (closed form of the t_2 distribution)
    t = 2 * math.sqrt(3)
    assert res.pvalue == pytest.approx(1 - t / math.sqrt(t * t + 2))
    assert res.df == 2


def test_paired_ttest_identical_is_equivalence():
    a = [0.5, 0.25, 0.75, 0.5]
    res = paired_ttest(a, list(a))
    assert res.identical and not res.significant
    assert math.isnan(res.statistic) and math.isnan(res.pvalue)
    assert res.df == 3


def test_paired_ttest_zero_variance_nonzero_mean():
    res = paired_ttest([1.5, 2.5, 3.5], [1.0, 2.0, 3.0])
    assert res.statistic == math.inf and res.pvalue == 0.0 and res.significant
    assert not res.identical
    res = paired_ttest([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert res.statistic == -math.inf and res.pvalue == 0.0


def test_paired_ttest_alpha_and_frozen():
    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    b = a - np.array([0.01, 0.03, -0.02, 0.02, 0.01])
    res = paired_ttest(a, b)
    assert 0.05 < res.pvalue < 0.5
    assert not res.significant
    assert paired_ttest(a, b, alpha=0.5).significant
    with pytest.raises(AttributeError):
        res.statistic = 0.0


@pytest.mark.parametrize("a, b, msg", [
    ([1.0, 2.0], [1.0], "paired samples"),
    ([1.0], [2.0], "at least 2"),
    ([[1.0, 2.0]], [[1.0, 2.0]], "1-D"),
    ([1.0, np.nan], [1.0, 2.0], "NaN"),
])
def test_paired_ttest_bad_input(a, b, msg):
    with pytest.raises(ValueError, match=msg):
        paired_ttest(a, b)


def test_paired_ttest_tiny_differences_keep_their_t():
    """d = (-x, 0, 0): mean -x/3, sd x/sqrt(3), t = -1 for every x > 0, including x whose
    square underflows to a subnormal (found by hypothesis; SciPy gives -1.07 there)."""
    for x in (1.0, 1e-100, 7.11302367e-162, 5e-324):
        res = paired_ttest([0.0, 0.0, 0.0], [x, 0.0, 0.0])
        assert res.statistic == pytest.approx(-1.0, rel=1e-12)
        assert res.pvalue == pytest.approx(sps.t.sf(1.0, 2) * 2, rel=1e-12)


def test_paired_ttest_extreme_magnitudes():
    """Finite samples whose differences overflow float64, and constant differences."""
    res = paired_ttest([1.7e308, 1.6e308, 1.5e308], [-1.7e308, -1.7e308, -1.7e308])
    ref = sps.ttest_1samp([3.4, 3.3, 3.2], 0.0)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12) and res.significant
    res = paired_ttest(np.full(7, 0.1), np.zeros(7))
    assert res.statistic == np.inf and res.pvalue == 0.0 and res.significant


def test_wilcoxon_and_mean_se_at_extreme_magnitudes():
    """Finite samples whose differences (or squared deviations) overflow float64: the
    values of the same samples scaled down, and a power-of-two scaling keeps the bits."""
    a = np.array([1.7e308, 1.0e308, 3e307, -2e307])
    b = np.array([-1.7e308, -1.5e308, 1e307, 2e307])
    for zero_method in ("wilcox", "pratt", "zsplit"):
        got = wilcoxon(a, b, zero_method=zero_method)
        want = wilcoxon(a / 1e300, b / 1e300, zero_method=zero_method)
        assert (got.statistic, got.pvalue) == (want.statistic, want.pvalue)
    for values in ([1e308, -1e308], [1e300, -1e300, 3e299]):
        mean, sd = mean_se(values)
        small = mean_se(np.array(values) / 2.0**1000)
        assert (mean, sd) == (small[0] * 2.0**1000, small[1] * 2.0**1000) and np.isfinite(sd)
    assert mean_se([0.10, 0.12, 0.08]) == tuple(x / 2.0**40 for x in mean_se(
        np.array([0.10, 0.12, 0.08]) * 2.0**40))


def test_paired_ttest_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        paired_ttest([1.0, 2.0], [2.0, 2.0], alpha=1.5)


def _every_alpha_check():
    """Each function that takes a significance level, called with a valid input."""
    from fastrank.report import interval
    return {"paired_ttest": lambda alpha: paired_ttest([1.0, 2.0], [2.0, 2.5], alpha=alpha),
            "wilcoxon": lambda alpha: wilcoxon([1.0, 2.0], [2.0, 2.5], alpha=alpha),
            "friedman": lambda alpha: friedman([[1.0, 2.0], [2.0, 1.0]], alpha=alpha),
            "holm": lambda alpha: holm([0.1], alpha=alpha),
            "interval": lambda alpha: interval([0.5, 0.6, 0.7], alpha)}


@pytest.mark.parametrize("alpha, error, message", [
    (0.0, ValueError, "alpha must be in (0, 1), got 0.0"),
    (1, ValueError, "alpha must be in (0, 1), got 1"),
    (-0.5, ValueError, "alpha must be in (0, 1), got -0.5"),
    (float("nan"), ValueError, "alpha must be in (0, 1), got nan"),
    ("0.05", TypeError, "alpha must be a number in (0, 1), got '0.05'"),
    (None, TypeError, "alpha must be a number in (0, 1), got None"),
    (True, TypeError, "alpha must be a number in (0, 1), got True")])
def test_every_alpha_is_checked_alike(alpha, error, message):
    for name, call in _every_alpha_check().items():
        with pytest.raises(error) as info:
            call(alpha)
        assert str(info.value) == message, name


def test_a_valid_alpha_of_any_real_type_is_accepted_as_a_float():
    for call in _every_alpha_check().values():
        for alpha in (0.05, np.float32(0.25), 0.999):
            call(alpha)
    assert type(friedman([[1.0, 2.0], [2.0, 1.0]], alpha=np.float32(0.25)).alpha) is float


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # SciPy, near-equal data
@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(2, 12), elements=st.floats(-1e3, 1e3)),
       arrays(np.float64, 12, elements=st.floats(-1e3, 1e3)))
def test_paired_ttest_property_vs_scipy(a, noise):
    b = a + noise[:a.size]
    res = paired_ttest(a, b)
    d = a - b
    if res.identical:
        assert np.array_equal(a, b)
        return
    # the differences scaled to a largest magnitude of 1 (t is scale-free): on the raw data,
    # squares of tiny differences underflow and SciPy loses precision
    d = d / np.abs(d).max()
    if d.std(ddof=1) == 0:
        assert math.isinf(res.statistic) and res.pvalue == 0.0
        return
    ref = sps.ttest_1samp(d, 0.0)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-9, abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-8, abs=1e-14)
    # symmetry: swapping the samples flips the sign only
    swapped = paired_ttest(b, a)
    assert swapped.statistic == pytest.approx(-res.statistic)
    assert swapped.pvalue == pytest.approx(res.pvalue)


# ---- Wilcoxon signed-rank ------------------------------------------------------------------

def brute_force_signed_rank_p(d):
    """Two-sided p by enumerating all 2^n sign patterns of the non-zero |d| ranks."""
    d = d[d != 0]
    ranks = sps.rankdata(np.abs(d))
    w_obs = ranks[d > 0].sum()
    signs = (np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1
    w = signs @ ranks
    return min(1.0, 2 * min(np.mean(w <= w_obs + 1e-9), np.mean(w >= w_obs - 1e-9)))


@pytest.mark.parametrize("n, ties, seed", [(8, False, 0), (30, False, 1), (50, False, 2),
                                           (11, True, 3), (12, True, 4), (70, True, 5),
                                           (200, False, 6)])
def test_wilcoxon_matches_scipy(n, ties, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    d = rng.normal(0.4, 1.0, size=n)
    if ties:
        d = np.round(d, 1)
        d[:2] = 0.0  # zero differences are dropped
    b = a - d
    res = wilcoxon(a, b)
    ref = sps.wilcoxon(a, b)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert res.significant == (ref.pvalue < 0.05)


def test_wilcoxon_exact_with_ties_beyond_scipy():
    # 13 < n <= 50 with ties: SciPy approximates, this stays exact (brute force reference)
    rng = np.random.default_rng(9)
    d = np.round(rng.normal(0.3, 1.0, size=16), 1)
    res = wilcoxon(d, np.zeros(16))
    assert res.exact
    assert res.pvalue == pytest.approx(brute_force_signed_rank_p(d), rel=1e-12)
    approx = wilcoxon(d, np.zeros(16), method="approx")
    assert approx.pvalue == pytest.approx(sps.wilcoxon(d, np.zeros(16)).pvalue, rel=1e-9)


def _with_zeros_and_ties(n, seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.3, 1.0, size=n), 1)
    d[rng.choice(n, size=max(1, n // 5), replace=False)] = 0.0
    a = rng.normal(size=n)
    return a, a - d


def brute_force_zero_method_p(d, zero_method):
    """Two-sided p by enumerating the signs of the non-zero differences, ranked with the
    zeros ("pratt", "zsplit": the same p, the zsplit statistic only shifted)."""
    ranks = sps.rankdata(np.abs(d))[d != 0]
    d = d[d != 0]
    w_obs = ranks[d > 0].sum()
    signs = (np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1
    w = signs @ ranks
    return min(1.0, 2 * min(np.mean(w <= w_obs + 1e-9), np.mean(w >= w_obs - 1e-9)))


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("n, seed", [(6, 0), (10, 1), (13, 2), (13, 3)])
def test_wilcoxon_zero_methods_match_scipy_exactly(zero_method, n, seed):
    # with ties or zeros SciPy enumerates every sign pattern for n <= 13
    a, b = _with_zeros_and_ties(n, seed)
    res = wilcoxon(a, b, zero_method=zero_method)
    ref = sps.wilcoxon(a, b, zero_method=zero_method)
    assert res.exact and res.n == (np.count_nonzero(a - b) if zero_method == "wilcox" else n)
    assert res.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("n, seed", [(20, 4), (60, 5), (300, 6)])
def test_wilcoxon_zero_methods_approx_match_scipy(zero_method, n, seed):
    a, b = _with_zeros_and_ties(n, seed)
    res = wilcoxon(a, b, method="approx", zero_method=zero_method)
    ref = sps.wilcoxon(a, b, zero_method=zero_method, method="asymptotic")
    assert not res.exact
    assert res.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.parametrize("zero_method", ["pratt", "zsplit"])
def test_wilcoxon_zero_methods_exact_beyond_scipy(zero_method):
    a, b = _with_zeros_and_ties(18, 7)
    res = wilcoxon(a, b, zero_method=zero_method)
    assert res.exact and res.n == 18
    assert res.pvalue == pytest.approx(brute_force_zero_method_p(a - b, zero_method),
                                       rel=1e-12)


def test_wilcoxon_zsplit_is_demsar_convention():
    # Demšar (2006) §3.1.3: the ranks of zero differences are split evenly between R+ and
    # R-; ranks here are 1.5, 1.5 (the zeros), 3, 4, 5, so R+ = 1.5 + 3 + 5 and R- = 1.5 + 4
    d = np.array([0.0, 0.0, 0.3, -0.4, 0.5])
    assert wilcoxon(d, np.zeros(5), zero_method="zsplit").statistic == 5.5
    assert wilcoxon(d, np.zeros(5), zero_method="pratt").statistic == 4.0
    assert wilcoxon(d, np.zeros(5)).statistic == 2.0  # zeros dropped: ranks 1, 2, 3


def test_wilcoxon_identical_and_errors():
    res = wilcoxon([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert res.identical and math.isnan(res.pvalue) and not res.significant
    with pytest.raises(ValueError, match="method"):
        wilcoxon([1.0, 2.0], [2.0, 1.0], method="permutation")
    with pytest.raises(ValueError, match="paired"):
        wilcoxon([1.0, 2.0], [2.0])
    with pytest.raises(ValueError, match="zero_method"):
        wilcoxon([1.0, 2.0], [2.0, 1.0], zero_method="demsar")
    for zero_method in ("pratt", "zsplit"):
        res = wilcoxon([1.0, 2.0], [1.0, 2.0], zero_method=zero_method)
        assert res.identical and math.isnan(res.statistic) and res.n == 2


# ---- Friedman (matsubara2008 Tables 3.6 and 5.2, printed values) ----------------------------

# Table 3.6: mean AUC of LexRank, Naive Bayes, J48 on 27 UCI sets, and the printed ranks
T36 = np.array([
    [0.985, 0.948, 0.994], [0.707, 0.727, 0.677], [0.994, 0.994, 0.977], [0.941, 0.989, 0.997],
    [0.919, 0.897, 0.899], [0.750, 0.788, 0.713], [0.999, 1.000, 0.987], [0.826, 0.828, 0.771],
    [0.954, 0.976, 0.948], [0.708, 0.698, 0.634], [0.861, 0.914, 0.879], [0.841, 0.912, 0.840],
    [0.960, 0.928, 0.898], [0.978, 0.931, 0.999], [0.965, 0.946, 0.984], [0.633, 0.648, 0.663],
    [0.855, 0.911, 0.879], [0.996, 0.970, 0.994], [0.922, 0.971, 0.867], [0.708, 0.731, 0.996],
    [0.472, 0.531, 0.998], [0.983, 0.983, 0.988], [0.542, 0.559, 0.566], [0.759, 0.850, 0.725],
    [0.809, 0.846, 0.762], [0.991, 0.995, 0.987], [0.723, 0.750, 0.977]])
T36_RANKS = np.array([
    [2, 3, 1], [2, 1, 3], [1.5, 1.5, 3], [3, 2, 1], [1, 3, 2], [2, 1, 3], [2, 1, 3], [2, 1, 3],
    [2, 1, 3], [1, 2, 3], [3, 1, 2], [2, 1, 3], [1, 2, 3], [2, 3, 1], [2, 3, 1], [3, 2, 1],
    [3, 1, 2], [1, 3, 2], [2, 1, 3], [3, 2, 1], [3, 2, 1], [2.5, 2.5, 1], [3, 2, 1], [2, 1, 3],
    [2, 1, 3], [2, 1, 3], [3, 2, 1]])
# Table 5.2: mean Brier score of LexRank, LexProb, NB, CaliNB, J48 (lower is better)
T52 = np.array([
    [0.152, 0.032, 0.080, 0.072, 0.009], [0.244, 0.186, 0.205, 0.180, 0.214],
    [0.067, 0.034, 0.032, 0.028, 0.052], [0.152, 0.077, 0.051, 0.033, 0.010],
    [0.125, 0.103, 0.144, 0.134, 0.129], [0.234, 0.181, 0.201, 0.167, 0.209],
    [0.125, 0.012, 0.002, 0.008, 0.013], [0.194, 0.166, 0.197, 0.163, 0.221],
    [0.166, 0.070, 0.052, 0.049, 0.069], [0.208, 0.182, 0.212, 0.192, 0.207],
    [0.177, 0.119, 0.122, 0.094, 0.106], [0.163, 0.146, 0.129, 0.124, 0.176],
    [0.129, 0.082, 0.094, 0.083, 0.115], [0.094, 0.044, 0.106, 0.103, 0.008],
    [0.294, 0.019, 0.021, 0.010, 0.007], [0.291, 0.247, 0.268, 0.253, 0.259],
    [0.161, 0.165, 0.150, 0.128, 0.145], [0.248, 0.011, 0.021, 0.014, 0.010],
    [0.140, 0.127, 0.081, 0.126, 0.143], [0.224, 0.177, 0.176, 0.182, 0.032],
    [0.333, 0.223, 0.232, 0.213, 0.022], [0.099, 0.011, 0.046, 0.014, 0.011],
    [0.308, 0.216, 0.243, 0.210, 0.220], [0.212, 0.211, 0.234, 0.185, 0.262],
    [0.251, 0.116, 0.172, 0.112, 0.142], [0.156, 0.027, 0.024, 0.022, 0.028],
    [0.231, 0.175, 0.192, 0.174, 0.056]])


def printed(x, digits):
    """The thesis prints most decimals truncated, some rounded (1.7407 as 1.741): accept
    either reading of the printed figure."""
    return {math.floor(x * 10 ** digits + 1e-9) / 10 ** digits, round(x, digits)}


def test_friedman_table_3_6():
    res = friedman(T36)
    np.testing.assert_array_equal(res.ranks, T36_RANKS)
    for value, shown in zip(res.mean_ranks, [2.148, 1.741, 2.111]):
        assert shown in printed(value, 3)
    assert 1.39 in printed(res.f, 2)                   # "A estatística F é de 1.39"
    assert res.df == (2, 52) and round(res.f_critical, 2) == 3.18
    assert not res.significant


def test_friedman_table_5_2():
    res = friedman(T52, higher_is_better=False)
    assert 17.20 in printed(res.f, 2)                  # "estatística F de 17.20"
    assert res.df == (4, 104) and round(res.f_critical, 2) == 2.46
    assert res.significant
    assert 1.17 in printed(res.cd_nemenyi, 2)          # Nemenyi CD quoted in the text
    # Fig. 5.6: CaliNB-LexProb-J48 and LexProb-J48-NB not significantly different;
    # CaliNB significantly better than NB, LexRank worse than everything else
    groups = [g.tolist() for g in critical_difference_groups(res.mean_ranks, res.cd_nemenyi)]
    assert groups == [[3, 1, 4], [1, 4, 2]]


def test_friedman_formulas_by_hand_and_scipy():
    rng = np.random.default_rng(0)
    table = np.round(rng.random((12, 4)), 1)  # ties inside rows
    res = friedman(table)
    R = sps.rankdata(-table, axis=1)
    n, k = table.shape
    mr = R.mean(axis=0)
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(mr ** 2) - k * (k + 1) ** 2 / 4)
    assert res.chi2 == pytest.approx(chi2)
    assert res.f == pytest.approx((n - 1) * chi2 / (n * (k - 1) - chi2))
    assert res.chi2_pvalue == pytest.approx(sps.chi2.sf(chi2, k - 1))
    corrected = friedman(table, tie_correction=True)
    ref = sps.friedmanchisquare(*table.T)
    assert corrected.chi2 == pytest.approx(ref.statistic)
    assert corrected.chi2_pvalue == pytest.approx(ref.pvalue)
    # lower-is-better ranks are the mirror image
    np.testing.assert_allclose(friedman(-table, higher_is_better=False).mean_ranks, mr)


def test_critical_difference_quantiles_demsar():
    # Demšar (2006) Table 5, alpha = 0.05: q for Nemenyi and Bonferroni-Dunn
    for k, q_nem, q_bd in [(2, 1.960, 1.960), (3, 2.343, 2.241), (5, 2.728, 2.498),
                           (10, 3.164, 2.773)]:
        res = friedman(np.random.default_rng(k).random((6, k)))
        scale = math.sqrt(k * (k + 1) / (6 * 6))
        assert res.cd_nemenyi / scale == pytest.approx(q_nem, abs=1e-3)  # Demšar truncates
        assert res.cd_bonferroni_dunn / scale == pytest.approx(q_bd, abs=1e-3)


def _chi2_by_hand(table, correct):
    """Friedman's chi2 straight from Demšar's formula (rank 1 = the largest value), with
    the tie correction of scipy.stats.friedmanchisquare when ``correct``."""
    n, k = table.shape
    ranks = np.array([sps.rankdata(-row) for row in table])
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(ranks.mean(axis=0) ** 2) - k * (k + 1) ** 2 / 4)
    if correct:
        ties = sum(np.sum(c ** 3 - c) for c in
                   (np.unique(row, return_counts=True)[1] for row in ranks))
        chi2 /= 1 - ties / (n * k * (k * k - 1))
    return chi2


@pytest.mark.parametrize("row, n, correct", [
    ((2, 1), 2, False), ((3, 2, 1), 3, False), ((3, 2, 1), 3, True), ((4, 3, 2, 1), 2, False),
    ((2, 2, 1), 3, True), ((2, 2, 1, 1), 2, True), ((3, 2, 2, 1), 3, True)])
def test_friedman_when_every_data_set_ranks_alike(row, n, correct):
    """chi2 at its largest, N (k - 1), with scipy's p-value; F infinite; the p-value of F
    the exact permutation probability of a chi2 this large: counted over every way the
    rows can be ordered (each row's values in any order)."""
    table = np.array([row] * n, float)
    res = friedman(table, tie_correction=correct)
    n, k = table.shape
    assert res.chi2 == pytest.approx(n * (k - 1))
    if k >= 3:
        ref = sps.friedmanchisquare(*table.T)
        assert res.chi2 == pytest.approx(ref.statistic)
        assert res.chi2_pvalue == pytest.approx(ref.pvalue)
    orders = sorted(set(itertools.permutations(row)))
    top = _chi2_by_hand(table, correct)
    extreme = sum(_chi2_by_hand(np.array(rows, float), correct) >= top - 1e-9
                  for rows in itertools.product(orders, repeat=n))
    assert res.f == math.inf
    assert res.f_pvalue == pytest.approx(extreme / len(orders) ** n, rel=1e-12)
    assert res.significant == (res.f_pvalue < 0.05)


def test_friedman_perfect_agreement_and_errors():
    res = friedman([[3, 2, 1], [3, 2, 1], [3, 2, 1], [3, 2, 1]])
    assert res.f == math.inf and res.f_pvalue == pytest.approx(6.0 ** -3) and res.significant
    np.testing.assert_array_equal(res.mean_ranks, [1, 2, 3])
    two = friedman([[0.9, 0.8], [0.7, 0.6]])  # two data sets agreeing: a coin's chance
    assert two.f == math.inf and two.f_pvalue == 0.5 and not two.significant
    # identical rows with ties and no correction do not reach the largest chi2: the F test
    tied = friedman([[2, 2, 1]] * 3)
    assert tied.chi2 == pytest.approx(_chi2_by_hand(np.array([[2.0, 2, 1]] * 3), False))
    assert tied.f == pytest.approx(2 * tied.chi2 / (3 * 2 - tied.chi2))
    assert tied.f_pvalue == pytest.approx(sps.f.sf(tied.f, 2, 4))
    with pytest.raises(ValueError, match="at least 2"):
        friedman([[1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        friedman([[1.0, np.nan], [1.0, 2.0]])


def test_critical_difference_diagram():
    import matplotlib  # the `report` extra; needed by the test suite
    matplotlib.use("Agg")
    res = friedman(T52, higher_is_better=False)
    names = ["LexRank", "LexProb", "NB", "CaliNB", "J48"]
    ax = critical_difference_diagram(res.mean_ranks, names, res.cd_nemenyi)
    texts = [t.get_text() for t in ax.texts]
    for name in names:
        assert any(t.startswith(name + " (") for t in texts)
    assert "CD = 1.17" in texts
    thick = [c for c in ax.collections if max(c.get_linewidths()) == 4]
    assert len(thick) == 2
    with pytest.raises(ValueError, match="names"):
        critical_difference_diagram(res.mean_ranks, names[:2], 1.0)


# ---- error estimation (ml-concepts chapter) -------------------------------------------------

def test_confusion_matrix_rows_are_true_classes():
    from sklearn.metrics import confusion_matrix as sk_cm
    y_true = ["a", "b", "a", "c", "c", "c"]
    y_pred = ["a", "a", "b", "c", "a", "c"]
    m = confusion_matrix(y_true, y_pred)
    np.testing.assert_array_equal(m, [[1, 1, 0], [1, 0, 0], [1, 0, 2]])
    np.testing.assert_array_equal(m, sk_cm(y_true, y_pred))
    np.testing.assert_array_equal(confusion_matrix([1, 0], [1, 1], labels=[1, 0]), [[1, 0], [1, 0]])
    with pytest.raises(ValueError, match="not in labels"):
        confusion_matrix([0, 2], [0, 1], labels=[0, 1])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40),
       st.integers(0, 2**32 - 1))
def test_cost_error_both_forms_agree(pairs, seed):
    y_true = [p[0] for p in pairs]
    y_pred = [p[1] for p in pairs]
    labels = [0, 1, 2, 3]
    cost = np.random.default_rng(seed).integers(1, 9, (4, 4)).astype(float)
    np.fill_diagonal(cost, 0)
    direct = cost_error(y_true, y_pred, cost, labels=labels)
    via_confusion = confusion_cost_error(confusion_matrix(y_true, y_pred, labels=labels), cost)
    assert direct == pytest.approx(via_confusion)
    unit = np.ones((4, 4)) - np.eye(4)  # unit costs: the plain error rate (eq. 4.1)
    assert cost_error(y_true, y_pred, unit, labels) == pytest.approx(
        np.mean(np.array(y_true) != np.array(y_pred)))


def test_cost_matrix_checks():
    with pytest.raises(ValueError, match="zero diagonal"):
        cost_error([0, 1], [0, 1], [[1, 1], [1, 0]])
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        cost_error([0, 1], [0, 1], np.zeros((3, 3)))


def test_majority_error_and_mean_se():
    y = [1] * 60 + [2] * 15 + [3] * 25  # the chapter's 60% / 15% / 25% example
    assert majority_error(y) == pytest.approx(0.40)
    errors = [0.10, 0.12, 0.08, 0.11, 0.09]
    mean, sd = mean_se(errors)
    assert mean == pytest.approx(0.10)
    # eq. 4.18: 1/r * 1/(r-1) * sum of squared deviations = 1/5 * 1/4 * 0.001
    assert sd == pytest.approx(math.sqrt(0.001 / 20))
    with pytest.raises(ValueError, match="at least 2"):
        mean_se([0.1])


def test_compare_two_chapter_example():
    # errors 9 +- 1 (standard) against 7.50 +- 0.80 (proposed)
    res = compare_two(9.0, 1.0, 7.5, 0.8)
    assert res.difference == pytest.approx(1.5)
    assert res.sd == pytest.approx(math.sqrt((1 + 0.64) / 2))
    assert res.ad == pytest.approx(1.5 / math.sqrt(0.82))
    assert res.winner == "proposed" and not res.significant
    strong = compare_two(9.0, 0.5, 7.5, 0.5)
    assert strong.ad == pytest.approx(3.0) and strong.significant
    assert compare_two(7.0, 1.0, 9.0, 1.0).winner == "standard"


# ---- review fixes: degenerate Friedman tables, non-finite inputs -----------------------------

@pytest.mark.parametrize("tie_correction", [False, True])
def test_friedman_all_rows_fully_tied_is_no_evidence(tie_correction):
    # every classifier equal on every data set: the tie correction is 0/0 there
    res = friedman(np.ones((3, 3)), tie_correction=tie_correction)
    assert res.chi2 == 0.0 and res.chi2_pvalue == 1.0
    assert res.f == 0.0 and res.f_pvalue == 1.0 and not res.significant
    np.testing.assert_array_equal(res.mean_ranks, [2, 2, 2])


def test_friedman_tie_correction_partly_tied_rows_unchanged():
    from scipy.stats import friedmanchisquare
    table = np.array([[1, 1, 2], [1, 1, 1], [3, 1, 2], [2, 2, 1]], dtype=float)
    res = friedman(table, tie_correction=True)
    assert res.chi2 == pytest.approx(friedmanchisquare(*table.T).statistic)
    assert np.isfinite(res.f) and 0.0 < res.f_pvalue <= 1.0


@pytest.mark.parametrize("a, b, name", [
    ([np.inf, 2.0, 3.0], [1.0, 1.0, 1.0], "a"),
    ([1.0, 2.0, 3.0], [1.0, -np.inf, 1.0], "b"),
    ([1.0, np.nan, 3.0], [1.0, 1.0, 1.0], "a"),
])
def test_paired_tests_reject_non_finite(a, b, name):
    for test in (paired_ttest, wilcoxon):
        with pytest.raises(ValueError, match=f"{name} contains NaN or infinity"):
            test(a, b)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_mean_se_rejects_non_finite(bad):
    with pytest.raises(ValueError, match="values contains NaN or infinity"):
        mean_se([bad, 1.0])


@pytest.mark.parametrize("args, name", [
    ((np.nan, 1.0, 0.0, 1.0), "mean_standard"),
    ((1.0, np.inf, 0.0, 1.0), "sd_standard"),
    ((1.0, 1.0, -np.inf, 1.0), "mean_proposed"),
    ((1.0, 1.0, 0.0, np.nan), "sd_proposed"),
])
def test_compare_two_rejects_non_finite(args, name):
    with pytest.raises(ValueError, match=f"{name} contains NaN or infinity"):
        compare_two(*args)


def test_compare_two_negative_sd():
    with pytest.raises(ValueError, match="non-negative"):
        compare_two(1.0, -0.1, 0.5, 0.1)


def test_cost_checks_reject_non_finite():
    cost = np.ones((2, 2)) - np.eye(2)
    with pytest.raises(ValueError, match="confusion contains NaN or infinity"):
        confusion_cost_error([[1.0, np.nan], [0.0, 2.0]], cost)
    with pytest.raises(ValueError, match="confusion contains NaN or infinity"):
        confusion_cost_error([[1.0, np.inf], [0.0, 2.0]], cost)
    with pytest.raises(ValueError, match="cost contains NaN or infinity"):
        confusion_cost_error([[1.0, 0.0], [0.0, 2.0]], [[0.0, np.inf], [1.0, 0.0]])
    with pytest.raises(ValueError, match="cost contains NaN or infinity"):
        cost_error([0, 1], [0, 1], [[0.0, np.nan], [1.0, 0.0]])


def test_confusion_matrix_refuses_repeated_labels():
    with pytest.raises(ValueError, match=r"labels must be distinct; repeated: \[2\]"):
        confusion_matrix([0, 1, 2], [0, 1, 2], labels=[0, 1, 2, 2])
    with pytest.raises(ValueError, match="labels must be distinct"):
        cost_error([0, 1], [1, 0], np.zeros((3, 3)), labels=[0, 1, 0])
    assert confusion_matrix([0, 1, 2], [0, 2, 2], labels=[2, 0, 1]).tolist() == \
        [[1, 0, 0], [0, 1, 0], [1, 0, 0]]


@pytest.mark.parametrize("cd", [float("nan"), -0.5, float("inf"), "1", None, True])
def test_critical_difference_groups_refuses_a_bad_cd(cd):
    with pytest.raises(ValueError, match="cd must be a finite number >= 0"):
        critical_difference_groups([1.0, 2.0, 3.0], cd)


def test_critical_difference_groups_refuses_bad_mean_ranks():
    with pytest.raises(ValueError, match="mean_ranks must be a 1-D array of finite numbers"):
        critical_difference_groups([1.0, float("nan")], 1.0)
    with pytest.raises(ValueError, match="mean_ranks must be a 1-D"):
        critical_difference_groups([[1.0, 2.0]], 1.0)
    assert [g.tolist() for g in critical_difference_groups([1.0, 1.5, 3.0], 0.0)] == []
    assert [g.tolist() for g in critical_difference_groups([1.0, 1.0, 3.0], 0.0)] == [[0, 1]]


@pytest.mark.parametrize("call", [
    lambda z: paired_ttest(z, [1.0, 2.0, 3.0]),
    lambda z: wilcoxon([1.0, 2.0, 3.0], z),
    lambda z: friedman(np.stack([z, z + 1])),
    lambda z: mean_se(z),
    lambda z: critical_difference_groups(z, 1.0),
    lambda z: confusion_cost_error(np.diag(z), np.zeros((3, 3))),
])
def test_complex_input_is_a_type_error(call):
    """The imaginary part is never dropped with a mere warning."""
    with pytest.raises(TypeError, match="real numeric values, got dtype complex"):
        call(np.array([1.0, 2.0, 3.0]) + 1j)


# ---- Holm's step-down correction ----------------------------------------------------------

def _step_down(p, alpha):
    """Holm (1979) run as the procedure: in increasing order of p, reject while p_(i) <=
    alpha / (m - i + 1), stop at the first that is not."""
    p = np.asarray(p, dtype=float)
    reject = np.zeros(p.size, bool)
    for i, j in enumerate(np.argsort(p, kind="stable")):
        if p[j] > alpha / (p.size - i):
            break
        reject[j] = True
    return reject


# recorded from statsmodels 0.14 multipletests(p, alpha=0.05, method="holm") in a scratch
# environment (statsmodels is not a dependency)
STATSMODELS_HOLM = [
    ([0.01, 0.04, 0.03, 0.005], [True, False, False, True], [0.03, 0.06, 0.06, 0.02]),
    ([0.2, 0.001, 0.04, 0.04, 0.9, 0.011], [False, True, False, False, False, False],
     [0.4, 0.006, 0.16, 0.16, 0.9, 0.055]),
    ([0.5], [False], [0.5]),
]


@pytest.mark.parametrize("p, reject, adjusted", STATSMODELS_HOLM)
def test_holm_matches_statsmodels(p, reject, adjusted):
    res = holm(p, alpha=0.05)
    np.testing.assert_allclose(res.adjusted, adjusted, rtol=1e-12)
    assert res.reject.tolist() == reject


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12),
       st.sampled_from([0.01, 0.05, 0.1]))
@settings(max_examples=300, deadline=None)
def test_holm_is_the_step_down_procedure(p, alpha):
    res = holm(p, alpha)
    assert res.reject.tolist() == _step_down(p, alpha).tolist()
    assert (res.adjusted >= np.asarray(p)).all() and (res.adjusted <= 1).all()
    # adjusted p-values keep the order of the raw ones
    order = np.argsort(p, kind="stable")
    assert (np.diff(res.adjusted[order]) >= 0).all()


@pytest.mark.parametrize("p, match", [([], "non-empty 1-D"), ([[0.1]], "non-empty 1-D"),
                                      ([0.1, np.nan], r"\[0, 1\]"), ([1.5], r"\[0, 1\]"),
                                      ([-0.1], r"\[0, 1\]")])
def test_holm_bad_input(p, match):
    with pytest.raises(ValueError, match=match):
        holm(p)
    with pytest.raises(ValueError, match="alpha"):
        holm([0.1], alpha=1.0)
