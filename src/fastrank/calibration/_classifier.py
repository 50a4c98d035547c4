"""The calibrated classifier: a fastrank classifier whose beliefs are calibrated per label
(:class:`CalibratedClassifier`)."""
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .._base import MultiLabelEstimator
from .._typing import LabelsLike, MatrixLike, PathLikeStr, RandomStateLike
from .._validation import check_option, check_random_state
from ._calibrators import Isotonic, Platt


#: The ``method`` options of :class:`CalibratedClassifier`.
CALIBRATION_METHODS = ("isotonic", "platt")


def _make_calibrator(method):
    return Isotonic() if method == "isotonic" else Platt()


def _beliefs(estimator, X):
    F = estimator.decision_function(X)
    return F.toarray() if sp.issparse(F) else np.asarray(F)


class CalibratedClassifier(MultiLabelEstimator):
    """Calibrate a fastrank classifier's beliefs per label into probabilities.

    ``estimator`` is any classifier with ``fit(X, Y)`` and ``decision_function(X)`` (an
    (n, q) belief matrix) that ``sklearn.base.clone`` can copy (the instance passed in is
    not modified); its parameters are reachable as ``estimator__<name>`` (``GridSearchCV``).

    ``predict_proba`` is one (n_documents, n_labels) array, column ``c`` the calibrated
    probability that label ``c`` applies (scikit-learn's multi-label format of
    ``MLPClassifier``). ``score(X, Y)`` is the tie-aware average precision of those
    probabilities (see :meth:`fastrank._base.MultiLabelEstimator.score`).

    Parameters
    ----------
    estimator : classifier
        The classifier whose beliefs are calibrated (e.g. :class:`fastrank.KNN`).
    method : {"isotonic", "platt"}, default "isotonic"
        :class:`Isotonic` or :class:`Platt`, one per label.
    cv : int >= 2 or "holdout", default 5
        int k: out-of-fold beliefs from k-fold cross-validation (each fold scored by a copy
        trained on the other folds) fit the calibrators; the final classifier is then
        trained on all the data. "holdout": a copy is trained on a random
        ``1 - validation_size`` part and the calibrators fit on its beliefs for the rest;
        that copy is the final classifier.
    validation_size : float in (0, 1), default 0.25
        Held-out fraction for ``cv="holdout"``.
    random_state : None, int or numpy.random.Generator, default None
        Shuffling of the folds / the split.

    Attributes
    ----------
    estimator_ : classifier
        The final classifier.
    calibrator_ : Isotonic or Platt
        The calibrators, fitted on all labels.
    classes_, n_features_in_, feature_names_in_
        As for :class:`fastrank.KNN`.

    References
    ----------
    .. [1] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em
       aprendizado de máquina*, PhD thesis, ICMC-USP, 2008, ch. 5.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import KNN, datasets
    >>> from fastrank.calibration import CalibratedClassifier, brier_score
    >>> data = datasets.load("yeast")
    >>> train, test = data.take(range(2000)), data.take(range(2000, data.n_documents))
    >>> knn = KNN(k=10)
    >>> calibrated = CalibratedClassifier(knn, cv=3, random_state=0).fit(train.X, train.Y)
    >>> round(brier_score(test.Y, calibrated.predict_proba(test.X)), 4)
    0.1495
    >>> round(brier_score(test.Y, knn.fit(train.X, train.Y).decision_function(test.X)), 4)
    0.1953
    """

    def __init__(self, estimator: Any, method: Literal["isotonic", "platt"] = "isotonic",
                 cv: int | Literal["holdout"] = 5, validation_size: float = 0.25,
                 random_state: RandomStateLike = None) -> None:
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.validation_size = validation_size
        self.random_state = random_state

    def fit(self, X: MatrixLike, Y: LabelsLike) -> "CalibratedClassifier":
        """Fit the classifier and the per-label calibrators (see the class docstring).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Training documents.
        Y : 0/1 array (dense or sparse) of shape (n_documents, n_labels), or label sets
            Their labels.

        Returns
        -------
        CalibratedClassifier
            The fitted model.

        Raises
        ------
        ValueError
            An unknown ``method``, a ``cv`` that is not "holdout" or an int in
            [2, n_documents], a ``validation_size`` outside (0, 1) or leaving an empty part,
            invalid ``X`` or ``Y``.
        TypeError
            An ``estimator`` without ``fit`` or ``decision_function``.
        """
        check_option("method", self.method, CALIBRATION_METHODS)
        for method in ("fit", "decision_function"):  # before anything is fitted
            if not callable(getattr(self.estimator, method, None)):
                raise TypeError(f"estimator must have fit and decision_function; "
                                f"{type(self.estimator).__name__} has no {method}")
        X, Y = self._check_fit_input(X, Y)
        n = X.shape[0]
        order = check_random_state(self.random_state).permutation(n)
        if self.cv == "holdout":
            if not 0.0 < self.validation_size < 1.0:
                raise ValueError(f"validation_size must be in (0, 1), got {self.validation_size}")
            n_val = int(round(self.validation_size * n))
            if n_val < 1 or n_val >= n:
                raise ValueError(f"validation_size={self.validation_size} leaves an empty part "
                                 f"of {n} documents")
            val, train = order[:n_val], order[n_val:]
            self.estimator_ = clone(self.estimator).fit(X[train], Y[train])
            calib_scores, calib_y = _beliefs(self.estimator_, X[val]), Y[val]
        else:
            if isinstance(self.cv, bool) or not isinstance(self.cv, (int, np.integer)) \
                    or not 2 <= self.cv <= n:
                raise ValueError(f"cv must be 'holdout' or an int in [2, n_samples={n}], "
                                 f"got {self.cv!r}")
            calib_scores = np.empty(Y.shape)
            for fold in np.array_split(order, self.cv):
                rest = np.setdiff1d(order, fold, assume_unique=True)
                model = clone(self.estimator).fit(X[rest], Y[rest])
                calib_scores[fold] = _beliefs(model, X[fold])
            calib_y = Y
            self.estimator_ = clone(self.estimator).fit(X, Y)
        self.calibrator_ = _make_calibrator(self.method).fit(calib_scores, calib_y)
        return self

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Calibrated probability of every label (also :meth:`decision_function`).

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray of float64, shape (n_documents, n_labels)

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            Invalid ``X``.
        """
        X = self._check_predict_input(X)
        return self.calibrator_.transform(_beliefs(self.estimator_, X))

    decision_function = predict_proba

    def predict(self, X: MatrixLike) -> np.ndarray:
        """Predicted label sets: the labels of calibrated probability >= 0.5.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (n_documents, n_features)
            Documents to classify.

        Returns
        -------
        ndarray, shape (n_documents, n_labels)
            Of the training target's dtype (uint8 when it was label sets).

        Raises
        ------
        NotFittedError
            The model is not fitted.
        ValueError
            Invalid ``X``.
        """
        return self._as_target_dtype(self.predict_proba(X) >= 0.5)

    def save(self, path: PathLikeStr) -> None:
        """Not supported: the wrapped estimator is arbitrary (any scikit-learn classifier),
        which a pickle-free model file cannot hold. Refit from the data, or save the fitted
        ``estimator_`` (a fastrank classifier) and refit the calibrator on its beliefs.

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError("CalibratedClassifier cannot be saved to a model file (it wraps an "
                        "arbitrary estimator, which a pickle-free file cannot hold); save its "
                        "estimator_ instead")

    @classmethod
    def load(cls, path: PathLikeStr) -> "CalibratedClassifier":
        """Not supported (see :meth:`save`).

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError("CalibratedClassifier cannot be loaded from a model file (it is never "
                        "saved to one); load its estimator_'s class instead")
