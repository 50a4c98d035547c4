"""Tie-aware ranking of belief matrices (melotti2009 §2.2 [1]_).

Each row of an ``(n_documents, n_labels)`` belief matrix is ranked in *descending* order:
rank 1 is the highest belief. A *tie group* is a maximal set of labels with exactly equal
scores in a row (``-0.0 == 0.0``; ±inf are ordinary values; NaN is an error).

================  ====================  ==================  ==============================
``method``        thesis name           scores .5 .2 .2 .1  rank given to a tie group
================  ====================  ==================  ==============================
``"ordinal"``     Ordinal Aleatório     1 2 3 4 / 1 3 2 4   distinct positions, uniformly
                                                            random order inside the group
``"stable"``      --                    1 2 3 4             distinct positions, label-index
                                                            order inside the group
``"dense"``       Denso                 1 2 2 3             one rank per group, no gaps
``"standard"``    Padrão ("1224")       1 2 2 4             the group's first position
``"modified"``    Modificado ("1334")   1 3 3 4             the group's last position
``"fractional"``  (statistics only)     1 2.5 2.5 4         mean of the group's positions
================  ====================  ==================  ==============================

``"min"``, ``"max"`` and ``"average"`` are accepted as SciPy-style aliases of standard,
modified and fractional, so ``rank(S, m)`` equals ``scipy.stats.rankdata(-S, method=m,
axis=1)`` for ``m`` in min/max/dense/average.

References
----------
.. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo de
   texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §2.2, Fig. 2.1.
"""
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._typing import MatrixLike, RandomStateLike
from ._validation import check_memory, check_option, check_random_state, check_scores, \
    row_source, sort_scratch_bytes

#: The ranking methods of :func:`rank` (aliases "min", "max", "average" accepted too).
RANK_METHODS = ("ordinal", "stable", "dense", "standard", "modified", "fractional")
#: type of the canonical ranking method names, and of those with their aliases
RankName = Literal["ordinal", "stable", "dense", "standard", "modified", "fractional"]
RankMethod = Literal[RankName, "min", "max", "average"]
_ALIASES = {"min": "standard", "max": "modified", "average": "fractional"}
_NONE_INT = np.empty((0, 0), dtype=np.int32)
_NONE_FLOAT = np.empty((0, 0), dtype=np.float64)


