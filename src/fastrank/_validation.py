"""Input checks shared by every public function: one place, one wording for each error."""
import numbers
import os

import numpy as np
import scipy.sparse as sp

from ._arrays import as_numpy, exact_float64
from ._ext import _threads
from ._ext import checks as _checks

FLOAT_DTYPES = (np.float32, np.float64)
#: dtypes whose 0/1 check and conversion to uint8 is one parallel pass of the checks kernel
BINARY_CHECKED_DTYPES = tuple(map(np.dtype, (np.uint8, np.int8, np.int16, np.int32, np.int64,
                                            np.uint16, np.uint32, np.uint64, np.float32,
                                            np.float64)))
_NO_OUTPUT = np.empty(0, dtype=np.uint8)


def check_random_state(random_state):
    """Return a ``numpy.random.Generator`` for None, an int, a Generator or a SeedSequence."""
    if isinstance(random_state, numbers.Integral) and random_state < 0:
        raise ValueError(f"random_state must be >= 0 (a seed), got {random_state}")
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(
        "random_state must be None, an int or a numpy.random.Generator, got "
        f"{type(random_state).__name__}")


def available_memory():
    """Bytes this process can still allocate, or None when unknown: the machine's physical
    memory, less what the process's address-space limit (``RLIMIT_AS``, e.g. ``ulimit -v``)
    leaves when that is smaller."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        limit = page * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows)
        return None
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as f:  # the address space in use, in pages
                limit = min(limit, soft - page * int(f.read().split()[0]))
    except (ImportError, OSError, ValueError):  # no resource module, no /proc (macOS)
        pass
    return limit


def _gib(n_bytes):
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.1f} MiB"


def check_memory(n_bytes, what):
    """ValueError, naming ``what`` and both sizes, when ``what`` needs ``n_bytes`` bytes and
    that is more than :func:`available_memory`: work whose size is fixed by a declared
    shape is refused up front instead of failing midway with a MemoryError (or the
    system's out-of-memory killer)."""
    limit = available_memory()
    if limit is not None and n_bytes > limit:
        raise ValueError(f"{what} needs {_gib(n_bytes)}, more than the "
                         f"{_gib(max(limit, 0))} this process can allocate")


#: Bytes of scratch per label that each thread sorting rows holds (``sort_work_new`` in
#: ``_tiesort.pxd``).
SORT_SCRATCH_BYTES = 33


def sort_scratch_bytes(n, q):
    """The sorting scratch of n rows of q labels: one per thread, and no more threads than
    rows get one."""
    return min(n, _threads.get_max_threads()) * SORT_SCRATCH_BYTES * q


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
    """TypeError unless ``dtype`` holds real numbers (booleans count as 0/1): never complex,
    object, string, or datetime64/timedelta64 (which NumPy counts as numbers)."""
    if np.dtype(dtype).kind not in "biuf":
        raise TypeError(f"{name} must be real numeric values, got dtype {dtype}")


def _first_nan_row(values, row_of):
    """The row (``row_of`` a position) of the first NaN of the contiguous float32/float64
    ``values``, or None; one parallel pass of the checks kernel."""
    bad = _checks.first_nan(values)
    return None if bad < 0 else int(row_of(bad))


def object_to_float(arr, name):
    """The object array ``arr`` of real numbers as float64, as scikit-learn's ``check_array``
    converts it; TypeError naming ``name`` when an element is not a real number (a string,
    None, a container, a complex number)."""
    try:
        out = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} is an object array holding a non-number: {exc}") from None
    if any(isinstance(v, (str, bytes)) for v in arr.flat):  # astype parses "1.5"
        raise TypeError(f"{name} is an object array holding a string; give numbers")
    return out


def as_real_array(x, name, dtype=np.float64) -> np.ndarray:
    """``x`` as an ndarray of ``dtype``; TypeError (never a silent cast) for complex, object or
    other non-numeric input."""
    arr = as_numpy(x, name)
    check_real_dtype(arr.dtype, name)
    return arr.astype(dtype, copy=False)


# ---- sparse input ------------------------------------------------------------------------

MAX_COLUMNS = 2**31 - 1  # label and feature counts: positions are int32 in the kernels


def _index_array(a, name, what):
    """A sparse matrix's index array as a 1-D ndarray of integers (not yet converted)."""
    a = as_numpy(a, name)
    if a.dtype == bool or a.dtype.kind not in "iu":
        raise TypeError(f"{name}: {what} must hold integers, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{name}: {what} must be 1-D, got {a.ndim}-D")
    return a


