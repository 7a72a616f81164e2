/* session.c - MPI_Init, MPI_Init_thread and MPI_Finalize: libweft's
 * session of an MPI process opens and closes with MPI's (see wm.h).
 *
 * Rank and size come from MPI_COMM_WORLD. Every rank takes rank 0's run
 * and trace name (one broadcast at MPI_Init, before anything is
 * recorded), so all ranks of a launch are one trace even where the
 * launcher names no job (MPICH's hydra) or the ranks run different
 * programs. MPI_Abort ships what the process recorded before MPI kills
 * the job. A process that calls MPI_Abort, or exits between MPI_Init and
 * MPI_Finalize, tells weftd it ended abnormally (the trace is partial);
 * libweft says so itself for a fatal signal. The init, finalize and abort
 * calls run with libweft's guard raised (client/recorder.h), as every
 * recorded call does (wrap.c): what MPI and this library do there (their
 * mutexes, threads, files) is not recorded by the other recorders.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "weft.h"
#include "wm.h"

#define WM_ID_MAX 256
#define WM_MAX_ARGS 64

static atomic_int active;

/* See wm.h. */
int wm_active(void)
{
    return atomic_load_explicit(&active, memory_order_relaxed);
}

/* What rank 0 tells everybody: its run and trace name, or ok = 0 when
 * its configuration is unusable (then nobody traces). */
typedef struct launch {
    char ok;
    char run[WM_ID_MAX];
    char trace[WM_ID_MAX];
} launch;

/* Reads /proc/self/cmdline: the program and its arguments, as strings
 * of the trace; records ProgramBegin. */
static void program_begin(void)
{
    OTF2_StringRef args[WM_MAX_ARGS];
    char buf[8192];
    uint32_t n = 0;
    size_t len = 0;
    weft__rguard g;
    FILE *f;

    /* weft's own reading: libweft-io must not record it. */
    weft__recorder_begin(&g);
    f = fopen("/proc/self/cmdline", "r");
    if (f) {
        len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    weft__recorder_end(&g);
    buf[len] = 0;
    for (size_t i = 0; i < len && n <= WM_MAX_ARGS;
         i += strlen(buf + i) + 1) {
        if (n == 0)
            args[0] = weft_string(buf + i);
        else if (n <= WM_MAX_ARGS - 1)
            args[n] = weft_string(buf + i);
        n++;
    }
    if (n == 0) {
        args[0] = weft_string("");
        n = 1;
    }
    if (n > WM_MAX_ARGS)
        n = WM_MAX_ARGS;
    weft_evt_ProgramBegin(NULL, weft_time(), args[0], n - 1, args + 1);
}

/* At exit (registered after libweft's own handler, so run before it):
 * a process still between MPI_Init and MPI_Finalize did not end as an
 * MPI program must. */
static void at_exit(void)
{
    if (!wm_active())
        return;
    atomic_store(&active, 0);
    weft_evt_ProgramEnd(NULL, weft_time(), OTF2_UNDEFINED_INT64);
    weft__recorder_ended("exit before MPI_Finalize");
}

/* After PMPI_Init(_thread) succeeded: agree on the launch, open the
 * session, define the world and record the program's begin and the
 * Enter of the init call (its Leave is the caller's). */
static void open_session(unsigned call)
{
    launch l;
    int rank = 0, size = 1;
    char v_rank[32], v_size[32], v_run[WM_ID_MAX + 16],
        v_trace[WM_ID_MAX + 16];
    const char *env[5];

    memset(&l, 0, sizeof l);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        l.ok = weft__recorder_launch(l.run, sizeof l.run, l.trace,
                                     sizeof l.trace) == 0;
    PMPI_Bcast(&l, (int)sizeof l, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!l.ok) {
        weft__recorder_require(); /* rank 0 said why */
        return;
    }
    snprintf(v_rank, sizeof v_rank, "WEFT_RANK=%d", rank);
    snprintf(v_size, sizeof v_size, "WEFT_SIZE=%d", size);
    snprintf(v_run, sizeof v_run, "WEFT_RUN=%s", l.run);
    snprintf(v_trace, sizeof v_trace, "WEFT_TRACE=%s", l.trace);
    env[0] = v_rank;
    env[1] = v_size;
    env[2] = v_run;
    env[3] = v_trace;
    env[4] = NULL;
    /* Tracing off (weftd unreachable or refusing): record nothing at
     * all, which costs less than records libweft would count as
     * dropped. */
    if (weft__recorder_open(env) < 0 || !weft_connected()) {
        weft__recorder_require();
        return;
    }
    if (weft_rank() != (uint32_t)rank)
        fprintf(stderr, "weft: libweft was opened before MPI_Init as rank "
                "%" PRIu32 ", but this process is rank %d of "
                "MPI_COMM_WORLD: its MPI events may be misattributed\n",
                weft_rank(), rank);
    wm_comm_init(size);
    program_begin();
    weft_enter(wm_region(call));
    atomic_store(&active, 1);
    atexit(at_exit);
}

/* Crash signals whose handlers MPI_Init may install (Open MPI's stack
 * trace reporter: its opal_signal list) to report a crash and end the
 * process. */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                     SIGABRT };

