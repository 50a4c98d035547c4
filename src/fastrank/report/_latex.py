"""LaTeX (booktabs) tables for a paper: ``tables.tex``.
"""
import re

from ._tables import AVERAGE_RANKS_TITLE, benchmark_tables, few_datasets_warning, \
    ranking_type_tables


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}", "≡": r"$\equiv$", "α": r"$\alpha$",
                "τ": r"$\tau$", "±": r"$\pm$", "−": "--", "∞": r"$\infty$",
                "†": r"$^{\dagger}$", "χ²": r"$\chi^2$", "χ": r"$\chi$", "–": "--",
                "—": "---", "<": r"$<$", ">": r"$>$"}
_TEX_PATTERN = re.compile("|".join(map(re.escape, sorted(_TEX_SPECIAL, key=len, reverse=True))))
#: a significance mark as a LaTeX superscript
_TEX_MARKS = {"*": "*", "†": r"\dagger"}


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
    >>> print(tex_escape("χ² < 3.2 – α"))
    $\\chi^2$ $<$ 3.2 -- $\\alpha$
    """
    return _TEX_PATTERN.sub(lambda found: _TEX_SPECIAL[found.group()], str(text))


def _tex_table(caption, label, header, rows, align):
    """A booktabs table environment: ``header`` and ``rows`` hold LaTeX cell text."""
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small",
             rf"\caption{{{caption}}}", rf"\label{{{label}}}",
             rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _latex(table, label, extra=""):
    """A :class:`Table` as a booktabs table: its title, note and ``extra`` (LaTeX) as the
    caption, the first column's head capitalised, a best value in bold, a significance mark
    as a superscript."""
    rows = table.cells(tex_escape, strong=lambda v: rf"\textbf{{{v}}}",
                       mark=rf"$^{{{_TEX_MARKS[table.mark]}}}$", tilde=r"$\sim$",
                       pm=tex_escape(" ± "))
    caption = re.sub(r"\$\\alpha\$ = ([0-9.e+-]*[0-9])", r"$\\alpha = \1$",  # one formula
                     tex_escape(f"{table.title}. {table.note}"))
    head = [table.header[0].capitalize(), *table.header[1:]]
    return _tex_table(" ".join(filter(None, (caption, extra))), label,
                      [tex_escape(h) for h in head], rows, "l" + "r" * (len(head) - 1))


def _tex_label(text):
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


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
    label = _tex_label(result.dataset.get("name", ""))
    parts += [_latex(table, f"tab:{label}-{t}")
              for t, table in zip(result.ties, ranking_type_tables(result, alpha))]
    return "\n".join(parts)


def render_benchmark_latex(bench, alpha=0.05, built=None):
    """The average-rank tables of a benchmark as LaTeX (booktabs), those of
    :func:`benchmark_tables` (``built``, that list at the same ``alpha``; built here when
    None): one per ranking type, rows the metrics, columns the classifiers' average ranks
    over the data sets (the best, lowest, in bold), the Friedman χ² and the Iman–Davenport F
    with their p-values; the warning of :func:`few_datasets_warning` ends each caption. Each
    data set's mean ± sd tables are in its own folder (:func:`render_latex`).

    Returns
    -------
    str
        LaTeX source of ``table`` environments (needs ``\\usepackage{booktabs}``);
        empty tables are not written for fewer than two data sets or classifiers.
    """
    parts = [_tex_head("benchmark.json", "average ranks over the data sets, best per row in bold")]
    if built is None:
        built = benchmark_tables(bench, alpha)
    warning = tex_escape(few_datasets_warning(bench))
    ranks = [table for table in built if table.title.startswith(AVERAGE_RANKS_TITLE)]
    parts += [_latex(table, f"tab:ranks-{t}", warning) for t, table in zip(bench.ties, ranks)]
    return "\n".join(parts)
