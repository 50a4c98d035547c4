"""Slow, obviously-correct references of the top-k metrics, for the tests.

Written from the definitions on an explicit order of the labels (a list of label indices,
best first), independently of the kernel's selection and tie-group arithmetic:
``order_values`` gives one document's per-document values for one order; ``tie_orders``
enumerates every order of every tie group of a row (unscored labels of a sparse row: one
group at the bottom).
"""
import itertools

import numpy as np

# per-document values, in the kernel's order (FR_TK_* of core/tie_topk.h)
VALUES = ("precision", "recall", "dcg", "ndcg", "psp", "psp_best", "psdcg", "psndcg",
          "psndcg_best")


def order_values(order, relevant, invp, k):
    """The per-document values (``VALUES``) of the labels ``order`` (best first) with the
    relevant label set ``relevant`` and inverse propensities ``invp``, at cut-off k."""
    rel = np.array([label in relevant for label in order[:k]], dtype=float)
    w = np.array([invp[label] for label in order[:k]])
    disc = 1.0 / np.log2(np.arange(2, len(rel) + 2))
    m = len(relevant)
    best = np.sort([invp[label] for label in relevant])[::-1][:k]
    idcg = (1.0 / np.log2(np.arange(2, min(k, m) + 2))).sum()
    dcg, psdcg = (rel * disc).sum(), (rel * w * disc).sum()
    best_d = (best * disc[:best.size]).sum() if best.size else 0.0
    return np.array([rel.sum() / k, rel.sum() / m if m else 0.0, dcg,
                     dcg / idcg if m else 0.0, (rel * w).sum() / k, best.sum() / k, psdcg,
                     psdcg / idcg if m else 0.0, best_d / idcg if m else 0.0])


def tie_groups_of(scores, scored=None):
    """The tie groups of one row, best first, each a list of labels: the scored labels
    (``scored``: their indices; None: every label) by decreasing score, then the unscored
    ones as one group."""
    q = len(scores)
    labels = list(range(q)) if scored is None else list(scored)
    values = sorted({scores[label] for label in labels}, reverse=True)
    groups = [[label for label in labels if scores[label] == v] for v in values]
    rest = [label for label in range(q) if label not in set(labels)]
    return groups + ([rest] if rest else [])


def tie_orders(groups):
    """Every order of the labels obtained by permuting inside each group."""
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [label for part in parts for label in part]


def aggregate(per_doc, weights=None):
    """Dataset values from per-document value vectors (n, len(VALUES)): weighted means, and
    the ratio-of-sums PS metrics (0 when the best sum is 0)."""
    v = np.asarray(per_doc)
    w = np.ones(len(v)) if weights is None else np.asarray(weights, float)
    s = (v * w[:, None]).sum(axis=0)
    mean = s / w.sum()
    ratio = lambda a, b: s[a] / s[b] if s[b] > 0 else 0.0  # noqa: E731
    return {"precision": mean[0], "recall": mean[1], "dcg": mean[2], "ndcg": mean[3],
            "psprecision": ratio(4, 5), "psdcg": mean[6], "psndcg": ratio(7, 8),
            "psprecision_gain": mean[4], "psndcg_gain": mean[7]}
