"""Embedding fastrank: a downstream Cython extension (``cimport fastrank``) and a downstream C
extension (``fastrank.h``), built here against the installed fastrank, call its kernels from
several threads without the GIL and get the Python API's results, bit for bit."""
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import fastrank
from embedding_build import build_example
from fastrank import Evaluator, VGRAMCor, rank, tie_groups, topk_cosine

TIES = ("ordinal", "dense", "standard", "modified", "expected")  # FASTRANK_TIES_* order
METHODS = ("ordinal", "stable", "dense", "standard", "modified", "fractional")
THREADS = 4


@pytest.fixture(scope="module")
def cy(tmp_path_factory):
    return build_example("cython_ext", "embed_cython", tmp_path_factory.mktemp("cython_ext"))


@pytest.fixture(scope="module")
def c(tmp_path_factory):
    return build_example("c_ext", "embed_c", tmp_path_factory.mktemp("c_ext"))


def _data(n=203, q=37, seed=0):
    """Beliefs with many ties (a few distinct values) and a 0/1 truth with empty rows."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 5, (n, q)) / 4
    truth = (rng.random((n, q)) < 0.15).astype(np.uint8)
    truth[::17] = 0
    return scores, truth


def _chunks(n, parts=THREADS):
    return np.linspace(0, n, parts + 1).astype(np.int64)


def _in_threads(fn, bounds):
    """fn(lo, hi) for each chunk, on THREADS threads at once."""
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(fn, bounds[:-1], bounds[1:]))


def test_get_include_holds_the_header():
    assert (Path(fastrank.get_include()) / "fastrank.h").is_file()


@pytest.mark.parametrize("method", METHODS)
def test_rank_equals_python(cy, c, method):
    scores, _ = _data()
    expected = rank(scores, method, random_state=7)
    seed = int(np.random.default_rng(7).integers(0, 2**64, dtype=np.uint64))
    code = METHODS.index(method)
    bounds = _chunks(len(scores))
    frac = method == "fractional"
    for ext in (cy, c):
        out = np.zeros(scores.shape, np.float64 if frac else np.int32)
        none = np.zeros((0, 0), np.float64 if not frac else np.int32)

        def part(lo, hi):
            if ext is cy:
                args = (none, out[lo:hi]) if frac else (out[lo:hi], none)
                cy.rank(scores[lo:hi], code, seed, lo, *args)
            else:
                c.rank(scores[lo:hi], scores.shape[1], code, seed, lo, out[lo:hi])
        _in_threads(part, bounds)
        np.testing.assert_array_equal(out, expected)


def test_tie_groups_equal_python(cy):
    scores, _ = _data()
    order, end = (np.zeros(scores.shape, np.int32) for _ in range(2))
    _in_threads(lambda lo, hi: cy.tie_groups(scores[lo:hi], order[lo:hi], end[lo:hi]),
                _chunks(len(scores)))
    groups = tie_groups(scores)
    np.testing.assert_array_equal(order, groups.order)
    np.testing.assert_array_equal(end, groups.end)


def _python_evaluation(scores, truth, ties, bounds, weight=None, sampled=True, **config):
    """Evaluator fed row by row, one per chunk, merged in order: the sums the C API adds
    (eval_add_row draws the cut tie groups of "expected" n_draws times, every row's:
    ``sampled``; eval_add_row_exact keeps those of rows of weight 1 as records)."""
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        ev = Evaluator(ties, **config)
        ev._sampled = sampled
        for i in range(lo, hi):
            ev.update(truth[i:i + 1], scores[i:i + 1], first_row=i,
                      sample_weight=None if weight is None else weight[i:i + 1])
        parts.append(ev)
    whole = parts[0]
    for ev in parts[1:]:
        whole = whole.merge(ev)
    return whole


@pytest.mark.parametrize("cutoff", ["perfect", 3])
def test_evaluate_equals_python(cy, c, cutoff):
    scores, truth = _data()
    bounds = _chunks(len(scores))
    ev = _python_evaluation(scores, truth, TIES, bounds, random_state=3, n_draws=20,
                            cutoff=cutoff)
    result = ev.result()
    expected = result.values
    top_k = -1 if cutoff == "perfect" else cutoff
    mask = (1 << len(TIES)) - 1
    # the C extension: threads of its own, one state per chunk
    out = np.full((len(TIES), 19), np.nan)
    c.evaluate(scores, truth, scores.shape[1], mask, top_k, 20, ev.seed, bounds, out)
    np.testing.assert_array_equal(out, expected)
    # the Cython extension: Python threads, one state per chunk, each filled without the GIL
    states = [cy.Evaluation(scores.shape[1], mask, top_k, 20, ev.seed) for _ in bounds[:-1]]
    _in_threads(lambda lo, hi: states[list(bounds).index(lo)].add_rows(
        scores[lo:hi], truth[lo:hi], lo), bounds)
    for s in states[1:]:
        states[0].merge(s)
    np.testing.assert_array_equal([states[0].result(t) for t in range(len(TIES))], expected)
    # and the whole matrix in one call: the same values to rounding (other summation order),
    # but for the two Monte-Carlo estimates of the C API, which evaluate computes exactly
    whole = fastrank.evaluate(truth, scores, ties=TIES, random_state=3, n_draws=20,
                              cutoff=cutoff)
    drawn = ~np.isnan(result.stderr)
    assert drawn.sum() == 2 and np.isnan(whole.stderr).all()
    np.testing.assert_allclose(out[~drawn], whole.values[~drawn], rtol=1e-12, atol=1e-15)
    assert np.all(np.abs(out[drawn] - whole.values[drawn]) <= 5 * result.stderr[drawn])


@pytest.mark.parametrize("cutoff", ["perfect", 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_exact_expected_equals_python(cy, c, cutoff, weighted):
    """eval_add_row_exact / eval_result_exact: every value of Evaluator's exact form, to the
    bit; rows of weight 0 add nothing, rows of other weights are drawn as Evaluator draws
    them (and the two values are then its means over the draws). The C example (rows of
    weight 1) counts its records whenever its buffer fills."""
    scores, truth = _data()
    n, q = scores.shape
    weight = np.ones(n)
    if weighted:
        weight[3::7], weight[5::11] = 0.5, 0.0
    bounds = _chunks(n)
    ev = _python_evaluation(scores, truth, TIES, bounds, weight=weight if weighted else None,
                            sampled=False, random_state=3, n_draws=20, cutoff=cutoff)
    result = ev.result()
    assert (result.n_draws > 0) == weighted
    states = [cy.Evaluation(q, (1 << len(TIES)) - 1, -1 if cutoff == "perfect" else cutoff,
                            20, ev.seed) for _ in bounds[:-1]]
    _in_threads(lambda lo, hi: states[list(bounds).index(lo)].add_rows_exact(
        scores[lo:hi], truth[lo:hi], lo, weight[lo:hi]), bounds)
    for s in states[1:]:
        states[0].merge(s)
    exact = np.array([states[0].result_exact(t) for t in range(len(TIES))])
    np.testing.assert_array_equal(exact, result.values)
    if not weighted:
        out = np.full((len(TIES), 19), np.nan)
        c.evaluate(scores, truth, q, (1 << len(TIES)) - 1, -1 if cutoff == "perfect" else cutoff,
                   20, ev.seed, bounds, out, True)
        np.testing.assert_array_equal(out, result.values)
    # the Monte-Carlo values of eval_result differ from them (the records were not drawn)
    drawn = states[0].result(TIES.index("expected"))
    assert not np.array_equal(drawn, exact[-1])


@pytest.mark.parametrize("q, s_max", [(50, 20), (2**31 - 1, 2**20)])
def test_records_counted_as_numpy_counts_them(cy, q, s_max):
    """eval_count_records: one row per (label, s, d), sorted, counts summed; by the packed
    keys' radix sort where (label, s, d) fits in 64 bits (the first case), else by qsort."""
    rng = np.random.default_rng(q)
    n = 5000
    labels = rng.choice(rng.integers(0, q, 40), n)
    s = rng.choice(rng.integers(2, s_max + 1, 6), n)
    d = 1 + rng.integers(0, 3, n) % (s - 1)
    rel = rng.integers(0, 2, n)
    records = np.ascontiguousarray(np.column_stack([labels, s, d, rel, 1 - rel]), np.int64)
    keys, inverse = np.unique(records[:, :3], axis=0, return_inverse=True)
    counts = np.zeros((len(keys), 2), np.int64)
    np.add.at(counts, inverse.ravel(), records[:, 3:])
    m = cy.count_records(q, records)
    np.testing.assert_array_equal(records[:m], np.column_stack([keys, counts]))


