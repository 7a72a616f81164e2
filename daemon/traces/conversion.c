/* conversion.c - a finished trace's conversion (trace.h: CONVERTING):
 * its job converts the journals to SPOOL/traces/KEY/archive on the
 * converter (worker.h), at most max_conversions at once, the others
 * waiting their turn in convq.h's queue (round robin by owner), and
 * stores the trace's final catalog rows in one transaction; journals are
 * deleted only once the archive is written and the row committed. A
 * conversion that fails for a cause outside the journals (space,
 * permissions, the catalog) moves the trace to RETRY_WAIT, and the tick
 * timer tries it again after a delay that doubles from WEFT_RETRY_MIN_MS
 * to WEFT_RETRY_MAX_MS.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "catjob.h"
#include "catrow.h"
#include "convert.h"
#include "convq.h"
#include "fsutil.h"
#include "jcache.h"
#include "live.h"
#include "log.h"
#include "retain.h"
#include "spool.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"
#include "worker.h"

/* A finished trace's conversion, on the converter (worker.h): at most
 * max_conversions run at once, the others wait in its queue. */
typedef struct convert_job {
    weft_work work;             /* first: the job is its work */
    weft_convq_item turn;       /* its place in *d->traces->convq (convq.h) */
    weft_trace *t;
    weft_convert_stream *stream; /* what wrote its archive while it
                                    recorded (streamjob.c), consumed by the
                                    conversion; NULL: none */
    char *catalog;
    char *archive;
    const char *state;
    char reason[1024];          /* why partial, "" if complete */
    unsigned threads;           /* cfg.convert_threads when it started */
    uint64_t max_writers;       /* from cfg.convert_memory then */
    int sync;                   /* durability = fsync when it started */
    uint64_t retry_delay;       /* ms before the next attempt if this one
                                   fails for a cause a retry may get past */
    weft_convert_result res;
    int rc;
    char err[768];
    char share_err[384];        /* the owner cannot read the archive: why */
    int64_t finished;
} convert_job;

/* See trace_internal.h. */
void weft__trace_remove_journals(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    uint32_t rank;

    if (!dp)
        return;
    while ((de = readdir(dp)) != NULL) {
        if (weft_journal_name_parse(de->d_name, &rank) != 0) {
            char *p = weft_path_join(dir, de->d_name);
            if (p)
                unlink(p);
            free(p);
        }
    }
    closedir(dp);
}

/* The last sums in m's journal (its node's, weft_session_sums: a copy
 * into *sums, *len bytes), or NULL when it holds none. Worker thread.
 * 0 or WEFT_ENOMEM. */
static int journal_sums(const weft_trace *t, const weft_member *m,
                        uint8_t **sums, size_t *len)
{
    char name[WEFT_JOURNAL_NAME_MAX], *path;
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    int rc = 0;

    *sums = NULL;
    *len = 0;
    weft_journal_name(name, sizeof name, m->in.rank);
    if (!(path = weft_path_join(t->dir, name)))
        return WEFT_ENOMEM;
    if (weft_journal_reader_open(path, &r) == 0) {
        weft_journal_reader_skip(r, WEFT_JE_EVENTS);
        while (rc == 0 && weft_journal_reader_next(r, &e) == 1) {
            if (e.kind != WEFT_JE_SUMS || !e.payload)
                continue;
            free(*sums);
            if (!(*sums = malloc(e.len ? e.len : 1))) {
                rc = WEFT_ENOMEM;
                break;
            }
            memcpy(*sums, e.payload, e.len);
            *len = e.len;
        }
    }
    weft_journal_reader_close(r);
    free(path);
    return rc;
}

/* The members of t whose nodes wrote their events (weft_member.remote),
 * with the sums their journals hold, into *out (*n; free with
 * remote_free). Worker thread (the job owns t). 0 or WEFT_ENOMEM. */
