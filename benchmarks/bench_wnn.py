"""VG-RAM WNN prediction vs a NumPy reference (np.bitwise_count on the same packed words)
and vs faiss.IndexBinaryFlat doing the same per-neuron nearest search.

Run: pytest benchmarks/bench_wnn.py --benchmark-only
Data (from ../shared/data, never committed): Mulan bibtex features (binary, 1836 features;
first 4880 documents train, the next 64 are queries) and Reuters-21578 (ModApte test file)
as tf-idf (sklearn TfidfVectorizer; first 2000 documents train, the next 64 queries).
Thesis configurations: 1024 neurons x 512 / 1024 synapses.

* vs FAISS (every code path the CPU runs, the best one named plain "fastrank"): one
  IndexBinaryFlat per neuron holding that neuron's packed memory, searched
  with k=1 for the 64 query patterns (pre-encoded, outside the timing). fastrank's time is
  a whole ``decision_function`` (encoding + search of *all* minimum-distance entries +
  votes), FAISS's only the 1024 searches.
* vs NumPy: the same network restricted to 16 neurons (the reference would take minutes
  for 1024): per neuron, np.bitwise_count of query XOR memory words, summed, minimum,
  votes of all tied entries (tie_policy="all"); its beliefs are checked equal to ours.
* test_vs_faiss_dense_yeast: the default study's VG-RAM WNN (1024 x 1024) on one fold of
  the embedded, dense yeast data (2175 train, 242 queries), on every code path the CPU
  runs (``fastrank.use_simd``: what a CPU with only AVX2, or AVX-512 without VPOPCNTDQ and
  VBMI, takes), against FAISS.
* test_encoding_vs_streaming: the Minchinton encoding of those 2175 rows (every code path)
  against two bounds: a NumPy copy of the input plus a copy of 285 MB of zeros into the
  output (stream-bound), and the same input copy plus the C library's memset of the output
  with a non-zero byte (write-bound: writing alone, no read).
* test_small_call_latency: decision_function for 1 and 8 documents (p50/p99 over 190
  calls in extra_info).
* test_largest_configuration: the thesis' 32x32 neurons x 2048 synapses, which did not fit
  a 32-bit machine, trained on 7000 bibtex documents; fit/predict time and memory recorded.
"""
import ctypes
import json
import os
import time
from pathlib import Path

import faiss
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import fastrank
from fastrank._ext import vgram as wnn_kernel
from fastrank.wnn import VGRAM, VGRAMCor

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
N_QUERIES = 64
N_NEURONS = 1024
N_REF_NEURONS = 16


def _bibtex():
    from fastrank.datasets import load_arff
    d = load_arff(DATA / "mulan" / "bibtex" / "bibtex.arff")
    return d.X, d.Y, 4880


def _reuters():
    from sklearn.feature_extraction.text import TfidfVectorizer
    docs = json.loads((DATA / "reuters" / "reuters21578-modapte-test.json").read_text())
    X = TfidfVectorizer().fit_transform([d["text"] for d in docs])
    return X.tocsr(), [d["labels"] for d in docs], 2000


def _yeast():
    """The default study's data (embedded, dense): one fold's training part, 2175 rows."""
    from fastrank.datasets import load
    d = load("yeast")
    return d.X.toarray(), d.Y, YEAST_TRAIN


YEAST_TRAIN = 2175   # a 10-fold study's training fold of 2417 documents
DATASETS = {"bibtex": _bibtex, "reuters": _reuters, "yeast": _yeast}
_cache = {}


def setup(name, n_synapses, n_neurons=N_NEURONS, n_queries=N_QUERIES):
    """(model fitted on the training part, query features, query codes per neuron)."""
    key = (name, n_synapses, n_neurons, n_queries)
    if key not in _cache:
        X, Y, n_train = DATASETS[name]()
        Xq = X[n_train:n_train + n_queries]
        model = VGRAM(n_neurons, n_synapses, tie_policy="all", random_state=0)
        model.fit(X[:n_train], Y[:n_train])
        # the same wiring (same seed and input size) encodes the queries
        enc = VGRAMCor(n_neurons, n_synapses, random_state=0).fit(Xq, np.ones((Xq.shape[0], 1)))
        assert np.array_equal(enc.synapses_, model.synapses_)
        _cache[key] = (model, Xq, enc.memory_)
    return _cache[key]


def numpy_reference(model, codes):
    """Beliefs of VGRAM(tie_policy="all") from packed words with np.bitwise_count."""
    n_neurons, n_train, _ = model.memory_.shape
    q = model.classes_.shape[0]
    counts = np.diff(model.label_indptr_)
    doc_of_entry = np.repeat(np.arange(n_train), counts)
    F = np.zeros((codes.shape[1], q))
    for n in range(n_neurons):
        xor = codes[n][:, None, :] ^ model.memory_[n][None, :, :]
        D = np.bitwise_count(xor).sum(axis=2, dtype=np.int64)          # (queries, docs)
        tied = D == D.min(axis=1, keepdims=True)
        cnt = np.zeros((codes.shape[1], q), dtype=np.int64)
        for j in range(codes.shape[1]):
            np.add.at(cnt[j], model.label_indices_[tied[j][doc_of_entry]], 1)
        F += cnt / cnt.sum(axis=1, keepdims=True)
    return F / n_neurons


