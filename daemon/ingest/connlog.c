/* connlog.c - rate-limited per-connection log lines (see connlog.h). */
#include "connlog.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

_Static_assert(WEFT_CONNLOG__COUNT <= WEFT_CONNLOG_CAUSES,
               "server.h: conn_log has a window per cause");

void weft_connlog(const weft_conn *c, enum weft_connlog cause, int level,
                  const char *fmt, ...)
{
    weft_daemon *d = c->d;
    uint64_t held_back;
    char msg[768];
    va_list ap;

    if (level > d->cfg.log_level)
        return;
    if (!weft_ratelimit_allow(&d->srv->conn_log[cause], uv_now(d->loop),
                              d->cfg.max_log_refusals, &held_back))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (held_back)
        weft_conn_log(c, level, "%s (and %llu more like it not logged: "
                      "max_log_refusals is %llu a second)", msg,
                      (unsigned long long)held_back,
                      (unsigned long long)d->cfg.max_log_refusals);
    else
        weft_conn_log(c, level, "%s", msg);
}
