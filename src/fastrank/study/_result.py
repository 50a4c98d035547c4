"""The result of a study: its values per fold, and the comparisons computed from them once.
"""
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._vocabulary import LOWER_IS_BETTER, TIE_LETTERS, check_alpha, favourable
from ..metrics import ESTIMATED_KEYS, METRIC_KEYS
from ..stats import friedman, paired_ttest
from ._plan import ALLOWED_TIES, TIE_AWARE, check_cutoff, display_name


#: The ``format`` field of ``results.json``.
RESULT_FORMAT = "fastrank-study/2"
#: Formats :meth:`StudyResult.from_dict` reads: version 1 has the same fields, but its
#: VG-RAM classifiers drew their random tie choices from the fold's seed itself, so its
#: results are read, never resumed (:func:`fastrank.study.compare.run_benchmark`).
READABLE_FORMATS = ("fastrank-study/1", RESULT_FORMAT)
#: The tie statistics of a classifier's test rankings, per fold
#: (:attr:`StudyResult.tie_stats`).
TIE_STAT_KEYS = ("top", "boundary", "group_size")


def memoised(cache, key, compute):
    """``cache[key]``, computed by ``compute()`` the first time: a result's comparisons are
    computed once, and every table, figure and caption shares them."""
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def read_only(res):
    """A memoised :class:`fastrank.stats.FriedmanResult`, its arrays made read-only."""
    res.ranks.setflags(write=False)
    res.mean_ranks.setflags(write=False)
    return res


