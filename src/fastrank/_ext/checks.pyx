# cython: language_level=3
"""Input checks over whole arrays in one parallel pass without the GIL: NaN / non-finite
values, and a 0/1 truth converted to uint8 while it is checked.

Each array of at least ``PARALLEL_MIN`` values is cut into ``N_CHUNKS`` fixed chunks (never
depending on the thread count); each chunk reports its first bad position, and the smallest
one is returned, so the answer is the same on any number of threads. Smaller arrays are
scanned on the calling thread (no parallel region: a single document's check stays cheap).
Chunks are scanned in blocks whose test vectorises (no early exit inside a block); a block
with a bad value is scanned again for its position.
"""
from cython.parallel cimport prange
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, \
    uint64_t

cdef enum:
    N_CHUNKS = 64
    BLOCK = 4096
    PARALLEL_MIN = 1 << 16  # below it one thread scans all: a parallel region costs more

ctypedef fused float_t:
    float
    double

ctypedef fused truth_t:
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t
    uint16_t
    uint32_t
    uint64_t
    float
    double


cdef inline bint _bad_float(float_t v, bint nonfinite) noexcept nogil:
    # v - v is 0 for a finite v and NaN for an infinity or a NaN
    return (v - v) != 0 if nonfinite else v != v


cdef inline bint _any_bad_float(const float_t* values, Py_ssize_t lo, Py_ssize_t hi,
                                bint nonfinite) noexcept nogil:
    """Whether [lo, hi) holds a bad value: one loop per test, each vectorised whole."""
    cdef Py_ssize_t i
    cdef bint bad = False
    if nonfinite:
        for i in range(lo, hi):
            bad = bad | ((values[i] - values[i]) != 0)
    else:
        for i in range(lo, hi):
            bad = bad | (values[i] != values[i])
    return bad


cdef Py_ssize_t _first_nan_in(const float_t* values, Py_ssize_t lo, Py_ssize_t hi,
                              bint nonfinite) noexcept nogil:
    """First bad position in [lo, hi), or -1."""
    cdef Py_ssize_t b = lo, b_end, i
    while b < hi:
        b_end = min(b + <Py_ssize_t>BLOCK, hi)
        if _any_bad_float(values, b, b_end, nonfinite):
            for i in range(b, b_end):
                if _bad_float(values[i], nonfinite):
                    return i
        b = b_end
    return -1


cdef Py_ssize_t _binary_in(const truth_t* values, uint8_t* out, Py_ssize_t lo,
                           Py_ssize_t hi) noexcept nogil:
    """First position in [lo, hi) of a value other than 0 and 1, or -1; writes the values
    to ``out`` as uint8 unless it is NULL."""
    cdef Py_ssize_t b = lo, b_end, i
    cdef bint bad
    cdef truth_t v
    while b < hi:
        b_end = min(b + <Py_ssize_t>BLOCK, hi)
        bad = False
        if out != NULL:  # one loop per case, each vectorised whole
            for i in range(b, b_end):
                v = values[i]
                bad = bad | ((v != 0) & (v != 1))
                out[i] = <uint8_t>(v == 1)
        else:
            for i in range(b, b_end):
                v = values[i]
                bad = bad | ((v != 0) & (v != 1))
        if bad:
            for i in range(b, b_end):
                if values[i] != 0 and values[i] != 1:
                    return i
        b = b_end
    return -1


cdef inline Py_ssize_t _n_chunks(Py_ssize_t n) noexcept nogil:
    return 1 if n < PARALLEL_MIN else N_CHUNKS


cdef inline Py_ssize_t _smallest(Py_ssize_t* first, Py_ssize_t n_chunks) noexcept nogil:
    cdef Py_ssize_t c
    for c in range(n_chunks):
        if first[c] >= 0:
            return first[c]
    return -1


def first_nan(const float_t[::1] values, bint nonfinite=False):
    """Position of the first NaN in ``values`` (with ``nonfinite``: the first NaN or
    infinity), or -1 when there is none."""
    cdef Py_ssize_t n = values.shape[0], n_chunks = _n_chunks(n), c
    cdef Py_ssize_t first[N_CHUNKS]
    if n == 0:
        return -1
    with nogil:
        if n_chunks == 1:
            first[0] = _first_nan_in(&values[0], 0, n, nonfinite)
        else:
            for c in prange(n_chunks, schedule="static"):
                first[c] = _first_nan_in(&values[0], c * n // n_chunks,
                                         (c + 1) * n // n_chunks, nonfinite)
    return _smallest(first, n_chunks)


def binary_to_uint8(const truth_t[::1] values, uint8_t[::1] out):
    """Check that every value is 0 or 1, writing it to ``out`` as uint8 (``out`` empty:
    check only). Returns the position of the first other value (where ``out`` is then
    incomplete), or -1."""
    cdef Py_ssize_t n = values.shape[0], n_chunks = _n_chunks(n), c
    cdef Py_ssize_t first[N_CHUNKS]
    cdef uint8_t* dest = NULL
    if n == 0:
        return -1
    if out.shape[0] > 0:
        if out.shape[0] != n:
            raise ValueError(f"out has {out.shape[0]} entries, values {n}")
        dest = &out[0]
    with nogil:
        if n_chunks == 1:
            first[0] = _binary_in(&values[0], dest, 0, n)
        else:
            for c in prange(n_chunks, schedule="static"):
                first[c] = _binary_in(&values[0], dest, c * n // n_chunks,
                                      (c + 1) * n // n_chunks)
    return _smallest(first, n_chunks)
