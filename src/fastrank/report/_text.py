"""Markdown and the terminal: ``tables.md`` and the summary the command line prints.
"""
import os
from collections.abc import Sequence

from .._typing import PathLikeStr
from ..study import StudyResult
from ._tables import MAIN_METRICS, Table, _compares_ordinal, _mean_sd_table, \
    _partial_order_table, benchmark_summary_table, benchmark_tables, few_datasets_warning, \
    tables


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
             + ("; ~ Monte-Carlo estimate" if any(map(result.estimated, metrics))
                else "")]
    parts += [_mean_sd_table(result, c, metrics, alpha, compare).text()
              for c in result.classifiers]
    if compare:
        parts.append(_partial_order_table(result, result.metrics, alpha).text())
    return "\n\n".join(parts) + "\n\n" + REPORT_LINE + (
        "" if report_path is None else os.fsdecode(report_path))


def render_benchmark_markdown(bench, alpha=0.05, built=None):
    """:func:`benchmark_tables` as Markdown, after the warning of
    :func:`few_datasets_warning` when there is one; ``built`` is that list at the same
    ``alpha`` (built here when None)."""
    if built is None:
        built = benchmark_tables(bench, alpha)
    warning = few_datasets_warning(bench)
    return ("# fastrank tie study on many data sets\n\n"
            + (f"**Warning.** {warning}\n\n" if warning else "")
            + "\n".join(t.markdown() for t in built))


def benchmark_summary(bench, alpha=0.05, report_path=None):
    """A plain-text summary of a benchmark for the terminal: its data sets, per main metric
    and ranking type the best classifier with the Friedman test's p-value
    (:func:`benchmark_summary_table`, with two data sets and two classifiers at least), the
    warning of :func:`few_datasets_warning` when there is one, and a last line
    :data:`REPORT_LINE` followed by ``report_path`` (as :func:`terminal_summary`)."""
    parts = [f"fastrank tie study on {len(bench.datasets)} data sets: "
             + ", ".join(bench.datasets)]
    if len(bench.datasets) >= 2 and len(bench.classifiers) >= 2:
        parts.append(benchmark_summary_table(bench, alpha).text())
    warning = few_datasets_warning(bench)
    if warning:
        parts.append("Warning. " + warning)
    return "\n\n".join(parts) + "\n\n" + REPORT_LINE + (
        "" if report_path is None else os.fsdecode(report_path))
