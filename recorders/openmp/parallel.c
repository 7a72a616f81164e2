/* parallel.c - parallel regions: libgomp's parallel entry points, the
 * trampoline every team thread runs the region's body through, and the
 * teams' communicators (see om.h).
 */
#include <dlfcn.h>
#include <sched.h>
#include <string.h>

#include "om.h"

/* Identity of a team's Comm (weft's own field): "OM" above, the rank,
 * then the team shape's number in its process. */
#define OM_TEAM_TAG 0x4f4d000000000000ull
/* Team shapes (parent team, size) with a Comm of their own; beyond, a
 * team takes the Comm of the last one. */
#define OM_SHAPES_MAX 1024
/* Parallel regions one thread may start inside one another with the
 * old entry points (GOMP_parallel_start ... GOMP_parallel_end). */
#define OM_NEST_MAX 16

/* A parallel region: what its encountering thread gives its team. */
typedef struct om_par {
    void (*fn)(void *);
    void *data;
    OTF2_CommRef parent;      /* the encountering thread's team */
    int recorded;             /* the encountering thread recorded Fork:
                                 every team thread calls the barrier */
} om_par;

static struct {
    atomic_flag busy;
    int defined;                  /* the groups of team Comms */
    OTF2_GroupRef group;
    uint32_t n;
    struct {
        OTF2_CommRef parent, comm;
        uint32_t size;
    } shape[OM_SHAPES_MAX];
} T = { .busy = ATOMIC_FLAG_INIT };

/* This thread's team (OTF2_UNDEFINED_COMM outside any region) and the
 * regions it started with GOMP_parallel_start. */
static __thread OTF2_CommRef my_team OM_TLS = OTF2_UNDEFINED_COMM;
static __thread struct {
    om_par par[OM_NEST_MAX];
    unsigned n;
} started OM_TLS;

static int (*real_num_threads)(void);
static int (*real_max_threads)(void);

/* The real function `name` (dlsym RTLD_NEXT). */
static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* ---- teams ------------------------------------------------------------- */

/* The groups every team Comm names (empty: see om.h). busy held. */
static int define_groups(void)
{
    OTF2_GroupRef locations = weft__recorder_newid(WEFT_REF_GROUP);

    T.group = weft__recorder_newid(WEFT_REF_GROUP);
    if (weft_def_Group(locations, weft_string("OpenMP locations"),
                       OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                       OTF2_GROUP_FLAG_NONE, 0, NULL) < 0 ||
        weft_def_Group(T.group, weft_string("OpenMP thread team"),
                       OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP,
                       OTF2_GROUP_FLAG_NONE, 0, NULL) < 0)
        return 0;
    T.defined = 1;
    return 1;
}

/* See om.h. */
OTF2_CommRef om_team_comm(OTF2_CommRef parent, uint32_t size)
{
    static __thread struct {
        OTF2_CommRef parent, comm;
        uint32_t size;
    } last OM_TLS = { OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_COMM, 0 };
    weft_record r = { .type = WEFT_REC_Comm };
    OTF2_CommRef comm = OTF2_UNDEFINED_COMM;
    char name[64];
    uint32_t i;

    if (OM_LIKELY(last.size == size && last.parent == parent &&
                  last.comm != OTF2_UNDEFINED_COMM))
        return last.comm;
    while (atomic_flag_test_and_set_explicit(&T.busy, memory_order_acquire))
        sched_yield();
    for (i = 0; i < T.n; i++)
        if (T.shape[i].parent == parent && T.shape[i].size == size)
            break;
    if (i < T.n) {
        comm = T.shape[i].comm;
    } else if (T.n == OM_SHAPES_MAX) {
        comm = T.shape[T.n - 1].comm;
    } else if (T.defined || define_groups()) {
        if (size == 0) /* om_team_now's */
            snprintf(name, sizeof name, "OpenMP initial thread");
        else
            snprintf(name, sizeof name, "OpenMP thread team (%u threads)",
                     size);
        r.u.Comm.self = weft__recorder_newid(WEFT_REF_COMM);
        r.u.Comm.name = weft_string(name);
        r.u.Comm.group = T.group;
        r.u.Comm.parent = parent;
        r.u.Comm.flags = OTF2_COMM_FLAG_NONE;
        r.u.Comm.identity = OM_TEAM_TAG | (uint64_t)weft_rank() << 16 | T.n;
        if (r.u.Comm.name != OTF2_UNDEFINED_STRING &&
            weft__recorder_def(&r) == 0) {
            comm = r.u.Comm.self;
            T.shape[T.n].parent = parent;
            T.shape[T.n].size = size;
            T.shape[T.n].comm = comm;
            T.n++;
        }
    }
    atomic_flag_clear_explicit(&T.busy, memory_order_release);
    last.parent = parent;
    last.size = size;
    last.comm = comm;
    return comm;
}

