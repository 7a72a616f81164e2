/* test_catalog.c - the SQLite catalog (store/catalog.c): schema creation
 * and versioning (the upgrade of a version 1 file), the trace life cycle
 * (begin, set_state, finish), lookups, listing with filters and sort
 * orders, members, tags and region profiles read back, deletes that
 * cascade, odd names stored verbatim, read-only opens next to a writer.
 * Each test works in its own scratch directory under $TMPDIR.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "catalog.h"
#include "tmpdir.h"
#include "weft_errors.h"

typedef tu_scratch fixture;

static int setup(void **state)
{
    return tu_scratch_setup(state, "weft-test-catalog", "catalog.db");
}

static int teardown(void **state)
{
    return tu_scratch_teardown(state);
}

static weft_catalog *open_ok(const char *path, int readonly)
{
    weft_catalog *c = NULL;
    char *msg = NULL;
    int rc = weft_catalog_open(path, readonly, &c, &msg);

    if (rc != 0)
        fail_msg("open %s: %s (%s)", path, weft_strerror(rc), msg);
    assert_null(msg);
    assert_non_null(c);
    return c;
}

/* Runs one SQL statement on the file directly (no catalog code). */
static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
}

static int64_t raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v;

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* ---- collecting callbacks ---------------------------------------------- */

#define MAXROWS 16

typedef struct collected {
    size_t n;
    int64_t ids[MAXROWS];
    char *names[MAXROWS];
    char *states[MAXROWS];
    uint64_t locids[MAXROWS];
    uint64_t events[MAXROWS];
    int stop_after;       /* return 7 after this many rows, 0: never */
} collected;

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->names[i]);
        free(c->states[i]);
    }
    memset(c, 0, sizeof *c);
}

static int collect_trace(const weft_trace_row *row, void *arg)
{
    collected *c = arg;

    assert_true(c->n < MAXROWS);
    c->ids[c->n] = row->id;
    c->names[c->n] = strdup(row->name);
    c->states[c->n] = strdup(row->state);
    c->n++;
    return c->stop_after && (int)c->n >= c->stop_after ? 7 : 0;
}

static int collect_location(const weft_location_row *row, void *arg)
{
    collected *c = arg;

    assert_true(c->n < MAXROWS);
    c->locids[c->n] = row->id;
    c->events[c->n] = row->events;
    c->names[c->n] = strdup(row->name);
    c->n++;
    return 0;
}

static int64_t begin(weft_catalog *c, const char *key, const char *name,
                     int64_t created)
{
    weft_trace_row row = { 0 };

    row.key = (char *)key;
    row.name = (char *)name;
    row.uid = 1000;
    row.created = created;
    row.path = (char *)"/spool/x";
    assert_int_equal(weft_catalog_trace_begin(c, &row), 0);
    assert_true(row.id > 0);
    return row.id;
}

/* ---- tests --------------------------------------------------------------- */

static void test_create_schema(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);

    weft_catalog_close(c);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master"
                             " WHERE type = 'index' AND name IN ("
                             "'traces_name', 'traces_created',"
                             " 'traces_state', 'traces_uid')"), 4);
    {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1,
                                            &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    /* Opening again changes nothing. */
    c = open_ok(f->path, 0);
    weft_catalog_close(c);
    c = open_ok(f->path, 1);
    weft_catalog_close(c);
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 }, got;
    weft_location_row locs[3] = {
        { (1ull << 32) | 1, 1, 1, (char *)"rank 1 thread 1", 30, 0 },
        { 0, 0, 0, (char *)"rank 0 thread 0", 10, 1 },
        { UINT64_MAX, UINT32_MAX, UINT32_MAX, (char *)"max", UINT64_MAX,
          UINT64_MAX },
    };
    collected col = { 0 };
    char buf[32];
    int64_t id;

    id = begin(c, "run-1", "run", 100);
    assert_int_equal(weft_catalog_find(c, "run-1", &got), 0);
    assert_int_equal(got.id, id);
    assert_string_equal(got.state, WEFT_STATE_RECORDING);
    assert_string_equal(got.name, "run");
    assert_string_equal(got.path, "/spool/x");
    assert_int_equal(got.uid, 1000);
    assert_int_equal(got.created, 100);
    assert_null(got.error);
    weft_catalog_trace_free(&got);

    snprintf(buf, sizeof buf, "#%lld", (long long)id);
    assert_int_equal(weft_catalog_find(c, buf, &got), 0);
    assert_int_equal(got.id, id);
    weft_catalog_trace_free(&got);
    snprintf(buf, sizeof buf, "%lld", (long long)id);
    assert_int_equal(weft_catalog_find(c, buf, &got), 0);
    assert_int_equal(got.id, id);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_find(c, "run", &got), 0);
    assert_int_equal(got.id, id);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_find(c, "#999", &got), WEFT_ENOTFOUND);
    assert_int_equal(weft_catalog_find(c, "nope", &got), WEFT_ENOTFOUND);
    assert_non_null(strstr(weft_catalog_errmsg(c), "nope"));
    assert_int_equal(weft_catalog_find(c, "99999999999999999999999", &got),
                     WEFT_ENOTFOUND);

    assert_int_equal(weft_catalog_trace_set_state(c, "run-1",
                                                  WEFT_STATE_CONVERTING), 0);
    assert_int_equal(weft_catalog_trace_set_state(c, "missing",
                                                  WEFT_STATE_FAILED),
                     WEFT_ENOTFOUND);
    assert_int_equal(weft_catalog_find(c, "run-1", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_CONVERTING);
    weft_catalog_trace_free(&got);

    row.key = (char *)"run-1";
    row.name = (char *)"run";
    row.uid = UINT32_MAX;
    row.state = (char *)WEFT_STATE_PARTIAL;
    row.created = 0; /* keeps 100 */
    row.finished = 200;
    row.path = (char *)"/spool/archive";
    row.members = 4;
    row.locations = 3;
    row.events = UINT64_MAX;
    row.bytes = (uint64_t)INT64_MAX + 1;
    row.dropped = 5;
    row.time_first = 1;
    row.time_last = UINT64_MAX - 1;
    row.timer_resolution = 1000000000;
    row.clock = (char *)"monotonic,tsc";
    row.error = (char *)"member 3 vanished";
    assert_int_equal(weft_catalog_trace_finish(c, &row, locs, 3), 0);

    assert_int_equal(weft_catalog_find(c, "run-1", &got), 0);
    assert_int_equal(got.id, id);
    assert_string_equal(got.state, WEFT_STATE_PARTIAL);
    assert_int_equal(got.uid, UINT32_MAX);
    assert_int_equal(got.created, 100);
    assert_int_equal(got.finished, 200);
    assert_string_equal(got.path, "/spool/archive");
    assert_int_equal(got.members, 4);
    assert_int_equal(got.locations, 3);
    assert_true(got.events == UINT64_MAX);
    assert_true(got.bytes == (uint64_t)INT64_MAX + 1);
    assert_int_equal(got.dropped, 5);
    assert_int_equal(got.time_first, 1);
    assert_true(got.time_last == UINT64_MAX - 1);
    assert_int_equal(got.timer_resolution, 1000000000);
    assert_string_equal(got.clock, "monotonic,tsc");
    assert_string_equal(got.error, "member 3 vanished");
    weft_catalog_trace_free(&got);

    assert_int_equal(weft_catalog_locations(c, id, collect_location, &col), 0);
    assert_int_equal(col.n, 3);
    assert_int_equal(col.locids[0], 0);
    assert_string_equal(col.names[0], "rank 0 thread 0");
    assert_int_equal(col.locids[1], (1ull << 32) | 1);
    assert_int_equal(col.events[1], 30);
    assert_true(col.locids[2] == UINT64_MAX);
    assert_true(col.events[2] == UINT64_MAX);
    collected_free(&col);

    /* Finishing again replaces the locations; no error clears it; no
     * clock (weft reindex of an archive without one) keeps it. */
    row.error = NULL;
    row.clock = NULL;
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish(c, &row, locs, 1), 0);
    assert_int_equal(weft_catalog_locations(c, id, collect_location, &col), 0);
    assert_int_equal(col.n, 1);
    collected_free(&col);
    assert_int_equal(weft_catalog_find(c, "run-1", &got), 0);
    assert_null(got.error);
    assert_string_equal(got.state, WEFT_STATE_COMPLETE);
    assert_string_equal(got.clock, "monotonic,tsc");
    weft_catalog_trace_free(&got);

    /* Finish of an unknown key inserts it. */
    row.key = (char *)"run-2";
    row.created = 300;
    assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), 0);
    assert_int_equal(weft_catalog_list(c, collect_trace, &col), 0);
    assert_int_equal(col.n, 2);
    assert_string_equal(col.states[0], WEFT_STATE_COMPLETE);
    assert_true(col.ids[0] != id); /* newest (created 300) first */
    assert_int_equal(col.ids[1], id);
    collected_free(&col);

    /* A callback's non-zero value stops the listing and is returned. */
    col.stop_after = 1;
    assert_int_equal(weft_catalog_list(c, collect_trace, &col), 7);
    assert_int_equal(col.n, 1);
    collected_free(&col);

    /* Removing a trace removes its locations (ON DELETE CASCADE). */
    weft_catalog_close(c);
    raw_exec(f->path, "PRAGMA foreign_keys = ON;"
             " DELETE FROM traces WHERE key = 'run-1'");
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM locations"), 0);
}

