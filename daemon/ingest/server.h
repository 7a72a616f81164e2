/* server.h - weftd's listeners and connections (libuv).
 *
 * Each connection runs a receive state machine (weft_frame_reader: header,
 * then payload, length checked against max_frame before any buffer is
 * sized) and hands complete frames to the on_frame callback it was given
 * (weft_server_cbs). A connection is closed asynchronously: pending
 * writes drain (so an Error reaches the peer), then the handle is closed
 * and its memory freed in the close callback.
 *
 * Direction: server.c does not speak the protocol: it frames bytes and
 * hands each frame to on_frame. main.c gives weft_server_start
 * session.c's callbacks (and the journal writer's stop); the session
 * calls into the connection (weft_conn_*): replies, refusals, pauses,
 * and its mode (connmode.h), which server.c reads for the frame limits
 * and timeouts that differ before and after Hello. Of the session's
 * member it knows only what the session tells it: the max_frame its
 * HelloAck announced, and through weft_server_cbs its journal entries
 * pending and its trace for log lines. Listening and accepting are
 * accept.c's (accept.h).
 *
 * DESIGN (limits): reading from a connection stops while any of these
 * holds (bits of weft_conn.paused):
 *  - WEFT_PAUSE_PENDING: more than max_conn_pending bytes wait: replies
 *    for the peer (it does not read its acks) and its frames not yet
 *    journaled (the disk is slower than it), so that one client cannot
 *    take all of max_buffered;
 *  - WEFT_PAUSE_BUFFERED: the frames partly received over all connections
 *    and the journal entries waiting for the writer thread (jwriter.h,
 *    counted with their overhead; the writer always gets through them)
 *    hold max_buffered bytes or more. Checked before a connection starts a
 *    new frame, never inside one: a connection in the middle of a frame
 *    (its buffer already allocated and counted) reads on until the frame
 *    is complete and journaled, so the total always falls again and no
 *    set of paused connections can wait for each other. Memory stays
 *    below max_buffered + max_frame. The bytes of a read that were not fed
 *    yet wait in its stash; reading resumes, outside any read callback,
 *    once the total is under three quarters of max_buffered;
 *  - WEFT_PAUSE_STOPPING: SIGTERM; a connection stops at its next frame
 *    boundary, then closes once its replies are written;
 *  - WEFT_PAUSE_GOODBYE: the client said Goodbye; the connection closes
 *    once that is journaled, after the acks of what came before;
 *  - WEFT_PAUSE_SESSION: the session waits for something before it takes
 *    the next frame (a new member's Hello: its journal being opened); the
 *    frames already read wait in rbuf and are handled, in order, once it
 *    calls weft_conn_resume (a peer that hangs up meanwhile is noticed
 *    then, as with every pause).
 * idle_timeout closes a connection that sends no Hello, or does not
 * finish a frame within that long of its first byte (not while weftd
 * itself holds it paused; a client that holds a partial frame and does
 * not read its acks, WEFT_PAUSE_PENDING, is timed out, so it cannot keep
 * max_buffered used up for good). A connection that said Hello and is
 * between frames is timed out by session_timeout instead, when nothing
 * came for that long: libweft sends a Heartbeat while its application
 * records nothing, so a quiet application keeps its connection (0: never
 * timed out); TCP keepalive finds peers whose host died.
 */
#ifndef WEFT_SERVER_H
#define WEFT_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "connmode.h"
#include "cred.h"
#include "daemon.h"
#include "frame.h"
#include "log.h"
#include "mac.h"
#include "uidmap.h"

#define WEFT_READ_CHUNK (64u << 10)
/* File descriptors kept free for what is not a connection: listeners,
 * the catalog, status file, conversions. A connection needs two (its
 * socket and its member's journal). */
#define WEFT_FD_RESERVE 64
/* Connections closing (refused) beyond max_connections before accepting
 * waits for them to close (server.c: accept_full). */
