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

/* Returns 0 and sets row->id (of the new or the existing row), or a
 * WEFT_E* code. An existing row is left unchanged. row->state NULL means
 * WEFT_STATE_RECORDING. Nothing of row is kept. */
int weft_catalog_trace_begin(weft_catalog *c, weft_trace_row *row)
{
    sqlite3_stmt *st = NULL;
    int64_t id;
    int rc;

    assert(c && row);
    if (!row->key)
        return weft__cat_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                             c->path);
    rc = weft__cat_prepare(c, "INSERT OR IGNORE " TRACE_INTO, &st);
    if (rc < 0)
        goto out;
    rc = weft__cat_bind_trace(c, st, row);
    if (rc < 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = weft__cat_db_err(c, "recording a trace");
        goto out;
    }
    id = id_of_key(c, row->key);
    if (id < 0) {
        rc = (int)id;
        goto out;
    }
    row->id = id;
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0 or a WEFT_E* code; nothing of row is kept. A row failed
 * before keeps its finish time (recovery reports the same damage at
 * every start). */
int weft_catalog_trace_fail(weft_catalog *c, const weft_trace_row *row)
{
    static const char upsert[] = "INSERT " TRACE_INTO
        " ON CONFLICT (key) DO UPDATE SET state = excluded.state,"
        " error = excluded.error,"
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

/* Returns 0, WEFT_ENOTFOUND when no trace has this key, or WEFT_EDB. */
int weft_catalog_trace_set_state(weft_catalog *c, const char *key,
                                 const char *state)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && key && state);
    rc = weft__cat_prepare(c, "UPDATE traces SET state = ? WHERE key = ?", &st);
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

static int store_locations(weft_catalog *c, int64_t id,
                           const weft_location_row *locs, size_t nlocs)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM locations WHERE trace_id = ?", id,
                 "removing old locations");
    if (rc == 0)
        rc = weft__cat_prepare(c,
                               "INSERT INTO locations (trace_id, id, rank,"
                               " thread, name, events, dropped)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?)",
                               &ins);
    for (size_t i = 0; rc == 0 && i < nlocs; i++) {
        const weft_location_row *l = &locs[i];
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, (int64_t)l->id);
        sqlite3_bind_int64(ins, 3, l->rank);
        sqlite3_bind_int64(ins, 4, l->thread);
        sqlite3_bind_text(ins, 5, l->name ? l->name : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 6, (int64_t)l->events);
        sqlite3_bind_int64(ins, 7, (int64_t)l->dropped);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing a location");
    }
    sqlite3_finalize(ins);
    return rc;
}

static int store_members(weft_catalog *c, int64_t id,
                         const weft_member_row *m, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM members WHERE trace_id = ?", id,
                 "removing old members");
    if (rc == 0)
        rc = weft__cat_prepare(c,
                               "INSERT INTO members (trace_id, rank, host, pid,"
                               " state, locations, events, dropped)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, m[i].rank);
        sqlite3_bind_text(ins, 3, m[i].host ? m[i].host : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 4, m[i].pid);
        sqlite3_bind_text(ins, 5, m[i].state ? m[i].state
                                             : WEFT_MEMBER_MISSING, -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 6, (int64_t)m[i].locations);
        sqlite3_bind_int64(ins, 7, (int64_t)m[i].events);
        sqlite3_bind_int64(ins, 8, (int64_t)m[i].dropped);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing a member");
    }
    sqlite3_finalize(ins);
    return rc;
}

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

static int store_regions(weft_catalog *c, int64_t id,
                         const weft_region_row *r, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM regions WHERE trace_id = ?", id,
                 "removing an old profile");
    if (rc == 0)
        rc = weft__cat_prepare(c,
                               "INSERT INTO regions (trace_id, location_id,"
                               " region, visits, incl_s, excl_s)"
                               " VALUES (?, ?, ?, ?, ?, ?)",
                               &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        if (r[i].location < 0)
            sqlite3_bind_null(ins, 2);
        else
            sqlite3_bind_int64(ins, 2, r[i].location);
        sqlite3_bind_text(ins, 3, r[i].region ? r[i].region : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 4, (int64_t)r[i].visits);
        sqlite3_bind_double(ins, 5, r[i].incl_s);
        sqlite3_bind_double(ins, 6, r[i].excl_s);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing the region profile");
    }
    sqlite3_finalize(ins);
    return rc;
}

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

/* Replaces the timelines and their region names of trace id. */
static int store_timelines(weft_catalog *c, int64_t id,
                           const weft_trace_detail *d)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM timelines WHERE trace_id = ?", id,
                 "removing old timelines");
    if (rc == 0)
        rc = exec_id(c, "DELETE FROM timeline_regions WHERE trace_id = ?",
                     id, "removing old timeline regions");
    if (rc == 0 && d->ntimelines)
        rc = weft__cat_prepare(c,
                               "INSERT INTO timelines (trace_id, location_id,"
                               " start_s, width_s, nbins, bins)"
                               " VALUES (?, ?, ?, ?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < d->ntimelines; i++) {
        const weft_timeline_row *t = &d->timelines[i];
        size_t len = 0;
        uint8_t *blob = encode_bins(t, &len);
        if (!blob)
            return weft__cat_err(c, WEFT_ENOMEM, "out of memory");
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, (int64_t)t->location);
        sqlite3_bind_double(ins, 3, t->start_s);
        sqlite3_bind_double(ins, 4, t->width_s);
        sqlite3_bind_int64(ins, 5, (int64_t)t->nbins);
        sqlite3_bind_blob(ins, 6, blob, (int)len, free);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing a timeline");
    }
    sqlite3_finalize(ins);
    ins = NULL;
    if (rc == 0 && d->ntimeline_regions)
        rc = weft__cat_prepare(c,
                               "INSERT INTO timeline_regions (trace_id,"
                               " region_id, name) VALUES (?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < d->ntimeline_regions; i++) {
        const weft_timeline_region *r = &d->timeline_regions[i];
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, r->id);
        sqlite3_bind_text(ins, 3, r->name ? r->name : "", -1, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing a timeline region");
    }
    sqlite3_finalize(ins);
    return rc;
}

