/* omptest.c - runs a fixed set of OpenMP constructs and writes, as JSON,
 * what its trace must hold, for tests/e2e_openmp.sh and
 * tests/check_openmp.py: an ordinary OpenMP program, no weft in it, built
 * by GCC (gcc -fopenmp: libgomp, whose entry points libweft-openmp wraps)
 * or by clang (clang -fopenmp=libomp: LLVM's libomp, whose OMPT tool
 * libweft-openmp is; link -latomic, for clang's long double atomic).
 *
 *   omptest [--report] REPORT
 *
 * Every team has an explicit size (num_threads), so OMP_NUM_THREADS and
 * the like change nothing. In order: a team of 4 meets every construct
 * libweft-openmp records (an imbalanced static loop, loops of each
 * runtime schedule, ordered, sections, single, critical, atomic, omp
 * locks, taskwait, taskgroup, explicit barriers); a team of 2; the
 * combined forms (parallel for of static and dynamic schedule, parallel
 * sections); a nested part (2 threads, each forking a team of 3, nesting
 * enabled with omp_set_max_active_levels); explicit tasks in a team of 4
 * (tasks()): a recursive fib under a single, an untied task, an if(0)
 * task, firstprivate data that is over-aligned or a VLA (libgomp copies
 * it: the task checks its copy; clang takes no VLA there, an array of
 * the same length instead), a depend(out)/depend(in) pair, a taskloop
 * (num_tasks, firstprivate data each task checks), and a task from
 * every member; and critical, taskwait and a task outside any team.
 *
 * Nothing is hard-coded in the report: every number is counted as the
 * program runs (each team member counts itself, each construct met is
 * counted by the thread that meets it), with C11 atomics only, so that
 * the counting adds no event of its own. The counts say what the program
 * met finely enough for the checker to derive what each runtime shows of
 * it (check_openmp.py --runtime). What a construct costs in GOMP_ calls
 * is GCC's, not the program's: an `omp for schedule(static)` or `omp
 * single` without nowait ends in GOMP_barrier (counted as "barrier": the
 * sum of barrier_explicit, loop_static_barrier and single_barrier), a
 * static loop is no call at all, a combined parallel loop or parallel
 * sections ends its worksharing without a barrier (the region's implicit
 * barrier does). libomp tells every worksharing construct (static loops
 * too: loop_static, loop_combined_static) and the implicit barrier of
 * each (the *_barrier counts), tells only the explicit barriers as
 * barriers, and of the lock tests only those that got the lock
 * (test_lock_failed, test_nest_lock_failed: those that did not); clang
 * does the long double atomic through libatomic, not the runtime, and
 * tells a taskloop's implicit taskgroup (libgomp keeps it inside) but
 * not a taskwait with depend (libomp 14 waits without a word). GCC
 * drops the barrier of a worksharing construct that ends its parallel
 * region, and makes a region whose body is one worksharing construct a
 * combined one: the constructs here are in functions of their own
 * (orphaned) or followed by their counting, so neither happens unless
 * written so; clang does neither. (A construct added here: check the
 * GOMP_ calls that GCC makes of it and the __kmpc_ calls of clang,
 * objdump -dr.) libomp gives a critical section's lock, not its name:
 * its regions are told apart by their source line, which the report
 * gives (critical_line, critical_named_line). A task is counted by the
 * thread that creates it (task_create, right before its GOMP_task or
 * __kmpc_omp_task_alloc) and by the one that runs it (task or
 * task_untied, first thing in its body); its body also checks what it
 * was given, and a wrong value makes the program say so on stderr and
 * exit 1. A taskloop's tasks are counted by themselves as they run
 * (taskloop_task: a firstprivate flag, which each task gets a copy of,
 * says its first iteration), created and run once each.
 *
 * The report also goes, without "threads" (which depends on how the
 * runtime pools its threads), to stdout, with the results of the
 * computation: the same in every run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TEAM 4          /* the team that meets every construct */
