"""Running a study: :func:`run_study`.
"""
import inspect
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._parallel import effective_n_jobs
from .._validation import check_option
from ..datasets import Dataset
from ..datasets._load import load_dataset
from ..metrics import METRIC_KEYS
from ..model_selection import KFold
from ._plan import ALLOWED_TIES, CLASSIFIERS, STUDY_TIES, _dataset_record, _parameter_record, \
    _recorded_params, check_classifiers, check_cutoff, display_name
from ._result import TIE_STAT_KEYS, StudyResult
from ._tasks import _run_in_process, _run_on_cluster, _trial_fit


def _planned_record(classifiers, options):
    """The parameter record (:func:`_parameter_record`) of ``run_study(dataset,
    classifiers, **options)`` before it runs: :func:`run_study`'s own defaults fill the
    options not given; with ``calibrate``, the calibrated parameters are left out (they
    are chosen by the run)."""
    args = inspect.signature(run_study).bind(None, classifiers, **options)
    args.apply_defaults()
    a = args.arguments
    keys, config = check_classifiers(classifiers, a["params"])
    return _parameter_record(keys, _recorded_params(keys, config), a["ties"], a["folds"],
                             a["random_state"], a["cutoff"],
                             calibrated=keys if a["calibrate"] else ())


def run_study(dataset: Any = "yeast", classifiers: Sequence[Any] = tuple(CLASSIFIERS),
              folds: int = 10, ties: Sequence[str] = STUDY_TIES, cutoff: str | int = "perfect",
              calibrate: bool = False, random_state: int = 0, n_jobs: int | None = None,
              params: Mapping[str, Mapping[str, Any]] | None = None,
              progress: Callable[[str], Any] | None = None,
              scheduler: Any = None) -> StudyResult:
    """Run the tie study of Melotti (2009) on one data set.

    Folds, features, classifiers, metrics under each ranking type, and the statistics of
    ordinal against the others, as described in :mod:`fastrank.study`.

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
        Pipeline, or scikit-learn's multi-output list of one (n_documents, n_classes)
        ``predict_proba`` array per label (``RandomForestClassifier``,
        ``KNeighborsClassifier``, ``MultiOutputClassifier(...)``), of which each label's
        class-1 column is its belief (zeros where the training fold lacks the label; with
        one label, the single (n_documents, n_classes) array they give is read so). It
        is cloned (:func:`sklearn.base.clone`) and fitted on each training fold as given
        (its own ``random_state`` is kept); its parameters are recorded as its one-line
        repr. Before any fold, a trial fit on a slice of the first training fold checks
        that it runs and gives such beliefs. Outputs show the display names.
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
        Seeds the folds, the ordinal rankings and the classifiers (:mod:`fastrank.study`).
    n_jobs : None, -1 or int
        Threads; results do not depend on it. In process: that many tasks side by side, each
        on one kernel thread, or from 8 threads on half as many, each on two (None: the
        OpenMP default). On a Dask cluster: the kernel threads of each task (None: one).
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
        process (:mod:`fastrank.study`).

    Returns
    -------
    StudyResult

    Raises
    ------
    ValueError, TypeError
        For an invalid argument, before anything is computed: among them a classifier
        named twice, an unknown name, an estimator without ``decision_function`` or
        ``predict_proba``, ``params`` for an own estimator. ValueError also, before any
        fold, when an own estimator fails its trial fit or its beliefs do not have the
        shape (test documents, labels).
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
    'O ≻ D|S; O ≺ M; O ≡ E'
    """
    if not isinstance(dataset, (str, os.PathLike, Dataset)):
        raise TypeError(f"dataset must be a fastrank.datasets.Dataset or a name/path, got "
                        f"{type(dataset).__name__}")
    dataset = load_dataset(dataset)
    if not isinstance(calibrate, bool) or not (progress is None or callable(progress)):
        raise TypeError("calibrate must be True or False, progress a callable or None")
    classifiers, config = check_classifiers(classifiers, params)
    if not isinstance(random_state, numbers.Integral) or isinstance(random_state, bool):
        raise TypeError(f"random_state must be an int (fold f uses random_state + f), "
                        f"got {random_state!r}")
    check_cutoff(cutoff)  # before any fold is fitted
    # NumPy integers as the Python ints results.json records
    random_state = int(random_state)
    cutoff = cutoff if isinstance(cutoff, str) else int(cutoff)
    ties = (ties,) if isinstance(ties, str) else tuple(ties)
    for t in ties:
        check_option("ranking type", t, ALLOWED_TIES)
    if isinstance(folds, bool) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise ValueError(f"folds must be an int >= 2, got {folds!r}")
    folds = int(folds)
    if folds > dataset.n_documents:
        raise ValueError(f"folds={folds} exceeds the {dataset.n_documents} documents")
    effective_n_jobs(n_jobs)
    splits = list(KFold(n_splits=folds, shuffle=True, random_state=random_state)
                  .split(np.arange(dataset.n_documents)))
    _trial_fit(dataset, *splits[0], classifiers, config)  # a user's estimator, before any fold
    values = {c: np.empty((len(ties), len(METRIC_KEYS), folds)) for c in classifiers}
    stderr = {c: np.empty((len(ties), len(METRIC_KEYS), folds)) for c in classifiers}
    tie_stats = {c: {k: [None] * folds for k in TIE_STAT_KEYS} for c in classifiers}
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
        from ..dask import connect  # Dask is optional
        with connect(scheduler) as client:
            config, calibration = _run_on_cluster(client, *run)
    return StudyResult(
        dataset=_dataset_record(dataset),
        classifiers=classifiers, ties=ties, folds=folds, random_state=random_state,
        cutoff=cutoff, values=values, params=_recorded_params(classifiers, config),
        tie_stats=tie_stats,
        calibration={c: tried for c, tried in calibration.items() if tried}, stderr=stderr,
        timings=timings)
