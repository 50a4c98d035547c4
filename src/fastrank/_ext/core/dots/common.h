/* Dot products in one fixed order, whatever the path: what the paths share. */
#ifndef FR_DOTS_COMMON_H
#define FR_DOTS_COMMON_H

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
#define FR_DOTS_TILE_BYTES 131072
/* base rows per tile: about FR_DOTS_TILE_BYTES, a multiple of 24 (of every block width) */
#define FR_DOTS_TILE(T, d) \
    ((int64_t) (FR_DOTS_TILE_BYTES / (((d) > 0 ? (d) : 1) * (int64_t) sizeof(T))) / 24 * 24)

/* float32 at few features (up to FR_PANEL_D, where they were measured faster than the
   kernels on rows at 10^3 base rows, and than the packed rows at 10^3-10^5 rows on Zen 4,
   AVX2 and AVX-512: 0.78-0.97x the time at 160 and 192 features): W base rows in the lanes of a vector, their
   features packed one vector each (a panel), so that partial sum l of W dot products is
   one chain of fused multiply-adds (the query's feature broadcast) and the 8 chains add
   up lane by lane in the order of FR_SUM8: no sum across lanes, which at few features
   costs about as much as the products. The same fma chains and additions as the other
   kernels: the same bits. */
#define FR_PANEL_D 192
#define FR_PANEL_TILE_BYTES 16384
/* Partial sums L (P) and L + 1 (Q), both started at zero, of a kernel's query rows (a,
   row stride d) with 2 panels of W rows (pb, panel stride ps): the two chains advance
   together (features L + 8 t and L + 1 + 8 t), STEP(P, y0, y1, f) adding feature f of
   the two panels (y0, y1) to P; chain L's last feature alone where it has one more. Each
   panel vector is loaded once for all the query rows (an empty asm statement keeps the
   compiler from folding a load into every fma). */
#define FR_PANEL_PAIR(LOAD, W, STEP, P, Q, L)                                             \
    for (f = (L), y = pb + (W) * (L); f + 1 < d; f += 8, y += 8 * (W)) {                 \
        y0 = LOAD(y), y1 = LOAD(y + ps), y2 = LOAD(y + (W)), y3 = LOAD(y + ps + (W));     \
        __asm__("" : "+v"(y0), "+v"(y1), "+v"(y2), "+v"(y3));                             \
        STEP(P, y0, y1, f) STEP(Q, y2, y3, f + 1)                                         \
    }                                                                                     \
    if (f < d) {                                                                          \
        y0 = LOAD(y), y1 = LOAD(y + ps);                                                  \
        STEP(P, y0, y1, f)                                                                \
    }
/* s (mq x mb) by panels: tiles of about FR_PANEL_TILE_BYTES of base rows, packed by
   fr_pack_panels (dots/avx2-inl.h; they stay in L1: larger tiles read from L2 were up to
   20 % slower), that every QR query rows of the block pass over, 2 panels per call of
   KERNEL(a, d, pb, ps, s, ss) (QR x 2 W dot products: query rows a, panels pb and
   pb + ps, outputs s with row stride ss); the last mq % QR query rows padded with zero
   rows, the outputs of a last panel's padding or of padded query rows left in a scratch
   block. -1 when out of memory. */
