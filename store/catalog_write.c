/* catalog_write.c - what weftd (and `weft rm`) change in the catalog:
 * traces begun, failed, finished with their locations, members, tags and
 * region profile, live figures of recording traces, deletion. Each change
 * is one transaction (see catalog.c for the design).
 */
#include "catalog.h"
#include "catalog_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "varint.h"
#include "weft_errors.h"

static int64_t id_of_key(weft_catalog *c, const char *key)
{
    sqlite3_stmt *st = NULL;
    int64_t id = WEFT_ENOTFOUND;

    if (weft__cat_prepare(c, "SELECT id FROM traces WHERE key = ?", &st) < 0) {
        id = WEFT_EDB;
        goto out;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW: id = sqlite3_column_int64(st, 0); break;
    case SQLITE_DONE:
        id = weft__cat_err(c, WEFT_ENOTFOUND,
                           "catalog %s: no trace with key %s",
                           c->path, key);
        break;
    default: id = weft__cat_db_err(c, "looking up a key"); break;
    }
out:
    sqlite3_finalize(st);
    return id;
}

/* Runs sql (an INSERT of TRACE_INTO's columns) with row bound; what says
 * what for the error message. Returns the id of row->key's row, or a
 * WEFT_E* code. */
static int64_t write_trace(weft_catalog *c, const char *sql,
                           const weft_trace_row *row, const char *what)
{
    sqlite3_stmt *st = NULL;
    int64_t id;

    id = weft__cat_prepare(c, sql, &st);
    if (id == 0)
        id = weft__cat_bind_trace(c, st, row);
    if (id == 0 && sqlite3_step(st) != SQLITE_DONE)
        id = weft__cat_db_err(c, what);
    if (id == 0)
        id = id_of_key(c, row->key);
    sqlite3_finalize(st);
    return id;
}

/* Returns 0 and sets row->id (of the new or the existing row), or a
 * WEFT_E* code. An existing row is left unchanged. row->state NULL means
 * WEFT_STATE_RECORDING. Nothing of row is kept. */
int weft_catalog_trace_begin(weft_catalog *c, weft_trace_row *row)
{
    int64_t id;

    assert(c && row);
    if (!row->key)
        return weft__cat_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                             c->path);
    id = write_trace(c, "INSERT OR IGNORE " TRACE_INTO, row,
                     "recording a trace");
    if (id < 0)
        return (int)id;
    row->id = id;
    return 0;
}

/* Returns 0 or a WEFT_E* code; nothing of row is kept. A row failed
 * before keeps its finish time (recovery reports the same damage at
 * every start). */
int weft_catalog_trace_fail(weft_catalog *c, const weft_trace_row *row)
{
    static const char upsert[] = "INSERT " TRACE_INTO
        " ON CONFLICT (key) DO UPDATE SET state = excluded.state,"
        " error = excluded.error, retry_at = excluded.retry_at,"
        " finished = CASE WHEN state = 'failed' AND finished <> 0"
        "            THEN finished ELSE excluded.finished END";
    weft_trace_row r;
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && row);
    if (!row->key)
        return weft__cat_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                             c->path);
    r = *row;
    r.state = (char *)WEFT_STATE_FAILED;
    rc = weft__cat_prepare(c, upsert, &st);
    if (rc == 0)
        rc = weft__cat_bind_trace(c, st, &r);
    if (rc == 0 && sqlite3_step(st) != SQLITE_DONE)
        rc = weft__cat_db_err(c, "marking a trace failed");
    sqlite3_finalize(st);
    return rc;
}

/* See catalog.h. */
int weft_catalog_trace_charge(weft_catalog *c, const char *key,
                              uint64_t bytes)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && key);
    rc = weft__cat_prepare(c, "UPDATE traces SET charged = ? WHERE key = ?",
                           &st);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, (int64_t)bytes);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = weft__cat_db_err(c, "charging a trace");
    else if (sqlite3_changes(c->db) == 0)
        rc = weft__cat_err(c, WEFT_ENOTFOUND, "catalog %s: no trace with "
                           "key %s", c->path, key);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0, WEFT_ENOTFOUND when no trace has this key, or WEFT_EDB. */
