/* test_jcache.c - which member journals hold a file descriptor
 * (daemon/ingest/jcache.c) and parked journals (journal.c).
 *
 * Beyond max_open_journals the least recently used idle journals are
 * parked, never one with entries in flight or an fdatasync due; a
 * disconnected member's journal is parked once idle; a parked journal
 * takes appends again (reopened) and keeps every entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcache.h"
#include "journal.h"
#include "tmpdir.h"
#include "memberin.h"
#include "server.h"

enum { N = 20, MAX = 16 };

typedef struct jfix {
    char *dir;
    weft_daemon d;
    weft_memberin m[N];   /* members' ingest state */
} jfix;

static int setup(void **state)
{
    jfix *f = calloc(1, sizeof *f);

    assert_non_null(f);
    assert_int_equal(weft_daemon_init(&f->d), 0);
    f->dir = tu_tmpdir("jcache");
    f->d.cfg.max_open_journals = MAX;
    for (int i = 0; i < N; i++) {
        char name[32];
        char *path;
        weft_memberin *m = &f->m[i];
        m->d = &f->d;
        m->conn = (struct weft_conn *)1; /* connected; never used here */
        snprintf(name, sizeof name, "rank-%d.wj", i);
        path = tu_path(f->dir, name);
        assert_int_equal(weft_journal_open(path, &m->journal, NULL), 0);
        free(path);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    jfix *f = *state;

    for (int i = 0; i < N; i++) {
        weft_jcache_forget(&f->m[i]);
        weft_journal_close(f->m[i].journal);
    }
    assert_null(f->d.srv->jcache); /* gone with its last member */
    weft_daemon_free(&f->d);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static int open_count(const jfix *f)
{
    int n = 0;

    for (int i = 0; i < N; i++)
        n += weft_journal_is_open(f->m[i].journal);
    return n;
}

/* The least recently used idle ones go first; busy ones stay. */
static void test_lru(void **state)
{
    jfix *f = *state;

    for (int i = 0; i < N; i++)
        weft_jcache_use(&f->m[i]);
    assert_int_equal(weft_jcache_open(&f->d), MAX);
    assert_int_equal(open_count(f), MAX);
    for (int i = 0; i < N - MAX; i++)
        assert_false(weft_journal_is_open(f->m[i].journal));
    /* m[4] (now the least recently used) has an entry in flight, m[5]
     * an fdatasync running, m[6] acks waiting for one: kept. */
    f->m[4].pending = 1;
    f->m[5].sync_running = 1;
    f->m[6].waiting.n = 1;
    weft_jcache_use(&f->m[0]);
    assert_int_equal(weft_jcache_open(&f->d), MAX);
    assert_true(weft_journal_is_open(f->m[4].journal));
    assert_true(weft_journal_is_open(f->m[5].journal));
    assert_true(weft_journal_is_open(f->m[6].journal));
    assert_false(weft_journal_is_open(f->m[7].journal));
    f->m[4].pending = 0;
    f->m[5].sync_running = 0;
    f->m[6].waiting.n = 0;
}

/* Journals in use at the list's tail go to its front, and a use parks
 * at most a few idle ones (a job's thousands of processes joining at
 * once: each use does not walk them all); the idle ones beyond the
 * limit are all parked after a few uses. */
static void test_busy_tail(void **state)
{
    jfix *f = *state;

    f->d.cfg.max_open_journals = 2;
    for (int i = 0; i < 12; i++) {
        f->m[i].pending = 1;  /* its Hello being written */
        weft_jcache_use(&f->m[i]);
    }
    for (int i = 12; i < N; i++)
        weft_jcache_use(&f->m[i]);
    /* the 12 in use, and the last used (the idle ones before it were
     * parked as those in use went to the front) */
    for (int i = 0; i < 12; i++)
        assert_true(weft_journal_is_open(f->m[i].journal));
    assert_int_equal(weft_jcache_open(&f->d), 13);
    assert_true(weft_journal_is_open(f->m[N - 1].journal));
    for (int i = 0; i < 12; i++)
        f->m[i].pending = 0;
    weft_jcache_use(&f->m[0]);  /* parks 8 of the 12 now idle */
    assert_int_equal(weft_jcache_open(&f->d), 5);
    weft_jcache_use(&f->m[0]);
    assert_int_equal(weft_jcache_open(&f->d), 2);
    assert_int_equal(open_count(f), 2);
    assert_true(weft_journal_is_open(f->m[0].journal));
}

/* A member without a connection is parked once idle, not before. */
static void test_idle(void **state)
{
    jfix *f = *state;
    weft_memberin *m = &f->m[0];

    weft_jcache_use(m);
    m->pending = 1;
    m->conn = NULL;
    weft_jcache_idle(m);
    assert_int_equal(weft_jcache_open(&f->d), 1);
    m->pending = 0;
    weft_jcache_idle(m);
    assert_int_equal(weft_jcache_open(&f->d), 0);
    assert_null(f->d.srv->jcache);
    assert_false(weft_journal_is_open(m->journal));
    /* connected: stays open */
    f->m[1].conn = (struct weft_conn *)1;
    weft_jcache_use(&f->m[1]);
    weft_jcache_idle(&f->m[1]);
    assert_int_equal(weft_jcache_open(&f->d), 1);
}

/* A parked journal is reopened by its next append; every entry is
 * there, in order. */
static void test_park_append(void **state)
{
    jfix *f = *state;
    weft_journal *j = f->m[0].journal;
    weft_journal_reader *r = NULL;
    weft_journal_entry e = { 0 }, got;
    char name[32], *path;
    uint64_t size;

    e.kind = WEFT_JE_DEFS;
    e.payload = (const uint8_t *)"abc";
    e.len = 3;
    for (uint64_t s = 1; s <= 3; s++) {
        e.seq = s;
        assert_int_equal(weft_journal_append(j, &e), 0);
        weft_journal_park(j);
        assert_false(weft_journal_is_open(j));
    }
    assert_int_equal(weft_journal_sync(j), 0); /* reopens too */
    size = weft_journal_size(j);
    snprintf(name, sizeof name, "rank-0.wj");
    path = tu_path(f->dir, name);
    assert_int_equal(weft_journal_reader_open(path, &r), 0);
    for (uint64_t s = 1; s <= 3; s++) {
        assert_int_equal(weft_journal_reader_next(r, &got), 1);
        assert_int_equal(got.seq, s);
        assert_memory_equal(got.payload, "abc", 3);
    }
    assert_int_equal(weft_journal_reader_next(r, &got), 0);
    assert_int_equal(weft_journal_reader_offset(r), size);
    weft_journal_reader_close(r);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lru, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_park_append, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
