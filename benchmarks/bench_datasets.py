"""Loaders: fastrank.datasets.load_arff vs liac-arff and scipy.io.arff on the Mulan files;
load_libsvm vs scikit-learn's load_svmlight_file; the synthetic generator at 10**5 documents;
IterativeStratifiedKFold vs scikit-multilearn's IterativeStratification (time and label deviation).

Run: pytest benchmarks/bench_datasets.py --benchmark-only
Data from ../shared/data (never committed). The parsers are sequential (one pass over the
bytes), so the thread count does not matter and is not varied. scipy.io.arff cannot read
sparse ARFF rows (bibtex, delicious): ``test_fastrank_arff`` checks that it fails there.
Before timing, each peer's result is checked to be the same matrix as fastrank's.
"""
from pathlib import Path

import arff as liac
import numpy as np
import pytest
import scipy.io.arff as scipy_arff
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from fastrank import datasets

MULAN = Path(__file__).resolve().parents[2] / "shared" / "data" / "mulan"
FILES = {"bibtex": MULAN / "bibtex" / "bibtex", "delicious": MULAN / "delicious" / "delicious",
         "yeast": MULAN / "yeast" / "yeast", "genbase": MULAN / "genbase" / "genbase"}
SPARSE = ("bibtex", "delicious")


def _liac(stem, sparse):
    with open(f"{stem}.arff", encoding="utf-8") as f:
        d = liac.load(f, encode_nominal=True, return_type=liac.COO if sparse else liac.DENSE)
    if sparse:
        data, rows, cols = d["data"]
        return sp.csr_matrix((data, (rows, cols)), shape=(max(rows) + 1, len(d["attributes"])))
    return np.asarray(d["data"], dtype=np.float64)


def _scipy(stem):
    data, _ = scipy_arff.loadarff(f"{stem}.arff")
    return data


def _full(ds):
    """fastrank's X and Y back in attribute order (the Mulan files put labels last)."""
    return sp.hstack([ds.X, sp.csr_matrix(ds.Y, dtype=np.float64)]).tocsr()


@pytest.mark.parametrize("name", list(FILES))
def test_fastrank_arff(benchmark, name):
    benchmark.group = f"ARFF {name}"
    benchmark.extra_info.update(threads=1, file=f"{name}.arff")
    stem = FILES[name]
    ds = benchmark.pedantic(datasets.load_arff, args=(f"{stem}.arff",),
                            kwargs={"labels": f"{stem}.xml"}, rounds=7, iterations=1)
    assert ds.X.shape[0] == ds.Y.shape[0]
    if name in SPARSE:  # the peer scipy.io.arff cannot read sparse rows at all
        with pytest.raises(ValueError, match="value not in"):
            _scipy(stem)


@pytest.mark.parametrize("name", list(FILES))
def test_liac_arff(benchmark, name):
    benchmark.group = f"ARFF {name}"
    stem = FILES[name]
    ref = _full(datasets.load_arff(f"{stem}.arff", labels=f"{stem}.xml"))
    out = benchmark.pedantic(_liac, args=(stem, name in SPARSE), rounds=3, iterations=1)
    np.testing.assert_array_equal(sp.csr_matrix(out).toarray(), ref.toarray())


@pytest.mark.parametrize("name", [n for n in FILES if n not in SPARSE])
def test_scipy_arff(benchmark, name):
    benchmark.group = f"ARFF {name}"
    stem = FILES[name]
    ref = datasets.load_arff(f"{stem}.arff", labels=f"{stem}.xml")
    rec = benchmark.pedantic(_scipy, args=(stem,), rounds=3, iterations=1)
    # scipy returns nominal values as bytes; compare the numeric columns of yeast exactly
    if name == "yeast":
        X = np.column_stack([rec[f] for f in ref.feature_names])
        np.testing.assert_array_equal(X, ref.X.toarray())


@pytest.fixture(scope="module")
def libsvm_file(tmp_path_factory):
    stem = FILES["bibtex"]
    ds = datasets.load_arff(f"{stem}.arff", labels=f"{stem}.xml")
    path = tmp_path_factory.mktemp("svm") / "bibtex.svm"
    datasets.save_libsvm(ds, path)
    return path, ds


def test_fastrank_libsvm(benchmark, libsvm_file):
    benchmark.group = "libsvm bibtex (7395 x 1836, 159 labels)"
    path, ds = libsvm_file
    out = benchmark.pedantic(datasets.load_libsvm, args=(path,), kwargs={"n_features": 1836,
                             "n_labels": 159}, rounds=7, iterations=1)
    assert (out.X != ds.X).nnz == 0 and np.array_equal(out.Y, ds.Y)


def test_sklearn_svmlight(benchmark, libsvm_file):
    benchmark.group = "libsvm bibtex (7395 x 1836, 159 labels)"
    path, ds = libsvm_file
    X, _ = benchmark.pedantic(load_svmlight_file, args=(str(path),),
                              kwargs={"n_features": 1836, "multilabel": True,
                                      "zero_based": False}, rounds=7, iterations=1)
    assert (X != ds.X).nnz == 0


def test_make_multilabel_100k(benchmark):
    benchmark.group = "make_multilabel 100000 docs x 20000 terms, 100 labels (synthetic)"
    ds = benchmark.pedantic(datasets.make_multilabel, args=(100_000, 100, 20_000),
                            kwargs={"tie_density": 0.1, "random_state": 0}, rounds=3,
                            iterations=1)
    assert ds.X.shape == (100_000, 20_000)


def _label_deviation(Y, splits):
    """Mean |fold label proportion - overall proportion| (Sechidis et al.'s LD, lower = better)."""
    p = Y.mean(axis=0)
    return float(np.mean([np.abs(Y[test].mean(axis=0) - p).mean() for _, test in splits]))


@pytest.fixture(scope="module")
def bibtex():
    stem = FILES["bibtex"]
    return datasets.load_arff(f"{stem}.arff", labels=f"{stem}.xml")


def test_fastrank_iterative_stratification(benchmark, bibtex):
    from fastrank.model_selection import IterativeStratifiedKFold, KFold
    benchmark.group = "iterative stratification 10 folds, bibtex"
    splits = benchmark.pedantic(lambda: list(IterativeStratifiedKFold(10, random_state=0)
                                             .split(bibtex.X, bibtex.Y)), rounds=5, iterations=1)
    ld = _label_deviation(bibtex.Y, splits)
    plain = _label_deviation(bibtex.Y, list(KFold(10, random_state=0).split(bibtex.X)))
    benchmark.extra_info.update(label_deviation=ld, kfold_label_deviation=plain)
    assert ld < plain


def test_skmultilearn_iterative_stratification(benchmark, bibtex):
    from skmultilearn.model_selection import IterativeStratification
    benchmark.group = "iterative stratification 10 folds, bibtex"
    splits = benchmark.pedantic(lambda: list(IterativeStratification(n_splits=10, order=1)
                                             .split(bibtex.X, bibtex.Y)), rounds=5, iterations=1)
    benchmark.extra_info.update(label_deviation=_label_deviation(bibtex.Y, splits))
