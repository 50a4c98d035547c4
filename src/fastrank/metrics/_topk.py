"""Top-k metrics of extreme multi-label classification with exact tie semantics.

precision@k, recall@k, DCG@k, nDCG@k and the propensity-scored precision@k and nDCG@k of
Jain, Prabhu and Varma (2016), for several cut-offs k in one pass, averaged over documents
(optionally weighted). The hot path is the compiled kernel ``fastrank._ext.tie_topk``: it
selects each row's top k scores without sorting the row, finds the exact bounds of the tie
group at the cut-off, and releases the GIL (one OpenMP loop over documents).

Definitions, for one document with relevant labels ``C`` (``m = |C|``), labels ranked by
decreasing score and positions ``p = 0, 1, ...`` (0-based), ``w_l = 1 / p_l`` the inverse
propensity of label ``l`` (1 for the plain metrics) and ``D(p) = 1 / log2(p + 2)``:

* ``precision@k = |C ∩ top_k| / k`` (divided by k even when fewer labels are scored);
* ``recall@k = |C ∩ top_k| / m``;
* ``dcg@k = sum of D(p) over the relevant labels at positions p < k``;
* ``ndcg@k = dcg@k / IDCG@k`` with ``IDCG@k = sum_{p < min(k, m)} D(p)``, the DCG of a
  ranking with every relevant label first — the normaliser of pyxclib's ``ndcg`` and
  napkinXC's ``NDCGAtK``;
* ``psprecision_gain@k = (1/k) sum of w_l over the relevant labels in top_k`` and
  ``psdcg@k = sum of w_l D(p)`` (Jain et al.'s PSP@k and PSDCG@k), ``psndcg_gain@k =
  psdcg@k / IDCG@k`` (their PSnDCG@k);
* ``psprecision@k`` and ``psndcg@k``, the values XMLC papers report: the mean gain over
  documents divided by the mean of the largest gain each document could have (its
  ``min(k, m)`` largest ``w_l`` at the first positions), exactly as pyxclib's
  ``psprecision``/``psndcg`` and napkinXC's ``PSPrecisionAtK``/``PSNDCGAtK`` normalise: a
  ratio of two means, not a mean of ratios.

A document without relevant labels counts in every mean with value 0 (recall, nDCG and
the PS-nDCG forms included; it adds 0 to both sums of the normalised PS metrics), as in
pyxclib, napkinXC and scikit-learn's ``ndcg_score``.

Scores are compared exactly (``-0.0 == 0.0``); labels with equal scores in a row are a
tie group, and ``ties`` says where inside its group each label sits (module
:data:`TOPK_TIES`, and the user guide's page "Extreme multi-label evaluation").

References
----------
.. [1] H. Jain, Y. Prabhu and M. Varma, "Extreme multi-label loss functions for
   recommendation, tagging, ranking & other missing label applications", KDD 2016.
.. [2] F. McSherry and M. Najork, "Computing information retrieval performance measures
   efficiently in the presence of tied scores", ECIR 2008.
"""
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._arrays import as_numpy, converted, exact_float64
from .._ext import _threads
from .._ext import checks as _checks
from .._ext import tie_topk as _kernel
from .._typing import LabelsLike, RandomStateLike
from .._validation import _label_indices, check_binary_csr, check_n_labels, check_nonempty_2d, \
    check_memory, check_option, check_real_dtype, check_scores, check_truth, is_label_sets
from ._common import WEIGHT_RANGE, check_sample_weight, draw_seed
from ._mergeable import Mergeable, empty_chunk_labels

#: The tie semantics of the top-k metrics, in the kernel's mode order.
TOPK_TIES = ("expected", "optimistic", "pessimistic", "ordinal", "stable", "trec")
#: The metric keys (``"precision"`` etc.; the PS ones only with propensities), in order.
TOPK_METRICS = ("precision", "recall", "dcg", "ndcg")
PS_METRICS = ("psprecision", "psdcg", "psndcg", "psprecision_gain", "psndcg_gain")
# kernel value columns (core/tie_topk.h, FR_TK_*)
_P, _R, _DCG, _NDCG, _PSP, _PSP_BEST, _PSDCG, _PSNDCG, _PSNDCG_BEST = range(9)
_MEANS = {"precision": _P, "recall": _R, "dcg": _DCG, "ndcg": _NDCG, "psdcg": _PSDCG,
          "psprecision_gain": _PSP, "psndcg_gain": _PSNDCG}
