/* msg.c - the weft command's messages and growing strings (out.h), on
 * their own so that weft run, which needs only these, links no JSON nor
 * SQLite library (cli/front.c). Allocation failures here exit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

/* ---- messages ----------------------------------------------------------- */

/* "weft[ CMD]: MESSAGE\n" on stderr, in one write: the ranks of a job
 * (weft run under mpirun) share the launcher's stderr, and an
 * unbuffered stream would write the parts one by one, mixed with other
 * ranks' lines. */
__attribute__((format(printf, 2, 0)))
static void vsay(const char *cmd, const char *fmt, va_list ap)
{
    char line[4096];
    int n = snprintf(line, sizeof line, "weft%s%s: ", cmd ? " " : "",
                     cmd ? cmd : "");

    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", line);
}

int weft__cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    return EXIT_FAIL;
}

int weft__cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'weft%s%s --help'.\n", cmd ? " " : "",
            cmd ? cmd : "");
    return EXIT_USAGE;
}

/* ---- strings ------------------------------------------------------------ */

void *weft__cli_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    return p;
}

char *weft__cli_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;

    return memcpy(weft__cli_xrealloc(NULL, n), s, n);
}

void weft__cli_sb_add(weft__sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = weft__cli_xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

__attribute__((format(printf, 2, 3)))
void weft__cli_sb_printf(weft__sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        weft__cli_sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n
                                                        : sizeof tmp - 1);
}

char *weft__cli_sb_take(weft__sbuf *b)
{
    char *s = b->s ? b->s : weft__cli_xstrdup("");

    memset(b, 0, sizeof *b);
    return s;
}
