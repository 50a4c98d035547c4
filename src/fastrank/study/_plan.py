"""What a study runs: its ranking types, the built-in classifiers and their calibration grids,
the classifiers' seeds, the check of a study's classifiers and parameters, and the record
of what determines its results.
"""
import hashlib
import json

import numpy as np
import scipy.sparse as sp

from .._validation import check_option
from ..metrics import Evaluator
from ..neighbors import KNN, MLkNN
from ..wnn import VGRAM, VGRAMCor


#: The thesis' four ranking types, the default of :func:`run_study`.
STUDY_TIES = ("ordinal", "dense", "standard", "modified")
#: "expected" may be added as a fifth type: the exact mean of ordinal over orders
ALLOWED_TIES = STUDY_TIES + ("expected",)
#: The ranking types that keep tie groups whole.
TIE_AWARE = ("dense", "standard", "modified")

#: name -> (display name, estimator class, thesis configuration)
CLASSIFIERS = {
    "knn": ("kNN", KNN, {"k": None}),
    "mlknn": ("ML-kNN", MLkNN, {"k": 10, "s": 1.0}),
    "vgram": ("VG-RAM WNN", VGRAM, {"n_neurons": 1024, "n_synapses": 1024}),
    "vgramcor": ("VG-RAM WNN-COR", VGRAMCor, {"n_neurons": 1024, "n_synapses": 512}),
}

#: calibration grids of melotti2009 §3.5 (values that exceed the data are dropped)
CALIBRATION_GRIDS = {
    "mlknn": {"k": [2, 4, 6, 8, 10, 12, 14, 18, 20, 22, 24, 26, 28, 30, 40, 50, 100, 500,
                    1000, 5000]},
    "vgram": {"n_neurons": [32, 64, 128, 256, 512, 1024], "n_synapses": [256, 512, 1024, 2048]},
    "vgramcor": {"n_neurons": [32, 64, 128, 256, 512, 1024],
                 "n_synapses": [256, 512, 1024, 2048]},
}


def check_cutoff(cutoff):
    """ValueError for a ``cutoff`` that :func:`fastrank.metrics.evaluate` refuses, checked by
    the metric suite itself (an :class:`~fastrank.metrics.Evaluator` fed nothing)."""
    Evaluator(cutoff=cutoff)


def display_name(classifier):
    """The name shown for a study's classifier.

    Parameters
    ----------
    classifier : str
        A key of :attr:`StudyResult.classifiers`.

    Returns
    -------
    str
        A built-in's readable name, or the display name a user's own estimator was given.

    Examples
    --------
    >>> display_name("knn"), display_name("OvR logistic")
    ('kNN', 'OvR logistic')
    """
    return CLASSIFIERS[classifier][0] if classifier in CLASSIFIERS else classifier


def _classifier_seed(seed, name):
    """The seed of built-in classifier ``name`` for the study's seed ``seed`` (of the fold,
    ``random_state + f``, or of the calibration): the first 32-bit word of
    ``numpy.random.SeedSequence(seed, spawn_key=tuple(name.encode("utf-8")))``, a stream of
    its own for each classifier."""
    key = tuple(name.encode("utf-8"))
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1)[0])


def _make_classifier(name, params, seed):
    """A fresh classifier for one fold: a built-in one from its parameters (seeded with
    :func:`_classifier_seed` of ``seed`` and ``name`` when it has randomness), or a clone
    of a user's estimator (``params``), whose own ``random_state``, if any, is kept as the
    user set it."""
    if name not in CLASSIFIERS:
        from sklearn.base import clone
        return clone(params.load() if isinstance(params, _Shipped) else params)
    _, cls, _ = CLASSIFIERS[name]
    if "random_state" in cls._param_names():
        params = {**params, "random_state": _classifier_seed(seed, name)}
    return cls(**params)


class _Unusable(ValueError):
    """An estimator's beliefs that a study cannot rank: their shape or classes."""


def _beliefs(model, X, n_labels, name):
    """The (n_documents, n_labels) belief matrix of a fitted classifier: its
    ``decision_function``, else its ``predict_proba``. That is one (n_documents, n_labels)
    matrix, or scikit-learn's multi-output list of one (n_documents, n_classes) array per
    label (:func:`_positive_columns`), or for a one-label data set its single
    (n_documents, n_classes) array, read the same way."""
    method = "decision_function" if hasattr(model, "decision_function") else "predict_proba"
    scores = getattr(model, method)(X)
    if isinstance(scores, list):  # scikit-learn's multi-output predict_proba
        scores = _positive_columns(model, scores, X.shape[0], n_labels, name)
    elif method == "predict_proba" and n_labels == 1 and np.ndim(scores) == 2 \
            and np.shape(scores)[1] > 1:  # one label: scikit-learn gives one class array
        scores = _positive_columns(model, [scores], X.shape[0], 1, name)
    scores = scores.toarray() if hasattr(scores, "toarray") else np.asarray(scores)
    expected = (X.shape[0], n_labels)
    if scores.shape != expected:
        raise _Unusable(f"classifier {name!r}: {method} returned shape {scores.shape}, "
                        f"expected {expected} (documents x labels) beliefs")
    return scores


