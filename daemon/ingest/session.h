/* session.h - the protocol of one client connection: handshake,
 * definitions, event batches, goodbye, clock offsets.
 *
 * Direction: the session sits on top. The server (server.h) hands it each
 * connection's frames through the callbacks main.c gives
 * weft_server_start (weft_session_frame, weft_session_closed, and what
 * the server asks of a member: weft_session_pending,
 * weft_session_describe), and the
 * journal writer (jwriter.h) hands back each entry through the callback
 * given to weft_jwriter_start (weft_session_written); neither includes
 * this header. The session calls down into them: replies and refusals on
 * the connection (weft_conn_*), entries for the journal
 * (weft_jwriter_submit), checks of what a member sends (validate.h).
 * A member is its ingest state (memberin.h): joining, leaving, its
 * writes and its charges go to the trace lifecycle through the functions
 * members.h declares, and a question (Query, ImportTrace) goes on to
 * d->ask_cbs, the ask socket's functions that main.c wires: ingest
 * includes nothing of daemon/traces/ nor of daemon/ask/.
 */
#ifndef WEFT_SESSION_H
#define WEFT_SESSION_H

#include "jwriter.h"
#include "server.h"
#include "members.h"
#include "weft.pb-c.h"

/* Where a connection's questions go, in the modes that take them
 * (connmode.h); each returns 0 when taken, or the WEFT_E* code c was
 * failed with. Loop thread. */
typedef struct weft_session_ask {
    int (*query)(weft_conn *c, const Weft__Query *q);
    int (*import)(weft_conn *c, const Weft__ImportTrace *t);
    void (*closed)(weft_conn *c);     /* c is closing */
} weft_session_ask;

/* Where a node's link goes (daemon/cluster/nodes.h, which main.c wires
 * in d->node_cbs): its NodeHello, its Heartbeats and NodeStatus, the
 * frames of the members it relays, its close. Each
 * returns as weft_session_ask's. Without them a NodeHello is refused.
 * Loop thread. */
typedef struct weft_session_node {
    int (*hello)(weft_conn *c, const Weft__NodeHello *h);
    int (*heartbeat)(weft_conn *c);
    int (*status)(weft_conn *c, const Weft__NodeStatus *st);
    int (*relay)(weft_conn *c, const Weft__NodeRelay *r); /* relay.h */
    void (*closed)(weft_conn *c);     /* c is closing */
} weft_session_node;

/* Where a node's traced processes go instead of a trace of this weftd
 * (daemon/cluster/forward.h, which main.c wires in d->forward_cbs when
 * weftd.conf names a head): a Hello whose version, uid and tags were
 * checked and whose connection counts for its user, or a Query, then
 * every frame of that connection (c->forward set), and its close. hello and frame
 * return as weft_session_ask's functions. Loop thread. */
typedef struct weft_session_forward {
    int (*hello)(weft_conn *c, const Weft__Hello *h, uint32_t uid);
    /* the weft command's Query on the Unix socket (its STATUS is this
     * weftd's own; the head keeps the catalog) */
    int (*query)(weft_conn *c, const Weft__Query *q);
    int (*frame)(weft_conn *c, const Weft__Envelope *env,
                 enum weft_conn_event ev);
    void (*closed)(weft_conn *c);
} weft_session_forward;

/* weft_server_cbs.on_frame: handles one frame of c. 0 when it was
 * accepted, or the WEFT_E* code it was refused with: an Error was sent
 * and c closes (weft_conn_fail). */
int weft_session_frame(weft_conn *c, const Weft__Envelope *env);
/* The sums (packed weft.MemberSums, len bytes) a node sent of c's member,
 * whose events it wrote (relay_events_here): journaled as they are, for
 * the conversion. 0 when accepted, or the WEFT_E* code after failing c
 * (not such a member, after its Goodbye, empty or beyond a journal
 * entry's most). */
int weft_session_sums(weft_conn *c, const uint8_t *sums, size_t len);
/* weft_server_cbs.on_closed: c is closing; detaches it from its member. */
void weft_session_closed(weft_conn *c);
/* weft_server_cbs.pending: journal entries of c's member not written
 * yet (0 before Hello), *bytes their memory. */
uint64_t weft_session_pending(const weft_conn *c, uint64_t *bytes);
/* weft_server_cbs.describe: c's trace and rank for its log lines. */
void weft_session_describe(const weft_conn *c, weft_log_ctx *ctx);
/* weft_jwriter_done_cb: the writer is done with entry j. Acknowledges it
 * to the connection that sent it, if that is still the member's, or on a
 * failed write fails that connection; the member's state follows what is
 * journaled. A new member's Hello (its journal opened first) gets its
 * HelloAck now, or, if the journal could not be opened, the member is
 * gone and its connection gets the Error. Loop thread. */
void weft_session_written(weft_daemon *d, weft_jentry *j);

#endif
