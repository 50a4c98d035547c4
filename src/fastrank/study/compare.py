"""The tie study over many data sets, compared as in Demšar (2006) and matsubara2008 §5.2.2.

Each data set is one :func:`fastrank.study.run_study` (the same folds, classifiers, seeds and
ranking types on every data set); :class:`BenchmarkResult` holds the studies and compares the
classifiers across the data sets, separately for every metric and ranking type:

* the value of a classifier on a data set is its mean over the folds; the classifiers are
  ranked on each data set (1 = the most favourable value: lowest for a loss, highest
  otherwise; tied values share the average of their positions);
* :meth:`BenchmarkResult.friedman`: average ranks, Friedman χ² and Iman–Davenport F with
  their p-values, Nemenyi and Bonferroni–Dunn critical differences
  (:func:`fastrank.stats.friedman`);
* :meth:`BenchmarkResult.pairwise`: every pair of classifiers by a two-sided Wilcoxon
  signed-rank test over the data sets with Demšar's treatment of equal values (their ranks
  split between W+ and W-, ``zero_method="zsplit"``), the p-values adjusted by Holm's
  step-down procedure (:func:`fastrank.stats.holm`);
* :meth:`BenchmarkResult.kendall_tau` and :meth:`BenchmarkResult.winner_changes`: where the
  ranking type changes the comparison -- Kendall's τ-b between the classifiers' average
  ranks under ordinal and under another type, and the metric × data set cells whose best
  classifier differs between them;
  :meth:`BenchmarkResult.significance_changes`: the pairs whose Nemenyi verdict differs.

With fewer than :data:`MIN_DATASETS` (10) data sets these tests say little: Demšar (2006)
advises more than about ten, for the power of the Friedman test and for the χ² and F
approximations of its distribution. The tests are still computed, and the outputs
(terminal, ``tables.md``, ``report.html``) say so beside them.

Resuming (:func:`run_benchmark` with ``out_dir``): each finished data set's output set is
written atomically into ``out_dir/<data set>/`` as it finishes. A run into the same folder
loads every data set whose ``results.json`` is there and was made with the same
configuration (classifiers and their parameters, folds, ranking types, seed, cutoff,
calibration) on the same data instead of computing it again. Each such data set is loaded
to check its identity: the saved record of the data set (its name, its summary -- numbers
of documents, features and labels, cardinality, ... -- and the SHA-256 of its contents)
must be that of the data set given. Results of another configuration or another data set,
and results no study can produce (a metric outside its range, e.g. a one-error outside
[0, 1], coverage outside [0, n_labels - 1]), are refused with a ValueError naming the file
and the difference (nothing is overwritten: choose another folder or remove it). A data
set's folder is named after it (:func:`fastrank.study.dataset_name`).
"""
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _sps

from .._vocabulary import best_mask, check_alpha, favourable
from ..datasets._load import dataset_name, load_dataset
from ..stats import friedman, holm, wilcoxon
from ._plan import CLASSIFIERS, _dataset_record, _record_of
from ._result import RESULT_FORMAT, TIE_STAT_KEYS, StudyResult, _pandas, memoised, read_only
from ._run import _planned_record, run_study

__all__ = ["run_benchmark", "BenchmarkResult", "PairwiseComparison"]

#: Below this many data sets the outputs warn that the tests across data sets mean little
#: (Demšar 2006 advises more than about ten).
MIN_DATASETS = 10

#: The ``format`` field of ``benchmark.json``.
BENCHMARK_FORMAT = "fastrank-benchmark/1"


@dataclass(frozen=True)
class PairwiseComparison:
    """One pair of classifiers in :meth:`BenchmarkResult.pairwise`.

    Attributes
    ----------
    first, second : str
        The classifiers' keys (``first`` comes before ``second`` in the study).
    statistic : float
        Wilcoxon's min(W+, W-) over the data sets.
    pvalue : float
        Two-sided p-value of the Wilcoxon signed-rank test (NaN when the two classifiers
        are equal on every data set).
    adjusted : float
        ``pvalue`` after Holm's step-down adjustment over all pairs (1 for NaN).
    significant : bool
        ``adjusted <= alpha`` (Holm's step-down procedure rejects equality).
    better : str or None
        The classifier with the lower average rank (None when equal).
    """

    first: str
    second: str
    statistic: float
    pvalue: float
    adjusted: float
    significant: bool
    better: object


