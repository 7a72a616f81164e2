/* session.c - the protocol of one connection (see session.h).
 *
 * Every record is checked (validate.h) before it is journaled, because a
 * bad record must be refused before it is acknowledged; the journal then
 * stores the payload bytes unchanged, written by the journal writer's
 * threads (jwriter.h). The member's state moves on as frames are accepted
 * (the next frame is checked against it); acks go out as entries come
 * back written (weft_session_written), and its held_* fields follow what
 * is journaled.
 *
 * A member that comes back has its journal: HelloAck at once. A new one
 * needs the disk first (its journal's open and header, and for a new
 * trace its directory): its Hello's entry goes to the journal writer's
 * open thread with that work, the connection is paused (its next frames
 * wait, in order, in the server's buffer), and HelloAck goes out and the
 * frames are taken once the entry is back (WRITTEN_OPEN).
 *
 * Each frame handler returns 0 when it accepted its frame (a resend of
 * what weftd holds is accepted too), or the WEFT_E* code it refused it
 * with, after weft_conn_fail.
 */
#include "session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acks.h"
#include "clocksync.h"
#include "authn.h"
#include "codec.h"
#include "connlog.h"
#include "frame.h"
#include "jcache.h"
#include "log.h"
#include "members.h"
#include "partlink.h"
#include "procwatch.h"
#include "quota.h"
#include "validate.h"
#include "weft_errors.h"
#include "worker.h"

/* What a journal entry's completion does (weft_session_written). */
enum {
    WRITTEN_OPEN,     /* a new member's Hello, its journal opened first */
    WRITTEN_HELLO,    /* the Hello of a member that came back */
    WRITTEN_DEFS,
    WRITTEN_EVENTS,
    WRITTEN_GOODBYE,
    WRITTEN_SUMS      /* a node's sums of a member (weft_session_sums) */
};

/* Queues entry j of c's member (owned by the writer from now on); `what`
 * and `last` (an EventBatch's last event time) are for its completion. */
static void submit(weft_conn *c, weft_jentry *j, int what, uint64_t last)
{
    weft_memberin *m = c->member;
    uint64_t bytes = (WEFT_JOURNAL_HEADER + (uint64_t)j->e.len) *
                     WEFT_QUOTA_JOURNAL_FACTOR;

    weft_member_charge(m, bytes);
    weft_diskres_take(&c->d->diskres, WEFT_JOURNAL_HEADER + (uint64_t)j->e.len);
    j->in = m;
    j->conn_serial = m->conn_serial;
    j->what = what;
    j->last_time = last;
    weft_jcache_use(m);
    weft_jwriter_submit(c->d, j);
    weft_conn_check_pending(c);
}

/* Queues entry e of c's member, its payload copied. 0, or WEFT_ENOMEM
 * after failing c. */
static int journal(weft_conn *c, const weft_journal_entry *e, int what,
                   uint64_t last)
{
    weft_jentry *j = weft_jentry_new(e->len);

    if (!j) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    if (e->len)
        memcpy(j->data, e->payload, e->len);
    j->e = *e;
    j->e.payload = j->data;
    submit(c, j, what, last);
    return 0;
}

/* Once nothing of m is queued: after a failed write, what was accepted
 * but not journaled is forgotten, so that the client's resend (from what
 * HelloAck reports) is accepted again. */
static void settle_member(weft_memberin *m)
{
    if (m->pending || !m->write_failed)
        return;
    for (uint32_t i = 0; i < m->nlocs; i++) {
        m->locs[i].last_seq = m->locs[i].held_seq;
        m->locs[i].last_time = m->locs[i].held_time;
    }
    m->defs_seq = m->held_defs_seq;
    m->write_failed = 0;
}

/* The level of a member's ordinary comings and goings: info, but debug
 * for the processes a tree's root starts (a build's thousands of
 * compilers would each log two lines). */
static int chatter(const weft_memberin *m)
{
    return weft_memberin_in_tree(m) && m->rank != 0 ? WEFT_LOG_DEBUG
                                                    : WEFT_LOG_INFO;
}

/* Sends c's HelloAck: what weftd holds of its member, per thread the last
 * batch and the last Definitions. host and pid are its Hello's, for the
 * log. 0, or WEFT_ENOMEM after failing c. */
