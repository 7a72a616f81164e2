/* main.c - weftd: wiring only. Configuration (defaults, file, flags), the
 * spool and catalog checks, the listeners, signals, and the loop. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "catalog.h"
#include "weftd_config.h"
#include "ask.h"
#include "authn.h"
#include "daemon.h"
#include "fsutil.h"
#include "jwriter.h"
#include "live.h"
#include "log.h"
#include "nodes.h"
#include "recover.h"
#include "reload.h"
#include "reserve.h"
#include "retain.h"
#include "server.h"
#include "session.h"
#include "shared.h"
#include "spool.h"
#include "status.h"
#include "trace.h"
#include "forward.h"
#include "parts.h"
#include "uplink.h"
#include "weft_errors.h"
#include "worker.h"

static void usage(FILE *out)
{
    fprintf(out,
"Usage: weftd [OPTION]...\n"
"Collects traces from libweft clients and writes OTF2 archives.\n"
"Runs in the foreground and logs to stderr (the journal under systemd).\n"
"One weftd per spool: it locks SPOOL/weftd.lock while it runs.\n"
"\n"
"  -c, --config FILE     configuration file (default %s;\n"
"                        a missing default file is fine)\n"
"  -l, --listen HOST:PORT  TCP address (default " WEFT_DEFAULT_LISTEN ";\n"
"                        '' for none; port 0 picks a free port)\n"
"  -s, --socket PATH     Unix socket (default SPOOL/weftd.sock; '' for\n"
"                        none)\n"
"  -d, --spool DIR       journals and archives (default $STATE_DIRECTORY\n"
"                        under systemd, else /var/lib/weft as root, else\n"
"                        $XDG_STATE_HOME/weft or ~/.local/state/weft)\n"
"  -C, --catalog FILE    SQLite catalog (default SPOOL/catalog.db)\n"
"      --address-file FILE  write the bound TCP address to FILE\n"
"      --log-level LEVEL error, warning, info (default) or debug\n"
"      --grace-period SECONDS  convert a trace when none of its processes\n"
"                        was connected for this long (default 300)\n"
"  -o, --set KEY=VALUE   any key of the configuration file, e.g.\n"
"                        --set max_buffered=16M (repeatable)\n"
"      --check-config    validate and print the effective configuration\n"
"                        and the file it was read from\n"
"  -h, --help            this help\n"
"  -V, --version         version\n",
            weft_config_default_path());
}

enum { OPT_ADDRESS_FILE = 256, OPT_LOG_LEVEL, OPT_GRACE, OPT_CHECK };

static const struct option options[] = {
    { "config", required_argument, NULL, 'c' },
    { "listen", required_argument, NULL, 'l' },
    { "socket", required_argument, NULL, 's' },
    { "spool", required_argument, NULL, 'd' },
    { "catalog", required_argument, NULL, 'C' },
    { "address-file", required_argument, NULL, OPT_ADDRESS_FILE },
    { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
    { "grace-period", required_argument, NULL, OPT_GRACE },
    { "check-config", no_argument, NULL, OPT_CHECK },
    { "set", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 }
};

/* Once a second: grace periods, the live figures for systemd and `weft
 * status`, and every live_interval those of the catalog (live.c). */
static void on_tick(uv_timer_t *t)
{
    weft_daemon *d = t->data;
    unsigned recording = 0;
    uint64_t hits = 0;

    weft_trace_check_idle(d);
    weft_server_tick(d);
    weft_live_tick(d);
    weft_retain_tick(d);
    for (int l = 0; l < WEFT_LIMIT__COUNT; l++)
        hits += d->limit_hits[l];
    recording = weft_trace_count(d, WEFT_TRACE_RECORDING);
    weft_status_update(d);
    sd_notifyf(0, "STATUS=%llu connections, %u traces recording, %u "
               "converting, %llu events/s, %llu events and %llu bytes since "
               "start, %llu refused, limits reached %llu times",
               (unsigned long long)d->srv->nconns, recording,
               weft_trace_count_conversions(d).in_flight,
               (unsigned long long)(d->events_in - d->events_at_tick),
               (unsigned long long)d->events_in,
               (unsigned long long)d->bytes_in,
               (unsigned long long)d->refused, (unsigned long long)hits);
    d->events_at_tick = d->events_in;
}

