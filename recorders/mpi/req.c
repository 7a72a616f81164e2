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

/* See wm.h. */
uint64_t wm_req_add(const wm_req *r)
{
    wm_req *c = malloc(sizeof *c);
    uint64_t id = r->persistent ? 0 : atomic_fetch_add(&next_id, 1);

    if (!c)
        return id;
    *c = *r;
    c->id = id;
    pthread_mutex_lock(&mu);
    free(wm_map_del(&reqs, c->key)); /* a handle MPI reuses */
    if (wm_map_put(&reqs, c->key, c) < 0)
        free(c);
    pthread_mutex_unlock(&mu);
    return id;
}

/* See wm.h. */
int wm_req_get(MPI_Request handle, wm_req *out)
{
    wm_req *r;

    pthread_mutex_lock(&mu);
    r = wm_map_get(&reqs, WM_KEY(handle));
    if (r)
        *out = *r;
    pthread_mutex_unlock(&mu);
    return r != NULL;
}

/* See wm.h. */
uint64_t wm_req_start(MPI_Request handle, wm_req *out)
{
    wm_req *r;
    uint64_t id = 0;

    pthread_mutex_lock(&mu);
    r = wm_map_get(&reqs, WM_KEY(handle));
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
    uint64_t t = weft_time();
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
    wm_req *r, copy;
    int found = 0;

    pthread_mutex_lock(&mu);
    r = wm_map_get(&reqs, WM_KEY(handle));
    if (r && r->id) {
        copy = *r;
        found = 1;
        if (r->persistent)
            r->id = 0;
        else
            free(wm_map_del(&reqs, WM_KEY(handle)));
    }
    pthread_mutex_unlock(&mu);
    if (found)
        record_completion(&copy, status);
}

/* See wm.h. */
void wm_req_tested(MPI_Request handle)
{
    wm_req r;

    if (wm_req_get(handle, &r) && r.id)
        weft_evt_MpiRequestTest(NULL, weft_time(), r.id);
}

/* See wm.h. */
void wm_req_drop(MPI_Request handle)
{
    pthread_mutex_lock(&mu);
    free(wm_map_del(&reqs, WM_KEY(handle)));
    pthread_mutex_unlock(&mu);
}
