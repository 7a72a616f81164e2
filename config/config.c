/* config.c - weftd's configuration: defaults, INI file (libinih), flags.
 *
 * Every key lives in one table below with its section, type and limits,
 * so the file parser, the flag parser and --check-config agree.
 */
#include "weftd_config.h"

#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft_errors.h"

enum key_type { K_STRING, K_SIZE, K_COUNT, K_ENUM };

static const char *const durability_names[] = { "write", "fsync", NULL };
static const char *const trace_ids_names[] = { "random", "sequential",
                                               NULL };
static const char *const level_names[] = { "error", "warning", "info",
                                           "debug", NULL };
static const char *const auth_names[] = { "munge", "none", NULL };
static const char *const yes_no_names[] = { "no", "yes", NULL };

typedef struct key_desc {
    const char *section;
    const char *name;
    enum key_type type;
    size_t offset;
    uint64_t min, max;   /* K_SIZE, K_COUNT */
    const char *help;
    const char *const *names; /* K_ENUM: an int field, the index of its
                                 value in this NULL-terminated list */
} key_desc;

#define OFF(field) offsetof(weft_config, field)
static const key_desc keys[] = {
    { "weftd", "listen", K_STRING, OFF(listen), 0, 0,
      "TCP address HOST:PORT to listen on (empty: no TCP)", NULL },
    { "weftd", "socket", K_STRING, OFF(socket), 0, 0,
      "Unix socket path to listen on (empty: none); default "
      "SPOOL/weftd.sock, where the weft command of users who cannot read "
      "the catalog asks weftd", NULL },
    { "weftd", "spool", K_STRING, OFF(spool), 0, 0,
      "directory for journals and archives", NULL },
    { "weftd", "catalog", K_STRING, OFF(catalog), 0, 0,
      "SQLite catalog file (default: SPOOL/catalog.db)", NULL },
    { "weftd", "durability", K_ENUM, OFF(durability), 0, 0,
      "write: ack once a batch is written to the journal (survives a weftd "
      "crash); fsync: ack once it is on stable storage, fsyncs batched "
      "(survives power loss)", durability_names },
    { "weftd", "trace_ids", K_ENUM, OFF(trace_ids), 0, 0,
      "how new traces get their ids: random (never one given before, so "
      "that ids tell no user how many traces others made) or sequential "
      "(one above the highest: short ids, for a machine with one user)",
      trace_ids_names },
    { "weftd", "log_level", K_ENUM, OFF(log_level), 0, 0,
      "error, warning, info or debug", level_names },
    { "weftd", "auth", K_ENUM, OFF(auth), 0, 0,
      "how a TCP client's uid is known: munge (a MUNGE credential) or none "
      "(its claim is believed: single-user machines only)", auth_names },
    { "weftd", "munge_socket", K_STRING, OFF(munge_socket), 0, 0,
      "munged's socket (empty: libmunge's default, "
      "/run/munge/munge.socket.2)", NULL },
    { "weftd", "admin_group", K_STRING, OFF(admin_group), 0, 0,
      "members of this group see every user's traces with the weft command "
      "(as root does); empty: none", NULL },
    { "weftd", "grace_period", K_COUNT, OFF(grace_period), 1, 30 * 86400,
      "seconds a trace waits with no process connected before it is "
      "converted with what arrived (marked partial)", NULL },
    { "weftd", "abort_grace_period", K_COUNT, OFF(abort_grace_period), 1,
      30 * 86400,
      "seconds a trace waits with no process connected once one of them "
      "ended abnormally (MPI_Abort, a fatal signal: the launcher is ending "
      "the job), if shorter than grace_period", NULL },
    /* max: WEFT_CONVERT_MAX_THREADS (convert.h) */
    { "weftd", "convert_threads", K_COUNT, OFF(convert_threads), 0, 8,
      "threads converting the members of one trace at once (0: one per "
      "online CPU, at most 8)", NULL },
    { "weftd", "max_conversions", K_COUNT, OFF(max_conversions), 1, 64,
      "finished traces converted at once; the others wait their turn, "
      "taken round robin by owner (uid)", NULL },
    { "weftd", "nice", K_COUNT, OFF(nice), 0, 19,
      "weftd's nice value, 0 to 19 (a higher one it was started with "
      "stays): on a full machine its work waits for the traced programs' "
      "threads instead of stopping them", NULL },
    { "weftd", "write_while_recording", K_ENUM,
      OFF(write_while_recording), 0, 0,
      "yes: each process's events go into its trace's archive as they "
      "arrive, so that the archive is ready about when the trace ends; no: "
      "the whole archive is written when the trace ends", yes_no_names },
    /* min: the fixed part and 8 writers (convert.h) */
    { "weftd", "convert_memory", K_SIZE, OFF(convert_memory), 32u << 20,
      UINT64_C(1) << 40, "bytes of libotf2 event buffers one conversion "
      "may hold (256 KiB per location being written); a process with more "
      "threads than fit is converted in groups of threads, one pass over "
      "its journal each", NULL },
    { "weftd", "live_interval", K_COUNT, OFF(live_interval), 0, 3600,
      "seconds between updates of the catalog rows of traces still "
      "recording with the figures received so far (0: never; the figures "
      "then appear when the trace is converted)", NULL },
    { "weftd", "retention_days", K_COUNT, OFF(retention_days), 0, 36500,
      "finished traces older than this many days are removed, archive and "
      "all; their catalog rows stay as removed (0: keep them)", NULL },
    { "weftd", "max_spool_bytes", K_SIZE, OFF(max_spool_bytes), 0,
      UINT64_C(1) << 60, "beyond this many bytes of traces in the spool the "
      "oldest finished ones are removed (0: no bound)", NULL },
    { "limits", "max_frame", K_SIZE, OFF(max_frame), 1024, 1u << 30,
      "largest frame accepted from a client, bytes", NULL },
    { "limits", "max_connections", K_COUNT, OFF(max_connections), 1, 1000000,
      "connections served at once", NULL },
    { "limits", "listen_backlog", K_COUNT, OFF(listen_backlog), 1, 65535,
      "connections the kernel queues before weftd accepts them (a job's "
      "processes connect at once; beyond it each waits 1 s or more; capped "
      "at net.core.somaxconn)", NULL },
    { "limits", "max_connections_per_user", K_COUNT,
      OFF(max_connections_per_user), 1, 1000000,
      "connections of one user (uid) that said Hello, served at once", NULL },
    { "limits", "reserved_connections", K_COUNT,
      OFF(reserved_connections), 0, 1024, "Unix socket connections (and "
      "their file descriptors) beyond max_connections kept for root, "
      "weftd's own user and admin_group", NULL },
    { "limits", "max_conn_pending", K_SIZE, OFF(max_conn_pending), 1024,
      1u << 30, "reply bytes queued for a client that does not read them "
      "before weftd stops reading from it (backpressure)", NULL },
    { "limits", "max_buffered", K_SIZE, OFF(max_buffered), 64u << 10,
      UINT64_C(1) << 40, "bytes of frames received but not yet journaled, "
      "over all connections; at this weftd stops starting new frames (TCP "
      "slows the clients) until they are below three quarters of it", NULL },
    { "limits", "idle_timeout", K_COUNT, OFF(idle_timeout), 0, 86400,
      "seconds a connection may take to send its Hello, or to finish a "
      "frame it began, before it is closed with an error (0: never)", NULL },
    { "limits", "session_timeout", K_COUNT, OFF(session_timeout), 0,
      30 * 86400, "seconds a session that said Hello may send nothing (not "
      "even libweft's heartbeat) before it is closed (0: never)", NULL },
    { "limits", "shutdown_timeout", K_COUNT, OFF(shutdown_timeout), 1, 3600,
      "seconds SIGTERM waits for frames in progress, replies and running "
      "conversions before weftd exits anyway", NULL },
    { "limits", "max_string", K_SIZE, OFF(max_string), 16, 1u << 24,
      "longest string in a definition, bytes", NULL },
    /* At most what conversion's unifier takes (WEFT_UNIFY_DEFAULT_MAX_IDS
     * in unify.h): ids ingest acknowledged must convert. */
    { "limits", "max_definitions", K_COUNT, OFF(max_definitions), 16,
      1u << 24, "definition ids per member and id space", NULL },
    { "limits", "max_definition_bytes", K_SIZE, OFF(max_definition_bytes),
      64u << 10, UINT64_C(1) << 40, "bytes of definitions per trace, all "
      "its processes, each definition counted with 64 more; the "
      "Definitions beyond are refused", NULL },
    { "limits", "max_questions_per_user", K_COUNT,
      OFF(max_questions_per_user), 1, 64, "questions of one user's weft "
      "command answered at once (answers being sent included); more are "
      "refused", NULL },
    { "limits", "max_locations", K_COUNT, OFF(max_locations), 1, 1u << 20,
      "threads (locations) per member", NULL },
    { "limits", "max_traces_per_user", K_COUNT, OFF(max_traces_per_user), 1,
      1u << 20, "traces of one user (uid) recording at once", NULL },
    { "limits", "max_user_spool_bytes", K_SIZE, OFF(max_user_spool_bytes),
      0, UINT64_C(1) << 60, "bytes of traces one user may hold in the spool, "
      "journals counted as they arrive: past it their batches are refused "
      "and counted as dropped, their new traces refused (0: no bound)",
      NULL },
    { "limits", "min_free_spool_bytes", K_SIZE, OFF(min_free_spool_bytes),
      0, UINT64_C(1) << 60, "free bytes weftd leaves on the spool's file "
      "system (statvfs f_bavail): below it batches are refused and counted "
      "as dropped, new traces refused (0: no reserve)", NULL },
    { "limits", "max_members", K_COUNT, OFF(max_members), 1, 1u << 24,
      "processes (members) per trace", NULL },
    { "limits", "max_members_per_user", K_COUNT, OFF(max_members_per_user),
      1, 1u << 24, "processes (members) of one user's recording traces, in "
      "all", NULL },
    { "limits", "max_open_journals", K_COUNT, OFF(max_open_journals), 16,
      1000000, "member journals kept open at once; the least recently "
      "written idle one is closed and reopened at its next batch", NULL },
    { "limits", "max_preauth_connections", K_COUNT,
      OFF(max_preauth_connections), 1, 1000000, "TCP connections whose "
      "user is not known yet (no Auth accepted), in all; beyond it the "
      "oldest of them is closed", NULL },
    { "limits", "max_preauth_per_address", K_COUNT,
      OFF(max_preauth_per_address), 1, 1000000, "TCP connections whose "
      "user is not known yet from one source address; beyond it the "
      "oldest of that address is closed", NULL },
    { "limits", "max_preauth_buffered", K_SIZE, OFF(max_preauth_buffered),
      4096, 1u << 30, "bytes of frames received from connections whose "
      "user is not known yet, in all (apart from max_buffered); beyond it "
      "the oldest of them holding a partial frame is closed", NULL },
    { "limits", "max_preauth_frame", K_SIZE, OFF(max_preauth_frame), 1024,
      64u << 10, "largest frame accepted from a connection whose user is "
      "not known yet (its Auth)", NULL },
    { "limits", "preauth_timeout", K_COUNT, OFF(preauth_timeout), 1, 3600,
      "seconds from accept within which a TCP connection's user must be "
      "known (its Auth accepted); not renewed by anything it sends", NULL },
    { "limits", "max_log_refusals", K_COUNT, OFF(max_log_refusals), 1,
      1000000, "refusals logged per second for each cause (each limit), and "
      "lines a peer causes at will (connlog.h); the others are counted and "
      "the next line logged says how many",
      NULL },
    { "cluster", "head", K_STRING, OFF(cluster_head), 0, 0,
      "HOST:PORT of the cluster's head weftd, which this weftd joins as a "
      "node (empty: this weftd is its own head); restart to change",
      NULL },
    { "cluster", "node_name", K_STRING, OFF(node_name), 0, 0,
      "this node's name at its head, unique in the cluster (empty: the "
      "host name); restart to change", NULL },
    { "cluster", "archive_root", K_STRING, OFF(archive_root), 0, 0,
      "directory (a shared or parallel file system) where the archives of "
      "new traces are written, ROOT/KEY/archive, their journals staying "
      "in the spool (empty: in the spool); restart to change", NULL },
    { "cluster", "write_events", K_ENUM, OFF(write_events), 0, 0,
      "a node's: yes: where it sees the head's archive_root, it journals "
      "its processes and writes their event files there; no: it forwards "
      "them to the head", yes_no_names },
    { "cluster", "heartbeat", K_COUNT, OFF(cluster_heartbeat), 1, 3600,
      "seconds between Heartbeats on a node's link, both ways (the head's "
      "value counts); three missed close it; restart to change", NULL },
};
#define NKEYS (sizeof keys / sizeof keys[0])