def _positive_columns(model, per_label, n_documents, n_labels, name):
    """The beliefs in scikit-learn's multi-output ``predict_proba`` (a list of one
    (n_documents, n_classes) array per label, classes in the order of the label's
    ``classes_``): per label, the column of class 1; zeros where class 1 was not among the
    label's training values (a label absent from the training fold)."""
    if len(per_label) != n_labels:
        raise _Unusable(f"classifier {name!r}: predict_proba returned a list of "
                        f"{len(per_label)} per-label arrays, expected {n_labels} (one per "
                        "label)")
    classes = getattr(model, "classes_", None)  # a list of arrays when multi-output
    if n_labels == 1 and isinstance(classes, np.ndarray) and classes.ndim == 1:
        classes = [classes]  # one output: one array of classes
    if classes is None and hasattr(model, "estimators_"):  # a per-label meta-estimator
        classes = [getattr(e, "classes_", None) for e in model.estimators_]
    if not isinstance(classes, list) or len(classes) != n_labels or \
            any(c is None for c in classes):
        raise _Unusable(f"classifier {name!r}: predict_proba returned per-label arrays but "
                        "the estimator has no classes_ per label, which tells each array's "
                        "class-1 column")
    columns = np.zeros((n_documents, n_labels))
    for j, (proba, labels) in enumerate(zip(per_label, classes)):
        proba, labels = np.asarray(proba), np.asarray(labels)
        if proba.shape != (n_documents, labels.size) or not np.isin(labels, (0, 1)).all():
            raise _Unusable(f"classifier {name!r}: predict_proba of label {j} has shape "
                            f"{proba.shape} for classes {labels.tolist()}, expected "
                            f"({n_documents}, n_classes) for classes among 0 and 1")
        ones = np.flatnonzero(labels == 1)
        if ones.size:
            columns[:, j] = proba[:, ones[0]]
    return columns


def _check_estimator(name, estimator):
    if not isinstance(name, str) or not name:
        raise TypeError(f"an own classifier is a (display_name, estimator) pair with a "
                        f"non-empty str name, got name {name!r}")
    if name in CLASSIFIERS or name in {v[0] for v in CLASSIFIERS.values()}:
        raise ValueError(f"display name {name!r} is taken by a built-in classifier; "
                         "choose another")
    if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
        raise TypeError(f"classifier {name!r}: {type(estimator).__name__} is not a "
                        "scikit-learn estimator (needs fit and get_params)")
    if not (hasattr(estimator, "decision_function") or hasattr(estimator, "predict_proba")):
        raise TypeError(f"classifier {name!r}: {type(estimator).__name__} has neither "
                        "decision_function nor predict_proba, so it gives no beliefs to "
                        "rank")


def _estimator_params(estimator):
    """The recorded parameters of a user's estimator: its one-line repr."""
    return {"estimator": " ".join(repr(estimator).split())}


def _recorded_params(classifiers, config):
    """Per classifier, the parameters a study records (:attr:`StudyResult.params`): a
    built-in's parameters, an own estimator's repr (:func:`_estimator_params`)."""
    return {c: config[c] if c in CLASSIFIERS else _estimator_params(config[c])
            for c in classifiers}


def _parameter_record(classifiers, params, ties, folds, random_state, cutoff,
                      calibrated=()):
    """What determines a study's results besides its data set, as ``results.json`` holds
    it (JSON-native): the classifiers, ranking types, folds, seed, cutoff and recorded
    parameters; for the classifiers ``calibrated``, without the parameters calibration
    chooses (:data:`CALIBRATION_GRIDS`). Compares a finished study (:func:`_record_of`)
    with one about to run (:func:`_planned_record`)."""
    params = {c: {k: v for k, v in p.items()
                  if not (c in calibrated and k in CALIBRATION_GRIDS.get(c, {}))}
              for c, p in params.items()}
    ties = (ties,) if isinstance(ties, str) else ties
    return json.loads(json.dumps({"classifiers": list(classifiers), "ties": list(ties),
                                  "folds": _plain(folds), "random_state": _plain(random_state),
                                  "cutoff": _plain(cutoff), "params": params}))


def _record_of(result):
    """The parameter record (:func:`_parameter_record`) of a finished study."""
    return _parameter_record(result.classifiers, result.params, result.ties, result.folds,
                             result.random_state, result.cutoff,
                             calibrated=[c for c, tried in result.calibration.items() if tried])


