/* every.c - an ordinary MPI-3 program (4 ranks) that calls every MPI
 * function of libweft-mpi's contract at least once (notes: mpi-spec.md)
 * with real data movement, checks every result (a wrong one aborts with
 * status 1), and writes, per rank, what a trace of it must hold:
 * $WEFT_TEST_EXPECT_DIR/rank-N.json (nothing is written without that
 * variable). It links nothing of weft: libweft-mpi is preloaded, or not.
 *
 * DESIGN. Every MPI call goes through M(MPI_X)(...), which counts the
 * call (the trace's visits of region "MPI_X"). What the contract says a
 * call records is counted next to the call: ev() for plain events, and
 * the helpers below for the events whose fields the checker compares
 * (messages with their world peer, tag and bytes; collectives with op and
 * root; RMA operations). Requests live in a reqset, parallel arrays of
 * MPI_Request and what the program knows of each, so that any Wait* or
 * Test* can turn its outcome into the completion events of the contract
 * (and MpiRequestTest for each tracked request a Test* leaves incomplete,
 * read literally: also those a Testany or Testsome that completed others
 * leaves active; rs_untested). Events are counted right after the call
 * that causes them, before the next MPI call: the per-call log in the
 * expectation relies on it.
 * Communicators are named with MPI_Comm_set_name ("every.*") and listed
 * in the order this rank created them (its CommCreate events), which is
 * how the checker finds them in the archive; each one's members (world
 * ranks in communicator order) come from an Allgather over it, which is
 * also its first traffic. Nothing depends on timing: a Test that must
 * find a receive incomplete runs before the barrier that lets its sender
 * send, and loops of Test/Waitsome count their own calls.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NRANKS 4

/* ---- what the trace must hold --------------------------------------- */

#define KINDS(X) X(ProgramBegin) X(ProgramEnd) X(MpiSend) X(MpiRecv) \
    X(MpiIsend) X(MpiIsendComplete) X(MpiIrecvRequest) X(MpiIrecv) \
    X(MpiRequestTest) X(MpiRequestCancelled) X(MpiCollectiveBegin) \
    X(MpiCollectiveEnd) X(NonBlockingCollectiveRequest) \
    X(NonBlockingCollectiveComplete) X(CommCreate) X(CommDestroy) \
    X(RmaWinCreate) X(RmaWinDestroy) X(RmaPut) X(RmaGet) X(RmaAtomic) \
    X(RmaOpCompleteBlocking) X(RmaCollectiveBegin) X(RmaCollectiveEnd) \
    X(RmaAcquireLock) X(RmaReleaseLock) X(RmaGroupSync)
#define KIND_ENUM(k) K_##k,
enum kind { KINDS(KIND_ENUM) NKINDS };
#define KIND_NAME(k) #k,
static const char *const kind_names[] = { KINDS(KIND_NAME) };
static long events[NKINDS];

#define MAXCALLS 128
static struct { const char *name; long n; } calls[MAXCALLS];
static int ncalls;

/* JSON arrays of the records the checker compares, built as text. */
struct text { char *s; size_t len, cap; };
static struct text sends, recvs, colls, nbcolls, rmaops, comms, wins, creates;

/* Every call in order with the events it caused, written as
 * [["MPI_X",[kinds]], ...]: where a count differs, the checker finds the
 * first call that differs. An event belongs to the last call made before
 * it, except MPI_Get_count, which checks a status between a completion
 * and its events. */
static struct { int call; enum kind kind; } *logev;
static const char **logcall;
static long nlogev, nlogcall, logev_cap, logcall_cap, attach_to = -1;

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rank = -1;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "every: rank %d: ", rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)

static void note_call(const char *name)
{
    int i;
    for (i = 0; i < ncalls; i++)
        if (strcmp(calls[i].name, name) == 0)
            break;
    if (i == ncalls) {
        CHECK(ncalls < MAXCALLS, "more than %d MPI functions", MAXCALLS);
        calls[ncalls++].name = name;
    }
    calls[i].n++;
    if (nlogcall == logcall_cap) {
        logcall_cap = logcall_cap ? 2 * logcall_cap : 1024;
        logcall = realloc(logcall, logcall_cap * sizeof *logcall);
        CHECK(logcall != NULL, "out of memory");
    }
    if (strcmp(name, "MPI_Get_count") != 0)
        attach_to = nlogcall;
    logcall[nlogcall++] = name;
}