static char *default_spool(void)
{
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    const char *sd_state = getenv("STATE_DIRECTORY");
    char buf[PATH_MAX];

    /* systemd's StateDirectory=weft (weftd.service), so the unit needs no
     * --spool flag that would beat the file's spool. */
    if (sd_state && *sd_state && !strchr(sd_state, ':'))
        return strdup(sd_state);
    if (geteuid() == 0)
        return strdup(WEFT_SYSTEM_SPOOL);
    if (state && *state)
        snprintf(buf, sizeof buf, "%s/weft", state);
    else if (home && *home)
        snprintf(buf, sizeof buf, "%s/.local/state/weft", home);
    else
        snprintf(buf, sizeof buf, "./weft-spool");
    return strdup(buf);
}

void weft_config_init(weft_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = strdup(WEFT_DEFAULT_LISTEN);
    c->socket = strdup("");
    c->spool = default_spool();
    c->catalog = strdup("");
    c->munge_socket = strdup("");
    c->admin_group = strdup("");
    c->cluster_head = strdup("");
    c->node_name = strdup("");
    c->archive_root = strdup("");
    c->cluster_heartbeat = 5;
    c->write_events = 1;
    c->log_level = 2;
    c->grace_period = 300;
    c->abort_grace_period = 5;
    c->max_conversions = 2;
    c->nice = 19;
    c->write_while_recording = 1;
    c->live_interval = 2;
    c->max_frame = 4u << 20;
    c->max_connections = 4096;
    c->max_connections_per_user = 3072;
    c->reserved_connections = 16;
    c->listen_backlog = 4096;
    c->max_conn_pending = 1u << 20;
    c->max_buffered = 64u << 20;
    c->idle_timeout = 300;
    c->session_timeout = 3600;
    c->shutdown_timeout = 10;
    c->max_string = 64u << 10;
    c->max_definitions = 1u << 20;
    c->max_definition_bytes = 256u << 20;
    c->max_questions_per_user = 4;
    c->max_locations = 4096;
    c->convert_memory = 256u << 20;
    c->max_members = 1u << 20;
    c->max_traces_per_user = 256;
    c->max_members_per_user = 16384;
    c->max_open_journals = 1024;
    c->max_preauth_connections = 256;
    c->max_preauth_per_address = 64;
    c->max_preauth_buffered = 1u << 20;
    c->max_preauth_frame = 16u << 10;
    c->preauth_timeout = 10;
    c->max_log_refusals = 20;
    c->max_user_spool_bytes = UINT64_C(10) << 30;
    c->min_free_spool_bytes = UINT64_C(1) << 30;
}

