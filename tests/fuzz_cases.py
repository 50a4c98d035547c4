"""Seeded fuzz cases for tests/test_fuzz.py, run in a child process so that a crash (a
segfault, an abort) fails a test with the seed of the case instead of killing pytest.

    python tests/fuzz_cases.py KIND FIRST COUNT

runs the cases FIRST .. FIRST + COUNT - 1 of KIND (see ``KINDS``), printing ``case SEED``
before each one; it exits 0 when every case passed, 1 after printing ``FAIL SEED: ...`` for
the first case that did not. A case passes when every call either returns a result equal
to the result on an independently rebuilt input, or raises ValueError/TypeError (for
malformed input: must raise); any other exception -- MemoryError, OverflowError,
AttributeError, KeyError, RecursionError -- is a failure. The child runs with its address
space limited (``FUZZ_MEMORY_LIMIT``), so an input that makes a function try to allocate
gigabytes fails the case instead of swapping the machine.

Replay one case: ``python tests/fuzz_cases.py csr 1234 1``.
"""
import io
import os
import resource
import sys
import tempfile
import traceback
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import scipy.sparse as sp

MEMORY_LIMIT = 3 * 2**30  # bytes of address space for the child (FUZZ_MEMORY_LIMIT)

EXPECTED = (ValueError, TypeError)


class CaseFailure(AssertionError):
    pass


# ---- an independent reading of a (possibly malformed) sparse matrix ------------------------

def _int_array(a):
    a = np.asarray(a)
    if a.ndim != 1 or a.dtype == bool or a.dtype.kind not in "iu":
        return None
    return [int(v) for v in a]


def _real_data(a, ndim=1):
    a = np.asarray(a)
    if a.ndim != ndim or a.dtype.kind not in "biuf":
        return None
    return a.astype(np.float64)


