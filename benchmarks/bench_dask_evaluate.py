"""Out-of-core evaluation: ``fastrank.dask.evaluate`` over beliefs larger than memory.

Run: ``python benchmarks/bench_dask_evaluate.py [--rows 10000000] [--labels 1000]``

Each configuration runs in a fresh process (so that its peak RSS is its own) on Dask's
local threaded scheduler with one task per core and one OpenMP thread per task. Beliefs are
generated lazily per chunk of rows from (seed, first row): 21 levels k/20 as float32 (heavy
ties), 1 to q/50 relevant labels per document (mean ~1 %). Reported per configuration:
wall time, beliefs per second, peak RSS; the generation alone is timed too, so that the
evaluation's own share is known. The peer is the in-memory ``fastrank.metrics.evaluate`` on
the largest size that fits comfortably (the whole matrix generated first, then evaluated
with the kernel's own OpenMP threads).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

LEVELS = (np.arange(21) / 20).astype(np.float32)
TIES = ("ordinal", "dense", "standard", "modified")


def chunk(lo, hi, q, which):
    rng = np.random.default_rng([2026, lo])
    if which == "score":
        return LEVELS[rng.integers(0, 21, size=(hi - lo, q), dtype=np.uint8)]
    y = np.zeros((hi - lo, q), dtype=np.uint8)  # 1 to 2q/100 relevant labels (mean ~1 %)
    n_rel = rng.integers(1, max(2, q // 50), size=hi - lo)
    rows = np.repeat(np.arange(hi - lo), n_rel)
    y[rows, rng.integers(0, q, size=rows.size)] = 1
    return y


def _block(block_info=None, q=0, which="score"):
    (lo, hi), _ = block_info[None]["array-location"]
    return chunk(lo, hi, q, which)


def lazy(n, q, rows):
    import dask.array as da
    chunks = (tuple(min(rows, n - lo) for lo in range(0, n, rows)), (q,))
    s = da.map_blocks(_block, chunks=chunks, dtype=np.float32, q=q, which="score")
    y = da.map_blocks(_block, chunks=chunks, dtype=np.uint8, q=q, which="truth")
    return y, s


def run(mode, n, q, rows, threads):
    import dask
    t0 = time.perf_counter()
    if mode == "dask":
        import fastrank.dask as fd
        y, s = lazy(n, q, rows)
        with dask.config.set(scheduler="threads", num_workers=threads):
            fd.evaluate(y, s, ties=TIES)
        seconds = time.perf_counter() - t0
    elif mode == "generate":  # the lazy chunks alone, reduced to nothing
        y, s = lazy(n, q, rows)
        with dask.config.set(scheduler="threads", num_workers=threads):
            dask.compute(s[:, 0].sum(), y[:, 0].sum())
        seconds = time.perf_counter() - t0
    else:  # in-memory peer: generate everything, then one evaluate call
        from threadpoolctl import threadpool_limits

        from fastrank.metrics import evaluate
        y = np.concatenate([chunk(lo, min(n, lo + rows), q, "truth") for lo in range(0, n, rows)])
        s = np.concatenate([chunk(lo, min(n, lo + rows), q, "score") for lo in range(0, n, rows)])
        t0 = time.perf_counter()
        with threadpool_limits(threads, user_api="openmp"):
            evaluate(y, s, ties=TIES)
        seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"mode": mode, "rows": n, "labels": q, "chunk_rows": rows, "threads": threads,
            "seconds": seconds, "beliefs_per_s": n * q / seconds, "peak_rss_gib": rss / 2**30,
            "data_gib": n * q * 5 / 2**30}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--labels", type=int, default=1000)
    p.add_argument("--peer-rows", type=int, default=1_000_000)
    p.add_argument("--chunk-rows", type=int, default=10_000)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--one", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        mode, n = a.one.split(":")
        print(json.dumps(run(mode, int(n), a.labels, a.chunk_rows, a.threads)))
        return
    configs = [("memory", a.peer_rows), ("dask", a.peer_rows), ("generate", a.rows),
               ("dask", a.rows)]
    print("| mode | rows x labels | data (GiB, float32 + uint8) | wall (s) | beliefs/s | "
          "peak RSS (GiB) |\n|---|---|---|---|---|---|")
    for mode, n in configs:
        out = subprocess.run([sys.executable, __file__, "--one", f"{mode}:{n}", "--labels",
                              str(a.labels), "--chunk-rows", str(a.chunk_rows), "--threads",
                              str(a.threads)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        print(f"| {r['mode']} | {r['rows']:,} x {r['labels']:,} | {r['data_gib']:.1f} | "
              f"{r['seconds']:.1f} | {r['beliefs_per_s']:.3g} | {r['peak_rss_gib']:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
