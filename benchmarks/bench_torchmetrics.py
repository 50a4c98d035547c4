"""fastrank inside a PyTorch loop: speed against torchmetrics (CPU) and scikit-learn, and the
peak memory of a metric that rows stream through.

Run: pytest benchmarks/bench_torchmetrics.py --benchmark-only --benchmark-json=out.json
     (FASTRANK_STREAM_ROWS sets the streamed rows, default 10**7; FASTRANK_LRAP_ROWS the
     rows given to torchmetrics' label-ranking average precision, default 2 000: it loops
     over rows in Python)

Speed: the same 100 000 x 1 000 beliefs quantised to 8 levels (heavy ties), ~1% relevant
labels per document and at least one; coverage, ranking loss and label-ranking average
precision (LRAP) under the tie rule of scikit-learn and torchmetrics' coverage and LRAP (a
tied label counts as ranked above: fastrank's "modified"). Each peer's value is checked
equal to fastrank's (whose coverage is one less: the thesis' 0-based count), except
torchmetrics' ranking loss: it ranks by `argsort`, so a tied pair counts as misordered or not
as the sort happens to leave it; its value is checked to lie between no tied pair counted
and every one counted (fastrank's "modified"; "expected" counts half of them).

Memory: rows stream in batches of 10 000 x 100 through (a) fastrank.torchmetrics.StudyMetrics
(all 19 metrics, the four ranking types of the thesis), (b) torchmetrics' multilabel
coverage error + ranking loss (its LRAP is left out of the stream: its Python loop over rows
would take hours at this size), (c) torchmetrics' retrieval precision@5 and nDCG@5
(each document a query: they keep every prediction); each in a fresh process, whose peak
resident memory (VmHWM) is recorded in extra_info.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
from torchmetrics.functional.classification import multilabel_coverage_error, \
    multilabel_ranking_average_precision, multilabel_ranking_loss

from fastrank import metrics as M

N, Q = 100_000, 1_000
STREAM_ROWS = int(os.environ.get("FASTRANK_STREAM_ROWS", 10**7))
LRAP_ROWS = int(os.environ.get("FASTRANK_LRAP_ROWS", 2_000))
BATCH, STREAM_Q = 10_000, 100


def make(n, q, seed=0):
    rng = np.random.default_rng(seed)
    s = np.floor(rng.random((n, q)) * 8) / 8
    y = (rng.random((n, q)) < 0.01).astype(np.uint8)
    y[np.arange(n), rng.integers(0, q, n)] = 1
    return y, s


@pytest.fixture(scope="module")
def data():
    y, s = make(N, Q)
    return y, s, torch.from_numpy(y), torch.from_numpy(s)


def _fastrank(metric, y, s):
    """The peers' value from fastrank's (coverage: one more than the thesis' 0-based count)."""
    if metric == "coverage":
        return M.coverage(y, s, ties="modified") + 1
    if metric == "ranking_loss":
        return M.ranking_loss(y, s, ties="modified")
    return M.average_precision(y, s, per="label", ties="modified")


@pytest.mark.parametrize("metric", ["coverage", "ranking_loss", "lrap"])
def test_fastrank(benchmark, data, metric):
    y, s, _, _ = data
    benchmark.extra_info.update(rows=N, labels=Q)
    benchmark.pedantic(_fastrank, (metric, y, s), rounds=3, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("metric", ["coverage", "ranking_loss", "lrap"])
def test_torchmetrics_cpu(benchmark, data, metric):
    _, _, ty, ts = data
    rows = LRAP_ROWS if metric == "lrap" else N
    fn = {"coverage": multilabel_coverage_error, "ranking_loss": multilabel_ranking_loss,
          "lrap": multilabel_ranking_average_precision}[metric]
    benchmark.extra_info.update(rows=rows, labels=Q, torch_threads=torch.get_num_threads())
    got = benchmark.pedantic(lambda: fn(ts[:rows], ty[:rows], num_labels=Q), rounds=3,
                             iterations=1)
    if rows < N:  # its time per row is constant (a Python loop over rows): scaled to all N
        benchmark.extra_info["scaled_to_all_s"] = benchmark.stats.stats.min * N / rows
    y, s = ty[:rows].numpy(), ts[:rows].numpy()
    if metric == "ranking_loss":  # tied pairs in the sort's order: between none and all
        every = M.ranking_loss(y, s, ties="modified")
        none = 2 * M.ranking_loss(y, s, ties="expected") - every
        assert none - 1e-6 <= float(got) <= every + 1e-6
    else:
        assert float(got) == pytest.approx(_fastrank(metric, y, s), rel=1e-6)  # float32 sums


@pytest.mark.parametrize("metric", ["coverage", "ranking_loss", "lrap"])
def test_sklearn(benchmark, data, metric):
    y, s, _, _ = data
    fn = {"coverage": skm.coverage_error, "ranking_loss": skm.label_ranking_loss,
          "lrap": skm.label_ranking_average_precision_score}[metric]
    benchmark.extra_info.update(rows=N, labels=Q)
    got = benchmark.pedantic(lambda: fn(y, s), rounds=1, iterations=1)
    assert got == pytest.approx(_fastrank(metric, y, s), rel=1e-9)


_STREAM = r"""
import sys, numpy as np, torch
def peak():  # KiB; VmHWM starts afresh at exec, unlike ru_maxrss, which a child inherits
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM")).split()[1])
kind, rows, batch, q = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
if kind == "fastrank":
    from fastrank.torchmetrics import StudyMetrics
    metrics = [StudyMetrics(q)]
elif kind == "torchmetrics_ranking":
    from torchmetrics.classification import MultilabelCoverageError, MultilabelRankingLoss
    metrics = [MultilabelCoverageError(q), MultilabelRankingLoss(q)]
else:
    from torchmetrics.retrieval import RetrievalNormalizedDCG, RetrievalPrecision
    metrics = [RetrievalPrecision(top_k=5), RetrievalNormalizedDCG(top_k=5)]
base = peak()
for lo in range(0, rows, batch):
    s = torch.from_numpy(np.floor(rng.random((batch, q), dtype=np.float32) * 8) / 8)
    y = torch.from_numpy((rng.random((batch, q)) < 0.05).astype(np.int64))
    for m in metrics:
        if kind == "retrieval":
            ids = torch.arange(lo, lo + batch).repeat_interleave(q)
            m.update(s.ravel(), y.ravel().bool(), indexes=ids)
        elif kind == "fastrank":
            m.update(s, y)
        else:
            m.update(s, y.int())
before_compute = peak()
for m in metrics:
    m.compute()
print(base, before_compute, peak())
"""


@pytest.mark.parametrize("kind", ["fastrank", "torchmetrics_ranking", "retrieval"])
def test_stream_peak_memory(benchmark, kind):
    """Peak resident memory (VmHWM, KiB; Linux) of a fresh process streaming the rows:
    after the imports and metrics are made, after the last update, after compute. The
    retrieval metrics get a tenth of the rows (they keep every prediction)."""
    rows = STREAM_ROWS // 10 if kind == "retrieval" else STREAM_ROWS

    def run():
        out = subprocess.run([sys.executable, "-c", _STREAM, kind, str(rows), str(BATCH),
                              str(STREAM_Q)], capture_output=True, text=True, check=True)
        return [int(v) for v in out.stdout.split()]

    base, before_compute, peak = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update(rows=rows, labels=STREAM_Q, batch=BATCH,
                                rss_after_imports_kib=base,
                                peak_rss_before_compute_kib=before_compute,
                                peak_rss_kib=peak,
                                growth_mib=(peak - base) / 1024)
