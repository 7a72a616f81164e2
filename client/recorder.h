/* recorder.h - the small internal interface between libweft and its
 * recorders: the libraries that turn what a program does into libweft
 * calls (recorders/instrument/ today; recorders/mpi/, recorders/pthread/
 * and recorders/io/ to come).
 *
 * DESIGN
 * A recorder sits on libweft's public API (weft.h: regions, weft_enter,
 * weft_evt_*, definitions) plus the three calls below, and nothing else
 * of client/. Recorders never record libweft's own work and never change
 * what a wrapped call returns or errno. Each lives in its own directory
 * with its own library and tests, and declares the functions it wraps once
 * in an X-macro table (STYLE habit 13) from which the wrappers, their
 * region definitions and their tests' expectations are generated.
 *
 * 1. Is this thread inside libweft? libweft takes mutexes, allocates,
 *    writes to sockets and creates a thread; the pthread, malloc and I/O
 *    recorders wrap exactly those. weft__inside is raised on every path
 *    of libweft that may call a wrapped function - the sender thread for
 *    its whole life, weft_open and weft_close, the record slow path
 *    (buffers, gaps), definitions, thread creation - so a wrapper that
 *    finds it raised calls the real function and records nothing. The
 *    fast record path (api.c) calls nothing that can be wrapped and does
 *    not touch it.
 *
 * 2. One guard for every wrapper: weft__recorder_begin/end keep the
 *    recursion guard and errno in one place, so a wrapper reads
 *
 *        weft__rguard g;
 *        if (weft__recorder_begin(&g)) { weft_enter(region); }
 *        rc = real_fn(args);                  // errno is the call's
 *        if (g.recording) { weft__recorder_end(&g); ... weft_leave(region); }
 *
 *    begin returns 0 (record nothing) inside libweft or inside another
 *    wrapper on the same thread (a wrapped fopen calling a wrapped open).
 *
 * 3. Record for a thread that has not recorded yet: the pthread
 *    recorder's start-routine trampoline must give a new thread its
 *    location before its first record, and doing that allocates and takes
 *    the session mutex - calls that other recorders wrap. weft__recorder_
 *    attach does it inside the guard and returns the location index.
 *
 * 4. Open the session as the recorder knows the process: libweft-mpi
 *    learns rank and size from MPI_COMM_WORLD, not the environment, and
 *    gives every rank rank 0's trace name and run (weft__recorder_launch
 *    on rank 0, broadcast, then weft__recorder_open everywhere).
 *    libweft-pthread and libweft-io, preloaded into any program, open it
 *    with weft__recorder_start on their first call: they leave it to
 *    libweft-mpi when it is loaded, and in a parallel launch (a
 *    launcher's rank variable set) only an MPI program or the task weft
 *    run started (WEFT_TASK_PID) takes the task's rank: a helper the
 *    task runs (system("cp ..."), a wrapper's commands) would take it a
 *    second time, and weftd refuses the second (or, first, the task
 *    itself). Without weft run, every process is taken at its word.
 *
 * 5. Definitions with weft's own fields (WX in weft_records.def: the
 *    identity of a communicator), which weft.h's weft_def_ functions
 *    leave 0: weft__recorder_def takes the whole record.
 *
 * 6. Ids of definitions that several recorders of one process make:
 *    groups and communicators (libweft-mpi's, and libweft-pthread's
 *    thread contingent) come from one counter per id space,
 *    weft__recorder_newid, so the recorders never define the same local
 *    id twice.
 *
 * 7. Whose call is it? A wrapped function called by the MPI stack or by
 *    a memory allocator is theirs, not the program's: UCX's memory hooks
 *    take a rwlock inside glibc's malloc (its arena locked), MPI's
 *    progress threads lock and read all the time, jemalloc and tcmalloc
 *    lock around every allocation. Recording there would allocate inside
 *    the allocator (a deadlock) and show the library's internals as the
 *    program's work. weft__recorder_foreign tells them apart by the
 *    wrapper's return address: _dl_find_object (lock-free, no loader
 *    lock) names the object, its file name decides, and the answer is
 *    cached per address. Inside an MPI call the guard already says so.
 *    (So the files MPI-IO writes for the program are not seen by
 *    libweft-io either: the MPI library's reads and writes cannot be
 *    told from its sockets', pipes' and /proc's, which would be noise.)
 *
 * Linking: libweft.so exports weft.h (version WEFT_0) and, for recorder
 * libraries that are not part of libweft.so (libweft-mpi,
 * libweft-pthread, libweft-io), the calls and the guard variable
 * weft__inside
 * marked WEFT__RECORDER_API under their own symbol version
 * WEFT_RECORDER_0 (client/libweft.map), never from weft.h, so
 * applications do not come to depend on them. The rest stays hidden.
 */
