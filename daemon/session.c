/* session.c - the protocol of one connection (see session.h).
 *
 * Ingest decodes every record once to validate it (types, references,
 * clocks, counts) because a bad record must be refused before it is
 * acknowledged; the journal then stores the payload bytes unchanged,
 * written by the journal writer thread (jwriter.h). The member's state
 * moves on as frames are accepted (the next frame is checked against
 * it); acks go out as entries come back written (weft_session_written),
 * and its held_* fields follow what is journaled.
 */
#include "session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "frame.h"
#include "jwriter.h"
#include "log.h"
#include "server.h"
#include "weft_errors.h"

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

/* "[k]" after an array field's name in messages, "" for scalars. */
static const char *idx(const weft_field_desc *f, size_t k, char *buf,
                       size_t n)
{
    if (!f->is_array)
        return "";
    snprintf(buf, n, "[%zu]", k);
    return buf;
}

/* The remembered count and type of definition `id` of `kind`, NULL if
 * there is none (undefined id, or a kind nothing checks against). */
static const weft_decl *decl_of(const weft_member *m, unsigned kind,
                                uint64_t id)
{
    const weft_decls *ds = &m->decls[kind];

    return id < ds->cap ? &ds->v[id] : NULL;
}

static int decl_set(weft_member *m, unsigned kind, uint64_t id,
                    weft_decl decl)
{
    weft_decls *ds = &m->decls[kind];

    if (id >= ds->cap) {
        uint64_t cap = ds->cap ? ds->cap : 16;
        weft_decl *p;
        while (cap <= id)
            cap *= 2;
        p = realloc(ds->v, cap * sizeof *p);
        if (!p)
            return WEFT_ENOMEM;
        memset(p + ds->cap, 0, (cap - ds->cap) * sizeof *p);
        ds->v = p;
        ds->cap = cap;
    }
    ds->v[id] = decl;
    return 0;
}

/* Checks reference v (value k of field f) of id space `kind`: ids this
 * member defined; for what weftd derives, the conventions of the record
 * table (locations rank << 32 | thread, location groups by rank, system
 * tree nodes 0 and 1). */
static int check_ref(const weft_member *m, const weft_rec_desc *d,
                     const weft_field_desc *f, size_t k, unsigned kind,
                     uint64_t v, char *err, size_t errlen)
{
    uint32_t size = m->trace->size;
    char ib[24];

    if (v == weft_ref_kind_undefined(kind))
        return 0;
    switch (kind) {
    case WEFT_REF_LOCATION:
        if ((v >> 32) >= size)
            return fail(err, errlen, WEFT_EREF, "%s.%s%s: location %" PRIu64
                        " is thread %" PRIu64 " of rank %" PRIu64 ", but the "
                        "trace has %" PRIu32 " processes", d->name, f->name,
                        idx(f, k, ib, sizeof ib), v, v & 0xffffffffu, v >> 32,
                        size);
        return 0;
    case WEFT_REF_LOCATION_GROUP:
        if (v >= size)
            return fail(err, errlen, WEFT_EREF, "%s.%s%s: location group %"
                        PRIu64 ": location groups are named by rank, and the "
                        "trace has %" PRIu32 " processes", d->name, f->name,
                        idx(f, k, ib, sizeof ib), v, size);
        return 0;
    case WEFT_REF_SYSTEM_TREE_NODE:
        if (v > 1)
            return fail(err, errlen, WEFT_EREF, "%s.%s%s: system tree node %"
                        PRIu64 ": clients name 0 (the machine) or 1 (their "
                        "host)", d->name, f->name, idx(f, k, ib, sizeof ib),
                        v);
        return 0;
    default:
        if (!weft_idset_has(&m->defined[kind], v))
            return fail(err, errlen, WEFT_EREF, "%s.%s%s: %s %" PRIu64
                        " is not defined", d->name, f->name,
                        idx(f, k, ib, sizeof ib), weft_ref_kind_name(kind),
                        v);
        return 0;
    }
}

