/* p2p.c - point-to-point calls and request completion (see wm.h):
 * MpiSend/MpiRecv around blocking calls, MpiIsend/MpiIrecvRequest when a
 * request starts, and the completion events when the Wait and Test calls complete
 * it (req.c); Iprobe, which records nothing but its region. Completion needs the handles as they were before the call
 * (MPI sets completed ones to MPI_REQUEST_NULL) and statuses even where
 * the program ignores them: the do_ hooks keep copies.
 */
#include <stdlib.h>
#include <string.h>

#include "weft.h"
#include "wm.h"

#define SMALL 16

/* Copies of request handles and statuses for one completion call: on the
 * stack up to SMALL requests, else malloc'd. */
typedef struct scratch {
    MPI_Request req_small[SMALL];
    MPI_Status st_small[SMALL];
    MPI_Request *req;
    MPI_Status *st;
} scratch;

/* Fills s for `n` requests copied from `reqs`; statuses where the program
 * gives none. Returns the statuses to pass to PMPI, NULL when out of
 * memory (then the call is made without recording completions). */
static MPI_Status *scratch_init(scratch *s, int n, const MPI_Request *reqs,
                                MPI_Status *user)
{
    size_t un = n > 0 ? (size_t)n : 0;

    s->req = un <= SMALL ? s->req_small : malloc(un * sizeof *s->req);
    s->st = un <= SMALL ? s->st_small : malloc(un * sizeof *s->st);
    if (!s->req || !s->st)
        return NULL;
    if (un)
        memcpy(s->req, reqs, un * sizeof *reqs);
    return user == MPI_STATUSES_IGNORE ? s->st : user;
}

static void scratch_free(scratch *s)
{
    if (s->req != s->req_small)
        free(s->req);
    if (s->st != s->st_small)
        free(s->st);
}

/* MpiRecv from a completed receive's status. */
static void record_recv(const MPI_Status *st, MPI_Datatype type,
                        MPI_Comm comm)
{
    int count = 0;

    if (st->MPI_SOURCE == MPI_PROC_NULL)
        return;
    if (PMPI_Get_count(st, type, &count) != MPI_SUCCESS ||
        count == MPI_UNDEFINED)
        count = 0;
    weft_evt_MpiRecv(NULL, wm_now(), (uint32_t)st->MPI_SOURCE,
                     wm_comm_ref(comm), (uint32_t)st->MPI_TAG,
                     wm_bytes(count, type));
}

static void record_send(int count, MPI_Datatype type, int dest, int tag,
                        MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL)
        return;
    weft_evt_MpiSend(NULL, wm_now(), (uint32_t)dest, wm_comm_ref(comm),
                     (uint32_t)tag, wm_bytes(count, type));
}

/* ---- blocking ----------------------------------------------------------- */

void wm_pre_send(wm_frame *f, const void *buf, int count, MPI_Datatype type,
                 int dest, int tag, MPI_Comm comm)
{
    record_send(count, type, dest, tag, comm);
}

void wm_post_send(wm_frame *f, int rc, const void *buf, int count,
                  MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
}

int wm_do_recv(wm_frame *f, void *buf, int count, MPI_Datatype type,
               int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = WM_PMPI(f, PMPI_Recv(buf, count, type, source, tag, comm, st));

    if (rc == MPI_SUCCESS)
        record_recv(st, type, comm);
    return rc;
}

int wm_do_sendrecv(wm_frame *f, const void *sendbuf, int sendcount,
                   MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc;

    record_send(sendcount, sendtype, dest, sendtag, comm);
    rc = WM_PMPI(f, PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag,
                                  recvbuf, recvcount, recvtype, source,
                                  recvtag, comm, st));
    if (rc == MPI_SUCCESS)
        record_recv(st, recvtype, comm);
    return rc;
}

