# cython: language_level=3
"""Word splitting and term counting into CSR for ``fastrank.text.TfidfIndexer``.

The Python wrapper lowercases each document (``str.lower``, then the optional accent
stripping) and hands the list over; this module splits the documents into words and counts
them without a Python object per word. The rules are those of ``fastrank.text.analyze``:

* decimal digits (``str.isdecimal``, Unicode category Nd) are deleted, so the letters on
  either side of them join ("b2b" is the word "bb");
* a word is a maximal run of the other word characters of Python's regular expressions
  (``\\w`` without ``_``: ``str.isalpha``, ``str.isdigit`` or ``str.isnumeric``);
* every other character separates words.

Characters outside ASCII are classified by the interpreter's own Unicode database (the C
functions behind ``str.isalpha`` and friends), so this scan and the regular expressions of
the Python path agree on every code point.

Terms are kept in one hash table (open addressing with linear probing; FNV-1a over the code
points, then a final mix) whose keys are UCS-4 copies in one growing arena; a term's id is
the order of its first appearance, or the column given by a fitted vocabulary. Per document,
a term's first occurrence appends an entry (id, 1) and later ones add 1 to it. The scan
holds no Python object and runs without the GIL.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcmp, memcpy, memset


cdef extern from "Python.h":
    int PyUnicode_KIND(object s)
    void* PyUnicode_DATA(object s)
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND
    int PyUnicode_4BYTE_KIND
    bint Py_UNICODE_ISALPHA(uint32_t ch) nogil
    bint Py_UNICODE_ISDECIMAL(uint32_t ch) nogil
    bint Py_UNICODE_ISDIGIT(uint32_t ch) nogil
    bint Py_UNICODE_ISNUMERIC(uint32_t ch) nogil


cdef enum:
    SEPARATOR = 0
    WORD = 1
    DELETED = 2
    STOP = -1      # table id of a stop word: never counted

cdef unsigned char ASCII_CLASS[128]
cdef int _c
for _c in range(128):
    ASCII_CLASS[_c] = WORD if chr(_c).isalpha() else DELETED if chr(_c).isdecimal() \
        else SEPARATOR


cdef inline int _class(uint32_t c) noexcept nogil:
    """SEPARATOR, WORD or DELETED (see the module docstring)."""
    if c < 128:
        return ASCII_CLASS[c]
    if Py_UNICODE_ISDECIMAL(c):
        return DELETED
    if Py_UNICODE_ISALPHA(c) or Py_UNICODE_ISDIGIT(c) or Py_UNICODE_ISNUMERIC(c):
        return WORD
    return SEPARATOR


ctypedef fused char_t:
    uint8_t
    uint16_t
    uint32_t


cdef struct Table:
    # slots (capacity = mask + 1, a power of two); an empty slot has length -1
    uint64_t* hashes
    int64_t* offsets
    int32_t* lengths
    int32_t* ids
    Py_ssize_t mask
    Py_ssize_t used
    # the keys, UCS-4, back to back
    uint32_t* arena
    Py_ssize_t arena_len
    Py_ssize_t arena_cap
    # learned terms by id: where their key is in the arena, and its length
    int64_t* term_offset
    int32_t* term_length
    Py_ssize_t n_terms
    Py_ssize_t terms_cap


cdef struct Counts:
    # per term id: the last document it was seen in and its entry there
    int64_t* last_doc
    int64_t* entry
    Py_ssize_t per_term_cap
    # the CSR being built
    int64_t* indptr
    int32_t* indices
    double* data
    Py_ssize_t nnz
    Py_ssize_t cap


cdef extern from "fnv.h":
    const uint64_t FNV_OFFSET "FR_FNV_OFFSET"
    const uint64_t FNV_PRIME "FR_FNV_PRIME"
    # the FNV-1a state mixed for the table; FNV-1a of a UCS-4 key, mixed
    uint64_t _mix "fr_fnv_mix"(uint64_t h) noexcept nogil
    uint64_t _hash "fr_fnv_ucs4"(const uint32_t* key, int64_t n) noexcept nogil


cdef inline int _grow(void** p, Py_ssize_t* cap, Py_ssize_t need, size_t item) noexcept nogil:
    """Make the buffer *p hold at least ``need`` items (doubling); -1 when out of memory."""
    cdef Py_ssize_t c = cap[0] if cap[0] > 0 else 16
    cdef void* q
    if need <= cap[0]:
        return 0
    while c < need:
        c *= 2
    q = realloc(p[0], <size_t> c * item)
    if q == NULL:
        return -1
    p[0], cap[0] = q, c
    return 0


cdef int _table_init(Table* t, Py_ssize_t capacity) noexcept nogil:
    cdef Py_ssize_t c = 1024
    while c < 2 * capacity:
        c *= 2
    memset(t, 0, sizeof(Table))
    t.hashes = <uint64_t*> malloc(c * sizeof(uint64_t))
    t.offsets = <int64_t*> malloc(c * sizeof(int64_t))
    t.lengths = <int32_t*> malloc(c * sizeof(int32_t))
    t.ids = <int32_t*> malloc(c * sizeof(int32_t))
    if t.hashes == NULL or t.offsets == NULL or t.lengths == NULL or t.ids == NULL:
        return -1
    memset(t.lengths, 0xff, c * sizeof(int32_t))  # -1: empty
    t.mask = c - 1
    return 0


cdef void _table_free(Table* t) noexcept nogil:
    free(t.hashes)
    free(t.offsets)
    free(t.lengths)
    free(t.ids)
    free(t.arena)
    free(t.term_offset)
    free(t.term_length)
    memset(t, 0, sizeof(Table))


cdef inline Py_ssize_t _find(const Table* t, const uint32_t* key, Py_ssize_t n,
                             uint64_t h) noexcept nogil:
    """The slot holding ``key``, or the empty slot where it would go."""
    cdef Py_ssize_t s = <Py_ssize_t> (h & <uint64_t> t.mask)
    while t.lengths[s] >= 0:
        if t.hashes[s] == h and t.lengths[s] == n and \
                memcmp(t.arena + t.offsets[s], key, n * sizeof(uint32_t)) == 0:
            return s
        s = (s + 1) & t.mask
    return s


cdef int _rehash(Table* t) noexcept nogil:
    cdef Py_ssize_t old_cap = t.mask + 1, c = 2 * old_cap, s, k
    cdef uint64_t* hashes = <uint64_t*> malloc(c * sizeof(uint64_t))
    cdef int64_t* offsets = <int64_t*> malloc(c * sizeof(int64_t))
    cdef int32_t* lengths = <int32_t*> malloc(c * sizeof(int32_t))
    cdef int32_t* ids = <int32_t*> malloc(c * sizeof(int32_t))
    if hashes == NULL or offsets == NULL or lengths == NULL or ids == NULL:
        free(hashes)
        free(offsets)
        free(lengths)
        free(ids)
        return -1
    memset(lengths, 0xff, c * sizeof(int32_t))
    for s in range(old_cap):
        if t.lengths[s] >= 0:
            k = <Py_ssize_t> (t.hashes[s] & <uint64_t> (c - 1))
            while lengths[k] >= 0:
                k = (k + 1) & (c - 1)
            hashes[k], offsets[k], lengths[k], ids[k] = \
                t.hashes[s], t.offsets[s], t.lengths[s], t.ids[s]
    free(t.hashes)
    free(t.offsets)
    free(t.lengths)
    free(t.ids)
    t.hashes, t.offsets, t.lengths, t.ids, t.mask = hashes, offsets, lengths, ids, c - 1
    return 0


cdef int _insert(Table* t, Py_ssize_t s, const uint32_t* key, Py_ssize_t n, uint64_t h,
                 int32_t ident) noexcept nogil:
    """Store ``key`` with id ``ident`` in the empty slot ``s``; -1 when out of memory."""
    if _grow(<void**> &t.arena, &t.arena_cap, t.arena_len + n, sizeof(uint32_t)) < 0:
        return -1
    if n > 0:  # (an empty term, before any other, leaves the arena NULL: no memcpy to it)
        memcpy(t.arena + t.arena_len, key, n * sizeof(uint32_t))
    t.hashes[s], t.offsets[s], t.lengths[s], t.ids[s] = h, t.arena_len, <int32_t> n, ident
    t.arena_len += n
    t.used += 1
    if 2 * t.used > t.mask + 1:
        return _rehash(t)
    return 0


cdef inline int _count(Counts* out, int32_t ident, int64_t doc) noexcept nogil:
    """One more occurrence of term ``ident`` in document ``doc``; -1 when out of memory."""
    cdef Py_ssize_t old = out.per_term_cap, i
    if ident >= old:
        if _grow(<void**> &out.last_doc, &out.per_term_cap, ident + 1, sizeof(int64_t)) < 0:
            return -1
        out.entry = <int64_t*> realloc(out.entry, out.per_term_cap * sizeof(int64_t))
        if out.entry == NULL:
            return -1
        for i in range(old, out.per_term_cap):
            out.last_doc[i] = -1
    if out.last_doc[ident] == doc:
        out.data[out.entry[ident]] += 1.0
        return 0
    if out.nnz == out.cap:
        if _grow(<void**> &out.indices, &out.cap, out.nnz + 1, sizeof(int32_t)) < 0:
            return -1
        out.data = <double*> realloc(out.data, out.cap * sizeof(double))
        if out.data == NULL:
            return -1
    out.last_doc[ident] = doc
    out.entry[ident] = out.nnz
    out.indices[out.nnz] = ident
    out.data[out.nnz] = 1.0
    out.nnz += 1
    return 0


cdef inline int _word(Table* t, Counts* out, const uint32_t* w, Py_ssize_t n, uint64_t h,
                      int64_t doc, bint learn) noexcept nogil:
    """Count the word w[0:n] (hash ``h``) of document ``doc``; a new term gets the next id
    if ``learn``, else it is ignored. -1 when out of memory."""
    cdef Py_ssize_t s = _find(t, w, n, h)
    cdef int32_t ident
    if t.lengths[s] >= 0:
        ident = t.ids[s]
        if ident == STOP:
            return 0
    elif not learn:
        return 0
    else:
        if t.n_terms >= 2147483647:
            return -1
        ident = <int32_t> t.n_terms
        if _grow(<void**> &t.term_offset, &t.terms_cap, t.n_terms + 1, sizeof(int64_t)) < 0:
            return -1
        t.term_length = <int32_t*> realloc(t.term_length, t.terms_cap * sizeof(int32_t))
        if t.term_length == NULL:
            return -1
        t.term_offset[ident], t.term_length[ident] = t.arena_len, <int32_t> n
        if _insert(t, s, w, n, h, ident) < 0:
            return -1
        t.n_terms += 1
    return _count(out, ident, doc)


cdef int _scan(const char_t* text, Py_ssize_t length, Table* t, Counts* out, uint32_t** word,
               Py_ssize_t* word_cap, int64_t doc, bint learn) noexcept nogil:
    """Split one document into words and count them; -1 when out of memory."""
    cdef Py_ssize_t i, n = 0
    cdef uint32_t c
    cdef uint32_t* w
    cdef uint64_t h = FNV_OFFSET
    cdef int kind
    if _grow(<void**> word, word_cap, length, sizeof(uint32_t)) < 0:
        return -1
    w = word[0]
    for i in range(length):
        c = text[i]
        kind = _class(c)
        if kind == WORD:
            w[n] = c
            n += 1
            h = (h ^ c) * FNV_PRIME
        elif kind == SEPARATOR and n:
            if _word(t, out, w, n, _mix(h), doc, learn) < 0:
                return -1
            n = 0
            h = FNV_OFFSET
    if n and _word(t, out, w, n, _mix(h), doc, learn) < 0:
        return -1
    return 0


cdef struct Key:
    const uint32_t* chars
    int32_t length
    int32_t ident


cdef int _compare_keys(const void* a, const void* b) noexcept nogil:
    """Code-point order, as Python compares str."""
    cdef const Key* x = <const Key*> a
    cdef const Key* y = <const Key*> b
    cdef int32_t i, n = x.length if x.length < y.length else y.length
    for i in range(n):
        if x.chars[i] != y.chars[i]:
            return -1 if x.chars[i] < y.chars[i] else 1
    return (x.length > y.length) - (x.length < y.length)


cdef int _sort_rows(Counts* out, Py_ssize_t n_docs, Py_ssize_t n_columns) noexcept nogil:
    """Order every row's entries by column, in linear time: a stable counting sort of all
    entries by column, then one by row (the columns of a row are distinct)."""
    cdef Py_ssize_t d, k, p, c
    cdef int64_t* start = <int64_t*> calloc(n_columns + 1, sizeof(int64_t))
    cdef int64_t* fill = <int64_t*> malloc((n_docs if n_docs else 1) * sizeof(int64_t))
    cdef int32_t* row = <int32_t*> malloc((out.nnz if out.nnz else 1) * sizeof(int32_t))
    cdef double* count = <double*> malloc((out.nnz if out.nnz else 1) * sizeof(double))
    if start == NULL or fill == NULL or row == NULL or count == NULL:
        free(start)
        free(fill)
        free(row)
        free(count)
        return -1
    for k in range(out.nnz):
        start[out.indices[k] + 1] += 1
    for c in range(n_columns):
        start[c + 1] += start[c]
    for d in range(n_docs):  # by column, rows in order within a column
        for k in range(out.indptr[d], out.indptr[d + 1]):
            p = start[out.indices[k]]
            start[out.indices[k]] += 1
            row[p], count[p] = <int32_t> d, out.data[k]
        fill[d] = out.indptr[d]
    p = 0
    for c in range(n_columns):  # back by row, columns now in order within a row
        while p < start[c]:
            k = fill[row[p]]
            fill[row[p]] += 1
            out.indices[k], out.data[k] = <int32_t> c, count[p]
            p += 1
    free(start)
    free(fill)
    free(row)
    free(count)
    return 0


cdef int _sort_terms(Table* t, Counts* out, int32_t* order) noexcept nogil:
    """Renumber the learned terms in code-point order: ``order[j]`` is the first-appearance
    id of the j-th term; the counts' columns become the new ids. -1 when out of memory."""
    cdef Py_ssize_t j, k
    cdef Key* keys = <Key*> malloc((t.n_terms if t.n_terms else 1) * sizeof(Key))
    cdef int32_t* column = <int32_t*> malloc((t.n_terms if t.n_terms else 1) * sizeof(int32_t))
    if keys == NULL or column == NULL:
        free(keys)
        free(column)
        return -1
    for j in range(t.n_terms):
        keys[j].chars = t.arena + t.term_offset[j]
        keys[j].length = t.term_length[j]
        keys[j].ident = <int32_t> j
    qsort(keys, t.n_terms, sizeof(Key), _compare_keys)
    for j in range(t.n_terms):
        order[j] = keys[j].ident
        column[keys[j].ident] = <int32_t> j
    for k in range(out.nnz):
        out.indices[k] = column[out.indices[k]]
    free(keys)
    free(column)
    return 0


