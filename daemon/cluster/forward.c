/* forward.c - a node's processes, forwarded to its head (see forward.h). */
#include "forward.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "acks.h"
#include "frame.h"
#include "hashtab.h"
#include "parts.h"
#include "procwatch.h"
#include "reserve.h"
#include "server.h"
#include "uidmap.h"
#include "weft_errors.h"

/* How long a forwarded connection's end waits for its process to be
 * gone (the kernel closes a process's sockets before it ends). */
#define WEFT_FORWARD_GONE_MS 1000
#define WEFT_FORWARD_GONE_POLL_MS 50

/* One forwarded connection (weft_conn.forward). */
typedef struct fwd {
    uint32_t id;            /* its number on the link */
    weft_conn *c;           /* NULL once closed (its end not told yet) */
    int watched;            /* its process can be watched here */
    uint32_t pid;
    uint64_t start;         /* the process's start time (procwatch.h) */
    int goodbye;            /* it sent its Goodbye */
    uint32_t head_max;      /* the head's max_frame (its HelloAck's) */
    uint64_t ended_at;      /* uv_now() its connection closed */
    uint8_t *hello;         /* its Hello (or Query), packed, until it
                               goes out */
    size_t hello_len;
    int sent;               /* its Hello went out on the current link */
    int waits_link;         /* paused: no link yet */
    int waits_queue;        /* paused: the link's queue is full */
    int told;               /* the head ended it: no `closed` back */
    int asker;              /* the weft command's Query, not a process */
    int waits_user;         /* paused: its user's share is full */
    uint32_t uid;           /* its user, as the head is told */
} fwd;

/* A user's share of the link's queue. */
typedef struct share {
    uint32_t uid;           /* first: uidmap.h */
    uint64_t queued;        /* bytes of theirs not written yet */
    int full;               /* their connections are paused */
} share;

typedef struct fwd_cell {
    uint32_t key;           /* fwd.id (never 0) */
    fwd *f;
} fwd_cell;

typedef struct weft_forward {
    weft_hashtab table;     /* fwd_cell */
    uint32_t next_id;
    int queue_full;         /* connections were paused for the queue */
    uv_timer_t gone_timer;  /* while ends wait for their processes */
    int have_timer;
    size_t ending;          /* such ends */
    weft_uidmap shares;     /* share cells, of users with bytes queued */
} weft_forward;

int weft_forward_init(weft_daemon *d)
{
    if (!(d->forward = calloc(1, sizeof *d->forward)))
        return WEFT_ENOMEM;
    uv_timer_init(d->loop, &d->forward->gone_timer);
    d->forward->gone_timer.data = d;
    d->forward->have_timer = 1;
    return 0;
}

static void forget(weft_forward *fw, fwd *f)
{
    weft_hashtab_del(&fw->table, f->id, sizeof(fwd_cell));
    free(f->hello);
    free(f);
}

/* Reading from f's connection stops while it waits for the link, for
 * the link's queue or for its user's share of it, and goes on when it
 * waits for none. */
static void set_wait(fwd *f, int *flag, int on)
{
    int before = f->waits_link || f->waits_queue || f->waits_user;

    *flag = on;
    if (before == (f->waits_link || f->waits_queue || f->waits_user))
        return;
    if (before)
        weft_conn_resume(f->c);
    else
        weft_conn_pause(f->c);
}

/* Sends a NodeRelay of f: its frame (bytes, len) or its end. */
static int send_relay(weft_daemon *d, fwd *f, const uint8_t *bytes,
                      size_t len, int closed)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    r.member = f->id;
    r.frame.data = (uint8_t *)bytes;
    r.frame.len = len;
    r.closed = closed;
    if (bytes == f->hello) { /* the Hello vouches for its user */
        r.uid = f->c->peer_uid;
        r.gid = f->c->peer_gid;
        r.pid = f->c->peer_pid;
    }
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    env.node_relay = &r;
    return weft__uplink_send_of(d, &env, f->uid);
}

/* Once something was written: pauses every forwarded connection while
 * the link's queue holds more than half of max_buffered. */
static void check_queue(weft_daemon *d, weft_forward *fw)
{
    if (fw->queue_full || weft__uplink_queued(d) <= d->cfg.max_buffered / 2)
        return;
    fw->queue_full = 1;
    weft_dlog(d, WEFT_LOG_DEBUG, "%zu bytes wait to be written to the head: "
              "forwarded connections paused", weft__uplink_queued(d));
    for (size_t i = 0; i < fw->table.ncells; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        if (cell && cell->f->c && !cell->f->asker)
            set_wait(cell->f, &cell->f->waits_queue, 1);
    }
}

