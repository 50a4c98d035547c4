"""Interruptible commands: the computation in a worker thread, Ctrl-C, SIGTERM and a closed
pipe ending the program at once with one line."""
import os
import sys
import threading

# the "finished" flags of computations interrupted in _interruptible
_ABANDONED: list[threading.Event] = []
# stderr is written by the computing thread (progress) and the main thread (the stop line):
# each line is written whole under this lock, and an abandoned computing thread (in
# _SILENCED) writes no more lines
_STDERR_LOCK = threading.Lock()
_SILENCED: set[threading.Thread] = set()


def _interruptible(compute):
    """``compute()`` run in a worker thread while the main thread waits for it.

    Python runs signal handlers only in the main thread, between bytecodes: a compiled
    kernel called from the main thread would hold off Ctrl-C and SIGTERM until it returns
    (a minute for a large VG-RAM prediction). Waiting on a thread is interruptible, so the
    command ends at once. The abandoned worker (a daemon thread) ends with the process (see
    :func:`_stop`) and writes nothing more: no progress line (:class:`_Progress`), and its
    file writes (a multi-data-set run writes each data set's output set as it finishes)
    are abandoned first -- a set being renamed into place is finished, every other
    temporary file removed (:class:`fastrank._atomic.WriteGuard`)."""
    from .._atomic import WriteGuard
    outcome, finished, writes = {}, threading.Event(), WriteGuard()

    def work():
        try:
            with writes.active():
                outcome["value"] = compute()
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="fastrank-compute", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:  # Ctrl-C, SIGTERM (an interrupted join marks the thread stopped:
        with _STDERR_LOCK:
            _SILENCED.add(worker)
        writes.abandon()
        _ABANDONED.append(finished)  # whether it still runs is told by its own flag)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that open output files are cleaned up."""


def _terminate(signum, frame):
    raise _Terminated()


def _stop(command, what, code, own_process):
    """One line on stderr, then the exit code. When ``main`` runs as the program (no
    ``argv``) and an interrupted computation still runs in its abandoned thread, the process
    ends at once (``os._exit`` after flushing the standard streams): the interpreter's
    normal shutdown beside a kernel that keeps every core busy takes about a second. The
    abandoned computation's writes were stopped and their temporary files removed
    (:func:`_interruptible`); the main thread writes its outputs only after the
    computation: none is open."""
    with _STDERR_LOCK:
        sys.stderr.write(f"fastrank {command}: {what}\n")
    if own_process and not all(finished.is_set() for finished in _ABANDONED):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _closed_pipe():
    """The reader of standard output went away (``| head``): stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # so that the interpreter's final flush is silent
    return 141
