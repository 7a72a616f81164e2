/* test_server_limits.c - weftd's server (daemon/ingest/server.c, with
 * session.c, trace.c and the journal writer behind it) when the disk
 * stalls and at its global limits, over real TCP sockets (server_util.c
 * runs the daemon; the test is its client).
 *
 * A stalled disk (the journal writer held) stalls no one's ClockSync or
 * Hello, and a process coming back while its batch waits for the journal
 * is asked to retry until HelloAck can say it is held. A Hello's disk work
 * (a new trace's directory, the journal's open) runs on the writer's open
 * thread: with it stalled too, other traces' ClockSync and acks and a
 * process coming back are answered within 100 ms, and the waiting Hello
 * and the frames sent behind it complete in order once the disk moves; it
 * fails with the same Errors as before, and stopping while it waits leaves
 * nothing open. The disk stalled for fsync and for the status file (the
 * syncer and the status writer held, durability = fsync): ClockSync and a
 * new Hello are still answered within 100 ms, the batch is acked and the
 * status file written once the disk moves, and removed at the end. Global
 * limits: max_buffered pauses connections at a frame boundary and resumes
 * them (stashed bytes kept) while a frame in progress finishes;
 * idle_timeout (no Hello, a frame begun and not finished; not a quiet
 * member); SIGTERM's drain (frames in progress finish and are acked,
 * shutdown_timeout bounds a stuck peer); the file descriptor limit; the
 * counters of limits reached.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "server_util.h"
#include "daemon_fixture.h"
#include "frame.h"
#include "jwriter.h"
#include "server.h"
#include "session.h"
#include "status.h"
#include "testutil.h"
#include "trace.h"
#include "weft_errors.h"
#include "worker.h"

/* ---- global limits, idle connections, SIGTERM ------------------------------ */

/* A batch of n events (Enter/Leave pairs of region 0) of roughly 2.5 * n
 * bytes. */
static bytes big_batch(uint32_t loc, uint64_t seq, uint64_t t, uint32_t n)
{
    weft_record *ev = calloc(n, sizeof *ev);
    bytes b;

    assert_non_null(ev);
    for (uint32_t i = 0; i < n; i++)
        ev[i] = enter(t + i, 0, i & 1);
    b = batch_frame(loc, seq, t, n, ev, n);
    free(ev);
    return b;
}

/* A disk that stalls (the journal writer held): batches are not
 * acknowledged, but the loop goes on: ClockSync is answered and another
 * process joins. The process that hangs up and comes back while its
 * batch waits is asked to retry (HelloAck must say what is journaled);
 * once the disk moves, the batch is journaled and HelloAck says so. */
static void test_stalled_disk(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env = NULL;
    int a, b;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "stall", 0, 2);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    weft_jwriter_hold(&f->d, 1);
    send_bytes_free(a, work_batch(0, 1, 10));
    assert_true(quiet_for(a, 200)); /* no ack while the disk stalls */
    send_bytes_free(a, clock_sync_frame(7));
    env = cl_recv(a);
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_CLOCK_SYNC);
    assert_int_equal(env->clock_sync->id, 7);
    weft_frame_free_envelope(env);
    b = cl_connect(f);
    hello_ok(b, "stall", 1, 2);
    hang_up(a);
    a = cl_connect(f);
    send_bytes_free(a, hello_frame("stall", 0, 2, WEFT_PROTOCOL_VERSION));
    expect_error(&a, WEFT_EEXIST, "rank 0 of trace 'stall': what its "
                 "previous connection sent is still being written to the "
                 "journal; try again");
    weft_jwriter_hold(&f->d, 0);
    for (int i = 0; i < 100; i++) { /* as libweft retries */
        a = cl_connect(f);
        send_bytes_free(a, hello_frame("stall", 0, 2,
                                       WEFT_PROTOCOL_VERSION));
        env = cl_recv(a);
        assert_non_null(env);
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK)
            break;
        weft_frame_free_envelope(env);
        env = NULL;
        close(a);
        sleep_ms(20);
    }
    assert_non_null(env);
    assert_int_equal(env->hello_ack->definitions_seq, 1);
    assert_int_equal(env->hello_ack->n_locations, 1);
    assert_int_equal(env->hello_ack->locations[0]->seq, 1);
    weft_frame_free_envelope(env);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    stop(f);
}

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static long ms_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 +
           (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Sends b (freed) and returns the first reply, which must come within
 * 100 ms; the caller frees it. */
static Weft__Envelope *answer_within_100ms(int fd, bytes b)
{
    struct timespec t0;
    Weft__Envelope *env;
    long ms;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    send_bytes_free(fd, b);
    env = cl_recv(fd);
    ms = ms_since(&t0);
    assert_non_null(env);
    if (ms >= 100)
        fail_msg("answered after %ld ms", ms);
    return env;
}

/* A ClockSync answered within 100 ms. */
static void clock_sync_within_100ms(int fd, uint64_t id)
{
    Weft__Envelope *env = answer_within_100ms(fd, clock_sync_frame(id));

    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_CLOCK_SYNC);
    assert_int_equal(env->clock_sync->id, id);
    weft_frame_free_envelope(env);
}

