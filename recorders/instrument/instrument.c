/* instrument.c - libweft-instrument: the hooks that GCC and Clang call
 * from code compiled with -finstrument-functions, turned into an Enter
 * and a Leave of one Region per function through libweft's public API.
 * The first recorder (client/recorder.h): its own directory and library,
 * with the address map (addrmap.c) only it uses; the filter
 * (client/ifilter.c) it shares with the pthread and I/O recorders.
 *
 * DESIGN
 * __cyg_profile_func_enter(fn, site) runs at the start of every
 * instrumented function and __cyg_profile_func_exit(fn, site) at its end.
 *
 * Names. The first call of a function resolves its address once, for the
 * whole process, under `G.mu`: libdw (dwfl) maps the address to its module
 * (the executable or a shared library, as /proc/self/maps lists them;
 * re-read when an address lies in none, e.g. after dlopen) and to the
 * symbol starting there, from the module's own .symtab, else .dynsym.
 * Without a symbol the name is "<module>+0x<offset>". A C++ symbol is
 * demangled (symbol.h): the region's name is the demangled name, its
 * canonicalName the symbol. WEFT_FILTER then decides on either
 * (ifilter.h); an included function gets its region, with the source file
 * and lines the module's DWARF gives (built with -g; else unknown), an
 * excluded one the mark SKIP. Two functions with one name (static
 * functions of different files) get distinct regions: the second is named
 * "name@module", failing that "name@module+0xoffset".
 *
 * Cost per call. The answer is kept in the lock-free map `G.map`
 * (addrmap.h) and in a small direct-mapped cache per thread, so after the
 * first call an enter is: thread-local guard, state check, cache probe,
 * push on the thread's shadow stack, weft_enter; an exit is: guard, state
 * check, compare with the top of the shadow stack, pop, weft_leave. No
 * lock, no allocation.
 *
 * Balance. A Leave is recorded only for a frame on the shadow stack,
 * i.e. whose Enter was recorded: excluded functions record neither.
 * When an exit does not match the top frame (longjmp skipped the exits of
 * the frames above), the frames above it are left first. Frames still
 * open when the thread ends (pthread_exit) or the process exits (exit()
 * in a nested call) are left then. Frames deeper than INSTR_MAX_DEPTH are
 * counted, not recorded, and their exits matched by that count.
 *
 * Recursion. `tls_busy` is set for the duration of a hook, so hooks
 * reached from inside one (an instrumented malloc called by libdw, a
 * signal handler interrupting a hook) record nothing, and libweft's
 * per-thread buffer is never entered twice.
 *
 * Lifetime. The first hook of the process (main's enter, or an
 * instrumented constructor's) opens the session: weft_open reads the
 * WEFT_* environment. A program whose instrumented code never runs opens
 * none. If that fails or weftd is unreachable, or WEFT_FILTER is
 * malformed, the hooks do nothing for the rest of the process. An atexit
 * handler, registered after weft_open so that it runs before libweft's
 * own weft_close, leaves the exiting thread's open frames and turns the
 * hooks off. A forked child records nothing (libweft's session belongs to
 * the parent).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "addrmap.h"
#include "ifilter.h"
#include "recorder.h"
#include "symbol.h"
#include "weft.h"
#include "weft_errors.h"

#define NOINSTR __attribute__((no_instrument_function))
#define EXPORT __attribute__((visibility("default"), no_instrument_function))
#define TLS_IE __attribute__((tls_model("initial-exec")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Frames of one thread's shadow stack: the first allocation, and the most
 * (deeper frames are counted, not recorded). */
#define INSTR_STACK_START 64
#define INSTR_MAX_DEPTH ((size_t)1 << 16)
/* Entries of the per-thread cache (a power of 2). */
#define INSTR_TCACHE_BITS 6
#define INSTR_TCACHE_SIZE ((size_t)1 << INSTR_TCACHE_BITS)
/* The region value of a function that records nothing. */
#define SKIP OTF2_UNDEFINED_REGION
/* Region ids up to this get the duplicate-name check of claim(). */
#define INSTR_MAX_OWNED ((size_t)1 << 24)

