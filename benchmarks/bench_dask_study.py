"""The default study (embedded yeast, 4 classifiers x 10 folds, thesis configurations) in one
process and on a local Dask cluster (``--scheduler local:2``: two worker processes of one
thread each), through the command line as a user runs it and through ``run_study`` with
the cluster's start-up timed apart. Every run's ``results.json`` must be byte-identical.
The machine is shared: each figure is the quickest of 3 rounds, reported with the CPU
seconds other processes used meanwhile (from /proc/stat).

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
ROUNDS = 3  # the machine is shared: the quickest of 3 rounds, with the CPU others used


def machine_busy_seconds():
    """CPU seconds the whole machine has been busy (all cores, from /proc/stat)."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq = map(int, f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds():
    """CPU seconds of this process and of its children that have ended (the workers of a
    closed cluster, the command-line runs)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed_rounds(benchmark, fn):
    """Run ``fn`` ROUNDS times under pytest-benchmark; return the quickest round's result,
    its wall seconds and the CPU seconds other processes used meanwhile."""
    rounds = []

    def once():
        wall, busy, own = time.perf_counter(), machine_busy_seconds(), own_cpu_seconds()
        value = fn()
        rounds.append((time.perf_counter() - wall, value,
                       (machine_busy_seconds() - busy) - (own_cpu_seconds() - own)))
        return value

    benchmark.pedantic(once, rounds=ROUNDS, iterations=1)
    wall, value, others = min(rounds, key=lambda r: r[0])
    benchmark.extra_info.update(wall_s=round(wall, 2), others_cpu_s=round(max(others, 0), 1))
    return value, wall, others


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
    ``local:2`` cluster (``start`` = its start-up and shut-down)."""
    benchmark.group = "study yeast 4 classifiers x 10 folds: run_study"

    def run():
        if mode.startswith("threads="):
            return run_study("yeast", n_jobs=int(mode.split("=")[1])), {}
        t0 = time.perf_counter()
        with connect(mode) as client:
            t1 = time.perf_counter()
            result = run_study("yeast", scheduler=client)
            study = time.perf_counter() - t1
        return result, {"study": study, "start": time.perf_counter() - t0 - study}

    (result, times), wall, others = timed_rounds(benchmark, run)
    check_identical(f"run_study {mode}", result.to_json())
    seconds = {**task_seconds(result), **times}
    if "study" in times:  # how full the two workers were while the study ran
        seconds["worker_utilisation"] = seconds["busy"] / (2 * times["study"])
    info = {k: round(v, 2) for k, v in seconds.items()}
    benchmark.extra_info.update(mode=mode, **info)
    print(f"\n{mode}: wall {wall:.2f}, others' CPU {others:.1f} s, " +
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

    _, wall, others = timed_rounds(benchmark, run)
    with open(os.path.join(tmp_path, "results.json")) as f:
        check_identical(f"fastrank study {scheduler}", f.read())
    benchmark.extra_info.update(scheduler=str(scheduler))
    print(f"\nfastrank study --scheduler {scheduler}: wall {wall:.2f}, others' CPU "
          f"{others:.1f} s")
