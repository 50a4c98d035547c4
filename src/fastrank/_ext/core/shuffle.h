/* The numbers of a row's seeded shuffle (ordinal ranking): splitmix64, counter-based, so
 * that every step's number follows from the row's stream and the step's index alone. Step
 * s of a row's shuffle takes the high half of the row's (s / 2 + 1)-th number when s is
 * even, its low half when odd; a step on the first `size` positions of a tie group swaps
 * the last of them with the one fr_step_index draws. */
#ifndef FR_SHUFFLE_H
#define FR_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's counter increment and its two multipliers */
#define FR_SPLITMIX_GAMMA 0x9E3779B97F4A7C15ULL
#define FR_SPLITMIX_M1 0xBF58476D1CE4E5B9ULL
#define FR_SPLITMIX_M2 0x94D049BB133111EBULL
/* the odd multiplier of a step's own stream (the numbers of a redrawn step) */
#define FR_STEP_STREAM 0x632BE59BD9B4E019ULL

/* splitmix64's output for its counter z */
static inline uint64_t fr_splitmix64_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * FR_SPLITMIX_M1;
    z = (z ^ (z >> 27)) * FR_SPLITMIX_M2;
    return z ^ (z >> 31);
}

/* the next number of the stream *state (its counter advanced by the gamma) */
static inline uint64_t fr_splitmix64(uint64_t* state) {
    *state += FR_SPLITMIX_GAMMA;
    return fr_splitmix64_mix(*state);
}

/* the 32 random bits of step s of the shuffle of the row whose stream is `row` */
static inline uint32_t fr_step_bits(uint64_t row, ptrdiff_t s) {
    uint64_t z = fr_splitmix64_mix(row + (uint64_t)((s >> 1) + 1) * FR_SPLITMIX_GAMMA);
    return s & 1 ? (uint32_t)z : (uint32_t)(z >> 32);
}

/* The position, of 0 .. size - 1, that step `step` swaps with the last one (size - 1),
 * from its random bits x by Lemire's multiply-shift (2019). Where x would bias it (rarely:
 * the product's low word below 2^32 mod size, which needs it below size first), numbers
 * are drawn again from the step's own stream (splitmix64 from row ^ (step + 1) *
 * FR_STEP_STREAM), so that no step moves the numbers of another. */
static inline ptrdiff_t fr_step_index(uint32_t x, ptrdiff_t size, uint64_t row,
                                      ptrdiff_t step) {
    uint64_t prod = (uint64_t)x * (uint64_t)size, side;
    uint32_t t;
    if ((uint32_t)prod < (uint32_t)size) {
        t = (uint32_t)(-(uint32_t)size) % (uint32_t)size;
        if ((uint32_t)prod < t) {
            side = row ^ ((uint64_t)(step + 1) * FR_STEP_STREAM);
            while ((uint32_t)prod < t)
                prod = (fr_splitmix64(&side) >> 32) * (uint64_t)size;
        }
    }
    return (ptrdiff_t)(prod >> 32);
}

/* the place, of 0 .. m - t - 1, that step t of a tie group of m labels (the row's step
 * step + t) draws: the one it swaps with the group's place m - 1 - t */
static inline int32_t fr_group_place(uint64_t row, ptrdiff_t step, ptrdiff_t m, ptrdiff_t t) {
    return (int32_t)fr_step_index(fr_step_bits(row, step + t), m - t, row, step + t);
}

#endif
