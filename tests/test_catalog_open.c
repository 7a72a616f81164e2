/* test_catalog_open.c - opening the SQLite catalog (store/catalog.c):
 * the schema a new file gets, versions (a newer one refused, the upgrade
 * of a version 1 file), read-only opens (of a missing file, of one that
 * is not a catalog, beside a writer) and writers creating one file at
 * once. Each test works in its own scratch directory under $TMPDIR
 * (catalog_util.c, shared with test_catalog.c and test_catalog_query.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "catalog.h"
#include "catalog_util.h"
#include "tmpdir.h"
#include "weft_errors.h"

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


/* ---- schema versions ------------------------------------------------------ */

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
    /* Schema 9: the highest id given so far is where ids go on. */
    assert_int_equal(raw_int(f->path, "SELECT last FROM trace_ids"), 2);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_create_schema),
        T(test_newer_schema_refused),
        T(test_readonly_missing_fails),
        T(test_readonly_not_a_catalog),
        T(test_reader_beside_writer),
        T(test_concurrent_create),
        T(test_migrate_from_v1),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
