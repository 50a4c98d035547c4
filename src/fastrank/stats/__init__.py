"""Statistics for comparing classifiers (melotti2009 ch. 4; matsubara2008 §3.4, §5.2.2;
ml-concepts chapter §4.4-4.6).

Two classifiers over folds or data sets:

* :func:`paired_ttest` -- paired two-tailed Student t-test (the study's test);
* :func:`wilcoxon` -- Wilcoxon signed-rank test.

Many classifiers over many data sets (Demšar 2006, as used in matsubara2008):

* :func:`friedman` -- average ranks, Friedman chi², Iman-Davenport F, Nemenyi and
  Bonferroni-Dunn critical differences; :func:`holm` -- Holm's step-down correction of
  pairwise p-values (e.g. :func:`wilcoxon` between every pair of classifiers);
  :func:`critical_difference_groups` and
  :func:`critical_difference_diagram` (matplotlib, the ``report`` extra).

Estimating error (ml-concepts chapter): :func:`confusion_matrix` (rows = true class),
:func:`cost_error` (eq. 4.15) and :func:`confusion_cost_error` (eq. 4.16),
:func:`majority_error` (eq. 4.6), :func:`mean_se` (eq. 4.17-4.19) and
:func:`compare_two` (eq. 4.20-4.22).
"""
from ._critical_difference import critical_difference_diagram, critical_difference_groups
from ._error import MAX_CLASSES, TwoAlgorithmComparison, compare_two, confusion_cost_error, \
    confusion_matrix, cost_error, majority_error, mean_se
from ._tests import MAX_EXACT_N, ZERO_METHODS, FriedmanResult, HolmResult, TTestResult, \
    WilcoxonResult, friedman, holm, paired_ttest, wilcoxon

__all__ = ["paired_ttest", "TTestResult", "wilcoxon", "WilcoxonResult", "friedman",
           "FriedmanResult", "holm", "HolmResult", "critical_difference_groups",
           "critical_difference_diagram", "confusion_matrix", "cost_error",
           "confusion_cost_error", "majority_error", "mean_se", "compare_two",
           "TwoAlgorithmComparison"]
