"""The mergeable evaluation state: any chunking and merge order gives ``evaluate``."""
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrank import metrics as M
from fastrank.metrics import _common

EVERY = ("ordinal", "dense", "standard", "modified", "expected")


def tied_data(n, q, seed, levels=4):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, levels + 1, size=(n, q)) / levels
    y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    return y, s


def chunked(y, s, cuts, order, tree_seed, **kw):
    """Evaluators over the chunks ``cuts`` (each with its global first row), updated in
    ``order`` and merged in a random tree."""
    bounds = list(zip([0, *cuts], [*cuts, y.shape[0]]))
    template = M.Evaluator(**kw)
    parts = []
    for i in order:
        lo, hi = bounds[i]
        parts.append(template.empty_copy().update(y[lo:hi], s[lo:hi], first_row=lo))
    rng = np.random.default_rng(tree_seed)
    while len(parts) > 1:
        i, j = sorted(rng.choice(len(parts), 2, replace=False))
        b, a = parts.pop(j), parts.pop(i)
        parts.append(a.merge(b) if rng.random() < 0.5 else b.merge(a))
    return parts[0].result()


def assert_same(got, want):
    assert got.ties == want.ties and got.n_draws == want.n_draws
    np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.stderr, want.stderr, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cutoff", ["perfect", 3])
def test_any_chunking_equals_evaluate(seed, cutoff):
    y, s = tied_data(157, 9, seed)
    rng = np.random.default_rng(seed)
    cuts = sorted(rng.choice(np.arange(1, 157), size=rng.integers(1, 12), replace=False))
    order = rng.permutation(len(cuts) + 1)
    kw = dict(ties=EVERY, random_state=seed, cutoff=cutoff)
    want = M.evaluate(y, s, **kw)
    assert_same(chunked(y, s, cuts, order, seed, **kw), want)
    # CSR beliefs and label-set truth, chunk by chunk
    sets = [set(np.flatnonzero(r)) for r in y]
    ev = M.Evaluator(**kw)
    for lo, hi in zip([0, *cuts], [*cuts, 157]):
        ev.update(sets[lo:hi], sp.csr_matrix(s[lo:hi]))
    assert_same(ev.result(), want)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), q=st.integers(1, 8), seed=st.integers(0, 2**16),
       n_cuts=st.integers(0, 8), zero_division=st.sampled_from([0.0, 1.0]))
def test_chunking_property(n, q, seed, n_cuts, zero_division):
    y, s = tied_data(n, q, seed, levels=2)
    rng = np.random.default_rng(seed)
    cuts = sorted(rng.choice(np.arange(1, n), size=min(n_cuts, n - 1), replace=False)) \
        if n > 1 else []
    kw = dict(ties=EVERY, random_state=seed, zero_division=zero_division, n_draws=5)
    assert_same(chunked(y, s, cuts, rng.permutation(len(cuts) + 1), seed, **kw),
                M.evaluate(y, s, **kw))


def test_row_blocks_inside_one_update(monkeypatch):
    """A large update runs the kernel in blocks of rows; the blocks change nothing but the
    order in which the sums are added."""
    y, s = tied_data(300, 7, 3)
    want = M.evaluate(y, s, ties=EVERY, random_state=1)
    monkeypatch.setattr(_common, "BLOCK_ROWS", 13)
    assert len(_common.row_blocks(300)) == 24
    assert_same(M.evaluate(y, s, ties=EVERY, random_state=1), want)
    assert_same(M.evaluate(y, np.asfortranarray(s), ties=EVERY, random_state=1), want)
    assert_same(M.evaluate(y, sp.csr_matrix(s), ties=EVERY, random_state=1), want)


def test_single_metrics_blocked_equal_unblocked(monkeypatch):
    y, s = tied_data(200, 6, 5)
    want = {t: M.coverage(y, s, ties=t, random_state=2) for t in ("ordinal", "modified")}
    monkeypatch.setattr(_common, "BLOCK_ROWS", 17)
    for t, v in want.items():
        assert M.coverage(y, s, ties=t, random_state=2) == pytest.approx(v, rel=1e-13)


