"""Top-k XMLC metrics at WikiLSHTC-325K scale: fastrank.metrics.evaluate_at_k vs napkinXC
and ranx on the same input and metrics; and out of core at Amazon-670K scale.

Run: python -m pytest benchmarks/bench_topk.py --benchmark-only -p no:cacheprovider -s
(``-k out_of_core`` for the second part alone)

Input (synthetic, shaped like WikiLSHTC-325K's test set): 587 084 documents x 325 056
labels, each with the (indices, scores) pair of its 100 scored labels (int32 / float32, in
no particular order, scores quantised to 1/128 as coarse scorers do, so ties at the
cut-offs are common: their rates are printed and stored in extra_info) and 1 + Poisson(2.2)
true labels (mean 3.2), about half of them among its scored labels. Metrics: P@1,3,5,
nDCG@1,3,5, PSP@1,3,5 and PSnDCG@1,3,5 (propensities from the truth itself, A = 0.5,
B = 0.4) under ties="expected".

napkinXC (which has no top-k pair input: it gets the CSR matrix of the same scores and
argsorts every row) and ranx (dicts of string ids; it has no PS metrics) are timed on the
first SUBSET documents and their time scaled to the whole set (per-document cost: both
loop over documents); ranx's time excludes the conversion to its dicts (printed apart) and
its numba compilation (a warm-up call first).

Out of core (``test_topk_out_of_core_*``): ``fastrank.dask.evaluate(..., ties=(),
at_k=...)`` on Dask's local threaded scheduler (2 threads) over a synthetic input shaped
like Amazon-670K's test set, 153 025 documents x 670 091 labels, generated lazily per chunk
of AMAZON_CHUNK rows from (seed, first row): each document's 100 scored labels as a CSR
chunk (float32 scores quantised to 1/128) and 1 + Poisson(4.45) true labels (mean 5.45,
about half among the scored ones). Metrics: P, nDCG, PSP and PSnDCG at 1, 3, 5 under
expected, optimistic and pessimistic ties (propensities A = 0.6, B = 2.6 from the truth).
Each evaluation runs in a fresh process; its peak RSS above its RSS before the call is
compared with the in-memory evaluate_at_k of the same input materialised (the peer), at a
quarter and at all of the documents: the out-of-core peak does not grow with the number of
documents. Both give the same values to 1e-12.
"""
import json
import os
import subprocess
import sys
import time

import dask
import dask.array as da

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import fastrank.dask as fdask
from fastrank.metrics import evaluate_at_k, propensity

N, Q, R = 587_084, 325_056, 100
KS = (1, 3, 5)
SUBSET = 20_000


