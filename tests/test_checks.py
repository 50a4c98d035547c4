"""The parallel input checks (fastrank._ext.checks) against plain NumPy, on any number of
threads, and the validation built on them: same results and errors as NumPy's serial checks."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrank._ext import checks
from fastrank._parallel import num_threads
from fastrank._validation import BINARY_CHECKED_DTYPES, check_features, check_scores, \
    check_truth

SPECIALS = [0.0, 1.0, -0.0, np.nan, np.inf, -np.inf, 2.5]


def first_nan_reference(values, nonfinite):
    bad = np.flatnonzero(~np.isfinite(values) if nonfinite else np.isnan(values))
    return int(bad[0]) if bad.size else -1


def binary_reference(values):
    bad = np.flatnonzero((values != 0) & (values != 1))
    return int(bad[0]) if bad.size else -1


# sizes around the kernel's chunk (n // 64) and block (4096) boundaries
sizes = st.sampled_from([1, 2, 63, 64, 65, 4095, 4096, 4097, 64 * 4096 + 3, 300_001])


@settings(max_examples=60, deadline=None)
@given(n=sizes, dtype=st.sampled_from([np.float32, np.float64]),
       bad=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.sampled_from(SPECIALS)),
                    max_size=4),
       nonfinite=st.booleans(), threads=st.sampled_from([1, 2, 3]))
def test_first_nan_is_numpys_first_position(n, dtype, bad, nonfinite, threads):
    values = np.zeros(n, dtype=dtype)
    for where, value in bad:
        values[int(where * n)] = value
    with num_threads(threads):
        assert checks.first_nan(values, nonfinite) == first_nan_reference(values, nonfinite)


@settings(max_examples=80, deadline=None)
@given(n=sizes, dtype=st.sampled_from(BINARY_CHECKED_DTYPES),
       bad=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.sampled_from([2, 3, 100])),
                    max_size=3),
       seed=st.integers(0, 2**32 - 1), threads=st.sampled_from([1, 2, 3]))
def test_binary_to_uint8_checks_and_converts_like_numpy(n, dtype, bad, seed, threads):
    values = np.random.default_rng(seed).integers(0, 2, n).astype(dtype)
    for where, value in bad:
        values[int(where * n)] = -value if np.dtype(dtype).kind == "i" and value == 100 \
            else value
    out = np.full(n, 7, dtype=np.uint8)
    with num_threads(threads):
        found = checks.binary_to_uint8(values, out)
        assert checks.binary_to_uint8(values, np.empty(0, np.uint8)) == found
    assert found == binary_reference(values)
    if found < 0:
        assert np.array_equal(out, values.astype(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_truth_specials(dtype):
    """Floats are checked from their bits: every value one bit away from 0.0 or 1.0, or of
    the other sign, is found; -0.0 is 0."""
    one, tiny = dtype(1), np.finfo(dtype).smallest_subnormal
    cases = [(-0.0, True), (np.nan, False), (-np.nan, False), (np.inf, False), (0.5, False),
             (-1.0, False), (2.0, False), (tiny, False), (-tiny, False),
             (np.nextafter(one, dtype(2)), False), (np.nextafter(one, dtype(0)), False)]
    for value, ok in cases:
        values = np.array([0.0, 1.0, value, 1.0], dtype=dtype)
        out = np.empty(4, np.uint8)
        assert checks.binary_to_uint8(values, out) == (-1 if ok else 2)
        if ok:
            assert out.tolist() == [0, 1, 0, 1]

def test_integer_truth_extremes():
    """Integers are 0 or 1 iff v >> 1 is 0: the extremes of each type are found."""
    for dtype in BINARY_CHECKED_DTYPES:
        info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
        if info is None:
            continue
        for value in {info.max, 2} | ({info.min, -1} if info.min < 0 else set()):
            values = np.array([1, 0, value, 0], dtype=dtype)
            assert checks.binary_to_uint8(values, np.empty(4, np.uint8)) == 2, (dtype, value)


def test_truth_output_size_is_checked():
    with pytest.raises(ValueError, match="out has 2 entries, values 3"):
        checks.binary_to_uint8(np.zeros(3), np.empty(2, np.uint8))
    assert checks.first_nan(np.empty(0)) == -1


ALL_DTYPES = [*BINARY_CHECKED_DTYPES, np.dtype(bool), np.dtype(np.float16),
              np.dtype(">i8"), np.dtype(">f8")]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
def test_check_truth_of_every_dtype_equals_numpy_conversion(dtype, order):
    y = np.random.default_rng(1).integers(0, 2, (50, 7)).astype(dtype)
    y = np.asfortranarray(y) if order == "F" else y
    got = check_truth(y)
    assert got.dtype == np.uint8 and got.flags.c_contiguous
    assert np.array_equal(got, y.astype(np.uint8))


def test_check_truth_keeps_a_uint8_matrix_without_copy():
    y = np.zeros((4, 3), dtype=np.uint8)
    assert check_truth(y) is y


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != np.dtype(bool)], ids=str)
def test_check_truth_names_the_non_binary_values_as_before(dtype):
    y = np.zeros((6, 5), dtype=dtype)
    y[4, 3], y[1, 0] = 3, 2
    with pytest.raises(ValueError,
                       match=r"y_true must be binary \(0/1\); found values \[2\.? 3\.?\]$"):
        check_truth(y)
    with pytest.raises(ValueError, match=r"found values \[2\] \(to pass label sets, give a "
                                         r"list of sets\)"):
        check_truth([[0, 2], [1, 0]])


def test_check_truth_float_nan_is_not_binary():
    with pytest.raises(ValueError, match=r"must be binary \(0/1\); found values \[nan\]"):
        check_truth(np.array([[0.0, np.nan]]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_check_scores_names_the_first_row_with_nan(dtype, order):
    s = np.zeros((40, 9), dtype=dtype, order=order)
    s[33, 1] = s[21, 8] = np.nan
    first_row = 21 if order == "C" else 33  # the first NaN in memory order, as before
    with pytest.raises(ValueError, match=f"y_score contains NaN \\(first in row {first_row}\\)"):
        check_scores(s)
    with pytest.raises(ValueError, match=r"contains NaN \(first in row 21\)"):
        check_scores(sp.csr_matrix(np.where(np.isnan(s), np.nan, 1.0)))
    s[~np.isnan(s)] = np.inf  # infinite beliefs are allowed; NaN is not
    s[np.isnan(s)] = 0.0
    assert check_scores(s) is s


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_features_rejects_nan_and_infinity(bad):
    X = np.ones((30, 4))
    X[17, 2] = bad
    for data in (X, sp.csr_matrix(X), X.astype(np.float32)):
        with pytest.raises(ValueError, match="X contains NaN or infinity"):
            check_features(data)
    X[17, 2] = 1e308
    assert np.array_equal(check_features(X), X)