static int remote_of(const weft_trace *t, weft_convert_remote **out,
                     size_t *n)
{
    weft_convert_remote *v = NULL;
    size_t k = 0, cap = 0;

    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        uint8_t *sums;
        size_t len;
        if (!m || !m->remote)
            continue;
        if (k == cap) {
            weft_convert_remote *w;
            cap = cap ? 2 * cap : 8;
            if (!(w = realloc(v, cap * sizeof *w)))
                goto oom;
            v = w;
        }
        if (journal_sums(t, m, &sums, &len) < 0)
            goto oom;
        v[k].rank = m->in.rank;
        v[k].sums = sums;
        v[k++].len = len;
    }
    *out = v;
    *n = k;
    return 0;
oom:
    while (k)
        free((void *)v[--k].sums);
    free(v);
    return WEFT_ENOMEM;
}

static void remote_free(weft_convert_remote *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free((void *)v[i].sums);
    free(v);
}

/* Failures that a retry may get past: their cause is outside the
 * journals (space, permissions, memory, the catalog, libotf2). */
static int retryable(int rc)
{
    return rc == WEFT_EIO || rc == WEFT_EOTF2 || rc == WEFT_ENOMEM ||
           rc == WEFT_EDB;
}

/* Worker thread: stores the trace's final rows in one transaction;
 * removes the journals once they are committed and the archive written. */
static void store_result(convert_job *j, weft_catalog *cat)
{
    weft_trace *t = j->t;
    weft_catrow_final f;
    int made = weft_catrow_final_make(t, &j->res, &f), rc = made;

    f.row.state = (char *)j->state;
    f.row.finished = j->finished;
    f.row.path = j->archive;
    f.row.error = j->rc < 0 ? j->res.error : j->reason[0] ? j->reason : NULL;
    /* weft wait goes on waiting through a failure weftd will retry (at
     * its next start if it is stopping now). */
    if (j->rc < 0 && retryable(j->rc))
        f.row.retry_at = j->finished +
                         (int64_t)((j->retry_delay + 999) / 1000);
    if (rc == 0) {
        weft_testhook_reach(&t->d->testhook, "commit");
        rc = weft_catalog_trace_finish_detail(cat, &f.row, &f.detail);
    }
    if (rc < 0) {
        snprintf(j->err, sizeof j->err, "catalog: %s",
                 made < 0 ? "out of memory" : weft_catalog_errmsg(cat));
        if (j->rc == 0)
            j->rc = rc;
    } else if (j->rc == 0) {
        weft_testhook_reach(&t->d->testhook, "committed");
        weft__trace_remove_journals(t->dir);
    } else {
        snprintf(j->err, sizeof j->err, "%s", j->res.error);
    }
    weft_catrow_final_free(&f);
}

/* The conversion reached phase (convert.h): a test may stop here. */
static void reached(void *arg, const char *phase)
{
    weft_testhook_reach(arg, phase);
}

/* Worker thread, the catalog open: converts, then stores the result
 * (store_result); the job's own rc and err say how it went. 0. */
