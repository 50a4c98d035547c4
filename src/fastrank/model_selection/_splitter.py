"""What every splitter shares: its repr, the number of documents, the complement of a
test set."""
import numpy as np


def _check_shuffle(shuffle):
    """``shuffle`` itself when it is a bool: a string such as "False" is not one."""
    if not isinstance(shuffle, (bool, np.bool_)):
        raise TypeError(f"shuffle must be True or False, got {shuffle!r}")
    return bool(shuffle)


def _n_documents(X):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 0:
        raise ValueError("cannot split a 0-d array: give the documents, one per row")
    n = shape[0] if shape is not None else len(X)
    if n < 1:
        raise ValueError("cannot split an empty data set")
    return int(n)


def _complement(n, test):
    mask = np.ones(n, dtype=bool)
    mask[test] = False
    return np.flatnonzero(mask).astype(np.int64)


Split = tuple[np.ndarray, np.ndarray]


class _Splitter:
    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"