/* Sends f's Hello: it is the head's from now on. */
static void send_hello(weft_daemon *d, fwd *f)
{
    if (send_relay(d, f, f->hello, f->hello_len, 0) < 0)
        return; /* the link failed: f waits for the next */
    f->sent = 1;
    free(f->hello); /* a link that ends closes its connection */
    f->hello = NULL;
    set_wait(f, &f->waits_link, 0);
}

/* c's first frame env goes to the head as a new connection of the
 * link: its record (c->forward), or NULL after failing c. */
static fwd *fwd_new(weft_conn *c, const Weft__Envelope *env)
{
    weft_forward *fw = c->d->forward;
    fwd_cell *cell = NULL;
    fwd *f;
    ssize_t n;

    if (!fw || !(f = calloc(1, sizeof *f))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    if ((n = weft_frame_pack_bare(env, &f->hello)) < 0) {
        free(f);
        weft_conn_fail(c, WEFT_ENOMEM, "cannot pack the %s: %s",
                       weft_frame_kind_name(env->msg_case),
                       weft_strerror((int)n));
        return NULL;
    }
    f->hello_len = (size_t)n;
    do /* a number no other connection has on the link (without
          * WEFT_PART_ID_BIT: a part's members have it, parts.h) */
        f->id = fw->next_id = (fw->next_id + 1) & ~WEFT_PART_ID_BIT
                                  ? (fw->next_id + 1) & ~WEFT_PART_ID_BIT
                                  : 1;
    while (weft_hashtab_find(&fw->table, f->id, sizeof *cell));
    if (!(cell = weft_hashtab_get(&fw->table, f->id, sizeof *cell))) {
        free(f->hello);
        free(f);
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    cell->f = f;
    f->c = c;
    c->forward = f;
    return f;
}

static int on_hello(weft_conn *c, const Weft__Hello *h, uint32_t uid)
{
    weft_daemon *d = c->d;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    weft_forward *fw = d->forward;
    share *s;
    fwd *f;
    int rc;

    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = (Weft__Hello *)h;
    if (!(f = fwd_new(c, &env)))
        return WEFT_ENOMEM;
    c->peer_uid = uid; /* what the head is told (the kernel's, MUNGE's) */
    f->uid = uid;
    f->pid = h->pid;
    f->watched = weft_proc_watchable(c, h, uid, &f->start);
    if ((rc = weft_conn_event(c, WEFT_CONN_EV_HELLO, NULL)) < 0)
        return rc; /* closed: weft_forward closed takes f */
    weft_conn_log(c, WEFT_LOG_DEBUG, "trace '%s' rank %u: forwarded to the "
                  "head as member %u", h->trace, (unsigned)h->rank,
                  (unsigned)f->id);
    if (fw->queue_full)
        set_wait(f, &f->waits_queue, 1);
    if ((s = weft_uidmap_lookup(&fw->shares, uid, sizeof *s)) && s->full)
        set_wait(f, &f->waits_user, 1); /* its user's share is full */
    send_hello(d, f);
    if (!f->sent) /* no link yet: its next frames wait with it */
        set_wait(f, &f->waits_link, 1);
    check_queue(d, fw);
    return 0;
}

/* Questions of uid on their way to the head (or answered). */
static uint64_t askers_of(const weft_forward *fw, uint32_t uid)
{
    uint64_t n = 0;

    for (size_t i = 0; i < fw->table.ncells; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        n += cell && cell->f->asker && cell->f->c &&
             cell->f->c->peer_uid == uid;
    }
    return n;
}

/* The weft command's Query on this node's Unix socket: the head keeps
 * the catalog and answers it (its relayed answer goes back on c), or,
 * while there is no link, c is told so at once. A user has at most
 * max_questions_per_user on their way, as on the head (each is one of
 * the link's max_connections there). */
static int on_query(weft_conn *c, const Weft__Query *q)
{
    weft_daemon *d = c->d;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    uint32_t head_max = weft__uplink_head_max(d);
    uint64_t n;
    fwd *f;
    int rc;

    if (!head_max) {
        weft_conn_fail(c, WEFT_ECONNECT, "this weftd is a node: its head "
                       "(%s) keeps the catalog and answers the weft "
                       "command, and it is not linked now (weft status "
                       "says why); try again, or ask on the head",
                       d->cfg.cluster_head);
        return WEFT_ECONNECT;
    }
    if (d->forward && !weft_reserve_conn_is_admin(c) &&
        (n = askers_of(d->forward, c->peer_uid)) >=
            d->cfg.max_questions_per_user) {
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_QUESTIONS_PER_USER,
                             WEFT_ELIMIT, "you have %" PRIu64 " questions "
                             "on their way to the head already "
                             "(max_questions_per_user %" PRIu64 "); ask "
                             "again when they are done", n,
                             d->cfg.max_questions_per_user);
        return WEFT_ELIMIT;
    }
    env.msg_case = WEFT__ENVELOPE__MSG_QUERY;
    env.query = (Weft__Query *)q;
    if (!(f = fwd_new(c, &env)))
        return WEFT_ENOMEM;
    f->asker = 1;
    f->uid = c->peer_uid;
    f->pid = c->peer_pid;
    f->head_max = head_max;
    if ((rc = weft_conn_event(c, WEFT_CONN_EV_QUERY, NULL)) < 0)
        return rc;
    if (q->kind == WEFT__QUERY__KIND__IMPORT) {
        /* its rows follow in one frame of up to max_frame, as on the
         * head (ask.c); one larger than the head takes is refused
         * saying so (on_frame) */
        if ((rc = weft_conn_event(c, WEFT_CONN_EV_IMPORT_QUERY, NULL)) < 0)
            return rc;
        c->reader.max_frame = (uint32_t)d->cfg.max_frame;
    } else {
        weft_conn_pause(c); /* nothing more comes: the answer goes */
    }
    weft_conn_log(c, WEFT_LOG_DEBUG, "Query (kind %d) of uid %u forwarded "
                  "to the head as asker %u", (int)q->kind,
                  (unsigned)c->peer_uid, (unsigned)f->id);
    send_hello(d, f);
    if (!f->sent) {
        weft_conn_fail(c, WEFT_ECONNECT, "the link to the head failed as "
                       "the question went out; try again");
        return WEFT_ECONNECT;
    }
    check_queue(d, d->forward);
    return 0;
}

static int on_frame(weft_conn *c, const Weft__Envelope *env,
                    enum weft_conn_event ev)
{
    weft_daemon *d = c->d;
    fwd *f = c->forward;
    uint8_t *bytes = NULL;
    ssize_t n;
    int rc;

    if ((rc = weft_conn_event(c, ev, weft_frame_kind_name(env->msg_case))) <
        0)
        return rc;
    if (ev == WEFT_CONN_EV_GOODBYE)
        f->goodbye = 1;
    if ((n = weft_frame_pack_bare(env, &bytes)) < 0) {
        weft_conn_fail(c, WEFT_ENOMEM, "cannot pack a %s: %s",
                       weft_frame_kind_name(env->msg_case),
                       weft_strerror((int)n));
        return WEFT_ENOMEM;
    }
    if (f->head_max && (size_t)n > f->head_max) {
        /* The head would end the whole link for it. */
        free(bytes);
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_FRAME, WEFT_ETOOBIG,
                             "frame of %zd bytes: the head takes at most "
                             "%u (its max_frame is below this node's)", n,
                             (unsigned)f->head_max);
        return WEFT_ETOOBIG;
    }
    send_relay(d, f, bytes, (size_t)n, 0);
    free(bytes);
    if (f->asker) /* its import's rows: the answer comes next */
        weft_conn_pause(c);
    if (d->forward)
        check_queue(d, d->forward);
    return 0;
}

