import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve
from threadpoolctl import threadpool_limits

from fastrank.metrics._roc import auc, coverage_curve, roc_convex_hull, roc_curve

# matsubara2008 Table 4.3: examples A B V C D W X Y E Z
T43_CLASS = np.array([1, 1, 0, 1, 1, 0, 0, 0, 1, 0])
T43_SCORE = np.array([0.9, 0.8, 0.4, 0.39, 0.38, 0.37, 0.36, 0.2, 0.2, 0.05])
# Table 4.4 rows (threshold, VP, FN, FP, VN, TVP, TFP) as printed
T44 = [(0.9, 1, 4, 0, 5, 0.2, 0.0), (0.8, 2, 3, 0, 5, 0.4, 0.0), (0.4, 2, 3, 1, 4, 0.4, 0.2),
       (0.39, 3, 2, 1, 4, 0.6, 0.2), (0.38, 4, 1, 1, 4, 0.8, 0.2), (0.37, 4, 1, 2, 3, 0.8, 0.4),
       (0.36, 4, 1, 3, 2, 0.8, 0.6), (0.2, 5, 0, 4, 1, 1.0, 0.8), (0.05, 5, 0, 5, 0, 1.0, 1.0)]


# ---- independent references (slow, obviously correct) ------------------------------------

def pairwise_auc(y, s):
    """Mean over positive/negative pairs of [s+ > s-] + [s+ == s-] / 2; NaN if undefined."""
    y = np.asarray(y).astype(bool)
    pos, neg = s[y], s[~y]
    if pos.size == 0 or neg.size == 0:
        return np.nan
    diff = pos[:, None] - neg[None, :]
    return ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size


def ranking_loss_half_ties(y_row, s_row):
    """Ranking loss of one document, a tied relevant/irrelevant pair counted 1/2."""
    rel = [a for a in range(len(y_row)) if y_row[a]]
    irr = [b for b in range(len(y_row)) if not y_row[b]]
    bad = sum((s_row[a] < s_row[b]) + 0.5 * (s_row[a] == s_row[b]) for a in rel for b in irr)
    return bad / (len(rel) * len(irr))


def tied_problem(n, q, seed, levels=7, p=0.3):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < p).astype(np.uint8)
    Y[0] = 1 - Y[1]  # every label has both classes
    S = rng.integers(0, levels, size=(n, q)) / levels
    return Y, S


# ---- the thesis example ------------------------------------------------------------------

def test_table_4_3_points_and_thresholds():
    fpr, tpr, thr = roc_curve(T43_CLASS, T43_SCORE)
    assert thr[0] == np.inf and fpr[0] == 0 and tpr[0] == 0
    assert thr[1:].tolist() == [row[0] for row in T44]
    np.testing.assert_allclose(tpr[1:], [row[5] for row in T44])
    np.testing.assert_allclose(fpr[1:], [row[6] for row in T44])


def test_table_4_4_coverage_counts():
    fp, tp, thr = coverage_curve(T43_CLASS, T43_SCORE)
    assert tp.dtype == np.int64 and fp.dtype == np.int64
    assert tp[1:].tolist() == [row[1] for row in T44]
    assert (tp[-1] - tp[1:]).tolist() == [row[2] for row in T44]   # FN
    assert fp[1:].tolist() == [row[3] for row in T44]
    assert (fp[-1] - fp[1:]).tolist() == [row[4] for row in T44]   # VN


def test_table_4_3_auc_half_credit_for_the_tie():
    # A, B beat all 5 negatives; C, D lose to V; E loses to V W X, ties Y (1/2), beats Z
    assert auc(T43_CLASS, T43_SCORE) == pytest.approx((5 + 5 + 4 + 4 + 1.5) / 25)
    assert auc(T43_CLASS, T43_SCORE) == pytest.approx(0.78)


