"""VG-RAM WNN and VG-RAM WNN-COR against the slow NumPy reference in ref_wnn.py,
the worked examples of melotti2009 Tables 2.2 and 2.3, and properties."""
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from threadpoolctl import threadpool_limits

import ref_wnn
import fastrank.wnn as wnn_module
from fastrank._vgram_merge import _merge_outcomes
from fastrank._ext import vgram as kernel
from fastrank.wnn import VGRAM, VGRAMCor

MODELS = {"VGRAM": VGRAM, "COR": VGRAMCor}



@pytest.fixture(autouse=True)
def csr_kernel_always(monkeypatch):
    """CSR input always takes the CSR encoding kernel here, however dense the test data
    (production densifies CSR that is at least half full; tested on its own below)."""
    monkeypatch.setattr(wnn_module, "DENSE_FRACTION", 2.0)


def tie_heavy_data(seed, n_train=40, n_test=13, n_features=12, q=5):
    """Small integer features (many equal values, so many tied patterns and distances)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n_train + n_test, n_features)).astype(np.float64)
    X[rng.random(X.shape) < 0.5] = 0.0
    Y = (rng.random((n_train, q)) < 0.35).astype(np.uint8)
    Y[0, 0] = 1
    Y[1] = 0  # a document without labels
    return X[:n_train], Y, X[n_train:]


def unpack(memory, n_synapses):
    """uint64 words -> boolean bits (..., n_synapses); synapse i is bit i % 64 of word i // 64."""
    bits = np.unpackbits(memory.astype("<u8").view(np.uint8), axis=-1, bitorder="little")
    return bits[..., :n_synapses].astype(bool)


def reference(model, kind, X_train, Y, X_test):
    return ref_wnn.beliefs(kind, model.tie_policy, X_train, Y, X_test, model.synapses_,
                           model.seed_)


# ---- encoding and memory ------------------------------------------------------------------

def test_synapses_are_seeded_and_inspectable():
    X, Y, _ = tie_heavy_data(0)
    a = VGRAM(n_neurons=7, n_synapses=70, random_state=3).fit(X, Y)
    b = VGRAM(n_neurons=7, n_synapses=70, random_state=3).fit(X, Y)
    c = VGRAM(n_neurons=7, n_synapses=70, random_state=4).fit(X, Y)
    assert a.synapses_.shape == (7, 70) and np.issubdtype(a.synapses_.dtype, np.integer)
    assert a.synapses_.min() >= 0 and a.synapses_.max() < X.shape[1]
    np.testing.assert_array_equal(a.synapses_, b.synapses_)
    np.testing.assert_array_equal(a.memory_, b.memory_)
    assert not np.array_equal(a.synapses_, c.synapses_)


