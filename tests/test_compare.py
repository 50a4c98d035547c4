"""The study on many data sets: the across-data-set statistics on hand-built studies checked
against SciPy and direct formulas, run_benchmark against run_study, resuming, refusals,
persistence and the written outputs."""
import functools
import inspect
import itertools
import json
import math
import os
import re

import numpy as np
import pytest
import scipy.stats as ss
from latex_check import check_latex_structure, latex_rows

from fastrank import _vocabulary
from fastrank import study as study_module
from fastrank.study import _plan, compare
from fastrank.study.compare import BenchmarkResult, run_benchmark
from fastrank.datasets import load
from fastrank.metrics import METRIC_KEYS
from fastrank.report import (BENCHMARK_FILES, benchmark_tables, render_benchmark_latex,
                             render_benchmark_markdown, write_benchmark)
from fastrank.study import LOWER_IS_BETTER, STUDY_TIES, StudyResult, run_study

CLFS = ("knn", "mlknn", "vgram")


def hand_study(name, means, folds=3, seed=0):
    """A StudyResult whose classifier ``c`` has, under ranking type ``t`` and every metric,
    fold values scattered around ``means[t][c]``."""
    rng = np.random.default_rng(seed)
    values = {}
    for ci, c in enumerate(CLFS):
        arr = np.empty((len(STUDY_TIES), len(METRIC_KEYS), folds))
        for ti, t in enumerate(STUDY_TIES):
            noise = rng.normal(0, 0.01, folds)
            arr[ti] = means[t][ci] + noise - noise.mean()
        values[c] = arr
    return StudyResult(dataset={"name": name, "documents": 100}, classifiers=CLFS,
                       ties=STUDY_TIES, folds=folds, random_state=0, cutoff="perfect",
                       params={c: {} for c in CLFS}, values=values,
                       tie_stats={c: {"top": [0.0] * folds, "boundary": [0.0] * folds,
                                      "group_size": [1.0] * folds} for c in CLFS})


def hand_benchmark(n=8, seed=1):
    """n data sets: knn best under ordinal, mlknn best under the tie-aware types on most of
    them; vgram mostly last."""
    rng = np.random.default_rng(seed)
    studies = {}
    for d in range(n):
        base = rng.uniform(0.3, 0.6)
        ordinal = [base + 0.10, base + 0.05 + 0.02 * (d % 3 == 0), base]
        aware = [base + 0.05, base + 0.10 * (d % 4 != 0), base - 0.01]
        means = {"ordinal": ordinal, "dense": aware, "standard": aware, "modified": aware}
        studies[f"set{d}"] = hand_study(f"set{d}", means, seed=seed * 100 + d)
    return BenchmarkResult(studies)


@pytest.fixture(scope="module")
def bench():
    return hand_benchmark()


def test_tables_are_the_fold_means(bench):
    t = bench.table("average_precision", "dense")
    assert t.shape == (8, 3)
    for i, s in enumerate(bench.studies.values()):
        for j, c in enumerate(CLFS):
            k = METRIC_KEYS.index("average_precision")
            assert t[i, j] == s.values[c][STUDY_TIES.index("dense"), k].mean()


@pytest.mark.parametrize("metric", ["average_precision", "ranking_loss"])
def test_friedman_ranks_match_scipy(bench, metric):
    table = bench.table(metric, "ordinal")
    res = bench.friedman(metric, "ordinal")
    sign = -1 if metric in LOWER_IS_BETTER else 1  # rank 1 = most favourable
    expected = np.array([ss.rankdata(-sign * row) for row in table])
    np.testing.assert_allclose(res.ranks, expected)
    np.testing.assert_allclose(res.mean_ranks, expected.mean(axis=0))
    chi2 = ss.friedmanchisquare(*table.T)  # no ties in this table: no correction applies
    assert res.chi2 == pytest.approx(chi2.statistic)
    assert res.chi2_pvalue == pytest.approx(chi2.pvalue)


def _holm_step_down(p, alpha):
    """Holm (1979) as a procedure: reject in increasing order of p while p_(i) <= alpha /
    (m - i + 1)."""
    order = np.argsort(p)
    reject = np.zeros(len(p), bool)
    for i, j in enumerate(order):
        if p[j] > alpha / (len(p) - i):
            break
        reject[j] = True
    return reject


def test_pairwise_is_wilcoxon_with_holm(bench):
    for metric, ties in (("average_precision", "ordinal"), ("one_error", "modified")):
        table = bench.table(metric, ties)
        oriented = -table if metric in LOWER_IS_BETTER else table
        res = bench.pairwise(metric, ties)
        pairs = list(itertools.combinations(range(3), 2))
        assert [(r.first, r.second) for r in res] == [(CLFS[i], CLFS[j]) for i, j in pairs]
        p = np.array([ss.wilcoxon(oriented[:, i], oriented[:, j], zero_method="zsplit").pvalue
                      for i, j in pairs])
        np.testing.assert_allclose([r.pvalue for r in res], p, rtol=1e-12)
        m = len(p)
        adjusted = [max(min(1.0, (m - k) * np.sort(p)[k]) for k in range(i + 1))
                    for i in range(m)]
        np.testing.assert_allclose(sorted(r.adjusted for r in res), adjusted, rtol=1e-12)
        assert [r.significant for r in res] == list(_holm_step_down(p, 0.05))
        means = bench.friedman(metric, ties).mean_ranks
        for r, (i, j) in zip(res, pairs):
            assert r.better == (CLFS[i] if means[i] < means[j] else CLFS[j])


