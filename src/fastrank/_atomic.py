"""Atomic file writing: a file is either absent/old or complete, never half-written."""
import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_file(path):
    """Yield a binary file that replaces ``path`` when the block ends without an exception.

    The data go to a temporary file in the same folder, renamed over ``path`` at the end
    (an atomic step on POSIX and Windows); on an exception the temporary file is removed
    and ``path`` is untouched. The file gets the permissions ``open(path, "wb")`` would give
    (0666 less the umask), not the temporary file's private 0600.
    """
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".fastrank-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
