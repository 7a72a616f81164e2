/* wrap.c - the MPI_<Name> wrappers of calls.def, their regions and the
 * one recursion guard (see wm.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "weft.h"
#include "wm.h"

/* Raised while this thread is inside a recorded MPI call: MPI calls made
 * from there (by MPI itself, by the hooks) are not recorded. wm_t: see
 * wm.h. */
__thread int wm_depth __attribute__((tls_model("initial-exec")));
__thread uint64_t wm_t __attribute__((tls_model("initial-exec")));

typedef struct wm_call {
    const char *name;
    OTF2_RegionRole role;
    OTF2_CollectiveOp op;
} wm_call;

#define OTF2_COLLECTIVE_OP_NONE 0
static const wm_call calls[WM__COUNT] = {
#define WM(Name, role_, op_, hook, params, args)                             \
    [WM_##Name] = { "MPI_" #Name, OTF2_REGION_ROLE_##role_,                  \
                    OTF2_COLLECTIVE_OP_##op_ },
#define WMC(Name, role_, op_, hook, params, args) WM(Name, role_, op_, hook, params, args)
#define WMK(Name, role_, op_, params, args, bytes) WM(Name, role_, op_, _, params, args)
#define WMKN(Name, role_, op_, params, args, bytes) WM(Name, role_, op_, _, params, args)
#include "calls.def"
    [WM_Init] = { "MPI_Init", OTF2_REGION_ROLE_ARTIFICIAL, 0 },
    [WM_Init_thread] = { "MPI_Init_thread", OTF2_REGION_ROLE_ARTIFICIAL, 0 },
    [WM_Finalize] = { "MPI_Finalize", OTF2_REGION_ROLE_ARTIFICIAL, 0 },
    [WM_Abort] = { "MPI_Abort", OTF2_REGION_ROLE_FUNCTION, 0 },
};

/* Each call's region (weft__recorder_region_once). */
static _Atomic uint32_t regions[WM__COUNT];

/* See wm.h. */
const char *wm_call_name(unsigned call)
{
    return calls[call].name;
}

/* See wm.h. */
OTF2_CollectiveOp wm_call_op(unsigned call)
{
    return calls[call].op;
}

/* See wm.h. */
OTF2_RegionRef wm_region(unsigned call)
{
    return weft__recorder_region_once(&regions[call], calls[call].name,
                                      calls[call].role, OTF2_PARADIGM_MPI);
}

/* ---- polling collapsed (see wm_poll in wm.h) ------------------------- */

/* This thread's run of fruitless polls: open while the last call it
 * recorded was a fruitless poll of `call` on the requests of `key`; n
 * polls counted since, taking `ticks`. The totals are what the metrics
 * carry (accumulated since the start). */
typedef struct wm_run {
    unsigned call;
    int open;
    uint64_t key, n, ticks;
    uint64_t total_n, total_ticks;
} wm_run;
static __thread wm_run run __attribute__((tls_model("initial-exec")));

enum { POLL_UNREAD, POLL_COLLAPSE, POLL_ALL };
static atomic_int poll_mode;
static pthread_once_t metrics_once = PTHREAD_ONCE_INIT;
static OTF2_MetricRef metric_n = OTF2_UNDEFINED_METRIC;
static OTF2_MetricRef metric_ticks = OTF2_UNDEFINED_METRIC;

/* WEFT_MPI_POLL: "all" records every poll, "collapse" (the default)
 * counts repeated fruitless ones. Read once. */
static int collapsing(void)
{
    int mode = atomic_load_explicit(&poll_mode, memory_order_relaxed);
    const char *v;

    if (mode != POLL_UNREAD)
        return mode == POLL_COLLAPSE;
    v = getenv("WEFT_MPI_POLL");
    mode = v && strcmp(v, "all") == 0 ? POLL_ALL : POLL_COLLAPSE;
    if (v && *v && mode == POLL_COLLAPSE && strcmp(v, "collapse") != 0)
        fprintf(stderr, "weft: libweft-mpi: WEFT_MPI_POLL=\"%.64s\": "
                "expected all or collapse; collapsing\n", v);
    atomic_store_explicit(&poll_mode, mode, memory_order_relaxed);
    return mode == POLL_COLLAPSE;
}

static int is_poll(unsigned call)
{
    return call == WM_Test || call == WM_Testany || call == WM_Testsome ||
           call == WM_Testall || call == WM_Iprobe;
}

static void define_metrics(void)
{
    metric_n = weft_metric("MPI polls collapsed", "calls", OTF2_TYPE_UINT64,
                           OTF2_METRIC_ACCUMULATED_START);
    metric_ticks = weft_metric("MPI poll time collapsed", "ticks",
                               OTF2_TYPE_UINT64,
                               OTF2_METRIC_ACCUMULATED_START);
}

static void metric(OTF2_MetricRef m, uint64_t t, uint64_t value)
{
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue v = { .unsigned_int = value };

    if (m != OTF2_UNDEFINED_METRIC)
        weft_evt_Metric(NULL, t, m, 1, &type, &v);
}

/* Ends this thread's run at time t, the start of the call recorded next
 * (not the last poll's end: the other recorders may have recorded on the
 * thread since). */
static void run_close(uint64_t t)
{
    if (run.n) {
        pthread_once(&metrics_once, define_metrics);
        run.total_n += run.n;
        run.total_ticks += run.ticks;
        metric(metric_n, t, run.total_n);
        metric(metric_ticks, t, run.total_ticks);
    }
    run.open = 0;
    run.n = run.ticks = 0;
}

/* Records f's Enter at its start: the thread's run ends first. */
static void record_enter(wm_frame *f)
{
    run_close(f->t0);
    f->deferred = 0;
    weft_evt_Enter(NULL, f->t0, f->region);
}

/* See wm.h. */
int wm_poll(wm_frame *f, int fruitless, uint64_t key)
{
    if (!f->deferred)
        return 1;  /* WEFT_MPI_POLL=all */
    if (!fruitless) {
        record_enter(f);
        return 1;
    }
    if (run.open && run.call == f->call && run.key == key) {
        run.n++;
        run.ticks += wm_t - f->t0;
        f->deferred = 0;
        f->counted = 1;
        return 0;
    }
    record_enter(f);
    run.open = 1;
    run.call = f->call;
    run.key = key;
    return 1;
}

/* See wm.h. */
void wm_poll_close(uint64_t t)
{
    run_close(t);
}

/* See wm.h. */
uint64_t wm_poll_key(int n, const MPI_Request *reqs)
{
    uint64_t h = 14695981039346656037u ^ (uint64_t)(unsigned)n;

    for (int i = 0; i < n; i++)
        h = (h ^ WM_KEY(reqs[i])) * 1099511628211u;
    return h;
}

/* See wm.h. */
int wm_begin(wm_frame *f, unsigned call)
{
    if (wm_depth || weft__inside || !wm_active())
        return 0;
    wm_depth++;
    weft__inside++; /* MPI's work and ours: other recorders keep out */
    f->saved_errno = errno;
    f->call = call;
    f->region = wm_region(call);
    f->counted = 0;
    f->t0 = wm_t = weft_time();
    f->deferred = (uint8_t)(is_poll(call) && collapsing());
    if (!f->deferred)
        record_enter(f);
    errno = f->saved_errno;
    return 1;
}

/* See wm.h. A poll still deferred (wm_poll not called) is recorded. */
void wm_end(wm_frame *f)
{
    if (f->deferred)
        record_enter(f);
    if (!f->counted)
        weft_evt_Leave(NULL, wm_t, f->region);
    weft__inside--;
    wm_depth--;
    errno = f->saved_errno;
}

/* See wm.h. */
uint64_t wm_bytes(int count, MPI_Datatype type)
{
    int size = 0;

    if (count <= 0 || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* ---- the wrappers ---------------------------------------------------- */

#define WM(Name, role, op, hook, params, args)                               \
    WM_WRAPPER(Name, params, args, wm_pre_##hook(&f_, WM_UNPAREN args),      \
               WM_PMPI(&f_, PMPI_##Name args),                               \
               wm_post_##hook(&f_, rc_, WM_UNPAREN args))
#define WMC(Name, role, op, hook, params, args)                              \
    WM_WRAPPER(Name, params, args, (void)0,                                  \
               wm_do_##hook(&f_, WM_UNPAREN args), (void)0)
#include "calls.def"