def reference_dense(m):
    """The dense matrix a sparse matrix stands for, by plain Python loops over its arrays,
    or None when its structure is invalid (duplicates are summed, as SciPy does)."""
    n, k = m.shape
    out = np.zeros((n, k))
    if m.format not in ("csr", "csc", "bsr", "coo"):  # never corrupted by mutate_sparse
        return m.toarray().astype(np.float64)
    if m.format in ("csr", "csc", "bsr"):
        r, c = m.blocksize if m.format == "bsr" else (1, 1)
        major, minor = (n // r, k // c) if m.format != "csc" else (k, n)
        ptr, ind = _int_array(m.indptr), _int_array(m.indices)
        data = _real_data(m.data, 3 if m.format == "bsr" else 1)
        if ptr is None or ind is None or data is None or len(ptr) != major + 1 \
                or ptr[0] != 0 or ptr[-1] != len(ind) or len(ind) != data.shape[0] \
                or any(a > b for a, b in zip(ptr, ptr[1:])) \
                or any(not 0 <= j < minor for j in ind):
            return None
        if m.format == "bsr" and data.shape[1:] != (r, c):
            return None
        for i in range(major):
            for p in range(ptr[i], ptr[i + 1]):
                if m.format == "csr":
                    out[i, ind[p]] += data[p]
                elif m.format == "csc":
                    out[ind[p], i] += data[p]
                else:
                    out[i * r:(i + 1) * r, ind[p] * c:(ind[p] + 1) * c] += data[p]
        return out
    row, col, data = _int_array(m.row), _int_array(m.col), _real_data(m.data)
    if row is None or col is None or data is None or not len(row) == len(col) == data.size \
            or any(not 0 <= i < n for i in row) or any(not 0 <= j < k for j in col):
        return None
    for i, j, v in zip(row, col, data):
        out[i, j] += v
    return out


# ---- random malformed sparse matrices ------------------------------------------------------

_ODD_DTYPES = (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.int64, np.uint64,
               np.float64, bool, np.dtype(">i4"), np.dtype(">i8"))


def random_sparse(rng, n=None, k=None, values=None):
    """A valid random sparse matrix with tied values (several formats), and its dense form."""
    n = int(rng.integers(1, 7)) if n is None else n
    k = int(rng.integers(1, 9)) if k is None else k
    dense = rng.choice(values or (0.0, 0.0, 0.5, 1.0, -1.0, 2.5), size=(n, k))
    fmt = rng.choice(["csr", "csr", "csr_array", "csc", "coo", "bsr", "lil"])
    if fmt == "csr_array":
        return sp.csr_array(dense), dense
    return sp.csr_matrix(dense).asformat(str(fmt)), dense


def _mutate_array(rng, a, limit):
    """A corrupted copy of an index array (values in int64, then maybe another dtype)."""
    a = np.array(a, dtype=np.int64).ravel()
    choice = rng.integers(0, 8)
    if choice == 0 and a.size:  # one entry out of range or negative
        a[rng.integers(0, a.size)] = rng.choice([-1, limit, limit + 7, 2**31 - 1, -2**31, 2**40])
    elif choice == 1 and a.size:  # one entry moved by a small amount
        a[rng.integers(0, a.size)] += rng.choice([-2, -1, 1, 2])
    elif choice == 2 and a.size >= 2:  # two entries swapped
        i, j = rng.choice(a.size, 2, replace=False)
        a[i], a[j] = a[j], a[i]
    elif choice == 3:  # truncated
        a = a[:max(0, a.size - int(rng.integers(1, 3)))]
    elif choice == 4:  # extended
        a = np.concatenate([a, a[-1:] if a.size else np.zeros(1, a.dtype)])
    elif choice == 5:
        return a.reshape(1, -1)
    if rng.random() < 0.4:  # another dtype (values may wrap)
        a = a.astype(_ODD_DTYPES[rng.integers(0, len(_ODD_DTYPES))])
    return a


@np.errstate(all="ignore")
def mutate_sparse(rng, m):
    """Corrupt 0-2 of the arrays of ``m`` in place (as a user assigning attributes would)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return _mutate_sparse(rng, m)


def _mutate_sparse(rng, m):
    for _ in range(int(rng.integers(0, 3))):
        if m.format in ("csr", "csc", "bsr"):
            attr = rng.choice(["indptr", "indices", "indices", "data"])
        elif m.format == "coo":
            attr = rng.choice(["row", "col", "data"])
        else:
            return m
        a = getattr(m, attr)
        if attr == "data":
            kind = rng.integers(0, 6)
            try:
                if kind == 0:
                    a = a.astype(np.complex128) + 1j
                elif kind == 1 and a.size:
                    a = a.astype(np.float64)
                    a.ravel()[rng.integers(0, a.size)] = rng.choice([np.nan, np.inf])
                elif kind == 2:
                    a = a[:-1]
                elif kind == 3:
                    a = a.astype(object)
                else:
                    a = a.astype(_ODD_DTYPES[rng.integers(0, len(_ODD_DTYPES))])
            except (OverflowError, TypeError, ValueError):
                pass  # this conversion of these values is impossible: leave them
        else:
            limit = m.shape[1] if attr in ("indices", "col") else m.shape[0]
            a = _mutate_array(rng, a, limit)
        setattr(m, attr, a)
    return m


def snapshot(m):
    names = ("data", "indices", "indptr") if m.format in ("csr", "csc", "bsr") \
        else ("data", "row", "col") if m.format == "coo" else ()
    return [(np.array(getattr(m, a), copy=True)) for a in names], m.shape


def unchanged(m, snap):
    arrays, shape = snap
    now, _ = snapshot(m)
    return shape == m.shape and all(
        a.dtype == b.dtype and a.shape == b.shape and
        (a.tolist() == b.tolist() if a.dtype == object  # the same objects, NaN included
         else np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        for a, b in zip(arrays, now))


# ---- comparing results -----------------------------------------------------------------------

def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or sp.issparse(a):
        a = a.toarray() if sp.issparse(a) else np.asarray(a)
        b = b.toarray() if sp.issparse(b) else np.asarray(b)
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[x], b[x]) for x in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__"):
        return all(same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, float):
        return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= 1e-12 * max(1.0, abs(a))
    return a == b


def call(f, *args, **kwargs):
    """(result, None) or (None, exception) for an expected error; else CaseFailure."""
    try:
        return f(*args, **kwargs), None
    except EXPECTED as exc:
        return None, exc
    except Exception as exc:
        raise CaseFailure(f"{getattr(f, '__name__', f)!s} raised {type(exc).__name__}: "
                          f"{exc}") from exc


def _rounds(m):
    """True when a value of the sparse matrix m's data (a 64-bit integer or long double
    type) has no exact float64 (compared exactly, as Python ints and long doubles)."""
    data = np.asarray(getattr(m, "data", np.zeros(0)))
    if data.dtype.kind in "iu":
        return any(float(v) != v for v in data.ravel().tolist())
    if data.dtype.kind == "f" and data.dtype.itemsize > 8:
        return any(np.float64(v) != v for v in data.ravel())
    return False


def check_against_reference(name, f, bad, ref, rebuild=None):
    """f(bad) must raise ValueError/TypeError if the structure is invalid (ref is None),
    and otherwise behave exactly as f on the reference (same result or same error type);
    ``rebuild`` turns the dense reference into the input given to f (default: itself)."""
    snap = snapshot(bad)
    got, err = call(f, bad)
    if not unchanged(bad, snap):
        raise CaseFailure(f"{name} modified the caller's matrix")
    if ref is None:
        if err is None:
            raise CaseFailure(f"{name} accepted a malformed sparse matrix")
        return
    want, want_err = call(f, ref if rebuild is None else rebuild(ref))
    if want_err is None and "float64 cannot hold exactly" in str(err) and _rounds(bad):
        return  # refused as beliefs that would tie: the float64 reference lost those bits
    if type(err) is not type(want_err):
        raise CaseFailure(f"{name}: {err!r} on the sparse input, {want_err!r} on its dense "
                          f"form {ref.tolist()}")
    if err is None and not same(got, want):
        raise CaseFailure(f"{name}: sparse and dense inputs give different results: {got!r} "
                          f"and {want!r} for {ref.tolist()}")


# ---- case kinds ------------------------------------------------------------------------------

def _scores_targets(Y):
    import fastrank
    from fastrank import metrics as M
    from fastrank.calibration import brier_score
    from fastrank.text import tfidf_from_counts
    q = Y.shape[1]
    return {
        "rank(modified)": lambda S: fastrank.rank(S, "modified"),
        "rank(fractional)": lambda S: fastrank.rank(S, "fractional"),
        "rank(ordinal)": lambda S: fastrank.rank(S, "ordinal", random_state=1),
        "tie_groups": fastrank.tie_groups,
        "evaluate": lambda S: M.evaluate(Y, S, ties=("modified", "ordinal")).to_dict(),
        "coverage": lambda S: M.coverage(Y, S),
        "average_precision": lambda S: M.average_precision(Y, S, ties="standard"),
        "cutoff(top_k)": lambda S: M.cutoff(S, top_k=int(q // 2)),
        "cutoff(threshold)": lambda S: M.cutoff(S, threshold=0.7),
        "auc": lambda S: M.auc(Y, S, average="micro"),
        "tfidf_from_counts": tfidf_from_counts,
        "truth:hamming_loss": lambda T: M.hamming_loss(T, Y),
        "truth:evaluate": lambda T: M.evaluate(T, Y * 0.5 + 0.25, ties=("dense",)).to_dict(),
        "truth:brier_score": lambda T: brier_score(T, np.full(Y.shape, 0.5)),
    }


def case_csr(seed):
    """Random malformed sparse matrices into every public function taking sparse beliefs,
    truth or counts (not the estimators: ``csr_estimators``)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 7)), int(rng.integers(1, 9))
    Y = (rng.random((n, k)) < 0.4).astype(np.uint8)
    targets = _scores_targets(Y)
    name = str(rng.choice(sorted(targets)))
    truth = name.startswith("truth:") and rng.random() < 0.8
    m, _ = random_sparse(rng, n, k, values=(0.0, 1.0) if truth else None)
    bad = mutate_sparse(rng, m)
    check_against_reference(name, targets[name], bad, reference_dense(bad))


