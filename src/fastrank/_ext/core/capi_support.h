/* What the C API (fastrank._ext.capi) needs in C: the last-error message, one per thread
   and kept until that thread's next error; a pointer per thread whose memory is released
   when the thread ends; and numpy's summation order (numpy_sum.h). */
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

/* A pointer per thread (its scratch, kept from one call to the next), NULL until set, and
   passed to the release function given at creation when its thread ends: POSIX
   thread-specific data, Windows fiber-local storage. Create and set return 0 when done. */
#if defined(_WIN32)
#include <windows.h>
typedef DWORD fr_thread_key;
static void (*fr_thread_release)(void*); /* one key per module: its release function */
static void NTAPI fr_thread_fls_release(PVOID value) { fr_thread_release(value); }
static int fr_thread_key_create(fr_thread_key* key, void (*release)(void*)) {
    fr_thread_release = release;
    *key = FlsAlloc(fr_thread_fls_release);
    return *key == FLS_OUT_OF_INDEXES;
}
static void* fr_thread_get(fr_thread_key key) { return FlsGetValue(key); }
static int fr_thread_set(fr_thread_key key, void* value) { return !FlsSetValue(key, value); }
#else
#include <pthread.h>
typedef pthread_key_t fr_thread_key;
static int fr_thread_key_create(fr_thread_key* key, void (*release)(void*)) {
    return pthread_key_create(key, release);
}
static void* fr_thread_get(fr_thread_key key) { return pthread_getspecific(key); }
static int fr_thread_set(fr_thread_key key, void* value) {
    return pthread_setspecific(key, value);
}
#endif

#endif
