"""Resampling estimators (ml-concepts chapter §4.5; melotti2009 §3.4), with
scikit-learn's splitter protocol: ``split(X, y=None, groups=None)`` yields
``(train_indices, test_indices)`` and ``get_n_splits()`` counts them, so every splitter here
can be passed as ``cv=`` to scikit-learn too.

Determinism: with an int ``random_state`` every call of ``split`` yields the same splits;
with a ``numpy.random.Generator`` successive calls continue its stream; with None they
differ. Index arrays are sorted int64 (bootstrap training sets keep their repeats).
"""
from ._bootstrap import Bootstrap, bootstrap_632
from ._cross_validation import IterativeStratifiedKFold, KFold, LeaveOneOut
from ._subsampling import Holdout, RepeatedSubsampling

__all__ = ["KFold", "IterativeStratifiedKFold", "Holdout", "RepeatedSubsampling",
           "LeaveOneOut", "Bootstrap", "bootstrap_632"]
