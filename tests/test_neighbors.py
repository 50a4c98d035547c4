"""fastrank.neighbors against slow references (tests/ref_neighbors.py), scikit-learn,
melotti2009 Table 2.1, real Mulan data and hypothesis properties."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

from fastrank.neighbors import KNN, MLkNN, topk_cosine
from ref_neighbors import (cosine_matrix, dyadic_docs, read_sparse_arff, ref_knn, ref_mlknn,
                           ref_topk)

KINDS = {
    "dense64": lambda X: np.asarray(X, dtype=np.float64),
    "dense32": lambda X: np.asarray(X, dtype=np.float32),
    "csr64": lambda X: sp.csr_matrix(X, dtype=np.float64),
    "csr32": lambda X: sp.csr_matrix(X, dtype=np.float32),
}


@pytest.fixture(scope="module")
def tied():
    rng = np.random.default_rng(7)
    return dyadic_docs(rng, 90), dyadic_docs(rng, 130)


# ---- topk_cosine --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [1, 7, None])
def test_topk_exact_ties_match_reference(tied, kind, k):
    Q, B = tied
    sims, idx = topk_cosine(KINDS[kind](Q), KINDS[kind](B), k)
    ref_s, ref_i = ref_topk(Q, B, B.shape[0] if k is None else k)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(sims, ref_s)  # dyadic cosines: exact in float32 too
    assert sims.dtype == (np.float32 if kind.endswith("32") else np.float64)


@pytest.mark.parametrize("kind", KINDS)
def test_topk_exclude_self(tied, kind):
    _, B = tied
    X = KINDS[kind](B)
    sims, idx = topk_cosine(X, X, 12, exclude_self=True)
    ref_s, ref_i = ref_topk(B, B, 12, exclude_self=True)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(sims, ref_s)
    assert not (idx == np.arange(B.shape[0])[:, None]).any()


def test_topk_small_blocks_and_mixed_kinds(tied, monkeypatch):
    """Several query and base blocks (dense), and dense against CSR."""
    import fastrank.neighbors._search as nb
    Q, B = tied
    ref_s, ref_i = ref_topk(Q, B, 9)
    monkeypatch.setattr(nb, "BLOCK_QUERIES", 16)
    monkeypatch.setattr(nb, "BLOCK_BASE", 7)
    for q, b in [(Q, B), (Q, sp.csr_matrix(B)), (sp.csr_matrix(Q), B.astype(np.float32))]:
        sims, idx = topk_cosine(q, b, 9)
        np.testing.assert_array_equal(idx, ref_i)
        np.testing.assert_array_equal(sims, ref_s)
        assert sims.dtype == np.float64


@pytest.mark.parametrize("limit", [None, 64])
def test_scratch_kept_from_call_to_call(tied, limit, monkeypatch):
    """A thread keeps its scratch (the similarity blocks, topk_cosine's scaled queries and
    base) for its next call: calls that grow it, shrink it, change its dtype or kind, or
    search with exclude_self, each give the reference's result, and so do buffers past
    WORKSPACE_BYTES (allocated by each call); a base prepared without scratch (as a model
    keeps it) is left as it was by the calls in between."""
    import fastrank.neighbors._search as nb
    if limit is not None:
        monkeypatch.setattr(nb, "WORKSPACE_BYTES", limit)
    Q, B = tied
    kept = nb._Base(B)
    kept_scaled = kept.scaled.copy()
    calls = [(Q, B, 9, False), (Q[:5], B[:20], 3, False), (Q, B, 1, False),
             (B, B, 6, True), (Q[:40], B, 130, False)]
    for kind in ("dense32", "dense64", "csr64", "dense64"):
        for q, b, k, exclude_self in calls:
            qk = KINDS[kind](q)
            sims, idx = topk_cosine(qk, qk if exclude_self else KINDS[kind](b), k,
                                    exclude_self)
            ref_s, ref_i = ref_topk(q, b, k, exclude_self)
            np.testing.assert_array_equal(idx, ref_i)
            np.testing.assert_array_equal(sims, ref_s)
    np.testing.assert_array_equal(kept.scaled, kept_scaled)
    sims, idx = kept.search(nb._pow2_scaled_rows(Q), 9)
    np.testing.assert_array_equal(idx, ref_topk(Q, B, 9)[1])


def test_similarity_blocks_kept_up_to_the_bound_a_thread(tied, monkeypatch):
    """The similarity blocks, one per thread of the search, are kept for the next call up to
    WORKSPACE_BYTES a thread: on 2 threads, blocks of twice the bound are kept (the same
    buffer serves the next call), and blocks past it are allocated by each call; the
    results are the reference's either way."""
    import fastrank.neighbors._search as nb
    Q, B = tied
    want = ref_topk(Q, B, 5)
    with threadpool_limits(2, user_api="openmp"):
        vars(nb._kept).pop("blocks", None)  # (a larger one kept from an earlier search)
        topk_cosine(Q, B, 5)
        whole = nb._kept.blocks.nbytes
        for limit, kept in ((whole // 2, True), (whole // 2 - 1, False)):
            monkeypatch.setattr(nb, "WORKSPACE_BYTES", limit)
            vars(nb._kept).pop("blocks", None)
            for _ in range(2):
                sims, idx = topk_cosine(Q, B, 5)
                np.testing.assert_array_equal(idx, want[1])
                np.testing.assert_array_equal(sims, want[0])
                assert hasattr(nb._kept, "blocks") is kept
            if kept:
                assert nb._kept.blocks.nbytes == whole


def test_search_refuses_scratch_without_a_block(tied):
    from fastrank._ext import cosine_topk
    Q, B = tied
    with pytest.raises(ValueError, match="no similarity block"):
        cosine_topk.topk_dense(Q, B, np.ones(90), np.ones(130), np.ones(130), np.empty((90, 2)),
                               np.empty((90, 2), np.int64), False, 16, 130,
                               np.empty(16 * 130 * 8 - 1, np.uint8))


@pytest.mark.parametrize("threads", [1, 2, 16])
def test_query_blocks_feed_every_thread_within_the_memory_bound(threads):
    """Queries per dense block: a block for each thread while the queries allow; at most
    BLOCK_QUERIES of them where the base block fits the cache, else as many as keep one
    block within BLOCK_QUERIES x BLOCK_BASE similarities (one pass over the base for a
    thread's queries); blocks that cover the queries."""
    from fastrank._parallel import num_threads
    from fastrank.neighbors._search import (BASE_CACHE_BYTES, BLOCK_BASE, BLOCK_QUERIES,
                                            _query_block)
    with num_threads(threads):
        for nq, block_b, row_bytes in itertools.product(
                (1, 5, 255, 488, 4000, 20_000), (7, 1000, BLOCK_BASE), (128, 4096)):
            block_q = _query_block(nq, block_b, row_bytes)
            blocks = -(-nq // block_q)
            assert block_q * blocks >= nq > block_q * (blocks - 1)
            assert blocks >= min(nq, threads)
            if block_b * row_bytes <= BASE_CACHE_BYTES:
                assert block_q <= BLOCK_QUERIES
            else:
                assert block_q * block_b <= max(BLOCK_QUERIES * BLOCK_BASE,
                                                BLOCK_QUERIES * block_b)
                if threads == 1:
                    assert blocks == -(-nq // max(BLOCK_QUERIES,
                                                  BLOCK_QUERIES * BLOCK_BASE // block_b))


def test_zero_rows_have_cosine_zero():
    Q = np.array([[0.0, 0, 0], [1, 0, 0]])
    B = np.array([[0.0, 1, 0], [0, 0, 0], [2, 0, 0], [0, 0, 3]])
    for q, b in [(Q, B), (sp.csr_matrix(Q), sp.csr_matrix(B))]:
        sims, idx = topk_cosine(q, b, None)
        np.testing.assert_array_equal(idx, [[0, 1, 2, 3], [2, 0, 1, 3]])
        np.testing.assert_array_equal(sims, [[0, 0, 0, 0], [1, 0, 0, 0]])


def test_negative_cosines_order():
    Q = np.array([[1.0, 0]])
    B = np.array([[-1.0, 0], [0, 1], [1, 1], [-1, -1], [0, 0]])
    for q, b in [(Q, B), (sp.csr_matrix(Q), sp.csr_matrix(B))]:
        sims, idx = topk_cosine(q, b, 5)
        np.testing.assert_array_equal(idx, [[2, 1, 4, 3, 0]])
        np.testing.assert_allclose(sims, [[np.sqrt(0.5), 0, 0, -np.sqrt(0.5), -1]])


@pytest.mark.parametrize("kind", ["dense64", "csr64"])
def test_topk_equals_sklearn_brute_cosine(kind):
    """Continuous random data (no ties): same neighbours, distance = 1 - similarity."""
    rng = np.random.default_rng(3)
    B = rng.random((400, 30)) * (rng.random((400, 30)) < 0.3)
    Q = rng.random((120, 30)) * (rng.random((120, 30)) < 0.3)
    sims, idx = topk_cosine(KINDS[kind](Q), KINDS[kind](B), 15)
    nn = NearestNeighbors(n_neighbors=15, metric="cosine", algorithm="brute").fit(KINDS[kind](B))
    dist, ref_i = nn.kneighbors(KINDS[kind](Q))
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(1 - sims, dist, atol=1e-12)


def test_topk_does_not_depend_on_thread_count(tied):
    rng = np.random.default_rng(11)
    X = rng.random((300, 50)) * (rng.random((300, 50)) < 0.2)
    for q in (X, sp.csr_matrix(X), X.astype(np.float32)):
        with threadpool_limits(1):
            one = topk_cosine(q, q, 20, exclude_self=True)
        with threadpool_limits(2):
            two = topk_cosine(q, q, 20, exclude_self=True)
        np.testing.assert_array_equal(one[0], two[0])
        np.testing.assert_array_equal(one[1], two[1])


def _near_ties(rng, dtype, n_base=300, n_features=37, n_queries=6):
    """Queries, and base rows that are the queries perturbed by 1e-7..1e-3 in random
    directions, many of them copies of a few rows times arbitrary factors (equal cosines in
    exact arithmetic, computed with different roundings: values a few units in the last
    place apart, where the approximate cosines that spare exact ones straddle the bar), plus
    duplicates (exact ties) and sign flips."""
    Q = rng.standard_normal((n_queries, n_features))
    scale = 10.0 ** rng.uniform(-7, -3, (n_base, 1))
    B = Q[rng.integers(0, n_queries, n_base)] + scale * rng.standard_normal((n_base,
                                                                            n_features))
    B[::2] = B[rng.integers(0, 12, len(B[::2]))] * rng.uniform(0.1, 10, (len(B[::2]), 1))
    B[::7] = B[rng.integers(0, n_base, len(B[::7]))]           # duplicates: exact ties
    B[::11] *= -1                                                # cosines near -1
    return Q.astype(dtype), B.astype(dtype)


@pytest.mark.parametrize("kind", KINDS)
def test_prefilter_keeps_every_neighbour_at_near_ties(kind, monkeypatch, simd_paths):
    """The search computes the exact cosine only for base documents whose approximation may
    reach the k-th best so far; its top-k must be the first k of the full sorted row (k =
    all: every cosine computed exactly, nothing filtered), bit for bit, for every k, with
    one base block or many (the bar set by earlier blocks; blocks of 300, 24 and 7 rows
    cut the dense filter's chunks of 64 rows and its vectors of 4 and 8 at every offset),
    on every instruction-set path (the dense filter has one code per path), and the values
    must match the float64 reference."""
    import fastrank.neighbors._search as nb
    rng = np.random.default_rng(5)
    dtype = np.float32 if kind.endswith("32") else np.float64
    Q, B = _near_ties(rng, dtype)
    Qk, Bk = KINDS[kind](Q), KINDS[kind](B)
    full_s, full_i = topk_cosine(Qk, Bk, None)
    assert np.all((full_s[:, :-1] > full_s[:, 1:]) |
                  ((full_s[:, :-1] == full_s[:, 1:]) & (full_i[:, :-1] < full_i[:, 1:])))
    np.testing.assert_allclose(full_s, np.take_along_axis(cosine_matrix(Q, B), full_i, 1),
                               atol=1e-6 if dtype == np.float32 else 1e-13)
    # the first rows' cosines are within a few ulps of each other: a real test of the bar
    assert np.any(full_s[:, 1:20] == full_s[:, :19])
    all_s, all_i = topk_cosine(Bk, Bk, None)
    keep = all_i != np.arange(B.shape[0])[:, None]
    for path in simd_paths if kind.startswith("dense") else ["default"]:
        for blocks in [(256, 4096), (4, 24), (1, 7)]:
            monkeypatch.setattr(nb, "BLOCK_QUERIES", blocks[0])
            monkeypatch.setattr(nb, "BLOCK_BASE", blocks[1])
            for k in (1, 2, 5, 17, 60, 299):
                sims, idx = topk_cosine(Qk, Bk, k)
                np.testing.assert_array_equal(idx, full_i[:, :k], err_msg=path)
                np.testing.assert_array_equal(sims, full_s[:, :k], err_msg=path)
            for k in (1, 9, 70):
                ex_s, ex_i = topk_cosine(Bk, Bk, k, exclude_self=True)
                np.testing.assert_array_equal(ex_i, all_i[keep].reshape(len(B), -1)[:, :k])
                np.testing.assert_array_equal(ex_s, all_s[keep].reshape(len(B), -1)[:, :k])


def _rows_with_cosines(rng, q, cosines):
    """Base rows whose cosines with the query q are `cosines` (up to rounding): c q/|q| plus
    sqrt(1 - c^2) times a random unit vector orthogonal to q."""
    u = rng.standard_normal((len(cosines), q.size))
    qn = q / np.linalg.norm(q)
    u -= (u @ qn)[:, None] * qn
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    c = np.asarray(cosines)[:, None]
    return c * qn + np.sqrt(1 - c ** 2) * u


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_first_block_bar_keeps_every_neighbour(dtype, monkeypatch, simd_paths):
    """A query's first base block sets the bar of the dense search from the k-th largest of
    its rows' group maxima (rows j mod G), bounded by buckets: the best rows all in one
    group, all base rows equal (one bucket), one row far above the rest (every other in
    the lowest bucket), more rows than groups, k beyond the groups (no bar): the k best
    must be the first k of the full sorted search (every cosine computed), with self
    excluded or not, on every instruction-set path."""
    import fastrank.neighbors._search as nb
    rng = np.random.default_rng(11)
    q = rng.standard_normal(16)
    n = 3000
    same_group = rng.uniform(-0.5, 0.2, n)
    same_group[::48] = rng.uniform(0.6, 0.9, len(same_group[::48]))
    same_group[::1024] = 0.95
    outlier = rng.uniform(0.1, 0.1001, n)
    outlier[1234] = 0.99
    bases = {"one group": same_group, "equal": np.full(n, 0.5), "outlier": outlier,
             "uniform": rng.uniform(-1, 1, n)}
    monkeypatch.setattr(nb, "BLOCK_BASE", 4096)
    for name, cosines in bases.items():
        B = _rows_with_cosines(rng, q, cosines).astype(dtype)
        if name == "equal":
            B[:] = B[0]
        Q = np.vstack([q, B[:40]]).astype(dtype)
        full_s, full_i = topk_cosine(Q, B, None)
        for path in simd_paths:
            for k in (2, 10, 100, 300, 1100):
                sims, idx = topk_cosine(Q, B, k)
                np.testing.assert_array_equal(idx, full_i[:, :k], err_msg=f"{name} {path}")
                np.testing.assert_array_equal(sims, full_s[:, :k], err_msg=f"{name} {path}")
    ex_s, ex_i = topk_cosine(B[:500], B[:500], None, exclude_self=True)
    for path in simd_paths:
        for k in (1, 2, 50):
            sims, idx = topk_cosine(B[:500], B[:500], k, exclude_self=True)
            np.testing.assert_array_equal(idx, ex_i[:, :k], err_msg=path)
            np.testing.assert_array_equal(sims, ex_s[:, :k], err_msg=path)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_single_best_row_in_one_pass(dtype, simd_paths):
    """k = 1 finds a query's best row of its first block in one pass (each vector lane's
    largest product, its row and its second largest), a second pass only when another
    row comes near: one row far ahead, the best row repeated (scaled copies: the same
    cosine) in the same lane of an AVX2 vector (8 rows on), of an AVX-512 one (16 on), in
    the next lane or in the last row (past the vectors where the rows are not a multiple
    of their width), the best in the last row, every row equal; bases of 1 to 45 rows.
    The result is the first row of the full sorted search, bit for bit, on every
    instruction-set path."""
    rng = np.random.default_rng(12)
    q = rng.standard_normal(24)
    for n in (1, 2, 7, 8, 9, 16, 17, 31, 45):
        bases = {"uniform": _rows_with_cosines(rng, q, rng.uniform(-1, 0.9, n)),
                 "equal": np.repeat(_rows_with_cosines(rng, q, [0.5]), n, axis=0)}
        for gap in (1, 8, 16, n - 2):
            if n > gap + 1 > 1:
                B = _rows_with_cosines(rng, q, rng.uniform(-1, 0.5, n))
                B[1] = _rows_with_cosines(rng, q, [0.9])[0]
                B[1 + gap] = 3 * B[1]
                bases[f"copy {gap} rows on"] = B
        ahead = _rows_with_cosines(rng, q, rng.uniform(-1, 0.5, n))
        ahead[-1] = _rows_with_cosines(rng, q, [0.99])[0]
        bases["last ahead"] = ahead
        for name, B in bases.items():
            B = B.astype(dtype)
            Q = np.vstack([q, -q, B[:3]]).astype(dtype)
            full_s, full_i = topk_cosine(Q, B, None)
            for path in simd_paths:
                sims, idx = topk_cosine(Q, B, 1)
                np.testing.assert_array_equal(idx, full_i[:, :1], err_msg=f"{name} {n} {path}")
                np.testing.assert_array_equal(sims, full_s[:, :1], err_msg=f"{name} {n} {path}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_scaled_by_the_power_of_two_of_their_largest_magnitude(dtype, simd_paths):
    """Each row times 2^-e, e the exponent of its largest absolute value (frexp: that value
    lands in [1/2, 1)), dense and CSR: against NumPy's frexp, with the largest magnitude
    negative, positive, tied in both signs, subnormal (float32 and float64: a shift past
    2^1023), beside a -0, in a zero row, at every position of rows of 1 to 70 values; the
    squared norms written in the same pass equal those of the scaled rows, alone and in
    matrices of 1 to 9 rows (norms taken 4 rows at a time), on every instruction-set
    path."""
    from fastrank._ext import cosine_topk as kernel
    rng = np.random.default_rng(4)
    tiny = np.finfo(np.float32).smallest_subnormal   # subnormal in float32
    tiny64 = np.finfo(np.float64).smallest_subnormal
    rows = [np.zeros(5), np.array([-0.0, 0.0]), np.array([-3.0, 3.0]), np.array([-0.0, -2.5]),
            np.array([tiny, -3 * tiny, 0.0]), np.array([np.finfo(dtype).max, 1.0]),
            np.array([tiny64, -7 * tiny64, 0.0]), np.array([1e-310, -2e-320])]
    for m in range(1, 71):
        x = rng.standard_normal(m) * 10.0 ** rng.integers(-30, 30)
        x[rng.integers(m)] *= -100                 # the largest magnitude, negative
        rows.append(x)
        rows.append(np.abs(x))
    for path in simd_paths:
        for x in rows:
            x = x.astype(dtype)[None, :]
            x64 = x.astype(np.float64)
            top = np.abs(x64).max()
            ref = np.ldexp(x64, -np.frexp(top)[1] if top > 0 else 0).astype(dtype)
            out = np.empty_like(x)
            kernel.scale_dense(x, out, np.empty(0, dtype))
            np.testing.assert_array_equal(out, ref, err_msg=path)
            assert np.array_equal(np.signbit(out), np.signbit(ref))
            again, sq, ref_sq = np.empty_like(x), np.empty(1, dtype), np.empty(1, dtype)
            kernel.scale_dense(x, again, sq)       # the squared norm in the same pass
            kernel.sqnorms_dense(out, ref_sq)
            np.testing.assert_array_equal(again, ref)
            np.testing.assert_array_equal(sq, ref_sq)
            csr = sp.csr_matrix(x)
            data = np.empty_like(csr.data)
            kernel.scale_csr(csr.data, csr.indptr, data)
            np.testing.assert_array_equal(data, ref[x != 0])
    for m in (1, 7, 8, 9, 33, 70):
        X = (rng.standard_normal((9, m)) * 10.0 ** rng.integers(-30, 30, (9, 1))).astype(dtype)
        X[3] = 0
        ref = np.ldexp(X.astype(np.float64),
                       -np.frexp(np.abs(X).max(1, keepdims=True).astype(np.float64))[1]
                       ).astype(dtype)
        ref_sq = np.empty(9, dtype)
        kernel.sqnorms_dense(ref, ref_sq)
        for path in simd_paths:
            for n in range(1, 10):
                out, sq = np.empty_like(X[:n]), np.empty(n, dtype)
                kernel.scale_dense(X[:n], out, sq)
                np.testing.assert_array_equal(out, ref[:n], err_msg=f"{path} {m} {n}")
                np.testing.assert_array_equal(sq, ref_sq[:n], err_msg=f"{path} {m} {n}")


def _assert_paths_agree(results):
    """Each path's list of (similarities, indices) equal to the first path's, bit for bit."""
    for other in results[1:]:
        for (s0, i0), (s1, i1) in zip(results[0], other):
            np.testing.assert_array_equal(i0, i1)
            np.testing.assert_array_equal(s0, s1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_features", [8, 9, 15, 16, 33, 260, 517, 1100])
def test_dense_kernels_agree_at_every_shape(dtype, n_features, simd_paths):
    """Every dense code path (AVX-512 packed blocks with their edges and their passes over
    1 024 features at a time, AVX-512 panels at few features, AVX2, portable with the
    library's and with emulated fma) gives the same bits for every query count and base
    size around the block widths (4 queries x 8 base rows, tails of 1-7 features)."""
    rng = np.random.default_rng(n_features)
    B = (rng.standard_normal((43, n_features)) * (rng.random((43, n_features)) < 0.8))
    B = B.astype(dtype)
    results = [[topk_cosine(B[:nq], B[:nb], None) for nq in (1, 3, 4, 5, 9)
                for nb in (1, 7, 8, 9, 16, 17, 43)] for _ in simd_paths]
    _assert_paths_agree(results)
    s, i = results[0][-1]
    np.testing.assert_allclose(s, np.take_along_axis(cosine_matrix(B[:9], B), i, 1),
                               atol=1e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("n_features, queries, bases, k", [
    *((d, (6, 7, 8), (355, 800), 50) for d in (9, 64, 65, 100, 128, 129, 192)),
    *((d, (49, 100, 103), (97, 150), 20) for d in (193, 1030))])
def test_dense_tiles_agree_across_blocks(n_features, queries, bases, k, simd_paths):
    """float32 packs the base in tiles: up to 192 features in panels of 16 (AVX-512) or 8
    (AVX2) rows, tiles of about 16 KiB (the last one partial, its last panel padded;
    query counts of every remainder of 3); beyond, tiles of 48 rows in groups of 4
    (AVX2) or of 8 rows and more (AVX-512), searched by blocks of query rows, the features
    in passes of up to 1 024 (the last tile partial, with rows outside its groups; query
    counts over several blocks, of every remainder of 3 and 4). The same bits on every
    path."""
    rng = np.random.default_rng(n_features)
    B = rng.standard_normal((max(bases), n_features)).astype(np.float32)
    results = [[topk_cosine(B[:nq], B[:nb], k) for nq in queries for nb in bases]
               for _ in simd_paths]
    _assert_paths_agree(results)
    s, i = results[0][-1]
    np.testing.assert_allclose(s, np.take_along_axis(cosine_matrix(B[:max(queries)], B), i, 1),
                               atol=1e-6)


def test_dense_large_query_blocks_same_bits(simd_paths):
    """A float32 block of 256 queries beyond 4 MB (here 4 103 features) is searched with
    taller base tiles on AVX-512: the same bits as the AVX2 code (the vector paths the CPU
    runs)."""
    rng = np.random.default_rng(1)
    X = (rng.standard_normal((300, 4103)) * (rng.random((300, 4103)) < 0.3)).astype(np.float32)
    results = []
    for path in ("avx512", "avx2"):
        if path in simd_paths.names:
            with simd_paths.force(path):
                results.append(topk_cosine(X, X[:150], None))
    wide = results[0]
    for narrow in results[1:]:
        np.testing.assert_array_equal(wide[1], narrow[1])
        np.testing.assert_array_equal(wide[0], narrow[0])
    np.testing.assert_allclose(wide[0], np.take_along_axis(cosine_matrix(X, X[:150]), wide[1],
                                                           1), atol=1e-6)


@pytest.mark.parametrize("n_features", [1, 8, 37, 200, 1000])
@pytest.mark.parametrize("kind", KINDS)
def test_similarities_depend_only_on_the_two_rows(kind, n_features, simd_paths):
    """Searching parts of the base gives bit for bit the similarities of the whole search
    (what exact sharded search relies on), with the AVX-512, AVX2/FMA3 and portable dense
    code alike (the portable code with the library's and with emulated fma); continuous
    values, so that any change of summation order would show in the last bits."""
    rng = np.random.default_rng(n_features)
    Q = rng.standard_normal((45, n_features)) * (rng.random((45, n_features)) < 0.7)
    B = rng.standard_normal((61, n_features)) * (rng.random((61, n_features)) < 0.7)
    Q, B = KINDS[kind](Q), KINDS[kind](B)

    def full_matrix(Qp, Bp):
        sims, idx = topk_cosine(Qp, Bp, None)
        out = np.empty_like(sims)
        out[np.arange(sims.shape[0])[:, None], idx] = sims
        return out

    whole = full_matrix(Q, B)
    for path in simd_paths:
        parts = [full_matrix(Q[lo:hi], B[a:b]) for lo, hi in [(0, 1), (1, 45)]
                 for a, b in [(0, 1), (1, 5), (5, 38), (38, 61)]]
        split = np.block([parts[:4], parts[4:]])
        np.testing.assert_array_equal(split, whole, err_msg=path)
    np.testing.assert_allclose(whole, cosine_matrix(Q, B), atol=1e-5 if "32" in kind else 1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nq=st.integers(1, 25), nb=st.integers(1, 40),
       kind=st.sampled_from(sorted(KINDS)), data=st.data())
def test_topk_property_matches_reference(seed, nq, nb, kind, data):
    rng = np.random.default_rng(seed)
    Q = dyadic_docs(rng, nq, n_features=20, zero_rows=nq > 3)
    B = dyadic_docs(rng, nb, n_features=20, zero_rows=nb > 3)
    k = data.draw(st.integers(1, nb))
    sims, idx = topk_cosine(KINDS[kind](Q), KINDS[kind](B), k)
    ref_s, ref_i = ref_topk(Q, B, k)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(sims, ref_s)
    # sorted: similarity descending, index ascending among equal similarities
    assert np.all((sims[:, :-1] > sims[:, 1:]) |
                  ((sims[:, :-1] == sims[:, 1:]) & (idx[:, :-1] < idx[:, 1:])))


# ---- exact ties --------------------------------------------------------------------------

def exact_cosine_key(a, b):
    """(sign, d^2 / (|a|^2 |b|^2)) of two integer vectors as an exact rational: equal keys
    are equal cosines (Python integers and fractions, no rounding)."""
    a, b = [int(v) for v in a], [int(v) for v in b]
    d = sum(x * y for x, y in zip(a, b))
    den = sum(x * x for x in a) * sum(y * y for y in b)
    return (d > 0) - (d < 0), Fraction(d * d, den) if den else Fraction(0)


def documented_cosine(key, dtype):
    """The documented result for an exact key: sign * sqrt(ratio rounded once to float64),
    then rounded to the output dtype (float(Fraction) rounds correctly)."""
    sign, ratio = key
    return dtype(sign * math.sqrt(float(ratio)))


def _similarity_matrix(Q, B):
    sims, idx = topk_cosine(Q, B, None)
    out = np.empty_like(sims)
    out[np.arange(sims.shape[0])[:, None], idx] = sims
    return out


def _with_simd_and_portable(simd_paths, fn):
    """fn() on every instruction-set path the CPU runs: the AVX-512, the AVX2/FMA3 and the
    portable dense code (those the CPU has), the portable code both with emulated fma
    (popcnt: what CPUs without FMA3 run) and with the C library's fma (portable)."""
    return [fn() for _ in simd_paths]


# ---- fused multiply-add without the instruction -------------------------------------------

def _libm_fma(dtype):
    """The C library's fma (float64) or fmaf (float32), element by element: correctly
    rounded (glibc), the reference for the emulation."""
    import ctypes
    import ctypes.util
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    f, ct = (libm.fma, ctypes.c_double) if dtype == np.float64 else (libm.fmaf, ctypes.c_float)
    f.restype, f.argtypes = ct, [ct] * 3
    return lambda a, b, c: np.array([f(x, y, z) for x, y, z in zip(a, b, c)], dtype=dtype)


def _fma_emulated(a, b, c):
    from fastrank._ext import cosine_topk as kernel
    out = np.empty_like(a)
    kernel.fma_emulated(a, b, c, out)
    return out


def fma_cases(dtype, n=4000, seed=0):
    """(a, b, c) triples where a rounded product or a rounded sum would show: random
    exponents, cancellation against the rounded product, and sums that fall just beside
    a midpoint between two floats (a * b within a few units of half a unit of c's last
    place, the product's own rounding deciding the direction); zeros, signed zeros,
    operands beyond the emulation's range, subnormals, infinities and NaN."""
    rng = np.random.default_rng(seed)
    eps, tiny = np.finfo(dtype).eps, np.finfo(dtype).smallest_subnormal
    a = rng.standard_normal(n).astype(dtype) * np.exp2(rng.integers(-30, 30, n)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    c = rng.standard_normal(n).astype(dtype) * np.exp2(rng.integers(-60, 60, n)).astype(dtype)
    p = (a.astype(np.float64) * b).astype(dtype)
    half = (np.spacing(c) / 2 * rng.choice([-1, 1], n)).astype(dtype)
    cases = [(a, b, c), (a, b, (-p + rng.integers(-4, 5, n) * np.spacing(p)).astype(dtype)),
             (a, b, (-p * (1 + rng.integers(-3, 4, n) * eps / 2)).astype(dtype))]
    for sa, sb in [(1 + eps, 1 - eps / 2), (1 - eps / 2, 1 + eps), (1 + 2 * eps, 1 - eps / 2)]:
        cases.append(((half * dtype(sa)).astype(dtype), np.full(n, sb, dtype), c))
    far = [1e-150, 1e150] if dtype == np.float64 else [1e-38, 1e38]
    special = np.array([0.0, -0.0, 1.0, -1.0, 3.0, tiny, -tiny, *far, 1e-30, 1e30,
                        np.finfo(dtype).max, np.inf, -np.inf, np.nan], dtype=dtype)
    grid = np.array(np.meshgrid(special, special, special)).reshape(3, -1)
    cases.append(tuple(np.ascontiguousarray(v) for v in grid))
    return cases


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_emulated_fma_rounds_as_the_library_fma(dtype):
    """The emulation (the portable dot products on CPUs without FMA3) gives the bits of the
    C library's correctly rounded fma, where a multiply then an add differ from it in
    about half of the near-midpoint cases."""
    ref = _libm_fma(dtype)
    itype = np.uint64 if dtype == np.float64 else np.uint32
    naive_differs = 0
    for a, b, c in fma_cases(dtype):
        expected = ref(a, b, c)
        got = _fma_emulated(a, b, c)
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(itype), expected[~nan].view(itype))
        with np.errstate(all="ignore"):
            naive_differs += np.sum((a * b + c)[~nan].view(itype) != expected[~nan].view(itype))
    assert naive_differs > 1000       # the cases do reach the roundings that matter


def test_emulated_fma_refuses_arrays_of_different_lengths():
    from fastrank._ext import cosine_topk as kernel
    x = np.ones(3)
    with pytest.raises(ValueError, match="lengths 3, 2, 3 and 3"):
        kernel.fma_emulated(x, x[:2], x, np.empty(3))


@settings(max_examples=300, deadline=None)
@given(a=st.floats(-1e100, 1e100), b=st.floats(-1e100, 1e100), c=st.floats(-1e200, 1e200))
def test_emulated_fma_is_the_exact_value_rounded_once(a, b, c):
    """float64: the emulation equals a * b + c computed exactly (fractions) and rounded to
    nearest once (Python's int division rounds correctly); zero results compared by
    value."""
    got = _fma_emulated(np.array([a]), np.array([b]), np.array([c]))[0]
    exact = float(Fraction(a) * Fraction(b) + Fraction(c))
    assert got == exact


@pytest.mark.parametrize("kind", KINDS)
def test_equal_cosines_of_binary_rows_are_bit_equal(kind, simd_paths):
    """2/sqrt(120) and 3/sqrt(270) are the same real number (sqrt(1/30)); computed as a
    normalised dot product they differ in the last bit. Query: 10 ones; document 0 shares 3
    of its 27 ones with it, document 1 shares 2 of its 12: a tie, broken by index."""
    q = np.zeros((1, 64))
    q[0, :10] = 1
    B = np.zeros((2, 64))
    B[0, :3] = B[0, 20:44] = 1          # 27 ones, dot 3
    B[1, 8:10] = B[1, 50:60] = 1        # 12 ones, dot 2
    expected = documented_cosine(exact_cosine_key(q[0], B[0]), KINDS[kind]([0.0]).dtype.type)
    assert exact_cosine_key(q[0], B[0]) == exact_cosine_key(q[0], B[1]) == (1, Fraction(1, 30))
    for sims, idx in _with_simd_and_portable(simd_paths, lambda: topk_cosine(KINDS[kind](q),
                                                                             KINDS[kind](B), 2)):
        np.testing.assert_array_equal(idx, [[0, 1]])
        assert sims[0, 0] == sims[0, 1] == expected
        assert abs(float(sims[0, 0]) - math.sqrt(1 / 30)) <= 4e-8 if "32" in kind else 1e-16


@st.composite
def integer_rows_with_equal_cosines(draw):
    """Integer rows (entries -3..4, some zero rows) plus copies that have equal cosines
    without equal values: a query and a document with the same features permuted (same
    dot product and norms, summed in another order), and documents multiplied by 2, 3, 5."""
    d = draw(st.integers(1, 21))
    rows = st.lists(st.integers(-3, 4) | st.just(0), min_size=d, max_size=d)
    Q = np.array(draw(st.lists(rows, min_size=1, max_size=5)), dtype=np.int64)
    B = np.array(draw(st.lists(rows, min_size=1, max_size=8)), dtype=np.int64)
    perm = np.array(draw(st.permutations(range(d))))
    factors = np.array(draw(st.lists(st.sampled_from([2, 3, 5]), min_size=len(B),
                                     max_size=len(B))))
    return np.vstack([Q, Q[:, perm]]), np.vstack([B, B[:, perm], B * factors[:, None]])


@settings(max_examples=60, deadline=None)
@given(rows=integer_rows_with_equal_cosines(), kind=st.sampled_from(sorted(KINDS)))
def test_integer_rows_equal_rational_cosines_are_bit_equal(rows, kind, simd_paths):
    """Every similarity is the documented function of the exact rational (sign, d^2/(aa bb))
    (computed here with Python fractions), so equal rational cosines are bit-equal, with the
    AVX2/FMA3 and the portable dense code, dense and CSR; and neighbours come in the exact
    order (rational cosine descending, index ascending)."""
    Q, B = rows
    dtype = KINDS[kind]([0.0]).dtype.type
    keys = [[exact_cosine_key(q, b) for b in B] for q in Q]
    expected = np.array([[documented_cosine(k, dtype) for k in row] for row in keys])
    for S in _with_simd_and_portable(simd_paths, lambda: _similarity_matrix(KINDS[kind](Q),
                                                                            KINDS[kind](B))):
        np.testing.assert_array_equal(S, expected)
    sims, idx = topk_cosine(KINDS[kind](Q), KINDS[kind](B), None)
    for i, row in enumerate(keys):
        exact = sorted(range(len(B)), key=lambda j: (-row[j][0] * row[j][1], j))
        np.testing.assert_array_equal(idx[i], exact)


def test_rows_equal_up_to_a_power_of_two_tie_exactly(simd_paths):
    """Any values (here continuous): a row and its multiples by powers of two have bit-equal
    cosines with every query, and a row's cosine with itself or a duplicate is exactly 1."""
    rng = np.random.default_rng(5)
    B = rng.standard_normal((20, 37)) * (rng.random((20, 37)) < 0.6)
    B[0] = 1 + rng.random(37)
    B = np.vstack([B, B[:5] * 0.25, B[:5] * 2.0 ** 40])
    for kind, conv in KINDS.items():
        for S in _with_simd_and_portable(simd_paths,
                                         lambda: _similarity_matrix(conv(B), conv(B))):
            for a, b in [(0, 20), (1, 21), (4, 24), (0, 25), (3, 28)]:
                np.testing.assert_array_equal(S[:, a], S[:, b], err_msg=kind)
            assert (np.diag(S)[np.abs(B).sum(axis=1) > 0] == 1).all(), kind


def test_float32_counts_exact_up_to_2_24():
    """float32 sums are exact while the squared norms stay below 2^24: counts of up to 1000
    over 16 features (squared norms up to 1.6e7) still give the documented values."""
    rng = np.random.default_rng(8)
    Q = rng.integers(0, 301, (6, 16))
    B = np.vstack([rng.integers(0, 1001, (10, 16)), Q * 3])  # Q * 3: equal cosines
    keys = [[exact_cosine_key(q, b) for b in B] for q in Q]
    assert max(int(v) for v in (B.astype(np.int64) ** 2).sum(axis=1)) < 2 ** 24
    expected = np.array([[documented_cosine(k, np.float32) for k in row] for row in keys])
    for kind in ("dense32", "csr32"):
        np.testing.assert_array_equal(_similarity_matrix(KINDS[kind](Q), KINDS[kind](B)),
                                      expected)


@pytest.mark.parametrize("bad, error, match", [
    (dict(Q=np.ones((3, 4)), B=np.ones((5, 3)), k=2), ValueError, "features"),
    (dict(Q=np.ones((3, 4)), B=np.ones((5, 4)), k=6), ValueError, "exceeds the 5"),
    (dict(Q=np.ones((3, 4)), B=np.ones((5, 4)), k=0), ValueError, ">= 1"),
    (dict(Q=np.ones((3, 4)), B=np.ones((5, 4)), k=2.0), TypeError, "positive int"),
    (dict(Q=np.ones((3, 4)), B=np.ones((5, 4)), k=2, exclude_self=True), ValueError,
     "same documents"),
    (dict(Q=np.ones((5, 4)), B=np.ones((5, 4)), k=5, exclude_self=True), ValueError,
     "4 other"),
    (dict(Q=np.full((2, 2), np.nan), B=np.ones((5, 2)), k=1), ValueError, "NaN"),
    (dict(Q=np.ones((0, 4)), B=np.ones((5, 4)), k=1), ValueError, "empty"),
    (dict(Q=np.array([["a"]]), B=np.ones((5, 1)), k=1), TypeError, "numeric"),
])
def test_topk_bad_input(bad, error, match):
    with pytest.raises(error, match=match):
        topk_cosine(**bad)


@pytest.mark.parametrize("kind", ["dense32", "dense64", "csr32", "csr64"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_topk_non_finite_found_by_the_norms(kind, bad):
    """The search does not scan its inputs for NaN and infinity: the rows' squared norms,
    computed as they are scaled, are not finite exactly when a row holds one. Each of Q and
    B, a bad value at a row's first or last feature, among tiny, huge or zero values, is
    reported by name; Q = B too."""
    rng = np.random.default_rng(1)
    for scale in (1e-40 if kind.endswith("64") else 1e-30, 1.0, 1e30):
        Q = rng.standard_normal((6, 37)) * scale
        B = rng.standard_normal((9, 37)) * scale
        for name, (row, col) in itertools.product("QB", [(0, 0), (5, 36), (3, 17)]):
            q, b = Q.copy(), B.copy()
            (q if name == "Q" else b)[row, col] = bad
            (q if name == "Q" else b)[row, :col] = 0  # (a row of zeros before it)
            with pytest.raises(ValueError, match=f"{name} contains NaN or infinity"):
                topk_cosine(KINDS[kind](q), KINDS[kind](b), 2)
        q = Q.copy()
        q[4, 20] = bad
        same = KINDS[kind](q)
        with pytest.raises(ValueError, match="Q contains NaN or infinity"):
            topk_cosine(same, same, 2)
        ok_q, ok_b = topk_cosine(KINDS[kind](Q), KINDS[kind](B), 2)
        assert np.isfinite(ok_q).all()


# ---- KNN ------------------------------------------------------------------------------------

def test_knn_melotti_table_2_1():
    """Table 2.1 (k=3): neighbours with cosines .8, .4, .3 and labels {c1,c2}, {c2,c3},
    {c1,c3,c4} give f = {c1: .8, c2: .8, c3: .4, c4: .3}; a fourth, less similar document
    (cosine .1, label c5) is not among the 3 neighbours."""
    def at(cos):  # unit vector with cosine `cos` to e1
        return [cos, np.sqrt(1 - cos * cos)]
    X_train = np.array([at(0.4), at(0.1), at(0.8), at(0.3)])
    Y_train = [{"c2", "c3"}, {"c5"}, {"c1", "c2"}, {"c1", "c3", "c4"}]
    model = KNN(k=3).fit(X_train, Y_train)
    np.testing.assert_array_equal(model.classes_, ["c1", "c2", "c3", "c4", "c5"])
    f = model.decision_function(np.array([[1.0, 0.0]]))
    np.testing.assert_allclose(f, [[0.8, 0.8, 0.4, 0.3, 0.0]], atol=1e-15)
    np.testing.assert_array_equal(model.predict(np.array([[1.0, 0.0]])), [[1, 1, 1, 1, 0]])
    # k=None (all documents, the thesis' setting) lets c5 in with its cosine .1
    f_all = KNN().fit(X_train, Y_train).decision_function(np.array([[1.0, 0.0]]))
    np.testing.assert_allclose(f_all, [[0.8, 0.8, 0.4, 0.3, 0.1]], atol=1e-15)


@pytest.mark.parametrize("aggregate", ["max", "sum", "count"])
@pytest.mark.parametrize("k", [1, 5, None])
@pytest.mark.parametrize("kind", ["dense64", "csr32"])
def test_knn_matches_reference(tied, aggregate, k, kind):
    Q, B = tied
    Y = (np.random.default_rng(5).random((B.shape[0], 6)) < 0.3).astype(np.uint8)
    Y[:, 4] = 0  # a label without positive example: allowed, belief 0
    model = KNN(k=k, aggregate=aggregate).fit(KINDS[kind](B), Y)
    F = model.decision_function(KINDS[kind](Q))
    ref = ref_knn(B, Y, Q, k, aggregate)
    np.testing.assert_allclose(F, ref, rtol=1e-12, atol=1e-15)
    assert F.dtype == np.float64 and F.min() >= 0 and F.max() <= 1
    np.testing.assert_array_equal(model.predict(KINDS[kind](Q)), ref > 0)


def test_knn_negative_cosines_count_as_zero():
    X = np.array([[-1.0, 0.0], [1.0, 0.0]])
    model = KNN(k=2, aggregate="sum").fit(X, np.array([[1, 0], [0, 1]]))
    np.testing.assert_allclose(model.decision_function([[1.0, 0.1]]),
                               [[0.0, np.cos(np.arctan(0.1)) / 2]])


def test_chunked_scoring(tied, monkeypatch):
    """Queries are searched a few at a time (here 3): KNN and MLkNN give the values of
    one search."""
    import fastrank.neighbors._classifier as nb
    Q, B = tied
    Y = (np.random.default_rng(1).random((B.shape[0], 5)) < 0.4).astype(np.uint8)
    whole = MLkNN(k=4).fit(B, Y)
    want = whole.decision_function(Q), whole.predict(Q)
    monkeypatch.setattr(nb, "_CHUNK_PAIRS", 3 * B.shape[0])  # 3 queries per chunk
    F = KNN().fit(B, Y).decision_function(Q)
    np.testing.assert_allclose(F, ref_knn(B, Y, Q, None, "max"), rtol=1e-12)
    monkeypatch.setattr(nb, "_CHUNK_PAIRS", 12)
    np.testing.assert_array_equal(whole.decision_function(Q), want[0])
    np.testing.assert_array_equal(whole.predict(Q), want[1])


def _spread(X, columns, width):
    """The dense matrix X as CSR of ``width`` columns, its column j moved to columns[j]."""
    rows, cols = np.nonzero(X)
    return sp.coo_matrix((X[rows, cols], (rows, columns[cols])), shape=(X.shape[0], width)
                         ).tocsr()


@pytest.mark.parametrize("width", [24, 2**24])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_wide_sparse_base_is_searched_on_its_stored_columns(dtype, width):
    """Documents over 24 features, or spread over 2**24 declared ones (2**31 - 1 in
    test_amplification.py), with query features that no base document has (they change
    the query's norm, never a dot product): the search, KNN and ML-kNN give exactly the
    references on the narrow dense matrices, and the base's index has one row per column
    it stores, not per declared feature."""
    from fastrank.neighbors._search import _Base
    rng = np.random.default_rng(11)
    Q = dyadic_docs(rng, 30, n_features=24)
    B = np.hstack([dyadic_docs(rng, 45, n_features=16), np.zeros((45, 8))])
    columns = np.arange(24) if width == 24 else \
        np.sort(rng.choice(4096, 24, replace=False)) * 4095
    Qw, Bw = (_spread(M, columns, width).astype(dtype) for M in (Q, B))
    assert _Base(Bw).index.shape == (np.count_nonzero(B.any(axis=0)), 45)
    sims, idx = topk_cosine(Qw, Bw, 6)
    ref_s, ref_i = ref_topk(Q, B, 6)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_array_equal(sims, ref_s.astype(dtype))
    Y = (rng.random((45, 5)) < 0.3).astype(np.uint8)
    np.testing.assert_allclose(KNN(k=4).fit(Bw, Y).decision_function(Qw),
                               ref_knn(B, Y, Q, 4, "max"), rtol=1e-6)
    F, P = ref_mlknn(B, Y, Q, 3, 1.0)
    model = MLkNN(k=3).fit(Bw, Y)
    np.testing.assert_allclose(model.decision_function(Qw), F, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(Qw), P)


@pytest.mark.parametrize("width, n_columns", [(50, 7), (50, 0), (50, 50), (10**6, 7)])
def test_restricting_to_columns_by_table_and_by_search(width, n_columns):
    """_restrict_columns against the dense column selection, with a table of the columns
    (at most as wide as the entries) and by binary search (wider)."""
    from fastrank.neighbors._search import _restrict_columns
    rng = np.random.default_rng(width + n_columns)
    columns = np.sort(rng.choice(50, n_columns, replace=False)) * (width // 50)
    X = sp.random(30, width, density=min(1, 200 / width), format="lil", random_state=1)
    X[:, columns[:3]] = 2.0  # stored entries in some of the columns at least
    X = sp.csr_matrix(X)
    R = _restrict_columns(X, columns)
    assert R.shape == (30, n_columns) and R.has_sorted_indices
    np.testing.assert_array_equal(R.toarray(), X[:, columns].toarray())


def test_a_base_that_stores_no_entry_gives_cosine_zero():
    """No stored column at all: every cosine is 0 and ties go by index."""
    sims, idx = topk_cosine(sp.csr_matrix([[1.0, 2.0]]), sp.csr_matrix((3, 2)), 3)
    assert sims.tolist() == [[0, 0, 0]] and idx.tolist() == [[0, 1, 2]]


# ---- MLkNN ----------------------------------------------------------------------------------

@pytest.mark.parametrize("k, s", [(1, 1.0), (10, 1.0), (7, 0.5)])
@pytest.mark.parametrize("kind", ["dense64", "csr64", "dense32"])
def test_mlknn_matches_fig_2_3(tied, k, s, kind):
    Q, B = tied
    Y = (np.random.default_rng(2).random((B.shape[0], 7)) < 0.3).astype(np.uint8)
    Y[:, 3] = 0
    model = MLkNN(k=k, s=s).fit(KINDS[kind](B), Y)
    F, P = ref_mlknn(B, Y, Q, k, s)
    np.testing.assert_allclose(model.decision_function(KINDS[kind](Q)), F, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(KINDS[kind](Q)), P)


def test_mlknn_fit_tables_by_hand():
    """4 training documents on a line, k=1, s=1: every document's nearest other document is
    its neighbour on the line. Labels [1,1,0,0]; neighbours 0->1, 1->0, 2->3, 3->2 (ties on
    cosine are impossible here). δ = [1,1,0,0]: c[1]=2 (docs 0,1), c'[0]=2 (docs 2,3)."""
    X = np.array([[1.0, 0.0], [1.0, 0.1], [0.1, 1.0], [0.0, 1.0]])
    model = MLkNN(k=1, s=1.0).fit(X, np.array([[1], [1], [0], [0]]))
    np.testing.assert_allclose(model.prior_, [(1 + 2) / (2 + 4)])
    np.testing.assert_allclose(model.cond_true_, [[(1 + 0) / (2 + 2), (1 + 2) / (2 + 2)]])
    np.testing.assert_allclose(model.cond_false_, [[(1 + 2) / (2 + 2), (1 + 0) / (2 + 2)]])
    # a query next to document 0: δ=1 -> posterior .5*.75 / (.5*.75 + .5*.25) = .75
    np.testing.assert_allclose(model.decision_function([[1.0, 0.05]]), [[0.75]])
    np.testing.assert_array_equal(model.predict([[1.0, 0.05], [0.0, 1.0]]), [[1], [0]])


def test_mlknn_map_tie_assigns_the_label():
    model = MLkNN(k=1).fit(np.array([[1.0, 0], [0, 1], [1, 1]]), np.array([[1], [0], [1]]))
    model.prior_ = np.array([0.5])
    model.cond_true_ = np.array([[0.25, 0.75]])
    model.cond_false_ = np.array([[0.25, 0.75]])   # a == b for every δ
    np.testing.assert_array_equal(model.decision_function([[1.0, 0]]), [[0.5]])
    np.testing.assert_array_equal(model.predict([[1.0, 0]]), [[1]])


def test_mlknn_s_zero_conventions():
    """s=0: a label never present has P(H1)=0 and likelihoods 0/0 -> 0; belief = prior = 0."""
    X = np.array([[1.0, 0], [0, 1], [1, 1], [1, 2]])
    model = MLkNN(k=2, s=0).fit(X, np.array([[1, 0], [0, 0], [1, 0], [0, 0]]))
    np.testing.assert_array_equal(model.cond_true_[1], [0, 0, 0])
    np.testing.assert_array_equal(model.decision_function(X)[:, 1], 0)
    assert np.isfinite(model.decision_function(X)).all()


def test_mlknn_training_never_counts_itself():
    """Two identical documents with different labels, k=1: each one's neighbour is the other;
    document 2 is orthogonal to both (cosine 0, a tie) and takes document 0 (lower index).
    δ = [0, 1, 1]: c[0] = 1 (doc 0); c'[1] = 2 (docs 1, 2)."""
    X = np.array([[1.0, 0], [1.0, 0], [0, 1]])
    model = MLkNN(k=1, s=1.0).fit(X, np.array([[1], [0], [0]]))
    np.testing.assert_allclose(model.cond_true_, [[2 / 3, 1 / 3]])
    np.testing.assert_allclose(model.cond_false_, [[1 / 4, 3 / 4]])


# ---- real data ------------------------------------------------------------------------------

def _mulan(shared_data, name):
    d = shared_data / "mulan" / name
    X, Y = read_sparse_arff(d / f"{name}.arff", d / f"{name}.xml")
    cut = X.shape[0] * 2 // 3
    return X[:cut], Y[:cut], X[cut:]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["medical", "enron"])
def test_real_data_topk_up_to_ties(shared_data, name):
    """Binary features: many cosines are equal in exact arithmetic but rounded differently
    by the normalised-dot-product references, so compare up to near-ties: the same sorted
    similarities, the same neighbours above the k-th similarity, our own order exactly as
    documented (exact ties: test_real_data_no_split_ties)."""
    Xtr, _, Xte = _mulan(shared_data, name)
    ref_s, _ = ref_topk(Xte, Xtr, 10)
    S = ref_topk(Xte, Xtr, Xtr.shape[0])[0]  # all sorted reference similarities
    dist, sk_i = NearestNeighbors(n_neighbors=10, metric="cosine", algorithm="brute") \
        .fit(Xtr).kneighbors(Xte)
    full = cosine_matrix(Xte, Xtr)
    for X_te, X_tr in [(Xte, Xtr), (Xte.toarray(), Xtr.toarray())]:
        sims, idx = topk_cosine(X_te, X_tr, 10)
        np.testing.assert_allclose(sims, ref_s, atol=1e-12)
        np.testing.assert_allclose(1 - dist, sims, atol=1e-12)
        np.testing.assert_allclose(np.take_along_axis(full, idx, 1), sims,
                                   atol=1e-12)
        assert np.all((sims[:, :-1] > sims[:, 1:]) |
                      ((sims[:, :-1] == sims[:, 1:]) & (idx[:, :-1] < idx[:, 1:])))
        for i in range(len(idx)):
            above = sims[i, -1] + 1e-9
            assert set(idx[i][sims[i] > above]) == set(sk_i[i][1 - dist[i] > above])
            assert (S[i] > above).sum() == (sims[i] > above).sum()


@pytest.mark.shared_data
def test_real_data_no_split_ties(shared_data):
    """Mulan medical (binary features): on a sample of test documents, every cosine equals
    the documented function of the exact rational (Python fractions), so documents with
    equal cosines tie bit for bit and come by index, and the k = 10 neighbours are those of
    the exact order, for dense and CSR, float32 and float64."""
    Xtr, _, Xte = _mulan(shared_data, "medical")
    sample = np.random.default_rng(0).choice(Xte.shape[0], 25, replace=False)
    Q, B = Xte[sample].toarray(), Xtr.toarray()
    Qi, Bi = Q.astype(np.int64), B.astype(np.int64)
    nb = B.shape[0]
    dots = Qi @ Bi.T  # integers: exact
    qa, ba = (Qi * Qi).sum(axis=1), (Bi * Bi).sum(axis=1)
    keys = [[(int(dots[i, j] > 0), Fraction(int(dots[i, j]) ** 2, int(qa[i] * ba[j]))
              if qa[i] * ba[j] else Fraction(0)) for j in range(nb)] for i in range(len(Q))]
    exact = [sorted(range(nb), key=lambda j: (-row[j][1], j)) for row in keys]
    n_tied = sum(len(row) - len(set(row)) for row in keys)
    assert n_tied > 1000  # the sample is full of equal cosines...
    naive = cosine_matrix(Q, B)  # ...which normalised dot products split
    assert any(len({k: None for k in row}) < len({(k, v) for k, v in zip(row, naive_row)})
               for row, naive_row in zip(keys, naive))
    for kind in KINDS:
        conv, dtype = KINDS[kind], KINDS[kind]([0.0]).dtype.type
        S = _similarity_matrix(conv(Q), conv(B))
        expected = np.array([[documented_cosine(k, dtype) for k in row] for row in keys])
        np.testing.assert_array_equal(S, expected, err_msg=kind)
        sims, idx = topk_cosine(conv(Q), conv(B), 10)
        np.testing.assert_array_equal(idx, [order[:10] for order in exact], err_msg=kind)


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["medical", "enron"])
def test_real_data_classifiers_against_references(shared_data, name):
    """Features jittered by a random factor 1 ± 1e-3 so that no two cosines are within
    rounding of each other: then the neighbours are unique and everything must agree
    exactly (exact ties are tested on dyadic data above)."""
    Xtr, Ytr, Xte = _mulan(shared_data, name)
    rng = np.random.default_rng(0)
    for X in (Xtr, Xte):
        X.data *= 1 + 1e-3 * rng.random(X.nnz)
    sims, idx = topk_cosine(Xte, Xtr, 10)
    ref_s, ref_i = ref_topk(Xte, Xtr, 10)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(sims, ref_s, atol=1e-12)
    np.testing.assert_array_equal(topk_cosine(Xte.toarray(), Xtr.toarray(), 10)[1], ref_i)
    sk_i = NearestNeighbors(n_neighbors=10, metric="cosine", algorithm="brute") \
        .fit(Xtr).kneighbors(Xte, return_distance=False)
    unique = sims[:, -1] > 0  # else the 10th place is a tie at cosine 0 (sklearn: any order)
    assert unique.mean() > 0.9
    np.testing.assert_array_equal(idx[unique], sk_i[unique])

    F, P = ref_mlknn(Xtr, Ytr, Xte, 10, 1.0)
    model = MLkNN(k=10).fit(Xtr, Ytr)
    np.testing.assert_allclose(model.decision_function(Xte), F, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(Xte), P)
    for aggregate in ("max", "count"):
        knn = KNN(k=10, aggregate=aggregate).fit(Xtr, Ytr)
        np.testing.assert_allclose(knn.decision_function(Xte),
                                   ref_knn(Xtr, Ytr, Xte, 10, aggregate), atol=1e-12)


# ---- estimator protocol, persistence, errors ---------------------------------------------

@pytest.mark.parametrize("est", [KNN(k=3, aggregate="sum"), MLkNN(k=4, s=0.5)])
def test_params_clone_and_save_load(tmp_path, tied, est):
    Q, B = tied
    Y = (np.random.default_rng(4).random((B.shape[0], 5)) < 0.3).astype(np.uint8)
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est
    c.set_params(k=5)
    assert c.k == 5
    for X in (B, sp.csr_matrix(B, dtype=np.float32)):
        model = clone(est).fit(X, Y)
        path = tmp_path / "model.npz"
        model.save(path)
        back = type(est).load(path)
        assert back.get_params() == model.get_params()
        np.testing.assert_array_equal(back.decision_function(Q), model.decision_function(Q))
        np.testing.assert_array_equal(back.predict(Q), model.predict(Q))


@pytest.mark.parametrize("est", [KNN(k=3), MLkNN(k=4)])
def test_search_base_built_once_and_never_saved(tmp_path, tied, est, monkeypatch):
    """The training documents' search base is built at fit (one per query kind) and at load
    (from the memory-mapped file), reused by every call, and neither saved nor pickled."""
    import pickle

    import fastrank.neighbors._classifier as nb
    Q, B = tied
    Y = (np.random.default_rng(4).random((B.shape[0], 5)) < 0.3).astype(np.uint8)
    built = []

    class Counting(nb._Base):
        def __init__(self, X):
            built.append((sp.issparse(X), X.dtype))
            super().__init__(X)

    monkeypatch.setattr(nb, "_Base", Counting)
    X32, Q32 = B.astype(np.float32), Q.astype(np.float32)
    model = clone(est).fit(X32, Y)
    assert built == [(False, np.float32)]
    want = [model.decision_function(Q32[i:i + 1]) for i in range(3)]
    model.decision_function(Q32)
    assert len(built) == 1                                     # calls reuse the base
    for q in (sp.csr_matrix(Q), Q, sp.csr_matrix(Q[:2]), Q[:2]):  # other kinds: once each
        model.decision_function(q)
    assert built[1:] == [(True, np.float64), (False, np.float64)]
    for q in (Q32, sp.csr_matrix(Q), Q):                       # as a model that never cached
        fresh = clone(est).fit(X32, Y)
        np.testing.assert_array_equal(model.decision_function(q), fresh.decision_function(q))

    path = tmp_path / "model.npz"
    model.save(path)
    with np.load(path) as f:
        assert sorted(f.files) == sorted(["__header__", "classes_", *est._fitted_arrays])
    built.clear()
    back = type(est).load(path)
    mapped = back.X_fit_
    while mapped is not None and not isinstance(mapped, np.memmap):
        mapped = mapped.base
    assert mapped is not None and built == [(False, np.float32)]  # built from the mapped file
    for i in range(3):
        np.testing.assert_array_equal(back.decision_function(Q32[i:i + 1]), want[i])
    assert len(built) == 1

    state = model.__getstate__()
    assert "_bases" not in state and "_bases" in model.__dict__
    again = pickle.loads(pickle.dumps(model))
    assert "_bases" not in again.__dict__
    np.testing.assert_array_equal(again.decision_function(Q32[:1]), want[0])
    assert "_bases" not in clone(model).__dict__


def test_load_rejects_corrupt_truncated_and_foreign_files(tmp_path, tied):
    _, B = tied
    model = MLkNN(k=3).fit(B, (B[:, :4] > 0).astype(int))
    path = tmp_path / "m.npz"
    model.save(path)
    raw = path.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="trunc.npz"):
        MLkNN.load(tmp_path / "trunc.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="junk.npz"):
        MLkNN.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "foreign.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="not a fastrank model"):
        MLkNN.load(tmp_path / "foreign.npz")
    with pytest.raises(ValueError, match="holds a MLkNN, not a KNN"):
        KNN.load(path)


@pytest.mark.parametrize("cls, name, damage, match", [
    (KNN, "Y_", lambda a: a[:-1], "Y_ is not"),
    (KNN, "Y_", lambda a: a * 2, "Y_ is not"),
    (KNN, "X_fit_", lambda a: a[:, :-1], "X_fit_ is not"),
    (MLkNN, "cond_true_", lambda a: a[:, :-1], "cond_true_"),
    (MLkNN, "prior_", lambda a: a[:-1], "prior_"),
])
def test_load_rejects_inconsistent_arrays(tmp_path, cls, name, damage, match):
    """The kernels index Y_ by neighbour and the tables by label and count: a model file
    whose arrays disagree is refused at load with a ValueError naming the problem."""
    rng = np.random.default_rng(0)
    X, Y = rng.random((12, 5)), (rng.random((12, 3)) < 0.5).astype(np.uint8)
    cls(k=3).fit(X, Y).save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        arrays = dict(f)
    arrays[name] = damage(arrays[name])
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=match):
        cls.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("est, fit_args, error, match", [
    (KNN(), (np.ones((3, 2)), np.ones((4, 2))), ValueError, "3 documents but Y has 4"),
    (KNN(aggregate="mean"), (np.ones((3, 2)), np.ones((3, 2))), ValueError, "'max', 'sum'"),
    (KNN(k=4), (np.ones((3, 2)), np.ones((3, 2))), ValueError, "exceeds the 3"),
    (MLkNN(k=3), (np.ones((3, 2)), np.ones((3, 2))), ValueError, "exceeds the 2 other"),
    (MLkNN(s=-1), (np.ones((3, 2)), np.ones((3, 2))), ValueError, "s must be"),
    (MLkNN(s=1e101), (np.ones((3, 2)), np.ones((3, 2))), ValueError, r"s must be .*overflow"),
    (MLkNN(k=None), (np.ones((3, 2)), np.ones((3, 2))), TypeError, "int k"),
    (MLkNN(k=1), (np.ones((1, 2)), np.ones((1, 2))), ValueError, "1 sample"),
    (MLkNN(k=1), (np.ones((0, 2)), np.ones((0, 2))), ValueError, r"0 sample\(s\)"),
    (KNN(), (np.ones((3, 2)), np.full((3, 2), 2)), ValueError, "binary"),
])
def test_fit_bad_input(est, fit_args, error, match):
    with pytest.raises(error, match=match):
        est.fit(*fit_args)


@pytest.mark.parametrize("est", [KNN(), MLkNN(k=2)])
def test_predict_bad_input(est):
    with pytest.raises(ValueError, match="not fitted"):
        est.predict(np.ones((2, 3)))
    est.fit(np.eye(4)[:, :3], np.eye(4)[:, :2])
    with pytest.raises(ValueError, match="X has 5 features, but .* expecting 3 features"):
        est.decision_function(np.ones((2, 5)))


def test_parameters_set_after_fit_are_checked_at_predict():
    """set_params after fit: an unknown aggregate is the ValueError fit gives, not a
    KeyError from the prediction."""
    model = KNN(k=2).fit(np.eye(4)[:, :3], np.eye(4)[:, :2]).set_params(aggregate="mean")
    for call in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match="unknown aggregate='mean'"):
            call(np.ones((2, 3)))


@pytest.mark.parametrize("flag", ["no", 1, None])
def test_exclude_self_must_be_a_bool(flag):
    with pytest.raises(TypeError, match="exclude_self must be True or False"):
        topk_cosine(np.eye(3), np.eye(3), 1, exclude_self=flag)


def test_mlknn_without_evidence_predicts_by_the_prior():
    """s = 0: a label whose likelihoods are both 0 for the observed δ gets its prior as
    belief, and is assigned iff that prior is >= 0.5 (prediction agrees with belief)."""
    X = np.array([[1.0, 0, 0], [0, 1, 0], [0, 1, 0.1], [0, 0.9, 0.1]])
    Y = np.array([[1], [0], [0], [0]], dtype=np.uint8)
    model = MLkNN(k=1, s=0.0).fit(X, Y)
    # doc 0 is the only positive; no negative document has it as nearest neighbour, so for a
    # query whose nearest neighbour is doc 0 (δ = 1) both likelihoods are 0
    assert model.cond_true_[0, 1] == 0 and model.cond_false_[0, 1] == 0
    query = np.array([[1.0, 0, 0.01]])
    assert model.decision_function(query)[0, 0] == pytest.approx(0.25)
    assert model.predict(query)[0, 0] == 0


def test_rows_of_subnormal_values_have_their_cosines():
    """A float64 row whose values are all subnormal (its scaling needs a power of two past
    2^1023) has the cosines NumPy gives the same row scaled up exactly, dense and CSR."""
    from fastrank import topk_cosine
    tiny = np.finfo(np.float64).smallest_subnormal
    X = np.array([[3 * tiny, 4 * tiny, 0.0], [3.0, 4.0, 0.0], [0.0, 1.0, 1.0],
                  [1e-310, -2e-310, 5e-311]])
    scaled = np.ldexp(X, -np.frexp(np.abs(X).max(axis=1, keepdims=True))[1])
    unit = scaled / np.linalg.norm(scaled, axis=1, keepdims=True)
    ref = unit @ unit.T
    for Q in (X, sp.csr_matrix(X)):
        sim, idx = topk_cosine(Q, Q, None)
        assert np.isfinite(sim).all()
        np.testing.assert_allclose(np.take_along_axis(ref, idx, axis=1), sim, rtol=1e-12,
                                   atol=1e-15)