def rss_bytes():
    """Current resident set size (Linux /proc), to measure what a fitted model occupies."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def faiss_indexes(model):
    indexes = []
    for n in range(model.memory_.shape[0]):
        index = faiss.IndexBinaryFlat(model.memory_.shape[2] * 64)
        index.add(model.memory_[n].view(np.uint8))
        indexes.append(index)
    return indexes


def faiss_search(indexes, codes):
    for n, index in enumerate(indexes):
        index.search(codes[n].view(np.uint8), 1)


#: one implementation per code path of the kernel that this CPU runs, the best one plain
_CPU_PATHS = fastrank.show_config(mode="dict")["simd"]["cpu_paths"]
PATHS = {("fastrank" if path == _CPU_PATHS[-1] else f"fastrank-{path}"): path
         for path in _CPU_PATHS}


def on_path(benchmark, impl, func):
    """func run on the kernel's code path of impl (a PATHS key), recorded in extra_info."""
    path = PATHS[impl]

    def run(*args):
        previous = fastrank.use_simd(path)
        try:
            return func(*args)
        finally:
            fastrank.use_simd(previous)
    benchmark.extra_info.update(simd_path=path)
    return run


def _info(benchmark, model, threads, peer):
    n_neurons, n_train, words = model.memory_.shape
    benchmark.extra_info.update(
        threads=threads, peer=peer, n_neurons=n_neurons, n_train=n_train,
        n_synapses=model.synapses_.shape[1], queries=N_QUERIES,
        memory_bytes=model.memory_bytes_,
        memory_bits_bound=n_neurons * n_train * words * 8)


# the implementation is the fastest-varying parameter, so the two sides of a comparison run
# back to back (the machine is shared: interference then hits both alike)
@pytest.mark.parametrize("impl", [*PATHS, "faiss"])
@pytest.mark.parametrize("name", ["bibtex", "reuters"])
@pytest.mark.parametrize("n_synapses", [512, 1024])
@pytest.mark.parametrize("threads", [1, 2])
def test_vs_faiss(benchmark, impl, name, n_synapses, threads):
    """Sparse text: bibtex and Reuters tf-idf, 64 queries."""
    model, Xq, codes = setup(name, n_synapses)
    benchmark.group = f"vgram {name} 1024 neurons x {n_synapses} synapses, {threads} thread(s)"
    _info(benchmark, model, threads, "faiss.IndexBinaryFlat")
    if impl == "faiss":
        indexes = faiss_indexes(model)
        faiss.omp_set_num_threads(threads)
        func, args = faiss_search, (indexes, codes)
    else:
        func, args = on_path(benchmark, impl, model.decision_function), (Xq,)
    with threadpool_limits(threads, user_api="openmp"):
        benchmark.pedantic(func, args=args, rounds=5, iterations=1)


@pytest.mark.parametrize("impl", [*PATHS, "faiss"])
@pytest.mark.parametrize("threads", [1, 2])
def test_vs_faiss_dense_yeast(benchmark, impl, threads):
    """The default study's VG-RAM WNN (1024 neurons x 1024 synapses) on one fold of the
    dense yeast features: patterns with about half their bits set, the bit-sliced search's
    worst case; 242 queries (a fold's test part)."""
    model, Xq, codes = setup("yeast", 1024, n_queries=242)
    benchmark.group = f"vgram yeast (dense) 1024 neurons x 1024 synapses, {threads} thread(s)"
    _info(benchmark, model, threads, "faiss.IndexBinaryFlat")
    benchmark.extra_info.update(queries=Xq.shape[0])
    if impl == "faiss":
        indexes = faiss_indexes(model)
        faiss.omp_set_num_threads(threads)
        func, args = faiss_search, (indexes, codes)
    else:
        func, args = on_path(benchmark, impl, model.decision_function), (Xq,)
    with threadpool_limits(threads, user_api="openmp"):
        benchmark.pedantic(func, args=args, rounds=5, iterations=1)


