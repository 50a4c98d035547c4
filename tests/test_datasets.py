"""Loaders, embedded data and the synthetic generator.

References: a slow line-by-line ARFF reader written here (``_reference_arff``), scikit-learn's
svmlight reader, direct NumPy statistics, and the Mulan statistics table."""
import hashlib
import json
import os
import re
from importlib import resources

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastrank import datasets as D

# ---- a slow, obviously-correct reference ARFF reader ------------------------------------------


def _reference_arff(path, label_names):
    """Split every data line on commas (values here are never quoted); nominal -> index."""
    attrs = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    k = 0
    while not lines[k].strip().lower().startswith("@data"):
        line = lines[k].strip()
        if line.lower().startswith("@attribute"):
            name, kind = line.split(None, 2)[1:]
            kind = kind.strip()
            values = [v.strip() for v in kind[1:-1].split(",")] if kind.startswith("{") else None
            attrs.append((name, values))
        k += 1
    def value(a, v):
        return float(v) if attrs[a][1] is None else float(attrs[a][1].index(v))

    data = [line.strip() for line in lines[k + 1:]]
    data = [line for line in data if line and not line.startswith("%")]
    M = np.zeros((len(data), len(attrs)))
    for i, line in enumerate(data):
        if line.startswith("{"):
            for pair in line[1:-1].split(","):
                if pair.strip():
                    a, v = pair.split()
                    M[i, int(a)] = value(int(a), v)
        else:
            M[i] = [value(a, v.strip()) for a, v in enumerate(line.split(","))]
    is_label = np.array([name in set(label_names) for name, _ in attrs])
    return M[:, ~is_label], M[:, is_label]


# name, file stem, documents, features, labels, cardinality, density, distinct (Mulan table;
# tmc2007-500 is the 500-feature version of tmc2007)
MULAN = [
    ("bibtex", "bibtex", 7395, 1836, 159, 2.402, 0.015, 2856),
    ("cal500", "cal500", 502, 68, 174, 26.044, 0.150, 502),
    ("delicious", "delicious", 16105, 500, 983, 19.020, 0.019, 15806),
    ("emotions", "emotions", 593, 72, 6, 1.869, 0.311, 27),
    ("enron", "enron", 1702, 1001, 53, 3.378, 0.064, 753),
    ("genbase", "genbase", 662, 1186, 27, 1.252, 0.046, 32),
    ("medical", "medical", 978, 1449, 45, 1.245, 0.028, 94),
    ("tmc2007", "tmc2007-500", 28596, 500, 22, 2.158, 0.098, 1341),
    ("yeast", "yeast", 2417, 103, 14, 4.237, 0.303, 198),
]


@pytest.mark.shared_data
@pytest.mark.parametrize("folder,stem,n,d,q,card,dens,distinct", MULAN, ids=[m[0] for m in MULAN])
def test_mulan_files_match_statistics_and_reference(shared_data, folder, stem, n, d, q, card,
                                                    dens, distinct):
    base = shared_data / "mulan" / folder / stem
    ds = D.load_arff(f"{base}.arff", labels=f"{base}.xml")
    s = ds.summary()
    assert (s["documents"], s["features"], s["labels"]) == (n, d, q)
    # the table prints 3 decimals (emotions' 1.869 is 1108/593 = 1.8685 rounded up)
    assert s["cardinality"] == pytest.approx(card, abs=6e-4)
    assert s["density"] == pytest.approx(dens, abs=6e-4)
    assert s["distinct_label_sets"] == distinct
    assert ds.X.dtype == np.float64 and ds.X.has_canonical_format
    assert ds.Y.dtype == np.uint8 and ds.Y.flags.c_contiguous
    # the same values as the slow reference reader, and sibling-XML resolution agrees
    X_ref, Y_ref = _reference_arff(f"{base}.arff", ds.label_names)
    np.testing.assert_array_equal(ds.X.toarray(), X_ref)
    np.testing.assert_array_equal(ds.Y, Y_ref)
    assert not np.any(ds.X.data == 0)
    again = D.load_arff(f"{base}.arff")
    assert again.label_names == ds.label_names and (again.X != ds.X).nnz == 0


@pytest.mark.shared_data
def test_embedded_yeast_equals_mulan_arff(shared_data):
    emb = D.load("yeast")
    ref = D.load_arff(shared_data / "mulan" / "yeast" / "yeast.arff",
                      labels=shared_data / "mulan" / "yeast" / "yeast.xml")
    assert emb.X.shape == ref.X.shape == (2417, 103) and emb.Y.shape == (2417, 14)
    assert emb.feature_names == ref.feature_names
    assert emb.label_names == ref.label_names
    np.testing.assert_array_equal(emb.Y, ref.Y)
    # both files print 6 decimals: the values agree to half a unit of the 6th decimal
    np.testing.assert_allclose(emb.X.toarray(), ref.X.toarray(), rtol=0, atol=5e-7)


def _decimal(millionths):
    """An integer number of millionths as river's CSV prints it: 4168 -> '0.004168', -1700
    -> '-0.0017', 1000000 -> '1'."""
    size = abs(millionths)
    text = f"{size // 1_000_000}.{size % 1_000_000:06d}".rstrip("0").rstrip(".")
    return "-" + text if millionths < 0 else text


def test_embedded_yeast_file_provenance_and_size():
    info = D._embedded._EMBEDDED["yeast"]
    stored = resources.files("fastrank").joinpath("data", info["file"]).read_bytes()
    assert len(stored) <= 600_000
    # its cells rebuild the CSV inside river's yeast.csv.gz (SHA-256 2969cb4b... of the
    # .gz), byte for byte
    names, cells = D._embedded._embedded_cells("yeast")
    csv = (",".join(names) + "\n" + "".join(
        ",".join(_decimal(v) for v in row) + "\n" for row in cells.tolist())).encode()
    assert hashlib.sha256(csv).hexdigest() == info["csv_sha256"] == \
        "fd17cb9b53acaaf5e82a9e0795e2667167775915c0e32c1f6fe0fadb0d3bd703"
    listed = {d["name"]: d for d in D.list() if d["origin"] == "embedded"}
    assert set(listed) == {"yeast"}
    y = listed["yeast"]
    assert "BSD-3-Clause" in y["licence"] and "Elisseeff" in y["citation"]
    assert "river" in y["source"]
    assert (y["documents"], y["features"], y["labels"]) == (2417, 103, 14)
    assert resources.files("fastrank").joinpath("data", "PROVENANCE.md").is_file()
    # independent parse of the csv: header names, and the label matrix
    lines = csv.decode().splitlines()
    header = lines[0].split(",")
    ds = D.load()
    assert ds.name == "yeast"
    assert ds.feature_names == header[:103] and ds.label_names == header[103:]
    Y = np.array([[int(v) for v in line.split(",")[103:]] for line in lines[1:]])
    np.testing.assert_array_equal(ds.Y, Y)
    X = np.array([[float(v) for v in line.split(",")[:103]] for line in lines[1:]])
    assert np.array_equal(ds.X.toarray().view(np.int64), X.view(np.int64))  # the same bits
    assert ds.Y.sum() == 10241  # = round(cardinality 4.237 * 2417)
    assert D.load().summary() == ds.summary()


