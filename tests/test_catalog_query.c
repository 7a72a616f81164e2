/* test_catalog_query.c - what the weft command and weftd ask of the
 * SQLite catalog (store/catalog*.c) beyond a trace's life cycle: one
 * user's image of it (issue #15), live figures of recording traces
 * (schema 4), listing filters (and the README's query), failed rows,
 * verify, and the tables weft report draws (schemas 6 and 7: timelines,
 * messages, file I/O, metrics). Each test works in its own scratch
 * directory under $TMPDIR (catalog_util.c).
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
#include "catalog_util.h"
#include "tmpdir.h"
#include "weft_errors.h"

/* What schemas 9 to 15 added, dropped to make an older catalog of a
 * new one. */
#define DROP_SCHEMA_15 "ALTER TABLE regions DROP COLUMN paradigm;"
#define DROP_SCHEMA_14 DROP_SCHEMA_15                                        \
    "ALTER TABLE members DROP COLUMN parent_pid;"
#define DROP_SCHEMA_13 DROP_SCHEMA_14                                        \
    "ALTER TABLE locations DROP COLUMN process;"                             \
    "ALTER TABLE locations DROP COLUMN program;"
#define DROP_SCHEMA_12 DROP_SCHEMA_13 \
    "ALTER TABLE traces DROP COLUMN refused;"
#define DROP_SCHEMA_11 DROP_SCHEMA_12 "ALTER TABLE traces DROP COLUMN charged;"
#define DROP_SCHEMA_9 DROP_SCHEMA_11 \
    "DROP TRIGGER trace_ids_last; DROP TABLE trace_ids;" \
    "DROP TABLE trace_ids_given; DROP INDEX traces_seq;" \
    "ALTER TABLE traces DROP COLUMN seq;"

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
    finish_full(c, "k3", "seven too", 7, WEFT_STATE_COMPLETE, 1, 2, 0, 0,
                "n1", tags, 1);
    weft_catalog_close(c);
    assert_int_equal(raw_int(f->path, "SELECT seq FROM traces WHERE "
                             "key = 'k3'"), 3);
    assert_int_equal(weft_catalog_image(f->path, 0, 7, &bytes, &len, &msg),
                     0);
    assert_null(msg);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces"), 2);
    /* the order of uid 7's traces (seq 1 and 3 in the file), not a count
     * of uid 8's (#30) */
    assert_int_equal(image_int(bytes, len, "SELECT seq FROM traces WHERE "
                               "key = 'k3'"), 2);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces "
                               "WHERE name = 'seven' AND uid = 7"), 1);
    assert_int_equal(image_int(bytes, len, "SELECT (SELECT count(*) FROM "
                               "members) + (SELECT count(*) FROM tags) + "
                               "(SELECT count(*) FROM regions) + (SELECT "
                               "count(*) FROM locations)"), 2 * (3 + 1 + 5 + 2));
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
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM traces"), 3);
    assert_int_equal(image_int(bytes, len, "SELECT count(*) FROM regions"),
                     15);
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
    raw_exec(f->path, DROP_SCHEMA_9
             "ALTER TABLE traces DROP COLUMN joined;"
             "ALTER TABLE traces DROP COLUMN live_updated;"
             "ALTER TABLE traces DROP COLUMN clock;"
             "ALTER TABLE traces DROP COLUMN retry_at;"
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
    assert_int_equal(got.retry_at, 0);
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
        { 0, (char *)"node-a", 10, (char *)WEFT_MEMBER_COMPLETE, 2, 30, 0, 0 },
        { 2, (char *)"node-b", 12, (char *)WEFT_MEMBER_RECORDING, 1, 4, 0, 0 },
    };
    weft_location_row loc[3] = {
        { 0, 0, 0, (char *)"", 10, 0, NULL, NULL },
        { 1, 0, 1, (char *)"", 20, 0, NULL, NULL },
        { UINT64_C(2) << 32, 2, 0, (char *)"", 4, 0, NULL, NULL },
    };
    weft_live_figures v[3] = {
        { "k-rec", 2, 3, 34, 4096, mem, 2, loc, 3, 7 },
        { "k-conv", 1, 1, 10, 100, mem, 1, loc, 1, 0 },
        { "k-none", 1, 1, 10, 100, mem, 1, loc, 1, 0 },  /* no such row */
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
    assert_int_equal(got.refused, 7);  /* weftd's refusals, live */
    assert_int_equal(got.dropped, 7);
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

/* Random ids (#30) do not follow the order traces came in: traces of one
 * second are listed in that order all the same (seq), newest first, and
 * oldest first reversed. */
static void test_same_second_order(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_list_filter flt = { 0 };
    char want[128], rwant[128], key[16];
    int64_t id[5];
    size_t n = 0, r = 0;

    assert_int_equal(weft_catalog_set_sequential_ids(c, 0), 0);
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "s%d", i);
        id[i] = begin(c, key, "same", 500);
    }
    for (int i = 4; i >= 0; i--)
        n += (size_t)snprintf(want + n, sizeof want - n, "%s%lld",
                              n ? " " : "", (long long)id[i]);
    for (int i = 0; i < 5; i++)
        r += (size_t)snprintf(rwant + r, sizeof rwant - r, "%s%lld",
                              r ? " " : "", (long long)id[i]);
    assert_string_equal(ids_of(c, NULL), want);
    flt.reverse = 1;
    assert_string_equal(ids_of(c, &flt), rwant);
    weft_catalog_close(c);
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
static void sum_uid7(uint32_t uid, uint64_t bytes, void *arg)
{
    if (uid == 7)
        *(uint64_t *)arg = bytes;
}

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
    raw_exec(f->path, DROP_SCHEMA_9 "DROP TABLE io_files; DROP TABLE metrics;"
             "ALTER TABLE traces DROP COLUMN retry_at;"
             "PRAGMA user_version = 6;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM io_files"), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 0);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM messages"), 1);
    weft_catalog_close(c);
}