enum { ST_INIT, ST_ON, ST_OFF };

typedef struct instr_frame {
    uintptr_t fn;          /* the function's address */
    OTF2_RegionRef region; /* its region; Enter recorded */
} instr_frame;

/* One thread's state; owned and used by that thread only, except the
 * registry links (under G.mu). */
typedef struct instr_thread {
    uintptr_t tc_key[INSTR_TCACHE_SIZE]; /* cache: address, 0 = empty */
    uint32_t tc_val[INSTR_TCACHE_SIZE];  /* its region or SKIP */
    instr_frame *frames;                 /* shadow stack, `cap` frames */
    size_t depth;                        /* frames in use */
    size_t cap;
    uint64_t overflow;                   /* open frames beyond the cap */
    struct instr_thread *next, *prev;    /* registry; under G.mu */
} instr_thread;

/* Process-wide state. `state` is read by every hook; the rest is used
 * under `mu` except `map`, which is read without it (addrmap.h). */
static struct {
    atomic_int state;       /* ST_*; ST_ON only after everything below */
    pthread_once_t once;
    pthread_mutex_t mu;     /* resolution, registry, dwfl, owner */
    weft__addrmap map;      /* address -> region or SKIP */
    weft__ifilter filter;   /* WEFT_FILTER; read-only once ST_ON */
    pthread_key_t key;      /* runs thread_end with the thread's state */
    Dwfl *dwfl;             /* NULL until the first resolution */
    int dwfl_failed;        /* dwfl could not be set up: names by address */
    uintptr_t *owner;       /* region id -> the address that named it */
    size_t nowner;
    instr_thread *threads;  /* registry of live thread states */
} G = {
    .once = PTHREAD_ONCE_INIT,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .map = WEFT__ADDRMAP_INIT,
};

static __thread instr_thread *tls_thread TLS_IE;
/* 0: free; 1: inside a hook (or ours); 2: the thread's state is gone.
 * volatile: a signal handler's hook must see it set. */
static __thread volatile unsigned char tls_busy TLS_IE;

/* ---- names -------------------------------------------------------------- */

/* (Re)reads this process's modules from /proc/self/maps. G.mu held.
 * 0, or -1 after one warning (then functions are named by address). */
NOINSTR static int dwfl_report(void)
{
    int rc;

    if (G.dwfl_failed)
        return -1;
    if (!G.dwfl) {
        G.dwfl = dwfl_begin(&weft__dwfl_self);
        if (!G.dwfl)
            goto fail;
    }
    dwfl_report_begin(G.dwfl);
    rc = dwfl_linux_proc_report(G.dwfl, getpid());
    if (dwfl_report_end(G.dwfl, NULL, NULL) != 0 || rc != 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "weft-instrument: cannot list this process's modules "
            "with libdw (%s): functions are named by address\n",
            dwfl_errmsg(-1));
    if (G.dwfl)
        dwfl_end(G.dwfl);
    G.dwfl = NULL;
    G.dwfl_failed = 1;
    return -1;
}

typedef struct instr_sym {
    const char *name;   /* the region's name: demangled, symbol, or buf */
    const char *symbol; /* the symbol (valid while G.dwfl is), or buf */
    char *demangled;    /* malloc'd; NULL when the symbol is not mangled */
    Dwfl_Module *mod;   /* the module, or NULL */
    const char *module; /* basename of the module's file, or NULL */
    uintptr_t offset;   /* of the address in the module (or the address) */
    char buf[128];
} instr_sym;

/* Names the function at address a; the caller frees s->demangled.
 * G.mu held. */