/* Every MPI call: M(MPI_Send)(buf, ...). */
#define M(fn) (note_call(#fn), fn)

static void ev(enum kind k, long n)
{
    events[k] += n;
    for (; n > 0; n--) {
        if (nlogev == logev_cap) {
            logev_cap = logev_cap ? 2 * logev_cap : 1024;
            logev = realloc(logev, logev_cap * sizeof *logev);
            CHECK(logev != NULL, "out of memory");
        }
        logev[nlogev].call = attach_to;
        logev[nlogev++].kind = k;
    }
}

static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0,
                      fmt, ap);
        va_end(ap);
        CHECK(n >= 0, "vsnprintf failed");
        if (t->s && t->len + (size_t)n < t->cap)
            break;
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        CHECK(t->s != NULL, "out of memory");
    }
    t->len += (size_t)n;
}

/* add() with a comma before every element but the first. */
#define ITEM(t, ...) (add(t, "%s", (t)->len ? "," : ""), add(t, __VA_ARGS__))

/* ---- communicators as the program knows them ------------------------- */

struct comm {
    MPI_Comm comm;
    char name[MPI_MAX_OBJECT_NAME];
    int size;
    int world[NRANKS];          /* world rank of each rank (local group) */
    int inter;                  /* an intercommunicator: */
    int rsize;                  /* the remote group's size */
    int rworld[NRANKS];         /* and world ranks */
};

static struct comm world;

/* MPI_STATUSES_IGNORE, out of the compiler's sight: MPICH's is
 * (MPI_Status *)1, which gcc 12 takes for an array of size 0 (a false
 * -Wstringop-overflow). */
MPI_Status *statuses_ignore;

/* World rank of rank PEER of C as a point-to-point peer. */
static int peer_world(const struct comm *c, int peer)
{
    const int *tab = c->inter ? c->rworld : c->world;
    int n = c->inter ? c->rsize : c->size;
    CHECK(peer >= 0 && peer < n, "peer %d out of %s", peer, c->name);
    return tab[peer];
}

/* A blocking collective on C: op is OTF2's name, root in C (or -1). */
static void coll(const struct comm *c, const char *op, int root)
{
    ev(K_MpiCollectiveBegin, 1);
    ev(K_MpiCollectiveEnd, 1);
    if (root < 0)
        ITEM(&colls, "[\"%s\",\"%s\",null]", c->name, op);
    else
        ITEM(&colls, "[\"%s\",\"%s\",%d]", c->name, op, root);
}

/* A message this rank sent on C (blocking: MpiSend, else MpiIsend). */
static void sent(const struct comm *c, int dest, int tag, long bytes, enum kind k)
{
    if (dest == MPI_PROC_NULL)
        return;
    ev(k, 1);
    ITEM(&sends, "[\"%s\",%d,%d,%ld]", c->name, peer_world(c, dest), tag, bytes);
}

/* A message this rank received on C (MpiRecv or MpiIrecv). */
static void received(const struct comm *c, int src, int tag, long bytes, enum kind k)
{
    if (src == MPI_PROC_NULL)
        return;
    ev(k, 1);
    ITEM(&recvs, "[\"%s\",%d,%d,%ld]", c->name, peer_world(c, src), tag, bytes);
}

/* Checks STATUS of a receive of BYTES bytes of ints from SRC with TAG. */
static void check_status(const MPI_Status *st, int src, int tag, long bytes)
{
    int n;
    CHECK(st->MPI_SOURCE == src, "status source %d, expected %d", st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "status tag %d, expected %d", st->MPI_TAG, tag);
    M(MPI_Get_count)(st, MPI_INT, &n);
    CHECK((long)n * (long)sizeof(int) == bytes, "received %d ints, expected %ld bytes",
          n, bytes);
}