# ---- ARFF details on small files -------------------------------------------------------------

ARFF_SMALL = """% a comment
@RELATION 'tiny: -C 2'

@attribute l0 {0,1}
@attribute l1 {0, 1}
@attribute 'word one' numeric
@ATTRIBUTE "w2" {a,'b c',d}
@attribute w3 REAL
@data
% dense rows
1,0,1.5,'b c',-2e-3
0,0,0,a,7
{0 1,1 1, 3 d}

{2 0.25}
{}
"""


def _write(tmp_path, text, name="f.arff", binary=False):
    p = tmp_path / name
    if binary:
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_arff_dense_sparse_quotes_comments_nominal_and_meka(tmp_path, newline):
    p = _write(tmp_path, ARFF_SMALL.replace("\n", newline).encode(), binary=True)
    ds = D.load_arff(p)  # MEKA -C 2: the first two attributes are labels
    assert ds.label_names == ["l0", "l1"]
    assert ds.feature_names == ["word one", "w2", "w3"]
    # nominal values -> their declaration index (a=0, 'b c'=1, d=2)
    np.testing.assert_array_equal(ds.X.toarray(), [[1.5, 1, -0.002], [0, 0, 7], [0, 2, 0],
                                                   [0.25, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 0], [1, 1], [0, 0], [0, 0]])
    assert ds.name == "f" and "tiny" in ds.info["relation"]



def test_arff_dense_option_gives_an_array_that_a_centring_pipeline_takes(shared_data, tmp_path):
    """X is CSR by default whatever the file's rows; dense=True gives the same values as a
    float64 array (StandardScaler, which centres, refuses the CSR), kept by take(), written
    by save_libsvm and digested by the study as the CSR is."""
    from sklearn.preprocessing import StandardScaler
    from fastrank.study._plan import _data_digest
    path = shared_data / "mulan" / "emotions" / "emotions.arff"
    xml = shared_data / "mulan" / "emotions" / "emotions.xml"
    sparse, dense = D.load_arff(path, labels=xml), D.load_arff(path, labels=xml, dense=True)
    assert sp.isspmatrix_csr(sparse.X)
    assert isinstance(dense.X, np.ndarray) and dense.X.dtype == np.float64 and \
        dense.X.flags.c_contiguous
    reference_X, _ = _reference_arff(path, D._arff._labels_from_xml(xml))
    np.testing.assert_array_equal(dense.X, reference_X)
    np.testing.assert_array_equal(dense.Y, sparse.Y)
    with pytest.raises(ValueError, match="Cannot center sparse matrices"):
        StandardScaler().fit(sparse.X)
    scaled = StandardScaler().fit_transform(dense.X)
    np.testing.assert_allclose(scaled.mean(axis=0), 0, atol=1e-12)
    part = dense.take([3, 1, 4])
    assert isinstance(part.X, np.ndarray) and part.X.tolist() == reference_X[[3, 1, 4]].tolist()
    assert _data_digest(dense) == _data_digest(sparse)
    D.save_libsvm(dense, tmp_path / "d.svm")
    D.save_libsvm(sparse, tmp_path / "s.svm")
    assert (tmp_path / "d.svm").read_bytes() == (tmp_path / "s.svm").read_bytes()
    given = np.array([[0.0, 2.0], [1.0, 0.0]])
    toy = D.Dataset(given, [[1, 0], [0, 1]], dense=True)
    assert toy.X.tolist() == given.tolist() and not np.shares_memory(toy.X, given)
    for bad in ("yes", 1):
        with pytest.raises(TypeError, match="dense must be True or False"):
            D.load_arff(path, labels=xml, dense=bad)
        with pytest.raises(TypeError, match="dense must be True or False"):
            D.Dataset(given, [[1, 0], [0, 1]], dense=bad)


def test_arff_dense_zeros_do_not_keep_token_buffers(tmp_path):
    rows = "".join(("1" if i % 50 == 0 else "0") + ",0" * 9 + ",1\n" for i in range(500))
    text = "@relation r\n" + "".join(f"@attribute a{j} numeric\n" for j in range(10)) + \
        "@attribute y {0,1}\n@data\n" + rows
    ds = D.load_arff(_write(tmp_path, text), labels=1)
    assert ds.X.nnz == 10 and ds.Y.sum() == 500
    for arr in (ds.X.data, ds.X.indices):
        assert arr.base is None or arr.base.size <= 2 * ds.X.nnz


def test_arff_nominal_runs_and_escaped_quotes(tmp_path):
    text = ("@relation r\n@attribute n {x,'it\\'s',\"y z\"}\n@attribute y {0,1}\n@data\n"
            "x,1\n'it\\'s',0\n'it\\'s',0\n\"y z\",1\n'y z',1\nx,0\n{0 'it\\'s'}\n{1 1}\n")
    ds = D.load_arff(_write(tmp_path, text), labels=1)
    np.testing.assert_array_equal(ds.X.toarray()[:, 0], [0, 1, 1, 2, 2, 0, 1, 0])
    np.testing.assert_array_equal(ds.Y[:, 0], [1, 0, 0, 1, 1, 0, 0, 1])


@pytest.mark.parametrize("labels", [["l1", "l0"], "xml"])
def test_arff_label_names_and_xml_keep_file_order(tmp_path, labels):
    p = _write(tmp_path, ARFF_SMALL.replace("-C 2", ""))
    if labels == "xml":
        labels = _write(tmp_path, '<?xml version="1.0"?><labels xmlns="http://mulan.'
                        'sourceforge.net/labels"><label name="l1"></label><label name="l0">'
                        '</label></labels>', "labels.xml")
    ds = D.load_arff(p, labels=labels)
    assert ds.label_names == ["l0", "l1"]
    np.testing.assert_array_equal(ds.Y[2], [1, 1])


