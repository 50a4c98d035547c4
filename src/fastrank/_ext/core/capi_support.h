/* What the C API (fastrank._ext.capi) needs in C: the last-error message, one per thread
   and kept until that thread's next error, and numpy's summation order (numpy_sum.h). */
#ifndef FR_CAPI_SUPPORT_H
#define FR_CAPI_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>

#include "numpy_sum.h"

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

#endif
