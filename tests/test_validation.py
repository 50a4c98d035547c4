"""The shared input checks: accepted forms, no needless copies, and the error wording."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

from fastrank._validation import as_real_array, check_random_state, check_scores, \
    check_truth


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float32, bool, np.uint16])
def test_truth_dtypes(dtype):
    y = np.array([[0, 1, 1], [1, 0, 0]]).astype(dtype)
    out = check_truth(y)
    assert out.dtype == np.uint8 and out.flags.c_contiguous
    assert out.tolist() == [[0, 1, 1], [1, 0, 0]]


def test_truth_forms_agree():
    dense = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.uint8)
    assert np.array_equal(check_truth(sp.csr_matrix(dense)), dense)
    assert np.array_equal(check_truth([{1, 2}, [0]], n_labels=3), dense)
    assert check_truth(dense) is dense  # already canonical: no copy


@pytest.mark.parametrize("bad, found", [
    (np.array([[0, 2]]), "[2]"), (np.array([[-1, 1]]), "[-1]"),
    (np.array([[0.5, 1.0]]), "[0.5]"), (np.array([[np.nan, 1.0]]), "[nan]"),
    (np.array([[0, 3]], dtype=np.uint8), "[3]"), (sp.csr_matrix([[0, 2.0]]), "[2."),
])
def test_truth_must_be_binary(bad, found):
    with pytest.raises(ValueError, match=r"must be binary \(0/1\); found values " +
                       found.replace("[", r"\[").replace(".", r"\.")):
        check_truth(bad)


def test_truth_other_errors():
    with pytest.raises(ValueError, match="has 3 labels, expected 4"):
        check_truth(np.zeros((2, 3)), n_labels=4)
    with pytest.raises(ValueError, match="out of range"):
        check_truth([{0, 5}], n_labels=3)
    with pytest.raises(ValueError, match="non-negative"):
        check_truth([{-1}], n_labels=3)
    with pytest.raises(ValueError, match="give a list of sets"):  # [[0, 5]] is a matrix
        check_truth([[0, 5]], n_labels=2)
    with pytest.raises(TypeError, match="numeric"):
        check_truth(np.array([["a"]]))
    with pytest.raises(ValueError, match="empty"):
        check_truth(np.zeros((0, 3)))


def test_scores_keep_layout_and_dtype_without_copy():
    f32 = np.asfortranarray(np.ones((3, 4), dtype=np.float32))
    assert check_scores(f32) is f32
    c64 = np.ones((3, 4))
    assert check_scores(c64) is c64
    assert check_scores(np.ones((3, 4), dtype=np.int32)).dtype == np.float64
    strided = np.ones((6, 8))[::2, ::2]
    assert check_scores(strided).flags.c_contiguous


def test_scores_sparse_canonical():
    m = sp.coo_matrix(([1.0, 2.0], ([0, 0], [1, 1])), shape=(2, 3))  # duplicate entries
    out = check_scores(m)
    assert sp.isspmatrix_csr(out) and out.has_canonical_format and out[0, 1] == 3.0


def test_random_state():
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    assert check_random_state(5).integers(100) == np.random.default_rng(5).integers(100)
    with pytest.raises(TypeError, match="random_state"):
        check_random_state(1.5)


@pytest.mark.parametrize("y, expected", [
    ([[0, 1], [1, 0]], [[0, 1], [1, 0]]),           # rectangular numbers: a 0/1 matrix
    ([{0, 1}, {1}], [[1, 1], [0, 1]]),               # sets: label sets
    ([[0, 1], [1]], [[1, 1], [0, 1]]),               # ragged: label sets
    ([(True, False), (False, True)], [[1, 0], [0, 1]]),
    ([np.array([0, 1]), np.array([1])], [[1, 1], [0, 1]]),  # ragged 1-D arrays: label sets
    ([np.array([0, 1]), np.array([1, 0])], [[0, 1], [1, 0]]),  # rectangular: a matrix
])
def test_nested_lists_are_read_like_numpy_unless_they_are_sets(y, expected):
    assert check_truth(y, n_labels=2).tolist() == expected


def test_estimator_input_rules():
    from fastrank._base import MultiLabelEstimator, NotFittedError
    from fastrank._validation import check_features

    class Dummy(MultiLabelEstimator):
        def __init__(self, k=1):
            self.k = k

        def fit(self, X, Y):
            self._check_fit_input(X, Y)
            return self

    X = sp.csr_matrix(([1.0, 2.0], ([0, 0], [1, 1])), shape=(2, 3))  # duplicates
    before = (X.data.copy(), X.indices.copy())
    Dummy()._check_fit_input(X, [[0, 1], [1, 0]])
    assert np.array_equal(X.data, before[0]) and np.array_equal(X.indices, before[1])
    with pytest.raises(TypeError, match="real numeric"):
        check_features(np.array([[1 + 2j, 0]]))
    m = Dummy()
    _, Y = m._check_fit_input(np.ones((2, 3)), [["sport", "news"], ["news"]])
    assert m.classes_.tolist() == ["news", "sport"] and Y.tolist() == [[1, 1], [1, 0]]
    # one label per set: the index lists are rectangular, still label sets
    _, Y = m._check_fit_input(np.ones((3, 3)), [{1}, {2}, {3}])
    assert m.classes_.tolist() == [1, 2, 3] and Y.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    with pytest.raises(NotFittedError):
        Dummy()._check_predict_input(np.ones((2, 3)))
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


def test_save_needs_plain_parameters(tmp_path):
    from fastrank import KNN, VGRAM
    X, Y = np.eye(4), np.eye(4, dtype=np.uint8)
    model = VGRAM(n_neurons=2, n_synapses=4, random_state=np.random.default_rng(0)).fit(X, Y)
    with pytest.raises(TypeError, match="random_state as an int"):
        model.save(tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()
    KNN().fit(X, Y).save(tmp_path / "knn.npz")
    assert np.array_equal(KNN.load(tmp_path / "knn.npz").decision_function(X),
                          KNN().fit(X, Y).decision_function(X))


def test_save_is_atomic(tmp_path, monkeypatch):
    """A save that fails half-way leaves the previous file intact and no temporary file."""
    import fastrank._base as base
    from fastrank import KNN
    X, Y = np.eye(4), np.eye(4, dtype=np.uint8)
    KNN().fit(X, Y).save(tmp_path / "m.npz")
    before = (tmp_path / "m.npz").read_bytes()

    def half_then_fail(f, arrays):
        f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(base, "write_npz", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        KNN(k=2).fit(X, Y).save(tmp_path / "m.npz")
    assert (tmp_path / "m.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_sparse_scores_and_truth_dtypes():
    b = sp.csr_matrix(np.array([[True, False], [False, True]]))
    assert check_scores(b).dtype == np.float64  # bool works sparse as dense
    with pytest.raises(ValueError, match=r"found values \[2\.\]"):  # only the offending ones
        check_truth(sp.csr_matrix(np.array([[1.0, 2.0], [1.0, 0.0]])))


# ---- malformed sparse input: refused before any kernel reads it ---------------------------

from fastrank._validation import MAX_COLUMNS, MAX_INDICATOR_BYTES, check_csr, \
    check_features, label_sets_to_matrix  # noqa: E402

DENSE = np.array([[0.5, 0.0, 0.2, 0.0], [0.0, 0.0, 0.0, 0.0], [0.1, 0.3, 0.3, 0.9]])


def _csr():
    return sp.csr_matrix(DENSE)


def _with(**arrays):
    m = _csr()
    for name, value in arrays.items():
        setattr(m, name, np.asarray(value))
    return m


# indptr [0 2 2 6], indices [0 2 | 0 1 2 3]
MALFORMED = [
    (_with(indices=[0, 4, 0, 1, 2, 3]), ValueError, r"column index 4 out of range \[0, 4\)"),
    (_with(indices=[0, -1, 0, 1, 2, 3]), ValueError, r"column index -1 out of range"),
    (_with(indices=[0, 2**31 - 1, 0, 1, 2, 3]), ValueError, r"column index 2147483647"),
    (_with(indptr=[0, 3, 2, 6]), ValueError, r"indptr must be non-decreasing"),
    (_with(indptr=[1, 2, 2, 6]), ValueError, r"indptr must start at 0"),
    (_with(indptr=[0, 2, 2, 5]), ValueError, r"indptr ends at 5 but indices has 6"),
    (_with(indptr=[0, 2, 2, 7]), ValueError, r"indptr ends at 7"),
    (_with(indptr=[0, 2, 6]), ValueError, r"indptr has 3 entries, expected 4"),
    (_with(indptr=[0, 2, 2, 6, 6]), ValueError, r"indptr has 5 entries, expected 4"),
    (_with(indices=[0, 2, 0, 1, 2]), ValueError, r"indices has 5"),
    (_with(data=[0.5, 0.2, 0.1, 0.3, 0.3]), ValueError, r"data 5 entries"),
    (_with(indices=np.array([0, 2, 0, 1, 2, 3], dtype=np.float64)), TypeError,
     r"indices must hold integers, got dtype float64"),
    (_with(indptr=np.array([0, 2, 2, 6], dtype=bool)), TypeError, r"indptr must hold integers"),
    (_with(indptr=np.array([[0, 2, 2, 6]])), ValueError, r"indptr must be 1-D"),
    (_with(data=DENSE[DENSE != 0] + 1j), TypeError, r"real numeric values, got dtype complex"),
    (_with(data=DENSE[DENSE != 0].astype(object)), TypeError, r"real numeric values"),
]


@pytest.mark.parametrize("bad, exc, message", MALFORMED)
def test_check_csr_refuses_malformed_structure(bad, exc, message):
    with pytest.raises(exc, match=message):
        check_csr(bad, "S")


def test_check_csr_other_formats():
    csc = sp.csc_matrix(DENSE)
    csc.indices = csc.indices.copy()
    csc.indices[0] = 3  # a row index out of range for 3 rows
    with pytest.raises(ValueError, match=r"row index 3 out of range \[0, 3\)"):
        check_csr(csc, "S")
    coo = sp.coo_matrix(DENSE)
    coo.col = coo.col.copy()
    coo.col[-1] = 9
    with pytest.raises(ValueError, match=r"column index 9 out of range"):
        check_csr(coo, "S")
    coo = sp.coo_matrix(DENSE)
    coo.row = coo.row.copy()
    coo.row[0] = -2
    with pytest.raises(ValueError, match=r"row index -2 out of range"):
        check_csr(coo, "S")
    bsr = sp.bsr_matrix(DENSE, blocksize=(1, 2))
    bsr.indices = bsr.indices.copy()
    bsr.indices[0] = 2  # 2 block columns
    with pytest.raises(ValueError, match=r"index 2 out of range \[0, 2\)"):
        check_csr(bsr, "S")
    for form in (sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.dok_matrix, sp.dia_matrix,
                 sp.csr_array, lambda d: sp.bsr_matrix(d, blocksize=(1, 2))):
        out = check_csr(form(DENSE), "S")
        assert sp.isspmatrix_csr(out) and np.array_equal(out.toarray(), DENSE)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.int64,
                                   np.uint64, np.dtype(">i4"), np.dtype(">i8")])
def test_check_csr_converts_index_dtypes(dtype):
    """Small, unsigned or big-endian index arrays become one native kernel dtype; the values
    are unchanged and the caller's matrix keeps its own arrays."""
    m = _csr()
    m.indptr, m.indices = m.indptr.astype(dtype), m.indices.astype(dtype)
    out = check_csr(m, "S")
    assert out.indptr.dtype == out.indices.dtype and out.indptr.dtype in (np.int32, np.int64)
    assert out.indptr.dtype.isnative and np.array_equal(out.toarray(), DENSE)
    assert m.indptr.dtype == dtype and m.indices.dtype == dtype
    import fastrank
    assert np.array_equal(fastrank.rank(m), fastrank.rank(DENSE))


