"""A ``distributed.Client`` from a scheduler spec."""
import contextlib
import os
import re
import socket
from collections.abc import Iterator

import distributed

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
        A string that is not one of the forms above.
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