@dataclass
class BenchmarkResult:
    """The studies of one benchmark (data set name -> :class:`StudyResult`, in run order)
    and their comparison across data sets (module docstring).

    Every study has the same classifiers, ranking types and metrics.

    Parameters
    ----------
    studies : dict of str to StudyResult
    timings : dict, optional
        Per data set computed in this run, the seconds of ``"load"``, ``"study"`` and
        ``"write"`` (its output set); measurements, not results, so not in
        :meth:`to_json`.

    Raises
    ------
    ValueError
        For fewer than one study, or studies that differ in classifiers, ranking types or
        metrics.

    Examples
    --------
    Four disjoint quarters of the embedded yeast data stand in for four data sets:

    >>> from fastrank.study.compare import run_benchmark
    >>> from fastrank.datasets import load
    >>> yeast = load("yeast")
    >>> sets = [yeast.take(range(i, 2400, 4), name=f"yeast-{i}") for i in range(4)]
    >>> res = run_benchmark(sets, ["knn", "mlknn"], folds=2)
    >>> sorted(res.studies)
    ['yeast-0', 'yeast-1', 'yeast-2', 'yeast-3']
    >>> res.friedman("coverage", "dense").mean_ranks
    array([1., 2.])
    """

    studies: dict
    timings: dict = field(default_factory=dict)
    #: the comparisons computed so far, by method and arguments (see
    #: :func:`fastrank.study._result.memoised`)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        if not self.studies:
            raise ValueError("a benchmark needs at least one study")
        first = next(iter(self.studies.values()))
        for name, s in self.studies.items():
            for attr in ("classifiers", "ties", "metrics"):
                if tuple(getattr(s, attr)) != tuple(getattr(first, attr)):
                    raise ValueError(f"study {name!r} has {attr} {getattr(s, attr)}, the "
                                     f"others {getattr(first, attr)}")

    @property
    def datasets(self):
        """The data sets' names, in run order."""
        return tuple(self.studies)

    @property
    def classifiers(self):
        return next(iter(self.studies.values())).classifiers

    @property
    def ties(self):
        return next(iter(self.studies.values())).ties

    @property
    def metrics(self):
        return next(iter(self.studies.values())).metrics

    def table(self, metric, ties):
        """The values the classifiers are compared on.

        Parameters
        ----------
        metric : str
            A key of :data:`fastrank.metrics.METRIC_KEYS`.
        ties : str
            A ranking type of the studies.

        Returns
        -------
        ndarray, shape (n_datasets, n_classifiers)
            The mean over the folds of ``metric`` under ``ties`` (read-only).
        """
        def compute():
            table = np.array([[s.mean(c, ties, metric) for c in s.classifiers]
                              for s in self.studies.values()])
            table.setflags(write=False)
            return table
        return memoised(self._cache, ("table", metric, ties), compute)

    def friedman(self, metric, ties, alpha=0.05):
        """Friedman / Iman–Davenport test and the critical differences over the data sets
        (:func:`fastrank.stats.friedman`; rank 1 = the most favourable value).

        Computed once per ``(metric, ties, alpha)`` and kept, so every table, figure and
        comparison of the benchmark shares it (the result's arrays are read-only; a
        benchmark's studies are not changed once it is made).

        Raises
        ------
        ValueError
            With fewer than two data sets or classifiers.
        """
        return memoised(self._cache, ("friedman", metric, ties, check_alpha(alpha)),
                        lambda: read_only(friedman(favourable(self.table(metric, ties), metric),
                                                   alpha=alpha)))

    def pairwise(self, metric, ties, alpha=0.05):
        """Every pair of classifiers: two-sided Wilcoxon signed-rank test over the data
        sets, a data set where both have the same value splitting its rank between W+ and
        W- (Demšar 2006; ``fastrank.stats.wilcoxon(..., zero_method="zsplit")``),
        Holm-adjusted over the pairs.

        Returns
        -------
        list of PairwiseComparison
            In the order of the pairs (i < j) of :attr:`classifiers`.
        """
        return list(memoised(self._cache, ("pairwise", metric, ties, check_alpha(alpha)),
                             lambda: self._pairwise(metric, ties, alpha)))

    def _pairwise(self, metric, ties, alpha):
        table = favourable(self.table(metric, ties), metric)
        names = self.classifiers
        ranks = self.friedman(metric, ties, alpha).mean_ranks
        pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
        tests = [wilcoxon(table[:, i], table[:, j], alpha, zero_method="zsplit")
                 for i, j in pairs]
        corrected = holm([1.0 if t.identical else t.pvalue for t in tests], alpha)
        return tuple(PairwiseComparison(
            names[i], names[j], t.statistic, t.pvalue, float(p), bool(reject),
            None if ranks[i] == ranks[j] else names[i] if ranks[i] < ranks[j] else names[j])
            for (i, j), t, p, reject in zip(pairs, tests, corrected.adjusted,
                                            corrected.reject))

    def kendall_tau(self, metric, other, reference="ordinal"):
        """Kendall's τ-b between the classifiers' average ranks under two ranking types.

        Parameters
        ----------
        metric : str
        other : str
            The ranking type compared with ``reference``.
        reference : str, default "ordinal"

        Returns
        -------
        float
            1 for the same order, -1 for the reverse; NaN when one of them ties every
            classifier (``scipy.stats.kendalltau``).
        """
        a = self.friedman(metric, reference).mean_ranks
        b = self.friedman(metric, other).mean_ranks
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            return float("nan")
        return float(_sps.kendalltau(a, b).statistic)

    def best(self, metric, ties):
        """The best classifiers of each data set.

        Parameters
        ----------
        metric, ties : str

        Returns
        -------
        dict of str to tuple of str
            Per data set, every classifier whose mean over the folds is the most favourable
            (lowest for a loss, highest otherwise).
        """
        best = best_mask(self.table(metric, ties), metric)
        return {d: tuple(c for c, b in zip(self.classifiers, row) if b)
                for d, row in zip(self.datasets, best)}

    def winner_changes(self, reference="ordinal"):
        """The metric × data set cells whose best classifier (:meth:`best`) under a
        ranking type differs from that under ``reference``.

        Returns
        -------
        list of dict
            ``{"metric", "dataset", "ties", "reference_best", "best"}`` (tuples of
            classifier keys), by metric, then data set, then ranking type.
        """
        return [dict(change) for change in
                memoised(self._cache, ("winner_changes", reference),
                         lambda: self._winner_changes(reference))]

    def _winner_changes(self, reference):
        out = []
        others = [t for t in self.ties if t != reference]
        for m in self.metrics:
            ref = self.best(m, reference)
            by_type = {t: self.best(m, t) for t in others}
            for d in self.datasets:
                for t in others:
                    if by_type[t][d] != ref[d]:
                        out.append({"metric": m, "dataset": d, "ties": t,
                                    "reference_best": ref[d], "best": by_type[t][d]})
        return out

    def significant_pairs(self, metric, ties, alpha=0.05):
        """The pairs (better, worse) whose average ranks differ by more than the Nemenyi
        critical difference, as a set."""
        res = self.friedman(metric, ties, alpha)
        r, names = res.mean_ranks, self.classifiers
        return {(names[i], names[j]) for i in range(len(names)) for j in range(len(names))
                if r[j] - r[i] > res.cd_nemenyi}

    def significance_changes(self, metric, other, alpha=0.05, reference="ordinal"):
        """Nemenyi-significant pairs gained and lost going from ``reference`` to ``other``:
        ``(gained, lost)``, each a sorted list of (better, worse)."""
        a = self.significant_pairs(metric, reference, alpha)
        b = self.significant_pairs(metric, other, alpha)
        return sorted(b - a), sorted(a - b)

    # ---- tidy data and persistence ---------------------------------------------------------

    def to_frame(self):
        """A tidy pandas DataFrame with columns dataset, classifier, ties, metric, fold,
        value (the display names of the classifiers; see
        :meth:`fastrank.study.StudyResult.to_frame`).

        Raises
        ------
        ImportError
            When pandas is not installed.
        """
        pd = _pandas()
        return pd.concat([s.to_frame().assign(dataset=d) for d, s in self.studies.items()],
                         ignore_index=True)[["dataset", "classifier", "ties", "metric",
                                             "fold", "value"]]

    def to_dict(self):
        """JSON-ready: the format and every study's :meth:`StudyResult.to_dict`."""
        return {"format": BENCHMARK_FORMAT,
                "studies": {d: s.to_dict() for d, s in self.studies.items()}}

    def to_json(self):
        """:meth:`to_dict` as JSON text (reloaded by :meth:`from_json`)."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=True) + "\n"

    @classmethod
    def from_dict(cls, d):
        """The inverse of :meth:`to_dict`.

        Raises
        ------
        ValueError
            When ``d`` is not a benchmark result.
        """
        if not isinstance(d, dict) or d.get("format") != BENCHMARK_FORMAT:
            got = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"not a fastrank benchmark result (format {got!r}, expected "
                             f"{BENCHMARK_FORMAT!r})")
        studies = d.get("studies")
        if not isinstance(studies, dict):
            raise ValueError("corrupt benchmark result: studies is not a dict of study "
                             "results by data set")
        return cls({name: StudyResult.from_dict(s) for name, s in studies.items()})

    @classmethod
    def from_json(cls, text):
        """The inverse of :meth:`to_json`.

        Raises
        ------
        ValueError
            For text that is not a benchmark result.
        """
        try:
            return cls.from_dict(json.loads(text))
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as exc:
            raise ValueError(f"corrupt benchmark result: {exc}") from None


def _differences(found, wanted):
    return [f"{k} {found.get(k)!r:.80} instead of {wanted[k]!r:.80}" for k in wanted
            if found.get(k) != wanted[k]]


def _out_of_range(result):
    """The first value of a saved study that no study can produce, as text, or None: every
    per-fold metric value finite and in [0, 1] (coverage in [0, n_labels - 1]), the tie
    statistics in their ranges (shares in [0, 1], mean group size in [1, n_labels]), the
    Monte-Carlo standard errors finite and >= 0 where given. ``result.dataset`` is the
    checked record of the data set, so ``labels`` is its number of labels."""
    q = result.dataset["labels"]
    for c in result.classifiers:
        for ti, t in enumerate(result.ties):
            for mi, m in enumerate(result.metrics):
                hi = q - 1 if m == "coverage" else 1
                for f, v in enumerate(result.values[c][ti, mi].tolist()):
                    if not 0 <= v <= hi:  # NaN fails too
                        return f"{c}/{t}/{m} is {v!r} in fold {f + 1}, outside [0, {hi}]"
                errors = result.stderr[c][ti, mi]
                if np.any(errors < 0) or np.any(np.isinf(errors)):
                    return f"stderr of {c}/{t}/{m} is not a standard error: {errors.tolist()}"
        for key, values in result.tie_stats[c].items():
            lo, hi = (1, q) if key == "group_size" else (0, 1)
            if key not in TIE_STAT_KEYS \
                    or not all(lo <= v <= hi for v in values):
                return f"tie_stats/{c}/{key} is {values!r:.80}, outside [{lo}, {hi}]"
    return None


def run_benchmark(datasets, classifiers=tuple(CLASSIFIERS), *, out_dir=None,
                  alpha=0.05, pdf=True, progress=None, **study_options):
    """Run the tie study on several data sets and compare the classifiers across them.

    Parameters
    ----------
    datasets : sequence of Dataset, str or path
        The data sets (see :func:`fastrank.study.load_dataset`: embedded names, files, or
        names for :func:`fastrank.datasets.fetch`), each loaded when its turn comes. Their
        names (:func:`fastrank.study.dataset_name`) must differ.
    classifiers : sequence of str or (str, estimator) pairs
        As for :func:`fastrank.study.run_study`.
    out_dir : str or path, optional
        Write each data set's output set (:func:`fastrank.report.write_study`) into
        ``out_dir/<name>/`` as it finishes, and resume from there (module docstring). The
        across-data-set outputs are written by :func:`fastrank.report.write_benchmark`.
    alpha : float, default 0.05
        Significance level of the per-data-set reports written to ``out_dir``.
    pdf : bool, default True
        Write the figures of those reports as PDF too (see
        :func:`fastrank.report.write_study`).
    progress : callable(str, int), optional
        Called with a message (prefixed by the data set's name) and the number of
        classifier × fold tasks done so far, after each task, once per data set loaded
        from ``out_dir`` (``"<name>: done earlier"``, counting all of its tasks), and
        before each part of a data set's report written to ``out_dir``.
    **study_options
        ``folds``, ``ties``, ``cutoff``, ``calibrate``, ``random_state``, ``n_jobs``,
        ``params``, ``scheduler``: as for :func:`fastrank.study.run_study`, the same for
        every data set.

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    ValueError, TypeError
        For invalid arguments, two data sets of the same name or (with ``out_dir``) one
        named as a benchmark output (``tables.md``, ``figures``, ...), before anything is
        computed; ValueError when ``out_dir`` holds a data set's results of another
        configuration or another data set, or values no study can produce.

    Examples
    --------
    Your own estimator beside the built-in ones, on two halves of the embedded yeast data
    (file paths and Mulan names work alike):

    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.multiclass import OneVsRestClassifier
    >>> from fastrank.datasets import load
    >>> yeast = load("yeast")
    >>> halves = [yeast.take(range(i, 2400, 2), name=f"yeast-{i}") for i in range(2)]
    >>> own = ("OvR logistic", OneVsRestClassifier(LogisticRegression(max_iter=300)))
    >>> res = run_benchmark(halves, ["knn", own], folds=2)
    >>> frame = res.to_frame()
    >>> sorted(frame.classifier.unique())
    ['OvR logistic', 'kNN']
    """
    from ..report import BENCHMARK_FILES, FIGURES_DIR, check_output_dir, write_study

    if isinstance(datasets, (str, os.PathLike)):
        raise TypeError(f"datasets must be a sequence of data sets, got {datasets!r}")
    datasets = list(datasets)
    if not datasets:
        raise ValueError("datasets must be a non-empty sequence of data sets")
    names = [dataset_name(d) for d in datasets]
    seen = set()
    for n in names:
        if n in seen:
            raise ValueError(f"two data sets are named {n!r}; each needs its own name")
        seen.add(n)
    unknown = set(study_options) - {"folds", "ties", "cutoff", "calibrate", "random_state",
                                     "n_jobs", "params", "scheduler"}
    if unknown:
        raise TypeError(f"unknown study options {sorted(unknown)}")
    check_alpha(alpha)
    wanted = _planned_record(classifiers, study_options)
    done = {}
    if out_dir is not None:
        check_output_dir(out_dir, BENCHMARK_FILES)
        for n in names:  # each data set's folder: out_dir/<name>, beside the benchmark's
            if n in (*BENCHMARK_FILES, FIGURES_DIR):
                raise ValueError(f"a data set is named {n!r}, as one of the benchmark's "
                                 f"outputs in {out_dir}; rename it")
            if n in ("", ".", "..") or any(c in n for c in ("/", os.sep, os.altsep or "/")):
                raise ValueError(f"a data set is named {n!r}, which is no folder name in "
                                 f"{out_dir}; rename it")
        for spec, n in zip(datasets, names):
            sub = os.path.join(out_dir, n)
            check_output_dir(sub)
            path = os.path.join(sub, "results.json")
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                found = StudyResult.from_json(text)
                written = json.loads(text)["format"]
                if written != RESULT_FORMAT:
                    raise ValueError(f"{path} was written by an earlier fastrank (format "
                                     f"{written!r}, whose random tie choices differ); "
                                     "choose another output folder or remove it")
                diff = _differences(_record_of(found), wanted)
                if diff:
                    raise ValueError(f"{path} holds results of another configuration ("
                                     + "; ".join(diff) + "); choose another output folder "
                                     "or remove it")
                diff = _differences(found.dataset, _dataset_record(load_dataset(spec)))
                if diff:
                    raise ValueError(f"{path} holds results of another data set than {n!r} ("
                                     + "; ".join(diff) + "); choose another output folder "
                                     "or remove it")
                problem = _out_of_range(found)
                if problem:
                    raise ValueError(f"{path} holds impossible results ({problem}); choose "
                                     "another output folder or remove it")
                done[n] = found
    studies, timings = {}, {}
    per_dataset = len(wanted["classifiers"]) * wanted["folds"]
    for i, (spec, n) in enumerate(zip(datasets, names)):
        if n in done:
            studies[n] = done[n]
            if progress:
                progress(f"{n}: done earlier", (i + 1) * per_dataset)
            continue
        count = [i * per_dataset]

        def step(msg, n=n, count=count):
            count[0] += 1
            if progress:
                progress(f"{n}: {msg}", count[0])

        t0 = time.perf_counter()
        dataset = load_dataset(spec)
        t1 = time.perf_counter()
        result = run_study(dataset, classifiers=classifiers, progress=step, **study_options)
        t2 = time.perf_counter()
        if out_dir is not None:
            write_study(result, os.path.join(out_dir, n), alpha=alpha, pdf=pdf,
                        progress=progress and (lambda msg, n=n, count=count:
                                               progress(f"{n}: {msg}", count[0])))
        timings[n] = {"load": t1 - t0, "study": t2 - t1, "write": time.perf_counter() - t2}
        studies[n] = result
    return BenchmarkResult(studies, timings)

