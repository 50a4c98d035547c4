"""Render a :class:`fastrank.study.StudyResult` as Markdown tables, a terminal summary and a
self-contained HTML report with vector figures, and write a study's output set.

Each table is built once (:func:`tables`) and rendered to either format. The figures
(:func:`figure_specs`) are drawn with matplotlib (the ``report`` extra) as SVG, inlined in
``report.html``, and also written as ``figures/NAME.svg`` and ``figures/NAME.pdf`` for a
paper. Without matplotlib the HTML report keeps every table and caption and says where each
figure would be.

Conventions of the figures:

* Marks are means over the folds; whiskers are the two-sided ``1 - alpha`` (95 % for the
  default alpha = 0.05) Student-t confidence interval of that mean,
  ``mean ± t_{1-alpha/2, n-1} s / sqrt(n)`` over ``n`` folds (:func:`interval`).
* Significance is the study's paired two-tailed t-test against the ordinal ranking
  (:meth:`fastrank.study.StudyResult.ttest`): ``*`` above a mark in the panel of values; in
  the panel of paired differences (type − ordinal, whose interval excludes 0 exactly when
  the test is significant) filled marks are significant, open ones are not.
* The value axes are scaled to the data, not drawn from zero.
* Critical-difference diagrams (:func:`fastrank.stats.friedman`, Nemenyi at ``alpha``) rank
  the classifiers with each metric as a block (values: means over the folds under the
  modified ranking), and the ranking types with each classifier × metric as a block (rank 1
  = the most favourable value). The blocks share one data set and its folds, so they are
  not independent: the diagrams describe, the paired t-tests decide.
"""
import html
import io
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as _sps

from ._atomic import check_regular, replace_together, tidy
from ._typing import PathLikeStr
from .metrics import ESTIMATED_KEYS
from .stats import _check_alpha, critical_difference_diagram, friedman, mean_se
from .study import LOWER_IS_BETTER, TIE_LETTERS, StudyResult, _favourable, display_name

#: ranking type -> the name shown in tables and figures
TIE_NAMES = {"ordinal": "Ordinal", "dense": "Dense", "standard": "Standard",
             "modified": "Modified", "expected": "Expected"}

_BASE_NAMES = {"one_error": "One-error", "coverage": "Coverage",
               "ranking_loss": "Ranking loss", "average_precision": "Average precision",
               "r_precision": "R-precision", "hamming_loss": "Hamming loss",
               "exact_match": "Exact match"}
_FAMILIES = {"precision": "Precision", "recall": "Recall", "f1": "F1"}

#: metric key -> the name shown in tables and figures, e.g. "Precision (macro, category)"
METRIC_NAMES = {**_BASE_NAMES, **{
    f"{fam}_{avg}_{side}": f"{name} ({avg}, {'category' if side == 'c' else 'document'})"
    for fam, name in _FAMILIES.items() for avg in ("macro", "micro") for side in "cd"}}

#: the metrics of :func:`terminal_summary`: the ranking metrics and the category F1
MAIN_METRICS = ("one_error", "coverage", "ranking_loss", "average_precision", "r_precision",
                "f1_micro_c", "f1_macro_c")

#: the output files of a study, beside ``figures/`` (see :func:`write_study`)
OUTPUT_FILES = ("results.json", "tables.md", "tables.tex", "report.html")
#: the output files of a benchmark, beside ``figures/`` and one folder per data set (see
#: :func:`write_benchmark`)
BENCHMARK_FILES = ("benchmark.json", "tables.md", "tables.tex", "report.html")
#: the folder of the figure files, inside the output folder
FIGURES_DIR = "figures"
_FIGURE_FILE = re.compile(r"(ties|cd-[a-z0-9_-]+|metric-[a-z0-9_]+)\.(svg|pdf)")


def metric_name(metric: str) -> str:
    """The readable name of a metric key (the key itself when unknown).

    Examples
    --------
    >>> from fastrank.report import metric_name
    >>> metric_name("f1_macro_c")
    'F1 (macro, category)'
    """
    return METRIC_NAMES.get(metric, metric)


def direction(metric: str) -> str:
    """"lower is better" for the losses (one-error, coverage, ranking and Hamming loss),
    "higher is better" for every other metric.

    Examples
    --------
    >>> from fastrank.report import direction
    >>> direction("coverage"), direction("average_precision")
    ('lower is better', 'higher is better')
    """
    return "lower is better" if metric in LOWER_IS_BETTER else "higher is better"


def interval(values: npt.ArrayLike, alpha: float = 0.05) -> tuple[float, float]:
    """Mean of ``values`` and the half-width of its two-sided ``1 - alpha`` Student-t
    confidence interval.

    Parameters
    ----------
    values : array-like of float, shape (n,)
        At least two finite values (one per fold).
    alpha : float, default 0.05
        In (0, 1).

    Returns
    -------
    mean, half_width : float
        The interval is ``mean ± half_width`` with
        ``half_width = t_{1-alpha/2, n-1} * std(values, ddof=1) / sqrt(n)``.

    Raises
    ------
    ValueError
        Fewer than 2 values, not 1-D, a NaN or infinity (as :func:`fastrank.stats.mean_se`),
        or ``alpha`` outside (0, 1).

    Examples
    --------
    >>> from fastrank.report import interval
    >>> mean, half = interval([0.5, 0.6, 0.7])
    >>> round(mean, 4), round(half, 4)
    (0.6, 0.2484)
    """
    alpha = _check_alpha(alpha)
    mean, se = mean_se(values)
    return mean, float(_sps.t.ppf(1.0 - alpha / 2.0, np.size(values) - 1) * se)


