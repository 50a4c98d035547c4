"""ties="expected": exact expectations over random orders inside tie groups, checked by
enumerating every order of every tie group (and, for the two category-macro ratios on
larger inputs, by the per-label distributions built by plain convolution)."""
import itertools
from fractions import Fraction

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import ref_metrics as ref
from fastrank import metrics as M

MACRO_C = ("precision_macro_c", "f1_macro_c")  # per-label ratios of random counts
EVERY_BUT_MACRO_C = tuple(k for k in M.METRIC_KEYS if k not in MACRO_C)


def orders(scores_row):
    """Every ordinal rank vector of one row: each tie group in every possible order."""
    groups = [np.flatnonzero(scores_row == v) for v in np.unique(scores_row)[::-1]]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        r = np.empty(scores_row.size, dtype=np.int64)
        r[np.concatenate(perms).astype(np.int64)] = np.arange(1, scores_row.size + 1)
        yield r


def n_orders(s):
    return int(np.prod([np.prod([math.factorial(c) for c in np.unique(row, return_counts=True)[1]])
                        for row in s]))


def ordinal_values(y, s, r, top_k=None, zd=0.0):
    """Every metric under the ordinal rank matrix ``r``, from the reference."""
    vals = {k: np.mean(f(y, s, r)) for k, f in ref.RANKING.items()}
    vals["ap_label"] = np.mean(ref.ap_label(y, s, r))
    vals.update(ref.set_metrics(y, ref.perfect_set(y, s, r, top_k), zd))
    return vals


def brute_force(y, s, top_k=None, copies=None, zd=0.0):
    """Mean over all joint orders of every metric computed with the ordinal ranking; with
    ``copies``, row j's one order stands for ``copies[j]`` rows."""
    rows = [list(orders(row)) for row in s]
    if copies is not None:
        y, s = np.repeat(y, copies, axis=0), np.repeat(s, copies, axis=0)
    acc, count = {}, 0
    for combo in itertools.product(*rows):
        r = np.stack(combo)
        vals = ordinal_values(y, s, r if copies is None else np.repeat(r, copies, axis=0),
                              top_k, zd)
        for k, v in vals.items():
            acc[k] = acc.get(k, 0.0) + v
        count += 1
    return {k: v / count for k, v in acc.items()}, count


@st.composite
def small_tied(draw, max_n=1, max_q=7):
    n = draw(st.integers(1, max_n))
    q = draw(st.integers(1, max_q))
    levels = draw(st.lists(st.sampled_from([0.0, 0.2, 0.5, 1.0, -0.5]), min_size=1, max_size=3,
                           unique=True))
    s = np.array(draw(st.lists(st.sampled_from(levels), min_size=n * q, max_size=n * q)),
                 dtype=np.float64).reshape(n, q)
    y = draw(arrays(np.uint8, (n, q), elements=st.integers(0, 1)))
    return y, s


