/* ompt.c - libweft-openmp as the OMPT tool of LLVM's OpenMP runtime
 * (libomp), which calls ompt_start_tool of the first library that has
 * it, this one preloaded (see om.h).
 *
 * The runtime says what happens through callbacks, so nothing is
 * wrapped: the same records as with libgomp, from
 *   parallel_begin/end    ThreadFork/ThreadJoin on the encountering
 *                         thread
 *   implicit_task         ThreadTeamBegin, "!$omp parallel" ... Leave,
 *                         ThreadTeamEnd on each team thread
 *   sync_region           barriers ("!$omp barrier", and the implicit
 *                         ones at the end of a region or a worksharing
 *                         construct: libomp's own, timed where they are),
 *                         taskwait, taskgroup
 *   work                  loops of every schedule, sections, single (on
 *                         every thread: the one that runs the block, and
 *                         the others until they pass it), workshare,
 *                         taskloop
 *   mutex_acquire/        critical, atomic and ordered blocks (their
 *   acquired/released,    region spans the block, the lock events
 *   nest_lock             inside) and the omp locks (a region named after
 *                         the call around the lock event; a test that
 *                         failed is not told: libomp says nothing of it)
 *   task_create,          ThreadTaskCreate in "!$omp create task", and
 *   task_schedule         where the task runs ThreadTaskSwitch, "!$omp
 *                         task" ... ThreadTaskComplete, the switch back
 *   cancel                "!$omp cancel" (one that cancels), "!$omp
 *                         cancellation point" (one that finds its region
 *                         cancelled), at once: libomp tells a moment
 *   dependences           a doacross loop's "!$omp ordered depend(source)"
 *                         and "depend(sink)", at once too
 *   parallel_begin and    of a host teams league: "!$omp teams" around
 *   implicit_task         each team's initial task, on its thread (no
 *                         fork: as with libgomp)
 * (libomp 14 tells no taskyield: a task run there shows as its switch.)
 * The runtime's implicit barriers are timed where libomp waits, not by
 * an extra barrier as with libgomp; one after a worksharing construct
 * follows its region instead of closing it.
 *
 * What a region keeps for its team threads lives in its encountering
 * thread's thread-local stack (parallel_data points there: the region
 * ends on that thread, innermost first); a thread's implicit tasks keep
 * theirs in its own stack; an explicit task's tag is allocated at its
 * creation (outside the runtime's locks) and freed when it completes.
 */
#include <omp-tools.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "om.h"

/* Parallel regions one thread may begin inside one another, and
 * implicit tasks it may be in, with their records kept. */
#define OM_OMPT_NEST 16

/* When a region ended on its encountering thread, for the other team
 * threads: libomp tells them the end of the region's last barrier and
 * their implicit task's end only as it wakes them up again (for a
 * later region, or as the program ends), and they take that time (the
 * barrier's true end is no later). The last OM_ENDS regions at each
 * depth of an encountering thread, by their number. */
#define OM_ENDS 16
typedef struct om_end {
    _Atomic uint64_t seq;           /* the region's number + 1; 0: none */
    _Atomic uint64_t t;
} om_end;

/* A region: what its team threads need. */
typedef struct om_oregion {
    om_team team;
    const void *pc;                 /* where it is in the program */
    int recorded;
    uint64_t seq;                   /* its number on its thread */
    om_end *ends;                   /* its depth's, on its thread */
} om_oregion;

/* What a task's data points to (ptr), by its first field. */
enum { OM_TASK_IMPLICIT = 1, OM_TASK_EXPLICIT };

typedef struct om_itask {
    int kind;                       /* OM_TASK_IMPLICIT */
    OTF2_CommRef team, saved_team;
    OTF2_RegionRef region;
    const void *pc;
    unsigned index;                 /* 0: the encountering thread */
    uint64_t seq;                   /* its region's, with ends: */
    om_end *ends;
    unsigned depth;                 /* om_depth() as it began */
    int open;                       /* its Enter recorded, not its Leave */
} om_itask;

typedef struct om_etask {
    int kind;                       /* OM_TASK_EXPLICIT */
    int started;
    int untied, away;               /* away: an untied one, suspended */
    OTF2_CommRef team;
    OTF2_RegionRef region;
    uint32_t creator, gen;
} om_etask;