int wm_do_sendrecv_replace(wm_frame *f, void *buf, int count,
                           MPI_Datatype type, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm,
                           MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc;

    record_send(count, type, dest, sendtag, comm);
    rc = WM_PMPI(f, PMPI_Sendrecv_replace(buf, count, type, dest, sendtag,
                                          source, recvtag, comm, st));
    if (rc == MPI_SUCCESS)
        record_recv(st, type, comm);
    return rc;
}

/* ---- starting requests --------------------------------------------------- */

/* Registers a send request; records MpiIsend unless persistent. */
static void add_send(MPI_Request h, int persistent, int count,
                     MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    wm_req r = { .key = WM_KEY(h), .kind = WM_REQ_SEND,
                 .persistent = (uint8_t)persistent, .peer = (uint32_t)dest,
                 .tag = tag, .bytes = wm_bytes(count, type),
                 .comm = wm_comm_ref(comm) };
    uint64_t id;

    if (dest == MPI_PROC_NULL || h == MPI_REQUEST_NULL)
        return;
    id = wm_req_add(&r);
    if (!persistent)
        weft_evt_MpiIsend(NULL, wm_now(), r.peer, r.comm, (uint32_t)tag,
                          r.bytes, id);
}

/* Registers a receive request; records MpiIrecvRequest unless
 * persistent. */
static void add_recv(MPI_Request h, int persistent, MPI_Datatype type,
                     int source, int tag, MPI_Comm comm)
{
    wm_req r = { .key = WM_KEY(h), .kind = WM_REQ_RECV,
                 .persistent = (uint8_t)persistent, .peer = (uint32_t)source,
                 .tag = tag, .type = type, .comm = wm_comm_ref(comm) };
    uint64_t id;

    if (source == MPI_PROC_NULL || h == MPI_REQUEST_NULL)
        return;
    id = wm_req_add(&r);
    if (!persistent)
        weft_evt_MpiIrecvRequest(NULL, wm_now(), id);
}

void wm_pre_isend(wm_frame *f, const void *buf, int count, MPI_Datatype type,
                  int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
}

void wm_post_isend(wm_frame *f, int rc, const void *buf, int count,
                   MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    if (rc == MPI_SUCCESS)
        add_send(*request, 0, count, type, dest, tag, comm);
}

void wm_pre_send_init(wm_frame *f, const void *buf, int count,
                      MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request *request)
{
}

void wm_post_send_init(wm_frame *f, int rc, const void *buf, int count,
                       MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request *request)
{
    if (rc == MPI_SUCCESS)
        add_send(*request, 1, count, type, dest, tag, comm);
}

void wm_pre_irecv(wm_frame *f, void *buf, int count, MPI_Datatype type,
                  int source, int tag, MPI_Comm comm, MPI_Request *request)
{
}

void wm_post_irecv(wm_frame *f, int rc, void *buf, int count,
                   MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    if (rc == MPI_SUCCESS)
        add_recv(*request, 0, type, source, tag, comm);
}

void wm_pre_recv_init(wm_frame *f, void *buf, int count, MPI_Datatype type,
                      int source, int tag, MPI_Comm comm,
                      MPI_Request *request)
{
}

void wm_post_recv_init(wm_frame *f, int rc, void *buf, int count,
                       MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Request *request)
{
    if (rc == MPI_SUCCESS)
        add_recv(*request, 1, type, source, tag, comm);
}

/* A persistent request started: MpiIsend or MpiIrecvRequest. */
static void started(MPI_Request h)
{
    wm_req r;
    uint64_t id = wm_req_start(h, &r);

    if (!id)
        return;
    if (r.kind == WM_REQ_SEND)
        weft_evt_MpiIsend(NULL, wm_now(), r.peer, r.comm, (uint32_t)r.tag,
                          r.bytes, id);
    else if (r.kind == WM_REQ_RECV)
        weft_evt_MpiIrecvRequest(NULL, wm_now(), id);
}

void wm_pre_start(wm_frame *f, MPI_Request *request)
{
}

