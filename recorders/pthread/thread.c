/* thread.c - the session of libweft-pthread and the life of threads:
 * pthread_create (ThreadCreate, and ThreadBegin/ThreadEnd in the new
 * thread), the pthread_join family (ThreadWait), the thread contingent
 * and the fork hook (see pt.h).
 *
 * DESIGN
 * The thread contingent. OTF2 links ThreadCreate to ThreadBegin and
 * ThreadEnd to ThreadWait by a Comm (the contingent) and a sequence
 * number unique within it. Each process has its own contingent: one
 * Comm of paradigm PTHREAD over a COMM_GROUP group, with a sequence
 * counter per process; a thread's create, begin, end and wait carry the
 * same number. weftd unifies definitions by content, so identical Comms
 * of two processes would become one and their numbers would collide: the
 * Comm's identity (weft's own field, weft_records.def) is
 * PT_CONTINGENT_TAG | rank, which no MPI communicator has, and keeps
 * every process's contingent its own. OTF2 readers want a COMM_GROUP's
 * paradigm to have a COMM_LOCATIONS group; both list no members: the
 * Comm must be defined before the first ThreadCreate refers to it, when
 * the threads to come are not known yet (Score-P, which defines them at
 * the end of the run, lists them). Being empty, every process's
 * COMM_LOCATIONS group is the same definition, and weftd keeps one.
 *
 * Which thread a join names: the trampoline records, in a small table
 * keyed by pthread_self(), the sequence number of its thread before the
 * start routine runs; pthread_join takes it out once the join succeeded.
 * A thread id reused by a later thread replaces its entry.
 */
#include <stdlib.h>
#include <string.h>

#include "pt.h"

/* Identity of a process's thread contingent: the tag "PTHR" above, the
 * rank below. */
#define PT_CONTINGENT_TAG 0x5054485200000000ull
/* Buckets of the joinable-threads table (a power of 2). */
#define PT_THREAD_BUCKETS 256u

_Atomic int pt_state = PT_ST_INIT;

/* What a new thread needs from its creator; malloc'd by pthread_create,
 * freed by the trampoline. */
typedef struct pt_start {
    void *(*fn)(void *);
    void *arg;
    OTF2_CommRef comm;
    uint64_t seq;
} pt_start;

/* A thread started by the trampoline and not joined yet. */
typedef struct pt_thread {
    struct pt_thread *next;
    pthread_t id;
    OTF2_CommRef comm;
    uint64_t seq;
    uint32_t loc;        /* its location index (pthread_setname_np) */
} pt_thread;

static struct {
    atomic_flag busy;                 /* contingent definition, threads */
    _Atomic int defined;              /* the contingent is defined */
    OTF2_CommRef contingent;
    _Atomic uint64_t next_seq;
    pt_thread *threads[PT_THREAD_BUCKETS];
} G = { .busy = ATOMIC_FLAG_INIT, .contingent = OTF2_UNDEFINED_COMM };

/* This thread as the trampoline started it. */
static __thread struct {
    OTF2_CommRef comm;
    uint64_t seq;
    int begun, ended;
} me PT_TLS;

static int (*real_create)(pthread_t *, const pthread_attr_t *,
                          void *(*)(void *), void *);

static void lock_g(void)
{
    while (atomic_flag_test_and_set_explicit(&G.busy, memory_order_acquire))
        sched_yield();
}

static void unlock_g(void)
{
    atomic_flag_clear_explicit(&G.busy, memory_order_release);
}

/* ---- the session -------------------------------------------------------- */

static void at_fork_child(void)
{
    atomic_store(&pt_state, PT_ST_OFF);
}

/* Registered after weft_open, so it runs before libweft's weft_close:
 * nothing is recorded while libweft closes. Also before an exec or
 * _exit closes it (weft__recorder_before_exec). */
static void at_exit_off(void)
{
    if (atomic_load(&pt_state) == PT_ST_ON && !weft__inside) {
        weft__inside++;
        pt_count_flush(weft_time()); /* the exiting thread's counts */
        weft__inside--;
    }
    atomic_store(&pt_state, PT_ST_OFF);
}