/* This thread's own (first) and what its teams' other threads read
 * (region, ends): in lines apart (om.h's OM_LINE). */
static __thread struct {
    unsigned nregion;
    uint64_t seq;                   /* regions begun here */
    om_itask itask[OM_OMPT_NEST];
    unsigned nitask;
    uint32_t gen;
    om_oregion region[OM_OMPT_NEST];
    _Alignas(OM_LINE) om_end ends[OM_OMPT_NEST][OM_ENDS];
} T OM_TLS;

static ompt_set_callback_t set_callback;

/* ---- host teams ---------------------------------------------------------- */

/* `#pragma omp teams` on the host: libomp forks a league, one thread per
 * team, each its team's initial thread (an implicit task flagged
 * ompt_task_initial). As with libgomp (one "!$omp teams" region per
 * team's body, no fork: see om.h), each records the region of its team
 * around its initial task, and the encountering thread no fork: the
 * parallel regions the teams fork nest in it. */
#define OM_TASK_LEAGUE (OM_TASK_EXPLICIT + 1)

/* The league the encountering thread forks (one at a time: teams are
 * outermost), which parallel_data points to. */
static __thread struct om_league {
    const void *pc;
} league_ OM_TLS;

/* The team of a league this thread runs, which its initial task's data
 * points to (kind first, as om_itask's and om_etask's). */
static __thread struct om_lteam {
    int kind;                       /* OM_TASK_LEAGUE */
    OTF2_RegionRef region;
} lteam_ OM_TLS;

static void league_begin(ompt_data_t *parallel, const void *pc)
{
    league_.pc = pc;
    parallel->ptr = &league_;
}

/* An initial task begins or ends: a league team's, or the thread's own
 * at its start and end (its parallel_data no league). */
static void league_task(ompt_scope_endpoint_t endpoint,
                        ompt_data_t *parallel, ompt_data_t *task)
{
    weft__rguard g;

    if (endpoint == ompt_scope_begin) {
        const struct om_league *l = parallel ? parallel->ptr : NULL;
        task->ptr = NULL;
        if (!l || !om_begin(&g))
            return;
        lteam_.kind = OM_TASK_LEAGUE;
        lteam_.region = om_region(OM_TEAMS, l->pc, NULL);
        if (lteam_.region != OTF2_UNDEFINED_REGION) {
            weft_evt_Enter(NULL, weft_time(), lteam_.region);
            task->ptr = &lteam_;
        }
        weft__recorder_end(&g);
        return;
    }
    if (task->ptr != &lteam_)
        return;
    task->ptr = NULL;
    if (weft__recorder_begin(&g)) {
        weft_evt_Leave(NULL, weft_time(), lteam_.region);
        weft__recorder_end(&g);
    }
}

/* ---- regions and teams --------------------------------------------------- */

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame,
                              ompt_data_t *parallel, unsigned requested,
                              int flags, const void *pc)
{
    om_oregion *r = NULL;
    weft__rguard g;

    (void)task, (void)frame;
    if (flags & ompt_parallel_league) { /* host teams: no team of ours */
        league_begin(parallel, pc);
        return;
    }
    parallel->ptr = NULL;
    if (T.nregion < OM_OMPT_NEST) {
        r = &T.region[T.nregion];
        r->pc = pc;
        r->recorded = 0;
        r->seq = ++T.seq;
        r->ends = T.ends[T.nregion];
        parallel->ptr = r;
    }
    T.nregion++;
    if (r && om_begin(&g)) {
        om_team_fork(&r->team);
        weft_evt_ThreadFork(NULL, weft_time(), OTF2_PARADIGM_OPENMP,
                            requested);
        r->recorded = 1;
        weft__recorder_end(&g);
    }
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task,
                            int flags, const void *pc)
{
    const om_oregion *r = parallel->ptr;
    weft__rguard g;

    (void)task, (void)pc;
    if (flags & ompt_parallel_league)
        return;
    if (T.nregion > 0)
        T.nregion--;
    if (r) {
        om_end *e = &r->ends[r->seq % OM_ENDS];
        atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
        atomic_store_explicit(&e->t, weft_time(), memory_order_relaxed);
        atomic_store_explicit(&e->seq, r->seq + 1, memory_order_release);
    }
    if (r && r->recorded && weft__recorder_begin(&g)) {
        weft_evt_ThreadJoin(NULL, weft_time(), OTF2_PARADIGM_OPENMP);
        weft__recorder_end(&g);
    }
}