def test_default_first_row_follows_the_previous_chunk():
    y, s = tied_data(50, 5, 0)
    ev = M.Evaluator(ties="ordinal", random_state=3)
    ev.update(y[:20], s[:20]).update(y[20:], s[20:])
    assert ev.rows == [(0, 50)] and ev.n_rows == 50
    assert_same(ev.result(), M.evaluate(y, s, ties="ordinal", random_state=3))
    # the ordinal draw is keyed by global row: a chunk placed elsewhere draws differently
    moved = M.Evaluator(ties="ordinal", random_state=3).update(y[20:], s[20:], first_row=1000)
    alone = M.evaluate(y[20:], s[20:], ties="ordinal", random_state=3)
    assert moved.rows == [(1000, 1030)]
    assert not np.array_equal(moved.result().values, alone.values)


def test_state_is_small_and_picklable():
    y, s = tied_data(2000, 10, 1)
    small = M.Evaluator(ties=("ordinal", "modified")).update(y[:100], s[:100])
    large = M.Evaluator(ties=("ordinal", "modified")).update(y, s)
    assert abs(len(pickle.dumps(small)) - len(pickle.dumps(large))) <= 16  # row counts only
    assert len(pickle.dumps(large)) < 4000
    back = pickle.loads(pickle.dumps(large))
    assert_same(back.result(), large.result())
    with_draws = M.Evaluator(ties="expected", n_draws=50).update(y, s)
    assert len(pickle.dumps(with_draws)) < 50 * 2 * 10 * 8 + 4000


def test_merge_leaves_its_operands_alone():
    y, s = tied_data(40, 5, 2)
    a = M.Evaluator().update(y[:20], s[:20])
    b = M.Evaluator().update(y[20:], s[20:], first_row=20)
    before = pickle.dumps(a), pickle.dumps(b)
    merged = a.merge(b)
    assert (pickle.dumps(a), pickle.dumps(b)) == before
    assert merged.n_rows == 40 and merged.rows == [(0, 40)]
    assert_same(merged.result(), M.evaluate(y, s))
    # an evaluator with no rows is the identity
    assert_same(M.Evaluator().merge(merged).result(), merged.result())


def test_bad_use_is_refused():
    y, s = tied_data(30, 5, 0)
    ev = M.Evaluator().update(y[:10], s[:10])
    with pytest.raises(ValueError, match="overlap"):
        ev.update(y[10:20], s[10:20], first_row=5)
    with pytest.raises(ValueError, match="overlap"):
        ev.merge(M.Evaluator().update(y[:10], s[:10]))
    with pytest.raises(ValueError, match="labels"):
        ev.update(y[10:20, :4], s[10:20, :4])
    with pytest.raises(ValueError, match="n_labels"):
        M.Evaluator(n_labels=5).update(y[:10], s[:10]).merge(
            M.Evaluator(n_labels=4).update(y[:10, :4], s[:10, :4], first_row=10))
    for kw, name in [({"ties": "dense"}, "ties"), ({"random_state": 1}, "seed"),
                     ({"cutoff": 2}, "cutoff"), ({"zero_division": 1.0}, "zero_division")]:
        with pytest.raises(ValueError, match=name):
            ev.merge(M.Evaluator(**kw))
    with pytest.raises(ValueError, match="n_draws"):
        M.Evaluator(ties="expected").merge(M.Evaluator(ties="expected", n_draws=7))
    with pytest.raises(ValueError, match="seed"):  # each None evaluator draws its own seed
        M.Evaluator(random_state=None).merge(M.Evaluator(random_state=None))
    none = M.Evaluator(random_state=None)
    none.merge(none.empty_copy())  # empty_copy shares the drawn seed
    with pytest.raises(TypeError, match="Evaluator"):
        ev.merge(M.evaluate(y, s))
    with pytest.raises(ValueError, match="no rows"):
        M.Evaluator().result()
    with pytest.raises(ValueError, match="first_row"):
        ev.update(y[10:], s[10:], first_row=-1)
    with pytest.raises(TypeError, match="first_row"):
        ev.update(y[10:], s[10:], first_row=1.5)
    with pytest.raises(ValueError, match="n_draws"):
        M.Evaluator(n_draws=1)
    with pytest.raises(ValueError, match="ties"):
        M.Evaluator(ties="nonsense")
    # a refused update leaves the state as it was
    assert ev.rows == [(0, 10)]
    assert_same(ev.result(), M.evaluate(y[:10], s[:10]))


