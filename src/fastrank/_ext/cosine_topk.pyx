# cython: language_level=3
"""Exact top-k cosine neighbours and the label aggregation of kNN / ML-kNN.

The Python wrapper is ``fastrank.neighbors``; it validates input, scales each row by a power
of two (exact) into [-1, 1), computes the squared and inverse norms (with the kernels below,
once per base) and allocates the outputs.

Cosine: from the dot product d and the squared norms aa, bb of the two scaled rows,
sign(d) * sqrt(d^2 / (aa bb)) with the ratio rounded once in float64 (``fr_cosine``). For
integer-valued rows (binary, counts; times any power of two) d, aa and bb are exact within
the limits documented in ``fastrank.neighbors.topk_cosine``, so the result depends only on
the rational d^2 / (aa bb) and the sign: equal cosines are bit-equal. The squared norm of a
row is its dot product with itself as the search computes it, so a row's cosine with itself
(or a duplicate) is exactly 1. Results lie in [-1, 1] (the ratio is clipped to 1).

Neighbour order: similarity descending, then base index ascending. Selection is partial: in
the dense search each query keeps a bounded min-heap of its k best (similarity, index) pairs
inside its output row (root = the worst kept pair), sorted in place at the end; in the CSR
search a reservoir holds up to 4k candidates that beat a bar (the k-th best so far), compacted
by quickselect when full, and only the final k are sorted.

Both searches compute the exact cosine only for the candidates that may enter: the
approximation dot * (1/|q|) * (1/|b|) (``_approx``), within a relative APPROX of the exact
cosine, is compared first with the k-th best so far, and a candidate whose approximation,
raised by its error bound, stays below it cannot enter; the others get their exact cosine
(``fr_cosine``). So the results are those of computing every cosine exactly. In the dense
search a coarser sieve runs first, 64 base rows per call in vector registers
(``fr_may_enter``: dot * (1/|b|) in the search's type against the k-th best divided by
1/|q|, widened to cover its roundings), and only the rows it passes reach that filter. The
sieve runs over a whole base block at once (``_offer_block``), its bar the worst kept
cosine, or in a query's first block a cosine that k of the block's rows reach: a bound on
their k-th largest dot * (1/|b|) (``fr_kth_scaled``: the k-th largest of the maxima of
about 4k groups of rows, bounded by buckets; at k = 1 the largest) times 1/|q|, lowered
past its roundings. So about k rows, not all of them, fill the heap.

Dense input: OpenMP over blocks of queries; each thread scans B in blocks, computing each
(query block x base block) block of dot products with ``fr_dots`` (``core/cosine.h``; the
micro-kernels of each instruction set in ``core/dots/``; float32: packed base rows,
blocked like a GEMM, and up to 192 features panels of 16 (AVX-512) or 8 (AVX2) base rows
in the lanes of a vector) and offering them to the queries' heaps. Every dot
product there is summed in one fixed order that
depends only on the number of features (8 interleaved partial sums of fused multiply-adds,
then a fixed pairwise reduction), so a similarity depends only on its two rows: not on the
block shapes, the position of the rows in the base, the thread count, or which part of the
base is searched (a BLAS GEMM rounds an element differently with the matrix shapes, so the
search of a shard of the base would not reproduce the search of the whole). The same sums
run with 256-bit vectors on CPUs with AVX2 and FMA3, and with C99 ``fma`` otherwise, giving
the same bits; on x86-64 CPUs without FMA3, whose C library computes ``fma`` in software
(about 50 times slower), with an exact emulation of it (``core/fma_emulated.h``, same
bits).
CSR input: OpenMP over queries; each thread accumulates the dot products of one query with
every base document through the inverted index (B transposed, CSR) into its own dense
accumulator (multiply, then add, in the order of the query's stored features), then turns
them into cosines and selects. Every query is summed in a fixed order, so results do not
depend on the thread count.
"""
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport fabs, sqrt
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from fastrank._ext._simd cimport current_level, fr_simd_level, fr_simd_name
from _tiesort cimport floating, index_t

# aggregation codes
cdef enum:
    AGG_MAX = 0
    AGG_SUM = 1
    AGG_COUNT = 2

#: the codes of knn_aggregate's modes (fastrank.neighbors reads them)
AGGREGATES = {"max": AGG_MAX, "sum": AGG_SUM, "count": AGG_COUNT}


# ---- per-thread scratch ---------------------------------------------------------------------

# relative error bound of _approx against fr_cosine (float32 rounding 2^-24, plus float64
# roundings), with room to spare
cdef double APPROX = 2.0 ** -20
# the widening of the dense search's sieve (_may_enter), relative and absolute
cdef double SIEVE = 2.0 ** -17
cdef double SIEVE_ABS = 2.0 ** -120

cdef enum:
    PAD = 64       # a cache line
    BLOCK_WORDS = 64  # mask words of the rows _offer_block sieves per call (64 rows each)
    SCALE_ROWS = 64   # rows scale_dense gives a thread at a time
    RESERVOIR = 4  # reservoir capacity in units of k (measured: 4 beats 2 on Reuters, k=100)


cdef inline void* _scratch(size_t n) noexcept nogil:
    """n zeroed bytes with a free cache line on each side, so that no other thread's data
    shares a cache line with them (false sharing); NULL when out of memory."""
    cdef char* p = <char*> calloc(n + 2 * PAD, 1)
    return NULL if p == NULL else <void*> (p + PAD)


cdef inline void _scratch_free(void* p) noexcept nogil:
    if p != NULL:
        free(<char*> p - PAD)


# ---- bounded heap of (similarity, index), root = the pair ranked last ----------------------

