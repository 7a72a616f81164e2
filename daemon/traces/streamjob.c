/* streamjob.c - a recording trace converted while it records (issue
 * #33): its stream (convert.h) is stepped on the streamer (worker.h) for
 * the members whose journal writes came back, one job at a time per
 * trace, so that when the trace ends its conversion (conversion.c) has
 * only what needs every member left to do.
 *
 * A member's writes mark it due (weft_member_journaled); a trace with
 * members due and no job out submits one, which steps them all; when it
 * is back, those marked since go in the next. A trace that ends while a
 * job is out converts once it is back (weft__stream_take). A trace freed
 * while a job is out leaves the job the stream to free. Writers held by
 * all streams stay within convert_memory's (d->traces->stream_budget),
 * and streams write only while the spool's file system has more than
 * min_free_spool_bytes and WEFT_STREAM_HEADROOM free: below, a stream
 * removes what it wrote (the journals come first) and its trace is
 * converted as it ends. While weftd stops, nothing more is stepped. Loop
 * thread, but the steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "fsutil.h"
#include "log.h"
#include "partlink.h"
#include "relay.h"
#include "quota.h"
#include "spool.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"
#include "worker.h"

/* Free bytes of the spool's file system, beyond min_free_spool_bytes,
 * below which streams stop (convert.h's weft_convert_budget.floor). */
#define WEFT_STREAM_HEADROOM (UINT64_C(64) << 20)

/* A trace's stream and its job (t->stream). */
struct weft_trace_stream {
    weft_convert_stream *s;
    int open_due;            /* the head's archive is to be made now: a
                                node writes a member's events there */
    int opened;              /* it was (weft_convert_stream_open) */
    struct stream_job *job;  /* out, NULL when none */
    uint32_t *due;           /* ranks written since the job went out */
    size_t ndue, cap;
    int convert;             /* the trace converts once the job is back */
    int warned;              /* its failure was logged */
    uint64_t written;        /* archive bytes it wrote, as the quota's
                                `streamed` counts them */
    uint64_t replayed;       /* events it wrote, when its last job came
                                back (weft__stream_events) */
};

typedef struct stream_job {
    weft_work work;          /* first: the job is its work */
    weft_daemon *d;
    weft_trace *t;           /* NULL once the trace is gone */
    weft_convert_stream *s;
    int open;                /* makes the archive first */
    int opened;              /* it did */
    int part;                /* a part's: the sums of each member done */
    char *dir, *archive;     /* a part's: its directory and its head's
                                archive, noted there */
    uint8_t **sums;          /* [n]: of a part's member written whole */
    size_t *sums_len;        /* [n] */
    uint32_t *ranks;         /* to step (the trace's due list, taken) */
    size_t n;
    uint8_t *left;           /* [n]: 1 when the stream left that member
                                to the conversion */
    char **why;              /* [n]: why (malloc'd, NULL if it does not
                                say) */
    uint64_t replayed;       /* the stream's events written, after it */
} stream_job;

static void step_work(weft_work *w)
{
    stream_job *j = (stream_job *)w;

    if (j->open)
        j->opened = weft_convert_stream_open(j->s) == 0;
    if (j->dir && j->archive)
        weft__part_archive_note(j->dir, j->archive);
    for (size_t i = 0; i < j->n && weft_convert_stream_ok(j->s); i++) {
        const char *why;
        if (weft_convert_stream_step(j->s, j->ranks[i])) {
            weft_testhook_reach(&j->d->testhook, "stream");
            /* A part's member written whole: its sums, for the head. */
            if (j->part && weft_convert_stream_done(j->s, j->ranks[i]) &&
                weft_convert_stream_sums(j->s, j->ranks[i], &j->sums[i],
                                         &j->sums_len[i]) < 0)
                j->sums[i] = NULL;
            continue;
        }
        j->left[i] = 1;
        if ((why = weft_convert_stream_why(j->s, j->ranks[i])) != NULL)
            j->why[i] = strdup(why);
    }
    j->replayed = weft_convert_stream_replayed(j->s);
}

