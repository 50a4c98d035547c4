"""What every fastrank estimator shares: scikit-learn's estimator protocol (``BaseEstimator``
parameters, tags, fitted checks, feature names), fastrank's input checks, a ranking
``score``, and saving to one versioned ``.npz`` file (arrays + JSON metadata, no pickle)."""
import json
from os import PathLike
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._arrays import as_numpy
from ._atomic import atomic_file
from ._npzfile import MAX_HEADER_BYTES, ModelFileError, read_member, read_npz, write_npz
from ._validation import MAX_COLUMNS, check_csr, check_features, check_truth, is_label_sets, \
    label_sets_to_matrix, object_to_float
from ._version import __version__

__all__ = ["MultiLabelEstimator", "NotFittedError", "load"]

FORMAT_VERSION = 1
CSR_PARTS = ("data", "indices", "indptr", "shape")


class MultiLabelEstimator(ClassifierMixin, BaseEstimator):
    """Base class of fastrank's multi-label classifiers: a scikit-learn classifier
    (``get_params``/``set_params``/``clone``, tags declaring multi-label-only targets and
    sparse input, ``n_features_in_`` and ``feature_names_in_``, scikit-learn's
    ``NotFittedError``), fastrank's input checks, a ranking :meth:`score`, and
    :meth:`save` / :meth:`load`.

    ``fit`` takes no ``sample_weight``: the classifiers of Melotti (2009) keep their training
    documents unweighted (see the guide, "Classifiers").

    Subclasses list their fitted arrays in ``_fitted_arrays`` (attribute names ending in
    ``_``) and may keep JSON-serialisable fitted values in ``_fitted_meta``.
    """

    _fitted_arrays: tuple[str, ...] = ()
    _fitted_meta: tuple[str, ...] = ()

    @classmethod
    def _param_names(cls) -> list[str]:
        """The constructor's parameter names, sorted (scikit-learn's rule)."""
        return cls._get_param_names()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = True
        return tags

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Average precision of the beliefs ``decision_function(X)`` against the truth ``y``,
        averaged over documents: fastrank's tie-aware average precision*
        (:func:`fastrank.metrics.average_precision`, melotti2009 eq. 4.9-4.10; higher is
        better, 1 for a document whose relevant labels are all ranked first).

        A multi-label ranking is judged by where the relevant labels rank, so this ranking
        metric is the default score (``cross_val_score``, ``GridSearchCV`` and
        ``Pipeline.score`` without ``scoring``), not scikit-learn's subset accuracy, which
        gives a document credit only when its predicted set is exactly right.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
        y : 0/1 array-like (n_documents, n_labels) or list of label sets
            Label sets may name only labels in ``classes_``.
        sample_weight : array-like (n_documents,), optional
            Weights of the documents in the average.

        Returns
        -------
        float in [0, 1]

        Examples
        --------
        >>> from fastrank import KNN, datasets
        >>> data = datasets.load("yeast")
        >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
        >>> round(KNN(k=10).fit(train.X, train.Y).score(test.X, test.Y), 3)
        0.595
        """
        from .metrics import average_precision
        return float(average_precision(self._truth(y), self.decision_function(X),
                                       sample_weight=sample_weight))

    # ---- input --------------------------------------------------------------------------

    def _validate_X(self, X: Any, reset: bool):
        """X checked by :func:`check_features` (shape and complex values first, in
        scikit-learn's wording); ``feature_names_in_`` set (``reset``) or compared
        (scikit-learn's ``validate_data``); unless ``reset``, its number of features must
        be ``n_features_in_``."""
        # an ndarray or a SciPy matrix has no feature names: comparing them with a model
        # fitted without names is a no-op, skipped (its dataframe probing costs ~10-20 us)
        if reset or hasattr(self, "feature_names_in_") \
                or not (isinstance(X, np.ndarray) or sp.issparse(X)):
            validate_data(self, X, skip_check_array=True, ensure_2d=False, reset=reset)
        if not sp.issparse(X):
            X = _numeric(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_documents, n_features), got {X.ndim}-D; "
                             "Reshape your data (X.reshape(1, -1) for one document)")
        for count, what in zip(X.shape, ("sample", "feature")):
            if count == 0:
                raise ValueError(f"Found array with 0 {what}(s) (shape={X.shape}) while a "
                                 f"minimum of 1 is required by {type(self).__name__}")
        if X.dtype.kind == "c":
            raise ValueError("Complex data not supported: X must hold real numbers")
        X = check_features(X)
        if not reset and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        return X

    def _check_fit_input(self, X: Any, Y: Any):
        """Validate training data; sets ``n_features_in_``, ``feature_names_in_`` (for a
        DataFrame), ``classes_`` and the dtype that ``predict`` returns (``Y``'s, uint8 for
        label sets); returns (X, Y) with Y a C-contiguous uint8 indicator matrix. Y may be a
        list of label sets: then the labels are the sorted union of the sets' members, kept
        in ``classes_``. Object arrays of numbers (X or Y) are converted to float64, as
        scikit-learn's ``check_array`` does."""
        if Y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target "
                             "y is None")
        X = self._validate_X(X, reset=True)
        if is_label_sets(Y):
            names = sorted({label for labels in Y for label in labels})
            index = {label: i for i, label in enumerate(names)}
            Y = label_sets_to_matrix([[index[lab] for lab in labels] for labels in Y],
                                     len(names), "Y")
            classes, target_dtype = np.asarray(names), np.dtype(np.uint8)
        else:
            Y = Y if sp.issparse(Y) else _numeric(Y, "Y")
            target_dtype = Y.dtype
            Y = _multilabel_truth(Y)
            classes = np.arange(Y.shape[1])
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} documents but Y has {Y.shape[0]}")
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self._target_dtype = target_dtype
        return X, Y

    def _predict_dtype(self):
        """The training target's dtype, which ``predict`` returns (uint8 for label sets, and
        for models fitted before it was kept)."""
        return np.dtype(getattr(self, "_target_dtype", np.uint8))

    def _as_target_dtype(self, assigned):
        """The 0/1 predictions ``assigned`` in :meth:`_predict_dtype`."""
        return assigned.astype(self._predict_dtype(), copy=False)

    def _check_predict_input(self, X: Any):
        check_is_fitted(self)
        return self._validate_X(X, reset=False)

    def _truth(self, y: Any) -> np.ndarray:
        """Truth for the fitted labels as a uint8 0/1 matrix (n_documents, n_labels); label
        sets name labels of ``classes_``."""
        check_is_fitted(self)
        if not is_label_sets(y):
            return check_truth(y if sp.issparse(y) else _numeric(y, "y"),
                               n_labels=self.classes_.shape[0], name="y")
        index = {label: i for i, label in enumerate(self.classes_.tolist())}
        unknown = {label for labels in y for label in labels} - set(index)
        if unknown:
            raise ValueError(f"y has labels not seen in fit: {sorted(map(str, unknown))[:5]}")
        return label_sets_to_matrix([[index[lab] for lab in labels] for labels in y],
                                    len(index), "y")

    # ---- persistence --------------------------------------------------------------------

    def save(self, path: str | PathLike) -> None:
        """Write the fitted model to ``path`` (an ``.npz``: arrays plus a JSON header),
        atomically: an error while writing leaves ``path`` as it was. The fitted arrays,
        ``classes_``, ``n_features_in_`` and ``feature_names_in_`` (when fitted on a
        DataFrame) are saved.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.

        Raises
        ------
        NotFittedError
            The model is not fitted.
        TypeError
            A parameter is not a plain JSON value (e.g. a Generator ``random_state``).

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from fastrank import MLkNN, datasets
        >>> data = datasets.load("yeast")
        >>> model = MLkNN(k=10).fit(data.X, data.Y)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     model.save(os.path.join(tmp, "mlknn.npz"))
        ...     loaded = MLkNN.load(os.path.join(tmp, "mlknn.npz"))
        ...     same = np.array_equal(loaded.predict_proba(data.X[:50]),
        ...                           model.predict_proba(data.X[:50]))
        >>> loaded.k, same
        (10, True)
        """
        check_is_fitted(self)
        params = self.get_params()
        try:
            json.dumps(params)
        except TypeError:
            raise TypeError(f"cannot save a {type(self).__name__} whose parameters are not plain "
                            f"values ({params}); e.g. give random_state as an int") from None
        header = {"format": "fastrank-model", "format_version": FORMAT_VERSION,
                  "fastrank_version": __version__, "estimator": type(self).__name__,
                  "params": params, "n_features_in_": int(self.n_features_in_),
                  "target_dtype": self._predict_dtype().str,
                  "meta": {k: getattr(self, k) for k in self._fitted_meta}}
        arrays: dict[str, Any] = {"classes_": self.classes_}
        if hasattr(self, "feature_names_in_"):
            arrays["feature_names_in_"] = self.feature_names_in_.astype(str)
        for name in self._fitted_arrays:
            value = getattr(self, name)
            if sp.issparse(value):
                value = sp.csr_matrix(value)
                for part, array in zip(CSR_PARTS, (value.data, value.indices, value.indptr,
                                                   np.asarray(value.shape))):
                    arrays[f"{name}.csr.{part}"] = array
            else:
                arrays[name] = value
        if any(a.dtype == object for a in map(np.asarray, arrays.values())):
            raise TypeError("only numeric/string arrays can be saved (no pickled objects)")
        with atomic_file(path) as f:
            write_npz(f, {"__header__": np.frombuffer(json.dumps(header).encode(),
                                                      dtype=np.uint8), **arrays})

    @classmethod
    def _member_names(cls):
        names = {"__header__", "classes_", "feature_names_in_"}
        for name in cls._fitted_arrays:
            names |= {name, *(f"{name}.csr.{part}" for part in CSR_PARTS)}
        return names

    @classmethod
    def load(cls, path: str | PathLike) -> "MultiLabelEstimator":
        """Read a model written by :meth:`save`.

        The file is checked before it is used: its zip directory, every member's CRC-32 and
        every array header first (no member may claim more bytes than it holds or overlap
        another, nothing compressed is inflated, no pickles; a damaged byte is refused),
        then the JSON header, then the parameters and fitted values as ``fit`` checks them
        (``classes_`` sorted and distinct, ``random_state``) and every array against the
        others (shapes, dtypes, C order, values, the whole sparse structure, index ranges)
        — the compiled kernels trust them. Arrays are memory-mapped read-only, not copied:
        loading reads the file once to verify it, through a small buffer, and costs no
        memory beyond the pages the model touches. Raises ValueError naming the file and
        the problem for a corrupt or foreign file.
        """
        files = _model_file(path, read_npz)
        header = _check_header(path, files.pop("__header__", None), cls)
        for name, array in files.items():  # save writes C order; the kernels need it
            if not array.flags.c_contiguous:
                raise ValueError(f"{path}: corrupt model file: array {name!r} is stored in "
                                 "Fortran order")
        stray = set(files) - cls._member_names()
        if stray:
            raise ValueError(f"{path}: corrupt {cls.__name__} model file: unexpected arrays "
                             f"{sorted(stray)}")
        model = cls(**header["params"])
        model.n_features_in_ = header["n_features_in_"]
        model._target_dtype = header["target_dtype"]
        for k, v in header["meta"].items():
            setattr(model, k, v)
        model.classes_ = _check_classes(path, files.pop("classes_", None))
        if "feature_names_in_" in files:
            names = files.pop("feature_names_in_")
            if names.dtype.kind != "U" or names.shape != (model.n_features_in_,):
                raise ValueError(f"{path}: corrupt model file: feature_names_in_ is not one "
                                 "string per feature")
            model.feature_names_in_ = names.astype(object)
        for name in cls._fitted_arrays:
            if name in files:
                setattr(model, name, files.pop(name))
            elif all(f"{name}.csr.{part}" in files for part in CSR_PARTS):
                parts = {part: files.pop(f"{name}.csr.{part}") for part in CSR_PARTS}
                setattr(model, name, _csr_member(path, name, parts))
            else:
                raise ValueError(f"{path}: model file is missing array {name!r} (truncated?)")
        if files:
            raise ValueError(f"{path}: corrupt {cls.__name__} model file: arrays in both "
                             f"dense and sparse form {sorted(files)}")
        try:  # the estimator's own parameter checks raise ValueError/TypeError
            problem = model._loaded_problem()
        except (ValueError, TypeError) as exc:
            problem = str(exc)
        if problem:
            raise ValueError(f"{path}: corrupt {cls.__name__} model file: {problem}")
        return model

    def _loaded_problem(self):
        """What makes a loaded model unusable (a str), or None: its parameters (the checks
        of ``fit``, which may raise ValueError/TypeError), its fitted values and its arrays'
        dtypes, shapes, values and indices -- the compiled kernels trust them, so every
        model class checks here all that its prediction reads."""
        return None


