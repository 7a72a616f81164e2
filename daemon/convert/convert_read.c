/* convert_read.c - reading one member's journal (weft__conv_read_member),
 * for both passes of a conversion (convert.c's DESIGN), and what pass 1
 * makes of its entries: the member's host, size and clock from its Hello,
 * the counts of its Goodbye, its definitions fed to the trace's unifier
 * and its own (ClockOffsets and TeamMembers kept aside), its locations.
 * Pass 2 hands the event entries to its replay function (replay.c).
 * Resends (an entry whose seq is not above the last one of its location
 * or definitions) are skipped the same way in both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec.h"
#include "convert_internal.h"
#include "replay.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* Gives m the system tree node of its host: hosts get nodes 1.. in rank
 * order of first appearance (members are read in rank order), the root
 * is 0. Tells the unifier what the member's system tree node references
 * mean: 0 the machine, 1 its host. */
static int place_host(conv *c, member *m)
{
    char msg[256];
    int rc;

    m->node = 0;
    for (member *k = c->mems; k < m; k++)
        if (k->has_hello && !strcmp(k->hostname, m->hostname)) {
            m->node = k->node;
            break;
        }
    if (!m->node)
        m->node = c->nodes++;
    rc = weft_unify_set_derived(c->u, m->rank, WEFT_REF_SYSTEM_TREE_NODE, 0, 0,
                                msg, sizeof msg);
    if (rc == 0)
        rc = weft_unify_set_derived(c->u, m->rank, WEFT_REF_SYSTEM_TREE_NODE,
                                    1, m->node, msg, sizeof msg);
    return rc < 0 ? weft__conv_fail(c, rc, "%s: %s", m->path, msg) : 0;
}

/* The first value of an id space in `kinds` (bit k: weft_ref_kind k)
 * that r refers to (not its own id, not the undefined one) for which fn
 * returns nonzero: fn's result, or 0 when there is none. */
static int each_ref(conv *c, const weft_record *r, uint32_t kinds,
                    int (*fn)(conv *c, uint64_t v))
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        size_t n = f->wire == WEFT_WIRE_Z || f->is_self
                       ? 0 : weft_field_nvalues(r, f);
        for (size_t k = 0; k < n; k++) {
            unsigned kind = weft_field_kind(r, d, f, k);
            uint64_t v;
            int rc;
            if (kind == WEFT_REF_NONE || !(kinds >> kind & 1))
                continue;
            v = weft_field_value(r, f, k);
            if (v != weft_ref_kind_undefined(kind) && (rc = fn(c, v)) != 0)
                return rc;
        }
    }
    return 0;
}

static int any(conv *c, uint64_t v)
{
    (void)c, (void)v;
    return 1;
}

/* See convert_internal.h. */
int weft__conv_refers(const weft_record *r, uint32_t kinds)
{
    return each_ref(NULL, r, kinds, any) ||
           (r->attributes && weft__conv_refers(r->attributes, kinds));
}

/* See convert_internal.h. */
int weft__conv_note_location(conv *c, uint64_t v)
{
    if (c->nloc_refs == c->loc_refs_cap) {
        size_t cap = c->loc_refs_cap ? 2 * c->loc_refs_cap : 64;
        uint64_t *p = realloc(c->loc_refs, cap * sizeof *p);
        if (!p)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        c->loc_refs = p;
        c->loc_refs_cap = cap;
    }
    c->loc_refs[c->nloc_refs++] = v;
    return 0;
}

/* Pass 1 for the unified definitions, pass 2 for each event (a worker's
 * own list). */
int weft__conv_note_locations(conv *c, const weft_record *r)
{
    int rc = 0;

    if (weft_rec_desc_of(r->type)->names_location)
        rc = each_ref(c, r, UINT32_C(1) << WEFT_REF_LOCATION,
                      weft__conv_note_location);
    if (rc == 0 && r->attributes)
        rc = weft__conv_note_locations(c, r->attributes);
    return rc;
}

/* 1 for location group v (a rank, as clients name them) of a process
 * that has no journal. */
static int absent_group(conv *c, uint64_t v)
{
    return v > UINT32_MAX || !weft__conv_member(c, (uint32_t)v);
}

/* m's first Hello: its host, trace size, clock, process and thread 0. */
static int first_hello(conv *c, member *m, const Weft__Hello *h)
{
    m->hostname = strdup(h->hostname && h->hostname[0] ? h->hostname
                                                       : "unknown host");
    m->program = weft__conv_program(h->command);
    if (!m->hostname || !m->program)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    m->has_hello = 1;
    m->size = h->size;
    m->tree = h->tree;
    m->pid = h->pid;
    m->parent_pid = h->parent_pid;
    m->timer_resolution = h->timer_resolution;
    m->clock = weft_clock_name(h->clock, h->timer_resolution);
    m->realtime_ns = h->realtime_ns;
    m->clock_at_realtime = h->clock_at_realtime;
    /* Every process has at least one thread: an archive without
     * locations is not valid OTF2, and a member that recorded nothing is
     * still a process of the trace. */
    if (!weft__conv_loc(m, 0, 1))
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    return place_host(c, m);
}