static void test_begin_is_insert_or_ignore(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 }, got;
    int64_t id;

    id = begin(c, "k", "n", 10);
    row.key = (char *)"k";
    row.name = (char *)"n";
    row.state = (char *)WEFT_STATE_COMPLETE;
    row.events = 42;
    assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), 0);
    /* A second begin (e.g. weftd resuming) must not reset the row. */
    assert_int_equal(begin(c, "k", "other", 20), id);
    assert_int_equal(weft_catalog_find(c, "k", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_COMPLETE);
    assert_string_equal(got.name, "n");
    assert_int_equal(got.events, 42);
    assert_int_equal(got.created, 10);
    weft_catalog_trace_free(&got);
    weft_catalog_close(c);
}

static void test_odd_names_verbatim(void **state)
{
    static const char *const names[] = {
        "it's \"quoted\"",
        "two\nlines\tand\ttabs\r",
        "'; DROP TABLE traces; --",
        "\"); DELETE FROM locations; --",
        "unicod\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x90\x9b",
        "%s%n%d",
        "",
    };
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    size_t n = sizeof names / sizeof names[0];
    weft_trace_row got;
    collected col = { 0 };
    char key[64];

    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof key, "key '%zu\"\n", i);
        begin(c, key, names[i], (int64_t)i);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof key, "key '%zu\"\n", i);
        assert_int_equal(weft_catalog_find(c, key, &got), 0);
        assert_string_equal(got.name, names[i]);
        assert_string_equal(got.key, key);
        weft_catalog_trace_free(&got);
        if (names[i][0]) {
            assert_int_equal(weft_catalog_find(c, names[i], &got), 0);
            assert_string_equal(got.name, names[i]);
            weft_catalog_trace_free(&got);
        }
    }
    assert_int_equal(weft_catalog_list(c, collect_trace, &col), 0);
    assert_int_equal(col.n, n);
    for (size_t i = 0; i < n; i++) /* newest first */
        assert_string_equal(col.names[i], names[n - 1 - i]);
    collected_free(&col);
    weft_catalog_close(c);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM traces"),
                     (int64_t)n);
}

static void test_find_newest_by_name(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row got;
    int64_t newer;

    begin(c, "a", "same", 100);
    newer = begin(c, "b", "same", 200);
    begin(c, "c", "same", 150);
    assert_int_equal(weft_catalog_find(c, "same", &got), 0);
    assert_int_equal(got.id, newer);
    weft_catalog_trace_free(&got);
    /* A number that is no id is still found as a name... */
    begin(c, "d", "2026", 50);
    assert_int_equal(weft_catalog_find(c, "2026", &got), 0);
    assert_string_equal(got.key, "d");
    weft_catalog_trace_free(&got);
    /* ...but "#N" is only ever an id. */
    assert_int_equal(weft_catalog_find(c, "#2026", &got), WEFT_ENOTFOUND);
    weft_catalog_close(c);
}

/* Runs of one name: each row keeps its run, the finish of one does not
 * touch the other, and count_name says how many share the name. */
static void test_runs_share_a_name(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 }, got;
    uint64_t n = 9;

    row.key = "x-1";
    row.name = "x";
    row.run = "slurm:999.0";
    row.created = 100;
    assert_int_equal(weft_catalog_trace_begin(c, &row), 0);
    row.key = "x-2";
    row.run = "slurm:999.1";
    row.created = 200;
    assert_int_equal(weft_catalog_trace_begin(c, &row), 0);
    assert_int_equal(weft_catalog_count_name(c, "x", &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(weft_catalog_count_name(c, "y", &n), 0);
    assert_int_equal(n, 0);
    /* A finish without a run keeps the one recorded at the beginning. */
    row.key = "x-1";
    row.run = NULL;
    row.state = WEFT_STATE_COMPLETE;
    row.created = 0;
    assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), 0);
    assert_int_equal(weft_catalog_find(c, "x-1", &got), 0);
    assert_string_equal(got.run, "slurm:999.0");
    assert_string_equal(got.state, WEFT_STATE_COMPLETE);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_find(c, "x", &got), 0);
    assert_string_equal(got.key, "x-2");
    assert_string_equal(got.run, "slurm:999.1");
    assert_string_equal(got.state, WEFT_STATE_RECORDING);
    weft_catalog_trace_free(&got);
    weft_catalog_close(c);
}

static void test_newer_schema_refused(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    char *msg = NULL;
    char want[256];

    weft_catalog_close(c);
    raw_exec(f->path, "PRAGMA user_version = 99");
    snprintf(want, sizeof want, "catalog %s has schema version 99, this weft "
             "knows up to %d; upgrade weft", f->path,
             WEFT_CATALOG_SCHEMA_VERSION);
    for (int ro = 0; ro <= 1; ro++) {
        c = NULL;
        assert_int_equal(weft_catalog_open(f->path, ro, &c, &msg),
                         WEFT_EVERSION);
        assert_null(c);
        assert_non_null(msg);
        assert_string_equal(msg, want);
        free(msg);
        msg = NULL;
    }
    /* Untouched by the refused writable open. */
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 99);
}

static void test_readonly_missing_fails(void **state)
{
    fixture *f = *state;
    weft_catalog *c = NULL;
    char *msg = NULL;
    struct stat sb;

    assert_int_equal(weft_catalog_open(f->path, 1, &c, &msg), WEFT_ENOTFOUND);
    assert_null(c);
    assert_non_null(msg);
    assert_non_null(strstr(msg, f->path));
    free(msg);
    assert_int_not_equal(stat(f->path, &sb), 0); /* not created */
}

