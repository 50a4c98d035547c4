"""fastrank.rank / tie_groups against SciPy, a slow NumPy reference, and the thesis' example."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from threadpoolctl import threadpool_limits

import fastrank
from fastrank.ranking import RANK_METHODS
from table_rows import rows_across_the_kept_table

SCIPY_METHODS = {"standard": "min", "modified": "max", "dense": "dense", "fractional": "average"}


def tied_scores(rng, shape, levels):
    """Heavily tied beliefs: `levels` distinct values per matrix, some negative, some zero."""
    return np.round(rng.random(shape) * levels) / levels - 0.25


def reference_groups(row):
    """Slow reference: labels by decreasing score (ties by index) and each tie group."""
    order = sorted(range(len(row)), key=lambda j: (-row[j], j))
    groups = [list(g) for _, g in itertools.groupby(order, key=lambda j: row[j])]
    return order, groups


@pytest.mark.parametrize("method", sorted(SCIPY_METHODS))
@pytest.mark.parametrize("levels", [2, 7, 63, 64, 65, 500, None])
def test_matches_scipy_rankdata(method, levels):
    rng = np.random.default_rng(levels or 1)
    S = rng.random((60, 257)) if levels is None else tied_scores(rng, (60, 257), levels)
    expected = ss.rankdata(-S, method=SCIPY_METHODS[method], axis=1)
    assert np.array_equal(fastrank.rank(S, method), expected)
    assert np.array_equal(fastrank.rank(S, SCIPY_METHODS[method]), expected)  # scipy alias
    assert np.array_equal(fastrank.rank(S.astype(np.float32), method),
                          ss.rankdata(-S.astype(np.float32), method=SCIPY_METHODS[method], axis=1))
    assert np.array_equal(fastrank.rank(np.asfortranarray(S), method), expected)
    assert np.array_equal(fastrank.rank(sp.csr_matrix(S), method), expected)


@pytest.mark.parametrize("q", [1, 2, 5, 31, 32, 33, 300])
def test_small_and_boundary_row_lengths(q):
    rng = np.random.default_rng(q)
    S = tied_scores(rng, (40, q), 3)
    for method, scipy_method in SCIPY_METHODS.items():
        assert np.array_equal(fastrank.rank(S, method),
                              ss.rankdata(-S, method=scipy_method, axis=1))


def test_dtypes_and_rank_types():
    S = [[0.5, 0.2, 0.2, 0.1]]
    assert fastrank.rank(S, "dense").dtype == np.int32
    assert fastrank.rank(S, "fractional").dtype == np.float64
    assert fastrank.rank(np.array(S, dtype=np.int64), "standard").dtype == np.int32


def test_thesis_figure_2_1():
    """melotti2009 Fig. 2.1: beliefs .5 .2 .2 .1 under each ranking type."""
    S = np.array([[0.5, 0.2, 0.2, 0.1]])
    assert fastrank.rank(S, "dense").tolist() == [[1, 2, 2, 3]]
    assert fastrank.rank(S, "standard").tolist() == [[1, 2, 2, 4]]
    assert fastrank.rank(S, "modified").tolist() == [[1, 3, 3, 4]]
    assert fastrank.rank(S, "fractional").tolist() == [[1, 2.5, 2.5, 4]]
    assert fastrank.rank(S, "stable").tolist() == [[1, 2, 3, 4]]
    seen = {tuple(fastrank.rank(S, "ordinal", random_state=seed)[0]) for seed in range(50)}
    assert seen == {(1, 2, 3, 4), (1, 3, 2, 4)}


def test_signed_zero_and_infinities_are_ordinary_values():
    S = np.array([[0.0, -0.0, np.inf, -np.inf, 1.0, -1.0]])
    assert fastrank.rank(S, "standard").tolist() == [[3, 3, 1, 6, 2, 5]]
    assert fastrank.rank(sp.csr_matrix(S), "standard").tolist() == [[3, 3, 1, 6, 2, 5]]


def assert_ranks_of_scipy(S):
    """fastrank's ranks of S, every method, equal scipy's (stable: scipy's ordinal)."""
    for method, scipy_method in SCIPY_METHODS.items():
        assert np.array_equal(fastrank.rank(S, method),
                              ss.rankdata(-S, method=scipy_method, axis=1)), method
    assert np.array_equal(fastrank.rank(S, "stable"), ss.rankdata(-S, method="ordinal", axis=1))


def test_float32_rows_looked_up_in_a_table_kept_from_row_to_row(simd_paths):
    """The float32 few-distinct sort keeps its table of values from one row to the next
    (each row counting only the values it holds): rows holding a subset of the last row's
    values, values crowding one slot (kept aside as extras), rows of more than 32 values
    (another sort, the table emptied), NaN rows, then few values again: scipy's ranks and
    the stable order on every path, row after row."""
    S = rows_across_the_kept_table(np.random.default_rng(5), 240, 90)
    for _ in simd_paths:
        assert_ranks_of_scipy(S)
        bad = S.copy()
        bad[100, 3] = np.nan
        with pytest.raises(ValueError, match="NaN .*row 100"):
            fastrank.rank(bad, "dense")


@pytest.mark.parametrize("distinct", [1, 2, 21, 32, 33])
@pytest.mark.parametrize("q", [200, 300, 1000, 1025])
def test_float32_rows_of_few_distinct_beliefs(simd_paths, distinct, q):
    """Contiguous float32 rows of at most 32 distinct beliefs are counted a vector at a time
    on AVX-512 (each label's belief looked up in a table of 64 slots, those whose slot was
    taken compared one by one): with signed zeros and infinities among the beliefs, every
    path gives scipy's ranks, the stable order and the tie groups, for rows of several
    lengths (whole vectors of 16 and 64 labels, and not); 33 take the other sort; a NaN
    among them is found."""
    rng = np.random.default_rng(distinct)
    pool = np.r_[[-0.0, 0.0, np.inf, -np.inf, 1.0, -1.0], rng.standard_normal(40)]
    values = pool[:distinct + 1].astype(np.float32)  # (-0.0 and 0.0: one belief)
    S = rng.choice(values, size=(30, q))
    S[0, :40] = values[-1]  # a run of one belief across several vectors
    bad = S.copy()
    bad[3, q - 100] = np.nan
    for _ in simd_paths:
        assert_ranks_of_scipy(S)
        g = fastrank.tie_groups(S)
        for i, row in enumerate(S):
            order, groups = reference_groups(row)
            assert g.order[i].tolist() == order
            assert g.end[i].tolist() == [end for end, group in zip(
                itertools.accumulate(len(group) for group in groups), groups) for _ in group]
        with pytest.raises(ValueError, match="NaN .*row 3"):
            fastrank.rank(bad, "dense")


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_implicit_and_stored_zeros_form_one_group(index_dtype):
    rng = np.random.default_rng(3)
    S = tied_scores(rng, (50, 90), 5)
    S[rng.random(S.shape) < 0.6] = 0.0
    S[1, :] = 0.0  # a row with no stored value at all
    # store every non-zero plus some explicit zeros, with the requested index dtype
    stored = (S != 0) | (rng.random(S.shape) < 0.1)
    rows, cols = np.nonzero(stored)
    indptr = np.searchsorted(rows, np.arange(S.shape[0] + 1)).astype(index_dtype)
    C = sp.csr_matrix((S[rows, cols], cols, indptr), shape=S.shape)
    C.indices, C.indptr = C.indices.astype(index_dtype), C.indptr.astype(index_dtype)
    assert C.indices.dtype == index_dtype and (C.data == 0).sum() > 0
    for method, scipy_method in SCIPY_METHODS.items():
        assert np.array_equal(fastrank.rank(C, method),
                              ss.rankdata(-S, method=scipy_method, axis=1))


def test_stable_is_label_order_inside_groups():
    rng = np.random.default_rng(5)
    S = tied_scores(rng, (30, 40), 4)
    ranks = fastrank.rank(S, "stable")
    for i, row in enumerate(S):
        order, _ = reference_groups(row)
        assert np.array_equal(np.argsort(ranks[i]), order)


def test_ordinal_is_a_group_preserving_permutation_and_reproducible():
    rng = np.random.default_rng(6)
    S = tied_scores(rng, (200, 50), 4)
    ranks = fastrank.rank(S, "ordinal", random_state=42)
    assert np.array_equal(np.sort(ranks, axis=1), np.tile(np.arange(1, 51), (200, 1)))
    standard = fastrank.rank(S, "standard")
    modified = fastrank.rank(S, "modified")
    assert ((standard <= ranks) & (ranks <= modified)).all()
    assert np.array_equal(ranks, fastrank.rank(S, "ordinal", random_state=42))
    assert np.array_equal(ranks, fastrank.rank(S, "ordinal",
                                               random_state=np.random.default_rng(42)))
    assert not np.array_equal(ranks, fastrank.rank(S, "ordinal", random_state=43))
    assert np.array_equal(ranks, fastrank.rank(sp.csr_matrix(S), "ordinal", random_state=42))


def reference_ordinal(row, seed, i, stats=None):
    """Slow reference of the ordinal draw of row i, written from its definition: the row's
    splitmix64 stream starts at row_state(seed, i); the tie groups, labels in index order,
    are shuffled in turn by Fisher-Yates (position start + m - 1 swapped with start + j, j
    uniform in [0, m) for m = group size down to 2), step k of the row taking the high half
    of the stream's (k // 2)-th output when k is even, its low half when odd, j by Lemire's
    multiply-shift; while the product's low word is below 2**32 mod m, step k draws again
    (the high half) from its own stream, splitmix64 from row_state ^ (k + 1) *
    0x632BE59BD9B4E019. ``stats["rejected"]`` counts those draws."""
    from ref_wnn import MASK, row_state, splitmix64
    first = row_state(seed, i)
    state = [first]

    def draw():
        state[0], out = splitmix64(state[0])
        return out

    def bounded(x, m, step):
        product = x * m
        if product & 0xFFFFFFFF < m:
            side = first ^ (((step + 1) * 0x632BE59BD9B4E019) & MASK)
            while product & 0xFFFFFFFF < (-m & 0xFFFFFFFF) % m:
                side, out = splitmix64(side)
                product = (out >> 32) * m
                if stats is not None:
                    stats["rejected"] = stats.get("rejected", 0) + 1
        return product >> 32

    order, groups = reference_groups(row)
    start, step, bits = 0, 0, 0
    for group in groups:
        for m in range(len(group), 1, -1):
            if step % 2 == 0:
                bits = draw()
            j = start + bounded(bits & 0xFFFFFFFF if step % 2 else bits >> 32, m, step)
            step += 1
            order[start + m - 1], order[j] = order[j], order[start + m - 1]
        start += len(group)
    ranks = np.empty(len(row), dtype=np.int64)
    ranks[order] = np.arange(1, len(row) + 1)
    return ranks


@pytest.mark.parametrize("random_state", [0, 42, 2**32 + 7])
def test_ordinal_draw_matches_its_reference(random_state):
    """The ordinal ranks, and the ordinal metrics that shuffle the same way, are the
    reference's draw, bit for bit (dense and CSR, groups of 1 to 300 labels)."""
    from fastrank.metrics._common import draw_seed
    rng = np.random.default_rng(random_state)
    seed = draw_seed(random_state)
    for S in (tied_scores(rng, (40, 30), 3), tied_scores(rng, (3, 300), 2)):
        want = np.array([reference_ordinal(row, seed, i) for i, row in enumerate(S)])
        assert np.array_equal(fastrank.rank(S, "ordinal", random_state=random_state), want)
        assert np.array_equal(fastrank.rank(sp.csr_matrix(S), "ordinal",
                                            random_state=random_state), want)
        y = (rng.random(S.shape) < 0.3).astype(np.uint8)
        coverage = [max(want[i][y[i] == 1], default=1) - 1 for i in range(len(S))]
        assert fastrank.metrics.coverage(y, S, ties="ordinal", random_state=random_state) == \
            pytest.approx(np.mean(coverage), abs=0, rel=1e-15)


@pytest.mark.parametrize("random_state", [0, 3])
def test_ordinal_draws_again_from_the_steps_own_stream(random_state):
    """A tie group of 300 000 labels rejects a few of Lemire's products (about 5 a row): the
    ranks are still the reference's, whose every step draws again from its own stream, so
    a group's numbers do not depend on the groups before it. ``evaluate`` shuffles only the
    groups it reads (here the first and the last, not the large one between them, with no
    relevant label): its ordinal values are those of the reference's ranks."""
    from fastrank.metrics._common import draw_seed
    seed = draw_seed(random_state)
    row = np.zeros(300_000)
    stats = {}
    want = reference_ordinal(row, seed, 0, stats)
    assert stats["rejected"] >= 1
    assert np.array_equal(fastrank.rank(row[None, :], "ordinal", random_state=random_state)[0],
                          want)
    assert np.array_equal(fastrank.rank(sp.csr_matrix(row[None, :]), "ordinal",
                                        random_state=random_state)[0], want)
    row = np.repeat([1.0, 0.5, 0.25], [6, 150_000, 150_000])
    y = np.zeros(row.size, dtype=np.uint8)
    y[[1, 4, 150_006 + 7, 150_006 + 90_000, 150_006 + 149_999]] = 1
    stats = {}
    ranks = reference_ordinal(row, seed, 0, stats)
    assert stats["rejected"] >= 1
    rel, irr = ranks[y == 1], ranks[y == 0]
    got = fastrank.evaluate(y[None, :], row[None, :], ties="ordinal",
                            random_state=random_state)["ordinal"]
    assert got["coverage"] == rel.max() - 1
    assert got["one_error"] == 1 - y[np.argmin(ranks)]
    lost = np.searchsorted(np.sort(irr), rel).sum()  # irrelevant labels ranked above each
    assert got["ranking_loss"] == pytest.approx(lost / (rel.size * irr.size), rel=1e-15)


def test_ordinal_does_not_depend_on_thread_count():
    rng = np.random.default_rng(7)
    S = tied_scores(rng, (3000, 40), 3)
    with threadpool_limits(1, user_api="openmp"):
        one = fastrank.rank(S, "ordinal", random_state=9)
    with threadpool_limits(2, user_api="openmp"):
        two = fastrank.rank(S, "ordinal", random_state=9)
    assert np.array_equal(one, two)


def test_ordinal_is_uniform_over_orders_of_a_tie_group():
    """Chi-square goodness of fit: the 24 orders of a 4-label tie group are equally likely."""
    S = np.tile([0.9, 0.3, 0.3, 0.3, 0.3, 0.1], (24_000, 1))
    ranks = fastrank.rank(S, "ordinal", random_state=2024)[:, 1:5]
    codes = {perm: k for k, perm in enumerate(itertools.permutations(range(2, 6)))}
    counts = np.bincount([codes[tuple(r)] for r in ranks.tolist()], minlength=24)
    assert counts.sum() == 24_000
    _, p = ss.chisquare(counts)
    assert p > 1e-3, counts


def test_tie_groups_against_reference():
    rng = np.random.default_rng(8)
    S = tied_scores(rng, (40, 70), 6)
    for matrix in (S, sp.csr_matrix(S), np.asfortranarray(S.astype(np.float32))):
        tg = fastrank.tie_groups(matrix)
        for i, row in enumerate(S):
            order, groups = reference_groups(row)
            assert tg.order[i].tolist() == order
            pos = 0
            for g in groups:
                assert tg.start[i, pos:pos + len(g)].tolist() == [pos] * len(g)
                assert tg.end[i, pos:pos + len(g)].tolist() == [pos + len(g)] * len(g)
                pos += len(g)
            assert tg.n_groups[i] == len(groups)
        # ranks follow from the structure without sorting again
        modified = np.empty_like(tg.end)
        np.put_along_axis(modified, tg.order, tg.end, axis=1)
        assert np.array_equal(modified, fastrank.rank(S, "modified"))


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=40),
                  elements=st.sampled_from([-1.5, -0.0, 0.0, 0.25, 0.5, 1.0, np.inf])))
