/* log.c - libweft's messages: one line "weft: ..." on stderr, written
 * with one call so lines of several processes do not interleave. The
 * bottom of client/: it depends on nothing else here.
 */
#include <stdarg.h>
#include <stdio.h>

#include "client_internal.h"

int weft__debug_on;

static void say(const char *prefix, const char *fmt, va_list ap)
{
    char line[1024];

    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "weft: %s%s\n", prefix, line);
}

/* See client_internal.h. */
void weft__warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
}

/* See client_internal.h. */
void weft__debug(const char *fmt, ...)
{
    va_list ap;

    if (!weft__debug_on)
        return;
    va_start(ap, fmt);
    say("debug: ", fmt, ap);
    va_end(ap);
}
