/* fastrank's C API: its kernels for C and C++ extensions of Python, without Python calls.

   Include this header (directory: fastrank.get_include()), call fastrank_import() once
   (with the GIL held, e.g. in the module's init function), then call the functions of the
   table it returns from any thread, without the GIL. Nothing is linked: the table is a
   struct of function pointers that the module fastrank._ext.capi exports in a capsule
   (as numpy's C API does), checked at import against the version this header declares.

   Conventions of every function:
   - it returns FASTRANK_OK (0) or an error code; after an error, last_error() gives a
     message for the calling thread (until that thread's next error). No exception, no
     longjmp crosses the boundary, and nothing is printed;
   - the caller allocates every output (sizes in each declaration) and frees it; fastrank
     frees only the scratch it allocates itself, before returning;
   - scores are float64, C order (row-major), every row of n_labels labels; a NaN score is
     an error (FASTRANK_EINVAL);
   - randomness (ordinal ranks, the expected ranking's draws) comes from a 64-bit seed and
     the global row number, exactly as in the Python API: rank(..., random_state=r) and
     Evaluator(random_state=r) use the seed numpy.random.default_rng(r).integers(0, 2**64,
     dtype=numpy.uint64), and row j draws from (seed, j), whichever thread computes it.

   Stability (docs: "Embedding fastrank"): within one major version the table only grows
   at its end (a minor version adds functions), no declared function, constant or struct
   field changes meaning, and results stay the same bits. A major version may change any of
   it; fastrank_import() refuses a table of another major version, or one older than this
   header. */
#ifndef FASTRANK_H
#define FASTRANK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FASTRANK_CAPI_VERSION_MAJOR 1
#define FASTRANK_CAPI_VERSION_MINOR 1
#define FASTRANK_CAPI_CAPSULE "fastrank._ext.capi._C_API"

/* error codes */
#define FASTRANK_OK 0
#define FASTRANK_EINVAL 1 /* an invalid argument (message: which, and why) */
#define FASTRANK_ENOMEM 2 /* scratch could not be allocated */

/* ranking methods of rank_row (fastrank.rank's names) */
#define FASTRANK_RANK_ORDINAL 0    /* ties broken at random (seed, row) */
#define FASTRANK_RANK_STABLE 1     /* ties broken by label index */
#define FASTRANK_RANK_DENSE 2
#define FASTRANK_RANK_STANDARD 3   /* "min" */
#define FASTRANK_RANK_MODIFIED 4   /* "max" */
#define FASTRANK_RANK_FRACTIONAL 5 /* mean rank of the group: float64 output */

/* ranking types of the evaluation (fastrank.evaluate's ties), the rows of its state */
#define FASTRANK_TIES_ORDINAL 0
#define FASTRANK_TIES_DENSE 1
#define FASTRANK_TIES_STANDARD 2
#define FASTRANK_TIES_MODIFIED 3
#define FASTRANK_TIES_EXPECTED 4
#define FASTRANK_N_TIES 5
/* sums kept per ranking type, and per label */
#define FASTRANK_N_DOC_SUMS 13
#define FASTRANK_N_LABEL_ROWS 9
/* the 19 metrics of eval_result, in fastrank.metrics.METRIC_KEYS order */
#define FASTRANK_N_METRICS 19

/* The state of an evaluation: what fastrank.Evaluator keeps (its ranking types, the sums
   over documents per ranking type, the counts per label), for one configuration. Set it up
   with eval_init; states of disjoint rows add with eval_merge. The caller owns the
   memory: the struct and the two arrays below, of the sizes eval_init states. */
typedef struct fastrank_eval_state {
    int64_t n_labels;
    int64_t top_k;      /* the set metrics' cutoff: -1 perfect, else the first top_k */
    int64_t n_draws;    /* random orders of the expected ranking's cut tie groups that
                           are drawn: every row's with eval_add_row (macro precision and F1
                           by category then Monte-Carlo estimates), only those of rows
                           weighing neither 0 nor 1 with eval_add_row_exact */
    uint64_t seed;
    double zero_division;
    int ties;           /* bit t set: ranking type t is evaluated */
    double weight;      /* total weight of the rows added */
    double doc[FASTRANK_N_TIES][FASTRANK_N_DOC_SUMS];
    double* labels;     /* FASTRANK_N_LABEL_ROWS * n_labels doubles */
    double* draws;      /* n_draws * 2 * n_labels doubles (NULL when n_draws is 0) */
} fastrank_eval_state;

