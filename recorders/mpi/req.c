/* req.c - the requests weft follows: non-blocking point-to-point and
 * collective operations from their start to their completion (see wm.h).
 * One table for the process, under one lock: MPI_THREAD_MULTIPLE programs
 * start and complete requests on several threads.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "map.h"
#include "weft.h"
#include "wm.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static wm_map reqs;       /* WM_KEY(MPI_Request) -> wm_req */
static atomic_uint_fast64_t next_id = 1;

/* Requests sharing one handle beyond this are forgotten, oldest first:
 * their completion was missed (a call not wrapped completed them). */
#define MAX_SHARED 64

/* See wm.h. */
uint64_t wm_req_add(const wm_req *r)
{
    wm_req *c = malloc(sizeof *c), *head, **tail;
    uint64_t id = r->persistent ? 0 : atomic_fetch_add(&next_id, 1);
    size_t n = 0;

    if (!c)
        return id;
    *c = *r;
    c->id = id;
    c->next = NULL;
    pthread_mutex_lock(&mu);
    head = wm_map_get(&reqs, c->key);
    for (tail = &head; *tail; tail = &(*tail)->next)
        n++;
    *tail = c;
    if (n >= MAX_SHARED) {
        wm_req *old = head;
        head = old->next;
        free(old);
    }
    if (wm_map_put(&reqs, c->key, head) < 0) {
        *tail = NULL;
        free(c);
    }
    pthread_mutex_unlock(&mu);
    return id;
}

/* The first request of `handle` whose state `active` asks for (1: has a
 * requestID, 0: any); *link is the pointer to it inside the list, NULL
 * when it is the list's head (the map's value). mu held. */
static wm_req *first(MPI_Request handle, int active, wm_req ***link)
{
    wm_req *prev = NULL;

    for (wm_req *r = wm_map_get(&reqs, WM_KEY(handle)); r;
         prev = r, r = r->next)
        if (!active || r->id) {
            *link = prev ? &prev->next : NULL;
            return r;
        }
    *link = NULL;
    return NULL;
}

/* Unlinks r (found by first() with `link`) and frees it. mu held. */
static void unlink_req(wm_req *r, wm_req **link)
{
    if (link)
        *link = r->next;
    else if (r->next)
        (void)wm_map_put(&reqs, r->key, r->next);
    else
        (void)wm_map_del(&reqs, r->key);
    free(r);
}

/* See wm.h. */
int wm_req_get(MPI_Request handle, wm_req *out)
{
    wm_req *r;

    wm_req **link;

    pthread_mutex_lock(&mu);
    r = first(handle, 0, &link);
    if (r)
        *out = *r;
    pthread_mutex_unlock(&mu);
    return r != NULL;
}

/* See wm.h. */
uint64_t wm_req_start(MPI_Request handle, wm_req *out)
{
    wm_req *r, **link;
    uint64_t id = 0;

    pthread_mutex_lock(&mu);
    r = first(handle, 0, &link);
    if (r) {
        r->id = id = atomic_fetch_add(&next_id, 1);
        *out = *r;
    }
    pthread_mutex_unlock(&mu);
    return id;
}

/* The completion event of r from status. */
static void record_completion(const wm_req *r, const MPI_Status *status)
{
    uint64_t t = wm_now();
    int cancelled = 0, count = 0;

    if (status && status != MPI_STATUS_IGNORE)
        PMPI_Test_cancelled(status, &cancelled);
    if (cancelled) {
        weft_evt_MpiRequestCancelled(NULL, t, r->id);
        return;
    }
    switch (r->kind) {
    case WM_REQ_SEND:
        weft_evt_MpiIsendComplete(NULL, t, r->id);
        break;
    case WM_REQ_RECV:
        if (!status || status == MPI_STATUS_IGNORE ||
            status->MPI_SOURCE == MPI_PROC_NULL)
            break;
        if (PMPI_Get_count(status, r->type, &count) != MPI_SUCCESS ||
            count == MPI_UNDEFINED)
            count = 0;
        weft_evt_MpiIrecv(NULL, t, (uint32_t)status->MPI_SOURCE, r->comm,
                          (uint32_t)status->MPI_TAG, wm_bytes(count, r->type),
                          r->id);
        break;
    case WM_REQ_COLL:
        weft_evt_NonBlockingCollectiveComplete(NULL, t, r->op, r->comm,
                                               r->root, r->sent, r->received,
                                               r->id);
        break;
    default:
        break;
    }
}

/* See wm.h. */
void wm_req_complete(MPI_Request handle, const MPI_Status *status)
{
    wm_req *r, copy, **link;
    int found = 0;

    pthread_mutex_lock(&mu);
    r = first(handle, 1, &link);
    if (r) {
        copy = *r;
        found = 1;
        if (r->persistent)
            r->id = 0;
        else
            unlink_req(r, link);
    }
    pthread_mutex_unlock(&mu);
    if (found)
        record_completion(&copy, status);
}

/* See wm.h. */
void wm_req_tested(MPI_Request handle)
{
    wm_req *r, **link;
    uint64_t id = 0;

    pthread_mutex_lock(&mu);
    r = first(handle, 1, &link);
    if (r)
        id = r->id;
    pthread_mutex_unlock(&mu);
    if (id)
        weft_evt_MpiRequestTest(NULL, wm_now(), id);
}

/* See wm.h. */
void wm_req_drop(MPI_Request handle)
{
    wm_req *r, **link;

    pthread_mutex_lock(&mu);
    r = first(handle, 0, &link);
    if (r)
        unlink_req(r, link);
    pthread_mutex_unlock(&mu);
}
