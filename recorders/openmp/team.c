/* team.c - thread teams: the Comm of each team a thread forks, and its
 * members, told to weftd (see om.h).
 *
 * DESIGN
 * A team's Comm names an empty group (libweft-pthread's way): which
 * threads a team gets is known only as they start, after the Comm is in
 * their events. Each thread, as it joins a team, tells weftd which
 * member it is with weft's own TeamMember record (thread number, its
 * location), and weftd gives the archive's Comm a group listing them
 * (otf2defs.c). A Comm is one membership: weftd keeps the first thread
 * told for each number.
 *
 * The threads of a process's outermost teams are mostly the same from
 * region to region (both runtimes keep a pool), so such a team takes
 * the Comm of its shape (the encountering thread, the size), and a
 * thread tells its number once per Comm: the shape keeps who claimed
 * each number. The pool changes when it grows again after it shrank
 * (libgomp ends the threads a smaller team leaves out, and starts new
 * ones for a larger team): a team whose encountering thread started
 * threads (pthread_create, counted per thread here) since its shape's
 * Comm was made gets a new Comm for the shape. A change nothing shows
 * (libgomp's OMP_PROC_BIND places threads anew for each team size) is
 * seen only as a thread finds its number claimed by another: that team
 * keeps the Comm (its group names the threads that claimed first), the
 * next one of its shape gets a new one. Nested teams (libgomp starts
 * their threads anew, libomp takes any) get a fresh Comm each. Comms
 * made so, new or fresh, are at most OM_FRESH_MAX per process; beyond,
 * a team takes its shape's Comm as it is.
 *
 * The first thread of a team to join it (any of them: the runtime starts
 * them in no order) chooses its Comm (om_team.chosen), the others wait
 * for that (a few instructions, or one definition).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>

#include "om.h"

/* Team shapes with a Comm of their own; beyond, a team takes the Comm of
 * the last one. */
#define OM_SHAPES_MAX 1024
/* Fresh Comms (see DESIGN) per process. */
#define OM_FRESH_MAX 4096
/* A thread waiting for its team's Comm to be chosen spins this many
 * times before it yields (choosing takes a few hundred ns). */
#define OM_SPINS 1000
#if defined(__x86_64__) || defined(__i386__)
#define OM_PAUSE() __builtin_ia32_pause()
#else
#define OM_PAUSE() ((void)0)
#endif

/* om_team.chosen: being chosen, and the bits of a choice (the Comm in the
 * low 32, the shape's number + 1 above: 0 for a fresh one). */
#define OM_CHOOSING UINT64_MAX
#define OM_CHOSEN (UINT64_C(1) << 63)

typedef struct om_shape {
    OTF2_CommRef parent, comm;
    uint32_t size, creator;
    uint64_t births;            /* the creator's when comm was made */
    atomic_int unsettled;       /* a claim found another's */
    _Atomic uint32_t *claims;   /* by thread number: location index + 1 */
} om_shape;

static struct {
    atomic_flag busy;
    int defined;                  /* the groups of team Comms */
    OTF2_GroupRef group;
    uint32_t n, fresh;
    om_shape shape[OM_SHAPES_MAX];
} T = { .busy = ATOMIC_FLAG_INIT };

/* This thread's team (OTF2_UNDEFINED_COMM outside any region), and the
 * Comm of its implicit team outside any. */
static __thread OTF2_CommRef my_team OM_TLS = OTF2_UNDEFINED_COMM;
static __thread OTF2_CommRef my_initial OM_TLS = OTF2_UNDEFINED_COMM;

/* Threads this thread started (see DESIGN); the threads of its teams
 * read it: a line of its own. */
static __thread struct {
    _Alignas(OM_LINE) _Atomic uint64_t n;
} started OM_TLS;

static int (*real_thread_num)(void);
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *,
                                  void *(*)(void *), void *);

/* The groups every team Comm names (empty: see DESIGN). busy held. */
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

/* A new Comm for teams of `size` (0: an initial thread's) under parent;
 * `number` tells it from this process's others (the content weftd
 * unifies by is otherwise the same). busy held. */
