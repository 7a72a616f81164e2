/* stream_take.c - what a conversion takes of the stream that wrote its
 * trace ahead of it (stream.h; the DESIGN is stream.c's): the rest of
 * its members' journals read (a catch-up, on several threads), its
 * archive, and the members it wrote whole, adopted. Conversion's
 * thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "otf2out.h"
#include "replay.h"
#include "stream.h"
#include "stream_internal.h"
#include "sums.h"

/* One thread of a catch-up: a copy of the stream's conv with its own
 * scratch, attribute lists, reverse map, locations named and error (as
 * replay.c's workers), taking members in rank order. */
typedef struct catcher {
    weft_convert_stream *s;
    conv c;
    weft_convert_result out;
    pthread_mutex_t *lock;
    size_t *next;           /* under lock */
} catcher;

static void *catch_up_run(void *arg)
{
    catcher *k = arg;
    weft_convert_stream *s = k->s;
    conv *sink = weft__otf2_sink(&k->c);

    for (;;) {
        member *m = NULL;
        int rc;
        pthread_mutex_lock(k->lock);
        while (*k->next < s->c.nmems && !m) {
            member *x = &s->c.mems[(*k->next)++];
            if (x->st && x->st->live && !x->st->done)
                m = x;
        }
        pthread_mutex_unlock(k->lock);
        if (!m || weft__stream_broken(s))
            break;
        if ((rc = weft__stream_read_member(s, &k->c, m, 1)) < 0)
            weft__stream_give_up(s, &k->c, m, rc);
    }
    weft__otf2_sink(sink);
    return NULL;
}

static int catcher_init(catcher *k, weft_convert_stream *s,
                        pthread_mutex_t *lock, size_t *next)
{
    memset(k, 0, sizeof *k);
    k->s = s;
    k->lock = lock;
    k->next = next;
    return weft__replay_copy(&k->c, &s->c, &k->out);
}

static void catcher_free(catcher *k)
{
    weft__replay_copy_free(&k->c);
    weft_convert_result_free(&k->out);
}

/* See stream.h. */
int weft__stream_events_only(const weft_convert_stream *s)
{
    return s->in.events_only;
}

/* See stream.h. */
void weft__stream_catch_up(weft_convert_stream *s, unsigned nthreads)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    catcher *k;
    size_t next = 0;
    unsigned n = 0;

    if (weft__stream_broken(s) || !s->opened)
        return;
    if (!s->c.resolution)  /* rank 0 came after every step */
        weft__stream_set_resolution(s, weft__stream_first_rate(s));
    if (!(k = calloc(nthreads ? nthreads : 1, sizeof *k))) {
        weft__stream_set_broken(s);
        weft__stream_tidy(s);
        return;
    }
    for (n = 0; n < (nthreads ? nthreads : 1); n++)
        if (catcher_init(&k[n], s, &lock, &next) < 0) {
            n++;
            weft__stream_set_broken(s);
            goto out;
        }
    weft__conv_fan_out(catch_up_run, k, sizeof *k, n);
out:
    for (unsigned i = 0; i < n; i++)
        catcher_free(&k[i]);
    free(k);
    weft__stream_tidy(s);
}

/* Can the conversion take member m (its pass 1 done) from the stream's
 * sm? */
static int adoptable(const weft_convert_stream *s, const conv *c,
                     const member *m, const member *sm)
{
    if (!sm || !sm->st || !sm->st->live || !sm->st->done || m->remote)
        return 0;
    /* (without a fixed resolution the stream rescales no member) */
    if (sm->st->next != m->good_end || m->rescale != sm->rescale ||
        m->each_time || c->resolution != s->c.resolution)
        return 0;
    for (size_t k = 0; k < sm->nlocs; k++)
        if (!weft__conv_loc((member *)m, sm->locs[k].thread, 0))
            return 0;
    return 1;
}

/* See stream.h. */
int weft__stream_adopt(weft_convert_stream *s, conv *c)
{
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i], *sm = weft__conv_member(&s->c, m->rank);
        weft_unifier *u;
        int rc;
        if (!adoptable(s, c, m, sm))
            continue;
        /* Its events were summed in the stream's unifier's ids (the same
         * as pass 1's: one member's definitions in one order). */
        u = m->u;
        m->u = sm->u;
        sm->u = u;
        if ((rc = weft__sums_adopt(c, m, sm, &sm->st->n)) < 0)
            return rc;
    }
    return 0;
}

/* See stream.h. */
OTF2_Archive *weft__stream_archive(weft_convert_stream *s,
                                   chunk_budget **pool)
{
    OTF2_Archive *a;

    if (weft__stream_broken(s) || !s->opened)
        return NULL;
    /* Its event files written whole (every writer closed): the events'
     * archive is done, the primary goes on with the definitions. */
    if (weft__otf2_close_events(&s->c) < 0 || weft__otf2_close(&s->c) < 0) {
        weft__stream_set_broken(s);
        return NULL;
    }
    a = s->primary;
    s->primary = NULL;
    *pool = &s->pool;
    return a;
}