/* A resend of batch 1 of thread 0, already written: acked within 100 ms. */
static void resend_acked_within_100ms(int fd)
{
    Weft__Envelope *env = answer_within_100ms(fd, work_batch(0, 1, 10));

    if (env->msg_case != WEFT__ENVELOPE__MSG_ACK)
        show_unexpected(env, "Ack");
    assert_int_equal(env->ack->seq, 1);
    weft_frame_free_envelope(env);
}

/* Trace directories in the spool whose key starts with name. */
static size_t trace_dirs(const fixture *f, const char *name)
{
    char pattern[300];
    glob_t g;
    size_t n;

    snprintf(pattern, sizeof pattern, "%s/traces/%s-*", f->d.cfg.spool,
             name);
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    n = g.gl_pathc;
    globfree(&g);
    return n;
}

/* The disk work of a Hello (a new trace's directory, the journal's open
 * and header) runs on the journal writer's open thread, never on the
 * loop. With the appends stalled, a new trace's Hello is answered within
 * 100 ms; with the opens stalled too, a new trace's Hello waits (its
 * directory is not made) and so do the frames sent behind it, while
 * another trace's ClockSync and the ack of its resent batch, and a
 * process coming back (no disk work), are answered within 100 ms. Once
 * the disk moves, the Hello completes and the frames behind it are
 * handled in order. A process that hangs up while its Hello waits can
 * come back. */