static void job_free(stream_job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        free(j->why[i]);
        if (j->sums)
            free(j->sums[i]);
    }
    free(j->sums);
    free(j->sums_len);
    free(j->dir);
    free(j->archive);
    free(j->why);
    free(j->left);
    free(j->ranks);
    free(j);
}

static int submit(weft_trace *t);

/* t's stream wrote `written` bytes of its archive: the disk reserve
 * counts them as written, no longer as promised (quota.h). */
static void counted(weft_trace *t, uint64_t written)
{
    struct weft_trace_stream *st = t->stream;

    weft_quota_streamed(&t->d->quota,
                        (int64_t)written - (int64_t)st->written);
    st->written = written;
}

static void step_done(weft_work *w)
{
    stream_job *j = (stream_job *)w;
    weft_trace *t = j->t;
    weft_daemon *d = j->d;

    d->jobs--;
    if (!t) {  /* the trace went while the job was out */
        weft_convert_stream_free(j->s);
        job_free(j);
        return;
    }
    if (j->open) {
        t->stream->opened = j->opened;
        weft__stream_keys(t);
    }
    for (size_t i = 0; i < j->n; i++) {
        weft_member *m = weft_trace_member(t, j->ranks[i]);
        if (m && j->sums && j->sums[i] && !m->finished) {
            m->finished = 1;  /* its sums go to the head */
            d->part_cbs->finished(&m->in, j->sums[i], j->sums_len[i], NULL);
            j->sums[i] = NULL;
        }
        if (!j->left[i] || !m || m->stream_off)
            continue;
        m->stream_off = 1;  /* no more steps for it */
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s' rank %u: written when the "
                  "%s ends, not while it records: %s", t->name,
                  j->ranks[i], t->part ? "node's part of the trace" : "trace",
                  j->why[i] ? j->why[i] : "out of memory");
    }
    t->stream->replayed = j->replayed;
    job_free(j);
    t->stream->job = NULL;
    counted(t, weft_convert_stream_written(t->stream->s));
    if (!weft_convert_stream_ok(t->stream->s) && !t->stream->warned) {
        t->stream->warned = 1;
        weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': its archive is no "
                  "longer written while it records (%s); it is converted "
                  "when it ends", t->name,
                  *weft_convert_stream_error(t->stream->s)
                      ? weft_convert_stream_error(t->stream->s)
                      : "out of memory");
    }
    if (t->stream->convert) {
        t->stream->convert = 0;
        weft__trace_convert(t);
    } else if ((t->stream->ndue || t->stream->open_due) && !d->stopping &&
               t->state == WEFT_TRACE_RECORDING) {
        submit(t);
    }
}

/* Sends t's due members to the streamer. 0 or a WEFT_E* code (they stay
 * due: the conversion writes them). */
static int submit(weft_trace *t)
{
    weft_daemon *d = t->d;
    weft_traces *ts = d->traces;
    struct weft_trace_stream *st = t->stream;
    stream_job *j = calloc(1, sizeof *j);

    if (!j)
        return WEFT_ENOMEM;
    if (!ts->streamer &&
        weft_worker_start(d->loop, (unsigned)d->cfg.max_conversions,
                          WEFT_WORKER_TRANSIENT, &ts->streamer) < 0) {
        free(j);
        return WEFT_EIO;
    }
    j->d = d;
    j->t = t;
    j->s = st->s;
    j->open = st->open_due;
    j->part = t->part && d->part_cbs;
    j->ranks = st->due;  /* (st's still, should the submit fail) */
    j->n = st->ndue;
    j->left = calloc(st->ndue ? st->ndue : 1, sizeof *j->left);
    j->why = calloc(st->ndue ? st->ndue : 1, sizeof *j->why);
    if (j->part) {
        j->sums = calloc(st->ndue ? st->ndue : 1, sizeof *j->sums);
        j->sums_len = calloc(st->ndue ? st->ndue : 1, sizeof *j->sums_len);
        j->dir = strdup(t->dir);
        j->archive = t->part_archive ? strdup(t->part_archive) : NULL;
    }
    if (!j->left || !j->why || (j->part && (!j->sums || !j->sums_len)) ||
        weft_worker_submit(ts->streamer, &j->work, step_work, step_done) <
            0) {
        free(j->left);
        free(j->why);
        free(j->sums);
        free(j->sums_len);
        free(j->dir);
        free(j->archive);
        free(j);
        return WEFT_EIO;
    }
    st->open_due = 0;
    for (size_t i = 0; i < j->n; i++) {
        weft_member *m = weft_trace_member(t, j->ranks[i]);
        if (m)
            m->stream_due = 0;
    }
    st->due = NULL;
    st->ndue = st->cap = 0;
    st->job = j;
    d->jobs++;
    return 0;
}