/* Checks every value of record r (and of its attribute list) that the
 * table says something about: OTF2 enums, the type of typed values,
 * references, counts and declared types. Generic over the descriptors.
 * 0, or a WEFT_E* code with err naming record, field and value. */
static int check_record(const weft_member *m, const weft_rec_desc *d,
                        const weft_record *r, char *err, size_t errlen)
{
    char ib[24];
    int rc;

    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        size_t n = f->wire == WEFT_WIRE_Z ? 0 : weft_field_nvalues(r, f);
        for (size_t k = 0; k < n; k++) {
            uint64_t v = weft_field_value(r, f, k);
            unsigned kind;
            if (f->enum_id >= 0 && !weft_enum_valid(f->enum_id, v)) {
                if (weft_enum_is_flags(f->enum_id))
                    return fail(err, errlen, WEFT_EPROTO, "%s.%s%s: %#" PRIx64
                                " has bits that are no %s flag", d->name,
                                f->name, idx(f, k, ib, sizeof ib), v,
                                weft_enum_name(f->enum_id));
                return fail(err, errlen, WEFT_EPROTO, "%s.%s%s: %" PRIu64
                            " is not a valid %s", d->name, f->name,
                            idx(f, k, ib, sizeof ib), v,
                            weft_enum_name(f->enum_id));
            }
            if (f->sel_map == WEFT_SEL_TYPE &&
                weft_field_selector(r, d, f, k) == OTF2_TYPE_NONE)
                return fail(err, errlen, WEFT_EPROTO, "%s.%s%s: a value of "
                            "type OTF2_TYPE_NONE", d->name, f->name,
                            idx(f, k, ib, sizeof ib));
            kind = f->is_self ? WEFT_REF_NONE : weft_field_kind(r, d, f, k);
            if (kind != WEFT_REF_NONE &&
                (rc = check_ref(m, d, f, k, kind, v, err, errlen)) < 0)
                return rc;
            if (f->count_ref >= 0) {
                const weft_field_desc *rf = &d->fields[f->count_ref];
                uint64_t id = weft_field_get(r, rf);
                const weft_decl *dl = decl_of(m, rf->ref, id);
                if (dl && dl->count != v)
                    return fail(err, errlen, WEFT_EPROTO, "%s.%s: %" PRIu64
                                " elements, but %s %" PRIu64 " (%s) has %"
                                PRIu32, d->name, f->name, v,
                                weft_ref_kind_name(rf->ref), id, rf->name,
                                dl->count);
            }
            if (f->decl_ref >= 0) {
                const weft_field_desc *rf = &d->fields[f->decl_ref];
                uint64_t id = weft_field_value(r, rf, k);
                const weft_decl *dl = decl_of(m, rf->ref, id);
                if (dl && dl->type != v)
                    return fail(err, errlen, WEFT_EPROTO, "%s.%s%s: type %"
                                PRIu64 ", but %s %" PRIu64 " is declared with"
                                " type %u", d->name, f->name,
                                idx(f, k, ib, sizeof ib), v,
                                weft_ref_kind_name(rf->ref), id, dl->type);
            }
        }
    }
    if (r->attributes)
        return check_record(m, weft_rec_desc_of(r->attributes->type),
                            r->attributes, err, errlen);
    return 0;
}

/* Remembers what later records check against definition r with id `id`:
 * the count of its first array or, without one, the count of the
 * definition of its own id space it refers to (a MetricInstance has its
 * MetricClass's), and its declared OTF2_Type. */
static int remember_decl(weft_member *m, const weft_rec_desc *d,
                         const weft_record *r, unsigned kind, uint64_t id)
{
    weft_decl decl = { 0, 0 };

    if (!weft_ref_kind_has_decl(kind))
        return 0;
    if (d->count_field >= 0) {
        decl.count = (uint32_t)weft_field_get(r, &d->fields[d->count_field]);
    } else {
        for (unsigned i = 0; i < d->nfields; i++) {
            const weft_field_desc *f = &d->fields[i];
            const weft_decl *dl;
            if (f->is_self || f->is_array || f->ref != kind)
                continue;
            if ((dl = decl_of(m, kind, weft_field_get(r, f))) != NULL) {
                decl.count = dl->count;
                break;
            }
        }
    }
    if (d->decl_type_field >= 0)
        decl.type = (uint8_t)weft_field_get(r, &d->fields[d->decl_type_field]);
    return decl_set(m, kind, id, decl);
}


