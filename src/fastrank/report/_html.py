"""The self-contained HTML report: tables and inline SVG figures with numbered captions.
"""
import html
import re
from collections.abc import Sequence

from .._vocabulary import TIE_NAMES
from ..study import StudyResult, display_name
from ._figures import FigureSpec, _render_specs, benchmark_figure_specs, metric_figures_note, \
    render_figures
from ._tables import AVERAGE_RANKS_TITLE, PARTIAL_ORDER_TITLE, RECOMMENDATION_TITLE, Table, \
    benchmark_tables, few_datasets_warning, tables


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
nav ol ol{columns:3;font-size:.9em}
p.warning{border-left:4px solid #D55E00;padding:.3em .8em;max-width:56em}
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


def _anchor(heading):
    """The id of a section heading: ``sec-`` and its words in lower case, joined by ``-``
    (apart from the figures' ids, which are their file stems)."""
    return "sec-" + re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def _page(title, intro, sections):
    """A whole HTML page: ``title`` (its ``<title>`` and ``<h1>``), the ``intro`` blocks, a
    contents list, then each section of ``sections``: ``(heading, blocks, entries)``, where
    ``entries`` are ``(id, text)`` of the figures listed under the heading in the contents.
    Sections without blocks are left out."""
    esc = html.escape
    sections = [(h, [b for b in blocks if b], entries) for h, blocks, entries in sections]
    sections = [s for s in sections if s[1]]
    toc, body = [], []
    for heading, blocks, entries in sections:
        sub = "".join(f"<li><a href='#{i}'>{esc(text)}</a></li>" for i, text in entries)
        toc.append(f"<li><a href='#{_anchor(heading)}'>{esc(heading)}</a>"
                   + (f"<ol>{sub}</ol>" if sub else "") + "</li>")
        body.append(f"<h2 id='{_anchor(heading)}'>{esc(heading)}</h2>")
        body += blocks
    return "\n".join([
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>", *intro,
        "<nav><strong>Contents</strong><ol>" + "".join(toc) + "</ol></nav>",
        *body, "</body></html>"])


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
    intro = [f"<p>{esc(clfs)} on <em>{name}</em>, {result.folds}-fold cross-validation "
             f"(seed {result.random_state}), {len(result.metrics)} metrics under the "
             f"{esc(types)} rankings. Intervals are {100 * (1 - alpha):g} % Student-t "
             f"confidence intervals of the mean over the folds; significance is the paired "
             f"two-tailed t-test against the ordinal ranking at α = {alpha:g}."
             + (" Every figure is also in <code>figures/</code> as SVG"
                + (" and PDF." if all(pdf is not None for _, _, pdf in figures) else ".")
                if drawn else "") + "</p>"]
    if not drawn:
        intro.append("<p class='placeholder'><strong>Figures omitted: matplotlib is not "
                     "installed (pip install 'fastrank-mlc[report]').</strong> Each "
                     "figure's place and caption are kept below; its numbers are in the "
                     "tables.</p>")
    metric_specs = [spec for spec, _, _ in figures if spec.name.startswith("metric-")]
    cd_specs = [spec for spec, _, _ in figures if spec.name.startswith("cd-")]
    summary = [t for t in (PARTIAL_ORDER_TITLE, RECOMMENDATION_TITLE) if t in all_tables]
    shown = {"Data set", "Configuration", "Ties in the beliefs", *summary}
    return _page(f"fastrank tie study: {result.dataset.get('name', '')}", intro, [
        ("Data and configuration",
         [all_tables["Data set"].html(), all_tables["Configuration"].html()], []),
        ("Ties in the beliefs", [fig_html["ties"], all_tables["Ties in the beliefs"].html()],
         []),
        ("Metrics per ranking type",
         [f"<p class='note'>{esc(metric_figures_note(result, alpha))}</p>"]
         + [fig_html[spec.name] for spec in metric_specs],
         [(spec.name, spec.title) for spec in metric_specs]),
        ("Significance", [all_tables[t].html() for t in summary]
         + [fig_html[spec.name] for spec in cd_specs],
         [(spec.name, spec.title) for spec in cd_specs]),
        ("All tables", [t.html() for title, t in all_tables.items() if title not in shown],
         [])])


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
    first = next(iter(bench.studies.values()))
    intro = [f"<p>{esc(', '.join(display_name(c) for c in bench.classifiers))} on "
             f"{len(bench.datasets)} data sets ({esc(', '.join(bench.datasets))}), "
             f"{first.folds}-fold cross-validation each (seed {first.random_state}), "
             f"compared across the data sets as in Demšar (2006): average ranks, the "
             f"Friedman and Iman–Davenport tests, Nemenyi and Bonferroni–Dunn critical "
             f"differences and Wilcoxon signed-rank tests with Holm's correction, at "
             f"α = {alpha:g}, separately under each ranking type. Each data set's own "
             f"report is in its folder (<code>NAME/report.html</code>).</p>"]
    warning = few_datasets_warning(bench)
    if warning:
        intro.append(f"<p class='warning'><strong>Warning.</strong> {esc(warning)}</p>")
    if not drawn and figures:
        intro.append("<p class='placeholder'><strong>Figures omitted: matplotlib is not "
                      "installed (pip install 'fastrank-mlc[report]').</strong></p>")
    by_title = {t.title: t for t in built}
    ranks = [t.html() for t in built if t.title.startswith(AVERAGE_RANKS_TITLE)]
    return _page("fastrank tie study on many data sets", intro, [
        ("Data and configuration",
         [by_title["Data sets"].html(), by_title["Configuration"].html()], []),
        ("Average ranks and critical differences",
         ranks + [_figure_html(i, spec, svg) for i, (spec, svg, _) in enumerate(figures, 1)]
         if ranks else [], [(spec.name, spec.title) for spec, _, _ in figures]),
        ("Pairwise comparisons", [t.html() for t in built if t.title.startswith("Wilcoxon")],
         []),
        ("Where the ranking type changes the comparison",
         [t.html() for t in built if t.title in ("Ranking type against ordinal",
                                                 "Cells whose best classifier changes")],
         [])])
