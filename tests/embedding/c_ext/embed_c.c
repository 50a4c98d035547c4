/* fastrank's C API from a downstream C extension: the evaluation runs on threads of its own,
   one state per chunk of rows, merged in chunk order; the other functions run with the GIL
   released, so Python threads calling them run them in parallel. Arrays are passed as
   C-contiguous buffers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include <fastrank.h>

static void* eval_chunk(void* arg);

#ifdef _WIN32
#include <windows.h>
typedef HANDLE thread;
static DWORD WINAPI thread_main(LPVOID arg) { eval_chunk(arg); return 0; }
#define THREAD_START(t, arg) ((t) = CreateThread(NULL, 0, thread_main, (arg), 0, NULL))
#define THREAD_JOIN(t) (WaitForSingleObject((t), INFINITE), CloseHandle(t))
#else
#include <pthread.h>
typedef pthread_t thread;
#define THREAD_START(t, arg) pthread_create(&(t), NULL, eval_chunk, (arg))
#define THREAD_JOIN(t) pthread_join((t), NULL)
#endif

static PyObject* fail(int err) {
    PyErr_Format(err == FASTRANK_ENOMEM ? PyExc_MemoryError : PyExc_ValueError, "%s",
                 fastrank_api->last_error());
    return NULL;
}

/* rank(scores, n_labels, method, seed, first_row, out): out int32 (float64 for
   FASTRANK_RANK_FRACTIONAL), one row of n_labels per row of scores */
static PyObject* rank(PyObject* self, PyObject* args) {
    Py_buffer s, out;
    Py_ssize_t q, first_row, i, n;
    int method, err = 0;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "y*niKnw*", &s, &q, &method, &seed, &first_row, &out))
        return NULL;
    n = s.len / (Py_ssize_t)sizeof(double) / q;
    Py_BEGIN_ALLOW_THREADS
    for (i = 0; i < n && !err; i++)
        err = fastrank_api->rank_row((const double*)s.buf + i * q, q, method, seed,
                                     first_row + i, (int32_t*)out.buf + i * q,
                                     (double*)out.buf + i * q);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&s);
    PyBuffer_Release(&out);
    return err ? fail(err) : Py_NewRef(Py_None);
}

typedef struct {
    const double* scores;
    const uint8_t* truth;
    int64_t q, lo, hi, top_k, n_draws;
    int ties;
    uint64_t seed;
    int exact;         /* eval_add_row_exact: the chunk's boundary records kept below */
    fastrank_eval_state state;
    int64_t* records;  /* cap rows of 5 int64, n_records of them used */
    int64_t n_records, cap;
    int err;
} chunk;

/* room for one more row's records (at most q rows): counted in place when full, and the
   buffer doubled when counting leaves it more than half full */
static int make_room(chunk* c) {
    int64_t* grown;
    int err;
    if (c->cap - c->n_records >= c->q)
        return FASTRANK_OK;
    err = fastrank_api->eval_count_records(c->q, c->records, c->n_records, &c->n_records);
    if (err || (2 * c->n_records <= c->cap && c->cap - c->n_records >= c->q))
        return err;
    grown = realloc(c->records, (2 * c->cap + c->q) * 5 * sizeof(int64_t));
    if (!grown)
        return FASTRANK_ENOMEM;
    c->records = grown;
    c->cap = 2 * c->cap + c->q;
    return FASTRANK_OK;
}

static void* eval_chunk(void* arg) {
    chunk* c = (chunk*)arg;
    int64_t i, n;
    double* labels = malloc(FASTRANK_N_LABEL_ROWS * c->q * sizeof(double));
    double* draws = malloc((c->n_draws * 2 * c->q + 1) * sizeof(double));
    c->err = labels && draws ? fastrank_api->eval_init(&c->state, c->q, c->ties, c->top_k,
                                                       c->n_draws, c->seed, 0.0, labels, draws)
                             : FASTRANK_ENOMEM;
    for (i = c->lo; i < c->hi && !c->err; i++) {
        if (!c->exact) {
            c->err = fastrank_api->eval_add_row(&c->state, c->scores + i * c->q,
                                                c->truth + i * c->q, i, 1.0);
            continue;
        }
        c->err = make_room(c);
        if (!c->err)
            c->err = fastrank_api->eval_add_row_exact(&c->state, c->scores + i * c->q,
                                                      c->truth + i * c->q, i, 1.0,
                                                      c->records + 5 * c->n_records, &n);
        c->n_records += c->err ? 0 : n;
    }
    return NULL;
}

/* evaluate(scores, truth, n_labels, ties, top_k, n_draws, seed, bounds, out[, exact]):
   rows bounds[t] .. bounds[t+1]-1 on thread t (int64 bounds), merged in order; out
   (float64) gets the 19 metrics of each ranking type in ties, in FASTRANK_TIES_* order;
   with exact, macro precision and F1 by category of the expected ranking from the
   boundary records of all the chunks, side by side (eval_result_exact) */
