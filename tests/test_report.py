"""Study outputs: Markdown tables, the self-contained HTML report (rendered by headless
Chromium), atomic writing, and the ``fastrank study/evaluate/datasets`` commands."""
import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

from fastrank.__main__ import main
from fastrank.metrics import METRIC_KEYS, evaluate
from fastrank.report import render_html, render_markdown, write_atomic, write_study
from fastrank.study import StudyResult, run_study

SMALL_ARGS = ["--folds", "2", "--set", "vgram.n_neurons=8", "--set", "vgram.n_synapses=32",
              "--set", "vgramcor.n_neurons=8", "--set", "vgramcor.n_synapses=32"]


@pytest.fixture(scope="module")
def small_study():
    return run_study("yeast", folds=3, random_state=0,
                     params={"vgram": {"n_neurons": 8, "n_synapses": 32},
                             "vgramcor": {"n_neurons": 8, "n_synapses": 32}})


def test_markdown_has_every_table(small_study):
    md = render_markdown(small_study)
    for title in ("Data set", "Configuration", "Ties in the beliefs", "Summary of the t-tests",
                  "Appropriate ranking per metric (Table 5.3)", "Time per fold"):
        assert f"### {title}" in md
    for m in METRIC_KEYS:
        assert f"### t statistic, ordinal vs others: {m}" in md
        assert f"| {m} | " in md
    assert md.count("| kNN |") >= 20
    # every row of a table has as many (unescaped) separators as its header
    import re
    for block in md.split("\n\n"):
        rows = [l for l in block.splitlines() if l.startswith("|")]
        if rows:
            seps = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            assert len(seps) == 1, block


def test_html_embeds_one_chart_per_metric(small_study):
    page = render_html(small_study)
    assert page.count("<img class='chart'") == 19
    assert page.count("src='data:image/png;base64,") == 19
    assert "http" not in page.replace("http-equiv", "")  # self-contained: nothing fetched


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

PROBE = """<script>window.addEventListener('load', () => {
 const imgs = [...document.querySelectorAll('img.chart')];
 const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100);
 document.body.insertAdjacentHTML('beforeend',
   '<div id="probe">' + ok.length + '/' + imgs.length + '</div>');
});</script>"""


def _chromium(*args):
    if CHROMIUM is None:
        raise RuntimeError("Debian's chromium is needed for the report test (.ci/run installs "
                           "it: apt-get install chromium)")
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=120)


def test_report_renders_in_headless_chromium(small_study, tmp_path):
    """The browser decodes all 19 embedded charts, and the screenshot is not blank."""
    page = render_html(small_study)
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _chromium("--virtual-time-budget=10000", "--dump-dom", probed.as_uri()).stdout
    assert '<div id="probe">19/19</div>' in dom
    report = tmp_path / "report.html"
    report.write_text(page, encoding="utf-8")
    shot = tmp_path / "shot.png"
    _chromium("--window-size=1000,1600", f"--screenshot={shot}", report.as_uri())
    import matplotlib.image
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1600, 1000)
    coloured = (pixels.max(axis=2) - pixels.min(axis=2)) > 0.3  # bars, not text or white
    assert coloured.mean() > 0.01


def test_write_study_outputs(small_study, tmp_path):
    paths = write_study(small_study, tmp_path / "out")
    assert sorted(os.path.basename(p) for p in paths) == ["report.html", "results.json",
                                                        "tables.md"]
    back = StudyResult.from_json((tmp_path / "out" / "results.json").read_text())
    assert np.array_equal(back.values["knn"], small_study.values["knn"])
    assert not [f for f in os.listdir(tmp_path / "out") if f.startswith(".fastrank-")]


def test_write_atomic_behaves_like_open_for_permissions_and_links(tmp_path):
    """New files: 0666 less the umask (not a temporary file's 0600); existing files keep
    their mode; a symbolic link is written through; a non-regular file (here /dev/null) is
    written directly; bytes paths work. The umask is never changed on the way."""
    previous = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.md", "x")
        os.umask(0o077)
        write_atomic(tmp_path / "b.md", "x")
        assert os.umask(0o077) == 0o077
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "a.md").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "b.md").st_mode) == 0o600
    os.chmod(tmp_path / "a.md", 0o640)
    write_atomic(tmp_path / "a.md", "y")
    assert stat.S_IMODE(os.stat(tmp_path / "a.md").st_mode) == 0o640
    os.symlink(tmp_path / "a.md", tmp_path / "link.md")
    write_atomic(tmp_path / "link.md", "through the link")
    assert os.path.islink(tmp_path / "link.md")
    assert (tmp_path / "a.md").read_text() == "through the link"
    write_atomic("/dev/null", "discarded")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    write_atomic(os.fsencode(tmp_path / "c.md"), "bytes path")
    assert (tmp_path / "c.md").read_text() == "bytes path"
    assert sorted(os.listdir(tmp_path)) == ["a.md", "b.md", "c.md", "link.md"]