cdef inline bint _after(floating va, int64_t ia, floating vb, int64_t ib) noexcept nogil:
    """True when (va, ia) ranks after (vb, ib): lower similarity, or equal and larger index."""
    return va < vb or (va == vb and ia > ib)


cdef inline void _sift_down(floating* hv, int64_t* hi, Py_ssize_t size,
                            Py_ssize_t pos) noexcept nogil:
    """The pair at pos moved down to its place. The child ranked after the other is picked
    without a branch (bitwise, not short-circuit, operators: the compiler emits flag
    arithmetic), as the pick is a coin toss that a branch would mispredict half the time."""
    cdef Py_ssize_t child
    cdef floating v = hv[pos]
    cdef int64_t j = hi[pos]
    while True:
        child = 2 * pos + 1
        if child + 1 < size:
            child += (hv[child + 1] < hv[child]) | ((hv[child + 1] == hv[child])
                                                    & (hi[child + 1] > hi[child]))
        elif child >= size:
            break
        if not _after(hv[child], hi[child], v, j):
            break
        hv[pos] = hv[child]
        hi[pos] = hi[child]
        pos = child
    hv[pos] = v
    hi[pos] = j


cdef inline void _push(floating* hv, int64_t* hi, Py_ssize_t* size, Py_ssize_t k,
                       floating v, int64_t j) noexcept nogil:
    """Offer (v, j) to a heap of capacity k holding size[0] pairs."""
    cdef Py_ssize_t pos, parent
    if size[0] == k and v < hv[0]:
        return  # below the worst kept similarity: cannot enter
    if size[0] < k:
        pos = size[0]
        size[0] += 1
        while pos > 0:
            parent = (pos - 1) >> 1
            if not _after(v, j, hv[parent], hi[parent]):
                break
            hv[pos] = hv[parent]
            hi[pos] = hi[parent]
            pos = parent
        hv[pos] = v
        hi[pos] = j
    elif _after(hv[0], hi[0], v, j):
        hv[0] = v
        hi[0] = j
        _sift_down(hv, hi, k, 0)


cdef inline void _sort_heap(floating* hv, int64_t* hi, Py_ssize_t size) noexcept nogil:
    """Heap sort in place: best pair first."""
    cdef Py_ssize_t end
    cdef floating v
    cdef int64_t j
    for end in range(size - 1, 0, -1):
        v = hv[0]
        j = hi[0]
        hv[0] = hv[end]
        hi[0] = hi[end]
        hv[end] = v
        hi[end] = j
        _sift_down(hv, hi, end, 0)


# ---- reservoir: a buffer of RESERVOIR*k candidates behind a moving bar (CSR search) -------

cdef struct Reservoir:
    Py_ssize_t m        # pairs held in the buffer
    Py_ssize_t k
    Py_ssize_t cap      # RESERVOIR * k: compact when full
    bint has_bar
    double bar_v        # the k-th best pair kept at the last compaction: a candidate must
    int64_t bar_i       # rank before it to be worth holding (float -> double is exact)


cdef inline bint _before(floating va, int64_t ia, floating vb, int64_t ib) noexcept nogil:
    """True when (va, ia) ranks before (vb, ib)."""
    return va > vb or (va == vb and ia < ib)