static PyObject* evaluate(PyObject* self, PyObject* args) {
    Py_buffer s, y, b, out;
    Py_ssize_t q, n_threads, t, r;
    long long top_k, n_draws;
    int ties, exact = 0, err = 0;
    unsigned long long seed;
    int64_t n_records = 0, *records = NULL;
    chunk* c;
    thread* th;
    if (!PyArg_ParseTuple(args, "y*y*niLLKy*w*|p", &s, &y, &q, &ties, &top_k, &n_draws,
                          &seed, &b, &out, &exact))
        return NULL;
    n_threads = b.len / (Py_ssize_t)sizeof(int64_t) - 1;
    c = calloc(n_threads, sizeof(chunk));
    th = calloc(n_threads, sizeof(thread));
    Py_BEGIN_ALLOW_THREADS
    for (t = 0; t < n_threads; t++) {
        chunk init = {s.buf, y.buf, q, ((int64_t*)b.buf)[t], ((int64_t*)b.buf)[t + 1], top_k,
                      n_draws, ties, seed, exact};
        c[t] = init;
        THREAD_START(th[t], &c[t]);
    }
    for (t = 0; t < n_threads; t++) {
        THREAD_JOIN(th[t]);
        if (!err) err = c[t].err;
    }
    for (t = 1; t < n_threads && !err; t++)
        err = fastrank_api->eval_merge(&c[0].state, &c[t].state);
    if (exact && !err) {  /* the merged states' records side by side */
        for (t = 0; t < n_threads; t++)
            n_records += c[t].n_records;
        records = malloc(5 * n_records * sizeof(int64_t) + 1);
        err = records ? FASTRANK_OK : FASTRANK_ENOMEM;
        for (n_records = 0, t = 0; t < n_threads && !err; t++) {
            memcpy(records + 5 * n_records, c[t].records, 5 * c[t].n_records * sizeof(int64_t));
            n_records += c[t].n_records;
        }
    }
    for (r = 0, t = 0; t < FASTRANK_N_TIES && !err; t++)
        if (ties >> t & 1)
            err = exact ? fastrank_api->eval_result_exact(
                              &c[0].state, (int)t, records, n_records,
                              (double*)out.buf + FASTRANK_N_METRICS * r++)
                        : fastrank_api->eval_result(&c[0].state, (int)t,
                                                    (double*)out.buf + FASTRANK_N_METRICS * r++);
    for (t = 0; t < n_threads; t++) {
        free(c[t].state.labels);
        free(c[t].state.draws);
        free(c[t].records);
    }
    free(records);
    Py_END_ALLOW_THREADS
    free(c);
    free(th);
    PyBuffer_Release(&s);
    PyBuffer_Release(&y);
    PyBuffer_Release(&b);
    PyBuffer_Release(&out);
    return err ? fail(err) : Py_NewRef(Py_None);
}

/* topk(Q, B, n_features, k, sims, indices) */
static PyObject* topk(PyObject* self, PyObject* args) {
    Py_buffer Q, B, sims, idx;
    Py_ssize_t d, k;
    int err;
    if (!PyArg_ParseTuple(args, "y*y*nnw*w*", &Q, &B, &d, &k, &sims, &idx))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    err = fastrank_api->cosine_topk(Q.buf, Q.len / 8 / d, B.buf, B.len / 8 / d, d, k,
                                    sims.buf, idx.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&Q);
    PyBuffer_Release(&B);
    PyBuffer_Release(&sims);
    PyBuffer_Release(&idx);
    return err ? fail(err) : Py_NewRef(Py_None);
}

/* vgram(X, n_features, synapses, n_synapses, patterns, n_train, distance, count, nearest):
   encode the rows of X; the last n_rows - n_train of them searched against the first
   n_train (distance, count, nearest: n_tests x n_neurons) */
static PyObject* vgram(PyObject* self, PyObject* args) {
    Py_buffer X, syn, pat, dist, cnt, near;
    Py_ssize_t nf, S, n_train, n, nn, W, t;
    int err;
    uint64_t* tests;
    if (!PyArg_ParseTuple(args, "y*ny*nw*nw*w*w*", &X, &nf, &syn, &S, &pat, &n_train, &dist,
                          &cnt, &near))
        return NULL;
    n = X.len / 8 / nf;
    nn = syn.len / 4 / S;
    W = (S + 63) / 64;
    Py_BEGIN_ALLOW_THREADS
    err = fastrank_api->vgram_encode(X.buf, n, nf, syn.buf, nn, S, pat.buf);
    tests = malloc(nn * (n - n_train) * W * sizeof(uint64_t));
    uint64_t* memory = malloc(nn * n_train * W * sizeof(uint64_t));
    for (t = 0; t < nn && !err; t++) {  /* split each neuron's patterns: memory, tests */
        memcpy(memory + t * n_train * W, (uint64_t*)pat.buf + t * n * W,
               n_train * W * sizeof(uint64_t));
        memcpy(tests + t * (n - n_train) * W, (uint64_t*)pat.buf + (t * n + n_train) * W,
               (n - n_train) * W * sizeof(uint64_t));
    }
    if (!err)
        err = fastrank_api->vgram_search(memory, n_train, tests, n - n_train, nn, W, dist.buf,
                                         cnt.buf, near.buf);
    free(tests);
    free(memory);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&X);
    PyBuffer_Release(&syn);
    PyBuffer_Release(&pat);
    PyBuffer_Release(&dist);
    PyBuffer_Release(&cnt);
    PyBuffer_Release(&near);
    return err ? fail(err) : Py_NewRef(Py_None);
}

/* import_version(major, size): fastrank_import_version as a caller built for another
   version would call it (None, or ImportError) */
static PyObject* import_version(PyObject* self, PyObject* args) {
    unsigned major;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "In", &major, &size))
        return NULL;
    return fastrank_import_version(major, (size_t)size) ? Py_NewRef(Py_None) : NULL;
}

static PyMethodDef methods[] = {
    {"rank", rank, METH_VARARGS, NULL},
    {"evaluate", evaluate, METH_VARARGS, NULL},
    {"topk", topk, METH_VARARGS, NULL},
    {"vgram", vgram, METH_VARARGS, NULL},
    {"import_version", import_version, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "embed_c", NULL, -1, methods};

PyMODINIT_FUNC PyInit_embed_c(void) {
    if (fastrank_import() < 0)
        return NULL;
    return PyModule_Create(&module);
}
