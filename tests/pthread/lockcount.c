/* lockcount.c - contended and uncontended locks in known numbers, for
 * tests/e2e_locks.sh: an ordinary threaded program, no weft in it.
 *
 *   lockcount REPORT counted|recorded
 *
 * Main locks and unlocks, each lock free at once: a mutex NUNC times, a
 * free mutex with trylock NTRY times, a rwlock NRW times for reading and
 * NRW times for writing, a spin lock NSPIN times; it waits once on a
 * condition variable (timed out) holding a mutex it got at once. A
 * thread T then locks a mutex main holds, K times: main lets go only
 * once T sleeps in the kernel (its /proc state S), so every one of T's
 * lock calls finds the lock busy; last, T's trylock of it fails (main
 * holds it). Main also calls pthread_once NONCE times on one control:
 * the first runs the routine, the others find it done.
 *
 * REPORT is tests/check_pthread.py's ("call NAME N", "acquire N",
 * "release N", "threads N") for what the archive records one by one:
 * with `counted` (WEFT_LOCKS=contended, the default) the busy calls, the
 * condition wait and what pairs with them; with `recorded`
 * (WEFT_LOCKS=all, or WEFT_LOCK_THRESHOLD_NS=0) every call. "total NAME
 * N" lines give every call made, which `weft profile` counts either way.
 * With LOCKCOUNT_EXIT=_exit set it ends with _exit(0) instead of returning
 * from main (its counts must reach the trace all the same).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NUNC 1000
#define NTRY 50
#define NRW 100
#define NSPIN 100
#define K 3
#define NONCE 200

/* Each lock call: how many are recorded one by one when the others are
 * counted, and how many are made. */
static const struct {
    const char *name;
    int counted, total;
} calls[] = {
    { "pthread_mutex_lock", K, NUNC + 2 * K + 2 },
    { "pthread_mutex_unlock", K + 1, NUNC + NTRY + 2 * K + 2 },
    { "pthread_mutex_trylock", 1, NTRY + 1 },
    { "pthread_rwlock_rdlock", 0, NRW },
    { "pthread_rwlock_wrlock", 0, NRW },
    { "pthread_rwlock_unlock", 0, 2 * NRW },
    { "pthread_spin_lock", 0, NSPIN },
    { "pthread_spin_unlock", 0, NSPIN },
    { "pthread_cond_timedwait", 1, 1 },
    { "pthread_once", 1, NONCE },
};

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int go, done, tid;

static void fail(const char *what)
{
    fprintf(stderr, "lockcount: %s\n", what);
    exit(1);
}

/* Spins (no pthread call) until *v == want, at most 30 s. */
static void await(_Atomic int *v, int want)
{
    time_t end = time(NULL) + 30;

    while (atomic_load(v) != want)
        if (sched_yield(), time(NULL) > end)
            fail("timed out waiting for the other thread");
}

/* 1 when thread t sleeps (state S in /proc). */
static int sleeping(int t)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/self/task/%d/stat", t);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

static void *contender(void *arg)
{
    (void)arg;
    atomic_store(&tid, (int)gettid());
    for (int i = 1; i <= K; i++) {
        await(&go, i);
        if (pthread_mutex_lock(&busy) != 0)
            fail("lock");
        pthread_mutex_unlock(&busy);
        atomic_store(&done, i);
    }
    await(&go, K + 1);
    if (pthread_mutex_trylock(&busy) != EBUSY)
        fail("trylock of a held mutex did not fail");
    atomic_store(&done, K + 1);
    return NULL;
}

static int onced;
static void once_routine(void)
{
    onced++;
}

static void uncontended(void)
{
    static pthread_once_t o = PTHREAD_ONCE_INIT;
    static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, m =
        PTHREAD_MUTEX_INITIALIZER;
    static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    pthread_spinlock_t s;
    struct timespec t;

    for (int i = 0; i < NUNC; i++) {
        pthread_mutex_lock(&a);
        pthread_mutex_unlock(&a);
    }
    for (int i = 0; i < NTRY; i++) {
        if (pthread_mutex_trylock(&a) != 0)
            fail("trylock of a free mutex failed");
        pthread_mutex_unlock(&a);
    }
    for (int i = 0; i < NRW; i++) {
        pthread_rwlock_rdlock(&rw);
        pthread_rwlock_unlock(&rw);
        pthread_rwlock_wrlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
    for (int i = 0; i < NONCE; i++)
        if (pthread_once(&o, once_routine) != 0)
            fail("pthread_once failed");
    if (onced != 1)
        fail("pthread_once ran its routine more than once");
    pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
    for (int i = 0; i < NSPIN; i++) {
        pthread_spin_lock(&s);
        pthread_spin_unlock(&s);
    }
    pthread_mutex_lock(&m);
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    if (pthread_cond_timedwait(&c, &m, &t) != ETIMEDOUT)
        fail("the condition wait did not time out");
    pthread_mutex_unlock(&m);
}

int main(int argc, char **argv)
{
    pthread_t th;
    FILE *rep;
    int all;

    if (argc != 3)
        fail("usage: lockcount REPORT counted|recorded");
    all = strcmp(argv[2], "recorded") == 0;
    uncontended();
    if (pthread_create(&th, NULL, contender, NULL) != 0)
        fail("pthread_create");
    while (!atomic_load(&tid))
        sched_yield();
    for (int i = 1; i <= K + 1; i++) {
        time_t end = time(NULL) + 30;
        pthread_mutex_lock(&busy);
        atomic_store(&go, i);
        if (i <= K)
            while (!sleeping(atomic_load(&tid)))
                if (sched_yield(), time(NULL) > end)
                    fail("the contender never waited for the lock");
        if (i > K)
            await(&done, i);
        pthread_mutex_unlock(&busy);
        await(&done, i);
    }
    pthread_join(th, NULL);
    if (!(rep = fopen(argv[1], "w")))
        fail("cannot write the report");
    /* each call: recorded one by one when counted, made in all */
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (all || calls[i].counted)
            fprintf(rep, "call %s %d\n", calls[i].name,
                    all ? calls[i].total : calls[i].counted);
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        fprintf(rep, "total %s %d\n", calls[i].name, calls[i].total);
    fprintf(rep, "call pthread_create 1\ncall pthread_join 1\n");
    fprintf(rep, "acquire %d\n",
            all ? NUNC + NTRY + 2 * NRW + NSPIN + 2 * K + 3 : K + 1);
    fprintf(rep, "release %d\n",
            all ? NUNC + NTRY + 2 * NRW + NSPIN + 2 * K + 3 : K + 1);
    fprintf(rep, "threads 1\n");
    if (fclose(rep) != 0)
        return 1;
    if (getenv("LOCKCOUNT_EXIT") && strcmp(getenv("LOCKCOUNT_EXIT"), "_exit") == 0)
        _exit(0);
    return 0;
}
