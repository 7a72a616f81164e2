/* stream.c - a trace converted while it records (convert.h, issue #33).
 *
 * DESIGN: a stream is a conversion's pass 2 run ahead of time, member by
 * member, as the journals grow. It has a conv of its own (streaming set:
 * no trace unifier, c->u NULL) whose members are those it was told of,
 * each with its own unifier (member.u) and the stream's record of it
 * (smember: how far its journal was read, its profile and maps, what its
 * nesting counted). A step reads a member's journal from where the last
 * one stopped up to its last whole entry: definitions go to the member's
 * unifier, event batches are replayed (replay.h) into event writers that
 * stay open until the member said goodbye and its journal is read to
 * the end; then its open regions are left and its writers closed.
 * Nothing in it needs another member: events keep the member's own ids,
 * what the report sums is summed in them.
 *
 * What a stream assumes and the conversion checks: the archive's timer
 * resolution is the rate of rank 0 (read from its journal's Hello; a
 * member waits for it), and a member whose ticks would be scaled (its
 * rate more than 10 ppm from it, or not corrected by ClockOffsets) is
 * not adopted; with a fixed resolution (1 ns) every member of another
 * rate is rescaled from its Hello on, as the conversion then does; an
 * event that names an id OTF2 cannot map (system tree nodes, location
 * groups... in an attribute value) is written with the
 * trace's ids, which only the conversion knows: its member is not
 * streamed further. Such a member, one with a bad record, and one whose
 * writers the budget shared by a daemon's streams has no room for (a
 * writer's chunk when it opens, libotf2's 4 MiB file buffer once it
 * flushes: weft__stream_flushed) are left to the conversion: their
 * writers are closed (their memory given back) and their event files
 * written again from the journal (libotf2 starts a location's file
 * anew). A failure of the archive itself (libotf2; the disk, or less
 * free than the budget's floor: the journals come first) stops the
 * stream and removes what it wrote: the conversion then makes the
 * archive anew.
 *
 * The archive is two libotf2 archives on one directory, as a node's
 * weftd and its head will write one (issue #34): the primary, made
 * first (it makes the directories), which writes nothing until the
 * conversion has it (then the definitions, the anchor, and the event
 * files of members the stream left to it), and the events' archive
 * (weft__otf2_open_events), which writes the event files of the members
 * streamed and is closed when the conversion takes the stream's archive
 * (weft__stream_archive). A node's stream (events_only) has only the
 * events' archive, beside its head's primary, and sums every location
 * it writes; at a member's end it packs what it summed of it
 * (weft_convert_stream_sums, sums.c) for its head, which adopts the
 * member from those bytes as from its own stream.
 *
 * weft_convert_trace_stream (convert.c) does pass 1 as always (every
 * journal, the trace's unifier, the clocks), lets the stream read what
 * is left (weft__stream_catch_up), takes its archive and adopts each
 * member the stream wrote whole under the conversion's own findings
 * (weft__stream_adopt): its unifier, its locations' sums and states, its
 * nesting counts; pass 2 then only finishes those (their profile rows in
 * the trace's order, their sums in the trace's ids). The report's
 * timeline and metric plan is the stream's (made as locations come, for
 * the trace's announced size), kept where the conversion wants one.
 */
#include "convert.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "convert_internal.h"
#include "otf2out.h"
#include "replay.h"
#include "stream.h"
#include "stream_internal.h"
#include "sums.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* ---- the writer budget (budget.c keeps it) ---------------------------- */

/* `bytes` more for st's writers if s's budget (none: no bound) has room
 * for them, and its owner's share: 0, else why not. */
static int budget_take(weft_convert_stream *s, smember *st, uint64_t bytes)
{
    int why = s->budget ? weft_convert_budget_take(s->budget, s->owner,
                                                   bytes)
                        : 0;

    if (!why)
        st->bytes += bytes;
    return why;
}

/* st's writers are closed: their bytes go back. */
static void budget_give(weft_convert_stream *s, smember *st)
{
    if (s->budget && st->bytes)
        weft_convert_budget_give(s->budget, s->owner, st->bytes);
    st->bytes = 0;
}

