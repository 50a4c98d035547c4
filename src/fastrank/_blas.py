"""BLAS held at one thread while fastrank's own threads run GEMMs, safely across threads.

The dense neighbour search runs one BLAS GEMM per OpenMP thread; BLAS must then use a
single thread of its own, or its results would depend on how it splits the work (the last
bits of a GEMM change with its thread count). ``threadpoolctl.threadpool_limits`` sets a
process-wide limit, so two calls from two Python threads would interleave: one call's exit
would restore multi-threaded BLAS while the other call's GEMMs run. Here the limit is
reference-counted: the first call in sets it, the last call out restores what it found.
"""
import contextlib
import threading

from threadpoolctl import threadpool_limits

_lock = threading.Lock()
_users = 0
_limiter = None


@contextlib.contextmanager
def single_threaded_blas():
    """Run the block with BLAS at one thread; nested and concurrent uses share the limit,
    and the process' BLAS settings are restored when the last one leaves."""
    global _users, _limiter
    with _lock:
        if _users == 0:
            _limiter = threadpool_limits(1, user_api="blas")
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                _limiter.restore_original_limits()
                _limiter = None