cdef inline void _swap(floating* v, int64_t* ix, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef floating tv = v[a]
    cdef int64_t ti = ix[a]
    v[a] = v[b]
    ix[a] = ix[b]
    v[b] = tv
    ix[b] = ti


cdef void _select_top(floating* v, int64_t* ix, Py_ssize_t m, Py_ssize_t k) noexcept nogil:
    """Quickselect (Hoare partition, median-of-three pivot): reorder the m distinct pairs so
    that the k best are v[0..k) (in any order). Requires 0 < k < m."""
    cdef Py_ssize_t lo = 0, hi = m - 1, a, b, mid
    cdef floating pv
    cdef int64_t pi
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if _before(v[mid], ix[mid], v[lo], ix[lo]):
            _swap(v, ix, lo, mid)
        if _before(v[hi], ix[hi], v[lo], ix[lo]):
            _swap(v, ix, lo, hi)
        if _before(v[hi], ix[hi], v[mid], ix[mid]):
            _swap(v, ix, mid, hi)
        pv = v[mid]
        pi = ix[mid]
        a = lo
        b = hi
        while a <= b:
            while _before(v[a], ix[a], pv, pi):
                a += 1
            while _before(pv, pi, v[b], ix[b]):
                b -= 1
            if a <= b:
                _swap(v, ix, a, b)
                a += 1
                b -= 1
        if k - 1 <= b:
            hi = b
        elif k - 1 >= a:
            lo = a
        else:
            return


cdef inline void _res_compact(Reservoir* r, floating* bv, int64_t* bi) noexcept nogil:
    """Keep the k best pairs and raise the bar to the worst of them."""
    cdef Py_ssize_t t, w = 0
    _select_top(bv, bi, r.m, r.k)
    r.m = r.k
    for t in range(1, r.k):
        if _before(bv[w], bi[w], bv[t], bi[t]):
            w = t
    r.has_bar = True
    r.bar_v = bv[w]
    r.bar_i = bi[w]


cdef inline void _res_offer(Reservoir* r, floating* bv, int64_t* bi, floating v,
                            int64_t j) noexcept nogil:
    if r.has_bar and not (v > r.bar_v or (v == r.bar_v and j < r.bar_i)):
        return
    bv[r.m] = v
    bi[r.m] = j
    r.m += 1
    if r.m == r.cap:
        _res_compact(r, bv, bi)


cdef inline void _res_emit(Reservoir* r, floating* bv, int64_t* bi, floating* out_v,
                           int64_t* out_i) noexcept nogil:
    """The k best pairs, sorted, into out (r.m >= k); empties the reservoir."""
    cdef Py_ssize_t t, size = 0
    if r.m > r.k:
        _select_top(bv, bi, r.m, r.k)
    for t in range(r.k):
        _push(out_v, out_i, &size, r.k, bv[t], bi[t])
    _sort_heap(out_v, out_i, size)
    r.m = 0
    r.has_bar = False


cdef floating _kth_largest(floating* a, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th largest of a[0..n) (1 <= k <= n); reorders a (quickselect on values)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, x, y, target = k - 1
    cdef floating pv, t
    while lo < hi:
        pv = a[lo + (hi - lo) // 2]
        x = lo
        y = hi
        while x <= y:
            while a[x] > pv:
                x += 1
            while pv > a[y]:
                y -= 1
            if x <= y:
                t = a[x]
                a[x] = a[y]
                a[y] = t
                x += 1
                y -= 1
        if target <= y:
            hi = y
        elif target >= x:
            lo = x
        else:
            break
    return a[target]


cdef inline int _add_lists(fr_simd_level lv, floating* acc, const floating* w,
                           const floating** x, int m, Py_ssize_t nb) noexcept nogil:
    """Add the m pending posting lists of every base row (weights w, values x) to acc in
    turn (fr_add_scaled); returns 0, the lists left pending."""
    if m > 0:
        if floating is float:
            fr_add_scaled_f32(lv, acc, w, x, m, nb)
        else:
            fr_add_scaled_f64(lv, acc, w, x, m, nb)
    return 0


cdef inline double _approx(floating dot, double qinv, const double* binv,
                           Py_ssize_t j) noexcept nogil:
    """dot * (1/|q|) * (1/|b_j|): within a relative APPROX of the cosine fr_cosine gives."""
    return dot * qinv * binv[j]


cdef inline void _res_bar_from_groups(Reservoir* r, floating* bv, const floating* acc,
                                      double qinv, const double* binv, Py_ssize_t nb,
                                      Py_ssize_t skip) noexcept nogil:
    """Start the reservoir with a safe bar for a full row of dot products acc[0..nb) (index
    `skip` is not a candidate): cut the row into cap groups; the k-th largest group maximum
    of the approximate cosines (_approx), lowered by their error, is a value that at least k
    cosines reach, so the k best all clear it. Needs nb >= 2 * cap."""
    cdef Py_ssize_t g, j, lo, hi, best
    cdef double top, a
    for g in range(r.cap):
        lo = g * nb // r.cap
        hi = (g + 1) * nb // r.cap
        best = lo if lo != skip else lo + 1
        top = _approx(acc[best], qinv, binv, best)
        for j in range(lo, hi):
            a = _approx(acc[j], qinv, binv, j)
            if j != skip and a > top:
                top = a
        bv[g] = <floating> top
    top = _kth_largest(bv, r.cap, r.k)
    r.has_bar = True
    r.bar_v = top - fabs(top) * APPROX
    r.bar_i = nb  # a tie with the bar clears it: v >= bar_v


cdef inline void _res_offer_dot(Reservoir* r, floating* bv, int64_t* bi, floating dot,
                                double qa, double qinv, const floating* ba,
                                const double* binv, int64_t j) noexcept nogil:
    """Offer the cosine of dot product `dot` with base document j, computing it exactly
    (fr_cosine) only when its approximation could clear the bar."""
    cdef double a
    if r.has_bar:
        a = _approx(dot, qinv, binv, j)
        if a + fabs(a) * APPROX < r.bar_v:
            return
    _res_offer(r, bv, bi, <floating> fr_cosine(dot, qa, ba[j]), j)


cdef inline void _heap_offer_dot(floating* hv, int64_t* hi, Py_ssize_t* size, Py_ssize_t k,
                                 floating dot, double qa, double qinv, const floating* ba,
                                 const double* binv, Py_ssize_t j, int64_t j0) noexcept nogil:
    """Offer base document j0 + j, with dot product `dot`, to a full or filling heap of the
    k best; its exact cosine (fr_cosine) is computed only when its approximation (_approx)
    could reach the worst kept similarity (a tie with it enters when the index is lower)."""
    cdef double a
    if size[0] == k:
        a = _approx(dot, qinv, binv, j)
        if a + fabs(a) * APPROX < hv[0]:
            return
    _push(hv, hi, size, k, <floating> fr_cosine(dot, qa, ba[j]), j0 + j)


# ---- row scaling and squared norms ----------------------------------------------------------

cdef inline void _scale_rows(fr_simd_level lv, const floating* x, floating* out,
                             floating* sqnorms, Py_ssize_t n, Py_ssize_t m) noexcept nogil:
    """out <- the n rows of x (m values each), each times 2^-e_i, its largest magnitude then
    in [1/2, 1), exactly (fr_scale_rows); their squared norms into sqnorms unless NULL."""
    if floating is float:
        fr_scale_rows_f32(lv, x, out, sqnorms, n, m)
    else:
        fr_scale_rows_f64(lv, x, out, sqnorms, n, m)


def scale_dense(const floating[:, ::1] X, floating[:, ::1] out, floating[::1] sqnorms):
    """out[i] <- X[i] * 2^-e_i, max |out[i]| in [1/2, 1) (a zero row stays zero); unless
    sqnorms is empty, sqnorms[i] <- the squared norm of out[i] as sqnorms_dense computes
    it, while the row is in cache. OpenMP over blocks of SCALE_ROWS rows."""
    cdef Py_ssize_t b, i, n = X.shape[0], m = X.shape[1]
    cdef bint norms = sqnorms.shape[0] > 0
    cdef fr_simd_level lv = current_level()
    if m == 0:
        if norms:
            sqnorms[:] = 0
        return
    for b in prange((n + SCALE_ROWS - 1) // SCALE_ROWS, nogil=True, schedule="static"):
        i = b * SCALE_ROWS
        _scale_rows(lv, &X[i, 0], &out[i, 0], &sqnorms[i] if norms else NULL,
                    min(SCALE_ROWS, n - i), m)


def scale_csr(const floating[::1] data, const index_t[::1] indptr, floating[::1] out):
    """The data array of a CSR matrix with rows scaled as in scale_dense."""
    cdef Py_ssize_t i, lo, hi, n = indptr.shape[0] - 1
    cdef fr_simd_level lv = current_level()
    for i in prange(n, nogil=True, schedule="static"):
        lo = indptr[i]
        hi = indptr[i + 1]
        if hi > lo:
            _scale_rows(lv, &data[lo], &out[lo], NULL, 1, hi - lo)


def sqnorms_csr(const floating[::1] data, const index_t[::1] indptr, floating[::1] out):
    """out[i] <- the squared norm of CSR row i, summed in storage order as topk_csr sums the
    dot product of row i with itself (so the two are equal)."""
    cdef Py_ssize_t i, p, n = indptr.shape[0] - 1
    cdef floating s
    for i in prange(n, nogil=True, schedule="static"):
        s = 0
        for p in range(indptr[i], indptr[i + 1]):
            s = s + data[p] * data[p]
        out[i] = s


# ---- dense dot products and cosines --------------------------------------------------------

cdef extern from "cosine.h":
    void fr_cosine_init() noexcept nogil
    void fr_dots_f64(fr_simd_level level, const double* q, const double* b, double* s,
                     int64_t mq, int64_t mb, int64_t d) noexcept nogil
    void fr_dots_f32(fr_simd_level level, const float* q, const float* b, float* s,
                     int64_t mq, int64_t mb, int64_t d) noexcept nogil
    fr_simd_level fr_dots_path(fr_simd_level level) noexcept nogil
    void fr_scale_rows_f64(fr_simd_level level, const double* x, double* out, double* sqnorms,
                           int64_t n, int64_t m) noexcept nogil
    void fr_scale_rows_f32(fr_simd_level level, const float* x, float* out, float* sqnorms,
                           int64_t n, int64_t m) noexcept nogil
    uint64_t fr_may_enter_f64(fr_simd_level level, const double* dot, const double* w,
                              int64_t n, double lo) noexcept nogil
    void fr_may_enter_rows_f64(fr_simd_level level, const double* dot, const double* w,
                               int64_t n, double lo, uint64_t* masks) noexcept nogil
    void fr_may_enter_rows_f32(fr_simd_level level, const float* dot, const float* w,
                               int64_t n, float lo, uint64_t* masks) noexcept nogil
    enum: FR_KTH_GROUPS
    double fr_kth_scaled_f64(const double* dot, const double* w, int64_t n,
                             int64_t k) noexcept nogil
    float fr_kth_scaled_f32(const float* dot, const float* w, int64_t n,
                            int64_t k) noexcept nogil
    double fr_top2_scaled_f64(fr_simd_level level, const double* dot, const double* w,
                              int64_t n, int64_t* at, double* next) noexcept nogil
    float fr_top2_scaled_f32(fr_simd_level level, const float* dot, const float* w,
                             int64_t n, int64_t* at, float* next) noexcept nogil
    uint64_t fr_may_enter_f32(fr_simd_level level, const float* dot, const float* w,
                              int64_t n, float lo) noexcept nogil
    double fr_cosine(double dot, double aa, double bb) noexcept nogil
    enum: FR_ADD_LISTS
    void fr_add_scaled_f64(fr_simd_level level, double* acc, const double* w,
                           const double* const* x, int m, int64_t n) noexcept nogil
    void fr_add_scaled_f32(fr_simd_level level, float* acc, const float* w,
                           const float* const* x, int m, int64_t n) noexcept nogil

cdef extern from "bits.h":
    unsigned FR_CTZ64(uint64_t x) noexcept nogil

cdef extern from "fma_emulated.h":
    double fr_fma_emulated(double a, double b, double c) noexcept nogil
    float fr_fmaf_emulated(float a, float b, float c) noexcept nogil


fr_cosine_init()


def fma_emulated(const floating[::1] a, const floating[::1] b, const floating[::1] c,
                 floating[::1] out):
    """out[i] <- a[i] * b[i] + c[i] rounded once, as the emulation computes it (for tests
    against the C library's fma)."""
    cdef Py_ssize_t i
    if not (a.shape[0] == b.shape[0] == c.shape[0] == out.shape[0]):
        raise ValueError(f"fma_emulated: a, b, c and out have lengths {a.shape[0]}, "
                         f"{b.shape[0]}, {c.shape[0]} and {out.shape[0]}; they must be equal")
    with nogil:
        for i in range(a.shape[0]):
            if floating is double:
                out[i] = fr_fma_emulated(a[i], b[i], c[i])
            else:
                out[i] = fr_fmaf_emulated(a[i], b[i], c[i])


def simd_path():
    """The instruction-set path the dense dot products take at the level in use
    (``fastrank.use_simd``): ``"avx512"`` from avx512 on, ``"avx2"``, ``"popcnt"`` (the
    portable sums with fma emulated, as x86-64 CPUs without FMA3 need) or ``"portable"``
    (the C library's fma; emulated too on an x86-64 CPU without FMA3: ``"popcnt"``)."""
    return fr_simd_name(fr_dots_path(current_level())).decode()


cdef inline void _dots(fr_simd_level lv, const floating* b, const floating* q, floating* s,
                       Py_ssize_t mb, Py_ssize_t mq, Py_ssize_t d) noexcept nogil:
    """Row-major s (mq x mb) <- q (mq x d) @ b (mb x d).T, each element in a fixed order, on
    the path of level lv."""
    if floating is float:
        fr_dots_f32(lv, q, b, s, mq, mb, d)
    else:
        fr_dots_f64(lv, q, b, s, mq, mb, d)


cdef inline uint64_t _may_enter(fr_simd_level lv, const floating* dot, const floating* w,
                                Py_ssize_t n, double qinv, double bar) noexcept nogil:
    """Bit j set (j < n <= 64) unless base row j is proven unable to reach bar, a cosine:
    dot[j] * w[j] (w: the inverse norms of the base rows, rounded to the search's type) is
    below bar / qinv widened by SIEVE relative and SIEVE_ABS absolute (fr_may_enter). The
    filter of _heap_offer_dot keeps a row only if its x = dot * binv reaches T = bar / qinv
    less 2 APPROX |T|; dot * w is within 2^-23 |x| + 2^-149 of x and the bound's
    conversion to float within 2^-24 of it, all inside the widening: every row that filter
    keeps is kept here. A zero query (qinv 0) keeps every row."""
    cdef double lo
    if qinv == 0:
        return (<uint64_t> -1) >> (64 - n)
    lo = _sieve_lo(qinv, bar)
    if floating is float:
        return fr_may_enter_f32(lv, dot, w, n, <float> lo)
    else:
        return fr_may_enter_f64(lv, dot, w, n, lo)


cdef inline double _lowered(double t) noexcept nogil:
    """t lowered by SIEVE relative and SIEVE_ABS absolute: below every rounding of it."""
    return t - fabs(t) * SIEVE - SIEVE_ABS


cdef inline double _sieve_lo(double qinv, double bar) noexcept nogil:
    """The sieve's bound on dot * w for a bar (a cosine): bar / qinv lowered (_may_enter).
    Needs qinv > 0."""
    return _lowered(bar / qinv)


cdef inline void _offer_block(fr_simd_level lv, const floating* row, const floating* w,
                              Py_ssize_t n, double qa, double qinv, const floating* ba,
                              const double* binv, int64_t j0, Py_ssize_t skip, floating* hv,
                              int64_t* hi, Py_ssize_t* size, Py_ssize_t k) noexcept nogil:
    """Offer the n rows of a block (dot products row, base rows j0 ..; row `skip` excluded,
    -1 for none) that may rank among the query's k best to its heap, from one bar: the
    worst kept cosine when the heap is full; else a cosine that at least k of the block's
    other rows reach. That one is the bound on their k-th largest row[j] * w[j]
    (fr_kth_scaled; for k = 1 and no excluded row the largest, fr_top2_scaled) times qinv,
    the cosine of a row that gives it up to its roundings (float32: 2^-22 relative,
    2^-148 absolute), lowered by SIEVE relative and SIEVE_ABS absolute (and a product no
    larger gives a cosine no larger, less its own rounding). Rows pass the sieve
    (fr_may_enter_rows, as _may_enter) in one or two vector passes over the block, where
    the general search sieves chunk after chunk as its bar rises; for k = 1, when the
    second largest product is below the sieve's bound, only the largest passes, and the
    pass that finds it is the only one. _heap_offer_dot checks each row against the
    rising root again. Needs qinv > 0 and, unless the heap is full,
    k + (skip >= 0) <= min(n, FR_KTH_GROUPS)."""
    cdef double bar, lo
    cdef Py_ssize_t s0, c, j, part, need = k + (skip >= 0)
    cdef uint64_t m
    cdef uint64_t masks[BLOCK_WORDS]
    cdef int64_t at
    cdef floating top, next_
    if size[0] == k:
        bar = hv[0]
    elif need == 1:
        if floating is float:
            top = fr_top2_scaled_f32(lv, row, w, n, &at, &next_)
        else:
            top = fr_top2_scaled_f64(lv, row, w, n, &at, &next_)
        bar = _lowered(top * qinv)
        lo = _sieve_lo(qinv, bar)
        if next_ < <floating> lo:     # the sieve's pass would find row `at` alone
            if top >= <floating> lo:
                _heap_offer_dot(hv, hi, size, k, row[at], qa, qinv, ba, binv, at, j0)
            return
    elif floating is float:
        bar = _lowered(fr_kth_scaled_f32(row, w, n, need) * qinv)
    else:
        bar = _lowered(fr_kth_scaled_f64(row, w, n, need) * qinv)
    lo = _sieve_lo(qinv, bar)
    s0 = 0
    while s0 < n:
        part = min(64 * <Py_ssize_t> BLOCK_WORDS, n - s0)
        if floating is float:
            fr_may_enter_rows_f32(lv, row + s0, w + s0, part, <float> lo, masks)
        else:
            fr_may_enter_rows_f64(lv, row + s0, w + s0, part, lo, masks)
        for c in range((part + 63) // 64):
            m = masks[c]
            while m:
                j = s0 + 64 * c + FR_CTZ64(m)
                m &= m - 1
                if j != skip:
                    _heap_offer_dot(hv, hi, size, k, row[j], qa, qinv, ba, binv, j, j0)
        s0 += part


def sqnorms_dense(const floating[:, ::1] X, floating[::1] out):
    """out[i] <- the squared norm of X[i], the dot product of X[i] with itself as the dense
    search computes it (so the two are equal)."""
    cdef Py_ssize_t i, n = X.shape[0], d = X.shape[1]
    cdef fr_simd_level lv = current_level()
    for i in prange(n, nogil=True, schedule="static"):
        _dots(lv, &X[i, 0], &X[i, 0], &out[i], 1, 1, d)


def inv_norms(const floating[::1] sqnorms, double[::1] out):
    """out[i] <- 1 / sqrt(sqnorms[i]) in float64 (0 for a zero row): the factors of the
    approximate cosines (_approx) that spare the search most exact ones."""
    cdef Py_ssize_t i, n = sqnorms.shape[0]
    for i in prange(n, nogil=True, schedule="static"):
        out[i] = 1 / sqrt(<double> sqnorms[i]) if sqnorms[i] > 0 else 0.0


# ---- top-k search -----------------------------------------------------------------------------

cdef inline void _search_block(fr_simd_level lv, const floating* Q, const floating* B,
                               const floating* qa, const floating* ba, const double* binv,
                               const floating* w, floating* out_sim, int64_t* out_idx,
                               Py_ssize_t q0, Py_ssize_t mq, Py_ssize_t nb, Py_ssize_t d,
                               Py_ssize_t k, Py_ssize_t block_b, bint exclude_self, floating* S,
                               Py_ssize_t* size) noexcept nogil:
    """Queries q0 .. q0 + mq - 1 of Q (rows of d features) against the nb rows of B: each
    one's k best (cos, j) into its row of out_sim / out_idx (k per row), sorted. The
    (mq x block_b) dot products of each block of B with _dots, offered to the query's heap
    (_heap_offer_dot) by the rows that pass the sieve over the whole block
    (_offer_block); where the block has no such bar (fewer rows than k, or k beyond
    FR_KTH_GROUPS) and the heap is not full, or the query is zero, every row until the
    heap is full and then those that pass the sieve (_may_enter, 64 rows per call; w:
    binv in the search's type). With exclude_self, j == i is never a candidate. S
    (mq x block_b) and size (mq) are scratch."""
    cdef Py_ssize_t b0 = 0, mb, r, i, j, c0, n, chunk, skip, need
    cdef double qinv
    cdef floating* row
    cdef floating* hv
    cdef uint64_t m
    for r in range(mq):
        size[r] = 0
    while b0 < nb:
        mb = min(block_b, nb - b0)
        _dots(lv, B + b0 * d, Q + q0 * d, S, mb, mq, d)
        for r in range(mq):
            i = q0 + r
            row = S + r * mb
            hv = out_sim + i * k
            qinv = 1 / sqrt(<double> qa[i]) if qa[i] > 0 else 0.0
            skip = i - b0 if exclude_self and b0 <= i < b0 + mb else -1
            need = k + (skip >= 0)
            if qinv > 0 and (size[r] == k or need <= min(mb, <Py_ssize_t> FR_KTH_GROUPS)):
                _offer_block(lv, row, w + b0, mb, qa[i], qinv, ba + b0, binv + b0, b0, skip,
                             hv, out_idx + i * k, &size[r], k)
                continue
            c0 = 0
            chunk = 8 if b0 == 0 else 64
            while c0 < mb:
                if size[r] < k:     # filling the heap: every row enters
                    n = 1
                    m = 1
                else:               # the next rows that may reach its root, 64 at a time
                    n = min(chunk, mb - c0)   # (fewer while the root rises fast)
                    chunk = min(2 * chunk, 64)
                    m = _may_enter(lv, row + c0, w + b0 + c0, n, qinv, hv[0])
                while m:            # _heap_offer_dot checks again, as the root rises
                    j = c0 + FR_CTZ64(m)
                    m &= m - 1
                    if not (exclude_self and b0 + j == i):
                        _heap_offer_dot(hv, out_idx + i * k, &size[r], k, row[j], qa[i],
                                        qinv, ba + b0, binv + b0, j, b0)
                c0 += n
        b0 = b0 + block_b
    for r in range(mq):
        _sort_heap(out_sim + (q0 + r) * k, out_idx + (q0 + r) * k, size[r])


def topk_dense(const floating[:, ::1] Q, const floating[:, ::1] B, const floating[::1] qa,
               const floating[::1] ba, const double[::1] binv, floating[:, ::1] out_sim,
               int64_t[:, ::1] out_idx, bint exclude_self, Py_ssize_t block_q,
               Py_ssize_t block_b, unsigned char[::1] blocks):
    """Top-k cosines: out[i] <- the k best (cos, j) of Q[i] against B, sorted; qa and ba are
    the squared norms of the rows (sqnorms_dense), binv the inverse norms of B's rows
    (inv_norms). With exclude_self, j == i is never a candidate. OpenMP over query blocks,
    one thread for each whole (block_q x block_b) block of similarities that `blocks` holds
    (scratch the caller keeps between calls: memory freed at the end of a call would come
    back as fresh pages, a page fault at each first touch); each thread computes its dot
    products with _dots, whose every element depends only on its two rows (see the module
    docstring), and offers them to the query's heap (_heap_offer_dot: the exact cosine only
    for those that may enter)."""
    cdef Py_ssize_t nq = Q.shape[0], nb = B.shape[0], k = out_sim.shape[1]
    cdef Py_ssize_t n_blocks = (nq + block_q - 1) // block_q
    cdef Py_ssize_t d = Q.shape[1]
    cdef Py_ssize_t per_thread = block_q * block_b * sizeof(floating)
    cdef int n_threads = <int> (blocks.shape[0] // per_thread)
    cdef Py_ssize_t blk, q0, j
    cdef fr_simd_level lv = current_level()
    cdef floating* S = NULL
    cdef Py_ssize_t* size = NULL
    cdef floating* w
    cdef int failed[1]
    if n_threads < 1:
        raise ValueError("topk_dense: the scratch holds no similarity block")
    w = <floating*> malloc(nb * sizeof(floating)) if floating is float \
        else <floating*> &binv[0]
    if w == NULL:
        raise MemoryError("fastrank: cannot allocate the inverse norms of the base")
    if floating is float:
        for j in range(nb):
            w[j] = <float> binv[j]
    failed[0] = 0
    with nogil, parallel(num_threads=n_threads):
        S = <floating*> &blocks[threadid() * per_thread]
        size = <Py_ssize_t*> _scratch(block_q * sizeof(Py_ssize_t))
        if size == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for blk in prange(n_blocks, schedule="dynamic"):
            if size == NULL:
                continue
            q0 = blk * block_q
            _search_block(lv, &Q[0, 0], &B[0, 0], &qa[0], &ba[0], &binv[0], w,
                          &out_sim[0, 0], &out_idx[0, 0], q0, min(block_q, nq - q0), nb, d, k,
                          block_b, exclude_self, S, size)
        _scratch_free(size)
    if floating is float:
        free(w)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the heap sizes of a query block")


cdef int topk_dense_f64(const double* Q, Py_ssize_t nq, const double* B, Py_ssize_t nb,
                        Py_ssize_t d, Py_ssize_t k, double* out_sim,
                        int64_t* out_idx) noexcept nogil:
    """What fastrank.topk_cosine(Q, B, k) computes for dense float64 Q (nq x d) and B (nb x
    d), 1 <= k <= nb, on the calling thread: the rows scaled as scale_dense scales them, their
    squared norms (sqnorms_dense) and B's inverse norms (inv_norms), then topk_dense's search
    with blocks of its own size (the results do not depend on them). The C API's search
    (fastrank._ext.capi); returns -1 when out of memory, else 0."""
    cdef Py_ssize_t bq = min(nq, 64), bb = min(nb, 1024), q0, r
    cdef fr_simd_level lv = current_level()
    cdef double* Qs = <double*> malloc(nq * d * sizeof(double))
    cdef double* Bs = <double*> malloc(nb * d * sizeof(double))
    cdef double* qa = <double*> malloc(nq * sizeof(double))
    cdef double* ba = <double*> malloc(nb * sizeof(double))
    cdef double* binv = <double*> malloc(nb * sizeof(double))
    cdef double* S = <double*> malloc(bq * bb * sizeof(double))
    cdef Py_ssize_t* size = <Py_ssize_t*> malloc(bq * sizeof(Py_ssize_t))
    cdef int status = -1
    if Qs != NULL and Bs != NULL and qa != NULL and ba != NULL and binv != NULL \
            and S != NULL and size != NULL:
        _scale_rows(lv, Q, Qs, qa, nq, d)
        _scale_rows(lv, B, Bs, ba, nb, d)
        for r in range(nb):
            binv[r] = 1 / sqrt(ba[r]) if ba[r] > 0 else 0.0
        q0 = 0
        while q0 < nq:
            _search_block(lv, Qs, Bs, qa, ba, binv, binv, out_sim, out_idx, q0,
                          min(bq, nq - q0), nb, d, k, bb, False, S, size)
            q0 += bq
        status = 0
    free(Qs)
    free(Bs)
    free(qa)
    free(ba)
    free(binv)
    free(S)
    free(size)
    return status


def topk_csr(const floating[::1] q_data, const index_t[::1] q_indices,
             const index_t[::1] q_indptr, const floating[::1] t_data,
             const index_t[::1] t_indices, const index_t[::1] t_indptr,
             const floating[::1] qa, const floating[::1] ba, const double[::1] binv,
             floating[:, ::1] out_sim, int64_t[:, ::1] out_idx, bint exclude_self):
    """As topk_dense for CSR queries against the transposed base (n_features x nb CSR);
    qa and ba are the squared norms of the query and base rows (sqnorms_csr), binv the
    inverse norms of the base rows (inv_norms); selection through a per-thread reservoir.

    A query whose postings cover at least nb/4 entries scans its whole accumulator, behind
    a bar set from group maxima (_res_bar_from_groups); a sparser one tracks the documents
    it touched, and scans every base document (cosine 0
    for the untouched) only when fewer than k of them score above 0. Both ways accumulate
    in the same order, so they give identical similarities."""
    cdef Py_ssize_t nq = q_indptr.shape[0] - 1, nb = ba.shape[0], k = out_sim.shape[1]
    cdef Py_ssize_t i, p, r, t, work, n_touched, n_pos
    cdef int64_t j
    cdef floating w
    cdef floating* wl = NULL  # pending posting lists of every base row: weights, values
    cdef const floating** xl = NULL
    cdef int n_lists
    cdef fr_simd_level lv = current_level()
    cdef double qinv
    cdef floating* acc = NULL
    cdef int64_t* touched = NULL
    cdef unsigned char* mark = NULL
    cdef Reservoir* res = NULL
    cdef floating* bv = NULL
    cdef int64_t* bi = NULL
    cdef bint ready = False
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        acc = <floating*> _scratch(nb * sizeof(floating))
        touched = <int64_t*> _scratch(nb * sizeof(int64_t))
        mark = <unsigned char*> _scratch(nb)
        res = <Reservoir*> _scratch(sizeof(Reservoir))
        bv = <floating*> _scratch(RESERVOIR * k * sizeof(floating))
        bi = <int64_t*> _scratch(RESERVOIR * k * sizeof(int64_t))
        wl = <floating*> _scratch(FR_ADD_LISTS * sizeof(floating))
        xl = <const floating**> _scratch(FR_ADD_LISTS * sizeof(floating*))
        ready = acc != NULL and touched != NULL and mark != NULL and res != NULL \
            and bv != NULL and bi != NULL and wl != NULL and xl != NULL
        if ready:
            res.k = k
            res.cap = RESERVOIR * k
        else:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for i in prange(nq, schedule="dynamic", chunksize=16):
            if not ready:
                continue
            qinv = 1 / sqrt(<double> qa[i]) if qa[i] > 0 else 0.0
            work = 0
            for p in range(q_indptr[i], q_indptr[i + 1]):
                t = q_indices[p]
                work = work + t_indptr[t + 1] - t_indptr[t]
            if 4 * work >= nb:
                n_lists = 0  # lists of every base row (rows 0 .. nb-1) wait to add together
                for p in range(q_indptr[i], q_indptr[i + 1]):
                    t = q_indices[p]
                    w = q_data[p]
                    if t_indptr[t + 1] - t_indptr[t] == nb:
                        wl[n_lists] = w
                        xl[n_lists] = &t_data[t_indptr[t]]
                        n_lists += 1
                        if n_lists == FR_ADD_LISTS:
                            n_lists = _add_lists(lv, acc, wl, xl, n_lists, nb)
                    else:
                        n_lists = _add_lists(lv, acc, wl, xl, n_lists, nb)
                        for r in range(t_indptr[t], t_indptr[t + 1]):
                            acc[t_indices[r]] += w * t_data[r]
                n_lists = _add_lists(lv, acc, wl, xl, n_lists, nb)
                if nb >= 2 * res.cap:
                    _res_bar_from_groups(res, bv, acc, qinv, &binv[0], nb,
                                         i if exclude_self else -1)
                for j in range(nb):
                    w = acc[j]
                    acc[j] = 0
                    if not (exclude_self and j == i):
                        _res_offer_dot(res, bv, bi, w, qa[i], qinv, &ba[0], &binv[0], j)
            else:
                n_touched = 0
                for p in range(q_indptr[i], q_indptr[i + 1]):
                    t = q_indices[p]
                    w = q_data[p]
                    for r in range(t_indptr[t], t_indptr[t + 1]):
                        j = t_indices[r]
                        if not mark[j]:
                            mark[j] = 1
                            touched[n_touched] = j
                            n_touched = n_touched + 1
                        acc[j] += w * t_data[r]
                n_pos = 0
                for r in range(n_touched):
                    j = touched[r]
                    if acc[j] > 0 and not (exclude_self and j == i):
                        n_pos = n_pos + 1
                if n_pos >= k:
                    for r in range(n_touched):
                        j = touched[r]
                        if acc[j] > 0 and not (exclude_self and j == i):
                            _res_offer_dot(res, bv, bi, acc[j], qa[i], qinv, &ba[0], &binv[0], j)
                else:
                    for j in range(nb):
                        if not (exclude_self and j == i):
                            _res_offer_dot(res, bv, bi, acc[j], qa[i], qinv, &ba[0], &binv[0], j)
                for r in range(n_touched):
                    acc[touched[r]] = 0
                    mark[touched[r]] = 0
            _res_emit(res, bv, bi, &out_sim[i, 0], &out_idx[i, 0])
        _scratch_free(acc)
        _scratch_free(touched)
        _scratch_free(mark)
        _scratch_free(res)
        _scratch_free(bv)
        _scratch_free(bi)
        _scratch_free(wl)
        _scratch_free(xl)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the neighbour-search accumulator")


# ---- from neighbours to labels ---------------------------------------------------------------

def label_counts(const int64_t[:, ::1] neighbors, const int32_t[::1] y_indptr,
                 const int32_t[::1] y_indices, int32_t[:, ::1] out):
    """out[i, c] += number of neighbours of row i that carry label c (eq. 2.4); out zeroed."""
    cdef Py_ssize_t i, m, p, a, n = neighbors.shape[0], k = neighbors.shape[1]
    for i in prange(n, nogil=True, schedule="static"):
        for m in range(k):
            a = neighbors[i, m]
            for p in range(y_indptr[a], y_indptr[a + 1]):
                out[i, y_indices[p]] += 1


def knn_aggregate(const floating[:, ::1] sims, const int64_t[:, ::1] neighbors,
                  const int32_t[::1] y_indptr, const int32_t[::1] y_indices, int mode,
                  double[:, ::1] out):
    """Beliefs of the multi-label kNN from each row's neighbours (out zeroed):
    max -- largest cosine among the neighbours carrying the label;
    sum -- sum of those cosines / k;  count -- number of those neighbours / k.
    Negative cosines count as 0 for max and sum."""
    cdef Py_ssize_t i, m, p, a, c, n = sims.shape[0], k = sims.shape[1]
    cdef double s
    for i in prange(n, nogil=True, schedule="static"):
        for m in range(k):
            a = neighbors[i, m]
            s = sims[i, m]
            if s < 0:
                s = 0
            for p in range(y_indptr[a], y_indptr[a + 1]):
                c = y_indices[p]
                if mode == AGG_MAX:
                    if s > out[i, c]:
                        out[i, c] = s
                elif mode == AGG_SUM:
                    out[i, c] += s
                else:
                    out[i, c] += 1
        if mode != AGG_MAX:
            for c in range(out.shape[1]):
                out[i, c] /= k
