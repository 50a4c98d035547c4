"""Ranking-based metrics under the four ranking types (melotti2009 §4.1) and the
cutoff policies that turn a ranking into predicted sets (melotti2009 §4.2).

``ties`` (default ``"modified"``, the thesis' recommendation) picks the ranking type:

* ``"expected"`` -- the exact expectation of the ``"ordinal"`` value over uniformly random
  orders inside every tie group (closed forms, no sampling; McSherry & Najork 2008 for
  average precision): one-error ``1 - a/s`` of the top group (``a`` of its ``s`` labels
  relevant); coverage ``B + a(s+1)/(a+1) - 1`` for the last group holding a relevant label
  (``B`` labels above it); ranking loss with a tied pair counting 1/2; average precision
  and r-precision from the hypergeometric law of the relevant labels in a group;

* ``"ordinal"`` -- distinct positions, each tie group in uniformly random order seeded by
  ``random_state`` (the draw equals ``fastrank.rank(y_score, "ordinal", random_state)``);
* ``"dense"`` / ``"standard"`` / ``"modified"`` -- a tie group shares one rank (its group
  number / first position / last position). These three only differ in *coverage*: every
  other metric reads whole tie groups, which they place identically.

Conventions for documents where a metric is undefined follow scikit-learn: no relevant
label gives coverage 0, ranking loss 0 and average precision 1; all labels relevant gives
ranking loss 0. Scores compare exactly: equal floats are tied. A *belief of 0* means a score
exactly equal to 0 (in a CSR matrix, every implicit entry).

One-error, coverage, ranking loss and both average precisions under dense, standard,
modified and expected count, per relevant belief, the labels above and tied with it instead
of sorting each row; r-precision selects the ``|C_j|``-th largest belief and counts the
labels above and tied with it. They form the same floating-point values as
:func:`evaluate` (the same bits); so do the values under ordinal, each from the seeded
shuffles of the tie groups it reads alone: one-error, coverage and r-precision one group
(the top one, the lowest relevant one, the one at position ``|C_j|``), ranking loss and
average precision each group holding a relevant label, whose relevant labels' places are
followed through the shuffle's steps. A CSR ``y_score`` whose indices are int64 is counted
with int32 copies of its two index arrays (the sorting kernel, without copies, past 2**31
stored values).
"""
import numbers
from typing import Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._ext import tie_counts as _counts
from .._ext import tie_metrics as _kernel
from .._typing import LabelsLike, MatrixLike, RandomStateLike, Ties
from .._validation import as_real_array, check_memory, check_option, check_scores, \
    check_truth, int32_indexed, sort_scratch_bytes
from ._common import _NO_WEIGHTS, check_inputs, check_sample_weight, column, column_sum, \
    draw_seed, family, raise_flagged, resolve_ties, row_blocks, run_kernel, score_args

AP_PER = ("position", "label")
CUTOFF_POLICIES = ("perfect", "threshold", "top_k")


_PARAMETERS = """
    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
    y_score : float array or sparse matrix, (n_documents, n_labels)
        Beliefs: higher means more relevant. Exact equality makes a tie (-0.0 == 0.0).
    ties : {"ordinal", "dense", "standard", "modified", "expected"} (or "min"/"max"), \
default "modified"
        How tied labels are ranked (see :func:`fastrank.rank`); "expected" is the exact
        mean of "ordinal" over every random order inside the tie groups.
    random_state : None, int or numpy.random.Generator, default 0
        Seeds the random order of "ordinal" (row ``j`` draws from ``(seed, j)``, exactly
        as :func:`fastrank.rank` and :func:`evaluate` draw it); ignored otherwise.
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0, not all 0) of the average; default 1 each.
        Under "ordinal" a document's one random order counts with its weight (an integer
        weight is not w independent orders of copies of the row).

    Returns
    -------
    float
        The mean over documents (weighted by ``sample_weight``).

    Raises
    ------
    ValueError
        Shapes that differ, NaN beliefs, non-binary truth, an unknown ``ties``, or weights
        that are negative, non-finite, of the wrong length or all zero; more labels than
        the process has memory for (see the guide, "Declared shapes").
    TypeError
        Non-numeric beliefs or weights, or ``ties`` not a string.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.1.
    .. [2] F. McSherry and M. Najork, "Computing information retrieval performance measures
       efficiently in the presence of tied scores", ECIR 2008 (the "expected" values).

"""


