/* log.c - one line per message on stderr, with a level prefix that
 * journald understands (<N>) when stderr is the journal. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const names[] = { "error", "warning", "info", "debug" };
static const int syslog_prio[] = { 3, 4, 6, 7 };

void weft_log(int threshold, int level, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    int journal = getenv("JOURNAL_STREAM") != NULL;

    if (level > threshold)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (journal)
        fprintf(stderr, "<%d>%s\n", syslog_prio[level], line);
    else
        fprintf(stderr, "weftd: %s: %s\n", names[level], line);
}