def load(path: str | PathLike) -> MultiLabelEstimator:
    """Read a model file written by the ``save`` of any fastrank classifier: the class its
    header names (:class:`~fastrank.neighbors.KNN`, :class:`~fastrank.neighbors.MLkNN`,
    :class:`~fastrank.wnn.VGRAM` or :class:`~fastrank.wnn.VGRAMCor`) loads it, checked as
    :meth:`MultiLabelEstimator.load` describes.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.

    Returns
    -------
    KNN, MLkNN, VGRAM or VGRAMCor
        The fitted model.

    Raises
    ------
    ValueError
        The file is corrupt, truncated or foreign, or names no class that fastrank saves.

    Examples
    --------
    >>> import os, tempfile
    >>> import fastrank
    >>> data = fastrank.datasets.load("yeast")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     fastrank.MLkNN(k=10).fit(data.X, data.Y).save(os.path.join(tmp, "model.npz"))
    ...     model = fastrank.load(os.path.join(tmp, "model.npz"))
    >>> type(model).__name__, model.k
    ('MLkNN', 10)
    """
    from .neighbors import KNN, MLkNN
    from .wnn import VGRAM, VGRAMCor
    classes = {cls.__name__: cls for cls in (KNN, MLkNN, VGRAM, VGRAMCor)}
    header = _header_json(path, _model_file(path, lambda p: read_member(
        p, "__header__", MAX_HEADER_BYTES + 4096)))  # the array and its .npy header
    name = header.get("estimator")
    if not isinstance(name, str) or name not in classes:
        raise ValueError(f"{path}: holds a {str(name)[:80]}, which no fastrank class loads "
                         f"(model files hold {', '.join(classes)})")
    return classes[name].load(path)


