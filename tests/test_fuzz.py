"""Fuzz and bad-input suite: seeded random cases (tests/fuzz_cases.py) against the parsers
(ARFF, libsvm, JSON, JSON Lines, CSV), sparse-matrix validation (malformed CSR/CSC/COO/BSR
into every public function taking sparse input, estimators included) and the command
line's file arguments (``fastrank rank FILE``, ``fastrank evaluate --truth --scores``) and
mutated model files into every estimator's ``load`` (the systematic list of mutations has
about 2 500 cases; ``FASTRANK_FUZZ_CASES=3000`` runs all of them and some random ones).

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
                 "model_files": 300}
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


# ---- bad arguments: a ValueError/TypeError naming the problem, never another exception ----

_WEIRD = [None, True, 1.5, "x", "", [], [1], {}, {"a": 1}, -1, 0, 10**30, float("nan"),
          object(), b"x", (1, 2), 2**63]


def _refused(f, *args, **kwargs):
    """f must raise ValueError/TypeError with a message (any other exception fails)."""
    with pytest.raises((ValueError, TypeError)) as exc:
        f(*args, **kwargs)
    assert str(exc.value).strip()


@pytest.fixture(scope="module")
def small():
    import numpy as np
    import scipy.sparse as sp
    from fastrank.datasets import Dataset
    rng = np.random.default_rng(0)
    X = rng.random((12, 5))
    Y = (rng.random((12, 3)) < 0.5).astype(np.uint8)
    Y[:, 0] = 1
    return Dataset(sp.csr_matrix(X), Y)


_STUDY = {"classifiers": ("knn",), "folds": 2, "ties": ("ordinal",), "params": {"knn": {"k": 3}}}
_BAD_STUDY_ARGS = [("dataset", w) for w in _WEIRD if not isinstance(w, str)] + \
    [(key, w) for key in ("classifiers", "ties") for w in _WEIRD + [[w] for w in _WEIRD]
     if w not in ((), "", [], {})] + \
    [("folds", w) for w in _WEIRD] + [("cutoff", w) for w in _WEIRD if w not in (10**30, 2**63)] + \
    [("n_jobs", w) for w in _WEIRD if w not in (None, -1)] + \
    [("random_state", w) for w in _WEIRD if w not in (0, 10**30, 2**63)] + \
    [("calibrate", w) for w in _WEIRD if w is not True] + \
    [("progress", w) for w in _WEIRD if w is not None] + \
    [("params", w) for w in _WEIRD if w not in (None, {})] + \
    [("params", {"knn": w}) for w in _WEIRD if w != {}] + \
    [("params", {"knn": {"k": w}}) for w in _WEIRD if w is not None] + \
    [("params", p) for p in ({"knn": {"bogus": 1}}, {"knn": {"aggregate": "x"}},
                             {"knn": {"random_state": 1}}, {"mlknn": {"k": 3}})]


@pytest.mark.parametrize("key, value", _BAD_STUDY_ARGS, ids=repr)
def test_run_study_refuses_every_bad_argument(small, key, value):
    from fastrank.study import run_study
    args = {**_STUDY, key: value}
    dataset = args.pop("dataset", small)
    _refused(run_study, dataset, **args)


def _json_paths(node, prefix=()):
    """Every entry of a nested dict/list (the first two items of a list)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _json_paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node[:2]):
            yield prefix + (i,)
            yield from _json_paths(value, prefix + (i,))


def test_study_result_refuses_every_damaged_entry(small):
    """Each entry of a result's JSON removed, replaced by a value of a wrong type, or its
    lists made ragged: from_dict/from_json load it or raise ValueError/TypeError with a
    message; a value that loads must give back the same JSON."""
    import copy
    import json
    from fastrank.study import StudyResult, run_study
    result = run_study(small, classifiers=("knn", "mlknn"), folds=2, ties=("ordinal", "expected"),
                       params={"knn": {"k": 3}, "mlknn": {"k": 3}}, n_jobs=1)
    good = json.loads(result.to_json())
    replacements = ["drop", None, True, "x", -1, 0, 1.5, [], [1, [2]], {}, {"a": 1}]
    for path in _json_paths(good):
        for new in replacements:
            d = copy.deepcopy(good)
            node = d
            for key in path[:-1]:
                node = node[key]
            if new == "drop":
                del node[path[-1]]
            else:
                node[path[-1]] = new
            for load, arg in ((StudyResult.from_dict, d), (StudyResult.from_json, json.dumps(d))):
                try:
                    back = load(arg)
                except (ValueError, TypeError) as exc:
                    assert str(exc).strip(), (path, new)
                    continue
                back.to_json()  # what loads is usable
    for bad in _WEIRD:
        _refused(StudyResult.from_dict, bad)
        _refused(StudyResult.from_json, bad)
    _refused(StudyResult.from_json, "[" * 100000)


@pytest.mark.parametrize("value", [w for w in _WEIRD if not isinstance(w, str)], ids=repr)
def test_text_normalisation_refuses_non_strings(value):
    from fastrank import text
    _refused(text._normalise, value, False)
    _refused(text.analyze, value)
    _refused(text.TfidfIndexer().fit_transform, [value])


def test_save_libsvm_refuses_bad_arguments(small, tmp_path):
    import copy

    import numpy as np
    from fastrank.datasets import save_libsvm
    for value in _WEIRD:
        _refused(save_libsvm, value, tmp_path / "a.svm")
        if not isinstance(value, bool):
            _refused(save_libsvm, small, tmp_path / "a.svm", zero_based=value)
    # (a dense X of the right shape is a Dataset made with dense=True: written as its CSR)
    for attr, value in (("X", np.zeros((11, 5))), ("X", np.zeros(12)), ("X", "x"), ("Y", None),
                        ("Y", np.ones(12))):
        broken = copy.copy(small)
        setattr(broken, attr, value)
        _refused(save_libsvm, broken, tmp_path / "b.svm")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("value", _WEIRD, ids=repr)
def test_neighbour_predictions_and_probability_checks_refuse_bad_input(small, value):
    import numpy as np
    import fastrank
    from fastrank.calibration._scores import _check_probabilities
    for model in (fastrank.KNN(k=3), fastrank.MLkNN(k=3)):
        model.fit(small.X, small.Y)
        _refused(model.predict, value)
        _refused(model.decision_function, value)
    _refused(_check_probabilities, value, np.full((2, 2), 0.5))
    _refused(_check_probabilities, np.ones((2, 2), dtype=np.uint8), value)
