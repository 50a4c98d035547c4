"""Dense top-k cosine against FAISS ``IndexFlatIP`` over a grid of sizes, one thread, on
each x86 instruction-set path: ``python benchmarks/topk_grid.py OUT.json [PATH ...]``
(paths default to avx2 and avx512, those the CPU runs).

Grid: float32 bases of 10³, 10⁴, 10⁵ and 10⁶ rows × 32, 128 and 1 024 features (10⁶ ×
1 024, 4 GB per copy, is left out), k = 1, 10 and 100; standard normal entries; queries
``GRID_WORK / (rows × features)`` clamped to [20, 20 000] (``GRID_WORK`` defaults to 5·10⁸
multiply-adds). fastrank runs ``topk_cosine(Q, B, k)`` end to end (validation, scaling and
norms of both sides included); FAISS searches its index of the unit-normalised base with
the unit-normalised queries (normalisation and ``add`` not timed). Each path runs in its own
process with both sides on that instruction set: fastrank forced with ``FASTRANK_SIMD``,
FAISS's OpenBLAS with ``OPENBLAS_CORETYPE`` (Haswell for avx2, SkylakeX for avx512) and its
own code with ``FAISS_OPT_LEVEL``, as on a CPU that has only that instruction set.

Timing: the two sides alternate, one warm-up call each, then ``GRID_ROUNDS`` (default 3)
rounds, each starting with the next side (2 rounds where a FAISS call takes over a second,
3 with a baseline); the minimum of each side's thread CPU
time (``time.thread_time``: the time the one thread ran, which other processes on a loaded
machine do not inflate as they do wall time; the wall times are kept beside it). With
``FASTRANK_BASELINE_SO`` naming a ``cosine_topk`` module built from another commit, its
search is timed too, in the same turns, and checked to give the same bits.

The output is the layout ``render_results.py`` reads: benchmarks ``topk_cosine[PATH-ROWS-
FEATURES-K]`` and ``faiss_IndexFlatIP[PATH-ROWS-FEATURES-K]`` (and ``baseline[...]``), each
with its minimum thread time as ``stats.min`` and the load average in its extra_info.
"""
import importlib.util
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone

BASES = (1_000, 10_000, 100_000, 1_000_000)
FEATURES = (32, 128, 1024)
KS = (1, 10, 100)
MAX_BASE_BYTES = 2**30
CORETYPE = {"avx2": "Haswell", "avx512": "SkylakeX"}


def cells():
    """(rows, features, queries) of the grid."""
    work = float(os.environ.get("GRID_WORK", 5e8))
    for nb in BASES:
        for d in FEATURES:
            if nb * d * 4 <= MAX_BASE_BYTES:
                yield nb, d, int(min(max(work / (nb * d), 20), 20_000))


