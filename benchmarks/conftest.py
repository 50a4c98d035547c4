"""Every benchmark records what it ran on: the CPU model and features, the instruction-set
path of each kernel and the build (``fastrank.show_config``), in pytest-benchmark's
machine_info (once per run, with the load average and the command line, which
``render_results.py`` prints beside each figure) and in each benchmark's extra_info (so that
a figure copied out of the JSON keeps them)."""
import os
import shlex

import pytest

import fastrank


def _config():
    info = fastrank.show_config(mode="dict")
    cpu = info["cpu"]
    return {"fastrank": info["fastrank"], "cpu_model": cpu["model"],
            "cpu_family": cpu["family"], "cpu_model_number": cpu["model_number"],
            "cpu_features": cpu["features"], "logical_cpus": cpu["logical_cpus"],
            "simd_path": info["simd"]["path"], "kernel_paths": info["kernel_paths"],
            "compiler": info["compiler"],
            "openmp": info["openmp"], "default_threads": info["threads"]}


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["fastrank"] = _config()
    machine_info["load_average"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    machine_info["command"] = shlex.join(["python", "-m", "pytest", *config.invocation_params.args])


@pytest.fixture(autouse=True)
def _record_config(request):
    if "benchmark" in request.fixturenames:
        bench = request.getfixturevalue("benchmark")
        info = _config()
        bench.extra_info.update(cpu_model=info["cpu_model"],
                                kernel_paths=info["kernel_paths"],
                                default_threads=info["default_threads"],
                                load_average_before=list(os.getloadavg()))
    yield
