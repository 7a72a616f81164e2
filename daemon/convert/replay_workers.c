/* replay_workers.c - pass 2 run (weft__replay, replay.h): members
 * replayed by worker threads, what they summed merged in rank order, and
 * an empty event file for each location that records name but where
 * nothing was recorded.
 *
 * DESIGN:
 * Threads (issue #5): several members are replayed at once, one member
 * per worker thread at a time (weft_convert_input.threads; 1 replays them
 * one after the other on the calling thread). Workers claim members in
 * rank order; each has its own copy of the conversion state for pass 2
 * (decoder, unifier scratch, attribute list, referenced locations, time
 * range, the profile and maps of the member it replays, profile sums and
 * its error) and writes only the locations of the
 * member it holds, which libotf2 allows once its pthread locking
 * callbacks are installed. What a member yields that depends on order
 * (its per-location profile rows, its error) is kept with the member; the
 * rest (sums, min/max, sets) does not depend on order. After the workers
 * are joined everything is merged in rank order, and the error reported
 * is that of the lowest rank that failed (no member is claimed after a
 * failure, and every lower rank was claimed before), so the archive and
 * the result are the same whatever the number of threads.
 */
#include "replay.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "otf2out.h"
#include "weft_errors.h"

/* ---- workers (see the DESIGN note) ------------------------------------ */

/* Hands the members out to the workers in rank order. */
typedef struct pass2 {
    pthread_mutex_t lock;
    size_t next;        /* index of the next member to replay */
    int stop;           /* a member failed: hand out no more */
} pass2;

typedef struct worker {
    pass2 *p;
    conv c;                  /* the trace's, with its own pass-2 part */
    weft_convert_result out; /* only its error is used */
} worker;

/* See replay.h. */
int weft__replay_copy(conv *to, const conv *c, weft_convert_result *out)
{
    *to = *c;
    to->out = out;
    memset(&to->scratch, 0, sizeof to->scratch);
    memset(&to->wscratch, 0, sizeof to->wscratch);
    to->rev = NULL;
    to->nrev = 0;
    to->rev_of = NULL;
    to->tmin = to->tmax = 0;
    to->any_event = 0;
    to->loc_refs = NULL;
    to->nloc_refs = to->loc_refs_cap = 0;
    to->anomalies = 0;
    to->added = to->unmatched = 0;
    to->passes = 0;
    memset(&to->prof, 0, sizeof to->prof);  /* each member's */
    memset(&to->psum, 0, sizeof to->psum);
    to->al = OTF2_AttributeList_New();
    to->nest_al = OTF2_AttributeList_New();
    return to->al && to->nest_al ? 0 : WEFT_ENOMEM;
}

/* See replay.h. */
void weft__replay_copy_free(conv *c)
{
    if (c->al)
        OTF2_AttributeList_Delete(c->al);
    if (c->nest_al)
        OTF2_AttributeList_Delete(c->nest_al);
    weft_profile_free(&c->psum);
    free(c->loc_refs);
    weft_unify_scratch_free(&c->scratch);
    weft_unify_scratch_free(&c->wscratch);
    free(c->rev);
    c->al = c->nest_al = NULL;
    c->loc_refs = NULL;
    c->rev = NULL;
}

/* Gives w a copy of c (weft__replay_copy) with sums of the trace's
 * regions. Returns 0 or WEFT_ENOMEM; worker_free frees what it got
 * either way. */
static int worker_init(worker *w, const conv *c, pass2 *p)
{
    int rc;

    memset(w, 0, sizeof *w);
    w->p = p;
    rc = weft__replay_copy(&w->c, c, &w->out);
    if (rc == 0)
        rc = weft_profile_init(&w->c.psum, c->prof.name, c->prof.paradigm,
                               c->prof.name_arg,
                               c->prof.nregions, c->prof.keep);
    return rc < 0 ? WEFT_ENOMEM : 0;
}

static void worker_free(worker *w)
{
    weft__replay_copy_free(&w->c);
}

/* The next member to replay, NULL when there is none or one failed. */
static member *claim_member(pass2 *p, const conv *c)
{
    member *m = NULL;

    pthread_mutex_lock(&p->lock);
    if (!p->stop && p->next < c->nmems)
        m = &c->mems[p->next++];
    pthread_mutex_unlock(&p->lock);
    return m;
}

static void *worker_run(void *arg)
{
    worker *w = arg;
    conv *sink = weft__otf2_sink(&w->c);
    member *m;

    while ((m = claim_member(w->p, &w->c)) != NULL) {
        w->out.error[0] = '\0';
        m->rc = weft__replay_member(&w->c, m);
        if (m->rc == 0 && w->out.error[0])
            m->rc = WEFT_EOTF2;  /* an error libotf2 did not return */
        if (m->rc < 0) {
            m->error = strdup(w->out.error);
            pthread_mutex_lock(&w->p->lock);
            w->p->stop = 1;
            pthread_mutex_unlock(&w->p->lock);
        }
    }
    weft__otf2_sink(sink);
    return NULL;
}