def test_int8_indptr_that_wrapped_is_refused_and_later_calls_work():
    """An int8 indptr whose values wrapped (nnz > 127) is refused; nothing is corrupted."""
    import fastrank
    dense = np.tile(np.arange(1.0, 101.0), (2, 1))  # 200 stored values
    m = sp.csr_matrix(dense)
    m.indptr = m.indptr.astype(np.int8)  # [0, 100, -56]
    with pytest.raises(ValueError, match="indptr must be non-decreasing"):
        fastrank.rank(m)
    for _ in range(3):
        assert np.array_equal(fastrank.rank(sp.csr_matrix(dense)), fastrank.rank(dense))


def test_check_csr_does_not_trust_a_stale_canonical_flag():
    """Indices changed in place after SciPy cached has_canonical_format: duplicates and
    disorder are found from the arrays and fixed on a copy."""
    m = _csr()
    assert m.has_canonical_format
    before = [a.copy() for a in (m.data, m.indices, m.indptr)]
    m.indices[2:4] = [1, 0]  # row 2 now unsorted
    m.indices[4] = 1  # and a duplicate of column 1
    snapshot = [a.copy() for a in (m.data, m.indices, m.indptr)]
    out = check_csr(m, "S")
    expected = np.zeros((3, 4))
    for i in range(3):
        for p in range(m.indptr[i], m.indptr[i + 1]):
            expected[i, m.indices[p]] += m.data[p]
    assert np.array_equal(out.toarray(), expected) and out.has_canonical_format
    assert all(np.diff(out.indices[out.indptr[i]:out.indptr[i + 1]]).min(initial=1) > 0
               for i in range(3))
    assert all(np.array_equal(a, b) for a, b in zip(snapshot, (m.data, m.indices, m.indptr)))
    assert not np.array_equal(before[1], m.indices)


