"""Exact sharded search on a Dask cluster: :class:`ShardedEstimator`."""
import numbers
import operator

from typing import Any

import distributed
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from .._ext import vgram as _wnn_kernel
from .._vgram_merge import _merge_outcomes
from ..neighbors import KNN, MLkNN
from ..neighbors._search import _Base, _pow2_scaled_rows, _same_kind
from ..wnn import VGRAM, VGRAMCor
from ._client import gather, require_worker, wait

SUPPORTED = (KNN, MLkNN, VGRAM, VGRAMCor)

#: query rows per task are bounded so that a shard's partial result for one task stays
#: below about this many bytes
PARTIAL_BYTES = 1 << 26


# ---- tasks (run on the workers; module-level functions, so a lost result is recomputed
# ---- from the same arguments) ------------------------------------------------------------

def _neighbor_shard(X, offset):
    """A KNN / ML-kNN shard: its validated training rows, the global index of the first, and
    its search bases (:class:`fastrank.neighbors._search._Base`) by query kind, built on first use
    and kept with the shard on its worker."""
    return {"X": X, "offset": offset, "bases": {}}


def _shard_base(shard, Q):
    """Q converted to the kind and dtype it is searched in, and the shard's base for it
    (the shard's rows converted and prepared only the first time that kind is asked for)."""
    X = shard["X"]
    key = (sp.issparse(Q) or sp.issparse(X), Q.dtype == X.dtype == np.float32)
    base = shard["bases"].get(key)
    if base is None:
        _, B = _same_kind(Q, X)
        base = shard["bases"][key] = _Base(B)
    dtype = base.scaled.dtype
    return (sp.csr_matrix(Q, dtype=dtype) if base.sparse else Q.astype(dtype, copy=False)), base


def _neighbor_partial(shard, Q, k, exclude_self=False):
    """Top-min(k, shard size) of the rows of Q (validated features, or a shard) among the
    shard's rows, as (similarities, global indices); the rows are normalised and searched
    as :class:`fastrank.KNN` does (``_same_kind`` + ``_pow2_scaled_rows`` + ``_Base``, the base
    built once per shard and query kind). With
    ``exclude_self``, Q is this very shard (ML-kNN's self-join): no row is its own
    neighbour."""
    if isinstance(Q, dict):
        Q = Q["X"]
    Qc, base = _shard_base(shard, Q)
    k = min(k, base.n - bool(exclude_self))
    if k == 0:
        return (np.empty((Qc.shape[0], 0), base.scaled.dtype),
                np.empty((Qc.shape[0], 0), np.int64))
    sims, idx = base.search(base.scaled if exclude_self else _pow2_scaled_rows(Qc), k, exclude_self)
    return sims, idx + shard["offset"]


def _merge_neighbors(parts, k):
    """The k first of the shards' candidates by similarity descending, then global index
    ascending (the single-process order)."""
    sims = np.concatenate([p[0] for p in parts], axis=1)
    idx = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((idx, -sims))[:, :k]
    return np.take_along_axis(sims, order, 1), np.take_along_axis(idx, order, 1)


def _vgram_shard(cls, params, classes, n_features, X, Y, synapses, seed):
    """A VG-RAM shard: the network wired as the whole one, storing the shard's rows."""
    model = cls(**params)
    model.classes_, model.n_features_in_ = classes, n_features
    model._memorize(X, Y, synapses, seed)
    return model


def _vgram_partial(model, X, row0, entry0):
    """Neuron outcomes of query rows row0 .. row0 + len(X) - 1 in one shard's memory."""
    summary = _wnn_kernel.new_summary(X.shape[0], model.memory_.shape[0],
                                      model.classes_.shape[0],
                                      _wnn_kernel.TIE_POLICIES[model.tie_policy])
    model._search(X, np.zeros((0, model.classes_.shape[0])), row0, entry0, summary)
    return summary


# ---- the estimator -------------------------------------------------------------------------