/* Undefines the ids defined by the first n records of a Definitions
 * payload. Each of them was new when it was added (check_defs refuses
 * redefinitions), so no earlier definition is lost. */
static void forget_defs(weft_member *m, const uint8_t *buf, size_t len,
                        uint64_t n)
{
    weft_decoder dec;
    weft_record r;

    weft_decoder_init(&dec, buf, len, 0, 0);
    dec.max_string = m->trace->d->cfg.max_string;
    while (n-- > 0 && weft_decoder_next(&dec, &r) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        const weft_field_desc *self;
        weft_idset *s;
        uint64_t id;
        if (rd->self_field < 0)
            continue;
        self = &rd->fields[rd->self_field];
        s = &m->defined[self->ref];
        id = weft_field_get(&r, self);
        if (id < s->cap)
            s->bits[id / 8] &= (uint8_t)~(1u << (id % 8));
    }
    weft_decoder_free(&dec);
}

/* A payload is accepted or refused as a whole: when a record is refused,
 * the ids the records before it defined are forgotten again, because the
 * payload is neither journaled nor acked and its ids must not satisfy
 * later references or block the corrected resend. */
int weft_session_check_defs(weft_member *m, const uint8_t *buf, size_t len,
                            char *err, size_t errlen)
{
    const weft_config *cfg = &m->trace->d->cfg;
    uint64_t nrec = 0, added = 0;
    weft_decoder dec;
    weft_record r;
    int rc;

    weft_decoder_init(&dec, buf, len, 0, 0);
    dec.max_string = cfg->max_string;
    while ((rc = weft_decoder_next(&dec, &r)) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        const weft_field_desc *self;
        uint64_t id;
        nrec++;
        if (rd->flags & WEFT_DF_DAEMON) {
            rc = fail(err, errlen, WEFT_ETYPE, "%s definitions are derived "
                      "by weftd and may not be sent by clients", rd->name);
            goto out;
        }
        rc = check_record(m, rd, &r, err, errlen);
        if (rc < 0)
            goto out;
        if (rd->self_field < 0)
            continue;
        self = &rd->fields[rd->self_field];
        id = weft_field_get(&r, self);
        if (id == weft_ref_kind_undefined(self->ref)) {
            rc = fail(err, errlen, WEFT_EPROTO, "%s.%s: the undefined id "
                      "cannot be defined", rd->name, self->name);
            goto out;
        }
        if (weft_idset_has(&m->defined[self->ref], id)) {
            rc = fail(err, errlen, WEFT_EEXIST, "%s.%s: %s %" PRIu64
                      " is already defined", rd->name, self->name,
                      weft_ref_kind_name(self->ref), id);
            goto out;
        }
        rc = weft_idset_add(&m->defined[self->ref], id, cfg->max_definitions);
        if (rc < 0) {
            rc = fail(err, errlen, rc, "%s.%s: id %" PRIu64 " exceeds "
                      "max_definitions (%" PRIu64 ")", rd->name, self->name,
                      id, cfg->max_definitions);
            goto out;
        }
        added = nrec;
        rc = remember_decl(m, rd, &r, self->ref, id);
        if (rc < 0) {
            rc = fail(err, errlen, rc, "%s: out of memory", rd->name);
            goto out;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", dec.error);
out:
    weft_decoder_free(&dec);
    if (rc < 0)
        forget_defs(m, buf, len, added);
    return rc < 0 ? rc : 0;
}

int weft_session_check_events(weft_member *m, uint32_t loc, uint64_t base,
                              uint32_t count, const uint8_t *buf, size_t len,
                              uint64_t *last_time, char *err, size_t errlen)
{
    uint64_t prev = m->locs[loc].last_time;
    const weft_idset *regions = &m->defined[WEFT_REF_REGION];
    weft_decoder dec;
    weft_record r;
    uint32_t n = 0;
    int rc;

    if (base < prev)
        return fail(err, errlen, WEFT_ETIME, "batch base time %" PRIu64
                    " is smaller than the last time %" PRIu64 " of thread %u",
                    base, prev, loc);
    weft_decoder_init(&dec, buf, len, 1, base);
    dec.max_string = m->trace->d->cfg.max_string;
    for (;;) {
        /* Enter/Leave, most of any trace: their one field is a region. */
        weft_el_run run = weft_el_begin(&dec), at = run;
        uint32_t type, region;
        while (weft_el_next(&run, &type, &region)) {
            if (region != OTF2_UNDEFINED_REGION &&
                !weft_idset_has(regions, region)) {
                run = at;  /* unread: check_record below says why */
                break;
            }
            n++;
            at = run;
        }
        weft_el_end(&run, &dec);
        prev = dec.time;
        if ((rc = weft_decoder_next(&dec, &r)) != 1)
            break;
        n++;
        prev = r.time;
        rc = check_record(m, weft_rec_desc_of(r.type), &r, err, errlen);
        if (rc < 0)
            goto out;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", dec.error);
        goto out;
    }
    if (n != count) {
        rc = fail(err, errlen, WEFT_EPROTO, "EventBatch announces %u events "
                  "but holds %u", count, n);
        goto out;
    }
    *last_time = prev;
out:
    weft_decoder_free(&dec);
    return rc < 0 ? rc : 0;
}

static void send_env(weft_conn *c, const Weft__Envelope *env)
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
    send_env(c, &env);
}

/* ---- durability = fsync: acks after a batched fdatasync ---- */

typedef struct sync_job {
    uv_work_t req;
    weft_member *m;
    weft_journal *journal;
    int rc;
    int err;
} sync_job;

static void kick_sync(weft_member *m);

static void sync_work(uv_work_t *req)
{
    sync_job *j = req->data;

    j->rc = weft_journal_sync(j->journal);
    j->err = errno;
}

static void sync_done(uv_work_t *req, int status)
{
    sync_job *j = req->data;
    weft_member *m = j->m;
    weft_conn *c = m->conn;

    m->trace->d->jobs--;
    m->sync_running = 0;
    if (c && j->rc < 0) {
        weft_conn_fail(c, WEFT_EIO, "cannot sync the journal of this process "
                       "in %s: %s", m->trace->dir, strerror(j->err));
    } else if (c) {
        for (size_t i = 0; i < m->syncing.n; i++)
            send_ack_now(c, m->syncing.v[i].definitions,
                         m->syncing.v[i].location, m->syncing.v[i].seq);
    }
    m->syncing.n = 0;
    free(j);
    if (m->trace->convert_when_synced)
        weft_trace_synced(m->trace);
    else
        kick_sync(m);
}

/* Starts an fdatasync covering every ack waiting, unless one runs: the
 * acks that arrive meanwhile wait for the next, so fsyncs are batched. */
static void kick_sync(weft_member *m)
{
    weft_daemon *d = m->trace->d;
    weft_ackq tmp;
    sync_job *j;

    if (m->sync_running || m->waiting.n == 0 || !m->journal)
        return;
    j = calloc(1, sizeof *j);
    if (!j)
        return; /* retried with the next ack */
    j->req.data = j;
    j->m = m;
    j->journal = m->journal;
    tmp = m->syncing;
    m->syncing = m->waiting;
    m->waiting = tmp;
    m->waiting.n = 0;
    if (uv_queue_work(d->loop, &j->req, sync_work, sync_done) != 0) {
        free(j);
        return;
    }
    m->sync_running = 1;
    d->jobs++;
}

/* Acknowledges a Definitions (definitions=1) or EventBatch frame: at once,
 * or with durability = fsync after the journal reached stable storage. */
static void send_ack(weft_conn *c, int definitions, uint32_t loc, uint64_t seq)
{
    weft_member *m = c->member;
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
    kick_sync(m);
}

/* What a journal entry's completion does (weft_session_written). */
enum { WRITTEN_HELLO, WRITTEN_DEFS, WRITTEN_EVENTS, WRITTEN_GOODBYE };

/* Queues entry e of c's member (payload copied) for the writer thread;
 * `what` and `last` (an EventBatch's last event time) are for its
 * completion. 0, or -1 after failing c. */
static int journal(weft_conn *c, const weft_journal_entry *e, int what,
                   uint64_t last)
{
    weft_member *m = c->member;
    weft_jentry *j = weft_jentry_new(e->len);

    if (!j) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return -1;
    }
    if (e->len)
        memcpy(j->data, e->payload, e->len);
    j->e = *e;
    j->e.payload = j->data;
    j->member = m;
    j->conn_serial = m->conn_serial;
    j->what = what;
    j->last_time = last;
    weft_jwriter_submit(c->d, j);
    weft_conn_check_pending(c);
    return 0;
}

