/* fail.h - the one helper that refuses with a message: writes the
 * message into the caller's buffer and returns the WEFT_E* code, so an
 * error path reads `return weft__fail(err, errlen, WEFT_EPROTO, ...)`.
 * Shared by every module that reports why it refused (validate, unify,
 * import, the trace lifecycle). */
#ifndef WEFT_FAIL_H
#define WEFT_FAIL_H

#include <stddef.h>

/* Formats fmt into err (errlen bytes, truncated; nothing when err is
 * NULL or errlen 0) and returns code. */
int weft__fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