def _turns(runs, rounds):
    """{name: (min thread time, min wall time)} over `rounds` alternating turns after one
    warm-up turn, each round starting with the next side (the call after another side's
    can pay for its freed memory: fresh pages of a large allocation); the results of the
    warm-up turn."""
    first = {name: run() for name, run in runs.items()}
    cpu, wall = {name: [] for name in runs}, {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            run = runs[name]
            w, c = time.perf_counter(), time.thread_time()
            run()
            cpu[name].append(time.thread_time() - c)
            wall[name].append(time.perf_counter() - w)
    return {name: (min(cpu[name]), min(wall[name])) for name in runs}, first


def measure(path):
    """The grid on one path (run in a process whose environment set the path): a list of
    benchmark records."""
    import faiss
    import numpy as np
    from threadpoolctl import threadpool_limits

    import fastrank
    from fastrank.neighbors import _search, topk_cosine

    assert fastrank.show_config(mode="dict")["kernel_paths"]["cosine_topk"] == path
    baseline = os.environ.get("FASTRANK_BASELINE_SO")
    kernels = {"topk_cosine": _search._kernel}
    if baseline:
        spec = importlib.util.spec_from_file_location("baseline.cosine_topk", baseline)
        kernels["baseline"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kernels["baseline"])
    rounds = int(os.environ.get("GRID_ROUNDS", 3))
    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(0)
    records = []
    with threadpool_limits(1):
        for nb, d, nq in cells():
            B = rng.standard_normal((nb, d), dtype=np.float32)
            Q = rng.standard_normal((nq, d), dtype=np.float32)
            index = faiss.IndexFlatIP(d)
            index.add(B / np.linalg.norm(B, axis=1, keepdims=True))
            Qn = Q / np.linalg.norm(Q, axis=1, keepdims=True)
            for k in KS:
                def ours(kernel, Q=Q, B=B, k=k):
                    def run():
                        _search._kernel = kernel
                        return topk_cosine(Q, B, k)
                    return run
                runs = {"faiss_IndexFlatIP": lambda index=index, Qn=Qn, k=k: index.search(Qn, k),
                        **{name: ours(kernel) for name, kernel in kernels.items()}}
                load = list(os.getloadavg())
                start = time.perf_counter()
                index.search(Qn[:20], k)
                slow = (time.perf_counter() - start) * nq / 20 > 1
                best, first = _turns(runs, len(runs) if slow else rounds)
                _search._kernel = kernels["topk_cosine"]
                if baseline:
                    for a, b in zip(first["baseline"], first["topk_cosine"]):
                        assert np.array_equal(a, b), "the baseline gives other results"
                for name, (cpu, wall) in best.items():
                    records.append({"name": f"{name}[{path}-{nb}-{d}-{k}]",
                                    "stats": {"min": cpu},
                                    "extra_info": {"wall_s": wall, "queries": nq,
                                                   "load_average_before": load}})
                ratio = best["topk_cosine"][0] / best["faiss_IndexFlatIP"][0]
                print(f"{path} {nb} x {d} k={k} nq={nq}: fastrank / FAISS {ratio:.2f}"
                      + (f" (baseline {best['baseline'][0] / best['faiss_IndexFlatIP'][0]:.2f})"
                         if baseline else "") + f", load {load[0]:.1f}", file=sys.stderr,
                      flush=True)
    return records


def main(out, paths):
    import fastrank
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from conftest import _config

    records = []
    for path in paths:
        env = dict(os.environ, FASTRANK_SIMD=path, OPENBLAS_CORETYPE=CORETYPE[path],
                   FAISS_OPT_LEVEL=path)
        child = subprocess.run([sys.executable, __file__, "--measure", path], env=env,
                               stdout=subprocess.PIPE, text=True, check=True)
        records += json.loads(child.stdout)
    info = _config()
    info["kernel_paths"] = {"cosine_topk": " and ".join(paths)}
    rounds = os.environ.get("GRID_ROUNDS", "3")
    run = {"transcribed": "Written by benchmarks/topk_grid.py (not a pytest-benchmark run): "
                          "thread CPU times, fastrank and FAISS alternating, best of "
                          f"{rounds} rounds, each starting with the next side (as many as "
                          "sides where FAISS takes over a second); one process per "
                          "path, FAISS's OpenBLAS and its own code on the same instruction "
                          "set. fastrank " + fastrank.__version__ + ".",
           "command": " ".join([f"GRID_ROUNDS={rounds}", *(
                [f"FASTRANK_BASELINE_SO={os.environ['FASTRANK_BASELINE_SO']}"]
                if "FASTRANK_BASELINE_SO" in os.environ else []),
                "python", "benchmarks/topk_grid.py", *sys.argv[1:]]),
           "datetime": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "machine_info": {"fastrank": info, "load_average": list(os.getloadavg())},
           "benchmarks": records}
    with open(out, "w") as f:
        json.dump(run, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2])))
    else:
        main(sys.argv[1], sys.argv[2:] or ["avx2", "avx512"])