def _model_file(path, read):
    """``read(path)``, its errors as ValueError naming the file."""
    try:
        return read(path)
    except ModelFileError as exc:
        raise ValueError(f"{path}: not a fastrank model file ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the model file ({exc})") from None


def _numeric(a, name):
    """A dense array argument as an ndarray, an object array of numbers converted to
    float64 (scikit-learn's ``check_array`` rule; TypeError for a non-number)."""
    a = as_numpy(a, name)
    return object_to_float(a, name) if a.dtype == object else a


def _multilabel_truth(Y):
    """:func:`check_truth` of a training target; its error names the kind of target given
    (scikit-learn's ``type_of_target``: binary, multiclass, continuous, ...)."""
    try:
        return check_truth(Y, name="Y")
    except ValueError as exc:
        try:
            kind = type_of_target(Y, input_name="Y")
        except (ValueError, TypeError):
            raise exc from None
        raise ValueError(f"{exc} (Y is a {kind} target; fastrank classifiers are "
                         "multi-label)") from None


def _bad_file(path, what):
    return ValueError(f"{path}: not a fastrank model file ({what})")


def _header_json(path, raw):
    """The model file's JSON header (the array ``raw``) as a dict: a fastrank model
    file's, of the supported format version."""
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > MAX_HEADER_BYTES:
        raise _bad_file(path, "no valid header")
    try:
        header = json.loads(raw.tobytes().decode())
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, an integer of 4 300+ digits
        raise _bad_file(path, "no valid header") from None
    if not isinstance(header, dict) or header.get("format") != "fastrank-model":
        raise _bad_file(path, "no fastrank header")
    if header.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: model format version {header.get('format_version')!r} "
                         f"is not supported (expected {FORMAT_VERSION})")
    return header