def test_parameters_are_bounded():
    y, s = tied_data(20, 4, 0)
    with pytest.raises(ValueError, match="top_k >= 1"):
        M.evaluate(y, s, cutoff=0)
    huge = M.evaluate(y, s, cutoff=2**63, ties=EVERY, n_draws=5)
    assert_same(huge, M.evaluate(y, s, cutoff=4, ties=EVERY, n_draws=5))
    for bad in (10**9, 2**63):
        with pytest.raises(ValueError, match="n_draws"):
            M.Evaluator(ties="expected", n_draws=bad)


# ---- sample_weight -----------------------------------------------------------------------

def test_integer_weights_equal_repeated_documents():
    """A document of weight k counts as k copies of it (for the deterministic ranking
    types, whose value does not depend on the row number)."""
    y, s = tied_data(40, 7, 9)
    w = np.random.default_rng(9).integers(0, 4, 40)
    rows = np.repeat(np.arange(40), w)
    kw = dict(ties=("dense", "standard", "modified", "expected"), cutoff="perfect", n_draws=4)
    got = M.evaluate(y, s, sample_weight=w, **kw)
    want = M.evaluate(y[rows], s[rows], **kw)
    exact = [k for k in M.METRIC_KEYS if k not in M.ESTIMATED_KEYS]
    cols = [M.METRIC_KEYS.index(k) for k in exact]
    np.testing.assert_allclose(got.values[:, cols], want.values[:, cols], rtol=1e-12)
    for t in ("dense", "modified"):
        for name in ("one_error", "coverage", "ranking_loss", "average_precision",
                     "r_precision"):
            f = getattr(M, name)
            assert f(y, s, ties=t, sample_weight=w) == pytest.approx(
                f(y[rows], s[rows], ties=t), rel=1e-12)
        p = M.cutoff(s, y, ties=t)
        for name in ("hamming_loss", "exact_match", "zero_one_loss", "accuracy"):
            f = getattr(M, name)
            assert f(y, p, sample_weight=w) == pytest.approx(f(y[rows], p[rows]), rel=1e-12)
        for name in ("precision", "recall", "f1"):
            for av in ("macro", "micro"):
                for orient in ("category", "document"):
                    f = getattr(M, name)
                    assert f(y, p, average=av, orient=orient, sample_weight=w) == \
                        pytest.approx(f(y[rows], p[rows], average=av, orient=orient),
                                      rel=1e-12)


def test_weighted_chunks_equal_weighted_whole():
    y, s = tied_data(120, 6, 4)
    w = np.random.default_rng(4).random(120) * 3
    kw = dict(ties=EVERY, random_state=2, n_draws=10)
    want = M.evaluate(y, s, sample_weight=w, **kw)
    ev = M.Evaluator(**kw)
    for lo in range(0, 120, 25):
        ev = ev.merge(M.Evaluator(**kw).update(y[lo:lo + 25], s[lo:lo + 25], first_row=lo,
                                               sample_weight=w[lo:lo + 25]))
    assert_same(ev.result(), want)
    ones = M.evaluate(y, s, sample_weight=np.ones(120), **kw)
    assert_same(ones, M.evaluate(y, s, **kw))


