"""The tie study: statistics logic on hand-built fold values, end-to-end runs on the embedded
yeast data, real Mulan data and raw Reuters text, determinism and persistence."""
import json

import numpy as np
import pytest
import scipy.stats as ss

import fastrank
from fastrank.datasets import Dataset, load_arff, load_text
from fastrank.metrics import METRIC_KEYS
from fastrank.report import terminal_summary
from fastrank.study import STUDY_TIES, StudyResult, run_study, tie_statistics

SMALL = {"vgram": {"n_neurons": 16, "n_synapses": 64},
         "vgramcor": {"n_neurons": 16, "n_synapses": 64}}


def hand_result(per_type, classifiers=("knn",), metric_values=None):
    """A StudyResult whose every metric has the fold values ``per_type[ties]``."""
    folds = len(next(iter(per_type.values())))
    values = {}
    for c in classifiers:
        arr = np.empty((4, len(METRIC_KEYS), folds))
        for t, ties in enumerate(STUDY_TIES):
            arr[t] = np.asarray(per_type[ties], dtype=float)
        if metric_values:
            for m, by_type in metric_values.items():
                for t, ties in enumerate(STUDY_TIES):
                    arr[t, METRIC_KEYS.index(m)] = by_type[ties]
        values[c] = arr
    return StudyResult(dataset={"name": "hand"}, classifiers=tuple(classifiers),
                       ties=STUDY_TIES, folds=folds, random_state=0, cutoff="perfect",
                       params={c: {} for c in classifiers}, values=values,
                       tie_stats={c: {"top": [0.0], "boundary": [0.0], "group_size": [1.0]}
                                  for c in classifiers})


BASE = [0.50, 0.52, 0.49, 0.55, 0.51]
LOWER = [v - d for v, d in zip(BASE, [0.10, 0.12, 0.09, 0.11, 0.10])]


def test_t_statistic_is_the_thesis_equation_3_2():
    r = hand_result({"ordinal": LOWER, "dense": BASE, "standard": BASE, "modified": BASE})
    d = np.subtract(LOWER, BASE)
    expected_t = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    res = r.ttest("knn", "one_error", "dense")
    assert res.statistic == pytest.approx(expected_t)
    assert res.pvalue == pytest.approx(ss.ttest_rel(LOWER, BASE).pvalue)
    assert res.df == 4


def test_partial_orders_and_recommendation():
    r = hand_result({"ordinal": LOWER, "dense": BASE, "standard": BASE, "modified": BASE},
                    metric_values={
                        # coverage: D and P below ordinal, M above it (the thesis' pattern)
                        "coverage": {"ordinal": BASE, "dense": LOWER, "standard": LOWER,
                                     "modified": [v + 0.2 for v in BASE]},
                        # r_precision: identical under every type
                        "r_precision": {t: BASE for t in STUDY_TIES},
                    })
    assert r.partial_order("knn", "one_error") == "O ≺ D|S|M"
    assert r.partial_order("knn", "coverage") == "O ≻ D|S; O ≺ M"
    assert r.partial_order("knn", "r_precision") == "O ≡ D|S|M"
    assert r.recommendation("one_error") == "D/S/M"
    assert r.recommendation("coverage") == "M"  # the only type not favouring ties
    assert r.recommendation("r_precision") == "O/D/S/M"
    assert r.relation("knn", "average_precision", "dense") == "≺"


def test_not_significant_is_equivalent():
    noisy = [b + e for b, e in zip(BASE, [0.05, -0.04, 0.03, -0.06, 0.01])]
    r = hand_result({"ordinal": noisy, "dense": BASE, "standard": BASE, "modified": BASE})
    assert r.partial_order("knn", "hamming_loss") == "O ≡ D|S|M"
    assert r.recommendation("hamming_loss") == "O/D/S/M"


