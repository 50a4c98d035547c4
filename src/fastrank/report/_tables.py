"""The report's tables, built once from a result and rendered to Markdown, HTML, text or
LaTeX (:mod:`._latex`).
"""
import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._vocabulary import LOWER_IS_BETTER, TIE_LETTERS, TIE_NAMES, best_mask, metric_name
from ..study import StudyResult, display_name
from ..study._result import TIE_STAT_KEYS
from ..study.compare import MIN_DATASETS


#: the metrics of :func:`terminal_summary`: the ranking metrics and the category F1
MAIN_METRICS = ("one_error", "coverage", "ranking_loss", "average_precision", "r_precision",
                "f1_micro_c", "f1_macro_c")


#: the title of the partial orders (melotti2009 Tables 5.1/5.2)
PARTIAL_ORDER_TITLE = "Ordinal against the other ranking types (paired t-tests)"
#: the title of the recommendation (melotti2009 Table 5.3)
RECOMMENDATION_TITLE = "Ranking types to use per metric"
#: the start of the titles of a benchmark's average ranks, one table per ranking type
AVERAGE_RANKS_TITLE = "Average ranks"


@dataclass(frozen=True)
class Cell:
    """A numeric cell: its formatted ``value``, an optional ``sd`` (shown ``value ± sd``)
    and flags that each format marks in its own syntax: ``best`` (the value in bold; plain
    on a terminal), ``significant`` (the table's mark after the cell) and ``estimated``
    (``~`` before it: a Monte-Carlo estimate).

    Examples
    --------
    >>> from fastrank.report import Cell, Table
    >>> table = Table("Toy", ["metric", "kNN"],
    ...               [["coverage", Cell("1.5000", "0.1000", best=True, significant=True)]])
    >>> table.markdown().splitlines()[-1], table.text().splitlines()[-1]
    ('| coverage | **1.5000** ± 0.1000* |', 'coverage  1.5000 ± 0.1000*')
    """

    value: str
    sd: str = ""
    best: bool = False
    significant: bool = False
    estimated: bool = False

    def render(self, strong=str, mark="*", tilde="~", pm=" ± "):
        """The cell in one syntax: ``strong`` wraps a best value, ``mark`` follows a
        significant one, ``tilde`` precedes an estimate and ``pm`` comes before the sd."""
        return ((tilde if self.estimated else "") + (strong(self.value) if self.best
                                                     else self.value)
                + (pm + self.sd if self.sd else "") + (mark if self.significant else ""))


class Table:
    """A titled table, rendered as Markdown, HTML, plain text or LaTeX
    (:func:`fastrank.report.render_latex`).

    Parameters
    ----------
    title : str
        The table's title.
    header : list of str
        Column names.
    rows : list of list of (str or Cell)
        The cells: text, or a :class:`Cell` whose flags each format marks in its own way.
    note : str, default ""
        A note shown with the table.
    mark : str, default "*"
        The mark after a significant :class:`Cell`.

    Examples
    --------
    >>> from fastrank.report import Table
    >>> table = Table("Toy", ["metric", "value"], [["coverage", "1.5"], ["a|b", "2"]])
    >>> print(table.markdown())
    ### Toy
    <BLANKLINE>
    | metric | value |
    |---|---|
    | coverage | 1.5 |
    | a\\|b | 2 |
    <BLANKLINE>
    >>> print(table.text())
    Toy
    metric    value
    --------  -----
    coverage  1.5
    a|b       2
    """

    def __init__(self, title: str, header: Sequence[str],
                 rows: Sequence[Sequence[str | Cell]], note: str = "",
                 mark: str = "*") -> None:
        self.title, self.header, self.rows, self.note = title, header, rows, note
        self.mark = mark

    def cells(self, escape=str, **style) -> list[list[str]]:
        """The rows as text: a string cell through ``escape``, a :class:`Cell` through
        :meth:`Cell.render` with ``style`` (the table's mark unless ``style`` names one)."""
        style.setdefault("mark", self.mark)
        return [[c.render(**style) if isinstance(c, Cell) else escape(c) for c in row]
                for row in self.rows]

    def markdown(self, level: int = 3) -> str:
        """The table in Markdown, under a heading of ``level`` (a literal ``|`` escaped, a
        best value in bold)."""
        lines = [f"{'#' * level} {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        def line(values):
            return "| " + " | ".join(values) + " |"
        def escape(text):  # a literal "|" (as in "O ≺ D|S|M") must not split the cell
            return text.replace("|", "\\|")
        lines.append(line(map(escape, self.header)))
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines += [line(row) for row in self.cells(escape, strong=lambda v: f"**{v}**",
                                                   mark=escape(self.mark))]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        """The table in HTML (``<h3>`` title, note, ``<table>``), text escaped, a best value
        in ``<b>``."""
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                       for row in self.cells(esc, strong=lambda v: f"<b>{v}</b>",
                                             mark=esc(self.mark)))
        note = f"<p class='note'>{esc(self.note)}</p>" if self.note else ""
        return (f"<h3>{esc(self.title)}</h3>{note}<table><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")

    def text(self) -> str:
        """Plain-text columns for a terminal (title, rows, then the note; a best value
        plain)."""
        rows = self.cells()
        widths = [max(len(r[i]) for r in (self.header, *rows))
                  for i in range(len(self.header))]
        def line(row):
            return "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
        out = [self.title, line(self.header), line(["-" * w for w in widths])]
        out += [line(r) for r in rows]
        return "\n".join(out + ([self.note] if self.note else []))