#define SMALL 2         /* a smaller team after it: its threads reused */
#define OUTER 2         /* the nested part: OUTER threads ... */
#define INNER 3         /* ... each forking a team of INNER */
#define COMBINED 3      /* the combined constructs' teams */
#define NITER 8         /* iterations of the imbalanced loop */
#define NLOOP 12        /* iterations of the other loops */
#define ULL_BASE (1ULL << 63) /* a loop's first index, beyond long */
#define SLEEP_MS 2      /* iteration i of the imbalanced loop: i * SLEEP_MS */
#define CRITICAL_NAME "omptest_named"
#define FIB_N 10        /* fib(FIB_N) in tasks: 2 per call of n >= 2 */
#define BIG_ALIGN 32    /* a firstprivate struct's alignment, ... */
#define BIG_LONGS 6     /* ... and its longs after a long double */
#define VLA_LONGS 5     /* a firstprivate VLA's length */
#define DEPEND_VALUE 42 /* what the depend(out) task writes */
#define TASKLOOP_ITERS 12 /* a taskloop's iterations ... */
#define TASKLOOP_TASKS 4  /* ... in this many tasks (num_tasks) */

/* The report's counts: name, what it counts. The trace's events each
 * count stands for are tests/check_openmp.py's. */
#define COUNTS(X)                                                            \
    X(forks, "parallel regions begun (ThreadFork, ThreadJoin)")             \
    X(requested_threads, "threads the regions asked for (num_threads)")     \
    X(team_begins, "team members that ran a region's body")                 \
    X(threads, "OS threads that ran a team's body")                         \
    X(barrier, "threads past a GOMP_barrier (explicit, static for, single)") \
    X(barrier_explicit, "threads past an explicit barrier (omp barrier)")   \
    X(loop, "threads that met a loop of a runtime schedule")                \
    X(loop_barrier, "of those, threads that met one without nowait")        \
    X(loop_static, "threads that met an orphaned schedule(static) loop")    \
    X(loop_static_barrier, "of those, threads that met one without nowait") \
    X(loop_combined_static, "members of a parallel for schedule(static)")   \
    X(sections, "threads that met a sections construct")                    \
    X(sections_barrier, "of those, threads that met one without nowait")    \
    X(single, "threads that met a single construct")                        \
    X(single_barrier, "of those, threads that met one without nowait")      \
    X(critical, "entries into the unnamed critical section")                \
    X(critical_named, "entries into the critical section " CRITICAL_NAME)   \
    X(atomic, "atomic updates GCC does under GOMP_atomic_start")            \
    X(ordered, "ordered sections run")                                      \
    X(taskwait, "taskwait constructs met")                                  \
    X(taskwait_depend, "taskwait depend(...) constructs met")               \
    X(taskgroup, "taskgroup constructs met")                                \
    X(omp_set_lock, "calls")                                                \
    X(omp_unset_lock, "calls")                                              \
    X(omp_test_lock, "calls")                                               \
    X(omp_set_nest_lock, "calls")                                           \
    X(omp_unset_nest_lock, "calls")                                         \
    X(omp_test_nest_lock, "calls")                                          \
    X(lock_acquired, "omp lock acquisitions: sets, tests that returned true") \
    X(test_failed, "omp_test_lock and omp_test_nest_lock calls that failed") \
    X(test_lock_failed, "of those, omp_test_lock calls")                    \
    X(test_nest_lock_failed, "of those, omp_test_nest_lock calls")          \
    X(lock_objects, "omp lock objects used (initialised)")                  \
    X(task_create, "tasks created (GOMP_task calls)")                       \
    X(task, "tied tasks run")                                               \
    X(task_untied, "untied tasks run")                                     \
    X(taskloop, "taskloop constructs met")                                  \
    X(taskloop_task, "taskloop tasks run (each created once)")

static struct {
#define X(name, what) atomic_long name;
    COUNTS(X)
#undef X
} counted;

#define COUNT(name) atomic_fetch_add(&counted.name, 1)

