/* show.c - weft show TRACE: every field of one trace, its members (the
 * missing ones named) and its locations, as text or one JSON object.
 */
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"

static int show_json_location(const weft_location_row *l, void *arg)
{
    json_t *o = json_object();

    if (!o || json_array_append_new(arg, o) != 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    weft__cli_jset(o, "id", weft__cli_ju64(l->id));
    weft__cli_jset(o, "rank", json_integer(l->rank));
    weft__cli_jset(o, "thread", json_integer(l->thread));
    weft__cli_jset(o, "name", weft__cli_jstr(l->name));
    weft__cli_jset(o, "events", weft__cli_ju64(l->events));
    weft__cli_jset(o, "dropped", weft__cli_ju64(l->dropped));
    if (l->process && *l->process) {
        weft__cli_jset(o, "process", weft__cli_jstr(l->process));
        weft__cli_jset(o, "program", weft__cli_jstr(l->program));
    }
    return 0;
}

static int show_table_location(const weft_location_row *l, void *arg)
{
    char *cells[6];

    cells[0] = weft__cli_fmt_u64(l->id);
    cells[1] = weft__cli_fmt_u64(l->rank);
    cells[2] = weft__cli_fmt_u64(l->thread);
    /* a live location has no name yet; a process tree's says its
     * process */
    if (l->process && *l->process) {
        char *s = NULL;
        if (asprintf(&s, "%s %s", l->process, l->name) < 0) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        cells[3] = weft__cli_escape(s);
        free(s);
    } else {
        cells[3] = *l->name ? weft__cli_escape(l->name)
                            : weft__cli_xstrdup("-");
    }
    cells[4] = weft__cli_fmt_u64(l->events);
    cells[5] = weft__cli_fmt_u64(l->dropped);
    weft__cli_table_add(arg, cells);
    return 0;
}

/* s escaped, or "-" when empty (malloc'd). */
static char *or_dash(const char *s)
{
    return *s ? weft__cli_escape(s) : weft__cli_xstrdup("-");
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
    weft__table t;
    json_t *arr;       /* --json */
    json_t *missing;   /* --json: [first, last] ranges of ranks */
    weft__sbuf missing_text; /* "2, 5-7" */
    uint32_t run_first, run_last; /* missing ranks not in the text yet */
    int in_run;
    uint32_t next;     /* the rank after the last row */
    int gaps;          /* ranks without a row are missing (not while the
                          trace records: they have not joined yet) */
    uint32_t complete, aborted, recording, nmissing, total;
    char **progs;      /* a process tree's: the program of each rank
                          (rank order, of its first location) */
    uint32_t *prog_ranks;
    size_t nprogs;
} members_ctx;

/* Adds the run of missing ranks to the text ("4" or "4-7") and to the
 * JSON ([4, 7]). */
static void flush_missing(members_ctx *x)
{
    json_t *range;

    if (!x->in_run)
        return;
    weft__cli_sb_printf(&x->missing_text, "%s%" PRIu32,
                        x->missing_text.len ? ", " : "", x->run_first);
    if (x->run_last > x->run_first)
        weft__cli_sb_printf(&x->missing_text, "-%" PRIu32, x->run_last);
    x->in_run = 0;
    if (!x->missing)
        return;
    range = json_pack("[II]", (json_int_t)x->run_first,
                      (json_int_t)x->run_last);
    if (!range || json_array_append_new(x->missing, range) != 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
}

/* Ranks first..last are missing: a member row says so (older catalogs
 * have one for every rank that never came), or no row exists. */
static void add_missing(members_ctx *x, uint32_t first, uint32_t last)
{
    if (x->in_run && first == x->run_last + 1) {
        x->run_last = last;
    } else {
        flush_missing(x);
        x->run_first = first;
        x->run_last = last;
        x->in_run = 1;
    }
    x->nmissing += last - first + 1;
}

/* The ranks below `end` after the last row that have none. */
static void missing_up_to(members_ctx *x, uint32_t end)
{
    if (x->gaps && end > x->next)
        add_missing(x, x->next, end - 1);
    if (end > x->next)
        x->next = end;
}

/* Location l's program, for its member (a process tree's). */
static int collect_program(const weft_location_row *l, void *arg)
{
    members_ctx *x = arg;

    if (!l->program || !*l->process ||
        (x->nprogs && x->prog_ranks[x->nprogs - 1] == l->rank))
        return 0;
    x->progs = realloc(x->progs, (x->nprogs + 1) * sizeof *x->progs);
    x->prog_ranks = realloc(x->prog_ranks,
                            (x->nprogs + 1) * sizeof *x->prog_ranks);
    if (!x->progs || !x->prog_ranks) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    x->prog_ranks[x->nprogs] = l->rank;
    x->progs[x->nprogs++] = weft__cli_xstrdup(l->program);
    return 0;
}

/* The program of member rank, NULL when not known. */
static const char *program_of(const members_ctx *x, uint32_t rank)
{
    size_t lo = 0, hi = x->nprogs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->prog_ranks[mid] == rank)
            return x->progs[mid];
        if (x->prog_ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int member_row(const weft_member_row *m, void *arg)
{
    members_ctx *x = arg;
    int missing = strcmp(m->state, WEFT_MEMBER_MISSING) == 0;
    const char *prog = program_of(x, m->rank);

    missing_up_to(x, m->rank);
    x->next = m->rank + 1;
    x->total++;
    x->complete += strcmp(m->state, WEFT_MEMBER_COMPLETE) == 0;
    x->aborted += strcmp(m->state, WEFT_MEMBER_ABORTED) == 0;
    x->recording += strcmp(m->state, WEFT_MEMBER_RECORDING) == 0;
    if (missing)
        add_missing(x, m->rank, m->rank);
    if (x->arr) {
        json_t *o = json_object();
        if (!o || json_array_append_new(x->arr, o) != 0) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        weft__cli_jset(o, "rank", json_integer(m->rank));
        weft__cli_jset(o, "host", weft__cli_jstr(m->host));
        weft__cli_jset(o, "pid", json_integer(m->pid));
        weft__cli_jset(o, "state", weft__cli_jstr(m->state));
        weft__cli_jset(o, "locations", weft__cli_ju64(m->locations));
        weft__cli_jset(o, "events", weft__cli_ju64(m->events));
        weft__cli_jset(o, "dropped", weft__cli_ju64(m->dropped));
        if (prog)
            weft__cli_jset(o, "program", weft__cli_jstr(prog));
        if (m->parent_pid)
            weft__cli_jset(o, "parent_pid", json_integer(m->parent_pid));
    } else {
        char *cells[9];
        size_t k = 0;
        cells[k++] = weft__cli_fmt_u64(m->rank);
        cells[k++] = or_dash(m->host);
        cells[k++] = m->pid ? weft__cli_fmt_u64(m->pid)
                            : weft__cli_xstrdup("-");
        if (x->nprogs) {
            cells[k++] = m->parent_pid ? weft__cli_fmt_u64(m->parent_pid)
                                       : weft__cli_xstrdup("-");
            cells[k++] = or_dash(prog ? prog : "");
        }
        cells[k++] = weft__cli_escape(m->state);
        cells[k++] = weft__cli_fmt_u64(m->locations);
        cells[k++] = weft__cli_fmt_u64(m->events);
        cells[k++] = weft__cli_fmt_u64(m->dropped);
        weft__cli_table_add(&x->t, cells);
    }
    return 0;
}

static void members_free(members_ctx *x)
{
    for (size_t i = 0; i < x->nprogs; i++)
        free(x->progs[i]);
    free(x->progs);
    free(x->prog_ranks);
}

/* The members of trace row, rank by rank, into x; the ranks without a
 * row up to row->members count as missing unless it records (or has no
 * member rows at all: it failed before its members were known). */
static int members_of(cli *c, const weft_trace_row *row, members_ctx *x)
{
    static const weft__table with_program = {
        9, { "RANK", "HOST", "PID", "PARENT", "PROGRAM", "STATE",
             "LOCATIONS", "EVENTS", "DROPPED" },
        { 1, 0, 1, 1, 0, 0, 1, 1, 1 }, NULL, 0, 0 };
    int rc;

    x->gaps = !weft__cli_row_live(row);
    rc = weft_catalog_locations(c->catalog, row->id, collect_program, x);
    if (rc == 0 && x->nprogs && x->t.ncols)
        x->t = with_program;  /* a process tree: each member's parent
                                 * and program */
    if (rc == 0)
        rc = weft_catalog_members(c->catalog, row->id, member_row, x);
    if (rc == 0 && x->total)
        missing_up_to(x, row->members);
    flush_missing(x);
    return rc;
}

static int tag_text(const weft_tag *tag, void *arg)
{
    weft__sbuf *b = arg;
    char *k = weft__cli_escape(tag->key), *v = weft__cli_escape(tag->value);

    if (b->len)
        weft__cli_sb_add(b, ", ", 2);
    weft__cli_sb_add(b, k, strlen(k));
    weft__cli_sb_add(b, "=", 1);
    weft__cli_sb_add(b, v, strlen(v));
    free(k);
    free(v);
    return 0;
}

/* What a trace still recording or converting has no figure for yet. */
#define NOT_KNOWN_YET "not known until the conversion ends"

/* "wall time:" (created to finished, the catalog's whole seconds) and
 * "duration:" (the trace's time range, first to last event, as weft
 * report's duration). */
static void show_durations(const weft_trace_row *row)
{
    char buf[160], *s;

    if (weft__cli_row_unfinished(row)) {
        field("wall time:", NOT_KNOWN_YET);
        field("duration:", NOT_KNOWN_YET);
        return;
    }
    if (weft__cli_row_wall(row) >= 0) {
        s = weft__cli_row_wall(row) == 0
            ? weft__cli_xstrdup("under 1 s")
            : weft__cli_fmt_duration(weft__cli_row_wall(row));
        snprintf(buf, sizeof buf, "%s (created to finished, in whole "
                 "seconds)", s);
        free(s);
        field("wall time:", buf);
    } else {
        field("wall time:", "-");
    }
    if (weft__cli_row_span(row) >= 0) {
        s = weft__cli_fmt_span(weft__cli_row_span(row));
        snprintf(buf, sizeof buf, "%s (first to last event)", s);
        free(s);
        field("duration:", buf);
    } else {
        field("duration:", row->events ? "-" : "none (no events)");
    }
}

/* "time range:" in seconds of the trace's clock, and "clock:". */
static void show_time_range(const weft_trace_row *row)
{
    char buf[192], *first, *last;

    if (weft__cli_row_unfinished(row)) {
        field("time range:", NOT_KNOWN_YET);
        field("clock:", NOT_KNOWN_YET);
        return;
    }
    if (weft__cli_row_span(row) >= 0) {
        first = weft__cli_fmt_ticks(row->time_first, row->timer_resolution);
        last = weft__cli_fmt_ticks(row->time_last, row->timer_resolution);
        snprintf(buf, sizeof buf, "%s .. %s s (the clock's seconds; %"
                 PRIu64 " ticks/s)", first, last, row->timer_resolution);
        free(first);
        free(last);
        field("time range:", buf);
    } else {
        field("time range:", row->events ? "-" : "none (no events)");
    }
    field_take("clock:", or_dash(row->clock));
}

static void show_trace_text(const weft_trace_row *row)
{
    struct passwd *pw = getpwuid(row->uid);
    char buf[256];
    char *s;

    snprintf(buf, sizeof buf, "%" PRId64, row->id);
    field("id:", buf);
    field_take("key:", weft__cli_escape(row->key));
    field_take("name:", weft__cli_escape(row->name));
    s = weft__cli_escape(pw ? pw->pw_name : NULL);
    snprintf(buf, sizeof buf, "%" PRIu32 " (%s)", row->uid,
             pw ? s : "unknown user");
    free(s);
    field("owner:", buf);
    field_take("state:", weft__cli_escape(row->state));
    if (row->retry_at) {
        char *at = weft__cli_fmt_time(row->retry_at);
        snprintf(buf, sizeof buf, "weftd converts it again at %s", at);
        free(at);
        field("retry:", buf);
    }
    field_take("hosts:", or_dash(row->hosts));
    field_take("command:", or_dash(row->command));
    field_take("job id:", or_dash(row->job_id));
    field_take("run:", or_dash(row->run));
    field_take("protocol:", weft__cli_fmt_u64(row->protocol_version));
    field_take("created:", weft__cli_fmt_time(row->created));
    field_take("finished:", weft__cli_fmt_time(row->finished));
    show_durations(row);
    s = weft__cli_archive_of(row->path);
    field_take("archive:", s ? weft__cli_escape(s) : weft__cli_xstrdup("-"));
    free(s);
    if (weft__cli_row_live(row)) {
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
        s = weft__cli_fmt_size(row->bytes);
        snprintf(buf, sizeof buf, "%" PRIu64 " (%s; live, journaled so "
                 "far)", row->bytes, s);
        free(s);
        field("bytes:", buf);
        s = weft__cli_fmt_time(row->live_updated);
        snprintf(buf, sizeof buf, "%s (live figures; the final ones come "
                 "with the conversion)", s);
        free(s);
        field("updated:", buf);
    } else {
        field_take("members:", weft__cli_fmt_u64(row->members));
        field_take("locations:", weft__cli_fmt_u64(row->locations));
        field_take("events:", weft__cli_fmt_u64(row->events));
        s = weft__cli_fmt_size(row->bytes);
        snprintf(buf, sizeof buf, "%" PRIu64 " (%s)", row->bytes, s);
        free(s);
        field("bytes:", buf);
    }
    /* Of dropped, weftd's refusals (schema 12) and the clients' drops. */
    if (row->refused)
        snprintf(buf, sizeof buf, "%" PRIu64 " (%" PRIu64 " by the "
                 "clients, their buffers full; %" PRIu64 " refused by "
                 "weftd: spool quota or disk)", row->dropped,
                 row->dropped > row->refused ? row->dropped - row->refused
                                             : 0, row->refused);
    else
        snprintf(buf, sizeof buf, "%" PRIu64, row->dropped);
    field("dropped:", buf);
    show_time_range(row);
    /* A partial trace keeps why it is not complete in the same column. */
    if (row->error)
        field_take(strcmp(row->state, "partial") == 0 ? "reason:" : "error:",
                   weft__cli_escape(row->error));
}

/* weft show --json: one object. Returns an exit status. */
static int show_json(cli *c, const weft_trace_row *row)
{
    members_ctx mx = { 0 };
    json_t *obj = weft__cli_trace_json(row), *locs = json_array(),
           *tags = NULL;
    int rc, status = EXIT_FAIL;

    mx.arr = json_array();
    mx.missing = json_array();
    if (obj) { /* dropped (the total) is both of these */
        weft__cli_jset(obj, "dropped_by_clients", weft__cli_ju64(
                       row->dropped > row->refused ? row->dropped -
                                                     row->refused : 0));
        weft__cli_jset(obj, "refused", weft__cli_ju64(row->refused));
    }
    if (!locs || !mx.arr || !mx.missing) {
        weft__cli_fail("out of memory");
        goto out;
    }
    rc = weft_catalog_locations(c->catalog, row->id, show_json_location,
                                locs);
    if (rc == 0)
        rc = members_of(c, row, &mx);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (!(tags = weft__cli_tags_json(c, row)))
        goto out;
    /* "locations" is the array here; the count moves aside.
     * "members" stays the count; "ranks" is the array of members. */
    weft__cli_jset(obj, "location_count", weft__cli_ju64(row->locations));
    weft__cli_jset(obj, "locations", locs);
    weft__cli_jset(obj, "ranks", mx.arr);
    weft__cli_jset(obj, "missing_ranks", mx.missing);
    weft__cli_jset(obj, "tags", tags);
    locs = mx.arr = mx.missing = tags = NULL;
    status = weft__cli_print_json(obj);
    obj = NULL;
out:
    json_decref(mx.arr);
    json_decref(mx.missing);
    free(mx.missing_text.s);
    members_free(&mx);
    json_decref(locs);
    json_decref(obj);
    return status;
}

/* The "ranks:" and "missing:" lines of the text. */
static void show_ranks(const weft_trace_row *row, const members_ctx *mx)
{
    char buf[160];

    if (mx->total && weft__cli_row_live(row)) {
        snprintf(buf, sizeof buf, "%" PRIu32 " complete, %" PRIu32
                 " recording, %" PRIu32 " not joined yet (live)",
                 mx->complete, mx->recording,
                 row->members > mx->total ? row->members - mx->total : 0);
        field("ranks:", buf);
    } else if (mx->total && mx->aborted) {
        snprintf(buf, sizeof buf, "%" PRIu32 " complete, %" PRIu32
                 " aborted, %" PRIu32 " missing", mx->complete, mx->aborted,
                 mx->nmissing);
        field("ranks:", buf);
    } else if (mx->total) {
        snprintf(buf, sizeof buf, "%" PRIu32 " complete, %" PRIu32
                 " missing", mx->complete, mx->nmissing);
        field("ranks:", buf);
    }
    if (mx->nmissing)
        printf("%-13s%s %s\n", "missing:", mx->nmissing == 1 ? "rank"
                                                             : "ranks",
               mx->missing_text.s);
}

/* weft show: the fields, then the members and locations as tables.
 * Returns an exit status. */
static int show_text(cli *c, const weft_trace_row *row)
{
    weft__table t = { 6, { "ID", "RANK", "THREAD", "NAME", "EVENTS",
                           "DROPPED" },
                      { 1, 1, 1, 0, 1, 1 }, NULL, 0, 0 };
    members_ctx mx = { .t = { 7, { "RANK", "HOST", "PID", "STATE",
                                   "LOCATIONS", "EVENTS", "DROPPED" },
                              { 1, 0, 1, 0, 1, 1, 1 }, NULL, 0, 0 } };
    weft__sbuf tagtext = { 0 };
    int rc, status = EXIT_FAIL;

    rc = weft_catalog_locations(c->catalog, row->id, show_table_location,
                                &t);
    if (rc == 0)
        rc = members_of(c, row, &mx);
    if (rc == 0)
        rc = weft_catalog_tags(c->catalog, row->id, tag_text, &tagtext);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    show_trace_text(row);
    field("tags:", tagtext.len ? tagtext.s : "-");
    show_ranks(row, &mx);
    putchar('\n');
    if (mx.t.nrows) {
        weft__cli_table_print(&mx.t, stdout);
        putchar('\n');
    }
    if (t.nrows)
        weft__cli_table_print(&t, stdout);
    else
        puts("no locations recorded");
    status = EXIT_OK;
out:
    free(mx.missing_text.s);
    members_free(&mx);
    weft__cli_table_free(&mx.t);
    free(tagtext.s);
    weft__cli_table_free(&t);
    return status;
}

int weft__cmd_show(cli *c)
{
    weft_trace_row row;
    int status;

    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    status = c->json ? show_json(c, &row) : show_text(c, &row);
    weft_catalog_trace_free(&row);
    return status;
}