/* Once nothing of m is queued: after a failed write, what was accepted
 * but not journaled is forgotten, so that the client's resend (from what
 * HelloAck reports) is accepted again. */
static void settle_member(weft_member *m)
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

void weft_session_written(weft_daemon *d, weft_jentry *j)
{
    weft_member *m = j->member;
    weft_conn *c = m->conn && m->conn_serial == j->conn_serial ? m->conn
                                                              : NULL;
    const weft_journal_entry *e = &j->e;

    if (j->rc < 0) {
        if (j->what == WRITTEN_DEFS) /* not journaled: the resend defines */
            forget_defs(m, e->payload, e->len, UINT64_MAX);
        if (j->what == WRITTEN_GOODBYE && c) /* it may say it again */
            m->said_goodbye = 0;
        if (c)
            weft_conn_fail(c, WEFT_EIO, "cannot write the journal of this "
                           "process in %s: %s", m->trace->dir,
                           strerror(j->err));
        else
            weft_mlog(m, WEFT_LOG_ERROR, "trace '%s' rank %u: cannot write "
                      "its journal in %s: %s", m->trace->name, m->rank,
                      m->trace->dir, strerror(j->err));
    } else if (j->what == WRITTEN_DEFS) {
        m->held_defs_seq = e->seq;
        if (c)
            send_ack(c, 1, 0, e->seq);
    } else if (j->what == WRITTEN_EVENTS) {
        weft_loc_state *l = &m->locs[e->location];
        l->held_seq = e->seq;
        if (e->count)
            l->held_time = j->last_time;
        l->events += e->count;
        d->events_in += e->count;
        d->bytes_in += e->len;
        if (c)
            send_ack(c, 0, e->location, e->seq);
    } else if (j->what == WRITTEN_GOODBYE && c) {
        weft_conn_log(c, WEFT_LOG_INFO, "said goodbye");
        weft_conn_close(c);
    }
    settle_member(m);
    if (c)
        weft_conn_drained(c);
    if (m->pending == 0 && c)
        weft_conn_written(c);
    if (m->pending == 0)
        weft_trace_member_written(m);
}