#define WEFT_ACCEPT_SLACK 32
/* A node's link (connmode.h's NODE) that brought nothing for this many
 * of its heartbeats ([cluster] heartbeat) is closed (weft_server_tick). */
#define WEFT_NODE_SILENT_BEATS 3
/* Causes of connlog.h's rate-limited lines (at least its enum's). */
#define WEFT_CONNLOG_CAUSES 4

enum {
    WEFT_PAUSE_PENDING = 1,
    WEFT_PAUSE_BUFFERED = 2,
    WEFT_PAUSE_STOPPING = 4,
    WEFT_PAUSE_GOODBYE = 8, /* Goodbye received: closes once journaled */
    WEFT_PAUSE_SESSION = 16, /* weft_conn_pause: until weft_conn_resume */
    WEFT_PAUSE_RELAY = 32   /* a node's link: a member it relays waits
                               (relay.h) */
};

typedef struct weft_conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    weft_daemon *d;
    char peer[128];            /* "127.0.0.1:5555" or "unix:pid 42" */
    int is_unix;               /* accepted on the Unix socket */
    int has_peer_uid;          /* peer_uid is known: SO_PEERCRED on the
                                  Unix socket, or a MUNGE credential */
    uint32_t peer_uid;
    uint32_t peer_gid;         /* with has_peer_uid */
    uint32_t peer_pid;         /* Unix socket: SO_PEERCRED's pid (0 if
                                  unknown: another pid namespace) */
    int peer_loopback;         /* TCP from a loopback address */
    enum weft_conn_mode mode;  /* what it may send next (connmode.h);
                                  changed by weft_conn_event only */
    uint8_t challenge[WEFT_AUTH_NONCE]; /* TCP: its Challenge's nonce */
    weft_mac *mac;             /* after its AuthAck: every frame both ways
                                  carries a MAC (proto/mac.h); owned */
    void *auth_job;            /* authn.c's job while its Auth is checked */
    void *ask_job;             /* ask.c's job while its Query is answered */
    void *node;                /* a node's link: cluster/nodes.c's record
                                  of the node (NULL otherwise) */
    void *forward;             /* on a node, a process forwarded to the
                                  head: cluster/forward.c's (NULL
                                  otherwise) */
    void (*on_written)(struct weft_conn *c); /* if set: called once
                                  the writes queued so far are done (ask.c
                                  sends an answer piece by piece) */
    int charged;               /* counts for charged_uid in d->srv->users:
                                  from accept on the Unix socket, from
                                  Hello over TCP */
    uint32_t charged_uid;
    /* preauth.c: a TCP connection whose user is not known yet */
    int preauth;               /* counted there */
    char addr[64];             /* what it counts under before it
                                  authenticates: its source address
                                  without the port, or "local uid N" */
    uint64_t accepted;         /* uv_now() at accept (preauth_timeout) */
    struct weft_conn *pa_next, *pa_prev; /* preauth.c's FIFO */
    weft_frame_reader reader;
    unsigned paused;           /* WEFT_PAUSE_* bits; reading stopped while
                                  any is set. Not part of the mode: they
                                  hold back the frames of any mode and let
                                  them through unchanged */
    /* Bytes read but not fed yet: stash[stash_off..+stash_len). A read
     * lands in the daemon's one read buffer (d->srv->rbuf); what a paused
     * connection could not feed is copied to a buffer of its own (freed
     * once fed), so an idle connection holds no read buffer. */
    uint8_t *stash;
    uint32_t stash_off, stash_len;
    uint64_t held;             /* bytes of the frame being received that
                                  count in d->srv->buffered */
    uint64_t last_frame;       /* uv_now() when the frame being received
                                  began (else accept, or the last resume),
                                  for idle_timeout */
    int resume_due;            /* weft_conn_resume: the idle callback
                                  takes the stashed frames */
    /* The session's (session.c): its member, set by Hello (server.c
     * asks about it through weft_server_cbs), the largest max_frame its
     * HelloAcks announced (server.c takes frames that large after a
     * SIGHUP lowered max_frame), and the ClockSync requests answered. */
    struct weft_memberin *member;
    uint64_t member_max_frame;
    uint32_t clock_syncs;
    int sync_waits;            /* a request waits for the head's clock
                                  (clocksync.h): its id and client_time */
    uint64_t sync_id, sync_client_time;
    uv_shutdown_t shutdown_req;
    struct weft_conn *next, *prev;
    /* relay.c: a member a node relays (relay.h) has no handle `h`, is not
     * in the server's list, and its frames come and go through `link`. */
    struct weft_conn *link;    /* its node's link; NULL: a socket of its own */
    uint32_t relay_id;         /* the node's number for it */
    int relay_holding;         /* it holds its link's reading */
    int relay_told;            /* the node knows it ended: no `closed` */
    char *relay_node;          /* its node's name; owned */
    int relay_events_here;     /* its node writes its events into the
                                  archive and sends its sums (its Hello's
                                  NodeRelay.events_here, issue #34) */
    void (*relay_gone)(struct weft_conn *rc); /* its owner's, once closed */
    uint8_t *sums_part;        /* its sums so far, while pieces come
                                  (NodeRelay.sums_more); owned */
    size_t sums_part_len;
    uint32_t relay_holds;      /* a link: its members holding it */
} weft_conn;