@settings(max_examples=30, deadline=None)
@given(small_tied(max_q=6))
def test_expected_equals_mean_over_all_orders(case):
    y, s = case
    want, _ = brute_force(y, s)
    res = M.evaluate(y, s, ties="expected")["expected"]
    for k in M.METRIC_KEYS:
        assert res[k] == pytest.approx(want[k], abs=1e-12), k
    assert M.average_precision(y, s, ties="expected", per="label") == \
        pytest.approx(want["ap_label"], abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(small_tied(max_n=3, max_q=4), st.sampled_from([0.0, 1.0, 0.25]))
def test_expected_across_documents_and_labels(case, zd):
    y, s = case  # category-oriented metrics pool several documents
    assume(n_orders(s) <= 1500)
    want, _ = brute_force(y, s, zd=zd)
    res = M.evaluate(y, s, ties="expected", zero_division=zd)
    got = res["expected"]
    for k in M.METRIC_KEYS:  # every value exact, the category-macro ratios included
        assert got[k] == pytest.approx(want[k], abs=1e-12), k
    assert np.isnan(res.stderr).all() and res.estimated == [] and res.n_draws == 0


@settings(max_examples=40, deadline=None)
@given(small_tied(max_n=3, max_q=5), st.integers(1, 6), st.sampled_from([0.0, 1.0]))
def test_expected_top_k_cutoff(case, top_k, zd):
    y, s = case
    assume(n_orders(s) <= 1500)
    want, _ = brute_force(y, s, top_k, zd=zd)
    res = M.evaluate(y, s, ties="expected", cutoff=top_k, zero_division=zd)
    for k in M.METRIC_KEYS:
        assert res["expected"][k] == pytest.approx(want[k], abs=1e-12), k
    assert np.isnan(res.stderr).all()


def test_eight_labels_all_orders():
    s = np.array([[0.5, 0.2, 0.5, 0.0, 0.2, 0.5, 0.0, 0.1]])  # groups of 3, 2, 1 and 2
    for rel in ([0, 4, 6], [1], [3, 6], [2, 5, 0], []):
        y = np.zeros_like(s, dtype=np.uint8)
        y[0, rel] = 1
        want, count = brute_force(y, s)
        assert count == 6 * 2 * 1 * 2
        got = M.evaluate(y, s, ties="expected")["expected"]
        for k in M.METRIC_KEYS:
            assert got[k] == pytest.approx(want[k], abs=1e-12), (rel, k)


def test_hand_example_fig21():
    # c1 .5, {c2, c3} .2, c8 .1 with C = {c1, c2}: the two orders of {c2, c3} are equally likely
    s = np.array([[0.5, 0.2, 0.2, 0.1]])
    y = [{0, 1}]
    d = M.evaluate(y, s, ties="expected")["expected"]
    assert d["coverage"] == pytest.approx((1 + 2) / 2)
    assert d["ranking_loss"] == pytest.approx((0 + 0.25) / 2)
    assert d["average_precision"] == pytest.approx((1 + 5 / 6) / 2)
    assert d["r_precision"] == pytest.approx((1 + 0.5) / 2)
    assert d["exact_match"] == pytest.approx(0.5)
    assert d["hamming_loss"] == pytest.approx((0 + 0.5) / 2)
    assert d["one_error"] == 0
    s2 = np.array([[0.5, 0.5, 0.5, 0.1]])  # top group of 3, one relevant: P(top relevant) = 1/3
    assert M.one_error([{2}], s2, ties="expected") == pytest.approx(2 / 3)
    # coverage of 2 relevant among a tied top group of 3: E[max of 2 of {1,2,3}] - 1 = 8/3 - 1
    assert M.coverage([{0, 2}], s2, ties="expected") == pytest.approx(8 / 3 - 1)


def expected_ap_label_exact(y_row, s_row):
    """Expected average precision (per relevant label) of one row as an exact fraction: a
    relevant label of a tie group at positions start+1..start+size, below c relevant labels,
    sits at start + k with probability 1/size, with on average (k-1)(a-1)/(size-1) of the
    group's other a-1 relevant labels above it."""
    total, start, c = Fraction(0), 0, 0
    for v in np.unique(s_row)[::-1]:
        group = s_row == v
        size, a = int(group.sum()), int(y_row[group].sum())
        for k in range(1, size + 1):
            above = Fraction((k - 1) * (a - 1), size - 1) if size > 1 else 0
            total += Fraction(a, size) * (c + 1 + above) / (start + k)
        start, c = start + size, c + a
    return total / int(y_row.sum())


@pytest.mark.parametrize("q, levels, density", [(3000, 6, 0.1), (1000, 21, 0.1),
                                                (257, 2, 0.1), (5000, 3, 0.9), (600, 200, 0.5)])
def test_expected_average_precision_of_large_tie_groups_within_a_few_ulps(q, levels, density):
    """Groups of hundreds of labels, sparse or mostly relevant: each group's sum, formed from
    the harmonic numbers in double-double arithmetic, is within four roundings of the exact
    rational value, and the row's total within a few ulps, in evaluate and in the counting
    function alike."""
    rng = np.random.default_rng(q)
    s = np.round(rng.random((3, q)) * (levels - 1)) / (levels - 1) + 0.5
    y = (rng.random((3, q)) < density).astype(np.uint8)
    y[:, 0] = 1
    for i in range(3):  # no belief 0: the position form equals the label form
        want = float(expected_ap_label_exact(y[i], s[i]))
        row = (y[i:i + 1], s[i:i + 1])
        got = M.average_precision(*row, ties="expected", per="label")
        assert got == pytest.approx(want, rel=1e-15, abs=0)
        assert got == M.average_precision(*row, ties="expected", per="position")
        assert got == M.evaluate(*row, ties="expected")["expected"]["average_precision"]


def test_expected_values_have_the_same_bits_on_every_path(simd_paths):
    """The expected values in evaluate and in the counting function, on the AVX2, AVX-512
    and portable paths: one set of bits (groups of every size, sorted or counted)."""
    rng = np.random.default_rng(11)
    s = np.round(rng.random((60, 203)) * rng.choice([2, 7, 40], size=(60, 1))) + 1.0
    y = (rng.random((60, 203)) < 0.2).astype(np.uint8)
    results = []
    for _ in simd_paths:
        values = M.evaluate(y, s, ties="expected").values
        per_row = [M.average_precision(y[i:i + 1], s[i:i + 1], ties="expected", per=per)
                   for i in range(len(y)) for per in ("label", "position")]
        results.append((values.view(np.int64), np.array(per_row).view(np.int64)))
    for values, per_row in results[1:]:
        assert np.array_equal(values, results[0][0])
        assert np.array_equal(per_row, results[0][1])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_without_ties_expected_is_every_type(n, q, seed):
    rng = np.random.default_rng(seed)
    s = np.stack([rng.permutation(q) + 1.0 for _ in range(n)])
    y = (rng.random((n, q)) < 0.4).astype(np.uint8)
    res = M.evaluate(y, s, ties=("expected", "ordinal", "dense", "standard", "modified"))
    for t in res.ties[1:]:
        for k in M.METRIC_KEYS:
            assert res[t][k] == pytest.approx(res["expected"][k], abs=1e-12), (t, k)
    assert np.isnan(res.stderr).all()  # no estimate


def test_expected_is_the_limit_of_ordinal_draws():
    rng = np.random.default_rng(0)
    s = np.round(rng.random((300, 30)) * 4) / 4
    y = (rng.random((300, 30)) < 0.2).astype(np.uint8)
    exp = M.evaluate(y, s, ties="expected", random_state=0)
    draws = np.array([M.evaluate(y, s, ties="ordinal", random_state=k).values[0]
                      for k in range(200)])
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    tol = 5 * np.sqrt(se ** 2 + np.nan_to_num(exp.stderr[0]) ** 2) + 1e-12
    assert np.all(np.abs(exp.values[0] - mean) <= tol), \
        dict(zip(M.METRIC_KEYS, np.abs(exp.values[0] - mean) / tol))


def test_individual_functions_and_input_forms():
    rng = np.random.default_rng(3)
    s = np.round(rng.random((50, 12)) * 3) / 3
    y = (rng.random((50, 12)) < 0.3).astype(np.uint8)
    res = M.evaluate(y, s, ties=("expected", "modified"), random_state=4)
    d = res["expected"]
    assert d["one_error"] == M.one_error(y, s, ties="expected")
    assert d["coverage"] == M.coverage(y, s, ties="expected")
    assert d["ranking_loss"] == M.ranking_loss(y, s, ties="expected")
    assert d["average_precision"] == M.average_precision(y, s, ties="expected")
    assert d["r_precision"] == M.r_precision(y, s, ties="expected")
    alone = M.evaluate(y, s, ties="expected", random_state=4)
    assert alone.to_dict()["expected"] == d  # same draws whatever else is evaluated
    for ss in (sp.csr_matrix(s), s.astype(np.float32), np.asfortranarray(s)):
        assert M.evaluate(y, ss, ties="expected", random_state=4).to_dict()["expected"] == d
    assert res.estimated == [] and res.stderr_dict() == {} and "~" not in str(res)
    # weights other than 0 and 1 draw those rows' cut groups: Monte-Carlo estimates
    res = M.evaluate(y, s, ties=("expected", "modified"), random_state=4,
                     sample_weight=np.full(50, 0.5))
    assert res.estimated == [("expected", "precision_macro_c"), ("expected", "f1_macro_c")]
    assert np.isnan(res.stderr[1]).all()
    se = res.stderr_dict()
    assert list(se) == ["expected"] and list(se["expected"]) == list(MACRO_C)
    assert all(v > 0 for v in se["expected"].values())  # these ties do make the draws vary
    assert M.evaluate(y, s, ties="modified").stderr_dict() == {}
    text = str(res)
    assert "~" in text and "Monte-Carlo estimate over 100 random orders" in text
    with pytest.raises(ValueError, match="n_draws"):
        M.evaluate(y, s, ties="expected", n_draws=1)
    with pytest.raises(ValueError, match="no ties=\"expected\" form"):
        M.cutoff(s, y, ties="expected")


@pytest.mark.shared_data
def test_expected_matches_ordinal_draws_on_enron_knn(shared_data):
    """Real beliefs: kNN vote fractions (k=10, aggregate="count") on Mulan enron are heavily
    tied; the expected values must agree with the mean of many seeded ordinal draws."""
    from fastrank.datasets import load_arff
    from fastrank.neighbors import KNN

    data = load_arff(shared_data / "mulan" / "enron" / "enron.arff")
    X, Y = data.X, data.Y
    train, test = np.arange(0, X.shape[0], 2), np.arange(1, X.shape[0], 2)
    scores = KNN(k=10, aggregate="count").fit(X[train], Y[train]).decision_function(X[test])
    y = Y[test]
    assert len(np.unique(scores)) <= 11  # the point: only 11 belief levels
    exp = M.evaluate(y, scores, ties="expected", random_state=0)
    draws = np.array([M.evaluate(y, scores, ties="ordinal", random_state=k).values[0]
                      for k in range(100)])
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    tol = 5 * np.sqrt(se ** 2 + np.nan_to_num(exp.stderr[0]) ** 2) + 1e-12
    ratio = dict(zip(M.METRIC_KEYS, np.round(np.abs(exp.values[0] - mean) / tol, 3)))
    assert np.all(np.abs(exp.values[0] - mean) <= tol), ratio
    # and the ordinal draws really do vary: expected removes real noise
    assert se[M.METRIC_KEYS.index("coverage")] > 0


# ---- the category-macro ratios on inputs too large to enumerate ---------------------------

def macro_c_reference(y, s, top_k=None, zd=0.0):
    """Expected macro precision^c and F1^c from each label's joint distribution of (TP, FP),
    built by plain 2-D convolution: the tie group holding the cutoff gives each of its s
    labels, independently across documents, a d/s chance of being predicted."""
    n, q = y.shape
    tp0, pred0, probs = np.zeros(q), np.zeros(q), [[] for _ in range(q)]
    for j in range(n):
        k, pos = (int(y[j].sum()) if top_k is None else top_k), 0
        for v in np.unique(s[j])[::-1]:
            g = np.flatnonzero(s[j] == v)
            take = min(g.size, k - pos)
            if take > 0 and not (top_k is None and v == 0):  # perfect: belief 0 never taken
                for c in g:
                    if take == g.size:
                        tp0[c], pred0[c] = tp0[c] + y[j, c], pred0[c] + 1
                    else:
                        probs[c].append((take / g.size, y[j, c]))
            pos += g.size
    prec, f1 = [], []
    for c in range(q):
        P = np.ones((1, 1))  # P[x, z]: x relevant and z irrelevant boundary labels predicted
        for p, rel in probs[c]:
            grown = np.zeros((P.shape[0] + rel, P.shape[1] + 1 - rel))
            grown[:P.shape[0], :P.shape[1]] += (1 - p) * P
            grown[rel:, 1 - rel:] += p * P
            P = grown
        x, z = np.meshgrid(np.arange(P.shape[0]), np.arange(P.shape[1]), indexing="ij")
        tp, pred, r = tp0[c] + x, pred0[c] + x + z, y[:, c].sum()
        prec.append(np.sum(P * np.where(pred > 0, tp / np.maximum(pred, 1), zd)))
        f1.append(np.sum(P * np.where(pred + r > 0, 2 * tp / np.maximum(pred + r, 1), zd)))
    return np.mean(prec), np.mean(f1)


@pytest.mark.parametrize("n, q, levels, top_k, zd", [
    (300, 12, 3, None, 0.0), (300, 12, 3, 4, 0.5), (1500, 6, 2, None, 1.0),
    (600, 40, 5, 7, 0.0), (200, 5, 1, None, 0.0), (200, 5, 1, 2, 0.25)])
def test_macro_c_exact_against_convolution(n, q, levels, top_k, zd):
    rng = np.random.default_rng(n + q)
    s = np.round(rng.random((n, q)) * levels) / max(levels, 1) - (levels == 2) * 0.5
    s[: n // 3] = s[0]  # repeated rows: records of one probability counted many times
    y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    res = M.evaluate(y, s, ties="expected", cutoff="perfect" if top_k is None else top_k,
                     zero_division=zd)
    got = [res["expected"][k] for k in MACRO_C]
    assert got == pytest.approx(macro_c_reference(y, s, top_k, zd), abs=1e-12, rel=0)
    assert np.isnan(res.stderr).all()
    sparse = M.evaluate(y, sp.csr_matrix(s), ties="expected", zero_division=zd,
                        cutoff="perfect" if top_k is None else top_k)  # implicit zeros tied
    assert [sparse["expected"][k] for k in MACRO_C] == got


@pytest.mark.parametrize("cutoff", ["perfect", 3])
def test_macro_c_chunks_and_merges_equal_one_call(cutoff):
    import pickle
    rng = np.random.default_rng(7)
    s = np.round(rng.random((500, 20)) * 3) / 3
    y = (rng.random((500, 20)) < 0.25).astype(np.uint8)
    whole = M.Evaluator("expected", cutoff=cutoff).update(y, s)
    bounds = [0, 1, 90, 91, 300, 500]
    parts = [M.Evaluator("expected", cutoff=cutoff).update(y[lo:hi], s[lo:hi], first_row=lo)
             for lo, hi in zip(bounds[:-1], bounds[1:])]
    merged = pickle.loads(pickle.dumps(parts[3])).merge(parts[0])
    for p in (parts[4], parts[2], parts[1]):
        merged = p.merge(merged)
    assert merged._boundary == whole._boundary  # counts: the same state whatever the split
    got, want = merged.result(), whole.result()
    np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-15)
    for k in MACRO_C:  # computed from the same counts: the same bits
        assert got["expected"][k] == want["expected"][k]
    assert np.isnan(got.stderr).all()


@pytest.mark.parametrize("n, q, s_max", [(0, 3, 5), (50, 7, 4), (20_000, 30, 70),
                                          (70_000, 2_000, 300), (9_000, 1, 2**20)])
def test_boundary_records_counted_as_a_plain_reference(n, q, s_max):
    """The kernel's count of boundary records (blocks of entries counted in parallel, each
    label's sorted by (s, d)) against numpy: one class per distinct (label, s, d), sorted
    by it, its n_rel and n_irr summed; labels with many or few entries, large s."""
    from fastrank._ext import tie_metrics
    rng = np.random.default_rng(n + q)
    label = rng.integers(0, q, n)
    s_ = rng.integers(1, s_max + 1, n)
    d = rng.integers(1, s_ + 1)
    if n:  # some labels hold most of the entries
        label[: n // 2] = rng.integers(0, min(q, 3), n // 2)
        s_[: n // 3], d[: n // 3] = s_max, 1
    rel = rng.integers(0, 3, n)
    rows = np.ascontiguousarray(np.vstack([label, s_, d, rel, 2 - rel]), dtype=np.int64)
    start, classes = tie_metrics.tabulate(rows, q)
    keys, where = np.unique(rows[:3].T, axis=0, return_inverse=True)
    want = np.zeros((len(keys), 2), dtype=np.int64)
    np.add.at(want, where.ravel(), rows[3:].T)
    assert np.array_equal(start, np.searchsorted(keys[:, 0], np.arange(q + 1)))
    assert np.array_equal(classes, np.vstack([keys[:, 1:].T, want.T]))


@pytest.mark.parametrize("q, n_chunks", [(7, 60), (2**21 - 1, 12), (2**21, 12)])
def test_boundary_counts_added_chunk_by_chunk_equal_one_count(q, n_chunks):
    """Counts added chunk after chunk, and grouped otherwise, equal all the rows counted at
    once, and the sum holds few parts until read. Its parts merge by a stable sort of
    (label, s, d) packed in one integer: at 2**21 - 1 labels (s up to that) the largest keys
    fill 63 bits; at 2**21 they would take 65, and the rows are counted again instead."""
    from fastrank.metrics._boundary import BoundaryCounts
    rng = np.random.default_rng(q)
    chunks = []
    for i in range(n_chunks):
        n = int(rng.integers(0, 400)) if i % 5 else 0  # some chunks empty
        label = rng.choice([0, 1, q // 2, q - 1], n)
        s_ = np.where(rng.random(n) < 0.3, q, rng.integers(1, min(q, 9) + 1, n))
        d = np.minimum(s_, np.where(rng.random(n) < 0.5, s_, rng.integers(1, 9, n)))
        rel = rng.integers(0, 3, n)
        chunks.append(np.vstack([label, s_, d, rel, 2 - rel]).astype(np.int64))
    want = BoundaryCounts.counting(q, np.hstack(chunks))
    counted = [BoundaryCounts.counting(q, c) for c in chunks]
    total = counted[0]
    for part in counted[1:]:
        total = total + part
    assert len(total._parts) <= np.log2(want.size) + 1
    assert total == want
    halves = counted[:2]
    for i, part in enumerate(counted[2:]):
        halves[i % 2] = part + halves[i % 2]
    assert halves[1] + halves[0] == want == BoundaryCounts.summed(counted)
    assert np.array_equal(want.records(), BoundaryCounts.counting(q, want.records()).records())


def test_many_tied_records_are_counted_alike():
    # 32 000 rows of 40 tied labels: the kernel's chunks (2 000 rows, 80 000 tied labels
    # each) count their records in a hash table; chunks of 500 rows keep them as they come
    rng = np.random.default_rng(11)
    y = (rng.random((32_000, 40)) < 0.1).astype(np.uint8)
    s = np.where(rng.random((32_000, 40)) < 0.97, 0.5, 1.0)
    whole = M.Evaluator("expected").update(y, s)
    parts = M.Evaluator("expected")
    for lo in range(0, 32_000, 500):
        parts.update(y[lo:lo + 500], s[lo:lo + 500], first_row=lo)
    assert whole._boundary == parts._boundary
    assert whole._boundary.n_rel.sum() + whole._boundary.n_irr.sum() > 16 * 65_536


def test_weights_zero_and_one_are_exact_and_others_estimated():
    rng = np.random.default_rng(5)
    s = np.round(rng.random((200, 10)) * 2) / 2
    y = (rng.random((200, 10)) < 0.3).astype(np.uint8)
    w = rng.integers(0, 2, 200)
    res = M.evaluate(y, s, ties="expected", sample_weight=w)
    np.testing.assert_allclose(res.values, M.evaluate(y[w == 1], s[w == 1],
                                                      ties="expected").values, atol=1e-12)
    assert res.estimated == []
    # a weight of 2 on some rows: those rows drawn, the rest still exact given each draw
    w2 = np.where(np.arange(200) < 20, 2, w)
    est = M.evaluate(y, s, ties="expected", sample_weight=w2, n_draws=400)
    want = M.evaluate(np.vstack([y[w2 == 1], y[w2 == 2], y[w2 == 2]]),
                      np.vstack([s[w2 == 1], s[w2 == 2], s[w2 == 2]]), ties="expected")
    assert est.estimated == [("expected", k) for k in MACRO_C]
    for k in EVERY_BUT_MACRO_C:
        assert est["expected"][k] == pytest.approx(want["expected"][k], abs=1e-12), k
    for k in MACRO_C:  # a weight 2 shares one order between two copies: close, not equal
        assert abs(est["expected"][k] - want["expected"][k]) < 0.02


# ---- integer weights: one random order counted w times -------------------------------------

def test_weight_two_is_one_order_counted_twice_not_two_orders():
    # labels 0 and 1 tied, label 0 relevant: one order gives per-label precisions (1, 0/0)
    # or (0/0, 0), so 1/4; two copies may disagree, (1, 0) half the time, so 3/8
    y, s = np.array([[1, 0]]), np.array([[0.5, 0.5]])
    kw = dict(ties="expected", n_draws=20_000, random_state=0)
    weighted = M.evaluate(y, s, sample_weight=[2], **kw)
    copies = M.evaluate(np.repeat(y, 2, axis=0), np.repeat(s, 2, axis=0), **kw)
    k = M.METRIC_KEYS.index("precision_macro_c")
    assert abs(weighted.values[0, k] - 1 / 4) <= 5 * weighted.stderr[0, k], weighted.values
    assert copies.values[0, k] == pytest.approx(3 / 8, abs=1e-15)  # weights 1: exact
    assert np.isnan(copies.stderr[0, k])
    assert brute_force(y, s, copies=[2])[0]["precision_macro_c"] == 1 / 4
    assert brute_force(np.repeat(y, 2, axis=0), np.repeat(s, 2, axis=0))[0][
        "precision_macro_c"] == 3 / 8


@settings(max_examples=15, deadline=None)
@given(small_tied(max_n=3, max_q=4), st.lists(st.integers(0, 3), min_size=3, max_size=3))
def test_expected_with_integer_weights(case, weights):
    y, s = case
    w = np.array(weights[:y.shape[0]])
    assume(w.sum() > 0 and n_orders(s) <= 1500)
    want, _ = brute_force(y, s, copies=w)
    res = M.evaluate(y, s, ties="expected", n_draws=400, random_state=1, sample_weight=w)
    got = res["expected"]
    for k in M.METRIC_KEYS if np.isin(w, (0, 1)).all() else EVERY_BUT_MACRO_C:
        assert got[k] == pytest.approx(want[k], abs=1e-12), k
    y_copies, s_copies = np.repeat(y, w, axis=0), np.repeat(s, w, axis=0)
    if n_orders(s_copies) <= 1500:  # exact values are linear: a weight is the same as copies
        copies, _ = brute_force(y_copies, s_copies)
        for k in EVERY_BUT_MACRO_C:
            assert copies[k] == pytest.approx(want[k], abs=1e-12), k
    for k in MACRO_C:  # the estimand shares each document's order among its weight
        se = np.nan_to_num(res.stderr[0, M.METRIC_KEYS.index(k)])  # NaN: exact
        assert abs(got[k] - want[k]) <= 5 * se + 1e-12, (k, got[k], want[k], se)


@pytest.mark.parametrize("seed", range(5))
def test_ordinal_with_integer_weights_repeats_the_rows_order(seed):
    import fastrank
    rng = np.random.default_rng(seed)
    s = np.round(rng.random((12, 6)) * 2) / 2
    y = (rng.random((12, 6)) < 0.4).astype(np.uint8)
    w = rng.integers(0, 4, 12)
    got = M.evaluate(y, s, ties="ordinal", random_state=seed, sample_weight=w)["ordinal"]
    r = fastrank.rank(s, "ordinal", random_state=seed)  # the metrics' shuffle, row by row
    want = ordinal_values(np.repeat(y, w, axis=0), np.repeat(s, w, axis=0),
                          np.repeat(r, w, axis=0))
    for k in M.METRIC_KEYS:
        assert got[k] == pytest.approx(want[k], abs=1e-12), k