/* Tells the head f's connection ended (and whether its process did),
 * and forgets f. */
static void tell_end(weft_daemon *d, fwd *f, int gone)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    r.member = f->id;
    r.closed = 1;
    r.gone = gone;
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    env.node_relay = &r;
    weft__uplink_send(d, &env);
    forget(d->forward, f);
}

/* The ends that wait for their processes, into *v (free it); their
 * count. */
static size_t ending(weft_forward *fw, fwd ***v)
{
    size_t n = 0;

    *v = fw->ending ? malloc(fw->ending * sizeof **v) : NULL;
    for (size_t i = 0; *v && i < fw->table.ncells && n < fw->ending; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        if (cell && !cell->f->c)
            (*v)[n++] = cell->f;
    }
    return n;
}

/* Every WEFT_FORWARD_GONE_POLL_MS while ends wait: each goes once its
 * process is gone, or after WEFT_FORWARD_GONE_MS as a disconnection. */
static void on_gone_timer(uv_timer_t *t)
{
    weft_daemon *d = t->data;
    weft_forward *fw = d->forward;
    uint64_t now = uv_now(d->loop);
    fwd **v;
    size_t n = ending(fw, &v);

    for (size_t i = 0; i < n; i++) {
        int gone = weft_proc_gone(v[i]->pid, v[i]->start);
        if (gone || now - v[i]->ended_at >= WEFT_FORWARD_GONE_MS) {
            fw->ending--;
            tell_end(d, v[i], gone);
        }
    }
    free(v);
    if (!fw->ending)
        uv_timer_stop(t);
}

