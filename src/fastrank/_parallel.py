"""How many OpenMP threads fastrank's kernels use (``n_jobs`` of the high-level API)."""
import contextlib
import numbers
import os

from ._ext import _threads

#: most threads a call may ask for (OpenMP runtimes abort the process far beyond it)
MAX_THREADS = 1024


def effective_n_jobs(n_jobs):
    """None -> the OpenMP default; -1 -> all cores; a positive int -> that many threads."""
    if n_jobs is None:
        return _threads.get_max_threads()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs must be None, -1 or a positive int, got {n_jobs!r}")
    if n_jobs == -1:
        return os.cpu_count() or 1
    if not 1 <= n_jobs <= MAX_THREADS:
        raise ValueError(f"n_jobs must be None, -1 or an int from 1 to {MAX_THREADS}, "
                         f"got {n_jobs!r}")
    return int(n_jobs)


@contextlib.contextmanager
def num_threads(n_jobs):
    """Run the block with the kernels' thread count set from ``n_jobs``, then restore it."""
    before = _threads.get_max_threads()
    _threads.set_num_threads(effective_n_jobs(n_jobs))
    try:
        yield
    finally:
        _threads.set_num_threads(before)