def _check_header(path, raw, cls):
    """The model file's JSON header as a dict, checked field by field for ``cls``."""
    def bad(what):
        return _bad_file(path, what)
    header = _header_json(path, raw)
    if header.get("estimator") != cls.__name__:
        raise ValueError(f"{path}: holds a {str(header.get('estimator'))[:80]}, not a "
                         f"{cls.__name__}")
    params, meta, n_in = header.get("params"), header.get("meta"), header.get("n_features_in_")
    if not isinstance(params, dict) or not set(params) <= set(cls._param_names()):
        raise bad(f"parameters must be a subset of {cls._param_names()}")
    if not isinstance(meta, dict) or set(meta) != set(cls._fitted_meta):
        raise bad(f"fitted values must be {list(cls._fitted_meta)}")
    if isinstance(n_in, bool) or not isinstance(n_in, int) or not 1 <= n_in <= MAX_COLUMNS:
        raise bad(f"n_features_in_ must be an int from 1 to {MAX_COLUMNS}, got {n_in!r}")
    target = header.get("target_dtype", "|u1")  # older files: their models predicted uint8
    try:
        header["target_dtype"] = np.dtype(target) if isinstance(target, str) else None
    except TypeError:
        header["target_dtype"] = None
    if header["target_dtype"] is None or header["target_dtype"].kind not in "biuf" \
            or header["target_dtype"].str != target:
        raise bad(f"target_dtype must be a NumPy bool, int or float dtype string, got "
                  f"{str(target)[:40]!r}")
    return header


