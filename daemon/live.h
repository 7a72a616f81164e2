/* live.h - the figures of traces still recording, written to the catalog
 * every live_interval seconds so that `weft show` and `weft list` agree
 * with `weft status` while a trace records (issue #11). Loop thread. */
#ifndef WEFT_LIVE_H
#define WEFT_LIVE_H

#include "daemon.h"

/* Called once a second (main.c's tick): when live_interval has passed
 * and no earlier job is still running, queues one worker job that writes
 * the figures of the recording traces that changed since the last one,
 * in one catalog transaction. Does nothing when live_interval is 0. */
void weft_live_tick(weft_daemon *d);

#endif
