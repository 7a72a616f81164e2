/* catalog_read.c - what the weft command reads from the catalog: traces
 * listed, filtered and sorted, one trace found by key, id or name, its
 * locations, members, tags and region profile (see catalog.c for the
 * design).
 */
#include "catalog.h"
#include "catalog_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "varint.h"
#include "weft_errors.h"

#define ID_DIGITS_MAX 18 /* below INT64_MAX whatever the digits */

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_list(weft_catalog *c, weft_catalog_trace_fn fn, void *arg)
{
    return weft_catalog_query(c, NULL, fn, arg);
}

/* ORDER BY of each weft_list_sort, its natural direction first. */
static const char *sort_sql(enum weft_list_sort sort, int reverse)
{
    static const char *const sql[][2] = {
        [WEFT_SORT_CREATED] = { "created DESC, seq DESC",
                                "created ASC, seq ASC" },
        [WEFT_SORT_NAME] = { "name ASC, created DESC, seq DESC",
                             "name DESC, created ASC, seq ASC" },
        [WEFT_SORT_EVENTS] = { "events DESC, created DESC, seq DESC",
                               "events ASC, created ASC, seq ASC" },
        [WEFT_SORT_SIZE] = { "bytes DESC, created DESC, seq DESC",
                             "bytes ASC, created ASC, seq ASC" },
        [WEFT_SORT_DURATION] = {
            "(CASE WHEN finished >= created THEN finished - created"
            " ELSE -1 END) DESC, created DESC, seq DESC",
            "(CASE WHEN finished >= created THEN finished - created"
            " ELSE -1 END) ASC, created ASC, seq ASC" },
        [WEFT_SORT_STATE] = { "state ASC, created DESC, seq DESC",
                              "state DESC, created ASC, seq ASC" },
    };

    if ((unsigned)sort >= sizeof sql / sizeof sql[0])
        return NULL;
    return sql[sort][reverse ? 1 : 0];
}

/* The SELECT of a filter, its values as "?" in the order bind_filter
 * binds them. NULL (and c's message set) on failure; sqlite3_free it. */
static char *filter_sql(weft_catalog *c, const weft_list_filter *f)
{
    sqlite3_str *q = sqlite3_str_new(c->db);
    const char *order = sort_sql(f->sort, f->reverse);
    char *sql;

    if (!order) {
        sqlite3_free(sqlite3_str_finish(q));
        weft__cat_err(c, WEFT_EINVAL, "catalog %s: unknown sort order %d",
                      c->path,
                      (int)f->sort);
        return NULL;
    }
    sqlite3_str_appendall(q, "SELECT " TRACE_COLS " FROM traces t WHERE 1");
    if (f->has_uid)
        sqlite3_str_appendall(q, " AND t.uid = ?");
    if (f->name_glob)
        sqlite3_str_appendall(q, " AND t.name GLOB ?");
    if (f->state)
        sqlite3_str_appendall(q, " AND t.state = ?");
    if (f->since)
        sqlite3_str_appendall(q, " AND t.created >= ?");
    if (f->until)
        sqlite3_str_appendall(q, " AND t.created <= ?");
    /* hosts is what a recording trace knows; members, after it ended. */
    if (f->host)
        sqlite3_str_appendall(q, " AND (instr(',' || t.hosts || ',',"
                              " ',' || ? || ',') > 0 OR EXISTS (SELECT 1"
                              " FROM members m WHERE m.trace_id = t.id"
                              " AND m.host = ?))");
    for (size_t i = 0; i < f->ntags; i++)
        sqlite3_str_appendall(q, " AND EXISTS (SELECT 1 FROM tags g"
                              " WHERE g.trace_id = t.id AND g.key = ?"
                              " AND g.value = ?)");
    sqlite3_str_appendf(q, " ORDER BY %s", order);
    if (f->limit > 0)
        sqlite3_str_appendall(q, " LIMIT ?");
    sql = sqlite3_str_finish(q);
    if (!sql)
        weft__cat_err(c, WEFT_ENOMEM, "catalog %s: out of memory", c->path);
    return sql;
}

