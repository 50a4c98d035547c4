"""Atomic file writing: a file is either absent/old or complete, never half-written
(:func:`atomic_file`), and a set of files is either all old or all new
(:func:`replace_together`); the writes of a computation that is abandoned stop and leave
no temporary file (:class:`WriteGuard`); what a killed process leaves behind -- temporary
files, or a set half renamed into place -- is cleaned up, or finished, by the next writer
in the same folders (:func:`tidy`)."""
import contextlib
import contextvars
import json
import os
import re
import secrets
import shutil
import stat
import threading

try:
    import fcntl
    _FLOCK = True
except ImportError:  # Windows: no advisory locks, so no leftover is ever removed there
    _FLOCK = False

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
#: the temporary, backup and journal files of :func:`atomic_file` and
#: :func:`replace_together`
_OURS = re.compile(r"\.fastrank-[0-9a-f]{16}\.(tmp|bak|journal)")


class WritingStopped(RuntimeError):
    """A write refused because its computation was abandoned (:meth:`WriteGuard.abandon`)."""


class WriteGuard:
    """The atomic writes of a computation that another thread may abandon.

    Inside :meth:`active`, :func:`atomic_file` and :func:`replace_together` register each
    temporary file and folder they create and mark their renames as a commit.
    :meth:`abandon` (from any thread) refuses every later write with
    :class:`WritingStopped`, waits for a commit under way to end (a set of renames: short,
    and its files are then complete), and removes the temporary files, and the folders
    made for them, of the writes not yet committed. A program that ends while
    a worker thread still computes calls it so that nothing half-written, nor any
    temporary file, stays behind.
    """

    def __init__(self):
        self._lock = threading.Condition()
        self._stopped = False
        self._temporaries = set()
        self._folders = []
        self._commits = 0

    @contextlib.contextmanager
    def active(self):
        """The atomic writes of the calling thread, within the block, are this guard's."""
        token = _GUARD.set(self)
        try:
            yield self
        finally:
            _GUARD.reset(token)

    def abandon(self):
        """Stop this guard's writes and remove their temporary files (class docstring)."""
        with self._lock:
            self._stopped = True
            while self._commits:
                self._lock.wait()
            for path in self._temporaries:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            for folder in reversed(self._folders):
                with contextlib.suppress(OSError):  # an emptied folder made for the writes
                    os.rmdir(folder)
            self._temporaries.clear()
            self._folders.clear()

    def _refuse_if_stopped(self):
        if self._stopped:
            raise WritingStopped("the computation was abandoned: nothing more is written")

    def create(self, path):
        """A new temporary file at ``path`` (0666 less the umask, never someone else's
        file: O_EXCL), registered; its descriptor."""
        with self._lock:
            self._refuse_if_stopped()
            fd = os.open(path, _NEW_FILE, 0o666)
            self._temporaries.add(path)
            return fd

    def make_folder(self, path):
        """Make the folder ``path`` for a write, registered."""
        with self._lock:
            self._refuse_if_stopped()
            os.mkdir(path)
            self._folders.append(path)

    def forget(self, *paths):
        """``paths`` are no temporary files or folders made for them any more (renamed or
        kept, or removed)."""
        with self._lock:
            self._temporaries.difference_update(paths)
            self._folders = [f for f in self._folders if f not in paths]

    @contextlib.contextmanager
    def commit(self):
        """The block renames temporary files into place: :meth:`abandon` waits for it."""
        with self._lock:
            self._refuse_if_stopped()
            self._commits += 1
        try:
            yield
        finally:
            with self._lock:
                self._commits -= 1
                self._lock.notify_all()


#: the guard of the writes in the current context: a computation's, else one never abandoned
_GUARD = contextvars.ContextVar("fastrank_write_guard", default=WriteGuard())


