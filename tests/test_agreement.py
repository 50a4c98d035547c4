"""Where fastrank's metrics equal scikit-learn's: every scikit-learn row of the agreement
table in the documentation (docs/agreement.rst), checked on real beliefs with many ties (kNN
vote shares on the embedded yeast data) and on random tied data with documents without
relevant labels and documents with every label relevant, with and without sample_weight.

The MULAN rows are checked against a NumPy transcription of the ranking MULAN builds from
the beliefs (a stable ascending sort, ranks counted from the bottom), so the recipe the
table gives for reproducing MULAN's numbers is tested too.
"""
import numpy as np
import pytest
import sklearn.metrics as skm
from sklearn.exceptions import UndefinedMetricWarning

import fastrank
from fastrank import metrics as M
from fastrank.datasets import load

GROUP_TIES = ("dense", "standard", "modified")


@pytest.fixture(scope="module")
def yeast():
    """kNN beliefs (k = 10 vote shares: about 5 distinct values among 14 labels per row)."""
    ds = load("yeast")
    train, test = slice(0, 1500), slice(1500, None)
    S = fastrank.KNN(k=10).fit(ds.X[train], ds.Y[train]).decision_function(ds.X[test])
    Y = np.asarray(ds.Y[test], dtype=np.uint8)
    assert np.mean([np.unique(row).size for row in S]) < 8  # really tied
    return Y, S


def tied(seed, n=300, q=9, levels=4):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    S = rng.integers(0, levels, (n, q)) / levels
    Y[0], Y[1] = 0, 1   # a document without relevant labels, one with all relevant
    return Y, S


def weights(n, seed):
    w = np.random.default_rng(seed).random(n) * 3
    w[::11] = 0.0
    return w


def problems():
    """(data set, seed, weighted) for every data set, unweighted and weighted."""
    return [pytest.param((kind, seed, weighted), id=f"{kind}{seed}-{'w' if weighted else 'u'}")
            for kind, seed in (("yeast", 0), ("tied", 1), ("tied", 2))
            for weighted in (False, True)]


@pytest.fixture(params=problems())
def problem(request, yeast):
    kind, seed, weighted = request.param
    Y, S = yeast if kind == "yeast" else tied(seed)
    w = weights(Y.shape[0], seed) if weighted else None
    return Y, S, w


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def has_relevant(Y):
    return Y.any(axis=1)


# ---- ranking metrics ---------------------------------------------------------------------

def test_coverage_is_sklearn_coverage_error_minus_one(problem):
    Y, S, w = problem
    keep = has_relevant(Y)  # scikit-learn scores a document without relevant labels 0, not 1
    wk = None if w is None else w[keep]
    close(M.coverage(Y[keep], S[keep], ties="modified", sample_weight=wk),
          skm.coverage_error(Y[keep], S[keep], sample_weight=wk) - 1)


def test_coverage_differs_by_one_over_n_per_document_without_relevant_labels():
    Y, S = tied(3)
    n_empty = int((~has_relevant(Y)).sum())
    assert n_empty >= 1
    close(M.coverage(Y, S), skm.coverage_error(Y, S) - 1 + n_empty / Y.shape[0])


@pytest.mark.parametrize("ties", GROUP_TIES)
def test_ranking_loss_is_sklearn_label_ranking_loss(problem, ties):
    Y, S, w = problem
    close(M.ranking_loss(Y, S, ties=ties, sample_weight=w),
          skm.label_ranking_loss(Y, S, sample_weight=w))


def test_label_average_precision_is_sklearn_lrap(problem):
    Y, S, w = problem
    close(M.average_precision(Y, S, per="label", ties="modified", sample_weight=w),
          skm.label_ranking_average_precision_score(Y, S, sample_weight=w))


def test_label_average_precision_is_sklearn_samples_average_precision(problem):
    Y, S, w = problem
    keep = has_relevant(Y)  # scikit-learn's average_precision_score needs a positive per row
    wk = None if w is None else w[keep]
    close(M.average_precision(Y[keep], S[keep], per="label", ties="modified", sample_weight=wk),
          skm.average_precision_score(Y[keep], S[keep], average="samples", sample_weight=wk))


def test_position_average_precision_differs_from_sklearn_under_ties(yeast):
    Y, S = yeast
    assert M.average_precision(Y, S, per="position") != \
        pytest.approx(skm.label_ranking_average_precision_score(Y, S))


def test_other_ranking_types_differ_from_sklearn_under_ties(yeast):
    Y, S = yeast
    ref = skm.coverage_error(Y, S) - 1
    for ties in ("dense", "standard", "ordinal", "expected"):
        assert M.coverage(Y, S, ties=ties) < ref
    assert M.ranking_loss(Y, S, ties="expected") < skm.label_ranking_loss(Y, S)