def test_kendall_tau_and_winner_changes(bench):
    m = "average_precision"
    a = bench.friedman(m, "ordinal").mean_ranks
    b = bench.friedman(m, "dense").mean_ranks
    assert bench.kendall_tau(m, "dense") == pytest.approx(ss.kendalltau(a, b).statistic)
    assert bench.kendall_tau(m, "ordinal") == 1.0
    # by construction: ordinal best is knn on every set; dense best is mlknn where d % 4
    # != 0 and knn where d % 4 == 0
    changes = [c for c in bench.winner_changes() if c["metric"] == m]
    expected = [(f"set{d}", t) for d in range(8) if d % 4 != 0
                for t in ("dense", "standard", "modified")]
    assert [(c["dataset"], c["ties"]) for c in changes] == expected
    assert all(c["reference_best"] == ("knn",) and c["best"] == ("mlknn",) for c in changes)
    # a loss flips orientation: the best is the lowest mean, vgram everywhere
    assert set(bench.best("ranking_loss", "ordinal").values()) == {("vgram",)}


def test_significance_changes_are_set_differences(bench):
    for m in ("average_precision", "coverage"):
        for t in ("dense", "modified"):
            ref = bench.friedman(m, "ordinal")
            oth = bench.friedman(m, t)

            def sig(res):
                r = res.mean_ranks
                return {(CLFS[i], CLFS[j]) for i in range(3) for j in range(3)
                        if r[j] - r[i] > res.cd_nemenyi}
            gained, lost = bench.significance_changes(m, t)
            assert gained == sorted(sig(oth) - sig(ref))
            assert lost == sorted(sig(ref) - sig(oth))


def test_ties_in_the_best_are_all_kept():
    means = {t: [0.5, 0.5, 0.4] for t in STUDY_TIES}
    s = hand_study("x", means)
    for c in CLFS[:2]:
        s.values[c][:] = s.values["knn"]  # exactly equal
    b = BenchmarkResult({"x": s, "y": hand_study("y", means)})
    assert b.best("average_precision", "ordinal")["x"] == ("knn", "mlknn")


def test_the_orientation_of_a_metric_has_one_place(monkeypatch):
    """The benchmark's ranks, best classifiers and Wilcoxon winners and the report's bold
    values all orient a metric by the shared LOWER_IS_BETTER alone: declared a loss, average
    precision's lowest value becomes the best everywhere at once."""
    from latex_check import latex_rows
    from fastrank.report import render_latex
    m = "average_precision"
    b = hand_benchmark()
    monkeypatch.setattr(_vocabulary, "LOWER_IS_BETTER", _vocabulary.LOWER_IS_BETTER | {m})
    table = b.table(m, "dense")
    assert b.best(m, "dense") == {d: tuple(c for c, v in zip(CLFS, row) if v == row.min())
                                  for d, row in zip(b.datasets, table)}
    ranks = np.array([ss.rankdata(row) for row in table])  # lowest value = rank 1
    np.testing.assert_allclose(b.friedman(m, "dense").ranks, ranks)
    for r in b.pairwise(m, "dense"):
        i, j = CLFS.index(r.first), CLFS.index(r.second)
        if ranks[:, i].mean() != ranks[:, j].mean():
            assert r.better == (r.first if ranks[:, i].mean() < ranks[:, j].mean()
                                else r.second)
    study = b.studies["set0"]
    rows = latex_rows(render_latex(study))[STUDY_TIES.index("dense")]
    row = rows[METRIC_KEYS.index(m)]
    means = [study.mean(c, "dense", m) for c in CLFS]
    assert [cell.startswith(r"\textbf") for cell in row[1:]] == \
        [mu == min(means) for mu in means]