/* What the streams hold when budget_take refused with `why`. */
static const char *budget_refusal(int why)
{
    return why == WEFT_BUDGET_SHARE
               ? "hold their owner's share of convert_memory (half)"
               : "hold convert_memory";
}

/* ---- members ---------------------------------------------------------- */

static void smember_free(smember *st)
{
    if (!st)
        return;
    weft_profile_free(&st->prof);
    weft_commmap_free(&st->cmap);
    weft_metricmap_free(&st->mmap);
    weft_callcounts_free(&st->ccount);
    free(st->n.loc_refs);
    free(st->why);
    free(st);
}

/* The member of rank, made when new (NULL when out of memory). Members
 * move when one is made: pointers to them last one step. */
static member *stream_member(weft_convert_stream *s, uint32_t rank)
{
    conv *c = &s->c;
    size_t lo = 0;
    char name[WEFT_JOURNAL_NAME_MAX];
    member *m = weft__conv_member(c, rank);

    if (m)
        return m;
    while (lo < c->nmems && c->mems[lo].rank < rank)
        lo++;
    if (c->nmems == s->mems_cap) {
        size_t cap = s->mems_cap ? 2 * s->mems_cap : 16;
        member *v = realloc(c->mems, cap * sizeof *v);
        if (!v)
            return NULL;
        c->mems = v;
        s->mems_cap = cap;
    }
    m = &c->mems[lo];
    memmove(m + 1, m, (c->nmems - lo) * sizeof *m);
    memset(m, 0, sizeof *m);
    c->nmems++;
    c->rev_of = NULL;  /* replay.c's reverse map names a member by place */
    m->rank = rank;
    weft_journal_name(name, sizeof name, rank);
    if (asprintf(&m->path, "%s/%s", s->trace_dir, name) < 0)
        m->path = NULL;
    m->u = weft_unify_new(0);
    m->st = calloc(1, sizeof *m->st);
    if (!m->path || !m->u || !m->st)
        return m;  /* live stays 0: left to the conversion */
    weft_unify_keep_first(m->u, 1);
    weft_unify_derived_own(m->u, 1);
    m->st->live = 1;
    return m;
}

/* Swaps st's profile, maps and nesting counts with those c replays with
 * (before and after a step of its member). */
static void swap_in(conv *c, smember *st)
{
    weft_profile p = c->prof;
    weft_commmap cm = c->cmap;
    weft_metricmap mm = c->mmap;
    weft_callcounts cc = c->ccount;
    uint64_t a = c->anomalies, d = c->added, u = c->unmatched;

    c->prof = st->prof;
    c->cmap = st->cmap;
    c->mmap = st->mmap;
    c->ccount = st->ccount;
    c->anomalies = st->n.anomalies;
    c->added = st->n.added;
    c->unmatched = st->n.unmatched;
    st->prof = p;
    st->cmap = cm;
    st->mmap = mm;
    st->ccount = cc;
    st->n.anomalies = a;
    st->n.added = d;
    st->n.unmatched = u;
}

/* c's maps (m swapped in) made again if m defined more since they were
 * made. In a stream the profile holds nothing of its own (its
 * locations' tables do; the conversion finishes them), so it is made
 * anew with the rest. 0 or WEFT_ENOMEM (c failed). */
static int refresh_maps(conv *c, member *m)
{
    size_t n = weft_unify_ndefs(m->u);

    if (c->prof.sum && n == m->st->ndefs)
        return 0;
    weft__replay_maps_free(c);
    m->st->ndefs = n;
    return weft__replay_maps(c, m, WEFT_PROFILE_ROWS_PER_LOCATION);
}

/* ---- reading a member's journal --------------------------------------- */

/* See stream_internal.h. */
uint64_t weft__stream_first_rate(weft_convert_stream *s)
{
    char path[PATH_MAX], name[WEFT_JOURNAL_NAME_MAX];
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    Weft__Hello *h;
    uint64_t rate = 0;

    snprintf(path, sizeof path, "%s/%s", s->trace_dir,
             weft_journal_name(name, sizeof name, 0));
    if (weft_journal_reader_open(path, &r) == 0 &&
        weft_journal_reader_next(r, &e) == 1 && e.kind == WEFT_JE_HELLO &&
        (h = weft__hello__unpack(NULL, e.len, e.payload)) != NULL) {
        rate = h->timer_resolution;
        weft__hello__free_unpacked(h, NULL);
    }
    weft_journal_reader_close(r);
    return rate;
}