_RATIOS = {"psprecision": (_PSP, _PSP_BEST), "psndcg": (_PSNDCG, _PSNDCG_BEST)}
_NO_FLOATS = np.empty(0, dtype=np.float64)


def propensity(y_train: LabelsLike, A: float = 0.55, B: float = 1.5,
               n_labels: int | None = None) -> np.ndarray:
    r"""Propensity of every label, as Jain, Prabhu and Varma (2016) model missing labels.

    :math:`p_l = 1 / (1 + C (N_l + B)^{-A})` with :math:`C = (\ln N - 1) (B + 1)^A`,
    :math:`N` the number of training documents and :math:`N_l` how many carry label
    :math:`l`. Its inverse :math:`1 / p_l` is pyxclib's ``compute_inv_propesity``.

    Parameters
    ----------
    y_train : 0/1 matrix (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The training labels.
    A, B : float, default 0.55 and 1.5
        The model's parameters: 0.5 and 0.4 for Wikipedia sets, 0.6 and 2.6 for Amazon sets
        in the paper; ``A >= 0``, ``B > 0``.
    n_labels : int, optional
        Number of labels; required with label sets whose largest index is not the last
        label.

    Returns
    -------
    ndarray of float64, shape (n_labels,)

    Raises
    ------
    ValueError
        Non-binary or malformed labels; ``A`` or ``B`` out of range; fewer than 3 training
        documents (the model's C is then not positive).

    Examples
    --------
    >>> p = propensity([{0}, {0, 1}, {0}, {2}], n_labels=3)
    >>> bool(p[0] > p[1])   # a frequent label is more likely to be annotated
    True
    """
    for name, value, low in (("A", A, 0.0), ("B", B, None)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not np.isfinite(value) or (low is not None and value < low) \
                or (low is None and value <= 0):
            bound = ">= 0" if low is not None else "> 0"
            raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    indptr, indices, q = _truth_csr(y_train, n_labels, name="y_train")
    n = indptr.size - 1
    if n < 3:  # C > 0 needs ln N > 1
        raise ValueError(f"propensity needs at least 3 training documents (C = (ln N - 1) "
                         f"(B + 1)^A is not positive for N = {n})")
    counts = np.bincount(indices, minlength=q).astype(np.float64)
    c = (np.log(n) - 1.0) * (B + 1.0) ** A
    return 1.0 / (1.0 + c * (counts + B) ** -A)


def _truth_csr(y_true, n_labels, name="y_true"):
    """The relevant labels of every document as CSR arrays ``(indptr int64, indices int32
    ascending per row, q)``: from a sparse or dense 0/1 matrix (explicit zeros dropped) or
    a list of label-index sets (duplicates in a set counted once)."""
    if sp.issparse(y_true):
        csr = check_binary_csr(y_true, name)
        if (csr.data == 0).any():  # a stored 0 is not a relevant label
            csr = csr.copy()
            csr.eliminate_zeros()
        indptr, indices = csr.indptr, csr.indices
        q = csr.shape[1]
    elif is_label_sets(y_true):
        rows = [np.unique(_label_indices(s, name)) for s in y_true]
        if not rows:
            raise ValueError(f"{name} is empty")
        top = max((int(r[-1]) for r in rows if r.size), default=-1)
        if any(r.size and r[0] < 0 for r in rows):
            raise ValueError(f"{name}: label indices must be non-negative")
        if n_labels is None:
            raise ValueError(f"{name} is a list of label sets, which does not tell the number "
                             "of labels; pass n_labels=q (or beliefs that have q columns)")
        q = check_n_labels(n_labels)
        if top >= q:
            raise ValueError(f"{name}: label index {top} out of range for {q} labels")
        indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
        indices = np.concatenate(rows) if indptr[-1] else np.empty(0, dtype=np.int64)
    else:
        dense = check_truth(y_true, name=name)  # a dense 0/1 matrix
        rows, indices = np.nonzero(dense)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=dense.shape[0]))])
        q = dense.shape[1]
    if n_labels is not None and q != n_labels:
        raise ValueError(f"{name} has {q} labels, expected {n_labels}")
    return (np.ascontiguousarray(indptr, dtype=np.int64),
            np.ascontiguousarray(indices, dtype=np.int32), q)


