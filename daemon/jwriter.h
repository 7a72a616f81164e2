/* jwriter.h - journal appends on a thread of their own.
 *
 * DESIGN: the loop thread validates a frame and hands its journal entry
 * to weft_jwriter_submit; one writer thread appends the entries in the
 * order they were submitted (so every member's entries keep their order)
 * and hands each back to the loop thread (uv_async), whose `done`
 * callback acknowledges it (session.c). The loop thread never waits for
 * the disk: a slow or full spool stalls no reading, no ClockSync answer
 * and no client of another trace. Entries waiting count in d->buffered
 * (max_buffered), so a disk slower than the clients pauses reading
 * (backpressure) instead of growing memory.
 *
 * A failed append marks its member (write_failed, which the writer thread
 * alone touches while entries of the member are queued): the member's
 * later entries, already queued, are not written, since they would leave
 * a gap after the missing one, and come back failed too. The loop thread
 * clears the mark when no entry of the member is queued (its `pending`
 * count is 0).
 */
#ifndef WEFT_JWRITER_H
#define WEFT_JWRITER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "journal.h"

struct weft_member;

typedef struct weft_jentry {
    struct weft_jentry *next;
    struct weft_member *member;  /* outlives the entry: a trace is not
                                    converted while entries are queued */
    uint64_t conn_serial;        /* member's connection when submitted */
    int what;                    /* the caller's: what written means */
    uint64_t last_time;          /* EventBatch: time of its last event */
    weft_journal_entry e;        /* payload points into data */
    int rc;                      /* set by the writer: 0 or WEFT_EIO */
    int err;                     /* errno of a failed append */
    uint8_t data[];              /* payload */
} weft_jentry;

/* Called on the loop thread for each written (or failed) entry, in the
 * order submitted; owns nothing: the entry is freed after it returns. */
typedef void (*weft_jwriter_done_cb)(weft_daemon *d, weft_jentry *j);

/* Starts the writer thread of d. 0 or a WEFT_E* code. */
int weft_jwriter_start(weft_daemon *d, weft_jwriter_done_cb done);
/* An entry with room for len payload bytes (e.payload set to it), or
 * NULL when out of memory. */
weft_jentry *weft_jentry_new(uint32_t len);
/* Queues j (owned by the writer from now on) for its member's journal;
 * counts its bytes in d->buffered and the member's pending entries. */
void weft_jwriter_submit(weft_daemon *d, weft_jentry *j);
/* hold 1: the writer thread takes no more entries (as a disk that
 * stalls) until called with 0. Any thread; for tests. weft_jwriter_stop
 * writes everything even while held. */
void weft_jwriter_hold(weft_daemon *d, int hold);
/* Entries queued or written but not handed back yet. */
uint64_t weft_jwriter_pending(const weft_daemon *d);
/* Writes what is queued, hands it all back, stops the thread and closes
 * its handle. Idempotent; for the end of weftd. */
void weft_jwriter_stop(weft_daemon *d);

#endif