/* See stream_internal.h. */
void weft__stream_set_resolution(weft_convert_stream *s, uint64_t res)
{
    weft_summary_plan plan = weft_summary_plan_of(
        s->in.members ? s->in.members : 1, res);

    s->c.resolution = res;
    s->c.tl_cap = plan.bins;
    s->c.tl_width = plan.width;
}

/* m's first Hello: its clock, its thread 0; the stream's resolution and
 * report plan, once rank 0's Hello is there (a fixed resolution: from
 * the start, and m rescaled when its rate differs). 0; 1 when rank 0's
 * is not (read again at the next step); WEFT_ESTATE when m's ticks
 * would be scaled without a fixed resolution (its rate too far from
 * rank 0's). */
static int on_hello(weft_convert_stream *s, conv *c, member *m,
                    const weft_journal_entry *e)
{
    Weft__Hello *h;

    if (!m->has_hello) {
        if (!(h = weft__hello__unpack(NULL, e->len, e->payload)))
            return weft__conv_fail(c, WEFT_ECORRUPT, "%s: Hello does not "
                                   "unpack", m->path);
        m->timer_resolution = h->timer_resolution;
        weft__hello__free_unpacked(h, NULL);
    }
    if (!c->resolution) {
        uint64_t res = m->rank == 0 ? m->timer_resolution : weft__stream_first_rate(s);
        if (!res)
            return 1;
        weft__stream_set_resolution(s, res);
    }
    m->has_hello = 1;
    if (s->in.resolution) {
        m->rescale = weft__conv_rescaled(m->timer_resolution,
                                         s->in.resolution);
        return 0;
    }
    if (!weft__conv_rate_near(m->timer_resolution, c->resolution))
        return weft__conv_fail(c, WEFT_ESTATE, "%s: its clock counts %"
                               PRIu64 " ticks per second, the trace's "
                               "first process %" PRIu64, m->path,
                               m->timer_resolution, c->resolution);
    return 0;
}

static int on_defs(conv *c, member *m, const weft_journal_entry *e,
                   uint64_t off)
{
    weft_decoder d;
    weft_record r;
    char msg[256];
    int rc;

    if (e->seq <= m->defs_seq)
        return 0;
    m->defs_seq = e->seq;
    weft_decoder_init(&d, e->payload, e->len, 0, 0);
    while ((rc = weft_decoder_next(&d, &r)) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        /* Thread names, team members and ClockOffsets are the
         * conversion's (pass 1). */
        if (r.type == WEFT_REC_ThreadName || r.type == WEFT_REC_TeamMember ||
            (rd->flags & WEFT_DF_LOCAL))
            continue;
        rc = weft_unify_add_def(m->u, m->rank, &r, msg, sizeof msg);
        if (rc < 0) {
            weft__conv_fail(c, rc, "%s: definitions at offset %" PRIu64
                            ": %s", m->path, off, msg);
            break;
        }
    }
    if (rc < 0 && !c->out->error[0])
        weft__conv_fail(c, rc, "%s: definitions at offset %" PRIu64 ": %s",
                        m->path, off, d.error);
    weft_decoder_free(&d);
    return rc < 0 ? rc : 0;
}

/* Location t of m, made with its place in the report's plan and its
 * writer open; NULL with c failed. */