/* Names C, learns its members (an Allgather of world ranks over it) and
 * lists it in the expectation: a new communicator's first traffic. */
static void adopt(struct comm *c, MPI_Comm comm, const char *name)
{
    int i;
    memset(c, 0, sizeof *c);
    c->comm = comm;
    snprintf(c->name, sizeof c->name, "%s", name);
    M(MPI_Comm_set_name)(comm, c->name);
    M(MPI_Comm_test_inter)(comm, &c->inter);
    M(MPI_Comm_size)(comm, &c->size);
    if (c->inter) {
        /* Allgather on an intercommunicator gathers the remote group. */
        M(MPI_Comm_remote_size)(comm, &c->rsize);
        CHECK(c->size <= NRANKS && c->rsize <= NRANKS, "%s too large", name);
        M(MPI_Allgather)(&rank, 1, MPI_INT, c->rworld, 1, MPI_INT, comm);
        coll(c, "ALLGATHER", -1);
        add(&comms, "%s{\"name\":\"%s\",\"groups\":[[", comms.len ? "," : "", name);
        for (i = 0; i < c->rsize; i++)
            add(&comms, "%s%d", i ? "," : "", c->rworld[i]);
        add(&comms, "],[");
        /* the local group is filled in by the caller (it knows it) */
        return;
    }
    CHECK(c->size <= NRANKS, "%s too large", name);
    M(MPI_Allgather)(&rank, 1, MPI_INT, c->world, 1, MPI_INT, comm);
    coll(c, "ALLGATHER", -1);
    add(&comms, "%s{\"name\":\"%s\",\"members\":[", comms.len ? "," : "", name);
    for (i = 0; i < c->size; i++)
        add(&comms, "%s%d", i ? "," : "", c->world[i]);
    add(&comms, "]}");
}

/* A new communicator (CommCreate), adopted under NAME. */
static void created(struct comm *c, MPI_Comm comm, const char *name)
{
    CHECK(comm != MPI_COMM_NULL, "%s: no communicator", name);
    ev(K_CommCreate, 1);
    ITEM(&creates, "\"%s\"", name);
    adopt(c, comm, name);
}

static void comm_free(struct comm *c)
{
    M(MPI_Comm_free)(&c->comm);
    ev(K_CommDestroy, 1);
    CHECK(c->comm == MPI_COMM_NULL, "%s: Comm_free left a handle", c->name);
}

/* ---- requests --------------------------------------------------------- */

enum rkind { R_SEND, R_RECV, R_COLL };

#define MAXREQ 24
struct reqset {
    MPI_Request req[MAXREQ];
    struct {
        enum rkind kind;
        int persistent, active;
        const struct comm *c;
        int peer, tag;           /* R_RECV: expected source and tag */
        long bytes;              /* R_SEND: sent; R_RECV: expected */
        const char *op;          /* R_COLL */
        int root;
    } r[MAXREQ];
    int n;
};

static int rs_new(struct reqset *rs, enum rkind kind, const struct comm *c)
{
    int i = rs->n++;
    CHECK(i < MAXREQ, "too many requests");
    memset(&rs->r[i], 0, sizeof rs->r[i]);
    rs->req[i] = MPI_REQUEST_NULL;
    rs->r[i].kind = kind;
    rs->r[i].c = c;
    return i;
}

/* A send request to DEST: returns its index; MpiIsend once started. */
static int rs_send(struct reqset *rs, const struct comm *c, int dest, int tag,
                   long bytes, int persistent)
{
    int i = rs_new(rs, R_SEND, c);
    rs->r[i].peer = dest;
    rs->r[i].tag = tag;
    rs->r[i].bytes = bytes;
    rs->r[i].persistent = persistent;
    return i;
}

/* A receive request from SRC: MpiIrecvRequest once started. */
static int rs_recv(struct reqset *rs, const struct comm *c, int src, int tag,
                   long bytes, int persistent)
{
    int i = rs_new(rs, R_RECV, c);
    rs->r[i].peer = src;
    rs->r[i].tag = tag;
    rs->r[i].bytes = bytes;
    rs->r[i].persistent = persistent;
    return i;
}

