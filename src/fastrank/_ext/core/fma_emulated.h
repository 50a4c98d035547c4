/* The fused multiply-add a * b + c, rounded once, without the instruction. */
#ifndef FR_FMA_EMULATED_H
#define FR_FMA_EMULATED_H

#include <math.h>
#include <stdint.h>
#include <string.h>

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

#endif