def _data_array(a, name, ndim=1):
    """A sparse matrix's values as an ndarray of real numbers in native byte order."""
    a = as_numpy(a, name)
    check_real_dtype(a.dtype, name)
    if a.ndim != ndim:
        raise ValueError(f"{name}: data must be {ndim}-D, got {a.ndim}-D")
    return a.astype(a.dtype.newbyteorder("="), copy=False)


def _check_shape(shape, name):
    if len(shape) != 2 or not all(isinstance(d, numbers.Integral) and d >= 0 for d in shape):
        raise ValueError(f"{name} has an invalid shape {shape!r}")
    return int(shape[0]), int(shape[1])


def _check_in_range(a, size, name, what):
    """ValueError unless every entry of the integer array ``a`` lies in [0, size)."""
    if a.size == 0:
        return
    lo, hi = int(a.min()), int(a.max())
    if lo < 0 or hi >= size:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name}: {what} {bad} out of range [0, {size})")


def _compressed(indptr, indices, data, n_major, n_minor, name, data_ndim=1,
                what="column index"):
    """Check the compressed (CSR/CSC/BSR) structure: ``indptr`` has n_major + 1 entries,
    starts at 0, never decreases and ends at the number of stored entries, which is the
    length of ``indices`` and ``data``; every index (``what``) lies in [0, n_minor).
    O(nnz), vectorised. Returns the arrays (unconverted)."""
    indptr = _index_array(indptr, name, "indptr")
    indices = _index_array(indices, name, "indices")
    data = _data_array(data, name, data_ndim)
    if indptr.size != n_major + 1:
        raise ValueError(f"{name}: indptr has {indptr.size} entries, expected {n_major + 1} "
                         f"for {n_major} rows")
    nnz = int(indptr[-1])
    if int(indptr[0]) != 0:
        raise ValueError(f"{name}: indptr must start at 0, starts at {int(indptr[0])}")
    if not (indptr[1:] >= indptr[:-1]).all():
        raise ValueError(f"{name}: indptr must be non-decreasing")
    if indices.size != nnz or data.shape[0] != nnz:
        raise ValueError(f"{name}: indptr ends at {nnz} but indices has {indices.size} and "
                         f"data {data.shape[0]} entries")
    _check_in_range(indices, n_minor, name, what)
    return indptr, indices, data


def _is_canonical(indptr, indices):
    """Indices strictly increasing within every row (sorted, no duplicates), computed from
    the arrays (SciPy's cached flag may be stale if the arrays were changed in place)."""
    if indices.size < 2:
        return True
    increasing = indices[1:] > indices[:-1]
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.size)]
    increasing[starts - 1] = True  # the first entry of a row may be below the last one before
    return bool(increasing.all())


def _native(a, dtype):
    return np.ascontiguousarray(a, dtype=dtype)


def _same_index_dtype(*arrays):
    """Checked index arrays in one native dtype that SciPy's routines take: unchanged when
    they already share int32 or int64, else int64 (only the arrays of another dtype are
    converted)."""
    dtypes = {a.dtype for a in arrays}
    dtype = dtypes.pop() if len(dtypes) == 1 else np.dtype(np.int64)
    if dtype not in (np.int32, np.int64):
        dtype = np.dtype(np.int64)
    return tuple(_native(a, dtype) for a in arrays)


