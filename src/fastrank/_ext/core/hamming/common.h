/* The minimum Hamming distance of a test pattern over stored patterns, and the stored
   entries at it: the running minimum and the scan loops every path instantiates. */
#ifndef FR_HAMMING_COMMON_H
#define FR_HAMMING_COMMON_H

#include <stdint.h>

#include "../bits.h"
#include "../simd.h"

/* running minimum over one test pattern's distances: the minimum so far, and the
   entries at it (ties[0 .. k-1], ascending) */
typedef struct { uint32_t m; int64_t k; } fr_track;

/* d <= m: entry t joins the running minimum (m, k) */
#define FR_TRACK(d, t) do {                                                     \
        if ((d) <= m) {                                                         \
            if ((d) < m) { m = (d); k = 0; }                                    \
            ties[k++] = (int32_t) (t);                                          \
        } } while (0)

/* Distances of test pattern q (WW words) to train patterns t0 .. t1-1 of M, updating
   the running minimum r and its entry list ties. */
#define FR_SCAN_LOOP(WW)                                                        \
    int64_t t; int64_t j;                                                       \
    uint32_t m = r->m; int64_t k = r->k;                                        \
    for (t = t0; t < t1; t++) {                                                 \
        const uint64_t* p = M + t * (WW);                                       \
        uint32_t d = 0;                                                         \
        for (j = 0; j < (WW); j++) d += FR_POPCOUNT64(p[j] ^ q[j]);             \
        FR_TRACK(d, t);                                                         \
    }                                                                           \
    r->m = m; r->k = k;
/* Fixed widths: the test words are copied to locals, which the compiler keeps in
   registers once the fixed-length loops are unrolled. */
#define FR_SCAN_FIXED(WW, SFX, ATTR)                                              \
    ATTR static void fr_scan_##WW##SFX(const uint64_t* M, int64_t t0, int64_t t1, \
                             const uint64_t* c, int32_t* ties, fr_track* r)       \
    { uint64_t q[WW]; int i; for (i = 0; i < (WW); i++) q[i] = c[i];              \
      { FR_SCAN_LOOP(WW) } }
/* The scan of one path (fr_scan<SFX>): specialised widths and the generic one. */
#define FR_SCAN(SFX, ATTR)                                                      \
    FR_SCAN_FIXED(1, SFX, ATTR) FR_SCAN_FIXED(2, SFX, ATTR)                     \
    FR_SCAN_FIXED(4, SFX, ATTR) FR_SCAN_FIXED(8, SFX, ATTR)                     \
    FR_SCAN_FIXED(16, SFX, ATTR) FR_SCAN_FIXED(32, SFX, ATTR)                   \
    ATTR static void fr_scan##SFX(const uint64_t* M, int64_t t0, int64_t t1,    \
                                  const uint64_t* c, int64_t W, int32_t* ties,  \
                                  fr_track* r) {                                \
        switch (W) {                                                            \
        case 1: fr_scan_1##SFX(M, t0, t1, c, ties, r); return;                  \
        case 2: fr_scan_2##SFX(M, t0, t1, c, ties, r); return;                  \
        case 4: fr_scan_4##SFX(M, t0, t1, c, ties, r); return;                  \
        case 8: fr_scan_8##SFX(M, t0, t1, c, ties, r); return;                  \
        case 16: fr_scan_16##SFX(M, t0, t1, c, ties, r); return;                \
        case 32: fr_scan_32##SFX(M, t0, t1, c, ties, r); return;                \
        default: { const uint64_t* q = c; FR_SCAN_LOOP(W) }                     \
        } }

#endif