def make(n=N, q=Q, r=R, seed=0):
    """(truth CSR, (indices, scores)) as described in the module docstring."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, q, n, dtype=np.int64)
    step = rng.integers(1, q // r, n, dtype=np.int64)      # r distinct labels per row
    indices = ((base[:, None] + step[:, None] * np.arange(r)) % q).astype(np.int32)
    scores = (np.floor(rng.beta(0.6, 4.0, (n, r)) * 128) / 128).astype(np.float32)
    m = 1 + rng.poisson(2.2, n)
    rows = np.repeat(np.arange(n), m)
    listed = rng.random(rows.size) < 0.5
    cols = np.where(listed, indices[rows, rng.integers(0, r, rows.size)],
                    rng.integers(0, q, rows.size))
    truth = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, q))
    truth.data[:] = 1.0
    return truth, (indices, scores)


def tie_rates(indices, scores, ks=KS, rows=50_000):
    """Share of documents whose tie group at position k is cut by the cut-off k."""
    s = -np.sort(-scores[:rows].astype(np.float64), axis=1)
    return {k: float(np.mean(s[:, k - 1] == s[:, k])) for k in ks}


@pytest.fixture(scope="module")
def data():
    truth, pair = make()
    return truth, pair, propensity(truth, A=0.5, B=0.4)


def _peak_reset():
    with open("/proc/self/clear_refs", "w") as f:   # resets VmHWM (Linux)
        f.write("5")


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


@pytest.mark.parametrize("threads", [1, 2])
def test_topk_fastrank(benchmark, data, threads):
    truth, pair, p = data
    evaluate_at_k(truth[:10], (pair[0][:10], pair[1][:10]), k=KS, propensity=p)
    before = _status("VmRSS")
    _peak_reset()
    with threadpool_limits(threads, user_api="openmp"):
        result = benchmark.pedantic(evaluate_at_k, args=(truth, pair),
                                    kwargs={"k": KS, "propensity": p}, rounds=3, iterations=1)
    extra = _status("VmHWM") - before
    rates = tie_rates(*pair)
    benchmark.extra_info.update(threads=threads, peak_rss_above_inputs_mib=extra / 2**20,
                                tie_rates=rates, load_average=list(os.getloadavg()))
    print(f"\nfastrank {threads} thread(s): {benchmark.stats.stats.min:.3f} s, peak RSS "
          f"+{extra / 2**20:.0f} MiB, tie rates at k {rates}\n{result}")


def test_topk_napkinxc(benchmark, data):
    from napkinxc import metrics as nxc
    truth, (indices, scores), p = data
    n = SUBSET
    pred = sp.csr_matrix((scores[:n].ravel(), indices[:n].ravel(),
                          np.arange(0, n * R + 1, R)), shape=(n, Q))
    y, inv = truth[:n], 1 / p

    def run():
        return [nxc.precision_at_k(y, pred, k=5), nxc.ndcg_at_k(y, pred, k=5),
                nxc.psprecision_at_k(y, pred, inv, k=5), nxc.psndcg_at_k(y, pred, inv, k=5)]

    benchmark.pedantic(run, rounds=1, iterations=1)
    full = benchmark.stats.stats.min * N / n
    benchmark.extra_info.update(documents=n, scaled_to_all_s=full)
    print(f"\nnapkinXC on {n} documents: {benchmark.stats.stats.min:.2f} s -> {full:.1f} s "
          "for all (P, nDCG, PSP, PSnDCG at 1..5)")


def test_topk_ranx(benchmark, data):
    from ranx import Qrels, Run, evaluate
    truth, (indices, scores), _ = data
    n = SUBSET
    t0 = time.perf_counter()
    qrels = Qrels({str(i): {str(j): 1 for j in truth.indices[truth.indptr[i]:truth.indptr[i + 1]]}
                   for i in range(n)})
    run = Run({str(i): dict(zip(map(str, indices[i]), scores[i].astype(float)))
               for i in range(n)})
    convert = time.perf_counter() - t0
    metrics = [f"{m}@{k}" for m in ("precision", "ndcg") for k in KS]
    evaluate(Qrels({"0": {"a": 1}}), Run({"0": {"a": 1.0, "b": 0.5}}), metrics)  # compile
    benchmark.pedantic(evaluate, args=(qrels, run, metrics), rounds=1, iterations=1)
    full = benchmark.stats.stats.min * N / n
    benchmark.extra_info.update(documents=n, scaled_to_all_s=full,
                                conversion_scaled_s=convert * N / n)
    print(f"\nranx on {n} documents: {benchmark.stats.stats.min:.2f} s -> {full:.1f} s for all "
          f"(P and nDCG at 1, 3, 5; no PS metrics); conversion to its dicts "
          f"{convert:.2f} s -> {convert * N / n:.1f} s")


AMAZON_N, AMAZON_Q, AMAZON_CHUNK = 153_025, 670_091, 5_000
AMAZON_AT_K = dict(k=KS, ties=("expected", "optimistic", "pessimistic"))


def amazon_chunk(lo, hi, which, q=AMAZON_Q, r=R):
    """Rows lo..hi-1 of the Amazon-670K-shaped input, from (seed, lo) alone: the CSR matrix
    of the scored labels ("score") or of the true labels ("truth")."""
    rng = np.random.default_rng([670, lo])
    n = hi - lo
    base = rng.integers(0, q, n, dtype=np.int64)
    step = rng.integers(1, q // r, n, dtype=np.int64)      # r distinct labels per row
    indices = np.sort((base[:, None] + step[:, None] * np.arange(r)) % q, axis=1)
    scores = (np.floor(rng.beta(0.6, 4.0, (n, r)) * 128) / 128).astype(np.float32)
    if which == "score":
        return sp.csr_matrix((scores.ravel(), indices.ravel().astype(np.int32),
                              np.arange(0, n * r + 1, r)), shape=(n, q))
    m = 1 + rng.poisson(4.45, n)
    rows = np.repeat(np.arange(n), m)
    listed = rng.random(rows.size) < 0.5
    cols = np.where(listed, indices[rows, rng.integers(0, r, rows.size)],
                    rng.integers(0, q, rows.size))
    truth = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(n, q))
    truth.data[:] = 1
    return truth


def _amazon_block(block_info=None, which="score"):
    (lo, hi), _ = block_info[None]["array-location"]
    return amazon_chunk(lo, hi, which)


def amazon_lazy(n):
    """The first n documents as Dask arrays of lazily generated CSR chunks."""
    chunks = (tuple(min(AMAZON_CHUNK, n - lo) for lo in range(0, n, AMAZON_CHUNK)), (AMAZON_Q,))
    meta = sp.csr_matrix((0, 0), dtype=np.float32)
    return tuple(da.map_blocks(_amazon_block, chunks=chunks, dtype=np.float32, meta=meta,
                               which=which) for which in ("truth", "score"))


@pytest.fixture(scope="module")
def amazon_propensity_file(tmp_path_factory):
    """The propensities (from the whole truth), saved for the measuring processes."""
    truth, _ = amazon_lazy(AMAZON_N)
    with dask.config.set(scheduler="threads", num_workers=2):
        p = propensity(truth.compute(), A=0.6, B=2.6)
    path = tmp_path_factory.mktemp("amazon") / "propensity.npy"
    np.save(path, p)
    return path


def amazon_measure(mode, n, propensity_file):
    """In a fresh process (``python benchmarks/bench_topk.py MODE N FILE``): one evaluation
    of the first n documents, out of core (mode "dask") or materialised first (mode
    "memory", then evaluate_at_k); prints its time (and the evaluation's alone when
    materialised), the process's RSS before the call and its peak RSS above it, and the
    values, as JSON."""
    at_k = dict(AMAZON_AT_K, propensity=np.load(propensity_file))
    truth, score = amazon_lazy(n)
    before = _status("VmRSS")
    _peak_reset()
    t0, alone = time.perf_counter(), {}
    with dask.config.set(scheduler="threads", num_workers=2):
        if mode == "dask":
            result = fdask.evaluate(truth, score, ties=(), at_k=at_k).at_k
        else:
            y, s = truth.compute(), score.compute()
            t1 = time.perf_counter()
            result = evaluate_at_k(y, s, **at_k)
            alone = {"evaluate_at_k_seconds": time.perf_counter() - t1}
    print(json.dumps({"seconds": time.perf_counter() - t0, **alone,
                      "rss_before_mib": before / 2**20,
                      "peak_above_mib": (_status("VmHWM") - before) / 2**20,
                      "values": result.values.tolist(), "table": str(result)}))


_AMAZON_VALUES = {}


@pytest.mark.parametrize("n", [AMAZON_N // 4, AMAZON_N])
@pytest.mark.parametrize("mode", ["dask", "memory"])
def test_topk_out_of_core_amazon670k(benchmark, amazon_propensity_file, mode, n):
    def child():
        out = subprocess.run([sys.executable, __file__, mode, str(n), str(amazon_propensity_file)],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.splitlines()[-1])

    out = benchmark.pedantic(child, rounds=1, iterations=1)
    _AMAZON_VALUES[mode, n] = values = np.array(out.pop("values"))
    other = _AMAZON_VALUES.get(("memory" if mode == "dask" else "dask", n))
    if other is not None:
        np.testing.assert_allclose(values, other, rtol=1e-12, atol=1e-12)
    table = out.pop("table")
    benchmark.extra_info.update(documents=n, mode=mode, load_average=list(os.getloadavg()),
                                **out)
    alone = f" (evaluate_at_k {out['evaluate_at_k_seconds']:.1f} s)" if mode == "memory" else ""
    print(f"\n{mode}, {n} documents: {out['seconds']:.1f} s{alone}, RSS "
          f"{out['rss_before_mib']:.0f} MiB before, peak +{out['peak_above_mib']:.0f} MiB"
          + ("; same values as the other mode to 1e-12" if other is not None else "")
          + (f"\n{table}" if n == AMAZON_N and mode == "dask" else ""))


if __name__ == "__main__":
    amazon_measure(sys.argv[1], int(sys.argv[2]), sys.argv[3])
