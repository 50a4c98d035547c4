"""What the cosine-neighbour classifiers share: the training documents kept as given, their
search bases and label lists, loading, and the prediction methods."""
from os import PathLike

import numpy as np
import scipy.sparse as sp

from .._base import MultiLabelEstimator
from .._typing import MatrixLike
from .._validation import check_features
from ._search import _as_kind, _Base, _pow2_scaled_rows, _search_kind

# predictions search queries in blocks of at most this many (query, neighbour) pairs
_CHUNK_PAIRS = 1 << 23


def _label_lists(Y):
    """CSR (indptr, indices) of a 0/1 matrix: the labels of each document, int32."""
    csr = sp.csr_matrix(Y)
    return csr.indptr.astype(np.int32), csr.indices.astype(np.int32)


class _NeighborClassifier(MultiLabelEstimator):
    """Training documents kept as given; predictions search them for neighbours.

    What every prediction reads from the training set is built once and kept: the search
    bases (:class:`_Base`) of the training documents in ``_bases`` by search kind
    (:func:`_search_kind`; their own kind built at fit and at load, another kind the first
    time a query of that kind comes) and their label lists in ``_labels``. Derived data:
    never saved nor pickled, rebuilt from ``X_fit_`` and ``Y_``.
    """

    _fitted_arrays: tuple[str, ...] = ("X_fit_", "Y_")

    def _store(self, X, Y):
        self.X_fit_ = X
        self.Y_ = Y
        self._keep_derived()

    def _keep_derived(self):
        """Build the search base of the training documents' own kind and their label lists."""
        self._bases = {}
        self._base_for(self.X_fit_)
        self._labels = _label_lists(self.Y_)

    @classmethod
    def load(cls, path: str | PathLike) -> "_NeighborClassifier":
        """Read a model written by :meth:`save` (checked and memory-mapped as
        :meth:`fastrank._base.MultiLabelEstimator.load` describes) and build the search base
        of its training documents.

        Parameters
        ----------
        path : str or os.PathLike
            The file to read.

        Returns
        -------
        KNN or MLkNN
            The fitted model.

        Raises
        ------
        ValueError
            The file is corrupt, truncated, foreign or holds another estimator.
        """
        model = super().load(path)
        model._keep_derived()
        return model

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the derived data stay with self
        state.pop("_bases", None)
        state.pop("_labels", None)
        return state

    def _loaded_problem(self):
        self._check_params()
        X, Y = self.X_fit_, self.Y_
        if X.ndim != 2 or X.shape[1] != self.n_features_in_ or X.shape[0] < 1:
            return "X_fit_ is not a (n_train, n_features_in_) matrix"
        self.X_fit_ = check_features(X, "X_fit_")  # real, finite (not copied if float C-order)
        if Y.dtype != np.uint8 or Y.shape != (X.shape[0], self.classes_.shape[0]) \
                or np.any(Y > 1):
            return "Y_ is not a 0/1 uint8 (n_train, n_labels) matrix"
        self._training_k(X.shape[0])
        return None

    def _decide(self, X):
        """(beliefs, predictions) of the rows of X from their k nearest training documents
        (:meth:`_from_neighbors`), a block of queries at a time: the neighbour lists held
        are bounded however many queries come."""
        self._check_params()  # set_params after fit is checked as fit checks it
        Xn, base = self._queries(X)
        k = self._predict_k(base.n)
        step = max(1, _CHUNK_PAIRS // k)
        parts = [self._from_neighbors(*base.search(Xn[lo:lo + step], k))
                 for lo in range(0, Xn.shape[0], step)]
        return tuple(np.concatenate(p) for p in zip(*parts))

    def _queries(self, X):
        """X checked against the fitted model and scaled by :func:`_pow2_scaled_rows` in the
        kind it is searched in, and the training documents' search base for that kind."""
        X, base = self._base_for(self._check_predict_input(X))
        return _pow2_scaled_rows(X), base

    def _base_for(self, X):
        """X (checked) converted to the kind it is searched in (:func:`_search_kind`), and the
        training documents' search base for that kind (built once, then kept)."""
        bases = self.__dict__.setdefault("_bases", {})  # absent after unpickling
        kind = _search_kind(X, self.X_fit_)
        if kind not in bases:
            bases[kind] = _Base(_as_kind(self.X_fit_, kind))
        return _as_kind(X, kind), bases[kind]

    def _training_labels(self):
        """(indptr, indices) of the training documents' labels (:func:`_label_lists` of
        ``Y_``), kept."""
        labels = self.__dict__.get("_labels")  # absent after unpickling
        if labels is None:
            labels = self._labels = _label_lists(self.Y_)
        return labels

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Predicted label sets by the model's rule (see the class docstring).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray, shape (n_documents, n_labels)
            1 where the label is assigned; columns in ``classes_`` order. Of the training
            target's dtype (uint8 when it was label sets).

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            ``X`` has another number of features than the training data, or is empty or
            non-finite.
        """
        return self._as_target_dtype(self._decide(X)[1])

    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """Beliefs ``f(d, c)`` of every label (see the class docstring).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray of float64, shape (n_documents, n_labels)
            Beliefs in [0, 1]; columns in ``classes_`` order.

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            ``X`` has another number of features than the training data, or is empty or
            non-finite.
        """
        return self._decide(X)[0]
