/* pthtest.c - calls every function libweft-pthread wraps and writes what
 * it did, for tests/e2e_pthread.sh and tests/check_pthread.py: an
 * ordinary threaded program, no weft in it.
 *
 *   pthtest REPORT [fork | exec PROGRAM ARGS...]
 *
 * A constructor locks a mutex before main. Main starts NWORKERS threads
 * (one ends with pthread_exit), which lock and unlock mutexes (lock,
 * trylock, timedlock, clocklock), rwlocks (every variant), spin locks,
 * wait on a barrier, run a pthread_once, and wait on a condition variable
 * (wait until main broadcasts; timed and clock waits that time out; a
 * signal each). Main joins them with pthread_join, pthread_tryjoin_np and
 * pthread_timedjoin_np. A SIGUSR1 handler locks a mutex; main raises it
 * itself, and a worker sends it to main while main joins. One more
 * thread is cancelled while it waits in pthread_cond_wait. With `fork`, a forked child locks a mutex too
 * (not traced) and execs /bin/true. With `exec`, once its report is
 * written it execs PROGRAM (pthtest again, say).
 *
 * REPORT holds "call NAME COUNT" per function (calls made, failed ones
 * too; "N+" for pthread_once, which the C runtime calls too), "acquire N" and "release N" (lock acquisitions: successful lock
 * calls and condition waits returning 0 or ETIMEDOUT; releases: unlocks
 * and condition waits), "threads N" (created, begun, ended and joined).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NWORKERS 4
#define ROUNDS 20

enum {
    C_mutex_lock, C_mutex_trylock, C_mutex_timedlock, C_mutex_clocklock,
    C_mutex_unlock, C_rwlock_rdlock, C_rwlock_wrlock, C_rwlock_tryrdlock,
    C_rwlock_trywrlock, C_rwlock_timedrdlock, C_rwlock_timedwrlock,
    C_rwlock_unlock, C_spin_lock, C_spin_trylock, C_spin_unlock,
    C_cond_wait, C_cond_timedwait, C_cond_clockwait, C_cond_signal,
    C_cond_broadcast, C_barrier_wait, C_once, C_create, C_join,
    C_tryjoin_np, C_timedjoin_np, C__COUNT
};
static const char *const names[C__COUNT] = {
    "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock",
    "pthread_mutex_clocklock", "pthread_mutex_unlock",
    "pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
    "pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock",
    "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
    "pthread_rwlock_unlock", "pthread_spin_lock", "pthread_spin_trylock",
    "pthread_spin_unlock", "pthread_cond_wait", "pthread_cond_timedwait",
    "pthread_cond_clockwait", "pthread_cond_signal",
    "pthread_cond_broadcast", "pthread_barrier_wait", "pthread_once",
    "pthread_create", "pthread_join", "pthread_tryjoin_np",
    "pthread_timedjoin_np",
};

static atomic_long calls[C__COUNT];
static atomic_long acquired, released;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_barrier_t barrier;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t smu = PTHREAD_MUTEX_INITIALIZER;
/* Only the forked child locks it: a lock another thread may hold at the
 * fork (mu) would stay locked forever in the child. */
static pthread_mutex_t fmu = PTHREAD_MUTEX_INITIALIZER;
static long counter, onced;
static int go, sleeping;
static pthread_t main_thread;

/* A lock call made: counted, and its acquisition when it returned 0. */
static int locked(int call, int rc)
{
    atomic_fetch_add(&calls[call], 1);
    if (rc == 0)
        atomic_fetch_add(&acquired, 1);
    return rc;
}

static void unlocked(int call, int rc)
{
    atomic_fetch_add(&calls[call], 1);
    if (rc == 0)
        atomic_fetch_add(&released, 1);
}

/* A condition wait: the mutex released, and held again on 0 or
 * ETIMEDOUT. */
static int waited(int call, int rc)
{
    atomic_fetch_add(&calls[call], 1);
    atomic_fetch_add(&released, 1);
    if (rc == 0 || rc == ETIMEDOUT)
        atomic_fetch_add(&acquired, 1);
    return rc;
}

static struct timespec soon(clockid_t clock, long ms)
{
    struct timespec t;