cdef int _put(Table* t, str term, int32_t ident) except -1:
    """Enter ``term`` with id ``ident`` unless it is already there."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(term), i, s
    cdef int kind = PyUnicode_KIND(term)
    cdef void* data = PyUnicode_DATA(term)
    cdef uint32_t* key = <uint32_t*> malloc((n if n else 1) * sizeof(uint32_t))
    cdef uint64_t h
    if key == NULL:
        raise MemoryError()
    for i in range(n):
        key[i] = (<uint8_t*> data)[i] if kind == PyUnicode_1BYTE_KIND else \
            (<uint16_t*> data)[i] if kind == PyUnicode_2BYTE_KIND else (<uint32_t*> data)[i]
    h = _hash(key, n)
    s = _find(t, key, n, h)
    i = 0 if t.lengths[s] >= 0 else _insert(t, s, key, n, h, ident)
    free(key)
    if i < 0:
        raise MemoryError()
    return 0


def count_terms(list docs, stop_words, vocabulary=None):
    """Term counts of the lowercased documents ``docs`` (a list of str).

    ``stop_words``: the words never counted (an iterable of str). ``vocabulary``: None to
    learn the terms, or a dict term -> column (int32), in which case only its terms are
    counted. Returns ``(terms, indptr, indices, data)``: the learned terms in code-point
    order (None with a vocabulary), and the counts as canonical CSR arrays (int64, int32,
    float64; a row's columns sorted and distinct) whose columns are the positions in
    ``terms`` or the vocabulary's columns.
    """
    cdef Py_ssize_t n_docs = len(docs), d, total = 0, n_columns = 0
    cdef bint learn = vocabulary is None
    cdef Table t
    cdef Counts out
    cdef uint32_t* word = NULL
    cdef Py_ssize_t word_cap = 0
    cdef int status = 0
    cdef int* kinds = NULL
    cdef void** texts = NULL
    cdef Py_ssize_t* lengths = NULL
    cdef int32_t* order = NULL
    cdef int64_t[::1] indptr = np.zeros(n_docs + 1, dtype=np.int64)
    cdef int32_t[::1] iv
    cdef double[::1] dv
    memset(&out, 0, sizeof(Counts))
    if _table_init(&t, 0 if learn else len(vocabulary)) < 0:
        _table_free(&t)
        raise MemoryError()
    try:
        kinds = <int*> malloc((n_docs + 1) * sizeof(int))
        texts = <void**> malloc((n_docs + 1) * sizeof(void*))
        lengths = <Py_ssize_t*> malloc((n_docs + 1) * sizeof(Py_ssize_t))
        if kinds == NULL or texts == NULL or lengths == NULL:
            raise MemoryError()
        for term in stop_words:
            _put(&t, term, STOP)
        if not learn:
            n_columns = len(vocabulary)
            for term, column in vocabulary.items():
                if not 0 <= column < n_columns:
                    raise ValueError(f"vocabulary maps {term!r} to column {column}; the "
                                     f"columns must be 0..{n_columns - 1}")
                _put(&t, term, <int32_t> column)
        for d in range(n_docs):
            doc = docs[d]
            if type(doc) is not str:
                raise TypeError(f"document {d} is a {type(doc).__name__}, expected str")
            kinds[d] = PyUnicode_KIND(doc)
            texts[d] = PyUnicode_DATA(doc)
            lengths[d] = PyUnicode_GET_LENGTH(doc)
            total += lengths[d]
        out.indptr = &indptr[0]
        # about one entry per 10 characters to start with; grown on demand
        if _grow(<void**> &out.indices, &out.cap, total // 10 + 16, sizeof(int32_t)) < 0:
            raise MemoryError()
        out.data = <double*> malloc(out.cap * sizeof(double))
        if out.data == NULL:
            raise MemoryError()
        with nogil:
            for d in range(n_docs):
                if kinds[d] == PyUnicode_1BYTE_KIND:
                    status = _scan(<uint8_t*> texts[d], lengths[d], &t, &out, &word,
                                   &word_cap, d, learn)
                elif kinds[d] == PyUnicode_2BYTE_KIND:
                    status = _scan(<uint16_t*> texts[d], lengths[d], &t, &out, &word,
                                   &word_cap, d, learn)
                else:
                    status = _scan(<uint32_t*> texts[d], lengths[d], &t, &out, &word,
                                   &word_cap, d, learn)
                if status < 0:
                    break
                out.indptr[d + 1] = out.nnz
            if status == 0 and learn:
                order = <int32_t*> malloc((t.n_terms if t.n_terms else 1) * sizeof(int32_t))
                status = -1 if order == NULL else _sort_terms(&t, &out, order)
            if status == 0:
                status = _sort_rows(&out, n_docs, t.n_terms if learn else n_columns)
        if status < 0:
            raise MemoryError()
        terms = None
        if learn:
            terms = []
            for d in range(t.n_terms):
                terms.append(PyUnicode_FromKindAndData(
                    PyUnicode_4BYTE_KIND, t.arena + t.term_offset[order[d]],
                    t.term_length[order[d]]))
        indices = np.empty(out.nnz, dtype=np.int32)
        data = np.empty(out.nnz, dtype=np.float64)
        if out.nnz:
            iv, dv = indices, data
            memcpy(&iv[0], out.indices, out.nnz * sizeof(int32_t))
            memcpy(&dv[0], out.data, out.nnz * sizeof(double))
        return terms, np.asarray(indptr), indices, data
    finally:
        _table_free(&t)
        free(out.last_doc)
        free(out.entry)
        free(out.indices)
        free(out.data)
        free(word)
        free(kinds)
        free(texts)
        free(lengths)
        free(order)