@pytest.mark.parametrize("impl", [*PATHS, "stream-bound", "write-bound"])
@pytest.mark.parametrize("threads", [1, 2])
def test_encoding_vs_streaming(benchmark, impl, threads):
    """Minchinton encoding of yeast's 2175 training rows for 1024 neurons x 1024 synapses
    (285 MB of patterns) against pure memory-streaming bounds, each a NumPy copy of the
    same input bytes plus a write of every output byte: np.copyto of zeros into the output
    (stream-bound; it also reads 285 MB), or the C library's memset with the byte 0x55
    (write-bound: the output written and nothing else read; one thread, as is the copy).
    All write into the same pre-faulted output array."""
    X, _, n_train = _yeast()
    X = np.ascontiguousarray(X[:n_train])
    synapses = np.random.default_rng(0).integers(0, X.shape[1], (1024, 1024), dtype=np.int32)
    rows = np.arange(n_train, dtype=np.int64)
    out = np.zeros((1024, n_train, 16), dtype=np.uint64)
    X_copy, zeros = np.empty_like(X), np.zeros_like(out)
    benchmark.group = f"vgram encoding, yeast 2175 rows x 1024 x 1024, {threads} thread(s)"
    benchmark.extra_info.update(threads=threads, input_bytes=X.nbytes, output_bytes=out.nbytes)

    memset = ctypes.CDLL(None).memset
    memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

    def stream():
        np.copyto(X_copy, X)
        np.copyto(out, zeros)

    def write():
        np.copyto(X_copy, X)
        memset(out.ctypes.data, 0x55, out.nbytes)

    func = {"stream-bound": stream, "write-bound": write}.get(impl)
    if func is None:
        func = on_path(benchmark, impl, lambda: wnn_kernel.encode(X, rows, synapses, out))
    with threadpool_limits(threads, user_api="openmp"):
        benchmark.pedantic(func, rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("n_docs", [1, 8])
@pytest.mark.parametrize("threads", [1, 2])
def test_small_call_latency(benchmark, n_docs, threads):
    """Latency of decision_function for 1 and 8 yeast documents against the default
    study's VG-RAM WNN (1024 x 1024, 2175 stored documents, 285 MB of patterns): a search
    bound by memory bandwidth, the neurons split among the threads. p50/p99 in extra_info."""
    model, Xq, _ = setup("yeast", 1024, n_queries=242)
    benchmark.group = f"vgram small calls, yeast 1024 x 1024, {n_docs} document(s)"
    with threadpool_limits(threads, user_api="openmp"):
        times = []
        for i in range(200):
            t = time.perf_counter()
            model.decision_function(Xq[i % 200:i % 200 + n_docs])
            times.append(time.perf_counter() - t)
        benchmark.pedantic(model.decision_function, args=(Xq[:n_docs],), rounds=20,
                           iterations=1)
    ms = 1e3 * np.array(times[10:])
    benchmark.extra_info.update(threads=threads, n_docs=n_docs, p50_ms=np.percentile(ms, 50),
                                p99_ms=np.percentile(ms, 99), simd_path=wnn_kernel.simd_path())


@pytest.mark.parametrize("impl", ["fastrank-1-thread", "fastrank-2-threads", "numpy"])
@pytest.mark.parametrize("name", ["bibtex", "reuters"])
@pytest.mark.parametrize("n_synapses", [512, 1024])
def test_vs_numpy(benchmark, impl, name, n_synapses):
    model, Xq, codes = setup(name, n_synapses, N_REF_NEURONS)
    benchmark.group = f"vgram {name} {N_REF_NEURONS} neurons x {n_synapses} synapses vs numpy"
    _info(benchmark, model, impl, "numpy bitwise_count")
    if impl == "numpy":
        F = benchmark.pedantic(numpy_reference, args=(model, codes), rounds=2, iterations=1)
        np.testing.assert_allclose(F, model.decision_function(Xq), rtol=1e-12, atol=0)
    else:
        with threadpool_limits(int(impl.split("-")[1]), user_api="openmp"):
            benchmark.pedantic(model.decision_function, args=(Xq,), rounds=5, iterations=1)


def test_largest_configuration(benchmark):
    """32x32 neurons x 2048 synapses on 7000 bibtex training documents."""
    X, Y, _ = _bibtex()
    _cache.clear()
    model = VGRAM(1024, 2048, random_state=0)
    rss = rss_bytes()
    t = time.perf_counter()
    model.fit(X[:7000], Y[:7000])
    fit_seconds = time.perf_counter() - t
    n_neurons, n_train, words = model.memory_.shape
    benchmark.group = "vgram largest: bibtex 7000 train, 1024 neurons x 2048 synapses"
    benchmark.extra_info.update(
        fit_seconds=fit_seconds, n_train=n_train, memory_bytes=model.memory_bytes_,
        memory_bits_bound=n_neurons * n_train * words * 8, queries=N_QUERIES,
        fit_rss_growth_bytes=rss_bytes() - rss)
    F = benchmark.pedantic(model.decision_function, args=(X[7000:7000 + N_QUERIES],),
                           rounds=1, iterations=1)
    assert F.shape == (N_QUERIES, Y.shape[1]) and np.allclose(F.sum(axis=1), 1.0)
