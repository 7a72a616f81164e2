/* every.h - what every.c's parts share: how an MPI call and the events
 * the contract says it records are counted (every.c's DESIGN comment),
 * the communicators and requests as the program knows them, and the
 * parts themselves (every_p2p.c, every_coll.c, every_comm.c), called by
 * main in this order. An ordinary MPI program: nothing of weft. */
#ifndef EVERY_H
#define EVERY_H

#include <mpi.h>
#include <stddef.h>

#define NRANKS 4

/* ---- what the trace must hold (every.c) ---- */

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

/* JSON arrays of the records the checker compares, built as text. */
struct text { char *s; size_t len, cap; };
extern struct text sends, recvs, colls, nbcolls, rmaops, comms, wins,
    creates;

/* This rank, the world's size, its ring neighbours and its pair. */
extern int rank, size, right, left, partner;

/* Says what went wrong and aborts the job (status 1). */
void fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)

/* Every MPI call: M(MPI_Send)(buf, ...) counts the call. */
void note_call(const char *name);
#define M(fn) (note_call(#fn), fn)

/* n events of kind k, caused by the last call. */
void ev(enum kind k, long n);

/* Appends to t; ITEM with a comma before every element but the first. */
void add(struct text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define ITEM(t, ...) (add(t, "%s", (t)->len ? "," : ""), add(t, __VA_ARGS__))

/* ---- communicators as the program knows them ---- */

struct comm {
    MPI_Comm comm;
    char name[MPI_MAX_OBJECT_NAME];
    int size;
    int world[NRANKS];          /* world rank of each rank (local group) */
    int inter;                  /* an intercommunicator: */
    int rsize;                  /* the remote group's size */
    int rworld[NRANKS];         /* and world ranks */
};

extern struct comm world;

/* MPI_STATUSES_IGNORE, out of the compiler's sight: MPICH's is
 * (MPI_Status *)1, which gcc 12 takes for an array of size 0 (a false
 * -Wstringop-overflow). */
extern MPI_Status *statuses_ignore;

int peer_world(const struct comm *c, int peer);
void coll(const struct comm *c, const char *op, int root);
void sent(const struct comm *c, int dest, int tag, long bytes, enum kind k);
void received(const struct comm *c, int src, int tag, long bytes,
              enum kind k);
void check_status(const MPI_Status *st, int src, int tag, long bytes);
void adopt(struct comm *c, MPI_Comm comm, const char *name);
void created(struct comm *c, MPI_Comm comm, const char *name);
void comm_free(struct comm *c);

/* ---- requests ---- */

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

int rs_send(struct reqset *rs, const struct comm *c, int dest, int tag,
            long bytes, int persistent);
int rs_recv(struct reqset *rs, const struct comm *c, int src, int tag,
            long bytes, int persistent);
int rs_coll(struct reqset *rs, const struct comm *c, const char *op,
            int root);
void rs_issued(struct reqset *rs, int i);
void rs_done(struct reqset *rs, int i, const MPI_Status *st, int cancelled);
void rs_untested(struct reqset *rs, int lo, int hi);
int rs_active(const struct reqset *rs, int lo, int hi);

/* ---- data ---- */

void fill(int *buf, int n, int base);
void expect_ints(const int *buf, int n, int base, const char *what);
#define B(n) ((long)(n) * (long)sizeof(int))

/* ---- the parts ---- */

void p2p_blocking(void);
void p2p_nonblocking(void);
void p2p_persistent(void);
void collectives_blocking(const struct comm *c);
void collectives_nonblocking(const struct comm *c);
void communicators(void);
void one_sided(void);

#endif
