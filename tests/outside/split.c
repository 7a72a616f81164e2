/* split.c - a program of a known split between a traced call and the
 * time outside traced calls (tests/e2e_outside.sh, issue #32): ITER
 * times, the main thread wakes a helper thread (a semaphore: no traced
 * call) and reads one byte from a pipe (traced) that the helper writes
 * after sleeping WAIT_MS, then computes COMPUTE_MS of wall time in no
 * traced call. It opens /dev/null first and writes to it last (traced),
 * so that its thread's first and last events enclose all of that. It
 * prints the seconds it computed and the seconds its reads took, as it
 * measured them.
 *
 *     split ITER COMPUTE_MS WAIT_MS
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int back[2];
static sem_t go;
static long wait_ms, iter;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* For each of the ITER wakes: sleeps WAIT_MS, writes a byte. */
static void *helper(void *arg)
{
    (void)arg;
    for (long i = 0; i < iter; i++) {
        struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
        while (sem_wait(&go) != 0)
            ;
        nanosleep(&ts, NULL);
        if (write(back[1], "x", 1) != 1)
            break;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double computed = 0, waited = 0, sink = 0;
    long compute_ms;
    pthread_t t;
    int null;
    char c;

    if (argc != 4)
        return 2;
    iter = atol(argv[1]);
    compute_ms = atol(argv[2]);
    wait_ms = atol(argv[3]);
    if (pipe(back) || sem_init(&go, 0, 0) ||
        pthread_create(&t, NULL, helper, NULL) ||
        (null = open("/dev/null", O_WRONLY)) < 0)
        return 1;
    for (long i = 0; i < iter; i++) {
        double t0 = now(), t1, end;
        sem_post(&go);
        if (read(back[0], &c, 1) != 1)
            return 1;
        t1 = now();
        waited += t1 - t0;
        end = t1 + (double)compute_ms / 1000;
        while (now() < end)
            for (int k = 0; k < 1000; k++)
                sink += k * 0.5;
        computed += now() - t1;
    }
    if (write(null, "x", 1) != 1 || pthread_join(t, NULL))
        return 1;
    printf("%.6f %.6f\n", computed, waited + (sink < 0));
    return 0;
}