static void test_readonly_not_a_catalog(void **state)
{
    fixture *f = *state;
    weft_catalog *c = NULL;
    char *msg = NULL;
    FILE *fp;

    /* An empty file is an SQLite database of version 0: a reader refuses
     * it, a writer makes it a catalog. */
    fp = fopen(f->path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_true(weft_catalog_open(f->path, 1, &c, &msg) < 0);
    assert_null(c);
    assert_non_null(msg);
    free(msg);
    msg = NULL;
    c = open_ok(f->path, 0);
    weft_catalog_close(c);

    /* Text is no database at all. */
    fp = fopen(f->path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 100; i++)
        fputs("this is not an SQLite file\n", fp);
    fclose(fp);
    for (int ro = 0; ro <= 1; ro++) {
        assert_int_equal(weft_catalog_open(f->path, ro, &c, &msg), WEFT_EDB);
        assert_null(c);
        assert_non_null(msg);
        free(msg);
        msg = NULL;
    }
}

typedef struct reader_writer {
    weft_catalog *writer;
    int calls;
} reader_writer;

/* Called while the reader is inside its read transaction. */
static int write_during_read(const weft_trace_row *row, void *arg)
{
    reader_writer *rw = arg;
    weft_trace_row w = { 0 };

    (void)row;
    if (rw->calls++ == 0) {
        w.key = (char *)"during";
        w.name = (char *)"during";
        w.state = (char *)WEFT_STATE_COMPLETE;
        w.created = 1;
        assert_int_equal(weft_catalog_trace_finish(rw->writer, &w, NULL, 0),
                         0);
    }
    return 0;
}

static void test_reader_beside_writer(void **state)
{
    fixture *f = *state;
    weft_catalog *w = open_ok(f->path, 0);
    weft_catalog *r;
    collected col = { 0 };
    reader_writer rw = { w, 0 };
    weft_trace_row got;

    begin(w, "first", "first", 10);
    r = open_ok(f->path, 1);
    assert_int_equal(weft_catalog_list(r, collect_trace, &col), 0);
    assert_int_equal(col.n, 1);
    collected_free(&col);

    /* The writer commits while the reader is in the middle of a list: the
     * reader keeps its snapshot, the writer is not blocked. */
    assert_int_equal(weft_catalog_list(r, write_during_read, &rw), 0);
    assert_int_equal(rw.calls, 1);
    assert_int_equal(weft_catalog_list(r, collect_trace, &col), 0);
    assert_int_equal(col.n, 2);
    collected_free(&col);

    begin(w, "second", "second", 20);
    assert_int_equal(weft_catalog_find(r, "second", &got), 0);
    weft_catalog_trace_free(&got);

    /* A read-only handle cannot write. */
    got = (weft_trace_row){ 0 };
    got.key = (char *)"ro";
    assert_int_equal(weft_catalog_trace_begin(r, &got), WEFT_EDB);
    assert_non_null(strstr(weft_catalog_errmsg(r), f->path));

    weft_catalog_close(r);
    weft_catalog_close(w);
}

static void test_invalid_rows(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 };

    assert_int_equal(weft_catalog_trace_begin(c, &row), WEFT_EINVAL);
    assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), WEFT_EINVAL);
    weft_catalog_close(c);
}

static void *open_close(void *path)
{
    weft_catalog *c = NULL;
    char *msg = NULL;
    intptr_t rc = weft_catalog_open(path, 0, &c, &msg);

    weft_catalog_close(c);
    free(msg);
    return (void *)rc;
}

/* Several writers opening a new catalog at once (weftd's worker jobs) all
 * succeed: switching to WAL is retried while another holds the lock. */
static void test_concurrent_create(void **state)
{
    fixture *f = *state;
    char path[PATH_MAX];

    for (int round = 0; round < 20; round++) {
        pthread_t t[4];
        snprintf(path, sizeof path, "%s/race-%d.db", f->dir, round);
        for (int k = 0; k < 4; k++)
            assert_int_equal(pthread_create(&t[k], NULL, open_close, path), 0);
        for (int k = 0; k < 4; k++) {
            void *rc;
            assert_int_equal(pthread_join(t[k], &rc), 0);
            assert_int_equal((intptr_t)rc, 0);
        }
    }
}


/* ---- schema 2: migration, detail rows, filters -------------------------- */

/* The schema as version 1 shipped it (store/catalog.c, step 0 -> 1). */
static const char v1_schema[] =
    "CREATE TABLE traces ("
    " id INTEGER PRIMARY KEY,"
    " key TEXT UNIQUE NOT NULL,"
    " name TEXT NOT NULL DEFAULT '',"
    " uid INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL,"
    " created INTEGER NOT NULL DEFAULT 0,"
    " finished INTEGER NOT NULL DEFAULT 0,"
    " path TEXT NOT NULL DEFAULT '',"
    " members INTEGER NOT NULL DEFAULT 0,"
    " locations INTEGER NOT NULL DEFAULT 0,"
    " events INTEGER NOT NULL DEFAULT 0,"
    " bytes INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0,"
    " time_first INTEGER NOT NULL DEFAULT 0,"
    " time_last INTEGER NOT NULL DEFAULT 0,"
    " timer_resolution INTEGER NOT NULL DEFAULT 0,"
    " error TEXT);"
    "CREATE TABLE locations ("
    " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
    " id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL DEFAULT 0,"
    " thread INTEGER NOT NULL DEFAULT 0,"
    " name TEXT NOT NULL DEFAULT '',"
    " events INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (trace_id, id));"
    "CREATE INDEX traces_name ON traces(name);"
    "CREATE INDEX traces_created ON traces(created);"
    "CREATE INDEX traces_state ON traces(state);"
    "CREATE INDEX traces_uid ON traces(uid);"
    "PRAGMA user_version = 1;";

static void test_migrate_from_v1(void **state)
{
    fixture *f = *state;
    weft_trace_row got;
    weft_catalog *c;
    collected col = { 0 };
    char *msg = NULL, want[64];

    raw_exec(f->path, v1_schema);
    raw_exec(f->path, "INSERT INTO traces (key, name, uid, state, created,"
             " events, error) VALUES ('old-1', 'old run', 7, 'complete', 50,"
             " 123, NULL), ('old-2', 'older', 8, 'failed', 40, 0, 'boom')");
    raw_exec(f->path, "INSERT INTO locations (trace_id, id, name, events)"
             " VALUES (1, 0, 'Master thread', 123)");

    /* A reader cannot upgrade and says so. */
    c = NULL;
    assert_int_equal(weft_catalog_open(f->path, 1, &c, &msg), WEFT_EVERSION);
    snprintf(want, sizeof want, "has schema version 1, older than %d",
             WEFT_CATALOG_SCHEMA_VERSION);
    assert_non_null(strstr(msg, want));
    assert_non_null(strstr(msg, f->path));
    free(msg);

    c = open_ok(f->path, 0);
    weft_catalog_close(c);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master"
                             " WHERE name IN ('members', 'tags', 'regions',"
                             " 'tags_kv', 'regions_trace',"
                             " 'regions_region')"), 6);
    c = open_ok(f->path, 1);
    assert_int_equal(weft_catalog_find(c, "old-1", &got), 0);
    assert_string_equal(got.name, "old run");
    assert_int_equal(got.uid, 7);
    assert_int_equal(got.events, 123);
    assert_string_equal(got.hosts, "");
    assert_string_equal(got.command, "");
    assert_string_equal(got.job_id, "");
    assert_int_equal(got.protocol_version, 0);
    assert_string_equal(got.run, "");
    assert_int_equal(weft_catalog_locations(c, got.id, collect_location,
                                            &col), 0);
    assert_int_equal(col.n, 1);
    assert_int_equal(col.events[0], 123);
    collected_free(&col);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_find(c, "older", &got), 0);
    assert_string_equal(got.error, "boom");
    weft_catalog_trace_free(&got);
    weft_catalog_close(c);
}

typedef struct seen {
    size_t n;
    char text[16][160];
} seen;

static int seen_member(const weft_member_row *m, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%u %s %u %s %llu %llu "
             "%llu", m->rank, m->host, m->pid, m->state,
             (unsigned long long)m->locations, (unsigned long long)m->events,
             (unsigned long long)m->dropped);
    return 0;
}

static int seen_tag(const weft_tag *t, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%s=%s", t->key, t->value);
    return 0;
}

static int seen_region(const weft_region_row *r, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%lld [%s] %s %llu %.3f "
             "%.3f / %.3f", (long long)r->location, r->location_name,
             r->region, (unsigned long long)r->visits, r->incl_s, r->excl_s,
             r->total_excl_s);
    return 0;
}

#define ODD "it's \"odd\"\n'); DROP TABLE tags;--"