/* Applies the command-line settings again: they beat the file. */
static int apply_flags(const weft_daemon *d, weft_config *c, char *err,
                       size_t errlen)
{
    for (unsigned i = 0; i < d->nflags; i++)
        if (weft_config_set(c, NULL, d->flags[i][0], d->flags[i][1], err,
                            errlen) < 0)
            return -1;
    return 0;
}

/* Says which keys of the reloaded configuration c differ from what weftd
 * runs with but take effect only at a restart (reload.h): their running
 * value is kept. */
static void warn_restart_only(weft_daemon *d, const weft_config *c)
{
    char keys[1024];
    unsigned n = weft_reload_restart_keys(&d->cfg, c, keys, sizeof keys);

    if (n)
        weft_dlog(d, WEFT_LOG_WARNING, "SIGHUP: %s changed in the "
                  "configuration but take%s effect only when weftd restarts "
                  "(the running value%s kept)", keys, n > 1 ? "" : "s",
                  n > 1 ? "s are" : " is");
}

/* SIGHUP: re-reads the configuration file and applies what can change
 * while running (limits, log level, grace period, live interval, ...);
 * what needs a restart is named in a warning (warn_restart_only); a bad
 * file keeps the running configuration. */
static void on_hup(uv_signal_t *s, int signum)
{
    weft_daemon *d = s->data;
    weft_config c;
    char err[512];

    weft_config_init(&c);
    if (weft_config_set(&c, "weftd", "listen", d->cfg.listen, err, sizeof err) ||
        weft_config_set(&c, "weftd", "socket", d->cfg.socket, err, sizeof err) ||
        weft_config_set(&c, "weftd", "spool", d->cfg.spool, err, sizeof err) ||
        weft_config_set(&c, "weftd", "catalog", d->cfg.catalog, err, sizeof err) ||
        (d->config_path &&
         weft_config_load_file(&c, d->config_path, d->config_missing_ok, err,
                               sizeof err)) ||
        apply_flags(d, &c, err, sizeof err) ||
        weft_config_finish(&c, err, sizeof err)) {
        weft_dlog(d, WEFT_LOG_ERROR, "SIGHUP: configuration not reloaded: %s",
                  err);
        weft_config_free(&c);
        return;
    }
    warn_restart_only(d, &c);
    d->cfg.log_level = c.log_level;
    d->cfg.grace_period = c.grace_period;
    d->cfg.abort_grace_period = c.abort_grace_period;
    d->cfg.convert_threads = c.convert_threads;
    d->cfg.convert_memory = c.convert_memory;
    weft_trace_set_max_conversions(d, c.max_conversions);
    d->cfg.live_interval = c.live_interval;
    d->cfg.max_frame = c.max_frame;
    d->cfg.max_connections = c.max_connections;
    d->cfg.max_connections_per_user = c.max_connections_per_user;
    d->cfg.reserved_connections = c.reserved_connections;
    d->cfg.max_questions_per_user = c.max_questions_per_user;
    d->cfg.max_members_per_user = c.max_members_per_user;
    d->cfg.max_log_refusals = c.max_log_refusals;
    d->cfg.max_conn_pending = c.max_conn_pending;
    d->cfg.max_buffered = c.max_buffered;
    d->cfg.idle_timeout = c.idle_timeout;
    d->cfg.session_timeout = c.session_timeout;
    d->cfg.shutdown_timeout = c.shutdown_timeout;
    d->cfg.max_string = c.max_string;
    d->cfg.max_definitions = c.max_definitions;
    d->cfg.max_locations = c.max_locations;
    d->cfg.max_members = c.max_members;
    d->cfg.max_traces_per_user = c.max_traces_per_user;
    d->cfg.max_user_spool_bytes = c.max_user_spool_bytes;
    d->cfg.min_free_spool_bytes = c.min_free_spool_bytes;
    d->cfg.retention_days = c.retention_days;
    d->cfg.max_spool_bytes = c.max_spool_bytes;
    { /* swapped: c's copy is freed below */
        char *g = d->cfg.admin_group;
        d->cfg.admin_group = c.admin_group;
        c.admin_group = g;
    }
    weft_config_free(&c);
    weft_dlog(d, WEFT_LOG_INFO, "SIGHUP: configuration reloaded from %s",
              d->config_path ? d->config_path : "built-in defaults");
    weft_ask_report(d);
}