NOINSTR static void symbolize(uintptr_t a, instr_sym *s)
{
    Dwfl_Module *m = NULL;

    s->name = s->symbol = s->module = NULL;
    s->demangled = NULL;
    s->mod = NULL;
    s->offset = a;
    if (G.dwfl || dwfl_report() == 0) {
        m = dwfl_addrmodule(G.dwfl, a);
        if (!m && dwfl_report() == 0)
            m = dwfl_addrmodule(G.dwfl, a);
    }
    if (m) {
        Dwarf_Addr start = 0;
        const char *path = dwfl_module_info(m, NULL, &start, NULL, NULL,
                                            NULL, NULL, NULL);
        GElf_Off off = 0;
        GElf_Sym sym;
        const char *name = dwfl_module_addrinfo(m, a, &off, &sym, NULL,
                                                NULL, NULL);

        if (path) {
            const char *slash = strrchr(path, '/');

            s->module = slash ? slash + 1 : path;
        }
        s->mod = m;
        s->offset = a - (uintptr_t)start;
        /* Only a symbol that starts here: an address inside some other
         * symbol (a static function of a stripped module) is unnamed. */
        if (name && *name && off == 0) {
            s->symbol = name;
            s->demangled = weft__demangle(name);
            s->name = s->demangled ? s->demangled : name;
            return;
        }
    }
    if (s->module)
        snprintf(s->buf, sizeof s->buf, "%.100s+0x%" PRIxPTR, s->module,
                 s->offset);
    else
        snprintf(s->buf, sizeof s->buf, "0x%" PRIxPTR, a);
    s->name = s->symbol = s->buf;
}

/* Records that region `id` names the function at a, unless another
 * function has it: 1 if it is a's (now), 0 if another function's. Out of
 * memory or past INSTR_MAX_OWNED, names are shared rather than failing.
 * G.mu held. */
NOINSTR static int claim(OTF2_RegionRef id, uintptr_t a)
{
    if (id >= G.nowner) {
        size_t n = G.nowner ? G.nowner : 64;
        uintptr_t *o;

        if (id >= INSTR_MAX_OWNED)
            return 1;
        while (n <= id)
            n *= 2;
        o = realloc(G.owner, n * sizeof *o);
        if (!o)
            return 1;
        memset(o + G.nowner, 0, (n - G.nowner) * sizeof *o);
        G.owner = o;
        G.nowner = n;
    }
    if (!G.owner[id])
        G.owner[id] = a;
    return G.owner[id] == a;
}

/* A user function region named `name` for the function at a. */
NOINSTR static OTF2_RegionRef region_of(const char *name,
                                        const weft__region_src *src)
{
    return weft__recorder_region_src(name, OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_USER, src);
}

/* The region of the function at a named s, or SKIP. G.mu held. */
NOINSTR static OTF2_RegionRef define_region(uintptr_t a, const instr_sym *s)
{
    const char *module = s->module ? s->module : "?";
    weft__region_src src = { .canonical = s->symbol };
    weft__srcloc loc = { 0 };
    OTF2_RegionRef id;
    size_t len;
    char *alt = NULL;

    /* Only now, for a function that is traced: reading a module's DWARF
     * costs time and memory. */
    if (s->mod && weft__srcloc_of(s->mod, a, &loc) == 0) {
        src.file = loc.file;
        src.begin_line = loc.begin_line;
        src.end_line = loc.end_line;
    }
    id = region_of(s->name, &src);
    if (id == OTF2_UNDEFINED_REGION || claim(id, a))
        goto out;
    len = strlen(s->name) + strlen(module) + 24;
    alt = malloc(len);
    if (!alt)
        goto out; /* share the name */
    snprintf(alt, len, "%s@%s", s->name, module);
    id = region_of(alt, &src);
    if (id == OTF2_UNDEFINED_REGION || claim(id, a))
        goto out;
    snprintf(alt, len, "%s@%s+0x%" PRIxPTR, s->name, module, s->offset);
    id = region_of(alt, &src);
    if (id != OTF2_UNDEFINED_REGION)
        claim(id, a);
out:
    free(alt);
    free(loc.file);
    return id == OTF2_UNDEFINED_REGION ? SKIP : id;
}

/* The region of the function at a (or SKIP), resolved and published in
 * G.map if no thread did it yet. The slow path of lookup(). */
NOINSTR static uint32_t resolve(uintptr_t a)
{
    instr_sym s;
    uint32_t v;

    pthread_mutex_lock(&G.mu);
    if (weft__addrmap_get(&G.map, a, &v))
        goto out;
    symbolize(a, &s);
    v = weft__ifilter_match2(&G.filter, s.name, s.symbol)
            ? define_region(a, &s)
            : SKIP;
    free(s.demangled);
    /* Without room in the map, threads resolve the address again; names
     * are interned, so they all get the same region. */
    (void)weft__addrmap_put(&G.map, a, v);
out:
    pthread_mutex_unlock(&G.mu);
    return v;
}

