/* What the C API (fastrank._ext.capi) needs in C: the last-error message, one per thread
   and kept until that thread's next error, and numpy's summation order. */
#ifndef FR_CAPI_SUPPORT_H
#define FR_CAPI_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>

#if defined(_MSC_VER)
#define FR_THREAD_LOCAL __declspec(thread)
#else
#define FR_THREAD_LOCAL _Thread_local
#endif

static FR_THREAD_LOCAL char fr_last_error_message[512];

static const char* fr_last_error(void) { return fr_last_error_message; }

/* Record the message (printf format) of an error of the calling thread; returns code. */
static int fr_fail(int code, const char* format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(fr_last_error_message, sizeof fr_last_error_message, format, args);
    va_end(args);
    return code;
}

/* numpy's sum of n doubles (pairwise: blocks of at most 128 summed with 8 accumulators),
   so that a mean here has the bits of numpy.mean of the same values. */
static double fr_pairwise_sum(const double* a, long long n) {
    if (n < 8) {
        double r = 0.0;
        long long i;
        for (i = 0; i < n; i++) r += a[i];
        return r;
    }
    if (n <= 128) {
        double r[8], res;
        long long i, j;
        for (j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++) r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    } else {
        long long n2 = n / 2;
        n2 -= n2 % 8;
        return fr_pairwise_sum(a, n2) + fr_pairwise_sum(a + n2, n - n2);
    }
}

#endif