/* See om.h. */
OTF2_CommRef om_team_get(void)
{
    return my_team;
}

/* See om.h. */
OTF2_CommRef om_set_team(OTF2_CommRef t)
{
    OTF2_CommRef old = my_team;

    my_team = t;
    return old;
}

/* See om.h. */
OTF2_CommRef om_team_now(void)
{
    return my_team != OTF2_UNDEFINED_COMM
               ? my_team
               : om_team_comm(OTF2_UNDEFINED_COMM, 0);
}

/* ---- a team thread's part ----------------------------------------------- */

/* What a team thread records around its part of region p. */
typedef struct om_member {
    OTF2_CommRef team, saved_team;
    OTF2_RegionRef region;
    unsigned depth;           /* constructs it was in before */
    uint32_t size;            /* threads in the team */
    int recording;
} om_member;

/* ThreadTeamBegin and Enter of the region, on this team thread. */
static void member_begin(const om_par *p, om_member *m)
{
    weft__rguard g;
    uint64_t t;

    m->saved_team = my_team;
    m->recording = 0;
    m->size = real_num_threads ? (uint32_t)real_num_threads() : 0;
    if (!p->recorded || !om_begin(&g))
        return;
    m->team = om_team_comm(p->parent, m->size);
    m->region = om_region(OM_PARALLEL, (const char *)(uintptr_t)p->fn + 1,
                          NULL);
    if (m->team != OTF2_UNDEFINED_COMM &&
        m->region != OTF2_UNDEFINED_REGION) {
        t = weft_time();
        weft_evt_ThreadTeamBegin(NULL, t, m->team);
        weft_evt_Enter(NULL, t, m->region);
        my_team = m->team;
        m->depth = om_depth();
        m->recording = 1;
    }
    weft__recorder_end(&g);
}

/* The implicit barrier (see om.h), Leave of the region and
 * ThreadTeamEnd, on this team thread. */
static void member_end(const om_par *p, om_member *m)
{
    OTF2_RegionRef barrier = OTF2_UNDEFINED_REGION;
    weft__rguard g;
    uint64_t t;

    if (!p->recorded)
        return;
    if (m->recording && weft__recorder_begin(&g)) {
        t = weft_time();
        om_close_to(m->depth, t); /* what the body left open */
        barrier = om_region(OM_IMPLICIT_BARRIER,
                            (const char *)(uintptr_t)p->fn + 1, NULL);
        if (barrier != OTF2_UNDEFINED_REGION)
            weft_evt_Enter(NULL, t, barrier);
        weft__recorder_end(&g);
    }
    /* every team thread (the encountering one said so), unless alone:
     * no one to wait for */
    if (m->size != 1)
        om_real_barrier();
    if (m->recording && weft__recorder_begin(&g)) {
        t = weft_time();
        if (barrier != OTF2_UNDEFINED_REGION)
            weft_evt_Leave(NULL, t, barrier);
        weft_evt_Leave(NULL, t, m->region);
        weft_evt_ThreadTeamEnd(NULL, t, m->team);
        weft__recorder_end(&g);
    }
    my_team = m->saved_team;
}

/* What libgomp runs on every team thread in place of the region's
 * outlined function. */
static void trampoline(void *arg)
{
    const om_par *p = arg;
    om_member m;

    member_begin(p, &m);
    p->fn(p->data);
    member_end(p, &m);
}

/* ---- the encountering thread ------------------------------------------- */

/* Records ThreadFork for a team of `requested` threads (0: as many as
 * OpenMP would give) and fills p; 0 when nothing is recorded (then the
 * real call gets the program's own function). */
static int fork_begin(om_par *p, void (*fn)(void *), void *data,
                      unsigned requested)
{
    weft__rguard g;

    p->fn = fn;
    p->data = data;
    p->parent = my_team;
    p->recorded = 0;
    if (!fn || atomic_load_explicit(&om_ompt, memory_order_relaxed) ||
        !om_begin(&g))
        return 0;
    if (requested == 0 && real_max_threads)
        requested = (unsigned)real_max_threads();
    weft_evt_ThreadFork(NULL, weft_time(), OTF2_PARADIGM_OPENMP, requested);
    p->recorded = 1;
    weft__recorder_end(&g);
    return 1;
}