typedef struct fastrank_capi {
    /* version of this table; size = sizeof(fastrank_capi) of the fastrank that made it */
    uint32_t version_major;
    uint32_t version_minor;
    size_t size;

    /* The message of the calling thread's last error ("" when none). */
    const char* (*last_error)(void);

    /* ranks[0 .. n_labels-1] <- the rank of each label of one row of scores (1 = highest
       belief), by method FASTRANK_RANK_* (fastrank.rank); row is the row's global number
       (ordinal ranks draw from (seed, row)). FASTRANK_RANK_FRACTIONAL writes frac_ranks
       (ranks unused, may be NULL); every other method writes ranks (frac_ranks unused). */
    int (*rank_row)(const double* scores, int64_t n_labels, int method, uint64_t seed,
                    int64_t row, int32_t* ranks, double* frac_ranks);

    /* The tie groups of one row (fastrank.tie_groups): order[p] the label at position p
       by decreasing score (a group's labels by increasing index), end[p] the exclusive end
       position of the group holding position p; *n_groups the number of groups. Arrays of
       n_labels. */
    int (*tie_groups)(const double* scores, int64_t n_labels, int32_t* order, int32_t* end,
                      int64_t* n_groups);

    /* Set up state for ranking types `ties` (bits 1 << FASTRANK_TIES_*), the cutoff top_k
       (-1: perfect), n_draws (2 .. 100000 with FASTRANK_TIES_EXPECTED, else unused), the
       seed and zero_division of fastrank.Evaluator; zeroes the sums, the caller's
       labels array (FASTRANK_N_LABEL_ROWS * n_labels doubles) and draws array
       (n_draws * 2 * n_labels doubles; NULL without FASTRANK_TIES_EXPECTED). */
    int (*eval_init)(fastrank_eval_state* state, int64_t n_labels, int ties, int64_t top_k,
                     int64_t n_draws, uint64_t seed, double zero_division, double* labels,
                     double* draws);

    /* Add one row (scores and its 0/1 truth, n_labels each) of global number row and
       weight (0, or from 2^-400 to 2^400 as Evaluator's sample_weight; 1 unweighted) to
       state: Evaluator.update with that one row. Rows are summed in the order they are
       added. */
    int (*eval_add_row)(fastrank_eval_state* state, const double* scores,
                        const uint8_t* truth, int64_t row, double weight);

    /* into += from (disjoint rows, same configuration): Evaluator.merge. */
    int (*eval_merge)(fastrank_eval_state* into, const fastrank_eval_state* from);

    /* values[0 .. FASTRANK_N_METRICS-1] <- the 19 metrics of ranking type `ties`
       (FASTRANK_TIES_*, one evaluated by state): Evaluator.result()[ties], the same bits
       for the same rows added in the same order. */
    int (*eval_result)(const fastrank_eval_state* state, int ties, double* values);

    /* The k base rows most cosine-similar to each query (fastrank.topk_cosine(Q, B, k)):
       queries Q (n_queries x n_features), base B (n_base x n_features), 1 <= k <= n_base;
       sims and indices (n_queries x k) by decreasing similarity, then increasing index;
       a NaN or infinite feature is an error (FASTRANK_EINVAL). */
    int (*cosine_topk)(const double* Q, int64_t n_queries, const double* B, int64_t n_base,
                       int64_t n_features, int64_t k, double* sims, int64_t* indices);

    /* VG-RAM WNN (Melotti 2009, sec. 2.6): the Minchinton-cell patterns of rows X
       (n_rows x n_features) for neurons wired by synapses (n_neurons x n_synapses input
       positions in 0 .. n_features-1): patterns (n_neurons x n_rows x W words, W =
       ceil(n_synapses / 64)), the layout of VGRAM's memory_. */
    int (*vgram_encode)(const double* X, int64_t n_rows, int64_t n_features,
                        const int32_t* synapses, int64_t n_neurons, int64_t n_synapses,
                        uint64_t* patterns);

    /* For each test pattern t and neuron n, the minimum Hamming distance over the neuron's
       n_train stored patterns (memory: n_neurons x n_train x W words), how many stored
       patterns are at it and the first of them: distance, count, nearest (n_tests x
       n_neurons each). tests: n_neurons x n_tests x W words (vgram_encode's layout). */
    int (*vgram_search)(const uint64_t* memory, int64_t n_train, const uint64_t* tests,
                        int64_t n_tests, int64_t n_neurons, int64_t W, uint32_t* distance,
                        int64_t* count, int64_t* nearest);

    /* ---- since 1.1: macro precision and F1 by category of the expected ranking, exact ---- */

    /* eval_add_row, except that under FASTRANK_TIES_EXPECTED a row of weight 1 does not draw
       its cut tie group (the group the cutoff falls inside): it writes the group's labels
       to records as boundary records, rows of 5 int64 (label, s, d, n_rel, n_irr: the label
       is predicted with probability d/s, in lowest terms, 0 < d < s <= n_labels; n_rel 1
       when it is relevant, else n_irr 1), and *n_records <- their number (at most
       n_labels: records holds 5 * n_labels int64). Other rows write none: a row of
       weight 0 adds no records, one of another weight is drawn n_draws times, as by
       eval_add_row. The caller keeps the records of every row (of merged states too: their
       records side by side) for eval_result_exact; eval_count_records keeps them small. */
    int (*eval_add_row_exact)(fastrank_eval_state* state, const double* scores,
                              const uint8_t* truth, int64_t row, double weight,
                              int64_t* records, int64_t* n_records);

    /* records (n rows of 5, as eval_add_row_exact writes them, in any order) counted in
       place: sorted by (label, s, d), the rows of equal (label, s, d) summed into one,
       *n_out <- the number of rows left: one per distinct (label, d/s), however many rows
       of scores were added. Counts are at most 2^53, summed too (FASTRANK_EINVAL past it). */
    int (*eval_count_records)(int64_t n_labels, int64_t* records, int64_t n, int64_t* n_out);

    /* eval_result, but for FASTRANK_TIES_EXPECTED macro precision and F1 by category
       (values[7] and values[11]) computed exactly from the boundary records (n rows of 5,
       counted or not) of every row added: fastrank.Evaluator's values, the same bits when
       every row weighs 0 or 1; where rows of other weights were drawn, the mean over the
       draws of the exact value given each draw, as Evaluator computes it. Its scratch is
       about 56 bytes per row counted in a label's records (a label's exact distribution);
       values is written only on success. */
    int (*eval_result_exact)(const fastrank_eval_state* state, int ties,
                             const int64_t* records, int64_t n, double* values);
} fastrank_capi;