/* Team threads (not encountering threads) inside a recorded implicit
 * task, all threads together: what om_ompt_wait_team waits for. */
static atomic_int open_workers;

static void itask_opened(om_itask *it)
{
    it->open = 1;
    if (it->index != 0)
        atomic_fetch_add(&open_workers, 1);
}

static void itask_closed(om_itask *it)
{
    it->open = 0;
    if (it->index != 0)
        atomic_fetch_sub(&open_workers, 1);
}

/* See om.h. */
void om_ompt_wait_team(unsigned ms)
{
    struct timespec tick = { 0, 1000000 };

    for (unsigned i = 0; i < ms && atomic_load(&open_workers) > 0; i++)
        nanosleep(&tick, NULL);
}

/* now, or, on a team thread other than the encountering one whose
 * region ended there already, when it ended (see om_end), or when this
 * thread last recorded if that is later (libweft refuses time going
 * back). */
static uint64_t ended_at(const om_itask *it, uint64_t now)
{
    const om_end *e;
    uint64_t s, t;

    if (!it || it->index == 0 || !it->ends)
        return now;
    e = &it->ends[it->seq % OM_ENDS];
    s = atomic_load_explicit(&e->seq, memory_order_acquire);
    t = atomic_load_explicit(&e->t, memory_order_relaxed);
    if (s != it->seq + 1 ||
        atomic_load_explicit(&e->seq, memory_order_acquire) != s)
        return now;
    if (t < weft__recorder_last_time()) /* recorded since (its sleep) */
        t = weft__recorder_last_time();
    return t < now ? t : now;
}

/* This thread's innermost implicit task with its records, or NULL. */
static const om_itask *innermost_itask(void)
{
    return T.nitask > 0 && T.nitask <= OM_OMPT_NEST
               ? &T.itask[T.nitask - 1]
               : NULL;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint,
                             ompt_data_t *parallel, ompt_data_t *task,
                             unsigned actual, unsigned index, int flags)
{
    om_itask *it;
    weft__rguard g;
    uint64_t t;

    if (flags & ompt_task_initial) { /* a team's of host teams, or none */
        league_task(endpoint, parallel, task);
        return;
    }
    if (endpoint == ompt_scope_begin) {
        om_oregion *r = parallel ? parallel->ptr : NULL;
        unsigned i = T.nitask++;
        task->ptr = NULL;
        if (i < OM_OMPT_NEST)
            T.itask[i].open = 0;
        if (i >= OM_OMPT_NEST || !r || !r->recorded || !om_begin(&g))
            return;
        it = &T.itask[i];
        it->kind = OM_TASK_IMPLICIT;
        it->pc = r->pc;
        it->index = index;
        it->seq = r->seq;
        it->ends = r->ends;
        it->team = om_team_join(&r->team, actual, index);
        it->region = om_region(OM_PARALLEL, r->pc, NULL);
        if (it->team != OTF2_UNDEFINED_COMM &&
            it->region != OTF2_UNDEFINED_REGION) {
            t = weft_time();
            weft_evt_ThreadTeamBegin(NULL, t, it->team);
            weft_evt_Enter(NULL, t, it->region);
            it->saved_team = om_set_team(it->team);
            it->depth = om_depth();
            itask_opened(it);
            task->ptr = it;
        }
        weft__recorder_end(&g);
        return;
    }
    if (T.nitask > 0)
        T.nitask--;
    it = task->ptr;
    if (!it || it->kind != OM_TASK_IMPLICIT || !it->open)
        return;
    task->ptr = NULL;
    itask_closed(it);
    om_set_team(it->saved_team);
    if (weft__recorder_begin(&g)) {
        t = ended_at(it, weft_time());
        weft_evt_Leave(NULL, t, it->region);
        weft_evt_ThreadTeamEnd(NULL, t, it->team);
        weft__recorder_end(&g);
    }
}

/* Closes the implicit tasks this thread is still in, innermost first, at
 * their region's end (the time now when it did not end). */
