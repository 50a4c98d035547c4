"""fastrank's classifiers as scikit-learn estimators: scikit-learn's own estimator checks
(every check but those that do not apply to multi-label-only classifiers, each excluded with
its reason), the default ranking score, predict_proba's format, feature names, and use in
scikit-learn's tools (clone, Pipeline, cross_val_score, GridSearchCV)."""
import importlib.resources

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.metrics import label_ranking_average_precision_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from sklearn.utils.estimator_checks import estimator_checks_generator

from fastrank.calibration import CalibratedClassifier
from fastrank.neighbors import KNN, MLkNN
from fastrank.wnn import VGRAM, VGRAMCor
from ref_neighbors import ref_mlknn

# ---- scikit-learn's estimator checks ----------------------------------------------------------

# Checks that feed a target which is not a multi-label 0/1 matrix, or that require a
# single-output classifier's conventions. fastrank's classifiers are multi-label only (Y a 2-D
# 0/1 matrix or a list of label sets) and refuse any other target with a ValueError.
NOT_MULTILABEL = {
    "check_classifiers_classes": "1-D (single-output) target of class names",
    "check_classifiers_train": "1-D binary / multi-class target",
    "check_classifier_not_supporting_multiclass":
        "1-D multi-class target; refused as not a 0/1 label matrix, in fastrank's words, not "
        "'Only binary classification is supported'",
    "check_estimators_dtypes": "target column with values {1, 2} (a binary class vector, not "
                               "a 0/1 label indicator)",
    "check_classifier_data_not_an_array": "target column with values {1, 2}",
    "check_fit2d_1feature": "target column with values {0, 1, 2}",
}
# scikit-learn's multi-output convention that predict is decision_function > 0: fastrank's
# beliefs are in [0, 1] (a ranking), and a label is assigned by each model's rule (ML-kNN's
# posterior, VG-RAM's top labels, a calibrated probability >= 0.5); only KNN's rule is > 0
# (docs/guide/classifiers.rst states it)
OWN_RULE = {
    "check_classifier_multioutput":
        "predict is the model's rule, not decision_function > 0 (beliefs are in [0, 1])",
}
# predict_proba (ML-kNN and calibrated models) is one probability per label: (n, q)
PROBA = {
    "check_decision_proba_consistency": "1-D (single-output) target",
    "check_estimator_sparse_array":
        "expects predict_proba of a one-column target to be binary (n, 2); fastrank gives one "
        "probability per label, (n, 1)",
    "check_estimator_sparse_matrix":
        "expects predict_proba of a one-column target to be binary (n, 2); fastrank gives one "
        "probability per label, (n, 1)",
}
# VG-RAM's random tie choice is keyed by the test row's index in X (reproducible for the same
# X; see fastrank.wnn): a document's beliefs may change with its position among the others.
# With the checks' data fixed (CHECK_SEED), VG-RAM-COR's beliefs change on both checks; VG-RAM
# (one entry per label) has no tie that the row positions of these checks break differently,
# so it passes them. tie_policy="all" passes them (test_all_policy_is_row_order_invariant).
RANDOM_TIES = {
    "check_methods_sample_order_invariance":
        "tie_policy='random' keys tie choices by the row index in X (documented)",
    "check_methods_subset_invariance":
        "tie_policy='random' keys tie choices by the row index in X (documented)",
}
#: scikit-learn's checks draw some of their data from NumPy's global generator (the row
#: permutation of check_methods_sample_order_invariance); it is seeded before each check so
#: that every check has one outcome, whatever ran before it
CHECK_SEED = 0

ESTIMATORS = [KNN(), KNN(k=3, aggregate="count"), MLkNN(k=3),
              VGRAM(n_neurons=8, n_synapses=16, random_state=0),
              VGRAM(n_neurons=8, n_synapses=16, tie_policy="all", random_state=0),
              VGRAMCor(n_neurons=8, n_synapses=16, random_state=0),
              VGRAMCor(n_neurons=8, n_synapses=16, tie_policy="all", random_state=0),
              CalibratedClassifier(MLkNN(k=3), method="platt", cv=2, random_state=0)]


def expected_failed_checks(estimator):
    """The checks that do not apply to ``estimator``, with the reason."""
    expected = dict(NOT_MULTILABEL)
    if not isinstance(estimator, KNN):
        expected |= OWN_RULE
    if hasattr(estimator, "predict_proba"):
        expected |= PROBA
    if isinstance(estimator, VGRAMCor) and estimator.tie_policy == "random":
        expected |= RANDOM_TIES
    return expected


