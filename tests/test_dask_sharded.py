"""fastrank.dask.ShardedEstimator on a real two-process LocalCluster: bit-for-bit equality
with the single-process estimators for 1, 2 and 3 uneven shards, agreement with the slow
references, real Mulan data, a worker killed in the middle of a search, and bad input."""
import os
import signal
import threading
import time

import distributed
import numpy as np
import pytest
import scipy.sparse as sp

import ref_wnn
from fastrank import KNN, MLkNN, VGRAM, VGRAMCor
from fastrank._base import NotFittedError
from fastrank.dask import ShardedEstimator, _sharded
from ref_neighbors import dyadic_docs, ref_knn, ref_mlknn

KINDS = {
    "dense64": lambda X: np.asarray(X, dtype=np.float64),
    "dense32": lambda X: np.asarray(X, dtype=np.float32),
    "csr64": lambda X: sp.csr_matrix(X, dtype=np.float64),
}

ESTIMATORS = [
    KNN(k=5),
    KNN(k=None, aggregate="sum"),
    KNN(k=3, aggregate="count"),
    MLkNN(k=6, s=1.0),
    VGRAM(n_neurons=24, n_synapses=256, tie_policy="random", random_state=3),
    VGRAM(n_neurons=24, n_synapses=40, tie_policy="all", random_state=4),
    VGRAMCor(n_neurons=24, n_synapses=256, tie_policy="random", random_state=5),
    VGRAMCor(n_neurons=24, n_synapses=40, tie_policy="all", random_state=6),
]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    # not the default client: the tests pass it, except the one about client=None
    with distributed.Client(cluster, set_as_default=False) as client:
        yield client


def tie_heavy(seed, n_train=41, n_test=23, n_features=48, q=5):
    """Dyadic 0/1 documents (exact, often tied cosines; many equal VG-RAM patterns), labels
    with a label-less document; 41 rows: shards of 41, 20 + 21 and 13 + 14 + 14 rows."""
    rng = np.random.default_rng(seed)
    X = dyadic_docs(rng, n_train + n_test, n_features=n_features)
    Y = (rng.random((n_train, q)) < 0.35).astype(np.uint8)
    Y[0, 0] = 1
    Y[1] = 0
    return X[:n_train], Y, X[n_train:]


def clone(est):
    return type(est)(**est.get_params())


@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_equals_single_process(client, est, kind, n_shards):
    X, Y, X_test = tie_heavy(n_shards)
    X, X_test = KINDS[kind](X), KINDS[kind](X_test)
    single = clone(est).fit(X, Y)
    sharded = ShardedEstimator(est, n_shards=n_shards, client=client).fit(X, Y)
    assert sharded.n_shards_ == n_shards and len(sharded.shards_) == n_shards
    np.testing.assert_array_equal(np.diff(sharded.shard_bounds_),
                                  np.diff(np.linspace(0, 41, n_shards + 1).astype(int)))
    np.testing.assert_array_equal(sharded.decision_function(X_test),
                                  single.decision_function(X_test))
    np.testing.assert_array_equal(sharded.predict(X_test), single.predict(X_test))
    np.testing.assert_array_equal(sharded.classes_, single.classes_)
    if isinstance(est, MLkNN):  # the count tables summed over the shards
        for name in ("prior_", "cond_true_", "cond_false_"):
            np.testing.assert_array_equal(getattr(sharded._model, name), getattr(single, name))


@pytest.mark.parametrize("kind", ["dense64", "csr64"])
def test_agrees_with_references(client, kind):
    """Independent of the single-process code: the slow NumPy references."""
    X, Y, X_test = tie_heavy(7)
    Xk, X_testk = KINDS[kind](X), KINDS[kind](X_test)
    for est, ref in [
        (KNN(k=4), lambda: ref_knn(X, Y, X_test, 4, "max")),
        (MLkNN(k=5, s=0.5), lambda: ref_mlknn(X, Y, X_test, 5, 0.5)[0]),
    ]:
        F = ShardedEstimator(est, n_shards=3, client=client).fit(Xk, Y).decision_function(X_testk)
        np.testing.assert_allclose(F, ref(), rtol=1e-12, atol=1e-12)
    for cls, name in [(VGRAM, "VGRAM"), (VGRAMCor, "COR")]:
        for policy in ("random", "all"):
            est = cls(n_neurons=16, n_synapses=30, tie_policy=policy, random_state=2)
            sharded = ShardedEstimator(est, n_shards=3, client=client).fit(Xk, Y)
            expected = ref_wnn.beliefs(name, policy, X, Y, X_test, sharded._model.synapses_,
                                       sharded._model.seed_)
            np.testing.assert_array_equal(sharded.decision_function(X_testk), expected)


