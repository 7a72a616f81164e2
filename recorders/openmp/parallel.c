/* parallel.c - parallel regions: libgomp's parallel entry points, and
 * the trampoline every team thread runs the region's body through; host
 * teams, each team's body through a trampoline too (see om.h).
 */
#include <dlfcn.h>
#include <sched.h>
#include <string.h>

#include "om.h"

/* Parallel regions one thread may start inside one another with the
 * old entry points (GOMP_parallel_start ... GOMP_parallel_end). */
#define OM_NEST_MAX 16

/* A parallel region: what its encountering thread gives its team. */
typedef struct om_par {
    void (*fn)(void *);
    void *data;
    om_team team;
    int recorded;             /* the encountering thread recorded Fork:
                                 every team thread calls the barrier */
} om_par;

/* The regions this thread started with GOMP_parallel_start. */
static __thread struct {
    om_par par[OM_NEST_MAX];
    unsigned n;
} started OM_TLS;

static int (*real_num_threads)(void);
static int (*real_thread_num)(void);
static int (*real_max_threads)(void);

/* The real function `name` (dlsym RTLD_NEXT). */
static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
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
static void member_begin(om_par *p, om_member *m)
{
    weft__rguard g;
    uint64_t t;

    m->saved_team = om_team_get();
    m->recording = 0;
    m->size = real_num_threads ? (uint32_t)real_num_threads() : 0;
    if (!p->recorded || !om_begin(&g))
        return;
    m->team = om_team_join(&p->team, m->size,
                           real_thread_num ? (uint32_t)real_thread_num() : 0);
    m->region = om_region(OM_PARALLEL, (const char *)(uintptr_t)p->fn + 1,
                          NULL);
    if (m->team != OTF2_UNDEFINED_COMM &&
        m->region != OTF2_UNDEFINED_REGION) {
        t = weft_time();
        weft_evt_ThreadTeamBegin(NULL, t, m->team);
        weft_evt_Enter(NULL, t, m->region);
        om_set_team(m->team);
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
    om_set_team(m->saved_team);
}

/* What libgomp runs on every team thread in place of the region's
 * outlined function. */
static void trampoline(void *arg)
{
    om_par *p = arg;
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
    p->recorded = 0;
    if (!fn || atomic_load_explicit(&om_ompt, memory_order_relaxed) ||
        !om_begin(&g))
        return 0;
    if (requested == 0 && real_max_threads)
        requested = (unsigned)real_max_threads();
    om_team_fork(&p->team);
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
 * and the entry point returns after the region; the doacross loop the
 * encountering thread is in is its again then (see om.h). */
#define OMPW(name, params, args, n)                                          \
    static void(*real_##name) params;                                        \
    OM_EXPORT void name params                                               \
    {                                                                        \
        unsigned doacross_ = om_doacross_n;                                  \
        om_par p_;                                                           \
                                                                             \
        if (fork_begin(&p_, fn, data, n)) {                                  \
            fn = trampoline;                                                 \
            data = &p_;                                                      \
        }                                                                    \
        if (real_##name)                                                     \
            real_##name args;                                                \
        om_doacross_n = doacross_;                                           \
        fork_end(&p_);                                                       \
    }
/* A region's start (the old entry points, older than doacross loops):
 * the encountering thread runs fn itself after it and ends the region
 * with GOMP_parallel_end. */
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
    unsigned doacross = om_doacross_n, r = 0;
    om_par p;

    if (fork_begin(&p, fn, data, num_threads)) {
        fn = trampoline;
        data = &p;
    }
    if (real_GOMP_parallel_reductions)
        r = real_GOMP_parallel_reductions(fn, data, num_threads, flags);
    om_doacross_n = doacross;
    fork_end(&p);
    return r;
}

/* ---- host teams ----------------------------------------------------------- */

/* A teams construct on the host: what its trampoline needs. */
typedef struct om_league {
    void (*fn)(void *);
    void *data;
} om_league;

/* What libgomp runs in place of a teams construct's outlined function,
 * once per team, one team after another on the encountering thread:
 * the team's region around the program's function. */
static void teams_trampoline(void *arg)
{
    const om_league *l = arg;
    OTF2_RegionRef r = OTF2_UNDEFINED_REGION;
    unsigned depth = 0;
    weft__rguard g;

    if (om_begin(&g)) {
        r = om_region(OM_TEAMS, (const char *)(uintptr_t)l->fn + 1, NULL);
        if (r != OTF2_UNDEFINED_REGION) {
            weft_evt_Enter(NULL, weft_time(), r);
            depth = om_depth();
        }
        weft__recorder_end(&g);
    }
    l->fn(l->data);
    if (r != OTF2_UNDEFINED_REGION && weft__recorder_begin(&g)) {
        uint64_t t = weft_time();
        om_close_to(depth, t); /* what the body left open */
        weft_evt_Leave(NULL, t, r);
        weft__recorder_end(&g);
    }
}

static void (*real_GOMP_teams_reg)(void (*)(void *), void *, unsigned,
                                   unsigned, unsigned);

OM_EXPORT void GOMP_teams_reg(void (*fn)(void *), void *data,
                              unsigned num_teams, unsigned thread_limit,
                              unsigned flags);

/* `#pragma omp teams` on the host (GCC 11 and later): libgomp calls fn
 * once per team on this thread (see om.h). */
OM_EXPORT void GOMP_teams_reg(void (*fn)(void *), void *data,
                              unsigned num_teams, unsigned thread_limit,
                              unsigned flags)
{
    om_league l = { fn, data };

    if (!real_GOMP_teams_reg)
        return;
    if (fn && !atomic_load_explicit(&om_ompt, memory_order_relaxed))
        real_GOMP_teams_reg(teams_trampoline, &l, num_teams, thread_limit,
                            flags);
    else
        real_GOMP_teams_reg(fn, data, num_teams, thread_limit, flags);
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
    *(void **)&real_GOMP_teams_reg = real("GOMP_teams_reg");
    *(void **)&real_num_threads = real("omp_get_num_threads");
    *(void **)&real_thread_num = real("omp_get_thread_num");
    *(void **)&real_max_threads = real("omp_get_max_threads");
}