static void on_signal(uv_signal_t *s, int signum)
{
    weft_daemon *d = s->data;

    if (d->stopping)
        return;
    d->stopping = 1;
    sd_notifyf(0, "STOPPING=1\nSTATUS=stopping: draining %llu connections, "
               "%u jobs", (unsigned long long)d->srv->nconns, d->jobs);
    weft_status_stop(d);  /* after the last write */
    weft_dlog(d, WEFT_LOG_INFO, "%s: stopping: no new connections; %llu "
              "connections finish the frame they are receiving and get "
              "their acks, %u jobs (conversions, fsyncs) finish; at most %llu "
              "s (shutdown_timeout)", signum == SIGTERM ? "SIGTERM" : "SIGINT",
              (unsigned long long)d->srv->nconns, d->jobs,
              (unsigned long long)d->cfg.shutdown_timeout);
    weft_server_drain(d);
    weft_uplink_stop(d);
    /* The last resort, should the loop itself not come back to its
     * shutdown timer (a callback that never returns): SIGALRM's default
     * action ends weftd, as safely as SIGKILL would (what was
     * acknowledged is journaled). */
    alarm((unsigned)d->cfg.shutdown_timeout + 3);
    uv_close((uv_handle_t *)&d->tick, NULL);
    uv_close((uv_handle_t *)&d->sig_hup, NULL);
    uv_close((uv_handle_t *)&d->sig_term, NULL);
    uv_close((uv_handle_t *)&d->sig_int, NULL);
}

/* Applies the command line over the configuration. Returns 0, 1 to exit
 * successfully (help, version), or 2 for a usage error. */
static int parse_args(int argc, char **argv, weft_daemon *d, int *check)
{
    weft_config *cfg = &d->cfg;
    const char *config = NULL;
    char err[512];
    int opt, missing_ok = 1;

    /* First pass: the configuration file, so flags override it. */
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "c:l:s:d:C:o:hV", options, NULL)) != -1)
        if (opt == 'c')
            config = optarg;
    if (config)
        missing_ok = 0;
    else
        config = weft_config_default_path();
    d->config_path = config;
    d->config_missing_ok = missing_ok;
    if (weft_config_load_file(cfg, config, missing_ok, err, sizeof err) < 0) {
        fprintf(stderr, "weftd: %s\n", err);
        return 2;
    }
    opterr = 1;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "c:l:s:d:C:o:hV", options, NULL)) != -1) {
        const char *key = NULL, *section = "weftd";
        char *value = optarg;
        switch (opt) {
        case 'c': continue;
        case 'l': key = "listen"; break;
        case 's': key = "socket"; break;
        case 'd': key = "spool"; break;
        case 'C': key = "catalog"; break;
        case OPT_LOG_LEVEL: key = "log_level"; break;
        case OPT_GRACE: key = "grace_period"; break;
        case OPT_ADDRESS_FILE:
            free(cfg->address_file);
            cfg->address_file = strdup(optarg);
            continue;
        case OPT_CHECK: *check = 1; continue;
        case 'o': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                fprintf(stderr, "weftd: --set '%s': expected KEY=VALUE\n",
                        optarg);
                return 2;
            }
            *eq = 0; /* argv is ours; flags[] point into it */
            key = optarg;
            value = eq + 1;
            section = NULL;
            break;
        }
        case 'h': usage(stdout); return 1;
        case 'V': printf("weftd " PACKAGE_VERSION "\n"); return 1;
        default:
            fprintf(stderr, "Try 'weftd --help'.\n");
            return 2;
        }
        if (weft_config_set(cfg, section, key, value, err, sizeof err) < 0) {
            fprintf(stderr, "weftd: %s%s: %s\n", section ? "--" : "--set ",
                    key, err);
            return 2;
        }
        if (d->nflags == sizeof d->flags / sizeof d->flags[0]) {
            fprintf(stderr, "weftd: more than %zu settings on the command "
                    "line\n", sizeof d->flags / sizeof d->flags[0]);
            return 2;
        }
        d->flags[d->nflags][0] = key;
        d->flags[d->nflags++][1] = value;
    }
    if (optind < argc) {
        fprintf(stderr, "weftd: unexpected argument '%s'\nTry 'weftd "
                "--help'.\n", argv[optind]);
        return 2;
    }
    if (weft_config_finish(cfg, err, sizeof err) < 0) {
        fprintf(stderr, "weftd: %s\n", err);
        return 2;
    }
    return 0;
}