@pytest.mark.parametrize("n_synapses", [1, 2, 63, 64, 65, 130, 300])
@pytest.mark.parametrize("fmt", ["dense", "dense32", "csr", "csr32"])
def test_memory_is_packed_minchinton_encoding(n_synapses, fmt, simd_path):
    """The Minchinton bits on every code path (vector compares of 4, 8 or 16 cells and the
    scalar loop; 300 synapses: more than one block of 256)."""
    X, Y, _ = tie_heavy_data(1)
    X[2] = -X[2]  # negative values are compared like any other
    Xin = {"dense": X, "dense32": X.astype(np.float32), "csr": sp.csr_matrix(X),
           "csr32": sp.csr_matrix(X.astype(np.float32))}[fmt]
    model = VGRAMCor(n_neurons=5, n_synapses=n_synapses, random_state=0).fit(Xin, Y)
    words = -(-n_synapses // 64)
    assert model.memory_.shape == (5, X.shape[0], words) and model.memory_.dtype == np.uint64
    expected = ref_wnn.encode(X, model.synapses_).transpose(1, 0, 2)  # neuron-major
    np.testing.assert_array_equal(unpack(model.memory_, n_synapses), expected)
    padding = np.unpackbits(model.memory_.view(np.uint8), axis=-1,
                            bitorder="little")[..., n_synapses:]
    assert not padding.any()


def encode_dense(X, synapses, rows=None, out=None):
    """The kernel's encoding on the code path in use: the (n_neurons, len(rows), W) patterns
    of X's rows (all by default) into out (a new array by default)."""
    rows = np.arange(X.shape[0], dtype=np.int64) if rows is None else rows
    if out is None:
        out = np.empty((synapses.shape[0], len(rows), -(-synapses.shape[1] // 64)), np.uint64)
    kernel.encode(X, rows, synapses, out)
    return out


def assert_patterns(out, X, synapses):
    """out holds the reference's Minchinton bits of X's rows for every neuron, padding 0."""
    n_synapses = synapses.shape[1]
    np.testing.assert_array_equal(unpack(out, n_synapses),
                                  ref_wnn.encode(X, synapses).transpose(1, 0, 2))
    padding = np.unpackbits(out.view(np.uint8), axis=-1, bitorder="little")[..., n_synapses:]
    assert not padding.any()


def rank_test_data(n_features, dtype, n_rows=70, seed=0):
    """Small integers (many equal values in a row) with -0.0, infinities and a row of
    continuous values."""
    rng = np.random.default_rng([seed, n_features])
    X = rng.integers(-3, 4, size=(n_rows, n_features)).astype(dtype)
    X[1] = -0.0
    X[2, ::3] = np.inf
    X[3, ::2] = -np.inf
    X[4] = rng.standard_normal(n_features)
    return X


@pytest.mark.parametrize("n_features", [1, 7, 64, 100, 128, 129, 256, 257])
@pytest.mark.parametrize("n_synapses", [5, 64, 200, 600, 1000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_encoding_by_ranks(simd_path, n_features, n_synapses, dtype):
    """Dense rows are encoded 64 at a time through their ranks: by byte permutes with VBMI up to 128
    features, by byte compares of 64 rows and transposes up to 256 (AVX2, AVX-512) or 128 (portable
    C); more take the per-neuron compares. The same bits as the reference on every path, with ties,
    negative values, -0.0 against 0.0 and infinities; 70 rows and 13 neurons (a short last block of
    rows), synapses filling 1 to 16 words (whole blocks of 8 words and shorter ones, a last word
    partly filled or full)."""
    X = rank_test_data(n_features, dtype)
    synapses = np.random.default_rng(n_synapses).integers(
        0, n_features, size=(13, n_synapses), dtype=np.int32)
    assert_patterns(encode_dense(X, synapses), X, synapses)


@pytest.mark.parametrize("n_synapses", [2100, 4200])
def test_dense_encoding_long_patterns(simd_path, n_synapses):
    """Patterns of 33 words (a neuron's rows written in several groups) and of 66 (more
    words than the permuted encoding takes: the transposes' path)."""
    X = rank_test_data(100, np.float64, n_rows=70, seed=1)
    synapses = np.random.default_rng(7).integers(0, 100, size=(3, n_synapses), dtype=np.int32)
    assert_patterns(encode_dense(X, synapses), X, synapses)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_encoding_row_subsets_and_unaligned_output(simd_path, dtype):
    """A subset of rows in any order, repeated rows, and an output array that starts one
    word past a 64-byte boundary (the streamed stores begin and end with partial lines)."""
    X = rank_test_data(100, dtype, n_rows=90, seed=2)
    rows = np.random.default_rng(3).permutation(np.r_[np.arange(0, 90, 2), [7, 7, 31]])
    synapses = np.random.default_rng(4).integers(0, 100, size=(9, 1000), dtype=np.int32)
    shape = (9, len(rows), 16)
    raw = np.empty(np.prod(shape) + 16, dtype=np.uint64)
    skip = (-raw.ctypes.data // 8) % 8 + 1          # one word past a 64-byte boundary
    out = raw[skip:skip + np.prod(shape)].reshape(shape)
    assert out.ctypes.data % 64 == 8
    encode_dense(X, synapses, rows=rows.astype(np.int64), out=out)
    assert_patterns(out, X[rows], synapses)


@pytest.mark.parametrize("n_synapses", [1, 2, 63, 64, 65, 128, 1000])
def test_dense_encoding_last_cell_wraps_to_first(simd_path, n_synapses):
    """Synapses on increasing values, so every cell is 0 but the last one, which compares
    the last synapse with the first: bit n_synapses - 1 alone (none for one synapse, which
    compares with itself)."""
    X = np.arange(1000, dtype=np.float64)[None, :] * np.array([[1.0], [2.0]])
    X = np.ascontiguousarray(X[:, :n_synapses])       # at most 128 features: permutes
    if n_synapses > 128:
        X = np.ascontiguousarray(X[:, :128])
    synapses = (np.arange(n_synapses, dtype=np.int32) % X.shape[1])[None, :]
    bits = unpack(encode_dense(X, synapses), n_synapses)
    expected = np.zeros(n_synapses, dtype=bool)
    if n_synapses > 1:
        expected[n_synapses - 1] = True
        expected[127:n_synapses - 1:128] = True          # 127 > 0 where the wiring cycles
    np.testing.assert_array_equal(bits[0, 0], expected)
    np.testing.assert_array_equal(bits[0, 1], expected)


def test_dense_encoding_nan_falls_back_to_compares(simd_paths):
    """A NaN (refused by the estimators, but the kernel may see one) compares false either
    way; the rank encoding steps aside for such rows and every path gives the same bits."""
    X = np.array([[1.0, np.nan, 0.5, 2.0]] * 3)
    synapses = np.array([[0, 1, 2, 3, 1, 0]], dtype=np.int32)
    results = []
    for _ in simd_paths:
        out = np.empty((1, 3, 1), dtype=np.uint64)
        kernel.encode(X, np.arange(3, dtype=np.int64), synapses, out)
        results.append(out)
    expected = ref_wnn.encode(X, synapses).transpose(1, 0, 2)
    for out in results:
        np.testing.assert_array_equal(unpack(out, 6), expected)


def test_vgram_stores_only_labelled_documents_once():
    X, Y, _ = tie_heavy_data(2)
    model = VGRAM(n_neurons=3, n_synapses=40, random_state=0).fit(X, Y)
    labelled = np.flatnonzero(Y.any(axis=1))
    assert model.n_train_ == labelled.size  # one pattern per document, not per label
    np.testing.assert_array_equal(
        unpack(model.memory_, 40), ref_wnn.encode(X[labelled], model.synapses_).transpose(1, 0, 2))
    lists = np.split(model.label_indices_, model.label_indptr_[1:-1])
    assert [list(l) for l in lists] == [list(np.flatnonzero(Y[t])) for t in labelled]


@pytest.mark.parametrize("cls", [VGRAM, VGRAMCor])
def test_memory_bytes_within_ten_percent_of_bits(cls):
    rng = np.random.default_rng(0)
    X = rng.random((300, 50))
    Y = (rng.random((300, 8)) < 0.3).astype(np.uint8)
    Y[:, 0] = 1
    model = cls(n_neurons=64, n_synapses=200, random_state=0).fit(X, Y)
    labels = model.label_indptr_.nbytes + model.label_indices_.nbytes
    bound = 64 * 300 * 4 * 8 + labels
    assert model.n_train_ == 300
    assert bound <= model.memory_bytes_ <= 1.1 * bound


# ---- worked examples: melotti2009 Tables 2.2 and 2.3 ----------------------------------------

def table_network(cls):
    """A one-neuron, three-synapse network wired to three distinct inputs, and inputs whose
    Minchinton bits (X1, X2, X3) are those of the tables: pairs 110, 001, 010, test 101."""
    for seed in range(100):
        model = cls(n_neurons=1, n_synapses=3, tie_policy="random", random_state=seed)
        model.fit(np.eye(3), np.eye(3, dtype=np.uint8))
        s = model.synapses_[0]
        if len(set(s)) == 3:
            break
    else:
        raise AssertionError("no seed below 100 wires three distinct inputs")
    # bits (x[s0] > x[s1], x[s1] > x[s2], x[s2] > x[s0]) for the values v at s0, s1, s2
    values = {"110": (3, 2, 1), "001": (1, 2, 3), "010": (1, 2, 0), "101": (2, 1, 3)}
    X = np.zeros((4, 3))
    for row, bits in enumerate(["110", "001", "010", "101"]):
        X[row, s] = values[bits]
    return model, X[:3], X[3:]


def test_table_2_2_vgram_truth_table():
    model, X_train, X_test = table_network(VGRAM)
    Y = np.eye(3, dtype=np.uint8)  # pair #k -> category k (column k - 1)
    model.fit(X_train, Y)
    np.testing.assert_array_equal(unpack(model.memory_, 3)[0],
                                  [[1, 1, 0], [0, 0, 1], [0, 1, 0]])
    D = ref_wnn.distance_matrices(ref_wnn.encode(X_train, model.synapses_),
                                  ref_wnn.encode(X_test, model.synapses_))
    np.testing.assert_array_equal(D[0, 0], [2, 1, 3])  # distances given in the text
    np.testing.assert_array_equal(model.decision_function(X_test), [[0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(model.predict(X_test), [[0, 1, 0]])  # "categoria 2"


def test_table_2_3_vgram_cor_truth_table():
    model, X_train, X_test = table_network(VGRAMCor)
    Y = [{1}, {1, 3}, {1, 2, 3}]
    model.fit(X_train, Y)
    # the neuron outputs {1, 3}: two labels output, one vote each
    np.testing.assert_array_equal(model.decision_function(X_test), [[0.5, 0.0, 0.5]])


# ---- against the reference ---------------------------------------------------------------

@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
@pytest.mark.parametrize("fmt", ["dense", "csr", "dense32"])
@pytest.mark.parametrize("tie_policy", ["all", "random"])
def test_beliefs_equal_reference_exactly(kind, fmt, tie_policy):
    X, Y, X_test = tie_heavy_data(3)
    conv = {"dense": lambda A: A, "csr": sp.csr_matrix,
            "dense32": lambda A: A.astype(np.float32)}[fmt]
    model = MODELS[kind](n_neurons=9, n_synapses=20, tie_policy=tie_policy, random_state=5)
    model.fit(conv(X), Y)
    F = model.decision_function(conv(X_test))
    assert F.dtype == np.float64
    np.testing.assert_array_equal(F, reference(model, kind, X, Y, X_test))


@pytest.mark.parametrize("width", [12, 2**20])
def test_csr_wiring_built_once_and_never_pickled(monkeypatch, width):
    """The wiring of CSR rows (their wired positions and the wiring index) is built at fit
    and reused by every search of rows of that width; synapses changed in place are
    noticed (rebuilt: the beliefs of a copy that builds its own); the kept wiring is not
    pickled. Narrow rows, and rows wider than the synapses (read at wired positions)."""
    import pickle
    built = []

    class Counting(wnn_module._Wiring):
        def __init__(self, synapses, width):
            built.append(width)
            super().__init__(synapses, width)

    monkeypatch.setattr(wnn_module, "_Wiring", Counting)
    X, Y, X_test = tie_heavy_data(6)
    model = VGRAM(n_neurons=9, n_synapses=30, random_state=2)
    wired = np.unique(clone(model).fit(sp.csr_matrix((X.shape[0], width)), Y).synapses_)[:12]

    def rows(A):  # A's columns at wired positions
        r, c = np.nonzero(A)
        return sp.csr_matrix((A[r, c], (r, wired[c])), shape=(A.shape[0], width))
    built.clear()
    model.fit(rows(X), Y)
    assert built == [width]
    F = model.decision_function(rows(X_test))
    np.testing.assert_array_equal(model.decision_function(rows(X_test)), F)
    model.predict(rows(X_test))
    assert built == [width]
    if width == 12:
        np.testing.assert_array_equal(F, reference(model, "VGRAM", X, Y, X_test))
    back = pickle.loads(pickle.dumps(model))
    assert "_wiring" not in back.__dict__
    np.testing.assert_array_equal(back.decision_function(rows(X_test)), F)
    assert built == [width, width]
    model.synapses_[:3] = np.resize(wired[::-1], 30)  # onto the positions holding data
    fresh = pickle.loads(pickle.dumps(model)).decision_function(rows(X_test))
    np.testing.assert_array_equal(model.decision_function(rows(X_test)), fresh)
    assert built == [width] * 4
    if width == 12:  # (wide: the memory's patterns read no data, so every entry ties)
        assert not np.array_equal(fresh, F)


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
@pytest.mark.parametrize("tie_policy", ["all", "random"])
def test_wide_sparse_input_is_read_at_the_wired_positions(kind, tie_policy):
    """CSR input declaring 2**24 features (2**31 - 1 in test_amplification.py) for 180
    synapses: the kernels work on the wired positions only, and the beliefs equal the
    reference on the narrow matrix of those positions; entries at unwired positions are
    ignored."""
    width = 2**24
    X, Y, X_test = tie_heavy_data(4)
    model = MODELS[kind](n_neurons=9, n_synapses=20, tie_policy=tie_policy, random_state=5)
    wired = np.unique(model.fit(sp.csr_matrix((X.shape[0], width)), Y).synapses_)
    unwired = np.setdiff1d(np.arange(0, width, 99991), wired)[:3]
    at = np.concatenate([wired[:X.shape[1]], unwired])

    def wide(A):  # A's columns at wired positions, then noise at unwired ones
        A = np.hstack([A, np.random.default_rng(0).random((A.shape[0], unwired.size))])
        rows, cols = np.nonzero(A)
        return sp.coo_matrix((A[rows, cols], (rows, at[cols])), shape=(A.shape[0], width)
                             ).tocsr()

    def narrow(A):  # the values at the wired positions, in their order
        out = np.zeros((A.shape[0], wired.size))
        out[:, :A.shape[1]] = A
        return out
    model.fit(wide(X), Y)
    F = model.decision_function(wide(X_test))
    np.testing.assert_array_equal(
        F, ref_wnn.beliefs(kind, tie_policy, narrow(X), Y, narrow(X_test),
                           np.searchsorted(wired, model.synapses_), model.seed_))


@pytest.mark.parametrize("n_synapses", [256, 448, 512, 768, 1024, 2048, 2112])
def test_popcount_paths_equal_reference(n_synapses, simd_path):
    """Every code path: the bit-sliced search (4..32 words, a multiple of 4: 256-2048
    synapses here; 13 test documents, one batch) and the scan (3 test documents; at 7 and
    33 words always), specialised widths and the generic one, the VPOPCNTDQ scan (8, 16, 32
    words) and the POPCNT or portable one."""
    X, Y, X_test = tie_heavy_data(12, n_train=90, n_features=60)
    for kind in MODELS:
        model = MODELS[kind](n_neurons=3, n_synapses=n_synapses, tie_policy="all",
                             random_state=n_synapses).fit(X, Y)
        expected = reference(model, kind, X, Y, X_test)
        np.testing.assert_array_equal(model.decision_function(X_test), expected)
        np.testing.assert_array_equal(model.decision_function(X_test[:3]), expected[:3])


def sparse_text_like_data(seed, n_train=300, n_test=40, n_features=400, q=6):
    """Bag-of-words-like features: a few nonzero entries per document, so patterns have a
    few bits set; a quarter of the test documents are dense (patterns with many bits set)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n_train + n_test, n_features)) * (rng.random((n_train + n_test,
                                                                 n_features)) < 0.005)
    X[n_train::4] = rng.random((len(X[n_train::4]), n_features))
    X[:40] = 0.0                       # empty documents: many tied (all-zero) patterns
    Y = (rng.random((n_train, q)) < 0.3).astype(np.uint8)
    return X[:n_train], Y, X[n_train:]


@pytest.mark.parametrize("n_synapses", [256, 512, 768])
@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
@pytest.mark.parametrize("tie_policy", ["all", "random"])
def test_search_paths_agree_exactly(kind, tie_policy, n_synapses, simd_paths):
    """Bit-sliced search and scan give the reference's beliefs, bit for bit, random choices included
    (both list the tied entries in ascending order), over several 256- and 512-entry tiles (the last
    one short; patterns of 4, 8 and 12 words), sparse and dense test patterns (set-bit and clear-bit
    sums), on every code path the CPU runs; 4 test documents take the scan (with VPOPCNTDQ, 8 words:
    the bit-sliced search only where it pays, as for these mostly sparse patterns)."""
    X, Y, X_test = sparse_text_like_data(2, n_train=1100)
    model = MODELS[kind](n_neurons=20, n_synapses=n_synapses, tie_policy=tie_policy,
                         random_state=3).fit(sp.csr_matrix(X), Y)
    expected = reference(model, kind, X, Y, X_test)
    for path in simd_paths:
        F = model.decision_function(sp.csr_matrix(X_test))
        F_few = model.decision_function(sp.csr_matrix(X_test[:4]))
        np.testing.assert_array_equal(F, expected, err_msg=path)
        np.testing.assert_array_equal(F_few, expected[:4], err_msg=path)


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
def test_reference_agreement_on_continuous_features(kind):
    rng = np.random.default_rng(7)
    X = rng.random((60, 30)) * (rng.random((60, 30)) < 0.3)
    Y = (rng.random((50, 6)) < 0.3).astype(np.uint8)
    Y[:, 2] = 1
    for tie_policy in ("all", "random"):
        model = MODELS[kind](n_neurons=16, n_synapses=70, tie_policy=tie_policy,
                             random_state=1).fit(X[:50], Y)
        np.testing.assert_array_equal(model.decision_function(X[50:]),
                                      reference(model, kind, X[:50], Y, X[50:]))


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
def test_random_choice_lies_in_the_tied_set(kind):
    """One neuron: its output is visible in the belief row and must be one of the reference's
    minimum-distance outputs (without relying on the reference's generator)."""
    X, Y, X_test = tie_heavy_data(4, n_test=30)
    for seed in range(8):
        model = MODELS[kind](n_neurons=1, n_synapses=15, random_state=seed).fit(X, Y)
        D = ref_wnn.distance_matrices(ref_wnn.encode(X, model.synapses_),
                                      ref_wnn.encode(X_test, model.synapses_))
        F = model.decision_function(X_test)
        for j in range(X_test.shape[0]):
            outs = ref_wnn.tied_outputs(kind, Y, D[0, j])
            out = tuple(np.flatnonzero(F[j]))
            if kind == "VGRAM":
                assert len(out) == 1 and out[0] in outs and F[j, out[0]] == 1.0
            else:
                assert out in outs


def test_vgram_random_is_uniform_over_document_label_entries():
    """Two tied training documents, one with 3 labels and one with 1: the thesis stores 4
    (document, label) entries, so the single label is output with probability 1/4."""
    X_train = np.array([[1.0, 2.0], [1.0, 2.0]])
    Y = np.array([[1, 1, 1, 0], [0, 0, 0, 1]], dtype=np.uint8)
    model = VGRAM(n_neurons=1, n_synapses=8, random_state=0).fit(X_train, Y)
    X_test = np.tile([[3.0, 0.5]], (4000, 1))
    F = model.decision_function(X_test)
    counts = F.sum(axis=0)
    assert counts.sum() == 4000
    # binomial(4000, 1/4): mean 1000, sd 27.4 -> 5 sd
    assert np.all(np.abs(counts - 1000) < 137), counts
    F_all = VGRAM(n_neurons=1, n_synapses=8, tie_policy="all", random_state=0) \
        .fit(X_train, Y).decision_function(X_test[:1])
    np.testing.assert_array_equal(F_all, [[0.25, 0.25, 0.25, 0.25]])
    F_cor = VGRAMCor(n_neurons=1, n_synapses=8, tie_policy="all", random_state=0) \
        .fit(X_train, Y).decision_function(X_test[:1])
    # COR: each document half a vote; 0.5 * 3 + 0.5 * 1 = 2 labels output
    np.testing.assert_array_equal(F_cor, [[0.25, 0.25, 0.25, 0.25]])


def test_cor_random_is_uniform_over_tied_documents():
    """Three tied training documents: each one's label set is output a third of the time
    (the smallest of three distinct keys)."""
    X_train = np.array([[1.0, 2.0]] * 3)
    Y = np.eye(3, dtype=np.uint8)
    model = VGRAMCor(n_neurons=1, n_synapses=8, random_state=0).fit(X_train, Y)
    counts = model.decision_function(np.tile([[3.0, 0.5]], (3000, 1))).sum(axis=0)
    assert counts.sum() == 3000
    # binomial(3000, 1/3): mean 1000, sd 25.8 -> 5 sd
    assert np.all(np.abs(counts - 1000) < 129), counts


def split_beliefs(model, X, X_test, Y, cuts):
    """Beliefs from the memory split at the row cuts: each part stores its rows (wiring and
    seed of ``model``), reports its neurons' outcomes, and _merge_outcomes merges them."""
    policy = wnn_module._POLICY_CODES[model.tie_policy]
    n_neurons, q = model.synapses_.shape[0], Y.shape[1]
    parts, entry0 = [], 0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        part = type(model)(**model.get_params())
        part.classes_, part.n_features_in_ = model.classes_, model.n_features_in_
        part._memorize(X[lo:hi], Y[lo:hi], model.synapses_, model.seed_)
        if part.n_train_:
            summary = kernel.new_summary(X_test.shape[0], n_neurons, q, policy)
            part._search(part._search_input(X_test), np.zeros((0, q)), 0, entry0, summary)
            parts.append(summary)
        entry0 += part.n_train_
    return _merge_outcomes(parts, model._model, model.tie_policy,
                                      model.label_indptr_, model.label_indices_, n_neurons, q)


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
@pytest.mark.parametrize("tie_policy", ["random", "all"])
def test_split_memory_gives_the_same_beliefs(kind, tie_policy, simd_path):
    """The keyed tie rule and the per-neuron outcomes make a search of parts of the memory,
    merged, equal to the search of the whole (what fastrank.dask.ShardedEstimator relies
    on), bit for bit, for both search paths; a part may store nothing (VGRAM, rows 40-59
    without labels)."""
    X, Y, X_test = sparse_text_like_data(4, n_train=300)
    Y[40:60] = 0
    model = MODELS[kind](n_neurons=16, n_synapses=256, tie_policy=tie_policy,
                         random_state=9).fit(X, Y)
    F = model.decision_function(X_test)
    for cuts in ([0, 300], [0, 150, 300], [0, 1, 40, 60, 299, 300]):
        np.testing.assert_array_equal(split_beliefs(model, X, X_test, Y, cuts), F)


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
@pytest.mark.parametrize("tie_policy", ["random", "all"])
def test_a_part_storing_nothing_reports_no_entry(kind, tie_policy):
    """The outcomes of a part of the memory without a stored document: for every (row,
    neuron) the largest distance and no entry (no key, label or document counted)."""
    X, Y, X_test = tie_heavy_data(3)
    model = MODELS[kind](n_neurons=8, n_synapses=16, tie_policy=tie_policy,
                         random_state=0).fit(X, Y)
    part = type(model)(**model.get_params())
    part.classes_, part.n_features_in_ = model.classes_, model.n_features_in_
    part._memorize(X[:0], Y[:0], model.synapses_, model.seed_)
    assert part.n_train_ == 0
    summary = kernel.new_summary(X_test.shape[0], 8, Y.shape[1],
                                 wnn_module._POLICY_CODES[tie_policy])
    part._search(part._search_input(X_test), np.zeros((0, Y.shape[1])), 0, 0, summary)
    assert np.all(summary["dist"] == 2**32 - 1)
    if tie_policy == "random":
        assert np.all(summary["key"] == 2**64 - 1) and np.all(summary["label"] == -1)
    else:
        assert not summary["ndocs"].any() and not summary["counts"].any()


@pytest.mark.parametrize("cls", [VGRAM, VGRAMCor])
def test_random_policy_reproducible(cls):
    X, Y, X_test = tie_heavy_data(5)
    a = cls(n_neurons=32, n_synapses=16, random_state=11).fit(X, Y)
    b = cls(n_neurons=32, n_synapses=16, random_state=11).fit(X, Y)
    F = a.decision_function(X_test)
    np.testing.assert_array_equal(F, a.decision_function(X_test))
    np.testing.assert_array_equal(F, b.decision_function(X_test))
    c = cls(n_neurons=32, n_synapses=16, random_state=12).fit(X, Y)
    assert not np.array_equal(F, c.decision_function(X_test))


@pytest.mark.parametrize("cls", [VGRAM, VGRAMCor])
def test_default_seed_is_zero_and_reproducible(cls):
    X, Y, X_test = tie_heavy_data(7)
    assert cls().get_params()["random_state"] == 0
    a = cls(n_neurons=32, n_synapses=16).fit(X, Y)
    b = cls(n_neurons=32, n_synapses=16).fit(X, Y)
    np.testing.assert_array_equal(a.synapses_, b.synapses_)
    assert a.seed_ == b.seed_
    np.testing.assert_array_equal(a.predict(X_test), b.predict(X_test))
    np.testing.assert_array_equal(a.decision_function(X_test), b.decision_function(X_test))
    # the default is the seed 0, not a fixed draw of another seed
    c = cls(n_neurons=32, n_synapses=16, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(a.decision_function(X_test), c.decision_function(X_test))


@pytest.mark.parametrize("cls", [VGRAM, VGRAMCor])
@pytest.mark.parametrize("tie_policy", ["random", "all"])
def test_thread_count_does_not_change_results(cls, tie_policy):
    X, Y, _ = tie_heavy_data(6, n_train=80, n_test=0)
    rng = np.random.default_rng(1)
    X_test = rng.integers(0, 3, size=(301, X.shape[1])).astype(np.float64)  # several batches
    model = cls(n_neurons=24, n_synapses=33, tie_policy=tie_policy, random_state=2).fit(X, Y)
    with threadpool_limits(1, user_api="openmp"):
        F1 = model.decision_function(X_test)
        F1_csr = model.decision_function(sp.csr_matrix(X_test))
    with threadpool_limits(2, user_api="openmp"):
        F2 = model.decision_function(X_test)
    np.testing.assert_array_equal(F1, F2)
    np.testing.assert_array_equal(F1, F1_csr)
    # a test row's beliefs do not depend on the batch it is in, except through its index
    np.testing.assert_array_equal(model.decision_function(X_test[:1]), F1[:1])


def chunk_ordered_reference(model, kind, X_train, Y, X_test):
    """tie_policy="all" beliefs from the reference's tied outputs, each neuron's vote added
    in order within chunks of kernel.NEURONS_PER_CHUNK neurons and the chunks' sums added
    in order (for networks of at most one chunk: ref_wnn.beliefs' plain order)."""
    Y = np.asarray(Y)
    n_neurons, q, chunk = model.synapses_.shape[0], Y.shape[1], kernel.NEURONS_PER_CHUNK
    D = ref_wnn.distance_matrices(ref_wnn.encode(X_train, model.synapses_),
                                  ref_wnn.encode(X_test, model.synapses_))
    F = np.zeros((D.shape[1], q))
    for j in range(D.shape[1]):
        votes, total = np.zeros(q), 0.0
        for n0 in range(0, n_neurons, chunk):
            part, part_total = np.zeros(q), 0.0
            for n in range(n0, min(n0 + chunk, n_neurons)):
                outs = ref_wnn.tied_outputs(kind, Y, D[n, j])
                cnt = np.zeros(q)
                for out in outs:
                    cnt[list(out) if kind == "COR" else out] += 1
                part = part + cnt / len(outs)
                part_total += sum(len(out) for out in outs) / len(outs) if kind == "COR" else 0
            votes, total = votes + part, total + part_total
        F[j] = votes / n_neurons if kind == "VGRAM" else votes / total if total else 0.0
    return F


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
@pytest.mark.parametrize("tie_policy", ["all", "random"])
def test_shared_batches_split_neurons_independent_of_threads(kind, tie_policy, simd_paths):
    """A network of 4 chunks of neurons on 1 to 3 threads searches shared batches (1 to 150
    documents: one batch; 1 100: three, searched in turn), its chunks split among the
    threads; the votes are added chunk after chunk, so every thread count gives the same
    bits, equal to the rows of the same 1 100 documents on 8 threads (more threads than
    chunks: batches of documents, one per task), to the reference summed in the same
    order, for dense and CSR input and every code path."""
    X, Y, _ = tie_heavy_data(13, n_train=120, n_test=0, n_features=20)
    X_test = np.random.default_rng(3).integers(0, 3, size=(1100, 20)).astype(np.float64)
    n_neurons = 3 * kernel.NEURONS_PER_CHUNK + 5          # 4 chunks, the last one short
    model = MODELS[kind](n_neurons=n_neurons, n_synapses=256, tie_policy=tie_policy,
                         random_state=4).fit(X, Y)
    with threadpool_limits(8, user_api="openmp"):
        F_many = model.decision_function(X_test)
    if tie_policy == "all":
        np.testing.assert_array_equal(F_many[:8], chunk_ordered_reference(model, kind, X, Y,
                                                                          X_test[:8]))
    for _ in simd_paths:
        for n_docs in (1, 2, 5, 8, 64, 100, 150, 1100):
            for threads in (1, 2, 3):
                with threadpool_limits(threads, user_api="openmp"):
                    F = model.decision_function(X_test[:n_docs])
                    F_csr = model.decision_function(sp.csr_matrix(X_test[:n_docs]))
                np.testing.assert_array_equal(F, F_many[:n_docs])
                np.testing.assert_array_equal(F_csr, F_many[:n_docs])


@pytest.mark.parametrize("kind", ["VGRAM", "COR"])
def test_split_memory_sums_votes_in_chunks(kind):
    """Merging the outcomes of parts of the memory adds each row's votes in the kernel's
    order (chunks of neurons), for a network of several chunks, few and many documents."""
    X, Y, _ = sparse_text_like_data(5, n_train=200)
    X_test = sparse_text_like_data(6, n_train=0, n_test=70)[2]
    model = MODELS[kind](n_neurons=2 * kernel.NEURONS_PER_CHUNK + 7, n_synapses=128,
                         tie_policy="all", random_state=2).fit(X, Y)
    for rows in (slice(0, 3), slice(0, 70)):
        np.testing.assert_array_equal(split_beliefs(model, X, X_test[rows], Y, [0, 90, 200]),
                                      model.decision_function(X_test[rows]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_synapses=st.integers(1, 2100),
       n_neurons=st.integers(1, 6), cor=st.booleans(), data=st.data())
def test_property_all_policy_matches_reference(seed, n_synapses, n_neurons, cor, data,
                                               simd_paths):
    # 12 test documents: batches of 6 or more on up to 2 threads take the bit-sliced search
    X, Y, X_test = tie_heavy_data(seed, n_train=15, n_test=12, n_features=6, q=4)
    kind = "COR" if cor else "VGRAM"
    with simd_paths.force(data.draw(st.sampled_from(simd_paths.names), label="simd path")):
        model = MODELS[kind](n_neurons=n_neurons, n_synapses=n_synapses, tie_policy="all",
                             random_state=seed).fit(X, Y)
        F = model.decision_function(X_test)
    np.testing.assert_array_equal(F, reference(model, kind, X, Y, X_test))
    assert np.all((F >= 0) & (F <= 1))
    # CSR input (encoded through the wiring index, only cells touching stored entries)
    X_neg = X - (X == 1)  # some negative entries too
    sparse = MODELS[kind](n_neurons=n_neurons, n_synapses=n_synapses, tie_policy="all",
                          random_state=seed).fit(sp.csr_matrix(X_neg), Y)
    dense = MODELS[kind](n_neurons=n_neurons, n_synapses=n_synapses, tie_policy="all",
                         random_state=seed).fit(X_neg, Y)
    np.testing.assert_array_equal(sparse.memory_, dense.memory_)
    np.testing.assert_array_equal(sparse.decision_function(sp.csr_matrix(X_test)),
                                  dense.decision_function(X_test))
    if kind == "VGRAM":
        np.testing.assert_allclose(F.sum(axis=1), 1.0)


# ---- estimator API -----------------------------------------------------------------------

@pytest.mark.parametrize("cls", [VGRAM, VGRAMCor])
def test_save_load_roundtrip(cls, tmp_path):
    X, Y, X_test = tie_heavy_data(8)
    model = cls(n_neurons=10, n_synapses=90, random_state=4).fit(sp.csr_matrix(X), Y)
    model.save(tmp_path / "m.npz")
    loaded = cls.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.decision_function(X_test),
                                  model.decision_function(X_test))
    np.testing.assert_array_equal(loaded.synapses_, model.synapses_)
    assert loaded.memory_bytes_ == model.memory_bytes_ and loaded.seed_ == model.seed_
    with pytest.raises(ValueError, match="holds a"):
        (VGRAMCor if cls is VGRAM else VGRAM).load(tmp_path / "m.npz")


@pytest.mark.parametrize("damage, match", [
    (lambda a: a.update(synapses_=a["synapses_"] + 1000), "wired outside"),
    (lambda a: a.update(memory_=a["memory_"][:, :, :1].copy()), "memory_ does not match"),
    (lambda a: a.update(label_indptr_=a["label_indptr_"][:-1].copy()), "label_indptr_"),
    (lambda a: a.update(label_indices_=a["label_indices_"] + 50), "outside classes_"),
])
def test_load_rejects_inconsistent_arrays(tmp_path, damage, match):
    """The kernels trust shapes and indices: a model file whose arrays disagree is refused
    at load with a ValueError naming the problem, instead of reading out of bounds."""
    X, Y, _ = tie_heavy_data(8)
    VGRAM(n_neurons=4, n_synapses=90, random_state=4).fit(X, Y).save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        arrays = dict(f)
    damage(arrays)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=match):
        VGRAM.load(tmp_path / "bad.npz")


def test_label_sets_and_clone():
    from sklearn.base import clone
    X, _, X_test = tie_heavy_data(9)
    Y = [["b"], ["a", "c"], ["c"]] * (X.shape[0] // 3) + [["a"]] * (X.shape[0] % 3)
    model = VGRAMCor(n_neurons=8, n_synapses=24, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(model.classes_, ["a", "b", "c"])
    assert model.decision_function(X_test).shape == (X_test.shape[0], 3)
    assert clone(model).get_params() == model.get_params()


def test_predict_rules():
    X, Y, X_test = tie_heavy_data(10)
    model = VGRAM(n_neurons=40, n_synapses=30, tie_policy="all", random_state=0).fit(X, Y)
    F = model.decision_function(X_test)
    k = max(1, round(Y.sum(axis=1).mean()))
    P = model.predict(X_test)
    for f, p in zip(F, P):
        kth = np.sort(f)[::-1][k - 1]
        np.testing.assert_array_equal(p, (f >= kth) & (f > 0))
    np.testing.assert_array_equal(model.predict(X_test, threshold=0.2), F >= 0.2)
    tau = np.linspace(0, 0.5, Y.shape[1])
    np.testing.assert_array_equal(model.predict(X_test, threshold=tau), F >= tau)
    with pytest.raises(ValueError, match="one value per label"):
        model.predict(X_test, threshold=[0.1, 0.2])


def test_bad_input():
    X, Y, X_test = tie_heavy_data(11)
    with pytest.raises(ValueError, match="tie_policy.*'random', 'all'"):
        VGRAM(tie_policy="first").fit(X, Y)
    with pytest.raises(ValueError, match="n_neurons"):
        VGRAM(n_neurons=0).fit(X, Y)
    with pytest.raises(ValueError, match="n_synapses must be a positive integer"):
        VGRAM(n_synapses=0).fit(X, Y)
    with pytest.raises(ValueError, match="n_synapses"):
        VGRAMCor(n_synapses=2.5).fit(X, Y)
    with pytest.raises(ValueError, match="not fitted"):
        VGRAM().decision_function(X_test)
    with pytest.raises(ValueError, match="no training document has a label"):
        VGRAM(n_neurons=2, n_synapses=4).fit(X, np.zeros_like(Y))
    model = VGRAM(n_neurons=2, n_synapses=4, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X_test[:, :-1])
    bad = X_test.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.decision_function(bad)
    with pytest.raises(ValueError, match="binary"):
        VGRAM().fit(X, Y * 2)
    with pytest.raises(ValueError, match="documents"):
        VGRAM().fit(X[:-1], Y)


def test_dense_enough_csr_is_encoded_dense(monkeypatch):
    monkeypatch.setattr(wnn_module, "DENSE_FRACTION", 0.5)
    rng = np.random.default_rng(0)
    full = rng.random((40, 12))
    sparse = full * (rng.random(full.shape) < 0.2)
    assert isinstance(wnn_module._kernel_input(sp.csr_matrix(full)), np.ndarray)
    assert sp.issparse(wnn_module._kernel_input(sp.csr_matrix(sparse)))
    Y = (rng.random((40, 3)) < 0.4).astype(np.uint8)
    Y[:, 0] = 1
    for X in (full, sparse):
        via_csr = VGRAM(n_neurons=6, n_synapses=40, random_state=1).fit(sp.csr_matrix(X), Y)
        via_dense = VGRAM(n_neurons=6, n_synapses=40, random_state=1).fit(X, Y)
        np.testing.assert_array_equal(via_csr.memory_, via_dense.memory_)
        np.testing.assert_array_equal(via_csr.decision_function(sp.csr_matrix(X)),
                                      via_dense.decision_function(X))


def test_network_size_is_a_parameter_error():
    X = np.random.default_rng(0).random((10, 5))
    Y = (X[:, :3] > 0.5).astype(np.uint8)
    for kw in (dict(n_neurons=10**12), dict(n_synapses=10**12), dict(n_neurons=2**63),
               dict(n_neurons=2**16, n_synapses=2**16)):
        with pytest.raises(ValueError, match="n_neurons \\* n_synapses"):
            VGRAM(**kw).fit(X, Y)


# ---- a memory made unsearchable by hand ----------------------------------------------------

_HAND_SET_MEMORY = """
import sys
import numpy as np
from fastrank.wnn import VGRAM, VGRAMCor
cls, policy, damage = sys.argv[1:]
rng = np.random.default_rng(0)
X = rng.random((20, 8))
Y = (rng.random((20, 3)) < 0.5).astype(np.uint8)
Y[:, 0] = 1
model = {"VGRAM": VGRAM, "VGRAMCor": VGRAMCor}[cls](n_neurons=4, n_synapses=8,
                                                    tie_policy=policy).fit(X, Y)
if damage == "empty":
    model.memory_ = model.memory_[:, :0]
    model.label_indptr_ = np.zeros(1, np.int64)
model.label_indices_ = np.zeros(0, np.int32)
if damage == "unlabelled":
    model.label_indptr_ = np.zeros(model.memory_.shape[1] + 1, np.int64)
try:
    model.decision_function(X[:3])
except ValueError as exc:
    print(exc)
else:
    print("no error")
"""


@pytest.mark.parametrize("cls, policy, damage, message", [
    ("VGRAM", "random", "empty", "VGRAM: memory_ stores no training document"),
    ("VGRAM", "all", "empty", "VGRAM: memory_ stores no training document"),
    ("VGRAMCor", "random", "empty", "VGRAMCor: memory_ stores no training document"),
    ("VGRAMCor", "all", "empty", "VGRAMCor: memory_ stores no training document"),
    ("VGRAM", "random", "unlabelled", "VGRAM: a stored document has no label"),
])
def test_unsearchable_memory_set_by_hand_is_refused(cls, policy, damage, message):
    """Fitted attributes set by hand to a memory that load refuses (no stored document; a
    VG-RAM document without a label) raise ValueError before the kernel, whose random vote
    would read past the label lists (VGRAM, "random": a segmentation fault). In a child
    process, so that a regression fails this test instead of killing the test run."""
    import subprocess
    child = subprocess.run([sys.executable, "-c", _HAND_SET_MEMORY, cls, policy, damage],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, f"child died with {child.returncode}: {child.stderr[-2000:]}"
    assert child.stdout.startswith(message), child.stdout


def test_load_rejects_a_vgram_document_without_label(tmp_path):
    X, Y, _ = tie_heavy_data(8)
    VGRAM(n_neurons=4, n_synapses=90, random_state=4).fit(X, Y).save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        arrays = dict(f)
    arrays["label_indptr_"] = np.zeros_like(arrays["label_indptr_"])
    arrays["label_indices_"] = np.zeros(0, np.int32)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match="a stored document has no label"):
        VGRAM.load(tmp_path / "bad.npz")