def test_friedman_is_computed_once_per_metric_type_and_alpha(monkeypatch, tmp_path):
    from fastrank.report import _figures
    from fastrank.stats import friedman
    from fastrank.study import compare
    calls = []
    monkeypatch.setattr(compare, "friedman",
                        lambda *a, **kw: calls.append(kw["alpha"]) or friedman(*a, **kw))
    monkeypatch.setattr(_figures, "_have_matplotlib", lambda: False)
    b = hand_benchmark()
    first = b.friedman("coverage", "dense")
    assert b.friedman("coverage", "dense") is first
    assert b.friedman("coverage", "dense", alpha=0.1) is not first
    assert len(calls) == 2
    # the same values as a direct computation; arrays that no caller can change
    direct = friedman(-b.table("coverage", "dense"), alpha=0.05)
    np.testing.assert_array_equal(first.ranks, direct.ranks)
    assert (first.chi2, first.f, first.cd_nemenyi) == (direct.chi2, direct.f, direct.cd_nemenyi)
    with pytest.raises(ValueError, match="read-only"):
        first.mean_ranks[0] = 0.0
    # every table, figure and comparison of the written report: one test per metric x type
    # at the report's level, and one at the default level (Kendall's tau compares average
    # ranks), but for the two kept above
    calls.clear()
    write_benchmark(b, tmp_path, alpha=0.1)
    n = len(METRIC_KEYS) * len(STUDY_TIES)
    assert sorted(calls) == [0.05] * (n - 1) + [0.1] * (n - 1)
    # not part of the saved result, and a reloaded result computes its own
    again = BenchmarkResult.from_json(b.to_json())
    assert again.to_json() == b.to_json() and again._cache == {}
    assert again.friedman("coverage", "dense").chi2 == first.chi2
    assert "_cache" not in repr(b)


def test_data_sets_that_all_rank_alike_show_an_infinite_f_readably():
    means = {t: [0.6, 0.5, 0.4] for t in STUDY_TIES}
    b = BenchmarkResult({f"s{i}": hand_study(f"s{i}", means, seed=i) for i in range(4)})
    res = b.friedman("average_precision", "ordinal")
    assert res.f == np.inf and res.f_pvalue == pytest.approx(6.0 ** -3)
    table = benchmark_tables(b)[2]
    assert table.title == "Average ranks: ordinal ranking"
    row = table.cells()[METRIC_KEYS.index("average_precision")]
    assert row[1:] == ["1.00", "2.00", "3.00", "8.00", f"{ss.chi2.sf(8, 2):.3g}", "∞",
                       f"{6.0 ** -3:.3g}*"]
    from fastrank.report import benchmark_figure_specs, render_benchmark_html
    for text in (render_benchmark_markdown(b), render_benchmark_html(b, figures=[]),
                 *(spec.caption for spec in benchmark_figure_specs(b))):
        assert "inf" not in text.replace("infinite", "")
    assert "F = ∞, p = 0.00463" in benchmark_figure_specs(b)[0].caption
    tex = render_benchmark_latex(b)
    assert r"$\infty$" in tex and "inf " not in tex


def test_json_round_trip_and_frame(bench):
    text = bench.to_json()
    back = BenchmarkResult.from_json(text)
    assert back.to_json() == text and back.datasets == bench.datasets
    frame = bench.to_frame()
    assert list(frame.columns) == ["dataset", "classifier", "ties", "metric", "fold", "value"]
    assert len(frame) == 8 * 3 * 4 * 19 * 3
    row = frame[(frame.dataset == "set2") & (frame.classifier == "ML-kNN")
                & (frame.ties == "dense") & (frame.metric == "coverage") & (frame.fold == 1)]
    s = bench.studies["set2"]
    assert row.value.item() == s.values["mlknn"][1, METRIC_KEYS.index("coverage"), 1]
    with pytest.raises(ValueError, match="not a fastrank benchmark result"):
        BenchmarkResult.from_json(json.dumps({"format": "fastrank-study/1"}))
    with pytest.raises(ValueError, match="corrupt benchmark result"):
        BenchmarkResult.from_json(text[:100])
    for studies in ([], "x", None):
        with pytest.raises(ValueError, match="corrupt benchmark result: studies is not a dict"):
            BenchmarkResult.from_json(json.dumps({**json.loads(text), "studies": studies}))


def test_studies_must_agree():
    a = hand_study("a", {t: [0.5, 0.4, 0.3] for t in STUDY_TIES})
    b = hand_study("b", {t: [0.5, 0.4, 0.3] for t in STUDY_TIES})
    b.classifiers = ("knn", "vgram", "mlknn")
    with pytest.raises(ValueError, match="has classifiers"):
        BenchmarkResult({"a": a, "b": b})
    with pytest.raises(ValueError, match="at least one study"):
        BenchmarkResult({})


def test_benchmark_latex_ranks_and_tables(bench):
    tex = render_benchmark_latex(bench)
    check_latex_structure(tex)
    tables = latex_rows(tex)
    assert len(tables) == len(STUDY_TIES)
    for t, rows in zip(STUDY_TIES, tables):
        for m, row in zip(METRIC_KEYS, rows):
            res = bench.friedman(m, t)
            ranks = [float(c.replace(r"\textbf{", "").rstrip("}")) for c in row[1:4]]
            np.testing.assert_allclose(ranks, np.round(res.mean_ranks, 2))
            bold = [c.startswith(r"\textbf") for c in row[1:4]]
            assert bold == list(res.mean_ranks == res.mean_ranks.min())
    md = "\n".join(t.markdown() for t in benchmark_tables(bench))
    assert "Average ranks: dense ranking" in md and "Wilcoxon–Holm" in md
    assert "Cells whose best classifier changes" in md