def _sd(v):
    return v.std(ddof=1) if len(v) > 1 else 0.0


def _fmt_t(res):
    if res.identical:
        return "≡ (identical)"
    mark = "*" if res.significant else ""
    return f"{res.statistic:.4f}{mark}"


def _compares_ordinal(result):
    return "ordinal" in result.ties and len(result.ties) > 1


def _others(result):
    return [t for t in result.ties if t != "ordinal"]


def _mean_sd_cell(result, c, t, m, alpha, mark_significance, best=False):
    """Classifier ``c``'s mean ± sd over the folds of metric ``m`` under ranking type ``t``,
    significant where it differs from ordinal (only if ``mark_significance``)."""
    v = result.fold_values(c, t, m)
    return Cell(f"{v.mean():.4f}", f"{_sd(v):.4f}", best=bool(best),
                significant=bool(mark_significance and t != "ordinal"
                                 and result.ttest(c, m, t, alpha).significant),
                estimated=t == "expected" and result.estimated(m))


def _mean_sd_table(result, c, metrics, alpha, mark_significance):
    return Table(f"{display_name(c)}: mean ± sd over folds",
                 ["metric"] + [TIE_NAMES[t] for t in result.ties],
                 [[metric_name(m)] + [_mean_sd_cell(result, c, t, m, alpha, mark_significance)
                                      for t in result.ties] for m in metrics])


def ranking_type_tables(result: StudyResult, alpha: float = 0.05) -> list[Table]:
    """Per ranking type of the study, a table of the mean ± sd over the folds (4 decimals,
    sd with ``ddof=1``): rows the metrics, columns the classifiers; each row's most
    favourable mean (lowest for a loss, highest otherwise; every tied one) is
    :attr:`Cell.best`, and under a type other than ordinal a value that differs
    significantly from the same classifier's ordinal value (the study's paired two-tailed
    t-test at ``alpha``) is :attr:`Cell.significant`, marked ``†``. The cut of a paper's
    tables (:func:`fastrank.report.render_latex`); the Markdown and HTML reports show the
    same values per classifier instead (:func:`tables`).

    Returns
    -------
    list of Table
        In the order of ``result.ties``.
    """
    compare = _compares_ordinal(result)
    name = result.dataset.get("name", "")
    out = []
    for t in result.ties:
        rows = []
        for m in result.metrics:
            best = best_mask([result.fold_values(c, t, m).mean() for c in result.classifiers],
                             m)
            rows.append([metric_name(m)] + [_mean_sd_cell(result, c, t, m, alpha, compare, b)
                                            for c, b in zip(result.classifiers, best)])
        note = "Bold: the best classifier of each metric."
        if compare and t != "ordinal":
            note += (" †: differs significantly from the ordinal ranking (paired two-tailed "
                     f"t-test over the folds, α = {alpha:g}).")
        out.append(Table(f"{name}: mean ± sd over {result.folds} folds under the "
                         f"{TIE_NAMES[t].lower()} ranking",
                         ["metric", *(display_name(c) for c in result.classifiers)], rows,
                         note=note, mark="†"))
    return out


