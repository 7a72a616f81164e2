/* retain.h - what the spool keeps: retention (retention_days,
 * max_spool_bytes: finished traces removed, oldest first, their catalog
 * rows kept as "removed" with the reason) and each user's bytes in it,
 * for max_user_spool_bytes.
 *
 * A job on a worker thread of its own, at start and then every
 * WEFT_RETAIN_INTERVAL_S seconds (weft_retain_tick), reads and updates
 * the catalog and removes trace directories; the loop thread logs what
 * it removed and keeps the per-user bytes it summed, adding the archives
 * converted meanwhile (weft_retain_charge). Loop thread only.
 */
#ifndef WEFT_RETAIN_H
#define WEFT_RETAIN_H

#include <stdint.h>

#include "daemon.h"

#define WEFT_RETAIN_INTERVAL_S 60

struct weft_worker;

/* retain.c's state (d->retain; weft_traces_init). Loop thread. */
typedef struct weft_retains {
    struct weft_worker *retainer; /* retention jobs, while there are
                                     some (it sets this to NULL when it
                                     stops) */
    /* the last job's figures, plus the archives converted since
     * (weft_retain_charge) */
    int running;                  /* a job is in flight */
    uint64_t last;                /* uv_now() when the last job began */
    uint64_t spool_bytes;         /* bytes of the traces not removed */
} weft_retains;

/* Starts a retention job now unless one runs; the tick calls it every
 * WEFT_RETAIN_INTERVAL_S s. */
void weft_retain_run(weft_daemon *d);
/* Once a second (main.c's tick). */
void weft_retain_tick(weft_daemon *d);
/* A trace of uid was converted: its archive's bytes count for uid now. */
void weft_retain_charge(weft_daemon *d, uint32_t uid, uint64_t bytes);
/* 0 when uid may start a new trace; WEFT_ELIMIT with err naming
 * max_user_spool_bytes when its traces in the spool hold that much. */
int weft_retain_check_user(const weft_daemon *d, uint32_t uid, char *err,
                           size_t errlen);

#endif
