"""The cross-validated tie study of melotti2009 (ch. 3–5, Fig. 3.1).

Documents -> (raw text: tf-idf fitted on each training fold) -> n-fold cross-validation ->
each classifier's belief matrix per test fold -> the 19 metrics under each ranking type ->
paired two-tailed t-test of ordinal against dense, standard and modified -> the t tables
(Tables 4.x), the partial orders (Tables 5.1/5.2) and the recommendation (Table 5.3).

Conventions chosen here (the thesis is silent or specific to its data):

* Folds: shuffled k-fold seeded by ``random_state`` (sizes differ by at most one).
* The ordinal ranking of fold ``f`` is drawn with seed ``random_state + f``, the same for
  every classifier (their ordinal values differ by their beliefs, not by the draw). Each
  built-in classifier with randomness (VG-RAM WNN, VG-RAM WNN-COR) gets its own seed,
  derived from ``random_state + f`` and its name: the first 32-bit word of
  ``numpy.random.SeedSequence(random_state + f, spawn_key=tuple(name.encode("utf-8")))``
  (calibration: of ``random_state``). Two classifiers' random tie choices are thus
  independent, and adding or removing a classifier changes no other's results. A seed
  depends only on ``random_state``, the fold and the classifier's name, never on the
  order, the process or the machine in which a task runs.
* Tasks: the study is folds x classifiers tasks, each computing one classifier on one fold
  (fit, beliefs, metrics, tie statistics), after one task per fold computing that fold's
  features and shared by its classifiers. In process, they run side by side on ``n_jobs``
  threads (one after the other on one thread); with ``scheduler`` they are Dask tasks, running single-threaded unless ``n_jobs`` says
  otherwise, since Dask runs one task per worker thread. The data set is sent to the
  cluster once, as the value of a task (so that Dask can rebuild a fold lost with a
  worker). Calibration (``calibrate=True``) is one task per classifier there, which that
  classifier's fold tasks wait for. The same functions compute every task either way, so
  the results, and ``results.json``, are byte-identical; a task whose worker died is run
  again by Dask, with the same result, and a cluster left without a running worker for
  :func:`fastrank.dask.no_workers_timeout` seconds ends the study with
  :class:`fastrank.dask.NoWorkersError`.
* A user's own estimator (``run_study(classifiers=[..., (name, estimator)])``) is cloned
  for each fold and fitted as given, keeping its own ``random_state``; its beliefs are its
  ``decision_function``, else its ``predict_proba``; its recorded parameters are its
  one-line repr.
* Partial order symbols compare *values*: ``O ≺ X`` means the metric is significantly
  smaller under ordinal than under ``X`` (t < 0), ``O ≻ X`` significantly larger,
  ``O ≡ X`` not significant or identical samples (α = 5 %, df = folds − 1).
* Table 5.3 "experiments" column (judged on ordinal against dense, standard and modified;
  "expected" is reported but not part of it): ``O/D/P/M`` when no classifier shows a
  significant difference for the metric; otherwise the tie-aware types, keeping — where they disagree
  among themselves (coverage) — only those that never favour tied rankings relative to
  ordinal (a loss not significantly smaller, a gain not significantly larger). The "choice"
  column is the thesis' choice, modified (``M``), for every metric.
* Timings are measurements, not results: they are kept in :attr:`StudyResult.timings` and
  the report, but not in ``results.json``, so that a seed gives a byte-identical file on
  any number of threads.
"""
import collections
import concurrent.futures
import hashlib
import inspect
import json
import numbers
import operator
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import datasets as _datasets
from ._parallel import effective_n_jobs, num_threads
from ._typing import LabelsLike, MatrixLike
from ._validation import check_option
from .metrics import ESTIMATED_KEYS, METRIC_KEYS, evaluate
from .metrics._common import check_inputs
from .metrics._evaluate import _check_cutoff
from .model_selection import KFold
from .neighbors import KNN, MLkNN
from .ranking import tie_groups
from .stats import paired_ttest
from .text import TfidfIndexer
from .wnn import VGRAM, VGRAMCor

#: The thesis' four ranking types, the default of :func:`run_study`.
STUDY_TIES = ("ordinal", "dense", "standard", "modified")
#: "expected" may be added as a fifth type: the exact mean of ordinal over orders
ALLOWED_TIES = STUDY_TIES + ("expected",)
#: The ranking types that keep tie groups whole.
TIE_AWARE = ("dense", "standard", "modified")
#: The thesis' letter of each ranking type in the partial orders (P for Padrão, standard).
TIE_LETTERS = {"ordinal": "O", "dense": "D", "standard": "P", "modified": "M",  # Padrão = P
               "expected": "E"}
#: The metrics that are losses.
LOWER_IS_BETTER = frozenset({"one_error", "coverage", "ranking_loss", "hamming_loss"})


def _favourable(values, metric):
    """Values of ``metric`` oriented so that higher is better: negated for a loss
    (:data:`LOWER_IS_BETTER`), as they are otherwise."""
    values = np.asarray(values)
    return -values if metric in LOWER_IS_BETTER else values

#: The ``format`` field of ``results.json``.
RESULT_FORMAT = "fastrank-study/2"
#: Formats :meth:`StudyResult.from_dict` reads: version 1 has the same fields, but its
#: VG-RAM classifiers drew their random tie choices from the fold's seed itself, so its
#: results are read, never resumed (:func:`fastrank.benchmark.run_benchmark`).
READABLE_FORMATS = ("fastrank-study/1", RESULT_FORMAT)

#: name -> (display name, estimator class, thesis configuration)
CLASSIFIERS = {
    "knn": ("kNN", KNN, {"k": None}),
    "mlknn": ("ML-kNN", MLkNN, {"k": 10, "s": 1.0}),
    "vgram": ("VG-RAM WNN", VGRAM, {"n_neurons": 1024, "n_synapses": 1024}),
    "vgramcor": ("VG-RAM WNN-COR", VGRAMCor, {"n_neurons": 1024, "n_synapses": 512}),
}