def case_csr_estimators(seed):
    """Malformed sparse features into the estimators and topk_cosine, compared with a
    clean CSR matrix of the same values (dense and sparse cosines may differ in the last
    bit, which can reorder tied neighbours)."""
    import fastrank
    from fastrank.datasets import Dataset
    rng = np.random.default_rng(seed)
    m, _ = random_sparse(rng, n=int(rng.integers(2, 7)))
    bad = mutate_sparse(rng, m)
    ref = reference_dense(bad)
    Y = (rng.random((bad.shape[0], 3)) < 0.5).astype(np.uint8)
    Y[0] = 1
    targets = {
        "topk_cosine": lambda X: fastrank.topk_cosine(X, X, 1),
        "KNN": lambda X: fastrank.KNN(k=1).fit(X, Y).decision_function(X),
        "MLkNN": lambda X: fastrank.MLkNN(k=1).fit(X, Y).predict(X),
        "VGRAM": lambda X: fastrank.VGRAM(n_neurons=4, n_synapses=3, tie_policy="all",
                                          random_state=0).fit(X, Y).decision_function(X),
        "Dataset": lambda X: Dataset(X, Y).X,
    }
    name = str(rng.choice(sorted(targets)))
    check_against_reference(name, targets[name], bad, ref, rebuild=sp.csr_matrix)


# -- file parsers: seeded mutations of valid files --

