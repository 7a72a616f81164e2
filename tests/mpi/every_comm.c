/* every_comm.c - every.c's communicators (duplicated, split, created
 * from groups, Cartesian, an intercommunicator) and one-sided
 * communication (windows, fences, locks, groups). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "every.h"

/* ---- communicators ----------------------------------------------------- */

/* Sendrecv of 2 ints on C to DEST from SRC (either may be MPI_PROC_NULL);
 * the payload is the sender's world rank. */
static void exchange(const struct comm *c, int dest, int src, int tag)
{
    int s[2] = { rank, -rank }, r[2] = { -1, -1 };
    MPI_Status st;
    M(MPI_Sendrecv)(s, 2, MPI_INT, dest, tag, r, 2, MPI_INT, src, tag, c->comm, &st);
    sent(c, dest, tag, B(2), K_MpiSend);
    received(c, src, tag, B(2), K_MpiRecv);
    if (src != MPI_PROC_NULL)
        CHECK(r[0] == peer_world(c, src) && r[1] == -r[0], "%s: got %d from %d (world %d)",
              c->name, r[0], src, peer_world(c, src));
}

/* Communicators made from groups: Comm_create (world ranks 3, 1, 2) and
 * Comm_create_group (world ranks 2 and 0), each used and freed. */
static void comms_from_groups(void)
{
    struct comm created_c, cgroup;
    MPI_Comm nc;
    MPI_Group wg, g;
    int members[3], cr;

    M(MPI_Comm_group)(MPI_COMM_WORLD, &wg);
    members[0] = 3; members[1] = 1; members[2] = 2;
    M(MPI_Group_incl)(wg, 3, members, &g);
    M(MPI_Comm_create)(MPI_COMM_WORLD, g, &nc);
    if (rank == 0) {
        CHECK(nc == MPI_COMM_NULL, "Comm_create gave rank 0 a communicator");
        M(MPI_Group_free)(&g);
    } else {
        int got[3];
        created(&created_c, nc, "every.create");
        M(MPI_Group_free)(&g);
        CHECK(created_c.world[0] == 3 && created_c.world[1] == 1, "create: order %d %d",
              created_c.world[0], created_c.world[1]);
        M(MPI_Gather)(&rank, 1, MPI_INT, got, 1, MPI_INT, 0, created_c.comm);
        coll(&created_c, "GATHER", 0);
        if (rank == 3)
            CHECK(got[0] == 3 && got[1] == 1 && got[2] == 2, "Gather on create");
        M(MPI_Comm_rank)(created_c.comm, &cr);
        if (cr == 1)
            exchange(&created_c, 2, MPI_PROC_NULL, 510);
        else if (cr == 2)
            exchange(&created_c, MPI_PROC_NULL, 1, 510);
        comm_free(&created_c);
    }

    /* Comm_create_group: only world ranks 2 and 0 take part. */
    if (rank % 2 == 0) {
        members[0] = 2; members[1] = 0;
        M(MPI_Group_incl)(wg, 2, members, &g);
        M(MPI_Comm_create_group)(MPI_COMM_WORLD, g, 77, &nc);
        created(&cgroup, nc, "every.cgroup");
        M(MPI_Group_free)(&g);
        M(MPI_Comm_rank)(cgroup.comm, &cr);
        exchange(&cgroup, 1 - cr, 1 - cr, 520);
        comm_free(&cgroup);
    }
    M(MPI_Group_free)(&wg);
}

