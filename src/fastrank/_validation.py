"""Input checks shared by every public function: one place, one wording for each error."""
import numbers

import numpy as np
import scipy.sparse as sp

FLOAT_DTYPES = (np.float32, np.float64)


def check_random_state(random_state):
    """Return a ``numpy.random.Generator`` for None, an int, a Generator or a SeedSequence."""
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(
        f"random_state must be None, an int or a numpy.random.Generator, got {type(random_state).__name__}")


def check_option(name, value, allowed):
    """Raise ValueError listing the valid choices when ``value`` is not one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"unknown {name}={value!r}; valid: {', '.join(map(repr, allowed))}")
    return value


def check_nonempty_2d(shape, name, columns="n_labels"):
    """ValueError unless ``shape`` is 2-D (n_documents, columns) with no empty dimension."""
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (n_documents, {columns}), got {len(shape)}-D")
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {tuple(shape)}")


def check_real_dtype(dtype, name):
    """TypeError unless ``dtype`` holds real numbers (booleans count as 0/1)."""
    if dtype == object or not (np.issubdtype(dtype, np.number) or dtype == bool) \
            or np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"{name} must be real numeric values, got dtype {dtype}")


def _first_nan_row(values, row_of):
    bad = np.flatnonzero(np.isnan(values))
    return None if bad.size == 0 else int(row_of(bad[0]))


def check_scores(scores, name="y_score", allow_sparse=True):
    """Validate a 2-D belief matrix without copying when it is already usable.

    Returns a float32/float64 ndarray (C or Fortran order kept) or a canonical CSR matrix
    (sorted indices, no duplicates). Other numeric dtypes are converted to float64.
    Raises ValueError for non-2-D, empty or NaN input, TypeError for non-numeric input.
    """
    if sp.issparse(scores):
        if not allow_sparse:
            raise TypeError(f"{name} must be a dense array here, got a sparse matrix")
        csr = sp.csr_matrix(scores) if not sp.isspmatrix_csr(scores) else scores
        check_nonempty_2d(csr.shape, name)
        if csr.dtype not in FLOAT_DTYPES:
            check_real_dtype(csr.dtype, name)
            csr = csr.astype(np.float64)
        if not csr.has_canonical_format:
            csr = csr.copy()
            csr.sum_duplicates()
        row = _first_nan_row(csr.data, lambda k: np.searchsorted(csr.indptr, k, side="right") - 1)
        if row is not None:
            raise ValueError(f"{name} contains NaN (first in row {row})")
        return csr
    arr = np.asarray(scores)
    check_real_dtype(arr.dtype, name)
    check_nonempty_2d(arr.shape, name)
    if arr.dtype not in FLOAT_DTYPES:
        arr = arr.astype(np.float64)
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    q = arr.shape[1]
    row = _first_nan_row(arr.ravel(order="K"),
                         (lambda k: k // q) if arr.flags.c_contiguous else (lambda k: k % arr.shape[0]))
    if row is not None:
        raise ValueError(f"{name} contains NaN (first in row {row})")
    return arr


def check_truth(y_true, n_labels=None, name="y_true"):
    """Return the truth as a C-contiguous uint8 0/1 matrix (n_documents, n_labels).

    Accepts a dense 0/1 (or boolean) array, a SciPy sparse matrix, or a list of label-index
    sets (then ``n_labels`` is required, or inferred as max index + 1).
    """
    if sp.issparse(y_true):
        check_nonempty_2d(y_true.shape, name)
        csr = sp.csr_matrix(y_true)
        csr.sum_duplicates()
        bad = csr.data[(csr.data != 0) & (csr.data != 1)]
        if bad.size:
            raise ValueError(f"{name} must be binary (0/1); found values {np.unique(bad)[:5]}")
        dense = csr.toarray().astype(np.uint8)
    elif is_label_sets(y_true):
        dense = label_sets_to_matrix(y_true, n_labels, name)
    else:
        arr = np.asarray(y_true)
        if arr.dtype == object:
            raise TypeError(f"{name} must be a 0/1 matrix or a list of label-index sets")
        check_nonempty_2d(arr.shape, name)
        if arr.dtype != bool:
            if not np.issubdtype(arr.dtype, np.number):
                raise TypeError(f"{name} must be numeric 0/1, got dtype {arr.dtype}")
            # one cheap pass: a max for unsigned ints, two comparisons otherwise
            binary = arr.max() <= 1 if np.issubdtype(arr.dtype, np.unsignedinteger) \
                else ((arr == 0) | (arr == 1)).all()
            if not binary:
                bad = np.unique(arr[(arr != 0) & (arr != 1)])[:5]
                hint = " (to pass label sets, give a list of sets)" \
                    if isinstance(y_true, (list, tuple)) else ""
                raise ValueError(f"{name} must be binary (0/1); found values {bad}{hint}")
        dense = np.ascontiguousarray(arr, dtype=np.uint8)
    if n_labels is not None and dense.shape[1] != n_labels:
        raise ValueError(f"{name} has {dense.shape[1]} labels, expected {n_labels}")
    return dense


def is_label_sets(y):
    """True when ``y`` is a list of label sets rather than a 0/1 matrix.

    Label sets: a list or tuple whose elements are sets/frozensets, or whose rows differ in
    length, or hold non-numeric labels (names). A rectangular nested list of numbers is read
    as a 0/1 matrix, exactly as ``numpy.asarray`` would read it: ``[[0, 1], [1, 0]]`` is a
    2 x 2 indicator matrix, ``[{0, 1}, {1}]`` two label sets.
    """
    if not isinstance(y, (list, tuple)) or not y:
        return False
    rows = list(y)
    if any(isinstance(r, (set, frozenset)) for r in rows):
        return True
    if any(np.isscalar(r) or isinstance(r, np.ndarray) for r in rows):
        return False
    rows = [list(r) for r in rows]
    if len({len(r) for r in rows}) > 1:
        return True
    return any(not isinstance(v, (numbers.Number, np.number)) for r in rows for v in r)


def label_sets_to_matrix(label_sets, n_labels=None, name="y_true"):
    """Turn a list of iterables of non-negative label indices into a uint8 indicator matrix."""
    rows = [np.asarray(list(s), dtype=np.int64) for s in label_sets]
    if not rows:
        raise ValueError(f"{name} is empty")
    top = max((int(r.max()) for r in rows if r.size), default=-1)
    if any(r.size and r.min() < 0 for r in rows):
        raise ValueError(f"{name}: label indices must be non-negative")
    q = top + 1 if n_labels is None else int(n_labels)
    if q == 0:
        raise ValueError(f"{name} has no labels")
    if top >= q:
        raise ValueError(f"{name}: label index {top} out of range for {q} labels")
    out = np.zeros((len(rows), q), dtype=np.uint8)
    for i, r in enumerate(rows):
        out[i, r] = 1
    return out


def check_same_shape(a_shape, b_shape, a_name="y_true", b_name="y_score"):
    if tuple(a_shape) != tuple(b_shape):
        raise ValueError(f"{a_name} has shape {tuple(a_shape)} but {b_name} has shape {tuple(b_shape)}")


NO_INDEX = np.empty(0, dtype=np.int32)


def row_source(scores):
    """Arguments of the kernels that sort rows of either input kind (``sort_row_at`` in
    ``_tiesort.pxd``): ``(values, row_stride, col_stride, indices, indptr)`` — for a dense
    matrix from :func:`check_scores` its flat buffer and element strides (no copy) and empty
    index arrays; for a canonical CSR matrix its three arrays."""
    if sp.issparse(scores):
        return scores.data, 0, 0, scores.indices, scores.indptr
    item = scores.itemsize
    return (scores.ravel(order="K"), scores.strides[0] // item, scores.strides[1] // item,
            NO_INDEX, NO_INDEX)
