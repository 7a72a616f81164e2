/* test_catalog.c - the SQLite catalog (store/catalog.c) from a trace's
 * point of view: its life cycle (begin, set_state, finish), lookups,
 * listing, runs of one name, odd names stored verbatim, rows refused,
 * ids (never reused, random by default), members, tags and region
 * profiles read back, weft compare's query, retention's questions and
 * deletes that cascade. Each test works in its own scratch directory
 * under $TMPDIR (catalog_util.c, shared with test_catalog_open.c:
 * opening a catalog, schema versions; and test_catalog_query.c: what is
 * asked of the catalog beyond a trace's life cycle).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "catalog_util.h"
#include "tmpdir.h"
#include "weft_errors.h"

/* ---- tests --------------------------------------------------------------- */

/* The forms of a trace's name weft_catalog_find takes (#ID, ID, the
 * name), and what it says of the ones that name nothing. */
static void check_finds(weft_catalog *c, int64_t id)
{
    weft_trace_row got;
    char buf[32];

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
}

/* Trace run-1's finished row, every field at an edge of its range. */
static weft_trace_row big_row(void)
{
    weft_trace_row row = { 0 };

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
    return row;
}

/* Finishing a key the catalog does not have inserts it; the listing
 * is newest first and stops at a callback's non-zero value. */
static void check_insert_and_list(weft_catalog *c, weft_trace_row *row,
                                  int64_t id)
{
    collected col = { 0 };

    /* Finish of an unknown key inserts it. */
    row->key = (char *)"run-2";
    row->created = 300;
    assert_int_equal(weft_catalog_trace_finish(c, row, NULL, 0), 0);
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
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 }, got;
    weft_location_row locs[3] = {
        { (1ull << 32) | 1, 1, 1, (char *)"rank 1 thread 1", 30, 0, NULL,
          NULL },
        { 0, 0, 0, (char *)"rank 0 thread 0", 10, 1, NULL, NULL },
        { UINT64_MAX, UINT32_MAX, UINT32_MAX, (char *)"max", UINT64_MAX,
          UINT64_MAX, NULL, NULL },
    };
    collected col = { 0 };
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

    check_finds(c, id);

    assert_int_equal(weft_catalog_trace_set_state(c, "run-1",
                                                  WEFT_STATE_CONVERTING), 0);
    assert_int_equal(weft_catalog_trace_set_state(c, "missing",
                                                  WEFT_STATE_FAILED),
                     WEFT_ENOTFOUND);
    assert_int_equal(weft_catalog_find(c, "run-1", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_CONVERTING);
    weft_catalog_trace_free(&got);

    row = big_row();
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

    check_insert_and_list(c, &row, id);

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

static void test_invalid_rows(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 };

    assert_int_equal(weft_catalog_trace_begin(c, &row), WEFT_EINVAL);
    assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), WEFT_EINVAL);
    weft_catalog_close(c);
}

/* ---- ids, detail rows, compare, retention --------------------------------- */

static void assert_id(weft_catalog *c, const char *key, int64_t id)
{
    weft_trace_row got;

    assert_int_equal(weft_catalog_find(c, key, &got), 0);
    assert_int_equal(got.id, id);
    weft_catalog_trace_free(&got);
}

/* A removed trace's id is never given again, not even the newest's
 * (a script that kept it must not reach another trace). */
static void test_ids_not_reused(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);


    finish_full(c, "k1", "one", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                NULL, 0);
    finish_full(c, "k2", "two", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                NULL, 0);
    assert_int_equal(weft_catalog_trace_delete(c, 2), 0);
    finish_full(c, "k3", "three", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                NULL, 0);
    assert_id(c, "k3", 3);
    /* Finishing a trace that has a row keeps its id. */
    finish_full(c, "k3", "three", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                NULL, 0);
    assert_id(c, "k3", 3);
    assert_int_equal(weft_catalog_trace_delete(c, 3), 0);
    assert_int_equal(weft_catalog_trace_delete(c, 1), 0);
    finish_full(c, "k4", "four", 1, WEFT_STATE_COMPLETE, 1, 2, 0, 0, "n1",
                NULL, 0);
    assert_id(c, "k4", 4);
    weft_catalog_close(c);
}

/* Ids are drawn at random by default (#30): one user's ids do not tell
 * how many traces others made in between. Every id given is kept in
 * trace_ids_given, a removed one too, and never drawn again; a catalog
 * of schema 9 draws above its highest id (floor), whose removed ids it
 * does not know; switched to sequential, ids go on above the highest. */
