/* wm.h - libweft-mpi's internals: the MPI recorder (PMPI wrappers).
 *
 * DESIGN
 * Every wrapped MPI function is one entry of calls.def (STYLE habit 13):
 * its name, OTF2 region role and collective operation, and its family
 * (`hook`). wrap.c generates from the table the MPI_<Name> functions,
 * their region definitions and the prototypes of the family hooks below,
 * so a hook's parameters are checked against the MPI signature by the
 * compiler. A wrapper is
 *
 *     Enter(region) ; wm_pre_<hook>(...) ; PMPI_<Name>(...) ;
 *     wm_post_<hook>(..., rc) ; Leave(region)
 *
 * or, for WMC entries whose hook must change what PMPI gets (a status the
 * user ignored, request handles MPI overwrites), Enter ; rc =
 * wm_do_<hook>(...) ; Leave. Collectives (WMK, WMKN) need no hook: coll.c
 * generates their wrappers from the entry's byte count expression.
 * wm_begin/wm_end hold the one recursion guard (MPI calls made inside a
 * wrapped call, by MPI itself or by us, record nothing) and keep errno;
 * they also raise libweft's guard (weft__inside, client/recorder.h), so
 * the other recorders (pthread, I/O) record nothing of what MPI and the
 * hooks do inside a recorded call. Nothing is recorded before MPI_Init
 * opened the session (session.c) or after MPI_Finalize.
 *
 * Families live in one file each: session.c (init, finalize), comm.c
 * (communicators and their identities), p2p.c (point-to-point and
 * request completion), req.c (the table of requests in flight),
 * coll.c (collectives), rma.c (one-sided).
 *
 * MPI handles are pointers in Open MPI and ints in MPICH: tables key them
 * as uint64_t (WM_KEY), so the same source builds against both.
 */
#ifndef WEFT_WM_H
#define WEFT_WM_H

#include <errno.h>
#include <mpi.h>
#include <stdint.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#include "weft.h"

#define WM__HIDDEN __attribute__((visibility("hidden")))
#define WM_KEY(handle) ((uint64_t)(uintptr_t)(handle))
#define WM_NO_RANK OTF2_UNDEFINED_UINT32

/* One id per entry of calls.def: WM_Send, WM_Recv, ... */
enum wm_call_id {
#define WM(Name, role, op, hook, params, args) WM_##Name,
#define WMC(Name, role, op, hook, params, args) WM_##Name,
#define WMK(Name, role, op, params, args, bytes) WM_##Name,
#define WMKN(Name, role, op, params, args, bytes) WM_##Name,
#include "calls.def"
    WM_Init, WM_Init_thread, WM_Finalize, WM_Abort, /* session.c */
    WM__COUNT
};

/* A wrapped call in progress, on the wrapper's stack. */
typedef struct wm_frame {
    unsigned call;       /* enum wm_call_id */
    OTF2_RegionRef region;
    int saved_errno;     /* the program's errno: before the PMPI call, then
                            what the call left */
    uint64_t identity;   /* pre -> post: a new communicator's identity */
    uint64_t t0;         /* a poll's start, while its Enter waits */
    uint8_t deferred;    /* a poll whose Enter waits for wm_poll */
    uint8_t counted;     /* a poll only counted: no Enter, no Leave */
} wm_frame;

/* The one shape of every generated wrapper MPI_<Name>: outside a session
 * or inside another wrapped call, PMPI_<Name> alone; else `before`, rc_ =
 * `call`, `after` (expressions over the frame f_, rc_ and the arguments),
 * then wm_end. */
