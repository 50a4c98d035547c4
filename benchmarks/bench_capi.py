"""The C API in another tool's row loop: ``eval_add_row`` called once a row from compiled
code without the GIL (the Cython example of the embedding guide, tests/embedding/cython_ext,
built here), against the Python API fed the same rows one call a row and in one call; and
under the expected ranking, ``eval_add_row_exact`` (boundary records kept by the caller,
counted every 256 rows, then ``eval_result_exact``) against ``eval_add_row``'s draws and
against ``Evaluator.update`` of all rows (both exact: the same values).

Run: flock /tmp/fastrank-bench.lock pytest benchmarks/bench_capi.py --benchmark-only
Data: 20 000 × 1 000 float64 beliefs at 21 levels, about 1 % relevant, one OpenMP thread;
the modified ranking (each row's label counts and the per-document sums of the
:class:`~fastrank.Evaluator`, the same bits either way). ``Evaluator.update`` one row a
call is timed on the first 2 000 rows and scaled to all (``scaled_to_all_s``).
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from fastrank import Evaluator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from embedding_build import build_example  # noqa: E402

N, Q, LEVELS = 20_000, 1_000, 21
BY_ROW = 2_000  # rows timed when the Python API is called a row at a time
MODIFIED = 1 << 3  # FASTRANK_TIES_MODIFIED
EXPECTED = 4  # FASTRANK_TIES_EXPECTED
N_DRAWS = 100  # Evaluator's default
SEED = 7


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    return build_example("cython_ext", "embed_cython", tmp_path_factory.mktemp("cython_ext"))


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, LEVELS, (N, Q)) / (LEVELS - 1)
    truth = (rng.random((N, Q)) < 0.01).astype(np.uint8)
    return scores, truth


def _evaluator():
    return Evaluator("modified", random_state=SEED)


def test_capi_rows(benchmark, example, rows):
    scores, truth = rows

    def run():
        state = example.Evaluation(Q, MODIFIED, -1, 0, SEED)
        state.add_rows(scores, truth, 0)  # eval_add_row on each row, without the GIL
        return state

    benchmark.group = "a row a call (modified)"
    state = benchmark.pedantic(run, rounds=5, iterations=1)
    ev = _evaluator()
    ev.update(truth, scores)
    np.testing.assert_allclose(state.result(3), ev.result().values[0], rtol=1e-12)


def test_evaluator_by_row(benchmark, rows):
    scores, truth = rows

    def run():
        ev = _evaluator()
        for i in range(BY_ROW):
            ev.update(truth[i:i + 1], scores[i:i + 1], first_row=i)
        return ev

    benchmark.group = "a row a call (modified)"
    with threadpool_limits(limits=1, user_api="openmp"):
        benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info.update(documents=BY_ROW,
                                scaled_to_all_s=benchmark.stats.stats.min * N / BY_ROW)


def test_evaluator_whole(benchmark, rows):
    scores, truth = rows

    def run():
        ev = _evaluator()
        ev.update(truth, scores)
        return ev

    benchmark.group = "a row a call (modified)"
    with threadpool_limits(limits=1, user_api="openmp"):
        benchmark.pedantic(run, rounds=5, iterations=1)


def test_capi_rows_expected_exact(benchmark, example, rows):
    scores, truth = rows

    def run():
        state = example.Evaluation(Q, 1 << EXPECTED, -1, N_DRAWS, SEED)
        state.add_rows_exact(scores, truth, 0, np.ones(N))
        return state, state.result_exact(EXPECTED)

    benchmark.group = "a row a call (expected)"
    state, values = benchmark.pedantic(run, rounds=5, iterations=1)
    ev = Evaluator("expected", random_state=SEED, n_draws=N_DRAWS)
    ev.update(truth, scores)
    np.testing.assert_allclose(values, ev.result().values[0], rtol=1e-12)
    benchmark.extra_info.update(records=sum(len(r) for r in state.records))


def test_capi_rows_expected_drawn(benchmark, example, rows):
    scores, truth = rows

    def run():
        state = example.Evaluation(Q, 1 << EXPECTED, -1, N_DRAWS, SEED)
        state.add_rows(scores, truth, 0)
        return state.result(EXPECTED)

    benchmark.group = "a row a call (expected)"
    benchmark.pedantic(run, rounds=5, iterations=1)


def test_evaluator_whole_expected(benchmark, rows):
    scores, truth = rows

    def run():
        ev = Evaluator("expected", random_state=SEED, n_draws=N_DRAWS)
        ev.update(truth, scores)
        return ev.result()

    benchmark.group = "a row a call (expected)"
    with threadpool_limits(limits=1, user_api="openmp"):
        benchmark.pedantic(run, rounds=5, iterations=1)