void weft_config_free(weft_config *c)
{
    free(c->listen);
    free(c->socket);
    free(c->spool);
    free(c->catalog);
    free(c->munge_socket);
    free(c->admin_group);
    free(c->cluster_head);
    free(c->node_name);
    free(c->archive_root);
    free(c->address_file);
    memset(c, 0, sizeof *c);
}

const char *weft_config_default_path(void)
{
    const char *env = getenv("WEFT_CONFIG");

    return env && *env ? env : WEFT_CONFIG_PATH;
}

__attribute__((format(printf, 3, 4)))
/* Longest line of weftd.conf, newline excluded: libinih reads lines into
 * a buffer of INI_MAX_LINE bytes and takes the rest of a longer one for
 * a line of its own. Every line weft_config_print writes fits. */
#define MAX_LINE (INI_MAX_LINE - 2)

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return WEFT_ECONFIG;
}

/* Parses "123", "64k", "4M", "1G" (powers of 1024). */
static int parse_size(const char *s, int allow_suffix, uint64_t *out);

int weft_config_parse_size(const char *s, uint64_t *out)
{
    return parse_size(s, 1, out);
}

static int parse_size(const char *s, int allow_suffix, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mul = 1;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    if (allow_suffix && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
    }
    if (*end || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

int weft_config_set(weft_config *c, const char *section, const char *key,
                    const char *value, char *err, size_t errlen)
{
    const key_desc *k = NULL;

    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(keys[i].name, key) == 0 &&
            (!section || strcmp(keys[i].section, section) == 0)) {
            k = &keys[i];
            break;
        }
    }
    if (!k && !section)
        return fail(err, errlen, "unknown key '%s'", key);
    if (!k)
        return fail(err, errlen, "unknown key '%s' in section [%s]", key,
                    section);
    switch (k->type) {
    case K_STRING: {
        char **field = (char **)((char *)c + k->offset);
        size_t n = strlen(value);
        char *copy;
        /* What weftd --check-config prints must read back the same: in
         * the file a ';' after a blank starts a comment, blanks around a
         * value are dropped, and a line ends at a control character. */
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f ||
                value[i] == ';')
                return fail(err, errlen, "%s: a %s in its value (0x%02x "
                            "at byte %zu)", key, value[i] == ';' ?
                            "';' (a comment in weftd.conf)" :
                            "control character", (unsigned char)value[i], i);
        if (n && (value[0] == ' ' || value[n - 1] == ' '))
            return fail(err, errlen, "%s = '%s': blanks around the value",
                        key, value);
        if (strlen(key) + 3 + n > MAX_LINE)
            return fail(err, errlen, "%s: a value of %zu bytes (weftd.conf "
                        "lines hold at most %d bytes: %zu for this key's)",
                        key, n, MAX_LINE, MAX_LINE - strlen(key) - 3);
        copy = strdup(value);
        if (!copy)
            return fail(err, errlen, "out of memory");
        free(*field);
        *field = copy;
        if (field == &c->socket)
            c->socket_set = 1;
        return 0;
    }
    case K_ENUM: {
        char expected[128] = "";
        size_t n = 0;
        for (int i = 0; k->names[i]; i++) {
            if (strcmp(value, k->names[i]) == 0) {
                *(int *)((char *)c + k->offset) = i;
                return 0;
            }
            n += (size_t)snprintf(expected + n, sizeof expected - n, "%s%s",
                                  i == 0 ? "" : k->names[i + 1] ? ", "
                                                                : " or ",
                                  k->names[i]);
        }
        return fail(err, errlen, "%s = '%s': expected %s", key, value,
                    expected);
    }
    case K_SIZE:
    case K_COUNT: {
        uint64_t v;
        if (parse_size(value, k->type == K_SIZE, &v) < 0)
            return fail(err, errlen, "%s = '%s': not a %s", key, value,
                        k->type == K_SIZE ? "size (e.g. 4096, 64k, 4M)"
                                          : "whole number");
        if (v < k->min || v > k->max)
            return fail(err, errlen, "%s = %" PRIu64 ": must be between %"
                        PRIu64 " and %" PRIu64, key, v, k->min, k->max);
        *(uint64_t *)((char *)c + k->offset) = v;
        return 0;
    }
    }
    return fail(err, errlen, "internal error on key %s", key);
}