/* Limits of Hello.tags (README, "Tags"): at most WEFT_MAX_TAGS tags, keys
 * of 1..WEFT_MAX_TAG_KEY characters [A-Za-z0-9_.-], values up to
 * max_string bytes, each key once per Hello. */
#define WEFT_MAX_TAGS 64
#define WEFT_MAX_TAG_KEY 64

/* A printable copy of at most WEFT_MAX_TAG_KEY bytes of s for messages:
 * bytes outside printable ASCII become '?'. */
static const char *tag_key_shown(const char *s, char *buf, size_t n)
{
    size_t i = 0;

    for (; s[i] && i < WEFT_MAX_TAG_KEY && i + 1 < n; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    buf[i] = 0;
    return buf;
}

/* 0, or a WEFT_E* code with err naming the tag and the rule it breaks. */
static int check_tags(const Weft__Hello *h, uint64_t max_string, char *err,
                      size_t errlen)
{
    char kb[WEFT_MAX_TAG_KEY + 1];

    if (h->n_tags > WEFT_MAX_TAGS)
        return fail(err, errlen, WEFT_ELIMIT, "Hello: %zu tags, at most %d "
                    "are allowed", h->n_tags, WEFT_MAX_TAGS);
    for (size_t i = 0; i < h->n_tags; i++) {
        const char *k = h->tags[i]->key, *v = h->tags[i]->value;
        size_t n = strlen(k);
        if (n == 0)
            return fail(err, errlen, WEFT_EINVAL, "Hello: tag %zu has an "
                        "empty key", i + 1);
        if (n > WEFT_MAX_TAG_KEY)
            return fail(err, errlen, WEFT_EINVAL, "Hello: tag key '%s...' "
                        "is %zu bytes long, at most %d are allowed",
                        tag_key_shown(k, kb, sizeof kb), n, WEFT_MAX_TAG_KEY);
        if (strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789_.-") != n)
            return fail(err, errlen, WEFT_EINVAL, "Hello: tag key '%s' has "
                        "a character other than A-Z a-z 0-9 _ . -",
                        tag_key_shown(k, kb, sizeof kb));
        if (strlen(v) > max_string)
            return fail(err, errlen, WEFT_ELIMIT, "Hello: the value of tag "
                        "'%s' is %zu bytes long, over max_string (%" PRIu64
                        ")", k, strlen(v), max_string);
        for (size_t j = 0; j < i; j++)
            if (strcmp(h->tags[j]->key, k) == 0)
                return fail(err, errlen, WEFT_EINVAL, "Hello: tag '%s' is "
                            "given twice", k);
    }
    return 0;
}

static void on_hello(weft_conn *c, const Weft__Hello *h)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__HelloAck ack = WEFT__HELLO_ACK__INIT;
    Weft__LocationSeq *seqs = NULL, **seqp = NULL;
    weft_journal_entry e = { 0 };
    uint8_t *packed = NULL;
    Weft__Hello owned;
    weft_member *m;
    char err[512];
    int rc;

    if (c->member) {
        weft_conn_fail(c, WEFT_EPROTO, "second Hello on one connection");
        return;
    }
    if (h->protocol_version != WEFT_PROTOCOL_VERSION) {
        weft_conn_fail(c, WEFT_EVERSION, "protocol version %u is not "
                       "supported: this weftd speaks version %d",
                       h->protocol_version, WEFT_PROTOCOL_VERSION);
        return;
    }
    rc = check_tags(h, c->d->cfg.max_string, err, sizeof err);
    if (rc < 0) {
        weft_conn_fail(c, rc, "%s", err);
        return;
    }
    rc = weft_trace_join(c->d, h, c->has_peer_uid ? c->peer_uid : h->uid, &m,
                         err, sizeof err);
    if (rc < 0) {
        weft_conn_fail(c, rc, "%s", err);
        return;
    }
    m->conn = c;
    m->conn_serial++;
    c->member = m;
    /* The journal keeps the owner weftd decided on, for recovery. HelloAck
     * goes out before the entry is written: the entries after it, which
     * are what gets acknowledged, are written after it. */
    owned = *h;
    owned.uid = m->trace->uid;
    e.kind = WEFT_JE_HELLO;
    e.len = (uint32_t)weft__hello__get_packed_size(&owned);
    packed = malloc(e.len ? e.len : 1);
    if (!packed) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return;
    }
    weft__hello__pack(&owned, packed);
    e.payload = packed;
    rc = journal(c, &e, WRITTEN_HELLO, 0);
    free(packed);
    if (rc < 0)
        return;
    seqs = calloc(m->nlocs ? m->nlocs : 1, sizeof *seqs);
    seqp = calloc(m->nlocs ? m->nlocs : 1, sizeof *seqp);
    if (!seqs || !seqp) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
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
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO_ACK;
    env.hello_ack = &ack;
    send_env(c, &env);
    weft_conn_log(c, WEFT_LOG_INFO, "joined (host %s, pid %u, %u of %u "
                  "members)", h->hostname, h->pid, m->trace->joined,
                  m->trace->size);
out:
    free(seqs);
    free(seqp);
}