def test_benchmark_average_ranks_share_one_table_in_every_format(bench):
    """tables.md and tables.tex show the same average-rank tables: the same cells, the best
    (lowest) rank in bold in both, the significant Iman–Davenport p-value starred in both,
    and the table's note as the LaTeX caption."""
    md = render_benchmark_markdown(bench)
    tex = render_benchmark_latex(bench)
    for t, rows in zip(STUDY_TIES, latex_rows(tex)):
        assert f"\\caption{{Average ranks: {t} ranking. Rank of each classifier's" in tex
        for m, row in zip(METRIC_KEYS, rows):
            res = bench.friedman(m, t)
            best = res.mean_ranks == res.mean_ranks.min()
            ranks = [f"**{r:.2f}**" if b else f"{r:.2f}" for r, b in zip(res.mean_ranks, best)]
            star = "*" if res.f_pvalue < 0.05 else ""
            f = "∞" if np.isinf(res.f) else f"{res.f:.2f}"
            assert (f"| {_vocabulary.metric_name(m)} | " + " | ".join(ranks)
                    + f" | {res.chi2:.2f} | {res.chi2_pvalue:.3g} | {f} | "
                    f"{res.f_pvalue:.3g}{star} |") in md
            assert row[1:4] == [r.replace("**", r"\textbf{", 1).replace("**", "}")
                                for r in ranks]
            assert row[-1] == f"{res.f_pvalue:.3g}" + (r"$^{*}$" if star else "")


def test_benchmark_latex_head_names_benchmark_json(bench):
    head = render_benchmark_latex(bench).splitlines()[:2]
    assert head == ["% fastrank tables; needs \\usepackage{booktabs} in the preamble.",
                    "% Generated from benchmark.json: average ranks over the data sets, best "
                    "per row in bold."]


def test_terminal_summary_of_a_benchmark(bench):
    """Per main metric and ranking type: the classifier of the best average rank (from
    SciPy's ranks of the fold means) and the Iman–Davenport p-value (from SciPy's Friedman
    χ²), starred below alpha; then the report line."""
    from fastrank.report import MAIN_METRICS, benchmark_summary, metric_name
    text = benchmark_summary(bench, report_path="out/report.html")
    lines = text.splitlines()
    assert lines[0] == "fastrank tie study on 8 data sets: " + ", ".join(bench.datasets)
    assert lines[-1] == "Report: out/report.html"
    head = lines.index("Best classifier by average rank (Friedman p)")
    names = {"knn": "kNN", "mlknn": "ML-kNN", "vgram": "VG-RAM WNN"}
    n, k = len(bench.datasets), len(CLFS)
    for i, m in enumerate(MAIN_METRICS):
        row = lines[head + 3 + i]
        assert row.startswith(metric_name(m))
        cells = re.findall(r"((?:[\w-]+(?: [\w-]+)*?)(?:/[\w -]+?)*) (\d\S*?)(\*?)(?=\s{2}|$)",
                           row[len(metric_name(m)):].strip())
        assert len(cells) == len(STUDY_TIES), row
        for t, (best, p, star) in zip(STUDY_TIES, cells):
            table = bench.table(m, t)
            sign = -1 if m in LOWER_IS_BETTER else 1
            mean_ranks = np.mean([ss.rankdata(-sign * r) for r in table], axis=0)
            assert best.split("/") == [names[c] for c, r in zip(CLFS, mean_ranks)
                                       if r == mean_ranks.min()]
            chi2 = ss.friedmanchisquare(*table.T).statistic
            if chi2 == pytest.approx(n * (k - 1)):  # all alike: F = ∞, p the exact chance
                pvalue = math.factorial(k) ** -(n - 1)
            else:
                f = (n - 1) * chi2 / (n * (k - 1) - chi2)
                pvalue = ss.f.sf(f, k - 1, (k - 1) * (n - 1))
            assert float(p) == pytest.approx(pvalue, rel=1e-2)
            assert (star == "*") == bool(pvalue < 0.05)


@pytest.mark.parametrize("n", [2, 9, 10, 12])
def test_few_data_sets_are_said_to_be_too_few(n, tmp_path, monkeypatch):
    """Fewer than ten data sets (Demšar 2006 advises more): the terminal summary, tables.md,
    tables.tex and report.html say that the tests mean little; ten or more: none does."""
    from fastrank.report import _figures, benchmark_summary
    monkeypatch.setattr(_figures, "_have_matplotlib", lambda: False)
    small = hand_benchmark(n)
    write_benchmark(small, tmp_path)
    outputs = {"terminal": benchmark_summary(small),
               **{f: (tmp_path / f).read_text().replace("\n", " ")
                  for f in ("tables.md", "tables.tex", "report.html")}}
    for name, text in outputs.items():
        said = f"Only {n} data sets: too few for the Friedman test" in text
        assert said == (n < 10), name
        assert ("at least 10 are advised" in text) == (n < 10), name


