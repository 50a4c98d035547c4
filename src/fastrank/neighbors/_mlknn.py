"""ML-kNN (Zhang & Zhou 2007) as melotti2009 Fig. 2.3, on cosine neighbours."""
import numbers

import numpy as np

from .._ext import cosine_topk as _kernel
from .._typing import LabelsLike, MatrixLike
from ._classifier import _NeighborClassifier
from ._search import _check_k

#: The largest smoothing ``s``: the smoothed counts (``s * (k + 1)``, ``2 s + n``) stay finite.
MAX_S = 1e100


class MLkNN(_NeighborClassifier):
    """ML-kNN (Zhang & Zhou 2007) exactly as melotti2009 Fig. 2.3, on cosine neighbours.

    With ``n`` training documents, ``N(x)`` the ``k`` nearest training documents of ``x``
    (a training document is never its own neighbour) and ``δ_x(c) = Σ_{a∈N(x)} y_a(c)``
    (eq. 2.4):

    - prior ``P(H1^c) = (s + Σ_x y_x(c)) / (2s + n)``, ``P(H0^c) = 1 - P(H1^c)``;
    - ``c[δ]`` / ``c'[δ]``: training documents with / without ``c`` whose ``δ_x(c) = δ``;
    - ``P(E_δ^c | H1^c) = (s + c[δ]) / (s(k+1) + Σ_p c[p])``, and alike with ``c'``;
    - belief ``f(d, c) = P(H1|E) = a / (a + b)`` with ``a = P(H1)P(E_δ|H1)``,
      ``b = P(H0)P(E_δ|H0)``, ``δ = δ_d(c)`` (step 18);
    - prediction (MAP, eq. 2.7): ``c`` is assigned iff ``a >= b`` — an exact tie assigns the
      label, as scikit-multilearn does.

    With ``s = 0`` a likelihood with a zero denominator is 0, and ``a + b = 0`` (no evidence
    either way) gives the prior as belief and assigns the label iff the prior is >= 0.5, so
    prediction and belief agree. Labels without a positive example are allowed. Neighbour
    order: cosine descending, then training index ascending.

    ``predict_proba`` gives the posteriors ``P(H1^c | E)`` (the beliefs) as one
    (n_documents, n_labels) array, column ``c`` the probability that label ``c`` applies --
    scikit-learn's multi-label format of ``MLPClassifier``, not the list of (n, 2) arrays of
    ``MultiOutputClassifier``. ``score(X, Y)`` is the tie-aware average precision of the
    beliefs (see :meth:`fastrank._base.MultiLabelEstimator.score`), not subset accuracy.

    Parameters
    ----------
    k : int, default 10
        Number of neighbours.
    s : float, default 1.0
        Smoothing (0 <= s <= 1e100); 1 is Laplace smoothing.

    Attributes
    ----------
    X_fit_, Y_, classes_, n_features_in_, feature_names_in_
        As for :class:`KNN`.
    prior_ : ndarray of float64, shape (n_labels,)
        ``P(H1^c)``.
    cond_true_, cond_false_ : ndarray of float64, shape (n_labels, k + 1)
        The likelihoods ``P(E_δ^c | H1^c)`` and ``P(E_δ^c | H0^c)``, indexed by ``δ``.

    Notes
    -----
    Memory: as :class:`KNN`, a fitted model keeps the search base of its training documents
    (about one more copy of ``X_fit_``, two for sparse input), built at fit and at load.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §2.5, Fig. 2.3.
    .. [2] M.-L. Zhang and Z.-H. Zhou, "ML-KNN: A lazy learning approach to multi-label
       learning", Pattern Recognition 40(7), 2038-2048, 2007.

    Examples
    --------
    >>> from fastrank import MLkNN, datasets
    >>> from fastrank.metrics import average_precision
    >>> data = datasets.load("yeast")
    >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
    >>> model = MLkNN(k=10).fit(train.X, train.Y)
    >>> beliefs = model.predict_proba(test.X)
    >>> beliefs.shape
    (417, 14)
    >>> round(average_precision(test.Y, beliefs), 3)
    0.764
    """

    _fitted_arrays = ("X_fit_", "Y_", "prior_", "cond_true_", "cond_false_")

    def __init__(self, k: int = 10, s: float = 1.0) -> None:
        self.k = k
        self.s = s

    def fit(self, X: MatrixLike, Y: LabelsLike) -> "MLkNN":
        """Priors and likelihoods from the training set's own neighbourhoods (Fig. 2.3,
        steps 1–13).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_train, n_features)
            Training documents (float32/float64, dense or CSR, kept as given).
        Y : 0/1 array (dense or sparse) of shape (n_train, n_labels), or list of label sets
            Their labels.

        Returns
        -------
        MLkNN
            The fitted model.

        Raises
        ------
        ValueError
            Fewer than 2 training documents, ``k`` < 1 or not below the number of training
            documents, an ``s`` outside [0, 1e100], invalid ``X`` or ``Y``.
        TypeError
            ``k`` is not an int.
        """
        self._check_params()
        X, Y = self._check_fit_input(X, Y)
        k = self._training_k(X.shape[0])
        self._store(X, Y)
        _, base = self._base_for(X)
        _, idx = base.search(base.scaled, k, exclude_self=True)
        self._set_tables(*self._count_tables(idx, Y))
        return self

    def _check_params(self):
        if self.k is None:
            raise TypeError("MLkNN needs an int k (None is not allowed)")
        if not isinstance(self.s, numbers.Real) or isinstance(self.s, bool) \
                or not 0 <= self.s <= MAX_S:
            raise ValueError(f"s must be a number in [0, {MAX_S:g}] (beyond, the smoothed "
                             f"counts overflow), got {self.s!r}")

    def _training_k(self, n):
        """k checked against n training documents (a document is never its own neighbour)."""
        if n == 1:
            raise ValueError("MLkNN needs at least 2 training documents (a document is never "
                             "its own neighbour); got 1 sample")
        return _check_k(self.k, n - 1, "other training documents")

    def _count_tables(self, idx, Y):
        """``(c, c')`` of Fig. 2.3 (q × (k+1) int64) over the training documents whose k
        nearest other training documents are the rows of ``idx`` and whose labels are the
        rows of ``Y``; the tables of a training set are the sums over any split of it."""
        q, k = Y.shape[1], idx.shape[1]
        delta = self._counts(idx)
        cell = (np.arange(q, dtype=np.int64) * (k + 1) + delta).ravel()
        has = Y.ravel().astype(bool)
        c_true = np.bincount(cell[has], minlength=q * (k + 1)).reshape(q, k + 1)
        c_false = np.bincount(cell[~has], minlength=q * (k + 1)).reshape(q, k + 1)
        return c_true, c_false

    def _set_tables(self, c_true, c_false):
        """prior_, cond_true_, cond_false_ from the count tables (``Y_`` already set)."""
        n, k, s = self.Y_.shape[0], c_true.shape[1] - 1, float(self.s)
        positives = self.Y_.sum(axis=0, dtype=np.int64)
        self.prior_ = (s + positives) / (2 * s + n)
        self.cond_true_ = self._likelihood(c_true, s, k)
        self.cond_false_ = self._likelihood(c_false, s, k)

    def _loaded_problem(self):
        problem = super()._loaded_problem()
        if problem is not None:
            return problem
        q = self.classes_.shape[0]
        for name, shape, what in (("prior_", (q,), "(n_labels,)"),
                                  ("cond_true_", (q, self.k + 1), "(n_labels, k + 1)"),
                                  ("cond_false_", (q, self.k + 1), "(n_labels, k + 1)")):
            table = getattr(self, name)
            if table.dtype != np.float64 or table.shape != shape:
                return f"{name} is not a float64 array of shape {what} = {shape}"
            if not np.all((table >= 0) & (table <= 1)):  # NaN fails too
                return f"{name} holds values that are not probabilities in [0, 1]"
        return None

    @staticmethod
    def _likelihood(counts, s, k):
        num = s + counts
        den = s * (k + 1) + counts.sum(axis=1, keepdims=True)
        return np.divide(num, den, out=np.zeros(counts.shape), where=den > 0)

    def _counts(self, idx):
        """δ(c) for each row of neighbour indices into the training set (eq. 2.4)."""
        y_indptr, y_indices = self._training_labels()
        delta = np.zeros((idx.shape[0], self.Y_.shape[1]), dtype=np.int32)
        _kernel.label_counts(idx, y_indptr, y_indices, delta)
        return delta

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Posterior ``P(H1^c | E)`` of every label: the beliefs of
        :meth:`decision_function`.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray of float64, shape (n_documents, n_labels)
            Column ``c`` is the probability that label ``c`` applies.

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            ``X`` has another number of features than the training data, or is invalid.
        """
        return self._decide(X)[0]

    def _predict_k(self, n_train):
        return self.cond_true_.shape[1] - 1  # the k of the fitted tables

    def _from_neighbors(self, sims, idx):
        """(beliefs, predictions) of queries from their k nearest training documents."""
        delta = self._counts(idx)
        a = self.prior_[:, None] * self.cond_true_          # (q, k+1) tables, indexed by δ
        b = (1 - self.prior_)[:, None] * self.cond_false_
        total = a + b
        posterior = np.divide(a, total, out=np.broadcast_to(self.prior_[:, None], a.shape)
                              .copy(), where=total > 0)
        labels = np.arange(self.Y_.shape[1])
        assign = np.where(total > 0, a >= b, self.prior_[:, None] >= 0.5)
        return posterior[labels, delta], assign.astype(np.uint8)[labels, delta]
