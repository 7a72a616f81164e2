/* log.c - libweft's messages: one line "weft: ..." on stderr, written
 * with one call so lines of several processes do not interleave. The
 * bottom of client/: it depends on nothing else here.
 */
#include <stdarg.h>
#include <stdio.h>

#include "client_internal.h"

/* See client_internal.h. */
void weft__warn(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft: %s\n", line);
}