def _partial_order_table(result, metrics, alpha):
    return Table(
        PARTIAL_ORDER_TITLE,
        ["metric"] + [display_name(c) for c in result.classifiers],
        [[metric_name(m)] + [result.partial_order(c, m, alpha) for c in result.classifiers]
         for m in metrics],
        note="O ≺ X: the metric is significantly smaller with the ordinal ranking than "
             "with X; ≻ larger; ≡ no significant difference (paired two-tailed t-test over "
             f"{result.folds} folds, α = {alpha:g}). "
             + ", ".join(f"{TIE_LETTERS[t]} = {TIE_NAMES[t]}" for t in result.ties) + ".")


def tables(result: StudyResult, alpha: float = 0.05, timings: bool = True) -> list[Table]:
    """The report's tables, in order: data set, configuration, tie statistics, means,
    t statistics per metric (melotti2009 Tables 4.x), partial orders (Tables 5.1/5.2),
    ranking types to use (Table 5.3: what this study supports, and the thesis' choice) and,
    optionally, timings.

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.
    timings : bool, default True
        Include the table of timings (measurements, not results).

    Returns
    -------
    list of Table

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009,
       Tables 4.x, 5.1-5.3.

    Examples
    --------
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> print(tables(result, timings=False)[-1].text())    # doctest: +ELLIPSIS
    Ranking types to use per metric
    metric                       better is  this study  Melotti (2009)
    ---------------------------  ---------  ----------  --------------
    One-error                    lower      D/S/M       M
    Coverage                     lower      M           M
    ...
    """
    out = []
    ds = result.dataset
    out.append(Table("Data set", ["property", "value"],
                     [[k, f"{v:.4f}" if isinstance(v, float) else str(v)]
                      for k, v in ds.items()]))
    out.append(Table(
        "Configuration", ["classifier", "parameters"],
        [[display_name(c), ", ".join(f"{k}={v}" for k, v in result.params[c].items())]
         for c in result.classifiers],
        note=f"{result.folds}-fold cross-validation, seed {result.random_state}, "
             f"cutoff '{result.cutoff}'."))
    out.append(Table(
        "Ties in the beliefs", ["classifier", "tied top group", "tie across |C_j|",
                                "mean tie-group size"],
        [[display_name(c)] + [f"{np.mean(result.tie_stats[c][k]):.4f}"
                       for k in TIE_STAT_KEYS]
         for c in result.classifiers],
        note="Share of test documents whose top tie group has several labels; share whose "
             "tie group at position |C_j| extends past it; labels per tie group. "
             "Means over folds."))
    for c in result.classifiers:
        table = _mean_sd_table(result, c, result.metrics, alpha, mark_significance=False)
        if any(map(result.estimated, result.metrics)):
            table.note = ("~ Monte-Carlo estimate (standard errors in results.json); every "
                          "other expected value is exact.")
        out.append(table)
    if _compares_ordinal(result):
        others = _others(result)
        for m in result.metrics:
            out.append(Table(
                f"t statistic, ordinal vs others: {metric_name(m)}",
                ["classifier"] + [TIE_NAMES[o] for o in others],
                [[display_name(c)] + [_fmt_t(result.ttest(c, m, o, alpha)) for o in others]
                 for c in result.classifiers],
                note=f"Paired two-tailed t-test over {result.folds} folds, "
                     f"df = {result.folds - 1}; * significant at α = {alpha:g}."))
        out.append(_partial_order_table(result, result.metrics, alpha))
        out.append(Table(
            RECOMMENDATION_TITLE,
            ["metric", "better is", "this study", "Melotti (2009)"],
            [[metric_name(m), "lower" if m in LOWER_IS_BETTER else "higher",
              result.recommendation(m, alpha), "M"] for m in result.metrics],
            note="This study: every type when no classifier's t-test finds a significant "
                 "difference for the metric; otherwise the tie-aware types, keeping, where "
                 "they disagree, those that never favour tied rankings over ordinal. "
                 "Melotti (2009): the modified ranking for every metric, the choice of the "
                 "study this one repeats. "
                 + ", ".join(f"{TIE_LETTERS[t]} = {TIE_NAMES[t]}" for t in result.ties)
                 + "."))
    if timings and result.timings:
        stages = ("fit", "predict", "evaluate")
        out.append(Table(
            "Time per fold (seconds, mean)", ["classifier", *stages],
            [[display_name(c)] + [f"{np.mean(result.timings[c][s]):.3f}" for s in stages]
             for c in result.classifiers],
            note=f"Building the features: {np.mean(result.timings['indexing']):.3f} s per "
                 "fold (tf-idf for raw text, row selection otherwise)."))
    return out


