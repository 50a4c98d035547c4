"""Splitters (ml-concepts §4.5, melotti2009 §3.4, Sechidis et al. 2011): invariants,
determinism, scikit-learn equivalence where the definitions coincide."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrank import datasets
from fastrank.model_selection import (Bootstrap, Holdout, IterativeStratifiedKFold, KFold,
                                      LeaveOneOut, RepeatedSubsampling, bootstrap_632)


def _check_partition(splits, n, k):
    """Disjoint test folds covering every document once; train = complement of test."""
    assert len(splits) == k
    seen = np.zeros(n, dtype=int)
    for train, test in splits:
        assert train.dtype == test.dtype == np.int64
        assert np.all(np.diff(test) > 0) and np.all(np.diff(train) > 0)
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == n
        seen[test] += 1
    assert np.all(seen == 1)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.integers(2, 12), st.integers(0, 2**31), st.booleans())
def test_kfold_partition_and_sizes(n, k, seed, shuffle):
    if k > n:
        with pytest.raises(ValueError, match=f"n_splits={k} is larger than the {n} documents"):
            list(KFold(k, shuffle=shuffle, random_state=seed).split(np.zeros(n)))
        return
    cv = KFold(k, shuffle=shuffle, random_state=seed)
    splits = list(cv.split(np.zeros((n, 2))))
    _check_partition(splits, n, k)
    sizes = [t.size for _, t in splits]
    assert max(sizes) - min(sizes) <= 1 and cv.get_n_splits() == k
    again = list(cv.split(np.zeros((n, 2))))  # an int seed replays the same folds
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again))


def test_kfold_matches_sklearn_without_shuffle_and_shuffles_with_seed():
    from sklearn.model_selection import KFold as SKFold
    X = np.zeros((23, 1))
    ours = [t for _, t in KFold(5, shuffle=False).split(X)]
    theirs = [t for _, t in SKFold(5).split(X)]
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))
    a = [t for _, t in KFold(5, random_state=1).split(X)]
    b = [t for _, t in KFold(5, random_state=2).split(X)]
    assert not all(np.array_equal(u, v) for u, v in zip(a, b))
    rng = np.random.default_rng(0)
    cv = KFold(5, random_state=rng)  # a Generator continues its stream between calls
    first, second = [t for _, t in cv.split(X)], [t for _, t in cv.split(X)]
    assert not all(np.array_equal(u, v) for u, v in zip(first, second))


def test_splitters_work_as_sklearn_cv():
    from sklearn.dummy import DummyRegressor
    from sklearn.model_selection import cross_val_score
    X, y = np.arange(30.0).reshape(-1, 1), np.arange(30.0)
    for cv in (KFold(3, random_state=0), RepeatedSubsampling(4, random_state=0),
               Holdout(random_state=0), Bootstrap(5, random_state=0)):
        assert len(cross_val_score(DummyRegressor(), X, y, cv=cv)) == cv.get_n_splits()
    Y = (np.arange(60).reshape(30, 2) % 3 == 0).astype(int)
    assert len(cross_val_score(DummyRegressor(), X, Y, cv=IterativeStratifiedKFold(3, 0))) == 3


def _label_deviation(Y, splits):
    """Sechidis et al.'s LD-like measure: mean |fold proportion - overall proportion|."""
    p = Y.mean(axis=0)
    return np.mean([np.abs(Y[test].mean(axis=0) - p).mean() for _, test in splits])


def test_iterative_stratification_keeps_label_proportions_better_than_kfold():
    ds = datasets.load("yeast")
    n = ds.Y.shape[0]
    strat = [_label_deviation(ds.Y, list(IterativeStratifiedKFold(10, s).split(ds.X, ds.Y)))
             for s in range(5)]
    plain = [_label_deviation(ds.Y, list(KFold(10, random_state=s).split(ds.X)))
             for s in range(5)]
    assert max(strat) < min(plain) and np.mean(strat) < 0.5 * np.mean(plain)
    splits = list(IterativeStratifiedKFold(10, random_state=0).split(ds.X, ds.Y))
    _check_partition(splits, n, 10)
    sizes = [t.size for _, t in splits]
    assert max(sizes) - min(sizes) <= 0.1 * n / 10  # sizes near n/k (not exactly equal)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=6, max_size=80), st.integers(2, 6),
       st.integers(0, 1000))
def test_iterative_stratification_single_label_is_exact(labels, k, seed):
    """One label per document (or none): every label is spread as evenly as possible."""
    n = len(labels)  # >= 6 >= k
    Y = np.zeros((n, 5), dtype=np.uint8)
    for i, l in enumerate(labels):
        if l < 4:  # label 4 means "no label"
            Y[i, l] = 1
    splits = list(IterativeStratifiedKFold(k, random_state=seed).split(np.zeros(n), Y))
    _check_partition(splits, n, k)
    for j in range(4):
        per_fold = [int(Y[test, j].sum()) for _, test in splits]
        assert max(per_fold) - min(per_fold) <= 1, (j, per_fold)


