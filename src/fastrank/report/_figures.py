"""The report's figures (matplotlib, the ``report`` extra): what each shows, its caption, and
its drawing as reproducible SVG and PDF.
"""
import atexit
import functools
import io
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as _sps

from .._vocabulary import TIE_NAMES, check_alpha, direction, metric_name
from ..stats import critical_difference_diagram, mean_se
from ..study import StudyResult, display_name
from ._tables import MAIN_METRICS, _compares_ordinal, _others, _stat


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
    alpha = check_alpha(alpha)
    mean, se = mean_se(values)
    return mean, float(_sps.t.ppf(1.0 - alpha / 2.0, np.size(values) - 1) * se)


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
    "pdf.fonttype": 42}
_WIDTH = 7.0  # inches: the text width of a two-column paper
#: the characters the figures' font holds (code point ranges): Basic Latin and Latin-1,
#: Greek, dashes and quotes, super- and subscripts, arrows and mathematical operators
_FIGURE_CHARS = ((0x20, 0x7E), (0xA0, 0xFF), (0x370, 0x3FF), (0x2010, 0x2027),
                 (0x2070, 0x209F), (0x2190, 0x21FF), (0x2200, 0x22FF))
_FIGURE_FONT = "DejaVu Sans Figures"


@functools.cache
def _font_family() -> list[str]:
    """The figures' ``font.family``: DejaVu Sans (matplotlib's own font) cut to
    ``_FIGURE_CHARS``, made and registered with matplotlib once per process, then DejaVu
    Sans itself for any other character (of a user's names, say). Each PDF embeds a subset
    of the fonts it uses, and fontTools makes it by parsing the whole font file: with the
    6 000 glyphs and the OpenType layout tables of DejaVu Sans that took about 60 ms a file,
    a third of the report's writing; the cut (about 800 glyphs, kerning from its ``kern``
    table, no ligatures) takes about 9 ms. DejaVu Sans alone when the cut cannot be made."""
    from matplotlib import font_manager

    try:
        from fontTools import subset

        options = subset.Options(layout_features=[], name_IDs=["*"], name_languages=["*"],
                                 notdef_outline=True, glyph_names=True, legacy_kern=True)
        options.drop_tables += ["GSUB", "GPOS", "GDEF", "MATH", "FFTM"]
        folder = tempfile.mkdtemp(prefix="fastrank-font-")
        atexit.register(_remove_folder, folder, os.getpid())
        path = os.path.join(folder, "DejaVuSansFigures.ttf")
        with subset.load_font(font_manager.findfont("DejaVu Sans"), options) as font:
            cut = subset.Subsetter(options)
            cut.populate(unicodes=[c for lo, hi in _FIGURE_CHARS for c in range(lo, hi + 1)])
            cut.subset(font)
            for record in font["name"].names:
                if record.nameID in (1, 4, 16):  # family and full names; PostScript name kept
                    record.string = _FIGURE_FONT
            font.save(path)
        font_manager.fontManager.addfont(path)
    except (ImportError, OSError, KeyError):
        return ["DejaVu Sans"]
    return [_FIGURE_FONT, "DejaVu Sans"]


def _shown(classifier):
    """A classifier's name as a figure shows it: its dollar signs literal, never the start
    of a matplotlib math expression (a user's name such as "price $5 or $6")."""
    return display_name(classifier).replace("$", r"\$")