static void on_definitions(weft_conn *c, const Weft__Definitions *defs)
{
    weft_member *m = c->member;
    weft_journal_entry e = { 0 };
    char err[512];
    int rc;

    if (defs->seq == 0) { /* would be "acked" below and dropped */
        weft_conn_fail(c, WEFT_EPROTO, "Definitions seq 0: sequence "
                       "numbers start at 1");
        return;
    }
    if (defs->seq <= m->held_defs_seq) { /* a resend of what we hold */
        send_ack(c, 1, 0, defs->seq);
        return;
    }
    if (defs->seq <= m->defs_seq)
        return; /* queued: acknowledged once written */
    if (defs->seq != m->defs_seq + 1) {
        weft_conn_fail(c, WEFT_EPROTO, "Definitions seq %" PRIu64 " after %"
                       PRIu64 ": a batch is missing", defs->seq, m->defs_seq);
        return;
    }
    rc = weft_session_check_defs(m, defs->records.data, defs->records.len,
                                 err, sizeof err);
    if (rc < 0) {
        weft_conn_fail(c, rc, "bad definition: %s", err);
        return;
    }
    e.kind = WEFT_JE_DEFS;
    e.seq = defs->seq;
    e.payload = defs->records.data;
    e.len = (uint32_t)defs->records.len;
    if (journal(c, &e, WRITTEN_DEFS, 0) < 0) {
        /* Not journaled: the resend after a reconnect defines them. */
        forget_defs(m, defs->records.data, defs->records.len, UINT64_MAX);
        return;
    }
    m->defs_seq = defs->seq; /* acknowledged once written */
}

