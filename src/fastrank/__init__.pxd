# cython: language_level=3
"""fastrank's Cython API: ``cimport fastrank``.

The functions of fastrank's C API (``fastrank.h``, in ``fastrank.get_include()``), callable
without the GIL. Nothing is linked: they are reached through the table of function pointers
that fastrank exports in a capsule (as NumPy's C API is), which ``fastrank.import_capi()``
imports and checks against the version of this file, at the importing module's import.

Usage (build with ``include_dirs=[fastrank.get_include()]``)::

    cimport fastrank
    fastrank.import_capi()          # once, at module level: ImportError on a mismatch

    with nogil:
        err = fastrank.rank_row(&scores[0], n_labels, fastrank.FASTRANK_RANK_DENSE, 0, 0,
                                &ranks[0], NULL)
    if err:
        raise ValueError(fastrank.last_error().decode())

Every function returns ``FASTRANK_OK`` (0) or an error code, the calling thread's message
then in ``last_error()``; the caller allocates every output. Each one is documented in
``fastrank.h``; the guide's "Embedding fastrank" shows both APIs and their stability promise.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

cdef extern from "fastrank.h":
    enum:
        FASTRANK_CAPI_VERSION_MAJOR
        FASTRANK_CAPI_VERSION_MINOR
        FASTRANK_OK
        FASTRANK_EINVAL
        FASTRANK_ENOMEM
        FASTRANK_RANK_ORDINAL
        FASTRANK_RANK_STABLE
        FASTRANK_RANK_DENSE
        FASTRANK_RANK_STANDARD
        FASTRANK_RANK_MODIFIED
        FASTRANK_RANK_FRACTIONAL
        FASTRANK_TIES_ORDINAL
        FASTRANK_TIES_DENSE
        FASTRANK_TIES_STANDARD
        FASTRANK_TIES_MODIFIED
        FASTRANK_TIES_EXPECTED
        FASTRANK_N_TIES
        FASTRANK_N_DOC_SUMS
        FASTRANK_N_LABEL_ROWS
        FASTRANK_N_METRICS

    ctypedef struct fastrank_eval_state:
        int64_t n_labels
        int64_t top_k
        int64_t n_draws
        uint64_t seed
        double zero_division
        int ties
        double weight
        double doc[5][13]  # [FASTRANK_N_TIES][FASTRANK_N_DOC_SUMS]
        double* labels
        double* draws

    ctypedef struct fastrank_capi:
        uint32_t version_major
        uint32_t version_minor
        size_t size
        const char* (*last_error)() noexcept nogil
        int (*rank_row)(const double* scores, int64_t n_labels, int method, uint64_t seed,
                        int64_t row, int32_t* ranks, double* frac_ranks) noexcept nogil
        int (*tie_groups)(const double* scores, int64_t n_labels, int32_t* order,
                          int32_t* end, int64_t* n_groups) noexcept nogil
        int (*eval_init)(fastrank_eval_state* state, int64_t n_labels, int ties,
                         int64_t top_k, int64_t n_draws, uint64_t seed, double zero_division,
                         double* labels, double* draws) noexcept nogil
        int (*eval_add_row)(fastrank_eval_state* state, const double* scores,
                            const uint8_t* truth, int64_t row, double weight) noexcept nogil
        int (*eval_merge)(fastrank_eval_state* into,
                          const fastrank_eval_state* other) noexcept nogil
        int (*eval_result)(const fastrank_eval_state* state, int ties,
                           double* values) noexcept nogil
        int (*cosine_topk)(const double* Q, int64_t n_queries, const double* B,
                           int64_t n_base, int64_t n_features, int64_t k, double* sims,
                           int64_t* indices) noexcept nogil
        int (*vgram_encode)(const double* X, int64_t n_rows, int64_t n_features,
                            const int32_t* synapses, int64_t n_neurons, int64_t n_synapses,
                            uint64_t* patterns) noexcept nogil
        int (*vgram_search)(const uint64_t* memory, int64_t n_train, const uint64_t* tests,
                            int64_t n_tests, int64_t n_neurons, int64_t W,
                            uint32_t* distance, int64_t* count,
                            int64_t* nearest) noexcept nogil
        int (*eval_add_row_exact)(fastrank_eval_state* state, const double* scores,
                                  const uint8_t* truth, int64_t row, double weight,
                                  int64_t* records, int64_t* n_records) noexcept nogil
        int (*eval_count_records)(int64_t n_labels, int64_t* records, int64_t n,
                                  int64_t* n_out) noexcept nogil
        int (*eval_result_exact)(const fastrank_eval_state* state, int ties,
                                 const int64_t* records, int64_t n,
                                 double* values) noexcept nogil

    const fastrank_capi* fastrank_api
    int fastrank_import() except -1


cdef inline int import_capi() except -1:
    """Import and check fastrank's table (ImportError on another major version, or a
    fastrank older than this file); call once, at module level, before the functions."""
    return fastrank_import()


cdef inline const char* last_error() noexcept nogil:
    return fastrank_api.last_error()


cdef inline int rank_row(const double* scores, int64_t n_labels, int method, uint64_t seed,
                         int64_t row, int32_t* ranks, double* frac_ranks) noexcept nogil:
    return fastrank_api.rank_row(scores, n_labels, method, seed, row, ranks, frac_ranks)


cdef inline int tie_groups(const double* scores, int64_t n_labels, int32_t* order,
                           int32_t* end, int64_t* n_groups) noexcept nogil:
    return fastrank_api.tie_groups(scores, n_labels, order, end, n_groups)


cdef inline int eval_init(fastrank_eval_state* state, int64_t n_labels, int ties,
                          int64_t top_k, int64_t n_draws, uint64_t seed, double zero_division,
                          double* labels, double* draws) noexcept nogil:
    return fastrank_api.eval_init(state, n_labels, ties, top_k, n_draws, seed, zero_division,
                                  labels, draws)


cdef inline int eval_add_row(fastrank_eval_state* state, const double* scores,
                             const uint8_t* truth, int64_t row, double weight) noexcept nogil:
    return fastrank_api.eval_add_row(state, scores, truth, row, weight)


cdef inline int eval_merge(fastrank_eval_state* into,
                           const fastrank_eval_state* other) noexcept nogil:
    return fastrank_api.eval_merge(into, other)


cdef inline int eval_result(const fastrank_eval_state* state, int ties,
                            double* values) noexcept nogil:
    return fastrank_api.eval_result(state, ties, values)


cdef inline int cosine_topk(const double* Q, int64_t n_queries, const double* B,
                            int64_t n_base, int64_t n_features, int64_t k, double* sims,
                            int64_t* indices) noexcept nogil:
    return fastrank_api.cosine_topk(Q, n_queries, B, n_base, n_features, k, sims, indices)


cdef inline int vgram_encode(const double* X, int64_t n_rows, int64_t n_features,
                             const int32_t* synapses, int64_t n_neurons, int64_t n_synapses,
                             uint64_t* patterns) noexcept nogil:
    return fastrank_api.vgram_encode(X, n_rows, n_features, synapses, n_neurons, n_synapses,
                                     patterns)


cdef inline int vgram_search(const uint64_t* memory, int64_t n_train, const uint64_t* tests,
                             int64_t n_tests, int64_t n_neurons, int64_t W,
                             uint32_t* distance, int64_t* count,
                             int64_t* nearest) noexcept nogil:
    return fastrank_api.vgram_search(memory, n_train, tests, n_tests, n_neurons, W, distance,
                                     count, nearest)


cdef inline int eval_add_row_exact(fastrank_eval_state* state, const double* scores,
                                   const uint8_t* truth, int64_t row, double weight,
                                   int64_t* records, int64_t* n_records) noexcept nogil:
    return fastrank_api.eval_add_row_exact(state, scores, truth, row, weight, records,
                                           n_records)


cdef inline int eval_count_records(int64_t n_labels, int64_t* records, int64_t n,
                                   int64_t* n_out) noexcept nogil:
    return fastrank_api.eval_count_records(n_labels, records, n, n_out)


cdef inline int eval_result_exact(const fastrank_eval_state* state, int ties,
                                  const int64_t* records, int64_t n,
                                  double* values) noexcept nogil:
    return fastrank_api.eval_result_exact(state, ties, records, n, values)