# ---- ROC ---------------------------------------------------------------------------------

@pytest.mark.parametrize("average", [None, "macro", "micro", "samples"])
def test_auc_is_sklearn_roc_auc_score(problem, average):
    Y, S, w = problem
    both = Y.any(axis=0) & ~Y.all(axis=0)   # scikit-learn's NaN on a one-class label
    rows = Y[:, both].any(axis=1) & ~Y[:, both].all(axis=1)
    if average == "samples":  # ... and, for "samples", on a one-class document
        Y, S, w = Y[rows], S[rows], None if w is None else w[rows]
    Yb, Sb = Y[:, both], S[:, both]
    close(M.auc(Yb, Sb, average=average, sample_weight=w),
          skm.roc_auc_score(Yb, Sb, average=average, sample_weight=w))


def test_one_class_labels_auc_nan_in_both_left_out_of_the_mean_here():
    Y = np.array([[1, 0, 1], [1, 1, 0], [1, 0, 0], [1, 1, 1]])   # label 0: one class only
    S = np.array([[.2, .3, .5], [.5, .1, .5], [.4, .9, .1], [.3, .3, .3]])
    with pytest.warns(UndefinedMetricWarning, match="one class"):
        per_label = skm.roc_auc_score(Y, S, average=None)
    assert np.isnan(per_label[0])
    close(M.auc(Y, S, average=None), per_label)
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(skm.roc_auc_score(Y, S, average="macro"))
    assert M.auc(Y, S) == pytest.approx(np.mean(per_label[1:]))
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(skm.roc_auc_score(Y[:, 0], S[:, 0]))
    with pytest.raises(ValueError, match="both classes"):
        M.auc(Y[:, 0], S[:, 0])


def test_roc_curve_is_sklearn_without_drop_intermediate(problem):
    Y, S, w = problem
    j = int(np.argmax(Y.sum(axis=0) * (~Y.all(axis=0))))
    fpr, tpr, thr = M.roc_curve(Y[:, j], S[:, j], sample_weight=w)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(Y[:, j], S[:, j], sample_weight=w,
                                           drop_intermediate=False)
    np.testing.assert_array_equal(thr, sk_thr)
    close(fpr, sk_fpr)
    close(tpr, sk_tpr)


# ---- set metrics -------------------------------------------------------------------------

@pytest.fixture
def predicted(problem):
    Y, S, w = problem
    P = (S >= 0.5).astype(np.uint8)
    P[2] = 0   # an empty prediction
    return Y, P, w


def test_hamming_loss(predicted):
    Y, P, w = predicted
    close(M.hamming_loss(Y, P, sample_weight=w), skm.hamming_loss(Y, P, sample_weight=w))


def test_exact_match_and_zero_one_loss(predicted):
    Y, P, w = predicted
    P[3] = Y[3]   # at least one exact match
    close(M.exact_match(Y, P, sample_weight=w), skm.accuracy_score(Y, P, sample_weight=w))
    close(M.zero_one_loss(Y, P, sample_weight=w), skm.zero_one_loss(Y, P, sample_weight=w))


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
def test_accuracy_is_samples_jaccard(predicted, zero_division):
    Y, P, w = predicted
    close(M.accuracy(Y, P, zero_division=zero_division, sample_weight=w),
          skm.jaccard_score(Y, P, average="samples", zero_division=zero_division,
                            sample_weight=w))


SK_AVERAGE = {("macro", "category"): "macro", ("micro", "category"): "micro",
              ("micro", "document"): "micro", ("macro", "document"): "samples"}


@pytest.mark.parametrize("average, orient", list(SK_AVERAGE))
@pytest.mark.parametrize("zero_division", [0.0, 1.0])
def test_precision_recall_f(predicted, average, orient, zero_division):
    Y, P, w = predicted
    Y[:, -1] = 0   # a label never relevant, so its recall is 0/0
    P[:, -2] = 0   # a label never predicted, so its precision is 0/0
    sk = dict(average=SK_AVERAGE[average, orient], zero_division=zero_division,
              sample_weight=w)
    ours = dict(average=average, orient=orient, zero_division=zero_division, sample_weight=w)
    close(M.precision(Y, P, **ours), skm.precision_score(Y, P, **sk))
    close(M.recall(Y, P, **ours), skm.recall_score(Y, P, **sk))
    close(M.f1(Y, P, **ours), skm.f1_score(Y, P, **sk))
    close(M.fbeta(Y, P, beta=2.0, **ours), skm.fbeta_score(Y, P, beta=2.0, **sk))


