"""Neighbour search, kNN and ML-kNN against scikit-learn, FAISS and
scikit-multilearn-ng, side by side in one process.

Run: pytest benchmarks/bench_neighbors.py --benchmark-only

- ``topk_cosine(X, X, k)`` (every document against the collection, itself included) on
  Reuters-21578 ModApte test (3 019 docs, tf-idf by fastrank.text.TfidfIndexer, eq. 2.1-2.2)
  and Mulan bibtex (7 395 x 1 836, binary), k = 10 and 100, fastrank on 1 and 2 threads:
  CSR (also on the embedded yeast data, 2 417 x 103, dense-ish values stored sparse: the
  posting lists that hold every row) vs scikit-learn
  ``NearestNeighbors(metric="cosine", algorithm="brute", n_jobs=2)``;
  dense float32 (fastrank also float64) vs ``faiss.IndexFlatIP`` (float32) on
  unit-normalised rows (FAISS on the same thread count; normalisation not timed for FAISS,
  timed for fastrank) and vs scikit-learn; ``test_topk_dense_paired_faiss`` runs fastrank
  and FAISS in alternating turns (a ratio that holds on a loaded machine too).
- ML-kNN fit + predict (k=10, s=1) on bibtex, first 4 880 documents for training (Mulan's
  split size), the other 2 515 for testing, vs ``skmultilearn.adapt.MLkNN`` (fork 0.0.8).
  The fork finds neighbours with Euclidean distance, so it gets unit-normalised rows (the
  same order as cosine, up to ties); timed with its default ``ignore_first_neighbours=0``.
  What is compared in values (``test_mlknn_agreement``, not timed): the fork counts a
  training document as its own neighbour by default, unlike Fig. 2.3, so it is fitted with
  ``ignore_first_neighbours=1`` and predicts with 0; its ``predict_proba`` is the normalised
  posterior, its ``predict`` the MAP with ``>=``, as ours. Differences remain where ties
  (duplicate documents, equal distances) are broken differently.
- Without FMA3: ML-kNN fit + predict on one fold of the embedded yeast data (dense float64,
  2 175 / 242 documents), the dense search's portable code with the C library's ``fma`` and
  with its exact emulation, 1 thread. Run it once more with
  ``GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-FMA4,-AVX2``, which makes glibc's ``fma`` take its
  software path, as on a CPU without FMA3 (the emulation does not depend on it).
- Scaling: the ML-kNN training search ``topk_cosine(X, X, 10, exclude_self=True)`` on
  synthetic sparse text (fastrank.datasets.make_multilabel, 20 000 terms) for n = 1k..100k.
"""
import os
import time
from pathlib import Path

import faiss
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

from fastrank.datasets import load, load_arff, load_text, make_multilabel
from fastrank.neighbors import MLkNN, topk_cosine
from fastrank.text import TfidfIndexer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # ../shared/data, never committed
N_TRAIN_BIBTEX = 4880


@pytest.fixture(scope="module")
def collections():
    reuters = load_text(DATA / "reuters" / "reuters21578-modapte-test.json")
    R = TfidfIndexer().fit_transform(reuters.texts)
    bibtex = load_arff(DATA / "mulan" / "bibtex" / "bibtex.arff")
    return {"reuters": R, "bibtex": bibtex.X.astype(np.float64),
            "yeast": sp.csr_matrix(load("yeast").X, dtype=np.float64)}


@pytest.fixture(scope="module")
def bibtex():
    d = load_arff(DATA / "mulan" / "bibtex" / "bibtex.arff")
    X = d.X.astype(np.float64)
    return X[:N_TRAIN_BIBTEX], d.Y[:N_TRAIN_BIBTEX], X[N_TRAIN_BIBTEX:]


def _unit(X):
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), np.finfo(X.dtype).tiny)


def _run(benchmark, fn, threads=None, rounds=3):
    """Best of `rounds` (after one warm-up run when rounds > 1), all thread pools limited to
    `threads` (BLAS, OpenMP) when given."""
    warmup = 1 if rounds > 1 else 0
    benchmark.extra_info["loadavg_1min_before"] = round(os.getloadavg()[0], 2)
    if threads is None:
        benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=warmup)
        return
    with threadpool_limits(threads):
        benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=warmup)


