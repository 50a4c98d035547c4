/* What the vector paths of the counting passes share (avx2-inl.h, avx512-inl.h). */
#ifndef FR_TIE_COUNTING_COMMON_INL_H
#define FR_TIE_COUNTING_COMMON_INL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../few_distinct.h"
#include "../simd.h"

/* The level counts of FR_LEVELS_GENERIC (the same counts) for contiguous rows, on one
   vector path: W values of type T to a vector VT, integer counter lanes IT, lane masks MT.
   Its operations: LOAD(p); LOAD_TAIL(k, p), the lanes of k = TAIL(r) (the first r) and
   zeros; ALL, every lane; SET1(v); COUNT(acc, k, a, w, PRED), acc plus one in the lanes
   of k where a PRED w; ZERO; SUM(acc), across lanes. WITH_EQ 0 counts the values at or
   above each level into gt (one comparison a level, eq left 0). Blocks of at most 2^30
   values: the lanes' sums cannot wrap. */
#define FR_LEVELS_VECTOR_STEP(COUNT, NL, WITH_EQ, A, K)                                   \
    do {                                                                                  \
        for (l = 0; l < NL; l++) {                                                        \
            g[l] = COUNT(g[l], K, A, w[l], WITH_EQ ? _CMP_GT_OQ : _CMP_GE_OQ);            \
            if (WITH_EQ)                                                                  \
                e[l] = COUNT(e[l], K, A, w[l], _CMP_EQ_OQ);                               \
        }                                                                                 \
        if (nan)                                                                          \
            lt = COUNT(lt, K, A, w[0], _CMP_LT_OQ);                                       \
    } while (0)
#define FR_LEVELS_VECTOR(ATTR, T, VT, IT, MT, W, LOAD, LOAD_TAIL, TAIL, ALL, SET1, COUNT, \
                         ZERO, SUM, NL, WITH_EQ, NAME)                                    \
    static ATTR void NAME(const T* x, ptrdiff_t m, const T* v, int64_t* gt, int64_t* eq,  \
                          int64_t* nan) {                                                 \
        int64_t gs[NL] = {0}, es[NL] = {0}, ls = 0;                                       \
        VT w[NL];                                                                         \
        ptrdiff_t j = 0;                                                                  \
        int l;                                                                            \
        for (l = 0; l < NL; l++)                                                          \
            w[l] = SET1(v[l]);                                                            \
        while (j < m) {                                                                   \
            ptrdiff_t stop = m - j > (1 << 30) ? j + (1 << 30) : m;                       \
            IT g[NL], e[NL], lt = ZERO;                                                   \
            for (l = 0; l < NL; l++)                                                      \
                g[l] = e[l] = ZERO;                                                       \
            for (; j + W <= stop; j += W) {                                               \
                VT a = LOAD(x + j);                                                       \
                FR_LEVELS_VECTOR_STEP(COUNT, NL, WITH_EQ, a, ALL);                        \
            }                                                                             \
            if (j < stop) {                                                               \
                MT tail = TAIL(stop - j);                                                 \
                VT a = LOAD_TAIL(tail, x + j);                                            \
                FR_LEVELS_VECTOR_STEP(COUNT, NL, WITH_EQ, a, tail);                       \
                j = stop;                                                                 \
            }                                                                             \
            for (l = 0; l < NL; l++) {                                                    \
                gs[l] += SUM(g[l]);                                                       \
                es[l] += SUM(e[l]);                                                       \
            }                                                                             \
            ls += SUM(lt);                                                                \
        }                                                                                 \
        for (l = 0; l < NL; l++) {                                                        \
            gt[l] = gs[l];                                                                \
            eq[l] = es[l];                                                                \
        }                                                                                 \
        if (nan)                                                                          \
            *nan = m - gs[0] - es[0] - ls;                                                \
    }

/* The r-th largest (r >= 1, with multiplicity) of the x[0:m] with lo < x < hi (x > lo
   alone when !bounded), walking the gap's distinct values down from its largest, one pass
   each: PASS() sets top to the largest value of the gap below the last one found and c to
   how often it occurs (every lane keeping its own largest value and count). Returns 1
   with *v <- it, *above <- the gap's values above it, *at <- those equal to it; 0 (the
   caller gathers the gap) after FR_GAP_WALK passes, or after a pass whose value was not
   tied (a gap of distinct values would take a pass for each of its r largest). On one
   vector path, of values of type T. */