/* Adds what worker w gathered that does not depend on order to c. */
static int worker_merge(conv *c, const worker *w)
{
    const conv *x = &w->c;

    if (c->nloc_refs + x->nloc_refs > c->loc_refs_cap) {
        size_t cap = c->nloc_refs + x->nloc_refs;
        uint64_t *p = realloc(c->loc_refs, cap * sizeof *p);
        if (!p)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        c->loc_refs = p;
        c->loc_refs_cap = cap;
    }
    if (x->nloc_refs)
        memcpy(c->loc_refs + c->nloc_refs, x->loc_refs,
               x->nloc_refs * sizeof *x->loc_refs);
    c->nloc_refs += x->nloc_refs;
    if (x->any_event) {
        if (!c->any_event || x->tmin < c->tmin)
            c->tmin = x->tmin;
        if (!c->any_event || x->tmax > c->tmax)
            c->tmax = x->tmax;
        c->any_event = 1;
    }
    weft_profile_add(&c->prof, &x->psum);
    c->anomalies += x->anomalies;
    c->added += x->added;
    c->unmatched += x->unmatched;
    c->passes += x->passes;
    return 0;
}

/* Moves the members' per-location profile rows to c->prof.rows, in rank
 * order. */
static int gather_rows(conv *c)
{
    size_t n = 0;

    for (size_t i = 0; i < c->nmems; i++)
        n += c->mems[i].nprows;
    if (!n)
        return 0;
    c->prof.rows = malloc(n * sizeof *c->prof.rows);
    if (!c->prof.rows)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    c->prof.cap = n;
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        if (m->nprows)
            memcpy(c->prof.rows + c->prof.nrows, m->prows,
                   m->nprows * sizeof *m->prows);
        c->prof.nrows += m->nprows;
        free(m->prows);
        m->prows = NULL;
        m->nprows = 0;
    }
    return 0;
}

/* See replay.h. */
unsigned weft__replay_threads(const conv *c)
{
    unsigned n = c->in->threads;

    if (!n) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (unsigned)(cpus < WEFT_CONVERT_MAX_THREADS
                                      ? cpus : WEFT_CONVERT_MAX_THREADS)
                     : 1;
    }
    if (n > WEFT_CONVERT_MAX_THREADS)
        n = WEFT_CONVERT_MAX_THREADS;
    if (n > c->nmems)
        n = (unsigned)c->nmems;
    if (c->in->max_writers && n > c->in->max_writers)
        n = (unsigned)c->in->max_writers;  /* a writer each at least */
    return n ? n : 1;
}

/* Replays every member on nthreads threads (this one and nthreads - 1
 * started here) and merges their results into c in rank order. Returns
 * 0, or the code and error of the lowest rank that failed. */
static int replay_members(conv *c, unsigned nthreads)
{
    pass2 p;
    worker *w;
    unsigned n = 0;
    int rc = 0;

    memset(&p, 0, sizeof p);
    pthread_mutex_init(&p.lock, NULL);
    w = calloc(nthreads, sizeof *w);
    if (!w) {
        rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    for (n = 0; n < nthreads; n++) {
        if (worker_init(&w[n], c, &p) < 0) {
            n++;
            rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            goto out;
        }
    }
    weft__conv_fan_out(worker_run, w, sizeof *w, nthreads);
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        if (m->rc < 0) {
            rc = weft__conv_fail(c, m->rc, "%s",
                                 m->error ? m->error : "out of memory");
            goto out;
        }
    }
    for (unsigned i = 0; i < nthreads && rc == 0; i++)
        rc = worker_merge(c, &w[i]);
    if (rc == 0)
        rc = gather_rows(c);
out:
    for (unsigned i = 0; i < n; i++)
        worker_free(&w[i]);
    free(w);
    pthread_mutex_destroy(&p.lock);
    return rc;
}

/* ---- locations without events ----------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A location that records name, of a rank that sent nothing (a process
 * that never came: ingest takes the locations of any rank): a ghost (see
 * conv), an empty location of its own location group, so that what was
 * acknowledged still converts and every reference resolves. */
static int add_ghost(conv *c, uint64_t id)
{
    uint64_t *p = realloc(c->ghosts, (c->nghosts + 1) * sizeof *p);

    if (!p)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    c->ghosts = p;
    c->ghosts[c->nghosts++] = id;
    return weft__otf2_empty_events(c, id);
}

/* Locations that records name but where nothing was recorded become
 * locations without events (an empty event file each), so that readers
 * resolve every reference; those of a process without a journal are
 * ghosts (add_ghost). */
static int add_referenced_locations(conv *c)
{
    if (c->nloc_refs)
        qsort(c->loc_refs, c->nloc_refs, sizeof *c->loc_refs, cmp_u64);
    for (size_t i = 0; i < c->nloc_refs; i++) {
        uint64_t id = c->loc_refs[i];
        member *m = weft__conv_member(c, (uint32_t)(id >> 32));
        loc *l;
        int rc;
        if (i && id == c->loc_refs[i - 1])
            continue;
        if (!m) {
            if ((rc = add_ghost(c, id)) < 0)
                return rc;
            continue;
        }
        if (weft__conv_loc(m, (uint32_t)id, 0))
            continue;
        if (!(l = weft__conv_loc(m, (uint32_t)id, 1)))
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        if (weft__otf2_open_writer(c, m, l) < 0 ||
            weft__replay_close_writers(c, m) < 0)
            return WEFT_EOTF2;
    }
    return 0;
}

/* Pass 2, then the locations only named. */
int weft__replay(conv *c)
{
    unsigned n = weft__replay_threads(c);
    int rc;

    c->window = c->in->max_writers ? (size_t)(c->in->max_writers / n) : 0;
    rc = replay_members(c, n);

    return rc < 0 ? rc : add_referenced_locations(c);
}
