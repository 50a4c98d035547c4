/* The popcount scan in portable C (fr_scan_portable). */
#ifndef FR_HAMMING_GENERIC_INL_H
#define FR_HAMMING_GENERIC_INL_H
#include "common.h"

FR_SCAN(_portable, FR_PORTABLE_HOT)

#endif