def _check_name(check):
    return getattr(check, "func", check).__name__


def applicable_checks():
    """scikit-learn's checks of every estimator, less those that do not apply at all (and
    would only report themselves skipped): array-API input (fastrank computes with NumPy and
    its compiled kernels) and the predict_proba format of estimators without one."""
    out = []
    for estimator in ESTIMATORS:
        for item in estimator_checks_generator(
                estimator, legacy=True, expected_failed_checks=expected_failed_checks(estimator),
                mark="xfail", xfail_strict=True):  # (estimator, check), or a param: xfail
            (est, check), marks = (item.values, item.marks) if hasattr(item, "marks") \
                else (item, ())
            name = _check_name(check)
            if name == "check_array_api_input" or (
                    "predict_proba" in name and not hasattr(estimator, "predict_proba")):
                continue
            out.append(pytest.param(est, check, marks=marks, id=f"{estimator!r}-{name}"))
    return out


@pytest.fixture
def seeded_global_rng():
    """NumPy's global generator seeded with CHECK_SEED, its state restored afterwards."""
    state = np.random.get_state()
    np.random.seed(CHECK_SEED)
    yield
    np.random.set_state(state)


@pytest.mark.parametrize("estimator, check", applicable_checks())
def test_sklearn_estimator_checks(estimator, check, seeded_global_rng):
    """Every applicable check passes, or (an exclusion with its reason) fails: the xfails
    are strict, so an exclusion that no longer fails is reported."""
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_most_checks_apply(estimator):
    checks = [p for p in applicable_checks() if p.values[0] is estimator]
    assert sum(not p.marks for p in checks) >= 45
    assert {_check_name(p.values[1]) for p in checks if p.marks} \
        == set(expected_failed_checks(estimator))


@pytest.mark.parametrize("estimator", [e for e in ESTIMATORS if isinstance(e, (VGRAM, VGRAMCor))
                                       and e.tie_policy == "all"], ids=repr)
@pytest.mark.parametrize("seed", range(8))
def test_all_policy_is_row_order_invariant(estimator, seed):
    """tie_policy="all" involves no random choice: the two invariance checks that the random
    policy may fail pass for every row permutation drawn."""
    from sklearn.utils.estimator_checks import check_methods_sample_order_invariance, \
        check_methods_subset_invariance
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        check_methods_sample_order_invariance(type(estimator).__name__, estimator)
        check_methods_subset_invariance(type(estimator).__name__, estimator)
    finally:
        np.random.set_state(state)


# ---- what scikit-learn's tools get ------------------------------------------------------------

@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.random((90, 15)) * (rng.random((90, 15)) < 0.5)
    X[:, 0] += 0.01  # no zero row
    Y = (rng.random((90, 4)) < 0.35).astype(np.uint8)
    Y[np.arange(90), rng.integers(0, 4, 90)] = 1
    return X, Y


FITTABLE = [KNN(k=5), MLkNN(k=5), VGRAM(n_neurons=16, n_synapses=32, random_state=0),
            VGRAMCor(n_neurons=16, n_synapses=32, random_state=0),
            CalibratedClassifier(MLkNN(k=5), cv=3, random_state=0)]


@pytest.mark.parametrize("est", FITTABLE, ids=repr)
def test_is_a_classifier_and_raises_sklearn_not_fitted(est, data):
    X, _ = data
    assert is_classifier(est)
    for method in ("predict", "decision_function"):
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(clone(est), method)(X)


def test_score_is_average_precision(data):
    """score(X, Y) is the average precision of the beliefs; without ties among a row's
    beliefs and no zero belief, it is scikit-learn's label ranking average precision."""
    X, Y = data
    model = MLkNN(k=5).fit(X[:60], Y[:60])
    F = model.decision_function(X[60:])
    assert (F > 0).all()
    assert all(np.unique(row).size == row.size for row in F)  # no ties
    expected = label_ranking_average_precision_score(Y[60:], F)
    assert model.score(X[60:], Y[60:]) == pytest.approx(expected, rel=1e-12)
    w = np.arange(1, 31, dtype=float)
    assert model.score(X[60:], Y[60:], sample_weight=w) == pytest.approx(
        label_ranking_average_precision_score(Y[60:], F, sample_weight=w), rel=1e-12)


