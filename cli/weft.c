/* weft.c - the weft command: query the trace catalog weftd writes.
 *
 *   weft [--catalog FILE] list [FILTERS] [--sort KEY] [--reverse]
 *                              [--limit N] [--json]
 *   weft [--catalog FILE] show TRACE [--json]
 *   weft [--catalog FILE] profile TRACE [--by-location] [--limit N]
 *                              [--sort excl|incl|visits|name] [--json]
 *   weft [--catalog FILE] verify TRACE          (verify.c)
 *   weft [--catalog FILE] export TRACE --format chrome-json -o FILE
 *                                               (export.c)
 *   weft [--catalog FILE] [--spool DIR] rm TRACE... [--force]
 *   weft [--catalog FILE] sql [--table|--csv|--json] QUERY   (sql.c)
 *   weft [--catalog FILE] reindex [SPOOL]                    (reindex.c)
 *
 * Subcommands are entries of `commands` (name, function, synopsis, help);
 * a new one is a function plus one entry. The catalog is opened read-only
 * (it is never created here) and is found by --catalog, else
 * $WEFT_CATALOG, else the catalog of weftd's default configuration
 * (read with weftd's own parser, daemon/config.c). rm removes only
 * SPOOL/traces/KEY, SPOOL being --spool, else that configuration's spool
 * or the catalog's directory.
 * Exit status: 0 ok, 1 not found or failed, 2 usage error. A list that
 * matches nothing prints nothing (JSON: []) and exits 0, like git.
 * list filters and sorts in SQL (weft_catalog_query), never in C.
 * A trace still recording has live figures (what weftd received so far,
 * rewritten every few seconds: daemon/live.c); list and show mark them,
 * --json says "live" for traces not finished.
 *
 * Human output escapes control characters and invalid UTF-8 in names
 * (a name is whatever the client sent); --json output carries them
 * verbatim (as JSON escapes), with invalid UTF-8 replaced by U+FFFD
 * because JSON strings must be Unicode.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "weftd_config.h"
#include "weft_errors.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Options a command accepts besides --help and --catalog. */
#define OPT_JSON 1u
#define OPT_FORMAT 2u   /* --format VALUE */
#define OPT_OUTPUT 4u   /* -o FILE, --output FILE */
#define OPT_FORCE 8u    /* --force */
#define OPT_TABLE_CSV 16u /* --table, --csv: sets c->format to the name */
#define OPT_LIST 32u    /* weft list's filters, --sort, --reverse, --limit */
#define OPT_PROFILE 64u /* --by-location, --sort, --limit */

typedef struct command {
    const char *name;
    int (*run)(cli *c);      /* returns an exit status */
    unsigned opts;           /* OPT_* */
    int min_args, max_args;
    int needs_catalog;       /* 1: open it; 2: only its path */
    const char *synopsis;    /* after "weft NAME" */
    const char *summary;     /* one line for weft --help */
    const char *help;        /* for weft NAME --help */
} command;

static const char *const trace_help =
    "TRACE is a catalog id (12 or #12), a trace key, or a trace name (the\n"
    "newest trace with that name).\n";

/* ---- messages ---------------------------------------------------------- */

__attribute__((format(printf, 1, 2)))
static int fail(const char *fmt, ...)
{
    va_list ap;

    fputs("weft: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

/* A usage error: the message, then where to find help. */
__attribute__((format(printf, 2, 3)))
static int usage_error(const command *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "weft%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'weft%s%s --help'.\n", cmd ? " " : "",
            cmd ? cmd->name : "");
    return EXIT_USAGE;
}

/* ---- text ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n, i;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A growing string; on allocation failure the program exits (there is
 * nothing useful to do for a command-line query out of memory). */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;

    return memcpy(xrealloc(NULL, n), s, n);
}

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

__attribute__((format(printf, 2, 3)))
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static char *sb_take(sbuf *b)
{
    char *s = b->s ? b->s : xstrdup("");

    memset(b, 0, sizeof *b);
    return s;
}

/* Copy of s safe for a terminal: control characters as \n, \t, \r or
 * \xHH, a backslash doubled, invalid UTF-8 and C1 controls as \xHH. */
static char *escape(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    sbuf b = { 0 };

    while (*p) {
        size_t n = utf8_len(p);
        if (*p == '\\') {
            sb_add(&b, "\\\\", 2);
        } else if (*p == '\n') {
            sb_add(&b, "\\n", 2);
        } else if (*p == '\t') {
            sb_add(&b, "\\t", 2);
        } else if (*p == '\r') {
            sb_add(&b, "\\r", 2);
        } else if (n == 0 || *p < 0x20 || *p == 0x7f ||
                   (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
            size_t k = n ? n : 1;
            for (size_t i = 0; i < k; i++)
                sb_printf(&b, "\\x%02x", p[i]);
            p += k;
            continue;
        } else {
            sb_add(&b, (const char *)p, n);
            p += n;
            continue;
        }
        p++;
    }
    return sb_take(&b);
}

/* ---- shared with verify.c and export.c (cli.h) ---------------------------- */

int weft__cli_fail(const char *fmt, ...)
{
    va_list ap;

    fputs("weft: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

int weft__cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "weft %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'weft %s --help'.\n", cmd);
    return EXIT_USAGE;
}

char *weft__cli_escape(const char *s)
{
    return escape(s);
}

static size_t display_width(const char *s);
static json_t *jstr(const char *s);

size_t weft__cli_width(const char *s)
{
    return display_width(s);
}

json_t *weft__cli_json_string(const char *s)
{
    return jstr(s);
}

/* Was `what` taken as the name of row (not its id or key)? */
static int found_by_name(const char *what, const weft_trace_row *row)
{
    char id[32];

    snprintf(id, sizeof id, "%" PRId64, row->id);
    return strcmp(row->name, what) == 0 && strcmp(row->key, what) != 0 &&
           strcmp(id, what) != 0;
}

int weft__cli_find(cli *c, const char *what, weft_trace_row *row)
{
    int rc = weft_catalog_find(c->catalog, what, row);
    uint64_t n = 0;

    if (rc == WEFT_ENOTFOUND) {
        char *w = escape(what), *path = escape(c->catalog_path);
        fail("no trace '%s' in %s", w, path);
        free(w);
        free(path);
        return EXIT_FAIL;
    }
    if (rc < 0)
        return fail("%s", weft_catalog_errmsg(c->catalog));
    /* Runs share names: say which one a name picked. */
    if (found_by_name(what, row) &&
        weft_catalog_count_name(c->catalog, what, &n) == 0 && n > 1) {
        char *w = escape(what), *k = escape(row->key);
        fprintf(stderr, "weft: %" PRIu64 " traces are named '%s'; taking "
                "the newest (%s); use a key to pick another (weft list "
                "--name '%s')\n", n, w, k, w);
        free(w);
        free(k);
    }
    return EXIT_OK;
}

/* Columns s takes on a terminal (code points; wide characters count 1). */
static size_t display_width(const char *s)
{
    size_t w = 0;

    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

static char *fmt_time(int64_t t)
{
    char buf[64];
    struct tm tm;
    time_t tt = (time_t)t;

    if (t <= 0 || !localtime_r(&tt, &tm) ||
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        return xstrdup("-");
    return xstrdup(buf);
}

static char *fmt_size(uint64_t bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB",
                                         "EiB" };
    char buf[32];
    double v = (double)bytes;
    size_t u = 0;

    if (bytes < 1024) {
        snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
        return xstrdup(buf);
    }
    v /= 1024;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return xstrdup(buf);
}

static char *fmt_u64(uint64_t v)
{
    char buf[32];

    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return xstrdup(buf);
}

static char *fmt_duration(int64_t secs)
{
    char buf[64];

    if (secs < 0)
        return xstrdup("-");
    if (secs >= 86400)
        snprintf(buf, sizeof buf, "%" PRId64 "d %02" PRId64 "h %02" PRId64
                 "m %02" PRId64 "s", secs / 86400, secs / 3600 % 24,
                 secs / 60 % 60, secs % 60);
    else if (secs >= 3600)
        snprintf(buf, sizeof buf, "%" PRId64 "h %02" PRId64 "m %02" PRId64
                 "s", secs / 3600, secs / 60 % 60, secs % 60);
    else if (secs >= 60)
        snprintf(buf, sizeof buf, "%" PRId64 "m %02" PRId64 "s", secs / 60,
                 secs % 60);
    else
        snprintf(buf, sizeof buf, "%" PRId64 "s", secs);
    return xstrdup(buf);
}

static char *archive_of(const char *path)
{
    sbuf b = { 0 };

    if (!path || !*path)
        return NULL;
    sb_add(&b, path, strlen(path));
    sb_add(&b, "/traces.otf2", strlen("/traces.otf2"));
    return sb_take(&b);
}

/* ---- tables ---------------------------------------------------------------- */

#define TABLE_MAX_COLS 8

typedef struct table {
    size_t ncols;
    const char *heads[TABLE_MAX_COLS];
    int right[TABLE_MAX_COLS];  /* right-aligned (numbers) */
    char **cells;               /* nrows * ncols, owned */
    size_t nrows, cap;
} table;

/* Adds a row of ncols cells, taking ownership of them. */
static void table_add(table *t, char **row)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
    }
    memcpy(t->cells + t->nrows * t->ncols, row, t->ncols * sizeof *row);
    t->nrows++;
}

