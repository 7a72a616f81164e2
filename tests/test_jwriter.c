/* test_jwriter.c - journal opens and appends on the writer threads
 * (daemon/ingest/jwriter.c), over a real loop and a real journal.
 *
 * Entries come back in the order submitted, written, with d->srv->buffered
 * and the member's counts back at 0; a failed append (a file size limit,
 * as on a full disk) of a Definitions entry fails that entry and every
 * later one of the member without writing them, so the journal has no
 * gap; a failed EventBatch is not stored but comes back written as a
 * refused entry saying errno, appended if a header still fits (else
 * marked lost), and the member's later entries are still written;
 * stopping with entries
 * queued writes and hands them all back, and the loop closes clean. An
 * entry with an `open` step opens its member's journal, then is appended
 * to it; a failed open comes back with its code and message and appends
 * nothing. Opens and appends are held apart: either thread stalled, the
 * other's entries still come back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jwriter.h"
#include "testutil.h"
#include "memberin.h"
#include "server.h"
#include "weft_errors.h"

#define MAX_DONE 64

typedef struct fixture {
    char *dir, *path;  /* scratch directory, its journal rank-0.wj */
    char *path2;       /* m2's journal, rank-1.wj */
    uv_loop_t loop;
    weft_daemon d;
    weft_memberin m;
    weft_memberin m2;   /* a member whose journal is not open yet */
    uint64_t done_seq[MAX_DONE];
    int done_rc[MAX_DONE], done_err[MAX_DONE];
    int done_kind[MAX_DONE], done_lost[MAX_DONE];
    uint64_t done_base[MAX_DONE];
    const weft_memberin *done_member[MAX_DONE];
    char done_msg[MAX_DONE][64];
    size_t ndone;
} fixture;

static fixture *current;

static void on_done(weft_daemon *d, weft_jentry *j)
{
    fixture *f = current;

    assert_ptr_equal(d, &f->d);
    assert_true(j->in == &f->m || j->in == &f->m2);
    assert_true(f->ndone < MAX_DONE);
    f->done_seq[f->ndone] = j->e.seq;
    f->done_rc[f->ndone] = j->rc;
    f->done_err[f->ndone] = j->err;
    f->done_kind[f->ndone] = j->e.kind;
    f->done_lost[f->ndone] = j->lost;
    f->done_base[f->ndone] = j->e.base_time;
    f->done_member[f->ndone] = j->in;
    snprintf(f->done_msg[f->ndone], sizeof f->done_msg[0], "%s",
             j->msg ? j->msg : "");
    f->ndone++;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    assert_non_null(f);
    f->dir = tu_tmpdir("wjw");
    f->path = tu_path(f->dir, "rank-0.wj");
    f->path2 = tu_path(f->dir, "rank-1.wj");
    assert_int_equal(uv_loop_init(&f->loop), 0);
    assert_int_equal(weft_daemon_init(&f->d), 0);
    f->d.loop = &f->loop;
    assert_int_equal(weft_journal_open(f->path, &f->m.journal, NULL), 0);
    assert_int_equal(weft_jwriter_start(&f->d, on_done), 0);
    current = f;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    weft_jwriter_stop(&f->d);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    weft_daemon_free(&f->d);
    weft_journal_close(f->m.journal);
    if (f->m2.journal)
        weft_journal_close(f->m2.journal);
    tu_rmrf(f->dir);
    free(f->path);
    free(f->path2);
    free(f->dir);
    free(f);
    return 0;
}

/* Entry seq with a payload of 100 * seq bytes of seq. */
static void submit_kind(fixture *f, uint64_t seq, int kind)
{
    weft_jentry *j = weft_jentry_new((uint32_t)(100 * seq));

    assert_non_null(j);
    memset(j->data, (int)seq, j->e.len);
    j->e.kind = (uint8_t)kind;
    j->e.seq = seq;
    j->in = &f->m;
    weft_jwriter_submit(&f->d, j);
}

static void submit(fixture *f, uint64_t seq)
{
    submit_kind(f, seq, WEFT_JE_EVENTS);
}

/* weft_member_open's part for m2: its journal at path2. */
static int open_m2(weft_memberin *in, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return weft_journal_open(current->path2, &in->journal, NULL);
}

static int open_fails(weft_memberin *in, char *err, size_t errlen)
{
    (void)in;
    snprintf(err, errlen, "cannot make it: %s", "no room");
    return WEFT_EIO;
}

/* Entry seq of m2 (as submit) with an open step. */
static void submit_open(fixture *f, uint64_t seq,
                        int (*open)(weft_memberin *, char *, size_t))
{
    weft_jentry *j = weft_jentry_new((uint32_t)(100 * seq));

    assert_non_null(j);
    memset(j->data, (int)seq, j->e.len);
    j->e.kind = WEFT_JE_HELLO;
    j->e.seq = seq;
    j->in = &f->m2;
    j->open = open;
    weft_jwriter_submit(&f->d, j);
}