static void test_stalled_disk_hello(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env;
    bytes pipelined;
    int a, b, n, n1, q;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "other", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    send_bytes_free(a, work_batch(0, 1, 10));
    expect_ack(a, 0, 0, 1);
    b = cl_connect(f);
    hello_ok(b, "back", 0, 1);
    hang_up(b);

    /* Appends stalled: a new trace still joins at once. */
    weft_jwriter_hold(&f->d, WEFT_JWRITER_APPENDS);
    n1 = cl_connect(f);
    env = answer_within_100ms(n1, hello_frame("fresh1", 0, 1,
                                              WEFT_PROTOCOL_VERSION));
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    weft_frame_free_envelope(env);
    assert_int_equal(trace_dirs(f, "fresh1"), 1);
    clock_sync_within_100ms(a, 1);
    resend_acked_within_100ms(a);

    /* Opens stalled too: the new trace's Hello and what follows wait. */
    weft_jwriter_hold(&f->d, WEFT_JWRITER_APPENDS | WEFT_JWRITER_OPENS);
    q = cl_connect(f);
    send_bytes_free(q, hello_frame("gone", 0, 1, WEFT_PROTOCOL_VERSION));
    pipelined = hello_frame("fresh2", 0, 1, WEFT_PROTOCOL_VERSION);
    append_bytes(&pipelined, defs_frame(1));
    append_bytes(&pipelined, work_batch(0, 1, 10));
    append_bytes(&pipelined, clock_sync_frame(9));
    n = cl_connect(f);
    send_bytes_free(n, pipelined);
    clock_sync_within_100ms(a, 2);
    resend_acked_within_100ms(a);
    b = cl_connect(f);
    env = answer_within_100ms(b, hello_frame("back", 0, 1,
                                             WEFT_PROTOCOL_VERSION));
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    weft_frame_free_envelope(env);
    assert_true(quiet_for(n, 200));
    assert_int_equal(trace_dirs(f, "fresh2"), 0);
    clock_sync_within_100ms(a, 3);
    close(q); /* while its Hello waits (weftd reads the EOF after it) */

    /* The disk moves: HelloAck, then the frames in the order sent. */
    weft_jwriter_hold(&f->d, 0);
    env = expect_hello_ack(n);
    assert_int_equal(env->hello_ack->definitions_seq, 0);
    assert_int_equal(env->hello_ack->n_locations, 0);
    weft_frame_free_envelope(env);
    env = cl_recv(n);
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_CLOCK_SYNC);
    assert_int_equal(env->clock_sync->id, 9);
    weft_frame_free_envelope(env);
    expect_ack(n, 1, 0, 1);
    expect_ack(n, 0, 0, 1);
    assert_int_equal(trace_dirs(f, "fresh2"), 1);

    /* The process that hung up comes back (asked to retry until weftd
     * has let go of its old connection). */
    env = NULL;
    for (int i = 0; i < 100; i++) {
        q = cl_connect(f);
        send_bytes_free(q, hello_frame("gone", 0, 1, WEFT_PROTOCOL_VERSION));
        env = cl_recv(q);
        assert_non_null(env);
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK)
            break;
        weft_frame_free_envelope(env);
        env = NULL;
        close(q);
        sleep_ms(20);
    }
    assert_non_null(env);
    weft_frame_free_envelope(env);
    assert_int_equal(trace_dirs(f, "gone"), 1);
    for (int i = 0; i < 5; i++) {
        int fd = (int[]){ a, b, n, n1, q }[i];
        send_bytes_free(fd, goodbye_frame());
        expect_eof(fd);
        close(fd);
    }
    stop(f);
}

/* Stopping while a Hello waits for the disk, with frames behind it: the
 * journal is opened and written on the way out, the frames are left for
 * the client to resend, and nothing is left open. */
static void test_stop_while_hello_waits(void **state)
{
    fixture *f = *state;
    bytes pipelined;
    int fd;

    start(f);
    weft_jwriter_hold(&f->d, WEFT_JWRITER_OPENS);
    fd = cl_connect(f);
    pipelined = hello_frame("waits", 0, 1, WEFT_PROTOCOL_VERSION);
    append_bytes(&pipelined, defs_frame(1));
    append_bytes(&pipelined, work_batch(0, 1, 10));
    send_bytes_free(fd, pipelined);
    assert_true(quiet_for(fd, 100));
    stop(f);
    close(fd);
    assert_int_equal(trace_dirs(f, "waits"), 1);
}

/* The disk work of a Hello fails as it always did: a spool where the
 * trace directory cannot be made, a journal that cannot be opened (the
 * rank is not taken: it may join once the cause is gone). */
