"""Set-based (bipartition) metrics on a 0/1 prediction (melotti2009 §4.2, gatto).

Every metric is computed from counts: per document ``TP_j`` (predicted and relevant),
``|Ĉ_j|`` (predicted) and ``|C_j|`` (relevant), per label ``TP_i``, ``TP_i + FP_i``,
``TP_i + FN_i``. :func:`fastrank.metrics.evaluate` gets the same counts from its kernel and
calls the same helpers, so both paths give identical numbers.

``zero_division`` (default 0.0) is the value of a ratio whose denominator is 0; it is used
per label / per document before averaging, and for a micro ratio whose pooled denominator
is 0. ``orient="category"`` (``^c``) computes each label's ratio over documents,
``orient="document"`` (``^d``) each document's ratio over labels.

``y_true`` and ``y_pred`` are 0/1 matrices (dense or sparse) or lists of label-index sets.
The number of labels ``q`` comes from whichever of them is a matrix; when both are label
sets it cannot be read off the data (the largest index seen need not be the last label,
and ``q`` changes Hamming loss, the per-label macro averages and the contingency counts),
so ``n_labels`` must then be given.

``sample_weight`` (optional, one finite weight >= 0 per document) weights every average
over documents, and each document adds its weight instead of 1 to the per-label counts of
the category-oriented metrics — as scikit-learn's weighted metrics do.
"""
import numbers
from typing import Literal

import numpy.typing as npt

from .._typing import LabelsLike
from .._validation import check_option
from ._set_counts import AVERAGES, F_AVERAGES, ORIENTS, _check_zero_division, _counts, \
    score_accuracy, score_exact_match, score_fbeta, score_hamming, score_precision, \
    score_recall

#: The largest ``beta`` of :func:`fbeta`: its square stays finite.
MAX_BETA = 1e150


def hamming_loss(y_true: LabelsLike, y_pred: LabelsLike, *, n_labels: int | None = None,
                 sample_weight: npt.ArrayLike | None = None) -> float:
    r"""Hamming loss :math:`\operatorname{mean}_j |\hat C_j \triangle C_j| / q`: the share of
    wrong label decisions.

    Melotti (2009) eq. 4.13-4.14. Lower is better. Equals ``sklearn.metrics.hamming_loss``
    on indicator matrices.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import hamming_loss
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> hamming_loss(Y, P)                  # 2 wrong decisions of 8
    0.25
    >>> hamming_loss([{0, 2}, {1}], [{0}, {1, 2}], n_labels=4)
    0.25
    """
    return score_hamming(_counts(y_true, y_pred, n_labels, sample_weight))


def exact_match(y_true: LabelsLike, y_pred: LabelsLike, *, n_labels: int | None = None,
                sample_weight: npt.ArrayLike | None = None) -> float:
    r"""Exact match (subset accuracy) :math:`\operatorname{mean}_j [\hat C_j = C_j]`.

    Melotti (2009) eq. 4.15-4.16. Higher is better. A document with
    :math:`\hat C_j = C_j = \emptyset`
    counts as exact. Equals ``sklearn.metrics.accuracy_score`` on indicator matrices. (Gatto
    prints 0.980 for "subset accuracy" because its R code averages label-wise equality, i.e.
    1 - Hamming loss; the subset accuracy of its example is 49/51.)

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import exact_match
    >>> exact_match([[1, 0], [0, 1]], [[1, 0], [1, 1]])
    0.5
    """
    return score_exact_match(_counts(y_true, y_pred, n_labels, sample_weight))


def zero_one_loss(y_true: LabelsLike, y_pred: LabelsLike, *, n_labels: int | None = None,
                  sample_weight: npt.ArrayLike | None = None) -> float:
    """0/1 loss ``1 - exact_match``: the share of documents whose predicted set is not exact.

    Lower is better.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, or invalid weights.
    TypeError
        Non-numeric input.

    See Also
    --------
    exact_match

    Examples
    --------
    >>> from fastrank.metrics import zero_one_loss
    >>> zero_one_loss([[1, 0], [0, 1]], [[1, 0], [1, 1]])
    0.5
    """
    return 1.0 - exact_match(y_true, y_pred, n_labels=n_labels, sample_weight=sample_weight)