_Static_assert(COMBINED <= TEAM, "combined_body() counts no new thread");
_Static_assert(TEAM >= 2, "locks() wants a thread 1");

/* A firstprivate struct libgomp must copy whole and at its alignment:
 * bigger than 32 bytes, aligned to BIG_ALIGN. */
struct big {
    _Alignas(BIG_ALIGN) long double ld;
    long v[BIG_LONGS];
};
_Static_assert(sizeof(struct big) > 32 && _Alignof(struct big) >= 16,
               "struct big: over 32 bytes, aligned to 16 or more");

static _Thread_local int seen;  /* this thread ran a team's body */
static omp_lock_t lock;
static omp_nest_lock_t nest;
static long double ld_total;    /* updated by `omp atomic` */
static long total;              /* under the unnamed critical section */
static long named_total;        /* under the named one */
static long locked_total;       /* under the omp lock */
static int order[NLOOP];        /* the ordered loop's iterations, in order */
static atomic_int ordered_next;
static atomic_long sum;         /* the loops' and sections' work */
static atomic_long size;        /* a combined construct's team size */
static atomic_int task_failures; /* tasks given wrong data */
static long fib_result;         /* fib(FIB_N), by tasks */

/* The encountering thread, about to fork a team of `want`. */
static void fork_team(int want)
{
    COUNT(forks);
    atomic_fetch_add(&counted.requested_threads, want);
}

/* The calling thread runs a team's body: a location of its own. */
static void thread_seen(void)
{
    if (!seen) {
        seen = 1;
        COUNT(threads);
    }
}

/* The calling thread begins a team's body: a member (ThreadTeamBegin,
 * the parallel region, its implicit barrier). */
static void member(void)
{
    thread_seen();
    COUNT(team_begins);
}

/* A combined construct's body runs per iteration or section, not per
 * member: each runs thread_seen() (every thread of these teams of
 * COMBINED < TEAM ran a body before, in the pool's first team) and
 * stores the team's size, which the encountering thread counts after
 * the region. */
static void combined_body(void)
{
    thread_seen();
    atomic_store(&size, omp_get_num_threads());
}

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

    while (nanosleep(&t, &t) != 0)
        ;
}

/* The source lines of the two critical constructs (each the line after
 * its store): libomp's regions of them are named so. */
static atomic_int critical_line, critical_named_line;

static void critical(void)
{
    atomic_store(&critical_line, __LINE__ + 1);
#pragma omp critical
    {
        COUNT(critical);
        total++;
    }
}

static void critical_named(void)
{
    atomic_store(&critical_named_line, __LINE__ + 1);
#pragma omp critical(omptest_named)
    {
        COUNT(critical_named);
        named_total++;
    }
}

static void barrier(void)
{
#pragma omp barrier
    COUNT(barrier);
    COUNT(barrier_explicit);
}

/* omp lock calls, counted; a test's acquisition only when it succeeds. */
static void set_lock(void)
{
    COUNT(omp_set_lock);
    omp_set_lock(&lock);
    COUNT(lock_acquired);
}

static void unset_lock(void)
{
    COUNT(omp_unset_lock);
    omp_unset_lock(&lock);
}

static int test_lock(void)
{
    int got;

    COUNT(omp_test_lock);
    got = omp_test_lock(&lock);
    if (got) {
        COUNT(lock_acquired);
    } else {
        COUNT(test_failed);
        COUNT(test_lock_failed);
    }
    return got;
}

static void set_nest(void)
{
    COUNT(omp_set_nest_lock);
    omp_set_nest_lock(&nest);
    COUNT(lock_acquired);
}

static void unset_nest(void)
{
    COUNT(omp_unset_nest_lock);
    omp_unset_nest_lock(&nest);
}

/* Returns the nesting count (0: failed). */
static int test_nest(void)
{
    int depth;

    COUNT(omp_test_nest_lock);
    depth = omp_test_nest_lock(&nest);
    if (depth) {
        COUNT(lock_acquired);
    } else {
        COUNT(test_failed);
        COUNT(test_nest_lock_failed);
    }
    return depth;
}

