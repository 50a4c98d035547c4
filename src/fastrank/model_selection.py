"""Resampling estimators (ml-concepts chapter §4.5; melotti2009 §3.4), with
scikit-learn's splitter protocol: ``split(X, y=None, groups=None)`` yields
``(train_indices, test_indices)`` and ``get_n_splits()`` counts them, so every splitter here
can be passed as ``cv=`` to scikit-learn too.

Determinism: with an int ``random_state`` every call of ``split`` yields the same splits;
with a ``numpy.random.Generator`` successive calls continue its stream; with None they
differ. Index arrays are sorted int64 (bootstrap training sets keep their repeats).
"""
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._typing import LabelsLike, RandomStateLike
from ._validation import check_random_state, check_truth

__all__ = ["KFold", "IterativeStratifiedKFold", "Holdout", "RepeatedSubsampling",
           "LeaveOneOut", "Bootstrap", "bootstrap_632"]


def _n_documents(X):
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if n < 1:
        raise ValueError("cannot split an empty data set")
    return int(n)


def _complement(n, test):
    mask = np.ones(n, dtype=bool)
    mask[test] = False
    return np.flatnonzero(mask).astype(np.int64)


Split = tuple[np.ndarray, np.ndarray]


class _Splitter:
    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


class KFold(_Splitter):
    """n-fold cross-validation (melotti2009 §3.4; the thesis uses 10 folds): the documents,
    shuffled when ``shuffle`` (default True, unlike scikit-learn), are cut into
    ``n_splits`` consecutive folds whose sizes differ by at most one (the first
    ``n % n_splits`` folds are one larger); each fold is the test set once. With
    ``shuffle=False`` the folds are exactly scikit-learn's ``KFold(n_splits)``.

    Parameters
    ----------
    n_splits : int, default 10
        Number of folds (>= 2).
    shuffle : bool, default True
        Shuffle the documents before cutting the folds.
    random_state : None, int or numpy.random.Generator, default None
        Seeds the shuffle.

    Raises
    ------
    ValueError
        ``n_splits`` is not an integer >= 2.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §3.4.
    .. [2] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.model_selection import KFold
    >>> for train, test in KFold(3, shuffle=False).split(np.zeros((7, 5))):
    ...     print(train, test)
    [3 4 5 6] [0 1 2]
    [0 1 2 5 6] [3 4]
    [0 1 2 3 4] [5 6]
    """

    def __init__(self, n_splits: int = 10, shuffle: bool = True,
                 random_state: RandomStateLike = None) -> None:
        if not isinstance(n_splits, (int, np.integer)) or n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2, got {n_splits!r}")
        self.n_splits = int(n_splits)
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits (scikit-learn's splitter protocol; the arguments are ignored)."""
        return self.n_splits

    def _order(self, n):
        if not self.shuffle:
            return np.arange(n)
        return check_random_state(self.random_state).permutation(n)

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Split]:
        """Yield the ``(train, test)`` indices of each fold.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, ...)
            The documents (only their number is used).
        y : array-like, optional
            Ignored.
        groups : None
            Ignored (scikit-learn's splitter protocol).

        Yields
        ------
        train, test : ndarray of int64
            Sorted document indices.

        Raises
        ------
        ValueError
            An empty data set, or fewer documents than folds.
        """
        n = _n_documents(X)
        if self.n_splits > n:
            raise ValueError(f"n_splits={self.n_splits} is larger than the {n} documents")
        order = self._order(n)
        sizes = np.full(self.n_splits, n // self.n_splits)
        sizes[:n % self.n_splits] += 1
        start = 0
        for size in sizes:
            test = np.sort(order[start:start + size]).astype(np.int64)
            start += size
            yield _complement(n, test), test


class IterativeStratifiedKFold(KFold):
    """k-fold cross-validation with iterative stratification for multi-label data
    (Sechidis, Tsoumakas & Vlahavas 2011, Algorithm 1, with equal fold proportions 1/k).

    Each fold j wants c_j = n/k documents and, for each label l, c_j^l = n_l/k of the n_l
    documents having l. Repeatedly take the label with the fewest unassigned documents (ties
    at random) and give each of its unassigned documents to the fold that most wants that
    label (ties: the fold that wants the most documents, then at random), updating the
    wishes of the document's labels. Documents without labels go to the folds that want
    the most documents. Documents are visited in a random order drawn from
    ``random_state``; ``split`` needs ``y`` (a 0/1 label matrix or a sparse matrix).

    Parameters
    ----------
    n_splits : int, default 10
        Number of folds (>= 2).
    random_state : None, int or numpy.random.Generator, default None
        Seeds the visiting order and the random tie choices.

    Raises
    ------
    ValueError
        ``n_splits`` is not an integer >= 2.

    References
    ----------
    .. [1] K. Sechidis, G. Tsoumakas and I. Vlahavas, "On the stratification of multi-label
       data", ECML PKDD 2011, LNCS 6913, 145-158.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.model_selection import IterativeStratifiedKFold
    >>> Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 1], [1, 1], [0, 0], [0, 0]])
    >>> folds = IterativeStratifiedKFold(2, random_state=0).folds(Y)
    >>> folds
    array([1, 0, 1, 0, 1, 0, 1, 0])
    >>> Y[folds == 0].sum(axis=0), Y[folds == 1].sum(axis=0)   # each label split evenly
    (array([2, 2]), array([2, 2]))
    """

    def __init__(self, n_splits: int = 10, random_state: RandomStateLike = None) -> None:
        super().__init__(n_splits=n_splits, shuffle=True, random_state=random_state)

    def __repr__(self) -> str:
        return f"IterativeStratifiedKFold(n_splits={self.n_splits}, " \
               f"random_state={self.random_state!r})"

    def folds(self, y: LabelsLike) -> np.ndarray:
        """The fold of every document.

        Parameters
        ----------
        y : 0/1 array (dense or sparse), shape (n_documents, n_labels)
            The labels.

        Returns
        -------
        ndarray of int64, shape (n_documents,)
            Fold numbers 0..n_splits-1.

        Raises
        ------
        ValueError
            ``y`` not a 0/1 matrix, or fewer documents than folds.
        """
        Y = sp.csr_matrix(check_truth(y, name="y"))
        n, q = Y.shape
        k = self.n_splits
        if k > n:
            raise ValueError(f"n_splits={k} is larger than the {n} documents")
        rng = check_random_state(self.random_state)
        visit = rng.permutation(n)
        rank = np.empty(n, dtype=np.int64)
        rank[visit] = np.arange(n)
        Yc = Y.tocsc()
        members = [Yc.indices[Yc.indptr[l]:Yc.indptr[l + 1]] for l in range(q)]
        members = [m[np.argsort(rank[m], kind="stable")] for m in members]
        want = np.full(k, n / k)
        want_label = np.tile(np.diff(Yc.indptr) / k, (k, 1))
        left = np.diff(Yc.indptr).astype(np.int64)
        fold = np.full(n, -1, dtype=np.int64)
        while left.max() > 0:
            live = np.flatnonzero(left > 0)
            fewest = live[left[live] == left[live].min()]
            label = fewest[rng.integers(fewest.size)] if fewest.size > 1 else fewest[0]
            for doc in members[label]:
                if fold[doc] >= 0:
                    continue
                w = want_label[:, label]
                cand = np.flatnonzero(w == w.max())
                if cand.size > 1:
                    cand = cand[want[cand] == want[cand].max()]
                m = cand[rng.integers(cand.size)] if cand.size > 1 else cand[0]
                fold[doc] = m
                labels = Y.indices[Y.indptr[doc]:Y.indptr[doc + 1]]
                want_label[m, labels] -= 1
                left[labels] -= 1
                want[m] -= 1
        for doc in visit[fold[visit] < 0]:
            cand = np.flatnonzero(want == want.max())
            m = cand[rng.integers(cand.size)] if cand.size > 1 else cand[0]
            fold[doc] = m
            want[m] -= 1
        return fold

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Split]:
        """Yield the ``(train, test)`` indices of each fold.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, ...)
            The documents (only their number is used).
        y : 0/1 array (dense or sparse), shape (n_documents, n_labels)
            The labels (required).
        groups : None
            Ignored (scikit-learn's splitter protocol).

        Yields
        ------
        train, test : ndarray of int64
            Sorted document indices.

        Raises
        ------
        ValueError
            No ``y``, ``X`` and ``y`` of different lengths, or see :meth:`folds`.
        """
        if y is None:
            raise ValueError("IterativeStratifiedKFold.split needs y (the label matrix)")
        n = _n_documents(X)
        fold = self.folds(y)
        if fold.size != n:
            raise ValueError(f"X has {n} documents but y has {fold.size}")
        for j in range(self.n_splits):
            test = np.flatnonzero(fold == j).astype(np.int64)
            yield _complement(n, test), test


