/* test_trace.c - traces and their members (daemon/traces/trace.c), on a private
 * loop with a scratch spool and catalog; no sockets.
 *
 * Joining creates a trace once (spool directory, one journal per rank, a
 * catalog row "recording"), with safe spool keys; bad Hellos (size
 * mismatch, rank out of range, empty or long name, size beyond
 * max_members, no clock) and a rank that is connected or finished are
 * refused with messages; a disconnected member resumes as itself. When
 * every member said goodbye the trace is converted on a worker thread,
 * catalogued "complete" and its journals deleted; a trace nobody is
 * connected to is converted "partial" once the grace period is over; a
 * conversion that fails is catalogued "failed" and keeps its journals.
 * Members are grouped by (owner, name, run), and a member of a run whose
 * trace has ended is refused. Traces finishing together are converted
 * at most max_conversions at a time, the others queued, all complete
 * (also when a reload lowers the bound). A process tree's members get
 * their ranks from weftd, up to max_members, and the tree waits for the
 * processes its members named (a child left running, an exec) until
 * they join, end, or abort_grace_period passed. Each test ends with
 * uv_loop_close() succeeding.
 */
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "daemon_fixture.h"
#include "frame.h"
#include "journal.h"
#include "procwatch.h"
#include "testutil.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft.pb-c.h"
#include "weft_errors.h"
#include "worker.h"

static int setup(void **state)
{
    fixture *f = daemon_setup(state, "wttest");

    f->d.cfg.max_members = 8;
    return 0;
}

/* A batch of Enter/Leave on thread 0 (the member defines region 0). */
static void record(weft_member *m, uint64_t t0)
{
    weft_record defs[] = { str(0, "work"), region(0, 0, 1) };
    weft_record evs[] = { enter(t0, 0, 0), enter(t0 + 10, 0, 1) };
    weft_journal_entry e = { 0 };
    bytes d = encode(defs, 2, 0, 0), b = encode(evs, 2, 1, t0);

    e.kind = WEFT_JE_DEFS;
    e.seq = 1;
    e.payload = d.p;
    e.len = (uint32_t)d.n;
    assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
    memset(&e, 0, sizeof e);
    e.kind = WEFT_JE_EVENTS;
    e.seq = 1;
    e.base_time = t0;
    e.count = 2;
    e.payload = b.p;
    e.len = (uint32_t)b.n;
    assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
    free(d.p);
    free(b.p);
}

/* Runs the loop until the worker jobs (catalog, conversion) are done. */
static void run_jobs(fixture *f)
{
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(f->d.jobs, 0);
}

static int exists(const char *dir, const char *name)
{
    char path[1200];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static size_t ntraces(const fixture *f)
{
    return weft_trace_count(&f->d, WEFT_TRACE_RECORDING);
}

/* ---- joining ------------------------------------------------------------- */

static void test_join_creates_trace_once(void **state)
{
    fixture *f = *state;
    weft_member *m0, *m1, *m2, *other;
    weft_trace_row row;
    weft_trace *t;
    char key[256];

    m0 = join_ok(f, "run", 0, 3);
    t = m0->trace;
    m2 = join_ok(f, "run", 2, 3);
    m1 = join_ok(f, "run", 1, 3);
    assert_ptr_equal(m1->trace, t);
    assert_ptr_equal(m2->trace, t);
    assert_int_equal(ntraces(f), 1);
    assert_ptr_equal(weft_trace_first(&f->d, WEFT_TRACE_RECORDING), t);
    assert_ptr_equal(weft_trace_member(t, 0), m0);
    assert_ptr_equal(weft_trace_member(t, 1), m1);
    assert_ptr_equal(weft_trace_member(t, 2), m2);
    assert_int_equal(m1->in.rank, 1);
    assert_int_equal(m2->in.pid, 4002);
    assert_string_equal(m2->in.host, "node-a");
    assert_int_equal(t->size, 3);
    assert_int_equal(t->joined, 3);
    assert_int_equal(t->connected, 3);
    assert_int_equal(t->idle_since, 0);
    assert_int_equal(t->uid, 1000);
    assert_string_equal(t->name, "run");
    assert_true(strncmp(t->key, "run-", 4) == 0);
    assert_non_null(strstr(t->dir, "/spool/traces/"));
    assert_true(exists(t->dir, "rank-0.wj"));
    assert_true(exists(t->dir, "rank-1.wj"));
    assert_true(exists(t->dir, "rank-2.wj"));
    assert_false(exists(t->dir, "rank-3.wj"));

    /* The catalog row is written by a worker job. */
    assert_int_equal(f->d.jobs, 1);
    snprintf(key, sizeof key, "%s", t->key);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_RECORDING);
    assert_string_equal(row.name, "run");
    assert_int_equal(row.members, 3);
    assert_int_equal(row.uid, 1000);
    weft_catalog_trace_free(&row);

    /* Another name, or the same name of another owner, is another trace
     * with another key. */
    other = join_ok(f, "run2", 0, 1);
    assert_ptr_not_equal(other->trace, t);
    {
        Weft__Hello h = hello("run", 0, 3);
        weft_member *m;
        assert_int_equal(join(f, &h, 1001, &m), 0);
        assert_ptr_not_equal(m->trace, t);
        assert_int_equal(m->trace->uid, 1001);
        assert_string_not_equal(m->trace->key, t->key);
    }
    assert_int_equal(ntraces(f), 3);
    finish(f);
}