#define WM_WRAPPER(Name, params, args, before, call, after)                  \
    __attribute__((visibility("default"))) int MPI_##Name params            \
    {                                                                        \
        wm_frame f_;                                                         \
        int rc_;                                                             \
                                                                             \
        if (!wm_begin(&f_, WM_##Name))                                       \
            return PMPI_##Name args;                                         \
        before;                                                              \
        rc_ = call;                                                          \
        after;                                                               \
        wm_end(&f_);                                                         \
        return rc_;                                                          \
    }

/* Calls PMPI expression `call` with errno as the program left it and
 * keeps the errno it leaves, for wm_end to restore after recording. */
#define WM_PMPI(f, call)                                                     \
    __extension__({                                                          \
        int rc__;                                                            \
        errno = (f)->saved_errno;                                            \
        rc__ = (call);                                                       \
        (f)->saved_errno = errno;                                            \
        wm_t = weft_time();                                                  \
        rc__;                                                                \
    })

/* The time of the recorded call in progress on this thread: its Enter's
 * until the PMPI call returns, its Leave's after. The events a call
 * records share these two timestamps (one clock read each, not one per
 * event), so they sit at its very start or end. wrap.c owns both. */
extern __thread uint64_t wm_t __attribute__((tls_model("initial-exec")))
    WM__HIDDEN;
extern __thread int wm_depth __attribute__((tls_model("initial-exec")))
    WM__HIDDEN;

/* The timestamp of an event recorded now: the call's (above) inside a
 * recorded call, else the clock. */
static inline uint64_t wm_now(void)
{
    return wm_depth ? wm_t : weft_time();
}

/* 1 between MPI_Init and MPI_Finalize with the session open. */
WM__HIDDEN int wm_active(void);
/* Starts a wrapped call: returns 1 and records Enter when it is to be
 * recorded (then wm_end must follow), 0 to just call PMPI. */
WM__HIDDEN int wm_begin(wm_frame *f, unsigned call);
/* Records Leave and lowers the guard. errno is as at wm_begin. */
WM__HIDDEN void wm_end(wm_frame *f);
/* Polling collapsed (WEFT_MPI_POLL, README): a Test call (Test, Testany,
 * Testsome, Testall) or Iprobe calls this right after its PMPI call, with
 * `fruitless` when it completed (found) nothing, without error, `key`
 * naming its requests (wm_poll_key; Iprobe: source, tag, comm). The first fruitless call of a run is
 * recorded, as is every call that completes something (its Enter waits
 * until the call returned, then carries its start time); the same
 * fruitless calls that follow it with nothing recorded in between on the
 * thread are only counted, and the count and their time go out as the
 * metrics "MPI polls collapsed" and "MPI poll time collapsed" (calls and
 * clock ticks, accumulated since the start on the thread) at the start
 * of the next call recorded. Returns 1 when the call is recorded (its Enter is
 * written: record its events), 0 when it is counted. */
WM__HIDDEN int wm_poll(wm_frame *f, int fruitless, uint64_t key);
/* Ends this thread's run of collapsed polls at time t (its count goes
 * out): MPI_Finalize and MPI_Abort, which do not start with wm_begin. */
WM__HIDDEN void wm_poll_close(uint64_t t);
/* The key of polling `n` requests `reqs` (handles before the call). */
WM__HIDDEN uint64_t wm_poll_key(int n, const MPI_Request *reqs);
/* The region of `call` (defined on first use). */
WM__HIDDEN OTF2_RegionRef wm_region(unsigned call);
/* The C name and collective operation of `call`. */
WM__HIDDEN const char *wm_call_name(unsigned call);
WM__HIDDEN OTF2_CollectiveOp wm_call_op(unsigned call);

/* Bytes of `count` elements of `type` (0 for MPI_DATATYPE_NULL). */
WM__HIDDEN uint64_t wm_bytes(int count, MPI_Datatype type);

/* ---- communicators (comm.c) ------------------------------------------- */

/* Defines MPI_COMM_WORLD and MPI_COMM_SELF, the MPI paradigm and the
 * COMM_LOCATIONS group. Session open; called once by MPI_Init. */
WM__HIDDEN void wm_comm_init(int size);
/* Forgets every communicator (MPI_Finalize). */
WM__HIDDEN void wm_comm_fini(void);
/* The local OTF2 id of `comm`, defining it first when this process has
 * not seen it yet (a communicator made by a call not wrapped).
 * OTF2_UNDEFINED_COMM for MPI_COMM_NULL. */
WM__HIDDEN OTF2_CommRef wm_comm_ref(MPI_Comm comm);
/* How a new communicator came about, for its identity: every member
 * computes the same one without talking to the others. */
typedef enum {
    WM_NEW_FROM_PARENT,  /* collective over the parent: dup, split, create,
                            cart, merge; identity from the parent's */
    WM_NEW_FROM_GROUP,   /* Comm_create_group: collective over the group */
    WM_NEW_INTER         /* Intercomm_create: over both local groups */
} wm_new_kind;
/* Prepares the identity of the communicator a creating call on `parent`
 * is about to make (advances the parent's creation counter: call it on
 * every member, whatever the call returns). */
WM__HIDDEN uint64_t wm_comm_next_identity(MPI_Comm parent, wm_new_kind kind,
                                          MPI_Group group, int tag);
/* Defines `comm` (made from `parent` by `call`, identity from
 * wm_comm_next_identity; its own for intercommunicators is computed
 * here) and records CommCreate. Nothing for MPI_COMM_NULL. */
WM__HIDDEN void wm_comm_created(MPI_Comm comm, MPI_Comm parent,
                                uint64_t identity, unsigned call);
/* The local id of a COMM_GROUP of `group`'s members (world ranks),
 * defined anew for each call. */
WM__HIDDEN OTF2_GroupRef wm_group_ref(MPI_Group group);
/* Records CommDestroy of `comm` and forgets it (before MPI_Comm_free). */
WM__HIDDEN void wm_comm_freed(MPI_Comm comm);

/* Forgets every window (MPI_Finalize). */
WM__HIDDEN void wm_win_fini(void);

/* ---- requests (req.c) ------------------------------------------------- */

typedef enum {
    WM_REQ_SEND = 1,     /* MpiIsend ... MpiIsendComplete */
    WM_REQ_RECV,         /* MpiIrecvRequest ... MpiIrecv */
    WM_REQ_COLL,         /* NonBlockingCollectiveRequest ... Complete */
    WM_REQ_OTHER         /* completes silently (Comm_idup, ...) */
} wm_req_kind;

/* What weft knows of a request in flight, or of a persistent one. */
typedef struct wm_req {
    struct wm_req *next; /* req.c: the next request with the same handle */
    uint64_t key;        /* WM_KEY(MPI_Request) */
    uint64_t id;         /* requestID in the trace; 0 while inactive */
    uint8_t kind;        /* wm_req_kind */
    uint8_t persistent;
    uint32_t peer;       /* rank in comm (sends: receiver) */
    int tag;
    uint64_t bytes;      /* sends; receives take them from the status */
    MPI_Datatype type;   /* receives: to count the status's bytes */
    OTF2_CommRef comm;
    OTF2_CollectiveOp op; /* WM_REQ_COLL */
    uint32_t root;
    uint64_t sent, received;
} wm_req;

/* Registers request `r` (copied) once MPI gave its handle; a fresh
 * requestID unless it is a persistent one waiting for MPI_Start.
 * Returns the requestID (0 for an inactive persistent request). Several
 * requests may share a handle: Open MPI and MPICH give every send that
 * completed at once the same one; they complete first in, first out. */
WM__HIDDEN uint64_t wm_req_add(const wm_req *r);
/* Copies the request of `handle` into *out and returns 1, 0 if unknown. */
WM__HIDDEN int wm_req_get(MPI_Request handle, wm_req *out);
/* A persistent request started: gives it a new requestID, returns it
 * (0 if unknown) with *out filled. */
WM__HIDDEN uint64_t wm_req_start(MPI_Request handle, wm_req *out);
/* The request completed: records its completion event from `status`
 * (MpiIsendComplete, MpiIrecv, NonBlockingCollectiveComplete or
 * MpiRequestCancelled) and forgets it unless persistent. */
WM__HIDDEN void wm_req_complete(MPI_Request handle, const MPI_Status *status);
/* The request was tested and is not complete: MpiRequestTest. */
WM__HIDDEN void wm_req_tested(MPI_Request handle);
/* Forgets `handle` (MPI_Request_free of a persistent request). */
WM__HIDDEN void wm_req_drop(MPI_Request handle);

/* ---- the hook prototypes, from the table ------------------------------ */

#define WM_UNPAREN(...) __VA_ARGS__
#define WM(Name, role, op, hook, params, args)                               \
    WM__HIDDEN void wm_pre_##hook(wm_frame *f, WM_UNPAREN params);           \
    WM__HIDDEN void wm_post_##hook(wm_frame *f, int rc, WM_UNPAREN params);
#define WMC(Name, role, op, hook, params, args)                              \
    WM__HIDDEN int wm_do_##hook(wm_frame *f, WM_UNPAREN params);
#include "calls.def"

#endif
