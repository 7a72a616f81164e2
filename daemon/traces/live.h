/* live.h - the figures of traces still recording, written to the catalog
 * every live_interval seconds so that `weft show` and `weft list` agree
 * with `weft status` while a trace records (issue #11). Loop thread, but
 * for weft_live_store_final. */
#ifndef WEFT_LIVE_H
#define WEFT_LIVE_H

#include "catalog.h"
#include "daemon.h"
#include "status.h"
#include "trace.h"

/* live.c's state (d->live; weft_traces_init). Loop thread. */
typedef struct weft_lives {
    uint64_t queued;              /* uv_now() when the last job was queued */
    int running;                  /* a live figures job is in flight */
} weft_lives;

/* Called once a second (main.c's tick): when live_interval has passed
 * and no earlier job is still running, queues one worker job that writes
 * the figures of the recording traces that changed since the last one,
 * in one catalog transaction. Does nothing when live_interval is 0. */
void weft_live_tick(weft_daemon *d);

/* The status's source of the traces recording (status.h): fn(t, arg)
 * for each, with its figures. */
void weft_live_status(const weft_daemon *d, weft_status_trace_fn fn,
                      void *arg);

/* Any thread, with t its own (a trace whose conversion starts, which the
 * loop no longer touches): stores t's last figures in its catalog row
 * while that still says recording, so that weft show tells the Goodbyes
 * that came after the last tick while the trace converts. 0 or a WEFT_E*
 * code (cat's message says why). */
int weft_live_store_final(const weft_trace *t, weft_catalog *cat,
                          int64_t now);

#endif