def _remove_folder(folder, owner):
    """Remove ``folder`` at exit of the process that made it (not of a forked child, whose
    parent may still draw with the font in it)."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


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

    def render(self, pdf: bool = True) -> tuple[str, bytes | None]:
        """``(svg_text, pdf_bytes)`` of the figure (``pdf_bytes`` None when ``pdf`` is
        False); needs matplotlib. Both are byte-for-byte reproducible (no dates, fixed SVG
        ids). The figure is laid out once, for the SVG, and the PDF reuses that layout.

        Raises
        ------
        ImportError
            matplotlib is not installed.
        """
        import matplotlib

        with matplotlib.rc_context({**_RC, "font.family": _font_family()}):
            fig = self._figure()
            svg = io.StringIO()
            fig.savefig(svg, format="svg", metadata={"Date": None, "Title": self.title})
            if not pdf:
                return svg.getvalue(), None
            fig.set_layout_engine("none")  # keep the layout just computed
            out = io.BytesIO()
            fig.savefig(out, format="pdf", metadata={"CreationDate": None,
                                                     "Title": self.title})
        return svg.getvalue(), out.getvalue()

    def _figure(self):
        """The drawn Figure. Its titles are fixed at the top of their axes (rcParams
        ``axes.titley = 1``) where matplotlib's automatic placement would leave them there
        anyway (nothing above an axes: x ticks and label at the bottom, no offset text on
        the y axis); that placement measures every tick label at each draw."""
        from matplotlib import rc_context
        from matplotlib.figure import Figure

        with rc_context({"axes.titley": 1.0}):
            fig = Figure(figsize=self.size, layout="constrained")
            self.draw(fig)
        if any(map(_something_above, fig.axes)):  # matplotlib places the titles
            fig = Figure(figsize=self.size, layout="constrained")
            self.draw(fig)
        return fig


def _something_above(ax):
    """Whether matplotlib's automatic title placement may raise the titles of ``ax``:
    x ticks or label at the top, or an offset text (``1e-7``, ``+0.6``) on the y axis."""
    formatter = ax.yaxis.get_major_formatter()
    formatter.format_ticks(ax.yaxis.get_majorticklocs())  # sets the offset
    return (ax.xaxis.get_ticks_position() in ("top", "unknown")
            or ax.xaxis.get_label_position() == "top" or bool(formatter.get_offset()))


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
    names = [_shown(c) for c in result.classifiers]
    ax.set_xticks(np.arange(len(names)),
                  [n.replace(" ", "\n", 1) if len(n) > 8 else n for n in names])
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
                mh = np.array([interval(result.fold_values(c, t, metric)
                                        - result.fold_values(c, "ordinal", metric), alpha)
                               for c in result.classifiers])
                filled = np.array([significant[c, t] for c in result.classifiers])
                for marks in (filled, ~filled):  # one artist per fill, not per mark
                    if marks.any():
                        _dot_interval(ax, x[marks] + dx, mh[marks, 0], mh[marks, 1], t,
                                      filled=marks is filled)
            ax.margins(y=0.12)
            _classifier_axis(ax, result)
            ax.set_ylabel("Difference from ordinal\n(type − ordinal)")
            ax.set_title(f"(b) Paired difference; filled: p < {alpha:g}", loc="left")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=len(labels),
                   frameon=False, handletextpad=0.3, columnspacing=1.2)
    return draw


def metric_figures_note(result, alpha=0.05):
    """What every metric figure shows, stated once above them (their captions name only the
    metric, its direction and what is particular to it)."""
    n, pct = result.folds, f"{100 * (1 - alpha):g} %"
    text = (f"Each figure shows one metric of each classifier under each ranking type, "
            f"{n}-fold cross-validation. (a) Marks: mean over the {n} folds; whiskers: "
            f"{pct} confidence interval of the mean (Student t, {n - 1} df).")
    if _compares_ordinal(result):
        text += (f" *: differs significantly from the ordinal ranking (paired two-tailed "
                 f"t-test over the folds, α = {alpha:g}). (b) Mean per-fold difference "
                 f"from the ordinal ranking with its {pct} paired t interval; filled "
                 f"marks: significant (the interval excludes 0), open: not significant; "
                 f"a mark at 0 without whiskers: identical on every fold.")
    return text + " The value axes are scaled to the data, not drawn from zero."


def _metric_caption(result, metric):
    text = f"{metric_name(metric)}, {direction(metric)}."
    if result.estimated(metric):
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
    """The critical-difference diagrams drawn: (name, title, names, treatments of
    :meth:`~fastrank.study.StudyResult.friedman`, block description); only those with at
    least three treatments and two blocks."""
    out = []
    if len(result.classifiers) >= 3 and len(result.metrics) >= 2:
        ref = TIE_NAMES[result.reference_ties].lower()
        out.append(("cd-classifiers", "Classifiers",
                    [_shown(c) for c in result.classifiers], "classifiers",
                    f"each of the {len(result.metrics)} metrics is a block (its mean over the "
                    f"folds under the {ref} ranking)"))
    if len(result.ties) >= 3:
        out.append(("cd-ranking-types", "Ranking types", [TIE_NAMES[t] for t in result.ties],
                    "ties", f"each of the {len(result.classifiers)} × "
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
    specs += [FigureSpec(f"metric-{m}", metric_name(m), _metric_caption(result, m),
                         (_WIDTH, 2.7), _draw_metric(result, m, alpha))
              for m in result.metrics]
    for name, title, names, treatments, blocks in _cd_blocks(result):
        res = result.friedman(treatments, alpha)
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


def render_figures(result: StudyResult, alpha: float = 0.05, pdf: bool = True,
                   progress: Callable[[str], Any] | None = None
                   ) -> list[tuple[FigureSpec, str | None, bytes | None]]:
    """``[(spec, svg_text, pdf_bytes), ...]`` for :func:`figure_specs`, or ``[(spec,
    None, None), ...]`` when matplotlib is not installed.

    Parameters
    ----------
    result : fastrank.study.StudyResult
        The study.
    alpha : float, default 0.05
        Significance level of the t-tests.
    pdf : bool, default True
        Draw the PDF too (``pdf_bytes`` is None otherwise).
    progress : callable(str), optional
        Told of each figure before it is drawn.

    Returns
    -------
    list of tuple
        ``(FigureSpec, str or None, bytes or None)`` per figure.

    Examples
    --------
    See :func:`write_study`, which writes these figures, and :class:`FigureSpec` for one.
    """
    return _render_specs(figure_specs(result, alpha), pdf, progress)


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
    names = [_shown(c) for c in bench.classifiers]
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


def _render_specs(specs, pdf=True, progress=None):
    """:meth:`FigureSpec.render` of each spec, or None for both files without matplotlib;
    ``progress(message)`` is told of each figure before it is drawn."""
    if not _have_matplotlib():
        return [(spec, None, None) for spec in specs]
    out = []
    for i, spec in enumerate(specs, 1):
        if progress:
            progress(f"report: figure {i}/{len(specs)} ({spec.name})")
        out.append((spec, *spec.render(pdf)))
    return out