def _check_classes(path, classes):
    """``classes_`` as ``fit`` makes it: a non-empty 1-D array of numbers or strings,
    strictly increasing (the sorted distinct labels, or 0 .. n_labels - 1)."""
    if classes is None or classes.ndim != 1 or classes.size == 0 \
            or classes.dtype.kind not in "biuUS":
        raise ValueError(f"{path}: corrupt model file: classes_ is not a non-empty 1-D "
                         "array of numbers or strings")
    if not np.all(classes[1:] > classes[:-1]):
        raise ValueError(f"{path}: corrupt model file: classes_ is not sorted and distinct "
                         "(fit stores the sorted distinct labels)")
    return classes


def _csr_member(path, name, parts):
    """The CSR matrix of a model's parts, its whole structure checked by
    :func:`check_csr` (indptr of n_rows + 1 entries from 0, non-decreasing, ending at the
    number of stored entries; indices within the columns) -- not by SciPy's constructor,
    which silently drops the entries past ``indptr[-1]``."""
    shape = parts["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or shape.min() < 0 \
            or shape.max() > MAX_COLUMNS:
        raise ValueError(f"{path}: corrupt model file: {name} has no valid sparse shape")
    n_rows, n_columns = (int(v) for v in shape)
    if parts["indptr"].shape != (n_rows + 1,):  # before SciPy allocates n_rows + 1 entries
        raise ValueError(f"{path}: corrupt model file: {name}'s indptr has "
                         f"{parts['indptr'].size} entries for {n_rows} rows")
    m = sp.csr_matrix((n_rows, n_columns))
    m.data, m.indices, m.indptr = parts["data"], parts["indices"], parts["indptr"]
    try:
        return check_csr(m, name)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(f"{path}: corrupt model file: {name} is not a valid CSR matrix "
                         f"({exc})") from None
