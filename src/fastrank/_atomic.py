"""Atomic file writing: a file is either absent/old or complete, never half-written."""
import contextlib
import os
import secrets
import stat


@contextlib.contextmanager
def atomic_file(path):
    """Yield a binary file that replaces ``path`` when the block ends without an exception.

    The data go to a temporary file in the same folder, flushed to disk and renamed over
    ``path`` at the end (atomic on POSIX file systems); on an exception the temporary file
    is removed and ``path`` is untouched. As with ``open(path, "wb")``: a new file gets 0666
    less the umask, an existing one keeps its permissions, and a symbolic link is written
    through (its target is replaced). A ``path`` that exists but is not a regular file (a
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
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
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
