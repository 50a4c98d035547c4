"""A Dask cluster that loses every worker, on real ``LocalCluster`` processes: it ends
``fastrank.dask.evaluate``, a sharded fit or search and a ``--scheduler`` study with
``NoWorkersError`` naming the scheduler, after the bound (Dask's
``distributed.scheduler.no-workers-timeout``) and never a hang; a task that fails raises
its own error. (One worker lost changes no result: the worker-killed tests of
test_dask_evaluate.py, test_dask_sharded.py and test_dask_study.py.)

Every computation runs under a hard limit (a thread joined with a timeout, a subprocess
waited for with one), so that a regression fails instead of hanging."""
import os
import signal
import subprocess
import sys
import threading
import time

import dask
import dask.array as da
import distributed
import numpy as np
import pytest

import fastrank.dask as fd
from fastrank import KNN, VGRAM
from fastrank.dask import NoWorkersError, ShardedEstimator, _sharded

BOUND = 2.0  # the no-workers timeout of these tests, in seconds
MARGIN = 4.0  # the polling, the scheduler noticing the loss, a busy CI machine
TIMEOUT = {"distributed.scheduler.no-workers-timeout": f"{BOUND}s"}
EVERY = ("ordinal", "dense", "standard", "modified", "expected")


def local_cluster(n_workers=2):
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0")


def lose_every_worker(cluster):
    """SIGKILL every worker process of ``cluster``, its nanny told first not to restart it
    (as when the machines are lost); returns the time of the loss."""
    for nanny in list(cluster.workers.values()):
        pid = nanny.pid
        nanny.close_gracefully()
        os.kill(pid, signal.SIGKILL)
    return time.monotonic()


def finished_tasks(client, name):
    """How many tasks of the function ``name`` hold their result on the cluster."""
    def count(dask_scheduler):
        return sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items()
                   if name in str(key))
    return client.run_on_scheduler(count)


class Call:
    """``fn()`` on a thread: its value or its exception, and when it ended."""

    def __init__(self, fn):
        self.value = self.error = self.ended = None

        def run():
            try:
                self.value = fn()
            except BaseException as exc:  # noqa: B036 - handed to the test
                self.error = exc
            self.ended = time.monotonic()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self, timeout):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"still waiting after {timeout} s: a hang"
        return self


def kill_when(client, name, n, call):
    """Wait until ``n`` tasks of ``name`` are done (the computation is under way), then
    lose every worker, while ``call`` still runs; returns the time of the loss."""
    deadline = time.monotonic() + 60
    while finished_tasks(client, name) < n:
        assert time.monotonic() < deadline, f"no {name} task finished in 60 s"
        time.sleep(0.02)
    assert call.thread.is_alive(), "the computation ended before the workers were lost"
    return lose_every_worker(client.cluster)


def assert_no_workers_error(call, client, lost):
    """``call`` failed with NoWorkersError naming the scheduler, after the bound."""
    call.join(BOUND + MARGIN + 5)
    assert isinstance(call.error, NoWorkersError), repr(call.error)
    assert isinstance(call.error, TimeoutError)
    message = str(call.error)
    assert client.scheduler.address in message and "no-workers-timeout" in message
    assert "\n" not in message
    assert BOUND <= call.ended - lost <= BOUND + MARGIN, call.ended - lost


def slow_chunk(block_info=None, q=8, which="score", delay=0.0):
    """One chunk generated from its first row alone; ``delay`` seconds of sleep make the
    computation long enough to be interrupted."""
    (lo, hi), _ = block_info[None]["array-location"]
    time.sleep(delay)
    rng = np.random.default_rng([23, lo])
    y = (rng.random((hi - lo, q)) < 0.25).astype(np.uint8)
    s = (rng.integers(0, 9, size=(hi - lo, q)) / 8).astype(np.float32)
    return s if which == "score" else y


def generated(n_chunks, rows=100, delay=0.0):
    chunks = ((rows,) * n_chunks, (8,))
    return (da.map_blocks(slow_chunk, chunks=chunks, dtype=np.uint8, which="truth", delay=delay),
            da.map_blocks(slow_chunk, chunks=chunks, dtype=np.float32, delay=delay))


