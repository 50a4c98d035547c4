"""fastrank.spark.evaluate on Spark local[2] equals fastrank.metrics.evaluate."""
import numpy as np
import pandas as pd
import pytest
from pyspark.ml.linalg import Vectors
from pyspark.sql import SparkSession

from fastrank.metrics import ALL_TIES, evaluate
from fastrank.spark import evaluate as spark_evaluate

N, Q = 100_000, 200


@pytest.fixture(scope="module")
def spark():
    session = (SparkSession.builder.master("local[2]").appName("fastrank-test")
               .config("spark.default.parallelism", "5")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "7000")
               .config("spark.ui.enabled", "false").getOrCreate())
    yield session
    session.stop()


def _data(n=N, q=Q):
    rng = np.random.default_rng(13)
    scores = rng.integers(0, 8, (n, q)) / 7           # coarse beliefs: many ties
    truth = (rng.random((n, q)) < 0.05).astype(np.uint8)
    weight = rng.random(n) + 0.5
    return truth, scores, weight


def test_equals_evaluate_on_all_rows(spark):
    truth, scores, weight = _data()
    frame = pd.DataFrame({"truth": list(truth.astype(np.int32)), "beliefs": list(scores),
                          "w": weight})
    df = spark.createDataFrame(frame)
    assert df.rdd.getNumPartitions() >= 4
    got = spark_evaluate(df, "truth", "beliefs", sample_weight="w", ties=ALL_TIES)
    expected = evaluate(truth, scores, ties=ALL_TIES, sample_weight=weight)
    np.testing.assert_allclose(got.values, expected.values, rtol=1e-12, atol=1e-12)


def test_vector_columns(spark):
    truth, scores, _ = _data(900, 12)
    rows = [(Vectors.dense(t.astype(float)), Vectors.dense(s)) for t, s in zip(truth, scores)]
    df = spark.createDataFrame(rows, ["y_true", "y_score"])
    np.testing.assert_allclose(spark_evaluate(df).values, evaluate(truth, scores).values,
                               rtol=1e-12, atol=1e-12)


def test_bad_columns_are_named(spark):
    df = spark.createDataFrame([([1, 0], [0.5, 0.2], "a")], ["y_true", "y_score", "name"])
    with pytest.raises(TypeError, match="column 'name' must be an array of numbers"):
        spark_evaluate(df, "y_true", "name")
    with pytest.raises(TypeError, match="column 'name' must hold numbers"):
        spark_evaluate(df, sample_weight="name")
    with pytest.raises(ValueError, match="no column 'truth'"):
        spark_evaluate(df, "truth")
