/* bench/instrument.c - cost of one call of a function compiled with
 * -finstrument-functions and traced by libweft-instrument.
 *
 * This file is compiled with -finstrument-functions; only traced() and
 * skipped_fn() are left instrumented. In one run, one thread, N calls
 * each of:
 *   plain      an uninstrumented function (the baseline),
 *   traced     an instrumented one: enter hook + Enter, exit hook + Leave,
 *   skipped    an instrumented one excluded by WEFT_FILTER="-skipped_*",
 *   manual     plain() between weft_enter/weft_leave written by hand (what
 *              libweft alone costs, without the hooks).
 * Prints ns per call (median of REPEATS runs, wall and thread CPU time)
 * and each one's cost over plain.
 *
 * The first instrumented call opens the session from the environment, so
 * the bench first starts a weftd (WEFT_BENCH_WEFTD or ./weftd) on a free
 * loopback port with a temporary spool and points WEFT_SERVER at it.
 *
 *   bench/instrument [-n CALLS] [-r REPEATS]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft.h"
#include "weftd.h"

#define NOINSTR __attribute__((no_instrument_function))
#define MAX_REPEATS 100

long traced(long x);
long skipped_fn(long x);

/* The asm keeps the compiler from treating them as pure and hoisting or
 * merging calls. */
__attribute__((noinline)) long traced(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

__attribute__((noinline)) long skipped_fn(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

NOINSTR __attribute__((noinline)) static long plain(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

NOINSTR static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { K_PLAIN, K_TRACED, K_SKIPPED, K_MANUAL, K_COUNT };
static const char *const kind_names[K_COUNT] = { "plain", "traced",
                                                 "skipped", "manual" };

static volatile long sink;

/* ns per call of kind k over n calls, wall (w) and thread CPU (c). */
NOINSTR static void run(int k, long n, OTF2_RegionRef manual, double *w,
                        double *c)
{
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    long acc = 0;

    switch (k) {
    case K_PLAIN:
        for (long i = 0; i < n; i++)
            acc += plain(i);
        break;
    case K_TRACED:
        for (long i = 0; i < n; i++)
            acc += traced(i);
        break;
    case K_SKIPPED:
        for (long i = 0; i < n; i++)
            acc += skipped_fn(i);
        break;
    case K_MANUAL:
        for (long i = 0; i < n; i++) {
            weft_enter(manual);
            acc += plain(i);
            weft_leave(manual);
        }
        break;
    }
    sink = acc;
    *w = (double)(clock_ns(CLOCK_MONOTONIC) - w0) / (double)n;
    *c = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)n;
}

NOINSTR static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Runs the measurements once the hooks are on; 0, or 1 if they are not. */
NOINSTR static int measure(long n, int repeats)
{
    static double t[K_COUNT][2][MAX_REPEATS];
    OTF2_RegionRef manual;
    double med[K_COUNT][2];

    traced(0); /* opens the session; first calls resolve: not measured */
    skipped_fn(0);
    if (!weft_connected()) {
        fprintf(stderr, "bench: libweft-instrument did not connect\n");
        return 1;
    }
    manual = weft_region("manual");
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < K_COUNT; k++)
            run(k, n, manual, &t[k][0][r], &t[k][1][r]);
    for (int k = 0; k < K_COUNT; k++) {
        for (int m = 0; m < 2; m++) {
            qsort(t[k][m], (size_t)repeats, sizeof t[k][m][0], cmp_double);
            med[k][m] = t[k][m][repeats / 2];
        }
    }
    printf("bench/instrument: %ld calls per run, median of %d runs, ns per "
           "call\n", n, repeats);
    printf("%-8s %9s %9s %12s %12s\n", "call", "wall", "cpu", "wall-plain",
           "cpu-plain");
    for (int k = 0; k < K_COUNT; k++)
        printf("%-8s %9.1f %9.1f %12.1f %12.1f\n", kind_names[k], med[k][0],
               med[k][1], med[k][0] - med[K_PLAIN][0],
               med[k][1] - med[K_PLAIN][1]);
    return 0;
}

NOINSTR int main(int argc, char **argv)
{
    char tmp[] = "/tmp/weft-bench-XXXXXX", addr[128], cmd[600];
    long n = 1000000;
    int repeats = 5, opt, status, rc = 1;
    pid_t weftd;

    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        switch (opt) {
        case 'n': n = strtol(optarg, NULL, 10); break;
        case 'r': repeats = (int)strtol(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: bench/instrument [-n CALLS] "
                    "[-r REPEATS]\n");
            return 2;
        }
    }
    if (n <= 0 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench: -n must be > 0 and -r between 1 and %d\n",
                MAX_REPEATS);
        return 2;
    }
    if (!mkdtemp(tmp))
        return 1;
    weftd = bench_start_weftd(tmp, NULL, addr, sizeof addr);
    if (weftd < 0)
        goto out;
    setenv("WEFT_SERVER", addr, 1);
    setenv("WEFT_TRACE", "bench-instrument", 1);
    setenv("WEFT_RANK", "0", 1);
    setenv("WEFT_SIZE", "1", 1);
    setenv("WEFT_FILTER", "-skipped_*", 1);
    rc = measure(n, repeats);
    weft_close();
    /* The archive of this run is not needed: no conversion wait. */
    kill(weftd, SIGKILL);
    waitpid(weftd, &status, 0);
out:
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", tmp);
    return rc;
}
