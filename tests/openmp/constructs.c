/* constructs.c - the OpenMP constructs beyond omptest's that
 * libweft-openmp records, met a counted number of times, for
 * tests/e2e_openmp_constructs.sh and tests/check_constructs.py: an
 * ordinary OpenMP program, no weft in it, built by GCC (libgomp) or by
 * clang (clang -fopenmp=libomp: LLVM's libomp).
 *
 *   constructs REPORT
 *
 * Run with OMP_CANCELLATION=true (else cancel does nothing and the
 * program says so and exits 1). Every team has TEAM threads
 * (num_threads), in order:
 *   - a loop (schedule(dynamic, 1)) cancelled at one iteration, a
 *     cancellation point in every iteration; GCC only, a parallel region
 *     cancelled by its thread 0, with a cancellation point in each thread;
 *   - tasks, each meeting a taskyield;
 *   - doacross loops (ordered(n) with depend(sink)/depend(source)): of
 *     one loop and of two (GOMP_doacross_wait gets one iteration number
 *     per loop), with long and with unsigned long long iterations (GCC's
 *     GOMP_doacross_ull_* for a bound of that type);
 *   - GCC only (clang 14 has no scope): a scope with a task reduction
 *     (the one scope GCC calls libgomp for);
 *   - host teams (teams outside target), each team forking a parallel
 *     region.
 * Each construct is counted by the thread that meets it (its number in
 * its team), right before it, with C11 atomics, so the counting adds no
 * event of its own; a cancellation point also counts whether the thread
 * got past it (libomp tells only those that found the region cancelled).
 * The report, JSON, gives the counts per thread number; stdout gets the
 * computation's results, the same in every run.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define TEAM 2
#define NCANCEL 64      /* iterations of the cancelled loop */
#define CANCEL_AT 5     /* ... and the one that cancels it */
#define NTASKS 6
#define N1 40           /* the doacross loop of one loop */
#define N2 6            /* ... of two: N2 x M2 */
#define M2 5
#define NTEAMS 2

/* The report's counts per thread number: name, what it counts. */
#define COUNTS(X)                                                            \
    X(cancel, "cancel directives met (every one cancels)")                   \
    X(cancellation_point, "cancellation points met")                         \
    X(cancellation_passed, "cancellation points gone past (not cancelled)")  \
    X(taskyield, "taskyields met, by the thread running the task")           \
    X(doacross_wait, "ordered depend(sink) met")                             \
    X(doacross_post, "ordered depend(source) met")                           \
    X(scope, "scope constructs met")

static struct {
#define X(name, what) atomic_uint name[TEAM];
    COUNTS(X)
#undef X
    atomic_uint teams;          /* team bodies run */
} C;

static void count(atomic_uint *c)
{
    int me = omp_get_thread_num();

    if (me < 0 || me >= TEAM) {
        fprintf(stderr, "constructs: thread number %d in a team of %d\n", me,
                TEAM);
        exit(1);
    }
    atomic_fetch_add_explicit(&c[me], 1, memory_order_relaxed);
}

/* A little work, so that a thread may find the loop cancelled. */
static long spin(long i)
{
    volatile long x = i;

    for (int k = 0; k < 2000; k++)
        x = x * 3 + 1;
    return x;
}

static void cancel_loop(void)
{
#pragma omp parallel num_threads(TEAM)
    {
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < NCANCEL; i++) {
            count(C.cancellation_point);
#pragma omp cancellation point for
            count(C.cancellation_passed);
            if (i == CANCEL_AT) {
                count(C.cancel);
#pragma omp cancel for
            }
            spin(i);
        }
    }
}

/* GCC only: libomp 14 with a tool (any OMPT tool) now and then hangs in
 * the cancel barrier after a cancel parallel. */
static void cancel_parallel(void)
{
#if !defined(__clang__)
#pragma omp parallel num_threads(TEAM)
    {
        if (omp_get_thread_num() == 0) {
            count(C.cancel);
#pragma omp cancel parallel
        }
        spin(1);
        count(C.cancellation_point);
#pragma omp cancellation point parallel
        count(C.cancellation_passed);
    }
#endif
}

