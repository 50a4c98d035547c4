from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from fastrank._base import MultiLabelEstimator
from fastrank.calibration import (
    CalibratedClassifier, Isotonic, Platt, brier_decomposition, brier_score, log_loss,
)
from fastrank.metrics._roc import roc_convex_hull

# matsubara2008 Table 5.1 (ascending score) and the m-hat column as printed (truncated)
T51_SCORE = [0.02, 0.20, 0.24, 0.28, 0.30, 0.43, 0.73, 0.75, 0.78, 0.90]
T51_CLASS = [0, 1, 0, 0, 1, 0, 1, 1, 0, 1]
T51_MHAT = [0.00, 0.33, 0.33, 0.33, 0.50, 0.50, 0.66, 0.66, 0.66, 1.00]
# Tables 5.4/5.5: examples A..H
T54_SCORE = [0.9, 0.8, 0.7, 0.7, 0.5, 0.5, 0.3, 0.2]
T54_CAL = [1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.0, 0.0]
T54_CLASS = [1, 1, 0, 1, 0, 1, 0, 0]
T55_SQ_ERR = [0.01, 0.04, 0.49, 0.09, 0.25, 0.25, 0.09, 0.04]


def truncate2(x):
    return np.floor(np.asarray(x) * 100 + 1e-9) / 100


# ---- independent reference: PAV by repeated merging, exact fractions ---------------------

def reference_pav(scores, y):
    """Pools of tied scores, then merge the first adjacent pair whose lower pool has a rate
    >= the upper one until none is left. Returns {score: probability} as Fractions."""
    pools = []
    for v in sorted(set(scores)):
        members = [yy for ss, yy in zip(scores, y) if ss == v]
        pools.append([[v], sum(members), len(members)])
    merged = True
    while merged:
        merged = False
        for k in range(len(pools) - 1):
            a, b = pools[k], pools[k + 1]
            if Fraction(a[1], a[2]) >= Fraction(b[1], b[2]):
                pools[k:k + 2] = [[a[0] + b[0], a[1] + b[1], a[2] + b[2]]]
                merged = True
                break
    return {v: Fraction(p[1], p[2]) for p in pools for v in p[0]}


# ---- Isotonic ----------------------------------------------------------------------------

def test_table_5_1_pav():
    iso = Isotonic().fit(T51_SCORE, T51_CLASS)
    fitted = iso.transform(T51_SCORE)
    np.testing.assert_array_equal(truncate2(fitted), T51_MHAT)
    np.testing.assert_allclose(iso.values_, [0, 1 / 3, 1 / 2, 2 / 3, 1])
    np.testing.assert_array_equal(iso.counts_, [1, 3, 2, 3, 1])


def test_table_5_1_step_function_eq_5_6():
    iso = Isotonic().fit(T51_SCORE, T51_CLASS)
    # eq. 5.6: 0 below 0.20, 1/3 on [0.20, 0.30), 1/2 on [0.30, 0.73), 2/3 on [0.73, 0.90), 1
    probes = [-1.0, 0.0, 0.19, 0.20, 0.29, 0.30, 0.5, 0.7299, 0.73, 0.8999, 0.90, 5.0]
    expected = [0, 0, 0, 1 / 3, 1 / 3, 1 / 2, 1 / 2, 1 / 2, 2 / 3, 2 / 3, 1, 1]
    np.testing.assert_allclose(iso.transform(probes), expected)
    np.testing.assert_array_equal(iso.thresholds_[1:], [0.20, 0.30, 0.73, 0.90])


def test_table_5_4_calibrated_scores():
    np.testing.assert_allclose(Isotonic().fit_transform(T54_SCORE, T54_CLASS), T54_CAL)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1)), min_size=1, max_size=40))
