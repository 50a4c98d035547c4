"""Shared fixtures. ``shared_data`` points at ../shared/data (the real data sets beside the
checkout, as in CI); a missing directory is an error, never a silent skip. ``simd_path`` and
``simd_paths`` run a test on every instruction-set path the CPU runs."""
import contextlib
from pathlib import Path

import pytest

import fastrank

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    if not SHARED_DATA.is_dir():
        raise FileNotFoundError(f"real data sets expected at {SHARED_DATA} "
                                "(../shared/data beside the checkout)")
    return SHARED_DATA


# ---- instruction-set paths ------------------------------------------------------------

@contextlib.contextmanager
def _forced(path):
    previous = fastrank.use_simd(path)
    try:
        yield path
    finally:
        fastrank.use_simd(previous)


#: the instruction-set paths this CPU runs (fastrank.use_simd), portable first
CPU_SIMD_PATHS = fastrank.show_config(mode="dict")["simd"]["cpu_paths"]


@pytest.fixture(params=CPU_SIMD_PATHS)
def simd_path(request):
    """The test runs once on every instruction-set path the CPU runs, that path forced by
    name (the path in use restored after); the fixture's value is the path's name."""
    with _forced(request.param):
        yield request.param


class _SimdPaths:
    """``names``: the paths the CPU runs; ``force(path)``: a context manager running its
    block on ``path``; iterating gives each path the CPU runs, forced while the loop's body
    runs (restored after)."""
    names = CPU_SIMD_PATHS
    force = staticmethod(_forced)

    def __iter__(self):
        for path in CPU_SIMD_PATHS:
            with _forced(path):
                yield path


@pytest.fixture(scope="session")
def simd_paths():
    """Every instruction-set path the CPU runs, in one test: ``for path in simd_paths:``
    runs the loop's body on each (forced by name), and ``simd_paths.force(path)`` runs a
    block on one of ``simd_paths.names`` (for paths drawn by hypothesis)."""
    return _SimdPaths()