static loc *stream_loc(weft_convert_stream *s, conv *c, member *m,
                       uint32_t t)
{
    loc *l = weft__conv_loc(m, t, 0);
    int why;

    if (l && l->w)
        return l;
    if (!l) {
        if (!(l = weft__conv_loc(m, t, 1))) {
            weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            return NULL;
        }
        /* A node's stream cannot know where its locations fall in the
         * trace's order: it sums them all (its head keeps those it
         * wants). */
        l->has_timeline = s->in.events_only ||
                          weft_summary_has_timeline(s->nlocs);
        l->has_metrics = s->in.events_only ||
                         weft_summary_has_metrics(s->nlocs);
        s->nlocs++;
    }
    if ((why = budget_take(s, m->st, WEFT_CONVERT_WRITER_BYTES)) != 0) {
        weft__conv_fail(c, WEFT_ELIMIT, "%s: thread %" PRIu32 ": the "
                        "streams' event writers %s", m->path, t,
                        budget_refusal(why));
        return NULL;
    }
    if (weft__otf2_open_writer(c, m, l) < 0)
        return NULL;
    if (l->has_timeline && !l->tl.bins &&
        weft_timeline_init(&l->tl, c->tl_cap, c->tl_width) < 0) {
        weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    return l;
}

static int on_events(weft_convert_stream *s, conv *c, member *m,
                     const weft_journal_entry *e, uint64_t off)
{
    loc *l = weft__conv_loc(m, e->location, 0);
    size_t refs = c->nloc_refs;
    int rc;

    if (l && e->seq <= l->last_seq)
        return 0;  /* a resend */
    if (e->kind == WEFT_JE_REFUSED) {
        if (!l && !(l = weft__conv_loc(m, e->location, 1)))
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        l->last_seq = e->seq;
        weft__conv_refused(m, l, e);  /* (its sums say them) */
        return 0;
    }
    if (!(l = stream_loc(s, c, m, e->location)))
        return WEFT_ESTATE;
    l->last_seq = e->seq;
    if ((rc = refresh_maps(c, m)) < 0 ||
        (rc = weft__replay_events(c, m, l, e, off)) < 0)
        return rc;
    /* The locations its events named are its own until it is adopted. */
    if (c->nloc_refs > refs) {
        smember *st = m->st;
        size_t n = c->nloc_refs - refs;
        uint64_t *v = realloc(st->n.loc_refs,
                              (st->n.nloc_refs + n) * sizeof *v);
        if (!v)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        memcpy(v + st->n.nloc_refs, c->loc_refs + refs, n * sizeof *v);
        st->n.loc_refs = v;
        st->n.nloc_refs += n;
        c->nloc_refs = refs;
    }
    return 0;
}

static int on_entry(weft_convert_stream *s, conv *c, member *m,
                    const weft_journal_entry *e, uint64_t off)
{
    switch (e->kind) {
    case WEFT_JE_HELLO:
        return on_hello(s, c, m, e);
    case WEFT_JE_DEFS:
        return on_defs(c, m, e, off);
    case WEFT_JE_EVENTS:
    case WEFT_JE_REFUSED:
        if (!m->has_hello)
            return weft__conv_fail(c, WEFT_ECORRUPT, "%s: events before "
                                   "its Hello", m->path);
        return on_events(s, c, m, e, off);
    case WEFT_JE_GOODBYE:
        m->st->goodbye = 1;
        return 0;
    case WEFT_JE_SUMS: /* a node's, of a member no stream writes here */
        return 0;
    default:
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 " has unknown kind %u", m->path, off,
                               e->kind);
    }
}

/* Failures of the archive itself, not of a member's records. */
static int archive_failure(int rc)
{
    return rc == WEFT_EOTF2 || rc == WEFT_EIO || rc == WEFT_ENOMEM;
}

/* m's journal is done (or the conversion wants it done): its open
 * regions left at its last times, its writers closed. */
static int end_member(weft_convert_stream *s, conv *c, member *m)
{
    int rc = weft__replay_nest_finish(c, m);

    if (rc == 0)
        rc = weft__replay_close_writers(c, m);
    else
        weft__replay_close_writers(c, m);
    budget_give(s, m->st);
    m->st->done = 1;
    return rc;
}

/* See stream_internal.h. */
int weft__stream_broken(weft_convert_stream *s)
{
    int b;

    pthread_mutex_lock(&s->pool.lock);
    b = s->broken;
    pthread_mutex_unlock(&s->pool.lock);
    return b;
}

/* See stream_internal.h. */
void weft__stream_set_broken(weft_convert_stream *s)
{
    pthread_mutex_lock(&s->pool.lock);
    s->broken = 1;
    s->pool.failed = 1;
    pthread_mutex_unlock(&s->pool.lock);
}