def test_boundary_records_are_checked(cy):
    scores, truth = _data(n=10)
    state = cy.Evaluation(scores.shape[1], 1 << TIES.index("expected"), 3, 20, 1)
    state.add_rows_exact(scores, truth, 0, np.ones(10))
    assert state.records[0].shape[0] > 0
    kept = state.records[0][0].copy()
    for column, value in ((2, kept[1]), (1, scores.shape[1] + 1), (0, -1), (4, -1)):
        state.records[0][0] = kept
        state.records[0][0, column] = value  # d = s, s > n_labels, no label, a negative count
        with pytest.raises(ValueError, match="0 < d < s <= n_labels"):
            state.result_exact(TIES.index("expected"))
        with pytest.raises(ValueError, match="record 0 is not"):
            cy.count_records(scores.shape[1], state.records[0])


def test_rows_of_other_lengths_on_one_thread(cy):
    """The C API keeps each thread's scratch from one call to the next; rows with another
    number of labels, in turn on the same thread, get scratch of their own size."""
    seed = int(np.random.default_rng(7).integers(0, 2**64, dtype=np.uint64))
    data = [_data(n=20, q=q, seed=q) for q in (37, 5, 300, 37)]
    for scores, truth in data + data[::-1]:
        n, q = scores.shape
        ranks = np.zeros(scores.shape, np.int32)
        cy.rank(scores, METHODS.index("standard"), seed, 0, ranks, np.zeros((0, 0)))
        np.testing.assert_array_equal(ranks, rank(scores, "standard"))
        order, end = (np.zeros(scores.shape, np.int32) for _ in range(2))
        cy.tie_groups(scores, order, end)
        np.testing.assert_array_equal(order, tie_groups(scores).order)
        state = cy.Evaluation(q, 1 << TIES.index("modified"), -1, 0, 0)
        state.add_rows(scores, truth, 0)
        ev = _python_evaluation(scores, truth, ("modified",), [0, n])
        np.testing.assert_array_equal(state.result(TIES.index("modified")),
                                      ev.result().values[0])


