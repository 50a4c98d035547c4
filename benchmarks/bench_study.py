"""The full default study (4 classifiers x 10 folds, thesis configurations) on the embedded
yeast data: wall time, and time per stage from the study's own timings.

Run: pytest benchmarks/bench_study.py --benchmark-only -s
Target (issue 7): at most 60 s wall on the 2-core machine.
"""
import numpy as np
import pytest

from fastrank.study import run_study


@pytest.mark.parametrize("threads", [2, 1])
def test_full_default_study_on_yeast(benchmark, threads):
    benchmark.group = "study yeast 4 classifiers x 10 folds"
    result = benchmark.pedantic(run_study, args=("yeast",), kwargs={"n_jobs": threads},
                                rounds=1, iterations=1)
    stages = {"indexing": float(np.sum(result.timings["indexing"]))}
    for c in result.classifiers:
        for stage, times in result.timings[c].items():
            stages[f"{c}.{stage}"] = float(np.sum(times))
    benchmark.extra_info.update(threads=threads, **{k: round(v, 2) for k, v in stages.items()})
    print(f"\nthreads={threads}: " + ", ".join(f"{k} {v:.2f}s" for k, v in stages.items()))