/* The ends that wait for their processes are dropped: the head ended
 * them with the link. */
static void drop_ending(weft_forward *fw)
{
    fwd **v;
    size_t n;

    if (!fw)
        return;
    n = ending(fw, &v);
    for (size_t i = 0; i < n; i++)
        forget(fw, v[i]);
    free(v);
    fw->ending = 0;
    uv_timer_stop(&fw->gone_timer);
}

/* f's connection closed: the head is told, at once when the process
 * said Goodbye, cannot be watched or is gone already, else once it is
 * gone or WEFT_FORWARD_GONE_MS have passed (a process that only lost
 * its connection connects again meanwhile, and waits as a reconnection
 * does for the head to let go of the old one). */
static void on_closed(weft_conn *c)
{
    weft_daemon *d = c->d;
    weft_forward *fw = d->forward;
    fwd *f = c->forward;
    int gone;

    c->forward = NULL;
    if (!f)
        return;
    f->c = NULL;
    if (!f->sent || f->told) {
        forget(fw, f);
        return;
    }
    gone = !f->goodbye && f->watched && weft_proc_gone(f->pid, f->start);
    if (gone || f->goodbye || !f->watched ||
        !fw->have_timer /* weftd stops */) {
        tell_end(d, f, gone);
        return;
    }
    f->ended_at = uv_now(d->loop);
    if (fw->ending++ == 0)
        uv_timer_start(&fw->gone_timer, on_gone_timer,
                       WEFT_FORWARD_GONE_POLL_MS, WEFT_FORWARD_GONE_POLL_MS);
}

const weft_session_forward weft_forward_cbs = { on_hello, on_query,
                                                on_frame, on_closed };

/* The connections of the table (a copy: closing them changes it); NULL
 * with *n 0 when there are none or no memory. */
static weft_conn **conns(weft_forward *fw, size_t *n)
{
    weft_conn **v = fw && fw->table.used
                        ? malloc(fw->table.used * sizeof *v)
                        : NULL;

    *n = 0;
    for (size_t i = 0; v && i < fw->table.ncells; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        if (cell && cell->f->c)
            v[(*n)++] = cell->f->c;
    }
    return v;
}

void weft__forward_linked(weft_daemon *d)
{
    weft_forward *fw = d->forward;
    size_t n;
    weft_conn **v = conns(fw, &n);

    for (size_t i = 0; i < n; i++) {
        fwd *f = v[i]->forward;
        if (f && !f->sent)
            send_hello(d, f);
    }
    free(v);
    if (fw)
        check_queue(d, fw);
    weft__parts_linked(d);
}

void weft__forward_unlinked(weft_daemon *d)
{
    size_t n;
    weft_conn **v = conns(d->forward, &n);
    uint64_t ended = 0;

    for (size_t i = 0; i < n; i++) {
        fwd *f = v[i]->forward;
        if (!f || !f->sent)
            continue; /* its Hello waits for the next link */
        f->sent = 0;
        f->told = 1;
        if (f->asker)
            weft_conn_fail(v[i], WEFT_ECONNECT, "the link to the head "
                           "ended before it answered; try again");
        else
            weft_conn_close(v[i]);
        ended++;
    }
    free(v);
    drop_ending(d->forward);
    if (ended)
        weft_dlog(d, WEFT_LOG_INFO, "the link to the head ended: %llu "
                  "forwarded connections closed (their processes connect "
                  "again)", (unsigned long long)ended);
    if (d->forward)
        d->forward->queue_full = 0; /* nothing is queued any more */
    weft__parts_unlinked(d);
}

/* An asker's connection wrote what came of its answer: the head may
 * send the next piece. */
static void asker_drained(weft_conn *c)
{
    fwd *f = c->forward;
    weft_daemon *d = c->d;

    if (f && f->asker && f->sent && !f->told) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;
        r.member = f->id;
        r.more = 1;
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
        env.node_relay = &r;
        weft__uplink_send(d, &env);
    }
}