static int hello_ack(weft_conn *c, const char *host, uint32_t pid)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__HelloAck ack = WEFT__HELLO_ACK__INIT;
    Weft__LocationSeq *seqs = NULL, **seqp = NULL;
    weft_memberin *m = c->member;
    int rc = 0;

    seqs = calloc(m->nlocs ? m->nlocs : 1, sizeof *seqs);
    seqp = calloc(m->nlocs ? m->nlocs : 1, sizeof *seqp);
    if (!seqs || !seqp) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        rc = WEFT_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < m->nlocs; i++) {
        weft__location_seq__init(&seqs[i]);
        seqs[i].location = i;
        seqs[i].seq = m->locs[i].last_seq;
        seqp[ack.n_locations++] = &seqs[i];
    }
    ack.locations = seqp;
    ack.protocol_version = WEFT_PROTOCOL_VERSION;
    ack.definitions_seq = m->defs_seq;
    ack.server = "weftd " PACKAGE_VERSION;
    ack.max_frame = (uint32_t)c->d->cfg.max_frame; /* at most 1 GiB */
    ack.rank = m->rank;
    if (c->d->cfg.max_frame > m->max_frame)
        m->max_frame = c->d->cfg.max_frame;
    c->member_max_frame = m->max_frame;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO_ACK;
    env.hello_ack = &ack;
    weft_conn_send_env(c, &env);
    if (weft_memberin_in_tree(m))
        weft_conn_log(c, chatter(m), "joined (host %s, pid %u, rank %u "
                      "of a process tree, %u members)", host, pid, m->rank,
                      weft_member_joined(m));
    else
        weft_conn_log(c, WEFT_LOG_INFO, "joined (host %s, pid %u, %u of %u "
                      "members)", host, pid, weft_member_joined(m), m->size);
out:
    free(seqs);
    free(seqp);
    return rc;
}

/* A new member's open job is back; c is its connection if still there.
 * When the journal could not be opened the member is gone (it is freed)
 * and 1 is returned; else the member is ready, 0. */
static int opened(weft_jentry *j, weft_conn *c)
{
    weft_memberin *m = j->in;

    if (m->journal) {
        weft_trace_join_end(m, 0, c != NULL);
        return 0;
    }
    if (c)
        c->member = NULL;
    else /* it hung up meanwhile: nobody to tell */
        weft_mlog(m, WEFT_LOG_ERROR, "trace '%s' rank %u: %s",
                  weft_member_name(m), m->rank,
                  j->msg ? j->msg : weft_strerror(j->rc));
    m->conn = NULL;
    weft_trace_join_end(m, j->rc, c != NULL);
    if (c)
        weft_conn_fail(c, j->rc, "%s",
                       j->msg ? j->msg : weft_strerror(j->rc));
    return 1;
}

/* EventBatch j could not be appended (jwriter.h): it is acknowledged and
 * its events counted as dropped by weftd; when its journal could not
 * say so either, its trace's conversion is told (unjournaled). */
static void not_stored(weft_daemon *d, const weft_jentry *j)
{
    weft_memberin *m = j->in;
    uint64_t held_back;
    char more[96] = "";

    if (j->e.kind == WEFT_JE_REFUSED &&
        j->e.base_time >= WEFT_REFUSED_ERRNO) { /* else counted refused */
        m->refused += j->e.count;
        m->locs[j->e.location].refused += j->e.count;
    }
    if (j->lost)
        weft_member_unjournaled(m, j->e.count, j->err);
    if (!weft_ratelimit_allow(&d->srv->lost_log, uv_now(d->loop),
                              d->cfg.max_log_refusals, &held_back))
        return;
    if (held_back)
        snprintf(more, sizeof more, " (and %" PRIu64 " more lines like "
                 "this not logged: max_log_refusals)", held_back);
    weft_mlog(m, WEFT_LOG_ERROR, "trace '%s' rank %u thread %u: batch %"
              PRIu64 " (%u events) not stored, counted as dropped: cannot "
              "write its journal in %s: %s%s%s", weft_member_name(m),
              m->rank, j->e.location, j->e.seq, j->e.count, weft_member_dir(m),
              strerror(j->err), j->lost ? " (nor say so in it)" : "", more);
}

/* Forgets what a Definitions payload of m defined, and its charge to m's
 * trace (weft_validate_undefine). */
static void undefine(weft_memberin *m, const uint8_t *buf, size_t len)
{
    weft_member_def_bytes(m, 0, weft_validate_undefine(m, buf, len));
}

/* Entry j of a part's member (partlink.h) is journaled: its Hello, its
 * Definitions and its Goodbye go to the head too. */
static void part_written(weft_daemon *d, const weft_jentry *j)
{
    weft_memberin *m = j->in;

    if (j->what == WRITTEN_OPEN || j->what == WRITTEN_HELLO) {
        if (d->part_cbs->joined(m, j->e.payload, j->e.len) < 0)
            weft_mlog(m, WEFT_LOG_ERROR, "trace '%s' rank %u: out of "
                      "memory: its head does not learn of it",
                      weft_member_name(m), m->rank);
    } else if (j->what == WRITTEN_DEFS || j->what == WRITTEN_GOODBYE) {
        d->part_cbs->journaled(m, &j->e);
    }
}