static OTF2_CommRef define_comm(OTF2_CommRef parent, uint32_t size,
                                uint32_t number)
{
    weft_record r = { .type = WEFT_REC_Comm };
    char name[64];

    if (!T.defined && !define_groups())
        return OTF2_UNDEFINED_COMM;
    if (size == 0)
        snprintf(name, sizeof name, "OpenMP initial thread");
    else
        snprintf(name, sizeof name, "OpenMP thread team (%u threads)", size);
    r.u.Comm.self = weft__recorder_newid(WEFT_REF_COMM);
    r.u.Comm.name = weft_string(name);
    r.u.Comm.group = T.group;
    r.u.Comm.parent = parent;
    r.u.Comm.flags = OTF2_COMM_FLAG_NONE;
    r.u.Comm.identity = (uint64_t)weft_rank() << 32 | number;
    if (r.u.Comm.name == OTF2_UNDEFINED_STRING || weft__recorder_def(&r) < 0)
        return OTF2_UNDEFINED_COMM;
    return r.u.Comm.self;
}

/* The shape (parent, size, creator), made if new (its number + 1), 0 when
 * out of memory; with a new Comm if `births` (its creator's now) are not
 * those of its Comm or a claim found another's (see DESIGN), unless
 * there were OM_FRESH_MAX of those. busy held. */
static uint32_t shape_of(OTF2_CommRef parent, uint32_t size,
                         uint32_t creator, uint64_t births)
{
    OTF2_CommRef comm;

    om_shape *s;
    uint32_t i;

    for (i = 0; i < T.n; i++) {
        s = &T.shape[i];
        if (s->parent != parent || s->size != size || s->creator != creator)
            continue;
        if ((s->births == births &&
             !atomic_load_explicit(&s->unsettled, memory_order_relaxed)) ||
            T.fresh == OM_FRESH_MAX)
            return i + 1;
        comm = define_comm(parent, size, UINT32_C(1) << 31 | T.fresh);
        if (comm != OTF2_UNDEFINED_COMM) {
            T.fresh++;
            s->comm = comm;
            s->births = births;
            for (uint32_t k = 0; k < (size ? size : 1); k++)
                atomic_store_explicit(&s->claims[k], 0,
                                      memory_order_relaxed);
            atomic_store_explicit(&s->unsettled, 0, memory_order_relaxed);
        }
        return i + 1;
    }
    if (T.n == OM_SHAPES_MAX)
        return T.n;
    s = &T.shape[T.n];
    s->claims = calloc(size ? size : 1, sizeof *s->claims);
    if (!s->claims)
        return 0;
    s->comm = define_comm(parent, size, T.n);
    if (s->comm == OTF2_UNDEFINED_COMM) {
        free(s->claims);
        return 0;
    }
    s->parent = parent;
    s->size = size;
    s->creator = creator;
    s->births = births;
    atomic_init(&s->unsettled, 0);
    return ++T.n;
}

/* The choice of Comm for team t of `size` (om_team.chosen's bits), 0
 * when out of memory. */
static uint64_t choose(const om_team *t, uint32_t size)
{
    /* the shape this thread chose last (the usual case: the same again,
     * its Comm as it was; only its creator's teams change it) */
    static __thread struct {
        OTF2_CommRef parent;
        uint32_t size, creator, s;
    } last OM_TLS;
    uint64_t b = atomic_load_explicit(t->births, memory_order_relaxed), c = 0;
    OTF2_CommRef comm;
    const om_shape *sh;
    uint32_t s = 0;

    if (last.s && last.parent == t->parent && last.size == size &&
        last.creator == t->creator) {
        sh = &T.shape[last.s - 1];
        if (sh->births == b &&
            !atomic_load_explicit(&sh->unsettled, memory_order_relaxed))
            return OM_CHOSEN | (uint64_t)last.s << 32 | sh->comm;
    }
    while (atomic_flag_test_and_set_explicit(&T.busy, memory_order_acquire))
        sched_yield();
    if (t->parent == OTF2_UNDEFINED_COMM || size == 0 ||
        T.fresh == OM_FRESH_MAX) {
        s = shape_of(t->parent, size, t->creator, b);
        if (s) {
            c = OM_CHOSEN | (uint64_t)s << 32 | T.shape[s - 1].comm;
            last.parent = t->parent;
            last.size = size;
            last.creator = t->creator;
            last.s = s;
        }
    } else { /* nested: fresh */
        comm = define_comm(t->parent, size, UINT32_C(1) << 31 | T.fresh);
        if (comm != OTF2_UNDEFINED_COMM) {
            T.fresh++;
            c = OM_CHOSEN | comm;
        }
    }
    atomic_flag_clear_explicit(&T.busy, memory_order_release);
    return c;
}