static void test_ids_random(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    int64_t ids[40], consecutive = 0, id;
    char key[32];

    assert_int_equal(weft_catalog_set_sequential_ids(c, 0), 0);
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "r%d", i);
        ids[i] = begin(c, key, "r", 10 + i);
        assert_true(ids[i] >= 1 && ids[i] <= WEFT_CATALOG_ID_RANGE);
        for (int j = 0; j < i; j++)
            assert_true(ids[j] != ids[i]);
        consecutive += i > 0 && ids[i] == ids[i - 1] + 1;
    }
    assert_true(consecutive < 5);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trace_ids_given"),
                     40);
    assert_int_equal(weft_catalog_trace_delete(c, ids[7]), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trace_ids_given"),
                     40);
    /* Draws are above the floor; sequential ids above the highest. */
    raw_exec(f->path, "UPDATE trace_ids SET floor = 9000000, last = 9000000");
    id = begin(c, "above", "r", 99);
    assert_true(id > 9000000 && id <= 9000000 + WEFT_CATALOG_ID_RANGE);
    assert_int_equal(weft_catalog_set_sequential_ids(c, 1), 0);
    raw_exec(f->path, "UPDATE trace_ids SET last = 9000000 + 9000000");
    assert_int_equal(begin(c, "seq", "r", 100), 18000001);
    assert_int_equal(weft_catalog_set_sequential_ids(c, 0), 0);
    weft_catalog_close(c);

    /* An older catalog: its ids 1..3 (3 removed) are never drawn. */
    c = open_ok(f->path, 0);
    weft_catalog_close(c);
    raw_exec(f->path, "DELETE FROM traces; DROP TRIGGER trace_ids_last;"
             "DROP TABLE trace_ids; DROP TABLE trace_ids_given;"
             "DROP INDEX traces_seq; ALTER TABLE traces DROP COLUMN seq;"
             "ALTER TABLE traces DROP COLUMN charged;"
             "ALTER TABLE traces DROP COLUMN refused;"
             "ALTER TABLE locations DROP COLUMN process;"
             "ALTER TABLE locations DROP COLUMN program;"
             "ALTER TABLE members DROP COLUMN parent_pid;"
             "ALTER TABLE regions DROP COLUMN paradigm;"
             "INSERT INTO traces (id, key, state) VALUES (1, 'o1', 'complete'),"
             " (2, 'o2', 'complete'); PRAGMA user_version = 8;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "SELECT floor FROM trace_ids"), 2);
    assert_int_equal(weft_catalog_set_sequential_ids(c, 0), 0);
    id = begin(c, "new", "n", 5);
    assert_true(id > 2 && id <= 2 + WEFT_CATALOG_ID_RANGE);
    weft_catalog_close(c);
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
    assert_string_equal(s.text[1], "1 n2 12 complete 1 2 1 parent 11");
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
    assert_string_equal(s.text[0], "-1 [] " ODD " 3 3.000 3.000 / 4.000"
                        " paradigm mpi");
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
                        " 1 1.500 1.500 / 2.000 paradigm mpi");
    assert_string_equal(s.text[1], "4294967296 [Master thread] main 1 2.000 "
                        "0.500 / 0.500");
    assert_int_equal(weft_catalog_regions(c, got.id, 0, (enum weft_region_sort)9,
                                          0, seen_region, &s), WEFT_EINVAL);
    /* a paradigm as given, NULL as '' */
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM regions WHERE "
                             "paradigm = 'mpi'"), 2);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM regions WHERE "
                             "paradigm = ''"), 3);
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
                                NULL, NULL, 0 };
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
        { WEFT_PROFILE_ALL, (char *)"main", 1, 10.0, 1.0, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"solve", 100, 5.0, 5.0, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"old", 4, 0.5, 0.5, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"same", 7, 2.0, 2.0, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"io", 1, 0.25, 0.25, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"io", 2, 0.25, 0.25, NULL, NULL, 0 },
    };
    const weft_region_row b[] = {
        { WEFT_PROFILE_ALL, (char *)"main", 1, 10.0, 1.5, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"solve", 200, 3.0, 3.0, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"new", 9, 0.75, 0.75, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"same", 7, 2.0, 2.0, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)"io", 3, 1.0, 1.0, NULL, NULL, 0 },
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

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_ids_not_reused),
        T(test_ids_random),
        T(test_round_trip),
        T(test_begin_is_insert_or_ignore),
        T(test_odd_names_verbatim),
        T(test_find_newest_by_name),
        T(test_runs_share_a_name),
        T(test_invalid_rows),
        T(test_detail_round_trip),
        T(test_compare),
        T(test_retention),
        T(test_delete_cascades),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
