"""The bootstrap (:class:`Bootstrap`) and its .632 estimate (:func:`bootstrap_632`)."""
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from .._typing import RandomStateLike
from .._validation import check_random_state
from ._splitter import Split, _complement, _n_documents, _Splitter


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
