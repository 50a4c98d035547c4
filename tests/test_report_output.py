"""A study's output set is all or nothing: ``replace_together``, ``write_study`` when a
write fails half-way (a folder or FIFO named like an output, a full disk, a file-size limit,
a failing rename), and ``check_output_dir`` before any computation."""
import errno
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fastrank._atomic as atomic
import fastrank.report as report
from fastrank.metrics import METRIC_KEYS
from fastrank.report import check_output_dir, write_study
from fastrank.study import STUDY_TIES, StudyResult
from fastrank._atomic import replace_together


def synthetic_result(seed=0, folds=5):
    """A small StudyResult with random values (no classifier is run)."""
    rng = np.random.default_rng(seed)
    classifiers = ("knn", "mlknn", "vgram")
    values = {c: rng.random((len(STUDY_TIES), len(METRIC_KEYS), folds)) for c in classifiers}
    tie_stats = {c: {"top": rng.random(folds).tolist(), "boundary": rng.random(folds).tolist(),
                     "group_size": (1 + rng.random(folds)).tolist()} for c in classifiers}
    return StudyResult(dataset={"name": "synthetic", "documents": 50}, classifiers=classifiers,
                       ties=STUDY_TIES, folds=folds, random_state=seed, cutoff="perfect",
                       params={c: {} for c in classifiers}, values=values,
                       tie_stats=tie_stats)


@pytest.fixture(scope="module")
def rendered():
    """The synthetic result and its figures, drawn once for the module."""
    result = synthetic_result()
    return result, report.render_figures(result)


@pytest.fixture
def old_run(rendered, tmp_path, monkeypatch):
    """An output folder holding a complete earlier run (seed 1), and ``render_figures``
    patched to return the module's figures (the figures are not under test here)."""
    result, figures = rendered
    monkeypatch.setattr(report._write, "render_figures", lambda r, alpha=0.05, **kw: figures)
    out = tmp_path / "out"
    write_study(synthetic_result(seed=1), out)
    return result, out, snapshot(out)


def snapshot(folder):
    """{relative path: bytes} of every file under ``folder``."""
    files = {}
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not stat.S_ISFIFO(os.lstat(path).st_mode):
                with open(path, "rb") as f:
                    files[os.path.relpath(path, folder)] = f.read()
    return files


def no_temporaries(folder):
    return not [n for _, _, names in os.walk(folder) for n in names
                if n.startswith(".fastrank-")]


# ---- replace_together ---------------------------------------------------------------------

def test_replace_together_writes_all_keeps_modes_and_follows_links(tmp_path):
    previous = os.umask(0o022)
    try:
        (tmp_path / "old.txt").write_bytes(b"old")
        os.chmod(tmp_path / "old.txt", 0o600)
        (tmp_path / "gone.svg").write_bytes(b"stale")
        (tmp_path / "real.txt").write_bytes(b"target")
        os.symlink(tmp_path / "real.txt", tmp_path / "link.txt")
        replace_together({tmp_path / "old.txt": b"new", tmp_path / "sub" / "deep" / "a": b"A",
                          tmp_path / "link.txt": b"through"},
                         remove=[tmp_path / "gone.svg", tmp_path / "never-existed"])
    finally:
        os.umask(previous)
    assert (tmp_path / "old.txt").read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(tmp_path / "old.txt").st_mode) == 0o600
    assert (tmp_path / "sub" / "deep" / "a").read_bytes() == b"A"
    assert stat.S_IMODE(os.stat(tmp_path / "sub" / "deep" / "a").st_mode) == 0o644
    assert os.path.islink(tmp_path / "link.txt")
    assert (tmp_path / "real.txt").read_bytes() == b"through"
    assert not (tmp_path / "gone.svg").exists()
    assert no_temporaries(tmp_path)


@pytest.mark.parametrize("failing_call", [1, 2, 3])
def test_replace_together_rolls_back_a_failing_rename(tmp_path, monkeypatch, failing_call):
    """The n-th rename fails: the files renamed before it get their old content back (or
    are removed when they are new), the removed file comes back, nothing is left over."""
    (tmp_path / "a").write_bytes(b"old a")
    (tmp_path / "b").write_bytes(b"old b")
    (tmp_path / "stale").write_bytes(b"old stale")
    before = snapshot(tmp_path)
    real_replace, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == failing_call:
            raise OSError(errno.EIO, "simulated I/O error", dst)
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(OSError, match="simulated I/O error"):
        replace_together({tmp_path / "a": b"new a", tmp_path / "b": b"new b",
                          tmp_path / "new" / "c": b"new c"}, remove=[tmp_path / "stale"])
    monkeypatch.undo()
    assert snapshot(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "stale"]  # "new/" removed again