/* ---- schema 10: what a trace costs its owner's quota besides -------------- */

/* A version 9 catalog gets `charged`, 0 in its rows; a charge set on a
 * trace counts in its owner's bytes, and recording traces' bytes (their
 * journals, which weftd counts) do not. */
static void test_charged(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 };
    uint64_t total = 0;

    row.key = (char *)"k9";
    row.state = (char *)WEFT_STATE_COMPLETE;
    row.uid = 7;
    row.bytes = 1000;
    assert_int_equal(weft_catalog_trace_finish(c, &row, NULL, 0), 0);
    begin(c, "k-rec", "recording", 10);
    weft_catalog_close(c);
    raw_exec(f->path, DROP_SCHEMA_11 "PRAGMA user_version = 10;");
    raw_exec(f->path, "UPDATE traces SET bytes = 500, uid = 7 WHERE key = "
             "'k-rec';");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT sum(charged) FROM traces"), 0);
    assert_int_equal(weft_catalog_trace_charge(c, "k9", 4096), 0);
    assert_int_equal(weft_catalog_trace_charge(c, "nope", 1), WEFT_ENOTFOUND);
    assert_int_equal(weft_catalog_spool_bytes(c, &total, sum_uid7, &row.bytes),
                     0);
    assert_int_equal(total, 1500);       /* archives, journals: all */
    assert_int_equal(row.bytes, 5096);   /* uid 7's finished + charged */
    weft_catalog_close(c);
}

/* ---- schema 8: when weftd converts a failed trace again ------------------ */

/* A version 7 catalog gets retry_at, 0 (no retry) in its rows; a failed
 * row keeps its retry time, and a state change (converting again, or
 * removed) clears it. */
static void test_retry_at(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { 0 }, got;

    begin(c, "k7", "seven", 10);
    weft_catalog_close(c);
    raw_exec(f->path, DROP_SCHEMA_9 "ALTER TABLE traces DROP COLUMN retry_at;"
             "PRAGMA user_version = 7;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(weft_catalog_find(c, "k7", &got), 0);
    assert_int_equal(got.retry_at, 0);
    weft_catalog_trace_free(&got);

    row.key = (char *)"k7";
    row.name = (char *)"seven";
    row.state = (char *)WEFT_STATE_FAILED;
    row.error = (char *)"disk full";
    row.retry_at = 1800000000;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, NULL), 0);
    assert_int_equal(weft_catalog_find(c, "k7", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_FAILED);
    assert_int_equal(got.retry_at, 1800000000);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_trace_set_state(c, "k7",
                                                  WEFT_STATE_CONVERTING), 0);
    assert_int_equal(weft_catalog_find(c, "k7", &got), 0);
    assert_int_equal(got.retry_at, 0);
    weft_catalog_trace_free(&got);

    row.retry_at = 1800000000;
    assert_int_equal(weft_catalog_trace_fail(c, &row), 0);
    assert_int_equal(weft_catalog_find(c, "k7", &got), 0);
    assert_int_equal(got.retry_at, 1800000000);
    assert_int_equal(weft_catalog_trace_removed(c, got.id, "retention"), 0);
    weft_catalog_trace_free(&got);
    assert_int_equal(weft_catalog_find(c, "k7", &got), 0);
    assert_string_equal(got.state, WEFT_STATE_REMOVED);
    assert_int_equal(got.retry_at, 0);
    weft_catalog_trace_free(&got);

    row.state = (char *)WEFT_STATE_COMPLETE;
    row.error = NULL;
    row.retry_at = 0;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, NULL), 0);
    assert_int_equal(weft_catalog_find(c, "k7", &got), 0);
    assert_int_equal(got.retry_at, 0);
    weft_catalog_trace_free(&got);
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