def check_csr(matrix, name):
    """Any SciPy sparse matrix or array as a validated canonical CSR matrix.

    The structure is checked before any compiled code reads it (SciPy does not check index
    values at construction, nor does ``scipy.sparse.load_npz``): for compressed formats
    ``indptr`` (n + 1 entries, from 0, non-decreasing, ending at the number of stored
    entries), the indices (in [0, n_columns), or [0, n_rows) for CSC), the lengths of
    ``indices`` and ``data``; for COO (and the formats SciPy converts to COO) the
    coordinates. Other formats are then converted by SciPy, whose output is not checked
    again. Index arrays of another integer dtype are converted to one dtype, int32 (or int64
    when the values need it), as the kernels take them; non-integer index arrays raise
    TypeError. Returns a CSR matrix with sorted, unique indices (duplicates summed, in
    float64 for integer or boolean values so that they never wrap), C-contiguous 1-D arrays
    in native byte order. A canonical CSR input that needs no conversion is returned
    itself; otherwise its arrays are copied at most once (a conversion is that copy) and
    the caller's matrix is never modified. O(nnz) vectorised NumPy.

    Raises ValueError for an invalid structure or shape, TypeError for non-numeric data or
    non-integer index arrays.
    """
    n, m = _check_shape(matrix.shape, name)
    fmt = matrix.format
    if fmt == "csr":
        indptr, indices, data = _compressed(matrix.indptr, matrix.indices, matrix.data, n, m,
                                            name)
        return _canonical_csr(indptr, indices, data, (n, m), _is_canonical(indptr, indices),
                              caller=matrix)
    if fmt == "csc":
        indptr, indices, data = _compressed(matrix.indptr, matrix.indices, matrix.data, m, n,
                                            name, what="row index")
        csc = sp.csc_matrix((n, m), dtype=data.dtype)
        # assigned, not passed to the constructor, which may convert the index dtype
        csc.indptr, csc.indices = _same_index_dtype(indptr, indices)
        csc.data = data
        converted = csc.tocsr()   # new arrays, sorted indices; duplicates are kept
    else:
        if fmt == "bsr":
            r, c = matrix.blocksize
            if r < 1 or c < 1 or n % r or m % c:
                raise ValueError(f"{name}: blocksize {(r, c)} does not divide shape {(n, m)}")
            bp, bi, bd = _compressed(matrix.indptr, matrix.indices, matrix.data, n // r,
                                     m // c, name, data_ndim=3, what="index")
            if bd.shape[1:] != (r, c):
                raise ValueError(f"{name}: data blocks have shape {bd.shape[1:]}, expected "
                                 f"{(r, c)}")
            coo = sp.bsr_matrix((bd, *_same_index_dtype(bi, bp)), shape=(n, m)).tocoo()
            row, col, data = coo.row, coo.col, coo.data
        else:
            coo = matrix if fmt == "coo" else matrix.tocoo()
            row = _index_array(coo.row, name, "row")
            col = _index_array(coo.col, name, "col")
            data = _data_array(coo.data, name)
            if not row.size == col.size == data.size:
                raise ValueError(f"{name}: COO row, col and data have {row.size}, "
                                 f"{col.size} and {data.size} entries")
            _check_in_range(row, n, name, "row index")
            _check_in_range(col, m, name, "column index")
        if data.dtype.kind != "f":
            data = data.astype(np.float64)  # duplicates are summed: integers must not wrap
        converted = sp.coo_matrix((data, _same_index_dtype(row, col)), shape=(n, m)).tocsr()
    # SciPy's own output: new arrays, its canonical flag computed, not cached from the input
    return _canonical_csr(converted.indptr, converted.indices, converted.data, (n, m),
                          converted.has_canonical_format)


def _canonical_csr(indptr, indices, data, shape, canonical, caller=None):
    """The canonical CSR matrix of checked CSR arrays, which are the arrays of the caller's
    matrix ``caller`` (never modified; returned itself when already usable) or, when None,
    new arrays (a SciPy conversion's output) that are summed and sorted in place."""
    n, m = shape
    fits32 = _fits_int32(indices.size, m)
    if indptr.dtype == indices.dtype and indptr.dtype in (np.int32, np.int64) \
            and (indptr.dtype == np.int64 or fits32):
        index_dtype = indptr.dtype
    else:
        index_dtype = np.int32 if fits32 else np.int64
    if not canonical and data.dtype.kind != "f":
        data = data.astype(np.float64)  # duplicates are summed: integers must not wrap
    arrays = (_native(data, data.dtype), _native(indices, index_dtype),
              _native(indptr, index_dtype))
    if caller is not None:
        own = (caller.data, caller.indices, caller.indptr)
        if canonical and sp.isspmatrix_csr(caller) and all(a is b for a, b in zip(arrays, own)):
            return caller
        if not canonical:  # summed and sorted in place below: copy what is still the caller's
            arrays = tuple(a.copy() if np.may_share_memory(a, b) else a
                           for a, b in zip(arrays, own))
    csr = _csr_of(arrays, (n, m), canonical)
    if not canonical:
        csr.sum_duplicates()  # sorts too; safe now that the structure is checked
    return csr


def _fits_int32(nnz, n_columns):
    """Whether int32 index arrays can describe a CSR matrix of these sizes."""
    return max(nnz, n_columns) <= np.iinfo(np.int32).max


def _csr_of(arrays, shape, canonical):
    """The CSR matrix of the arrays (data, indices, indptr), held as they are."""
    csr = sp.csr_matrix(shape, dtype=arrays[0].dtype)
    # assigned, not passed to the constructor, which may change the index dtype again
    csr.data, csr.indices, csr.indptr = arrays
    csr.has_sorted_indices = csr.has_canonical_format = canonical
    return csr


def int32_indexed(csr):
    """The canonical CSR matrix ``csr`` (from :func:`check_csr`) with int32 index arrays:
    itself when they are, else with int32 copies of them and its data shared; None when
    int32 cannot describe it (2**31 stored values or more)."""
    if csr.indices.dtype == np.int32 and csr.indptr.dtype == np.int32:
        return csr
    if not _fits_int32(csr.nnz, csr.shape[1]):
        return None
    return _csr_of((csr.data, _native(csr.indices, np.int32), _native(csr.indptr, np.int32)),
                   csr.shape, True)


def _check_columns(shape, name, columns):
    if shape[1] > MAX_COLUMNS:
        raise ValueError(f"{name} has {shape[1]} {columns}; at most {MAX_COLUMNS} are supported")


def check_scores(scores, name="y_score", allow_sparse=True, scan=True):
    """Validate a 2-D belief matrix without copying when it is already usable.

    Returns a float32/float64 ndarray (C or Fortran order kept) or a canonical CSR matrix
    from :func:`check_csr` (its structure checked). Other numeric dtypes are converted to
    float64. Raises ValueError for non-2-D, empty or NaN input, more than ``MAX_COLUMNS``
    labels or a malformed sparse matrix, TypeError for non-numeric (or complex) input.
    ``scan=False`` leaves out the pass over the values that looks for NaN: for a caller
    whose kernel finds NaN as it reads the beliefs (and then checks again with ``scan``).
    """
    if sp.issparse(scores):
        if not allow_sparse:
            raise TypeError(f"{name} must be a dense array here, got a sparse matrix")
        check_nonempty_2d(scores.shape, name)
        csr = check_csr(scores, name)
        _check_columns(csr.shape, name, "labels")
        row_of = lambda k: np.searchsorted(csr.indptr, k, side="right") - 1  # noqa: E731
        if csr.dtype not in FLOAT_DTYPES:
            exact_float64(csr.data, name, row_of)
            csr = csr.astype(np.float64)
        if not scan:
            return csr
        row = _first_nan_row(csr.data, row_of)
        if row is not None:
            raise ValueError(f"{name} contains NaN (first in row {row})")
        return csr
    arr = as_numpy(scores, name)
    check_real_dtype(arr.dtype, name)
    check_nonempty_2d(arr.shape, name)
    _check_columns(arr.shape, name, "labels")
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    q = arr.shape[1]
    row_of = (lambda k: k // q) if arr.flags.c_contiguous else (lambda k: k % arr.shape[0])
    if arr.dtype not in FLOAT_DTYPES:
        arr = exact_float64(arr, name, row_of)
    if not scan:
        return arr
    row = _first_nan_row(arr.ravel(order="K"), row_of)
    if row is not None:
        raise ValueError(f"{name} contains NaN (first in row {row})")
    return arr


def check_features(X, name="X", finite=True):
    """Features as a canonical CSR matrix (:func:`check_csr`) or a C-contiguous ndarray,
    float32/float64 (other real dtypes become float64), finite, 2-D, non-empty.

    Raises ValueError for a wrong shape, NaN/infinity or a malformed sparse matrix,
    TypeError for non-numeric (or complex) values. With ``finite=False`` the values are not
    scanned for NaN/infinity: for a caller whose own pass over them finds those (the
    search's squared norms)."""
    if sp.issparse(X):
        check_nonempty_2d(X.shape, name, columns="n_features")
        X = check_csr(X, name)
        if X.dtype not in FLOAT_DTYPES:
            X = X.astype(np.float64)
        data = X.data
    else:
        X = as_numpy(X, name)
        check_real_dtype(X.dtype, name)
        X = np.ascontiguousarray(X, dtype=None if X.dtype in FLOAT_DTYPES else np.float64)
        data = X
    check_nonempty_2d(X.shape, name, columns="n_features")
    _check_columns(X.shape, name, "features")
    if finite and _checks.first_nan(data.ravel(), nonfinite=True) >= 0:
        raise ValueError(f"{name} contains NaN or infinity")
    return X


def check_binary_csr(y_true, name="y_true"):
    """The sparse 0/1 matrix ``y_true`` as CSR (structure checked by :func:`check_csr`; a
    stored 0 kept); ValueError for an empty shape or a value other than 0 and 1."""
    check_nonempty_2d(y_true.shape, name)
    csr = check_csr(y_true, name)
    bad = csr.data[(csr.data != 0) & (csr.data != 1)]
    if bad.size:
        raise ValueError(f"{name} must be binary (0/1); found values {np.unique(bad)[:5]}")
    return csr


def check_truth(y_true, n_labels=None, name="y_true", against=None, scan=True):
    """Return the truth as a C-contiguous uint8 0/1 matrix (n_documents, n_labels).

    Accepts a dense 0/1 (or boolean) array, a SciPy sparse matrix (structure checked by
    :func:`check_csr`), or a list of label-index sets (then ``n_labels`` is required, or
    inferred as max index + 1; see :func:`label_sets_to_matrix`).
    Raises ValueError for non-binary values or a wrong shape, TypeError for non-numeric or
    complex values. ``against`` names the argument ``n_labels`` was taken from (e.g.
    "y_score"), so that a width mismatch names both. ``scan=False`` takes a C-contiguous
    uint8 matrix as it is, unread: for a caller whose kernel checks the 0/1 values as it
    reads them (and then checks again with ``scan``); other input is converted and checked.
    """
    if sp.issparse(y_true):
        csr = check_binary_csr(y_true, name)
        check_indicator_size(csr.shape, name)
        dense = csr.astype(np.uint8).toarray()   # 0/1 checked: the cast is exact
    elif is_label_sets(y_true):
        dense = label_sets_to_matrix(y_true, n_labels, name)
    else:
        arr = as_numpy(y_true, name)
        if arr.dtype == object:
            raise TypeError(f"{name} must be a 0/1 matrix or a list of label-index sets")
        check_nonempty_2d(arr.shape, name)
        if arr.dtype != bool:
            check_real_dtype(arr.dtype, name)
        unread = not scan and arr.dtype == np.uint8 and arr.flags.c_contiguous
        dense = arr if unread else _binary_uint8(arr)
        if dense is None:
            bad = np.unique(arr[(arr != 0) & (arr != 1)])[:5]
            hint = " (to pass label sets, give a list of sets)" \
                if isinstance(y_true, (list, tuple)) else ""
            raise ValueError(f"{name} must be binary (0/1); found values {bad}{hint}")
    if n_labels is not None and dense.shape[1] != n_labels:
        if against is None:
            raise ValueError(f"{name} has {dense.shape[1]} labels, expected {n_labels}")
        raise ValueError(f"{name} has {dense.shape[1]} labels but {against} has {n_labels} "
                         f"columns")
    return dense


def _binary_uint8(arr):
    """The real or boolean matrix ``arr`` as a C-contiguous uint8 matrix (``arr`` itself when
    it already is one), or None when a value is neither 0 nor 1. One parallel pass checks and
    converts the common dtypes; others (float16, long double, non-native byte order) take
    NumPy's serial path."""
    if arr.dtype == bool:  # 0/1 by definition, whatever bytes a view may have put there
        return np.ascontiguousarray(arr, dtype=np.uint8)
    if arr.dtype not in BINARY_CHECKED_DTYPES:
        if not ((arr == 0) | (arr == 1)).all():
            return None
        return np.ascontiguousarray(arr, dtype=np.uint8)
    arr = np.ascontiguousarray(arr)
    out = arr if arr.dtype == np.uint8 else np.empty(arr.shape, dtype=np.uint8)
    bad = _checks.binary_to_uint8(arr.ravel(), _NO_OUTPUT if out is arr else out.ravel())
    return None if bad >= 0 else out


def is_label_sets(y):
    """True when ``y`` is a list of label sets rather than a 0/1 matrix.

    Label sets: a list or tuple whose elements are sets/frozensets, or whose rows (lists,
    tuples or 1-D arrays) differ in length, or hold non-numeric labels (names). A
    rectangular nested list of numbers is read as a 0/1 matrix, exactly as
    ``numpy.asarray`` would read it: ``[[0, 1], [1, 0]]`` is a 2 x 2 indicator matrix,
    ``[{0, 1}, {1}]`` and ``[np.array([0, 2]), np.array([1])]`` two label sets each.
    """
    if not isinstance(y, (list, tuple)) or not y:
        return False
    rows = list(y)
    if any(isinstance(r, (set, frozenset)) for r in rows):
        return True
    if any(np.isscalar(r) or (isinstance(r, np.ndarray) and r.ndim != 1) for r in rows):
        return False
    rows = [list(r) for r in rows]
    if len({len(r) for r in rows}) > 1:
        return True
    return any(not isinstance(v, (numbers.Number, np.number)) for r in rows for v in r)


MAX_INDICATOR_BYTES = 2**32  # a 0/1 matrix built from label sets or a sparse truth


def check_indicator_size(shape, name):
    if shape[0] * shape[1] > MAX_INDICATOR_BYTES:
        raise ValueError(f"{name}: a {shape[0]} x {shape[1]} indicator matrix would take "
                         f"{shape[0] * shape[1] / 2**30:.1f} GiB; at most "
                         f"{MAX_INDICATOR_BYTES // 2**30} GiB are allowed")
    check_memory(shape[0] * shape[1], f"{name}: a {shape[0]} x {shape[1]} indicator matrix")


def check_n_labels(n_labels, name="n_labels"):
    """``n_labels`` as an int in [1, MAX_COLUMNS]; TypeError/ValueError otherwise."""
    if isinstance(n_labels, bool) or not isinstance(n_labels, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(n_labels).__name__}")
    if n_labels < 1:
        raise ValueError(f"{name} must be >= 1, got {n_labels!r}")
    if n_labels > MAX_COLUMNS:
        raise ValueError(f"{name} must be <= {MAX_COLUMNS}, got {n_labels!r}")
    return int(n_labels)


def _label_indices(labels, name):
    """One label set as an int64 array; TypeError for anything but integers."""
    arr = np.asarray(list(labels))
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype.kind == "O" and all(isinstance(v, numbers.Integral)
                                     and not isinstance(v, bool) for v in arr.ravel()):
        bad = max(arr.ravel(), key=abs)
        if abs(bad) > MAX_COLUMNS:
            raise ValueError(f"{name}: label index {bad} out of range")
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{name}: label indices must be integers, got {arr.ravel()[:5].tolist()}")
    if arr.dtype.kind == "u" and int(arr.max()) > MAX_COLUMNS:
        raise ValueError(f"{name}: label index {int(arr.max())} out of range")
    return arr.astype(np.int64, copy=False)


def label_sets_to_matrix(label_sets, n_labels=None, name="y_true"):
    """Turn a list of iterables of non-negative integer label indices into a uint8
    indicator matrix with ``n_labels`` columns (default: the largest index + 1).

    Raises TypeError for non-integer labels (floats are not truncated), ValueError for a
    negative index, an index >= ``n_labels``, more than ``MAX_COLUMNS`` labels, or a matrix
    of more than ``MAX_INDICATOR_BYTES`` bytes.
    """
    rows = [_label_indices(s, name) for s in label_sets]
    if not rows:
        raise ValueError(f"{name} is empty")
    if any(r.size and r.min() < 0 for r in rows):
        raise ValueError(f"{name}: label indices must be non-negative")
    top = max((int(r.max()) for r in rows if r.size), default=-1)
    if n_labels is None:
        if top < 0:
            raise ValueError(f"{name} has no labels")
        q = top + 1
        if q > MAX_COLUMNS:
            raise ValueError(f"{name}: label index {top} out of range (at most "
                             f"{MAX_COLUMNS} labels)")
    else:
        q = check_n_labels(n_labels)
        if top >= q:
            raise ValueError(f"{name}: label index {top} out of range for {q} labels")
    check_indicator_size((len(rows), q), name)
    out = np.zeros((len(rows), q), dtype=np.uint8)
    for i, r in enumerate(rows):
        out[i, r] = 1
    return out


def check_same_shape(a_shape, b_shape, a_name="y_true", b_name="y_score"):
    if tuple(a_shape) != tuple(b_shape):
        raise ValueError(f"{a_name} has shape {tuple(a_shape)} but {b_name} has shape "
                         f"{tuple(b_shape)}")


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
