"""Production latency: ``decision_function`` on one document at a time, the model loaded
from a file written by ``save`` (its arrays memory-mapped), on 1 and 2 OpenMP threads.

Run: flock /tmp/fastrank-bench.lock pytest benchmarks/bench_latency.py --benchmark-only -s
Data: the embedded yeast (dense, 103 features, 14 labels; first 2000 documents train) and
Reuters-21578 (ModApte test file in ../shared/data, never committed; tf-idf of
fastrank.text.TfidfIndexer fitted on the first 2400 documents: sparse CSR features).

Each round is one call on a 1-row matrix, the next test document in turn (the tf-idf
transform of a raw text is not timed); 30 calls warm up the process (and the mapped pages)
first. The 50th and 99th percentiles of the round times are reported (``extra_info``
p50_us / p99_us, and printed). Classifiers: the study's thesis configurations (kNN with
k = 10 here; ML-kNN k = 10, s = 1; VG-RAM 1024 neurons x 1024 synapses, VG-RAM-COR 1024 x
512) and CalibratedClassifier(isotonic, 5-fold) around ML-kNN. A CalibratedClassifier
cannot be saved (it wraps an arbitrary estimator), so its final ML-kNN is the one loaded
from the saved ML-kNN file and its isotonic calibrators are fitted in the process.
"""
import json
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from fastrank import datasets
from fastrank.calibration import CalibratedClassifier
from fastrank.neighbors import KNN, MLkNN
from fastrank.text import TfidfIndexer
from fastrank.wnn import VGRAM, VGRAMCor

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
WARMUP = 30
ROUNDS = 400
ESTIMATORS = {
    "KNN": (KNN, {"k": 10}),
    "MLkNN": (MLkNN, {"k": 10, "s": 1.0}),
    "VGRAM": (VGRAM, {"n_neurons": 1024, "n_synapses": 1024, "random_state": 0}),
    "VGRAMCor": (VGRAMCor, {"n_neurons": 1024, "n_synapses": 512, "random_state": 0}),
}


def _yeast():
    d = datasets.load("yeast")
    return d.X.toarray(), d.Y, 2000  # yeast is dense data held as CSR


def _reuters():
    d = datasets.load_text(DATA / "reuters" / "reuters21578-modapte-test.json")
    n_train = 2400
    indexer = TfidfIndexer().fit(d.texts[:n_train])
    X = indexer.transform(d.texts)
    keep = np.asarray(d.Y[:n_train].sum(axis=0)).ravel() > 0  # labels seen in training
    Y = d.Y[:, np.flatnonzero(keep)]
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.uint8)
    return X, Y, n_train


DATASETS = {"yeast": _yeast, "reuters": _reuters}
_cache = {}


def _loaded(name, estimator, tmp_dir):
    """(model loaded from its saved file, test documents), fitted once per data set."""
    key = (name, estimator)
    if key not in _cache:
        X, Y, n_train = _cache.setdefault(name, DATASETS[name]())
        if estimator == "CalibratedClassifier":
            base, _ = _loaded(name, "MLkNN", tmp_dir)
            model = CalibratedClassifier(MLkNN(k=10), cv=5, random_state=0).fit(
                X[:n_train], Y[:n_train])
            model.estimator_ = base  # the final classifier, as loaded from its file
        else:
            cls, params = ESTIMATORS[estimator]
            path = Path(tmp_dir) / f"{name}-{estimator}.npz"
            cls(**params).fit(X[:n_train], Y[:n_train]).save(path)
            model = cls.load(path)
        _cache[key] = (model, X[n_train:])
    return _cache[key]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("estimator", [*ESTIMATORS, "CalibratedClassifier"])
@pytest.mark.parametrize("name", list(DATASETS))
def test_single_document_latency(benchmark, model_dir, name, estimator, threads):
    model, X_test = _loaded(name, estimator, model_dir)
    rows = [X_test[i:i + 1] for i in range(X_test.shape[0])]
    turn = iter(range(10**9))

    def next_document():
        return (rows[next(turn) % len(rows)],), {}

    benchmark.group = f"single-document decision_function, {name}"
    with threadpool_limits(limits=threads, user_api="openmp"):
        for _ in range(WARMUP):
            model.decision_function(*next_document()[0])
        benchmark.pedantic(model.decision_function, setup=next_document, rounds=ROUNDS,
                           iterations=1)
    times = np.array(benchmark.stats.stats.data) * 1e6
    p50, p99 = np.percentile(times, [50, 99])
    benchmark.extra_info.update(dataset=name, estimator=estimator, threads=threads,
                                p50_us=round(float(p50), 1), p99_us=round(float(p99), 1))
    print(f"\n{name} {estimator} threads={threads}: p50 {p50:.1f} us, p99 {p99:.1f} us")
    assert model.decision_function(rows[0]).shape == (1, model.classes_.shape[0])


def test_calibrated_classifier_scores_equal_its_parts(model_dir):
    """The assembled CalibratedClassifier computes what its loaded parts compute."""
    model, X_test = _loaded("yeast", "CalibratedClassifier", model_dir)
    want = model.calibrator_.transform(model.estimator_.decision_function(X_test[:5]))
    assert np.array_equal(model.decision_function(X_test[:5]), want)



RSS_CHILD = r"""
import json, sys
import numpy as np
from fastrank import datasets
from fastrank.wnn import VGRAM

def status(field):  # bytes; VmHWM is this process image's peak (ru_maxrss survives exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))

def rss():
    return status("VmRSS:")

def peak():
    return status("VmHWM:")

X = datasets.load("yeast").X[:64]
out = {"rss_start": rss(), "peak_start": peak()}
model = VGRAM.load(sys.argv[1])
out.update(rss_loaded=rss(), peak_loaded=peak())
model.decision_function(X)
out.update(rss_predicted=rss(), peak_predicted=peak())
base = model.memory_
while base.base is not None and not isinstance(base, np.memmap):
    base = base.base
out["memory_mapped"] = isinstance(base, np.memmap)
print(json.dumps(out))
"""


def test_loading_a_large_vgram_model_maps_its_file(tmp_path):
    """(Linux: reads /proc/self/status.) A VG-RAM model of a few hundred MB (1024 neurons x 2048
    synapses x 1200 documents), loaded in a fresh process: the peak resident memory grows by about
    the file's size once a prediction has touched every page, never twice that (the arrays are
    mapped, not copied)."""
    import subprocess
    import sys

    d = datasets.load("yeast")
    path = tmp_path / "large-vgram.npz"
    VGRAM(n_neurons=1024, n_synapses=2048, random_state=0).fit(d.X[:1200], d.Y[:1200]) \
        .save(path)
    size = path.stat().st_size
    run = subprocess.run([sys.executable, "-c", RSS_CHILD, str(path)], capture_output=True,
                         text=True, check=True)
    m = json.loads(run.stdout)
    grown = {k: m[f"peak_{k}"] - m["peak_start"] for k in ("loaded", "predicted")}
    print(f"\nfile {size / 2**20:.0f} MiB; peak RSS growth: after load "
          f"{grown['loaded'] / 2**20:.0f} MiB, after predicting 64 documents "
          f"{grown['predicted'] / 2**20:.0f} MiB; memory-mapped: {m['memory_mapped']}")
    assert m["memory_mapped"]
    assert grown["predicted"] < 1.25 * size