def test_topk_equals_python(cy, c):
    rng = np.random.default_rng(1)
    B = rng.integers(0, 3, (300, 24)).astype(np.float64)  # integer rows: many equal cosines
    Q = np.vstack([B[:40], rng.normal(size=(60, 24))])
    sims_ref, idx_ref = topk_cosine(Q, B, 10)
    bounds = _chunks(len(Q))
    for ext in (cy, c):
        sims, idx = np.zeros((len(Q), 10)), np.zeros((len(Q), 10), np.int64)

        def part(lo, hi):
            if ext is cy:
                cy.topk(Q[lo:hi], B, 10, sims[lo:hi], idx[lo:hi])
            else:
                c.topk(Q[lo:hi], B, 24, 10, sims[lo:hi], idx[lo:hi])
        _in_threads(part, bounds)
        np.testing.assert_array_equal(sims, sims_ref)
        np.testing.assert_array_equal(idx, idx_ref)


def _hamming_reference(memory, tests):
    """Minimum distance, count at it and first entry at it, by brute force (numpy)."""
    bits = lambda a: np.unpackbits(a.view(np.uint8), axis=-1).astype(np.int64)  # noqa: E731
    d = np.stack([(bits(tests[n])[:, None, :] != bits(memory[n])[None, :, :]).sum(-1)
                  for n in range(memory.shape[0])], axis=1)  # (tests, neurons, train)
    low = d.min(-1)
    return low, (d == low[..., None]).sum(-1), d.argmin(-1)


