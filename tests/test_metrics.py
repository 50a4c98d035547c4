"""The tie-aware metric suite: worked examples, NumPy reference, scikit-learn, API."""
import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
from threadpoolctl import threadpool_limits

import ref_metrics as ref
from fastrank import metrics as M
from fastrank.ranking import rank

TIES = ("ordinal", "dense", "standard", "modified")
RANKING_FUNCS = {"one_error": M.one_error, "coverage": M.coverage,
                 "ranking_loss": M.ranking_loss, "average_precision": M.average_precision,
                 "r_precision": M.r_precision}


def tied_data(n, q, seed, levels=4, p_rel=0.3, p_zero=0.4, dtype=np.float64):
    """Heavily tied beliefs: few distinct values, many exact zeros."""
    rng = np.random.default_rng(seed)
    s = rng.integers(1, levels + 1, size=(n, q)) / levels
    s[rng.random((n, q)) < p_zero] = 0.0
    y = (rng.random((n, q)) < p_rel).astype(np.uint8)
    return y, s.astype(dtype)


# ---- worked examples: melotti2009 Fig. 2.1 and Table 1.1 ---------------------------------

FIG21 = np.array([[0.5, 0.2, 0.2, 0.1]])  # c1 c2 c3 c8


def ordinal_outcomes(func, y, s, **kw):
    return {round(func(y, s, ties="ordinal", random_state=seed, **kw), 12) for seed in range(40)}


@pytest.mark.parametrize("name, expected", [
    # C = {c1, c2}; group types put {c2, c3} at one rank (dense 2, standard 2, modified 3)
    ("one_error", {"dense": 0, "standard": 0, "modified": 0, "ordinal": {0}}),
    ("coverage", {"dense": 1, "standard": 1, "modified": 2, "ordinal": {1, 2}}),
    # 4 pairs (c1|c2) x (c3|c8); the tied pair (c2, c3) is the only possible error
    ("ranking_loss", {"dense": .25, "standard": .25, "modified": .25, "ordinal": {0, .25}}),
    # ranks holding a relevant label: c1 (P=1/1) and the {c2,c3} group (P=2/3)
    ("average_precision", {"dense": 5 / 6, "standard": 5 / 6, "modified": 5 / 6,
                           "ordinal": {1, 5 / 6}}),
    # |C|=2: whole groups give Ŝ={c1,c2,c3}; ordinal gives {c1,c2} or {c1,c3}
    ("r_precision", {"dense": 2 / 3, "standard": 2 / 3, "modified": 2 / 3,
                     "ordinal": {1, .5}}),
])
def test_fig21_by_hand(name, expected):
    y = [{0, 1}]
    f = RANKING_FUNCS[name]
    for t in ("dense", "standard", "modified"):
        assert f(y, FIG21, ties=t) == pytest.approx(expected[t], abs=1e-15)
    assert ordinal_outcomes(f, y, FIG21) == {round(v, 12) for v in expected["ordinal"]}


def test_fig21_ordinal_follows_the_rank_draw():
    y = [{0, 1}]
    for seed in range(10):
        c2_first = rank(FIG21, "ordinal", random_state=seed)[0, 1] == 2
        assert M.coverage(y, FIG21, ties="ordinal", random_state=seed) == (1 if c2_first else 2)
        assert M.r_precision(y, FIG21, ties="ordinal", random_state=seed) == \
            (1.0 if c2_first else 0.5)


def test_fig21_perfect_cutoff_sets():
    y = [{0, 1}]
    for t in ("dense", "standard", "modified"):
        assert M.cutoff(FIG21, y, ties=t).tolist() == [[1, 1, 1, 0]]
    sets = {tuple(M.cutoff(FIG21, y, ties="ordinal", random_state=s)[0]) for s in range(40)}
    assert sets == {(1, 1, 0, 0), (1, 0, 1, 0)}
    assert M.cutoff(FIG21, policy="top_k", top_k=1).tolist() == [[1, 0, 0, 0]]
    assert M.cutoff(FIG21, top_k=2).tolist() == [[1, 1, 1, 0]]  # whole tie group
    assert M.cutoff(FIG21, top_k=2, ties="ordinal", random_state=0).sum() == 2
    assert M.cutoff(FIG21, threshold=0.2).tolist() == [[1, 1, 1, 0]]
    res = M.evaluate(y, FIG21)
    for t in ("dense", "standard", "modified"):
        d = res[t]
        assert d["hamming_loss"] == pytest.approx(0.25)  # c3 predicted wrongly
        assert d["exact_match"] == 0
        assert d["precision_macro_d"] == pytest.approx(2 / 3)
        assert d["recall_macro_d"] == 1
        assert d["f1_macro_d"] == pytest.approx(0.8)


def table11(n_labels=100):
    """melotti2009 Table 1.1: c1 .5, c2 .2, c3 .2, c8 .1, every other label 0."""
    s = np.zeros((1, n_labels))
    s[0, [0, 1, 2, 7]] = [0.5, 0.2, 0.2, 0.1]
    return s


