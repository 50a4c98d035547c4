"""VG-RAM weightless neural networks for multi-label text categorisation (melotti2009 §2.6,
SPEC §5): :class:`VGRAM` (VG-RAM WNN, §2.6.1) and :class:`VGRAMCor` (VG-RAM WNN-COR, §2.6.2).

A network of ``n_neurons`` neurons, each with ``n_synapses`` synapses wired to random input
positions ``synapses_[n]`` (uniform, with replacement, from ``random_state``). Synapse ``i``
and the next one form a Minchinton cell: bit ``i`` of neuron ``n``'s pattern of ``x`` is
``x[s_i] > x[s_{i+1}]``, the last synapse pairing with the first. Patterns are packed into
``ceil(n_synapses / 64)`` uint64 words, so the memory scales as bits.

Training stores every training document's pattern in every neuron; testing finds, per neuron,
the stored entries at minimum Hamming distance from the test pattern and lets the neuron
output their label(s). The search runs in a compiled kernel (OpenMP over batches of test
documents, GIL released). On x86 CPUs with AVX2, when ``ceil(n_synapses / 64)`` is a
multiple of 4 up to 32 (e.g. 256, 512, 1024 or 2048 synapses) and a batch has 6 or more
documents, it is a bit-sliced search that computes a test pattern's distances to 256
stored patterns at once, with work proportional to the pattern's set bits (fast on the
sparse patterns of text); otherwise popcount scans (the POPCNT instruction on x86-64, a
portable routine elsewhere). Both find the same entries. Randomness for tied entries comes
from a generator seeded by ``(seed_, test row, neuron)``: results are reproducible for a
``random_state`` and do not depend on the number of threads.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from ._base import MultiLabelEstimator
from ._ext import wnn as _kernel
from ._validation import check_option, check_random_state
from .metrics import cutoff

TIE_POLICIES = ("random", "all")
_POLICY_CODES = {"random": 0, "all": 1}


#: CSR input at least this dense is encoded as a dense array: the dense kernel is ~5x faster
#: there, and a dense float64 array is no larger than CSR (8 bytes a cell vs ~12 an entry)
DENSE_FRACTION = 0.5


def _kernel_input(X):
    """X as the encoding kernels take it: CSR, unless it is dense enough to convert."""
    if sp.issparse(X) and X.nnz >= DENSE_FRACTION * X.shape[0] * X.shape[1]:
        return X.toarray()
    return X


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class _VGRAMBase(MultiLabelEstimator):
    """Shared fit/decision/predict; subclasses set ``_model`` (kernel code) and
    ``_stored_rows`` (which training documents become memory entries)."""

    _model = None
    _fitted_arrays = ("synapses_", "memory_", "label_indptr_", "label_indices_")
    _fitted_meta = ("seed_", "label_cardinality_")

    def __init__(self, n_neurons=1024, n_synapses=1024, tie_policy="random",
                 random_state=None):
        self.n_neurons = n_neurons
        self.n_synapses = n_synapses
        self.tie_policy = tie_policy
        self.random_state = random_state

    @staticmethod
    def _stored_rows(Y):
        return np.arange(Y.shape[0], dtype=np.int64)

    def fit(self, X, Y):
        """Wire the synapses and store the pattern of every training document in every neuron.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Feature vectors (e.g. tf-idf); CSR input is never densified whole, unless at
            least half of it is stored (then a dense array is smaller and ~5x faster).
        Y : 0/1 array-like (n_documents, n_labels) or list of label sets
        """
        n_neurons = _check_positive_int("n_neurons", self.n_neurons)
        n_synapses = _check_positive_int("n_synapses", self.n_synapses)
        check_option("tie_policy", self.tie_policy, TIE_POLICIES)
        X, Y = self._check_fit_input(X, Y)
        X = _kernel_input(X)
        rng = check_random_state(self.random_state)
        synapses = rng.integers(0, X.shape[1], size=(n_neurons, n_synapses), dtype=np.int32)
        seed = int(rng.integers(0, 2**63))
        rows = self._stored_rows(Y)
        if rows.size == 0:
            raise ValueError(f"{type(self).__name__}: no training document has a label, "
                             "nothing to store")
        words = -(-n_synapses // 64)
        memory = np.empty((n_neurons, rows.size, words), dtype=np.uint64)
        if sp.issparse(X):
            _kernel.encode_csr(X.data, X.indices, X.indptr, X.shape[1], rows, synapses,
                               *_kernel.wiring_index(synapses, X.shape[1]), memory)
        else:
            _kernel.encode_dense(X, rows, synapses, memory)
        stored = Y[rows].astype(bool)
        self.synapses_ = synapses
        self.memory_ = memory
        self.label_indptr_ = np.concatenate(([0], np.cumsum(stored.sum(axis=1)))).astype(np.int64)
        self.label_indices_ = np.nonzero(stored)[1].astype(np.int32)
        self.seed_ = seed
        self.label_cardinality_ = float(Y.sum(axis=1).mean())
        return self

    def _loaded_problem(self):
        syn, mem = self.synapses_, self.memory_
        ptr, idx = self.label_indptr_, self.label_indices_
        if syn.dtype != np.int32 or syn.ndim != 2 or syn.shape[1] < 1:
            return "synapses_ is not an int32 (n_neurons, n_synapses) array"
        if syn.size and (syn.min() < 0 or syn.max() >= self.n_features_in_):
            return "synapses_ wired outside the input"
        if mem.dtype != np.uint64 or mem.ndim != 3 or mem.shape[0] != syn.shape[0] \
                or mem.shape[2] != -(-syn.shape[1] // 64):
            return "memory_ does not match synapses_ (n_neurons, n_train, ceil(n_synapses/64))"
        if ptr.dtype != np.int64 or ptr.shape != (mem.shape[1] + 1,) or ptr[0] != 0 \
                or np.any(np.diff(ptr) < 0) or ptr[-1] != idx.shape[0]:
            return "label_indptr_ does not index label_indices_ for every stored document"
        if idx.dtype != np.int32 or (idx.size and (idx.min() < 0
                                                   or idx.max() >= self.classes_.shape[0])):
            return "label_indices_ outside classes_"
        return None

    @property
    def n_train_(self):
        """Number of training documents stored in every neuron."""
        return self.memory_.shape[1]

    @property
    def memory_bytes_(self):
        """Bytes held by the fitted model: the packed patterns
        (n_neurons × n_train_ × ceil(n_synapses / 64) × 8), the stored label lists and the
        synapse wiring (4 bytes per synapse, so the wiring adds under 10 % of the patterns
        once n_train_ >= 320)."""
        return int(self.memory_.nbytes + self.label_indptr_.nbytes
                   + self.label_indices_.nbytes + self.synapses_.nbytes)

    def decision_function(self, X):
        """Beliefs ``f(d, c)`` in [0, 1], float64 array (n_documents, n_labels), columns in
        ``classes_`` order (see the class docstring for the definition). Tie choices under
        ``tie_policy="random"`` depend on (``seed_``, row index in ``X``, neuron), so the same
        ``X`` always gets the same beliefs from a fitted model."""
        X = _kernel_input(self._check_predict_input(X))
        check_option("tie_policy", self.tie_policy, TIE_POLICIES)
        out = np.zeros((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        args = (self.synapses_, self.memory_, self.label_indptr_, self.label_indices_,
                self._model, _POLICY_CODES[self.tie_policy], self.seed_, out)
        if sp.issparse(X):
            _kernel.predict_csr(X.data, X.indices, X.indptr, X.shape[1],
                                *_kernel.wiring_index(self.synapses_, X.shape[1]), *args)
        else:
            _kernel.predict_dense(X, *args)
        return out

    def predict(self, X, threshold=None):
        """0/1 predictions (n_documents, n_labels).

        With ``threshold=None`` (default) each document gets the labels ranked within the
        top ``k`` positions, ``k = max(1, round(label_cardinality_))`` (the mean number of
        labels per training document): every label whose belief is at least the k-th
        largest belief of its row, so a tie at position k is kept whole (SPEC §3 ``top_k``);
        labels with belief 0 are never predicted. With a scalar or per-label ``threshold``
        τ, a label is predicted when ``f >= τ`` (melotti2009 §2.6.1).
        """
        F = self.decision_function(X)
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

    * ``tie_policy="random"`` (the thesis): one entry chosen uniformly at random;
    * ``tie_policy="all"`` (deterministic): the neuron's vote is split evenly over all of
      them, each entry receiving ``1 / (number of entries at the minimum)``.

    ``f(d, c) = (votes for c) / n_neurons``, so each row of beliefs sums to 1.

    Storage: each document's pattern is stored once per neuron with the document's label
    list, instead of once per label. An entry (t, c) is at the minimum exactly when document
    t is, so the entries at the minimum are the pairs (t, c) of the tied documents; the
    kernel draws r uniformly below their number, walking them by document then label — the
    same uniform choice among (document, label) entries as the thesis' per-label copies.
    Training documents without labels have no entries and are not stored.

    Parameters
    ----------
    n_neurons : int, default 1024 (32 × 32)
    n_synapses : int, default 1024
    tie_policy : {"random", "all"}, default "random"
    random_state : None, int or numpy.random.Generator
        Seeds the wiring and the tie choices.

    Attributes
    ----------
    synapses_ : int32 array (n_neurons, n_synapses) -- input position of every synapse
    memory_ : uint64 array (n_neurons, n_train_, ceil(n_synapses / 64)) -- packed patterns
    label_indptr_, label_indices_ : label lists of the stored documents (CSR layout)
    classes_, n_features_in_, n_train_, memory_bytes_, seed_, label_cardinality_
    """

    _model = 0

    @staticmethod
    def _stored_rows(Y):
        return np.flatnonzero(Y.any(axis=1)).astype(np.int64)


class VGRAMCor(_VGRAMBase):
    """VG-RAM WNN-COR, data-correlated VG-RAM (melotti2009 §2.6.2, Table 2.3).

    Every neuron stores one entry per training document holding its whole label set (a
    document without labels is an entry that outputs the empty set). At test time each
    neuron outputs the label set of an entry at minimum Hamming distance:

    * ``tie_policy="random"`` (the thesis): one tied document chosen uniformly at random;
    * ``tie_policy="all"``: every tied document's set, weighted ``1 / (number tied)``.

    ``f(d, c) = (votes for c) / (total labels output by all neurons)``; a row whose neurons
    output no label at all is all zeros.

    Parameters and attributes as :class:`VGRAM`.
    """

    _model = 1
