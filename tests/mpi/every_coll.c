/* every_coll.c - every.c's collectives, blocking and non-blocking, on
 * any communicator (the world, then the ones every_comm.c makes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "every.h"

/* ---- collectives ------------------------------------------------------- */

/* Alltoallv counts: rank I sends (I + J) % 3 + 1 ints to rank J. */
#define A2AV(i, j) (((i) + (j)) % 3 + 1)

/* Barrier, Bcast, and the gathers and scatters. */
static void collectives_gather(const struct comm *c)
{
    MPI_Comm w = c->comm;
    int s[32], r[32], cnt[NRANKS], dsp[NRANKS];
    int i, j;

    M(MPI_Barrier)(w);
    coll(c, "BARRIER", -1);

    fill(s, 5, rank == 1 ? 700 : -1);
    M(MPI_Bcast)(s, 5, MPI_INT, 1, w);
    coll(c, "BCAST", 1);
    expect_ints(s, 5, 700, "Bcast");

    fill(s, 2, 10 * rank);
    M(MPI_Gather)(s, 2, MPI_INT, r, 2, MPI_INT, 2, w);
    coll(c, "GATHER", 2);
    if (rank == 2)
        for (i = 0; i < size; i++)
            expect_ints(r + 2 * i, 2, 10 * i, "Gather");

    fill(s, rank + 1, 100 * rank);
    for (i = 0, j = 0; i < size; j += i + 1, i++) {
        cnt[i] = i + 1;
        dsp[i] = j;
    }
    M(MPI_Gatherv)(s, rank + 1, MPI_INT, r, cnt, dsp, MPI_INT, 3, w);
    coll(c, "GATHERV", 3);
    if (rank == 3)
        for (i = 0; i < size; i++)
            expect_ints(r + dsp[i], i + 1, 100 * i, "Gatherv");

    if (rank == 1)
        fill(s, 2 * size, 50);
    M(MPI_Scatter)(s, 2, MPI_INT, r, 2, MPI_INT, 1, w);
    coll(c, "SCATTER", 1);
    expect_ints(r, 2, 50 + 2 * rank, "Scatter");

    if (rank == 2)
        fill(s, 10, 60);
    M(MPI_Scatterv)(s, cnt, dsp, MPI_INT, r, rank + 1, MPI_INT, 2, w);
    coll(c, "SCATTERV", 2);
    expect_ints(r, rank + 1, 60 + dsp[rank], "Scatterv");

    s[0] = 7 * rank;
    M(MPI_Allgather)(s, 1, MPI_INT, r, 1, MPI_INT, w);
    coll(c, "ALLGATHER", -1);
    for (i = 0; i < size; i++)
        CHECK(r[i] == 7 * i, "Allgather[%d] = %d", i, r[i]);

    fill(s, rank + 1, 100 * rank);
    M(MPI_Allgatherv)(s, rank + 1, MPI_INT, r, cnt, dsp, MPI_INT, w);
    coll(c, "ALLGATHERV", -1);
    for (i = 0; i < size; i++)
        expect_ints(r + dsp[i], i + 1, 100 * i, "Allgatherv");
}

