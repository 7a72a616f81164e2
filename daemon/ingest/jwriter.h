/* jwriter.h - journal opens and appends on threads of their own.
 *
 * DESIGN: the loop thread validates a frame and hands its journal entry
 * to weft_jwriter_submit; the append thread appends the entries in the
 * order they were submitted (so every member's entries keep their order)
 * and hands each back to the loop thread (uv_async), whose `done`
 * callback acknowledges it. The loop thread never waits for the disk: a
 * slow or full spool stalls no reading, no ClockSync answer and no
 * client of another trace. Entries waiting count in d->srv->buffered
 * (max_buffered), so a disk slower than the clients pauses reading
 * (backpressure) instead of growing memory.
 *
 * A new member's first entry, its Hello, comes with an `open` step (the
 * trace's directory, the journal's open and header: trace.h's
 * weft_member_open) and goes to the open thread instead, which opens,
 * then appends it. One thread for all opens keeps them in the order of
 * the Hellos (a trace's directory before its members' journals); apart
 * from the appends, so that a Hello does not queue behind megabytes of
 * other members' batches. No other entry of that member is submitted
 * before it is handed back (the session holds the connection's frames
 * until then), so a member's entries are on one thread at a time.
 *
 * Direction: jwriter.c knows neither the server nor the sessions; it
 * reports each entry through the callback weft_jwriter_start was given
 * (session.c's weft_session_written, wired by main.c).
 *
 * A failed append of an EventBatch loses the batch, not the session: a
 * WEFT_JE_REFUSED entry (no payload, it may still fit) takes its place
 * saying why, and the batch is acknowledged and counted as dropped like
 * one refused over the quota; weftd goes on serving everyone.
 * A failed append of another entry marks its member (write_failed, which only the thread
 * holding the member's entries touches while entries of it are queued):
 * the member's later entries, already queued, are not written, since
 * they would leave a gap after the missing one, and come back failed
 * too. The loop thread clears the mark when no entry of the member is
 * queued (its `pending` count is 0).
 */
#ifndef WEFT_JWRITER_H
#define WEFT_JWRITER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "journal.h"
#include "memberin.h"

typedef struct weft_jentry {
    struct weft_jentry *next;
    weft_memberin *in;           /* its member's: outlives the entry, a
                                    trace is not converted while entries
                                    are queued */
    uint64_t conn_serial;        /* member's connection when submitted */
    int what;                    /* the caller's: what written means */
    uint64_t last_time;          /* EventBatch: time of its last event */
    weft_journal_entry e;        /* payload points into data */
    /* The member has no journal yet: run on the open thread before the
     * append (trace.h's weft_member_open). If it fails, rc is its code,
     * msg what it said, and nothing is appended. */
    int (*open)(weft_memberin *in, char *err, size_t errlen);
    int rc;                      /* set by the writer: 0, WEFT_EIO, or
                                    what `open` returned */
    int err;                     /* errno of a failed append */
    /* An EventBatch (or a refused one) whose append failed is not
     * stored, its entry made a WEFT_JE_REFUSED of reason
     * WEFT_REFUSED_ERRNO + err with rc 0, and its member's next entries
     * still written; lost is set when that entry could not be appended
     * either (the journal does not say it). */
    int lost;
    char *msg;                   /* why `open` failed; freed with j */
    uint8_t data[];              /* payload */
} weft_jentry;

/* Called on the loop thread for each written (or failed) entry, in the
 * order each thread handled them (a member's in the order submitted),
 * once d->srv->buffered no longer counts it; owns nothing: the entry is freed
 * after it returns. */
typedef void (*weft_jwriter_done_cb)(weft_daemon *d, weft_jentry *j);

/* Threads weft_jwriter_hold stops. */
enum {
    WEFT_JWRITER_APPENDS = 1,    /* the append thread */
    WEFT_JWRITER_OPENS = 2       /* the open thread */
};

/* Starts the writer threads of d; done gets every entry back. 0 or a
 * WEFT_E* code. */
int weft_jwriter_start(weft_daemon *d, weft_jwriter_done_cb done);
/* An entry with room for len payload bytes (e.payload set to it), or
 * NULL when out of memory. */
weft_jentry *weft_jentry_new(uint32_t len);
/* Queues j (owned by the writer from now on) for its member's journal,
 * on the open thread if j->open is set; counts its bytes in d->srv->buffered
 * and the member's pending entries. */
void weft_jwriter_submit(weft_daemon *d, weft_jentry *j);
/* The threads in `threads` (WEFT_JWRITER_* bits; 1 is the append
 * thread) take no more entries (as a disk that stalls), the others go
 * on; 0 releases all. Any thread; for tests. weft_jwriter_stop writes
 * everything even while held. */
void weft_jwriter_hold(weft_daemon *d, unsigned threads);
/* Entries queued or written but not handed back yet. */
uint64_t weft_jwriter_pending(const weft_daemon *d);
/* Writes what is queued, hands it all back, stops the threads and
 * closes its handle. Idempotent; for the end of weftd. */
void weft_jwriter_stop(weft_daemon *d);

#endif
