"""Amplification suite: tiny files and arrays that declare huge shapes (a 15-byte libsvm file
naming feature 2 147 483 000, a one-entry sparse matrix of 2**31 - 1 labels, a 2 MB .npz
member inflating to 2 GiB, an endless line), given to every entry point that reads them.

Each case runs in a child process whose address space is capped (``RLIMIT_AS``) at what the
interpreter holds after its imports and a warm-up (baseline), plus ``HEADROOM`` and 100
times the case's input files, with a time limit. A case must end in a correct result --
checked here against an independent reference (the slow references of ref_neighbors.py and
ref_wnn.py on the narrow matrices, values worked out by hand) -- or in a ValueError (a
one-line error with exit code 2 for the command line) naming the size; a MemoryError, any
other exception, a crash or a time-out fails. The child reports its time and its peak RSS
above the baseline. Run one case as the test does, printing its JSON report:

    python tests/test_amplification.py CASE FOLDER

(FOLDER holding the input files, as ``write_inputs`` makes them.)
"""
import io
import json
import os
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
#: Address space a case may use beyond the baseline (plus 100 times its input files).
HEADROOM = 64 * 2**20
TIMEOUT = 120  # seconds per case, the child's start included
#: The feature (one-based) the 15-byte file names; its matrix has this many columns.
WIDE = 2_147_483_000
Q_MAX = 2**31 - 1
ENV = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="1", MALLOC_ARENA_MAX="2",
           PYTHONFAULTHANDLER="1")


# ---- input files ----------------------------------------------------------------------------

#: Zero-based feature positions of the 20-document wide file: five small ones, one in the
#: middle, the last one of the 15-byte file.
POSITIONS = np.array([0, 1, 2, 3, 4, 10**9, WIDE - 1])


