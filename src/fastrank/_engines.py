"""What the engine adapters (:mod:`fastrank.ray`, :mod:`fastrank.spark`) share: one chunk of
array columns into :class:`fastrank.metrics.Evaluator` state, given its global first row.

Random tie orders ("ordinal", the Monte-Carlo draws of "expected") are keyed by global row
numbers, so both adapters first count the rows of each block or partition, in the order in
which the engine returns them (``take_all``, ``collect``), then evaluate every block with
its first row: the result equals :func:`fastrank.metrics.evaluate` on the collected rows.
"""
import numpy as np

from .metrics import Evaluator


def column_matrix(values, name):
    """A column of per-row arrays (an ndarray of arrays, or already 2-D) as a 2-D ndarray;
    TypeError naming the column when its rows are not equal-length arrays of numbers."""
    arr = np.asarray(values)
    if arr.dtype == object:
        try:
            arr = np.stack([np.asarray(v) for v in arr]) if arr.size else arr
        except (ValueError, TypeError):
            arr = None
    if arr is None or arr.ndim != 2 or arr.dtype.kind not in "biuf":
        raise TypeError(f"column {name!r} must hold one equal-length array of numbers per row "
                        f"(documents x labels), got {values.dtype} values"
                        + ("" if arr is None else f" of shape {arr.shape}"))
    return arr


def evaluate_chunks(template: Evaluator, chunks, first_row):
    """A copy of ``template`` updated with ``chunks`` -- ``(y_true, y_score, sample_weight)``
    of consecutive rows from ``first_row`` -- and nothing else."""
    ev = template.empty_copy()
    for y_true, y_score, weight in chunks:
        n = len(y_score)
        if n:
            ev.update(y_true, y_score, first_row=first_row, sample_weight=weight)
            first_row += n
    return ev


def check_columns(names, columns):
    """ValueError naming the first of ``columns`` (None: not asked for) not in ``names``."""
    missing = [c for c in columns if c is not None and c not in names]
    if missing:
        raise ValueError(f"no column {missing[0]!r}; the columns are {list(names)}")
