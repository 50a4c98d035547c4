"""The default study in process on 1 and 2 threads: tasks side by side (each on one kernel
thread, the default) against tasks one at a time with every kernel on 2 OpenMP threads;
and the same study on the code paths that CPUs with fewer instruction sets take (each
kernel forced to that path), 1 and 2 threads.

Run: flock /tmp/fastrank-bench.lock pytest benchmarks/bench_study_threads.py --benchmark-only -s
Each round also records the CPU seconds other processes used meanwhile (from /proc/stat,
Linux), so that a contended round can be told apart. Every mode's and path's results.json is
asserted byte-identical to the 1-thread one.
"""
import contextlib
import os
import time

import pytest

import fastrank
from fastrank import study
from fastrank.study import _run, _tasks
from fastrank.datasets import load

MODES = {"1 thread": 1, "2 threads, tasks side by side": 2,
         "2 threads, tasks one at a time": 2}
_reference = {}


def _busy_seconds():
    """CPU seconds of the whole machine so far (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        ticks = list(map(int, f.readline().split()[1:]))
    return (sum(ticks[:3]) + ticks[5] + ticks[6]) / os.sysconf("SC_CLK_TCK")


#: CPUs by the instruction-set path their kernels take: AVX2 and FMA (Haswell to Comet
#: Lake, Zen 1 to 3), AVX-512 without VPOPCNTDQ and VBMI (Skylake-SP, Cascade Lake), POPCNT
#: without AVX2 or FMA (Sandy and Ivy Bridge, Atom-class cores: the dense neighbour search
#: emulates fma there)
CPU_CLASSES = ("avx2", "avx512", "popcnt")


@contextlib.contextmanager
def kernel_paths(path):
    """Every kernel forced to the named path (which this CPU must run)."""
    previous = fastrank.use_simd(path)
    try:
        yield
    finally:
        fastrank.use_simd(previous)


@pytest.mark.parametrize("mode", list(MODES))
def test_default_study_threads(benchmark, mode, monkeypatch):
    if mode.endswith("one at a time"):
        monkeypatch.setattr(_run, "_run_in_process", _tasks._run_serially)
    _study(benchmark, mode, MODES[mode], contextlib.nullcontext)


@pytest.mark.parametrize("cpu", list(CPU_CLASSES))
@pytest.mark.parametrize("threads", [1, 2])
def test_default_study_cpu_classes(benchmark, cpu, threads):
    _study(benchmark, f"{cpu} paths, {threads} thread(s)", threads,
           lambda: kernel_paths(cpu))
    benchmark.extra_info.update(forced_path=cpu)


def _study(benchmark, mode, threads, paths):
    """Time the default study on yeast (2 rounds) with n_jobs=threads, inside the context
    paths() makes; its results.json must equal the first one of this run."""
    dataset = load("yeast")
    others = []

    def run():
        busy, mine = _busy_seconds(), os.times()
        with paths():
            result = study.run_study(dataset, n_jobs=threads)
        own = sum(os.times()[:2]) - sum(mine[:2])
        others.append(round(_busy_seconds() - busy - own, 1))
        return result

    benchmark.group = "default study on yeast, in process"
    result = benchmark.pedantic(run, rounds=2, iterations=1)
    text = result.to_json()
    assert _reference.setdefault("json", text) == text
    benchmark.extra_info.update(threads=threads, others_cpu_seconds=others,
                                load_average=os.getloadavg()[0])
    print(f"\n{mode}: best {benchmark.stats.stats.min:.2f} s, others' CPU {others} s, "
          f"finished {time.strftime('%H:%M:%S', time.gmtime())} UTC")