/* Thread 0 holds each lock while the others try it (and fail), then each
 * thread takes each lock in turn; thread 1 (of a team of at least 2)
 * tests them free, and succeeds. Barriers order it all. */
static void locks(void)
{
    int me = omp_get_thread_num();

    if (me == 0) {
        set_lock();
        set_nest();
    }
    barrier();
    if (me != 0) {
        if (test_lock())
            unset_lock();
        if (test_nest())
            unset_nest();
    }
    barrier();
    if (me == 0) {
        unset_lock();
        unset_nest();
    }
    set_lock();
    locked_total++;
    unset_lock();
    /* nested: every set an acquisition, every unset a release */
    set_nest();
    set_nest();
    for (int d = test_nest(); d > 0; d--)
        unset_nest();
    barrier();
    if (me == 1) {
        if (test_lock())
            unset_lock();
        if (test_nest())
            unset_nest();
    }
}

/* Loops of each runtime schedule; every member meets each one (a region
 * of its own whether it gets iterations or not). */
static void loops(void)
{
    COUNT(loop);
#pragma omp for schedule(dynamic)
    for (int i = 0; i < NLOOP; i++)
        atomic_fetch_add(&sum, i);
    COUNT(loop_barrier);

    COUNT(loop);
#pragma omp for schedule(dynamic, 2) nowait
    for (int i = 0; i < NLOOP; i++)
        atomic_fetch_add(&sum, i);

    COUNT(loop);
#pragma omp for schedule(monotonic : dynamic)
    for (int i = 0; i < NLOOP; i++)
        atomic_fetch_add(&sum, i);
    COUNT(loop_barrier);

    /* beyond long: GOMP_loop_ull_* */
    COUNT(loop);
#pragma omp for schedule(dynamic)
    for (unsigned long long u = ULL_BASE; u < ULL_BASE + NLOOP; u++)
        atomic_fetch_add(&sum, (long)(u - ULL_BASE));
    COUNT(loop_barrier);

    COUNT(loop);
#pragma omp for schedule(guided)
    for (int i = 0; i < NLOOP; i++)
        atomic_fetch_add(&sum, i);
    COUNT(loop_barrier);

    COUNT(loop);
#pragma omp for schedule(runtime)
    for (int i = 0; i < NLOOP; i++)
        atomic_fetch_add(&sum, i);
    COUNT(loop_barrier);

    /* ordered: GOMP_loop_ordered_dynamic_start, GOMP_ordered_start/end */
    COUNT(loop);
#pragma omp for ordered schedule(dynamic)
    for (int i = 0; i < NLOOP; i++) {
#pragma omp ordered
        {
            COUNT(ordered);
            order[atomic_fetch_add(&ordered_next, 1)] = i;
        }
    }
    COUNT(loop_barrier);
}

/* The team that meets every construct. */
static void everything(void)
{
    int me = omp_get_thread_num();

    member();

    /* imbalanced: thread t sleeps 2t and 2t+1 times SLEEP_MS, then
     * waits in the loop's barrier for the last one */
    COUNT(loop_static);
#pragma omp for schedule(static)
    for (int i = 0; i < NITER; i++) {
        sleep_ms((long)i * SLEEP_MS);
        atomic_fetch_add(&sum, i);
    }
    COUNT(barrier);
    COUNT(loop_static_barrier);
    COUNT(loop_static);
#pragma omp for schedule(static) nowait
    for (int i = 0; i < NITER; i++)
        atomic_fetch_add(&sum, i);
    barrier();

    loops();

    COUNT(sections);
#pragma omp sections
    {
#pragma omp section
        atomic_fetch_add(&sum, 1);
#pragma omp section
        atomic_fetch_add(&sum, 2);
#pragma omp section
        atomic_fetch_add(&sum, 3);
    }
    COUNT(sections_barrier);
    COUNT(sections);
#pragma omp sections nowait
    {
#pragma omp section
        atomic_fetch_add(&sum, 4);
#pragma omp section
        atomic_fetch_add(&sum, 5);
    }

    COUNT(single);
#pragma omp single
    atomic_fetch_add(&sum, 10);
    COUNT(barrier);
    COUNT(single_barrier);
    COUNT(single);
#pragma omp single nowait
    atomic_fetch_add(&sum, 20);

    for (int k = 0; k <= me; k++)
        critical();
    critical_named();
    critical_named();
    for (int k = 0; k < 3; k++) {
        /* long double: no lock-free atomic, GOMP_atomic_start/end */
#pragma omp atomic
        ld_total += 0.5L;
        COUNT(atomic);
    }

    locks();

#pragma omp taskwait
    COUNT(taskwait);
#pragma omp taskgroup
    {
        COUNT(taskgroup);
    }
    barrier();
}

