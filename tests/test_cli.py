"""The command line: output of the demo, one-line errors with exit code 2."""
import argparse
import subprocess
import sys

import numpy as np
import pytest

from fastrank.__main__ import main


def test_rank_demo_prints_figure_2_1(capsys):
    assert main(["rank"]) == 0
    out = capsys.readouterr().out
    assert "dense: 1 2 2 3" in out
    assert "standard: 1 2 2 4" in out
    assert "modified: 1 3 3 4" in out
    assert "fractional: 1 2.5 2.5 4" in out


@pytest.mark.parametrize("file", [False, True])
@pytest.mark.parametrize("method", ["", "bogus"])
def test_rank_refuses_an_unknown_method_before_printing(tmp_path, capsys, method, file):
    """An empty or unknown --method is the one-line error (not the default method), with
    nothing on standard output (not the example's first line)."""
    csv = tmp_path / "s.csv"
    csv.write_text("0.1,0.3\n")
    assert main(["rank", *([str(csv)] if file else []), "--method", method]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"unknown method={method!r}" in err and err.count("\n") == 1


def test_rank_reads_csv_and_npy(tmp_path, capsys):
    csv = tmp_path / "s.csv"
    csv.write_text("0.1,0.3,0.3\n0.5,0.5,0.2\n")
    assert main(["rank", str(csv), "--method", "standard"]) == 0
    assert capsys.readouterr().out.splitlines() == ["3,1,1", "1,1,3"]
    npy = tmp_path / "s.npy"
    np.save(npy, np.array([[2.0, 1.0]]))
    assert main(["rank", str(npy), "--method", "dense"]) == 0
    assert capsys.readouterr().out.strip() == "1,2"
    # the API's aliases; default method for a file: modified
    assert main(["rank", str(csv), "--method", "average"]) == 0
    assert capsys.readouterr().out.splitlines() == ["3,1.5,1.5", "1.5,1.5,3"]
    assert main(["rank", str(csv)]) == 0
    assert capsys.readouterr().out.splitlines() == ["3,2,2", "2,2,3"]



def test_a_csv_header_row_is_skipped_with_header(tmp_path, monkeypatch, capsys):
    import io
    csv = tmp_path / "s.csv"
    csv.write_text("a,b,c\n0.1,0.3,0.3\n0.5,0.5,0.2\n")
    assert main(["rank", str(csv), "--method", "standard"]) == 2
    _one_error_line(capsys, "line 1 is not numbers: 'a,b,c'", "--header")
    assert main(["rank", str(csv), "--method", "standard", "--header"]) == 0
    assert capsys.readouterr().out.splitlines() == ["3,1,1", "1,1,3"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("x y\n2 1\n"))
    assert main(["rank", "-", "--header", "--method", "dense"]) == 0
    assert capsys.readouterr().out.splitlines() == ["1,2"]
    # a comment line is still no header
    monkeypatch.setattr(sys, "stdin", io.StringIO("# beliefs\n2 1\n"))
    assert main(["rank", "-", "--method", "dense"]) == 0
    assert capsys.readouterr().out.splitlines() == ["1,2"]
    truth = tmp_path / "t.csv"
    truth.write_text("l1,l2,l3\n1,0,0\n0,1,1\n")
    assert main(["evaluate", "--truth", str(truth), "--scores", str(csv), "--json",
                 "--header"]) == 0
    from fastrank.metrics import evaluate
    expected = evaluate([[1, 0, 0], [0, 1, 1]], [[0.1, 0.3, 0.3], [0.5, 0.5, 0.2]]).to_dict()
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected))
    assert main(["evaluate", "--truth", str(truth), "--scores", str(csv)]) == 2
    assert "line 1 is not numbers: 'l1,l2,l3'" in capsys.readouterr().err