#ifdef __cplusplus
}
#endif

/* ---- import: for Python extension modules (Python.h included first) ---- */
#ifdef Py_PYTHON_H

/* The table, once fastrank_import() has succeeded (one copy per compilation unit). */
static const fastrank_capi* fastrank_api = NULL;

/* The table of the installed fastrank if it serves a caller built with major version
   `major` and table size `size`; NULL with ImportError set otherwise. */
static const fastrank_capi* fastrank_import_version(unsigned major, size_t size) {
    const fastrank_capi* api;
    PyObject* module = PyImport_ImportModule("fastrank._ext.capi"); /* the capsule's module */
    if (module == NULL)
        return NULL;
    Py_DECREF(module);
    api = (const fastrank_capi*)PyCapsule_Import(FASTRANK_CAPI_CAPSULE, 0);
    if (api == NULL)
        return NULL;
    if (api->version_major != major) {
        PyErr_Format(PyExc_ImportError,
                     "fastrank C API version %u.%u is installed, but this extension was built "
                     "for major version %u: rebuild it against the installed fastrank",
                     (unsigned)api->version_major, (unsigned)api->version_minor, major);
        return NULL;
    }
    if (api->size < size) {
        PyErr_Format(PyExc_ImportError,
                     "fastrank C API version %u.%u is installed, older than the one this "
                     "extension was built for (its table has %zu bytes, %zu needed): upgrade "
                     "fastrank",
                     (unsigned)api->version_major, (unsigned)api->version_minor, api->size,
                     size);
        return NULL;
    }
    return api;
}

/* Import fastrank's table into fastrank_api: 0, or -1 with ImportError set. */
static int fastrank_import(void) {
    fastrank_api = fastrank_import_version(FASTRANK_CAPI_VERSION_MAJOR, sizeof(fastrank_capi));
    return fastrank_api == NULL ? -1 : 0;
}

#endif /* Py_PYTHON_H */
#endif /* FASTRANK_H */