static int convert_run(weft_catalog *cat, void *arg, char *err,
                       size_t errlen)
{
    convert_job *j = arg;
    weft_trace *t = j->t;
    weft_convert_input in = { t->dir, j->archive, t->name, t->size,
                              j->threads, j->sync, j->max_writers,
                              reached, &t->d->testhook, 0, 0, NULL, 0 };
    weft_convert_remote *remote = NULL;
    size_t nremote = 0;

    (void)err;
    (void)errlen;
    weft_live_store_final(t, cat, (int64_t)time(NULL));
    weft_catalog_trace_set_state(cat, t->key, WEFT_STATE_CONVERTING);
    in.resolution = weft__trace_resolution(t);
    /* Members whose nodes wrote their events (issue #34) come with the
     * sums their nodes sent; their event files are the nodes', in the
     * archive the stream made (or, without one, taken into the archive
     * made anew: aside.c): never cleared here. */
    if ((j->rc = remote_of(t, &remote, &nremote)) < 0) {
        snprintf(j->res.error, sizeof j->res.error, "out of memory");
        weft_convert_stream_free(j->stream);
        j->stream = NULL;
    } else if (j->stream) {  /* its archive, written while it recorded */
        in.remote = remote;
        in.nremote = nremote;
        j->rc = weft_convert_trace_stream(&in, j->stream, &j->res);
        j->stream = NULL;
    } else {
        /* An archive left by an interrupted conversion is rebuilt from
         * the journals. */
        if (!nremote)
            weft_spool_archive_clear(t->dir);
        in.remote = remote;
        in.nremote = nremote;
        j->rc = weft_convert_trace(&in, &j->res);
    }
    remote_free(remote, nremote);
    j->finished = (int64_t)time(NULL);
    if (j->rc < 0) {
        j->state = WEFT_STATE_FAILED;
        /* Converted again from the journals when retried (an archive its
         * nodes wrote into stays: its events are theirs alone). */
        if (!nremote)
            weft_spool_archive_clear(t->dir);
    } else {
        weft_catrow_partial_reason(t, &j->res, j->reason, sizeof j->reason);
        j->state = j->reason[0] ? WEFT_STATE_PARTIAL : WEFT_STATE_COMPLETE;
        /* Before the row says so: once it is complete, its owner reads
         * it (ask.h). */
        weft_spool_trace_share(t->dir, t->uid, j->share_err,
                               sizeof j->share_err);
    }
    store_result(j, cat);
    return 0;
}

static void convert_work(weft_work *w)
{
    convert_job *j = (convert_job *)w;
    char err[512];
    int rc = weft_catjob_with(j->catalog, convert_run, j, err, sizeof err);

    if (rc < 0) { /* the catalog could not be opened */
        snprintf(j->err, sizeof j->err, "catalog: %s", err);
        j->rc = rc;
    }
}

static void convert_done(weft_work *w)
{
    convert_job *j = (convert_job *)w;
    weft_trace *t = j->t;
    weft_daemon *d = t->d;
    weft_trace_conversions n = weft_trace_count_conversions(d);

    d->jobs--;
    d->traces->converting--;
    if (n.peak > d->traces->conversions_peak)
        d->traces->conversions_peak = n.peak;
    if (j->rc < 0 && retryable(j->rc) && !d->stopping) {
        t->retry_delay = j->retry_delay;
        t->retry_at = uv_now(d->loop) + t->retry_delay;
        weft_trace_on(t, WEFT_TEV_FAILED);
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s' (%s): conversion failed: "
                  "%s; journals kept, trying again in %" PRIu64 " s",
                  t->name, t->key, j->err, t->retry_delay / 1000);
        j->t = NULL;
    } else if (j->rc < 0) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s' (%s): conversion failed: %s",
                  t->name, t->key, j->err);
    } else {
        weft_retain_charge(d, t->uid, j->res.bytes);
        if (j->share_err[0])
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': %s", t->name,
                      j->share_err);
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s' %s: %" PRIu64 " events, %zu "
                  "locations, archive %s/traces.otf2 (%u of %u processes "
                  "written while it recorded)%s%s", t->name, j->state,
                  j->res.events, j->res.nlocations, j->archive,
                  j->res.streamed, j->res.members,
                  j->reason[0] ? "; " : "", j->reason);
        if (j->res.passes > j->res.members)
            weft_tlog(t, WEFT_LOG_INFO, "trace '%s': convert_memory allows "
                      "%" PRIu64 " locations written at once: %" PRIu64
                      " passes over %u journals (at most %" PRIu64 " event "
                      "writers open)", t->name, j->max_writers,
                      j->res.passes, j->res.members, j->res.writers_peak);
        if (j->res.nesting_added || j->res.nesting_unmatched)
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': %" PRIu64 " Leave "
                      "and Enter events added and %" PRIu64 " Leaves of "
                      "regions not open left out so that every location "
                      "nests (regions still open where a thread ended, as "
                      "when a process exits while threads wait in a call, "
                      "or is killed; gaps; lost records)",
                      t->name, j->res.nesting_added,
                      j->res.nesting_unmatched);
    }
    weft_convert_result_free(&j->res);
    if (j->t)
        weft_trace_on(j->t, WEFT_TEV_FINISHED);
    weft_convert_stream_free(j->stream);
    free(j->catalog);
    free(j->archive);
    free(j);
    weft_convq_next(d);  /* its slot is free */
}