/* --check-config: which file was read, then the effective settings. */
static void print_config(const weft_daemon *d)
{
    int read = access(d->config_path, F_OK) == 0;

    printf("# weftd %s: built-in defaults, then %s%s%s, then command-line "
           "flags\n", PACKAGE_VERSION, read ? "" : "no file (", d->config_path,
           read ? "" : " does not exist)");
    weft_config_print(&d->cfg, stdout);
}

/* Socket activation: takes the listening sockets systemd passed (see
 * systemd/weftd.socket); weft_server_start then binds nothing. 0 when
 * none were passed or all were taken, -1 on an error (logged). */
static int adopt_sockets(weft_daemon *d)
{
    int n = sd_listen_fds(0);

    if (n < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "socket activation: %s", strerror(-n));
        return -1;
    }
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
        int is_unix = sd_is_socket(fd, AF_UNIX, SOCK_STREAM, 1) > 0;
        if (!is_unix && sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
            weft_dlog(d, WEFT_LOG_ERROR, "socket activation: fd %d is not "
                      "a listening stream socket", fd);
            return -1;
        }
        if (weft_server_adopt(d, fd, is_unix) < 0)
            return -1;
    }
    return 0;
}

/* Creates the spool directory and takes its lock (spool_lock.h) before
 * anything else touches the spool: a second weftd on the same spool must
 * not recover the journals the first is writing. Returns the lock's
 * descriptor (held until exit), or -1 after logging why. */
static int lock_spool(weft_daemon *d)
{
    char err[1024];
    int fd = -1;

    if (weft_mkdir_p(d->cfg.spool, 0755, 0755) != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot create spool directory %s: %s",
                  d->cfg.spool, strerror(errno));
        return -1;
    }
    if (weft_spool_lock(d->cfg.spool, "weftd", &fd, err, sizeof err) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "not starting: %s", err);
        return -1;
    }
    return fd;
}

/* The modes ask.h's design needs, also on a spool an older weftd made:
 * traces/ passable, not listable (traces), or the catalog and its -wal
 * and -shm weftd's alone (NULL; SQLite gives those the catalog's mode
 * when it makes them). Files of another owner are left alone. */
static void keep_private(weft_daemon *d, const char *traces)
{
    static const char *const ext[] = { "", "-wal", "-shm" };
    char path[4200];
    struct stat st;

    if (traces) {
        if (stat(traces, &st) == 0 && st.st_uid == geteuid() &&
            (st.st_mode & 07777) != WEFT_TRACES_DIR_MODE &&
            chmod(traces, WEFT_TRACES_DIR_MODE) != 0)
            weft_dlog(d, WEFT_LOG_WARNING, "cannot make %s mode %o: %s",
                      traces, WEFT_TRACES_DIR_MODE, strerror(errno));
        return;
    }
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        snprintf(path, sizeof path, "%s%s", d->cfg.catalog, ext[i]);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid() && (st.st_mode & 077) != 0 &&
            chmod(path, st.st_mode & 0700) != 0)
            weft_dlog(d, WEFT_LOG_WARNING, "cannot make %s readable by "
                      "weftd alone: %s", path, strerror(errno));
    }
}