int weft_catalog_trace_set_state(weft_catalog *c, const char *key,
                                 const char *state)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && key && state);
    rc = weft__cat_prepare(c, "UPDATE traces SET state = ?, retry_at = 0 "
                           "WHERE key = ?", &st);
    if (rc < 0)
        goto out;
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = weft__cat_db_err(c, "setting a trace state");
    else if (sqlite3_changes(c->db) == 0)
        rc = weft__cat_err(c, WEFT_ENOTFOUND,
                           "catalog %s: no trace with key %s",
                           c->path, key);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0, WEFT_ENOTFOUND when no trace has key old, or WEFT_EDB. */
int weft_catalog_trace_rekey(weft_catalog *c, const char *old,
                             const char *key, const char *path)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && old && key && path);
    rc = weft__cat_prepare(c, "UPDATE traces SET key = ?, path = ? "
                           "WHERE key = ?", &st);
    if (rc < 0)
        goto out;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, old, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = weft__cat_db_err(c, "giving a trace a new key");
    else if (sqlite3_changes(c->db) == 0)
        rc = weft__cat_err(c, WEFT_ENOTFOUND,
                           "catalog %s: no trace with key %s", c->path, old);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Runs a statement with one id parameter to its end. */
static int exec_id(weft_catalog *c, const char *sql, int64_t id,
                   const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = weft__cat_prepare(c, sql, &st);

    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = weft__cat_db_err(c, what);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- the rows of one trace ---------------------------------------------
 * Each table that holds rows of a trace is replaced the same way: its
 * rows of the trace deleted, then one INSERT per row, the trace's id its
 * first parameter and the row's fields the others. */

/* Binds row i of rows to the parameters of ins after the first: 0, or
 * WEFT_ENOMEM (c's message set). */
typedef int (*bind_row_fn)(weft_catalog *c, sqlite3_stmt *ins,
                           const void *rows, size_t i);

typedef struct table_rows {
    const char *del, *removing;   /* DELETE of the trace's rows; its doing */
    const char *insert, *storing; /* INSERT of one row; its doing */
    bind_row_fn bind;
} table_rows;

/* Replaces the rows of trace id in t's table by the n of rows. */
static int replace_rows(weft_catalog *c, int64_t id, const table_rows *t,
                        const void *rows, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc = exec_id(c, t->del, id, t->removing);

    if (rc == 0 && n)
        rc = weft__cat_prepare(c, t->insert, &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        if ((rc = t->bind(c, ins, rows, i)) == 0 &&
            sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, t->storing);
    }
    sqlite3_finalize(ins);
    return rc;
}

static void bind_str(sqlite3_stmt *ins, int col, const char *s)
{
    sqlite3_bind_text(ins, col, s ? s : "", -1, SQLITE_STATIC);
}

static int bind_location(weft_catalog *c, sqlite3_stmt *ins,
                         const void *rows, size_t i)
{
    const weft_location_row *l = (const weft_location_row *)rows + i;

    (void)c;
    sqlite3_bind_int64(ins, 2, (int64_t)l->id);
    sqlite3_bind_int64(ins, 3, l->rank);
    sqlite3_bind_int64(ins, 4, l->thread);
    bind_str(ins, 5, l->name);
    sqlite3_bind_int64(ins, 6, (int64_t)l->events);
    sqlite3_bind_int64(ins, 7, (int64_t)l->dropped);
    bind_str(ins, 8, l->process);
    bind_str(ins, 9, l->program);
    return 0;
}

static const table_rows locations_table = {
    "DELETE FROM locations WHERE trace_id = ?", "removing old locations",
    "INSERT INTO locations (trace_id, id, rank, thread, name, events,"
    " dropped, process, program) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "storing a location",
    bind_location
};

static int bind_member(weft_catalog *c, sqlite3_stmt *ins, const void *rows,
                       size_t i)
{
    const weft_member_row *m = (const weft_member_row *)rows + i;

    (void)c;
    sqlite3_bind_int64(ins, 2, m->rank);
    bind_str(ins, 3, m->host);
    sqlite3_bind_int64(ins, 4, m->pid);
    bind_str(ins, 5, m->state ? m->state : WEFT_MEMBER_MISSING);
    sqlite3_bind_int64(ins, 6, (int64_t)m->locations);
    sqlite3_bind_int64(ins, 7, (int64_t)m->events);
    sqlite3_bind_int64(ins, 8, (int64_t)m->dropped);
    sqlite3_bind_int64(ins, 9, m->parent_pid);
    return 0;
}

static const table_rows members_table = {
    "DELETE FROM members WHERE trace_id = ?", "removing old members",
    "INSERT INTO members (trace_id, rank, host, pid, state, locations,"
    " events, dropped, parent_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "storing a member",
    bind_member
};

/* INSERT OR IGNORE: the first value given for a key stays. */
static int insert_tags(weft_catalog *c, int64_t id, const weft_tag *tags,
                       size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = weft__cat_prepare(c,
                           "INSERT OR IGNORE INTO tags (trace_id, key, value)"
                           " VALUES (?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!tags[i].key || !tags[i].value) {
            rc = weft__cat_err(c, WEFT_EINVAL,
                               "catalog %s: a tag without key or "
                               "value", c->path);
            break;
        }
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_text(ins, 2, tags[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 3, tags[i].value, -1, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing a tag");
    }
    sqlite3_finalize(ins);
    return rc;
}

static int bind_region(weft_catalog *c, sqlite3_stmt *ins, const void *rows,
                       size_t i)
{
    const weft_region_row *r = (const weft_region_row *)rows + i;

    (void)c;
    if (r->location < 0)
        sqlite3_bind_null(ins, 2);
    else
        sqlite3_bind_int64(ins, 2, r->location);
    bind_str(ins, 3, r->region);
    sqlite3_bind_int64(ins, 4, (int64_t)r->visits);
    sqlite3_bind_double(ins, 5, r->incl_s);
    sqlite3_bind_double(ins, 6, r->excl_s);
    bind_str(ins, 7, r->paradigm);
    return 0;
}

static const table_rows regions_table = {
    "DELETE FROM regions WHERE trace_id = ?", "removing an old profile",
    "INSERT INTO regions (trace_id, location_id, region, visits, incl_s,"
    " excl_s, paradigm) VALUES (?, ?, ?, ?, ?, ?, ?)",
    "storing the region profile",
    bind_region
};

/* The bins of t as uvarints in a malloc'd buffer (*len bytes), NULL when
 * out of memory. */
static uint8_t *encode_bins(const weft_timeline_row *t, size_t *len)
{
    uint8_t *buf = malloc(t->nbins * WEFT_VARINT_MAX + 1), *p = buf;

    if (!buf)
        return NULL;
    for (size_t i = 0; i < t->nbins; i++)
        p = weft__put_uvarint(p, t->bins[i]);
    *len = (size_t)(p - buf);
    return buf;
}

static int bind_timeline(weft_catalog *c, sqlite3_stmt *ins,
                         const void *rows, size_t i)
{
    const weft_timeline_row *t = (const weft_timeline_row *)rows + i;
    size_t len = 0;
    uint8_t *blob = encode_bins(t, &len);

    if (!blob)
        return weft__cat_err(c, WEFT_ENOMEM, "out of memory");
    sqlite3_bind_int64(ins, 2, (int64_t)t->location);
    sqlite3_bind_double(ins, 3, t->start_s);
    sqlite3_bind_double(ins, 4, t->width_s);
    sqlite3_bind_int64(ins, 5, (int64_t)t->nbins);
    sqlite3_bind_blob(ins, 6, blob, (int)len, free);
    return 0;
}

static const table_rows timelines_table = {
    "DELETE FROM timelines WHERE trace_id = ?", "removing old timelines",
    "INSERT INTO timelines (trace_id, location_id, start_s, width_s, nbins,"
    " bins) VALUES (?, ?, ?, ?, ?, ?)", "storing a timeline", bind_timeline
};

static int bind_timeline_region(weft_catalog *c, sqlite3_stmt *ins,
                                const void *rows, size_t i)
{
    const weft_timeline_region *r = (const weft_timeline_region *)rows + i;

    (void)c;
    sqlite3_bind_int64(ins, 2, r->id);
    bind_str(ins, 3, r->name);
    return 0;
}

static const table_rows timeline_regions_table = {
    "DELETE FROM timeline_regions WHERE trace_id = ?",
    "removing old timeline regions",
    "INSERT INTO timeline_regions (trace_id, region_id, name)"
    " VALUES (?, ?, ?)", "storing a timeline region", bind_timeline_region
};

static int bind_message(weft_catalog *c, sqlite3_stmt *ins,
                        const void *rows, size_t i)
{
    const weft_message_row *m = (const weft_message_row *)rows + i;

    (void)c;
    sqlite3_bind_int64(ins, 2, m->sender);
    sqlite3_bind_int64(ins, 3, m->receiver);
    sqlite3_bind_int64(ins, 4, (int64_t)m->messages);
    sqlite3_bind_int64(ins, 5, (int64_t)m->bytes);
    return 0;
}

static const table_rows messages_table = {
    "DELETE FROM messages WHERE trace_id = ?", "removing old messages",
    "INSERT INTO messages (trace_id, sender, receiver, messages, bytes)"
    " VALUES (?, ?, ?, ?, ?)", "storing the message matrix", bind_message
};

static int bind_io_file(weft_catalog *c, sqlite3_stmt *ins,
                        const void *rows, size_t i)
{
    const weft_io_file_row *f = (const weft_io_file_row *)rows + i;

    (void)c;
    sqlite3_bind_int64(ins, 2, (int64_t)i);
    bind_str(ins, 3, f->name);
    sqlite3_bind_int64(ins, 4, (int64_t)f->others);
    sqlite3_bind_int64(ins, 5, (int64_t)f->bytes_read);
    sqlite3_bind_int64(ins, 6, (int64_t)f->bytes_written);
    sqlite3_bind_int64(ins, 7, (int64_t)f->operations);
    sqlite3_bind_double(ins, 8, f->time_s);
    return 0;
}

static const table_rows io_files_table = {
    "DELETE FROM io_files WHERE trace_id = ?", "removing old I/O files",
    "INSERT INTO io_files (trace_id, ord, name, others, bytes_read,"
    " bytes_written, operations, time_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "storing the I/O files", bind_io_file
};

/* The points of m as little-endian float64 in a malloc'd buffer of
 * *len bytes, NULL when out of memory. */
static uint8_t *encode_points(const weft_metric_row *m, size_t *len)
{
    size_t n = m->npoints * 3;
    uint8_t *buf = malloc(n * 8 + 1);

    if (!buf)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &m->points[i], 8);
        for (int k = 0; k < 8; k++)
            buf[8 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
    }
    *len = n * 8;
    return buf;
}

static int bind_metric(weft_catalog *c, sqlite3_stmt *ins, const void *rows,
                       size_t i)
{
    const weft_metric_row *m = (const weft_metric_row *)rows + i;
    size_t len = 0;
    uint8_t *blob = encode_points(m, &len);

    if (!blob)
        return weft__cat_err(c, WEFT_ENOMEM, "out of memory");
    sqlite3_bind_int64(ins, 2, (int64_t)m->location);
    sqlite3_bind_int64(ins, 3, m->member);
    bind_str(ins, 4, m->name);
    bind_str(ins, 5, m->unit);
    sqlite3_bind_double(ins, 6, m->start_s);
    sqlite3_bind_double(ins, 7, m->width_s);
    sqlite3_bind_int64(ins, 8, (int64_t)m->npoints);
    sqlite3_bind_blob(ins, 9, blob, (int)len, free);
    sqlite3_bind_int64(ins, 10, (int64_t)m->series_total);
    return 0;
}

static const table_rows metrics_table = {
    "DELETE FROM metrics WHERE trace_id = ?", "removing old metrics",
    "INSERT INTO metrics (trace_id, location_id, member_id, name, unit,"
    " start_s, width_s, npoints, points, series_total)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "storing a metric series",
    bind_metric
};

/* Returns 0 or a WEFT_E* code (nothing changed then). */
int weft_catalog_trace_add_tags(weft_catalog *c, int64_t trace_id,
                                const weft_tag *tags, size_t ntags)
{
    int rc;

    assert(c && (tags || ntags == 0));
    rc = weft__cat_exec(c, "BEGIN IMMEDIATE", "starting a transaction");
    if (rc == 0)
        rc = insert_tags(c, trace_id, tags, ntags);
    if (rc == 0)
        rc = weft__cat_exec(c, "COMMIT", "committing tags");
    if (rc < 0)
        weft__cat_rollback(c);
    return rc;
}

/* Returns 0 or a WEFT_E* code (nothing changed then). row->created 0
 * keeps the stored creation time. Nothing of row or locs is kept. */
int weft_catalog_trace_finish(weft_catalog *c, const weft_trace_row *row,
                              const weft_location_row *locs, size_t nlocs)
{
    weft_trace_detail d = { 0 };

    d.locations = locs;
    d.nlocations = nlocs;
    return weft_catalog_trace_finish_detail(c, row, &d);
}

/* Returns 0 or a WEFT_E* code (nothing changed then): the trace row, its
 * locations, members, tags, profile and report data in one
 * transaction. */
int weft_catalog_trace_finish_detail(weft_catalog *c,
                                     const weft_trace_row *row,
                                     const weft_trace_detail *detail)
{
    static const char upsert[] = "INSERT " TRACE_INTO
        " ON CONFLICT (key) DO UPDATE SET name = excluded.name,"
        " uid = excluded.uid, state = excluded.state,"
        " created = CASE WHEN excluded.created <> 0 THEN excluded.created"
        "           ELSE created END,"
        " finished = excluded.finished, path = excluded.path,"
        " members = excluded.members, locations = excluded.locations,"
        " events = excluded.events, bytes = excluded.bytes,"
        " dropped = excluded.dropped, time_first = excluded.time_first,"
        " time_last = excluded.time_last,"
        " timer_resolution = excluded.timer_resolution,"
        " error = excluded.error, hosts = excluded.hosts,"
        " command = excluded.command, job_id = excluded.job_id,"
        " protocol_version = excluded.protocol_version,"
        " run = CASE WHEN excluded.run <> '' THEN excluded.run ELSE run END,"
        " joined = CASE WHEN excluded.joined <> 0 THEN excluded.joined"
        "          ELSE joined END,"
        " live_updated = excluded.live_updated,"
        " clock = CASE WHEN excluded.clock <> '' THEN excluded.clock"
        "         ELSE clock END,"
        " retry_at = excluded.retry_at, refused = excluded.refused";
    static const weft_trace_detail none;
    const weft_trace_detail *d = detail ? detail : &none;
    int64_t id;
    int rc;

    assert(c && row);
    assert(d->locations || d->nlocations == 0);
    assert(d->members || d->nmembers == 0);
    assert(d->tags || d->ntags == 0);
    assert(d->regions || d->nregions == 0);
    assert(d->timelines || d->ntimelines == 0);
    assert(d->timeline_regions || d->ntimeline_regions == 0);
    assert(d->messages || d->nmessages == 0);
    assert(d->io_files || d->nio_files == 0);
    assert(d->metrics || d->nmetrics == 0);
    if (!row->key)
        return weft__cat_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                             c->path);
    rc = weft__cat_exec(c, "BEGIN IMMEDIATE", "starting a transaction");
    if (rc < 0)
        return rc;
    id = write_trace(c, upsert, row, "storing a trace");
    if (id < 0) {
        rc = (int)id;
        goto out;
    }
    rc = replace_rows(c, id, &locations_table, d->locations, d->nlocations);
    if (rc == 0)
        rc = replace_rows(c, id, &members_table, d->members, d->nmembers);
    if (rc == 0)
        rc = exec_id(c, "DELETE FROM tags WHERE trace_id = ?", id,
                     "removing old tags");
    if (rc == 0)
        rc = insert_tags(c, id, d->tags, d->ntags);
    if (rc == 0)
        rc = replace_rows(c, id, &regions_table, d->regions, d->nregions);
    if (rc == 0)
        rc = replace_rows(c, id, &timelines_table, d->timelines,
                          d->ntimelines);
    if (rc == 0)
        rc = replace_rows(c, id, &timeline_regions_table,
                          d->timeline_regions, d->ntimeline_regions);
    if (rc == 0)
        rc = replace_rows(c, id, &messages_table, d->messages, d->nmessages);
    if (rc == 0)
        rc = replace_rows(c, id, &io_files_table, d->io_files, d->nio_files);
    if (rc == 0)
        rc = replace_rows(c, id, &metrics_table, d->metrics, d->nmetrics);
    if (rc == 0)
        rc = weft__cat_exec(c, "COMMIT", "committing a trace");
out:
    if (rc < 0)
        weft__cat_rollback(c);
    return rc;
}