/* The all-to-alls, reductions and scans. */
static void collectives_reduce(const struct comm *c)
{
    MPI_Comm w = c->comm;
    int s[32], r[32], rcnt[NRANKS], rdsp[NRANKS];
    int i, j, sum;
    MPI_Datatype ty[NRANKS];

    for (i = 0; i < size; i++)
        s[i] = 10 * rank + i;
    M(MPI_Alltoall)(s, 1, MPI_INT, r, 1, MPI_INT, w);
    coll(c, "ALLTOALL", -1);
    for (i = 0; i < size; i++)
        CHECK(r[i] == 10 * i + rank, "Alltoall[%d] = %d", i, r[i]);

    {
        int sc[NRANKS], sd[NRANKS], rc[NRANKS], rd[NRANKS], ns = 0, nr = 0;
        for (i = 0; i < size; i++) {
            sc[i] = A2AV(rank, i);
            sd[i] = ns;
            fill(s + ns, sc[i], 1000 * rank + 10 * i);
            ns += sc[i];
            rc[i] = A2AV(i, rank);
            rd[i] = nr;
            nr += rc[i];
        }
        M(MPI_Alltoallv)(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, w);
        coll(c, "ALLTOALLV", -1);
        for (i = 0; i < size; i++)
            expect_ints(r + rd[i], rc[i], 1000 * i + 10 * rank, "Alltoallv");
    }

    for (i = 0; i < size; i++) {
        s[i] = 20 * rank + i;
        rcnt[i] = 1;
        rdsp[i] = i * (int)sizeof(int);  /* Alltoallw: displacements in bytes */
        ty[i] = MPI_INT;
    }
    M(MPI_Alltoallw)(s, rcnt, rdsp, ty, r, rcnt, rdsp, ty, w);
    coll(c, "ALLTOALLW", -1);
    for (i = 0; i < size; i++)
        CHECK(r[i] == 20 * i + rank, "Alltoallw[%d] = %d", i, r[i]);

    s[0] = rank + 1;
    s[1] = 2;
    M(MPI_Reduce)(s, r, 2, MPI_INT, MPI_SUM, 3, w);
    coll(c, "REDUCE", 3);
    if (rank == 3)
        CHECK(r[0] == size * (size + 1) / 2 && r[1] == 2 * size, "Reduce: %d %d",
              r[0], r[1]);

    s[0] = 3 * rank;
    M(MPI_Allreduce)(s, r, 1, MPI_INT, MPI_MAX, w);
    coll(c, "ALLREDUCE", -1);
    CHECK(r[0] == 3 * (size - 1), "Allreduce = %d", r[0]);

    /* Reduce_scatter: rank I gets I % 2 + 1 elements of the sum. */
    for (i = 0, sum = 0; i < size; i++) {
        rcnt[i] = i % 2 + 1;
        sum += rcnt[i];
    }
    fill(s, sum, rank);
    M(MPI_Reduce_scatter)(s, r, rcnt, MPI_INT, MPI_SUM, w);
    coll(c, "REDUCE_SCATTER", -1);
    for (i = 0, j = 0; i < rank; i++)
        j += rcnt[i];
    for (i = 0; i < rcnt[rank]; i++)
        CHECK(r[i] == size * (j + i) + size * (size - 1) / 2,
              "Reduce_scatter[%d] = %d", i, r[i]);

    fill(s, 2 * size, rank);
    M(MPI_Reduce_scatter_block)(s, r, 2, MPI_INT, MPI_SUM, w);
    coll(c, "REDUCE_SCATTER_BLOCK", -1);
    for (i = 0; i < 2; i++)
        CHECK(r[i] == size * (2 * rank + i) + size * (size - 1) / 2,
              "Reduce_scatter_block[%d] = %d", i, r[i]);

    s[0] = rank + 1;
    M(MPI_Scan)(s, r, 1, MPI_INT, MPI_SUM, w);
    coll(c, "SCAN", -1);
    CHECK(r[0] == (rank + 1) * (rank + 2) / 2, "Scan = %d", r[0]);

    M(MPI_Exscan)(s, r, 1, MPI_INT, MPI_SUM, w);
    coll(c, "EXSCAN", -1);
    if (rank > 0)
        CHECK(r[0] == rank * (rank + 1) / 2, "Exscan = %d", r[0]);
}

void collectives_blocking(const struct comm *c)
{
    collectives_gather(c);
    collectives_reduce(c);
}

/* Every non-blocking collective at once (nbc_issue), completed by Wait,
 * a Test loop, Waitany, Waitsome, a Testall loop and Waitall
 * (nbc_complete), then each one's result checked (nbc_check). */