void wm_post_start(wm_frame *f, int rc, MPI_Request *request)
{
    if (rc == MPI_SUCCESS)
        started(*request);
}

void wm_pre_startall(wm_frame *f, int count, MPI_Request requests[])
{
}

void wm_post_startall(wm_frame *f, int rc, int count, MPI_Request requests[])
{
    for (int i = 0; rc == MPI_SUCCESS && i < count; i++)
        started(requests[i]);
}

void wm_pre_request_free(wm_frame *f, MPI_Request *request)
{
    wm_req_drop(*request);
}

void wm_post_request_free(wm_frame *f, int rc, MPI_Request *request)
{
}

void wm_pre_cancel(wm_frame *f, MPI_Request *request)
{
}

void wm_post_cancel(wm_frame *f, int rc, MPI_Request *request)
{
}

/* ---- completion ---------------------------------------------------------- */

int wm_do_wait(wm_frame *f, MPI_Request *request, MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    MPI_Request h = *request;
    int rc = WM_PMPI(f, PMPI_Wait(request, st));

    if (rc == MPI_SUCCESS && h != MPI_REQUEST_NULL)
        wm_req_complete(h, st);
    return rc;
}

int wm_do_test(wm_frame *f, MPI_Request *request, int *flag,
               MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    MPI_Request h = *request;
    int rc = WM_PMPI(f, PMPI_Test(request, flag, st));

    if (!wm_poll(f, rc == MPI_SUCCESS && !*flag, wm_poll_key(1, &h)) ||
        rc != MPI_SUCCESS || h == MPI_REQUEST_NULL)
        return rc;
    if (*flag)
        wm_req_complete(h, st);
    else
        wm_req_tested(h);
    return rc;
}

int wm_do_waitany(wm_frame *f, int count, MPI_Request requests[], int *index,
                  MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    scratch s;
    int rc;

    if (!scratch_init(&s, count, requests, MPI_STATUSES_IGNORE)) {
        scratch_free(&s);
        return WM_PMPI(f, PMPI_Waitany(count, requests, index, status));
    }
    rc = WM_PMPI(f, PMPI_Waitany(count, requests, index, st));
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        wm_req_complete(s.req[*index], st);
    scratch_free(&s);
    return rc;
}

int wm_do_testany(wm_frame *f, int count, MPI_Request requests[], int *index,
                  int *flag, MPI_Status *status)
{
    MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
    scratch s;
    int rc;

    if (!scratch_init(&s, count, requests, MPI_STATUSES_IGNORE)) {
        scratch_free(&s);
        return WM_PMPI(f, PMPI_Testany(count, requests, index, flag, status));
    }
    rc = WM_PMPI(f, PMPI_Testany(count, requests, index, flag, st));
    if (!wm_poll(f, rc == MPI_SUCCESS && (!*flag || *index == MPI_UNDEFINED),
                 wm_poll_key(count, s.req)) ||
        rc != MPI_SUCCESS) {
        scratch_free(&s);
        return rc;
    }
    if (*flag && *index != MPI_UNDEFINED)
        wm_req_complete(s.req[*index], st);
    for (int i = 0; i < count; i++)
        if (s.req[i] != MPI_REQUEST_NULL && !(*flag && i == *index))
            wm_req_tested(s.req[i]);
    scratch_free(&s);
    return rc;
}

/* Waitsome and Testsome: completions of the indices MPI gives; with
 * `tested`, MpiRequestTest for the others. */
static void some_done(const scratch *s, int incount, int outcount,
                      const int indices[], const MPI_Status *st, int tested)
{
    if (outcount == MPI_UNDEFINED)
        return;
    for (int k = 0; k < outcount; k++)
        wm_req_complete(s->req[indices[k]], &st[k]);
    for (int i = 0; tested && i < incount; i++) {
        int done = 0;
        for (int k = 0; k < outcount && !done; k++)
            done = indices[k] == i;
        if (!done && s->req[i] != MPI_REQUEST_NULL)
            wm_req_tested(s->req[i]);
    }
}

