"""Model files are checked before use: structure, array headers, JSON header; arrays are
memory-mapped. Crafted files give a ValueError naming the problem, never a crash, a huge
allocation or a silently wrong model."""
import io
import json
import time
import zipfile

import numpy as np
import pytest

from fastrank import KNN, VGRAM, MLkNN


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


@pytest.mark.parametrize("shape, payload, match", [
    ((10**6, 10**6), b"\0" * 64, "claims"),      # a header claiming terabytes
    ((4,), b"\0" * 8, "claims"),                  # fewer bytes than the header claims
    ((1,), b"\0" * 64, "claims"),                 # more bytes than the header claims
])
def test_array_headers_must_match_their_members(tmp_path, data, shape, payload, match):
    X, Y = data
    KNN().fit(X, Y).save(tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "m.npz") as src, \
            zipfile.ZipFile(tmp_path / "bad.npz", "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "Y_.npy":
                body = npy_bytes(shape, np.uint8, payload)
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
    for raw in (b"[" * 100000, b"\xff\xfe", b"{}"):
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