struct nbc {
    struct reqset rs;
    int s[17][32], r[17][32];
    int cnt[NRANKS], dsp[NRANKS];     /* (all)gatherv, scatterv */
    int sc[NRANKS], sd[NRANKS], rc[NRANKS], rd[NRANKS]; /* alltoallv */
    int wc[NRANKS], wd[NRANKS];       /* alltoallw */
    MPI_Datatype ty[NRANKS];
    int rsc[NRANKS], sum;             /* reduce_scatter */
};

static void nbc_init(struct nbc *n)
{
    int *cnt = n->cnt, *dsp = n->dsp, *sc = n->sc, *sd = n->sd;
    int *rc = n->rc, *rd = n->rd, *wc = n->wc, *wd = n->wd, *rsc = n->rsc;
    MPI_Datatype *ty = n->ty;
    int i, ns = 0, nr = 0, sum = 0;

    memset(n, 0, sizeof *n);
    for (i = 0; i < size; i++) {
        cnt[i] = i + 1;
        dsp[i] = i * (i + 1) / 2;
        sc[i] = A2AV(rank, i);
        sd[i] = ns;
        ns += sc[i];
        rc[i] = A2AV(i, rank);
        rd[i] = nr;
        nr += rc[i];
        wc[i] = 1;
        wd[i] = i * (int)sizeof(int);
        ty[i] = MPI_INT;
        rsc[i] = i % 2 + 1;
        sum += rsc[i];
    }
    n->sum = sum;
}

/* Requests 0 to 7: the barrier, rooted collectives and allgathers. */
static void nbc_issue_gathers(struct nbc *n, const struct comm *c)
{
    MPI_Comm w = c->comm;
    struct reqset *rs = &n->rs;
    int *cnt = n->cnt, *dsp = n->dsp;
    int (*s)[32] = n->s, (*r)[32] = n->r;

    rs_coll(rs, c, "BARRIER", -1);
    M(MPI_Ibarrier)(w, &rs->req[0]);
    rs_issued(rs, 0);
    fill(r[1], 4, rank == 2 ? 900 : -1);
    rs_coll(rs, c, "BCAST", 2);
    M(MPI_Ibcast)(r[1], 4, MPI_INT, 2, w, &rs->req[1]);
    rs_issued(rs, 1);
    fill(s[2], 3, 30 * rank);
    rs_coll(rs, c, "GATHER", 1);
    M(MPI_Igather)(s[2], 3, MPI_INT, r[2], 3, MPI_INT, 1, w, &rs->req[2]);
    rs_issued(rs, 2);
    fill(s[3], rank + 1, 40 * rank);
    rs_coll(rs, c, "GATHERV", 0);
    M(MPI_Igatherv)(s[3], rank + 1, MPI_INT, r[3], cnt, dsp, MPI_INT, 0, w, &rs->req[3]);
    rs_issued(rs, 3);
    fill(s[4], 2 * size, 500);
    rs_coll(rs, c, "SCATTER", 3);
    M(MPI_Iscatter)(s[4], 2, MPI_INT, r[4], 2, MPI_INT, 3, w, &rs->req[4]);
    rs_issued(rs, 4);
    fill(s[5], 10, 600);
    rs_coll(rs, c, "SCATTERV", 1);
    M(MPI_Iscatterv)(s[5], cnt, dsp, MPI_INT, r[5], rank + 1, MPI_INT, 1, w, &rs->req[5]);
    rs_issued(rs, 5);
    s[6][0] = 11 * rank;
    rs_coll(rs, c, "ALLGATHER", -1);
    M(MPI_Iallgather)(s[6], 1, MPI_INT, r[6], 1, MPI_INT, w, &rs->req[6]);
    rs_issued(rs, 6);
    fill(s[7], rank + 1, 70 * rank);
    rs_coll(rs, c, "ALLGATHERV", -1);
    M(MPI_Iallgatherv)(s[7], rank + 1, MPI_INT, r[7], cnt, dsp, MPI_INT, w, &rs->req[7]);
    rs_issued(rs, 7);
}

