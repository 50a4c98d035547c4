import math

import numpy as np
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fastrank.stats import paired_ttest

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


def test_paired_ttest_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        paired_ttest([1.0, 2.0], [2.0, 2.0], alpha=1.5)


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
    if d.std(ddof=1) == 0:
        assert math.isinf(res.statistic) and res.pvalue == 0.0
        return
    ref = sps.ttest_rel(a, b)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-9, abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-8, abs=1e-14)
    # symmetry: swapping the samples flips the sign only
    swapped = paired_ttest(b, a)
    assert swapped.statistic == pytest.approx(-res.statistic)
    assert swapped.pvalue == pytest.approx(res.pvalue)