NOINSTR static inline uint32_t lookup(instr_thread *t, uintptr_t a)
{
    size_t i = (size_t)(((uint64_t)a * UINT64_C(0x9E3779B97F4A7C15)) >>
                        (64 - INSTR_TCACHE_BITS));
    uint32_t v;

    if (LIKELY(t->tc_key[i] == a))
        return t->tc_val[i];
    if (!weft__addrmap_get(&G.map, a, &v))
        v = resolve(a);
    t->tc_key[i] = a;
    t->tc_val[i] = v;
    return v;
}

/* ---- threads -------------------------------------------------------------- */

/* Leaves every open frame of t, innermost first. */
NOINSTR static void leave_all(instr_thread *t)
{
    while (t->depth > 0) {
        t->depth--;
        weft_leave(t->frames[t->depth].region);
    }
    t->overflow = 0;
}

/* pthread key destructor: the thread ends. Leaves its open frames and
 * frees its state; hooks run by later destructors of this thread record
 * nothing. */
NOINSTR static void thread_end(void *arg)
{
    instr_thread *t = arg;

    tls_busy = 1;
    if (atomic_load(&G.state) == ST_ON)
        leave_all(t);
    pthread_mutex_lock(&G.mu);
    if (t->prev)
        t->prev->next = t->next;
    else
        G.threads = t->next;
    if (t->next)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&G.mu);
    free(t->frames);
    free(t);
    tls_thread = NULL;
    tls_busy = 2;
}

NOINSTR static void at_exit_leave(void)
{
    tls_busy = 1;
    if (tls_thread && atomic_load(&G.state) == ST_ON)
        leave_all(tls_thread);
    atomic_store(&G.state, ST_OFF);
}

NOINSTR static void at_fork_child(void)
{
    atomic_store(&G.state, ST_OFF);
}

/* Runs once per process, from the first hook: reads WEFT_FILTER, opens
 * the session, turns the hooks on. */
NOINSTR static void instr_init(void)
{
    const char *spec = getenv("WEFT_FILTER");
    char err[256];
    int rc;

    rc = weft__ifilter_parse(spec, &G.filter, err, sizeof err);
    if (rc < 0) {
        if (rc == WEFT_EINVAL)
            fprintf(stderr, "weft-instrument: WEFT_FILTER=\"%.200s\": %s; "
                    "tracing is off for this process\n", spec, err);
        else
            fprintf(stderr, "weft-instrument: WEFT_FILTER: %s; tracing is "
                    "off for this process\n", weft_strerror(rc));
        goto off;
    }
    /* Before weft_open creates libweft's key: glibc runs key destructors
     * in the order the keys were created, and libweft drops what a thread
     * records after its own destructor ran, so thread_end must come
     * first to leave the thread's open frames. */
    if (pthread_key_create(&G.key, thread_end) != 0) {
        fprintf(stderr, "weft-instrument: pthread_key_create failed; "
                "tracing is off for this process\n");
        goto off;
    }
    rc = weft_open();
    if (rc == WEFT_ECONNECT) {
        /* WEFT_REQUIRED=1: the program has no code of its own to fail. */
        fprintf(stderr, "weft-instrument: weftd is required "
                "(WEFT_REQUIRED=1) and cannot be reached; exiting\n");
        exit(EXIT_FAILURE);
    }
    if (rc < 0) {
        fprintf(stderr, "weft-instrument: weft_open: %s; tracing is off for "
                "this process\n", weft_strerror(rc));
        goto off;
    }
    if (!weft_connected())
        goto off; /* libweft said why, and records would be discarded */
    atexit(at_exit_leave);
    pthread_atfork(NULL, NULL, at_fork_child);
    atomic_store(&G.state, ST_ON);
    return;
off:
    atomic_store(&G.state, ST_OFF);
}

/* The calling thread's state, set up on its first hook; NULL while the
 * hooks are off or without memory. tls_busy is set. */
