"""The tie-aware multi-label metric suite (melotti2009 ch. 4).

* ranking-based, with ``ties="ordinal"|"dense"|"standard"|"modified"|"expected"``:
  :func:`one_error`, :func:`coverage`, :func:`ranking_loss`, :func:`average_precision`,
  :func:`r_precision` (``"expected"``: the exact mean of ``"ordinal"`` over random orders);
* :func:`cutoff`: from beliefs to predicted sets (perfect, threshold, top-k);
* set-based, on a 0/1 prediction: :func:`hamming_loss`, :func:`exact_match`,
  :func:`zero_one_loss`, :func:`accuracy`, :func:`precision`, :func:`recall`,
  :func:`fbeta`, :func:`f1`, :func:`contingency`, :func:`label_problem_rates`;
* :func:`evaluate`: the 19 study metrics under several ranking types, one sort per row;
  :class:`Evaluator`: the same in chunks, with mergeable state (out of core, distributed);
* the top-k metrics of extreme multi-label classification, with exact tie semantics
  (``ties="expected"|"optimistic"|"pessimistic"|"ordinal"|"stable"|"trec"``):
  :func:`evaluate_at_k` (:class:`TopKEvaluator` in chunks), :func:`precision_at_k`,
  :func:`recall_at_k`, :func:`dcg_at_k`, :func:`ndcg_at_k`, the propensity-scored
  :func:`psprecision_at_k`, :func:`psdcg_at_k`, :func:`psndcg_at_k`, and :func:`propensity`.
"""
from ._common import ALL_TIES, TIES
from ._evaluate import Evaluator, evaluate
from ._evaluation import ESTIMATED_KEYS, METRIC_KEYS, Evaluation
from ._ranking_metrics import average_precision, coverage, cutoff, one_error, r_precision, \
    ranking_loss
from ._contingency import Contingency, contingency, label_problem_rates
from ._set_metrics import accuracy, exact_match, f1, fbeta, hamming_loss, precision, recall, \
    zero_one_loss

__all__ = [
    "TIES", "ALL_TIES", "METRIC_KEYS", "ESTIMATED_KEYS", "Evaluation", "Evaluator", "evaluate",
    "cutoff",
    "one_error", "coverage", "ranking_loss", "average_precision", "r_precision",
    "hamming_loss", "exact_match", "zero_one_loss", "accuracy", "precision", "recall",
    "fbeta", "f1", "contingency", "Contingency", "label_problem_rates",
]
from ._roc import AUC_AVERAGES, auc, coverage_curve, roc_convex_hull, roc_curve  # noqa: E402
__all__ += ["AUC_AVERAGES", "auc", "coverage_curve", "roc_convex_hull", "roc_curve"]
from ._topk import PS_METRICS, TOPK_METRICS, TOPK_TIES, TopKEvaluation, TopKEvaluator, \
    evaluate_at_k, propensity  # noqa: E402
from ._topk_metrics import dcg_at_k, ndcg_at_k, precision_at_k, psdcg_at_k, psndcg_at_k, \
    psprecision_at_k, recall_at_k  # noqa: E402
__all__ += ["TOPK_TIES", "TOPK_METRICS", "PS_METRICS", "TopKEvaluation", "TopKEvaluator",
            "evaluate_at_k", "precision_at_k", "recall_at_k", "dcg_at_k", "ndcg_at_k",
            "psprecision_at_k", "psdcg_at_k", "psndcg_at_k", "propensity"]