def test_table11_with_c4_relevant():
    # C = {c1, c2, c4}; c4 has belief 0 and is tied with 95 irrelevant labels
    s, y = table11(), [{0, 1, 3}]
    # ranks of c4: dense 4 (groups .5 .2 .1 0), standard 5, modified 100
    assert M.coverage(y, s, ties="dense") == 3
    assert M.coverage(y, s, ties="standard") == 4
    assert M.coverage(y, s, ties="modified") == 99
    assert ordinal_outcomes(M.coverage, y, s) <= set(range(4, 100))
    # 3 x 97 pairs; errors: (c2,c3) and c4 against c3, c8 and the 95 irrelevant zeros
    for t in ("dense", "standard", "modified"):
        assert M.ranking_loss(y, s, ties=t) == pytest.approx(98 / 291)
        # average precision*: c1 1/1, {c2,c3} 2/3, c4 has belief 0 -> 0
        assert M.average_precision(y, s, ties=t) == pytest.approx((1 + 2 / 3 + 0) / 3)
        # classical per label: c4's precision is 3/100 (no zero-belief rule)
        assert M.average_precision(y, s, ties=t, per="label") == \
            pytest.approx((1 + 2 / 3 + 3 / 100) / 3)
        assert M.r_precision(y, s, ties=t) == pytest.approx(2 / 3)  # Ŝ = {c1, c2, c3}
        assert M.one_error(y, s, ties=t) == 0
    # ordinal: Ŝ = first 3 positions = c1, c2|c3, c3|c2 -> always 2/3
    assert ordinal_outcomes(M.r_precision, y, s) == {round(2 / 3, 12)}


def test_table11_zero_beliefs_never_predicted():
    s = table11(10)
    y = [{0, 5, 6, 7, 8}]  # |C| = 5 reaches into the zero group
    pred = M.cutoff(s, y, ties="modified")
    assert pred.tolist() == [[1, 1, 1, 0, 0, 0, 0, 1, 0, 0]]  # zero group dropped
    assert M.r_precision(y, s) == pytest.approx(2 / 4)
    pred_o = M.cutoff(s, y, ties="ordinal", random_state=3)
    assert pred_o.tolist() == [[1, 1, 1, 0, 0, 0, 0, 1, 0, 0]]  # 5 positions, 1 is zero


# ---- worked example: gatto's 51 x 4 ------------------------------------------------------

def gatto():
    true = [0] * 10 + [1] + [2] * 12 + [3] * 7 + [0] * 8 + [2] * 8 + [3] * 5
    pred = list(true)
    pred[10] = 2  # document 11: true L2, predicted L3
    pred[31] = 1  # document 32: true L1, predicted L2
    eye = np.eye(4, dtype=np.uint8)
    return eye[true], eye[pred]


def test_gatto_counts_and_totals():
    y, p = gatto()
    assert y.sum(axis=0).tolist() == [18, 1, 20, 12]  # as printed (total_true_1)
    assert p.sum(axis=0).tolist() == [17, 1, 21, 12]  # as printed (total_pred_1)
    c = M.contingency(y, p)
    # the article prints TP = 18 1 20 12: its R code takes TP from `true_1 & true_1`, i.e.
    # the number of relevant entries. Correct: L1 17 (document 32 misses it), L2 0
    # (its only relevant document, 11, is predicted L3).
    assert c.tp.tolist() == [17, 0, 20, 12]
    assert c.fp.tolist() == [0, 1, 1, 0]   # printed FP agrees
    assert c.fn.tolist() == [1, 1, 0, 0]   # printed FN agrees
    assert c.tn.tolist() == [33, 49, 30, 39]  # printed TN agrees
    d = M.contingency(y, p, orient="document")
    assert d.tp.sum() == 49 and d.fp.sum() == 2 and d.fn.sum() == 2


def test_gatto_measures():
    y, p = gatto()
    # agree with the article (these did not use the faulty TP):
    assert M.accuracy(y, p) == pytest.approx(0.9607843, abs=1e-7)       # 49/51
    assert M.hamming_loss(y, p) == pytest.approx(0.01960784, abs=1e-8)  # 4/204
    assert M.precision(y, p, orient="document") == pytest.approx(0.9607843, abs=1e-7)
    assert M.recall(y, p, orient="document") == pytest.approx(0.9607843, abs=1e-7)
    assert M.f1(y, p, orient="document") == pytest.approx(0.9607843, abs=1e-7)
    # printed "subset accuracy" 0.9803922 is mean(true == pred) over all 204 entries
    # (= 1 - Hamming loss); subset accuracy is the share of exact rows: 49/51.
    assert M.exact_match(y, p) == pytest.approx(49 / 51)
    # printed "0/1 loss" 0.01960784 is the Hamming loss again; correct: 2/51
    assert M.zero_one_loss(y, p) == pytest.approx(2 / 51)
    # printed MaP 0.8630952 = mean(18/18, 1/2, 20/21, 12/12) uses the faulty TP;
    # correct: mean(17/17, 0/1, 20/21, 12/12)
    map_ = (1 + 0 + 20 / 21 + 1) / 4
    assert M.precision(y, p) == pytest.approx(map_)
    assert map_ == pytest.approx(0.7380952, abs=1e-7)
    # printed MaR 0.8618421 = mean(18/19, 1/2, 20/20, 12/12); correct mean(17/18, 0, 1, 1)
    mar = (17 / 18 + 0 + 1 + 1) / 4
    assert M.recall(y, p) == pytest.approx(mar)
    # printed MaF1 0.8624682 (F of MaP and MaR): correct from the corrected MaP, MaR
    assert M.fbeta(y, p, average="macro_pr") == pytest.approx(2 * map_ * mar / (map_ + mar))
    # the thesis' macro-F (eq. 4.26) is the mean of per-label F: 2*17/35, 0, 40/41, 1
    assert M.f1(y, p) == pytest.approx((34 / 35 + 0 + 40 / 41 + 1) / 4)
    # printed MiP = MiR = MiF1 0.9622642 = 51/53 (faulty TP sum 51); correct 49/51
    for f in (M.precision, M.recall, M.f1):
        for orient in ("category", "document"):
            assert f(y, p, average="micro", orient=orient) == pytest.approx(49 / 51)
    # printed WLP 0 (faulty TP_L2 = 1); L2 is never predicted correctly: 1/4
    assert M.label_problem_rates(y, p) == {"CLP": 0.0, "MLP": 0.0, "WLP": 0.25}