def test_duplicates_of_integer_values_do_not_wrap():
    m = sp.csr_matrix((np.array([255, 1], dtype=np.uint8), np.array([0, 0]),
                       np.array([0, 2])), shape=(1, 2))
    assert check_csr(m, "S").toarray().tolist() == [[256.0, 0.0]]
    coo = sp.coo_matrix((np.array([True, True]), (np.array([0, 0]), np.array([1, 1]))),
                        shape=(1, 2))
    assert check_csr(coo, "S").toarray().tolist() == [[0.0, 2.0]]
    with pytest.raises(ValueError, match="must be binary"):  # 1 + 1 is not a 0/1 entry
        check_truth(coo)


def test_valid_canonical_csr_is_returned_without_copy():
    m = _csr()
    assert check_csr(m, "S") is m
    assert check_scores(m) is m


def test_sparse_truth_never_changes_the_callers_matrix():
    m = sp.csr_matrix((np.array([1, 1, 1.0]), np.array([2, 0, 2]), np.array([0, 3])),
                      shape=(1, 3))  # unsorted, with a duplicate
    arrays = [a.copy() for a in (m.data, m.indices, m.indptr)]
    with pytest.raises(ValueError, match="must be binary"):
        check_truth(m)
    m.data[:] = [1, 1, 0]  # column 2: 1 + 0, column 0: 1
    arrays[0] = m.data.copy()
    assert check_truth(m).tolist() == [[1, 0, 1]]
    assert all(np.array_equal(a, b) for a, b in zip(arrays, (m.data, m.indices, m.indptr)))