def test_arff_label_count_means_last_attributes_and_sibling_xml(tmp_path):
    text = "@relation r\n@attribute f numeric\n@attribute y0 {0,1}\n@attribute y1 numeric\n" \
           "@data\n0.5,1,0\n{0 2, 2 1}\n"
    p = _write(tmp_path, text, "r.arff")
    ds = D.load_arff(p, labels=2)
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(ds.X.toarray(), [[0.5], [2.0]])
    _write(tmp_path, '<labels><label name="y1"/></labels>', "r.xml")
    sib = D.load_arff(p)
    assert sib.label_names == ["y1"] and sib.feature_names == ["f", "y0"]
    meka_neg = _write(tmp_path, text.replace("@relation r", "@relation 'r: -C -2'"), "m.arff")
    assert D.load_arff(meka_neg).label_names == ["y0", "y1"]


BAD_ARFF = [
    # (file text, expected line, words in the message)
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n2\n", 6, "expected 2"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{0 1, 1 1\n", 5, "'}'"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{0 1,1}\n", 5, "sparse entry"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{x 1}\n", 5, "sparse entry"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{1 1,0 1}\n", 5, "increase"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{0 1,2 1}\n", 5,
     "out of range"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{99 1}\n", 5,
     "sparse index 99 out of range for 2"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{1234 1}\n", 5,
     "sparse index 1234 out of range"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{" + "9" * 50 + " 1}\n", 5,
     "sparse index " + "9" * 40 + "... (50 digits) out of range"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,2\n", 5, "nominal values"),
    ("@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n1,2\n", 5, "must be 0 or 1"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\nabc,1\n", 5, "finite number"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\nnan,1\n", 5, "finite number"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n?,1\n", 5, "missing"),
    ("@relation r\n@attribute a {u,v}\n@attribute y {0,1}\n@data\nw,1\n", 5, "nominal"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,,\n", 5, "empty value"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n{0 1},{2}\n", 5, "weights"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n'1,1\n", 5, "unterminated"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n", 3, "before the @data"),
    ("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n", 5, "no data rows"),
    ("@relation r\n@attribute a string\n@attribute y {0,1}\n@data\n", 2, "type 'string'"),
    ("@relation r\n@attribute a {u,v\n@attribute y {0,1}\n@data\n", 2, "must end with"),
    ("@relation r\n@attrib a numeric\n@data\n", 2, "expected @relation"),
    ("@relation r\n@attribute\n@data\n", 2, "expected '@attribute <name> <type>'"),
    ("@relation r\n@attribute a numeric\n@attribute y {yes,no}\n@data\n1,yes\n", 3, "label attr"),
    # a sparse row leaving the label out means its first value ("1" here, as Weka reads it)
    ("@relation r\n@attribute a numeric\n@attribute y {1,0}\n@data\n{0 1}\n", 3, "label attr"),
    ("@relation r\n@attribute y numeric\n@attribute y {0,1}\n@data\n1,1\n", 3,
     "attribute 'y' declared again (first on line 2)"),
    ("@relation r\n@attribute a {u,v,u}\n@attribute y {0,1}\n@data\nu,1\n", 2,
     "attribute 'a' lists the value 'u' twice"),
    (b"@relation r\n@attribute a\xff numeric\n@attribute y {0,1}\n@data\n", 2, "UTF-8"),
    (b"@relation r\n@attribute a {u,v}\n@attribute y {0,1}\n@data\nu,1\n\xe9,1\n", 6, "UTF-8"),
]


def test_arff_and_libsvm_after_a_byte_order_mark(tmp_path):
    """A UTF-8 byte order mark at the start is skipped, as load_text skips it."""
    text = "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n2,1\n"
    ds = D.load_arff(_write(tmp_path, b"\xef\xbb\xbf" + text.encode(), binary=True), labels=1)
    np.testing.assert_array_equal(ds.X.toarray(), [[2]])
    np.testing.assert_array_equal(ds.Y, [[1]])
    ds = D.load_libsvm(_write(tmp_path, b"\xef\xbb\xbf0 2:3\n", "b.svm", binary=True))
    np.testing.assert_array_equal(ds.X.toarray(), [[0, 3]])
    assert ds.label_names == ["0"]


@pytest.mark.parametrize("text,line,words", BAD_ARFF)
def test_bad_arff_names_file_line_and_expectation(tmp_path, text, line, words):
    p = _write(tmp_path, text, binary=isinstance(text, bytes))
    with pytest.raises(ValueError) as exc:
        D.load_arff(p, labels=1)
    msg = str(exc.value)
    assert msg.startswith(f"{p}: line {line}:"), msg
    assert words in msg, msg


def test_bad_label_specifications(tmp_path):
    p = _write(tmp_path, "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n")
    with pytest.raises(ValueError, match="which attributes are labels"):
        D.load_arff(p)
    with pytest.raises(ValueError, match="labels=2 must be between 1 and 1"):
        D.load_arff(p, labels=2)
    with pytest.raises(ValueError, match=r"label\(s\) \['z'\] are not attributes"):
        D.load_arff(p, labels=["z"])
    bad_xml = _write(tmp_path, "<labels><label name='y'></labels>", "bad.xml")
    with pytest.raises(ValueError, match=r"bad\.xml: line 1: malformed XML"):
        D.load_arff(p, labels=bad_xml)
    with pytest.raises(ValueError, match="at least one feature"):
        D.load_arff(p, labels=["a", "y"])


VALID = "@relation r\n@attribute a numeric\n@attribute b {p,q}\n@attribute y {0,1}\n@data\n" \
        "1.5,p,1\n{0 -2,1 q}\n0,q,0\n"


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_arff_never_crashes(tmp_path, data):
    raw = bytearray(VALID.encode())
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw)))
        op = data.draw(st.sampled_from(["insert", "delete", "replace", "truncate"]))
        chunk = data.draw(st.binary(min_size=1, max_size=4) | st.sampled_from(
            [b",", b"{", b"}", b"'", b"\n", b" ", b"?", b"1e400", b"-", b"%", b"\xc3"]))
        if op == "insert":
            raw[pos:pos] = chunk
        elif op == "delete":
            del raw[pos:pos + len(chunk)]
        elif op == "replace":
            raw[pos:pos + len(chunk)] = chunk
        else:
            del raw[pos:]
    p = _write(tmp_path, bytes(raw), binary=True)
    try:
        ds = D.load_arff(p, labels=1)
    except ValueError as exc:
        assert str(exc).startswith(str(p))
    else:
        assert ds.X.shape[0] == ds.Y.shape[0] >= 1 and np.isfinite(ds.X.data).all()


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                max_size=20), st.sampled_from(["{:.17g}", "{!r}", "{:.6f}", "{:e}", "{:.3f}"]))
def test_numbers_are_converted_like_python_float(tmp_path, values, fmt):
    text = "@relation r\n@attribute a numeric\n@attribute y numeric\n@data\n" + \
           "".join(f"{fmt.format(v)},1\n" for v in values)
    ds = D.load_arff(_write(tmp_path, text), labels=1)
    expect = [float(fmt.format(v)) for v in values]
    np.testing.assert_array_equal(ds.X.toarray()[:, 0], expect)