/* Libraries of MPI stacks that install such reporters when they are
 * loaded, before MPI_Init: UCX (under both of Debian's MPIs), and MPI's
 * own. */
static const char *const crash_reporters[] = { "libucs.so", "libopen-pal.so",
                                               "libmpi.so", "libmpich.so" };

/* 1 if handler sa is one of crash_reporters'. */
static int is_mpi_reporter(const struct sigaction *sa)
{
    void *fn = sa->sa_flags & SA_SIGINFO ? (void *)sa->sa_sigaction
                                         : (void *)sa->sa_handler;
    const char *base;
    Dl_info info;

    if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN ||
        !dladdr(fn, &info) || !info.dli_fname)
        return 0;
    base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (size_t i = 0; i < sizeof crash_reporters / sizeof *crash_reporters;
         i++)
        if (strncmp(base, crash_reporters[i], strlen(crash_reporters[i])) ==
            0)
            return 1;
    return 0;
}

/* The handlers of crash_signals, before PMPI_Init(_thread) runs. */
typedef struct handlers {
    struct sigaction sa[sizeof crash_signals / sizeof *crash_signals];
} handlers;

static void handlers_get(handlers *h)
{
    for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals;
         i++)
        if (sigaction(crash_signals[i], NULL, &h->sa[i]) < 0)
            memset(&h->sa[i], 0, sizeof h->sa[i]);
}

/* Puts libweft's fatal signal handler in front of those MPI installed
 * during its init (before: as they were before) or its libraries when
 * they were loaded: a rank that crashes ships its trace, then MPI reports
 * the crash as usual. An application's own handlers stay alone. */
static void chain_mpi_handlers(const handlers *before)
{
    handlers now;
    sigset_t set;

    handlers_get(&now);
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals;
         i++)
        if (now.sa[i].sa_flags != before->sa[i].sa_flags ||
            (void *)now.sa[i].sa_handler !=
                (void *)before->sa[i].sa_handler ||
            is_mpi_reporter(&now.sa[i]))
            sigaddset(&set, crash_signals[i]);
    weft__recorder_chain_signals(&set);
}

/* The common path of both init calls: pmpi_rc is what PMPI returned,
 * before the handlers of crash signals before PMPI ran. */
static int after_init(unsigned call, int pmpi_rc, int saved_errno,
                      const handlers *before)
{
    if (pmpi_rc == MPI_SUCCESS) {
        open_session(call);
        if (wm_active()) {
            chain_mpi_handlers(before);
            weft_leave(wm_region(call));
        }
    }
    errno = saved_errno;
    return pmpi_rc;
}

__attribute__((visibility("default")))
int MPI_Init(int *argc, char ***argv)
{
    handlers before;
    int rc;

    weft__inside++;
    handlers_get(&before);
    rc = PMPI_Init(argc, argv);
    rc = after_init(WM_Init, rc, errno, &before);
    weft__inside--;
    return rc;
}

__attribute__((visibility("default")))
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    handlers before;
    int rc;

    weft__inside++;
    handlers_get(&before);
    rc = PMPI_Init_thread(argc, argv, required, provided);
    rc = after_init(WM_Init_thread, rc, errno, &before);
    weft__inside--;
    return rc;
}

/* Records the Finalize region and ProgramEnd, then closes the session
 * after MPI is gone (libweft needs no MPI to say goodbye). */
__attribute__((visibility("default")))
int MPI_Finalize(void)
{
    OTF2_RegionRef region;
    int rc, saved, was = wm_active();

    weft__inside++;
    if (was) {
        region = wm_region(WM_Finalize);
        wm_poll_close(weft_time());
        weft_enter(region);
        atomic_store(&active, 0);
    }
    rc = PMPI_Finalize();
    saved = errno;
    if (was) {
        weft_leave(region);
        weft_evt_ProgramEnd(NULL, weft_time(), OTF2_UNDEFINED_INT64);
        wm_win_fini();
        wm_comm_fini();
        weft_close();
    }
    weft__inside--;
    errno = saved;
    return rc;
}

/* Records the Abort region and ProgramEnd with the error code, then
 * closes the session (bounded by WEFT_CLOSE_TIMEOUT_MS) saying how it
 * ended, so the trace keeps what this process did: the launcher kills the
 * job next. */
__attribute__((visibility("default")))
int MPI_Abort(MPI_Comm comm, int errorcode)
{
    weft__inside++; /* for good: MPI ends the process */
    if (wm_active()) {
        OTF2_RegionRef region = wm_region(WM_Abort);
        char why[64];

        atomic_store(&active, 0);
        wm_poll_close(weft_time());
        weft_enter(region);
        weft_leave(region);
        weft_evt_ProgramEnd(NULL, weft_time(), errorcode);
        snprintf(why, sizeof why, "MPI_Abort (error code %d)", errorcode);
        weft__recorder_ended(why);
        weft_close();
    }
    return PMPI_Abort(comm, errorcode);
}
