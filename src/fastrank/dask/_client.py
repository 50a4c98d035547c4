"""A ``distributed.Client`` from a scheduler spec, and waiting on its tasks with a bound on
the time without workers."""
import asyncio
import contextlib
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import dask
import distributed
from dask.utils import parse_timedelta
from distributed.scheduler import NoValidWorkerError, NoWorkerError

_LOCAL = re.compile(r"local(?::(\d+))?\Z")
_TCP = re.compile(r"tcp://\[?([^\[\]]+?)\]?:(\d+)\Z")


def _check_spec(scheduler):
    if isinstance(scheduler, distributed.Client):
        return
    if not isinstance(scheduler, str):
        raise TypeError("scheduler must be a distributed.Client or a string ('local', "
                        f"'local:N' or 'tcp://HOST:PORT'), got {type(scheduler).__name__}")
    m = _LOCAL.match(scheduler)
    if m and (m.group(1) is None or 1 <= int(m.group(1)) <= 256):
        return
    if not m and "://" in scheduler:
        return
    raise ValueError(f"scheduler must be 'local', 'local:N' (1 <= N <= 256) or an address "
                     f"like 'tcp://HOST:PORT', got {scheduler!r}")


def _check_reachable(address, timeout):
    """Fail at once when nothing listens at a ``tcp://`` address: ``distributed.Client``
    would retry a refused connection until its timeout."""
    m = _TCP.match(address)
    if m is None:
        return
    try:
        socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout).close()
    except (OSError, ValueError) as exc:
        raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


@contextlib.contextmanager
def connect(scheduler: "distributed.Client | str", timeout: float = 10
            ) -> Iterator[distributed.Client]:
    """Context manager yielding a ``distributed.Client`` for ``scheduler``.

    Parameters
    ----------
    scheduler : distributed.Client or str
        * a ``distributed.Client``: used as it is (left open);
        * ``"local"`` / ``"local:N"``: a new ``LocalCluster`` on this machine with N worker
          processes (1 <= N <= 256; default: one per CPU core) of one thread each, closed on
          exit;
        * an address such as ``"tcp://HOST:PORT"``: a client of that running scheduler,
          closed on exit (the cluster stays up).
    timeout : float, default 10
        Seconds to wait for a scheduler at an address.

    Yields
    ------
    distributed.Client

    Raises
    ------
    TypeError
        ``scheduler`` is neither a Client nor a string.
    ValueError
        A string that is not one of the forms above, or Dask's
        ``distributed.scheduler.no-workers-timeout`` that is not a positive duration (see
        :func:`no_workers_timeout`).
    ConnectionError
        The scheduler at the address cannot be reached within ``timeout`` seconds.

    Examples
    --------
    >>> from fastrank.dask import connect
    >>> with connect("local:1") as client:
    ...     len(client.scheduler_info()["workers"])
    1
    """
    _check_spec(scheduler)
    no_workers_timeout()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    m = _LOCAL.match(scheduler)
    if m:
        n = int(m.group(1)) if m.group(1) else (os.cpu_count() or 1)
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            yield client
        return
    _check_reachable(scheduler, timeout)
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConnectionError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    with client:
        yield client


#: seconds without a running worker after which a computation fails, when Dask's setting
#: ``distributed.scheduler.no-workers-timeout`` is unset
NO_WORKERS_TIMEOUT = 60.0

_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)  # distinct classes before Python 3.11


class NoWorkersError(TimeoutError):
    """The Dask cluster had no running worker for longer than :func:`no_workers_timeout`
    while fastrank's tasks waited for one (its workers were lost, or all are paused)."""


def no_workers_timeout() -> float:
    """Seconds a computation on a Dask cluster may wait without any running worker before
    it fails with :class:`NoWorkersError`: Dask's setting
    ``distributed.scheduler.no-workers-timeout`` as this process reads it
    (``dask.config.set``, or the environment variable
    ``DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT``), else :data:`NO_WORKERS_TIMEOUT`.

    Raises
    ------
    ValueError
        The setting is not a positive duration.
    """
    value = dask.config.get("distributed.scheduler.no-workers-timeout", None)
    if value is None:
        return NO_WORKERS_TIMEOUT
    try:
        seconds = parse_timedelta(value, default="s")
    except (TypeError, ValueError, KeyError):
        seconds = None
    if seconds is None or not seconds > 0:
        raise ValueError("distributed.scheduler.no-workers-timeout must be a positive "
                         f"duration such as '60s' or '5 minutes', got {value!r}")
    return float(seconds)