_TOKENS = [b"{", b"}", b",", b"'", b'"', b"\\", b"?", b"%", b"#", b":", b" ", b"\t", b"\n",
           b"\r\n", b"\x00", b"\xff", b"0x1p3", b"1e999", b"-0", b"nan", b"inf", b"1e-400",
           b"99999999999999999999", b"2147483647", b"2147483648", b"4294967296",
           b"1152921504606846976", b"-9223372036854775808", b"@data", b"@attribute",
           b"{0,1}", b"numeric", b"[", b"]", b"[" * 3000, b"{\"a\":", b"\xc3\xa9", b"1.5",
           b"0", b"1", b"-1", b"+1", b".5", b"5.", b"1e5", b"# fastrank n_features=99999999999 "
           b"n_labels=3\n", b"# fastrank n_features=3 n_labels=2147483647\n"]


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(int(rng.integers(0, 4))):  # 0: the valid file itself
        op = rng.integers(0, 6)
        pos = int(rng.integers(0, len(data) + 1))
        if op == 0 and data:  # flip a byte
            data[min(pos, len(data) - 1)] = int(rng.integers(0, 256))
        elif op in (1, 2):  # insert a token
            data[pos:pos] = _TOKENS[rng.integers(0, len(_TOKENS))]
        elif op == 3:  # delete a span
            del data[pos:pos + int(rng.integers(1, 8))]
        elif op == 4:  # truncate
            del data[pos:]
        else:  # duplicate a line
            lines = bytes(data).split(b"\n")
            j = int(rng.integers(0, len(lines)))
            lines.insert(j, lines[j])
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _arff_file(rng):
    n_feat, n_lab = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    head = [b"@relation 'r -C -%d'" % n_lab]
    kinds = []
    for a in range(n_feat):
        kind = rng.integers(0, 2)
        kinds.append(kind)
        head.append(b"@attribute f%d %s" % (a, b"numeric" if kind == 0 else b"{a,'b c',d}"))
    for j in range(n_lab):
        head.append(b"@attribute l%d {0,1}" % j)
    rows = []
    for _ in range(int(rng.integers(1, 5))):
        vals = [b"%g" % rng.choice([0, 1.5, -2, 3e-5]) if k == 0 else
                rng.choice([b"a", b"'b c'", b"d"]) for k in kinds]
        vals += [b"01"[rng.integers(0, 2):][:1] for _ in range(n_lab)]
        if rng.random() < 0.5:
            rows.append(b",".join(vals))
        else:
            rows.append(b"{" + b",".join(b"%d %s" % (a, v) for a, v in enumerate(vals)
                                         if v not in (b"0",)) + b"}")
    return b"\n".join(head + [b"@data"] + rows) + b"\n"


def _libsvm_file(rng):
    n_feat, n_lab = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    lines = [b"# fastrank n_features=%d n_labels=%d zero_based=0" % (n_feat, n_lab)] \
        if rng.random() < 0.5 else []
    for _ in range(int(rng.integers(1, 5))):
        labels = b",".join(b"%d" % j for j in range(n_lab) if rng.random() < 0.5)
        feats = b" ".join(b"%d:%g" % (j + 1, rng.choice([1, -0.5, 2e3]))
                          for j in range(n_feat) if rng.random() < 0.6)
        lines.append(labels + b" " + feats)
    return b"\n".join(lines) + b"\n"


def _text_file(rng, fmt):
    recs = [("doc %d words" % i, ["a", "b", "c"][:int(rng.integers(0, 4))] or ["a"])
            for i in range(int(rng.integers(1, 4)))]
    if fmt == "csv":
        return ("text,labels\n" + "".join(f'"{t}","{",".join(ls)}"\n' for t, ls in recs)).encode()
    import json
    objs = [{"text": t, "labels": ls} for t, ls in recs]
    if fmt == "jsonl":
        return "\n".join(json.dumps(o) for o in objs).encode()
    return json.dumps(objs).encode()


def _check_dataset(ds):
    """Invariants of every loaded Dataset (independent of the loader)."""
    X, Y = ds.X, ds.Y
    assert Y.dtype == np.uint8 and Y.ndim == 2 and Y.flags.c_contiguous and Y.max(initial=0) <= 1
    assert len(ds.label_names) == Y.shape[1]
    if X is not None:
        assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.shape[0] == Y.shape[0]
        assert reference_dense(X) is not None and X.has_canonical_format
        assert np.isfinite(X.data).all() and X.data.all()
        assert X.shape[1] < 2**31


def case_parsers(seed):
    """Mutated ARFF, libsvm, JSON, JSON Lines and CSV files into the loaders; a libsvm file
    that loads must survive save_libsvm/load_libsvm unchanged."""
    from fastrank import datasets
    rng = np.random.default_rng(seed)
    fmt = str(rng.choice(["arff", "libsvm", "json", "jsonl", "csv"]))
    data = _arff_file(rng) if fmt == "arff" else _libsvm_file(rng) if fmt == "libsvm" \
        else _text_file(rng, fmt)
    data = mutate_bytes(rng, data)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f." + {"libsvm": "svm"}.get(fmt, fmt))
        with open(path, "wb") as f:
            f.write(data)
        loader = {"arff": datasets.load_arff, "libsvm": datasets.load_libsvm}.get(
            fmt, datasets.load_text)
        ds, err = call(loader, path)
        if ds is None:
            return
        try:
            _check_dataset(ds)
        except AssertionError as exc:
            raise CaseFailure(f"{fmt}: loaded an inconsistent Dataset ({exc})") from None
        if fmt == "libsvm":
            out = os.path.join(tmp, "g.svm")
            datasets.save_libsvm(ds, out)
            back = datasets.load_libsvm(out)
            if not (same(back.X, ds.X) and np.array_equal(back.Y, ds.Y)):
                raise CaseFailure("libsvm: save_libsvm/load_libsvm round trip changed the data")


