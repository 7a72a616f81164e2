/* view.c - weft view TRACE... [--port N] [--open]: an interactive viewer
 * of the traces' events, served to a browser on this machine.
 *
 * DESIGN
 * The command reads each archive's region visits once (view_index.c),
 * then serves with libmicrohttpd, on 127.0.0.1 only, the page (cli/
 * view_page.html, built into the program) and the JSON the page asks
 * for: api/traces (what each trace has), api/window (what a window of
 * the timeline shows, view_index.h), api/span (one visit's details),
 * api/summary (what a window's visits add up to) and api/find (a text's
 * regions' visits: how many, the next, the previous; view_summary.c).
 * Every path begins with a random token (128 bits from getrandom) that
 * only the printed URL holds: another user of the machine reaches the
 * port but not the traces (403). The server runs as the user, so it
 * reads only archives the user may read, and serves only the traces
 * named on the command line: any other index is "no trace". Answers are
 * JSON built per request from the read-only index, by libmicrohttpd's
 * one thread, so no locking. It serves until SIGINT, SIGTERM or SIGHUP.
 * The index of a trace is made once, the first time it is viewed, into
 * a file of the user's cache (view_file.c), and mapped from there; an
 * answer reads a few pages of it per column, which are let go of after
 * it (MADV_DONTNEED: they stay in the page cache, shared and
 * reclaimable, not in the viewer's memory), so the viewer's memory does
 * not grow with the places looked at.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <microhttpd.h>

#include "archive.h"
#include "cli.h"
#include "out.h"
#include "view_index.h"
#include "view_page.h"
#include "weftd_config.h"

/* Locations one api/window request may name (locs=). */
#define VIEW_LOCS_MAX 65536
/* Connections at once, and seconds an idle one is kept. */
#define VIEW_CONNECTIONS 64
#define VIEW_IDLE_S 60

typedef struct viewer {
    weft__view *views;
    size_t nviews;
    char token[33];          /* hex */
    char prefix[36];         /* "/" token "/" */
} viewer;

/* ---- answers ------------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status,
                              const char *type, char *body, size_t len,
                              enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, mode);
    enum MHD_Result ok;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    /* the page loads nothing but its own API: no other origin at all */
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; "
                            "style-src 'unsafe-inline'; img-src data:; "
                            "connect-src 'self'; base-uri 'none'; "
                            "form-action 'none'; frame-ancestors 'none'");
    ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* The JSON o (taken) as the answer, or 500 when out of memory. */
static enum MHD_Result answer_json(struct MHD_Connection *conn,
                                   unsigned status, json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    if (!s) {
        static char oom[] = "{\"error\":\"out of memory\"}";
        return answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
                      "application/json", oom, sizeof oom - 1,
                      MHD_RESPMEM_PERSISTENT);
    }
    return answer(conn, status, "application/json", s, strlen(s),
                  MHD_RESPMEM_MUST_FREE);
}

__attribute__((format(printf, 3, 4)))
static enum MHD_Result fail(struct MHD_Connection *conn, unsigned status,
                            const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return answer_json(conn, status, json_pack("{ss}", "error", msg));
}

/* ---- arguments ----------------------------------------------------------- */

/* Query argument `name` as a decimal number up to max: 1 with *v, 0 when
 * absent, -1 when not such a number. */
static int arg_u64(struct MHD_Connection *conn, const char *name,
                   uint64_t max, uint64_t *v)
{
    const char *s = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
                                                name);
    char *end;

    if (!s)
        return 0;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno || *end || *v > max ? -1 : 1;
}

/* The trace= argument: 1 with *v, else the answer was sent (*sent). */
static const weft__view *arg_trace(const viewer *vw,
                                   struct MHD_Connection *conn,
                                   enum MHD_Result *sent)
{
    uint64_t i;
    int r = arg_u64(conn, "trace", UINT32_MAX, &i);