def test_write_benchmark_builds_the_tables_once(bench, tmp_path, monkeypatch):
    import fastrank.report as report
    from fastrank.report import _figures, _write
    built = []
    real = _write.benchmark_tables
    monkeypatch.setattr(_write, "benchmark_tables",
                        lambda *args, **kw: built.append(args) or real(*args, **kw))
    monkeypatch.setattr(_figures, "_have_matplotlib", lambda: False)
    write_benchmark(bench, tmp_path, alpha=0.1)
    assert built == [(bench, 0.1)]
    md = (tmp_path / "tables.md").read_text()
    assert md == report.render_benchmark_markdown(bench, 0.1)
    assert "at α = 0.1" in md


# ---- end to end on real data --------------------------------------------------------------

@pytest.fixture(scope="module")
def small_sets():
    """Three small data sets cut from the embedded yeast (fast, distinct names)."""
    y = load("yeast")
    rng = np.random.default_rng(0)
    return [y.take(np.sort(rng.choice(y.n_documents, 240, replace=False)), name=f"yeast{i}")
            for i in range(3)]


@pytest.fixture
def no_figures(monkeypatch):
    """Per-data-set output sets written without figures (drawing them is tested with the
    report; here they would only take time)."""
    from fastrank.report import _figures
    monkeypatch.setattr(_figures, "_have_matplotlib", lambda: False)


OPTS = dict(folds=2, random_state=5, params={"vgram": {"n_neurons": 8, "n_synapses": 32}})


@pytest.fixture(scope="module")
def plain(small_sets):
    """The benchmark of the small sets, computed without an output folder."""
    return run_benchmark(small_sets, CLFS, **OPTS)


def test_run_benchmark_is_run_study_per_data_set(small_sets, plain):
    bench = plain
    assert bench.datasets == ("yeast0", "yeast1", "yeast2")
    for d in small_sets:
        direct = run_study(d, classifiers=CLFS, **OPTS)
        assert bench.studies[d.name].to_json() == direct.to_json()
    assert set(bench.timings) == set(bench.datasets)
    assert all(v >= 0 for t in bench.timings.values() for v in t.values())


def test_resume_skips_finished_data_sets_and_refuses_another_configuration(
        small_sets, plain, tmp_path, monkeypatch, no_figures):
    out = tmp_path / "bench"
    calls = []

    def interrupt(msg, done):
        calls.append((msg, done))
        if msg.startswith("yeast1"):
            raise KeyboardInterrupt  # stopped during the second data set

    with pytest.raises(KeyboardInterrupt):
        run_benchmark(small_sets, CLFS, out_dir=out, progress=interrupt, **OPTS)
    assert calls[-1][1] == 3 * 2 + 1  # the tasks are counted across data sets
    assert (out / "yeast0" / "results.json").is_file()
    assert not (out / "yeast1").exists()  # nothing half-written
    first = (out / "yeast0" / "results.json").read_bytes()

    computed = []
    real = compare.run_study
    monkeypatch.setattr(compare, "run_study", functools.wraps(real)(
        lambda d, **kw: computed.append(d.name) or real(d, **kw)))
    seen = []
    bench = run_benchmark(small_sets, CLFS, out_dir=out,
                          progress=lambda msg, done: seen.append((msg, done)), **OPTS)
    assert computed == ["yeast1", "yeast2"]
    assert seen[0] == ("yeast0: done earlier", 6) and seen[-1][1] == 18
    assert (out / "yeast0" / "results.json").read_bytes() == first
    assert bench.to_json() == plain.to_json()  # as computed in one go without out_dir
    assert "yeast0" not in bench.timings

    for change, word in (({"folds": 3}, "folds 2 instead of 3"),
                         ({"random_state": 6}, "random_state 5 instead of 6"),
                         ({"ties": ("ordinal", "dense")}, "ties"),
                         ({"params": {}}, "params")):
        with pytest.raises(ValueError, match=f"another configuration .*{word}"):
            run_benchmark(small_sets, CLFS, out_dir=out, **{**OPTS, **change})
    with pytest.raises(ValueError, match="classifiers"):
        run_benchmark(small_sets, CLFS[:2], out_dir=out, **OPTS)

    # a study of the previous format (VG-RAM seeded otherwise) is read, but not resumed
    saved = json.loads(first)
    assert saved["format"] == study_module.RESULT_FORMAT == "fastrank-study/2"
    saved["format"] = "fastrank-study/1"
    old = json.dumps(saved)
    (out / "yeast0" / "results.json").write_text(old)
    assert StudyResult.from_json(old).to_json() == first.decode()
    with pytest.raises(ValueError, match="written by an earlier fastrank .*fastrank-study/1"):
        run_benchmark(small_sets, CLFS, out_dir=out, **OPTS)