def test_vgram_shard_without_labelled_documents(client):
    """A VG-RAM shard whose rows all lack labels stores nothing and is left out of the
    searches; the stored-entry numbering of the later shards stays global."""
    X, Y, X_test = tie_heavy(8)
    Y[14:28] = 0
    for est in (VGRAM(n_neurons=16, n_synapses=64, random_state=1),
                VGRAMCor(n_neurons=16, n_synapses=64, random_state=1)):
        single = clone(est).fit(X, Y)
        sharded = ShardedEstimator(est, n_shards=3, client=client).fit(X, Y)
        np.testing.assert_array_equal(sharded.decision_function(X_test),
                                      single.decision_function(X_test))


def test_default_client_and_one_shard_per_worker(client):
    X, Y, X_test = tie_heavy(9)
    with client.as_current():
        sharded = ShardedEstimator(KNN(k=3)).fit(X, Y)
    assert sharded.n_shards_ == 2
    np.testing.assert_array_equal(sharded.decision_function(X_test),
                                  KNN(k=3).fit(X, Y).decision_function(X_test))


def test_vgram_predict_threshold_and_many_query_batches(client, monkeypatch):
    X, Y, X_test = tie_heavy(10, n_test=40)
    est = VGRAM(n_neurons=32, n_synapses=64, random_state=0)
    single = clone(est).fit(X, Y)
    monkeypatch.setattr(_sharded, "PARTIAL_BYTES", 1)  # one query row per task
    sharded = ShardedEstimator(est, n_shards=2, client=client).fit(X, Y)
    np.testing.assert_array_equal(sharded.decision_function(X_test),
                                  single.decision_function(X_test))
    np.testing.assert_array_equal(sharded.predict(X_test, threshold=0.2),
                                  single.predict(X_test, threshold=0.2))
    with pytest.raises(TypeError, match="threshold applies to VG-RAM only"):
        ShardedEstimator(KNN(k=2), client=client).fit(X, Y).predict(X_test, threshold=0.5)


@pytest.mark.shared_data
def test_real_mulan_data(client, shared_data):
    from fastrank.datasets import load_arff
    d = load_arff(shared_data / "mulan" / "emotions" / "emotions.arff")
    X, Y = d.X.toarray(), d.Y
    X_train, Y_train, X_test = X[:400], Y[:400], X[400:]
    for est in (KNN(k=10), MLkNN(k=10),
                VGRAM(n_neurons=64, n_synapses=256, random_state=0),
                VGRAMCor(n_neurons=64, n_synapses=256, tie_policy="all", random_state=0)):
        single = clone(est).fit(X_train, Y_train)
        for n_shards in (2, 3):
            sharded = ShardedEstimator(est, n_shards=n_shards, client=client)
            sharded.fit(X_train, Y_train)
            np.testing.assert_array_equal(sharded.decision_function(X_test),
                                          single.decision_function(X_test))


def test_worker_killed_during_search(cluster, client, monkeypatch):
    """SIGKILL a worker while a sharded search runs: its shard is rebuilt from the task
    graph on the surviving (or restarted) worker, the lost tasks rerun, and the beliefs
    are unchanged."""
    rng = np.random.default_rng(0)
    X = rng.random((600, 60)) * (rng.random((600, 60)) < 0.3)
    Y = (rng.random((600, 8)) < 0.3).astype(np.uint8)
    X_test = rng.random((400, 60)) * (rng.random((400, 60)) < 0.3)
    est = VGRAM(n_neurons=512, n_synapses=256, random_state=0)
    expected = clone(est).fit(X, Y).decision_function(X_test)
    monkeypatch.setattr(_sharded, "PARTIAL_BYTES", 512 * 24 * 8)  # 8 query rows per task
    sharded = ShardedEstimator(est, n_shards=2, client=client).fit(X, Y)
    victim = sorted(client.who_has(sharded.shards_[1]).values())[0][0]
    pid = client.run(os.getpid, workers=[victim])[victim]

    def finished_partials(dask_scheduler):
        return sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items()
                   if "_vgram_partial" in str(key))

    result = {}
    search = threading.Thread(target=lambda: result.update(F=sharded.decision_function(X_test)))
    search.start()
    deadline = time.monotonic() + 30
    while client.run_on_scheduler(finished_partials) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert search.is_alive(), "the search ended before the worker could be killed"
    os.kill(pid, signal.SIGKILL)
    search.join(timeout=60)
    assert not search.is_alive()
    np.testing.assert_array_equal(result["F"], expected)
    client.wait_for_workers(2, timeout=30)
    # the shard is still usable afterwards
    np.testing.assert_array_equal(sharded.decision_function(X_test[:5]), expected[:5])


