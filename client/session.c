/* session.c - libweft's session from open to close: weft_open (the
 * configuration, the first connection, the sender), weft_close, the
 * atexit and fork hooks, and the fatal signal handler.
 *
 * DESIGN
 * weft_open reads the configuration, connects and says Hello on the
 * calling thread, measures the starting clock offset, and only then
 * starts the sender; a weftd that cannot be reached or refuses turns
 * tracing off for the process (DISCARD) after one warning, unless
 * WEFT_REQUIRED=1. weft_close takes over every thread's buffer, asks the
 * sender to finish and joins it.
 *
 * Fatal signals: the handler (on_fatal_signal) only publishes its thread
 * and wakes the sender; the sender closes the session as weft_close
 * would, taking over only that thread's buffer (sender.c), and the
 * handler polls sender_done before handing the signal on: to its default
 * action, or to the handler MPI installed (weft__recorder_chain_signals),
 * which reports the crash and ends the process.
 *
 * exit and quick_exit run at_exit (registered with both); _exit, _Exit
 * and exec close the session in their wrappers (recorders/exec.c).
 *
 * A child of fork() keeps a copy of the session marked FORKED: its
 * records are counted and dropped, and weftd sees only the parent.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "client_config.h"
#include "frame.h"
#include "recorder.h"
#include "client_session.h"
#include "weft.h"
#include "weft_errors.h"

#define warn weft__warn

weft__session weft__S = {
    .open_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .pool_cv = PTHREAD_COND_INITIALIZER,
    .fd = -1,
    .wake_fd = -1,
    .relocate = WEFT__RELOCATE_NONE,
};

/* The process's own environment, as client_config.h's lookup callback;
 * `arg`, when not NULL, is a NULL-terminated list of "NAME=value" strings
 * that take the place of the environment's variables of those names (a
 * recorder's view of the process: weft__recorder_open). */
static const char *getenv_fn(const char *name, void *arg)
{
    size_t n = strlen(name);

    for (const char *const *e = arg; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return (*e)[n + 1] ? *e + n + 1 : NULL;
    return getenv(name);
}

/* What the configuration needs to know about this process; host is the
 * caller's buffer for its name. */
static void describe_process(weft__proc *proc, char *host, size_t hostlen)
{
    struct timespec ts;
    struct stat st;

    snprintf(host, hostlen, "host");
    gethostname(host, hostlen - 1);
    host[hostlen - 1] = 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    proc->program = program_invocation_short_name;
    proc->host = host;
    proc->pid = (long)getpid();
    proc->start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    proc->system_socket = stat(WEFT__SYSTEM_SOCKET, &st) == 0 &&
                                  S_ISSOCK(st.st_mode)
                              ? WEFT__SYSTEM_SOCKET
                              : NULL;
}

/* Reads the configuration of this process (the environment as `overlay`
 * changes it, see getenv_fn) and sets up the trace clock. Returns 0 or
 * WEFT_ECONFIG after a message. */
static int config_load(weft__config *c, const char *const *overlay)
{
    char host[256];
    weft__proc proc;
    int rc;

    describe_process(&proc, host, sizeof host);
    rc = weft__config_parse(getenv_fn, (void *)overlay, &proc, c);
    if (rc < 0)
        return rc;
    weft__debug_on = c->debug;
    return weft__clock_setup(c);
}

/* See client_session.h. */
void weft__ended_locked(const char *why)
{
    size_t n = 0;

    if (weft__S.ended[0])
        return;
    for (; why[n] && n < WEFT_MAX_ENDED; n++)
        weft__S.ended[n] = (unsigned char)why[n] < 0x20 || why[n] == 0x7f
                               ? '?' : why[n];
    weft__S.ended[n] = 0;
}

/* ---- fatal signals ---- */

/* Signals that end the process by default and after which the trace is
 * still worth having: faults, abort, what batch schedulers and terminals
 * send, resource limits, and a pipe's reader gone (`prog | head`). */
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                     SIGABRT, SIGTERM, SIGINT, SIGQUIT,
                                     SIGHUP,  SIGPIPE, SIGXCPU, SIGXFSZ };

/* What libweft's handler hands each signal on to after its flush: a
 * zeroed entry is the default action; else the handler a library that
 * reports crashes (MPI's) had installed (weft__recorder_chain_signals).
 * Written under open_mu before libweft's handler is installed for it. */
