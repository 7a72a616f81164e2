/* fib.c - an ordinary C program that knows nothing of weft. Compiled with
 * -finstrument-functions and linked with libweft-instrument it is traced
 * as it is (README: "Tracing a program without changing it").
 *
 * Each of THREADS threads (worker) computes fib(N) recursively, sums the
 * squares 1..SQUARES through helper_square (which calls leaf_add), and
 * escapes from DEPTH+1 nested calls of dive() with longjmp back to
 * catcher(). With -x the main thread then calls dive() once more, which
 * calls exit() at the bottom instead of returning.
 *
 *   fib [-t THREADS] [-n N] [-s SQUARES] [-d DEPTH] [-x]
 *
 * tests/e2e_instrument.sh runs it with WEFT_FILTER="-helper_*" and works
 * out from N, SQUARES and DEPTH how many calls of each function the trace
 * must hold: fib(N) makes 2*F(N+1)-1 calls of fib.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 64

typedef struct job {
    unsigned n, depth;
    long squares;
    unsigned long fib;   /* results */
    long sum;
} job;

unsigned long fib(unsigned n);
long leaf_add(long a, long b);

unsigned long fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) long leaf_add(long a, long b)
{
    return a + b;
}

static __attribute__((noinline)) long helper_square(long x, long sum)
{
    return leaf_add(sum, x * x);
}

static int exit_at_bottom; /* -x */

/* At the bottom: longjmp to *env; without env, exit() with -x. */
static __attribute__((noinline)) void dive(unsigned depth, jmp_buf *env)
{
    if (depth > 0)
        dive(depth - 1, env);
    else if (env)
        longjmp(*env, 1);
    else if (exit_at_bottom)
        exit(0);
}

static __attribute__((noinline)) int catcher(unsigned depth)
{
    jmp_buf env;

    if (setjmp(env) == 0) {
        dive(depth, &env);
        return 0; /* not reached */
    }
    return 1;
}

static void *worker(void *arg)
{
    job *j = arg;

    j->fib = fib(j->n);
    j->sum = 0;
    for (long i = 1; i <= j->squares; i++)
        j->sum = helper_square(i, j->sum);
    if (!catcher(j->depth))
        j->sum = -1;
    return NULL;
}

int main(int argc, char **argv)
{
    job jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    long threads = 2, n = 20, squares = 100, depth = 10;
    int opt;

    while ((opt = getopt(argc, argv, "t:n:s:d:x")) != -1) {
        switch (opt) {
        case 't': threads = atol(optarg); break;
        case 'n': n = atol(optarg); break;
        case 's': squares = atol(optarg); break;
        case 'd': depth = atol(optarg); break;
        case 'x': exit_at_bottom = 1; break;
        default: goto usage;
        }
    }
    if (optind != argc || threads < 1 || threads > MAX_THREADS || n < 0 ||
        n > 40 || squares < 0 || squares > 1000000 || depth < 0 ||
        depth > 10000)
        goto usage;
    for (long i = 0; i < threads; i++) {
        jobs[i] = (job){ .n = (unsigned)n, .depth = (unsigned)depth,
                         .squares = squares };
        if (pthread_create(&tid[i], NULL, worker, &jobs[i]) != 0) {
            perror("fib: pthread_create");
            return 1;
        }
    }
    for (long i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        printf("thread %ld: fib(%ld) = %lu, sum of squares = %ld\n", i, n,
               jobs[i].fib, jobs[i].sum);
    }
    fflush(stdout);
    if (exit_at_bottom)
        dive((unsigned)depth, NULL);
    return 0;
usage:
    fprintf(stderr, "usage: fib [-t THREADS (1-%d)] [-n N (0-40)] "
            "[-s SQUARES] [-d DEPTH] [-x]\n", MAX_THREADS);
    return 2;
}