# ---- the NumPy reference on heavily tied data --------------------------------------------

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", TIES)
def test_ranking_metrics_match_reference(seed, ties):
    y, s = tied_data(40, 9, seed)
    y[0] = 0  # no relevant label
    y[1] = 1  # all relevant
    s[2] = 0  # all tied at zero
    r = ref.ranks(s, ties, rank(s, "ordinal", random_state=seed))
    for name, f in RANKING_FUNCS.items():
        assert f(y, s, ties=ties, random_state=seed) == \
            pytest.approx(np.mean(ref.RANKING[name](y, s, r)), abs=1e-12), name
    assert M.average_precision(y, s, ties=ties, per="label", random_state=seed) == \
        pytest.approx(np.mean(ref.ap_label(y, s, r)), abs=1e-12)
    pred = M.cutoff(s, y, ties=ties, random_state=seed)
    assert np.array_equal(pred, ref.perfect_set(y, s, r))


@pytest.mark.parametrize("seed", range(3))
def test_evaluate_matches_reference(seed):
    y, s = tied_data(30, 7, seed, levels=3)
    res = M.evaluate(y, s, random_state=seed)
    ordinal_ranks = rank(s, "ordinal", random_state=seed)
    for t in TIES:
        r = ref.ranks(s, t, ordinal_ranks)
        want = {k: np.mean(f(y, s, r)) for k, f in ref.RANKING.items()}
        want.update(ref.set_metrics(y, ref.perfect_set(y, s, r)))
        for k in M.METRIC_KEYS:
            assert res[t][k] == pytest.approx(want[k], abs=1e-12), (t, k)