static int on_hello(conv *c, member *m, const weft_journal_entry *e,
                    uint64_t off)
{
    Weft__Hello *h = weft__hello__unpack(NULL, e->len, e->payload);
    int rc;

    if (!h)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": Hello does not unpack", m->path,
                               off);
    rc = weft__conv_check_hello(c, m, h, off);
    /* A reconnect repeats Hello; the first one stands. */
    if (rc == 0 && !m->has_hello)
        rc = first_hello(c, m, h);
    weft__hello__free_unpacked(h, NULL);
    return rc;
}

static int on_goodbye(conv *c, member *m, const weft_journal_entry *e,
                      uint64_t off)
{
    Weft__Goodbye *g = weft__goodbye__unpack(NULL, e->len, e->payload);
    int rc = 0;

    if (!g)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": Goodbye does not unpack", m->path,
                               off);
    m->has_goodbye = 1;
    for (size_t i = 0; i < g->n_locations; i++) {
        /* A thread that reports nothing and sent nothing is no location
         * (a Goodbye naming thousands would make them all). */
        int some = g->locations[i]->events || g->locations[i]->dropped;
        loc *l = weft__conv_loc(m, g->locations[i]->location, some);
        if (!l && !some)
            continue;
        if (!l) {
            rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            break;
        }
        l->said_goodbye = 1;
        l->sent = g->locations[i]->events;
        l->dropped = g->locations[i]->dropped;
    }
    weft__goodbye__free_unpacked(g, NULL);
    return rc;
}

/* Counts record r, number n of definitions entry e of m, as left out
 * in *count, and says it in first (len bytes) when it is the first. */
static void note_left_out(uint64_t *count, char *first, size_t len,
                          const member *m, const weft_journal_entry *e,
                          uint64_t n, const weft_record *r)
{
    if ((*count)++ == 0)
        snprintf(first, len, "%s: definitions seq %" PRIu64 ", record %"
                 PRIu64 ": %s", m->path, e->seq, n,
                 weft_rec_desc_of(r->type)->name);
}

static int on_defs(conv *c, member *m, const weft_journal_entry *e,
                   uint64_t off)
{
    weft_decoder d;
    weft_record r;
    char msg[256];
    uint64_t n = 0;
    int rc;

    weft_decoder_init(&d, e->payload, e->len, 0, 0);
    while ((rc = weft_decoder_next(&d, &r)) == 1) {
        n++;
        if (r.type == WEFT_REC_ThreadName) {
            /* The thread's location may come later in the journal: its
             * name is looked up once pass 1 is done (name_threads). */
            loc *l = weft__conv_loc(m, r.u.ThreadName.thread, 1);
            if (!l) {
                rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
                break;
            }
            l->name_ref = r.u.ThreadName.name + 1u;
            continue;
        }
        if (r.type == WEFT_REC_TeamMember) {
            /* Its team's group is written with the members (teams.c);
             * one whose comm is none of the trace's is left out, and
             * the trace is partial saying so (check_counts). */
            int k = weft__teams_note(c, m, &r);
            if (k < 0) {
                rc = k;
                break;
            }
            if (k == 1)
                note_left_out(&c->teamless, c->teamless_def,
                              sizeof c->teamless_def, m, e, n, &r);
            continue;
        }
        if (weft_rec_desc_of(r.type)->flags & WEFT_DF_LOCAL) {
            if ((rc = weft__conv_keep_local_def(c, m, &r)) < 0)
                break;
            continue;
        }
        /* Ingest takes the location group of any rank of the trace, but
         * a process that never came has none in the archive: the
         * definition (a property of it, which nothing refers to) is left
         * out, and the trace is partial saying so (check_counts). */
        if (each_ref(c, &r, UINT32_C(1) << WEFT_REF_LOCATION_GROUP,
                     absent_group)) {
            note_left_out(&c->absent, c->absent_def, sizeof c->absent_def,
                          m, e, n, &r);
            /* A node's stream numbered it among the member's own (its
             * sums' ids, sums.c). */
            if (m->remote &&
                (rc = weft_unify_add_def(m->u, m->rank, &r, msg,
                                         sizeof msg)) < 0) {
                weft__conv_fail(c, rc, "%s: entry at offset %" PRIu64
                                " (definitions seq %" PRIu64 "), record %"
                                PRIu64 ": %s", m->path, off, e->seq, n,
                                msg);
                break;
            }
            continue;
        }
        rc = weft_unify_add_def(c->u, m->rank, &r, msg, sizeof msg);
        if (rc == 1 && c->conflicts++ == 0)
            snprintf(c->conflict, sizeof c->conflict, "%s", msg);
        if (rc >= 0)
            rc = weft_unify_add_def(m->u, m->rank, &r, msg, sizeof msg);
        if (rc < 0) {
            weft__conv_fail(c, rc, "%s: entry at offset %" PRIu64
                            " (definitions seq %" PRIu64 "), record %"
                            PRIu64 ": %s", m->path, off, e->seq, n, msg);
            break;
        }
    }
    if (rc < 0 && !c->out->error[0])
        weft__conv_fail(c, rc, "%s: entry at offset %" PRIu64 " (definitions"
                        " seq %" PRIu64 "), record %" PRIu64 ": %s", m->path,
                        off, e->seq, n + 1, d.error);
    weft_decoder_free(&d);
    return rc < 0 ? rc : 0;
}