def _public_sparse_callers():
    import fastrank
    from fastrank import metrics as M
    from fastrank.calibration import brier_score
    from fastrank.text import tfidf_from_counts
    Y = (DENSE > 0.25).astype(np.uint8)
    return {
        "rank": lambda S: fastrank.rank(S),
        "tie_groups": lambda S: fastrank.tie_groups(S),
        "evaluate": lambda S: M.evaluate(Y, S),
        "Evaluator": lambda S: M.Evaluator().update(Y, S),
        "one_error": lambda S: M.one_error(Y, S),
        "average_precision": lambda S: M.average_precision(Y, S, ties="ordinal"),
        "cutoff": lambda S: M.cutoff(S, top_k=2),
        "cutoff_threshold": lambda S: M.cutoff(S, threshold=0.2),
        "auc": lambda S: M.auc(Y, S),
        "sparse truth": lambda S: M.hamming_loss(S, Y),
        "sparse truth, evaluate": lambda S: M.evaluate(S, DENSE),
        "brier_score": lambda S: brier_score(Y, S),
        "tfidf_from_counts": tfidf_from_counts,
        "Dataset": lambda S: __import__("fastrank.datasets").datasets.Dataset(S, Y),
    }


@pytest.mark.parametrize("caller", sorted(_public_sparse_callers()))
@pytest.mark.parametrize("bad, exc, message", MALFORMED[:8])
def test_every_public_sparse_input_is_checked(caller, bad, exc, message):
    with pytest.raises(exc, match=message):
        _public_sparse_callers()[caller](bad)


