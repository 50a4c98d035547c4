"""What every splitter shares: its repr, the number of documents, the complement of a
test set."""
import numpy as np


def _n_documents(X):
    n = X.shape[0] if hasattr(X, "shape") else len(X)
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