/* Stores trace `key` with figures, hosts, members, tags and regions. */
static void finish_full(weft_catalog *c, const char *key, const char *name,
                        uint32_t uid, const char *state, int64_t created,
                        int64_t finished, uint64_t events, uint64_t bytes,
                        const char *hosts, const weft_tag *tags, size_t ntags)
{
    weft_trace_row row = { 0 };
    weft_location_row locs[2] = {
        { 0, 0, 0, (char *)"Master thread", 3, 0 },
        { 1ull << 32, 1, 0, (char *)"Master thread", 2, 1 },
    };
    weft_member_row mem[3] = {
        { 0, (char *)"n1", 11, (char *)WEFT_MEMBER_COMPLETE, 1, 3, 0 },
        { 1, (char *)"n2", 12, (char *)WEFT_MEMBER_COMPLETE, 1, 2, 1 },
        { 2, (char *)"", 0, (char *)WEFT_MEMBER_MISSING, 0, 0, 0 },
    };
    weft_region_row reg[5] = {
        { WEFT_PROFILE_ALL, (char *)"main", 2, 4.0, 1.0, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)ODD, 3, 3.0, 3.0, NULL, 0 },
        { 0, (char *)"main", 1, 2.0, 0.5, NULL, 0 },
        { 0, (char *)ODD, 1, 1.5, 1.5, NULL, 0 },
        { 1ll << 32, (char *)"main", 1, 2.0, 0.5, NULL, 0 },
    };
    weft_trace_detail d = { .locations = locs, .nlocations = 2,
                            .members = mem, .nmembers = 3, .tags = tags,
                            .ntags = ntags, .regions = reg, .nregions = 5 };

    row.key = (char *)key;
    row.name = (char *)name;
    row.uid = uid;
    row.state = (char *)state;
    row.created = created;
    row.finished = finished;
    row.events = events;
    row.bytes = bytes;
    row.hosts = (char *)hosts;
    row.command = (char *)"./app --flag 'x y'";
    row.job_id = (char *)"job.42";
    row.protocol_version = 3;
    row.members = 3;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
}

static void test_detail_round_trip(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_tag tags[2] = { { (char *)"app", (char *)ODD },
                         { (char *)"size", (char *)"large" } };
    weft_tag more[2] = { { (char *)"app", (char *)"other" },
                         { (char *)"z", (char *)"last" } };
    weft_trace_row got;
    seen s = { 0 };

    finish_full(c, "k1", "run", 1000, WEFT_STATE_PARTIAL, 100, 160, 5, 10,
                "n1,n2", tags, 2);
    assert_int_equal(weft_catalog_find(c, "k1", &got), 0);
    assert_string_equal(got.hosts, "n1,n2");
    assert_string_equal(got.command, "./app --flag 'x y'");
    assert_string_equal(got.job_id, "job.42");
    assert_int_equal(got.protocol_version, 3);

    assert_int_equal(weft_catalog_members(c, got.id, seen_member, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.text[0], "0 n1 11 complete 1 3 0");
    assert_string_equal(s.text[1], "1 n2 12 complete 1 2 1");
    assert_string_equal(s.text[2], "2  0 missing 0 0 0");

    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_tags(c, got.id, seen_tag, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "app=" ODD);
    assert_string_equal(s.text[1], "size=large");

    /* add_tags keeps the value a key has. */
    assert_int_equal(weft_catalog_trace_add_tags(c, got.id, more, 2), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_tags(c, got.id, seen_tag, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.text[0], "app=" ODD);
    assert_string_equal(s.text[2], "z=last");

    /* The sums, by exclusive time, with their total. */
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, got.id, 0, WEFT_RSORT_EXCL, 0,
                                          seen_region, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "-1 [] " ODD " 3 3.000 3.000 / 4.000");
    assert_string_equal(s.text[1], "-1 [] main 2 4.000 1.000 / 4.000");
    /* Other orders and a limit. */
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, got.id, 0, WEFT_RSORT_INCL, 1,
                                          seen_region, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.text[0], "-1 [] main 2 4.000 1.000 / 4.000");
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, got.id, 0, WEFT_RSORT_VISITS, 0,
                                          seen_region, &s), 0);
    assert_non_null(strstr(s.text[0], ODD));
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, got.id, 0, WEFT_RSORT_NAME, 0,
                                          seen_region, &s), 0);
    assert_non_null(strstr(s.text[0], ODD)); /* "i" < "m" */
    /* Per location: grouped by location id, the limit per location, the
     * total per location, the location's name. */
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, got.id, 1, WEFT_RSORT_EXCL, 1,
                                          seen_region, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "0 [Master thread] " ODD
                        " 1 1.500 1.500 / 2.000");
    assert_string_equal(s.text[1], "4294967296 [Master thread] main 1 2.000 "
                        "0.500 / 0.500");
    assert_int_equal(weft_catalog_regions(c, got.id, 0, (enum weft_region_sort)9,
                                          0, seen_region, &s), WEFT_EINVAL);
    weft_catalog_trace_free(&got);

    /* finish again replaces members, tags and regions. */
    {
        weft_trace_row row = { 0 };
        row.key = (char *)"k1";
        row.name = (char *)"run";
        row.state = (char *)WEFT_STATE_COMPLETE;
        assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), 0);
    }
    assert_int_equal(raw_int(f->path, "SELECT (SELECT count(*) FROM members)"
                             " + (SELECT count(*) FROM tags)"
                             " + (SELECT count(*) FROM regions)"), 0);
    weft_catalog_close(c);
}

static int seen_pair(const weft_region_pair *r, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%s %d%d %llu %llu %.2f "
             "%.2f / %llu %llu %llu %llu %llu %.2f %.2f", r->region, r->in_a,
             r->in_b, (unsigned long long)r->visits_a,
             (unsigned long long)r->visits_b, r->excl_a, r->excl_b,
             (unsigned long long)r->regions,
             (unsigned long long)r->regions_a,
             (unsigned long long)r->regions_b,
             (unsigned long long)r->total_visits_a,
             (unsigned long long)r->total_visits_b, r->total_excl_a,
             r->total_excl_b);
    return 0;
}

/* Stores trace key (complete) with the sum rows reg[0..n) and a
 * per-location row, which compare leaves out. */
static void finish_regions(weft_catalog *c, const char *key,
                           const weft_region_row *reg, size_t n)
{
    weft_trace_row row = { 0 };
    weft_region_row all[8];
    weft_trace_detail d = { 0 };

    assert_true(n < 8);
    if (n)
        memcpy(all, reg, n * sizeof *reg);
    all[n] = (weft_region_row){ 0, (char *)"per-location", 99, 9.0, 9.0,
                                NULL, 0 };
    d.regions = all;
    d.nregions = n + 1;
    row.key = (char *)key;
    row.name = (char *)key;
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
}

/* weft compare's query: regions matched by name (one trace's rows of one
 * name added up), those of one side only, biggest change of exclusive
 * time first (then by name), the limit, the totals of all regions. */
