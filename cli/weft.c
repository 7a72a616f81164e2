/* weft.c - the weft command: query the trace catalog weftd writes.
 *
 *   weft [--catalog FILE] list [--json]
 *   weft [--catalog FILE] show TRACE [--json]
 *   weft [--catalog FILE] verify TRACE          (verify.c)
 *   weft [--catalog FILE] export TRACE --format chrome-json -o FILE
 *                                               (export.c)
 *   weft [--catalog FILE] rm TRACE... [--force]
 *
 * Subcommands are entries of `commands` (name, function, synopsis, help);
 * a new one is a function plus one entry. The catalog is opened read-only
 * (it is never created here) and is found by --catalog, else
 * $WEFT_CATALOG, else the catalog of weftd's default configuration.
 * Exit status: 0 ok, 1 not found or failed, 2 usage error.
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

int weft__cli_find(cli *c, const char *what, weft_trace_row *row)
{
    int rc = weft_catalog_find(c->catalog, what, row);

    if (rc == WEFT_ENOTFOUND) {
        char *w = escape(what), *path = escape(c->catalog_path);
        fail("no trace '%s' in %s", w, path);
        free(w);
        free(path);
        return EXIT_FAIL;
    }
    if (rc < 0)
        return fail("%s", weft_catalog_errmsg(c->catalog));
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
    free(archive);
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

static int list_json_row(const weft_trace_row *row, void *arg)
{
    if (json_array_append_new(arg, trace_json(row)) != 0) {
        fail("out of memory");
        exit(EXIT_FAIL);
    }
    return 0;
}

static int list_table_row(const weft_trace_row *row, void *arg)
{
    char *cells[8];
    char id[32];

    snprintf(id, sizeof id, "%" PRId64, row->id);
    cells[0] = xstrdup(id);
    cells[1] = escape(row->name);
    cells[2] = escape(row->state);
    cells[3] = fmt_time(row->created);
    cells[4] = fmt_u64(row->members);
    cells[5] = fmt_u64(row->locations);
    cells[6] = fmt_u64(row->events);
    cells[7] = fmt_size(row->bytes);
    table_add(arg, cells);
    return 0;
}

static int cmd_list(cli *c)
{
    table t = { 8, { "ID", "NAME", "STATE", "CREATED", "MEMBERS",
                     "LOCATIONS", "EVENTS", "SIZE" },
                { 1, 0, 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 };
    json_t *arr = NULL;
    int rc;

    if (c->json) {
        arr = json_array();
        if (!arr)
            return fail("out of memory");
        rc = weft_catalog_list(c->catalog, list_json_row, arr);
        if (rc < 0) {
            json_decref(arr);
            return fail("%s", weft_catalog_errmsg(c->catalog));
        }
        return print_json(arr);
    }
    rc = weft_catalog_list(c->catalog, list_table_row, &t);
    if (rc < 0) {
        table_free(&t);
        return fail("%s", weft_catalog_errmsg(c->catalog));
    }
    if (t.nrows == 0) {
        char *path = escape(c->catalog_path);
        printf("no traces in %s\n", path);
        free(path);
    } else {
        table_print(&t, stdout);
    }
    table_free(&t);
    return EXIT_OK;
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
    cells[3] = escape(l->name);
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
    field_take("created:", fmt_time(row->created));
    field_take("finished:", fmt_time(row->finished));
    field_take("duration:", row->finished && row->created
                            ? fmt_duration(row->finished - row->created)
                            : xstrdup("-"));
    s = archive_of(row->path);
    field_take("archive:", s ? escape(s) : xstrdup("-"));
    free(s);
    field_take("members:", fmt_u64(row->members));
    field_take("locations:", fmt_u64(row->locations));
    field_take("events:", fmt_u64(row->events));
    s = fmt_size(row->bytes);
    snprintf(buf, sizeof buf, "%" PRIu64 " (%s)", row->bytes, s);
    free(s);
    field("bytes:", buf);
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
    if (row->error)
        field_take("error:", escape(row->error));
}

static int cmd_show(cli *c)
{
    table t = { 6, { "ID", "RANK", "THREAD", "NAME", "EVENTS", "DROPPED" },
                { 1, 1, 1, 0, 1, 1 }, NULL, 0, 0 };
    weft_trace_row row;
    json_t *obj = NULL, *locs = NULL;
    int rc, status = EXIT_FAIL;

    rc = weft_catalog_find(c->catalog, c->args[0], &row);
    if (rc == WEFT_ENOTFOUND) {
        char *what = escape(c->args[0]), *path = escape(c->catalog_path);
        fail("no trace '%s' in %s", what, path);
        free(what);
        free(path);
        return EXIT_FAIL;
    }
    if (rc < 0)
        return fail("%s", weft_catalog_errmsg(c->catalog));
    if (c->json) {
        obj = trace_json(&row);
        locs = json_array();
        if (!locs) {
            fail("out of memory");
            goto out;
        }
        rc = weft_catalog_locations(c->catalog, row.id, show_json_location,
                                    locs);
        if (rc < 0) {
            fail("%s", weft_catalog_errmsg(c->catalog));
            goto out;
        }
        /* "locations" is the array here; the count moves aside. */
        jset(obj, "location_count", ju64(row.locations));
        jset(obj, "locations", locs);
        locs = NULL;
        status = print_json(obj);
        obj = NULL;
        goto out;
    }
    rc = weft_catalog_locations(c->catalog, row.id, show_table_location, &t);
    if (rc < 0) {
        fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    show_trace_text(&row);
    putchar('\n');
    if (t.nrows)
        table_print(&t, stdout);
    else
        puts("no locations recorded");
    status = EXIT_OK;
out:
    json_decref(locs);
    json_decref(obj);
    table_free(&t);
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

/* The spools whose traces rm may remove, as real paths (malloc'd): the
 * directory of the catalog (its default place is SPOOL/catalog.db) and,
 * when no --catalog was given, the configured spool. Returns how many. */
static size_t rm_spools(const cli *c, char *spools[2])
{
    const char *slash = strrchr(c->catalog_path, '/');
    char *dir = NULL;
    size_t n = 0;

    if (!slash)
        dir = xstrdup(".");
    else if (asprintf(&dir, "%.*s", (int)(slash - c->catalog_path + (slash ==
                      c->catalog_path)), c->catalog_path) < 0)
        dir = NULL;
    if (dir && (spools[n] = realpath(dir, NULL)) != NULL)
        n++;
    free(dir);
    if (!c->catalog_given) {
        weft_config cfg;
        char err[512];
        weft_config_init(&cfg);
        if (weft_config_load_file(&cfg, weft_config_default_path(), 1, err,
                                  sizeof err) == 0 &&
            weft_config_finish(&cfg, err, sizeof err) == 0 && cfg.spool &&
            (spools[n] = realpath(cfg.spool, NULL)) != NULL)
            n++;
        weft_config_free(&cfg);
    }
    return n;
}

/* The trace directory (SPOOL/traces/KEY, the parent of the archive) of
 * row as a real path, checked to be in one of the spools. Returns 0 and
 * sets *dir (malloc'd; NULL when nothing of the trace is on disk), or
 * EXIT_FAIL after saying why. */
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
        char *p = escape(path), *k = escape(row->key);
        if (nspools)
            fail("trace '%s': archive %s is not %s/traces/%s; not removing "
                 "anything outside the spool", k, p, spools[0], k);
        else
            fail("trace '%s': no spool directory found (the catalog's "
                 "directory does not resolve); not removing %s", k, p);
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
    nspools = rm_spools(c, spools);
    for (int i = 0; i < c->nargs; i++)
        if (rm_one(c, spools, nspools, c->args[i]) != EXIT_OK)
            status = EXIT_FAIL;
    free(spools[0]);
    free(spools[1]);
    return status;
}