/* Returns 0 or a WEFT_E* code (nothing changed then); stored[i] (stored
 * may be NULL) says whether v[i]'s row was still recording and got its
 * figures. One transaction for all of v. */
int weft_catalog_trace_live(weft_catalog *c, const weft_live_figures *v,
                            size_t n, int64_t now, uint8_t *stored)
{
    static const char update[] = "UPDATE traces SET joined = :joined,"
        " locations = :locations, events = :events, bytes = :bytes,"
        " dropped = :refused, refused = :refused,"
        " live_updated = :now WHERE key = :key AND state = '"
        WEFT_STATE_RECORDING "' RETURNING id";
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && (v || n == 0));
    if (stored)
        memset(stored, 0, n);
    rc = weft__cat_exec(c, "BEGIN IMMEDIATE", "starting a transaction");
    if (rc < 0)
        return rc;
    rc = weft__cat_prepare(c, update, &st);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int64_t id;
        int step;
        assert(v[i].key);
        assert(v[i].members || v[i].nmembers == 0);
        assert(v[i].locs || v[i].nlocs == 0);
        sqlite3_reset(st);
        if (weft__cat_bind_text(st, ":key", v[i].key) != SQLITE_OK ||
            weft__cat_bind_i64(st, ":joined", v[i].joined) != SQLITE_OK ||
            weft__cat_bind_i64(st, ":locations",
                               (int64_t)v[i].locations) != SQLITE_OK ||
            weft__cat_bind_i64(st, ":events",
                               (int64_t)v[i].events) != SQLITE_OK ||
            weft__cat_bind_i64(st, ":bytes",
                               (int64_t)v[i].bytes) != SQLITE_OK ||
            weft__cat_bind_i64(st, ":refused",
                               (int64_t)v[i].refused) != SQLITE_OK ||
            weft__cat_bind_i64(st, ":now", now) != SQLITE_OK) {
            rc = weft__cat_db_err(c, "bind");
            break;
        }
        step = sqlite3_step(st);
        if (step == SQLITE_DONE)
            continue;  /* gone, or no longer recording: leave it */
        if (step != SQLITE_ROW) {
            rc = weft__cat_db_err(c, "storing live figures");
            break;
        }
        id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        rc = replace_rows(c, id, &members_table, v[i].members,
                          v[i].nmembers);
        if (rc == 0)
            rc = replace_rows(c, id, &locations_table, v[i].locs,
                              v[i].nlocs);
        if (stored)
            stored[i] = 1;
    }
    sqlite3_finalize(st);
    if (rc == 0)
        rc = weft__cat_exec(c, "COMMIT", "committing live figures");
    if (rc < 0) {
        weft__cat_rollback(c);
        if (stored)
            memset(stored, 0, n);
        return rc;
    }
    return 0;
}

