"""The default study (embedded yeast, 4 classifiers x 10 folds, thesis configurations) in one
process and on a local Dask cluster (``--scheduler local:2``: two worker processes of one
thread each), through the command line as a user runs it and through ``run_study`` with
the cluster's start-up timed apart. Every run's ``results.json`` must be byte-identical.

Run (timings under the shared lock):
    flock /tmp/fastrank-bench.lock pytest benchmarks/bench_dask_study.py --benchmark-only -s
"""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from fastrank.dask import connect
from fastrank.study import run_study

RESULTS = {}  # mode -> results.json text, compared across modes


def task_seconds(result):
    """Seconds inside the study's tasks: summed over folds per classifier and stage, in all
    ("busy"), and the longest single classifier x fold task."""
    stages = {f"{c}.{stage}": float(np.sum(t)) for c in result.classifiers
              for stage, t in result.timings[c].items()}
    per_task = [np.sum(list(result.timings[c].values()), axis=0) for c in result.classifiers]
    busy = float(np.sum(result.timings["indexing"]) + sum(stages.values()))
    return {"busy": busy, "longest_task": float(np.max(per_task)), **stages}


def check_identical(mode, text):
    RESULTS[mode] = text
    assert len(set(RESULTS.values())) == 1, f"{mode}: results.json differs from {set(RESULTS)}"


@pytest.mark.parametrize("mode", ["threads=2", "threads=1", "local:2"])
def test_default_study(benchmark, mode):
    """``run_study("yeast")``: in process with 2 or 1 OpenMP threads, or on a new
    ``local:2`` cluster (``start`` = start-up and shut-down of the cluster)."""
    benchmark.group = "study yeast 4 classifiers x 10 folds: run_study"
    times = {}

    def run():
        if mode.startswith("threads="):
            return run_study("yeast", n_jobs=int(mode.split("=")[1]))
        t0 = time.perf_counter()
        with connect(mode) as client:
            t1 = time.perf_counter()
            result = run_study("yeast", scheduler=client)
            times["study"] = time.perf_counter() - t1
        times["start"] = time.perf_counter() - t0 - times["study"]
        return result

    result = benchmark.pedantic(run, rounds=1, iterations=1)
    check_identical(f"run_study {mode}", result.to_json())
    seconds = {**task_seconds(result), **times}
    if "study" in times:  # how full the two workers were while the study ran
        seconds["worker_utilisation"] = seconds["busy"] / (2 * times["study"])
    info = {k: round(v, 2) for k, v in seconds.items()}
    benchmark.extra_info.update(mode=mode, load=os.getloadavg()[0], **info)
    print(f"\n{mode}: load {os.getloadavg()[0]:.2f}, " +
          ", ".join(f"{k} {v}" for k, v in info.items()))


@pytest.mark.parametrize("scheduler", [None, "local:2"])
def test_default_study_command_line(benchmark, scheduler, tmp_path):
    """``fastrank study --quiet`` as a user runs it (interpreter start-up, the study, the
    report) with or without ``--scheduler local:2``."""
    benchmark.group = "study yeast 4 classifiers x 10 folds: fastrank study"
    args = [sys.executable, "-m", "fastrank", "study", "--quiet", "--out", str(tmp_path)]
    if scheduler:
        args += ["--scheduler", scheduler]

    def run():
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, timeout=900)

    benchmark.pedantic(run, rounds=1, iterations=1)
    with open(os.path.join(tmp_path, "results.json")) as f:
        check_identical(f"fastrank study {scheduler}", f.read())
    benchmark.extra_info.update(scheduler=str(scheduler))
