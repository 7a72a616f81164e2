/* parts.c - a node's share of its head's traces, sent to the head (see
 * parts.h and partlink.h). */
#include "parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"
#include "frame.h"
#include "hashtab.h"
#include "members.h"
#include "partlink.h"
#include "relay.h"
#include "server.h"
#include "weft_errors.h"

/* A Definitions of a member, packed as the head gets it (an Envelope
 * without its length prefix), until the head acknowledges it. */
typedef struct pframe {
    uint64_t seq;
    uint8_t *bytes;
    size_t len;
} pframe;

/* A part's directory and who needs it: its trace (until freed) and its
 * members the head does not hold all of yet (weft_trace.part_link). It
 * is removed once none does and the part ended; a member's journal
 * goes as soon as the head holds all of it and it was written. */
typedef struct pdir {
    char *dir;
    unsigned refs;
    int ended;              /* the part ended (partlink.h's released) */
} pdir;

/* A member of a part, as the link sends it (weft_memberin.part). */
typedef struct pmember {
    uint32_t id;            /* its number on the link (WEFT_PART_ID_BIT) */
    weft_memberin *in;      /* NULL once its trace freed it: what is left
                               still goes to the head */
    uint32_t rank;
    uint32_t uid, gid, pid; /* as the head is told */
    char *trace;            /* its trace's name, for the log */
    uint8_t *hello;         /* its Hello, packed */
    size_t hello_len;
    pframe *defs;           /* not acknowledged by the head, by seq */
    size_t ndefs, cap;
    size_t nsent;           /* of those, sent on this link */
    uint8_t *goodbye;       /* its Goodbye, packed, once journaled */
    size_t goodbye_len;
    uint8_t *sums;          /* its sums (MemberSums), once written */
    size_t sums_len;
    int finished;           /* its stream is done with it (sums or not) */
    int ended;              /* nothing more comes of it */
    int gone;               /* its process ended without Goodbye */
    int sent;               /* its Hello went out on this link */
    int acked;              /* the head's HelloAck came on this link */
    int tail_sent;          /* its sums and end went out on this link */
    int failed;             /* the head refused it */
    int again;              /* the head refused it for now (its rank is
                               still connected there): Hello again at
                               the next tick */
    char *key;              /* the head's archive_key, once said */
    pdir *pd;               /* its part's directory (a reference) */
} pmember;

typedef struct pcell {
    uint32_t key;           /* pmember.id */
    pmember *p;
} pcell;

typedef struct weft_parts {
    weft_hashtab table;     /* pcell */
    uint32_t next_id;
} weft_parts;

int weft_parts_init(weft_daemon *d)
{
    if (!d->parts && !(d->parts = calloc(1, sizeof *d->parts)))
        return WEFT_ENOMEM;
    return 0;
}

/* One of pd's references goes; with `remove`, its directory too once
 * none is left and the part ended (else it stays for the next start). */
static void pdir_release(pdir *pd, int remove)
{
    if (!pd || --pd->refs > 0)
        return;
    if (remove && pd->ended)
        weft_part_dir_remove(pd->dir);
    free(pd->dir);
    free(pd);
}

/* p's part's directory, shared with its trace (made with the first
 * member). 0 or WEFT_ENOMEM. */
static int pdir_take(pmember *p, weft_memberin *in)
{
    void **link = weft_member_part_link(in);
    pdir *pd = *link;

    if (!pd) {
        if (!(pd = calloc(1, sizeof *pd)) ||
            !(pd->dir = strdup(weft_member_dir(in)))) {
            free(pd);
            return WEFT_ENOMEM;
        }
        pd->refs = 1;  /* its trace's */
        *link = pd;
    }
    pd->refs++;
    p->pd = pd;
    return 0;
}

/* The head holds all of p, which was written: its journal goes. */
static void journal_remove(const pmember *p)
{
    if (p->pd && p->finished)
        weft_part_journal_remove(p->pd->dir, p->rank);
}

static void pmember_free(pmember *p)
{
    for (size_t i = 0; i < p->ndefs; i++)
        free(p->defs[i].bytes);
    free(p->defs);
    free(p->trace);
    free(p->hello);
    free(p->goodbye);
    free(p->sums);
    free(p->key);
    free(p);
}

/* p is done with (the head holds all of it, or refused it): out of the
 * table, and freed unless its member still points to it. */