class Table:
    """A titled table, rendered as Markdown, HTML or plain text.

    Parameters
    ----------
    title : str
        The table's title.
    header : list of str
        Column names.
    rows : list of list of str
        The cells.
    note : str, default ""
        A note shown with the table.

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

    def __init__(self, title: str, header: Sequence[str], rows: Sequence[Sequence[str]],
                 note: str = "") -> None:
        self.title, self.header, self.rows, self.note = title, header, rows, note

    def markdown(self, level: int = 3) -> str:
        """The table in Markdown, under a heading of ``level`` (a literal ``|`` escaped)."""
        lines = [f"{'#' * level} {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        def cells(values):  # a literal "|" (as in "O ≺ D|P|M") must not split the cell
            return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"
        lines.append(cells(self.header))
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines += [cells(row) for row in self.rows]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        """The table in HTML (``<h3>`` title, note, ``<table>``), text escaped."""
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                       for row in self.rows)
        note = f"<p class='note'>{esc(self.note)}</p>" if self.note else ""
        return (f"<h3>{esc(self.title)}</h3>{note}<table><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")

    def text(self) -> str:
        """Plain-text columns for a terminal (title, rows, then the note)."""
        widths = [max(len(r[i]) for r in (self.header, *self.rows))
                  for i in range(len(self.header))]
        def line(row):
            return "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
        out = [self.title, line(self.header), line(["-" * w for w in widths])]
        out += [line(r) for r in self.rows]
        return "\n".join(out + ([self.note] if self.note else []))


_name = display_name


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


def _mean_sd_table(result, c, metrics, alpha, mark_significance):
    rows = []
    for m in metrics:
        cells = []
        for t in result.ties:
            v = result.fold_values(c, t, m)
            estimated = t == "expected" and m in ESTIMATED_KEYS
            star = "*" if (mark_significance and t != "ordinal"
                           and result.ttest(c, m, t, alpha).significant) else ""
            cells.append(("~" if estimated else "") + f"{v.mean():.4f} ± {_sd(v):.4f}{star}")
        rows.append([metric_name(m)] + cells)
    return Table(f"{_name(c)}: mean ± sd over folds", ["metric"] +
                 [TIE_NAMES[t] for t in result.ties], rows)


def _partial_order_table(result, metrics, alpha):
    return Table(
        "Summary of the t-tests (Tables 5.1/5.2)",
        ["metric"] + [_name(c) for c in result.classifiers],
        [[metric_name(m)] + [result.partial_order(c, m, alpha) for c in result.classifiers]
         for m in metrics],
        note="O ≺ X: the metric is significantly smaller with the ordinal ranking than "
             "with X; ≻ larger; ≡ no significant difference (paired two-tailed t-test over "
             f"{result.folds} folds, α = {alpha:g}). "
             + ", ".join(f"{TIE_LETTERS[t]} = {TIE_NAMES[t]}" for t in result.ties) + ".")


def tables(result: StudyResult, alpha: float = 0.05, timings: bool = True) -> list[Table]:
    """The report's tables, in order: data set, configuration, tie statistics, means,
    t statistics per metric (Tables 4.x), partial orders (Tables 5.1/5.2), recommendation
    (Table 5.3) and, optionally, timings.

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
    Appropriate ranking per metric (Table 5.3)
    metric                       better is  experiments  choice (thesis)
    ---------------------------  ---------  -----------  ---------------
    One-error                    lower      D/P/M        M
    Coverage                     lower      M            M
    ...
    """
    out = []
    ds = result.dataset
    out.append(Table("Data set", ["property", "value"],
                     [[k, f"{v:.4f}" if isinstance(v, float) else str(v)]
                      for k, v in ds.items()]))
    out.append(Table(
        "Configuration", ["classifier", "parameters"],
        [[_name(c), ", ".join(f"{k}={v}" for k, v in result.params[c].items())]
         for c in result.classifiers],
        note=f"{result.folds}-fold cross-validation, seed {result.random_state}, "
             f"cutoff '{result.cutoff}'."))
    out.append(Table(
        "Ties in the beliefs", ["classifier", "tied top group", "tie across |C_j|",
                                "mean tie-group size"],
        [[_name(c)] + [f"{np.mean(result.tie_stats[c][k]):.4f}"
                       for k in ("top", "boundary", "group_size")]
         for c in result.classifiers],
        note="Share of test documents whose top tie group has several labels; share whose "
             "tie group at position |C_j| extends past it; labels per tie group. "
             "Means over folds."))
    for c in result.classifiers:
        table = _mean_sd_table(result, c, result.metrics, alpha, mark_significance=False)
        if "expected" in result.ties:
            table.note = ("~ Monte-Carlo estimate (standard errors in results.json); every "
                          "other expected value is exact.")
        out.append(table)
    if _compares_ordinal(result):
        others = _others(result)
        for m in result.metrics:
            out.append(Table(
                f"t statistic, ordinal vs others: {metric_name(m)}",
                ["classifier"] + [TIE_NAMES[o] for o in others],
                [[_name(c)] + [_fmt_t(result.ttest(c, m, o, alpha)) for o in others]
                 for c in result.classifiers],
                note=f"Paired two-tailed t-test over {result.folds} folds, "
                     f"df = {result.folds - 1}; * significant at α = {alpha:g}."))
        out.append(_partial_order_table(result, result.metrics, alpha))
        out.append(Table(
            "Appropriate ranking per metric (Table 5.3)",
            ["metric", "better is", "experiments", "choice (thesis)"],
            [[metric_name(m), "lower" if m in LOWER_IS_BETTER else "higher",
              result.recommendation(m, alpha), "M"] for m in result.metrics]))
    if timings and result.timings:
        stages = ("fit", "predict", "evaluate")
        out.append(Table(
            "Time per fold (seconds, mean)", ["classifier", *stages],
            [[_name(c)] + [f"{np.mean(result.timings[c][s]):.3f}" for s in stages]
             for c in result.classifiers],
            note=f"Building the features: {np.mean(result.timings['indexing']):.3f} s per "
                 "fold (tf-idf for raw text, row selection otherwise)."))
    return out


def render_markdown(result: StudyResult, alpha: float = 0.05,
                    built: Sequence[Table] | None = None) -> str:
    """The ``tables.md`` of a study: a title and every table of :func:`tables`.

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.
    built : list of Table, optional
        The list from :func:`tables` at the same ``alpha`` (built here when None).

    Returns
    -------
    str
        Markdown.

    Examples
    --------
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> render_markdown(result).splitlines()[:3]
    ['# fastrank tie study: yeast', '', '### Data set']
    """
    title = f"# fastrank tie study: {result.dataset.get('name', '')}\n\n"
    if built is None:
        built = tables(result, alpha)
    return title + "\n".join(t.markdown() for t in built)


#: the start of the last line of :func:`terminal_summary`
REPORT_LINE = "Report: "


def terminal_summary(result: StudyResult, alpha: float = 0.05,
                     report_path: PathLikeStr | None = None) -> str:
    """A plain-text summary for the terminal.

    The mean ± sd over folds of :data:`MAIN_METRICS` per classifier and ranking type
    (``*``: differs from ordinal, paired t-test at ``alpha``), the partial orders of every
    metric (Tables 5.1/5.2), and a last line :data:`REPORT_LINE` followed by
    ``report_path`` -- left for the caller to append when ``report_path`` is None.

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.
    report_path : str or os.PathLike, optional
        The report's path, for the last line.

    Returns
    -------
    str
        Lines separated by newlines, without a final newline.

    Examples
    --------
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> summary = terminal_summary(result, report_path="out/report.html").splitlines()
    >>> print(summary[0])  # doctest: +ELLIPSIS
    fastrank tie study: yeast — mean ± sd over 3 folds (* differs from ordinal: ...)
    >>> print(summary[5])
    One-error             0.4233 ± 0.0351  0.6900 ± 0.0608*  0.6900 ± 0.0608*  0.6900 ± 0.0608*
    >>> summary[-1]
    'Report: out/report.html'
    """
    compare = _compares_ordinal(result)
    metrics = [m for m in MAIN_METRICS if m in result.metrics]
    parts = [f"fastrank tie study: {result.dataset.get('name', '')} — mean ± sd over "
             f"{result.folds} folds"
             + (f" (* differs from ordinal: paired t-test, α = {alpha:g})" if compare
                else "")
             + ("; ~ Monte-Carlo estimate" if "expected" in result.ties
                and set(metrics) & set(ESTIMATED_KEYS) else "")]
    parts += [_mean_sd_table(result, c, metrics, alpha, compare).text()
              for c in result.classifiers]
    if compare:
        parts.append(_partial_order_table(result, result.metrics, alpha).text())
    return "\n\n".join(parts) + "\n\n" + REPORT_LINE + (
        "" if report_path is None else os.fsdecode(report_path))


# ---- LaTeX ------------------------------------------------------------------------------

_TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}", "≡": r"$\equiv$", "α": r"$\alpha$",
                "τ": r"$\tau$", "±": r"$\pm$", "−": "--", "∞": r"$\infty$"}


def tex_escape(text):
    """``text`` with LaTeX's special characters escaped, for a table cell or caption.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> print(tex_escape("F1 (macro, category) & 50% of C_j"))
    F1 (macro, category) \\& 50\\% of C\\_j
    """
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in str(text))


def _tex_table(caption, label, header, rows, align):
    """A booktabs table environment: ``header`` and ``rows`` hold LaTeX cell text."""
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small",
             rf"\caption{{{caption}}}", rf"\label{{{label}}}",
             rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _tex_label(text):
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def _best_mask(means, metric):
    """True where a mean is the most favourable of its row (every tied best)."""
    v = _favourable(means, metric)
    return v == v.max()


def _tex_head(source, content):
    """The comment lines that open a LaTeX output: what it needs, the file it is generated
    from and what its tables hold."""
    return ("% fastrank tables; needs \\usepackage{booktabs} in the preamble.\n"
            f"% Generated from {source}: {content}.\n")


def render_latex(result, alpha=0.05):
    """The mean ± sd tables of a study as LaTeX (booktabs), for a paper.

    One table per ranking type: rows are the metrics, columns the classifiers, each cell
    ``mean ± sd`` over the folds (4 decimals, sd with ``ddof=1``); the most favourable mean
    of each row (lowest for a loss, highest otherwise; every tied one) is bold; under a
    ranking type other than ordinal, ``†`` marks a value that differs significantly from the
    same classifier's ordinal value (the study's paired two-tailed t-test at ``alpha``).

    Parameters
    ----------
    result : StudyResult
    alpha : float, default 0.05

    Returns
    -------
    str
        LaTeX source of ``table`` environments; the document needs
        ``\\usepackage{booktabs}``.

    Examples
    --------
    >>> from fastrank.report import render_latex
    >>> from fastrank.study import run_study
    >>> tex = render_latex(run_study("yeast", ["knn", "mlknn"], folds=2))
    >>> print(tex.splitlines()[0])
    % fastrank tables; needs \\usepackage{booktabs} in the preamble.
    >>> tex.count(r"\\begin{table}"), tex.count(r"\\toprule")   # one table per ranking type
    (4, 4)
    """
    parts = [_tex_head("results.json", "mean +- sd over the folds, best value per row in bold")]
    names = [tex_escape(_name(c)) for c in result.classifiers]
    name = str(result.dataset.get("name", ""))
    compare = _compares_ordinal(result)
    for t in result.ties:
        rows = []
        for m in result.metrics:
            vals = [result.fold_values(c, t, m) for c in result.classifiers]
            best = _best_mask([v.mean() for v in vals], m)
            cells = [tex_escape(metric_name(m))]
            for c, v, b in zip(result.classifiers, vals, best):
                mean = f"{v.mean():.4f}"
                mark = (r"$^{\dagger}$" if compare and t != "ordinal"
                        and result.ttest(c, m, t, alpha).significant else "")
                tilde = r"$\sim$" if t == "expected" and m in ESTIMATED_KEYS else ""
                cells.append(tilde + (rf"\textbf{{{mean}}}" if b else mean)
                             + rf" $\pm$ {_sd(v):.4f}" + mark)
            rows.append(cells)
        caption = (f"{tex_escape(name)}: mean $\\pm$ sd over {result.folds} folds under the "
                   f"{TIE_NAMES[t].lower()} ranking. Bold: the best classifier of each "
                   f"metric.")
        if compare and t != "ordinal":
            caption += (f" $^{{\\dagger}}$: differs significantly from the ordinal ranking "
                        f"(paired two-tailed t-test over the folds, $\\alpha = {alpha:g}$).")
        parts.append(_tex_table(caption, f"tab:{_tex_label(name)}-{t}",
                                ["Metric", *names], rows, "l" + "r" * len(names)))
    return "\n".join(parts)


# ---- figures ------------------------------------------------------------------------------

#: Okabe-Ito colours (distinguishable with colour-vision deficiency) and distinct marker
#: shapes (distinguishable in grey print)
_STYLE_OF = {"ordinal": ("#000000", "o"), "dense": ("#E69F00", "^"),
             "standard": ("#0072B2", "s"), "modified": ("#009E73", "D"),
             "expected": ("#CC79A7", "v")}
_RC: Any = {  # matplotlib's rcParams (its annotations list every key as a Literal)
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5, "legend.fontsize": 7.5, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "axes.grid.axis": "y",
    "grid.color": "#dddddd", "grid.linewidth": 0.6, "axes.linewidth": 0.8,
    "lines.linewidth": 1.0, "svg.fonttype": "none", "svg.hashsalt": "fastrank",
    "pdf.fonttype": 42, "font.family": "DejaVu Sans"}
_WIDTH = 7.0  # inches: the text width of a two-column paper


@dataclass
class FigureSpec:
    """One figure of the report.

    Attributes
    ----------
    name : str
        File stem, in ``figures/``.
    title : str
        The figure's title.
    caption : str
        Plain-text caption.
    size : tuple of float
        Width and height in inches.
    draw : callable
        ``draw(fig)`` fills a matplotlib Figure.

    Examples
    --------
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> spec = figure_specs(result)[0]
    >>> spec.name, spec.title, spec.size
    ('ties', 'Ties in the beliefs', (7.0, 2.5))
    >>> svg, pdf = spec.render()
    >>> svg.startswith("<?xml"), pdf[:5]
    (True, b'%PDF-')
    """

    name: str
    title: str
    caption: str
    size: tuple
    draw: Callable[[Any], Any]

    def render(self) -> tuple[str, bytes]:
        """``(svg_text, pdf_bytes)`` of the figure; needs matplotlib. Both are byte-for-
        byte reproducible (no dates, fixed SVG ids).

        Raises
        ------
        ImportError
            matplotlib is not installed.
        """
        import matplotlib
        from matplotlib.figure import Figure

        with matplotlib.rc_context(_RC):
            fig = Figure(figsize=self.size, layout="constrained")
            self.draw(fig)
            svg, pdf = io.StringIO(), io.BytesIO()
            fig.savefig(svg, format="svg", metadata={"Date": None, "Title": self.title})
            fig.savefig(pdf, format="pdf", metadata={"CreationDate": None,
                                                     "Title": self.title})
        return svg.getvalue(), pdf.getvalue()


def _offsets(n, step=0.16):
    step = min(step, 0.8 / max(n, 1))
    return (np.arange(n) - (n - 1) / 2.0) * step


def _dot_interval(ax, x, means, halves, tie, filled=True, label=None):
    colour, marker = _STYLE_OF[tie]
    ax.errorbar(x, means, yerr=halves, fmt=marker, color=colour, ms=4.5, capsize=2.5,
                elinewidth=1.0, capthick=1.0, mfc=colour if filled else "white",
                mec=colour, mew=1.0, label=label, zorder=3)


def _classifier_axis(ax, result):
    # "VG-RAM WNN-COR" -> two lines, so that neighbouring names never overlap
    ax.set_xticks(np.arange(len(result.classifiers)),
                  [_name(c).replace(" ", "\n", 1) if len(_name(c)) > 8 else _name(c)
                   for c in result.classifiers])
    ax.set_xlim(-0.5, len(result.classifiers) - 0.5)
    ax.tick_params(axis="x", length=0)


def _draw_metric(result, metric, alpha):
    def draw(fig):
        compare = _compares_ordinal(result)
        axes = fig.subplots(1, 2 if compare else 1, squeeze=False)[0]
        x = np.arange(len(result.classifiers))
        significant = {(c, t): result.ttest(c, metric, t, alpha).significant
                       for c in result.classifiers for t in _others(result)} if compare else {}
        ax = axes[0]
        for t, dx in zip(result.ties, _offsets(len(result.ties))):
            mh = np.array([interval(result.fold_values(c, t, metric), alpha)
                           for c in result.classifiers])
            _dot_interval(ax, x + dx, mh[:, 0], mh[:, 1], t, label=TIE_NAMES[t])
            if compare and t != "ordinal":
                for i, c in enumerate(result.classifiers):
                    if significant[c, t]:
                        ax.annotate("*", (x[i] + dx, mh[i, 0] + mh[i, 1]),
                                    xytext=(0, 0.5), textcoords="offset points",
                                    ha="center", va="bottom", fontsize=9,
                                    color=_STYLE_OF[t][0], annotation_clip=False)
        ax.margins(y=0.12)
        _classifier_axis(ax, result)
        ax.set_ylabel(f"{metric_name(metric)}\n({direction(metric)})")
        ax.set_title(f"(a) Mean and {100 * (1 - alpha):g} % CI over folds", loc="left")
        if compare:
            ax = axes[1]
            others = _others(result)
            ax.axhline(0.0, color="#555555", linewidth=0.8, linestyle="--", zorder=2)
            for t, dx in zip(others, _offsets(len(others))):
                for i, c in enumerate(result.classifiers):
                    diff = (result.fold_values(c, t, metric)
                            - result.fold_values(c, "ordinal", metric))
                    mean, half = interval(diff, alpha)
                    _dot_interval(ax, [x[i] + dx], [mean], [half], t,
                                  filled=significant[c, t])
            ax.margins(y=0.12)
            _classifier_axis(ax, result)
            ax.set_ylabel("Difference from ordinal\n(type − ordinal)")
            ax.set_title(f"(b) Paired difference; filled: p < {alpha:g}", loc="left")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=len(labels),
                   frameon=False, handletextpad=0.3, columnspacing=1.2)
    return draw


def _metric_caption(result, metric, alpha):
    n, pct = result.folds, f"{100 * (1 - alpha):g} %"
    text = (f"{metric_name(metric)} ({direction(metric)}) of each classifier under each "
            f"ranking type, {n}-fold cross-validation. (a) Marks: mean over the {n} folds; "
            f"whiskers: {pct} confidence interval of the mean (Student t, {n - 1} df).")
    if _compares_ordinal(result):
        text += (f" *: differs significantly from the ordinal ranking (paired two-tailed "
                 f"t-test over the folds, α = {alpha:g}). (b) Mean per-fold difference "
                 f"from the ordinal ranking with its {pct} paired t interval; filled "
                 f"marks: significant (the interval excludes 0), open: not significant; "
                 f"a mark at 0 without whiskers: identical on every fold.")
    if "expected" in result.ties and metric in ESTIMATED_KEYS:
        text += " Expected: Monte-Carlo estimate."
    return text


def _draw_ties(result, alpha):
    def draw(fig):
        ax_size, ax_share = fig.subplots(1, 2)
        x = np.arange(len(result.classifiers))
        mh = np.array([interval(result.tie_stats[c]["group_size"], alpha)
                       for c in result.classifiers])
        ax_size.axhline(1.0, color="#555555", linewidth=0.9, linestyle="--", zorder=2)
        ax_size.errorbar(x, mh[:, 0], yerr=mh[:, 1], fmt="o", color="#000000", ms=4.5,
                         capsize=2.5, zorder=3)
        ax_size.margins(y=0.15)
        _classifier_axis(ax_size, result)
        ax_size.set_ylabel("Labels per tie group\n(1 = no ties)")
        ax_size.set_title("(a) Mean tie-group size", loc="left")
        series = (("top", "tied top group", "#D55E00", "o"),
                  ("boundary", "tie across $|C_j|$", "#0072B2", "s"))
        for (key, label, colour, marker), dx in zip(series, _offsets(2, 0.2)):
            mh = 100 * np.array([interval(result.tie_stats[c][key], alpha)
                                 for c in result.classifiers])
            ax_share.errorbar(x + dx, mh[:, 0], yerr=mh[:, 1], fmt=marker, color=colour,
                              ms=4.5, capsize=2.5, label=label, zorder=3)
        ax_share.margins(y=0.15)
        _classifier_axis(ax_share, result)
        ax_share.set_ylabel("Test documents (%)")
        ax_share.set_title("(b) Documents whose ranking ties matter", loc="left")
        ax_share.legend(frameon=False, loc="best")
    return draw


def _ties_caption(result, alpha):
    n, pct = result.folds, f"{100 * (1 - alpha):g} %"
    return (f"Ties in each classifier's beliefs over the test folds. (a) Mean number of "
            f"labels per tie group of a document (1: no ties; dashed line). (b) Share of "
            f"test documents whose top-ranked tie group holds several labels, and whose "
            f"tie group at position |C_j| (the number of relevant labels) extends past it. "
            f"Marks: mean over the {n} folds; whiskers: {pct} Student-t confidence "
            f"interval of the mean.")


def _cd_blocks(result):
    """The two Friedman comparisons: (name, title, names, table (blocks x treatments) of
    favourable-is-higher values, block description); only those with at least three
    treatments and two blocks."""
    out = []
    ref = "modified" if "modified" in result.ties else result.ties[-1]
    if len(result.classifiers) >= 3 and len(result.metrics) >= 2:
        table = np.array([_favourable([result.mean(c, ref, m) for c in result.classifiers], m)
                          for m in result.metrics])
        out.append(("cd-classifiers", "Classifiers", [_name(c) for c in result.classifiers],
                    table, f"each of the {len(result.metrics)} metrics is a block (its "
                    f"mean over the folds under the {TIE_NAMES[ref].lower()} ranking)"))
    if len(result.ties) >= 3:
        table = np.array([_favourable([result.mean(c, t, m) for t in result.ties], m)
                          for c in result.classifiers for m in result.metrics])
        out.append(("cd-ranking-types", "Ranking types", [TIE_NAMES[t] for t in result.ties],
                    table, f"each of the {len(result.classifiers)} × "
                    f"{len(result.metrics)} classifier × metric pairs is a block (its mean "
                    f"over the folds)"))
    return out


def _draw_cd(mean_ranks, names, cd):
    def draw(fig):
        ax = critical_difference_diagram(mean_ranks, names, cd, ax=fig.subplots())
        ax.set_ylim(-((len(names) + 1) // 2) - 0.6, 2)  # no empty band below the names
    return draw


def _cd_caption(title, res, blocks):
    verdict = ("the treatments differ significantly" if res.significant else
               "no significant difference, so the post-hoc grouping is only descriptive")
    return (f"Critical-difference diagram of the {title.lower()}: mean rank (1 = the most "
            f"favourable value: lowest for a loss, highest otherwise), where {blocks}. "
            f"Thick lines join treatments whose mean ranks differ by less than the Nemenyi "
            f"critical difference CD = {res.cd_nemenyi:.2f} (α = {res.alpha:g}). Friedman / "
            f"Iman-Davenport F = {_stat(res.f)}, p = {res.f_pvalue:.3g}: {verdict}. The blocks "
            f"share one data set and its folds and are not independent: the diagram "
            f"describes; the paired t-tests are the study's test.")


def figure_specs(result: StudyResult, alpha: float = 0.05) -> list[FigureSpec]:
    """The report's figures, in order: ties (``ties``), one per metric
    (``metric-KEY``), and the critical-difference diagrams (``cd-classifiers``,
    ``cd-ranking-types``) where three or more are compared. Needs no matplotlib; only
    :meth:`FigureSpec.render` does.

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.

    Returns
    -------
    list of FigureSpec

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006 (the critical-difference
       diagrams).

    Examples
    --------
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> [spec.name for spec in figure_specs(result)][:3]
    ['ties', 'metric-one_error', 'metric-coverage']
    >>> figure_specs(result)[-1].name           # 4 ranking types: one CD diagram
    'cd-ranking-types'
    """
    specs = [FigureSpec("ties", "Ties in the beliefs", _ties_caption(result, alpha),
                        (_WIDTH, 2.5), _draw_ties(result, alpha))]
    specs += [FigureSpec(f"metric-{m}", metric_name(m), _metric_caption(result, m, alpha),
                         (_WIDTH, 2.7), _draw_metric(result, m, alpha))
              for m in result.metrics]
    for name, title, names, table, blocks in _cd_blocks(result):
        res = friedman(table, higher_is_better=True, alpha=alpha)
        specs.append(FigureSpec(
            name, f"{title}: critical-difference diagram", _cd_caption(title, res, blocks),
            (_WIDTH * 0.7, 0.9 + 0.2 * len(names)),
            _draw_cd(res.mean_ranks, names, res.cd_nemenyi)))
    return specs


def _have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def render_figures(result: StudyResult, alpha: float = 0.05
                   ) -> list[tuple[FigureSpec, str | None, bytes | None]]:
    """``[(spec, svg_text, pdf_bytes), ...]`` for :func:`figure_specs`, or ``[(spec,
    None, None), ...]`` when matplotlib is not installed.

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.

    Returns
    -------
    list of tuple
        ``(FigureSpec, str or None, bytes or None)`` per figure.

    Examples
    --------
    See :func:`write_study`, which writes these figures, and :class:`FigureSpec` for one.
    """
    return _render_specs(figure_specs(result, alpha))


# ---- HTML ---------------------------------------------------------------------------------

_CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;max-width:62em;margin:auto;
padding:1em 1.5em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1em}
table{border-collapse:collapse;margin-bottom:1em;font-size:.9em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}
p.note,figcaption{font-size:.88em;color:#333}
figure{margin:1.5em 0;page-break-inside:avoid}
figure svg{display:block;width:100%;max-width:56em;height:auto}
figure.cd svg{max-width:36em}
figcaption{max-width:56em;margin-top:.3em}
.placeholder{border:1px dashed #999;padding:2em;text-align:center;color:#555;max-width:52em}
nav ol{columns:2}
"""


