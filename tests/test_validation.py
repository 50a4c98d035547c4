"""The shared input checks: accepted forms, no needless copies, and the error wording."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastrank._validation import check_random_state, check_scores, check_truth


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
])
def test_nested_lists_are_read_like_numpy_unless_they_are_sets(y, expected):
    assert check_truth(y, n_labels=2).tolist() == expected


def test_estimator_input_rules():
    from fastrank._base import MultiLabelEstimator, NotFittedError

    class Dummy(MultiLabelEstimator):
        def __init__(self, k=1):
            self.k = k

    X = sp.csr_matrix(([1.0, 2.0], ([0, 0], [1, 1])), shape=(2, 3))  # duplicates
    before = (X.data.copy(), X.indices.copy())
    Dummy()._check_fit_input(X, [[0, 1], [1, 0]])
    assert np.array_equal(X.data, before[0]) and np.array_equal(X.indices, before[1])
    with pytest.raises(TypeError, match="real numeric"):
        Dummy()._check_X(np.array([[1 + 2j, 0]]))
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

    def half_then_fail(f, **arrays):
        f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(base.np, "savez", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        KNN(k=2).fit(X, Y).save(tmp_path / "m.npz")
    assert (tmp_path / "m.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_sparse_scores_and_truth_dtypes():
    b = sp.csr_matrix(np.array([[True, False], [False, True]]))
    assert check_scores(b).dtype == np.float64  # bool works sparse as dense
    with pytest.raises(ValueError, match=r"found values \[2\.\]"):  # only the offending ones
        check_truth(sp.csr_matrix(np.array([[1.0, 2.0], [1.0, 0.0]])))
