"""The study metrics over a Ray Dataset (``pip install "fastrank-mlc[ray]"``)."""
from collections.abc import Sequence
from typing import Any

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('fastrank.ray needs Ray: pip install "fastrank-mlc[ray]"') from exc

from ._engines import check_columns, column_matrix, evaluate_chunks
from .metrics import Evaluation, Evaluator
from .metrics._common import TIES


@ray.remote
def _rows(block):
    return block.num_rows


@ray.remote
def _evaluate_block(block, first_row, template, columns):
    y_true, y_score, weight = columns
    if not block.num_rows:
        return template.empty_copy()
    chunk = (column_matrix(block.column(y_true).to_numpy(zero_copy_only=False), y_true),
             column_matrix(block.column(y_score).to_numpy(zero_copy_only=False), y_score),
             None if weight is None else block.column(weight).to_numpy())
    return evaluate_chunks(template, [chunk], first_row)


def evaluate(dataset: Any, y_true: str = "y_true", y_score: str = "y_score",
             sample_weight: str | None = None, ties: str | Sequence[str] = TIES,
             cutoff: str | int = "perfect", random_state: int = 0, zero_division: float = 0.0,
             n_draws: int = 100, at_k: Any = None) -> Evaluation:
    """:func:`fastrank.metrics.evaluate` over a ``ray.data.Dataset`` whose rows hold a
    document's truth and beliefs as array columns.

    The dataset is materialised as Arrow blocks in Ray's object store; one task counts each
    block's rows, one task per block evaluates it into a :class:`fastrank.metrics.Evaluator`
    given its global first row, and the small states are merged. The result equals
    ``evaluate`` on the rows in the dataset's order (``take_all``), to rounding, random
    ranking types included. (Ray Data's ``aggregate`` is not used: its block aggregations
    do not know where a block starts, which the random tie orders need.)

    Parameters
    ----------
    dataset : ray.data.Dataset
        One row per document.
    y_true, y_score : str
        Columns of equal-length 0/1 arrays and belief arrays (a tensor or list column).
    sample_weight : str, optional
        A column of per-document weights.
    ties, cutoff, random_state, zero_division, n_draws, at_k
        As for :func:`fastrank.metrics.evaluate`.

    Returns
    -------
    fastrank.metrics.Evaluation

    Raises
    ------
    ValueError
        A column the dataset lacks; anything :func:`fastrank.metrics.evaluate` refuses.
    TypeError
        A column whose rows are not arrays of numbers (the error names it).
    """
    template = Evaluator(ties, random_state=random_state, n_draws=n_draws, cutoff=cutoff,
                         zero_division=zero_division, at_k=at_k)
    columns = (y_true, y_score, sample_weight)
    check_columns(dataset.schema().names, columns)
    blocks = dataset.to_arrow_refs()
    starts, first_row = [], 0
    for n in ray.get([_rows.remote(b) for b in blocks]):
        starts.append(first_row)
        first_row += n
    states = ray.get([_evaluate_block.remote(b, s, template, columns)
                      for b, s in zip(blocks, starts)])
    out = template.empty_copy()
    for state in states:
        out = out.merge(state)
    return out.result()