def test_weights_are_checked():
    y, s = tied_data(10, 4, 0)
    for bad, err in [(np.ones(9), ValueError), (-np.ones(10), ValueError),
                     (np.full(10, np.nan), ValueError), (np.array(["a"] * 10), TypeError),
                     (np.ones((10, 1)), ValueError)]:
        with pytest.raises(err, match="sample_weight"):
            M.evaluate(y, s, sample_weight=bad)
        with pytest.raises(err, match="sample_weight"):
            M.coverage(y, s, sample_weight=bad)
        with pytest.raises(err, match="sample_weight"):
            M.precision(y, y, sample_weight=bad)
        with pytest.raises(err, match="sample_weight"):
            M.contingency(y, y, sample_weight=bad)
    for f in (lambda w: M.evaluate(y, s, sample_weight=w),
              lambda w: M.coverage(y, s, sample_weight=w),
              lambda w: M.hamming_loss(y, y, sample_weight=w)):
        with pytest.raises(ValueError, match="0"):
            f(np.zeros(10))


def test_weights_count_by_their_ratios_alone():
    """Weights scaled by a power of two give every value's bits (sums and products of
    weights scale exactly); a non-zero weight beyond 2**-400 .. 2**400, where they would
    overflow or lose bits, is refused, and a 0 among the others stays allowed."""
    y, s = tied_data(40, 5, 1)
    w = np.random.default_rng(1).random(40) * 3 + 0.1
    w[::7] = 0.0
    p = (s >= 0.5).astype(np.uint8)

    def values(weight):
        e = M.evaluate(y, s, ties=("modified", "expected"), n_draws=7, random_state=2,
                       sample_weight=weight)
        k = M.evaluate_at_k(y, s, k=2, sample_weight=weight)
        return [e.values, e.stderr, np.array([[k[t][m] for m in sorted(k[t])] for t in k]),
                M.auc(y, s, average="samples", sample_weight=weight),
                M.precision(y, p, orient="document", sample_weight=weight),
                M.contingency(y, p, sample_weight=weight) / weight.sum()]

    want = values(w)
    for scale in (2.0**-390, 2.0**390):
        for got, expected in zip(values(w * scale), want):
            np.testing.assert_array_equal(got, expected)
    for bad in (1e308, 2.0**401, 2.0**-401, 5e-324):
        with pytest.raises(ValueError, match=r"between 2\*\*-400 and 2\*\*400"):
            values(np.where(w > 0, bad, 0.0))


def test_evaluation_to_pandas_and_html():
    y, s = tied_data(30, 5, 0)
    # weights other than 0 and 1: the two category-macro ratios of "expected" are estimates
    res = M.evaluate(y, s, ties=("modified", "expected"), n_draws=5,
                     sample_weight=np.full(len(s), 0.5))
    wide = pd.DataFrame(res)
    assert list(wide.columns) == ["modified", "expected"]
    assert list(wide.index) == list(M.METRIC_KEYS)
    assert wide.loc["coverage", "modified"] == res["modified"]["coverage"]
    tidy = res.to_frame()
    assert tidy.shape == (2 * 19, 4) and list(tidy.columns) == ["ties", "metric", "value",
                                                               "stderr"]
    row = tidy[(tidy.ties == "expected") & (tidy.metric == "f1_macro_c")].iloc[0]
    assert row.value == res["expected"]["f1_macro_c"] and row.stderr >= 0
    assert tidy.stderr.notna().sum() == len(res.estimated) == 2
    page = res._repr_html_()
    assert page.count("<tr>") == 20 and "Monte-Carlo" in page and "~" in page
    assert dict(res) == res.to_dict() and len(res) == 2 and "modified" in res


def _race(ev, chunks, first_rows, n_threads=8):
    """Each of ``n_threads`` threads updates ``ev`` with its chunks, all starting at once."""
    start = threading.Barrier(n_threads)

    def run(k):
        start.wait()
        for i in range(k, len(chunks), n_threads):
            ev.update(*chunks[i], first_row=first_rows[i])

    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(run, range(n_threads)))
    return ev