static long yielding(void)
{
    atomic_long sum = 0;

#pragma omp parallel num_threads(TEAM)
#pragma omp single
    for (int k = 0; k < NTASKS; k++) {
#pragma omp task firstprivate(k) shared(sum)
        {
            count(C.taskyield);
#pragma omp taskyield
            atomic_fetch_add(&sum, k);
        }
    }
    return sum;
}

static long a1[N1], a2[N2][M2];
static unsigned long long u2[N2][M2];

static void doacross(unsigned long long n2, unsigned long long m2)
{
#pragma omp parallel num_threads(TEAM)
    {
#pragma omp for ordered(1) schedule(static, 1)
        for (long i = 0; i < N1; i++) {
            if (i > 0) {
                count(C.doacross_wait);
#pragma omp ordered depend(sink: i - 1)
            }
            a1[i] = i > 0 ? a1[i - 1] + i : 0;
            count(C.doacross_post);
#pragma omp ordered depend(source)
        }
#pragma omp for ordered(2) schedule(static, 1)
        for (long i = 0; i < N2; i++)
            for (long j = 0; j < M2; j++) {
                if (i > 0) {
                    count(C.doacross_wait);
#pragma omp ordered depend(sink: i - 1, j)
                }
                a2[i][j] = (i > 0 ? a2[i - 1][j] : 0) + j;
                count(C.doacross_post);
#pragma omp ordered depend(source)
            }
#pragma omp for ordered(2) schedule(static, 1)
        for (unsigned long long i = 0; i < n2; i++)
            for (unsigned long long j = 0; j < m2; j++) {
                if (j > 0) {
                    count(C.doacross_wait);
#pragma omp ordered depend(sink: i, j - 1)
                }
                u2[i][j] = (j > 0 ? u2[i][j - 1] : 0) + i;
                count(C.doacross_post);
#pragma omp ordered depend(source)
            }
    }
}

static long scoped(void)
{
    long sum = 0;

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma omp parallel num_threads(TEAM)
    {
        long mine = omp_get_thread_num() + 1;

        count(C.scope);
#pragma omp scope reduction(task, + : sum)
        {
#pragma omp task in_reduction(+ : sum) firstprivate(mine)
            sum += mine;
        }
    }
#endif
    return sum;
}

static void teams(void)
{
#pragma omp teams num_teams(NTEAMS)
    {
        atomic_fetch_add(&C.teams, 1);
#pragma omp parallel num_threads(TEAM)
        spin(2);
    }
}

static int write_report(const char *path)
{
    FILE *f = fopen(path, "w");
    const char *sep = "";

    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "{\"team\": %d, \"teams\": %u", TEAM,
            atomic_load(&C.teams));
#define X(name, what)                                                        \
    fprintf(f, ", \"%s\": [", #name);                                        \
    sep = "";                                                                \
    for (int t = 0; t < TEAM; t++, sep = ", ")                               \
        fprintf(f, "%s%u", sep, atomic_load(&C.name[t]));                    \
    fprintf(f, "]");
    COUNTS(X)
#undef X
    fprintf(f, "}\n");
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    volatile unsigned long long n2 = N2, m2 = M2;
    unsigned cancels = 0;
    long yields, sum;

    if (argc != 2) {
        fprintf(stderr, "usage: constructs REPORT\n");
        return 2;
    }
    if (!omp_get_cancellation()) {
        fprintf(stderr, "constructs: run with OMP_CANCELLATION=true\n");
        return 1;
    }
    cancel_loop();
    cancel_parallel();
    yields = yielding();
    doacross(n2, m2);
    sum = scoped();
    teams();
    for (int t = 0; t < TEAM; t++)
        cancels += atomic_load(&C.cancel[t]);
    printf("cancels %u\n", cancels);
    printf("task sum %ld\n", yields);
    printf("doacross %ld %ld %llu\n", a1[N1 - 1], a2[N2 - 1][M2 - 1],
           u2[N2 - 1][M2 - 1]);
    printf("scope sum %ld\n", sum);
    printf("teams %u\n", atomic_load(&C.teams));
    return write_report(argv[1]) == 0 ? 0 : 1;
}