# ---- libsvm -------------------------------------------------------------------------------------

def test_libsvm_round_trip_and_sklearn_reader(tmp_path):
    from sklearn.datasets import load_svmlight_file

    rng = np.random.default_rng(0)
    X = sp.random(40, 30, density=0.2, random_state=1, format="csr")
    X.data = X.data * 10 - 3
    X.data[::7] = rng.normal(size=X.data[::7].size) * 1e-30
    Y = (rng.random((40, 5)) < 0.3).astype(np.uint8)
    Y[:, 4] = 0
    Y[0, 4] = 1
    X = X.tolil()
    X[5, :] = 0  # a document with neither labels nor features survives the round trip
    X = X.tocsr()
    Y[5] = 0
    ds = D.Dataset(X, Y)
    assert ds.X[5].nnz == 0 and not ds.Y[5].any()
    p = tmp_path / "d.svm"
    D.save_libsvm(ds, p)
    back = D.load_libsvm(p, n_features=30, n_labels=5)
    assert (back.X != ds.X).nnz == 0 and np.array_equal(back.Y, ds.Y)
    Xs, ys = load_svmlight_file(str(p), n_features=30, multilabel=True, zero_based=False)
    np.testing.assert_array_equal(Xs.toarray(), back.X.toarray())
    assert [tuple(sorted(int(v) for v in r)) for r in ys] == \
        [tuple(np.flatnonzero(r)) for r in back.Y]
    D.save_libsvm(ds, tmp_path / "z.svm", zero_based=True)
    assert (D.load_libsvm(tmp_path / "z.svm", n_features=30).X != ds.X).nnz == 0