void weft_session_written(weft_daemon *d, weft_jentry *j)
{
    weft_memberin *m = j->in;
    weft_conn *c = m->conn && m->conn_serial == j->conn_serial ? m->conn
                                                              : NULL;
    const weft_journal_entry *e = &j->e;

    weft_server_buffered_fell(d);
    if (j->what == WRITTEN_OPEN && opened(j, c))
        return; /* m is gone */
    if (j->rc < 0) {
        if (j->what == WRITTEN_DEFS) /* not journaled: the resend defines */
            undefine(m, e->payload, e->len);
        if (j->what == WRITTEN_GOODBYE && c) /* it may say it again */
            m->said_goodbye = 0;
        if (c)
            weft_conn_fail(c, WEFT_EIO, "cannot write the journal of this "
                           "process in %s: %s", weft_member_dir(m),
                           strerror(j->err));
        else
            weft_mlog(m, WEFT_LOG_ERROR, "trace '%s' rank %u: cannot write "
                      "its journal in %s: %s", weft_member_name(m), m->rank,
                      weft_member_dir(m), strerror(j->err));
    } else if (j->what == WRITTEN_OPEN && c) {
        weft_testhook_reach(&d->testhook, "hello");
        if (hello_ack(c, m->host, m->pid) == 0) {
            weft_conn_resume(c); /* its next frames */
            if (c->relay_events_here)
                weft_member_events_elsewhere(m);
        }
    } else if (j->what == WRITTEN_DEFS) {
        m->held_defs_seq = e->seq;
        if (c)
            weft_ack_send(c, 1, 0, e->seq);
    } else if (j->what == WRITTEN_EVENTS) {
        weft_loc_state *l = &m->locs[e->location];
        /* A failed append made it refused (jwriter.h): rc 0 */
        l->held_seq = e->seq;
        if (e->count && e->kind == WEFT_JE_EVENTS) { /* not refused */
            l->held_time = j->last_time;
            l->events += e->count;
            d->events_in += e->count;
            d->bytes_in += e->len;
        } else if (e->base_time >= WEFT_REFUSED_ERRNO || j->lost) {
            not_stored(d, j);
        }
        if (c)
            weft_ack_send(c, 0, e->location, e->seq);
    } else if (j->what == WRITTEN_GOODBYE && c) {
        if (m->ended)
            weft_conn_log(c, WEFT_LOG_INFO, "said goodbye; it ended "
                          "abnormally: %s", m->ended);
        else
            weft_conn_log(c, chatter(m), "said goodbye");
        /* The client may have sent its Goodbye behind batches whose
         * Acks wait for a sync (durability = fsync): they go first. */
        if (m->sync_running || m->waiting.n) {
            m->close_when_synced = 1;
            weft_ack_kick_sync(m);
        } else {
            weft_conn_close(c);
        }
    }
    if (j->rc == 0 && m->in_part && d->part_cbs)
        part_written(d, j);
    if (j->rc == 0 && j->what != WRITTEN_OPEN)
        weft_member_journaled(m);
    settle_member(m);
    if (c)
        weft_conn_drained(c);
    if (m->pending == 0 && c)
        weft_conn_written(c);
    if (m->pending == 0)
        weft_jcache_idle(m);
    if (m->pending == 0)
        weft_member_written(m);
}

/* The Hello entry of a member of `uid`: h with the owner weftd decided
 * on and the member's rank, which the journal keeps for recovery. Made
 * before the member joins, with room for any rank: a tree's new member
 * gets its rank as it joins (hello_entry_rank). NULL after failing c. */
static weft_jentry *hello_entry(weft_conn *c, const Weft__Hello *h,
                                uint32_t uid)
{
    Weft__Hello owned = *h;
    weft_jentry *j;

    owned.uid = uid;
    if (c->relay_events_here)
        owned.events_node = c->relay_node;
    owned.rank = UINT32_MAX; /* the longest varint a rank packs to */
    j = weft_jentry_new((uint32_t)weft__hello__get_packed_size(&owned));
    if (!j) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    j->e.kind = WEFT_JE_HELLO;
    return j;
}

/* Packs h into j (made by hello_entry for c) with the owner and rank
 * given, and the node that writes its events, if one does. */
static void hello_entry_rank(weft_conn *c, weft_jentry *j,
                             const Weft__Hello *h, uint32_t uid,
                             uint32_t rank)
{
    Weft__Hello owned = *h;

    owned.uid = uid;
    owned.rank = rank;
    if (c->relay_events_here)
        owned.events_node = c->relay_node;
    j->e.len = (uint32_t)weft__hello__pack(&owned, j->data);
}

/* Whether c's Hello h may name a member whose node writes its events
 * (NodeRelay.events_here): on a head with an archive_root, of a launch.
 * 0, or the code after failing c. */
static int check_events_here(weft_conn *c, const Weft__Hello *h)
{
    if (h->events_node && h->events_node[0]) {
        weft_conn_fail(c, WEFT_EPROTO, "Hello: events_node is weftd's own "
                       "(what its journal says of a node's member), never "
                       "sent");
        return WEFT_EPROTO;
    }
    if (!c->relay_events_here)
        return 0;
    if (!*c->d->cfg.archive_root) {
        weft_conn_fail(c, WEFT_ESTATE, "node %s writes this member's events "
                       "into the head's archive_root, and this weftd has "
                       "none ([cluster] archive_root)", c->relay_node);
        return WEFT_ESTATE;
    }
    if (h->tree) {
        weft_conn_fail(c, WEFT_EPROTO, "node %s writes the events of a "
                       "process tree's member: a tree stays on its node",
                       c->relay_node);
        return WEFT_EPROTO;
    }
    return 0;
}