/* Closes what s has of the archive, as it is. */
static void close_archives(weft_convert_stream *s)
{
    if (s->c.archive)
        OTF2_Archive_Close(s->c.archive);
    if (s->primary)
        OTF2_Archive_Close(s->primary);
    s->c.archive = s->primary = NULL;
}

/* s failed: the event files of its members' locations go (the primary
 * wrote nothing yet; the rest is what a head's nodes write there, which
 * its conversion takes into the archive it makes anew: aside.c). */
static void remove_own(weft_convert_stream *s)
{
    char path[4096];

    for (size_t i = 0; i < s->c.nmems; i++) {
        const member *m = &s->c.mems[i];
        for (size_t k = 0; (!m->st || !m->st->packed) && k < m->nlocs;
             k++) {
            snprintf(path, sizeof path, "%s/traces/%" PRIu64 ".evt",
                     s->archive_dir, weft__loc_id(m, &m->locs[k]));
            unlink(path);
        }
    }
}

/* See stream_internal.h. */
void weft__stream_tidy(weft_convert_stream *s)
{
    if (!weft__stream_broken(s))
        return;
    for (size_t i = 0; i < s->c.nmems; i++)
        if (s->c.mems[i].st)
            budget_give(s, s->c.mems[i].st);
    if (s->c.archive || s->primary) {
        close_archives(s);
        remove_own(s);
    }
}

/* See stream_internal.h. */
void weft__stream_give_up(weft_convert_stream *s, conv *c, member *m, int rc)
{
    if (!m->st->why)
        m->st->why = strdup(c->out->error[0] ? c->out->error
                                              : weft_strerror(rc));
    weft__replay_close_writers(c, m);
    budget_give(s, m->st);
    m->st->live = 0;
    if (archive_failure(rc))
        weft__stream_set_broken(s);
    else
        c->out->error[0] = '\0';
}

/* See stream_internal.h. */
int weft__stream_read_member(weft_convert_stream *s, conv *c, member *m,
                             int last)
{
    smember *st = m->st;
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    int rc, end = 0;

    rc = weft_journal_reader_open(m->path, &r);
    if (rc == 0)
        rc = weft_journal_reader_seek(r, st->next);
    if (rc < 0) {
        weft_journal_reader_close(r);
        /* Not there yet (a member not opened), or not a journal: the
         * conversion says which. */
        return last ? weft__conv_fail(c, WEFT_ESTATE, "%s: unreadable",
                                      m->path)
                    : 0;
    }
    swap_in(c, st);
    for (;;) {
        uint64_t off = weft_journal_reader_offset(r);
        rc = weft_journal_reader_next(r, &e);
        if (rc <= 0) {
            end = rc == 0;
            rc = rc < 0 ? weft__conv_fail(c, rc, "%s: %s", m->path,
                                          weft_strerror(rc))
                        : 0;
            break;
        }
        if ((rc = on_entry(s, c, m, &e, off)) != 0) {
            if (rc > 0)  /* not yet: read again at the next step */
                rc = 0;
            break;
        }
        st->next = weft_journal_reader_offset(r);
        if (st->over) {
            rc = weft__conv_fail(c, WEFT_ELIMIT, "%s: the streams' event "
                                 "writers and libotf2's file buffers %s",
                                 m->path, budget_refusal(st->over));
            break;
        }
    }
    if (rc == 0 && end && m->has_hello && (st->goodbye || last))
        rc = end_member(s, c, m);
    else if (rc == 0 && last)  /* rank 0 never came: not adoptable */
        st->live = 0;
    swap_in(c, st);
    weft_journal_reader_close(r);
    if (rc == 0 && c->out->error[0])  /* libotf2 said so, not returned */
        rc = WEFT_EOTF2;
    return rc;
}

/* ---- the stream ------------------------------------------------------- */

