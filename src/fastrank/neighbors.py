"""Exact top-k cosine neighbours and the lazy classifiers built on them (melotti2009 §2.4–2.5):
the multi-label kNN and ML-kNN (Zhang & Zhou 2007).

Similarity is the cosine of eq. 2.3, ``cos(d_j, d_m) = d_j·d_m / (|d_j| |d_m|)``; a document
with no non-zero feature has cosine 0 with every document (as scikit-learn's
``cosine_similarity``). Neighbours are ordered by similarity descending, then base index
ascending: at a tie on the k-th similarity the documents with the lowest indices enter. Ties are
exact equality of the computed (floating-point) cosines.

Exact ties. Each row is scaled by a power of two (exact), the dot product ``d`` and the squared
norms ``aa``, ``bb`` are summed from the scaled rows, and the cosine is
``sign(d) * sqrt(d² / (aa·bb))`` with the ratio rounded once in float64. When ``d``, ``aa``,
``bb``, ``d²`` and ``aa·bb`` are exact, the result depends only on the rational ``d²/(aa·bb)``
and the sign, so **cosines equal in exact arithmetic are bit-equal** (e.g. 2/√120 and 3/√270,
both √(1/30)) and the tie order above holds exactly. That is the case for integer-valued
rows (binary and count features, or integers times any power of two per row) whose squared
norms are below 2²⁴ (float32 data) or whose product of squared norms is below 2⁵³ (float64
data) — e.g. binary rows of up to 16 million (float32) or 94 million (float64) non-zeros.
Beyond those limits, and for real-valued features such as tf-idf weights, the sums round: the
cosine is then still a function of the two rows' stored values alone (duplicate rows, and
rows equal up to a power-of-two factor, tie exactly; a row's cosine with itself is exactly 1),
but two cosines that are equal in exact arithmetic of the stored values may differ in the
last bits (tf-idf rows of documents with proportional term counts, for instance, are equal
real vectors stored with different roundings). For tf-idf the rule is therefore: exact ties
for equal rows, rounded comparisons otherwise.

Threads: the search runs on OpenMP threads (limit them with
``threadpoolctl.threadpool_limits(n, user_api="openmp")`` or ``OMP_NUM_THREADS``).

Every similarity depends only on its two rows: the dense search sums each dot product in one
fixed order of fused multiply-adds (a compiled kernel, not a BLAS GEMM, whose rounding changes
with the matrix shapes; its AVX-512, AVX2/FMA3 and portable code give the same bits), the
sparse search adds a query's products in the order of its features. So results
depend neither on the thread count nor on the other base documents: searching parts of the
base and merging their top-k by the same order gives exactly the search of the whole base
(what :class:`fastrank.dask.ShardedEstimator` does).
"""
import numbers
from os import PathLike
from typing import Literal

import numpy as np
import scipy.sparse as sp

from ._base import MultiLabelEstimator
from ._ext import cosine_topk as _kernel
from ._typing import LabelsLike, MatrixLike
from ._validation import check_features, check_option

#: Dense search: one (BLOCK_QUERIES x BLOCK_BASE) similarity block per thread in memory.
BLOCK_QUERIES = 256
#: See :data:`BLOCK_QUERIES`.
BLOCK_BASE = 4096
# KNN scores queries in chunks of at most this many (query, neighbour) pairs
_CHUNK_PAIRS = 1 << 23

_AGGREGATES = _kernel.AGGREGATES  # the kernel's codes


# ---- the search -------------------------------------------------------------------------------

def _pow2_scaled_rows(X):
    """A copy of a validated X (C-contiguous ndarray or CSR), each row multiplied by the power
    of two that brings its largest absolute value into [1/2, 1): scaling by a power of two is
    exact, so exact ties survive (integer rows stay integers times a power of two), cosines
    are unchanged, and the sums cannot overflow."""
    if sp.issparse(X):
        data = np.empty_like(X.data)
        _kernel.scale_csr(X.data, X.indptr, data)
        return sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
    out = np.empty_like(X)
    _kernel.scale_dense(X, out)
    return out



def _sqnorms(X):
    """Squared norms of the rows of a scaled X, each equal to the row's dot product with
    itself as the search computes it."""
    out = np.empty(X.shape[0], dtype=X.dtype)
    if sp.issparse(X):
        _kernel.sqnorms_csr(X.data, X.indptr, out)
    else:
        _kernel.sqnorms_dense(X, out)
    return out


def _index_arrays(*mats):
    """(indices, indptr) of each CSR matrix, all in one integer dtype (the kernel needs one)."""
    wide = any(m.indices.dtype == np.int64 or m.indptr.dtype == np.int64 for m in mats)
    dtype = np.int64 if wide else np.int32
    return [(m.indices.astype(dtype, copy=False), m.indptr.astype(dtype, copy=False))
            for m in mats]


