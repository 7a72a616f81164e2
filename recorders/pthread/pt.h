/* pt.h - libweft-pthread's internals: the pthread recorder, preloaded
 * into an unmodified program (weft run -t pthread).
 *
 * DESIGN
 * Every wrapped lock, condition, barrier and once function is one entry
 * of calls.def (STYLE habit 13); wrap.c generates from it the exported
 * functions, their regions (named after the call, paradigm PTHREAD) and
 * the pointers to the real ones. A wrapper is
 *
 *     pt_begin: Enter(region) [+ ThreadReleaseLock]     guard raised
 *     the real call                                     guard lowered
 *     pt_end:   [ThreadAcquireLock +] Leave(region)     guard raised
 *
 * The guard (libweft's weft__inside, client/recorder.h) is raised only
 * while recording, not during the real call: pthread_once runs the
 * program's init routine there, and a signal handler may run while a
 * thread waits for a lock; both are recorded like any other code. A
 * wrapper called with the guard raised - libweft's own mutexes and its
 * sender thread, or a signal arriving while a record is made - calls the
 * real function and records nothing. errno is the program's around the
 * real call and restored after recording.
 *
 * Threads (thread.c): pthread_create records ThreadCreate with a new
 * sequence number of the process's thread contingent and starts the
 * thread in a trampoline that gives it its location
 * (weft__recorder_attach), records ThreadBegin, runs the start routine
 * and records ThreadEnd when it returns, calls pthread_exit or is
 * cancelled (a cleanup handler); pthread_join records ThreadWait with the
 * joined thread's number. Locks (lock.c): lock ids from lockmap.h, one
 * acquisition counter per lock, and per thread the orders of the locks
 * it holds, so a release carries its acquisition's order.
 *
 * Session (thread.c): the first wrapped call of the process (in a
 * constructor before main, or later) opens libweft's session from the
 * environment, so a program that never calls one (a single-threaded tool
 * run along the way) makes no trace - unless libweft-mpi is loaded too,
 * which opens the session at MPI_Init with the rank; then records are
 * made while that session is connected. A forked child records nothing
 * (its parent's session, or none). exec closes the session first
 * (recorders/exec.c).
 */
#ifndef WEFT_PT_H
#define WEFT_PT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#include "recorder.h"
#include "weft.h"

#define PT_HIDDEN __attribute__((visibility("hidden")))
#define PT_EXPORT __attribute__((visibility("default")))
#define PT_TLS __attribute__((tls_model("initial-exec")))
#define PT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* One id per entry of calls.def, then the hand-written wrappers. */
enum pt_call_id {
#define PT(name, role, kind, params, args, lock, first) PT_##name,
#include "calls.def"
    PT_pthread_create, PT_pthread_join, PT_pthread_tryjoin_np,
    PT_pthread_timedjoin_np, PT_pthread_clockjoin_np,
    PT__COUNT
};

/* Recording state of the process (thread.c). */
enum { PT_ST_INIT, PT_ST_OPENING, PT_ST_ON, PT_ST_MPI, PT_ST_OFF };
extern _Atomic int pt_state PT_HIDDEN;

/* A wrapped call in progress, on the wrapper's stack. */
typedef struct pt_call {
    OTF2_RegionRef region;
    int saved_errno;        /* the program's errno */
} pt_call;

/* Opens the session on first use (see DESIGN). Returns 1 when records
 * may be made now. Guard raised. */
PT_HIDDEN int pt_ready_slow(void);

/* 1 when this call is to be recorded: not inside libweft or a record,
 * and the session is open. */
static inline int pt_recording(void)
{
    int st;

    if (PT_UNLIKELY(weft__inside))
        return 0;
    st = atomic_load_explicit(&pt_state, memory_order_relaxed);
    if (PT_LIKELY(st == PT_ST_ON))
        return 1;
    if (st == PT_ST_OFF)
        return 0;
    return -1; /* ask pt_ready_slow (under the guard) */
}

/* Raises the guard and saves errno. */
static inline void pt_guard(pt_call *c)
{
    c->saved_errno = errno;
    weft__inside++;
}

/* Lowers the guard and gives errno back. */
static inline void pt_unguard(pt_call *c)
{
    weft__inside--;
    errno = c->saved_errno;
}

/* The code that called the wrapper: a wrapper's return address. */
#define PT_CALLER __builtin_return_address(0)

/* Starts call `call` made by code at `caller` (PT_CALLER): returns 1 with
 * Enter recorded at *t (and the guard raised: the caller records what
 * comes before the real call, then pt_pause), 0 to just call the real
 * function - also when the MPI stack or an allocator made the call
 * (weft__recorder_foreign). */
PT_HIDDEN int pt_begin(pt_call *c, unsigned call, uint64_t *t,
                       const void *caller);
/* Lowers the guard before the real call. */
static inline void pt_pause(pt_call *c)
{
    pt_unguard(c);
}
/* After the real call: raises the guard and returns the time of the
 * Leave (also that of what the caller records now); then pt_end. */
