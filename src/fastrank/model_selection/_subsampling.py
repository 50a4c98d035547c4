"""Random subsampling: repeated (:class:`RepeatedSubsampling`) and once
(:class:`Holdout`)."""
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._typing import RandomStateLike
from .._validation import check_random_state
from ._splitter import Split, _check_shuffle, _complement, _n_documents, _Splitter


def _test_count(test_size, n):
    if isinstance(test_size, (int, np.integer)) and not isinstance(test_size, bool):
        n_test = int(test_size)
    elif isinstance(test_size, (float, np.floating)) and 0.0 < test_size < 1.0:
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
        self.shuffle = _check_shuffle(shuffle)

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