def accuracy(y_true: LabelsLike, y_pred: LabelsLike, *, zero_division: float = 0.0,
             n_labels: int | None = None,
             sample_weight: npt.ArrayLike | None = None) -> float:
    r"""Example-based accuracy (Jaccard)
    :math:`\operatorname{mean}_j |\hat C_j \cap C_j| / |\hat C_j \cup C_j|` (Gatto's "A").

    Higher is better. A document with :math:`\hat C_j = C_j = \emptyset` scores
    ``zero_division``. Equals
    ``sklearn.metrics.jaccard_score(average="samples", zero_division=...)``. Not the same as
    scikit-learn's ``accuracy_score``, which is :func:`exact_match`.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, a non-finite ``zero_division``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import accuracy
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> accuracy(Y, P)                      # (1/2 + 1/2) / 2
    0.5
    """
    return score_accuracy(_counts(y_true, y_pred, n_labels, sample_weight),
                          _check_zero_division(zero_division))


def precision(y_true: LabelsLike, y_pred: LabelsLike, *,
              average: Literal["macro", "micro"] = "macro",
              orient: Literal["category", "document"] = "category",
              zero_division: float = 0.0, n_labels: int | None = None,
              sample_weight: npt.ArrayLike | None = None) -> float:
    """Precision :math:`TP / (TP + FP)`, macro- or micro-averaged over labels or documents.

    Melotti (2009) eq. 4.17-4.20 (category) and 4.28-4.31 (document). Higher is better. A
    unit with nothing predicted scores ``zero_division``. Micro precision is the same for
    both orientations. Category macro/micro equal scikit-learn's
    ``precision_score(average="macro"/"micro")``; document macro equals
    ``average="samples"``.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    average : {"macro", "micro"}, default "macro"
        Mean of the per-unit ratios over *all* units, or the ratio of the pooled counts.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a non-finite
        ``zero_division``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import precision
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> precision(Y, P)                     # labels: 1, 1, 0, 0/0 -> 0
    0.5
    >>> precision(Y, P, orient="document")  # documents: 1/1, 1/2
    0.75
    >>> round(precision(Y, P, average="micro"), 4)
    0.6667
    """
    check_option("average", average, AVERAGES)
    check_option("orient", orient, ORIENTS)
    return score_precision(_counts(y_true, y_pred, n_labels, sample_weight), average, orient,
                           _check_zero_division(zero_division))


def recall(y_true: LabelsLike, y_pred: LabelsLike, *, average: Literal["macro", "micro"] = "macro",
           orient: Literal["category", "document"] = "category",
           zero_division: float = 0.0, n_labels: int | None = None,
           sample_weight: npt.ArrayLike | None = None) -> float:
    """Recall :math:`TP / (TP + FN)`, macro- or micro-averaged over labels or documents.

    Melotti (2009) eq. 4.21-4.24, 4.32-4.35; averaging as :func:`precision`. Higher is
    better. A unit with no relevant entry (a label no document carries, a document with no
    relevant label) scores ``zero_division``.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    average : {"macro", "micro"}, default "macro"
        Mean of the per-unit ratios over *all* units, or the ratio of the pooled counts.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a non-finite
        ``zero_division``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import recall
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> recall(Y, P, orient="document")     # documents: 1/2, 1/1
    0.75
    """
    check_option("average", average, AVERAGES)
    check_option("orient", orient, ORIENTS)
    return score_recall(_counts(y_true, y_pred, n_labels, sample_weight), average, orient,
                        _check_zero_division(zero_division))