def test_iterative_stratification_rarest_label_first_and_deterministic():
    # label 1 has exactly k documents: it is processed first, one document per fold
    Y = np.zeros((40, 2), dtype=np.uint8)
    Y[:30, 0] = 1
    Y[[3, 9, 17, 33], 1] = 1
    cv = IterativeStratifiedKFold(4, random_state=5)
    folds = cv.folds(Y)
    assert sorted(folds[[3, 9, 17, 33]]) == [0, 1, 2, 3]
    assert np.array_equal(folds, cv.folds(Y))
    assert np.bincount(folds).tolist() == [10, 10, 10, 10]
    with pytest.raises(ValueError, match="needs y"):
        list(cv.split(np.zeros(40)))
    with pytest.raises(ValueError, match="X has 41 documents but y has 40"):
        list(cv.split(np.zeros(41), Y))


def test_holdout_and_repeated_subsampling():
    X = np.zeros(30)
    (train, test), = Holdout(random_state=0).split(X)
    assert test.size == 10 and train.size == 20 and np.union1d(train, test).size == 30
    (train, test), = Holdout(test_size=0.25, shuffle=False).split(X)
    assert np.array_equal(test, np.arange(22, 30)) and np.array_equal(train, np.arange(22))
    splits = list(RepeatedSubsampling(n_repeats=7, test_size=4, random_state=3).split(X))
    assert len(splits) == 7 and all(t.size == 4 and tr.size == 26 for tr, t in splits)
    assert all(np.intersect1d(tr, t).size == 0 for tr, t in splits)
    assert len({t.tobytes() for _, t in splits}) > 1
    for bad in (0.0, 1.0, 30, 0, "a"):
        with pytest.raises(ValueError, match="test_size"):
            list(Holdout(test_size=bad).split(X))
    with pytest.raises(ValueError, match="n_repeats"):
        RepeatedSubsampling(0)


def test_leave_one_out_matches_sklearn():
    from sklearn.model_selection import LeaveOneOut as SKLOO
    X = np.zeros((7, 2))
    ours, theirs = list(LeaveOneOut().split(X)), list(SKLOO().split(X))
    assert LeaveOneOut().get_n_splits(X) == 7
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
               for a, b in zip(ours, theirs))
    with pytest.raises(ValueError, match="at least 2"):
        list(LeaveOneOut().split(np.zeros(1)))


def test_bootstrap_out_of_bag_and_632():
    n = 500
    splits = list(Bootstrap(200, random_state=0).split(np.zeros(n)))
    assert len(splits) == 200
    unique = []
    for train, test in splits:
        assert train.size == n and np.all(np.diff(train) >= 0)
        assert np.array_equal(test, np.setdiff1d(np.arange(n), train))
        unique.append(np.unique(train).size / n)
    # P(drawn at least once) = 1 - (1 - 1/n)^n ~ 0.632 (ml-concepts §4.5)
    expected = 1 - (1 - 1 / n) ** n
    assert np.mean(unique) == pytest.approx(expected, abs=0.003)
    again = list(Bootstrap(200, random_state=0).split(np.zeros(n)))
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(splits, again))
    # tiny sets: an empty out-of-bag draw is redrawn
    assert all(t.size >= 1 for _, t in Bootstrap(50, random_state=1).split(np.zeros(2)))
    w = 1 - math.exp(-1)
    assert bootstrap_632([0.2, 0.4, 0.3], 0.1) == pytest.approx((1 - w) * 0.1 + w * 0.3)
    assert bootstrap_632([0.5], 0.5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="oob_scores"):
        bootstrap_632([], 0.1)
    with pytest.raises(ValueError, match="resubstitution_score"):
        bootstrap_632([0.1], float("nan"))


def test_bad_parameters():
    for bad in (1, 2.5, "3"):
        with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
            KFold(bad)
    with pytest.raises(ValueError, match="n_iterations"):
        Bootstrap(0)
    with pytest.raises(ValueError, match="empty"):
        list(KFold(2).split(np.zeros(0)))
    with pytest.raises(TypeError, match="random_state"):
        list(KFold(2, random_state="x").split(np.zeros(4)))
    assert repr(KFold(3, random_state=1)) == "KFold(n_splits=3, shuffle=True, random_state=1)"
    for make in (lambda s: KFold(3, shuffle=s), lambda s: Holdout(shuffle=s)):
        for bad in ("False", 0, None):  # "False" once shuffled
            with pytest.raises(TypeError, match="shuffle must be True or False"):
                make(bad)
        assert make(np.bool_(False)).shuffle is False
    with pytest.raises(ValueError, match="cannot split a 0-d array"):
        list(KFold(3).split(np.array(5)))
    # a NumPy fraction is a fraction
    assert next(RepeatedSubsampling(1, test_size=np.float32(0.25), random_state=0)
                .split(np.zeros(8)))[1].size == 2
