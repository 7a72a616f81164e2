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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "log.h"
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

    for (size_t i = 0; i < j->n && weft_convert_stream_ok(j->s); i++) {
        const char *why;
        if (weft_convert_stream_step(j->s, j->ranks[i])) {
            weft_testhook_reach(&j->d->testhook, "stream");
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
    for (size_t i = 0; i < j->n; i++)
        free(j->why[i]);
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
    for (size_t i = 0; i < j->n; i++) {
        weft_member *m = weft_trace_member(t, j->ranks[i]);
        if (!j->left[i] || !m || m->stream_off)
            continue;
        m->stream_off = 1;  /* no more steps for it */
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s' rank %u: written when the "
                  "trace ends, not while it records: %s", t->name,
                  j->ranks[i], j->why[i] ? j->why[i] : "out of memory");
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
    } else if (t->stream->ndue && !d->stopping &&
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
    j->ranks = st->due;  /* (st's still, should the submit fail) */
    j->n = st->ndue;
    j->left = calloc(st->ndue, sizeof *j->left);
    j->why = calloc(st->ndue, sizeof *j->why);
    if (!j->left || !j->why ||
        weft_worker_submit(ts->streamer, &j->work, step_work, step_done) <
            0) {
        free(j->left);
        free(j->why);
        free(j);
        return WEFT_EIO;
    }
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

/* t's stream, made at its first write. NULL when out of memory (t is
 * converted as it ends). */
static struct weft_trace_stream *stream_of(weft_trace *t)
{
    weft_daemon *d = t->d;
    struct weft_trace_stream *st = t->stream;
    char *archive;

    if (st)
        return st;
    if (!(archive = weft_spool_archive_dir(t->dir)))
        return NULL;
    if ((st = calloc(1, sizeof *st))) {
        weft_convert_input in = { t->dir, archive, t->name, t->size, 0, 0,
                                  0, NULL, NULL, 0, 0, NULL, 0 };
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
        st->s = weft_convert_stream_new(&in, &d->traces->stream_budget,
                                        t->uid);
        if (!st->s) {
            free(st);
            st = NULL;
        }
    }
    free(archive);
    t->stream = st;
    return st;
}

void weft_member_journaled(weft_memberin *in)
{
    weft_member *m = in->member;
    weft_trace *t = m->trace;
    struct weft_trace_stream *st;

    if (t->state != WEFT_TRACE_RECORDING || t->d->stopping ||
        m->stream_due || m->stream_off ||
        (!t->stream && !t->d->cfg.write_while_recording) ||
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