/* ---- reading a journal ------------------------------------------------ */

/* Fails for the entry of m's journal at off that cannot be read, up to
 * end. */
static int torn(conv *c, const member *m, uint64_t off, uint64_t end)
{
    return weft__conv_fail(c, WEFT_ECORRUPT, "%s: torn or corrupt entry at "
                           "offset %" PRIu64 " (bad length, checksum or end "
                           "of file); %" PRIu64 " bytes from there cannot be "
                           "read", m->path, off, end - off);
}

/* An events entry that is no resend: pass 1 (replay NULL) counts its
 * events, pass 2 replays them. */
static int on_events(conv *c, member *m, const weft_journal_entry *e,
                     uint64_t off, weft__replay_fn *replay)
{
    loc *l = weft__conv_loc(m, e->location, !replay);

    if (!l)
        return weft__conv_fail(c, replay ? WEFT_ESTATE : WEFT_ENOMEM,
                               "%s: entry at offset %" PRIu64 ": thread %"
                               PRIu32 ": %s", m->path, off, e->location,
                               replay ? "unknown location" : "out of memory");
    if (e->seq <= l->last_seq)
        return 0;
    l->last_seq = e->seq;
    if (e->kind == WEFT_JE_REFUSED) { /* no events: counted in pass 1 */
        if (!replay)
            weft__conv_refused(m, l, e);
    } else if (replay)  /* in another group of locations with no writer */
        return l->w ? replay(c, m, l, e, off) : 0;
    else
        l->journaled += e->count;
    return 0;
}

/* Entry e at off of m's journal (see weft__conv_read_member). */
static int on_entry(conv *c, member *m, const weft_journal_entry *e,
                    uint64_t off, weft__replay_fn *replay)
{
    switch (e->kind) {
    case WEFT_JE_HELLO:
        return replay ? 0 : on_hello(c, m, e, off);
    case WEFT_JE_DEFS:
        if (e->seq <= m->defs_seq)
            return 0;
        m->defs_seq = e->seq;
        return replay ? 0 : on_defs(c, m, e, off);
    case WEFT_JE_EVENTS:
    case WEFT_JE_REFUSED:
        return on_events(c, m, e, off, replay);
    case WEFT_JE_GOODBYE:
        return replay ? 0 : on_goodbye(c, m, e, off);
    case WEFT_JE_SUMS: /* a node's (the daemon gives them: in->remote) */
        return 0;
    default:
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 " has unknown kind %u", m->path, off,
                               e->kind);
    }
}

/* The good entries of m's journal end at off: pass 1 checks the file
 * ends there too and had a Hello, pass 2 that it read what pass 1 did. */
static int check_end(conv *c, member *m, uint64_t off, int pass)
{
    struct stat st;

    if (pass == 2)  /* short of it: a bad checksum of events */
        return off < m->good_end ? torn(c, m, off, m->good_end) : 0;
    m->good_end = off;
    if (stat(m->path, &st) < 0)
        return weft__conv_fail(c, WEFT_EIO, "%s: %s", m->path,
                               strerror(errno));
    if ((uint64_t)st.st_size > off)
        return torn(c, m, off, (uint64_t)st.st_size);
    if (!m->has_hello)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: no Hello entry",
                               m->path);
    return 0;
}

/* Pass 1 on the conversion's thread, pass 2 on m's replayer. */
int weft__conv_read_member(conv *c, member *m, weft__replay_fn *replay)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    uint64_t off = 0;
    int rc;

    m->defs_seq = 0;
    for (size_t i = 0; i < m->nlocs; i++)
        m->locs[i].last_seq = 0;
    rc = weft_journal_reader_open(m->path, &r);
    if (rc < 0) {
        weft__conv_fail(c, rc, "%s: cannot read the journal: %s", m->path,
                        rc == WEFT_ECORRUPT
                            ? "not a weft journal (bad magic)"
                            : weft_strerror(rc));
        goto out;
    }
    /* Pass 1 steps over the events: pass 2 reads and checks them. */
    if (!replay)
        weft_journal_reader_skip(r, WEFT_JE_EVENTS);
    for (;;) {
        off = weft_journal_reader_offset(r);
        rc = weft_journal_reader_next(r, &e);
        if (rc < 0) {
            weft__conv_fail(c, rc, "%s: reading the entry at offset %"
                            PRIu64 ": %s", m->path, off, weft_strerror(rc));
            goto out;
        }
        if (rc == 0)
            break;
        if ((rc = on_entry(c, m, &e, off, replay)) < 0)
            goto out;
    }
    rc = check_end(c, m, weft_journal_reader_offset(r), replay ? 2 : 1);
out:
    weft_journal_reader_close(r);
    return rc;
}