def _documented(extra=""):
    """Complete a ranking metric's docstring with the parameters every one of them takes
    (and its own ``extra`` ones, numpydoc-formatted, after them)."""
    def decorate(func):
        params = _PARAMETERS.replace("\n\n    Returns", "\n" + extra.rstrip("\n")
                                     + "\n\n    Returns") if extra else _PARAMETERS
        func.__doc__ = func.__doc__.replace("    %(parameters)s\n", params)
        return func
    return decorate


def _mean_value(name, y_true, y_score, ties, random_state, sample_weight):
    ties = resolve_ties(ties)
    counted = (name, ties) in _counts.SERVED
    # the kernels find NaN beliefs and non-0/1 truth as they read them: no pass over the
    # inputs beforehand; what they flag is checked again, for the error message
    given = y_true, y_score
    y_true, y_score = check_inputs(y_true, y_score, scan=False)
    if counted and sp.issparse(y_score):  # the counting kernel reads int32 indices only
        narrow = int32_indexed(y_score)
        counted = narrow is not None  # else the sorting kernel, which reads int64 ones too
        y_score = y_score if narrow is None else narrow
    weight = check_sample_weight(sample_weight, y_true.shape[0], averaged=True)
    seed = draw_seed(random_state) if ties == "ordinal" else 0
    col = 0 if counted else column(ties, name)
    total = 0.0
    for lo, hi in row_blocks(y_true.shape[0]):
        block_weight = _NO_WEIGHTS if weight is None else weight[lo:hi]
        if counted:  # the same values as the sort-based kernel's, without sorting rows
            sound, block_total = _counts.values(
                *score_args(y_score, (lo, hi)), y_true[lo:hi], _counts.METRICS[name],
                _counts.TIES[ties], seed, lo, block_weight, np.empty(hi - lo))
            if not sound:
                raise_flagged(given, "counting")
            total += block_total
        else:
            doc, _, _ = run_kernel(y_true, y_score, family(ties), seed, rows=(lo, hi),
                                   first_row=lo, given=given)
            total += column_sum(doc, col, block_weight)
    return float(total / (y_true.shape[0] if weight is None else weight.sum()))


@_documented()
def one_error(y_true: LabelsLike, y_score: MatrixLike, *, ties: Ties = "modified",
              random_state: RandomStateLike = 0,
              sample_weight: npt.ArrayLike | None = None) -> float:
    """One-error* (melotti2009 eq. 4.2-4.3): share of documents whose top rank is not made
    only of relevant labels. Lower is better.

    Per document: 0 if every label in the top tie group is relevant, else 1 (dense,
    standard and modified all put the whole top group at rank 1). Under ``"ordinal"`` the
    top is one label drawn at random from the top group, i.e. the classical one-error
    (eq. 4.1). A document without relevant labels scores 1 (no relevant label can be on
    top); one with every label relevant scores 0. ``"expected"``: ``1 - a/s`` for a top
    group of ``s`` labels, ``a`` of them relevant.

    %(parameters)s
    Examples
    --------
    >>> from fastrank.metrics import one_error
    >>> one_error([{0, 1}], [[0.5, 0.2, 0.2, 0.1]])   # the top label, c1, is relevant
    0.0
    >>> one_error([{1}], [[0.5, 0.5, 0.2, 0.1]], ties="expected")  # c1/c2 tied on top
    0.5
    """
    return _mean_value("one_error", y_true, y_score, ties, random_state, sample_weight)