static struct sigaction chained[NSIG];

/* After the flush: the chained handler runs as if it had got the signal
 * itself (it reports the crash and ends the process, as MPI's do); then,
 * or without one, the default action, taken when libweft's handler
 * returns: exit status and core dumps are as without libweft. */
static void hand_on(int sig, siginfo_t *info, void *ctx)
{
    const struct sigaction *c = &chained[sig];
    struct sigaction dfl;

    if (c->sa_flags & SA_SIGINFO)
        c->sa_sigaction(sig, info, ctx);
    else if (c->sa_handler != SIG_DFL && c->sa_handler != SIG_IGN)
        c->sa_handler(sig);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* Handler of the fatal signals. Async-signal-safe only: it hands the
 * calling thread's state to the sender, wakes it, polls until the sender
 * has shipped everything, had it acknowledged and said Goodbye (at most
 * WEFT_SIGNAL_FLUSH_MS), then hands the signal on (hand_on). */
static void on_fatal_signal(int sig, siginfo_t *info, void *ctx)
{
    int saved = errno;
    weft__thread *expect = NULL;

    /* A second signal (on another thread) while the first one's flush
     * runs finds the session closed already: it waits for the same
     * flush instead of ending the process before it is done. */
    if ((atomic_load(&weft__S.state) == WEFT__ST_ACTIVE ||
         atomic_load(&weft__S.signal_seen)) &&
        weft__S.wake_fd >= 0 &&
        atomic_load(&weft__S.sender_tid) != (int)gettid() &&
        !atomic_load(&weft__S.sender_done)) {
        struct timespec ms = { 0, 1000000 };
        if (!atomic_exchange(&weft__S.signal_seen, 1)) {
            atomic_compare_exchange_strong(&weft__S.signal_thread, &expect,
                                           weft__tls);
            atomic_store(&weft__S.signal_pending, sig);
            weft__wake_sender();
        }
        for (uint32_t i = 0; i < weft__S.cfg.signal_flush_ms &&
                             !atomic_load(&weft__S.sender_done); i++)
            nanosleep(&ms, NULL);
    }
    hand_on(sig, info, ctx);
    errno = saved;
}

/* Installs on_fatal_signal for signal sig, with SA_ONSTACK if `onstack`
 * (a chained handler ran on the alternate stack: a stack overflow must
 * still reach it). */
static void install_signal_handler(int sig, int onstack)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof fatal_signals / sizeof *fatal_signals; k++)
        sigaddset(&sa.sa_mask, fatal_signals[k]);
    /* No SA_RESETHAND: a second signal during the flush (a scheduler
     * signalling the process group and the process) may arrive on
     * another thread, and must wait there too, not kill at once. */
    sa.sa_flags = SA_RESTART | SA_SIGINFO | (onstack ? SA_ONSTACK : 0);
    sigaction(sig, &sa, NULL);
}

/* Installs on_fatal_signal for every fatal signal whose disposition is
 * still the default: an application's handler (or SIG_IGN) is never
 * replaced. */
static void install_signal_handlers(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) == 0 &&
            !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            install_signal_handler(fatal_signals[i], 0);
    }
}

/* See recorder.h. */
void weft__recorder_chain_signals(const sigset_t *set)
{
    weft__inside++;
    pthread_mutex_lock(&weft__S.open_mu);
    if (!weft__S.signals_installed)
        goto out; /* tracing off, or WEFT_SIGNALS=0 */
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        int sig = fatal_signals[i];
        struct sigaction old;
        if (!sigismember(set, sig) || sigaction(sig, NULL, &old) < 0 ||
            ((old.sa_flags & SA_SIGINFO) &&
             old.sa_sigaction == on_fatal_signal) ||
            (!(old.sa_flags & SA_SIGINFO) &&
             (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)))
            continue;
        chained[sig] = old;
        install_signal_handler(sig, old.sa_flags & SA_ONSTACK);
    }
out:
    pthread_mutex_unlock(&weft__S.open_mu);
    weft__inside--;
}

/* ---- open and close ---- */

static void at_exit(void)
{
    weft_close();
}

/* In the child of fork(): the session belongs to the parent. Records are
 * dropped and weft_close does nothing; the child's copy of the socket is
 * closed so weftd sees the parent hang up. */
