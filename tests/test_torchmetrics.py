"""fastrank.torchmetrics.StudyMetrics: batches, forward, reset, subsets, weights, and two
processes under torch.distributed (gloo) equal to fastrank.metrics.evaluate on all rows,
exact "expected" values included."""
import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from fastrank.metrics import ALL_TIES, ESTIMATED_KEYS, METRIC_KEYS, Evaluator, evaluate
from fastrank.torchmetrics import PROCESS_ROWS, StudyMetrics

N, Q = 1200, 30
BATCHES = [(lo, min(N, lo + size)) for lo, size in zip(range(0, N, 100), [100] * 12)]


def _data(n=N, q=Q, seed=3):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 6, (n, q)) / 5               # coarse beliefs: many ties
    truth = (rng.random((n, q)) < 0.2).astype(np.uint8)
    weight = rng.random(n) + 0.5
    return truth, scores, weight


def _values(computed, ties=ALL_TIES, keys=METRIC_KEYS):
    """The (len(ties), len(keys)) array of a compute() dict."""
    return np.array([[computed[f"{k}/{t}"].item() for k in keys] for t in ties])


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_batches_equal_evaluate_on_all_rows():
    truth, scores, weight = _data()
    metric = StudyMetrics(Q, ties=ALL_TIES)
    for lo, hi in BATCHES:
        metric.update(torch.from_numpy(scores[lo:hi]), torch.from_numpy(truth[lo:hi]),
                      sample_weight=torch.from_numpy(weight[lo:hi]))
    expected = evaluate(truth, scores, ties=ALL_TIES, sample_weight=weight)
    _close(_values(metric.compute()), expected.values)
    # the sums hold O(n_labels) floats: the same sizes after one batch as after all
    sizes = {k: v.numel() for k, v in metric.metric_state.items() if k != "boundary"}
    metric.reset()
    metric.update(scores[:5], truth[:5])
    assert {k: v.numel() for k, v in metric.metric_state.items() if k != "boundary"} == sizes


def test_unweighted_batches_and_forward_equal_evaluate_exactly():
    """Without weights every value is exact, macro precision and F1 by category of
    "expected" too (no draws, no standard error), whether batches come through update or
    forward; forward returns each batch's own values; the boundary counts stay a short
    list of tensors, counted again as they grow."""
    truth, scores, _ = _data()
    metric = StudyMetrics(Q, ties=ALL_TIES)
    for i, (lo, hi) in enumerate(BATCHES):
        args = torch.from_numpy(scores[lo:hi]), torch.from_numpy(truth[lo:hi])
        if i % 2:
            metric.update(*args)
            continue
        batch = metric(*args)
        ev = Evaluator(ALL_TIES).update(truth[lo:hi], scores[lo:hi], first_row=lo)
        _close(_values(batch), ev.result().values)
    assert len(metric.boundary) <= 4
    got, want = metric.evaluation(), evaluate(truth, scores, ties=ALL_TIES)
    _close(got.values, want.values)
    t, cols = ALL_TIES.index("expected"), [METRIC_KEYS.index(k) for k in ESTIMATED_KEYS]
    assert got.values[t, cols].tolist() == want.values[t, cols].tolist()  # the same counts
    assert np.isnan(got.stderr).all() and got.n_draws == 0 and int(metric.drawn) == 0


def test_reset_subset_and_options():
    truth, scores, _ = _data()
    metric = StudyMetrics(Q, metrics=["coverage", "f1_micro_d"], ties="modified", cutoff=3,
                          zero_division=1.0)
    metric.update(scores[:50], truth[:50])
    metric.reset()
    metric.update(scores[50:], truth[50:])
    got = metric.compute()
    assert sorted(got) == ["coverage/modified", "f1_micro_d/modified"]
    expected = evaluate(truth[50:], scores[50:], ties="modified", cutoff=3, zero_division=1.0)
    assert got["coverage/modified"].item() == pytest.approx(expected["modified"]["coverage"],
                                                            rel=1e-12)
    assert got["f1_micro_d/modified"].dtype == torch.float64


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown or no metrics"):
        StudyMetrics(Q, metrics=["auc"])
    with pytest.raises(TypeError, match="random_state must be an int"):
        StudyMetrics(Q, random_state=None)
    metric = StudyMetrics(Q)
    with pytest.raises(ValueError, match="seen no rows"), \
            pytest.warns(UserWarning, match="before the ``update``"):  # torchmetrics' own
        metric.compute()
    with pytest.raises(ValueError, match="31 labels"):
        metric.update(np.zeros((2, 31)), np.zeros((2, 31)))