def wide20():
    """(X narrow dense 20 x 7 integer counts, Y 20 x 3) of the wide file: column j of X is
    feature POSITIONS[j]; the first 10 documents (the base of the search case) never have
    feature 10**9."""
    rng = np.random.default_rng(20)
    X = rng.integers(0, 3, size=(20, 7)).astype(np.float64)
    X[rng.random(X.shape) < 0.4] = 0
    X[:10, 5] = 0
    X[X.sum(axis=1) == 0, 0] = 1
    Y = (rng.random((20, 3)) < 0.4).astype(np.uint8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    return X, Y


def _libsvm_lines(X, Y, positions):
    for x, y in zip(X, Y):
        labels = ",".join(map(str, np.flatnonzero(y)))
        yield labels + "".join(f" {positions[j] + 1}:{x[j]:g}" for j in np.flatnonzero(x))


def deflate_bomb(path, n_bytes):
    """A .npz whose one member, a float64 .npy array of ``n_bytes`` zero bytes, is deflated
    (about 1000:1). Built in a second, not by compressing gigabytes: a deflate stream of
    equal blocks of zeros repeats, once the compressor's window is full of zeros, the same
    compressed block, so the stream is the first blocks, that block repeated, and the end."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (n_bytes // 8,)})
    header = header.getvalue()
    block = bytes(2**24)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(header) + compressor.compress(block)
    steady = compressor.compress(block)
    assert steady == compressor.compress(block)  # the steady state
    n_blocks = n_bytes // len(block)
    data = head + steady * (n_blocks - 1) + compressor.flush()
    crc = zlib.crc32(header)
    for _ in range(n_blocks):
        crc = zlib.crc32(block, crc)
    name, size = b"x.npy", len(header) + n_bytes
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(data), size,
                        len(name), 0) + name
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, crc,
                          len(data), size, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central),
                      len(local) + len(data), 0)
    with open(path, "wb") as f:
        f.write(local + data + central + end)


def one_entry(q):
    """A 1 x q CSR matrix whose one entry, 1, is in the last column."""
    return sp.csr_matrix(([1.0], [q - 1], [0, 1]), shape=(1, q))


def write_inputs(folder):
    """The input files of the cases, in ``folder``."""
    with open(os.path.join(folder, "w.svm"), "wb") as f:
        f.write(b"1 2147483000:1\n")  # 15 bytes
    X, Y = wide20()
    with open(os.path.join(folder, "wide20.svm"), "w") as f:
        f.write(f"# fastrank n_features={WIDE} n_labels={Y.shape[1]} zero_based=0\n")
        f.write("\n".join(_libsvm_lines(X, Y, POSITIONS)) + "\n")
    sp.save_npz(os.path.join(folder, "wide_sparse.npz"), one_entry(Q_MAX))
    deflate_bomb(os.path.join(folder, "bomb.npz"), 2**31)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("amplification")
    write_inputs(str(folder))
    return str(folder)


def test_the_bomb_is_what_it_claims(inputs):
    """The deflate bomb's member is a well-formed 2 GiB .npy of zeros (CRC-32 included):
    inflated here by streaming, 16 MiB at a time."""
    import zipfile
    path = os.path.join(inputs, "bomb.npz")
    assert 1.9e6 < os.path.getsize(path) < 2.2e6
    with zipfile.ZipFile(path) as z, z.open("x.npy") as member:
        assert np.lib.format.read_magic(member) == (1, 0)
        assert np.lib.format.read_array_header_1_0(member) == ((2**28,), False,
                                                                np.dtype("<f8"))
        total, zeros = 0, bytes(2**24)
        while chunk := member.read(2**24):
            assert chunk == zeros[:len(chunk)]
            total += len(chunk)
    assert total == 2**31  # read to its end: the CRC-32 was checked


# ---- the cases, run in the child ------------------------------------------------------------
# case_NAME(folder) -> a JSON-able result; INPUTS[NAME]: the files it reads (for the cap).

INPUTS = {}


def reads(*files):
    def register(case):
        INPUTS[case.__name__[len("case_"):]] = files
        return case
    return register


def _load(folder, name):
    from fastrank.datasets import load_libsvm
    return load_libsvm(os.path.join(folder, name))


@reads("w.svm")
def case_load_libsvm(folder):
    X = _load(folder, "w.svm").X
    return [list(X.shape), X.indices.tolist(), X.data.tolist()]


@reads("w.svm")
def case_feature_names(folder):
    names = _load(folder, "w.svm").feature_names
    return [len(names), names[:1], names[-1], "f2147482999" in names]


@reads("w.svm")
def case_knn_on_the_15_byte_file(folder):
    from fastrank import KNN
    data = _load(folder, "w.svm")
    return KNN().fit(data.X, data.Y).decision_function(data.X).tolist()


@reads("wide20.svm")
def case_knn(folder):
    from fastrank import KNN
    data = _load(folder, "wide20.svm")
    return KNN(k=3).fit(data.X, data.Y).decision_function(data.X).tolist()


@reads("wide20.svm")
def case_mlknn(folder):
    from fastrank import MLkNN
    data = _load(folder, "wide20.svm")
    model = MLkNN(k=3).fit(data.X[:10], data.Y[:10])
    return [model.predict_proba(data.X[10:]).tolist(), model.predict(data.X[10:]).tolist()]


@reads("wide20.svm")
def case_topk_cosine(folder):
    from fastrank import topk_cosine
    X = _load(folder, "wide20.svm").X
    sims, idx = topk_cosine(X[10:], X[:10], 4)  # the queries have a feature the base lacks
    return [sims.tolist(), idx.tolist()]


def _vgram_case(cls):
    """A network of 16 x 64 synapses over WIDE features, fitted on documents whose first
    seven wired positions hold wide20's columns (the wiring depends only on the width and
    random_state, so a first fit gives it)."""
    X, Y = wide20()
    model = cls(n_neurons=16, n_synapses=64, random_state=3)
    wired = np.unique(model.fit(sp.csr_matrix((20, WIDE)), Y).synapses_)
    rows, cols = np.nonzero(X)
    Xw = sp.csr_matrix((X[rows, cols], (rows, wired[cols])), shape=(20, WIDE))
    model.fit(Xw[:12], Y[:12])
    return [model.decision_function(Xw[12:]).tolist(), model.synapses_.tolist(), model.seed_]


@reads()
def case_vgram(folder):
    from fastrank import VGRAM
    return _vgram_case(VGRAM)


@reads()
def case_vgramcor(folder):
    from fastrank import VGRAMCor
    return _vgram_case(VGRAMCor)


@reads("wide20.svm")
def case_run_study(folder):
    from fastrank import run_study
    result = run_study(_load(folder, "wide20.svm"), classifiers=("knn", "mlknn"), folds=2,
                       params={"knn": {"k": 3}, "mlknn": {"k": 3}}, n_jobs=1)
    return {c: v.tolist() for c, v in result.values.items()}


@reads("w.svm")
def case_rank(folder):
    from fastrank import rank
    return rank(_load(folder, "w.svm").X).tolist()


@reads("w.svm")
def case_tie_groups(folder):
    from fastrank import tie_groups
    return tie_groups(_load(folder, "w.svm").X).order.tolist()


@reads()
def case_evaluate(folder):
    from fastrank.metrics import evaluate
    return evaluate(one_entry(Q_MAX), one_entry(Q_MAX)).to_dict()


@reads()
def case_evaluator_update(folder):
    from fastrank.metrics import Evaluator
    return Evaluator().update(one_entry(Q_MAX), one_entry(Q_MAX)).result().to_dict()


@reads()
def case_one_error(folder):
    from fastrank.metrics import one_error
    return one_error(one_entry(2**30), one_entry(2**30))


@reads()
def case_evaluate_fits(folder):
    """As wide as the headroom allows: a correct result, not a refusal."""
    from fastrank.metrics import evaluate
    return evaluate(one_entry(2**16), one_entry(2**16), ties="modified").to_dict()


@reads()
def case_evaluate_at_k_ordinal(folder):
    from fastrank.metrics import evaluate_at_k
    return evaluate_at_k(one_entry(Q_MAX), one_entry(Q_MAX), k=1, ties="ordinal")


@reads()
def case_evaluate_at_k_wide_k(folder):
    """k = 2**20 on as many labels: its discount tables fit the headroom."""
    from fastrank.metrics import evaluate_at_k
    return evaluate_at_k(one_entry(2**20), one_entry(2**20), k=2**20, ties="expected")


@reads()
def case_auc_samples(folder):
    from fastrank.metrics import auc
    return auc(one_entry(2**22), one_entry(2**22), average="samples")


@reads()
def case_hamming_loss_of_label_sets(folder):
    """One matrix of the pair fits the headroom, the pair and the counts' third do not."""
    from fastrank.metrics import hamming_loss
    return hamming_loss([{0}], [{1}], n_labels=48 * 2**20)