def fbeta(y_true: LabelsLike, y_pred: LabelsLike, *, beta: float = 1.0,
          average: Literal["macro", "micro", "macro_pr"] = "macro",
          orient: Literal["category", "document"] = "category", zero_division: float = 0.0,
          n_labels: int | None = None,
          sample_weight: npt.ArrayLike | None = None) -> float:
    r""":math:`F_\beta`, the weighted harmonic mean of precision and recall.

    Melotti (2009) eq. 4.25-4.27, 4.36-4.38. Per unit
    :math:`F = (1 + \beta^2) TP / ((1 + \beta^2) TP + \beta^2 FN + FP)`; ``zero_division``
    when :math:`TP = FP = FN = 0`. Higher is better. Two macro
    conventions, named apart:

    * ``average="macro"``: mean of the per-unit F (Melotti eq. 4.26; scikit-learn);
    * ``average="macro_pr"``: F of macro-precision and macro-recall (Gatto's "MaF1").

    ``average="micro"``: F of the pooled counts (equal for both orientations).

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    beta : float, default 1.0
        Weight of recall (finite, >= 0).
    average : {"macro", "micro", "macro_pr"}, default "macro"
        See above.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a negative or non-finite
        ``beta`` or ``zero_division``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import fbeta
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> round(fbeta(Y, P, beta=2, orient="document"), 4)
    0.6944
    """
    check_option("average", average, F_AVERAGES)
    check_option("orient", orient, ORIENTS)
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) \
            or not 0 <= beta <= MAX_BETA:  # beta**2 stays finite
        raise ValueError(f"beta must be a number in [0, {MAX_BETA:g}], got {beta!r}")
    return score_fbeta(_counts(y_true, y_pred, n_labels, sample_weight), float(beta), average,
                       orient, _check_zero_division(zero_division))


def f1(y_true: LabelsLike, y_pred: LabelsLike, *,
       average: Literal["macro", "micro", "macro_pr"] = "macro",
       orient: Literal["category", "document"] = "category", zero_division: float = 0.0,
       n_labels: int | None = None,
       sample_weight: npt.ArrayLike | None = None) -> float:
    """F_1: :func:`fbeta` with ``beta=1``, the harmonic mean of precision and recall.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels ``C_j``.
    y_pred : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The predicted labels ``Ĉ_j`` (e.g. from :func:`cutoff`).
    average : {"macro", "micro", "macro_pr"}, default "macro"
        See :func:`fbeta`.
    orient : {"category", "document"}, default "category"
        The unit: each label over documents (``^c``) or each document over labels (``^d``).
    zero_division : float, default 0.0
        The value of a 0/0 ratio.
    n_labels : int, optional
        The number of labels ``q``; required when both arguments are label sets, else taken
        from the matrix argument (and checked against it when given).
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0); default 1 each.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, non-binary input, both arguments label sets without
        ``n_labels``, an unknown ``average`` or ``orient``, a non-finite
        ``zero_division``, or invalid weights.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §4.2.
    .. [2] E. C. Gatto, technical article computing the multi-label bipartition measures
       step by step on a 51 x 4 example (in Portuguese, with R code).

    Examples
    --------
    >>> from fastrank.metrics import f1
    >>> Y = [[1, 0, 1, 0], [0, 1, 0, 0]]   # C_1 = {c1, c3}, C_2 = {c2}
    >>> P = [[1, 0, 0, 0], [0, 1, 1, 0]]   # Ĉ_1 = {c1},     Ĉ_2 = {c2, c3}
    >>> f1(Y, P)                            # labels: 1, 1, 0, 0
    0.5
    >>> round(f1(Y, P, orient="document"), 4)  # documents: 2/3, 2/3
    0.6667
    """
    return fbeta(y_true, y_pred, beta=1.0, average=average, orient=orient,
                 zero_division=zero_division, n_labels=n_labels, sample_weight=sample_weight)