/* Waitsome and Testsome (`fn`): completions of the indices MPI gives;
 * with `tested`, MpiRequestTest for the others. */
static int do_some(wm_frame *f, int (*fn)(int, MPI_Request[], int *, int[],
                                          MPI_Status[]),
                   int tested, int incount, MPI_Request requests[],
                   int *outcount, int indices[], MPI_Status statuses[])
{
    scratch s;
    MPI_Status *st = scratch_init(&s, incount, requests, statuses);
    int rc;

    if (!st) {
        scratch_free(&s);
        return WM_PMPI(f, fn(incount, requests, outcount, indices, statuses));
    }
    rc = WM_PMPI(f, fn(incount, requests, outcount, indices, st));
    if (wm_poll(f, rc == MPI_SUCCESS && (*outcount == 0 ||
                                         *outcount == MPI_UNDEFINED),
                wm_poll_key(incount, s.req)) &&
        rc == MPI_SUCCESS)
        some_done(&s, incount, *outcount, indices, st, tested);
    scratch_free(&s);
    return rc;
}

int wm_do_waitsome(wm_frame *f, int incount, MPI_Request requests[],
                   int *outcount, int indices[], MPI_Status statuses[])
{
    return do_some(f, PMPI_Waitsome, 0, incount, requests, outcount, indices,
                   statuses);
}

int wm_do_testsome(wm_frame *f, int incount, MPI_Request requests[],
                   int *outcount, int indices[], MPI_Status statuses[])
{
    return do_some(f, PMPI_Testsome, 1, incount, requests, outcount, indices,
                   statuses);
}

int wm_do_waitall(wm_frame *f, int count, MPI_Request requests[],
                  MPI_Status statuses[])
{
    scratch s;
    MPI_Status *st = scratch_init(&s, count, requests, statuses);
    int rc;

    if (!st) {
        scratch_free(&s);
        return WM_PMPI(f, PMPI_Waitall(count, requests, statuses));
    }
    rc = WM_PMPI(f, PMPI_Waitall(count, requests, st));
    for (int i = 0; rc == MPI_SUCCESS && i < count; i++)
        if (s.req[i] != MPI_REQUEST_NULL)
            wm_req_complete(s.req[i], &st[i]);
    scratch_free(&s);
    return rc;
}

int wm_do_testall(wm_frame *f, int count, MPI_Request requests[], int *flag,
                  MPI_Status statuses[])
{
    scratch s;
    MPI_Status *st = scratch_init(&s, count, requests, statuses);
    int rc;

    if (!st) {
        scratch_free(&s);
        return WM_PMPI(f, PMPI_Testall(count, requests, flag, statuses));
    }
    rc = WM_PMPI(f, PMPI_Testall(count, requests, flag, st));
    if (!wm_poll(f, rc == MPI_SUCCESS && !*flag, wm_poll_key(count, s.req)))
        count = 0; /* only counted: no events */
    for (int i = 0; rc == MPI_SUCCESS && i < count; i++) {
        if (s.req[i] == MPI_REQUEST_NULL)
            continue;
        if (*flag)
            wm_req_complete(s.req[i], &st[i]);
        else
            wm_req_tested(s.req[i]);
    }
    scratch_free(&s);
    return rc;
}

/* Iprobe records no event of its own (the message is recorded when it is
 * received); its fruitless polls collapse as the Test calls' do. */
int wm_do_iprobe(wm_frame *f, int source, int tag, MPI_Comm comm, int *flag,
                 MPI_Status *status)
{
    uint64_t key = ((WM_KEY(comm) * 1099511628211u) ^ (uint32_t)source) *
                   1099511628211u ^ (uint32_t)tag;
    int rc = WM_PMPI(f, PMPI_Iprobe(source, tag, comm, flag, status));

    (void)wm_poll(f, rc == MPI_SUCCESS && !*flag, key);
    return rc;
}