/* See trace_internal.h. */
weft_convert_stream *weft__stream_new(weft_trace *t, int bounded)
{
    weft_daemon *d = t->d;
    weft_convert_stream *s;
    char *archive;

    if (t->part)
        archive = t->part_archive ? strdup(t->part_archive) : NULL;
    else
        archive = weft_spool_archive_dir(t->dir);
    if (!archive)
        return NULL;
    weft_convert_input in = { .trace_dir = t->dir,
                              .archive_dir = archive,
                              .trace_name = t->name,
                              .members = t->size };
    /* A part writes event files only, beside its head's; every archive
     * of a head with an archive_root counts 1 ns ticks, so that every
     * node writes final times (trace_internal.h). */
    in.events_only = t->part;
    in.resolution = weft__trace_resolution(t);
    /* convert_memory and the reserve may have changed (SIGHUP) */
    pthread_mutex_lock(&d->traces->stream_budget.lock);
    d->traces->stream_budget.max =
        !d->cfg.convert_memory ? 0  /* no bound */
        : d->cfg.convert_memory > WEFT_CONVERT_FIXED_BYTES
            ? d->cfg.convert_memory - WEFT_CONVERT_FIXED_BYTES
            : WEFT_CONVERT_WRITER_BYTES;
    d->traces->stream_budget.floor =
        d->cfg.min_free_spool_bytes + WEFT_STREAM_HEADROOM;
    pthread_mutex_unlock(&d->traces->stream_budget.lock);
    s = weft_convert_stream_new(&in, bounded ? &d->traces->stream_budget
                                             : NULL, t->uid);
    free(archive);
    return s;
}

/* t's stream, made at its first write. NULL when out of memory (t is
 * converted as it ends), or for a part, until the head said where its
 * archive is. */
static struct weft_trace_stream *stream_of(weft_trace *t)
{
    struct weft_trace_stream *st = t->stream;

    if (st)
        return st;
    if (!(st = calloc(1, sizeof *st)))
        return NULL;
    if (!(st->s = weft__stream_new(t, 1))) {
        free(st);
        return NULL;
    }
    t->stream = st;
    return st;
}

void weft_member_journaled(weft_memberin *in)
{
    weft_member *m = in->member;
    weft_trace *t = m->trace;
    struct weft_trace_stream *st;

    /* (a part always streams: nobody converts it) */
    if (t->state != WEFT_TRACE_RECORDING || t->d->stopping ||
        m->stream_due || m->stream_off || m->remote || t->nodes_files ||
        (!t->stream && !t->d->cfg.write_while_recording && !t->part) ||
        !(st = stream_of(t)) ||
        !weft_convert_stream_ok(st->s))
        return;
    if (st->ndue == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 16;
        uint32_t *v = realloc(st->due, cap * sizeof *v);
        if (!v)
            return;  /* the conversion writes it */
        st->due = v;
        st->cap = cap;
    }
    st->due[st->ndue++] = in->rank;
    m->stream_due = 1;
    if (!st->job)
        submit(t);
}

void weft_member_part_archive(weft_memberin *in, const char *archive_dir)
{
    weft_trace *t = in->member->trace;

    if (!t->part || t->state != WEFT_TRACE_RECORDING)
        return;
    if (!archive_dir) { /* the head refused it: what waited for it ends */
        t->part_refused = 1;
        weft__trace_check_done(t);
        return;
    }
    if (t->part_archive) {
        if (strcmp(t->part_archive, archive_dir) != 0)
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': the head names %s "
                      "for its archive, and %s before; its events go to "
                      "the first", t->name, archive_dir, t->part_archive);
        return;
    }
    if (!(t->part_archive = strdup(archive_dir)))
        return;  /* (the next member's key tries again) */
    weft_tlog(t, WEFT_LOG_DEBUG, "trace '%s': this node writes its events "
              "into %s", t->name, archive_dir);
    /* What its members journaled so far is written now; members done
     * waited for it to end. */
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m)
            weft_member_journaled(&m->in);
    }
    weft__trace_check_done(t);
}

