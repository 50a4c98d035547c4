/* Bit counts and byte order. */
#ifndef FR_BITS_H
#define FR_BITS_H

#if defined(__GNUC__) || defined(__clang__)
/* the POPCNT instruction in functions compiled for it (FR_TARGET_POPCNT and up), a portable
   compiler routine elsewhere */
#define FR_POPCOUNT64(x) ((unsigned)__builtin_popcountll(x))
#define FR_CTZ64(x) ((unsigned)__builtin_ctzll(x))
#else
static inline unsigned fr_popcount_swar(unsigned long long x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}
#define FR_POPCOUNT64(x) fr_popcount_swar(x)
/* trailing zeros of x != 0: the ones below its lowest set bit */
#define FR_CTZ64(x) fr_popcount_swar(((x) & (0 - (x))) - 1)
#endif

#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) \
    || defined(_MSC_VER)
#define FR_LITTLE_ENDIAN 1
#else
#define FR_LITTLE_ENDIAN 0
#endif

#endif
