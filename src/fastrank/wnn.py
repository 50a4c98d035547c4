"""VG-RAM weightless neural networks for multi-label text categorisation (melotti2009 §2.6):
:class:`VGRAM` (VG-RAM WNN, §2.6.1) and :class:`VGRAMCor` (VG-RAM WNN-COR, §2.6.2).

A network of ``n_neurons`` neurons, each with ``n_synapses`` synapses wired to random input
positions ``synapses_[n]`` (uniform, with replacement, from ``random_state``). Synapse ``i``
and the next one form a Minchinton cell: bit ``i`` of neuron ``n``'s pattern of ``x`` is
``x[s_i] > x[s_{i+1}]``, the last synapse pairing with the first. Patterns are packed into
``ceil(n_synapses / 64)`` uint64 words, so the memory scales as bits.

Training stores every training document's pattern in every neuron; testing finds, per neuron,
the stored entries at minimum Hamming distance from the test pattern and lets the neuron
output their label(s). The search runs in a compiled kernel (OpenMP over chunks of neurons
for batches of up to 512 test documents, each batch reading the memory once; GIL
released), on the code
path chosen at run time for the CPU (:func:`fastrank.use_simd`: portable C, POPCNT,
AVX2, AVX-512, AVX-512 with VPOPCNTDQ and VBMI). On x86 CPUs with AVX2, when
``ceil(n_synapses / 64)`` is
a multiple of 4 up to 32 (e.g. 256, 512, 1024 or 2048 synapses) and a batch has 6 or more
documents, it can be a bit-sliced search that computes a test pattern's distances to 256
or 512 stored patterns at once, with work proportional to the pattern's set bits (fast on
the sparse patterns of text); otherwise popcount scans. All paths find the same entries
and give the same bits.

Random tie choice (``tie_policy="random"``): each neuron outputs, among the entries at the
minimum distance, the one with the smallest key ``h(seed_, test row, neuron, entry)``, where
the entry is numbered by its stored document's index in the training set (for VGRAM
together with the label) and ``h`` is a splitmix64 output that gives distinct entries
distinct, uniformly scrambled keys -- so every tied entry is chosen with the same
probability. A choice depends on nothing but these four numbers: results are reproducible
for a ``random_state``, do not depend on the number of threads, and are the same when the
memory is split into parts searched separately (:class:`fastrank.dask.ShardedEstimator`).
"""
import numbers
from typing import Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._base import MultiLabelEstimator
from ._ext import vgram as _kernel
from ._typing import LabelsLike, MatrixLike, RandomStateLike
from ._validation import check_memory, check_option, check_random_state
from .metrics import cutoff
from .neighbors._search import _restrict_columns

#: The ``tie_policy`` options of :class:`VGRAM` and :class:`VGRAMCor`.
TIE_POLICIES = ("random", "all")
_POLICY_CODES = _kernel.TIE_POLICIES  # the kernel's codes


#: CSR input at least this dense is encoded as a dense array: the dense kernel is ~5x faster
#: there, and a dense float64 array is no larger than CSR (8 bytes a cell vs ~12 an entry)
DENSE_FRACTION = 0.5


def _kernel_input(X):
    """X as the encoding kernels take it: CSR, unless it is dense enough to convert."""
    if sp.issparse(X) and X.nnz >= DENSE_FRACTION * X.shape[0] * X.shape[1]:
        return X.toarray()
    return X


class _Wiring:
    """How CSR rows of ``width`` features reach the synapses in the kernels: the input
    positions read (``positions``: the distinct wired features, where the rows have more
    features than synapses, else None), the synapses renumbered onto them, and their
    wiring index (``_kernel.wiring_index``). A pattern reads X only at wired positions, so
    the patterns are the same, while the kernels' per-feature work (the wiring index, a row
    buffer per thread) follows the synapses, not the declared width."""

    def __init__(self, synapses, width):
        self.width = width
        self.synapses = synapses.copy()  # what it was built from, to compare
        self.positions = None
        wired = synapses
        if width > synapses.size:
            self.positions, wired = np.unique(synapses, return_inverse=True)
            wired = wired.reshape(synapses.shape).astype(np.int32)
            width = self.positions.size
        self.wired = wired
        self.index = _kernel.wiring_index(wired, width)

    def fits(self, synapses, width):
        return width == self.width and np.array_equal(synapses, self.synapses)

    def rows(self, X):
        """The CSR rows X restricted to the wired positions."""
        return X if self.positions is None else _restrict_columns(X, self.positions)