def test_table_4_3_convex_hull():
    fpr, tpr, thr = roc_convex_hull(T43_CLASS, T43_SCORE)
    np.testing.assert_allclose(fpr, [0, 0, 0.2, 0.8, 1])
    np.testing.assert_allclose(tpr, [0, 0.4, 0.8, 1, 1])
    assert thr.tolist() == [np.inf, 0.8, 0.38, 0.2, 0.05]


# ---- scikit-learn equality ---------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_roc_curve_matches_sklearn_without_drop_intermediate(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    s = rng.integers(0, 20, 300) / 7.0
    fpr, tpr, thr = roc_curve(y, s)
    sk_fpr, sk_tpr, sk_thr = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_array_equal(thr, sk_thr)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    # the default drop_intermediate=True keeps a subset of the points: same curve, same area
    d_fpr, d_tpr, d_thr = sk_roc_curve(y, s)
    assert set(d_thr) <= set(thr)
    assert np.trapezoid(d_tpr, d_fpr) == pytest.approx(auc(y, s))


@pytest.mark.parametrize("average", [None, "macro", "micro", "samples"])
@pytest.mark.parametrize("layout", ["C", "F", "float32", "csr", "csc"])
def test_auc_matches_sklearn(average, layout):
    Y, S = tied_problem(150, 12, seed=3)
    S[S < 0.4] = 0.0  # many zeros: the sparse zero block is a big tie
    # every document needs both classes for sklearn's "samples"
    Y[:, 0], Y[:, 1] = 1, 0
    Y[0, 0], Y[1, 1] = 0, 1
    X = {"C": S, "F": np.asfortranarray(S), "float32": S.astype(np.float32),
         "csr": sp.csr_matrix(S), "csc": sp.csc_matrix(S)}[layout]
    ref = roc_auc_score(Y, S, average=average)
    np.testing.assert_allclose(auc(Y, X, average=average), ref, rtol=1e-12)


# ---- independent reference and properties ------------------------------------------------

def test_per_label_and_per_sample_against_pairwise_reference():
    Y, S = tied_problem(40, 9, seed=1, levels=4)
    Y[5] = 1  # a document with every label relevant: undefined, NaN in its row
    per_label = auc(Y, S, average=None)
    np.testing.assert_allclose(per_label, [pairwise_auc(Y[:, j], S[:, j]) for j in range(9)])
    rows = np.array([pairwise_auc(Y[i], S[i]) for i in range(40)])
    assert np.isnan(rows[5])
    assert auc(Y, S, average="samples") == pytest.approx(np.nanmean(rows))
    assert auc(Y, S, average="micro") == pytest.approx(pairwise_auc(Y.ravel(), S.ravel()))


def test_undefined_labels_are_nan_and_skipped_by_macro():
    Y, S = tied_problem(30, 5, seed=2)
    Y[:, 2] = 0
    Y[:, 4] = 1
    per_label = auc(Y, S, average=None)
    assert np.isnan(per_label[[2, 4]]).all() and not np.isnan(per_label[[0, 1, 3]]).any()
    assert auc(Y, S) == pytest.approx(per_label[[0, 1, 3]].mean())
    assert np.isnan(auc(np.zeros((4, 2)), np.ones((4, 2))))


def test_signed_zero_and_infinities():
    y = [1, 0, 1, 0]
    assert auc(y, [0.0, -0.0, np.inf, -np.inf]) == pytest.approx(1 - 0.5 / 4 * 1)
    fpr, tpr, thr = roc_curve(y, [0.0, -0.0, np.inf, -np.inf])
    assert thr.tolist() == [np.inf, np.inf, 0.0, -np.inf]


def test_thread_count_does_not_change_results():
    Y, S = tied_problem(500, 40, seed=4)
    X = sp.csr_matrix(np.where(S > 0.5, S, 0))
    out = {}
    for n in (1, 2):
        with threadpool_limits(n, user_api="openmp"):
            out[n] = [auc(Y, S, None), auc(Y, S, "samples"), auc(Y, X, None), auc(Y, X, "samples")]
    for a, b in zip(out[1], out[2]):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 8), st.integers(2, 7), st.integers(0, 2**32 - 1))