# ---- topk_cosine ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["reuters", "bibtex", "yeast"])
@pytest.mark.parametrize("k", [10, 100])
@pytest.mark.parametrize("threads", [1, 2])
def test_topk_csr_fastrank(benchmark, collections, name, k, threads):
    X = collections[name]
    benchmark.group = f"topk {name} CSR k={k}"
    benchmark.extra_info.update(threads=threads, shape=X.shape, nnz=int(X.nnz))
    _run(benchmark, lambda: topk_cosine(X, X, k), threads)


@pytest.mark.parametrize("name", ["reuters", "bibtex", "yeast"])
@pytest.mark.parametrize("k", [10, 100])
def test_topk_csr_sklearn(benchmark, collections, name, k):
    X = collections[name]
    benchmark.group = f"topk {name} CSR k={k}"
    benchmark.extra_info.update(n_jobs=2)
    _run(benchmark, lambda: NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute",
                                             n_jobs=2).fit(X).kneighbors(X))


@pytest.fixture(scope="module")
def dense32(collections):
    return {name: X.toarray().astype(np.float32) for name, X in collections.items()}


@pytest.mark.parametrize("name", ["reuters", "bibtex"])
@pytest.mark.parametrize("k", [10, 100])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_topk_dense_fastrank(benchmark, dense32, name, k, threads, dtype):
    X = dense32[name].astype(dtype)
    benchmark.group = f"topk {name} dense float32 k={k}"
    benchmark.extra_info.update(threads=threads, shape=X.shape, dtype=dtype)
    _run(benchmark, lambda: topk_cosine(X, X, k), threads)


@pytest.mark.parametrize("name", ["reuters", "bibtex"])
@pytest.mark.parametrize("k", [10, 100])
@pytest.mark.parametrize("threads", [1, 2])
def test_topk_dense_faiss(benchmark, dense32, name, k, threads):
    Xn = np.ascontiguousarray(_unit(dense32[name]))
    index = faiss.IndexFlatIP(Xn.shape[1])
    index.add(Xn)
    benchmark.group = f"topk {name} dense float32 k={k}"
    benchmark.extra_info.update(threads=threads)
    faiss.omp_set_num_threads(threads)
    try:
        _run(benchmark, lambda: index.search(Xn, k), threads)
    finally:
        faiss.omp_set_num_threads(os.cpu_count())


