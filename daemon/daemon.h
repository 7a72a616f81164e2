/* daemon.h - the one weft_daemon object that every part of weftd gets
 * passed (no process-wide mutable globals). Owned by main(); touched only
 * by the loop thread unless a field says otherwise. */
#ifndef WEFT_DAEMON_H
#define WEFT_DAEMON_H

#include <stdint.h>
#include <uv.h>

#include "weftd_config.h"

struct weft_conn;
struct weft_trace;

typedef struct weft_daemon {
    uv_loop_t *loop;
    weft_config cfg;
    uv_tcp_t tcp;                 /* TCP listener, if cfg.listen */
    uv_pipe_t unix_sock;          /* Unix listener, if cfg.socket */
    int have_tcp, have_unix;
    uv_signal_t sig_term, sig_int;
    uv_timer_t tick;              /* once a second: grace periods */
    struct weft_conn *conns;      /* live connections */
    uint64_t nconns;
    struct weft_trace *traces;    /* traces still recording */
    uint64_t next_trace_serial;   /* makes spool keys unique */
    unsigned jobs;                /* worker jobs in flight */
    unsigned converting;          /* conversions in flight */
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
    int64_t started;              /* unix time weftd became ready */
    char bound[300];              /* the TCP address bound, "" if none */
} weft_daemon;

/* Logs through the daemon's configured level. */
#define weft_dlog(d, level, ...) weft_log((d)->cfg.log_level, level, __VA_ARGS__)

#endif
