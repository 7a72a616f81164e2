/* wrap.c - the wrappers of calls.def, their regions, the real functions
 * behind them and the begin/end of every recorded call (see pt.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "pt.h"

typedef struct pt_desc {
    const char *name;
    OTF2_RegionRole role;
} pt_desc;

static const pt_desc calls[PT__COUNT] = {
#define PT(name, role_, kind, params, args, lock, first)                     \
    [PT_##name] = { #name, OTF2_REGION_ROLE_##role_ },
#include "calls.def"
    [PT_pthread_create] = { "pthread_create", OTF2_REGION_ROLE_THREAD_CREATE },
    [PT_pthread_join] = { "pthread_join", OTF2_REGION_ROLE_THREAD_WAIT },
    [PT_pthread_tryjoin_np] = { "pthread_tryjoin_np",
                                OTF2_REGION_ROLE_THREAD_WAIT },
    [PT_pthread_timedjoin_np] = { "pthread_timedjoin_np",
                                  OTF2_REGION_ROLE_THREAD_WAIT },
    [PT_pthread_clockjoin_np] = { "pthread_clockjoin_np",
                                  OTF2_REGION_ROLE_THREAD_WAIT },
};

/* Each call's region (weft__recorder_region_once). */
static _Atomic uint32_t regions[PT__COUNT];

/* Calls WEFT_FILTER excludes (pt_filter_setup): called, not recorded. */
static _Atomic uint8_t excluded[PT__COUNT];

/* See pt.h. */
void pt_filter_setup(void)
{
    uint8_t x[PT__COUNT];

    weft__recorder_filter("weft-pthread", PT__COUNT, pt_call_name, x);
    for (unsigned i = 0; i < PT__COUNT; i++)
        atomic_store_explicit(&excluded[i], x[i], memory_order_relaxed);
}

/* See pt.h. */
int pt_excluded(unsigned call)
{
    return atomic_load_explicit(&excluded[call], memory_order_relaxed);
}

/* See pt.h. */
const char *pt_call_name(unsigned call)
{
    return calls[call].name;
}

/* See pt.h. */
OTF2_RegionRef pt_region(unsigned call)
{
    return weft__recorder_region_once(&regions[call], calls[call].name,
                                      calls[call].role,
                                      OTF2_PARADIGM_PTHREAD);
}

/* See pt.h. */
void pt_define_regions(void)
{
    for (unsigned i = 0; i < PT__COUNT; i++)
        (void)pt_region(i);
}

/* See pt.h. glibc has two versions of the condition variable functions;
 * a plain dlsym may give the old one (pre-2.3.2 binaries' layout), so the
 * current one is asked for by name where it exists (x86_64, i386, ...);
 * libweft-pthread.map binds our wrappers to that version only. */
void *pt_real(const char *name)
{
    void *p = NULL;

    if (strncmp(name, "pthread_cond_", 13) == 0)
        p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
    if (!p)
        p = dlsym(RTLD_NEXT, name);
    return p;
}

/* The regions of this thread's recorded calls in progress, innermost
 * last (calls nest only through pthread_once's init routine): left by
 * pt_leave_open when the thread ends inside one. */
#define PT_OPEN_MAX 8
static __thread OTF2_RegionRef open_regions[PT_OPEN_MAX] PT_TLS;
static __thread unsigned nopen PT_TLS;

/* See pt.h. */
void pt_leave_open(uint64_t t)
{
    while (nopen > 0) {
        nopen--;
        if (nopen < PT_OPEN_MAX)
            weft_evt_Leave(NULL, t, open_regions[nopen]);
    }
}

/* See pt.h. */
int pt_begin(pt_call *c, unsigned call, uint64_t *t, const void *caller)
{
    int r = pt_recording();

    if (r == 0 || weft__recorder_foreign(caller))
        return 0;
    pt_guard(c);
    if ((r < 0 && !pt_ready_slow()) || pt_excluded(call))
        goto no;
    c->region = pt_region(call);
    if (c->region == OTF2_UNDEFINED_REGION)
        goto no;
    *t = weft_time();
    weft_evt_Enter(NULL, *t, c->region);
    if (nopen < PT_OPEN_MAX)
        open_regions[nopen] = c->region;
    nopen++;
    return 1;
no:
    pt_unguard(c);
    return 0;
}

/* See pt.h. */
void pt_end(pt_call *c, uint64_t t)
{
    weft_evt_Leave(NULL, t, c->region);
    if (nopen > 0)
        nopen--;
    pt_unguard(c);
}

/* ---- what each kind records (calls.def) -------------------------------- */

/* pre_: before the real call; returns what post_ needs to know (1: a
 * condition wait's mutex was held by a counted or recorded acquisition,
 * so its taking back is recorded; a mutex taken while nothing was
 * recorded - before the session, or by a call WEFT_FILTER excludes - is
 * released unrecorded too). */
static inline int pre_ACQUIRE(const void *lock, uint64_t t)
{
    (void)lock, (void)t;
    return 0;
}

