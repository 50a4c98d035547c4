"""LaTeX (booktabs) tables for a paper: ``tables.tex``.
"""
import re

from .._vocabulary import TIE_NAMES, metric_name
from ..study import display_name
from ._tables import _stat, few_datasets_warning, ranking_type_tables


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}", "≡": r"$\equiv$", "α": r"$\alpha$",
                "τ": r"$\tau$", "±": r"$\pm$", "−": "--", "∞": r"$\infty$",
                "†": r"$^{\dagger}$"}
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


def _latex(table, label):
    """A :class:`Table` as a booktabs table: its title and note as the caption, a best value
    in bold, a significance mark as a superscript."""
    rows = table.cells(tex_escape, strong=lambda v: rf"\textbf{{{v}}}",
                       mark=rf"$^{{{_TEX_MARKS[table.mark]}}}$", tilde=r"$\sim$",
                       pm=tex_escape(" ± "))
    caption = re.sub(r"\$\\alpha\$ = ([0-9.e+-]*[0-9])", r"$\\alpha = \1$",  # one formula
                     tex_escape(f"{table.title}. {table.note}"))
    return _tex_table(caption, label,
                      [tex_escape(h) for h in table.header], rows,
                      "l" + "r" * (len(table.header) - 1))


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


def render_benchmark_latex(bench, alpha=0.05):
    """The average-rank tables of a benchmark as LaTeX (booktabs): one per ranking type,
    rows the metrics, columns the classifiers' average ranks over the data sets (the best,
    lowest, in bold), the Friedman χ² and the Iman–Davenport F with their p-values. Each data set's
    mean ± sd
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
    names = [tex_escape(display_name(c)) for c in bench.classifiers]
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
        if few_datasets_warning(bench):
            caption += " " + tex_escape(few_datasets_warning(bench))
        parts.append(_tex_table(caption, f"tab:ranks-{t}",
                                ["Metric", *names, r"$\chi^2$", "$p$", "$F$", "$p$"],
                                rows, "l" + "r" * (len(names) + 4)))
    return "\n".join(parts)
