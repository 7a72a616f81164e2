/* om.h - libweft-openmp's internals: the OpenMP recorder for GCC's
 * libgomp, preloaded into an unmodified program that uses it (weft run
 * does so by default; -t openmp).
 *
 * DESIGN
 * libgomp has no tool interface (OMPT); what a program compiled with
 * gcc -fopenmp does in OpenMP goes through libgomp's entry points, the
 * GOMP_* functions the compiler calls and the omp_*_lock functions, so
 * they are what this library wraps, the way OPARI2 instruments the
 * source. Records follow Score-P's (paradigm OPENMP):
 *
 *   encountering thread   ThreadFork(OPENMP, requested threads)
 *   every team thread     ThreadTeamBegin(team)
 *                         Enter "!$omp parallel @file:line" (PARALLEL)
 *                           ... the region's body ...
 *                           Enter/Leave "!$omp implicit barrier"
 *                         Leave, ThreadTeamEnd(team)
 *   encountering thread   ThreadJoin(OPENMP)
 *
 * The team threads run the region's outlined function through a
 * trampoline (parallel.c) given to libgomp in its place. The barrier at
 * a region's end is inside libgomp, where no call shows when a thread
 * leaves it: the trampoline calls GOMP_barrier after the body, which
 * OPARI2 does too, so every thread's wait for the slowest (the load
 * imbalance) is the "implicit barrier" it records, and libgomp's own
 * barrier then finds everyone there.
 *
 * Every other entry point is one line of gomp.def (STYLE habit 13),
 * of a kind saying what it records (wrap.c): a call (a barrier, a
 * single, a taskwait, a taskyield, a cancel or cancellation point, a
 * doacross loop's depend(source)), a construct that spans from one call
 * to another (a dynamic loop from its start, or its first chunk on a
 * thread of a combined `parallel for`, to its end, whose implicit barrier
 * is recorded inside it; sections; a taskgroup; a scope with task
 * reductions, the one GCC calls libgomp for), a critical section, atomic
 * or ordered block (its region spans the block, ThreadAcquireLock and
 * ThreadReleaseLock inside, numbered per lock by lockorder.h), or an OMP
 * lock call. Loops of schedule(static) are computed inline by GCC: they
 * show as the GOMP_barrier that ends them (unless nowait).
 *
 * Regions are named after the construct and, where the program has
 * debug information, the source line of its outlined function or of
 * the call (where.c): "!$omp for @stencil.c:42". A thread-local stack
 * keeps the regions of the constructs a thread is in, so an end call
 * (made inside the runtime's lock, for critical) defines nothing.
 *
 * A doacross loop's waits, GOMP_doacross_wait(first, ...), take one
 * argument per loop of its nest (its ncounts), which only its start call
 * says: each thread remembers it there (om_doacross_n) to forward them,
 * up to OM_DOACROSS_MAX (wrap.c); an encountering thread keeps it across
 * a parallel region, whose own loops change it (parallel.c).
 *
 * Host teams (GOMP_teams_reg, parallel.c): libgomp runs each team's body
 * in turn on the encountering thread, through a trampoline that records
 * the team's region ("!$omp teams") around it, so that the parallel
 * regions a team forks nest in it.
 *
 * Tasks (tasks.c): GOMP_task gets a trampoline too, and the task's data
 * behind a tag naming the task; the creating thread records
 * ThreadTaskCreate, the running one ThreadTaskSwitch, the task's region
 * and ThreadTaskComplete.
 *
 * Teams (team.c): a Comm of paradigm OPENMP per team, the same for
 * every region of an outermost team with the same encountering thread
 * and size, a fresh one for nested teams; its group is empty when
 * defined (the threads to come are not known then) and each thread, as
 * it joins, tells weftd its number (TeamMember), which gives the archive's
 * group its members. Tasks are named by their team, the creating
 * thread's number in it and that thread's generation number.
 *
 * Session (session.c): as libweft-io's, the first wrapped call opens
 * libweft's session from the environment (or finds libweft-mpi's); a
 * forked child records nothing.
 */
#ifndef WEFT_OM_H
#define WEFT_OM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_GeneralDefinitions.h>

#include "recorder.h"
#include "weft.h"

