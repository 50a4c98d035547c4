"""The single ranking metrics computed by counting (no row sort) against the sort-based
kernel that ``evaluate`` runs: the same bits, per document and averaged, for every ranking
type they serve, dense (C and Fortran order) and CSR input, float32 and float64, weights;
and against the slow NumPy reference of the definitions (Melotti 2009, ch. 4)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import ref_metrics as ref
from fastrank import metrics as M
from fastrank._ext import tie_counts
from fastrank.metrics._common import check_inputs, column, family, run_kernel, score_args
from fastrank._validation import int32_indexed
from table_rows import rows_across_the_kept_table

COUNTED_TIES = ("dense", "standard", "modified", "expected")  # and the ordinal forms
PUBLIC = {"one_error": M.one_error, "coverage": M.coverage, "ranking_loss": M.ranking_loss,
          "ap_position": lambda *a, **k: M.average_precision(*a, per="position", **k),
          "ap_label": lambda *a, **k: M.average_precision(*a, per="label", **k),
          "r_precision": M.r_precision}
REFERENCE = {"one_error": ref.one_error, "coverage": ref.coverage,
             "ranking_loss": ref.ranking_loss, "ap_position": ref.ap_position,
             "ap_label": ref.ap_label, "r_precision": ref.r_precision}
LEVELS = [0.0, -0.0, 0.1, 0.25, 0.5, 1.0, -0.5, np.inf, -np.inf]


def layouts(s):
    """Dense C and Fortran order; CSR with int32 indices, and with int64 ones (which the
    public functions copy to int32 for the counting kernel)."""
    csr64 = sp.csr_matrix(s)
    csr64.indices, csr64.indptr = csr64.indices.astype(np.int64), csr64.indptr.astype(np.int64)
    return {"C": np.ascontiguousarray(s), "F": np.asfortranarray(s), "CSR": sp.csr_matrix(s),
            "CSR64": csr64}


def bits(a):
    return np.asarray(a, dtype=np.float64).view(np.int64)


def assert_same_per_document(y, s, seed=12345):
    """Counting kernel == sort-based kernel, per document, for every metric and ranking
    type (ordinal: from the same seed)."""
    for name_s, S in layouts(s).items():
        yy, SS = check_inputs(y, S)
        counted = int32_indexed(SS) if name_s == "CSR64" else SS
        for ties in tie_counts.TIES:
            doc, _, _ = run_kernel(yy, SS, family(ties), seed)
            for name, code in tie_counts.METRICS.items():
                if (name, ties) not in tie_counts.SERVED:
                    continue
                out = np.empty(y.shape[0])
                weight = np.random.default_rng(seed).random(y.shape[0])
                _, total = tie_counts.values(*score_args(counted), yy, code,
                                             tie_counts.TIES[ties], seed, 0, weight, out)
                want = doc[:, column(ties, name)]
                assert np.array_equal(bits(out), bits(want)), (name, ties, name_s, out, want)
                assert bits(total) == bits((want * weight).sum())


@st.composite
def tied_case(draw, max_n=8, max_q=40):
    n = draw(st.integers(1, max_n))
    q = draw(st.integers(1, max_q))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        levels = rng.choice(LEVELS, size=draw(st.integers(1, 5)))
        s = rng.choice(levels, size=(n, q))
    else:  # many distinct beliefs (rows with more relevant levels than counting passes)
        s = np.round(rng.random((n, q)) * draw(st.sampled_from([3, 50, 10**6])))
    y = (rng.random((n, q)) < draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))).astype(np.uint8)
    return y, s.astype(draw(st.sampled_from([np.float32, np.float64])))


@settings(max_examples=150, deadline=None)
@given(tied_case())
def test_counting_equals_the_sort_path_bit_for_bit(case):
    assert_same_per_document(*case)


@settings(max_examples=25, deadline=None)
@given(tied_case(max_q=80))
def test_every_instruction_set_path_counts_the_same(simd_paths, case):
    """The counting pass has a copy per instruction-set level: each gives the sort path's
    bits (rows long enough for the vector loops and their tails)."""
    for _ in simd_paths:
        assert_same_per_document(*case)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("q", [70, 130])
def test_relevant_beliefs_gathered_from_vectors_and_tail(simd_paths, dtype, q):
    """The gather of a row's relevant beliefs reads the truth 32 or 64 labels a vector, then
    a tail one label at a time: relevant labels at each end of either part give the sort
    path's values, and a truth value other than 0/1 in either part is found."""
    rng = np.random.default_rng(7)
    s = (rng.integers(0, 5, size=(6, q)) / 4).astype(dtype)
    y = np.zeros((6, q), dtype=np.uint8)
    tail = q - q % 32
    for i, cols in enumerate(([0], [tail - 1], [tail], [q - 1], [0, tail - 1, tail, q - 1],
                              list(range(q)))):
        y[i, cols] = 1
    for _ in simd_paths:
        assert_same_per_document(y, s)
        for j in (tail - 1, q - 1):
            bad = y.copy()
            bad[2, j] = 2
            with pytest.raises(ValueError) as want:
                M.evaluate(bad, s)
            for name, f in PUBLIC.items():
                if (name, "modified") in tie_counts.SERVED:
                    with pytest.raises(ValueError) as got:
                        f(bad, s, ties="modified")
                    assert str(got.value) == str(want.value), (name, j)