class ShardedEstimator(BaseEstimator):
    """A fastrank lazy classifier whose training set is split by rows into shards kept on
    the workers of a Dask cluster; every query batch is searched in every shard and the
    partial results are merged exactly, so ``decision_function`` and ``predict`` equal,
    bit for bit, those of ``estimator`` fitted on the whole training set in one process.

    The merges (all in the single-process conventions, global training indices):

    * :class:`fastrank.KNN`: the top-k of each shard, merged by similarity descending,
      then training index ascending (``k=None``: every training document);
    * :class:`fastrank.MLkNN`: the training self-join (each training document's k nearest
      other training documents, from all shards) merged alike, its count tables summed over
      the shards; then the queries as KNN;
    * :class:`fastrank.VGRAM`, :class:`fastrank.VGRAMCor`: per neuron the minimum Hamming
      distance over the shards and, at it, the label counts of the tied documents
      (``tie_policy="all"``) or the tied entry with the smallest key ("random"; keys depend
      on the seed, test row, neuron and global entry number only).

    Exactness holds because every similarity depends only on its two rows (fixed summation
    order, see :mod:`fastrank.neighbors`), Hamming distances are integers, and votes are
    added per neuron in the kernel's order.

    Parameters
    ----------
    estimator : KNN, MLkNN, VGRAM or VGRAMCor
        Unfitted template (its parameters are used; it is not modified). VG-RAM's wiring
        and seed are drawn from its ``random_state`` once, as a single fit would.
    n_shards : int or None
        Number of shards (contiguous row ranges of sizes differing by at most 1); None:
        one per worker at fit time. The scheduler places the shards (idle workers first, so
        normally one per worker) and sends each search task to its shard's worker.
    client : distributed.Client or None
        None: the current default client (``distributed.get_client()``). A scikit-learn
        estimator: ``sklearn.base.clone`` copies ``estimator`` and shares ``client`` (a
        connection is never deep-copied).

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_
        As the estimator's.
    n_shards_ : int
        Number of shards.
    shard_bounds_ : ndarray of int64
        Shape ``(n_shards_ + 1,)``: shard i holds training rows
        ``shard_bounds_[i]:shard_bounds_[i + 1]``.
    shards_ : list of distributed.Future
        The per-shard models, on the workers.

    Each shard is built by a task whose arguments are its training rows: the scheduler keeps
    them in the task graph, so a shard lost with its worker is rebuilt on another, and a
    search running meanwhile is recomputed with the same result. (The tasks carry no worker
    restrictions: a restricted task lost with every worker is not rescheduled when new
    workers join.) Training data never returns to the client.

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from fastrank import KNN, datasets
    >>> from fastrank.dask import ShardedEstimator
    >>> data = datasets.load("yeast")
    >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster, Client(cluster):
    ...     sharded = ShardedEstimator(KNN(k=10), n_shards=2).fit(train.X, train.Y)
    ...     beliefs = sharded.decision_function(test.X)
    >>> sharded.shard_bounds_
    array([   0, 1000, 2000])
    >>> whole = KNN(k=10).fit(train.X, train.Y).decision_function(test.X)
    >>> bool(np.array_equal(beliefs, whole))   # bit for bit
    True
    """

    def __init__(self, estimator: Any, n_shards: int | None = None,
                 client: distributed.Client | None = None) -> None:
        self.estimator = estimator
        self.n_shards = n_shards
        self.client = client

    def __sklearn_clone__(self) -> "ShardedEstimator":
        """An unfitted copy: the estimator cloned, the same client (not a deep copy)."""
        return type(self)(clone(self.estimator), n_shards=self.n_shards, client=self.client)

    # ---- fit -------------------------------------------------------------------------------

    def fit(self, X: Any, Y: Any) -> "ShardedEstimator":
        """Split the training set into shards and build each shard's model on a worker.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Training documents.
        Y : 0/1 array (dense or sparse) of shape (n_documents, n_labels), or label sets
            Their labels.

        Returns
        -------
        ShardedEstimator
            The fitted estimator.

        Raises
        ------
        TypeError
            ``estimator`` is not one of KNN, MLkNN, VGRAM, VGRAMCor; ``n_shards`` is not
            an int.
        ValueError
            No Dask client; ``n_shards`` < 1 or more than the training documents; bad
            training data or parameters (as the estimator's fit).
        fastrank.dask.NoWorkersError
            The cluster had no running worker for :func:`fastrank.dask.no_workers_timeout`
            seconds.
        """
        if not isinstance(self.estimator, SUPPORTED):
            raise TypeError("ShardedEstimator supports fastrank KNN, MLkNN, VGRAM and VGRAMCor "
                            f"instances, got {type(self.estimator).__name__}")
        client = self._get_client()
        model = type(self.estimator)(**self.estimator.get_params())
        if isinstance(model, (VGRAM, VGRAMCor)):
            X, Y = model._prepare_fit(X, Y)
        else:
            model._check_params()
            X, Y = model._check_fit_input(X, Y)
            k = model._training_k(X.shape[0])
            model.Y_ = Y
        bounds = self._bounds(X.shape[0], client)
        if isinstance(model, (VGRAM, VGRAMCor)):
            shards = self._vgram_shards(client, model, X, Y, bounds)
        else:
            shards = [client.submit(_neighbor_shard, X[lo:hi], int(lo))
                      for lo, hi in zip(bounds[:-1], bounds[1:])]
            if isinstance(model, MLkNN):
                self._mlknn_tables(client, model, shards, Y, bounds, k)
        wait(client, shards)  # built (the model stays on its worker), or its error raised
        self._model = model
        self._client = client
        self.shards_ = shards
        self.shard_bounds_ = bounds
        self.n_shards_ = len(shards)
        self.classes_ = model.classes_
        self.n_features_in_ = model.n_features_in_
        if hasattr(model, "feature_names_in_"):
            self.feature_names_in_ = model.feature_names_in_
        return self

    def _bounds(self, n, client):
        """Row boundaries of the shards (sizes differing by at most 1)."""
        n_shards = self.n_shards
        if n_shards is None:
            require_worker(client)
            # client.nthreads() asks the scheduler (scheduler_info() may be out of date)
            n_shards = len(client.nthreads())
        if isinstance(n_shards, bool) or not isinstance(n_shards, numbers.Integral):
            raise TypeError(f"n_shards must be a positive int or None, got {n_shards!r}")
        if not 1 <= n_shards <= n:
            raise ValueError(f"n_shards must be between 1 and the {n} training documents, "
                             f"got {n_shards}")
        return np.array([i * n // n_shards for i in range(n_shards + 1)], dtype=np.int64)

    def _vgram_shards(self, client, model, X, Y, bounds):
        """One VG-RAM model per shard, wired as ``model``; sets the whole memory's label
        lists on ``model`` and the global number of each shard's first stored document."""
        stored = model._stored_rows(Y)
        model.label_indptr_, model.label_indices_ = model._label_lists(Y[stored])
        self._entry0 = np.searchsorted(stored, bounds)
        return [client.submit(_vgram_shard, type(model), model.get_params(), model.classes_,
                              model.n_features_in_, X[lo:hi], Y[lo:hi], model.synapses_,
                              model.seed_)
                for lo, hi in zip(bounds[:-1], bounds[1:])]

    @staticmethod
    def _mlknn_tables(client, model, shards, Y, bounds, k):
        """ML-kNN's tables from the training self-join: the rows of every shard searched
        in every shard (excluding themselves in their own), merged, counted per shard on
        the workers; the count tables summed here."""
        tables = []
        for s, query in enumerate(shards):
            parts = [client.submit(_neighbor_partial, base, query, k, s == t)
                     for t, base in enumerate(shards)]
            idx = client.submit(operator.getitem, client.submit(_merge_neighbors, parts, k), 1)
            tables.append(client.submit(MLkNN._count_tables, model, idx,
                                        Y[bounds[s]:bounds[s + 1]]))
        tables = gather(client, tables)
        model._set_tables(sum(t[0] for t in tables), sum(t[1] for t in tables))

    def _get_client(self):
        if self.client is not None:
            if not isinstance(self.client, distributed.Client):
                raise TypeError(f"client must be a distributed.Client or None, got "
                                f"{type(self.client).__name__}")
            return self.client
        try:
            return distributed.get_client()
        except ValueError:
            raise ValueError("ShardedEstimator needs a Dask client: pass client=... or create a "
                             "distributed.Client first") from None

    # ---- queries ---------------------------------------------------------------------------

    def _check_fitted(self):
        check_is_fitted(self, "shards_")

    def _neighbors(self, X, k):
        """Merged top-k (similarities, global indices) of the validated query rows X. Query
        tasks get fresh keys (pure=False): every call searches anew."""
        client = self._client
        step = max(1, PARTIAL_BYTES // (16 * k))
        merged = []
        for lo in range(0, X.shape[0], step):
            batch = X[lo:lo + step]
            parts = [client.submit(_neighbor_partial, shard, batch, k, pure=False)
                     for shard in self.shards_]
            merged.append(client.submit(_merge_neighbors, parts, k, pure=False))
        sims, idx = zip(*gather(client, merged))
        return np.concatenate(sims), np.concatenate(idx)

    def _vgram_beliefs(self, X):
        model, client = self._model, self._client
        n_neurons, q = model.synapses_.shape[0], model.classes_.shape[0]
        per_row = n_neurons * (4 * q + 24 if model.tie_policy == "all" else 24)
        step = max(1, PARTIAL_BYTES // per_row)
        live = [(shard, e0) for shard, e0, e1 in zip(self.shards_, self._entry0[:-1],
                                                      self._entry0[1:]) if e1 > e0]
        merged = []
        for lo in range(0, X.shape[0], step):
            batch = X[lo:lo + step]
            parts = [client.submit(_vgram_partial, shard, batch, lo, int(e0), pure=False)
                     for shard, e0 in live]
            merged.append(client.submit(_merge_outcomes, parts, model._model, model.tie_policy,
                                        model.label_indptr_, model.label_indices_, n_neurons,
                                        q, pure=False))
        return np.concatenate(gather(client, merged))

    def _decide(self, X):
        """(beliefs, single-process predictions where they come with the beliefs)."""
        self._check_fitted()
        model = self._model
        if isinstance(model, (VGRAM, VGRAMCor)):
            return self._vgram_beliefs(model._search_input(X)), None
        X = model._check_predict_input(X)
        if isinstance(model, MLkNN):
            k = model.cond_true_.shape[1] - 1
        else:
            k = model._training_k(model.Y_.shape[0])
        return model._from_neighbors(*self._neighbors(X, k))

    def decision_function(self, X: Any) -> np.ndarray:
        """Beliefs (float64, n_documents × n_labels), equal to the estimator's fitted on
        the whole training set in one process.

        Raises
        ------
        NotFittedError
            Not fitted.
        ValueError
            Invalid ``X`` (as the estimator's).
        fastrank.dask.NoWorkersError
            As for :meth:`fit`.
        """
        return self._decide(X)[0]

    def predict(self, X: Any, threshold: Any = None) -> np.ndarray:
        """0/1 predictions by the estimator's rule; ``threshold`` only for VG-RAM (see
        :meth:`fastrank.VGRAM.predict`).

        Raises
        ------
        NotFittedError
            Not fitted.
        TypeError
            A ``threshold`` for KNN or ML-kNN.
        ValueError
            Invalid ``X`` (as the estimator's).
        fastrank.dask.NoWorkersError
            As for :meth:`fit`.
        """
        self._check_fitted()
        if isinstance(self._model, (VGRAM, VGRAMCor)):
            assigned = self._model._predict_rule(self.decision_function(X), threshold)
        elif threshold is not None:
            raise TypeError(f"threshold applies to VG-RAM only, not to "
                            f"{type(self._model).__name__}")
        else:
            assigned = self._decide(X)[1]
        return self._model._as_target_dtype(assigned)