def test_resume_checks_the_parameters_run_study_would_use(small_sets, tmp_path, monkeypatch,
                                                         no_figures):
    """The saved parameters and those of the run asked for come from one record, with
    run_study's own defaults: an unchanged call resumes, a changed parameter or a changed
    default of run_study is refused."""
    sets, clfs, out = small_sets[:1], ["knn", "mlknn"], tmp_path / "b"
    first = run_benchmark(sets, clfs, out_dir=out, folds=2)
    saved = json.loads((out / "yeast0" / "results.json").read_text())
    planned = compare._planned_record(clfs, {"folds": 2})
    assert planned == {k: saved[k] for k in planned}
    assert planned == {"classifiers": clfs, "ties": list(STUDY_TIES), "folds": 2,
                       "random_state": 0, "cutoff": "perfect",
                       "params": {"knn": {"k": None}, "mlknn": {"k": 10, "s": 1.0}}}
    computed = []
    real = compare.run_study
    monkeypatch.setattr(compare, "run_study", functools.wraps(real)(
        lambda d, **kw: computed.append(d.name) or real(d, **kw)))
    again = run_benchmark(sets, clfs, out_dir=out, folds=2, random_state=0)
    assert computed == [] and again.to_json() == first.to_json()
    with pytest.raises(ValueError, match="another configuration .*cutoff 'perfect' instead "
                                         "of 3"):
        run_benchmark(sets, clfs, out_dir=out, folds=2, cutoff=3)
    # were run_study's default seed 1, a new run would differ from the saved one
    names = list(inspect.signature(real).parameters)
    defaults = list(real.__defaults__)
    assert len(defaults) == len(names)
    defaults[names.index("random_state")] = 1
    monkeypatch.setattr(real, "__defaults__", tuple(defaults))
    with pytest.raises(ValueError, match="another configuration .*random_state 0 instead of 1"):
        run_benchmark(sets, clfs, out_dir=out, folds=2)
    assert computed == []


TWO_TYPES = {**OPTS, "params": {}, "ties": ("ordinal", "modified")}


def test_own_estimator_in_a_benchmark_and_written_outputs(small_sets, tmp_path,
                                                          monkeypatch):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    own = ("OvR logistic", OneVsRestClassifier(LogisticRegression(max_iter=300)))
    sets = small_sets[:2]
    from fastrank.report import _figures
    with monkeypatch.context() as m:  # the data sets' own figures: tested with the report
        m.setattr(_figures, "_have_matplotlib", lambda: False)
        bench = run_benchmark(sets, ["knn", "mlknn", own], out_dir=tmp_path, **TWO_TYPES)
    assert bench.classifiers == ("knn", "mlknn", "OvR logistic")
    paths = write_benchmark(bench, tmp_path)
    for f in BENCHMARK_FILES:
        assert os.path.join(tmp_path, f) in paths
    html = (tmp_path / "report.html").read_text()
    assert "OvR logistic" in html and html.count("<svg") == 7 * 2  # main metrics x types
    assert BenchmarkResult.from_json((tmp_path / "benchmark.json").read_text()).to_json() \
        == bench.to_json()
    svgs = sorted(os.listdir(tmp_path / "figures"))
    assert "cd-ranking_loss-modified.svg" in svgs and "cd-ranking_loss-modified.pdf" in svgs
    # a resumed run with the same own estimator skips every data set
    again = run_benchmark(sets, ["knn", "mlknn", own], out_dir=tmp_path,
                          **TWO_TYPES)
    assert again.timings == {}
    other = ("OvR logistic", OneVsRestClassifier(LogisticRegression(C=0.5, max_iter=300)))
    with pytest.raises(ValueError, match="another configuration"):
        run_benchmark(sets, ["knn", "mlknn", other], out_dir=tmp_path,
                      **TWO_TYPES)


def test_bad_benchmark_arguments(small_sets, tmp_path):
    with pytest.raises(ValueError, match="two data sets are named 'yeast0'"):
        run_benchmark([small_sets[0], small_sets[0]], CLFS)
    for name, why in (("tables.md", "as one of the benchmark's outputs"),
                      ("figures", "as one of the benchmark's outputs"),
                      ("../escaped", "which is no folder name"), ("", "which is no folder"),
                      (".", "which is no folder"), ("a/b", "which is no folder")):
        named = [small_sets[0].take(np.arange(240), name=name), small_sets[1]]
        with pytest.raises(ValueError, match=f"a data set is named '{re.escape(name)}', "
                                             f"{why}"):
            run_benchmark(named, CLFS, out_dir=tmp_path / "out")
        assert not (tmp_path / "out").exists() and not (tmp_path / "escaped").exists()
    with pytest.raises(TypeError, match="sequence of data sets"):
        run_benchmark("yeast", CLFS)
    with pytest.raises(ValueError, match="non-empty"):
        run_benchmark([], CLFS)
    with pytest.raises(TypeError, match="unknown study options"):
        run_benchmark(small_sets, CLFS, fold=2)
    with pytest.raises(ValueError, match="named twice"):
        run_benchmark(small_sets, ["knn", "knn"])


