"""The :class:`Dataset` value every loader returns, and the limit on the label matrix a file
makes a loader build.
"""
import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._typing import LabelsLike, MatrixLike
from .._validation import MAX_COLUMNS, check_features, check_truth


#: The labels a file makes a loader build may take this many times the file's size ...
LABEL_MATRIX_FACTOR = 64
#: ... or this many bytes, whichever is larger (see :mod:`fastrank.datasets`, "Limits").
LABEL_MATRIX_FLOOR = 2**28


def _check_label_matrix(source, n, q, file_size):
    """ValueError when n documents with q labels (an (n, q) uint8 matrix and q names) exceed
    what a file of ``file_size`` bytes may claim (see :mod:`fastrank.datasets`, "Limits")."""
    if q > MAX_COLUMNS:
        raise ValueError(f"{source}: {q} labels; at most {MAX_COLUMNS} are supported")
    limit = max(LABEL_MATRIX_FLOOR, LABEL_MATRIX_FACTOR * file_size)
    if (n + 64) * q > limit:
        raise ValueError(f"{source}: {n} documents x {q} labels would need "
                         f"{(n + 64) * q / 2**20:.1f} MiB, more than a {file_size}-byte file "
                         f"may claim ({limit / 2**20:.1f} MiB)")


class DefaultNames(Sequence):
    """The names ``prefix + str(j)`` of columns ``j = 0 .. n - 1`` ("f0", "f1", ...), made
    one by one when read: a read-only sequence whose memory does not grow with ``n``, so
    that a sparse matrix declaring billions of features costs nothing until its names are
    read. Indexing gives a name, a slice a list of the names it covers; it compares equal to
    a list or tuple of the same names.

    Examples
    --------
    >>> from fastrank.datasets import DefaultNames
    >>> names = DefaultNames(2_000_000_000)
    >>> len(names), names[:2], names[-1], "f7" in names
    (2000000000, ['f0', 'f1'], 'f1999999999', True)
    >>> DefaultNames(3) == ["f0", "f1", "f2"]
    True
    """

    def __init__(self, n: int, prefix: str = "f") -> None:
        self._n, self._prefix = operator.index(n), str(prefix)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [f"{self._prefix}{i}" for i in range(*j.indices(self._n))]
        j = operator.index(j)
        if not -self._n <= j < self._n:
            raise IndexError(f"name index {j} out of range for {self._n} names")
        return f"{self._prefix}{j % self._n}"

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or not name.startswith(self._prefix):
            return False
        digits = name[len(self._prefix):]
        return digits.isdecimal() and digits.isascii() and str(int(digits)) == digits \
            and int(digits) < self._n

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DefaultNames):
            return (self._n, self._prefix) == (other._n, other._prefix)
        if isinstance(other, (list, tuple)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compares equal to lists

    def __repr__(self) -> str:
        shown = self[:3] if self._n <= 4 else [*self[:2], "...", self[-1]]
        return "DefaultNames([" + ", ".join(x if x == "..." else repr(x) for x in shown) + "])"


class Dataset:
    """Documents with their label sets.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_documents, n_features), or None
        Features (stored as canonical CSR float64, explicit zeros dropped; the caller's
        arrays are never changed); None for raw text.
    Y : 0/1 array (dense or sparse), shape (n_documents, n_labels)
        The labels.
    texts : iterable of str, optional
        The raw documents.
    feature_names, label_names : sequence of str, optional
        Default "f0", "f1", ... and "l0", "l1", ...
    name : str, default ""
        The data set's name.
    info : dict, optional
        Provenance (source, licence, citation).
    dense : bool, default False
        Store ``X`` as a C-contiguous float64 NumPy array instead of CSR, for estimators
        that refuse sparse input (e.g. ``StandardScaler``, which centres); fastrank's own
        estimators take either.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of float64, shape (n_documents, n_features), or None
        None for a raw-text data set that has not been indexed yet; a float64 ndarray when
        made with ``dense=True`` (:meth:`take` keeps that).
    Y : ndarray of uint8, shape (n_documents, n_labels)
        C-contiguous 0/1 indicator matrix.
    texts : list of str or None
        The raw documents (raw-text data sets only).
    feature_names : list of str, or DefaultNames
        The names given, or the default "f0", "f1", ... as a :class:`DefaultNames`, which
        makes each name when it is read (a wide sparse X costs nothing for its names).
    label_names : list of str
    name : str
        The data set's name.
    info : dict
        Provenance (source, licence, citation) when known.

    Raises
    ------
    ValueError
        Neither ``X`` nor ``texts``, non-binary ``Y``, ``X`` not 2-D, empty, non-finite or
        malformed (sparse), more than 2**31 - 1 features, lengths that differ (``X`` is
        checked as every estimator checks its features).
    TypeError
        Non-numeric ``X``, ``texts`` not strings.

    Examples
    --------
    >>> from fastrank.datasets import Dataset
    >>> toy = Dataset([[0.5, 0.0], [1.0, 2.0]], [[1, 0], [1, 1]], label_names=["a", "b"])
    >>> toy.X.nnz, toy.Y.dtype, toy.summary()["cardinality"]
    (3, dtype('uint8'), 1.5)
    """

    def __init__(self, X: MatrixLike | None, Y: LabelsLike, *, texts: Iterable[str] | None = None,
                 feature_names: Sequence[str] | None = None,
                 label_names: Sequence[str] | None = None, name: str = "",
                 info: dict[str, Any] | None = None, dense: bool = False) -> None:
        if not isinstance(dense, bool):
            raise TypeError(f"dense must be True or False, got {dense!r}")
        if X is None and texts is None:
            raise ValueError("a Dataset needs X (features) or texts (raw documents)")
        if isinstance(Y, np.ndarray) and Y.dtype == np.uint8 and Y.ndim == 2 and Y.size \
                and Y.flags.c_contiguous:
            if Y.max() > 1:  # fast path for the loaders' own matrices
                raise ValueError("Y must be binary (0/1)")
        else:
            Y = check_truth(Y, name="Y")
        if X is not None:
            given, X = X, check_features(X, "X")
            if dense:  # a copy: the caller's array is never shared
                X = X.toarray() if sp.issparse(X) else np.array(X, np.float64, order="C")
            elif sp.issparse(X):
                X = X.astype(np.float64, copy=False)
                if not X.data.all():
                    if np.may_share_memory(X.data, getattr(given, "data", ())):
                        X = X.copy()  # never change the caller's arrays in place
                    X.eliminate_zeros()
            else:
                X = sp.csr_matrix(X, dtype=np.float64)  # stores no zero
            if X.shape[0] != Y.shape[0]:
                raise ValueError(f"X has {X.shape[0]} documents but Y has {Y.shape[0]}")
            if feature_names is not None and len(feature_names) != X.shape[1]:
                raise ValueError(f"{len(feature_names)} feature names for {X.shape[1]} features")
        if texts is not None:
            texts = [*texts]
            if len(texts) != Y.shape[0]:
                raise ValueError(f"{len(texts)} texts but Y has {Y.shape[0]} documents")
            if not all(isinstance(t, str) for t in texts):
                raise TypeError("texts must be strings")
        if label_names is None:
            label_names = [f"l{j}" for j in range(Y.shape[1])]
        if len(label_names) != Y.shape[1]:
            raise ValueError(f"{len(label_names)} label names for {Y.shape[1]} labels")
        self.X, self.Y, self.texts = X, Y, texts
        self._feature_names = None if feature_names is None else [*map(str, feature_names)]
        self.label_names = [*map(str, label_names)]
        self.name = str(name)
        self.info = dict(info or {})

    @property
    def feature_names(self) -> Sequence[str] | None:
        """Feature names: a list, or :class:`DefaultNames` (None for unindexed raw text)."""
        if self._feature_names is None and self.X is not None:
            return DefaultNames(self.X.shape[1])
        return self._feature_names

    @feature_names.setter
    def feature_names(self, names: Sequence[str] | None) -> None:
        self._feature_names = None if names is None else [*map(str, names)]

    @property
    def n_documents(self) -> int:
        """Number of documents."""
        return self.Y.shape[0]

    def __len__(self) -> int:
        return self.Y.shape[0]

    def take(self, indices: npt.ArrayLike, name: str | None = None) -> "Dataset":
        """The documents at ``indices`` (e.g. one fold of a splitter), as a new Dataset.

        Parameters
        ----------
        indices : array-like of int or bool
            Integer positions in [-n_documents, n_documents) (negative ones count from the
            end, as in NumPy), or a boolean mask of length n_documents.
        name : str, optional
            The new data set's name (default: this one's).

        Returns
        -------
        Dataset

        Raises
        ------
        TypeError
            Indices of another dtype (floats, strings, ...).
        IndexError
            Out-of-range positions.
        ValueError
            Indices not 1-D, or a mask of the wrong length.

        Examples
        --------
        >>> from fastrank import datasets
        >>> datasets.load("yeast").take([0, 5, 9]).Y.shape
        (3, 14)
        """
        indices = self._positions(indices)
        return Dataset(None if self.X is None else self.X[indices], self.Y[indices],
                       texts=None if self.texts is None else [self.texts[i] for i in indices],
                       feature_names=self._feature_names, label_names=self.label_names,
                       name=self.name if name is None else name, info=self.info,
                       dense=isinstance(self.X, np.ndarray))

    def _positions(self, indices) -> np.ndarray:
        """``indices`` (integer positions or a boolean mask) as a 1-D intp array in [0, n)."""
        n = self.n_documents
        idx = np.asarray(indices)
        if idx.ndim != 1:
            raise ValueError(f"indices must be 1-D, got shape {idx.shape}")
        if idx.dtype == bool:
            if idx.size != n:
                raise ValueError(f"boolean mask has length {idx.size}, expected "
                                 f"n_documents={n}")
            return np.flatnonzero(idx)
        if idx.size == 0 and idx.dtype.kind == "f":  # take([]): an empty selection
            return np.empty(0, dtype=np.intp)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers or a boolean mask, got dtype "
                            f"{idx.dtype}")
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = idx.min() if idx.min() < -n else idx.max()
            raise IndexError(f"index {int(bad)} is out of range for {n} documents")
        idx = idx.astype(np.intp)
        return np.where(idx < 0, idx + n, idx)

    def summary(self) -> dict[str, Any]:
        """Statistics of the data set (Tsoumakas et al.'s definitions).

        Returns
        -------
        dict
            ``name``, ``documents``, ``features`` (None for unindexed text), ``labels``,
            ``cardinality`` (mean labels per document), ``density`` (cardinality / labels),
            ``distinct_label_sets``, and ``label_frequency_min`` / ``label_frequency_max``
            (the smallest and largest number of documents per label).

        References
        ----------
        .. [1] G. Tsoumakas, I. Katakis and I. Vlahavas, "Mining multi-label data", in *Data
           Mining and Knowledge Discovery Handbook*, Springer, 2010, 667-685.

        Examples
        --------
        >>> from fastrank import datasets
        >>> s = datasets.load("yeast").summary()
        >>> s["documents"], s["labels"], round(s["cardinality"], 3), s["distinct_label_sets"]
        (2417, 14, 4.237, 198)
        """
        Y = self.Y
        per_label = Y.sum(axis=0, dtype=np.int64)
        cardinality = float(Y.sum(dtype=np.int64)) / Y.shape[0]
        packed = np.packbits(Y.astype(bool), axis=1)
        distinct = np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel()).size
        return {"name": self.name, "documents": int(Y.shape[0]),
                "features": None if self.X is None else int(self.X.shape[1]),
                "labels": int(Y.shape[1]), "cardinality": cardinality,
                "density": cardinality / Y.shape[1], "distinct_label_sets": int(distinct),
                "label_frequency_min": int(per_label.min()),
                "label_frequency_max": int(per_label.max())}

    def __repr__(self):
        s = self.summary()
        feats = "raw text" if s["features"] is None else f"{s['features']} features"
        return (f"Dataset({s['name']!r}: {s['documents']} documents, {feats}, {s['labels']} "
                f"labels, cardinality {s['cardinality']:.3f}, density {s['density']:.3f}, "
                f"{s['distinct_label_sets']} distinct label sets, label frequency "
                f"{s['label_frequency_min']}..{s['label_frequency_max']})")
