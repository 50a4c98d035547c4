"""Render benchmarks/RESULTS.md from the committed benchmark JSON:
``python benchmarks/render_results.py``.

Each ``results/<cpu>/<file>.json`` is the pytest-benchmark output of one benchmark module
(``--benchmark-json``; ``conftest.py`` records the command line, the CPU, the kernels'
instruction-set paths and the load average in it), or figures transcribed by hand from an
earlier measurement, or written by a script that is not a pytest module
(``topk_grid.py``), in the same layout (a top-level ``"transcribed"`` note, ``"command"``
and ``"datetime"``, and each figure as ``{"name": ..., "stats": {"min": seconds}}``).
``ROWS`` says which benchmarks each table row compares; ``results/limits.md`` holds the
hand-written paragraph per kernel on what limits it; ``results/c-core-vs-060b94f.md`` the
in-process ratios of the C core against the kernels before it (two builds in one process,
which pytest-benchmark cannot time). Ratio = peer time / fastrank time,
minimum over the rounds (a benchmark that times a subset and records ``scaled_to_all_s`` in
its extra_info counts that). ``tests/test_results_md.py`` checks that RESULTS.md is the
rendering.
"""
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OUTPUT = HERE / "RESULTS.md"


@dataclass(frozen=True)
class Row:
    """One kernel against one peer: ``ours`` and ``theirs`` are benchmark names in
    ``file`` (of the run of ``cpu`` only, when given), formatted with ``t`` for each entry
    of ``threads``; a row of instruction-set ``path`` only from runs that measured that
    path (a CPU without AVX-512 has no ``avx512`` cells)."""
    section: str
    kernel: str
    peer: str
    sizes: str
    file: str
    ours: str
    theirs: str
    threads: tuple = (1, 2)
    cpu: str | None = None
    path: str | None = None