static void test_hello_disk_fails(void **state)
{
    fixture *f = *state;
    char path[600];
    glob_t g;
    FILE *fp;
    int a, b;

    start(f);
    fp = fopen(f->d.cfg.spool, "w"); /* the spool is a file */
    assert_non_null(fp);
    fclose(fp);
    a = cl_connect(f);
    send_bytes_free(a, hello_frame("nodir", 0, 1, WEFT_PROTOCOL_VERSION));
    expect_error(&a, WEFT_EIO, "cannot create trace directory under");
    assert_int_equal(unlink(f->d.cfg.spool), 0);
    a = cl_connect(f);
    hello_ok(a, "nojournal", 0, 2);
    snprintf(path, sizeof path, "%s/traces/nojournal-*", f->d.cfg.spool);
    assert_int_equal(glob(path, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    snprintf(path, sizeof path, "%s/rank-1.wj", g.gl_pathv[0]);
    globfree(&g);
    assert_int_equal(mkdir(path, 0700), 0);
    b = cl_connect(f);
    send_bytes_free(b, hello_frame("nojournal", 1, 2,
                                   WEFT_PROTOCOL_VERSION));
    expect_error(&b, WEFT_EIO, "cannot open journal");
    assert_int_equal(rmdir(path), 0);
    b = cl_connect(f);
    hello_ok(b, "nojournal", 1, 2);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    stop(f);
}

/* The status file's writer, driven from the test thread through the
 * loop thread (weft_status_update and _stop are loop-thread calls). On
 * the heap and unreferenced: a test failing half-way leaves it to the
 * teardown without holding the loop. */
typedef struct status_ctl {
    uv_async_t async;
    weft_daemon *d;
    int quit;             /* __atomic: stop the writer, close the handle */
} status_ctl;

static void on_status_ctl(uv_async_t *a)
{
    status_ctl *ctl = a->data;

    if (__atomic_load_n(&ctl->quit, __ATOMIC_SEQ_CST)) {
        weft_status_stop(ctl->d);
        uv_close((uv_handle_t *)a, (uv_close_cb)free);
        return;
    }
    weft_status_update(ctl->d);
}

/* Starts d's status writer and the handle that drives it (before the
 * loop thread runs). */
static status_ctl *status_ctl_new(fixture *f)
{
    status_ctl *ctl = calloc(1, sizeof *ctl);

    assert_non_null(ctl);
    ctl->d = &f->d;
    assert_int_equal(uv_async_init(&f->loop, &ctl->async, on_status_ctl), 0);
    ctl->async.data = ctl;
    uv_unref((uv_handle_t *)&ctl->async);
    assert_int_equal(weft_status_start(&f->d), 0);
    return ctl;
}

/* Waits up to ms for path to exist (want 1) or not (want 0). */
static int wait_file(const char *path, int want, long ms)
{
    for (long waited = 0;; waited += 10) {
        if ((access(path, F_OK) == 0) == want)
            return 1;
        if (waited >= ms)
            return 0;
        sleep_ms(10);
    }
}

/* With the disk stalled for fsync and the status file (the syncer and
 * the status writer held), the loop still answers at once: a ClockSync
 * and a new process's Hello within 100 ms, while the batch waits for its
 * fdatasync and the status waits for its write. Released, the batch is
 * acked and the status file written; stopping removes it. */
static void test_stalled_disk_status(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env;
    status_ctl *ctl;
    char path[300];
    int a, b;

    f->d.cfg.durability = WEFT_DURABLE_FSYNC;
    assert_int_equal(mkdir(f->d.cfg.spool, 0755), 0);
    snprintf(path, sizeof path, "%s/weftd.status", f->d.cfg.spool);
    ctl = status_ctl_new(f);
    start(f);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    assert_true(wait_file(path, 1, 5000));
    a = cl_connect(f);
    hello_ok(a, "fsync-stall", 0, 2);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);  /* after its fdatasync */

    weft_worker_hold(f->d.srv->syncer, 1);
    weft_status_hold(&f->d, 1);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    send_bytes_free(a, work_batch(0, 1, 10));
    assert_true(quiet_for(a, 200)); /* journaled, not synced: no ack */
    clock_sync_within_100ms(a, 9);
    b = cl_connect(f);
    env = answer_within_100ms(b, hello_frame("fsync-stall", 1, 2,
                                             WEFT_PROTOCOL_VERSION));
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    weft_frame_free_envelope(env);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    assert_true(wait_file(path, 0, 200)); /* not written while held */

    weft_status_hold(&f->d, 0);
    assert_true(wait_file(path, 1, 5000));
    weft_worker_hold(f->d.srv->syncer, 0);
    expect_ack(a, 0, 0, 1);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    __atomic_store_n(&ctl->quit, 1, __ATOMIC_SEQ_CST);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    assert_true(wait_file(path, 0, 5000)); /* removed at the end */
    stop(f);
}

/* max_buffered: while one connection holds a partly received frame of
 * more than max_buffered bytes, another session is not read (its
 * Definitions go unacknowledged); the first can still finish its frame
 * (no deadlock), which is journaled and acked, and then the second is
 * served. (A connection whose user is not known yet is not stalled:
 * its frames count apart, preauth.h, test_preauth.) */
static void test_max_buffered(void **state)
{
    fixture *f = *state;
    bytes big;
    size_t half;
    int a, b;

    f->d.cfg.max_frame = 1u << 20;
    f->d.cfg.max_buffered = 64u << 10;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "mb", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    b = cl_connect(f);
    hello_ok(b, "mb2", 0, 1);
    big = big_batch(0, 1, 100, 40000);
    assert_true(big.n > (80u << 10));
    half = big.n / 2;
    cl_send(a, big.p, half); /* the whole frame is allocated: > 64k */
    sleep_ms(100);
    send_bytes_free(b, defs_frame(1));
    assert_true(quiet_for(b, 300)); /* paused: no Ack */
    cl_send(a, big.p + half, big.n - half);
    expect_ack(a, 0, 0, 1);
    expect_ack(b, 1, 0, 1); /* resumed */
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    free(big.p);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_BUFFERED], 1);
    assert_int_equal(f->d.srv->buffered, 0);
    assert_int_equal(f->d.srv->npaused_buffered, 0);
}

