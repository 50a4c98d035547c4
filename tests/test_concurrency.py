"""Every kernel-backed public function gives identical results when called from 8 Python
threads at once, and leaves the process' thread pools (OpenMP, BLAS) as it found them;
estimators give identical results on 1 and 2 OpenMP threads."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info, threadpool_limits

import fastrank
from fastrank import metrics as M
from fastrank.calibration import Isotonic
from fastrank.text import TfidfIndexer

N_THREADS = 8


def _data():
    rng = np.random.default_rng(0)
    X = rng.random((300, 40))
    X[X < 0.6] = 0.0
    Y = (rng.random((300, 6)) < 0.3).astype(np.uint8)
    S = np.round(rng.random((300, 6)) * 4) / 4
    return X, Y, S


X, Y, S = _data()
FITTED = {cls.__name__: cls(**kw).fit(X[:200], Y[:200]) for cls, kw in [
    (fastrank.KNN, {"k": 7}), (fastrank.MLkNN, {"k": 5}),
    (fastrank.VGRAM, {"n_neurons": 32, "n_synapses": 64, "random_state": 1}),
    (fastrank.VGRAMCor, {"n_neurons": 32, "n_synapses": 64, "random_state": 1})]}
TEXTS = [" ".join(f"w{(i * j) % 37}" for j in range(1, 9)) for i in range(60)]

CALLS = {
    "rank ordinal": lambda: fastrank.rank(S, "ordinal", random_state=3),
    "rank modified csr": lambda: fastrank.rank(sp.csr_matrix(S), "modified"),
    "tie_groups": lambda: (lambda g: (g.order, g.end, g.n_groups))(fastrank.tie_groups(S)),
    "evaluate": lambda: M.evaluate(Y, S, ties=M.ALL_TIES, n_draws=10).values,
    "coverage ordinal": lambda: M.coverage(Y, S, ties="ordinal"),
    "cutoff ordinal": lambda: M.cutoff(S, Y, ties="ordinal", random_state=5),
    "auc": lambda: M.auc(Y, S),
    "roc_curve": lambda: M.roc_curve(Y[:, 0], S[:, 0]),
    "topk_cosine dense": lambda: fastrank.topk_cosine(X[200:], X[:200], 9),
    "topk_cosine csr": lambda: fastrank.topk_cosine(sp.csr_matrix(X[200:]), X[:200], 9),
    "isotonic": lambda: Isotonic().fit(S[:, 0], Y[:, 0]).transform(S[:, 1]),
    "tfidf": lambda: TfidfIndexer().fit_transform(TEXTS).toarray(),
    **{f"{name}.decision_function": (lambda m=m: m.decision_function(X[200:]))
       for name, m in FITTED.items()},
    "KNN fit+predict": lambda: fastrank.KNN(k=3).fit(X[:100], Y[:100]).decision_function(X[250:]),
}


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    return [np.asarray(value)]


def _same(a, b):
    fa, fb = _flat(a), _flat(b)
    return len(fa) == len(fb) and all(x.dtype == y.dtype and x.shape == y.shape
                                      and np.array_equal(x, y, equal_nan=True)
                                      for x, y in zip(fa, fb))


def _pools():
    return sorted((p["user_api"], p["internal_api"], p["num_threads"]) for p in threadpool_info())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_eight_threads_at_once_give_identical_results(name):
    call = CALLS[name]
    want = call()
    before = _pools()
    start = threading.Barrier(N_THREADS)

    def run(_):
        start.wait()
        return [call() for _ in range(3)]

    with ThreadPoolExecutor(N_THREADS) as pool:
        results = [r for batch in pool.map(run, range(N_THREADS)) for r in batch]
    assert all(_same(r, want) for r in results), name
    assert _pools() == before


def test_all_functions_at_once_leave_the_thread_pools_alone():
    want = {name: call() for name, call in CALLS.items()}
    before = _pools()
    names = sorted(CALLS) * 2
    with ThreadPoolExecutor(N_THREADS) as pool:
        got = list(pool.map(lambda n: (n, CALLS[n]()), names))
    assert all(_same(value, want[name]) for name, value in got)
    assert _pools() == before


@pytest.mark.parametrize("name", sorted(FITTED))
def test_estimators_do_not_depend_on_the_openmp_thread_count(name):
    cls = type(FITTED[name])
    params = FITTED[name].get_params()
    out = []
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="openmp"):
            model = cls(**params).fit(X[:200], Y[:200])
            out.append(model.decision_function(X[200:]))
    assert np.array_equal(out[0], out[1])


@pytest.mark.parametrize("sig, code, word", [("SIGINT", 130, "interrupted"),
                                             ("SIGTERM", 143, "terminated")])
def test_the_study_stops_at_once_during_a_long_kernel_call(tmp_path, sig, code, word):
    """Ctrl-C / SIGTERM while a VG-RAM kernel call runs (its fit, then its prediction, take
    tens of seconds each with these parameters): the command exits within a few seconds, not
    when the kernel returns, with one line, its exit code and no output folder. On one
    thread the tasks are recorded as they finish, so the first progress line comes as
    VG-RAM's first fit starts (a pool records its outcomes in order, here all four after the
    last task: the signal would then come during the report, or after the program ends on a
    machine too busy to read the line in time)."""
    import signal
    import subprocess
    import sys
    import time
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fastrank", "study", "--classifiers", "knn,vgram", "--folds",
         "2", "--ties", "ordinal", "--n-jobs", "1", "--set", "vgram.n_neurons=4096", "--set",
         "vgram.n_synapses=2048", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = proc.stderr.readline()  # kNN's first fold is done: VG-RAM's fit starts
        assert first.startswith("[1/4] kNN"), first
        time.sleep(0.5)
        start = time.perf_counter()
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=120)
        seconds = time.perf_counter() - start
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert err.strip().splitlines()[-1] == f"fastrank study: {word}"
    assert "Traceback" not in err and not out.exists()
    assert seconds < 3.0, f"{sig} took {seconds:.1f} s to end the study"
