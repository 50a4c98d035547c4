"""The C API's argument checks, called through ctypes on the capsule's table (no compiler
needed; the struct layouts are fastrank.h's): arguments no buffer could match, records and
weights outside their ranges, and a state eval_init never set up are refused with
FASTRANK_EINVAL and a message, never a crash or a NaN."""
import ctypes as C

import numpy as np
import pytest

import fastrank
from fastrank._ext import capi

i64, u64, dbl, P = C.c_int64, C.c_uint64, C.c_double, C.c_void_p
F = C.CFUNCTYPE


class State(C.Structure):  # fastrank_eval_state
    _fields_ = [("n_labels", i64), ("top_k", i64), ("n_draws", i64), ("seed", u64),
                ("zero_division", dbl), ("ties", C.c_int), ("weight", dbl),
                ("doc", dbl * 13 * 5), ("labels", P), ("draws", P)]


class Table(C.Structure):  # fastrank_capi
    _fields_ = [("version_major", C.c_uint32), ("version_minor", C.c_uint32),
                ("size", C.c_size_t), ("last_error", F(C.c_char_p)),
                ("rank_row", F(C.c_int, P, i64, C.c_int, u64, i64, P, P)),
                ("tie_groups", F(C.c_int, P, i64, P, P, P)),
                ("eval_init", F(C.c_int, P, i64, C.c_int, i64, i64, u64, dbl, P, P)),
                ("eval_add_row", F(C.c_int, P, P, P, i64, dbl)),
                ("eval_merge", F(C.c_int, P, P)),
                ("eval_result", F(C.c_int, P, C.c_int, P)),
                ("cosine_topk", F(C.c_int, P, i64, P, i64, i64, i64, P, P)),
                ("vgram_encode", F(C.c_int, P, i64, i64, P, i64, i64, P)),
                ("vgram_search", F(C.c_int, P, i64, P, i64, i64, i64, P, P, P)),
                ("eval_add_row_exact", F(C.c_int, P, P, P, i64, dbl, P, P)),
                ("eval_count_records", F(C.c_int, i64, P, i64, P)),
                ("eval_result_exact", F(C.c_int, P, C.c_int, P, i64, P))]


C.pythonapi.PyCapsule_GetPointer.restype = P
C.pythonapi.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
API = Table.from_address(C.pythonapi.PyCapsule_GetPointer(capi._C_API,
                                                          b"fastrank._ext.capi._C_API"))
EXPECTED = 1 << 4  # FASTRANK_TIES_EXPECTED
EINVAL = 1


def at(a):
    return a.ctypes.data


def refused(rc, message):
    assert rc == EINVAL and message in API.last_error().decode(), API.last_error()


@pytest.fixture
def state():
    """An initialised state of 4 labels under every ranking type, and its arrays."""
    s = State()
    labels, draws = np.empty(9 * 4), np.empty(7 * 2 * 4)
    assert API.eval_init(C.addressof(s), 4, 31, -1, 7, 5, 0.0, at(labels), at(draws)) == 0
    s.arrays = labels, draws
    return s


def test_the_layouts_are_the_headers():
    assert (API.version_major, API.version_minor) == capi.VERSION
    assert API.size == C.sizeof(Table)


def test_a_state_eval_init_never_set_up_is_refused(state):
    zeroed = State()
    scores, truth = np.array([.5, .2, .2, .1]), np.array([1, 0, 0, 1], np.uint8)
    rec, n = np.zeros(20, np.int64), np.zeros(1, np.int64)
    values = np.zeros(19)
    for rc in (API.eval_add_row(C.addressof(zeroed), at(scores), at(truth), 0, 1.0),
               API.eval_add_row_exact(C.addressof(zeroed), at(scores), at(truth), 0, 1.0,
                                      at(rec), at(n)),
               API.eval_merge(C.addressof(state), C.addressof(zeroed)),
               API.eval_result(C.addressof(zeroed), 0, at(values))):
        refused(rc, "the state is not initialised (eval_init)")
    assert zeroed.weight == 0 and state.weight == 0


