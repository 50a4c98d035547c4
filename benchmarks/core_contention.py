"""The speed-up a machine allows each hot path on T cores, beside the one fastrank gets.

``copies``: T processes, each running the hot path on its own 1/T of the rows on one thread,
started together (a barrier before each round); T times the time of one such process
running alone, over the time of the T together, is the speed-up the machine allows that
path with no OpenMP scheduling or serial step of fastrank's in the way (what the T cores
lose to each other: memory bandwidth, the shared cache, the clock). ``threads``: the same
path on all the rows in one process, 1 thread then T (best of three calls each). Where
``threads`` is close to ``copies``, the machine caps the speed-up, not fastrank.

Sizes: ``CONTENTION_ROWS`` x 1 000 float32 beliefs with 21 levels and ~1 % relevant labels
(default 200 000 rows), as in ``serial_fraction.py``. T: ``CONTENTION_THREADS`` (default:
the logical CPUs). ``CONTENTION_CALLS`` calls make one timed round (default 1): with few
rows, say 256 a copy (1 MB of beliefs, inside a core's own cache), and enough calls for a
round of a second, the copies measure what the cores lose to each other away from memory
and the shared cache (the clock, shared execution units). Hot paths: ``CONTENTION_PATHS``
(default ``streaming_pass,evaluate,rank,coverage,ranking_loss``; ``r_precision`` too).
OpenMP's wait policy is left to the environment. Prints one JSON line per hot path and
writes them all, in pytest-benchmark's layout (``render_results.py`` reads it), to the file
named by the first argument: per hot path ``<path>[1]`` and ``<path>[T]``
(one process, 1 and T threads), ``<path>_copies[T]`` (T copies together) and
``<path>_copy_alone[T]`` (T times one copy alone: the rows done one piece after another).

Run: ``python benchmarks/core_contention.py results/<machine>/core_contention.json``
"""
import json
import datetime
import multiprocessing as mp
import os
import shlex
import sys
import time
import timeit
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROWS = int(os.environ.get("CONTENTION_ROWS", 200_000))
THREADS = int(os.environ.get("CONTENTION_THREADS", os.cpu_count()))
CALLS = int(os.environ.get("CONTENTION_CALLS", 1))
PATHS = os.environ.get("CONTENTION_PATHS",
                       "streaming_pass,evaluate,rank,coverage,ranking_loss").split(",")


def data(rows, seed):
    rng = np.random.default_rng(seed)
    S = (rng.integers(0, 21, size=(rows, 1_000)) / 20).astype(np.float32)
    Y = rng.random(S.shape) < 0.01
    Y[np.arange(rows), rng.integers(0, S.shape[1], rows)] = True
    return Y.astype(np.uint8), S


def call(name, Y, S, threads=1):
    """The hot path ``name`` on (Y, S); the streaming pass sums row blocks on ``threads``
    Python threads (NumPy releases the GIL), the others run on fastrank's threads."""
    import fastrank
    M = fastrank.metrics
    pool = ThreadPoolExecutor(threads)
    blocks = np.array_split(S, threads)
    return {"streaming_pass": lambda: list(pool.map(lambda b: b.sum(1), blocks)),
            "evaluate": lambda: M.evaluate(Y, S),
            "rank": lambda: fastrank.rank(S, "standard"),
            "coverage": lambda: M.coverage(Y, S),
            "ranking_loss": lambda: M.ranking_loss(Y, S),
            "r_precision": lambda: M.r_precision(Y, S)}[name]


def best(f, repeat=3):
    """The best of ``repeat`` rounds of ``CALLS`` calls of f, after one call to warm up."""
    f()
    return min(timeit.repeat(f, number=CALLS, repeat=repeat))


def copy_worker(name, rows, seed, barrier, rounds, out):
    """One copy: its own rows on one thread, each round started at the barrier."""
    from fastrank import _parallel
    Y, S = data(rows, seed)
    f = call(name, Y, S)
    times = []
    with _parallel.num_threads(1):
        f()
        for _ in range(rounds):
            barrier.wait()
            t = time.perf_counter()
            for _ in range(CALLS):
                f()
            times.append(time.perf_counter() - t)
    out.put((seed, times))


def copies(name, n_copies, rows, rounds=3):
    """Per round, the slowest of n_copies processes started together: the best round."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n_copies), ctx.Queue()
    procs = [ctx.Process(target=copy_worker, args=(name, rows, s, barrier, rounds, out))
             for s in range(n_copies)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return min(max(times[r] for _, times in results) for r in range(rounds))


def benchmark_layout(records):
    """The records as pytest-benchmark's JSON: one benchmark per time, the record's figures
    in each one's extra_info."""
    import fastrank
    info = fastrank.show_config(mode="dict")
    bench = []
    for rec in records:
        t = rec["threads"]
        for name, seconds in ((f"{rec['op']}[1]", rec["seconds_1"]),
                              (f"{rec['op']}[{t}]", rec["seconds_t"]),
                              (f"{rec['op']}_copies[{t}]", rec["copies_together"]),
                              (f"{rec['op']}_copy_alone[{t}]", t * rec["copy_alone"])):
            bench.append({"name": name, "stats": {"min": seconds}, "extra_info": rec})
    return {"machine_info": {
                "fastrank": {"fastrank": info["fastrank"], "cpu_model": info["cpu"]["model"],
                             "logical_cpus": info["cpu"]["logical_cpus"],
                             "kernel_paths": info["kernel_paths"], "openmp": info["openmp"]},
                "command": shlex.join(["python", *sys.argv])},
            "datetime": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "benchmarks": bench}


def main():
    from fastrank import _parallel
    out_file = sys.argv[1] if len(sys.argv) > 1 else "core_contention.json"
    records = []
    Y, S = data(ROWS, 0)
    share = ROWS // THREADS
    for name in PATHS:
        with _parallel.num_threads(1):
            one = best(call(name, Y, S))
        with _parallel.num_threads(THREADS):
            many = best(call(name, Y, S, THREADS))
        alone, together = copies(name, 1, share), copies(name, THREADS, share)
        rec = dict(op=name, threads=THREADS, rows=ROWS, seconds_1=one, seconds_t=many,
                   threads_speedup=round(one / many, 3), copy_alone=alone,
                   copies_together=together,
                   copies_speedup=round(THREADS * alone / together, 3), calls=CALLS,
                   load_average_before=list(os.getloadavg()),
                   wait_policy=os.environ.get("OMP_WAIT_POLICY", "default"))
        print(json.dumps(rec), flush=True)
        records.append(rec)
        with open(out_file, "w") as fh:
            json.dump(benchmark_layout(records), fh, indent=1)


if __name__ == "__main__":
    main()