@pytest.mark.parametrize("zd", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_set_metrics_match_reference(seed, zd):
    rng = np.random.default_rng(seed)
    y = (rng.random((25, 6)) < 0.3).astype(np.uint8)
    p = (rng.random((25, 6)) < 0.3).astype(np.uint8)
    y[:, 0] = 0  # a label nobody carries
    p[:, 1] = 0  # a label never predicted
    y[3] = p[3] = 0  # a document with empty truth and prediction
    want = ref.set_metrics(y, p, zd=zd)
    assert M.hamming_loss(y, p) == pytest.approx(want["hamming_loss"])
    assert M.exact_match(y, p) == pytest.approx(want["exact_match"])
    assert M.accuracy(y, p, zero_division=zd) == pytest.approx(want["accuracy"])
    for o, orient in (("c", "category"), ("d", "document")):
        for av in ("macro", "micro"):
            kw = dict(average=av, orient=orient, zero_division=zd)
            assert M.precision(y, p, **kw) == pytest.approx(want[f"precision_{av}_{o}"])
            assert M.recall(y, p, **kw) == pytest.approx(want[f"recall_{av}_{o}"])
            assert M.f1(y, p, **kw) == pytest.approx(want[f"f1_{av}_{o}"])
        assert M.fbeta(y, p, average="macro_pr", orient=orient, zero_division=zd) == \
            pytest.approx(want[f"f1_macro_pr_{o}"])
    want2 = ref.set_metrics(y, p, zd=zd, beta=2.0)
    assert M.fbeta(y, p, beta=2.0, zero_division=zd) == pytest.approx(want2["f1_macro_c"])


@pytest.mark.parametrize("top_k", [1, 3, 20])
def test_evaluate_top_k_matches_reference_and_cutoff(top_k):
    y, s = tied_data(30, 8, 1, levels=3)
    res = M.evaluate(y, s, cutoff=top_k, random_state=2)
    ordinal_ranks = rank(s, "ordinal", random_state=2)
    for t in TIES:
        r = ref.ranks(s, t, ordinal_ranks)
        pred = ref.perfect_set(y, s, r, top_k=top_k)
        assert np.array_equal(M.cutoff(s, top_k=top_k, ties=t, random_state=2), pred)
        want = ref.set_metrics(y, pred)
        want["r_precision"] = np.mean(ref.r_precision(y, s, r))  # always at |C_j|
        for k in M.METRIC_KEYS[4:]:
            assert res[t][k] == pytest.approx(want[k], abs=1e-12), (t, k)
        assert res[t]["hamming_loss"] == M.hamming_loss(y, pred)
        assert res[t]["f1_macro_c"] == M.f1(y, pred)


@pytest.mark.parametrize("cutoff", ["perfect", 1, 7, 60, 200])
def test_evaluate_numbered_float32_rows_equal_sorted_rows(cutoff, simd_paths):
    """evaluate numbers a contiguous float32 row of few distinct beliefs instead of sorting
    it, its order filled only for the groups that the cutoff and the ordinal shuffles read:
    every value (label counts, expected records and ordinal draws among them) equals that
    of the same beliefs as float64, which are sorted, bit for bit, on every path."""
    rng = np.random.default_rng(3)
    s = rng.integers(0, 21, size=(300, 200)) / 20
    y = (rng.random(s.shape) < rng.choice([0.01, 0.1, 0.5], size=(300, 1))).astype(np.uint8)
    y[::9] = 0
    w = rng.random(300)
    for _ in simd_paths:
        for ties in (M.TIES, ("expected", "ordinal", "modified")):
            got = M.evaluate(y, s.astype(np.float32), ties=ties, cutoff=cutoff,
                             sample_weight=w)
            want = M.evaluate(y, s, ties=ties, cutoff=cutoff, sample_weight=w)
            assert np.array_equal(np.asarray(got.values).view(np.int64),
                                  np.asarray(want.values).view(np.int64))


def _float64_rows_some_round_alike(seed):
    """(y, s): float64 beliefs at 21 levels, some rows of which lose a tie, an order or a
    zero when rounded to float32: distinct values 1e-12 apart (in the vectors and past
    them), a tiny value in a row without zeros (rounds to zero), two finite ones that
    round to infinity; others not: -0.0 beside 0.0, infinity, values whose roundings are
    float32 subnormals."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 21, size=(280, 123)) / 20
    s[1::14, :5] += 1e-12
    s[8::14, 122] = s[8::14, 121]        # past the last whole vector: 120 is 1e-12
    s[8::14, 120] = s[8::14, 121] + 1e-12  # above the value that 121 and 122 hold
    s[2::7] = rng.integers(1, 21, size=s[2::7].shape) / 20
    s[2::7, 3] = 1e-50     # and no zero in the row: its number would read as one
    s[3::7, 4], s[3::7, 8] = 1e300, 2e300
    s[4::7, 5] = -0.0
    s[4::7, 6] = 0.0
    s[5::7, 7] = np.inf
    s[6::7] *= 1e-41
    return (rng.random(s.shape) < 0.1).astype(np.uint8), s


def test_evaluate_numbered_float64_rows_equal_sorted_rows(simd_paths):
    """On AVX-512 evaluate numbers a contiguous float64 row through its float32 roundings
    where they keep the row's order, ties and zeros, and sorts it otherwise
    (_float64_rows_some_round_alike): every value equals that of the rows sorted (the
    AVX2 and portable paths), bit for bit."""
    y, s = _float64_rows_some_round_alike(5)
    runs = {path: M.evaluate(y, s, ties=M.TIES, cutoff=3, random_state=2)
            for path in simd_paths}
    want = np.asarray(runs["portable"].values).view(np.int64)
    for path, got in runs.items():
        assert np.array_equal(np.asarray(got.values).view(np.int64), want), path


@pytest.mark.parametrize("ties", ["ordinal", "expected"])
@pytest.mark.parametrize("metric", [M.ranking_loss, M.average_precision])
def test_float64_rows_numbered_equal_counted(simd_paths, metric, ties):
    """The ordinal and expected ranking loss and average precision of a contiguous float64
    row read its levels (and places) off the numbering of its float32 roundings where they
    keep its order, ties and zeros (AVX-512: its check by gathers, and by permutes with
    VBMI), and count them in passes otherwise (_float64_rows_some_round_alike): the same
    value on every path."""
    y, s = _float64_rows_some_round_alike(6)
    got = {path: metric(y, s, ties=ties, random_state=4) for path in simd_paths}
    assert len(set(got.values())) == 1, got


# ---- evaluate == the individual functions, exactly ---------------------------------------

@pytest.mark.parametrize("seed", [0, 7])
def test_evaluate_equals_individual_functions_exactly(seed):
    y, s = tied_data(60, 12, seed)
    res = M.evaluate(y, s, random_state=seed)
    for t in TIES:
        d = res[t]
        for name, f in RANKING_FUNCS.items():
            assert d[name] == f(y, s, ties=t, random_state=seed), (t, name)
        p = M.cutoff(s, y, ties=t, random_state=seed)
        assert d["hamming_loss"] == M.hamming_loss(y, p)
        assert d["exact_match"] == M.exact_match(y, p)
        for o, orient in (("c", "category"), ("d", "document")):
            for av in ("macro", "micro"):
                kw = dict(average=av, orient=orient)
                assert d[f"precision_{av}_{o}"] == M.precision(y, p, **kw)
                assert d[f"recall_{av}_{o}"] == M.recall(y, p, **kw)
                assert d[f"f1_{av}_{o}"] == M.f1(y, p, **kw)
    # a subset of ranking types gives the same numbers as the full run
    sub = M.evaluate(y, s, ties=("modified", "ordinal"), random_state=seed)
    assert sub.to_dict() == {t: res[t] for t in ("modified", "ordinal")}


def test_input_forms_give_identical_results():
    y, s = tied_data(50, 20, 3, dtype=np.float64)
    base = M.evaluate(y, s, random_state=5).to_dict()
    label_sets = [set(np.flatnonzero(row)) for row in y]
    variants = [
        (y, s.astype(np.float32)),   # float32: exact, the values are multiples of 1/4
        (y, np.asfortranarray(s)),
        (y, sp.csr_matrix(s)),
        (y, sp.csr_matrix(s.astype(np.float32))),
        (y, sp.csc_matrix(s)),
        (sp.csr_matrix(y), s),
        (label_sets, s),
        (y.astype(bool), s),
    ]
    for yy, ss in variants:
        assert M.evaluate(yy, ss, random_state=5).to_dict() == base
        assert np.array_equal(M.cutoff(ss, yy, ties="ordinal", random_state=5),
                              M.cutoff(s, y, ties="ordinal", random_state=5))


@pytest.mark.parametrize("rate", [0.02, 0.5])
def test_float32_rows_of_few_distinct_beliefs_as_float64(simd_paths, rate):
    """Rows of more than 32 float32 beliefs of few distinct values (sorted by counting a
    vector at a time on AVX-512) give the values of the same beliefs as float64, under
    every ranking type, on every path: a few relevant labels a row, and half."""
    rng = np.random.default_rng(int(rate * 100))
    s = rng.integers(-3, 5, size=(60, 300)) / 4
    y = (rng.random(s.shape) < rate).astype(np.uint8)
    ties = ("ordinal", "dense", "standard", "modified", "expected")
    want = M.evaluate(y, s, ties=ties, random_state=3).to_dict()
    for _ in simd_paths:
        assert M.evaluate(y, s.astype(np.float32), ties=ties, random_state=3).to_dict() == want


def test_csr_stored_zeros_and_negatives():
    s = np.array([[0.0, -1.0, 0.5, 0.0, -1.0, 2.0]])
    y = np.array([[1, 0, 1, 0, 1, 0]])
    # column 0 holds an explicitly stored zero; the others are implicit
    csr = sp.csr_matrix((np.array([0.0, -1.0, 0.5, -1.0, 2.0]), np.array([0, 1, 2, 4, 5]),
                         np.array([0, 5])), shape=s.shape)
    assert M.evaluate(y, csr).to_dict() == M.evaluate(y, s).to_dict()
    # modified ranks: 2.0->1, 0.5->2, zeros->4, -1->6
    assert M.coverage(y, s) == 5
    assert M.coverage(y, s, ties="dense") == 3


def test_results_do_not_depend_on_thread_count():
    y, s = tied_data(700, 50, 1)
    every = TIES + ("expected",)  # expected includes the Monte-Carlo draws
    with threadpool_limits(1, user_api="openmp"):
        one = M.evaluate(y, s, ties=every, random_state=2).to_dict()
        one_csr = M.evaluate(y, sp.csr_matrix(s), ties=every, random_state=2).to_dict()
        cut1 = M.cutoff(s, y, ties="ordinal", random_state=2)
    with threadpool_limits(2, user_api="openmp"):
        two = M.evaluate(y, s, ties=every, random_state=2).to_dict()
        cut2 = M.cutoff(s, y, ties="ordinal", random_state=2)
    assert one == two == one_csr
    assert np.array_equal(cut1, cut2)


def test_ordinal_random_state():
    y, s = tied_data(40, 10, 0)
    a = M.evaluate(y, s, ties="ordinal", random_state=np.random.default_rng(1))
    b = M.evaluate(y, s, ties="ordinal", random_state=1)
    assert a.to_dict() == b.to_dict()
    fresh = {M.coverage(y, s, ties="ordinal", random_state=None) for _ in range(5)}
    assert len(fresh) > 1  # None draws fresh randomness
    # the default is one fixed seed, the same for every function (reproducible by default)
    assert M.coverage(y, s, ties="ordinal") == M.coverage(y, s, ties="ordinal") \
        == M.evaluate(y, s, ties="ordinal")["ordinal"]["coverage"]


# ---- scikit-learn where the definitions coincide -----------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_sklearn_ranking_metrics(seed):
    y, s = tied_data(80, 15, seed)
    y[np.arange(80), np.arange(80) % 15] = 1  # every document has a relevant label
    y[0] = 1  # and one has all of them
    assert M.coverage(y, s) == pytest.approx(skm.coverage_error(y, s) - 1)
    for t in ("dense", "standard", "modified"):
        assert M.ranking_loss(y, s, ties=t) == pytest.approx(skm.label_ranking_loss(y, s))
    assert M.average_precision(y, s, per="label") == \
        pytest.approx(skm.label_ranking_average_precision_score(y, s))


def test_sklearn_differences_are_documented_conventions():
    s = np.array([[0.3, 0.2, 0.1], [0.3, 0.3, 0.1]])
    y = np.array([[0, 0, 0], [0, 1, 0]])
    # scikit-learn's coverage_error counts a document without relevant labels as 0 (i.e.
    # -1 in coverage terms); fastrank's coverage gives it 0, like the thesis' eq. 4.4 floor.
    assert skm.coverage_error(y, s) == pytest.approx((0 + 2) / 2)
    assert M.coverage(y, s) == pytest.approx((0 + 1) / 2)
    # LRAP and ranking loss: both give 1 and 0 to the document without relevant labels
    assert M.average_precision(y, s, per="label") == \
        pytest.approx(skm.label_ranking_average_precision_score(y, s))
    assert M.ranking_loss(y, s) == pytest.approx(skm.label_ranking_loss(y, s))


@pytest.mark.parametrize("zd", [0.0, 1.0])
def test_sklearn_set_metrics(zd):
    rng = np.random.default_rng(4)
    y = (rng.random((60, 8)) < 0.25).astype(np.uint8)
    p = (rng.random((60, 8)) < 0.25).astype(np.uint8)
    y[:, 0] = 0
    p[:, 1] = 0
    y[5] = p[5] = 0
    assert M.hamming_loss(y, p) == pytest.approx(skm.hamming_loss(y, p))
    assert M.exact_match(y, p) == pytest.approx(skm.accuracy_score(y, p))
    assert M.zero_one_loss(y, p) == pytest.approx(skm.zero_one_loss(y, p))
    assert M.accuracy(y, p, zero_division=zd) == \
        pytest.approx(skm.jaccard_score(y, p, average="samples", zero_division=zd))
    for av, orient in (("macro", "category"), ("micro", "category"), ("macro", "document")):
        sk_avg = "samples" if orient == "document" else av
        P, R, F, _ = skm.precision_recall_fscore_support(y, p, average=sk_avg, zero_division=zd)
        kw = dict(average=av, orient=orient, zero_division=zd)
        assert M.precision(y, p, **kw) == pytest.approx(P)
        assert M.recall(y, p, **kw) == pytest.approx(R)
        assert M.f1(y, p, **kw) == pytest.approx(F)
        _, _, F2, _ = skm.precision_recall_fscore_support(y, p, average=sk_avg, beta=2.0,
                                                          zero_division=zd)
        assert M.fbeta(y, p, beta=2.0, **kw) == pytest.approx(F2)


# ---- the result object and input validation ----------------------------------------------

def test_evaluation_object():
    y, s = tied_data(10, 5, 0)
    res = M.evaluate(y, s)
    d = res.to_dict()
    assert list(d) == list(TIES)
    assert all(tuple(v) == M.METRIC_KEYS for v in d.values())
    assert len(M.METRIC_KEYS) == 19
    assert res.values.shape == (4, 19)
    text = str(res)
    assert text.splitlines()[0].split() == list(TIES)
    assert len(text.splitlines()) == 20 and "f1_micro_d" in text
    with pytest.raises(KeyError, match="not evaluated"):
        M.evaluate(y, s, ties="dense")["modified"]
    assert list(M.evaluate(y, s, ties="max").to_dict()) == ["modified"]


@pytest.mark.parametrize("dtype, nans", [
    (np.float64, [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,
                  0xFFFFFFFFFFFFFFFF]),
    (np.float32, [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF])])
def test_the_row_sort_finds_every_nan_and_no_infinity(dtype, nans):
    """The row sort tells a NaN from the bits of its key: quiet or signalling, either sign,
    any payload is found (in a row of 40 labels, the counting sort's path; all 64 bits set
    is also the key that marks an empty slot of that sort's table); an infinity is not a
    NaN, and ranks as a belief above (below) every finite one would."""
    y, s = tied_data(6, 40, 3, dtype=dtype)
    width = np.uint64 if dtype == np.float64 else np.uint32
    for bits in nans:
        bad = s.copy()
        bad.view(width)[4, 7] = bits
        with pytest.raises(ValueError, match=r"NaN.*row 4"):
            M.evaluate(y, bad, ties="ordinal")
    inf, big = s.copy(), s.copy()
    inf[1, 2], inf[2, 3] = np.inf, -np.inf
    big[1, 2], big[2, 3] = 1e30, -1e30
    got = M.evaluate(y, inf, ties=["ordinal", "dense"])
    want = M.evaluate(y, big, ties=["ordinal", "dense"])
    assert got.to_dict() == want.to_dict()


def test_validation_errors():
    y, s = tied_data(5, 4, 0)
    with pytest.raises(ValueError, match="y_true has 3 labels but y_score has 4 columns"):
        M.coverage(y[:, :3], s)
    with pytest.raises(ValueError, match="y_true has 4 labels but y_score has 3 columns"):
        M.evaluate(y, s[:, :3])
    with pytest.raises(ValueError, match="y_true has 4 labels but y_score has 3 columns"):
        M.auc(y, s[:, :3])
    with pytest.raises(ValueError, match=r"shape \(4, 4\) but y_score has shape \(5, 4\)"):
        M.coverage(y[:4], s)
    with pytest.raises(ValueError, match="binary"):
        M.coverage(y * 2, s)
    bad = s.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN.*row 2"):
        M.evaluate(y, bad)
    with pytest.raises(ValueError, match="empty"):
        M.coverage(np.zeros((0, 4)), np.zeros((0, 4)))
    with pytest.raises(ValueError, match="unknown ties='fractional'.*'ordinal'"):
        M.ranking_loss(y, s, ties="fractional")
    with pytest.raises(ValueError, match="unknown per"):
        M.average_precision(y, s, per="doc")
    with pytest.raises(ValueError, match="unknown average"):
        M.precision(y, y, average="weighted")
    with pytest.raises(ValueError, match="unknown orient"):
        M.recall(y, y, orient="label")
    with pytest.raises(ValueError, match="unknown cutoff"):
        M.evaluate(y, s, cutoff="threshold")
    for bad in (-1, True, 2.5):
        with pytest.raises(ValueError, match="integer top_k"):
            M.evaluate(y, s, cutoff=bad)
    with pytest.raises(ValueError, match="duplicates"):
        M.evaluate(y, s, ties=("dense", "dense"))
    with pytest.raises(ValueError, match="needs y_true"):
        M.cutoff(s)
    with pytest.raises(ValueError, match="top_k"):
        M.cutoff(s, policy="top_k")
    with pytest.raises(ValueError, match="one value per label"):
        M.cutoff(s, threshold=[0.1, 0.2])
    with pytest.raises(ValueError, match="y_pred"):
        M.hamming_loss(y, s)
    with pytest.raises(ValueError, match="zero_division"):
        M.precision(y, y, zero_division=np.nan)
    with pytest.raises(TypeError, match="random_state"):
        M.coverage(y, s, ties="ordinal", random_state="x")


SET_FUNCS = (M.hamming_loss, M.exact_match, M.zero_one_loss, M.accuracy, M.precision,
             M.recall, M.fbeta, M.f1, M.contingency, M.label_problem_rates)


def test_set_metrics_number_of_labels_of_label_sets():
    # q = 5 labels, label 4 never seen: the largest index (1) does not tell q
    assert M.hamming_loss([{0}], [{1}], n_labels=5) == pytest.approx(0.4)
    y = np.array([[1, 0, 0, 0, 0]])
    p = np.array([[0, 1, 0, 0, 0]])
    assert M.label_problem_rates([{0}], [{1}], n_labels=5) == M.label_problem_rates(y, p)
    assert M.precision([{0}], [{1}], n_labels=5, zero_division=1) == \
        M.precision(y, p, zero_division=1) == pytest.approx(0.8)  # 4 of 5 labels: 0/0 -> 1
    c = M.contingency([{0}], [{1}], n_labels=5)
    assert c.tn.tolist() == [0, 0, 1, 1, 1]
    for func in SET_FUNCS:
        with pytest.raises(ValueError, match="both label sets.*n_labels"):
            func([{0}], [{1}])
        with pytest.raises(TypeError, match="n_labels must be an integer"):
            func([{0}], [{1}], n_labels=2.0)
        with pytest.raises(ValueError, match="n_labels must be >= 1"):
            func([{0}], [{1}], n_labels=0)
    # one matrix: q is its width, whichever argument it is
    m = [[1, 0], [0, 1]]
    assert M.hamming_loss(m, [{0}, {0}]) == M.hamming_loss([{0}, {0}], m) == 0.5
    assert M.contingency(m, [{0}, {0}]).tp.tolist() == [1, 0]
    assert M.hamming_loss(m, [{0}, {0}], n_labels=2) == 0.5
    with pytest.raises(ValueError, match="2 labels, expected 3"):
        M.hamming_loss(m, [{0}, {0}], n_labels=3)
    with pytest.raises(ValueError, match="out of range for 2 labels"):
        M.hamming_loss(m, [{0}, {2}])


def test_cutoff_rejects_conflicting_options():
    with pytest.raises(ValueError, match="threshold or top_k, not both"):
        M.cutoff(FIG21, threshold=0.2, top_k=1)
    with pytest.raises(ValueError, match="threshold or top_k, not both"):
        M.cutoff(FIG21, [{0}], policy="perfect", threshold=0.2, top_k=1)
    with pytest.raises(ValueError, match="threshold is not used by policy='perfect'"):
        M.cutoff(FIG21, [{0}], policy="perfect", threshold=0.2)
    with pytest.raises(ValueError, match="top_k is not used by policy='perfect'"):
        M.cutoff(FIG21, [{0}], top_k=1, policy="perfect")
    with pytest.raises(ValueError, match="top_k is not used by policy='threshold'"):
        M.cutoff(FIG21, policy="threshold", top_k=1)
    with pytest.raises(ValueError, match="threshold is not used by policy='top_k'"):
        M.cutoff(FIG21, policy="top_k", threshold=0.2)
    with pytest.raises(ValueError, match="y_true is not used by policy='threshold'"):
        M.cutoff(FIG21, [{0}], threshold=0.2)
    with pytest.raises(ValueError, match="y_true is not used by policy='top_k'"):
        M.cutoff(FIG21, [{0}], top_k=1)


def test_cutoff_top_k_type_and_range():
    for bad in ("2", 2.0, True, [1]):
        with pytest.raises(TypeError, match="top_k must be an integer"):
            M.cutoff(FIG21, top_k=bad)
    with pytest.raises(ValueError, match="needs top_k"):
        M.cutoff(FIG21, policy="top_k")
    with pytest.raises(ValueError, match="integer >= 0, got -1"):
        M.cutoff(FIG21, top_k=-1)
    assert M.cutoff(FIG21, top_k=np.int64(1)).tolist() == [[1, 0, 0, 0]]
    assert M.cutoff(FIG21, top_k=0).tolist() == [[0, 0, 0, 0]]


def test_cutoff_too_wide_to_hold_is_refused_up_front(monkeypatch):
    """A sparse matrix declares its width and the 0/1 prediction is dense: when it (and the
    sorting scratch) needs more than the process can allocate (here 1 MiB), every policy
    raises ValueError naming the shape and both sizes; what fits is cut as dense input is."""
    import fastrank._validation as validation
    monkeypatch.setattr(validation, "available_memory", lambda: 2**20)
    wide = sp.csr_matrix(([0.5], [1_999_999], [0, 1]), shape=(1, 2_000_000))
    for kwargs in ({"y_true": [{1_999_999}]}, {"top_k": 1}, {"threshold": 0.4}):
        with pytest.raises(ValueError, match=r"the 0/1 prediction of a 1 x 2000000 matrix "
                           r"needs [\d.]+ MiB, more than the 1\.0 MiB"):
            M.cutoff(wide, **kwargs)
    narrow = sp.csr_matrix(([0.5, 0.25], [2, 7], [0, 2]), shape=(1, 10))
    np.testing.assert_array_equal(M.cutoff(narrow, top_k=1), M.cutoff(narrow.toarray(), top_k=1))


def test_threshold_cutoff_sparse_and_per_label():
    s = np.array([[0.0, 0.4, -0.2], [0.6, 0.0, 0.1]])
    csr = sp.csr_matrix(s)
    assert M.cutoff(csr, threshold=0.1).tolist() == [[0, 1, 0], [1, 0, 1]]
    assert M.cutoff(csr, threshold=0.0).tolist() == [[1, 1, 0], [1, 1, 1]]
    assert M.cutoff(s, threshold=[0.5, 0.0, -0.3]).tolist() == [[0, 1, 1], [1, 1, 1]]
    assert M.cutoff(csr, threshold=[0.5, 0.1, 0.1]).tolist() == [[0, 1, 0], [1, 0, 1]]


@pytest.mark.parametrize("seed", range(3))
def test_sklearn_weighted_metrics(seed):
    """Weighted values equal scikit-learn's weighted metrics where definitions coincide."""
    rng = np.random.default_rng(seed)
    y, s = tied_data(70, 9, seed)
    y[np.arange(70), np.arange(70) % 9] = 1
    w = rng.random(70) * 2
    assert M.coverage(y, s, sample_weight=w) == pytest.approx(
        skm.coverage_error(y, s, sample_weight=w) - 1)
    assert M.ranking_loss(y, s, sample_weight=w) == pytest.approx(
        skm.label_ranking_loss(y, s, sample_weight=w))
    assert M.average_precision(y, s, per="label", sample_weight=w) == pytest.approx(
        skm.label_ranking_average_precision_score(y, s, sample_weight=w))
    p = (rng.random((70, 9)) < 0.3).astype(np.uint8)
    assert M.hamming_loss(y, p, sample_weight=w) == pytest.approx(
        skm.hamming_loss(y, p, sample_weight=w))
    assert M.exact_match(y, p, sample_weight=w) == pytest.approx(
        skm.accuracy_score(y, p, sample_weight=w))
    assert M.accuracy(y, p, sample_weight=w) == pytest.approx(
        skm.jaccard_score(y, p, average="samples", sample_weight=w, zero_division=0))
    for av, orient in (("macro", "category"), ("micro", "category"), ("macro", "document")):
        sk_avg = "samples" if orient == "document" else av
        P, R, F, _ = skm.precision_recall_fscore_support(y, p, average=sk_avg, sample_weight=w,
                                                         zero_division=0)
        kw = dict(average=av, orient=orient, sample_weight=w)
        assert M.precision(y, p, **kw) == pytest.approx(P)
        assert M.recall(y, p, **kw) == pytest.approx(R)
        assert M.f1(y, p, **kw) == pytest.approx(F)
    # evaluate's set metrics are those of its own cutoff, weighted the same way
    res = M.evaluate(y, s, ties="modified", sample_weight=w)["modified"]
    cut = M.cutoff(s, y, ties="modified")
    P, R, F, _ = skm.precision_recall_fscore_support(y, cut, average="macro", sample_weight=w,
                                                     zero_division=0)
    assert (res["precision_macro_c"], res["recall_macro_c"], res["f1_macro_c"]) == \
        pytest.approx((P, R, F))
    P, R, F, _ = skm.precision_recall_fscore_support(y, cut, average="samples",
                                                     sample_weight=w, zero_division=0)
    assert (res["precision_macro_d"], res["recall_macro_d"], res["f1_macro_d"]) == \
        pytest.approx((P, R, F))


@pytest.mark.parametrize("layout", ["C", "F", "CSR"])
@pytest.mark.parametrize("name", ["coverage", "ranking_loss", "average_precision",
                                  "r_precision"])
def test_sorted_single_metrics_find_bad_input_as_their_kernel_reads_it(name, layout,
                                                                       monkeypatch):
    """Under the ordinal ranking a single metric sorts its rows, and scans nothing before:
    a NaN belief or a truth value other than 0/1, first, middle or last row, is found as
    the kernel reads it, with the error of the checks (naming the first bad row); clean
    input is never scanned."""
    import fastrank._validation as V
    rng = np.random.default_rng(5)
    s = rng.integers(0, 5, size=(300, 9)) / 4.0
    y = (rng.random((300, 9)) < 0.3).astype(np.uint8)
    as_layout = {"C": np.ascontiguousarray, "F": np.asfortranarray, "CSR": sp.csr_matrix}[layout]
    f = RANKING_FUNCS[name]
    for row in (0, 150, 299):
        bad = s.copy()
        bad[row, 4] = np.nan
        with pytest.raises(ValueError, match=rf"y_score contains NaN \(first in row {row}\)"):
            f(y, as_layout(bad), ties="ordinal")
        wrong = y.copy()
        wrong[row, 1] = 2
        with pytest.raises(ValueError, match=r"y_true must be binary \(0/1\); found values \[2\]"):
            f(wrong, as_layout(s), ties="ordinal")
    scans = []
    monkeypatch.setattr(V, "_first_nan_row", lambda *a: scans.append(a))
    f(y, as_layout(s), ties="ordinal")
    assert scans == []