def _npz_sparse(path, m):
    """Write a sparse matrix's arrays as scipy.sparse.save_npz does, without its checks."""
    fmt = m.format if m.format in ("csr", "csc") else "csr"
    m = m if m.format == fmt else sp.csr_matrix(m)
    np.savez(path, format=np.array(fmt), shape=np.array(m.shape), data=m.data,
             indices=m.indices, indptr=m.indptr)


def case_cli(seed):
    """Malformed belief/truth files into ``fastrank rank FILE`` and ``fastrank evaluate
    --truth T --scores S``: exit code 0 or 2 with one line on stderr, never a traceback."""
    from fastrank.__main__ import main
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        m, dense = random_sparse(rng, n=int(rng.integers(1, 5)), k=int(rng.integers(2, 6)))
        bad = mutate_sparse(rng, sp.csr_matrix(m) if rng.random() < 0.5 else m.tocsc())
        kind = rng.integers(0, 4)
        scores = os.path.join(tmp, "s" + [".npz", ".npz", ".npy", ".csv"][kind])
        if kind <= 1:
            try:
                _npz_sparse(scores, bad)
            except (ValueError, TypeError):
                _npz_sparse(scores, m)
        else:
            np.save(scores, dense) if kind == 2 else np.savetxt(scores, dense, delimiter=",")
            with open(scores, "rb") as f:
                raw = f.read()
            with open(scores, "wb") as f:
                f.write(mutate_bytes(rng, raw) if rng.random() < 0.7 else raw)
        truth = os.path.join(tmp, "t.npy")
        np.save(truth, (rng.random(dense.shape) < 0.5).astype(np.uint8))
        argv = ["rank", scores, "--method", "modified"] if rng.random() < 0.5 else \
            ["evaluate", "--truth", truth, "--scores", scores]
        err, out = io.StringIO(), io.StringIO()
        try:
            with redirect_stderr(err), redirect_stdout(out):
                code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:
            raise CaseFailure(f"fastrank {' '.join(argv)}: {type(exc).__name__}: {exc}") \
                from exc
        message = err.getvalue().strip()
        if code not in (0, None, 2) or (code == 2 and ("\n" in message or not message)):
            raise CaseFailure(f"fastrank {' '.join(argv)}: exit {code}, stderr {message!r}")


# -- model files: systematic and random mutations of saved models --

_SAVED = {}
_QUERY_ROWS = 4


def _saved_models():
    """name -> (estimator class, {member: array}, header dict) of small fitted models, one of
    each saveable estimator (KNN also on CSR features, so its X_fit_ is saved in parts)."""
    if _SAVED:
        return _SAVED
    import json
    import fastrank
    rng = np.random.default_rng(0)
    X = rng.random((12, 6))
    X[X < 0.4] = 0.0
    Y = (rng.random((12, 3)) < 0.5).astype(np.uint8)
    Y[0] = 1
    models = {
        "KNN": fastrank.KNN(k=3).fit(X, Y),
        "KNN-csr": fastrank.KNN(aggregate="sum").fit(sp.csr_matrix(X), Y),
        "MLkNN": fastrank.MLkNN(k=3).fit(X, Y),
        "VGRAM": fastrank.VGRAM(n_neurons=4, n_synapses=70, random_state=0).fit(X, Y),
        "VGRAMCor": fastrank.VGRAMCor(n_neurons=3, n_synapses=5, tie_policy="all",
                                      random_state=0).fit(X, Y),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in models.items():
            path = os.path.join(tmp, "m.npz")
            model.save(path)
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: np.array(z[k]) for k in z.files}
            header = json.loads(arrays.pop("__header__").tobytes().decode())
            _SAVED[name] = (type(model), arrays, header)
    return _SAVED


_BAD_JSON = [None, True, False, "x", "", -1, 0, 1, 2, 1.5, -0.0, 10**30, 2**63, -2**63, [],
             [1], {}, {"a": 1}, float("nan"), float("inf"), float("-inf")]
_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint32", "uint64", "float16",
           "float32", "float64", "bool", ">f8", ">i4", ">i8", ">u8", "U3", "S2", "complex128",
           "object"]
_VALUES = ["nan", "inf", "-inf", "negative", "zero", "one", "max+1", "huge", "int32_max",
           "int64_max", "tiny"]
_SHAPES = ["empty", "truncate_first", "truncate_last", "grow_first", "transpose", "ravel",
           "scalar", "add_axis", "fortran"]
_ZIP_OPS = ["truncate", "flip", "append", "prepend", "duplicate", "foreign_member",
            "compressed", "empty_file", "zero_member"]