def _test_count(test_size, n):
    if isinstance(test_size, (int, np.integer)) and not isinstance(test_size, bool):
        n_test = int(test_size)
    elif isinstance(test_size, float) and 0.0 < test_size < 1.0:
        n_test = math.ceil(test_size * n)
    else:
        raise ValueError(f"test_size must be a float in (0, 1) or a document count, "
                         f"got {test_size!r}")
    if not 0 < n_test < n:
        raise ValueError(f"test_size={test_size!r} leaves {n_test} test and {n - n_test} "
                         f"training documents out of {n}; both must be >= 1")
    return n_test


class RepeatedSubsampling(_Splitter):
    """Repeated random subsampling ("amostragem aleatória", ml-concepts §4.5): ``n_repeats``
    independent random splits, each with ``test_size`` test documents (a fraction, rounded
    up, or a count) and the rest for training.

    Parameters
    ----------
    n_repeats : int, default 10
        Number of splits (>= 1).
    test_size : float in (0, 1) or int, default 1/3
        Test fraction (rounded up) or count.
    random_state : None, int or numpy.random.Generator, default None
        Seeds the splits.

    Raises
    ------
    ValueError
        ``n_repeats`` is not an integer >= 1.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.model_selection import RepeatedSubsampling
    >>> for train, test in RepeatedSubsampling(2, test_size=2, random_state=0).split(np.zeros(5)):
    ...     print(train, test)
    [0 1 3] [2 4]
    [0 2 3] [1 4]
    """

    def __init__(self, n_repeats: int = 10, test_size: float | int = 1 / 3,
                 random_state: RandomStateLike = None) -> None:
        if not isinstance(n_repeats, (int, np.integer)) or n_repeats < 1:
            raise ValueError(f"n_repeats must be an integer >= 1, got {n_repeats!r}")
        self.n_repeats = int(n_repeats)
        self.test_size = test_size
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits (scikit-learn's splitter protocol; the arguments are ignored)."""
        return self.n_repeats

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Split]:
        """Yield the ``(train, test)`` indices of each split.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, ...)
            The documents (only their number is used).
        y : array-like, optional
            Ignored.
        groups : None
            Ignored (scikit-learn's splitter protocol).

        Yields
        ------
        train, test : ndarray of int64
            Sorted document indices.

        Raises
        ------
        ValueError
            An empty data set, or a ``test_size`` leaving an empty part.
        """
        n = _n_documents(X)
        n_test = _test_count(self.test_size, n)
        rng = check_random_state(self.random_state)
        for _ in range(self.n_repeats):
            order = rng.permutation(n)
            test = np.sort(order[:n_test]).astype(np.int64)
            yield _complement(n, test), test


