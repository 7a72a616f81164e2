/* memberin.h - what ingest keeps of a member (a process of a trace)
 * while it receives its stream: who it is (rank, pid, host, owner), its
 * connection, what its Hello said of its clock, its threads' sequence
 * numbers, the ids its Definitions defined (validate.c; each with its
 * weft_decl where one is kept), its journal and the entries out at the
 * writer threads (jwriter.c, jcache.c), with durability = fsync the acks
 * waiting for an fdatasync (session.c), and how its Goodbye said it
 * ended.
 *
 * A weft_member (daemon/traces/trace.h) holds one, `in`, and is the
 * `member` it points back to: ingest works on the weft_memberin and asks
 * the lifecycle what else it needs through members.h. The lifecycle
 * fills it when the member joins (or is restored), reads it for the
 * catalog and asks whether writes are out (weft_memberin_busy). Loop
 * thread, except where a field says.
 */
#ifndef WEFT_MEMBERIN_H
#define WEFT_MEMBERIN_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "idset.h"
#include "journal.h"
#include "record.h"

struct weft_conn;
struct weft_member;

/* What later records are checked against, per defined id of the id
 * spaces that need it (weft_ref_kind_has_decl): the element count of the
 * definition (CN fields) and the OTF2_Type it declares (TD fields). It
 * is the id's value in the member's `defined` set (weft_decl_pack). */
typedef struct weft_decl {
    uint32_t count;
    uint8_t type;
} weft_decl;

/* A decl as a nonzero idset value, and back. */
static inline uint64_t weft_decl_pack(weft_decl d)
{
    return 1u | (uint64_t)d.type << 8 | (uint64_t)d.count << 16;
}

static inline weft_decl weft_decl_unpack(uint64_t v)
{
    weft_decl d = { (uint32_t)(v >> 16), (uint8_t)(v >> 8) };

    return d;
}

/* An ack held back until the journal is on stable storage. */
typedef struct weft_ack {
    uint8_t definitions;
    uint32_t location;
    uint64_t seq;
} weft_ack;

typedef struct weft_ackq {
    weft_ack *v;
    size_t n, cap;
} weft_ackq;

/* A thread's batches: last_* as received and checked (the next batch
 * follows them), held_* as journaled (what HelloAck reports once nothing
 * is queued; a failed write rewinds last_* to them). */
typedef struct weft_loc_state {
    uint64_t last_seq;   /* last EventBatch accepted */
    uint64_t last_time;  /* time of its last event */
    uint64_t held_seq;   /* last EventBatch journaled */
    uint64_t held_time;
    uint64_t events;     /* journaled */
    uint64_t refused;    /* events of batches weftd did not store (over
                            the quota, the disk reserve, a failed write) */
    int charged;         /* charged WEFT_QUOTA_LOCATION_BYTES before it
                            sent a batch (a ThreadName named it) */
} weft_loc_state;

typedef struct weft_memberin {
    weft_daemon *d;
    struct weft_member *member;   /* whose: the lifecycle's (trace.h) */
    /* From its Hello: */
    uint32_t rank;
    uint32_t pid;
    uint32_t parent_pid;          /* a tree member's parent, else 0 */
    char *host;                   /* owned */
    char *node;                   /* the node that relays it (relay.h),
                                     NULL on a connection of its own;
                                     owned */
    void *part;                   /* on a node, a member of a part of its
                                     head's trace (partlink.h): the
                                     link's record of it (parts.c) */
    int in_part;                  /* it joined such a part (session.c) */
    uint32_t uid;                 /* its trace's owner: charged for it */
    uint32_t size;                /* members of its trace: the ranks its
                                     references may name; UINT32_MAX in
                                     a process tree (as many as join) */
    /* Its Hello's clock: events must lie within WEFT_MAX_SPAN_S of its
     * start (validate.c), in its clock's ticks; 0 for a member made by
     * hand (tests, fuzzers): not checked. */
    uint64_t start_time;          /* Hello.clock_at_realtime */
    uint64_t resolution;          /* Hello.timer_resolution, ticks/s */
    struct weft_conn *conn;       /* NULL while disconnected */
    uint64_t conn_serial;         /* counts its connections (Hellos) */
    uint64_t max_frame;           /* the largest max_frame its HelloAcks
                                     announced: it fills batches for it,
                                     and weftd takes them after a SIGHUP
                                     lowered max_frame too (server.c) */
    int said_goodbye;
    int execs;                    /* its Goodbye said it goes on as
                                     another program (an exec) */
    uint32_t *children;           /* a tree member's Goodbye's child
                                     processes still running; owned */
    size_t nchildren;
    /* Its process, when weftd can tell whether it runs (procwatch.h):
     * set at each Hello; `gone` once it ended without Goodbye. A
     * relayed member's process runs on its node, which says when it
     * ended (relay.h): `node_gone`. */
    int watched;
    uint64_t proc_start;          /* its start time, 0 if unknown */
    int gone;
    int node_gone;
    char *ended;                  /* its Goodbye's `ended`: how it ended
                                     abnormally, NULL if normally; owned */
    uint64_t refused;             /* events of its batches not stored:
                                     refused over max_user_spool_bytes or
                                     min_free_spool_bytes, or their
                                     journal append failed (session.c) */
    uint64_t defs_seq;            /* last Definitions accepted */
    uint64_t held_defs_seq;       /* last Definitions journaled */
    weft_journal *journal;        /* set by its open job (the lifecycle's
                                     weft_member_open) while that is out */
    /* Journal entries out at the writer threads (jwriter.h): none may be
     * while the member rejoins or its trace converts. */
    uint64_t pending;             /* loop thread: entries */
    uint64_t pending_bytes;       /* loop thread: their memory */
    int write_failed;             /* writer thread while pending > 0 */
    int write_errno;
    /* jcache.c: its journal holds a descriptor, on that list */
    int jc_open;
    struct weft_memberin *jc_prev, *jc_next;
    weft_loc_state *locs;         /* by thread index (grown by
                                     weft_memberin_location); owned */
    uint32_t nlocs;
    weft_idset defined[WEFT_REF__COUNT]; /* ids defined; value 1, or
                                     the weft_decl where one is kept */
    /* durability = fsync: acks of entries written since the running
     * fdatasync began wait in `waiting`; those it covers in `syncing`. */
    weft_ackq waiting;
    weft_ackq syncing;
    int sync_running;             /* an fdatasync job is in flight */
    int close_when_synced;        /* its Goodbye is written: the
                                     connection closes once the acks
                                     waiting for a sync went out */
} weft_memberin;

/* Whether a write of the member's journal is out: entries at the
 * writer threads, or an fdatasync running. */
static inline int weft_memberin_busy(const weft_memberin *in)
{
    return in->pending > 0 || in->sync_running;
}

/* Whether the member is a process of a tree (one `weft run` of a
 * program that starts others): its trace has as many members as join. */
static inline int weft_memberin_in_tree(const weft_memberin *in)
{
    return in->size == UINT32_MAX;
}

/* Makes room for thread `loc` of the member (in->locs): 0, or
 * WEFT_ELIMIT beyond max_locations (WEFT_ENOMEM) with err saying so. */
int weft_memberin_location(weft_memberin *in, uint32_t loc, char *err,
                           size_t errlen);
/* Frees what in holds but its journal (the lifecycle closes that); in is
 * then empty. */
void weft_memberin_free(weft_memberin *in);

#endif