def test_pav_matches_reference(pairs):
    s = np.array([p[0] for p in pairs], dtype=float) / 3
    y = np.array([p[1] for p in pairs])
    ref = reference_pav(list(s), list(y))
    iso = Isotonic().fit(s, y)
    np.testing.assert_allclose(iso.transform(s), [float(ref[v]) for v in s])
    assert (np.diff(iso.values_) > 0).all()  # adjacent pools always differ


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1))
def test_rocch_equals_pav(m, seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 8, m) / 8.0
    y = rng.integers(0, 2, m)
    y[0], y[1] = 0, 1
    iso = Isotonic().fit(s, y)
    fpr, tpr, thr = roc_convex_hull(y, s)
    fp, tp = fpr * (m - y.sum()), tpr * y.sum()
    slopes = np.diff(tp) / (np.diff(tp) + np.diff(fp))  # positive rate of each hull segment
    np.testing.assert_allclose(slopes, iso.values_[::-1])
    np.testing.assert_array_equal(np.sort(thr[1:]), iso.thresholds_)


def test_isotonic_matches_sklearn_at_fitted_scores():
    rng = np.random.default_rng(7)
    s = rng.integers(0, 30, 500) / 30.0  # many ties: sklearn pools tied X first too
    y = (rng.random(500) < s).astype(int)
    ours = Isotonic().fit(s, y)
    sk = IsotonicRegression(out_of_bounds="clip").fit(s, y)
    np.testing.assert_allclose(ours.transform(s), sk.predict(s), atol=1e-12)
    # between fitted scores they differ: eq. 5.6 is a step, sklearn interpolates linearly
    upper = ours.thresholds_[2]
    gap = (s[s < upper].max() + upper) / 2
    assert ours.transform([gap])[0] == ours.values_[1]
    assert ours.values_[1] < sk.predict([gap])[0] < ours.values_[2]


def test_per_label_matrix_equals_column_fits():
    rng = np.random.default_rng(0)
    S = rng.integers(0, 5, (60, 4)) / 4.0
    Y = (rng.random((60, 4)) < S).astype(np.uint8)
    for cal in (Isotonic(), Platt()):
        cal.fit(S, Y)
        out = cal.transform(S)
        assert out.shape == S.shape
        for j in range(4):
            col = type(cal)().fit(S[:, j], Y[:, j]).transform(S[:, j])
            np.testing.assert_allclose(out[:, j], col)
    iso = Isotonic().fit(sp.csr_matrix(S), Y)  # sparse beliefs are densified
    np.testing.assert_allclose(iso.transform(S), Isotonic().fit(S, Y).transform(S))
    assert len(iso.thresholds_) == 4


# ---- Platt -------------------------------------------------------------------------------

def platt_reference(s, y, smoothing=True):
    n_pos, n_neg = y.sum(), y.size - y.sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2)) if smoothing else y

    def nll(ab):
        z = np.clip(1 / (1 + np.exp(-ab[0] * s + ab[1])), 1e-300, 1 - 1e-16)
        return -np.sum(t * np.log(z) + (1 - t) * np.log(1 - z))
    return so.minimize(nll, [0.0, 0.0], method="Nelder-Mead",
                       options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000}).x


@pytest.mark.parametrize("seed", range(4))
def test_platt_matches_direct_minimisation(seed):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=80) * 3
    y = (rng.random(80) < 1 / (1 + np.exp(-(1.5 * s - 0.5)))).astype(int)
    for smoothing in (True, False):
        p = Platt(smoothing=smoothing).fit(s, y)
        a, b = platt_reference(s, y, smoothing)
        assert p.a_ == pytest.approx(a, rel=1e-5) and p.b_ == pytest.approx(b, rel=1e-5, abs=1e-6)
        np.testing.assert_allclose(p.transform(s), 1 / (1 + np.exp(-a * s + b)), atol=1e-6)


def test_platt_separable_data_stays_finite_with_smoothing():
    s = np.array([-2.0, -1.0, 1.0, 2.0])
    y = np.array([0, 0, 1, 1])
    p = Platt().fit(s, y)
    assert np.isfinite(p.a_) and p.a_ > 0
    # the fit reproduces Platt's targets on symmetric data: t+ = 3/4, t- = 1/4
    prob = p.transform(s)
    assert prob[2] > 0.5 > prob[1]
    assert np.all((prob > 0) & (prob < 1))


# ---- Brier score and its decomposition (Tables 5.4-5.5), log loss --------------------------