def test_libsvm_round_trip_keeps_all_zero_label_and_feature_columns(tmp_path):
    from sklearn.datasets import load_svmlight_file

    X = sp.csr_matrix(np.array([[0, 2.5, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 0]]))
    Y = np.array([[0, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=np.uint8)  # label 0 never occurs
    ds = D.Dataset(X, Y)
    for zero_based in (False, True):  # neither file has feature index 0 (column 0 is empty)
        p = tmp_path / f"r{zero_based}.svm"
        D.save_libsvm(ds, p, zero_based=zero_based)
        assert p.read_text().splitlines()[0] == \
            f"# fastrank n_features=4 n_labels=3 zero_based={int(zero_based)}"
        back = D.load_libsvm(p)
        assert back.X.shape == (3, 4) and back.Y.shape == (3, 3)
        np.testing.assert_array_equal(back.X.toarray(), X.toarray())
        np.testing.assert_array_equal(back.Y, Y)
        assert back.label_names == ["0", "1", "2"]
        # explicit arguments still win over the header
        assert D.load_libsvm(p, n_features=6, n_labels=4).Y.shape == (3, 4)
        # other svmlight readers skip the header as a comment
        Xs, _ = load_svmlight_file(str(p), n_features=4, multilabel=True, zero_based=zero_based)
        np.testing.assert_array_equal(Xs.toarray(), X.toarray())
    # a plain libsvm file (no header) is read as before: distinct labels, max feature index
    plain = _write(tmp_path, "# a comment\n1,2 2:2.5\n2 3:1\n", "plain.svm")
    back = D.load_libsvm(plain)
    assert back.label_names == ["1", "2"] and back.X.shape == (2, 3)
    with pytest.raises(ValueError, match="out of range for n_labels=1"):
        D.load_libsvm(_write(tmp_path, "# fastrank n_features=3 n_labels=1\n1 1:1\n", "h.svm"))
    with pytest.raises(ValueError, match="exceeds n_features=1"):
        D.load_libsvm(_write(tmp_path, "# fastrank n_features=1 n_labels=2\n1 2:1\n", "h.svm"))
    with pytest.raises(TypeError, match="zero_based"):
        D.save_libsvm(ds, tmp_path / "x.svm", zero_based="auto")


def test_libsvm_text_details(tmp_path):
    p = _write(tmp_path, "# header comment\n3,-1 1:0.5 4:2 # tail\n 2:1\n7\n\n", "t.svm")
    ds = D.load_libsvm(p)
    assert ds.label_names == ["-1", "3", "7"]
    np.testing.assert_array_equal(ds.Y, [[1, 1, 0], [0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(ds.X.toarray(), [[0.5, 0, 0, 2], [0, 1, 0, 0], [0, 0, 0, 0]])
    z = D.load_libsvm(_write(tmp_path, "1 0:1 2:3\n", "z.svm"))
    np.testing.assert_array_equal(z.X.toarray(), [[1, 0, 3]])


@pytest.mark.parametrize("text", ["0 0:0 1:1 2:1\n1 1:2\n", "0 1:0.5 4:0\n1 2:1 4:0\n",
                                  "1 0:0\n2 3:1\n", "1 3:0\n"])
def test_libsvm_explicit_zeros_count_like_any_index(tmp_path, text):
    """An index written with the value 0 counts for the index base ('0:0' makes a file
    zero-based), the width and the range, as scikit-learn's reader counts it."""
    from sklearn.datasets import load_svmlight_file
    p = _write(tmp_path, text, "z.svm")
    X = D.load_libsvm(p).X
    want = load_svmlight_file(p, multilabel=True, zero_based="auto")[0]
    assert X.shape == want.shape
    np.testing.assert_array_equal(X.toarray(), want.toarray())
    with pytest.raises(ValueError, match=rf"exceeds n_features={X.shape[1] - 1}"):
        D.load_libsvm(p, n_features=X.shape[1] - 1)
    if "0:0" in text:
        with pytest.raises(ValueError, match=r"feature index 0 in a one-based file"):
            D.load_libsvm(p, zero_based=False)


@pytest.mark.parametrize("text,line,words", [
    ("1 1:2\n1 2:x\n", 2, "finite number"),
    ("1 1:2\n1 3:1 2:1\n", 2, "increase"),
    ("1 1:2\n1 qid:3 1:1\n", 2, "index:value"),
    ("1, 1:2\n", 1, "empty label"),
    ("1,,2 1:2\n", 1, "integer labels"),
    ("a 1:2\n", 1, "integer labels"),
    ("1 1:2\n1 -1:2\n", 2, "index:value"),
    ("1 1:2 3\n", 1, "index:value"),
])
def test_bad_libsvm(tmp_path, text, line, words):
    p = _write(tmp_path, text, "b.svm")
    with pytest.raises(ValueError) as exc:
        D.load_libsvm(p)
    assert str(exc.value).startswith(f"{p}: line {line}:") and words in str(exc.value)
    with pytest.raises(ValueError, match="exceeds n_features=1"):
        D.load_libsvm(_write(tmp_path, "1 1:1 2:1\n", "c.svm"), n_features=1)
    with pytest.raises(ValueError, match="out of range for n_labels=2"):
        D.load_libsvm(_write(tmp_path, "2 1:1\n", "c.svm"), n_labels=2)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=60) | st.text(alphabet="0123456789:,. -#\n\te", max_size=60))
def test_fuzz_libsvm_never_crashes(tmp_path, raw):
    p = _write(tmp_path, raw.encode() if isinstance(raw, str) else raw, "f.svm", binary=True)
    try:
        ds = D.load_libsvm(p)
    except ValueError as exc:
        assert str(exc).startswith(str(p))
    else:
        assert ds.X.shape[0] == ds.Y.shape[0] >= 1


# ---- raw text ---------------------------------------------------------------------------------

def test_load_text_json_jsonl_csv_agree(tmp_path):
    recs = [{"text": "Cultivo de arroz", "labels": ["b", "a"]}, {"text": "banana", "labels": "c"},
            {"text": "nada", "labels": []}]
    j = _write(tmp_path, json.dumps(recs), "d.json")
    jl = _write(tmp_path, "\n".join(map(json.dumps, recs)) + "\n", "d.jsonl")
    c = _write(tmp_path, 'body,tags\n"Cultivo de arroz","b,a"\nbanana,c\nnada,\n', "d.csv")
    out = [D.load_text(j), D.load_text(jl), D.load_text(c, text_field="body", labels_field="tags")]
    for ds in out:
        assert ds.X is None and ds.texts == ["Cultivo de arroz", "banana", "nada"]
        assert ds.label_names == ["a", "b", "c"]
        np.testing.assert_array_equal(ds.Y, [[1, 1, 0], [0, 0, 1], [0, 0, 0]])
        assert ds.summary()["features"] is None


@pytest.mark.parametrize("name,text,words", [
    ("a.json", '[{"text": "x", "labels": ["a"]},', "line 1: malformed JSON"),
    ("a.jsonl", '{"text": "x", "labels": ["a"]}\n{"text": 1, "labels": []}\n', "line 2:"),
    ("a.jsonl", '{"text": "x", "labels": ["a"]}\n{"txt": "y"}\n', "line 2: expected an object"),
    ("a.json", '{"text": "x"}', "line 1: expected a JSON list"),
    ("a.csv", 'text,labels\nx,a\n', None),
    ("a.txt", 'x', "cannot tell the format"),
    # a quote left open would swallow the rest of the file into one document
    ("a.csv", 'text,labels\nzero,z\n"first,a\nsecond,b\n', "line 3: malformed CSV"),
    ("a.csv", 'text,labels\nfirst\nsecond,b\n', "line 2: a record of 1 field"),  # no labels
    ("a.csv", 'text,labels\nhello,a,b,c\n', "line 2: a record of 4 field"),  # labels unquoted
    ("a.jsonl", '{"text": "x", "labels": [true]}\n', "line 1: 'text' must be a string"),
    ("a.jsonl", '{"text": "x", "labels": [' + "1" * 5000 + ']}\n', "line 1: Exceeds the"),
    ("a.json", '[{"text": "x", "labels": [' + "1" * 5000 + ']}]', "a.json: Exceeds the"),
])
def test_bad_text_files(tmp_path, name, text, words):
    p = _write(tmp_path, text, name)
    if words is None:
        with pytest.raises(ValueError, match="expected an object with fields 'body'"):
            D.load_text(p, text_field="body")
        return
    with pytest.raises(ValueError, match=words):
        D.load_text(p)
    if name.endswith(".csv"):
        for sep in ("", None):
            with pytest.raises(ValueError, match="label_sep must be a non-empty string"):
                D.load_text(p, label_sep=sep)


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path):
    """JSON Lines records end at '\\n' alone: U+2028, U+2029 and U+0085 inside a JSON
    string are text, and the lines after them keep their numbers."""
    texts = ["first\u2028second", "a\u2029b", "c\x85d"]
    raw = "".join(json.dumps({"text": t, "labels": ["x"]}, ensure_ascii=False) + "\n"
                  for t in texts) + '{"text": 1, "labels": []}\n'
    p = _write(tmp_path, raw, "u.jsonl")
    with pytest.raises(ValueError, match="line 4:"):
        D.load_text(p)
    p = _write(tmp_path, raw.rsplit("{", 1)[0], "u.jsonl")
    assert D.load_text(p).texts == texts


def test_text_non_utf8_names_line(tmp_path):
    p = _write(tmp_path, b'{"text": "x", "labels": ["a"]}\n{"text": "\xe9", "labels": []}\n',
               "b.jsonl", binary=True)
    with pytest.raises(ValueError, match=r"b\.jsonl: line 2: not valid UTF-8"):
        D.load_text(p)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=80) | st.text(alphabet='{}[]",:textlabs \n\\é', max_size=80),
       st.sampled_from(["f.json", "f.jsonl", "f.csv"]))
def test_fuzz_text_loader_never_crashes(tmp_path, raw, name):
    p = _write(tmp_path, raw.encode() if isinstance(raw, str) else raw, name, binary=True)
    try:
        ds = D.load_text(p)
    except ValueError as exc:
        assert str(exc).startswith(str(p))
    else:
        assert len(ds.texts) == ds.Y.shape[0] >= 1