static void test_compare(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    const weft_region_row a[] = {
        { WEFT_PROFILE_ALL, (char *)"main", 1, 10.0, 1.0, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"solve", 100, 5.0, 5.0, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"old", 4, 0.5, 0.5, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"same", 7, 2.0, 2.0, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"io", 1, 0.25, 0.25, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"io", 2, 0.25, 0.25, NULL, 0 },
    };
    const weft_region_row b[] = {
        { WEFT_PROFILE_ALL, (char *)"main", 1, 10.0, 1.5, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"solve", 200, 3.0, 3.0, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"new", 9, 0.75, 0.75, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"same", 7, 2.0, 2.0, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"io", 3, 1.0, 1.0, NULL, 0 },
    };
    weft_trace_row ra, rb;
    seen s = { 0 };

    finish_regions(c, "a", a, 6);
    finish_regions(c, "b", b, 5);
    finish_regions(c, "none", NULL, 0);
    assert_int_equal(weft_catalog_find(c, "a", &ra), 0);
    assert_int_equal(weft_catalog_find(c, "b", &rb), 0);
    assert_int_equal(weft_catalog_compare(c, ra.id, rb.id, 0, seen_pair, &s),
                     0);
    assert_int_equal(s.n, 6);
    assert_string_equal(s.text[0], "solve 11 100 200 5.00 3.00 / 6 5 5 115 "
                        "220 9.00 8.25");
    assert_string_equal(s.text[1], "new 01 0 9 0.00 0.75 / 6 5 5 115 220 "
                        "9.00 8.25");
    /* a tie (0.5 s each way): by name */
    assert_string_equal(s.text[2], "io 11 3 3 0.50 1.00 / 6 5 5 115 220 "
                        "9.00 8.25");
    assert_string_equal(s.text[3], "main 11 1 1 1.00 1.50 / 6 5 5 115 220 "
                        "9.00 8.25");
    assert_string_equal(s.text[4], "old 10 4 0 0.50 0.00 / 6 5 5 115 220 "
                        "9.00 8.25");
    assert_string_equal(s.text[5], "same 11 7 7 2.00 2.00 / 6 5 5 115 220 "
                        "9.00 8.25");
    /* A limit cuts the rows, not the totals. */
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_compare(c, ra.id, rb.id, 2, seen_pair, &s),
                     0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[1], "new 01 0 9 0.00 0.75 / 6 5 5 115 220 "
                        "9.00 8.25");
    /* The other way round: the same rows, a and b swapped. */
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_compare(c, rb.id, ra.id, 1, seen_pair, &s),
                     0);
    assert_string_equal(s.text[0], "solve 11 200 100 3.00 5.00 / 6 5 5 220 "
                        "115 8.25 9.00");
    /* A trace without a profile: all of the other's are gone. */
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_compare(c, ra.id, 12345, 1, seen_pair, &s),
                     0);
    assert_string_equal(s.text[0], "solve 10 100 0 5.00 0.00 / 5 5 0 115 0 "
                        "9.00 0.00");
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_compare(c, 12345, 12346, 0, seen_pair, &s),
                     0);
    assert_int_equal(s.n, 0);
    weft_catalog_trace_free(&ra);
    weft_catalog_trace_free(&rb);
    weft_catalog_close(c);
}

static void sum_user(uint32_t uid, uint64_t bytes, void *arg)
{
    uint64_t *by_uid = arg;

    assert_true(uid < 4);
    by_uid[uid] += bytes;
}

/* Retention's questions: the oldest finished trace (complete or partial,
 * never failed or recording), a row marked removed, the bytes per owner
 * of the traces not removed. */
static void test_retention(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row;
    uint64_t total, by_uid[4] = { 0 };

    finish_full(c, "k1", "failed", 1, WEFT_STATE_FAILED, 1, 5, 0, 100, "n1",
                NULL, 0);
    finish_full(c, "k2", "partial", 2, WEFT_STATE_PARTIAL, 2, 10, 0, 200,
                "n1", NULL, 0);
    finish_full(c, "k3", "complete", 1, WEFT_STATE_COMPLETE, 3, 20, 0, 400,
                "n1", NULL, 0);
    assert_int_equal(weft_catalog_oldest_finished(c, 0, &row), 0);
    assert_string_equal(row.key, "k2");
    weft_catalog_trace_free(&row);
    assert_int_equal(weft_catalog_oldest_finished(c, 10, &row),
                     WEFT_ENOTFOUND);
    assert_int_equal(weft_catalog_oldest_finished(c, 11, &row), 0);
    assert_string_equal(row.key, "k2");
    assert_int_equal(weft_catalog_trace_removed(c, row.id, "too old"), 0);
    weft_catalog_trace_free(&row);
    assert_int_equal(weft_catalog_find(c, "k2", &row), 0);
    assert_string_equal(row.state, WEFT_STATE_REMOVED);
    assert_string_equal(row.error, "too old");
    weft_catalog_trace_free(&row);
    assert_int_equal(weft_catalog_oldest_finished(c, 0, &row), 0);
    assert_string_equal(row.key, "k3");
    weft_catalog_trace_free(&row);
    assert_int_equal(weft_catalog_spool_bytes(c, &total, sum_user, by_uid), 0);
    assert_int_equal(total, 500);
    assert_int_equal(by_uid[1], 500);
    assert_int_equal(by_uid[2], 0);
    assert_int_equal(weft_catalog_trace_removed(c, 99, "x"), WEFT_ENOTFOUND);
    weft_catalog_close(c);
}

static void test_delete_cascades(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_tag tags[1] = { { (char *)"app", (char *)"x" } };

    finish_full(c, "k1", "one", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                tags, 1);
    finish_full(c, "k2", "two", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                tags, 1);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM regions"), 10);
    assert_int_equal(weft_catalog_trace_delete(c, 1), 0);
    /* Only the locations and the trace are deleted by name: the rest goes
     * by ON DELETE CASCADE, so foreign keys are on. */
    assert_int_equal(raw_int(f->path, "SELECT (SELECT count(*) FROM members"
                             " WHERE trace_id = 1) + (SELECT count(*) FROM"
                             " tags WHERE trace_id = 1) + (SELECT count(*)"
                             " FROM regions WHERE trace_id = 1) + (SELECT"
                             " count(*) FROM locations WHERE trace_id = 1)"),
                     0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM regions"
                             " WHERE trace_id = 2"), 5);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM members"
                             " WHERE trace_id = 2"), 3);
    weft_catalog_close(c);
}

/* ---- a user's image (issue #15) ----------------------------------------- */

/* Counts rows of an open image (its own connection, through SQL). */
static int64_t image_int(const unsigned char *img, size_t len,
                         const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v;

    assert_int_equal(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE,
                                     NULL), SQLITE_OK);
    assert_int_equal(weft_catalog_load_image(db, img, len), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    /* read-only: nothing written to an image reaches anyone */
    assert_int_not_equal(sqlite3_exec(db, "DELETE FROM traces", NULL, NULL,
                                      NULL), SQLITE_OK);
    sqlite3_close(db);
    return v;
}

/* uid 7's image holds uid 7's traces and their rows, nothing of uid 8's,
 * and opens as a catalog; all = 1 holds everything. */
static void test_image_of_one_user(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0), *img = NULL;
    weft_tag tags[1] = { { (char *)"app", (char *)"x" } };
    weft_trace_row row;
    unsigned char *bytes = NULL;
    size_t len = 0;
    char *msg = NULL;

    finish_full(c, "k1", "seven", 7, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                tags, 1);
    finish_full(c, "k2", "eight", 8, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                tags, 1);
    weft_catalog_close(c);
    assert_int_equal(weft_catalog_image(f->path, 0, 7, &bytes, &len, &msg),
                     0);
    assert_null(msg);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces"), 1);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces "
                               "WHERE name = 'seven' AND uid = 7"), 1);
    assert_int_equal(image_int(bytes, len, "SELECT (SELECT count(*) FROM "
                               "members) + (SELECT count(*) FROM tags) + "
                               "(SELECT count(*) FROM regions) + (SELECT "
                               "count(*) FROM locations)"), 3 + 1 + 5 + 2);
    assert_int_equal(image_int(bytes, len, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(weft_catalog_open_image(bytes, len, "the image", &img,
                                             &msg), 0);
    assert_int_equal(weft_catalog_find(img, "seven", &row), 0);
    assert_int_equal(row.uid, 7);
    weft_catalog_trace_free(&row);
    assert_int_equal(weft_catalog_find(img, "eight", &row), WEFT_ENOTFOUND);
    weft_catalog_close(img);
    sqlite3_free(bytes);

    /* a uid without traces: the schema, no rows */
    assert_int_equal(weft_catalog_image(f->path, 0, 9, &bytes, &len, &msg),
                     0);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces"), 0);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM regions"),
                     0);
    sqlite3_free(bytes);
    assert_int_equal(weft_catalog_image(f->path, 1, 9, &bytes, &len, &msg),
                     0);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces"), 2);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM regions"),
                     10);
    sqlite3_free(bytes);
}