def _scores(y_score):
    """``(kind, arrays, n, q)``: kind "dense" (a float32/float64 matrix), "csr" (a canonical
    CSR matrix of the scored labels) or "pairs" (C-contiguous (n, r) label indices and
    scores; q unknown, None)."""
    if isinstance(y_score, tuple):
        if len(y_score) != 2:
            raise ValueError("a top-k y_score must be the pair (indices, scores), got a tuple "
                             f"of {len(y_score)}")
        indices = as_numpy(y_score[0], "y_score indices")
        scores = as_numpy(y_score[1], "y_score scores")
        if indices.dtype == bool or indices.dtype.kind not in "iu":
            raise TypeError(f"y_score indices must be integers, got dtype {indices.dtype}")
        check_real_dtype(scores.dtype, "y_score scores")
        check_nonempty_2d(indices.shape, "y_score indices", columns="k")
        if scores.shape != indices.shape:
            raise ValueError(f"y_score indices have shape {indices.shape} but its scores "
                             f"{scores.shape}")
        scores = np.ascontiguousarray(scores)
        if scores.dtype not in (np.float32, np.float64):
            scores = exact_float64(scores, "y_score scores", lambda k: k // scores.shape[1])
        bad = _checks.first_nan(scores.ravel())
        if bad >= 0:
            raise ValueError(f"y_score scores contain NaN (first in row {bad // scores.shape[1]})")
        if indices.dtype not in (np.int32, np.int64):
            if indices.dtype.kind == "u" and indices.size and \
                    indices.max() > np.iinfo(np.int64).max:
                raise ValueError("y_score indices out of range")
            indices = indices.astype(np.int64)
        return "pairs", (np.ascontiguousarray(indices), scores), indices.shape[0], None
    scores = check_scores(y_score)
    return ("csr" if sp.issparse(scores) else "dense"), scores, scores.shape[0], scores.shape[1]


def _score_dtype(kind, scores):
    return scores[1].dtype if kind == "pairs" else scores.dtype


def _as_float32(kind, scores):
    return (scores[0], scores[1].astype(np.float32)) if kind == "pairs" \
        else scores.astype(np.float32)


def _run_kernel(kind, scores, n, q, ks, flags, seed, first_row, tptr, tind, m_max, invp,
                weight):
    """The kernel's sums (N_MODES, N_VALUES, len(ks)) over the rows of checked input."""
    n_chunks = -(-n // _kernel.CHUNK_ROWS)
    row_len = q if kind == "dense" else int(np.diff(scores.indptr).max(initial=0)) \
        if kind == "csr" else scores[0].shape[1]
    tables, per_thread = _kernel.scratch_bytes(q, int(ks[-1]), row_len, m_max, flags,
                                               kind != "dense")
    check_memory(tables + _threads.get_max_threads() * per_thread,
                 f"the top-k scratch of {q} labels (n_labels) and k up to {int(ks[-1])}")
    out = np.zeros((n_chunks, _kernel.N_MODES, _kernel.N_VALUES, ks.size))
    err = np.full(n_chunks, -1, dtype=np.int64)
    common = (q, ks, flags, seed, first_row, tptr, tind, m_max, invp,
              _NO_FLOATS if weight is None else weight, out, err)
    if kind == "dense":
        item = scores.itemsize
        _kernel.run_dense(scores.ravel(order="K"), scores.strides[0] // item,
                          scores.strides[1] // item, n, *common)
    elif kind == "csr":
        _kernel.run_sparse(scores.data, scores.indices, scores.indptr, row_len, 1, n, *common)
    else:
        indices, values = scores
        _kernel.run_sparse(values.ravel(), indices.ravel(), indices.ravel()[:0], row_len, 0, n,
                           *common)
    bad = err[err >= 0]
    if bad.size:
        row, code = divmod(int(bad.min()), 4)
        what = "lists a label twice" if code == 2 else f"has a label index out of [0, {q})"
        raise ValueError(f"y_score: row {row} {what}")
    return out.sum(axis=0)


def _check_ks(k):
    """The cut-offs as given (a tuple) and as the kernel wants them (sorted int64)."""
    scalar = isinstance(k, numbers.Integral) and not isinstance(k, bool)
    ks = (k,) if scalar else tuple(k) if isinstance(k, Sequence) or isinstance(k, np.ndarray) \
        else None
    if ks is None or not ks or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                   or v < 1 for v in ks):
        raise ValueError(f"k must be an integer >= 1 or a non-empty list of them, got {k!r}")
    ks = tuple(int(v) for v in ks)
    if len(set(ks)) != len(ks):
        raise ValueError(f"k has duplicates: {ks}")
    if len(ks) > _kernel.MAX_CUTOFFS:
        raise ValueError(f"at most {_kernel.MAX_CUTOFFS} cut-offs k, got {len(ks)}")
    return ks


def _check_topk_ties(ties):
    if isinstance(ties, str):
        ties = (ties,)
    ties = tuple(ties)
    for t in ties:
        if not isinstance(t, str):
            raise TypeError(f"ties must be strings, got {type(t).__name__}")
        check_option("ties", t, TOPK_TIES)
    if not ties:
        raise ValueError(f"ties is empty; choose from {TOPK_TIES}")
    if len(set(ties)) != len(ties):
        raise ValueError(f"ties has duplicates: {ties}")
    return ties


class TopKEvaluation(dict):
    """Top-k metric values per tie semantics, as returned by :func:`evaluate_at_k`: a dict
    ``{ties: {"precision@1": value, ...}}`` with the arrays below.

    Attributes
    ----------
    ties : tuple of str
        The tie semantics, in the order requested.
    metrics : tuple of str
        The metric names (:data:`TOPK_METRICS`, then the propensity-scored ones when
        propensities were given).
    k : tuple of int
        The cut-offs, in the order requested.
    values : ndarray of float64, shape (len(ties), len(metrics), len(k))
        ``values[t, i, j]`` is ``metrics[i]@k[j]`` under ``ties[t]``.

    Examples
    --------
    >>> from fastrank.metrics import evaluate_at_k
    >>> r = evaluate_at_k([[1, 0, 0]], [[.5, .5, .1]], k=1, ties=("optimistic", "expected"))
    >>> r["optimistic"]["precision@1"], r["expected"]["precision@1"]
    (1.0, 0.5)
    """

    values: np.ndarray  # type: ignore[assignment]  # the array, not dict.values()

    def __init__(self, ties: Sequence[str], metrics: Sequence[str], k: Sequence[int],
                 values: np.ndarray) -> None:
        self.ties, self.metrics, self.k, self.values = tuple(ties), tuple(metrics), tuple(k), values
        super().__init__((t, self._row(i)) for i, t in enumerate(self.ties))

    def _row(self, i):
        return {f"{m}@{k}": float(self.values[i, a, b]) for a, m in enumerate(self.metrics)
                for b, k in enumerate(self.k)}

    def __getitem__(self, ties):
        if ties not in self.ties:
            raise KeyError(f"tie semantics {ties!r} not evaluated; have {self.ties}")
        return self._row(self.ties.index(ties))

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The values as a plain nested dict ``{ties: {"metric@k": value}}``."""
        return {t: self[t] for t in self.ties}

    def __repr__(self):
        return f"TopKEvaluation(ties={self.ties}, k={self.k})"

    def __str__(self):
        keys = [f"{m}@{k}" for m in self.metrics for k in self.k]
        width = max(len(key) for key in keys)
        cols = [max(10, len(t)) for t in self.ties]
        lines = [" " * width + "".join(f"  {t:>{w}}" for t, w in zip(self.ties, cols))]
        rows = [self[t] for t in self.ties]
        for key in keys:
            lines.append(f"{key:<{width}}" + "".join(f"  {row[key]:>{w}.6f}"
                                                     for row, w in zip(rows, cols)))
        return "\n".join(lines)


class TopKEvaluator(Mergeable):
    """Mergeable state of :func:`evaluate_at_k`: feed documents in chunks, combine
    evaluators that saw disjoint rows, read the same :class:`TopKEvaluation`.

    The state is, per tie semantics, cut-off and value, a sum over documents (and the total
    weight): a few hundred floats, whatever the number of rows. For any split of the rows
    into chunks, each given its global first row, :meth:`result` equals
    :func:`evaluate_at_k` on the whole input to rounding: ``"ordinal"`` draws the order of
    row ``j`` from ``(seed, j)``, never from the chunk or the thread. Thread-safe as
    :class:`Evaluator` is: several threads may update one evaluator at once, each with its
    own rows. It is also the ``at_k`` part of an :class:`Evaluator`.

    Parameters
    ----------
    k : int or sequence of int, default (1, 3, 5)
        The cut-offs (each >= 1 and at most the number of labels; at most 64 of them).
    ties : str or sequence of str, default "expected"
        Tie semantics, from :data:`TOPK_TIES`; see :func:`evaluate_at_k`.
    propensity : array of shape (n_labels,), optional
        Label propensities ``p_l`` (e.g. from :func:`propensity`), finite and > 0: adds the
        propensity-scored metrics, which weight a relevant label by ``1 / p_l``.
    n_labels : int, optional
        Number of labels; by default from the first chunk (or the propensities).
    random_state : None, int or numpy.random.Generator, default 0
        Seeds ``"ordinal"`` (drawn once, here; evaluators merge only with the same seed:
        make the others with :meth:`empty_copy`).

    Raises
    ------
    ValueError
        Invalid ``k``, ``ties``, ``propensity`` or ``n_labels``.
    """

    _CONFIG = ("k", "ties", "seed", "propensity")
    _SUMS = ("_sums",)
    _sums: Any

    def __init__(self, k: int | Sequence[int] = (1, 3, 5), ties: str | Sequence[str] = "expected",
                 propensity: npt.ArrayLike | None = None, n_labels: int | None = None,
                 random_state: RandomStateLike = 0) -> None:
        self.k = _check_ks(k)
        self.ties = _check_topk_ties(ties)
        self.n_labels = None if n_labels is None else check_n_labels(n_labels)
        self.propensity = None
        self._invp = _NO_FLOATS
        if propensity is not None:
            p = np.asarray(propensity)
            check_real_dtype(p.dtype, "propensity")
            p = np.array(p, dtype=np.float64)  # a copy: the configuration cannot change
            p.flags.writeable = False
            if p.ndim != 1 or p.size == 0:
                raise ValueError(f"propensity must be 1-D (one per label), got shape {p.shape}")
            if not np.isfinite(p).all() or (p < WEIGHT_RANGE[0]).any():  # 1/p weighs hits
                raise ValueError("propensity must be finite and at least 2**-400 (about "
                                 "3.9e-121), where sums of its inverse stay finite")
            if self.n_labels is not None and p.size != self.n_labels:
                raise ValueError(f"propensity has {p.size} labels, n_labels={self.n_labels}")
            self.n_labels = p.size
            self.propensity, self._invp = p, 1.0 / p
        self.metrics = TOPK_METRICS + (PS_METRICS if propensity is not None else ())
        self._flags = sum(1 << TOPK_TIES.index(t) for t in self.ties)
        self.seed = draw_seed(random_state) if "ordinal" in self.ties else 0
        self._init_rows()  # _sums: (N_MODES, N_VALUES, len(k)) kernel sums, k as given

    def __repr__(self):
        return f"TopKEvaluator(k={self.k}, ties={self.ties}, n_rows={self.n_rows})"

    def update(self, y_true: LabelsLike, y_score: Any, first_row: int | None = None,
               sample_weight: npt.ArrayLike | None = None) -> "TopKEvaluator":
        """Add a chunk of documents (arguments as for :func:`evaluate_at_k`; ``first_row``:
        the global row number of its first document, by default right after the previous
        chunk). A chunk with no rows changes nothing. Returns this evaluator.

        Raises
        ------
        ValueError
            Invalid input, a cut-off beyond the number of labels, rows already seen.
        """
        n, q, sums = self._read_chunk(converted(y_true, "y_true"), converted(y_score, "y_score"))
        weight = check_sample_weight(sample_weight, n)
        self._add_rows(first_row, n, q, weight,
                       lambda start: {"_sums": sums(start, weight)})
        return self

    def _read_chunk(self, y_true, y_score):
        """``(n, q, sums)``: the chunk's numbers of rows and labels, checked, and
        ``sums(first_row, weight)``, its kernel sums (the state's ``_sums``)."""
        if isinstance(y_score, tuple) and len(y_score) == 2 and np.ndim(y_score[0]) == 2 \
                and np.shape(y_score[0])[0] == 0 and np.shape(y_score[1]) == np.shape(y_score[0]):
            return 0, self.n_labels, None  # a top-k pair without rows
        if not isinstance(y_score, tuple):
            q = empty_chunk_labels(y_true, y_score)
            if q is not None:
                return 0, q, None
        kind, scores, n, q = _scores(y_score)
        if self.n_labels is not None:
            if q is not None and q != self.n_labels:
                raise ValueError(f"y_score has {q} labels; this evaluator has {self.n_labels} "
                                 "(from n_labels, its propensities or an earlier chunk)")
            q = self.n_labels
        tptr, tind, q = _truth_csr(y_true, q, name="y_true")
        if tptr.size - 1 != n:
            raise ValueError(f"y_true has {tptr.size - 1} documents but y_score has {n}")
        if max(self.k) > q:
            raise ValueError(f"k={max(self.k)} exceeds the number of labels, {q}")
        if self._invp.size and self._invp.size != q:
            raise ValueError(f"propensity has {self._invp.size} labels but the input has {q}")
        order = np.argsort(self.k)
        ks = np.asarray(self.k, dtype=np.int64)[order]
        m_max = int(np.diff(tptr).max(initial=0))
        trec = 1 << TOPK_TIES.index("trec")
        runs = [(self._flags, scores)]
        if self._flags & trec and _score_dtype(kind, scores) == np.float64:
            # trec_eval keeps every score as a C float: float64 scores tie as float32 do
            runs = [(self._flags & ~trec, scores), (trec, _as_float32(kind, scores))]

        def sums(first_row, weight):
            out = np.zeros((_kernel.N_MODES, _kernel.N_VALUES, ks.size))
            for flags, values in runs:
                if flags:
                    out += _run_kernel(kind, values, n, q, ks, flags, self.seed, first_row,
                                       tptr, tind, m_max, self._invp, weight)
            return out[:, :, np.argsort(order)]
        return n, q, sums

    def merge(self, other: "TopKEvaluator") -> "TopKEvaluator":
        """A new evaluator holding the rows of both (disjoint, same configuration and seed);
        neither is changed.

        Raises
        ------
        TypeError
            ``other`` is not a TopKEvaluator.
        ValueError
            Configurations, seeds or numbers of labels differ, or the rows overlap.
        """
        return self._merged(other)

    def result(self) -> TopKEvaluation:
        """The :class:`TopKEvaluation` of every row seen.

        Raises
        ------
        ValueError
            No rows were seen, or their total weight is 0.
        """
        state = self._seen()
        return self._evaluation(state._sums, state._weight)

    def _evaluation(self, sums, weight):
        """The :class:`TopKEvaluation` of kernel sums over rows of total weight ``weight``."""
        values = np.empty((len(self.ties), len(self.metrics), len(self.k)))
        for i, t in enumerate(self.ties):
            s = sums[TOPK_TIES.index(t)]
            for j, name in enumerate(self.metrics):
                if name in _MEANS:
                    values[i, j] = s[_MEANS[name]] / weight
                else:
                    num, den = _RATIOS[name]
                    values[i, j] = np.divide(s[num], s[den], out=np.zeros(len(self.k)),
                                             where=s[den] > 0)
        return TopKEvaluation(self.ties, self.metrics, self.k, values)


def evaluate_at_k(y_true: LabelsLike, y_score: Any, k: int | Sequence[int] = (1, 3, 5),
                  ties: str | Sequence[str] = "expected",
                  propensity: npt.ArrayLike | None = None,
                  sample_weight: npt.ArrayLike | None = None,
                  random_state: RandomStateLike = 0,
                  n_labels: int | None = None) -> TopKEvaluation:
    """precision@k, recall@k, DCG@k, nDCG@k (and, with propensities, the propensity-scored
    metrics) for every cut-off in ``k`` and tie semantics in ``ties``, in one pass.

    Definitions and the convention for documents without relevant labels: see the module
    docstring (``fastrank.metrics._topk``) and the user guide, "Extreme multi-label
    evaluation".

    Parameters
    ----------
    y_true : 0/1 matrix (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The relevant labels.
    y_score : the documents' scored labels, in one of three forms
        * a dense float matrix (n_documents, n_labels): every label is scored;
        * a sparse matrix (n_documents, n_labels): its stored entries are the scored labels
          (an explicit 0 included); the unscored labels of a row form one tie group *below
          every scored one*, whatever the scores' signs (unlike :func:`fastrank.rank`, which
          reads a sparse matrix's implicit entries as scores of 0);
        * the pair ``(indices, scores)`` of (n_documents, r) arrays that XMLC models return
          (a row's r labels in any order, each at most once): a label missing from the list
          is below every listed one, as for a sparse matrix.
    k : int or sequence of int, default (1, 3, 5)
        The cut-offs, each from 1 to n_labels (beyond the r listed labels of a top-k pair,
        positions hold unscored labels).
    ties : str or sequence of str, default "expected"
        Where each label sits inside its tie group:

        * ``"expected"``: the exact mean over every order of every tie group (all equally
          likely) — for precision and recall the hypergeometric share of the group cut by
          position k, for (PS-)DCG the McSherry–Najork mean gain over the positions the
          group spans; no sampling;
        * ``"optimistic"`` / ``"pessimistic"``: relevant labels first / last in their group
          (the heaviest ``1 / p_l`` first / last): the largest and smallest value over all
          orders, so ``optimistic >= expected >= pessimistic``;
        * ``"ordinal"``: a uniformly random order in every group, row ``j`` drawn from
          ``(seed, j)`` — the order :func:`fastrank.rank` gives with ``"ordinal"`` and the
          same ``random_state``;
        * ``"stable"``: ascending label index inside a group;
        * ``"trec"``: trec_eval's order — score descending, then the label's decimal string
          descending, compared as strings (``strcmp``): 9 before 10 before 1. Scores are
          compared as float32, as trec_eval stores them (float64 scores closer than float32
          resolution tie); unscored labels form the last group, which trec_eval would leave
          unranked (it matters only where fewer than k labels are scored).
    propensity : array of shape (n_labels,), optional
        Label propensities (:func:`propensity`); adds the PS metrics.
    sample_weight : array of shape (n_documents,), optional
        Per-document weights (finite, >= 0): every mean is weighted.
    random_state : None, int or numpy.random.Generator, default 0
        Seeds ``"ordinal"``.
    n_labels : int, optional
        Number of labels, needed when neither argument has columns (label sets and a top-k
        pair).

    Returns
    -------
    TopKEvaluation
        ``{ties: {"metric@k": value}}`` and the array ``values``.

    Raises
    ------
    ValueError
        Shapes that differ, NaN scores, non-binary truth, a cut-off out of range, a label
        listed twice or out of range in a top-k row, invalid ties or weights.
    TypeError
        Non-numeric input.

    Examples
    --------
    Two labels tied at the cut-off, one of them relevant:

    >>> from fastrank.metrics import evaluate_at_k
    >>> r = evaluate_at_k([[1, 0, 1]], [[.9, .4, .4]], k=(1, 2),
    ...                   ties=("expected", "pessimistic"))
    >>> r["expected"]["precision@2"], r["pessimistic"]["precision@2"]
    (0.75, 0.5)
    """
    ev = TopKEvaluator(k, ties, propensity=propensity, n_labels=n_labels,
                       random_state=random_state)
    return ev.update(y_true, y_score, sample_weight=sample_weight).result()