/* A non-blocking collective: NonBlockingCollectiveRequest. */
static int rs_coll(struct reqset *rs, const struct comm *c, const char *op, int root)
{
    int i = rs_new(rs, R_COLL, c);
    rs->r[i].op = op;
    rs->r[i].root = root;
    return i;
}

/* Request I was issued (by MPI_Isend, MPI_Irecv, MPI_Ibarrier, ...) or
 * started (MPI_Start, MPI_Startall): MpiIsend, MpiIrecvRequest or
 * NonBlockingCollectiveRequest. */
static void rs_issued(struct reqset *rs, int i)
{
    CHECK(!rs->r[i].active, "request %d is already active", i);
    rs->r[i].active = 1;
    if (rs->r[i].kind == R_SEND)
        sent(rs->r[i].c, rs->r[i].peer, rs->r[i].tag, rs->r[i].bytes, K_MpiIsend);
    else if (rs->r[i].kind == R_RECV)
        ev(K_MpiIrecvRequest, 1);
    else
        ev(K_NonBlockingCollectiveRequest, 1);
}

/* Request I completed with status ST (NULL: ignored); CANCELLED. */
static void rs_done(struct reqset *rs, int i, const MPI_Status *st, int cancelled)
{
    CHECK(rs->r[i].active, "request %d completed twice", i);
    rs->r[i].active = 0;
    CHECK(rs->r[i].persistent || rs->req[i] == MPI_REQUEST_NULL,
          "completed request %d is not MPI_REQUEST_NULL", i);
    if (cancelled) {
        ev(K_MpiRequestCancelled, 1);
        return;
    }
    switch (rs->r[i].kind) {
    case R_SEND:
        ev(K_MpiIsendComplete, 1);
        break;
    case R_RECV:
        received(rs->r[i].c, rs->r[i].peer, rs->r[i].tag, rs->r[i].bytes, K_MpiIrecv);
        if (st)
            check_status(st, rs->r[i].peer, rs->r[i].tag, rs->r[i].bytes);
        break;
    case R_COLL:
        ev(K_NonBlockingCollectiveComplete, 1);
        if (rs->r[i].root < 0)
            ITEM(&nbcolls, "[\"%s\",\"%s\",null]", rs->r[i].c->name, rs->r[i].op);
        else
            ITEM(&nbcolls, "[\"%s\",\"%s\",%d]", rs->r[i].c->name, rs->r[i].op,
                 rs->r[i].root);
        break;
    }
}

/* After a Test* over [LO, HI): MpiRequestTest for each request it left
 * active (call after rs_done for those it completed); then a pause of
 * 0.1 ms if there are some, so that a loop of Tests does not make tens of
 * thousands of calls while the other ranks catch up. */
static void rs_untested(struct reqset *rs, int lo, int hi)
{
    struct timespec pause = { 0, 100000 };
    int i, n = 0;
    for (i = lo; i < hi; i++)
        if (rs->r[i].active) {
            ev(K_MpiRequestTest, 1);
            n++;
        }
    if (n)
        nanosleep(&pause, NULL);
}

static int rs_active(const struct reqset *rs, int lo, int hi)
{
    int i, n = 0;
    for (i = lo; i < hi; i++)
        n += rs->r[i].active;
    return n;
}

/* ---- data ------------------------------------------------------------- */

static int size, right, left, partner;

static void fill(int *buf, int n, int base)
{
    int i;
    for (i = 0; i < n; i++)
        buf[i] = base + i;
}

static void expect_ints(const int *buf, int n, int base, const char *what)
{
    int i;
    for (i = 0; i < n; i++)
        CHECK(buf[i] == base + i, "%s: element %d is %d, expected %d", what, i,
              buf[i], base + i);
}

#define B(n) ((long)(n) * (long)sizeof(int))

/* ---- blocking point-to-point ------------------------------------------ */