def test_tie_statistics_by_hand():
    y = np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0]])
    s = np.array([[0.9, 0.9, 0.1, 0.5],    # top group {0,1}; |C|=2: group at pos 2 is {3}
                  [0.2, 0.7, 0.2, 0.2],    # top group {1}; |C|=1: fine
                  [0.3, 0.3, 0.3, 0.3]])   # one group of 4; no relevant label
    stats = tie_statistics(y, s)
    assert stats["top"] == pytest.approx(2 / 3)          # rows 0 and 2
    # row 0: position 2 (1-based) is inside the top group {0,1}, which ends at 2 -> no;
    # row 1: position 1 holds label 1 alone -> no. Rows with relevant labels: 0 and 1.
    assert stats["boundary"] == 0.0
    assert stats["group_size"] == pytest.approx(np.mean([4 / 3, 4 / 2, 4 / 1]))
    s2 = s.copy()
    s2[0] = [0.9, 0.5, 0.5, 0.5]  # |C|=2: position 2 is in group {1,2,3} ending at 4
    assert tie_statistics(y, s2)["boundary"] == pytest.approx(1 / 2)


@pytest.fixture(scope="module")
def yeast_study():
    return run_study("yeast", folds=5, params=SMALL, random_state=3)


def test_yeast_study_structure(yeast_study):
    r = yeast_study
    assert r.classifiers == ("knn", "mlknn", "vgram", "vgramcor")
    assert r.dataset["name"] == "yeast" and r.dataset["documents"] == 2417
    k_cov = METRIC_KEYS.index("coverage")
    for c in r.classifiers:
        v = r.values[c]
        assert v.shape == (4, 19, 5) and np.isfinite(v).all()
        o, d, p, m = (STUDY_TIES.index(t) for t in ("ordinal", "dense", "standard", "modified"))
        # dense, standard and modified agree on every metric but coverage
        others = [k for k in range(19) if k != k_cov]
        assert np.array_equal(v[d, others], v[p, others])
        assert np.array_equal(v[d, others], v[m, others])
        # coverage: dense <= standard <= ordinal <= modified (per document, hence per fold)
        assert (v[d, k_cov] <= v[p, k_cov]).all() and (v[p, k_cov] <= v[o, k_cov]).all()
        assert (v[o, k_cov] <= v[m, k_cov]).all()


def test_thesis_findings_on_ranking_loss_and_r_precision(yeast_study):
    """R-precision is unaffected by the ranking type (O ≡ D|S|M, as the thesis found) for
    kNN and ML-kNN; the tiny VG-RAM networks used here to keep the test fast (16 neurons:
    beliefs in steps of 1/16, ties across |C_j| in ~60 % of documents) do show an effect —
    with the thesis' 1024 neurons the full yeast study finds O ≡ D|S|M for all four.
    Ranking loss: the thesis computed it from f for every type (its §4.1.3 says so), which
    is what dense/standard/modified give (tied pair = error, eq. 4.6); the ordinal ranking
    breaks ties at random under ordinal, which can only lower it. So D/S/M equal eq. 4.6
    and O <= them."""
    r = yeast_study
    k_rl = METRIC_KEYS.index("ranking_loss")
    for c in ("knn", "mlknn"):
        assert r.partial_order(c, "r_precision") == "O ≡ D|S|M"
    for c in r.classifiers:
        v = r.values[c]
        assert (v[0, k_rl] <= v[3, k_rl] + 1e-12).all()
    # dense/standard/modified ranking loss is eq. 4.6 on f: scikit-learn's label_ranking_loss
    # counts tied pairs as half errors, so compare with a direct count instead
    from fastrank.metrics import ranking_loss
    rng = np.random.default_rng(0)
    y = (rng.random((50, 8)) < 0.3).astype(np.uint8)
    s = np.round(rng.random((50, 8)) * 3) / 3
    direct = []
    for yi, si in zip(y, s):
        rel, irr = si[yi == 1], si[yi == 0]
        direct.append(0.0 if rel.size in (0, 8) else np.mean(rel[:, None] <= irr[None, :]))
    for t in ("dense", "standard", "modified"):
        assert ranking_loss(y, s, ties=t) == pytest.approx(np.mean(direct))


def test_knn_with_all_neighbours_ties_at_the_top(yeast_study):
    """The thesis' kNN (k = all) ties at the top; then one-error is lower under ordinal."""
    r = yeast_study
    assert np.mean(r.tie_stats["knn"]["top"]) > 0.05
    assert r.partial_order("knn", "one_error") == "O ≺ D|S|M"


