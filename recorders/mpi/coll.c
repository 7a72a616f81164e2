/* coll.c - collective operations (see wm.h): MpiCollectiveBegin/End
 * around the blocking ones, NonBlockingCollectiveRequest when a
 * non-blocking one starts (its Complete comes with the request's
 * completion, req.c).
 *
 * Bytes, per process, as this library defines them (README "Tracing MPI
 * programs"): sizeSent is what this process's send buffer contributes,
 * sizeReceived what lands in its receive buffer; a root counts what it
 * sends to or receives from every rank, itself included; MPI_IN_PLACE
 * contributes nothing of its own. N is the communicator's size.
 */
#include <stddef.h>

#include "weft.h"
#include "wm.h"

/* One collective's record fields. */
typedef struct coll {
    OTF2_CommRef comm;
    uint32_t root;
    uint64_t sent, received;
} coll;

static int size_of(MPI_Comm comm)
{
    int n = 0, inter = 0;

    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    return n;
}

static int rank_of(MPI_Comm comm)
{
    int r = -1;

    PMPI_Comm_rank(comm, &r);
    return r;
}

/* 1 when this process is the root of a rooted collective: its rank on an
 * intra-communicator, MPI_ROOT on an inter-communicator. */
static int is_root(int root, MPI_Comm comm)
{
    return root == MPI_ROOT || root == rank_of(comm);
}

static coll start(MPI_Comm comm, int root)
{
    coll c = { .comm = wm_comm_ref(comm),
               .root = root >= 0 ? (uint32_t)root : WM_NO_RANK };

    return c;
}

static uint64_t sum(const int counts[], int n, MPI_Datatype type)
{
    uint64_t b = 0;

    for (int i = 0; counts && i < n; i++)
        b += wm_bytes(counts[i], type);
    return b;
}

static uint64_t sum_w(const int counts[], int n, const MPI_Datatype types[])
{
    uint64_t b = 0;

    for (int i = 0; counts && types && i < n; i++)
        b += wm_bytes(counts[i], types[i]);
    return b;
}

/* ---- what each collective moves --------------------------------------- */

static coll c_barrier(MPI_Comm comm)
{
    return start(comm, -1);
}

static coll c_bcast(int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    coll c = start(comm, root);

    if (is_root(root, comm))
        c.sent = wm_bytes(count, type) * (uint64_t)size_of(comm);
    else
        c.received = wm_bytes(count, type);
    return c;
}

static coll c_gather(const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    coll c = start(comm, root);

    if (sendbuf != MPI_IN_PLACE && root != MPI_ROOT)
        c.sent = wm_bytes(sendcount, sendtype);
    if (is_root(root, comm))
        c.received = wm_bytes(recvcount, recvtype) * (uint64_t)size_of(comm);
    return c;
}

