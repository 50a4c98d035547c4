"""What the mergeable evaluators (:class:`Evaluator`, :class:`TopKEvaluator`) share: the
global rows a state has seen, their total weight, sums over rows added under a lock, and
the merge of two states of disjoint rows."""
import copy
import numbers
import threading

import numpy as np
import scipy.sparse as sp

from .._validation import check_real_dtype

MAX_ROW = 2**63 - 1  # global row numbers are 64-bit in the kernels


def check_row(first_row, n):
    """``first_row`` as an int; the chunk's ``n`` rows must end at or before ``MAX_ROW``."""
    if isinstance(first_row, bool) or not isinstance(first_row, numbers.Integral):
        raise TypeError(f"first_row must be an integer, got {type(first_row).__name__}")
    if first_row < 0:
        raise ValueError(f"first_row must be >= 0, got {first_row!r}")
    if first_row + n > MAX_ROW:
        raise ValueError(f"first_row + the chunk's {n} rows must be at most 2**63 - 1, got "
                         f"first_row={first_row!r}")
    return int(first_row)


def empty_chunk_labels(y_true, y_score):
    """The number of labels of a chunk with no rows, checked as far as an empty chunk can be
    (2-D real beliefs, truth with no rows and as many labels); None when it has rows."""
    score = y_score if sp.issparse(y_score) else np.asarray(y_score)
    if score.ndim != 2 or score.shape[0] != 0:
        return None
    check_real_dtype(score.dtype, "y_score")
    truth = y_true if sp.issparse(y_true) else np.asarray(y_true)
    if truth.dtype != bool:
        check_real_dtype(truth.dtype, "y_true")
    if truth.shape not in ((0,), score.shape):  # (0,): an empty list of label sets
        raise ValueError(f"y_true has shape {truth.shape} but y_score has shape {score.shape}")
    if score.shape[1] == 0:
        raise ValueError(f"y_score is empty: shape {score.shape}")
    return score.shape[1]


def add_interval(intervals, lo, hi, what):
    """``intervals`` (sorted, disjoint, adjacent ones joined) with ``[lo, hi)`` added;
    ValueError when it overlaps rows already there."""
    for a, b in intervals:
        if lo < b and a < hi:
            raise ValueError(f"{what} rows {lo}..{hi - 1} overlap rows {a}..{b - 1} already "
                             "evaluated; give each chunk its global first_row")
    out = []
    for a, b in sorted(intervals + [(lo, hi)]):
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _add(a, b):
    if a is None or b is None:
        return b if a is None else a
    return a + b


def _difference(name, a, b):
    """None when the settings ``a`` and ``b`` of ``name`` agree, else what differs: arrays
    compare by value, nested evaluators setting by setting (``at_k.k``)."""
    if isinstance(a, Mergeable) and type(a) is type(b):
        return next((d for n in a._CONFIG
                     if (d := _difference(f"{name}.{n}", getattr(a, n), getattr(b, n)))), None)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        same = isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
        return None if same else name
    if a == b:
        return None
    hint = " (give both the same int random_state, or make one with empty_copy())" \
        if name.endswith("seed") else ""
    return f"{name}: {a!r} and {b!r}{hint}"