@pytest.mark.shared_data
def test_reuters_json(shared_data):
    path = shared_data / "reuters" / "reuters21578-modapte-test.json"
    ds = D.load(str(path))
    assert len(ds.texts) == 3019 and ds.Y.shape == (3019, 90)
    with open(path) as f:
        recs = json.load(f)
    assert ds.texts[17] == recs[17]["text"]
    assert [ds.label_names[j] for j in np.flatnonzero(ds.Y[17])] == sorted(recs[17]["labels"])


# ---- load / list / Dataset --------------------------------------------------------------------

def test_load_dispatch_and_errors(tmp_path):
    p = _write(tmp_path, "1 1:2\n", "x.libsvm")
    assert D.load(p).X.shape == (1, 1)
    assert D.load(str(p), n_labels=3).Y.shape == (1, 3)
    with pytest.raises(ValueError, match=r"unknown data set 'nope'; embedded: 'yeast'"):
        D.load("nope")
    with pytest.raises(FileNotFoundError):
        D.load(tmp_path / "missing.arff")
    with pytest.raises(TypeError, match="takes no options"):
        D.load("yeast", labels=3)


def test_dataset_summary_take_and_validation():
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 2], [3, 0], [0, 0]]))
    Y = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.uint8)
    ds = D.Dataset(X, Y, name="t")
    s = ds.summary()
    assert s == {"name": "t", "documents": 4, "features": 2, "labels": 3, "cardinality": 5 / 4,
                 "density": 5 / 12, "distinct_label_sets": 3, "label_frequency_min": 1,
                 "label_frequency_max": 3}
    assert "4 documents, 2 features, 3 labels" in repr(ds)
    sub = ds.take([3, 0])
    np.testing.assert_array_equal(sub.Y, Y[[3, 0]])
    np.testing.assert_array_equal(sub.X.toarray(), X.toarray()[[3, 0]])
    t = D.Dataset(None, Y, texts=["a", "b", "c", "d"]).take([1])
    assert t.texts == ["b"] and t.X is None
    with pytest.raises(ValueError, match="X has 4 documents but Y has 3"):
        D.Dataset(X, Y[:3])
    with pytest.raises(ValueError, match="binary"):
        D.Dataset(X, Y * 2)
    with pytest.raises(ValueError, match="needs X"):
        D.Dataset(None, Y)
    with pytest.raises(ValueError, match="2 label names for 3 labels"):
        D.Dataset(X, Y, label_names=["a", "b"])
    with pytest.raises(ValueError, match="NaN"):
        D.Dataset(sp.csr_matrix([[np.nan], [1], [0], [0]]), Y)
    # explicit zeros and duplicates are canonicalised on a copy, not in the caller's matrix
    raw = sp.csr_matrix((np.array([0.0, 1.0, 2.0]), np.array([0, 1, 1]), np.array([0, 3, 3, 3, 3])),
                        shape=(4, 2))
    clean = D.Dataset(raw, Y).X
    np.testing.assert_array_equal(clean.toarray(), [[0, 3], [0, 0], [0, 0], [0, 0]])
    assert clean.nnz == 1 and raw.nnz == 3


def test_take_boolean_mask_and_bad_indices():
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 2], [3, 0], [0, 4]]))
    Y = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=np.uint8)
    ds = D.Dataset(X, Y, texts=["a", "b", "c", "d"])
    for mask in ([True, False, False, True], np.array([1, 0, 0, 1], dtype=bool)):
        sub = ds.take(mask)  # a mask selects, it is not read as positions 1, 0, 0, 1
        np.testing.assert_array_equal(sub.Y, Y[[0, 3]])
        np.testing.assert_array_equal(sub.X.toarray(), X.toarray()[[0, 3]])
        assert sub.texts == ["a", "d"]
    for idx in ([3, 0], np.array([3, 0], dtype=np.uint64), (-1, 0)):
        sub = ds.take(idx)
        np.testing.assert_array_equal(sub.Y, Y[[3, 0]])
        assert sub.texts == ["d", "a"]
    with pytest.raises(TypeError, match="integers or a boolean mask.*float"):
        ds.take([1.7, 0.0])  # no silent truncation to 1, 0
    with pytest.raises(TypeError, match="integers or a boolean mask"):
        ds.take(["1"])
    with pytest.raises(ValueError, match="boolean mask has length 3, expected n_documents=4"):
        ds.take([True, False, True])
    with pytest.raises(IndexError, match="index 4 is out of range for 4 documents"):
        ds.take([0, 4])
    with pytest.raises(IndexError, match="index -5 is out of range"):
        ds.take([-5])
    with pytest.raises(ValueError, match="1-D"):
        ds.take([[0, 1]])


# ---- synthetic ----------------------------------------------------------------------------------

def test_make_multilabel_properties():
    ds = D.make_multilabel(4000, 30, 3000, cardinality=3.0, doc_length=40, tie_density=0.2,
                           random_state=7)
    assert ds.name == "synthetic" and "synthetic" in ds.info["source"]
    assert ds.X.shape == (4000, 3000) and ds.Y.shape == (4000, 30)
    k = ds.Y.sum(axis=1)
    assert k.min() >= 1 and k.mean() == pytest.approx(3.0, abs=0.15)
    norms = np.sqrt(ds.X.multiply(ds.X).sum(axis=1)).A1
    assert np.allclose(norms[norms > 0], 1.0)
    # duplicates: 20% of the documents copy another one (features and labels)
    rows = {(tuple(ds.X.indices[ds.X.indptr[i]:ds.X.indptr[i + 1]]),
             ds.X.data[ds.X.indptr[i]:ds.X.indptr[i + 1]].tobytes(), ds.Y[i].tobytes())
            for i in range(4000)}
    assert 4000 - len(rows) == pytest.approx(800, abs=10)
    # label skew: the most frequent label is much more frequent than the rarest
    freq = np.sort(ds.Y.sum(axis=0))
    assert freq[-1] > 5 * freq[0]
    again = D.make_multilabel(4000, 30, 3000, cardinality=3.0, doc_length=40, tie_density=0.2,
                              random_state=7)
    assert (again.X != ds.X).nnz == 0 and np.array_equal(again.Y, ds.Y)
    flat = D.make_multilabel(3000, 10, 500, label_skew=0.0, random_state=1)
    assert flat.Y.sum(axis=0).min() > 0.6 * flat.Y.sum(axis=0).max()