static int bind_filter(weft_catalog *c, sqlite3_stmt *st,
                       const weft_list_filter *f)
{
    int i = 0, rc = SQLITE_OK;

#define B(call) if (rc == SQLITE_OK) rc = (call)
    if (f->has_uid)
        B(sqlite3_bind_int64(st, ++i, f->uid));
    if (f->name_glob)
        B(sqlite3_bind_text(st, ++i, f->name_glob, -1, SQLITE_STATIC));
    if (f->state)
        B(sqlite3_bind_text(st, ++i, f->state, -1, SQLITE_STATIC));
    if (f->since)
        B(sqlite3_bind_int64(st, ++i, f->since));
    if (f->until)
        B(sqlite3_bind_int64(st, ++i, f->until));
    if (f->host) {
        B(sqlite3_bind_text(st, ++i, f->host, -1, SQLITE_STATIC));
        B(sqlite3_bind_text(st, ++i, f->host, -1, SQLITE_STATIC));
    }
    for (size_t k = 0; k < f->ntags; k++) {
        B(sqlite3_bind_text(st, ++i, f->tags[k].key ? f->tags[k].key : "",
                            -1, SQLITE_STATIC));
        B(sqlite3_bind_text(st, ++i, f->tags[k].value ? f->tags[k].value
                                                      : "", -1,
                            SQLITE_STATIC));
    }
    if (f->limit > 0)
        B(sqlite3_bind_int64(st, ++i, f->limit));
#undef B
    return rc == SQLITE_OK ? 0 : weft__cat_db_err(c, "bind");
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_query(weft_catalog *c, const weft_list_filter *filter,
                       weft_catalog_trace_fn fn, void *arg)
{
    static const weft_list_filter all;
    const weft_list_filter *f = filter ? filter : &all;
    sqlite3_stmt *st = NULL;
    weft_trace_row row;
    char *sql;
    int rc, step;

    assert(c && fn && (f->tags || f->ntags == 0));
    sql = filter_sql(c, f);
    if (!sql)
        return sort_sql(f->sort, f->reverse) ? WEFT_ENOMEM : WEFT_EINVAL;
    rc = weft__cat_prepare(c, sql, &st);
    sqlite3_free(sql);
    if (rc < 0)
        goto out;
    rc = bind_filter(c, st, f);
    if (rc < 0)
        goto out;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        rc = weft__cat_read_trace(c, st, &row);
        if (rc == 0)
            rc = fn(&row, arg);
        weft_catalog_trace_free(&row);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = weft__cat_db_err(c, "listing traces");
out:
    sqlite3_finalize(st);
    return rc;
}

/* Runs a query selecting TRACE_COLS with one text parameter (or an id when
 * text is NULL) and reads its first row. */
static int find_one(weft_catalog *c, const char *sql, const char *text,
                    int64_t id, weft_trace_row *out)
{
    sqlite3_stmt *st = NULL;
    int rc;

    rc = weft__cat_prepare(c, sql, &st);
    if (rc < 0)
        goto out;
    if (text)
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, 1, id);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW: rc = weft__cat_read_trace(c, st, out); break;
    case SQLITE_DONE: rc = WEFT_ENOTFOUND; break;
    default: rc = weft__cat_db_err(c, "finding a trace"); break;
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* Parses "12" or "#12" (*strict set for the '#' form); 0 or -1. */
static int parse_id(const char *s, int64_t *id, int *strict)
{
    size_t n;

    *strict = *s == '#';
    s += *strict;
    n = strspn(s, "0123456789");
    if (n == 0 || s[n] != '\0' || n > ID_DIGITS_MAX)
        return -1;
    *id = strtoll(s, NULL, 10);
    return 0;
}

/* Returns 0 with *out filled (strings malloc'd: weft_catalog_trace_free),
 * WEFT_ENOTFOUND, or another WEFT_E* code. "#12" is only ever an id; a
 * bare number is tried as an id, then as a key and a name. */
int weft_catalog_find(weft_catalog *c, const char *what, weft_trace_row *out)
{
    static const char by_id[] = "SELECT " TRACE_COLS
        " FROM traces WHERE id = ?";
    static const char by_key[] = "SELECT " TRACE_COLS
        " FROM traces WHERE key = ?";
    static const char by_name[] = "SELECT " TRACE_COLS
        " FROM traces WHERE name = ? ORDER BY created DESC, seq DESC LIMIT 1";
    int64_t id;
    int strict = 0, rc = WEFT_ENOTFOUND;

    assert(c && what && out);
    memset(out, 0, sizeof *out);
    if (parse_id(what, &id, &strict) == 0)
        rc = find_one(c, by_id, NULL, id, out);
    if (rc == WEFT_ENOTFOUND && !strict)
        rc = find_one(c, by_key, what, 0, out);
    if (rc == WEFT_ENOTFOUND && !strict)
        rc = find_one(c, by_name, what, 0, out);
    if (rc == WEFT_ENOTFOUND)
        weft__cat_err(c, rc, "catalog %s: no trace %s", c->path, what);
    if (rc < 0)
        weft_catalog_trace_free(out);
    return rc;
}

/* Returns 0 with *n the number of traces named `name` (of any owner the
 * handle can see), or a WEFT_E* code. */
int weft_catalog_count_name(weft_catalog *c, const char *name, uint64_t *n)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && name && n);
    *n = 0;
    rc = weft__cat_prepare(c, "SELECT count(*) FROM traces WHERE name = ?",
                           &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        *n = (uint64_t)sqlite3_column_int64(st, 0);
    else
        rc = weft__cat_db_err(c, "counting traces by name");
    sqlite3_finalize(st);
    return rc;
}

