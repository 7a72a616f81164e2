/* part.c - the end of a part (trace.h: a node's members of its head's
 * trace, partlink.h): instead of a conversion, its stream writes what
 * its members' journals hold beyond what it wrote, ends the members it
 * still writes (as at their journals' end: processes gone, or members
 * that did not come back within the grace period), a stream of its own
 * writes the members the first left (beyond convert_memory's share while
 * they all recorded), one after the other, and each member not
 * finished yet gets its sums (or why not) to the head, and the part is
 * done; its journals go as the head holds each member (parts.c: a node
 * killed before that writes them again at its next start). When
 * the archive fails (the shared file system full or unwritable on this
 * node), the members not written keep their journals and wait (as a
 * failed conversion does: RETRY_WAIT, the delay doubling), their
 * Goodbyes held from the head; what was written stays. On the streamer
 * (worker.h), as its steps.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert.h"
#include "fsutil.h"
#include "log.h"
#include "partlink.h"
#include "spool.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"
#include "worker.h"

/* The file of a part's directory that names its head's archive, once the
 * head said (recovery reads it: a restarted node writes its members'
 * events again at once). */
#define PART_ARCHIVE_FILE "head-archive"

/* See partlink.h. */
void **weft_member_part_link(weft_memberin *in)
{
    return &in->member->trace->part_link;
}

/* See trace_internal.h. */
char *weft__part_archive_read(const char *dir)
{
    char *path = weft_path_join(dir, PART_ARCHIVE_FILE), *line = NULL;
    size_t cap = 0;
    ssize_t n;
    FILE *f = path ? fopen(path, "r") : NULL;

    free(path);
    if (!f)
        return NULL;
    n = getline(&line, &cap, f);
    fclose(f);
    if (n <= 1 || line[n - 1] != '\n' || line[0] != '/') {
        free(line);
        return NULL;
    }
    line[n - 1] = 0;
    return line;
}

/* See trace_internal.h. */
void weft__part_archive_note(const char *dir, const char *archive)
{
    char *path = weft_path_join(dir, PART_ARCHIVE_FILE), *tmp = NULL;
    FILE *f;

    if (!path || access(path, F_OK) == 0 ||
        asprintf(&tmp, "%s.tmp", path) < 0) {
        free(path);
        return;
    }
    if ((f = fopen(tmp, "w")) != NULL) {
        int ok = fprintf(f, "%s\n", archive) > 0;
        if (fclose(f) == 0 && ok)
            rename(tmp, path);
        else
            unlink(tmp);
    }
    free(tmp);
    free(path);
}

typedef struct part_job {
    weft_work work;          /* first: the job is its work */
    weft_trace *t;
    weft_convert_stream *s;  /* NULL: the head never said where */
    weft_convert_stream *alone; /* writes the members s left (its
                                   writers beyond convert_memory's share,
                                   say), one after the other, unbounded */
    uint32_t *ranks;         /* its members not finished */
    size_t n;
    uint8_t **sums;          /* [n] */
    size_t *len;             /* [n] */
    char *why;               /* why the stream failed, if it did */
    int retry;               /* the archive failed (a stream broke) with
                                members not written: they wait */
} part_job;

static void job_free(part_job *j)
{
    for (size_t i = 0; i < j->n; i++)
        free(j->sums[i]);
    free(j->sums);
    free(j->len);
    free(j->ranks);
    free(j->why);
    free(j);
}

/* See partlink.h. */
void weft_part_journal_remove(const char *dir, uint32_t rank)
{
    char name[WEFT_JOURNAL_NAME_MAX], *path;

    weft_journal_name(name, sizeof name, rank);
    if ((path = weft_path_join(dir, name)) != NULL)
        unlink(path);
    free(path);
}

/* See partlink.h. */
void weft_part_dir_remove(const char *dir)
{
    char *note = weft_path_join(dir, PART_ARCHIVE_FILE);

    weft__trace_remove_journals(dir);
    if (note)
        unlink(note);
    free(note);
    rmdir(dir);
}

/* Member i of j written whole by s (a step reads its journal to the end:
 * it may never have had one; packing its sums ends it): 1 with its sums
 * in j, else 0. */
static int finish_member(part_job *j, weft_convert_stream *s, size_t i)
{
    return s && weft_convert_stream_step(s, j->ranks[i]) &&
           weft_convert_stream_sums(s, j->ranks[i], &j->sums[i],
                                    &j->len[i]) == 0;
}

static void finish_work(weft_work *w)
{
    part_job *j = (part_job *)w;
    size_t left = 0;

    for (size_t i = 0; i < j->n; i++)
        left += !finish_member(j, j->s, i);
    if (j->s && !weft_convert_stream_ok(j->s))
        j->why = strdup(*weft_convert_stream_error(j->s)
                            ? weft_convert_stream_error(j->s)
                            : "out of memory");
    /* (its memory goes before the members it left are written) */
    weft_convert_stream_free(j->s);
    j->s = NULL;
    for (size_t i = 0; left && i < j->n; i++)
        if (!j->sums[i] && finish_member(j, j->alone, i))
            left--;
    /* The archive failed as the members left were written alone (the
     * disk, its directory: not a member's own records): they wait for
     * it, their journals stay. */
    if (j->alone && !weft_convert_stream_ok(j->alone)) {
        j->retry = left > 0;
        free(j->why);
        j->why = strdup(*weft_convert_stream_error(j->alone)
                            ? weft_convert_stream_error(j->alone)
                            : "out of memory");
    }
    weft_convert_stream_free(j->alone);
    j->alone = NULL;
}

