"""The 19 study metrics under several ranking types, one sort per row: the mergeable
:class:`Evaluator` and :func:`evaluate`, which is one ``update`` of it."""
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._arrays import converted
from .._ext import tie_metrics as _kernel
from .._typing import LabelsLike, MatrixLike, RandomStateLike
from .._validation import MAX_COLUMNS, check_option
from ._boundary import BoundaryCounts
from ._common import ALL_TIES, EXPECTED, EXPECTED_TIES, LAB_FIXED, LAB_REL, LAB_ROWS, N_LAB, \
    ORDINAL, TIES, _NO_WEIGHTS, check_inputs, check_sample_weight, column, draw_seed, \
    family, resolve_ties, row_blocks, run_kernel
from ._evaluation import METRIC_KEYS, Evaluation
from ._mergeable import Mergeable, empty_chunk_labels
from ._set_counts import Counts, _check_n_labels, _check_zero_division, _f_from_counts, \
    _ratio, score_fbeta, score_precision, score_recall
from ._topk import TopKEvaluator

_RANKING_KEYS = {"one_error": "one_error", "coverage": "coverage",
                 "ranking_loss": "ranking_loss", "average_precision": "ap_position",
                 "r_precision": "r_precision"}
CUTOFFS = ("perfect",)
MAX_DRAWS = 100_000  # Monte-Carlo orders of weighted rows (state: n_draws x 2 x n_labels)


# Per ranking type, the evaluator keeps these sums over documents (``_DOC_SUMS`` columns):
# the five ranking metrics' per-document values, the per-document Hamming loss and exact
# match, the per-document precision, recall and F1 (document-oriented macro averages), and
# TP_j, |Ĉ_j|, |C_j| (document-oriented micro averages). Per label it keeps the contingency
# counts (category-oriented averages) and, for "expected", the boundary record counts (rows
# of weight 0 or 1) and the per-draw label counts (rows of other weights).
_DOC_SUMS = ("one_error", "coverage", "ranking_loss", "average_precision", "r_precision",
             "hamming_loss", "exact_match", "precision_d", "recall_d", "f1_d", "tp", "npred",
             "nrel")
_HAMMING, _EXACT, _PRECISION_D, _RECALL_D, _F1_D, _TP, _NPRED, _NREL = range(5, 13)


def _check_ties(ties, at_k):
    """The ranking types as a tuple; empty only beside top-k metrics (``at_k``)."""
    if isinstance(ties, str):
        ties = (ties,)
    try:
        ties = tuple(ties)
    except TypeError:
        raise TypeError(f"ties must be a string or a sequence of strings, got "
                        f"{type(ties).__name__}") from None
    ties = tuple(resolve_ties(t) for t in ties)
    if not ties and not at_k:
        raise ValueError(f"ties is empty; choose from {ALL_TIES} (it may be empty only "
                         "with at_k)")
    if len(set(ties)) != len(ties):
        raise ValueError(f"ties has duplicates: {ties}")
    return ties


