"""The study metrics over a Spark DataFrame (``pip install "fastrank-mlc[spark]"``)."""
import pickle
from collections.abc import Sequence
from typing import Any

try:
    from pyspark import TaskContext
    from pyspark.ml.functions import vector_to_array
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('fastrank.spark needs PySpark: pip install "fastrank-mlc[spark]"') from exc

from ._engines import check_columns, column_matrix, evaluate_chunks
from .metrics import Evaluation, Evaluator
from .metrics._common import TIES

_NUMBERS = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType,
            T.DoubleType)


def _array_column(schema, name):
    """``name`` as an array-of-numbers column: an ML vector becomes its array; TypeError
    naming the column for any other type."""
    kind = schema[name].dataType
    if isinstance(kind, VectorUDT):
        return vector_to_array(F.col(name)).alias(name)
    if isinstance(kind, T.ArrayType) and isinstance(kind.elementType, _NUMBERS):
        return F.col(name)
    raise TypeError(f"column {name!r} must be an array of numbers or an ML vector per row, "
                    f"got {kind.simpleString()}")


def _partition_rows(batches):
    import pandas as pd
    n = sum(len(b) for b in batches)
    yield pd.DataFrame({"partition": [TaskContext.get().partitionId()], "n": [n]})


def evaluate(dataframe: Any, y_true: str = "y_true", y_score: str = "y_score",
             sample_weight: str | None = None, ties: str | Sequence[str] = TIES,
             cutoff: str | int = "perfect", random_state: int = 0, zero_division: float = 0.0,
             n_draws: int = 100, at_k: Any = None, depth: int = 2) -> Evaluation:
    """:func:`fastrank.metrics.evaluate` over a ``pyspark.sql.DataFrame`` whose rows hold a
    document's truth and beliefs as array (or ML vector) columns.

    A first ``mapInPandas`` counts each partition's rows; a second evaluates each
    partition into a :class:`fastrank.metrics.Evaluator`, given its global first row, and
    returns its pickled state; a ``treeReduce`` merges the states. The result equals
    ``evaluate`` on the rows in the order ``collect`` returns them, to rounding, random
    ranking types included -- provided the DataFrame gives the same partitions each time
    it is computed (cache it first if it comes from a non-deterministic step).

    Parameters
    ----------
    dataframe : pyspark.sql.DataFrame
        One row per document.
    y_true, y_score : str
        Columns of equal-length arrays (``array<...>`` of numbers, or ML vectors): the 0/1
        truth and the beliefs.
    sample_weight : str, optional
        A numeric column of per-document weights.
    ties, cutoff, random_state, zero_division, n_draws, at_k
        As for :func:`fastrank.metrics.evaluate`.
    depth : int, default 2
        Depth of the tree reduction.

    Returns
    -------
    fastrank.metrics.Evaluation

    Raises
    ------
    ValueError
        A column the DataFrame lacks; anything :func:`fastrank.metrics.evaluate` refuses.
    TypeError
        A column of another type (the error names it).
    """
    template = Evaluator(ties, random_state=random_state, n_draws=n_draws, cutoff=cutoff,
                         zero_division=zero_division, at_k=at_k)
    schema = dataframe.schema
    check_columns(schema.names, (y_true, y_score, sample_weight))
    selected = [_array_column(schema, y_true), _array_column(schema, y_score)]
    if sample_weight is not None:
        if not isinstance(schema[sample_weight].dataType, _NUMBERS):
            raise TypeError(f"column {sample_weight!r} must hold numbers, got "
                            f"{schema[sample_weight].dataType.simpleString()}")
        selected.append(F.col(sample_weight).cast("double"))
    data = dataframe.select(*selected)

    counts = dict(data.select(y_true).mapInPandas(_partition_rows, "partition int, n long")
                  .collect())
    starts, first_row = {}, 0
    for partition in sorted(counts):
        starts[partition] = first_row
        first_row += counts[partition]

    def evaluate_partition(batches):
        import pandas as pd

        def chunks():
            for b in batches:
                if len(b):
                    yield (column_matrix(b[y_true].to_numpy(), y_true),
                           column_matrix(b[y_score].to_numpy(), y_score),
                           None if sample_weight is None else b[sample_weight].to_numpy())

        first = starts.get(TaskContext.get().partitionId(), 0)
        yield pd.DataFrame({"state": [pickle.dumps(evaluate_chunks(template, chunks(), first))]})

    states = data.mapInPandas(evaluate_partition, "state binary").rdd \
        .map(lambda row: pickle.loads(row.state))
    return states.treeReduce(lambda a, b: a.merge(b), depth=depth).result()