/* Runs the loop until n entries came back (at most 5 s). */
static void run_until(fixture *f, size_t n)
{
    for (int i = 0; i < 500 && f->ndone < n; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (f->ndone < n)
            usleep(10000);
    }
    assert_int_equal(f->ndone, n);
}

/* Seqs of the journal at path's entries, checking their payloads. */
static size_t journal_seqs_at(const char *path, uint64_t *seqs, size_t max)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    size_t n = 0;

    assert_int_equal(weft_journal_reader_open(path, &r), 0);
    while (n < max && weft_journal_reader_next(r, &e) == 1) {
        if (e.kind == WEFT_JE_REFUSED) {  /* a batch not stored */
            assert_int_equal(e.len, 0);
            seqs[n++] = e.seq;
            continue;
        }
        assert_int_equal(e.len, 100 * e.seq);
        assert_int_equal(e.payload[0], (uint8_t)e.seq);
        assert_int_equal(e.payload[e.len - 1], (uint8_t)e.seq);
        seqs[n++] = e.seq;
    }
    weft_journal_reader_close(r);
    return n;
}

/* Seqs of m's journal. */
static size_t journal_seqs(const fixture *f, uint64_t *seqs, size_t max)
{
    return journal_seqs_at(f->path, seqs, max);
}

static void test_in_order(void **state)
{
    fixture *f = *state;
    uint64_t seqs[MAX_DONE];

    for (uint64_t s = 1; s <= 40; s++)
        submit(f, s);
    assert_int_equal(weft_jwriter_pending(&f->d), 40);
    assert_int_equal(f->m.pending, 40);
    assert_true(f->d.srv->buffered > 40 * 100);
    /* The loop runs while entries are out, and ends when all are back. */
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 40);
    for (size_t i = 0; i < 40; i++) {
        assert_int_equal(f->done_seq[i], i + 1);
        assert_int_equal(f->done_rc[i], 0);
    }
    assert_int_equal(weft_jwriter_pending(&f->d), 0);
    assert_int_equal(f->m.pending, 0);
    assert_int_equal(f->m.pending_bytes, 0);
    assert_int_equal(f->d.srv->buffered, 0);
    assert_int_equal(journal_seqs(f, seqs, MAX_DONE), 40);
    for (size_t i = 0; i < 40; i++)
        assert_int_equal(seqs[i], i + 1);
}

/* Limits the file size (as a full disk) to what m's journal holds and
 * `room` bytes more; restore with fsize_restore. */
static void fsize_limit(fixture *f, uint64_t room, struct rlimit *old)
{
    struct rlimit lim;

    assert_int_equal(getrlimit(RLIMIT_FSIZE, old), 0);
    signal(SIGXFSZ, SIG_IGN);
    lim = *old;
    lim.rlim_cur = weft_journal_size(f->m.journal) + room;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
}

static void fsize_restore(const struct rlimit *old)
{
    assert_int_equal(setrlimit(RLIMIT_FSIZE, old), 0);
    signal(SIGXFSZ, SIG_DFL);
}

/* Entries 1 and 2 written, then 3 to 5 of kind while the file may grow
 * by entry 3's header and a little (fsize_limit); all 5 came back. */
static void write_past_full(fixture *f, int kind)
{
    struct rlimit old;

    submit(f, 1);
    submit(f, 2);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    fsize_limit(f, WEFT_JOURNAL_HEADER + 5, &old);
    for (uint64_t s = 3; s <= 5; s++)
        submit_kind(f, s, kind);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    fsize_restore(&old);
    assert_int_equal(f->ndone, 5);
}

static void test_failure_leaves_no_gap(void **state)
{
    fixture *f = *state;
    uint64_t seqs[MAX_DONE];

    /* Definitions 3 fails (EFBIG, as ENOSPC on a full disk), and 4 and
     * 5, which would fit, are not written after it. */
    write_past_full(f, WEFT_JE_DEFS);
    assert_int_equal(f->done_rc[1], 0);
    for (size_t i = 2; i < 5; i++) {
        assert_int_equal(f->done_seq[i], i + 1);
        assert_int_equal(f->done_rc[i], WEFT_EIO);
        assert_int_equal(f->done_err[i], EFBIG);
    }
    assert_true(f->m.write_failed);
    assert_int_equal(journal_seqs(f, seqs, MAX_DONE), 2);
    /* Once the loop thread clears the mark, appends go on after 2. */
    f->m.write_failed = 0;
    submit(f, 3);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->done_rc[5], 0);
    assert_int_equal(journal_seqs(f, seqs, MAX_DONE), 3);
    assert_int_equal(seqs[2], 3);
}