#: calibration grids of melotti2009 §3.5 (values that exceed the data are dropped)
CALIBRATION_GRIDS = {
    "mlknn": {"k": [2, 4, 6, 8, 10, 12, 14, 18, 20, 22, 24, 26, 28, 30, 40, 50, 100, 500,
                    1000, 5000]},
    "vgram": {"n_neurons": [32, 64, 128, 256, 512, 1024], "n_synapses": [256, 512, 1024, 2048]},
    "vgramcor": {"n_neurons": [32, 64, 128, 256, 512, 1024],
                 "n_synapses": [256, 512, 1024, 2048]},
}


@dataclass
class StudyResult:
    """Everything a study produced.

    ``values[c]`` is an array (n_ties, n_metrics, n_folds) for classifier ``c``;
    ``stderr[c]`` the same shape: the Monte-Carlo standard error of the two estimated
    "expected" values (``fastrank.metrics.ESTIMATED_KEYS``), NaN for every exact value;
    ``tie_stats[c]`` maps a statistic name to its per-fold values; ``params[c]`` the
    classifier's parameters (after calibration); ``timings[c]`` per-fold seconds of "fit",
    "predict" and "evaluate" (metrics + tie statistics), ``timings["indexing"]`` per-fold
    seconds of building the features (tf-idf for raw text, row selection otherwise).

    Returned by :func:`run_study`; :meth:`to_json` / :meth:`from_json` round-trip it
    (timings excluded).

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, ch. 4-5,
       Tables 5.1-5.3.

    Examples
    --------
    >>> from fastrank import run_study
    >>> result = run_study("yeast", classifiers=("knn", "mlknn"), folds=3)
    >>> result.values["knn"].shape              # (ranking types, metrics, folds)
    (4, 19, 3)
    >>> result.partial_order("knn", "coverage")  # Tables 5.1/5.2 notation
    'O ≻ D|P; O ≺ M'
    >>> result.partial_order("mlknn", "coverage")
    'O ≡ D|P|M'
    >>> result.recommendation("one_error")       # Table 5.3, "experiments" column
    'D/P/M'
    """

    dataset: dict
    classifiers: tuple
    ties: tuple
    folds: int
    random_state: int
    cutoff: str
    params: dict
    values: dict
    tie_stats: dict
    calibration: dict = field(default_factory=dict)
    stderr: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    metrics: tuple = METRIC_KEYS

    def fold_values(self, classifier: str, ties: str, metric: str) -> np.ndarray:
        """The per-fold values of one metric under one ranking type, shape (folds,).

        Raises
        ------
        KeyError
            An unknown classifier.
        ValueError
            A ranking type or metric that was not computed.
        """
        return self.values[classifier][self.ties.index(ties), self.metrics.index(metric)]

    def mean(self, classifier: str, ties: str, metric: str) -> float:
        """The mean over the folds of :meth:`fold_values`."""
        return float(np.mean(self.fold_values(classifier, ties, metric)))

    def ttest(self, classifier: str, metric: str, other: str, alpha: float = 0.05) -> Any:
        """Paired two-tailed t-test of ordinal against ``other`` over the folds.

        Returns
        -------
        fastrank.stats.TTestResult
            ``statistic`` < 0 when the metric is smaller under ordinal.
        """
        return paired_ttest(self.fold_values(classifier, "ordinal", metric),
                            self.fold_values(classifier, other, metric), alpha=alpha)

    def relation(self, classifier: str, metric: str, other: str, alpha: float = 0.05) -> str:
        """'≺', '≻' or '≡': the metric significantly smaller, larger, or not different under
        ordinal than under ``other`` (:meth:`ttest` at level ``alpha``)."""
        res = self.ttest(classifier, metric, other, alpha)
        if res.identical or not res.significant:
            return "≡"
        return "≺" if res.statistic < 0 else "≻"

    def _others(self):
        if "ordinal" not in self.ties:
            raise ValueError("the t-tests compare against the ordinal ranking; it was not run")
        return [t for t in self.ties if t != "ordinal"]

    def partial_order(self, classifier: str, metric: str, alpha: float = 0.05) -> str:
        """Ordinal against the other ranking types in the notation of Tables 5.1/5.2, e.g.
        'O ≺ D|P|M' or 'O ≻ D|P; O ≺ M'.

        Raises
        ------
        ValueError
            The study did not run the ordinal ranking.
        """
        by_symbol: dict[str, list[str]] = {}
        for other in self._others():
            by_symbol.setdefault(self.relation(classifier, metric, other, alpha), []).append(
                TIE_LETTERS[other])
        return "; ".join(f"O {sym} {'|'.join(letters)}" for sym, letters in by_symbol.items())

    def recommendation(self, metric: str, alpha: float = 0.05) -> str:
        """Table 5.3 'experiments' column for ``metric``: the ranking types to use, e.g.
        'O/D/P/M' or 'M' (the rule is in the module docstring).

        Raises
        ------
        ValueError
            The study did not run the ordinal ranking.
        """
        others = [o for o in self._others() if o in TIE_AWARE]
        rel = {(c, o): self.relation(c, metric, o, alpha)
               for c in self.classifiers for o in others}
        if all(r == "≡" for r in rel.values()):
            return "/".join(TIE_LETTERS[t] for t in ("ordinal", *others))
        tie_aware_agree = all(
            np.array_equal(self.fold_values(c, others[0], metric), self.fold_values(c, o, metric))
            for c in self.classifiers for o in others[1:])
        if tie_aware_agree:
            return "/".join(TIE_LETTERS[o] for o in others)
        favouring = "≻" if metric in LOWER_IS_BETTER else "≺"  # ordinal worse than X
        kept = [o for o in others if all(rel[c, o] != favouring for c in self.classifiers)]
        return "/".join(TIE_LETTERS[o] for o in kept) or "none"

    def to_frame(self):
        """The fold values as a tidy pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per classifier × ranking type × metric × fold, with columns
            ``classifier`` (display name), ``ties``, ``metric`` (key, as in
            :data:`fastrank.metrics.METRIC_KEYS`), ``fold`` (0-based) and ``value``.

        Raises
        ------
        ImportError
            When pandas is not installed.

        Examples
        --------
        >>> frame = run_study("yeast", ["knn"], folds=2).to_frame()
        >>> list(frame.columns)
        ['classifier', 'ties', 'metric', 'fold', 'value']
        >>> len(frame)   # 1 classifier x 4 ranking types x 19 metrics x 2 folds
        152
        """
        pd = _pandas()
        n_t, n_m, n_f = len(self.ties), len(self.metrics), self.folds
        return pd.DataFrame({
            "classifier": np.repeat([display_name(c) for c in self.classifiers],
                                    n_t * n_m * n_f),
            "ties": np.tile(np.repeat(self.ties, n_m * n_f), len(self.classifiers)),
            "metric": np.tile(np.repeat(self.metrics, n_f), len(self.classifiers) * n_t),
            "fold": np.tile(np.arange(n_f), len(self.classifiers) * n_t * n_m),
            "value": np.concatenate([self.values[c].ravel() for c in self.classifiers]),
        })

    # ---- persistence ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, complete and reloadable (timings excluded: see module docstring)."""
        return {
            "format": RESULT_FORMAT,
            "dataset": self.dataset, "classifiers": list(self.classifiers),
            "ties": list(self.ties), "metrics": list(self.metrics), "folds": self.folds,
            "random_state": self.random_state, "cutoff": self.cutoff, "params": self.params,
            "calibration": self.calibration,
            "values": {c: {t: {m: self.fold_values(c, t, m).tolist() for m in self.metrics}
                           for t in self.ties} for c in self.classifiers},
            "stderr": {c: {m: self.stderr[c][self.ties.index("expected"),
                                             self.metrics.index(m)].tolist()
                           for m in ESTIMATED_KEYS} for c in self.classifiers}
            if "expected" in self.ties else {},
            "tie_stats": {c: {k: list(v) for k, v in s.items()}
                          for c, s in self.tie_stats.items()},
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text: the ``results.json`` of the report."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=True) + "\n"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "StudyResult":
        """The result saved by :meth:`to_dict`, checked entry by entry.

        Raises
        ------
        TypeError
            ``d`` is not a dict.
        ValueError
            ``d`` is not a fastrank study result, or names the first missing or malformed
            entry.
        """
        if not isinstance(d, dict):
            raise TypeError(f"a study result is a dict, got {type(d).__name__}")
        if d.get("format") not in READABLE_FORMATS:
            raise ValueError(f"not a fastrank study result (format {d.get('format')!r}, "
                             f"expected {RESULT_FORMAT!r})")
        names = {key: _result_entry(d, key) for key in ("classifiers", "ties", "metrics")}
        for key, value in names.items():
            if not isinstance(value, list) or not value or len(set(map(str, value))) != \
                    len(value) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"corrupt study result: {key} is not a list of distinct names")
        classifiers, ties, metrics = (tuple(names[k]) for k in ("classifiers", "ties", "metrics"))
        # classifiers: built-in names or the display names of own estimators, any str
        for key, known in (("ties", ALLOWED_TIES), ("metrics", METRIC_KEYS)):
            if not set(names[key]) <= set(known):
                raise ValueError(f"corrupt study result: unknown {key} "
                                 f"{sorted(set(names[key]) - set(known))}")
        if "expected" in ties and not set(ESTIMATED_KEYS) <= set(metrics):
            raise ValueError(f"corrupt study result: the expected ranking type needs the "
                             f"metrics {list(ESTIMATED_KEYS)}")
        folds, random_state = _result_entry(d, "folds"), _result_entry(d, "random_state")
        for key, value, least in (("folds", folds, 1), ("random_state", random_state, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"corrupt study result: {key} is not an int >= {least}, got "
                                 f"{value!r:.80}")
        for key in ("dataset", "params", "tie_stats"):
            if not isinstance(_result_entry(d, key), dict):
                raise ValueError(f"corrupt study result: {key} is not a dict")
        for key in ("calibration", "stderr"):  # optional
            if not isinstance(d.get(key, {}), dict):
                raise ValueError(f"corrupt study result: {key} is not a dict")

        def per_fold(*path):
            try:
                row = np.array(_result_entry(d, *path), dtype=np.float64)
            except (ValueError, TypeError):
                row = None
            if row is None or row.shape != (folds,):
                raise ValueError(f"corrupt study result: {'/'.join(path)} is not {folds} "
                                 "numbers (one per fold)")
            return row

        values = {c: np.array([[per_fold("values", c, t, m) for m in metrics] for t in ties])
                  for c in classifiers}
        for c, stats in d["tie_stats"].items():
            if not isinstance(stats, dict):
                raise ValueError(f"corrupt study result: tie_stats/{c} is not a dict")
            for key in stats:
                per_fold("tie_stats", c, key)
        stderr = {c: np.full(values[c].shape, np.nan) for c in classifiers}
        for c, errors in d.get("stderr", {}).items():
            if c not in classifiers or "expected" not in ties or not isinstance(errors, dict) \
                    or not set(errors) <= set(metrics):
                raise ValueError(f"corrupt study result: stderr/{c} does not match the "
                                 "classifiers, ranking types and metrics")
            for m in errors:
                stderr[c][ties.index("expected"), metrics.index(m)] = per_fold("stderr", c, m)
        cutoff = _result_entry(d, "cutoff")
        _check_cutoff(cutoff)
        return cls(stderr=stderr, dataset=d["dataset"], classifiers=classifiers, ties=ties,
                   folds=folds, random_state=random_state, cutoff=cutoff,
                   params=d["params"], values=values, tie_stats=d["tie_stats"],
                   calibration=d.get("calibration", {}), metrics=metrics)

    @classmethod
    def from_json(cls, text: str | bytes) -> "StudyResult":
        """The result saved by :meth:`to_json`.

        Raises
        ------
        ValueError
            Text that is not a valid study result.
        """
        try:
            return cls.from_dict(json.loads(text))
        except (json.JSONDecodeError, TypeError, RecursionError) as exc:
            raise ValueError(f"corrupt study result: {exc}") from None


def load_dataset(spec):
    """The data set a study names.

    Parameters
    ----------
    spec : Dataset, str or path
        A :class:`fastrank.datasets.Dataset` (returned as is); an embedded name
        (:func:`fastrank.datasets.load`); a file path (``.arff`` with the Mulan label file
        ``<stem>.xml`` beside it, ``.svm``/``.libsvm``, ``.json``, ``.csv``: see
        :func:`fastrank.datasets.load`); any other name is fetched into the local cache by
        :func:`fastrank.datasets.fetch`.

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError
        For a path with a data file extension that does not exist.
    ValueError
        For a name that is neither embedded nor known to :func:`fastrank.datasets.fetch`.

    Examples
    --------
    >>> load_dataset("yeast").n_documents
    2417
    """
    if isinstance(spec, _datasets.Dataset):
        return spec
    key = os.fspath(spec)
    ext = os.path.splitext(key)[1].lower()
    if key in _datasets._EMBEDDED or ext in _datasets._LOADERS_BY_EXTENSION:
        return _datasets.load(key)
    return _datasets.fetch(key)


def dataset_name(spec):
    """The name under which a study reports a data set.

    Parameters
    ----------
    spec : Dataset, str or path
        As for :func:`load_dataset`.

    Returns
    -------
    str
        The Dataset's name, the file's stem for a path, else the name itself (known without
        loading anything).

    Examples
    --------
    >>> dataset_name("data/emotions/emotions.arff"), dataset_name("yeast")
    ('emotions', 'yeast')
    """
    if isinstance(spec, _datasets.Dataset):
        return spec.name
    key = os.fspath(spec)
    if os.path.splitext(key)[1].lower() in _datasets._LOADERS_BY_EXTENSION:
        return os.path.splitext(os.path.basename(key))[0]
    return key


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame needs pandas: pip install pandas") from None
    return pandas


def _result_entry(node, *path):
    """``node[path[0]][path[1]]...`` of a study result's dict; ValueError naming the path
    when an entry is missing."""
    for i, key in enumerate(path):
        if not isinstance(node, dict) or key not in node:
            raise ValueError(f"corrupt study result: no entry {'/'.join(path[:i + 1])}")
        node = node[key]
    return node


def tie_statistics(y_true: LabelsLike, y_score: MatrixLike) -> dict[str, float]:
    """How tied a belief matrix is, per document, averaged.

    Parameters
    ----------
    y_true : 0/1 array (dense or sparse) or list of label-index sets, (n_documents, n_labels)
        The truth.
    y_score : float array or sparse matrix, (n_documents, n_labels)
        The beliefs.

    Returns
    -------
    dict
        * ``top``: share of documents whose top-ranked tie group has more than one label;
        * ``boundary``: share of documents with relevant labels whose tie group at position
          ``|C_j|`` extends past it (so the perfect cutoff takes more than ``|C_j|``
          labels);
        * ``group_size``: mean tie-group size (labels per group), averaged over documents.

    Raises
    ------
    ValueError
        Invalid input, as for :func:`fastrank.metrics.evaluate`.

    Examples
    --------
    >>> from fastrank.study import tie_statistics
    >>> tie_statistics([[1, 0, 1, 0], [0, 1, 0, 0]], [[.5, .2, .2, .1], [.3, .3, .1, 0.]])
    {'top': 0.5, 'boundary': 1.0, 'group_size': 1.3333333333333333}
    """
    y_true, y_score = check_inputs(y_true, y_score)
    groups = tie_groups(y_score)
    n_rel = y_true.sum(axis=1, dtype=np.int64)
    top = float(np.mean(groups.end[:, 0] > 1))
    has_rel = n_rel > 0
    rows = np.flatnonzero(has_rel)
    boundary = float(np.mean(groups.end[rows, n_rel[rows] - 1] > n_rel[rows])) if rows.size \
        else 0.0
    group_size = float(np.mean(groups.order.shape[1] / groups.n_groups))
    return {"top": top, "boundary": boundary, "group_size": group_size}


def display_name(classifier):
    """The name shown for a study's classifier.

    Parameters
    ----------
    classifier : str
        A key of :attr:`StudyResult.classifiers`.

    Returns
    -------
    str
        A built-in's readable name, or the display name a user's own estimator was given.

    Examples
    --------
    >>> display_name("knn"), display_name("OvR logistic")
    ('kNN', 'OvR logistic')
    """
    return CLASSIFIERS[classifier][0] if classifier in CLASSIFIERS else classifier


def _classifier_seed(seed, name):
    """The seed of built-in classifier ``name`` for the study's seed ``seed`` (of the fold,
    ``random_state + f``, or of the calibration): the first 32-bit word of
    ``numpy.random.SeedSequence(seed, spawn_key=tuple(name.encode("utf-8")))``, a stream of
    its own for each classifier."""
    key = tuple(name.encode("utf-8"))
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1)[0])


