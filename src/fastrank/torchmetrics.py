"""The study metrics as a ``torchmetrics.Metric`` (``pip install "fastrank-mlc[torch]"``).

:class:`StudyMetrics` accumulates, batch after batch, the state of
:class:`fastrank.metrics.Evaluator` -- per ranking type a few sums over documents, per label
the contingency counts, float64 tensors that processes reduce by summing; with
``"expected"`` also the counts of the labels of the tie groups cut by the predicted sets,
per label and per probability of being predicted (a list of int64 tensors that processes
concatenate), from which the macro precision and F1 by category are exact. Its memory is
O(n_labels) whatever the number of rows, plus under ``"expected"`` O(the distinct (label,
probability) pairs seen) and, for rows weighing neither 0 nor 1, O(n_draws * n_labels).
Under DistributedDataParallel its result is that of :func:`fastrank.metrics.evaluate` on
every process's rows together. See the user guide, "Inside other tools' loops".
"""
from collections.abc import Sequence
from typing import Any

import numpy as np

try:
    import torch
    from torchmetrics import Metric
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('fastrank.torchmetrics needs PyTorch and torchmetrics: '
                      'pip install "fastrank-mlc[torch]"') from exc

from .metrics import METRIC_KEYS, Evaluation, Evaluator
from .metrics._boundary import BoundaryCounts
from .metrics._common import TIES

#: Row numbers reserved for each process: process ``r`` numbers its rows from
#: ``r * PROCESS_ROWS`` when ``update`` is not given ``first_row``.
PROCESS_ROWS = 2**40


def _rank():
    dist = torch.distributed
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