/* ingest's state (d->srv): listeners, connections, their limits and
 * the journal writers. Made by weft_server_init (weft_daemon_init) and
 * freed by weft_server_free (weft_daemon_free, after the loop's last
 * run: its handles live here, and a worker thread sets its pointer here
 * to NULL when it stops). Loop thread. */
typedef struct weft_server {
    uv_tcp_t tcp;                 /* TCP listener, if cfg.listen */
    uv_pipe_t unix_sock;          /* Unix listener, if cfg.socket */
    int have_tcp, have_unix;
    char bound[300];              /* the TCP address bound, "" if none */
    weft_conn *conns;             /* live connections */
    uint64_t nconns;
    uint64_t nclosing;            /* of them closing: refused ones still
                                     counted until closed are not held
                                     against max_connections */
    /* server.c: global backpressure (max_buffered), file descriptors,
     * shutdown. */
    uint64_t buffered;            /* bytes of frames partly received, all
                                     connections (reader allocations), and
                                     of journal entries not yet written */
    uint64_t npaused_buffered;    /* connections waiting for it to fall */
    uv_idle_t resume;             /* resumes them outside read callbacks */
    int have_resume;
    uint64_t fd_limit;            /* RLIMIT_NOFILE (soft) in effect */
    int backlog_checked;          /* somaxconn compared with listen_backlog */
    uint64_t accept_failed;       /* accept errors (EMFILE...), for logs */
    uv_stream_t *held[2];         /* listeners (Unix, TCP) whose pending
                                     connection waits for room
                                     (server.c: take_held) */
    struct weft_fdguard *fdguard; /* listeners paused out of descriptors
                                     (fdguard.h) */
    uv_timer_t shutdown_timer;    /* SIGTERM: bound on the drain */
    int have_shutdown_timer;
    /* refusals logged per cause (a limit, or WEFT_LIMIT_NONE), at most
     * cfg.max_log_refusals a second each (server.c) */
    weft_ratelimit refusal_log[WEFT_LIMIT__COUNT + 1];
    /* lines a peer causes at will, per cause (connlog.h), at most
     * cfg.max_log_refusals a second each */
    weft_ratelimit conn_log[WEFT_CONNLOG_CAUSES];
    weft_ratelimit lost_log;      /* batches a failed append lost
                                     (session.c) */
    struct weft_admins *admins;   /* admin_group's gid and members, as
                                     looked up at start and on SIGHUP
                                     (reserve.h) */
    uint8_t *rbuf;                /* the read buffer of every connection
                                     (server.c), WEFT_READ_CHUNK bytes,
                                     while there are connections */
    weft_uidmap users;            /* connections per uid that said Hello
                                     (max_connections_per_user; accept.c's
                                     cells); empty without connections */
    struct weft_preauth *preauth; /* connections whose user is not known
                                     yet (preauth.h) */
    struct weft_jwriter *jw;      /* journal appends (jwriter.h) */
    struct weft_jcache *jcache;   /* journals with a descriptor open
                                     (jcache.h) */
    /* Threads of their own for slow work (worker.h): */
    struct weft_worker *syncer;   /* fdatasync batches (durability =
                                     fsync; session.c), started with the
                                     journal writer, stopped by the
                                     server's on_stop (main.c) */
    struct weft_worker *authenticator; /* MUNGE credentials (authn.c),
                                     while there are some */
} weft_server;

