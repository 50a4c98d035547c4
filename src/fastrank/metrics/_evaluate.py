"""``evaluate``: the 19 study metrics (SPEC §4) under several ranking types, one sort per row."""
import numpy as np

from .._validation import check_option
from ._common import GROUP, N_REL, ORDINAL, TIES, check_inputs, column, draw_seed, family, \
    resolve_ties, run_kernel
from ._set_metrics import Counts, _check_zero_division, score_exact_match, score_fbeta, \
    score_hamming, score_precision, score_recall

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

    ``result["modified"]`` is the dict of one ranking type, ``result.to_dict()`` the nested
    dict ``{ranking_type: {metric_key: value}}``, ``str(result)`` a table.
    """

    def __init__(self, ties, values):
        self.ties = tuple(ties)
        self.metrics = METRIC_KEYS
        self.values = values

    def __getitem__(self, ties):
        if ties not in self.ties:
            raise KeyError(f"ranking type {ties!r} not evaluated; have {self.ties}")
        return dict(zip(self.metrics, self.values[self.ties.index(ties)].tolist()))

    def to_dict(self):
        return {t: self[t] for t in self.ties}

    def __repr__(self):
        return f"Evaluation(ties={self.ties})"

    def __str__(self):
        width = max(len(k) for k in self.metrics)
        cols = [max(10, len(t)) for t in self.ties]
        lines = [" " * width + "".join(f"  {t:>{w}}" for t, w in zip(self.ties, cols))]
        for k, key in enumerate(self.metrics):
            lines.append(f"{key:<{width}}" + "".join(
                f"  {v:>{w}.6f}" for v, w in zip(self.values[:, k], cols)))
        return "\n".join(lines)


def evaluate(y_true, y_score, ties=TIES, cutoff="perfect", random_state=0, zero_division=0.0):
    """All 19 study metrics (SPEC §4) under each ranking type in ``ties``.

    Each row of ``y_score`` is sorted once; the dense, standard and modified values come
    from one walk over its tie groups, the ordinal values from one walk after shuffling
    inside the groups. Every value equals what the individual function returns for the same
    input and ``random_state`` (e.g. ``coverage(y_true, y_score, ties=t, random_state=rs)``
    and, for the set metrics, ``precision(y_true, cutoff(y_score, y_true, ties=t,
    random_state=rs), ...)``); ``average_precision`` is the thesis form (``per="position"``).

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
    y_score : float array or sparse matrix, (n_documents, n_labels)
    ties : str or sequence of {"ordinal", "dense", "standard", "modified"}
    cutoff : {"perfect"}
        The set-based metrics use the thesis' perfect cutoff (:func:`cutoff`).
    random_state : None, int or numpy.random.Generator, default 0
        Seeds the ordinal shuffle (one draw shared by all metrics).
    zero_division : float, default 0.0
        Value of a 0/0 ratio in the set-based metrics (see :func:`precision`).

    Returns
    -------
    Evaluation
    """
    if isinstance(ties, str):
        ties = (ties,)
    ties = tuple(resolve_ties(t) for t in ties)
    if not ties:
        raise ValueError(f"ties is empty; choose from {TIES}")
    if len(set(ties)) != len(ties):
        raise ValueError(f"ties has duplicates: {ties}")
    check_option("cutoff", cutoff, CUTOFFS)
    zero_division = _check_zero_division(zero_division)
    y_true, y_score = check_inputs(y_true, y_score)
    families = 0
    for t in ties:
        families |= family(t)
    seed = draw_seed(random_state) if families & ORDINAL else 0
    doc, lab = run_kernel(y_true, y_score, families, seed)
    values = np.empty((len(ties), len(METRIC_KEYS)))
    for row, t in enumerate(ties):
        f = 2 if family(t) == GROUP else 0
        counts = Counts(doc[:, column(t, "tp")], doc[:, column(t, "npred")], doc[:, N_REL],
                        lab[f], lab[f + 1], lab[4])
        values[row] = [np.mean(doc[:, column(t, _RANKING_KEYS[k])]) for k in METRIC_KEYS[:5]] \
            + _set_values(counts, zero_division)
    return Evaluation(ties, values)


def _set_values(c, zd):
    out = [score_hamming(c), score_exact_match(c)]
    for orient in ("category", "document"):
        out += [score_precision(c, "macro", orient, zd), score_precision(c, "micro", orient, zd),
                score_recall(c, "macro", orient, zd), score_recall(c, "micro", orient, zd),
                score_fbeta(c, 1.0, "macro", orient, zd), score_fbeta(c, 1.0, "micro", orient, zd)]
    return out
