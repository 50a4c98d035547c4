# cython: language_level=3
"""The instruction-set path every kernel takes: one level for the process, named by
core/simd.h (``portable``, ``popcnt``, ``avx2``, ``avx512``, ``avx512-vpopcntdq``), the
best this CPU runs unless ``FASTRANK_SIMD`` (read once, at import) or :func:`use` names
another. A path the CPU lacks is refused. Each kernel reads the level when it is called
and takes its best code at or below it; every path gives the same bits.

The public interface is ``fastrank.use_simd`` and ``fastrank.show_config``.
"""
import os

#: the paths, by level (each needs the CPU features of the paths before it and more)
PATHS = tuple(fr_simd_name(i).decode() for i in range(FR_SIMD_N_LEVELS))
#: the CPU features the paths need, as /proc/cpuinfo names them
FEATURES = tuple(fr_cpu_feature_name(i).decode() for i in range(FR_CPU_N_FEATURES))


def needs(path):
    """The CPU features (of FEATURES) that path ``path`` needs."""
    cdef unsigned mask = fr_simd_needs(<int> PATHS.index(path))
    return tuple(f for i, f in enumerate(FEATURES) if mask >> i & 1)


def cpu_features():
    """The features of FEATURES this CPU has (none off x86-64)."""
    cdef unsigned mask = fr_cpu_features()
    return tuple(f for i, f in enumerate(FEATURES) if mask >> i & 1)


def cpu_paths():
    """The paths this CPU runs, ``"portable"`` first and the best last."""
    return PATHS[:<int> fr_simd_best() + 1]


cdef fr_simd_level _level = fr_simd_best()


cdef fr_simd_level current_level() noexcept nogil:
    return _level


def path():
    """The path in use."""
    return PATHS[<int> _level]


def use(path):
    """Run every kernel on ``path`` from now on; returns the path used before.

    Raises ValueError for a name not in PATHS, and for a path this CPU lacks a feature
    of (naming the features missing).
    """
    global _level
    if path not in PATHS:
        raise ValueError(f"unknown SIMD path {path!r}; valid: "
                         + ", ".join(repr(p) for p in PATHS))
    missing = [f for f in needs(path) if f not in cpu_features()]
    if missing:
        raise ValueError(f"SIMD path {path!r} needs CPU features this CPU lacks: "
                         f"{', '.join(missing)} (it runs: {', '.join(cpu_paths())})")
    previous = PATHS[<int> _level]
    _level = <fr_simd_level> <int> PATHS.index(path)
    return previous


#: FASTRANK_SIMD as read at import (None when unset or empty): the path it names is used
#: from the start
ENV = os.environ.get("FASTRANK_SIMD") or None
if ENV is not None:
    try:
        use(ENV)
    except ValueError as e:
        raise ValueError(f"FASTRANK_SIMD={ENV!r}: {e}") from None