/* Opens the session (see pt.h). Guard raised; called once. */
static void open_session(void)
{
    switch (weft__recorder_start()) {
    case 0:
        atomic_store(&pt_state, PT_ST_MPI);
        return;
    case 1:
        break;
    default:
        atomic_store(&pt_state, PT_ST_OFF);
        return;
    }
    atexit(at_exit_off);
    weft__recorder_before_exec(at_exit_off);
    weft__recorder_attach(); /* the opening thread is location 0 */
    atomic_store(&pt_state, PT_ST_ON);
}

/* See pt.h. */
int pt_ready_slow(void)
{
    static atomic_int defined;
    int st = atomic_load(&pt_state), expect = PT_ST_INIT;

    if (st == PT_ST_INIT &&
        atomic_compare_exchange_strong(&pt_state, &expect, PT_ST_OPENING)) {
        open_session();
        st = atomic_load(&pt_state);
    }
    if (st != PT_ST_ON && !(st == PT_ST_MPI && weft_connected()))
        return 0;
    if (!atomic_exchange(&defined, 1)) {
        pt_filter_setup();
        pt_define_regions();
        pt_count_setup();
    }
    return 1;
}

/* A child forked by a process that has not opened its session yet is not
 * traced either. */
__attribute__((constructor)) static void pt_init(void)
{
    weft__rguard g;

    pt_resolve_all();
    pt_thread_resolve();
    pthread_atfork(NULL, NULL, at_fork_child);
    if (weft__recorder_at_load() && weft__recorder_begin(&g)) {
        pt_ready_slow(); /* opens now (fails the program if it must) */
        weft__recorder_end(&g);
    }
}

/* ---- the contingent ------------------------------------------------------ */

/* See pt.h. Guard raised. */
OTF2_CommRef pt_contingent(void)
{
    weft_record r = { .type = WEFT_REC_Comm };
    OTF2_GroupRef locations, group;

    if (PT_LIKELY(atomic_load_explicit(&G.defined, memory_order_acquire)))
        return G.contingent;
    lock_g();
    if (!atomic_load(&G.defined)) {
        weft_def_Paradigm(OTF2_PARADIGM_PTHREAD, weft_string("Pthread"),
                          OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT);
        locations = weft__recorder_newid(WEFT_REF_GROUP);
        group = weft__recorder_newid(WEFT_REF_GROUP);
        r.u.Comm.self = weft__recorder_newid(WEFT_REF_COMM);
        r.u.Comm.name = weft_string("Pthread thread contingent");
        r.u.Comm.group = group;
        r.u.Comm.parent = OTF2_UNDEFINED_COMM;
        r.u.Comm.flags = OTF2_COMM_FLAG_NONE;
        r.u.Comm.identity = PT_CONTINGENT_TAG | weft_rank();
        if (r.u.Comm.name != OTF2_UNDEFINED_STRING &&
            weft_def_Group(locations, weft_string("Pthread locations"),
                           OTF2_GROUP_TYPE_COMM_LOCATIONS,
                           OTF2_PARADIGM_PTHREAD, OTF2_GROUP_FLAG_NONE, 0,
                           NULL) == 0 &&
            weft_def_Group(group, weft_string("Pthread threads"),
                           OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_PTHREAD,
                           OTF2_GROUP_FLAG_NONE, 0, NULL) == 0 &&
            weft__recorder_def(&r) == 0) {
            G.contingent = r.u.Comm.self;
            atomic_store_explicit(&G.defined, 1, memory_order_release);
        }
    }
    unlock_g();
    return G.contingent;
}

/* ---- joinable threads ---------------------------------------------------- */

static unsigned bucket(pthread_t id)
{
    return (unsigned)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 40) &
           (PT_THREAD_BUCKETS - 1);
}

/* Remembers the calling thread (started by the trampoline). */
static void thread_add(OTF2_CommRef comm, uint64_t seq)
{
    pt_thread *t = malloc(sizeof *t), **p;
    pthread_t self = pthread_self();

    if (!t)
        return;
    t->id = self;
    t->comm = comm;
    t->seq = seq;
    t->loc = weft_location_index();
    lock_g();
    for (p = &G.threads[bucket(self)]; *p; p = &(*p)->next)
        if (pthread_equal((*p)->id, self)) { /* a reused id */
            pt_thread *old = *p;
            *p = old->next;
            free(old);
            break;
        }
    t->next = G.threads[bucket(self)];
    G.threads[bucket(self)] = t;
    unlock_g();
}

