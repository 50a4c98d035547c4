"""Model files are checked before use: structure, array headers, JSON header; arrays are
memory-mapped. Crafted files give a ValueError naming the problem, never a crash, a huge
allocation or a silently wrong model."""
import io
import os
import json
import time
import zipfile

import numpy as np
import pytest

import fastrank
from fastrank import KNN, VGRAM, MLkNN
from fastrank._npzfile import MAX_HEADER_BYTES


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.random((60, 12))
    Y = (rng.random((60, 5)) < 0.4).astype(np.uint8)
    return X, Y


def members(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def write_npz(path, arrays, compress=False):
    saver = np.savez_compressed if compress else np.savez
    saver(path, **arrays)


def npy_bytes(header_shape, dtype, payload):
    """A .npy member whose header claims ``header_shape`` but holds ``payload`` bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": header_shape})
    return buf.getvalue() + payload


def test_round_trip_is_memory_mapped(tmp_path, data):
    X, Y = data
    model = VGRAM(n_neurons=16, n_synapses=64, random_state=0).fit(X, Y)
    model.save(tmp_path / "m.npz")
    back = VGRAM.load(tmp_path / "m.npz")
    base = back.memory_
    while base.base is not None and not isinstance(base, np.memmap):
        base = base.base
    assert isinstance(base, np.memmap) and not back.memory_.flags.writeable
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))


def test_arrays_load_aligned_mapped_or_else_copied(tmp_path, data):
    """The kernels read a model's arrays as C types, so save writes each array's data at a
    file offset that is a multiple of 64 and load maps it there; a file written by
    numpy.savez, whose arrays lie wherever the zip headers end, loads aligned copies."""
    X, Y = data
    model = VGRAM(n_neurons=16, n_synapses=64, random_state=0).fit(X, Y)
    model.save(tmp_path / "m.npz")
    names = ("classes_", "synapses_", "memory_", "label_indptr_", "label_indices_")
    back = VGRAM.load(tmp_path / "m.npz")
    for name in names:
        array = getattr(back, name)
        assert array.ctypes.data % 64 == 0 and isinstance(array.base, np.memmap), name
    with np.load(tmp_path / "m.npz") as saved:
        np.savez(tmp_path / "savez.npz", **saved)
    with open(tmp_path / "savez.npz", "rb") as f:  # (that numpy.savez does not align them)
        offset = f.read().index(back.memory_.tobytes())
    assert offset % 8 != 0
    copied = VGRAM.load(tmp_path / "savez.npz")
    for name in names:
        array = getattr(copied, name)
        assert array.flags.aligned and not array.flags.writeable, name
    np.testing.assert_array_equal(copied.decision_function(X), model.decision_function(X))


def test_a_large_model_loads_without_copying(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.random((4000, 64))
    Y = (rng.random((4000, 3)) < 0.3).astype(np.uint8)
    VGRAM(n_neurons=512, n_synapses=1024, random_state=0).fit(X, Y).save(tmp_path / "big.npz")
    size = (tmp_path / "big.npz").stat().st_size
    assert size > 150 * 2**20

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    before = rss()
    model = VGRAM.load(tmp_path / "big.npz")
    assert rss() - before < 0.1 * size  # mapped, not read
    assert model.n_train_ == int((Y.sum(axis=1) > 0).sum())  # documents with labels


def test_compressed_members_are_not_inflated(tmp_path, data):
    X, Y = data
    KNN().fit(X, Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    arrays["X_fit_"] = np.zeros((20000, 10000))  # 1.6 GB of zeros, a few MB compressed
    write_npz(tmp_path / "bomb.npz", arrays, compress=True)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="compressed"):
        KNN.load(tmp_path / "bomb.npz")
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("shape, payload, match, dtype", [
    ((10**6, 10**6), b"\0" * 64, "claims", np.uint8),   # a header claiming terabytes
    ((4,), b"\0" * 8, "claims", np.uint8),              # fewer bytes than the header claims
    ((1,), b"\0" * 64, "claims", np.uint8),             # more bytes than the header claims
    ((10**12,), b"", "elements of 0 bytes", "S0"),     # 0 bytes whatever the shape: numpy
    ((2**28,), b"", "elements of 0 bytes", "U0"),      # would allocate them as S1, U1
    ((-3, -3), b"\0" * 9, "negative dimension", np.uint8),  # a positive product
    ((0, -5), b"", "negative dimension", np.uint8),
])
def test_array_headers_must_match_their_members(tmp_path, data, shape, payload, match, dtype):
    X, Y = data
    KNN().fit(X, Y).save(tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "m.npz") as src, \
            zipfile.ZipFile(tmp_path / "bad.npz", "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "Y_.npy":
                body = npy_bytes(shape, dtype, payload)
            dst.writestr(info.filename, body)
    with pytest.raises(ValueError, match=match):
        KNN.load(tmp_path / "bad.npz")


def test_object_arrays_and_foreign_members_are_refused(tmp_path, data):
    X, Y = data
    KNN().fit(X, Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "obj.npz", "w") as z:
        for k, v in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, v)
            z.writestr(k + ".npy", buf.getvalue())
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        z.writestr("extra.npy", buf.getvalue())
    with pytest.raises(ValueError, match="objects"):
        KNN.load(tmp_path / "obj.npz")
    write_npz(tmp_path / "stray.npz", {**arrays, "extra": np.zeros(3)})
    with pytest.raises(ValueError, match="unexpected arrays"):
        KNN.load(tmp_path / "stray.npz")


def header_of(path):
    return json.loads(members(path)["__header__"].tobytes().decode())


@pytest.mark.parametrize("edit, match", [
    (lambda h: h.update(params={"nonsense": 1}), "parameters"),
    (lambda h: h.update(params=[1, 2]), "parameters"),
    (lambda h: h.update(meta={"x": 1}), "fitted values"),
    (lambda h: h.update(n_features_in_=-3), "n_features_in_"),
    (lambda h: h.update(n_features_in_="12"), "n_features_in_"),
    (lambda h: h.update(format_version=99), "version"),
    (lambda h: h.update(estimator=["KNN"]), "not a MLkNN"),
    (lambda h: h.clear(), "header"),
])
def test_json_header_fields_are_checked(tmp_path, data, edit, match):
    X, Y = data
    MLkNN(k=3).fit(X, Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    header = header_of(tmp_path / "m.npz")
    edit(header)
    arrays["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    write_npz(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match=match):
        MLkNN.load(tmp_path / "bad.npz")


def test_header_that_is_not_json(tmp_path, data):
    X, Y = data
    KNN().fit(X, Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    for raw in (b"[" * 100000, b"\xff\xfe", b"{}", b'{"format": ' + b"1" * 5000 + b"}"):
        arrays["__header__"] = np.frombuffer(raw, dtype=np.uint8)
        write_npz(tmp_path / "bad.npz", arrays)
        with pytest.raises(ValueError, match="header"):
            KNN.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("names, match", [
    (np.array([f"f{i}" for i in range(11)]), "one string per feature"),     # one too few
    (np.arange(12), "one string per feature"),                                # not strings
    (np.array([[f"f{i}" for i in range(12)]]), "one string per feature"),    # 2-D
])
def test_feature_names_are_saved_and_checked(tmp_path, data, names, match):
    """feature_names_in_ (set by a DataFrame fit) round-trips as a string array; a file
    whose names do not give one string per feature is refused."""
    import pandas as pd
    X, Y = data
    cols = [f"f{i}" for i in range(X.shape[1])]
    KNN(k=3).fit(pd.DataFrame(X, columns=cols), Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    assert arrays["feature_names_in_"].tolist() == cols
    assert KNN.load(tmp_path / "m.npz").feature_names_in_.tolist() == cols
    write_npz(tmp_path / "bad.npz", {**arrays, "feature_names_in_": names})
    with pytest.raises(ValueError, match=match):
        KNN.load(tmp_path / "bad.npz")
    del arrays["feature_names_in_"]
    write_npz(tmp_path / "unnamed.npz", arrays)
    assert not hasattr(KNN.load(tmp_path / "unnamed.npz"), "feature_names_in_")


def test_mutations_the_fuzzer_found_are_refused_in_a_child():
    """The mutations the model-file fuzzer once found accepted by load and then failing, or
    crashing, in prediction (``fuzz_cases.FOUND``), in one child process: a crash fails the
    test naming the case."""
    import fuzz_cases
    from test_fuzz import run_batch
    run_batch("model_files_found", 0, len(fuzz_cases.FOUND))


@pytest.mark.parametrize("index", range(1, 15))
def test_mutations_the_fuzzer_found_name_the_problem(tmp_path, index):
    """...and load refuses each with a ValueError naming the file and the problem (the
    crashing one, index 0, is left to the child above)."""
    import fuzz_cases
    name, mutation = fuzz_cases.FOUND[index]
    cls, arrays, header = fuzz_cases._saved_models()[name]
    rng = np.random.default_rng(index)
    parts = fuzz_cases._mutate_model(rng, dict(arrays), json.loads(json.dumps(header)),
                                     mutation)
    path = str(tmp_path / "m.npz")
    fuzz_cases._write_model(rng, path, *parts)
    with pytest.raises(ValueError, match=f"^{path}: (corrupt|not a fastrank)"):
        cls.load(path)


def test_calibrated_classifier_is_neither_saved_nor_loaded(tmp_path, data):
    """It wraps an arbitrary estimator, which a pickle-free file cannot hold."""
    from fastrank.calibration import CalibratedClassifier
    X, Y = data
    model = CalibratedClassifier(KNN(k=3), cv=2).fit(X, Y)
    with pytest.raises(TypeError, match="cannot be saved"):
        model.save(tmp_path / "c.npz")
    assert not (tmp_path / "c.npz").exists()
    KNN(k=3).fit(X, Y).save(tmp_path / "knn.npz")
    with pytest.raises(TypeError, match="cannot be loaded"):
        CalibratedClassifier.load(tmp_path / "knn.npz")



@pytest.mark.parametrize("make", [lambda: KNN(k=4), lambda: MLkNN(k=3),
                                  lambda: VGRAM(n_neurons=16, n_synapses=64, random_state=0),
                                  lambda: fastrank.VGRAMCor(n_neurons=16, n_synapses=32,
                                                            random_state=1)],
                         ids=["KNN", "MLkNN", "VGRAM", "VGRAMCor"])
def test_fastrank_load_reads_every_saveable_class(tmp_path, data, make):
    """fastrank.load gives back the class the file was saved from, predicting the same."""
    X, Y = data
    model = make().fit(X[:40], Y[:40])
    model.save(tmp_path / "m.npz")
    back = fastrank.load(tmp_path / "m.npz")
    assert type(back) is type(model) and back.get_params() == model.get_params()
    np.testing.assert_array_equal(back.decision_function(X[40:]), model.decision_function(X[40:]))
    np.testing.assert_array_equal(back.predict(X[40:]), model.predict(X[40:]))


def test_fastrank_load_refuses_what_no_class_loads(tmp_path, data):
    X, Y = data
    KNN(k=3).fit(X, Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    for name in ("CalibratedClassifier", ["KNN"], None):
        header = header_of(tmp_path / "m.npz")
        header["estimator"] = name
        arrays["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        write_npz(tmp_path / "bad.npz", arrays)
        with pytest.raises(ValueError, match=r"bad\.npz: holds a .*, which no fastrank class "
                                             r"loads \(model files hold KNN, MLkNN, VGRAM, "
                                             r"VGRAMCor\)"):
            fastrank.load(tmp_path / "bad.npz")
    (tmp_path / "text.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="text.npz: not a fastrank model file"):
        fastrank.load(tmp_path / "text.npz")
    with pytest.raises(ValueError, match="missing.npz: cannot read the model file"):
        fastrank.load(tmp_path / "missing.npz")
    del arrays["__header__"]
    write_npz(tmp_path / "headless.npz", arrays)
    with pytest.raises(ValueError, match="headless.npz: not a fastrank model file .*no "
                                         "member '__header__'"):
        fastrank.load(tmp_path / "headless.npz")
    arrays["__header__"] = np.zeros(MAX_HEADER_BYTES + 4096, np.uint8)
    write_npz(tmp_path / "huge.npz", arrays)
    with pytest.raises(ValueError, match="huge.npz: not a fastrank model file .*more than"):
        fastrank.load(tmp_path / "huge.npz")
    raw = bytearray((tmp_path / "m.npz").read_bytes())
    at = raw.index(b'"estimator"')  # a damaged header byte fails its CRC-32
    raw[at + 2] ^= 1
    (tmp_path / "flipped.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="flipped.npz: not a fastrank model file .*CRC-32"):
        fastrank.load(tmp_path / "flipped.npz")


def _flip_cases(path, seed, count):
    """(position, damaged bytes): one random bit flipped in each of ``count`` random bytes
    of the file (every byte when ``count`` is None)."""
    raw = path.read_bytes()
    rng = np.random.default_rng(seed)
    positions = range(len(raw)) if count is None else \
        np.sort(rng.choice(len(raw), min(count, len(raw)), replace=False))
    for pos in positions:
        damaged = bytearray(raw)
        damaged[pos] ^= 1 << int(rng.integers(8))
        yield int(pos), bytes(damaged)


@pytest.mark.parametrize("name", ["KNN-csr", "VGRAM", "MLkNN"])
def test_every_bit_flip_is_refused_or_changes_nothing(tmp_path, name):
    """One bit flipped in 600 random bytes of a saved model (``FASTRANK_FLIP_ALL=1``: in
    every byte): where zipfile's CRC check sees the damage, load refuses the file with a
    ValueError naming it; where load accepts the file (a flip in a field nothing reads,
    such as a time stamp), the model predicts exactly what the undamaged one does."""
    import fuzz_cases
    from threadpoolctl import threadpool_limits
    cls, arrays, header = fuzz_cases._saved_models()[name]
    good = tmp_path / "good.npz"
    fuzz_cases._write_model(np.random.default_rng(0), str(good), arrays, header, None, None)
    X = np.random.default_rng(1).random((6, header["n_features_in_"]))
    expected = cls.load(good).decision_function(X)
    path = tmp_path / "m.npz"
    accepted = 0
    count = None if os.environ.get("FASTRANK_FLIP_ALL") == "1" else 600
    for pos, raw in _flip_cases(good, len(name), count):
        path.write_bytes(raw)
        try:
            with threadpool_limits(1, user_api="openmp"):  # tiny models: no thread start-up
                model = cls.load(path)
        except ValueError as exc:
            assert str(exc).startswith(f"{path}: "), (pos, exc)
            continue
        assert not fuzz_cases._zip_reports_damage(path), f"byte {pos}: damage zipfile sees"
        np.testing.assert_array_equal(model.decision_function(X), expected,
                                      err_msg=f"byte {pos}")
        accepted += 1
    assert 0 < accepted < 0.2 * (count or len(good.read_bytes()))  # most are refused


def _rezip(src, dst, edit):
    """Copy a model file member by member (uncompressed), ``edit(name, bytes)`` giving each
    member's new bytes: the zip directory then records their true CRC-32."""
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for info in a.infolist():
            b.writestr(info.filename, edit(info.filename, a.read(info)))


@pytest.mark.parametrize("header", [
    b"{'descr': '<u1', 'fortran_order': False, 'shape': (3,), '",   # a TokenError in numpy
    b"{'descr': '<u1', 'fortran_order': False, 'shape': (3,)",      # a SyntaxError
    b"(" * 5000,                                                     # a TokenError too
])
def test_npy_headers_that_do_not_parse_are_a_value_error(tmp_path, data, header):
    """A member with a correct CRC-32 but a .npy header numpy's parser chokes on (with
    tokenize.TokenError, SyntaxError, TypeError, ...) is refused with a ValueError naming
    the file."""
    X, Y = data
    KNN(k=3).fit(X, Y).save(tmp_path / "m.npz")
    padded = header + b" " * (-(len(header) + 11) % 64) + b"\n"
    body = b"\x93NUMPY\x01\x00" + len(padded).to_bytes(2, "little") + padded + b"\0\1\0"
    _rezip(tmp_path / "m.npz", tmp_path / "bad.npz",
           lambda name, raw: body if name == "classes_.npy" else raw)
    with pytest.raises(ValueError, match=f"^{tmp_path / 'bad.npz'}: not a fastrank model "
                                         "file .*classes_.npy"):
        KNN.load(tmp_path / "bad.npz")


def test_a_zip_directory_zipfile_cannot_read_is_a_value_error(tmp_path, data):
    """A zip directory claiming a version zipfile does not implement (NotImplementedError
    inside zipfile) is refused with a ValueError."""
    X, Y = data
    KNN(k=3).fit(X, Y).save(tmp_path / "m.npz")
    raw = bytearray((tmp_path / "m.npz").read_bytes())
    entry = raw.index(b"PK\x01\x02")
    raw[entry + 6] = 173  # "version needed to extract": 17.3
    (tmp_path / "bad.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="not a fastrank model file .*version"):
        KNN.load(tmp_path / "bad.npz")


def _repoint(src, dst, name, offset):
    """Copy the zip file ``src`` to ``dst`` with the directory entry of member ``name``
    pointing at the local header at ``offset``."""
    raw = bytearray(src.read_bytes())
    pos = raw.index(b"PK\x01\x02")
    while raw[pos + 46:pos + 46 + len(name)] != name:
        pos = raw.index(b"PK\x01\x02", pos + 4)
    raw[pos + 42:pos + 46] = offset.to_bytes(4, "little")
    dst.write_bytes(bytes(raw))


def test_a_local_header_naming_another_member_is_refused(tmp_path, data):
    """The directory entry of classes_ pointing at the bytes of Y_ (testzip's check of the
    local file name)."""
    X, Y = data
    KNN(k=3).fit(X, Y).save(tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "m.npz") as z:
        offset = z.getinfo("Y_.npy").header_offset
    _repoint(tmp_path / "m.npz", tmp_path / "bad.npz", b"classes_.npy", offset)
    with pytest.raises(ValueError, match="local header names another file"):
        KNN.load(tmp_path / "bad.npz")


def test_members_that_overlap_are_refused(tmp_path):
    """A member whose bytes lie inside another one's (a small file listing many members
    over the same bytes would make them read and mapped many times) is refused."""
    blob = io.BytesIO()
    np.lib.format.write_array(blob, np.arange(4, dtype=np.uint8))
    with zipfile.ZipFile(tmp_path / "b.npz", "w") as z:
        z.writestr("b.npy", blob.getvalue())
    with zipfile.ZipFile(tmp_path / "b.npz") as z:
        info = z.getinfo("b.npy")
    local_b = (tmp_path / "b.npz").read_bytes()[:30 + len("b.npy") + info.file_size]
    with zipfile.ZipFile(tmp_path / "ab.npz", "w") as z:
        z.writestr("a.npy", local_b)   # a's bytes hold a complete copy of member b
        z.writestr("b.npy", blob.getvalue())
        inner = z.getinfo("a.npy").header_offset + 30 + len("a.npy")
    _repoint(tmp_path / "ab.npz", tmp_path / "bad.npz", b"b.npy", inner)
    with pytest.raises(ValueError, match="members 'a.npy' and 'b.npy' overlap"):
        KNN.load(tmp_path / "bad.npz")


def test_a_csr_member_whose_indptr_drops_its_entries_is_refused(tmp_path, data):
    """An all-zero indptr with every entry still stored: SciPy's constructor would drop the
    entries past indptr[-1] and give an empty training set; load checks the whole
    structure (indptr must end at the number of stored entries)."""
    import scipy.sparse as sp
    X, Y = data
    KNN(k=3).fit(sp.csr_matrix(X), Y).save(tmp_path / "m.npz")
    arrays = members(tmp_path / "m.npz")
    assert arrays["X_fit_.csr.data"].size == X.size  # the entries are there
    arrays["X_fit_.csr.indptr"] = np.zeros_like(arrays["X_fit_.csr.indptr"])
    write_npz(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match=r"X_fit_ is not a valid CSR matrix \(X_fit_: indptr "
                                         f"ends at 0 but indices has {X.size}"):
        KNN.load(tmp_path / "bad.npz")
    arrays["X_fit_.csr.indptr"] = np.zeros(3, np.int32)  # 2 rows where shape says 60
    write_npz(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match="indptr has 3 entries for 60 rows"):
        KNN.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("classes", [
    np.array([0, 1, 1, 2, 3]),                 # a duplicate
    np.ones(5, dtype=bool),                    # all true
    np.array([0, 2, 1, 3, 4]),                 # not sorted
    np.array(["a", "b", "c", "e", "d"]),
])
def test_classes_must_be_what_fit_stores(tmp_path, data, classes):
    """fit stores the sorted distinct labels; a file whose classes_ repeat a label or are
    out of order (so label sets would be read against the wrong columns) is refused."""
    X, Y = data
    MLkNN(k=3).fit(X, Y).save(tmp_path / "m.npz")
    write_npz(tmp_path / "bad.npz", {**members(tmp_path / "m.npz"), "classes_": classes})
    with pytest.raises(ValueError, match="classes_ is not sorted and distinct"):
        MLkNN.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("value", ["max", [], float("inf"), -1, 1.5, {"seed": 1}])
def test_vgram_random_state_is_checked_as_fit_checks_it(tmp_path, data, value):
    X, Y = data
    VGRAM(n_neurons=4, n_synapses=8, random_state=3).fit(X, Y).save(tmp_path / "m.npz")
    with pytest.raises((ValueError, TypeError)):
        VGRAM(n_neurons=4, n_synapses=8, random_state=value).fit(X, Y)
    arrays = members(tmp_path / "m.npz")
    header = header_of(tmp_path / "m.npz")
    header["params"]["random_state"] = value
    arrays["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    write_npz(tmp_path / "bad.npz", arrays)
    with pytest.raises(ValueError, match="corrupt VGRAM model file: .*random_state"):
        VGRAM.load(tmp_path / "bad.npz")


_WIDE_CHILD = """
import json, resource, sys
import numpy as np, scipy.sparse as sp
import fastrank
cls = getattr(fastrank, sys.argv[1])
narrow_path, wide_path, width, cap = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rng = np.random.default_rng(0)
narrow = cls.load(narrow_path)
Q = sp.random(5, narrow.n_features_in_, density=0.5, format="csr", random_state=rng)
expected = narrow.decision_function(Q)  # also starts the threads and pools a call needs
wide_Q = sp.csr_matrix((Q.data, Q.indices, Q.indptr), shape=(5, width))
with open("/proc/self/statm") as f:
    in_use = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (in_use + cap, in_use + cap))
try:
    got = cls.load(wide_path).decision_function(wide_Q)
except ValueError as exc:
    print(json.dumps(["refused", str(exc)]))
else:
    print(json.dumps(["same" if np.array_equal(got, expected) else "different", ""]))
"""


@pytest.mark.parametrize("width", [2**28, 2**31 - 1])
@pytest.mark.parametrize("name", ["KNN-csr", "VGRAM", "VGRAMCor"])
def test_a_declared_width_costs_no_more_than_the_file(tmp_path, name, width):
    """A small model file declaring 2**28 or 2**31 - 1 features (its sparse training
    documents, or its synapses, within the first few): loaded and asked for beliefs on
    queries of that width, in a child whose address space is capped at what it uses plus
    64 MiB and 100 times the file's size, it gives the beliefs of the same model at its
    stored width -- or refuses with a ValueError naming the size. No MemoryError."""
    import subprocess
    import sys

    import fuzz_cases
    cls, arrays, header = fuzz_cases._saved_models()[name]
    rng = np.random.default_rng(0)
    fuzz_cases._write_model(rng, str(tmp_path / "narrow.npz"), arrays, header, None, None)
    parts = fuzz_cases._mutate_model(rng, dict(arrays), json.loads(json.dumps(header)),
                                     ("width", None, width))
    fuzz_cases._write_model(rng, str(tmp_path / "wide.npz"), *parts)
    size = (tmp_path / "wide.npz").stat().st_size
    assert size < 200_000
    proc = subprocess.run(
        [sys.executable, "-c", _WIDE_CHILD, cls.__name__, str(tmp_path / "narrow.npz"),
         str(tmp_path / "wide.npz"), str(width), str(64 * 2**20 + 100 * size)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict, message = json.loads(proc.stdout)
    assert verdict == "same" or (verdict == "refused" and str(width) in message), message