/* ---- the command table ---------------------------------------------------- */

static const command commands[] = {
    { "list", cmd_list, OPT_JSON, 0, 0, 1, "[--json]",
      "list traces, newest first",
      "List the traces of the catalog, newest first: id, name, state,\n"
      "creation time, members, locations, events and archive size.\n"
      "\n"
      "  --json   print a JSON array of trace objects\n" },
    { "show", cmd_show, OPT_JSON, 1, 1, 1, "TRACE [--json]",
      "show one trace and its locations",
      "Show every field of one trace (owner, state, times, archive path,\n"
      "figures, error) and its locations.\n"
      "\n"
      "  --json   print a JSON object; \"locations\" is the array of its\n"
      "           locations\n" },
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
    { "rm", cmd_rm, OPT_FORCE, 1, INT_MAX, 2, "TRACE... [--force]",
      "remove traces: archive and catalog rows",
      "Remove each trace's directory in the spool (SPOOL/traces/KEY, with\n"
      "its archive) and its catalog rows. Refuses a trace that is still\n"
      "recording or converting, and any archive path that does not resolve\n"
      "into the spool's traces/ directory (the catalog's directory, or the\n"
      "configured spool when --catalog is not given).\n"
      "\n"
      "  --force  remove a recording or converting trace too\n" },
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
    weft_config_init(&cfg);
    if (weft_config_load_file(&cfg, weft_config_default_path(), 1, err,
                              sizeof err) < 0 ||
        weft_config_finish(&cfg, err, sizeof err) < 0)
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

int main(int argc, char **argv)
{
    const char *catalog_opt = NULL;
    const command *cmd = NULL;
    cli c = { 0 };
    char *catalog_path = NULL;
    int i, want_help = 0, status, only_args = 0;

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
    if (!c.args)
        return fail("out of memory");
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
    return status;
}