static void test_spool_key_is_safe(void **state)
{
    fixture *f = *state;
    weft_member *m = join_ok(f, "../../etc/passwd x", 0, 1);
    weft_member *dots = join_ok(f, "..", 0, 1);
    char traces[256];

    assert_null(strchr(m->trace->key, '/'));
    assert_true(m->trace->key[0] != '.');
    assert_string_equal(m->trace->name, "../../etc/passwd x");
    assert_true(strncmp(m->trace->key, "_._.._etc_passwd_x-", 19) == 0);
    assert_true(dots->trace->key[0] != '.');
    snprintf(traces, sizeof traces, "%s/spool/traces/", f->dir);
    assert_true(strncmp(m->trace->dir, traces, strlen(traces)) == 0);
    assert_true(strncmp(dots->trace->dir, traces, strlen(traces)) == 0);
    finish(f);
}

static void test_join_errors(void **state)
{
    fixture *f = *state;
    weft_member *m, *m0;
    Weft__Hello h;
    char long_name[1026];

    /* Bad Hellos create no trace. */
    h = hello("", 0, 1);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "empty trace name");
    h = hello("t", 3, 3);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "rank 3 is not below the trace size 3");
    h = hello("t", 0, 0);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_ELIMIT);
    assert_err(f, "trace size 0 is not between 1 and max_members (8)");
    h = hello("t", 0, 9);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_ELIMIT);
    assert_err(f, "trace size 9");
    h = hello("t", 0, 1);
    h.timer_resolution = 0;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "timer_resolution is 0");
    h = hello("t", 0, 1);
    h.clock = (char *)"hpet";
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "Hello: clock 'hpet' is not monotonic or tsc");
    /* Every string of a Hello is bounded (proto/frame.h). */
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[WEFT_MAX_HOSTNAME + 1] = 0;
    h = hello("t", 0, 1);
    h.hostname = long_name;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "host name of 256 bytes exceeds 255");
    h = hello("t", 0, 1);
    h.job_id = long_name;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "job id of 256 bytes exceeds 255");
    {
        char *cmd = malloc(WEFT_MAX_COMMAND + 2);
        assert_non_null(cmd);
        memset(cmd, 'c', WEFT_MAX_COMMAND + 1);
        cmd[WEFT_MAX_COMMAND + 1] = 0;
        h = hello("t", 0, 1);
        h.command = cmd;
        assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
        assert_err(f, "command line of 4096 bytes exceeds 4095");
        free(cmd);
    }
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    h = hello(long_name, 0, 1);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "trace name of 1025 bytes exceeds 1024");
    assert_null(m);
    assert_int_equal(ntraces(f), 0);
    long_name[1024] = 0;
    join_ok(f, long_name, 0, 1);

    /* Against an existing trace. */
    m0 = join_ok(f, "t", 0, 3);
    h = hello("t", 1, 4);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_err(f, "trace 't' has 3 members but this process says 4");
    h = hello("t", 0, 3);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EEXIST);
    assert_err(f, "rank 0 of trace 't' is already connected (host node-a, "
               "pid 4000)");
    assert_int_equal(m0->trace->connected, 1);
    assert_int_equal(m0->trace->joined, 1);
    leave(m0, 1);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EEXIST);
    assert_err(f, "rank 0 of trace 't' has already finished");
    assert_int_equal(ntraces(f), 2);
    finish(f);
}

/* One user records at most max_traces_per_user traces at once; joining
 * one of them, and another user's traces, are not limited by it. */
static void test_max_traces_per_user(void **state)
{
    fixture *f = *state;
    weft_member *a, *b, *m;
    Weft__Hello h;

    f->d.cfg.max_traces_per_user = 2;
    a = join_ok(f, "t1", 0, 2);
    b = join_ok(f, "t2", 0, 1);
    h = hello("t3", 0, 1);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_ELIMIT);
    assert_err(f, "uid 1000 has 2 traces recording already: "
               "max_traces_per_user is 2");
    assert_int_equal(ntraces(f), 2);
    join_run_ok(f, "t3", NULL, 1001, 0, 1);
    join_ok(f, "t1", 1, 2);
    leave(b, 1); /* t2 ends: room for one more */
    (void)a;
    join_ok(f, "t4", 0, 1);
    finish(f);
}

static void test_spool_not_writable(void **state)
{
    fixture *f = *state;
    char path[256];
    weft_member *m, *m0;
    Weft__Hello h = hello("t", 0, 2);
    FILE *fp;

    /* The spool is a file. */
    snprintf(path, sizeof path, "%s/spool", f->dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EIO);
    assert_err(f, "cannot create trace directory");
    assert_err(f, path);
    assert_int_equal(ntraces(f), 0);
    assert_int_equal(f->d.jobs, 0);
    assert_int_equal(unlink(path), 0);

    /* A journal that cannot be opened: the rank is not taken. */
    m0 = join_ok(f, "t", 0, 2);
    snprintf(path, sizeof path, "%s/rank-1.wj", m0->trace->dir);
    assert_int_equal(mkdir(path, 0700), 0);
    h = hello("t", 1, 2);
    assert_true(join(f, &h, 1000, &m) < 0);
    assert_err(f, "cannot open journal");
    assert_err(f, path);
    assert_null(weft_trace_member(m0->trace, 1));
    assert_int_equal(m0->trace->joined, 1);
    assert_int_equal(m0->trace->connected, 1);
    assert_int_equal(rmdir(path), 0);
    join_ok(f, "t", 1, 2);
    assert_int_equal(m0->trace->joined, 2);
    finish(f);
}

/* The first Hello of a trace fails after the trace was made (its journal
 * cannot be opened: no file descriptor left). Nobody is connected to that
 * trace, so the grace period must reclaim it; it may not stay
 * "recording" forever. */
