"""Synthetic multi-label data with Zipf-distributed labels and words.
"""
import numpy as np
import scipy.sparse as sp

from .._typing import RandomStateLike
from .._validation import MAX_COLUMNS, check_indicator_size, check_random_state
from ._base import Dataset


def _zipf_cdf(size, exponent):
    w = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** exponent
    c = np.cumsum(w)
    return c / c[-1]


def make_multilabel(n_documents: int = 1000, n_labels: int = 20, n_features: int = 5000, *,
                    cardinality: float = 2.0, doc_length: int = 60, topic_size: int = 200,
                    background: float = 0.3, label_skew: float = 1.0,
                    tie_density: float = 0.0, random_state: RandomStateLike = None
                    ) -> Dataset:
    """Synthetic sparse text-like documents with label sets (labelled ``synthetic``).

    Each label owns a "topic": ``topic_size`` random terms with Zipf(1) weights. A document
    gets 1 + Poisson(cardinality - 1) distinct labels (at most ``n_labels``), drawn with
    probabilities proportional to 1 / rank**label_skew; its Poisson(doc_length) tokens (at
    least one) come from the background Zipf distribution over all terms with probability
    ``background`` and otherwise from the topic of one of its labels, chosen uniformly.
    A fraction ``tie_density`` of the documents are exact copies (features and labels) of
    other documents: equal vectors give equal similarities and so ties in the rankings
    of neighbour-based classifiers. ``X`` is tf-idf (eq. 2.1, idf over this collection)
    with cosine normalisation (eq. 2.2). Memory is O(n_documents * (doc_length +
    cardinality)) for the documents (labels are drawn in chunks, so even 10**6 documents
    are fine), plus O(n_features + n_labels * topic_size) for the terms' order, the
    topics and the feature names.

    Parameters
    ----------
    n_documents, n_labels, n_features : int, default 1000, 20, 5000
        The shape (each from 1 to 2**31 - 1; the dense 0/1 label matrix at most 4 GiB).
    cardinality : float, default 2.0
        Mean labels per document, in [1, n_labels].
    doc_length : int, default 60
        Mean tokens per document (>= 1).
    topic_size : int, default 200
        Terms per label topic (>= 1; at most ``n_features`` are used).
    background : float, default 0.3
        Share of background tokens, in [0, 1].
    label_skew : float, default 1.0
        Zipf exponent of the label frequencies (finite, >= 0; 0 = uniform).
    tie_density : float, default 0.0
        Share of duplicated documents, in [0, 1).
    random_state : None, int or numpy.random.Generator, default None
        Seeds everything.

    Returns
    -------
    Dataset
        Named "synthetic", its parameters in ``info["params"]``.

    Raises
    ------
    ValueError
        A parameter out of its range.

    Examples
    --------
    >>> from fastrank.datasets import make_multilabel
    >>> data = make_multilabel(200, n_labels=5, n_features=300, random_state=0)
    >>> data.X.shape, data.Y.shape, data.name
    ((200, 300), (200, 5), 'synthetic')
    """
    from ..text import tfidf_from_counts

    for pname, v in (("n_documents", n_documents), ("n_labels", n_labels),
                     ("n_features", n_features), ("doc_length", doc_length),
                     ("topic_size", topic_size)):
        if not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_COLUMNS:
            raise ValueError(f"{pname} must be an integer from 1 to {MAX_COLUMNS}, got {v!r}")
    check_indicator_size((n_documents, n_labels), "n_documents x n_labels")
    if not 1.0 <= cardinality <= n_labels:
        raise ValueError(f"cardinality must be in [1, n_labels={n_labels}], got {cardinality}")
    if not 0.0 <= background <= 1.0:
        raise ValueError(f"background must be in [0, 1], got {background}")
    if not 0.0 <= tie_density < 1.0:
        raise ValueError(f"tie_density must be in [0, 1), got {tie_density}")
    if not 0.0 <= label_skew < np.inf:
        raise ValueError(f"label_skew must be a finite number >= 0, got {label_skew}")
    rng = check_random_state(random_state)
    topic_size = min(topic_size, n_features)
    n_copies = int(round(tie_density * n_documents))
    n = n_documents - n_copies
    logp = -label_skew * np.log(np.arange(1, n_labels + 1, dtype=np.float64))
    logp = logp[rng.permutation(n_labels)]
    topics = np.stack([rng.choice(n_features, topic_size, replace=False) for _ in range(n_labels)])
    background_terms = rng.permutation(n_features)
    topic_cdf, background_cdf = _zipf_cdf(topic_size, 1.0), _zipf_cdf(n_features, 1.0)
    Y = np.zeros((n, n_labels), dtype=np.uint8)
    pieces = []
    chunk = max(1, min((1 << 22) // n_labels, (1 << 22) // doc_length))  # bounds the memory
    for s in range(0, n, chunk):
        m = min(chunk, n - s)
        # labels: 1 + Poisson(cardinality - 1) per document, drawn without replacement with
        # probabilities ~ 1/rank**label_skew by the Gumbel-top-k trick
        k = np.minimum(1 + rng.poisson(cardinality - 1.0, m), n_labels)
        kmax = int(k.max())
        keys = logp + rng.gumbel(size=(m, n_labels))
        part = np.argpartition(-keys, kmax - 1, axis=1)[:, :kmax] if kmax < n_labels \
            else np.broadcast_to(np.arange(n_labels), keys.shape)
        order = np.argsort(-np.take_along_axis(keys, part, axis=1), axis=1)
        labels = np.take_along_axis(part, order, axis=1)[np.arange(kmax) < k[:, None]]
        Y[s + np.repeat(np.arange(m), k), labels] = 1
        # tokens: background Zipf term, or a Zipf term of the topic of one of the labels
        doc = np.repeat(np.arange(m), np.maximum(rng.poisson(doc_length, m), 1))
        first_label = np.concatenate(([0], np.cumsum(k)))
        which = first_label[doc] + (rng.random(doc.size) * k[doc]).astype(np.int64)
        topic_rank = np.searchsorted(topic_cdf, rng.random(doc.size), side="right")
        background_rank = np.searchsorted(background_cdf, rng.random(doc.size), side="right")
        term = np.where(rng.random(doc.size) >= background,
                        topics[labels[which], np.minimum(topic_rank, topic_size - 1)],
                        background_terms[np.minimum(background_rank, n_features - 1)])
        pieces.append(sp.csr_matrix((np.ones(doc.size), (doc, term)), shape=(m, n_features)))
    counts = sp.vstack(pieces, format="csr")
    if n_copies:
        rows = np.concatenate((np.arange(n), rng.integers(0, n, n_copies)))
        rows = rows[rng.permutation(rows.size)]
        counts, Y = counts[rows], Y[rows]
    X, _ = tfidf_from_counts(counts)
    return Dataset(X, Y, feature_names=[f"t{j}" for j in range(n_features)],
                   label_names=[f"c{j}" for j in range(n_labels)], name="synthetic",
                   info={"source": "fastrank.datasets.make_multilabel (synthetic)",
                         "params": {"n_documents": n_documents, "n_labels": n_labels,
                                    "n_features": n_features, "cardinality": cardinality,
                                    "doc_length": doc_length, "topic_size": topic_size,
                                    "background": background, "label_skew": label_skew,
                                    "tie_density": tie_density}})