static void forget(weft_daemon *d, pmember *p)
{
    weft_hashtab_del(&d->parts->table, p->id, sizeof(pcell));
    if (p->in)
        p->in->part = NULL;
    journal_remove(p);
    pdir_release(p->pd, 1);
    p->pd = NULL;
    pmember_free(p);
}

/* Sends a NodeRelay of p: r's fields with p's number. 0, or -1 when the
 * link is not there (what it carries goes on the next). */
static int send_relay(weft_daemon *d, pmember *p, Weft__NodeRelay *r)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;

    r->member = p->id;
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    env.node_relay = r;
    return weft__uplink_send_of(d, &env, p->uid) < 0 ? -1 : 0;
}

static int send_frame(weft_daemon *d, pmember *p, uint8_t *bytes,
                      size_t len)
{
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    r.frame.data = bytes;
    r.frame.len = len;
    return send_relay(d, p, &r);
}

/* p's Hello, vouching for its user, on the current link. */
static void send_hello(weft_daemon *d, pmember *p)
{
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    if (p->failed)
        return;
    r.frame.data = p->hello;
    r.frame.len = p->hello_len;
    r.uid = p->uid;
    r.gid = p->gid;
    r.pid = p->pid;
    r.events_here = 1;
    p->acked = p->tail_sent = p->again = 0;
    p->nsent = 0;
    p->sent = send_relay(d, p, &r) == 0;
}

/* Whether len bytes go in a NodeRelay the head takes (its max_frame):
 * a larger one would end the link for all. */
static int fits(const weft_daemon *d, size_t len)
{
    uint32_t max = weft__uplink_head_max(d);

    return max && len + WEFT_RELAY_OVERHEAD <= max;
}

/* Where p's sums may be cut into pieces of at most room bytes each
 * (between their fields), the pieces: sent when `send`, one NodeRelay
 * each, all but the last with sums_more. 0; -1 when the link is not
 * there (the next one sends them again); 1 when they cannot be cut so
 * (a field larger than room, or no MemberSums). */
static int sums_pieces(weft_daemon *d, pmember *p, size_t room, int send)
{
    for (size_t at = 0; at < p->sums_len;) {
        Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;
        ssize_t n = weft_frame_cut(p->sums + at, p->sums_len - at, room);
        if (n <= 0)
            return 1;
        r.sums.data = p->sums + at;
        r.sums.len = (size_t)n;
        at += (size_t)n;
        r.sums_more = at < p->sums_len;
        if (send && send_relay(d, p, &r) < 0)
            return -1;
    }
    return 0;
}

/* p's sums to the head, in one NodeRelay, or in pieces within its
 * max_frame; sums that cannot be cut so go (the head counts p's events
 * lost), said. 0, or -1 when the link is not there. */
static int send_sums(weft_daemon *d, pmember *p)
{
    uint32_t max = weft__uplink_head_max(d);
    size_t room = max > WEFT_RELAY_OVERHEAD ? max - WEFT_RELAY_OVERHEAD : 0;

    if (sums_pieces(d, p, room, 0) == 1) {
        weft_dlog(d, WEFT_LOG_ERROR, "trace '%s' rank %u: its sums (%zu "
                  "bytes) cannot be cut into pieces within the head's "
                  "max_frame (%u): the head counts its events lost",
                  p->trace, p->rank, p->sums_len, (unsigned)max);
        free(p->sums);
        p->sums = NULL;
        return 0;
    }
    return sums_pieces(d, p, room, 1);
}

/* Once its HelloAck came: p's Definitions not sent on this link, then,
 * once its stream is done with it and it ended, its sums and its end
 * (its Goodbye, or `closed`: its process is gone or it left). What the
 * head's max_frame does not take fails p (Definitions: the head cannot
 * have its events); its sums cross in pieces (send_sums). */