def test_rank_writes_files_and_reads_stdin(tmp_path):
    out = tmp_path / "r.npy"
    proc = subprocess.run([sys.executable, "-m", "fastrank", "rank", "-", "--method", "max",
                           "--out", str(out)], input="0.1 0.3 0.3\n", capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    assert np.load(out).tolist() == [[3, 2, 2]]
    proc = subprocess.run([sys.executable, "-m", "fastrank", "rank", "-", "--method", "nope"],
                          input="0.1\n", capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nope" in proc.stderr


def test_an_output_in_a_missing_folder_is_named_in_the_error(tmp_path, capsys):
    csv = tmp_path / "s.csv"
    csv.write_text("0.1,0.3\n")
    out = tmp_path / "missing" / "r.csv"
    assert main(["rank", str(csv), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"fastrank rank: error: [Errno 2] No such file or "
                                       f"directory: '{out}'\n")


def test_version_pipe_and_misspelled_options(tmp_path):
    from fastrank import __version__
    proc = subprocess.run([sys.executable, "-m", "fastrank", "--version"], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == f"fastrank {__version__}"
    proc = subprocess.run([sys.executable, "-m", "fastrank", "study", "--clasifiers", "knn"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "usage: fastrank study" in proc.stderr
    assert "unrecognized arguments: --clasifiers" in proc.stderr
    big = tmp_path / "big.csv"
    np.savetxt(big, np.random.default_rng(0).random((50_000, 5)), delimiter=",")
    proc = subprocess.run(f'"{sys.executable}" -m fastrank rank "{big}" | head -1', shell=True,
                          capture_output=True, text=True)
    assert proc.stderr == "" and len(proc.stdout.splitlines()) == 1
    proc = subprocess.run([sys.executable, "-m", "fastrank", "study", "--classifiers", "",
                           "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no classifier" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_interrupt_and_terminate_are_one_line_and_leave_no_output(tmp_path):
    import signal
    for sig, code, word in ((signal.SIGINT, 130, "interrupted"),
                            (signal.SIGTERM, 143, "terminated")):
        proc = subprocess.Popen([sys.executable, "-m", "fastrank", "study", "--folds", "10",
                                 "--classifiers", "vgram", "--out", str(tmp_path / "o")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = proc.stderr.readline()  # the first fold is done: the study is under way
        assert first.startswith("[ 1/10]"), first
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == code, err
        assert err.strip().splitlines()[-1] == f"fastrank study: {word}"
        assert "Traceback" not in err and not (tmp_path / "o").exists()
def test_bad_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("0.1,nan\n")
    proc = subprocess.run([sys.executable, "-m", "fastrank", "rank", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "NaN" in proc.stderr
    missing = subprocess.run([sys.executable, "-m", "fastrank", "rank", str(tmp_path / "no.csv")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.startswith("fastrank rank: error:")


def _one_error_line(capsys, *words):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastrank rank: error: "), err
    for word in words:
        assert word in err, err
    return err


def test_text_input_has_a_line_bound(tmp_path, monkeypatch, capsys):
    """CSV/whitespace lines are read at most MAX_LINE characters at a time, from a file or
    standard input: a longer line is refused (one line naming the bound), never read whole
    (``fastrank rank - < /dev/zero`` runs memory-capped in test_amplification.py)."""
    import io

    import fastrank._cli._input as cli
    monkeypatch.setattr(cli, "MAX_LINE", 12)
    text = "0.1,0.3,0.3\n0.5,0.5,0.25\n"
    csv = tmp_path / "s.csv"
    csv.write_text(text)
    assert main(["rank", str(csv)]) == 2
    _one_error_line(capsys, "line 2 is longer than 12 characters", ".npy or .npz")
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["rank", "-"]) == 2
    _one_error_line(capsys, "cannot read -: line 2 is longer than 12 characters")
    monkeypatch.setattr(cli, "MAX_LINE", 13)  # both lines fit (with their newlines)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["rank", "-", "--method", "standard"]) == 0
    assert main(["rank", str(csv), "--method", "standard"]) == 0
    assert capsys.readouterr().out.splitlines() == ["3,1,1", "1,1,3"] * 2


def test_a_file_argument_must_be_a_regular_file(tmp_path, capsys):
    """A folder or a FIFO is refused at once (a FIFO is not even opened, so nothing waits
    for a writer): one line, exit 2. (/dev/zero runs memory-capped in
    test_amplification.py.)"""
    import os
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path in (tmp_path, fifo):
        assert main(["rank", str(path)]) == 2
        _one_error_line(capsys, f"cannot read {path}: not a regular file")


def test_compressed_npz_members_are_bounded(tmp_path, monkeypatch, capsys):
    """.npz files as NumPy and SciPy write them, compressed or not, are read (sparse in any
    format); compressed members may inflate to INFLATE_FACTOR times the file's size (or
    INFLATE_FLOOR bytes): beyond, or with a header that claims more than its member, the
    file is refused before anything is inflated. (A 2 MB member inflating to 2 GiB runs
    memory-capped in test_amplification.py.)"""
    import io
    import zipfile

    import scipy.sparse as sp

    import fastrank._cli._input as cli
    scores = np.array([[0.1, 0.0, 0.3], [0.0, 0.5, 0.5]])
    expected = ["2,3,1", "3,1,1"]  # standard ranks
    files = {"coo.npz": lambda p: sp.save_npz(p, sp.coo_matrix(scores)),
             "csc.npz": lambda p: sp.save_npz(p, sp.csc_matrix(scores), compressed=False),
             "csr.npz": lambda p: sp.save_npz(p, sp.csr_matrix(scores)),
             "dense.npz": lambda p: np.savez_compressed(p, scores=scores)}
    for name, save in files.items():
        save(tmp_path / name)
        assert main(["rank", str(tmp_path / name), "--method", "standard"]) == 0, name
        assert capsys.readouterr().out.splitlines() == expected, name
    zeros = tmp_path / "zeros.npz"
    np.savez_compressed(zeros, x=np.zeros(2**20))  # 8 MiB inflated, about 8 KiB deflated
    monkeypatch.setattr(cli, "INFLATE_FLOOR", 2**20)
    assert main(["rank", str(zeros)]) == 2
    _one_error_line(capsys, f"cannot read {zeros}: its compressed members would inflate to "
                    "8388736 bytes, more than the 1048576 allowed", "numpy.savez")
    liar = tmp_path / "liar.npz"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (1, 2**30)})
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", header.getvalue() + bytes(16))
    assert main(["rank", str(liar)]) == 2
    _one_error_line(capsys, "member 'x.npy': its header claims 8589934592 bytes")


def test_every_public_name_resolves():
    import fastrank
    for name in fastrank.__all__:
        assert getattr(fastrank, name) is not None, name
    assert {"ranking", "metrics", "study"} <= set(dir(fastrank))


def test_study_help_documents_the_scheduler(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["study", "--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--scheduler SPEC" in out and "Dask cluster" in out
    assert "'local'" in out and "'local:N'" in out and "'tcp://HOST:PORT'" in out


# ---- the study on many data sets, own estimators, progress -----------------------------------

import json  # noqa: E402
import os  # noqa: E402

from fastrank.study.compare import BenchmarkResult  # noqa: E402
from fastrank.datasets import load, save_libsvm  # noqa: E402


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A folder of two small libsvm data sets (cut from yeast), one of them in a
    subfolder, as Mulan's layout has them."""
    root = tmp_path_factory.mktemp("data")
    y = load("yeast")
    (root / "sub").mkdir()
    save_libsvm(y.take(np.arange(0, 200)), str(root / "first.svm"))
    save_libsvm(y.take(np.arange(200, 400)), str(root / "sub" / "second.svm"))
    (root / "notes.txt").write_text("not a data set")
    return root


def test_study_on_a_folder_of_data_sets_and_resume(data_dir, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["study", "--dataset", str(data_dir), "--classifiers", "knn,mlknn", "--ties",
            "ordinal,modified", "--folds", "2", "--out", str(out)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "fastrank tie study on 2 data sets: first, second" in captured.out
    assert captured.err.splitlines()[0].startswith("[1/8] first: kNN: fold 1/2")
    for f in ("benchmark.json", "tables.md", "tables.tex", "report.html"):
        assert (out / f).is_file()
    for d in ("first", "second"):
        assert (out / d / "results.json").is_file() and (out / d / "tables.tex").is_file()
    bench = BenchmarkResult.from_json((out / "benchmark.json").read_text())
    assert bench.datasets == ("first", "second")
    assert main(args) == 0  # again: both loaded, none computed
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if not line.startswith("report: ")] == [
        "[4/8] first: done earlier", "[8/8] second: done earlier"]
    assert main(args[:-4] + ["--folds", "3", "--out", str(out)]) == 2
    assert "another configuration (folds 2 instead of 3)" in capsys.readouterr().err


_PAUSED_STUDY = """
import os, sys, time
import fastrank._atomic as atomic
import fastrank.report._figures
from fastrank.__main__ import main
fastrank.report._figures._have_matplotlib = lambda: False  # no figures: not under test here
real = {where}.{name}

def paused(*args):
    if {when}:
        sys.stderr.write("paused\\n")
        sys.stderr.flush()
        time.sleep({seconds})
    return real(*args)

{where}.{name} = paused
sys.argv = ["fastrank"] + sys.argv[1:]
sys.exit(main())
"""


def _terminate_paused_study(tmp_path, data_dir, where, name, when, seconds):
    """A study of two data sets whose first output set pauses in ``where.name`` (called
    in the worker thread) when ``when`` holds of its ``args``: SIGTERM there; return the
    output folder."""
    import signal
    out = tmp_path / "o"
    code = _PAUSED_STUDY.format(where=where, name=name, when=when, seconds=seconds)
    proc = subprocess.Popen([sys.executable, "-c", code, "study", "--dataset",
                             f"{data_dir / 'first.svm'},{data_dir / 'sub' / 'second.svm'}",
                             "--classifiers", "knn", "--ties", "ordinal,modified", "--folds",
                             "2", "--quiet", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr.readline() == "paused\n"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == ["fastrank study: terminated"]
    return out


def _temporaries(folder):
    return [os.path.join(root, n) for root, _, names in os.walk(folder) for n in names
            if n.startswith(".fastrank-")]


def test_terminated_while_a_data_set_s_outputs_are_written_leaves_no_temporary(tmp_path,
                                                                              data_dir):
    """SIGTERM while the worker thread writes the first data set's temporary files (paused
    with the first one written): they are removed with the folders made for them --
    nothing of that data set is left, and a rerun computes it."""
    out = _terminate_paused_study(tmp_path, data_dir, "atomic", "_write_new",
                                  "args[0].endswith('.tmp') and len(os.listdir("
                                  "os.path.dirname(args[0]))) == 1", 60)
    assert not out.exists()


def test_terminated_while_a_data_set_s_outputs_are_renamed_finishes_them(tmp_path, data_dir):
    """SIGTERM while the first data set's output set is being renamed into place (paused
    before its last rename): the set is finished (complete, no temporary or backup file),
    then the program ends."""
    out = _terminate_paused_study(tmp_path, data_dir, "os", "replace",
                                  "args[1].endswith('report.html')", 5)
    assert _temporaries(out) == []
    assert sorted(os.listdir(out)) == ["first"]
    assert sorted(os.listdir(out / "first")) == ["report.html", "results.json", "tables.md",
                                                 "tables.tex"]
    json.loads((out / "first" / "results.json").read_text())


@pytest.mark.filterwarnings("ignore:Label not 13 is present")  # a rare label, absent here
def test_own_estimators_from_the_command_line(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mymodels.py").write_text(
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.multiclass import OneVsRestClassifier\n"
        "ovr = OneVsRestClassifier(LogisticRegression(max_iter=300))\n"
        "class Ridge(OneVsRestClassifier):\n"
        "    def __init__(self, estimator=None):\n"
        "        from sklearn.linear_model import RidgeClassifier\n"
        "        super().__init__(estimator or RidgeClassifier())\n"
        "classifiers = [('from py', ovr)]\n"
        "from sklearn.ensemble import RandomForestClassifier\n"
        "forest = RandomForestClassifier(n_estimators=5, random_state=0)\n")
    (tmp_path / "specs.json").write_text(json.dumps([
        {"name": "from json", "class": "sklearn.multiclass:OneVsRestClassifier",
         "params": {"estimator": {"class": "sklearn.linear_model:LogisticRegression",
                                  "params": {"C": 0.5, "max_iter": 300}}}}]))
    one = str(data_dir / "first.svm")
    assert main(["study", "--dataset", one, "--classifiers", "knn", "--classifier",
                 "OvR=mymodels:ovr", "--classifier", "ridge=mymodels:Ridge", "--classifier",
                 "forest=mymodels:forest", "--classifier",
                 "neighbours=sklearn.neighbors:KNeighborsClassifier", "--folds", "2",
                 "--quiet", "--out", "a"]) == 0
    result = json.loads((tmp_path / "a" / "results.json").read_text())
    assert result["classifiers"] == ["knn", "OvR", "ridge", "forest", "neighbours"]
    assert "OvR" in capsys.readouterr().out
    for source, name, shown in (
            ("specs.json", "from json",
             "OneVsRestClassifier(estimator=LogisticRegression(C=0.5, max_iter=300))"),
            ("mymodels.py", "from py",
             "OneVsRestClassifier(estimator=LogisticRegression(max_iter=300))")):
        assert main(["study", "--dataset", one, "--classifiers", "", "--classifiers-from",
                     source, "--folds", "2", "--quiet", "--out", "b"]) == 0
        result = json.loads((tmp_path / "b" / "results.json").read_text())
        assert result["classifiers"] == [name]
        assert result["params"][name] == {"estimator": shown}


@pytest.mark.parametrize("extra, message", [
    (["--classifier", "nameonly"], "--classifier expects NAME=module:Class"),
    (["--classifier", "x=nomodule_here:Thing"], "cannot import 'nomodule_here'"),
    (["--classifier", "x=sklearn.linear_model:Nope"], "has no attribute 'Nope'"),
    (["--classifier", "x=sklearn.linear_model:LinearRegression"],
     "neither decision_function nor predict_proba"),
    (["--classifier", "kNN=sklearn.linear_model:LogisticRegression"], "taken by a built-in"),
    (["--classifier", "one=sklearn.linear_model:LogisticRegression"],
     "classifier 'one' failed its trial fit on "),  # single-label: refused before any fold
    (["--classifiers-from", "missing.json"], "no such file"),
    (["--classifiers-from", "bad.json"], "must hold a JSON list"),
    (["--classifiers-from", "deep.json"], "deep.json: JSON nested too deeply"),
    (["--classifiers-from", "syntax.py"], "syntax.py: line 1: '(' was never closed"),
    (["--set", "knn.k=" + "[" * 100000], "--set knn.k: its JSON value is nested too deeply"),
    (["--dataset", "yeast,yeast"], "two data sets are named 'yeast'"),
])
def test_study_option_errors_are_one_line(extra, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text('{"name": "x"}')
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "syntax.py").write_text("classifiers = [(\n")
    proc = subprocess.run([sys.executable, "-m", "fastrank", "study", "--folds", "2",
                           "--classifiers", "knn", *extra, "--out", "o"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr and not (tmp_path / "o").exists()


def _study_on_a_terminal(tmp_path, dataset):
    """Run a small study with stderr on a pseudo-terminal; return what the terminal got."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # 100 columns
    proc = subprocess.Popen([sys.executable, "-m", "fastrank", "study", "--dataset", dataset,
                             "--classifiers", "knn,mlknn", "--folds", "3", "--out",
                             str(tmp_path / "o")],
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the terminal's other end closed
            break
        if not data:
            break
        chunks.append(data)
    proc.communicate(timeout=300)
    os.close(master)
    assert proc.returncode == 0
    return b"".join(chunks).decode()


def test_progress_bar_on_a_terminal(tmp_path, data_dir):
    seen = _study_on_a_terminal(tmp_path, str(data_dir / "first.svm"))
    assert "6/6" in seen and "100%" in seen and "\r" in seen
    assert "[1/6]" not in seen  # a bar, not lines
    assert "<" in seen  # tqdm's elapsed<remaining (the ETA)
    assert "report: figure 21/21" in seen and "report: writing" in seen  # on the bar


def test_progress_lines_without_a_terminal(tmp_path, data_dir):
    proc = subprocess.run([sys.executable, "-m", "fastrank", "study", "--dataset",
                           str(data_dir / "first.svm"), "--classifiers",
                           "knn,mlknn", "--folds", "3", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 0 and "\r" not in proc.stderr
    assert lines[0].startswith("[1/6] kNN: fold 1/3") and lines[5].startswith("[6/6]")
    # then what the report is making, ending with the files written
    assert all(line.startswith("report: ") for line in lines[6:])
    assert lines[6] == "report: figure 1/21 (ties)"  # ties, 19 metrics, the types' CD
    assert lines[-1] == f"report: writing {4 + 2 * 21} files into {tmp_path / 'o'}"


def _read_terminal(master):
    """Every byte written before the terminal's other end closed (then EIO), as text with
    the terminal's line ends undone; closes ``master``."""
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_no_bar_is_drawn_before_the_first_task():
    """A study refused before its first fold (a classifier failing its trial fit) leaves no
    empty bar above its error line: the bar is drawn at the first task."""
    import pty

    from fastrank._cli._study import _Progress
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as stream:
        _Progress(4, quiet=False, stream=stream).close()
        stream.write("error\n")
    assert _read_terminal(master) == "error\n"


def test_progress_falls_back_to_lines_without_tqdm(monkeypatch):
    import pty

    from fastrank._cli._study import _Progress
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as stream:
        monkeypatch.setitem(sys.modules, "tqdm", None)  # as if not installed
        progress = _Progress(2, quiet=False, stream=stream)
        assert stream.isatty() and progress.bar is None
        progress("first")
        progress("second", done=2)
        progress.close()
    assert _read_terminal(master) == "[1/2] first\n[2/2] second\n"


def test_an_abandoned_computation_prints_no_more_progress():
    """Each progress line is one write, and once the command is interrupted the computing
    thread (left running) prints nothing more: the stop line cannot land inside a progress
    line, nor be followed by one."""
    import signal
    import threading
    import time

    from fastrank._cli._study import _Progress
    from fastrank._cli._threads import _interruptible

    writes = []

    class Stream:
        def write(self, text):
            writes.append(text)
            return len(text)

        def flush(self):
            pass

        def isatty(self):
            return False

    progress = _Progress(10**9, quiet=False, stream=Stream())
    stop = threading.Event()

    def compute():
        deadline = time.monotonic() + 60  # bounded, should the interrupt never come
        while not stop.is_set() and time.monotonic() < deadline:
            progress("VG-RAM WNN: fold 1/10")
            time.sleep(0.001)

    # Python's own Ctrl-C handler, whatever a library imported by an earlier test installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Timer(0.2, signal.pthread_kill,
                    (threading.main_thread().ident, signal.SIGINT)).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _interruptible(compute)
        written = len(writes)
        time.sleep(0.2)  # the abandoned thread is still computing
        assert written > 0 and len(writes) == written
    finally:
        stop.set()
        signal.signal(signal.SIGINT, previous)
    assert all(w.endswith("\n") and w.count("\n") == 1 for w in writes)


def test_every_option_has_help_and_states_its_default_once():
    from fastrank.__main__ import build_parser
    parser = build_parser()
    for name, command in parser.commands.items():
        text = command.format_help()
        for action in command._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                assert action.help, f"fastrank {name} {action.option_strings[0]} has no help"
        for block in text.split("\n  -")[1:]:  # one option's entry each
            assert block.count("default") <= 1, (name, block)
    assert "(default: None)" not in "".join(c.format_help() for c in parser.commands.values())