def test_names_that_are_neither_embedded_nor_files_are_fetched(monkeypatch, small_sets):
    from fastrank.datasets import _load
    asked = []

    def fake_fetch(name, data_home=None):
        asked.append(name)
        return small_sets[0].take(np.arange(small_sets[0].n_documents), name=name)

    monkeypatch.setattr(_load, "fetch", fake_fetch)
    bench = run_benchmark(["emotions", "yeast"], ["knn", "mlknn"], folds=2)
    assert asked == ["emotions"]
    assert bench.datasets == ("emotions", "yeast")
    assert bench.studies["yeast"].dataset["documents"] == 2417


@pytest.mark.shared_data
def test_mulan_files_by_path(shared_data, tmp_path, no_figures):
    paths = [str(shared_data / "mulan" / n / f"{n}.arff") for n in ("emotions", "medical")]
    bench = run_benchmark(paths, ["knn", "mlknn"], folds=2, out_dir=tmp_path)
    assert bench.datasets == ("emotions", "medical")
    assert bench.studies["medical"].dataset["labels"] == 45
    assert (tmp_path / "emotions" / "tables.tex").is_file()


def test_pairwise_splits_equal_values_as_demsar():
    # knn and mlknn equal on three of eight data sets: their ranks are split between W+ and
    # W- (Demšar 2006), not dropped
    studies = {}
    for name, s in hand_benchmark().studies.items():
        values = dict(s.values)
        if name in ("set1", "set2", "set3"):
            values["mlknn"] = values["knn"].copy()
        studies[name] = StudyResult(dataset=s.dataset, classifiers=s.classifiers, ties=s.ties,
                                    folds=s.folds, random_state=s.random_state,
                                    cutoff=s.cutoff, params=s.params, values=values,
                                    tie_stats=s.tie_stats)
    bench = BenchmarkResult(studies)
    table = bench.table("average_precision", "dense")  # mlknn better on 3 of the 5 others
    assert (table[:, 0] == table[:, 1]).sum() == 3
    first = bench.pairwise("average_precision", "dense")[0]
    assert (first.first, first.second) == ("knn", "mlknn")
    split = ss.wilcoxon(table[:, 0], table[:, 1], zero_method="zsplit")
    dropped = ss.wilcoxon(table[:, 0], table[:, 1])
    assert first.statistic == split.statistic and first.pvalue == pytest.approx(split.pvalue)
    assert first.statistic != dropped.statistic and first.pvalue != pytest.approx(dropped.pvalue)


def _edited(path, edit):
    saved = json.loads(path.read_text())
    edit(saved)
    path.write_text(json.dumps(saved))


def _set_value(classifier, ties, metric, fold, value):
    def edit(saved):
        saved["values"][classifier][ties][metric][fold] = value
    return edit


@pytest.mark.parametrize("damage, message", [
    ("copied", r"another data set than 'yeast0' \(name 'yeast1' instead of 'yeast0'; .*sha256 "),
    ("renamed", r"another data set than 'yeast0' \(name 'yeast-7' instead of 'yeast0'\)"),
    ("shape", r"another data set than 'yeast0' \(documents 241 instead of 240\)"),
    ("digest", r"another data set than 'yeast0' \(sha256 '0+' instead of '[0-9a-f]{64}'\)"),
    ("fold 99", r"impossible results \(knn/dense/average_precision is 99\.0 in fold 2, "
                r"outside \[0, 1\]\)"),
    ("one-error -5", r"impossible results \(mlknn/ordinal/one_error is -5\.0 in fold 1"),
    ("coverage", r"impossible results \(knn/modified/coverage is 14\.0 in fold 1, outside "
                 r"\[0, 13\]\)"),
    ("nan", r"impossible results \(vgram/standard/hamming_loss is nan in fold 2"),
    ("tie stats", r"impossible results \(tie_stats/knn/top is \[0\.5, 2\.0\]"),
    ("stderr", r"impossible results \(stderr of vgram/expected/f1_macro_c"),
])
def test_resume_refuses_results_of_another_data_set_or_out_of_range(
        small_sets, tmp_path, no_figures, damage, message):
    """A finished data set's results.json edited between two runs -- another data set's
    results copied in, the data set renamed or its record changed, a value no study can
    give -- is refused, naming the file, before anything is computed."""
    sets = small_sets[:2]
    opts = {**OPTS, "ties": (*STUDY_TIES, "expected")} if damage == "stderr" else OPTS
    out = tmp_path / "b"
    run_benchmark(sets, CLFS, out_dir=out, **opts)
    path = out / "yeast0" / "results.json"
    run_benchmark(sets, CLFS, out_dir=out, **opts)  # untouched, it resumes
    if damage == "copied":
        path.write_bytes((out / "yeast1" / "results.json").read_bytes())
    else:
        _edited(path, {
            "renamed": lambda s: s["dataset"].update(name="yeast-7"),
            "shape": lambda s: s["dataset"].update(documents=241),
            "digest": lambda s: s["dataset"].update(sha256="0" * 64),
            "fold 99": _set_value("knn", "dense", "average_precision", 1, 99.0),
            "one-error -5": _set_value("mlknn", "ordinal", "one_error", 0, -5.0),
            "coverage": _set_value("knn", "modified", "coverage", 0, 14.0),
            "nan": _set_value("vgram", "standard", "hamming_loss", 1, float("nan")),
            "tie stats": lambda s: s["tie_stats"]["knn"].update(top=[0.5, 2.0]),
            "stderr": lambda s: s.setdefault("stderr", {}).setdefault("vgram", {}).update(
                f1_macro_c=[-0.1, 0.0]),
        }[damage])
    with pytest.raises(ValueError, match=f"^{path} holds (results of )?{message}"):
        run_benchmark(sets, CLFS, out_dir=out, **opts)