static void send_rest(weft_daemon *d, pmember *p)
{
    if (!p->acked || p->failed)
        return;
    while (p->nsent < p->ndefs) {
        if (!fits(d, p->defs[p->nsent].len)) {
            weft_dlog(d, WEFT_LOG_ERROR, "trace '%s' rank %u: Definitions "
                      "of %zu bytes, beyond the head's max_frame (%u): its "
                      "events cannot reach the head's archive", p->trace,
                      p->rank, p->defs[p->nsent].len,
                      (unsigned)weft__uplink_head_max(d));
            p->failed = 1;
            if (p->in && p->in->conn)
                weft_conn_fail_limit(p->in->conn, WEFT_LIMIT_MAX_FRAME,
                                     WEFT_ETOOBIG, "Definitions of %zu "
                                     "bytes: the head takes at most %u (its "
                                     "max_frame is below this node's)",
                                     p->defs[p->nsent].len,
                                     (unsigned)weft__uplink_head_max(d));
            if (p->in)
                weft_member_part_archive(p->in, NULL);
            return;
        }
        if (send_frame(d, p, p->defs[p->nsent].bytes,
                       p->defs[p->nsent].len) < 0)
            return;
        p->nsent++;
    }
    if (p->nsent < p->ndefs || p->tail_sent || !p->finished ||
        (!p->goodbye && !p->ended))
        return;
    if (p->sums && send_sums(d, p) < 0)
        return;
    if (p->goodbye) {
        if (send_frame(d, p, p->goodbye, p->goodbye_len) < 0)
            return;
    } else {
        Weft__NodeRelay end = WEFT__NODE_RELAY__INIT;
        end.closed = 1;
        end.gone = p->gone;
        if (send_relay(d, p, &end) < 0)
            return;
    }
    p->tail_sent = 1;
}

/* Packs env into *out (its length in *len). 0 or WEFT_ENOMEM. */
static int pack(const Weft__Envelope *env, uint8_t **out, size_t *len)
{
    ssize_t n = weft_frame_pack_bare(env, out);

    if (n < 0)
        return WEFT_ENOMEM;
    *len = (size_t)n;
    return 0;
}

/* ---- partlink.h's callbacks ---- */

static int takes(weft_daemon *d, const Weft__Hello *h)
{
    return !h->tree && d->parts && d->cfg.write_events &&
           weft__uplink_events_here(d);
}

static int head_clock(weft_daemon *d, int64_t *offset)
{
    return weft__uplink_head_clock(d, offset);
}

/* A number for a new member on the link: WEFT_PART_ID_BIT and another
 * 31 bits no member of a part has. */
static uint32_t new_id(weft_parts *ps)
{
    uint32_t id;

    do {
        ps->next_id = (ps->next_id + 1) & ~WEFT_PART_ID_BIT;
        id = WEFT_PART_ID_BIT | (ps->next_id ? ps->next_id : 1);
    } while (weft_hashtab_find(&ps->table, id, sizeof(pcell)));
    return id;
}

static int joined(weft_memberin *in, const uint8_t *hello, size_t len)
{
    weft_daemon *d = in->d;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    pmember *p;
    pcell *cell;
    int rc = WEFT_ENOMEM;

    if (in->part || !d->parts)
        return 0; /* back: the head has it, or gets it on the next link */
    if (!(p = calloc(1, sizeof *p)))
        return WEFT_ENOMEM;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = weft__hello__unpack(NULL, len, hello);
    if (!env.hello) {
        rc = WEFT_ECORRUPT;
        goto fail;
    }
    p->uid = env.hello->uid;
    p->trace = strdup(env.hello->trace);
    rc = pack(&env, &p->hello, &p->hello_len);
    weft__hello__free_unpacked(env.hello, NULL);
    if (rc < 0 || !p->trace)
        goto fail;
    p->in = in;
    p->rank = in->rank;
    p->pid = in->pid;
    p->gid = in->conn ? in->conn->peer_gid : 0;
    p->id = new_id(d->parts);
    if (pdir_take(p, in) < 0 ||
        !(cell = weft_hashtab_get(&d->parts->table, p->id, sizeof *cell)))
        goto fail;
    cell->p = p;
    in->part = p;
    weft_mlog(in, WEFT_LOG_DEBUG, "trace '%s' rank %u: journaled here, its "
              "events written into the head's archive; member %u of the "
              "link", p->trace, p->rank, (unsigned)(p->id & ~WEFT_PART_ID_BIT));
    send_hello(d, p);
    return 0;
fail:
    pdir_release(p->pd, 0);
    pmember_free(p);
    return rc < 0 ? rc : WEFT_ENOMEM;
}

/* Adds Definitions entry e to p's, sent at once when the head answered
 * its Hello on this link. 0 or WEFT_ENOMEM. */
static int add_defs(weft_daemon *d, pmember *p, const weft_journal_entry *e)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    pframe *f;

    if (p->ndefs == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        pframe *v = realloc(p->defs, cap * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        p->defs = v;
        p->cap = cap;
    }
    f = &p->defs[p->ndefs];
    defs.seq = e->seq;
    defs.records.data = (uint8_t *)e->payload;
    defs.records.len = e->len;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    if (pack(&env, &f->bytes, &f->len) < 0)
        return WEFT_ENOMEM;
    f->seq = e->seq;
    p->ndefs++;
    send_rest(d, p);
    return 0;
}