/* Debian's libinih has no line number in the handler; ini_parse_file
 * returns the line of the first error, so the message is kept here and
 * prefixed with it afterwards. */
typedef struct load_ctx {
    weft_config *c;
    char msg[384];
    int failed;
} load_ctx;

static int on_ini(void *arg, const char *section, const char *name,
                  const char *value)
{
    load_ctx *ctx = arg;

    if (ctx->failed)
        return 0;
    if (!name)
        return 1; /* a section header alone */
    if (weft_config_set(ctx->c, section, name, value, ctx->msg,
                        sizeof ctx->msg) < 0) {
        ctx->failed = 1;
        return 0;
    }
    return 1;
}

/* libinih's reader: fgets, but a line longer than libinih's buffer
 * stops the parse (libinih would take its rest for a line of its own),
 * saying which. Reads from pipes too (no seeking). */
typedef struct line_reader {
    FILE *f;
    int line;
    int too_long;      /* the number of the line too long, or 0 */
} line_reader;

static char *read_line(char *str, int num, void *stream)
{
    line_reader *lr = stream;
    char *s = fgets(str, num, lr->f);
    size_t n;
    int ch;

    if (!s)
        return NULL;
    lr->line++;
    n = strlen(s);
    if (n + 1 < (size_t)num || s[n - 1] == '\n')
        return s;
    ch = getc(lr->f);  /* the buffer is full: is the line? */
    if (ch == '\n' || ch == EOF)
        return s;
    lr->too_long = lr->line;
    return NULL;
}

