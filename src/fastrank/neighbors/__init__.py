"""Exact top-k cosine neighbours and the lazy classifiers built on them (melotti2009 §2.4–2.5):
the multi-label kNN and ML-kNN (Zhang & Zhou 2007).

Similarity is the cosine of eq. 2.3, ``cos(d_j, d_m) = d_j·d_m / (|d_j| |d_m|)``; a document
with no non-zero feature has cosine 0 with every document (as scikit-learn's
``cosine_similarity``). Neighbours are ordered by similarity descending, then base index
ascending: at a tie on the k-th similarity the documents with the lowest indices enter. Ties are
exact equality of the computed (floating-point) cosines.

Exact ties. Each row is scaled by a power of two (exact), the dot product ``d`` and the squared
norms ``aa``, ``bb`` are summed from the scaled rows, and the cosine is
``sign(d) * sqrt(d² / (aa·bb))`` with the ratio rounded once in float64. When ``d``, ``aa``,
``bb``, ``d²`` and ``aa·bb`` are exact, the result depends only on the rational ``d²/(aa·bb)``
and the sign, so **cosines equal in exact arithmetic are bit-equal** (e.g. 2/√120 and 3/√270,
both √(1/30)) and the tie order above holds exactly. That is the case for integer-valued
rows (binary and count features, or integers times any power of two per row) whose squared
norms are below 2²⁴ (float32 data) or whose product of squared norms is below 2⁵³ (float64
data) — e.g. binary rows of up to 16 million (float32) or 94 million (float64) non-zeros.
Beyond those limits, and for real-valued features such as tf-idf weights, the sums round: the
cosine is then still a function of the two rows' stored values alone (duplicate rows, and
rows equal up to a power-of-two factor, tie exactly; a row's cosine with itself is exactly 1),
but two cosines that are equal in exact arithmetic of the stored values may differ in the
last bits (tf-idf rows of documents with proportional term counts, for instance, are equal
real vectors stored with different roundings). For tf-idf the rule is therefore: exact ties
for equal rows, rounded comparisons otherwise.

Threads: the search runs on OpenMP threads (limit them with
``threadpoolctl.threadpool_limits(n, user_api="openmp")`` or ``OMP_NUM_THREADS``).

Every similarity depends only on its two rows: the dense search sums each dot product in one
fixed order of fused multiply-adds (a compiled kernel, not a BLAS GEMM, whose rounding changes
with the matrix shapes; its AVX-512, AVX2/FMA3 and portable code give the same bits), the
sparse search adds a query's products in the order of its features. So results
depend neither on the thread count nor on the other base documents: searching parts of the
base and merging their top-k by the same order gives exactly the search of the whole base
(what :class:`fastrank.dask.ShardedEstimator` does).
"""
from ._knn import KNN
from ._mlknn import MLkNN
from ._search import BLOCK_BASE, BLOCK_QUERIES, topk_cosine

__all__ = ["BLOCK_BASE", "BLOCK_QUERIES", "KNN", "MLkNN", "topk_cosine"]
