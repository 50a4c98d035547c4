"""The exact top-k cosine search (:func:`topk_cosine`) and the prepared base documents it
searches (:class:`_Base`), shared with the sharded search of :mod:`fastrank.dask` and with the
VG-RAM WNN's column restriction. Ties and exactness: see :mod:`fastrank.neighbors`."""
import numbers
import threading

import numpy as np
import scipy.sparse as sp

from .._ext import _threads
from .._ext import cosine_topk as _kernel
from .._typing import MatrixLike
from .._validation import check_features

#: Dense search: one similarity block of at most BLOCK_QUERIES x BLOCK_BASE values per thread
#: in memory: BLOCK_QUERIES queries a block against BLOCK_BASE base rows, more queries
#: against a smaller base whose block outgrows the cache, fewer where that would leave a
#: thread without a block.
BLOCK_QUERIES = 256
#: See :data:`BLOCK_QUERIES`.
BLOCK_BASE = 4096
#: A base block larger than this (bytes; about a core's L2 cache) is read from memory again
#: by every query block.
BASE_CACHE_BYTES = 2**20
#: Scratch a thread keeps from one search to the next (bytes, each of its buffers: the
#: scaled copies of the queries and the base in :func:`topk_cosine`; the similarity blocks,
#: one per thread of the search, this much a thread of it), as a BLAS keeps its packing
#: buffers: memory freed at the end of a call comes back as fresh pages, whose first
#: touches (page faults) took a quarter of a search of 10³ base rows × 1 024 features. A
#: larger buffer is allocated by each call; a thread's buffers go when the thread ends.
WORKSPACE_BYTES = 64 * 2**20
_kept = threading.local()