def test_check_features():
    X = check_features(_csr())
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64
    with pytest.raises(ValueError, match=r"column index 4 out of range"):
        check_features(_with(indices=[0, 4, 0, 1, 2, 3]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_features(_with(data=[0.5, np.inf, 0.1, 0.3, 0.3, 0.9]))
    with pytest.raises(TypeError, match="real numeric"):
        check_features(np.ones((2, 2), dtype=complex))
    assert check_features(np.ones((2, 2), dtype=np.int8)).dtype == np.float64


def test_too_many_columns():
    huge = sp.csr_matrix((1, MAX_COLUMNS + 1))
    with pytest.raises(ValueError, match="at most 2147483647 are supported"):
        check_scores(huge)
    with pytest.raises(ValueError, match="at most 2147483647 are supported"):
        check_features(huge)


# ---- label sets ------------------------------------------------------------------------

def test_label_sets_refuse_non_integers():
    from fastrank.metrics import hamming_loss
    with pytest.raises(TypeError, match=r"label indices must be integers, got \[0.5\]"):
        hamming_loss([{0.5}, {1.9}], [{0}, {1}], n_labels=3)
    with pytest.raises(TypeError, match="must be integers"):
        label_sets_to_matrix([[1.0]], 2)
    with pytest.raises(TypeError, match="must be integers"):
        label_sets_to_matrix([[True]], 2)
    with pytest.raises(TypeError, match="must be integers"):
        label_sets_to_matrix([["a"]], 2)
    assert label_sets_to_matrix([[np.int8(1)], [np.uint64(0)], []], 2).tolist() == \
        [[0, 1], [1, 0], [0, 0]]


def test_label_sets_bounds():
    with pytest.raises(ValueError, match=r"label index 1099511627776 out of range for 3"):
        label_sets_to_matrix([{2**40}], 3)
    with pytest.raises(ValueError, match=r"label index \d+ out of range"):
        label_sets_to_matrix([{2**70}])
    with pytest.raises(ValueError, match=r"at most 2147483647 labels"):
        label_sets_to_matrix([{2**31}])
    with pytest.raises(ValueError, match=r"indicator matrix would take .* GiB"):
        label_sets_to_matrix([{0}] * 5, n_labels=MAX_INDICATOR_BYTES // 4)
    with pytest.raises(ValueError, match=r"n_labels must be <= 2147483647"):
        label_sets_to_matrix([{0}], n_labels=2**63)
    with pytest.raises(TypeError, match=r"n_labels must be an integer"):
        label_sets_to_matrix([{0}], n_labels=2.0)


def test_complex_truth_is_a_type_error():
    with pytest.raises(TypeError, match="real numeric values, got dtype complex"):
        check_truth(np.array([[1 + 0j, 0]]))
    with pytest.raises(TypeError, match="real numeric values, got dtype complex"):
        check_scores(np.array([[1 + 0j, 0]]))


def _real_input_callers():
    import fastrank
    from fastrank import metrics as M
    from fastrank import stats
    from fastrank.calibration import Isotonic, brier_score
    Y = np.array([[1, 0], [0, 1]])
    return {
        "rank": lambda v: fastrank.rank(v),
        "tie_groups": lambda v: fastrank.tie_groups(v),
        "evaluate y_score": lambda v: M.evaluate(Y, v),
        "evaluate y_true": lambda v: M.evaluate(v, [[.1, .2], [.3, .4]]),
        "Evaluator": lambda v: M.Evaluator().update(Y, v),
        "auc": lambda v: M.auc(Y, v),
        "auc binary": lambda v: M.auc([1, 0], v[0]),
        "coverage weights": lambda v: M.coverage(Y, [[.1, .2], [.3, .4]], sample_weight=v[0]),
        "KNN X": lambda v: fastrank.KNN(k=1).fit(v, Y),
        "KNN Y": lambda v: fastrank.KNN(k=1).fit([[1., 2.], [3., 4.]], v),
        "brier_score": lambda v: brier_score(Y, v),
        "Isotonic": lambda v: Isotonic().fit(v, Y),
        "wilcoxon": lambda v: stats.wilcoxon(v[0], v[1]),
        "friedman": lambda v: stats.friedman(v),
    }


@pytest.mark.parametrize("caller", sorted(_real_input_callers()))
@pytest.mark.parametrize("dtype", ["m8[s]", "M8[s]", "m8[ns]"])
def test_dates_and_durations_are_not_numbers(caller, dtype):
    # NumPy counts timedelta64 as a signed integer type; the values are not numbers here
    values = np.array([[1, 0], [0, 1]]).astype(dtype)
    with pytest.raises(TypeError, match=rf"real (numeric values|numbers), got dtype "
                                        rf"{re.escape(str(values.dtype))}"):
        _real_input_callers()[caller](values)


_BIG = 2**60 + 1  # 2**60 + 1 and 2**60 round to the same float64


def _beliefs_callers():
    import fastrank
    from fastrank import metrics as M
    Y = np.array([[1, 0, 0], [0, 1, 0]])
    return {
        "rank": lambda v: fastrank.rank(v, "dense"),
        "rank csr": lambda v: fastrank.rank(sp.csr_matrix(v), "dense"),
        "rank fortran": lambda v: fastrank.rank(np.asfortranarray(v), "dense"),
        "ranking_loss": lambda v: M.ranking_loss(Y, v),
        "evaluate": lambda v: M.evaluate(Y, v),
        "evaluate_at_k": lambda v: M.evaluate_at_k(Y, v, k=2),
        "evaluate_at_k pairs": lambda v: M.evaluate_at_k(Y, (np.tile([0, 1, 2], (2, 1)), v), k=2),
        "auc": lambda v: M.auc(Y, v),
    }


@pytest.mark.parametrize("caller", sorted(_beliefs_callers()))
@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.longdouble])
def test_beliefs_that_float64_would_tie_are_refused(caller, dtype):
    """Beliefs tie exactly when equal: integers past 2**53 (or long doubles) that would
    round to one float64 are refused, naming the value and its row; those float64 holds
    exactly are ranked as they are."""
    if dtype is np.longdouble:
        if np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps:
            pytest.xfail("long double is float64 on this platform")
        big, bad = np.longdouble(1) + np.finfo(np.longdouble).eps, "1.0000000000000000001"
    else:
        big, bad = _BIG, str(_BIG)
    values = np.array([[3, 2, 1], [big, big - 1, 5]], dtype=dtype)
    with pytest.raises(ValueError, match=rf"holds {re.escape(bad)}\S* \(first in row 1\), "
                                         r"which float64 cannot hold exactly"):
        _beliefs_callers()[caller](values)
    exact = np.array([[3, 2, 1], [2**60, 2**60 - 2**8, 5]], dtype=dtype)
    _beliefs_callers()[caller](exact)  # accepted
    import fastrank
    np.testing.assert_array_equal(fastrank.rank(exact, "dense"), [[1, 2, 3], [1, 2, 3]])


# ---- unbounded parameters ----------------------------------------------------------------

@pytest.mark.parametrize("top_k", [3, 4, 2**31, 2**63, 2**100])
def test_cutoff_top_k_beyond_the_labels_takes_them_all(top_k):
    from fastrank.metrics import cutoff
    S = np.array([[0.3, 0.2, 0.1], [0.0, 0.0, 0.5]])
    for scores in (S, sp.csr_matrix(S)):
        assert cutoff(scores, top_k=top_k).tolist() == [[1, 1, 1], [1, 1, 1]]
    assert cutoff(S, top_k=1).tolist() == [[1, 0, 0], [0, 0, 1]]


def test_cutoff_parameter_errors():
    from fastrank.metrics import cutoff
    S = np.array([[0.3, 0.2, 0.1]])
    with pytest.raises(ValueError, match="top_k must be an integer >= 0"):
        cutoff(S, top_k=-2**63)
    with pytest.raises(TypeError, match="top_k must be an integer"):
        cutoff(S, top_k=float("inf"))
    with pytest.raises(TypeError, match="threshold must be real numeric values"):
        cutoff(S, threshold=0.5 + 0j)


def test_set_metrics_n_labels_bound():
    from fastrank.metrics import f1, hamming_loss
    with pytest.raises(ValueError, match=rf"n_labels must be <= 2147483647, got {2**63}"):
        hamming_loss([{0}], [{1}], n_labels=2**63)
    with pytest.raises(ValueError, match=r"indicator matrix would take"):
        f1([{0}] * 4, [{1}] * 4, n_labels=2**31 - 1)


def test_thread_counts_are_bounded():
    from fastrank._parallel import MAX_THREADS, effective_n_jobs, num_threads
    assert effective_n_jobs(3) == 3 and effective_n_jobs(-1) >= 1
    for bad in (0, -2, MAX_THREADS + 1, 50_000, 10**6, 2**63):
        with pytest.raises(ValueError, match="n_jobs"):
            effective_n_jobs(bad)
    for bad in (True, 2.0, "2"):
        with pytest.raises(TypeError, match="n_jobs"):
            effective_n_jobs(bad)
    with pytest.raises(ValueError, match="n_jobs"):
        with num_threads(100_000):
            pass


# ---- copies and checks of sparse input ---------------------------------------------------

def _non_canonical(dtype, n=1000, m=4000, nnz=200_000, seed=0):
    """A CSR matrix with unsorted rows and a few duplicates (int32 indices)."""
    rng = np.random.default_rng(seed)
    counts = np.bincount(rng.integers(0, n, nnz), minlength=n)
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
    m = sp.csr_matrix((rng.integers(1, 9, nnz).astype(np.float64),
                       rng.integers(0, m, nnz).astype(np.int32), indptr), shape=(n, m))
    m.data = m.data.astype(dtype)  # assigned: SciPy's constructor refuses big-endian data
    assert not m.has_canonical_format
    return m


def _sum_duplicates_and_sort(m):
    """SciPy's canonical form of the CSR/CSC/COO matrix m (in float64 for integers)."""
    data = m.data.astype(m.data.dtype.newbyteorder("="))
    if data.dtype.kind != "f":
        data = data.astype(np.float64)
    if m.format == "coo":
        ref = sp.coo_matrix((data, (m.row, m.col)), shape=m.shape).tocsr()
    else:
        ref = getattr(sp, f"{m.format}_matrix")((data, m.indices.copy(), m.indptr.copy()),
                                                shape=m.shape).tocsr()
    ref.sum_duplicates()
    ref.sort_indices()
    return ref


def _peak_bytes(f, *args):
    """The result of f(*args) and the peak of the memory NumPy allocated meanwhile."""
    import tracemalloc
    tracemalloc.start()
    try:
        out = f(*args)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _bytes_of(csr):
    return csr.data.nbytes + csr.indices.nbytes + csr.indptr.nbytes


NON_CANONICAL = {
    "csr float64": lambda: _non_canonical(np.float64),
    "csr float32": lambda: _non_canonical(np.float32),
    "csr int64 (summed in float64)": lambda: _non_canonical(np.int64),
    "csr big-endian float64": lambda: _non_canonical(np.dtype(">f8")),
    "csc with duplicates": lambda: _non_canonical(np.float64).T.tocsr().T,
    "coo with duplicates": lambda: _non_canonical(np.float64).tocoo(),
}


@pytest.mark.parametrize("make", NON_CANONICAL.values(), ids=NON_CANONICAL.keys())
def test_check_csr_copies_a_non_canonical_matrix_once(make):
    """A non-canonical input is copied (or converted) once: the memory allocated at the peak
    is the result's arrays plus the small temporaries of the checks (one byte per entry),
    not a second copy. The result is SciPy's sum_duplicates + sort_indices of the input, and
    the caller's arrays are unchanged."""
    m = make()
    arrays = [a.copy() for a in _arrays(m)]
    out, peak = _peak_bytes(check_csr, m, "S")
    ref = _sum_duplicates_and_sort(m)
    assert out.has_canonical_format and ref.has_canonical_format
    np.testing.assert_array_equal(out.indptr, ref.indptr)
    np.testing.assert_array_equal(out.indices, ref.indices)
    np.testing.assert_array_equal(out.data, ref.data)
    assert out.data.dtype == ref.data.dtype
    assert out.indices.dtype == out.indptr.dtype == np.int32
    assert peak <= 1.12 * _bytes_of(out), (peak, _bytes_of(out))
    for a, b in zip(_arrays(m), arrays):
        assert a.dtype == b.dtype and np.array_equal(a, b)
        assert not any(np.shares_memory(a, c) for c in _arrays(out))


def _arrays(m):
    return (m.data, m.row, m.col) if m.format == "coo" else (m.data, m.indices, m.indptr)


def test_check_csr_copies_nothing_that_needs_no_change():
    m = _non_canonical(np.float64)
    m.sum_duplicates()
    assert check_csr(m, "S") is m
    arr = sp.csr_array(m)  # another class, the same arrays: shared, not copied
    out, peak = _peak_bytes(check_csr, arr, "S")
    assert all(a is b for a, b in zip((out.data, out.indices, out.indptr),
                                      (arr.data, arr.indices, arr.indptr)))
    assert peak < 0.12 * _bytes_of(out)  # the temporaries of the checks only
    wide = m.copy()
    wide.indptr = wide.indptr.astype(np.int64)  # only indptr needs converting
    out = check_csr(wide, "S")
    assert out.indptr.dtype == np.int32 and not np.shares_memory(out.indptr, wide.indptr)
    assert out.data is wide.data and out.indices is wide.indices


@pytest.mark.parametrize("form, calls", [(sp.csr_matrix, 1), (sp.csc_matrix, 1),
                                         (sp.coo_matrix, 0), (sp.lil_matrix, 0)])
def test_check_csr_does_not_check_scipy_conversions_again(monkeypatch, form, calls):
    """The compressed structure of the input is checked once; SciPy's conversion of a
    checked CSC or COO matrix to CSR is not checked again."""
    import fastrank._validation as validation
    seen = []
    real = validation._compressed

    def counting(*args, **kwargs):
        seen.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(validation, "_compressed", counting)
    m = form(np.array([[0, 1.5, 0, 2], [3, 0, 0, 0], [0, 0, 0, 4.5]]))
    out = validation.check_csr(m, "S")
    assert len(seen) == calls
    np.testing.assert_array_equal(out.toarray(), m.toarray())


def _unaligned(a):
    """A copy of ``a`` whose elements lie one byte off their alignment (a view of a byte
    buffer at offset 1)."""
    out = np.ndarray(a.shape, a.dtype, buffer=np.zeros(a.nbytes + 1, np.uint8), offset=1)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_unaligned_arrays_reach_the_kernels_aligned_copies():
    """The kernels read the elements as C types, which must be aligned: the input checks
    copy a view whose elements are not."""
    rng = np.random.default_rng(0)
    x = rng.random((5, 4))
    y = (x > 0.5).astype(np.int64)
    dense = [(check_scores(_unaligned(x)), x), (check_features(_unaligned(x)), x),
             (check_truth(_unaligned(y)), y), (as_real_array(_unaligned(x[0]), "w"), x[0])]
    for got, want in dense:
        assert got.flags.aligned
        np.testing.assert_array_equal(got, want)
    csr = sp.csr_matrix(x)
    parts = (csr.data, csr.indices, csr.indptr)
    bad = sp.csr_matrix(x)
    bad.data, bad.indices, bad.indptr = (_unaligned(a) for a in parts)
    for checked in (check_scores(bad), check_features(bad)):
        for got, want in zip((checked.data, checked.indices, checked.indptr), parts):
            assert got.flags.aligned
            np.testing.assert_array_equal(got, want)


def test_int32_indexed_copies_only_index_arrays_and_refuses_what_int32_cannot_hold():
    """A CSR matrix with int32 indices is returned itself; one with int64 ones gets int32
    copies (the same structure, its data shared); one too large for int32 gives None."""
    from types import SimpleNamespace

    from fastrank._validation import int32_indexed
    m = check_csr(sp.random(30, 40, density=0.2, format="csr", random_state=0), "m")
    assert m.indices.dtype == np.int32 and int32_indexed(m) is m
    wide = sp.csr_matrix(m.shape, dtype=m.dtype)
    wide.data, wide.indices, wide.indptr = m.data, m.indices.astype(np.int64), \
        m.indptr.astype(np.int64)
    narrow = int32_indexed(wide)
    assert narrow.indices.dtype == narrow.indptr.dtype == np.int32
    assert np.shares_memory(narrow.data, wide.data)
    assert np.array_equal(narrow.toarray(), m.toarray()) and narrow.has_canonical_format
    huge = SimpleNamespace(indices=np.empty(0, np.int64), indptr=np.empty(0, np.int64),
                           nnz=2**31, shape=(1, 2**31))
    assert int32_indexed(huge) is None


def test_arguments_of_the_wrong_kind_name_themselves():
    import fastrank
    from fastrank import metrics as M
    Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
    S = np.array([[.5, .2, .2, .1], [.3, .3, .1, 0.]])
    with pytest.raises(TypeError, match="ties must be a string or a sequence of strings, "
                                        "got NoneType"):
        M.evaluate(Y, S, ties=None)
    with pytest.raises(TypeError, match="method must be a string, got list"):
        fastrank.rank(S, ["min"])
    for beta in ("1", True, -1, 1e200, np.nan):  # beta**2 of 1e200 overflows
        with pytest.raises(ValueError, match=r"beta must be a number in \[0, 1e\+150\]"):
            M.fbeta(Y, Y, beta=beta)
    with pytest.raises(ValueError, match="random_state must be >= 0"):
        M.evaluate(Y, S, random_state=-1)
    # results answer to the aliases the call took
    assert M.evaluate(Y, S, ties="max")["max"] == M.evaluate(Y, S, ties="modified")["modified"]


def test_pandas_nullable_columns_read_as_their_numpy_types():
    """Float64, Int64 and boolean columns (NumPy reads them as objects) are read in their
    NumPy types; a missing value is a ValueError naming the argument."""
    pd = pytest.importorskip("pandas")
    from fastrank import metrics as M
    Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
    S = np.array([[.5, .2, .2, .1], [.3, .3, .1, 0.]])
    want = M.evaluate(Y, S).values
    got = M.evaluate(pd.DataFrame(Y.astype(bool)).astype("boolean"),
                     pd.DataFrame(S).astype("Float64")).values
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(M.evaluate(pd.DataFrame(Y).astype("Int64"), S).values, want)
    gap = pd.DataFrame(S).astype("Float64")
    gap.iloc[1, 2] = pd.NA
    with pytest.raises(ValueError, match=r"y_score holds missing values \(pandas.NA\)"):
        M.evaluate(Y, gap)