/* j's part keeps the journals of the members not written (j->why): the
 * tick tries again after a delay (RETRY_WAIT); while weftd stops, its
 * next start does (weft_recover_parts). */
static void wait_retry(part_job *j)
{
    weft_trace *t = j->t;
    weft_daemon *d = t->d;
    size_t left = 0;

    for (size_t i = 0; i < j->n; i++)
        left += !j->sums[i];
    if (d->stopping) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': %zu processes of this "
                  "node's part cannot be written into %s: %s; their "
                  "journals are kept in %s for the next start", t->name,
                  left, t->part_archive ? t->part_archive : "the archive",
                  j->why ? j->why : "out of memory", t->dir);
        weft_trace_on(t, WEFT_TEV_FINISHED);
        return;
    }
    t->retry_delay = weft__trace_retry_delay(t);
    t->retry_at = uv_now(d->loop) + t->retry_delay;
    weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': %zu processes of this node's "
              "part cannot be written into %s: %s; their journals are kept, "
              "trying again in %" PRIu64 " s", t->name, left,
              t->part_archive ? t->part_archive : "the archive",
              j->why ? j->why : "out of memory", t->retry_delay / 1000);
    weft_trace_on(t, WEFT_TEV_FAILED);
}

static void finish_done(weft_work *w)
{
    part_job *j = (part_job *)w;
    weft_trace *t = j->t;
    weft_daemon *d = t->d;

    d->jobs--;
    for (size_t i = 0; i < j->n; i++) {
        weft_member *m = weft_trace_member(t, j->ranks[i]);
        if (!m || m->finished || (j->retry && !j->sums[i]))
            continue;
        m->finished = 1;
        if (d->part_cbs)
            d->part_cbs->finished(&m->in, j->sums[i], j->len[i],
                                  j->sums[i] ? NULL
                                  : j->why ? j->why
                                  : t->part_archive ? "its stream did not "
                                                      "write it whole"
                                  : "the head never said where its "
                                    "archive is");
        j->sums[i] = NULL;
    }
    if (j->retry) {
        wait_retry(j);
        job_free(j);
        return;
    }
    weft_tlog(t, WEFT_LOG_DEBUG, "trace '%s': this node's part is done",
              t->name);
    /* Its journals go once the head holds every member (parts.c), or now
     * when no member of it went to the head. */
    t->part_ended = 1;
    if (!t->part_link)
        weft_part_dir_remove(t->dir);
    job_free(j);
    weft_trace_on(t, WEFT_TEV_FINISHED);
}

/* See trace_internal.h. */
void weft__part_finish(weft_trace *t)
{
    weft_daemon *d = t->d;
    weft_traces *ts = d->traces;
    weft_convert_stream *s;
    part_job *j;
    size_t n = 0;

    if (weft__stream_take(t, &s))
        return;  /* once its stream's step is back */
    if (!s) /* none yet (restored at start): its members from the start */
        s = weft__stream_new(t, 1);
    weft__trace_close_journals(t);
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        n += m && !m->finished;
    }
    j = calloc(1, sizeof *j);
    if (j) {
        j->ranks = calloc(n ? n : 1, sizeof *j->ranks);
        j->sums = calloc(n ? n : 1, sizeof *j->sums);
        j->len = calloc(n ? n : 1, sizeof *j->len);
    }
    if (!j || !j->ranks || !j->sums || !j->len ||
        (!ts->streamer &&
         weft_worker_start(d->loop, (unsigned)d->cfg.max_conversions,
                           WEFT_WORKER_TRANSIENT, &ts->streamer) < 0)) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': this node's part cannot "
                  "be finished (out of memory); its journals are kept in %s",
                  t->name, t->dir);
        if (j)
            job_free(j);
        weft_convert_stream_free(s);
        weft_trace_on(t, WEFT_TEV_FINISHED);
        return;
    }
    j->t = t;
    j->s = s;
    /* One member at a time, whatever its threads hold (no conversion
     * comes after a part's: its events are written now or lost). */
    j->alone = weft__stream_new(t, 0);
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m && !m->finished)
            j->ranks[j->n++] = m->in.rank;
    }
    if (weft_worker_submit(ts->streamer, &j->work, finish_work,
                           finish_done) < 0) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': this node's part cannot "
                  "be finished (no thread); its journals are kept in %s",
                  t->name, t->dir);
        weft_convert_stream_free(j->alone);
        job_free(j);
        weft_convert_stream_free(s);
        weft_trace_on(t, WEFT_TEV_FINISHED);
        return;
    }
    d->jobs++;
}
