"""The multi-label kNN of melotti2009 §2.4.2 on cosine neighbours."""
from typing import Literal

import numpy as np

from .._ext import cosine_topk as _kernel
from .._typing import LabelsLike, MatrixLike
from .._validation import check_option
from ._classifier import _NeighborClassifier
from ._search import _check_k

_AGGREGATES = _kernel.AGGREGATES  # the kernel's codes


class KNN(_NeighborClassifier):
    """Multi-label kNN of melotti2009 §2.4.2 on cosine similarity (eq. 2.3).

    ``f(d, c)`` from the ``k`` nearest training documents ``N(d)``:

    - ``aggregate="max"`` (the thesis): the largest cosine among the neighbours carrying
      ``c``, 0 if none (Table 2.1);
    - ``"sum"`` (similarity-score summing): the sum of those cosines divided by ``k``;
    - ``"count"`` (majority votes): the number of those neighbours divided by ``k``.

    Negative cosines (possible only with negative feature values) count as 0 in max and sum,
    so beliefs lie in [0, 1]. ``k=None`` uses every training document (the thesis' setting).
    ``predict`` assigns every label with a positive belief: the labels of the neighbours, the
    "Categorias preditas" of Table 2.1. Neighbour order: cosine descending, then training
    index ascending; cosines that are equal in exact arithmetic are bit-equal for binary and
    integer-count features (see :func:`topk_cosine`), so such ties are broken by index.

    A scikit-learn classifier (multi-label targets only: Y a 0/1 matrix or a list of label
    sets). ``score(X, Y)`` is the tie-aware average precision of the beliefs (see
    :meth:`fastrank._base.MultiLabelEstimator.score`), not subset accuracy.

    Parameters
    ----------
    k : int or None, default None
        Number of neighbours; None uses every training document.
    aggregate : {"max", "sum", "count"}, default "max"
        How the neighbours' cosines make a belief (see above).

    Attributes
    ----------
    X_fit_ : ndarray or scipy.sparse.csr_matrix, shape (n_train, n_features)
        The training documents: the array given to :meth:`fit` itself when it needs no
        conversion (float32/float64, C order, or canonical CSR), as scikit-learn keeps
        it. The search base is built from it at fit, so changing that array afterwards
        leaves the model inconsistent (dense queries search the old rows, a query of
        another kind or a saved model the new ones): refit, or fit on a copy.
    Y_ : ndarray of uint8, shape (n_train, n_labels)
        Their labels, as an indicator matrix.
    classes_ : ndarray, shape (n_labels,)
        The label names (0..q-1 for an indicator matrix, the sorted labels for label sets).
    n_features_in_ : int
        Number of features.
    feature_names_in_ : ndarray of str
        Column names, when fitted on a DataFrame.

    Notes
    -----
    Memory: besides ``X_fit_``, a fitted model keeps the search base of its training
    documents, built at fit and at load (never saved, never pickled): one copy of
    ``X_fit_`` with each row scaled by a power of two, two norms per document and, for
    sparse input, the transposed copy the sparse search runs on -- about as much memory as
    ``X_fit_`` again (dense) or twice (sparse). Queries of another kind than the training
    documents (sparse queries to a dense model, float64 queries to a float32 one) get a
    base of their kind the first time, kept as well. So a call pays only for the search
    itself, as scikit-learn's ``NearestNeighbors`` keeps its fitted data.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §2.4.2.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import KNN
    >>> X = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [0, 1, 0, 1]], dtype=float)
    >>> Y = [{"a"}, {"a", "b"}, {"b", "c"}, {"c"}]
    >>> model = KNN(k=2).fit(X, Y)
    >>> model.classes_
    array(['a', 'b', 'c'], dtype='<U1')
    >>> np.round(model.decision_function([[1, 1, 1, 0]]), 4)
    array([[0.8165, 0.8165, 0.    ]])
    >>> model.predict([[1, 1, 1, 0]])
    array([[1, 1, 0]], dtype=uint8)
    """

    def __init__(self, k: int | None = None,
                 aggregate: Literal["max", "sum", "count"] = "max") -> None:
        self.k = k
        self.aggregate = aggregate

    def fit(self, X: MatrixLike, Y: LabelsLike) -> "KNN":
        """Store the training documents (lazy learner).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_train, n_features)
            Training documents (float32/float64, dense or CSR, kept as given).
        Y : 0/1 array (dense or sparse) of shape (n_train, n_labels), or list of label sets
            Their labels. Labels without a positive example are allowed (their belief is
            always 0).

        Returns
        -------
        KNN
            The fitted model.

        Raises
        ------
        ValueError
            An unknown ``aggregate``, ``k`` < 1 or beyond the training set, ``X`` and ``Y``
            with different numbers of documents, empty or non-finite ``X``, ``Y`` not 0/1.
        TypeError
            A ``k`` that is not an int or None.
        """
        self._check_params()
        X, Y = self._check_fit_input(X, Y)
        self._training_k(X.shape[0])
        self._store(X, Y)
        return self

    def _check_params(self):
        check_option("aggregate", self.aggregate, tuple(_AGGREGATES))

    def _training_k(self, n):
        """k checked against n training documents (None: n)."""
        return _check_k(self.k, n, f"training documents (n_samples={n})")

    def _predict_k(self, n_train):
        return _check_k(self.k, n_train, "training documents")

    def _from_neighbors(self, sims, idx):
        """(beliefs, predictions) of queries from their k nearest training documents."""
        y_indptr, y_indices = self._training_labels()
        out = np.zeros((idx.shape[0], self.Y_.shape[1]), dtype=np.float64)
        _kernel.knn_aggregate(sims, idx, y_indptr, y_indices, _AGGREGATES[self.aggregate], out)
        return out, (out > 0).astype(np.uint8)
