"""The default study in process on 1 and 2 threads: tasks side by side (each on one kernel
thread, the default) against tasks one at a time with every kernel on 2 OpenMP threads.

Run: flock /tmp/fastrank-bench.lock pytest benchmarks/bench_study_threads.py --benchmark-only -s
Each round also records the CPU seconds other processes used meanwhile (from /proc/stat,
Linux), so that a contended round can be told apart. Every mode's results.json is asserted
byte-identical to the 1-thread one.
"""
import os
import time

import pytest

from fastrank import study
from fastrank.datasets import load

MODES = {"1 thread": 1, "2 threads, tasks side by side": 2,
         "2 threads, tasks one at a time": 2}
_reference = {}


def _busy_seconds():
    """CPU seconds of the whole machine so far (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        ticks = list(map(int, f.readline().split()[1:]))
    return (sum(ticks[:3]) + ticks[5] + ticks[6]) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("mode", list(MODES))
def test_default_study_threads(benchmark, mode, monkeypatch):
    if mode.endswith("one at a time"):
        monkeypatch.setattr(study, "_run_in_process", study._run_serially)
    dataset = load("yeast")
    others = []

    def run():
        busy, mine = _busy_seconds(), os.times()
        result = study.run_study(dataset, n_jobs=MODES[mode])
        own = sum(os.times()[:2]) - sum(mine[:2])
        others.append(round(_busy_seconds() - busy - own, 1))
        return result

    benchmark.group = "default study on yeast, in process"
    result = benchmark.pedantic(run, rounds=2, iterations=1)
    text = result.to_json()
    assert _reference.setdefault("json", text) == text
    benchmark.extra_info.update(threads=MODES[mode], others_cpu_seconds=others,
                                load_average=os.getloadavg()[0])
    print(f"\n{mode}: best {benchmark.stats.stats.min:.2f} s, others' CPU {others} s, "
          f"started {time.strftime('%H:%M:%S', time.gmtime())} UTC")
