"""The followed shuffle of the C core (follow.h) against the whole shuffle it follows.

Ordinal coverage, ranking loss and average precision follow a tie group's few relevant
labels through the group's seeded shuffle instead of shuffling the group. Here the C
function is compiled on its own (the system's C compiler, the core's headers) and
compared with a plain Fisher-Yates run of the same steps, on every vector path this CPU
has; a place outside the group is returned unchanged instead of looping.
"""
import ctypes
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

CORE = Path(__file__).resolve().parents[1] / "src" / "fastrank" / "_ext" / "core"

HARNESS = r"""
#include "follow.h"

int best_level(void) { return (int) fr_simd_best(); }

int32_t group_place(uint64_t row, ptrdiff_t step, ptrdiff_t m, ptrdiff_t t) {
    return fr_group_place(row, step, m, t);
}

void follow(int level, ptrdiff_t* pos, ptrdiff_t k, ptrdiff_t m, uint64_t row,
            ptrdiff_t step) {
    int32_t places[4096 + 16];
    fr_shuffled_positions(level, pos, k, m, row, step, places);
}
"""


@pytest.fixture(scope="module")
def core(tmp_path_factory):
    """The harness built as a shared library and loaded (ctypes)."""
    where = tmp_path_factory.mktemp("follow")
    (where / "harness.c").write_text(HARNESS)
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    built = subprocess.run(cc + ["-O2", "-shared", "-fPIC", f"-I{CORE}", "harness.c", "-o",
                                 "harness.so"], cwd=where, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    lib = ctypes.CDLL(str(where / "harness.so"))
    lib.group_place.restype = ctypes.c_int32
    lib.group_place.argtypes = [ctypes.c_uint64, ctypes.c_ssize_t, ctypes.c_ssize_t,
                                ctypes.c_ssize_t]
    lib.follow.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_ssize_t,
                           ctypes.c_ssize_t, ctypes.c_uint64, ctypes.c_ssize_t]
    return lib


def _levels(core):
    """Portable, AVX2 and AVX-512 (2, 3; fastrank's SIMD levels) where this CPU runs them."""
    return [level for level in (0, 2, 3) if level <= core.best_level()]


def _followed(core, level, places, m, row, step):
    pos = (ctypes.c_ssize_t * len(places))(*places)
    core.follow(level, pos, len(places), m, row, step)
    return list(pos)


def _shuffled(core, m, row, step):
    """Where each place's label ends: step t swaps place m - 1 - t with the place it draws."""
    at = list(range(m))  # at[place] = the label there
    for t in range(m - 1):
        p = core.group_place(row, step, m, t)
        at[m - 1 - t], at[p] = at[p], at[m - 1 - t]
    where = [0] * m
    for place, label in enumerate(at):
        where[label] = place
    return where


@pytest.mark.parametrize("m", [2, 3, 17, 64, 65, 66, 200, 4096])
def test_followed_places_equal_the_whole_shuffle(core, m):
    rng = np.random.default_rng(m)
    for row, step in [(0, 0), (0x9E3779B97F4A7C15, 1), (12345, 7), (2**64 - 1, 1000)]:
        where = _shuffled(core, m, row, step)
        places = sorted(rng.choice(m, size=min(m, 5), replace=False).tolist())
        for level in _levels(core):
            assert _followed(core, level, places, m, row, step) == [where[p] for p in places]
            assert _followed(core, level, list(range(m)), m, row, step) == where


@pytest.mark.parametrize("m", [2, 17, 64, 65, 200])
def test_a_place_outside_the_group_stays_instead_of_looping(core, m):
    """A wrong count upstream must give a wrong value that tests catch, not a hang."""
    for level in _levels(core):
        assert _followed(core, level, [m, m + 5, 3 * m], m, 42, 3) == [m, m + 5, 3 * m]
        assert _followed(core, level, [-1], m, 42, 3) == [-1]