    clock_gettime(clock, &t);
    t.tv_nsec += ms * 1000000;
    t.tv_sec += t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

static void init_once(void)
{
    /* The init routine runs inside pthread_once: its calls count. */
    locked(C_mutex_lock, pthread_mutex_lock(&mu));
    onced++;
    unlocked(C_mutex_unlock, pthread_mutex_unlock(&mu));
}

/* SIGUSR1: a handler that takes a lock of its own (trylock: never waits
 * for what the interrupted code may hold), while main runs its own code
 * or waits inside pthread_join. */
static void on_usr1(int sig)
{
    int saved = errno;

    (void)sig;
    if (locked(C_mutex_trylock, pthread_mutex_trylock(&smu)) == 0)
        unlocked(C_mutex_unlock, pthread_mutex_unlock(&smu));
    errno = saved;
}

__attribute__((constructor)) static void before_main(void)
{
    locked(C_mutex_lock, pthread_mutex_lock(&mu));
    counter++;
    unlocked(C_mutex_unlock, pthread_mutex_unlock(&mu));
}

static void locks(void)
{
    struct timespec t;

    for (int i = 0; i < ROUNDS; i++) {
        locked(C_mutex_lock, pthread_mutex_lock(&mu));
        counter++;
        unlocked(C_mutex_unlock, pthread_mutex_unlock(&mu));
    }
    if (locked(C_mutex_trylock, pthread_mutex_trylock(&mu)) == 0)
        unlocked(C_mutex_unlock, pthread_mutex_unlock(&mu));
    t = soon(CLOCK_REALTIME, 1000);
    if (locked(C_mutex_timedlock, pthread_mutex_timedlock(&mu, &t)) == 0)
        unlocked(C_mutex_unlock, pthread_mutex_unlock(&mu));
    t = soon(CLOCK_MONOTONIC, 1000);
    if (locked(C_mutex_clocklock,
               pthread_mutex_clocklock(&mu, CLOCK_MONOTONIC, &t)) == 0)
        unlocked(C_mutex_unlock, pthread_mutex_unlock(&mu));

    for (int i = 0; i < ROUNDS; i++) {
        locked(C_rwlock_rdlock, pthread_rwlock_rdlock(&rw));
        unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));
        locked(C_rwlock_wrlock, pthread_rwlock_wrlock(&rw));
        counter++;
        unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));
    }
    /* Two read locks of one rwlock held at once by this thread. */
    locked(C_rwlock_rdlock, pthread_rwlock_rdlock(&rw));
    if (locked(C_rwlock_tryrdlock, pthread_rwlock_tryrdlock(&rw)) == 0)
        unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));
    unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));
    if (locked(C_rwlock_trywrlock, pthread_rwlock_trywrlock(&rw)) == 0)
        unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));
    t = soon(CLOCK_REALTIME, 1000);
    if (locked(C_rwlock_timedrdlock, pthread_rwlock_timedrdlock(&rw, &t)) == 0)
        unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));
    t = soon(CLOCK_REALTIME, 1000);
    if (locked(C_rwlock_timedwrlock, pthread_rwlock_timedwrlock(&rw, &t)) == 0)
        unlocked(C_rwlock_unlock, pthread_rwlock_unlock(&rw));

    for (int i = 0; i < ROUNDS; i++) {
        locked(C_spin_lock, pthread_spin_lock(&spin));
        counter++;
        unlocked(C_spin_unlock, pthread_spin_unlock(&spin));
    }
    if (locked(C_spin_trylock, pthread_spin_trylock(&spin)) == 0)
        unlocked(C_spin_unlock, pthread_spin_unlock(&spin));
}

static void conditions(void)
{
    struct timespec t;

    locked(C_mutex_lock, pthread_mutex_lock(&cmu));
    while (!go)
        waited(C_cond_wait, pthread_cond_wait(&cv, &cmu));
    t = soon(CLOCK_REALTIME, 2);
    waited(C_cond_timedwait, pthread_cond_timedwait(&never, &cmu, &t));
    t = soon(CLOCK_MONOTONIC, 2);
    waited(C_cond_clockwait,
           pthread_cond_clockwait(&never, &cmu, CLOCK_MONOTONIC, &t));
    unlocked(C_mutex_unlock, pthread_mutex_unlock(&cmu));
    atomic_fetch_add(&calls[C_cond_signal], 1);
    pthread_cond_signal(&never);
}

/* Cleanup of the cancelled thread: the mutex its condition wait took
 * again. That acquisition is not recorded (the wait never returned to
 * the wrapper), so neither is this release: a call, no release. */
static void cancelled_cleanup(void *arg)
{
    (void)arg;
    atomic_fetch_add(&calls[C_mutex_unlock], 1);
    pthread_mutex_unlock(&cmu);
}