#: Largest ``n_neurons * n_synapses``: the wiring is an int32 array of that size.
MAX_SYNAPSES = 2**31


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class _VGRAMBase(MultiLabelEstimator):
    """Shared fit/decision/predict; subclasses set ``_model`` (kernel code) and
    ``_stored_rows`` (which training documents become memory entries)."""

    _model: int | None = None
    _fitted_arrays = ("synapses_", "memory_", "label_indptr_", "label_indices_")
    _fitted_meta = ("seed_", "label_cardinality_")

    def __init__(self, n_neurons: int = 1024, n_synapses: int = 1024,
                 tie_policy: Literal["random", "all"] = "random",
                 random_state: RandomStateLike = 0) -> None:
        self.n_neurons = n_neurons
        self.n_synapses = n_synapses
        self.tie_policy = tie_policy
        self.random_state = random_state

    @staticmethod
    def _stored_rows(Y):
        return np.arange(Y.shape[0], dtype=np.int64)

    def fit(self, X: MatrixLike, Y: LabelsLike) -> "_VGRAMBase":
        """Wire the synapses and store the pattern of every training document in every neuron.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Feature vectors (e.g. tf-idf); CSR input is never densified whole, unless at
            least half of it is stored (then a dense array is smaller and ~5x faster), and
            is read at the wired positions only when it has more features than synapses.
        Y : 0/1 array-like (n_documents, n_labels) or list of label sets
            Their labels.

        Returns
        -------
        VGRAM or VGRAMCor
            The fitted model.

        Raises
        ------
        ValueError
            ``n_neurons`` or ``n_synapses`` not a positive integer, their product above
            :data:`MAX_SYNAPSES`, an unknown ``tie_policy``, invalid ``X`` or ``Y``.
        TypeError
            An invalid ``random_state``.
        """
        X, Y = self._prepare_fit(X, Y)
        self._memorize(X, Y, self.synapses_, self.seed_)
        return self

    def _check_params(self):
        n = _check_positive_int("n_neurons", self.n_neurons)
        s = _check_positive_int("n_synapses", self.n_synapses)
        if n * s > MAX_SYNAPSES:  # the wiring alone: 4 bytes per synapse
            raise ValueError(f"n_neurons * n_synapses = {n * s} synapses; at most "
                             f"{MAX_SYNAPSES} (2**31, an 8 GiB wiring) are supported")
        check_option("tie_policy", self.tie_policy, TIE_POLICIES)

    def _prepare_fit(self, X, Y):
        """Checks, then what the whole training set decides: ``classes_``,
        ``n_features_in_``, ``label_cardinality_``, and the wiring ``synapses_`` and tie-key
        seed ``seed_`` drawn from ``random_state``. Returns X as the kernels take it, and Y."""
        self._check_params()
        X, Y = self._check_fit_input(X, Y)
        if not Y.any():
            raise ValueError(f"{type(self).__name__}: no training document has a label, "
                             "nothing to store")
        X = _kernel_input(X)
        n, s = int(self.n_neurons), int(self.n_synapses)  # the wiring, then the patterns
        check_memory(4 * n * s + 8 * n * X.shape[0] * -(-s // 64),
                     f"a VG-RAM memory of {n} neurons x {s} synapses x {X.shape[0]} documents")
        rng = check_random_state(self.random_state)
        self.synapses_ = rng.integers(0, X.shape[1], size=(int(self.n_neurons),
                                                           int(self.n_synapses)), dtype=np.int32)
        self.seed_ = int(rng.integers(0, 2**63))
        self.label_cardinality_ = float(Y.sum(axis=1).mean())
        return X, Y

    def _memorize(self, X, Y, synapses, seed):
        """Store the patterns of the rows of X (kernel input) given ``synapses`` and ``seed``;
        sets every fitted array. A part of a training set may store no document."""
        rows = self._stored_rows(Y)
        memory = np.empty((synapses.shape[0], rows.size, -(-synapses.shape[1] // 64)),
                          dtype=np.uint64)
        X, wired, index = self._kernel_wiring(X, synapses)
        _kernel.encode(X, rows, wired, memory, index)
        self.synapses_ = synapses
        self.memory_ = memory
        self.label_indptr_, self.label_indices_ = self._label_lists(Y[rows])
        self.seed_ = seed

    @staticmethod
    def _label_lists(Y):
        """(indptr int64, indices int32): the labels of each row of the 0/1 matrix Y."""
        stored = Y.astype(bool)
        return (np.concatenate(([0], np.cumsum(stored.sum(axis=1)))).astype(np.int64),
                np.nonzero(stored)[1].astype(np.int32))

    def _loaded_problem(self):
        self._check_params()
        try:  # as fit checks it
            check_random_state(self.random_state)
        except (ValueError, TypeError) as exc:
            return f"invalid random_state {self.random_state!r:.80} ({exc})"
        seed, cardinality = self.seed_, self.label_cardinality_
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            return f"seed_ must be an int in [0, 2**64), got {seed!r}"
        if isinstance(cardinality, bool) or not isinstance(cardinality, (int, float)) \
                or not 0 <= cardinality <= self.classes_.shape[0]:
            return (f"label_cardinality_ must be a number in [0, n_labels], got "
                    f"{cardinality!r}")
        syn = self.synapses_
        if syn.dtype != np.int32 or syn.shape != (self.n_neurons, self.n_synapses):
            return "synapses_ is not an int32 (n_neurons, n_synapses) array"
        if syn.size and (syn.min() < 0 or syn.max() >= self.n_features_in_):
            return "synapses_ wired outside the input"
        return self._memory_problem()

    def _memory_problem(self):
        """What makes the stored memory unsearchable (a str), or None: the kernel's vote
        reads the label lists of the entries at the minimum distance without bounds checks,
        so every neuron must store a document and (VG-RAM, one entry per label) every stored
        document a label. Checked at load and before every search for beliefs, since fitted
        attributes can also be set by hand."""
        syn, mem = self.synapses_, self.memory_
        ptr, idx = self.label_indptr_, self.label_indices_
        if mem.dtype != np.uint64 or mem.ndim != 3 or mem.shape[0] != syn.shape[0] \
                or mem.shape[2] != -(-syn.shape[1] // 64):
            return "memory_ does not match synapses_ (n_neurons, n_train, ceil(n_synapses/64))"
        if mem.shape[1] == 0:
            return "memory_ stores no training document"
        if ptr.dtype != np.int64 or ptr.shape != (mem.shape[1] + 1,) or ptr[0] != 0 \
                or np.any(np.diff(ptr) < 0) or ptr[-1] != idx.size:
            return "label_indptr_ does not index label_indices_ for every stored document"
        if idx.dtype != np.int32 or idx.ndim != 1 or (idx.size and (idx.min() < 0
                                                   or idx.max() >= self.classes_.shape[0])):
            return "label_indices_ outside classes_"
        if self._model == VGRAM._model and np.any(np.diff(ptr) == 0):
            return "a stored document has no label (VG-RAM stores one entry per label)"
        return None

    @property
    def n_train_(self) -> int:
        """Number of training documents stored in every neuron."""
        return self.memory_.shape[1]

    @property
    def memory_bytes_(self) -> int:
        """Bytes held by the fitted model: the packed patterns
        (``n_neurons × n_train_ × ceil(n_synapses / 64) × 8``), the stored label lists and
        the synapse wiring (4 bytes per synapse, so the wiring adds under 10 % of the
        patterns once ``n_train_ >= 320``)."""
        return int(self.memory_.nbytes + self.label_indptr_.nbytes
                   + self.label_indices_.nbytes + self.synapses_.nbytes)

    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """Beliefs ``f(d, c)`` of every label (see the class docstring for the definition).

        Tie choices under ``tie_policy="random"`` depend on (``seed_``, row index in ``X``,
        neuron, entry), so the same ``X`` always gets the same beliefs from a fitted model.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray of float64, shape (n_documents, n_labels)
            Beliefs in [0, 1], columns in ``classes_`` order.

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            ``X`` has another number of features than the training data, or is invalid;
            an unknown ``tie_policy``; fitted attributes that leave the memory unsearchable
            (set by hand: no stored document, label lists that do not match it).
        """
        X = self._search_input(X)
        problem = self._memory_problem()
        if problem:
            raise ValueError(f"{type(self).__name__}: {problem}")
        out = np.zeros((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        self._search(X, out)
        return out

    def _search_input(self, X):
        X = _kernel_input(self._check_predict_input(X))
        check_option("tie_policy", self.tie_policy, TIE_POLICIES)
        return X

    def _search(self, X, out, row0=0, entry0=0, summary=None):
        """Run the kernel on the rows of X (from _search_input): beliefs into ``out``, or
        each (row, neuron)'s outcome into ``summary`` (``_kernel.new_summary``; ``out`` then
        of shape (0, q)), row i being test row ``row0 + i`` and stored document t number
        ``entry0 + t`` for the tie keys."""
        X, synapses, index = self._kernel_wiring(X, self.synapses_)
        _kernel.predict(X, synapses, self.memory_, self.label_indptr_, self.label_indices_,
                        self._model, _POLICY_CODES[self.tie_policy], self.seed_, out, row0,
                        entry0, summary, index)

    def _kernel_wiring(self, X, synapses):
        """X (kernel input) and ``synapses`` as the kernels take them, with the wiring index
        of CSR X (None for dense X; see :class:`_Wiring`). The wiring of CSR rows is built
        once per synapses and width and kept for the next calls (compared by content, so
        synapses changed in place are noticed), neither saved nor pickled: a serial step
        of every search otherwise (4-7 ms for 1 024 x 1 024 synapses)."""
        if not sp.issparse(X):
            return X, synapses, None
        kept = self.__dict__.get("_wiring")  # absent after unpickling
        if kept is None or not kept.fits(synapses, X.shape[1]):
            kept = self._wiring = _Wiring(synapses, X.shape[1])
        return kept.rows(X), kept.wired, kept.index

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the kept wiring stays with self
        state.pop("_wiring", None)
        return state

    def predict(self, X: MatrixLike, threshold: npt.ArrayLike | None = None) -> np.ndarray:
        """Predicted label sets: the top-ranked labels, or those above a threshold.

        With ``threshold=None`` (default) each document gets the labels ranked within the
        top ``k`` positions, ``k = max(1, round(label_cardinality_))`` (the mean number of
        labels per training document): every label whose belief is at least the k-th
        largest belief of its row, so a tie at position k is kept whole (the ``top_k``
        cutoff of :func:`fastrank.metrics.cutoff`); labels with belief 0 are never predicted.
        With a scalar or per-label ``threshold`` τ, a label is predicted when ``f >= τ``
        (melotti2009 §2.6.1).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.
        threshold : float or array of shape (n_labels,), optional
            The threshold ``τ``; None for the top-``k`` rule.

        Returns
        -------
        ndarray, shape (n_documents, n_labels)
            1 where the label is predicted; of the training target's dtype (uint8 when it
            was label sets).

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            Invalid ``X`` (see :meth:`decision_function`) or ``threshold``.
        """
        return self._as_target_dtype(self._predict_rule(self.decision_function(X), threshold))

    def _predict_rule(self, F, threshold):
        """predict's rule applied to the beliefs F."""
        if threshold is not None:
            return cutoff(F, threshold=threshold)
        k = min(F.shape[1], max(1, int(round(self.label_cardinality_))))
        kth = -np.partition(-F, k - 1, axis=1)[:, k - 1:k]
        return ((F >= kth) & (F > 0)).astype(np.uint8)


class VGRAM(_VGRAMBase):
    """VG-RAM WNN (melotti2009 §2.6.1, Table 2.2).

    Every neuron conceptually stores one entry per (training document, label of it). At test
    time each neuron finds the entries at minimum Hamming distance from the test pattern and
    outputs one label:

    * ``tie_policy="random"`` (the thesis): one entry chosen uniformly at random (by the
      smallest key, see the module docstring);
    * ``tie_policy="all"`` (deterministic): the neuron's vote is split evenly over all of
      them, each entry receiving ``1 / (number of entries at the minimum)``.

    ``f(d, c) = (votes for c) / n_neurons``, so each row of beliefs sums to 1.

    Storage: each document's pattern is stored once per neuron with the document's label
    list, instead of once per label. An entry (t, c) is at the minimum exactly when document
    t is, so the entries at the minimum are the pairs (t, c) of the tied documents; the
    random choice keys each pair by (seed, test row, neuron, t, c) (module docstring) and
    outputs the label of the smallest key — the same uniform choice among (document, label)
    entries as the thesis' per-label copies.
    Training documents without labels have no entries and are not stored.

    A scikit-learn classifier (multi-label targets only: Y a 0/1 matrix or a list of label
    sets). ``score(X, Y)`` is the tie-aware average precision of the beliefs (see
    :meth:`fastrank._base.MultiLabelEstimator.score`), not subset accuracy; the beliefs are
    vote fractions, not probabilities, so there is no ``predict_proba`` (calibrate them
    with :class:`fastrank.calibration.CalibratedClassifier`).

    Parameters
    ----------
    n_neurons : int, default 1024
        Number of neurons (the thesis' 32 × 32).
    n_synapses : int, default 1024
        Synapses per neuron (bits per stored pattern).
    tie_policy : {"random", "all"}, default "random"
        How a neuron chooses among the entries at the minimum distance (see above).
    random_state : None, int or numpy.random.Generator, default 0
        Seeds the wiring and the tie choices (the default makes fits reproducible; None
        draws fresh entropy).

    Attributes
    ----------
    synapses_ : ndarray of int32, shape (n_neurons, n_synapses)
        Input position of every synapse.
    memory_ : ndarray of uint64
        The packed patterns, shape ``(n_neurons, n_train_, ceil(n_synapses / 64))``.
    label_indptr_, label_indices_ : ndarray
        Label lists of the stored documents (CSR layout).
    n_train_ : int
        Number of stored training documents.
    memory_bytes_ : int
        Bytes held by the fitted arrays.
    seed_ : int
        Seed of the tie choices, drawn from ``random_state`` at fit.
    label_cardinality_ : float
        Mean number of labels per training document (the ``k`` of :meth:`predict`).
    classes_, n_features_in_, feature_names_in_
        As for :class:`fastrank.KNN`.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009,
       §2.6.1, Table 2.2.
    .. [2] I. Aleksander, "From WISARD to MAGNUS: a family of weightless virtual neural
       machines", in *RAM-Based Neural Networks*, World Scientific, 1998.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import VGRAM, datasets
    >>> data = datasets.load("yeast")
    >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
    >>> model = VGRAM(n_neurons=64, n_synapses=64, random_state=0).fit(train.X, train.Y)
    >>> beliefs = model.decision_function(test.X)
    >>> print(beliefs[0] * 64)    # votes of the 64 neurons for each of the 14 labels
    [ 8. 11.  5.  6.  3.  5.  6.  6.  0.  1.  1.  6.  6.  0.]
    >>> model.predict(test.X)[0]  # top round(4.25) = 4 labels, the tie at 6 votes kept whole
    array([1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0], dtype=uint8)
    >>> round(model.score(test.X, test.Y), 3)   # tie-aware average precision
    0.714
    """

    _model = _kernel.MODELS["vgram"]

    @staticmethod
    def _stored_rows(Y):
        return np.flatnonzero(Y.any(axis=1)).astype(np.int64)


class VGRAMCor(_VGRAMBase):
    """VG-RAM WNN-COR, data-correlated VG-RAM (melotti2009 §2.6.2, Table 2.3).

    Every neuron stores one entry per training document holding its whole label set (a
    document without labels is an entry that outputs the empty set). At test time each
    neuron outputs the label set of an entry at minimum Hamming distance:

    * ``tie_policy="random"`` (the thesis): one tied document chosen uniformly at random
      (by the smallest key, see the module docstring);
    * ``tie_policy="all"``: every tied document's set, weighted ``1 / (number tied)``.

    ``f(d, c) = (votes for c) / (total labels output by all neurons)``; a row whose neurons
    output no label at all is all zeros.

    Parameters and attributes as :class:`VGRAM`.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009,
       §2.6.2, Table 2.3.

    Examples
    --------
    >>> from fastrank import VGRAMCor, datasets
    >>> data = datasets.load("yeast")
    >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
    >>> model = VGRAMCor(n_neurons=64, n_synapses=64, tie_policy="all", random_state=0)
    >>> round(model.fit(train.X, train.Y).score(test.X, test.Y), 3)
    0.747
    """

    _model = _kernel.MODELS["vgram_cor"]
