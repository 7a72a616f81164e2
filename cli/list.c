/* list.c - weft list: the traces of the catalog, newest first, filtered
 * and sorted in SQL (weft_catalog_query), never in C; as a table or a
 * JSON array streamed one trace at a time. A trace still recording shows
 * the live figures weftd received so far.
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"

typedef struct list_ctx {
    cli *c;
    size_t njson;   /* objects printed so far (--json) */
    weft__table t;
    int failed;
} list_ctx;

/* Prints one element of the --json array as it comes, so that listing
 * 100,000 traces never holds them all: the same text json_dumps gives
 * for the whole array with JSON_INDENT(2). */
static int list_json_row(const weft_trace_row *row, void *arg)
{
    list_ctx *x = arg;
    json_t *o = weft__cli_trace_json(row);
    json_t *tags = weft__cli_tags_json(x->c, row);
    char *s;

    if (!tags) {
        json_decref(o);
        x->failed = 1;
        return 1;
    }
    weft__cli_jset(o, "tags", tags);
    s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    if (!s) {
        weft__cli_fail("out of memory");
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
    cells[0] = weft__cli_xstrdup(id);
    cells[1] = weft__cli_escape(row->name);
    cells[3] = weft__cli_fmt_time(row->created);
    cells[5] = weft__cli_fmt_u64(row->locations);
    cells[6] = weft__cli_fmt_u64(row->events);
    if (weft__cli_row_live(row)) {
        /* received so far: members joined of those expected, the size
         * of the journals; a converting trace's archive is not done */
        char buf[64];
        snprintf(buf, sizeof buf, "%" PRIu32 "/%" PRIu32, row->joined,
                 row->members);
        cells[4] = weft__cli_xstrdup(buf);
        cells[2] = weft__cli_xstrdup(
            strcmp(row->state, WEFT_STATE_RECORDING) == 0
            ? WEFT_STATE_RECORDING " (live)" : row->state);
    } else {
        cells[4] = weft__cli_fmt_u64(row->members);
        cells[2] = weft__cli_escape(row->state);
    }
    if (strcmp(row->state, WEFT_STATE_CONVERTING) == 0)
        cells[7] = weft__cli_xstrdup("converting");
    else
        cells[7] = weft__cli_fmt_size(row->bytes);
    weft__cli_table_add(&x->t, cells);
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
                weft__cli_parse_int(digits, 0, INT64_MAX / 2 / units[i].secs,
                                    &v) == 0) {
                *out = (int64_t)time(NULL) - v * units[i].secs;
                return 0;
            }
        return -1;
    }
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && n == 10 &&
        s[n] == '\0') {
        if (weft__cli_local_time(y, mo, d, 0, 0, 0, out) < 0)
            return -1;
        if (end && weft__cli_local_time(y, mo, d, 23, 59, 59, out) < 0)
            return -1;
        return 0;
    }
    n = -1;
    if (len >= 16 && (s[10] == ' ' || s[10] == 'T') &&
        sscanf(s, "%4d-%2d-%2d%*c%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5 &&
        n == 16 && (s[16] == '\0' ||
                    (sscanf(s + 16, ":%2d%n", &sec, &n) == 1 && n == 3 &&
                     s[19] == '\0')))
        return weft__cli_local_time(y, mo, d, h, mi, sec, out);
    return -1;
}

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
        WEFT_STATE_PARTIAL, WEFT_STATE_FAILED, WEFT_STATE_REMOVED,
    };
    const char *cmd = "list";
    int64_t v;

    memset(f, 0, sizeof *f);
    if (c->user) {
        struct passwd *pw;
        f->has_uid = 1;
        if (weft__cli_parse_int(c->user, 0, UINT32_MAX - 1, &v) == 0)
            f->uid = (uint32_t)v;
        else if ((pw = getpwnam(c->user)) != NULL)
            f->uid = pw->pw_uid;
        else
            return weft__cli_usage(cmd, "--user '%s': no such user",
                                   c->user);
    }
    f->name_glob = c->name_glob;
    if (c->state) {
        if (WEFT__WORD_INDEX(c->state, states) < 0)
            return weft__cli_usage(cmd, "--state '%s': not one of recording,"
                                   " converting, complete, partial, failed,"
                                   " removed",
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
        tags[k].key = weft__cli_xrealloc(NULL, (size_t)(eq - c->tags[k]) + 1);
        memcpy(tags[k].key, c->tags[k], (size_t)(eq - c->tags[k]));
        tags[k].key[eq - c->tags[k]] = 0;
        tags[k].value = (char *)eq + 1;
        f->ntags = (size_t)k + 1;
    }
    f->tags = tags;
    f->host = c->host;
    if (c->sort) {
        int i = WEFT__WORD_INDEX(c->sort, sorts);
        if (i < 0)
            return weft__cli_usage(cmd, "--sort '%s': not one of created, "
                                   "name, events, size, duration, state",
                                   c->sort);
        f->sort = (enum weft_list_sort)i;
    }
    f->reverse = c->reverse;
    if (c->limit && weft__cli_parse_int(c->limit, 1, INT64_MAX, &f->limit) < 0)
        return weft__cli_usage(cmd, "--limit '%s': not a number above 0",
                               c->limit);
    return EXIT_OK;
}

int weft__cmd_list(cli *c)
{
    list_ctx x = { c, 0, { 8, { "ID", "NAME", "STATE", "CREATED",
                                   "MEMBERS", "LOCATIONS", "EVENTS", "SIZE" },
                              { 1, 0, 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 }, 0 };
    weft_tag *tags = weft__cli_xrealloc(NULL, ((size_t)c->ntags + 1) *
                                               sizeof *tags);
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
        status = weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (c->json)
        puts(x.njson ? "\n]" : "[]");
    else if (x.t.nrows)
        weft__cli_table_print(&x.t, stdout);
out:
    weft__cli_table_free(&x.t);
    for (int k = 0; k < c->ntags; k++)
        free(tags[k].key);
    free(tags);
    return status;
}