static void test_first_join_fails(void **state)
{
    fixture *f = *state;
    Weft__Hello h = hello("nofd", 0, 2);
    struct rlimit old, low;
    weft_trace_row row;
    const weft_trace *t;
    weft_member *m;
    char key[256];
    int fd, rc;

    fd = dup(0);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)fd;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    rc = join(f, &h, 1000, &m);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_true(rc < 0);
    assert_err(f, "cannot open journal");
    assert_int_equal(ntraces(f), 1);
    t = weft_trace_first(&f->d, WEFT_TRACE_RECORDING);
    snprintf(key, sizeof key, "%s", t->key);
    assert_int_equal(t->connected, 0);
    assert_int_equal(t->joined, 0);
    run_jobs(f);
    f->d.cfg.grace_period = 0;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 0);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    /* Converted with what arrived: nothing. */
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_int_equal(row.events, 0);
    weft_catalog_trace_free(&row);
    finish(f);
}

static int count_member(const weft_member_row *row, void *arg)
{
    uint32_t *n = arg;

    assert_string_equal(row->state, WEFT_MEMBER_MISSING);
    (*n)++;
    return 0;
}

/* A Hello's size costs nothing until members join: 200 members of a
 * trace of size 2^24 at scattered ranks (and 100 whose journal cannot be
 * opened, so that their slots are taken and freed again in between) are
 * found by rank in a table of a few hundred slots, and the conversion
 * catalogues a row per member that came, none for the 2^24 - 200 ranks
 * that did not. */
static void test_size_charged_as_members_join(void **state)
{
    fixture *f = *state;
    const uint32_t size = 1u << 24;
    uint32_t ranks[300], x = 12345, nrows = 0;
    weft_member *m[300], *first = NULL;
    weft_trace_row row;
    weft_catalog *cat;
    char key[256], path[1200];
    weft_trace *t;

    f->d.cfg.max_members = size;
    for (int i = 0; i < 300; i++) {
        int again;
        do { /* distinct ranks, rank 7 first: it makes the directory */
            x = x * 1103515245u + 12345u;
            ranks[i] = i == 0 ? 7 : (x >> 4) % size;
            again = 0;
            for (int k = 0; k < i; k++)
                again |= ranks[k] == ranks[i];
        } while (again);
    }
    for (int i = 0; i < 300; i++) {
        Weft__Hello h = hello("big", ranks[i], size);
        if (i % 3 == 2) { /* its journal is a directory: refused */
            snprintf(path, sizeof path, "%s/rank-%u.wj", first->trace->dir,
                     ranks[i]);
            assert_int_equal(mkdir(path, 0700), 0);
            assert_true(join(f, &h, 1000, &m[i]) < 0);
            assert_err(f, "cannot open journal");
            assert_int_equal(rmdir(path), 0);
            m[i] = NULL;
            continue;
        }
        m[i] = join_ok(f, "big", ranks[i], size);
        if (!first)
            first = m[i];
    }
    t = first->trace;
    assert_int_equal(ntraces(f), 1);
    assert_int_equal(t->joined, 200);
    assert_true(t->members.ncells >= 400 && t->members.ncells <= 1024);
    for (int i = 0; i < 300; i++)
        assert_ptr_equal(weft_trace_member(t, ranks[i]), m[i]);
    for (uint32_t r = 0; r < 64; r++) { /* ranks that did not come */
        int came = 0;
        for (int i = 0; i < 300; i++)
            came |= ranks[i] == r && m[i];
        if (!came)
            assert_null(weft_trace_member(t, r));
    }
    snprintf(key, sizeof key, "%s", t->key);
    run_jobs(f);
    for (int i = 0; i < 300; i++)
        if (m[i])
            leave(m[i], 0);
    f->d.cfg.grace_period = 0;
    weft_trace_check_idle(&f->d);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_int_equal(row.members, size);
    assert_non_null(strstr(row.error, "16777016 of 16777216 members never "
                           "came (rank 0...)"));
    assert_non_null(strstr(row.error, "200 of 16777216 members did not say "
                           "goodbye"));
    cat = catalog_ro(f);
    assert_int_equal(weft_catalog_members(cat, row.id, count_member, &nrows),
                     0);
    weft_catalog_close(cat);
    assert_int_equal(nrows, 200);
    weft_catalog_trace_free(&row);
    finish(f);
}

/* ---- leaving and coming back --------------------------------------------- */

static void test_resume(void **state)
{
    fixture *f = *state;
    weft_member *m0 = join_ok(f, "r", 0, 2), *m1 = join_ok(f, "r", 1, 2), *m;
    weft_trace *t = m0->trace;
    Weft__Hello h = hello("r", 0, 2);

    m0->in.defs_seq = 3;
    leave(m0, 0);
    assert_int_equal(t->connected, 1);
    assert_int_equal(t->idle_since, 0); /* rank 1 is still there */
    leave(m1, 0);
    assert_int_equal(t->connected, 0);
    assert_true(t->idle_since > 0);
    assert_int_equal(t->idle_since, uv_now(&f->loop));
    assert_int_equal(ntraces(f), 1);

    /* Rank 0 comes back: the same member, its state kept. */
    assert_int_equal(join(f, &h, 1000, &m), 0);
    assert_ptr_equal(m, m0);
    assert_int_equal(m->in.defs_seq, 3);
    assert_int_equal(t->connected, 1);
    assert_int_equal(t->joined, 2);
    assert_int_equal(t->idle_since, 0);
    /* A Hello of the same trace from another owner is another trace. */
    assert_int_equal(join(f, &h, 0, &m), 0);
    assert_ptr_not_equal(m->trace, t);
    finish(f);
}

/* ---- conversion ---------------------------------------------------------- */