def test_table_5_5_brier_decomposition():
    sq = (np.array(T54_SCORE) - np.array(T54_CLASS)) ** 2
    np.testing.assert_allclose(sq, T55_SQ_ERR)
    assert brier_score(T54_CLASS, T54_SCORE) == pytest.approx(1.26 / 8)
    cal, ref = brier_decomposition(T54_CLASS, T54_SCORE)
    assert cal == pytest.approx(0.26 / 8) and ref == pytest.approx(1 / 8)
    # calibrated scores: calibration loss 0, Brier score = refinement loss = 1/8
    cal2, ref2 = brier_decomposition(T54_CLASS, T54_CAL)
    assert cal2 == pytest.approx(0) and ref2 == pytest.approx(1 / 8)
    assert brier_score(T54_CLASS, T54_CAL) == pytest.approx(1 / 8)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_decomposition_properties(m, seed):
    rng = np.random.default_rng(seed)
    p = rng.integers(0, 5, m) / 4.0
    y = rng.integers(0, 2, m)
    cal, ref = brier_decomposition(y, p)
    assert cal + ref == pytest.approx(brier_score(y, p))
    assert cal >= 0 and ref >= 0
    # isotonic calibration on the same data zeroes the calibration loss (Theorem 5.2/5.3)
    calibrated = Isotonic().fit_transform(p, y)
    assert brier_decomposition(y, calibrated).calibration_loss == pytest.approx(0, abs=1e-15)
    assert brier_score(y, calibrated) <= brier_score(y, p) + 1e-12


def test_brier_and_log_loss_match_sklearn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    p = rng.random(200)
    p[:3] = [0.0, 1.0, 0.5]
    assert brier_score(y, p) == pytest.approx(brier_score_loss(y, p))
    assert log_loss(y, p) == pytest.approx(sk_log_loss(y, p))
    Y = rng.integers(0, 2, (50, 3))
    P = rng.random((50, 3))
    assert brier_score(Y, P) == pytest.approx(np.mean([brier_score_loss(Y[:, j], P[:, j])
                                                       for j in range(3)]))
    assert log_loss(Y, P) == pytest.approx(np.mean([sk_log_loss(Y[:, j], P[:, j])
                                                    for j in range(3)]))
    cal, ref = brier_decomposition(Y, P)
    assert cal + ref == pytest.approx(brier_score(Y, P))


def test_probability_input_errors():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        brier_score([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="binary"):
        log_loss([0, 2], [0.5, 0.5])
    with pytest.raises(ValueError, match="shape"):
        brier_decomposition([0, 1, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="NaN"):
        brier_score([0, 1], [0.5, np.nan])
    with pytest.raises(ValueError, match="not fitted"):
        Isotonic().transform([0.5])
    with pytest.raises(ValueError, match="as in fit"):
        Isotonic().fit([0.1, 0.2], [0, 1]).transform(np.zeros((2, 2)))


# ---- wrapper estimator -------------------------------------------------------------------

class CentroidScorer(MultiLabelEstimator):
    """Test-local classifier: belief of label j = dot product with the mean of its
    positive training documents (plus `shift`)."""

    def __init__(self, shift=0.0):
        self.shift = shift

    def fit(self, X, Y):
        X, Y = self._check_fit_input(X, Y)
        X = X.toarray() if sp.issparse(X) else X
        self.centroids_ = (Y.T @ X) / np.maximum(Y.sum(axis=0), 1)[:, None]
        return self

    def decision_function(self, X):
        X = self._check_predict_input(X)
        return np.asarray(X @ self.centroids_.T) + self.shift


def blobs(n=120, seed=0):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, 3)) < 0.4).astype(np.uint8)
    X = Y @ rng.normal(size=(3, 5)) + rng.normal(scale=1.0, size=(n, 5))
    return X, Y


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_calibrated_classifier_cross_validation(method):
    X, Y = blobs()
    base = CentroidScorer(shift=0.5)
    model = CalibratedClassifier(base, method=method, cv=4, random_state=3).fit(X, Y)
    assert not hasattr(base, "centroids_")  # the estimator passed in is left untouched
    # reference: out-of-fold beliefs from the same permutation and folds, by hand
    order = np.random.default_rng(3).permutation(len(X))
    oof = np.empty(Y.shape)
    for fold in np.array_split(order, 4):
        rest = np.setdiff1d(order, fold)
        oof[fold] = CentroidScorer(shift=0.5).fit(X[rest], Y[rest]).decision_function(X[fold])
    cal = (Isotonic() if method == "isotonic" else Platt()).fit(oof, Y)
    final = CentroidScorer(shift=0.5).fit(X, Y)
    np.testing.assert_allclose(model.estimator_.centroids_, final.centroids_)
    expected = cal.transform(final.decision_function(X))
    np.testing.assert_allclose(model.predict_proba(X), expected)
    np.testing.assert_allclose(model.decision_function(X), expected)
    np.testing.assert_array_equal(model.predict(X), (expected >= 0.5).astype(np.uint8))
    assert model.get_params()["cv"] == 4


