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
(``fr_cosine``). So the results are those of computing every cosine exactly.

Dense input: OpenMP over blocks of queries; each thread scans B in blocks, computing each
(query block x base block) block of dot products with ``fr_dots`` below (float32 on AVX-512:
packed base rows, blocked like a GEMM) and offering them to the queries' heaps. Every dot
product there is summed in one fixed order that
depends only on the number of features (8 interleaved partial sums of fused multiply-adds,
then a fixed pairwise reduction), so a similarity depends only on its two rows: not on the
block shapes, the position of the rows in the base, the thread count, or which part of the
base is searched (a BLAS GEMM rounds an element differently with the matrix shapes, so the
search of a shard of the base would not reproduce the search of the whole). The same sums
run with 256-bit vectors on CPUs with AVX2 and FMA3, and with C99 ``fma`` otherwise, giving
the same bits; on x86-64 CPUs without FMA3, whose C library computes ``fma`` in software
(about 50 times slower), with an exact emulation of it (``fr_fma_emulated``, same bits).
CSR input: OpenMP over queries; each thread accumulates the dot products of one query with
every base document through the inverted index (B transposed, CSR) into its own dense
accumulator (multiply, then add, in the order of the query's stored features), then turns
them into cosines and selects. Every query is summed in a fixed order, so results do not
depend on the thread count.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport fabs, frexp, ldexp, sqrt
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free

from _tiesort cimport floating, index_t

# aggregation codes, mirrored in fastrank/neighbors.py (_AGGREGATES)
cdef enum:
    AGG_MAX = 0
    AGG_SUM = 1
    AGG_COUNT = 2


# ---- per-thread scratch ---------------------------------------------------------------------

# relative error bound of _approx against fr_cosine (float32 rounding 2^-24, plus float64
# roundings), with room to spare
cdef double APPROX = 2.0 ** -20

cdef enum:
    PAD = 64       # a cache line
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
    cdef Py_ssize_t child
    cdef floating v = hv[pos]
    cdef int64_t j = hi[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and _after(hv[child + 1], hi[child + 1], hv[child], hi[child]):
            child += 1
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

cdef inline double _pow2_scale(const floating* x, Py_ssize_t m) noexcept nogil:
    """The power of two 2^-e that brings max |x[0..m)| into [1/2, 1); 0 for a zero vector.
    Multiplying by it is exact (barring underflow below the smallest normal number)."""
    cdef Py_ssize_t j
    cdef double top = 0, t
    cdef int e
    for j in range(m):
        t = fabs(x[j])
        if t > top:
            top = t
    if top == 0:
        return 0.0
    frexp(top, &e)
    return ldexp(1.0, -e)


def scale_dense(const floating[:, ::1] X, floating[:, ::1] out):
    """out[i] <- X[i] * 2^-e_i, max |out[i]| in [1/2, 1) (a zero row stays zero)."""
    cdef Py_ssize_t i, j, n = X.shape[0], m = X.shape[1]
    cdef double s
    for i in prange(n, nogil=True, schedule="static"):
        s = _pow2_scale(&X[i, 0], m)
        for j in range(m):
            out[i, j] = <floating> (X[i, j] * s)


def scale_csr(const floating[::1] data, const index_t[::1] indptr, floating[::1] out):
    """The data array of a CSR matrix with rows scaled as in scale_dense."""
    cdef Py_ssize_t i, p, lo, hi, n = indptr.shape[0] - 1
    cdef double s
    for i in prange(n, nogil=True, schedule="static"):
        lo = indptr[i]
        hi = indptr[i + 1]
        if hi > lo:
            s = _pow2_scale(&data[lo], hi - lo)
            for p in range(lo, hi):
                out[p] = <floating> (data[p] * s)


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

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    /* s[r * mb + j] <- dot(q row r, b row j) for r < mq, j < mb (rows of d values). Each dot
       product is summed in one fixed order with fused multiply-adds: partial sum l (l < 8)
       is p_l <- fma(a_f, b_f, p_l) over the features f = l, l + 8, l + 16, ... in ascending
       order, then ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)). An fma rounds once, so
       the portable code (C99 fma) and the AVX2/FMA3 code give the same bits. Base rows are
       scanned in tiles of about 128 KiB that stay in L2 while every query row of the block
       is compared with them. */
    #define FR_SUM8(p) ((((p)[0] + (p)[1]) + ((p)[2] + (p)[3])) \
                        + (((p)[4] + (p)[5]) + ((p)[6] + (p)[7])))
    #ifndef FR_TILE_BYTES
    #define FR_TILE_BYTES 131072
    #endif
    /* base rows per tile: about FR_TILE_BYTES, a multiple of 24 (of every block width) */
    #define FR_TILE(T, d) ((int64_t) (FR_TILE_BYTES / (((d) > 0 ? (d) : 1) * (int64_t) sizeof(T))) \
                           / 24 * 24)
    #define FR_DOTS(NAME, T, FMA)                                                        \
        static void NAME(const T* q, const T* b, T* s, int64_t mq, int64_t mb, int64_t d) { \
            int64_t tile = FR_TILE(T, d), j0, j1, r, j, f, l;                            \
            if (tile < 24) tile = 24;                                                      \
            for (j0 = 0; j0 < mb; j0 += tile) {                                          \
                j1 = j0 + tile < mb ? j0 + tile : mb;                                    \
                for (r = 0; r < mq; r++) {                                               \
                    const T* a = q + r * d;                                              \
                    for (j = j0; j < j1; j++) {                                          \
                        const T* c = b + j * d;                                          \
                        T p[8] = {0};                                                    \
                        for (f = 0; f + 8 <= d; f += 8)                                  \
                            for (l = 0; l < 8; l++) p[l] = FMA(a[f + l], c[f + l], p[l]); \
                        for (l = 0; f + l < d; l++) p[l] = FMA(a[f + l], c[f + l], p[l]); \
                        s[r * mb + j] = FR_SUM8(p);                                      \
                    }                                                                    \
                }                                                                        \
            }                                                                            \
        }
    FR_DOTS(fr_dots_f64_base, double, fma)
    FR_DOTS(fr_dots_f32_base, float, fmaf)

    /* fma without the instruction: the C library's software fma (x86-64 CPUs without FMA3:
       before Haswell and Piledriver, Atom-class cores) is about 50 times slower than a
       multiply and an add, so the portable sums there take these, which round the same.
       Error-free transformations (Dekker's product, Knuth's two-sum) and rounding to odd,
       after S. Boldo and G. Melquiond, "Emulation of FMA and correctly rounded sums: proved
       algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008: a * b + c =
       vh + vl + tl exactly, then RN(vh + RO(tl + vl)) = RN(a * b + c). RO rounds to odd:
       the sum rounded to nearest, moved one unit towards the exact sum when that was
       inexact and the result's last bit is even. Operands outside [1e-144, 1e144] (near
       2^-480 and 2^480: beyond, the split or the product's low part could overflow or
       underflow), infinities and NaN take the library's fma; a zero product is exact. */
    static inline double fr_two_sum(double x, double y, double* err) {
        double s = x + y, yy = s - x;
        *err = (x - (s - yy)) + (y - yy);
        return s;
    }
    static inline double fr_round_to_odd(double s, double err) {
        uint64_t u;
        if (err == 0) return s;
        memcpy(&u, &s, sizeof u);
        if ((u & 1) == 0) {
            u += (err > 0) == (s > 0) ? 1 : (uint64_t) -1;   /* away from / towards zero */
            memcpy(&s, &u, sizeof u);
        }
        return s;
    }
    static inline double fr_fma_emulated(double a, double b, double c) {
        const double lo = 1e-144, hi = 1e144, split = 134217729.0;   /* 2^27 + 1 */
        double fa = fabs(a), fb = fabs(b), t, ah, al, bh, bl, uh, ul, th, tl, vh, vl;
        if (a == 0 || b == 0) return a * b + c;
        if (!(fa >= lo && fa <= hi && fb >= lo && fb <= hi && fabs(c) <= hi))
            return fma(a, b, c);
        t = split * a; ah = t - (t - a); al = a - ah;
        t = split * b; bh = t - (t - b); bl = b - bh;
        uh = a * b;
        ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl;     /* uh + ul = a * b */
        th = fr_two_sum(c, ul, &tl);
        vh = fr_two_sum(uh, th, &vl);
        vl = fr_two_sum(tl, vl, &t);                             /* RO(tl + vl) */
        return vh + fr_round_to_odd(vl, t);
    }
    /* float: the product is exact in double, and RN_float(RO_double(x)) = RN_float(x) */
    static inline float fr_fmaf_emulated(float a, float b, float c) {
        double err, s = fr_two_sum((double) a * (double) b, (double) c, &err);
        if (!isfinite(s)) return (float) s;
        return (float) fr_round_to_odd(s, err);
    }
    FR_DOTS(fr_dots_f64_emulated, double, fr_fma_emulated)
    FR_DOTS(fr_dots_f32_emulated, float, fr_fmaf_emulated)
    #include "fr_cpu.h"
    #ifdef FR_X86
    /* The same sums with 256-bit vectors: partial sums 0-7 are the lanes of one float
       vector, or of two double vectors (lanes 0-3, 4-7). A micro-kernel computes QR x BR
       dot products at once (QR query rows, BR base rows: 8 independent accumulators for
       the main block, enough to keep both FMA units busy); the features past the last
       multiple of 8 go to lanes 0.. with scalar fma, as in the portable code. */
    #define FR_MICRO(NAME, T, V, N, LOAD, FMADD, STORE, ZERO, FMA, QR, BR)               \
        __attribute__((target("avx2,fma"))) static inline void NAME(                     \
                const T* a, const T* b, T* s, int64_t ss, int64_t d) {                   \
            V c[QR][BR][N], x[QR], y;                                                    \
            T p[8];                                                                      \
            int64_t f, l, u, r, v;                                                       \
            for (u = 0; u < (QR); u++)                                                   \
                for (r = 0; r < (BR); r++)                                               \
                    for (v = 0; v < (N); v++) c[u][r][v] = ZERO();                       \
            for (f = 0; f + 8 <= d; f += 8)                                              \
                for (v = 0; v < (N); v++) {                                              \
                    for (u = 0; u < (QR); u++) x[u] = LOAD(a + u * d + f + v * (8 / (N))); \
                    for (r = 0; r < (BR); r++) {                                         \
                        y = LOAD(b + r * d + f + v * (8 / (N)));                         \
                        for (u = 0; u < (QR); u++) c[u][r][v] = FMADD(x[u], y, c[u][r][v]); \
                    }                                                                    \
                }                                                                        \
            for (u = 0; u < (QR); u++)                                                   \
                for (r = 0; r < (BR); r++) {                                             \
                    for (v = 0; v < (N); v++) STORE(p + v * (8 / (N)), c[u][r][v]);      \
                    for (l = 0; f + l < d; l++)                                          \
                        p[l] = FMA(a[u * d + f + l], b[r * d + f + l], p[l]);            \
                    s[u * ss + r] = FR_SUM8(p);                                          \
                }                                                                        \
        }
    #define FR_DOTS_AVX2(NAME, T, QR, BR, MAIN, ROWS, COLS, ONE)                         \
        FR_ATTR                                                                          \
        static void NAME(const T* q, const T* b, T* s, int64_t mq, int64_t mb, int64_t d) { \
            int64_t tile = FR_TILE(T, d), j0, j1, r, j;                                  \
            if (tile < 24) tile = 24;                                                      \
            for (j0 = 0; j0 < mb; j0 += tile) {                                          \
                j1 = j0 + tile < mb ? j0 + tile : mb;                                    \
                for (r = 0; r + (QR) <= mq; r += (QR)) {                                 \
                    for (j = j0; j + (BR) <= j1; j += (BR))                              \
                        MAIN(q + r * d, b + j * d, s + r * mb + j, mb, d);               \
                    for (; j < j1; j++) ROWS(q + r * d, b + j * d, s + r * mb + j, mb, d); \
                }                                                                        \
                for (; r < mq; r++) {                                                    \
                    for (j = j0; j + (BR) <= j1; j += (BR))                              \
                        COLS(q + r * d, b + j * d, s + r * mb + j, mb, d);               \
                    for (; j < j1; j++) ONE(q + r * d, b + j * d, s + r * mb + j, mb, d); \
                }                                                                        \
            }                                                                            \
        }
    #define FR_F32(NAME, QR, BR) FR_MICRO(NAME, float, __m256, 1, _mm256_loadu_ps,       \
        _mm256_fmadd_ps, _mm256_storeu_ps, _mm256_setzero_ps, fmaf, QR, BR)
    #define FR_F64(NAME, QR, BR) FR_MICRO(NAME, double, __m256d, 2, _mm256_loadu_pd,     \
        _mm256_fmadd_pd, _mm256_storeu_pd, _mm256_setzero_pd, fma, QR, BR)
    FR_F32(fr_f32_2x4, 2, 4)
    FR_F32(fr_f32_2x1, 2, 1)
    FR_F32(fr_f32_1x4, 1, 4)
    FR_F32(fr_f32_1x1, 1, 1)
    FR_F64(fr_f64_2x2, 2, 2)
    FR_F64(fr_f64_2x1, 2, 1)
    FR_F64(fr_f64_1x2, 1, 2)
    FR_F64(fr_f64_1x1, 1, 1)
    #define FR_ATTR __attribute__((target("avx2,fma")))
    FR_DOTS_AVX2(fr_dots_f32_avx2, float, 2, 4, fr_f32_2x4, fr_f32_2x1, fr_f32_1x4, fr_f32_1x1)
    FR_DOTS_AVX2(fr_dots_f64_avx2, double, 2, 2, fr_f64_2x2, fr_f64_2x1, fr_f64_1x2,
                 fr_f64_1x1)
    /* AVX-512: a float64 partial-sum vector (8 lanes) fills one 512-bit register; two
       float32 ones (pairs (q, b_j) in lanes 0-7 and (q, b_j+1) in lanes 8-15, the query's 8
       features broadcast to both halves) share one. Same lanes, same fma sequence. */
    #define FR_T512 __attribute__((target("avx512f,avx512dq,avx2,fma")))
    #define FR_MICRO512_F32(NAME, QR, BP)                                                        FR_T512 static inline void NAME(const float* a, const float* b, float* s,                                                int64_t ss, int64_t d) {                                     __m512 c[QR][BP], x[QR], y;                                                              float p[16];                                                                             int64_t f, l, u, r, h;                                                                   for (u = 0; u < (QR); u++)                                                                   for (r = 0; r < (BP); r++) c[u][r] = _mm512_setzero_ps();                            for (f = 0; f + 8 <= d; f += 8) {                                                            for (u = 0; u < (QR); u++)                                                                   x[u] = _mm512_broadcast_f32x8(_mm256_loadu_ps(a + u * d + f));                       for (r = 0; r < (BP); r++) {                                                                 y = _mm512_insertf32x8(_mm512_castps256_ps512(                                                   _mm256_loadu_ps(b + 2 * r * d + f)),                                                     _mm256_loadu_ps(b + (2 * r + 1) * d + f), 1);                                    for (u = 0; u < (QR); u++) c[u][r] = _mm512_fmadd_ps(x[u], y, c[u][r]);                 }                                                                                    }                                                                                        for (u = 0; u < (QR); u++)                                                                   for (r = 0; r < (BP); r++) {                                                                 _mm512_storeu_ps(p, c[u][r]);                                                            for (h = 0; h < 2; h++) {                                                                    float* q8 = p + 8 * h;                                                                   const float* bb = b + (2 * r + h) * d;                                                   for (l = 0; f + l < d; l++)                                                                  q8[l] = fmaf(a[u * d + f + l], bb[f + l], q8[l]);                                    s[u * ss + 2 * r + h] = FR_SUM8(q8);                                                 }                                                                                    }                                                                                }
    #define FR_MICRO512_F64(NAME, QR, BR)                                                        FR_T512 static inline void NAME(const double* a, const double* b, double* s,                                             int64_t ss, int64_t d) {                                     __m512d c[QR][BR], x[QR], y;                                                             double p[8];                                                                             int64_t f, l, u, r;                                                                      for (u = 0; u < (QR); u++)                                                                   for (r = 0; r < (BR); r++) c[u][r] = _mm512_setzero_pd();                            for (f = 0; f + 8 <= d; f += 8) {                                                            for (u = 0; u < (QR); u++) x[u] = _mm512_loadu_pd(a + u * d + f);                        for (r = 0; r < (BR); r++) {                                                                 y = _mm512_loadu_pd(b + r * d + f);                                                      for (u = 0; u < (QR); u++) c[u][r] = _mm512_fmadd_pd(x[u], y, c[u][r]);                 }                                                                                    }                                                                                        for (u = 0; u < (QR); u++)                                                                   for (r = 0; r < (BR); r++) {                                                                 _mm512_storeu_pd(p, c[u][r]);                                                            for (l = 0; f + l < d; l++)                                                                  p[l] = fma(a[u * d + f + l], b[r * d + f + l], p[l]);                                s[u * ss + r] = FR_SUM8(p);                                                          }                                                                                }
    FR_MICRO512_F32(fr_f32_4x4_512, 4, 2)
    FR_MICRO512_F64(fr_f64_4x3_512, 4, 3)
    FR_F32(fr_f32_4x1, 4, 1)
    FR_F64(fr_f64_4x1, 4, 1)
    FR_F64(fr_f64_1x3, 1, 3)
    #undef FR_ATTR
    #define FR_ATTR FR_T512
    FR_DOTS_AVX2(fr_dots_f32_avx512_rows, float, 4, 4, fr_f32_4x4_512, fr_f32_4x1,
                 fr_f32_1x4, fr_f32_1x1)
    /* float32 AVX-512 on packed base rows, blocked like a GEMM. A tile of base rows is
       copied once as pairs (b_j, b_j+1) of 8-feature chunks, so that one load gives the 16
       lanes of a pair; the micro-kernel computes 4 query rows x 8 base rows (16
       accumulator registers, 8 loads per 16 fused multiply-adds) over FR_KC chunks of
       features at a time, keeping the tile's slice of those chunks in L1. Between passes
       the accumulators are stored and reloaded unchanged; the last pass adds the features
       past the last multiple of 8 with a masked fma (lane l: fma(a_f, b_f, p_l), the
       others untouched) and sums the lanes of every dot product in registers in the
       order of FR_SUM8 (additions of the same pairs; a + b == b + a in IEEE arithmetic).
       Every dot product is the same fma chain and reduction as in fr_f32_4x4_512: the
       same bits. Rows left over at the edges (fewer than 4 queries or 8 base rows) go to
       the unpacked kernels. */
    #define FR_KC 32     /* 8-feature chunks per pass */
    #define FR_MC 64     /* query rows per pass */
    #define FR_L1 24576  /* bytes of the tile's slice of one pass */
    #define FR_QBIG (4.0 * 1024 * 1024)  /* bytes of a large query block */
    FR_T512 static inline void fr_f32_4x8_packed(
            const float* a, int64_t d, const float* pb, int64_t ps, int64_t t0, int64_t n,
            float* acc, const float* b, float* s, int64_t ss) {
        /* a: 4 query rows (row stride d); pb: 4 packed pairs (pair stride ps) from chunk 0;
           chunks t0 .. t0 + n; acc: the 16 accumulators between passes; b: the 8 base rows
           (row stride d) and s: the 4 x 8 outputs (row stride ss), used on the last pass */
        __m512 c[4][4], x[4], y, lo, hi;
        int64_t t, u, r, d8 = d / 8 * 8;
        int first = t0 == 0, last = 8 * (t0 + n) == d8;
        for (u = 0; u < 4; u++)
            for (r = 0; r < 4; r++)
                c[u][r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + 16 * (4 * u + r));
        for (t = t0; t < t0 + n; t++) {
            for (u = 0; u < 4; u++)
                x[u] = _mm512_broadcast_f32x8(_mm256_loadu_ps(a + u * d + 8 * t));
            for (r = 0; r < 4; r++) {
                y = _mm512_loadu_ps(pb + r * ps + 16 * t);
                for (u = 0; u < 4; u++) c[u][r] = _mm512_fmadd_ps(x[u], y, c[u][r]);
            }
        }
        if (!last) {
            for (u = 0; u < 4; u++)
                for (r = 0; r < 4; r++) _mm512_storeu_ps(acc + 16 * (4 * u + r), c[u][r]);
            return;
        }
        if (d > d8) {
            __mmask16 m = (__mmask16) ((1u << (d - d8)) - 1), m2 = (__mmask16) (m | (m << 8));
            for (u = 0; u < 4; u++) {
                x[u] = _mm512_maskz_loadu_ps(m, a + u * d + d8);
                x[u] = _mm512_shuffle_f32x4(x[u], x[u], _MM_SHUFFLE(1, 0, 1, 0));
            }
            for (r = 0; r < 4; r++) {
                y = _mm512_maskz_loadu_ps(m, b + 2 * r * d + d8);
                y = _mm512_mask_loadu_ps(y, (__mmask16) (m << 8), b + (2 * r + 1) * d + d8 - 8);
                for (u = 0; u < 4; u++) c[u][r] = _mm512_mask3_fmadd_ps(x[u], y, c[u][r], m2);
            }
        }
        for (u = 0; u < 4; u++) {
            /* lanes 0-7 / 8-15 of c[u][r]: partial sums p0..p7 of base rows 2r / 2r + 1 */
            lo = _mm512_add_ps(_mm512_shuffle_ps(c[u][0], c[u][1], _MM_SHUFFLE(2, 0, 2, 0)),
                               _mm512_shuffle_ps(c[u][0], c[u][1], _MM_SHUFFLE(3, 1, 3, 1)));
            hi = _mm512_add_ps(_mm512_shuffle_ps(c[u][2], c[u][3], _MM_SHUFFLE(2, 0, 2, 0)),
                               _mm512_shuffle_ps(c[u][2], c[u][3], _MM_SHUFFLE(3, 1, 3, 1)));
            /* per 128-bit lane: p0+p1, p2+p3 of two rows, then of two others */
            y = _mm512_add_ps(_mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
            /* 128-bit lanes 0 / 1: (p0+p1)+(p2+p3) / (p4+p5)+(p6+p7) of base rows
               0, 2, 4, 6; lanes 2 / 3 the same for rows 1, 3, 5, 7 */
            y = _mm512_add_ps(y, _mm512_shuffle_f32x4(y, y, _MM_SHUFFLE(2, 3, 0, 1)));
            y = _mm512_permutexvar_ps(_mm512_set_epi32(15, 7, 14, 6, 13, 5, 12, 4,
                                                       11, 3, 10, 2, 9, 1, 8, 0), y);
            _mm256_storeu_ps(s + u * ss, _mm512_castps512_ps256(y));
        }
    }
    FR_T512 static void fr_dots_f32_avx512(const float* q, const float* b, float* s, int64_t mq,
                                           int64_t mb, int64_t d) {
        int64_t nch = d / 8, d8 = 8 * (d / 8), mq4 = mq / 4 * 4;
        int64_t kc = nch < FR_KC ? nch : FR_KC;
        int64_t nt = kc > 0 ? FR_L1 / (32 * kc) / 8 * 8 : 0;
        /* the query block is read again for every tile: when it is large (many features),
           tiles of 4x the rows, their slice in L2, read it a quarter as often */
        if ((double) mq * d * sizeof(float) > FR_QBIG) nt *= 4;
        int64_t j0, j1, jn, j, p, t, h, r0, r1, r, t0;
        float *pk, *acc;
        if (nt < 8) nt = 8;
        if (nch == 0 || mq4 == 0 || mb < 8)
            return fr_dots_f32_avx512_rows(q, b, s, mq, mb, d);
        pk = (float*) malloc((size_t) nt * d8 * sizeof(float));
        acc = (float*) malloc((size_t) FR_MC * nt * 8 * sizeof(float));  /* 256 per 4 x 8 */
        if (pk == NULL || acc == NULL) {
            free(pk);
            free(acc);
            return fr_dots_f32_avx512_rows(q, b, s, mq, mb, d);
        }
        for (j0 = 0; j0 < mb; j0 += nt) {
            j1 = j0 + nt < mb ? j0 + nt : mb;
            jn = j0 + (j1 - j0) / 8 * 8;
            for (p = 0; 2 * p < jn - j0; p++)
                for (t = 0; t < nch; t++)
                    for (h = 0; h < 2; h++)
                        memcpy(pk + 2 * p * d8 + 16 * t + 8 * h, b + (j0 + 2 * p + h) * d + 8 * t,
                               8 * sizeof(float));
            for (r0 = 0; r0 < mq4; r0 += FR_MC) {
                r1 = r0 + FR_MC < mq4 ? r0 + FR_MC : mq4;
                for (t0 = 0; t0 < nch; t0 += kc)
                    for (r = r0; r < r1; r += 4)
                        for (j = j0; j < jn; j += 8)
                            fr_f32_4x8_packed(q + r * d, d, pk + (j - j0) * d8, 2 * d8, t0,
                                              nch - t0 < kc ? nch - t0 : kc,
                                              acc + 256 * ((r - r0) / 4 * (nt / 8) + (j - j0) / 8),
                                              b + j * d, s + r * mb + j, mb);
            }
            for (r = 0; r < mq4; r += 4)
                for (j = jn; j < j1; j++) fr_f32_4x1(q + r * d, b + j * d, s + r * mb + j, mb, d);
            for (r = mq4; r < mq; r++) {
                for (j = j0; j + 4 <= j1; j += 4)
                    fr_f32_1x4(q + r * d, b + j * d, s + r * mb + j, mb, d);
                for (; j < j1; j++) fr_f32_1x1(q + r * d, b + j * d, s + r * mb + j, mb, d);
            }
        }
        free(pk);
        free(acc);
    }
    FR_DOTS_AVX2(fr_dots_f64_avx512, double, 4, 3, fr_f64_4x3_512, fr_f64_4x1, fr_f64_1x3,
                 fr_f64_1x1)
    #define FR_DOTS_PICK(NAME, L) ((L) >= 2 ? NAME##_avx512 : (L) == 1 ? NAME##_avx2      \
                                                             : NAME##_base)
    #else
    #define FR_DOTS_PICK(NAME, L) (NAME##_base)
    #endif
    /* the features of the dot products' paths: 0 portable, 1 AVX2 + FMA3, 2 AVX-512 (F, DQ) */
    static const unsigned fr_dots_needs[3] = {
        0, FR_CPU_AVX2 | FR_CPU_FMA,
        FR_CPU_AVX2 | FR_CPU_FMA | FR_CPU_AVX512F | FR_CPU_AVX512DQ};
    /* the implementation in use (set at import and by use_simd) */
    static void (*fr_dots_f64)(const double*, const double*, double*, int64_t, int64_t,
                               int64_t) = fr_dots_f64_base;
    static void (*fr_dots_f32)(const float*, const float*, float*, int64_t, int64_t,
                               int64_t) = fr_dots_f32_base;
    static int fr_dots_simd = 0;
    /* whether the portable sums emulate fma (set at import: x86-64 without FMA3) */
    static int fr_fma_emulation = 0;
    static void fr_dots_select(int level) {
        int best = fr_cpu_best_level(fr_dots_needs, 3);
        fr_dots_simd = level < best ? level : best;
        fr_dots_f64 = FR_DOTS_PICK(fr_dots_f64, fr_dots_simd);
        fr_dots_f32 = FR_DOTS_PICK(fr_dots_f32, fr_dots_simd);
        if (fr_dots_simd == 0 && fr_fma_emulation) {
            fr_dots_f64 = fr_dots_f64_emulated;
            fr_dots_f32 = fr_dots_f32_emulated;
        }
    }
    static void fr_fma_init(void) {
    #ifdef FR_X86
        fr_fma_emulation = !(fr_cpu_features() & FR_CPU_FMA);
    #endif
    }

    /* The cosine from a dot product and the two squared norms:
       sign(dot) * sqrt(dot^2 / (aa * bb)), the ratio rounded once (float64), clipped to 1;
       0 when a norm is 0. When dot, aa and bb are exact integers (times powers of two) and
       dot^2 and aa * bb are exact in float64, the result depends only on the rational
       number dot^2 / (aa bb) and the sign: equal cosines give equal bits. */
    static inline double fr_cosine(double dot, double aa, double bb) {
        double den = aa * bb, r = den > 0 ? dot * dot / den : 0.0;
        r = sqrt(r < 1.0 ? r : 1.0);
        return dot < 0 ? -r : r;
    }
    """
    void fr_dots_f64(const double* q, const double* b, double* s, int64_t mq, int64_t mb,
                     int64_t d) noexcept nogil
    void fr_dots_f32(const float* q, const float* b, float* s, int64_t mq, int64_t mb,
                     int64_t d) noexcept nogil
    void fr_dots_select(int level) noexcept nogil
    int fr_dots_simd
    int fr_fma_emulation
    void fr_fma_init() noexcept nogil
    double fr_fma_emulated(double a, double b, double c) noexcept nogil
    float fr_fmaf_emulated(float a, float b, float c) noexcept nogil
    double fr_cosine(double dot, double aa, double bb) noexcept nogil


fr_fma_init()
fr_dots_select(2)


def use_simd(int level):
    """Compute dense dot products with AVX-512 (level 2), AVX2 + FMA3 (1) or the portable
    code (0), or the best the CPU has below the level asked; returns the previous level.
    All give identical results; tests exercise each."""
    previous = fr_dots_simd
    fr_dots_select(level)
    return previous


def use_fma_emulation(bint on):
    """Let the portable dense sums emulate fused multiply-adds (on) or call the C library's
    ``fma`` (off); the same bits either way. On at import where the CPU is x86-64 without
    FMA3 (the library's fma is then software, about 50 times slower); tests force it.

    Returns
    -------
    bool
        The previous setting.
    """
    global fr_fma_emulation
    previous = fr_fma_emulation != 0
    fr_fma_emulation = on
    fr_dots_select(fr_dots_simd)
    return previous


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
    """Name of the dense dot products' code path in use.

    Returns
    -------
    str
        ``"avx512"`` (level 2), ``"avx2"`` (AVX2 + FMA3, level 1), ``"portable"`` (0) or
        ``"portable-emulated-fma"`` (0 on x86-64 CPUs without FMA3, use_fma_emulation).
    """
    if fr_dots_simd == 0 and fr_fma_emulation:
        return "portable-emulated-fma"
    return ("portable", "avx2", "avx512")[fr_dots_simd]


cdef inline void _dots(const floating* b, const floating* q, floating* s, Py_ssize_t mb,
                       Py_ssize_t mq, Py_ssize_t d) noexcept nogil:
    """Row-major s (mq x mb) <- q (mq x d) @ b (mb x d).T, each element in a fixed order."""
    if floating is float:
        fr_dots_f32(q, b, s, mq, mb, d)
    else:
        fr_dots_f64(q, b, s, mq, mb, d)


def sqnorms_dense(const floating[:, ::1] X, floating[::1] out):
    """out[i] <- the squared norm of X[i], the dot product of X[i] with itself as the dense
    search computes it (so the two are equal)."""
    cdef Py_ssize_t i, n = X.shape[0], d = X.shape[1]
    for i in prange(n, nogil=True, schedule="static"):
        _dots(&X[i, 0], &X[i, 0], &out[i], 1, 1, d)


def inv_norms(const floating[::1] sqnorms, double[::1] out):
    """out[i] <- 1 / sqrt(sqnorms[i]) in float64 (0 for a zero row): the factors of the
    approximate cosines (_approx) that spare the search most exact ones."""
    cdef Py_ssize_t i, n = sqnorms.shape[0]
    for i in prange(n, nogil=True, schedule="static"):
        out[i] = 1 / sqrt(<double> sqnorms[i]) if sqnorms[i] > 0 else 0.0


# ---- top-k search -----------------------------------------------------------------------------

def topk_dense(const floating[:, ::1] Q, const floating[:, ::1] B, const floating[::1] qa,
               const floating[::1] ba, const double[::1] binv, floating[:, ::1] out_sim,
               int64_t[:, ::1] out_idx, bint exclude_self, Py_ssize_t block_q,
               Py_ssize_t block_b):
    """Top-k cosines: out[i] <- the k best (cos, j) of Q[i] against B, sorted; qa and ba are
    the squared norms of the rows (sqnorms_dense), binv the inverse norms of B's rows
    (inv_norms). With exclude_self, j == i is never a candidate. OpenMP over query blocks;
    each thread computes its (block_q x block_b) dot products with _dots, whose every
    element depends only on its two rows (see the module docstring), and offers them to
    the query's heap (_heap_offer_dot: the exact cosine only for those that may enter)."""
    cdef Py_ssize_t nq = Q.shape[0], nb = B.shape[0], k = out_sim.shape[1]
    cdef Py_ssize_t n_blocks = (nq + block_q - 1) // block_q
    cdef Py_ssize_t d = Q.shape[1]
    cdef Py_ssize_t blk, q0, b0, mq, mb, r, j, i
    cdef double qinv
    cdef floating* row
    cdef floating* S = NULL
    cdef Py_ssize_t* size = NULL
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel():
        S = <floating*> _scratch(block_q * block_b * sizeof(floating))
        size = <Py_ssize_t*> _scratch(block_q * sizeof(Py_ssize_t))
        if S == NULL or size == NULL:
            failed[0] = 1
        # every thread must reach the work-shared loop (OpenMP); one without scratch skips
        for blk in prange(n_blocks, schedule="dynamic"):
            if S == NULL or size == NULL:
                continue
            q0 = blk * block_q
            mq = min(block_q, nq - q0)
            for r in range(mq):
                size[r] = 0
            b0 = 0
            while b0 < nb:
                mb = min(block_b, nb - b0)
                _dots(&B[b0, 0], &Q[q0, 0], S, mb, mq, d)
                for r in range(mq):
                    i = q0 + r
                    row = S + r * mb
                    qinv = 1 / sqrt(<double> qa[i]) if qa[i] > 0 else 0.0
                    for j in range(mb):
                        if not (exclude_self and b0 + j == i):
                            _heap_offer_dot(&out_sim[i, 0], &out_idx[i, 0], &size[r], k,
                                            row[j], qa[i], qinv, &ba[b0], &binv[b0], j, b0)
                b0 = b0 + block_b
            for r in range(mq):
                _sort_heap(&out_sim[q0 + r, 0], &out_idx[q0 + r, 0], size[r])
        _scratch_free(S)
        _scratch_free(size)
    if failed[0]:
        raise MemoryError("fastrank: cannot allocate the similarity blocks")


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
        ready = acc != NULL and touched != NULL and mark != NULL and res != NULL \
            and bv != NULL and bi != NULL
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
                for p in range(q_indptr[i], q_indptr[i + 1]):
                    t = q_indices[p]
                    w = q_data[p]
                    for r in range(t_indptr[t], t_indptr[t + 1]):
                        acc[t_indices[r]] += w * t_data[r]
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
