"""ROC analysis of rankings with ties (matsubara2008 ch. 4).

Examples are ordered by decreasing score. Walking down the ranking from (0, 0), a positive
moves the curve up by 1/Pos, a negative right by 1/Neg, and a *tie block* with n+ positives
and n- negatives is one diagonal segment to (x + n-/Neg, y + n+/Pos) (matsubara2008 Tables
4.3/4.4). So there is one ROC point per distinct score, and the area under the curve counts
a tied positive/negative pair as 1/2: AUC is the Wilcoxon-Mann-Whitney statistic
``P(s+ > s-) + P(s+ = s-) / 2``. In *coverage space* the steps are 1 instead of 1/Pos and
1/Neg (counts of negatives and positives, :func:`coverage_curve`).

Scores are compared with exact floating equality (-0.0 == 0.0); NaN is an error, ±inf are
ordinary values. The kernels are in ``fastrank._ext.roc``: one sort per column/row, columns
or rows in parallel (OpenMP), sparse (CSR/CSC) beliefs without densifying.

``sample_weight`` (optional, one finite weight >= 0 per document) replaces counts by weight
sums: a document moves the curve by its weight, a positive/negative pair counts the product
of their weights, and a document of weight 0 is as if absent (as in scikit-learn).
"""
from typing import Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._arrays import as_numpy
from .._ext import roc as _kernel
from .._typing import LabelsLike, MatrixLike
from .._validation import NO_INDEX, check_memory, check_option, check_same_shape, check_scores, \
    check_truth, sort_scratch_bytes
from ._common import check_sample_weight

#: The ``average`` options of :func:`auc`.
AUC_AVERAGES = (None, "macro", "micro", "samples")
_INT32_MAX = np.iinfo(np.int32).max
_NO_WEIGHTS = np.empty(0)


def _check_binary(y_true, y_score, sample_weight=None, averaged=False):
    """1-D truth (uint8), scores (float32/float64, contiguous) and weights (None or float64,
    not all 0 when ``averaged``) of one binary problem."""
    y_true = as_numpy(y_true, "y_true")
    y_score_arr = as_numpy(y_score, "y_score")
    if y_true.ndim != 1 or y_score_arr.ndim != 1:
        raise ValueError(f"y_true and y_score must be 1-D here, got {y_true.ndim}-D and "
                         f"{y_score_arr.ndim}-D")
    if y_true.shape != y_score_arr.shape:
        raise ValueError(f"y_true has {y_true.size} values but y_score has {y_score_arr.size}")
    truth = check_truth(y_true.reshape(-1, 1)).ravel()
    scores = check_scores(y_score_arr.reshape(-1, 1), allow_sparse=False).ravel()
    return truth, np.ascontiguousarray(scores), check_sample_weight(sample_weight, truth.size,
                                                                    averaged)