def _make_classifier(name, params, seed):
    """A fresh classifier for one fold: a built-in one from its parameters (seeded with
    :func:`_classifier_seed` of ``seed`` and ``name`` when it has randomness), or a clone
    of a user's estimator (``params``), whose own ``random_state``, if any, is kept as the
    user set it."""
    if name not in CLASSIFIERS:
        from sklearn.base import clone
        return clone(params.load() if isinstance(params, _Shipped) else params)
    _, cls, _ = CLASSIFIERS[name]
    if "random_state" in cls._param_names():
        params = {**params, "random_state": _classifier_seed(seed, name)}
    return cls(**params)


def _beliefs(model, X, n_labels, name):
    """The (n_documents, n_labels) belief matrix of a fitted classifier: its
    ``decision_function``, else its ``predict_proba``."""
    method = "decision_function" if hasattr(model, "decision_function") else "predict_proba"
    scores = getattr(model, method)(X)
    if isinstance(scores, list):  # scikit-learn's multi-output predict_proba
        raise ValueError(f"classifier {name!r}: predict_proba returned a list of "
                         f"{len(scores)} per-label arrays, not one (n_documents, n_labels) "
                         "belief matrix; wrap the estimator in "
                         "sklearn.multiclass.OneVsRestClassifier")
    scores = scores.toarray() if hasattr(scores, "toarray") else np.asarray(scores)
    expected = (X.shape[0], n_labels)
    if scores.shape != expected:
        raise ValueError(f"classifier {name!r}: {method} returned shape {scores.shape}, "
                         f"expected {expected} (documents x labels) beliefs")
    return scores