def _no_workers(client, seconds):
    return NoWorkersError(f"the Dask scheduler at {client.scheduler.address} had no running "
                          f"worker for {seconds:g} s (Dask's setting "
                          "distributed.scheduler.no-workers-timeout): the cluster lost its "
                          "workers, or they are all paused")


def require_worker(client: distributed.Client) -> None:
    """Return once the scheduler of ``client`` has a running worker; raise
    :class:`NoWorkersError` when none has come within :func:`no_workers_timeout`
    seconds."""
    bound = no_workers_timeout()
    try:
        client.wait_for_workers(1, timeout=bound)
    except _TIMEOUTS:
        raise _no_workers(client, bound) from None


def _until(client, futures, attempt):
    """Call ``attempt(step)`` until it returns a value other than None, and return that
    value; once the cluster has had no running worker for :func:`no_workers_timeout`
    seconds, cancel ``futures`` (nothing is left waiting for a worker) and fail with
    :class:`NoWorkersError`. The scheduler is asked whenever a quarter of the bound, at most
    a second, passes without an attempt succeeding."""
    bound = no_workers_timeout()
    step = min(1.0, bound / 4)
    alone = None  # since when no worker has been running
    while True:
        outcome = attempt(step)
        if outcome is not None:
            return outcome
        check = time.monotonic()
        try:
            client.wait_for_workers(1, timeout=step)
            alone = None
        except _TIMEOUTS:
            alone = check if alone is None else alone
            if time.monotonic() - alone >= bound:
                client.cancel(futures)
                raise _no_workers(client, bound) from None


def _wait(client, futures, return_when):
    """``distributed.wait(futures, return_when=...)``, bounded as :func:`_until`."""
    def attempt(step):
        try:
            with client.as_current():  # distributed.wait uses the current client
                return distributed.wait(futures, timeout=step, return_when=return_when)
        except _TIMEOUTS:
            return None
    return _until(client, futures, attempt)


def _fetch(client, futures, fetch):
    """``fetch()``, the transfer of values of finished ``futures``, bounded as
    :func:`_until`: a value lost with its worker after its task finished is computed
    again, which waits for a worker. The transfer runs on a thread of its own, so that a
    slow one is never interrupted; when the bound passes, ``futures`` are cancelled, which
    ends it."""
    outcome = []

    def run():
        try:
            outcome.append((fetch(), None))
        except BaseException as exc:  # noqa: B036 - raised again by the caller
            outcome.append((None, exc))

    thread = threading.Thread(target=run, name="fastrank-fetch", daemon=True)
    thread.start()
    value, error = _until(client, futures, lambda step: thread.join(step) or
                          (outcome[0] if outcome else None))
    if error is not None:
        raise error
    return value


def _result(client, future):
    """The result of a finished ``future`` (fetched as :func:`_fetch`); a failed task raises
    its own error, except when the scheduler failed it for want of workers (its own
    ``no-workers-timeout``): :class:`NoWorkersError`."""
    try:
        return _fetch(client, [future], future.result)
    except (NoWorkerError, NoValidWorkerError) as exc:
        raise _no_workers(client, exc.timeout) from exc


def wait(client: distributed.Client, futures: Iterable[Any]) -> None:
    """Wait until every task of ``futures`` is done, without fetching their values; raise
    the error of a failed one (see :func:`as_completed`)."""
    for future in _wait(client, list(futures), "ALL_COMPLETED").done:
        if future.status == "error":
            _result(client, future)


def gather(client: distributed.Client, futures: Iterable[Any]) -> list:
    """The values of ``futures``, in order (``client.gather`` failing as :func:`wait`)."""
    futures = list(futures)
    wait(client, futures)
    return _fetch(client, futures, lambda: client.gather(futures))


def as_completed(client: distributed.Client, futures: Iterable[Any]) -> Iterator[tuple]:
    """``(future, value)`` for each of ``futures`` as its task finishes.

    A failed task raises its own error; a task whose worker died is run again, up to
    Dask's ``distributed.scheduler.allowed-failures`` times, then raises
    ``distributed.KilledWorker``. A cluster without a running worker for
    :func:`no_workers_timeout` seconds raises :class:`NoWorkersError`, naming the
    scheduler's address.
    """
    pending = list(futures)
    while pending:
        done, pending = _wait(client, pending, "FIRST_COMPLETED")
        for future in done:
            yield future, _result(client, future)