/* p's Goodbye entry e: kept until its sums are there. 0, or a WEFT_E*
 * code. */
static int add_goodbye(weft_daemon *d, pmember *p,
                       const weft_journal_entry *e)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    int rc;

    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    if (!(env.goodbye = weft__goodbye__unpack(NULL, e->len, e->payload)))
        return WEFT_ECORRUPT;
    rc = pack(&env, &p->goodbye, &p->goodbye_len);
    weft__goodbye__free_unpacked(env.goodbye, NULL);
    if (rc == 0) {
        p->ended = 1;
        send_rest(d, p);
    }
    return rc;
}

static void journaled(weft_memberin *in, const weft_journal_entry *e)
{
    pmember *p = in->part;
    int rc = 0;

    if (!p)
        return;
    if (e->kind == WEFT_JE_DEFS)
        rc = add_defs(in->d, p, e);
    else if (e->kind == WEFT_JE_GOODBYE && !p->goodbye)
        rc = add_goodbye(in->d, p, e);
    if (rc < 0)
        weft_mlog(in, WEFT_LOG_ERROR, "trace '%s' rank %u: its %s does not "
                  "go to the head: %s", p->trace, p->rank,
                  e->kind == WEFT_JE_DEFS ? "Definitions" : "Goodbye",
                  weft_strerror(rc));
}

static void finished(weft_memberin *in, uint8_t *sums, size_t len,
                     const char *why)
{
    pmember *p = in->part;

    if (!p || p->finished) {
        free(sums);
        return;
    }
    p->finished = 1;
    p->sums = sums;
    p->sums_len = len;
    if (!sums)
        weft_mlog(in, WEFT_LOG_ERROR, "trace '%s' rank %u: its events could "
                  "not be written into the head's archive (%s); the head "
                  "counts them lost", p->trace, p->rank,
                  why ? why : "out of memory");
    send_rest(in->d, p);
}

static void ended(weft_memberin *in, int gone)
{
    pmember *p = in->part;

    if (!p || p->ended)
        return;
    p->ended = 1;
    p->gone = gone;
    send_rest(in->d, p);
}

static void freed(weft_memberin *in)
{
    pmember *p = in->part;

    if (!p)
        return;
    p->in = NULL;
    in->part = NULL;
    /* What its stream did not finish is lost (weftd stops: its journal
     * stays; see parts.h). */
    p->ended = 1;
    if (!p->finished) {
        p->finished = 1;
        send_rest(in->d, p);
    }
}

static void released(void *link, int ended)
{
    pdir *pd = link;

    pd->ended = ended;
    pdir_release(pd, 1);
}

const weft_part_cbs weft_part_cbs_node = { takes, head_clock, joined,
                                           journaled, finished, ended,
                                           freed, released };

/* ---- the link ---- */

void weft__parts_linked(weft_daemon *d)
{
    weft_parts *ps = d->parts;

    for (size_t i = 0; ps && i < ps->table.ncells; i++) {
        pcell *cell = weft_hashtab_at(&ps->table, i, sizeof *cell);
        if (cell && !cell->p->sent)
            send_hello(d, cell->p);
    }
}

void weft__parts_unlinked(weft_daemon *d)
{
    weft_parts *ps = d->parts;

    for (size_t i = 0; ps && i < ps->table.ncells; i++) {
        pcell *cell = weft_hashtab_at(&ps->table, i, sizeof *cell);
        if (cell)
            cell->p->sent = cell->p->acked = cell->p->tail_sent = 0;
    }
}

/* The head holds p's Definitions up to seq. */
static void defs_held(pmember *p, uint64_t seq)
{
    size_t k = 0;

    while (k < p->ndefs && p->defs[k].seq <= seq)
        free(p->defs[k++].bytes);
    if (!k)
        return;
    memmove(p->defs, p->defs + k, (p->ndefs - k) * sizeof *p->defs);
    p->ndefs -= k;
    p->nsent = p->nsent > k ? p->nsent - k : 0;
}

/* The head says where p's events go: its part writes them there, under
 * the archive_root as this node sees it. */
