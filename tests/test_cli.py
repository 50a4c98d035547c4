"""The command line: output of the demo, one-line errors with exit code 2."""
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
