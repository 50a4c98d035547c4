"""How far tie-breaking moves P@k and nDCG@k on real multi-label sets, kNN and VG-RAM beliefs.

Run: ``python benchmarks/xmlc_real_data.py [--data DIR] [--sets delicious bibtex cal500]``

Data: Mulan's ``<name>/<name>.arff`` and ``.xml`` under ``--data`` (default
``../shared/data/mulan``, never committed), loaded with :func:`fastrank.datasets.load_arff`,
features as given. Split: the first fold of the study's cross-validation,
``fastrank.model_selection.KFold(n_splits=10, shuffle=True, random_state=0)`` (90 % of the
documents train, 10 % test). Classifiers at the thesis' configuration (melotti2009 ch. 3,
``fastrank.study.CLASSIFIERS``): kNN with every training document as a neighbour and the
largest cosine per label, VG-RAM WNN with 1024 neurons of 1024 synapses (``random_state=0``).
Metrics: :func:`fastrank.evaluate_at_k` of the test beliefs, P@1,3,5 and nDCG@1,3,5 under
``ties="pessimistic"``, ``"expected"`` and ``"optimistic"``: the smallest value any
tie-breaking can give, the mean over all of them, the largest. Also the share of test
documents whose tie group at position k straddles the cut-off (where tie-breaking decides).

Prints a reStructuredText table (the one in docs/guide/xmlc.rst).
"""
import argparse
import os
import time

import numpy as np

from fastrank import KNN, VGRAM
from fastrank.datasets import load_arff
from fastrank.metrics import evaluate_at_k
from fastrank.model_selection import KFold

KS = (1, 3, 5)
TIES = ("pessimistic", "expected", "optimistic")
CLASSIFIERS = (("kNN", lambda: KNN(k=None, aggregate="max")),
               ("VG-RAM WNN", lambda: VGRAM(n_neurons=1024, n_synapses=1024, random_state=0)))
DEFAULT_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "mulan")


def tie_shares(scores, ks=KS):
    """Per k, the share of rows whose k-th and (k+1)-th largest scores are equal."""
    s = -np.sort(-np.asarray(scores), axis=1)
    return [float(np.mean(s[:, k - 1] == s[:, k])) for k in ks]


def evaluate_set(path, name):
    """[(row label, tie shares, TopKEvaluation)] of one data set, one per classifier."""
    data = load_arff(os.path.join(path, name, f"{name}.arff"))
    train, test = next(iter(KFold(n_splits=10, shuffle=True, random_state=0).split(data.X)))
    print(f"{name}: {data.Y.shape[1]} labels, {len(train)} training and {len(test)} test "
          "documents", flush=True)
    rows = []
    for clf_name, make in CLASSIFIERS:
        t0 = time.perf_counter()
        scores = make().fit(data.X[train], data.Y[train]).decision_function(data.X[test])
        result = evaluate_at_k(data.Y[test], scores, k=KS, ties=TIES)
        print(f"  {clf_name}: {time.perf_counter() - t0:.1f} s", flush=True)
        rows.append((f"{name} ({data.Y.shape[1]} labels), {clf_name}", tie_shares(scores),
                     result))
    return rows


def table(rows):
    """A reStructuredText csv-table: one row per (set, classifier, ties)."""
    head = ["data set, classifier", "cut-off in a tie (k = 1, 3, 5)", "ties"] + \
        [f"P@{k}" for k in KS] + [f"nDCG@{k}" for k in KS]
    out = [".. csv-table::", "   :header: " + ", ".join(f'"{h}"' for h in head), ""]
    for label, shares, result in rows:
        for i, t in enumerate(TIES):
            first = [label, " / ".join(f"{100 * v:.0f} %" for v in shares)] if i == 0 \
                else ["", ""]
            values = [result[t][f"precision@{k}"] for k in KS] + \
                [result[t][f"ndcg@{k}"] for k in KS]
            out.append("   " + ", ".join([f'"{c}"' for c in first] + [t] +
                                         [f"{v:.3f}" for v in values]))
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="folder of Mulan's data sets")
    parser.add_argument("--sets", nargs="+", default=["delicious", "bibtex", "cal500"])
    args = parser.parse_args()
    rows = [row for name in args.sets for row in evaluate_set(args.data, name)]
    print(table(rows))


if __name__ == "__main__":
    main()
