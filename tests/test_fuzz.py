"""Fuzz and bad-input suite: seeded random cases (tests/fuzz_cases.py) against the parsers
(ARFF, libsvm, JSON, JSON Lines, CSV), sparse-matrix validation (malformed CSR/CSC/COO/BSR
into every public function taking sparse input, estimators included) and the command
line's file arguments (``fastrank rank FILE``, ``fastrank evaluate --truth --scores``) and
mutated model files into every estimator's ``load`` (the systematic list of mutations has
about 2 300 cases; ``FASTRANK_FUZZ_CASES=3000`` runs all of them and some random ones).

Each batch of cases runs in a child process with a bounded address space, so a crash, an
abort or a runaway allocation fails the test with the seed of the case instead of killing
pytest. The default size runs in CI in well under a minute; the cases are deterministic
(seeds FASTRANK_FUZZ_SEED .. + n). A long run, e.g. 10**5 cases of each kind:

    FASTRANK_FUZZ_CASES=100000 python -m pytest -q tests/test_fuzz.py

(FASTRANK_FUZZ_SEED=k shifts the seeds; one failing case replays with
``python tests/fuzz_cases.py KIND SEED 1``.)
"""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "fuzz_cases.py")

# cases of each kind in CI (about 2-25 ms each); FASTRANK_FUZZ_CASES overrides them all
DEFAULT_CASES = {"csr": 2500, "csr_estimators": 400, "parsers": 4000, "cli": 1200,
                 "model_files": 600}
BATCH = 5000  # cases per child process
FIRST = int(os.environ.get("FASTRANK_FUZZ_SEED", "0"))


def _n_cases(kind):
    return int(os.environ.get("FASTRANK_FUZZ_CASES", DEFAULT_CASES[kind]))


def run_batch(kind, first, count):
    """Run cases first .. first+count-1 in a child; fail naming the seed on any failure."""
    env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONFAULTHANDLER="1")
    proc = subprocess.run([sys.executable, RUNNER, kind, str(first), str(count)], env=env,
                          capture_output=True, text=True, timeout=60 + count)
    if proc.returncode == 0:
        return
    started = re.findall(r"^case (\d+)$", proc.stdout, re.M)
    seed = started[-1] if started else "?"
    failure = re.search(r"^FAIL .*", proc.stdout, re.M)
    died = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
    how = failure.group(0) if failure else \
        f"child died with {died}: {proc.stderr.strip()[-800:]}"
    pytest.fail(f"{kind} case {seed}: {how}\nreplay: python tests/fuzz_cases.py {kind} {seed} 1",
                pytrace=False)


def _batches(kind):
    n = _n_cases(kind)
    return [(FIRST + s, min(BATCH, n - s)) for s in range(0, n, BATCH)]


@pytest.mark.parametrize("kind", ["csr", "csr_estimators", "parsers", "cli", "model_files"])
def test_fuzz(kind):
    for first, count in _batches(kind):
        run_batch(kind, first, count)


def test_runner_reports_a_crash_with_its_seed(tmp_path, monkeypatch):
    """The harness itself: a case that kills its process fails the test naming the seed."""
    script = tmp_path / "crashing_runner.py"
    script.write_text(
        "import os, signal, sys\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "import fuzz_cases\n"
        "def crash(seed):\n"
        "    if seed == 7:\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
        "fuzz_cases.KINDS['crash'] = crash\n"
        "sys.exit(fuzz_cases.run('crash', int(sys.argv[2]), int(sys.argv[3])))\n")
    monkeypatch.setattr(sys.modules[__name__], "RUNNER", str(script))
    with pytest.raises(pytest.fail.Exception, match=r"crash case 7: child died with signal 11"):
        run_batch("crash", 5, 4)
    run_batch("crash", 0, 7)  # seeds 0..6 do not crash
