"""``fastrank.dask.evaluate`` on a real ``distributed.LocalCluster`` and on Dask's local
scheduler: equal to the in-memory ``evaluate`` for any row chunking, also when a worker is
killed in the middle."""
import os
import signal
import threading
import time

import dask
import dask.array as da
import distributed
import numpy as np
import pytest
import scipy.sparse as sp

import fastrank.dask as fd
from fastrank import metrics as M

EVERY = ("ordinal", "dense", "standard", "modified", "expected")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as c:
        yield c


def tied_data(n, q, seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, q)) < 0.3).astype(np.uint8)
    s = rng.integers(0, 5, size=(n, q)) / 4
    return y, s


def assert_same(got, want):
    assert got.ties == want.ties
    np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.stderr, want.stderr, rtol=1e-9, atol=1e-12)


def test_on_a_local_cluster_equals_in_memory(cluster):
    y, s = tied_data(3001, 17, 0)
    want = M.evaluate(y, s, ties=EVERY, random_state=7)
    chunks = ((1000, 1, 700, 1300),)  # uneven, one single-row chunk
    with distributed.Client(cluster):
        got = fd.evaluate(da.from_array(y, chunks=chunks + ((17,),)),
                          da.from_array(s.astype(np.float32), chunks=chunks + ((17,),)),
                          ties=EVERY, random_state=7, split_every=2)
    # float32 beliefs: the values are multiples of 1/4, exact in both precisions
    assert_same(got, want)


def test_sparse_chunks_on_a_local_cluster(cluster):
    y, s = tied_data(900, 12, 1)
    want = M.evaluate(y, s, ties=EVERY, random_state=0, cutoff=3)
    with distributed.Client(cluster):
        ys = da.from_array(s, chunks=(250, 12)).map_blocks(sp.csr_matrix)
        yt = da.from_array(sp.csr_matrix(y), chunks=(250, 12), asarray=False)
        assert_same(fd.evaluate(yt, ys, ties=EVERY, random_state=0, cutoff=3), want)


def test_top_k_metrics_on_a_local_cluster_equal_in_memory(cluster):
    """``at_k``: sparse chunks of scored labels (the XMLC input), weights, every top-k tie
    semantics with propensities, beside two ranking types and alone."""
    y, s = tied_data(2000, 15, 3)
    rng = np.random.default_rng(3)
    scored = sp.csr_matrix(np.where(rng.random(s.shape) < 0.5, s + 0.25, 0.0))  # 0: unscored
    w = rng.uniform(0, 2, 2000)
    at_k = dict(k=(1, 3, 5), ties=M.TOPK_TIES, propensity=M.propensity(y, A=0.6, B=2.6))
    chunks = (700, 1, 500, 799)
    with distributed.Client(cluster):
        for ties in (("modified", "ordinal"), ()):
            want = M.evaluate(y, scored, ties=ties, random_state=9, sample_weight=w, at_k=at_k)
            got = fd.evaluate(da.from_array(sp.csr_matrix(y), chunks=(chunks, 15), asarray=False),
                              da.from_array(scored, chunks=(chunks, 15), asarray=False),
                              ties=ties, random_state=9, at_k=at_k, split_every=2,
                              sample_weight=da.from_array(w, chunks=(chunks,)))
            assert_same(got, want)
            assert got.at_k.metrics == want.at_k.metrics and got.at_k.ties == M.TOPK_TIES
            np.testing.assert_allclose(got.at_k.values, want.at_k.values, rtol=1e-12,
                                       atol=1e-12)
    # and the in-memory value is evaluate_at_k's (unscored labels below the scored ones)
    np.testing.assert_array_equal(
        want.at_k.values,
        M.evaluate_at_k(y, scored, random_state=9, sample_weight=w, **at_k).values)


@pytest.mark.parametrize("rows", [1, 64, 500, 1200])
def test_any_row_chunking_on_the_local_scheduler(rows):
    y, s = tied_data(1200, 9, 2)
    want = M.evaluate(y, s, ties=EVERY, random_state=3, n_draws=20)
    with dask.config.set(scheduler="threads"):
        got = fd.evaluate(da.from_array(y, chunks=(rows, 9)), da.from_array(s, chunks=(rows, 9)),
                          ties=EVERY, random_state=3, n_draws=20)
    assert_same(got, want)