/* An inner team of the nested part. */
static void inner(void)
{
    member();
    COUNT(loop);
#pragma omp for schedule(dynamic)
    for (int i = 0; i < NLOOP; i++)
        atomic_fetch_add(&sum, i);
    COUNT(loop_barrier);
    critical();
    critical_named();
    barrier();
}

/* ---- explicit tasks ---------------------------------------------------- */

/* A task found its data wrong: said on stderr, the program fails. */
static void task_failed(const char *what)
{
    atomic_fetch_add(&task_failures, 1);
    fprintf(stderr, "omptest: task failed: %s\n", what);
}

/* fib(n), each call of n >= 2 computing fib(n-1) and fib(n-2) in tasks
 * and waiting for them. */
static long fib(int n)
{
    long a = 0, b = 0;

    if (n < 2)
        return n;
    COUNT(task_create);
#pragma omp task shared(a)
    {
        COUNT(task);
        a = fib(n - 1);
    }
    COUNT(task_create);
#pragma omp task shared(b)
    {
        COUNT(task);
        b = fib(n - 2);
    }
    COUNT(taskwait);
#pragma omp taskwait
    return a + b;
}

/* fib(n) without tasks. */
static long fib_plain(int n)
{
    long a = 0, b = 1;

    for (int i = 0; i < n; i++) {
        long c = a + b;

        a = b;
        b = c;
    }
    return a;
}

static void big_fill(struct big *b)
{
    b->ld = 1.25L;
    for (int i = 0; i < BIG_LONGS; i++)
        b->v[i] = 1000 + i;
}

static int big_ok(const struct big *b)
{
    if ((uintptr_t)b % BIG_ALIGN != 0 || b->ld != 1.25L)
        return 0;
    for (int i = 0; i < BIG_LONGS; i++)
        if (b->v[i] != 1000 + i)
            return 0;
    return 1;
}

/* A task given an over-aligned struct (firstprivate: copied when the
 * task is created, changed here after). */
static void big_task(void)
{
    struct big b;

    big_fill(&b);
    COUNT(task_create);
#pragma omp task firstprivate(b)
    {
        COUNT(task);
        if (!big_ok(&b))
            task_failed("firstprivate struct big: wrong copy or alignment");
    }
    /* the original changes (read back, so the store stays): a task
     * reading it instead of its copy would see it */
    memset(&b, 0, sizeof b);
    if (big_ok(&b))
        task_failed("struct big: not changed");
}

/* A task given a VLA (firstprivate: GCC gives GOMP_task a copy function
 * for it). clang allows no variably-modified firstprivate: an array of n
 * longs, n known at compile time, there (a copy all the same). */
#ifndef __clang__
#define VLA_OF(n) (n)
#else
#define VLA_OF(n) VLA_LONGS
#endif
static void vla_task(int n)
{
    long v[VLA_OF(n)];

    for (int i = 0; i < n; i++)
        v[i] = 2000 + i;
    COUNT(task_create);
#pragma omp task firstprivate(v)
    {
        COUNT(task);
        for (int i = 0; i < n; i++)
            if (v[i] != 2000 + i) {
                task_failed("firstprivate VLA: wrong copy");
                break;
            }
    }
    for (int i = 0; i < n; i++)
        v[i] = -1;      /* the task has its copy */
}