@pytest.mark.parametrize("kwargs,words", [
    ({"n_documents": 0}, "n_documents must be an integer from 1"),
    ({"n_features": 2**63}, "n_features must be an integer from 1 to 2147483647"),
    ({"n_labels": 2**63}, "n_labels must be an integer from 1 to 2147483647"),
    ({"n_documents": 2**64}, "n_documents must be an integer"),
    ({"doc_length": 2**63}, "doc_length must be an integer"),
    ({"topic_size": 2**63}, "topic_size must be an integer"),
    ({"n_labels": 2**31 - 1}, r"n_documents x n_labels: a 1000 x 2147483647 indicator"),
    ({"cardinality": 0.5}, "cardinality must be in"),
    ({"tie_density": 1.0}, "tie_density must be in"),
    ({"background": 1.5}, "background must be in"),
    ({"label_skew": -1}, "label_skew"),
    ({"label_skew": float("nan")}, "label_skew must be a finite number"),
    ({"label_skew": float("inf")}, "label_skew must be a finite number"),
    ({"cardinality": float("nan")}, "cardinality must be in"),
    ({"background": float("nan")}, "background must be in"),
])
def test_make_multilabel_bad_parameters(kwargs, words):
    with pytest.raises(ValueError, match=words):
        D.make_multilabel(**kwargs)


def test_wheel_data_declared():
    # setup.py ships fastrank/data/* as package data: the data file must sit there
    import fastrank
    assert os.path.isfile(os.path.join(os.path.dirname(fastrank.__file__), "data", "yeast.z32.xz"))


# ---- hostile files: errors, never crashes or huge allocations ------------------------------

def _hostile_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize("token", ["0x1p3", "0X1.8P1", "\v1", "\f1", "inf", "nan", "1e999",
                                   "1e", "1e+", ".", "-", "1.2.3", "1_0", "１"])
def test_numbers_are_decimal_only(tmp_path, token):
    """strtod would accept hexadecimal floats and leading white space; the parsers do not."""
    svm = _hostile_file(tmp_path, "a.svm", f"0 1:{token}\n")
    with pytest.raises(ValueError, match=r"line 1: expected a finite number"):
        D.load_libsvm(svm)
    arff = _hostile_file(tmp_path, "a.arff", "@relation r\n@attribute f numeric\n"
                  f"@attribute l {{0,1}}\n@data\n{token},1\n")
    with pytest.raises(ValueError, match=r"line 5: (expected a finite number|empty value)"):
        D.load_arff(arff, labels=1)


@pytest.mark.parametrize("token, value", [
    ("1e5", 1e5), ("-2.5E-3", -2.5e-3), ("+.5", 0.5), ("5.", 5.0),
    ("12345678901234567890", 1.2345678901234567e19), ("0.1000000000000000055511151231257827", 0.1)])
def test_decimal_numbers_still_parse(tmp_path, token, value):
    svm = _hostile_file(tmp_path, "a.svm", f"0 1:{token}\n")
    assert D.load_libsvm(svm).X.toarray().tolist() == [[value]]


@pytest.mark.parametrize("label", ["2147483648", "1152921504606846976", "-2147483648",
                                   "99999999999999999999999"])
def test_libsvm_labels_beyond_int32_are_refused(tmp_path, label):
    path = _hostile_file(tmp_path, "a.svm", f"{label} 1:1\n")
    with pytest.raises(ValueError, match=rf"line 1: label '{label}' out of range"):
        D.load_libsvm(path)


def test_libsvm_labels_that_used_to_collide(tmp_path):
    """2**60 and 2**60 + 1 saturated to one column; now both are refused, and the largest
    accepted labels stay distinct."""
    path = _hostile_file(tmp_path, "a.svm", "1152921504606846976 1:1\n1152921504606846977 1:2\n")
    with pytest.raises(ValueError, match="out of range"):
        D.load_libsvm(path)
    path = _hostile_file(tmp_path, "b.svm", "2147483647 1:1\n2147483646,-2147483647 1:2\n")
    ds = D.load_libsvm(path)
    assert ds.label_names == ["-2147483647", "2147483646", "2147483647"]
    assert ds.Y.tolist() == [[0, 0, 1], [1, 1, 0]]


def test_libsvm_feature_index_near_2_31_costs_nothing(tmp_path):
    """A one-line file naming feature 2**31 - 1 loads as a wide CSR matrix; the default
    feature names are not built until read."""
    path = _hostile_file(tmp_path, "a.svm", "0 2147483647:1\n")
    ds = D.load_libsvm(path)
    assert ds.X.shape == (1, 2**31 - 1) and ds.X[0, 2**31 - 2] == 1.0
    assert ds._feature_names is None
    assert ds.take([0])._feature_names is None
    assert ds.feature_names == D.DefaultNames(2**31 - 1) and ds.feature_names[:1] == ["f0"]
    with pytest.raises(ValueError, match=r"feature index 2147483648 too large"):
        D.load_libsvm(_hostile_file(tmp_path, "b.svm", "0 2147483648:1\n"))
    with pytest.raises(ValueError, match=r"feature index 2147483647 too large"):
        D.load_libsvm(_hostile_file(tmp_path, "c.svm", "0 2147483647:1\n"), zero_based=True)
    small = D.load_libsvm(_hostile_file(tmp_path, "d.svm", "0 3:1\n"))
    assert small.feature_names == ["f0", "f1", "f2"]


def test_default_feature_names_behave_as_the_list_of_names():
    """DefaultNames against the plain list it stands for: every index and slice, equality
    both ways, membership, iteration; a slice of a wide data set's names is cheap (the
    2**31 - 1 case runs memory-capped in test_amplification.py)."""
    names, ref = D.DefaultNames(13), [f"f{j}" for j in range(13)]
    assert len(names) == 13 and list(names) == ref and names == ref and ref == names
    assert names == tuple(ref) and names != ref[:-1] and names != ["g0"] * 13
    assert names == D.DefaultNames(13) and names != D.DefaultNames(13, "t")
    for j in range(-13, 13):
        assert names[j] == ref[j] and names[np.int64(j)] == ref[j]
    for start in (None, -20, -3, 0, 4, 13, 20):
        for stop in (None, -20, -3, 0, 4, 13, 20):
            for step in (None, 1, 2, -1, -3):
                assert names[start:stop:step] == ref[start:stop:step]
    for bad in (13, -14):
        with pytest.raises(IndexError, match="out of range for 13 names"):
            names[bad]
    with pytest.raises(TypeError):
        names[1.0]
    assert all(n in names for n in ref)
    assert not any(n in names for n in ("f13", "f-1", "f01", "f", "g1", "f1 ", "f١", 1, None))
    assert repr(names) == "DefaultNames(['f0', 'f1', ..., 'f12'])"
    wide = D.DefaultNames(2**31 - 1)
    assert wide[:2] == ["f0", "f1"] and wide[-1] == "f2147483646" and "f2147483646" in wide


