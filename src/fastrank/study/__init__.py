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
  threads (one after the other on one thread); with ``scheduler`` they are Dask tasks, running
  single-threaded unless ``n_jobs`` says
  otherwise, since Dask runs one task per worker thread. Among the folds queued together
  (in process, as many as four pending outcomes per thread allow; on Dask, all), the
  tasks of the classifiers that usually take longest start first (a user's estimator,
  of unknown cost, then VG-RAM WNN, WNN-COR, ML-kNN and kNN), so that short tasks end
  the study. The data set is sent to the
  cluster once, as the value of a task (so that Dask can rebuild a fold lost with a
  worker). Calibration (``calibrate=True``) is one task per classifier there, which that
  classifier's fold tasks wait for. The same functions compute every task either way, so
  the results, and ``results.json``, are byte-identical; a task whose worker died is run
  again by Dask, with the same result, and a cluster left without a running worker for
  :func:`fastrank.dask.no_workers_timeout` seconds ends the study with
  :class:`fastrank.dask.NoWorkersError`.
* A user's own estimator (``run_study(classifiers=[..., (name, estimator)])``) is cloned
  for each fold and fitted as given, keeping its own ``random_state``; its beliefs are its
  ``decision_function``, else its ``predict_proba`` (of scikit-learn's multi-output list of
  per-label arrays, or of its one array for a one-label data set, each label's class-1
  column); its recorded parameters are its one-line repr. A trial fit on a slice of the
  first training fold checks it before any fold runs.
* Partial order symbols compare *values*: ``O ≺ X`` means the metric is significantly
  smaller under ordinal than under ``X`` (t < 0), ``O ≻ X`` significantly larger,
  ``O ≡ X`` not significant or identical samples (α = 5 %, df = folds − 1).
* The ranking types to use per metric, the report's "this study" column (the thesis'
  Table 5.3 "experiments" column; judged on ordinal against dense, standard and modified;
  "expected" is reported but not part of it): ``O/D/S/M`` when no classifier shows a
  significant difference for the metric; otherwise the tie-aware types, keeping — where they
  disagree
  among themselves (coverage) — only those that never favour tied rankings relative to
  ordinal (a loss not significantly smaller, a gain not significantly larger). The "Melotti
  (2009)" column is the thesis' choice, modified (``M``), for every metric.
* Letters: O, D, S, M, E for ordinal, dense, standard, modified, expected (the thesis
  writes P, for "Padrão", where the standard ranking has S).
* Timings are measurements, not results: they are kept in :attr:`StudyResult.timings` and
  the report, but not in ``results.json``, so that a seed gives a byte-identical file on
  any number of threads.

The package: :mod:`fastrank.study` runs one data set (:func:`run_study`, :class:`StudyResult`);
:mod:`fastrank.study.compare` runs many and compares the classifiers across them
(:func:`~fastrank.study.compare.run_benchmark`).
"""
from .._vocabulary import LOWER_IS_BETTER, TIE_LETTERS
from ..datasets._load import dataset_name, load_dataset
from ._calibration import calibrate_classifier
from ._plan import ALLOWED_TIES, CALIBRATION_GRIDS, CLASSIFIERS, STUDY_TIES, TIE_AWARE, \
    display_name
from ._result import READABLE_FORMATS, RESULT_FORMAT, StudyResult
from ._run import run_study
from ._tasks import tie_statistics

__all__ = ["run_study", "StudyResult", "load_dataset", "dataset_name", "display_name",
           "tie_statistics", "calibrate_classifier"]
