"""Reading the command line's input: matrices (.npy, .npz, CSV or whitespace text, libsvm;
bounded before they are read) and data sets."""
import functools
import itertools
import os
import stat
import sys
import tokenize
import warnings
import zipfile
import zlib

import numpy as np
import scipy.sparse as sp

STUDY_FORMATS = {"arff": "load_arff", "libsvm": "load_libsvm", "json": "load_text",
                 "csv": "load_text"}


#: Longest line of CSV or whitespace-separated text input, in characters (its newline
#: included): wider rows belong in a .npy or .npz file.
MAX_LINE = 2**24
#: A .npz file's compressed members may inflate to this many times the file's size ...
INFLATE_FACTOR = 64
#: ... or to this many bytes, whichever is larger.
INFLATE_FLOOR = 2**28


def _read_matrix(path, part="X", header=False):
    """A matrix from .npy, .npz (SciPy sparse, or one NumPy array), CSV/whitespace text
    (``-``: standard input; ``header``: its first line is a header row, skipped), or a
    libsvm file (``part`` "X" = its features, "Y" = its labels). Whatever a corrupt file
    makes NumPy raise becomes one ValueError."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _read_matrix_unchecked(path, part, header)
    except (OSError, ValueError, EOFError, SyntaxError, tokenize.TokenError, OverflowError,
            MemoryError, zipfile.BadZipFile, zlib.error, KeyError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None


def _read_matrix_unchecked(path, part, header):
    if path == "-":
        return _read_text(sys.stdin, header)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError("not a regular file (give a file, or - for CSV on standard input)")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":  # mapped first: a header claiming more than the file holds fails
        return np.array(np.load(path, mmap_mode="r", allow_pickle=False))
    if ext == ".npz":
        from .._npzfile import check_inflated_sizes
        check_inflated_sizes(path, max(INFLATE_FACTOR * os.path.getsize(path), INFLATE_FLOOR))
        with np.load(path, allow_pickle=False) as z:
            if "format" in z.files and "shape" in z.files:
                return sp.load_npz(path)
            if len(z.files) != 1:
                raise ValueError(f"expected one array, found {len(z.files)}")
            return z[z.files[0]]
    if ext in (".svm", ".libsvm", ".svmlight"):
        from ..datasets import load_libsvm
        return getattr(load_libsvm(path), part)
    with open(path) as f:
        return _read_text(f, header)


def _read_text(f, header=False):
    """The matrix of CSV (a comma in the first line) or whitespace-separated text read from
    the stream f, each line checked against :data:`MAX_LINE` as it is read; with
    ``header``, the first line is a header row, skipped."""
    def lines():
        for number, line in enumerate(iter(functools.partial(f.readline, MAX_LINE + 1), ""),
                                      1):
            if len(line) > MAX_LINE:
                raise ValueError(f"line {number} is longer than {MAX_LINE} characters, the "
                                 "bound on text input (give a wide matrix as .npy or .npz)")
            yield line
    stream = lines()
    if header:
        next(stream, "")
    first = next(stream, "")
    delimiter = "," if "," in first else None
    if not header and not _numbers(first, delimiter):
        raise ValueError(f"line 1 is not numbers: {first.strip()[:60]!r} (a header row is "
                         "skipped with --header)")
    return np.loadtxt(itertools.chain([first], stream), delimiter=delimiter, ndmin=2)


def _numbers(line, delimiter):
    """Whether every field of ``line`` (before a ``#`` comment, as :func:`numpy.loadtxt`
    reads it) reads as a number; empty fields are left to ``loadtxt``'s own message."""
    try:
        [float(field) for field in line.split("#")[0].split(delimiter) if field.strip()]
    except ValueError:
        return False
    return True


def _load_dataset(name, fmt, labels):
    from .. import datasets
    if fmt is None and labels is None:
        from ..study import load_dataset
        return load_dataset(name)  # an embedded name, a file, or a Mulan name to fetch
    if not os.path.isfile(name):
        raise FileNotFoundError(f"no such file: {name}")
    loader = getattr(datasets, STUDY_FORMATS[fmt or "arff"])
    if labels is not None:
        if loader is not datasets.load_arff:
            raise ValueError("--labels applies to ARFF files only")
        return loader(name, labels=int(labels) if labels.isdigit() else labels)
    return loader(name)


def _csv(text):
    """'a, b,c' -> ('a', 'b', 'c')."""
    return tuple(part.strip() for part in text.split(",") if part.strip())
