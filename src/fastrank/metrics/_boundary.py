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

    A sum is held as a few counted parts, each under half the size of the one before (two
    parts counted together while one is at least half the other), and counted as one when
    its classes are read: a stream of small chunks added to a large state costs a few
    passes over it in all (each class merged about log2 of their number times), not one
    pass a chunk.
    """

    def __init__(self, start, classes):
        self.n_labels = len(start) - 1
        self._parts = [(start, classes)]

    @classmethod
    def counting(cls, n_labels, rows):
        """From ``rows`` (5, n): columns (label, s, d, n_rel, n_irr) in any order, with
        repeats."""
        return cls(*_kernel.tabulate(np.ascontiguousarray(rows, dtype=np.int64), n_labels))

    @classmethod
    def summed(cls, parts):
        """The counts of all ``parts`` (a non-empty sequence over the same labels: evaluators
        of other label counts never merge), merged at once into one counted part; one
        part is returned as it is."""
        if len(parts) == 1:
            return parts[0]
        return cls(*_counted(parts[0].n_labels, [p for part in parts for p in part._parts]))

    def __add__(self, other):
        parts = [p for p in self._parts + other._parts if _size(p)] or self._parts[:1]
        parts.sort(key=_size, reverse=True)
        i = len(parts) - 2
        while i >= 0:  # until each part is under half the one before
            if 2 * _size(parts[i + 1]) >= _size(parts[i]):
                parts[i:i + 2] = [_counted(self.n_labels, parts[i:i + 2])]
                parts.sort(key=_size, reverse=True)
                i = len(parts) - 2
            else:
                i -= 1
        out = BoundaryCounts.__new__(BoundaryCounts)
        out.n_labels, out._parts = self.n_labels, parts
        return out

    def __eq__(self, other):
        return isinstance(other, BoundaryCounts) and np.array_equal(self.start, other.start) \
            and np.array_equal(self.classes, other.classes)

    def _whole(self):
        """(start, classes) of all the parts, counted as one (and kept so)."""
        if len(self._parts) > 1:
            self._parts = [_counted(self.n_labels, self._parts)]
        return self._parts[0]

    @property
    def start(self):
        return self._whole()[0]

    @property
    def classes(self):
        return self._whole()[1]

    s = property(lambda self: self.classes[0])
    d = property(lambda self: self.classes[1])
    n_rel = property(lambda self: self.classes[2])
    n_irr = property(lambda self: self.classes[3])

    def records(self):
        """The classes as the rows of :meth:`counting` (5, n_classes): label, s, d, n_rel,
        n_irr."""
        return _records(*self._whole())

    @property
    def size(self):
        """Number of classes (distinct (label, d/s) pairs)."""
        return self.classes.shape[1]

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


def _size(part):
    return part[1].shape[1]


def _labels(start):
    """The label of each class of a counted part."""
    return np.repeat(np.arange(len(start) - 1, dtype=np.int64), np.diff(start))


def _records(start, classes):
    """``counting``'s rows (5, n_classes) of a counted part: label, s, d, n_rel, n_irr."""
    return np.vstack([_labels(start), classes])


def _counted(n_labels, parts):
    """(start, classes) of the counted parts ``[(start, classes), ...]`` together. Each
    part's classes are sorted by (label, s, d): with the three packed in one integer key
    (while their bits fit in 63) the parts are runs that a stable sort (NumPy's timsort)
    merges in linear time, and the counts of equal keys are added up (differences of
    running sums); else the rows are counted again."""
    labels = [_labels(start) for start, _ in parts]
    bits = max(int(classes[:2].max(initial=0)) for _, classes in parts).bit_length()
    if not sum(map(len, labels)) or (n_labels - 1).bit_length() + 2 * bits > 63:
        return _kernel.tabulate(np.hstack([_records(*part) for part in parts]), n_labels)
    key = np.concatenate([(label << 2 * bits) | (classes[0] << bits) | classes[1]
                          for label, (_, classes) in zip(labels, parts)])
    order = np.argsort(key, kind="stable")
    key = key[order]
    last = np.append(np.flatnonzero(key[1:] != key[:-1]), key.size - 1)  # of each class
    key, mask = key[last], (1 << bits) - 1
    sums = [np.diff(np.cumsum(np.concatenate([classes[row] for _, classes in parts])[order])
                    [last], prepend=0) for row in (2, 3)]
    return (np.searchsorted(key >> 2 * bits, np.arange(n_labels + 1)),
            np.vstack([(key >> bits) & mask, key & mask, *sums]))