static void close_itasks(void)
{
    uint64_t now = weft_time(), t;

    while (T.nitask > 0) {
        unsigned i = --T.nitask;
        om_itask *it = i < OM_OMPT_NEST ? &T.itask[i] : NULL;

        if (!it || !it->open)
            continue;
        itask_closed(it);
        t = ended_at(it, now);
        om_close_to(it->depth, t);
        weft_evt_Leave(NULL, t, it->region);
        weft_evt_ThreadTeamEnd(NULL, t, it->team);
        om_set_team(it->saved_team);
    }
}

/* See om.h. */
void om_ompt_thread_exit(void)
{
    weft__rguard g;

    if (!atomic_load(&om_ompt) || T.nitask == 0)
        return;
    if (weft__inside) { /* libweft's thread end: inside libweft already */
        close_itasks();
    } else if (weft__recorder_begin(&g)) {
        close_itasks();
        weft__recorder_end(&g);
    }
}

/* The code address a construct of this thread's innermost implicit task
 * is named after when the runtime gives none (the implicit barrier at a
 * region's end): its region's. */
static const void *region_pc(void)
{
    const om_itask *it = innermost_itask();

    return it ? it->pc : NULL;
}

/* Enters (begin) or leaves (end) the region of construct cons at pc on
 * this thread. */
static void scope(enum om_construct cons, ompt_scope_endpoint_t endpoint,
                  const void *pc, const void *lock)
{
    weft__rguard g;

    if (endpoint == ompt_scope_begin) {
        if (om_begin(&g)) {
            om_open(cons, pc, lock, weft_time());
            weft__recorder_end(&g);
        }
    } else if (om_innermost() == cons && weft__recorder_begin(&g)) {
        om_close(weft_time());
        weft__recorder_end(&g);
    }
}

static void on_sync_region(ompt_sync_region_t kind,
                           ompt_scope_endpoint_t endpoint,
                           ompt_data_t *parallel, ompt_data_t *task,
                           const void *pc)
{
    weft__rguard g;
    uint64_t t;

    (void)parallel, (void)task;
    /* The end of a region's last barrier on a team thread, told late
     * (see om_end): at the time the region ended. Any other implicit
     * barrier ends at `now`, taken before the region's end was looked
     * for: a region that ends after that look has its ThreadJoin after
     * `now`, and this thread's ThreadTeamEnd, no earlier than its last
     * record, stays before that ThreadJoin (a time taken after the look
     * could fall after it: 230 ns after, once in a sanitized run). */
    if (endpoint == ompt_scope_end &&
        (kind == ompt_sync_region_barrier_implicit ||
         kind == ompt_sync_region_barrier_implicit_parallel) &&
        om_innermost() == OM_IMPLICIT_BARRIER) {
        t = ended_at(innermost_itask(), weft_time());
        if (weft__recorder_begin(&g)) {
            om_close(t);
            weft__recorder_end(&g);
        }
        return;
    }
    switch (kind) {
    case ompt_sync_region_barrier_explicit:
    case ompt_sync_region_barrier:
        scope(OM_BARRIER, endpoint, pc, NULL);
        break;
    case ompt_sync_region_barrier_implicit_parallel:
        /* named after its region (libomp gives its own address on the
         * team's other threads) */
        scope(OM_IMPLICIT_BARRIER, endpoint, region_pc(), NULL);
        break;
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implementation:
        /* (libomp 14 says barrier_implicit for every implicit barrier,
         * without an address on the team's other threads at a region's
         * end: named after the region then) */
        scope(OM_IMPLICIT_BARRIER, endpoint, pc ? pc : region_pc(), NULL);
        break;
    case ompt_sync_region_taskwait:
        scope(OM_TASKWAIT, endpoint, pc, NULL);
        break;
    case ompt_sync_region_taskgroup:
        scope(OM_TASKGROUP, endpoint, pc, NULL);
        break;
    default: /* reductions, teams: not told */
        break;
    }
}

/* The loops of OpenMP 5.2 (libomp 18 and later tells a loop's schedule;
 * omp-tools.h of libomp 14 has no names for them). */
enum {
    OM_WORK_LOOP_STATIC = 10, OM_WORK_LOOP_DYNAMIC, OM_WORK_LOOP_GUIDED,
    OM_WORK_LOOP_OTHER
};

