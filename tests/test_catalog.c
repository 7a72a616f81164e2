/* test_catalog.c - the SQLite catalog (store/catalog.c): schema creation
 * and versioning, the trace life cycle (begin, set_state, finish), lookups,
 * listing, odd names stored verbatim, read-only opens next to a writer.
 * Each test works in its own mkdtemp directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "catalog.h"
#include "weft_errors.h"

typedef struct fixture {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/weft-test-catalog-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/catalog.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    struct dirent *e;
    char p[PATH_MAX];

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    assert_int_equal(rmdir(f->dir), 0);
    free(f);
    return 0;
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

    /* Finishing again replaces the locations; no error clears it. */
    row.error = NULL;
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish(c, &row, locs, 1), 0);
    assert_int_equal(weft_catalog_locations(c, id, collect_location, &col), 0);
    assert_int_equal(col.n, 1);
    collected_free(&col);
    assert_int_equal(weft_catalog_find(c, "run-1", &got), 0);
    assert_null(got.error);
    assert_string_equal(got.state, WEFT_STATE_COMPLETE);
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
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
