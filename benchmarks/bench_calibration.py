"""PAV isotonic calibration of 10^6 scores: fastrank ``Isotonic().fit`` against
scikit-learn ``IsotonicRegression().fit``, on continuous scores and on tied scores
(1 001 distinct values). Single-threaded (one sort).

Run: flock /tmp/fastrank-bench.lock .venv/bin/python -m pytest benchmarks/bench_calibration.py \
         --benchmark-only -q -p no:cacheprovider
"""
import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from fastrank.calibration import Isotonic

M = 1_000_000


@pytest.fixture(scope="module", params=["continuous", "tied"])
def problem(request):
    rng = np.random.default_rng(0)
    s = rng.random(M)
    if request.param == "tied":
        s = np.round(s, 3)
    y = (rng.random(M) < s).astype(np.uint8)
    return request.param, s, y


@pytest.mark.benchmark(group="pav-1e6")
def test_fastrank_isotonic_fit(benchmark, problem):
    _, s, y = problem
    iso = benchmark(Isotonic().fit, s, y)
    sk = IsotonicRegression(out_of_bounds="clip").fit(s, y)
    np.testing.assert_allclose(iso.transform(s[:1000]), sk.predict(s[:1000]), atol=1e-12)


@pytest.mark.benchmark(group="pav-1e6")
def test_sklearn_isotonic_fit(benchmark, problem):
    _, s, y = problem
    benchmark.pedantic(IsotonicRegression(out_of_bounds="clip").fit, args=(s, y), rounds=3,
                       iterations=1)
