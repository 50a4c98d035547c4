# cython: language_level=3
"""Shared, header-only core: sort one row of beliefs in descending order and find its tie groups.

Every kernel that ranks (ranking, metrics, ROC) cimports these inline functions, so there is
exactly one sort implementation and each row is sorted once.

Conventions
-----------
* Scores become 64-bit keys whose unsigned order is the *descending* order of the floats;
  equal floats (including -0.0 == +0.0) give equal keys, so "tied" means "equal key".
  float32 scores are widened to double first (exact), so both dtypes share the keys.
* The sort is stable: inside a tie group labels keep ascending label index ("stable" order).
  LSD radix sort on bytes, skipping bytes that are constant over the row; insertion sort for
  short rows; a counting sort for rows of at most FEW_MAX distinct scores (a contiguous
  float32 row of at most 32, on AVX2 or AVX-512, has its distinct scores found a vector at
  a time: few_distinct.h).
* NaN is rejected by the Python layer, before a kernel runs or, for a kernel that reports
  ``SortWork.nan_seen``, after it: a NaN gets a key like any other value (a CSR row's with
  the stored positives), so a row holding one is sorted safely, to no purpose.
* Randomness (ordinal ranks) comes from a counter-based generator seeded per row
  (splitmix64 of base seed and row index), so results never depend on the thread count;
  each tie group's numbers follow from its first step's index (shuffle_group), so a kernel
  shuffles only the groups it reads, with the bits of the whole row's shuffle.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from fastrank._ext._simd cimport current_level

ctypedef fused floating:
    float
    double

ctypedef fused index_t:
    int32_t
    int64_t

cdef enum:
    INSERTION_MAX = 32  # rows this short are insertion-sorted
    FEW_MAX = 64        # rows with at most this many distinct scores are counting-sorted
    FEW_BITS = 8        # hash table of 2**FEW_BITS slots (load <= 1/4)

cdef extern from *:
    """
    /* an empty slot of the counting sort's table: the key of a NaN (all bits set), never
       of a number */
    #define FR_EMPTY_KEY UINT64_MAX
    """
    const uint64_t EMPTY_KEY "FR_EMPTY_KEY"

cdef extern from "few_distinct.h" nogil:
    enum: FR_FEW_DISTINCT
    enum: FR_INDEX_NUMBERS
    enum: FR_INDEX_SLACK
    ctypedef struct fr_few_memo_f32:
        pass
    void fr_few_memo_clear(fr_few_memo_f32* t)
    Py_ssize_t fr_distinct_index_f32(int level, fr_few_memo_f32* memo, const float* x,
                                     Py_ssize_t m, uint8_t* index, int32_t* numbers,
                                     float* values, int64_t* counts)
    Py_ssize_t fr_distinct_index_f64(int level, fr_few_memo_f32* memo, const double* x,
                                     Py_ssize_t m, float* narrow, uint8_t* index,
                                     int32_t* numbers, float* values, int64_t* counts)

cdef struct SortWork:
    # per-thread scratch for rows of q labels; allocate inside the parallel block so that
    # each thread gets its own (a pointer assigned there is thread-private in Cython)
    # (order, keys and order_tmp hold q + 16 values: the gathers of relevant labels
    # write past their last one, fr_relevant_labels whole vectors)
    int32_t* order      # labels by descending score after a sort
    int32_t* end        # tie-group ends after group_ends()
    uint64_t* keys      # sorted keys, position-aligned with `order`
    uint64_t* keys_tmp
    int32_t* order_tmp
    uint32_t* hist      # 8 byte-histograms of 256 counters
    unsigned char* mark  # q flags, all zero between calls (CSR zero-group scan)
    # few-distinct path: open-addressing table key -> count (count 0 = empty slot)
    uint64_t* tab_key
    int32_t* tab_count
    int32_t* slot_of    # q: table slot of each input element (FR_INDEX_SLACK bytes more)
    uint64_t few_key[FEW_MAX]
    int32_t few_slot[FEW_MAX]
    fr_few_memo_f32* memo  # a float32 row's few distinct values, kept for the next row
    # the last row sorted by numbering its values (_few_distinct_sort_f32, or numbered
    # alone by tie_metrics' evaluate): slot_of holds each label's number as a byte,
    # group_start each number's first position, group_number the numbers by descending
    # value (n_groups of them)
    bint numbered
    int32_t group_start[FR_INDEX_NUMBERS]
    int32_t group_number[FR_FEW_DISTINCT]
    int n_groups
    bint nan_seen       # a row sorted with this scratch held a NaN score
    int level           # the instruction-set level (_simd.current_level) of its passes


cdef inline SortWork* sort_work_new(Py_ssize_t q) noexcept nogil:
    """Scratch for rows of q labels, or NULL when out of memory."""
    cdef SortWork* w = <SortWork*> calloc(1, sizeof(SortWork))
    if w == NULL:
        return NULL
    w.level = current_level()
    w.order = <int32_t*> malloc((q + 16) * sizeof(int32_t))
    w.end = <int32_t*> malloc(q * sizeof(int32_t))
    w.keys = <uint64_t*> malloc((q + 16) * sizeof(uint64_t))
    w.keys_tmp = <uint64_t*> malloc(q * sizeof(uint64_t))
    w.order_tmp = <int32_t*> malloc((q + 16) * sizeof(int32_t))
    w.hist = <uint32_t*> malloc(8 * 256 * sizeof(uint32_t))
    w.mark = <unsigned char*> calloc(q, 1)
    w.tab_key = <uint64_t*> malloc((1 << FEW_BITS) * sizeof(uint64_t))
    if w.tab_key != NULL:
        memset(w.tab_key, 0xFF, (1 << FEW_BITS) * sizeof(uint64_t))  # every slot EMPTY_KEY
    w.tab_count = <int32_t*> calloc(1 << FEW_BITS, sizeof(int32_t))
    w.slot_of = <int32_t*> calloc(q * sizeof(int32_t) + FR_INDEX_SLACK, 1)
    w.memo = <fr_few_memo_f32*> malloc(sizeof(fr_few_memo_f32))
    if w.order == NULL or w.end == NULL or w.keys == NULL or w.keys_tmp == NULL \
            or w.order_tmp == NULL or w.hist == NULL or w.mark == NULL or w.tab_key == NULL \
            or w.tab_count == NULL or w.slot_of == NULL or w.memo == NULL:
        sort_work_free(w)
        return NULL
    fr_few_memo_clear(w.memo)
    return w


cdef inline void sort_work_free(SortWork* w) noexcept nogil:
    if w == NULL:
        return
    free(w.order)
    free(w.end)
    free(w.keys)
    free(w.keys_tmp)
    free(w.order_tmp)
    free(w.hist)
    free(w.mark)
    free(w.tab_key)
    free(w.tab_count)
    free(w.slot_of)
    free(w.memo)
    free(w)


cdef inline uint64_t belief_bits(double x) noexcept nogil:
    """The bits of x, with -0.0 made +0.0."""
    cdef uint64_t u
    x = x + 0.0
    memcpy(&u, &x, 8)
    return u


cdef inline uint64_t key_of_bits(uint64_t u) noexcept nogil:
    """desc_key from belief_bits: negative, u itself (an ascending key would be ~u;
    descending is its complement); positive, ~(u | sign bit), u with its 63 low bits
    flipped -- no branch, so that the loops making keys run in vector lanes (u >> 63 is 1
    for a negative: the mask is 0)."""
    return u ^ (((u >> 63) - 1) & <uint64_t> 0x7FFFFFFFFFFFFFFF)


cdef inline uint64_t nan_sign(uint64_t u) noexcept nogil:
    """Bit 63 set iff belief_bits u is a NaN (magnitude bits above infinity's): an OR of
    these tests a row with 64-bit integer arithmetic, which vectorizes on every x86-64,
    where an OR of `v != v` over doubles does not (GCC keeps such a loop scalar on SSE2)."""
    return <uint64_t> 0x7FF0000000000000 - (u & <uint64_t> 0x7FFFFFFFFFFFFFFF)


cdef inline uint64_t desc_key(double x) noexcept nogil:
    """Unsigned key: key(a) < key(b)  <=>  a > b;  key(a) == key(b)  <=>  a == b."""
    return key_of_bits(belief_bits(x))


cdef inline Py_ssize_t group_ends(const uint64_t* keys, Py_ssize_t q,
                                  int32_t* end) noexcept nogil:
    """end[p] <- exclusive end position of the tie group holding position p (keys sorted).
    Returns the number of tie groups."""
    cdef Py_ssize_t p, stop = q, n_groups = 0
    for p in range(q - 1, -1, -1):
        if p < q - 1 and keys[p] != keys[p + 1]:
            stop = p + 1
            n_groups += 1
        end[p] = <int32_t> stop
    return n_groups + 1


cdef inline void _radix_sort(uint64_t* keys, int32_t* order, Py_ssize_t q,
                             SortWork* w) noexcept nogil:
    """Stable sort of (keys, order) by keys ascending, result left in keys/order."""
    cdef Py_ssize_t p, b, j
    cdef uint32_t* h
    cdef uint32_t total, c
    cdef uint64_t* src_k = keys
    cdef uint64_t* dst_k = w.keys_tmp
    cdef int32_t* src_o = order
    cdef int32_t* dst_o = w.order_tmp
    cdef uint64_t* tk
    cdef int32_t* to
    cdef uint64_t k
    cdef uint32_t* hist = w.hist  # (a local: a store might alias w's fields otherwise)
    memset(hist, 0, 8 * 256 * sizeof(uint32_t))
    for p in range(q):
        k = keys[p]
        for b in range(8):
            hist[b * 256 + ((k >> (8 * b)) & 255)] += 1
    for b in range(8):
        h = hist + b * 256
        if h[(keys[0] >> (8 * b)) & 255] == q:
            continue  # this byte is the same in every key: the pass would not move anything
        total = 0
        for j in range(256):
            c = h[j]
            h[j] = total
            total += c
        for p in range(q):
            k = src_k[p]
            j = (k >> (8 * b)) & 255
            dst_k[h[j]] = k
            dst_o[h[j]] = src_o[p]
            h[j] += 1
        tk = src_k
        src_k = dst_k
        dst_k = tk
        to = src_o
        src_o = dst_o
        dst_o = to
    if src_k != keys:
        memcpy(keys, src_k, q * sizeof(uint64_t))
        memcpy(order, src_o, q * sizeof(int32_t))


cdef inline void _insertion_sort(uint64_t* keys, int32_t* order, Py_ssize_t q) noexcept nogil:
    cdef Py_ssize_t p, j
    cdef uint64_t k
    cdef int32_t o
    for p in range(1, q):
        k = keys[p]
        o = order[p]
        j = p - 1
        while j >= 0 and keys[j] > k:
            keys[j + 1] = keys[j]
            order[j + 1] = order[j]
            j -= 1
        keys[j + 1] = k
        order[j + 1] = o


cdef inline void _few_table_clear(SortWork* w, Py_ssize_t n_distinct) noexcept nogil:
    """Empty the counting sort's table slots of the n_distinct keys found so far."""
    cdef Py_ssize_t d
    for d in range(n_distinct):
        w.tab_count[w.few_slot[d]] = 0
        w.tab_key[w.few_slot[d]] = EMPTY_KEY


cdef inline bint _few_distinct_sort(uint64_t* keys, int32_t* order, Py_ssize_t q,
                                    SortWork* w, int32_t* end, bint identity) noexcept nogil:
    """Stable counting sort when the row has at most FEW_MAX distinct keys (heavy ties):
    count keys in a small hash table, sort the distinct keys, scatter; with ``end`` not
    NULL, also its tie-group ends (group_ends), written with the sorted keys. With
    ``identity``, order is taken to be 0..q-1 and not read (nor written when it returns
    False). Returns False (and leaves keys/order untouched) as soon as a (FEW_MAX+1)-th
    distinct key shows up.
    (The scratch arrays are read into locals: a store through one may alias w's fields
    otherwise, which then would be loaded again after every store.)"""
    cdef Py_ssize_t p, d, n_distinct = 0
    cdef uint64_t k
    cdef uint32_t slot, mask = (1 << FEW_BITS) - 1
    cdef int32_t total, c
    cdef uint64_t* tab_key = w.tab_key
    cdef int32_t* tab_count = w.tab_count
    cdef int32_t* slot_of = w.slot_of
    cdef int32_t* order_tmp = w.order_tmp
    cdef uint64_t* few_key = w.few_key
    cdef int32_t* few_slot = w.few_slot
    for p in range(q):
        k = keys[p]
        slot = <uint32_t> ((k * <uint64_t> 0x9E3779B97F4A7C15) >> (64 - FEW_BITS))
        while tab_key[slot] != k:  # (the probe reads keys alone, not the counts it adds to)
            if tab_key[slot] == EMPTY_KEY:
                if n_distinct == FEW_MAX:
                    _few_table_clear(w, n_distinct)
                    return False
                tab_key[slot] = k
                few_key[n_distinct] = k
                few_slot[n_distinct] = <int32_t> slot
                n_distinct += 1
                break
            slot = (slot + 1) & mask
        if k == EMPTY_KEY:  # a NaN's key: the radix sort takes the row (and reports it)
            _few_table_clear(w, n_distinct)
            return False
        tab_count[slot] += 1
        slot_of[p] = <int32_t> slot
    _insertion_sort(few_key, few_slot, n_distinct)
    total = 0
    for d in range(n_distinct):  # table count -> first output position of that key
        c = tab_count[few_slot[d]]
        tab_count[few_slot[d]] = total
        total += c
    if identity:  # scattered straight into place
        for p in range(q):
            c = tab_count[slot_of[p]]
            tab_count[slot_of[p]] = c + 1
            order[c] = <int32_t> p
    else:
        for p in range(q):
            c = tab_count[slot_of[p]]
            tab_count[slot_of[p]] = c + 1
            order_tmp[c] = order[p]
        memcpy(order, order_tmp, q * sizeof(int32_t))
    # sorted keys are each distinct key repeated by its count: written, not scattered
    p = 0
    for d in range(n_distinct):
        total = tab_count[few_slot[d]]  # now the end position of key d
        tab_count[few_slot[d]] = 0
        tab_key[few_slot[d]] = EMPTY_KEY
        k = few_key[d]
        if end != NULL:
            while p < total:
                keys[p] = k
                end[p] = total
                p += 1
        else:
            while p < total:
                keys[p] = k
                p += 1
    return True


cdef inline void sort_keys(uint64_t* keys, int32_t* order, Py_ssize_t q,
                           SortWork* w) noexcept nogil:
    """Stable ascending sort of (keys, order) by keys, in place."""
    if q <= INSERTION_MAX:
        _insertion_sort(keys, order, q)
    elif not _few_distinct_sort(keys, order, q, w, NULL, False):
        _radix_sort(keys, order, q, w)


cdef inline void _sort_keys_ends(uint64_t* keys, int32_t* order, Py_ssize_t q,
                                 SortWork* w) noexcept nogil:
    """sort_keys of (keys, 0..q-1), order written here (not read), then w.end <- the
    tie-group ends (group_ends): the counting sort writes them with its keys, the others
    find them by a pass over the sorted keys."""
    cdef Py_ssize_t j
    if q > INSERTION_MAX and _few_distinct_sort(keys, order, q, w, w.end, True):
        return
    for j in range(q):
        order[j] = <int32_t> j
    if q <= INSERTION_MAX:
        _insertion_sort(keys, order, q)
    else:
        _radix_sort(keys, order, q, w)
    group_ends(keys, q, w.end)


cdef inline bint _few_distinct_sort_f32(const float* row, Py_ssize_t q,
                                        SortWork* w) noexcept nogil:
    """sort_dense_row of a contiguous float32 row holding at most FR_FEW_DISTINCT distinct
    beliefs and no NaN, by counting: each label's distinct belief found a vector at a time
    (fr_distinct_index_f32, AVX2 and up, in a table kept from row to row: w.memo) with
    their counts, by descending belief, the labels scattered straight into place (two
    streams, from the row's two ends: one alone waited on its own stores). False (nothing
    written) for another row or on another path. The same order, keys and group
    ends as _few_distinct_sort: its hash probe and the keys of every label were two thirds
    of that sort."""
    cdef Py_ssize_t p, d, n
    cdef int32_t c, total
    cdef uint8_t* index = <uint8_t*> w.slot_of
    cdef int32_t* order = w.order
    cdef uint64_t* keys = w.keys
    cdef int32_t* end = w.end
    cdef float values[FR_FEW_DISTINCT]
    cdef int64_t counts[FR_FEW_DISTINCT]
    cdef int32_t numbers[FR_FEW_DISTINCT]
    cdef int32_t at[FR_INDEX_NUMBERS]    # by index number: the next output position,
    cdef int32_t back[FR_INDEX_NUMBERS]  # and the last one filled from the back
    cdef uint64_t k
    n = fr_distinct_index_f32(w.level, w.memo, row, q, index, numbers, values, counts)
    if n < 0:
        return False
    total = 0
    for d in range(n):  # each value's first and past-last output positions (descending)
        at[numbers[d]] = total
        w.group_start[numbers[d]] = total
        w.group_number[d] = numbers[d]
        total += <int32_t> counts[d]
        back[numbers[d]] = total
    for p in range((q + 1) // 2):  # the first half from the front, the last from the back
        c = at[index[p]]
        at[index[p]] = c + 1
        order[c] = <int32_t> p
        if q - 1 - p > p:
            c = back[index[q - 1 - p]] - 1
            back[index[q - 1 - p]] = c
            order[c] = <int32_t> (q - 1 - p)
    p = 0
    for d in range(n):  # each value's key and group end over its positions
        total = <int32_t> (p + counts[d])
        k = desc_key(<double> values[d])
        while p < total:
            keys[p] = k
            end[p] = total
            p += 1
    w.n_groups = <int> n
    w.numbered = True
    return True


cdef inline void sort_dense_row(const floating* row, Py_ssize_t stride, Py_ssize_t q,
                                SortWork* w) noexcept nogil:
    """w.order <- labels 0..q-1 by descending row[j*stride], ties by ascending j;
    w.keys[p] <- the key of the label at position p; w.end <- tie-group ends."""
    cdef Py_ssize_t j
    cdef int32_t* order = w.order
    cdef uint64_t* keys = w.keys
    cdef uint64_t u, nan = 0
    w.numbered = False
    if floating is float:
        if stride == 1 and q > INSERTION_MAX and _few_distinct_sort_f32(row, q, w):
            return
    for j in range(q):
        u = belief_bits(<double> row[j * stride])
        nan |= nan_sign(u)
        keys[j] = key_of_bits(u)
    w.nan_seen |= (nan >> 63) != 0
    _sort_keys_ends(keys, order, q, w)


cdef inline void sort_csr_row(const floating* data, const index_t* indices, Py_ssize_t nnz,
                              Py_ssize_t q, SortWork* w) noexcept nogil:
    """As sort_dense_row for one CSR row (canonical: sorted, unique indices); implicit zeros
    and stored zeros form one tie group, filled by one scan over the columns, not sorted."""
    cdef Py_ssize_t p, j, n_pos = 0, n_neg = 0, n_zero, pos
    cdef int32_t* order = w.order
    cdef uint64_t* keys = w.keys
    cdef unsigned char* mark = w.mark
    cdef double v
    cdef uint64_t zkey = desc_key(0.0)
    w.numbered = False
    # stored non-zeros: positives (and NaN, a stored non-zero too) to the front of keys,
    # negatives after them
    for p in range(nnz):
        v = <double> data[p]
        if v > 0.0 or v != v:
            w.nan_seen |= v != v
            keys[n_pos] = desc_key(v)
            order[n_pos] = <int32_t> indices[p]
            n_pos += 1
    for p in range(nnz):
        v = <double> data[p]
        if v < 0.0:
            keys[n_pos + n_neg] = desc_key(v)
            order[n_pos + n_neg] = <int32_t> indices[p]
            n_neg += 1
    sort_keys(keys, order, n_pos, w)
    sort_keys(keys + n_pos, order + n_pos, n_neg, w)
    n_zero = q - n_pos - n_neg
    if n_zero == 0:
        group_ends(keys, q, w.end)
        return
    # move negatives to the tail, then fill the zero group in label order
    for p in range(n_neg - 1, -1, -1):
        keys[q - n_neg + p] = keys[n_pos + p]
        order[q - n_neg + p] = order[n_pos + p]
    for p in range(nnz):
        if data[p] != 0:
            mark[indices[p]] = 1
    pos = n_pos
    for j in range(q):
        if mark[j]:
            mark[j] = 0
        else:
            keys[pos] = zkey
            order[pos] = <int32_t> j
            pos += 1
    group_ends(keys, q, w.end)


cdef inline void sort_csr_row_at(const floating* data, const index_t* indices,
                                 const index_t* indptr, Py_ssize_t i, Py_ssize_t q,
                                 SortWork* w) noexcept nogil:
    """sort_csr_row for row i of a canonical CSR matrix given by pointers to its three
    arrays (take them once per call: memoryviews per row would cost an atomic each)."""
    cdef Py_ssize_t lo = indptr[i], nnz = indptr[i + 1] - indptr[i]
    if nnz > 0:
        sort_csr_row(data + lo, indices + lo, nnz, q, w)
    else:  # data + lo is not formed for an empty row (lo may equal len(data))
        sort_csr_row(<floating*> NULL, <index_t*> NULL, 0, q, w)


cdef extern from "prefetch.h" nogil:
    void fr_prefetch_bytes(const void* p, size_t n)


cdef inline void prefetch_row_at(const floating* values, Py_ssize_t row_stride,
                                 Py_ssize_t col_stride, const index_t* indptr, Py_ssize_t i,
                                 Py_ssize_t q) noexcept nogil:
    """Ask for row i of a dense matrix with contiguous rows (as sort_row_at takes it) in the
    cache, a row ahead of its sort: a row of 4 KB starts a new page, where the hardware
    prefetcher stops. CSR and strided rows are left to the hardware."""
    if indptr == NULL and col_stride == 1:
        fr_prefetch_bytes(values + i * row_stride, q * sizeof(floating))


cdef inline void sort_row_at(const floating* values, Py_ssize_t row_stride,
                             Py_ssize_t col_stride, const index_t* indices,
                             const index_t* indptr, Py_ssize_t i, Py_ssize_t q,
                             SortWork* w) noexcept nogil:
    """Sort row i of either input kind, so one kernel serves both: a dense matrix (values =
    its flat buffer, element strides row_stride/col_stride, indptr NULL) or a canonical CSR
    matrix (values = data, with indices and indptr; strides unused)."""
    if indptr == NULL:
        sort_dense_row(values + i * row_stride, col_stride, q, w)
    else:
        sort_csr_row_at(values, indices, indptr, i, q, w)


# ---- randomness: counter-based, per row -------------------------------------------------

cdef extern from "shuffle.h" nogil:
    const uint64_t SPLITMIX_GAMMA "FR_SPLITMIX_GAMMA"
    uint64_t splitmix64 "fr_splitmix64"(uint64_t* state)
    Py_ssize_t step_index "fr_step_index"(uint32_t x, Py_ssize_t size, uint64_t row,
                                          Py_ssize_t step)


cdef inline uint64_t row_state(uint64_t base_seed, Py_ssize_t row) noexcept nogil:
    """Independent generator state for one row, from one base seed."""
    cdef uint64_t s = base_seed ^ (<uint64_t> row * <uint64_t> 0xD1B54A32D192ED03)
    return splitmix64(&s)


cdef inline uint32_t bounded(uint64_t* state, uint32_t s) noexcept nogil:
    """Uniform integer in [0, s), s >= 1, from the stream ``state`` (Lemire 2019:
    multiply-shift, rejecting the few low products that would bias it)."""
    cdef uint64_t m = (splitmix64(state) >> 32) * <uint64_t> s
    cdef uint32_t t
    if <uint32_t> m < s:
        t = (<uint32_t> (-s)) % s
        while <uint32_t> m < t:
            m = (splitmix64(state) >> 32) * <uint64_t> s
    return <uint32_t> (m >> 32)


cdef inline void _swap_step(int32_t* order, Py_ssize_t m, uint32_t x, uint64_t row,
                            Py_ssize_t step) noexcept nogil:
    """Step ``step`` of the row's shuffle on order[:m]: swap its last position with the one
    step_index draws from the random bits x."""
    cdef Py_ssize_t j = step_index(x, m, row, step)
    cdef int32_t v = order[m - 1]
    order[m - 1] = order[j]
    order[j] = v


cdef inline void shuffle_group(int32_t* order, Py_ssize_t start, Py_ssize_t m, uint64_t row,
                               Py_ssize_t step) noexcept nogil:
    """Uniformly random order of the tie group at positions start .. start + m - 1
    (Fisher-Yates from its last position down), whose first step is step ``step`` of the
    row's shuffle. Step k takes the high half of the row's k // 2-th number when k is even,
    its low half when odd, the numbers splitmix64's from ``row`` (row_state) on: a group's
    numbers follow from ``step`` alone, so the groups can be shuffled in any order, or
    some not at all (or followed for a few labels: follow.h)."""
    cdef uint64_t state = row + <uint64_t> (step >> 1) * SPLITMIX_GAMMA
    cdef uint64_t bits
    order += start
    if step & 1 and m > 1:
        bits = splitmix64(&state)
        _swap_step(order, m, <uint32_t> bits, row, step)
        m -= 1
        step += 1
    while m > 2:
        bits = splitmix64(&state)
        _swap_step(order, m, <uint32_t> (bits >> 32), row, step)
        _swap_step(order, m - 1, <uint32_t> bits, row, step + 1)
        m -= 2
        step += 2
    if m == 2:
        bits = splitmix64(&state)
        _swap_step(order, 2, <uint32_t> (bits >> 32), row, step)


cdef inline void shuffle_groups(int32_t* order, const int32_t* end, Py_ssize_t q,
                                uint64_t row) noexcept nogil:
    """Uniformly random order inside every tie group (shuffle_group; ``row`` from
    row_state): a group of m labels takes m - 1 steps, in order of position."""
    cdef Py_ssize_t start = 0, stop, groups = 0
    while start < q:
        stop = end[start]
        if stop - start > 1:
            shuffle_group(order, start, stop - start, row, start - groups)
        groups += 1
        start = stop


# ---- ranks of one sorted row ------------------------------------------------------------

# ranking method codes (tie_ranks.METHODS names them; the C API's FASTRANK_RANK_* equal them)
cdef enum:
    ORDINAL = 0
    STABLE = 1
    DENSE = 2
    STANDARD = 3
    MODIFIED = 4
    FRACTIONAL = 5
    GROUPS = 6


cdef inline void emit_row(int32_t* order, const int32_t* end, Py_ssize_t q, int method,
                          uint64_t seed, Py_ssize_t row, int32_t* out_int, double* out_frac,
                          int32_t* out_end, int32_t* out_start) noexcept nogil:
    """Write one sorted row (order + tie-group ends), global row number ``row``, to the
    outputs of ``method`` (each q values; out_frac for FRACTIONAL only, out_end and
    out_start for GROUPS only, which writes the labels in sorted order to out_int)."""
    cdef Py_ssize_t p, start = 0, stop, group = 0
    if method == GROUPS:
        while start < q:
            stop = end[start]
            for p in range(start, stop):
                out_int[p] = order[p]
                out_end[p] = <int32_t> stop
                out_start[p] = <int32_t> start
            start = stop
        return
    if method == ORDINAL:
        shuffle_groups(order, end, q, row_state(seed, row))
    if method == ORDINAL or method == STABLE:
        for p in range(q):
            out_int[order[p]] = <int32_t> (p + 1)
        return
    while start < q:
        stop = end[start]
        group += 1
        for p in range(start, stop):
            if method == DENSE:
                out_int[order[p]] = <int32_t> group
            elif method == STANDARD:
                out_int[order[p]] = <int32_t> (start + 1)
            elif method == MODIFIED:
                out_int[order[p]] = <int32_t> stop
            else:
                out_frac[order[p]] = 0.5 * (start + 1 + stop)
        start = stop