static void test_all_goodbye_converts(void **state)
{
    fixture *f = *state;
    weft_member *m0 = join_ok(f, "done", 0, 2), *m1 = join_ok(f, "done", 1, 2);
    weft_trace_row row;
    char key[256], dir[512];

    snprintf(key, sizeof key, "%s", m0->trace->key);
    snprintf(dir, sizeof dir, "%s", m0->trace->dir);
    record(m0, 100);
    record(m1, 150);
    run_jobs(f);
    leave(m0, 1);
    assert_int_equal(ntraces(f), 1);
    assert_int_equal(f->d.jobs, 0);
    leave(m1, 1);
    /* Handed to a worker: no longer recording. */
    assert_int_equal(ntraces(f), 0);
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_COMPLETE);
    assert_int_equal(row.members, 2);
    assert_int_equal(row.locations, 2);
    assert_int_equal(row.events, 4);
    assert_int_equal(row.time_first, 100);
    assert_int_equal(row.time_last, 160);
    assert_true(row.finished > 0);
    assert_null(row.error);
    assert_non_null(strstr(row.path, dir));
    weft_catalog_trace_free(&row);
    assert_false(exists(dir, "rank-0.wj"));
    assert_false(exists(dir, "rank-1.wj"));
    assert_true(exists(dir, "archive/traces.otf2"));
    /* A new run with the same name is a new trace. */
    join_ok(f, "done", 0, 2);
    assert_int_equal(ntraces(f), 1);
    assert_string_not_equal(weft_trace_first(&f->d,
                                             WEFT_TRACE_RECORDING)->key, key);
    finish(f);
}

static void test_grace_period(void **state)
{
    fixture *f = *state;
    weft_member *m0 = join_ok(f, "gone", 0, 2);
    weft_trace_row row;
    struct timespec ts = { 1, 100 * 1000 * 1000 };
    char key[256], dir[512];

    snprintf(key, sizeof key, "%s", m0->trace->key);
    snprintf(dir, sizeof dir, "%s", m0->trace->dir);
    f->d.cfg.grace_period = 1;
    record(m0, 100);
    run_jobs(f);
    leave(m0, 0);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);
    nanosleep(&ts, NULL);
    uv_update_time(&f->loop);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 0);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_int_equal(row.members, 2);
    assert_int_equal(row.events, 2);
    weft_catalog_trace_free(&row);
    assert_false(exists(dir, "rank-0.wj"));
    assert_true(exists(dir, "archive/traces.otf2"));
    finish(f);
}

/* Once a member ended abnormally, the others get abort_grace_period (5 s)
 * instead of grace_period: the launcher is ending the job. A trace
 * without such a member, idle as long, keeps waiting. */
static void test_abort_grace_period(void **state)
{
    fixture *f = *state;
    weft_member *a0 = join_ok(f, "aborted", 0, 2);
    weft_member *a1 = join_ok(f, "aborted", 1, 2);
    weft_member *b0 = join_ok(f, "quiet", 0, 2);
    weft_trace *ta = a0->trace, *tb = b0->trace;
    weft_trace_row row;
    char key[256];
    uint64_t now;

    snprintf(key, sizeof key, "%s", ta->key);
    f->d.cfg.grace_period = 60;
    f->d.cfg.abort_grace_period = 5;
    record(a0, 10);
    record(b0, 10);
    run_jobs(f);
    a0->in.ended = strdup("MPI_Abort (error code 3)");
    assert_non_null(a0->in.ended);
    leave(a0, 1);
    leave(a1, 0);
    leave(b0, 0);
    now = uv_now(&f->loop);
    ta->idle_since = tb->idle_since = now - 4999;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 2);
    ta->idle_since = tb->idle_since = now - 5000;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1); /* the aborted one went */
    assert_ptr_equal(weft_trace_first(&f->d, WEFT_TRACE_RECORDING), tb);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_non_null(strstr(row.error, "rank 0: MPI_Abort (error code 3)"));
    weft_catalog_trace_free(&row);
    /* abort_grace_period longer than grace_period: grace_period holds. */
    f->d.cfg.abort_grace_period = 120;
    tb->idle_since = now - 60000;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 0);
    finish(f);
}

/* A member whose process weftd watches (procwatch.h) and that left
 * without goodbye: done at once when its process is gone (its trace
 * partial, saying so), waited for while it runs. */
static void test_gone_member(void **state)
{
    fixture *f = *state;
    weft_member *a0 = join_ok(f, "killed", 0, 2);
    weft_member *a1 = join_ok(f, "killed", 1, 2);
    weft_member *b0 = join_ok(f, "alive", 0, 1);
    weft_trace *ta = a0->trace;
    weft_trace_row row;
    char key[256], why[128];
    pid_t child = fork();
    int status;

    if (child == 0)
        _exit(0);
    assert_true(child > 0);
    assert_int_equal(waitpid(child, &status, 0), child);
    snprintf(key, sizeof key, "%s", ta->key);
    f->d.cfg.grace_period = 3600;
    record(a0, 10);
    run_jobs(f);
    leave(a0, 1);
    /* Alive (this very process): it may come back. */
    b0->in.watched = 1;
    b0->in.pid = (uint32_t)getpid();
    leave(b0, 0);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 2);
    a1->in.watched = 1;
    a1->in.pid = (uint32_t)child; /* gone */
    leave(a1, 0);
    assert_int_equal(ntraces(f), 1);
    assert_ptr_equal(weft_trace_first(&f->d, WEFT_TRACE_RECORDING),
                     b0->trace);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    snprintf(why, sizeof why, "1 of 2 members ended without goodbye "
             "(rank 1, pid %d: killed", (int)child);
    assert_non_null(strstr(row.error, why));
    weft_catalog_trace_free(&row);
    finish(f);
}

/* ---- process trees (tree.c) ---- */

/* A process of tree `name` (pid) joins, as on_hello does: weftd gives
 * its rank, which its journaled Hello carries. */