#define OM_HIDDEN __attribute__((visibility("hidden")))
#define OM_EXPORT __attribute__((visibility("default")))
#define OM_TLS __attribute__((tls_model("initial-exec")))
#define OM_LIKELY(x) __builtin_expect(!!(x), 1)
#define OM_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The code that called the wrapper. */
#define OM_CALLER __builtin_return_address(0)

/* The constructs: a region name prefix and role each (where.c). */
enum om_construct {
    OM_PARALLEL, OM_IMPLICIT_BARRIER, OM_BARRIER, OM_LOOP, OM_SECTIONS,
    OM_SINGLE, OM_CRITICAL, OM_ATOMIC, OM_ORDERED, OM_TASKWAIT,
    OM_TASKGROUP, OM_SET_LOCK, OM_UNSET_LOCK, OM_TEST_LOCK,
    OM_SET_NEST_LOCK, OM_UNSET_NEST_LOCK, OM_TEST_NEST_LOCK,
    OM_TASK, OM_TASK_UNTIED, OM_TASK_CREATE, OM_WORKSHARE, OM_TASKLOOP,
    OM_TASKYIELD, OM_CANCEL, OM_CANCELLATION_POINT, OM_DOACROSS_POST,
    OM_DOACROSS_WAIT, OM_SCOPE, OM_TEAMS,
    OM__NCONSTRUCTS
};

/* One id per entry of gomp.def, then the hand-written wrappers. */
enum om_call_id {
#define OMV(name, cons, kind, params, args, lock) OM_##name,
#define OMR(name, cons, kind, ret, params, args, lock) OM_##name,
#include "gomp.def"
    OM__COUNT
};

/* Recording state of the process (session.c). */
enum { OM_ST_INIT, OM_ST_STARTING, OM_ST_MPI, OM_ST_ON, OM_ST_OFF };
extern atomic_int om_state OM_HIDDEN;

/* Opens the session on first use, or finds libweft-mpi's open (see
 * DESIGN). 1 when records may be made now. Guard raised. */
OM_HIDDEN int om_session_start(void);

/* 1 when a wrapper records: not inside libweft or another wrapper, the
 * session open; the guard is raised then (weft__recorder_begin), for
 * weft__recorder_end. */
static inline int om_begin(weft__rguard *g)
{
    if (!weft__recorder_begin(g))
        return 0;
    if (OM_LIKELY(atomic_load_explicit(&om_state, memory_order_relaxed) ==
                  OM_ST_ON) ||
        om_session_start())
        return 1;
    weft__recorder_end(g);
    return 0;
}

/* The region of construct `cons` met at code address `pc` (an outlined
 * function, or a wrapper's return address), `lock` naming a critical
 * section's lock (GOMP_critical_name_start's argument, else NULL).
 * Defined on first use, named with the source line when the program's
 * debug information says it. OTF2_UNDEFINED_REGION when out of memory.
 * Guard raised. */
OM_HIDDEN OTF2_RegionRef om_region(enum om_construct cons, const void *pc,
                                   const void *lock);

/* 1 once LLVM's runtime (libomp) started this library as its OMPT tool
 * (ompt.c): the runtime says what happens, and the GOMP_ wrappers (libomp
 * has them too, for GCC's code) record nothing. */
extern atomic_int om_ompt OM_HIDDEN;
/* A thread ends (libweft's thread exit hook, under OMPT): the implicit
 * tasks it is still in are closed at their region's end. libomp tells a
 * team thread its last region's end only as it wakes the thread again,
 * and the hard pause before the session closes (session.c) reaps some
 * threads of its pool without telling it (libomp 14, nested teams on a
 * loaded machine). */
OM_HIDDEN void om_ompt_thread_exit(void);
/* Waits, at most ms milliseconds, until no team thread is inside a
 * recorded implicit task: after the hard pause, for the threads it woke
 * to record their last region's end (session.c). */
OM_HIDDEN void om_ompt_wait_team(unsigned ms);
/* At exit, before libomp's own exit handler (ompt.c registers it as
 * libomp starts its tool): what libweft's before-close hook does
 * (session.c), while libomp still can. */
OM_HIDDEN void om_ompt_at_exit(void);