def _worker(rank, init_file, out_dir):
    """One process of two, in three passes over its rows: contiguous halves given their
    global first rows ("keyed"), then every other batch without row numbers ("local"),
    then every batch on process 0 alone, unweighted ("one": process 1 sees no rows);
    process 0 saves each pass's compute()."""
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    try:
        truth, scores, weight = _data()
        for name, mine in (("keyed", BATCHES[6 * rank:6 * rank + 6]),
                           ("local", BATCHES[rank::2]), ("one", BATCHES if rank == 0 else [])):
            metric = StudyMetrics(Q, ties=ALL_TIES)
            for i, (lo, hi) in enumerate(mine):
                args = (torch.from_numpy(scores[lo:hi]), torch.from_numpy(truth[lo:hi]))
                kwargs = {}
                if name != "one":
                    kwargs["sample_weight"] = torch.from_numpy(weight[lo:hi])
                if name == "keyed":
                    kwargs["first_row"] = lo
                metric(*args, **kwargs) if i % 2 else metric.update(*args, **kwargs)
            values = _values(metric.compute())
            if rank == 0:
                np.save(f"{out_dir}/{name}.npy", values)
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory):
    """compute() of two processes (torch.multiprocessing, gloo): {"keyed": ..., "local": ...,
    "one": ...}."""
    out = tmp_path_factory.mktemp("ddp")
    mp.spawn(_worker, args=(str(out / "init"), str(out)), nprocs=2, join=True)
    return {k: np.load(out / f"{k}.npy") for k in ("keyed", "local", "one")}


def test_two_processes_with_global_rows_equal_evaluate_for_every_ranking_type(two_processes):
    truth, scores, weight = _data()
    got = two_processes["keyed"]
    _close(got, evaluate(truth, scores, ties=ALL_TIES, sample_weight=weight).values)


def test_two_processes_without_row_numbers(two_processes):
    """Exact ranking types equal evaluate; the random ones follow the documented keys:
    process r's i-th row is row r * PROCESS_ROWS + i."""
    truth, scores, weight = _data()
    got = two_processes["local"]
    expected = evaluate(truth, scores, ties=ALL_TIES, sample_weight=weight).values
    exact = np.ones(got.shape, dtype=bool)
    exact[ALL_TIES.index("ordinal")] = False
    exact[ALL_TIES.index("expected"), [METRIC_KEYS.index(k) for k in ESTIMATED_KEYS]] = False
    _close(got[exact], expected[exact])
    parts = []
    for rank in (0, 1):
        ev, local = Evaluator(ALL_TIES), 0
        for lo, hi in BATCHES[rank::2]:
            ev.update(truth[lo:hi], scores[lo:hi], first_row=rank * PROCESS_ROWS + local,
                      sample_weight=weight[lo:hi])
            local += hi - lo
        parts.append(ev)
    _close(got, parts[0].merge(parts[1]).result().values)
    assert not np.allclose(got[~exact], expected[~exact])  # the keys differ from evaluate's


def test_two_processes_one_without_rows_equal_evaluate_exactly(two_processes):
    """Unweighted rows all on process 0: process 1 gathers its empty states (the boundary
    counts' list holding a tensor of no records), and every value equals evaluate's."""
    truth, scores, _ = _data()
    _close(two_processes["one"], evaluate(truth, scores, ties=ALL_TIES).values)
