/* Dot products in one fixed order, whatever the path: what the paths share. */
#ifndef FR_DOTS_COMMON_H
#define FR_DOTS_COMMON_H

#include <stdint.h>

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

#endif