def _p(p):
    return "—" if np.isnan(p) else f"{p:.3g}"


def _stat(x):
    """A test statistic to 2 decimals; "∞" for the infinite F of data sets that all rank
    the classifiers alike (:func:`fastrank.stats.friedman`)."""
    return "∞" if np.isinf(x) else f"{x:.2f}"


def few_datasets_warning(bench):
    """The warning shown with the tests across data sets when there are fewer than
    :data:`fastrank.study.compare.MIN_DATASETS` of them (two at least; with one there are no
    tests), else ``""``."""
    n = len(bench.datasets)
    if not 2 <= n < MIN_DATASETS or len(bench.classifiers) < 2:
        return ""
    return (f"Only {n} data sets: too few for the Friedman test and the tests after it to "
            f"mean much (at least {MIN_DATASETS} are advised); read the average ranks and "
            "p-values as a description, not as evidence.")


def benchmark_summary_table(bench, alpha=0.05, metrics=MAIN_METRICS):
    """Per metric of ``metrics`` (those the benchmark has) and ranking type: the classifier
    with the best average rank over the data sets (every tied one) and the Iman–Davenport
    p-value of the Friedman test (``*`` below ``alpha``)."""
    rows = []
    for m in (m for m in metrics if m in bench.metrics):
        row = [metric_name(m)]
        for t in bench.ties:
            res = bench.friedman(m, t, alpha)
            best = res.mean_ranks == res.mean_ranks.min()
            row.append("/".join(display_name(c) for c, b in zip(bench.classifiers, best) if b)
                       + f" {_p(res.f_pvalue)}{'*' if res.significant else ''}")
        rows.append(row)
    return Table("Best classifier by average rank (Friedman p)",
                 ["metric", *(TIE_NAMES[t] for t in bench.ties)], rows,
                 note=f"Average rank over the {len(bench.datasets)} data sets (1 = the most "
                      f"favourable mean over the folds); p: Iman–Davenport F test of the "
                      f"Friedman ranks, * p < {alpha:g}.")


