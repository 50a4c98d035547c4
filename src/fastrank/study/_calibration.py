"""Calibration inside a study: a classifier's parameters chosen on a validation split of
its training documents by ranking loss (Melotti 2009, §3.5).
"""
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..metrics import METRIC_KEYS, evaluate
from ..text import TfidfIndexer
from ._plan import CALIBRATION_GRIDS, _make_classifier


def _features(dataset, train, test):
    if dataset.X is not None:
        return dataset.X[train], dataset.X[test]
    indexer = TfidfIndexer()
    texts = dataset.texts
    return indexer.fit_transform([texts[i] for i in train]), \
        indexer.transform([texts[i] for i in test])


def _ranking_loss(y_true, scores):
    return evaluate(y_true, scores, ties=("modified",)).values[0, METRIC_KEYS.index("ranking_loss")]


def calibrate_classifier(dataset: Any, name: str, params: dict[str, Any],
                         train: Sequence[int] | np.ndarray, random_state: int = 0,
                         grid: Mapping[str, Sequence[int]] | None = None
                         ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Choose a classifier's parameters on a validation split by ranking loss.

    Melotti (2009) §3.5: split the training documents ``train`` into 10 parts, train on 9,
    test on the 10th, and return the grid point with the lowest ranking loss (the metric no
    ranking type affects) together with every score tried.

    Parameters
    ----------
    dataset : fastrank.datasets.Dataset
        The data (raw text is indexed on the 9 parts).
    name : {"knn", "mlknn", "vgram", "vgramcor"}
        The classifier (see :data:`CLASSIFIERS`).
    params : dict
        Its other parameters.
    train : array-like of int
        The training documents to split.
    random_state : int, default 0
        Seeds the split; a classifier with randomness gets a seed derived from it and
        its name (:mod:`fastrank.study`).
    grid : dict of str to list of int, optional
        Values to try per parameter; default :data:`CALIBRATION_GRIDS` (a ``k`` not below
        the number of fitting documents is skipped).

    Returns
    -------
    params : dict
        ``params`` with the best grid point.
    tried : list of dict
        ``{"params": ..., "ranking_loss": ...}`` of every point tried (empty without a
        grid).

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §3.5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import datasets
    >>> from fastrank.study import calibrate_classifier
    >>> best, tried = calibrate_classifier(datasets.load("yeast"), "mlknn", {"s": 1.0},
    ...                                    np.arange(1000), grid={"k": [5, 10, 20]})
    >>> best
    {'s': 1.0, 'k': 20}
    >>> [(t["params"]["k"], round(t["ranking_loss"], 4)) for t in tried]
    [(5, 0.1636), (10, 0.1617), (20, 0.1586)]
    """
    grid = grid if grid is not None else CALIBRATION_GRIDS.get(name)
    if not grid:
        return params, []
    rng = np.random.default_rng(random_state)
    shuffled = rng.permutation(train)
    n_val = max(1, len(shuffled) // 10)
    fit_idx, val_idx = np.sort(shuffled[n_val:]), np.sort(shuffled[:n_val])
    X_fit, X_val = _features(dataset, fit_idx, val_idx)
    Y = dataset.Y   # a C-contiguous uint8 0/1 matrix (Dataset's invariant)
    keys = sorted(grid)
    tried: list[dict[str, Any]] = []
    for point in np.array(np.meshgrid(*[grid[k] for k in keys], indexing="ij")).reshape(
            len(keys), -1).T:
        candidate = {**params, **{k: int(v) for k, v in zip(keys, point)}}
        if "k" in candidate and candidate["k"] is not None and candidate["k"] >= len(fit_idx):
            continue
        model = _make_classifier(name, candidate, random_state).fit(X_fit, Y[fit_idx])
        loss = float(_ranking_loss(Y[val_idx], model.decision_function(X_val)))
        tried.append({"params": {k: candidate[k] for k in keys}, "ranking_loss": loss})
    best = min(tried, key=lambda r: r["ranking_loss"])
    return {**params, **best["params"]}, tried
