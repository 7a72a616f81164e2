/* wrap.c - the wrappers of gomp.def, the real functions behind them, the
 * constructs a thread is in and the OpenMP locks (see om.h).
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockorder.h"
#include "om.h"

/* ---- the constructs a thread is in ------------------------------------- */

/* Constructs one thread may be in at once and still leave exactly;
 * deeper ones are not recorded (their Leave could not be matched). */
#define OM_OPEN_MAX 32

static __thread struct {
    OTF2_RegionRef region[OM_OPEN_MAX];
    const void *pc[OM_OPEN_MAX];
    uint8_t cons[OM_OPEN_MAX];
    unsigned n;
} open_ OM_TLS;

/* See om.h. */
void om_open(enum om_construct cons, const void *pc, const void *lock,
             uint64_t t)
{
    OTF2_RegionRef r;

    if (open_.n >= OM_OPEN_MAX ||
        (r = om_region(cons, pc, lock)) == OTF2_UNDEFINED_REGION)
        return;
    weft_evt_Enter(NULL, t, r);
    open_.region[open_.n] = r;
    open_.pc[open_.n] = pc;
    open_.cons[open_.n] = (uint8_t)cons;
    open_.n++;
}

/* See om.h. */
enum om_construct om_innermost(void)
{
    return open_.n ? (enum om_construct)open_.cons[open_.n - 1]
                   : OM__NCONSTRUCTS;
}

/* See om.h. */
const void *om_innermost_pc(void)
{
    return open_.n ? open_.pc[open_.n - 1] : NULL;
}

/* See om.h. */
void om_close(uint64_t t)
{
    if (open_.n == 0)
        return;
    open_.n--;
    weft_evt_Leave(NULL, t, open_.region[open_.n]);
}

/* See om.h. */
unsigned om_depth(void)
{
    return open_.n;
}

/* See om.h. */
void om_close_to(unsigned depth, uint64_t t)
{
    while (open_.n > depth)
        om_close(t);
}

/* ---- locks ------------------------------------------------------------- */

static rec_locks locks = REC_LOCKS_INIT(OTF2_PARADIGM_OPENMP);
/* The lock objects of the unnamed critical section, of atomic blocks
 * and of ordered blocks (libgomp has one of each). */
static const char om_unnamed_critical, om_atomic_lock, om_ordered_lock;

/* See om.h. */
void om_lock_acquired(const void *obj, uint64_t t)
{
    rec_lock_acquired(&locks, obj, t);
}

/* See om.h. */
void om_lock_releasing(const void *obj, uint64_t t)
{
    (void)rec_lock_releasing(&locks, obj, t);
}

/* ---- what each kind records (gomp.def) ---------------------------------- */

/* A wrapped call in progress, on the wrapper's stack. */
typedef struct om_call {
    weft__rguard g;
    OTF2_RegionRef region;
    int open;               /* END: the construct to leave is open */
} om_call;

/* pre_KIND: before the real call, guard raised: 1 when post_KIND is to
 * run after it. post_KIND(c, cons, lock, r): r is what the call returned
 * (1 for a void one); guard raised again, lowered after. */
static inline int pre_CALL(om_call *c, enum om_construct cons,
                           const void *pc, const void *lock, uint64_t t)
{
    c->region = om_region(cons, pc, lock);
    if (c->region == OTF2_UNDEFINED_REGION)
        return 0;
    weft_evt_Enter(NULL, t, c->region);
    return 1;
}

static inline void post_CALL(om_call *c, const void *lock, int r,
                             uint64_t t)
{
    (void)lock, (void)r;
    weft_evt_Leave(NULL, t, c->region);
}

static inline int pre_OPEN(om_call *c, enum om_construct cons,
                           const void *pc, const void *lock, uint64_t t)
{
    om_open(cons, pc, lock, t);
    (void)c;
    return 0;
}

#define post_OPEN post_NONE
/* (lock: the loop's count, no lock) */
static inline int pre_DOACROSS(om_call *c, enum om_construct cons,
                               const void *pc, const void *lock, uint64_t t)
{
    (void)lock;
    return pre_OPEN(c, cons, pc, NULL, t);
}

#define post_DOACROSS post_NONE

static inline void post_NONE(om_call *c, const void *lock, int r, uint64_t t)
{
    (void)c, (void)lock, (void)r, (void)t;
}

static inline int pre_NEXT(om_call *c, enum om_construct cons,
                           const void *pc, const void *lock, uint64_t t)
{
    if (om_innermost() != cons)
        om_open(cons, pc, lock, t);
    (void)c;
    return 0;
}

