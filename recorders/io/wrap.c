/* wrap.c - the wrappers of calls.def, their regions, the real functions
 * and the one guard (see io.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io.h"
#include "session.h"

typedef struct io_call {
    const char *name;
    OTF2_RegionRole role;
} io_call;

static const io_call calls[IO__COUNT] = {
#define IO(name_, ret, role_, hook, params, args)                            \
    [IO_##name_] = { #name_, OTF2_REGION_ROLE_##role_ },
#define IOV(name_, ret, role_, hook)                                         \
    [IO_##name_] = { #name_, OTF2_REGION_ROLE_##role_ },
#include "calls.def"
};

/* The real functions, NULL until first used. */
static _Atomic(void *) reals[IO__COUNT];
/* Each call's region (weft__recorder_region_once). */
static _Atomic uint32_t regions[IO__COUNT];

/* See io.h. dlsym does not call the functions wrapped here; two threads
 * resolving at once store the same pointer. */
void *io_real(unsigned call)
{
    void *p = atomic_load_explicit(&reals[call], memory_order_relaxed);
    static const char msg[] = "weft-io: the C library has no ";

    if (p)
        return p;
    p = dlsym(RTLD_NEXT, calls[call].name);
    if (!p) {
        /* Nothing to call through to: say so without the wrapped
         * functions. */
        (void)!syscall(SYS_write, 2, msg, sizeof msg - 1);
        (void)!syscall(SYS_write, 2, calls[call].name,
                       strlen(calls[call].name));
        (void)!syscall(SYS_write, 2, "\n", 1);
        abort();
    }
    atomic_store_explicit(&reals[call], p, memory_order_relaxed);
    return p;
}

/* See io.h. */
void io_resolve_all(void)
{
    for (unsigned i = 0; i < IO__COUNT; i++) {
        void *p = dlsym(RTLD_NEXT, calls[i].name);
        if (p) /* else io_real says so if it is ever called */
            atomic_store_explicit(&reals[i], p, memory_order_relaxed);
    }
}

/* The region of `call`, defined on first use. */
static OTF2_RegionRef region_of(unsigned call)
{
    return weft__recorder_region_once(&regions[call], calls[call].name,
                                      calls[call].role, OTF2_PARADIGM_NONE);
}

/* Calls WEFT_FILTER excludes (io_filter_setup): called, not recorded. */
static _Atomic uint8_t excluded[IO__COUNT];

/* See io.h. */
const char *io_call_name(unsigned call)
{
    return calls[call].name;
}

/* See io.h. */
void io_filter_setup(void)
{
    uint8_t x[IO__COUNT];

    weft__recorder_filter("weft-io", IO__COUNT, io_call_name, x);
    for (unsigned i = 0; i < IO__COUNT; i++)
        atomic_store_explicit(&excluded[i], x[i], memory_order_relaxed);
}

/* See io.h. */
int io_start(io_frame *f, unsigned call, const void *caller)
{
    int on = io_session_on();

    if (on == 0 || weft__recorder_foreign(caller) ||
        !weft__recorder_begin(&f->g))
        return 0;
    if ((on < 0 && !io_session_start()) ||
        atomic_load_explicit(&excluded[call], memory_order_relaxed)) {
        weft__recorder_end(&f->g);
        errno = f->g.saved_errno;
        return 0;
    }
    f->call = call;
    f->entry = 0;
    f->match = 0;
    f->aux = -1;
    f->path = NULL;
    f->region = region_of(call);
    f->t0 = f->t = weft_time();
    errno = f->g.saved_errno;
    return 1;
}

/* See io.h. */
void io_enter(io_frame *f)
{
    weft_evt_Enter(NULL, f->t, f->region);
}

/* See io.h. */
int io_begin_at(io_frame *f, unsigned call, const void *caller)
{
    if (!io_start(f, call, caller))
        return 0;
    io_enter(f);
    errno = f->g.saved_errno;
    return 1;
}

/* See io.h. */
void io_mid(io_frame *f)
{
    f->g.saved_errno = errno;
    f->t = weft_time();
}

/* See io.h. */
void io_end(io_frame *f)
{
    weft_evt_Leave(NULL, f->t, f->region);
    free(f->path);
    weft__recorder_end(&f->g);
    errno = f->g.saved_errno;
}

/* ---- the wrappers ---------------------------------------------------- */

/* glibc makes these macros when optimizing: the wrappers are functions. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef getc

#define IO_REAL(name, ret, params) ((ret(*) params)io_real(IO_##name))
/* `claim`: a statement that comes first (IOC's). */
#define IO_WRAP(name, ret, hook, params, args, claim)                        \
    IO_EXPORT ret name params                                                \
    {                                                                        \
        io_frame f_;                                                         \
        ret rc_;                                                             \
                                                                             \
        claim;                                                               \
        if (!io_begin(&f_, IO_##name))                                       \
            return IO_REAL(name, ret, params) args;                          \
        io_pre_##hook(&f_, IO_UNPAREN args);                                 \
        errno = f_.g.saved_errno;                                            \
        rc_ = IO_REAL(name, ret, params) args;                               \
        io_mid(&f_);                                                         \
        io_post_##hook(&f_, rc_, IO_UNPAREN args);                           \
        io_end(&f_);                                                         \
        return rc_;                                                          \
    }
#define IO(name, ret, role, hook, params, args)                              \
    IO_WRAP(name, ret, hook, params, args, (void)0)
/* A descriptor of libweft's that the program names is moved first; if
 * it cannot be, the call fails (EBUSY) without being made. */
#define IOC(name, ret, role, hook, params, args, claimed)                    \
    IO_WRAP(name, ret, hook, params, args,                                   \
            if (weft__recorder_fd_claim(claimed) < 0) return -1)
/* A call a stream's buffer may serve (buffered.c): Enter once it is
 * known to be recorded, at its start. */
#define IOB(name, ret, role, hook, params, args, mode)                       \
    IO_EXPORT ret name params                                                \
    {                                                                        \
        io_frame f_;                                                         \
        io_bufview v_;                                                       \
        ret rc_;                                                             \
        int late_;                                                           \
                                                                             \
        if (!io_start(&f_, IO_##name, IO_CALLER))                            \
            return IO_REAL(name, ret, params) args;                          \
        if (!(late_ = io_count_view(&f_, fp, &v_)))                          \
            io_pre_##hook(&f_, IO_UNPAREN args);                             \
        errno = f_.g.saved_errno;                                            \
        rc_ = IO_REAL(name, ret, params) args;                               \
        io_mid(&f_);                                                         \
        if (late_) {                                                         \
            uint64_t t_;                                                     \
            if (io_count_served(&f_, fp, &v_, IO_IS_WRITE_##mode,            \
                                io_bytes_##hook(rc_, IO_UNPAREN args)))      \
                return rc_;                                                  \
            t_ = io_count_missed(&f_);                                       \
            io_pre_##hook(&f_, IO_UNPAREN args);                             \
            f_.t = t_;                                                       \
        }                                                                    \
        io_post_##hook(&f_, rc_, IO_UNPAREN args);                           \
        io_end(&f_);                                                         \
        return rc_;                                                          \
    }
#include "calls.def"
