# cython: language_level=3
"""Streaming tokenizers into CSR: the ``@data`` section of an ARFF file and libsvm/svmlight
multi-label files. The Python wrapper is ``fastrank.datasets``; it parses the (small) ARFF
header and hands the data section over as one ``bytes`` object.

One pass over the bytes, no per-line Python strings: output buffers are sized up front from
a count of separators (every stored value is preceded by a comma, a line start or a blank),
so memory is O(file size) and the time is linear; buffers more than half empty at the end
are trimmed by a copy, so a dense file full of zeros does not keep them alive. Numbers with
at most 15 digits and no exponent are converted exactly (an integer mantissa below 2**53
divided by an exact power of ten is correctly rounded, like ``strtod``); other decimal
numbers (more digits, an exponent) go through ``strtod``. A number is exactly
``[+-]digits[.digits][(e|E)[+-]digits]`` (at least one mantissa digit) and finite: hexadecimal
floats, ``inf``/``nan`` and leading white space, which ``strtod`` would accept, are not.
Every malformed row raises ``ValueError("<source>: line <n>: <what was expected>")``.
"""
import numpy as np

from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport strtod
from libc.string cimport memchr, memcmp

cdef double[23] POW10
cdef int _k
POW10[0] = 1.0
for _k in range(1, 23):
    POW10[_k] = POW10[_k - 1] * 10.0


cdef enum:
    NUMERIC = 0
    NOMINAL = 1
    BINARY = 2

#: the codes of an attribute's kind in parse_arff_data's ``kind`` (fastrank.datasets reads
#: them): numeric, nominal, or nominal {0,1} (binary)
ATTRIBUTE_KINDS = {"numeric": NUMERIC, "nominal": NOMINAL, "binary": BINARY}


cdef inline bint _is_blank(char c) noexcept nogil:
    return c == b' ' or c == b'\t' or c == b'\r'