/* Frames already read but not fed when a connection is paused (several
 * frames in one read) are kept and handled after it resumes: every
 * batch is acked, in order. */
static void test_max_buffered_pipelined(void **state)
{
    fixture *f = *state;
    bytes frames = { 0 }, big;
    size_t half;
    int a, b;

    f->d.cfg.max_frame = 1u << 20;
    f->d.cfg.max_buffered = 64u << 10;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "mbp", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    b = cl_connect(f);
    hello_ok(b, "mbp2", 0, 1);
    big = big_batch(0, 1, 0, 40000);
    half = big.n / 2;
    cl_send(a, big.p, half);
    sleep_ms(100);
    append_bytes(&frames, defs_frame(1));
    for (uint64_t i = 1; i <= 20; i++)
        append_bytes(&frames, work_batch(0, i, i * 10));
    append_bytes(&frames, goodbye_frame());
    send_bytes_free(b, frames);
    assert_true(quiet_for(b, 300));
    cl_send(a, big.p + half, big.n - half);
    expect_ack(a, 0, 0, 1);
    expect_ack(b, 1, 0, 1);
    for (uint64_t i = 1; i <= 20; i++)
        expect_ack(b, 0, 0, i);
    expect_eof(b);
    close(b);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    free(big.p);
    stop(f);
    assert_true(f->d.limit_hits[WEFT_LIMIT_MAX_BUFFERED] >= 1);
    assert_int_equal(f->d.srv->buffered, 0);
}

/* idle_timeout: no Hello, or half a frame, for that long gets an Error
 * naming the limit; a member that is quiet between frames keeps its
 * connection, and may then take a while for its next frame. */
static void test_idle_timeout(void **state)
{
    fixture *f = *state;
    bytes batch;
    int silent, quiet, half;

    f->d.cfg.idle_timeout = 1;
    start(f);
    silent = cl_connect(f);
    quiet = cl_connect(f);
    hello_ok(quiet, "idle", 0, 2);
    send_bytes_free(quiet, defs_frame(1));
    expect_ack(quiet, 1, 0, 1);
    half = cl_connect(f);
    hello_ok(half, "idle", 1, 2);
    cl_send(half, "\0\0\0\x20\x0a", 5); /* 32-byte frame, 1 byte of it */
    expect_error(&silent, WEFT_ELIMIT, "idle_timeout: no Hello within 1 s");
    expect_error(&half, WEFT_ELIMIT, "idle_timeout: a frame was begun (1 of "
                 "32 bytes arrived)");
    sleep_ms(1500);
    /* Quiet longer than the timeout, then a frame in two parts: the
     * timeout counts from the frame's first byte, not the last frame. */
    batch = work_batch(0, 1, 0);
    cl_send(quiet, batch.p, 3);
    sleep_ms(400);
    cl_send(quiet, batch.p + 3, batch.n - 3);
    free(batch.p);
    expect_ack(quiet, 0, 0, 1);
    send_bytes_free(quiet, goodbye_frame());
    expect_eof(quiet);
    close(quiet);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_IDLE_TIMEOUT], 2);
}

/* A session that sends nothing for session_timeout is closed; one that
 * sends Heartbeats (libweft, every WEFT_HEARTBEAT_MS) is kept. */
