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
    assert capsys.readouterr().out.splitlines() == ["  standard: 3 1 1", "  standard: 1 1 3"]
    npy = tmp_path / "s.npy"
    np.save(npy, np.array([[2.0, 1.0]]))
    assert main(["rank", str(npy), "--method", "dense"]) == 0
    assert capsys.readouterr().out.strip() == "dense: 1 2"


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