static weft_member *join_tree(fixture *f, const char *name, uint32_t pid)
{
    Weft__Hello h = hello(name, UINT32_MAX, 0);
    weft_journal_entry e = { 0 };
    uint8_t buf[512];
    weft_member *m;
    int rc;

    h.tree = 1;
    h.pid = pid;
    h.run = (char *)"tree:node-a:1:1";
    rc = join(f, &h, 1000, &m);
    if (rc != 0)
        print_error("join: %s\n", f->err);
    assert_int_equal(rc, 0);
    m->in.conn = CONNECTED;
    h.rank = m->in.rank;
    e.kind = WEFT_JE_HELLO;
    e.len = (uint32_t)weft__hello__pack(&h, buf);
    e.payload = buf;
    assert_int_equal(weft_journal_append(m->in.journal, &e), 0);
    return m;
}

/* m says goodbye (exec: it goes on as another program; its children
 * still running: nchildren of them) and leaves. */
static void leave_tree(weft_member *m, int exec, const uint32_t *children,
                       size_t nchildren)
{
    m->in.execs = exec;
    if (nchildren) {
        m->in.children = malloc(nchildren * sizeof *children);
        assert_non_null(m->in.children);
        memcpy(m->in.children, children, nchildren * sizeof *children);
        m->in.nchildren = nchildren;
    }
    leave(m, 1);
}

static void reap(pid_t pid)
{
    int status;

    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* weftd gives a tree's members their ranks in the order they join, the
 * trace's size grows with them, up to max_members; a Hello that mixes
 * up tree and not, a tree rank never given, a tree size not 0 are
 * refused, each saying why. */
static void test_tree_ranks(void **state)
{
    fixture *f = *state;
    weft_member *root = join_tree(f, "mk", 5000), *m;
    weft_trace *t = root->trace;
    Weft__Hello h = hello("mk", 0, 1);
    uint32_t i;

    assert_true(t->tree);
    assert_int_equal(root->in.rank, 0);
    assert_int_equal(t->size, 1);
    for (i = 1; i < f->d.cfg.max_members; i++) {
        m = join_tree(f, "mk", 5000 + i);
        assert_int_equal(m->in.rank, i);
        assert_int_equal(t->size, i + 1);
    }
    h.run = (char *)"tree:node-a:1:1";
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_non_null(strstr(f->err, "trace 'mk' is a process tree but this "
                                   "process says it is not"));
    h.tree = 1;
    h.rank = UINT32_MAX;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_non_null(strstr(f->err, "process tree's member says the trace "
                                   "has 1 members"));
    h.size = 0;
    h.rank = 17;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EINVAL);
    assert_non_null(strstr(f->err, "rank 17 of process tree 'mk' was never "
                                   "given"));
    h.rank = UINT32_MAX;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_ELIMIT);
    assert_non_null(strstr(f->err, "process tree 'mk' has 8 members: "
                                   "max_members is 8"));
    h.rank = 3; /* a member coming back: connected still */
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EEXIST);
    finish(f);
}

/* A tree is done when every member that joined is done and no process
 * it waits for is to come: a child its root named as still running
 * (until it joins and is done), an exec (until the process ends without
 * a traced program), or one that does not join within
 * abort_grace_period; at most 64 processes are waited for. */
static void test_tree_waits(void **state)
{
    fixture *f = *state;
    weft_member *root = join_tree(f, "sh", 6000);
    weft_member *child = join_tree(f, "sh", 6001), *late;
    weft_trace *t = root->trace;
    pid_t bg = test_sleeper(), execd = test_sleeper();
    uint32_t kids[] = { 6001, (uint32_t)bg };
    weft_trace_row row;
    char key[256];

    snprintf(key, sizeof key, "%s", t->key);
    f->d.cfg.grace_period = 3600;
    f->d.cfg.abort_grace_period = 3600;
    root->in.watched = 1;
    root->in.pid = (uint32_t)getpid();
    leave_tree(child, 0, NULL, 0);
    /* The root ends; its child 6001 (a member) and bg (not yet) run. */
    leave_tree(root, 0, kids, 2);
    assert_int_equal(t->nexpected, 1);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);
    late = join_tree(f, "sh", (uint32_t)bg);
    assert_int_equal(late->in.rank, 2);
    assert_int_equal(t->nexpected, 0);
    /* bg execs a program that is not traced: waited for until bg ends. */
    late->in.watched = 1;
    late->in.proc_start = weft_proc_start((uint32_t)bg);
    leave_tree(late, 1, NULL, 0);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);
    reap(bg);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 0);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_COMPLETE);
    assert_int_equal(row.members, 3);
    weft_catalog_trace_free(&row);

    /* Not watched: waited for abort_grace_period at most. */
    root = join_tree(f, "sh2", 7000);
    kids[0] = (uint32_t)execd;
    leave_tree(root, 0, kids, 1);
    t = root->trace;
    assert_int_equal(t->nexpected, 1);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);
    t->expected[0].until = uv_now(&f->loop);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 0);
    run_jobs(f);
    reap(execd);

    /* A member naming more children than a tree waits for: 64 are. */
    root = join_tree(f, "many", 8000);
    {
        uint32_t many[100];
        for (uint32_t i = 0; i < 100; i++)
            many[i] = 100000 + i;
        leave_tree(root, 0, many, 100);
    }
    t = root->trace;
    assert_int_equal(t->nexpected, 64);
    for (uint32_t i = 0; i < t->nexpected; i++)
        t->expected[i].until = uv_now(&f->loop);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 0);
    run_jobs(f);
    finish(f);
}

