"""The study in process on several threads: its tasks run side by side, each on one kernel
thread (two from eight threads on), and the results, the calibration and the progress
messages are those of one thread."""
import concurrent.futures
import threading

import pytest

from fastrank import study
from fastrank.study import _tasks
from fastrank.study import run_study

SMALL = {"vgram": {"n_neurons": 16, "n_synapses": 64},
         "vgramcor": {"n_neurons": 16, "n_synapses": 64}}


def _run(n_jobs, **kwargs):
    messages = []
    classifiers = kwargs.pop("classifiers", tuple(study.CLASSIFIERS))
    params = {c: p for c, p in SMALL.items() if c in classifiers}
    result = run_study("yeast", classifiers=classifiers, n_jobs=n_jobs, params=params,
                       random_state=5,
                       progress=messages.append, **{"folds": 4, **kwargs})
    # the seconds in a message are measurements: compare what each message is about
    return result, [m.split(" (")[0] for m in messages]


@pytest.mark.parametrize("n_jobs", [2, 3, 8])
def test_byte_identical_results_and_same_progress_order_on_any_number_of_threads(n_jobs):
    one, said_one = _run(1)
    many, said_many = _run(n_jobs)
    assert many.to_json() == one.to_json()
    assert said_many == said_one  # recorded in fold x classifier order, as on one thread
    assert said_one[:2] == ["kNN: fold 1/4", "ML-kNN: fold 1/4"]


def test_calibrated_study_is_byte_identical_on_two_threads():
    kwargs = dict(classifiers=("knn", "mlknn"), folds=3, calibrate=True)
    one, _ = _run(1, **kwargs)
    two, _ = _run(2, **kwargs)
    assert two.calibration == one.calibration and one.calibration["mlknn"]
    assert two.params == one.params
    assert two.to_json() == one.to_json()


def test_two_threads_run_two_tasks_at_once_each_on_one_kernel_thread(monkeypatch):
    """Every classifier task waits at a barrier for a second one: on one thread at a time
    the barrier would time out (BrokenBarrierError) instead of passing."""
    barrier = threading.Barrier(2, timeout=60)
    seen = []
    original = _tasks._classifier_task

    def paired(*args):
        seen.append((threading.get_ident(), args[-1]))  # the task's n_jobs
        barrier.wait()
        return original(*args)

    monkeypatch.setattr(_tasks, "_classifier_task", paired)
    run_study("yeast", classifiers=("knn", "mlknn"), folds=3, n_jobs=2)
    assert len(seen) == 6
    assert len({ident for ident, _ in seen}) == 2  # two pool threads
    assert {threads for _, threads in seen} == {1}  # each task's kernels on one thread
    assert threading.main_thread().ident not in {ident for ident, _ in seen}


def test_from_eight_threads_half_as_many_tasks_run_at_once_each_on_two(monkeypatch):
    seen = []
    original = _tasks._classifier_task

    def noted(*args):
        seen.append((threading.get_ident(), args[-1]))  # the task's n_jobs
        return original(*args)

    monkeypatch.setattr(_tasks, "_classifier_task", noted)
    run_study("yeast", classifiers=("knn", "mlknn"), folds=5, n_jobs=8)
    assert len(seen) == 10
    assert {threads for _, threads in seen} == {_tasks.TASK_THREADS} == {2}
    assert len({ident for ident, _ in seen}) <= 8 // _tasks.TASK_THREADS


def test_one_thread_runs_every_task_on_the_calling_thread(monkeypatch):
    idents = []
    original = _tasks._classifier_task

    def noted(*args):
        idents.append(threading.get_ident())
        return original(*args)

    monkeypatch.setattr(_tasks, "_classifier_task", noted)
    run_study("yeast", classifiers=("knn",), folds=3, n_jobs=1)
    assert idents == [threading.get_ident()] * 3


def test_a_failing_task_stops_the_study_with_its_error(monkeypatch):
    original = _tasks._classifier_task
    started = []

    def failing(fold, name, params, seed, *rest):
        started.append(seed)
        if seed == 2:  # the third fold (random_state 0 + fold index)
            raise RuntimeError("task failed")
        return original(fold, name, params, seed, *rest)

    monkeypatch.setattr(_tasks, "_classifier_task", failing)
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="task failed"):
        run_study("yeast", classifiers=("knn",), folds=10, random_state=0, n_jobs=2)
    assert threading.active_count() == before  # the pool's threads are gone
    assert len(started) < 10  # the tasks queued behind the failure were dropped


def test_tasks_start_by_blocks_of_folds_longest_first(monkeypatch):
    """Three threads hold 12 pending outcomes: blocks of 2 folds (of 4 classifiers and the
    features each). A block's features are queued first, then its classifiers' tasks,
    VG-RAM first and kNN last, so that short tasks end the study; a user's estimator (of
    unknown cost) before them all. Recorded in fold order all the same."""
    queued = []

    class Recording(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            if fn is _tasks._fold_task:
                queued.append("features")
            elif fn is _tasks._classifier_task_of:
                queued.append(f"{args[1]} {args[3] - 5}")  # the name and the fold
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(_tasks.concurrent.futures, "ThreadPoolExecutor", Recording)
    _, said = _run(3)
    block = ["features", "features"] + [f"{c} {f}" for c in ("vgram", "vgramcor", "mlknn",
                                                              "knn") for f in (0, 1)]
    assert queued == block + [b.replace(" 0", " 2").replace(" 1", " 3") for b in block]
    assert said[:4] == ["kNN: fold 1/4", "ML-kNN: fold 1/4", "VG-RAM WNN: fold 1/4",
                        "VG-RAM WNN-COR: fold 1/4"]
    assert _tasks._start_order(["knn", "mine", "vgram", "mlknn"]) == \
        ["mine", "vgram", "mlknn", "knn"]