static int on_hello(weft_conn *c, const Weft__Hello *h)
{
    uint32_t uid;
    enum weft_limit limit;
    weft_memberin *m;
    weft_jentry *j;
    char err[512];
    int rc, part = 0;

    if ((rc = weft_conn_check_version(c, h->protocol_version)) < 0 ||
        (rc = check_events_here(c, h)) < 0)
        return rc;
    if ((rc = weft_authn_hello_uid(c, h, &uid)) < 0 ||
        (rc = weft_conn_charge_user(c, uid)) < 0)
        return rc;
    rc = weft_validate_tags(h, c->d->cfg.max_string, &limit, err,
                            sizeof err);
    if (rc < 0) {
        weft_conn_fail_limit(c, limit, rc, "%s", err);
        return rc;
    }
    /* A node: the head makes the trace (of a launch; a process tree
     * runs on one machine, and stays with this weftd, which watches its
     * processes). */
    if (c->d->forward_cbs && !h->tree) {
        /* Back where it was: its part's member here, else the head
         * (Hello.resumes); new: its part here if the head's archive is
         * seen (partlink.h), else the head. */
        if (!c->d->part_cbs || (!weft_trace_part_here(c->d, h, uid) &&
                                (h->resumes ||
                                 !c->d->part_cbs->takes(c->d, h))))
            return c->d->forward_cbs->hello(c, h, uid);
        part = 1;
    }
    if (!(j = hello_entry(c, h, uid)))
        return WEFT_ENOMEM;
    rc = weft_trace_join_begin(c->d, h, uid, &m, &limit, err, sizeof err);
    if (rc < 0) {
        free(j);
        weft_conn_fail_limit(c, limit, rc, "%s", err);
        return rc;
    }
    hello_entry_rank(c, j, h, uid, m->rank);
    m->conn = c;
    m->conn_serial++;
    m->watched = weft_proc_watchable(c, h, uid, &m->proc_start);
    m->node_gone = 0;
    m->in_part = part;
    c->member = m;
    weft_conn_event(c, WEFT_CONN_EV_HELLO, NULL); /* accepted: fresh */
    if (rc == 1) {
        /* New: the open thread opens its journal (after making a new
         * trace's directory), then writes the Hello; its next frames
         * wait for that (weft_session_written). */
        j->open = weft_member_open;
        submit(c, j, WRITTEN_OPEN, 0);
        weft_conn_pause(c);
        return 0;
    }
    /* Back: HelloAck goes out before the entry is written; the entries
     * after it, which are what gets acknowledged, are written after it. */
    submit(c, j, WRITTEN_HELLO, 0);
    if ((rc = hello_ack(c, h->hostname, h->pid)) == 0 &&
        c->relay_events_here)
        weft_member_events_elsewhere(m);
    return rc;
}

static int ensure_location(weft_conn *c, uint32_t loc);

/* Conversion makes a location of every thread a ThreadName names, also
 * of one that never sends a batch: such a thread is charged to the owner
 * now, before it exists, once (WEFT_QUOTA_LOCATION_BYTES, as a Goodbye's:
 * charge_locations). 0, or a WEFT_E* code after failing c (WEFT_ELIMIT:
 * they would take the owner past max_user_spool_bytes). */
static int charge_named(weft_conn *c, const uint8_t *buf, size_t len)
{
    weft_memberin *m = c->member;
    uint64_t bytes = 0;
    weft_decoder dec;
    weft_record r;
    char err[256];
    int rc;

    weft_decoder_init(&dec, buf, len, 0, 0);
    while ((rc = weft_decoder_next(&dec, &r)) == 1) {
        uint32_t th;
        if (r.type != WEFT_REC_ThreadName)
            continue;
        th = r.u.ThreadName.thread;
        if (th < m->nlocs && (m->locs[th].charged || m->locs[th].last_seq))
            continue;
        if ((rc = ensure_location(c, th)) < 0)
            break;
        m->locs[th].charged = 1;
        bytes += WEFT_QUOTA_LOCATION_BYTES;
    }
    weft_decoder_free(&dec);
    if (rc < 0 || bytes == 0)
        return rc < 0 ? rc : 0;
    if (weft_quota_check(&c->d->quota, m->uid, c->d->cfg.max_user_spool_bytes,
                         bytes, err, sizeof err) < 0) {
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_USER_SPOOL_BYTES, WEFT_ELIMIT,
                             "ThreadName definitions name %" PRIu64
                             " threads that sent nothing: %s",
                             bytes / WEFT_QUOTA_LOCATION_BYTES, err);
        return WEFT_ELIMIT;
    }
    weft_member_charge(m, bytes);
    return 0;
}