def _workspace(name, shape, dtype, shares=1):
    """An uninitialised array of ``shape`` and ``dtype`` in the calling thread's buffer
    ``name`` (kept for the thread's next call when at most ``shares`` times
    :data:`WORKSPACE_BYTES`): valid until the thread asks for ``name`` again."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes > shares * WORKSPACE_BYTES:
        return np.empty(shape, dtype)
    buffer = getattr(_kept, name, None)
    if buffer is None or buffer.size < nbytes:
        buffer = np.empty(nbytes, np.uint8)
        setattr(_kept, name, buffer)
    return buffer[:nbytes].view(dtype).reshape(shape)


def _pow2_scaled_rows(X, sqnorms=None, out=None):
    """A copy of a validated X (C-contiguous ndarray or CSR), each row multiplied by the power
    of two that brings its largest absolute value into [1/2, 1): scaling by a power of two is
    exact, so exact ties survive (integer rows stay integers times a power of two), cosines
    are unchanged, and the sums cannot overflow. With ``sqnorms`` (an array of X's dtype,
    one per row), the :func:`_sqnorms` of the copy written there too (dense: in the same
    pass). A dense copy is written to ``out`` when given (an array of X's shape and dtype)."""
    if sp.issparse(X):
        data = np.empty_like(X.data)
        _kernel.scale_csr(X.data, X.indptr, data)
        out = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
        if sqnorms is not None:
            _kernel.sqnorms_csr(data, X.indptr, sqnorms)
        return out
    out = np.empty_like(X) if out is None else out
    _kernel.scale_dense(X, out, np.empty(0, X.dtype) if sqnorms is None else sqnorms)
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
    and time then follow the stored entries, not the declared number of features.

    With ``scratch``, a dense base's scaled rows lie in the thread's buffer ``"base"``
    (:func:`_workspace`): a base searched only before the thread builds another (the base of
    one :func:`topk_cosine` call)."""

    def __init__(self, X, scratch=False):
        self.n = X.shape[0]
        self.sqnorms = np.empty(self.n, dtype=X.dtype)
        self.sparse = sp.issparse(X)
        self.scaled = _pow2_scaled_rows(X, self.sqnorms, _workspace("base", X.shape, X.dtype)
                                        if scratch and not self.sparse else None)
        self.inv_norms = np.empty(self.n, dtype=np.float64)
        _kernel.inv_norms(self.sqnorms, self.inv_norms)
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

    def search(self, Qn, k, exclude_self=False, qa=None):
        """Top-k of queries Qn scaled by :func:`_pow2_scaled_rows` (same kind and dtype as
        the base), whose :func:`_sqnorms` are ``qa`` when given."""
        nq = Qn.shape[0]
        sims = np.empty((nq, k), dtype=self.scaled.dtype)
        idx = np.empty((nq, k), dtype=np.int64)
        if qa is None:
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
            block_b = min(BLOCK_BASE, self.n)
            block_q = _query_block(nq, block_b, Qn.shape[1] * Qn.itemsize)
            threads = min(_threads.get_max_threads(), -(-nq // block_q))
            blocks = _workspace("blocks", threads * block_q * block_b * Qn.itemsize, np.uint8,
                                shares=threads)
            _kernel.topk_dense(Qn, self.index, qa, self.sqnorms, self.inv_norms, sims, idx,
                               exclude_self, block_q, block_b, blocks)
        return sims, idx


def _query_block(nq, block_b, row_bytes):
    """Queries per block of the dense search. Every query block reads (and packs) the base
    block again: where that outgrows the cache (BASE_CACHE_BYTES), one thread's queries go
    in as few blocks as keep BLOCK_QUERIES x BLOCK_BASE similarities; and while the queries
    allow, every thread gets a block."""
    cap = BLOCK_QUERIES
    if block_b * row_bytes > BASE_CACHE_BYTES:
        cap = max(cap, BLOCK_QUERIES * BLOCK_BASE // block_b)
    blocks = max(-(-nq // cap), min(nq, _threads.get_max_threads()))
    return -(-nq // blocks)


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
    A thread keeps its dense similarity blocks and the scaled copies of dense inputs for
    its next call (each copy up to 64 MiB, the blocks up to 64 MiB a thread of the search;
    larger ones are freed), as a BLAS keeps its buffers: memory freed after every call
    would come back as fresh pages, a page fault at each first touch.
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
    if not isinstance(exclude_self, (bool, np.bool_)):
        raise TypeError(f"exclude_self must be True or False, got {exclude_self!r}")
    # NaN and infinity are found by the scaling pass (see _finite_norms), not by a scan
    Qv = check_features(Q, "Q", finite=False)
    Bv = Qv if B is Q else check_features(B, "B", finite=False)
    if Qv.shape[1] != Bv.shape[1]:
        raise ValueError(f"Q has {Qv.shape[1]} features but B has {Bv.shape[1]}")
    if exclude_self and Qv.shape[0] != Bv.shape[0]:
        raise ValueError(f"exclude_self needs Q and B to be the same documents; got "
                         f"{Qv.shape[0]} queries and {Bv.shape[0]} base documents")
    k = _check_k(k, Bv.shape[0] - bool(exclude_self),
                 "other base documents" if exclude_self else "base documents")
    Qv, Bv = _same_kind(Qv, Bv)
    qa = None
    if B is not Q:
        qa = np.empty(Qv.shape[0], dtype=Qv.dtype)
        Qn = _pow2_scaled_rows(Qv, qa, None if sp.issparse(Qv)
                               else _workspace("queries", Qv.shape, Qv.dtype))
        _finite_norms(qa, "Q")
    base = _Base(Bv, scratch=True)
    _finite_norms(base.sqnorms, "Q" if B is Q else "B")
    if B is Q:
        Qn = base.scaled
    return base.search(Qn, k, bool(exclude_self), qa)


def _finite_norms(sqnorms, name):
    """ValueError when a row's squared norm (after :func:`_pow2_scaled_rows`) is not finite:
    that row holds NaN or infinity (a finite row, scaled into [-1, 1), has a finite norm;
    NaN or infinity scaled by any power of two stays NaN or infinity, and so does the sum of
    squares it enters)."""
    if not np.isfinite(sqnorms).all():
        raise ValueError(f"{name} contains NaN or infinity")
