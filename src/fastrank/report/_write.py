"""Writing an output set: the checks of the output folder, and every file replaced together or
not at all.
"""
import os
import re
from collections.abc import Callable
from typing import Any

from .._atomic import check_regular, replace_together, tidy
from .._typing import PathLikeStr
from ..study import StudyResult
from ._figures import _render_specs, benchmark_figure_specs, render_figures
from ._html import render_benchmark_html, render_html
from ._latex import render_benchmark_latex, render_latex
from ._tables import benchmark_tables, tables
from ._text import render_benchmark_markdown, render_markdown


#: the output files of a study, beside ``figures/`` (see :func:`write_study`)
OUTPUT_FILES = ("results.json", "tables.md", "tables.tex", "report.html")
#: the output files of a benchmark, beside ``figures/`` and one folder per data set (see
#: :func:`write_benchmark`)
BENCHMARK_FILES = ("benchmark.json", "tables.md", "tables.tex", "report.html")
#: the folder of the figure files, inside the output folder
FIGURES_DIR = "figures"
_FIGURE_FILE = re.compile(r"(ties|cd-[a-z0-9_-]+|metric-[a-z0-9_]+)\.(svg|pdf)")


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


def write_study(result: StudyResult, out_dir: PathLikeStr, alpha: float = 0.05, *,
                pdf: bool = True, progress: Callable[[str], Any] | None = None) -> list[str]:
    """Write a study's output set into ``out_dir``: ``results.json``, ``tables.md``,
    ``tables.tex`` (:func:`render_latex`), ``report.html`` and, with matplotlib,
    ``figures/NAME.svg`` and (unless ``pdf`` is False) ``figures/NAME.pdf``.

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
    pdf : bool, default True
        Write each figure as PDF too (for a paper); the HTML report needs only the SVG.
        Subsetting the embedded font makes the PDFs more than half of the writing time.
    progress : callable(str), optional
        Told what is being made, before each figure and before the tables and the files.

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
    figures = render_figures(result, alpha, pdf=pdf, progress=progress)
    if progress:
        progress("report: tables (Markdown, LaTeX, HTML)")
    built = tables(result, alpha)
    return _write_outputs(out_dir, {"results.json": result.to_json(),
                                    "tables.md": render_markdown(result, alpha, built),
                                    "tables.tex": render_latex(result, alpha),
                                    "report.html": render_html(result, alpha, figures, built)},
                          figures, progress)


def _write_outputs(out_dir, texts, figures, progress=None):
    """Write ``texts`` (file name -> text) and the rendered ``figures`` (SVG and, where
    drawn, PDF in ``figures/``) into ``out_dir`` all together or not at all, removing the
    figure files of an earlier run that this one does not make; the paths written (files,
    then the figure folder when there are figures)."""
    out_dir = os.fsdecode(out_dir)
    contents: dict[str, Any] = {os.path.join(out_dir, name): text.encode()
                                for name, text in texts.items()}
    fig_dir = os.path.join(out_dir, FIGURES_DIR)
    for spec, svg, pdf in figures:
        if svg is not None:
            contents[os.path.join(fig_dir, spec.name + ".svg")] = svg.encode()
        if pdf is not None:
            contents[os.path.join(fig_dir, spec.name + ".pdf")] = pdf
    stale = [os.path.join(fig_dir, f) for f in
             (os.listdir(fig_dir) if os.path.isdir(fig_dir) else ())
             if _FIGURE_FILE.fullmatch(f) and os.path.join(fig_dir, f) not in contents]
    if progress:
        progress(f"report: writing {len(contents)} files into {out_dir}")
    replace_together(contents, remove=stale)
    paths = [os.path.join(out_dir, name) for name in texts]
    return paths + ([fig_dir] if len(contents) > len(texts) else [])


def write_benchmark(bench, out_dir, alpha=0.05, *, pdf=True, progress=None):
    """Write a benchmark's across-data-set outputs into ``out_dir``: ``benchmark.json``
    (:meth:`BenchmarkResult.to_json`), ``tables.md``, ``tables.tex``
    (:func:`render_benchmark_latex`), ``report.html`` and, with matplotlib,
    ``figures/cd-METRIC-TIES.svg|pdf``; all or nothing, with ``pdf`` and ``progress`` as
    :func:`write_study`. Each data
    set's own output set is written by :func:`fastrank.study.compare.run_benchmark` into
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
    figures = _render_specs(benchmark_figure_specs(bench, alpha), pdf, progress)
    if progress:
        progress("report: tables (Markdown, LaTeX, HTML)")
    built = benchmark_tables(bench, alpha)
    return _write_outputs(out_dir, {"benchmark.json": bench.to_json(),
                                    "tables.md": render_benchmark_markdown(bench, alpha, built),
                                    "tables.tex": render_benchmark_latex(bench, alpha, built),
                                    "report.html": render_benchmark_html(bench, alpha, figures,
                                                                         built)},
                          figures, progress)
