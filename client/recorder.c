/* recorder.c - what recorders need from libweft beyond weft.h: the "inside
 * libweft" guard and attaching a thread that has not recorded yet. See
 * recorder.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"
#include "client_config.h"
#include "client_session.h"
#include "ifilter.h"

__thread int weft__inside __attribute__((tls_model("initial-exec")));

/* See recorder.h. */
int weft__recorder_begin(weft__rguard *g)
{
    g->saved_errno = errno;
    g->recording = weft__inside == 0;
    if (g->recording)
        weft__inside++;
    return g->recording;
}

/* See recorder.h. */
void weft__recorder_end(weft__rguard *g)
{
    if (g->recording) {
        g->recording = 0;
        weft__inside--;
    }
}

/* See recorder.h. */
int weft__recorder_def(const weft_record *r)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    if (!d || d->is_event || d->is_pseudo || d->flags == WEFT_DF_DAEMON)
        return WEFT_EINVAL;
    return weft__def_append(r);
}

/* Next id of the id spaces weft__recorder_newid serves. */
static _Atomic uint32_t next_group, next_comm;

/* The next id of weft_metric's counter `*next` (under the session's
 * lock), UINT32_MAX when none is left. */
static uint32_t metric_id(uint32_t *next, uint32_t undefined)
{
    uint32_t id = UINT32_MAX;

    weft__inside++;
    pthread_mutex_lock(&weft__S.mu);
    if (*next != undefined)
        id = (*next)++;
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
    return id;
}

/* See recorder.h. */
uint32_t weft__recorder_newid(unsigned kind)
{
    switch (kind) {
    case WEFT_REF_GROUP:
        return atomic_fetch_add(&next_group, 1);
    case WEFT_REF_COMM:
        return atomic_fetch_add(&next_comm, 1);
    case WEFT_REF_METRIC_MEMBER: /* shared with weft_metric */
        return metric_id(&weft__S.next_member, OTF2_UNDEFINED_METRIC_MEMBER);
    case WEFT_REF_METRIC:
        return metric_id(&weft__S.next_metric, OTF2_UNDEFINED_METRIC);
    default:
        return UINT32_MAX;
    }
}

/* See recorder.h. */
void weft__recorder_ended(const char *why)
{
    weft__inside++; /* libweft's own locking, unseen by the recorders */
    pthread_mutex_lock(&weft__S.mu);
    weft__ended_locked(why);
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
}

/* See recorder.h. */
uint32_t weft__recorder_attach(void)
{
    int saved = errno;
    weft__thread *t;

    weft__inside++; /* libweft's own locking, unseen by the recorders */
    t = weft__thread_self();
    weft__inside--;
    errno = saved;
    return t ? t->location : UINT32_MAX;
}

/* ---- opening for a preloaded recorder (see 4) --------------------------- */

/* 1 when the program's MPI_Init is libweft-mpi's; *mpi says whether the
 * process has an MPI library at all. */
static int mpi_recorder_loaded(int *mpi)
{
    void *init = dlsym(RTLD_DEFAULT, "MPI_Init");
    Dl_info info;

    *mpi = init != NULL;
    return init && dladdr(init, &info) && info.dli_fname &&
           strstr(info.dli_fname, "libweft-mpi") != NULL;
}

/* 1 in a process that a task of a parallel launch started: weft run
 * marked the task with its pid, and this is another. (Preloaded by hand,
 * without weft run, every process is taken at its word.) */
static int helper_of_task(void)
{
    return weft__launched() &&
           weft__not_the_task(getenv(WEFT__TASK_PID_VAR), (long)getpid());
}

/* See recorder.h. */
int weft__recorder_start(void)
{
    int saved = errno, mpi, rc;

    if (mpi_recorder_loaded(&mpi))
        rc = 0;
    else if (!mpi && helper_of_task())
        rc = -1;
    else if ((rc = weft_open() < 0 || !weft_connected() ? -1 : 1) < 0)
        weft__recorder_require();
    errno = saved;
    return rc;
}

/* See recorder.h. */
int weft__recorder_required(void)
{
    const char *v = getenv("WEFT_REQUIRED");

    return v && strcmp(v, "1") == 0;
}

/* See recorder.h. */
int weft__recorder_at_load(void)
{
    const char *tree = getenv(WEFT__TREE_VAR);

    return weft__recorder_required() || (tree && *tree && !weft__launched());
}

/* See recorder.h. */
void weft__recorder_require(void)
{
    if (!weft__recorder_required())
        return;
    weft__warn("this process cannot be traced and WEFT_REQUIRED=1: "
               "exiting with status 1");
    _exit(1);
}

/* What recorders have libweft call (weft__recorder_before_exec,
 * _at_thread_exit, _before_close), by when, written before they can run
 * (a recorder registers as its session opens). */
enum { HOOK_EXEC, HOOK_THREAD_EXIT, HOOK_CLOSE, NHOOKS };
#define HOOKS_MAX 4
_Static_assert(WEFT__BEFORE_EXEC_MAX == HOOKS_MAX &&
                   WEFT__THREAD_EXIT_MAX == HOOKS_MAX &&
                   WEFT__BEFORE_CLOSE_MAX == HOOKS_MAX,
               "one bound for every hook");
static void (*hooks[NHOOKS][HOOKS_MAX])(void);
static _Atomic unsigned nhooks[NHOOKS];