@pytest.mark.parametrize("name", ["reuters", "bibtex"])
@pytest.mark.parametrize("threads", [1, 2])
def test_topk_dense_paired_faiss(benchmark, dense32, name, threads):
    """Dense float32, k=10: fastrank and FAISS alternating in turns (3 each, after one
    warm-up each), so that both see the same load; their minima and the ratio
    FAISS / fastrank go to extra_info (the timed function is empty: not a timing)."""
    X = dense32[name]
    Xn = np.ascontiguousarray(_unit(X))
    index = faiss.IndexFlatIP(Xn.shape[1])
    index.add(Xn)
    runs = {"fastrank": lambda: topk_cosine(X, X, 10), "faiss": lambda: index.search(Xn, 10)}
    times = {who: [] for who in runs}
    benchmark.extra_info["loadavg_1min_before"] = round(os.getloadavg()[0], 2)
    faiss.omp_set_num_threads(threads)
    try:
        with threadpool_limits(threads):
            for turn in range(4):
                for who, run in runs.items():
                    start = time.perf_counter()
                    run()
                    if turn:
                        times[who].append(time.perf_counter() - start)
    finally:
        faiss.omp_set_num_threads(os.cpu_count())
    best = {who: min(t) for who, t in times.items()}
    benchmark.group = f"topk {name} dense float32 k=10, paired with FAISS (not a timing)"
    benchmark.extra_info.update(threads=threads, fastrank_s=round(best["fastrank"], 4),
                                faiss_s=round(best["faiss"], 4),
                                faiss_over_fastrank=round(best["faiss"] / best["fastrank"], 3),
                                loadavg_1min_after=round(os.getloadavg()[0], 2))
    print(f"\n{name} threads={threads}: fastrank {best['fastrank']:.3f} s, FAISS "
          f"{best['faiss']:.3f} s, FAISS / fastrank {best['faiss'] / best['fastrank']:.2f}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


@pytest.mark.parametrize("name", ["reuters", "bibtex"])
def test_topk_dense_sklearn(benchmark, dense32, name):
    X = dense32[name]
    benchmark.group = f"topk {name} dense float32 k=10"
    benchmark.extra_info.update(n_jobs=2)
    _run(benchmark, lambda: NearestNeighbors(n_neighbors=10, metric="cosine", algorithm="brute",
                                             n_jobs=2).fit(X).kneighbors(X), rounds=1)


# ---- ML-kNN -----------------------------------------------------------------------------------

@pytest.mark.parametrize("threads", [1, 2])
def test_mlknn_fastrank(benchmark, bibtex, threads):
    Xtr, Ytr, Xte = bibtex
    benchmark.group = "MLkNN bibtex fit+predict k=10"
    benchmark.extra_info.update(threads=threads)
    _run(benchmark, lambda: MLkNN(k=10).fit(Xtr, Ytr).predict(Xte), threads)


def test_mlknn_skmultilearn(benchmark, bibtex):
    from skmultilearn.adapt import MLkNN as SkMLkNN
    Xtr, Ytr, Xte = bibtex
    Ztr, Zte = _unit(Xtr.toarray()), _unit(Xte.toarray())
    benchmark.group = "MLkNN bibtex fit+predict k=10"
    benchmark.extra_info.update(n_jobs=2, features="unit-normalised dense float64, Euclidean")
    _run(benchmark, lambda: SkMLkNN(k=10, n_jobs=2).fit(Ztr, Ytr).predict(Zte), rounds=1)


@pytest.mark.parametrize("fma", ["library", "emulated"])
def test_mlknn_portable_fma(benchmark, fma):
    """The portable dense search: with the C library's fma (path portable) and with its
    exact emulation (path popcnt, what x86-64 CPUs without FMA3 take)."""
    import fastrank
    from fastrank._ext import cosine_topk as kernel
    from fastrank.datasets import load
    d = load("yeast")
    X, Y = d.X.toarray(), d.Y
    benchmark.group = "MLkNN yeast fold fit+predict, portable dense search, 1 thread"
    previous = fastrank.use_simd("popcnt" if fma == "emulated" else "portable")
    try:
        benchmark.extra_info.update(threads=1, simd_path=kernel.simd_path(),
                                    glibc_tunables=os.environ.get("GLIBC_TUNABLES"))
        _run(benchmark, lambda: MLkNN(k=10).fit(X[:2175], Y[:2175]).decision_function(
            X[2175:]), threads=1, rounds=3 if fma == "emulated" else 2)
    finally:
        fastrank.use_simd(previous)


def test_mlknn_agreement(benchmark, bibtex):
    """Not a timing: how far the fork's values agree with ours (written to extra_info)."""
    from skmultilearn.adapt import MLkNN as SkMLkNN
    Xtr, Ytr, Xte = bibtex
    ours = MLkNN(k=10).fit(Xtr, Ytr)
    sk = SkMLkNN(k=10, ignore_first_neighbours=1).fit(_unit(Xtr.toarray()), Ytr)
    sk.ignore_first_neighbours = 0
    Zte = _unit(Xte.toarray())
    F, P = ours.decision_function(Xte), ours.predict(Xte)
    Fs, Ps = sk.predict_proba(Zte).toarray(), sk.predict(Zte).toarray()
    sk_true, sk_false = sk._cond_prob_true.toarray(), sk._cond_prob_false.toarray()
    benchmark.group = "MLkNN bibtex agreement (not a timing)"
    benchmark.extra_info.update(
        prior_max_abs_diff=float(np.abs(ours.prior_ - sk._prior_prob_true).max()),
        cond_true_max_abs_diff=float(np.abs(ours.cond_true_ - sk_true).max()),
        cond_false_max_abs_diff=float(np.abs(ours.cond_false_ - sk_false).max()),
        belief_mean_abs_diff=float(np.abs(F - Fs).mean()),
        belief_max_abs_diff=float(np.abs(F - Fs).max()),
        prediction_equal_fraction=float((P == Ps).mean()))
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


# ---- scaling ----------------------------------------------------------------------------------

# 100k documents only on 2 threads (about a minute per run)
@pytest.mark.parametrize("n, threads", [(n, t) for n in (1_000, 3_000, 10_000, 30_000)
                                        for t in (1, 2)] + [(100_000, 2)])
def test_scaling_training_search(benchmark, n, threads):
    X = make_multilabel(n_documents=n, n_labels=20, n_features=20_000, random_state=0).X
    benchmark.group = "scaling topk_cosine(X, X, 10, exclude_self=True)"
    benchmark.extra_info.update(threads=threads, n=n, nnz=int(X.nnz))
    _run(benchmark, lambda: topk_cosine(X, X, 10, exclude_self=True), threads,
         rounds=3 if n <= 10_000 else 1)