NOINSTR static instr_thread *thread_get(void)
{
    instr_thread *t;

    if (atomic_load(&G.state) == ST_INIT)
        pthread_once(&G.once, instr_init);
    if (atomic_load(&G.state) != ST_ON)
        return NULL;
    if (tls_thread)
        return tls_thread;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_lock(&G.mu);
    t->next = G.threads;
    if (G.threads)
        G.threads->prev = t;
    G.threads = t;
    pthread_mutex_unlock(&G.mu);
    pthread_setspecific(G.key, t);
    tls_thread = t;
    return t;
}

/* Makes room for one more frame: 0, or -1 at INSTR_MAX_DEPTH or without
 * memory. */
NOINSTR static int grow_stack(instr_thread *t)
{
    size_t cap = t->cap ? t->cap * 2 : INSTR_STACK_START;
    instr_frame *f;

    if (cap > INSTR_MAX_DEPTH)
        return -1;
    f = realloc(t->frames, cap * sizeof *f);
    if (!f)
        return -1;
    t->frames = f;
    t->cap = cap;
    return 0;
}

/* The exit of fn when it is not the top frame. */
NOINSTR static void exit_slow(instr_thread *t, uintptr_t fn)
{
    size_t i;

    if (lookup(t, fn) == SKIP)
        return;
    if (t->overflow > 0) {
        t->overflow--;
        return;
    }
    for (i = t->depth; i > 0; i--)
        if (t->frames[i - 1].fn == fn)
            break;
    if (i == 0)
        return; /* entered before tracing began, or while busy */
    while (t->depth >= i) {
        t->depth--;
        weft_leave(t->frames[t->depth].region);
    }
}

/* ---- the hooks -------------------------------------------------------------- */

EXPORT void __cyg_profile_func_enter(void *this_fn, void *call_site);
EXPORT void __cyg_profile_func_exit(void *this_fn, void *call_site);

EXPORT void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    uintptr_t fn = (uintptr_t)this_fn;
    instr_thread *t;
    OTF2_RegionRef region;

    (void)call_site;
    if (tls_busy)
        return;
    tls_busy = 1;
    t = tls_thread;
    if (UNLIKELY(!t || atomic_load_explicit(&G.state, memory_order_relaxed) !=
                           ST_ON)) {
        t = thread_get();
        if (!t)
            goto out;
    }
    region = lookup(t, fn);
    if (region == SKIP)
        goto out;
    if (UNLIKELY(t->depth == t->cap) && grow_stack(t) < 0) {
        t->overflow++;
        goto out;
    }
    t->frames[t->depth].fn = fn;
    t->frames[t->depth].region = region;
    t->depth++;
    weft_enter(region);
out:
    tls_busy = 0;
}

EXPORT void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    uintptr_t fn = (uintptr_t)this_fn;
    instr_thread *t;

    (void)call_site;
    if (tls_busy)
        return;
    tls_busy = 1;
    t = tls_thread;
    if (UNLIKELY(!t || atomic_load_explicit(&G.state, memory_order_relaxed) !=
                           ST_ON))
        goto out;
    if (LIKELY(t->depth > 0 && t->overflow == 0 &&
               t->frames[t->depth - 1].fn == fn)) {
        t->depth--;
        weft_leave(t->frames[t->depth].region);
    } else {
        exit_slow(t, fn);
    }
out:
    tls_busy = 0;
}

/* ---- unload ------------------------------------------------------------------ */

/* After exit's handlers (weft_close among them): frees what no other
 * thread can be using. Thread states of threads still running and the
 * address map stay (a thread may be in a hook). */
__attribute__((destructor, no_instrument_function)) static void
instr_unload(void)
{
    tls_busy = 2;
    atomic_store(&G.state, ST_OFF);
    pthread_mutex_lock(&G.mu);
    if (G.dwfl)
        dwfl_end(G.dwfl);
    G.dwfl = NULL;
    G.dwfl_failed = 1;
    free(G.owner);
    G.owner = NULL;
    G.nowner = 0;
    weft__ifilter_free(&G.filter);
    pthread_mutex_unlock(&G.mu);
}