static void on_key(weft_daemon *d, pmember *p, const char *key)
{
    const char *root = weft__uplink_archive_root(d);
    char *archive;

    if (p->key || !*key || strchr(key, '/') || strcmp(key, "..") == 0 ||
        strcmp(key, ".") == 0 || !root)
        return; /* said already; or nothing a directory name can be */
    if (!(p->key = strdup(key)) ||
        asprintf(&archive, "%s/%s/archive", root, key) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "trace '%s' rank %u: out of memory",
                  p->trace, p->rank);
        return;
    }
    if (p->in)
        weft_member_part_archive(p->in, archive);
    free(archive);
}

/* A frame the head sent for p: the answers to what it sent. */
static void on_frame(weft_daemon *d, pmember *p, const Weft__Envelope *env)
{
    switch (env->msg_case) {
    case WEFT__ENVELOPE__MSG_HELLO_ACK:
        p->acked = 1;
        p->nsent = 0;
        defs_held(p, env->hello_ack->definitions_seq);
        send_rest(d, p);
        break;
    case WEFT__ENVELOPE__MSG_ACK:
        if (env->ack->definitions)
            defs_held(p, env->ack->seq);
        break;
    case WEFT__ENVELOPE__MSG_ERROR:
        if (env->error->code == WEFT_EEXIST) {
            /* Its rank is still connected at the head (the link before
             * this one, not let go of yet): again at the next tick. */
            weft_dlog(d, WEFT_LOG_DEBUG, "trace '%s' rank %u: the head "
                      "has it connected still: %s; again in a heartbeat",
                      p->trace, p->rank, env->error->message);
            p->again = 1;
            break;
        }
        p->failed = 1;
        weft_dlog(d, WEFT_LOG_ERROR, "trace '%s' rank %u: the head refused "
                  "it: %s: %s", p->trace, p->rank,
                  weft_err_name(env->error->code), env->error->message);
        if (p->in && p->in->conn)
            weft_conn_fail(p->in->conn, env->error->code, "the head "
                           "refused this process: %s", env->error->message);
        if (p->in)
            weft_member_part_archive(p->in, NULL);
        break;
    default:
        break; /* (a ClockSync answer: this node answers its own) */
    }
}

void weft__parts_from_head(weft_daemon *d, const Weft__NodeRelay *r)
{
    pcell *cell = d->parts ? weft_hashtab_find(&d->parts->table, r->member,
                                               sizeof *cell)
                           : NULL;
    Weft__Envelope *env;
    pmember *p;

    if (!cell)
        return; /* done with meanwhile */
    p = cell->p;
    if (r->archive_key && *r->archive_key)
        on_key(d, p, r->archive_key);
    if (r->frame.len) {
        if (!(env = weft_frame_unpack(r->frame.data, r->frame.len))) {
            weft_dlog(d, WEFT_LOG_WARNING, "trace '%s' rank %u: the head "
                      "sent %zu bytes that are no weft frame", p->trace,
                      p->rank, r->frame.len);
            return;
        }
        on_frame(d, p, env);
        weft_frame_free_envelope(env);
    }
    if (!r->closed)
        return;
    if (p->tail_sent || p->failed) { /* the head holds all of it */
        weft_dlog(d, WEFT_LOG_DEBUG, "trace '%s' rank %u: the head holds "
                  "all of it", p->trace, p->rank);
        forget(d, p);
        return;
    }
    p->sent = p->acked = 0; /* the head let go of it: again */
    if (!p->again)
        send_hello(d, p);
}

void weft__parts_tick(weft_daemon *d)
{
    weft_parts *ps = d->parts;

    for (size_t i = 0; ps && i < ps->table.ncells; i++) {
        pcell *cell = weft_hashtab_at(&ps->table, i, sizeof *cell);
        if (cell && cell->p->again && !cell->p->sent) {
            cell->p->again = 0;
            send_hello(d, cell->p);
        }
    }
}

uint64_t weft_parts_count(const weft_daemon *d)
{
    return d->parts ? d->parts->table.used : 0;
}

void weft_parts_free(weft_daemon *d)
{
    weft_parts *ps = d->parts;

    if (!ps)
        return;
    for (size_t i = 0; i < ps->table.ncells; i++) {
        pcell *cell = weft_hashtab_at(&ps->table, i, sizeof *cell);
        if (!cell)
            continue;
        if (cell->p->in)
            cell->p->in->part = NULL;
        pdir_release(cell->p->pd, 0);  /* (kept for the next start) */
        pmember_free(cell->p);
    }
    weft_hashtab_free(&ps->table);
    free(ps);
    d->parts = NULL;
}
