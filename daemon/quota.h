/* quota.h - each user's bytes in the spool, for max_user_spool_bytes:
 * charged as they arrive, so that one user cannot fill the spool's file
 * system for the others.
 *
 * A user's figure is `stored`, their finished traces' bytes as the
 * catalog says (archives, and what imports add: retain.c's job sums them
 * at start and every minute), plus what was converted or imported since
 * (weft_quota_stored); and `live`, the journals of their traces still in
 * weftd's hands (recording, waiting or converting) with the archives
 * they will make (WEFT_QUOTA_JOURNAL_FACTOR), charged entry by entry as
 * weftd accepts them (session.c, recover.c) and released when the trace
 * is freed: converted, its archive then counts in `stored`.
 * While a job sums the catalog, what is stored meanwhile is kept aside
 * and added to the job's figure: it may count twice until the next job,
 * never not at all. Loop thread only; no daemon, no I/O (test_quota).
 */
#ifndef WEFT_QUOTA_H
#define WEFT_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "uidmap.h"

/* What one location costs an archive with nothing in it (measured: a
 * Goodbye naming 81 920 threads made 642 MB), charged for a thread a
 * Goodbye names that sent no batch before conversion makes it. */
#define WEFT_QUOTA_LOCATION_BYTES 8192

/* A journal byte is charged as this many: itself and the archive its
 * conversion will write, which both exist until the journals are removed
 * (measured: weft-demo's archive is 3.2 times its journals; an Enter
 * takes about 5 bytes in a journal and 16 in OTF2). Released when the
 * trace is converted and its archive's real bytes charged instead. */
#define WEFT_QUOTA_JOURNAL_FACTOR 4

typedef struct weft_quota_user {
    uint32_t uid;
    uint64_t stored;     /* bytes of finished traces (catalog) */
    uint64_t live;       /* bytes of journals of traces in weftd */
    uint64_t since;      /* stored while a job counts */
} weft_quota_user;

/* One user's figure from the catalog (retain.c's job). */
typedef struct weft_quota_sum {
    uint32_t uid;
    uint64_t bytes;
} weft_quota_sum;

typedef struct weft_quota {
    weft_uidmap users;   /* weft_quota_user cells (uidmap.h) */
    uint64_t live_total; /* the users' live bytes, summed */
    uint64_t streamed;   /* of the archives the live bytes promise, what
                            recording traces already wrote (streams) */
    int counting;        /* a job sums the catalog */
} weft_quota;

/* Adds bytes (a negative figure: releases them) to uid's live journals.
 * 0, or WEFT_ENOMEM (nothing charged: the user is not in the table). */
int weft_quota_live(weft_quota *q, uint32_t uid, int64_t bytes);
/* Adds bytes to uid's finished traces (an archive written, an import). */
int weft_quota_stored(weft_quota *q, uint32_t uid, uint64_t bytes);
/* A job begins summing the catalog. */
void weft_quota_count_begin(weft_quota *q);
/* Its figures (v, n of them): each user's stored bytes become theirs
 * plus what was stored since the job began (users it does not name: just
 * that). ok 0: the job failed, the old figures stay. */
void weft_quota_count_end(weft_quota *q, const weft_quota_sum *v, size_t n,
                          int ok);
/* uid's bytes: stored and live. */
uint64_t weft_quota_used(const weft_quota *q, uint32_t uid);
/* What the live journals' conversions will still write (their archives:
 * live_total less the journals themselves, less what recording traces
 * wrote of them already), for min_free_spool_bytes. */
uint64_t weft_quota_promised(const weft_quota *q);
/* Recording traces wrote `bytes` more of their archives (a negative
 * figure: those of a trace that is no longer recorded). */
void weft_quota_streamed(weft_quota *q, int64_t bytes);
/* uid's live bytes only (its recording traces' journals, charged
 * WEFT_QUOTA_JOURNAL_FACTOR times, and their locations). */
uint64_t weft_quota_live_of(const weft_quota *q, uint32_t uid);
/* 0 when uid may add `more` bytes under max (0: no bound); else
 * WEFT_ELIMIT with err naming max_user_spool_bytes and the figures. */
int weft_quota_check(const weft_quota *q, uint32_t uid, uint64_t max,
                     uint64_t more, char *err, size_t errlen);
void weft_quota_free(weft_quota *q);

#endif