def benchmark_tables(bench, alpha=0.05):
    """The tables of a :class:`fastrank.study.compare.BenchmarkResult`, in order: data sets,
    configuration, per ranking type the average ranks with the Friedman / Iman–Davenport
    test and the critical differences, per ranking type the Wilcoxon–Holm pairwise tests,
    the agreement of each ranking type with ordinal (Kendall τ, best-classifier changes,
    Nemenyi-significant pairs gained and lost), and the cells whose best classifier
    changes.

    Parameters
    ----------
    bench : BenchmarkResult
    alpha : float, default 0.05

    Returns
    -------
    list of Table
    """
    first = next(iter(bench.studies.values()))
    names = [display_name(c) for c in bench.classifiers]
    n = len(bench.datasets)
    keys = ("documents", "features", "labels", "cardinality", "density")
    out = [Table("Data sets", ["data set", *keys],
                 [[d] + [f"{s.dataset[k]:.3f}" if isinstance(s.dataset.get(k), float)
                         else str(s.dataset.get(k, "")) for k in keys]
                  for d, s in bench.studies.items()]),
           Table("Configuration", ["classifier", "parameters"],
                 [[display_name(c), ", ".join(f"{k}={v}" for k, v in first.params[c].items())]
                  for c in bench.classifiers],
                 note=f"{first.folds}-fold cross-validation on each data set, seed "
                      f"{first.random_state}, cutoff '{first.cutoff}'.")]
    if n < 2 or len(names) < 2:
        return out
    for t in bench.ties:
        rows = []
        for m in bench.metrics:
            res = bench.friedman(m, t, alpha)
            best = res.mean_ranks == res.mean_ranks.min()
            rows.append([metric_name(m)]
                        + [Cell(f"{r:.2f}", best=b) for r, b in zip(res.mean_ranks, best)]
                        + [f"{res.chi2:.2f}", _p(res.chi2_pvalue), _stat(res.f),
                           Cell(_p(res.f_pvalue), significant=res.significant)])
        res0 = bench.friedman(bench.metrics[0], t, alpha)
        out.append(Table(
            f"{AVERAGE_RANKS_TITLE}: {TIE_NAMES[t].lower()} ranking",
            ["metric", *names, "χ²", "p (χ²)", "F", "p (F)"],
            rows, note=f"Rank of each classifier's mean over the folds on each of the {n} "
                       "data sets (1 = the most favourable value), averaged over the data "
                       f"sets; the best in bold. χ²: Friedman statistic, χ²({res0.df[0]}); "
                       f"F: Iman–Davenport statistic, F({res0.df[0]}, {res0.df[1]}), the test "
                       "that decides "
                       f"(* p < {alpha:g}); F = ∞ when every data set ranks the "
                       "classifiers alike, and its p-value is then the exact chance of that "
                       "under the null hypothesis. "
                       f"Critical differences at α = {alpha:g}: Nemenyi "
                       f"{res0.cd_nemenyi:.2f}, Bonferroni–Dunn {res0.cd_bonferroni_dunn:.2f}."))
    pairs = [f"{display_name(a)} vs {display_name(b)}" for i, a in enumerate(bench.classifiers)
             for b in bench.classifiers[i + 1:]]
    for t in bench.ties:
        out.append(Table(
            f"Wilcoxon–Holm: {TIE_NAMES[t].lower()} ranking", ["metric", *pairs],
            [[metric_name(m)] + [f"{display_name(r.better) if r.better else '='} "
                                 f"{_p(r.adjusted)}{'*' if r.significant else ''}"
                                 for r in bench.pairwise(m, t, alpha)]
             for m in bench.metrics],
            note="Each pair of classifiers: two-sided Wilcoxon signed-rank test of their "
                 f"means over the {n} data sets (the ranks of equal means split between W+ "
                 f"and W−, as Demšar 2006), p-values adjusted by Holm's step-down "
                 f"procedure over the {len(pairs)} pairs of a metric; the cell names the "
                 f"classifier with the better average rank; * significant at α = {alpha:g}."))
    others = [t for t in bench.ties if t != "ordinal"]
    if "ordinal" in bench.ties and others:
        header = ["metric"]
        for t in others:
            header += [f"τ {TIE_LETTERS[t]}", f"best changes {TIE_LETTERS[t]}",
                       f"Nemenyi ± {TIE_LETTERS[t]}"]
        changes = bench.winner_changes()
        rows = []
        for m in bench.metrics:
            row = [metric_name(m)]
            for t in others:
                gained, lost = bench.significance_changes(m, t, alpha)
                tau = bench.kendall_tau(m, t)
                row += ["—" if np.isnan(tau) else f"{tau:.2f}",
                        f"{sum(1 for c in changes if c['metric'] == m and c['ties'] == t)}"
                        f"/{n}", f"+{len(gained)} −{len(lost)}"]
            rows.append(row)
        out.append(Table(
            "Ranking type against ordinal", header, rows,
            note="τ: Kendall's τ-b between the classifiers' average ranks under ordinal and "
                 "under the type (1: the same order); best changes: data sets whose best "
                 "classifier differs; Nemenyi ±: pairs of classifiers significantly "
                 "different (average ranks further apart than the Nemenyi CD) under the "
                 "type but not under ordinal, and the reverse. "
                 + ", ".join(f"{TIE_LETTERS[t]} = {TIE_NAMES[t]}" for t in bench.ties)
                 + "."))
        out.append(Table(
            "Cells whose best classifier changes", ["metric", "data set", "ranking type",
                                                    "best under ordinal", "best under type"],
            [[metric_name(c["metric"]), c["dataset"], TIE_NAMES[c["ties"]],
              ", ".join(display_name(x) for x in c["reference_best"]),
              ", ".join(display_name(x) for x in c["best"])] for c in changes],
            note="Best: the most favourable mean over the folds (every tied one)."
                 + ("" if changes else " No cell changes.")))
    return out