@pytest.mark.parametrize("weighted", [False, True])
def test_contingency_is_multilabel_confusion_matrix(predicted, weighted):
    Y, P, _ = predicted
    w = np.random.default_rng(3).uniform(0, 2, Y.shape[0]) if weighted else None
    for orient, samplewise in (("category", False), ("document", True)):
        c = M.contingency(Y, P, orient=orient, sample_weight=w)
        mcm = skm.multilabel_confusion_matrix(Y, P, samplewise=samplewise, sample_weight=w)
        # (scikit-learn derives tn by subtraction: a residue of a few ulp where it is 0)
        np.testing.assert_allclose(np.stack([c.tn, c.fp, c.fn, c.tp], axis=1),
                                   mcm.reshape(-1, 4), rtol=1e-12, atol=1e-12)
        # a direct reference: every document adds its weight to the cells it falls in
        ref = np.zeros((Y.shape[0 if samplewise else 1], 4))
        for j in range(Y.shape[0]):
            for c_ in range(Y.shape[1]):
                cell = 2 * int(Y[j, c_]) + int(P[j, c_])   # tn, fp, fn, tp
                ref[j if samplewise else c_, cell] += 1.0 if w is None else w[j]
        np.testing.assert_allclose(np.stack([c.tn, c.fp, c.fn, c.tp], axis=1), ref,
                                   rtol=1e-12, atol=1e-12)


# ---- MULAN's ranking ---------------------------------------------------------------------

def mulan_ranks(S):
    """MULAN's ranking of each row: labels sorted by ascending belief with a stable sort,
    the i-th of the q sorted labels getting rank q - i (so among tied labels the one with
    the larger index ranks first)."""
    q = S.shape[1]
    order = np.argsort(S, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, q - np.arange(q)[None, :], axis=1)
    return ranks


def mulan_reference(Y, R):
    """MULAN's OneError, Coverage, RankingLoss and AveragePrecision read off integer ranks:
    plain loops over each document, documents skipped where MULAN skips them."""
    one_error, coverage, rloss, avgp = [], [], [], []
    for y, r in zip(Y.astype(bool), R):
        rel, irr = np.flatnonzero(y), np.flatnonzero(~y)
        one_error.append(0.0 if y[np.argmin(r)] else 1.0)
        coverage.append(max((r[a] for a in rel), default=1) - 1)
        if rel.size and irr.size:
            rloss.append(np.mean([r[a] > r[b] for a in rel for b in irr]))
        if rel.size:
            avgp.append(np.mean([np.sum(r[rel] <= r[a]) / r[a] for a in rel]))
    return {"one_error": np.mean(one_error), "coverage": np.mean(coverage),
            "ranking_loss": np.mean(rloss), "average_precision": np.mean(avgp)}


@pytest.mark.parametrize("seed", [4, 5])
def test_mulan_recipe(seed):
    """fastrank on the beliefs -rank (MULAN's tie-free ranking) gives MULAN's values; for
    ranking loss and average precision over the documents MULAN averages over."""
    Y, S = tied(seed, n=120, q=7)
    ref = mulan_reference(Y, mulan_ranks(S))
    T = -mulan_ranks(S).astype(float)    # no ties left: every ranking type agrees
    assert M.one_error(Y, T) == pytest.approx(ref["one_error"])
    assert M.coverage(Y, T) == pytest.approx(ref["coverage"])
    mixed = Y.any(axis=1) & ~Y.all(axis=1)
    assert M.ranking_loss(Y[mixed], T[mixed]) == pytest.approx(ref["ranking_loss"])
    some = Y.any(axis=1)
    assert M.average_precision(Y[some], T[some], per="label") == \
        pytest.approx(ref["average_precision"])
    # and the tie-breaking is the "stable" order of the label-reversed matrix
    np.testing.assert_array_equal(mulan_ranks(S),
                                  fastrank.rank(S[:, ::-1], method="stable")[:, ::-1])


# ---- evaluate: the same counts, from its own kernel --------------------------------------

@pytest.mark.parametrize("ties", ["ordinal", "modified"])
def test_evaluate_set_metrics_are_sklearns_on_the_cutoff_prediction(problem, ties):
    """evaluate's per-label counts are weighted like scikit-learn's (macro by category)."""
    Y, S, w = problem
    res = M.evaluate(Y, S, ties=(ties,), sample_weight=w)[ties]
    P = M.cutoff(S, Y, ties=ties)
    for name, sk_average in (("macro_c", "macro"), ("micro_c", "micro"),
                             ("macro_d", "samples")):
        sk = dict(average=sk_average, zero_division=0.0, sample_weight=w)
        close(res["precision_" + name], skm.precision_score(Y, P, **sk))
        close(res["recall_" + name], skm.recall_score(Y, P, **sk))
        close(res["f1_" + name], skm.f1_score(Y, P, **sk))
    close(res["hamming_loss"], skm.hamming_loss(Y, P, sample_weight=w))
    close(res["exact_match"], skm.accuracy_score(Y, P, sample_weight=w))
