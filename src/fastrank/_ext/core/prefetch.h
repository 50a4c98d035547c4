/* Software prefetch: a row's data asked for while the row before it is worked on. A row of
   4 KB or more starts a new page, where the hardware prefetcher stops, so without it the
   first reads of each row wait on memory. */
#ifndef FR_PREFETCH_H
#define FR_PREFETCH_H

#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define FR_PREFETCH(p) __builtin_prefetch(p)
#define FR_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#else
#define FR_PREFETCH(p) ((void)(p))
#define FR_PREFETCH_L2(p) ((void)(p))
#endif

/* Asks for the n bytes from p in the second-level cache (one request per cache line). */
static inline void fr_prefetch_bytes(const void* p, size_t n) {
    const char* c = (const char*)p;
    size_t i;
    for (i = 0; i < n; i += 64)
        FR_PREFETCH_L2(c + i);
}

#endif