def test_property_matches_scipy_on_arbitrary_tied_matrices(S):
    for method, scipy_method in SCIPY_METHODS.items():
        expected = ss.rankdata(-S, method=scipy_method, axis=1)
        assert np.array_equal(fastrank.rank(S, method), expected)
        assert np.array_equal(fastrank.rank(sp.csr_matrix(S), method), expected)


@pytest.mark.parametrize("bad, error, match", [
    (np.array([[0.1, np.nan], [0.2, 0.3], [np.nan, 1]]), ValueError, "NaN .*row 0"),
    (np.array([[0.1, 0.2], [0.2, np.nan]]).T, ValueError, "NaN .*row 1"),
    (np.array([0.1, 0.2]), ValueError, "2-D"),
    (np.zeros((0, 3)), ValueError, "empty"),
    (np.zeros((3, 0)), ValueError, "empty"),
    (np.array([["a", "b"]]), TypeError, "numeric"),
    (np.array([[1 + 1j, 2]]), TypeError, "numeric"),
    (sp.csr_matrix(np.array([[0.0, 1.0], [np.nan, 0.0]])), ValueError, "NaN .*row 1"),
])
def test_bad_input_is_a_clear_error(bad, error, match):
    with pytest.raises(error, match=match):
        fastrank.rank(bad, "dense")


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown method='first'.*'ordinal'.*'modified'"):
        fastrank.rank([[1.0, 2.0]], "first")
    assert set(RANK_METHODS) == {"ordinal", "stable", "dense", "standard", "modified",
                                 "fractional"}