@settings(max_examples=40, deadline=None)
@given(tied_case(), st.sampled_from(COUNTED_TIES), st.booleans())
def test_public_functions_equal_evaluate_bit_for_bit(case, ties, weighted):
    y, s = case
    w = np.random.default_rng(0).random(y.shape[0]) + 0.5 if weighted else None
    res = M.evaluate(y, s, ties=(ties,), sample_weight=w)[ties]
    for name, f in PUBLIC.items():
        if name == "ap_label":
            continue  # evaluate reports the thesis form
        key = "average_precision" if name == "ap_position" else name
        for S in layouts(s).values():
            got = f(y, S, ties=ties, sample_weight=w)
            assert bits(got) == bits(res[key]), (name, ties, got, res[key])


@settings(max_examples=60, deadline=None)
@given(tied_case(max_n=5, max_q=12), st.sampled_from(("dense", "standard", "modified")))
def test_counting_agrees_with_the_reference_definitions(case, ties):
    y, s = case
    r = ref.ranks(s, ties)
    for name, f in PUBLIC.items():
        got = f(y, sp.csr_matrix(s), ties=ties)
        assert abs(got - np.mean(REFERENCE[name](y, s, r))) < 1e-12, (name, ties)


@pytest.mark.parametrize("q", [1, 2, 7, 64])
def test_edge_rows(q):
    """No relevant label, every label relevant, every belief tied (zero, non-zero, -inf),
    one relevant label on top and at the bottom, more relevant levels than counting passes."""
    rows, truth = [], []
    ramp = np.arange(q, 0, -1, dtype=np.float64)
    for s_row in (np.zeros(q), np.full(q, 0.3), np.full(q, -np.inf), ramp, -ramp):
        for y_row in (np.zeros(q), np.ones(q), np.eye(1, q, 0)[0], np.eye(1, q, q - 1)[0]):
            rows.append(s_row)
            truth.append(y_row)
    assert_same_per_document(np.array(truth, dtype=np.uint8), np.array(rows))


@pytest.mark.parametrize("levels", [[0.0, 0.5, 1.0], [-1.0, 0.0, 0.5], [-0.5, -0.0, -2.0]])
def test_r_precision_of_rows_with_more_relevant_labels_than_the_selection(levels):
    """R-precision selects the top |C| beliefs for up to 64 relevant labels and sorts rows
    with more; both agree with the sort path (belief-0 groups above, at and below the
    boundary)."""
    rng = np.random.default_rng(6)
    s = rng.choice(levels, size=(40, 150))
    y = (rng.random((40, 150)) < rng.choice([0.2, 0.43, 0.6, 0.95], size=(40, 1)))
    assert (y.sum(1) > 64).any() and (y.sum(1) <= 64).any()
    assert_same_per_document(y.astype(np.uint8), s)


