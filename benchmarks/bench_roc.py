"""Per-label AUC on 10 000 x 1 000 tied beliefs (vote fractions k/10, as kNN gives) against
scikit-learn ``roc_auc_score(average=None)``, 1 and 2 OpenMP threads; unweighted and with a
random ``sample_weight`` per document.

Run: flock /tmp/fastrank-bench.lock .venv/bin/python -m pytest benchmarks/bench_roc.py \
         --benchmark-only -q -p no:cacheprovider
"""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from fastrank.metrics import auc

N, Q = 10_000, 1_000


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    Y = (rng.random((N, Q)) < 0.05).astype(np.uint8)
    Y[0], Y[1] = 1, 0  # every label has both classes (sklearn raises otherwise)
    # beliefs correlated with the truth, quantised to 11 levels: heavy ties
    S = np.clip(np.round((0.3 * Y + rng.random((N, Q)) * 0.7) * 10) / 10, 0, 1)
    return Y, S


@pytest.mark.benchmark(group="auc-per-label-10000x1000")
@pytest.mark.parametrize("threads", [1, 2])
def test_fastrank_auc_per_label(benchmark, problem, threads):
    Y, S = problem
    with threadpool_limits(threads, user_api="openmp"):
        out = benchmark(auc, Y, S, None)
    np.testing.assert_allclose(out[:20], roc_auc_score(Y[:, :20], S[:, :20], average=None))


@pytest.mark.benchmark(group="auc-per-label-10000x1000")
def test_sklearn_roc_auc_score_per_label(benchmark, problem):
    Y, S = problem
    benchmark.pedantic(roc_auc_score, args=(Y, S), kwargs={"average": None}, rounds=3,
                       iterations=1)


@pytest.mark.benchmark(group="auc-per-label-10000x1000-weighted")
@pytest.mark.parametrize("threads", [1, 2])
def test_fastrank_auc_per_label_weighted(benchmark, problem, threads):
    Y, S = problem
    w = np.random.default_rng(1).random(N)
    with threadpool_limits(threads, user_api="openmp"):
        out = benchmark(auc, Y, S, None, w)
    np.testing.assert_allclose(out[:20], roc_auc_score(Y[:, :20], S[:, :20], average=None,
                                                       sample_weight=w))


@pytest.mark.benchmark(group="auc-per-label-10000x1000-weighted")
def test_sklearn_roc_auc_score_per_label_weighted(benchmark, problem):
    Y, S = problem
    w = np.random.default_rng(1).random(N)
    benchmark.pedantic(roc_auc_score, args=(Y, S), kwargs={"average": None, "sample_weight": w},
                       rounds=3, iterations=1)
