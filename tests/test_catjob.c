/* test_catjob.c - weftd's catalog connections kept between jobs
 * (daemon/traces/catjob.c): a job after a successful one runs on the same
 * connection (a TEMP table, which lives as long as its connection, says
 * which); not after a job that failed or left a transaction open, nor
 * once the path is another file (a catalog put in its place) or another
 * path, nor after weft_catjob_close_idle. The pool is the process's, so
 * the tests run in this order, the last one closing it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "catalog_internal.h"
#include "catjob.h"
#include "testutil.h"
#include "weft_errors.h"

/* What a job does on its connection. */
enum act {
    MARK,          /* makes the TEMP table, fails if it exists */
    PROBE,         /* *seen: 1 if the TEMP table exists */
    FAIL,          /* fails (WEFT_EIO, saying why) */
    LEAVE_OPEN     /* begins a transaction and ends well */
};

typedef struct job {
    enum act act;
    int seen;
} job;

static int run(weft_catalog *cat, void *arg, char *err, size_t errlen)
{
    job *j = arg;
    sqlite3_stmt *st = NULL;

    switch (j->act) {
    case MARK:
        return sqlite3_exec(cat->db, "CREATE TEMP TABLE mark (x)", NULL,
                            NULL, NULL) == SQLITE_OK ? 0 : WEFT_EDB;
    case PROBE:
        assert_int_equal(sqlite3_prepare_v2(cat->db,
                                            "SELECT count(*) FROM "
                                            "temp.sqlite_master WHERE "
                                            "name = 'mark'",
                                            -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        j->seen = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        return 0;
    case FAIL:
        snprintf(err, errlen, "the job failed");
        return WEFT_EIO;
    case LEAVE_OPEN:
        return sqlite3_exec(cat->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK
                   ? 0 : WEFT_EDB;
    }
    return WEFT_EINVAL;
}

/* Runs a job of `act` on path; its result. */
static int with(const char *path, enum act act, int *seen)
{
    job j = { .act = act };
    char err[256];
    int rc = weft_catjob_with(path, run, &j, err, sizeof err);

    if (seen)
        *seen = j.seen;
    return rc;
}

/* 1 if the next job on path runs on the connection the last MARK did. */
static int same_connection(const char *path)
{
    int seen = -1;

    assert_int_equal(with(path, PROBE, &seen), 0);
    return seen;
}

static void test_kept(void **state)
{
    tu_scratch *s = *state;
    char err[256];
    job j = { .act = FAIL };

    assert_int_equal(with(s->path, MARK, NULL), 0);
    assert_int_equal(same_connection(s->path), 1);
    assert_int_equal(same_connection(s->path), 1);
    /* A failed job's connection is closed; its message is the job's. */
    assert_int_equal(weft_catjob_with(s->path, run, &j, err, sizeof err),
                     WEFT_EIO);
    assert_string_equal(err, "the job failed");
    assert_int_equal(same_connection(s->path), 0);
    /* So is one a job left in a transaction. */
    assert_int_equal(with(s->path, MARK, NULL), 0);
    assert_int_equal(with(s->path, LEAVE_OPEN, NULL), 0);
    assert_int_equal(same_connection(s->path), 0);
}

static void test_replaced_or_moved(void **state)
{
    tu_scratch *s = *state;
    char *other = tu_path(s->dir, "other.db");
    char *moved = tu_path(s->dir, "moved.db");

    assert_int_equal(with(s->path, MARK, NULL), 0);
    /* Another path: a connection of its own; the first path's is closed
     * (it belonged to a catalog weftd no longer uses). */
    assert_int_equal(same_connection(other), 0);
    assert_int_equal(same_connection(s->path), 0);
    /* The path is another file now (weft reindex's new catalog renamed
     * into its place): a new connection, to the new file. */
    assert_int_equal(with(s->path, MARK, NULL), 0);
    assert_int_equal(rename(s->path, moved), 0);
    assert_int_equal(rename(other, s->path), 0);
    assert_int_equal(same_connection(s->path), 0);
    free(other);
    free(moved);
}

static void test_close_idle(void **state)
{
    tu_scratch *s = *state;

    assert_int_equal(with(s->path, MARK, NULL), 0);
    weft_catjob_close_idle();
    assert_int_equal(same_connection(s->path), 0);
    /* None is kept from now on. */
    assert_int_equal(with(s->path, MARK, NULL), 0);
    assert_int_equal(same_connection(s->path), 0);
}

/* An open that fails names the catalog's problem. */
static void test_open_fails(void **state)
{
    tu_scratch *s = *state;
    char *dir = tu_path(s->dir, "none/catalog.db");
    char err[256];
    job j = { .act = PROBE };

    assert_true(weft_catjob_with(dir, run, &j, err, sizeof err) < 0);
    assert_non_null(strstr(err, dir));
    free(dir);
}

static int setup(void **state)
{
    return tu_scratch_setup(state, "catjob", "catalog.db");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kept, setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_replaced_or_moved, setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_open_fails, setup,
                                        tu_scratch_teardown),
        cmocka_unit_test_setup_teardown(test_close_idle, setup,
                                        tu_scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