@reads()
def case_vgram_memory(folder):
    """2**31 synapses (the most allowed) over three features: 8 GiB of wiring."""
    from fastrank import VGRAM
    X = np.random.default_rng(0).random((40, 3))
    Y = (np.arange(40)[:, None] % 2 == np.arange(2)).astype(np.uint8)
    return VGRAM(n_neurons=2**25, n_synapses=64).fit(X, Y).memory_.shape


@reads()
def case_available_memory(folder):
    from fastrank._validation import available_memory
    return available_memory()


def _cli(*argv, stdin=None):
    """``fastrank ARGV``: (exit code, standard error)."""
    import contextlib

    from fastrank.__main__ import main
    err = io.StringIO()
    if stdin is not None:
        sys.stdin = stdin
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(argv))
    return [code, err.getvalue()]


@reads("w.svm")
def case_cli_rank_w_svm(folder):
    return _cli("rank", os.path.join(folder, "w.svm"))


@reads("wide_sparse.npz")
def case_cli_rank_wide_sparse_npz(folder):
    return _cli("rank", os.path.join(folder, "wide_sparse.npz"))


@reads("wide_sparse.npz")
def case_cli_evaluate_wide_sparse_npz(folder):
    path = os.path.join(folder, "wide_sparse.npz")
    return _cli("evaluate", "--truth", path, "--scores", path)


@reads("bomb.npz")
def case_cli_rank_bomb_npz(folder):
    return _cli("rank", os.path.join(folder, "bomb.npz"))


@reads()
def case_cli_rank_dev_zero(folder):
    return _cli("rank", "/dev/zero")


@reads()
def case_cli_rank_endless_line_on_stdin(folder):
    return _cli("rank", "-", stdin=open("/dev/zero"))


@reads("w.svm")
def case_cli_study_w_svm(folder):
    return _cli("study", "--dataset", os.path.join(folder, "w.svm"), "--out",
                os.path.join(folder, "study-out"), "--quiet")


CASES = sorted(name[len("case_"):] for name in list(globals()) if name.startswith("case_"))


def _status(field):
    """A size field of /proc/self/status (VmSize, VmRSS, VmHWM: the peak RSS), in bytes."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def _warm_up():
    """Import what the cases use and run each kind of kernel once, so that the baseline
    holds the interpreter's libraries, OpenMP threads and allocator arenas."""
    import fastrank
    import fastrank.__main__  # noqa: F401
    from fastrank import metrics, run_study  # noqa: F401
    X = sp.random(30, 20, density=0.3, format="csr", random_state=0)
    Y = (np.random.default_rng(0).random((30, 3)) < 0.5).astype(np.uint8)
    Y[:, 0] = 1
    for model in (fastrank.KNN(k=3), fastrank.MLkNN(k=3), fastrank.VGRAM(8, 64),
                  fastrank.VGRAMCor(8, 64)):
        model.fit(X, Y).decision_function(X)
    metrics.evaluate(Y, X[:, :3].toarray())
    fastrank.rank(X)


