"""fastrank.show_config and ``fastrank config``: versions, build, CPU and kernel paths; the
one instruction-set level of every kernel (fastrank.use_simd, FASTRANK_SIMD)."""
import json
import platform
import subprocess
import sys

import numpy as np
import pytest
import scipy
import sklearn

import fastrank
from fastrank import _config
from fastrank.__main__ import main
from fastrank._ext import _simd, _threads, cosine_topk, vgram
from fastrank._parallel import num_threads

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC Example
flags\t\t: fpu sse2 popcnt avx avx2 fma avx512f avx512bw avx512vl avx512_vnni avx512vbmi \
avx512_vpopcntdq hypervisor

processor\t: 1
model name\t: another block, never read
flags\t\t: fpu
"""


def test_versions_are_those_of_the_installed_packages(capsys):
    info = fastrank.show_config()
    assert info["fastrank"] == fastrank.__version__
    assert info["numpy"] == np.__version__
    assert info["scipy"] == scipy.__version__
    assert info["scikit-learn"] == sklearn.__version__
    assert info["python"] == platform.python_version()
    out = capsys.readouterr().out
    assert f"numpy         {np.__version__}" in out.splitlines()
    assert f"cpu           {info['cpu']['model']}" in out


def test_dict_mode_prints_nothing_and_a_bad_mode_is_named(capsys):
    info = fastrank.show_config(mode="dict")
    assert capsys.readouterr().out == ""
    assert set(info) == {"fastrank", "python", "numpy", "scipy", "scikit-learn", "compiler",
                         "openmp", "threads", "platform", "cpu", "simd", "kernel_paths"}
    with pytest.raises(ValueError, match="unknown mode='json'"):
        fastrank.show_config(mode="json")


def test_threads_is_the_kernels_thread_count():
    assert fastrank.show_config(mode="dict")["threads"] == _threads.get_max_threads()
    with num_threads(1):
        assert fastrank.show_config(mode="dict")["threads"] == 1


def test_build_reports_compiler_and_openmp_consistently():
    info = fastrank.show_config(mode="dict")
    assert info["compiler"] and info["compiler"] != "unknown"
    with num_threads(2):
        threads_honoured = _threads.get_max_threads() == 2
    # an OpenMP build honours a thread count; a serial build always runs one thread
    assert threads_honoured == (info["openmp"] is not None)
    if info["openmp"] is not None:
        assert info["openmp"] in _config.OPENMP_VERSIONS.values()


def test_cpu_read_from_cpuinfo(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    cpu = _config.cpu_info(str(path))
    assert cpu["model"] == "AMD EPYC Example"
    assert (cpu["family"], cpu["model_number"]) == (26, 2)
    # only the kernel-relevant features, in KERNEL_FEATURES' order (no VNNI, no DQ here)
    assert cpu["features"] == ["popcnt", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                               "avx512_vpopcntdq", "avx512vbmi"]


def test_cpu_without_cpuinfo_falls_back_to_platform(tmp_path):
    cpu = _config.cpu_info(str(tmp_path / "absent"))
    assert cpu["model"] == (platform.processor() or platform.machine() or "unknown")
    assert cpu["features"] is None and cpu["family"] is None
    assert cpu["logical_cpus"] >= 1


@pytest.mark.parametrize("kernel", _config.SIMD_KERNELS)
def test_kernel_paths_reported_where_the_kernel_reports_them(kernel, monkeypatch, capsys):
    module = __import__(f"fastrank._ext.{kernel}", fromlist=["_"])
    monkeypatch.setattr(module, "simd_path", lambda: "avx512", raising=False)
    assert fastrank.show_config()["kernel_paths"][kernel] == "avx512"
    assert f"path {kernel:<11} avx512" in capsys.readouterr().out.splitlines()
    monkeypatch.delattr(module, "simd_path")
    assert fastrank.show_config()["kernel_paths"][kernel] is None
    assert f"path {kernel:<11} not reported by this build" in capsys.readouterr().out


def test_cli_config_prints_lines_and_json(capsys):
    assert main(["config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"fastrank      {fastrank.__version__}"
    assert main(["config", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == fastrank.show_config(mode="dict")


# ---- one instruction-set level for every kernel ----------------------------------------

def _cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _run(code, simd=None):
    """Run ``code`` in a fresh interpreter, FASTRANK_SIMD set to ``simd`` (removed for
    None); its completed process."""
    import os
    env = {k: v for k, v in os.environ.items() if k != "FASTRANK_SIMD"}
    if simd is not None:
        env["FASTRANK_SIMD"] = simd
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True)


def test_every_kernel_takes_its_code_for_the_path_in_use(simd_path, capsys):
    """One level names every kernel's path: VG-RAM has code for each; the dense cosine
    search its AVX-512 code from avx512 on, and at popcnt its portable sums with emulated fma
    (also at portable on an x86-64 CPU without FMA3, whose library fma is software)."""
    x86_without_fma = "popcnt" in _cpu_flags() and "fma" not in _cpu_flags()
    cosine = {"avx512-vpopcntdq": "avx512", "avx512": "avx512", "avx2": "avx2",
              "popcnt": "popcnt", "portable": "popcnt" if x86_without_fma else "portable"}
    info = fastrank.show_config()
    assert info["simd"]["path"] == simd_path
    assert info["kernel_paths"] == {"cosine_topk": cosine[simd_path], "vgram": simd_path}
    assert vgram.simd_path() == simd_path and cosine_topk.simd_path() == cosine[simd_path]
    lines = capsys.readouterr().out.splitlines()
    assert f"simd          {simd_path} (this CPU runs " \
           f"{' '.join(info['simd']['cpu_paths'])}; FASTRANK_SIMD unset)" in lines


def test_default_is_the_best_path_the_cpu_runs():
    out = _run("import json, fastrank; print(json.dumps(fastrank.show_config('dict')['simd']))")
    simd = json.loads(out.stdout)
    assert simd["path"] == simd["cpu_paths"][-1] and simd["cpu_paths"][0] == "portable"
    assert simd["FASTRANK_SIMD"] is None
    assert tuple(simd["cpu_paths"]) == _config.SIMD_PATHS[:len(simd["cpu_paths"])]
    # a Linux build (GCC or clang) on an x86 CPU takes the best path its features allow
    # (this project's CI and benchmarks)
    flags = _cpu_flags()
    if sys.platform.startswith("linux") and "popcnt" in flags:
        avx2 = {"avx2", "fma"} <= flags
        avx512 = avx2 and {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
        expected = ("avx512-vpopcntdq" if avx512 and {"avx512_vpopcntdq", "avx512vbmi"} <= flags
                    else "avx512" if avx512 else "avx2" if avx2 else "popcnt")
        assert simd["path"] == expected


@pytest.mark.parametrize("path", ["portable", "avx2"])
def test_fastrank_simd_forces_a_path_at_import(path):
    if path not in _simd.cpu_paths():
        path = "portable"                    # a CPU without AVX2 forces the portable path
    out = _run("import json, fastrank; from fastrank._ext import vgram\n"
               "print(json.dumps([fastrank.show_config('dict')['simd'], vgram.simd_path()]))",
               simd=path)
    simd, vgram_path = json.loads(out.stdout)
    assert simd["path"] == vgram_path == path and simd["FASTRANK_SIMD"] == path
    config = _run("from fastrank.__main__ import main; main(['config'])", simd=path)
    assert f"FASTRANK_SIMD {path!r})" in config.stdout


def test_fastrank_simd_refuses_an_unknown_path_with_the_valid_names():
    out = _run("from fastrank import wnn", simd="avx9")
    assert out.returncode != 0
    assert ("ValueError: FASTRANK_SIMD='avx9': unknown SIMD path 'avx9'; valid: 'portable', "
            "'popcnt', 'avx2', 'avx512', 'avx512-vpopcntdq'") in out.stderr
    cli = _run("import sys; from fastrank.__main__ import main; sys.exit(main(['config']))",
               simd="avx9")
    assert cli.returncode == 2 and "FASTRANK_SIMD='avx9'" in cli.stderr


def test_use_simd_refuses_unknown_paths_and_paths_the_cpu_lacks(monkeypatch):
    before = _simd.path()
    with pytest.raises(ValueError, match="unknown SIMD path 'AVX2'; valid: 'portable'"):
        fastrank.use_simd("AVX2")
    # a CPU with POPCNT alone: the avx2 path needs AVX2 and FMA3
    monkeypatch.setattr(_simd, "cpu_features", lambda: ("popcnt",))
    with pytest.raises(ValueError, match="SIMD path 'avx2' needs CPU features this CPU lacks: "
                                         "avx2, fma "):
        fastrank.use_simd("avx2")
    with pytest.raises(ValueError, match="lacks: avx2, fma, avx512f, avx512bw, avx512vl, "
                                         "avx512dq, avx512_vpopcntdq, avx512vbmi "):
        fastrank.use_simd("avx512-vpopcntdq")
    assert _simd.path() == before            # a refused path changes nothing
    assert fastrank.use_simd("popcnt") == before
    monkeypatch.undo()
    assert fastrank.use_simd(before) == "popcnt"


def test_the_paths_and_features_are_the_kernels_tables():
    """The names and the features each path needs come from the kernels' own table
    (core/simd.h), not from a copy; each path needs those of the paths before it."""
    assert _config.SIMD_PATHS is _simd.PATHS and _config.KERNEL_FEATURES is _simd.FEATURES
    assert _simd.PATHS == ("portable", "popcnt", "avx2", "avx512", "avx512-vpopcntdq")
    needs = [set(_simd.needs(p)) for p in _simd.PATHS]
    assert needs[0] == set() and all(a < b for a, b in zip(needs, needs[1:]))
    assert set(_simd.cpu_features()) <= set(_simd.FEATURES)