#ifndef WEFT_RECORDER_H
#define WEFT_RECORDER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include <stddef.h>

#include "client_internal.h"
#include "record.h"

#define WEFT__RECORDER_API __attribute__((visibility("default")))

/* > 0 while the calling thread runs libweft's own code (see 1). Owner
 * thread only: raised and lowered in pairs by libweft and the guard. */
extern __thread int weft__inside
    __attribute__((tls_model("initial-exec"))) WEFT__RECORDER_API;

/* A wrapper's guard (see 2): on the wrapper's stack. */
typedef struct weft__rguard {
    int recording;           /* 1: begin said record; end must be called */
    int saved_errno;         /* errno at begin, for the wrapper's own use */
} weft__rguard;

/* 1 when the calling thread is inside libweft (or a wrapper): record
 * nothing. Async-signal-safe. */
static inline int weft__recorder_inside(void)
{
    return weft__inside > 0;
}

/* Starts a wrapper: returns 1 (g->recording) when the wrapper may
 * record, and then raises the guard until weft__recorder_end; 0 inside
 * libweft or another wrapper. errno is unchanged. */
WEFT__RECORDER_API int weft__recorder_begin(weft__rguard *g);
/* Lowers the guard raised by a successful weft__recorder_begin. errno is
 * unchanged. */
WEFT__RECORDER_API void weft__recorder_end(weft__rguard *g);
/* Gives the calling thread its state and location now (see 3), inside the
 * guard. Returns the location index, or UINT32_MAX when out of memory.
 * errno is unchanged. */
WEFT__RECORDER_API uint32_t weft__recorder_attach(void);
/* A new process-local id of id space `kind` (WEFT_REF_GROUP,
 * WEFT_REF_COMM, WEFT_REF_METRIC_MEMBER or WEFT_REF_METRIC) for a definition the caller sends
 * with weft__recorder_def or weft_def_<Name> (see 6), or UINT32_MAX for
 * another kind. Thread-safe. */
WEFT__RECORDER_API uint32_t weft__recorder_newid(unsigned kind);

/* weft_open with `env`, a NULL-terminated list of "NAME=value" strings,
 * taking the place of the environment's variables of those names ("NAME="
 * unsets one), e.g. { "WEFT_RANK=3", "WEFT_SIZE=4", NULL }. Returns what
 * weft_open returns. */
WEFT__RECORDER_API int weft__recorder_open(const char *const *env);
/* Opens the session for a recorder preloaded into any program (see 4), on
 * its first call, inside the guard: 1 when open and connected (record);
 * 0 when libweft-mpi is loaded and opens it in MPI_Init (record once
 * weft_connected()); -1 when this process is not traced (tracing off,
 * weftd unreachable, or a helper process of a parallel task). errno is
 * unchanged. */
WEFT__RECORDER_API int weft__recorder_start(void);
/* 1 when WEFT_REQUIRED=1: a preloaded recorder then opens the session
 * when it is loaded (weft__recorder_start, inside the guard), not on its
 * first call, so that the program fails at start. */
WEFT__RECORDER_API int weft__recorder_required(void);
/* 1 when a preloaded recorder opens the session when it is loaded: with
 * WEFT_REQUIRED=1, and in a process of weft run's tree (WEFT_TREE, no
 * launcher's rank), where every process is a member of the trace
 * whether or not it makes a call a recorder records. */
WEFT__RECORDER_API int weft__recorder_at_load(void);
/* With WEFT_REQUIRED=1, once the session could not be opened: says so on
 * stderr and ends the process with status 1 (with _exit: this may run
 * inside any wrapped call, the program's own locks held; an MPI launcher
 * ends the job). Returns otherwise. weft__recorder_start calls it. */
WEFT__RECORDER_API void weft__recorder_require(void);
/* The run and the trace name this process would have if it were the
 * whole trace (size 1): the launcher's run id if there is one, else this
 * process itself; WEFT_TRACE, else the default name (runid.h). Rank 0 of
 * an MPI job computes them for everybody. Returns 0, WEFT_ECONFIG after a
 * message on stderr, or WEFT_ENOMEM. */
WEFT__RECORDER_API int weft__recorder_launch(char *run, size_t runlen,
                                             char *trace, size_t tracelen);
