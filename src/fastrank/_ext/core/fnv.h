/* FNV-1a hashing of code points, for the term table of the text scanner. */
#ifndef FR_FNV_H
#define FR_FNV_H

#include <stdint.h>

#define FR_FNV_OFFSET 14695981039346656037ULL
#define FR_FNV_PRIME 1099511628211ULL

/* Spread the FNV-1a state h over the low bits a table uses. */
static inline uint64_t fr_fnv_mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* FNV-1a over the n code points key, mixed */
static inline uint64_t fr_fnv_ucs4(const uint32_t* key, int64_t n) {
    uint64_t h = FR_FNV_OFFSET;
    int64_t i;
    for (i = 0; i < n; i++) h = (h ^ key[i]) * FR_FNV_PRIME;
    return fr_fnv_mix(h);
}

#endif