def test_the_bound_is_dasks_setting_else_60_s():
    with dask.config.set({"distributed.scheduler.no-workers-timeout": None}):
        assert fd.no_workers_timeout() == 60.0
    with dask.config.set({"distributed.scheduler.no-workers-timeout": "5 minutes"}):
        assert fd.no_workers_timeout() == 300.0
    with dask.config.set({"distributed.scheduler.no-workers-timeout": 2.5}):
        assert fd.no_workers_timeout() == 2.5
    for bad in ("0s", -1, "soon"):
        with dask.config.set({"distributed.scheduler.no-workers-timeout": bad}):
            with pytest.raises(ValueError, match="no-workers-timeout must be a positive"):
                fd.no_workers_timeout()


def test_cli_refuses_a_bad_bound_before_starting_a_cluster(tmp_path, monkeypatch, capsys):
    from fastrank.__main__ import main
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    with dask.config.set({"distributed.scheduler.no-workers-timeout": "soon"}):
        assert main(["study", "--scheduler", "local:1", "--folds", "2", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastrank study: error: distributed.scheduler.no-workers-timeout "
                          "must be a positive duration") and err.count("\n") == 1
    assert os.listdir(tmp_path) == [] and time.monotonic() - start < 5


def test_evaluate_fails_when_every_worker_is_lost():
    y, s = generated(40, delay=0.05)
    with local_cluster() as cluster, distributed.Client(cluster) as client, \
            dask.config.set(TIMEOUT):
        call = Call(lambda: fd.evaluate(y, s, ties=EVERY))
        lost = kill_when(client, "_evaluate_chunk", 2, call)
        assert_no_workers_error(call, client, lost)


def test_sharded_search_and_fit_fail_when_every_worker_is_lost(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.random((600, 60)) * (rng.random((600, 60)) < 0.3)
    Y = (rng.random((600, 8)) < 0.3).astype(np.uint8)
    X_test = rng.random((400, 60)) * (rng.random((400, 60)) < 0.3)
    monkeypatch.setattr(_sharded, "PARTIAL_BYTES", 512 * 24 * 8)  # 8 query rows per task
    with local_cluster() as cluster, distributed.Client(cluster) as client, \
            dask.config.set(TIMEOUT):
        sharded = ShardedEstimator(VGRAM(n_neurons=512, n_synapses=256, random_state=0),
                                   n_shards=2, client=client).fit(X, Y)
        call = Call(lambda: sharded.predict(X_test))
        lost = kill_when(client, "_vgram_partial", 4, call)
        assert_no_workers_error(call, client, lost)
        # fitting on the cluster without workers: shards that cannot be built, and one
        # shard per worker with no worker
        for n_shards in (2, None):
            start = time.monotonic()
            call = Call(lambda: ShardedEstimator(KNN(k=3), n_shards=n_shards,
                                                 client=client).fit(X, Y))
            assert_no_workers_error(call, client, start)


def test_the_schedulers_own_timeout_gives_the_same_error():
    """A scheduler started with Dask's no-workers-timeout fails the waiting tasks itself
    (here after 1 s, before this process's 60 s): the same error."""
    y, s = generated(4)
    with dask.config.set({"distributed.scheduler.no-workers-timeout": "1s"}):
        cluster = local_cluster(n_workers=1)
    with cluster, distributed.Client(cluster) as client, \
            dask.config.set({"distributed.scheduler.no-workers-timeout": "60s"}):
        lost = lose_every_worker(cluster)
        call = Call(lambda: fd.evaluate(y, s)).join(1 + MARGIN + 5)
        assert isinstance(call.error, NoWorkersError), repr(call.error)
        assert isinstance(call.error.__cause__, distributed.scheduler.NoWorkerError)
        assert client.scheduler.address in str(call.error) and " 1 s " in str(call.error)
        assert call.ended - lost <= 1 + MARGIN


@pytest.mark.parametrize("noticed", [False, True], ids=["fetching", "noticed-first"])
def test_values_lost_after_their_tasks_finished_fail_too(noticed):
    """Tasks that finished, whose values went with their workers before the caller fetched
    them: Dask computes them again, which waits for a worker; the fetch is bounded as the
    wait is (the race of a study whose workers die between two completed folds), whether
    the client learns of the loss while fetching or before; either way the futures are
    cancelled."""
    from fastrank.dask._client import as_completed, gather
    with local_cluster() as cluster, distributed.Client(cluster) as client, \
            dask.config.set(TIMEOUT):
        futures = client.map(np.arange, range(100, 104), pure=False)
        distributed.wait(futures, timeout=60)
        assert all(f.status == "finished" for f in futures)
        lost = lose_every_worker(cluster)
        deadline = time.monotonic() + 30
        while noticed and any(f.status == "finished" for f in futures):
            assert time.monotonic() < deadline, "the client never learnt of the loss"
            time.sleep(0.02)
        call = Call(lambda: gather(client, futures))
        assert_no_workers_error(call, client, lost)
        assert all(f.status == "cancelled" for f in futures)  # nothing left waiting

    with local_cluster() as cluster, distributed.Client(cluster) as client, \
            dask.config.set(TIMEOUT):
        futures = client.map(np.arange, range(100, 104), pure=False)
        distributed.wait(futures, timeout=60)
        lost = lose_every_worker(cluster)
        call = Call(lambda: list(as_completed(client, futures)))
        assert_no_workers_error(call, client, lost)


def _kill_own_worker(block):
    """A chunk whose task ends its worker process (never called for the meta: the caller
    gives it)."""
    os._exit(1)


def test_a_failing_task_raises_its_own_error():
    """Not the no-workers error: a task's own exception, and ``KilledWorker`` for a task
    that killed its worker on every try (here one, allowed-failures being 0)."""
    y, s = generated(4)
    bad = s.map_blocks(lambda b: np.where(b > 0.9, np.nan, b), dtype=np.float32)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = local_cluster(n_workers=1)
    with cluster, distributed.Client(cluster):
        call = Call(lambda: fd.evaluate(y, bad)).join(60)
        assert isinstance(call.error, ValueError)
        assert "in the chunk of rows" in str(call.error) and "NaN" in str(call.error)
        killer = s.map_blocks(_kill_own_worker, meta=np.empty((0, 0), np.float32))
        call = Call(lambda: fd.evaluate(y, killer)).join(60)
        assert isinstance(call.error, distributed.KilledWorker), repr(call.error)
        # a task of the chunks (the one killing or its source, which may be fused with it)
        assert any(name in str(call.error.task) for name in ("_kill_own_worker", "slow_chunk"))


def snapshot(folder):
    """Every entry under ``folder``: its content (None for a folder) and modification time."""
    return {p: (None if p.is_dir() else p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


def test_cli_study_fails_in_one_line_and_leaves_the_output_folder(tmp_path):
    out = tmp_path / "out"  # an earlier run's output set, which must stay as it was
    (out / "figures").mkdir(parents=True)
    (out / "results.json").write_text('{"earlier": "run"}\n')
    (out / "figures" / "coverage.svg").write_text("<svg/>\n")
    before = snapshot(out)
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT": f"{BOUND}s"}
    with local_cluster() as cluster, distributed.Client(cluster) as client:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fastrank", "study", "--classifiers", "knn,mlknn",
             "--folds", "10", "--scheduler", cluster.scheduler_address, "--out", str(out)],
            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
        lines, lost = [], None
        try:
            watchdog = threading.Timer(240, proc.kill)  # a hang fails the test (the study
            # starts slowly on a busy machine)
            watchdog.start()
            for line in proc.stderr:
                lines.append(line)
                if lost is None and line.startswith("["):  # a task has completed
                    lost = lose_every_worker(cluster)
                if line.startswith("fastrank study: error:"):
                    failed = time.monotonic()
            proc.wait(30)
        finally:
            watchdog.cancel()
            proc.kill()
        assert lost is not None, "".join(lines)
        assert proc.returncode == 2, "".join(lines)
        assert lines[-1].startswith("fastrank study: error: ") and \
            client.scheduler.address in lines[-1] and "no running worker" in lines[-1]
        assert not any("Traceback" in line for line in lines)
        progress = [line for line in lines if line.startswith("[")]
        assert 1 <= len(progress) < 20, "".join(lines)
        assert BOUND <= failed - lost <= BOUND + MARGIN, failed - lost
    assert proc.stdout.read() == ""
    assert snapshot(out) == before