/* ---- schema 13: the processes of a process tree (#32) ------------------ */

static int seen_process(const weft_location_row *l, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%u [%s] [%s]", l->rank,
             l->process, l->program);
    return 0;
}

/* The profile of trace 1 per program into s: how many rows. */
static size_t programs(weft_catalog *c, enum weft_region_sort sort,
                       int64_t limit, seen *s)
{
    memset(s, 0, sizeof *s);
    assert_int_equal(weft_catalog_regions(c, 1, WEFT_RGROUP_PROGRAM, sort,
                                          limit, seen_region, s), 0);
    return s->n;
}

/* Location rows keep their process and program; the profile summed per
 * program adds the rows of its locations ("-": none), each program's in
 * order with its own total and limit; a version 12 catalog gets the
 * columns, "" in its rows. */
static void test_tree_programs(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_location_row locs[4] = {
        { 0, 0, 0, (char *)"Master thread", 1, 0, (char *)"make (pid 100)",
          (char *)"make" },
        { 1ull << 32, 1, 0, (char *)"Master thread", 1, 0,
          (char *)"cc1 (pid 101)", (char *)"cc1" },
        { 2ull << 32, 2, 0, (char *)"Master thread", 1, 0,
          (char *)"cc1 (pid 103)", (char *)"cc1" },
        { 3ull << 32, 3, 0, (char *)"Master thread", 1, 0, NULL, NULL },
    };
    /* cc1's two "parse" are one region (same paradigm), its "read" of
     * two paradigms two */
    weft_region_row reg[8] = {
        { 0, (char *)"main", 1, 1.0, 1.0, NULL, NULL, 0 },
        { 1ll << 32, (char *)"main", 1, 6.0, 2.0, NULL, NULL, 0 },
        { 1ll << 32, (char *)"parse", 2, 4.0, 3.0, (char *)"compiler", NULL,
          0 },
        { 2ll << 32, (char *)"main", 1, 2.0, 0.5, NULL, NULL, 0 },
        { 2ll << 32, (char *)"parse", 1, 1.0, 1.0, (char *)"compiler", NULL,
          0 },
        { 3ll << 32, (char *)"x", 1, 4.0, 4.0, NULL, NULL, 0 },
        { 1ll << 32, (char *)"read", 1, 0.25, 0.25, (char *)"io", NULL, 0 },
        { 2ll << 32, (char *)"read", 1, 0.25, 0.25, (char *)"compiler",
          NULL, 0 },
    };
    weft_trace_detail d = { .locations = locs, .nlocations = 4,
                            .regions = reg, .nregions = 8 };
    weft_trace_row row = { 0 };
    seen s = { 0 };

    row.key = (char *)"k-tree";
    row.state = (char *)WEFT_STATE_COMPLETE;
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    assert_int_equal(weft_catalog_locations(c, 1, seen_process, &s), 0);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.text[1], "1 [cc1 (pid 101)] [cc1]");
    assert_string_equal(s.text[3], "3 [] []");
    assert_int_equal(programs(c, WEFT_RSORT_EXCL, 0, &s), 6);
    assert_string_equal(s.text[0], "0 [-] x 1 4.000 4.000 / 4.000");
    assert_string_equal(s.text[1], "0 [cc1] parse 3 5.000 4.000 / 7.000 "
                        "paradigm compiler");
    assert_string_equal(s.text[2], "0 [cc1] main 2 8.000 2.500 / 7.000");
    assert_string_equal(s.text[3], "0 [cc1] read 1 0.250 0.250 / 7.000 "
                        "paradigm compiler");
    assert_string_equal(s.text[4], "0 [cc1] read 1 0.250 0.250 / 7.000 "
                        "paradigm io");
    assert_string_equal(s.text[5], "0 [make] main 1 1.000 1.000 / 1.000");
    assert_int_equal(programs(c, WEFT_RSORT_NAME, 1, &s), 3);
    assert_string_equal(s.text[1], "0 [cc1] main 2 8.000 2.500 / 7.000");
    assert_int_equal(weft_catalog_regions(c, 1, (enum weft_region_group)7,
                                          WEFT_RSORT_EXCL, 0, seen_region,
                                          &s), WEFT_EINVAL);
    weft_catalog_close(c);
    raw_exec(f->path, DROP_SCHEMA_13 "PRAGMA user_version = 12;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_locations(c, 1, seen_process, &s), 0);
    assert_string_equal(s.text[1], "1 [] []");
    weft_catalog_close(c);
}

