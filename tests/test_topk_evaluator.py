"""The top-k metrics in the mergeable evaluators: an ``Evaluator`` with ``at_k`` (and a
``TopKEvaluator``) over any chunking, merge order and number of threads gives
``evaluate_at_k`` on all rows."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from test_evaluator import _race  # several threads updating one evaluator at once

from fastrank import metrics as M

TOPK = ("expected", "optimistic", "pessimistic", "ordinal", "stable", "trec")


def tied_data(n, q, seed, levels=4):
    """Coarse beliefs (many ties, also at every cut-off), ~30% relevant labels."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, levels + 1, size=(n, q)) / levels
    y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    return y, s


def at_k_config(q, seed):
    p = np.random.default_rng(seed).uniform(0.1, 1.0, q)
    return dict(k=(5, 1, 3), ties=TOPK, propensity=p)


def as_sparse_scored(s, keep=0.6, seed=0):
    """A CSR matrix storing a random ~``keep`` share of each row's beliefs (the others
    unscored)."""
    mask = np.random.default_rng(seed).random(s.shape) < keep
    return sp.csr_matrix((s[mask], np.nonzero(mask)[1],
                          np.concatenate([[0], np.cumsum(mask.sum(axis=1))])), shape=s.shape)


def random_split(n, rng):
    """Sorted cut points of a random split of ``n`` rows, with a single-row chunk."""
    one = int(rng.integers(1, n - 1))
    more = rng.choice(np.arange(1, n), size=int(rng.integers(0, 8)), replace=False)
    return sorted({one, one + 1, *more.tolist()})


def assert_at_k_equal(got, want):
    assert (got.ties, got.metrics, got.k) == (want.ties, want.metrics, want.k)
    np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("form", ["dense", "csr", "sets"])
def test_chunks_in_any_order_equal_evaluate_at_k(seed, form):
    """Random row splits, chunks given in a shuffled order with their first rows, spread
    over several evaluators merged in a random tree, with weights."""
    rng = np.random.default_rng(seed)
    n, q = 240, 11
    y, s = tied_data(n, q, seed)
    w = rng.uniform(0, 2, n)
    score = as_sparse_scored(s, seed=seed) if form == "csr" else s
    truth = [set(np.flatnonzero(r)) for r in y] if form == "sets" else y
    cfg = at_k_config(q, seed)
    ties = ("modified", "ordinal", "expected")
    want_k = M.evaluate_at_k(truth, score, sample_weight=w, random_state=seed, **cfg)
    want = M.evaluate(truth, score, ties=ties, sample_weight=w, random_state=seed, n_draws=10)

    cuts = random_split(n, rng)
    bounds = list(zip([0, *cuts], [*cuts, n]))
    template = M.Evaluator(ties, random_state=seed, n_draws=10, at_k=cfg)
    parts = [template.empty_copy() for _ in range(3)]
    for i in rng.permutation(len(bounds)):
        lo, hi = bounds[i]
        part = parts[int(rng.integers(len(parts)))]
        part.update(truth[lo:hi], score[lo:hi], first_row=int(lo), sample_weight=w[lo:hi])
    while len(parts) > 1:
        b, a = parts.pop(int(rng.integers(len(parts)))), parts.pop(0)
        parts.append(a.merge(b) if rng.random() < 0.5 else b.merge(a))
    got = parts[0].result()
    assert parts[0].rows == [(0, n)]
    assert_at_k_equal(got.at_k, want_k)
    np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.stderr, want.stderr, rtol=1e-9, atol=1e-12)


def test_evaluate_at_k_argument_forms():
    y, s = tied_data(120, 9, 1)
    p = np.random.default_rng(1).uniform(0.1, 1, 9)
    want = M.evaluate_at_k(y, s, k=(1, 3), ties=("expected", "ordinal"), propensity=p,
                           random_state=3)
    config = M.TopKEvaluator((1, 3), ("expected", "ordinal"), propensity=p, random_state=3)
    for at_k in (dict(k=(1, 3), ties=("expected", "ordinal"), propensity=p), config):
        assert_at_k_equal(M.evaluate(y, s, at_k=at_k, random_state=3).at_k, want)
    plain = M.evaluate(y, s, at_k=(1, 3))
    assert_at_k_equal(plain.at_k, M.evaluate_at_k(y, s, k=(1, 3)))
    assert M.evaluate(y, s).at_k is None
    assert config.n_rows == 0                         # the configuration is never updated
    # the 19 study metrics do not change with at_k
    np.testing.assert_array_equal(plain.values, M.evaluate(y, s).values)