def test_calibrated_classifier_holdout():
    X, Y = blobs(seed=1)
    model = CalibratedClassifier(CentroidScorer(), cv="holdout", validation_size=0.25,
                                 random_state=0).fit(X, Y)
    order = np.random.default_rng(0).permutation(len(X))
    val, train = order[:30], order[30:]
    est = CentroidScorer().fit(X[train], Y[train])
    cal = Isotonic().fit(est.decision_function(X[val]), Y[val])
    np.testing.assert_allclose(model.predict_proba(X), cal.transform(est.decision_function(X)))
    proba = model.predict_proba(sp.csr_matrix(X))
    assert proba.min() >= 0 and proba.max() <= 1


def test_calibrated_classifier_errors():
    X, Y = blobs(n=20)
    with pytest.raises(ValueError, match="method"):
        CalibratedClassifier(CentroidScorer(), method="beta").fit(X, Y)
    with pytest.raises(ValueError, match="cv"):
        CalibratedClassifier(CentroidScorer(), cv=1).fit(X, Y)
    with pytest.raises(ValueError, match="validation_size"):
        CalibratedClassifier(CentroidScorer(), cv="holdout", validation_size=1.5).fit(X, Y)
    with pytest.raises(ValueError, match="not fitted"):
        CalibratedClassifier(CentroidScorer()).predict(X)
    from sklearn.neighbors import KNeighborsClassifier  # predict_proba, no decision_function
    with pytest.raises(TypeError, match="KNeighborsClassifier has no decision_function"):
        CalibratedClassifier(KNeighborsClassifier()).fit(X, Y)
    with pytest.raises(TypeError, match="cannot be saved"):
        CalibratedClassifier(CentroidScorer(), cv=2).fit(X, Y).save("unused.npz")


# ---- review fixes: non-finite scores, eps and Platt parameters --------------------------------

@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_platt_rejects_infinite_scores(bad):
    s = np.array([0.1, 0.4, 0.6, bad])
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="scores contains infinity"):
        Platt().fit(s, y)
    with pytest.raises(ValueError, match="scores contains infinity"):
        Platt().fit(np.column_stack([s[::-1], s]), np.column_stack([y, y]))
    fitted = Platt().fit(s[:3], y[:3])
    with pytest.raises(ValueError, match="scores contains infinity"):
        fitted.transform(np.array([0.2, bad]))


