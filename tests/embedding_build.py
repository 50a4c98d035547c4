"""Build one of the downstream extensions of tests/embedding (the embedding guide's examples)
in a directory of the caller's and import it: for tests/test_embedding.py and
benchmarks/bench_capi.py."""
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent / "embedding"


def build_example(name, module, where):
    """Copy tests/embedding/<name> into ``where``, build it in place (``setup.py
    build_ext``) and return its imported ``module``; AssertionError with the build's last
    output when it fails."""
    shutil.copytree(EXAMPLES / name, where, dirs_exist_ok=True)
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                          cwd=where, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sys.path.insert(0, str(where))
    try:
        return importlib.import_module(module)
    finally:
        sys.path.remove(str(where))