void weft__forward_from_head(weft_daemon *d, const Weft__NodeRelay *r)
{
    fwd_cell *cell = d->forward ? weft_hashtab_find(&d->forward->table,
                                                    r->member, sizeof *cell)
                                : NULL;
    Weft__Envelope *env;
    weft_conn *c;

    if (r->member & WEFT_PART_ID_BIT) {
        weft__parts_from_head(d, r);
        return;
    }
    if (!cell)
        return; /* it closed meanwhile */
    if (!(c = cell->f->c)) { /* its end waits for its process */
        if (r->closed) {
            d->forward->ending--;
            forget(d->forward, cell->f);
        }
        return;
    }
    if (r->frame.len) {
        env = weft_frame_unpack(r->frame.data, r->frame.len);
        if (!env) {
            weft_conn_log(c, WEFT_LOG_WARNING, "the head relayed %zu bytes "
                          "that are no weft frame: connection closed",
                          r->frame.len);
            weft_conn_close(c);
            return;
        }
        /* Frames as large as the head takes (its HelloAck says). */
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK) {
            cell->f->head_max = env->hello_ack->max_frame;
            if (env->hello_ack->max_frame > c->member_max_frame)
                c->member_max_frame = env->hello_ack->max_frame;
        }
        if (cell->f->asker && env->msg_case == WEFT__ENVELOPE__MSG_ANSWER)
            c->on_written = asker_drained; /* asks for the next piece */
        weft_conn_send_env(c, env);
        weft_frame_free_envelope(env);
    }
    if (r->closed) {
        cell->f->told = 1;
        weft_conn_close(c);
    }
}

/* Pauses (on) or resumes uid's forwarded processes for its share. */
static void share_wait(weft_forward *fw, uint32_t uid, int on)
{
    for (size_t i = 0; i < fw->table.ncells; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        if (cell && cell->f->c && !cell->f->asker && cell->f->uid == uid)
            set_wait(cell->f, &cell->f->waits_user, on);
    }
}

void weft__forward_queued(weft_daemon *d, uint32_t uid, size_t bytes)
{
    weft_forward *fw = d->forward;
    share *s = fw ? weft_uidmap_get(&fw->shares, uid, sizeof *s) : NULL;

    if (!s)
        return; /* out of memory: the queue's bound still holds */
    s->queued += bytes;
    if (s->full || s->queued <= d->cfg.max_buffered / 8)
        return;
    s->full = 1;
    weft_dlog(d, WEFT_LOG_DEBUG, "uid %u has %llu bytes waiting to be "
              "written to the head (an eighth of max_buffered): its "
              "forwarded connections paused", (unsigned)uid,
              (unsigned long long)s->queued);
    share_wait(fw, uid, 1);
}

void weft__forward_written(weft_daemon *d, uint32_t uid, size_t bytes)
{
    weft_forward *fw = d->forward;
    size_t i = fw ? weft_uidmap_find(&fw->shares, uid, sizeof(share)) : 0;
    share *s;

    if (!fw || i >= fw->shares.n ||
        (s = weft_uidmap_at(&fw->shares, i, sizeof *s))->uid != uid)
        return;
    s->queued = s->queued > bytes ? s->queued - bytes : 0;
    if (s->full && s->queued <= d->cfg.max_buffered / 16) {
        s->full = 0;
        share_wait(fw, uid, 0);
    }
    if (!s->queued && !s->full)
        weft_uidmap_remove(&fw->shares, i, sizeof *s);
}

void weft__forward_drained(weft_daemon *d, size_t queued)
{
    weft_forward *fw = d->forward;

    if (!fw || !fw->queue_full || queued > d->cfg.max_buffered / 4)
        return;
    fw->queue_full = 0;
    for (size_t i = 0; i < fw->table.ncells; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        if (cell && cell->f->c && !cell->f->asker)
            set_wait(cell->f, &cell->f->waits_queue, 0);
    }
}

uint64_t weft_forward_count(const weft_daemon *d)
{
    return d->forward ? d->forward->table.used : 0;
}

void weft_forward_stop(weft_daemon *d)
{
    weft_forward *fw = d->forward;

    if (fw && fw->have_timer) {
        uv_close((uv_handle_t *)&fw->gone_timer, NULL);
        fw->have_timer = 0;
    }
}

void weft_forward_free(weft_daemon *d)
{
    weft_forward *fw = d->forward;

    if (!fw)
        return;
    for (size_t i = 0; i < fw->table.ncells; i++) {
        fwd_cell *cell = weft_hashtab_at(&fw->table, i, sizeof *cell);
        if (cell) { /* none: their connections closed before */
            free(cell->f->hello);
            free(cell->f);
        }
    }
    weft_hashtab_free(&fw->table);
    weft_uidmap_free(&fw->shares);
    free(fw);
    d->forward = NULL;
}