/* weftd writes the archives in [cluster] archive_root as itself: one
 * another user owns or may write in could have weftd write elsewhere
 * (its KEY directories renamed, links put in their place). 1, or 0 after
 * saying why not. */
static int archive_root_is_weftds(weft_daemon *d)
{
    const char *root = d->cfg.archive_root;
    struct stat st;

    if (lstat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        weft_dlog(d, WEFT_LOG_ERROR, "[cluster] archive_root = %s: not a "
                  "directory (a symbolic link? name the directory itself)",
                  root);
        return 0;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        weft_dlog(d, WEFT_LOG_ERROR, "[cluster] archive_root = %s: owned by "
                  "uid %u, mode %o: it must be weftd's own (uid %u) and "
                  "writable by no one else, or another user could have "
                  "weftd write its archives elsewhere (chown it to weftd's "
                  "user, chmod 711)", root, (unsigned)st.st_uid,
                  (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
        return 0;
    }
    return 1;
}

/* Creates the spool and checks that the catalog opens, so that a bad
 * setup fails at start with a clear message. */
static int prepare_storage(weft_daemon *d)
{
    char traces[4200];
    weft_catalog *cat = NULL;
    char *msg = NULL;
    int rc;

    snprintf(traces, sizeof traces, "%s/traces", d->cfg.spool);
    if (weft_mkdir_p(traces, 0755, WEFT_TRACES_DIR_MODE) != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot create spool directory %s: %s",
                  traces, strerror(errno));
        return -1;
    }
    keep_private(d, traces);
    /* Archives outside the spool: others pass through, not list it, as
     * traces/ (spool.h). */
    if (*d->cfg.archive_root &&
        (weft_mkdir_p(d->cfg.archive_root, 0755, WEFT_TRACES_DIR_MODE) != 0 ||
         access(d->cfg.archive_root, W_OK | X_OK) != 0)) {
        weft_dlog(d, WEFT_LOG_ERROR, "[cluster] archive_root = %s: cannot "
                  "create it or write there: %s", d->cfg.archive_root,
                  strerror(errno));
        return -1;
    }
    if (*d->cfg.archive_root && !archive_root_is_weftds(d))
        return -1;
    if (*d->cfg.archive_root && !*d->cfg.cluster_head) {
        /* a head's: its nodes look for it (shared.h); a node's names
         * where it sees its head's */
        char host[256] = "", why[600];
        gethostname(host, sizeof host - 1);
        if (weft_shared_mark(d->cfg.archive_root, host, d->archive_token,
                             why, sizeof why) < 0) {
            weft_dlog(d, WEFT_LOG_ERROR, "[cluster] archive_root: %s", why);
            return -1;
        }
    }
    rc = weft_catalog_verify(d->cfg.catalog, &msg);
    if (rc == 0)
        rc = weft_catalog_open(d->cfg.catalog, 0, &cat, &msg);
    if (rc == 0 &&
        (rc = weft_catalog_set_sequential_ids(cat, d->cfg.trace_ids)) < 0)
        weft_dlog(d, WEFT_LOG_ERROR, "trace_ids: %s",
                  weft_catalog_errmsg(cat));
    else if (rc == WEFT_ECORRUPT) {
        weft_dlog(d, WEFT_LOG_ERROR, "%s. weftd does not start on a damaged "
                  "catalog: nothing in the spool is lost (archives and "
                  "journals are in %s). Rebuild the catalog from the spool "
                  "with 'weft --catalog %s reindex %s' (it keeps the "
                  "damaged file beside it), then start weftd again",
                  msg ? msg : d->cfg.catalog, traces, d->cfg.catalog,
                  d->cfg.spool);
    } else if (rc < 0 && weft_catalog_disk_full(d->cfg.catalog)) {
        /* A full disk is no bad setup: SQLite cannot even make the
         * catalog's -shm file then. weftd serves what it can; catalog
         * writes fail and conversions are retried until there is room. */
        weft_dlog(d, WEFT_LOG_WARNING, "cannot open catalog: %s; its file "
                  "system is full: starting anyway, the catalog is written "
                  "once there is room", msg ? msg : d->cfg.catalog);
        rc = 0;
    } else if (rc < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot open catalog: %s",
                  msg ? msg : d->cfg.catalog);
    }
    free(msg);
    weft_catalog_close(cat);
    if (rc < 0)
        return -1;
    keep_private(d, NULL);
    if (weft_recover_spool(d) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot read spool %s: %s", traces,
                  strerror(errno));
        return -1;
    }
    return 0;
}