static inline uint64_t pt_resume(pt_call *c)
{
    c->saved_errno = errno;
    weft__inside++;
    return weft_time();
}
/* Records Leave at t, lowers the guard, restores errno. */
PT_HIDDEN void pt_end(pt_call *c, uint64_t t);
/* Records at t the Leave of every recorded call this thread is still in
 * (it ends inside one: cancelled in a condition wait, pthread_exit in a
 * once routine). Guard raised. */
PT_HIDDEN void pt_leave_open(uint64_t t);

/* Reads WEFT_FILTER (weft__recorder_filter) once the session is open. */
PT_HIDDEN void pt_filter_setup(void);
/* 1 when WEFT_FILTER excludes `call`: called, nothing recorded. */
PT_HIDDEN int pt_excluded(unsigned call);
/* The name of `call` (calls.def), also its region's. */
PT_HIDDEN const char *pt_call_name(unsigned call);
/* The region of `call` (defined on first use), OTF2_UNDEFINED_REGION
 * when the session is not open. */
PT_HIDDEN OTF2_RegionRef pt_region(unsigned call);
/* Defines the region of every call now, as the session opens: defining
 * one allocates, and a call may come while the program's own malloc
 * holds the lock it unlocks. */
PT_HIDDEN void pt_define_regions(void);
/* The real function `name` (dlsym RTLD_NEXT, the default version of the
 * condition variable functions); NULL if there is none. */
PT_HIDDEN void *pt_real(const char *name);
/* Resolve the real function of every wrapper now, at load (wrap.c: the
 * calls.def ones; thread.c: create, setname and the joins). Resolving
 * on first use takes ld.so's lock (dlsym): libweft's sender thread,
 * signalling a condition under libweft's mutex, would then wait for a
 * thread that holds ld.so's lock in a constructor run by dlopen and
 * records, i.e. waits for that mutex (ar loading its plugin under
 * `weft run -t pthread` hung so). */
PT_HIDDEN void pt_resolve_all(void);
PT_HIDDEN void pt_thread_resolve(void);

/* ---- locks (lock.c) ---------------------------------------------------- */

/* Records ThreadAcquireLock of lock object `obj` at t on this thread. */
PT_HIDDEN void pt_lock_acquired(const void *obj, uint64_t t);
/* Records ThreadReleaseLock of `obj` at t: the order of this thread's
 * acquisition of it, else its last acquisition's. 1 if it recorded one,
 * 0 if the acquisition was not recorded. */
PT_HIDDEN int pt_lock_releasing(const void *obj, uint64_t t);

/* ---- counted locks (count.c) ------------------------------------------- */

/* Which kinds of calls.def are counted: a lock call (its try first) and
 * an unlock (of a lock counted). */
#define PT_COUNTS_ACQUIRE 1
#define PT_COUNTS_RELEASE 1
#define PT_COUNTS_CWAIT 0
#define PT_COUNTS_NONE 0
#define PT_COUNTS_ONCE 1
/* What pt_count_begin and pt_count_end are told of a kind: an
 * acquisition (0), a release (1), or a once whose `first` says done (2:
 * nothing held, nothing to pair). */
#define PT_RELEASES_ACQUIRE 0
#define PT_RELEASES_RELEASE 1
#define PT_RELEASES_CWAIT 0
#define PT_RELEASES_NONE 0
#define PT_RELEASES_ONCE 2

/* Reads WEFT_LOCKS and WEFT_LOCK_THRESHOLD_NS (weft__recorder_countpolicy)
 * and defines the metrics of the counts, once the session is open.
 * Guard raised. */
PT_HIDDEN void pt_count_setup(void);
/* Starts call `call` of lock `lock` made by code at `caller` the counted
 * way: 1 with the guard raised when locks are counted, the call is to be
 * recorded and - for an unlock (`release` 1) - this thread counted the
 * lock's acquisition (then forgotten); else 0, guard as it was. */
PT_HIDDEN int pt_count_begin(pt_call *c, unsigned call, const void *caller,
                             const void *lock, int release);
/* After pt_count_begin's `first` function returned rc (it started at
 * t0): counts the call, or records it as it happened (a lock got at once
 * but slowly, or no room to remember it), and returns 1 with the guard
 * lowered; 0 with the guard lowered when the lock was busy, or (release
 * 2) the once was not done (the caller records the call as when locks
 * are not counted). */
PT_HIDDEN int pt_count_end(pt_call *c, unsigned call, const void *lock,
                           int rc, uint64_t t0, int release);
/* A condition wait releases `lock`: forgets that it was counted (1), or
 * 0 if it was not. Guard raised. */
PT_HIDDEN int pt_count_drop(const void *lock);
/* Records at t the counts of this thread since its last flush (a Metric
 * event, proto/counts.h) and zeroes them. Guard raised, may record. */
PT_HIDDEN void pt_count_flush(uint64_t t);

/* ---- threads (thread.c) ------------------------------------------------ */

/* The contingent of this process's threads (defined on first use),
 * OTF2_UNDEFINED_COMM when the session is not open. */
PT_HIDDEN OTF2_CommRef pt_contingent(void);

#endif