def test_bad_random_state():
    with pytest.raises(TypeError, match="random_state"):
        fastrank.rank([[1.0, 1.0]], "ordinal", random_state="seed")


def test_tie_groups_working_memory_is_its_output():
    """NumPy allocations during tie_groups are its three int32 outputs and nothing of the
    matrix's size besides (the kernel's per-thread scratch is a few bytes per label)."""
    import tracemalloc
    rng = np.random.default_rng(3)
    S = (rng.integers(0, 5, size=(20_000, 50)) / 5).astype(np.float32)
    fastrank.tie_groups(S[:2])
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        g = fastrank.tie_groups(S)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    outputs = g.order.nbytes + g.end.nbytes + g.start.nbytes
    assert outputs <= peak <= outputs + 64 * 1024
    # and the starts are right: the first position of each position's group
    for i in range(0, 20_000, 997):
        for p in range(50):
            first = p
            while first > 0 and S[i, g.order[i, first - 1]] == S[i, g.order[i, p]]:
                first -= 1
            assert g.start[i, p] == first


def test_tie_groups_on_sparse_input_has_group_starts():
    S = sp.csr_matrix(np.array([[0.0, 0.5, -1.0, 0.0, 0.5], [0.0, 0.0, 0.0, 0.0, 0.0]]))
    g = fastrank.tie_groups(S)
    assert g.order.tolist() == [[1, 4, 0, 3, 2], [0, 1, 2, 3, 4]]
    assert g.start.tolist() == [[0, 0, 2, 2, 4], [0, 0, 0, 0, 0]]
    assert g.end.tolist() == [[2, 2, 4, 4, 5], [5, 5, 5, 5, 5]]