/* Not a catalog: an error naming what, never a crash. */
static void test_image_errors(void **state)
{
    fixture *f = *state;
    static const unsigned char junk[] = "not an SQLite database, at all....";
    weft_catalog *img = NULL;
    unsigned char *bytes = NULL;
    size_t len = 0;
    char *msg = NULL;
    char missing[4200];

    assert_int_equal(weft_catalog_open_image(junk, sizeof junk, "weftd's "
                                             "answer", &img, &msg),
                     WEFT_ECORRUPT);
    assert_null(img);
    assert_non_null(strstr(msg, "weftd's answer: not a catalog image"));
    free(msg);
    snprintf(missing, sizeof missing, "%s.missing", f->path);
    assert_int_equal(weft_catalog_image(missing, 0, 1, &bytes, &len, &msg),
                     WEFT_EDB);
    assert_null(bytes);
    assert_non_null(strstr(msg, missing));
    free(msg);
}

/* ---- schema 4: live figures of recording traces (issue #11) ------------ */

/* A version 3 catalog (as weftd wrote it before live figures) gets the
 * two columns, 0 in its rows, and keeps everything else. */
static void test_migrate_from_v3(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row got;

    begin(c, "k-old", "old", 10);
    weft_catalog_close(c);
    raw_exec(f->path, "ALTER TABLE traces DROP COLUMN joined;"
             "ALTER TABLE traces DROP COLUMN live_updated;"
             "ALTER TABLE traces DROP COLUMN clock;"
             "DROP TABLE timelines; DROP TABLE timeline_regions;"
             "DROP TABLE messages;"
             "DROP TABLE io_files; DROP TABLE metrics;"
             "UPDATE traces SET events = 5; PRAGMA user_version = 3;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master"
                             " WHERE name IN ('timelines', 'messages',"
                             " 'io_files', 'metrics')"), 4);
    assert_int_equal(weft_catalog_find(c, "k-old", &got), 0);
    assert_string_equal(got.name, "old");
    assert_int_equal(got.events, 5);
    assert_int_equal(got.joined, 0);
    assert_int_equal(got.live_updated, 0);
    assert_string_equal(got.clock, "");
    weft_catalog_trace_free(&got);
    weft_catalog_close(c);
}

static int count_member(const weft_member_row *m, void *arg)
{
    (void)m;
    (*(int *)arg)++;
    return 0;
}

/* Live figures go to rows still recording, with their member and
 * location rows, in one transaction; a row converting or finished keeps
 * its own (the final row wins, whichever job comes last); the final row
 * ends the live figures. */
static void test_live_figures(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_member_row mem[2] = {
        { 0, (char *)"node-a", 10, (char *)WEFT_MEMBER_COMPLETE, 2, 30, 0 },
        { 2, (char *)"node-b", 12, (char *)WEFT_MEMBER_RECORDING, 1, 4, 0 },
    };
    weft_location_row loc[3] = {
        { 0, 0, 0, (char *)"", 10, 0 }, { 1, 0, 1, (char *)"", 20, 0 },
        { UINT64_C(2) << 32, 2, 0, (char *)"", 4, 0 },
    };
    weft_live_figures v[3] = {
        { "k-rec", 2, 3, 34, 4096, mem, 2, loc, 3 },
        { "k-conv", 1, 1, 10, 100, mem, 1, loc, 1 },
        { "k-none", 1, 1, 10, 100, mem, 1, loc, 1 },  /* no such row */
    };
    weft_trace_row row = { 0 }, got;
    collected col = { 0 };
    uint8_t stored[3] = { 9, 9, 9 };
    int nmem = 0;

    begin(c, "k-rec", "rec", 10);
    begin(c, "k-conv", "conv", 11);
    assert_int_equal(weft_catalog_trace_set_state(c, "k-conv",
                                                  WEFT_STATE_CONVERTING), 0);
    assert_int_equal(weft_catalog_trace_live(c, v, 3, 1234, stored), 0);
    assert_int_equal(stored[0], 1);
    assert_int_equal(stored[1], 0);
    assert_int_equal(stored[2], 0);
    assert_int_equal(weft_catalog_find(c, "k-rec", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_RECORDING);
    assert_int_equal(got.joined, 2);
    assert_int_equal(got.locations, 3);
    assert_int_equal(got.events, 34);
    assert_int_equal(got.bytes, 4096);
    assert_int_equal(got.live_updated, 1234);
    assert_int_equal(weft_catalog_locations(c, got.id, collect_location,
                                            &col), 0);
    assert_int_equal(col.n, 3);
    assert_int_equal(col.locids[2], UINT64_C(2) << 32);
    assert_int_equal(col.events[1], 20);
    collected_free(&col);
    assert_int_equal(weft_catalog_members(c, got.id, count_member, &nmem), 0);
    assert_int_equal(nmem, 2);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_find(c, "k-conv", &got), 0);
    assert_int_equal(got.events, 0);
    assert_int_equal(got.live_updated, 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM members"
                             " WHERE trace_id = 2"), 0);
    weft_catalog_trace_free(&got);

    /* Again, fewer rows: they are replaced, not added to. */
    v[0].nmembers = 1;
    v[0].nlocs = 1;
    v[0].events = 40;
    assert_int_equal(weft_catalog_trace_live(c, v, 1, 1236, NULL), 0);
    assert_int_equal(raw_int(f->path, "SELECT events FROM traces"
                             " WHERE key = 'k-rec'"), 40);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM locations"
                             " WHERE trace_id = 1"), 1);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM members"
                             " WHERE trace_id = 1"), 1);

    /* The final row: its figures, live figures over. A live job that
     * comes after it changes nothing. */
    row.key = (char *)"k-rec";
    row.name = (char *)"rec";
    row.state = (char *)WEFT_STATE_COMPLETE;
    row.members = 2;
    row.locations = 1;
    row.events = 41;
    row.bytes = 777;
    assert_int_equal(weft_catalog_trace_finish(c, &row, loc, 1), 0);
    assert_int_equal(weft_catalog_trace_live(c, v, 1, 1240, stored), 0);
    assert_int_equal(stored[0], 0);
    assert_int_equal(weft_catalog_find(c, "k-rec", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_COMPLETE);
    assert_int_equal(got.events, 41);
    assert_int_equal(got.bytes, 777);
    assert_int_equal(got.live_updated, 0);
    assert_int_equal(got.joined, 2);  /* the last count of the live ones */
    weft_catalog_trace_free(&got);
    weft_catalog_close(c);
}

/* Runs a query and returns the ids it lists, as "3 1 2". */
static const char *ids_of(weft_catalog *c, const weft_list_filter *flt)
{
    static char buf[128];
    collected col = { 0 };
    size_t n = 0;

    assert_int_equal(weft_catalog_query(c, flt, collect_trace, &col), 0);
    buf[0] = 0;
    for (size_t i = 0; i < col.n; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld",
                              i ? " " : "", (long long)col.ids[i]);
    collected_free(&col);
    return buf;
}