void communicators(void)
{
    struct comm dup1, dup2, split, split3, shared, cart, inter, merged;
    MPI_Comm nc;
    int i, cr, dims[2] = { 2, 2 }, periods[2] = { 1, 0 }, src, dst;
    int v;

    /* Two duplicates of the world: the same members, two communicators;
     * the same tag on each as on the world. */
    M(MPI_Comm_dup)(MPI_COMM_WORLD, &nc);
    created(&dup1, nc, "every.dup1");
    M(MPI_Comm_dup)(MPI_COMM_WORLD, &nc);
    created(&dup2, nc, "every.dup2");
    exchange(&dup1, right, left, 100);
    exchange(&dup2, left, right, 100);
    v = rank;
    M(MPI_Bcast)(&v, 1, MPI_INT, 3, dup1.comm);
    coll(&dup1, "BCAST", 3);
    CHECK(v == 3, "Bcast on dup1: %d", v);
    M(MPI_Allreduce)(&rank, &v, 1, MPI_INT, MPI_SUM, dup2.comm);
    coll(&dup2, "ALLREDUCE", -1);
    CHECK(v == 6, "Allreduce on dup2: %d", v);

    /* Split in two colors, reversed order (key -rank). */
    M(MPI_Comm_split)(MPI_COMM_WORLD, rank % 2, -rank, &nc);
    created(&split, nc, rank % 2 ? "every.split.odd" : "every.split.even");
    M(MPI_Comm_rank)(split.comm, &cr);
    CHECK(split.size == 2 && split.world[cr] == rank && split.world[0] == rank % 2 + 2,
          "split: rank %d of %d, first world %d", cr, split.size, split.world[0]);
    exchange(&split, 1 - cr, 1 - cr, 500);
    v = rank;
    M(MPI_Bcast)(&v, 1, MPI_INT, 1, split.comm);
    coll(&split, "BCAST", 1);
    CHECK(v == rank % 2, "Bcast on split: %d", v);

    /* Split where rank 3 takes no part. */
    M(MPI_Comm_split)(MPI_COMM_WORLD, rank == 3 ? MPI_UNDEFINED : 0, rank, &nc);
    if (rank == 3) {
        CHECK(nc == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
    } else {
        created(&split3, nc, "every.split3");
        M(MPI_Allreduce)(&rank, &v, 1, MPI_INT, MPI_SUM, split3.comm);
        coll(&split3, "ALLREDUCE", -1);
        CHECK(v == 3, "Allreduce on split3: %d", v);
        comm_free(&split3);
    }

    /* The ranks that share memory: all four here. */
    M(MPI_Comm_split_type)(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &nc);
    created(&shared, nc, "every.shared");
    M(MPI_Barrier)(shared.comm);
    coll(&shared, "BARRIER", -1);

    comms_from_groups();

    /* A 2 x 2 torus open in its second dimension: shifts along the first
     * (periodic) and the second (MPI_PROC_NULL at the edges). */
    M(MPI_Cart_create)(MPI_COMM_WORLD, 2, dims, periods, 0, &nc);
    created(&cart, nc, "every.cart");
    M(MPI_Cart_shift)(cart.comm, 0, 1, &src, &dst);
    exchange(&cart, dst, src, 530);
    M(MPI_Cart_shift)(cart.comm, 1, 1, &src, &dst);
    CHECK((src == MPI_PROC_NULL) != (dst == MPI_PROC_NULL), "Cart_shift: %d %d", src, dst);
    exchange(&cart, dst, src, 531);

    /* The two halves of the split joined: leaders are split rank 0 (world
     * 2 and 3); rank I of each side talks to rank I of the other. */
    M(MPI_Intercomm_create)(split.comm, 0, MPI_COMM_WORLD, rank % 2 ? 2 : 3, 1234, &nc);
    created(&inter, nc, "every.inter");
    for (i = 0; i < split.size; i++)
        add(&comms, "%s%d", i ? "," : "", split.world[i]);
    add(&comms, "]]}");
    memcpy(inter.world, split.world, sizeof inter.world);
    CHECK(inter.rsize == 2 && inter.rworld[0] == (rank % 2 ? 2 : 3),
          "inter: remote leader %d", inter.rworld[0]);
    M(MPI_Comm_rank)(inter.comm, &cr);
    exchange(&inter, cr, cr, 540);
    M(MPI_Barrier)(inter.comm);
    coll(&inter, "BARRIER", -1);

    /* Merged: the even side (low) first, each side in its own order. */
    M(MPI_Intercomm_merge)(inter.comm, rank % 2, &nc);
    created(&merged, nc, "every.merged");
    CHECK(merged.world[0] == 2 && merged.world[1] == 0 && merged.world[2] == 3 &&
          merged.world[3] == 1, "merged order %d %d %d %d", merged.world[0],
          merged.world[1], merged.world[2], merged.world[3]);
    M(MPI_Comm_rank)(merged.comm, &cr);
    exchange(&merged, (cr + 1) % 4, (cr + 3) % 4, 550);
    M(MPI_Allreduce)(&rank, &v, 1, MPI_INT, MPI_MAX, merged.comm);
    coll(&merged, "ALLREDUCE", -1);
    CHECK(v == 3, "Allreduce on merged: %d", v);

    comm_free(&merged);
    comm_free(&inter);
    comm_free(&cart);
    comm_free(&shared);
    comm_free(&split);
    comm_free(&dup2);
    comm_free(&dup1);
}

/* ---- one-sided --------------------------------------------------------- */

/* RMA operations not yet completed, per window (0: the world's, 1: the
 * allocated one): each gives RmaOpCompleteBlocking at the window's next
 * synchronisation (fence, unlock, complete). */
static int rma_pending[2];

static void rma_op(const char *kind, enum kind k, int w, const struct comm *c,
                   int target, long bytes)
{
    ev(k, 1);
    rma_pending[w]++;
    ITEM(&rmaops, "[\"%s\",\"%s\",%d,%ld]", kind, c->name, c->world[target], bytes);
}

static void rma_synced(int w)
{
    ev(K_RmaOpCompleteBlocking, rma_pending[w]);
    rma_pending[w] = 0;
}

static void fence(int assert, MPI_Win win)
{
    M(MPI_Win_fence)(assert, win);
    ev(K_RmaCollectiveBegin, 1);
    rma_synced(0);
    ev(K_RmaCollectiveEnd, 1);
}

static void lock(int type, int target, MPI_Win win)
{
    M(MPI_Win_lock)(type, target, 0, win);
    ev(K_RmaAcquireLock, 1);
}

static void unlock(int target, MPI_Win win)
{
    M(MPI_Win_unlock)(target, win);
    rma_synced(1);
    ev(K_RmaReleaseLock, 1);
}

void one_sided(void)
{
    int wbuf[8], *mem = NULL, v, got = -1;
    MPI_Win win1, win2;
    MPI_Group wg, gpost, gstart;
    MPI_Comm nc;
    struct comm rc;

    /* Win_create on the world; fence epochs with Put, Get, Accumulate. */
    memset(wbuf, 0, sizeof wbuf);
    M(MPI_Win_create)(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                      &win1);
    ev(K_RmaWinCreate, 1);
    ITEM(&wins, "\"%s\"", world.name);
    fence(MPI_MODE_NOPRECEDE, win1);
    v = 100 + rank;
    M(MPI_Put)(&v, 1, MPI_INT, right, rank, 1, MPI_INT, win1);
    rma_op("RmaPut", K_RmaPut, 0, &world, right, B(1));
    fence(0, win1);
    CHECK(wbuf[left] == 100 + left, "Put: %d", wbuf[left]);
    M(MPI_Get)(&got, 1, MPI_INT, left, (left + 3) % 4, 1, MPI_INT, win1);
    rma_op("RmaGet", K_RmaGet, 0, &world, left, B(1));
    fence(0, win1);
    CHECK(got == 100 + (left + 3) % 4, "Get: %d", got);
    v = rank + 1;
    M(MPI_Accumulate)(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, MPI_SUM, win1);
    rma_op("RmaAtomic", K_RmaAtomic, 0, &world, 0, B(1));
    fence(MPI_MODE_NOSUCCEED, win1);
    if (rank == 0)
        CHECK(wbuf[4] == 10, "Accumulate: %d", wbuf[4]);

    /* Win_allocate on a communicator of its own; lock epochs. */
    M(MPI_Comm_dup)(MPI_COMM_WORLD, &nc);
    created(&rc, nc, "every.rma");
    M(MPI_Win_allocate)(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, rc.comm, &mem,
                        &win2);
    ev(K_RmaWinCreate, 1);
    ITEM(&wins, "\"%s\"", rc.name);
    lock(MPI_LOCK_EXCLUSIVE, rank, win2);
    memset(mem, 0, 8 * sizeof(int));
    unlock(rank, win2);
    M(MPI_Barrier)(rc.comm);
    coll(&rc, "BARRIER", -1);
    v = 200 + rank;
    lock(MPI_LOCK_EXCLUSIVE, right, win2);
    M(MPI_Put)(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win2);
    rma_op("RmaPut", K_RmaPut, 1, &rc, right, B(1));
    unlock(right, win2);
    M(MPI_Barrier)(rc.comm);
    coll(&rc, "BARRIER", -1);
    lock(MPI_LOCK_SHARED, left, win2);
    M(MPI_Get)(&got, 1, MPI_INT, left, 0, 1, MPI_INT, win2);
    rma_op("RmaGet", K_RmaGet, 1, &rc, left, B(1));
    unlock(left, win2);
    CHECK(got == 200 + (rank + 2) % 4, "Get under lock: %d", got);

    /* Post/start/complete/wait on the world window: I expose to my left
     * and access my right. */
    M(MPI_Comm_group)(MPI_COMM_WORLD, &wg);
    M(MPI_Group_incl)(wg, 1, &left, &gpost);
    M(MPI_Group_incl)(wg, 1, &right, &gstart);
    M(MPI_Win_post)(gpost, 0, win1);
    ev(K_RmaGroupSync, 1);
    M(MPI_Win_start)(gstart, 0, win1);
    ev(K_RmaGroupSync, 1);
    v = 300 + rank;
    M(MPI_Put)(&v, 1, MPI_INT, right, 6, 1, MPI_INT, win1);
    rma_op("RmaPut", K_RmaPut, 0, &world, right, B(1));
    M(MPI_Win_complete)(win1);
    ev(K_RmaGroupSync, 1);
    rma_synced(0);
    M(MPI_Win_wait)(win1);
    ev(K_RmaGroupSync, 1);
    CHECK(wbuf[6] == 300 + left, "Put in post/start: %d", wbuf[6]);
    M(MPI_Group_free)(&gpost);
    M(MPI_Group_free)(&gstart);
    M(MPI_Group_free)(&wg);

    M(MPI_Win_free)(&win2);
    ev(K_RmaWinDestroy, 1);
    M(MPI_Win_free)(&win1);
    ev(K_RmaWinDestroy, 1);
    comm_free(&rc);
}