def test_json_round_trip(yeast_study, tmp_path):
    text = yeast_study.to_json()
    back = StudyResult.from_json(text)
    assert back.to_json() == text
    for c in yeast_study.classifiers:
        assert np.array_equal(back.values[c], yeast_study.values[c])
    assert back.partial_order("vgram", "coverage") == yeast_study.partial_order("vgram",
                                                                                "coverage")
    assert "fit" not in text  # timings are measurements, kept out of results.json
    with pytest.raises(ValueError, match="not a fastrank study result"):
        StudyResult.from_json(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="corrupt"):
        StudyResult.from_json(text[: len(text) // 2])


@pytest.mark.parametrize("damage, match", [
    (lambda d: d["tie_stats"].pop("knn"), "no entry tie_stats/knn"),
    (lambda d: d["tie_stats"]["knn"].pop("top"), "tie_stats/knn is not a dict of top"),
    (lambda d: d["params"].pop("knn"), "no entry params/knn"),
    (lambda d: d["params"].__setitem__("knn", 5), "params/knn is not a dict"),
    (lambda d: d["values"]["knn"]["ordinal"].__setitem__("coverage", ["1", "2"]),
     "values/knn/ordinal/coverage is not 2 numbers"),
    (lambda d: d["tie_stats"]["knn"].__setitem__("top", [True, False]),
     "tie_stats/knn/top is not 2 numbers"),
    (lambda d: d.__setitem__("folds", 1), "folds is not an int >= 2"),
])
def test_incomplete_results_are_refused_naming_the_entry(small_yeast, damage, match):
    """Every entry the outputs and a resumed benchmark read is checked on loading."""
    d = json.loads(run_study(small_yeast, ["knn"], folds=2, ties=("ordinal",)).to_json())
    damage(d)
    with pytest.raises(ValueError, match=match):
        StudyResult.from_dict(d)


def test_byte_identical_on_one_and_two_threads():
    kwargs = dict(folds=3, params=SMALL, random_state=11)
    one = run_study("yeast", n_jobs=1, **kwargs).to_json()
    two = run_study("yeast", n_jobs=2, **kwargs).to_json()
    assert one == two


def test_study_uses_the_given_seed():
    a = run_study("yeast", classifiers=("knn",), folds=3, random_state=1)
    b = run_study("yeast", classifiers=("knn",), folds=3, random_state=2)
    assert not np.array_equal(a.values["knn"], b.values["knn"])


@pytest.mark.parametrize("kwargs, match", [
    ({"classifiers": ("svm",)}, "unknown classifier='svm'"),
    ({"ties": ("ordinal", "first")}, "unknown ranking type='first'"),
    ({"folds": 1}, "folds must be an int >= 2"),
    ({"folds": 10_000}, "exceeds the 2417 documents"),
    ({"params": {"mlknn": {"k": 5}}, "classifiers": ("knn",)}, "not in the study"),
    ({"classifiers": ("knn", "knn")}, "named twice"),
    ({"cutoff": "best"}, "unknown cutoff='best'"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_study("yeast", **kwargs)


def test_numpy_integers_and_a_single_ranking_type_are_taken(small_yeast):
    """NumPy integers for the seed, the folds, the cutoff or a parameter run the study
    results.json records with Python ints (they once ran it all, then could not be
    saved); a single ranking type may be a string."""
    got = run_study(small_yeast, ["mlknn"], folds=np.int64(2), random_state=np.int64(3),
                    cutoff=np.int64(3), params={"mlknn": {"k": np.int32(5)}}, ties="ordinal")
    want = run_study(small_yeast, ["mlknn"], folds=2, random_state=3, cutoff=3,
                     params={"mlknn": {"k": 5}}, ties=("ordinal",))
    assert got.to_json() == want.to_json()


def test_unknown_dataset_name():
    # neither embedded nor a file: fastrank.datasets.fetch refuses a name it does not know
    with pytest.raises(ValueError, match="unknown .*data set 'nope'"):
        run_study("nope")


@pytest.mark.shared_data
def test_real_mulan_medical(shared_data):
    ds = load_arff(shared_data / "mulan/medical/medical.arff",
                   labels=shared_data / "mulan/medical/medical.xml")
    r = run_study(ds, classifiers=("knn", "mlknn"), folds=5, random_state=0)
    k_cov = METRIC_KEYS.index("coverage")
    for c in r.classifiers:
        v = r.values[c]
        others = [k for k in range(19) if k != k_cov]
        assert np.array_equal(v[1, others], v[2, others]) and np.array_equal(v[1, others],
                                                                             v[3, others])
        assert (v[1, k_cov] <= v[2, k_cov]).all() and (v[2, k_cov] <= v[0, k_cov]).all() \
            and (v[0, k_cov] <= v[3, k_cov]).all()
    # kNN with k = all ties at the top whenever the nearest neighbour carries several labels
    # (about a quarter of medical's documents); then the thesis' findings reappear:
    assert np.mean(r.tie_stats["knn"]["top"]) > 0.1
    assert r.partial_order("knn", "one_error") == "O ≺ D|S|M"
    assert r.partial_order("knn", "coverage") == "O ≻ D|S; O ≺ M"
    for c in r.classifiers:
        assert r.partial_order(c, "r_precision") == "O ≡ D|S|M"
    # ML-kNN's posteriors hardly ever tie: the ranking type cannot matter
    assert np.mean(r.tie_stats["mlknn"]["top"]) == 0.0
    assert r.partial_order("mlknn", "one_error") == "O ≡ D|S|M"


@pytest.mark.shared_data
def test_raw_reuters_text_is_indexed_per_fold(shared_data):
    full = load_text(shared_data / "reuters/reuters21578-modapte-test.json")
    assert full.X is None and len(full.texts) == 3019
    ds = full.take(np.arange(800))
    r = run_study(ds, classifiers=("knn", "mlknn"), folds=4, random_state=0)
    for c in r.classifiers:
        assert np.isfinite(r.values[c]).all()
        assert ((0 <= r.values[c][:, METRIC_KEYS.index("ranking_loss")]) &
                (r.values[c][:, METRIC_KEYS.index("ranking_loss")] <= 1)).all()
    # the same features, indexed once on all documents, would leak the test folds' terms
    # into the lexicon: the study's fold-wise indexing gives different beliefs
    from fastrank.text import TfidfIndexer
    leaked = Dataset(TfidfIndexer().fit_transform(ds.texts), ds.Y, name="leaked")
    r_leaked = run_study(leaked, classifiers=("knn",), folds=4, random_state=0)
    assert not np.array_equal(r.values["knn"], r_leaked.values["knn"])


def test_top_level_export():
    assert fastrank.run_study is run_study


def test_expected_as_a_fifth_ranking_type():
    four = run_study("yeast", classifiers=("knn",), folds=3, random_state=4)
    five = run_study("yeast", classifiers=("knn",), folds=3, random_state=4,
                     ties=STUDY_TIES + ("expected",))
    # adding "expected" changes nothing else, and Table 5.3 stays judged on D/S/M
    assert np.array_equal(five.values["knn"][:4], four.values["knn"])
    assert [five.recommendation(m) for m in METRIC_KEYS] == \
        [four.recommendation(m) for m in METRIC_KEYS]
    assert five.partial_order("knn", "one_error").endswith("; O ≡ E")
    # every expected value is exact: no standard error, nothing marked as estimated
    e = five.ties.index("expected")
    assert np.isnan(five.stderr["knn"][e]).all()
    assert not any(map(five.estimated, METRIC_KEYS))
    assert "stderr" not in five.to_dict() or not five.to_dict()["stderr"]
    assert "~" not in terminal_summary(five)
    back = StudyResult.from_json(five.to_json())
    assert back.to_json() == five.to_json()


def test_a_loaded_result_with_estimates_keeps_and_marks_them():
    """A result file whose expected macro precision^c / F1^c carry standard errors
    (Monte-Carlo estimates) keeps them through JSON and marks those values with ~."""
    five = run_study("yeast", classifiers=("knn",), folds=2, random_state=4,
                     ties=STUDY_TIES + ("expected",))
    e, m = five.ties.index("expected"), five.metrics.index("f1_macro_c")
    five.stderr["knn"][e, m] = [0.001, 0.002]
    back = StudyResult.from_json(five.to_json())
    assert back.estimated("f1_macro_c") and not back.estimated("precision_macro_c")
    np.testing.assert_array_equal(back.stderr["knn"][e, m], [0.001, 0.002])
    assert "~ Monte-Carlo estimate" in terminal_summary(back)


def test_calibration_picks_the_lowest_ranking_loss():
    """melotti2009 §3.5: the grid point with the lowest ranking loss on a 9:1 split of the
    first training fold is used for the whole study; checked by recomputing one point."""
    from fastrank import MLkNN
    from fastrank.model_selection import KFold
    from fastrank.metrics import ranking_loss
    r = run_study("yeast", classifiers=("mlknn",), folds=3, calibrate=True, random_state=2)
    tried = r.calibration["mlknn"]
    best = min(tried, key=lambda t: t["ranking_loss"])
    assert r.params["mlknn"]["k"] == best["params"]["k"]
    n_fit = len(next(KFold(3, shuffle=True, random_state=2).split(np.arange(2417)))[0])
    n_fit -= n_fit // 10
    ks = [t["params"]["k"] for t in tried]
    assert 5000 not in ks and max(ks) < n_fit and 2 in ks
    # the same split, recomputed independently of the study code
    ds = fastrank.datasets.load("yeast")
    train = next(KFold(3, shuffle=True, random_state=2).split(np.arange(2417)))[0]
    shuffled = np.random.default_rng(2).permutation(train)
    n_val = len(shuffled) // 10
    fit_idx, val_idx = np.sort(shuffled[n_val:]), np.sort(shuffled[:n_val])
    model = MLkNN(k=ks[0]).fit(ds.X[fit_idx], ds.Y[fit_idx])
    loss = ranking_loss(ds.Y[val_idx], model.decision_function(ds.X[val_idx]), ties="modified")
    assert tried[0]["ranking_loss"] == pytest.approx(loss)
    assert json.loads(r.to_json())["calibration"]["mlknn"] == tried


def test_random_state_must_be_an_int_and_tie_statistics_checks_input():
    with pytest.raises(TypeError, match="random_state must be an int"):
        run_study("yeast", random_state=None)
    with pytest.raises(ValueError, match="binary"):
        tie_statistics(np.array([[2, 0, 0, 0]]), np.zeros((1, 4)))
    with pytest.raises(ValueError, match="labels"):
        tie_statistics(np.zeros((1, 3)), np.zeros((1, 4)))


# ---- own estimators -----------------------------------------------------------------------

def _manual_fold_values(dataset, make, folds, seed, ties=STUDY_TIES):
    """An own estimator's fold values computed directly: the study's folds, a fresh
    estimator per fold, its decision_function (else predict_proba) evaluated with the
    fold's seed."""
    from fastrank.metrics import evaluate
    from fastrank.model_selection import KFold
    Y = dataset.Y.toarray() if hasattr(dataset.Y, "toarray") else np.asarray(dataset.Y)
    out = np.empty((len(ties), len(METRIC_KEYS), folds))
    splits = KFold(n_splits=folds, shuffle=True, random_state=seed).split(
        np.arange(dataset.n_documents))
    for f, (train, test) in enumerate(splits):
        model = make().fit(dataset.X[train], Y[train])
        scores = (model.decision_function(dataset.X[test]) if hasattr(model, "decision_function")
                  else model.predict_proba(dataset.X[test]))
        out[:, :, f] = evaluate(Y[test], scores, ties=ties, random_state=seed + f).values
    return out


@pytest.fixture(scope="module")
def small_yeast():
    y = fastrank.datasets.load("yeast")
    return y.take(np.arange(400), name="yeast400")


@pytest.mark.filterwarnings("ignore:Label not 13 is present")  # a rare label, absent here
def test_own_estimators_are_cloned_per_fold_and_shown_by_name(small_yeast):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def ovr():
        return OneVsRestClassifier(LogisticRegression(max_iter=500))

    def pipe():  # predict_proba only (no decision_function)
        return make_pipeline(StandardScaler(with_mean=False),
                             OneVsRestClassifier(KNeighborsClassifier(7)))

    given = [ovr(), pipe()]
    r = run_study(small_yeast, ["knn", ("OvR logistic", given[0]), ("scaled kNN", given[1])],
                  folds=3, random_state=4)
    assert r.classifiers == ("knn", "OvR logistic", "scaled kNN")
    np.testing.assert_array_equal(r.values["OvR logistic"],
                                  _manual_fold_values(small_yeast, ovr, 3, 4))
    np.testing.assert_array_equal(r.values["scaled kNN"],
                                  _manual_fold_values(small_yeast, pipe, 3, 4))
    assert not hasattr(given[0], "estimators_")  # the given estimator itself is not fitted
    assert r.params["OvR logistic"] == {
        "estimator": "OneVsRestClassifier(estimator=LogisticRegression(max_iter=500))"}
    back = StudyResult.from_json(r.to_json())
    assert back.to_json() == r.to_json()
    from fastrank.report import render_markdown
    md = render_markdown(r)
    assert "| OvR logistic |" in md and "scaled kNN: mean ± sd over folds" in md


class _NoBeliefs:
    def fit(self, X, Y):
        return self

    def get_params(self, deep=True):
        return {}


class _WrongShape(_NoBeliefs):
    def decision_function(self, X):
        return np.zeros((X.shape[0], 3))

    def __sklearn_clone__(self):
        return _WrongShape()


def test_own_estimator_errors(small_yeast):
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    ovr = OneVsRestClassifier(LogisticRegression())
    cases = [
        ([("a", ovr), ("a", ovr)], ValueError, "'a' named twice"),
        ([("kNN", ovr), "knn"], ValueError, "taken by a built-in"),
        ([("knn", ovr)], ValueError, "taken by a built-in"),
        (["knn", "kNN"], ValueError, "unknown classifier='kNN'"),
        ([("lin", LinearRegression())], TypeError, "neither decision_function nor "
                                                   "predict_proba"),
        ([("x", object())], TypeError, "not a scikit-learn estimator"),
        ([("", ovr)], TypeError, "non-empty str name"),
        ([("a", ovr, 1)], TypeError, "built-in name .* or a \\(display_name, estimator\\)"),
        (("a", ovr), TypeError, "wrap a single pair in a list"),
        ("knn", TypeError, "sequence of names"),
        ([], ValueError, "no classifier"),
    ]
    for classifiers, exc, match in cases:
        with pytest.raises(exc, match=match):
            run_study(small_yeast, classifiers, folds=2)
    with pytest.raises(ValueError, match="set them on the estimator"):
        run_study(small_yeast, [("a", ovr)], folds=2, params={"a": {"C": 2}})


class _FailingFit(_NoBeliefs):
    def fit(self, X, Y):
        raise RuntimeError("no\nsuch luck")

    def predict_proba(self, X):
        return np.zeros((X.shape[0], 14))

    def __sklearn_clone__(self):
        return _FailingFit()


class _ListWithoutClasses(_NoBeliefs):
    def predict_proba(self, X):
        return [np.full((X.shape[0], 2), 0.5) for _ in range(14)]

    def __sklearn_clone__(self):
        return _ListWithoutClasses()


class _ThreeClasses(_ListWithoutClasses):
    classes_ = [np.array([0, 1, 2])] * 14

    def predict_proba(self, X):
        return [np.full((X.shape[0], 3), 1 / 3) for _ in range(14)]

    def __sklearn_clone__(self):
        return _ThreeClasses()


@pytest.mark.parametrize("estimator, match", [
    (_WrongShape(), r"'bad': decision_function returned shape \(10, 3\), expected "
                    r"\(10, 14\)"),
    (_FailingFit(), r"'bad' failed its trial fit on \d+ training documents, before the "
                    r"study: RuntimeError: no such luck"),
    (_ListWithoutClasses(), "'bad': predict_proba returned per-label arrays but the "
                            "estimator has no classes_ per label"),
    (_ThreeClasses(), r"'bad': predict_proba of label 0 has shape \(10, 3\) for classes "
                      r"\[0, 1, 2\]"),
])
def test_an_estimator_without_usable_beliefs_is_refused_before_the_first_fold(
        small_yeast, estimator, match):
    """Checked by a trial fit before the study: no fold runs, the message is one line."""
    done = []
    with pytest.raises(ValueError, match=match) as caught:
        run_study(small_yeast, ["knn", ("bad", estimator)], folds=2, progress=done.append)
    assert done == [] and "\n" not in str(caught.value)


def _reference_beliefs(model, X):
    """Beliefs as the study documents them, written out: decision_function, else
    predict_proba; of scikit-learn's per-label list, each label's class-1 column found
    through the label's classes (MultiOutputClassifier: its per-label estimator's), zeros
    when class 1 is absent."""
    from sklearn.multioutput import MultiOutputClassifier
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    proba = model.predict_proba(X)
    if not isinstance(proba, list):
        return proba
    out = np.zeros((X.shape[0], len(proba)))
    for j, p in enumerate(proba):
        classes = (model.estimators_[j].classes_ if isinstance(model, MultiOutputClassifier)
                   else model.classes_[j])
        for k, c in enumerate(classes):
            if c == 1:
                out[:, j] = p[:, k]
    return out


def _reference_fold_values(dataset, make, folds, seed):
    from fastrank.metrics import evaluate
    from fastrank.model_selection import KFold
    out = np.empty((len(STUDY_TIES), len(METRIC_KEYS), folds))
    splits = KFold(n_splits=folds, shuffle=True, random_state=seed).split(
        np.arange(dataset.n_documents))
    for f, (train, test) in enumerate(splits):
        model = make().fit(dataset.X[train], dataset.Y[train])
        out[:, :, f] = evaluate(dataset.Y[test], _reference_beliefs(model, dataset.X[test]),
                                random_state=seed + f).values
    return out


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_scikit_learn_multi_output_estimators_run_to_the_end(small_yeast):
    """RandomForestClassifier, KNeighborsClassifier, ExtraTreesClassifier and
    MultiOutputClassifier return predict_proba as a list of per-label arrays."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.multioutput import MultiOutputClassifier
    from sklearn.neighbors import KNeighborsClassifier
    makers = {"forest": lambda: RandomForestClassifier(n_estimators=10, random_state=0),
              "neighbours": lambda: KNeighborsClassifier(7),
              "extra trees": lambda: ExtraTreesClassifier(n_estimators=10, random_state=0),
              "per-label logistic": lambda: MultiOutputClassifier(
                  LogisticRegression(max_iter=300))}
    # the rare label 13 left out: a logistic regression cannot fit a constant label
    data = Dataset(small_yeast.X, small_yeast.Y[:, :13], name="yeast400")
    done = []
    r = run_study(data, [(name, make()) for name, make in makers.items()], folds=3,
                  random_state=5, progress=done.append)
    assert len(done) == 4 * 3 and r.classifiers == tuple(makers)
    for name, make in makers.items():
        np.testing.assert_array_equal(r.values[name], _reference_fold_values(data, make, 3, 5))


def test_a_label_constant_in_a_training_fold_has_the_class_it_had(small_yeast):
    """A label whose training fold holds one class gives a one-column array: its beliefs
    are that column when the class is 1, zeros when it is 0."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.multioutput import MultiOutputClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from fastrank.model_selection import KFold
    Y = small_yeast.Y.copy()
    Y[:, 0] = 1
    Y[7, 0] = 0  # label 0 in every document but one; label 13 in one document only
    data = Dataset(small_yeast.X, Y, name="yeast400")
    trains = [train for train, _ in
              KFold(n_splits=3, shuffle=True, random_state=1).split(np.arange(400))]
    assert any(Y[t, 0].min() == 1 for t in trains) and any(Y[t, 13].max() == 0 for t in trains)
    makers = {"forest": lambda: RandomForestClassifier(n_estimators=5, random_state=0),
              "neighbours": lambda: KNeighborsClassifier(5),
              "extra trees": lambda: ExtraTreesClassifier(n_estimators=5, random_state=0),
              "per-label kNN": lambda: MultiOutputClassifier(KNeighborsClassifier(5))}
    r = run_study(data, [(name, make()) for name, make in makers.items()], folds=3,
                  random_state=1)
    for name, make in makers.items():
        np.testing.assert_array_equal(r.values[name], _reference_fold_values(data, make, 3, 1))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.DataConversionWarning")
def test_one_label_data_set_takes_the_class_1_column(small_yeast):
    """With one label scikit-learn's classifiers give predict_proba as one (n, n_classes)
    array, not a list: its class-1 column is the belief."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    data = Dataset(small_yeast.X, small_yeast.Y[:, 2:3], name="yeast400-label2")
    makers = {"forest": lambda: RandomForestClassifier(n_estimators=5, random_state=0),
              "neighbours": lambda: KNeighborsClassifier(5)}
    r = run_study(data, [(name, make()) for name, make in makers.items()], folds=3,
                  random_state=2)

    def reference(model, X):  # the column whose class is 1, found by hand
        return model.predict_proba(X)[:, [list(model.classes_).index(1)]]

    for name, make in makers.items():
        splits = fastrank.model_selection.KFold(n_splits=3, shuffle=True, random_state=2)
        for f, (train, test) in enumerate(splits.split(np.arange(400))):
            model = make().fit(data.X[train], data.Y[train].ravel())
            want = fastrank.metrics.evaluate(data.Y[test], reference(model, data.X[test]),
                                             random_state=2 + f).values
            np.testing.assert_array_equal(r.values[name][:, :, f], want)


def test_to_frame_is_tidy(small_yeast, monkeypatch):
    r = run_study(small_yeast, ["knn", "mlknn"], folds=2, ties=("ordinal", "modified"))
    frame = r.to_frame()
    assert list(frame.columns) == ["classifier", "ties", "metric", "fold", "value"]
    assert len(frame) == 2 * 2 * 19 * 2
    for row in frame.sample(25, random_state=0).itertuples():
        key = "knn" if row.classifier == "kNN" else "mlknn"
        assert row.value == r.fold_values(key, row.ties, row.metric)[row.fold]
    assert set(frame.classifier) == {"kNN", "ML-kNN"}
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="to_frame needs pandas"):
        r.to_frame()


def test_dataset_names_and_paths(monkeypatch, tmp_path):
    from fastrank.study import dataset_name, load_dataset
    import fastrank.datasets as ds
    from fastrank.datasets import _load
    assert dataset_name("yeast") == "yeast"
    assert dataset_name("/a/b/emotions.arff") == "emotions"
    assert dataset_name(str(tmp_path / "x.svm")) == "x"
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_dataset(str(tmp_path / "missing.arff"))
    asked = []
    monkeypatch.setattr(_load, "fetch", lambda name, data_home=None: asked.append(name) or
                        ds.load("yeast"))
    assert load_dataset("medical").n_documents == 2417 and asked == ["medical"]
    assert load_dataset("yeast") is not None and asked == ["medical"]


# ---- the classifiers' seeds -----------------------------------------------------------------

def _documented_seed(seed, name):
    """The seed the study documents for a built-in classifier with randomness."""
    ss_ = np.random.SeedSequence(seed, spawn_key=tuple(name.encode("utf-8")))
    return int(ss_.generate_state(1, dtype=np.uint32)[0])


def test_each_random_classifier_has_its_own_seed(small_yeast, monkeypatch):
    """VG-RAM WNN and VG-RAM WNN-COR are seeded from the fold's seed and their own names
    (in the study and in the calibration), never with the same seed."""
    from fastrank.study import _calibration, _plan, _tasks
    seeds = []
    real = _plan._make_classifier

    def noted(name, params, seed):
        model = real(name, params, seed)
        seeds.append((name, seed, getattr(model, "random_state", None)))
        return model

    monkeypatch.setattr(_tasks, "_make_classifier", noted)  # the folds' classifiers
    monkeypatch.setattr(_calibration, "_make_classifier", noted)  # the calibration's
    run_study(small_yeast, ("knn", "vgram", "vgramcor"), folds=3, random_state=7, params=SMALL,
              n_jobs=1)
    assert [s for s in seeds if s[0] == "knn"] == [("knn", 7 + f, None) for f in range(3)]
    for c in ("vgram", "vgramcor"):
        assert [s for s in seeds if s[0] == c] == [(c, 7 + f, _documented_seed(7 + f, c))
                                                   for f in range(3)]
    by_fold = {(c, seed): given for c, seed, given in seeds}
    assert all(by_fold["vgram", 7 + f] != by_fold["vgramcor", 7 + f] for f in range(3))
    seeds.clear()
    fastrank.study.calibrate_classifier(small_yeast, "vgram", SMALL["vgram"], np.arange(300),
                                        random_state=3,
                                        grid={"n_neurons": [8, 16], "n_synapses": [32]})
    assert seeds == [("vgram", 3, _documented_seed(3, "vgram"))] * 2


def test_a_classifier_s_results_do_not_depend_on_the_others(small_yeast):
    kwargs = dict(folds=3, random_state=2, params=SMALL, n_jobs=1)
    alone = {c: run_study(small_yeast, (c,), **{**kwargs, "params": {c: SMALL[c]}})
             for c in ("vgram", "vgramcor")}
    together = run_study(small_yeast, ("vgramcor", "knn", "vgram"), **kwargs)
    for c, result in alone.items():
        assert together.values[c].tobytes() == result.values[c].tobytes()
        assert together.tie_stats[c] == result.tie_stats[c]