@pytest.mark.parametrize("ties", [EVERY, ("dense", "modified")])
def test_eight_threads_updating_one_evaluator_lose_no_rows(ties):
    y, s = tied_data(800, 12, 7)
    kw = dict(ties=ties, random_state=5, n_draws=20)
    cuts = list(range(0, 800, 50))
    chunks = [(y[lo:lo + 50], s[lo:lo + 50]) for lo in cuts]
    want = M.evaluate(y, s, **kw)
    serial = M.Evaluator(**kw)
    for (yc, sc), lo in zip(chunks, cuts):
        serial.update(yc, sc, first_row=lo)
    assert_same(serial.result(), want)
    for _ in range(40):
        ev = _race(M.Evaluator(**kw), chunks, cuts)
        assert ev.rows == [(0, 800)] and ev.n_rows == 800
        assert_same(ev.result(), want)
        assert_same(ev.result(), serial.result())
    if "ordinal" not in ties:  # default first rows: each chunk gets rows nobody else has
        ev = _race(M.Evaluator(**kw), chunks, [None] * len(chunks))
        assert ev.rows == [(0, 800)]
        assert_same(ev.result(), want)


def test_concurrent_updates_of_the_same_rows_are_refused_not_lost():
    y, s = tied_data(400, 8, 3)
    errors = []
    ev = M.Evaluator(ties="modified")

    def run(_):
        try:
            ev.update(y, s, first_row=0)
        except ValueError as exc:
            errors.append(str(exc))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(run, range(8)))
    assert len(errors) == 7 and all("overlap" in e for e in errors)
    assert ev.rows == [(0, 400)]
    assert_same(ev.result(), M.evaluate(y, s, ties="modified"))


def test_an_empty_chunk_changes_nothing():
    y, s = tied_data(30, 5, 0)
    empties = [(y[:0], s[:0]), ([], s[:0]), (sp.csr_matrix(y[:0]), s[:0]),
               (y[:0], sp.csr_matrix(s[:0]))]
    ev = M.Evaluator(ties=("ordinal", "expected"))
    for empty in empties:                              # before any row
        ev.update(*empty)
    assert ev.rows == [] and ev.n_labels is None
    ev.update(y[:10], s[:10])
    for empty in empties:
        ev.update(*empty)
        ev.update(*empty, first_row=5)                 # inside rows already seen: no rows
    ev.update(y[10:], s[10:])                          # the default first row is still 10
    assert ev.rows == [(0, 30)]
    assert_same(ev.result(), M.evaluate(y, s, ties=("ordinal", "expected")))
    with pytest.raises(ValueError, match="labels"):
        ev.update(y[:0, :3], s[:0, :3])
    with pytest.raises(ValueError, match="shape"):
        ev.update(y[:0, :3], s[:0])
    with pytest.raises(TypeError, match="y_score"):
        ev.update(y[:0], s[:0].astype(complex))


def test_first_row_beyond_64_bits_is_refused():
    y, s = tied_data(10, 4, 0)
    for first in (2**63, 2**63 - 5, 2**64 + 1):
        with pytest.raises(ValueError, match="first_row"):
            M.Evaluator().update(y, s, first_row=first)
    ev = M.Evaluator(ties="ordinal").update(y, s, first_row=2**63 - 11)
    assert ev.rows == [(2**63 - 11, 2**63 - 1)]
    with pytest.raises(ValueError, match="first_row"):   # the default would pass 2**63 - 1
        ev.update(y[:1], s[:1])


def test_label_state_that_cannot_fit_is_refused_up_front(monkeypatch):
    """Per-label counts are inherent to the category-oriented (macro) averages: when a
    sparse matrix declares more labels than the process can hold counts for (here 1 MiB
    available), evaluate, Evaluator.update and the ranking metrics raise ValueError naming
    the number of labels and the memory before allocating anything (the truth is not made
    dense first); densifying a sparse truth is checked too. (2**31 - 1 labels run
    memory-capped in test_amplification.py.)"""
    import fastrank._validation as validation
    q = 2**16
    y = sp.csr_matrix(([1], [q - 1], [0, 1]), shape=(1, q))
    s = sp.csr_matrix(([0.5], [q - 1], [0, 1]), shape=(1, q))
    expected = M.evaluate(y, s, ties="modified").values  # with the machine's memory
    assert expected[0, 0] == 0 and expected[0, 1] == 0  # the one label ranked first
    monkeypatch.setattr(validation, "available_memory", lambda: 2**20)
    counts = rf"the per-label counts of {q} labels \(n_labels\) needs [\d.]+ MiB, more " \
        r"than the 1\.0 MiB this process can allocate"
    for call in (M.evaluate, M.Evaluator().update, M.one_error, M.coverage):
        with pytest.raises(ValueError, match=counts):
            call(y, s)
    tall = sp.csr_matrix(np.eye(20_000, 100))
    with pytest.raises(ValueError, match=r"y_true: a 20000 x 100 indicator matrix needs "
                                         r"1\.9 MiB, more than the 1\.0 MiB"):
        M.coverage(tall, np.ones((20_000, 100)))