static void print_cell(FILE *out, const char *s, size_t width, int right,
                       int last)
{
    size_t pad = width - display_width(s);

    if (right)
        fprintf(out, "%*s", (int)pad, "");
    fputs(s, out);
    if (!right && !last)
        fprintf(out, "%*s", (int)pad, "");
}

static void table_print(const table *t, FILE *out)
{
    size_t w[TABLE_MAX_COLS];

    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = display_width(t->heads[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = display_width(t->cells[r * t->ncols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    for (size_t c = 0; c < t->ncols; c++) {
        print_cell(out, t->heads[c], w[c], t->right[c], c + 1 == t->ncols);
        fputs(c + 1 < t->ncols ? "  " : "\n", out);
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            print_cell(out, t->cells[r * t->ncols + c], w[c], t->right[c],
                       c + 1 == t->ncols);
            fputs(c + 1 < t->ncols ? "  " : "\n", out);
        }
}

static void table_free(table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

/* ---- JSON ------------------------------------------------------------------- */

/* A JSON string of s; invalid UTF-8 bytes become U+FFFD. */
static json_t *jstr(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    sbuf b = { 0 };
    json_t *j;

    if (!s)
        return json_null();
    j = json_string(s);
    if (j)
        return j;
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0) {
            sb_add(&b, "\xef\xbf\xbd", 3);
            p++;
        } else {
            sb_add(&b, (const char *)p, n);
            p += n;
        }
    }
    j = json_string(b.s ? b.s : "");
    free(b.s);
    return j;
}

static json_t *ju64(uint64_t v)
{
    return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* Sets key to value, exiting when out of memory (value NULL). */
static void jset(json_t *obj, const char *key, json_t *value)
{
    if (!value || json_object_set_new(obj, key, value) != 0) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
}

/* "a,b" -> ["a", "b"] ("" -> []). */
static json_t *hosts_json(const char *hosts)
{
    json_t *a = json_array();
    const char *p = hosts ? hosts : "";

    while (a && *p) {
        size_t n = strcspn(p, ",");
        char *h = xrealloc(NULL, n + 1);
        memcpy(h, p, n);
        h[n] = 0;
        if (json_array_append_new(a, jstr(h)) != 0) {
            json_decref(a);
            a = NULL;
        }
        free(h);
        p += n + (p[n] == ',');
    }
    return a;
}

/* Is row still recording or converting (its figures not final yet)? */
static int row_unfinished(const weft_trace_row *row)
{
    return strcmp(row->state, WEFT_STATE_RECORDING) == 0 ||
           strcmp(row->state, WEFT_STATE_CONVERTING) == 0;
}

/* Are row's figures live ones, what weftd received so far (it rewrites
 * them every live_interval seconds while the trace records), rather than
 * the conversion's? */
static int row_live(const weft_trace_row *row)
{
    return row_unfinished(row) && row->live_updated > 0;
}

static json_t *trace_json(const weft_trace_row *row)
{
    json_t *o = json_object();
    char *archive = archive_of(row->path);

    if (!o) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
    jset(o, "id", json_integer(row->id));
    jset(o, "key", jstr(row->key));
    jset(o, "name", jstr(row->name));
    jset(o, "uid", json_integer(row->uid));
    jset(o, "state", jstr(row->state));
    jset(o, "created", json_integer(row->created));
    jset(o, "finished", row->finished ? json_integer(row->finished)
                                      : json_null());
    jset(o, "path", jstr(row->path));
    jset(o, "archive", jstr(archive));
    jset(o, "members", json_integer(row->members));
    jset(o, "locations", ju64(row->locations));
    jset(o, "events", ju64(row->events));
    jset(o, "bytes", ju64(row->bytes));
    jset(o, "dropped", ju64(row->dropped));
    jset(o, "time_first", ju64(row->time_first));
    jset(o, "time_last", ju64(row->time_last));
    jset(o, "timer_resolution", ju64(row->timer_resolution));
    jset(o, "error", jstr(row->error));
    jset(o, "hosts", hosts_json(row->hosts));
    jset(o, "command", jstr(row->command));
    jset(o, "job_id", jstr(row->job_id));
    jset(o, "run", jstr(row->run));
    jset(o, "protocol_version", json_integer(row->protocol_version));
    /* Only while the figures may change: a finished trace's are final. */
    if (row_unfinished(row)) {
        jset(o, "live", json_boolean(row_live(row)));
        jset(o, "joined", json_integer(row->joined));
        jset(o, "live_updated", row->live_updated
                                ? json_integer(row->live_updated)
                                : json_null());
    }
    free(archive);
    return o;
}

static int tag_json(const weft_tag *tag, void *arg)
{
    jset(arg, tag->key, jstr(tag->value));
    return 0;
}

/* The tags of trace row as a JSON object, or NULL after saying why. */
static json_t *tags_json(cli *c, const weft_trace_row *row)
{
    json_t *o = json_object();

    if (!o) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
    if (weft_catalog_tags(c->catalog, row->id, tag_json, o) < 0) {
        fail("%s", weft_catalog_errmsg(c->catalog));
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Prints j indented and takes it. Returns an exit status. */
static int print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2));

    json_decref(j);
    if (!s)
        return fail("out of memory");
    puts(s);
    free(s);
    return EXIT_OK;
}

/* ---- list ------------------------------------------------------------------- */

typedef struct list_ctx {
    cli *c;
    size_t njson;   /* objects printed so far (--json) */
    table t;
    int failed;
} list_ctx;

/* Prints one element of the --json array as it comes, so that listing
 * 100,000 traces never holds them all: the same text json_dumps gives
 * for the whole array with JSON_INDENT(2). */
static int list_json_row(const weft_trace_row *row, void *arg)
{
    list_ctx *x = arg;
    json_t *o = trace_json(row), *tags = tags_json(x->c, row);
    char *s;

    if (!tags) {
        json_decref(o);
        x->failed = 1;
        return 1;
    }
    jset(o, "tags", tags);
    s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    if (!s) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
    fputs(x->njson++ ? ",\n  " : "[\n  ", stdout);
    for (const char *p = s; *p; p++) {
        putchar(*p);
        if (*p == '\n')
            fputs("  ", stdout);
    }
    free(s);
    return 0;
}

static int list_table_row(const weft_trace_row *row, void *arg)
{
    list_ctx *x = arg;
    char *cells[8];
    char id[32];

    snprintf(id, sizeof id, "%" PRId64, row->id);
    cells[0] = xstrdup(id);
    cells[1] = escape(row->name);
    cells[3] = fmt_time(row->created);
    cells[5] = fmt_u64(row->locations);
    cells[6] = fmt_u64(row->events);
    if (row_live(row)) {
        /* received so far: members joined of those expected, the size
         * of the journals; a converting trace's archive is not done */
        char buf[64];
        snprintf(buf, sizeof buf, "%" PRIu32 "/%" PRIu32, row->joined,
                 row->members);
        cells[4] = xstrdup(buf);
        cells[2] = xstrdup(strcmp(row->state, WEFT_STATE_RECORDING) == 0
                           ? WEFT_STATE_RECORDING " (live)"
                           : row->state);
    } else {
        cells[4] = fmt_u64(row->members);
        cells[2] = escape(row->state);
    }
    if (strcmp(row->state, WEFT_STATE_CONVERTING) == 0)
        cells[7] = xstrdup("converting");
    else
        cells[7] = fmt_size(row->bytes);
    table_add(&x->t, cells);
    return 0;
}

/* Parses a whole decimal number in [min, max]; 0 or -1. */
static int parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    long long v;

    if (!*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Local time from broken-down fields, checking they name a real moment
 * (mktime would roll 2026-02-30 over to March). */
static int local_time(int y, int mo, int d, int h, int mi, int sec,
                      int64_t *out)
{
    struct tm tm = { 0 };
    time_t t;

    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    t = mktime(&tm);
    if (t == (time_t)-1 || tm.tm_year != y - 1900 || tm.tm_mon != mo - 1 ||
        tm.tm_mday != d || tm.tm_min != mi || tm.tm_sec != sec)
        return -1;
    *out = (int64_t)t;
    return 0;
}

/* --since and --until: YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] (or with a T),
 * local time; or N followed by s, m, h, d or w: that long ago. A bare
 * date is its first second, or for --until (end set) its last. 0 or -1. */
static int parse_when(const char *s, int end, int64_t *out)
{
    static const struct { char unit; int64_t secs; } units[] = {
        { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
        { 'w', 7 * 86400 },
    };
    int y, mo, d, h = 0, mi = 0, sec = 0, n = -1;
    size_t len = strlen(s);

    if (len >= 2 && strspn(s, "0123456789") == len - 1) {
        int64_t v;
        char digits[32];
        if (len - 1 >= sizeof digits)
            return -1;
        memcpy(digits, s, len - 1);
        digits[len - 1] = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (s[len - 1] == units[i].unit &&
                parse_int(digits, 0, INT64_MAX / 2 / units[i].secs,
                          &v) == 0) {
                *out = (int64_t)time(NULL) - v * units[i].secs;
                return 0;
            }
        return -1;
    }
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && n == 10 &&
        s[n] == '\0') {
        if (local_time(y, mo, d, 0, 0, 0, out) < 0)
            return -1;
        if (end && local_time(y, mo, d, 23, 59, 59, out) < 0)
            return -1;
        return 0;
    }
    n = -1;
    if (len >= 16 && (s[10] == ' ' || s[10] == 'T') &&
        sscanf(s, "%4d-%2d-%2d%*c%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5 &&
        n == 16 && (s[16] == '\0' ||
                    (sscanf(s + 16, ":%2d%n", &sec, &n) == 1 && n == 3 &&
                     s[19] == '\0')))
        return local_time(y, mo, d, h, mi, sec, out);
    return -1;
}

/* Index of word in words[0..n), or -1. */
static int word_index(const char *word, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(word, words[i]) == 0)
            return (int)i;
    return -1;
}
#define WORD_INDEX(word, words) \
    word_index(word, words, sizeof words / sizeof words[0])

/* Fills f from the command line; returns EXIT_OK or a usage error. The
 * filter points into c. */
static int list_filter(cli *c, weft_list_filter *f, weft_tag *tags)
{
    static const char *const sorts[] = {
        [WEFT_SORT_CREATED] = "created", [WEFT_SORT_NAME] = "name",
        [WEFT_SORT_EVENTS] = "events", [WEFT_SORT_SIZE] = "size",
        [WEFT_SORT_DURATION] = "duration", [WEFT_SORT_STATE] = "state",
    };
    static const char *const states[] = {
        WEFT_STATE_RECORDING, WEFT_STATE_CONVERTING, WEFT_STATE_COMPLETE,
        WEFT_STATE_PARTIAL, WEFT_STATE_FAILED,
    };
    const char *cmd = "list";
    int64_t v;

    memset(f, 0, sizeof *f);
    if (c->user) {
        struct passwd *pw;
        f->has_uid = 1;
        if (parse_int(c->user, 0, UINT32_MAX - 1, &v) == 0)
            f->uid = (uint32_t)v;
        else if ((pw = getpwnam(c->user)) != NULL)
            f->uid = pw->pw_uid;
        else
            return weft__cli_usage(cmd, "--user '%s': no such user",
                                   c->user);
    }
    f->name_glob = c->name_glob;
    if (c->state) {
        if (WORD_INDEX(c->state, states) < 0)
            return weft__cli_usage(cmd, "--state '%s': not one of recording,"
                                   " converting, complete, partial, failed",
                                   c->state);
        f->state = c->state;
    }
    if (c->since && parse_when(c->since, 0, &f->since) < 0)
        return weft__cli_usage(cmd, "--since '%s': not YYYY-MM-DD, "
                               "'YYYY-MM-DD HH:MM[:SS]' or an age like 30m, "
                               "2h, 7d", c->since);
    if (c->until && parse_when(c->until, 1, &f->until) < 0)
        return weft__cli_usage(cmd, "--until '%s': not YYYY-MM-DD, "
                               "'YYYY-MM-DD HH:MM[:SS]' or an age like 30m, "
                               "2h, 7d", c->until);
    for (int k = 0; k < c->ntags; k++) {
        const char *eq = strchr(c->tags[k], '=');
        if (!eq || eq == c->tags[k])
            return weft__cli_usage(cmd, "--tag '%s': expected KEY=VALUE",
                                   c->tags[k]);
        tags[k].key = xrealloc(NULL, (size_t)(eq - c->tags[k]) + 1);
        memcpy(tags[k].key, c->tags[k], (size_t)(eq - c->tags[k]));
        tags[k].key[eq - c->tags[k]] = 0;
        tags[k].value = (char *)eq + 1;
        f->ntags = (size_t)k + 1;
    }
    f->tags = tags;
    f->host = c->host;
    if (c->sort) {
        int i = WORD_INDEX(c->sort, sorts);
        if (i < 0)
            return weft__cli_usage(cmd, "--sort '%s': not one of created, "
                                   "name, events, size, duration, state",
                                   c->sort);
        f->sort = (enum weft_list_sort)i;
    }
    f->reverse = c->reverse;
    if (c->limit && parse_int(c->limit, 1, INT64_MAX, &f->limit) < 0)
        return weft__cli_usage(cmd, "--limit '%s': not a number above 0",
                               c->limit);
    return EXIT_OK;
}

static int cmd_list(cli *c)
{
    list_ctx x = { c, 0, { 8, { "ID", "NAME", "STATE", "CREATED",
                                   "MEMBERS", "LOCATIONS", "EVENTS", "SIZE" },
                              { 1, 0, 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 }, 0 };
    weft_tag *tags = xrealloc(NULL, ((size_t)c->ntags + 1) * sizeof *tags);
    weft_list_filter f;
    int rc, status;

    memset(tags, 0, ((size_t)c->ntags + 1) * sizeof *tags);
    status = list_filter(c, &f, tags);
    if (status != EXIT_OK)
        goto out;
    rc = weft_catalog_query(c->catalog, &f, c->json ? list_json_row
                                                    : list_table_row, &x);
    if (x.failed) {
        status = EXIT_FAIL;
        goto out;
    }
    if (rc < 0) {
        status = fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (c->json)
        puts(x.njson ? "\n]" : "[]");
    else if (x.t.nrows)
        table_print(&x.t, stdout);
out:
    table_free(&x.t);
    for (int k = 0; k < c->ntags; k++)
        free(tags[k].key);
    free(tags);
    return status;
}

/* ---- show ------------------------------------------------------------------- */

static int show_json_location(const weft_location_row *l, void *arg)
{
    json_t *o = json_object();

    if (!o || json_array_append_new(arg, o) != 0) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
    jset(o, "id", ju64(l->id));
    jset(o, "rank", json_integer(l->rank));
    jset(o, "thread", json_integer(l->thread));
    jset(o, "name", jstr(l->name));
    jset(o, "events", ju64(l->events));
    jset(o, "dropped", ju64(l->dropped));
    return 0;
}

static int show_table_location(const weft_location_row *l, void *arg)
{
    char *cells[6];

    cells[0] = fmt_u64(l->id);
    cells[1] = fmt_u64(l->rank);
    cells[2] = fmt_u64(l->thread);
    cells[3] = *l->name ? escape(l->name) : xstrdup("-"); /* live: none yet */
    cells[4] = fmt_u64(l->events);
    cells[5] = fmt_u64(l->dropped);
    table_add(arg, cells);
    return 0;
}

static void field(const char *label, const char *value)
{
    printf("%-13s%s\n", label, value);
}

/* Prints a field and frees value. */
static void field_take(const char *label, char *value)
{
    field(label, value);
    free(value);
}

/* ---- members and tags of show ---- */

typedef struct members_ctx {
    table t;
    json_t *arr;       /* --json */
    json_t *missing;   /* --json: ranks */
    sbuf missing_text; /* "2, 5" */
    uint32_t complete, recording, nmissing, total;
} members_ctx;

static int member_row(const weft_member_row *m, void *arg)
{
    members_ctx *x = arg;
    int missing = strcmp(m->state, WEFT_MEMBER_MISSING) == 0;

    x->total++;
    x->complete += strcmp(m->state, WEFT_MEMBER_COMPLETE) == 0;
    x->recording += strcmp(m->state, WEFT_MEMBER_RECORDING) == 0;
    if (missing) {
        sb_printf(&x->missing_text, "%s%" PRIu32, x->nmissing ? ", " : "",
                  m->rank);
        x->nmissing++;
    }
    if (x->arr) {
        json_t *o = json_object();
        if (!o || json_array_append_new(x->arr, o) != 0 ||
            (missing && json_array_append_new(x->missing,
                                              json_integer(m->rank)) != 0)) {
            fail("out of memory");
            exit(EXIT_FAIL);
        }
        jset(o, "rank", json_integer(m->rank));
        jset(o, "host", jstr(m->host));
        jset(o, "pid", json_integer(m->pid));
        jset(o, "state", jstr(m->state));
        jset(o, "locations", ju64(m->locations));
        jset(o, "events", ju64(m->events));
        jset(o, "dropped", ju64(m->dropped));
    } else {
        char *cells[7];
        cells[0] = fmt_u64(m->rank);
        cells[1] = *m->host ? escape(m->host) : xstrdup("-");
        cells[2] = m->pid ? fmt_u64(m->pid) : xstrdup("-");
        cells[3] = escape(m->state);
        cells[4] = fmt_u64(m->locations);
        cells[5] = fmt_u64(m->events);
        cells[6] = fmt_u64(m->dropped);
        table_add(&x->t, cells);
    }
    return 0;
}

static int tag_text(const weft_tag *tag, void *arg)
{
    sbuf *b = arg;
    char *k = escape(tag->key), *v = escape(tag->value);

    if (b->len)
        sb_add(b, ", ", 2);
    sb_add(b, k, strlen(k));
    sb_add(b, "=", 1);
    sb_add(b, v, strlen(v));
    free(k);
    free(v);
    return 0;
}

static void show_trace_text(const weft_trace_row *row)
{
    struct passwd *pw = getpwuid(row->uid);
    char buf[256];
    char *s;

    snprintf(buf, sizeof buf, "%" PRId64, row->id);
    field("id:", buf);
    field_take("key:", escape(row->key));
    field_take("name:", escape(row->name));
    s = escape(pw ? pw->pw_name : NULL);
    snprintf(buf, sizeof buf, "%" PRIu32 " (%s)", row->uid,
             pw ? s : "unknown user");
    free(s);
    field("owner:", buf);
    field_take("state:", escape(row->state));
    field_take("hosts:", *row->hosts ? escape(row->hosts) : xstrdup("-"));
    field_take("command:", *row->command ? escape(row->command)
                                         : xstrdup("-"));
    field_take("job id:", *row->job_id ? escape(row->job_id) : xstrdup("-"));
    field_take("run:", *row->run ? escape(row->run) : xstrdup("-"));
    field_take("protocol:", fmt_u64(row->protocol_version));
    field_take("created:", fmt_time(row->created));
    field_take("finished:", fmt_time(row->finished));
    field_take("duration:", row->finished && row->created
                            ? fmt_duration(row->finished - row->created)
                            : xstrdup("-"));
    s = archive_of(row->path);
    field_take("archive:", s ? escape(s) : xstrdup("-"));
    free(s);
    if (row_live(row)) {
        /* What weftd received so far; the conversion's figures replace
         * them. */
        snprintf(buf, sizeof buf, "%" PRIu32 " (%" PRIu32 " joined so far, "
                 "live)", row->members, row->joined);
        field("members:", buf);
        snprintf(buf, sizeof buf, "%" PRIu64 " (live, received so far)",
                 row->locations);
        field("locations:", buf);
        snprintf(buf, sizeof buf, "%" PRIu64 " (live, received so far)",
                 row->events);
        field("events:", buf);
        s = fmt_size(row->bytes);
        snprintf(buf, sizeof buf, "%" PRIu64 " (%s; live, journaled so "
                 "far)", row->bytes, s);
        free(s);
        field("bytes:", buf);
        s = fmt_time(row->live_updated);
        snprintf(buf, sizeof buf, "%s (live figures; the final ones come "
                 "with the conversion)", s);
        free(s);
        field("updated:", buf);
    } else {
        field_take("members:", fmt_u64(row->members));
        field_take("locations:", fmt_u64(row->locations));
        field_take("events:", fmt_u64(row->events));
        s = fmt_size(row->bytes);
        snprintf(buf, sizeof buf, "%" PRIu64 " (%s)", row->bytes, s);
        free(s);
        field("bytes:", buf);
    }
    field_take("dropped:", fmt_u64(row->dropped));
    if (row->time_last >= row->time_first && row->timer_resolution)
        snprintf(buf, sizeof buf, "%" PRIu64 " .. %" PRIu64 " (%.6f s at %"
                 PRIu64 " ticks/s)", row->time_first, row->time_last,
                 (double)(row->time_last - row->time_first) /
                 (double)row->timer_resolution, row->timer_resolution);
    else
        snprintf(buf, sizeof buf, "%" PRIu64 " .. %" PRIu64,
                 row->time_first, row->time_last);
    field("time range:", buf);
    /* A partial trace keeps why it is not complete in the same column. */
    if (row->error)
        field_take(strcmp(row->state, "partial") == 0 ? "reason:" : "error:",
                   escape(row->error));
}

static int cmd_show(cli *c)
{
    table t = { 6, { "ID", "RANK", "THREAD", "NAME", "EVENTS", "DROPPED" },
                { 1, 1, 1, 0, 1, 1 }, NULL, 0, 0 };
    members_ctx mx = { { 7, { "RANK", "HOST", "PID", "STATE", "LOCATIONS",
                              "EVENTS", "DROPPED" },
                         { 1, 0, 1, 0, 1, 1, 1 }, NULL, 0, 0 },
                       NULL, NULL, { 0 }, 0, 0, 0, 0 };
    sbuf tagtext = { 0 };
    weft_trace_row row;
    json_t *obj = NULL, *locs = NULL, *tags = NULL;
    int rc, status = EXIT_FAIL;

    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    if (c->json) {
        obj = trace_json(&row);
        locs = json_array();
        mx.arr = json_array();
        mx.missing = json_array();
        if (!locs || !mx.arr || !mx.missing) {
            fail("out of memory");
            goto out;
        }
        rc = weft_catalog_locations(c->catalog, row.id, show_json_location,
                                    locs);
        if (rc == 0)
            rc = weft_catalog_members(c->catalog, row.id, member_row, &mx);
        if (rc < 0) {
            fail("%s", weft_catalog_errmsg(c->catalog));
            goto out;
        }
        if (!(tags = tags_json(c, &row)))
            goto out;
        /* "locations" is the array here; the count moves aside.
         * "members" stays the count; "ranks" is the array of members. */
        jset(obj, "location_count", ju64(row.locations));
        jset(obj, "locations", locs);
        jset(obj, "ranks", mx.arr);
        jset(obj, "missing_ranks", mx.missing);
        jset(obj, "tags", tags);
        locs = mx.arr = mx.missing = tags = NULL;
        status = print_json(obj);
        obj = NULL;
        goto out;
    }
    rc = weft_catalog_locations(c->catalog, row.id, show_table_location, &t);
    if (rc == 0)
        rc = weft_catalog_members(c->catalog, row.id, member_row, &mx);
    if (rc == 0)
        rc = weft_catalog_tags(c->catalog, row.id, tag_text, &tagtext);
    if (rc < 0) {
        fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    show_trace_text(&row);
    field("tags:", tagtext.len ? tagtext.s : "-");
    if (mx.total && row_live(&row)) {
        char buf[160];
        snprintf(buf, sizeof buf, "%" PRIu32 " complete, %" PRIu32
                 " recording, %" PRIu32 " not joined yet (live)",
                 mx.complete, mx.recording,
                 row.members > mx.total ? row.members - mx.total : 0);
        field("ranks:", buf);
    } else if (mx.total) {
        char buf[128];
        snprintf(buf, sizeof buf, "%" PRIu32 " complete, %" PRIu32
                 " missing", mx.complete, mx.nmissing);
        field("ranks:", buf);
    }
    if (mx.nmissing)
        printf("%-13s%s %s\n", "missing:", mx.nmissing == 1 ? "rank"
                                                            : "ranks",
               mx.missing_text.s);
    putchar('\n');
    if (mx.t.nrows) {
        table_print(&mx.t, stdout);
        putchar('\n');
    }
    if (t.nrows)
        table_print(&t, stdout);
    else
        puts("no locations recorded");
    status = EXIT_OK;
out:
    json_decref(tags);
    json_decref(mx.arr);
    json_decref(mx.missing);
    free(mx.missing_text.s);
    table_free(&mx.t);
    free(tagtext.s);
    json_decref(locs);
    json_decref(obj);
    table_free(&t);
    weft_catalog_trace_free(&row);
    return status;
}

/* ---- profile ------------------------------------------------------------------ */

#define PROFILE_DEFAULT_LIMIT 20

typedef struct profile_ctx {
    int by_location;
    table t;
    json_t *arr;
    size_t n;
} profile_ctx;

static char *fmt_secs(double s)
{
    char buf[64];

    snprintf(buf, sizeof buf, "%.6f", s);
    return xstrdup(buf);
}

static double pct(double part, double total)
{
    return total > 0 ? 100.0 * part / total : 0.0;
}

static int profile_row(const weft_region_row *r, void *arg)
{
    profile_ctx *x = arg;
    char *cells[7], buf[32];
    size_t k = 0;

    x->n++;
    if (x->arr) {
        json_t *o = json_object();
        if (!o || json_array_append_new(x->arr, o) != 0) {
            fail("out of memory");
            exit(EXIT_FAIL);
        }
        if (x->by_location) {
            jset(o, "location", json_integer(r->location));
            jset(o, "location_name", jstr(r->location_name));
        }
        jset(o, "region", jstr(r->region));
        jset(o, "visits", ju64(r->visits));
        jset(o, "incl_s", json_real(r->incl_s));
        jset(o, "excl_s", json_real(r->excl_s));
        /* rounded: the window sum's last bits depend on the row order */
        jset(o, "excl_pct",
             json_real((double)(int64_t)(pct(r->excl_s, r->total_excl_s) *
                                         1e4 + 0.5) / 1e4));
        return 0;
    }
    if (x->by_location) {
        cells[k++] = fmt_u64((uint64_t)r->location);
        cells[k++] = escape(r->location_name);
    }
    cells[k++] = escape(r->region);
    cells[k++] = fmt_u64(r->visits);
    cells[k++] = fmt_secs(r->incl_s);
    cells[k++] = fmt_secs(r->excl_s);
    snprintf(buf, sizeof buf, "%.1f", pct(r->excl_s, r->total_excl_s));
    cells[k++] = xstrdup(buf);
    table_add(&x->t, cells);
    return 0;
}

static int cmd_profile(cli *c)
{
    static const char *const sorts[] = {
        [WEFT_RSORT_EXCL] = "excl", [WEFT_RSORT_INCL] = "incl",
        [WEFT_RSORT_VISITS] = "visits", [WEFT_RSORT_NAME] = "name",
    };
    profile_ctx x = { c->by_location, { 0 }, NULL, 0 };
    enum weft_region_sort sort = WEFT_RSORT_EXCL;
    int64_t limit = PROFILE_DEFAULT_LIMIT;
    weft_trace_row row;
    int rc, status = EXIT_FAIL;

    if (c->sort) {
        int i = WORD_INDEX(c->sort, sorts);
        if (i < 0)
            return weft__cli_usage("profile", "--sort '%s': not one of excl, "
                                   "incl, visits, name", c->sort);
        sort = (enum weft_region_sort)i;
    }
    if (c->limit && parse_int(c->limit, 0, INT64_MAX, &limit) < 0)
        return weft__cli_usage("profile", "--limit '%s': not a number (0: "
                               "all regions)", c->limit);
    if (x.by_location) {
        table t = { 7, { "LOCATION", "NAME", "REGION", "VISITS", "INCL S",
                         "EXCL S", "EXCL %" },
                    { 1, 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 };
        x.t = t;
    } else {
        table t = { 5, { "REGION", "VISITS", "INCL S", "EXCL S", "EXCL %" },
                    { 0, 1, 1, 1, 1 }, NULL, 0, 0 };
        x.t = t;
    }
    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    if (c->json && !(x.arr = json_array())) {
        fail("out of memory");
        goto out;
    }
    rc = weft_catalog_regions(c->catalog, row.id, x.by_location, sort, limit,
                              profile_row, &x);
    if (rc < 0) {
        fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (x.n == 0) {
        char *name = escape(row.name);
        if (strcmp(row.state, WEFT_STATE_RECORDING) == 0 ||
            strcmp(row.state, WEFT_STATE_CONVERTING) == 0)
            fail("trace '%s' (#%" PRId64 ") is still %s: its profile is made "
                 "when it is converted", name, row.id, row.state);
        else
            fail("trace '%s' (#%" PRId64 ") has no region profile (no Enter "
                 "and Leave events)", name, row.id);
        free(name);
        goto out;
    }
    if (c->json) {
        json_t *o = json_object();
        if (!o) {
            fail("out of memory");
            goto out;
        }
        jset(o, "id", json_integer(row.id));
        jset(o, "name", jstr(row.name));
        jset(o, "by_location", json_boolean(x.by_location));
        jset(o, "regions", x.arr);
        x.arr = NULL;
        status = print_json(o);
        goto out;
    }
    table_print(&x.t, stdout);
    status = EXIT_OK;
out:
    json_decref(x.arr);
    table_free(&x.t);
    weft_catalog_trace_free(&row);
    return status;
}

/* ---- status ------------------------------------------------------------------ */

/* weftd rewrites DIR/weftd.status (DIR: the catalog's directory) every
 * second while it runs; see daemon/main.c. */
#define STATUS_STALE_SECONDS 5

static char *status_path(const char *catalog)
{
    const char *slash = strrchr(catalog, '/');
    char *p = NULL;

    if (!slash)
        p = xstrdup("weftd.status");
    else if (asprintf(&p, "%.*s/weftd.status", (int)(slash - catalog),
                      catalog) < 0)
        p = NULL;
    return p;
}

static json_int_t jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* "limits reached: max_buffered 3, idle_timeout 1" (those not 0). */
static void print_limits_reached(json_t *limits)
{
    const char *key;
    json_t *v;
    int any = 0;

    printf("limits reached:");
    json_object_foreach(limits, key, v) {
        if (json_integer_value(v) == 0)
            continue;
        printf("%s %s %lld", any ? "," : "", key,
               (long long)json_integer_value(v));
        any = 1;
    }
    printf("%s\n", any ? " (times)" : " none");
}

static int cmd_status(cli *c)
{
    char *path = status_path(c->catalog_path);
    json_error_t jerr;
    json_t *st = NULL, *traces;
    int status = EXIT_FAIL;
    json_int_t pid, updated;
    size_t i;
    json_t *t;

    if (!path)
        return fail("out of memory");
    st = json_load_file(path, 0, &jerr);
    if (!st) {
        fail("weftd is not running with this configuration (no status in "
             "%s)", path);
        goto out;
    }
    pid = jint(st, "pid");
    updated = jint(st, "updated");
    if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH) ||
        (json_int_t)time(NULL) - updated > STATUS_STALE_SECONDS) {
        fail("weftd is not running (its last status in %s is %lld s old)",
             path, (long long)((json_int_t)time(NULL) - updated));
        goto out;
    }
    if (c->json) {
        status = print_json(st);
        st = NULL;
        goto out;
    }
    printf("weftd %s, pid %lld, up %lld s, listening on %s\n",
           json_string_value(json_object_get(st, "version")),
           (long long)pid, (long long)(updated - jint(st, "started")),
           json_string_value(json_object_get(st, "listen")));
    printf("connections: %lld (max_connections %lld), %lld paused by "
           "backpressure\n", (long long)jint(st, "connections"),
           (long long)jint(st, "max_connections"),
           (long long)jint(st, "paused"));
    printf("events/s:    %lld\n", (long long)jint(st, "events_per_s"));
    printf("since start: %lld events, %lld bytes, %lld clients refused\n",
           (long long)jint(st, "events"), (long long)jint(st, "bytes"),
           (long long)jint(st, "refused"));
    printf("dropped:     %lld records (reported by clients that said "
           "goodbye)\n", (long long)jint(st, "dropped"));
    printf("buffered:    %lld bytes of frames (max_buffered %lld), file "
           "descriptor limit %lld\n", (long long)jint(st, "buffered"),
           (long long)jint(st, "max_buffered"), (long long)jint(st, "fd_limit"));
    print_limits_reached(json_object_get(st, "limits_reached"));
    printf("converting:  %lld traces\n", (long long)jint(st, "converting"));
    traces = json_object_get(st, "recording");
    printf("recording:   %zu traces\n", json_array_size(traces));
    json_array_foreach(traces, i, t) {
        char *name = escape(json_string_value(json_object_get(t, "name")));
        printf("  %-30s %lld/%lld members connected, %lld done, %lld "
               "events\n", name, (long long)jint(t, "connected"),
               (long long)jint(t, "size"), (long long)jint(t, "goodbyes"),
               (long long)jint(t, "events"));
        free(name);
    }
    status = EXIT_OK;
out:
    json_decref(st);
    free(path);
    return status;
}

/* ---- rm ---------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) {
        char *p = escape(path);
        fail("cannot remove %s: %s", p, strerror(errno));
        free(p);
        return -1;
    }
    return 0;
}

/* Is dir a weftd spool (has it a traces/ directory)? */
static int is_spool(const char *dir)
{
    struct stat st;
    char *p = NULL;
    int yes;

    if (asprintf(&p, "%s/traces", dir) < 0)
        return 0;
    yes = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return yes;
}

/* Adds the real path of dir to spools[*n] when it is a spool and not
 * there yet. */
static void add_spool(const char *dir, char **spools, size_t *n)
{
    char *real = dir ? realpath(dir, NULL) : NULL;

    if (!real)
        return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(spools[i], real) == 0) {
            free(real);
            return;
        }
    if (is_spool(real))
        spools[(*n)++] = real;
    else
        free(real);
}

static int load_config(weft_config *cfg, char *err, size_t errlen);

/* The spools whose traces rm may remove, as real paths (malloc'd), in
 * spools[0..*n): --spool DIR alone when given; else the spool of weftd's
 * configuration (the file the catalog is found through) and the
 * catalog's directory (the catalog's default place is SPOOL/catalog.db),
 * each if it is a spool. Returns EXIT_OK, or EXIT_FAIL after saying why
 * a --spool is refused. */
static int rm_spools(const cli *c, char *spools[2], size_t *n)
{
    const char *slash = strrchr(c->catalog_path, '/');
    weft_config cfg;
    char err[512], *dir = NULL;

    *n = 0;
    if (c->spool) {
        char *s = escape(c->spool);
        struct stat st;
        int status = EXIT_OK;
        if (stat(c->spool, &st) != 0)
            status = fail("--spool %s: %s", s, strerror(errno));
        else if (!S_ISDIR(st.st_mode) || !is_spool(c->spool))
            status = fail("--spool %s: not a weftd spool (it has no traces/ "
                          "directory); not removing anything", s);
        else
            add_spool(c->spool, spools, n);
        free(s);
        if (status == EXIT_OK && *n == 0)
            status = fail("--spool: cannot resolve the directory");
        return status;
    }
    if (load_config(&cfg, err, sizeof err) == 0)
        add_spool(cfg.spool, spools, n);
    weft_config_free(&cfg);
    if (!slash)
        dir = xstrdup(".");
    else if (asprintf(&dir, "%.*s", (int)(slash - c->catalog_path + (slash ==
                      c->catalog_path)), c->catalog_path) < 0)
        dir = NULL;
    add_spool(dir, spools, n);
    free(dir);
    return EXIT_OK;
}

/* The trace directory (SPOOL/traces/KEY, the parent of the archive) of
 * row as a real path, checked to be exactly SPOOL/traces/KEY of one of the
 * spools. Returns 0 and sets *dir (malloc'd; NULL when nothing of the
 * trace is on disk), or EXIT_FAIL after saying why. */
static int rm_trace_dir(const weft_trace_row *row, char **spools,
                        size_t nspools, char **dir)
{
    const char *path = row->path;
    char *real = NULL, *parent = NULL, *slash, *want = NULL;
    int status = EXIT_FAIL;

    *dir = NULL;
    real = realpath(path, NULL);
    if (real) {
        slash = strrchr(real, '/');
        if (!slash || strcmp(slash + 1, "archive") != 0)
            goto outside;
        *slash = 0;
    } else if (errno == ENOENT) {
        /* No archive yet (or any more): its parent may still be there. */
        parent = xstrdup(path);
        slash = strrchr(parent, '/');
        if (!slash || strcmp(slash + 1, "archive") != 0)
            goto outside;
        *slash = 0;
        real = realpath(*parent ? parent : "/", NULL);
        if (!real && errno == ENOENT) {
            status = EXIT_OK;     /* nothing on disk to remove */
            goto out;
        }
    }
    if (!real) {
        char *p = escape(path);
        fail("trace '%s': cannot resolve %s: %s", row->key, p,
             strerror(errno));
        free(p);
        goto out;
    }
    if (!row->key || !*row->key || strchr(row->key, '/') ||
        strcmp(row->key, ".") == 0 || strcmp(row->key, "..") == 0)
        goto outside;
    for (size_t i = 0; i < nspools; i++) {
        free(want);
        if (asprintf(&want, "%s/traces/%s", spools[i], row->key) < 0) {
            want = NULL;
            fail("out of memory");
            goto out;
        }
        if (strcmp(real, want) == 0) {
            *dir = real;
            real = NULL;
            status = EXIT_OK;
            goto out;
        }
    }
outside: {
        char *p = escape(real ? real : path), *k = escape(row->key);
        sbuf where = { 0 };
        for (size_t i = 0; i < nspools; i++) {
            char *sp = escape(spools[i]);
            sb_printf(&where, "%s%s", i ? " or " : "", sp);
            free(sp);
        }
        if (nspools)
            fail("trace '%s': its directory %s is not in the spool %s (as "
                 "traces/%s); not removing anything outside the spool (give "
                 "the spool weftd uses with --spool DIR)", k, p, where.s, k);
        else
            fail("trace '%s': no spool to remove %s from: neither weftd's "
                 "configuration (%s) nor the catalog's directory names one; "
                 "give the spool with --spool DIR", k, p,
                 weft_config_default_path());
        free(where.s);
        free(p);
        free(k);
    }
out:
    free(want);
    free(parent);
    free(real);
    return status;
}

static int rm_one(cli *c, char **spools, size_t nspools, const char *what)
{
    weft_trace_row row;
    char *dir = NULL, *name = NULL;
    int status = EXIT_FAIL, rc;

    if (weft__cli_find(c, what, &row) != EXIT_OK)
        return EXIT_FAIL;
    name = escape(what);
    if (!c->force && (strcmp(row.state, WEFT_STATE_RECORDING) == 0 ||
                      strcmp(row.state, WEFT_STATE_CONVERTING) == 0)) {
        fail("trace '%s' is %s; not removed (--force removes it anyway)",
             name, row.state);
        goto out;
    }
    if (row.path && *row.path &&
        rm_trace_dir(&row, spools, nspools, &dir) != EXIT_OK)
        goto out;
    if (dir && nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        char *d = escape(dir);
        fail("trace '%s': removing %s failed%s%s; the catalog row is kept",
             name, d, errno ? ": " : "", errno ? strerror(errno) : "");
        free(d);
        goto out;
    }
    rc = weft_catalog_trace_delete(c->catalog, row.id);
    if (rc < 0) {
        fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    printf("removed trace '%s' (#%" PRId64 ")%s%s\n", name, row.id,
           dir ? " and " : "", dir ? dir : "");
    status = EXIT_OK;
out:
    free(dir);
    free(name);
    weft_catalog_trace_free(&row);
    return status;
}

static int cmd_rm(cli *c)
{
    char *spools[2] = { NULL, NULL };
    char *msg = NULL;
    struct stat st;
    size_t nspools;
    int status = EXIT_OK, rc;

    if (stat(c->catalog_path, &st) != 0)
        return fail("no catalog at %s (has weftd run with this "
                    "configuration?)", c->catalog_path);
    rc = weft_catalog_open(c->catalog_path, 0, &c->catalog, &msg);
    if (rc < 0) {
        fail("%s", msg ? msg : weft_strerror(rc));
        free(msg);
        return EXIT_FAIL;
    }
    free(msg);
    if (rm_spools(c, spools, &nspools) != EXIT_OK)
        return EXIT_FAIL;
    for (int i = 0; i < c->nargs; i++)
        if (rm_one(c, spools, nspools, c->args[i]) != EXIT_OK)
            status = EXIT_FAIL;
    free(spools[0]);
    free(spools[1]);
    return status;
}

/* ---- the command table ---------------------------------------------------- */

static const command commands[] = {
    { "list", cmd_list, OPT_JSON | OPT_LIST, 0, 0, 1, "[OPTIONS]",
      "list traces, newest first",
      "List the traces of the catalog, newest first: id, name, state,\n"
      "creation time, members, locations, events and archive size. Prints\n"
      "nothing when no trace matches. A trace still recording shows the\n"
      "figures weftd received so far, as 'recording (live)' with members\n"
      "joined/expected; one being converted has size 'converting'.\n"
      "\n"
      "Filters (all must hold):\n"
      "  --user NAME|UID   owned by this user\n"
      "  --name GLOB       name matches GLOB (* ? [...], case-sensitive)\n"
      "  --state STATE     recording, converting, complete, partial or\n"
      "                    failed\n"
      "  --since TIME      created at or after TIME\n"
      "  --until TIME      created at or before TIME\n"
      "  --tag KEY=VALUE   has this tag (repeat: all of them)\n"
      "  --host NAME       a member ran on host NAME\n"
      "TIME is YYYY-MM-DD (a whole day), 'YYYY-MM-DD HH:MM[:SS]' in local\n"
      "time, or an age: 30m, 2h, 7d, 2w (also s) ago.\n"
      "\n"
      "  --sort KEY  created (newest first), name, events (most first),\n"
      "              size (biggest first), duration (longest first), state\n"
      "  --reverse   the other way round\n"
      "  --limit N   at most N traces\n"
      "  --json      print a JSON array of trace objects (with tags)\n" },
    { "show", cmd_show, OPT_JSON, 1, 1, 1, "TRACE [--json]",
      "show one trace, its members and locations",
      "Show every field of one trace (owner, state, hosts, command, job\n"
      "id, tags, times, archive path, figures, error), its members (the\n"
      "ranks that never came or vanished are listed as missing) and its\n"
      "locations. While the trace records, the figures are those weftd\n"
      "received so far, marked live (updated every few seconds).\n"
      "\n"
      "  --json   print a JSON object; \"locations\" is the array of its\n"
      "           locations, \"ranks\" that of its members (\"members\" is\n"
      "           their number), \"missing_ranks\" and \"tags\"; while\n"
      "           recording or converting also \"live\", \"joined\" and\n"
      "           \"live_updated\"\n" },
    { "profile", cmd_profile, OPT_JSON | OPT_PROFILE, 1, 1, 1,
      "TRACE [OPTIONS]",
      "show the regions a trace spent its time in",
      "Show the region profile weftd computed when it converted the trace:\n"
      "per region the visits (Enters), inclusive and exclusive seconds and\n"
      "the share of all exclusive time, summed over all locations. Exits 1\n"
      "when the trace has no profile (still recording, or no regions).\n"
      "\n"
      "  --by-location  per location instead (weftd keeps each location's\n"
      "                 100 regions with the most exclusive time)\n"
      "  --limit N      at most N regions (per location); 0: all; default "
      "20\n"
      "  --sort KEY     excl (default), incl, visits (most first) or name\n"
      "  --json         print a JSON object; \"regions\" is the array\n" },
    { "status", cmd_status, OPT_JSON, 0, 0, 2, "[--json]",
      "show what the running weftd is doing",
      "Show the live state of the weftd that uses this catalog:\n"
      "connections, traces recording and converting, events per second,\n"
      "totals, refused clients and clients paused by backpressure. Exits\n"
      "1 when weftd is not running.\n"
      "\n"
      "  --json   print the status object weftd writes\n" },
    { "verify", weft__cmd_verify, 0, 1, 1, 1, "TRACE",
      "check an archive against the catalog",
      "Read the archive back with libotf2 and compare it with the catalog:\n"
      "the locations, each location's numberOfEvents and the events its\n"
      "file really holds, the total, the clock and the time range. Prints\n"
      "each difference and exits 1, or prints one OK line and exits 0.\n" },
    { "export", weft__cmd_export, OPT_FORMAT | OPT_OUTPUT, 1, 1, 2,
      "TRACE --format F -o FILE",
      "convert an archive for other viewers",
      "Convert the archive to another format, streaming (FILE '-' is\n"
      "standard output):\n"
      "\n"
      "  --format chrome-json  Trace Event JSON for Perfetto UI and\n"
      "                        chrome://tracing: a process per rank, a\n"
      "                        thread per location, B/E slices per region,\n"
      "                        C counters per metric\n"
      "  -o, --output FILE     where to write it\n"
      "\n"
      "Progress goes to stderr when it is a terminal.\n" },
    { "rm", cmd_rm, OPT_FORCE, 1, INT_MAX, 2,
      "TRACE... [--force] [--spool DIR]",
      "remove traces: archive and catalog rows",
      "Remove each trace's directory in the spool (SPOOL/traces/KEY, with\n"
      "its archive) and its catalog rows. Refuses a trace that is still\n"
      "recording or converting, and any trace whose directory does not\n"
      "resolve to exactly SPOOL/traces/KEY. SPOOL is --spool DIR, else the\n"
      "spool of weftd's configuration file (the one the catalog is found\n"
      "through) or the catalog's directory when it is a spool.\n"
      "\n"
      "  --force      remove a recording or converting trace too\n"
      "  --spool DIR  the spool weftd writes (it must have traces/), e.g.\n"
      "               when the catalog is elsewhere and weftd was started\n"
      "               with --spool\n" },
    { "sql", weft__cmd_sql, OPT_JSON | OPT_TABLE_CSV, 1, 1, 2,
      "[--table|--csv|--json] QUERY",
      "run a read-only SQL query on the catalog",
      "Run one SELECT statement on the catalog (SQLite; tables traces,\n"
      "locations, members, tags, regions) and print its result. The\n"
      "catalog is opened read-only and anything but reading is refused\n"
      "(writes, ATTACH, PRAGMA, schema changes, load_extension, more than\n"
      "one statement).\n"
      "\n"
      "  --table  aligned columns under a header (the default); NULL is\n"
      "           empty, control characters are escaped\n"
      "  --csv    RFC 4180 CSV with a header line, lines end in \\n; NULL\n"
      "           is an empty field\n"
      "  --json   an array of objects, one per row, keyed by column name;\n"
      "           integers and reals are numbers, NULL is null\n"
      "\n"
      "BLOBs are printed as hexadecimal text in every format.\n" },
    { "reindex", weft__cmd_reindex, 0, 0, 1, 2, "[SPOOL]",
      "rebuild the catalog from the spool (weftd stopped)",
      "Write a new catalog from the archives and journals in SPOOL\n"
      "(default: the catalog's directory), for a catalog that is damaged\n"
      "or lost. A converted trace gets its figures from its archive and\n"
      "the rest (owner, state, hosts, tags, members) from the old catalog\n"
      "where that still reads, else owner = the archive file's owner and\n"
      "state complete; a trace with journals is catalogued as recording\n"
      "(weftd resumes or converts it at its next start), or failed when\n"
      "no journal has a readable Hello. Region profiles are not rebuilt.\n"
      "\n"
      "Takes the spool's lock, so it refuses to run while weftd uses the\n"
      "spool: stop weftd first. The old catalog is kept, renamed to\n"
      "CATALOG.old-YYYYmmddTHHMMSSZ. Run it as the user weftd runs as\n"
      "(as root, the new catalog is given to the spool's owner).\n" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void global_help(FILE *out)
{
    fprintf(out,
            "Usage: weft [--catalog FILE] COMMAND [ARGS]\n"
            "\n"
            "Query the catalog of traces recorded by weftd. weftd need not "
            "be running.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        char lhs[64];
        snprintf(lhs, sizeof lhs, "%s %s", commands[i].name,
                 commands[i].synopsis);
        /* A synopsis too long for the column gets a line of its own. */
        if (strlen(lhs) > 22)
            fprintf(out, "  %s\n  %-22s %s\n", lhs, "", commands[i].summary);
        else
            fprintf(out, "  %-22s %s\n", lhs, commands[i].summary);
    }
    fprintf(out,
            "\n"
            "Options:\n"
            "  --catalog FILE         the catalog to read; default "
            "$WEFT_CATALOG, else the\n"
            "                         catalog of weftd's configuration "
            "file,\n"
            "                         %s\n"
            "  --spool DIR            weftd's spool, for rm; default the "
            "configuration's\n"
            "  -h, --help             this help; 'weft COMMAND --help' for "
            "one command\n"
            "  -V, --version          print the version\n"
            "\n%s"
            "\n"
            "Exit status: 0 ok, 1 not found or failed, 2 usage error.\n",
            weft_config_default_path(), trace_help);
}

static void command_help(const command *cmd)
{
    printf("Usage: weft [--catalog FILE] %s %s\n\n%s", cmd->name,
           cmd->synopsis, cmd->help);
    if (strstr(cmd->synopsis, "TRACE"))
        printf("\n%s", trace_help);
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* ---- catalog location ------------------------------------------------------- */

/* weftd's configuration as weftd reads it without flags: built-in
 * defaults, then $WEFT_CONFIG or /etc/weft/weftd.conf (may be missing),
 * catalog derived from spool. Returns 0, or WEFT_ECONFIG with err saying
 * why; weft_config_free cfg either way. */
static int load_config(weft_config *cfg, char *err, size_t errlen)
{
    int rc;

    weft_config_init(cfg);
    rc = weft_config_load_file(cfg, weft_config_default_path(), 1, err,
                               errlen);
    if (rc == 0)
        rc = weft_config_finish(cfg, err, errlen);
    return rc;
}

/* The catalog to read: --catalog, $WEFT_CATALOG, or the configuration's.
 * Returns a malloc'd path or NULL after printing why. */
static char *resolve_catalog(const char *opt)
{
    const char *env = getenv("WEFT_CATALOG");
    weft_config cfg;
    char err[512] = "";
    char *path = NULL;

    if (opt)
        return xstrdup(opt);
    if (env && *env)
        return xstrdup(env);
    if (load_config(&cfg, err, sizeof err) < 0)
        fail("%s", err);
    else if (!cfg.catalog || !*cfg.catalog)
        fail("no catalog configured in %s", weft_config_default_path());
    else
        path = xstrdup(cfg.catalog);
    weft_config_free(&cfg);
    return path;
}

static int open_catalog(cli *c);

int weft__cli_open_catalog(cli *c)
{
    return open_catalog(c);
}

static int open_catalog(cli *c)
{
    char *msg = NULL;
    int rc = weft_catalog_open(c->catalog_path, 1, &c->catalog, &msg);

    if (rc == WEFT_ENOTFOUND)
        fail("no catalog at %s (has weftd run with this configuration?)",
             c->catalog_path);
    else if (rc < 0)
        fail("%s", msg ? msg : weft_strerror(rc));
    free(msg);
    return rc < 0 ? EXIT_FAIL : EXIT_OK;
}

/* ---- arguments ---------------------------------------------------------------- */

/* Matches "--name VALUE" and "--name=VALUE" at argv[*i]; 1 if matched (then
 * *value is set, or NULL when VALUE is missing), 0 if not. */
static int opt_value(char **argv, int argc, int *i, const char *name,
                     const char **value)
{
    size_t n = strlen(name);

    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

/* The value options of list and profile at argv[*i]: 1 when one matched
 * (its value stored in c), 0 when none did, -1 after a usage error (a
 * missing value). */
static int query_option(const command *cmd, cli *c, char **argv, int argc,
                        int *i)
{
    static const struct {
        const char *name;
        unsigned opts;
        size_t offset;
    } vopts[] = {
        { "--user", OPT_LIST, offsetof(cli, user) },
        { "--name", OPT_LIST, offsetof(cli, name_glob) },
        { "--state", OPT_LIST, offsetof(cli, state) },
        { "--since", OPT_LIST, offsetof(cli, since) },
        { "--until", OPT_LIST, offsetof(cli, until) },
        { "--host", OPT_LIST, offsetof(cli, host) },
        { "--tag", OPT_LIST, 0 },
        { "--sort", OPT_LIST | OPT_PROFILE, offsetof(cli, sort) },
        { "--limit", OPT_LIST | OPT_PROFILE, offsetof(cli, limit) },
    };
    const char *v = NULL;

    for (size_t k = 0; k < sizeof vopts / sizeof vopts[0]; k++) {
        if (!(cmd->opts & vopts[k].opts) ||
            !opt_value(argv, argc, i, vopts[k].name, &v))
            continue;
        if (!v) {
            usage_error(cmd, "%s needs a value", vopts[k].name);
            return -1;
        }
        if (vopts[k].offset)
            *(const char **)((char *)c + vopts[k].offset) = v;
        else
            c->tags[c->ntags++] = v;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *catalog_opt = NULL;
    const command *cmd = NULL;
    cli c = { 0 };
    char *catalog_path = NULL;
    int i, want_help = 0, status, only_args = 0, rc;

    /* Global options, up to the command name. */
    for (i = 1; i < argc && !cmd; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            global_help(stdout);
            return EXIT_OK;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("weft %s\n", PACKAGE_VERSION);
            return EXIT_OK;
        } else if (opt_value(argv, argc, &i, "--catalog", &catalog_opt)) {
            if (!catalog_opt || !*catalog_opt)
                return usage_error(NULL, "--catalog needs a FILE");
        } else if (opt_value(argv, argc, &i, "--spool", &c.spool)) {
            if (!c.spool || !*c.spool)
                return usage_error(NULL, "--spool needs a DIR");
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error(NULL, "unknown option '%s'", a);
        } else if (!(cmd = find_command(a))) {
            return usage_error(NULL, "unknown command '%s'", a);
        }
    }
    if (!cmd) {
        global_help(stderr);
        return EXIT_USAGE;
    }

    /* The command's options and arguments, in any order. */
    c.args = calloc((size_t)argc, sizeof *c.args);
    c.tags = calloc((size_t)argc, sizeof *c.tags);
    if (!c.args || !c.tags) {
        free(c.args);
        free(c.tags);
        return fail("out of memory");
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || a[1] == '\0') {
            c.args[c.nargs++] = argv[i];
        } else if (strcmp(a, "--") == 0) {
            only_args = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            want_help = 1;
        } else if ((cmd->opts & OPT_JSON) && strcmp(a, "--json") == 0) {
            c.json = 1;
        } else if ((cmd->opts & OPT_FORCE) && strcmp(a, "--force") == 0) {
            c.force = 1;
        } else if ((cmd->opts & OPT_TABLE_CSV) &&
                   (strcmp(a, "--table") == 0 || strcmp(a, "--csv") == 0)) {
            if (c.format && strcmp(c.format, a + 2) != 0) {
                status = usage_error(cmd, "--table and --csv exclude each "
                                     "other");
                goto out;
            }
            c.format = a + 2;
        } else if ((cmd->opts & OPT_LIST) && strcmp(a, "--reverse") == 0) {
            c.reverse = 1;
        } else if ((cmd->opts & OPT_PROFILE) &&
                   strcmp(a, "--by-location") == 0) {
            c.by_location = 1;
        } else if ((rc = query_option(cmd, &c, argv, argc, &i)) != 0) {
            if (rc < 0) {
                status = EXIT_USAGE;
                goto out;
            }
        } else if ((cmd->opts & OPT_FORMAT) &&
                   opt_value(argv, argc, &i, "--format", &c.format)) {
            if (!c.format || !*c.format) {
                status = usage_error(cmd, "--format needs a VALUE");
                goto out;
            }
        } else if ((cmd->opts & OPT_OUTPUT) &&
                   (opt_value(argv, argc, &i, "--output", &c.output) ||
                    opt_value(argv, argc, &i, "-o", &c.output))) {
            if (!c.output || !*c.output) {
                status = usage_error(cmd, "%s needs a FILE", a);
                goto out;
            }
        } else if (opt_value(argv, argc, &i, "--catalog", &catalog_opt)) {
            if (!catalog_opt || !*catalog_opt) {
                status = usage_error(cmd, "--catalog needs a FILE");
                goto out;
            }
        } else if (opt_value(argv, argc, &i, "--spool", &c.spool)) {
            if (!c.spool || !*c.spool) {
                status = usage_error(cmd, "--spool needs a DIR");
                goto out;
            }
        } else {
            status = usage_error(cmd, "unknown option '%s'", a);
            goto out;
        }
    }
    if (want_help) {
        command_help(cmd);
        status = EXIT_OK;
        goto out;
    }
    if (c.nargs < cmd->min_args) {
        status = usage_error(cmd, "missing argument (usage: weft %s %s)",
                             cmd->name, cmd->synopsis);
        goto out;
    }
    if (c.nargs > cmd->max_args) {
        status = usage_error(cmd, "unexpected argument '%s'",
                             c.args[cmd->max_args]);
        goto out;
    }

    if (cmd->needs_catalog) {
        catalog_path = resolve_catalog(catalog_opt);
        if (!catalog_path) {
            status = EXIT_FAIL;
            goto out;
        }
        c.catalog_path = catalog_path;
        c.catalog_given = catalog_opt != NULL;
        status = cmd->needs_catalog == 1 ? open_catalog(&c) : EXIT_OK;
        if (status != EXIT_OK)
            goto out;
    }
    status = cmd->run(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        status = fail("error writing the output");
out:
    weft_catalog_close(c.catalog);
    free(catalog_path);
    free(c.args);
    free(c.tags);
    return status;
}