def _inline_svg(svg, prefix):
    """Matplotlib's SVG document as an element for HTML: without the XML prolog and the
    metadata block, every id (and reference to it) prefixed so that several figures on one
    page do not clash."""
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg[svg.index("<svg"):], flags=re.S)
    svg = re.sub(r'(\bid="|url\(#|href="#)', rf"\g<1>{prefix}-", svg)
    return svg.replace("<svg ", "<svg role='img' ", 1)


def _figure_html(number, spec, svg):
    esc = html.escape
    body = (_inline_svg(svg, spec.name) if svg is not None else
            f"<div class='placeholder'>Figure {number} ({esc(spec.title)}) would be here: "
            f"drawing it needs matplotlib (pip install 'fastrank-mlc[report]').</div>")
    kind = " class='cd'" if spec.name.startswith("cd-") else ""
    return (f"<figure id='{spec.name}'{kind}>{body}<figcaption><strong>Figure {number}. "
            f"{esc(spec.title)}.</strong> {esc(spec.caption)}</figcaption></figure>")


def render_html(result: StudyResult, alpha: float = 0.05,
                figures: Sequence[tuple[FigureSpec, str | None, bytes | None]] | None = None,
                built: Sequence[Table] | None = None) -> str:
    """A self-contained HTML report: tables, and every figure as inline SVG with a numbered
    caption (where a figure's SVG is None, a placeholder says what it would show).

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.
    figures : list, optional
        The list from :func:`render_figures` (drawn here when None).
    built : list of Table, optional
        The list from :func:`tables` at the same ``alpha`` (built here when None).

    Returns
    -------
    str

    Examples
    --------
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> undrawn = [(spec, None, None) for spec in figure_specs(result)]
    >>> page = render_html(result, figures=undrawn)
    >>> page.startswith("<!DOCTYPE html>"), "Table 5.3" in page
    (True, True)
    """
    if figures is None:
        figures = render_figures(result, alpha)
    esc = html.escape
    drawn = all(svg is not None for _, svg, _ in figures)
    name = esc(str(result.dataset.get("name", "")))
    if built is None:
        built = tables(result, alpha)
    all_tables = {t.title: t for t in built}
    number = {spec.name: i for i, (spec, _, _) in enumerate(figures, 1)}
    fig_html = {spec.name: _figure_html(number[spec.name], spec, svg)
                for spec, svg, _ in figures}
    clfs = ", ".join(_name(c) for c in result.classifiers)
    types = ", ".join(TIE_NAMES[t].lower() for t in result.ties)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>fastrank tie study: {name}</title><style>{_CSS}</style></head><body>",
             f"<h1>fastrank tie study: {name}</h1>",
             f"<p>{esc(clfs)} on <em>{name}</em>, {result.folds}-fold cross-validation "
             f"(seed {result.random_state}), {len(result.metrics)} metrics under the "
             f"{esc(types)} rankings. Intervals are {100 * (1 - alpha):g} % Student-t "
             f"confidence intervals of the mean over the folds; significance is the paired "
             f"two-tailed t-test against the ordinal ranking at α = {alpha:g}."
             + (" Every figure is also in <code>figures/</code> as SVG and PDF." if drawn
                else "") + "</p>"]
    if not drawn:
        parts.append("<p class='placeholder'><strong>Figures omitted: matplotlib is not "
                     "installed (pip install 'fastrank-mlc[report]').</strong> Each "
                     "figure's place and caption are kept below; its numbers are in the "
                     "tables.</p>")
    def section(title, *blocks):
        parts.append(f"<h2>{esc(title)}</h2>")
        parts.extend(b for b in blocks if b)
    section("Data and configuration", all_tables["Data set"].html(),
            all_tables["Configuration"].html())
    section("Ties in the beliefs", fig_html["ties"], all_tables["Ties in the beliefs"].html())
    section("Metrics per ranking type", *(fig_html[f"metric-{m}"] for m in result.metrics))
    cds = [fig_html[s.name] for s, _, _ in figures if s.name.startswith("cd-")]
    summary = [all_tables[t].html() for t in ("Summary of the t-tests (Tables 5.1/5.2)",
                                              "Appropriate ranking per metric (Table 5.3)")
               if t in all_tables]
    if cds or summary:
        section("Significance", *summary, *cds)
    shown = {"Data set", "Configuration", "Ties in the beliefs",
             "Summary of the t-tests (Tables 5.1/5.2)",
             "Appropriate ranking per metric (Table 5.3)"}
    section("All tables", *(t.html() for title, t in all_tables.items() if title not in shown))
    parts.append("</body></html>")
    return "\n".join(parts)


