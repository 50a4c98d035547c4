"""Cross-validation: k-fold (:class:`KFold`), iterative stratification
(:class:`IterativeStratifiedKFold`) and leave-one-out (:class:`LeaveOneOut`)."""
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import LabelsLike, RandomStateLike
from .._validation import check_random_state, check_truth
from ._splitter import Split, _check_shuffle, _complement, _n_documents, _Splitter


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
        self.shuffle = _check_shuffle(shuffle)
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