static int on_definitions(weft_conn *c, const Weft__Definitions *defs)
{
    weft_memberin *m = c->member;
    weft_journal_entry e = { 0 };
    enum weft_limit limit;
    uint64_t charge;
    char err[512];
    int rc;

    if (defs->seq == 0) { /* would be "acked" below and dropped */
        weft_conn_fail(c, WEFT_EPROTO, "Definitions seq 0: sequence "
                       "numbers start at 1");
        return WEFT_EPROTO;
    }
    if (defs->seq <= m->held_defs_seq) { /* a resend of what we hold */
        weft_ack_send(c, 1, 0, defs->seq);
        return 0;
    }
    if (defs->seq <= m->defs_seq)
        return 0; /* queued: acknowledged once written */
    if (defs->seq != m->defs_seq + 1) {
        weft_conn_fail(c, WEFT_EPROTO, "Definitions seq %" PRIu64 " after %"
                       PRIu64 ": a batch is missing", defs->seq, m->defs_seq);
        return WEFT_EPROTO;
    }
    rc = weft_validate_defs(m, defs->records.data, defs->records.len,
                            &charge, &limit, err, sizeof err);
    if (rc < 0) {
        weft_conn_fail_limit(c, limit, rc, "bad definition: %s", err);
        return rc;
    }
    if (weft_member_def_bytes(m, charge, 0) >
        c->d->cfg.max_definition_bytes) {
        uint64_t would = weft_member_def_bytes(m, 0, 0);
        undefine(m, defs->records.data, defs->records.len);
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_DEFINITION_BYTES, WEFT_ELIMIT,
                             "Definitions seq %" PRIu64 ": the trace's "
                             "definitions would take %" PRIu64 " bytes with"
                             " these %zu, over max_definition_bytes (%"
                             PRIu64 ")", defs->seq, would,
                             defs->records.len,
                             c->d->cfg.max_definition_bytes);
        return WEFT_ELIMIT;
    }
    if ((rc = charge_named(c, defs->records.data, defs->records.len)) < 0) {
        undefine(m, defs->records.data, defs->records.len);
        return rc;
    }
    e.kind = WEFT_JE_DEFS;
    e.seq = defs->seq;
    e.payload = defs->records.data;
    e.len = (uint32_t)defs->records.len;
    rc = journal(c, &e, WRITTEN_DEFS, 0);
    if (rc < 0) {
        /* Not journaled: the resend after a reconnect defines them. */
        undefine(m, defs->records.data, defs->records.len);
        return rc;
    }
    m->defs_seq = defs->seq; /* acknowledged once written */
    return 0;
}

/* Makes room for thread loc of c's member. 0, or the WEFT_E* code after
 * failing c. */
static int ensure_location(weft_conn *c, uint32_t loc)
{
    char err[256];
    int rc = weft_memberin_location(c->member, loc, err, sizeof err);

    if (rc < 0) /* WEFT_ELIMIT is its one limit (memberin.h) */
        weft_conn_fail_limit(c, rc == WEFT_ELIMIT ? WEFT_LIMIT_MAX_LOCATIONS
                                                  : WEFT_LIMIT_NONE,
                             rc, "%s", err);
    return rc;
}

/* The part of max_user_spool_bytes that refused batches' entries may
 * add beyond it (1/WEFT_QUOTA_SLACK): past that, the connection is
 * refused instead. */
#define WEFT_QUOTA_SLACK 16

/* Refuses batch b for `limit` (reason: a WEFT_REFUSED_*; err says why):
 * instead of journaled, its events are counted (an entry without
 * payload, WEFT_JE_REFUSED, keeps its seq and the count for the
 * catalog's dropped figures) and it is acknowledged, so that the client
 * goes on and its trace ends saying what it lost. The member's first
 * refusal is logged, rate-limited per limit. 1, or a WEFT_E* code after
 * failing c. */
static int refuse_batch(weft_conn *c, const Weft__EventBatch *b,
                        enum weft_limit limit, uint64_t reason,
                        const char *err)
{
    weft_memberin *m = c->member;
    weft_daemon *d = c->d;
    weft_journal_entry e = { 0 };
    uint64_t held_back;
    int rc;

    weft_limit_hit(d, limit);
    if (m->refused == 0 &&
        weft_ratelimit_allow(&d->srv->refusal_log[limit], uv_now(d->loop),
                             d->cfg.max_log_refusals, &held_back))
        weft_conn_log(c, WEFT_LOG_WARNING, "thread %u: batch %" PRIu64
                      " refused (%u events), and its next ones while over "
                      "%s: %s", b->location, b->seq, b->events,
                      weft_limit_name(limit), err);
    e.kind = WEFT_JE_REFUSED;
    e.location = b->location;
    e.seq = b->seq;
    e.count = b->events;
    e.base_time = reason;
    if ((rc = journal(c, &e, WRITTEN_EVENTS, 0)) < 0)
        return rc;
    m->refused += b->events;
    m->locs[b->location].refused += b->events;
    m->locs[b->location].last_seq = b->seq;
    return 1;
}

/* Batch b would put its owner over max_user_spool_bytes, or the spool's
 * file system below min_free_spool_bytes: it is refused (refuse_batch).
 * 1 when refused, 0 when it may be journaled, or a WEFT_E* code after
 * failing c (its owner's refused batches took the quota's slack). */