def _check_estimator(name, estimator):
    if not isinstance(name, str) or not name:
        raise TypeError(f"an own classifier is a (display_name, estimator) pair with a "
                        f"non-empty str name, got name {name!r}")
    if name in CLASSIFIERS or name in {v[0] for v in CLASSIFIERS.values()}:
        raise ValueError(f"display name {name!r} is taken by a built-in classifier; "
                         "choose another")
    if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
        raise TypeError(f"classifier {name!r}: {type(estimator).__name__} is not a "
                        "scikit-learn estimator (needs fit and get_params)")
    if not (hasattr(estimator, "decision_function") or hasattr(estimator, "predict_proba")):
        raise TypeError(f"classifier {name!r}: {type(estimator).__name__} has neither "
                        "decision_function nor predict_proba, so it gives no beliefs to "
                        "rank")


def _estimator_params(estimator):
    """The recorded parameters of a user's estimator: its one-line repr."""
    return {"estimator": " ".join(repr(estimator).split())}


def _recorded_params(classifiers, config):
    """Per classifier, the parameters a study records (:attr:`StudyResult.params`): a
    built-in's parameters, an own estimator's repr (:func:`_estimator_params`)."""
    return {c: config[c] if c in CLASSIFIERS else _estimator_params(config[c])
            for c in classifiers}