/* Ingest, wired: the server hands frames to the sessions, the journal
 * writer hands written entries back to them (session.h); what was
 * received is written (and synced, if asked) before the server closes
 * the connections. */
static void stop_ingest(weft_daemon *d)
{
    weft_jwriter_stop(d);
    weft_worker_stop(d->srv->syncer);  /* its last syncs come back, unacked */
}

static const weft_server_cbs ingest = { weft_session_frame,
                                        weft_session_closed,
                                        stop_ingest,
                                        weft_authn_challenge,
                                        weft_session_pending,
                                        weft_session_describe };

/* The status (status.c) asks ingest and the traces through these. */
static void status_ingest(const weft_daemon *d, weft_status_ingest *out)
{
    const weft_server *s = d->srv;

    out->conns = s->nconns;
    out->paused = 0;
    for (const weft_conn *c = s->conns; c; c = c->next)
        out->paused += (c->paused & (WEFT_PAUSE_PENDING |
                                     WEFT_PAUSE_BUFFERED)) != 0;
    out->buffered = s->buffered;
    out->fd_limit = s->fd_limit;
    out->bound = s->bound;
}

static uint64_t status_user_conns(const weft_daemon *d, uint32_t uid)
{
    uint64_t n = 0;

    for (const weft_conn *c = d->srv->conns; c; c = c->next)
        n += (c->charged && c->charged_uid == uid) ||
             (c->has_peer_uid && c->peer_uid == uid);
    return n;
}

static void status_conversions(const weft_daemon *d, unsigned *running,
                               unsigned *queued, unsigned *in_flight)
{
    weft_trace_conversions n = weft_trace_count_conversions(d);

    *running = n.running;
    *queued = n.queued;
    *in_flight = n.in_flight;
}

static const weft_status_src status_src = { status_ingest,
                                            status_user_conns,
                                            status_conversions,
                                            weft_live_status,
                                            weft_limit_name,
                                            weft_nodes_status,
                                            weft_uplink_status };

/* Starts the journal writer and the syncer (durability = fsync's
 * fdatasync batches, session.c), then the listeners. 0 or a WEFT_E*
 * code (logged). */
static int start_ingest(weft_daemon *d)
{
    int rc = weft_jwriter_start(d, weft_session_written);

    if (rc == 0 &&
        (rc = weft_worker_start(d->loop, 1, 0, &d->srv->syncer)) < 0)
        weft_jwriter_stop(d);
    if (rc < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot start the journal writer "
                  "and fsync threads: %s", weft_strerror(rc));
        return rc;
    }
    d->ask_cbs = &weft_ask_cbs;
    d->node_cbs = &weft_nodes_cbs;
    if (*d->cfg.cluster_head) { /* a node: its processes go to the head */
        d->forward_cbs = &weft_forward_cbs;
        d->part_cbs = &weft_part_cbs_node;
    }
    return weft_server_start(d, &ingest);
}

/* Lowers weftd's CPU priority to the configured nice value (one it was
 * started with that is lower stays). Before any thread starts: each takes
 * it from the thread that starts it (Linux's nice is per thread). weftd
 * shares its machine with the programs it traces, whose threads often
 * wait for each other (barriers, locks, messages): when they fill every
 * core, weftd's ingest taking one of them for a while stops all of them.
 * At a lower priority it takes the CPU when they leave it, and what it
 * has not taken in yet waits in the clients' buffers. */