# ---- writing ------------------------------------------------------------------------------

_VIRTUAL = ("/proc", "/sys")


def check_output_dir(path: PathLikeStr, files: tuple = OUTPUT_FILES) -> None:
    """Check that a study can write its outputs into the folder ``path``, before any
    computation.

    Refused: a ``path`` that exists and is not a folder; a folder under ``/proc`` or
    ``/sys`` (virtual file systems); a folder (or, when ``path`` does not exist yet, its
    nearest existing parent) that this process cannot write; an entry named like an output
    (``files``, by default :data:`OUTPUT_FILES`, and ``figures/*.svg|pdf``) that is not a
    regular file, and a ``figures`` that is not a folder.

    An output set that a killed process left half renamed into the folder is finished
    first (made the new set whole), and the temporary files such a process left are
    removed (:func:`fastrank._atomic.tidy`; not while another process writes there).

    Raises
    ------
    ValueError
        For each case above but the permissions, with one message naming the path.
    PermissionError
        When the folder cannot be written.

    Examples
    --------
    >>> from fastrank.report import check_output_dir
    >>> check_output_dir("/proc/study")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: output folder /proc/study is under /proc (a virtual file system); ...
    """
    path = os.fsdecode(path)
    real = os.path.realpath(path)
    for virtual in _VIRTUAL:
        if real == virtual or real.startswith(virtual + os.sep):
            raise ValueError(f"output folder {path} is under {virtual} (a virtual file "
                             "system); choose a folder on a disk")
    existing = real  # the folder itself or its nearest existing parent
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ValueError(f"output folder {path} exists and is not a folder" if existing == real
                         else f"output folder {path} cannot be made: {existing} exists and "
                              "is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"output folder {path} is not writable"
                              + ("" if existing == real else f" (its parent {existing} is "
                                 "not)"))
    if existing != real:
        return
    figures = os.path.join(real, FIGURES_DIR)
    tidy([real, figures])
    for fname in files:
        check_regular(os.path.join(real, fname))
    if os.path.lexists(figures) and not os.path.isdir(figures):
        raise ValueError(f"{figures} exists and is not a folder; the figures go there")
    if os.path.isdir(figures):
        if not os.access(figures, os.W_OK | os.X_OK):
            raise PermissionError(f"{figures} is not writable")
        for entry in os.listdir(figures):
            if _FIGURE_FILE.fullmatch(entry):
                check_regular(os.path.join(figures, entry))