static void at_fork_child(void)
{
    int st = atomic_load(&weft__S.state);

    pthread_mutex_init(&weft__S.open_mu, NULL);
    pthread_mutex_init(&weft__S.mu, NULL);
    weft__pool_cv_init();
    weft__S.sender_started = 0;
    atomic_store(&weft__S.connected, 0);
    atomic_store(&weft__S.opening, 0);
    atomic_store(&weft__S.hello_acked, 0);
    atomic_store(&weft__S.wake_users, 0);
    atomic_store(&weft__S.relocate, WEFT__RELOCATE_NONE);
    if (st == WEFT__ST_ACTIVE || st == WEFT__ST_DISCARD) {
        atomic_store(&weft__S.state, WEFT__ST_FORKED);
        weft__inside++; /* libweft's own: closed, not claimed (fdclaim.c) */
        if (weft__S.fd >= 0)
            close(weft__S.fd);
        if (weft__S.wake_fd >= 0)
            close(weft__S.wake_fd);
        weft__inside--;
        weft__S.fd = weft__S.wake_fd = -1;
        weft__raise_attention_locked();
    }
}

/* Starts the sender with all signals blocked, so the application's
 * handlers never run on it. Returns 0 or WEFT_ENOMEM. */
static int start_sender(void)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&weft__S.sender, NULL, weft__sender_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? 0 : WEFT_ENOMEM;
}

/* The first connection, on the opening thread: connect and Hello, and
 * with WEFT_REQUIRED=1 (cfg->required) a HelloAck that holds nothing of
 * this new member; otherwise the sender reads the HelloAck while the
 * program runs (OPENING), and the starting offset's first ClockSync goes
 * right behind the Hello (weft__offset_presend). Returns 0 with *fdp, or what weft_open returns
 * when it fails: 0 with tracing off (DISCARD) after a warning, or
 * WEFT_ECONNECT with WEFT_REQUIRED=1 (then *fdp is -1 either way). A
 * connection made that broke before the Hello went out (weftd restarted
 * as the program started) is not weftd's absence: 0 with *fdp -1 and
 * *later set, the sender connects again in the background. open_mu
 * held. */
static int connect_at_open(const weft__config *cfg, int *fdp, int *later)
{
    Weft__Envelope *ack = NULL;
    char why[512] = "";
    size_t resend = 0;
    int fd = -1, rc, code = 0, reached = 0;

    *fdp = -1;
    *later = 0;
    rc = weft__connect_send_hello(cfg, UINT64_MAX, &fd, &reached, &code,
                                  why, sizeof why);
    if (rc == WEFT_ECONNECT && reached && !cfg->required) {
        warn("lost the connection to weftd at %s as this process "
             "started: %s; reconnecting", cfg->server, why);
        *later = 1;
        return 0;
    }
    if (rc == 0 && cfg->required) {
        rc = weft__await_hello_ack(cfg, fd, UINT64_MAX, &ack, &code, why,
                                   sizeof why);
        if (rc == 0) {
            /* A new member: weftd must hold nothing of it yet. */
            pthread_mutex_lock(&weft__S.mu);
            rc = weft__resume_locked(ack->hello_ack, &resend, why,
                                     sizeof why);
            pthread_mutex_unlock(&weft__S.mu);
            weft_frame_free_envelope(ack);
        }
        if (rc < 0)
            close(fd);
    }
    if (rc == 0) {
        *fdp = fd;
        weft__S.sync_sent = 0;
        if (!cfg->required)
            weft__offset_presend(fd);
        return 0;
    }
    if (rc == WEFT_EPROTO) {
        warn("weftd refused this process: %s", why);
        rc = cfg->required ? WEFT_ECONNECT : 0;
    } else if (cfg->required) {
        warn("cannot reach weftd at %s: %s (WEFT_REQUIRED=1)", cfg->server,
             why);
        rc = WEFT_ECONNECT;
    } else {
        warn("cannot reach weftd at %s: %s; tracing is off for this "
             "process", cfg->server, why);
        rc = 0;
    }
    if (rc == 0)
        atomic_store(&weft__S.state, WEFT__ST_DISCARD);
    return rc;
}

/* Starts recording on connected fd (the session takes it): the wake-up
 * eventfd, ACTIVE, the sender. With WEFT_REQUIRED=1 the HelloAck came and
 * the starting clock offset is measured here; otherwise the sender reads
 * the HelloAck and measures it (OPENING) while the program runs, so that
 * a process does not wait for weftd's answers at its start; fd -1: the
 * sender connects first (its first connection broke, connect_at_open).
 * Any failure turns tracing off after a warning. open_mu held. */