static coll c_gatherv(const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, const int recvcounts[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    coll c = start(comm, root);

    if (sendbuf != MPI_IN_PLACE && root != MPI_ROOT)
        c.sent = wm_bytes(sendcount, sendtype);
    if (is_root(root, comm))
        c.received = sum(recvcounts, size_of(comm), recvtype);
    return c;
}

static coll c_scatter(int sendcount, MPI_Datatype sendtype,
                      const void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    coll c = start(comm, root);

    if (is_root(root, comm))
        c.sent = wm_bytes(sendcount, sendtype) * (uint64_t)size_of(comm);
    if (recvbuf != MPI_IN_PLACE && root != MPI_ROOT)
        c.received = wm_bytes(recvcount, recvtype);
    return c;
}

static coll c_scatterv(const int sendcounts[], MPI_Datatype sendtype,
                       const void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    coll c = start(comm, root);

    if (is_root(root, comm))
        c.sent = sum(sendcounts, size_of(comm), sendtype);
    if (recvbuf != MPI_IN_PLACE && root != MPI_ROOT)
        c.received = wm_bytes(recvcount, recvtype);
    return c;
}

static coll c_allgather(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    coll c = start(comm, -1);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = wm_bytes(sendcount, sendtype);
    c.received = wm_bytes(recvcount, recvtype) * (uint64_t)size_of(comm);
    return c;
}

static coll c_allgatherv(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, const int recvcounts[],
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    coll c = start(comm, -1);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = wm_bytes(sendcount, sendtype);
    c.received = sum(recvcounts, size_of(comm), recvtype);
    return c;
}

static coll c_alltoall(const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    coll c = start(comm, -1);
    uint64_t n = (uint64_t)size_of(comm);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = wm_bytes(sendcount, sendtype) * n;
    c.received = wm_bytes(recvcount, recvtype) * n;
    return c;
}

static coll c_alltoallv(const void *sendbuf, const int sendcounts[],
                        MPI_Datatype sendtype, const int recvcounts[],
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    coll c = start(comm, -1);
    int n = size_of(comm);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = sum(sendcounts, n, sendtype);
    c.received = sum(recvcounts, n, recvtype);
    return c;
}

static coll c_alltoallw(const void *sendbuf, const int sendcounts[],
                        const MPI_Datatype sendtypes[],
                        const int recvcounts[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    coll c = start(comm, -1);
    int n = size_of(comm);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = sum_w(sendcounts, n, sendtypes);
    c.received = sum_w(recvcounts, n, recvtypes);
    return c;
}

static coll c_reduce(const void *sendbuf, int count, MPI_Datatype type,
                     int root, MPI_Comm comm)
{
    coll c = start(comm, root);

    if (sendbuf != MPI_IN_PLACE && root != MPI_ROOT)
        c.sent = wm_bytes(count, type);
    if (is_root(root, comm))
        c.received = wm_bytes(count, type);
    return c;
}

static coll c_allreduce(const void *sendbuf, int count, MPI_Datatype type,
                        MPI_Comm comm)
{
    coll c = start(comm, -1);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = wm_bytes(count, type);
    c.received = wm_bytes(count, type);
    return c;
}

static coll c_reduce_scatter(const void *sendbuf, const int recvcounts[],
                             MPI_Datatype type, MPI_Comm comm)
{
    coll c = start(comm, -1);
    int r = rank_of(comm);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = sum(recvcounts, size_of(comm), type);
    if (recvcounts && r >= 0)
        c.received = wm_bytes(recvcounts[r], type);
    return c;
}

static coll c_reduce_scatter_block(const void *sendbuf, int recvcount,
                                   MPI_Datatype type, MPI_Comm comm)
{
    coll c = start(comm, -1);

    if (sendbuf != MPI_IN_PLACE)
        c.sent = wm_bytes(recvcount, type) * (uint64_t)size_of(comm);
    c.received = wm_bytes(recvcount, type);
    return c;
}

/* ---- recording ---------------------------------------------------------- */

static void end(const wm_frame *f, int rc, coll c)
{
    if (rc == MPI_SUCCESS)
        weft_evt_MpiCollectiveEnd(NULL, wm_now(), wm_call_op(f->call),
                                  c.comm, c.root, c.sent, c.received);
}

/* A non-blocking collective started: registers its request and records
 * NonBlockingCollectiveRequest. */
static void nb_request(const wm_frame *f, int rc, MPI_Request h, coll c)
{
    wm_req r = { .key = WM_KEY(h), .kind = WM_REQ_COLL, .comm = c.comm,
                 .op = wm_call_op(f->call), .root = c.root, .sent = c.sent,
                 .received = c.received };

    if (rc != MPI_SUCCESS || h == MPI_REQUEST_NULL)
        return;
    weft_evt_NonBlockingCollectiveRequest(NULL, wm_now(), wm_req_add(&r));
}

/* ---- the wrappers of calls.def's collectives ---------------------------- */

#define WMK(Name, role, op, params, args, bytes)                             \
    WM_WRAPPER(Name, params, args,                                           \
               weft_evt_MpiCollectiveBegin(NULL, wm_now()),                  \
               WM_PMPI(&f_, PMPI_##Name args), end(&f_, rc_, bytes))
#define WMKN(Name, role, op, params, args, bytes)                            \
    WM_WRAPPER(Name, params, args, (void)0, WM_PMPI(&f_, PMPI_##Name args),  \
               nb_request(&f_, rc_, *request, bytes))
#include "calls.def"