/* Waits on a condition nobody signals until main cancels it. */
static void *sleeper(void *arg)
{
    (void)arg;
    locked(C_mutex_lock, pthread_mutex_lock(&cmu));
    pthread_cleanup_push(cancelled_cleanup, NULL);
    sleeping = 1; /* under cmu, which only the wait gives back */
    atomic_fetch_add(&calls[C_cond_wait], 1);
    atomic_fetch_add(&released, 1);
    for (;;)
        pthread_cond_wait(&never, &cmu);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *worker(void *arg)
{
    long k = (long)arg;
    char name[16];

    /* Its location is named so in the trace (e2e_pthread.sh). */
    snprintf(name, sizeof name, "worker-%ld", k);
    pthread_setname_np(pthread_self(), name);
    locks();
    atomic_fetch_add(&calls[C_barrier_wait], 1);
    pthread_barrier_wait(&barrier);
    atomic_fetch_add(&calls[C_once], 1);
    pthread_once(&once, init_once);
    conditions();
    if (k == 0) /* main is in pthread_join, or about to be */
        pthread_kill(main_thread, SIGUSR1);
    if (k == 1)
        pthread_exit(NULL);
    return NULL;
}

static void fork_child(void)
{
    pid_t pid = fork();

    if (pid == 0) {
        pthread_mutex_lock(&fmu);
        pthread_mutex_unlock(&fmu);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    pthread_t th[NWORKERS];
    struct timespec t;
    FILE *f;
    int n = 0, rc;

    if (argc < 2) {
        fprintf(stderr, "usage: pthtest REPORT [fork | exec PROGRAM ARGS...]\n");
        return 2;
    }
    main_thread = pthread_self();
    pthread_setname_np(main_thread, "pthtest-main");
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_barrier_init(&barrier, NULL, NWORKERS);
    for (long k = 0; k < NWORKERS; k++) {
        atomic_fetch_add(&calls[C_create], 1);
        if (pthread_create(&th[k], NULL, worker, (void *)k) != 0) {
            fprintf(stderr, "pthtest: pthread_create failed\n");
            return 1;
        }
        n++;
    }
    if (argc > 2 && strcmp(argv[2], "fork") == 0)
        fork_child();
    /* One more thread, cancelled inside pthread_cond_wait. */
    {
        pthread_t s;
        void *ret = NULL;

        atomic_fetch_add(&calls[C_create], 1);
        if (pthread_create(&s, NULL, sleeper, NULL) != 0)
            return 1;
        n++;
        /* Once it waits, cmu is free: take it and let it go, so the
         * cancel finds it inside the wait. */
        for (;;) {
            locked(C_mutex_lock, pthread_mutex_lock(&cmu));
            int waiting = sleeping;
            unlocked(C_mutex_unlock, pthread_mutex_unlock(&cmu));
            if (waiting)
                break;
            usleep(1000);
        }
        /* Named by another thread (main), once it runs. */
        pthread_setname_np(s, "sleeper");
        pthread_cancel(s);
        atomic_fetch_add(&calls[C_join], 1);
        if (pthread_join(s, &ret) != 0 || ret != PTHREAD_CANCELED)
            return 1;
    }
    /* Every worker waits on cv until go: wake them all. */
    locked(C_mutex_lock, pthread_mutex_lock(&cmu));
    go = 1;
    atomic_fetch_add(&calls[C_cond_broadcast], 1);
    pthread_cond_broadcast(&cv);
    unlocked(C_mutex_unlock, pthread_mutex_unlock(&cmu));

    atomic_fetch_add(&calls[C_join], 1);
    pthread_join(th[0], NULL);
    atomic_fetch_add(&calls[C_join], 1);
    pthread_join(th[1], NULL);
    do {
        atomic_fetch_add(&calls[C_tryjoin_np], 1);
        rc = pthread_tryjoin_np(th[2], NULL);
        if (rc == EBUSY)
            usleep(1000);
    } while (rc == EBUSY);
    do {
        t = soon(CLOCK_REALTIME, 50);
        atomic_fetch_add(&calls[C_timedjoin_np], 1);
        rc = pthread_timedjoin_np(th[3], NULL, &t);
    } while (rc == ETIMEDOUT);

    f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    /* pthread_exit unwinds through libgcc_s, which calls pthread_once
     * itself: at least ours. */
    for (int c = 0; c < C__COUNT; c++)
        fprintf(f, "call %s %ld%s\n", names[c], atomic_load(&calls[c]),
                c == C_once ? "+" : "");
    fprintf(f, "acquire %ld\nrelease %ld\nthreads %d\n",
            atomic_load(&acquired), atomic_load(&released), n);
    fprintf(f, "counter %ld once %ld\n", counter, onced);
    if (fclose(f) != 0)
        return 1;
    /* exec ARGS...: become another program, traced or not as the
     * environment says. */
    if (argc > 3 && strcmp(argv[2], "exec") == 0) {
        execv(argv[3], argv + 3);
        perror(argv[3]);
        return 127;
    }
    return 0;
}