RANK = "10 000 × 1 000 float64, 21 levels"
DENSE_EVAL = "10 000 × 1 000, 21 levels, ~1 % relevant"
SCALING = "200 000 × 1 000 float32, 21 levels"
TM_GPU = "torchmetrics 1.9 on an NVIDIA H200 (tensors already on the GPU)"
TM_CPU = "torchmetrics 1.9 on the same 16 cores"
TM_SIZES = "200 000 × 1 000 tied"
CONTENDED = ("streaming_pass", "evaluate", "rank", "coverage", "ranking_loss", "r_precision")
ROWS = [
    *(Row("Ranking (`rank`)", f"`rank` {ours}", f"`scipy.stats.rankdata` {peer}", RANK,
          "bench_ranking", f"test_fastrank_tied[{{t}}-{ours}]", f"test_scipy_tied[{ours}]")
      for ours, peer in (("standard", "min"), ("modified", "max"), ("dense", "dense"),
                         ("fractional", "average"), ("stable", "ordinal"))),
    Row("Ranking (`rank`)", "`rank` ordinal (random)", "`scipy.stats.rankdata` ordinal "
        "(deterministic)", RANK, "bench_ranking", "test_fastrank_tied[{t}-ordinal]",
        "test_scipy_tied[stable]"),
    Row("Ranking (`rank`)", "`rank` standard, float32", "`scipy.stats.rankdata` min",
        "10 000 × 1 000 float32, 21 levels", "bench_ranking",
        "test_fastrank_tied_float32[{t}]", "test_scipy_tied_float32", cpu="epyc-2c"),
    Row("Ranking (`rank`)", "`rank` standard, untied", "`scipy.stats.rankdata` min",
        "10 000 × 1 000 float64, no ties", "bench_ranking", "test_fastrank_untied[{t}]",
        "test_scipy_untied"),
    Row("Metric suite (`evaluate`)", "`evaluate`, 19 metrics × 4 ranking types",
        "scikit-learn's subset of them, one ranking type", DENSE_EVAL, "bench_metrics",
        "test_fastrank_evaluate_all_types[{t}]", "test_sklearn_subset"),
    Row("Metric suite (`evaluate`)", "`evaluate(ties=\"expected\")`",
        "`evaluate(ties=\"ordinal\")` (a cost: below 1 is expected)", DENSE_EVAL,
        "bench_metrics", "test_expected_vs_ordinal[{t}-expected]",
        "test_expected_vs_ordinal[{t}-ordinal]"),
    Row("Metric suite (`evaluate`)", "`Evaluator(ties=(\"ordinal\", \"expected\"))` fed "
        "chunks of 256 rows", "the same rows in one chunk (a cost: below 1 is expected)",
        "40 000 × 1 000, 21 levels, ~1 % relevant", "bench_metrics_chunks",
        "test_expected_in_chunks[256]", "test_expected_in_chunks[40000]", (1,)),
    *(Row("Single ranking metrics", f"`{metric}` ({ties})",
          "a streaming pass over the beliefs, `S.sum(1)` (a cost: the target is ≥ 0.25, "
          "at most 4× the pass)", "50 000 × 1 000 float32, 21 levels",
          "bench_metrics_single", f"test_single_metric[{metric}-{ties}]",
          "test_streaming_pass", (1,))
      for metric in ("one_error", "coverage", "ranking_loss", "ap_position", "ap_label",
                     "r_precision")
      for ties in ("dense", "modified", "expected", "ordinal")),
    *(Row("Single ranking metrics", f"`{metric}` (ordinal), CSR beliefs",
          f"`{metric}` (modified), the same beliefs (a cost)",
          "20 000 × 1 000 CSR float32, 5 % stored, 20 levels", "bench_metrics_single",
          f"test_single_metric_csr[{metric}-ordinal]",
          f"test_single_metric_csr[{metric}-modified]", (1,), "epyc-2c")
      for metric in ("coverage", "ranking_loss", "ap_position")),
    # the 1 -> T thread speed-up of each hot path beside its serial fraction, on 2 and on 16
    # cores; the streaming pass on T threads is what memory bandwidth allows
    *(Row(f"Thread scaling on {t} cores", f"`{name}`, {t} threads", "the same on 1 thread",
          sizes, "serial_fraction", f"{name}[{{t}}]", f"{name}[1]", (t,), cpu)
      for t, rows, cpu in ((2, "50 000", "xeon-2c"), (2, "50 000", "epyc-2c"),
                           (2, "50 000", "epyc-zen3-2c"), (16, "200 000", "xeon-spr16"))
      for name, sizes in (
          *((name, f"{rows} × 1 000 float32, 21 levels") for name in (
              "streaming_pass", "evaluate", "rank", "one_error", "coverage", "ranking_loss",
              "ap_position", "ap_label", "r_precision")),
          ("vgram_predict", "bibtex-shaped, 500 test documents"),
          ("study", "yeast, 4 classifiers × 10 folds"))),
    *(Row("Thread scaling on 16 cores",
          f"VG-RAM `decision_function`, {t} thread{'s' * (t > 1)}, CSR wiring kept by the "
          "model", "the same, the wiring built by every call (the code before)",
          "bibtex-shaped, 500 test documents", "vgram_wiring", "wiring_kept[{t}]",
          "wiring_per_call[{t}]", (t,), "xeon-spr16")
      for t in (1, 16)),
    # evaluate after its label counters were zeroed on the threads (a later machine)
    *(Row("Thread scaling on 16 cores", f"`{name}`, 16 threads{note}", "the same on 1 thread",
          SCALING, "serial_fraction_evaluate", f"{name}[{{t}}]", f"{name}[1]", (16,),
          "xeon-spr16")
      for name, note in (("streaming_pass", ", a later machine"),
                         ("evaluate", ", label counters zeroed on the threads"))),
    # the study with two threads a task (a later machine)
    *(Row("Thread scaling on 16 cores", f"{name}, 16 threads{note}", "the same on 1 thread",
          sizes, "serial_fraction_study", f"{key}[{{t}}]", f"{key}[1]", (16,), "xeon-spr16")
      for key, name, note, sizes in (
          ("streaming_pass", "`streaming_pass`", ", a later machine",
           "50 000 × 1 000 float32, 21 levels"),
          ("study", "the default study", ", two threads a task",
           "yeast, 4 classifiers × 10 folds"))),
    # the same machine at 4 and 8 threads: where its memory bandwidth runs out
    *(Row("Thread scaling on 16 cores", f"`{name}`, {t} threads", "the same on 1 thread",
          SCALING, f"serial_fraction_{t}threads", f"{name}[{{t}}]", f"{name}[1]", (t,),
          "xeon-spr16")
      for t in (4, 8)
      for name in ("streaming_pass", "evaluate", "rank", "coverage")),
    # the speed-up the machine allows: 16 one-thread processes at once, each on 1/16 of the
    # rows, against the same pieces done one after another by one process
    *(Row("Thread scaling on 16 cores", f"`{name}`, 16 one-thread processes at once, each "
          "on 1/16 of the rows", "one such process alone, 16 times", SCALING,
          "core_contention", f"{name}_copies[{{t}}]", f"{name}_copy_alone[{{t}}]", (16,),
          "xeon-spr16")
      for name in CONTENDED),
    *(Row("Thread scaling on 16 cores", f"`{name}`, 16 threads, default OpenMP wait policy",
          "the same on 1 thread", SCALING, "core_contention", f"{name}[{{t}}]", f"{name}[1]",
          (16,), "xeon-spr16")
      for name in CONTENDED),
    # the same with each copy's rows inside its core's own cache: what the cores lose to
    # each other away from memory and the shared cache
    *(Row("Thread scaling on 16 cores", f"`{name}`, 16 one-thread processes at once, each "
          "on 256 rows (1 MB, inside its core's cache), 50 calls", "one such process alone, "
          "16 times", "4 096 × 1 000 float32, 21 levels", "core_contention_cached",
          f"{name}_copies[{{t}}]", f"{name}_copy_alone[{{t}}]", (16,), "xeon-spr16")
      for name in CONTENDED[1:]),
    *(Row("Inside other tools' loops", f"`{metric}`, 2 threads", peer,
          "10⁵ × 1 000 tied beliefs", "bench_torchmetrics", f"test_fastrank[{metric}]",
          f"{bench}[{metric}]", (2,))
      for metric, bench, peer in (
          ("coverage", "test_torchmetrics_cpu", "torchmetrics `multilabel_coverage_error` "
           "(CPU, 2 threads)"),
          ("ranking_loss", "test_torchmetrics_cpu", "torchmetrics `multilabel_ranking_loss` "
           "(CPU, 2 threads)"),
          ("lrap", "test_torchmetrics_cpu", "torchmetrics "
           "`multilabel_ranking_average_precision` (CPU, 2 threads; timed on 2 000 rows, "
           "scaled)"),
          ("coverage", "test_sklearn", "`sklearn.metrics.coverage_error`"),
          ("ranking_loss", "test_sklearn", "`sklearn.metrics.label_ranking_loss`"),
          ("lrap", "test_sklearn", "`sklearn.metrics.label_ranking_average_precision_score`"))),
    *(Row("Inside other tools' loops", "C API `eval_add_row` (modified), a row a call from "
          "Cython, without the GIL", peer, "20 000 × 1 000 float64, 21 levels, ~1 % relevant",
          "bench_capi", "test_capi_rows", theirs, (1,), "epyc-zen3-2c")
      for peer, theirs in (("`Evaluator.update`, a row a call (timed on 2 000 rows, scaled)",
                            "test_evaluator_by_row"),
                           ("`Evaluator.update`, all rows in one call", "test_evaluator_whole"))),
    *(Row("Inside other tools' loops", "C API `eval_add_row_exact` (expected, exact), a row a "
          "call from Cython, records counted every 256 rows, then `eval_result_exact`", peer,
          "20 000 × 1 000 float64, 21 levels, ~1 % relevant", "bench_capi",
          "test_capi_rows_expected_exact", theirs, (1,), "epyc-zen3-2c")
      for peer, theirs in (("C API `eval_add_row` (expected, 100 draws of each cut group; "
                            "a cost: below 1 is expected)", "test_capi_rows_expected_drawn"),
                           ("`Evaluator.update` of all rows in one call, and `result` (a "
                            "cost)", "test_evaluator_whole_expected"))),
    Row("Loaders and text indexing", "`load_arff`", "liac-arff (COO)",
        "bibtex, 7 395 × 1 836 + 159 labels, sparse", "bench_datasets",
        "test_fastrank_arff[bibtex]", "test_liac_arff[bibtex]", (1,)),
    Row("Loaders and text indexing", "`load_libsvm`",
        "`sklearn.datasets.load_svmlight_file(multilabel=True)`", "bibtex", "bench_datasets",
        "test_fastrank_libsvm", "test_sklearn_svmlight", (1,)),
    Row("Loaders and text indexing", "`TfidfIndexer().fit_transform`",
        "`TfidfVectorizer(stop_words=\"english\")`", "Reuters-21578 ModApte test, 3 019 docs",
        "bench_text", "test_fastrank_fit_transform", "test_sklearn_default_fit_transform", (1,)),
    *(Row("Neighbour search, kNN and ML-kNN", f"`topk_cosine` CSR, k = {k}",
          "scikit-learn brute cosine, `n_jobs=2`", sizes, "bench_neighbors",
          f"test_topk_csr_fastrank[{{t}}-{k}-{name}]", f"test_topk_csr_sklearn[{k}-{name}]")
      for name, sizes in (("reuters", "Reuters 3 019 × 15 381 tf-idf, all × all"),
                          ("bibtex", "bibtex 7 395 × 1 836, all × all"),
                          ("yeast", "yeast 2 417 × 103, dense-ish values stored sparse, "
                                    "all × all"))
      for k in (10, 100)),
    *(Row("Neighbour search, kNN and ML-kNN", f"`topk_cosine` dense float32, k = {k}",
          "`faiss.IndexFlatIP`, same threads", sizes, "bench_neighbors",
          f"test_topk_dense_fastrank[float32-{{t}}-{k}-{name}]",
          f"test_topk_dense_faiss[{{t}}-{k}-{name}]")
      for name, sizes in (("reuters", "Reuters, dense, all × all"),
                          ("bibtex", "bibtex, dense, all × all"))
      for k in (10, 100)),
    *(Row("Dense top-k against FAISS, one thread", f"`topk_cosine` dense float32, k = {k}",
          f"`faiss.IndexFlatIP`, both on `{path}`", f"base {rows} × {d}", "topk_grid",
          f"topk_cosine[{path}-{nb}-{d}-{k}]", f"faiss_IndexFlatIP[{path}-{nb}-{d}-{k}]", (1,),
          path=path)
      for path in ("avx2", "avx512")
      for nb, rows in ((1_000, "10³"), (10_000, "10⁴"), (100_000, "10⁵"), (1_000_000, "10⁶"))
      for d in (32, 128, 1024) if nb * d <= 2**28       # 10⁶ × 1 024 (4 GB) left out
      for k in (1, 10, 100)),
    Row("Neighbour search, kNN and ML-kNN", "`MLkNN` fit + predict",
        "`skmultilearn.adapt.MLkNN` (1 thread)", "bibtex 4 880 train / 2 515 test",
        "bench_neighbors", "test_mlknn_fastrank[{t}]", "test_mlknn_skmultilearn"),
    *(Row("VG-RAM WNN", f"`VGRAM.decision_function`{label}", "`faiss.IndexBinaryFlat` per "
          "neuron, pre-encoded queries", f"bibtex, 1 024 neurons × {syn} synapses, 64 queries",
          "bench_wnn", f"test_vs_faiss[{{t}}-{syn}-bibtex-{impl}]",
          f"test_vs_faiss[{{t}}-{syn}-bibtex-faiss]")
      for syn in (512, 1024)
      for impl, label in (("fastrank", ""), ("fastrank-avx512", ", `avx512` path forced"),
                          ("fastrank-avx2", ", `avx2` path forced"))),
    *(Row("VG-RAM WNN", f"`VGRAM.decision_function`{label}", "`faiss.IndexBinaryFlat` per "
          "neuron, pre-encoded queries", "yeast (dense), 1 024 × 1 024, 2 175 stored, "
          "242 queries", "bench_wnn", f"test_vs_faiss_dense_yeast[{{t}}-{impl}]",
          "test_vs_faiss_dense_yeast[{t}-faiss]")
      for impl, label in (("fastrank", ""), ("fastrank-avx512", ", `avx512` path forced"),
                          ("fastrank-avx2", ", `avx2` path forced"))),
    Row("VG-RAM WNN", "Minchinton encoding (VG-RAM fit)", "writing the output alone "
        "(C `memset`: the write bound)", "yeast 2 175 rows, 285 MB out", "bench_wnn",
        "test_encoding_vs_streaming[{t}-fastrank]", "test_encoding_vs_streaming[{t}-write-bound]"),
    Row("ROC/AUC and calibration", "per-label `auc`",
        "`roc_auc_score(average=None)` (1 thread)", "10 000 × 1 000, 11 levels",
        "bench_roc", "test_fastrank_auc_per_label[{t}]", "test_sklearn_roc_auc_score_per_label"),
    Row("ROC/AUC and calibration", "per-label `auc`, weighted",
        "`roc_auc_score(average=None, sample_weight=w)`", "10 000 × 1 000, 11 levels",
        "bench_roc", "test_fastrank_auc_per_label_weighted[{t}]",
        "test_sklearn_roc_auc_score_per_label_weighted"),
    *(Row("ROC/AUC and calibration", f"`Isotonic().fit`, {kind} scores",
          "`sklearn.isotonic.IsotonicRegression().fit`", "10⁶ scores", "bench_calibration",
          f"test_fastrank_isotonic_fit[{kind}]", f"test_sklearn_isotonic_fit[{kind}]", (1,))
      for kind in ("tied", "continuous")),
    *(Row("Top-k metrics (`evaluate_at_k`)", "`evaluate_at_k`, P/nDCG/PSP/PSnDCG @1,3,5, "
          "`ties=\"expected\"`", peer, "587 084 × 325 056, top-100 pairs (WikiLSHTC-325K "
          "shape); peer timed on 20 000 documents, scaled", "bench_topk",
          "test_topk_fastrank[{t}]", theirs)
      for peer, theirs in (("napkinXC (CSR input, same metrics)", "test_topk_napkinxc"),
                           ("ranx (P and nDCG only; its dict conversion not counted)",
                            "test_topk_ranx"))),
    # the thread scaling measured on 16 cores, and torchmetrics beside it
    *(Row(section, kernel, "the same on 1 thread", sizes, "thread_scaling", f"{name}[{{t}}]",
          f"{name}[1]", (16,))
      for section, kernel, name, sizes in (
          ("Ranking (`rank`)", "`rank` standard", "rank_standard", SCALING),
          ("Metric suite (`evaluate`)", "`evaluate`, 19 metrics × 4 ranking types", "evaluate",
           SCALING),
          ("Metric suite (`evaluate`)", "`coverage`", "coverage", SCALING),
          ("Metric suite (`evaluate`)", "`ranking_loss`", "ranking_loss", SCALING),
          ("Metric suite (`evaluate`)", "`average_precision(per=\"label\")` (LRAP)", "lrap",
           SCALING),
          ("VG-RAM WNN", "`VGRAM.fit`", "vgram_fit", "bibtex-shaped, 4 880 documents"),
          ("VG-RAM WNN", "`VGRAM.decision_function`", "vgram_predict",
           "bibtex-shaped, 2 515 documents"),
          ("The study", "default study", "default_study", "yeast, 4 classifiers × 10 folds"))),
    Row("Neighbour search, kNN and ML-kNN", "`topk_cosine` dense float32, k = 10",
        "`faiss.IndexFlatIP`, same threads", "base 100 000 × 128, 5 000 queries",
        "thread_scaling", "topk_cosine[{t}]", "faiss_IndexFlatIP[{t}]", (1, 2, 4, 8, 16)),
    *(Row("Metric suite (`evaluate`)", f"`{metric}`, 16 cores", peer, sizes, "thread_scaling",
          ours, theirs, (16,))
      for metric, peer, sizes, ours, theirs in (
          ("coverage", TM_GPU, TM_SIZES, "fastrank_coverage[{t}]",
           "torchmetrics_h200_coverage"),
          ("ranking_loss", TM_GPU, TM_SIZES, "fastrank_ranking_loss[{t}]",
           "torchmetrics_h200_ranking_loss"),
          ("average_precision(per=\"label\")", TM_GPU, "2 000 × 1 000 tied",
           "fastrank_lrap_2000_rows[{t}]", "torchmetrics_h200_lrap_2000_rows"),
          ("coverage", TM_CPU, "20 000 × 1 000 tied", "fastrank_coverage_20000_rows[{t}]",
           "torchmetrics_cpu16_coverage_20000_rows"),
          ("ranking_loss", TM_CPU, "20 000 × 1 000 tied",
           "fastrank_ranking_loss_20000_rows[{t}]", "torchmetrics_cpu16_ranking_loss_20000_rows"),
          ("average_precision(per=\"label\")", TM_CPU, "2 000 × 1 000 tied",
           "fastrank_lrap_2000_rows[{t}]", "torchmetrics_cpu16_lrap_2000_rows"))),
]