cdef bint _parse_number(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """Convert the whole token s[0:n] to a finite double; False if it is not a decimal
    number (see the module docstring). The byte after the token is never part of a number
    (a delimiter, or the bytes object's terminating NUL), so ``strtod`` stops at s + n."""
    cdef Py_ssize_t i = 0, e0
    cdef uint64_t mant = 0
    cdef int digits = 0, frac = 0
    cdef bint neg = False, dot = False
    cdef char c
    cdef char* end
    if n <= 0:
        return False
    if s[0] == b'-' or s[0] == b'+':
        neg = s[0] == b'-'
        i = 1
    while i < n:
        c = s[i]
        if b'0' <= c <= b'9':
            mant = mant * 10 + <uint64_t> (c - 48)
            digits += 1
            if dot:
                frac += 1
        elif c == b'.' and not dot:
            dot = True
        else:
            break
        i += 1
    if digits == 0:
        return False
    if i == n and digits <= 15:
        out[0] = (-1.0 if neg else 1.0) * (<double> mant / POW10[frac])
        return True
    if i < n:  # only an exponent may follow the mantissa
        if s[i] != b'e' and s[i] != b'E':
            return False
        i += 1
        if i < n and (s[i] == b'-' or s[i] == b'+'):
            i += 1
        e0 = i
        while i < n and b'0' <= s[i] <= b'9':
            i += 1
        if i == e0 or i != n:
            return False
    out[0] = strtod(s, &end)
    return end == s + n and isfinite(out[0])


cdef inline Py_ssize_t _count(const char* p, Py_ssize_t n, char a, char b) noexcept nogil:
    cdef Py_ssize_t i, k = 0
    for i in range(n):
        if p[i] == a or p[i] == b:
            k += 1
    return k


def _trim(arr, Py_ssize_t n):
    """The first n entries; copied when that frees more than half of the buffer."""
    return arr[:n] if 2 * n >= arr.shape[0] else arr[:n].copy()


def _fail(str source, Py_ssize_t line, str what):
    raise ValueError(f"{source}: line {line}: {what}")


def _token_text(const char* t, Py_ssize_t n):
    return t[:n].decode("utf-8", "replace")


cdef class _ArffRow:
    """Per-file state of the ARFF data parser (attribute table and output buffers)."""
    cdef str source
    cdef list names, nominal, last_key
    cdef double[::1] last_val
    cdef const int32_t[::1] col
    cdef const unsigned char[::1] is_label, kind
    cdef Py_ssize_t n_attrs, nx, ny, line
    cdef int32_t[::1] x_ind, y_ind
    cdef double[::1] x_val

    cdef int store(self, Py_ssize_t a, const char* t, Py_ssize_t n, bint quoted) except -1:
        """Convert token t[0:n] of attribute a and append it to the X or Y buffers."""
        cdef double v = 0.0
        cdef object cached
        cdef bytes key, raw
        if self.kind[a] == BINARY and n == 1 and (t[0] == b'0' or t[0] == b'1'):
            v = t[0] - 48
        elif self.kind[a] != NUMERIC:
            # one-entry cache per attribute: long runs of the same nominal value (genbase's
            # NO, NO, ...) skip the bytes object and the dict look-up
            cached = self.last_key[a]
            if cached is not None and len(<bytes> cached) == n \
                    and memcmp(<const char*> (<bytes> cached), t, n) == 0:
                v = self.last_val[a]
            else:
                key = t[:n]
                raw = key
                if quoted and b"\\" in key:
                    key = key.replace(b"\\'", b"'").replace(b'\\"', b'"').replace(b"\\\\", b"\\")
                value = self.nominal[a].get(key)
                if value is None:
                    _fail(self.source, self.line,
                          f"value {_token_text(t, n)!r} of attribute {self.names[a]!r} is "
                          f"not one of its declared nominal values")
                v = value
                self.last_key[a] = raw
                self.last_val[a] = v
        elif n == 1 and t[0] == b'?':
            _fail(self.source, self.line,
                  f"missing value '?' for attribute {self.names[a]!r} (not supported)")
        elif not _parse_number(t, n, &v):
            _fail(self.source, self.line, f"expected a finite number for attribute "
                  f"{self.names[a]!r}, found {_token_text(t, n)!r}")
        if self.is_label[a]:
            if v == 1.0:
                self.y_ind[self.ny] = self.col[a]
                self.ny += 1
            elif v != 0.0:
                _fail(self.source, self.line, f"label attribute {self.names[a]!r} must be 0 "
                      f"or 1, found {_token_text(t, n)!r}")
        elif v != 0.0:
            self.x_ind[self.nx] = self.col[a]
            self.x_val[self.nx] = v
            self.nx += 1
        return 0

    cdef Py_ssize_t token(self, const char* p, Py_ssize_t i, Py_ssize_t end, char stop,
                          Py_ssize_t* t0, Py_ssize_t* t1, bint* quoted) except -1:
        """Scan one value starting at p[i] (blanks skipped): a quoted string or the text up
        to ',' or ``stop``; sets [t0, t1) and returns the index of the delimiter (or end)."""
        cdef char q
        while i < end and _is_blank(p[i]):
            i += 1
        quoted[0] = i < end and (p[i] == b"'" or p[i] == b'"')
        if quoted[0]:
            q = p[i]
            i += 1
            t0[0] = i
            while i < end and p[i] != q:
                i += 2 if p[i] == b'\\' else 1
            if i >= end:
                _fail(self.source, self.line, "unterminated quoted value")
            t1[0] = i
            i += 1
            while i < end and _is_blank(p[i]):
                i += 1
            if i < end and p[i] != b',' and p[i] != stop:
                _fail(self.source, self.line, "expected ',' after a quoted value")
            return i
        t0[0] = i
        while i < end and p[i] != b',' and p[i] != stop:
            i += 1
        t1[0] = i
        while t1[0] > t0[0] and _is_blank(p[t1[0] - 1]):
            t1[0] -= 1
        if t1[0] == t0[0]:
            _fail(self.source, self.line, "empty value")
        return i

    cdef int dense(self, const char* p, Py_ssize_t i, Py_ssize_t end) except -1:
        cdef Py_ssize_t a = 0, t0, t1
        cdef bint quoted
        while True:
            i = self.token(p, i, end, b',', &t0, &t1, &quoted)
            if a >= self.n_attrs:
                _fail(self.source, self.line,
                      f"expected {self.n_attrs} comma-separated values, found more")
            self.store(a, p + t0, t1 - t0, quoted)
            a += 1
            if i >= end:
                break
            i += 1  # the comma
        if a != self.n_attrs:
            _fail(self.source, self.line,
                  f"expected {self.n_attrs} comma-separated values, found {a} (truncated row?)")
        return 0

    cdef int sparse(self, const char* p, Py_ssize_t i, Py_ssize_t end) except -1:
        cdef Py_ssize_t a, prev = -1, t0, t1, d
        cdef bint quoted
        i += 1  # the '{'
        while True:
            while i < end and _is_blank(p[i]):
                i += 1
            if i < end and p[i] == b'}' and prev == -1:
                break  # empty row "{}"
            a = 0
            d = i
            while i < end and b'0' <= p[i] <= b'9':
                if a <= self.n_attrs:
                    a = a * 10 + (p[i] - 48)
                i += 1
            if i == d or i >= end or not _is_blank(p[i]):
                _fail(self.source, self.line, "malformed sparse entry: expected "
                      "'{index value, ...}' with a non-negative integer index and a blank")
            if a >= self.n_attrs:  # a stopped growing past n_attrs: quote the digits
                _fail(self.source, self.line, f"sparse index {_token_text(p + d, min(i - d, 40))}"
                      f"{'' if i - d <= 40 else f'... ({i - d} digits)'} out of range for "
                      f"{self.n_attrs} attributes")
            if a <= prev:
                _fail(self.source, self.line, f"sparse indices must increase strictly "
                      f"({a} after {prev})")
            i = self.token(p, i, end, b'}', &t0, &t1, &quoted)
            self.store(a, p + t0, t1 - t0, quoted)
            prev = a
            if i >= end:
                _fail(self.source, self.line, "sparse row not closed by '}' (truncated row?)")
            if p[i] == b'}':
                break
            i += 1  # the comma
        i += 1
        while i < end and _is_blank(p[i]):
            i += 1
        if i < end:
            _fail(self.source, self.line, "unexpected text after '}' (instance weights are "
                  "not supported)")
        return 0


def parse_arff_data(bytes buf, Py_ssize_t first_line, str source, list names,
                    const int32_t[::1] col, const unsigned char[::1] is_label, list nominal,
                    const unsigned char[::1] kind):
    """Parse ARFF data rows (dense or sparse ``{index value, ...}``, ``%`` comment lines and
    blank lines skipped) into CSR pieces.

    ``col[a]`` is the column of attribute ``a`` in X (``is_label[a] == 0``) or in Y;
    ``nominal[a]`` is None for a numeric attribute or a dict ``bytes -> float``;
    ``kind[a]`` is its code in ATTRIBUTE_KINDS (binary: nominal ``{0,1}``, converted
    without a dict look-up).
    ``first_line`` is the file line number of ``buf``'s first line (for messages).
    Returns ``(x_indptr, x_indices, x_data, y_indptr, y_indices)``; zeros are not stored.
    """
    cdef const char* p = buf
    cdef Py_ssize_t n = len(buf), i = 0, s, e, rows = 0
    cdef Py_ssize_t cap = _count(p, n, b',', b'\n') + 1
    cdef Py_ssize_t nlines = _count(p, n, b'\n', b'\n') + 1
    cdef const char* nl
    cdef _ArffRow st = _ArffRow()
    x_indptr = np.zeros(nlines + 1, dtype=np.int64)
    y_indptr = np.zeros(nlines + 1, dtype=np.int64)
    cdef int64_t[::1] xp = x_indptr, yp = y_indptr
    x_indices = np.empty(cap, dtype=np.int32)
    x_data = np.empty(cap, dtype=np.float64)
    y_indices = np.empty(cap, dtype=np.int32)
    st.source, st.names, st.nominal = source, names, nominal
    st.col, st.is_label, st.kind, st.n_attrs = col, is_label, kind, len(names)
    st.last_key, st.last_val = [None] * len(names), np.zeros(len(names))
    st.x_ind, st.x_val, st.y_ind = x_indices, x_data, y_indices
    st.nx = st.ny = 0
    st.line = first_line - 1
    while i < n:
        nl = <const char*> memchr(p + i, b'\n', n - i)
        e = n if nl == NULL else nl - p
        st.line += 1
        s = i
        i = e + 1
        while s < e and _is_blank(p[s]):
            s += 1
        while e > s and _is_blank(p[e - 1]):
            e -= 1
        if s == e or p[s] == b'%':
            continue
        if p[s] == b'{':
            st.sparse(p, s, e)
        else:
            st.dense(p, s, e)
        rows += 1
        xp[rows] = st.nx
        yp[rows] = st.ny
    return (_trim(x_indptr, rows + 1), _trim(x_indices, st.nx), _trim(x_data, st.nx),
            _trim(y_indptr, rows + 1), _trim(y_indices, st.ny))


def parse_libsvm(bytes buf, str source):
    """Parse libsvm/svmlight multi-label lines ``l1,l2,... idx:val idx:val ... [# comment]``.

    An empty label list is a line starting with a blank (or with a feature). Feature indices
    must increase strictly within a line. Returns ``(x_indptr, x_indices (int64, as written),
    x_data, y_indptr, y_labels (int64, as written), lowest, highest)``; zeros are not
    stored, but their indices count in ``lowest`` and ``highest``, the smallest and largest
    feature index written (-1, -1 when there is none).
    """
    cdef const char* p = buf
    cdef Py_ssize_t n = len(buf), i = 0, s, e, t, d, rows = 0, nx = 0, ny = 0, line = 0
    cdef Py_ssize_t nlines = _count(p, n, b'\n', b'\n') + 1
    cdef Py_ssize_t cap = _count(p, n, b':', b',') + nlines
    cdef bint neg
    cdef const char* nl
    cdef const char* hashp
    cdef int64_t idx, prev, lowest = -1, highest = -1
    cdef long long lab
    cdef double v
    x_indptr = np.zeros(nlines + 1, dtype=np.int64)
    y_indptr = np.zeros(nlines + 1, dtype=np.int64)
    x_indices = np.empty(cap, dtype=np.int64)
    x_data = np.empty(cap, dtype=np.float64)
    y_labels = np.empty(cap, dtype=np.int64)
    cdef int64_t[::1] xp = x_indptr, yp = y_indptr, xi = x_indices, yl = y_labels
    cdef double[::1] xv = x_data
    while i < n:
        nl = <const char*> memchr(p + i, b'\n', n - i)
        e = n if nl == NULL else nl - p
        line += 1
        s = i
        i = e + 1
        hashp = <const char*> memchr(p + s, b'#', e - s)
        if hashp != NULL:
            e = hashp - p
        while e > s and _is_blank(p[e - 1]):
            e -= 1
        t = s
        while t < e and _is_blank(p[t]):
            t += 1
        if t == e:
            continue  # blank or comment-only line
        # labels: the first token unless the line starts with a blank or the token holds ':'
        while t < e and not _is_blank(p[t]):
            t += 1
        if not _is_blank(p[s]) and memchr(p + s, b':', t - s) == NULL:
            while True:
                neg = p[s] == b'-'
                d = s + neg
                s = d
                lab = 0
                while s < t and b'0' <= p[s] <= b'9':
                    if lab < (1LL << 31):  # saturates: anything larger is refused below
                        lab = lab * 10 + (p[s] - 48)
                    s += 1
                if s == d or (s < t and p[s] != b','):
                    _fail(source, line, f"expected comma-separated integer labels, found "
                          f"{_token_text(p + d - neg, t - d + neg)!r}")
                if lab >= (1LL << 31):
                    _fail(source, line, f"label {_token_text(p + d - neg, s - d + neg)!r} "
                          f"out of range: labels must lie strictly between -2**31 and 2**31")
                yl[ny] = -lab if neg else lab
                ny += 1
                if s == t:
                    break
                s += 1  # the comma
                if s == t:
                    _fail(source, line, "empty label after ','")
        prev = -1
        while True:
            while s < e and _is_blank(p[s]):
                s += 1
            if s >= e:
                break
            idx = 0
            t = s
            while s < e and b'0' <= p[s] <= b'9':
                if idx < (1LL << 40):
                    idx = idx * 10 + (p[s] - 48)
                s += 1
            if s == t or s >= e or p[s] != b':':
                _fail(source, line, "malformed feature: expected 'index:value' with a "
                      "non-negative integer index (qid is not supported)")
            if idx >= (1LL << 31):
                _fail(source, line, f"feature index {_token_text(p + t, s - t)} too large "
                      f"(at most 2**31 - 1)")
            if idx <= prev:
                _fail(source, line, f"feature indices must increase strictly "
                      f"({idx} after {prev})")
            prev = idx
            lowest = idx if lowest < 0 or idx < lowest else lowest
            highest = idx if idx > highest else highest
            s += 1
            t = s
            while s < e and not _is_blank(p[s]):
                s += 1
            if not _parse_number(p + t, s - t, &v):
                _fail(source, line, f"expected a finite number after '{idx}:', found "
                      f"{_token_text(p + t, s - t)!r}")
            if v != 0.0:
                xi[nx] = idx
                xv[nx] = v
                nx += 1
        rows += 1
        xp[rows] = nx
        yp[rows] = ny
    return (_trim(x_indptr, rows + 1), _trim(x_indices, nx), _trim(x_data, nx),
            _trim(y_indptr, rows + 1), _trim(y_labels, ny), lowest, highest)