#define FR_GAP_WALK 4
#define FR_GAP_TOP_VECTOR(ATTR, T, PASS, NAME)                                            \
    static ATTR int NAME(const T* x, ptrdiff_t m, T lo, T hi, int bounded, int64_t r,     \
                         T* v, int64_t* above, int64_t* at) {                             \
        int64_t n_above = 0, c;                                                           \
        int pass;                                                                         \
        T top;                                                                            \
        for (pass = 0; pass < FR_GAP_WALK; pass++) {                                      \
            PASS();                                                                       \
            if (!(top > lo)) /* an empty gap: only with NaN beliefs */                    \
                return 0;                                                                 \
            if (n_above + c >= r) {                                                       \
                *v = top;                                                                 \
                *above = n_above;                                                         \
                *at = c;                                                                  \
                return 1;                                                                 \
            }                                                                             \
            if (c < 2)                                                                    \
                return 0;                                                                 \
            n_above += c;                                                                 \
            hi = top;                                                                     \
            bounded = 1;                                                                  \
        }                                                                                 \
        return 0;                                                                         \
    }

/* The distinct values of x[0:m] above v (-0.0 == 0.0), while they are at most
   FR_FEW_DISTINCT: returns their number, seen[0:number] <- them; -1 once there are more
   (the caller counts another way). The values seen so far are kept in a table of 64
   slots, slot = SLOT(x) (few_distinct.h: fr_slot_f32, fr_slot_f64), a value that finds
   its slot taken in a short list of extras (a few at 21 values). UNSEEN() leaves the
   vector of x[j:j + W] in a and in left the bits of its lanes above v that neither their
   slot of the table nor an extra equals: a lookup and a few comparisons a vector, where a
   comparison with every seen value took one each. Those lanes join one by one, compared
   only with those that joined from the same vector. Few distinct values (ties) cost a
   dozen operations a vector, where a hash set costs a probe a label; a row of distinct
   values costs about three vectors' checks before the caller's hash set. On one vector
   path: W values of type T to a vector VT, stored to memory by STORE(p, a). */
#define FR_DISTINCT_ABOVE_VECTOR(ATTR, T, VT, W, STORE, SLOT, UNSEEN, NAME)               \
    static ATTR ptrdiff_t NAME(const T* x, ptrdiff_t m, T v, T* seen) {                   \
        T lane[W], table[64], extra[FR_FEW_DISTINCT];                                     \
        ptrdiff_t j, n = 0, i, l, old;                                                    \
        int n_extra = 0;                                                                  \
        unsigned s;                                                                       \
        for (i = 0; i < 64; i++)                                                          \
            table[i] = NAN;                                                               \
        for (j = 0; j < m; j += W) {                                                      \
            unsigned left;                                                                \
            VT a;                                                                         \
            UNSEEN();                                                                     \
            if (!left)                                                                    \
                continue;                                                                 \
            STORE(lane, a);                                                               \
            old = n; /* the unseen lanes, lowest first: new, unless one before had it */  \
            for (; left; left &= left - 1) {                                              \
                l = __builtin_ctz(left);                                                  \
                for (i = old; i < n && seen[i] != lane[l]; i++)                           \
                    ;                                                                     \
                if (i < n)                                                                \
                    continue;                                                             \
                if (n == FR_FEW_DISTINCT)                                                 \
                    return -1;                                                            \
                seen[n++] = lane[l];                                                      \
                s = SLOT(lane[l]);                                                        \
                if (table[s] == table[s])                                                 \
                    extra[n_extra++] = lane[l];                                           \
                else                                                                      \
                    table[s] = lane[l];                                                   \
            }                                                                             \
        }                                                                                 \
        return n;                                                                         \
    }

/* The bitwise OR of the eight truth bytes of w: a gather's *seen, from the OR of its words */
static inline unsigned fr_or_bytes(uint64_t w) {
    w |= w >> 32;
    w |= w >> 16;
    return (unsigned)((w | w >> 8) & 0xff);
}

/* FR_GATHER_VECTOR's next relevant label of a vector (bits rel, from label j0), its belief
   and label written at k whether or not there is one (the row's last label read then), k
   advanced when there is */
#define FR_GATHER_TAKE(WITH_VALUES)                                                       \
    do {                                                                                  \
        j = j0 + __builtin_ctzll(rel | (uint64_t) 1 << 63);                               \
        j = j < m ? j : m - 1;                                                            \
        if (WITH_VALUES)                                                                  \
            out[k] = (double) x[j];                                                       \
        if (labels != NULL)                                                               \
            labels[k] = (int32_t) j;                                                      \
        k += rel != 0;                                                                    \
        rel &= rel - 1;                                                                   \
    } while (0)