/* Requests 8 to 16: the all-to-alls, reductions and scans. */
static void nbc_issue_reductions(struct nbc *n, const struct comm *c)
{
    MPI_Comm w = c->comm;
    struct reqset *rs = &n->rs;
    int *sc = n->sc, *sd = n->sd, *rc = n->rc, *rd = n->rd;
    int *wc = n->wc, *wd = n->wd, *rsc = n->rsc;
    MPI_Datatype *ty = n->ty;
    int (*s)[32] = n->s, (*r)[32] = n->r;
    int i;

    for (i = 0; i < size; i++)
        s[8][i] = 100 * rank + i;
    rs_coll(rs, c, "ALLTOALL", -1);
    M(MPI_Ialltoall)(s[8], 1, MPI_INT, r[8], 1, MPI_INT, w, &rs->req[8]);
    rs_issued(rs, 8);
    for (i = 0; i < size; i++)
        fill(s[9] + sd[i], sc[i], 1000 * rank + 10 * i);
    rs_coll(rs, c, "ALLTOALLV", -1);
    M(MPI_Ialltoallv)(s[9], sc, sd, MPI_INT, r[9], rc, rd, MPI_INT, w, &rs->req[9]);
    rs_issued(rs, 9);
    for (i = 0; i < size; i++)
        s[10][i] = 200 * rank + i;
    rs_coll(rs, c, "ALLTOALLW", -1);
    M(MPI_Ialltoallw)(s[10], wc, wd, ty, r[10], wc, wd, ty, w, &rs->req[10]);
    rs_issued(rs, 10);
    s[11][0] = rank + 10;
    rs_coll(rs, c, "REDUCE", 2);
    M(MPI_Ireduce)(s[11], r[11], 1, MPI_INT, MPI_SUM, 2, w, &rs->req[11]);
    rs_issued(rs, 11);
    s[12][0] = rank;
    rs_coll(rs, c, "ALLREDUCE", -1);
    M(MPI_Iallreduce)(s[12], r[12], 1, MPI_INT, MPI_MIN, w, &rs->req[12]);
    rs_issued(rs, 12);
    fill(s[13], n->sum, 2 * rank);
    rs_coll(rs, c, "REDUCE_SCATTER", -1);
    M(MPI_Ireduce_scatter)(s[13], r[13], rsc, MPI_INT, MPI_SUM, w, &rs->req[13]);
    rs_issued(rs, 13);
    fill(s[14], size, rank);
    rs_coll(rs, c, "REDUCE_SCATTER_BLOCK", -1);
    M(MPI_Ireduce_scatter_block)(s[14], r[14], 1, MPI_INT, MPI_SUM, w, &rs->req[14]);
    rs_issued(rs, 14);
    s[15][0] = rank + 1;
    rs_coll(rs, c, "SCAN", -1);
    M(MPI_Iscan)(s[15], r[15], 1, MPI_INT, MPI_PROD, w, &rs->req[15]);
    rs_issued(rs, 15);
    s[16][0] = rank + 1;
    rs_coll(rs, c, "EXSCAN", -1);
    M(MPI_Iexscan)(s[16], r[16], 1, MPI_INT, MPI_SUM, w, &rs->req[16]);
    rs_issued(rs, 16);
}

