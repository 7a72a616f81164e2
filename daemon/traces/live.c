/* live.c - the live figures of recording traces in the catalog.
 *
 * DESIGN: ingest already counts, per location, the events it journaled
 * (weft_loc_state.events, what `weft status` sums). Every live_interval
 * seconds weft_live_tick copies, on the loop thread, the figures of the
 * recording traces that changed since the last copy (members joined and
 * their state, locations that sent events, events) and queues one worker
 * job. The job adds the size of each member's journal (the bytes received
 * so far) and stores everything in one transaction with
 * weft_catalog_trace_live: no catalog write per batch, no SQLite on the
 * loop thread (STYLE.md habit 6). One job at a time: a slow catalog makes
 * the updates rarer, never piles them up. The update touches only rows
 * still in state recording, so the conversion's final row, written after
 * the state left recording, wins whatever the order of the two jobs.
 */
#include "live.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog.h"
#include "catjob.h"
#include "catrow.h"
#include "log.h"
#include "trace.h"
#include "weft_errors.h"

/* Ticks come every 1000 ms give or take: an interval of N seconds may be
 * due this much early. */
#define LIVE_SLACK_MS 500

/* One trace's figures, owned by the job (the trace may be converted and
 * freed while the job runs). */
typedef struct live_trace {
    char *key;
    char *dir;                  /* SPOOL/traces/KEY: the journals */
    weft_member_row *members;   /* host and state strings owned */
    weft_location_row *locs;
    weft_live_figures f;        /* points at the above */
} live_trace;

typedef struct live_job {
    live_trace *v;
    size_t n;
    uint8_t *stored;            /* by v: the row got the figures */
    int64_t now;
} live_job;

static void live_trace_free(live_trace *lt)
{
    for (size_t i = 0; lt->members && i < lt->f.nmembers; i++)
        free(lt->members[i].host);
    free(lt->members);
    free(lt->locs);
    free(lt->key);
    free(lt->dir);
}

static void job_free(live_job *j)
{
    for (size_t i = 0; i < j->n; i++)
        live_trace_free(&j->v[i]);
    free(j->v);
    free(j->stored);
    free(j);
}

/* The figures t has now. */
static weft_live_mark mark_of(const weft_trace *t)
{
    weft_live_mark m = { 0 };

    for (size_t i = 0; i < t->members.ncells; i++) {
        const weft_member *mb = weft_trace_member_at(t, i);
        if (!mb)
            continue;
        m.joined++;
        for (uint32_t l = 0; l < mb->in.nlocs; l++) {
            m.events += mb->in.locs[l].events;
            m.refused += mb->in.locs[l].refused;
            m.locations += mb->in.locs[l].held_seq > 0;
        }
    }
    m.goodbyes = t->goodbyes;
    m.written = 1;
    return m;
}

static int same_mark(const weft_live_mark *a, const weft_live_mark *b)
{
    return a->written && b->written && a->events == b->events &&
           a->refused == b->refused &&
           a->locations == b->locations && a->joined == b->joined &&
           a->goodbyes == b->goodbyes;
}

/* Copies the figures of t (mark: its counts) into lt. 0 or WEFT_ENOMEM
 * (lt then half filled: live_trace_free it). */
static int snapshot(const weft_trace *t, const weft_live_mark *mark,
                    live_trace *lt)
{
    weft_member **v = weft_trace_members(t);
    size_t nm = 0, nl = 0;

    lt->key = strdup(t->key);
    lt->dir = strdup(t->dir);
    lt->members = calloc(mark->joined ? mark->joined : 1,
                         sizeof *lt->members);
    lt->locs = calloc(mark->locations ? mark->locations : 1,
                      sizeof *lt->locs);
    if (!v || !lt->key || !lt->dir || !lt->members || !lt->locs) {
        free(v);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < t->joined && nm < mark->joined; i++) {
        const weft_member *m = v[i];
        uint32_t r = m->in.rank;
        weft_member_row *row = &lt->members[nm++];
        lt->f.nmembers = nm;
        row->rank = r;
        row->pid = m->in.pid;
        row->parent_pid = m->in.parent_pid;
        row->state = m->in.said_goodbye ? (char *)weft_catrow_member_state(m)
                                     : WEFT_MEMBER_RECORDING;
        if (!(row->host = strdup(m->in.host ? m->in.host : ""))) {
            free(v);
            return WEFT_ENOMEM;
        }
        for (uint32_t l = 0; l < m->in.nlocs && nl < mark->locations; l++) {
            const weft_loc_state *s = &m->in.locs[l];
            if (s->held_seq == 0)
                continue;
            lt->locs[nl].id = (uint64_t)r << 32 | l;
            lt->locs[nl].rank = r;
            lt->locs[nl].thread = l;
            lt->locs[nl].name = (char *)"";  /* known after conversion */
            lt->locs[nl].events = s->events;
            lt->locs[nl].dropped = s->refused;  /* weftd's, so far */
            nl++;
            row->locations++;
            row->events += s->events;
            row->dropped += s->refused;
        }
    }
    free(v);
    lt->f.key = lt->key;
    lt->f.joined = mark->joined;
    lt->f.locations = nl;
    lt->f.events = mark->events;
    lt->f.refused = mark->refused;
    lt->f.members = lt->members;
    lt->f.nmembers = nm;
    lt->f.locs = lt->locs;
    lt->f.nlocs = nl;
    return 0;
}

