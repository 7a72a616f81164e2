/* test_live.c - the live figures of recording traces (daemon/traces/live.c), on
 * a private loop with a scratch spool and catalog; no sockets.
 *
 * weft_live_tick writes what a recording trace received so far (members
 * joined, locations that sent events, events, journal bytes, member and
 * location rows) with one worker job; it waits live_interval between
 * jobs, skips traces whose figures did not change, does nothing with
 * live_interval 0, and never overwrites the conversion's final row,
 * whichever job runs last. Each test ends with uv_loop_close() succeeding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "daemon_fixture.h"
#include "journal.h"
#include "live.h"
#include "testutil.h"
#include "trace.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

static int setup(void **state)
{
    fixture *f = daemon_setup(state, "wtlive");

    f->d.cfg.max_members = 8;
    return 0;
}

/* What ingest does for a batch of 2 events on thread loc (journal and
 * counters); t0 is the batch's time. */
static void record(fixture *f, weft_member *m, uint32_t loc, uint64_t t0)
{
    weft_record defs[] = { str(0, "work"), region(0, 0, 1) };
    weft_record evs[] = { enter(t0, 0, 0), enter(t0 + 10, 0, 1) };
    weft_journal_entry e = { 0 };
    bytes b = encode(evs, 2, 1, t0);

    if (m->in.defs_seq == 0) {
        bytes d = encode(defs, 2, 0, 0);
        e.kind = WEFT_JE_DEFS;
        e.seq = m->in.defs_seq = m->in.held_defs_seq = 1;
        e.payload = d.p;
        e.len = (uint32_t)d.n;
        assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
        free(d.p);
        memset(&e, 0, sizeof e);
    }
    assert_int_equal(weft_memberin_location(&m->in, loc, f->err,
                                            sizeof f->err), 0);
    e.kind = WEFT_JE_EVENTS;
    e.location = loc;
    e.seq = ++m->in.locs[loc].last_seq;
    e.base_time = t0;
    e.count = 2;
    e.payload = b.p;
    e.len = (uint32_t)b.n;
    assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
    m->in.locs[loc].held_seq = e.seq;
    m->in.locs[loc].last_time = m->in.locs[loc].held_time = t0 + 10;
    m->in.locs[loc].events += 2;
    free(b.p);
}

static void run_jobs(fixture *f)
{
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(f->d.jobs, 0);
    assert_int_equal(f->d.live->running, 0);
}

/* As if live_interval had passed since the last job. */
static void tick_due(fixture *f)
{
    f->d.live->queued = 0;
    weft_live_tick(&f->d);
}

static void row_of(fixture *f, const char *key, weft_trace_row *row)
{
    assert_int_equal(catalog_row(f, key, row), 0);
}

typedef struct rows {
    size_t n;
    char text[8][96];
} rows;

static int member_text(const weft_member_row *m, void *arg)
{
    rows *r = arg;

    assert_true(r->n < 8);
    snprintf(r->text[r->n++], sizeof r->text[0], "%u %s %u %s %lu %lu",
             m->rank, m->host, m->pid, m->state, (unsigned long)m->locations,
             (unsigned long)m->events);
    return 0;
}

static int location_text(const weft_location_row *l, void *arg)
{
    rows *r = arg;

    assert_true(r->n < 8);
    snprintf(r->text[r->n++], sizeof r->text[0], "%llu %u %u '%s' %lu",
             (unsigned long long)l->id, l->rank, l->thread, l->name,
             (unsigned long)l->events);
    return 0;
}