def _numpy_document_sums(doc, cols, q, zd, weight):
    """The per-document sums written with NumPy: each value array summed alone by np.sum
    (pairwise), the set metrics' values computed elementwise as NumPy computes them."""
    out = []
    for c in cols:
        tp, npred, rel = doc[:, c[5]], doc[:, c[6]], doc[:, 0]

        def ratio(num, den):
            r = np.full(num.shape, zd)
            np.divide(num, den, out=r, where=den > 0)
            return r

        exact = doc[:, c[7]] if c[7] >= 0 else ((npred == rel) & (tp == rel)).astype(float)
        values = [doc[:, c[k]] for k in range(5)] + [
            (npred + rel - 2.0 * tp) / q, exact, ratio(tp, npred), ratio(tp, rel),
            ratio(2.0 * tp, rel + npred), tp, npred, rel]
        out.append([(v if weight is None else v * weight).sum() for v in values])
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(n=st.sampled_from([0, 1, 7, 8, 9, 127, 128, 129, 1000, 1024, 1025, 2049, 70_001]),
       seed=st.integers(0, 2**32 - 1), weighted=st.booleans(),
       zd=st.sampled_from([0.0, 1.0, 0.25]), threads=st.sampled_from([1, 2, 3]))
def test_document_sums_have_numpy_bits(n, seed, weighted, zd, threads):
    """The kernel sums a block's per-document values per ranking type in parallel with the
    bits of NumPy's pairwise sums (the rows read in pieces of about 1 024, joined in the
    pairwise order), whatever the thread count; zero denominators give
    zero_division, a ranking type without an exact column compares the counts."""
    from threadpoolctl import threadpool_limits

    from fastrank._ext import tie_metrics
    rng = np.random.default_rng(seed)
    doc = rng.random((n, _common.N_SLOTS)) * rng.integers(1, 50, size=(n, _common.N_SLOTS))
    counts = rng.integers(0, 4, size=(n, 3)).astype(float)  # |C|, tp, npred, some zero
    cols = np.array([[1, 2, 3, 4, 5, 6, 7, -1], [9, 10, 11, 12, 13, 14, 15, 16]])
    doc[:, 0], doc[:, 6], doc[:, 7] = counts[:, 0], np.minimum(counts[:, 1], counts[:, 0]), \
        counts[:, 2]
    doc[:, 14], doc[:, 15] = doc[:, 6], doc[:, 7]
    weight = rng.random(n) * 3 if weighted else None
    out = np.empty((2, 13))
    with threadpool_limits(threads, user_api="openmp"):
        tie_metrics.document_sums(doc, cols, 17, zd, np.empty(0) if weight is None else weight,
                                  out)
    want = _numpy_document_sums(doc, cols, 17, zd, weight)
    np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))


@settings(max_examples=40, deadline=None)
@given(n=st.sampled_from([0, 1, 7, 8, 9, 127, 128, 129, 1000, 16_383, 16_384, 70_001]),
       seed=st.integers(0, 2**32 - 1), weighted=st.booleans(), column=st.integers(0, 4),
       threads=st.sampled_from([1, 2, 3]))