def test_r_precision_boundary_in_a_gap_between_relevant_levels():
    """The |C|-th largest belief lies between two relevant levels (implicit zeros among the
    beliefs there in CSR), at a relevant level, or below more relevant levels than the
    counting passes (40 distinct relevant beliefs on top: the row is sorted)."""
    ramp = np.linspace(1.0, 0.01, 60)
    rows = [(np.array([0.9, 0.0, 0.0, 0.5, -1.0, 0.0]), [1, 0, 0, 0, 1, 0]),
            (np.array([0.9, 0.7, 0.7, 0.5, -1.0, 0.0]), [0, 0, 0, 1, 1, 1]),
            (np.array([-0.5, 0.0, 0.0, -0.2, -1.0, 0.0]), [0, 0, 0, 0, 1, 1]),
            (np.array([0.3, 0.3, 0.3, 0.3, 0.2, 0.1]), [0, 0, 0, 0, 1, 1])]
    for s_row, y_row in rows:
        assert_same_per_document(np.array([y_row], dtype=np.uint8), s_row[None, :])
    y = np.zeros((2, 60), dtype=np.uint8)
    y[0, :40] = 1
    y[1, ::3] = 1
    assert_same_per_document(y, np.vstack([ramp, ramp[::-1]]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_r_precision_boundary_among_tied_beliefs_of_a_gap(simd_paths, dtype):
    """The boundary lies in a gap of tied beliefs between two relevant levels (two relevant
    labels at 1.0, the others at 0.1) that fills whole vectors (16 float32 or 8 float64
    lanes all in the gap) and partial ones before a row tail; how many gap labels tie with
    the boundary sets the value. The gap's values are walked down from its largest (rows
    whose gap starts with tied values) or gathered (rows whose gap starts with one untied
    value, 0.95): every path gives the sort path's bits."""
    rng = np.random.default_rng(7)
    q = 61
    s = rng.choice([0.9, 0.8, 0.7], size=(8, q))
    y = np.zeros((8, q), dtype=np.uint8)
    for i, n_low in enumerate([1, 9, 25, 45] * 2):  # the boundary at 0.9, 0.9, 0.8, 0.7
        cols = rng.permutation(q)
        s[i, cols[:2]], y[i, cols[:2]] = 1.0, 1
        s[i, cols[2:2 + n_low]], y[i, cols[2:2 + n_low]] = 0.1, 1
        if i >= 4:
            s[i, cols[-1]] = 0.95
    for _ in simd_paths:
        assert_same_per_document(y, s.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("q", [5, 13, 21, 37, 70])
def test_dense_coverage_distinct_beliefs_in_every_lane(simd_paths, dtype, q):
    """Dense coverage counts the distinct beliefs above the lowest relevant one, a vector at
    a time while they are at most 32 (then a hash set; float32 on AVX2 and AVX-512: looked up
    in a table of the values seen, those whose slot was taken compared one by one):
    negative beliefs with no zero among them (a row's last, partial vector must not count
    its unused lanes), 1 to 40 distinct values, random ones (slots shared), -0.0 and 0.0
    (one value), rows of every length modulo the vector widths, on every path."""
    rng = np.random.default_rng(q)
    rows = []
    level_sets = [-1.0 - np.arange(n_levels) / 8 for n_levels in (1, 3, 12, 13, 31, 32, 33, 40)]
    level_sets += [np.array([-1.0, -0.0, 0.0, 0.5, 1.5]), -1.0 - rng.random(31),
                   -1.0 - rng.random(33)]
    for levels in level_sets:
        rows.append(rng.choice(levels, size=q))
    s = np.array(rows)
    y = np.zeros(s.shape, dtype=np.uint8)
    y[np.arange(len(s)), np.argmin(s, axis=1)] = 1  # the lowest belief relevant
    for _ in simd_paths:
        assert_same_per_document(y, s.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("q", [40, 70, 130])
def test_every_number_of_relevant_levels_a_counting_pass_takes(simd_paths, dtype, q):
    """Ranking loss and average precision under dense, standard and modified ranking count
    the labels at or above each relevant level (one comparison a level, eight levels a pass
    with AVX-512, four with AVX2); the expected and ordinal forms count above and tied (four
    a pass): rows with 1 to 34 relevant levels (34: more than the counting takes, sorted),
    the zero level among them or not, on every path; and a NaN belief is found by the first
    pass whatever the number of levels."""
    rng = np.random.default_rng(q)
    rows, truth = [], []
    for n_levels in range(1, 35):
        levels = np.arange(n_levels + 3) / 4 - (0.5 if n_levels % 2 else 0.0)
        s = rng.choice(levels, size=q)
        y = np.zeros(q, dtype=np.uint8)
        for v in levels[rng.permutation(len(levels))[:n_levels]]:  # each level relevant once
            where = np.flatnonzero(s == v)
            if where.size:
                y[rng.choice(where)] = 1
        rows.append(s)
        truth.append(y)
    y, s = np.array(truth), np.array(rows).astype(dtype)
    for _ in simd_paths:
        assert_same_per_document(y, s)
        for i in (0, 9, 17):
            bad = s.copy()
            bad[i, q - 1] = np.nan
            for ties in COUNTED_TIES:
                with pytest.raises(ValueError, match="NaN"):
                    M.ranking_loss(y, bad, ties=ties)


@pytest.mark.parametrize("n_values", [3, 32, 40])
def test_coverage_counts_its_level_beside_the_distinct_beliefs(simd_paths, n_values):
    """Dense and ordinal coverage count the lowest relevant level and the distinct beliefs
    above it in one pass where the path allows it (float32 rows, at most 32 distinct
    beliefs, AVX-512), in two otherwise: the sort path's values on every path, and a NaN
    belief found at the row's first label, in a full vector or in its last partial one."""
    rng = np.random.default_rng(n_values)
    q = 70
    s = rng.choice(np.arange(n_values) / 4 - 1.0, size=(12, q)).astype(np.float32)
    y = (rng.random((12, q)) < 0.05).astype(np.uint8)
    y[np.arange(12), rng.integers(0, q, 12)] = 1
    for _ in simd_paths:
        assert_same_per_document(y, s)
        for j in (0, 20, q - 1):
            bad = s.copy()
            bad[5, j] = np.nan
            for ties in ("dense", "ordinal"):
                with pytest.raises(ValueError, match="NaN"):
                    M.coverage(y, bad, ties=ties)


def test_distinct_beliefs_looked_up_in_a_table_kept_from_row_to_row(simd_paths):
    """On AVX-512 the distinct float32 beliefs above a level are looked up in a table kept
    from one row to the next, each row counting only the values it holds: rows whose values
    are a subset of the last row's, new values whose slot an old one holds (kept aside as
    extras), rows of more than 32 values (the table emptied), then few values again; every
    form that reads them (dense coverage, the ordinal forms) gives the sort path's values,
    on every path and row after row."""
    rng = np.random.default_rng(11)
    s = rows_across_the_kept_table(rng, 260, 70)
    y = (rng.random(s.shape) < 0.1).astype(np.uint8)
    y[np.arange(len(s)), rng.integers(0, s.shape[1], len(s))] = 1
    for _ in simd_paths:
        assert_same_per_document(y, s)


def test_empty_csr_rows_and_matrix():
    y = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1]], dtype=np.uint8)
    assert_same_per_document(y, np.zeros((3, 3)))
    s = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, -1.0], [0.0, 0.0, 0.0]])
    assert_same_per_document(y, s)