def _parameter_record(classifiers, params, ties, folds, random_state, cutoff,
                      calibrated=()):
    """What determines a study's results besides its data set, as ``results.json`` holds
    it (JSON-native): the classifiers, ranking types, folds, seed, cutoff and recorded
    parameters; for the classifiers ``calibrated``, without the parameters calibration
    chooses (:data:`CALIBRATION_GRIDS`). Compares a finished study (:func:`_record_of`)
    with one about to run (:func:`_planned_record`)."""
    params = {c: {k: v for k, v in p.items()
                  if not (c in calibrated and k in CALIBRATION_GRIDS.get(c, {}))}
              for c, p in params.items()}
    return json.loads(json.dumps({"classifiers": list(classifiers), "ties": list(ties),
                                  "folds": folds, "random_state": random_state,
                                  "cutoff": cutoff, "params": params}))


def _record_of(result):
    """The parameter record (:func:`_parameter_record`) of a finished study."""
    return _parameter_record(result.classifiers, result.params, result.ties, result.folds,
                             result.random_state, result.cutoff,
                             calibrated=[c for c, tried in result.calibration.items() if tried])


def _planned_record(classifiers, options):
    """The parameter record (:func:`_parameter_record`) of ``run_study(dataset,
    classifiers, **options)`` before it runs: :func:`run_study`'s own defaults fill the
    options not given; with ``calibrate``, the calibrated parameters are left out (they
    are chosen by the run)."""
    args = inspect.signature(run_study).bind(None, classifiers, **options)
    args.apply_defaults()
    a = args.arguments
    keys, config = _plan(classifiers, a["params"])
    return _parameter_record(keys, _recorded_params(keys, config), a["ties"], a["folds"],
                             a["random_state"], a["cutoff"],
                             calibrated=keys if a["calibrate"] else ())


def _plan(classifiers, params):
    """Check the classifiers of a study and their parameter overrides.

    Returns ``(keys, config)``: the classifiers' keys (built-in names, or the display
    names of own estimators) and per key the built-in parameters or the estimator."""
    if isinstance(classifiers, str):
        raise TypeError(f"classifiers must be a sequence of names, got the str "
                        f"{classifiers!r}")
    if isinstance(classifiers, tuple) and len(classifiers) == 2 and \
            isinstance(classifiers[0], str) and hasattr(classifiers[1], "fit"):
        raise TypeError("classifiers must be a sequence of names and (display_name, "
                        "estimator) pairs; wrap a single pair in a list")
    keys, config = [], {}
    for item in classifiers:
        if isinstance(item, str):
            check_option("classifier", item, tuple(CLASSIFIERS))
            key, value = item, None
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            key, value = item
            _check_estimator(key, value)
        else:
            raise TypeError(f"a classifier is a built-in name ({', '.join(CLASSIFIERS)}) or a "
                            f"(display_name, estimator) pair, got {item!r}")
        if key in config or display_name(key) in {display_name(k) for k in keys}:
            raise ValueError(f"classifier {display_name(key)!r} named twice")
        keys.append(key)
        config[key] = value
    if not keys:
        raise ValueError("no classifier given")
    params = {} if params is None else params
    if not isinstance(params, dict) or not all(isinstance(p, dict) for p in params.values()):
        raise TypeError(f"params must be a dict of classifier name -> dict of parameters, got "
                        f"{params!r:.100}")
    unknown = set(params) - set(keys)
    if unknown:
        raise ValueError(f"parameters given for classifiers not in the study: {sorted(unknown)}")
    own = sorted(set(params) - set(CLASSIFIERS))
    if own:
        raise ValueError(f"parameters given for own estimators {own}: set them on the "
                         "estimator instead")
    for c, given in params.items():
        valid = CLASSIFIERS[c][1]._param_names()
        if not set(given) <= set(valid) - {"random_state"}:
            raise ValueError(f"unknown {c} parameters {sorted(map(str, set(given) - set(valid)))}"
                             f"; valid: {[v for v in valid if v != 'random_state']}")
    for c in keys:
        if c in CLASSIFIERS:
            config[c] = {**CLASSIFIERS[c][2], **params.get(c, {})}
    return tuple(keys), config


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
        its name (module docstring).
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


