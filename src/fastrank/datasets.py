"""Multi-label data in: ARFF (Mulan and MEKA), libsvm/svmlight, raw text, embedded and
synthetic data sets, and the Mulan benchmark sets downloaded on demand (:func:`fetch`), all
as one :class:`Dataset` value.

Notes
-----
Conventions of every loader:

* ``X`` is a canonical CSR float64 matrix (sorted indices, zeros not stored), ``Y`` a
  C-contiguous uint8 0/1 matrix of shape (documents, labels); a raw-text data set has
  ``X = None`` and ``texts`` set until it is indexed (:class:`fastrank.text.TfidfIndexer`).
* Bad files raise ``ValueError("<file>: line <n>: <what was expected>")``.
* ARFF nominal feature values are encoded by their position in the declaration (Weka's and
  liac-arff's ``encode_nominal`` convention: ``{YES, NO}`` gives YES=0, NO=1); omitted
  sparse entries are 0. Label attributes must be ``{0,1}`` nominal or numeric 0/1. Missing
  values (``?``), ``string``/``date``/``relational`` attributes and instance weights are
  rejected with a clear error.
* Limits: a file may declare more columns than it fills (a libsvm header, a large feature
  or label index), but at most ``MAX_COLUMNS`` = 2**31 - 1 (the kernels' int32 positions);
  and the labels a file makes a loader build -- the dense matrix ``Y`` and the label names,
  counted as (documents + 64) x labels bytes -- may take at most ``LABEL_MATRIX_FACTOR`` =
  64 times the file's size or ``LABEL_MATRIX_FLOOR`` = 256 MiB, whichever is larger.
  Beyond either the loader raises ValueError before allocating, so a small file never
  claims gigabytes. Default feature names ("f0", "f1", ...) are built only when first read.
"""
import builtins
import contextlib
import csv
import hashlib
import http.client
import io
import json
import lzma
import math
import numbers
import operator
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._atomic import atomic_file, tidy
from ._typing import LabelsLike, MatrixLike, PathLikeStr, RandomStateLike
from ._validation import MAX_COLUMNS, check_features, check_indicator_size, check_n_labels, \
    check_random_state, check_truth

__all__ = ["Dataset", "DefaultNames", "load", "list", "fetch", "FetchError", "ChecksumError",
           "MULAN_URL", "FETCH_DEADLINE", "load_arff", "load_libsvm", "save_libsvm",
           "load_text", "make_multilabel"]

#: The labels a file makes a loader build may take this many times the file's size ...
LABEL_MATRIX_FACTOR = 64
#: ... or this many bytes, whichever is larger (see the module docstring, "Limits").
LABEL_MATRIX_FLOOR = 2**28


def _check_label_matrix(source, n, q, file_size):
    """ValueError when n documents with q labels (an (n, q) uint8 matrix and q names) exceed
    what a file of ``file_size`` bytes may claim (see the module docstring, "Limits")."""
    if q > MAX_COLUMNS:
        raise ValueError(f"{source}: {q} labels; at most {MAX_COLUMNS} are supported")
    limit = max(LABEL_MATRIX_FLOOR, LABEL_MATRIX_FACTOR * file_size)
    if (n + 64) * q > limit:
        raise ValueError(f"{source}: {n} documents x {q} labels would need "
                         f"{(n + 64) * q / 2**20:.1f} MiB, more than a {file_size}-byte file "
                         f"may claim ({limit / 2**20:.1f} MiB)")


# ---- the Dataset value -------------------------------------------------------------------

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
        if isinstance(other, (builtins.list, tuple)):
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

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of float64, shape (n_documents, n_features), or None
        None for a raw-text data set that has not been indexed yet.
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
                 info: dict[str, Any] | None = None) -> None:
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
            if sp.issparse(X):
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
                       name=self.name if name is None else name, info=self.info)

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


# ---- ARFF ----------------------------------------------------------------------------------

def _unquote(s):
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return re.sub(r"\\(.)", r"\1", s[1:-1])
    return s


def _split_quoted(s, sep):
    """Split ``s`` on ``sep`` outside single/double quotes; pieces stripped and unquoted."""
    if "'" not in s and '"' not in s:
        return [p.strip() for p in s.split(sep)]
    out, cur, quote, k = [], [], None, 0
    while k < len(s):
        c = s[k]
        if quote:
            cur.append(c)
            if c == "\\" and k + 1 < len(s):
                cur.append(s[k + 1])
                k += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == sep:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        k += 1
    if quote:
        raise ValueError("unterminated quote")
    out.append("".join(cur).strip())
    return [_unquote(p) for p in out]


def _name_and_rest(s):
    """Split ``<name> <rest>`` where the name may be quoted."""
    s = s.strip()
    if not s:
        raise ValueError("expected '@attribute <name> <type>'")
    if s[:1] in ("'", '"'):
        k = 1
        while k < len(s) and s[k] != s[0]:
            k += 2 if s[k] == "\\" else 1
        if k >= len(s):
            raise ValueError("unterminated quoted name")
        return _unquote(s[:k + 1]), s[k + 1:].strip()
    parts = s.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _read_arff_header(f, path):
    """Read up to and including ``@data``; returns (relation, attributes, next line number).
    Each attribute is (name, None for numeric or the list of nominal values, line)."""
    relation, attrs, lineno = "", [], 0
    for raw in f:
        lineno += 1
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise ValueError(f"{path}: line {lineno}: not valid UTF-8") from None
        if not line or line.startswith("%"):
            continue
        key = line.split(None, 1)[0].lower()
        body = line[len(key):].strip()
        try:
            if key == "@relation":
                relation = _unquote(body)
            elif key == "@attribute":
                name, kind = _name_and_rest(body)
                if kind.startswith("{"):
                    if not kind.endswith("}"):
                        raise ValueError("nominal declaration must end with '}'")
                    attrs.append((name, _split_quoted(kind[1:-1], ","), lineno))
                elif kind.lower() in ("numeric", "real", "integer"):
                    attrs.append((name, None, lineno))
                else:
                    raise ValueError(f"attribute {name!r} has type {kind!r}; supported: "
                                     "numeric, real, integer, {nominal values}")
            elif key == "@data":
                if not attrs:
                    raise ValueError("@data before any @attribute")
                return relation, attrs, lineno + 1
            else:
                raise ValueError(f"expected @relation, @attribute or @data, found {line[:40]!r}")
        except ValueError as exc:
            if str(exc).startswith(str(path)):
                raise
            raise ValueError(f"{path}: line {lineno}: {exc}") from None
    raise ValueError(f"{path}: line {lineno}: file ends before the @data section (truncated?)")


def _labels_from_xml(xml_path):
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"{xml_path}: line {exc.position[0]}: malformed XML ({exc.msg})") from None
    names = [el.get("name") for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "label"]
    if not names or None in names:
        raise ValueError(f"{xml_path}: expected <label name=\"...\"> elements (Mulan label file)")
    return names