def test_isotonic_orders_infinite_scores():
    # only the order matters: -inf joins the lowest pool, inf the highest
    iso = Isotonic().fit(np.array([np.inf, 1.0, 2.0, -np.inf]), np.array([1, 0, 1, 0]))
    np.testing.assert_array_equal(iso.thresholds_, [-np.inf, 2.0])
    np.testing.assert_array_equal(iso.values_, [0.0, 1.0])
    np.testing.assert_array_equal(iso.transform(np.array([np.inf, -np.inf, 0.0, 5.0])),
                                  [1.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("eps", [0.7, 0.5, -1.0, 0.0, np.nan, np.inf])
def test_log_loss_rejects_bad_eps(eps):
    with pytest.raises(ValueError, match="eps"):
        log_loss([0, 1], [0.2, 0.9], eps=eps)


@pytest.mark.parametrize("eps", ["tiny", None, True])
def test_log_loss_rejects_non_numeric_eps(eps):
    with pytest.raises((TypeError, ValueError), match="eps"):
        log_loss([0, 1], [0.2, 0.9], eps=eps)


def test_log_loss_valid_eps():
    assert log_loss([0, 1], [0.0, 1.0], eps=0.1) == pytest.approx(-np.log(0.9))
    assert log_loss([0, 1], [0.2, 0.9], eps=np.float64(1e-3)) == pytest.approx(
        sk_log_loss([0, 1], [0.2, 0.9]))


@pytest.mark.parametrize("kwargs, err, msg", [
    ({"max_iter": 0}, ValueError, "max_iter"),
    ({"max_iter": -1}, ValueError, "max_iter"),
    ({"max_iter": 2.5}, TypeError, "max_iter"),
    ({"max_iter": True}, TypeError, "max_iter"),
    ({"tol": np.nan}, ValueError, "tol"),
    ({"tol": np.inf}, ValueError, "tol"),
    ({"tol": 0.0}, ValueError, "tol"),
    ({"tol": -1e-6}, ValueError, "tol"),
    ({"tol": "small"}, TypeError, "tol"),
])
def test_platt_rejects_bad_parameters(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        Platt(**kwargs).fit([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])


def test_platt_max_iter_one_takes_a_step():
    s, y = np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1])
    assert Platt(max_iter=1).fit(s, y).a_ > 0
    assert Platt(max_iter=np.int64(5), tol=np.float32(1e-6)).fit(s, y).a_ > 0


def test_probability_metrics_refuse_bad_input_with_type_or_value_errors():
    y, p = np.array([1, 0, 1]), np.array([0.9, 0.2, 0.6])
    for metric in (brier_score, log_loss, brier_decomposition):
        with pytest.raises(TypeError, match="y_true is required"):
            metric(None, p)
        with pytest.raises(TypeError, match="real numeric values, got dtype complex"):
            metric(y, p + 0j)
        bad = sp.csr_matrix(p.reshape(-1, 1))
        bad.indices = np.array([0, 1, 0], dtype=bad.indices.dtype)  # column 1 of 1
        with pytest.raises(ValueError, match=r"column index 1 out of range \[0, 1\)"):
            metric(y.reshape(-1, 1), bad)


@pytest.mark.parametrize("metric", [brier_score, log_loss, brier_decomposition])
def test_probability_metrics_name_y_true(metric):
    p = np.array([0.9, 0.2, 0.6])
    for y_true, words in [([1, 2, 0], r"^y_true must be binary"),
                          ([[1], [0], [1]], r"^y_prob is 1-D but y_true is 2-D"),
                          ([1, 0], r"^y_true has shape \(2, 1\) but y_prob has shape \(3, 1\)"),
                          (np.array([1, 0, 1]).astype("m8[s]"), r"^y_true must be real")]:
        with pytest.raises((ValueError, TypeError), match=words):
            metric(y_true, p)


@pytest.mark.parametrize("power", [-1000, -40, 0, 40, 1000])
def test_platt_fits_scores_on_any_scale(power):
    """Scores scaled by a power of two give the same B and probabilities, bit for bit, and A
    scaled inversely; by another factor, the same to rounding (the tolerance does not
    depend on the scores' unit: a scale of 1e-9 once stopped at A = 0)."""
    s = np.array([.1, .2, .3, .3, .4, .6, .7, .8])
    y = np.array([0, 0, 1, 0, 0, 1, 0, 1])
    want = Platt().fit(s, y)
    got = Platt().fit(np.ldexp(s, power), y)
    assert got.b_ == want.b_ and np.ldexp(got.a_, power) == want.a_
    np.testing.assert_array_equal(got.transform(np.ldexp(s, power)), want.transform(s))
    for factor in (1e-9, 1e-11, 1e150):
        other = Platt().fit(s * factor, y)
        np.testing.assert_allclose(other.transform(s * factor), want.transform(s), rtol=1e-9)
    with pytest.raises(ValueError, match="too small for a finite A"):  # 1e-311: subnormal
        Platt().fit(np.ldexp(s, -1033), y)
