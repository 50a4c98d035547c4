/* The popcount scan with the POPCNT instruction (fr_scan_popcnt). */
#ifndef FR_HAMMING_POPCNT_INL_H
#define FR_HAMMING_POPCNT_INL_H
#include "common.h"

#ifdef FR_X86
FR_SCAN(_popcnt, FR_TARGET_POPCNT)
#endif

#endif