/* The region named `name` with that role and paradigm, from the same id
 * space and name table as weft_region (a name keeps its first
 * definition). Returns its id, or OTF2_UNDEFINED_REGION when the session
 * is not open or out of memory. */
WEFT__RECORDER_API OTF2_RegionRef weft__recorder_region(const char *name,
                                                        OTF2_RegionRole role,
                                                        OTF2_Paradigm paradigm);
/* What a region says besides its name, for weft__recorder_region_src;
 * the caller's, read during the call only. */
typedef struct weft__region_src {
    const char *canonical; /* canonicalName (a mangled symbol); NULL: the
                              name */
    const char *file;      /* sourceFile; NULL: "" (unknown) */
    uint32_t begin_line;   /* beginLineNumber, endLineNumber; 0: unknown */
    uint32_t end_line;
} weft__region_src;
/* weft__recorder_region with the canonical name and source location of
 * src (NULL: none). Interned by name like it: the first definition of a
 * name holds, whatever src says later. */
WEFT__RECORDER_API OTF2_RegionRef weft__recorder_region_src(
    const char *name, OTF2_RegionRole role, OTF2_Paradigm paradigm,
    const weft__region_src *src);
/* weft__recorder_region once per wrapped function: *slot (zeroed, one
 * per function, in the recorder's static data) keeps the id + 1. Two
 * threads may define the region at once: regions are interned by name,
 * so both get the same id. */
static inline OTF2_RegionRef weft__recorder_region_once(
    _Atomic uint32_t *slot, const char *name, OTF2_RegionRole role,
    OTF2_Paradigm paradigm)
{
    uint32_t r = atomic_load_explicit(slot, memory_order_relaxed);
    OTF2_RegionRef id;

    if (__builtin_expect(r != 0, 1))
        return r - 1;
    id = weft__recorder_region(name, role, paradigm);
    if (id != OTF2_UNDEFINED_REGION)
        atomic_store_explicit(slot, id + 1, memory_order_relaxed);
    return id;
}
/* Appends definition record r (any client definition of the record table,
 * weft's own fields included) as weft_def_<Name> would. Returns 0,
 * WEFT_EINVAL for an event or a definition clients may not send,
 * WEFT_ECLOSED, WEFT_ETOOBIG or WEFT_ENOMEM. r stays the caller's. */
WEFT__RECORDER_API int weft__recorder_def(const weft_record *r);
/* Says how this process is ending when it does not end normally, e.g.
 * "MPI_Abort (error code 3)": the Goodbye carries it and weftd marks the
 * trace partial. The first one said wins (libweft says "signal N (SIGX)"
 * itself when a fatal signal ends the process). Call it before weft_close;
 * any thread. */
WEFT__RECORDER_API void weft__recorder_ended(const char *why);
/* For each fatal signal (README, "Fatal signals") in `set` whose handler
 * now is a library's crash reporter (MPI's, installed by MPI_Init), puts
 * libweft's handler in front of it: a crash ships what was recorded and
 * says Goodbye, then that handler runs as if it had got the signal. Only
 * for handlers that end the process: never for an application's own.
 * Nothing when tracing is off or WEFT_SIGNALS=0. */
WEFT__RECORDER_API void weft__recorder_chain_signals(const sigset_t *set);
/* Before an exec replaces the process image (replaced 1), or _exit ends
 * it (0): closes the session (flushed, acknowledged, goodbye said, the
 * Goodbye saying an exec) so its trace is complete instead of waiting for
 * a peer that never comes back; the new program opens its own session if
 * its environment preloads a recorder (of a process tree: the same
 * trace's next member). Nothing in the child of a
 * vfork (it runs in the parent's memory, session included), inside
 * libweft, or when no session is open. errno unchanged. If the exec
 * fails, the process goes on untraced. */
WEFT__RECORDER_API void weft__recorder_exec(int replaced);
/* Has weft__recorder_exec call fn first (at most WEFT__BEFORE_EXEC_MAX
 * of them, each once, in the order given): what a recorder does at exit
 * through its atexit handler, e.g. the pthread recorder shipping the
 * calling thread's lock counts, an exec or _exit must do too. Returns 0
 * or WEFT_ELIMIT. */
#define WEFT__BEFORE_EXEC_MAX 4
WEFT__RECORDER_API int weft__recorder_before_exec(void (*fn)(void));
/* Has libweft call fn on each thread that recorded, as the thread exits
 * (its pthread key destructor), before it ships the thread's last
 * records: what a recorder keeps per thread and sends at its end, e.g.
 * the I/O recorder's counts on a thread the pthread recorder does not
 * see end. fn may record; at most WEFT__THREAD_EXIT_MAX of them. 0 or
 * WEFT_ELIMIT. */