class Evaluator(Mergeable):
    """Mergeable state of :func:`evaluate`: feed rows in chunks, combine evaluators that saw
    disjoint rows, read the same :class:`Evaluation`.

    The state is a few sums per ranking type and counts per label — per-document sums of
    every ranking metric and of the document-oriented ratios, per-label contingency counts
    for the category-oriented ones (never an average of averages) and, for
    ``ties="expected"``, per label the counts of its cut tie groups by probability d/s of
    being predicted (one entry per distinct (label, d/s) pair, added up however many rows)
    and, only once rows weighing neither 0 nor 1 were seen, the per-label counts of each
    Monte-Carlo draw (O(n_draws * n_labels)): O(n_labels) floats otherwise, independent of
    the number of rows; with ``at_k``, also the sums of a :class:`TopKEvaluator` over the
    same rows (a few hundred floats). It pickles small, so chunks can be evaluated anywhere
    and the states sent back.

    For any split of the rows into chunks, each given its global first row, and any order of
    :meth:`update` and :meth:`merge`, :meth:`result` equals ``evaluate`` on the whole matrix
    with the same parameters, to rounding (the sums are added in another order): the random
    tie-breaking of ``"ordinal"`` and the Monte-Carlo draws of ``"expected"`` (weighted rows)
    are keyed by ``(seed, global row number)``, never by chunk or thread. :func:`evaluate` is one
    ``update`` and ``result``.

    Thread-safe: several threads may call :meth:`update` on one evaluator at once (each with
    its own rows), and :meth:`merge` and :meth:`result` meanwhile. Each update computes its
    chunk's sums without the GIL, in parallel with the others, and adds them to the state
    under a lock; its rows are reserved first, so two concurrent updates of the same rows
    raise ValueError as two sequential ones do, and without ``first_row`` concurrent chunks
    get consecutive rows in the order they reach the lock. ``result`` sees the updates that
    have returned.

    Parameters
    ----------
    ties : str or sequence of {"ordinal", "dense", "standard", "modified", "expected"}
        As for :func:`evaluate` (empty with ``at_k``: the top-k metrics alone).
    n_labels : int, optional
        Number of labels; by default taken from the first chunk (or the propensities of
        ``at_k``). Every chunk must have it.
    random_state : None, int or numpy.random.Generator, default 0
        Drawn once, here, into the seed of every random order; evaluators can only be merged
        when they share it. With None or a Generator each evaluator draws its own: make the
        others with :meth:`empty_copy`.
    n_draws : int from 2 to 100 000, default 100
        As for :func:`evaluate`.
    cutoff : "perfect" or int, default "perfect"
        As for :func:`evaluate`.
    zero_division : float, default 0.0
        As for :func:`evaluate`.
    at_k : int, sequence of int, dict or TopKEvaluator, optional
        As for :func:`evaluate`; kept as the attribute ``at_k``, a TopKEvaluator without
        rows that only configures. The top-k sums are this evaluator's, over its rows:
        ``update``, ``merge`` and ``empty_copy`` carry them, thread-safe alike.

    Raises
    ------
    ValueError
        An unknown, repeated or (without ``at_k``) empty ``ties``, an invalid ``cutoff``,
        ``n_draws``, ``n_labels``, ``zero_division`` or ``at_k``.

    See Also
    --------
    evaluate : the same in one call.
    fastrank.dask.evaluate : the same over a Dask array, one evaluator per chunk.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.metrics import Evaluator, evaluate
    >>> rng = np.random.default_rng(0)
    >>> y_true = rng.integers(0, 2, (100, 6))
    >>> y_score = rng.integers(0, 4, (100, 6)) / 4          # coarse beliefs: many ties
    >>> left = Evaluator(ties=("ordinal", "modified"))
    >>> right = left.empty_copy()
    >>> for lo in (0, 30, 60, 90):                          # chunks, each with its first row
    ...     part = left if lo < 50 else right
    ...     part = part.update(y_true[lo:lo + 30], y_score[lo:lo + 30], first_row=lo)
    >>> whole = evaluate(y_true, y_score, ties=("ordinal", "modified"))
    >>> bool(np.allclose(left.merge(right).result().values, whole.values, rtol=1e-12))
    True
    """

    _CONFIG = ("ties", "seed", "n_draws", "cutoff", "zero_division", "at_k", "_sampled")
    # the sums over rows, None before the first: _doc (len(ties), len(_DOC_SUMS)) document
    # sums, _lab (N_LAB, n_labels) label counts, _boundary the BoundaryCounts and _mc
    # (n_draws, 2, n_labels) per-draw label counts, the latter only once a row was drawn
    # (see run_kernel), _at_k the at-k kernel sums (see TopKEvaluator)
    _SUMS = ("_doc", "_lab", "_boundary", "_mc", "_at_k")
    # draw every row's cut group instead of counting the boundary records: the C API's
    # eval_add_row (fastrank.h), whose values the tests compare with this mode's
    _sampled = False
    ties: tuple[str, ...]
    n_draws: int
    seed: int
    at_k: TopKEvaluator | None
    _families: int
    _doc: Any
    _lab: Any
    _boundary: Any
    _mc: Any
    _at_k: Any

    def __init__(self, ties: str | Sequence[str] = TIES, n_labels: int | None = None,
                 random_state: RandomStateLike = 0, n_draws: int = 100,
                 cutoff: str | int = "perfect", zero_division: float = 0.0,
                 at_k: Any = None) -> None:
        self.at_k = _check_at_k(at_k, random_state, n_labels)
        self.ties = _check_ties(ties, self.at_k is not None)
        self.n_labels = _check_n_labels(n_labels)
        if self.at_k is not None and self.n_labels is None:
            self.n_labels = self.at_k.n_labels  # from its propensities
        self.cutoff = cutoff
        self._top_k = _check_cutoff(cutoff)
        self.zero_division = _check_zero_division(zero_division)
        if isinstance(n_draws, bool) or not isinstance(n_draws, numbers.Integral) \
                or not 2 <= n_draws <= MAX_DRAWS:
            raise ValueError(f"n_draws must be an integer from 2 to {MAX_DRAWS}, got "
                             f"{n_draws!r}")
        self._families = 0
        for t in self.ties:
            self._families |= family(t)
        self.n_draws = int(n_draws) if self._families & EXPECTED else 0
        self.seed = draw_seed(random_state) if self._families & (ORDINAL | EXPECTED) else 0
        self._init_rows()

    def __repr__(self):
        return (f"Evaluator(ties={self.ties}, n_labels={self.n_labels}, "
                f"n_rows={self.n_rows})")

    def update(self, y_true: LabelsLike, y_score: MatrixLike, first_row: int | None = None,
               sample_weight: npt.ArrayLike | None = None) -> "Evaluator":
        """Add a chunk of rows; a chunk with no rows changes nothing.

        Parameters
        ----------
        y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_rows, n_labels)
            The chunk's truth, as for :func:`evaluate`.
        y_score : float array or sparse matrix, (n_rows, n_labels)
            The chunk's beliefs, as for :func:`evaluate` (with empty ``ties``, any input
            of :func:`evaluate_at_k`, top-k pairs included).
        first_row : int, optional
            Global row number of the chunk's first row; default: right after the previous
            non-empty chunk given to this evaluator (0 for the first). The ordinal shuffle
            and the Monte-Carlo draws of row ``first_row + i`` depend only on that number
            and the seed. Rows already seen raise ValueError; row numbers stay below 2**63 - 1.
        sample_weight : array of shape (n_rows,), optional
            The chunk's per-document weights, as for :func:`evaluate` (default: 1 each).

        Returns
        -------
        Evaluator
            This evaluator, updated (so calls chain).

        Raises
        ------
        ValueError
            Invalid input (as for :func:`evaluate`, memory for the labels' counts included),
            a number of labels other than the evaluator's, rows already seen, a negative
            ``first_row`` or one whose rows would pass 2**63 - 1.
        TypeError
            A non-integer ``first_row``, non-numeric input.
        """
        y_true, y_score = converted(y_true, "y_true"), converted(y_score, "y_score")
        given, n, q = (y_true, y_score), 0, None
        if self.ties:
            if isinstance(y_score, tuple):
                raise ValueError("y_score is a top-k pair (indices, scores), but the study "
                                 "metrics need a belief for every label: give ties=() to "
                                 "compute the top-k metrics (at_k) alone")
            q = empty_chunk_labels(y_true, y_score)
            if q is None:
                # the chunk's counts and the state's updated copy are held beside the
                # kernel's; the kernel finds NaN beliefs and non-0/1 truth as it reads them
                # (no pass over the inputs beforehand), then run_kernel checks ``given``
                y_true, y_score = check_inputs(
                    y_true, y_score,
                    self.n_draws if self._sampled or sample_weight is not None else 0, held=2,
                    scan=False)
                n, q = y_true.shape
        at_k = None
        if self.at_k is not None and (n or not self.ties):
            n, q, at_k = self.at_k._read_chunk(*given)
        weight = check_sample_weight(sample_weight, n)
        # rows of weight 0 or 1 are counted exactly; others are drawn n_draws times
        draws = self.n_draws if self._sampled or (
            weight is not None and ((weight != 0) & (weight != 1)).any()) else 0

        def chunk_sums(start):  # without the lock: the kernels release the GIL
            out = {}
            if self.ties:
                out["_doc"] = np.zeros((len(self.ties), len(_DOC_SUMS)))
                out["_lab"] = np.zeros((N_LAB, q))
                if draws:
                    out["_mc"] = np.zeros((draws, 2, q))
                records = []
                for lo, hi in row_blocks(n):
                    doc, lab, mc = run_kernel(
                        y_true, y_score, self._families, self.seed, draws, self._top_k,
                        rows=(lo, hi), first_row=start + lo, sample_weight=weight,
                        records=None if self._sampled else records, given=given)
                    out["_doc"] += self._document_sums(
                        doc, q, None if weight is None else weight[lo:hi])
                    out["_lab"] += lab
                    if draws:
                        out["_mc"] += mc
                if self._families & EXPECTED and not self._sampled:
                    out["_boundary"] = BoundaryCounts.summed(
                        [BoundaryCounts(*r) for r in records])
            if at_k is not None:
                out["_at_k"] = at_k(start, weight)
            return out

        self._add_rows(first_row, n, q, weight, chunk_sums)
        return self

    def _document_sums(self, doc, q, weight):
        """(len(ties), len(_DOC_SUMS)) sums over one block's documents, each document's
        values times its weight when weights are given: summed in parallel by the kernel,
        each sum in numpy's order (the bits of summing the same values with numpy)."""
        cols = np.array([[column(t, _RANKING_KEYS[k]) for k in METRIC_KEYS[:5]]
                         + [column(t, "tp"), column(t, "npred"),
                            column(t, "exact") if t == EXPECTED_TIES else -1]
                         for t in self.ties], dtype=np.int64)
        out = np.empty((len(self.ties), len(_DOC_SUMS)))
        _kernel.document_sums(doc, cols, q, float(self.zero_division),
                              _NO_WEIGHTS if weight is None else weight, out)
        return out

    def merge(self, other: "Evaluator") -> "Evaluator":
        """A new evaluator holding the rows of both (which must be disjoint); neither is
        changed. Associative and commutative (to rounding).

        Parameters
        ----------
        other : Evaluator
            An evaluator with the same configuration and seed (see :meth:`empty_copy`).

        Returns
        -------
        Evaluator

        Raises
        ------
        TypeError
            ``other`` is not an Evaluator.
        ValueError
            The configurations, seeds or numbers of labels differ, or the rows overlap.
        """
        return self._merged(other)

    def result(self) -> Evaluation:
        """The :class:`Evaluation` of every row seen (with ``at_k``: its ``at_k``, the
        :class:`TopKEvaluation` of the same rows).

        Raises
        ------
        ValueError
            No rows were seen, or their total weight is 0.
        """
        state = self._seen()
        n, zd = state._weight, self.zero_division
        values = np.empty((len(self.ties), len(METRIC_KEYS)))
        stderr = np.full(values.shape, np.nan)
        lab = state._lab
        for row, t in enumerate(self.ties):
            d = state._doc[row]
            f = LAB_ROWS[family(t)]
            labels = Counts(None, None, None, lab[f], lab[f + 1], lab[LAB_REL])
            category = [score_precision(labels, "macro", "category", zd),
                        score_precision(labels, "micro", "category", zd),
                        score_recall(labels, "macro", "category", zd),
                        score_recall(labels, "micro", "category", zd),
                        score_fbeta(labels, 1.0, "macro", "category", zd),
                        score_fbeta(labels, 1.0, "micro", "category", zd)]
            document = [d[_PRECISION_D] / n, float(_ratio(d[_TP], d[_NPRED], zd)),
                        d[_RECALL_D] / n, float(_ratio(d[_TP], d[_NREL], zd)),
                        d[_F1_D] / n, float(_f_from_counts(d[_TP], d[_NPRED], d[_NREL], 1.0, zd))]
            values[row] = [*(d[:5] / n), d[_HAMMING] / n, d[_EXACT] / n, *category, *document]
            if t == EXPECTED_TIES:
                for key, (mean, se) in _expected_macro(state, zd).items():
                    k = METRIC_KEYS.index(key)
                    values[row, k] = mean
                    stderr[row, k] = se
        at_k = None if self.at_k is None else self.at_k._evaluation(state._at_k, n)
        return Evaluation(self.ties, values, stderr, 0 if state._mc is None else self.n_draws,
                          at_k)


