"""Exact macro precision^c and macro F1^c under ``ties="expected"``: the counts of the
boundary records (a mergeable state) and the expectations computed from them.

Under a uniformly random order inside every tie group, a document's predicted set is its
whole groups above the cutoff plus d labels drawn from the s labels of the one group the
cutoff falls inside: each of those labels is predicted with probability d/s,
independently across documents. So, per label, the true and the false positives are a
fixed count plus two independent Poisson-binomial sums, and the expected per-label ratios
are finite sums over their distributions (see ``tie_metrics.boundary_expectations``).
"""
import numpy as np

from .._ext import tie_metrics as _kernel


class BoundaryCounts:
    """Per label and per probability d/s (in lowest terms), how many relevant and how many
    irrelevant labels of a cut tie group (of a document of weight 1) were seen. Adding two
    (``+``) sums the counts, so it merges as the evaluators' other sums do; its size is the
    number of distinct (label, d/s) pairs, whatever the number of rows.

    Attributes ``start`` (n_labels + 1: label i's classes are ``start[i]:start[i + 1]``)
    and ``classes`` (int64, (4, n_classes): rows ``s``, ``d``, ``n_rel``, ``n_irr``, also
    attributes; sorted by (s, d) within a label).
    """

    def __init__(self, start, classes):
        self.n_labels = len(start) - 1
        self.start, self.classes = start, classes
        self.s, self.d, self.n_rel, self.n_irr = classes

    @classmethod
    def counting(cls, n_labels, rows):
        """From ``rows`` (5, n): columns (label, s, d, n_rel, n_irr) in any order, with
        repeats."""
        return cls(*_kernel.tabulate(np.ascontiguousarray(rows, dtype=np.int64), n_labels))

    @classmethod
    def summed(cls, parts):
        """The counts of all ``parts`` (a non-empty sequence over the same labels: evaluators
        of other label counts never merge), counted in one pass; one part is already
        counted, and is returned as it is."""
        if len(parts) == 1:
            return parts[0]
        n_labels = parts[0].n_labels
        return cls.counting(n_labels, np.hstack([
            np.vstack([np.repeat(np.arange(n_labels), np.diff(p.start)), p.classes])
            for p in parts]))

    def __add__(self, other):
        return BoundaryCounts.summed([self, other])

    def __eq__(self, other):
        return isinstance(other, BoundaryCounts) and np.array_equal(self.start, other.start) \
            and np.array_equal(self.classes, other.classes)

    @property
    def size(self):
        """Number of classes (distinct (label, d/s) pairs)."""
        return self.s.size

    def expectations(self, tp, pred, rel, zero_division):
        """(precision, f1), each (n_sets, n_labels): per label, the expectations of
        TP / (TP + FP) and 2 TP / (TP + FN + TP + FP) (``zero_division`` for 0/0) with
        TP = ``tp[k]`` plus the relevant records predicted and TP + FP = ``pred[k]`` plus
        all records predicted; ``rel`` is TP + FN. Exact but for probabilities below 1e-22
        left out of the tails (so to ~1e-15); the work is about the sum over labels of
        (records) x (width of the distribution), the width at most ~20 standard deviations
        of the label's count of predicted records."""
        counts = np.ascontiguousarray(np.broadcast_arrays(np.atleast_2d(tp),
                                                          np.atleast_2d(pred)), dtype=np.float64)
        out = np.empty_like(counts)
        _kernel.boundary_expectations(self.start, self.classes, counts,
                                      np.ascontiguousarray(rel, dtype=np.float64),
                                      float(zero_division), out)
        return out[0], out[1]