static void test_session_timeout(void **state)
{
    fixture *f = *state;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    int silent, alive;

    f->d.cfg.session_timeout = 1;
    start(f);
    silent = cl_connect(f);
    hello_ok(silent, "quiet", 0, 2);
    alive = cl_connect(f);
    hello_ok(alive, "quiet", 1, 2);
    env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    for (int i = 0; i < 8; i++) {
        send_bytes_free(alive, pack(&env));
        sleep_ms(300);
    }
    expect_error(&silent, WEFT_ELIMIT, "session_timeout: nothing received "
                 "for 1 s");
    send_bytes_free(alive, goodbye_frame());
    expect_eof(alive);
    close(alive);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_SESSION_TIMEOUT], 1);
}

/* SIGTERM: a connection between frames is closed at once; one in the
 * middle of a frame may finish it and gets its Ack before EOF; one that
 * never finishes its frame is closed after shutdown_timeout, and the
 * loop then ends by itself. */
static void test_drain(void **state)
{
    fixture *f = *state;
    bytes big;
    size_t half;
    int idle, mid, stuck;

    f->d.cfg.shutdown_timeout = 1;
    start(f);
    idle = cl_connect(f);
    hello_ok(idle, "drain", 0, 3);
    mid = cl_connect(f);
    hello_ok(mid, "drain", 1, 3);
    send_bytes_free(mid, defs_frame(1));
    expect_ack(mid, 1, 0, 1);
    big = big_batch(0, 1, 0, 1000);
    half = big.n / 2;
    cl_send(mid, big.p, half);
    stuck = cl_connect(f);
    hello_ok(stuck, "drain", 2, 3);
    cl_send(stuck, "\0\0\0\x20\x0a", 5);
    sleep_ms(100);
    assert_int_equal(uv_async_send(&f->drain), 0);
    expect_eof(idle);
    close(idle);
    cl_send(mid, big.p + half, big.n - half);
    expect_ack(mid, 0, 0, 1);
    expect_eof(mid);
    close(mid);
    expect_eof(stuck); /* after shutdown_timeout */
    close(stuck);
    free(big.p);
    assert_int_equal(pthread_join(f->thread, NULL), 0);
    f->running = 0;
    assert_null(f->d.srv->conns);
    weft_trace_free_all(&f->d);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* Refusals for limits checked behind the server (decoder, session,
 * trace) are counted under the limit's name, for weft status. */
static void test_limit_counters(void **state)
{
    fixture *f = *state;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    char longer[100];
    weft_record d[1];
    bytes rec;
    int fd;

    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    d[0] = str(0, longer); /* max_string is 64 */
    rec = encode(d, 1, 0, 0);
    defs.seq = 1;
    defs.records.data = rec.p;
    defs.records.len = rec.n;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "counted", 0, 1);
    send_bytes_free(fd, pack(&env));
    free(rec.p);
    expect_error(&fd, WEFT_ETOOBIG, "string of 99 bytes exceeds the limit");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("counted2", 0, 17, WEFT_PROTOCOL_VERSION));
    expect_error(&fd, WEFT_ELIMIT, "max_members (16)");
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_STRING], 1);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_MEMBERS], 1);
    assert_string_equal(weft_limit_name(WEFT_LIMIT_MAX_BUFFERED),
                        "max_buffered");
}

/* A Definitions frame of n strings of 40 bytes, ids from first on. */
static bytes strings_frame(uint64_t seq, uint32_t first, uint32_t n)
{
    weft_record d[16];
    char text[16][41];

    assert_true(n <= 16);
    for (uint32_t i = 0; i < n; i++) {
        snprintf(text[i], sizeof text[i], "%040u", first + i);
        d[i] = str(first + i, text[i]);
    }
    return defs_records_frame(seq, d, n);
}

/* max_definition_bytes bounds a trace's definitions, all its members
 * together (each record counted with WEFT_DEF_OVERHEAD more): the
 * Definitions that would go beyond are refused naming the limit, and
 * what was refused is not charged (a smaller one still fits); another
 * trace has its own. Issue 30, finding 3. */