    if (r <= 0) {
        *sent = fail(conn, MHD_HTTP_BAD_REQUEST,
                     "trace: %s", r ? "not a number" : "missing");
        return NULL;
    }
    if (i >= vw->nviews) {
        *sent = fail(conn, MHD_HTTP_NOT_FOUND, "no trace %" PRIu64, i);
        return NULL;
    }
    return &vw->views[i];
}

/* The location index of OTF2 location id loc in v, or SIZE_MAX. */
static size_t loc_index(const weft__view *v, uint64_t loc)
{
    for (size_t i = 0; i < v->nlocs; i++)
        if (v->locs[i].loc == loc)
            return i;
    return SIZE_MAX;
}

/* locs=A,B,... into *out (malloc'd, *n of them; NULL: all). Returns an
 * error message (then *out is NULL) or NULL. */
static const char *arg_locs(struct MHD_Connection *conn, const weft__view *v,
                            size_t **out, size_t *n)
{
    const char *s = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
                                                "locs");
    const char *bad = NULL;
    size_t cap = 0;

    *out = NULL;
    *n = 0;
    if (!s)
        return NULL;
    while (*s && !bad) {
        char *end;
        uint64_t loc;
        size_t i;

        if (*s < '0' || *s > '9') {
            bad = "locs: not a list of location ids";
            break;
        }
        errno = 0;
        loc = strtoull(s, &end, 10);
        if (errno || (*end && *end != ','))
            bad = "locs: not a list of location ids";
        else if ((i = loc_index(v, loc)) == SIZE_MAX)
            bad = "locs: no such location";
        else if (*n == VIEW_LOCS_MAX)
            bad = "locs: too many";
        if (bad)
            break;
        if (*n == cap) {
            size_t *m = realloc(*out, (cap = cap ? cap * 2 : 16) * sizeof *m);
            if (!m) {
                bad = "out of memory";
                break;
            }
            *out = m;
        }
        (*out)[(*n)++] = i;
        s = *end ? end + 1 : end;
    }
    if (!bad && !*n)
        bad = "locs: empty";
    if (bad) {          /* the caller has nothing to free */
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return bad;
}

/* ---- the API -------------------------------------------------------------- */

static enum MHD_Result api_traces(const viewer *vw,
                                  struct MHD_Connection *conn)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < vw->nviews; i++)
        if (json_array_append_new(arr, weft__view_describe(&vw->views[i],
                                                           i)) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    return answer_json(conn, MHD_HTTP_OK,
                       arr ? json_pack("{so}", "traces", arr) : NULL);
}

static enum MHD_Result api_window(const viewer *vw,
                                  struct MHD_Connection *conn)
{
    enum MHD_Result sent;
    const weft__view *v = arg_trace(vw, conn, &sent);
    uint64_t t0, t1, px;
    size_t *locs, n;
    const char *bad;
    json_t *o;

    if (!v)
        return sent;
    if (arg_u64(conn, "t0", INT64_MAX, &t0) <= 0 ||
        arg_u64(conn, "t1", INT64_MAX, &t1) <= 0)
        return fail(conn, MHD_HTTP_BAD_REQUEST,
                    "t0 and t1: ticks since the trace's start, t0 < t1");
    if (t0 >= t1)
        return fail(conn, MHD_HTTP_BAD_REQUEST, "t0 must be before t1");
    if (arg_u64(conn, "px", WEFT__VIEW_PX_MAX, &px) <= 0 || px == 0)
        return fail(conn, MHD_HTTP_BAD_REQUEST,
                    "px: the columns drawn, 1 to %d", WEFT__VIEW_PX_MAX);
    if ((bad = arg_locs(conn, v, &locs, &n)))
        return fail(conn, MHD_HTTP_BAD_REQUEST, "%s", bad);
    o = weft__view_window(v, t0, t1, (unsigned)px, locs, n);
    free(locs);
    if (o)
        json_object_set_new(o, "trace", json_integer((json_int_t)(v - vw->views)));
    return answer_json(conn, MHD_HTTP_OK, o);
}

