/* openmp.c - what OpenMP's constructs cost a program, each timed alone
 * (bench/openmp.sh runs it untraced, under weft run and under EZTrace):
 *
 *   openmp THREADS N
 *
 * prints, one per line, "NAME NS" with NS the nanoseconds one
 * construct took on average over N of them:
 *   region   an empty parallel region of THREADS threads (fork, the
 *            implicit barrier, join)
 *   barrier  an explicit barrier of a team of THREADS
 *   chunk    a chunk of one iteration of a schedule(dynamic, 1) loop,
 *            per thread (N iterations over the team)
 *   critical an unnamed critical section entered and left, per thread
 * An ordinary OpenMP program: built by the script with gcc -fopenmp
 * (libgomp) and clang -fopenmp=libomp (LLVM's runtime).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    long n = argc > 2 ? atol(argv[2]) : 10000, sink = 0;
    double t0;

    if (threads < 1 || n < 1) {
        fprintf(stderr, "usage: openmp THREADS N\n");
        return 2;
    }
#pragma omp parallel num_threads(threads)
    sink += 0; /* the team made once before timing */
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
#pragma omp parallel num_threads(threads)
        {
            __asm__ volatile("" ::: "memory");
        }
    }
    printf("region %.1f\n", (now_ns() - t0) / (double)n);
    t0 = now_ns();
#pragma omp parallel num_threads(threads)
    for (long i = 0; i < n; i++) {
#pragma omp barrier
    }
    printf("barrier %.1f\n", (now_ns() - t0) / (double)n);
    t0 = now_ns();
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(dynamic, 1)
        for (long i = 0; i < n * threads; i++)
            __asm__ volatile("" ::: "memory");
    }
    printf("chunk %.1f\n", (now_ns() - t0) / (double)n);
    t0 = now_ns();
#pragma omp parallel num_threads(threads)
    for (long i = 0; i < n; i++) {
#pragma omp critical
        sink++;
    }
    printf("critical %.1f\n", (now_ns() - t0) / (double)n);
    return sink == n * threads ? 0 : 1;
}