static void lower_priority(weft_daemon *d)
{
    int now;

    errno = 0;
    now = getpriority(PRIO_PROCESS, 0);
    if ((now == -1 && errno != 0) || now >= (int)d->cfg.nice)
        return;
    if (setpriority(PRIO_PROCESS, 0, (int)d->cfg.nice) < 0)
        weft_dlog(d, WEFT_LOG_WARNING, "cannot set weftd's nice value to "
                  "%d (nice): %s", (int)d->cfg.nice, strerror(errno));
}

int main(int argc, char **argv)
{
    weft_daemon d;
    int check = 0, rc, lock_fd = -1;

    if (weft_daemon_init(&d) < 0) {
        fprintf(stderr, "weftd: out of memory\n");
        return 1;
    }
    d.status_src = &status_src;
    weft_config_init(&d.cfg);
    rc = parse_args(argc, argv, &d, &check);
    if (rc != 0 || check) {
        if (check && rc == 0)
            print_config(&d);
        weft_daemon_free(&d);
        weft_config_free(&d.cfg);
        return rc == 1 ? 0 : rc;
    }
    {
        char err[256];
        if (weft_testhook_init(&d.testhook, err, sizeof err) < 0) {
            fprintf(stderr, "weftd: %s\n", err);
            weft_daemon_free(&d);
            weft_config_free(&d.cfg);
            return 1;
        }
    }
    lower_priority(&d);
    d.loop = uv_default_loop();
    weft_server_raise_fd_limit(&d);
    if ((lock_fd = lock_spool(&d)) < 0 || prepare_storage(&d) < 0 ||
        adopt_sockets(&d) < 0 || start_ingest(&d) < 0 ||
        weft_uplink_start(&d) < 0 || weft_recover_parts(&d) < 0) {
        weft_server_stop(&d);
        uv_run(d.loop, UV_RUN_DEFAULT);
        weft_trace_free_all(&d);
        uv_loop_close(d.loop);
        weft_daemon_free(&d); /* its handles closed with the loop */
        weft_spool_unlock(lock_fd);
        weft_config_free(&d.cfg);
        return 1;
    }
    errno = 0;
    rc = getpriority(PRIO_PROCESS, 0);
    weft_dlog(&d, WEFT_LOG_INFO, "weftd %s ready: spool %s, catalog %s, "
              "nice %d", PACKAGE_VERSION, d.cfg.spool, d.cfg.catalog,
              errno ? 0 : rc);
    weft_authn_report(&d);
    weft_ask_report(&d);
    weft_retain_run(&d);
    d.started = (int64_t)time(NULL);
    if (weft_status_start(&d) < 0)
        weft_dlog(&d, WEFT_LOG_WARNING, "cannot start the status file's "
                  "writer thread: weft status will not see this weftd");
    weft_status_update(&d);
    uv_timer_init(d.loop, &d.tick);
    d.tick.data = &d;
    uv_timer_start(&d.tick, on_tick, 1000, 1000);
    uv_signal_init(d.loop, &d.sig_term);
    uv_signal_init(d.loop, &d.sig_int);
    d.sig_term.data = d.sig_int.data = &d;
    uv_signal_start(&d.sig_term, on_signal, SIGTERM);
    uv_signal_start(&d.sig_int, on_signal, SIGINT);
    uv_signal_init(d.loop, &d.sig_hup);
    d.sig_hup.data = &d;
    uv_signal_start(&d.sig_hup, on_hup, SIGHUP);
    sd_notify(0, "READY=1");
    uv_run(d.loop, UV_RUN_DEFAULT);
    weft_server_stop(&d); /* the unreferenced shutdown timer */
    weft_status_stop(&d); /* if no signal did */
    weft_uplink_stop(&d);
    uv_run(d.loop, UV_RUN_DEFAULT);
    weft_trace_free_all(&d);
    rc = uv_loop_close(d.loop);
    if (rc != 0)
        weft_dlog(&d, WEFT_LOG_WARNING, "loop closed with handles open: %s",
                  uv_strerror(rc));
    weft_daemon_free(&d); /* its handles closed with the loop */
    weft_dlog(&d, WEFT_LOG_INFO, "stopped");
    weft_spool_unlock(lock_fd);
    weft_config_free(&d.cfg);
    return 0;
}