/* FR_GATHER (tie_counting.h: the same values, labels and *seen) for contiguous rows, on one
   vector path: the truth read BLOCK labels a vector VT (LOAD(p)), the non-zero bytes of t
   a mask (NONZERO(t)) whose set bits are the relevant labels (the last few labels' truth
   copied into a zeroed vector first): a vector of at most two writes both places
   (FR_GATHER_TAKE; out and labels hold m + 1 values), one of more copies each in a loop.
   At 1 % relevant labels a vector holds none or one, and a loop or branch on whether it
   holds one mispredicted about every other vector (copying every label of a cache line
   holding one, without a branch, took 1.1-1.3x the time); the one branch left, more than
   two, is rarely taken by a sparse row and mostly by a dense one. The truth is ORed into
   a vector (OR), its lanes ORed into a word (FOLD) for *seen; the row prefetched FR_AHEAD
   cache lines ahead, as there. labels may be NULL; without WITH_VALUES the labels alone
   (x and out not read: a row already in cache). Used for float32 rows: float64
   rows keep the portable loop, where this one made one-error, coverage and r-precision
   8-16 % slower (ranking loss 5-9 % faster) on a Zen 4 core, with prefetch distances from
   none to 48 lines giving 0.85-1.25x their time, in no order; not understood. */
#define FR_GATHER_VECTOR(ATTR, T, VT, BLOCK, ZERO, LOAD, NONZERO, OR, FOLD, WITH_VALUES,   \
                         NAME)                                                            \
    static ATTR ptrdiff_t NAME(const T* x, const uint8_t* y, ptrdiff_t m, double* out,    \
                               int32_t* labels, unsigned* seen) {                         \
        const ptrdiff_t line = 64 / sizeof(T);                                            \
        VT all = ZERO;                                                                    \
        ptrdiff_t j0, j, k = 0;                                                           \
        uint64_t rel;                                                                     \
        for (j0 = 0; (WITH_VALUES) && j0 < line * FR_AHEAD && j0 < m; j0 += line)         \
            FR_PREFETCH(x + j0);                                                          \
        for (j0 = 0; j0 < m; j0 += (BLOCK)) {                                             \
            VT t;                                                                         \
            if (m - j0 >= (BLOCK)) {                                                      \
                t = LOAD(y + j0);                                                         \
            } else { /* the last labels, zeros after them */                              \
                uint8_t tail[BLOCK] = {0};                                                \
                memcpy(tail, y + j0, (size_t) (m - j0));                                  \
                t = LOAD(tail);                                                           \
            }                                                                             \
            for (j = j0; (WITH_VALUES) && j < j0 + (BLOCK) && j + line * FR_AHEAD < m;   \
                 j += line)                                                               \
                FR_PREFETCH(x + j + line * FR_AHEAD);                                     \
            all = OR(all, t);                                                             \
            rel = NONZERO(t);                                                             \
            if (__builtin_popcountll(rel) <= 2) { /* both places written, no branch */    \
                FR_GATHER_TAKE(WITH_VALUES);                                              \
                FR_GATHER_TAKE(WITH_VALUES);                                              \
                continue;                                                                 \
            }                                                                             \
            for (; rel; rel &= rel - 1) {                                                 \
                j = j0 + __builtin_ctzll(rel);                                            \
                if (WITH_VALUES)                                                          \
                    out[k] = (double) x[j];                                               \
                if (labels != NULL)                                                       \
                    labels[k] = (int32_t) j;                                              \
                k++;                                                                      \
            }                                                                             \
        }                                                                                 \
        *seen = fr_or_bytes(FOLD(all));                                                   \
        return k;                                                                         \
    }

/* fr_distinct_keys (tie_counting.h) from the comparisons of each of the n <= 16 keys with
   all of them: bit j of below[i] set when keys[j] < keys[i], of same[i] when keys[j] ==
   keys[i]. A key is its value's first when no earlier key equals it; its rank among those
   firsts below it is its place in out. */
static inline ptrdiff_t fr_distinct_from_masks(const uint64_t* keys, ptrdiff_t n,
                                               const uint16_t* below, const uint16_t* same,
                                               uint64_t* out, int64_t* count) {
    unsigned first = 0;
    ptrdiff_t i, r, d = 0;
    for (i = 0; i < n; i++)
        first |= (unsigned) ((same[i] & ((1u << i) - 1)) == 0) << i;
    for (i = 0; i < n; i++) {
        r = __builtin_popcount(below[i] & first);
        out[r] = keys[i]; /* a repeated key writes its first one's slot again */
        count[r] = __builtin_popcount(same[i]);
        d += first >> i & 1;
    }
    return d;
}

#endif
