"""fastrank's Cython API from a downstream module: every call runs without the GIL, so
Python threads calling these functions run them in parallel."""
cimport fastrank
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

fastrank.import_capi()


cdef int check(int err) except -1:
    if err != fastrank.FASTRANK_OK:
        raise ValueError(fastrank.last_error().decode())
    return 0


def rank(const double[:, ::1] scores, int method, uint64_t seed, Py_ssize_t first_row,
         int32_t[:, ::1] ranks, double[:, ::1] frac_ranks):
    """Rank every row (global number first_row + i) into ranks or frac_ranks."""
    cdef Py_ssize_t i, q = scores.shape[1]
    cdef int err = 0
    with nogil:
        for i in range(scores.shape[0]):
            err = fastrank.rank_row(&scores[i, 0], q, method, seed, first_row + i,
                                    &ranks[i, 0] if ranks.shape[0] else NULL,
                                    &frac_ranks[i, 0] if frac_ranks.shape[0] else NULL)
            if err:
                break
    check(err)


def tie_groups(const double[:, ::1] scores, int32_t[:, ::1] order, int32_t[:, ::1] end):
    cdef Py_ssize_t i, q = scores.shape[1]
    cdef int64_t n_groups
    cdef int err = 0
    with nogil:
        for i in range(scores.shape[0]):
            err = fastrank.tie_groups(&scores[i, 0], q, &order[i, 0], &end[i, 0], &n_groups)
            if err:
                break
    check(err)


cdef class Evaluation:
    """A fastrank evaluation state: rows added without the GIL, merged, read; with the
    expected ranking's boundary records beside it when rows are added exactly."""
    cdef fastrank.fastrank_eval_state state
    cdef double[::1] labels
    cdef double[::1] draws
    cdef readonly list records  # (n, 5) int64 arrays of boundary records, each counted

    def __init__(self, Py_ssize_t n_labels, int ties, int64_t top_k, int64_t n_draws,
                 uint64_t seed):
        self.labels = np.empty(fastrank.FASTRANK_N_LABEL_ROWS * n_labels)
        self.draws = np.empty(max(1, n_draws * 2 * n_labels))
        self.records = []
        check(fastrank.eval_init(&self.state, n_labels, ties, top_k, n_draws, seed, 0.0,
                                 &self.labels[0], &self.draws[0]))

    def add_rows(self, const double[:, ::1] scores, const uint8_t[:, ::1] truth,
                 Py_ssize_t first_row):
        cdef Py_ssize_t i
        cdef int err = 0
        with nogil:
            for i in range(scores.shape[0]):
                err = fastrank.eval_add_row(&self.state, &scores[i, 0], &truth[i, 0],
                                            first_row + i, 1.0)
                if err:
                    break
        check(err)

    def add_rows_exact(self, const double[:, ::1] scores, const uint8_t[:, ::1] truth,
                       Py_ssize_t first_row, const double[::1] weight):
        """add_rows with a weight per row, the cut tie groups of the rows of weight 1 kept
        as boundary records instead of drawn: those of each block of 256 rows counted."""
        cdef Py_ssize_t i, lo, hi, q = scores.shape[1]
        cdef int64_t[:, ::1] rec = np.empty((256 * q, 5), np.int64)
        cdef int64_t n, got = 0
        cdef int err = 0
        for lo in range(0, scores.shape[0], 256):
            hi = min(lo + 256, scores.shape[0])
            n = 0
            with nogil:
                for i in range(lo, hi):
                    err = fastrank.eval_add_row_exact(&self.state, &scores[i, 0],
                                                      &truth[i, 0], first_row + i, weight[i],
                                                      &rec[n, 0], &got)
                    if err:
                        break
                    n += got
                if not err:
                    err = fastrank.eval_count_records(q, &rec[0, 0], n, &n)
            check(err)
            self.records.append(np.array(rec[:n]))

    def merge(self, Evaluation other):
        check(fastrank.eval_merge(&self.state, &other.state))
        self.records += other.records

    def result(self, int ties):
        cdef double[::1] values = np.empty(fastrank.FASTRANK_N_METRICS)
        check(fastrank.eval_result(&self.state, ties, &values[0]))
        return np.asarray(values)

    def result_exact(self, int ties):
        cdef double[::1] values = np.empty(fastrank.FASTRANK_N_METRICS)
        cdef int64_t[:, ::1] rec = np.concatenate(self.records + [np.zeros((1, 5), np.int64)])
        check(fastrank.eval_result_exact(&self.state, ties, &rec[0, 0], rec.shape[0] - 1,
                                         &values[0]))
        return np.asarray(values)


def topk(const double[:, ::1] Q, const double[:, ::1] B, int64_t k, double[:, ::1] sims,
         int64_t[:, ::1] indices):
    cdef int err
    with nogil:
        err = fastrank.cosine_topk(&Q[0, 0], Q.shape[0], &B[0, 0], B.shape[0], Q.shape[1], k,
                                   &sims[0, 0], &indices[0, 0])
    check(err)


def vgram_encode(const double[:, ::1] X, const int32_t[:, ::1] synapses,
                 uint64_t[:, :, ::1] patterns):
    cdef int err
    with nogil:
        err = fastrank.vgram_encode(&X[0, 0], X.shape[0], X.shape[1], &synapses[0, 0],
                                    synapses.shape[0], synapses.shape[1], &patterns[0, 0, 0])
    check(err)


def vgram_search(const uint64_t[:, :, ::1] memory, const uint64_t[:, :, ::1] tests,
                 uint32_t[:, ::1] distance, int64_t[:, ::1] count, int64_t[:, ::1] nearest):
    cdef int err
    with nogil:
        err = fastrank.vgram_search(&memory[0, 0, 0], memory.shape[1], &tests[0, 0, 0],
                                    tests.shape[1], memory.shape[0], memory.shape[2],
                                    &distance[0, 0], &count[0, 0], &nearest[0, 0])
    check(err)


def count_records(int64_t n_labels, int64_t[:, ::1] records):
    """eval_count_records of the rows of records, in place: the number of rows left."""
    cdef int64_t n = 0
    check(fastrank.eval_count_records(n_labels, &records[0, 0], records.shape[0], &n))
    return n