static int ensure_location(weft_conn *c, uint32_t loc)
{
    char err[256];
    int rc = weft_member_location(c->member, loc, err, sizeof err);

    if (rc < 0)
        weft_conn_fail(c, rc, "%s", err);
    return rc;
}

static void on_batch(weft_conn *c, const Weft__EventBatch *b)
{
    weft_member *m = c->member;
    weft_journal_entry e = { 0 };
    uint64_t last = 0;
    char err[512];
    int rc;

    if (ensure_location(c, b->location) < 0)
        return;
    if (b->seq == 0) { /* would be "acked" below and dropped */
        weft_conn_fail(c, WEFT_EPROTO, "thread %u: EventBatch seq 0: "
                       "sequence numbers start at 1", b->location);
        return;
    }
    if (b->seq <= m->locs[b->location].held_seq) {
        send_ack(c, 0, b->location, b->seq); /* a resend of what we hold */
        return;
    }
    if (b->seq <= m->locs[b->location].last_seq)
        return; /* queued: acknowledged once written */
    if (b->seq != m->locs[b->location].last_seq + 1) {
        weft_conn_fail(c, WEFT_EPROTO, "thread %u: EventBatch seq %" PRIu64
                       " after %" PRIu64 ": a batch is missing", b->location,
                       b->seq, m->locs[b->location].last_seq);
        return;
    }
    rc = weft_session_check_events(m, b->location, b->base_time, b->events,
                                   b->records.data, b->records.len, &last,
                                   err, sizeof err);
    if (rc < 0) {
        weft_conn_fail(c, rc, "thread %u, batch %" PRIu64 ": %s",
                       b->location, b->seq, err);
        return;
    }
    e.kind = WEFT_JE_EVENTS;
    e.location = b->location;
    e.seq = b->seq;
    e.base_time = b->base_time;
    e.count = b->events;
    e.payload = b->records.data;
    e.len = (uint32_t)b->records.len;
    if (journal(c, &e, WRITTEN_EVENTS, last) < 0)
        return;
    /* Acknowledged once written (weft_session_written). */
    m->locs[b->location].last_seq = b->seq;
    if (b->events)
        m->locs[b->location].last_time = last;
}