NAMES = ["a", "b", "c", "sub/d", "sub/e"]


@settings(max_examples=60, deadline=None)
@given(old=st.sets(st.sampled_from(NAMES)), new=st.sets(st.sampled_from(NAMES), min_size=1),
       remove=st.sets(st.sampled_from(NAMES)), fail_at=st.integers(0, 12))
def test_replace_together_is_all_or_nothing(old, new, remove, fail_at):
    """Any mix of existing, new and removed files, with the k-th rename or unlink failing
    (or none, when k is past the last): afterwards the folder is exactly as before, or
    exactly the old files updated by the new contents less the removed ones (plus at most
    the one backup or journal whose deletion was made to fail, which the next tidy removes
    without changing the set)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in old:
            os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(f"old {name}".encode())
        before = snapshot(tmp)
        calls = [0]

        def failing(real):
            def call(*args):
                calls[0] += 1
                if calls[0] == fail_at:
                    raise OSError(errno.EIO, "simulated I/O error")
                return real(*args)
            return call

        contents = {os.path.join(tmp, n): f"new {n}".encode() for n in new}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(atomic.os, "replace", failing(os.replace))
            mp.setattr(atomic.os, "unlink", failing(os.unlink))
            try:
                replace_together(contents, remove=[os.path.join(tmp, n) for n in remove])
                failed = False
            except OSError:
                failed = True
        after = snapshot(tmp)
        if failed:
            assert after == before and no_temporaries(tmp)
        else:
            expected = {k: v for k, v in before.items() if k not in remove or k in new}
            expected.update({n: f"new {n}".encode() for n in new})
            # a backup or journal whose deletion failed after the set was replaced may stay
            strays = [k for k in after if os.path.basename(k).startswith(".fastrank-")]
            assert all(k.endswith((".bak", ".journal")) for k in strays) and len(strays) <= 1
            assert {k: v for k, v in after.items() if k not in strays} == expected
            atomic.tidy([tmp, os.path.join(tmp, "sub")])
            assert snapshot(tmp) == expected


def test_replace_together_without_hard_links_keeps_copies(tmp_path, monkeypatch):
    """On a file system without hard links the backups are copies; rollback still works."""
    (tmp_path / "a").write_bytes(b"old a")
    monkeypatch.setattr(atomic.os, "link", lambda *a: (_ for _ in ()).throw(
        OSError(errno.EPERM, "no links here")))
    real_replace = os.replace
    monkeypatch.setattr(atomic.os, "replace", lambda s, d: real_replace(s, d)
                        if d.endswith("/a") else (_ for _ in ()).throw(OSError("boom")))
    with pytest.raises(OSError, match="boom"):
        replace_together({tmp_path / "a": b"new a", tmp_path / "b": b"new b"})
    assert snapshot(tmp_path) == {"a": b"old a"}


@pytest.mark.parametrize("make, kind", [(os.mkdir, "a folder"), (os.mkfifo, "a FIFO")])
def test_replace_together_refuses_non_regular_files(tmp_path, make, kind):
    (tmp_path / "a").write_bytes(b"old")
    make(tmp_path / "b")
    with pytest.raises(ValueError, match=f"b is {kind}, not a regular file"):
        replace_together({tmp_path / "a": b"new", tmp_path / "b": b"new"})
    assert (tmp_path / "a").read_bytes() == b"old" and no_temporaries(tmp_path)


# ---- write_study --------------------------------------------------------------------------

def test_write_study_replaces_the_whole_set(old_run):
    result, out, before = old_run
    names = {spec.name for spec, _, _ in report.render_figures(result)}
    assert len(names) == 1 + len(METRIC_KEYS) + 2
    (out / "figures" / "metric-retired_metric.svg").write_text("<svg/>")  # an older run's
    (out / "figures" / "notes.txt").write_text("mine")  # not named like an output
    paths = write_study(result, out)
    outputs = ("results.json", "tables.md", "tables.tex", "report.html")
    assert paths == [str(out / f) for f in outputs] + [str(out / "figures")]
    after = snapshot(out)
    assert sorted(after) == sorted([*outputs, "figures/notes.txt"]
                                   + [f"figures/{n}.{e}" for n in names for e in ("svg", "pdf")])
    assert StudyResult.from_json(after["results.json"].decode()).random_state == 0
    assert all(after[k] != before[k] for k in ("results.json", "tables.md", "report.html"))
    assert no_temporaries(out)


def test_write_study_refuses_a_folder_named_like_an_output(old_run):
    result, out, before = old_run
    os.remove(out / "tables.md")
    os.mkdir(out / "tables.md")
    with pytest.raises(ValueError, match="tables.md is a folder, not a regular file"):
        write_study(result, out)
    del before["tables.md"]
    assert snapshot(out) == before and no_temporaries(out)


@pytest.mark.parametrize("name", ["report.html", "figures/metric-coverage.pdf"])
def test_write_study_refuses_a_fifo_without_hanging(old_run, name):
    result, out, before = old_run
    os.remove(out / name)
    os.mkfifo(out / name)
    outcome = []

    def target():
        try:
            write_study(result, out)
        except ValueError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "write_study blocked on the FIFO"
    assert outcome and f"{name.split('/')[-1]} is a FIFO, not a regular file" in outcome[0]
    del before[name]
    assert snapshot(out) == before and no_temporaries(out)
    assert stat.S_ISFIFO(os.lstat(out / name).st_mode)


def test_write_study_on_a_full_disk_replaces_nothing(old_run, monkeypatch):
    """ENOSPC after a few hundred kilobytes, in the middle of the set."""
    result, out, before = old_run
    real_write, written = os.write, [0]

    def write(fd, data):
        if written[0] > 300_000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written[0] += len(data)
        return real_write(fd, data)

    monkeypatch.setattr(atomic.os, "write", write)
    with pytest.raises(OSError) as info:
        write_study(result, out)
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC and written[0] > 0
    assert snapshot(out) == before and no_temporaries(out)


def test_write_study_in_a_new_folder_leaves_no_folder_on_failure(rendered, tmp_path,
                                                               monkeypatch):
    result, figures = rendered
    monkeypatch.setattr(report._write, "render_figures", lambda r, alpha=0.05, **kw: figures)
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (_ for _ in ()).throw(
        OSError(errno.EIO, "simulated I/O error")))
    with pytest.raises(OSError, match="simulated"):
        write_study(result, tmp_path / "new" / "out")
    assert os.listdir(tmp_path) == []


def test_write_study_under_a_file_size_limit_replaces_nothing(tmp_path):
    """A real write failure from the kernel (EFBIG under RLIMIT_FSIZE), in a subprocess
    without matplotlib (no figures, to stay quick): the old run stays whole."""
    out = tmp_path / "out"
    old = synthetic_result(seed=1)
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.modules["matplotlib"] = None  # no figures
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_report_output import synthetic_result
        from fastrank.report import write_study
        write_study(synthetic_result(seed=1), {str(out)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
        try:
            write_study(synthetic_result(seed=0), {str(out)!r})
        except OSError as exc:
            print("errno", exc.errno)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"errno {errno.EFBIG}"
    assert StudyResult.from_json((out / "results.json").read_text()).random_state == 1
    sizes = {f: (out / f).stat().st_size for f in ("results.json", "tables.md",
                                                    "report.html")}
    assert max(sizes.values()) > 20_000  # the limit did bite on a file of the set
    assert report.render_markdown(old).encode() == (out / "tables.md").read_bytes()
    assert no_temporaries(out)


# ---- check_output_dir ---------------------------------------------------------------------

def test_check_output_dir_accepts_new_and_existing_folders(tmp_path):
    check_output_dir(tmp_path)
    check_output_dir(tmp_path / "a" / "b")
    assert os.listdir(tmp_path) == []  # nothing created by the check
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "notes").mkdir()  # not named like an output
    (tmp_path / "results.json").write_text("{}")
    check_output_dir(os.fsencode(tmp_path))


@pytest.mark.parametrize("setup, target, message", [
    (lambda p: (p / "f").write_text("x"), "f", "exists and is not a folder"),
    (lambda p: (p / "f").write_text("x"), "f/sub", "exists and is not a folder"),
    (lambda p: os.mkfifo(p / "tables.md"), ".", "tables.md is a FIFO"),
    (lambda p: os.mkdir(p / "report.html"), ".", "report.html is a folder"),
    (lambda p: (p / "figures").write_text("x"), ".", "figures exists and is not a folder"),
    (lambda p: (os.mkdir(p / "figures"), os.mkfifo(p / "figures" / "ties.svg")), ".",
     "ties.svg is a FIFO"),
    (lambda p: os.symlink("/dev/null", p / "results.json"), ".",
     "results.json is a character device"),
])
def test_check_output_dir_refuses(tmp_path, setup, target, message):
    setup(tmp_path)
    with pytest.raises(ValueError, match=message):
        check_output_dir(tmp_path / target)


@pytest.mark.parametrize("path", ["/proc", "/proc/self", "/sys/kernel/new-study"])
def test_check_output_dir_refuses_virtual_file_systems(path):
    with pytest.raises(ValueError, match=r"is under /(proc|sys) \(a virtual file system\)"):
        check_output_dir(path)


def test_check_output_dir_refuses_an_unwritable_folder():
    """A read-only folder, and a new folder inside it, checked by a process that the folder's
    mode binds."""
    folder = tempfile.mkdtemp(prefix="fastrank-ro-")
    try:
        os.chmod(folder, 0o555)
        script = textwrap.dedent(f"""
            from fastrank.report import check_output_dir
            for path in ({folder!r}, {folder + "/new"!r}):
                try:
                    check_output_dir(path)
                except PermissionError as exc:
                    print(exc)
        """)
        # root writes anywhere: drop the capabilities that let it (util-linux's setpriv)
        unprivileged = (["setpriv", "--inh-caps=-dac_override,-dac_read_search",
                         "--bounding-set=-dac_override,-dac_read_search", "--"]
                        if os.geteuid() == 0 else [])
        proc = subprocess.run([*unprivileged, sys.executable, "-c", script],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines() == [
            f"output folder {folder} is not writable",
            f"output folder {folder}/new is not writable (its parent {folder} is not)"]
    finally:
        os.chmod(folder, 0o755)
        os.rmdir(folder)


# ---- atomic_file: one file ----------------------------------------------------------------

def write_text(path, text):
    with atomic.atomic_file(path) as f:
        f.write(text.encode("utf-8"))


def test_atomic_file_behaves_like_open_for_permissions_and_links(tmp_path):
    """New files: 0666 less the umask (not a temporary file's 0600); existing files keep
    their mode; a symbolic link is written through; a non-regular file (here /dev/null) is
    written directly; bytes paths work. The umask is never changed on the way."""
    previous = os.umask(0o022)
    try:
        write_text(tmp_path / "a.md", "x")
        os.umask(0o077)
        write_text(tmp_path / "b.md", "x")
        assert os.umask(0o077) == 0o077
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "a.md").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "b.md").st_mode) == 0o600
    os.chmod(tmp_path / "a.md", 0o640)
    write_text(tmp_path / "a.md", "y")
    assert stat.S_IMODE(os.stat(tmp_path / "a.md").st_mode) == 0o640
    os.symlink(tmp_path / "a.md", tmp_path / "link.md")
    write_text(tmp_path / "link.md", "through the link")
    assert os.path.islink(tmp_path / "link.md")
    assert (tmp_path / "a.md").read_text() == "through the link"
    write_text("/dev/null", "discarded")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    write_text(os.fsencode(tmp_path / "c.md"), "bytes path")
    assert (tmp_path / "c.md").read_text() == "bytes path"
    assert sorted(os.listdir(tmp_path)) == ["a.md", "b.md", "c.md", "link.md"]


def test_atomic_file_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "x.txt"
    with pytest.raises(TypeError):
        with atomic.atomic_file(target) as f:
            f.write(12345)  # not bytes: fails while writing the temporary file
    assert os.listdir(tmp_path) == []
    write_text(target, "done")
    assert target.read_text() == "done"


def test_atomic_file_names_the_target_when_its_folder_is_missing(tmp_path):
    target = tmp_path / "missing" / "out.csv"
    with pytest.raises(FileNotFoundError) as info:
        write_text(target, "x")
    assert info.value.filename == str(target)
    assert str(info.value) == f"[Errno 2] No such file or directory: '{target}'"
    assert ".fastrank-" not in str(info.value)
    assert os.listdir(tmp_path) == []


# ---- WriteGuard: the writes of an abandoned computation --------------------------------------

def _in_thread(target):
    """Run ``target`` in a thread; its outcome ("ok" or the exception) lands in the list."""
    outcome = []

    def run():
        try:
            target()
            outcome.append("ok")
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_abandoned_writes_leave_no_temporary_file_and_change_nothing(tmp_path, monkeypatch):
    """Abandoned while it writes its temporary files (in a folder it made, and in one that
    holds an old file), a set's writer removes neither old file, keeps no temporary file
    or made folder, and its commit is refused."""
    (tmp_path / "old.txt").write_text("old")
    guard = atomic.WriteGuard()
    staged, resume = threading.Event(), threading.Event()
    real = atomic._write_new

    def write_then_wait(path, data):
        real(path, data)
        if path.startswith(str(tmp_path / "new")):  # the second file of the set
            staged.set()
            resume.wait(10)

    monkeypatch.setattr(atomic, "_write_new", write_then_wait)

    def write():
        with guard.active():
            replace_together({tmp_path / "old.txt": b"new", tmp_path / "new" / "a": b"a"})

    thread, outcome = _in_thread(write)
    assert staged.wait(10)
    assert len([n for n in os.listdir(tmp_path) if n.startswith(".fastrank-")]) == 1
    guard.abandon()
    assert sorted(os.listdir(tmp_path)) == ["old.txt"]  # no temporary, no made folder
    resume.set()
    thread.join(10)
    assert isinstance(outcome[0], atomic.WritingStopped)
    assert sorted(os.listdir(tmp_path)) == ["old.txt"]
    assert (tmp_path / "old.txt").read_text() == "old"
    with pytest.raises(atomic.WritingStopped), guard.active(), \
            atomic.atomic_file(tmp_path / "later.txt") as f:
        f.write(b"refused")
    assert sorted(os.listdir(tmp_path)) == ["old.txt"]
    write_text(tmp_path / "later.txt", "another thread's writes go on")  # not this guard's
    assert (tmp_path / "later.txt").read_text() == "another thread's writes go on"


def test_abandon_waits_for_a_commit_under_way(tmp_path, monkeypatch):
    """A set being renamed into place when the computation is abandoned is finished first:
    complete, with no temporary or backup file."""
    (tmp_path / "a").write_text("old a")
    guard = atomic.WriteGuard()
    swapping, resume = threading.Event(), threading.Event()
    real = atomic._swap

    def wait_then_swap(*args):
        swapping.set()
        resume.wait(10)
        real(*args)

    monkeypatch.setattr(atomic, "_swap", wait_then_swap)

    def write():
        with guard.active():
            replace_together({tmp_path / "a": b"new a", tmp_path / "b": b"new b"})

    thread, outcome = _in_thread(write)
    assert swapping.wait(10)
    abandoner, abandoned = _in_thread(guard.abandon)
    abandoner.join(0.5)
    assert abandoner.is_alive() and not abandoned  # waits for the commit
    resume.set()
    abandoner.join(10)
    thread.join(10)
    assert outcome == ["ok"] and abandoned == ["ok"]
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_text() == "new b"


# ---- a process killed while it writes: the next writer finishes or cleans up --------------

_KILLED_WRITE = """
import os, pickle, signal, sys
sys.path.insert(0, {tests!r})
from test_report_output import synthetic_result
from fastrank import report
from fastrank.report import _write
with open({figures!r}, "rb") as f:
    figures = pickle.load(f)
_write.render_figures = lambda result, alpha=0.05, **kw: figures[result.random_state]
real, calls = getattr(os, {name!r}), [0]

def killed(*args):
    calls[0] += 1
    if calls[0] == {when}:
        os.kill(os.getpid(), signal.SIGKILL)
    result = real(*args)
    if calls[0] == {after}:
        os.kill(os.getpid(), signal.SIGKILL)
    return result

setattr(os, {name!r}, killed)
report.write_study(synthetic_result(seed=0), {out!r})
"""


@pytest.fixture(scope="module")
def two_runs(rendered, tmp_path_factory):
    """The complete output sets of the seed-1 ("old") and seed-0 ("new") results, with
    their figures, and a pickle of the figures of both (drawn once: the writing is under
    test, not the drawing)."""
    import dataclasses
    import pickle
    root = tmp_path_factory.mktemp("runs")
    figures = {0: rendered[1], 1: report.render_figures(synthetic_result(seed=1))}
    figures = {seed: [(dataclasses.replace(spec, draw=None), svg, pdf)
                      for spec, svg, pdf in drawn] for seed, drawn in figures.items()}
    with open(root / "figures.pickle", "wb") as f:
        pickle.dump(figures, f)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report._write, "render_figures",
                   lambda r, alpha=0.05, **kw: figures[r.random_state])
        for seed, name in ((1, "old"), (0, "new")):
            write_study(synthetic_result(seed=seed), root / name)
    old, new = snapshot(root / "old"), snapshot(root / "new")
    assert len(new) > 40 and all(old[k] != new[k] for k in ("results.json", "figures/ties.svg"))
    return old, new, figures, root / "figures.pickle"


@pytest.fixture
def drawn(two_runs, monkeypatch):
    """write_study with the figures of ``two_runs``; (old set, new set, pickle path)."""
    old, new, figures, pickled = two_runs
    monkeypatch.setattr(report._write, "render_figures",
                        lambda r, alpha=0.05, **kw: figures[r.random_state])
    return old, new, pickled


def _killed_write(out, pickled, name, when=None, after=None):
    """write_study of the seed-0 result into ``out`` in a child process that SIGKILLs
    itself when it calls ``os.<name>`` the ``when``-th time, or just after the
    ``after``-th call returned."""
    code = _KILLED_WRITE.format(tests=os.path.dirname(__file__), figures=str(pickled),
                                name=name, when=when, after=after, out=str(out))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == -9, proc.stderr


def _outputs(files):
    return {k: v for k, v in files.items() if not os.path.basename(k).startswith(".fastrank-")}


def test_a_set_killed_half_renamed_is_finished_by_the_next_run(drawn, tmp_path):
    """SIGKILL just after the 10th rename of the commit: the folder holds the journal, so
    the next run's first step (check_output_dir) makes the new set whole; the next run
    itself then replaces it whole, leaving no .fastrank-* file."""
    old, new, pickled = drawn
    out = tmp_path / "out"
    write_study(synthetic_result(seed=1), out)
    _killed_write(out, pickled, "replace", after=10)
    files = snapshot(out)
    assert [k for k in files if k.endswith(".journal")] != []
    mixed = _outputs(files)
    assert 0 < sum(mixed[k] == new[k] for k in new) < len(new)  # the kill came half-way
    check_output_dir(out)
    assert snapshot(out) == new
    write_study(synthetic_result(seed=1), out)
    assert snapshot(out) == old and no_temporaries(out)


@pytest.mark.parametrize("name, when", [("write", 40), ("replace", 1)])
def test_a_set_killed_before_its_commit_leaves_the_old_set(drawn, tmp_path, name, when):
    """SIGKILL while the temporary files are written (the 40th write), or at the journal's
    rename: the old set is whole, and the next run removes the temporary files."""
    old, new, pickled = drawn
    out = tmp_path / "out"
    write_study(synthetic_result(seed=1), out)
    _killed_write(out, pickled, name, when=when)
    files = snapshot(out)
    assert _outputs(files) == old and not no_temporaries(out)
    assert not [k for k in files if k.endswith(".journal")]
    write_study(synthetic_result(seed=0), out)
    assert snapshot(out) == new and no_temporaries(out)
def test_tidy_leaves_a_live_writer_s_files_alone(tmp_path, monkeypatch):
    """Another writer in the folder (here a thread, paused after writing its temporary
    files) holds it: tidy removes nothing of it, and that writer then completes."""
    (tmp_path / "a").write_text("old a")
    (tmp_path / ".fastrank-0123456789abcdef.tmp").write_text("a killed writer's")
    staged, resume = threading.Event(), threading.Event()
    real = atomic._write_journal

    def wait_then_journal(*args):
        staged.set()
        resume.wait(10)
        return real(*args)

    monkeypatch.setattr(atomic, "_write_journal", wait_then_journal)
    thread, outcome = _in_thread(lambda: replace_together({tmp_path / "a": b"new a",
                                                           tmp_path / "b": b"new b"}))
    assert staged.wait(10)
    ours = sorted(n for n in os.listdir(tmp_path) if n.startswith(".fastrank-"))
    assert len(ours) == 2  # its two temporary files (the killed writer's is gone)
    atomic.tidy([tmp_path])
    check_output_dir(tmp_path)
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith(".fastrank-")) == ours
    resume.set()
    thread.join(10)
    assert outcome == ["ok"] and sorted(os.listdir(tmp_path)) == ["a", "b"]
    assert (tmp_path / "a").read_text() == "new a"


def test_a_journal_cannot_reach_outside_its_folder(tmp_path):
    """A journal naming a path outside its folder is not followed: it is removed as a
    leftover and nothing else changes."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "victim").write_text("keep")
    (tmp_path / "sub" / ".fastrank-0123456789abcdef.journal").write_text(
        '{"rename": [], "remove": ["../victim"]}')
    atomic.tidy([tmp_path / "sub"])
    assert os.listdir(tmp_path / "sub") == [] and (tmp_path / "victim").read_text() == "keep"