static enum MHD_Result api_span(const viewer *vw,
                                struct MHD_Connection *conn)
{
    enum MHD_Result sent;
    const weft__view *v = arg_trace(vw, conn, &sent);
    uint64_t loc, depth, t;
    size_t i;
    int missing;
    json_t *o;

    if (!v)
        return sent;
    if (arg_u64(conn, "loc", UINT64_MAX, &loc) <= 0 ||
        arg_u64(conn, "depth", WEFT__VIEW_DEPTH_MAX, &depth) <= 0 ||
        arg_u64(conn, "t", INT64_MAX, &t) <= 0)
        return fail(conn, MHD_HTTP_BAD_REQUEST,
                    "loc, depth and t: a location id, a depth, ticks");
    if ((i = loc_index(v, loc)) == SIZE_MAX)
        return fail(conn, MHD_HTTP_NOT_FOUND, "no location %" PRIu64, loc);
    o = weft__view_span(v, i, (unsigned)depth, t, &missing);
    if (missing)
        return fail(conn, MHD_HTTP_NOT_FOUND,
                    "no region at depth %" PRIu64 " at that time", depth);
    return answer_json(conn, MHD_HTTP_OK, o);
}

/* The t0= and t1= arguments of a summary or a search: both optional
 * (the whole trace: 0 to one tick past its last event). Returns an error
 * message or NULL. */
static const char *arg_window(struct MHD_Connection *conn,
                              const weft__view *v, uint64_t *t0,
                              uint64_t *t1)
{
    *t0 = 0;
    *t1 = v->length + 1;
    if (arg_u64(conn, "t0", INT64_MAX, t0) < 0 ||
        arg_u64(conn, "t1", INT64_MAX, t1) < 0)
        return "t0 and t1: ticks since the trace's start, t0 < t1";
    return *t0 < *t1 ? NULL : "t0 must be before t1";
}

static enum MHD_Result api_summary(const viewer *vw,
                                   struct MHD_Connection *conn)
{
    enum MHD_Result sent;
    const weft__view *v = arg_trace(vw, conn, &sent);
    uint64_t t0, t1;
    size_t *locs, n;
    const char *bad;
    json_t *o;

    if (!v)
        return sent;
    if ((bad = arg_window(conn, v, &t0, &t1)) ||
        (bad = arg_locs(conn, v, &locs, &n)))
        return fail(conn, MHD_HTTP_BAD_REQUEST, "%s", bad);
    o = weft__view_summary(v, t0, t1, locs, n);
    free(locs);
    return answer_json(conn, MHD_HTTP_OK, o);
}

/* api/find: the count of a text's regions' visits in a window, or with
 * after= or before= the next or previous one (view_index.h), from the
 * visit at loc= and depth= starting then when they are given (the one a
 * step found: one of another place starting at the same tick is next). */
