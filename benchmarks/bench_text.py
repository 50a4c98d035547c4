"""Text indexing on the Reuters-21578 ModApte test split (3019 documents, 2.2 M characters of
raw text): fastrank.text.TfidfIndexer vs scikit-learn's TfidfVectorizer.

Run: pytest benchmarks/bench_text.py --benchmark-only
Data from ../shared/data (never committed). fastrank lowercases each document with
``str.lower`` and splits and counts the words in one compiled pass (``fastrank._ext.term_counts``,
one thread, no Python object per word); scikit-learn tokenises with a regular expression and
counts in Python dicts. Peers:
* ``TfidfVectorizer(stop_words="english")`` -- sklearn's own analyser (default idf);
* ``TfidfVectorizer(analyzer=ours, smooth_idf=False)`` -- the same terms as fastrank, whose
  idf is fastrank's + 1 (checked), so the timing compares like with like.
The "fold" groups fit on 90% of the documents and transform the other 10%, as the study does.
"""
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from fastrank.datasets import load_text
from fastrank.text import TfidfIndexer, tfidf_from_counts

REUTERS = Path(__file__).resolve().parents[2] / "shared" / "data" / "reuters" / \
    "reuters21578-modapte-test.json"


@pytest.fixture(scope="module")
def texts():
    return load_text(REUTERS).texts


def _fold(indexer, texts):
    cut = len(texts) * 9 // 10
    return indexer.fit_transform(texts[:cut]), indexer.transform(texts[cut:])


def test_fastrank_fit_transform(benchmark, texts):
    benchmark.group = "tf-idf Reuters 3019 docs: fit_transform"
    X = benchmark.pedantic(TfidfIndexer().fit_transform, args=(texts,), rounds=7, iterations=1)
    assert X.shape[0] == 3019


def test_sklearn_default_fit_transform(benchmark, texts):
    benchmark.group = "tf-idf Reuters 3019 docs: fit_transform"
    vec = TfidfVectorizer(stop_words="english")
    X = benchmark.pedantic(vec.fit_transform, args=(texts,), rounds=7, iterations=1)
    assert X.shape[0] == 3019


def test_sklearn_same_terms_fit_transform(benchmark, texts):
    benchmark.group = "tf-idf Reuters 3019 docs: fit_transform"
    ours = TfidfIndexer()
    X_ours = ours.fit_transform(texts)
    vec = TfidfVectorizer(analyzer=ours.build_analyzer(), smooth_idf=False)
    benchmark.pedantic(vec.fit_transform, args=(texts,), rounds=7, iterations=1)
    np.testing.assert_allclose(vec.idf_ - 1, ours.idf_, atol=1e-12)
    vec.idf_ = ours.idf_
    np.testing.assert_allclose(vec.transform(texts[:50]).toarray(), X_ours[:50].toarray(),
                               atol=1e-12)


def test_fastrank_fold(benchmark, texts):
    benchmark.group = "tf-idf Reuters: fit on 90%, transform 10%"
    benchmark.pedantic(_fold, args=(TfidfIndexer(), texts), rounds=7, iterations=1)


def test_sklearn_default_fold(benchmark, texts):
    benchmark.group = "tf-idf Reuters: fit on 90%, transform 10%"
    benchmark.pedantic(_fold, args=(TfidfVectorizer(stop_words="english"), texts), rounds=7,
                       iterations=1)


def test_fastrank_transform(benchmark, texts):
    benchmark.group = "tf-idf Reuters 3019 docs: transform (fitted on all)"
    idx = TfidfIndexer().fit(texts)
    X = benchmark.pedantic(idx.transform, args=(texts,), rounds=7, iterations=1)
    assert (X != idx.fit_transform(texts)).nnz == 0


def test_fastrank_transform_public_weighting(benchmark, texts):
    """transform as it was before the indexer weighted its own counts directly: the same
    counts through the public, checked tfidf_from_counts (its validation and its copy)."""
    benchmark.group = "tf-idf Reuters 3019 docs: transform (fitted on all)"
    idx = TfidfIndexer().fit(texts)

    def checked():
        return tfidf_from_counts(idx._term_counts(texts, idx.vocabulary_)[0], idx.idf_)[0]

    X = benchmark.pedantic(checked, rounds=7, iterations=1)
    assert (X != idx.transform(texts)).nnz == 0


def test_sklearn_default_transform(benchmark, texts):
    benchmark.group = "tf-idf Reuters 3019 docs: transform (fitted on all)"
    vec = TfidfVectorizer(stop_words="english").fit(texts)
    benchmark.pedantic(vec.transform, args=(texts,), rounds=7, iterations=1)