def evaluate(y_true: LabelsLike, y_score: MatrixLike, ties: str | Sequence[str] = TIES,
             cutoff: str | int = "perfect", random_state: RandomStateLike = 0,
             zero_division: float = 0.0, n_draws: int = 100,
             sample_weight: npt.ArrayLike | None = None, at_k: Any = None) -> Evaluation:
    """All 19 study metrics under each ranking type in ``ties``, one sort per row.

    Each row of ``y_score`` is sorted once; the dense, standard and modified values come
    from one walk over its tie groups, the expected values from a second walk, the ordinal
    values from one walk after shuffling inside the groups. Every value equals what the
    individual function returns for the same input and ``random_state`` (e.g.
    ``coverage(y_true, y_score, ties=t, random_state=rs)`` and, for the set metrics,
    ``precision(y_true, cutoff(y_score, y_true, ties=t, random_state=rs), ...)``);
    ``average_precision`` is the thesis form (``per="position"``). This is one
    :meth:`Evaluator.update` and :meth:`Evaluator.result`: use an :class:`Evaluator` to
    evaluate a matrix in chunks, out of core or on several machines.

    ``ties="expected"`` gives the exact expectation, over uniformly random orders inside
    every tie group, of the value ``"ordinal"`` would give: no sampling, so no need to
    average several random orderings. ``precision_macro_c`` and ``f1_macro_c`` (per-label
    ratios whose denominators are random) are exact sums over each label's
    Poisson-binomial counts of predicted tied labels, except for documents weighing
    neither 0 nor 1: their random orders are drawn ``n_draws`` times, giving an unbiased
    Monte-Carlo estimate with its standard error in ``result.stderr``, marked in
    ``str(result)`` (see the guide, "Expected values").

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
    y_score : float array or sparse matrix, (n_documents, n_labels)
    ties : str or sequence of {"ordinal", "dense", "standard", "modified", "expected"}
        Default: the four ranking types of the thesis.
    cutoff : "perfect" or int, default "perfect"
        Predicted sets of the set-based metrics: the thesis' perfect cutoff, or an int
        k >= 1 for the top-k policy (the first k labels, whole tie groups except under
        ordinal; see :func:`cutoff`; a k beyond the number of labels takes them all).
        ``r_precision`` always uses the first ``|C_j|`` positions.
    random_state : None, int or numpy.random.Generator, default 0
        Seeds the ordinal shuffle and the Monte-Carlo draws of weighted rows (one seed for
        the whole call; row ``j`` draws from ``(seed, j)``).
    zero_division : float, default 0.0
        Value of a 0/0 ratio in the set-based metrics (see :func:`precision`).
    n_draws : int from 2 to 100 000, default 100
        Random orders drawn, under ``ties="expected"``, for the macro precision and F1 by
        category of documents whose weight is neither 0 nor 1; without such weights it
        changes nothing.
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0; default 1 each). Every per-document value is
        averaged with these weights, and the per-label contingency counts of the
        category-oriented metrics add each document's weight instead of 1 — as
        scikit-learn's weighted metrics do. A document's random order ("ordinal", and the
        one "expected" averages over) is one order counted with its weight: an integer
        weight equals repeating the row for every exact value, but not draw for draw
        under "ordinal", nor for macro precision and F1 by category under "expected"
        (see the guide's conventions).
    at_k : int, sequence of int, dict or TopKEvaluator, optional
        Also the top-k metrics of extreme multi-label classification, in ``result.at_k``:
        equal to :func:`evaluate_at_k` of the same input, weights and ``random_state``. The
        cut-offs k (then ``ties="expected"``), a dict of :class:`TopKEvaluator` arguments
        (e.g. ``dict(k=(1, 3, 5), ties=("expected", "optimistic"), propensity=p)``) or a
        TopKEvaluator without rows. They read a sparse ``y_score`` as
        :func:`evaluate_at_k` does: its unscored labels are one group below every scored
        one. With ``ties=()`` only these are computed.

    Returns
    -------
    Evaluation
        ``{ranking_type: {metric_key: value}}`` with the values also as arrays; the keys are
        :data:`METRIC_KEYS`; ``result.at_k`` the :class:`TopKEvaluation` (None without
        ``at_k``).

    Raises
    ------
    ValueError
        Shapes that differ, NaN beliefs, non-binary truth, an unknown, empty or repeated
        ``ties``, an invalid ``cutoff``, ``n_draws`` or ``zero_division``, invalid weights;
        more labels than the process has memory for (the per-label counts of the
        category-oriented averages; see the guide, "Declared shapes").
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, ch. 4-5.
    .. [2] F. McSherry and M. Najork, "Computing information retrieval performance measures
       efficiently in the presence of tied scores", ECIR 2008.

    Examples
    --------
    >>> from fastrank.metrics import evaluate
    >>> y_true = [[1, 0, 1, 0], [0, 1, 0, 0]]
    >>> y_score = [[.5, .2, .2, .1], [.3, .3, .1, 0.]]
    >>> result = evaluate(y_true, y_score, ties=("ordinal", "dense", "modified"))
    >>> round(result["modified"]["ranking_loss"], 4)   # (1/4 + 1/3) / 2: tied pairs are errors
    0.2917
    >>> print(str(result).splitlines()[0])
                             ordinal       dense    modified
    >>> print(str(result).splitlines()[2])
    coverage                0.500000    0.500000    1.500000
    """
    ev = Evaluator(ties, random_state=random_state, n_draws=n_draws, cutoff=cutoff,
                   zero_division=zero_division, at_k=at_k)
    return ev.update(y_true, y_score, sample_weight=sample_weight).result()