class Mergeable:
    """Base of the mergeable evaluators: the global rows seen (sorted disjoint ``(start,
    stop)`` ranges), their total weight and the state arrays named in ``_SUMS`` — sums over
    rows, None before the first — so two states of disjoint rows merge by adding them.

    The state is replaced, never changed in place, under ``_lock``: :meth:`_add_rows`
    reserves a chunk's rows under it (``_pending`` holds those still computing, so that
    concurrent updates cannot overlap), computes the chunk's sums without it and adds them
    under it. Copies and pickles take the lock, so they see a consistent state.
    """

    _CONFIG: tuple[str, ...] = ()  # what two evaluators must share to merge
    _SUMS: tuple[str, ...] = ()
    n_labels: int | None
    _rows: list[tuple[int, int]]
    _next_row: int
    _weight: float

    def _init_rows(self):
        self._rows = []
        self._next_row = 0
        self._weight = 0.0  # total weight of the rows seen (their number, unweighted)
        for name in self._SUMS:
            setattr(self, name, None)
        self._init_lock()

    def _init_lock(self):
        self._lock = threading.Lock()
        self._pending = []

    def __getstate__(self):
        with self._lock:
            state = self.__dict__.copy()
        del state["_lock"], state["_pending"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_lock()

    @property
    def n_rows(self) -> int:
        """Number of rows (documents) seen."""
        return sum(b - a for a, b in self._rows)

    @property
    def rows(self) -> list[tuple[int, int]]:
        """The global row numbers seen, as sorted disjoint ``(start, stop)`` ranges."""
        return list(self._rows)

    def empty_copy(self):
        """A new evaluator with this one's configuration and seed, and no rows: the way to
        make evaluators that can be merged when ``random_state`` was None or a Generator."""
        out = copy.copy(self)
        out._rows, out._next_row, out._weight = [], 0, 0.0
        for name in self._SUMS:
            setattr(out, name, None)
        return out

    def _add_rows(self, first_row, n, q, weight, chunk_sums):
        """Reserve the chunk's global rows ``[start, start + n)`` (``start``: ``first_row``,
        or right after the previous chunk) and its number of labels ``q``, call
        ``chunk_sums(start)`` — a dict ``{name in _SUMS: array}`` — without the lock, and
        add the sums and ``weight`` (the chunk's weights or None) under it; the rows are
        given back if it raises. A chunk with no rows changes nothing."""
        if first_row is not None:
            check_row(first_row, n)
        with self._lock:
            if self.n_labels is not None and q != self.n_labels:
                raise ValueError(f"the chunk has {q} labels; this evaluator has "
                                 f"{self.n_labels}")
            if n == 0:
                return
            start = check_row(self._next_row if first_row is None else first_row, n)
            add_interval(self._rows + self._pending, start, start + n, "chunk")
            self._pending.append((start, start + n))
            before = self.n_labels, self._next_row
            self.n_labels, self._next_row = q, start + n
        sums = None
        try:
            sums = chunk_sums(start)
        finally:
            with self._lock:
                self._pending.remove((start, start + n))
                if sums is None:
                    if self._next_row == start + n:
                        self._next_row = before[1]
                    if not (self._rows or self._pending):
                        self.n_labels = before[0]
                else:
                    self._weight += n if weight is None else float(weight.sum())
                    self._rows = add_interval(self._rows, start, start + n, "chunk")
                    for name, value in sums.items():
                        setattr(self, name, _add(getattr(self, name), value))

    def _merged(self, other):
        """A new evaluator with the rows and sums of both; ValueError unless the
        configurations and numbers of labels agree and the rows are disjoint."""
        if type(other) is not type(self):
            name = type(self).__name__
            raise TypeError(f"can only merge another {name}, got {type(other).__name__}")
        a, b = copy.copy(self), copy.copy(other)  # consistent states, should updates run
        for name in self._CONFIG:
            what = _difference(name, getattr(a, name), getattr(b, name))
            if what:
                raise ValueError(f"cannot merge evaluators with different {what}")
        if None not in (a.n_labels, b.n_labels) and a.n_labels != b.n_labels:
            raise ValueError(f"cannot merge evaluators with different n_labels: "
                             f"{a.n_labels} and {b.n_labels}")
        rows = a._rows
        for lo, hi in b._rows:
            rows = add_interval(rows, lo, hi, "merged")
        out = a.empty_copy()
        out.n_labels = a.n_labels if a.n_labels is not None else b.n_labels
        out._rows, out._next_row = rows, max(a._next_row, b._next_row)
        out._weight = a._weight + b._weight
        for name in self._SUMS:
            setattr(out, name, _add(getattr(a, name), getattr(b, name)))
        return out

    def _seen(self):
        """A consistent copy of the state (should updates run); ValueError unless it has
        rows of positive total weight."""
        state = copy.copy(self)
        if not state._rows:
            raise ValueError("the evaluator has seen no rows; call update() first")
        if not state._weight > 0:
            raise ValueError("the rows seen have a total sample_weight of 0")
        return state