static enum MHD_Result api_find(const viewer *vw, struct MHD_Connection *conn)
{
    enum MHD_Result sent;
    const weft__view *v = arg_trace(vw, conn, &sent);
    const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
                                                "q");
    uint64_t t0, t1, t, loc, depth = 0;
    size_t *locs = NULL, n, ci = SIZE_MAX;
    const char *bad = NULL;
    int after, before, has_loc;
    json_t *o;

    if (!v)
        return sent;
    has_loc = arg_u64(conn, "loc", UINT64_MAX, &loc);
    if (has_loc < 0 || (has_loc && arg_u64(conn, "depth",
                                           WEFT__VIEW_DEPTH_MAX, &depth) <= 0))
        return fail(conn, MHD_HTTP_BAD_REQUEST,
                    "loc and depth: a location id and a depth, together");
    if (has_loc && (ci = loc_index(v, loc)) == SIZE_MAX)
        return fail(conn, MHD_HTTP_NOT_FOUND, "no location %" PRIu64, loc);
    after = arg_u64(conn, "after", INT64_MAX, &t);
    before = after ? 0 : arg_u64(conn, "before", INT64_MAX, &t);
    if (after < 0 || before < 0)
        return fail(conn, MHD_HTTP_BAD_REQUEST,
                    "after and before: ticks since the trace's start");
    if (after && MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
                                             "before"))
        return fail(conn, MHD_HTTP_BAD_REQUEST, "after or before, not both");
    if ((bad = arg_window(conn, v, &t0, &t1)) ||
        (bad = arg_locs(conn, v, &locs, &n)))
        return fail(conn, MHD_HTTP_BAD_REQUEST, "%s", bad);
    if (after || before)
        o = weft__view_find_next(v, q, t, ci, (unsigned)depth, after ? 1 : -1,
                                 locs, n, &bad);
    else
        o = weft__view_find(v, q, t0, t1, locs, n, &bad);
    free(locs);
    if (bad)
        return fail(conn, MHD_HTTP_BAD_REQUEST, "%s", bad);
    return answer_json(conn, MHD_HTTP_OK, o);
}