static void on_goodbye(weft_conn *c, const Weft__Goodbye *g)
{
    weft_member *m = c->member;
    weft_journal_entry e = { 0 };
    uint8_t *packed;
    int rc;

    /* Conversion makes a location of every thread named here. */
    for (size_t i = 0; i < g->n_locations; i++) {
        if (g->locations[i]->location >= c->d->cfg.max_locations) {
            weft_conn_fail(c, WEFT_ELIMIT, "Goodbye: thread %u exceeds "
                           "max_locations (%" PRIu64 ")",
                           g->locations[i]->location,
                           c->d->cfg.max_locations);
            return;
        }
    }
    e.kind = WEFT_JE_GOODBYE;
    e.len = (uint32_t)weft__goodbye__get_packed_size(g);
    packed = malloc(e.len ? e.len : 1);
    if (!packed) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return;
    }
    weft__goodbye__pack(g, packed);
    e.payload = packed;
    rc = journal(c, &e, WRITTEN_GOODBYE, 0);
    free(packed);
    if (rc < 0)
        return;
    /* Counted now (the trace converts once the entry is written too);
     * the connection closes once it is written, after the acks of what
     * came before it. */
    m->said_goodbye = 1;
    weft_conn_hold(c);
}

/* ---- clock offsets ---- */

/* ClockSync requests answered per connection: libweft sends 8 when it
 * starts and 8 before its Goodbye; more is a client measuring in a loop,
 * which would cost the loop thread, so it is a protocol error. */
#define WEFT_MAX_CLOCK_SYNCS 64u

/* weftd's clock for clock offsets: CLOCK_MONOTONIC in ns. */
static uint64_t server_clock_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Answers a ClockSync at once, from the loop thread, with the same id and
 * client_time and weftd's clock now. Nothing is stored here: the client
 * computes its offset and sends it as a ClockOffset definition, which is
 * journaled (and survives restarts) like every definition. */
static void on_clock_sync(weft_conn *c, const Weft__ClockSync *cs)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync reply = WEFT__CLOCK_SYNC__INIT;

    if (++c->clock_syncs > WEFT_MAX_CLOCK_SYNCS) {
        weft_conn_fail(c, WEFT_ELIMIT, "more than %u ClockSync requests on "
                       "one connection", WEFT_MAX_CLOCK_SYNCS);
        return;
    }
    reply.id = cs->id;
    reply.client_time = cs->client_time;
    reply.server_time = server_clock_ns();
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &reply;
    send_env(c, &env);
}

void weft_session_frame(weft_conn *c, const Weft__Envelope *env)
{
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO && !c->member) {
        weft_conn_fail(c, WEFT_EPROTO, "%s before Hello",
                       weft_frame_kind_name(env->msg_case));
        return;
    }
    switch (env->msg_case) {
    case WEFT__ENVELOPE__MSG_HELLO:
        on_hello(c, env->hello);
        break;
    case WEFT__ENVELOPE__MSG_DEFINITIONS:
        on_definitions(c, env->definitions);
        break;
    case WEFT__ENVELOPE__MSG_EVENT_BATCH:
        on_batch(c, env->event_batch);
        break;
    case WEFT__ENVELOPE__MSG_GOODBYE:
        on_goodbye(c, env->goodbye);
        break;
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC:
        on_clock_sync(c, env->clock_sync);
        break;
    default:
        weft_conn_fail(c, WEFT_EPROTO, "unexpected %s from a client",
                       weft_frame_kind_name(env->msg_case));
        break;
    }
}

void weft_session_closed(weft_conn *c)
{
    weft_member *m = c->member;

    if (!m)
        return;
    m->conn = NULL;
    m->waiting.n = 0; /* acks for this connection; a new one resends */
    if (!m->said_goodbye)
        weft_conn_log(c, WEFT_LOG_WARNING, "disconnected without goodbye; "
                      "waiting for it to come back");
    c->member = NULL;
    weft_trace_member_left(m);
}