/* Takes thread `id` out of the table: 1 with its contingent and number,
 * 0 if it is not there (not started by the trampoline). */
static int thread_take(pthread_t id, OTF2_CommRef *comm, uint64_t *seq)
{
    pt_thread *t = NULL;

    lock_g();
    for (pt_thread **p = &G.threads[bucket(id)]; *p; p = &(*p)->next)
        if (pthread_equal((*p)->id, id)) {
            t = *p;
            *p = t->next;
            break;
        }
    unlock_g();
    if (!t)
        return 0;
    *comm = t->comm;
    *seq = t->seq;
    free(t);
    return 1;
}

/* The location index of thread `id` (started by the trampoline, not
 * joined yet): 1 with *loc, else 0. */
static int thread_loc(pthread_t id, uint32_t *loc)
{
    int found = 0;

    lock_g();
    for (pt_thread *t = G.threads[bucket(id)]; t; t = t->next)
        if (pthread_equal(t->id, id)) {
            *loc = t->loc;
            found = 1;
            break;
        }
    unlock_g();
    return found;
}

/* ---- thread begin and end ------------------------------------------------ */

/* May this thread record now? Guard raised. */
static int may_record(void)
{
    int st = atomic_load_explicit(&pt_state, memory_order_relaxed);

    return st == PT_ST_ON || (st == PT_ST_MPI && weft_connected());
}

/* ThreadEnd of the calling thread: once, when its start routine returns,
 * it calls pthread_exit or is cancelled (cleanup handler). */
static void thread_end(void *unused)
{
    int saved = errno;

    (void)unused;
    if (me.begun && !me.ended && !weft__inside) {
        me.ended = 1;
        weft__inside++;
        if (may_record()) {
            uint64_t t = weft_time();
            pt_leave_open(t);
            pt_count_flush(t);
            weft__recorder_thread_ending(); /* the other recorders' */
            t = weft_time();
            weft_evt_ThreadEnd(NULL, t, me.comm, me.seq);
        }
        weft__inside--;
    }
    errno = saved;
}

/* The start routine of every thread created while recording. */
static void *trampoline(void *arg)
{
    pt_start s = *(pt_start *)arg;
    void *ret;

    free(arg);
    weft__recorder_attach();
    weft__inside++;
    me.comm = s.comm;
    me.seq = s.seq;
    me.begun = 1;
    if (may_record())
        weft_evt_ThreadBegin(NULL, weft_time(), s.comm, s.seq);
    thread_add(s.comm, s.seq);
    weft__inside--;
    pthread_cleanup_push(thread_end, NULL);
    ret = s.fn(s.arg);
    pthread_cleanup_pop(1);
    return ret;
}

/* ---- the wrappers -------------------------------------------------------- */

/* Resolves *fn to the real function `name` once; 0, or -1 without one. */
static int resolve(void *fn, const char *name)
{
    void *p;
    int saved = errno;

    memcpy(&p, fn, sizeof p);
    if (PT_LIKELY(p != NULL))
        return 0;
    p = pt_real(name);
    errno = saved;
    if (!p)
        return -1;
    memcpy(fn, &p, sizeof p);
    return 0;
}

/* pthread_create: ThreadCreate (at the Enter's time, before the new
 * thread can begin) once the thread exists; the new thread starts in the
 * trampoline. */