/* Schema 14: a member's parent; a catalog of 13 reads 0 for its members. */
static void test_migrate_members_parent(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_trace_row row = { .key = (char *)"p", .name = (char *)"p",
                           .state = (char *)WEFT_STATE_COMPLETE,
                           .members = 2 };
    weft_member_row mem[2] = {
        { 0, (char *)"h", 10, (char *)WEFT_MEMBER_COMPLETE, 0, 0, 0, 7 },
        { 1, (char *)"h", 11, (char *)WEFT_MEMBER_COMPLETE, 0, 0, 0, 10 },
    };
    weft_trace_detail d = { .members = mem, .nmembers = 2 };
    seen s;

    assert_int_equal(weft_catalog_trace_begin(c, &row), 0);
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_members(c, row.id, seen_member, &s), 0);
    assert_string_equal(s.text[0], "0 h 10 complete 0 0 0 parent 7");
    assert_string_equal(s.text[1], "1 h 11 complete 0 0 0 parent 10");
    weft_catalog_close(c);
    raw_exec(f->path, DROP_SCHEMA_14 "PRAGMA user_version = 13;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_members(c, row.id, seen_member, &s), 0);
    assert_string_equal(s.text[1], "1 h 11 complete 0 0 0");
    weft_catalog_close(c);
}

/* Schema 15 (issue #35): a profile row's paradigm; a catalog of 14
 * reads '' for its rows, and stores paradigms from then on. */
static void test_migrate_regions_paradigm(void **state)
{
    fixture *f = *state;
    weft_catalog *c = open_ok(f->path, 0);
    weft_region_row reg[2] = {
        { WEFT_PROFILE_ALL, (char *)"MPI_Send", 4, 1.0, 1.0, (char *)"mpi",
          NULL, 0 },
        { 0, (char *)"MPI_Send", 4, 1.0, 1.0, (char *)"mpi", NULL, 0 },
    };
    weft_trace_detail d = { .regions = reg, .nregions = 2 };
    weft_trace_row row = { .key = (char *)"old", .name = (char *)"old",
                           .state = (char *)WEFT_STATE_COMPLETE };
    seen s;

    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    weft_catalog_close(c);
    raw_exec(f->path, DROP_SCHEMA_15 "PRAGMA user_version = 14;");
    c = open_ok(f->path, 0);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     WEFT_CATALOG_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM regions WHERE "
                             "paradigm = ''"), 2);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, 1, WEFT_RGROUP_LOCATION,
                                          WEFT_RSORT_EXCL, 0, seen_region,
                                          &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.text[0], "0 [] MPI_Send 4 1.000 1.000 / 1.000");
    row.key = (char *)"new";
    row.name = (char *)"new";
    assert_int_equal(weft_catalog_trace_finish_detail(c, &row, &d), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(weft_catalog_regions(c, 2, WEFT_RGROUP_ALL,
                                          WEFT_RSORT_EXCL, 0, seen_region,
                                          &s), 0);
    assert_string_equal(s.text[0], "-1 [] MPI_Send 4 1.000 1.000 / 1.000 "
                        "paradigm mpi");
    weft_catalog_close(c);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_image_of_one_user),
        T(test_image_errors),
        T(test_query_filters),
        T(test_same_second_order),
        T(test_readme_query),
        T(test_trace_fail),
        T(test_verify),
        T(test_migrate_from_v6),
        T(test_retry_at),
        T(test_charged),
        T(test_io_metrics_round_trip),
        T(test_migrate_from_v3),
        T(test_migrate_members_parent),
        T(test_migrate_regions_paradigm),
        T(test_live_figures),
        T(test_report_round_trip),
        T(test_tree_programs),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
