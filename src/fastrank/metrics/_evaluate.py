"""``evaluate``: the 19 study metrics (SPEC §4) under several ranking types, one sort per row."""
import numbers

import numpy as np

from .._validation import check_option
from ._common import ALL_TIES, EXPECTED, EXPECTED_TIES, LAB_FIXED, LAB_REL, LAB_ROWS, N_REL, \
    ORDINAL, TIES, check_inputs, column, draw_seed, family, resolve_ties, run_kernel
from ._set_metrics import Counts, _check_zero_division, _f_from_counts, _ratio, \
    score_exact_match, score_fbeta, score_hamming, score_precision, score_recall

METRIC_KEYS = (
    "one_error", "coverage", "ranking_loss", "average_precision", "r_precision",
    "hamming_loss", "exact_match",
    "precision_macro_c", "precision_micro_c", "recall_macro_c", "recall_micro_c",
    "f1_macro_c", "f1_micro_c",
    "precision_macro_d", "precision_micro_d", "recall_macro_d", "recall_micro_d",
    "f1_macro_d", "f1_micro_d",
)
_RANKING_KEYS = {"one_error": "one_error", "coverage": "coverage",
                 "ranking_loss": "ranking_loss", "average_precision": "ap_position",
                 "r_precision": "r_precision"}
# under ties="expected" these have random per-label denominators: Monte-Carlo estimates
ESTIMATED_KEYS = ("precision_macro_c", "f1_macro_c")
CUTOFFS = ("perfect",)


class Evaluation:
    """Metric values per ranking type, as returned by :func:`evaluate`.

    Attributes
    ----------
    ties : tuple of str
        The ranking types, in the order requested.
    metrics : tuple of str
        The metric keys (SPEC §4), in the study's order.
    values : ndarray of float64, shape (len(ties), len(metrics))
        ``values[t, k]`` is metric ``metrics[k]`` under ranking type ``ties[t]``.
    stderr : ndarray of float64, same shape
        Standard error of the values that are Monte-Carlo estimates (``ties="expected"``,
        keys ``ESTIMATED_KEYS``); NaN for every exact value.
    n_draws : int
        Number of random orders behind the estimates (0 when nothing was estimated).

    ``result["modified"]`` is the dict of one ranking type, ``result.to_dict()`` the nested
    dict ``{ranking_type: {metric_key: value}}``, ``result.estimated`` the list of
    ``(ranking_type, metric_key)`` that are estimates, ``result.stderr_dict()`` their
    standard errors, ``str(result)`` a table in which an estimate is marked ``~`` and
    followed by its standard error.
    """

    def __init__(self, ties, values, stderr, n_draws=0):
        self.ties = tuple(ties)
        self.metrics = METRIC_KEYS
        self.values = values
        self.stderr = stderr
        self.n_draws = n_draws

    def __getitem__(self, ties):
        if ties not in self.ties:
            raise KeyError(f"ranking type {ties!r} not evaluated; have {self.ties}")
        return dict(zip(self.metrics, self.values[self.ties.index(ties)].tolist()))

    def to_dict(self):
        return {t: self[t] for t in self.ties}

    def stderr_dict(self):
        """``{ranking_type: {metric_key: standard error}}`` of the Monte-Carlo estimates."""
        out = {}
        for t, key in self.estimated:
            out.setdefault(t, {})[key] = float(self.stderr[self.ties.index(t),
                                                           self.metrics.index(key)])
        return out

    @property
    def estimated(self):
        rows, cols = np.nonzero(~np.isnan(self.stderr))
        return [(self.ties[t], self.metrics[k]) for t, k in zip(rows, cols)]

    def __repr__(self):
        return f"Evaluation(ties={self.ties})"

    def __str__(self):
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