/* Constant-time comparison of the token part of a path. */
static int token_ok(const viewer *vw, const char *url)
{
    size_t n = strlen(vw->prefix);
    unsigned diff = 0;

    if (strlen(url) < n)
        return 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(url[i] ^ vw->prefix[i]);
    return diff == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version,
                                  const char *upload_data,
                                  size_t *upload_size, void **state)
{
    const viewer *vw = cls;
    const char *path;

    (void)version, (void)upload_data, (void)state;
    if (*upload_size)
        return fail(conn, MHD_HTTP_BAD_REQUEST, "no request body expected");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return fail(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only");
    if (!token_ok(vw, url))
        return fail(conn, MHD_HTTP_FORBIDDEN,
                    "this viewer's address is the one weft view printed");
    path = url + strlen(vw->prefix);
    if (!*path)
        return answer(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
                      (char *)weft__view_page, strlen(weft__view_page),
                      MHD_RESPMEM_PERSISTENT);
    if (!strcmp(path, "api/traces"))
        return api_traces(vw, conn);
    if (!strcmp(path, "api/window") || !strcmp(path, "api/span") ||
        !strcmp(path, "api/summary") || !strcmp(path, "api/find")) {
        enum MHD_Result r = !strcmp(path, "api/window") ? api_window(vw, conn)
                            : !strcmp(path, "api/span") ? api_span(vw, conn)
                            : !strcmp(path, "api/summary")
                                ? api_summary(vw, conn)
                                : api_find(vw, conn);
        /* the index pages it read stay in the page cache for the next
         * answer, not in this process (DESIGN) */
        for (size_t i = 0; i < vw->nviews; i++)
            if (vw->views[i].map)
                madvise(vw->views[i].map, vw->views[i].maplen,
                        MADV_DONTNEED);
        return r;
    }
    return fail(conn, MHD_HTTP_NOT_FOUND, "no such page");
}

/* ---- the command ---------------------------------------------------------- */

/* Reads trace `what` of the catalog into v, its index kept in the cache
 * directory cdir (NULL: in memory); *used: the index file it uses
 * (malloc'd), or NULL. Returns EXIT_OK, or EXIT_FAIL after saying why. */
static int load(cli *c, const char *what, weft__view *v, const char *cdir,
                char **used)
{
    weft_trace_row row;
    weft__arc a = { 0 };
    char *anchor = NULL, *err = NULL, *cache_err = NULL, *cache = NULL;
    char *name = weft__cli_escape(what);
    struct stat st;
    int status = EXIT_FAIL, built;

    if (weft__cli_find(c, what, &row) != EXIT_OK) {
        free(name);
        return EXIT_FAIL;
    }
    weft__cli_note_name(c, what, &row);
    if (!row.path || !*row.path || weft__cli_row_unfinished(&row)) {
        weft__cli_fail("view %s: the trace has no archive yet (state %s)",
                       name, row.state);
        goto out;
    }
    if (asprintf(&anchor, "%s/traces.otf2", row.path) < 0) {
        anchor = NULL;
        weft__cli_fail("out of memory");
        goto out;
    }
    if (stat(anchor, &st) < 0) {
        weft__cli_fail("view %s: %s: %m", name, anchor);
        goto out;
    }
    cache = cdir ? weft__view_cache_file(cdir, row.key ? row.key : name)
                 : NULL;
    if (weft__arc_open(&a, anchor, &err) < 0 ||
        weft__arc_open_events(&a, &err) < 0 ||
        weft__view_load(v, &a, &st, cache, &built, &cache_err, &err) < 0) {
        weft__cli_fail("view %s: %s", name, err ? err : "out of memory");
        goto out;
    }
    if (cache_err) {
        fprintf(stderr, "weft view: %s: the index is kept in memory "
                "(%s)\n", name, cache_err);
    } else if (cache) {
        if (built)
            fprintf(stderr, "weft view: %s: %" PRIu64 " region visits and "
                    "%zu messages read once into %s\n", name, v->visits,
                    v->nmsgs, cache);
        weft__view_cache_used(cache);
        *used = cache;
        cache = NULL;
    }
    if (v->too_deep || v->unmatched)
        fprintf(stderr, "weft view: %s: %" PRIu64 " visits nested deeper "
                "than %d not shown, %" PRIu64 " Enter or Leave without its "
                "other half\n", name, v->too_deep, WEFT__VIEW_DEPTH_MAX,
                v->unmatched);
    v->name = strdup(row.name ? row.name : "");
    v->key = strdup(row.key ? row.key : "");
    if (!v->name || !v->key) {
        weft__cli_fail("out of memory");
        goto out;
    }
    status = EXIT_OK;
out:
    weft__arc_close(&a);
    free(err);
    free(cache_err);
    free(cache);
    free(anchor);
    free(name);
    weft_catalog_trace_free(&row);
    return status;
}

/* Parses --port (0: any free one). Returns EXIT_OK or a usage error. */
static int port_of(const cli *c, uint16_t *port)
{
    char *end;
    unsigned long p;

    *port = 0;
    if (!c->port)
        return EXIT_OK;
    errno = 0;
    p = strtoul(c->port, &end, 10);
    if (errno || end == c->port || *end || p > 65535 || c->port[0] == '-')
        return weft__cli_usage("view", "--port: a port number, 0 to 65535 "
                               "(0: any free one), not '%s'", c->port);
    *port = (uint16_t)p;
    return EXIT_OK;
}

/* Starts $BROWSER, else xdg-open, on url, without waiting for it (a
 * grandchild: nothing is left to reap). */
static void open_browser(const char *url)
{
    const char *browser = getenv("BROWSER");
    pid_t pid = fork();

    if (pid == 0) {
        setsid();
        if (fork() != 0)
            _exit(0);
        if (browser && *browser)
            execlp(browser, browser, url, (char *)NULL);
        else
            execlp("xdg-open", "xdg-open", url, (char *)NULL);
        fprintf(stderr, "weft view: cannot start %s: %s (open the URL "
                "yourself)\n", browser && *browser ? browser : "xdg-open",
                strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        fprintf(stderr, "weft view: cannot start a browser: %s\n",
                strerror(errno));
    else
        waitpid(pid, NULL, 0);
}

static int make_token(viewer *vw)
{
    unsigned char r[16];

    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return -1;
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(&vw->token[2 * i], 3, "%02x", r[i]);
    snprintf(vw->prefix, sizeof vw->prefix, "/%s/", vw->token);
    return 0;
}

/* Parses --cache-max (default WEFT__VIEW_CACHE_MAX). Returns EXIT_OK or
 * a usage error. */
static int cache_max_of(const cli *c, uint64_t *max)
{
    *max = WEFT__VIEW_CACHE_MAX;
    if (c->cache_max && weft_config_parse_size(c->cache_max, max) < 0)
        return weft__cli_usage("view", "--cache-max: a size in bytes, or "
                               "with K, M or G (e.g. 4G), not '%s'",
                               c->cache_max);
    return EXIT_OK;
}

/* Prunes the cache directory (view_cache.c), keeping the n index files
 * used; says what went. */
static void prune_cache(const char *cdir, uint64_t max, char *const *used,
                        size_t n)
{
    weft__vcache_pruned p;

    if (weft__view_cache_prune(cdir, max, used, n, &p) < 0)
        fprintf(stderr, "weft view: cannot prune the cache %s: %m\n", cdir);
    if (p.files)
        fprintf(stderr, "weft view: removed %" PRIu64 " old index file%s "
                "(%.1f MiB; unused for %d days, or the least recently used "
                "beyond --cache-max) from %s; %.1f MiB kept\n", p.files,
                p.files == 1 ? "" : "s", (double)p.bytes / 1048576.0,
                WEFT__VIEW_CACHE_DAYS, cdir, (double)p.kept / 1048576.0);
}

int weft__cmd_view(cli *c)
{
    viewer vw = { 0 };
    char *cdir = NULL, **used = NULL;
    uint64_t cache_max;
    struct MHD_Daemon *d = NULL;
    struct sockaddr_in sin = { .sin_family = AF_INET };
    const union MHD_DaemonInfo *info;
    sigset_t stop;
    uint16_t port;
    int status, sig;

    if ((status = port_of(c, &port)) != EXIT_OK ||
        (status = cache_max_of(c, &cache_max)) != EXIT_OK)
        return status;
    if (!(vw.views = calloc((size_t)c->nargs, sizeof *vw.views)) ||
        !(used = calloc((size_t)c->nargs, sizeof *used))) {
        free(vw.views);
        return weft__cli_fail("out of memory");
    }
    cdir = weft__view_cache_dir();
    for (int i = 0; i < c->nargs; i++) {
        if ((status = load(c, c->args[i], &vw.views[i], cdir, &used[i])) !=
            EXIT_OK)
            goto out;
        vw.nviews++;
    }
    if (cdir)
        prune_cache(cdir, cache_max, used, (size_t)c->nargs);
    status = EXIT_FAIL;
    if (make_token(&vw) < 0) {
        weft__cli_fail("view: no random numbers for the token: %m");
        goto out;
    }
    /* libmicrohttpd's thread inherits this mask: the signals come here */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons(port);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
                         port, NULL, NULL, on_request, &vw,
                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
                         MHD_OPTION_CONNECTION_LIMIT,
                         (unsigned)VIEW_CONNECTIONS,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)VIEW_IDLE_S,
                         MHD_OPTION_END);
    if (!d) {
        weft__cli_fail("view: cannot listen on 127.0.0.1:%u%s", port,
                       port ? " (in use? --port 0 takes any free port)" : "");
        goto out;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    port = info ? info->port : port;
    {
        char url[96];
        snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, vw.prefix);
        printf("weft view: %s\n", url);
        fflush(stdout);
        fprintf(stderr, "weft view: serving %zu trace%s until interrupted "
                "(Ctrl-C)\n", vw.nviews, vw.nviews == 1 ? "" : "s");
        if (c->open)
            open_browser(url);
    }
    sigwait(&stop, &sig);
    status = EXIT_OK;
out:
    if (d)
        MHD_stop_daemon(d);
    for (size_t i = 0; i < (size_t)c->nargs && vw.views; i++) {
        weft__view_free(&vw.views[i]);
        free(used[i]);
    }
    free(vw.views);
    free(used);
    free(cdir);
    return status;
}