_BITFLIPS = 40  # systematic cases per model of one bit flipped at a random position
#: declared numbers of features far beyond what a small model file stores
WIDTHS = (2**28, 2**31 - 1)


def _model_mutations(name):
    """Every systematic mutation of one saved model, as (kind, target, what) tuples."""
    _, arrays, header = _saved_models()[name]
    out = []
    for member in sorted(arrays):
        out += [("value", member, v) for v in _VALUES]
        out += [("dtype", member, d) for d in _DTYPES]
        out += [("shape", member, s) for s in _SHAPES]
        out += [("drop", member, None), ("rename", member, None)]
    out.append(("extra", "stray_", None))
    fields = [(k,) for k in sorted(header)] + [("params", p) for p in sorted(header["params"])] \
        + [("meta", m) for m in sorted(header["meta"])]
    for field in fields:
        out.append(("header_drop", field, None))
        out += [("header_set", field, i) for i in range(len(_BAD_JSON))]
    out += [("header_raw", None, i) for i in range(6)]
    out += [("zip", None, op) for op in _ZIP_OPS]
    if "prior_" in arrays:  # ML-kNN probability tables outside [0, 1]
        out += [("table", m, v) for m in ("prior_", "cond_true_", "cond_false_")
                for v in (-0.5, 1.5, -1e-300, 1 + 1e-15, 0.0, 1.0)]
    if "memory_" in arrays:  # VG-RAM networks with no stored document
        out += [("empty_memory", None, None)]
    out += [("bitflip", None, i) for i in range(_BITFLIPS)]
    out += [("width", None, w) for w in WIDTHS]
    return out


_SYSTEMATIC = []


def _systematic_cases():
    """Every (model, mutation) pair, in a fixed shuffled order: the first few hundred cases
    (the CI run) are a spread over all models and kinds, not all of one model's."""
    if not _SYSTEMATIC:
        cases = [(name, mutation) for name in sorted(_saved_models())
                 for mutation in _model_mutations(name)]
        _SYSTEMATIC.extend(cases[i] for i in np.random.default_rng(0).permutation(len(cases)))
    return _SYSTEMATIC


def _random_mutation(rng, name):
    options = _model_mutations(name)
    return options[int(rng.integers(len(options)))]


def _mutate_value(rng, a, what):
    a = np.array(a)
    if a.size == 0 or a.dtype.kind not in "biuf":
        return a
    if what in ("nan", "inf", "-inf", "tiny") and a.dtype.kind != "f":
        a = a.astype(np.float64)
    flat = a.reshape(-1)
    i = int(rng.integers(flat.size))
    big = np.iinfo(a.dtype).max if a.dtype.kind in "iu" else \
        np.finfo(a.dtype).max if a.dtype.kind == "f" else 1
    value = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "negative": -1, "zero": 0,
             "one": 1, "max+1": flat.max() + 1, "huge": big, "int32_max": 2**31 - 1,
             "int64_max": 2**63 - 1, "tiny": 5e-324}[what]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            flat[i] = value
        except (OverflowError, ValueError):
            flat[i] = np.array(value).astype(a.dtype)
    return a


def _mutate_shape(a, what):
    if a.ndim == 0:
        return a.reshape(1)
    if what == "empty":
        return a[:0]
    if what == "truncate_first":
        return a[:-1]
    if what == "truncate_last":
        return a[..., :-1]
    if what == "grow_first":
        return np.concatenate([a, a[-1:]]) if a.size else np.zeros((1,) + a.shape[1:], a.dtype)
    if what == "transpose":
        return np.ascontiguousarray(a.T) if a.ndim > 1 else a[::-1].copy()
    if what == "ravel":
        return a.ravel()
    if what == "scalar":
        return a.reshape(-1)[:1].reshape(()) if a.size else np.array(0, a.dtype)
    if what == "add_axis":
        return a[None]
    return np.asfortranarray(a)  # "fortran": the same values in Fortran order