static void test_query_filters(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_tag lulesh[2] = { { (char *)"app", (char *)"lulesh" },
                           { (char *)"size", (char *)"large" } };
    weft_tag small[2] = { { (char *)"app", (char *)"lulesh" },
                          { (char *)"size", (char *)"small" } };
    weft_tag amg[1] = { { (char *)"app", (char *)"amg" } };
    weft_tag q[2];
    weft_list_filter flt;

    /* id  name      uid  state     created finished events bytes hosts */
    finish_full(c, "k1", "alpha", 1000, WEFT_STATE_COMPLETE, 100, 400, 50,
                7, "n1,n2", lulesh, 2);          /* duration 300 */
    finish_full(c, "k2", "beta", 1001, WEFT_STATE_PARTIAL, 200, 210, 500,
                5, "n3", small, 2);              /* duration 10 */
    finish_full(c, "k3", "it's *", 1000, WEFT_STATE_FAILED, 300, 0, 5, 9,
                "n10", amg, 1);                  /* not finished */
    begin(c, "k4", "gamma", 400);                /* recording, uid 1000 */

#define Q(...) (memset(&flt, 0, sizeof flt), __VA_ARGS__, ids_of(c, &flt))
    assert_string_equal(ids_of(c, NULL), "4 3 2 1");
    assert_string_equal(Q(flt.has_uid = 1, flt.uid = 1000), "4 3 1");
    assert_string_equal(Q(flt.has_uid = 1, flt.uid = 5), "");
    assert_string_equal(Q(flt.name_glob = "*a"), "4 2 1");
    assert_string_equal(Q(flt.name_glob = "it's [*]"), "3");
    assert_string_equal(Q(flt.name_glob = "ALPHA"), "");  /* GLOB: case */
    assert_string_equal(Q(flt.state = WEFT_STATE_PARTIAL), "2");
    assert_string_equal(Q(flt.state = "nonsense"), "");
    assert_string_equal(Q(flt.since = 200), "4 3 2");
    assert_string_equal(Q(flt.until = 200), "2 1");
    assert_string_equal(Q(flt.since = 150, flt.until = 350), "3 2");
    /* traces.hosts matches whole names: n3 is not n30, n1 not n10 */
    assert_string_equal(Q(flt.host = "n3"), "2");
    assert_string_equal(Q(flt.host = "n10"), "3");
    assert_string_equal(Q(flt.host = "n"), "");
    /* ...and so do members' hosts (finish_full's run on n1 and n2) */
    assert_string_equal(Q(flt.host = "n1"), "3 2 1");
    assert_string_equal(Q(flt.host = "n2"), "3 2 1");
    q[0] = lulesh[0];
    assert_string_equal(Q(flt.tags = q, flt.ntags = 1), "2 1");
    q[1] = lulesh[1];
    assert_string_equal(Q(flt.tags = q, flt.ntags = 2), "1");
    q[1].value = (char *)"huge";
    assert_string_equal(Q(flt.tags = q, flt.ntags = 2), "");
    q[0].key = (char *)"size";
    q[0].value = (char *)"small";
    assert_string_equal(Q(flt.tags = q, flt.ntags = 1, flt.has_uid = 1,
                          flt.uid = 1001, flt.state = WEFT_STATE_PARTIAL,
                          flt.host = "n3", flt.name_glob = "b*",
                          flt.since = 1, flt.until = 1000), "2");
    assert_string_equal(Q(flt.tags = q, flt.ntags = 1, flt.has_uid = 1,
                          flt.uid = 1000), "");

    /* Sort orders, their reverse, limit. */
    assert_string_equal(Q(flt.reverse = 1), "1 2 3 4");
    assert_string_equal(Q(flt.sort = WEFT_SORT_NAME), "1 2 4 3");
    assert_string_equal(Q(flt.sort = WEFT_SORT_NAME, flt.reverse = 1),
                        "3 4 2 1");
    assert_string_equal(Q(flt.sort = WEFT_SORT_EVENTS), "2 1 3 4");
    assert_string_equal(Q(flt.sort = WEFT_SORT_SIZE), "3 1 2 4");
    assert_string_equal(Q(flt.sort = WEFT_SORT_DURATION), "1 2 4 3");
    assert_string_equal(Q(flt.sort = WEFT_SORT_STATE), "1 3 2 4");
    assert_string_equal(Q(flt.sort = WEFT_SORT_STATE, flt.reverse = 1),
                        "4 2 3 1");
    assert_string_equal(Q(flt.limit = 2), "4 3");
    assert_string_equal(Q(flt.limit = 1, flt.sort = WEFT_SORT_EVENTS,
                          flt.reverse = 1), "4");
    assert_string_equal(Q(flt.limit = 10, flt.state = WEFT_STATE_COMPLETE),
                        "1");
#undef Q
    memset(&flt, 0, sizeof flt);
    flt.sort = (enum weft_list_sort)42;
    {
        collected col = { 0 };
        assert_int_equal(weft_catalog_query(c, &flt, collect_trace, &col),
                         WEFT_EINVAL);
        assert_non_null(strstr(weft_catalog_errmsg(c), "unknown sort"));
    }
    weft_catalog_close(c);
}

/* The README's cross-trace query runs on the schema. */
static void test_readme_query(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_tag tags[1] = { { (char *)"app", (char *)"lulesh" } };

    finish_full(c, "k1", "one", 1, WEFT_STATE_COMPLETE, 100, 200, 0, 0, "n1",
                tags, 1);
    weft_catalog_close(c);
    raw_exec(f->path, "UPDATE regions SET region = 'compute'"
             " WHERE region = 'main'");
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM (SELECT t.id,"
        " t.name, datetime(t.created,'unixepoch') AS started, r.excl_s FROM"
        " traces t JOIN tags g ON g.trace_id = t.id AND g.key = 'app' AND"
        " g.value = 'lulesh' JOIN regions r ON r.trace_id = t.id AND"
        " r.location_id IS NULL AND r.region = 'compute' ORDER BY r.excl_s"
        " DESC LIMIT 10)"), 1);
}

/* A trace recovery cannot use: an existing row keeps its figures and
 * owner; a missing one is inserted failed; a second failure keeps the
 * first finish time. */