def coverage_curve(y_true: npt.ArrayLike, y_score: npt.ArrayLike,
                   sample_weight: npt.ArrayLike | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC points in coverage space (counts of negatives and positives) of a binary problem.

    Parameters
    ----------
    y_true : array-like of 0/1, shape (n,)
        The classes (1 positive).
    y_score : array-like of float, shape (n,)
        Higher = more likely positive.
    sample_weight : array-like of float, shape (n,), optional
        Per-example weights (finite, >= 0); examples of weight 0 are left out.

    Returns
    -------
    fp, tp : ndarray of int64 (float64 weight sums with sample_weight), shape (n_distinct + 1,)
        Negatives and positives scoring ``>= thresholds[k]``; the first point is (0, 0).
    thresholds : ndarray of float64, shape (n_distinct + 1,)
        ``+inf`` for the first point, then every distinct score in decreasing order
        (one point per tie block: tied examples move together, diagonally).

    Raises
    ------
    ValueError
        Input not 1-D, of different lengths, non-binary truth, NaN scores, bad weights.

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, ch. 4.

    Examples
    --------
    >>> from fastrank.metrics import coverage_curve
    >>> y_true = [1, 1, 0, 1, 0, 0]
    >>> y_score = [.9, .7, .7, .5, .5, .1]   # two tie blocks of one positive, one negative
    >>> fp, tp, thresholds = coverage_curve(y_true, y_score)
    >>> print(fp, tp, thresholds)
    [0 0 1 2 3] [0 1 2 3 3] [inf 0.9 0.7 0.5 0.1]
    """
    truth, scores, weights = _check_binary(y_true, y_score, sample_weight)
    if weights is not None and not weights.all():
        kept = weights > 0
        truth, scores, weights = truth[kept], scores[kept], weights[kept]
    m = scores.size
    count = np.int64 if weights is None else np.float64
    thresholds = np.empty(m + 1)
    tp = np.empty(m + 1, dtype=count)
    fp = np.empty(m + 1, dtype=count)
    thresholds[0], tp[0], fp[0] = np.inf, 0, 0
    g = _kernel.coverage_points(scores, truth, thresholds[1:], tp[1:], fp[1:], weights) \
        if m else 0  # every weight 0: the curve is the point (0, 0)
    return fp[:g + 1], tp[:g + 1], thresholds[:g + 1]


def _rates(fp, tp):
    pos, neg = tp[-1], fp[-1]
    if pos == 0 or neg == 0:
        raise ValueError(f"ROC rates need both classes in y_true (with positive weight); got "
                         f"{pos} positives and {neg} negatives (coverage_curve gives the "
                         "counts)")
    return fp / neg, tp / pos


def roc_curve(y_true: npt.ArrayLike, y_score: npt.ArrayLike,
              sample_weight: npt.ArrayLike | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC curve of a binary problem, one point per distinct score.

    :func:`coverage_curve` divided by the number (with ``sample_weight``, the weight) of
    negatives and positives. A tie block is one diagonal segment between consecutive points.
    Equals ``sklearn.metrics.roc_curve(y_true, y_score, sample_weight=sample_weight,
    drop_intermediate=False)``; scikit-learn's
    default ``drop_intermediate=True`` additionally drops collinear points (same curve and
    area, fewer points).

    Parameters
    ----------
    y_true : array-like of 0/1, shape (n,)
        The classes (1 positive).
    y_score : array-like of float, shape (n,)
        Higher = more likely positive.
    sample_weight : array-like of float, shape (n,), optional
        Per-example weights (finite, >= 0); examples of weight 0 are left out.

    Returns
    -------
    fpr, tpr : ndarray of float64, shape (n_distinct + 1,)
        False and true positive rates, from (0, 0) to (1, 1).
    thresholds : ndarray of float64, shape (n_distinct + 1,)
        As for :func:`coverage_curve`.

    Raises
    ------
    ValueError
        ``y_true`` has one class only, or invalid input (see :func:`coverage_curve`).

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, ch. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.metrics import roc_curve
    >>> y_true = [1, 1, 0, 1, 0, 0]
    >>> y_score = [.9, .7, .7, .5, .5, .1]   # two tie blocks of one positive, one negative
    >>> fpr, tpr, _ = roc_curve(y_true, y_score)
    >>> print(np.round(fpr, 3), np.round(tpr, 3))
    [0.    0.    0.333 0.667 1.   ] [0.    0.333 0.667 1.    1.   ]
    """
    fp, tp, thresholds = coverage_curve(y_true, y_score, sample_weight)
    fpr, tpr = _rates(fp, tp)
    return fpr, tpr, thresholds


def roc_convex_hull(y_true: npt.ArrayLike, y_score: npt.ArrayLike,
                    sample_weight: npt.ArrayLike | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC convex hull (ROCCH) of a binary problem (Matsubara 2008 §4.1.6, §5.2).

    The points of :func:`roc_curve` on the upper convex hull, from (0, 0) to (1, 1),
    collinear points dropped; computed on exact integer counts (on weight sums with
    ``sample_weight``). The slopes of its segments
    in coverage space are the probabilities isotonic regression (PAV) assigns
    (:class:`fastrank.calibration.Isotonic`).

    Parameters
    ----------
    y_true : array-like of 0/1, shape (n,)
        The classes (1 positive).
    y_score : array-like of float, shape (n,)
        Higher = more likely positive.
    sample_weight : array-like of float, shape (n,), optional
        Per-example weights (finite, >= 0); examples of weight 0 are left out.

    Returns
    -------
    fpr, tpr, thresholds : ndarray of float64
        The hull's vertices, as in :func:`roc_curve`.

    Raises
    ------
    ValueError
        ``y_true`` has one class only, or invalid input (see :func:`coverage_curve`).

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, ch. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank.metrics import roc_convex_hull
    >>> y_true = [1, 1, 0, 1, 0, 0]
    >>> y_score = [.9, .7, .7, .5, .5, .1]   # two tie blocks of one positive, one negative
    >>> fpr, tpr, thresholds = roc_convex_hull(y_true, y_score)
    >>> print(np.round(fpr, 3), np.round(tpr, 3), thresholds)
    [0.    0.    0.667 1.   ] [0.    0.333 1.    1.   ] [inf 0.9 0.5 0.1]
    """
    fp, tp, thresholds = coverage_curve(y_true, y_score, sample_weight)
    keep = np.empty(fp.size, dtype=np.int64)
    k = _kernel.upper_hull(fp, tp, keep)
    keep = keep[:k]
    fpr, tpr = _rates(fp[keep], tp[keep])
    return fpr, tpr, thresholds[keep]


def _lines_auc(truth, scores, by, weights):
    """AUC of every column (by="label"), row (by="sample") or of the flattened matrix
    (by="micro") of a validated (n, q) problem; ``weights`` (None or one per document) weight
    the elements of a column or of the flattened matrix (rows are weighted by the caller)."""
    n, q = scores.shape
    if by == "micro" and n * q > _INT32_MAX:
        raise ValueError(f"micro AUC over {n * q} entries exceeds the 2**31 - 1 supported")
    lines, length = {"label": (q, n), "sample": (n, q), "micro": (1, n * q)}[by]
    check_memory(sort_scratch_bytes(lines, length),
                 f"sorting the AUC's {lines} x {length} entries")
    if weights is None or by == "sample":
        elem_weights = _NO_WEIGHTS
    elif by == "label":
        elem_weights = weights
    elif sp.issparse(scores) or scores.flags.c_contiguous:  # entry i * q + j
        elem_weights = np.repeat(weights, q)
    else:  # Fortran order: entry j * n + i
        elem_weights = np.tile(weights, q)
    if sp.issparse(scores):
        if by == "label":
            csc = scores.tocsc()
            csc.sort_indices()
            data, indices, indptr, length = csc.data, csc.indices, csc.indptr, n
            t_line, t_elem = 1, q
        elif by == "sample":
            data, indices, indptr, length = scores.data, scores.indices, scores.indptr, q
            t_line, t_elem = q, 1
        else:
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(scores.indptr))
            data = scores.data
            indices = rows * q + scores.indices
            indptr = np.array([0, data.size], dtype=np.int64)
            length, t_line, t_elem = n * q, 0, 1
        out = np.empty(indptr.size - 1)
        _kernel.auc_lines(data, 0, 0, indices, indptr.astype(indices.dtype, copy=False),
                          out.size, length, truth.ravel(), t_line, t_elem, elem_weights, out)
        return out
    c_order = scores.flags.c_contiguous
    flat = scores.ravel(order="K")
    if by == "label":
        lines, length = q, n
        line_stride, elem_stride = (1, q) if c_order else (n, 1)
        t_line, t_elem = 1, q
    elif by == "sample":
        lines, length = n, q
        line_stride, elem_stride = (q, 1) if c_order else (1, n)
        t_line, t_elem = q, 1
    else:
        lines, length, line_stride, elem_stride, t_line, t_elem = 1, n * q, 0, 1, 0, 1
        truth = truth if c_order else np.asfortranarray(truth)
    out = np.empty(lines)
    _kernel.auc_lines(flat, line_stride, elem_stride, NO_INDEX, NO_INDEX, lines, length,
                      truth.ravel(order="K"), t_line, t_elem, elem_weights, out)
    return out


def auc(y_true: LabelsLike, y_score: MatrixLike,
        average: Literal["macro", "micro", "samples"] | None = "macro",
        sample_weight: npt.ArrayLike | None = None) -> float | np.ndarray:
    r"""Area under the ROC curve with tied pairs counted 1/2 (Wilcoxon-Mann-Whitney).

    :math:`\mathrm{AUC} = (\#\{s^+ > s^-\} + \#\{s^+ = s^-\} / 2) / (Pos \cdot Neg)` over
    positive/negative pairs
    (matsubara2008 §4.1.7): the area under the curve of :func:`roc_curve`, tie blocks as
    diagonals. Invariant under strictly increasing transforms of the scores.

    Parameters
    ----------
    y_true : 0/1 array (n,) or (n, q), sparse matrix, or list of label-index sets
    y_score : array-like (n,) or (n, q), or scipy.sparse matrix (n, q)
        1-D input is one binary problem (``average`` is ignored). For (n, q) multi-label
        input each label (column) or document (row) is one binary problem; sparse beliefs
        are used as CSR/CSC, their implicit zeros one tie block.
    average : {None, "macro", "micro", "samples"}, default "macro"
        None: one AUC per label, shape (q,). "macro": mean of the per-label AUCs.
        "micro": one AUC over all (document, label) pairs flattened (one sort of all
        n * q entries, with about 33 bytes of scratch per entry). "samples": mean over
        documents of the AUC computed over each document's labels; per document this is
        1 - ranking loss with a tied relevant/irrelevant pair counted 1/2.
    sample_weight : array-like of float, shape (n,), optional
        Per-document weights (finite, >= 0, not all 0). For a binary problem, None,
        "macro" and "micro" a positive/negative pair of documents counts ``w_a * w_b``
        ("micro": each (document, label) entry has its document's weight, about 8 more
        bytes per entry); for "samples" each document's AUC is unweighted and the mean over
        documents weighted.

    Returns
    -------
    float or ndarray of shape (q,)
        The AUC, per label for ``average=None``. In multi-label input a label (or, for
        "samples", a document) whose truth is all 0 or all 1 has no defined AUC: it is NaN
        in the ``average=None`` output and left out of the "macro"/"samples" means (NaN if
        none is defined) -- scikit-learn warns and its mean is NaN. Equals
        ``sklearn.metrics.roc_auc_score`` (also with ``sample_weight``) wherever both are
        defined.

    Raises
    ------
    ValueError
        A binary problem with one class only (scikit-learn warns and returns NaN), an
        unknown ``average``,
        shapes that differ, non-binary truth, NaN scores, invalid or all-zero weights,
        more than 2**31 - 1 entries for "micro".

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, §4.1.7.

    Examples
    --------
    >>> from fastrank.metrics import auc
    >>> y_true = [1, 1, 0, 1, 0, 0]
    >>> y_score = [.9, .7, .7, .5, .5, .1]   # two tie blocks of one positive, one negative
    >>> round(auc(y_true, y_score), 4)        # (6 + 2 * 1/2) / 9
    0.7778
    >>> Y = [[1, 0], [0, 1], [1, 1]]
    >>> S = [[.9, .1], [.2, .2], [.5, .7]]
    >>> auc(Y, S, average=None)
    array([1., 1.])
    >>> auc(Y, S, average="samples")          # documents 1 and 2; document 3 is undefined
    0.75
    """
    check_option("average", average, AUC_AVERAGES)
    if not sp.issparse(y_score) and np.ndim(y_score) == 1:
        truth, scores, weights = _check_binary(y_true, y_score, sample_weight, averaged=True)
        value = _kernel_auc_binary(truth, scores, weights)
        if np.isnan(value):
            raise ValueError(f"AUC needs both classes in y_true (with positive weight); got "
                             f"{int(truth.sum())} positives among {truth.size}")
        return value
    scores = check_scores(y_score)
    truth = check_truth(y_true, n_labels=scores.shape[1], against="y_score")
    check_same_shape(truth.shape, scores.shape)
    weights = check_sample_weight(sample_weight, scores.shape[0], averaged=True)
    by = {None: "label", "macro": "label", "micro": "micro", "samples": "sample"}[average]
    values = _lines_auc(truth, scores, by, weights)
    if average is None:
        return values
    if average == "micro":
        return float(values[0])
    defined = ~np.isnan(values)
    if average == "samples" and weights is not None:
        total = weights[defined].sum()
        return float(weights[defined] @ values[defined] / total) if total > 0 else float("nan")
    return float(values[defined].mean()) if defined.any() else float("nan")


def _kernel_auc_binary(truth, scores, weights):
    out = np.empty(1)
    _kernel.auc_lines(scores, 0, 1, NO_INDEX, NO_INDEX, 1, scores.size, truth, 0, 1,
                      _NO_WEIGHTS if weights is None else weights, out)
    return float(out[0])
