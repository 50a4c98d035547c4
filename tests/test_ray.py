"""fastrank.ray.evaluate on a local Ray (2 CPUs) equals fastrank.metrics.evaluate."""
import numpy as np
import pyarrow as pa
import pytest
import ray

from fastrank.metrics import ALL_TIES, evaluate
from fastrank.ray import evaluate as ray_evaluate

N, Q = 100_000, 200


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _data(n=N, q=Q):
    rng = np.random.default_rng(11)
    scores = rng.integers(0, 8, (n, q)) / 7           # coarse beliefs: many ties
    truth = (rng.random((n, q)) < 0.05).astype(np.uint8)
    weight = rng.random(n) + 0.5
    return truth, scores, weight


def _list_column(matrix):
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])


def _dataset(truth, scores, weight, blocks=5):
    table = pa.table({"truth": _list_column(truth), "beliefs": _list_column(scores),
                      "w": weight, "name": [str(i) for i in range(len(weight))]})
    bounds = np.linspace(0, len(weight), blocks + 1).astype(int)
    return ray.data.from_arrow([table.slice(lo, hi - lo) for lo, hi in zip(bounds, bounds[1:])])


def test_equals_evaluate_on_all_rows(local_ray):
    truth, scores, weight = _data()
    ds = _dataset(truth, scores, weight)
    assert ds.materialize().num_blocks() >= 4
    got = ray_evaluate(ds, "truth", "beliefs", sample_weight="w", ties=ALL_TIES)
    expected = evaluate(truth, scores, ties=ALL_TIES, sample_weight=weight)
    np.testing.assert_allclose(got.values, expected.values, rtol=1e-12, atol=1e-12)


def test_tensor_columns(local_ray):
    truth, scores, _ = _data(900, 12)
    ds = ray.data.from_items([{"y_true": t, "y_score": s} for t, s in zip(truth, scores)],
                             override_num_blocks=4)
    np.testing.assert_allclose(ray_evaluate(ds).values, evaluate(truth, scores).values,
                               rtol=1e-12, atol=1e-12)


def test_bad_columns_are_named(local_ray):
    truth, scores, weight = _data(100, 5)
    ds = _dataset(truth, scores, weight, blocks=2)
    with pytest.raises(TypeError, match="column 'name' must hold one equal-length array"):
        ray_evaluate(ds, "truth", "name")
    with pytest.raises(ValueError, match="no column 'y_true'"):
        ray_evaluate(ds)