#define FR_DOTS_PANELS(NAME, ATTR, W, QR, KERNEL)                                           \
    ATTR static int NAME(const float* q, const float* b, float* s, int64_t mq, int64_t mb,  \
                         int64_t d) {                                                       \
        int64_t nt = FR_PANEL_TILE_BYTES / (4 * d) / (2 * (W)) * (2 * (W)), j0, j1, r, l, u; \
        int64_t left = mq % (QR), cols;                                                     \
        float *pk, *pad, rest[(QR) * 2 * (W)];                                              \
        const float* a;                                                                     \
        if (nt < 2 * (W)) nt = 2 * (W);                                                     \
        pk = (float*) malloc((size_t) (nt + (QR)) * d * sizeof(float));                     \
        if (pk == NULL) return -1;                                                          \
        pad = pk + nt * d;                                                                  \
        memset(pad, 0, (size_t) (QR) * d * sizeof(float));                                  \
        memcpy(pad, q + (mq - left) * d, (size_t) left * d * sizeof(float));                \
        for (j0 = 0; j0 < mb; j0 += nt) {                                                   \
            j1 = j0 + nt < mb ? j0 + nt : mb;                                               \
            fr_pack_panels(b + j0 * d, j1 - j0, d, (W), pk);                                \
            for (r = 0; r < mq; r += (QR)) {                                                \
                a = r + (QR) <= mq ? q + r * d : pad;                                       \
                for (l = 0; l < j1 - j0; l += 2 * (W)) {                                    \
                    cols = j1 - j0 - l < 2 * (W) ? j1 - j0 - l : 2 * (W);                   \
                    if (cols == 2 * (W) && a != pad) {                                      \
                        KERNEL(a, d, pk + l * d, (W) * d, s + r * mb + j0 + l, mb);         \
                        continue;                                                           \
                    }                                                                       \
                    KERNEL(a, d, pk + l * d, (W) * d, rest, 2 * (W));                       \
                    for (u = 0; u < (QR) && r + u < mq; u++)                                \
                        memcpy(s + (r + u) * mb + j0 + l, rest + u * 2 * (W),               \
                               (size_t) cols * sizeof(float));                              \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        free(pk);                                                                           \
        return 0;                                                                           \
    }

/* s (mq x mb) on packed tiles, blocked like a GEMM (dots/avx2-inl.h, dots/avx512-inl.h):
   tiles of nt base rows (a multiple of BR) copied once as groups of G rows whose 8-feature
   chunks lie side by side (chunk t of row g + h at pk + g d8 + 8 G t + 8 h), that blocks
   of mc query rows (a multiple of QR) pass over, kc chunks of features a pass.
   KERNEL(a, d, pb, ps, t0, n, acc, b, s, ss) adds chunks t0 .. t0 + n of QR x BR dot
   products (query rows a, row stride d; packed groups from pb, group stride ps; acc: its
   QR BR 8 accumulator values between passes; on the last pass the base rows b and the
   outputs s, row stride ss). The rows left at the edges go to EDGE (QR x 1), fr_f32_1x4
   and fr_f32_1x1. -1 (nothing written) when out of memory. */
#define FR_DOTS_PACKED(NAME, ATTR, QR, BR, G, KERNEL, EDGE)                                 \
    ATTR static int NAME(const float* q, const float* b, float* s, int64_t mq, int64_t mb,  \
                         int64_t d, int64_t nt, int64_t kc, int64_t mc) {                   \
        const int64_t nch = d / 8, d8 = 8 * nch, mqr = mq / (QR) * (QR);                    \
        int64_t j0, j1, jn, j, g, t, h, r0, r1, r, t0;                                      \
        float* pk = (float*) malloc((size_t) nt * d8 * sizeof(float));                      \
        float* acc = (float*) malloc((size_t) mc * nt * 8 * sizeof(float));                \
        if (pk == NULL || acc == NULL) {                                                    \
            free(pk);                                                                       \
            free(acc);                                                                      \
            return -1;                                                                      \
        }                                                                                   \
        for (j0 = 0; j0 < mb; j0 += nt) {                                                   \
            j1 = j0 + nt < mb ? j0 + nt : mb;                                               \
            jn = j0 + (j1 - j0) / (BR) * (BR);                                              \
            for (g = 0; g < jn - j0; g += (G))                                              \
                for (t = 0; t < nch; t++)                                                   \
                    for (h = 0; h < (G); h++)                                               \
                        memcpy(pk + g * d8 + 8 * (G) * t + 8 * h,                           \
                               b + (j0 + g + h) * d + 8 * t, 8 * sizeof(float));            \
            for (r0 = 0; r0 < mqr; r0 += mc) {                                              \
                r1 = r0 + mc < mqr ? r0 + mc : mqr;                                         \
                for (t0 = 0; t0 < nch; t0 += kc)                                            \
                    for (r = r0; r < r1; r += (QR))                                         \
                        for (j = j0; j < jn; j += (BR))                                     \
                            KERNEL(q + r * d, d, pk + (j - j0) * d8, (G) * d8, t0,          \
                                   nch - t0 < kc ? nch - t0 : kc,                           \
                                   acc + (QR) * (BR) * 8 * ((r - r0) / (QR) * (nt / (BR))   \
                                                            + (j - j0) / (BR)),             \
                                   b + j * d, s + r * mb + j, mb);                          \
            }                                                                               \
            for (r = 0; r < mqr; r += (QR))                                                 \
                for (j = jn; j < j1; j++) EDGE(q + r * d, b + j * d, s + r * mb + j, mb, d); \
            for (r = mqr; r < mq; r++) {                                                    \
                for (j = j0; j + 4 <= j1; j += 4)                                           \
                    fr_f32_1x4(q + r * d, b + j * d, s + r * mb + j, mb, d);                \
                for (; j < j1; j++) fr_f32_1x1(q + r * d, b + j * d, s + r * mb + j, mb, d); \
            }                                                                               \
        }                                                                                   \
        free(pk);                                                                           \
        free(acc);                                                                          \
        return 0;                                                                           \
    }

#endif