class StudyMetrics(Metric):
    """The study metrics of :func:`fastrank.metrics.evaluate` under several ranking types,
    accumulated over batches (and processes), every value equal to ``evaluate``'s.

    ``update(preds, target)`` takes a batch of beliefs ``preds`` and 0/1 truth ``target``
    of shape (batch, num_labels) -- tensors on any device (they are read once on the host,
    see :mod:`fastrank`'s array inputs), NumPy or SciPy arrays; ``compute()`` returns a dict
    ``{"metric/ranking_type": float64 tensor}`` on the metric's device, e.g.
    ``"coverage/modified"``, ready for ``log_dict``.

    Parameters
    ----------
    num_labels : int
        Number of labels (the width of every batch).
    metrics : sequence of str, optional
        The keys of :data:`fastrank.metrics.METRIC_KEYS` to return (default: all 19); the
        state is the same whatever the subset.
    ties : str or sequence of str, default the four ranking types of the thesis
        As for :func:`fastrank.metrics.evaluate`.
    cutoff, zero_division, n_draws, random_state
        As for :func:`fastrank.metrics.evaluate` (``random_state`` an int: every process
        must draw the same seed; ``n_draws`` random orders of the rows weighing neither 0
        nor 1 give their part of macro precision and F1 by category under ``"expected"``).
    **kwargs
        Passed to ``torchmetrics.Metric`` (``dist_sync_on_step``, ``sync_on_compute``, ...).

    Notes
    -----
    Random tie orders (``"ordinal"``, and the draws of weighted rows under ``"expected"``)
    are keyed by ``(random_state, row number)``, as in :class:`fastrank.metrics.Evaluator`.
    Given ``first_row`` (the batch's global first row), a row's order depends on that
    number alone, so the result equals ``evaluate`` on all rows whatever the batches and
    the processes. Without it, process ``r`` numbers its own rows ``r * PROCESS_ROWS``,
    ``r * PROCESS_ROWS + 1``, ... from the last ``reset``: every row gets its own order and
    the result does not depend on the batch sizes, but it does depend on which rows each
    process saw (an exact ranking type never does).
    """

    is_differentiable = False
    higher_is_better = None
    full_state_update = False
    weight: torch.Tensor  # the states added below
    n_rows: torch.Tensor
    boundary: list[torch.Tensor] | torch.Tensor  # a tensor once synchronised
    mc: torch.Tensor
    drawn: torch.Tensor

    def __init__(self, num_labels: int, metrics: Sequence[str] | None = None,
                 ties: str | Sequence[str] = TIES, cutoff: str | int = "perfect",
                 zero_division: float = 0.0, n_draws: int = 100, random_state: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(random_state, int) or isinstance(random_state, bool):
            raise TypeError("random_state must be an int (every process draws the same seed), "
                            f"got {type(random_state).__name__}")
        self._template = Evaluator(ties, n_labels=num_labels, random_state=random_state,
                                   n_draws=n_draws, cutoff=cutoff, zero_division=zero_division)
        keys = METRIC_KEYS if metrics is None else tuple(metrics)
        unknown = [k for k in keys if k not in METRIC_KEYS]
        if unknown or not keys:
            raise ValueError(f"unknown or no metrics {unknown}; choose from {METRIC_KEYS}")
        self.metrics = keys
        self.ties = self._template.ties
        q = self.num_labels = int(num_labels)  # checked by the evaluator
        f64 = torch.float64
        one_row = self._template.empty_copy().update(
            torch.zeros(1, q, dtype=torch.uint8), torch.zeros(1, q, dtype=f64))
        # the evaluator's sums (their shapes from one row) as states named without "_"
        self._sum_names = [n for n in ("_doc", "_lab") if getattr(one_row, n) is not None]
        for name in self._sum_names:
            self.add_state(name[1:], torch.zeros(getattr(one_row, name).shape, dtype=f64),
                           dist_reduce_fx="sum")
        self.add_state("weight", torch.zeros((), dtype=f64), dist_reduce_fx="sum")
        self.add_state("n_rows", torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        self._expected = self._template.n_draws > 0
        if self._expected:
            # the boundary counts: (n, 5) int64 records (label, s, d, n_rel, n_irr), each
            # tensor counted; the draws of weighted rows and how many batches had them
            self.add_state("boundary", [], dist_reduce_fx="cat")
            self.boundary = [self._no_records()]
            self.add_state("mc", torch.zeros((self._template.n_draws, 2, q), dtype=f64),
                           dist_reduce_fx="sum")
            self.add_state("drawn", torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        self._forward_row: int | None = None

    def update(self, preds: Any, target: Any, sample_weight: Any = None,
               first_row: int | None = None) -> None:
        """Add a batch: ``preds`` (batch, num_labels) beliefs, ``target`` the 0/1 truth,
        ``sample_weight`` (batch,) optional weights, ``first_row`` the batch's global first
        row (see the class notes; default: this process's next row)."""
        if isinstance(preds, torch.Tensor):
            preds = preds.detach()
        if first_row is None:
            local = self._forward_row if self._forward_row is not None else int(self.n_rows)
            first_row = _rank() * PROCESS_ROWS + local
        ev = self._template.empty_copy().update(target, preds, first_row=first_row,
                                                sample_weight=sample_weight)
        if not ev.n_rows:
            return
        for name in self._sum_names:
            state = getattr(self, name[1:])
            setattr(self, name[1:], state + torch.from_numpy(getattr(ev, name)).to(state.device))
        self.weight += ev._weight
        self.n_rows += ev.n_rows
        if self._expected:
            if ev._mc is not None:
                self.mc += torch.from_numpy(ev._mc).to(self.mc.device)
                self.drawn += 1
            if ev._boundary is not None:
                self._add_boundary(ev._boundary)

    def _no_records(self) -> torch.Tensor:
        return torch.zeros((0, 5), dtype=torch.int64, device=self.weight.device)

    def reset(self) -> None:
        """Empty the states; the boundary counts' list starts with a tensor of no records,
        so that a process that saw no rows gathers one of the others' shape and type."""
        super().reset()
        if self._expected:
            self.boundary = [self._no_records()]

    def _add_boundary(self, counts: BoundaryCounts) -> None:
        """Append a batch's boundary counts; all of them counted again as one tensor once
        the others hold half as many records as the largest (so that a record is counted
        again about log2(batches) times, and the list stays short)."""
        self.boundary = [*self._boundary_parts(),
                         torch.from_numpy(counts.records().T.copy()).to(self.weight.device)]
        sizes = [len(t) for t in self.boundary]
        if 2 * (sum(sizes) - max(sizes)) >= max(sizes):
            self.boundary = [torch.from_numpy(self._boundary_counts().records().T.copy())
                             .to(self.weight.device)]

    def _boundary_parts(self) -> list[torch.Tensor]:
        """The boundary counts' tensors (one after a synchronisation), (n, 5) each."""
        parts = self.boundary if isinstance(self.boundary, list) else [self.boundary]
        return [t.reshape(-1, 5) for t in parts]

    def _boundary_counts(self) -> BoundaryCounts:
        """The boundary counts of the state (its tensors, or one after a synchronisation)."""
        records = [t.cpu().numpy() for t in self._boundary_parts()]
        rows = np.vstack(records).T if records else np.zeros((5, 0), dtype=np.int64)
        return BoundaryCounts.counting(self.num_labels, rows)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """``update`` with this batch, returning the metrics of this batch alone; the batch's
        rows are numbered after the rows already seen, as ``update`` numbers them."""
        self._forward_row = int(self.n_rows)
        try:
            return super().forward(*args, **kwargs)
        finally:
            self._forward_row = None

    def evaluation(self) -> Evaluation:
        """The :class:`fastrank.metrics.Evaluation` of every row seen (all 19 metrics, as
        NumPy), from the states as they are (synchronised inside ``compute``).

        Raises
        ------
        ValueError
            No rows were seen, or their total weight is 0.
        """
        ev = self._template.empty_copy()
        n = int(self.n_rows)
        if n:
            ev._rows, ev._next_row, ev._weight = [(0, n)], n, float(self.weight)
        for name in self._sum_names:
            setattr(ev, name, getattr(self, name[1:]).cpu().numpy())
        if self._expected:
            ev._boundary = self._boundary_counts()
            ev._mc = self.mc.cpu().numpy() if int(self.drawn) else None
        return ev.result()

    def compute(self) -> dict[str, torch.Tensor]:
        """``{"metric/ranking_type": value}`` of the chosen metrics, float64 tensors on the
        metric's device."""
        result = self.evaluation()
        device = self.weight.device
        return {f"{m}/{t}": torch.tensor(result.values[i, result.metrics.index(m)],
                                         dtype=torch.float64, device=device)
                for m in self.metrics for i, t in enumerate(result.ties)}