class Holdout(RepeatedSubsampling):
    """Holdout (ml-concepts §4.5): one split, a fraction p of the documents for training and
    ``test_size`` = 1 - p for testing (typical p = 2/3, the default). With
    ``shuffle=False`` the test set is the last documents, in file order.

    Parameters
    ----------
    test_size : float in (0, 1) or int, default 1/3
        Test fraction (rounded up) or count.
    shuffle : bool, default True
        Draw the test set at random (else: the last documents).
    random_state : None, int or numpy.random.Generator, default None
        Seeds the draw.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.model_selection import Holdout
    >>> list(Holdout(test_size=0.25, shuffle=False).split(np.zeros(8)))
    [(array([0, 1, 2, 3, 4, 5]), array([6, 7]))]
    """

    def __init__(self, test_size: float | int = 1 / 3, shuffle: bool = True,
                 random_state: RandomStateLike = None) -> None:
        super().__init__(n_repeats=1, test_size=test_size, random_state=random_state)
        self.shuffle = bool(shuffle)

    def __repr__(self) -> str:
        return f"Holdout(test_size={self.test_size!r}, shuffle={self.shuffle}, " \
               f"random_state={self.random_state!r})"

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Split]:
        """Yield the one ``(train, test)`` split.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, ...)
            The documents (only their number is used).
        y : array-like, optional
            Ignored.
        groups : None
            Ignored (scikit-learn's splitter protocol).

        Yields
        ------
        train, test : ndarray of int64
            Sorted document indices.

        Raises
        ------
        ValueError
            An empty data set, or a ``test_size`` leaving an empty part.
        """
        if self.shuffle:
            yield from super().split(X)
            return
        n = _n_documents(X)
        n_test = _test_count(self.test_size, n)
        yield np.arange(n - n_test, dtype=np.int64), np.arange(n - n_test, n, dtype=np.int64)