/* d->srv made, zeroed (weft_daemon_init): 0 or WEFT_ENOMEM. */
int weft_server_init(weft_daemon *d);
/* Frees d->srv and what it owns of reserve.c's (weft_daemon_free, after
 * the loop's last run). Idempotent. */
void weft_server_free(weft_daemon *d);

/* What a connection hands on (session.c's functions, wired by main.c).
 * Loop thread. */
typedef struct weft_server_cbs {
    /* A complete frame of c (env is freed after it returns): 0 if it was
     * accepted, or the WEFT_E* code it was refused with, after
     * weft_conn_fail. */
    int (*on_frame)(weft_conn *c, const Weft__Envelope *env);
    /* c is closing: no frame comes any more. */
    void (*on_closed)(weft_conn *c);
    /* weft_server_stop is about to close every connection: finish with
     * what they handed on (the journal writer writes it all), so that
     * the replies it leads to still find them. */
    void (*on_stop)(weft_daemon *d);
    /* Optional: a TCP connection was accepted and reads (weftd speaks
     * first there: authn.c's Challenge). */
    void (*on_tcp_open)(weft_conn *c);
    /* What c's member has handed on and is not written yet: the count of
     * its journal entries, *bytes their memory (0 before Hello). For
     * max_conn_pending and for closing once all is journaled. */
    uint64_t (*pending)(const weft_conn *c, uint64_t *bytes);
    /* Names c's trace and rank in ctx for its log lines (left as they
     * are before Hello). */
    void (*describe)(const weft_conn *c, weft_log_ctx *ctx);
} weft_server_cbs;

/* Listens on a listening stream socket systemd passed (socket
 * activation; Unix if is_unix, else TCP) instead of binding; takes
 * ownership of fd. A second socket of a kind is closed with a warning.
 * Call before weft_server_start. 0 or a WEFT_E* code (logged). */
int weft_server_adopt(weft_daemon *d, int fd, int is_unix);
/* Starts the listeners of d->cfg, or, if sockets were adopted, none;
 * every connection hands its frames to cbs (not copied: it outlives the
 * server). 0 or a WEFT_E* code (logged). */
int weft_server_start(weft_daemon *d, const weft_server_cbs *cbs);
/* Serves fd, a connected Unix stream socket, as a connection accepted
 * on the Unix listener: the peer is named by SO_PEERCRED, the limits on
 * connections apply, reading starts. Takes ownership of fd. For tests
 * and fuzzers, which thus connect without a listener; weftd itself only
 * accepts. Call after weft_server_start. 0 with *out set (it may already
 * be closing, refused by a limit), or WEFT_ENOMEM or WEFT_EIO. */
int weft_server_open_fd(weft_daemon *d, int fd, weft_conn **out);
/* Stops listening, lets on_stop finish what the connections handed on,
 * and closes every connection at once. */
void weft_server_stop(weft_daemon *d);
/* SIGTERM: stops listening; each connection finishes the frame it is
 * receiving (journaled and acked), stops reading and closes once its
 * replies are written. After shutdown_timeout seconds whatever is left is
 * closed (weft_server_stop). */
