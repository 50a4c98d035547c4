"""The result of :func:`fastrank.metrics.evaluate` (:class:`Evaluation`) and its keys."""
import html
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._common import _TIE_ALIASES
from ._topk import TopKEvaluation

#: The 19 metrics of the study, in its order: the keys of every result.
METRIC_KEYS = (
    "one_error", "coverage", "ranking_loss", "average_precision", "r_precision",
    "hamming_loss", "exact_match",
    "precision_macro_c", "precision_micro_c", "recall_macro_c", "recall_micro_c",
    "f1_macro_c", "f1_micro_c",
    "precision_macro_d", "precision_micro_d", "recall_macro_d", "recall_micro_d",
    "f1_macro_d", "f1_micro_d",
)
#: Under ``ties="expected"`` these have random per-label denominators: exact, but
#: Monte-Carlo estimates once documents weighing neither 0 nor 1 are evaluated.
ESTIMATED_KEYS = ("precision_macro_c", "f1_macro_c")


class Evaluation(dict):
    """Metric values per ranking type, as returned by :func:`evaluate`: a dict
    ``{ranking_type: {metric_key: value}}`` (so ``pandas.DataFrame(result)`` has one column
    per ranking type) with the arrays below.

    Attributes
    ----------
    ties : tuple of str
        The ranking types, in the order requested.
    metrics : tuple of str
        The metric keys (:data:`METRIC_KEYS`), in the study's order.
    values : ndarray of float64, shape (len(ties), len(metrics))
        ``values[t, k]`` is metric ``metrics[k]`` under ranking type ``ties[t]``.
    stderr : ndarray of float64, same shape
        Standard error of the values that are Monte-Carlo estimates (``ties="expected"``,
        keys ``ESTIMATED_KEYS``, with weights other than 0 and 1); NaN for every exact value.
    n_draws : int
        Number of random orders behind the estimates (0 when nothing was estimated).
    at_k : TopKEvaluation or None
        The top-k metrics of the same documents when they were asked for (``at_k`` of
        :func:`evaluate`), else None.

    ``result["modified"]`` is the dict of one ranking type, ``result.to_dict()`` the nested
    dict ``{ranking_type: {metric_key: value}}``, ``result.to_frame()`` a tidy pandas
    DataFrame, ``result.estimated`` the list of ``(ranking_type, metric_key)`` that are
    estimates, ``result.stderr_dict()`` their standard errors, ``str(result)`` a table in
    which an estimate is marked ``~`` and followed by its standard error (HTML in a
    notebook), then the table of ``at_k``. These describe the 19 study metrics only;
    ``result.at_k`` holds the top-k ones.

    Examples
    --------
    >>> from fastrank.metrics import evaluate
    >>> result = evaluate([[1, 0, 1, 0]], [[.5, .2, .2, .1]], ties=("dense", "modified"))
    >>> result["modified"]["coverage"], result["dense"]["coverage"]
    (2.0, 1.0)
    >>> result.values.shape
    (2, 19)
    """

    values: np.ndarray  # type: ignore[assignment]  # the array, not dict.values()

    def __init__(self, ties: Sequence[str], values: np.ndarray, stderr: np.ndarray,
                 n_draws: int = 0, at_k: TopKEvaluation | None = None) -> None:
        self.ties = tuple(ties)
        self.metrics = METRIC_KEYS
        self.values = values
        self.stderr = stderr
        self.n_draws = n_draws
        self.at_k = at_k
        super().__init__((t, dict(zip(self.metrics, row.tolist())))
                         for t, row in zip(self.ties, values))

    def __getitem__(self, ties):
        ties = _TIE_ALIASES.get(ties, ties) if isinstance(ties, str) else ties  # "max", ...
        if ties not in self.ties:
            raise KeyError(f"ranking type {ties!r} not evaluated; have {self.ties}")
        return dict(zip(self.metrics, self.values[self.ties.index(ties)].tolist()))

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The values as a plain nested dict ``{ranking_type: {metric_key: value}}``."""
        return {t: self[t] for t in self.ties}

    def to_frame(self) -> Any:
        """A tidy ``pandas.DataFrame``: one row per (ranking type, metric), columns
        ``ties``, ``metric``, ``value``, ``stderr`` (NaN for exact values).

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        import pandas as pd
        return pd.DataFrame({
            "ties": np.repeat(self.ties, len(self.metrics)),
            "metric": np.tile(self.metrics, len(self.ties)),
            "value": self.values.ravel(),
            "stderr": self.stderr.ravel(),
        })

    def _repr_html_(self):
        has_se = ~np.isnan(self.stderr)
        head = "".join(f"<th>{html.escape(t)}</th>" for t in self.ties)
        rows = []
        for k, key in enumerate(self.metrics):
            cells = "".join(
                f"<td>~{self.values[t, k]:.6f} ± {self.stderr[t, k]:.1e}</td>" if has_se[t, k]
                else f"<td>{self.values[t, k]:.6f}</td>" for t in range(len(self.ties)))
            rows.append(f"<tr><th>{html.escape(key)}</th>{cells}</tr>")
        note = (f"<p>~ Monte-Carlo estimate over {self.n_draws} random orders (± standard "
                "error); every other value is exact</p>") if has_se.any() else ""
        return (f"<table><thead><tr><th>metric</th>{head}</tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>{note}")

    def stderr_dict(self) -> dict[str, dict[str, float]]:
        """``{ranking_type: {metric_key: standard error}}`` of the Monte-Carlo estimates
        (empty without ``ties="expected"``)."""
        out: dict[str, dict[str, float]] = {}
        for t, key in self.estimated:
            out.setdefault(t, {})[key] = float(self.stderr[self.ties.index(t),
                                                           self.metrics.index(key)])
        return out

    @property
    def estimated(self) -> list[tuple[str, str]]:
        """The ``(ranking_type, metric_key)`` pairs whose value is a Monte-Carlo estimate."""
        rows, cols = np.nonzero(~np.isnan(self.stderr))
        return [(self.ties[t], self.metrics[k]) for t, k in zip(rows, cols)]

    def __repr__(self):
        return f"Evaluation(ties={self.ties})"

    def __str__(self):
        tables = [self._table()] if self.ties else []
        if self.at_k is not None:
            tables.append(str(self.at_k))
        return "\n\n".join(tables)

    def _table(self):
        width = max(len(k) for k in self.metrics)
        has_se = ~np.isnan(self.stderr)
        cols = [max(10, len(t)) + (12 if has_se[i].any() else 0) for i, t in enumerate(self.ties)]
        lines = [" " * width + "".join(f"  {t:>{w}}" for t, w in zip(self.ties, cols))]
        for k, key in enumerate(self.metrics):
            cells = []
            for t, w in enumerate(cols):
                cell = f"{self.values[t, k]:.6f}"
                if has_se[t, k]:
                    cell = f"~{cell} ±{self.stderr[t, k]:.1e}"
                cells.append(f"  {cell:>{w}}")
            lines.append(f"{key:<{width}}" + "".join(cells))
        if has_se.any():
            lines.append(f"~ Monte-Carlo estimate over {self.n_draws} random orders "
                         "(± standard error); every other value is exact")
        return "\n".join(lines)