/* Adds the sizes of lt's journals (the bytes received so far) to its
 * figures. Any thread. */
static void add_journal_bytes(live_trace *lt)
{
    for (size_t k = 0; k < lt->f.nmembers; k++) {
        char path[4200], name[WEFT_JOURNAL_NAME_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", lt->dir,
                 weft_journal_name(name, sizeof name, lt->members[k].rank));
        if (stat(path, &st) == 0) /* gone: converted meanwhile */
            lt->f.bytes += (uint64_t)st.st_size;
    }
}

/* Worker thread: the journals' sizes, then one transaction. */
static int live_run(weft_catalog *cat, void *arg, char *err, size_t errlen)
{
    live_job *j = arg;
    weft_live_figures *v = calloc(j->n ? j->n : 1, sizeof *v);
    int rc;

    if (!v) {
        snprintf(err, errlen, "out of memory");
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < j->n; i++) {
        add_journal_bytes(&j->v[i]);
        v[i] = j->v[i].f;
    }
    rc = weft_catalog_trace_live(cat, v, j->n, j->now, j->stored);
    free(v);
    return rc;
}

static void live_done(weft_daemon *d, void *arg, int rc, const char *err)
{
    live_job *j = arg;

    d->live->running = 0;
    if (rc < 0)
        weft_dlog(d, WEFT_LOG_WARNING, "live figures of %zu recording "
                  "traces not written to the catalog (tried again in %"
                  PRIu64 " s): %s", j->n, d->cfg.live_interval, err);
    /* Those not stored (a failure, or a row its begin job had not written
     * yet) go again at the next chance, changed or not. A trace that stopped
     * recording is converting: its final row is coming. */
    for (size_t i = 0; i < j->n; i++) {
        if (rc == 0 && j->stored[i])
            continue;
        for (weft_trace *t = weft_trace_first(d, WEFT_TRACE_RECORDING); t;
             t = weft_trace_next(t))
            if (strcmp(t->key, j->v[i].key) == 0)
                t->live.written = 0;
    }
    job_free(j);
}

void weft_live_tick(weft_daemon *d)
{
    uint64_t now = uv_now(d->loop);
    live_job *j = NULL;
    size_t cap = 0;

    if (d->cfg.live_interval == 0 || d->live->running || d->stopping)
        return;
    if (d->live->queued &&
        now - d->live->queued + LIVE_SLACK_MS < d->cfg.live_interval * 1000)
        return;
    d->live->queued = now;
    for (weft_trace *t = weft_trace_first(d, WEFT_TRACE_RECORDING); t;
         t = weft_trace_next(t)) {
        weft_live_mark m = mark_of(t);
        if (t->part || same_mark(&m, &t->live))
            continue; /* (a part: the head's catalog has the trace) */
        if (!j && !(j = calloc(1, sizeof *j)))
            goto oom;
        if (j->n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            live_trace *v = realloc(j->v, ncap * sizeof *v);
            if (!v)
                goto oom;
            j->v = v;
            cap = ncap;
        }
        memset(&j->v[j->n], 0, sizeof j->v[j->n]);
        j->n++;
        if (snapshot(t, &m, &j->v[j->n - 1]) < 0)
            goto oom;
        t->live = m;
    }
    if (!j)
        return;  /* nothing changed */
    j->now = (int64_t)time(NULL);
    if (!(j->stored = calloc(j->n, sizeof *j->stored)) ||
        weft_catjob_queue(d, live_run, live_done, j) < 0)
        goto oom;
    d->live->running = 1;
    return;
oom:
    weft_dlog(d, WEFT_LOG_WARNING, "live figures of the recording traces "
              "not written to the catalog: out of memory");
    for (weft_trace *t = weft_trace_first(d, WEFT_TRACE_RECORDING); t;
         t = weft_trace_next(t))
        t->live.written = 0;
    if (j)
        job_free(j);
}

/* See live.h. */
void weft_live_status(const weft_daemon *d, weft_status_trace_fn fn,
                      void *arg)
{
    for (const weft_trace *t = weft_trace_first(d, WEFT_TRACE_RECORDING); t;
         t = weft_trace_next(t)) {
        weft_status_trace st = { t->name ? t->name : "", t->key, t->uid,
                                 t->size, t->joined, t->connected,
                                 t->goodbyes, mark_of(t).events,
                                 weft__stream_events(t) };
        fn(&st, arg);
    }
}

/* See live.h. */
int weft_live_store_final(const weft_trace *t, weft_catalog *cat,
                          int64_t now)
{
    weft_live_mark mark = mark_of(t);
    live_trace lt;
    int rc;

    memset(&lt, 0, sizeof lt);
    rc = snapshot(t, &mark, &lt);
    if (rc == 0) {
        add_journal_bytes(&lt);
        rc = weft_catalog_trace_live(cat, &lt.f, 1, now, NULL);
    }
    live_trace_free(&lt);
    return rc;
}