static int refuse_over_quota(weft_conn *c, const Weft__EventBatch *b)
{
    weft_memberin *m = c->member;
    weft_daemon *d = c->d;
    uint64_t max = d->cfg.max_user_spool_bytes;
    uint64_t bytes = WEFT_JOURNAL_HEADER + (uint64_t)b->records.len;
    uint64_t promised = weft_quota_promised(&d->quota);
    char err[256];

    if (weft_quota_check(&d->quota, m->uid, max,
                         bytes * WEFT_QUOTA_JOURNAL_FACTOR, err,
                         sizeof err) == 0) {
        if (weft_diskres_check(&d->diskres, d->cfg.spool,
                               d->cfg.min_free_spool_bytes, uv_now(d->loop),
                               promised, bytes, err, sizeof err) == 0 &&
            weft_diskres_share(&d->diskres, m->uid,
                               d->cfg.min_free_spool_bytes, promised,
                               weft_quota_live_of(&d->quota, m->uid),
                               bytes * WEFT_QUOTA_JOURNAL_FACTOR, err,
                               sizeof err) == 0)
            return 0;
        return refuse_batch(c, b, WEFT_LIMIT_MIN_FREE_SPOOL_BYTES,
                            WEFT_REFUSED_RESERVE, err);
    }
    if (weft_quota_check(&d->quota, m->uid,
                         max + max / WEFT_QUOTA_SLACK,
                         WEFT_JOURNAL_HEADER * WEFT_QUOTA_JOURNAL_FACTOR,
                         err, sizeof err) < 0) {
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_USER_SPOOL_BYTES, WEFT_ELIMIT,
                             "%s; its refused batches took 1/%d more",
                             err, WEFT_QUOTA_SLACK);
        return WEFT_ELIMIT;
    }
    return refuse_batch(c, b, WEFT_LIMIT_MAX_USER_SPOOL_BYTES,
                        WEFT_REFUSED_QUOTA, err);
}

static int on_batch(weft_conn *c, const Weft__EventBatch *b)
{
    weft_memberin *m = c->member;
    weft_journal_entry e = { 0 };
    enum weft_limit limit;
    uint64_t last = 0;
    char err[512];
    int rc;

    if (c->relay_events_here) {
        weft_conn_fail(c, WEFT_EPROTO, "EventBatch of a member whose node "
                       "%s writes its events (events_here)", c->relay_node);
        return WEFT_EPROTO;
    }
    if ((rc = ensure_location(c, b->location)) < 0)
        return rc;
    if (b->seq == 0) { /* would be "acked" below and dropped */
        weft_conn_fail(c, WEFT_EPROTO, "thread %u: EventBatch seq 0: "
                       "sequence numbers start at 1", b->location);
        return WEFT_EPROTO;
    }
    if (b->seq <= m->locs[b->location].held_seq) {
        weft_ack_send(c, 0, b->location, b->seq); /* a resend of what we hold */
        return 0;
    }
    if (b->seq <= m->locs[b->location].last_seq)
        return 0; /* queued: acknowledged once written */
    if (b->seq != m->locs[b->location].last_seq + 1) {
        weft_conn_fail(c, WEFT_EPROTO, "thread %u: EventBatch seq %" PRIu64
                       " after %" PRIu64 ": a batch is missing", b->location,
                       b->seq, m->locs[b->location].last_seq);
        return WEFT_EPROTO;
    }
    if ((rc = refuse_over_quota(c, b)) != 0)
        return rc < 0 ? rc : 0;
    rc = weft_validate_events(m, b->location, b->base_time, b->events,
                              b->records.data, b->records.len, &last, &limit,
                              err, sizeof err);
    if (rc < 0) {
        weft_conn_fail_limit(c, limit, rc, "thread %u, batch %" PRIu64
                             ": %s", b->location, b->seq, err);
        return rc;
    }
    e.kind = WEFT_JE_EVENTS;
    e.location = b->location;
    e.seq = b->seq;
    e.base_time = b->base_time;
    e.count = b->events;
    e.payload = b->records.data;
    e.len = (uint32_t)b->records.len;
    if ((rc = journal(c, &e, WRITTEN_EVENTS, last)) < 0)
        return rc;
    /* Acknowledged once written (weft_session_written). */
    m->locs[b->location].last_seq = b->seq;
    if (b->events)
        m->locs[b->location].last_time = last;
    return 0;
}

/* Conversion makes a location of every thread g names with events or
 * drops, also one that sent no batch: such a location is charged to its
 * owner now, before it exists (WEFT_QUOTA_LOCATION_BYTES each; conversion
 * skips those reporting nothing). 0, or WEFT_ELIMIT after failing c when
 * they would take the owner past max_user_spool_bytes. */
static int charge_locations(weft_conn *c, const Weft__Goodbye *g)
{
    weft_memberin *m = c->member;
    uint64_t bytes = 0;
    char err[256];

    for (size_t i = 0; i < g->n_locations; i++) {
        const Weft__LocationEnd *l = g->locations[i];
        if ((l->events || l->dropped) &&
            (l->location >= m->nlocs ||
             (m->locs[l->location].last_seq == 0 &&
              !m->locs[l->location].charged)))
            bytes += WEFT_QUOTA_LOCATION_BYTES;
    }
    if (bytes == 0)
        return 0;
    if (weft_quota_check(&c->d->quota, m->uid, c->d->cfg.max_user_spool_bytes,
                         bytes, err, sizeof err) < 0) {
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_USER_SPOOL_BYTES, WEFT_ELIMIT,
                             "Goodbye names %" PRIu64 " threads that sent "
                             "nothing: %s", bytes / WEFT_QUOTA_LOCATION_BYTES,
                             err);
        return WEFT_ELIMIT;
    }
    weft_member_charge(m, bytes);
    return 0;
}

