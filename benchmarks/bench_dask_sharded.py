"""Sharded VG-RAM search on a local Dask cluster vs one process (a plain script).

Run (timings under the shared lock): flock /tmp/fastrank-bench.lock \
    python benchmarks/bench_dask_sharded.py [--queries 512] [--rounds 3]

Data (from ../shared/data, never committed): Mulan bibtex (binary features, 1 836), the
first 4 880 documents train (Mulan's split size; ``--train``), the next ``--queries`` are the
query batch. Model: ``VGRAM(n_neurons=1024, n_synapses=1024)`` (the thesis' configuration;
``--neurons``), ``tie_policy="random"``.

Measured (best of ``--rounds`` after one warm-up):

* one process: ``VGRAM.decision_function`` on the query batch with 1 and with 2 OpenMP
  threads;
* sharded: ``ShardedEstimator(..., n_shards=2)`` on a ``LocalCluster`` of 2 worker processes
  with 1 thread each (Dask starts workers with OMP_NUM_THREADS=1), the whole
  ``decision_function`` seen by the client (tasks, transfers, merge); checked equal to the
  one-process beliefs;
* per shard, on its worker: the model's memory (``memory_bytes_``) and the time of one
  search task (``--batch`` query rows) in that shard alone, and of the merge of the shards'
  outcomes for that batch -- the figures a sizing note is derived from.
"""
import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import distributed
import numpy as np
from threadpoolctl import threadpool_limits

from fastrank.datasets import load_arff
from fastrank.dask import ShardedEstimator
from fastrank.dask import _sharded
from fastrank._vgram_merge import _merge_outcomes
from fastrank.wnn import VGRAM

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
N_TRAIN = 4880


def best_of(rounds, fn):
    fn()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def timed_partial(shard, X, row0, entry0, rounds):
    """On the worker: the shard's outcome summary for X, and the best time of computing it."""
    out = _sharded._vgram_partial(shard, X, row0, entry0)
    seconds = best_of(rounds, lambda: _sharded._vgram_partial(shard, X, row0, entry0))
    return out, seconds


def timed_merge(parts, model, rounds):
    args = (parts, model._model, model.tie_policy, model.label_indptr_, model.label_indices_,
            model.synapses_.shape[0], model.classes_.shape[0])
    return best_of(rounds, lambda: _merge_outcomes(*args))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=N_TRAIN)
    parser.add_argument("--neurons", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    d = load_arff(DATA / "mulan" / "bibtex" / "bibtex.arff")
    X_train, Y_train = d.X[:args.train], d.Y[:args.train]
    X_test = d.X[N_TRAIN:N_TRAIN + args.queries]
    est = VGRAM(n_neurons=args.neurons, n_synapses=1024, random_state=0)
    env = {"nproc": os.cpu_count(), "machine": platform.machine(),
           "cpu": subprocess.run("lscpu | grep 'Model name'", shell=True, capture_output=True,
                                 text=True).stdout.split(":")[-1].strip(),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_before": os.getloadavg(), "train": X_train.shape, "queries": X_test.shape[0]}

    single = VGRAM(**est.get_params()).fit(X_train, Y_train)
    F = single.decision_function(X_test)
    res = {"single_memory_bytes": single.memory_bytes_}
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="openmp"):
            res[f"single_{threads}_thread_s"] = best_of(
                args.rounds, lambda: single.decision_function(X_test))

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        env["worker_OMP_NUM_THREADS"] = sorted(
            set(client.run(lambda: os.environ.get("OMP_NUM_THREADS")).values()), key=str)
        t = time.perf_counter()
        sharded = ShardedEstimator(est, n_shards=2, client=client).fit(X_train, Y_train)
        res["sharded_fit_s"] = time.perf_counter() - t
        res["shard_rows"] = np.diff(sharded.shard_bounds_).tolist()
        res["shard_workers"] = [sorted(ws) for ws in client.who_has(sharded.shards_).values()]
        assert np.array_equal(sharded.decision_function(X_test), F)
        res["sharded_2_workers_s"] = best_of(args.rounds,
                                             lambda: sharded.decision_function(X_test))
        res["shard_memory_bytes"] = client.gather(
            [client.submit(lambda m: m.memory_bytes_, s) for s in sharded.shards_])
        batch = X_test[:args.batch]
        timed = client.gather([client.submit(timed_partial, s, batch, 0, int(e0), args.rounds,
                                             pure=False)
                               for s, e0 in zip(sharded.shards_, sharded._entry0)])
        res["shard_batch_rows"] = args.batch
        res["shard_batch_s"] = [t for _, t in timed]
        res["merge_batch_s"] = client.submit(timed_merge, [p for p, _ in timed], sharded._model,
                                             args.rounds, pure=False).result()
        res["summary_bytes_per_shard_batch"] = sum(a.nbytes for a in timed[0][0].values())
    env["load_after"] = os.getloadavg()
    res["speedup_vs_1_thread"] = res["single_1_thread_s"] / res["sharded_2_workers_s"]
    res["speedup_vs_2_threads"] = res["single_2_thread_s"] / res["sharded_2_workers_s"]
    report = {"env": env, "results": res}
    print(json.dumps(report, indent=1, default=str))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