def test_score_with_label_sets_uses_the_fitted_classes(data):
    X, Y = data
    names = np.array(["arts", "music", "news", "sport"])
    sets = [set(names[row.astype(bool)]) for row in Y]
    model = KNN(k=5).fit(X[:60], sets[:60])
    assert model.score(X[60:], sets[60:]) == KNN(k=5).fit(X[:60], Y[:60]).score(X[60:], Y[60:])
    with pytest.raises(ValueError, match="not seen in fit"):
        model.score(X[60:62], [{"arts"}, {"weather"}])


@pytest.mark.parametrize("est", FITTABLE, ids=repr)
def test_cross_val_score_pipeline_and_grid_search_use_score(est, data):
    X, Y = data
    cv = KFold(3)
    scores = cross_val_score(est, X, Y, cv=cv)
    for (train, test), got in zip(cv.split(X), scores):
        assert got == clone(est).fit(X[train], Y[train]).score(X[test], Y[test])
    pipe = make_pipeline(MaxAbsScaler(), clone(est)).fit(X[:60], Y[:60])
    Xs = MaxAbsScaler().fit(X[:60]).transform(X[60:])
    assert pipe.score(X[60:], Y[60:]) == pipe[-1].score(Xs, Y[60:])


def test_grid_search_over_nested_parameters(data):
    X, Y = data
    grid = GridSearchCV(CalibratedClassifier(MLkNN(), cv=2, random_state=0),
                        {"estimator__k": [2, 6]}, cv=KFold(3)).fit(X, Y)
    by_k = {k: cross_val_score(CalibratedClassifier(MLkNN(k=k), cv=2, random_state=0), X, Y,
                               cv=KFold(3)).mean() for k in (2, 6)}
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"], [by_k[2], by_k[6]])
    assert grid.best_params_ == {"estimator__k": max(by_k, key=by_k.get)}


def test_mlknn_predict_proba_is_the_posterior(data):
    """(n, q) posteriors P(H1^c | E), against the NumPy reference of ML-kNN."""
    X, Y = data
    model = MLkNN(k=5).fit(X[:60], Y[:60])
    P = model.predict_proba(X[60:])
    F, _ = ref_mlknn(X[:60], Y[:60], X[60:], 5, 1.0)
    assert P.shape == (30, 4) and P.dtype == np.float64
    np.testing.assert_allclose(P, F, rtol=1e-12)
    np.testing.assert_array_equal(P, model.decision_function(X[60:]))


@pytest.mark.parametrize("est", FITTABLE[:4], ids=repr)
def test_feature_names_from_a_dataframe(est, data, tmp_path):
    X, Y = data
    cols = [f"term{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    model = clone(est).fit(df, Y)
    np.testing.assert_array_equal(model.feature_names_in_, cols)
    assert model.n_features_in_ == X.shape[1]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        from_array = model.decision_function(X)
    np.testing.assert_array_equal(model.decision_function(df), from_array)
    with pytest.raises(ValueError, match="feature names should match"):
        model.decision_function(df[cols[::-1]])
    model.save(tmp_path / "m.npz")
    back = type(est).load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.feature_names_in_, cols)
    assert back.feature_names_in_.dtype == object
    np.testing.assert_array_equal(back.decision_function(df), model.decision_function(df))
    with pytest.raises(ValueError, match="feature names should match"):
        back.decision_function(df[cols[::-1]])
    assert not hasattr(clone(est).fit(X, Y), "feature_names_in_")


def test_bad_inputs_in_scikit_learn_wording(data):
    X, Y = data
    with pytest.raises(ValueError, match=r"0 feature\(s\) \(shape=\(5, 0\)\)"):
        KNN().fit(np.empty((5, 0)), Y[:5])
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        KNN().fit(np.empty((0, 3)), Y[:0])
    with pytest.raises(ValueError, match="Complex data not supported"):
        KNN().fit(X + 1j, Y)
    model = KNN().fit(X, Y)
    with pytest.raises(ValueError, match="Reshape your data"):
        model.predict(X[0])
    with pytest.raises(ValueError, match="X has 3 features, but KNN is expecting 15"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="continuous-multioutput target"):
        KNN().fit(X, np.random.default_rng(0).random((90, 2)))
    with pytest.raises(ValueError, match="multiclass target"):
        KNN().fit(X, np.arange(90) % 3)
    with pytest.raises(ValueError, match="requires y"):
        KNN().fit(X, None)


