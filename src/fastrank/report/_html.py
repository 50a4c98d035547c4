"""The self-contained HTML report: tables and inline SVG figures with numbered captions.
"""
import html
import re
from collections.abc import Sequence

from .._vocabulary import TIE_NAMES
from ..study import StudyResult, display_name
from ._figures import FigureSpec, _render_specs, benchmark_figure_specs, render_figures
from ._tables import PARTIAL_ORDER_TITLE, RECOMMENDATION_TITLE, Table, benchmark_tables, \
    tables


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
    >>> from fastrank.report import figure_specs
    >>> result = run_study(datasets.load("yeast").take(range(300)), classifiers=("knn",),
    ...                    folds=3)
    >>> undrawn = [(spec, None, None) for spec in figure_specs(result)]
    >>> page = render_html(result, figures=undrawn)
    >>> page.startswith("<!DOCTYPE html>"), "Ranking types to use per metric" in page
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
    clfs = ", ".join(display_name(c) for c in result.classifiers)
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
    summary = [all_tables[t].html() for t in (PARTIAL_ORDER_TITLE, RECOMMENDATION_TITLE)
               if t in all_tables]
    if cds or summary:
        section("Significance", *summary, *cds)
    shown = {"Data set", "Configuration", "Ties in the beliefs", PARTIAL_ORDER_TITLE,
             RECOMMENDATION_TITLE}
    section("All tables", *(t.html() for title, t in all_tables.items() if title not in shown))
    parts.append("</body></html>")
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
             f"<p>{esc(', '.join(display_name(c) for c in bench.classifiers))} on "
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