def test_more_rows_than_one_block():
    """The average over several row blocks sums as the sort path does."""
    rng = np.random.default_rng(3)
    n = 70_000
    s = rng.choice([0.0, 0.5, 1.0], size=(n, 3))
    y = (rng.random((n, 3)) < 0.4).astype(np.uint8)
    w = rng.random(n)
    for ties in COUNTED_TIES:
        for weight in (None, w):
            res = M.evaluate(y, s, ties=(ties,), sample_weight=weight)[ties]
            assert bits(M.coverage(y, s, ties=ties, sample_weight=weight)) == \
                bits(res["coverage"])
            assert bits(M.ranking_loss(y, s, ties=ties, sample_weight=weight)) == \
                bits(res["ranking_loss"])


# the public single metrics and the evaluate value each equals (average precision per label
# is not among evaluate's values: the sort path's per-document column, above)
ORDINAL_PUBLIC = {"one_error": "one_error", "coverage": "coverage",
                  "ranking_loss": "ranking_loss", "ap_position": "average_precision",
                  "r_precision": "r_precision"}


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_ordinal_values_draw_the_seeded_order(seed):
    """The ordinal values are counted with the seeded shuffles of the tie groups they read
    (one-error the top one; coverage the lowest relevant one; r-precision the one at
    position |C|; ranking loss and average precision each one holding relevant and
    irrelevant labels, each from the step its counts give): they equal the sort path's
    for every seed, and the public functions equal evaluate's."""
    rng = np.random.default_rng(4)
    s = rng.choice([0.0, 0.5, 1.0], size=(50, 20))
    y = (rng.random((50, 20)) < 0.3).astype(np.uint8)
    assert_same_per_document(y, s, seed)
    res = M.evaluate(y, s, ties=("ordinal",), random_state=seed)["ordinal"]
    for S in layouts(s).values():
        for name, key in ORDINAL_PUBLIC.items():
            assert bits(PUBLIC[name](y, S, ties="ordinal", random_state=seed)) == \
                bits(res[key]), name