def _mutate_model(rng, arrays, header, mutation):
    """Apply one mutation; returns (arrays, header, raw header bytes or None, zip op)."""
    import json
    kind, target, what = mutation
    raw, zip_op = None, None
    if kind == "value":
        arrays[target] = _mutate_value(rng, arrays[target], what)
    elif kind == "dtype":
        a = arrays[target]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                arrays[target] = a.astype(what)
            except ValueError:  # strings that are not numbers: left as they are
                pass
    elif kind == "shape":
        arrays[target] = _mutate_shape(arrays[target], what)
    elif kind == "drop":
        del arrays[target]
    elif kind == "rename":
        arrays[target + "x"] = arrays.pop(target)
    elif kind == "extra":
        arrays[target] = np.zeros(3)
    elif kind in ("header_drop", "header_set"):
        node = header
        for key in target[:-1]:  # an earlier mutation may have replaced a parent
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            pass
        elif kind == "header_drop":
            node.pop(target[-1], None)
        else:
            node[target[-1]] = _BAD_JSON[what]
    elif kind == "header_raw":
        raw = [b"", b"null", b"[]", b"\xff" * 10, b"{" * 5000, json.dumps(header).encode()
               + b" trailing"][what]
    elif kind in ("zip", "bitflip"):
        zip_op = what if kind == "zip" else "bitflip"
    elif kind == "table":
        arrays[target] = _mutate_value(rng, arrays[target], "zero")
        arrays[target].reshape(-1)[int(rng.integers(arrays[target].size))] = what
    elif kind == "width":  # the same model declaring ``what`` features (sparse X_fit_ too)
        header["n_features_in_"] = what
        if "X_fit_.csr.shape" in arrays:
            arrays["X_fit_.csr.shape"] = np.array([arrays["X_fit_.csr.shape"][0], what])
    elif kind == "empty_memory":
        arrays["memory_"] = arrays["memory_"][:, :0]
        arrays["label_indptr_"] = np.zeros(1, np.int64)
        arrays["label_indices_"] = np.zeros(0, np.int32)
    return arrays, header, raw, zip_op


def _write_model(rng, path, arrays, header, raw, zip_op):
    import json
    import zipfile
    head = raw if raw is not None else json.dumps(header).encode()
    members = {"__header__": np.frombuffer(head, dtype=np.uint8), **arrays}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if zip_op == "compressed"
                         else zipfile.ZIP_STORED) as z:
        for name, a in members.items():
            body = io.BytesIO()
            np.lib.format.write_array(body, a, allow_pickle=True)
            z.writestr(name + ".npy", body.getvalue())
        if zip_op == "duplicate":
            z.writestr(next(iter(arrays)) + ".npy", body.getvalue())
        elif zip_op == "foreign_member":
            z.writestr("readme.txt", b"hello")
        elif zip_op == "zero_member":
            z.writestr("zero.npy", b"")
    data = bytearray(buf.getvalue())
    pos = int(rng.integers(len(data)))
    if zip_op == "truncate":
        del data[pos:]
    elif zip_op == "flip":
        for _ in range(int(rng.integers(1, 9))):
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
    elif zip_op == "append":
        data += bytes(rng.integers(0, 256, int(rng.integers(1, 200)), dtype=np.uint8))
    elif zip_op == "prepend":
        data[:0] = b"\0" * int(rng.integers(1, 100))
    elif zip_op == "empty_file":
        data = bytearray()
    elif zip_op == "bitflip":
        data[pos] ^= 1 << int(rng.integers(8))
    with open(path, "wb") as f:
        f.write(bytes(data))


def _query(rng, n_features):
    if n_features <= 4096:
        X = rng.random((_QUERY_ROWS, n_features))
        X[X < 0.4] = 0.0
        return X
    return sp.random(_QUERY_ROWS, n_features, density=min(1.0, 20 / n_features),
                     format="csr", random_state=rng)


def _check_loaded(label, model, rng):
    """A model that loaded must predict finite beliefs in [0, 1] of the right shape."""
    X = _query(rng, int(model.n_features_in_))
    q = model.classes_.shape[0]
    for method in ("decision_function", "predict"):
        try:
            out = getattr(model, method)(X)
        except Exception as exc:
            raise CaseFailure(f"{label}: the file loaded, then {method} raised "
                              f"{type(exc).__name__}: {exc}") from exc
        out = np.asarray(out)
        if out.shape != (_QUERY_ROWS, q) or not np.isfinite(out).all() \
                or out.min(initial=0) < 0 or out.max(initial=0) > 1:
            raise CaseFailure(f"{label}: the file loaded, then {method} gave {out!r} "
                              f"(want finite values in [0, 1] of shape {(_QUERY_ROWS, q)})")