def _restrict_columns(X, columns):
    """The CSR matrix X with only its entries in ``columns`` (sorted distinct column
    numbers), column ``columns[j]`` renumbered ``j``; the order within each row is kept.
    Each entry's new number is read from a table of every column when that costs no more
    than the entries, found by binary search otherwise."""
    if X.shape[1] <= X.indices.size:
        table = np.full(X.shape[1], -1, dtype=np.int64)
        table[columns] = np.arange(columns.size)
        pos = table[X.indices]
        keep = pos >= 0
    else:
        pos = np.searchsorted(columns, X.indices)
        keep = pos < columns.size
        keep[keep] = columns[pos[keep]] == X.indices[keep]
    indptr = np.concatenate(([0], np.cumsum(keep)))[X.indptr]
    return sp.csr_matrix((X.data[keep], pos[keep], indptr), shape=(X.shape[0], columns.size))


def _present_columns(indices, width):
    """The sorted distinct values of ``indices`` (column numbers below ``width``): a mark per
    column when that costs no more than the entries, a sort of the entries otherwise."""
    if width <= indices.size:
        return np.flatnonzero(np.bincount(indices, minlength=width))
    return np.unique(indices)


class _Base:
    """Base documents prepared once for many searches: rows scaled by
    :func:`_pow2_scaled_rows`, their squared and inverse norms, and for CSR the transposed
    form (the inverted index of the search) with its index arrays in the kernel's dtype.

    A CSR base is indexed on the columns it stores (``columns``, None when it stores every
    column): a feature no base document has adds nothing to any dot product, so a query is
    searched with its entries in those columns only (:meth:`_restricted`), its norm still
    taken over all of them -- the same sums in the same order, so the same bits. Memory
    and time then follow the stored entries, not the declared number of features."""

    def __init__(self, X):
        self.n = X.shape[0]
        self.scaled = _pow2_scaled_rows(X)
        self.sqnorms = _sqnorms(self.scaled)
        self.inv_norms = np.empty(self.n, dtype=np.float64)
        _kernel.inv_norms(self.sqnorms, self.inv_norms)
        self.sparse = sp.issparse(X)
        self.columns = None
        if self.sparse:
            present = _present_columns(self.scaled.indices, X.shape[1])
            if present.size < X.shape[1]:
                self.columns = present
            self.index = self._restricted(self.scaled).T.tocsr()
            [self.index_arrays] = _index_arrays(self.index)
        else:
            self.index = self.scaled

    def _restricted(self, Q):
        """The CSR queries Q in the index's columns (:func:`_restrict_columns`)."""
        return Q if self.columns is None else _restrict_columns(Q, self.columns)

    def search(self, Qn, k, exclude_self=False):
        """Top-k of queries Qn scaled by :func:`_pow2_scaled_rows` (same kind and dtype as
        the base)."""
        nq = Qn.shape[0]
        sims = np.empty((nq, k), dtype=self.scaled.dtype)
        idx = np.empty((nq, k), dtype=np.int64)
        qa = self.sqnorms if Qn is self.scaled else _sqnorms(Qn)
        if self.sparse:
            Qr = self._restricted(Qn)
            ti, tp = self.index_arrays
            qi, qp = Qr.indices, Qr.indptr
            if not qi.dtype == qp.dtype == ti.dtype:  # 64-bit indices on one side only
                (qi, qp), (ti, tp) = _index_arrays(Qr, self.index)
            _kernel.topk_csr(Qr.data, qi, qp, self.index.data, ti, tp, qa, self.sqnorms,
                             self.inv_norms, sims, idx, exclude_self)
        else:
            _kernel.topk_dense(Qn, self.index, qa, self.sqnorms, self.inv_norms, sims, idx,
                               exclude_self, min(BLOCK_QUERIES, nq), min(BLOCK_BASE, self.n))
        return sims, idx


def _search_kind(Q, B):
    """The kind a search of Q against B runs in: (CSR, float32) -- CSR if either is sparse,
    float32 only if both are float32."""
    return sp.issparse(Q) or sp.issparse(B), Q.dtype == B.dtype == np.float32


def _as_kind(X, kind):
    """X converted to a kind of :func:`_search_kind` (not copied when it is of that kind)."""
    sparse, single = kind
    dtype = np.float32 if single else np.float64
    return sp.csr_matrix(X, dtype=dtype) if sparse else X.astype(dtype, copy=False)


def _same_kind(Q, B):
    """Q and B converted to the kind their search runs in (:func:`_search_kind`)."""
    kind = _search_kind(Q, B)
    return _as_kind(Q, kind), _as_kind(B, kind)


def _check_k(k, available, what):
    if k is None:
        return available
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"k must be a positive int or None, got {k!r}")
    if k < 1:
        raise ValueError(f"k must be >= 1 (or None for all), got {k}")
    if k > available:
        raise ValueError(f"k={k} exceeds the {available} {what}")
    return int(k)