/* Frees the strings of a row read from the catalog and clears it. */
void weft_catalog_trace_free(weft_trace_row *row)
{
    if (!row)
        return;
    free(row->key);
    free(row->name);
    free(row->state);
    free(row->path);
    free(row->error);
    free(row->hosts);
    free(row->command);
    free(row->job_id);
    free(row->run);
    free(row->clock);
    memset(row, 0, sizeof *row);
}

/* ---- the rows of one trace ---------------------------------------------
 * Each table that holds rows of a trace is read the same way: one
 * statement with the trace's id for its parameter, stepped to its end,
 * each row made into what the caller's function takes. */

/* A caller's function (the one of its kind) and its argument. */
typedef struct each {
    weft_catalog *c;
    int64_t trace_id;
    union {
        weft_catalog_location_fn location;
        weft_catalog_member_fn member;
        weft_catalog_timeline_fn timeline;
        weft_catalog_timeline_region_fn timeline_region;
        weft_catalog_message_fn message;
        weft_catalog_io_file_fn io_file;
        weft_catalog_metric_fn metric;
    } fn;
    void *arg;
} each;

/* Makes row of st what e's function takes and calls it: its value, or a
 * WEFT_E* code. */
typedef int (*each_row_fn)(const each *e, sqlite3_stmt *st);

/* Runs sql, its one parameter e->trace_id, and hands each row to row: 0
 * after all rows, row's first non-zero value, or a WEFT_E* code (SQLite's
 * naming `what`). */
static int each_row(const each *e, const char *sql, const char *what,
                    each_row_fn row)
{
    sqlite3_stmt *st = NULL;
    int rc = weft__cat_prepare(e->c, sql, &st), step = SQLITE_DONE;

    if (rc == 0) {
        sqlite3_bind_int64(st, 1, e->trace_id);
        while ((step = sqlite3_step(st)) == SQLITE_ROW &&
               (rc = row(e, st)) == 0)
            ;
        if (rc == 0 && step != SQLITE_DONE)
            rc = weft__cat_db_err(e->c, what);
    }
    sqlite3_finalize(st);
    return rc;
}

static int oom(weft_catalog *c)
{
    return weft__cat_err(c, WEFT_ENOMEM, "catalog %s: out of memory", c->path);
}