def _check_at_k(at_k, random_state, n_labels):
    """The top-k evaluator of ``at_k`` (None, cut-offs k, a dict of
    :class:`TopKEvaluator` arguments or a TopKEvaluator without rows), with no rows;
    ``random_state`` and ``n_labels`` are the evaluator's, the defaults of the first two."""
    if at_k is None:
        return None
    if isinstance(at_k, TopKEvaluator):
        if at_k.n_rows:
            raise ValueError(f"at_k is a TopKEvaluator that has seen {at_k.n_rows} rows; give "
                             "one without rows (its empty_copy()): it only configures")
        if None not in (n_labels, at_k.n_labels) and n_labels != at_k.n_labels:
            raise ValueError(f"at_k has {at_k.n_labels} labels, n_labels={n_labels}")
        return at_k.empty_copy()
    if isinstance(at_k, Mapping):
        return TopKEvaluator(**{"random_state": random_state, "n_labels": n_labels, **at_k})
    return TopKEvaluator(at_k, random_state=random_state, n_labels=n_labels)


def _check_cutoff(cutoff):
    """None for the perfect cutoff, else the top-k count (k >= 1; a k beyond the number of
    labels takes them all)."""
    if isinstance(cutoff, str):
        check_option("cutoff", cutoff, CUTOFFS)
        return None
    if isinstance(cutoff, numbers.Integral) and not isinstance(cutoff, bool) and cutoff >= 1:
        return int(min(cutoff, MAX_COLUMNS))  # no more labels than that exist
    raise ValueError(f'cutoff must be "perfect" or an integer top_k >= 1, got {cutoff!r}')