static void test_grace_period_boundary(void **state)
{
    fixture *f = *state;
    weft_member *a = join_ok(f, "a", 0, 2), *b = join_ok(f, "b", 0, 1);
    weft_member *c = join_ok(f, "c", 0, 2);
    weft_trace *ta = a->trace;
    weft_trace_row row;
    char key_a[256], key_c[256];
    uint64_t now;

    snprintf(key_a, sizeof key_a, "%s", a->trace->key);
    snprintf(key_c, sizeof key_c, "%s", c->trace->key);
    f->d.cfg.grace_period = 60;
    record(a, 10);
    record(c, 10);
    run_jobs(f);
    /* a: gone without goodbye; b: still connected; c: said goodbye, but
     * its second rank never came. */
    leave(a, 0);
    leave(c, 1);
    assert_int_equal(ntraces(f), 3);
    now = uv_now(&f->loop);
    ta->idle_since = now - 59999;
    c->trace->idle_since = now - 60000;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 2);     /* c went */
    for (const weft_trace *t = weft_trace_first(&f->d, WEFT_TRACE_RECORDING);
         t; t = weft_trace_next(t))
        assert_true(t == ta || t == b->trace);
    ta->idle_since = now - 60000;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);     /* a went */
    assert_ptr_equal(weft_trace_first(&f->d, WEFT_TRACE_RECORDING),
                     b->trace);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key_a, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    weft_catalog_trace_free(&row);
    assert_int_equal(catalog_row(f, key_c, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_int_equal(row.members, 2);
    weft_catalog_trace_free(&row);
    /* b never idles while connected. */
    b->trace->idle_since = 0;
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);
    finish(f);
}

/* Members are grouped by (owner, name, run); a member of a run whose
 * trace ended is refused instead of starting a new trace (WEFT_EENDED
 * when it is complete, WEFT_ECLOSED when partial after the grace
 * period); a Hello without a
 * run keeps the grouping by name. */
static void test_runs_are_traces(void **state)
{
    fixture *f = *state;
    weft_member *a0 = join_run_ok(f, "x", "r1", 1000, 0, 2);
    weft_member *b0 = join_run_ok(f, "x", "r2", 1000, 0, 2);
    weft_member *a1 = join_run_ok(f, "x", "r1", 1000, 1, 2);
    weft_member *old = join_ok(f, "x", 0, 2), *m;
    struct timespec ts = { 1, 100 * 1000 * 1000 };
    Weft__Hello h = hello("x", 0, 2);
    weft_trace_row row;
    char akey[256], bkey[256];

    assert_ptr_equal(a0->trace, a1->trace);
    assert_ptr_not_equal(a0->trace, b0->trace);
    assert_ptr_not_equal(old->trace, a0->trace);
    assert_ptr_not_equal(old->trace, b0->trace);
    assert_string_equal(a0->trace->run, "r1");
    assert_string_equal(old->trace->run, "");
    assert_int_equal(ntraces(f), 3);
    snprintf(akey, sizeof akey, "%s", a0->trace->key);
    snprintf(bkey, sizeof bkey, "%s", b0->trace->key);
    record(a0, 100);
    record(a1, 100);
    record(b0, 100);
    run_jobs(f);
    leave(a0, 1);
    leave(a1, 1);
    run_jobs(f);
    assert_int_equal(catalog_row(f, akey, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_COMPLETE);
    assert_string_equal(row.run, "r1");
    weft_catalog_trace_free(&row);
    /* Run r1 is over: its rank 0 again is refused, not a new trace. */
    h.run = (char *)"r1";
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EENDED);
    assert_err(f, "trace 'x' (run r1) has already ended: all its processes "
               "said goodbye");
    assert_int_equal(ntraces(f), 2);
    /* Another owner's run of that name and id is another trace. */
    join_run_ok(f, "x", "r1", 1001, 0, 1);
    assert_int_equal(ntraces(f), 3);
    /* Run r2 is given up on after the grace period. */
    f->d.cfg.grace_period = 1;
    leave(b0, 0);
    leave(old, 0);
    nanosleep(&ts, NULL);
    uv_update_time(&f->loop);
    weft_trace_check_idle(&f->d);
    assert_int_equal(ntraces(f), 1);
    run_jobs(f);
    assert_int_equal(catalog_row(f, bkey, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_string_equal(row.run, "r2");
    weft_catalog_trace_free(&row);
    h.run = (char *)"r2";
    assert_int_equal(join(f, &h, 1000, &m), WEFT_ECLOSED);
    assert_err(f, "gave up waiting for its missing processes");
    assert_err(f, bkey);
    assert_int_equal(ntraces(f), 1);
    /* Without a run, as before: a new trace of the name. */
    join_ok(f, "x", 0, 2);
    assert_int_equal(ntraces(f), 2);
    finish(f);
    assert_null(f->d.traces->ended_runs);
}

/* A run of trace "x" that ends now (rank 0 of 1 says goodbye). */
static void end_run(fixture *f, const char *run)
{
    weft_member *m = join_run_ok(f, "x", run, 1000, 0, 1);

    record(m, 100);
    run_jobs(f);
    leave(m, 1);
    run_jobs(f);
}

static size_t nended(const fixture *f, const char **oldest)
{
    size_t n = 0;

    for (const weft_ended_run *e = f->d.traces->ended_runs; e;
         e = e->next, n++)
        *oldest = e->run;
    assert_int_equal(n, f->d.traces->nended_runs);
    return n;
}

/* WEFT_ENDED_RUNS_MAX: the runs read from the catalog at start-up (the
 * newest, ended ones, with a run) and those that end later are at most
 * that many; the oldest are forgotten first. */
static void test_ended_runs_limit(void **state)
{
    fixture *f = *state;
    Weft__Hello h = hello("x", 0, 1);
    weft_catalog *cat = NULL;
    weft_member *m;
    sqlite3 *db = NULL;
    const char *oldest = NULL;
    char *msg = NULL, sql[1024], newest[32], first[32], second[32];

    assert_int_equal(mkdir(f->d.cfg.spool, 0755), 0);
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 0, &cat, &msg), 0);
    weft_catalog_close(cat);
    /* Ended runs r1..r(MAX + 10), then (newer) one still recording and
     * one of an older client: neither is remembered, but both count in
     * the newest MAX rows read. */
    snprintf(sql, sizeof sql, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
             " SELECT i + 1 FROM n WHERE i < %d) INSERT INTO traces (key,"
             " name, uid, state, created, run) SELECT 'k' || i, 'x', 1000,"
             " CASE WHEN i %% 2 THEN 'complete' ELSE 'partial' END, i,"
             " 'r' || i FROM n;"
             "INSERT INTO traces (key, name, uid, state, created, run)"
             " VALUES ('rec', 'x', 1000, 'recording', 90000, 'rrec'),"
             " ('old', 'x', 1000, 'complete', 90001, '');",
             WEFT_ENDED_RUNS_MAX + 10);
    assert_int_equal(sqlite3_open(f->d.cfg.catalog, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    snprintf(newest, sizeof newest, "r%d", WEFT_ENDED_RUNS_MAX + 10);
    snprintf(first, sizeof first, "r%d", 13);  /* 10 + the 2 newer + 1 */
    snprintf(second, sizeof second, "r%d", 14);
    assert_int_equal(weft_trace_load_ended_runs(&f->d), 0);
    assert_int_equal(nended(f, &oldest), WEFT_ENDED_RUNS_MAX - 2);
    assert_string_equal(f->d.traces->ended_runs->run, newest);
    assert_true(f->d.traces->ended_runs->partial ==
                (WEFT_ENDED_RUNS_MAX % 2 == 0));
    assert_string_equal(oldest, first);
    h.run = newest;
    assert_int_equal(join(f, &h, 1000, &m), WEFT_ENDED_RUNS_MAX % 2 == 0
                                                ? WEFT_ECLOSED : WEFT_EENDED);
    assert_err(f, WEFT_ENDED_RUNS_MAX % 2 == 0 ? "gave up waiting"
                                               : "said goodbye");
    h.run = (char *)"rrec"; /* recording: the spool has it, not refused */
    assert_int_equal(join(f, &h, 1000, &m), 0);
    /* Three more end: the oldest goes. */
    end_run(f, "n1");
    end_run(f, "n2");
    assert_int_equal(nended(f, &oldest), WEFT_ENDED_RUNS_MAX);
    assert_string_equal(oldest, first);
    end_run(f, "n3");
    assert_int_equal(nended(f, &oldest), WEFT_ENDED_RUNS_MAX);
    assert_string_equal(oldest, second);
    assert_string_equal(f->d.traces->ended_runs->run, "n3");
    assert_false(f->d.traces->ended_runs->partial);
    h.run = (char *)"n1";
    assert_int_equal(join(f, &h, 1000, &m), WEFT_EENDED);
    assert_err(f, "all its processes said goodbye");
    h.run = first; /* forgotten: a new trace */
    assert_int_equal(join(f, &h, 1000, &m), 0);
    finish(f);
}

static void test_failed_conversion(void **state)
{
    fixture *f = *state;
    weft_catalog *cat = NULL;
    char *msg = NULL;
    weft_member *m0;
    weft_trace_row row;
    char key[256], dir[512], path[600];
    FILE *fp;

    /* weftd creates the catalog before it serves anyone (main.c); so do
     * we, or the begin and conversion jobs race to create it. */
    snprintf(path, sizeof path, "%s", f->d.cfg.spool);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 0, &cat, &msg), 0);
    weft_catalog_close(cat);
    free(msg);
    m0 = join_ok(f, "bad", 0, 1);

    snprintf(key, sizeof key, "%s", m0->trace->key);
    snprintf(dir, sizeof dir, "%s", m0->trace->dir);
    f->d.cfg.log_level = -1; /* the failure below is expected: no log */
    record(m0, 100);
    /* The journal stops being one before the conversion is queued (the
     * thread pool may start it at once); the Goodbye lands after the
     * junk, the file keeps no valid magic. */
    snprintf(path, sizeof path, "%s/rank-0.wj", dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("not a journal", fp);
    fclose(fp);
    leave(m0, 1);
    assert_int_equal(ntraces(f), 0);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_FAILED);
    assert_non_null(row.error);
    assert_non_null(strstr(row.error, "rank-0.wj"));
    weft_catalog_trace_free(&row);
    /* Journals are kept for a later attempt. */
    assert_true(exists(dir, "rank-0.wj"));
    finish(f);
}

