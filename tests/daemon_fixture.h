/* daemon_fixture.h - an in-process weftd for the cmocka tests of the
 * daemon (test_server, test_trace, test_live): a weft_daemon on a private
 * libuv loop, with its spool and catalog in a scratch directory under
 * $TMPDIR; members joining and leaving traces as on_hello and a closing
 * connection do; the catalog row of a trace read back.
 *
 * The loop is either run by the test itself (finish() closes it) or, in
 * test_server, by a thread of its own that the test starts and stops
 * through the uv_async_t `stop`. Header-only like testutil.h (include
 * both, after cmocka.h); each test's setup calls daemon_setup, adjusts
 * d.cfg and has teardown() as its teardown.
 */
#ifndef WEFT_DAEMON_FIXTURE_H
#define WEFT_DAEMON_FIXTURE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "catalog.h"
#include "journal.h"
#include "retain.h"
#include "testutil.h"
#include "trace.h"
#include "weft.pb-c.h"

/* Stands for a live connection: trace.c only compares it with NULL. */
#define CONNECTED ((struct weft_conn *)(uintptr_t)0x1)

typedef struct fixture {
    char *dir;        /* scratch directory, removed by teardown */
    uv_loop_t loop;
    weft_daemon d;    /* spool dir/spool, catalog dir/spool/catalog.db */
    int closed;       /* uv_loop_close done */
    char err[512];    /* the message of the last join */
    /* The loop on a thread of its own (test_server): */
    pthread_t thread;
    int running;      /* the loop thread was started and not joined */
    uv_async_t stop;  /* makes the loop thread stop the daemon */
    uv_async_t drain; /* SIGTERM's weft_server_drain */
    uv_timer_t tick;  /* weft_server_tick every 100 ms (idle_timeout) */
    int ticking;
    int port;         /* where the daemon listens */
} fixture;

/* ---- the daemon ---------------------------------------------------------- */

/* A fixture in *state: a scratch directory TAG.XXXXXX, an initialised
 * loop and a daemon with the default configuration but for its spool,
 * catalog and log level (debug with WEFT_TEST_LOG set, else quiet).
 * Returns it for the test's setup to adjust. */
static inline fixture *daemon_setup(void **state, const char *tag)
{
    fixture *f = calloc(1, sizeof *f);
    weft_config *c;

    assert_non_null(f);
    assert_int_equal(weft_daemon_init(&f->d), 0);
    f->dir = tu_tmpdir(tag);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    f->d.loop = &f->loop;
    c = &f->d.cfg;
    weft_config_init(c);
    c->log_level = getenv("WEFT_TEST_LOG") ? 3 : 0;
    /* The clients of these tests say Hello without MUNGE (no munged
     * here); test_server sets auth = munge where it tests the refusal,
     * and tests/e2e_auth.sh runs the real thing. */
    c->auth = WEFT_AUTH_NONE;
    free(c->spool);
    c->spool = tu_path(f->dir, "spool");
    free(c->catalog);
    c->catalog = tu_path(c->spool, "catalog.db");
    *state = f;
    return f;
}

/* Frees what is still recording, lets the worker jobs finish and closes
 * the loop, which must have nothing left open. */
static inline void finish(fixture *f)
{
    weft_trace_free_all(&f->d);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->d.jobs, 0);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* The cmocka teardown. A test that failed half-way may leave the loop
 * thread running or the loop open: both end here, without assertions. */
static inline int teardown(void **state)
{
    fixture *f = *state;

    if (f->running) {
        uv_async_send(&f->stop);
        pthread_join(f->thread, NULL);
    }
    if (!f->closed) {
        weft_trace_free_all(&f->d);
        uv_run(&f->loop, UV_RUN_DEFAULT);
        uv_loop_close(&f->loop);
    }
    weft_daemon_free(&f->d);
    weft_config_free(&f->d.cfg);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* ---- members ------------------------------------------------------------- */

/* The Hello of rank of a trace of size members on host node-a. */
static inline Weft__Hello hello(const char *name, uint32_t rank,
                                uint32_t size)
{
    Weft__Hello h = WEFT__HELLO__INIT;

    h.protocol_version = 1;
    h.trace = (char *)name;
    h.rank = rank;
    h.size = size;
    h.hostname = (char *)"node-a";
    h.pid = 4000 + rank;
    h.timer_resolution = 1000000000;
    h.realtime_ns = 1700000000000000000ull;
    h.clock_at_realtime = 0;
    return h;
}

/* weft_trace_join for owner uid; its message, if any, in f->err. */
static inline int join(fixture *f, const Weft__Hello *h, uint32_t uid,
                       weft_member **m)
{
    f->err[0] = 0;
    *m = NULL;
    return weft_trace_join(&f->d, h, uid, m, f->err, sizeof f->err);
}

/* Joins like on_hello does: the member gets its connection and its
 * journal the Hello. run NULL: a Hello without one (an older client). */
static inline weft_member *join_run_ok(fixture *f, const char *name,
                                       const char *run, uint32_t uid,
                                       uint32_t rank, uint32_t size)
{
    Weft__Hello h = hello(name, rank, size);
    weft_journal_entry e = { 0 };
    uint8_t *buf;
    weft_member *m;
    int rc;

    if (run)
        h.run = (char *)run;
    buf = malloc(weft__hello__get_packed_size(&h));
    rc = join(f, &h, uid, &m);

    if (rc != 0)
        print_error("join: %s\n", f->err);
    assert_int_equal(rc, 0);
    assert_non_null(m);
    assert_null(m->in.conn);
    m->in.conn = CONNECTED;
    assert_non_null(buf);
    e.kind = WEFT_JE_HELLO;
    e.len = (uint32_t)weft__hello__pack(&h, buf);
    e.payload = buf;
    assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
    free(buf);
    return m;
}

/* join_run_ok for owner 1000 without a run. */
static inline weft_member *join_ok(fixture *f, const char *name,
                                   uint32_t rank, uint32_t size)
{
    return join_run_ok(f, name, NULL, 1000, rank, size);
}

/* The connection of m closes, after a Goodbye (journaled) or not. */
static inline void leave(weft_member *m, int goodbye)
{
    if (goodbye) {
        Weft__Goodbye g = WEFT__GOODBYE__INIT;
        weft_journal_entry e = { 0 };
        uint8_t buf[16];
        e.kind = WEFT_JE_GOODBYE;
        e.len = (uint32_t)weft__goodbye__pack(&g, buf);
        e.payload = buf;
        assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
        m->in.said_goodbye = 1;
    }
    m->in.conn = NULL;
    weft_trace_member_left(&m->in);
}

/* ---- the catalog --------------------------------------------------------- */

/* The daemon's catalog opened read-only; the caller closes it. */
static inline weft_catalog *catalog_ro(fixture *f)
{
    weft_catalog *cat = NULL;
    char *msg = NULL;
    int rc = weft_catalog_open(f->d.cfg.catalog, 1, &cat, &msg);

    if (rc < 0)
        print_error("catalog: %s\n", msg ? msg : "?");
    assert_int_equal(rc, 0);
    return cat;
}

/* The catalog row of a trace (by key); 0 or WEFT_ENOTFOUND. */
static inline int catalog_row(fixture *f, const char *key,
                              weft_trace_row *row)
{
    weft_catalog *cat = catalog_ro(f);
    int rc = weft_catalog_find(cat, key, row);

    weft_catalog_close(cat);
    return rc;
}

#endif
