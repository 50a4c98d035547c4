"""Render a :class:`fastrank.study.StudyResult` as Markdown tables and a self-contained HTML
report (tables + one grouped bar chart per metric, like melotti2009 Figs. 4.1–4.19), and
write a study's output files atomically.

Each table is built once (:func:`tables`) and rendered to either format. The charts need
matplotlib (the ``report`` extra); without it the HTML report says so where they would be.
"""
import base64
import html
import importlib.util
import io
import os

import numpy as np

from ._atomic import atomic_file
from .metrics import ESTIMATED_KEYS
from .study import CLASSIFIERS, LOWER_IS_BETTER, TIE_LETTERS

TIE_NAMES = {"ordinal": "Ordinal", "dense": "Dense", "standard": "Standard",
             "modified": "Modified", "expected": "Expected"}


class Table:
    """A titled table: ``header`` (list of str) and ``rows`` (list of lists of str)."""

    def __init__(self, title, header, rows, note=""):
        self.title, self.header, self.rows, self.note = title, header, rows, note

    def markdown(self, level=3):
        lines = [f"{'#' * level} {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        def cells(values):  # a literal "|" (as in "O ≺ D|P|M") must not split the cell
            return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"
        lines.append(cells(self.header))
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines += [cells(row) for row in self.rows]
        return "\n".join(lines) + "\n"

    def html(self):
        esc = html.escape
        head = "".join(f"<th>{esc(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                       for row in self.rows)
        note = f"<p>{esc(self.note)}</p>" if self.note else ""
        return (f"<h3>{esc(self.title)}</h3>{note}<table><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")


def _name(c):
    return CLASSIFIERS[c][0] if c in CLASSIFIERS else c


def _fmt_t(res):
    if res.identical:
        return "≡ (identical)"
    mark = "*" if res.significant else ""
    return f"{res.statistic:.4f}{mark}"


def tables(result, alpha=0.05, timings=True):
    """The report's tables, in order: data set, configuration, tie statistics, means,
    t statistics per metric (Tables 4.x), partial orders (Tables 5.1/5.2), recommendation
    (Table 5.3) and, optionally, timings."""
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
    ties = result.ties
    for c in result.classifiers:
        rows = []
        for m in result.metrics:
            cells = []
            for t in ties:
                v = result.fold_values(c, t, m)
                estimated = t == "expected" and m in ESTIMATED_KEYS
                cells.append(("~" if estimated else "") +
                             f"{v.mean():.4f} ± {v.std(ddof=1) if len(v) > 1 else 0.0:.4f}")
            rows.append([m] + cells)
        note = ("~ Monte-Carlo estimate (standard errors in results.json); every other "
                "expected value is exact." if "expected" in ties else "")
        out.append(Table(f"{_name(c)}: mean ± sd over folds", ["metric"] +
                         [TIE_NAMES[t] for t in ties], rows, note=note))
    if "ordinal" in ties and len(ties) > 1:
        others = [t for t in ties if t != "ordinal"]
        for m in result.metrics:
            out.append(Table(
                f"t statistic, ordinal vs others: {m}",
                ["classifier"] + [TIE_NAMES[o] for o in others],
                [[_name(c)] + [_fmt_t(result.ttest(c, m, o, alpha)) for o in others]
                 for c in result.classifiers],
                note=f"Paired two-tailed t-test over {result.folds} folds, "
                     f"df = {result.folds - 1}; * significant at α = {alpha:g}."))
        out.append(Table(
            "Summary of the t-tests (Tables 5.1/5.2)",
            ["metric"] + [_name(c) for c in result.classifiers],
            [[m] + [result.partial_order(c, m, alpha) for c in result.classifiers]
             for m in result.metrics],
            note="O ≺ X: the metric is significantly smaller with the ordinal ranking than "
                 "with X; ≻ larger; ≡ no significant difference. "
                 + ", ".join(f"{TIE_LETTERS[t]} = {TIE_NAMES[t]}" for t in ties) + "."))
        out.append(Table(
            "Appropriate ranking per metric (Table 5.3)",
            ["metric", "better is", "experiments", "choice (thesis)"],
            [[m, "lower" if m in LOWER_IS_BETTER else "higher",
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


def render_markdown(result, alpha=0.05):
    title = f"# fastrank tie study: {result.dataset.get('name', '')}\n\n"
    return title + "\n".join(t.markdown() for t in tables(result, alpha))


def metric_chart_png(result, metric):
    """PNG bytes of one grouped bar chart: per classifier, one bar per ranking type (mean
    over folds, error bar = sample standard deviation)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    n_t = len(result.ties)
    width = 0.8 / n_t
    x = np.arange(len(result.classifiers))
    for k, t in enumerate(result.ties):
        vals = [result.fold_values(c, t, metric) for c in result.classifiers]
        ax.bar(x + (k - (n_t - 1) / 2) * width, [v.mean() for v in vals], width,
               yerr=[v.std(ddof=1) if len(v) > 1 else 0.0 for v in vals], capsize=2,
               label=TIE_NAMES[t])
    ax.set_xticks(x, [_name(c) for c in result.classifiers])
    better = "lower" if metric in LOWER_IS_BETTER else "higher"
    ax.set_title(f"{metric} ({better} is better)")
    ax.legend(fontsize="small", ncols=n_t, loc="lower center", bbox_to_anchor=(0.5, -0.35))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


_STYLE = ("body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}"
          "table{border-collapse:collapse;margin-bottom:1em}"
          "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}"
          "td:first-child,th:first-child{text-align:left}"
          "img.chart{display:block;margin:0.5em 0}")


def render_html(result, alpha=0.05):
    """A self-contained HTML report: every chart is an embedded PNG."""
    name = html.escape(str(result.dataset.get("name", "")))
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>fastrank tie study: "
             f"{name}</title><style>{_STYLE}</style></head><body>",
             f"<h1>fastrank tie study: {name}</h1>"]
    all_tables = tables(result, alpha)
    parts += [t.html() for t in all_tables[:3]]
    parts.append("<h2>Metrics per ranking type</h2>")
    if importlib.util.find_spec("matplotlib") is None:
        parts.append("<p><strong>Charts omitted: matplotlib is not installed "
                     "(pip install 'fastrank-mlc[report]').</strong></p>")
    else:
        for m in result.metrics:
            data = base64.b64encode(metric_chart_png(result, m)).decode()
            parts.append(f"<img class='chart' alt='{m}' src='data:image/png;base64,{data}'>")
    parts += [t.html() for t in all_tables[3:]]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_atomic(path, text):
    """Write ``text`` (UTF-8) to ``path`` atomically: ``path`` is either absent/old or
    complete, never half-written (see :func:`fastrank._atomic.atomic_file`)."""
    with atomic_file(path) as f:
        f.write(str.encode(text, "utf-8"))  # TypeError for anything but text


def write_study(result, out_dir, alpha=0.05):
    """Write ``results.json``, ``tables.md`` and ``report.html`` into ``out_dir``. All three
    are rendered in memory first, so an error leaves no output file behind."""
    texts = {"results.json": result.to_json(), "tables.md": render_markdown(result, alpha),
             "report.html": render_html(result, alpha)}
    os.makedirs(out_dir, exist_ok=True)
    for fname, text in texts.items():
        write_atomic(os.path.join(out_dir, fname), text)
    return [os.path.join(out_dir, f) for f in texts]