@_documented()
def coverage(y_true: LabelsLike, y_score: MatrixLike, *, ties: Ties = "modified",
             random_state: RandomStateLike = 0,
             sample_weight: npt.ArrayLike | None = None) -> float:
    """Coverage (eq. 4.4-4.5): ``max_{c in C_j} r(c) - 1``, averaged over documents.

    How far down the ranking one must go to cover every relevant label; lower is better.
    Under ``"dense"`` it counts tie groups, under ``"standard"`` a tie group counts from its
    first position, under ``"modified"`` from its last, so per document
    ``dense <= standard <= ordinal <= modified``. ``coverage(ties="modified")`` equals
    ``sklearn.metrics.coverage_error - 1`` on documents with at least one relevant label. A
    document without relevant labels scores 0 (scikit-learn's ``coverage_error`` gives it
    0 too, which is -1 on this scale: the two differ by 1/n for each such document); one
    with every label relevant scores the rank of the last label minus 1 (``q - 1`` except
    under dense, and under standard when the last group is tied).

    %(parameters)s
    Examples
    --------
    >>> from fastrank.metrics import coverage
    >>> s = [[0.5, 0.2, 0.2, 0.1]]          # thesis Fig. 2.1: c2 and c3 tied
    >>> [coverage([{0, 1}], s, ties=t) for t in ("dense", "standard", "modified")]
    [1.0, 1.0, 2.0]
    """
    return _mean_value("coverage", y_true, y_score, ties, random_state, sample_weight)


@_documented()
def ranking_loss(y_true: LabelsLike, y_score: MatrixLike, *, ties: Ties = "modified",
                 random_state: RandomStateLike = 0,
                 sample_weight: npt.ArrayLike | None = None) -> float:
    """Ranking loss (eq. 4.6-4.7): share of pairs ``(a, b) in C_j x C̄_j`` with
    ``r(a) >= r(b)``, averaged over documents. Lower is better.

    Under dense/standard/modified a tied pair counts as an error, which is exactly the
    original ``f(a) <= f(b)`` of eq. 4.6 and ``sklearn.metrics.label_ranking_loss``; under
    ``"ordinal"`` a tied pair is an error or not as the random order falls. A document with
    no relevant label or no irrelevant label scores 0.

    %(parameters)s
    Examples
    --------
    >>> from fastrank.metrics import ranking_loss
    >>> ranking_loss([{0, 1}], [[0.5, 0.2, 0.2, 0.1]])  # 1 tied pair (c2, c3) of 4
    0.25
    >>> ranking_loss([{0, 1}], [[0.5, 0.2, 0.2, 0.1]], ties="expected")
    0.125
    """
    return _mean_value("ranking_loss", y_true, y_score, ties, random_state, sample_weight)


@_documented("""\
    per : {"position", "label"}, default "position"
        The thesis' form (one precision per distinct rank holding a relevant label) or the
        classical one (one per relevant label).
""")
def average_precision(y_true: LabelsLike, y_score: MatrixLike, *,
                      per: Literal["position", "label"] = "position", ties: Ties = "modified",
                      random_state: RandomStateLike = 0,
                      sample_weight: npt.ArrayLike | None = None) -> float:
    """Average precision, averaged over documents. Higher is better.

    ``per="position"`` -- the thesis' average precision* (eq. 4.9-4.10): for each distinct
    rank ``p_k`` holding at least one relevant label, ``P_k = |S_k ∩ C_j| / |S_k|`` with
    ``S_k`` every label ranked at or above ``p_k`` (whole tie groups except under ordinal);
    the score is the mean of the ``m`` values. A relevant label of belief exactly 0 gives
    precision 0 at its position (thesis rule, after Manning 2008).

    ``per="label"`` -- the classical form (eq. 4.8): the mean over the ``|C_j|`` relevant
    labels of the precision of the labels ranked at or above each, with no zero-belief
    rule. With ``ties="modified"`` it equals
    ``sklearn.metrics.label_ranking_average_precision_score``.

    Without ties both forms coincide. A document without relevant labels scores 1 (the
    scikit-learn convention); with every label relevant ``per="label"`` scores 1 and
    ``per="position"`` too, unless some labels have belief 0 (they add precision 0).

    %(parameters)s
    Examples
    --------
    >>> from fastrank.metrics import average_precision
    >>> round(average_precision([{0, 1}], [[0.5, 0.2, 0.2, 0.1]]), 4)   # (1 + 2/3) / 2
    0.8333
    """
    check_option("per", per, AP_PER)
    return _mean_value("ap_" + per, y_true, y_score, ties, random_state, sample_weight)