PT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    pt_start *s = NULL;
    OTF2_CommRef comm = OTF2_UNDEFINED_COMM;
    uint64_t seq = 0;
    pt_call c;
    uint64_t t0, t;
    int rc;

    if (resolve(&real_create, "pthread_create") < 0)
        return EAGAIN;
    if (!pt_begin(&c, PT_pthread_create, &t0, PT_CALLER))
        return real_create(th, attr, fn, arg);
    s = malloc(sizeof *s);
    if (s) {
        s->fn = fn;
        s->arg = arg;
        s->comm = pt_contingent();
        s->seq = atomic_fetch_add(&G.next_seq, 1);
        if (s->comm == OTF2_UNDEFINED_COMM) {
            free(s);
            s = NULL;
        } else {
            comm = s->comm;
            seq = s->seq;
        }
    }
    /* The guard stays raised over the real call: what glibc calls there
     * (the program's own malloc, for the new thread's stack) is part of
     * it, and the ThreadCreate below, at the Enter's time, must not come
     * after records of later times. Once created, the new thread owns s
     * (and frees it): only the copies are read here. */
    errno = c.saved_errno;
    rc = s ? real_create(th, attr, trampoline, s)
           : real_create(th, attr, fn, arg);
    c.saved_errno = errno;
    t = weft_time();
    if (s && rc == 0)
        weft_evt_ThreadCreate(NULL, t0, comm, seq);
    else
        free(s);
    pt_end(&c, t);
    return rc;
}

/* pthread_setname_np: once it succeeded, the named thread's location
 * has the name in the archive (weft's own ThreadName record): the
 * calling thread, or a thread the trampoline started and nobody joined
 * yet. No region of its own. */
static int (*real_setname)(pthread_t, const char *);
PT_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
    weft_record r = { .type = WEFT_REC_ThreadName };
    int rc, st, saved;
    uint32_t loc = 0;

    if (resolve(&real_setname, "pthread_setname_np") < 0)
        return ENOSYS;
    rc = real_setname(th, name);
    if (rc != 0 || (st = pt_recording()) == 0)
        return rc;
    saved = errno;
    weft__inside++;
    if ((st == 1 || pt_ready_slow()) &&
        (pthread_equal(th, pthread_self()) ? (loc = weft_location_index(), 1)
                                           : thread_loc(th, &loc))) {
        r.u.ThreadName.thread = loc;
        r.u.ThreadName.name = weft_string(name);
        if (r.u.ThreadName.name != OTF2_UNDEFINED_STRING)
            weft__recorder_def(&r);
    }
    weft__inside--;
    errno = saved;
    return rc;
}

/* The join family: ThreadWait with the joined thread's number once the
 * join succeeded. */
#define PT_JOIN(name, params, args)                                          \
    static int(*real_##name) params;                                         \
    PT_EXPORT int name params                                                \
    {                                                                        \
        OTF2_CommRef comm_;                                                  \
        uint64_t t_, seq_;                                                   \
        pt_call c_;                                                          \
        int rc_;                                                             \
                                                                             \
        if (resolve(&real_##name, #name) < 0)                                \
            return ENOSYS;                                                   \
        if (!pt_begin(&c_, PT_##name, &t_, PT_CALLER))                       \
            return real_##name args;                                         \
        pt_pause(&c_);                                                       \
        rc_ = real_##name args;                                              \
        t_ = pt_resume(&c_);                                                 \
        if (rc_ == 0 && thread_take(th, &comm_, &seq_))                      \
            weft_evt_ThreadWait(NULL, t_, comm_, seq_);                      \
        pt_end(&c_, t_);                                                     \
        return rc_;                                                          \
    }

PT_JOIN(pthread_join, (pthread_t th, void **ret), (th, ret))
PT_JOIN(pthread_tryjoin_np, (pthread_t th, void **ret), (th, ret))
PT_JOIN(pthread_timedjoin_np,
        (pthread_t th, void **ret, const struct timespec *t), (th, ret, t))
PT_JOIN(pthread_clockjoin_np,
        (pthread_t th, void **ret, clockid_t c, const struct timespec *t),
        (th, ret, c, t))

/* See pt.h. */
void pt_thread_resolve(void)
{
    (void)resolve(&real_create, "pthread_create");
    (void)resolve(&real_setname, "pthread_setname_np");
    (void)resolve(&real_pthread_join, "pthread_join");
    (void)resolve(&real_pthread_tryjoin_np, "pthread_tryjoin_np");
    (void)resolve(&real_pthread_timedjoin_np, "pthread_timedjoin_np");
    (void)resolve(&real_pthread_clockjoin_np, "pthread_clockjoin_np");
}