/* Queues j for a converter slot, in turn with other users' (convq.h).
 * 0 or a WEFT_E* code. */
static int queue_conversion(weft_daemon *d, convert_job *j)
{
    weft_trace_conversions n = weft_trace_count_conversions(d);

    if (n.running + n.queued >= d->cfg.max_conversions)
        weft_tlog(j->t, WEFT_LOG_DEBUG, "trace '%s': queued behind %u "
                  "conversions (max_conversions %" PRIu64 " at once)",
                  j->t->name, n.running + n.queued, d->cfg.max_conversions);
    j->turn.work = &j->work;
    j->turn.run = convert_work;
    j->turn.done = convert_done;
    return weft_convq_submit(d, &j->turn, j->t->uid);
}

/* See trace_internal.h. */
void weft__trace_close_journals(weft_trace *t)
{
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m && m->in.journal) {
            weft_jcache_forget(&m->in);
            weft_journal_close(m->in.journal);
            m->in.journal = NULL;
        }
    }
}

/* See trace_internal.h. */
uint64_t weft__trace_resolution(const weft_trace *t)
{
    return t->part || *t->d->cfg.archive_root ? UINT64_C(1000000000) : 0;
}

/* See trace_internal.h. */
uint64_t weft__trace_retry_delay(const weft_trace *t)
{
    uint64_t ms = t->retry_delay ? t->retry_delay * 2 : WEFT_RETRY_MIN_MS;

    return ms > WEFT_RETRY_MAX_MS ? WEFT_RETRY_MAX_MS : ms;
}

/* See trace_internal.h. */
void weft__trace_convert(weft_trace *t)
{
    weft_daemon *d = t->d;
    weft_convert_stream *s;
    convert_job *j;

    if (t->part) { /* its head converts the trace */
        weft__part_finish(t);
        return;
    }
    if (weft__stream_take(t, &s))
        return;  /* once its stream's step is back */
    j = calloc(1, sizeof *j);
    weft__trace_close_journals(t);
    if (!j || !(j->catalog = strdup(d->cfg.catalog)) ||
        !(j->archive = weft_spool_archive_dir(t->dir))) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': out of memory; journals "
                  "kept in %s", t->name, t->dir);
        if (j) {
            free(j->catalog);
            free(j);
        }
        weft_convert_stream_free(s);
        weft_trace_on(t, WEFT_TEV_FINISHED);
        return;
    }
    j->t = t;
    j->stream = s;
    j->threads = (unsigned)d->cfg.convert_threads;
    j->max_writers = weft_convert_writers(d->cfg.convert_memory);
    j->sync = d->cfg.durability == WEFT_DURABLE_FSYNC;
    j->retry_delay = weft__trace_retry_delay(t);
    if (t->goodbyes == t->size)
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s': all %u members done, "
                  "converting", t->name, t->size);
    if (queue_conversion(d, j) < 0) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': cannot start a thread to "
                  "convert it; journals kept in %s", t->name, t->dir);
        weft_convert_stream_free(j->stream);
        free(j->catalog);
        free(j->archive);
        free(j);
        weft_trace_on(t, WEFT_TEV_FINISHED);
        return;
    }
    d->jobs++;
    d->traces->converting++;
}
