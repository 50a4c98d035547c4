"""fastrank on a Dask cluster (``pip install "fastrank-mlc[dask]"``).

Results equal the one-machine results: the same numbers, whatever the number of workers,
chunks or shards, because every random choice is keyed by global row (or training) numbers
and a seed, never by where the work ran.

- :func:`evaluate` -- :func:`fastrank.metrics.evaluate` over Dask arrays chunked by rows,
  one :class:`fastrank.metrics.Evaluator` per chunk and a tree reduction of their states
  (also out of core on one machine);
- :class:`ShardedEstimator` -- KNN, ML-kNN and VG-RAM with the training set split into
  shards that stay on their workers, partial results merged exactly;
- :func:`connect` -- a ``distributed.Client`` from a scheduler spec (``"local"``,
  ``"local:N"``, ``"tcp://host:port"``), as ``run_study(scheduler=...)`` and
  ``fastrank study --scheduler`` take it.

Every computation on a cluster fails with :class:`NoWorkersError` (a ``TimeoutError``)
naming the scheduler's address once the cluster has had no running worker for
:func:`no_workers_timeout` seconds (Dask's setting
``distributed.scheduler.no-workers-timeout``, else 60 s), instead of waiting for one
forever. A task whose worker dies is run again, with the same result, up to Dask's
``distributed.scheduler.allowed-failures`` times (then ``distributed.KilledWorker``); a
task that fails raises its own error.
"""
import importlib

try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('fastrank.dask needs Dask: pip install "fastrank-mlc[dask]" (from a '
                      'checkout: pip install ".[dask]")') from exc

_EXPORTS = {"evaluate": "_evaluate", "ShardedEstimator": "_sharded", "connect": "_client",
            "NoWorkersError": "_client", "no_workers_timeout": "_client"}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'fastrank.dask' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