def test_top_k_metrics_alone_take_any_input_of_evaluate_at_k():
    """``ties=()``: only the top-k metrics, which also read top-k pairs; in chunks."""
    y, s = tied_data(300, 12, 2)
    order = np.argsort(-s, axis=1, kind="stable")[:, :6]
    pairs = (order, np.take_along_axis(s, order, axis=1))
    sets = [set(np.flatnonzero(r)) for r in y]
    cfg = dict(k=(1, 5), ties=TOPK)
    want = M.evaluate_at_k(sets, pairs, n_labels=12, **cfg)
    whole = M.evaluate(sets, pairs, ties=(), at_k=dict(n_labels=12, **cfg))
    assert whole.ties == () and whole.values.shape == (0, len(M.METRIC_KEYS))
    assert_at_k_equal(whole.at_k, want)
    assert str(whole) == str(whole.at_k)
    ev = M.Evaluator(ties=(), at_k=cfg, n_labels=12)
    for lo in (200, 0, 100):
        ev.update(sets[lo:lo + 100], (order[lo:lo + 100], pairs[1][lo:lo + 100]), first_row=lo)
    assert_at_k_equal(ev.result().at_k, want)


@pytest.mark.parametrize("ties", [("modified", "ordinal"), ()])
def test_eight_threads_updating_one_evaluator_equal_one_thread(ties):
    n, q = 1600, 14
    y, s = tied_data(n, q, 3)
    cfg = at_k_config(q, 3)
    cuts = list(range(0, n, 50))
    chunks = [(y[lo:lo + 50], s[lo:lo + 50]) for lo in cuts]
    serial = M.Evaluator(ties, random_state=5, at_k=cfg)
    for chunk, lo in zip(chunks, cuts):
        serial.update(*chunk, first_row=lo)
    want = serial.result()
    assert_at_k_equal(want.at_k, M.evaluate_at_k(y, s, random_state=5, **cfg))
    for _ in range(25):
        ev = _race(M.Evaluator(ties, random_state=5, at_k=cfg), chunks, cuts)
        assert ev.rows == [(0, n)]
        got = ev.result()
        assert_at_k_equal(got.at_k, want.at_k)
        np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-12)
    # default first rows: each chunk gets rows nobody else has (no ordinal: any order)
    cfg = dict(cfg, ties=("expected", "optimistic"))
    ev = _race(M.TopKEvaluator(**cfg), chunks, [None] * len(chunks))
    assert ev.rows == [(0, n)]
    assert_at_k_equal(ev.result(), M.evaluate_at_k(y, s, **cfg))


def test_eight_threads_updating_one_topk_evaluator_lose_no_rows():
    n, q = 1600, 14
    y, s = tied_data(n, q, 4)
    cfg = at_k_config(q, 4)
    cuts = list(range(0, n, 40))
    want = M.evaluate_at_k(y, s, random_state=2, **cfg)
    for _ in range(25):
        ev = _race(M.TopKEvaluator(random_state=2, **cfg),
                   [(y[lo:lo + 40], s[lo:lo + 40]) for lo in cuts], cuts)
        assert ev.rows == [(0, n)]
        assert_at_k_equal(ev.result(), want)


def test_a_failed_chunk_gives_its_rows_back():
    y, s = tied_data(20, 6, 6)
    ev = M.Evaluator(ties="dense", at_k=5)
    with pytest.raises(ValueError, match="k=5 exceeds the number of labels, 4"):
        ev.update(y[:, :4], s[:, :4])
    assert ev.rows == [] and ev.n_labels is None
    ev.update(y, s)
    assert_at_k_equal(ev.result().at_k, M.evaluate_at_k(y, s, k=5))