@_documented()
def r_precision(y_true: LabelsLike, y_score: MatrixLike, *, ties: Ties = "modified",
                random_state: RandomStateLike = 0,
                sample_weight: npt.ArrayLike | None = None) -> float:
    """R-precision (eq. 4.11-4.12): precision of the top ``|C_j|`` of the ranking.

    Walking down the ranks, whole tie groups are taken (one label at a time under
    ``"ordinal"``) until at least ``|C_j|`` labels are in ``Ŝ``; labels of belief 0 are then
    dropped; the score is ``|Ŝ ∩ C_j| / |Ŝ|``, and 0 when ``Ŝ`` is empty (in particular for a
    document without relevant labels, or whose top ``|C_j|`` labels all have belief 0).
    With every label relevant it is 1 (unless every belief is 0). ``Ŝ`` is the
    perfect-cutoff prediction of :func:`cutoff`. Higher is better.

    %(parameters)s
    Examples
    --------
    >>> from fastrank.metrics import r_precision
    >>> round(r_precision([{0, 1}], [[0.5, 0.2, 0.2, 0.1]]), 4)  # Ŝ = {c1, c2, c3}
    0.6667
    """
    return _mean_value("r_precision", y_true, y_score, ties, random_state, sample_weight)


def cutoff(y_score: MatrixLike, y_true: LabelsLike | None = None,
           policy: Literal["perfect", "threshold", "top_k"] | None = None, *,
           threshold: npt.ArrayLike | None = None, top_k: int | None = None,
           ties: Ties = "modified", random_state: RandomStateLike = 0) -> np.ndarray:
    """Turn beliefs into predicted label sets: a 0/1 prediction matrix.

    Parameters
    ----------
    y_score : float array or sparse matrix, (n_documents, n_labels)
        Beliefs: higher means more relevant.
    y_true : 0/1 array (dense or sparse) or list of label-index sets, optional
        The truth; only the ``"perfect"`` policy uses it (for ``|C_j|``).
    policy : {"perfect", "threshold", "top_k"} or None
        None picks "threshold" when ``threshold`` is given, "top_k" when ``top_k`` is, else
        "perfect". Each policy takes only its own input (``y_true``, ``threshold`` or
        ``top_k``): giving both ``threshold`` and ``top_k``, or an input another policy
        uses, raises ``ValueError`` rather than silently ignoring it.

        * ``"perfect"`` (thesis §4.2; needs ``y_true``): the r-precision set ``Ŝ``: whole tie
          groups (one label at a time under ordinal) until at least ``|C_j|`` labels are
          taken, then labels of belief 0 dropped. Under dense/standard/modified it may
          exceed ``|C_j|`` at a tie boundary; under ordinal it takes exactly ``|C_j|``
          labels less those of belief 0.
        * ``"threshold"``: ``f >= threshold`` (a scalar or one value per label); ties are
          irrelevant.
        * ``"top_k"``: the first ``top_k`` labels (an integer >= 0), extended to the whole
          tie group at the boundary except under ordinal (labels of belief 0 are kept).
    threshold : float or array of shape (n_labels,), optional
        The ``"threshold"`` policy's ``τ``.
    top_k : int, optional
        The ``"top_k"`` policy's number of positions.
    ties : {"ordinal", "dense", "standard", "modified"} (or "min"/"max"), default "modified"
        How tie groups are ranked (see :func:`fastrank.rank`); dense, standard and modified
        give the same sets.
    random_state : None, int or numpy.random.Generator, default 0
        Seeds "ordinal": the same seed gives the same order as :func:`evaluate` and the
        ranking metrics.

    Returns
    -------
    ndarray of uint8, shape (n_documents, n_labels)
        1 where the label is predicted.

    Raises
    ------
    ValueError
        An unknown ``policy`` or ``ties`` (``"expected"`` has no 0/1 form), a missing input
        of the policy or a stray input of another one, a negative ``top_k``, a threshold of
        the wrong shape or holding NaN, shapes that differ; a prediction (dense, also for
        sparse beliefs) larger than the memory this process can allocate, before any of it
        is allocated.
    TypeError
        A non-integer ``top_k``, non-numeric beliefs or threshold.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.

    Examples
    --------
    >>> from fastrank.metrics import cutoff
    >>> s = [[0.5, 0.2, 0.2, 0.1]]
    >>> cutoff(s, [{0, 1}])              # perfect: 2 relevant labels, the tie taken whole
    array([[1, 1, 1, 0]], dtype=uint8)
    >>> cutoff(s, [{0, 1}], ties="ordinal", random_state=0)
    array([[1, 0, 1, 0]], dtype=uint8)
    >>> cutoff(s, threshold=0.2)
    array([[1, 1, 1, 0]], dtype=uint8)
    >>> cutoff(s, top_k=1)
    array([[1, 0, 0, 0]], dtype=uint8)
    """
    ties = resolve_ties(ties)
    if ties == "expected":
        raise ValueError('cutoff returns a 0/1 prediction, which has no ties="expected" form; '
                         'evaluate(..., ties="expected") gives the expected set metrics')
    if threshold is not None and top_k is not None:
        raise ValueError("give threshold or top_k, not both: they are different cutoff "
                         "policies")
    if policy is None:
        policy = "threshold" if threshold is not None else "top_k" if top_k is not None \
            else "perfect"
    check_option("policy", policy, CUTOFF_POLICIES)
    given = {"y_true": y_true, "threshold": threshold, "top_k": top_k}
    used = {"perfect": "y_true", "threshold": "threshold", "top_k": "top_k"}[policy]
    stray = [name for name, value in given.items() if value is not None and name != used]
    if stray:
        raise ValueError(f"{' and '.join(stray)} {'is' if len(stray) == 1 else 'are'} not "
                         f"used by policy={policy!r}, which only takes {used}")
    y_score = check_scores(y_score)
    n, q = y_score.shape
    # the prediction is dense (a sparse matrix declares its width), and the other policies
    # sort rows
    check_memory(n * q + (0 if policy == "threshold" else sort_scratch_bytes(n, q)),
                 f"the 0/1 prediction of a {n} x {q} matrix")
    if policy == "threshold":
        return _threshold(y_score, threshold)
    if policy == "perfect":
        if y_true is None:
            raise ValueError('policy="perfect" needs y_true (it takes |C_j| labels per document)')
        k = check_truth(y_true, n_labels=q, against="y_score").sum(axis=1, dtype=np.int64)
        if k.shape[0] != n:
            raise ValueError(f"y_true has {k.shape[0]} documents but y_score has {n}")
    else:
        k = np.full(n, min(_check_top_k(top_k), q), dtype=np.int64)  # k > q: all labels
    seed = draw_seed(random_state) if ties == "ordinal" else 0
    out = np.zeros((n, q), dtype=np.uint8)
    _kernel.cutoff(*score_args(y_score), k, ties == "ordinal", policy == "perfect", seed, out)
    return out