static int location_row(const each *e, sqlite3_stmt *st)
{
    weft_location_row row;
    int rc;

    memset(&row, 0, sizeof row);
    row.id = (uint64_t)sqlite3_column_int64(st, 0);
    row.rank = (uint32_t)sqlite3_column_int64(st, 1);
    row.thread = (uint32_t)sqlite3_column_int64(st, 2);
    row.events = (uint64_t)sqlite3_column_int64(st, 4);
    row.dropped = (uint64_t)sqlite3_column_int64(st, 5);
    if (weft__cat_col_text(st, 3, 0, &row.name) < 0 ||
        weft__cat_col_text(st, 6, 0, &row.process) < 0 ||
        weft__cat_col_text(st, 7, 0, &row.program) < 0)
        rc = oom(e->c);
    else
        rc = e->fn.location(&row, e->arg);
    free(row.name);
    free(row.process);
    free(row.program);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_locations(weft_catalog *c, int64_t trace_id,
                           weft_catalog_location_fn fn, void *arg)
{
    each e = { c, trace_id, { .location = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT id, rank, thread, name, events, dropped,"
                        " process, program FROM locations WHERE trace_id = ?"
                        " ORDER BY rank, thread, id",
                    "listing locations", location_row);
}

static int member_row(const each *e, sqlite3_stmt *st)
{
    weft_member_row row;
    int rc;

    memset(&row, 0, sizeof row);
    row.rank = (uint32_t)sqlite3_column_int64(st, 0);
    row.pid = (uint32_t)sqlite3_column_int64(st, 2);
    row.locations = (uint64_t)sqlite3_column_int64(st, 4);
    row.events = (uint64_t)sqlite3_column_int64(st, 5);
    row.dropped = (uint64_t)sqlite3_column_int64(st, 6);
    row.parent_pid = (uint32_t)sqlite3_column_int64(st, 7);
    if (weft__cat_col_text(st, 1, 0, &row.host) < 0 ||
        weft__cat_col_text(st, 3, 0, &row.state) < 0)
        rc = oom(e->c);
    else
        rc = e->fn.member(&row, e->arg);
    free(row.host);
    free(row.state);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_members(weft_catalog *c, int64_t trace_id,
                         weft_catalog_member_fn fn, void *arg)
{
    each e = { c, trace_id, { .member = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT rank, host, pid, state, locations,"
                        " events, dropped, parent_pid FROM members"
                        " WHERE trace_id = ? ORDER BY rank",
                    "listing members", member_row);
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The tag passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_tags(weft_catalog *c, int64_t trace_id,
                      weft_catalog_tag_fn fn, void *arg)
{
    sqlite3_stmt *st;
    weft_tag tag;
    int rc = 0, step;

    assert(c && fn);
    if (!c->tags_st)
        rc = weft__cat_prepare(c,
                               "SELECT key, value FROM tags WHERE trace_id = ?"
                               " ORDER BY key", &c->tags_st);
    if (rc < 0)
        return rc;
    st = c->tags_st;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, trace_id);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (weft__cat_col_text(st, 0, 0, &tag.key) < 0 ||
            weft__cat_col_text(st, 1, 0, &tag.value) < 0)
            rc = oom(c);
        else
            rc = fn(&tag, arg);
        free(tag.key);
        free(tag.value);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = weft__cat_db_err(c, "listing tags");
out:
    sqlite3_reset(st); /* ends the read */
    return rc;
}

static const char *region_order(enum weft_region_sort sort)
{
    switch (sort) {
    case WEFT_RSORT_EXCL: return "r.excl_s DESC, r.region, r.paradigm";
    case WEFT_RSORT_INCL: return "r.incl_s DESC, r.region, r.paradigm";
    case WEFT_RSORT_VISITS: return "r.visits DESC, r.region, r.paradigm";
    case WEFT_RSORT_NAME: return "r.region, r.excl_s DESC, r.paradigm";
    }
    return NULL;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call.
 * One query: a window numbers the rows of each location (or of the sum,
 * or of a program: its locations' rows summed first, a region's rows of
 * one name and paradigm together) in sort order and sums their
 * exclusive time, the limit applies to the numbers. */
int weft_catalog_regions(weft_catalog *c, int64_t trace_id,
                         enum weft_region_group group,
                         enum weft_region_sort sort, int64_t limit,
                         weft_catalog_region_fn fn, void *arg)
{
    /* The rows to number: a program's are its locations' summed. */
    static const char by_program[] =
        "(SELECT NULL AS location_id, r.region, sum(r.visits) AS visits,"
        "  sum(r.incl_s) AS incl_s, sum(r.excl_s) AS excl_s,"
        "  coalesce(nullif(l.program, ''), '-') AS lname, r.paradigm"
        "  FROM regions r LEFT JOIN locations l"
        "  ON l.trace_id = r.trace_id AND l.id = r.location_id"
        "  WHERE r.trace_id = ?1 AND r.location_id IS NOT NULL"
        "  GROUP BY lname, r.region, r.paradigm) r";
    static const char by_id[] =
        "(SELECT r.location_id, r.region, r.visits, r.incl_s, r.excl_s,"
        "  coalesce(l.name, '') AS lname, r.paradigm"
        "  FROM regions r LEFT JOIN locations l"
        "  ON l.trace_id = r.trace_id AND l.id = r.location_id"
        "  WHERE r.trace_id = ?1 AND r.location_id %s) r";
    const char *order = region_order(sort);
    sqlite3_stmt *st = NULL;
    weft_region_row row;
    char *sql, *rows;
    int rc, step;

    assert(c && fn);
    if (!order || group > WEFT_RGROUP_PROGRAM)
        return weft__cat_err(c, WEFT_EINVAL,
                             "catalog %s: unknown region order %d or "
                             "group %d", c->path, (int)sort, (int)group);
    rows = group == WEFT_RGROUP_PROGRAM
        ? sqlite3_mprintf("%s", by_program)
        : sqlite3_mprintf(by_id, group == WEFT_RGROUP_LOCATION
                                     ? "IS NOT NULL" : "IS NULL");
    sql = !rows ? NULL : sqlite3_mprintf(
        "SELECT coalesce(location_id, 0), region, visits, incl_s, excl_s,"
        " lname, total, paradigm"
        " FROM (SELECT r.location_id, r.region, r.visits, r.incl_s,"
        "  r.excl_s, r.lname, r.paradigm,"
        "  row_number() OVER (PARTITION BY r.location_id, r.lname"
        "   ORDER BY %s) AS n,"
        "  sum(r.excl_s) OVER (PARTITION BY r.location_id, r.lname)"
        "   AS total FROM %s)"
        " WHERE ?2 <= 0 OR n <= ?2 ORDER BY location_id, lname, n",
        order, rows);
    sqlite3_free(rows);
    if (!sql)
        return oom(c);
    rc = weft__cat_prepare(c, sql, &st);
    sqlite3_free(sql);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, trace_id);
    sqlite3_bind_int64(st, 2, limit);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof row);
        row.location = group == WEFT_RGROUP_ALL
                       ? WEFT_PROFILE_ALL : sqlite3_column_int64(st, 0);
        row.visits = (uint64_t)sqlite3_column_int64(st, 2);
        row.incl_s = sqlite3_column_double(st, 3);
        row.excl_s = sqlite3_column_double(st, 4);
        row.total_excl_s = sqlite3_column_double(st, 6);
        if (weft__cat_col_text(st, 1, 0, &row.region) < 0 ||
            weft__cat_col_text(st, 5, 0, &row.location_name) < 0 ||
            weft__cat_col_text(st, 7, 0, &row.paradigm) < 0)
            rc = oom(c);
        else
            rc = fn(&row, arg);
        free(row.region);
        free(row.location_name);
        free(row.paradigm);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = weft__cat_db_err(c, "reading the region profile");
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call.
 * The sum rows of both traces, one side each, grouped by region (a full
 * outer join that works on any SQLite); windows count and sum all of
 * them before the limit cuts. */
int weft_catalog_compare(weft_catalog *c, int64_t a, int64_t b,
                         int64_t limit, weft_catalog_pair_fn fn, void *arg)
{
    static const char sql[] =
        "SELECT region, in_a, in_b, va, vb, ea, eb,"
        " sum(in_a) OVER (), sum(in_b) OVER (), sum(va) OVER (),"
        " sum(vb) OVER (), sum(ea) OVER (), sum(eb) OVER (), count(*) OVER ()"
        " FROM (SELECT region, max(in_a) AS in_a, max(in_b) AS in_b,"
        "  sum(va) AS va, sum(vb) AS vb, sum(ea) AS ea, sum(eb) AS eb"
        "  FROM (SELECT region, 1 AS in_a, 0 AS in_b, visits AS va, 0 AS vb,"
        "    excl_s AS ea, 0.0 AS eb FROM regions"
        "    WHERE trace_id = ?1 AND location_id IS NULL"
        "   UNION ALL SELECT region, 0, 1, 0, visits, 0.0, excl_s FROM regions"
        "    WHERE trace_id = ?2 AND location_id IS NULL)"
        "  GROUP BY region)"
        " ORDER BY abs(eb - ea) DESC, region LIMIT ?3";
    sqlite3_stmt *st = NULL;
    weft_region_pair row;
    int rc, step;

    assert(c && fn && limit >= 0);
    rc = weft__cat_prepare(c, sql, &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    sqlite3_bind_int64(st, 3, limit > 0 ? limit : -1);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof row);
        row.in_a = sqlite3_column_int(st, 1);
        row.in_b = sqlite3_column_int(st, 2);
        row.visits_a = (uint64_t)sqlite3_column_int64(st, 3);
        row.visits_b = (uint64_t)sqlite3_column_int64(st, 4);
        row.excl_a = sqlite3_column_double(st, 5);
        row.excl_b = sqlite3_column_double(st, 6);
        row.regions_a = (uint64_t)sqlite3_column_int64(st, 7);
        row.regions_b = (uint64_t)sqlite3_column_int64(st, 8);
        row.total_visits_a = (uint64_t)sqlite3_column_int64(st, 9);
        row.total_visits_b = (uint64_t)sqlite3_column_int64(st, 10);
        row.total_excl_a = sqlite3_column_double(st, 11);
        row.total_excl_b = sqlite3_column_double(st, 12);
        row.regions = (uint64_t)sqlite3_column_int64(st, 13);
        if (weft__cat_col_text(st, 0, 0, &row.region) < 0)
            rc = oom(c);
        else
            rc = fn(&row, arg);
        free(row.region);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = weft__cat_db_err(c, "comparing region profiles");
out:
    sqlite3_finalize(st);
    return rc;
}

/* See catalog.h. */
int weft_catalog_oldest_finished(weft_catalog *c, int64_t before,
                                 weft_trace_row *out)
{
    static const char sql[] = "SELECT " TRACE_COLS " FROM traces WHERE "
        "state IN ('" WEFT_STATE_COMPLETE "', '" WEFT_STATE_PARTIAL "') "
        "AND finished > 0 AND (?1 = 0 OR finished < ?1) "
        "ORDER BY finished, seq LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && out);
    memset(out, 0, sizeof *out);
    rc = weft__cat_prepare(c, sql, &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, before);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW: rc = weft__cat_read_trace(c, st, out); break;
    case SQLITE_DONE: rc = WEFT_ENOTFOUND; break;
    default: rc = weft__cat_db_err(c, "finding the oldest trace"); break;
    }
    sqlite3_finalize(st);
    return rc;
}

/* See catalog.h. */
int weft_catalog_spool_bytes(weft_catalog *c, uint64_t *total,
                             weft_catalog_bytes_fn fn, void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc, step;

    assert(c && total);
    *total = 0;
    rc = weft__cat_prepare(c, "SELECT uid, sum(bytes), sum(CASE WHEN "
                           "state IN ('" WEFT_STATE_RECORDING "', '"
                           WEFT_STATE_CONVERTING "') THEN 0 ELSE bytes + "
                           "charged END) FROM traces WHERE state != '"
                           WEFT_STATE_REMOVED "' GROUP BY uid", &st);
    if (rc < 0)
        return rc;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        *total += (uint64_t)sqlite3_column_int64(st, 1);
        if (fn)
            fn((uint32_t)sqlite3_column_int64(st, 0),
               (uint64_t)sqlite3_column_int64(st, 2), arg);
    }
    if (step != SQLITE_DONE)
        rc = weft__cat_db_err(c, "summing the spool's bytes");
    sqlite3_finalize(st);
    return rc;
}

/* Decodes n uvarint bins of blob (len bytes) into a malloc'd array;
 * NULL when they do not decode or out of memory (*corrupt says which). */
static uint32_t *decode_bins(const uint8_t *blob, size_t len, size_t n,
                             int *corrupt)
{
    const uint8_t *p = blob, *end = blob + len;
    uint32_t *v;

    *corrupt = n > len;  /* a byte per bin at least */
    if (*corrupt)
        return NULL;
    v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        if (!(p = weft__get_uvarint(p, end, &x)) || x > UINT32_MAX) {
            *corrupt = 1;
            free(v);
            return NULL;
        }
        v[i] = (uint32_t)x;
    }
    if (p != end) {
        *corrupt = 1;
        free(v);
        return NULL;
    }
    return v;
}

static int timeline_row(const each *e, sqlite3_stmt *st)
{
    int64_t n = sqlite3_column_int64(st, 3);
    const uint8_t *blob = sqlite3_column_blob(st, 4);
    size_t len = (size_t)sqlite3_column_bytes(st, 4);
    weft_timeline_row row;
    int rc, corrupt;

    memset(&row, 0, sizeof row);
    row.location = (uint64_t)sqlite3_column_int64(st, 0);
    row.start_s = sqlite3_column_double(st, 1);
    row.width_s = sqlite3_column_double(st, 2);
    row.nbins = n > 0 ? (size_t)n : 0;
    row.bins = decode_bins(blob, blob ? len : 0, row.nbins, &corrupt);
    if (!row.bins)
        return corrupt ? weft__cat_err(e->c, WEFT_ECORRUPT, "catalog %s: "
                                       "trace %" PRId64 ": the timeline of "
                                       "location %" PRIu64 " does not "
                                       "decode", e->c->path, e->trace_id,
                                       row.location)
                       : oom(e->c);
    rc = e->fn.timeline(&row, e->arg);
    free(row.bins);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code. */
int weft_catalog_timelines(weft_catalog *c, int64_t trace_id,
                           weft_catalog_timeline_fn fn, void *arg)
{
    each e = { c, trace_id, { .timeline = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT location_id, start_s, width_s, nbins, bins"
                        " FROM timelines WHERE trace_id = ?"
                        " ORDER BY location_id",
                    "listing timelines", timeline_row);
}

static int timeline_region_row(const each *e, sqlite3_stmt *st)
{
    weft_timeline_region row;
    int rc;

    memset(&row, 0, sizeof row);
    row.id = (uint32_t)sqlite3_column_int64(st, 0);
    if (weft__cat_col_text(st, 1, 0, &row.name) < 0)
        return oom(e->c);
    rc = e->fn.timeline_region(&row, e->arg);
    free(row.name);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code. */
int weft_catalog_timeline_regions(weft_catalog *c, int64_t trace_id,
                                  weft_catalog_timeline_region_fn fn,
                                  void *arg)
{
    each e = { c, trace_id, { .timeline_region = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT region_id, name FROM timeline_regions"
                        " WHERE trace_id = ? ORDER BY region_id",
                    "listing timeline regions", timeline_region_row);
}

static int message_row(const each *e, sqlite3_stmt *st)
{
    weft_message_row row;

    row.sender = (uint32_t)sqlite3_column_int64(st, 0);
    row.receiver = (uint32_t)sqlite3_column_int64(st, 1);
    row.messages = (uint64_t)sqlite3_column_int64(st, 2);
    row.bytes = (uint64_t)sqlite3_column_int64(st, 3);
    return e->fn.message(&row, e->arg);
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code. */
int weft_catalog_messages(weft_catalog *c, int64_t trace_id,
                          weft_catalog_message_fn fn, void *arg)
{
    each e = { c, trace_id, { .message = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT sender, receiver, messages, bytes"
                        " FROM messages WHERE trace_id = ?"
                        " ORDER BY sender, receiver",
                    "listing messages", message_row);
}

static int io_file_row(const each *e, sqlite3_stmt *st)
{
    weft_io_file_row row;
    int rc;

    memset(&row, 0, sizeof row);
    row.others = (uint64_t)sqlite3_column_int64(st, 1);
    row.bytes_read = (uint64_t)sqlite3_column_int64(st, 2);
    row.bytes_written = (uint64_t)sqlite3_column_int64(st, 3);
    row.operations = (uint64_t)sqlite3_column_int64(st, 4);
    row.time_s = sqlite3_column_double(st, 5);
    if (weft__cat_col_text(st, 0, 0, &row.name) < 0)
        return oom(e->c);
    rc = e->fn.io_file(&row, e->arg);
    free(row.name);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code. */
int weft_catalog_io_files(weft_catalog *c, int64_t trace_id,
                          weft_catalog_io_file_fn fn, void *arg)
{
    each e = { c, trace_id, { .io_file = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT name, others, bytes_read, bytes_written,"
                        " operations, time_s FROM io_files"
                        " WHERE trace_id = ? ORDER BY ord",
                    "listing I/O files", io_file_row);
}

/* The n points (3 doubles each) of a blob of len bytes, malloc'd; NULL
 * with *corrupt set when the blob has another size, or out of memory. */
static double *decode_points(const uint8_t *p, size_t len, size_t n,
                             int *corrupt)
{
    double *v;

    *corrupt = n > SIZE_MAX / 24 || len != n * 24;
    if (*corrupt || !(v = malloc((n ? n : 1) * 24)))
        return NULL;
    for (size_t i = 0; i < n * 3; i++) {
        uint64_t u = 0;
        for (int k = 7; k >= 0; k--)
            u = u << 8 | p[8 * i + (size_t)k];
        memcpy(&v[i], &u, 8);
    }
    return v;
}

static int metric_row(const each *e, sqlite3_stmt *st)
{
    int64_t n = sqlite3_column_int64(st, 6);
    const uint8_t *blob = sqlite3_column_blob(st, 7);
    size_t len = (size_t)sqlite3_column_bytes(st, 7);
    weft_metric_row row;
    int rc, corrupt;

    memset(&row, 0, sizeof row);
    row.location = (uint64_t)sqlite3_column_int64(st, 0);
    row.member = (uint32_t)sqlite3_column_int64(st, 1);
    row.start_s = sqlite3_column_double(st, 4);
    row.width_s = sqlite3_column_double(st, 5);
    row.npoints = n > 0 ? (size_t)n : 0;
    row.series_total = (uint64_t)sqlite3_column_int64(st, 8);
    row.points = decode_points(blob, blob ? len : 0, row.npoints, &corrupt);
    if (!row.points)
        return corrupt ? weft__cat_err(e->c, WEFT_ECORRUPT, "catalog %s: "
                                       "trace %" PRId64 ": the metric "
                                       "series of location %" PRIu64
                                       " does not decode", e->c->path,
                                       e->trace_id, row.location)
                       : oom(e->c);
    if (weft__cat_col_text(st, 2, 0, &row.name) < 0 ||
        weft__cat_col_text(st, 3, 0, &row.unit) < 0)
        rc = oom(e->c);
    else
        rc = e->fn.metric(&row, e->arg);
    free(row.points);
    free(row.name);
    free(row.unit);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code. */
int weft_catalog_metrics(weft_catalog *c, int64_t trace_id,
                         weft_catalog_metric_fn fn, void *arg)
{
    each e = { c, trace_id, { .metric = fn }, arg };

    assert(c && fn);
    return each_row(&e, "SELECT location_id, member_id, name, unit,"
                        " start_s, width_s, npoints, points, series_total"
                        " FROM metrics WHERE trace_id = ?"
                        " ORDER BY location_id, member_id",
                    "listing metrics", metric_row);
}