static void nbc_complete(struct nbc *n)
{
    struct reqset *rs = &n->rs;
    int k, flag, idx, out, idxs[MAXREQ];
    MPI_Status sts[MAXREQ];

    M(MPI_Wait)(&rs->req[0], MPI_STATUS_IGNORE);
    rs_done(rs, 0, NULL, 0);
    do {
        M(MPI_Test)(&rs->req[1], &flag, MPI_STATUS_IGNORE);
        if (flag)
            rs_done(rs, 1, NULL, 0);
        rs_untested(rs, 1, 2);
    } while (!flag);
    for (k = 0; k < 3; k++) {
        M(MPI_Waitany)(3, rs->req + 2, &idx, MPI_STATUS_IGNORE);
        CHECK(idx >= 0 && idx < 3, "Waitany index %d", idx);
        rs_done(rs, 2 + idx, NULL, 0);
    }
    while (rs_active(rs, 5, 9)) {
        M(MPI_Waitsome)(4, rs->req + 5, &out, idxs, sts);
        CHECK(out >= 1 && out <= 4, "Waitsome outcount %d", out);
        for (k = 0; k < out; k++)
            rs_done(rs, 5 + idxs[k], NULL, 0);
    }
    do {
        M(MPI_Testall)(2, rs->req + 9, &flag, statuses_ignore);
        if (flag) {
            rs_done(rs, 9, NULL, 0);
            rs_done(rs, 10, NULL, 0);
        }
        rs_untested(rs, 9, 11);
    } while (!flag);
    M(MPI_Waitall)(6, rs->req + 11, sts);
    for (k = 11; k < 17; k++)
        rs_done(rs, k, NULL, 0);
}

static void nbc_check(const struct nbc *n)
{
    const int (*r)[32] = n->r;
    const int *dsp = n->dsp, *rc = n->rc, *rd = n->rd, *rsc = n->rsc;
    int i, k;

    expect_ints(r[1], 4, 900, "Ibcast");
    if (rank == 1)
        for (i = 0; i < size; i++)
            expect_ints(r[2] + 3 * i, 3, 30 * i, "Igather");
    if (rank == 0)
        for (i = 0; i < size; i++)
            expect_ints(r[3] + dsp[i], i + 1, 40 * i, "Igatherv");
    expect_ints(r[4], 2, 500 + 2 * rank, "Iscatter");
    expect_ints(r[5], rank + 1, 600 + dsp[rank], "Iscatterv");
    for (i = 0; i < size; i++) {
        CHECK(r[6][i] == 11 * i, "Iallgather[%d] = %d", i, r[6][i]);
        expect_ints(r[7] + dsp[i], i + 1, 70 * i, "Iallgatherv");
        CHECK(r[8][i] == 100 * i + rank, "Ialltoall[%d] = %d", i, r[8][i]);
        expect_ints(r[9] + rd[i], rc[i], 1000 * i + 10 * rank, "Ialltoallv");
        CHECK(r[10][i] == 200 * i + rank, "Ialltoallw[%d] = %d", i, r[10][i]);
    }
    if (rank == 2)
        CHECK(r[11][0] == size * 10 + size * (size - 1) / 2, "Ireduce = %d", r[11][0]);
    CHECK(r[12][0] == 0, "Iallreduce = %d", r[12][0]);
    for (i = 0, k = 0; i < rank; i++)
        k += rsc[i];
    for (i = 0; i < rsc[rank]; i++)
        CHECK(r[13][i] == size * (k + i) + size * (size - 1),
              "Ireduce_scatter[%d] = %d", i, r[13][i]);
    CHECK(r[14][0] == size * rank + size * (size - 1) / 2, "Ireduce_scatter_block = %d",
          r[14][0]);
    for (i = 1, k = 1; i <= rank + 1; i++)
        k *= i;
    CHECK(r[15][0] == k, "Iscan = %d, expected %d", r[15][0], k);
    if (rank > 0)
        CHECK(r[16][0] == rank * (rank + 1) / 2, "Iexscan = %d", r[16][0]);
}

void collectives_nonblocking(const struct comm *c)
{
    static struct nbc n;

    nbc_init(&n);
    nbc_issue_gathers(&n, c);
    nbc_issue_reductions(&n, c);
    nbc_complete(&n);
    nbc_check(&n);
}
