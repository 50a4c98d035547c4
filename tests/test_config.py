"""fastrank.show_config and ``fastrank config``: versions, build, CPU and kernel paths."""
import json
import platform

import numpy as np
import pytest
import scipy
import sklearn

import fastrank
from fastrank import _config
from fastrank.__main__ import main
from fastrank._ext import _threads
from fastrank._parallel import num_threads

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC Example
flags\t\t: fpu sse2 popcnt avx avx2 fma avx512f avx512bw avx512vl avx512_vnni avx512vbmi avx512_vpopcntdq hypervisor

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
                         "openmp", "threads", "platform", "cpu", "kernel_paths"}
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
    assert f"path {kernel:<8} avx512" in capsys.readouterr().out.splitlines()
    monkeypatch.delattr(module, "simd_path")
    assert fastrank.show_config()["kernel_paths"][kernel] is None
    assert f"path {kernel:<8} not reported by this build" in capsys.readouterr().out


def test_cli_config_prints_lines_and_json(capsys):
    assert main(["config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"fastrank      {fastrank.__version__}"
    assert main(["config", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == fastrank.show_config(mode="dict")