void weft_server_drain(weft_daemon *d);
/* Once a second: idle_timeout (no Hello yet, or a frame begun and not
 * finished) and session_timeout (a session that sends nothing, not even
 * a Heartbeat). */
void weft_server_tick(weft_daemon *d);
/* Raises the soft RLIMIT_NOFILE to the hard limit and logs what weftd
 * has; sets d->srv->fd_limit. */
void weft_server_raise_fd_limit(weft_daemon *d);
/* Configuration key of limit l ("max_frame", ...). */
const char *weft_limit_name(enum weft_limit l);
/* d->srv->buffered fell (a frame or a journal entry is done with): resumes
 * the connections paused for max_buffered once it is below 3/4. */
void weft_server_buffered_fell(weft_daemon *d);
/* Counts a hit of limit l. */
void weft_limit_hit(weft_daemon *d, enum weft_limit l);

/* c's Hello was accepted as uid's: counts c for that user until it
 * closes. 0, or WEFT_ELIMIT after failing c when the user has
 * max_connections_per_user already. */
int weft_conn_charge_user(weft_conn *c, uint32_t uid);

/* 0 if c's peer speaks version (of its Auth, Hello or Query), else
 * WEFT_EVERSION after failing c saying which version weftd speaks. */
int weft_conn_check_version(weft_conn *c, uint32_t version);
/* Queues a packed frame for the peer, sealed with c's MAC once it has
 * one; takes ownership of `frame`. */
void weft_conn_send(weft_conn *c, uint8_t *frame, size_t len);
/* Sends an Error frame with code and message, logs it, then closes. */
void weft_conn_fail(weft_conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a refusal because c went beyond limit l (WEFT_LIMIT_NONE:
 * none), which is counted (weft_limit_hit). */
void weft_conn_fail_limit(weft_conn *c, enum weft_limit l, int code,
                          const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Stops reading from c for good (the Goodbye is being journaled; then
 * weft_conn_close). */
void weft_conn_hold(weft_conn *c);
/* The session takes no frame of c until weft_conn_resume: reading stops,
 * what was read stays stashed (WEFT_PAUSE_SESSION). */
void weft_conn_pause(weft_conn *c);
/* Ends weft_conn_pause: the frames stashed meanwhile are handled, in
 * order, and reading goes on (unless something else holds c), from the
 * next loop iteration on. */
void weft_conn_resume(weft_conn *c);
/* Pauses reading from c while it holds more than max_conn_pending bytes
 * (replies not written, frames not journaled). */
void weft_conn_check_pending(weft_conn *c);
/* Replies were written or journal entries of c's member handed back:
 * reading resumes once c holds at most half of max_conn_pending. */
void weft_conn_drained(weft_conn *c);
/* Nothing c's member sent is queued for the journal any more: a
 * connection held for SIGTERM closes now. */
void weft_conn_written(weft_conn *c);
/* Event ev happens to c (name: the frame's, for the message; NULL: the
 * event's): c->mode moves on as connmode.h's table says, logged at debug
 * level, and 0 is returned; or c is failed with the table's refusal and
 * its WEFT_E* code returned. The one place that changes c->mode. */
int weft_conn_event(weft_conn *c, enum weft_conn_event ev, const char *name);
/* c takes no frame any more (mode CLOSING). */
static inline int weft_conn_closing(const weft_conn *c)
{
    return c->mode == WEFT_CONN_CLOSING;
}
/* Closes after pending writes (mode CLOSING). Idempotent. */
void weft_conn_close(weft_conn *c);
/* A member link relays holds link's reading (hold) or lets go: link
 * reads again, from the next loop iteration on, once none holds it
 * (relay.h). */
void weft_conn_relay_hold(weft_conn *link, int hold);
/* Logs a line prefixed with the peer, trace and rank. */
void weft_conn_log(const weft_conn *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