@dataclass
class StudyResult:
    """Everything a study produced.

    ``values[c]`` is an array (n_ties, n_metrics, n_folds) for classifier ``c``;
    ``stderr[c]`` the same shape: NaN for every exact value, which is every value of a
    study fastrank runs; a loaded result may carry the Monte-Carlo standard errors of
    ``fastrank.metrics.ESTIMATED_KEYS`` under "expected" (see :meth:`estimated`);
    ``tie_stats[c]`` maps a statistic name to its per-fold values; ``params[c]`` the
    classifier's parameters (after calibration); ``timings[c]`` per-fold seconds of "fit",
    "predict" and "evaluate" (metrics + tie statistics), ``timings["indexing"]`` per-fold
    seconds of building the features (tf-idf for raw text, row selection otherwise).

    Returned by :func:`run_study`; :meth:`to_json` / :meth:`from_json` round-trip it
    (timings excluded). The comparisons (:meth:`ttest` and what derives from it,
    :meth:`friedman`) are computed once per arguments and kept: a result is not changed
    once it is made.

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
    'O ≻ D|S; O ≺ M'
    >>> result.partial_order("mlknn", "coverage")
    'O ≡ D|S|M'
    >>> result.recommendation("one_error")       # Table 5.3, "experiments" column
    'D/S/M'
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
    #: the comparisons computed so far, by method and arguments (see :func:`memoised`)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def estimated(self, metric: str) -> bool:
        """Whether the "expected" values of ``metric`` are Monte-Carlo estimates: a finite
        standard error on some fold. Never in a study fastrank runs (its documents weigh 1,
        so every expected value is exact); possible in a result loaded from a file."""
        if "expected" not in self.ties or metric not in ESTIMATED_KEYS:
            return False
        row, col = self.ties.index("expected"), self.metrics.index(metric)
        return any(np.isfinite(self.stderr[c][row, col]).any() for c in self.stderr)

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
        return memoised(self._cache, ("ttest", classifier, metric, other, check_alpha(alpha)),
                        lambda: paired_ttest(self.fold_values(classifier, "ordinal", metric),
                                             self.fold_values(classifier, other, metric),
                                             alpha=alpha))

    @property
    def reference_ties(self) -> str:
        """The ranking type under which :meth:`friedman` compares the classifiers: modified
        (the thesis' choice) when the study ran it, else its last ranking type."""
        return "modified" if "modified" in self.ties else self.ties[-1]

    def friedman(self, treatments: str, alpha: float = 0.05) -> Any:
        """Friedman / Iman-Davenport test and critical differences (Demšar 2006) of the
        classifiers or of the ranking types, ranked within blocks (rank 1 = the most
        favourable value: lowest for a loss, highest otherwise).

        Parameters
        ----------
        treatments : {"classifiers", "ties"}
            ``"classifiers"``: each metric is a block, holding the classifiers' means over the
            folds under :attr:`reference_ties`; ``"ties"``: each classifier x metric pair is
            a block, holding its means under each ranking type. The blocks share one data
            set and its folds, so they are not independent: the result describes, the paired
            t-tests (:meth:`ttest`) decide.
        alpha : float, default 0.05

        Returns
        -------
        fastrank.stats.FriedmanResult
            Its arrays are read-only.

        Raises
        ------
        ValueError
            An unknown ``treatments``; fewer than two treatments or blocks.
        """
        def compute():
            if treatments == "classifiers":
                ref = self.reference_ties
                table = [favourable([self.mean(c, ref, m) for c in self.classifiers], m)
                         for m in self.metrics]
            elif treatments == "ties":
                table = [favourable([self.mean(c, t, m) for t in self.ties], m)
                         for c in self.classifiers for m in self.metrics]
            else:
                raise ValueError(f'treatments must be "classifiers" or "ties", got '
                                 f"{treatments!r:.80}")
            return read_only(friedman(np.array(table), higher_is_better=True, alpha=alpha))
        return memoised(self._cache, ("friedman", treatments, check_alpha(alpha)), compute)

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
        'O ≺ D|S|M' or 'O ≻ D|S; O ≺ M'.

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
        'O/D/S/M' or 'M' (the rule is in :mod:`fastrank.study`).

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
        >>> from fastrank import run_study
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
        """JSON-ready, complete and reloadable (timings excluded: see :mod:`fastrank.study`)."""
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
                           for m in ESTIMATED_KEYS if self.estimated(m)}
                       for c in self.classifiers}
            if any(map(self.estimated, ESTIMATED_KEYS)) else {},
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
        for key, value, least in (("folds", folds, 2), ("random_state", random_state, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"corrupt study result: {key} is not an int >= {least}, got "
                                 f"{value!r:.80}")
        for key in ("dataset", "params", "tie_stats"):
            if not isinstance(_result_entry(d, key), dict):
                raise ValueError(f"corrupt study result: {key} is not a dict")
        for key in ("params", "tie_stats"):  # one dict per classifier
            for c in classifiers:
                if not isinstance(_result_entry(d, key, c), dict):
                    raise ValueError(f"corrupt study result: {key}/{c} is not a dict")
        for key in ("calibration", "stderr"):  # optional
            if not isinstance(d.get(key, {}), dict):
                raise ValueError(f"corrupt study result: {key} is not a dict")

        def per_fold(*path):
            raw = _result_entry(d, *path)
            try:  # numbers only: numpy would read "1.5" and true as numbers too
                row = None if not isinstance(raw, list) or any(
                    isinstance(v, (str, bool)) for v in raw) else np.array(raw, dtype=np.float64)
            except (ValueError, TypeError):
                row = None
            if row is None or row.shape != (folds,):
                raise ValueError(f"corrupt study result: {'/'.join(path)} is not {folds} "
                                 "numbers (one per fold)")
            return row

        values = {c: np.array([[per_fold("values", c, t, m) for m in metrics] for t in ties])
                  for c in classifiers}
        for c, stats in d["tie_stats"].items():
            if not isinstance(stats, dict) or set(stats) != set(TIE_STAT_KEYS):
                raise ValueError(f"corrupt study result: tie_stats/{c} is not a dict of "
                                 f"{', '.join(TIE_STAT_KEYS)}")
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
        check_cutoff(cutoff)
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
