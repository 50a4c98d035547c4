"""Atomic file writing: a file is either absent/old or complete, never half-written
(:func:`atomic_file`), and a set of files is either all old or all new
(:func:`replace_together`)."""
import contextlib
import os
import secrets
import shutil
import stat


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
    tmp = os.path.join(os.path.dirname(target), f".fastrank-{secrets.token_hex(8)}.tmp")
    # the OS applies the umask to 0666, as for open(); O_EXCL: never someone else's file
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
    except OSError as exc:  # a missing or unwritable folder: name the file asked for
        raise type(exc)(exc.errno, exc.strerror, os.fsdecode(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(target):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
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
    """Write ``data`` to the new file ``path`` (0666 less the umask) and sync it to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
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
    renames the backups back and deletes the files created in (4).

    Limit: a rename is atomic for one file, not for the set (POSIX has no multi-file
    rename), so a crash of the process or machine *during* step (4) leaves some files new
    and some old, with ``.fastrank-*`` temporary and backup files beside them.
    """
    targets = {os.path.realpath(os.fsdecode(p)): data for p, data in contents.items()}
    doomed = [t for t in (os.path.realpath(os.fsdecode(p)) for p in remove)
              if t not in targets and os.path.lexists(t)]
    for target in (*targets, *doomed):
        check_regular(target)
    made_folders, staged, backups, replaced = [], {}, {}, []
    try:
        for target, data in targets.items():
            folder = os.path.dirname(target)
            missing = []
            while not os.path.isdir(folder):
                missing.append(folder)
                folder = os.path.dirname(folder)
            for folder in reversed(missing):
                os.mkdir(folder)
                made_folders.append(folder)
            staged[target] = _temporary(os.path.dirname(target), ".tmp")
            _write_new(staged[target], data)
            if os.path.exists(target):
                os.chmod(staged[target], stat.S_IMODE(os.stat(target).st_mode))
        for target in (*targets, *doomed):
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
        for leftover in (*staged.values(), *backups.values()):
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        for folder in reversed(made_folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise
    for backup in backups.values():
        with contextlib.suppress(OSError):  # the set is replaced; a stray backup is harmless
            os.unlink(backup)
    for folder in {os.path.dirname(t) for t in (*targets, *doomed)}:
        _sync_folder(folder)
