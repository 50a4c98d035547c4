"""libsvm / svmlight files, read and written.
"""
import io
import os
import re
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from .._atomic import atomic_file
from .._typing import PathLikeStr
from .._validation import MAX_COLUMNS, check_n_labels
from ._base import Dataset, _check_label_matrix


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
    True; ``"auto"`` means zero-based when an index 0 occurs (``0:0`` too: an index written
    with the value 0 counts for the base, the width and the range). ``# comments`` are ignored,
    except a first line ``# fastrank n_features=F n_labels=Q zero_based=Z`` as written by
    :func:`save_libsvm`: it supplies ``n_features``, ``n_labels`` and ``zero_based`` (Z is 0
    or 1) when they are not given, so that label and feature columns that are all zero
    survive the round trip. Without that line, plain libsvm files are read as described.

    Feature indices and labels must be integers below 2**31 (labels may be negative when
    ``n_labels`` is not given); ``n_features`` and ``n_labels``, given or from the header,
    are bounded as described in :mod:`fastrank.datasets` ("Limits").

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
    from .._ext.text_formats import parse_libsvm

    path = os.fspath(path)
    if n_features is not None:
        n_features = check_n_labels(n_features, "n_features")
    if n_labels is not None:
        n_labels = check_n_labels(n_labels)
    with open(path, "rb") as f:
        data = f.read()
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark
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
    # every index written counts for the base, the width and the range, explicit zeros too
    xp, xi, xv, yp, yl, lowest, highest = parse_libsvm(data, path)
    n = xp.size - 1
    if n == 0:
        raise ValueError(f"{path}: line 1: no data lines")
    if zero_based == "auto":
        zero_based = lowest == 0
    elif not isinstance(zero_based, bool):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if not zero_based:
        if lowest == 0:
            raise ValueError(f"{path}: feature index 0 in a one-based file (zero_based=False)")
        xi = xi - 1
    width = highest + zero_based if highest >= 0 else 0
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
    if isinstance(X, np.ndarray):  # a Dataset made with dense=True
        X = sp.csr_matrix(X)
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