def test_lost_shard_is_rebuilt(client):
    """A shard whose every copy is lost with its workers (ML-kNN's self-join copies a shard
    to the other worker) is rebuilt from the task graph."""
    X, Y, X_test = tie_heavy(13)
    for est in (MLkNN(k=4), VGRAM(n_neurons=16, n_synapses=64, random_state=0)):
        sharded = ShardedEstimator(est, n_shards=2, client=client).fit(X, Y)
        shard = sharded.shards_[1]
        victims = client.who_has(shard)[shard.key]
        assert victims
        for pid in client.run(os.getpid, workers=list(victims)).values():
            os.kill(pid, signal.SIGKILL)
        while set(victims) & set(client.nthreads()):
            time.sleep(0.01)
        np.testing.assert_array_equal(sharded.decision_function(X_test),
                                      clone(est).fit(X, Y).decision_function(X_test))
        assert client.who_has(shard)[shard.key] and \
            not set(victims) & set(client.who_has(shard)[shard.key])
        client.wait_for_workers(2, timeout=30)


def test_bad_input(client, cluster):
    X, Y, X_test = tie_heavy(11)
    with pytest.raises(TypeError, match="supports fastrank KNN, MLkNN, VGRAM and VGRAMCor"):
        ShardedEstimator(object(), client=client).fit(X, Y)
    with pytest.raises(TypeError, match="supports"):
        ShardedEstimator(KNN, client=client).fit(X, Y)  # a class, not an instance
    with pytest.raises(ValueError, match="n_shards must be between 1 and the 41"):
        ShardedEstimator(KNN(k=2), n_shards=0, client=client).fit(X, Y)
    with pytest.raises(ValueError, match="n_shards must be between 1 and the 41"):
        ShardedEstimator(KNN(k=2), n_shards=42, client=client).fit(X, Y)
    with pytest.raises(TypeError, match="n_shards must be a positive int"):
        ShardedEstimator(KNN(k=2), n_shards=2.0, client=client).fit(X, Y)
    with pytest.raises(TypeError, match="client must be a distributed.Client"):
        ShardedEstimator(KNN(k=2), client="local").fit(X, Y)
    with pytest.raises(NotFittedError, match="not fitted"):
        ShardedEstimator(KNN(k=2), client=client).decision_function(X_test)
    with pytest.raises(NotFittedError, match="not fitted"):
        ShardedEstimator(VGRAM(), client=client).predict(X_test)
    # the estimator's own checks, before any shard is built
    with pytest.raises(ValueError, match="k=50 exceeds"):
        ShardedEstimator(KNN(k=50), client=client).fit(X, Y)
    with pytest.raises(ValueError, match="aggregate"):
        ShardedEstimator(KNN(aggregate="mean"), client=client).fit(X, Y)
    with pytest.raises(TypeError, match="MLkNN needs an int k"):
        ShardedEstimator(MLkNN(k=None), client=client).fit(X, Y)
    with pytest.raises(ValueError, match="no training document has a label"):
        ShardedEstimator(VGRAM(), client=client).fit(X, np.zeros_like(Y))
    with pytest.raises(ValueError, match="documents"):
        ShardedEstimator(KNN(k=2), client=client).fit(X[:-1], Y)
    fitted = ShardedEstimator(KNN(k=2), client=client).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        fitted.decision_function(X_test[:, :-1])


def test_no_client():
    X, Y, _ = tie_heavy(12)
    with pytest.raises(ValueError, match="needs a Dask client"):
        ShardedEstimator(KNN(k=2)).fit(X, Y)


def test_params():
    est = ShardedEstimator(KNN(k=2), n_shards=3)
    assert est.get_params(deep=False) == {"estimator": est.estimator, "n_shards": 3,
                                          "client": None}
    assert est.get_params()["estimator__k"] == 2
    assert est.set_params(n_shards=2).n_shards == 2
    assert est.set_params(estimator__k=4).estimator.k == 4
    with pytest.raises(ValueError, match="Invalid parameter 'k'"):
        est.set_params(k=3)


def test_clone_shares_the_client(client):
    """sklearn.base.clone copies the estimator template but never the client connection."""
    import sklearn.base
    X, Y, X_test = tie_heavy(13)
    est = ShardedEstimator(MLkNN(k=3), n_shards=2, client=client)
    copy = sklearn.base.clone(est)
    assert copy.client is client and copy.estimator is not est.estimator
    assert copy.estimator.get_params() == est.estimator.get_params()
    fitted = est.fit(X, Y)
    refit = sklearn.base.clone(fitted)
    assert not hasattr(refit, "shards_") and refit.client is client
    np.testing.assert_array_equal(refit.fit(X, Y).decision_function(X_test),
                                  fitted.decision_function(X_test))


@pytest.mark.parametrize("est", [KNN(k=3), MLkNN(k=3), VGRAM(n_neurons=8, n_synapses=32,
                                                             random_state=0)], ids=repr)
@pytest.mark.parametrize("dtype", [np.int64, bool])
def test_predict_returns_the_targets_dtype(client, est, dtype):
    X, Y, X_test = tie_heavy(11)
    sharded = ShardedEstimator(est, n_shards=2, client=client).fit(X, Y.astype(dtype))
    want = clone(est).fit(X, Y).predict(X_test)
    got = sharded.predict(X_test)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)