class LeaveOneOut(_Splitter):
    """Leave-one-out (ml-concepts §4.5): n splits, each testing on one document.

    References
    ----------
    .. [1] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.model_selection import LeaveOneOut
    >>> for train, test in LeaveOneOut().split(np.zeros(3)):
    ...     print(train, test)
    [1 2] [0]
    [0 2] [1]
    [0 1] [2]
    """

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits: the number of documents of ``X``.

        Raises
        ------
        ValueError
            ``X`` is None or empty.
        """
        if X is None:
            raise ValueError("LeaveOneOut.get_n_splits needs X (the number of documents)")
        return _n_documents(X)

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Split]:
        """Yield the ``(train, test)`` indices of each split.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, ...)
            The documents (only their number is used).
        y : array-like, optional
            Ignored.
        groups : None
            Ignored (scikit-learn's splitter protocol).

        Yields
        ------
        train, test : ndarray of int64
            Sorted document indices.

        Raises
        ------
        ValueError
            Fewer than 2 documents.
        """
        n = _n_documents(X)
        if n < 2:
            raise ValueError("leave-one-out needs at least 2 documents")
        for i in range(n):
            yield _complement(n, [i]), np.array([i], dtype=np.int64)


class Bootstrap(_Splitter):
    """Bootstrap (Efron & Tibshirani 1993; ml-concepts §4.5): each of ``n_iterations``
    training sets is n documents drawn with replacement (sorted, repeats kept); the test
    set is the documents never drawn (out of bag, on average 36.8%). A draw whose out-of-bag
    set is empty is redrawn. The *e0* estimate is the mean of the out-of-bag scores; the
    *.632* estimate combines it with the resubstitution score: :func:`bootstrap_632`.

    Parameters
    ----------
    n_iterations : int, default 200
        Number of bootstrap samples (>= 1).
    random_state : None, int or numpy.random.Generator, default None
        Seeds the draws.

    Raises
    ------
    ValueError
        ``n_iterations`` is not an integer >= 1.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman &
       Hall, 1993.
    .. [2] M. C. Monard and J. A. Baranauskas, "Conceitos sobre aprendizado de máquina", in
       S. O. Rezende (ed.), *Sistemas Inteligentes: Fundamentos e Aplicações*, Manole, 2003,
       ch. 4, §4.5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.model_selection import Bootstrap
    >>> for train, test in Bootstrap(2, random_state=0).split(np.zeros(5)):
    ...     print(train, test)
    [1 1 2 3 4] [0]
    [0 0 0 0 4] [1 2 3]
    """

    def __init__(self, n_iterations: int = 200, random_state: RandomStateLike = None) -> None:
        if not isinstance(n_iterations, (int, np.integer)) or n_iterations < 1:
            raise ValueError(f"n_iterations must be an integer >= 1, got {n_iterations!r}")
        self.n_iterations = int(n_iterations)
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits (scikit-learn's splitter protocol; the arguments are ignored)."""
        return self.n_iterations

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Split]:
        """Yield the ``(train, test)`` indices of each bootstrap sample (training indices
        repeat).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, ...)
            The documents (only their number is used).
        y : array-like, optional
            Ignored.
        groups : None
            Ignored (scikit-learn's splitter protocol).

        Yields
        ------
        train, test : ndarray of int64
            Sorted document indices.

        Raises
        ------
        ValueError
            Fewer than 2 documents.
        """
        n = _n_documents(X)
        if n < 2:
            raise ValueError("the bootstrap needs at least 2 documents")
        rng = check_random_state(self.random_state)
        for _ in range(self.n_iterations):
            while True:
                train = np.sort(rng.integers(0, n, n))
                test = _complement(n, train)
                if test.size:
                    break
            yield train.astype(np.int64), test


def bootstrap_632(oob_scores: npt.ArrayLike, resubstitution_score: float) -> float:
    """Efron's .632 bootstrap estimate: ``(1 - w) * resubstitution + w * e0`` with
    w = 1 - 1/e ~ 0.632 (the chance that a document is drawn at least once), where e0 is
    the mean of the out-of-bag scores of the :class:`Bootstrap` iterations and the
    resubstitution score is measured on the training data of a model fitted on all
    documents. Works for an error or any other per-split score (it is linear).

    Parameters
    ----------
    oob_scores : array-like, shape (n_iterations,)
        Out-of-bag score of each :class:`Bootstrap` iteration.
    resubstitution_score : float
        Score on the training data of a model fitted on all documents.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Empty, not 1-D or non-finite ``oob_scores``; non-finite ``resubstitution_score``.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman &
       Hall, 1993.

    Examples
    --------
    >>> from fastrank.model_selection import bootstrap_632
    >>> round(bootstrap_632([.3, .35, .25], resubstitution_score=.1), 4)
    0.2264
    """
    oob = np.asarray(oob_scores, dtype=np.float64)
    if oob.ndim != 1 or oob.size == 0 or not np.isfinite(oob).all():
        raise ValueError("oob_scores must be a non-empty 1-D sequence of finite numbers")
    resub = float(resubstitution_score)
    if not math.isfinite(resub):
        raise ValueError("resubstitution_score must be finite")
    w = 1.0 - math.exp(-1.0)
    return (1.0 - w) * resub + w * float(oob.mean())
