/* acks.c - what weftd answers a member's frames with (see acks.h):
 * Acks at once, or with durability = fsync after a batched fdatasync of
 * its journal on the syncer thread; and the one way an envelope goes out
 * on a connection.
 */
#include "acks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "jcache.h"
#include "members.h"
#include "weft_errors.h"
#include "worker.h"

/* See acks.h. */
void weft_conn_send_env(weft_conn *c, const Weft__Envelope *env)
{
    uint8_t *frame;
    ssize_t n = weft_frame_pack(env, &frame);

    if (n < 0) {
        weft_conn_close(c);
        return;
    }
    weft_conn_send(c, frame, (size_t)n);
}

static void send_ack_now(weft_conn *c, int definitions, uint32_t loc,
                         uint64_t seq)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Ack ack = WEFT__ACK__INIT;

    ack.definitions = definitions;
    ack.location = loc;
    ack.seq = seq;
    env.msg_case = WEFT__ENVELOPE__MSG_ACK;
    env.ack = &ack;
    weft_conn_send_env(c, &env);
}

/* ---- durability = fsync: acks after a batched fdatasync ---- */

/* One fdatasync of a member's journal, on d->srv->syncer (worker.h): a thread
 * of its own, so syncs wait neither for conversions nor for each
 * other's place in libuv's pool. */
typedef struct sync_job {
    weft_work work;       /* first: the job is its work */
    weft_memberin *m;
    weft_journal *journal;
    int rc;
    int err;
} sync_job;


static void sync_work(weft_work *w)
{
    sync_job *j = (sync_job *)w;

    j->rc = weft_journal_sync(j->journal);
    j->err = errno;
}

static void sync_done(weft_work *w)
{
    sync_job *j = (sync_job *)w;
    weft_memberin *m = j->m;
    weft_conn *c = m->conn;

    m->d->jobs--;
    m->sync_running = 0;
    if (c && j->rc < 0) {
        weft_conn_fail(c, WEFT_EIO, "cannot sync the journal of this process "
                       "in %s: %s", weft_member_dir(m), strerror(j->err));
    } else if (c) {
        for (size_t i = 0; i < m->syncing.n; i++) {
            const weft_ack *a = &m->syncing.v[i];
            send_ack_now(c, a->definitions, a->location, a->seq);
        }
    }
    m->syncing.n = 0;
    free(j);
    if (!weft_member_written(m)) {
        weft_ack_kick_sync(m);
        weft_jcache_idle(m);
    }
    if (c && m->close_when_synced && !m->sync_running && !m->waiting.n) {
        m->close_when_synced = 0;
        weft_conn_close(c); /* after the Acks of all before its Goodbye */
    }
}

/* See acks.h. */
void weft_ack_kick_sync(weft_memberin *m)
{
    weft_daemon *d = m->d;
    weft_ackq tmp;
    sync_job *j;

    if (m->sync_running || m->waiting.n == 0 || !m->journal ||
        !d->srv->syncer)
        return;
    j = calloc(1, sizeof *j);
    if (!j)
        return; /* retried with the next ack */
    j->m = m;
    j->journal = m->journal;
    if (weft_worker_submit(d->srv->syncer, &j->work, sync_work,
                           sync_done) < 0) {
        free(j);
        return; /* retried with the next ack */
    }
    /* done runs on this thread, later: the swap is in place by then */
    tmp = m->syncing;
    m->syncing = m->waiting;
    m->waiting = tmp;
    m->waiting.n = 0;
    m->sync_running = 1;
    d->jobs++;
}

/* See acks.h. */
void weft_ack_send(weft_conn *c, int definitions, uint32_t loc, uint64_t seq)
{
    weft_memberin *m = c->member;
    weft_ackq *q;

    if (c->d->cfg.durability != WEFT_DURABLE_FSYNC || !m) {
        send_ack_now(c, definitions, loc, seq);
        return;
    }
    q = &m->waiting;
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        weft_ack *v = realloc(q->v, cap * sizeof *v);
        if (!v) {
            weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
            return;
        }
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n++] = (weft_ack){ (uint8_t)definitions, loc, seq };
    weft_ack_kick_sync(m);
}