/* Replaces the communication matrix of trace id. */
static int store_messages(weft_catalog *c, int64_t id,
                          const weft_message_row *m, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM messages WHERE trace_id = ?", id,
                 "removing old messages");
    if (rc == 0 && n)
        rc = weft__cat_prepare(c,
                               "INSERT INTO messages (trace_id, sender,"
                               " receiver, messages, bytes)"
                               " VALUES (?, ?, ?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, m[i].sender);
        sqlite3_bind_int64(ins, 3, m[i].receiver);
        sqlite3_bind_int64(ins, 4, (int64_t)m[i].messages);
        sqlite3_bind_int64(ins, 5, (int64_t)m[i].bytes);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing the message matrix");
    }
    sqlite3_finalize(ins);
    return rc;
}

/* Replaces the I/O table of trace id. */
static int store_io_files(weft_catalog *c, int64_t id,
                          const weft_io_file_row *f, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM io_files WHERE trace_id = ?", id,
                 "removing old I/O files");
    if (rc == 0 && n)
        rc = weft__cat_prepare(c,
                               "INSERT INTO io_files (trace_id, ord, name,"
                               " others, bytes_read, bytes_written,"
                               " operations, time_s)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, (int64_t)i);
        sqlite3_bind_text(ins, 3, f[i].name ? f[i].name : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 4, (int64_t)f[i].others);
        sqlite3_bind_int64(ins, 5, (int64_t)f[i].bytes_read);
        sqlite3_bind_int64(ins, 6, (int64_t)f[i].bytes_written);
        sqlite3_bind_int64(ins, 7, (int64_t)f[i].operations);
        sqlite3_bind_double(ins, 8, f[i].time_s);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing the I/O files");
    }
    sqlite3_finalize(ins);
    return rc;
}

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

/* Replaces the metric series of trace id. */
static int store_metrics(weft_catalog *c, int64_t id,
                         const weft_metric_row *m, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM metrics WHERE trace_id = ?", id,
                 "removing old metrics");
    if (rc == 0 && n)
        rc = weft__cat_prepare(c,
                               "INSERT INTO metrics (trace_id, location_id,"
                               " member_id, name, unit, start_s, width_s,"
                               " npoints, points, series_total)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t len = 0;
        uint8_t *blob = encode_points(&m[i], &len);
        if (!blob) {
            rc = weft__cat_err(c, WEFT_ENOMEM, "out of memory");
            break;
        }
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, (int64_t)m[i].location);
        sqlite3_bind_int64(ins, 3, m[i].member);
        sqlite3_bind_text(ins, 4, m[i].name ? m[i].name : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_text(ins, 5, m[i].unit ? m[i].unit : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_double(ins, 6, m[i].start_s);
        sqlite3_bind_double(ins, 7, m[i].width_s);
        sqlite3_bind_int64(ins, 8, (int64_t)m[i].npoints);
        sqlite3_bind_blob(ins, 9, blob, (int)len, free);
        sqlite3_bind_int64(ins, 10, (int64_t)m[i].series_total);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = weft__cat_db_err(c, "storing a metric series");
    }
    sqlite3_finalize(ins);
    return rc;
}

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
        "         ELSE clock END";
    static const weft_trace_detail none;
    const weft_trace_detail *d = detail ? detail : &none;
    sqlite3_stmt *st = NULL;
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
    rc = weft__cat_prepare(c, upsert, &st);
    if (rc < 0)
        goto out;
    rc = weft__cat_bind_trace(c, st, row);
    if (rc < 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = weft__cat_db_err(c, "storing a trace");
        goto out;
    }
    id = id_of_key(c, row->key);
    if (id < 0) {
        rc = (int)id;
        goto out;
    }
    rc = store_locations(c, id, d->locations, d->nlocations);
    if (rc == 0)
        rc = store_members(c, id, d->members, d->nmembers);
    if (rc == 0)
        rc = exec_id(c, "DELETE FROM tags WHERE trace_id = ?", id,
                     "removing old tags");
    if (rc == 0)
        rc = insert_tags(c, id, d->tags, d->ntags);
    if (rc == 0)
        rc = store_regions(c, id, d->regions, d->nregions);
    if (rc == 0)
        rc = store_timelines(c, id, d);
    if (rc == 0)
        rc = store_messages(c, id, d->messages, d->nmessages);
    if (rc == 0)
        rc = store_io_files(c, id, d->io_files, d->nio_files);
    if (rc == 0)
        rc = store_metrics(c, id, d->metrics, d->nmetrics);
    if (rc == 0)
        rc = weft__cat_exec(c, "COMMIT", "committing a trace");
out:
    sqlite3_finalize(st);
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
        rc = store_members(c, id, v[i].members, v[i].nmembers);
        if (rc == 0)
            rc = store_locations(c, id, v[i].locs, v[i].nlocs);
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
                           WEFT_STATE_REMOVED "', error = ? WHERE id = ?",
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