def _label_positions(labels, attrs, relation, path):
    """Indices of the label attributes: from an XML file, a list of names, a count (the last
    n attributes, Mulan's layout), a sibling ``<stem>.xml``, or MEKA's ``-C n`` relation
    option (n > 0: the first n attributes, n < 0: the last -n)."""
    n_attrs = len(attrs)
    if labels is None:
        sibling = os.path.splitext(os.fspath(path))[0] + ".xml"
        meka = re.search(r"-C\s+(-?\d+)", relation)
        if os.path.isfile(sibling):
            labels = sibling
        elif meka:
            c = int(meka.group(1))
            if c == 0 or abs(c) >= n_attrs:
                raise ValueError(f"{path}: relation option -C {c} does not fit {n_attrs} "
                                 "attributes")
            return np.arange(c) if c > 0 else np.arange(n_attrs + c, n_attrs)
        else:
            raise ValueError(f"{path}: which attributes are labels? pass labels= (the Mulan XML "
                             "file, a label count or label names); no sibling .xml and no "
                             "MEKA '-C n' in @relation")
    if isinstance(labels, (int, np.integer)) and not isinstance(labels, bool):
        if not 0 < labels < n_attrs:
            raise ValueError(f"{path}: labels={labels} must be between 1 and {n_attrs - 1}")
        return np.arange(n_attrs - labels, n_attrs)
    if isinstance(labels, (str, os.PathLike)):
        labels = _labels_from_xml(labels)
    index = {name: a for a, (name, _, _) in enumerate(attrs)}
    missing = [name for name in labels if name not in index]
    if missing:
        raise ValueError(f"{path}: label(s) {missing[:5]} are not attributes of the file "
                         f"(wrong label file?)")
    pos = np.sort(np.fromiter((index[name] for name in labels), dtype=np.intp))
    if np.unique(pos).size != pos.size or pos.size == n_attrs:
        raise ValueError(f"{path}: labels must be distinct and leave at least one feature")
    return pos


def _parse_rows(data, first_line, source, names, is_label, nominal):
    """X (CSR) and Y (uint8) from ARFF-style data rows (dense CSV or sparse), through the
    compiled tokenizer; ``nominal[a]`` is None (numeric) or a dict bytes -> float."""
    from ._ext.text_formats import ATTRIBUTE_KINDS, parse_arff_data

    col = np.empty(len(names), dtype=np.int32)
    n_labels = int(is_label.sum())
    col[is_label == 1] = np.arange(n_labels)
    col[is_label == 0] = np.arange(len(names) - n_labels)
    binary = {b"0": 0.0, b"1": 1.0}
    kind = np.array([ATTRIBUTE_KINDS["numeric" if m is None else "binary" if m == binary
                                     else "nominal"] for m in nominal], dtype=np.uint8)
    xp, xi, xv, yp, yi = parse_arff_data(data, first_line, source, names, col, is_label,
                                         nominal, kind)
    n = xp.size - 1
    if n == 0:
        raise ValueError(f"{source}: line {first_line}: no data rows")
    _check_label_matrix(source, n, n_labels, len(data))
    X = sp.csr_matrix((xv, xi, xp), shape=(n, len(names) - n_labels))
    Y = np.zeros((n, n_labels), dtype=np.uint8)
    Y[np.repeat(np.arange(n), np.diff(yp)), yi] = 1
    return X, Y