/* > 0 while this thread is in omp_test_lock or omp_test_nest_lock under
 * OMPT (wrap.c): libomp 14 tells a test as it tells a set. */
extern __thread int om_ompt_testing OM_TLS OM_HIDDEN;

/* The number of loops (ncounts) of the doacross loop this thread is in,
 * from its start call; 0 before any (wrap.c, see DESIGN). */
extern __thread unsigned om_doacross_n OM_TLS OM_HIDDEN;

/* ---- teams (team.c) ---------------------------------------------------- */

/* A cache line's bytes: what every thread of a team writes or reads of
 * another thread's memory sits in lines of its own, so that the owner's
 * own records do not miss in its cache each time (false sharing). */
#define OM_LINE 64

/* A team as its encountering thread forks it (what it gives its threads
 * holds one): its threads take their Comm from it. Each joining thread
 * writes it: a line of its own. */
typedef struct om_team {
    OTF2_CommRef parent;          /* the encountering thread's team */
    uint32_t creator;             /* its location index */
    const _Atomic uint64_t *births;   /* the threads it started */
    _Atomic uint64_t chosen;      /* the Comm, once a thread chose it */
} __attribute__((aligned(OM_LINE))) om_team;

/* Readies t for a team the calling thread forks. Guard raised. */
OM_HIDDEN void om_team_fork(om_team *t);
/* The Comm of team t, which the calling thread joins as thread `index`
 * of `size`; weftd is told it is a member. OTF2_UNDEFINED_COMM when out
 * of memory. Guard raised. */
OM_HIDDEN OTF2_CommRef om_team_join(om_team *t, uint32_t size,
                                    uint32_t index);
/* The calling thread's number in its team (0 outside any). */
OM_HIDDEN uint32_t om_thread_num(void);
/* This thread's team (OTF2_UNDEFINED_COMM outside any region); makes t
 * its team, returning the one it replaces. */
OM_HIDDEN OTF2_CommRef om_team_get(void);
OM_HIDDEN OTF2_CommRef om_set_team(OTF2_CommRef t);

/* The team this thread works in: its innermost region's, else its
 * implicit team as an initial thread (a Comm of its own, "OpenMP initial
 * thread"). OTF2_UNDEFINED_COMM when out of memory. Guard raised. */
OM_HIDDEN OTF2_CommRef om_team_now(void);

/* ---- the constructs a thread is in (wrap.c) ---------------------------- */

/* Enters the region of construct cons at pc (lock: om_region) at t on
 * this thread and keeps it. */
OM_HIDDEN void om_open(enum om_construct cons, const void *pc,
                       const void *lock, uint64_t t);
/* The construct this thread is in, innermost (OM__NCONSTRUCTS: none),
 * and the code address it was met at. */
OM_HIDDEN enum om_construct om_innermost(void);
OM_HIDDEN const void *om_innermost_pc(void);
/* Leaves the innermost construct at t (nothing when there is none). */
OM_HIDDEN void om_close(uint64_t t);
/* How many constructs this thread is in; om_close_to leaves those beyond
 * depth at t (a region's body that returned inside one). */
OM_HIDDEN unsigned om_depth(void);
OM_HIDDEN void om_close_to(unsigned depth, uint64_t t);

/* ---- locks (wrap.c, lockorder.h) --------------------------------------- */

OM_HIDDEN void om_lock_acquired(const void *obj, uint64_t t);
OM_HIDDEN void om_lock_releasing(const void *obj, uint64_t t);

/* ---- the real functions ------------------------------------------------- */

/* Resolves every wrapped function's real one (dlsym RTLD_NEXT), at load
 * (wrap.c: gomp.def's and the doacross waits; parallel.c: the parallel
 * and teams entry points and the omp_* queries it uses). */
OM_HIDDEN void om_resolve_all(void);
OM_HIDDEN void om_parallel_resolve(void);
OM_HIDDEN void om_tasks_resolve(void);
OM_HIDDEN void om_team_resolve(void);
/* libgomp's GOMP_barrier, for the implicit barrier a region's trampoline
 * records (NULL if libgomp is not there). */
OM_HIDDEN void om_real_barrier(void);

#endif