def test_document_total_has_numpy_bits(n, seed, weighted, column, threads):
    """A single metric's total over its documents: one column of the per-document values
    (strided), times the weights when given, summed in parts on the threads side by side,
    with the bits of NumPy's pairwise sum whatever the thread count."""
    from threadpoolctl import threadpool_limits

    from fastrank._ext import tie_metrics
    rng = np.random.default_rng(seed)
    doc = rng.standard_normal((n, 5)) * 10.0 ** rng.integers(-6, 6, size=(n, 5))
    weight = rng.random(n) * 3 if weighted else None
    with threadpool_limits(threads, user_api="openmp"):
        got = tie_metrics.document_total(doc[:, column],
                                         np.empty(0) if weight is None else weight)
    want = (doc[:, column] if weight is None else doc[:, column] * weight).sum()
    assert np.float64(got).view(np.uint64) == want.view(np.uint64)
    with pytest.raises(ValueError, match="3 weights for 2 values"):
        tie_metrics.document_total(doc[:2, column] if n >= 2 else np.ones(2), np.ones(3))


@settings(max_examples=40, deadline=None)
@given(n_parts=st.sampled_from([0, 1, 2, 16, 255, 256]),
       width=st.sampled_from([0, 2, 9, 511, 512, 513, 9_000, 40_001]),
       seed=st.integers(0, 2**32 - 1), threads=st.sampled_from([1, 2, 3]))
def test_chunk_total_has_numpy_bits(n_parts, width, seed, threads):
    """The per-chunk label counts of a kernel call, summed over the chunks column by column
    on the threads side by side, with the bits of NumPy's sum over the first axis (of two or
    more columns: a single one NumPy sums pairwise; a call's counts have N_LAB rows)."""
    from threadpoolctl import threadpool_limits

    from fastrank._ext import tie_metrics
    rng = np.random.default_rng(seed)
    parts = rng.standard_normal((n_parts, width)) * 10.0 ** rng.integers(-6, 6, (n_parts, width))
    out = np.full(width, np.nan)
    with threadpool_limits(threads, user_api="openmp"):
        tie_metrics.chunk_total(parts, out)
    assert np.array_equal(out.view(np.uint64), parts.sum(axis=0).view(np.uint64))
    with pytest.raises(ValueError, match=f"{width} columns summed into {width + 1}"):
        tie_metrics.chunk_total(parts, np.empty(width + 1))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(2, 40), st.booleans(), st.sampled_from([2, 255]),
       st.sampled_from(["C", "F", "CSR"]), st.sampled_from([np.float32, np.float64]),
       st.data())
def test_evaluate_finds_bad_input_as_its_kernel_reads_it(n, q, in_truth, bad_value, layout,
                                                         dtype, data):
    """evaluate does not scan its inputs before the kernel: the kernel finds a NaN belief
    (stored or not in a CSR matrix) or a truth value other than 0/1 wherever it lies, in
    any row of any chunk, and the error is the scanning checks' own."""
    rng = np.random.default_rng(n * q)
    s = np.round(rng.random((n, q)) * 4) / 4 - 0.25
    y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    i, j = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, q - 1))
    if in_truth:
        y[i, j] = bad_value
    else:
        s[i, j] = np.nan
    s = s.astype(dtype)
    S = {"C": s, "F": np.asfortranarray(s), "CSR": sp.csr_matrix(s)}[layout]
    with pytest.raises(ValueError) as want:
        _common.check_inputs(y, S)
    for ties in (M.TIES, "expected", ("dense", "ordinal")):
        with pytest.raises(ValueError) as got:
            M.evaluate(y, S, ties=ties)
        assert str(got.value) == str(want.value)
    ev = M.Evaluator(ties="modified")
    if i:
        ev.update(y[:i], S[:i])
    with pytest.raises(ValueError) as got:  # a later chunk: the rows of that chunk
        ev.update(y[i:], S[i:], first_row=i)
    with pytest.raises(ValueError) as want:
        _common.check_inputs(y[i:], S[i:])
    assert str(got.value) == str(want.value)
    y[i, j] = 0  # the failed chunk's rows were given back: sound rows take their place
    s[i, j] = 0.5
    s = s.astype(dtype)
    S = {"C": s, "F": np.asfortranarray(s), "CSR": sp.csr_matrix(s)}[layout]
    ev.update(y[i:], S[i:], first_row=i)
    np.testing.assert_allclose(ev.result().values, M.evaluate(y, S, ties="modified").values,
                               rtol=1e-12, atol=1e-15)  # (chunk sums: to rounding)