def load_runs():
    """{(cpu, file): run JSON} of every committed result."""
    return {(path.parent.name, path.stem): json.loads(path.read_text())
            for path in sorted(RESULTS.glob("*/*.json"))}


def _seconds(bench):
    return bench.get("extra_info", {}).get("scaled_to_all_s", bench["stats"]["min"])


def _three_digits(x):
    """x with three significant digits, trailing zeros kept (2.00, 29.2, 552, 1234)."""
    return f"{x:.{max(0, 2 - math.floor(math.log10(x)))}f}"


def _time(s):
    if s >= 1:
        return f"{_three_digits(s)} s"
    return f"{_three_digits(s * 1e3)} ms" if s >= 1e-3 else f"{_three_digits(s * 1e6)} µs"


def _limits():
    """{section title: paragraph} of results/limits.md, one ``## title`` per section."""
    text = (RESULTS / "limits.md").read_text()
    sections = dict(part.partition("\n")[::2] for part in re.split(r"^## ", text, flags=re.M)
                    if part.strip())
    missing = {row.section for row in ROWS} ^ set(sections)
    if missing:
        raise ValueError(f"limits.md and ROWS disagree on the sections {sorted(missing)}")
    return {title: body.strip() for title, body in sections.items()}


def _loads(run):
    values = [b["extra_info"]["load_average_before"][0] for b in run["benchmarks"]
              if "load_average_before" in b.get("extra_info", {})]
    if not values:
        return run.get("load", "not recorded")
    return f"{min(values):.1f}–{max(values):.1f}"


