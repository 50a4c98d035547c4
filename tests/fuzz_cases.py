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
        "VGRAM": lambda X: fastrank.VGRAM(n_neurons=4, n_synapses=3, tie_policy="first",
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


KINDS = {"csr": case_csr, "csr_estimators": case_csr_estimators, "parsers": case_parsers,
         "cli": case_cli}


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
