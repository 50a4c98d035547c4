"""fastrank.rank vs scipy.stats.rankdata(axis=1) on 10 000 x 1 000 heavily tied beliefs.

Run: pytest benchmarks/bench_ranking.py --benchmark-only
Beliefs are quantised to 21 levels (k/20), as coarse classifiers (kNN votes, VG-RAM vote
fractions) produce, as float64 and as float32; a second, tie-free matrix shows the general
(radix-sort) path.
"""
import numpy as np
import pytest
import scipy.stats as ss
from threadpoolctl import threadpool_limits

import fastrank

N, Q = 10_000, 1_000
SCIPY = {"standard": "min", "modified": "max", "dense": "dense", "fractional": "average",
         "stable": "ordinal"}  # SciPy's "ordinal" is our deterministic "stable"; no random one


@pytest.fixture(scope="module")
def tied():
    return np.round(np.random.default_rng(0).random((N, Q)) * 20) / 20


@pytest.fixture(scope="module")
def untied():
    return np.random.default_rng(1).random((N, Q))


@pytest.mark.parametrize("method", ["ordinal", *SCIPY])
@pytest.mark.parametrize("threads", [1, 2])
def test_fastrank_tied(benchmark, tied, method, threads):
    benchmark.group = f"rank tied 10000x1000 {'stable' if method == 'ordinal' else method}"
    benchmark.extra_info.update(threads=threads, peer="scipy.stats.rankdata")
    fastrank.rank(tied[:2], method)  # load the kernel (and libgomp) before limiting threads
    with threadpool_limits(threads, user_api="openmp"):
        benchmark.pedantic(fastrank.rank, args=(tied, method), kwargs={"random_state": 0},
                           rounds=5, iterations=1)


@pytest.mark.parametrize("method", list(SCIPY))
def test_scipy_tied(benchmark, tied, method):
    benchmark.group = f"rank tied 10000x1000 {method}"
    benchmark.pedantic(ss.rankdata, args=(-tied,), kwargs={"method": SCIPY[method], "axis": 1},
                       rounds=3, iterations=1)


@pytest.mark.parametrize("threads", [1, 2])
def test_fastrank_tied_float32(benchmark, tied, threads):
    """float32 beliefs of few distinct values: the counting sort that finds each label's
    belief a vector at a time (AVX-512)."""
    benchmark.group = "rank tied 10000x1000 float32 standard"
    benchmark.extra_info.update(threads=threads, peer="scipy.stats.rankdata")
    S = tied.astype(np.float32)
    fastrank.rank(S[:2], "standard")
    with threadpool_limits(threads, user_api="openmp"):
        benchmark.pedantic(fastrank.rank, args=(S, "standard"), rounds=5, iterations=1)


def test_scipy_tied_float32(benchmark, tied):
    benchmark.group = "rank tied 10000x1000 float32 standard"
    benchmark.pedantic(ss.rankdata, args=(-tied.astype(np.float32),),
                       kwargs={"method": "min", "axis": 1}, rounds=3, iterations=1)


@pytest.mark.parametrize("threads", [1, 2])
def test_fastrank_untied(benchmark, untied, threads):
    benchmark.group = "rank untied 10000x1000 standard"
    fastrank.rank(untied[:2], "standard")
    with threadpool_limits(threads, user_api="openmp"):
        benchmark.pedantic(fastrank.rank, args=(untied, "standard"), rounds=5, iterations=1)


def test_scipy_untied(benchmark, untied):
    benchmark.group = "rank untied 10000x1000 standard"
    benchmark.pedantic(ss.rankdata, args=(-untied,), kwargs={"method": "min", "axis": 1},
                       rounds=3, iterations=1)


SHAPES = [(100_000, 100), (10_000, 1_000), (1_000, 10_000)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("who", ["fastrank-1thread", "fastrank-2threads", "scipy"])
def test_scaling_in_n_and_q(benchmark, shape, who):
    """Same number of beliefs (10^7), different row lengths; 'standard' method, 21 levels."""
    benchmark.group = f"rank scaling {shape[0]}x{shape[1]}"
    S = np.round(np.random.default_rng(2).random(shape) * 20) / 20
    if who == "scipy":
        benchmark.pedantic(ss.rankdata, args=(-S,), kwargs={"method": "min", "axis": 1},
                           rounds=3, iterations=1)
        return
    fastrank.rank(S[:2], "standard")
    with threadpool_limits(1 if who.endswith("1thread") else 2, user_api="openmp"):
        benchmark.pedantic(fastrank.rank, args=(S, "standard"), rounds=5, iterations=1)