def test_vgram_equals_python(cy, c):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, (90, 30)).astype(np.float64)
    Y = rng.random((90, 5)) < 0.3
    model = VGRAMCor(n_neurons=16, n_synapses=70, random_state=0).fit(X[:60], Y[:60])
    syn = model.synapses_
    bounds = _chunks(90)
    parts = [np.zeros((16, hi - lo, 2), np.uint64) for lo, hi in zip(bounds[:-1], bounds[1:])]
    _in_threads(lambda lo, hi: cy.vgram_encode(X[lo:hi], syn, parts[list(bounds).index(lo)]),
                bounds)
    patterns = np.concatenate(parts, axis=1)
    np.testing.assert_array_equal(patterns[:, :60], model.memory_)
    dist, count, near = (np.zeros((30, 16), t) for t in (np.uint32, np.int64, np.int64))
    cy.vgram_search(model.memory_, np.ascontiguousarray(patterns[:, 60:]), dist, count, near)
    ref = _hamming_reference(model.memory_, patterns[:, 60:])
    for got, want in zip((dist, count, near), ref):
        np.testing.assert_array_equal(got, want)
    # more test patterns than a batch holds (up to 512): the same 30 again and again
    many = np.ascontiguousarray(np.concatenate([patterns[:, 60:]] * 37, axis=1)[:, :1100])
    got = [np.zeros((1100, 16), t) for t in (np.uint32, np.int64, np.int64)]
    cy.vgram_search(model.memory_, many, *got)
    for g, want in zip(got, ref):
        np.testing.assert_array_equal(g, np.concatenate([want] * 37)[:1100])
    # the C extension: encode and search in one call, from several threads at once
    outs = [[np.zeros((16, 90, 2), np.uint64), *(np.zeros((30, 16), t)
             for t in (np.uint32, np.int64, np.int64))] for _ in range(THREADS)]
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(lambda o: c.vgram(X, 30, syn, 70, o[0], 60, *o[1:]), outs))
    for o in outs:
        np.testing.assert_array_equal(o[0], patterns)
        for got, want in zip(o[1:], ref):
            np.testing.assert_array_equal(got, want)


def test_errors_carry_a_message(cy, c):
    scores, truth = _data(n=4, q=5)
    scores[2, 3] = np.nan
    out = np.zeros(scores.shape, np.int32)
    with pytest.raises(ValueError, match="scores has NaN at 3"):
        c.rank(scores, 5, 2, 0, 0, out)
    with pytest.raises(ValueError, match="unknown ranking method 9"):
        cy.rank(scores[:1], 9, 0, 0, out[:1], np.zeros((0, 0)))
    base = np.ones((4, 5))
    base[1, 2] = -np.inf  # no cosine: refused as topk_cosine refuses it
    with pytest.raises(ValueError, match="B has NaN or infinity at 7"):
        cy.topk(np.ones((2, 5)), base, 2, np.zeros((2, 2)), np.zeros((2, 2), np.int64))
    with pytest.raises(ValueError, match="k must be from 1 to n_base = 4, got 5"):
        cy.topk(scores[:2], np.ones((4, 5)), 5, np.zeros((2, 5)), np.zeros((2, 5), np.int64))
    with pytest.raises(ValueError, match="n_draws from 2 to 100000 and its draws array, got 1"):
        cy.Evaluation(5, 1 << 4, -1, 1, 0)
    state = cy.Evaluation(5, 1 << 1, -1, 0, 0)
    with pytest.raises(ValueError, match="no rows were added"):
        state.result(1)
    with pytest.raises(ValueError, match="ranking type 0 is not evaluated"):
        state.result(0)
    with pytest.raises(ValueError, match="truth must be 0 or 1, got 2 at 3"):
        state.add_rows(np.zeros((1, 5)), np.array([[1, 0, 1, 2, 3]], np.uint8), 0)
    with pytest.raises(ValueError, match="scores has NaN at 4"):  # an infinity is a belief
        state.add_rows(np.array([[np.inf, 0, -np.inf, 1, np.nan]]), truth[:1], 0)


def test_another_api_version_is_refused(c):
    c.import_version(1, 1)  # this major version, a table no larger than the installed one
    with pytest.raises(ImportError, match=r"built for major version 2: rebuild it"):
        c.import_version(2, 1)
    with pytest.raises(ImportError, match=r"older than the one this extension was built for"):
        c.import_version(1, 1 << 20)