#define post_NEXT post_NONE

static inline int pre_END(om_call *c, enum om_construct cons,
                          const void *pc, const void *lock, uint64_t t)
{
    (void)lock;
    c->open = om_innermost() == cons;
    /* named after the construct it ends, when it is open */
    c->region = om_region(OM_IMPLICIT_BARRIER,
                          c->open ? om_innermost_pc() : pc, NULL);
    if (c->region != OTF2_UNDEFINED_REGION)
        weft_evt_Enter(NULL, t, c->region);
    return 1;
}

static inline void post_END(om_call *c, const void *lock, int r, uint64_t t)
{
    (void)lock, (void)r;
    if (c->region != OTF2_UNDEFINED_REGION)
        weft_evt_Leave(NULL, t, c->region);
    if (c->open)
        om_close(t);
}

static inline int pre_END_OPEN(om_call *c, enum om_construct cons,
                               const void *pc, const void *lock, uint64_t t)
{
    return om_innermost() == cons && pre_END(c, cons, pc, lock, t);
}

#define post_END_OPEN post_END

static inline int pre_END_NOWAIT(om_call *c, enum om_construct cons,
                                 const void *pc, const void *lock, uint64_t t)
{
    (void)pc, (void)lock, (void)t;
    c->open = om_innermost() == cons;
    return c->open;
}

static inline void post_END_NOWAIT(om_call *c, const void *lock, int r,
                                   uint64_t t)
{
    (void)c, (void)lock, (void)r;
    om_close(t);
}

static inline int pre_LOCK_OPEN(om_call *c, enum om_construct cons,
                                const void *pc, const void *lock, uint64_t t)
{
    om_open(cons, pc, lock, t);
    c->open = om_innermost() == cons;
    return c->open;
}

static inline void post_LOCK_OPEN(om_call *c, const void *lock, int r,
                                  uint64_t t)
{
    (void)c, (void)r;
    om_lock_acquired(lock, t);
}

static inline int pre_LOCK_CLOSE(om_call *c, enum om_construct cons,
                                 const void *pc, const void *lock,
                                 uint64_t t)
{
    (void)pc;
    c->open = om_innermost() == cons;
    if (c->open)
        om_lock_releasing(lock, t);
    return c->open;
}

static inline void post_LOCK_CLOSE(om_call *c, const void *lock, int r,
                                   uint64_t t)
{
    (void)c, (void)lock, (void)r;
    om_close(t);
}

#define pre_SET pre_CALL

static inline void post_SET(om_call *c, const void *lock, int r, uint64_t t)
{
    om_lock_acquired(lock, t);
    post_CALL(c, lock, r, t);
}

static inline int pre_UNSET(om_call *c, enum om_construct cons,
                            const void *pc, const void *lock, uint64_t t)
{
    if (!pre_CALL(c, cons, pc, lock, t))
        return 0;
    om_lock_releasing(lock, t);
    return 1;
}

#define post_UNSET post_CALL
#define pre_TEST pre_CALL

static inline void post_TEST(om_call *c, const void *lock, int r, uint64_t t)
{
    if (r)
        om_lock_acquired(lock, t);
    post_CALL(c, lock, r, t);
}

/* ---- the wrappers -------------------------------------------------------- */

/* The wrappers' prototypes (libgomp installs no header of its ABI). */
#define OMV(name, cons, kind, params, args, lock) OM_EXPORT void name params;
#define OMR(name, cons, kind, ret, params, args, lock)                       \
    OM_EXPORT ret name params;
#include "gomp.def"