def test_samples_auc_is_one_minus_ranking_loss(n, q, seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < 0.5).astype(np.uint8)
    Y[:, 0], Y[:, 1] = 1, 0  # every document has a relevant and an irrelevant label
    S = rng.integers(0, 3, size=(n, q)).astype(float)
    per_doc = [1 - ranking_loss_half_ties(Y[i], S[i]) for i in range(n)]
    assert auc(Y, S, average="samples") == pytest.approx(np.mean(per_doc))


@settings(max_examples=40, deadline=None)
@given(arrays(np.int64, st.integers(2, 40), elements=st.integers(-5, 5)),
       st.integers(0, 2**32 - 1))
def test_auc_invariant_to_increasing_transforms(s, seed):
    y = np.random.default_rng(seed).integers(0, 2, s.size)
    y[0], y[1] = 0, 1
    base = auc(y, s.astype(float))
    assert base == pytest.approx(pairwise_auc(y, s))
    for f in (np.exp, lambda v: 3 * v + 1, lambda v: v.astype(np.float32) ** 3):
        assert auc(y, f(s.astype(float))) == base
    # reversing the ranking gives the complementary area
    assert auc(y, -s.astype(float)) == pytest.approx(1 - base)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1))
def test_convex_hull_properties(m, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    y[0], y[1] = 0, 1
    s = rng.integers(0, 6, m).astype(float)
    fpr, tpr, thr = roc_curve(y, s)
    hf, ht, hthr = roc_convex_hull(y, s)
    assert hf[0] == 0 and ht[0] == 0 and hf[-1] == 1 and ht[-1] == 1
    assert set(hthr) <= set(thr)
    # every ROC point is on or below the hull, and the hull is strictly concave
    assert (tpr <= np.interp(fpr, hf, ht) + 1e-12).all()
    slopes = np.diff(ht) / np.where(np.diff(hf) == 0, np.nan, np.diff(hf))
    finite = slopes[~np.isnan(slopes)]
    assert (np.diff(finite) < 0).all()
    assert auc(y, s) <= np.trapezoid(ht, hf) + 1e-12


# ---- bad input ---------------------------------------------------------------------------

def test_bad_input():
    with pytest.raises(ValueError, match="average"):
        auc([0, 1], [0.1, 0.2], average="weighted")
    with pytest.raises(ValueError, match="both classes"):
        auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="both classes"):
        roc_curve([0, 0], [0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        auc([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="binary"):
        roc_curve([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="values"):
        coverage_curve([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="labels"):
        auc(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="shape"):
        auc(np.zeros((4, 2)), np.zeros((3, 2)))
    with pytest.raises(TypeError):
        auc([0, 1], ["a", "b"])


@pytest.mark.parametrize("average", [None, "micro", "samples"])
def test_sparse_negative_values_explicit_zeros_and_int64_indices(average):
    rng = np.random.default_rng(5)
    Y = (rng.random((120, 15)) < 0.3).astype(np.uint8)
    S = np.round(rng.normal(size=(120, 15)), 1)
    S[rng.random((120, 15)) < 0.5] = 0.0
    X = sp.csr_matrix(S)
    X.data[::7] = 0.0  # stored zeros belong to the implicit-zero tie block
    X64 = X.copy()
    X64.indices, X64.indptr = X64.indices.astype(np.int64), X64.indptr.astype(np.int64)
    dense = X.toarray()
    expected = auc(Y, dense, average=average)
    np.testing.assert_array_equal(auc(Y, X, average=average), expected)
    np.testing.assert_array_equal(auc(Y, X64, average=average), expected)
    if average is None:
        reference = [pairwise_auc(Y[:, j], dense[:, j]) for j in range(15)]
        np.testing.assert_allclose(expected, reference)


# ---- sample_weight -----------------------------------------------------------------------

def weighted_pairwise_auc(y, s, w):
    """Sum over positive/negative pairs of w+ w- ([s+ > s-] + [s+ == s-] / 2) / (W+ W-)."""
    y = np.asarray(y).astype(bool)
    diff = s[y][:, None] - s[~y][None, :]
    pair_w = w[y][:, None] * w[~y][None, :]
    if pair_w.sum() == 0:
        return np.nan
    return (pair_w * ((diff > 0) + 0.5 * (diff == 0))).sum() / pair_w.sum()


def weighted_problem(seed):
    Y, S = tied_problem(150, 12, seed=seed)
    Y[:, 0], Y[:, 1] = 1, 0
    Y[0, 0], Y[1, 1] = 0, 1
    w = np.random.default_rng(seed).random(150) * 3
    w[5::9] = 0.0  # zero-weight documents count for nothing
    return Y, S, w


@pytest.mark.parametrize("average", [None, "macro", "micro", "samples"])
@pytest.mark.parametrize("layout", ["C", "F", "float32", "csr", "csc"])
def test_weighted_auc_matches_sklearn(average, layout):
    Y, S, w = weighted_problem(6)
    S[S < 0.4] = 0.0
    X = {"C": S, "F": np.asfortranarray(S), "float32": S.astype(np.float32),
         "csr": sp.csr_matrix(S), "csc": sp.csc_matrix(S)}[layout]
    ref = roc_auc_score(Y, S, average=average, sample_weight=w)
    np.testing.assert_allclose(auc(Y, X, average=average, sample_weight=w), ref, rtol=1e-12)


def test_weighted_auc_against_pairwise_reference():
    Y, S, w = weighted_problem(7)
    per_label = auc(Y, S, average=None, sample_weight=w)
    np.testing.assert_allclose(per_label,
                               [weighted_pairwise_auc(Y[:, j], S[:, j], w) for j in range(12)])
    flat_w = np.repeat(w, 12)
    assert auc(Y, S, average="micro", sample_weight=w) == \
        pytest.approx(weighted_pairwise_auc(Y.ravel(), S.ravel(), flat_w))
    rows = np.array([pairwise_auc(Y[i], S[i]) for i in range(150)])
    assert auc(Y, S, average="samples", sample_weight=w) == \
        pytest.approx(np.average(rows, weights=w))


@pytest.mark.parametrize("seed", range(20))
def test_weighted_auc_rounds_as_written(seed):
    """Bit for bit the kernel's sum in plain Python floats (no fused multiply-add), on
    distinct scores: a compiler that contracted a * b + c (as GCC does by default on
    AArch64) would round differently."""
    rng = np.random.default_rng(seed)
    m = 200
    y = rng.integers(0, 2, m)
    y[0], y[1] = 0, 1
    s = rng.permutation(m).astype(float)
    w = rng.random(m) * 3
    pos = neg = wrong = 0.0
    for e in np.argsort(-s):
        g_pos, g_neg = (float(w[e]), 0.0) if y[e] else (0.0, float(w[e]))
        wrong += g_pos * (neg + 0.5 * g_neg)
        pos += g_pos
        neg += g_neg
    assert auc(y, s, sample_weight=w) == 1.0 - wrong / (pos * neg)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 30), st.integers(0, 2**32 - 1))
def test_integer_weights_equal_repeated_documents(m, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    y[0], y[1] = 0, 1
    s = rng.integers(0, 4, m).astype(float)
    w = rng.integers(0, 4, m)
    w[0] = w[1] = 1
    rep_y, rep_s = np.repeat(y, w), np.repeat(s, w)
    assert auc(y, s, sample_weight=w) == pytest.approx(auc(rep_y, rep_s))
    fp, tp, thr = coverage_curve(y, s, sample_weight=w)
    rfp, rtp, rthr = coverage_curve(rep_y, rep_s)
    assert fp.dtype == np.float64
    np.testing.assert_array_equal(thr, rthr)
    np.testing.assert_array_equal(fp, rfp)
    np.testing.assert_array_equal(tp, rtp)
    for got, want in zip(roc_convex_hull(y, s, sample_weight=w), roc_convex_hull(rep_y, rep_s)):
        np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("seed", range(3))
def test_weighted_roc_curve_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    s = rng.integers(0, 20, 300) / 7.0
    w = rng.random(300)
    w[rng.random(300) < 0.2] = 0.0
    fpr, tpr, thr = roc_curve(y, s, sample_weight=w)
    sk_fpr, sk_tpr, sk_thr = sk_roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    np.testing.assert_array_equal(thr, sk_thr)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    assert np.trapezoid(tpr, fpr) == pytest.approx(auc(y, s, sample_weight=w))
    assert auc(y, s, sample_weight=w) == pytest.approx(roc_auc_score(y, s, sample_weight=w))


def test_unit_weights_change_nothing():
    Y, S, _ = weighted_problem(8)
    ones = np.ones(150)
    for average in (None, "macro", "micro", "samples"):
        np.testing.assert_allclose(auc(Y, S, average, sample_weight=ones), auc(Y, S, average),
                                   rtol=1e-14)
    fp, tp, thr = coverage_curve(Y[:, 3], S[:, 3], sample_weight=ones)
    ufp, utp, uthr = coverage_curve(Y[:, 3], S[:, 3])
    np.testing.assert_array_equal(fp, ufp)
    np.testing.assert_array_equal(tp, utp)
    np.testing.assert_array_equal(thr, uthr)


def test_weighted_thread_count_does_not_change_results():
    Y, S = tied_problem(500, 40, seed=9)
    w = np.random.default_rng(9).random(500)
    out = {}
    for n in (1, 2):
        with threadpool_limits(n, user_api="openmp"):
            out[n] = [auc(Y, S, a, sample_weight=w) for a in (None, "micro", "samples")]
    for a, b in zip(out[1], out[2]):
        np.testing.assert_array_equal(a, b)


def test_bad_sample_weight():
    y, s = [0, 1, 1], [0.1, 0.2, 0.3]
    with pytest.raises(ValueError, match="sample_weight"):
        auc(y, s, sample_weight=[1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        auc(y, s, sample_weight=[1, -1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        roc_curve(y, s, sample_weight=[1, np.nan, 1])
    with pytest.raises(TypeError, match="sample_weight"):
        auc(y, s, sample_weight=["a", "b", "c"])
    with pytest.raises(ValueError, match="positive weight"):
        auc(y, s, sample_weight=[0, 1, 1])   # the only negative weighs 0
    with pytest.raises(ValueError, match="positive weight"):
        roc_curve(y, s, sample_weight=[0, 0, 0])
    fp, tp, thr = coverage_curve(y, s, sample_weight=[0, 0, 0])
    assert fp.tolist() == [0.0] and tp.tolist() == [0.0] and thr.tolist() == [np.inf]
    with pytest.raises(ValueError, match="sample_weight"):
        auc(np.eye(3), np.eye(3), sample_weight=np.ones(4))


@pytest.mark.parametrize("average", [None, "macro", "micro", "samples"])
def test_all_zero_weights_raise_as_in_the_ranking_metrics(average):
    from fastrank.metrics import coverage
    Y, S = np.eye(3, dtype=np.uint8), np.eye(3) / 2 + 0.1
    with pytest.raises(ValueError, match="sample_weight sums to 0") as ranking_error:
        coverage(Y, S, sample_weight=np.zeros(3))
    with pytest.raises(ValueError, match=str(ranking_error.value)):
        auc(Y, S, average, sample_weight=np.zeros(3))
    with pytest.raises(ValueError, match=str(ranking_error.value)):
        auc(Y[:, 0], S[:, 0], average, sample_weight=np.zeros(3))