/* Batches that do not fit are not stored: each comes back rc 0 as a
 * refused entry of reason WEFT_REFUSED_ERRNO + EFBIG, the first one's
 * refused entry in the journal (a header fits), the next ones lost (not
 * even that fits); the member is not marked, and once there is room the
 * next batch is written after them. */
static void test_failed_batch_not_stored(void **state)
{
    fixture *f = *state;
    uint64_t seqs[MAX_DONE];

    write_past_full(f, WEFT_JE_EVENTS);
    for (size_t i = 2; i < 5; i++) {
        assert_int_equal(f->done_seq[i], i + 1);
        assert_int_equal(f->done_rc[i], 0);
        assert_int_equal(f->done_err[i], EFBIG);
        assert_int_equal(f->done_kind[i], WEFT_JE_REFUSED);
        assert_int_equal(f->done_base[i], WEFT_REFUSED_ERRNO + EFBIG);
        assert_int_equal(f->done_lost[i], i > 2);
    }
    assert_false(f->m.write_failed);
    assert_int_equal(f->d.srv->buffered, 0);
    assert_int_equal(journal_seqs(f, seqs, MAX_DONE), 3);
    assert_int_equal(seqs[2], 3);
    submit(f, 6);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->done_rc[5], 0);
    assert_int_equal(f->done_kind[5], WEFT_JE_EVENTS);
    assert_int_equal(journal_seqs(f, seqs, MAX_DONE), 4);
    assert_int_equal(seqs[3], 6);
}

static void test_stop_writes_what_is_queued(void **state)
{
    fixture *f = *state;
    uint64_t seqs[MAX_DONE];

    for (uint64_t s = 1; s <= 10; s++)
        submit(f, s);
    weft_jwriter_stop(&f->d);  /* without running the loop */
    assert_int_equal(f->ndone, 10);
    assert_int_equal(f->d.srv->buffered, 0);
    assert_int_equal(journal_seqs(f, seqs, MAX_DONE), 10);
    weft_jwriter_stop(&f->d);  /* idempotent */
}

static void test_open_then_append(void **state)
{
    fixture *f = *state;
    uint64_t seqs[MAX_DONE];

    submit_open(f, 1, open_m2);
    assert_int_equal(f->m2.pending, 1);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 1);
    assert_int_equal(f->done_rc[0], 0);
    assert_string_equal(f->done_msg[0], "");
    assert_non_null(f->m2.journal);
    assert_int_equal(f->m2.pending, 0);
    assert_int_equal(f->m2.pending_bytes, 0);
    assert_int_equal(f->d.srv->buffered, 0);
    assert_int_equal(journal_seqs_at(f->path2, seqs, MAX_DONE), 1);
    assert_int_equal(seqs[0], 1);
}

static void test_open_fails(void **state)
{
    fixture *f = *state;

    submit_open(f, 1, open_fails);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 1);
    assert_int_equal(f->done_rc[0], WEFT_EIO);
    assert_string_equal(f->done_msg[0], "cannot make it: no room");
    assert_null(f->m2.journal);
    assert_false(f->m2.write_failed);
    assert_int_equal(f->d.srv->buffered, 0);
    assert_int_equal(access(f->path2, F_OK), -1);
}

static void test_threads_held_apart(void **state)
{
    fixture *f = *state;

    /* Appends stalled: an open (and its entry) comes back. */
    weft_jwriter_hold(&f->d, WEFT_JWRITER_APPENDS);
    submit(f, 1);
    submit_open(f, 1, open_m2);
    run_until(f, 1);
    assert_ptr_equal(f->done_member[0], &f->m2);
    assert_int_equal(f->done_rc[0], 0);
    assert_int_equal(f->m.pending, 1);
    /* Opens stalled instead: the append comes back. */
    weft_journal_close(f->m2.journal); /* its next entry opens again */
    f->m2.journal = NULL;
    weft_jwriter_hold(&f->d, WEFT_JWRITER_OPENS);
    submit_open(f, 2, open_fails);
    run_until(f, 2);
    assert_ptr_equal(f->done_member[1], &f->m);
    assert_int_equal(f->done_rc[1], 0);
    assert_int_equal(f->m2.pending, 1);
    weft_jwriter_hold(&f->d, 0);
    run_until(f, 3);
    assert_ptr_equal(f->done_member[2], &f->m2);
    assert_int_equal(f->done_rc[2], WEFT_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_batch_not_stored, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failure_leaves_no_gap, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stop_writes_what_is_queued,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_then_append, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_open_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_held_apart, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