def test_a_data_set_whose_contents_changed_is_not_resumed(small_sets, tmp_path, no_figures):
    """The same name and shape with one feature value changed: the SHA-256 differs."""
    out = tmp_path / "b"
    run_benchmark(small_sets[:1], ["knn"], out_dir=out, folds=2)
    changed = small_sets[0].take(np.arange(small_sets[0].n_documents))
    changed.X.data[7] += 0.25
    with pytest.raises(ValueError, match="another data set than 'yeast0' \\(sha256 "):
        run_benchmark([changed], ["knn"], out_dir=out, folds=2)


def test_the_data_digest_is_of_the_contents_alone(small_sets):
    """The recorded SHA-256: the same for equal data stored differently (int64 indices, a
    copy), different for another label, value or text; equal to a direct hash of the
    documented byte layout."""
    import hashlib

    import scipy.sparse as sp

    from fastrank.datasets import Dataset
    d = small_sets[0]
    digest = _plan._data_digest(d)
    X = d.X.copy()
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    assert _plan._data_digest(Dataset(X, d.Y.copy(), name="other")) == digest
    assert _plan._data_digest(d, chunk=7) == digest
    h = hashlib.sha256()
    h.update(b"Y" + np.array(d.Y.shape, "<i8").tobytes() + d.Y.tobytes())
    h.update(b"X" + np.array(d.X.shape, "<i8").tobytes() + d.X.indptr.astype("<i8").tobytes()
             + d.X.indices.astype("<i8").tobytes() + d.X.data.astype("<f8").tobytes())
    assert digest == h.hexdigest()
    Y = d.Y.copy()
    Y[3, 2] ^= 1
    assert _plan._data_digest(Dataset(d.X, Y)) != digest
    texts = Dataset(None, [[1, 0], [0, 1]], texts=["a b", "c"])
    assert _plan._data_digest(texts) != _plan._data_digest(
        Dataset(None, [[1, 0], [0, 1]], texts=["a", "b c"]))
    assert _plan._data_digest(Dataset(sp.csr_matrix((2, 3)), [[1], [0]])) != \
        _plan._data_digest(Dataset(sp.csr_matrix((2, 4)), [[1], [0]]))


def test_the_command_line_refuses_edited_results_in_one_line(small_sets, tmp_path, capsys,
                                                              no_figures):
    """``fastrank study`` over several data sets: an edited results.json of a finished one
    ends the resumed run with exit 2 and one line naming the file."""
    from fastrank.__main__ import main
    from fastrank.datasets import save_libsvm
    for d in small_sets[:2]:
        save_libsvm(d, str(tmp_path / f"{d.name}.svm"))
    out = tmp_path / "out"
    args = ["study", "--dataset", f"{tmp_path / 'yeast0.svm'},{tmp_path / 'yeast1.svm'}",
            "--classifiers", "knn,mlknn", "--folds", "2", "--out", str(out), "--quiet"]
    assert main(args) == 0
    path = out / "yeast0" / "results.json"
    _edited(path, _set_value("knn", "ordinal", "one_error", 0, -5.0))
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"fastrank study: error: {path} holds "
                                                   "impossible results (knn/ordinal/one_error")


def test_pairwise_tests_and_best_changes_are_computed_once(monkeypatch):
    """A benchmark computes each metric x type's Wilcoxon-Holm tests and its best-classifier
    changes once; callers get copies they may change."""
    from fastrank.stats import wilcoxon
    calls = []
    monkeypatch.setattr(compare, "wilcoxon",
                        lambda *a, **kw: calls.append(1) or wilcoxon(*a, **kw))
    b = hand_benchmark()
    first = b.pairwise("coverage", "dense")
    assert len(calls) == len(CLFS) * (len(CLFS) - 1) // 2
    again = b.pairwise("coverage", "dense")
    assert again == first and again is not first and len(calls) == len(first)
    b.pairwise("coverage", "dense", alpha=0.1)
    assert len(calls) == 2 * len(first)
    changes = b.winner_changes()
    changes.clear()
    assert b.winner_changes() == b._winner_changes("ordinal") != []
    with pytest.raises(ValueError, match="read-only"):
        b.table("coverage", "dense")[0, 0] = 0.0