static int add_hook(int when, void (*fn)(void))
{
    unsigned n = atomic_fetch_add(&nhooks[when], 1);

    if (n >= HOOKS_MAX) {
        atomic_fetch_sub(&nhooks[when], 1);
        return WEFT_ELIMIT;
    }
    hooks[when][n] = fn;
    return 0;
}

static void run_hooks(int when)
{
    unsigned n = atomic_load(&nhooks[when]);

    for (unsigned i = 0; i < n && i < HOOKS_MAX; i++)
        if (hooks[when][i])
            hooks[when][i]();
}

/* See recorder.h. */
int weft__recorder_before_exec(void (*fn)(void))
{
    return add_hook(HOOK_EXEC, fn);
}

/* See recorder.h. */
int weft__recorder_at_thread_exit(void (*fn)(void))
{
    return add_hook(HOOK_THREAD_EXIT, fn);
}

/* See recorder.h. */
int weft__recorder_before_close(void (*fn)(void))
{
    return add_hook(HOOK_CLOSE, fn);
}

/* See client_internal.h. */
void weft__recorder_closing(void)
{
    run_hooks(HOOK_CLOSE);
}

/* See recorder.h. */
int weft__recorder_thread_attach(void)
{
    return weft__thread_self() != NULL;
}

/* See recorder.h. */
void weft__recorder_thread_ending(void)
{
    run_hooks(HOOK_THREAD_EXIT);
}

/* See recorder.h. */
void weft__recorder_exec(int replaced)
{
    int saved = errno, st = atomic_load(&weft__S.state);

    if (weft__inside == 0 && getpid() == weft__S.pid &&
        (st == WEFT__ST_ACTIVE || st == WEFT__ST_DISCARD)) {
        run_hooks(HOOK_EXEC);
        weft__S.execs = replaced; /* before the sender packs the Goodbye */
        weft_close();
    }
    errno = saved;
}

/* See recorder.h. */
void weft__recorder_filter(const char *who, unsigned n,
                           const char *(*name)(unsigned), uint8_t *excluded)
{
    const char *spec = getenv("WEFT_FILTER");
    weft__ifilter f = { 0, NULL };
    char err[256];
    int rc;

    memset(excluded, 0, n);
    if (!spec || !*spec)
        return;
    rc = weft__ifilter_parse(spec, &f, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: WEFT_FILTER=\"%.200s\": %s; its calls are not "
                "filtered\n", who, spec,
                rc == WEFT_EINVAL ? err : weft_strerror(rc));
        return;
    }
    for (unsigned i = 0; i < n; i++)
        excluded[i] = (uint8_t)!weft__ifilter_match(&f, name(i));
    weft__ifilter_free(&f);
}

/* See recorder.h. */
void weft__recorder_countpolicy(weft__countpolicy *p)
{
    const weft__config *c = &weft__S.cfg;
    uint64_t res = c->resolution ? c->resolution : 1000000000u;
    uint32_t ns = c->resolution ? c->lock_threshold_ns
                                : WEFT__DEFAULT_LOCK_THRESHOLD_NS;

    p->all = c->locks_all;
    p->stdio_all = c->stdio_all;
    p->resolution = res;
    p->threshold = (uint64_t)((long double)ns * (long double)res / 1e9L);
}

/* ---- whose call (see 7) -------------------------------------------------- */

/* File names (their beginning) of the libraries whose calls are theirs:
 * UCX, Open MPI and its components, MPICH, libfabric, PMIx/PMI, hwloc,
 * libevent (Open MPI's progress), verbs, PSM, allocators, weft's own. */
static const char *const foreign_libs[] = {
    "libucm", "libucs", "libuct", "libucp", "libmpi", "libopen-pal",
    "libopen-rte", "libmca_", "mca_", "libfabric", "libpmi", "libprrte",
    "libhwloc", "libevent", "libibverbs", "librdmacm", "libpsm",
    "libjemalloc", "libtcmalloc", "libmimalloc", "libweft",
};

/* Return addresses already asked about: the address shifted left once,
 * its low bit the answer; 0 is empty. Direct-mapped, lock-free (a lost
 * update only costs another look-up): a cache that forgets, on the
 * application's threads, not a table (so not proto/hashtab.h). */
#define FOREIGN_CACHE 1024u
static _Atomic uint64_t foreign_cache[FOREIGN_CACHE];

static int foreign_name(const char *path)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof foreign_libs / sizeof *foreign_libs; i++)
        if (strncmp(base, foreign_libs[i], strlen(foreign_libs[i])) == 0)
            return 1;
    return 0;
}

/* See recorder.h. */
uint64_t weft__recorder_last_time(void)
{
    const weft__thread *t = weft__tls;

    return t ? t->prev_time : 0;
}

/* See recorder.h. */
int weft__recorder_foreign(const void *pc)
{
    uint64_t a = (uint64_t)(uintptr_t)pc, v;
    unsigned slot = (unsigned)((a * 0x9e3779b97f4a7c15ull) >> 54) &
                    (FOREIGN_CACHE - 1);
    struct dl_find_object fo;
    int foreign = 0;

    v = atomic_load_explicit(&foreign_cache[slot], memory_order_relaxed);
    if (v >> 1 == a)
        return (int)(v & 1);
    if (_dl_find_object((void *)pc, &fo) == 0 && fo.dlfo_link_map &&
        fo.dlfo_link_map->l_name)
        foreign = foreign_name(fo.dlfo_link_map->l_name);
    atomic_store_explicit(&foreign_cache[slot], a << 1 | (uint64_t)foreign,
                          memory_order_relaxed);
    return foreign;
}