def child(name, folder):
    """Run case ``name`` capped; print its JSON report (result or ValueError, seconds, peak
    RSS above the baseline in MiB, the cap above the baseline in bytes)."""
    import resource
    _warm_up()
    input_bytes = sum(os.path.getsize(os.path.join(folder, f)) for f in INPUTS[name])
    allowed = HEADROOM + 100 * input_bytes
    resource.setrlimit(resource.RLIMIT_AS, (_status("VmSize") + allowed,) * 2)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak RSS starts again from the baseline's RSS
    rss0 = _status("VmRSS")
    start = time.perf_counter()
    report = {"allowed": allowed}
    try:
        report["result"] = globals()["case_" + name](folder)
    except ValueError as exc:
        report["error"] = str(exc)
    report["seconds"] = time.perf_counter() - start
    report["rss_mib"] = (_status("VmHWM") - rss0) / 2**20
    print(json.dumps(report))


def run_case(name, folder, script=os.path.abspath(__file__)):
    """The child's report of case ``name`` (``script`` runs it); fails the test on anything
    but a report."""
    proc = subprocess.run([sys.executable, script, name, folder], env=ENV,
                          capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        died = f"signal {-proc.returncode}" if proc.returncode < 0 else \
            f"exit {proc.returncode}"
        pytest.fail(f"case {name}: the child died with {died}:\n{proc.stderr[-3000:]}",
                    pytrace=False)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- the checks, in pytest ------------------------------------------------------------------

def _refused(report, pattern):
    import re
    assert "error" in report, report
    assert re.search(pattern, report["error"]), report["error"]


def _cli_refused(report, command, pattern):
    code, err = report["result"]
    assert code == 2 and err.count("\n") == 1, err
    _refused({"error": err.removeprefix(f"fastrank {command}: error: ")}, pattern)


_SIZE = r"needs [\d.]+ GiB, more than the [\d.]+ MiB this process can allocate"


def check_load_libsvm(report):
    assert report["result"] == [[1, WIDE], [WIDE - 1], [1.0]]


def check_feature_names(report):
    assert report["result"] == [WIDE, ["f0"], f"f{WIDE - 1}", True]


def check_knn_on_the_15_byte_file(report):
    assert report["result"] == [[1.0]]  # its one neighbour is itself, cosine 1


def check_knn(report):
    from ref_neighbors import ref_knn
    X, Y = wide20()
    np.testing.assert_allclose(report["result"], ref_knn(X, Y, X, 3, "max"), rtol=1e-12)


def check_mlknn(report):
    from ref_neighbors import ref_mlknn
    X, Y = wide20()
    F, P = ref_mlknn(X[:10], Y[:10], X[10:], 3, 1.0)
    np.testing.assert_allclose(report["result"][0], F, rtol=1e-12)
    np.testing.assert_array_equal(report["result"][1], P)


def check_topk_cosine(report):
    from ref_neighbors import ref_topk
    X, _ = wide20()
    sims, idx = ref_topk(X[10:], X[:10], 4)
    np.testing.assert_allclose(report["result"][0], sims, rtol=1e-12)
    np.testing.assert_array_equal(report["result"][1], idx)


def _check_vgram(report, kind):
    import ref_wnn
    X, Y = wide20()
    beliefs, synapses, seed = report["result"]
    wired = np.unique(synapses)
    narrow = np.zeros((20, wired.size))  # the values at the wired positions
    narrow[:, :X.shape[1]] = X
    np.testing.assert_array_equal(
        beliefs, ref_wnn.beliefs(kind, "random", narrow[:12], Y[:12], narrow[12:],
                                 np.searchsorted(wired, synapses), seed))


def check_vgram(report):
    _check_vgram(report, "VGRAM")


def check_vgramcor(report):
    _check_vgram(report, "COR")


def check_run_study(report):
    """The same values as the study of the narrow matrix (same cosines, bit for bit)."""
    from fastrank import run_study
    from fastrank.datasets import Dataset
    X, Y = wide20()
    narrow = run_study(Dataset(X, Y, name="wide20"), classifiers=("knn", "mlknn"), folds=2,
                       params={"knn": {"k": 3}, "mlknn": {"k": 3}}, n_jobs=1)
    for c, values in narrow.values.items():
        np.testing.assert_array_equal(report["result"][c], values)


def check_rank(report):
    _refused(report, rf"ranking a 1 x {WIDE} matrix \(4 bytes of results per entry\) {_SIZE}")


def check_tie_groups(report):
    _refused(report, rf"ranking a 1 x {WIDE} matrix \(12 bytes of results per entry\) "
                     rf"{_SIZE}")


def check_evaluate(report):
    _refused(report, rf"the per-label counts of {Q_MAX} labels \(n_labels\) {_SIZE}")


check_evaluator_update = check_evaluate


def check_one_error(report):
    _refused(report, rf"the per-label counts of {2**30} labels \(n_labels\) {_SIZE}")


def check_evaluate_fits(report):
    """One relevant label ranked first among 2**16 (the rest tied at 0): melotti2009 eq.
    4.1-4.16 by hand."""
    values = report["result"]["modified"]
    assert values["one_error"] == 0 and values["coverage"] == 0
    assert values["ranking_loss"] == 0 and values["average_precision"] == 1
    assert values["hamming_loss"] == 0 and values["precision_macro_c"] == 2**-16


def check_evaluate_at_k_ordinal(report):
    _refused(report, rf"the top-k scratch of {Q_MAX} labels \(n_labels\) and k up to 1 {_SIZE}")


def check_evaluate_at_k_wide_k(report):
    """The one relevant label first, the other 2**20 - 1 tied at 0 below it: one hit in
    k = 2**20 places (melotti2009's P@k), the ideal DCG reached."""
    values = report["result"]["expected"]
    assert values[f"precision@{2**20}"] == 2**-20
    assert values[f"ndcg@{2**20}"] == 1.0


def check_auc_samples(report):
    _refused(report, rf"sorting the AUC's 1 x {2**22} entries needs [\d.]+ MiB, more than "
                     rf"the [\d.]+ MiB")


def check_hamming_loss_of_label_sets(report):
    _refused(report, rf"counting a 1 x {48 * 2**20} truth and prediction \(two more bytes "
                     rf"an entry\) needs [\d.]+ MiB, more than the [\d.]+ MiB")


def check_vgram_memory(report):
    _refused(report, rf"a VG-RAM memory of {2**25} neurons x 64 synapses x 40 documents "
                     rf"{_SIZE}")


def check_available_memory(report):
    assert 0 < report["result"] <= report["allowed"]


def check_cli_rank_w_svm(report):
    _cli_refused(report, "rank", rf"ranking a 1 x {WIDE} matrix .* {_SIZE}")


def check_cli_rank_wide_sparse_npz(report):
    _cli_refused(report, "rank", rf"ranking a 1 x {Q_MAX} matrix .* {_SIZE}")


def check_cli_evaluate_wide_sparse_npz(report):
    _cli_refused(report, "evaluate", rf"the per-label counts of {Q_MAX} labels \(n_labels\) "
                                     rf"{_SIZE}")


def check_cli_rank_bomb_npz(report):
    _cli_refused(report, "rank", r"bomb.npz: its compressed members would inflate to "
                                 r"2147483776 bytes, more than the 268435456 allowed")


def check_cli_rank_dev_zero(report):
    _cli_refused(report, "rank", r"cannot read /dev/zero: not a regular file")


def check_cli_rank_endless_line_on_stdin(report):
    _cli_refused(report, "rank", r"cannot read -: line 1 is longer than 16777216 characters")


def check_cli_study_w_svm(report):
    _cli_refused(report, "study", r"folds=10 exceeds the 1 documents")


@pytest.mark.parametrize("name", CASES)
def test_case(name, inputs, record_property):
    report = run_case(name, inputs)
    record_property("seconds", report["seconds"])
    record_property("rss_mib", report["rss_mib"])
    globals()["check_" + name](report)
    assert not os.path.exists(os.path.join(inputs, "study-out"))


def test_the_cap_stops_an_allocation_of_the_declared_width(inputs):
    """The harness itself: an allocation of 2**31 bytes in a case ends the child with a
    MemoryError, and the test fails."""
    script = os.path.join(inputs, "control.py")
    with open(script, "w") as f:
        f.write(f"import sys\nsys.path.insert(0, {HERE!r})\nimport test_amplification as t\n"
                "t.INPUTS['control'] = ()\n"
                "t.case_control = lambda folder: int(t.np.ones(2**28).sum())\n"
                "t.child(sys.argv[1], sys.argv[2])\n")
    with pytest.raises(pytest.fail.Exception, match=r"case control: the child died with "
                                                    r"exit 1:(.|\n)*MemoryError"):
        run_case("control", inputs, script)


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])
