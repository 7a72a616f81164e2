/* recorder.c - what recorders need from libweft beyond weft.h: the "inside
 * libweft" guard and attaching a thread that has not recorded yet. See
 * recorder.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "recorder.h"
#include "client_session.h"

__thread int weft__inside __attribute__((tls_model("initial-exec")));

/* See recorder.h. */
int weft__recorder_begin(weft__rguard *g)
{
    g->saved_errno = errno;
    g->recording = weft__inside == 0;
    if (g->recording)
        weft__inside++;
    return g->recording;
}

/* See recorder.h. */
void weft__recorder_end(weft__rguard *g)
{
    if (g->recording) {
        g->recording = 0;
        weft__inside--;
    }
}

/* See recorder.h. */
int weft__recorder_def(const weft_record *r)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    if (!d || d->is_event || d->is_pseudo || d->flags == WEFT_DF_DAEMON)
        return WEFT_EINVAL;
    return weft__def_append(r);
}

/* Next id of the id spaces weft__recorder_newid serves. */
static _Atomic uint32_t next_group, next_comm;

/* See recorder.h. */
uint32_t weft__recorder_newid(unsigned kind)
{
    switch (kind) {
    case WEFT_REF_GROUP:
        return atomic_fetch_add(&next_group, 1);
    case WEFT_REF_COMM:
        return atomic_fetch_add(&next_comm, 1);
    default:
        return UINT32_MAX;
    }
}

/* See recorder.h. */
void weft__recorder_ended(const char *why)
{
    weft__inside++; /* libweft's own locking, unseen by the recorders */
    pthread_mutex_lock(&weft__S.mu);
    weft__ended_locked(why);
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
}

/* See recorder.h. */
uint32_t weft__recorder_attach(void)
{
    int saved = errno;
    weft__thread *t;

    weft__inside++; /* libweft's own locking, unseen by the recorders */
    t = weft__thread_self();
    weft__inside--;
    errno = saved;
    return t ? t->location : UINT32_MAX;
}