/* A depend(out) task and a depend(in) task on x: the second runs after
 * the first, however late the first writes. */
static void depend_tasks(void)
{
    long x = 0;

    COUNT(task_create);
#pragma omp task depend(out : x) shared(x)
    {
        COUNT(task);
        sleep_ms(SLEEP_MS);
        x = DEPEND_VALUE;
    }
    COUNT(task_create);
#pragma omp task depend(in : x) shared(x)
    {
        COUNT(task);
        if (x != DEPEND_VALUE)
            task_failed("depend(in) task ran before its depend(out) task");
    }
    /* waits for both (inout after out and in) */
    COUNT(taskwait_depend);
#pragma omp taskwait depend(inout : x)
    COUNT(taskwait);
#pragma omp taskwait
}

/* A taskloop: each task gets a copy of the firstprivate data (its first
 * iteration counts it) and the loop's iterations once each. */
static void taskloop_tasks(void)
{
    long done[TASKLOOP_ITERS] = { 0 };
    long base = DEPEND_VALUE;
    int first = 1;

    COUNT(taskloop);
#pragma omp taskloop num_tasks(TASKLOOP_TASKS) firstprivate(base, first) \
    shared(done)
    for (int i = 0; i < TASKLOOP_ITERS; i++) {
        if (first) {
            first = 0;
            COUNT(taskloop_task);
        }
        if (base != DEPEND_VALUE)
            task_failed("a taskloop task's firstprivate copy is wrong");
        done[i]++;
    }
    for (int i = 0; i < TASKLOOP_ITERS; i++)
        if (done[i] != 1)
            task_failed("a taskloop iteration did not run once");
}

/* The team of explicit tasks: one member creates them all under a
 * single (the others run them in its barrier), then every member
 * creates one, run by the region's implicit barrier at the latest. */
static void tasks(void)
{
    member();
    COUNT(single);
#pragma omp single
    {
        int at_once = 0;

        fib_result = fib(FIB_N);

        /* untied, with a scheduling point in it */
        COUNT(task_create);
#pragma omp task untied
        {
            COUNT(task_untied);
            COUNT(task_create);
#pragma omp task
            COUNT(task);
            COUNT(taskwait);
#pragma omp taskwait
        }

        /* if(0): runs at once, on this thread, before the next line */
        COUNT(task_create);
#pragma omp task if(0) shared(at_once)
        {
            COUNT(task);
            at_once = 1;
        }
        if (!at_once)
            task_failed("if(0) task did not run at once");

        big_task();
        vla_task(VLA_LONGS);
        depend_tasks();
        taskloop_tasks();
    }
    COUNT(barrier);
    COUNT(single_barrier);

    COUNT(task_create);
#pragma omp task
    {
        COUNT(task);
        atomic_fetch_add(&sum, 1);
    }
}

static int write_report(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "{\"critical_name\": \"%s\", \"critical_line\": %d, "
            "\"critical_named_line\": %d", CRITICAL_NAME,
            atomic_load(&critical_line), atomic_load(&critical_named_line));