def case_model_files(seed):
    """Mutated saved models into ``load``: cases 0 .. ~2500 are the systematic list (every
    member's values, dtypes and shapes, every header field, ML-kNN tables outside [0, 1], a
    VG-RAM memory with no document, zip damage, one bit flipped at a random position, a
    declared number of features of :data:`WIDTHS`, run in this child's capped address
    space; one mutation each), later cases 1-3 random mutations. ``load`` must raise a
    ValueError/TypeError whose message names the file and the problem, or give a model
    whose ``decision_function`` and ``predict`` return finite values in [0, 1] of the right
    shape; for a flipped bit alone, it must refuse every file whose damage zipfile's CRC
    check reports, and a file it accepts must predict what the undamaged one does."""
    import copy
    models = _saved_models()
    systematic = _systematic_cases()
    rng = np.random.default_rng(seed)
    if seed < len(systematic):
        name, mutation = systematic[seed]
        mutations = [mutation]
    else:
        name = str(rng.choice(sorted(models)))
        mutations = [_random_mutation(rng, name) for _ in range(int(rng.integers(1, 4)))]
    cls, arrays, header = models[name]
    arrays, header = dict(arrays), copy.deepcopy(header)
    raw = zip_op = None
    for mutation in mutations:
        if mutation[0] in ("value", "dtype", "shape", "drop", "rename", "table") \
                and mutation[1] not in arrays:
            continue
        arrays, header, r, z = _mutate_model(rng, arrays, header, mutation)
        raw, zip_op = r or raw, z or zip_op
    label = f"{name} {mutations}"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.npz")
        _write_model(rng, path, arrays, header, raw, zip_op)
        model, err = call(cls.load, path)
        if mutations == [("bitflip", None, mutations[0][2])]:
            _check_bitflip(label, cls, path, model, err, models[name])
        if err is not None:  # from load's own checks, which name the file and the problem
            if not str(err).startswith(f"{path}: ") or len(str(err)) < len(path) + 12:
                raise CaseFailure(f"{label}: load raised {type(err).__name__}({err!r}), not "
                                  "a message naming the file and the problem")
            return
        _check_loaded(label, model, rng)


def _zip_reports_damage(path):
    """zipfile's own verdict on a file: testzip finds a member whose CRC-32 fails, or the
    archive cannot be read at all."""
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            return z.testzip() is not None
    except Exception:  # any failure to read the directory or a member is damage found
        return True


def _check_bitflip(label, cls, path, model, err, saved):
    """A file with one bit flipped: load must refuse it when zipfile sees the damage, and
    a model it accepts must predict exactly what the undamaged file's model predicts."""
    if err is not None:
        return
    if _zip_reports_damage(path):
        raise CaseFailure(f"{label}: load accepted a file whose damage zipfile reports")
    undamaged = path + ".good.npz"
    _write_model(np.random.default_rng(0), undamaged, *saved[1:], None, None)
    X = _query(np.random.default_rng(1), int(saved[2]["n_features_in_"]))
    if not np.array_equal(model.decision_function(X), cls.load(undamaged).decision_function(X)):
        raise CaseFailure(f"{label}: load accepted a damaged file that predicts differently")


# mutations this fuzzer once found accepted by load and then failing, or crashing, in
# prediction (kept as regression cases: kind "model_files_found")
FOUND = [
    ("VGRAM", ("empty_memory", None, None)),               # a kernel crash (no stored entry)
    ("VGRAMCor", ("empty_memory", None, None)),
    ("KNN", ("header_set", ("params", "aggregate"), 3)),   # KeyError in prediction
    ("KNN-csr", ("header_set", ("params", "k"), 11)),       # k larger than the training set
    ("MLkNN", ("table", "prior_", 1.5)),                    # beliefs outside [0, 1]
    ("MLkNN", ("table", "cond_true_", -1e-300)),
    ("MLkNN", ("dtype", "prior_", "uint8")),                # UFuncTypeError in prediction
    ("MLkNN", ("dtype", "cond_false_", "U3")),
    ("VGRAM", ("header_set", ("params", "tie_policy"), 3)),
    ("VGRAM", ("header_set", ("meta", "seed_"), 5)),        # OverflowError in the kernel call
    ("VGRAMCor", ("header_set", ("meta", "label_cardinality_"), 18)),
    ("VGRAM", ("header_set", ("n_features_in_",), 11)),    # 10**30 features
    ("VGRAM", ("shape", "label_indices_", "scalar")),       # IndexError in load
    ("VGRAMCor", ("shape", "memory_", "fortran")),          # not C-contiguous for the kernel
    ("KNN-csr", ("dtype", "X_fit_.csr.indices", "float64")),  # cast to int by SciPy silently
]


def case_model_files_found(index):
    """The systematic model-file case FOUND[index]."""
    case_model_files(_systematic_cases().index(FOUND[index]))


KINDS = {"csr": case_csr, "csr_estimators": case_csr_estimators, "parsers": case_parsers,
         "cli": case_cli, "model_files": case_model_files,
         "model_files_found": case_model_files_found}


def run(kind, first, count, keep_going=False):
    """Run the cases; stop at the first failure unless ``keep_going`` (then report all)."""
    case = KINDS[kind]
    failed = 0
    for seed in range(first, first + count):
        print(f"case {seed}", flush=True)
        try:
            case(seed)
        except Exception as exc:  # a CaseFailure, or a harness error: both fail the case
            failed += 1
            print(f"FAIL {seed}: {exc}", flush=True)
            if not keep_going:
                traceback.print_exc(file=sys.stdout)
                return 1
    return 1 if failed else 0


if __name__ == "__main__":
    limit = int(os.environ.get("FUZZ_MEMORY_LIMIT", MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.exit(run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                 keep_going=os.environ.get("FUZZ_KEEP_GOING") == "1"))