static void on_work(ompt_work_t kind, ompt_scope_endpoint_t endpoint,
                    ompt_data_t *parallel, ompt_data_t *task,
                    uint64_t count, const void *pc)
{
    (void)parallel, (void)task, (void)count;
    switch ((int)kind) {
    case ompt_work_loop:
    case OM_WORK_LOOP_STATIC:
    case OM_WORK_LOOP_DYNAMIC:
    case OM_WORK_LOOP_GUIDED:
    case OM_WORK_LOOP_OTHER:
        scope(OM_LOOP, endpoint, pc, NULL);
        break;
    case ompt_work_sections:
        scope(OM_SECTIONS, endpoint, pc, NULL);
        break;
    case ompt_work_single_executor:
    case ompt_work_single_other:
        scope(OM_SINGLE, endpoint, pc, NULL);
        break;
    case ompt_work_workshare:
        scope(OM_WORKSHARE, endpoint, pc, NULL);
        break;
    case ompt_work_taskloop:
        scope(OM_TASKLOOP, endpoint, pc, NULL);
        break;
    default: /* distribute, scope: not told */
        break;
    }
}

/* ---- mutexes ------------------------------------------------------------- */

/* The construct whose region spans a block held under a mutex of this
 * kind; OM__NCONSTRUCTS for a lock's. */
static enum om_construct block_of(ompt_mutex_t kind)
{
    switch (kind) {
    case ompt_mutex_critical: return OM_CRITICAL;
    case ompt_mutex_atomic: return OM_ATOMIC;
    case ompt_mutex_ordered: return OM_ORDERED;
    default: return OM__NCONSTRUCTS;
    }
}

/* A lock call's region around one lock event at once (after the fact:
 * a test that got the lock, a release). */
static void lock_call(enum om_construct cons, const void *lock, int acquire)
{
    OTF2_RegionRef r;
    weft__rguard g;
    uint64_t t;

    if (!om_begin(&g))
        return;
    r = om_region(cons, NULL, NULL);
    if (r != OTF2_UNDEFINED_REGION) {
        t = weft_time();
        weft_evt_Enter(NULL, t, r);
        if (acquire)
            om_lock_acquired(lock, t);
        else
            om_lock_releasing(lock, t);
        weft_evt_Leave(NULL, t, r);
    }
    weft__recorder_end(&g);
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned hint,
                             unsigned impl, ompt_wait_id_t id,
                             const void *pc)
{
    enum om_construct b = block_of(kind);
    const void *lock = (const void *)(uintptr_t)id;

    (void)hint, (void)impl;
    if (b != OM__NCONSTRUCTS)
        scope(b, ompt_scope_begin, pc, b == OM_CRITICAL ? lock : NULL);
    else if (om_ompt_testing) /* told if it gets the lock */
        return;
    else if (kind == ompt_mutex_lock)
        scope(OM_SET_LOCK, ompt_scope_begin, NULL, NULL);
    else if (kind == ompt_mutex_nest_lock)
        scope(OM_SET_NEST_LOCK, ompt_scope_begin, NULL, NULL);
}

/* The lock got: its event, and a lock call's region left. */
static void acquired(enum om_construct open, const void *lock)
{
    weft__rguard g;
    uint64_t t;

    if (om_innermost() != open || !weft__recorder_begin(&g))
        return;
    t = weft_time();
    om_lock_acquired(lock, t);
    if (open == OM_SET_LOCK || open == OM_SET_NEST_LOCK)
        om_close(t);
    weft__recorder_end(&g);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t id,
                              const void *pc)
{
    enum om_construct b = block_of(kind);
    const void *lock = (const void *)(uintptr_t)id;

    (void)pc;
    if (b != OM__NCONSTRUCTS)
        acquired(b, lock);
    else if (om_ompt_testing) /* libomp 14 says lock, nest_lock */
        lock_call(kind == ompt_mutex_nest_lock ||
                          kind == ompt_mutex_test_nest_lock
                      ? OM_TEST_NEST_LOCK
                      : OM_TEST_LOCK,
                  lock, 1);
    else if (kind == ompt_mutex_lock)
        acquired(OM_SET_LOCK, lock);
    else if (kind == ompt_mutex_nest_lock)
        acquired(OM_SET_NEST_LOCK, lock);
    else if (kind == ompt_mutex_test_lock)
        lock_call(OM_TEST_LOCK, lock, 1);
    else if (kind == ompt_mutex_test_nest_lock)
        lock_call(OM_TEST_NEST_LOCK, lock, 1);
}