/* Tells m's node where its trace's archive is, once per connection. */
static void key_to(weft_member *m)
{
    weft_conn *c = m->in.conn;

    if (!c || m->key_sent || !c->relay_events_here)
        return;
    weft_relay_archive_key(c, m->trace->key);
    m->key_sent = 1;
}

/* See trace_internal.h. */
void weft__stream_keys(weft_trace *t)
{
    if (!t->stream || !t->stream->opened)
        return;
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m)
            key_to(m);
    }
}

/* Tells in's node where trace t's archive is: t was restored with
 * members its nodes wrote (t->nodes_files), and the directory they write
 * in is there (made now if the head died before its stream made it). */
static void archive_key_restored(weft_trace *t, weft_memberin *in)
{
    weft_member *m = in->member;
    char *dir = weft_spool_archive_dir(t->dir), *traces = NULL;
    int rc = -1;

    if (dir && (traces = weft_path_join(dir, "traces")) != NULL)
        rc = weft_mkdir_p(traces, 0700, 0700);
    if (rc < 0) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s' rank %u: its node writes "
                  "its events into %s, which this weftd cannot make: %s",
                  t->name, in->rank, traces ? traces : "its archive",
                  dir && traces ? strerror(errno) : "out of memory");
        if (in->conn)
            weft_conn_fail(in->conn, WEFT_EIO, "the head cannot make the "
                           "trace's archive in archive_root for its nodes "
                           "to write in (its log says why)");
    } else {
        key_to(m);
    }
    free(traces);
    free(dir);
}

void weft_member_events_elsewhere(weft_memberin *in)
{
    weft_member *m = in->member;
    weft_trace *t = m->trace;
    struct weft_trace_stream *st;

    m->key_sent = 0;  /* told on each connection */
    m->remote = 1;    /* (its node writes its events: never streamed) */
    if (t->state != WEFT_TRACE_RECORDING || t->d->stopping)
        return;
    if (t->nodes_files) {
        /* Its archive's primary went with the weftd that made it (a new
         * one would clear what the nodes wrote there): they go on in its
         * directory, which the conversion makes anew with their files. */
        archive_key_restored(t, in);
        return;
    }
    if (!(st = stream_of(t)) || !weft_convert_stream_ok(st->s)) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s' rank %u: its node writes "
                  "its events, and this trace's archive cannot be made: %s",
                  t->name, in->rank,
                  st ? weft_convert_stream_error(st->s) : "out of memory");
        if (in->conn)
            weft_conn_fail(in->conn, WEFT_EIO, "the head cannot make the "
                           "trace's archive in archive_root for its nodes "
                           "to write in (its log says why)");
        return;
    }
    if (st->opened) {
        key_to(m);  /* (the others were told) */
        return;
    }
    st->open_due = 1;
    if (!st->job)
        submit(t);
}

/* See trace_internal.h. */
int weft__stream_take(weft_trace *t, weft_convert_stream **s)
{
    struct weft_trace_stream *st = t->stream;

    *s = NULL;
    if (!st)
        return 0;
    if (st->job) {
        st->convert = 1;
        return 1;
    }
    counted(t, 0);  /* the conversion's, from now on */
    *s = st->s;
    st->s = NULL;
    weft__stream_free(t);
    return 0;
}

/* See trace.h. */
uint64_t weft__stream_events(const weft_trace *t)
{
    return t->stream && weft_convert_stream_ok(t->stream->s)
               ? t->stream->replayed
               : 0;
}

void weft__stream_free(weft_trace *t)
{
    struct weft_trace_stream *st = t->stream;

    if (!st)
        return;
    counted(t, 0);
    if (st->job)
        st->job->t = NULL;  /* it frees the stream when back */
    else
        weft_convert_stream_free(st->s);
    free(st->due);
    free(st);
    t->stream = NULL;
}
