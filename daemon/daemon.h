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
#include "uidmap.h"
#include "weftd_config.h"

struct weft_conn;
struct weft_server_cbs;
struct weft_session_ask;
struct weft_worker;
struct weft_traces;
struct weft_retains;
struct weft_lives;
struct weft_catjobs;
struct weft_status;
struct weft_status_src;
struct weft_preauth;
struct weft_fdguard;
struct weft_jcache;
struct weft_asks;

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
/* Causes of connlog.h's rate-limited lines (at least its enum's). */
#define WEFT_CONNLOG_CAUSES 4

typedef struct weft_daemon {
    uv_loop_t *loop;
    weft_config cfg;
    uv_tcp_t tcp;                 /* TCP listener, if cfg.listen */
    uv_pipe_t unix_sock;          /* Unix listener, if cfg.socket */
    int have_tcp, have_unix;
    uv_signal_t sig_term, sig_int;
    uv_timer_t tick;              /* once a second: grace periods */
    const struct weft_server_cbs *server_cbs; /* where frames go
                                     (server.h) */
    const struct weft_session_ask *ask_cbs; /* where questions go
                                     (session.h; ask.c's, set by main.c) */
    struct weft_conn *conns;      /* live connections */
    uint64_t nconns;
    uint64_t nclosing;            /* of them closing: refused ones still
                                     counted until closed are not held
                                     against max_connections */
    struct weft_traces *traces;   /* the traces weftd holds, the runs
                                     that ended, the conversions
                                     (trace_internal.h) */
    unsigned jobs;                /* worker jobs in flight */
    int stopping;
    const char *config_path;      /* file to re-read on SIGHUP, or NULL */
    int config_missing_ok;        /* the default file may be absent */
    const char *flags[16][2];     /* key and value of each command-line
                                     setting, applied over the file again
                                     on SIGHUP; point into argv */
    unsigned nflags;
    uv_signal_t sig_hup;
    /* Totals since start, for STATUS and logs. */
    uint64_t events_in;           /* events journaled */
    uint64_t bytes_in;            /* record bytes journaled */
    uint64_t events_at_tick;      /* events_in at the previous tick */
    uint64_t refused;             /* connections refused for bad input */
    uint64_t dropped_in;          /* records clients reported dropped (in
                                     Goodbyes accepted) */
    int64_t started;              /* unix time weftd became ready */
    char bound[300];              /* the TCP address bound, "" if none */
    /* server.c: global backpressure (max_buffered), file descriptors,
     * shutdown and how often each limit was reached. */
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
    uint64_t limit_hits[WEFT_LIMIT__COUNT]; /* by enum weft_limit */
    /* refusals logged per cause (a limit, or WEFT_LIMIT_NONE), at most
     * cfg.max_log_refusals a second each (server.c) */
    weft_ratelimit refusal_log[WEFT_LIMIT__COUNT + 1];
    /* lines a peer causes at will, per cause (connlog.h), at most
     * cfg.max_log_refusals a second each */
    weft_ratelimit conn_log[WEFT_CONNLOG_CAUSES];
    struct weft_admins *admins;   /* admin_group's gid and members, as
                                     looked up at start and on SIGHUP
                                     (reserve.h) */
    uint8_t *rbuf;                 /* the read buffer of every connection
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
    struct weft_asks *ask;        /* users' questions (ask.h) */
    struct weft_retains *retain;  /* retention jobs (retain.h) */
    weft_quota quota;             /* each uid's bytes in the spool, the
                                     journals charged as they arrive
                                     (quota.h) */
    weft_diskres diskres;         /* min_free_spool_bytes (diskres.h) */
    weft_ratelimit lost_log;      /* batches a failed append lost */
    struct weft_status *status;   /* the status file's writer (status.h),
                                     weftd only */
    const struct weft_status_src *status_src; /* what the status asks
                                     the other parts (status.h; main.c) */
    struct weft_lives *live;      /* the recording traces' figures in
                                     the catalog (live.h) */
    struct weft_catjobs *catjob;  /* catalog jobs on a thread of their
                                     own (catjob.h) */
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