def topk_cosine(Q: MatrixLike, B: MatrixLike, k: int | None, exclude_self: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` base documents most cosine-similar to each query (exact search).

    Parameters
    ----------
    Q : array-like or sparse matrix, shape (n_queries, n_features)
        The queries.
    B : array-like or sparse matrix, shape (n_base, n_features)
        Dense float32/float64 or sparse (searched as CSR; a dense operand is converted to CSR
        when the other is sparse). float32 is kept only when both are float32.
    k : int or None
        Neighbours per query; None means all of ``B``.
    exclude_self : bool, default False
        Query ``i`` never gets base document ``i`` as a neighbour (for Q = B, e.g. ML-kNN
        training); requires ``n_queries == n_base``.

    Returns
    -------
    similarities : ndarray, shape (n_queries, k), float32 or float64
        Cosines (eq. 2.3) in [-1, 1]; 0 for a zero row. Computed as
        ``sign(d) * sqrt(d² / (aa·bb))`` from the dot product and squared norms of the rows,
        the ratio rounded once: equal cosines of binary or integer-count rows are bit-equal
        (within the limits given in the module docstring: squared norms below 2²⁴ for
        float32, their product below 2⁵³ for float64); for real-valued features (tf-idf)
        only equal rows are guaranteed to tie exactly.
    indices : ndarray of int64, shape (n_queries, k)
        Base indices, sorted by similarity descending, then index ascending.

    Raises
    ------
    ValueError
        Different numbers of features, ``k`` < 1 or beyond the base, ``exclude_self`` with
        different numbers of queries and base documents, empty or non-finite input.
    TypeError
        A ``k`` that is not an int or None, non-numeric input.

    Notes
    -----
    Rows are scaled and their norms computed once; memory beyond the inputs and outputs is
    one bounded similarity block (dense) or one ``n_base`` accumulator (CSR) per thread.
    A sparse base is indexed on the columns it stores, so a declared number of features
    costs nothing by itself (query features absent from the base add nothing to a dot
    product and are left out, with the same bits). Up
    to this tie order, the result equals scikit-learn's
    ``NearestNeighbors(metric="cosine", algorithm="brute")`` with distance
    ``1 - similarity``.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §2.4.2.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import topk_cosine
    >>> B = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [0, 1, 0, 1]], dtype=float)
    >>> sims, idx = topk_cosine([[1, 1, 1, 0], [0, 0, 0, 1]], B, k=2)
    >>> np.round(sims, 4)     # exact ties, broken by base index
    array([[0.8165, 0.8165],
           [0.7071, 0.7071]])
    >>> idx
    array([[0, 1],
           [2, 3]])
    """
    Qv = check_features(Q, "Q")
    Bv = Qv if B is Q else check_features(B, "B")
    if Qv.shape[1] != Bv.shape[1]:
        raise ValueError(f"Q has {Qv.shape[1]} features but B has {Bv.shape[1]}")
    if exclude_self and Qv.shape[0] != Bv.shape[0]:
        raise ValueError(f"exclude_self needs Q and B to be the same documents; got "
                         f"{Qv.shape[0]} queries and {Bv.shape[0]} base documents")
    k = _check_k(k, Bv.shape[0] - bool(exclude_self),
                 "other base documents" if exclude_self else "base documents")
    Qv, Bv = _same_kind(Qv, Bv)
    base = _Base(Bv)
    Qn = base.scaled if B is Q else _pow2_scaled_rows(Qv)
    return base.search(Qn, k, bool(exclude_self))


# ---- classifiers ------------------------------------------------------------------------------

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
        The training documents.
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

    def _decide(self, X):
        Xn, base = self._queries(X)
        k = _check_k(self.k, base.n, "training documents")
        step = max(1, _CHUNK_PAIRS // k)
        parts = [self._from_neighbors(*base.search(Xn[lo:lo + step], k))
                 for lo in range(0, Xn.shape[0], step)]
        return tuple(np.concatenate(p) for p in zip(*parts))

    def _from_neighbors(self, sims, idx):
        """(beliefs, predictions) of queries from their k nearest training documents."""
        y_indptr, y_indices = self._training_labels()
        out = np.zeros((idx.shape[0], self.Y_.shape[1]), dtype=np.float64)
        _kernel.knn_aggregate(sims, idx, y_indptr, y_indices, _AGGREGATES[self.aggregate], out)
        return out, (out > 0).astype(np.uint8)


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
        Smoothing (>= 0); 1 is Laplace smoothing.

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
            documents, a negative or non-finite ``s``, invalid ``X`` or ``Y``.
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
                or not np.isfinite(self.s) or self.s < 0:
            raise ValueError(f"s must be a finite number >= 0, got {self.s!r}")

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

    def _decide(self, X):
        Xn, base = self._queries(X)
        return self._from_neighbors(*base.search(Xn, self.cond_true_.shape[1] - 1))

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
