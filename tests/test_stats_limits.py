"""Small inputs that could make the statistics allocate or compute without bound: each case
runs in a child process with a capped address space and a time limit, and must end in a
correct result or in a ValueError naming the size. The linear-time maximal groups of
``critical_difference_groups`` are checked against their definition on small inputs."""
import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fastrank.stats import critical_difference_groups

MEMORY_LIMIT = 2 * 2**30  # bytes of address space for each child
TIME_LIMIT = 120          # seconds a child may take before the case fails

PREAMBLE = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))
import time
import numpy as np
import scipy.stats as sps
from fastrank import stats
rng = np.random.default_rng(0)
start = time.perf_counter()
"""


def run_capped(body):
    """Run ``body`` after PREAMBLE in a capped child; return what it printed. A
    MemoryError, a crash or the time limit fails the test."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", PREAMBLE + textwrap.dedent(body)], env=env,
                          capture_output=True, text=True, timeout=TIME_LIMIT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def refused(call):
    return f"""
try:
    {call}
except ValueError as exc:
    print("ValueError:", exc)
else:
    print("no error")
"""


@pytest.mark.parametrize("call", [
    "stats.confusion_matrix(rng.random(10**5), rng.random(10**5))",
    "stats.cost_error(rng.random(10**5), rng.random(10**5), np.ones((2, 2)))",
    "stats.confusion_matrix([0, 1], [1, 0], labels=np.arange(10**6))",
])
def test_confusion_matrix_of_scores_names_the_class_count(call):
    out = run_capped(refused(call))
    assert out.startswith("ValueError:") and "classes would make a" in out, out
    assert ("200000 classes" in out or "1000000 classes" in out) and "GiB" in out, out


def test_confusion_matrix_at_the_class_bound_is_computed():
    out = run_capped("""
        k = stats.MAX_CLASSES
        y_true, y_pred = rng.integers(0, k, 10**5), rng.integers(0, k, 10**5)
        m = stats.confusion_matrix(y_true, y_pred, labels=np.arange(k))
        want = np.zeros((k, k), dtype=np.int64)
        np.add.at(want, (y_true, y_pred), 1)
        print(m.shape, bool((m == want).all()))
    """)
    assert out.split() == ["(4096,", "4096)", "True"], out


def test_exact_wilcoxon_beyond_its_bound_names_the_size():
    out = run_capped(refused("stats.wilcoxon(rng.normal(size=10**6), np.zeros(10**6), "
                             "method='exact')"))
    assert out.startswith("ValueError:") and "at most 500 differences, got 1000000" in out, out


@pytest.mark.parametrize("zero_method", ["wilcox", "zsplit"])
def test_wilcoxon_of_a_million_pairs_is_the_normal_approximation(zero_method):
    out = run_capped(f"""
        d = np.round(rng.normal(0.001, 1.0, size=10**6), 2)  # ties and zeros
        res = stats.wilcoxon(d, np.zeros(d.size), zero_method="{zero_method}")
        ref = sps.wilcoxon(d, zero_method="{zero_method}", method="asymptotic")
        print(res.exact, res.statistic == ref.statistic,
              abs(res.pvalue - ref.pvalue) <= 1e-9 * ref.pvalue, time.perf_counter() - start)
    """)
    exact, same_statistic, same_p, seconds = out.split()
    assert (exact, same_statistic, same_p) == ("False", "True", "True"), out
    assert float(seconds) < 30, out


def test_critical_difference_groups_of_many_ranks_are_fast_and_maximal():
    out = run_capped("""
        for r, cd in [(rng.random(10**5) * 20, 1.0), (np.arange(10.0**5), 5e4),
                      (np.round(rng.random(10**5) * 50, 1), 2.5)]:
            groups = stats.critical_difference_groups(r, cd)
            s = np.sort(r)
            first = np.array([r[g[0]] for g in groups])
            last = np.array([r[g[-1]] for g in groups])
            lo = np.searchsorted(s, first, side="left")
            hi = lo + np.array([g.size for g in groups]) - 1
            ok = (np.all(last - first <= cd)                                  # within cd
                  and np.all(s[lo] == first) and np.all(s[hi] == last)       # contiguous
                  and np.all((hi + 1 == s.size) | (s[np.minimum(hi + 1, s.size - 1)] - first > cd))
                  and np.all((lo == 0) | (last - s[np.maximum(lo - 1, 0)] > cd))  # maximal
                  and np.all(np.diff(lo) > 0))
            print(len(groups), ok)
        print(time.perf_counter() - start)
    """)
    *lines, seconds = out.splitlines()
    assert [line.split()[1] for line in lines] == ["True"] * 3, out
    assert int(lines[1].split()[0]) == 50_000, out  # windows [i, i + 50 000], i < 50 000
    assert float(seconds) < 20, out


# ---- the maximal groups against their definition -------------------------------------------

def groups_by_definition(r, cd):
    """Every maximal run of >= 2 classifiers, in sorted order, whose ranks differ by at most
    ``cd`` (computed as ``s[j] - s[i]``), by enumerating all runs."""
    order = np.argsort(r, kind="stable")
    s = np.asarray(r, dtype=np.float64)[order]
    runs = [(i, j) for i, j in itertools.combinations(range(s.size), 2) if s[j] - s[i] <= cd]
    maximal = [(i, j) for i, j in runs
               if not any(a <= i and j <= b and (a, b) != (i, j) for a, b in runs)]
    return [order[i:j + 1] for i, j in sorted(maximal)]


@pytest.mark.parametrize("seed", range(300))
def test_critical_difference_groups_are_the_maximal_runs(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, 11))
    step = rng.choice([0.1, 0.25, 1 / 3, 0.7])  # decimal steps: sums that round
    r = rng.integers(0, 8, k) * step + rng.choice([0.0, 0.1, 0.2])
    cd = float(rng.choice([0.0, 0.1, 0.2, 0.3, 1 / 3, 0.30000000000000004, 0.7, 1.0])
               * rng.integers(1, 4))
    got = critical_difference_groups(r, cd)
    want = groups_by_definition(r, cd)
    assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want)), \
        (r.tolist(), cd, got, want)