static int on_goodbye(weft_conn *c, const Weft__Goodbye *g)
{
    weft_memberin *m = c->member;
    weft_journal_entry e = { 0 };
    enum weft_limit limit;
    uint64_t dropped = 0;
    uint8_t *packed = NULL;
    uint32_t *children = NULL;
    size_t nchildren;
    char *ended = NULL, why[256];
    int rc;

    /* Conversion makes a location of every thread named here. */
    rc = weft_validate_goodbye(g, c->d->cfg.max_locations, &limit, &dropped,
                               why, sizeof why);
    if (rc < 0) {
        weft_conn_fail_limit(c, limit, rc, "%s", why);
        return rc;
    }
    rc = weft_goodbye_ended(g, &ended, why, sizeof why);
    if (rc < 0) {
        weft_conn_fail(c, rc, "%s", why);
        return rc;
    }
    /* Only a tree's completion waits for the children a member names
     * (tree.c); another member's are journaled, not kept. */
    nchildren = weft_memberin_in_tree(m) ? g->n_children : 0;
    e.kind = WEFT_JE_GOODBYE;
    e.len = (uint32_t)weft__goodbye__get_packed_size(g);
    if (!(packed = malloc(e.len ? e.len : 1)) ||
        (nchildren && !(children = malloc(nchildren * sizeof *children)))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        rc = WEFT_ENOMEM;
        goto out;
    }
    if ((rc = charge_locations(c, g)) < 0)
        goto out;
    weft__goodbye__pack(g, packed);
    e.payload = packed;
    if ((rc = journal(c, &e, WRITTEN_GOODBYE, 0)) < 0)
        goto out;
    free(m->ended); /* a Goodbye said again after a failed write */
    m->ended = ended;
    ended = NULL;
    free(m->children);
    if (nchildren)
        memcpy(children, g->children, nchildren * sizeof *children);
    m->children = children;
    m->nchildren = nchildren;
    children = NULL;
    /* Counted now (the trace converts once the entry is written too);
     * the connection closes once it is written, after the acks of what
     * came before it. */
    m->said_goodbye = 1;
    m->execs = g->exec;
    c->d->dropped_in += dropped;
    weft_conn_hold(c);
out:
    free(packed);
    free(children);
    free(ended);
    return rc;
}

/* Frames of a connection that said nothing yet, or only Auth (Unix
 * socket: SO_PEERCRED says who it is; TCP: its Challenge went out). */
static int fresh_frame(weft_conn *c, const Weft__Envelope *env,
                       enum weft_conn_event ev)
{
    switch (ev) {
    case WEFT_CONN_EV_AUTH:
        return weft_authn_auth(c, env->auth);
    case WEFT_CONN_EV_HELLO:
        return on_hello(c, env->hello);
    case WEFT_CONN_EV_QUERY:
        if (c->d->forward_cbs && c->is_unix && c->has_peer_uid &&
            env->query->kind != WEFT__QUERY__KIND__STATUS &&
            !env->query->here)
            return c->d->forward_cbs->query(c, env->query);
        return c->d->ask_cbs->query(c, env->query);
    case WEFT_CONN_EV_IMPORT_TRACE:
        return c->d->ask_cbs->import(c, env->import_trace);
    case WEFT_CONN_EV_NODE_HELLO:
        if (c->d->node_cbs)
            return c->d->node_cbs->hello(c, env->node_hello);
        weft_conn_fail(c, WEFT_EPROTO, "NodeHello: this weftd takes no "
                       "nodes");
        return WEFT_EPROTO;
    default: /* refused: records before Hello */
        return weft_conn_event(c, ev, weft_frame_kind_name(env->msg_case));
    }
}

/* Frames of a member: its records. */
static int member_frame(weft_conn *c, const Weft__Envelope *env,
                        enum weft_conn_event ev)
{
    if (c->forward)
        return c->d->forward_cbs->frame(c, env, ev);
    switch (ev) {
    case WEFT_CONN_EV_QUERY: /* refused, after its version and socket */
        return c->d->ask_cbs->query(c, env->query);
    case WEFT_CONN_EV_IMPORT_TRACE: /* refused */
        return c->d->ask_cbs->import(c, env->import_trace);
    case WEFT_CONN_EV_DEFINITIONS:
        return on_definitions(c, env->definitions);
    case WEFT_CONN_EV_EVENT_BATCH:
        return on_batch(c, env->event_batch);
    case WEFT_CONN_EV_GOODBYE:
        return on_goodbye(c, env->goodbye);
    case WEFT_CONN_EV_CLOCK_SYNC:
        return weft_clocksync_member(c, env->clock_sync);
    case WEFT_CONN_EV_HEARTBEAT:
        return 0; /* the frame itself moved c->last_frame (server.c) */
    default: /* refused: Auth, a second Hello, what clients never send */
        return weft_conn_event(c, ev, weft_frame_kind_name(env->msg_case));
    }
}