def _check_top_k(top_k):
    if top_k is None:
        raise ValueError('policy="top_k" needs top_k (an integer >= 0)')
    if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral):
        raise TypeError(f"top_k must be an integer, got {type(top_k).__name__} {top_k!r}")
    if top_k < 0:
        raise ValueError(f"top_k must be an integer >= 0, got {top_k!r}")
    return int(top_k)


def _threshold(y_score, threshold):
    if threshold is None:
        raise ValueError('policy="threshold" needs threshold (a scalar or one per label)')
    tau = as_real_array(threshold, "threshold")
    q = y_score.shape[1]
    if tau.ndim > 1 or (tau.ndim == 1 and tau.shape[0] != q):
        raise ValueError(f"threshold must be a scalar or have one value per label ({q}), "
                         f"got shape {tau.shape}")
    if np.isnan(tau).any():
        raise ValueError("threshold contains NaN")
    if sp.issparse(y_score):
        if np.all(tau > 0):  # implicit zeros never pass: compare the stored values only
            tau_of = np.broadcast_to(tau, (q,))[y_score.indices]
            hit = sp.csr_matrix((y_score.data >= tau_of, y_score.indices, y_score.indptr),
                                shape=y_score.shape)
            return hit.toarray().astype(np.uint8)
        y_score = y_score.toarray()
    return (y_score >= tau).astype(np.uint8)