def check_classifiers(classifiers, params):
    """Check the classifiers of a study and their parameter overrides.

    Returns ``(keys, config)``: the classifiers' keys (built-in names, or the display
    names of own estimators) and per key the built-in parameters or the estimator."""
    if isinstance(classifiers, str):
        raise TypeError(f"classifiers must be a sequence of names, got the str "
                        f"{classifiers!r}")
    if isinstance(classifiers, tuple) and len(classifiers) == 2 and \
            isinstance(classifiers[0], str) and hasattr(classifiers[1], "fit"):
        raise TypeError("classifiers must be a sequence of names and (display_name, "
                        "estimator) pairs; wrap a single pair in a list")
    keys, config = [], {}
    for item in classifiers:
        if isinstance(item, str):
            check_option("classifier", item, tuple(CLASSIFIERS))
            key, value = item, None
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            key, value = item
            _check_estimator(key, value)
        else:
            raise TypeError(f"a classifier is a built-in name ({', '.join(CLASSIFIERS)}) or a "
                            f"(display_name, estimator) pair, got {item!r}")
        if key in config or display_name(key) in {display_name(k) for k in keys}:
            raise ValueError(f"classifier {display_name(key)!r} named twice")
        keys.append(key)
        config[key] = value
    if not keys:
        raise ValueError("no classifier given")
    params = {} if params is None else params
    if not isinstance(params, dict) or not all(isinstance(p, dict) for p in params.values()):
        raise TypeError(f"params must be a dict of classifier name -> dict of parameters, got "
                        f"{params!r:.100}")
    unknown = set(params) - set(keys)
    if unknown:
        raise ValueError(f"parameters given for classifiers not in the study: {sorted(unknown)}")
    own = sorted(set(params) - set(CLASSIFIERS))
    if own:
        raise ValueError(f"parameters given for own estimators {own}: set them on the "
                         "estimator instead")
    for c, given in params.items():
        valid = CLASSIFIERS[c][1]._param_names()
        if not set(given) <= set(valid) - {"random_state"}:
            raise ValueError(f"unknown {c} parameters {sorted(map(str, set(given) - set(valid)))}"
                             f"; valid: {[v for v in valid if v != 'random_state']}")
    for c in keys:
        if c in CLASSIFIERS:
            # NumPy scalars as the Python numbers they hold, as results.json records them
            given = {k: v.item() if isinstance(v, np.generic) else v
                     for k, v in params.get(c, {}).items()}
            config[c] = {**CLASSIFIERS[c][2], **given}
    return tuple(keys), config


class _Shipped:
    """A user's estimator on its way to a Dask cluster, as cloudpickle's bytes, unpickled
    by the task that uses it (:func:`_make_classifier`). Cloudpickle sends a class from a
    module registered with ``cloudpickle.register_pickle_by_value`` (one the workers cannot
    import) by value; as bytes, the estimator also passes a scheduler in this process,
    where Dask would pickle it again with the standard pickle, which refers to a class by
    its module's name."""

    def __init__(self, estimator):
        import cloudpickle  # type: ignore[import-untyped]  # a dependency of Dask's
        self.payload = cloudpickle.dumps(estimator)

    def load(self):
        import cloudpickle
        return cloudpickle.loads(self.payload)


def _dataset_record(dataset):
    """What a study records of its data set (``StudyResult.dataset``): its name, its
    :meth:`~fastrank.datasets.Dataset.summary` and ``sha256``, the SHA-256 of its contents
    (:func:`_data_digest`) -- the identity :func:`fastrank.study.compare.run_benchmark` checks
    before it resumes from saved results."""
    summary = {k: _plain(v) for k, v in dataset.summary().items()}
    return {"name": dataset.name, **summary, "sha256": _data_digest(dataset)}


def _data_digest(dataset, chunk=1 << 20):
    """SHA-256 (hex) of a data set's contents, independent of how it is stored: the label
    matrix (shape, then its 0/1 bytes row by row), the features as canonical CSR (shape,
    row pointers and column indices as little-endian int64, values as little-endian
    float64) and the raw texts (UTF-8, each after its length). Arrays are converted
    ``chunk`` entries at a time: no copy of the data set is made (but the CSR of a dense
    ``X``, that of a Dataset made with ``dense=True``)."""
    digest = hashlib.sha256()

    def add(a, dtype):
        for lo in range(0, a.size, chunk):
            digest.update(np.ascontiguousarray(a[lo:lo + chunk], dtype=dtype).data)

    digest.update(b"Y")
    add(np.asarray(dataset.Y.shape), "<i8")
    add(dataset.Y.reshape(-1), np.uint8)
    if dataset.X is not None:
        X = sp.csr_matrix(dataset.X) if isinstance(dataset.X, np.ndarray) else dataset.X
        digest.update(b"X")
        for part, dtype in ((np.asarray(X.shape), "<i8"), (X.indptr, "<i8"),
                            (X.indices, "<i8"), (X.data, "<f8")):
            add(part, dtype)
    if dataset.texts is not None:
        digest.update(b"T")
        for text in dataset.texts:
            raw = text.encode("utf-8", "surrogatepass")
            digest.update(len(raw).to_bytes(8, "little") + raw)
    return digest.hexdigest()


def _plain(v):
    """A JSON-native copy of a summary value (NumPy scalars and tuples become plain)."""
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    return v