# ---- the study's tasks: one code path, in process or on a Dask cluster -------------------

@dataclass
class _Fold:
    """The features and truth of one fold, and the seconds it took to build the features."""

    X_train: object
    X_test: object
    Y_train: np.ndarray
    Y_test: np.ndarray
    seconds: float


@dataclass
class _Outcome:
    """One classifier on one fold: ``values`` and ``stderr`` (n_ties, n_metrics), the tie
    statistics, the seconds of each stage and of the fold's features."""

    values: np.ndarray
    stderr: np.ndarray
    tie_stats: dict
    seconds: dict
    indexing: float


def _calibration_task(dataset, name, params, train, random_state, n_jobs):
    with num_threads(n_jobs):
        return calibrate_classifier(dataset, name, params, train, random_state)


def _fold_task(dataset, train, test, n_jobs):
    """The features of one fold: tf-idf fitted on its training documents for raw text, the
    rows of ``X`` otherwise."""
    t0 = time.perf_counter()
    with num_threads(n_jobs):
        X_train, X_test = _features(dataset, train, test)
    return _Fold(X_train, X_test, dataset.Y[train], dataset.Y[test], time.perf_counter() - t0)


def _classifier_task(fold, name, params, seed, ties, cutoff, n_jobs):
    """Fit classifier ``name`` (seeded with :func:`_classifier_seed` of ``seed``) on the
    training part of ``fold``, and evaluate its beliefs on the test part (ordinal draw
    seeded with ``seed``)."""
    with num_threads(n_jobs):
        model = _make_classifier(name, params, seed)
        t0 = time.perf_counter()
        model.fit(fold.X_train, fold.Y_train)
        t1 = time.perf_counter()
        scores = _beliefs(model, fold.X_test, fold.Y_test.shape[1], name)
        t2 = time.perf_counter()
        result = evaluate(fold.Y_test, scores, ties=ties, cutoff=cutoff, random_state=seed)
        stats = tie_statistics(fold.Y_test, scores)
        t3 = time.perf_counter()
    return _Outcome(result.values, result.stderr, stats,
                    {"fit": t1 - t0, "predict": t2 - t1, "evaluate": t3 - t2}, fold.seconds)