def test_write_atomic_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "x.txt"
    with pytest.raises(TypeError):
        write_atomic(target, 12345)  # not text: fails while writing the temporary file
    assert os.listdir(tmp_path) == []
    write_atomic(target, "done")
    assert target.read_text() == "done"


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "fastrank", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_cli_study_end_to_end(tmp_path):
    out = tmp_path / "study"
    proc = run_cli("study", *SMALL_ARGS, "--seed", "5", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Summary of the t-tests" in proc.stdout and "Table 5.3" in proc.stdout
    assert "[8/8] VG-RAM WNN-COR: fold 2/2" in proc.stderr
    result = json.loads((out / "results.json").read_text())
    assert result["random_state"] == 5 and result["folds"] == 2
    assert result["params"]["vgram"] == {"n_neurons": 8, "n_synapses": 32}
    assert (out / "report.html").stat().st_size > 10_000


@pytest.mark.parametrize("args, message", [
    (["--dataset", "no-such-set"], "unknown data set 'no-such-set'"),
    (["--dataset", "missing.arff"], "no such file: missing.arff"),
    (["--classifiers", "knn,svm"], "unknown classifier 'svm'"),
    (["--set", "vgram.n_neurons"], "--set expects CLASSIFIER.PARAM=VALUE"),
    (["--classifiers", "knn", "--set", "vgram.n_neurons=4"], "not in the study"),
    (["--set", "knn.k=-3"], "k"),
])
def test_cli_study_errors_are_one_line_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "study"
    proc = run_cli("study", "--folds", "2", *args, "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith("fastrank study: error:") and message in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert not out.exists()


def test_cli_study_on_a_corrupt_arff(tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a numeric\n@data\n1,2,3\n")
    proc = run_cli("study", "--dataset", str(bad), "--labels", "1", "--out",
                   str(tmp_path / "o"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "bad.arff" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_cli_evaluate_matches_the_library(tmp_path):
    rng = np.random.default_rng(0)
    y = (rng.random((30, 6)) < 0.3).astype(np.uint8)
    s = np.round(rng.random((30, 6)) * 4) / 4
    np.save(tmp_path / "y.npy", y)
    np.savetxt(tmp_path / "s.csv", s, delimiter=",")
    proc = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                   str(tmp_path / "s.csv"), "--json", "--seed", "4")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(
        evaluate(y, s, random_state=4).to_dict()))
    table = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                    str(tmp_path / "s.csv"), "--ties", "modified")
    assert table.returncode == 0 and "ranking_loss" in table.stdout


def test_cli_evaluate_shape_mismatch(tmp_path):
    np.save(tmp_path / "y.npy", np.zeros((3, 4), dtype=np.uint8))
    np.save(tmp_path / "s.npy", np.zeros((3, 5)))
    proc = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                   str(tmp_path / "s.npy"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "y_true has 4 labels, expected 5" in proc.stderr


def test_cli_datasets():
    assert main(["datasets"]) == 0
    proc = run_cli("datasets", "yeast")
    assert proc.returncode == 0
    assert "documents: 2417" in proc.stdout and "labels: 14" in proc.stdout


def test_html_without_matplotlib_says_so(small_study, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    page = render_html(small_study)
    assert "Charts omitted: matplotlib is not installed" in page
    assert "<img" not in page and "Summary of the t-tests" in page


def test_cli_evaluate_top_k_cutoff_and_spaced_ties(tmp_path):
    rng = np.random.default_rng(1)
    y = (rng.random((20, 5)) < 0.4).astype(np.uint8)
    s = np.round(rng.random((20, 5)) * 3) / 3
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "s.npy", s)
    proc = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                   str(tmp_path / "s.npy"), "--cutoff", "2", "--ties", "dense, modified",
                   "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(
        evaluate(y, s, ties=("dense", "modified"), cutoff=2).to_dict()))