def table_rows(runs):
    lines = []
    sections = list(dict.fromkeys(row.section for row in ROWS))
    for row in sorted(ROWS, key=lambda row: sections.index(row.section)):
        for (cpu, file), run in runs.items():
            if file != row.file or row.cpu not in (None, cpu):
                continue
            if row.path and row.path not in run["machine_info"]["fastrank"]["kernel_paths"][
                    "cosine_topk"].split(" and "):
                continue
            benches = {b["name"]: b for b in run["benchmarks"]}
            ours, theirs = [], []
            for t in row.threads:
                for name, out in ((row.ours, ours), (row.theirs, theirs)):
                    name = name.format(t=t)
                    if name not in benches:
                        raise KeyError(f"{cpu}/{file}.json has no benchmark {name!r}")
                    out.append(_seconds(benches[name]))
            peer_times = theirs if len(set(theirs)) > 1 else theirs[:1]
            lines.append("| " + " | ".join([
                row.kernel, row.peer, row.sizes, " / ".join(map(str, row.threads)),
                " / ".join(map(_time, ours)), " / ".join(map(_time, peer_times)),
                " / ".join(_three_digits(p / o) for o, p in zip(ours, theirs)),
                f"`{cpu}/{file}`"]) + " |")
    return lines


STREAMED = {"fastrank": "`fastrank.torchmetrics.StudyMetrics` (19 metrics × 4 ranking types)",
            "torchmetrics_ranking": "torchmetrics `MultilabelCoverageError` + "
                                    "`MultilabelRankingLoss`",
            "retrieval": "torchmetrics `RetrievalPrecision` + `RetrievalNormalizedDCG` (top 5)"}