def test_py_typed_is_shipped():
    assert importlib.resources.files("fastrank").joinpath("py.typed").is_file()


def test_sparse_input_kept_sparse(data):
    X, Y = data
    model = KNN(k=5).fit(sp.csr_matrix(X), Y)
    assert sp.issparse(model.X_fit_)
    np.testing.assert_allclose(model.decision_function(sp.csr_matrix(X[:5])),
                               KNN(k=5).fit(X, Y).decision_function(X[:5]), rtol=1e-12)


# ---- predict's dtype and object arrays ---------------------------------------------------------

@pytest.mark.parametrize("est", FITTABLE, ids=repr)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, bool, np.float64, np.float32])
def test_predict_returns_the_targets_dtype(est, data, dtype):
    X, Y = data
    want = clone(est).fit(X[:60], Y[:60]).predict(X[60:])  # uint8 from a uint8 target
    got = clone(est).fit(X[:60], Y[:60].astype(dtype)).predict(X[60:])
    assert got.dtype == np.dtype(dtype) and want.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    listed = clone(est).fit(X[:60], Y[:60].tolist()).predict(X[60:])  # np.asarray's int64
    assert listed.dtype == np.asarray(Y[:60].tolist()).dtype
    sparse = clone(est).fit(X[:60], sp.csr_matrix(Y[:60].astype(dtype))).predict(X[60:])
    assert sparse.dtype == np.dtype(dtype)
    sets = [set(np.flatnonzero(row)) for row in Y[:60]]
    assert clone(est).fit(X[:60], sets).predict(X[60:]).dtype == np.uint8


@pytest.mark.parametrize("est", FITTABLE[:4], ids=repr)
def test_predict_dtype_is_saved_and_older_files_predict_uint8(est, data, tmp_path):
    import json
    X, Y = data
    model = clone(est).fit(X, Y.astype(np.int16))
    model.save(tmp_path / "m.npz")
    back = type(est).load(tmp_path / "m.npz")
    assert back.predict(X[:5]).dtype == np.int16
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    with np.load(tmp_path / "m.npz") as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(arrays["__header__"].tobytes().decode())
    assert header.pop("target_dtype") == "<i2"
    for value, ok in [(None, True), ("|b1", True), ("<f8", True), ("|O", False),
                      ("int64", False), ("<c16", False), (8, False), ("<M8[s]", False)]:
        if value is not None:
            header["target_dtype"] = value
        arrays["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        np.savez(tmp_path / "edited.npz", **arrays)
        if ok:
            got = type(est).load(tmp_path / "edited.npz").predict(X[:5])
            assert got.dtype == np.dtype(value or np.uint8)  # no key: a file written before
        else:
            with pytest.raises(ValueError, match="target_dtype"):
                type(est).load(tmp_path / "edited.npz")


@pytest.mark.parametrize("est", FITTABLE, ids=repr)
def test_object_arrays_of_numbers_are_converted(est, data):
    X, Y = data
    want = clone(est).fit(X[:60], Y[:60])
    got = clone(est).fit(X[:60].astype(object), Y[:60].astype(object))
    np.testing.assert_array_equal(got.decision_function(X[60:].astype(object)),
                                  want.decision_function(X[60:]))
    assert got.predict(X[60:]).dtype == np.float64  # the converted target's
    assert got.score(X[60:], Y[60:].astype(object)) == want.score(X[60:], Y[60:])
    for bad, exc, words in [
            ({"foo": "bar"}, TypeError, "^X is an object array .*argument must be a string "
                                        "or a real number, not 'dict'"),
            ("0.5", TypeError, "^X is an object array holding a string"),
            (1 + 2j, TypeError, "^X is an object array .*not 'complex'"),
            (None, ValueError, "^X contains NaN")]:  # None is NaN, as in check_array
        Xb = X[:60].astype(object)
        Xb[0, 0] = bad
        with pytest.raises(exc, match=words):
            clone(est).fit(Xb, Y[:60])
        with pytest.raises(exc, match=words):
            want.predict(Xb)
    Yb = Y[:60].astype(object)
    Yb[0, 0] = "1"
    with pytest.raises(TypeError, match="^Y is an object array holding a string"):
        clone(est).fit(X[:60], Yb)
