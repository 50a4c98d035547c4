"""Atomic file writing: a file is either absent/old or complete, never half-written
(:func:`atomic_file`), and a set of files is either all old or all new
(:func:`replace_together`); the writes of a computation that is abandoned stop and leave
no temporary file (:class:`WriteGuard`)."""
import contextlib
import contextvars
import os
import secrets
import shutil
import stat
import threading

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


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


def _swap(staged, doomed):
    """Steps (3)-(5) of :func:`replace_together`: rename each of ``staged`` (target ->
    temporary file) over its target and delete ``doomed``, keeping backups of the old files
    until then; on a failure, put every old file back and re-raise."""
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
    (2) write every content to a temporary file beside its path and sync it; (3) keep each
    existing file under a backup name (a hard link, or a copy where links are unsupported);
    (4) rename each temporary file over its path and delete the removed paths; (5) delete
    the backups and sync the folders. A failure in (1)-(4) deletes the temporary files,
    renames the backups back and deletes the files created in (4). Steps (3)-(5) are the
    commit of the current :class:`WriteGuard`.

    Limit: a rename is atomic for one file, not for the set (POSIX has no multi-file
    rename), so a crash of the process or machine *during* step (4) leaves some files new
    and some old, with ``.fastrank-*`` temporary and backup files beside them.
    """
    targets = {os.path.realpath(os.fsdecode(p)): data for p, data in contents.items()}
    doomed = [t for t in (os.path.realpath(os.fsdecode(p)) for p in remove)
              if t not in targets and os.path.lexists(t)]
    for target in (*targets, *doomed):
        check_regular(target)
    guard = _GUARD.get()
    made_folders, staged = [], {}
    try:
        for target, data in targets.items():
            folder = os.path.dirname(target)
            missing = []
            while not os.path.isdir(folder):
                missing.append(folder)
                folder = os.path.dirname(folder)
            for folder in reversed(missing):
                guard.make_folder(folder)
                made_folders.append(folder)
            staged[target] = _temporary(os.path.dirname(target), ".tmp")
            _write_new(staged[target], data)
            if os.path.exists(target):
                os.chmod(staged[target], stat.S_IMODE(os.stat(target).st_mode))
        with guard.commit():
            _swap(staged, doomed)
            guard.forget(*staged.values(), *made_folders)
    except BaseException:
        for leftover in staged.values():
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        for folder in reversed(made_folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        guard.forget(*staged.values(), *made_folders)
        raise
    for folder in {os.path.dirname(t) for t in (*targets, *doomed)}:
        _sync_folder(folder)
