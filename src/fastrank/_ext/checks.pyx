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
from libc.string cimport memcpy
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
    """Whether [lo, hi) holds a bad value, from the bits: a magnitude above the largest
    good one (infinity's, or the largest finite) sets the sign bit of their difference.
    Integer arithmetic ORed over the block, which vectorises on every x86-64 (GCC keeps an
    OR of double compares scalar on SSE2)."""
    cdef Py_ssize_t i
    cdef const uint64_t* bits64
    cdef const uint32_t* bits32
    cdef uint64_t acc64 = 0, limit64
    cdef uint32_t acc32 = 0, limit32
    if float_t is double:
        bits64 = <const uint64_t*> values
        limit64 = 0x7FEFFFFFFFFFFFFF if nonfinite else 0x7FF0000000000000
        for i in range(lo, hi):
            acc64 |= limit64 - (bits64[i] & <uint64_t> 0x7FFFFFFFFFFFFFFF)
        return (acc64 >> 63) != 0
    else:
        bits32 = <const uint32_t*> values
        limit32 = 0x7F7FFFFF if nonfinite else 0x7F800000
        for i in range(lo, hi):
            acc32 |= limit32 - (bits32[i] & <uint32_t> 0x7FFFFFFF)
        return (acc32 >> 31) != 0


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


cdef inline uint64_t _double_not_binary(uint64_t u) noexcept nogil:
    """Non-zero iff the double whose bits are u is neither 0 nor 1: its bits without the
    sign are not 0 (0.0, -0.0), nor are its bits 1.0's. SSE2 has no 64-bit compare: the top
    bit of z | -z is set iff z is not 0."""
    cdef uint64_t x = u << 1, y = u ^ <uint64_t> 0x3FF0000000000000
    return ((x | (0 - x)) & (y | (0 - y))) >> 63


cdef inline uint8_t _binary_as_uint8(truth_t v) noexcept nogil:
    """A value that is 0 or 1 as uint8 (a double's from its lowest exponent bit: 1.0's is
    1, 0.0's 0)."""
    cdef uint64_t u
    if truth_t is double:
        memcpy(&u, &v, 8)
        return <uint8_t> (u >> 52) & 1
    elif truth_t is float:
        return v == 1
    else:
        return <uint8_t> v


cdef Py_ssize_t _binary_in(const truth_t* values, uint8_t* out, Py_ssize_t lo,
                           Py_ssize_t hi) noexcept nogil:
    """First position in [lo, hi) of a value other than 0 and 1, or -1; writes the values
    to ``out`` as uint8 unless it is NULL. Each block's test is an OR over its values that
    vectorises on every x86-64 (GCC keeps an OR of double or 64-bit integer compares
    scalar on SSE2): for an integer of v >> 1, in the integer's own width; for a float of
    compares; for a double of integer arithmetic on its bits."""
    cdef Py_ssize_t b = lo, b_end, i
    cdef uint64_t u, bad
    cdef truth_t bad_int
    cdef bint bad_float
    while b < hi:
        b_end = min(b + <Py_ssize_t>BLOCK, hi)
        if truth_t is double:
            bad = 0
            for i in range(b, b_end):
                memcpy(&u, &values[i], 8)
                bad |= _double_not_binary(u)
        elif truth_t is float:
            bad_float = False
            for i in range(b, b_end):
                bad_float |= (values[i] != 0) & (values[i] != 1)
            bad = bad_float
        else:
            bad_int = 0
            for i in range(b, b_end):
                bad_int |= values[i] >> 1
            bad = bad_int != 0
        if bad:
            for i in range(b, b_end):
                if values[i] != 0 and values[i] != 1:
                    return i
        if out != NULL:
            for i in range(b, b_end):
                out[i] = _binary_as_uint8(values[i])
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


cdef Py_ssize_t first_nan_f64(const double* values, Py_ssize_t n,
                              bint nonfinite) noexcept nogil:
    return _first_nan_in(values, 0, n, nonfinite)


cdef Py_ssize_t first_not_binary_u8(const uint8_t* values, Py_ssize_t n) noexcept nogil:
    return _binary_in(values, <uint8_t*> NULL, 0, n)


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