@pytest.mark.parametrize("header, message", [
    ("n_features=5 n_labels=999999999999", r"line 1: header n_labels must be <= 2147483647"),
    ("n_features=999999999999 n_labels=2", r"line 1: header n_features must be <= 2147483647"),
    ("n_features=5 n_labels=10000000", r"1 documents x 10000000 labels would need 6\d\d\.\d MiB, "
                                       r"more than a \d+-byte file may claim \(256\.0 MiB\)"),
])
def test_libsvm_header_claims_are_bounded(tmp_path, header, message):
    path = _hostile_file(tmp_path, "a.svm", f"# fastrank {header}\n0 1:1\n")
    with pytest.raises(ValueError, match=message):
        D.load_libsvm(path)


def test_libsvm_parameters_are_bounded(tmp_path):
    path = _hostile_file(tmp_path, "a.svm", "0 1:1\n")
    with pytest.raises(ValueError, match=r"n_labels must be <= 2147483647"):
        D.load_libsvm(path, n_labels=2**63)
    with pytest.raises(ValueError, match=r"n_features must be <= 2147483647"):
        D.load_libsvm(path, n_features=2**40)
    with pytest.raises(TypeError, match=r"n_labels must be an integer"):
        D.load_libsvm(path, n_labels=1.5)
    with pytest.raises(ValueError, match=r"would need .* MiB, more than"):
        D.load_libsvm(path, n_labels=10**7)


def test_label_bound_follows_the_file_size(tmp_path, monkeypatch):
    """The labels may take LABEL_MATRIX_FACTOR times the file's size (or the floor)."""
    monkeypatch.setattr(D._base, "LABEL_MATRIX_FLOOR", 0)
    records = [{"text": "w", "labels": [f"l{i}"]} for i in range(40)]
    path = _hostile_file(tmp_path, "a.json", json.dumps(records))
    size = os.path.getsize(path)  # 40 documents, 40 labels: (40 + 64) * 40 bytes
    monkeypatch.setattr(D._base, "LABEL_MATRIX_FACTOR", 104 * 40 / size * (1 + 1e-9))
    assert D.load_text(path).Y.shape == (40, 40)
    monkeypatch.setattr(D._base, "LABEL_MATRIX_FACTOR", (104 * 40 - 1) / size)
    with pytest.raises(ValueError, match=r"40 documents x 40 labels would need"):
        D.load_text(path)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_deeply_nested_json_is_a_value_error(tmp_path, fmt):
    path = _hostile_file(tmp_path, f"a.{fmt}", "[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="JSON nested too deeply"):
        D.load_text(path)


def test_save_libsvm_needs_a_dataset(tmp_path):
    for bad in (None, {"X": 1}, np.zeros((2, 2))):
        with pytest.raises(TypeError, match="dataset must be a fastrank.datasets.Dataset"):
            D.save_libsvm(bad, tmp_path / "a.svm")
    assert not (tmp_path / "a.svm").exists()


def test_dataset_refuses_complex_and_malformed_features():
    Y = np.array([[1], [0]], dtype=np.uint8)
    with pytest.raises(TypeError, match="real numeric values, got dtype complex"):
        D.Dataset(np.ones((2, 2)) + 1j, Y)
    with pytest.raises(TypeError, match="real numeric values, got dtype complex"):
        D.Dataset(sp.csr_matrix(np.ones((2, 2)) + 1j), Y)
    X = sp.csr_matrix(np.ones((2, 2)))
    X.indices = np.array([0, 1, 0, 2], dtype=X.indices.dtype)
    with pytest.raises(ValueError, match=r"X: column index 2 out of range"):
        D.Dataset(X, Y)
    ds = D.Dataset(np.eye(2), Y)
    ds.feature_names = ["a", "b"]
    assert ds.feature_names == ["a", "b"] and ds.take([1]).feature_names == ["a", "b"]


def _bad_csr():
    X = sp.csr_matrix(np.ones((2, 2)))
    X.indptr = np.array([0, 3, 2], dtype=X.indptr.dtype)
    return X


@pytest.mark.parametrize("X", [
    np.ones(2), np.ones((2, 2, 1)), np.ones((2, 0)), np.array([[1.0, np.inf], [0, 1]]),
    np.array([[1.0, np.nan], [0, 1]], dtype=np.float32), sp.csr_matrix([[np.nan], [1.0]]),
    sp.csr_matrix((2, 0)), np.array([["a", "b"], ["c", "d"]]), np.ones((2, 2)) + 1j,
    _bad_csr(),
], ids=["1-D", "3-D", "no feature", "inf", "NaN float32", "NaN sparse", "no sparse feature",
        "strings", "complex", "malformed CSR"])
def test_dataset_checks_features_as_every_estimator(X):
    """Dataset's X is refused exactly as an estimator's features are: the same function
    (check_features) raises the same error."""
    from fastrank._validation import check_features
    with pytest.raises((ValueError, TypeError)) as expected:
        check_features(X, "X")
    with pytest.raises(expected.type, match=f"^{re.escape(str(expected.value))}$"):
        D.Dataset(X, np.eye(2, dtype=np.uint8))


@pytest.mark.parametrize("X", [
    np.array([[0, 2], [1, 0]], dtype=np.int16), np.array([[0.5, 0], [0, 1]], np.float32),
    sp.csr_matrix(np.array([[0, 2.0], [1, 0]], np.float32)),
    sp.csr_array((np.array([0.0, 2, 1]), np.array([0, 1, 0]), np.array([0, 2, 3])),
                 shape=(2, 2)),
    sp.coo_matrix((np.array([1, 1, 0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))),
                  shape=(2, 2)),
])
def test_dataset_features_are_canonical_float64_csr_and_the_callers_are_kept(X):
    before = X.copy()
    ds = D.Dataset(X, np.eye(2, dtype=np.uint8))
    dense = X.toarray() if sp.issparse(X) else X
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float64 and ds.X.has_canonical_format
    assert ds.X.data.all()  # explicit zeros dropped
    np.testing.assert_array_equal(ds.X.toarray(), dense.astype(np.float64))
    if sp.issparse(X):
        assert X.format == before.format and (X != before).nnz == 0
        assert X.nnz == before.nnz  # the caller's explicit zeros stay
    else:
        np.testing.assert_array_equal(X, before)