static void test_trace_fail(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 }, got;

    row.key = "k1";
    row.name = "run";
    row.uid = 1234;
    row.members = 4;
    row.hosts = "node-a";
    assert_int_equal(weft_catalog_trace_begin(c, &row), 0);
    row = (weft_trace_row){ 0 };
    row.key = "k1";
    row.name = "other name";
    row.finished = 1000;
    row.error = "rank-0.wj: offset 8: the Hello entry is corrupt";
    assert_int_equal(weft_catalog_trace_fail(c, &row), 0);
    assert_int_equal(weft_catalog_find(c, "k1", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_FAILED);
    assert_string_equal(got.name, "run");
    assert_int_equal(got.uid, 1234);
    assert_int_equal(got.members, 4);
    assert_string_equal(got.hosts, "node-a");
    assert_int_equal(got.finished, 1000);
    assert_string_equal(got.error, row.error);
    weft_catalog_trace_free(&got);
    row.finished = 2000;
    assert_int_equal(weft_catalog_trace_fail(c, &row), 0);
    assert_int_equal(weft_catalog_find(c, "k1", &got), 0);
    assert_int_equal(got.finished, 1000);
    weft_catalog_trace_free(&got);

    row = (weft_trace_row){ 0 };
    row.key = "k2";
    row.name = "gone";
    row.state = WEFT_STATE_RECORDING; /* forced to failed */
    row.error = "no journal";
    assert_int_equal(weft_catalog_trace_fail(c, &row), 0);
    assert_int_equal(weft_catalog_find(c, "k2", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_FAILED);
    assert_string_equal(got.name, "gone");
    weft_catalog_trace_free(&got);
    weft_catalog_close(c);
}

/* quick_check without changing the file: no file and a sound catalog
 * pass, garbage is WEFT_ECORRUPT naming the file. */
static void test_verify(void **state)
{
    fixture *f = *state;
    weft_catalog *c;
    char *msg = NULL;
    FILE *fp;

    assert_int_equal(weft_catalog_verify(f->path, &msg), 0);
    assert_null(msg);
    c = open_ok(f->path, 0);
    weft_catalog_close(c);
    assert_int_equal(weft_catalog_verify(f->path, &msg), 0);
    assert_null(msg);
    fp = fopen(f->path, "r+");
    assert_non_null(fp);
    fputs("this is no longer an SQLite database header", fp);
    fclose(fp);
    assert_int_equal(weft_catalog_verify(f->path, &msg), WEFT_ECORRUPT);
    assert_non_null(msg);
    assert_non_null(strstr(msg, f->path));
    assert_non_null(strstr(msg, "is damaged"));
    free(msg);
}

/* ---- schema 6: what weft report draws ----------------------------------- */

static int seen_timeline(const weft_timeline_row *t, void *arg)
{
    seen *s = arg;
    int k;

    assert_true(s->n < 16);
    k = snprintf(s->text[s->n], sizeof s->text[0], "%llu %.2f %.2f:",
                 (unsigned long long)t->location, t->start_s, t->width_s);
    for (size_t i = 0; i < t->nbins; i++)
        k += snprintf(s->text[s->n] + k, sizeof s->text[0] - (size_t)k,
                      " %u", t->bins[i]);
    s->n++;
    return 0;
}

static int seen_tl_region(const weft_timeline_region *r, void *arg)
{
    seen *s = arg;

    snprintf(s->text[s->n++], sizeof s->text[0], "%u %s", r->id, r->name);
    return 0;
}

static int seen_message(const weft_message_row *m, void *arg)
{
    seen *s = arg;

    snprintf(s->text[s->n++], sizeof s->text[0], "%u>%u %llu %llu",
             m->sender, m->receiver, (unsigned long long)m->messages,
             (unsigned long long)m->bytes);
    return 0;
}

/* Timelines (bins of any size as uvarints), their region names and the
 * message matrix are stored with the final row, read back in order,
 * replaced by the next finish and deleted with the trace; a blob that
 * does not decode is an error, not a crash. */
static void test_report_round_trip(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    uint32_t b0[4] = { 1, 0, 300, 70000 }, b1[1] = { 2 };
    weft_timeline_row tl[2] = {
        { 1ull << 32, 0.5, 0.25, b1, 1 },
        { 0, 0.0, 0.125, b0, 4 },
    };
    weft_timeline_region tr[2] = { { 0, (char *)"main" },
                                   { 299, (char *)ODD } };
    weft_message_row msg[2] = { { 1, 0, 5, 500 }, { 0, 1, 3, 1ull << 40 } };
    weft_trace_row row = { 0 };
    weft_trace_detail d = { .timelines = tl, .ntimelines = 2,
                            .timeline_regions = tr, .ntimeline_regions = 2,
                            .messages = msg, .nmessages = 2 };
    seen s = { 0 };
    int64_t id;

    row.key = (char *)"k1";
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    id = raw_int(f->path, "SELECT id FROM traces WHERE key = 'k1'");
    assert_int_equal(weft_catalog_timelines(c, id, seen_timeline, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "0 0.00 0.12: 1 0 300 70000");
    assert_string_equal(s.text[1], "4294967296 0.50 0.25: 2");
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_timeline_regions(c, id, seen_tl_region,
                                                   &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "0 main");
    assert_string_equal(s.text[1], "299 " ODD);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_messages(c, id, seen_message, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "0>1 3 1099511627776");
    assert_string_equal(s.text[1], "1>0 5 500");

    /* the next finish replaces them (here: by none) */
    d.ntimelines = 1;
    d.ntimeline_regions = d.nmessages = 0;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM timelines"), 1);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM messages"), 0);

    /* a damaged blob */
    raw_exec(f->path, "UPDATE timelines SET bins = x'80'");
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_timelines(c, id, seen_timeline, &s),
                     WEFT_ECORRUPT);
    assert_int_equal(s.n, 0);

    assert_int_equal(weft_catalog_trace_delete(c, id), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM timelines"), 0);
    assert_int_equal(raw_int(f->path,
                             "SELECT count(*) FROM timeline_regions"), 0);
    weft_catalog_close(c);
}

/* ---- schema 7: file I/O and metrics of weft report --------------------- */

/* A version 6 catalog (as weftd wrote it before file I/O and metrics)
 * gets the two tables, empty, and keeps its report rows. */
static void test_migrate_from_v6(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_message_row msg = { 0, 1, 2, 200 };
    weft_trace_row row = { 0 };
    weft_trace_detail d = { .messages = &msg, .nmessages = 1 };

    row.key = (char *)"k6";
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    weft_catalog_close(c);
    raw_exec(f->path, "DROP TABLE io_files; DROP TABLE metrics;"
             "PRAGMA user_version = 6;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM io_files"), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM messages"), 1);
    weft_catalog_close(c);
}

static int seen_io_file(const weft_io_file_row *r, void *arg)
{
    seen *s = arg;

    snprintf(s->text[s->n++], sizeof s->text[0], "%s %llu %llu %llu %llu "
             "%.3f", r->name, (unsigned long long)r->others,
             (unsigned long long)r->bytes_read,
             (unsigned long long)r->bytes_written,
             (unsigned long long)r->operations, r->time_s);
    return 0;
}

static int seen_metric(const weft_metric_row *m, void *arg)
{
    seen *s = arg;
    int k;

    k = snprintf(s->text[s->n], sizeof s->text[0], "%llu %u %s [%s] %.2f "
                 "%.2f %llu:", (unsigned long long)m->location, m->member,
                 m->name, m->unit, m->start_s, m->width_s,
                 (unsigned long long)m->series_total);
    for (size_t i = 0; i < m->npoints * 3; i++)
        k += snprintf(s->text[s->n] + k, sizeof s->text[0] - (size_t)k,
                      " %g", m->points[i]);
    s->n++;
    return 0;
}

/* File rows (in their order, others last) and metric series (by
 * location and member, NaN points kept) are stored with the final row,
 * replaced by the next finish and deleted with the trace; points that
 * do not decode are an error. */
static void test_io_metrics_round_trip(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_io_file_row io[3] = {
        { (char *)"/data/big", 0, 1ull << 40, 5, 7, 2.5 },
        { (char *)ODD, 0, 0, 409600, 100, 0.125 },
        { (char *)"", 12, 3, 4, 24, 0.001 },
    };
    double p0[6] = { 1, 2, 2, NAN, NAN, NAN }, p1[3] = { -1.5, 1e300, 0 };
    weft_metric_row met[2] = {
        { 1ull << 32, 3, (char *)"work", (char *)"items", 0.5, 0.25, p1, 1,
          20 },
        { 0, 7, (char *)ODD, (char *)"", 0.0, 0.125, p0, 2, 20 },
    };
    weft_trace_row row = { 0 };
    weft_trace_detail d = { .io_files = io, .nio_files = 3,
                            .metrics = met, .nmetrics = 2 };
    seen s = { 0 };
    int64_t id;

    row.key = (char *)"k1";
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    id = raw_int(f->path, "SELECT id FROM traces WHERE key = 'k1'");
    assert_int_equal(weft_catalog_io_files(c, id, seen_io_file, &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.text[0], "/data/big 0 1099511627776 5 7 2.500");
    assert_string_equal(s.text[1], ODD " 0 0 409600 100 0.125");
    assert_string_equal(s.text[2], " 12 3 4 24 0.001");
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_metrics(c, id, seen_metric, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[0], "0 7 " ODD " [] 0.00 0.12 20: 1 2 2 nan "
                        "nan nan");
    assert_string_equal(s.text[1], "4294967296 3 work [items] 0.50 0.25 20:"
                        " -1.5 1e+300 0");

    /* the next finish replaces them (here: by fewer) */
    d.nio_files = 1;
    d.nmetrics = 0;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM io_files"), 1);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 0);

    /* damaged points */
    d.nmetrics = 1;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    raw_exec(f->path, "UPDATE metrics SET points = x'0102'");
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_metrics(c, id, seen_metric, &s),
                     WEFT_ECORRUPT);
    assert_int_equal(s.n, 0);

    assert_int_equal(weft_catalog_trace_delete(c, id), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM io_files"), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 0);
    weft_catalog_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_begin_is_insert_or_ignore,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_names_verbatim, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_find_newest_by_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_runs_share_a_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readonly_missing_fails, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readonly_not_a_catalog, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reader_beside_writer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_invalid_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_create, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_detail_round_trip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_image_of_one_user, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_image_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_cascades, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_query_filters, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readme_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v6, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_io_metrics_round_trip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v3, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_live_figures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_round_trip, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
