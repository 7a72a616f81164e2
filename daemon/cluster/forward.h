/* forward.h - a node's processes, forwarded to its head (issue #34; the
 * head's side is ingest/relay.h, the link uplink.h).
 *
 * On a node (weftd.conf names a head) a traced process's Hello makes no
 * trace here: its connection is forwarded. It gets a number on the link,
 * its Hello goes to the head in a NodeRelay that vouches for the uid
 * this weftd knows it by (the kernel's SO_PEERCRED on the Unix socket,
 * or its MUNGE credential over TCP), and so does every frame it sends
 * after; what the head answers for it (HelloAck, Acks, ClockSync, an
 * Error) goes back on its connection, and the head's end of it closes
 * it. Nothing of it is journaled here: the head acknowledges what it
 * journaled, and a process whose connection breaks sends again what was
 * not acknowledged, as to any weftd. The head makes the trace, one for
 * the processes of one launch whatever node they run on.
 *
 * While the link is down, a process's Hello waits (its connection
 * paused) and goes once the link is made; libweft waits WEFT_STALL_MS
 * for the answer, then connects again. The processes forwarded when the
 * link ends are disconnected: they connect again and resume from what
 * the head holds. While more than half of max_buffered waits to be
 * written to the head, the forwarded connections are not read; they are
 * again once a quarter is left. One user's share of that queue is an
 * eighth of max_buffered: while more of the user's frames wait, that
 * user's connections alone are not read (again below a sixteenth), so
 * that one user's flood does not stop the others'. Loop thread.
 */
#ifndef WEFT_FORWARD_H
#define WEFT_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "session.h"

/* The session's way to a node's forwarded processes (session.h), which
 * main.c wires when weftd.conf names a head. */
extern const weft_session_forward weft_forward_cbs;

/* The table and its timer (weft_uplink_start). 0 or WEFT_ENOMEM. */
int weft_forward_init(weft_daemon *d);
/* uplink.c's: the link is made (the Hellos that wait go out), ended
 * (the processes forwarded are disconnected), a NodeRelay came from the
 * head, the link's queue fell. */
void weft__forward_linked(weft_daemon *d);
void weft__forward_unlinked(weft_daemon *d);
void weft__forward_from_head(weft_daemon *d, const Weft__NodeRelay *r);
void weft__forward_drained(weft_daemon *d, size_t queued);
/* Processes forwarded (their connections), for the status. */
uint64_t weft_forward_count(const weft_daemon *d);
/* Closes the timer (weftd stops; the loop runs once more). */
void weft_forward_stop(weft_daemon *d);
/* Frees the table (weftd stopped: every connection closed). */
void weft_forward_free(weft_daemon *d);

/* uplink.c's link, for forward.c: sends env to the head (0, or -1 when
 * not linked or the link failed), and the bytes waiting to be written. */
int weft__uplink_send(weft_daemon *d, const Weft__Envelope *env);
/* The same for a frame of uid's process: counted in uid's share of the
 * link's queue (weft__forward_queued) until written
 * (weft__forward_written, also when the link ends). */
int weft__uplink_send_of(weft_daemon *d, const Weft__Envelope *env,
                         uint32_t uid);
void weft__forward_queued(weft_daemon *d, uint32_t uid, size_t bytes);
void weft__forward_written(weft_daemon *d, uint32_t uid, size_t bytes);
size_t weft__uplink_queued(const weft_daemon *d);
/* What to add to this weftd's CLOCK_MONOTONIC ns for the head's clock
 * (measured on the link, kept between links): 0, or WEFT_ESTATE before
 * the first answer. */
int weft__uplink_head_clock(const weft_daemon *d, int64_t *offset);
/* Whether this node writes its members' events into the head's archive
 * (partlink.h): it sees the head's archive_root (the last check said
 * so) and knows the head's clock. */
int weft__uplink_events_here(const weft_daemon *d);
/* Where this node sees the head's archive_root: its own archive_root,
 * else the head's path (its last NodeHelloAck's); NULL before either. */
const char *weft__uplink_archive_root(const weft_daemon *d);
/* The head's max_frame while linked (its NodeHelloAck's), else 0. */
uint32_t weft__uplink_head_max(const weft_daemon *d);

#endif