static void p2p_blocking(void)
{
    int s[16], r[16], n;
    double ds[3], dr[3];
    MPI_Status st;
    MPI_Datatype triple;

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

    /* Sendrecv: right; of a derived type (2 x 3 ints = 24 bytes), received
     * as 6 ints into a larger buffer. */
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

/* ---- non-blocking point-to-point -------------------------------------- */

static void p2p_nonblocking(void)
{
    struct reqset rs;
    int s[8][8], r[8][8], i, j, k, flag, idx, out, idxs[MAXREQ];
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

    /* Testsome: two receives before the barrier, two sends after it. */
    rs.n = 0;
    memset(r, 0, sizeof r);
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

/* ---- persistent requests and cancel ----------------------------------- */

static void p2p_persistent(void)
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

/* ---- collectives ------------------------------------------------------- */

/* Alltoallv counts: rank I sends (I + J) % 3 + 1 ints to rank J. */
#define A2AV(i, j) (((i) + (j)) % 3 + 1)

static void collectives_blocking(const struct comm *c)
{
    MPI_Comm w = c->comm;
    int s[32], r[32], cnt[NRANKS], dsp[NRANKS], rcnt[NRANKS], rdsp[NRANKS];
    int i, j, sum;
    MPI_Datatype ty[NRANKS];

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

/* Every non-blocking collective at once, completed by Wait, a Test loop,
 * Waitany, Waitsome, a Testall loop and Waitall. */
static void collectives_nonblocking(const struct comm *c)
{
    MPI_Comm w = c->comm;
    struct reqset rs = { .n = 0 };
    static int s[17][32], r[17][32];
    int cnt[NRANKS], dsp[NRANKS], sc[NRANKS], sd[NRANKS], rc[NRANKS], rd[NRANKS];
    int wc[NRANKS], wd[NRANKS], rsc[NRANKS];
    MPI_Datatype ty[NRANKS];
    int i, k, flag, idx, out, idxs[MAXREQ], ns = 0, nr = 0, sum = 0;
    MPI_Status sts[MAXREQ];

    memset(r, 0, sizeof r);
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

    rs_coll(&rs, c, "BARRIER", -1);
    M(MPI_Ibarrier)(w, &rs.req[0]);
    rs_issued(&rs, 0);
    fill(r[1], 4, rank == 2 ? 900 : -1);
    rs_coll(&rs, c, "BCAST", 2);
    M(MPI_Ibcast)(r[1], 4, MPI_INT, 2, w, &rs.req[1]);
    rs_issued(&rs, 1);
    fill(s[2], 3, 30 * rank);
    rs_coll(&rs, c, "GATHER", 1);
    M(MPI_Igather)(s[2], 3, MPI_INT, r[2], 3, MPI_INT, 1, w, &rs.req[2]);
    rs_issued(&rs, 2);
    fill(s[3], rank + 1, 40 * rank);
    rs_coll(&rs, c, "GATHERV", 0);
    M(MPI_Igatherv)(s[3], rank + 1, MPI_INT, r[3], cnt, dsp, MPI_INT, 0, w, &rs.req[3]);
    rs_issued(&rs, 3);
    fill(s[4], 2 * size, 500);
    rs_coll(&rs, c, "SCATTER", 3);
    M(MPI_Iscatter)(s[4], 2, MPI_INT, r[4], 2, MPI_INT, 3, w, &rs.req[4]);
    rs_issued(&rs, 4);
    fill(s[5], 10, 600);
    rs_coll(&rs, c, "SCATTERV", 1);
    M(MPI_Iscatterv)(s[5], cnt, dsp, MPI_INT, r[5], rank + 1, MPI_INT, 1, w, &rs.req[5]);
    rs_issued(&rs, 5);
    s[6][0] = 11 * rank;
    rs_coll(&rs, c, "ALLGATHER", -1);
    M(MPI_Iallgather)(s[6], 1, MPI_INT, r[6], 1, MPI_INT, w, &rs.req[6]);
    rs_issued(&rs, 6);
    fill(s[7], rank + 1, 70 * rank);
    rs_coll(&rs, c, "ALLGATHERV", -1);
    M(MPI_Iallgatherv)(s[7], rank + 1, MPI_INT, r[7], cnt, dsp, MPI_INT, w, &rs.req[7]);
    rs_issued(&rs, 7);
    for (i = 0; i < size; i++)
        s[8][i] = 100 * rank + i;
    rs_coll(&rs, c, "ALLTOALL", -1);
    M(MPI_Ialltoall)(s[8], 1, MPI_INT, r[8], 1, MPI_INT, w, &rs.req[8]);
    rs_issued(&rs, 8);
    for (i = 0; i < size; i++)
        fill(s[9] + sd[i], sc[i], 1000 * rank + 10 * i);
    rs_coll(&rs, c, "ALLTOALLV", -1);
    M(MPI_Ialltoallv)(s[9], sc, sd, MPI_INT, r[9], rc, rd, MPI_INT, w, &rs.req[9]);
    rs_issued(&rs, 9);
    for (i = 0; i < size; i++)
        s[10][i] = 200 * rank + i;
    rs_coll(&rs, c, "ALLTOALLW", -1);
    M(MPI_Ialltoallw)(s[10], wc, wd, ty, r[10], wc, wd, ty, w, &rs.req[10]);
    rs_issued(&rs, 10);
    s[11][0] = rank + 10;
    rs_coll(&rs, c, "REDUCE", 2);
    M(MPI_Ireduce)(s[11], r[11], 1, MPI_INT, MPI_SUM, 2, w, &rs.req[11]);
    rs_issued(&rs, 11);
    s[12][0] = rank;
    rs_coll(&rs, c, "ALLREDUCE", -1);
    M(MPI_Iallreduce)(s[12], r[12], 1, MPI_INT, MPI_MIN, w, &rs.req[12]);
    rs_issued(&rs, 12);
    fill(s[13], sum, 2 * rank);
    rs_coll(&rs, c, "REDUCE_SCATTER", -1);
    M(MPI_Ireduce_scatter)(s[13], r[13], rsc, MPI_INT, MPI_SUM, w, &rs.req[13]);
    rs_issued(&rs, 13);
    fill(s[14], size, rank);
    rs_coll(&rs, c, "REDUCE_SCATTER_BLOCK", -1);
    M(MPI_Ireduce_scatter_block)(s[14], r[14], 1, MPI_INT, MPI_SUM, w, &rs.req[14]);
    rs_issued(&rs, 14);
    s[15][0] = rank + 1;
    rs_coll(&rs, c, "SCAN", -1);
    M(MPI_Iscan)(s[15], r[15], 1, MPI_INT, MPI_PROD, w, &rs.req[15]);
    rs_issued(&rs, 15);
    s[16][0] = rank + 1;
    rs_coll(&rs, c, "EXSCAN", -1);
    M(MPI_Iexscan)(s[16], r[16], 1, MPI_INT, MPI_SUM, w, &rs.req[16]);
    rs_issued(&rs, 16);

    M(MPI_Wait)(&rs.req[0], MPI_STATUS_IGNORE);
    rs_done(&rs, 0, NULL, 0);
    do {
        M(MPI_Test)(&rs.req[1], &flag, MPI_STATUS_IGNORE);
        if (flag)
            rs_done(&rs, 1, NULL, 0);
        rs_untested(&rs, 1, 2);
    } while (!flag);
    for (k = 0; k < 3; k++) {
        M(MPI_Waitany)(3, rs.req + 2, &idx, MPI_STATUS_IGNORE);
        CHECK(idx >= 0 && idx < 3, "Waitany index %d", idx);
        rs_done(&rs, 2 + idx, NULL, 0);
    }
    while (rs_active(&rs, 5, 9)) {
        M(MPI_Waitsome)(4, rs.req + 5, &out, idxs, sts);
        CHECK(out >= 1 && out <= 4, "Waitsome outcount %d", out);
        for (k = 0; k < out; k++)
            rs_done(&rs, 5 + idxs[k], NULL, 0);
    }
    do {
        M(MPI_Testall)(2, rs.req + 9, &flag, statuses_ignore);
        if (flag) {
            rs_done(&rs, 9, NULL, 0);
            rs_done(&rs, 10, NULL, 0);
        }
        rs_untested(&rs, 9, 11);
    } while (!flag);
    M(MPI_Waitall)(6, rs.req + 11, sts);
    for (k = 11; k < 17; k++)
        rs_done(&rs, k, NULL, 0);

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

static void communicators(void)
{
    struct comm dup1, dup2, split, split3, shared, created_c, cgroup, cart, inter,
        merged;
    MPI_Comm nc;
    MPI_Group wg, g;
    int members[3], i, cr, dims[2] = { 2, 2 }, periods[2] = { 1, 0 }, src, dst;
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

    /* Comm_create from world ranks 3, 1, 2 (in that order). */
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

static void one_sided(void)
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

/* ---- main -------------------------------------------------------------- */

static void write_expectation(const char *dir)
{
    char path[4096];
    FILE *f;
    long c, e;
    int i, k;

    snprintf(path, sizeof path, "%s/rank-%d.json", dir, rank);
    f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "{\"program\":\"every\",\"rank\":%d,\"size\":%d,\n\"events\":{", rank, size);
    for (i = 0; i < NKINDS; i++)
        fprintf(f, "%s\"%s\":%ld", i ? "," : "", kind_names[i], events[i]);
    fprintf(f, "},\n\"calls\":{");
    for (i = 0; i < ncalls; i++)
        fprintf(f, "%s\"%s\":%ld", i ? "," : "", calls[i].name, calls[i].n);
    fprintf(f, "},\n\"sends\":[%s],\n\"recvs\":[%s],\n\"collectives\":[%s],\n"
            "\"nbcollectives\":[%s],\n\"rma\":[%s],\n\"comms\":[%s],\n"
            "\"windows\":[%s],\n\"created\":[%s],\n\"log\":[",
            sends.s ? sends.s : "", recvs.s ? recvs.s : "", colls.s ? colls.s : "",
            nbcolls.s ? nbcolls.s : "", rmaops.s ? rmaops.s : "",
            comms.s ? comms.s : "", wins.s ? wins.s : "", creates.s ? creates.s : "");
    for (c = 0, e = 0; c < nlogcall; c++) {
        fprintf(f, "%s[\"%s\",[", c ? "," : "", logcall[c]);
        for (k = 0; e < nlogev && logev[e].call == c; e++, k++)
            fprintf(f, "%s\"%s\"", k ? "," : "", kind_names[logev[e].kind]);
        fprintf(f, "]]");
    }
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static char bsend_buf[1 << 16];
    const char *dir = getenv("WEFT_TEST_EXPECT_DIR");
    void *detached;
    int detached_size, i;

    M(MPI_Init)(&argc, &argv);
    statuses_ignore = MPI_STATUSES_IGNORE;
    ev(K_ProgramBegin, 1);
    M(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    M(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    CHECK(size == NRANKS, "run me on %d ranks, not %d", NRANKS, size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    partner = rank ^ 1;
    world.comm = MPI_COMM_WORLD;
    snprintf(world.name, sizeof world.name, "MPI_COMM_WORLD");
    world.size = size;
    for (i = 0; i < size; i++)
        world.world[i] = i;
    add(&comms, "{\"name\":\"MPI_COMM_WORLD\",\"members\":[0,1,2,3]}");
    M(MPI_Buffer_attach)(bsend_buf, sizeof bsend_buf);

    p2p_blocking();
    p2p_nonblocking();
    p2p_persistent();
    collectives_blocking(&world);
    collectives_nonblocking(&world);
    communicators();
    one_sided();

    M(MPI_Buffer_detach)(&detached, &detached_size);
    CHECK(detached == bsend_buf, "Buffer_detach returned another buffer");
    M(MPI_Finalize)();
    ev(K_ProgramEnd, 1);
    if (dir && *dir)
        write_expectation(dir);
    if (rank == 0)
        printf("every: ok (%d ranks)\n", size);
    return 0;
}
