"""``fastrank.dask.evaluate``: the study metrics over Dask arrays chunked by rows."""
import math
from collections.abc import Sequence
from typing import Any

import dask
import dask.array as da
import distributed
from dask.base import get_scheduler

from .._parallel import num_threads
from .._typing import RandomStateLike
from ..metrics import Evaluation, Evaluator
from ..metrics._common import TIES
from ._client import gather


def _check_row_chunked(name, arr):
    if not isinstance(arr, da.Array):
        raise TypeError(f"{name} must be a dask.array.Array chunked by rows, got "
                        f"{type(arr).__name__} (use fastrank.metrics.evaluate for in-memory "
                        "arrays, or dask.array.from_array)")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (documents x labels), got {arr.ndim}-D")
    if any(math.isnan(c) for c in arr.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() "
                         "first (each chunk's first row number must be known)")
    if len(arr.chunks[1]) != 1:
        raise ValueError(f"{name} is chunked along labels ({len(arr.chunks[1])} column "
                         f"chunks); every chunk must hold whole rows: "
                         f"{name}.rechunk({{1: -1}})")


def _evaluate_chunk(template, y_true, y_score, sample_weight, first_row, n_jobs):
    ev = template.empty_copy()
    if y_score.shape[0] == 0:
        return ev
    try:
        with num_threads(n_jobs):
            return ev.update(y_true, y_score, first_row=first_row, sample_weight=sample_weight)
    except ValueError as exc:  # name the rows: the kernel's row numbers are the chunk's
        raise ValueError(f"in the chunk of rows {first_row}..{first_row + y_score.shape[0] - 1}"
                         f": {exc}") from None


def _merge_all(*evaluators):
    out = evaluators[0]
    for ev in evaluators[1:]:
        out = out.merge(ev)
    return out