static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t id,
                              const void *pc)
{
    enum om_construct b = block_of(kind);
    const void *lock = (const void *)(uintptr_t)id;
    weft__rguard g;

    (void)pc;
    if (b == OM__NCONSTRUCTS) {
        lock_call(kind == ompt_mutex_nest_lock ? OM_UNSET_NEST_LOCK
                                               : OM_UNSET_LOCK,
                  lock, 0);
        return;
    }
    if (om_innermost() != b || !weft__recorder_begin(&g))
        return;
    om_lock_releasing(lock, weft_time());
    om_close(weft_time());
    weft__recorder_end(&g);
}

/* A nest lock taken again (begin) or released but still held (end). */
static void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t id,
                         const void *pc)
{
    const void *lock = (const void *)(uintptr_t)id;

    (void)pc;
    if (endpoint == ompt_scope_begin) {
        if (!om_ompt_testing && om_innermost() == OM_SET_NEST_LOCK)
            acquired(OM_SET_NEST_LOCK, lock);
        else /* omp_test_nest_lock */
            lock_call(OM_TEST_NEST_LOCK, lock, 1);
    } else {
        lock_call(OM_UNSET_NEST_LOCK, lock, 0);
    }
}

/* ---- tasks --------------------------------------------------------------- */

static void on_task_create(ompt_data_t *parent, const ompt_frame_t *frame,
                           ompt_data_t *task, int flags, int deps,
                           const void *pc)
{
    OTF2_RegionRef create;
    om_etask *et;
    weft__rguard g;
    uint64_t t;

    (void)parent, (void)frame, (void)deps;
    task->ptr = NULL;
    if (!(flags & ompt_task_explicit) || !om_begin(&g))
        return;
    create = om_region(OM_TASK_CREATE, pc, NULL);
    if (create != OTF2_UNDEFINED_REGION && (et = calloc(1, sizeof *et))) {
        et->kind = OM_TASK_EXPLICIT;
        et->team = om_team_now();
        et->creator = om_thread_num();
        et->gen = ++T.gen;
        et->untied = (flags & ompt_task_untied) != 0;
        et->region = om_region((flags & ompt_task_untied) ? OM_TASK_UNTIED
                                                          : OM_TASK,
                               pc, NULL);
        if (et->team != OTF2_UNDEFINED_COMM &&
            et->region != OTF2_UNDEFINED_REGION) {
            t = weft_time();
            weft_evt_Enter(NULL, t, create);
            weft_evt_ThreadTaskCreate(NULL, t, et->team, et->creator,
                                      et->gen);
            weft_evt_Leave(NULL, t, create);
            task->ptr = et;
        } else {
            free(et);
        }
    }
    weft__recorder_end(&g);
}

/* The explicit task of a task's data, or NULL (an implicit or initial
 * one, or one not recorded). */
static om_etask *explicit_of(const ompt_data_t *task)
{
    om_etask *et = task ? task->ptr : NULL;

    return et && et->kind == OM_TASK_EXPLICIT ? et : NULL;
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status,
                             ompt_data_t *next)
{
    om_etask *p = explicit_of(prior), *n = explicit_of(next);
    int done = status == ompt_task_complete || status == ompt_task_cancel ||
               status == ompt_task_detach;
    weft__rguard g;
    uint64_t t;

    if (!p && !n)
        return;
    if (!weft__recorder_begin(&g))
        return;
    t = weft_time();
    if (p && done) {
        weft_evt_Leave(NULL, t, p->region);
        weft_evt_ThreadTaskComplete(NULL, t, p->team, p->creator, p->gen);
    } else if (p && p->untied && (!n || n->started)) {
        /* suspended, not for a new task run nested in it here: it may go
         * on on another thread, which enters its region again (a tied
         * one goes on here, what runs meanwhile nested in it) */
        weft_evt_Leave(NULL, t, p->region);
        p->away = 1;
    }
    if (n) {
        weft_evt_ThreadTaskSwitch(NULL, t, n->team, n->creator, n->gen);
        if (!n->started || n->away) {
            n->started = 1;
            n->away = 0;
            weft_evt_Enter(NULL, t, n->region);
        }
    } else if (p) { /* back to this thread's implicit task */
        weft_evt_ThreadTaskSwitch(NULL, t, p->team, om_thread_num(), 0);
    }
    weft__recorder_end(&g);
    if (p && done) {
        prior->ptr = NULL;
        free(p);
    }
}