def write_study(result: StudyResult, out_dir: PathLikeStr, alpha: float = 0.05
                ) -> list[str]:
    """Write a study's output set into ``out_dir``: ``results.json``, ``tables.md``,
    ``tables.tex`` (:func:`render_latex`), ``report.html`` and, with matplotlib, ``figures/NAME.svg`` and ``figures/NAME.pdf``.

    All or nothing (:func:`fastrank._atomic.replace_together`): everything is rendered in
    memory, written to temporary files in the output folders, and only then renamed over
    the old files together; figure files of an earlier run that this run does not make are
    removed in the same step. If any step fails, the temporary files are removed and the
    old files stay as they were. Limit: a crash *during* the renames can leave a mix.
    ``out_dir`` is checked first (:func:`check_output_dir`).

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    out_dir : str or os.PathLike
        The output folder (made when missing).
    alpha : float, default 0.05
        Significance level of the t-tests.

    Returns
    -------
    list of str
        The paths of :data:`OUTPUT_FILES`, then the figures folder if figures were
        written.

    Raises
    ------
    ValueError, PermissionError
        An output folder that cannot be used (:func:`check_output_dir`).
    OSError
        A write that fails (the old files then stay as they were).

    Examples
    --------
    >>> import os, tempfile
    >>> from fastrank import datasets, run_study
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = write_study(result, os.path.join(tmp, "out"))
    ...     figures = sorted(os.listdir(os.path.join(tmp, "out", "figures")))
    >>> [os.path.basename(p) for p in paths]
    ['results.json', 'tables.md', 'tables.tex', 'report.html', 'figures']
    >>> figures[:3]
    ['cd-ranking-types.pdf', 'cd-ranking-types.svg', 'metric-average_precision.pdf']
    """
    check_output_dir(out_dir)
    figures = render_figures(result, alpha)
    built = tables(result, alpha)
    return _write_outputs(out_dir, {"results.json": result.to_json(),
                                    "tables.md": render_markdown(result, alpha, built),
                                    "tables.tex": render_latex(result, alpha),
                                    "report.html": render_html(result, alpha, figures, built)},
                          figures)