/* A conversion that fails for a cause that goes away (here the catalog
 * cannot be opened) keeps the trace and its journals for another attempt
 * after a delay; the tick converts it again and it is complete. */
static void test_failed_conversion_retried(void **state)
{
    fixture *f = *state;
    weft_catalog *cat = NULL;
    char *msg = NULL;
    weft_member *m0;
    weft_trace *t;
    weft_trace_row row;
    char key[256], dir[512], path[600], moved[620];

    snprintf(path, sizeof path, "%s", f->d.cfg.spool);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 0, &cat, &msg), 0);
    weft_catalog_close(cat);
    free(msg);
    m0 = join_ok(f, "again", 0, 1);
    t = m0->trace;
    snprintf(key, sizeof key, "%s", t->key);
    snprintf(dir, sizeof dir, "%s", t->dir);
    record(m0, 100);
    run_jobs(f);  /* the catalog row of the new trace */
    f->d.cfg.log_level = -1; /* the failure below is expected: no log */
    snprintf(moved, sizeof moved, "%s.away", f->d.cfg.catalog);
    assert_int_equal(rename(f->d.cfg.catalog, moved), 0);
    assert_int_equal(mkdir(f->d.cfg.catalog, 0755), 0);
    leave(m0, 1);
    run_jobs(f);
    assert_ptr_equal(weft_trace_first(&f->d, WEFT_TRACE_RETRY_WAIT), t);
    assert_int_equal(t->state, WEFT_TRACE_RETRY_WAIT);
    assert_null(weft_trace_next(t));
    assert_int_equal(t->retry_delay, 2000);
    assert_true(t->retry_at >= uv_now(&f->loop) + 1000);
    assert_true(exists(dir, "rank-0.wj"));
    /* Not yet: nothing is queued before its time. */
    weft_trace_check_idle(&f->d);
    assert_int_equal(f->d.jobs, 0);

    assert_int_equal(rmdir(f->d.cfg.catalog), 0);
    assert_int_equal(rename(moved, f->d.cfg.catalog), 0);
    t->retry_at = 0;
    weft_trace_check_idle(&f->d);
    assert_null(weft_trace_first(&f->d, WEFT_TRACE_RETRY_WAIT));
    assert_int_equal(f->d.jobs, 1);
    run_jobs(f);
    assert_int_equal(catalog_row(f, key, &row), 0);
    assert_string_equal(row.state, WEFT_STATE_COMPLETE);
    assert_int_equal(row.events, 2);
    weft_catalog_trace_free(&row);
    assert_false(exists(dir, "rank-0.wj"));
    finish(f);
}

