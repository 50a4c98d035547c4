"""The study's tasks -- one fold's features, one classifier on one fold -- and their
executors: serially, on threads, or on a Dask cluster; one code path for all three.
"""
import collections
import concurrent.futures
import operator
import time
import warnings
from dataclasses import dataclass

import numpy as np

from .._parallel import effective_n_jobs, num_threads
from .._typing import LabelsLike, MatrixLike
from ..metrics import evaluate
from ..metrics._common import check_inputs
from ..ranking import tie_groups
from ._calibration import _features, calibrate_classifier
from ._plan import CLASSIFIERS, _beliefs, _make_classifier, _Shipped, _Unusable


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


#: Training documents of the trial fit of a user's estimator (:func:`_trial_fit`), besides
#: one with and one without each label
TRIAL_DOCUMENTS = 30


def _trial_fit(dataset, train, test, classifiers, config):
    """Fit each user's estimator on a slice of the training documents ``train`` and take its
    beliefs (:func:`_beliefs`) on a few of the test documents ``test``, so that an estimator
    that fails, or gives no usable beliefs, is refused before any fold runs. The slice holds
    the first :data:`TRIAL_DOCUMENTS` and, per label, the first document with it and the
    first without it. Raises ValueError naming the estimator; its warnings on the small
    slice are not shown."""
    own = [c for c in classifiers if c not in CLASSIFIERS]
    if not own:
        return
    Y = dataset.Y[train]
    rows = np.unique(np.concatenate([np.arange(min(len(train), TRIAL_DOCUMENTS)),
                                     Y.argmax(axis=0), (Y == 0).argmax(axis=0)]))
    fold = _fold_task(dataset, train[rows], test[:10], 1)
    for c in own:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = _make_classifier(c, config[c], 0)
                model.fit(fold.X_train, fold.Y_train)
                _beliefs(model, fold.X_test, fold.Y_test.shape[1], c)
        except _Unusable:
            raise
        except Exception as exc:
            message = " ".join(str(exc).split())
            raise ValueError(f"classifier {c!r} failed its trial fit on {len(rows)} training "
                             f"documents, before the study: {type(exc).__name__}: "
                             f"{message}") from exc


def _run_in_process(dataset, splits, classifiers, config, calibrate, random_state, ties, cutoff,
                    n_jobs, record):
    """Every task in this process; returns the calibrated parameters and the calibration
    scores.

    With more than one thread (``n_jobs``), the tasks run side by side on a pool of Python
    threads, one per thread or, from 4 * :data:`TASK_THREADS` threads on, one per
    :data:`TASK_THREADS` threads, each task's kernels on the threads it is given (the
    kernels release the GIL, so the Python between them overlaps with another task's
    kernels): the independent calibrations
    first, then the folds in blocks of as many as the window of pending outcomes holds, each
    block's features first and then its classifiers' tasks, longest first
    (:func:`_start_order`). Outcomes are recorded on the calling thread in the order of the
    folds and classifiers, whatever the order in which they complete, so the results and
    the progress messages are the same on any number of threads."""
    n_threads = effective_n_jobs(n_jobs)
    per_task = TASK_THREADS if n_threads >= 4 * TASK_THREADS else 1
    n_workers = max(1, min(n_threads // per_task, len(splits) * len(classifiers)))
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
            # tasks are queued in order and a worker takes the oldest: a block's features
            # are taken before its classifiers, which wait for them on another worker
            pending = collections.deque()
            window = 4 * n_threads  # outcomes awaiting their turn: bounds the folds in memory
            block = max(1, window // (len(classifiers) + 1))
            for first in range(0, len(splits), block):
                folds = range(first, min(first + block, len(splits)))
                features = {f: pool.submit(_fold_task, dataset, *splits[f], task_jobs)
                            for f in folds}
                started = {(f, c): pool.submit(_classifier_task_of, features[f], c, config[c],
                                               random_state + f, ties, cutoff, task_jobs)
                           for c in _start_order(classifiers) for f in folds}
                pending.extend((f, c, started[f, c]) for f in folds for c in classifiers)
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


#: Threads of each task's kernels on a pool of 4 * TASK_THREADS threads or more (fewer:
#: one each). With one thread a task, the longest tasks (VG-RAM's, each over a sixteenth
#: of the default study's time) ended a study on 16 threads alone; half as many tasks at
#: a time, each on two threads, share the threads out more evenly.
TASK_THREADS = 2

#: the built-in classifiers by the time their tasks usually take, longest first
_USUAL_COST = ("vgram", "vgramcor", "mlknn", "knn")


def _start_order(classifiers):
    """``classifiers`` in the order their tasks start: a user's estimators (of unknown cost)
    first, then the built-in ones longest first (:data:`_USUAL_COST`), so that the tasks
    that end a study are short ones. Started fold by fold, the longest tasks of the last
    folds ran on alone while the other threads had nothing left to do."""
    cost = {c: i for i, c in enumerate(_USUAL_COST)}
    return sorted(classifiers, key=lambda c: cost.get(c, -1))


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


def _run_on_cluster(client, dataset, splits, classifiers, config, calibrate, random_state, ties,
                    cutoff, n_jobs, record):
    """Every task on the cluster of ``client``, recorded as it completes; returns the
    calibrated parameters and the calibration scores."""
    from toolz import identity  # a dependency of Dask's

    from ..dask._client import as_completed, gather

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
    # no reference kept to a fold's future once its classifiers are submitted: its features
    # are released once they are done (and recomputed by Dask if a worker holding them dies)
    folds = [client.submit(_fold_task, data, train, test, n_jobs, pure=False)
             for train, test in splits]
    tasks = {}
    for c in _start_order(classifiers):  # Dask starts the tasks submitted first first
        for f, fold in enumerate(folds):
            tasks[client.submit(_classifier_task, fold, c, params[c], random_state + f, ties,
                                cutoff, n_jobs, pure=False)] = (f, c)
    del folds
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