int weft_config_load_file(weft_config *c, const char *path, int missing_ok,
                          char *err, size_t errlen)
{
    load_ctx ctx = { .c = c };
    line_reader lr = { 0 };
    FILE *f = fopen(path, "r");
    int rc;

    if (!f) {
        if (errno == ENOENT && missing_ok)
            return 0;
        return fail(err, errlen, "cannot open configuration %s: %s", path,
                    strerror(errno));
    }
    lr.f = f;
    rc = ini_parse_stream(read_line, &lr, on_ini, &ctx);
    fclose(f);
    if (lr.too_long)
        return fail(err, errlen, "%s:%d: a line longer than %d bytes "
                    "(weftd.conf lines hold at most %d)", path, lr.too_long,
                    INI_MAX_LINE - 1, INI_MAX_LINE - 1);
    if (ctx.failed)
        return fail(err, errlen, "%s:%d: %s", path, rc, ctx.msg);
    if (rc != 0)
        return fail(err, errlen, "%s:%d: syntax error (expected "
                    "'[section]' or 'key = value')", path, rc);
    return 0;
}

int weft_config_finish(weft_config *c, char *err, size_t errlen)
{
    if (!*c->spool)
        return fail(err, errlen, "spool must not be empty");
    if (!c->socket_set && !*c->socket) {
        /* beside the catalog, where users' weft finds it; none when the
         * path is too long for a socket (sun_path: 108 bytes) */
        char *p = NULL;
        if (strlen(c->spool) + sizeof "/weftd.sock" <= 108 &&
            asprintf(&p, "%s/weftd.sock", c->spool) < 0)
            return fail(err, errlen, "out of memory");
        if (p) {
            free(c->socket);
            c->socket = p;
        }
    }
    if (!*c->listen && !*c->socket)
        return fail(err, errlen, "nothing to listen on: set listen or "
                    "socket");
    if (*c->listen && !strrchr(c->listen, ':'))
        return fail(err, errlen, "listen = '%s': expected HOST:PORT",
                    c->listen);
    if (*c->cluster_head && !strrchr(c->cluster_head, ':'))
        return fail(err, errlen, "[cluster] head = '%s': expected HOST:PORT",
                    c->cluster_head);
    if (*c->archive_root && c->archive_root[0] != '/')
        return fail(err, errlen, "[cluster] archive_root = '%s': expected "
                    "an absolute path", c->archive_root);
    if (strlen(c->archive_root) > WEFT_ARCHIVE_ROOT_MAX)
        return fail(err, errlen, "[cluster] archive_root: a path of %zu "
                    "bytes; at most %d", strlen(c->archive_root),
                    WEFT_ARCHIVE_ROOT_MAX);
    if (!*c->catalog) {
        size_t n = strlen(c->spool) + sizeof "/catalog.db";
        if (strlen("catalog = ") + n - 1 > MAX_LINE)
            return fail(err, errlen, "spool: a path of %zu bytes leaves no "
                        "room for its catalog's, SPOOL/catalog.db, in a "
                        "weftd.conf line (%d bytes); set catalog",
                        strlen(c->spool), MAX_LINE);
        char *p = malloc(n);
        if (!p)
            return fail(err, errlen, "out of memory");
        snprintf(p, n, "%s/catalog.db", c->spool);
        free(c->catalog);
        c->catalog = p;
    }
    return 0;
}

void weft_config_print(const weft_config *c, FILE *out)
{
    const char *section = "";

    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &keys[i];
        if (strcmp(section, k->section) != 0) {
            fprintf(out, "%s[%s]\n", *section ? "\n" : "", k->section);
            section = k->section;
        }
        fprintf(out, "# %s\n%s = ", k->help, k->name);
        switch (k->type) {
        case K_STRING:
            fprintf(out, "%s\n", *(char *const *)((const char *)c + k->offset));
            break;
        case K_ENUM:
            fprintf(out, "%s\n",
                    k->names[*(const int *)((const char *)c + k->offset)]);
            break;
        default:
            fprintf(out, "%" PRIu64 "\n",
                    *(const uint64_t *)((const char *)c + k->offset));
            break;
        }
    }
}