def load_arff(path: PathLikeStr, labels: PathLikeStr | Sequence[str] | int | None = None,
              name: str | None = None) -> Dataset:
    """Load a Mulan or MEKA ARFF file (dense and sparse ``{index value, ...}`` rows).

    Features and labels keep the attribute order of the file (also when the XML lists the
    labels in another order). The data section is tokenized in one compiled pass into CSR.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.arff`` file.
    labels : str, os.PathLike, sequence of str, int or None, default None
        Which attributes are labels -- the Mulan XML label file's path, a list of attribute
        names, or an int n (the last n attributes, Mulan's layout). None: the sibling
        ``<stem>.xml`` if it exists, else MEKA's ``-C n`` in ``@relation`` (n > 0: first n
        attributes, n < 0: last -n).
    name : str, optional
        The Dataset's name (default: the file's stem).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        A malformed file (``"<file>: line <n>: <what was expected>"``), labels that cannot
        be found, unsupported attribute types or missing values, limits exceeded (see the
        module docstring).
    OSError
        The file cannot be read.

    References
    ----------
    .. [1] G. Tsoumakas, E. Spyromitros-Xioufis, J. Vilcek and I. Vlahavas, "Mulan: a Java
       library for multi-label learning", Journal of Machine Learning Research 12,
       2411-2414, 2011.

    Examples
    --------
    >>> import os, tempfile
    >>> from fastrank.datasets import load_arff
    >>> arff = '''@relation toy
    ... @attribute f0 numeric
    ... @attribute f1 numeric
    ... @attribute a {0,1}
    ... @attribute b {0,1}
    ... @data
    ... 0.5,1,1,0
    ... {1 2,3 1}
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "toy.arff")
    ...     with open(path, "w") as f:
    ...         _ = f.write(arff)
    ...     data = load_arff(path, labels=2)          # the last two attributes, as Mulan
    >>> data.X.toarray(), data.Y, data.label_names
    (array([[0.5, 1. ],
           [0. , 2. ]]), array([[1, 0],
           [0, 1]], dtype=uint8), ['a', 'b'])
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        relation, attrs, first_line = _read_arff_header(f, path)
        data = f.read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise ValueError(f"{path}: line {line}: not valid UTF-8") from None
    label_pos = _label_positions(labels, attrs, relation, path)
    is_label = np.zeros(len(attrs), dtype=np.uint8)
    is_label[label_pos] = 1
    nominal: builtins.list[dict[bytes, float] | None] = []
    for a, (attr, values, line) in enumerate(attrs):
        if values is None:
            nominal.append(None)
        elif is_label[a]:
            if not set(values) <= {"0", "1"}:
                raise ValueError(f"{path}: line {line}: label attribute {attr!r} must be "
                                 f"{{0,1}} or numeric, declared {{{', '.join(values)}}}")
            nominal.append({b"0": 0.0, b"1": 1.0})
        else:
            nominal.append({v.encode("utf-8"): float(k) for k, v in enumerate(values)})
    names = [a[0] for a in attrs]
    X, Y = _parse_rows(data, first_line, path, names, is_label, nominal)
    return Dataset(X, Y, feature_names=[names[a] for a in np.flatnonzero(is_label == 0)],
                   label_names=[names[a] for a in label_pos],
                   name=name or os.path.splitext(os.path.basename(path))[0],
                   info={"source": os.path.abspath(path), "relation": relation})


# ---- libsvm / svmlight ---------------------------------------------------------------------

# the first line written by save_libsvm (a comment for every other svmlight reader)
_LIBSVM_HEADER = re.compile(rb"# fastrank n_features=(?P<f>[0-9]{1,12}) "
                            rb"n_labels=(?P<q>[0-9]{1,12})"
                            rb"(?: zero_based=(?P<z>[01]))?[ \t]*\r?(?:\n|\Z)")


def load_libsvm(path: PathLikeStr, n_features: int | None = None, n_labels: int | None = None,
                zero_based: bool | Literal["auto"] = "auto", name: str | None = None
                ) -> Dataset:
    """Load a multi-label libsvm/svmlight file: ``l1,l2,... idx:val idx:val ...``.

    Labels are integers. With ``n_labels`` they must lie in [0, n_labels) and label j is
    column j; without it the columns are the distinct labels found, in increasing order
    (``label_names`` holds them). Feature indices are one-based unless ``zero_based`` is
    True; ``"auto"`` means zero-based when an index 0 occurs. ``# comments`` are ignored,
    except a first line ``# fastrank n_features=F n_labels=Q zero_based=Z`` as written by
    :func:`save_libsvm`: it supplies ``n_features``, ``n_labels`` and ``zero_based`` (Z is 0
    or 1) when they are not given, so that label and feature columns that are all zero
    survive the round trip. Without that line, plain libsvm files are read as described.

    Feature indices and labels must be integers below 2**31 (labels may be negative when
    ``n_labels`` is not given); ``n_features`` and ``n_labels``, given or from the header,
    are bounded as described in the module docstring ("Limits").

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    n_features : int, optional
        Number of feature columns (default: the largest index seen, or the header's).
    n_labels : int, optional
        Number of label columns (see above).
    zero_based : bool or "auto", default "auto"
        Whether feature indices start at 0.
    name : str, optional
        The Dataset's name (default: the file's stem).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        A malformed file (``"<file>: line <n>: ..."``), indices or labels out of range,
        limits exceeded.
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from fastrank import datasets
    >>> yeast = datasets.load("yeast").take(range(5))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "yeast5.svm")
    ...     datasets.save_libsvm(yeast, path)
    ...     back = datasets.load_libsvm(path)
    >>> back.X.shape, back.Y.shape, (back.X != yeast.X).nnz, bool((back.Y == yeast.Y).all())
    ((5, 103), (5, 14), 0, True)
    """
    from ._ext.text_formats import parse_libsvm

    path = os.fspath(path)
    if n_features is not None:
        n_features = check_n_labels(n_features, "n_features")
    if n_labels is not None:
        n_labels = check_n_labels(n_labels)
    with open(path, "rb") as f:
        data = f.read()
    header = _LIBSVM_HEADER.match(data)
    if header is not None:
        try:
            if n_features is None:
                n_features = check_n_labels(int(header["f"]), "n_features")
            if n_labels is None:
                n_labels = check_n_labels(int(header["q"]))
        except ValueError as exc:
            raise ValueError(f"{path}: line 1: header {exc}") from None
        if zero_based == "auto" and header["z"] is not None:
            zero_based = header["z"] == b"1"
    xp, xi, xv, yp, yl = parse_libsvm(data, path)
    n = xp.size - 1
    if n == 0:
        raise ValueError(f"{path}: line 1: no data lines")
    if zero_based == "auto":
        zero_based = bool(xi.size) and int(xi.min()) == 0
    elif not isinstance(zero_based, bool):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if not zero_based:
        if xi.size and xi.min() == 0:
            raise ValueError(f"{path}: feature index 0 in a one-based file (zero_based=False)")
        xi = xi - 1
    width = int(xi.max()) + 1 if xi.size else 0
    if width > MAX_COLUMNS:
        raise ValueError(f"{path}: feature index {width - 1} too large (at most "
                         f"{MAX_COLUMNS} features)")
    if n_features is None:
        n_features = max(width, 1)
    elif width > n_features:
        raise ValueError(f"{path}: feature index {width - 1 + (not zero_based)} exceeds "
                         f"n_features={n_features}")
    if n_labels is None:
        names, cols = np.unique(yl, return_inverse=True)
        if names.size == 0:
            raise ValueError(f"{path}: no labels in the file; pass n_labels")
        label_names: Sequence[Any] = [str(v) for v in names]
    else:
        if yl.size and (yl.min() < 0 or yl.max() >= n_labels):
            bad = int(yl.min()) if yl.min() < 0 else int(yl.max())
            raise ValueError(f"{path}: label {bad} out of range for n_labels={n_labels}")
        cols, label_names = yl, range(n_labels)  # names made after the size check
    _check_label_matrix(path, n, len(label_names), len(data))
    label_names = [str(j) for j in label_names]
    Y = np.zeros((n, len(label_names)), dtype=np.uint8)
    Y[np.repeat(np.arange(n), np.diff(yp)), cols] = 1
    X = sp.csr_matrix((xv, xi.astype(np.int32), xp), shape=(n, n_features))
    return Dataset(X, Y, label_names=label_names,
                   name=name or os.path.splitext(os.path.basename(path))[0],
                   info={"source": os.path.abspath(path)})


def save_libsvm(dataset: Dataset, path: PathLikeStr, zero_based: bool = False) -> None:
    """Write ``dataset`` (X and Y) as a multi-label libsvm file: label columns (0-based) then
    ``index:value`` pairs (one-based unless ``zero_based``), values with 17 significant
    digits so that :func:`load_libsvm` reads back the same float64 values. A document with
    neither labels nor features is written as an explicit zero of the first feature.

    The first line is the comment ``# fastrank n_features=F n_labels=Q zero_based=Z``
    (ignored by other svmlight readers, e.g. scikit-learn's): :func:`load_libsvm` takes the
    shape and the index base from it, so ``load_libsvm(path)`` gives back X and Y with the
    same shape and values, all-zero label or feature columns included. The label and
    feature names are not stored (they reload as "0".."Q-1" and "f0".."f{F-1}"). Written
    atomically: an error while writing leaves ``path`` as it was.

    Parameters
    ----------
    dataset : Dataset
        An indexed data set (``X`` set).
    path : str or os.PathLike
        The file to write.
    zero_based : bool, default False
        Write zero-based feature indices.

    Raises
    ------
    TypeError
        ``dataset`` is not a Dataset.
    ValueError
        ``dataset.X`` is None (raw text not indexed yet).
    OSError
        The file cannot be written.

    Examples
    --------
    See :func:`load_libsvm`.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a fastrank.datasets.Dataset, got "
                        f"{type(dataset).__name__}")
    if dataset.X is None:
        raise ValueError("dataset has no feature matrix (raw text); index it first")
    if not isinstance(zero_based, bool):
        raise TypeError(f"zero_based must be True or False, got {zero_based!r}")
    X, Y = dataset.X, dataset.Y
    if not (sp.issparse(X) and X.format == "csr") or not isinstance(Y, np.ndarray) \
            or Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise TypeError("dataset.X must be a CSR matrix and dataset.Y a 2-D array with a row "
                        "per document, as Dataset makes them")
    off = 0 if zero_based else 1
    with atomic_file(path) as raw:
        f = io.TextIOWrapper(raw, encoding="ascii", newline="\n")
        f.write(f"# fastrank n_features={X.shape[1]} n_labels={Y.shape[1]} "
                f"zero_based={int(zero_based)}\n")
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            labels = ",".join(map(str, np.flatnonzero(Y[i])))
            feats = " ".join(f"{j + off}:{v:.17g}" for j, v in zip(X.indices[lo:hi].tolist(),
                                                                 X.data[lo:hi].tolist()))
            if not labels and not feats:
                feats = f"{off}:0"  # an explicit zero: a blank line would be skipped
            f.write(f"{labels} {feats}\n")
        f.flush()
        f.detach()  # atomic_file closes (after syncing) the underlying file itself