weft_convert_stream *weft_convert_stream_new(const weft_convert_input *in,
                                             weft_convert_budget *budget,
                                             uint32_t owner)
{
    weft_convert_stream *s = calloc(1, sizeof *s);

    if (!s)
        return NULL;
    s->trace_dir = strdup(in->trace_dir);
    s->archive_dir = strdup(in->archive_dir);
    s->trace_name = in->trace_name ? strdup(in->trace_name) : NULL;
    if (!s->trace_dir || !s->archive_dir ||
        (in->trace_name && !s->trace_name)) {
        free(s->trace_dir);
        free(s->archive_dir);
        free(s->trace_name);
        free(s);
        return NULL;
    }
    s->in = *in;
    s->in.trace_dir = s->trace_dir;
    s->in.archive_dir = s->archive_dir;
    s->in.trace_name = s->trace_name;
    s->budget = budget;
    s->owner = owner;
    pthread_mutex_init(&s->pool.lock, NULL);
    if (budget) {
        pthread_mutex_lock(&budget->lock);
        s->pool.floor = budget->floor;
        pthread_mutex_unlock(&budget->lock);
    }
    s->c.in = &s->in;
    s->c.out = &s->out;
    s->c.pool = &s->pool;
    s->c.streaming = 1;
    s->c.stream = s;
    if (in->resolution)
        weft__stream_set_resolution(s, in->resolution);
    return s;
}

/* A node's stream: the head's archive is there (its primary made the
 * directory the event files go to), and the stream has a fixed
 * resolution. 0 or WEFT_ESTATE (c failed). */
static int check_head(weft_convert_stream *s)
{
    char dir[4096];
    struct stat st;

    if (!s->in.resolution)
        return weft__conv_fail(&s->c, WEFT_ESTATE, "%s: a node's stream "
                               "needs a fixed timer resolution",
                               s->archive_dir);
    snprintf(dir, sizeof dir, "%s/traces", s->archive_dir);
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return weft__conv_fail(&s->c, WEFT_ESTATE, "%s: no directory "
                               "(the head makes the archive before its "
                               "nodes write their event files into it)",
                               dir);
    return 0;
}

/* The archive made (a node's: joined), with the attribute lists replay
 * uses. */
static int stream_open(weft_convert_stream *s)
{
    conv *c = &s->c;
    int rc;

    s->opened = 1;
    weft__otf2_init();
    c->al = OTF2_AttributeList_New();
    c->nest_al = OTF2_AttributeList_New();
    if (!c->al || !c->nest_al)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    if (s->in.events_only)
        return check_head(s) < 0 ? WEFT_ESTATE : weft__otf2_open_events(c);
    /* The primary first (the directories), then the events' writer, as
     * a node's weftd writes beside its head's (issue #34). */
    if ((rc = weft__otf2_open(c)) < 0)
        return rc;
    s->primary = c->archive;
    c->archive = NULL;
    return weft__otf2_open_events(c);
}

/* See convert.h. */
int weft_convert_stream_open(weft_convert_stream *s)
{
    conv *sink;
    int rc = 0;

    if (s->opened)
        return weft__stream_broken(s) ? WEFT_ESTATE : 0;
    sink = weft__otf2_sink(&s->c);
    if ((rc = stream_open(s)) < 0)
        weft__stream_set_broken(s);
    weft__stream_tidy(s);
    weft__otf2_sink(sink);
    return rc;
}

/* See convert.h. */
int weft_convert_stream_done(weft_convert_stream *s, uint32_t rank)
{
    member *m = weft__conv_member(&s->c, rank);

    return !weft__stream_broken(s) && m && m->st && m->st->live && m->st->done;
}

/* See convert.h. */
int weft_convert_stream_sums(weft_convert_stream *s, uint32_t rank,
                             uint8_t **buf, size_t *len)
{
    member *m = weft__conv_member(&s->c, rank);
    conv *sink;
    int rc;

    *buf = NULL;
    *len = 0;
    if (weft__stream_broken(s))
        return WEFT_ESTATE;
    if (!m || !m->st)
        return WEFT_ENOTFOUND;
    sink = weft__otf2_sink(&s->c);
    /* Not ended yet (no Goodbye: the member's connection ended without
     * one): the rest of its journal, and its end, as a catch-up's. */
    if (m->st->live && !m->st->done &&
        (rc = weft__stream_read_member(s, &s->c, m, 1)) < 0)
        weft__stream_give_up(s, &s->c, m, rc);
    weft__stream_tidy(s);
    weft__otf2_sink(sink);
    if (weft__stream_broken(s) || !m->st->live || !m->st->done)
        return WEFT_ESTATE;
    /* As weft__replay_member finishes an adopted member's, with nothing
     * between: its finish then has nothing to do. */
    for (size_t k = 0; k < m->nlocs; k++)
        weft_timeline_finish(&m->locs[k].tl, WEFT_TIMELINE_NONE,
                             m->locs[k].last_time);
    if ((rc = weft__sums_pack(&s->c, m, &m->st->n, buf, len)) == 0)
        m->st->packed = 1;
    return rc;
}