/* ---- cancellation, doacross ---------------------------------------------- */

/* The region of cons at pc, entered and left at once: what libomp tells
 * of it is one moment (as a task's creation). */
static void instant(enum om_construct cons, const void *pc)
{
    OTF2_RegionRef r;
    weft__rguard g;
    uint64_t t;

    if (!om_begin(&g))
        return;
    if ((r = om_region(cons, pc, NULL)) != OTF2_UNDEFINED_REGION) {
        t = weft_time();
        weft_evt_Enter(NULL, t, r);
        weft_evt_Leave(NULL, t, r);
    }
    weft__recorder_end(&g);
}

/* A cancel that activated cancellation, or a cancellation point that
 * found it (libomp says nothing of the others). Either way a loop's or
 * sections' thread leaves the construct for its end, of which libomp 14
 * then says nothing: its region is left here. */
static void on_cancel(ompt_data_t *task, int flags, const void *pc)
{
    enum om_construct ws = (flags & ompt_cancel_loop)       ? OM_LOOP
                           : (flags & ompt_cancel_sections) ? OM_SECTIONS
                                                            : OM__NCONSTRUCTS;
    weft__rguard g;

    (void)task;
    if (flags & ompt_cancel_activated)
        instant(OM_CANCEL, pc);
    else if (flags & ompt_cancel_detected)
        instant(OM_CANCELLATION_POINT, pc);
    else
        return;
    if (ws != OM__NCONSTRUCTS && om_innermost() == ws &&
        weft__recorder_begin(&g)) {
        om_close(weft_time());
        weft__recorder_end(&g);
    }
}

/* A task's dependences, or a doacross loop's ordered depend(source) or
 * depend(sink) (libomp 14 tells them as the thread posts, or before it
 * waits, without an address: named after the directive alone). */
static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps,
                           int ndeps)
{
    (void)task;
    if (ndeps <= 0)
        return;
    if (deps[0].dependence_type == ompt_dependence_type_source)
        instant(OM_DOACROSS_POST, NULL);
    else if (deps[0].dependence_type == ompt_dependence_type_sink)
        instant(OM_DOACROSS_WAIT, NULL);
}

/* ---- the tool ------------------------------------------------------------ */

#define OM_SET(event, fn)                                                    \
    set_callback(ompt_callback_##event, (ompt_callback_t)(fn))

static int initialize(ompt_function_lookup_t lookup, int device,
                      ompt_data_t *tool)
{
    (void)device, (void)tool;
    set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_callback)
        return 0;
    atomic_store(&om_ompt, 1);
    OM_SET(parallel_begin, on_parallel_begin);
    OM_SET(parallel_end, on_parallel_end);
    OM_SET(implicit_task, on_implicit_task);
    OM_SET(sync_region, on_sync_region);
    OM_SET(work, on_work);
    OM_SET(mutex_acquire, on_mutex_acquire);
    OM_SET(mutex_acquired, on_mutex_acquired);
    OM_SET(mutex_released, on_mutex_released);
    OM_SET(nest_lock, on_nest_lock);
    OM_SET(task_create, on_task_create);
    OM_SET(task_schedule, on_task_schedule);
    OM_SET(cancel, on_cancel);
    OM_SET(dependences, on_dependences);
    atexit(om_ompt_at_exit);
    return 1; /* keep the tool */
}

static void finalize(ompt_data_t *tool)
{
    (void)tool;
}

OM_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version,
                                                    const char *runtime);

/* Called by libomp as it starts (OpenMP 5.0, 4.5.2): this library is its
 * tool. */
OM_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version,
                                                    const char *runtime)
{
    static ompt_start_tool_result_t result = { initialize, finalize,
                                               { .value = 0 } };

    (void)omp_version, (void)runtime;
    return &result;
}