static uint64_t file_size(const char *dir, const char *name)
{
    char path[1200];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_figures_so_far(void **state)
{
    fixture *f = *state;
    weft_member *m0 = join_ok(f, "t", 0, 3), *m2 = join_ok(f, "t", 2, 3);
    weft_catalog *cat;
    weft_trace_row row;
    rows mr = { 0 }, lr = { 0 };
    char key[256];

    snprintf(key, sizeof key, "%s", m0->trace->key);
    record(f, m0, 0, 100);
    record(f, m0, 0, 200);
    record(f, m0, 3, 100);   /* threads 1 and 2 sent nothing */
    record(f, m2, 0, 100);
    leave(m2, 1);
    run_jobs(f);             /* the row of the first Hello */
    row_of(f, key, &row);
    assert_int_equal(row.live_updated, 0);
    assert_int_equal(row.events, 0);
    weft_catalog_trace_free(&row);

    weft_live_tick(&f->d);
    assert_int_equal(f->d.live->running, 1);
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    row_of(f, key, &row);
    assert_string_equal(row.state, WEFT_STATE_RECORDING);
    assert_int_equal(row.members, 3);
    assert_int_equal(row.joined, 2);
    assert_int_equal(row.locations, 3);
    assert_int_equal(row.events, 8);
    assert_int_equal(row.bytes, file_size(m0->trace->dir, "rank-0.wj") +
                                file_size(m0->trace->dir, "rank-2.wj"));
    assert_true(row.live_updated > 0);
    cat = catalog_ro(f);
    assert_int_equal(weft_catalog_members(cat, row.id, member_text, &mr), 0);
    assert_int_equal(weft_catalog_locations(cat, row.id, location_text, &lr),
                     0);
    weft_catalog_close(cat);
    assert_int_equal(mr.n, 2);
    assert_string_equal(mr.text[0], "0 node-a 4000 recording 2 6");
    assert_string_equal(mr.text[1], "2 node-a 4002 complete 1 2");
    assert_int_equal(lr.n, 3);
    assert_string_equal(lr.text[0], "0 0 0 '' 4");
    assert_string_equal(lr.text[1], "3 0 3 '' 2");
    assert_string_equal(lr.text[2], "8589934592 2 0 '' 2");
    weft_catalog_trace_free(&row);
    finish(f);
}

static void test_interval_and_changes(void **state)
{
    fixture *f = *state;
    weft_member *m = join_ok(f, "t", 0, 2);
    weft_trace_row row;
    char key[256];
    int64_t first;

    snprintf(key, sizeof key, "%s", m->trace->key);
    record(f, m, 0, 100);
    run_jobs(f);
    weft_live_tick(&f->d);
    run_jobs(f);
    row_of(f, key, &row);
    assert_int_equal(row.events, 2);
    first = row.live_updated;
    weft_catalog_trace_free(&row);

    /* New events, but live_interval (2 s) has not passed. */
    record(f, m, 0, 200);
    weft_live_tick(&f->d);
    assert_int_equal(f->d.jobs, 0);
    /* It has: written. */
    tick_due(f);
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    row_of(f, key, &row);
    assert_int_equal(row.events, 4);
    assert_true(row.live_updated >= first);
    weft_catalog_trace_free(&row);
    /* Nothing changed: no job at all. */
    tick_due(f);
    assert_int_equal(f->d.jobs, 0);
    assert_int_equal(f->d.live->running, 0);
    /* A member joining is a change. */
    join_ok(f, "t", 1, 2);
    tick_due(f);
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    row_of(f, key, &row);
    assert_int_equal(row.joined, 2);
    weft_catalog_trace_free(&row);
    finish(f);
}

static void test_interval_zero(void **state)
{
    fixture *f = *state;
    weft_member *m = join_ok(f, "t", 0, 2);
    weft_trace_row row;
    char key[256];

    snprintf(key, sizeof key, "%s", m->trace->key);
    f->d.cfg.live_interval = 0;
    record(f, m, 0, 100);
    run_jobs(f);
    tick_due(f);
    assert_int_equal(f->d.jobs, 0);
    row_of(f, key, &row);
    assert_int_equal(row.events, 0);
    assert_int_equal(row.live_updated, 0);
    weft_catalog_trace_free(&row);
    finish(f);
}

/* The live job ran before the trace's row was there (its begin job is
 * another worker job): the figures go again at the next chance, although
 * they did not change. */
static void test_row_not_there_yet(void **state)
{
    fixture *f = *state;
    weft_member *m = join_ok(f, "t", 0, 2);
    weft_trace_row row = { 0 };
    weft_catalog *cat = NULL;
    char *msg = NULL;
    char key[256];

    snprintf(key, sizeof key, "%s", m->trace->key);
    record(f, m, 0, 100);
    run_jobs(f);
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 0, &cat, &msg), 0);
    row_of(f, key, &row);
    assert_int_equal(weft_catalog_trace_delete(cat, row.id), 0);
    weft_catalog_trace_free(&row);
    tick_due(f);
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    assert_int_equal(m->trace->live.written, 0);
    row.key = key;
    row.name = (char *)"t";
    assert_int_equal(weft_catalog_trace_begin(cat, &row), 0);
    weft_catalog_close(cat);
    tick_due(f);
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    memset(&row, 0, sizeof row);
    row_of(f, key, &row);
    assert_int_equal(row.events, 2);
    assert_int_equal(row.joined, 1);
    weft_catalog_trace_free(&row);
    finish(f);
}

/* A live job queued just before the trace converts: whichever of the two
 * commits last, the catalog ends with the final figures. */
static void test_final_row_wins(void **state)
{
    fixture *f = *state;

    for (int round = 0; round < 8; round++) {
        char name[32], key[256];
        weft_member *m;
        weft_trace_row row;
        snprintf(name, sizeof name, "race-%d", round);
        m = join_ok(f, name, 0, 1);
        snprintf(key, sizeof key, "%s", m->trace->key);
        record(f, m, 0, 100);
        record(f, m, 0, 200);
        run_jobs(f);
        tick_due(f);
        assert_int_equal(f->d.live->running, 1);
        leave(m, 1);         /* conversion queued beside the live job */
        run_jobs(f);
        row_of(f, key, &row);
        assert_string_equal(row.state, WEFT_STATE_COMPLETE);
        assert_int_equal(row.events, 4);
        assert_int_equal(row.live_updated, 0);
        assert_true(row.bytes > 0);
        weft_catalog_trace_free(&row);
    }
    finish(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_figures_so_far, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_interval_and_changes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_interval_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_final_row_wins, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_row_not_there_yet, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