/* max_conversions: many traces finishing at once are converted no more
 * than N at a time, the others queued (the status counts them), and all
 * of them complete; the converter then ends by itself. */
static void test_conversion_queue(void **state)
{
    enum { NTRACES = 6, MAX_CONV = 2 };
    fixture *f = *state;
    weft_catalog *cat = NULL;
    char *msg = NULL, path[600], keys[NTRACES][256];
    weft_member *m[NTRACES];
    weft_trace_conversions n;
    weft_trace_row row;

    /* The catalog first, as weftd makes it before serving anyone. */
    snprintf(path, sizeof path, "%s", f->d.cfg.spool);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 0, &cat, &msg), 0);
    weft_catalog_close(cat);
    free(msg);
    f->d.cfg.max_conversions = MAX_CONV;
    for (int i = 0; i < NTRACES; i++) {
        char name[32];
        snprintf(name, sizeof name, "burst-%d", i);
        m[i] = join_ok(f, name, 0, 1);
        snprintf(keys[i], sizeof keys[i], "%s", m[i]->trace->key);
        record(m[i], 100 + (uint64_t)i);
    }
    run_jobs(f);  /* their catalog rows */
    assert_null(f->d.traces->converter);
    leave(m[0], 1);
    assert_non_null(f->d.traces->converter);
    /* The others finish while the converter is held: all wait. */
    weft_worker_hold(f->d.traces->converter, 1);
    for (int i = 1; i < NTRACES; i++)
        leave(m[i], 1);
    assert_int_equal(f->d.traces->converting, NTRACES);
    n = weft_trace_count_conversions(&f->d);
    assert_true(n.running <= 1);
    assert_true(n.queued >= NTRACES - 1);
    assert_int_equal(n.queued + n.running, NTRACES);
    weft_worker_hold(f->d.traces->converter, 0);
    run_jobs(f);
    assert_int_equal(f->d.traces->converting, 0);
    assert_null(f->d.traces->converter);  /* nothing left: it ended */
    n = weft_trace_count_conversions(&f->d);
    assert_int_equal(n.queued, 0);
    assert_int_equal(n.running, 0);
    assert_true(n.peak >= 1 && n.peak <= MAX_CONV);
    assert_int_equal(f->d.traces->conversions_peak, n.peak);
    for (int i = 0; i < NTRACES; i++) {
        assert_int_equal(catalog_row(f, keys[i], &row), 0);
        assert_string_equal(row.state, WEFT_STATE_COMPLETE);
        assert_int_equal(row.events, 2);
        weft_catalog_trace_free(&row);
    }
    finish(f);
}

/* A reload lowers max_conversions while conversions wait: from then on
 * one runs at a time. */
static void test_conversion_queue_reload(void **state)
{
    enum { NTRACES = 4 };
    fixture *f = *state;
    weft_catalog *cat = NULL;
    char *msg = NULL, path[600];
    weft_member *m[NTRACES];

    snprintf(path, sizeof path, "%s", f->d.cfg.spool);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 0, &cat, &msg), 0);
    weft_catalog_close(cat);
    free(msg);
    f->d.cfg.max_conversions = 4;
    for (int i = 0; i < NTRACES; i++) {
        char name[32];
        snprintf(name, sizeof name, "reload-%d", i);
        m[i] = join_ok(f, name, 0, 1);
        record(m[i], 100);
    }
    run_jobs(f);
    leave(m[0], 1);
    weft_worker_hold(f->d.traces->converter, 1);
    for (int i = 1; i < NTRACES; i++)
        leave(m[i], 1);
    weft_trace_set_max_conversions(&f->d, 1);
    assert_int_equal(f->d.cfg.max_conversions, 1);
    weft_worker_hold(f->d.traces->converter, 0);
    run_jobs(f);
    /* Only the first could start before the hold: one at a time. */
    assert_int_equal(weft_trace_count_conversions(&f->d).peak, 1);
    assert_int_equal(f->d.traces->converting, 0);
    finish(f);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_join_creates_trace_once),
        T(test_spool_key_is_safe),
        T(test_join_errors),
        T(test_max_traces_per_user),
        T(test_spool_not_writable),
        T(test_first_join_fails),
        T(test_size_charged_as_members_join),
        T(test_resume),
        T(test_all_goodbye_converts),
        T(test_grace_period),
        T(test_grace_period_boundary),
        T(test_abort_grace_period),
        T(test_gone_member),
        T(test_tree_ranks),
        T(test_tree_waits),
        T(test_failed_conversion),
        T(test_runs_are_traces),
        T(test_ended_runs_limit),
        T(test_failed_conversion_retried),
        T(test_conversion_queue),
        T(test_conversion_queue_reload),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
