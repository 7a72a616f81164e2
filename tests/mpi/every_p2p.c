/* every_p2p.c - every.c's point-to-point calls: blocking, non-blocking
 * (each Wait* and Test*), persistent requests and cancel. every.h says
 * how a call and what it records are counted. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "every.h"

/* ---- blocking point-to-point ------------------------------------------ */

/* Send, Bsend, Ssend and Rsend, each received by Recv. */
static void p2p_sends(void)
{
    int s[16], r[16];
    MPI_Status st;

    /* Send around the ring; Recv with ANY_SOURCE/ANY_TAG into a buffer
     * larger than the message (the trace has the received size). */
    fill(s, 10, 1000 * rank);
    memset(r, 0, sizeof r);
    if (rank % 2 == 0) {
        M(MPI_Send)(s, 10, MPI_INT, right, 100 + rank, MPI_COMM_WORLD);
        sent(&world, right, 100 + rank, B(10), K_MpiSend);
    }
    M(MPI_Recv)(r, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    received(&world, st.MPI_SOURCE, st.MPI_TAG, B(10), K_MpiRecv);
    check_status(&st, left, 100 + left, B(10));
    expect_ints(r, 10, 1000 * left, "Send/Recv(ANY)");
    if (rank % 2 == 1) {
        M(MPI_Send)(s, 10, MPI_INT, right, 100 + rank, MPI_COMM_WORLD);
        sent(&world, right, 100 + rank, B(10), K_MpiSend);
    }
    /* Nothing else may be sent to a rank before its ANY_SOURCE receive. */
    M(MPI_Barrier)(MPI_COMM_WORLD);
    coll(&world, "BARRIER", -1);

    /* Bsend (the buffer is attached in main) with the partner. */
    fill(s, 4, 2000 + rank);
    M(MPI_Bsend)(s, 4, MPI_INT, partner, 200, MPI_COMM_WORLD);
    sent(&world, partner, 200, B(4), K_MpiSend);
    M(MPI_Recv)(r, 4, MPI_INT, partner, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    received(&world, partner, 200, B(4), K_MpiRecv);
    expect_ints(r, 4, 2000 + partner, "Bsend");

    /* Ssend: the lower of the pair sends first. */
    fill(s, 3, 3000 + rank);
    if (rank < partner) {
        M(MPI_Ssend)(s, 3, MPI_INT, partner, 210, MPI_COMM_WORLD);
        sent(&world, partner, 210, B(3), K_MpiSend);
    }
    M(MPI_Recv)(r, 3, MPI_INT, partner, 210, MPI_COMM_WORLD, &st);
    received(&world, partner, 210, B(3), K_MpiRecv);
    check_status(&st, partner, 210, B(3));
    if (rank > partner) {
        M(MPI_Ssend)(s, 3, MPI_INT, partner, 210, MPI_COMM_WORLD);
        sent(&world, partner, 210, B(3), K_MpiSend);
    }
    expect_ints(r, 3, 3000 + partner, "Ssend");

    /* Rsend to a receive posted before the barrier. */
    {
        struct reqset rs = { .n = 0 };
        int i = rs_recv(&rs, &world, left, 220, B(5), 0);
        M(MPI_Irecv)(r, 5, MPI_INT, left, 220, MPI_COMM_WORLD, &rs.req[i]);
        rs_issued(&rs, i);
        M(MPI_Barrier)(MPI_COMM_WORLD);
        coll(&world, "BARRIER", -1);
        fill(s, 5, 4000 + rank);
        M(MPI_Rsend)(s, 5, MPI_INT, right, 220, MPI_COMM_WORLD);
        sent(&world, right, 220, B(5), K_MpiSend);
        M(MPI_Wait)(&rs.req[i], &st);
        rs_done(&rs, i, &st, 0);
        expect_ints(r, 5, 4000 + left, "Rsend");
    }
}

/* Sendrecv (of a derived type, of no bytes), Sendrecv_replace, and
 * MPI_PROC_NULL as a peer. */
static void p2p_sendrecv(void)
{
    int s[16], r[16], n;
    double ds[3], dr[3];
    MPI_Status st;
    MPI_Datatype triple;

    /* Sendrecv: right; of a derived type (2 x 3 ints = 24 bytes), received
     * as 6 ints into a larger buffer. */
    memset(r, 0, sizeof r);
    M(MPI_Type_contiguous)(3, MPI_INT, &triple);
    M(MPI_Type_commit)(&triple);
    fill(s, 6, 5000 + rank);
    M(MPI_Sendrecv)(s, 2, triple, right, 230, r, 16, MPI_INT, left, 230,
                    MPI_COMM_WORLD, &st);
    sent(&world, right, 230, B(6), K_MpiSend);
    received(&world, left, 230, B(6), K_MpiRecv);
    check_status(&st, left, 230, B(6));
    expect_ints(r, 6, 5000 + left, "Sendrecv");
    M(MPI_Type_free)(&triple);

    /* Sendrecv_replace: left, doubles. */
    ds[0] = rank + 0.5; ds[1] = rank + 0.25; ds[2] = -rank;
    memcpy(dr, ds, sizeof dr);
    M(MPI_Sendrecv_replace)(dr, 3, MPI_DOUBLE, left, 240, right, 240,
                            MPI_COMM_WORLD, &st);
    sent(&world, left, 240, 3 * (long)sizeof(double), K_MpiSend);
    received(&world, right, 240, 3 * (long)sizeof(double), K_MpiRecv);
    CHECK(st.MPI_SOURCE == right && dr[0] == right + 0.5 && dr[2] == -right,
          "Sendrecv_replace got %g from %d", dr[0], st.MPI_SOURCE);

    /* A message of no bytes. */
    M(MPI_Sendrecv)(s, 0, MPI_INT, right, 250, r, 0, MPI_INT, left, 250,
                    MPI_COMM_WORLD, &st);
    sent(&world, right, 250, 0, K_MpiSend);
    received(&world, left, 250, 0, K_MpiRecv);
    check_status(&st, left, 250, 0);

    /* MPI_PROC_NULL: the regions, no message events. */
    M(MPI_Send)(s, 4, MPI_INT, MPI_PROC_NULL, 260, MPI_COMM_WORLD);
    M(MPI_Recv)(r, 4, MPI_INT, MPI_PROC_NULL, 260, MPI_COMM_WORLD, &st);
    M(MPI_Get_count)(&st, MPI_INT, &n);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && n == 0, "Recv from MPI_PROC_NULL: "
          "source %d, count %d", st.MPI_SOURCE, n);
}

void p2p_blocking(void)
{
    p2p_sends();
    p2p_sendrecv();
}

/* ---- non-blocking point-to-point -------------------------------------- */

/* Isend, Ibsend, Issend and Irsend, completed by each Wait*. */
static void p2p_wait(void)
{
    struct reqset rs;
    int s[8][8], r[8][8], i, j, k, idx, out, idxs[MAXREQ];
    MPI_Status st, sts[MAXREQ];

    for (i = 0; i < 8; i++)
        fill(s[i], 8, 10000 * (i + 1) + 100 * rank);
    memset(r, 0, sizeof r);

    /* Irecv and Isend, each completed by Wait. */
    rs.n = 0;
    i = rs_recv(&rs, &world, left, 300, B(8), 0);
    M(MPI_Irecv)(r[0], 8, MPI_INT, left, 300, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    j = rs_send(&rs, &world, right, 300, B(8), 0);
    M(MPI_Isend)(s[0], 8, MPI_INT, right, 300, MPI_COMM_WORLD, &rs.req[j]);
    rs_issued(&rs, j);
    M(MPI_Wait)(&rs.req[i], &st);
    rs_done(&rs, i, &st, 0);
    M(MPI_Wait)(&rs.req[j], MPI_STATUS_IGNORE);
    rs_done(&rs, j, NULL, 0);
    expect_ints(r[0], 8, 10000 + 100 * left, "Isend/Wait");

    /* Ibsend with the partner, Waitany twice. */
    rs.n = 0;
    i = rs_recv(&rs, &world, partner, 310, B(6), 0);
    M(MPI_Irecv)(r[1], 6, MPI_INT, partner, 310, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    j = rs_send(&rs, &world, partner, 310, B(6), 0);
    M(MPI_Ibsend)(s[1], 6, MPI_INT, partner, 310, MPI_COMM_WORLD, &rs.req[j]);
    rs_issued(&rs, j);
    for (k = 0; k < 2; k++) {
        M(MPI_Waitany)(2, rs.req, &idx, &st);
        CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
        rs_done(&rs, idx, idx == i ? &st : NULL, 0);
    }
    expect_ints(r[1], 6, 20000 + 100 * partner, "Ibsend/Waitany");

    /* Issend, Waitsome until both are done. */
    rs.n = 0;
    i = rs_recv(&rs, &world, left, 320, B(7), 0);
    M(MPI_Irecv)(r[2], 7, MPI_INT, left, 320, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    j = rs_send(&rs, &world, right, 320, B(7), 0);
    M(MPI_Issend)(s[2], 7, MPI_INT, right, 320, MPI_COMM_WORLD, &rs.req[j]);
    rs_issued(&rs, j);
    while (rs_active(&rs, 0, 2)) {
        M(MPI_Waitsome)(2, rs.req, &out, idxs, sts);
        CHECK(out >= 1 && out <= 2, "Waitsome outcount %d", out);
        for (k = 0; k < out; k++)
            rs_done(&rs, idxs[k], &sts[k], 0);
    }
    expect_ints(r[2], 7, 30000 + 100 * left, "Issend/Waitsome");

    /* Irsend to a receive posted before the barrier, Waitall. */
    rs.n = 0;
    i = rs_recv(&rs, &world, left, 330, B(5), 0);
    M(MPI_Irecv)(r[3], 5, MPI_INT, left, 330, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    M(MPI_Barrier)(MPI_COMM_WORLD);
    coll(&world, "BARRIER", -1);
    j = rs_send(&rs, &world, right, 330, B(5), 0);
    M(MPI_Irsend)(s[3], 5, MPI_INT, right, 330, MPI_COMM_WORLD, &rs.req[j]);
    rs_issued(&rs, j);
    M(MPI_Waitall)(2, rs.req, statuses_ignore);
    rs_done(&rs, i, NULL, 0);
    rs_done(&rs, j, NULL, 0);
    expect_ints(r[3], 5, 40000 + 100 * left, "Irsend/Waitall");
}

/* Test and Testany: a receive cannot complete before the barrier that
 * lets its sender send. */
static void p2p_test(void)
{
    struct reqset rs;
    int s[8][8], r[8][8], i, j, k, flag, idx;
    MPI_Status st;

    for (i = 0; i < 8; i++)
        fill(s[i], 8, 10000 * (i + 1) + 100 * rank);
    memset(r, 0, sizeof r);

    /* Test: the receive cannot be complete before the barrier, because its
     * sender sends only after it. */
    rs.n = 0;
    i = rs_recv(&rs, &world, left, 340, B(8), 0);
    M(MPI_Irecv)(r[4], 8, MPI_INT, left, 340, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    M(MPI_Test)(&rs.req[i], &flag, &st);
    CHECK(!flag, "Test completed a receive whose sender has not sent");
    rs_untested(&rs, i, i + 1);
    M(MPI_Barrier)(MPI_COMM_WORLD);
    coll(&world, "BARRIER", -1);
    j = rs_send(&rs, &world, right, 340, B(8), 0);
    M(MPI_Isend)(s[4], 8, MPI_INT, right, 340, MPI_COMM_WORLD, &rs.req[j]);
    rs_issued(&rs, j);
    for (k = i; k <= j; k++) {
        do {
            M(MPI_Test)(&rs.req[k], &flag, &st);
            if (flag)
                rs_done(&rs, k, k == i ? &st : NULL, 0);
            rs_untested(&rs, k, k + 1);
        } while (!flag);
    }
    expect_ints(r[4], 8, 50000 + 100 * left, "Test");

    /* Testany: two receives, none can be complete before the barrier. */
    rs.n = 0;
    i = rs_recv(&rs, &world, left, 350, B(4), 0);
    M(MPI_Irecv)(r[5], 4, MPI_INT, left, 350, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    j = rs_recv(&rs, &world, right, 351, B(4), 0);
    M(MPI_Irecv)(r[6], 4, MPI_INT, right, 351, MPI_COMM_WORLD, &rs.req[j]);
    rs_issued(&rs, j);
    M(MPI_Testany)(2, rs.req, &idx, &flag, &st);
    CHECK(!flag && idx == MPI_UNDEFINED, "Testany completed request %d early", idx);
    rs_untested(&rs, 0, 2);
    M(MPI_Barrier)(MPI_COMM_WORLD);
    coll(&world, "BARRIER", -1);
    M(MPI_Send)(s[5], 4, MPI_INT, right, 350, MPI_COMM_WORLD);
    sent(&world, right, 350, B(4), K_MpiSend);
    M(MPI_Send)(s[6], 4, MPI_INT, left, 351, MPI_COMM_WORLD);
    sent(&world, left, 351, B(4), K_MpiSend);
    while (rs_active(&rs, 0, 2)) {
        M(MPI_Testany)(2, rs.req, &idx, &flag, &st);
        if (flag) {
            CHECK(idx == 0 || idx == 1, "Testany index %d", idx);
            rs_done(&rs, idx, &st, 0);
        }
        rs_untested(&rs, 0, 2);
    }
    expect_ints(r[5], 4, 60000 + 100 * left, "Testany left");
    expect_ints(r[6], 4, 70000 + 100 * right, "Testany right");
}

/* Testsome and Testall, the same way. */
static void p2p_test_some(void)
{
    struct reqset rs;
    int s[8][8], r[8][8], i, k, flag, out, idxs[MAXREQ];
    MPI_Status sts[MAXREQ];

    for (i = 0; i < 8; i++)
        fill(s[i], 8, 10000 * (i + 1) + 100 * rank);
    memset(r, 0, sizeof r);

    /* Testsome: two receives before the barrier, two sends after it. */
    rs.n = 0;
    rs_recv(&rs, &world, left, 360, B(3), 0);
    M(MPI_Irecv)(r[0], 3, MPI_INT, left, 360, MPI_COMM_WORLD, &rs.req[0]);
    rs_issued(&rs, 0);
    rs_recv(&rs, &world, right, 361, B(3), 0);
    M(MPI_Irecv)(r[1], 3, MPI_INT, right, 361, MPI_COMM_WORLD, &rs.req[1]);
    rs_issued(&rs, 1);
    M(MPI_Testsome)(2, rs.req, &out, idxs, sts);
    CHECK(out == 0, "Testsome completed %d requests early", out);
    rs_untested(&rs, 0, 2);
    M(MPI_Barrier)(MPI_COMM_WORLD);
    coll(&world, "BARRIER", -1);
    rs_send(&rs, &world, right, 360, B(3), 0);
    M(MPI_Isend)(s[0], 3, MPI_INT, right, 360, MPI_COMM_WORLD, &rs.req[2]);
    rs_issued(&rs, 2);
    rs_send(&rs, &world, left, 361, B(3), 0);
    M(MPI_Isend)(s[1], 3, MPI_INT, left, 361, MPI_COMM_WORLD, &rs.req[3]);
    rs_issued(&rs, 3);
    while (rs_active(&rs, 0, 4)) {
        M(MPI_Testsome)(4, rs.req, &out, idxs, sts);
        CHECK(out >= 0 && out <= 4, "Testsome outcount %d", out);
        for (k = 0; k < out; k++)
            rs_done(&rs, idxs[k], rs.r[idxs[k]].kind == R_RECV ? &sts[k] : NULL, 0);
        rs_untested(&rs, 0, 4);
    }
    expect_ints(r[0], 3, 10000 + 100 * left, "Testsome left");
    expect_ints(r[1], 3, 20000 + 100 * right, "Testsome right");

    /* Testall: one receive before the barrier (fails), then with a send. */
    rs.n = 0;
    rs_recv(&rs, &world, left, 370, B(2), 0);
    M(MPI_Irecv)(r[2], 2, MPI_INT, left, 370, MPI_COMM_WORLD, &rs.req[0]);
    rs_issued(&rs, 0);
    M(MPI_Testall)(1, rs.req, &flag, sts);
    CHECK(!flag, "Testall completed a receive whose sender has not sent");
    rs_untested(&rs, 0, 1);
    M(MPI_Barrier)(MPI_COMM_WORLD);
    coll(&world, "BARRIER", -1);
    rs_send(&rs, &world, right, 370, B(2), 0);
    M(MPI_Isend)(s[2], 2, MPI_INT, right, 370, MPI_COMM_WORLD, &rs.req[1]);
    rs_issued(&rs, 1);
    do {
        M(MPI_Testall)(2, rs.req, &flag, sts);
        if (flag) {
            rs_done(&rs, 0, &sts[0], 0);
            rs_done(&rs, 1, NULL, 0);
        }
        rs_untested(&rs, 0, 2);
    } while (!flag);
    expect_ints(r[2], 2, 30000 + 100 * left, "Testall");
}

void p2p_nonblocking(void)
{
    p2p_wait();
    p2p_test();
    p2p_test_some();
}

/* ---- persistent requests and cancel ----------------------------------- */

void p2p_persistent(void)
{
    struct reqset rs = { .n = 0 };
    int s[4][4], r[4][4], i, round, flag;
    MPI_Status st;

    /* Receives 0-3, sends 4-7 (Send, Ssend, Bsend, Rsend), tags 400-403. */
    for (i = 0; i < 4; i++) {
        rs_recv(&rs, &world, left, 400 + i, B(4), 1);
        M(MPI_Recv_init)(r[i], 4, MPI_INT, left, 400 + i, MPI_COMM_WORLD, &rs.req[i]);
    }
    rs_send(&rs, &world, right, 400, B(4), 1);
    M(MPI_Send_init)(s[0], 4, MPI_INT, right, 400, MPI_COMM_WORLD, &rs.req[4]);
    rs_send(&rs, &world, right, 401, B(4), 1);
    M(MPI_Ssend_init)(s[1], 4, MPI_INT, right, 401, MPI_COMM_WORLD, &rs.req[5]);
    rs_send(&rs, &world, right, 402, B(4), 1);
    M(MPI_Bsend_init)(s[2], 4, MPI_INT, right, 402, MPI_COMM_WORLD, &rs.req[6]);
    rs_send(&rs, &world, right, 403, B(4), 1);
    M(MPI_Rsend_init)(s[3], 4, MPI_INT, right, 403, MPI_COMM_WORLD, &rs.req[7]);

    for (round = 0; round < 2; round++) {
        for (i = 0; i < 4; i++)
            fill(s[i], 4, 100000 * (round + 1) + 1000 * i + 10 * rank);
        memset(r, 0, sizeof r);
        if (round == 0) {
            for (i = 0; i < 4; i++) {
                M(MPI_Start)(&rs.req[i]);
                rs_issued(&rs, i);
            }
        } else {
            M(MPI_Startall)(4, rs.req);
            for (i = 0; i < 4; i++)
                rs_issued(&rs, i);
        }
        /* The receives are posted everywhere: Rsend is correct. */
        M(MPI_Barrier)(MPI_COMM_WORLD);
        coll(&world, "BARRIER", -1);
        if (round == 0) {
            for (i = 4; i < 8; i++) {
                M(MPI_Start)(&rs.req[i]);
                rs_issued(&rs, i);
            }
            for (i = 0; i < 8; i++) {
                M(MPI_Wait)(&rs.req[i], &st);
                rs_done(&rs, i, i < 4 ? &st : NULL, 0);
            }
        } else {
            M(MPI_Startall)(4, rs.req + 4);
            for (i = 4; i < 8; i++)
                rs_issued(&rs, i);
            M(MPI_Waitall)(8, rs.req, statuses_ignore);
            for (i = 0; i < 8; i++)
                rs_done(&rs, i, NULL, 0);
        }
        for (i = 0; i < 4; i++)
            expect_ints(r[i], 4, 100000 * (round + 1) + 1000 * i + 10 * left,
                        "persistent");
    }
    for (i = 0; i < 8; i++) {
        M(MPI_Request_free)(&rs.req[i]);
        CHECK(rs.req[i] == MPI_REQUEST_NULL, "Request_free left a handle");
    }

    /* Cancel of a receive nothing will match. */
    rs.n = 0;
    i = rs_recv(&rs, &world, left, 999, B(4), 0);
    M(MPI_Irecv)(r[0], 4, MPI_INT, left, 999, MPI_COMM_WORLD, &rs.req[i]);
    rs_issued(&rs, i);
    M(MPI_Cancel)(&rs.req[i]);
    M(MPI_Wait)(&rs.req[i], &st);
    rs_done(&rs, i, NULL, 1);
    M(MPI_Test_cancelled)(&st, &flag);
    CHECK(flag, "the receive was not cancelled");
}