@pytest.mark.parametrize("weight", [1e308, 2.0**401, 2.0**-401, 5e-324, -1.0, np.nan])
def test_row_weights_outside_the_evaluators_range_are_refused(state, weight):
    """As fastrank.metrics' sample_weight: 0, or 2**-400 .. 2**400 (1e308 once made the
    sums infinite and seven values NaN)."""
    scores, truth = np.array([.5, .2, .2, .1]), np.array([1, 0, 0, 1], np.uint8)
    refused(API.eval_add_row(C.addressof(state), at(scores), at(truth), 0, weight),
            "weight must be 0 or from 2**-400 to 2**400")
    for fine in (0.0, 2.0**-400, 2.0**400):
        assert API.eval_add_row(C.addressof(state), at(scores), at(truth), 0, fine) == 0


def test_record_counts_past_2_53_are_refused(state):
    """One record of 2**61 relevant rows once wrapped label_sums' scratch size around and
    wrote past it; two of 2**62 summed into a negative count."""
    scores, truth = np.array([.5, .2, .2, .1]), np.array([1, 0, 0, 1], np.uint8)
    assert API.eval_add_row(C.addressof(state), at(scores), at(truth), 0, 1.0) == 0
    values = np.full(19, -1.0)
    huge = np.array([[0, 2, 1, 2**61, 0]], np.int64)
    refused(API.eval_result_exact(C.addressof(state), 4, at(huge), 1, at(values)),
            "counts from 0 to 2**53")
    assert (values == -1).all()  # nothing written on an error
    n = np.zeros(1, np.int64)
    refused(API.eval_count_records(4, at(huge), 1, at(n)), "counts from 0 to 2**53")
    pair = np.array([[0, 3, 1, 2**53, 0], [0, 3, 1, 1, 0]], np.int64)
    refused(API.eval_count_records(4, at(pair), 2, at(n)),
            "the counts of one (label, s, d) sum past 2**53")
    refused(API.eval_result_exact(C.addressof(state), 4, at(pair), 2, at(values)),
            "the counts of one (label, s, d) sum past 2**53")


def test_sizes_no_buffer_could_match_are_refused():
    """Sizes whose products pass 2**59 elements (n_neurons * n_synapses = 2**64 once wrapped
    to 0, skipping the synapse check; n_queries * n_features past int64 skipped the NaN
    check): refused before any buffer is read."""
    X, syn = np.zeros(4), np.array([99], np.int32)
    out = np.zeros(4, np.uint64)
    refused(API.vgram_encode(at(X), 1, 3, at(syn), 2**32, 2**32, at(out)),
            "more than 2**59 elements")
    Q = np.full(4, np.nan)
    sims, idx = np.zeros(1), np.zeros(1, np.int64)
    refused(API.cosine_topk(at(Q), 2**62, at(Q), 1, 4, 1, at(sims), at(idx)),
            "more than 2**59 elements")
    dist, count, near = np.zeros(1, np.uint32), np.zeros(1, np.int64), np.zeros(1, np.int64)
    refused(API.vgram_search(at(out), 2**40, at(out), 1, 2**40, 1, at(dist), at(count),
                             at(near)), "more than 2**59 elements")


def test_expected_values_of_weighted_rows_without_a_cut_group_are_the_evaluators():
    """Rows of weight 0.5 with no tie group cut (top_k beyond the labels): no draw differs,
    so both give the exact value itself, bit for bit (not a mean of equal values)."""
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 3, (9, 5)) / 2.0
    truth = (rng.random((9, 5)) < 0.4).astype(np.uint8)
    weight = np.where(np.arange(9) % 2, 0.5, 1.0)
    ev = fastrank.metrics.Evaluator(("expected",), cutoff=6, n_draws=7, random_state=3)
    for i in range(9):
        ev.update(truth[i:i + 1], scores[i:i + 1], first_row=i, sample_weight=weight[i:i + 1])
    want = ev.result()
    s = State()
    labels, draws = np.empty(9 * 5), np.empty(7 * 2 * 5)
    assert API.eval_init(C.addressof(s), 5, EXPECTED, 6, 7, ev.seed, 0.0, at(labels),
                         at(draws)) == 0
    records, n = np.zeros((9, 5, 5), np.int64), np.zeros(9, np.int64)
    for i in range(9):
        assert API.eval_add_row_exact(C.addressof(s), at(scores[i]), at(truth[i]), i,
                                      weight[i], at(records[i]), at(n[i:])) == 0
    assert not n.any()  # no cut group
    got = np.zeros(19)
    assert API.eval_result_exact(C.addressof(s), 4, at(records), 0, at(got)) == 0
    np.testing.assert_array_equal(got, want.values[0])
    assert want.stderr[0][[7, 11]].tolist() == [0.0, 0.0]
