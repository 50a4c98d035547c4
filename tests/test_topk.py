"""Top-k metrics of extreme multi-label classification: exact tie semantics against brute
force, bounds, and the formulas of pyxclib, napkinXC, ranx and scikit-learn on untied data."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from ref_topk import aggregate, order_values, tie_groups_of, tie_orders

import fastrank
from fastrank.metrics import PS_METRICS, TOPK_METRICS, TOPK_TIES, TopKEvaluator, \
    evaluate_at_k, ndcg_at_k, precision_at_k, propensity

ALL_METRICS = TOPK_METRICS + PS_METRICS


def tied_rows(rng, n, q, levels=3, density=0.4):
    """Coarse scores (heavy ties) and a truth with some empty rows."""
    scores = rng.integers(0, levels, (n, q)) / levels
    truth = (rng.random((n, q)) < density).astype(np.uint8)
    truth[0] = 0
    return truth, scores


def brute_force(truth, groups_per_row, invp, ks):
    """{mode: {metric: array over ks}} for expected (mean over every order), optimistic
    (max) and pessimistic (min), from every order of every tie group of every row."""
    per_mode = {"expected": [], "optimistic": [], "pessimistic": []}
    for t, groups in zip(truth, groups_per_row):
        relevant = set(np.flatnonzero(t))
        vals = np.array([[order_values(o, relevant, invp, k) for k in ks]
                         for o in tie_orders(groups)])          # (orders, ks, values)
        per_mode["expected"].append(vals.mean(axis=0))
        per_mode["optimistic"].append(vals.max(axis=0))
        per_mode["pessimistic"].append(vals.min(axis=0))
    out = {}
    for mode, docs in per_mode.items():
        docs = np.array(docs)                                   # (n, ks, values)
        agg = [aggregate(docs[:, j]) for j in range(len(ks))]
        out[mode] = {m: np.array([a[m] for a in agg]) for m in ALL_METRICS}
    return out


def as_pairs(scores, keep):
    """The top-``keep`` (indices, scores) pair of each row, listed in a shuffled order."""
    rng = np.random.default_rng(1)
    idx = np.argsort(-scores, axis=1, kind="stable")[:, :keep]
    idx = np.array([rng.permutation(r) for r in idx])
    return idx, np.take_along_axis(scores, idx, axis=1)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("form", ["dense", "csr", "pairs"])
def test_expected_and_bounds_equal_brute_force(seed, form):
    rng = np.random.default_rng(seed)
    n, q, ks = 6, 7, (1, 2, 3, 5)
    truth, scores = tied_rows(rng, n, q)
    invp = 1.0 / rng.uniform(0.2, 1.0, q)
    invp[:2] = invp[2]  # equal weights too
    if form == "dense":
        y_score, groups = scores, [tie_groups_of(s) for s in scores]
    elif form == "csr":
        stored = rng.random((n, q)) < 0.6
        y_score = sp.csr_matrix((scores[stored], np.nonzero(stored)[1],
                                 np.concatenate([[0], np.cumsum(stored.sum(1))])), shape=(n, q))
        groups = [tie_groups_of(s, np.flatnonzero(st_)) for s, st_ in zip(scores, stored)]
    else:
        idx, sc = as_pairs(scores, 4)
        y_score = (idx, sc)
        groups = [tie_groups_of(s, i) for s, i in zip(scores, idx)]
    want = brute_force(truth, groups, invp, ks)
    got = evaluate_at_k(sp.csr_matrix(truth), y_score, k=ks, propensity=1.0 / invp,
                        ties=("expected", "optimistic", "pessimistic"), n_labels=q)
    for mode in want:
        for j, metric in enumerate(got.metrics):
            np.testing.assert_allclose(got.values[got.ties.index(mode), j], want[mode][metric],
                                       rtol=0, atol=1e-12, err_msg=f"{mode} {metric}")


def test_order_modes_follow_fastrank_rank():
    """ordinal and stable: the order fastrank.rank gives, on the dense equivalent of every
    input form (unscored labels below every scored one)."""
    rng = np.random.default_rng(3)
    n, q, ks = 40, 9, (1, 2, 4, 9)
    truth, scores = tied_rows(rng, n, q, levels=4)
    invp = 1.0 / rng.uniform(0.1, 1.0, q)
    idx, sc = as_pairs(scores, 5)
    dense_equiv = np.full((n, q), -1.0)
    np.put_along_axis(dense_equiv, idx, sc, axis=1)
    for method in ("ordinal", "stable"):
        r = fastrank.rank(dense_equiv, method, random_state=11)
        docs = [[order_values(list(np.argsort(rr)), set(np.flatnonzero(t)), invp, k)
                 for k in ks] for t, rr in zip(truth, r)]
        docs = np.array(docs)
        want = [aggregate(docs[:, j]) for j in range(len(ks))]
        got = evaluate_at_k(truth, (idx, sc), k=ks, ties=method, propensity=1 / invp,
                            random_state=11)
        for j, metric in enumerate(got.metrics):
            np.testing.assert_allclose(got.values[0, j], [w[metric] for w in want],
                                       rtol=0, atol=1e-12, err_msg=f"{method} {metric}")


def test_trec_order_is_decimal_strings_descending():
    """Inside a tie group trec_eval orders docnos by strcmp, descending: 9, 89, 8, 10, 1."""
    q = 12
    scores = np.zeros((1, q))
    truth = np.zeros((1, q), dtype=np.uint8)
    names = sorted(map(str, range(q)), reverse=True)   # strcmp descending
    for label in range(q):
        truth[0, :] = 0
        truth[0, label] = 1
        position = names.index(str(label))
        got = evaluate_at_k(truth, scores, k=tuple(range(1, q + 1)), ties="trec")
        hits = np.array([got["trec"][f"precision@{k}"] * k for k in range(1, q + 1)])
        np.testing.assert_allclose(hits, (np.arange(q) >= position).astype(float), atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(2, 30), st.integers(1, 5))
def test_optimistic_expected_pessimistic_order(seed, n, q, levels):
    rng = np.random.default_rng(seed)
    truth, scores = tied_rows(rng, n, q, levels=levels)
    ks = tuple(sorted({1, min(q, 3), q}))
    p = rng.uniform(0.05, 1.0, q)
    r = evaluate_at_k(truth, scores, k=ks, ties=("optimistic", "expected", "pessimistic"),
                      propensity=p)
    opt, exp_, pes = r.values
    # the normalised PS metrics share their normaliser, so the order holds for every metric
    assert (opt >= exp_ - 1e-12).all() and (exp_ >= pes - 1e-12).all()
    for t in ("ordinal", "stable", "trec"):
        v = evaluate_at_k(truth, scores, k=ks, ties=t, propensity=p, random_state=seed).values[0]
        assert (v <= opt + 1e-12).all() and (v >= pes - 1e-12).all()


# ---- untied data: every mode equals the tools' formulas -----------------------------------

def untied(seed, n=60, q=40, density=0.1):
    rng = np.random.default_rng(seed)
    scores = rng.permutation(n * q).reshape(n, q) / (n * q)
    truth = (rng.random((n, q)) < density).astype(np.uint8)
    truth[:2] = 0
    return truth, scores, rng


def pyxclib_formulas(truth, scores, invp, k):
    """pyxclib's xc_metrics (precision, ndcg, psprecision, psndcg), written out in NumPy:
    flags of the top-k labels by score; P@k = mean(cumsum(flags) / k);
    nDCG@k = mean(DCG@k / min(IDCG over all m relevant, sum_{p<k} 1/log2(p+2)))  — which is
    the IDCG over min(k, m) positions, and 0 for a document without relevant labels (its
    min(...) is the k-position sum and its DCG is 0); PSP@k = mean(sum_{p<k} flags*w / k) /
    mean(sum of the top-k w of the relevant labels / k); PSnDCG@k = mean(PSDCG/norm) /
    mean(best PSDCG/norm) with the plain normaliser above."""
    top = np.argsort(-scores, axis=1)[:, :k]
    flags = np.take_along_axis(truth, top, axis=1).astype(float)
    disc = 1.0 / np.log2(np.arange(k) + 2)
    m = truth.sum(axis=1)
    cum = np.cumsum(1.0 / np.log2(np.arange(1, max(m.max(), k) + 1) + 1))
    norm = np.minimum(cum[m - 1], disc.sum())          # m = 0 reads cum[-1] >= disc.sum()
    best = -np.sort(-(truth * invp), axis=1)[:, :k]
    wflags = flags * invp[top]
    return {"precision": np.mean(flags.sum(1) / k),
            "ndcg": np.mean((flags * disc).sum(1) / norm),
            "psprecision": np.mean(wflags.sum(1) / k) / np.mean(best.sum(1) / k),
            "psndcg": np.mean((wflags * disc).sum(1) / norm) / np.mean((best * disc).sum(1) / norm)}


@pytest.mark.parametrize("seed", range(3))
def test_untied_every_mode_equals_pyxclib_formulas(seed):
    truth, scores, rng = untied(seed)
    p = rng.uniform(0.05, 1.0, truth.shape[1])
    ks = (1, 3, 5)
    r = evaluate_at_k(truth, scores, k=ks, ties=TOPK_TIES, propensity=p)
    for k in ks:
        want = pyxclib_formulas(truth, scores, 1 / p, k)
        for t in TOPK_TIES:
            for metric, value in want.items():
                assert abs(r[t][f"{metric}@{k}"] - value) < 1e-12, (t, metric, k)


@pytest.mark.parametrize("seed", range(3))
def test_untied_every_mode_equals_napkinxc(seed):
    from napkinxc import metrics as nxc
    truth, scores, rng = untied(seed)
    p = rng.uniform(0.05, 1.0, truth.shape[1])
    ks = (1, 2, 3, 4, 5)
    y = sp.csr_matrix(truth)
    want = {"precision": nxc.precision_at_k(y, scores, k=5),
            "recall": nxc.recall_at_k(y, scores, k=5),
            "dcg": nxc.dcg_at_k(y, scores, k=5),
            "ndcg": nxc.ndcg_at_k(y, scores, k=5),
            "psprecision": nxc.psprecision_at_k(y, scores, 1 / p, k=5),
            "psprecision_gain": nxc.psprecision_at_k(y, scores, 1 / p, k=5, normalize=False),
            "psndcg": nxc.psndcg_at_k(y, scores, 1 / p, k=5),
            "psndcg_gain": nxc.psndcg_at_k(y, scores, 1 / p, k=5, normalize=False),
            # napkinXC's PSDCGAtK divides PSDCG@k by k as well
            "psdcg": nxc.psdcg_at_k(y, scores, 1 / p, k=5, normalize=False) * np.arange(1, 6)}
    r = evaluate_at_k(truth, scores, k=ks, ties=TOPK_TIES, propensity=p)
    for i, t in enumerate(r.ties):
        for metric, values in want.items():
            np.testing.assert_allclose(r.values[i, r.metrics.index(metric)], values,
                                       rtol=0, atol=1e-12, err_msg=f"{t} {metric}")


@pytest.mark.parametrize("seed", range(2))
# ranx's own numba-compiled precision warns of a cast inside it, whatever its input
@pytest.mark.filterwarnings("ignore:.*unsafe cast from uint64 to int64:Warning")
def test_untied_every_mode_equals_ranx(seed):
    from ranx import Qrels, Run, evaluate as ranx_evaluate
    truth, scores, _ = untied(seed, n=30, q=25, density=0.15)
    keep = truth.sum(1) > 0          # ranx needs a judged label for every query
    truth, scores = truth[keep], scores[keep]
    qrels = Qrels({f"q{i}": {f"d{j}": 1 for j in np.flatnonzero(t)} for i, t in enumerate(truth)})
    run = Run({f"q{i}": {f"d{j}": float(s[j]) for j in range(s.size)}
               for i, s in enumerate(scores)})
    ks = (1, 3, 5)
    want = ranx_evaluate(qrels, run, [f"{m}@{k}" for m in ("precision", "recall", "ndcg")
                                      for k in ks])
    r = evaluate_at_k(truth, scores, k=ks, ties=TOPK_TIES)
    for t in TOPK_TIES:
        for key, value in want.items():
            assert abs(r[t][key] - value) < 1e-12, (t, key)


@pytest.mark.parametrize("seed", range(4))
def test_expected_ndcg_equals_sklearn_ndcg_score_on_ties(seed):
    """scikit-learn's ndcg_score averages the gain over tied positions (McSherry-Najork)
    and normalises by the DCG@k of the ideal order, the same as ties="expected"."""
    from sklearn.metrics import ndcg_score
    rng = np.random.default_rng(seed)
    truth, scores = tied_rows(rng, 50, 12, levels=3)
    w = rng.uniform(0, 2, 50)
    for k in (1, 3, 5, 12):
        want = ndcg_score(truth, scores, k=k, sample_weight=w)
        got = ndcg_at_k(truth, scores, k=k, sample_weight=w)
        assert abs(got - want) < 1e-12, k


def test_propensity_equals_pyxclib_and_napkinxc():
    from napkinxc.metrics import Jain_et_al_propensity
    rng = np.random.default_rng(0)
    y = sp.csr_matrix((rng.random((300, 50)) < 0.05).astype(np.float64))
    for A, B in ((0.55, 1.5), (0.5, 0.4), (0.6, 2.6)):
        n = y.shape[0]
        freqs = np.ravel(y.sum(axis=0))
        inv = 1.0 + (np.log(n) - 1) * (B + 1) ** A * (freqs + B) ** -A   # pyxclib's formula
        np.testing.assert_allclose(propensity(y, A, B), 1 / inv, rtol=1e-15)
        np.testing.assert_allclose(propensity(y, A, B), Jain_et_al_propensity(y, A, B),
                                   rtol=1e-14)


# ---- weights, chunks, threads, dtypes ---------------------------------------------------

def test_sample_weight_is_a_weighted_mean_of_documents():
    rng = np.random.default_rng(5)
    truth, scores = tied_rows(rng, 30, 10)
    w = rng.uniform(0, 3, 30)
    w[3] = 0
    p = rng.uniform(0.1, 1, 10)
    ks = (1, 4)
    both = evaluate_at_k(truth, scores, k=ks, propensity=p, sample_weight=w)
    singles = [evaluate_at_k(truth[i:i + 1], scores[i:i + 1], k=ks, propensity=p)
               for i in range(30)]
    for j, metric in enumerate(both.metrics):
        if metric in ("psprecision", "psndcg"):
            continue   # ratios of sums: checked against brute force above
        want = sum(wi * s.values[0, j] for wi, s in zip(w, singles)) / w.sum()
        np.testing.assert_allclose(both.values[0, j], want, rtol=1e-12, atol=1e-15)


def test_chunks_merge_equal_the_whole():
    rng = np.random.default_rng(6)
    truth, scores = tied_rows(rng, 3000, 15, levels=3)
    p = rng.uniform(0.1, 1, 15)
    ties = ("expected", "ordinal", "trec")
    whole = evaluate_at_k(truth, scores, k=(1, 5), ties=ties, propensity=p, random_state=4)
    left = TopKEvaluator(k=(1, 5), ties=ties, propensity=p, random_state=4)
    right = left.empty_copy()
    for lo in range(0, 3000, 700):
        (left if lo < 1500 else right).update(truth[lo:lo + 700], scores[lo:lo + 700],
                                              first_row=lo)
    np.testing.assert_allclose(right.merge(left).result().values, whole.values, rtol=1e-12)


def test_threads_and_dtypes_do_not_change_the_value():
    from fastrank._parallel import num_threads
    rng = np.random.default_rng(7)
    truth, scores = tied_rows(rng, 5000, 20, levels=5)
    ties = ("expected", "optimistic", "ordinal")
    with num_threads(1):
        one = evaluate_at_k(truth, scores, ties=ties).values
    with num_threads(2):
        two = evaluate_at_k(truth, scores, ties=ties).values
        f32 = evaluate_at_k(truth, scores.astype(np.float32), ties=ties).values
        fortran = evaluate_at_k(truth, np.asfortranarray(scores), ties=ties).values
    assert np.array_equal(one, two) and np.array_equal(one, f32) and np.array_equal(one, fortran)


def test_single_metric_functions():
    truth, scores = [[1, 0, 0, 1]], [[.8, .8, .8, .1]]
    assert precision_at_k(truth, scores, k=3) == pytest.approx(1 / 3, abs=1e-15)
    np.testing.assert_allclose(precision_at_k(truth, scores, k=[1, 4]), [1 / 3, 1 / 2])
    assert precision_at_k(truth, scores, k=1, ties="optimistic") == 1.0
    assert precision_at_k(truth, scores, k=1, ties="pessimistic") == 0.0


# ---- input forms and errors --------------------------------------------------------------

def test_input_forms_agree():
    """Dense beliefs, the CSR matrix of the same scored labels and their top-k pair give the
    same values when every label is scored; truth as CSR, dense or label lists alike."""
    rng = np.random.default_rng(8)
    truth, scores = tied_rows(rng, 20, 6, levels=3)
    pair = (np.tile(np.arange(6), (20, 1))[:, ::-1].copy(), scores[:, ::-1].copy())
    sets = [set(np.flatnonzero(t)) for t in truth]
    ties = ("expected", "optimistic", "pessimistic", "ordinal", "stable", "trec")
    want = evaluate_at_k(truth, scores, k=(1, 2, 6), ties=ties).values
    full_csr = sp.csr_matrix((scores.ravel(), np.tile(np.arange(6), 20), np.arange(0, 121, 6)),
                             shape=(20, 6))  # stores the zeros too: every label scored
    for y_true, y_score in ((sp.csr_matrix(truth), full_csr), (sets, pair),
                            (truth.astype(bool), pair)):
        got = evaluate_at_k(y_true, y_score, k=(1, 2, 6), ties=ties, n_labels=6).values
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_unscored_labels_are_one_group_below_every_scored_one():
    # scored: label 1 (-5.0); unscored: 0, 2, 3 (relevant: 0) -> positions 1..3, one group
    y_score = sp.csr_matrix(([-5.0], [1], [0, 1]), shape=(1, 4))
    r = evaluate_at_k([[1, 0, 0, 0]], y_score, k=(1, 2), ties=("expected", "optimistic"))
    assert r["expected"]["precision@2"] == pytest.approx(1 / 6, abs=1e-15)
    assert r["optimistic"]["precision@1"] == 0.0 and r["optimistic"]["precision@2"] == 0.5


@pytest.mark.parametrize("dtype, index", [(np.float64, np.int32), (np.float32, np.int32),
                                          (np.float64, np.int64)])
def test_a_sparse_matrix_without_stored_scores_is_one_unscored_group(dtype, index):
    """No stored entry at all: every label of every row is in the unscored tie group."""
    y_score = sp.csr_matrix((2, 4), dtype=dtype)
    y_score.indices = y_score.indices.astype(index)
    y_score.indptr = y_score.indptr.astype(index)
    r = evaluate_at_k([[1, 0, 0, 0], [0, 1, 1, 0]], y_score, k=(1, 4),
                      ties=("expected", "optimistic", "pessimistic", "stable"))
    assert r["expected"]["precision@1"] == pytest.approx((1 / 4 + 2 / 4) / 2, abs=1e-15)
    assert r["optimistic"]["precision@1"] == 1.0 and r["pessimistic"]["precision@1"] == 0.0
    assert r["stable"]["precision@1"] == 0.5  # label 0 first: relevant in the first row only
    assert r["stable"]["recall@4"] == 1.0


@pytest.mark.parametrize("y_score, match", [
    ((np.array([[0, 1, 1]]), np.array([[.3, .2, .1]])), "row 0 lists a label twice"),
    ((np.array([[0, 5]]), np.array([[.3, .2]])), r"row 0 has a label index out of \[0, 4\)"),
    ((np.array([[0, -1]]), np.array([[.3, .2]])), "out of"),
    ((np.array([[0, 1]]), np.array([[.3, np.nan]])), "NaN"),
    ((np.array([[0, 1]]), np.array([[.3, .2, .1]])), "shape"),
    ((np.array([[0, 1]]),), "pair"),
])
def test_bad_top_k_pairs(y_score, match):
    with pytest.raises(ValueError, match=match):
        evaluate_at_k([{0}], y_score, k=1, n_labels=4)


def test_bad_arguments():
    y, s = [[1, 0, 0]], [[.5, .2, .1]]
    with pytest.raises(ValueError, match="exceeds the number of labels"):
        evaluate_at_k(y, s, k=4)
    for k in (0, [], [1, 1], 1.5, True):
        with pytest.raises(ValueError, match="k"):
            evaluate_at_k(y, s, k=k)
    with pytest.raises(ValueError, match="unknown ties='min'"):
        evaluate_at_k(y, s, ties="min")
    with pytest.raises(ValueError, match="NaN"):
        evaluate_at_k(y, [[.5, np.nan, .1]])
    with pytest.raises(ValueError, match="binary"):
        evaluate_at_k([[2, 0, 0]], s)
    with pytest.raises(ValueError, match="y_true has 2 documents but y_score has 1"):
        evaluate_at_k([[1, 0, 0], [0, 1, 0]], s)
    with pytest.raises(ValueError, match="n_labels"):
        evaluate_at_k([{0}], (np.array([[0]]), np.array([[.5]])), k=1)
    for bad in ([1, 0, 1], [1, 5e-324, 1], [1, np.inf, 1]):  # 1/5e-324 overflows
        with pytest.raises(ValueError, match=r"propensity must be finite and at least 2\*\*-400"):
            evaluate_at_k(y, s, propensity=bad)
    for n in (1, 2):  # C = (ln N - 1)(B + 1)^A <= 0: "probabilities" above 1, or negative
        with pytest.raises(ValueError, match=f"at least 3 training documents .* N = {n}"):
            propensity(np.ones((n, 3)))
    with pytest.raises(ValueError,
                       match="y_score has 3 labels; this evaluator has 2 .*propensities"):
        evaluate_at_k(y, s, propensity=[1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        evaluate_at_k(y, s, k=1, sample_weight=[1, 2])
    with pytest.raises(ValueError, match="B must be"):
        propensity(y, B=0)
    with pytest.raises(TypeError, match="indices must be integers"):
        evaluate_at_k(y, (np.array([[0.0]]), np.array([[.5]])), k=1)
