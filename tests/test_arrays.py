"""Arrays of other libraries (PyTorch, JAX, polars, pandas) as inputs: the same values as
NumPy input, read without a copy when they are in host memory."""
import jax.numpy as jnp
import numpy as np
import pandas as pd
import polars as pl
import pytest
import torch

import fastrank
from fastrank import metrics
from fastrank._validation import check_features, check_scores, check_truth


def _data():
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 5, (40, 9)) / 4            # coarse beliefs: many ties
    truth = rng.integers(0, 2, (40, 9)).astype(np.uint8)
    truth[:, 0] = 1                                     # every row has a relevant label
    pred = rng.integers(0, 2, (40, 9)).astype(np.uint8)
    weight = rng.random(40) + 0.1
    return truth, scores, pred, weight


def _torch(a):
    return torch.from_numpy(a)


def _jax(a):
    return jnp.asarray(a)


def _polars(a):
    return pl.from_numpy(np.asfortranarray(a)) if a.ndim == 2 else pl.Series(a)


def _pandas(a):
    return pd.DataFrame(a) if a.ndim == 2 else pd.Series(a)


LIBRARIES = {"torch": _torch, "jax": _jax, "polars": _polars, "pandas": _pandas}

# the metrics, ranking functions and classifiers: (name, call(truth, scores, pred, weight))
CALLS = [
    ("evaluate", lambda t, s, p, w: metrics.evaluate(t, s, ties=metrics.ALL_TIES,
                                                     sample_weight=w).values),
    ("Evaluator.update", lambda t, s, p, w: metrics.Evaluator().update(t, s, sample_weight=w)
     .update(t, s).result().values),
    ("rank", lambda t, s, p, w: fastrank.rank(s, "modified")),
    ("tie_groups", lambda t, s, p, w: fastrank.tie_groups(s).end),
    ("cutoff", lambda t, s, p, w: metrics.cutoff(s, t)),
    *[(f, lambda t, s, p, w, f=f: getattr(metrics, f)(t, s, ties="expected", sample_weight=w))
      for f in ("one_error", "coverage", "ranking_loss", "average_precision", "r_precision")],
    *[(f, lambda t, s, p, w, f=f: getattr(metrics, f)(t, p, sample_weight=w))
      for f in ("hamming_loss", "exact_match", "zero_one_loss", "accuracy", "precision",
                "recall", "f1")],
    ("fbeta", lambda t, s, p, w: metrics.fbeta(t, p, beta=2.0)),
    ("contingency", lambda t, s, p, w: metrics.contingency(t, p).tp),
    ("label_problem_rates", lambda t, s, p, w: list(metrics.label_problem_rates(t, p).values())),
    ("auc", lambda t, s, p, w: metrics.auc(t, s, sample_weight=w)),
    ("roc_curve", lambda t, s, p, w: metrics.roc_curve(w > 0.6, w)[1]),
    ("evaluate_at_k", lambda t, s, p, w: metrics.evaluate_at_k(t, s, k=(1, 3), sample_weight=w)
     .values),
    *[(f, lambda t, s, p, w, f=f: getattr(metrics, f)(t, s, k=3))
      for f in ("precision_at_k", "recall_at_k", "dcg_at_k", "ndcg_at_k")],
    ("psprecision_at_k", lambda t, s, p, w: metrics.psprecision_at_k(t, s, metrics.propensity(t),
                                                                   k=3)),
    ("propensity", lambda t, s, p, w: metrics.propensity(t)),
    ("KNN", lambda t, s, p, w: fastrank.KNN(k=3).fit(s, t).decision_function(s)),
    ("MLkNN", lambda t, s, p, w: fastrank.MLkNN(k=3).fit(s, t).decision_function(s)),
    ("VGRAM", lambda t, s, p, w: fastrank.VGRAM().fit(s, t).decision_function(s)),
    ("topk_cosine", lambda t, s, p, w: fastrank.topk_cosine(s + 0.1, s + 0.1, 3)[1]),
]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_same_values_as_numpy(library, name, call):
    data = _data()
    if library == "jax":  # JAX holds float32 unless told otherwise: the same values in NumPy
        data = [a.astype(np.float32) if a.dtype == np.float64 else a for a in data]
    expected = call(*data)
    got = call(*map(LIBRARIES[library], data))
    np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(expected, dtype=float))


def _address(a):
    return a.__array_interface__["data"][0]


def test_torch_cpu_tensors_are_read_in_place():
    truth, scores, _, _ = _data()
    s, t = torch.from_numpy(scores), torch.from_numpy(truth)
    assert _address(check_scores(s)) == s.data_ptr()
    assert _address(check_truth(t)) == t.data_ptr()
    f32 = torch.rand(6, 3, dtype=torch.float32)
    assert _address(check_features(f32)) == f32.data_ptr()
    transposed = s.T  # Fortran order: a view as well
    assert _address(check_scores(transposed)) == transposed.data_ptr()


def test_jax_cpu_arrays_are_read_in_place():
    scores = jnp.asarray(_data()[1])
    assert _address(check_scores(scores)) == scores.unsafe_buffer_pointer()


def test_polars_and_pandas_frames_are_read_in_place():
    scores = np.asfortranarray(_data()[1])
    frame = pl.from_numpy(scores)
    view = check_scores(frame)
    # polars keeps the columns in one Fortran-ordered buffer: the view is of polars' memory
    assert np.shares_memory(view, frame.to_numpy())
    assert np.shares_memory(view[:, 3], frame.get_column(frame.columns[3]).to_numpy())
    single = pd.DataFrame(scores, copy=False)  # one float block
    assert np.shares_memory(check_scores(single), single.to_numpy())


class _DeviceArray:
    """An array that says it lives on a CUDA device (DLPack device type 2) and exports a
    host copy only when asked for one, as a GPU library does."""

    def __init__(self, values):
        self.values, self.requests = values, []

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kwargs):
        self.requests.append(kwargs)
        if kwargs.get("dl_device") != (1, 0) or not kwargs.get("copy"):
            raise BufferError("device memory: ask for a copy to the CPU")
        return self.values.copy().__dlpack__()


def test_device_arrays_are_copied_to_host_once():
    truth, scores, _, _ = _data()
    device = _DeviceArray(scores)
    got = metrics.evaluate(truth, device).values
    np.testing.assert_array_equal(got, metrics.evaluate(truth, scores).values)
    assert len(device.requests) == 1
    assert device.requests[0]["dl_device"] == (1, 0) and device.requests[0]["copy"] is True


def test_unreadable_tensors_raise_a_typeerror_naming_the_argument():
    truth, scores, _, _ = _data()
    with pytest.raises(TypeError, match="y_score: cannot read this torch.Tensor.*detach"):
        metrics.coverage(truth, torch.from_numpy(scores).requires_grad_())
    with pytest.raises(TypeError, match="sample_weight: cannot read"):
        metrics.coverage(truth, scores, sample_weight=torch.ones(40, dtype=torch.bfloat16))


def test_outputs_are_numpy():
    truth, scores, _, _ = _data()
    assert type(fastrank.rank(torch.from_numpy(scores))) is np.ndarray
    assert type(metrics.evaluate(torch.from_numpy(truth), jnp.asarray(scores)).values) \
        is np.ndarray