int weft_convert_stream_step(weft_convert_stream *s, uint32_t rank)
{
    conv *sink;
    member *m = NULL;
    int rc, live = 0;

    if (weft__stream_broken(s))
        return 0;
    sink = weft__otf2_sink(&s->c);
    if (!s->opened && stream_open(s) < 0) {
        weft__stream_set_broken(s);
    } else if ((m = stream_member(s, rank)) != NULL && m->st &&
               m->st->live) {
        /* (a member it could not make is the conversion's to replay) */
        if (!m->st->done && (rc = weft__stream_read_member(s, &s->c, m, 0)) < 0)
            weft__stream_give_up(s, &s->c, m, rc);
        live = m->st->live && !weft__stream_broken(s);
    }
    weft__stream_tidy(s);
    weft__otf2_sink(sink);
    return live;
}

int weft_convert_stream_ok(const weft_convert_stream *s)
{
    return s && !weft__stream_broken((weft_convert_stream *)s);
}

uint64_t weft_convert_stream_written(weft_convert_stream *s)
{
    uint64_t n;

    pthread_mutex_lock(&s->pool.lock);
    n = s->broken ? 0 : s->written;  /* (a broken one's are removed) */
    pthread_mutex_unlock(&s->pool.lock);
    return n;
}

const char *weft_convert_stream_error(const weft_convert_stream *s)
{
    return s->out.error;
}

const char *weft_convert_stream_why(weft_convert_stream *s, uint32_t rank)
{
    member *m = weft__conv_member(&s->c, rank);

    return m && m->st && m->st->why ? m->st->why : NULL;
}

/* See stream.h. */
void weft__stream_flushed(conv *c, uint64_t location)
{
    weft_convert_stream *s = c->stream;
    member *m = weft__conv_member(c, (uint32_t)(location >> 32));
    loc *l = m ? weft__conv_loc(m, (uint32_t)location, 0) : NULL;
    int why;

    pthread_mutex_lock(&s->pool.lock);
    s->written += WEFT_CONVERT_WRITER_BYTES;  /* a full chunk */
    pthread_mutex_unlock(&s->pool.lock);
    if (!l || l->flushed || !m->st)
        return;
    l->flushed = 1;
    if ((why = budget_take(s, m->st, WEFT_CONVERT_FILE_BUFFER_BYTES)) != 0)
        m->st->over = why;  /* given up once this entry is written */
}

uint64_t weft_convert_stream_replayed(weft_convert_stream *s)
{
    uint64_t n = 0;

    if (weft__stream_broken(s))
        return 0;
    for (size_t i = 0; i < s->c.nmems; i++) {
        const member *m = &s->c.mems[i];
        if (!m->st || !m->st->live)
            continue;
        for (size_t k = 0; k < m->nlocs; k++)
            n += m->locs[k].replayed;
    }
    return n;
}

void weft_convert_stream_free(weft_convert_stream *s)
{
    if (!s)
        return;
    if (s->c.archive || s->primary) {
        /* Left half written: nothing more goes to the files. */
        weft__otf2_budget_fail(&s->pool);
        close_archives(s);
    }
    for (size_t i = 0; i < s->c.nmems; i++) {
        if (s->c.mems[i].st)
            budget_give(s, s->c.mems[i].st);
        smember_free(s->c.mems[i].st);
        s->c.mems[i].st = NULL;
    }
    if (s->c.al)
        OTF2_AttributeList_Delete(s->c.al);
    if (s->c.nest_al)
        OTF2_AttributeList_Delete(s->c.nest_al);
    weft__conv_free(&s->c);
    weft_convert_result_free(&s->out);
    pthread_mutex_destroy(&s->pool.lock);
    free(s->trace_dir);
    free(s->archive_dir);
    free(s->trace_name);
    free(s);
}
