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

from fastrank import study
from fastrank._ext import cosine_topk as neighbors_kernel
from fastrank._ext import vgram as wnn_kernel
from fastrank.datasets import load

MODES = {"1 thread": 1, "2 threads, tasks side by side": 2,
         "2 threads, tasks one at a time": 2}
_reference = {}


def _busy_seconds():
    """CPU seconds of the whole machine so far (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        ticks = list(map(int, f.readline().split()[1:]))
    return (sum(ticks[:3]) + ticks[5] + ticks[6]) / os.sysconf("SC_CLK_TCK")


#: CPUs by the kernels' paths they take (VG-RAM, dense neighbour search): AVX2 and FMA
#: (Haswell to Comet Lake, Zen 1 to 3), AVX-512 without VPOPCNTDQ and VBMI (Skylake-SP,
#: Cascade Lake), POPCNT without AVX2 or FMA (Sandy and Ivy Bridge, Atom-class cores)
CPU_CLASSES = {"avx2": ("avx2", "avx2"), "avx512": ("avx512", "avx512"),
               "popcnt": ("popcnt", "portable-emulated-fma")}


@contextlib.contextmanager
def kernel_paths(wnn_path, neighbors_path):
    """Both kernels forced to the named paths (which this CPU must run)."""
    levels = {"portable": 0, "portable-emulated-fma": 0, "avx2": 1, "avx512": 2}
    previous = (wnn_kernel.use_simd(wnn_kernel.SIMD_PATHS.index(wnn_path)),
                neighbors_kernel.use_simd(levels[neighbors_path]),
                neighbors_kernel.use_fma_emulation(neighbors_path == "portable-emulated-fma"))
    try:
        assert (wnn_kernel.simd_path(), neighbors_kernel.simd_path()) == (wnn_path,
                                                                          neighbors_path)
        yield
    finally:
        wnn_kernel.use_simd(previous[0])
        neighbors_kernel.use_simd(previous[1])
        neighbors_kernel.use_fma_emulation(previous[2])


@pytest.mark.parametrize("mode", list(MODES))
def test_default_study_threads(benchmark, mode, monkeypatch):
    if mode.endswith("one at a time"):
        monkeypatch.setattr(study, "_run_in_process", study._run_serially)
    _study(benchmark, mode, MODES[mode], contextlib.nullcontext)


@pytest.mark.parametrize("cpu", list(CPU_CLASSES))
@pytest.mark.parametrize("threads", [1, 2])
def test_default_study_cpu_classes(benchmark, cpu, threads):
    _study(benchmark, f"{cpu} paths, {threads} thread(s)", threads,
           lambda: kernel_paths(*CPU_CLASSES[cpu]))
    benchmark.extra_info.update(forced_paths=dict(zip(("wnn", "neighbors"), CPU_CLASSES[cpu])))


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