def test_empty_chunks_change_nothing():
    y, s = tied_data(30, 6, 7)
    order = np.argsort(-s, axis=1)[:, :3]
    for ties in (("dense",), ()):
        ev = M.Evaluator(ties, at_k=(1, 2))
        ev.update(y[:0], s[:0])
        ev.update(y[:10], s[:10])
        ev.update(y[:0], sp.csr_matrix(s[:0]), first_row=3)
        ev.update(y[10:], s[10:])
        assert ev.rows == [(0, 30)]
        assert_at_k_equal(ev.result().at_k, M.evaluate_at_k(y, s, k=(1, 2)))
    ev = M.TopKEvaluator(k=2, n_labels=6)
    ev.update([], (order[:0], s[:0, :3]))
    ev.update(y, (order, np.take_along_axis(s, order, axis=1)))
    assert ev.rows == [(0, 30)]


def test_pickles_and_copies_carry_the_at_k_state():
    y, s = tied_data(90, 7, 8)
    ev = M.Evaluator("ordinal", at_k=dict(k=2, ties=("expected", "ordinal")))
    ev.update(y[:50], s[:50])
    again = pickle.loads(pickle.dumps(ev)).update(y[50:], s[50:], first_row=50)
    want = M.evaluate(y, s, ties="ordinal", at_k=dict(k=2, ties=("expected", "ordinal")))
    assert_at_k_equal(again.result().at_k, want.at_k)
    empty = ev.empty_copy()
    assert empty.n_rows == 0
    with pytest.raises(ValueError, match="no rows"):
        empty.result()
    assert_at_k_equal(empty.update(y, s).result().at_k, want.at_k)


def test_mismatched_configurations_are_refused():
    y, s = tied_data(20, 5, 9)
    base = M.Evaluator("dense", at_k=(1, 3)).update(y[:10], s[:10])
    others = {r"at_k.k: \(1, 3\) and \(1, 2\)": M.Evaluator("dense", at_k=(1, 2)),
              r"at_k: TopKEvaluator\(.*\) and None": M.Evaluator("dense"),
              "at_k.propensity": M.Evaluator("dense", at_k=dict(k=(1, 3),
                                                                propensity=np.ones(5)))}
    for match, other in others.items():
        other.update(y[10:], s[10:], first_row=10)
        with pytest.raises(ValueError, match=f"different {match}"):
            base.merge(other)
    with pytest.raises(ValueError, match="different seed"):
        M.TopKEvaluator(ties="ordinal", random_state=1).merge(
            M.TopKEvaluator(ties="ordinal", random_state=2))
    with pytest.raises(TypeError, match="can only merge another Evaluator"):
        base.merge(M.TopKEvaluator())
    with pytest.raises(TypeError, match="can only merge another TopKEvaluator"):
        M.TopKEvaluator().merge(base)


def test_bad_at_k_is_refused():
    y, s = tied_data(10, 4, 10)
    with pytest.raises(ValueError, match="ties is empty.*only with at_k"):
        M.Evaluator(ties=())
    with pytest.raises(ValueError, match="has seen 10 rows"):
        M.Evaluator(at_k=M.TopKEvaluator(k=1).update(y, s))
    with pytest.raises(ValueError, match="at_k has 3 labels, n_labels=4"):
        M.Evaluator(n_labels=4, at_k=M.TopKEvaluator(k=1, propensity=np.ones(3)))
    with pytest.raises(ValueError, match="propensity has 3 labels, n_labels=4"):
        M.Evaluator(n_labels=4, at_k=dict(k=1, propensity=np.ones(3)))
    with pytest.raises(ValueError, match="k must be"):
        M.evaluate(y, s, at_k=0)
    pair = (np.argsort(-s, axis=1)[:, :2], -np.sort(-s, axis=1)[:, :2])
    with pytest.raises(ValueError, match=r"top-k pair .* ties=\(\)"):
        M.evaluate(y, pair, ties="dense", at_k=1)
    with pytest.raises(ValueError, match="unknown ties='dense'"):
        M.evaluate(y, s, at_k=dict(ties="dense"))
    with pytest.raises(ValueError,
                       match="y_score has 4 labels; this evaluator has 3 .*propensities"):
        M.Evaluator(at_k=dict(k=1, propensity=np.ones(3))).update(y, s)