#define X(name, what) \
    fprintf(f, ", \"%s\": %ld", #name, atomic_load(&counted.name));
    COUNTS(X)
#undef X
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *report = NULL;

    if (argc == 2 && argv[1][0] != '-')
        report = argv[1];
    else if (argc == 3 && strcmp(argv[1], "--report") == 0)
        report = argv[2];
    if (!report) {
        fprintf(stderr, "usage: omptest [--report] REPORT\n");
        return 2;
    }
    omp_init_lock(&lock);
    COUNT(lock_objects);
    omp_init_nest_lock(&nest);
    COUNT(lock_objects);

    fork_team(TEAM);
#pragma omp parallel num_threads(TEAM)
    everything();

    /* a smaller team: threads of the pool again, on their locations */
    fork_team(SMALL);
#pragma omp parallel num_threads(SMALL)
    {
        member();
        barrier();
        COUNT(single);
#pragma omp single
        atomic_fetch_add(&sum, 100);
        COUNT(barrier);
        COUNT(single_barrier);
        critical();
    }

    /* combined: GOMP_parallel (static: no loop region, no barrier; under
     * libomp a loop region, no barrier) */
    fork_team(COMBINED);
#pragma omp parallel for schedule(static) num_threads(COMBINED)
    for (int i = 0; i < NLOOP; i++) {
        combined_body();
        atomic_fetch_add(&sum, i);
    }
    atomic_fetch_add(&counted.team_begins, atomic_load(&size));
    atomic_fetch_add(&counted.loop_combined_static, atomic_load(&size));

    /* combined: GOMP_parallel_loop_nonmonotonic_dynamic, each member's
     * loop region from its first GOMP_loop_*_next, no barrier in it */
    fork_team(COMBINED);
#pragma omp parallel for schedule(dynamic) num_threads(COMBINED)
    for (int i = 0; i < NLOOP; i++) {
        combined_body();
        atomic_fetch_add(&sum, i);
    }
    atomic_fetch_add(&counted.team_begins, atomic_load(&size));
    atomic_fetch_add(&counted.loop, atomic_load(&size));

    /* combined: GOMP_parallel_sections, no barrier in the sections */
    fork_team(COMBINED);
#pragma omp parallel sections num_threads(COMBINED)
    {
#pragma omp section
        {
            combined_body();
            atomic_fetch_add(&sum, 1);
        }
#pragma omp section
        {
            combined_body();
            atomic_fetch_add(&sum, 2);
        }
    }
    atomic_fetch_add(&counted.team_begins, atomic_load(&size));
    atomic_fetch_add(&counted.sections, atomic_load(&size));

    /* nested: OUTER members each fork a team of INNER */
    omp_set_max_active_levels(2);
    fork_team(OUTER);
#pragma omp parallel num_threads(OUTER)
    {
        member();
        fork_team(INNER);
#pragma omp parallel num_threads(INNER)
        inner();
        critical_named();
    }

    fork_team(TEAM);
#pragma omp parallel num_threads(TEAM)
    tasks();
    if (fib_result != fib_plain(FIB_N))
        task_failed("fib by tasks differs");

    /* outside any team: the initial thread alone (a task: at once) */
    critical();
#pragma omp taskwait
    COUNT(taskwait);
    COUNT(task_create);
#pragma omp task
    COUNT(task);
    if (atomic_load(&counted.task) + atomic_load(&counted.task_untied) !=
        atomic_load(&counted.task_create))
        task_failed("tasks created and run differ");
    if (atomic_load(&counted.barrier) !=
            atomic_load(&counted.barrier_explicit) +
                atomic_load(&counted.loop_static_barrier) +
                atomic_load(&counted.single_barrier) ||
        atomic_load(&counted.test_failed) !=
            atomic_load(&counted.test_lock_failed) +
                atomic_load(&counted.test_nest_lock_failed)) {
        fprintf(stderr, "omptest: the counts of barriers or failed tests "
                "do not add up\n");
        return 1;
    }

    omp_destroy_nest_lock(&nest);
    omp_destroy_lock(&lock);

    printf("omptest: sum %ld, critical %ld, named %ld, locked %ld, "
           "atomic %.1Lf\n", atomic_load(&sum), total, named_total,
           locked_total, ld_total);
    printf("omptest: fib(%d) %ld\n", FIB_N, fib_result);
    printf("omptest: ordered");
    for (int i = 0; i < atomic_load(&ordered_next); i++)
        printf(" %d", order[i]);
    printf("\n");
#define X(name, what)                                               \
    if (strcmp(#name, "threads") != 0)                              \
        printf("omptest: %s %ld\n", #name, atomic_load(&counted.name));
    COUNTS(X)
#undef X
    if (write_report(report) != 0)
        return 1;
    return atomic_load(&task_failures) == 0 ? 0 : 1;
}
