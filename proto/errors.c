/* errors.c - names and messages of the WEFT_E* codes. */
#include "weft_errors.h"
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>

#define WEFT__ERR_MSG(name, msg) msg,
#define WEFT__ERR_NAME(name, msg) #name,
static const char *const messages[] = { WEFT_ERRNO_MAP(WEFT__ERR_MSG) };
static const char *const names[] = { WEFT_ERRNO_MAP(WEFT__ERR_NAME) };

static int index_of(int code)
{
    if (code <= WEFT__ERRNO_BASE || code >= WEFT__ERRNO_END)
        return -1;
    return code - WEFT__ERRNO_BASE - 1;
}

__attribute__((visibility("default")))
const char *weft_strerror(int code)
{
    int i;

    if (code == 0)
        return "success";
    i = index_of(code);
    return i < 0 ? "unknown error" : messages[i];
}

__attribute__((visibility("default")))
const char *weft_err_name(int code)
{
    int i;

    if (code == 0)
        return "OK";
    i = index_of(code);
    return i < 0 ? "EUNKNOWN" : names[i];
}

/* See fail.h. */
int weft__fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}