def _expected_macro(state, zd):
    """Value and standard error (NaN: exact) of macro precision^c and macro F1^c under
    ``ties="expected"``: per label, the whole-group counts plus the boundary records, whose
    expectation is exact; with Monte-Carlo draws (rows weighing neither 0 nor 1), the mean
    over the draws of that exact expectation given each draw's counts, and its standard
    error (0 when no draw differs)."""
    lab, mc = state._lab, state._mc
    boundary = state._boundary
    if boundary is None:  # every cut group drawn (or none seen)
        boundary = BoundaryCounts.counting(lab.shape[1], np.zeros((5, 0), dtype=np.int64))
    tp, pred = lab[LAB_FIXED][None], lab[LAB_FIXED + 1][None]
    if mc is not None:
        tp, pred = tp + mc[:, 0], pred + mc[:, 1]
    precision, f1 = boundary.expectations(tp, pred, lab[LAB_REL], zd)
    out = {}
    for key, per_set in (("precision_macro_c", precision.mean(axis=1)),
                         ("f1_macro_c", f1.mean(axis=1))):
        if mc is None:
            out[key] = (float(per_set[0]), np.nan)
        elif np.ptp(per_set) == 0:  # no draw differs (none touched a cut group): the value
            out[key] = (float(per_set[0]), 0.0)
        else:
            se = per_set.std(ddof=1) / np.sqrt(len(per_set))
            out[key] = (float(per_set.mean()), float(se))
    return out