def _run_in_process(dataset, splits, classifiers, config, calibrate, random_state, ties, cutoff,
                    n_jobs, record):
    """Every task in this process; returns the calibrated parameters and the calibration
    scores.

    With more than one thread (``n_jobs``), the tasks run side by side on a pool of that many
    Python threads, each task's kernels on one thread (the kernels release the GIL, so the
    Python between them overlaps with another task's kernels): the independent calibrations
    first, then each fold's features and its classifiers. Outcomes are recorded on the
    calling thread in the order of the folds and classifiers, whatever the order in which
    they complete, so the results and the progress messages are the same on any number of
    threads."""
    n_threads = effective_n_jobs(n_jobs)
    n_workers = max(1, min(n_threads, len(splits) * len(classifiers)))
    if n_workers == 1:
        return _run_serially(dataset, splits, classifiers, config, calibrate, random_state,
                             ties, cutoff, n_jobs, record)
    task_jobs = max(1, n_threads // n_workers)
    calibration = {}
    with concurrent.futures.ThreadPoolExecutor(n_workers,
                                               thread_name_prefix="fastrank-study") as pool:
        try:
            if calibrate:  # fewer calibrations than threads: each gets more threads
                calibration_jobs = max(1, n_threads // min(n_workers, len(classifiers)))
                found = {c: pool.submit(_calibration_task, dataset, c, config[c],
                                        splits[0][0], random_state, calibration_jobs)
                         for c in classifiers}
                for c in classifiers:
                    config[c], calibration[c] = found[c].result()
            # tasks are queued in order and a worker takes the oldest: a fold's features
            # are taken before its classifiers, which wait for them on another worker
            pending = collections.deque()
            window = 4 * n_workers  # outcomes awaiting their turn: bounds the folds in memory
            for f, (train, test) in enumerate(splits):
                fold = pool.submit(_fold_task, dataset, train, test, task_jobs)
                for c in classifiers:
                    pending.append((f, c, pool.submit(_classifier_task_of, fold, c, config[c],
                                                      random_state + f, ties, cutoff,
                                                      task_jobs)))
                while len(pending) > window:
                    f_done, c_done, outcome = pending.popleft()
                    record(f_done, c_done, outcome.result())
            while pending:
                f_done, c_done, outcome = pending.popleft()
                record(f_done, c_done, outcome.result())
        except BaseException:  # a task failed, or an interrupt: drop the tasks not started
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return config, calibration


def _classifier_task_of(fold, name, params, seed, ties, cutoff, n_jobs):
    """:func:`_classifier_task` on the fold that the future ``fold`` computes."""
    return _classifier_task(fold.result(), name, params, seed, ties, cutoff, n_jobs)


def _run_serially(dataset, splits, classifiers, config, calibrate, random_state, ties, cutoff,
                  n_jobs, record):
    """Every task in turn, on the calling thread."""
    calibration = {}
    if calibrate:
        for c in classifiers:
            config[c], calibration[c] = _calibration_task(dataset, c, config[c], splits[0][0],
                                                          random_state, n_jobs)
    for f, (train, test) in enumerate(splits):
        fold = _fold_task(dataset, train, test, n_jobs)
        for c in classifiers:
            record(f, c, _classifier_task(fold, c, config[c], random_state + f, ties, cutoff,
                                          n_jobs))
    return config, calibration


class _Shipped:
    """A user's estimator on its way to a Dask cluster, as cloudpickle's bytes, unpickled
    by the task that uses it (:func:`_make_classifier`). Cloudpickle sends a class from a
    module registered with ``cloudpickle.register_pickle_by_value`` (one the workers cannot
    import) by value; as bytes, the estimator also passes a scheduler in this process,
    where Dask would pickle it again with the standard pickle, which refers to a class by
    its module's name."""

    def __init__(self, estimator):
        import cloudpickle  # type: ignore[import-untyped]  # a dependency of Dask's
        self.payload = cloudpickle.dumps(estimator)

    def load(self):
        import cloudpickle
        return cloudpickle.loads(self.payload)


def _run_on_cluster(client, dataset, splits, classifiers, config, calibrate, random_state, ties,
                    cutoff, n_jobs, record):
    """Every task on the cluster of ``client``, recorded as it completes; returns the
    calibrated parameters and the calibration scores."""
    from toolz import identity  # a dependency of Dask's

    from .dask._client import as_completed, gather

    n_jobs = 1 if n_jobs is None else n_jobs
    # The data set goes to the cluster once, as the value of a task rather than scattered:
    # Dask recomputes a task's value lost with a worker, not scattered data (of which it
    # keeps one replica once no task waits for it), and a lost fold must be rebuilt from it.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")  # once, by design
        data = client.submit(identity, dataset, pure=False)
    shipped = {c: p if c in CLASSIFIERS else _Shipped(p) for c, p in config.items()}
    calibrated = {c: client.submit(_calibration_task, data, c, shipped[c], splits[0][0],
                                   random_state, n_jobs, pure=False)
                  for c in (classifiers if calibrate else ())}
    best = {c: client.submit(operator.itemgetter(0), calibrated[c], pure=False)
            for c in calibrated}
    params = {**shipped, **best}
    tasks = {}
    for f, (train, test) in enumerate(splits):
        # no reference kept to the fold's future: its features are released once its
        # classifiers are done (and recomputed by Dask if a worker holding them dies)
        fold = client.submit(_fold_task, data, train, test, n_jobs, pure=False)
        for c in classifiers:
            tasks[client.submit(_classifier_task, fold, c, params[c], random_state + f, ties,
                                cutoff, n_jobs, pure=False)] = (f, c)
    try:
        for future, outcome in as_completed(client, tasks):
            record(*tasks[future], outcome)
    except BaseException:  # a task failed, or an interrupt: stop the study's pending tasks
        # (not the data set's future: cancelling it would cancel the fold tasks, which no
        # client holds any more, and Dask's scheduler fails on that)
        client.cancel([*tasks, *best.values(), *calibrated.values()])
        raise
    found = dict(zip(calibrated, gather(client, calibrated.values())))
    calibration = {c: tried for c, (_, tried) in found.items()}
    return {**config, **{c: chosen for c, (chosen, _) in found.items() if c in CLASSIFIERS}}, \
        calibration


def run_study(dataset: Any = "yeast", classifiers: Sequence[Any] = tuple(CLASSIFIERS),
              folds: int = 10, ties: Sequence[str] = STUDY_TIES, cutoff: str | int = "perfect",
              calibrate: bool = False, random_state: int = 0, n_jobs: int | None = None,
              params: Mapping[str, Mapping[str, Any]] | None = None,
              progress: Callable[[str], Any] | None = None,
              scheduler: Any = None) -> StudyResult:
    """Run the tie study of Melotti (2009) on one data set.

    Folds, features, classifiers, metrics under each ranking type, and the statistics of
    ordinal against the others, as described in the module docstring.

    Parameters
    ----------
    dataset : Dataset, str or path
        A :class:`fastrank.datasets.Dataset`, or a name or path for :func:`load_dataset`.
        Raw-text data sets are indexed with :class:`fastrank.text.TfidfIndexer` fitted on
        each training fold.
    classifiers : sequence of str or (str, estimator) pairs
        Built-in classifiers by name ({"knn", "mlknn", "vgram", "vgramcor"}, in the
        thesis configuration of :data:`CLASSIFIERS`) and/or a user's own
        ``(display_name, estimator)``: any scikit-learn-compatible multi-label estimator
        whose ``decision_function`` (else ``predict_proba``) gives an (n_documents,
        n_labels) belief matrix, e.g. ``OneVsRestClassifier(LogisticRegression())`` or a
        Pipeline. It is cloned (:func:`sklearn.base.clone`) and fitted on each training
        fold as given (its own ``random_state`` is kept); its parameters are recorded as
        its one-line repr. Outputs show the display names.
    folds : int, default 10
        Cross-validation folds (>= 2).
    ties : sequence of str, default :data:`STUDY_TIES`
        Ranking types; must include "ordinal" for the t-tests. Add "expected" for the exact
        mean of ordinal over random orders.
    cutoff : "perfect" or int, default "perfect"
        The predicted sets of the set-based metrics (see :func:`fastrank.metrics.evaluate`).
    calibrate : bool, default False
        Choose k (ML-kNN) and neurons × synapses (VG-RAM) on a validation split of the first
        training fold by ranking loss (melotti2009 §3.5), then run the study with them.
    random_state : int, default 0
        Seeds the folds, the ordinal rankings and the classifiers (module docstring).
    n_jobs : None, -1 or int
        Threads; results do not depend on it. In process: that many tasks side by side, each
        on one kernel thread (None: the OpenMP default). On a Dask cluster: the kernel
        threads of each task (None: one).
    params : dict, optional
        Per-classifier parameter overrides, e.g. ``{"vgram": {"n_neurons": 64}}``.
    progress : callable(str), optional
        Called with a short message after each classifier × fold, as it completes.
    scheduler : None, distributed.Client or str, optional
        None: run in this process. Otherwise run the folds × classifiers as tasks on a Dask
        cluster (needs ``fastrank-mlc[dask]``): a ``distributed.Client``, ``"local"`` /
        ``"local:N"`` (a new cluster on this machine of one single-threaded worker process
        per core / N of them) or the address of a running scheduler, ``"tcp://HOST:PORT"``
        (see :func:`fastrank.dask.connect`). The result is byte-identical to the run in
        process (module docstring).

    Returns
    -------
    StudyResult

    Raises
    ------
    ValueError, TypeError
        For an invalid argument, before anything is computed: among them a classifier
        named twice, an unknown name, an estimator without ``decision_function`` or
        ``predict_proba``, ``params`` for an own estimator. ValueError also when an own
        estimator's beliefs do not have the shape (test documents, labels).
    ConnectionError
        When the scheduler cannot be reached, before anything is computed.
    fastrank.dask.NoWorkersError
        When the cluster has had no running worker for
        :func:`fastrank.dask.no_workers_timeout` seconds (a ``TimeoutError``).

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, ch. 3-5, Fig. 3.1.

    Examples
    --------
    kNN (all neighbours, as in the thesis) on the embedded yeast data, 3 folds:

    >>> from fastrank import run_study
    >>> result = run_study("yeast", classifiers=("knn",), folds=3,
    ...                    ties=("ordinal", "dense", "standard", "modified", "expected"))
    >>> [round(result.mean("knn", t, "coverage"), 3) for t in result.ties]
    [6.672, 1.759, 4.933, 6.904, 6.661]
    >>> result.partial_order("knn", "coverage")
    'O ≻ D|P; O ≺ M; O ≡ E'
    """
    if not isinstance(dataset, (str, os.PathLike, _datasets.Dataset)):
        raise TypeError(f"dataset must be a fastrank.datasets.Dataset or a name/path, got "
                        f"{type(dataset).__name__}")
    dataset = load_dataset(dataset)
    if not isinstance(calibrate, bool) or not (progress is None or callable(progress)):
        raise TypeError("calibrate must be True or False, progress a callable or None")
    classifiers, config = _plan(classifiers, params)
    if not isinstance(random_state, numbers.Integral) or isinstance(random_state, bool):
        raise TypeError(f"random_state must be an int (fold f uses random_state + f), "
                        f"got {random_state!r}")
    _check_cutoff(cutoff)  # before any fold is fitted
    ties = tuple(ties)
    for t in ties:
        check_option("ranking type", t, ALLOWED_TIES)
    if not isinstance(folds, int) or folds < 2:
        raise ValueError(f"folds must be an int >= 2, got {folds!r}")
    if folds > dataset.n_documents:
        raise ValueError(f"folds={folds} exceeds the {dataset.n_documents} documents")
    effective_n_jobs(n_jobs)
    splits = list(KFold(n_splits=folds, shuffle=True, random_state=random_state)
                  .split(np.arange(dataset.n_documents)))
    values = {c: np.empty((len(ties), len(METRIC_KEYS), folds)) for c in classifiers}
    stderr = {c: np.empty((len(ties), len(METRIC_KEYS), folds)) for c in classifiers}
    tie_stats = {c: {"top": [None] * folds, "boundary": [None] * folds,
                     "group_size": [None] * folds} for c in classifiers}
    timings = {"indexing": [None] * folds, **{c: {"fit": [None] * folds,
                                                  "predict": [None] * folds,
                                                  "evaluate": [None] * folds}
                                              for c in classifiers}}

    def record(f, c, outcome):
        values[c][:, :, f] = outcome.values
        stderr[c][:, :, f] = outcome.stderr
        for key, v in outcome.tie_stats.items():
            tie_stats[c][key][f] = v
        for stage, seconds in outcome.seconds.items():
            timings[c][stage][f] = seconds
        timings["indexing"][f] = outcome.indexing
        if progress:
            progress(f"{display_name(c)}: fold {f + 1}/{folds} "
                     f"(fit {outcome.seconds['fit']:.2f}s, "
                     f"predict {outcome.seconds['predict']:.2f}s)")

    run = (dataset, splits, classifiers, config, calibrate, random_state, ties, cutoff, n_jobs,
           record)
    if scheduler is None:
        config, calibration = _run_in_process(*run)
    else:
        from .dask import connect  # Dask is optional
        with connect(scheduler) as client:
            config, calibration = _run_on_cluster(client, *run)
    return StudyResult(
        dataset=_dataset_record(dataset),
        classifiers=classifiers, ties=ties, folds=folds, random_state=random_state,
        cutoff=cutoff, values=values, params=_recorded_params(classifiers, config),
        tie_stats=tie_stats,
        calibration={c: tried for c, tried in calibration.items() if tried}, stderr=stderr,
        timings=timings)


def _dataset_record(dataset):
    """What a study records of its data set (``StudyResult.dataset``): its name, its
    :meth:`~fastrank.datasets.Dataset.summary` and ``sha256``, the SHA-256 of its contents
    (:func:`_data_digest`) -- the identity :func:`fastrank.benchmark.run_benchmark` checks
    before it resumes from saved results."""
    summary = {k: _plain(v) for k, v in dataset.summary().items()}
    return {"name": dataset.name, **summary, "sha256": _data_digest(dataset)}


def _data_digest(dataset, chunk=1 << 20):
    """SHA-256 (hex) of a data set's contents, independent of how it is stored: the label
    matrix (shape, then its 0/1 bytes row by row), the features as canonical CSR (shape,
    row pointers and column indices as little-endian int64, values as little-endian
    float64) and the raw texts (UTF-8, each after its length). Arrays are converted
    ``chunk`` entries at a time: no copy of the data set is made."""
    digest = hashlib.sha256()

    def add(a, dtype):
        for lo in range(0, a.size, chunk):
            digest.update(np.ascontiguousarray(a[lo:lo + chunk], dtype=dtype).data)

    digest.update(b"Y")
    add(np.asarray(dataset.Y.shape), "<i8")
    add(dataset.Y.reshape(-1), np.uint8)
    if dataset.X is not None:
        X = dataset.X
        digest.update(b"X")
        for part, dtype in ((np.asarray(X.shape), "<i8"), (X.indptr, "<i8"),
                            (X.indices, "<i8"), (X.data, "<f8")):
            add(part, dtype)
    if dataset.texts is not None:
        digest.update(b"T")
        for text in dataset.texts:
            raw = text.encode("utf-8", "surrogatepass")
            digest.update(len(raw).to_bytes(8, "little") + raw)
    return digest.hexdigest()


def _plain(v):
    """A JSON-native copy of a summary value (NumPy scalars and tuples become plain)."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    return v