@contextlib.contextmanager
def atomic_file(path):
    """Yield a binary file that replaces ``path`` when the block ends without an exception.

    The data go to a temporary file in the same folder, flushed to disk and renamed over
    ``path`` at the end (atomic on POSIX file systems); on an exception the temporary file
    is removed and ``path`` is untouched. As with ``open(path, "wb")``: a new file gets 0666
    less the umask, an existing one keeps its permissions, a symbolic link is written
    through (its target is replaced), and an error creating the file (its folder missing
    or not writable) names ``path``. A ``path`` that exists but is not a regular file (a
    device, a FIFO) is written directly, without the temporary file. The block must leave
    the file open (a text wrapper around it is detached, not closed).
    """
    target = os.path.realpath(os.fsdecode(path))
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "wb") as f:
            yield f
        return
    tmp = _temporary(os.path.dirname(target), ".tmp")
    guard = _GUARD.get()
    with _writing_in([os.path.dirname(target)]):
        try:
            fd = guard.create(tmp)
        except OSError as exc:  # a missing or unwritable folder: name the file asked for
            raise type(exc)(exc.errno, exc.strerror, os.fsdecode(path)) from None
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            if os.path.exists(target):
                os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
            with guard.commit():
                os.replace(tmp, target)
                guard.forget(tmp)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):  # removed already if abandoned
                os.unlink(tmp)
            guard.forget(tmp)
            raise


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def check_regular(path):
    """Raise ValueError if ``path`` (symbolic links followed) exists but is not a regular
    file -- a folder, FIFO, socket or device, which a write must not open (a FIFO would
    block until someone reads it) nor rename over."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise ValueError(f"{os.fsdecode(path)} is {kind}, not a regular file; refusing to "
                         "replace it")


def _temporary(folder, suffix):
    return os.path.join(folder, f".fastrank-{secrets.token_hex(8)}{suffix}")


# ---- leftovers of killed writers ----------------------------------------------------------

@contextlib.contextmanager
def _writing_in(folders, tidy_first=False):
    """Hold a shared lock (``flock``) on each existing folder of ``folders`` while the block
    writes in them: every writer does, so a folder that no one holds has no live temporary
    file in it. With ``tidy_first``, when this process gets every folder to itself
    (exclusive locks, without waiting), :func:`_tidy` them first. Where locks are not
    available (Windows, some network file systems) nothing is locked and nothing tidied."""
    fds = {}
    try:
        if _FLOCK:
            for folder in sorted(set(folders)):
                with contextlib.suppress(OSError):  # missing, unreadable: nothing to lock
                    fds[folder] = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        if tidy_first and fds \
                and all(_try_lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) for fd in fds.values()):
            _tidy(list(fds))
        for fd in fds.values():  # waits only while another process tidies
            _try_lock(fd, fcntl.LOCK_SH)
        yield
    finally:
        for fd in fds.values():
            os.close(fd)  # releases its lock


def _try_lock(fd, operation):
    try:
        fcntl.flock(fd, operation)
        return True
    except OSError:  # held by another process, or not supported here
        return False


def tidy(folders):
    """Finish the output sets that a killed process left half renamed into ``folders``
    and remove its temporary and backup files there -- unless another process is writing
    in one of them (its files are then left alone; the next writer tidies)."""
    with _writing_in([os.path.realpath(os.fsdecode(f)) for f in folders], tidy_first=True):
        pass


def _tidy(folders):
    """With every folder of ``folders`` locked exclusively: complete each set whose journal
    is in them (:func:`_finish`; its error, e.g. a folder no longer writable, is raised
    and the leftovers it needs are kept), then delete every temporary, backup and journal
    file that can be deleted."""
    for folder in folders:
        for name in _listdir(folder):
            if name.endswith(".journal") and _OURS.fullmatch(name):
                _finish(os.path.join(folder, name))
    for folder in folders:
        for name in _listdir(folder):
            if _OURS.fullmatch(name):
                with contextlib.suppress(OSError):  # gone, or a read-only folder: kept
                    os.unlink(os.path.join(folder, name))


def _listdir(folder):
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _finish(journal):
    """Complete the set a journal describes (:func:`replace_together`): rename each of its
    temporary files that is still there over its target, delete its removed files, then
    the journal. A journal that cannot be read is deleted with the other leftovers: it was
    never renamed into place whole, so no file of its set was renamed either."""
    root = os.path.dirname(journal)
    try:
        with open(journal, encoding="utf-8") as f:
            record = json.load(f)
        renames = [(_inside(root, tmp), _inside(root, target))
                   for tmp, target in record["rename"]]
        removals = [_inside(root, path) for path in record["remove"]]
    except (OSError, ValueError, TypeError, KeyError):
        return
    for tmp, target in renames:
        with contextlib.suppress(FileNotFoundError):  # renamed before the kill
            os.replace(tmp, target)
    for path in removals:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    os.unlink(journal)
    for folder in {os.path.dirname(p) for p in (*(t for _, t in renames), *removals)}:
        _sync_folder(folder)


def _inside(root, relative):
    """``root/relative`` for a path a journal names, which must stay inside ``root``."""
    if not isinstance(relative, str) or os.path.isabs(relative) \
            or os.path.normpath(relative) != relative or relative.split(os.sep)[0] == "..":
        raise ValueError(f"not a path inside the journal's folder: {relative!r}")
    return os.path.join(root, relative)


def _write_new(path, data):
    """Write ``data`` to the new temporary file ``path`` (0666 less the umask; registered
    with the current :class:`WriteGuard`) and sync it to disk."""
    fd = _GUARD.get().create(path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder):
    if hasattr(os, "O_DIRECTORY"):  # POSIX: make the renames durable
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _swap(staged, doomed, journal=None):
    """Steps (4)-(5) of :func:`replace_together`: rename each of ``staged`` (target ->
    temporary file) over its target and delete ``doomed``, keeping backups of the old files
    until then; on a failure, delete the ``journal`` (nothing is to be finished any more),
    put every old file back and re-raise."""
    backups, replaced = {}, []
    try:
        for target in (*staged, *doomed):
            if os.path.exists(target):
                backups[target] = _temporary(os.path.dirname(target), ".bak")
                try:
                    os.link(target, backups[target])
                except OSError:  # no hard links on this file system: keep a copy
                    shutil.copy2(target, backups[target])
        for target, tmp in staged.items():
            os.replace(tmp, target)
            replaced.append(target)
        for target in doomed:
            os.unlink(target)
            replaced.append(target)
    except BaseException:
        if journal is not None:
            with contextlib.suppress(OSError):
                os.unlink(journal)
        for target in reversed(replaced):
            with contextlib.suppress(OSError):
                if target in backups:
                    os.replace(backups.pop(target), target)
                else:
                    os.unlink(target)
        for backup in backups.values():
            with contextlib.suppress(OSError):
                os.unlink(backup)
        raise
    for backup in backups.values():
        with contextlib.suppress(OSError):  # the set is replaced; a stray backup is harmless
            os.unlink(backup)


def replace_together(contents, remove=()):
    """Replace a set of files together: all of them or none.

    Every path in ``contents`` (path -> bytes) gets its new content and every existing path
    in ``remove`` is deleted -- or, if any step fails, every one of them is left as it was
    and the exception is re-raised. Paths are resolved as by :func:`atomic_file` (a symbolic
    link is written through); new files get 0666 less the umask, replaced ones keep their
    mode; missing folders are created (and removed again on failure).

    Steps: (1) refuse a path that exists but is not a regular file (:func:`check_regular`);
    :func:`tidy` the set's folders (the folders of the paths and their common folder, the
    *root*) when no other process writes in them; (2) write every content to a temporary
    file beside its path and sync it; (3) write the *journal*, a file in the root naming
    every rename and removal of (4), and sync it: from here on the set is decided;
    (4) keep each existing file under a backup name (a hard link, or a copy where links
    are unsupported), rename each temporary file over its path and delete the removed
    paths; (5) delete the journal and the backups and sync the folders. A failure in
    (1)-(4) deletes the journal and the temporary files, renames the backups back and
    deletes the files created in (4). Steps (3)-(5) are the commit of the current
    :class:`WriteGuard`.

    A process killed in (4) leaves some files new and some old (POSIX has no multi-file
    rename) beside the journal: the next :func:`tidy` of the folder -- by the next writer
    of a set there, or :func:`fastrank.report.check_output_dir` -- finishes the renames
    from the journal, so the set becomes the new one whole. Killed before (3), it leaves
    the old set and temporary files, which the next :func:`tidy` removes.
    """
    targets = {os.path.realpath(os.fsdecode(p)): data for p, data in contents.items()}
    doomed = [t for t in (os.path.realpath(os.fsdecode(p)) for p in remove)
              if t not in targets and os.path.lexists(t)]
    for target in (*targets, *doomed):
        check_regular(target)
    folders = {os.path.dirname(t) for t in (*targets, *doomed)}
    if not folders:
        return
    root = os.path.commonpath(folders)
    guard = _GUARD.get()
    made_folders, staged = [], {}
    try:
        for folder in sorted(folders):
            missing = []
            while not os.path.isdir(folder):
                missing.append(folder)
                folder = os.path.dirname(folder)
            for folder in reversed(missing):
                guard.make_folder(folder)
                made_folders.append(folder)
        with _writing_in([*folders, root], tidy_first=True):
            for target, data in targets.items():
                staged[target] = _temporary(os.path.dirname(target), ".tmp")
                _write_new(staged[target], data)
                if os.path.exists(target):
                    os.chmod(staged[target], stat.S_IMODE(os.stat(target).st_mode))
            with guard.commit():
                journal = _write_journal(root, staged, doomed)
                _swap(staged, doomed, journal)
                guard.forget(*staged.values(), *made_folders)
                with contextlib.suppress(OSError):  # the set is replaced: a stray journal
                    os.unlink(journal)              # only repeats it (see tidy)
    except BaseException:
        for leftover in staged.values():
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        for folder in reversed(made_folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        guard.forget(*staged.values(), *made_folders)
        raise
    for folder in folders:
        _sync_folder(folder)


def _write_journal(root, staged, doomed):
    """Write the journal of a set's renames (target -> temporary file) and removals into
    the folder ``root``, paths relative to it, synced; its path."""
    record = {"rename": [[os.path.relpath(tmp, root), os.path.relpath(target, root)]
                         for target, tmp in staged.items()],
              "remove": [os.path.relpath(path, root) for path in doomed]}
    tmp = _temporary(root, ".tmp")
    _write_new(tmp, json.dumps(record).encode())
    journal = tmp[:-len(".tmp")] + ".journal"
    try:
        os.replace(tmp, journal)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        _GUARD.get().forget(tmp)
    _sync_folder(root)
    return journal