/* Frames of a node's link (daemon/cluster/nodes.h). */
static int node_frame(weft_conn *c, const Weft__Envelope *env,
                      enum weft_conn_event ev)
{
    if (ev == WEFT_CONN_EV_HEARTBEAT)
        return c->d->node_cbs->heartbeat(c);
    if (ev == WEFT_CONN_EV_NODE_STATUS)
        return c->d->node_cbs->status(c, env->node_status);
    if (ev == WEFT_CONN_EV_NODE_RELAY)
        return c->d->node_cbs->relay(c, env->node_relay);
    if (ev == WEFT_CONN_EV_CLOCK_SYNC) { /* one per heartbeat (uplink.c) */
        int rc = weft_conn_event(c, ev, NULL);
        if (rc == 0)
            weft_clocksync_answer(c, env->clock_sync);
        return rc;
    }
    /* refused: what nodes do not send (yet) */
    return weft_conn_event(c, ev, weft_frame_kind_name(env->msg_case));
}

/* Frames after a Query (ask.c answers it; an import's rows follow). */
static int asking_frame(weft_conn *c, const Weft__Envelope *env,
                        enum weft_conn_event ev)
{
    if (c->forward) /* a node's: the head answers */
        return c->d->forward_cbs->frame(c, env, ev);
    switch (ev) {
    case WEFT_CONN_EV_AUTH: /* refused, after its version */
        return weft_authn_auth(c, env->auth);
    case WEFT_CONN_EV_QUERY: /* refused, after its version */
        return c->d->ask_cbs->query(c, env->query);
    case WEFT_CONN_EV_IMPORT_TRACE:
        return c->d->ask_cbs->import(c, env->import_trace);
    default: /* refused: Hello, records */
        return weft_conn_event(c, ev, weft_frame_kind_name(env->msg_case));
    }
}

int weft_session_frame(weft_conn *c, const Weft__Envelope *env)
{
    enum weft_conn_event ev = weft_connmode_event_of(env->msg_case);

    switch (c->mode) {
    case WEFT_CONN_FRESH:
    case WEFT_CONN_AUTHENTICATED:
        return fresh_frame(c, env, ev);
    case WEFT_CONN_MEMBER:
        return member_frame(c, env, ev);
    case WEFT_CONN_NODE:
        return node_frame(c, env, ev);
    case WEFT_CONN_ASKING:
    case WEFT_CONN_IMPORTING:
        return asking_frame(c, env, ev);
    default: /* AUTHENTICATING (paused), CLOSING: refused */
        return weft_conn_event(c, ev, weft_frame_kind_name(env->msg_case));
    }
}

int weft_session_sums(weft_conn *c, const uint8_t *sums, size_t len)
{
    weft_journal_entry e = { 0 };
    weft_memberin *m = c->member;

    if (!m || c->mode != WEFT_CONN_MEMBER || !c->relay_events_here) {
        weft_conn_fail(c, WEFT_EPROTO, "sums of a member %s",
                       !m || c->mode != WEFT_CONN_MEMBER
                           ? "before its Hello"
                           : "whose events its node does not write");
        return WEFT_EPROTO;
    }
    if (m->said_goodbye) {
        weft_conn_fail(c, WEFT_EPROTO, "sums of a member after its "
                       "Goodbye");
        return WEFT_EPROTO;
    }
    /* (pieces of at most max_frame each, joined: relay.c) */
    if (len == 0 || len > WEFT_JOURNAL_MAX_PAYLOAD) {
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_FRAME, WEFT_ETOOBIG,
                             "sums of %zu bytes (1 to a journal entry's "
                             "most, %u)", len, WEFT_JOURNAL_MAX_PAYLOAD);
        return WEFT_ETOOBIG;
    }
    e.kind = WEFT_JE_SUMS;
    e.payload = sums;
    e.len = (uint32_t)len;
    return journal(c, &e, WRITTEN_SUMS, 0);
}

uint64_t weft_session_pending(const weft_conn *c, uint64_t *bytes)
{
    *bytes = c->member ? c->member->pending_bytes : 0;
    return c->member ? c->member->pending : 0;
}

void weft_session_describe(const weft_conn *c, weft_log_ctx *ctx)
{
    if (!c->member)
        return;
    weft_member_describe(c->member, ctx);
}

void weft_session_closed(weft_conn *c)
{
    weft_memberin *m = c->member;

    weft_authn_closed(c);
    c->d->ask_cbs->closed(c);
    if (c->node && c->d->node_cbs)
        c->d->node_cbs->closed(c);
    if (c->forward && c->d->forward_cbs)
        c->d->forward_cbs->closed(c);
    if (!m)
        return;
    m->conn = NULL;
    m->waiting.n = 0; /* acks for this connection; a new one resends */
    if (!m->said_goodbye)
        weft_connlog(c, WEFT_CONNLOG_NO_GOODBYE, WEFT_LOG_WARNING,
                     "disconnected without goodbye; waiting for it to come "
                     "back");
    c->member = NULL;
    weft_jcache_idle(m);
    weft_trace_member_left(m);
}
