"""Calibration: from beliefs (vote fractions, cosine maxima, ...) to probabilities
(matsubara2008 ch. 5).

* :class:`Isotonic` -- pool-adjacent-violators isotonic regression, tied scores pooled
  first; its blocks are the segments of the ROC convex hull (ROCCH == PAV).
* :class:`Platt` -- sigmoid fit by maximum likelihood (eq. 5.3-5.5).
* :class:`CalibratedClassifier` -- wraps a fastrank classifier (``fit(X, Y)`` /
  ``decision_function(X)``) and calibrates each label on held-out or out-of-fold beliefs.
* :func:`brier_score` (eq. 5.1), :func:`brier_decomposition` (Theorem 5.1),
  :func:`log_loss` (eq. 5.2).

Calibrators accept one binary problem (1-D scores and 0/1 truth) or a belief matrix
(n, q) with its truth matrix, then fit one map per label (column). Sparse beliefs are
densified (calibrated probabilities of zero beliefs are not zero).
"""
from ._calibrators import Isotonic, Platt
from ._classifier import CALIBRATION_METHODS, CalibratedClassifier
from ._scores import BrierDecomposition, brier_decomposition, brier_score, log_loss

__all__ = ["CALIBRATION_METHODS", "BrierDecomposition", "CalibratedClassifier", "Isotonic",
           "Platt", "brier_decomposition", "brier_score", "log_loss"]
