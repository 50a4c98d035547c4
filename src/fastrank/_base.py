"""What every fastrank estimator shares: scikit-learn's parameter protocol, fit-input
checks, and saving to one versioned ``.npz`` file (arrays + JSON metadata, no pickle)."""
import inspect
import json

import numpy as np
import scipy.sparse as sp

from ._atomic import atomic_file
from ._npzfile import MAX_HEADER_BYTES, ModelFileError, read_npz
from ._validation import MAX_COLUMNS, check_csr, check_features, check_truth, is_label_sets, \
    label_sets_to_matrix
from ._version import __version__

FORMAT_VERSION = 1
CSR_PARTS = ("data", "indices", "indptr", "shape")


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit`` (a ValueError and an AttributeError, like
    scikit-learn's exception of the same name)."""




class MultiLabelEstimator:
    """Base class: ``get_params``/``set_params`` from ``__init__``'s signature (so that
    ``sklearn.base.clone`` works), input checks, and :meth:`save` / :meth:`load`.

    Subclasses list their fitted arrays in ``_fitted_arrays`` (attribute names ending in
    ``_``) and may keep JSON-serialisable fitted values in ``_fitted_meta``.
    """

    _fitted_arrays = ()
    _fitted_meta = ()

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}; "
                                 f"valid: {', '.join(valid)}")
            setattr(self, key, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags, InputTags, ClassifierTags
        return Tags(estimator_type="classifier",
                    target_tags=TargetTags(required=True, multi_output=True,
                                           single_output=False),
                    classifier_tags=ClassifierTags(multi_class=False, multi_label=True),
                    input_tags=InputTags(sparse=True))

    # ---- input --------------------------------------------------------------------------

    @staticmethod
    def _check_X(X, name="X"):
        """Features as CSR or C-contiguous float64/float32, finite, 2-D, non-empty."""
        return check_features(X, name)

    def _check_fit_input(self, X, Y):
        """Validate training data; sets ``n_features_in_``, ``classes_``; returns (X, Y)
        with Y a C-contiguous uint8 indicator matrix. Y may be a list of label sets: then the
        labels are the sorted union of the sets' members, kept in ``classes_``."""
        X = self._check_X(X)
        if is_label_sets(Y):
            classes = sorted({label for labels in Y for label in labels})
            index = {label: i for i, label in enumerate(classes)}
            Y = label_sets_to_matrix([[index[lab] for lab in labels] for labels in Y],
                                     len(classes), "Y")
            self.classes_ = np.asarray(classes)
        else:
            Y = check_truth(Y, name="Y")
            self.classes_ = np.arange(Y.shape[1])
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} documents but Y has {Y.shape[0]}")
        self.n_features_in_ = X.shape[1]
        return X, Y

    def _check_predict_input(self, X):
        if not hasattr(self, "n_features_in_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X = self._check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.n_features_in_}")
        return X

    # ---- persistence --------------------------------------------------------------------

    def save(self, path):
        """Write the fitted model to ``path`` (an ``.npz``: arrays plus a JSON header),
        atomically: an error while writing leaves ``path`` as it was."""
        if not hasattr(self, "n_features_in_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; nothing to save")
        params = self.get_params()
        try:
            json.dumps(params)
        except TypeError:
            raise TypeError(f"cannot save a {type(self).__name__} whose parameters are not plain "
                            f"values ({params}); e.g. give random_state as an int") from None
        header = {"format": "fastrank-model", "format_version": FORMAT_VERSION,
                  "fastrank_version": __version__, "estimator": type(self).__name__,
                  "params": params, "n_features_in_": int(self.n_features_in_),
                  "meta": {k: getattr(self, k) for k in self._fitted_meta}}
        arrays = {"classes_": self.classes_}
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
            np.savez(f, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                     **arrays)

    @classmethod
    def _member_names(cls):
        names = {"__header__", "classes_"}
        for name in cls._fitted_arrays:
            names |= {name, *(f"{name}.csr.{part}" for part in CSR_PARTS)}
        return names

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`.

        The file is checked before it is used: its zip directory and every array header
        first (no member may claim more bytes than it holds, nothing compressed is inflated,
        no pickles), then the JSON header, then every array against the others
        (shapes, dtypes, index ranges) — the compiled kernels trust them. Arrays are
        memory-mapped read-only, not copied: loading costs no memory beyond the pages the
        model touches. Raises ValueError naming the problem for a corrupt or foreign file.
        """
        try:
            files = read_npz(path)
        except ModelFileError as exc:
            raise ValueError(f"{path}: not a fastrank model file ({exc})") from None
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the model file ({exc})") from None
        header = _check_header(path, files.pop("__header__", None), cls)
        stray = set(files) - cls._member_names()
        if stray:
            raise ValueError(f"{path}: corrupt {cls.__name__} model file: unexpected arrays "
                             f"{sorted(stray)}")
        model = cls(**header["params"])
        model.n_features_in_ = header["n_features_in_"]
        for k, v in header["meta"].items():
            setattr(model, k, v)
        if "classes_" not in files or files["classes_"].ndim != 1 \
                or files["classes_"].dtype.kind not in "biuUS":
            raise ValueError(f"{path}: corrupt model file: classes_ is not a 1-D array of "
                             "numbers or strings")
        model.classes_ = files.pop("classes_")
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
        problem = model._loaded_problem()
        if problem:
            raise ValueError(f"{path}: corrupt {cls.__name__} model file: {problem}")
        return model

    def _loaded_problem(self):
        """What makes a loaded model's arrays unusable by its kernels (a str), or None; the
        compiled kernels trust shapes and indices, so a model class whose arrays can be
        inconsistent checks them here."""
        return None


def _check_header(path, raw, cls):
    """The model file's JSON header as a dict, checked field by field."""
    def bad(what):
        return ValueError(f"{path}: not a fastrank model file ({what})")
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > MAX_HEADER_BYTES:
        raise bad("no valid header")
    try:
        header = json.loads(raw.tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise bad("no valid header") from None
    if not isinstance(header, dict) or header.get("format") != "fastrank-model":
        raise bad("no fastrank header")
    if header.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: model format version {header.get('format_version')!r} "
                         f"is not supported (expected {FORMAT_VERSION})")
    if header.get("estimator") != cls.__name__:
        raise ValueError(f"{path}: holds a {str(header.get('estimator'))[:80]}, not a "
                         f"{cls.__name__}")
    params, meta, n_in = header.get("params"), header.get("meta"), header.get("n_features_in_")
    if not isinstance(params, dict) or not set(params) <= set(cls._param_names()):
        raise bad(f"parameters must be a subset of {cls._param_names()}")
    if not isinstance(meta, dict) or set(meta) != set(cls._fitted_meta):
        raise bad(f"fitted values must be {list(cls._fitted_meta)}")
    if isinstance(n_in, bool) or not isinstance(n_in, int) or n_in < 1:
        raise bad(f"n_features_in_ must be a positive int, got {n_in!r}")
    return header


def _csr_member(path, name, parts):
    shape = parts["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or shape.min() < 0 \
            or shape.max() > MAX_COLUMNS:
        raise ValueError(f"{path}: corrupt model file: {name} has no valid sparse shape")
    try:
        m = sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]),
                          shape=tuple(int(v) for v in shape), copy=False)
        return check_csr(m, name)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(f"{path}: corrupt model file: {name} is not a valid CSR matrix "
                         f"({exc})") from None