def _write_outputs(out_dir, texts, figures):
    """Write ``texts`` (file name -> text) and the rendered ``figures`` (SVG and PDF in
    ``figures/``) into ``out_dir`` all together or not at all, removing the figures of an
    earlier run that this one does not draw; the paths written (files, then the figure
    folder when there are figures)."""
    out_dir = os.fsdecode(out_dir)
    contents: dict[str, Any] = {os.path.join(out_dir, name): text.encode()
                                for name, text in texts.items()}
    fig_dir = os.path.join(out_dir, FIGURES_DIR)
    for spec, svg, pdf in figures:
        if svg is not None:
            contents[os.path.join(fig_dir, spec.name + ".svg")] = svg.encode()
            contents[os.path.join(fig_dir, spec.name + ".pdf")] = pdf
    stale = [os.path.join(fig_dir, f) for f in
             (os.listdir(fig_dir) if os.path.isdir(fig_dir) else ())
             if _FIGURE_FILE.fullmatch(f) and os.path.join(fig_dir, f) not in contents]
    replace_together(contents, remove=stale)
    paths = [os.path.join(out_dir, name) for name in texts]
    return paths + ([fig_dir] if len(contents) > len(texts) else [])


# ---- many data sets -----------------------------------------------------------------------

def _p(p):
    return "—" if np.isnan(p) else f"{p:.3g}"