static inline void post_ACQUIRE(const void *lock, int rc, uint64_t t, int h)
{
    (void)h;
    if (rc == 0)
        pt_lock_acquired(lock, t);
}

static inline int pre_RELEASE(const void *lock, uint64_t t)
{
    pt_lock_releasing(lock, t);
    return 0;
}

static inline void post_RELEASE(const void *lock, int rc, uint64_t t, int h)
{
    (void)lock, (void)rc, (void)t, (void)h;
}

static inline int pre_CWAIT(const void *lock, uint64_t t)
{
    int counted = pt_count_drop(lock);

    return pt_lock_releasing(lock, t) || counted;
}

static inline void post_CWAIT(const void *lock, int rc, uint64_t t, int h)
{
    if (h && (rc == 0 || rc == ETIMEDOUT))
        pt_lock_acquired(lock, t);
}

static inline int pre_NONE(const void *lock, uint64_t t)
{
    (void)lock, (void)t;
    return 0;
}

static inline void post_NONE(const void *lock, int rc, uint64_t t, int h)
{
    (void)lock, (void)rc, (void)t, (void)h;
}

#define pre_ONCE pre_NONE
#define post_ONCE post_NONE

/* ---- the wrappers ------------------------------------------------------ */

/* The real function of each entry, resolved on its first call; `none`
 * (calls.def's `first` of a call never counted) has none. */
#define PT(name, role, kind, params, args, lock, first)                      \
    static int(*_Atomic real_##name) params;
#include "calls.def"
static int (*_Atomic real_none)(const void *);

/* pthread_once's `first` (calls.def): 0 when once control o is done
 * already, so that the call would return 0 at once without running its
 * routine; EBUSY when it may run it (it is recorded then). glibc keeps
 * __PTHREAD_ONCE_DONE (2) in the control word and tests it so itself
 * (nptl/pthread_once.c; tests/e2e_locks.sh fails if this glibc does
 * not: lockcount's calls of a done once would all be recorded). */
static int once_done(const void *o)
{
    return (__atomic_load_n((const int *)o, __ATOMIC_ACQUIRE) & 2) ? 0
                                                                   : EBUSY;
}
static int (*_Atomic real_once_done)(const void *) = once_done;

/* Loads real_##name into fn, resolving it on first use; `fail` when
 * there is none. */
#define PT_LOAD(fn, name, fail)                                              \
    do {                                                                     \
        fn = atomic_load_explicit(&real_##name, memory_order_relaxed);       \
        if (PT_UNLIKELY(!fn)) {                                              \
            int saved_ = errno;                                              \
            void *p_ = pt_real(#name);                                       \
            memcpy(&fn, &p_, sizeof p_);                                     \
            errno = saved_;                                                  \
            if (!fn)                                                         \
                fail;                                                        \
            atomic_store_explicit(&real_##name, fn, memory_order_relaxed);   \
        }                                                                    \
    } while (0)

/* See pt.h. */
void pt_resolve_all(void)
{
#define PT(name, role, kind, params, args, lock, first)                      \
    {                                                                        \
        int(*fn_) params;                                                    \
        PT_LOAD(fn_, name, (void)0);                                         \
        (void)fn_;                                                           \
    }
#include "calls.def"
}

/* A wrapper: counted (count.c) when its kind is and locks are counted,
 * else recorded. */
#define PT(name, role, kind, params, args, lock, first)                      \
    PT_EXPORT int name params                                                \
    {                                                                        \
        int(*fn_) params;                                                    \
        __typeof__(atomic_load(&real_##first)) ff_;                          \
        const void *l_ = (const void *)(uintptr_t)(lock);                    \
        pt_call c_;                                                          \
        uint64_t t_;                                                         \
        int rc_, h_;                                                         \
                                                                             \
        PT_LOAD(fn_, name, return ENOSYS);                                   \
        if (PT_COUNTS_##kind &&                                              \
            pt_count_begin(&c_, PT_##name, PT_CALLER, l_,                    \
                           PT_RELEASES_##kind)) {                            \
            PT_LOAD(ff_, first, ff_ = NULL);                                 \
            t_ = weft_time();                                                \
            rc_ = ff_ ? ff_(lock) : EBUSY;                                   \
            if (pt_count_end(&c_, PT_##name, l_, rc_, t_,                    \
                             PT_RELEASES_##kind))                            \
                return rc_;                                                  \
        }                                                                    \
        if (!pt_begin(&c_, PT_##name, &t_, PT_CALLER))                       \
            return fn_ args;                                                 \
        h_ = pre_##kind(l_, t_);                                             \
        pt_pause(&c_);                                                       \
        rc_ = fn_ args;                                                      \
        t_ = pt_resume(&c_);                                                 \
        post_##kind(l_, rc_, t_, h_);                                        \
        pt_end(&c_, t_);                                                     \
        return rc_;                                                          \
    }
#include "calls.def"