def evaluate(y_true: Any, y_score: Any, ties: str | Sequence[str] = TIES,
             cutoff: str | int = "perfect", random_state: RandomStateLike = 0,
             zero_division: float = 0.0, n_draws: int = 100, sample_weight: Any = None,
             n_labels: int | None = None, split_every: int = 8, n_jobs: int = 1,
             at_k: Any = None) -> Evaluation:
    """:func:`fastrank.metrics.evaluate` over Dask arrays chunked by rows.

    Each row chunk is evaluated by one task into a :class:`fastrank.metrics.Evaluator`
    (given the chunk's global first row), and the states are merged by a tree reduction;
    only the small states travel, never the beliefs. The result equals the in-memory
    ``evaluate(y_true.compute(), y_score.compute(), ...)`` with the same parameters, to
    rounding (1e-12), whatever the chunks and the workers, random ranking types included.
    With no ``distributed`` client active it runs on Dask's local scheduler, so beliefs
    larger than memory — e.g. generated lazily per chunk — are evaluated out of core with
    memory bounded by a few chunks per thread.

    Parameters
    ----------
    y_true : dask.array.Array (n_documents, n_labels) of 0/1
        Chunked by rows exactly like ``y_score``; chunks may be NumPy or SciPy sparse.
    y_score : dask.array.Array (n_documents, n_labels) of beliefs
        Chunked by rows only (one chunk along the labels); chunks may be NumPy or SciPy
        sparse.
    ties : str or sequence of str, default the four ranking types of the thesis
        As for :func:`fastrank.metrics.evaluate`.
    cutoff : "perfect" or int, default "perfect"
        As for :func:`fastrank.metrics.evaluate`.
    random_state : None, int or numpy.random.Generator, default 0
        As for :func:`fastrank.metrics.evaluate`.
    zero_division : float, default 0.0
        As for :func:`fastrank.metrics.evaluate`.
    n_draws : int, default 100
        As for :func:`fastrank.metrics.evaluate` (only weighted rows are drawn).
    sample_weight : dask.array.Array (n_documents,), optional
        Per-document weights, chunked like the rows of ``y_score``.
    n_labels : int, optional
        Expected number of labels (checked).
    split_every : int >= 2, default 8
        Fan-in of the tree reduction.
    n_jobs : int, default 1
        OpenMP threads of each chunk's kernel (the parallelism comes from the tasks).
    at_k : int, sequence of int, dict or fastrank.metrics.TopKEvaluator, optional
        Also the top-k metrics, in ``result.at_k``, as for
        :func:`fastrank.metrics.evaluate`; with ``ties=()`` only these (the way to evaluate
        extreme multi-label sets, whose beliefs are sparse chunks of each document's
        scored labels).

    Returns
    -------
    fastrank.metrics.Evaluation

    Raises
    ------
    TypeError
        An argument that is not a Dask array.
    ValueError
        Column-chunked arrays, row chunks of ``y_true`` and ``y_score`` that differ, unknown
        chunk sizes, or anything :func:`fastrank.metrics.evaluate` refuses.
    fastrank.dask.NoWorkersError
        With a ``distributed`` client, a cluster without a running worker for
        :func:`fastrank.dask.no_workers_timeout` seconds.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from fastrank import metrics
    >>> from fastrank import dask as fdask
    >>> cells = np.arange(600 * 6).reshape(600, 6)
    >>> y_true, y_score = (cells % 3 == 0).astype(np.uint8), (cells % 7) / 7   # many ties
    >>> chunked = fdask.evaluate(da.from_array(y_true, chunks=(100, 6)),
    ...                          da.from_array(y_score, chunks=(100, 6)),
    ...                          ties=("ordinal", "modified"))
    >>> whole = metrics.evaluate(y_true, y_score, ties=("ordinal", "modified"))
    >>> bool(np.allclose(chunked.values, whole.values, rtol=1e-12))
    True
    """
    _check_row_chunked("y_score", y_score)
    _check_row_chunked("y_true", y_true)
    if y_true.shape != y_score.shape:
        raise ValueError(f"y_true has shape {y_true.shape} but y_score has {y_score.shape}")
    if y_true.chunks[0] != y_score.chunks[0]:
        raise ValueError("y_true and y_score must be chunked alike along the rows "
                         f"(y_true: {_describe(y_true.chunks[0])}, y_score: "
                         f"{_describe(y_score.chunks[0])}); rechunk one like the other: "
                         "y_true.rechunk(y_score.chunks)")
    if y_score.shape[0] == 0:
        raise ValueError("y_score has no rows")
    if n_labels is not None and n_labels != y_score.shape[1]:
        raise ValueError(f"y_score has {y_score.shape[1]} labels, n_labels={n_labels!r}")
    if sample_weight is None:
        weights = [None] * len(y_score.chunks[0])
    else:
        if not isinstance(sample_weight, da.Array) or sample_weight.ndim != 1 \
                or sample_weight.chunks[0] != y_score.chunks[0]:
            raise ValueError("sample_weight must be a 1-D dask array chunked like the rows of "
                             "y_score: sample_weight.rechunk((y_score.chunks[0],))")
        weights = sample_weight.to_delayed().ravel()
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an int >= 2, got {split_every!r}")
    template = Evaluator(ties, n_labels=y_score.shape[1], random_state=random_state,
                         n_draws=n_draws, cutoff=cutoff, zero_division=zero_division,
                         at_k=at_k)
    first_rows = [0]
    for c in y_score.chunks[0][:-1]:
        first_rows.append(first_rows[-1] + c)
    task = dask.delayed(_evaluate_chunk, pure=True)
    level = [task(template, t, s, w, r, n_jobs) for t, s, w, r in
             zip(y_true.to_delayed().ravel(), y_score.to_delayed().ravel(), weights, first_rows)]
    merge = dask.delayed(_merge_all, pure=True)
    while len(level) > 1:
        level = [merge(*level[i:i + split_every]) for i in range(0, len(level), split_every)]
    client = getattr(get_scheduler(collections=level), "__self__", None)  # dask.compute's
    if isinstance(client, distributed.Client):
        (state,) = gather(client, [client.compute(level[0])])
    else:
        (state,) = dask.compute(level[0])
    return state.result()


def _describe(chunks):
    return f"{len(chunks)} chunks {chunks[:3]}{'...' if len(chunks) > 3 else ''}"