def evaluate(y_true, y_score, ties=TIES, cutoff="perfect", random_state=0, zero_division=0.0,
             n_draws=100):
    """All 19 study metrics (SPEC §4) under each ranking type in ``ties``.

    Each row of ``y_score`` is sorted once; the dense, standard and modified values come
    from one walk over its tie groups, the expected values from a second walk, the ordinal
    values from one walk after shuffling inside the groups. Every value equals what the
    individual function returns for the same input and ``random_state`` (e.g.
    ``coverage(y_true, y_score, ties=t, random_state=rs)`` and, for the set metrics,
    ``precision(y_true, cutoff(y_score, y_true, ties=t, random_state=rs), ...)``);
    ``average_precision`` is the thesis form (``per="position"``).

    ``ties="expected"`` (issue 9) gives the exact expectation, over uniformly random orders
    inside every tie group, of the value ``"ordinal"`` would give: no sampling, so no need
    to average several random orderings. The one exception is ``precision_macro_c`` and
    ``f1_macro_c`` (per-label ratios whose denominators are random): an unbiased
    Monte-Carlo estimate over ``n_draws`` random orders, with its standard error in
    ``result.stderr`` and marked in ``str(result)``.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
    y_score : float array or sparse matrix, (n_documents, n_labels)
    ties : str or sequence of {"ordinal", "dense", "standard", "modified", "expected"}
        Default: the four ranking types of the thesis.
    cutoff : "perfect" or int, default "perfect"
        Predicted sets of the set-based metrics: the thesis' perfect cutoff, or an int k for
        the top-k policy (the first k labels, whole tie groups except under ordinal; see
        :func:`cutoff`). ``r_precision`` always uses the first ``|C_j|`` positions.
    random_state : None, int or numpy.random.Generator, default 0
        Seeds the ordinal shuffle and the Monte-Carlo draws (one seed for the whole call).
    zero_division : float, default 0.0
        Value of a 0/0 ratio in the set-based metrics (see :func:`precision`).
    n_draws : int >= 2, default 100
        Random orders behind the two Monte-Carlo estimates of ``ties="expected"``.

    Returns
    -------
    Evaluation
    """
    if isinstance(ties, str):
        ties = (ties,)
    ties = tuple(resolve_ties(t) for t in ties)
    if not ties:
        raise ValueError(f"ties is empty; choose from {ALL_TIES}")
    if len(set(ties)) != len(ties):
        raise ValueError(f"ties has duplicates: {ties}")
    top_k = _check_cutoff(cutoff)
    zero_division = _check_zero_division(zero_division)
    if not isinstance(n_draws, numbers.Integral) or n_draws < 2:
        raise ValueError(f"n_draws must be an integer >= 2, got {n_draws!r}")
    y_true, y_score = check_inputs(y_true, y_score)
    families = 0
    for t in ties:
        families |= family(t)
    seed = draw_seed(random_state) if families & (ORDINAL | EXPECTED) else 0
    doc, lab, mc = run_kernel(y_true, y_score, families, seed, n_draws, top_k)
    values = np.empty((len(ties), len(METRIC_KEYS)))
    stderr = np.full(values.shape, np.nan)
    for row, t in enumerate(ties):
        f = LAB_ROWS[family(t)]
        counts = Counts(doc[:, column(t, "tp")], doc[:, column(t, "npred")], doc[:, N_REL],
                        lab[f], lab[f + 1], lab[LAB_REL],
                        doc[:, column(t, "exact")] if t == EXPECTED_TIES else None)
        values[row] = [np.mean(doc[:, column(t, _RANKING_KEYS[k])]) for k in METRIC_KEYS[:5]] \
            + _set_values(counts, zero_division)
        if t == EXPECTED_TIES:
            for key, (mean, se) in _monte_carlo(lab, mc, zero_division).items():
                k = METRIC_KEYS.index(key)
                values[row, k] = mean
                stderr[row, k] = se
    return Evaluation(ties, values, stderr, n_draws if EXPECTED_TIES in ties else 0)


def _check_cutoff(cutoff):
    """None for the perfect cutoff, else the top-k count."""
    if isinstance(cutoff, str):
        check_option("cutoff", cutoff, CUTOFFS)
        return None
    if isinstance(cutoff, numbers.Integral) and not isinstance(cutoff, bool) and cutoff >= 0:
        return int(cutoff)
    raise ValueError(f'cutoff must be "perfect" or an integer top_k >= 0, got {cutoff!r}')


def _set_values(c, zd):
    out = [score_hamming(c), score_exact_match(c)]
    for orient in ("category", "document"):
        out += [score_precision(c, "macro", orient, zd), score_precision(c, "micro", orient, zd),
                score_recall(c, "macro", orient, zd), score_recall(c, "micro", orient, zd),
                score_fbeta(c, 1.0, "macro", orient, zd), score_fbeta(c, 1.0, "micro", orient, zd)]
    return out


def _monte_carlo(lab, mc, zd):
    """Mean and standard error over the draws of macro precision^c and macro F1^c: each
    draw's label counts are the shared whole-group counts plus that draw's cut groups."""
    tp = lab[LAB_FIXED] + mc[:, 0]
    pred = lab[LAB_FIXED + 1] + mc[:, 1]
    per_draw = {"precision_macro_c": _ratio(tp, pred, zd).mean(axis=1),
                "f1_macro_c": _f_from_counts(tp, pred, lab[LAB_REL], 1.0, zd).mean(axis=1)}
    n = mc.shape[0]
    # identical draws (no cut group is random) give the exact value with standard error 0
    return {k: (float(v.mean()), float(v.std(ddof=1) / np.sqrt(n)) if np.ptp(v) > 0 else 0.0)
            for k, v in per_draw.items()}