static void go_active(int fd)
{
    int acked = weft__S.cfg.required;

    weft__S.wake_fd = weft__fd_aside(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (weft__S.wake_fd < 0) {
        warn("eventfd: %s; tracing is off for this process", strerror(errno));
        close(fd);
        atomic_store(&weft__S.state, WEFT__ST_DISCARD);
        return;
    }
    weft__S.clock_shared = 0; /* measured anew, also after a fork */
    if (acked)
        weft__measure_offset(fd, UINT64_MAX, "at the start");
    weft__S.fd = fd;
    weft__S.close_rc = 0;
    pthread_mutex_lock(&weft__S.mu);
    atomic_store(&weft__S.connected, acked);
    atomic_store(&weft__S.opening, fd >= 0 && !acked);
    weft__S.progress_ms = weft__now_ms();
    atomic_store(&weft__S.state, WEFT__ST_ACTIVE);
    weft__raise_attention_locked();
    pthread_mutex_unlock(&weft__S.mu);
    if (start_sender() < 0) {
        warn("cannot start the sender thread; tracing is off for this "
             "process");
        pthread_mutex_lock(&weft__S.mu);
        atomic_store(&weft__S.state, WEFT__ST_DISCARD);
        atomic_store(&weft__S.connected, 0);
        atomic_store(&weft__S.opening, 0);
        weft__raise_attention_locked();
        pthread_mutex_unlock(&weft__S.mu);
        if (weft__S.fd >= 0)
            close(weft__S.fd);
        weft__S.fd = -1;
        return;
    }
    weft__S.sender_started = 1;
}

/* weft_open with the environment as `overlay` changes it (getenv_fn). */
static int open_with(const char *const *overlay)
{
    weft__config cfg;
    int fd = -1, rc = 0, st, later = 0;

    weft__inside++;
    pthread_mutex_lock(&weft__S.open_mu);
    st = atomic_load(&weft__S.state);
    if (st == WEFT__ST_ACTIVE || st == WEFT__ST_DISCARD)
        goto out;
    if (st != WEFT__ST_NONE) {
        rc = WEFT_ECLOSED;
        goto out;
    }
    rc = config_load(&cfg, overlay);
    if (rc < 0)
        goto out;
    weft__thread_key_init();
    if (!weft__S.hooks_installed) {
        atexit(at_exit);
        at_quick_exit(at_exit);
        pthread_atfork(NULL, NULL, at_fork_child);
        weft__S.hooks_installed = 1;
    }
    weft__S.pid = getpid();
    weft__pool_cv_init(); /* nobody waits on it before ACTIVE */
    pthread_mutex_lock(&weft__S.mu);
    weft__S.cfg = cfg;
    pthread_mutex_unlock(&weft__S.mu);

    rc = connect_at_open(&cfg, &fd, &later);
    if (rc < 0 || (fd < 0 && !later))
        goto out;
    go_active(fd);
    if (weft__S.sender_started && cfg.signals &&
        !weft__S.signals_installed) {
        install_signal_handlers();
        weft__S.signals_installed = 1;
    }
out:
    pthread_mutex_unlock(&weft__S.open_mu);
    weft__inside--;
    return rc;
}

/* Reads the environment, connects and starts the sender. Returns 0 (also
 * when weftd is unreachable or refuses: tracing is then off, after one
 * warning), WEFT_ECONFIG, WEFT_ECONNECT with WEFT_REQUIRED=1, or
 * WEFT_ECLOSED after weft_close or in a forked child. Idempotent. */
WEFT_API int weft_open(void)
{
    return open_with(NULL);
}

/* See recorder.h. */
int weft__recorder_open(const char *const *env)
{
    return open_with(env);
}

/* See recorder.h. */
int weft__recorder_launch(char *run, size_t runlen, char *trace,
                          size_t tracelen)
{
    static const char *const alone[] = { "WEFT_RANK=0", "WEFT_SIZE=1", NULL };
    weft__config *cfg = malloc(sizeof *cfg);
    char host[256];
    weft__proc proc;
    int rc;

    if (!cfg)
        return WEFT_ENOMEM;
    weft__inside++;
    describe_process(&proc, host, sizeof host);
    rc = weft__config_parse(getenv_fn, (void *)alone, &proc, cfg);
    if (rc == 0) {
        snprintf(run, runlen, "%s", cfg->run);
        snprintf(trace, tracelen, "%s", cfg->trace);
    }
    free(cfg);
    weft__inside--;
    return rc;
}

/* Frees what the session holds except thread states. mu held. */
static void free_session_locked(void)
{
    weft__bufs_free_locked();
    weft__defs_free_locked();
}

/* Hands over every thread's partial buffer, lets the sender ship them
 * (reconnecting if need be), wait for their Acks, send Goodbye and wait
 * for weftd to hang up - all within WEFT_CLOSE_TIMEOUT_MS, and giving up
 * early once weftd has been unreachable for WEFT_STALL_MS; what weftd has
 * not acknowledged then counts as dropped (weft_dropped). Then frees the
 * session (thread states stay: late records must find theirs). Must run
 * after the recording threads have finished: buffers of threads still
 * alive are taken over without their consent. Returns 0, or WEFT_EIO when
 * weftd may not hold everything. Idempotent; also run at exit. */
WEFT_API int weft_close(void)
{
    static atomic_int told;
    uint64_t dropped = 0;
    int rc = 0, st, wake = 0;

    /* the recorders' last records (weft__recorder_before_close), once */
    st = atomic_load(&weft__S.state);
    if ((st == WEFT__ST_ACTIVE || st == WEFT__ST_DISCARD) &&
        getpid() == weft__S.pid && !atomic_exchange(&told, 1))
        weft__recorder_closing();
    weft__inside++;
    pthread_mutex_lock(&weft__S.open_mu);
    st = atomic_load(&weft__S.state);
    if (st != WEFT__ST_ACTIVE && st != WEFT__ST_DISCARD)
        goto out;
    pthread_mutex_lock(&weft__S.mu);
    /* Documented: the recording threads have finished. Buffers of threads
     * that have not exited (the caller's, and any still alive) are taken
     * over here while the session is still active, so they are sent. */
    for (weft__thread *t = weft__S.threads; t; t = t->next) {
        weft__buf_release_locked(t, &wake);
        weft__gap_end_locked(t);
        weft__buf_delete(t->scratch);
        t->scratch = NULL;
    }
    atomic_store(&weft__S.state, WEFT__ST_CLOSED);
    weft__raise_attention_locked();
    pthread_cond_broadcast(&weft__S.pool_cv);
    weft__S.closing = 1;
    weft__S.close_start_ms = weft__now_ms();
    weft__S.close_limit_ms = weft__S.cfg.close_timeout_ms;
    pthread_mutex_unlock(&weft__S.mu);
    if (weft__S.sender_started) {
        weft__wake_sender();
        pthread_join(weft__S.sender, NULL);
        weft__S.sender_started = 0;
        rc = weft__S.close_rc;
    }
    pthread_mutex_lock(&weft__S.mu);
    free_session_locked();
    for (weft__thread *t = weft__S.threads; t; t = t->next)
        dropped += t->dropped;
    pthread_mutex_unlock(&weft__S.mu);
    if (st == WEFT__ST_ACTIVE && dropped)
        warn("%" PRIu64 " records of rank %u were dropped (%s)", dropped,
             weft__S.cfg.rank, weft__S.cfg.overflow_discard
                             ? "WEFT_OVERFLOW=discard"
                             : "weftd was unreachable");
    weft__input_reset(&weft__S.in);
    if (weft__S.wake_fd >= 0)
        close(weft__S.wake_fd);
    weft__S.wake_fd = -1;
out:
    pthread_mutex_unlock(&weft__S.open_mu);
    weft__inside--;
    return rc;
}

/* 1 while the session streams to weftd or makes its first connection
 * (0 while it reconnects). */
WEFT_API int weft_connected(void)
{
    return atomic_load(&weft__S.state) == WEFT__ST_ACTIVE &&
           (atomic_load(&weft__S.connected) || atomic_load(&weft__S.opening));
}

/* Rank and size from the environment, valid after weft_open (0 and 1
 * before). */
WEFT_API uint32_t weft_rank(void)
{
    return weft__S.cfg.rank;
}

WEFT_API uint32_t weft_size(void)
{
    return weft__S.cfg.size ? weft__S.cfg.size : 1;
}

