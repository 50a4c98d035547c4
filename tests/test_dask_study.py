"""The tie study on a real Dask cluster (``run_study(scheduler=...)``, ``fastrank study
--scheduler``): byte-identical to the run in process, also when a worker is killed in the
middle of the study; an unreachable scheduler is one error line and no output."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter

import distributed
import pytest

from fastrank.datasets import Dataset, make_multilabel
from fastrank.study import run_study

SMALL = {"vgram": {"n_neurons": 16, "n_synapses": 64},
         "vgramcor": {"n_neurons": 16, "n_synapses": 64}}
SMALL_ARGS = [arg for c, p in SMALL.items() for k, v in p.items()
              for arg in ("--set", f"{c}.{k}={v}")]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def task_names(stream):
    """How many tasks of each study function ran (a key is 'function-name-uuid')."""
    return Counter(t["key"].rsplit("-", 5)[0] for t in stream)


def test_cluster_run_equals_the_run_in_process(client):
    kwargs = dict(folds=3, params=SMALL, random_state=11,
                  ties=("ordinal", "dense", "standard", "modified", "expected"))
    here = run_study("yeast", **kwargs)
    messages = []
    with distributed.get_task_stream(client) as stream:
        there = run_study("yeast", scheduler=client, progress=messages.append, **kwargs)
    assert there.to_json() == here.to_json()
    for c in here.classifiers:  # the arrays too, to the bit
        assert there.values[c].tobytes() == here.values[c].tobytes()
        assert there.stderr[c].tobytes() == here.stderr[c].tobytes()
    # the data set sent once, features once per fold and shared by its 4 classifier tasks,
    # on both workers
    assert task_names(stream.data) == {"identity": 1, "_fold_task": 3, "_classifier_task": 12}
    assert len({t["worker"] for t in stream.data}) == 2
    # the progress callback: once per classifier x fold, as tasks complete
    assert all(m.endswith("s)") and "(fit " in m and ", predict " in m for m in messages)
    assert Counter(m.split(" (")[0] for m in messages) == Counter(
        f"{name}: fold {f}/3" for name in ("kNN", "ML-kNN", "VG-RAM WNN", "VG-RAM WNN-COR")
        for f in (1, 2, 3))
    # every timing was measured by a task
    assert all(len(v) == 3 and None not in v for c in here.classifiers
               for v in there.timings[c].values())
    assert len(there.timings["indexing"]) == 3 and None not in there.timings["indexing"]


def text_dataset(n=300):
    """Raw text from a synthetic collection: each document lists its terms as words (letters
    only, since the indexer drops digits), so the study fits tf-idf per training fold."""
    ds = make_multilabel(n_documents=n, n_labels=6, n_features=400, cardinality=1.5,
                         doc_length=30, random_state=5)

    def word(j):
        letters = "zz"
        while True:
            j, r = divmod(j, 26)
            letters += chr(ord("a") + r)
            if j == 0:
                return letters

    texts = [" ".join(word(j) for j in ds.X[i].indices) for i in range(n)]
    return Dataset(None, ds.Y, texts=texts, name="synthetic-text")


def test_raw_text_with_calibration_on_the_cluster(client):
    ds = text_dataset()
    kwargs = dict(classifiers=("knn", "mlknn"), folds=3, calibrate=True, random_state=2)
    here = run_study(ds, **kwargs)
    with distributed.get_task_stream(client) as stream:
        there = run_study(ds, scheduler=client, **kwargs)
    assert there.to_json() == here.to_json()
    assert there.calibration["mlknn"] and "knn" not in there.calibration  # kNN has no grid
    assert there.params["mlknn"]["k"] == min(
        here.calibration["mlknn"], key=lambda t: t["ranking_loss"])["params"]["k"]
    names = task_names(stream.data)
    assert names["_calibration_task"] == 2 and names["_fold_task"] == 3
    assert names["_classifier_task"] == 6


def test_a_worker_killed_mid_study_changes_nothing(client):
    """A worker process is killed (SIGKILL) while it runs the study's tasks; Dask runs its
    tasks again elsewhere (and on the worker its nanny restarts), with the same result."""
    kwargs = dict(folds=3, params=SMALL, random_state=7)
    here = run_study("yeast", **kwargs)
    scheduler = client.cluster.scheduler  # the LocalCluster's scheduler, in this process
    pids = client.run(os.getpid)
    killed = {}
    runs = Counter()

    class CountRuns(distributed.diagnostics.plugin.SchedulerPlugin):
        def transition(self, key, start, finish, *args, **kwargs):
            if finish == "processing":
                runs[key] += 1

    scheduler.add_plugin(CountRuns(), name="count-runs")

    def kill_a_busy_worker(message):
        busy = [w for w, keys in client.processing().items() if keys]
        if busy and not killed:  # both workers are busy until the last tasks
            killed[busy[0]] = message
            os.kill(pids[busy[0]], signal.SIGKILL)

    try:
        there = run_study("yeast", scheduler=client, progress=kill_a_busy_worker, **kwargs)
    finally:
        scheduler.remove_plugin(name="count-runs")
    assert killed, "no worker was busy when the first task completed"
    assert there.to_json() == here.to_json()
    (address,) = killed
    assert address not in scheduler.workers  # it is gone for good (the restart is a new one)
    assert any(n > 1 for n in runs.values()), "no task was run again"
    client.wait_for_workers(2, timeout=30)
    assert pids[address] not in client.run(os.getpid).values()


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "fastrank", "study", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_cli_local_cluster_writes_the_same_results_json(tmp_path):
    args = ["--folds", "3", "--seed", "4", *SMALL_ARGS]
    here = run_cli(*args, "--out", "here", cwd=tmp_path)
    there = run_cli(*args, "--out", "there", "--scheduler", "local:2", cwd=tmp_path)
    assert here.returncode == 0 and there.returncode == 0, there.stderr
    assert (tmp_path / "there" / "results.json").read_bytes() == \
        (tmp_path / "here" / "results.json").read_bytes()
    assert json.loads((tmp_path / "there" / "results.json").read_text())["folds"] == 3
    progress = [line for line in there.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 12 and progress[-1].startswith("[12/12]")


def free_port():
    """A TCP port on the loopback on which nothing listens (just released by the OS)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_address_fails_at_once_not_after_the_timeout():
    from fastrank.dask import connect

    address = f"tcp://127.0.0.1:{free_port()}"
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match=f"cannot reach the Dask scheduler at {address}"):
        with connect(address, timeout=60):
            pass
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("spec, message", [
    (None, "cannot reach the Dask scheduler at tcp://127.0.0.1:"),
    ("local:0", "scheduler must be 'local', 'local:N'"),
    ("cluster", "scheduler must be 'local', 'local:N'"),
])
def test_cli_bad_scheduler_is_one_line_exit_2_and_no_output(tmp_path, spec, message):
    spec = spec or f"tcp://127.0.0.1:{free_port()}"
    proc = run_cli("--folds", "2", "--scheduler", spec, "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("fastrank study: error: ") and message in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_run_study_checks_the_scheduler_before_computing():
    calls = []
    with pytest.raises(ValueError, match="scheduler must be"):
        run_study("yeast", folds=2, scheduler="local:-1", progress=calls.append)
    with pytest.raises(TypeError, match="scheduler must be a distributed.Client"):
        run_study("yeast", folds=2, scheduler=2, progress=calls.append)
    with pytest.raises(ValueError, match="n_jobs"):
        run_study("yeast", folds=2, n_jobs=0, scheduler="local:1", progress=calls.append)
    assert calls == []


def test_cli_without_dask_installed_is_one_line(tmp_path):
    """Dask is optional: without it (``distributed`` made unimportable), ``--scheduler``
    fails with one line naming the extra to install."""
    code = ("import sys; sys.modules['distributed'] = None; from fastrank.__main__ import main; "
            "sys.exit(main(['study', '--scheduler', 'local:1', '--out', 'out']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert 'pip install "fastrank-mlc[dask]"' in proc.stderr
    assert os.listdir(tmp_path) == []


def test_cli_classifiers_from_a_file_run_on_a_cluster(client, tmp_path, monkeypatch, capsys):
    """A --classifiers-from file's classes, and those of a module beside it that it imports,
    reach workers that cannot import either (started before the file was read, in another
    folder): they are sent by value. The results are those of the run in process."""
    from fastrank.__main__ import main
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "fastrank_test_mean_model.py").write_text(
        "import numpy as np\n"
        "from sklearn.base import BaseEstimator, ClassifierMixin\n"
        "class LabelMean(ClassifierMixin, BaseEstimator):\n"
        "    def fit(self, X, Y):\n"
        "        self.mean_ = np.asarray(Y).mean(axis=0)\n"
        "        return self\n"
        "    def decision_function(self, X):\n"
        "        return np.tile(self.mean_, (X.shape[0], 1))\n")
    (folder / "own.py").write_text(
        "from fastrank_test_mean_model import LabelMean\n"
        "class Shifted(LabelMean):\n"
        "    def decision_function(self, X):\n"
        "        return super().decision_function(X) + X[:, :self.mean_.size].toarray()\n"
        "classifiers = [('label mean', LabelMean()), ('shifted', Shifted())]\n")
    monkeypatch.chdir(tmp_path)
    unreachable = client.run(lambda: __import__("importlib.util").util.find_spec(
        "fastrank_test_mean_model") is None)
    assert all(unreachable.values())
    args = ["study", "--classifiers", "knn", "--classifiers-from", str(folder / "own.py"),
            "--folds", "2", "--ties", "ordinal,modified", "--quiet"]
    assert main([*args, "--out", "here"]) == 0
    assert main([*args, "--scheduler", client.scheduler.address, "--out", "there"]) == 0, \
        capsys.readouterr().err
    here = (tmp_path / "here" / "results.json").read_text()
    assert json.loads(here)["classifiers"] == ["knn", "label mean", "shifted"]
    assert (tmp_path / "there" / "results.json").read_text() == here
