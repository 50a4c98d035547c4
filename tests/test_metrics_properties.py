"""Hypothesis properties of the tie-aware metric suite (Melotti 2009, ch. 4)."""
import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import ref_metrics as ref
from fastrank import metrics as M

TIES = ("ordinal", "dense", "standard", "modified")
GROUP_TIES = ("dense", "standard", "modified")
RANKING = ("one_error", "coverage", "ranking_loss", "average_precision", "r_precision")


@st.composite
def tied_case(draw, max_n=6, max_q=9):
    """(y_true, y_score) with beliefs drawn from a handful of levels (heavy ties, zeros)."""
    n = draw(st.integers(1, max_n))
    q = draw(st.integers(1, max_q))
    levels = draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, -0.5]), min_size=1,
                           max_size=4, unique=True))
    s = np.array(draw(st.lists(st.sampled_from(levels), min_size=n * q, max_size=n * q)),
                 dtype=np.float64).reshape(n, q)
    y = draw(arrays(np.uint8, (n, q), elements=st.integers(0, 1)))
    return y, s


@st.composite
def untied_case(draw):
    n = draw(st.integers(1, 5))
    q = draw(st.integers(1, 9))
    y = draw(arrays(np.uint8, (n, q), elements=st.integers(0, 1)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    s = np.stack([rng.permutation(q) + 1.0 for _ in range(n)]) / q  # distinct, no zero
    return y, s


@settings(max_examples=60, deadline=None)
@given(untied_case(), st.integers(0, 2**32 - 1))
def test_without_ties_every_type_agrees_with_the_classical_definition(case, seed):
    y, s = case
    res = M.evaluate(y, s, random_state=seed)
    first = res[TIES[0]]
    classical = ref.ranks(s, "ordinal", np.argsort(np.argsort(-s, axis=1), axis=1) + 1)
    want = {k: np.mean(f(y, s, classical)) for k, f in ref.RANKING.items()}
    for t in TIES:
        assert res[t] == first
        for k in RANKING:
            assert abs(res[t][k] - want[k]) < 1e-12
    for t in TIES:  # the two average-precision forms coincide without ties
        assert abs(M.average_precision(y, s, ties=t, per="label")
                   - M.average_precision(y, s, ties=t, per="position")) < 1e-12


@settings(max_examples=80, deadline=None)
@given(tied_case(max_n=1), st.integers(0, 2**32 - 1))
def test_coverage_order_per_document(case, seed):
    y, s = case  # one document: the mean is the document's value
    c = {t: M.coverage(y, s, ties=t, random_state=seed) for t in TIES + ("expected",)}
    assert c["dense"] <= c["standard"] <= c["ordinal"] <= c["modified"]
    assert c["standard"] <= c["expected"] + 1e-12 and c["expected"] <= c["modified"] + 1e-12


@settings(max_examples=80, deadline=None)
@given(tied_case(), st.integers(0, 2**32 - 1))
def test_group_types_agree_except_coverage(case, seed):
    y, s = case
    res = M.evaluate(y, s, ties=GROUP_TIES, random_state=seed)
    for k in M.METRIC_KEYS:
        if k != "coverage":
            assert res["dense"][k] == res["standard"][k] == res["modified"][k], k


@settings(max_examples=80, deadline=None)
@given(tied_case())
def test_ranking_loss_of_group_types_is_the_belief_definition(case):
    y, s = case
    want = np.mean(ref.ranking_loss_f(y, s))
    for t in GROUP_TIES:
        assert abs(M.ranking_loss(y, s, ties=t) - want) < 1e-12


@settings(max_examples=80, deadline=None)
@given(tied_case(), st.integers(0, 2**32 - 1), st.sampled_from(TIES))
def test_micro_category_equals_micro_document(case, seed, ties):
    y, s = case
    d = M.evaluate(y, s, ties=ties, random_state=seed)[ties]
    for m in ("precision", "recall", "f1"):
        assert d[f"{m}_micro_c"] == d[f"{m}_micro_d"]
    p = M.cutoff(s, y, ties=ties, random_state=seed)
    for f in (M.precision, M.recall, M.f1):
        assert f(y, p, average="micro", orient="category") == \
            f(y, p, average="micro", orient="document")


@settings(max_examples=60, deadline=None)
@given(tied_case(), st.integers(0, 2**32 - 1), st.sampled_from(TIES))
def test_matches_reference_on_arbitrary_ties(case, seed, ties):
    y, s = case
    from fastrank.ranking import rank
    r = ref.ranks(s, ties, rank(s, "ordinal", random_state=seed))
    res = M.evaluate(y, s, ties=ties, random_state=seed)[ties]
    want = {k: np.mean(f(y, s, r)) for k, f in ref.RANKING.items()}
    want.update(ref.set_metrics(y, ref.perfect_set(y, s, r)))
    for k in M.METRIC_KEYS:
        assert abs(res[k] - want[k]) < 1e-12, k
    assert 0 <= res["ranking_loss"] <= 1 and 0 <= res["average_precision"] <= 1