def test_one_random_state_default_everywhere():
    """Random tie-breaking is reproducible by default, and the default draws the same order
    in rank, cutoff and the metrics."""
    from fastrank import metrics as M
    rank = fastrank.rank
    s = np.round(np.random.default_rng(3).random((20, 6)) * 2) / 2
    y = (s > 0.4).astype(np.uint8)
    assert np.array_equal(rank(s, "ordinal"), rank(s, "ordinal", random_state=0))
    assert np.array_equal(M.cutoff(s, y, ties="ordinal"),
                          M.cutoff(s, y, ties="ordinal", random_state=0))
    assert len({rank(s, "ordinal", random_state=None).tobytes() for _ in range(5)}) > 1


@pytest.mark.parametrize("call", [fastrank.rank, fastrank.tie_groups])
def test_errors_name_the_argument_scores(call):
    for bad, exc in [([[np.nan, 1.0]], ValueError), ([1.0, 2.0], ValueError),
                     (np.empty((0, 3)), ValueError), ([["a", "b"]], TypeError)]:
        with pytest.raises(exc, match=r"^scores ") as info:
            call(bad)
        assert "y_score" not in str(info.value)


def test_results_that_cannot_fit_are_refused_up_front(monkeypatch):
    """A sparse matrix declares its width and its ranks are dense: when the results and the
    sorting scratch need more than the process can allocate (here 1 MiB), rank and
    tie_groups raise ValueError naming the shape and both sizes before allocating; what
    fits is ranked as SciPy ranks it. (The 2**31 - 1 wide case runs memory-capped in
    test_amplification.py.)"""
    import fastrank._validation as validation
    monkeypatch.setattr(validation, "available_memory", lambda: 2**20)
    wide = sp.csr_matrix(([0.5], [99_999], [0, 1]), shape=(1, 100_000))
    for call in (lambda: fastrank.rank(wide), lambda: fastrank.rank(wide, "fractional"),
                 lambda: fastrank.tie_groups(wide)):
        with pytest.raises(ValueError, match=r"ranking a 1 x 100000 matrix \(\d+ bytes of "
                           r"results per entry\) needs [\d.]+ MiB, more than the 1\.0 MiB"):
            call()
    narrow = sp.csr_matrix(([0.5, 0.25], [2, 7], [0, 2]), shape=(1, 10))
    np.testing.assert_array_equal(fastrank.rank(narrow, "standard"),
                                  ss.rankdata(-narrow.toarray(), method="min", axis=1))