@pytest.mark.parametrize("levels, rate", [
    (100, 0.5),  # more relevant levels than the counting passes take: the row is sorted
    (60, 0.04),  # few relevant levels, more distinct beliefs above them than the short list
    (3, 0.02),   # tie groups of some hundred labels, one relevant label in most
    (2, 0.3),    # tie groups of some hundred labels, dozens of them relevant
    (32, 0.05),  # float32: as many distinct beliefs as one numbering pass takes
    (33, 0.05),  # float32: one more (the counting passes)
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ordinal_ranking_values_on_each_path(simd_paths, levels, rate, dtype):
    """Every instruction-set path follows the relevant labels through the same steps (the
    vector paths search many steps a pass for the next that moves one); float32 rows of at
    most 32 distinct beliefs read their levels and the places of their relevant labels
    off one pass that numbers the beliefs (AVX-512), the others count them."""
    rng = np.random.default_rng(levels)
    s = (rng.integers(0, levels, size=(40, 300)) / levels).astype(dtype)
    y = (rng.random((40, 300)) < rate).astype(np.uint8)
    for _ in simd_paths:
        assert_same_per_document(y, s, seed=levels)


def test_ordinal_float32_rows_with_signed_zeros_and_infinities(simd_paths):
    """-0.0 and +0.0 are one belief, and infinities are beliefs like others, in the pass
    that numbers a float32 row's beliefs as in the counting passes and the sort."""
    rng = np.random.default_rng(4)
    values = np.array([-np.inf, -1.5, -0.0, 0.0, 0.25, 1.0, np.inf], dtype=np.float32)
    s = rng.choice(values, size=(60, 200))
    y = (rng.random((60, 200)) < 0.1).astype(np.uint8)
    for _ in simd_paths:
        assert_same_per_document(y, s, seed=4)


def test_ordinal_positions_follow_the_redrawn_steps(simd_paths):
    """Tie groups of 300 000 labels take some steps whose first number would bias the
    draw, redrawn from the step's own stream: the positions followed through the steps
    are the shuffled group's."""
    rng = np.random.default_rng(9)
    s = np.zeros((2, 300_000))
    s[1, ::2] = 0.5
    y = (rng.random(s.shape) < 1e-4).astype(np.uint8)
    for _ in simd_paths:
        assert_same_per_document(y, s, seed=11)


def _ordinal_reference(y, s, seed):
    """One-error, coverage, ranking loss and both average precisions of each document,
    read off the whole shuffled order that ``rank(..., "ordinal")`` gives (Melotti 2009,
    eqs. 4.4-4.8): position p_j (1-based) of the j-th relevant label down the order."""
    from fastrank.ranking import rank
    r = rank(s, "ordinal", random_state=seed)
    out = {name: [] for name in ("one_error", "coverage", "ranking_loss", "ap_position",
                                 "ap_label")}
    for yt, sc, rr in zip(y.astype(bool), s, r):
        labels = np.flatnonzero(yt)[np.argsort(rr[yt])]
        p = rr[labels].astype(np.float64)
        above = np.arange(1, p.size + 1)
        out["one_error"].append(0.0 if yt[rr == 1].all() else 1.0)
        out["coverage"].append(p[-1] - 1)
        out["ranking_loss"].append((p - above).sum() / (p.size * (yt.size - p.size)))
        out["ap_label"].append(np.mean(above / p))
        out["ap_position"].append(np.mean(np.where(sc[labels] != 0, above / p, 0.0)))
    return {name: np.mean(v) for name, v in out.items()}


@pytest.mark.parametrize("shape, levels, rate", [
    ((40, 300), 3, 0.02),       # tie groups of some hundred labels, a few relevant
    ((2, 300_000), 2, 1e-4),    # groups of 150 000 labels: steps whose draw is redrawn
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ordinal_values_equal_those_of_the_rank_shuffle(simd_paths, shape, levels, rate,
                                                        dtype):
    """evaluate's and the single metrics' ordinal values, which follow a tie group's
    relevant labels through its shuffle below the cutoff instead of shuffling it, equal
    those read off the whole order that rank(..., "ordinal") shuffles, on every
    instruction-set path."""
    rng = np.random.default_rng(levels)
    s = (rng.integers(0, levels, size=shape) / levels).astype(dtype)
    y = (rng.random(shape) < rate).astype(np.uint8)
    y[:, 0] = 1
    y[:, -1] = 0
    for _ in simd_paths:
        want = _ordinal_reference(y, s, seed=21)
        res = M.evaluate(y, s, ties="ordinal", random_state=21)["ordinal"]
        for name, value in want.items():
            if name != "ap_label":  # (evaluate reports average precision per position)
                key = "average_precision" if name == "ap_position" else name
                assert res[key] == pytest.approx(value, rel=1e-12, abs=1e-12), name
            assert PUBLIC[name](y, s, ties="ordinal", random_state=21) == \
                pytest.approx(value, rel=1e-12, abs=1e-12), name


def test_ordinal_rows_draw_as_their_global_index():
    rng = np.random.default_rng(5)
    n = 70_000
    s = rng.choice([0.0, 1.0], size=(n, 4))
    y = (rng.random((n, 4)) < 0.5).astype(np.uint8)
    res = M.evaluate(y, s, ties=("ordinal",), random_state=3)["ordinal"]
    for name, key in ORDINAL_PUBLIC.items():
        assert bits(PUBLIC[name](y, s, ties="ordinal", random_state=3)) == bits(res[key])


@pytest.mark.parametrize("n", [1, 127, 128, 129, 1000, 4097])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_counting_total_has_numpy_bits(n, threads):
    """The kernel sums its documents' values block by block as it computes them: the bits
    of numpy's sum of the values it returns, with weights or without, on any thread
    count (blocks split as numpy's pairwise sum splits them)."""
    from threadpoolctl import threadpool_limits
    rng = np.random.default_rng(n)
    s = rng.integers(0, 4, size=(n, 7)) / 3.0
    y = (rng.random((n, 7)) < 0.4).astype(np.uint8)
    weight = rng.random(n) * 10.0 ** rng.integers(-3, 3, n)
    for ties in ("modified", "expected"):
        for code in (tie_counts.METRICS["ranking_loss"], tie_counts.METRICS["ap_label"]):
            out = np.empty(n)
            with threadpool_limits(threads, user_api="openmp"):
                sound, plain = tie_counts.values(*score_args(s), y, code,
                                                 tie_counts.TIES[ties], 0, 0, np.empty(0), out)
                _, weighted = tie_counts.values(*score_args(s), y, code,
                                                tie_counts.TIES[ties], 0, 0, weight, out)
            assert sound and bits(plain) == bits(out.sum())
            assert bits(weighted) == bits((out * weight).sum())
    with pytest.raises(ValueError, match=f"{n} rows, {n} outputs and 2 weights"):
        tie_counts.values(*score_args(s), y, code, 0, 0, 0, np.ones(2), out)


def test_the_kernel_refuses_an_unknown_code():
    """Every (metric, ranking type) pair is counted; a code outside the tables is refused."""
    assert tie_counts.SERVED == {(m, t) for m in tie_counts.METRICS for t in tie_counts.TIES}
    y, s = np.ones((1, 3), dtype=np.uint8), np.zeros((1, 3))
    for metric, ties in ((len(tie_counts.METRICS), 0), (0, len(tie_counts.TIES)), (-1, 0)):
        with pytest.raises(ValueError, match="no counting form"):
            tie_counts.values(*score_args(s), y, metric, ties, 0, 0, np.empty(0), np.empty(1))


@settings(max_examples=40, deadline=None)
@given(tied_case(), st.sampled_from(tuple(tie_counts.TIES)), st.booleans(),
       st.sampled_from([2, 255]), st.data())
def test_bad_input_found_by_the_counting_passes(case, ties, in_truth, bad_value, data):
    """The counting kernel reads the inputs unscanned and finds a NaN belief or a truth
    value other than 0/1 wherever it lies (a row with or without relevant labels, stored or
    not in a CSR matrix): the error is the checks' own, the one evaluate raises."""
    y, s = case
    i = data.draw(st.integers(0, y.shape[0] - 1))
    j = data.draw(st.integers(0, y.shape[1] - 1))
    if in_truth:
        y = y.copy()
        y[i, j] = bad_value
    else:
        s = s.copy()
        s[i, j] = np.nan
    with pytest.raises(ValueError) as want:
        M.evaluate(y, s)
    for name, f in PUBLIC.items():
        if (name, ties) not in tie_counts.SERVED:
            continue
        for S in layouts(s).values():
            with pytest.raises(ValueError) as got:
                f(y, S, ties=ties)
            assert str(got.value) == str(want.value), (name, ties)
