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

#include "every.h"

/* ---- what the trace must hold --------------------------------------- */

#define KIND_NAME(k) #k,
static const char *const kind_names[] = { KINDS(KIND_NAME) };
static long events[NKINDS];

#define MAXCALLS 128
static struct { const char *name; long n; } calls[MAXCALLS];
static int ncalls;

/* JSON arrays of the records the checker compares, built as text. */
struct text sends, recvs, colls, nbcolls, rmaops, comms, wins, creates;

/* Every call in order with the events it caused, written as
 * [["MPI_X",[kinds]], ...]: where a count differs, the checker finds the
 * first call that differs. An event belongs to the last call made before
 * it, except MPI_Get_count, which checks a status between a completion
 * and its events. */
static struct { int call; enum kind kind; } *logev;
static const char **logcall;
static long nlogev, nlogcall, logev_cap, logcall_cap, attach_to = -1;

int rank = -1, size, right, left, partner;

void fail(const char *fmt, ...)
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

void note_call(const char *name)
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

void ev(enum kind k, long n)
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

void add(struct text *t, const char *fmt, ...)
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

/* ---- communicators as the program knows them ------------------------- */

struct comm world;
MPI_Status *statuses_ignore;

/* World rank of rank PEER of C as a point-to-point peer. */
int peer_world(const struct comm *c, int peer)
{
    const int *tab = c->inter ? c->rworld : c->world;
    int n = c->inter ? c->rsize : c->size;
    CHECK(peer >= 0 && peer < n, "peer %d out of %s", peer, c->name);
    return tab[peer];
}

/* A blocking collective on C: op is OTF2's name, root in C (or -1). */
void coll(const struct comm *c, const char *op, int root)
{
    ev(K_MpiCollectiveBegin, 1);
    ev(K_MpiCollectiveEnd, 1);
    if (root < 0)
        ITEM(&colls, "[\"%s\",\"%s\",null]", c->name, op);
    else
        ITEM(&colls, "[\"%s\",\"%s\",%d]", c->name, op, root);
}

/* A message this rank sent on C (blocking: MpiSend, else MpiIsend). */
void sent(const struct comm *c, int dest, int tag, long bytes, enum kind k)
{
    if (dest == MPI_PROC_NULL)
        return;
    ev(k, 1);
    ITEM(&sends, "[\"%s\",%d,%d,%ld]", c->name, peer_world(c, dest), tag, bytes);
}

/* A message this rank received on C (MpiRecv or MpiIrecv). */
void received(const struct comm *c, int src, int tag, long bytes, enum kind k)
{
    if (src == MPI_PROC_NULL)
        return;
    ev(k, 1);
    ITEM(&recvs, "[\"%s\",%d,%d,%ld]", c->name, peer_world(c, src), tag, bytes);
}

/* Checks STATUS of a receive of BYTES bytes of ints from SRC with TAG. */
void check_status(const MPI_Status *st, int src, int tag, long bytes)
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
void adopt(struct comm *c, MPI_Comm comm, const char *name)
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
void created(struct comm *c, MPI_Comm comm, const char *name)
{
    CHECK(comm != MPI_COMM_NULL, "%s: no communicator", name);
    ev(K_CommCreate, 1);
    ITEM(&creates, "\"%s\"", name);
    adopt(c, comm, name);
}

void comm_free(struct comm *c)
{
    M(MPI_Comm_free)(&c->comm);
    ev(K_CommDestroy, 1);
    CHECK(c->comm == MPI_COMM_NULL, "%s: Comm_free left a handle", c->name);
}

/* ---- requests --------------------------------------------------------- */

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
int rs_send(struct reqset *rs, const struct comm *c, int dest, int tag,
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
int rs_recv(struct reqset *rs, const struct comm *c, int src, int tag,
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
int rs_coll(struct reqset *rs, const struct comm *c, const char *op, int root)
{
    int i = rs_new(rs, R_COLL, c);
    rs->r[i].op = op;
    rs->r[i].root = root;
    return i;
}

/* Request I was issued (by MPI_Isend, MPI_Irecv, MPI_Ibarrier, ...) or
 * started (MPI_Start, MPI_Startall): MpiIsend, MpiIrecvRequest or
 * NonBlockingCollectiveRequest. */
void rs_issued(struct reqset *rs, int i)
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
void rs_done(struct reqset *rs, int i, const MPI_Status *st, int cancelled)
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
void rs_untested(struct reqset *rs, int lo, int hi)
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

int rs_active(const struct reqset *rs, int lo, int hi)
{
    int i, n = 0;
    for (i = lo; i < hi; i++)
        n += rs->r[i].active;
    return n;
}

/* ---- data ------------------------------------------------------------- */

void fill(int *buf, int n, int base)
{
    int i;
    for (i = 0; i < n; i++)
        buf[i] = base + i;
}

void expect_ints(const int *buf, int n, int base, const char *what)
{
    int i;
    for (i = 0; i < n; i++)
        CHECK(buf[i] == base + i, "%s: element %d is %d, expected %d", what, i,
              buf[i], base + i);
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