# ---- raw text --------------------------------------------------------------------------------

def _read_text_file(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}: line {line}: not valid UTF-8") from None


def _records(path, fmt):
    """(line, record) pairs of a JSON list, JSON Lines or CSV file."""
    text = _read_text_file(path)
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            return [(reader.line_num, row) for row in reader]
        except csv.Error as exc:
            raise ValueError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    if fmt == "jsonl":
        out = []
        for k, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append((k, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {k}: malformed JSON ({exc.msg})") from None
                except RecursionError:
                    raise ValueError(f"{path}: line {k}: JSON nested too deeply") from None
        return out
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    if not isinstance(doc, builtins.list):
        raise ValueError(f"{path}: line 1: expected a JSON list of records")
    return [(None, rec) for rec in doc]


_TEXT_FORMATS: dict[str, Literal["json", "jsonl", "csv"]] = {
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def load_text(path: PathLikeStr, text_field: str = "text", labels_field: str = "labels",
              format: Literal["json", "jsonl", "csv"] | None = None, label_sep: str = ",",
              name: str | None = None) -> Dataset:
    """Load raw documents with label lists from JSON (a list of objects), JSON Lines or CSV.

    ``format`` is "json", "jsonl" or "csv" (default: from the extension). In JSON a record's
    labels are a list of strings (a single string is one label); in CSV the labels cell is
    split on ``label_sep``. Label columns are the distinct labels in sorted order. The result
    has ``X = None`` and ``texts``: index it with :class:`fastrank.text.TfidfIndexer` fitted
    on the training documents only.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    text_field, labels_field : str, default "text", "labels"
        The record fields (CSV columns) of the text and of the labels.
    format : {"json", "jsonl", "csv"}, optional
        Default: from the extension (.json; .jsonl or .ndjson; .csv).
    label_sep : str, default ","
        Separator of the labels in a CSV cell.
    name : str, optional
        The Dataset's name (default: the file's stem).

    Returns
    -------
    Dataset
        With ``X = None``.

    Raises
    ------
    ValueError
        An unknown format, a malformed file or record (missing field, text not a string,
        labels not strings).
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from fastrank.datasets import load_text
    >>> records = [{"text": "cultivo de arroz", "labels": ["agro"]},
    ...            {"text": "venda de carros", "labels": ["comercio", "auto"]}]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "docs.json")
    ...     with open(path, "w") as f:
    ...         json.dump(records, f)
    ...     data = load_text(path)
    >>> data.texts, data.label_names
    (['cultivo de arroz', 'venda de carros'], ['agro', 'auto', 'comercio'])
    >>> data.Y
    array([[1, 0, 0],
           [0, 1, 1]], dtype=uint8)
    """
    path = os.fspath(path)
    if format is None:
        ext = os.path.splitext(path)[1].lower()
        if ext not in _TEXT_FORMATS:
            raise ValueError(f"{path}: cannot tell the format from {ext!r}; pass format= one "
                             f"of 'json', 'jsonl', 'csv'")
        format = _TEXT_FORMATS[ext]
    elif format not in ("json", "jsonl", "csv"):
        raise ValueError(f"unknown format={format!r}; valid: 'json', 'jsonl', 'csv'")
    texts, label_lists = [], []
    for k, (line, rec) in enumerate(_records(path, format)):
        where = f"{path}: line {line}" if line is not None else f"{path}: record {k}"
        if not isinstance(rec, dict) or text_field not in rec or labels_field not in rec:
            raise ValueError(f"{where}: expected an object with fields {text_field!r} and "
                             f"{labels_field!r}")
        text, labels = rec[text_field], rec[labels_field]
        if format == "csv":
            labels = [s.strip() for s in (labels or "").split(label_sep) if s.strip()]
        elif isinstance(labels, str):
            labels = [labels]
        if not isinstance(text, str) or not isinstance(labels, builtins.list) \
                or not all(isinstance(s, (str, int)) for s in labels):
            raise ValueError(f"{where}: {text_field!r} must be a string and {labels_field!r} a "
                             "list of labels")
        texts.append(text)
        label_lists.append([str(s) for s in labels])
    if not texts:
        raise ValueError(f"{path}: no documents")
    names = sorted({s for labels in label_lists for s in labels})
    if not names:
        raise ValueError(f"{path}: no labels in any document")
    _check_label_matrix(path, len(texts), len(names), os.path.getsize(path))
    index = {s: j for j, s in enumerate(names)}
    Y = np.zeros((len(texts), len(names)), dtype=np.uint8)
    for i, labels in enumerate(label_lists):
        Y[i, [index[s] for s in labels]] = 1
    return Dataset(None, Y, texts=texts, label_names=names,
                   name=name or os.path.splitext(os.path.basename(path))[0],
                   info={"source": os.path.abspath(path)})


# ---- embedded data sets ----------------------------------------------------------------------

_EMBEDDED = {
    "yeast": {
        "name": "yeast",
        "file": "yeast.csv.xz",
        # SHA-256 of the CSV, the content of river's yeast.csv.gz (recompressed with xz)
        "csv_sha256": "fd17cb9b53acaaf5e82a9e0795e2667167775915c0e32c1f6fe0fadb0d3bd703",
        "documents": 2417, "features": 103, "labels": 14,
        "description": "Gene functional classes of the yeast Saccharomyces cerevisiae: "
                       "micro-array expression and phylogenetic profiles (103 numeric "
                       "features), 14 functional categories; the Mulan version.",
        "source": "river 0.26.1 wheel on PyPI, file river/datasets/yeast.csv.gz, its CSV "
                  "shipped unmodified (see fastrank/data/PROVENANCE.md)",
        "licence": "BSD-3-Clause (river, Copyright (c) 2020, the river developers)",
        "citation": "A. Elisseeff and J. Weston (2001). A kernel method for multi-labelled "
                    "classification. Advances in Neural Information Processing Systems 14.",
    },
}




def _load_embedded(key):
    info = _EMBEDDED[key]
    raw = lzma.decompress(resources.files("fastrank").joinpath("data", info["file"]).read_bytes())
    header, body = raw.split(b"\n", 1)
    names = header.decode("ascii").strip().split(",")
    is_label = (np.arange(len(names)) >= info["features"]).astype(np.uint8)
    X, Y = _parse_rows(body, 2, f"fastrank/data/{info['file']}", names, is_label,
                       [None] * len(names))
    meta = {k: info[k] for k in ("description", "source", "licence", "citation")}
    return Dataset(X, Y, feature_names=names[:info["features"]],
                   label_names=names[info["features"]:], name=key, info=meta)


def _embedded_entries():
    return [{"name": info["name"], "origin": "embedded", "cached": True,
             **{k: v for k, v in info.items() if k not in ("name", "file", "csv_sha256")}}
            for info in _EMBEDDED.values()]


# ---- Mulan benchmark sets, downloaded on demand ----------------------------------------------

#: Where :func:`fetch` downloads from by default: the ``data/multi-label`` folder of the Mulan
#: project's repository (``tsoumakas/mulan`` on GitHub), one folder of plain files per set.
MULAN_URL = "https://raw.githubusercontent.com/tsoumakas/mulan/master/data/multi-label"

# Each set: its two files as (path under the source URL, bytes, SHA-256). The checksums are
# those of the plain files the Mulan repository serves (one folder per set, no archive).
_MULAN: dict[str, dict[str, Any]] = {
    "bibtex": {
        "files": {"arff": ("bibtex/bibtex.arff", 3457832,
                           "a282a6d1fb3cdaf39bde3f81cd4e6079850a7a538a6bc44f8b4ed95dfe1e5014"),
                  "xml": ("bibtex/bibtex.xml", 5880,
                          "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232")},
        "documents": 7395, "features": 1836, "labels": 159,
        "citation": "I. Katakis, G. Tsoumakas and I. Vlahavas (2008). Multilabel text "
                    "classification for automated tag suggestion. ECML/PKDD 2008 Discovery "
                    "Challenge."},
    "cal500": {
        "files": {"arff": ("cal500/cal500.arff", 492857,
                           "cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3"),
                  "xml": ("cal500/cal500.xml", 7901,
                          "877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c")},
        "documents": 502, "features": 68, "labels": 174,
        "citation": "D. Turnbull, L. Barrington, D. Torres and G. Lanckriet (2008). Semantic "
                    "annotation and retrieval of music and sound effects. IEEE Transactions "
                    "on Audio, Speech and Language Processing 16(2), 467-476."},
    "delicious": {
        "files": {"arff": ("delicious/delicious.arff", 3773732,
                           "b944de0bca910050c11d97eed57d17b073110ea3646a587f3d15d127cf581aab"),
                  "xml": ("delicious/delicious.xml", 34303,
                          "4e0c0f93c7d86a39b9fca4aaefaa00e9428f2c80277732dfbf03ca48e2c14da2")},
        "documents": 16105, "features": 500, "labels": 983,
        "citation": "G. Tsoumakas, I. Katakis and I. Vlahavas (2008). Effective and efficient "
                    "multilabel classification in domains with large number of labels. "
                    "ECML/PKDD 2008 Workshop on Mining Multidimensional Data."},
    "emotions": {
        "files": {"arff": ("emotions/emotions.arff", 380476,
                           "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b"),
                  "xml": ("emotions/emotions.xml", 323,
                          "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0")},
        "documents": 593, "features": 72, "labels": 6,
        "citation": "K. Trohidis, G. Tsoumakas, G. Kalliris and I. Vlahavas (2008). Multilabel "
                    "classification of music into emotions. ISMIR 2008, 325-330."},
    "enron": {
        "files": {"arff": ("enron/enron.arff", 906705,
                           "d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97"),
                  "xml": ("enron/enron.xml", 1604,
                          "ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b")},
        "documents": 1702, "features": 1001, "labels": 53,
        "citation": "B. Klimt and Y. Yang (2004). The Enron corpus: a new dataset for email "
                    "classification research. ECML 2004, 217-226."},
    "genbase": {
        "files": {"arff": ("genbase/genbase.arff", 3238276,
                           "cb23052a49191e36e9a59cd661e97d79bed2e3f2583030a206692b57bf1e3671"),
                  "xml": ("genbase/genbase.xml", 992,
                          "198e8a1d7070e9603119e02e626cedc589db7577339b307b06f5192047b69eb9")},
        "documents": 662, "features": 1186, "labels": 27,
        "citation": "S. Diplaris, G. Tsoumakas, P. Mitkas and I. Vlahavas (2005). Protein "
                    "classification with multiple algorithms. PCI 2005, 448-456."},
    "medical": {
        "files": {"arff": ("medical/medical.arff", 129626,
                           "ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4"),
                  "xml": ("medical/medical.xml", 1818,
                          "51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce")},
        "documents": 978, "features": 1449, "labels": 45,
        "citation": "J. P. Pestian et al. (2007). A shared task involving multi-label "
                    "classification of clinical free text. BioNLP 2007, 97-104."},
    "tmc2007": {  # the 500-feature version; the repository names its label file tmc2007.xml
        "files": {"arff": ("tmc2007/tmc2007-500.arff", 4193699,
                           "3ea7e95dd80a78a3e7d521d77c3371bfef888da1d364b5a3bb71c7222ad7f013"),
                  "xml": ("tmc2007/tmc2007.xml", 783,
                          "cb6a67c8ae72fd9b47d89f77aa5b7f6cafb4ba9c20b1124c65a95a3f2caec38d")},
        "documents": 28596, "features": 500, "labels": 22,
        "citation": "A. Srivastava and B. Zane-Ulman (2005). Discovering recurring anomalies "
                    "in text reports regarding complex space systems. IEEE Aerospace "
                    "Conference 2005."},
    "yeast": {
        "files": {"arff": ("yeast/yeast.arff", 2416688,
                           "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7"),
                  "xml": ("yeast/yeast.xml", 526,
                          "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247")},
        "documents": 2417, "features": 103, "labels": 14,
        "citation": "A. Elisseeff and J. Weston (2001). A kernel method for multi-labelled "
                    "classification. Advances in Neural Information Processing Systems 14."},
}

_DOWNLOAD_TIMEOUT = 60  # seconds without data before a download is abandoned
#: Default overall deadline of :func:`fetch`, in seconds (its ``deadline``).
FETCH_DEADLINE = 600


class FetchError(OSError):
    """A data set could not be brought into the cache: an HTTP error, a network failure, a
    truncated download or a cache folder that cannot be written."""


class ChecksumError(ValueError):
    """A downloaded file is not the published one: its SHA-256 (or size) differs."""


def _data_home(data_home):
    """The cache folder: ``data_home``, else ``$FASTRANK_DATA``, else ``~/fastrank_data``."""
    if data_home is None:
        data_home = os.environ.get("FASTRANK_DATA") or os.path.join("~", "fastrank_data")
    return os.path.abspath(os.path.expanduser(os.fspath(data_home)))


def _source_url(source):
    """The download base URL: ``source``, else ``$FASTRANK_DATA_URL``, else :data:`MULAN_URL`."""
    if source is None:
        source = os.environ.get("FASTRANK_DATA_URL") or MULAN_URL
    if not isinstance(source, str):
        raise TypeError(f"source must be a URL string, got {type(source).__name__}")
    return source.rstrip("/")


def _mulan_key(name):
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name not in _MULAN:
        raise ValueError(f"unknown Mulan data set {name!r}; known: {', '.join(_MULAN)}")
    return name


def _cache_path(home, relative):
    return os.path.join(home, "mulan", *relative.split("/"))


def _sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _is_cached(path, size, sha256):
    """Whether ``path`` holds the published file (a damaged copy counts as absent)."""
    try:
        return os.path.getsize(path) == size and _sha256_of(path) == sha256
    except OSError:
        return False


class _Deadline:
    """The overall deadline of one :func:`fetch`: when it passes, a timer shuts down every
    connection opened for the fetch (:meth:`opener`), so that a read blocked on a slow
    server returns at once, and :meth:`check` raises :class:`FetchError`."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds
        self._expired = False
        self._sockets = []
        self._lock = threading.Lock()
        self._timer = None
        if seconds is not None:
            self._timer = threading.Timer(seconds, self._expire)
            self._timer.daemon = True
            self._timer.start()

    def _expire(self):
        with self._lock:
            self._expired = True
            sockets = [*self._sockets]
        for sock in sockets:
            self._shut(sock)

    def _watch(self, sock):
        with self._lock:
            self._sockets.append(sock)
            expired = self._expired
        if expired:  # connected just after the deadline
            self._shut(sock)

    @staticmethod
    def _shut(sock):
        with contextlib.suppress(OSError):  # closed already
            sock.shutdown(socket.SHUT_RDWR)

    def timeout(self):
        """Seconds a network operation may wait: the time without data allowed, at most
        what is left before the deadline."""
        if self.end is None:
            return _DOWNLOAD_TIMEOUT
        return max(0.001, min(_DOWNLOAD_TIMEOUT, self.end - time.monotonic()))

    def check(self, name, url):
        """FetchError once the deadline has passed."""
        if self._expired or (self.end is not None and time.monotonic() >= self.end):
            raise FetchError(f"{name}: download of {url} stopped: the fetch did not end "
                             f"within its deadline of {self.seconds:g} s (a slower "
                             "connection needs fetch(..., deadline=...)); discarded")

    def cancel(self):
        if self._timer is not None:
            self._timer.cancel()

    def opener(self):
        """A urllib opener whose HTTP and HTTPS connections this deadline watches."""
        watch = self._watch

        def watched(connection_class):
            class Watched(connection_class):
                def connect(self):
                    super().connect()
                    watch(self.sock)
            return Watched

        class HTTP(urllib.request.HTTPHandler):
            def http_open(self, req):
                return self.do_open(watched(http.client.HTTPConnection), req)

        class HTTPS(urllib.request.HTTPSHandler):
            def https_open(self, req):
                return self.do_open(watched(http.client.HTTPSConnection), req,
                                    context=self._context)

        return urllib.request.build_opener(HTTP, HTTPS)


def _check_deadline(deadline):
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, numbers.Real):
        raise TypeError(f"deadline must be a number of seconds or None, got "
                        f"{type(deadline).__name__}")
    if not (deadline > 0 and math.isfinite(deadline)):
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    return float(deadline)


def _read(response, name, url, deadline):
    try:
        chunk = response.read(1 << 16)
    except (OSError, http.client.HTTPException) as exc:
        deadline.check(name, url)
        raise FetchError(f"{name}: download of {url} interrupted: {exc!r}") from None
    deadline.check(name, url)  # a connection shut down at the deadline reads as its end
    return chunk


def _download(name, url, target, size, sha256, deadline):
    """Download ``url`` to ``target`` through a temporary file beside it; rename only when
    the size and the SHA-256 are the published ones, and before ``deadline``."""
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"{name}: cannot create the cache folder {folder}: "
                         f"{exc.strerror or exc}") from None
    deadline.check(name, url)
    try:
        response = deadline.opener().open(url, timeout=deadline.timeout())
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{name}: {url}: HTTP error {exc.code} ({exc.reason})") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        deadline.check(name, url)
        raise FetchError(f"{name}: cannot download {url}: "
                         f"{getattr(exc, 'reason', None) or exc}") from None
    with response:
        announced = response.headers.get("Content-Length")
        digest, got = hashlib.sha256(), 0
        try:
            with atomic_file(target) as f:
                while chunk := _read(response, name, url, deadline):
                    got += len(chunk)
                    if got > size:
                        raise ChecksumError(f"{name}: {url} sends more than the published "
                                            f"{size} bytes (SHA-256 {sha256}); discarded")
                    digest.update(chunk)
                    f.write(chunk)
                if announced is not None and announced.isdigit() and got != int(announced):
                    raise FetchError(f"{name}: truncated download of {url}: {got} of "
                                     f"{announced} bytes received; discarded")
                if digest.hexdigest() != sha256:
                    raise ChecksumError(f"{name}: {url} has SHA-256 {digest.hexdigest()} "
                                        f"({got} bytes), expected {sha256} ({size} bytes); "
                                        "discarded")
        except FetchError:
            raise
        except OSError as exc:  # the temporary file or the rename: the cache is not writable
            raise FetchError(f"{name}: cannot write {target}: {exc.strerror or exc}") from None


def fetch(name: str, data_home: PathLikeStr | None = None, *,
          source: str | None = None, deadline: float | None = FETCH_DEADLINE) -> Dataset:
    """Download a Mulan benchmark data set (once) and load it.

    The set's ARFF file and its label XML file are fetched from ``source`` into the cache,
    each checked against the size and SHA-256 recorded here, and loaded with
    :func:`load_arff` with the XML file giving the labels. A set whose files are already in
    the cache (and still match their checksums) is loaded without any network access; a
    cached file that no longer matches is downloaded again.

    Parameters
    ----------
    name : str
        One of ``bibtex``, ``cal500``, ``delicious``, ``emotions``, ``enron``, ``genbase``,
        ``medical``, ``tmc2007`` (its 500-feature version) and ``yeast`` (see :func:`list`).
        Mulan's ``yeast`` holds the same documents and labels as the embedded ``yeast`` of
        :func:`load`, with its features printed to 6 decimals.
    data_home : str or path-like, optional
        The cache folder (created if needed). Default: ``$FASTRANK_DATA`` if set, else
        ``~/fastrank_data``. The files go to ``<data_home>/mulan/<path>``, ``<path>`` being
        their path under the source URL (e.g. ``emotions/emotions.arff``).
    source : str, optional
        The base URL the files are downloaded from, as ``<source>/<path>`` (any URL that
        ``urllib.request`` opens: ``https://``, ``http://``, ``file://``). Default:
        ``$FASTRANK_DATA_URL`` if set, else :data:`MULAN_URL`, the ``data/multi-label``
        folder of the Mulan project's repository (plain ``.arff`` and ``.xml`` files, one
        folder per set). A mirror must serve the same bytes: the checksums decide.
    deadline : float or None, default :data:`FETCH_DEADLINE` (600)
        Seconds the whole fetch (every file it downloads) may take; a download still
        running then is stopped and discarded (at least 7 KB/s gets the largest set,
        tmc2007, in time). None: no overall deadline, only the 60 s allowed without data.

    Returns
    -------
    Dataset
        Named ``name``; ``info`` holds ``source`` (the cached ARFF file), ``url`` (where it
        was published), ``relation`` and ``citation``.

    Raises
    ------
    ValueError
        ``name`` is not a known set (the message lists them).
    ChecksumError
        (a ValueError) A downloaded file has another size or SHA-256 than the published one;
        the message names the set, the URL and both checksums.
    FetchError
        (an OSError) An HTTP error, a network failure or timeout (60 s without data), the
        ``deadline`` passed, a download shorter than its ``Content-Length``, or a cache
        folder that cannot be written; the message names the set and the URL or folder.

    Notes
    -----
    A download goes to a temporary file in the cache folder and is renamed to its final
    name only once it is complete and verified, so the cache never holds a partial file,
    whatever fails and however many processes fetch the same set at once (each downloads
    its own copy; the last rename wins, with the same bytes). The temporary file of a
    fetch that was killed is removed by the next fetch of the set (not while another
    process downloads into the same folder: its own temporary file is left alone).

    Examples
    --------
    Downloading needs the network, so these lines are shown, not run by the tests::

        emotions = fetch("emotions")       # X (593, 72), Y (593, 6)
        fetch("emotions", data_home="/tmp/mulan-cache",
              source="https://example.org/mirror/multi-label")

    A name outside the list is refused before anything is downloaded:

    >>> from fastrank.datasets import fetch
    >>> fetch("emotion")
    Traceback (most recent call last):
    ValueError: unknown Mulan data set 'emotion'; known: bibtex, cal500, delicious, emotions, enron, genbase, medical, tmc2007, yeast
    """
    key = _mulan_key(name)
    home, base = _data_home(data_home), _source_url(source)
    clock = _Deadline(_check_deadline(deadline))
    paths = {part: _cache_path(home, relative)
             for part, (relative, _, _) in _MULAN[key]["files"].items()}
    tidy({os.path.dirname(p) for p in paths.values()})  # a killed fetch's temporary files
    try:
        for part, (relative, size, sha256) in _MULAN[key]["files"].items():
            if not _is_cached(paths[part], size, sha256):
                _download(key, f"{base}/{relative}", paths[part], size, sha256, clock)
    finally:
        clock.cancel()
    dataset = load_arff(paths["arff"], labels=paths["xml"], name=key)
    dataset.info.update(url=f"{base}/{_MULAN[key]['files']['arff'][0]}",
                        citation=_MULAN[key]["citation"])
    return dataset


def list(data_home: PathLikeStr | None = None) -> builtins.list[dict[str, Any]]:  # noqa: A001
    """The data sets :func:`load` and :func:`fetch` provide, and which of them are local.

    Parameters
    ----------
    data_home : str or path-like, optional
        The cache folder :func:`fetch` uses (default: ``$FASTRANK_DATA``, else
        ``~/fastrank_data``).

    Returns
    -------
    list of dict
        One per data set, embedded ones first, with ``name``, ``origin`` (``"embedded"``:
        shipped with fastrank, for :func:`load`; ``"mulan"``: downloaded by :func:`fetch`),
        ``cached`` (True when loading it needs no download: always for an embedded set; for
        a Mulan set, whether both of its files are in the cache and match their
        checksums), ``documents``, ``features``, ``labels`` and ``citation``; embedded sets
        add ``description``, ``source`` and ``licence``, Mulan sets ``url`` (where the ARFF
        file is downloaded from, after ``$FASTRANK_DATA_URL``).

    Examples
    --------
    >>> from fastrank import datasets
    >>> [(d["name"], d["origin"], d["documents"]) for d in datasets.list()][:3]
    [('yeast', 'embedded', 2417), ('bibtex', 'mulan', 7395), ('cal500', 'mulan', 502)]
    """
    home, base = _data_home(data_home), _source_url(None)
    mulan = [{"name": key, "origin": "mulan",
              "cached": all(_is_cached(_cache_path(home, rel), size, sha)
                            for rel, size, sha in info["files"].values()),
              "documents": info["documents"], "features": info["features"],
              "labels": info["labels"], "citation": info["citation"],
              "url": f"{base}/{info['files']['arff'][0]}"}
             for key, info in _MULAN.items()]
    return _embedded_entries() + mulan


_LOADERS_BY_EXTENSION: dict[str, Callable[..., Dataset]] = {
    ".arff": load_arff, ".svm": load_libsvm, ".libsvm": load_libsvm, ".svmlight": load_libsvm,
    ".json": load_text, ".jsonl": load_text, ".ndjson": load_text, ".csv": load_text}


def load(name: PathLikeStr = "yeast", **kwargs: Any) -> Dataset:
    """Load an embedded data set by name, or a data file by its extension.

    Embedded names (see :func:`list`) win over files of the same name; so the CLI's
    ``--dataset NAME|PATH`` can hand its argument straight to this function.

    Parameters
    ----------
    name : str or os.PathLike, default "yeast"
        An embedded data set's name, or a file: ``.arff`` -> :func:`load_arff`,
        ``.svm``/``.libsvm``/``.svmlight`` -> :func:`load_libsvm`,
        ``.json``/``.jsonl``/``.ndjson``/``.csv`` -> :func:`load_text`.
    **kwargs
        Passed on to the file's loader.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        An unknown name or extension, or what the loader raises.
    FileNotFoundError
        No such file.
    TypeError
        Options given for an embedded data set.

    References
    ----------
    .. [1] A. Elisseeff and J. Weston, "A kernel method for multi-labelled classification",
       Advances in Neural Information Processing Systems 14, 2001 (the yeast data).

    Examples
    --------
    >>> from fastrank import datasets
    >>> datasets.load("yeast")  # doctest: +ELLIPSIS
    Dataset('yeast': 2417 documents, 103 features, 14 labels, cardinality 4.237, ...)
    """
    key = os.fspath(name)
    if key in _EMBEDDED:
        if kwargs:
            raise TypeError(f"embedded data set {key!r} takes no options, got {sorted(kwargs)}")
        return _load_embedded(key)
    ext = os.path.splitext(key)[1].lower()
    if ext in _LOADERS_BY_EXTENSION:
        if not os.path.isfile(key):
            raise FileNotFoundError(f"no such file: {key}")
        return _LOADERS_BY_EXTENSION[ext](key, **kwargs)
    hint = f" (a Mulan set: fetch({key!r}) downloads it)" if key in _MULAN else ""
    raise ValueError(f"unknown data set {key!r}{hint}; embedded: "
                     f"{', '.join(map(repr, _EMBEDDED))}; or a file ending in "
                     f"{', '.join(_LOADERS_BY_EXTENSION)}")


# ---- synthetic data ----------------------------------------------------------------------------

def _zipf_cdf(size, exponent):
    w = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** exponent
    c = np.cumsum(w)
    return c / c[-1]


def make_multilabel(n_documents: int = 1000, n_labels: int = 20, n_features: int = 5000, *,
                    cardinality: float = 2.0, doc_length: int = 60, topic_size: int = 200,
                    background: float = 0.3, label_skew: float = 1.0,
                    tie_density: float = 0.0, random_state: RandomStateLike = None
                    ) -> Dataset:
    """Synthetic sparse text-like documents with label sets (labelled ``synthetic``).

    Each label owns a "topic": ``topic_size`` random terms with Zipf(1) weights. A document
    gets 1 + Poisson(cardinality - 1) distinct labels (at most ``n_labels``), drawn with
    probabilities proportional to 1 / rank**label_skew; its Poisson(doc_length) tokens (at
    least one) come from the background Zipf distribution over all terms with probability
    ``background`` and otherwise from the topic of one of its labels, chosen uniformly.
    A fraction ``tie_density`` of the documents are exact copies (features and labels) of
    other documents: equal vectors give equal similarities and so ties in the rankings
    of neighbour-based classifiers. ``X`` is tf-idf (eq. 2.1, idf over this collection)
    with cosine normalisation (eq. 2.2). Memory is O(n_documents * (doc_length +
    cardinality)); labels are drawn in chunks, so even 10**6 documents are fine.

    Parameters
    ----------
    n_documents, n_labels, n_features : int, default 1000, 20, 5000
        The shape (each from 1 to 2**31 - 1; the dense 0/1 label matrix at most 4 GiB).
    cardinality : float, default 2.0
        Mean labels per document, in [1, n_labels].
    doc_length : int, default 60
        Mean tokens per document (>= 1).
    topic_size : int, default 200
        Terms per label topic (>= 1; at most ``n_features`` are used).
    background : float, default 0.3
        Share of background tokens, in [0, 1].
    label_skew : float, default 1.0
        Zipf exponent of the label frequencies (>= 0; 0 = uniform).
    tie_density : float, default 0.0
        Share of duplicated documents, in [0, 1).
    random_state : None, int or numpy.random.Generator, default None
        Seeds everything.

    Returns
    -------
    Dataset
        Named "synthetic", its parameters in ``info["params"]``.

    Raises
    ------
    ValueError
        A parameter out of its range.

    Examples
    --------
    >>> from fastrank.datasets import make_multilabel
    >>> data = make_multilabel(200, n_labels=5, n_features=300, random_state=0)
    >>> data.X.shape, data.Y.shape, data.name
    ((200, 300), (200, 5), 'synthetic')
    """
    from .text import tfidf_from_counts

    for pname, v in (("n_documents", n_documents), ("n_labels", n_labels),
                     ("n_features", n_features), ("doc_length", doc_length),
                     ("topic_size", topic_size)):
        if not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_COLUMNS:
            raise ValueError(f"{pname} must be an integer from 1 to {MAX_COLUMNS}, got {v!r}")
    check_indicator_size((n_documents, n_labels), "n_documents x n_labels")
    if not 1.0 <= cardinality <= n_labels:
        raise ValueError(f"cardinality must be in [1, n_labels={n_labels}], got {cardinality}")
    if not 0.0 <= background <= 1.0:
        raise ValueError(f"background must be in [0, 1], got {background}")
    if not 0.0 <= tie_density < 1.0:
        raise ValueError(f"tie_density must be in [0, 1), got {tie_density}")
    if label_skew < 0:
        raise ValueError(f"label_skew must be >= 0, got {label_skew}")
    rng = check_random_state(random_state)
    topic_size = min(topic_size, n_features)
    n_copies = int(round(tie_density * n_documents))
    n = n_documents - n_copies
    logp = -label_skew * np.log(np.arange(1, n_labels + 1, dtype=np.float64))
    logp = logp[rng.permutation(n_labels)]
    topics = np.stack([rng.choice(n_features, topic_size, replace=False) for _ in range(n_labels)])
    background_terms = rng.permutation(n_features)
    topic_cdf, background_cdf = _zipf_cdf(topic_size, 1.0), _zipf_cdf(n_features, 1.0)
    Y = np.zeros((n, n_labels), dtype=np.uint8)
    pieces = []
    chunk = max(1, min((1 << 22) // n_labels, (1 << 22) // doc_length))  # bounds the memory
    for s in range(0, n, chunk):
        m = min(chunk, n - s)
        # labels: 1 + Poisson(cardinality - 1) per document, drawn without replacement with
        # probabilities ~ 1/rank**label_skew by the Gumbel-top-k trick
        k = np.minimum(1 + rng.poisson(cardinality - 1.0, m), n_labels)
        kmax = int(k.max())
        keys = logp + rng.gumbel(size=(m, n_labels))
        part = np.argpartition(-keys, kmax - 1, axis=1)[:, :kmax] if kmax < n_labels \
            else np.broadcast_to(np.arange(n_labels), keys.shape)
        order = np.argsort(-np.take_along_axis(keys, part, axis=1), axis=1)
        labels = np.take_along_axis(part, order, axis=1)[np.arange(kmax) < k[:, None]]
        Y[s + np.repeat(np.arange(m), k), labels] = 1
        # tokens: background Zipf term, or a Zipf term of the topic of one of the labels
        doc = np.repeat(np.arange(m), np.maximum(rng.poisson(doc_length, m), 1))
        first_label = np.concatenate(([0], np.cumsum(k)))
        which = first_label[doc] + (rng.random(doc.size) * k[doc]).astype(np.int64)
        topic_rank = np.searchsorted(topic_cdf, rng.random(doc.size), side="right")
        background_rank = np.searchsorted(background_cdf, rng.random(doc.size), side="right")
        term = np.where(rng.random(doc.size) >= background,
                        topics[labels[which], np.minimum(topic_rank, topic_size - 1)],
                        background_terms[np.minimum(background_rank, n_features - 1)])
        pieces.append(sp.csr_matrix((np.ones(doc.size), (doc, term)), shape=(m, n_features)))
    counts = sp.vstack(pieces, format="csr")
    if n_copies:
        rows = np.concatenate((np.arange(n), rng.integers(0, n, n_copies)))
        rows = rows[rng.permutation(rows.size)]
        counts, Y = counts[rows], Y[rows]
    X, _ = tfidf_from_counts(counts)
    return Dataset(X, Y, feature_names=[f"t{j}" for j in range(n_features)],
                   label_names=[f"c{j}" for j in range(n_labels)], name="synthetic",
                   info={"source": "fastrank.datasets.make_multilabel (synthetic)",
                         "params": {"n_documents": n_documents, "n_labels": n_labels,
                                    "n_features": n_features, "cardinality": cardinality,
                                    "doc_length": doc_length, "topic_size": topic_size,
                                    "background": background, "label_skew": label_skew,
                                    "tie_density": tie_density}})