def resolve_method(method: str) -> RankName:
    """Canonical name of a ranking method: "min", "max", "average" become "standard",
    "modified", "fractional".

    Parameters
    ----------
    method : str
        One of :data:`RANK_METHODS` or an alias.

    Returns
    -------
    str
        The name in :data:`RANK_METHODS`.

    Raises
    ------
    ValueError
        ``method`` is not a known method or alias.

    Examples
    --------
    >>> resolve_method("min")
    'standard'
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    method = _ALIASES.get(method, method)
    return check_option("method", method, RANK_METHODS + tuple(_ALIASES))


def _check_size(scores, result_bytes):
    """ValueError, before anything is allocated, when the dense results (``result_bytes``
    per entry) and the sorting scratch of ``scores`` do not fit in memory: a sparse matrix
    declares its shape, and its results are dense."""
    n, q = scores.shape
    check_memory(n * q * result_bytes + sort_scratch_bytes(n, q),
                 f"ranking a {n} x {q} matrix ({result_bytes} bytes of results per entry)")


def _kernel():
    """The ranking kernel, imported at its first use: importing this module (as the command
    line does for RANK_METHODS) loads no kernel, so that a kernel's environment (a bad
    FASTRANK_SIMD) is reported where a ranking runs."""
    from ._ext import tie_ranks
    return tie_ranks


def _run(scores, code, seed, out_int, out_frac, out_end=_NONE_INT, out_start=_NONE_INT):
    _kernel().rank_rows(*row_source(scores), scores.shape[0], scores.shape[1], code, seed,
                        out_int, out_frac, out_end, out_start)


def rank(scores: MatrixLike, method: RankMethod = "modified",
         random_state: RandomStateLike = 0) -> np.ndarray:
    """Rank the labels of every row by decreasing belief, ties ranked by ``method``.

    Rank 1 is the highest belief. A tie group (labels of one row with exactly equal beliefs)
    gets one rank (dense, standard, modified, fractional) or distinct positions in random
    (ordinal) or label-index (stable) order; see the table in the module docstring.

    Parameters
    ----------
    scores : array-like or scipy.sparse matrix, shape (n_documents, n_labels)
        Beliefs; float32/float64 in C or Fortran order are used without a copy. A sparse
        matrix is ranked as CSR, its implicit zeros forming one tie group (never
        materialised).
    method : {"ordinal", "stable", "dense", "standard", "modified", "fractional", "min", \
"max", "average"}, default "modified"
        How a tie group is ranked; see the module docstring. "modified" is the thesis'
        recommendation for most metrics.
    random_state : None, int or numpy.random.Generator, default 0
        Only for ``"ordinal"``: an int or Generator makes the order reproducible (the
        default, 0, as everywhere in fastrank: row ``j`` draws from ``(seed, j)``, exactly as
        the metrics draw it), None draws fresh randomness. The result does not depend on
        the number of threads.

    Returns
    -------
    ranks : ndarray, shape (n_documents, n_labels)
        int32, or float64 for ``"fractional"``.

    Raises
    ------
    ValueError
        Unknown ``method``; ``scores`` not 2-D, empty, or holding NaN (the row is named);
        ranks (dense, of the declared shape even for a sparse ``scores``) and sorting
        scratch that need more memory than the process can allocate (refused before
        anything is allocated; see the guide, "Declared shapes").
    TypeError
        ``scores`` is not real-valued, or ``random_state`` is not None, an int or a
        Generator.

    See Also
    --------
    tie_groups : the sorted order and tie-group bounds, from which every method follows.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo de
       texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §2.2.

    Examples
    --------
    The thesis' example row .5 .2 .2 .1 (Fig. 2.1) under each ranking type:

    >>> import numpy as np
    >>> from fastrank import rank
    >>> S = np.array([[.5, .2, .2, .1]])
    >>> for method in ("dense", "standard", "modified", "fractional", "stable"):
    ...     print(method, rank(S, method)[0])
    dense [1 2 2 3]
    standard [1 2 2 4]
    modified [1 3 3 4]
    fractional [1.  2.5 2.5 4. ]
    stable [1 2 3 4]
    >>> rank(S, "ordinal", random_state=0)[0]  # the tie broken at random (seeded)
    array([1, 3, 2, 4], dtype=int32)
    """
    method = resolve_method(method)
    scores = check_scores(scores, "scores")
    code = _kernel().METHODS[method]
    seed = 0
    if method == "ordinal":
        seed = int(check_random_state(random_state).integers(0, 2**64, dtype=np.uint64))
    _check_size(scores, 8 if method == "fractional" else 4)
    if method == "fractional":
        out = np.empty(scores.shape, dtype=np.float64)
        _run(scores, code, seed, _NONE_INT, out)
    else:
        out = np.empty(scores.shape, dtype=np.int32)
        _run(scores, code, seed, out, _NONE_FLOAT)
    return out


@dataclass(frozen=True)
class TieGroups:
    """The sorted structure of every row, from one sort: what tie-aware metrics need.

    Returned by :func:`tie_groups`; all arrays are int32 of shape (n_documents, n_labels).

    Attributes
    ----------
    order : ndarray of int32, shape (n_documents, n_labels)
        ``order[i, p]`` is the label at position ``p`` (0-based) of row ``i`` in decreasing
        belief; inside a tie group labels are in increasing index order.
    end : ndarray of int32, shape (n_documents, n_labels)
        ``end[i, p]`` is the exclusive end position of the tie group holding position ``p``.
    start : ndarray of int32, shape (n_documents, n_labels)
        ``start[i, p]`` is the first position of that tie group. A group therefore occupies
        positions ``start[i, p] .. end[i, p] - 1``; its standard rank is ``start + 1``, its
        modified rank ``end``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import tie_groups
    >>> g = tie_groups(np.array([[.5, .2, .2, .1]]))
    >>> print(g.order, g.start, g.end)
    [[0 1 2 3]] [[0 1 1 3]] [[1 3 3 4]]
    >>> g.n_groups
    array([3])
    """

    order: np.ndarray
    end: np.ndarray
    start: np.ndarray

    @property
    def n_groups(self) -> np.ndarray:
        """Number of tie groups per row, an int array of shape (n_documents,)."""
        q = self.order.shape[1]
        return (self.end == np.arange(1, q + 1, dtype=np.int32)).sum(axis=1)


def tie_groups(scores: MatrixLike) -> TieGroups:
    """Sort every row once and return its :class:`TieGroups` (order and group bounds).

    Ranks of any method follow from the result without sorting again, e.g. the modified
    rank of label ``order[i, p]`` is ``end[i, p]``, its standard rank ``start[i, p] + 1``.
    Inside a tie group labels are in increasing index order.

    Memory: the three int32 outputs (12 bytes per entry) plus, per thread, a scratch of
    33 bytes per label and 11 KiB; nothing else of the matrix's size (a 10**6 x 200
    float32 input: 2289 MiB of outputs, and the peak RSS rises 2289 MiB during the call).

    Parameters
    ----------
    scores : array-like or scipy.sparse matrix, shape (n_documents, n_labels)
        Beliefs, as for :func:`rank`.

    Returns
    -------
    TieGroups
        ``order``, ``start`` and ``end`` of every row.

    Raises
    ------
    ValueError
        ``scores`` not 2-D, empty, or holding NaN; outputs that need more memory than the
        process can allocate (as for :func:`rank`).
    TypeError
        ``scores`` is not real-valued.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrank import tie_groups
    >>> g = tie_groups(np.array([[.5, .2, .2, .1], [0., .3, .3, .3]]))
    >>> g.order
    array([[0, 1, 2, 3],
           [1, 2, 3, 0]], dtype=int32)
    >>> g.end  # the modified rank of label order[i, p]
    array([[1, 3, 3, 4],
           [3, 3, 3, 4]], dtype=int32)
    """
    scores = check_scores(scores, "scores")
    _check_size(scores, 12)
    order = np.empty(scores.shape, dtype=np.int32)
    end = np.empty(scores.shape, dtype=np.int32)
    start = np.empty(scores.shape, dtype=np.int32)
    _run(scores, _kernel().TIE_GROUPS, 0, order, _NONE_FLOAT, end, start)
    return TieGroups(order=order, end=end, start=start)
