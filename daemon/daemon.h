/* daemon.h - the one weft_daemon object that every part of weftd gets
 * passed (no process-wide mutable globals). Owned by main(); touched only
 * by the loop thread unless a field says otherwise. */
#ifndef WEFT_DAEMON_H
#define WEFT_DAEMON_H

#include <stdint.h>
#include <uv.h>

#include "log.h"
#include "diskres.h"
#include "quota.h"
#include "testhook.h"
#include "weftd_config.h"

struct weft_server_cbs;
struct weft_session_ask;
struct weft_session_node;
struct weft_nodes;
struct weft_uplink;
struct weft_forward;
struct weft_session_forward;
struct weft_part_cbs;
struct weft_parts;
struct weft_traces;
struct weft_retains;
struct weft_lives;
struct weft_catjobs;
struct weft_status;
struct weft_status_src;
struct weft_asks;
struct weft_server;

/* The limits whose hits weftd counts (weft status, STATUS=); names are
 * the configuration keys, "fd_limit" being RLIMIT_NOFILE. */
#define WEFT_LIMITS(X) X(MAX_FRAME, "max_frame") \
    X(MAX_CONNECTIONS, "max_connections") \
    X(MAX_CONN_PENDING, "max_conn_pending") \
    X(MAX_BUFFERED, "max_buffered") X(IDLE_TIMEOUT, "idle_timeout") \
    X(FD_LIMIT, "fd_limit") X(MAX_STRING, "max_string") \
    X(MAX_DEFINITIONS, "max_definitions") \
    X(MAX_LOCATIONS, "max_locations") X(MAX_MEMBERS, "max_members") \
    X(MAX_CONNECTIONS_PER_USER, "max_connections_per_user") \
    X(SESSION_TIMEOUT, "session_timeout") \
    X(MAX_TRACES_PER_USER, "max_traces_per_user") \
    X(MAX_USER_SPOOL_BYTES, "max_user_spool_bytes") \
    X(MAX_PREAUTH_CONNECTIONS, "max_preauth_connections") \
    X(MAX_PREAUTH_PER_ADDRESS, "max_preauth_per_address") \
    X(MAX_PREAUTH_BUFFERED, "max_preauth_buffered") \
    X(MAX_PREAUTH_FRAME, "max_preauth_frame") \
    X(PREAUTH_TIMEOUT, "preauth_timeout") \
    X(MAX_MEMBERS_PER_USER, "max_members_per_user") \
    X(MAX_DEFINITION_BYTES, "max_definition_bytes") \
    X(MAX_QUESTIONS_PER_USER, "max_questions_per_user") \
    X(MIN_FREE_SPOOL_BYTES, "min_free_spool_bytes")

enum weft_limit {
#define WEFT_LIMIT_ENUM(id, name) WEFT_LIMIT_##id,
    WEFT_LIMITS(WEFT_LIMIT_ENUM)
#undef WEFT_LIMIT_ENUM
    WEFT_LIMIT__COUNT
};
/* No limit: a refusal for another reason. */
#define WEFT_LIMIT_NONE WEFT_LIMIT__COUNT

typedef struct weft_daemon {
    uv_loop_t *loop;
    weft_config cfg;
    /* Each part's state, in a struct its own header defines (made and
     * freed by daemon.c): */
    struct weft_server *srv;      /* listeners, connections, journal
                                     writers, authentication (server.h) */
    struct weft_traces *traces;   /* the traces weftd holds, the runs
                                     that ended, the conversions
                                     (trace_internal.h) */
    struct weft_retains *retain;  /* retention jobs (retain.h) */
    struct weft_lives *live;      /* the recording traces' figures in
                                     the catalog (live.h) */
    struct weft_catjobs *catjob;  /* catalog jobs on a thread of their
                                     own (catjob.h) */
    struct weft_asks *ask;        /* users' questions (ask.h) */
    struct weft_status *status;   /* the status file's writer (status.h),
                                     weftd only */
    struct weft_nodes *nodes;     /* the nodes linked to this weftd, their
                                     head (cluster/nodes.h); weftd only */
    struct weft_uplink *uplink;   /* this weftd's link to its head, if it
                                     is a node (cluster/uplink.h) */
    struct weft_forward *forward; /* the processes it forwards there
                                     (cluster/forward.h) */
    struct weft_parts *parts;     /* its share of the head's traces
                                     (cluster/parts.h) */
    /* How the parts reach each other against the arrows (main.c sets
     * them): */
    const struct weft_server_cbs *server_cbs; /* where frames go
                                     (server.h) */
    const struct weft_session_ask *ask_cbs; /* where questions go
                                     (session.h; ask.c's) */
    const struct weft_session_node *node_cbs; /* where nodes' links go
                                     (session.h; cluster/nodes.c's) */
    const struct weft_session_forward *forward_cbs; /* on a node, where
                                     its processes go (session.h;
                                     cluster/forward.c's); NULL on a head */
    const struct weft_part_cbs *part_cbs; /* on a node, its share of the
                                     head's traces (partlink.h;
                                     cluster/parts.c's); NULL on a head */
    const struct weft_status_src *status_src; /* what the status asks
                                     the other parts (status.h) */
    /* What every part uses: */
    weft_quota quota;             /* each uid's bytes in the spool, the
                                     journals charged as they arrive
                                     (quota.h) */
    weft_diskres diskres;         /* min_free_spool_bytes (diskres.h) */
    weft_testhook testhook;       /* WEFT_TEST_STOP_AT (testhook.h) */
    unsigned jobs;                /* worker jobs in flight */
    int stopping;
    /* main.c's: signals, the tick, and what SIGHUP reads again. */
    uv_signal_t sig_term, sig_int, sig_hup;
    uv_timer_t tick;              /* once a second: grace periods */
    const char *config_path;      /* file to re-read on SIGHUP, or NULL */
    int config_missing_ok;        /* the default file may be absent */
    const char *flags[16][2];     /* key and value of each command-line
                                     setting, applied over the file again
                                     on SIGHUP; point into argv */
    unsigned nflags;
    /* Totals since start, for STATUS and logs. */
    uint64_t events_in;           /* events journaled */
    uint64_t bytes_in;            /* record bytes journaled */
    uint64_t events_at_tick;      /* events_in at the previous tick */
    uint64_t refused;             /* connections refused for bad input */
    uint64_t dropped_in;          /* records clients reported dropped (in
                                     Goodbyes accepted) */
    int64_t started;              /* unix time weftd became ready */
    char archive_token[33];       /* in ARCHIVE_ROOT/.weft-head, drawn at
                                     start (cluster/shared.h) */
    uint64_t limit_hits[WEFT_LIMIT__COUNT]; /* by enum weft_limit */
} weft_daemon;

/* Logs through the daemon's configured level. */
/* Makes d: zeroed, each part's state allocated (daemon.c). 0, or
 * WEFT_ENOMEM with nothing left to free. Its configuration, loop and
 * handles are the caller's to set. */
int weft_daemon_init(weft_daemon *d);
/* Frees each part's state: after the loop's last run, once no worker
 * thread is left to write to it. */
void weft_daemon_free(weft_daemon *d);

#define weft_dlog(d, level, ...) weft_log((d)->cfg.log_level, level, __VA_ARGS__)
/* The same with a weft_log_ctx (log.h): trace, key, rank, peer. */
#define weft_dlog_ctx(d, level, ctx, ...) \
    weft_logc((d)->cfg.log_level, level, ctx, __VA_ARGS__)

#endif