/* Records ThreadJoin after a region fork_begin recorded. */
static void fork_end(const om_par *p)
{
    weft__rguard g;

    if (p->recorded && weft__recorder_begin(&g)) {
        weft_evt_ThreadJoin(NULL, weft_time(), OTF2_PARADIGM_OPENMP);
        weft__recorder_end(&g);
    }
}

/* ---- the entry points --------------------------------------------------- */

/* What GOMP_parallel_start's encountering thread records of its own
 * part (it runs fn itself, not the trampoline), until GOMP_parallel_end. */
static __thread om_member started_member[OM_NEST_MAX] OM_TLS;

/* The next region started with GOMP_parallel_start on this thread, NULL
 * beyond OM_NEST_MAX (not recorded, but counted). */
static om_par *start_push(void)
{
    unsigned i = started.n++;

    return i < OM_NEST_MAX ? &started.par[i] : NULL;
}

/* The wrappers' prototypes (libgomp installs no header of its ABI). */
#define OMPW(name, params, args, n) OM_EXPORT void name params;
#define OMPS OMPW
#include "parallel.def"
OM_EXPORT void GOMP_parallel_end(void);
OM_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data,
                                            unsigned num_threads,
                                            unsigned flags);

/* A whole region: fn runs on every team thread through the trampoline,
 * and the entry point returns after the region. */
#define OMPW(name, params, args, n)                                          \
    static void(*real_##name) params;                                        \
    OM_EXPORT void name params                                               \
    {                                                                        \
        om_par p_;                                                           \
                                                                             \
        if (fork_begin(&p_, fn, data, n)) {                                  \
            fn = trampoline;                                                 \
            data = &p_;                                                      \
        }                                                                    \
        if (real_##name)                                                     \
            real_##name args;                                                \
        fork_end(&p_);                                                       \
    }
/* A region's start (the old entry points): the encountering thread runs
 * fn itself after it and ends the region with GOMP_parallel_end. */
#define OMPS(name, params, args, n)                                          \
    static void(*real_##name) params;                                        \
    OM_EXPORT void name params                                               \
    {                                                                        \
        om_par *p_ = start_push();                                           \
                                                                             \
        if (p_ && fork_begin(p_, fn, data, n)) {                             \
            fn = trampoline;                                                 \
            data = p_;                                                       \
        }                                                                    \
        if (real_##name)                                                     \
            real_##name args;                                                \
        if (p_)                                                              \
            member_begin(p_, &started_member[p_ - started.par]);             \
    }
#include "parallel.def"

static void (*real_GOMP_parallel_end)(void);

/* Ends the region this thread started last with GOMP_parallel_start. */
OM_EXPORT void GOMP_parallel_end(void)
{
    unsigned i = started.n ? --started.n : OM_NEST_MAX;

    if (i < OM_NEST_MAX)
        member_end(&started.par[i], &started_member[i]);
    if (real_GOMP_parallel_end)
        real_GOMP_parallel_end();
    if (i < OM_NEST_MAX)
        fork_end(&started.par[i]);
}

static unsigned (*real_GOMP_parallel_reductions)(void (*)(void *), void *,
                                                 unsigned, unsigned);

/* GOMP_parallel with reductions (GCC 9 and later): returns libgomp's
 * answer. */
OM_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data,
                                            unsigned num_threads,
                                            unsigned flags)
{
    unsigned r = 0;
    om_par p;

    if (fork_begin(&p, fn, data, num_threads)) {
        fn = trampoline;
        data = &p;
    }
    if (real_GOMP_parallel_reductions)
        r = real_GOMP_parallel_reductions(fn, data, num_threads, flags);
    fork_end(&p);
    return r;
}

/* See om.h. */
void om_parallel_resolve(void)
{
#define OMPW(name, params, args, n) *(void **)&real_##name = real(#name);
#define OMPS OMPW
#include "parallel.def"
    *(void **)&real_GOMP_parallel_end = real("GOMP_parallel_end");
    *(void **)&real_GOMP_parallel_reductions =
        real("GOMP_parallel_reductions");
    *(void **)&real_num_threads = real("omp_get_num_threads");
    *(void **)&real_max_threads = real("omp_get_max_threads");
}