def _stat(x):
    """A test statistic to 2 decimals; "∞" for the infinite F of data sets that all rank
    the classifiers alike (:func:`fastrank.stats.friedman`)."""
    return "∞" if np.isinf(x) else f"{x:.2f}"


def benchmark_tables(bench, alpha=0.05):
    """The tables of a :class:`fastrank.benchmark.BenchmarkResult`, in order: data sets,
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
    names = [_name(c) for c in bench.classifiers]
    n = len(bench.datasets)
    keys = ("documents", "features", "labels", "cardinality", "density")
    out = [Table("Data sets", ["data set", *keys],
                 [[d] + [f"{s.dataset[k]:.3f}" if isinstance(s.dataset.get(k), float)
                         else str(s.dataset.get(k, "")) for k in keys]
                  for d, s in bench.studies.items()]),
           Table("Configuration", ["classifier", "parameters"],
                 [[_name(c), ", ".join(f"{k}={v}" for k, v in first.params[c].items())]
                  for c in bench.classifiers],
                 note=f"{first.folds}-fold cross-validation on each data set, seed "
                      f"{first.random_state}, cutoff '{first.cutoff}'.")]
    if n < 2 or len(names) < 2:
        return out
    for t in bench.ties:
        rows = []
        for m in bench.metrics:
            res = bench.friedman(m, t, alpha)
            rows.append([metric_name(m)] + [f"{r:.2f}" for r in res.mean_ranks]
                        + [f"{res.chi2:.2f}", _p(res.chi2_pvalue), _stat(res.f),
                           _p(res.f_pvalue) + ("*" if res.significant else "")])
        res0 = bench.friedman(bench.metrics[0], t, alpha)
        out.append(Table(
            f"Average ranks: {TIE_NAMES[t].lower()} ranking",
            ["metric", *names, "χ²", "p (χ²)", "F", "p (F)"],
            rows, note=f"Rank of each classifier's mean over the folds on each of the {n} "
                       "data sets (1 = the most favourable value), averaged over the data "
                       f"sets. χ²: Friedman statistic, χ²({res0.df[0]}); F: Iman–Davenport "
                       f"statistic, F({res0.df[0]}, {res0.df[1]}), the test that decides "
                       f"(* p < {alpha:g}); F = ∞ when every data set ranks the "
                       "classifiers alike, and its p-value is then the exact chance of that "
                       "under the null hypothesis. "
                       f"Critical differences at α = {alpha:g}: Nemenyi "
                       f"{res0.cd_nemenyi:.2f}, Bonferroni–Dunn {res0.cd_bonferroni_dunn:.2f}."))
    pairs = [f"{_name(a)} vs {_name(b)}" for i, a in enumerate(bench.classifiers)
             for b in bench.classifiers[i + 1:]]
    for t in bench.ties:
        out.append(Table(
            f"Wilcoxon–Holm: {TIE_NAMES[t].lower()} ranking", ["metric", *pairs],
            [[metric_name(m)] + [f"{_name(r.better) if r.better else '='} "
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
              ", ".join(_name(x) for x in c["reference_best"]),
              ", ".join(_name(x) for x in c["best"])] for c in changes],
            note="Best: the most favourable mean over the folds (every tied one)."
                 + ("" if changes else " No cell changes.")))
    return out


def _benchmark_cd_caption(bench, metric, ties, res):
    verdict = ("the classifiers differ significantly" if res.significant else
               "no significant difference, so the grouping is only descriptive")
    return (f"{metric_name(metric)} ({direction(metric)}) under the "
            f"{TIE_NAMES[ties].lower()} ranking: average rank of each classifier over the "
            f"{res.n_datasets} data sets (1 = best). Thick lines join classifiers whose "
            f"average ranks differ by less than the Nemenyi critical difference CD = "
            f"{res.cd_nemenyi:.2f} (α = {res.alpha:g}; Bonferroni–Dunn against one control: "
            f"{res.cd_bonferroni_dunn:.2f}). Friedman χ² = {res.chi2:.2f}, Iman–Davenport "
            f"F = {_stat(res.f)}, p = {res.f_pvalue:.3g}: {verdict}.")


def benchmark_figure_specs(bench, alpha=0.05, metrics=MAIN_METRICS):
    """Critical-difference diagrams of a benchmark: one per metric of ``metrics`` (those
    the benchmark has) and ranking type, named ``cd-METRIC-TIES``; none with fewer than
    two data sets or classifiers (every metric's ranks are in :func:`benchmark_tables`).

    Returns
    -------
    list of FigureSpec
    """
    if len(bench.datasets) < 2 or len(bench.classifiers) < 2:
        return []
    names = [_name(c) for c in bench.classifiers]
    specs = []
    for m in (m for m in metrics if m in bench.metrics):
        for t in bench.ties:
            res = bench.friedman(m, t, alpha)
            specs.append(FigureSpec(
                f"cd-{m}-{t}", f"{metric_name(m)}, {TIE_NAMES[t].lower()} ranking",
                _benchmark_cd_caption(bench, m, t, res),
                (_WIDTH * 0.7, 0.9 + 0.2 * len(names)),
                _draw_cd(res.mean_ranks, names, res.cd_nemenyi)))
    return specs


def render_benchmark_markdown(bench, alpha=0.05, built=None):
    """:func:`benchmark_tables` as Markdown; ``built`` is that list at the same ``alpha``
    (built here when None)."""
    if built is None:
        built = benchmark_tables(bench, alpha)
    return ("# fastrank tie study on many data sets\n\n"
            + "\n".join(t.markdown() for t in built))


def render_benchmark_latex(bench, alpha=0.05):
    """The average-rank tables of a benchmark as LaTeX (booktabs): one per ranking type,
    rows the metrics, columns the classifiers' average ranks over the data sets (the best,
    lowest, in bold), the Friedman χ² and the Iman–Davenport F with their p-values. Each data set's mean ± sd
    tables are in its own folder (:func:`render_latex`).

    Returns
    -------
    str
        LaTeX source of ``table`` environments (needs ``\\usepackage{booktabs}``);
        empty tables are not written for fewer than two data sets or classifiers.
    """
    parts = [_tex_head("benchmark.json", "average ranks over the data sets, best per row in bold")]
    if len(bench.datasets) < 2 or len(bench.classifiers) < 2:
        return "\n".join(parts)
    names = [tex_escape(_name(c)) for c in bench.classifiers]
    n = len(bench.datasets)
    for t in bench.ties:
        rows = []
        for m in bench.metrics:
            res = bench.friedman(m, t, alpha)
            best = res.mean_ranks == res.mean_ranks.min()
            rows.append([tex_escape(metric_name(m))]
                        + [rf"\textbf{{{r:.2f}}}" if b else f"{r:.2f}"
                           for r, b in zip(res.mean_ranks, best)]
                        + [f"{res.chi2:.2f}", f"{res.chi2_pvalue:.3g}", tex_escape(_stat(res.f)),
                           f"{res.f_pvalue:.3g}" + (r"$^{*}$" if res.significant else "")])
        res0 = bench.friedman(bench.metrics[0], t, alpha)
        caption = (f"Average ranks over {n} data sets under the {TIE_NAMES[t].lower()} "
                   f"ranking (1 = best; bold: the best). $\\chi^2$: Friedman statistic, "
                   f"$\\chi^2({res0.df[0]})$; $F$: Iman--Davenport statistic, "
                   f"$F({res0.df[0]}, {res0.df[1]})$; each with its $p$-value ($^{{*}}$: "
                   f"$p < {alpha:g}$ for $F$). Critical differences at $\\alpha = {alpha:g}$: "
                   f"Nemenyi {res0.cd_nemenyi:.2f}, Bonferroni--Dunn "
                   f"{res0.cd_bonferroni_dunn:.2f}.")
        parts.append(_tex_table(caption, f"tab:ranks-{t}",
                                ["Metric", *names, r"$\chi^2$", "$p$", "$F$", "$p$"],
                                rows, "l" + "r" * (len(names) + 4)))
    return "\n".join(parts)


def render_benchmark_html(bench, alpha=0.05, figures=None, built=None):
    """A self-contained HTML report of a benchmark: the tables of
    :func:`benchmark_tables` and the critical-difference diagrams as inline SVG.
    ``figures`` is ``[(spec, svg, pdf), ...]`` (drawn here when None), ``built`` the list
    of :func:`benchmark_tables` at the same ``alpha`` (built here when None)."""
    if figures is None:
        figures = _render_specs(benchmark_figure_specs(bench, alpha))
    if built is None:
        built = benchmark_tables(bench, alpha)
    esc = html.escape
    drawn = all(svg is not None for _, svg, _ in figures)
    all_tables = built
    first = next(iter(bench.studies.values()))
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>fastrank tie study on many data sets</title><style>{_CSS}</style>"
             f"</head><body>",
             "<h1>fastrank tie study on many data sets</h1>",
             f"<p>{esc(', '.join(_name(c) for c in bench.classifiers))} on "
             f"{len(bench.datasets)} data sets ({esc(', '.join(bench.datasets))}), "
             f"{first.folds}-fold cross-validation each (seed {first.random_state}), "
             f"compared across the data sets as in Demšar (2006): average ranks, the "
             f"Friedman and Iman–Davenport tests, Nemenyi and Bonferroni–Dunn critical "
             f"differences and Wilcoxon signed-rank tests with Holm's correction, at "
             f"α = {alpha:g}, separately under each ranking type. Each data set's own "
             f"report is in its folder (<code>NAME/report.html</code>).</p>"]
    if not drawn and figures:
        parts.append("<p class='placeholder'><strong>Figures omitted: matplotlib is not "
                     "installed (pip install 'fastrank-mlc[report]').</strong></p>")
    by_title = {t.title: t for t in all_tables}
    parts.append("<h2>Data and configuration</h2>")
    parts += [by_title["Data sets"].html(), by_title["Configuration"].html()]
    ranks = [t for t in all_tables if t.title.startswith("Average ranks")]
    if ranks:
        parts.append("<h2>Average ranks and critical differences</h2>")
        parts += [t.html() for t in ranks]
        parts += [_figure_html(i, spec, svg)
                  for i, (spec, svg, _) in enumerate(figures, 1)]
        parts.append("<h2>Pairwise comparisons</h2>")
        parts += [t.html() for t in all_tables if t.title.startswith("Wilcoxon")]
    changes = [t for t in all_tables if t.title in ("Ranking type against ordinal",
                                                    "Cells whose best classifier changes")]
    if changes:
        parts.append("<h2>Where the ranking type changes the comparison</h2>")
        parts += [t.html() for t in changes]
    parts.append("</body></html>")
    return "\n".join(parts)


def _render_specs(specs):
    draw = _have_matplotlib()
    return [(spec, *(spec.render() if draw else (None, None))) for spec in specs]


def write_benchmark(bench, out_dir, alpha=0.05):
    """Write a benchmark's across-data-set outputs into ``out_dir``: ``benchmark.json``
    (:meth:`BenchmarkResult.to_json`), ``tables.md``, ``tables.tex``
    (:func:`render_benchmark_latex`), ``report.html`` and, with matplotlib,
    ``figures/cd-METRIC-TIES.svg|pdf``; all or nothing, as :func:`write_study`. Each data
    set's own output set is written by :func:`fastrank.benchmark.run_benchmark` into
    ``out_dir/NAME/``.

    Returns
    -------
    list of str
        The paths of :data:`BENCHMARK_FILES`, then the figures folder if figures were
        written.

    Raises
    ------
    ValueError, PermissionError
        As :func:`check_output_dir`.
    """
    check_output_dir(out_dir, BENCHMARK_FILES)
    figures = _render_specs(benchmark_figure_specs(bench, alpha))
    built = benchmark_tables(bench, alpha)
    return _write_outputs(out_dir, {"benchmark.json": bench.to_json(),
                                    "tables.md": render_benchmark_markdown(bench, alpha, built),
                                    "tables.tex": render_benchmark_latex(bench, alpha),
                                    "report.html": render_benchmark_html(bench, alpha, figures,
                                                                         built)},
                          figures)