def _generated(block_info=None, q=8, which="score"):
    """One lazily generated chunk, from (seed, chunk index) alone."""
    (lo, hi), _ = block_info[None]["array-location"]
    rng = np.random.default_rng([11, lo])
    y = (rng.random((hi - lo, q)) < 0.25).astype(np.uint8)
    s = (rng.integers(0, 9, size=(hi - lo, q)) / 8).astype(np.float32)
    return s if which == "score" else y


def test_lazily_generated_beliefs_equal_the_materialised_ones():
    chunks = ((400,) * 5, (8,))
    s = da.map_blocks(_generated, chunks=chunks, dtype=np.float32, which="score")
    y = da.map_blocks(_generated, chunks=chunks, dtype=np.uint8, which="truth")
    with dask.config.set(scheduler="threads"):
        got = fd.evaluate(y, s, ties=EVERY)
        want = M.evaluate(y.compute(), s.compute(), ties=EVERY)
    assert_same(got, want)


def test_bad_input_is_refused():
    y, s = tied_data(100, 6, 0)
    dy, ds = da.from_array(y, chunks=(30, 6)), da.from_array(s, chunks=(30, 6))
    with pytest.raises(TypeError, match="dask.array"):
        fd.evaluate(y, ds)
    with pytest.raises(ValueError, match="chunked along labels"):
        fd.evaluate(dy, da.from_array(s, chunks=(30, 3)))
    with pytest.raises(ValueError, match="chunked alike"):
        fd.evaluate(da.from_array(y, chunks=(40, 6)), ds)
    with pytest.raises(ValueError, match="shape"):
        fd.evaluate(dy[:, :5], ds)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        fd.evaluate(dy[dy[:, 0] >= 0], ds[dy[:, 0] >= 0])
    with pytest.raises(ValueError, match="n_labels"):
        fd.evaluate(dy, ds, n_labels=7)
    with pytest.raises(ValueError, match="split_every"):
        fd.evaluate(dy, ds, split_every=1)
    with pytest.raises(ValueError, match="ties"):
        fd.evaluate(dy, ds, ties="nonsense")
    with pytest.raises(ValueError, match=r"rows 30..59: y_score contains NaN"):
        bad = s.copy()
        bad[55, 2] = np.nan
        with dask.config.set(scheduler="sync"):
            fd.evaluate(dy, da.from_array(bad, chunks=(30, 6)))


def test_sample_weight_chunked_like_the_rows():
    y, s = tied_data(500, 7, 5)
    w = np.random.default_rng(5).random(500)
    want = M.evaluate(y, s, ties=EVERY, sample_weight=w)
    with dask.config.set(scheduler="threads"):
        got = fd.evaluate(da.from_array(y, chunks=(120, 7)), da.from_array(s, chunks=(120, 7)),
                          ties=EVERY, sample_weight=da.from_array(w, chunks=120))
        assert_same(got, want)
        with pytest.raises(ValueError, match="sample_weight"):
            fd.evaluate(da.from_array(y, chunks=(120, 7)), da.from_array(s, chunks=(120, 7)),
                        sample_weight=da.from_array(w, chunks=100))


def _slowly_generated(block_info=None, which="score"):
    """:func:`_generated` after a pause: an evaluation long enough to kill a worker in."""
    time.sleep(0.05)
    return _generated(block_info, which=which)


def test_a_worker_killed_mid_evaluation_changes_nothing(cluster):
    """A worker SIGKILLed while the chunks are evaluated (its nanny restarts it): Dask
    evaluates its chunks again, and the result is the in-memory one."""
    chunks = ((100,) * 24, (8,))
    arrays = {f: [da.map_blocks(f, chunks=chunks, dtype=dtype, which=which)
                  for which, dtype in (("truth", np.uint8), ("score", np.float32))]
              for f in (_generated, _slowly_generated)}
    want = M.evaluate(*dask.compute(*arrays[_generated], scheduler="sync"), ties=EVERY,
                      random_state=5)
    with distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        result = {}
        evaluation = threading.Thread(target=lambda: result.update(got=fd.evaluate(
            *arrays[_slowly_generated], ties=EVERY, random_state=5, split_every=3)))
        evaluation.start()
        deadline = time.monotonic() + 60
        while not any(client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        busy = [w for w, keys in client.processing().items() if keys]
        assert busy and evaluation.is_alive(), "the evaluation ended before a worker was killed"
        os.kill(pids[busy[0]], signal.SIGKILL)
        evaluation.join(timeout=120)
        assert not evaluation.is_alive()
        assert_same(result["got"], want)
        client.wait_for_workers(2, timeout=60)
        assert pids[busy[0]] not in client.run(os.getpid).values()