def memory_rows(runs):
    """One row per metric streamed through a fresh process (``test_stream_peak_memory``):
    the rows, and how far its peak resident memory grew above the imports."""
    lines = []
    for (cpu, file), run in runs.items():
        for bench in run["benchmarks"]:
            kind = bench["name"].partition("test_stream_peak_memory[")[2].rstrip("]")
            if kind:
                info = bench["extra_info"]
                rows = f"{info['rows']:,}".replace(",", " ")
                lines.append(f"| {STREAMED[kind]} | {rows} × {info['labels']} | "
                             f"{info['growth_mib']:.0f} MiB | {_time(bench['stats']['min'])} | "
                             f"`{cpu}/{file}` |")
    return lines


def render(runs=None):
    runs = load_runs() if runs is None else runs
    out = ["# Benchmark results", "",
           "Generated by `python benchmarks/render_results.py` from the pytest-benchmark JSON "
           "in `benchmarks/results/<cpu>/`; the paragraphs on what limits each kernel come "
           "from `benchmarks/results/limits.md`. Do not edit this file: rerun a benchmark "
           "with the command shown for its run, then rerun the renderer.", "",
           "Ratio = peer time / fastrank time, each the minimum over its rounds (above 1, "
           "fastrank is faster); threads are OpenMP threads limited with threadpoolctl. "
           "Values separated by / follow the threads column. Each run gives the load average "
           "it saw: above the number of logical CPUs, other work shared the cores and the "
           "times are noisy, 2-thread times most of all.", "",
           "## Current ratios", "",
           "| kernel | peer | sizes | threads | fastrank | peer | ratio | run |",
           "|---|---|---|---|---|---|---|---|", *table_rows(runs), "",
           "## Memory of a metric that rows stream through", "",
           "Rows stream in batches of 10 000 × 100 tied beliefs through each metric in a fresh "
           "process; growth = peak resident memory (VmHWM) after `compute()` less the memory "
           "after the imports.", "",
           "| metric | rows × labels | growth | time | run |", "|---|---|---|---|---|",
           *memory_rows(runs), "",
           "## Runs", ""]
    for (cpu, file), run in runs.items():
        info = run["machine_info"]["fastrank"]
        paths = ", ".join(f"{kernel}: `{path}`" for kernel, path in
                          info.get("kernel_paths", {}).items()) or "not recorded"
        out += [f"### {cpu}/{file}", "",
                f"{info['cpu_model']}, {info['logical_cpus']} logical CPUs; kernels' paths "
                f"{paths}; {run['datetime'][:16].replace('T', ' ')} UTC; 1-min load average "
                f"before each benchmark {_loads(run)}.", ""]
        if "transcribed" in run:
            out += [run["transcribed"], ""]
        out += ["```", run["machine_info"].get("command") or run["command"], "```", ""]
    out += ["## The C core against the kernels before it", "",
            (RESULTS / "c-core-vs-060b94f.md").read_text().rstrip(), ""]
    out += ["## What limits each kernel", ""]
    for title, body in _limits().items():
        out += [f"### {title}", "", body, ""]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    OUTPUT.write_text(render())