/* The real function of each entry, resolved at load (om_resolve_all). */
#define OMV(name, cons, kind, params, args, lock)                            \
    static void(*_Atomic real_##name) params;
#define OMR(name, cons, kind, ret, params, args, lock)                       \
    static ret(*_Atomic real_##name) params;
#include "gomp.def"

/* Loads real_##name into fn (dlsym RTLD_NEXT on first use). */
#define OM_LOAD(fn, name)                                                    \
    do {                                                                     \
        fn = atomic_load_explicit(&real_##name, memory_order_relaxed);       \
        if (OM_UNLIKELY(!fn)) {                                              \
            void *p_ = dlsym(RTLD_NEXT, #name);                              \
            memcpy(&fn, &p_, sizeof p_);                                     \
            atomic_store_explicit(&real_##name, fn, memory_order_relaxed);   \
        }                                                                    \
    } while (0)

static void doacross_resolve(void);

/* See om.h. */
void om_resolve_all(void)
{
#define OMV(name, cons, kind, params, args, lock)                            \
    {                                                                        \
        void(*fn_) params;                                                   \
        OM_LOAD(fn_, name);                                                  \
        (void)fn_;                                                           \
    }
#define OMR(name, cons, kind, ret, params, args, lock)                       \
    {                                                                        \
        ret(*fn_) params;                                                    \
        OM_LOAD(fn_, name);                                                  \
        (void)fn_;                                                           \
    }
#include "gomp.def"
    doacross_resolve();
}

/* See om.h. */
void om_real_barrier(void)
{
    void (*fn)(void);

    OM_LOAD(fn, GOMP_barrier);
    if (fn)
        fn();
}

/* Kinds that record nothing when the thread is in their construct
 * already (the next chunk of a loop, the next section): such a call
 * goes straight to libgomp, the hot path of a dynamic loop. */
#define OM_QUICK_NEXT 1
#define OM_QUICK_CALL 0
#define OM_QUICK_OPEN 0
#define OM_QUICK_DOACROSS 0
#define OM_QUICK_END 0
#define OM_QUICK_END_OPEN 0
#define OM_QUICK_END_NOWAIT 0
#define OM_QUICK_LOCK_OPEN 0
#define OM_QUICK_LOCK_CLOSE 0
#define OM_QUICK_SET 0
#define OM_QUICK_UNSET 0
#define OM_QUICK_TEST 0

/* A wrapper: records what its kind says around the real call; without
 * libgomp behind it (never called then: the program links it), it does
 * nothing. */
#define OM_WRAP_BEGIN(name, cons, kind, lock)                                \
    om_call c_ = { .region = OTF2_UNDEFINED_REGION };                        \
    const void *l_ = (const void *)(lock);                                   \
    int rec_ = 0;                                                            \
    uint64_t t_;                                                             \
    (void)l_;                                                                \
    OM_LOAD(fn_, name);                                                      \
    if (!(OM_QUICK_##kind && om_innermost() == (cons)) &&                    \
        !atomic_load_explicit(&om_ompt, memory_order_relaxed) &&             \
        om_begin(&c_.g)) {                                                   \
        t_ = weft_time();                                                    \
        rec_ = pre_##kind(&c_, cons, OM_CALLER, l_, t_);                     \
        weft__recorder_end(&c_.g);                                           \
    }
#define OM_WRAP_END(kind, r)                                                 \
    if (rec_ && weft__recorder_begin(&c_.g)) {                               \
        post_##kind(&c_, l_, (int)(r), weft_time());                         \
        weft__recorder_end(&c_.g);                                           \
    }

#define OMV(name, cons, kind, params, args, lock)                            \
    OM_EXPORT void name params                                               \
    {                                                                        \
        void(*fn_) params;                                                   \
        OM_WRAP_BEGIN(name, cons, kind, lock)                                \
        if (fn_)                                                             \
            fn_ args;                                                        \
        OM_WRAP_END(kind, 1)                                                 \
    }
__thread int om_ompt_testing;

#define OM_TESTS_TEST 1 /* which kinds are lock tests (om_ompt_testing) */
#define OM_TESTS_CALL 0
#define OM_TESTS_OPEN 0
#define OM_TESTS_NEXT 0
#define OM_TESTS_DOACROSS 0
#define OM_TESTS_END 0
#define OM_TESTS_END_OPEN 0
#define OM_TESTS_END_NOWAIT 0
#define OM_TESTS_LOCK_OPEN 0
#define OM_TESTS_LOCK_CLOSE 0
#define OM_TESTS_SET 0
#define OM_TESTS_UNSET 0

/* Which kinds start a doacross loop (om_doacross_n: its count is `lock`). */
#define OM_STARTS_DOACROSS 1
#define OM_STARTS_CALL 0
#define OM_STARTS_OPEN 0
#define OM_STARTS_NEXT 0
#define OM_STARTS_END 0
#define OM_STARTS_END_OPEN 0
#define OM_STARTS_END_NOWAIT 0
#define OM_STARTS_LOCK_OPEN 0
#define OM_STARTS_LOCK_CLOSE 0
#define OM_STARTS_SET 0
#define OM_STARTS_UNSET 0
#define OM_STARTS_TEST 0
#define OMR(name, cons, kind, ret, params, args, lock)                       \
    OM_EXPORT ret name params                                                \
    {                                                                        \
        ret(*fn_) params;                                                    \
        ret r_ = (ret)0;                                                     \
        OM_WRAP_BEGIN(name, cons, kind, lock)                                \
        if (OM_STARTS_##kind)                                                \
            om_doacross_n = (unsigned)(uintptr_t)l_;                         \
        om_ompt_testing += OM_TESTS_##kind;                                  \
        if (fn_)                                                             \
            r_ = fn_ args;                                                   \
        om_ompt_testing -= OM_TESTS_##kind;                                  \
        OM_WRAP_END(kind, r_ != (ret)0)                                      \
        return r_;                                                           \
    }
#include "gomp.def"

/* ---- a doacross loop's waits --------------------------------------------- */

/* GOMP_doacross_wait(first, ...) and GOMP_doacross_ull_wait take the
 * iteration a `depend(sink: ...)` waits for, one argument per loop of the
 * nest: om_doacross_n of them (see om.h), which the wrapper forwards
 * through a call of each arity up to OM_DOACROSS_MAX (C cannot pass on a
 * va_list to libgomp). A nest deeper than that (or a wait outside any
 * doacross loop) cannot be forwarded: too few arguments would make
 * libgomp wait for the wrong iteration, and let iterations race or hang
 * in silence, so the process says so and aborts. */
#define OM_DOACROSS_MAX 16

__thread unsigned om_doacross_n;

/* The first n arguments of v, for a call of arity n. */
#define OM_V1 v[0]
#define OM_V2 OM_V1, v[1]
#define OM_V3 OM_V2, v[2]
#define OM_V4 OM_V3, v[3]
#define OM_V5 OM_V4, v[4]
#define OM_V6 OM_V5, v[5]
#define OM_V7 OM_V6, v[6]
#define OM_V8 OM_V7, v[7]
#define OM_V9 OM_V8, v[8]
#define OM_V10 OM_V9, v[9]
#define OM_V11 OM_V10, v[10]
#define OM_V12 OM_V11, v[11]
#define OM_V13 OM_V12, v[12]
#define OM_V14 OM_V13, v[13]
#define OM_V15 OM_V14, v[14]
#define OM_V16 OM_V15, v[15]
#define OM_ARITIES(X)                                                        \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)     \
    X(14) X(15) X(16)

static _Noreturn void doacross_too_deep(const char *name, unsigned n)
{
    fprintf(stderr,
            "libweft-openmp: %s in a doacross loop of %u loops (ordered(n)): "
            "it forwards the arguments of 1 to %d only; aborting rather "
            "than let the loop's iterations wait wrongly\n",
            name, n, OM_DOACROSS_MAX);
    abort();
}

/* A wait: T the type of the loops' iteration numbers. */
#define OM_DOACROSS_WAIT(name, T)                                            \
    static void(*_Atomic real_##name)(T, ...);                               \
    OM_EXPORT void name(T first, ...);                                       \
    OM_EXPORT void name(T first, ...)                                        \
    {                                                                        \
        void (*fn_)(T, ...);                                                 \
        unsigned n_ = om_doacross_n;                                         \
        T v[OM_DOACROSS_MAX] = { first };                                    \
        va_list ap_;                                                         \
        OM_WRAP_BEGIN(name, OM_DOACROSS_WAIT, CALL, NULL)                    \
        if (n_ == 0 || n_ > OM_DOACROSS_MAX)                                 \
            doacross_too_deep(#name, n_);                                    \
        va_start(ap_, first);                                                \
        for (unsigned i_ = 1; i_ < n_; i_++)                                 \
            v[i_] = va_arg(ap_, T);                                          \
        va_end(ap_);                                                         \
        if (fn_) {                                                           \
            switch (n_) {                                                    \
                OM_ARITIES(OM_CALL_ARITY)                                    \
            }                                                                \
        }                                                                    \
        OM_WRAP_END(CALL, 1)                                                 \
    }
#define OM_CALL_ARITY(k)                                                     \
    case k:                                                                  \
        fn_(OM_V##k);                                                        \
        break;

OM_DOACROSS_WAIT(GOMP_doacross_wait, long)
OM_DOACROSS_WAIT(GOMP_doacross_ull_wait, unsigned long long)

/* The waits' real functions (om_resolve_all). */
static void doacross_resolve(void)
{
    void (*l)(long, ...);
    void (*u)(unsigned long long, ...);

    OM_LOAD(l, GOMP_doacross_wait);
    OM_LOAD(u, GOMP_doacross_ull_wait);
    (void)l, (void)u;
}