static void test_max_definition_bytes(void **state)
{
    fixture *f = *state;
    int a, b, c;

    /* 16 strings: 16 x (~43 + 64) = ~1.7k; a bound of 3k takes one
     * frame, not two. */
    f->d.cfg.max_definition_bytes = 3000;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "defbytes", 0, 2);
    send_bytes_free(a, strings_frame(1, 0, 16));
    expect_ack(a, 1, 0, 1);
    b = cl_connect(f);
    hello_ok(b, "defbytes", 1, 2);
    send_bytes_free(b, strings_frame(1, 0, 16));
    expect_error(&b, WEFT_ELIMIT, "over max_definition_bytes (3000)");
    /* What was refused was not charged: 8 more still fit. */
    send_bytes_free(a, strings_frame(2, 16, 8));
    expect_ack(a, 1, 0, 2);
    c = cl_connect(f);
    hello_ok(c, "defbytes-other", 0, 1);
    send_bytes_free(c, strings_frame(1, 0, 16));
    expect_ack(c, 1, 0, 1);
    send_bytes_free(c, goodbye_frame());
    expect_eof(c);
    close(c);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_DEFINITION_BYTES], 1);
}

/* A Definitions frame of string 0 (when `string`) and ThreadName
 * records naming threads first .. first + n - 1 with it. */
static bytes thread_names_frame(uint64_t seq, int string, uint32_t first,
                                uint32_t n)
{
    weft_record d[17];
    size_t k = 0;

    assert_true(n <= 16);
    if (string)
        d[k++] = str(0, "worker");
    for (uint32_t i = 0; i < n; i++) {
        memset(&d[k], 0, sizeof d[k]);
        d[k].type = WEFT_REC_ThreadName;
        d[k].u.ThreadName.thread = first + i;
        d[k++].u.ThreadName.name = 0;
    }
    return defs_records_frame(seq, d, k);
}

/* A thread a ThreadName names becomes a location of the archive, also
 * one that sends nothing: it is charged WEFT_QUOTA_LOCATION_BYTES to
 * max_user_spool_bytes before it exists, once however often it is named,
 * and the Definitions that would go past the quota are refused naming
 * it. Issue 30, finding 5. */
static void test_thread_names_charged(void **state)
{
    fixture *f = *state;
    int a;

    /* The Hello's entry and 2 named threads (16 KiB) fit in 20 KiB, 2
     * more do not (the fixture's max_locations is 4). */
    f->d.cfg.max_user_spool_bytes = 20u << 10;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "named", 0, 1);
    send_bytes_free(a, thread_names_frame(1, 1, 0, 2));
    expect_ack(a, 1, 0, 1);
    send_bytes_free(a, thread_names_frame(2, 0, 0, 2));  /* renamed: free */
    expect_ack(a, 1, 0, 2);
    send_bytes_free(a, thread_names_frame(3, 0, 2, 2));
    expect_error(&a, WEFT_ELIMIT, "ThreadName definitions name 2 threads "
                 "that sent nothing: uid");
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_USER_SPOOL_BYTES], 1);
}

/* Near the file descriptor limit a connection is refused with an Error
 * (the client retries) instead of failing later in accept or the
 * journal. */
static void test_fd_limit(void **state)
{
    fixture *f = *state;
    int fd;

    f->d.srv->fd_limit = WEFT_FD_RESERVE + 4; /* below what the process uses */
    start(f);
    fd = cl_connect(f);
    expect_error(&fd, WEFT_ELIMIT, "near its file descriptor limit");
    f->d.srv->fd_limit = 0; /* unknown or unlimited: no check */
    fd = cl_connect(f);
    hello_ok(fd, "fds", 0, 1);
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_FD_LIMIT], 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_max_buffered),
        T(test_max_buffered_pipelined),
        T(test_idle_timeout),
        T(test_session_timeout),
        T(test_drain),
        T(test_fd_limit),
        T(test_limit_counters),
        T(test_max_definition_bytes),
        T(test_thread_names_charged),
        T(test_stalled_disk),
        T(test_stalled_disk_hello),
        T(test_stalled_disk_status),
        T(test_hello_disk_fails),
        T(test_stop_while_hello_waits),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