/* Tells weftd that this thread is member `index` of comm. */
static void tell(OTF2_CommRef comm, uint32_t index, uint32_t thread)
{
    weft_record r = { .type = WEFT_REC_TeamMember };

    r.u.TeamMember.comm = comm;
    r.u.TeamMember.index = index;
    r.u.TeamMember.thread = thread;
    weft__recorder_def(&r);
}

/* See om.h. */
void om_team_fork(om_team *t)
{
    t->parent = my_team;
    t->creator = weft_location_index();
    t->births = &started.n;
    atomic_init(&t->chosen, 0);
}

/* See om.h. */
OTF2_CommRef om_team_join(om_team *t, uint32_t size, uint32_t index)
{
    uint64_t c = 0, was = 0;
    uint32_t me = weft_location_index() + 1u, s, claimed;
    _Atomic uint32_t *claim;

    if (atomic_compare_exchange_strong_explicit(&t->chosen, &was,
                                                OM_CHOOSING,
                                                memory_order_acquire,
                                                memory_order_acquire)) {
        c = choose(t, size);
        atomic_store_explicit(&t->chosen, c, memory_order_release);
    } else {
        for (unsigned spins = 0;
             (c = atomic_load_explicit(&t->chosen, memory_order_acquire)) ==
             OM_CHOOSING;
             spins++)
            if (spins < OM_SPINS)
                OM_PAUSE();
            else
                sched_yield();
    }
    if (!c)
        return OTF2_UNDEFINED_COMM;
    s = (uint32_t)(c >> 32 & 0x7fffffffu);
    if (!s) { /* fresh */
        tell((OTF2_CommRef)c, index, me - 1u);
        return (OTF2_CommRef)c;
    }
    if (index >= (T.shape[s - 1].size ? T.shape[s - 1].size : 1))
        return (OTF2_CommRef)c;
    claim = &T.shape[s - 1].claims[index];
    claimed = atomic_load_explicit(claim, memory_order_relaxed);
    if (claimed == me)
        return (OTF2_CommRef)c; /* told before */
    if (claimed == 0 && atomic_compare_exchange_strong_explicit(
                            claim, &claimed, me, memory_order_relaxed,
                            memory_order_relaxed))
        tell((OTF2_CommRef)c, index, me - 1u);
    else /* another thread's number: the pool changed */
        atomic_store_explicit(&T.shape[s - 1].unsettled, 1,
                              memory_order_relaxed);
    return (OTF2_CommRef)c;
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
    om_team t;

    if (OM_LIKELY(my_team != OTF2_UNDEFINED_COMM))
        return my_team;
    if (my_initial == OTF2_UNDEFINED_COMM) {
        om_team_fork(&t);
        my_initial = om_team_join(&t, 0, 0);
    }
    return my_initial;
}

/* See om.h. */
uint32_t om_thread_num(void)
{
    return my_team != OTF2_UNDEFINED_COMM && real_thread_num
               ? (uint32_t)real_thread_num()
               : 0;
}

/* Counts the threads this thread starts (see DESIGN): the runtimes start
 * theirs so, in the encountering thread before its team runs. */
OM_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    if (OM_UNLIKELY(!real_pthread_create))
        om_team_resolve();
    if (OM_UNLIKELY(!real_pthread_create))
        return EAGAIN;
    atomic_fetch_add_explicit(&started.n, 1, memory_order_relaxed);
    return real_pthread_create(th, attr, fn, arg);
}

/* See om.h. */
void om_team_resolve(void)
{
    *(void **)&real_thread_num = dlsym(RTLD_NEXT, "omp_get_thread_num");
    *(void **)&real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
}
