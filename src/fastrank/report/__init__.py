"""Render a :class:`fastrank.study.StudyResult` as Markdown tables, a terminal summary and a
self-contained HTML report with vector figures, and write a study's output set.

Each table is built once (:func:`tables`, :func:`ranking_type_tables`) and rendered to
each format; a :class:`Cell` carries the flags (best, significant) each format marks in its
own syntax. The figures (:func:`figure_specs`) are drawn with matplotlib (the ``report``
extra) as SVG, inlined in ``report.html``, and also written as ``figures/NAME.svg`` and
``figures/NAME.pdf`` for a paper. Without matplotlib the HTML report keeps every table and
caption and says where each figure would be.

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
from .._vocabulary import METRIC_NAMES, TIE_NAMES, direction, metric_name
from ._figures import FigureSpec, benchmark_figure_specs, figure_specs, interval, render_figures
from ._html import render_benchmark_html, render_html
from ._latex import render_benchmark_latex, render_latex, tex_escape
from ._tables import MAIN_METRICS, Cell, Table, benchmark_tables, ranking_type_tables, tables
from ._text import REPORT_LINE, benchmark_summary, render_benchmark_markdown, render_markdown, \
    terminal_summary
from ._write import BENCHMARK_FILES, FIGURES_DIR, OUTPUT_FILES, check_output_dir, \
    write_benchmark, write_study

__all__ = ["write_study", "tables", "Table", "Cell", "ranking_type_tables", "render_markdown",
           "terminal_summary",
           "figure_specs", "FigureSpec", "render_figures", "render_html", "render_latex",
           "tex_escape", "interval", "write_benchmark", "benchmark_tables",
           "benchmark_figure_specs", "render_benchmark_markdown", "render_benchmark_latex",
           "render_benchmark_html", "benchmark_summary"]
