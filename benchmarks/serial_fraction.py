"""Serial fraction of fastrank's hot paths: the share of a call's wall time spent on one
thread while more are available, which caps the speed-up of every thread count (Amdahl).

Two estimates per hot path, on ``SERIAL_THREADS`` threads (default 2):

* ``phase``: the time outside fastrank's compiled kernels (every public function of the
  ``fastrank._ext`` modules is wrapped with a timer; the Python-level steps between kernel
  calls -- validation glue, output allocation, reductions in NumPy -- run on one thread),
  over the wall time. It misses the serial parts inside a kernel call.
* ``cpu``: from the parallelism ``P`` = process CPU time / wall time, ``(T - P) / (T - 1)``:
  every moment with one busy thread counts, inside kernels too. Idle OpenMP threads must
  sleep, not spin, so the script sets ``OMP_WAIT_POLICY=PASSIVE`` before fastrank loads;
  on a machine loaded by other processes a thread waiting for a core also counts as serial,
  so this estimate is an upper bound there (above 1: the process had less than one core).

The 1 -> T thread speed-up is printed beside them, with the load average: each hot path
runs on 1 then T threads in turn, ``SERIAL_ROUNDS`` rounds (default 3; the study one),
after a call of each to warm up, and the best call of each counts. The default study
runs its tasks on a Python thread pool, so it has the ``cpu`` estimate only.

The file written is in pytest-benchmark's layout (``render_results.py`` reads it): one
benchmark ``<hot path>[<threads>]`` per thread count, best of the rounds, with the
estimates in the T-thread benchmark's extra_info.

Hot paths: ``streaming_pass`` (the reference: ``S.sum(1)`` over T row blocks on T Python
threads, NumPy releasing the GIL; its speed-up is what memory bandwidth allows a pass over
the beliefs), ``evaluate`` (the four ranking types), ``rank`` (standard), each single ranking
metric (modified), VG-RAM ``decision_function`` (bibtex-shaped synthetic set, 500 test
documents), the default study. Sizes: ``SERIAL_ROWS`` x 1 000 float32 beliefs with 21
levels and ~1 % relevant labels (default 50 000 rows). ``SERIAL_SKIP_STUDY=1`` leaves the
study out; ``SERIAL_PATHS=rank,study`` runs only the hot paths named. Prints one JSON line
per hot path and writes them all to the file named by the
first argument.

Run: ``python benchmarks/serial_fraction.py results/xeon-2c/serial_fraction.json``
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import datetime  # noqa: E402
import importlib  # noqa: E402
import math  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

import fastrank  # noqa: E402
from fastrank import _parallel  # noqa: E402

OUT_FILE = sys.argv[1] if len(sys.argv) > 1 else "serial.json"
THREADS = int(os.environ.get("SERIAL_THREADS", 2))
ROWS = int(os.environ.get("SERIAL_ROWS", 50_000))
ROUNDS = int(os.environ.get("SERIAL_ROUNDS", 3))
KERNEL_MODULES = ("checks", "tie_counts", "tie_metrics", "tie_ranks", "tie_topk", "vgram",
                  "cosine_topk", "roc", "isotonic")


class KernelClock:
    """Wraps the public functions of the compiled modules; ``seconds`` accumulates the wall
    time of the outermost kernel calls."""

    def __init__(self):
        self.seconds, self.depth = 0.0, 0
        for name in KERNEL_MODULES:
            mod = importlib.import_module(f"fastrank._ext.{name}")
            for attr, f in list(vars(mod).items()):
                if not attr.startswith("_") and callable(f) and not isinstance(f, type):
                    setattr(mod, attr, self._timed(f))

    def _timed(self, f):
        def timed(*args, **kwargs):
            self.depth += 1
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.seconds += time.perf_counter() - t
        return timed


def measure(f, threads, clock, warm):
    """One call of ``f(threads)`` on that many threads, after one to warm up when ``warm``:
    (wall, kernel seconds, process CPU seconds)."""
    with _parallel.num_threads(threads):
        if warm:
            f(threads)
        clock.seconds = 0.0
        cpu, wall = time.process_time(), time.perf_counter()
        f(threads)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, clock.seconds, cpu


_POOLS = {}  # one pool per thread count, its threads started by the warm-up call


def streaming_pass(S, threads):
    """Row sums of S, its row blocks summed side by side on ``threads`` Python threads."""
    if threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(threads)
    blocks = np.array_split(S, threads)
    return np.concatenate(list(_POOLS[threads].map(lambda b: b.sum(1), blocks)))


def hot_paths():
    rng = np.random.default_rng(0)
    S = (rng.integers(0, 21, size=(ROWS, 1_000)) / 20).astype(np.float32)
    Y = rng.random(S.shape) < 0.01
    Y[np.arange(ROWS), rng.integers(0, S.shape[1], ROWS)] = True
    Y = Y.astype(np.uint8)
    M = fastrank.metrics
    paths = {"streaming_pass": lambda t: streaming_pass(S, t),
             "evaluate": lambda t: M.evaluate(Y, S),
             "rank": lambda t: fastrank.rank(S, "standard"),
             "one_error": lambda t: M.one_error(Y, S), "coverage": lambda t: M.coverage(Y, S),
             "ranking_loss": lambda t: M.ranking_loss(Y, S),
             "ap_position": lambda t: M.average_precision(Y, S),
             "ap_label": lambda t: M.average_precision(Y, S, per="label"),
             "r_precision": lambda t: M.r_precision(Y, S)}
    ds = fastrank.datasets.make_multilabel(7395, 159, 1836, random_state=0)
    model = fastrank.VGRAM().fit(ds.X[:4880], ds.Y[:4880])
    paths["vgram_predict"] = lambda t: model.decision_function(ds.X[4880:5380])
    if os.environ.get("SERIAL_SKIP_STUDY") != "1":
        paths["study"] = lambda t: fastrank.run_study(n_jobs=t)
    return paths


def machine_info():
    info = fastrank.show_config(mode="dict")
    cpu = info["cpu"]
    return {"fastrank": {"fastrank": info["fastrank"], "cpu_model": cpu["model"],
                         "logical_cpus": cpu["logical_cpus"],
                         "kernel_paths": info["kernel_paths"], "openmp": info["openmp"]},
            "load_average": list(os.getloadavg()),
            "command": shlex.join(["python", *sys.argv])}


def main():
    clock = KernelClock()
    run = {"machine_info": machine_info(), "benchmarks": [],
           "datetime": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    only = os.environ.get("SERIAL_PATHS")
    for name, f in hot_paths().items():
        if only and name not in only.split(","):
            continue
        rounds = 1 if name == "study" else ROUNDS
        load = list(os.getloadavg())
        one = many = (math.inf,)
        for r in range(rounds):  # 1 and T threads in turn: a burst of load hits both
            one = min(one, measure(f, 1, clock, warm=r == 0 < rounds - 1))
            many = min(many, measure(f, THREADS, clock, warm=r == 0 < rounds - 1))
        wall, kernel, cpu = many
        parallelism = cpu / wall
        rec = dict(threads=THREADS, rows=ROWS, speedup=round(one[0] / wall, 3),
                   serial_cpu=round(max(0.0, (THREADS - parallelism) / (THREADS - 1)), 4),
                   load_average_before=load)
        if name not in ("study", "streaming_pass"):
            rec["serial_phase"] = round(max(0.0, wall - kernel) / wall, 4)
        print(json.dumps(dict(op=name, seconds_1=one[0], seconds_t=wall, **rec)), flush=True)
        run["benchmarks"] += [
            {"name": f"{name}[1]", "stats": {"min": one[0]},
             "extra_info": {"threads": 1, "load_average_before": load}},
            {"name": f"{name}[{THREADS}]", "stats": {"min": wall}, "extra_info": rec}]
        with open(OUT_FILE, "w") as out:
            json.dump(run, out, indent=1)


if __name__ == "__main__":
    main()