#define WEFT__THREAD_EXIT_MAX 4
WEFT__RECORDER_API int weft__recorder_at_thread_exit(void (*fn)(void));
/* Has libweft call fn as the session is about to close (weft_close: at
 * exit, at MPI_Finalize, before an exec), while records are still made:
 * what a recorder must have its runtime tell before then, e.g. libomp's
 * threads their last region's end. At most WEFT__BEFORE_CLOSE_MAX of
 * them, once per session, in the order given. 0 or WEFT_ELIMIT. */
#define WEFT__BEFORE_CLOSE_MAX 4
WEFT__RECORDER_API int weft__recorder_before_close(void (*fn)(void));
/* Called by a recorder's wrapper of a call that names descriptor fd for
 * the program (close, dup2's and dup3's new one, fcntl's) before the
 * call: when fd is one of libweft's, libweft moves it to another number
 * (fdclaim.c), so that the call does what it does untraced. 0, or -1
 * with errno EBUSY when libweft could not give it up (the wrapper then
 * fails the call so). Calls libweft makes itself claim nothing. */
WEFT__RECORDER_API int weft__recorder_fd_claim(int fd);
/* libweft's open descriptors now, ascending, into fds (room for
 * WEFT__OWN_FDS_MAX); their number. For a wrapper of close_range and
 * closefrom, which close around them. */
#define WEFT__OWN_FDS_MAX 2
WEFT__RECORDER_API int weft__recorder_own_fds(int *fds);
/* Makes the calling thread one libweft knows (a location), as its first
 * record would: for a thread that so far only counted, so that
 * weft__recorder_at_thread_exit's functions run on it. 1, or 0 when out
 * of memory. */
WEFT__RECORDER_API int weft__recorder_thread_attach(void);
/* Runs the weft__recorder_at_thread_exit functions on the calling thread
 * now, inside libweft (weft__inside raised): for a recorder that records
 * the thread's end itself (the pthread recorder's ThreadEnd, which must
 * be the thread's last event). libweft runs them again as the thread
 * exits; what they hold goes once. */
WEFT__RECORDER_API void weft__recorder_thread_ending(void);
/* 1 when `pc`, a wrapper's return address, is code of a library whose
 * calls recorders leave alone (see 7): the MPI stack (MPI, its runtime,
 * its transports and their memory hooks), memory allocators and weft's
 * own libraries; 0 for the program and any other library. Lock-free and
 * async-signal-safe: it may run inside malloc (a memory hook's lock). */
WEFT__RECORDER_API int weft__recorder_foreign(const void *pc);
/* The time of the calling thread's last record (0 before its first): a
 * recorder that records something late, at the time it happened (libomp
 * tells a team thread its region's end as it wakes it), takes no earlier
 * time than that, which libweft would refuse (WEFT_ETIME): another
 * recorder may have recorded on the thread meanwhile (the pthread
 * recorder libomp's sleep in pthread_cond_wait). */
WEFT__RECORDER_API uint64_t weft__recorder_last_time(void);

/* WEFT_FILTER (ifilter.h) over a recorder's calls, read once its session
 * is open: excluded[i] becomes 1 for each call i < n whose name(i) the
 * filter excludes (called, not recorded), else 0. A malformed WEFT_FILTER
 * is said on stderr by `who` (e.g. "weft-pthread") and excludes
 * nothing. */
WEFT__RECORDER_API void weft__recorder_filter(const char *who, unsigned n,
                                              const char *(*name)(unsigned),
                                              uint8_t *excluded);

/* Which calls the recorders count instead of recording (WEFT_LOCKS,
 * WEFT_LOCK_THRESHOLD_NS, WEFT_STDIO), read once the session is open. */
typedef struct weft__countpolicy {
    int all;                  /* 1: every lock call recorded */
    int stdio_all;            /* 1: every stdio call recorded, also those
                                 served from the stream's buffer */
    uint64_t threshold;       /* trace clock ticks: a call that got its
                                 lock at once and took longer is recorded */
    uint64_t resolution;      /* trace clock ticks per second */
} weft__countpolicy;
/* Fills *p from the open session's configuration (the defaults when no
 * session is open). */
WEFT__RECORDER_API void weft__recorder_countpolicy(weft__countpolicy *p);

#endif
