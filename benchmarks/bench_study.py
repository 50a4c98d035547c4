"""The study's wall time.

* ``pytest benchmarks/bench_study.py --benchmark-only -s``: the full default study (4
  classifiers x 10 folds, thesis configurations) on the embedded yeast data, with the time
  per stage from the study's own timings. Target: at most 60 s wall on the 2-core machine.
* ``python benchmarks/bench_study.py OUT [DATA_DIR]``: the study on many data sets
  (:func:`fastrank.study.compare.run_benchmark`) over every data file in ``DATA_DIR``
  (default ``../shared/data/mulan``), the four built-in classifiers at their defaults,
  writing into ``OUT`` and printing, per data set, the seconds of loading, each stage of the
  study and writing its outputs, then the across-data-set outputs' seconds and the total.
  Resumable: data sets already in ``OUT`` are loaded, not timed.
"""
import json
import os
import sys
import time

import numpy as np
import pytest

from fastrank.study import run_study


@pytest.mark.parametrize("threads", [2, 1])
def test_full_default_study_on_yeast(benchmark, threads):
    benchmark.group = "study yeast 4 classifiers x 10 folds"
    result = benchmark.pedantic(run_study, args=("yeast",), kwargs={"n_jobs": threads},
                                rounds=1, iterations=1)
    stages = _stages(result)
    benchmark.extra_info.update(threads=threads, **{k: round(v, 2) for k, v in stages.items()})
    print(f"\nthreads={threads}: " + ", ".join(f"{k} {v:.2f}s" for k, v in stages.items()))


def _stages(result):
    stages = {"indexing": float(np.sum(result.timings["indexing"]))}
    for c in result.classifiers:
        for stage, times in result.timings[c].items():
            stages[f"{c}.{stage}"] = float(np.sum(times))
    return stages


def _many(out, data_dir):
    from fastrank.__main__ import _dataset_specs
    from fastrank.study.compare import run_benchmark
    from fastrank.report import write_benchmark

    t0 = time.perf_counter()
    bench = run_benchmark(_dataset_specs(data_dir), out_dir=out,
                          progress=lambda msg, done: print(f"{time.perf_counter() - t0:8.1f}s "
                                                           f"[{done}] {msg}", flush=True))
    t1 = time.perf_counter()
    write_benchmark(bench, out)
    t2 = time.perf_counter()
    report = {"datasets": {n: {**{k: round(v, 2) for k, v in bench.timings[n].items()},
                               **{k: round(v, 2) for k, v in
                                  _stages(bench.studies[n]).items()},
                               "documents": bench.studies[n].dataset["documents"],
                               "labels": bench.studies[n].dataset["labels"]}
                           for n in bench.timings},
              "run_benchmark": round(t1 - t0, 2), "write_benchmark": round(t2 - t1, 2),
              "total": round(t2 - t0, 2)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    _many(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else
          os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "mulan"))
