/* catalog_util.c - what the catalog tests share (test_catalog.c,
 * test_catalog_open.c, test_catalog_query.c): a scratch directory per
 * test, raw SQL beside the catalog's, callbacks that collect rows, and
 * traces stored with every detail.
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

int setup(void **state)
{
    return tu_scratch_setup(state, "weft-test-catalog", "catalog.db");
}

int teardown(void **state)
{
    return tu_scratch_teardown(state);
}

weft_catalog *open_ok(const char *path, int readonly)
{
    weft_catalog *c = NULL;
    char *msg = NULL;
    int rc = weft_catalog_open(path, readonly, &c, &msg);

    if (rc != 0)
        fail_msg("open %s: %s (%s)", path, weft_strerror(rc), msg);
    assert_null(msg);
    assert_non_null(c);
    /* The tests name the traces they made by id: 1, 2, 3 ... */
    if (!readonly)
        assert_int_equal(weft_catalog_set_sequential_ids(c, 1), 0);
    return c;
}

/* Runs one SQL statement on the file directly (no catalog code). */
void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
}

int64_t raw_int(const char *path, const char *sql)
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

void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->names[i]);
        free(c->states[i]);
    }
    memset(c, 0, sizeof *c);
}

int collect_trace(const weft_trace_row *row, void *arg)
{
    collected *c = arg;

    assert_true(c->n < MAXROWS);
    c->ids[c->n] = row->id;
    c->names[c->n] = strdup(row->name);
    c->states[c->n] = strdup(row->state);
    c->n++;
    return c->stop_after && (int)c->n >= c->stop_after ? 7 : 0;
}

int collect_location(const weft_location_row *row, void *arg)
{
    collected *c = arg;

    assert_true(c->n < MAXROWS);
    c->locids[c->n] = row->id;
    c->events[c->n] = row->events;
    c->names[c->n] = strdup(row->name);
    c->n++;
    return 0;
}

int64_t begin(weft_catalog *c, const char *key, const char *name,
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

int seen_member(const weft_member_row *m, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%u %s %u %s %llu %llu "
             "%llu%s%.0u", m->rank, m->host, m->pid, m->state,
             (unsigned long long)m->locations, (unsigned long long)m->events,
             (unsigned long long)m->dropped, m->parent_pid ? " parent " : "",
             m->parent_pid);
    return 0;
}

int seen_tag(const weft_tag *t, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%s=%s", t->key, t->value);
    return 0;
}

int seen_region(const weft_region_row *r, void *arg)
{
    seen *s = arg;

    assert_true(s->n < 16);
    snprintf(s->text[s->n++], sizeof s->text[0], "%lld [%s] %s %llu %.3f "
             "%.3f / %.3f%s%s", (long long)r->location, r->location_name,
             r->region, (unsigned long long)r->visits, r->incl_s, r->excl_s,
             r->total_excl_s, *r->paradigm ? " paradigm " : "", r->paradigm);
    return 0;
}

/* Stores trace `key` with figures, hosts, members, tags and regions. */
void finish_full(weft_catalog *c, const char *key, const char *name,
                 uint32_t uid, const char *state, int64_t created,
                 int64_t finished, uint64_t events, uint64_t bytes,
                 const char *hosts, const weft_tag *tags, size_t ntags)
{
    weft_trace_row row = { 0 };
    weft_location_row locs[2] = {
        { 0, 0, 0, (char *)"Master thread", 3, 0, NULL, NULL },
        { 1ull << 32, 1, 0, (char *)"Master thread", 2, 1, NULL, NULL },
    };
    weft_member_row mem[3] = {
        { 0, (char *)"n1", 11, (char *)WEFT_MEMBER_COMPLETE, 1, 3, 0, 0 },
        { 1, (char *)"n2", 12, (char *)WEFT_MEMBER_COMPLETE, 1, 2, 1, 11 },
        { 2, (char *)"", 0, (char *)WEFT_MEMBER_MISSING, 0, 0, 0, 0 },
    };
    /* main's paradigm is "" (NULL), as a profile stored before schema
     * 15 has it */
    weft_region_row reg[5] = {
        { WEFT_PROFILE_ALL, (char *)"main", 2, 4.0, 1.0, NULL, NULL, 0 },
        { WEFT_PROFILE_ALL, (char *)ODD, 3, 3.0, 3.0, (char *)"mpi", NULL,
          0 },
        { 0, (char *)"main", 1, 2.0, 0.5, NULL, NULL, 0 },
        { 0, (char *)ODD, 1, 1.5, 1.5, (char *)"mpi", NULL, 0 },
        { 1ll << 32, (char *)"main", 1, 2.0, 0.5, NULL, NULL, 0 },
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