/* Returns 0, WEFT_ENOTFOUND when no trace has this id, or another WEFT_E*
 * code (nothing changed then). */
/* See catalog.h. */
int weft_catalog_trace_removed(weft_catalog *c, int64_t id, const char *why)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && why);
    if (c->readonly)
        return weft__cat_err(c, WEFT_EINVAL, "catalog %s: opened read-only",
                             c->path);
    rc = weft__cat_prepare(c, "UPDATE traces SET state = '"
                           WEFT_STATE_REMOVED "', error = ?, retry_at = 0 "
                           "WHERE id = ?",
                           &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, why, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = weft__cat_db_err(c, "marking a trace removed");
    else if (sqlite3_changes(c->db) == 0)
        rc = weft__cat_err(c, WEFT_ENOTFOUND, "catalog %s: no trace with id %"
                           PRId64, c->path, id);
    sqlite3_finalize(st);
    return rc;
}

int weft_catalog_trace_delete(weft_catalog *c, int64_t id)
{
    static const char *const sql[] = {
        "DELETE FROM locations WHERE trace_id = ?",
        "DELETE FROM traces WHERE id = ?",
    };
    sqlite3_stmt *st = NULL;
    int rc, found = 0;

    assert(c);
    if (c->readonly)
        return weft__cat_err(c, WEFT_EINVAL, "catalog %s: opened read-only",
                             c->path);
    rc = weft__cat_exec(c, "BEGIN IMMEDIATE", "deleting a trace");
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        rc = weft__cat_prepare(c, sql[i], &st);
        if (rc < 0)
            goto out;
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = weft__cat_db_err(c, "deleting a trace");
            goto out;
        }
        found = sqlite3_changes(c->db) > 0;
        sqlite3_finalize(st);
        st = NULL;
    }
    if (!found) {
        rc = weft__cat_err(c, WEFT_ENOTFOUND, "catalog %s: no trace with id %"
                           PRId64, c->path, id);
        goto out;
    }
    rc = weft__cat_exec(c, "COMMIT", "deleting a trace");
out:
    sqlite3_finalize(st);
    if (rc < 0)
        weft__cat_rollback(c);
    return rc;
}
