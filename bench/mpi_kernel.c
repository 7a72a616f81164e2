/* bench/mpi_kernel.c - one MPI kernel timed with MPI_Wtime, for
 * bench/mpi.sh (which runs it untraced, under libweft-mpi and under
 * EZTrace). Built once per MPI (bench/mpi_kernel_openmpi,
 * bench/mpi_kernel_mpich).
 *
 *   mpirun -np 2 bench/mpi_kernel_openmpi pingpong N
 *   mpirun -np 4 bench/mpi_kernel_openmpi allreduce N
 *
 * pingpong   ranks 0 and 1 bounce 8 bytes (MPI_Send / MPI_Recv) N times;
 *            every rank makes 2 calls per iteration; other ranks idle.
 * allreduce  every rank calls MPI_Allreduce on one double N times;
 *            1 call per iteration.
 *
 * N/10 warm-up iterations (at least 100) and a barrier come first. The N
 * iterations (N >= BATCHES) run as BATCHES batches of N/BATCHES, each
 * timed on its own: on a shared machine a batch during which another
 * process took a core is slow, and the median batch leaves it out while
 * costs that every batch pays (recording, shipping) stay in. Rank 0
 * prints one line
 *
 *   ns_per_call MEAN median_batch MED min_batch MIN cpu CPU calls C
 *       p99 P99 max MAX slow S
 *
 * in ns per call of rank 0 (C calls timed in all): over all batches, the
 * median batch, the fastest one, and the CPU time of rank 0's thread
 * over all batches (what the calls cost the program's thread, whatever
 * other threads and processes take; equal to the wall time where MPI
 * busy-waits); then the tail: each iteration of rank 0 is timed on its
 * own (a ping-pong's round trip, an allreduce), and P99 and MAX are the
 * 99th percentile and the slowest of them, per call (a round trip is 2
 * calls), and S the number of iterations slower than SLOW_NS (the
 * latency spikes of issue #32 were 1-3 iterations of 280-980 us). Exit status 0, or 2 on bad arguments.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PINGPONG, ALLREDUCE };
#define BATCHES 20
#define SLOW_NS 100000.0

static double thread_cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Bounces 8 bytes between ranks 0 and 1 n times; rank 0 stores each
 * round trip's seconds in lat[] (when not NULL). */
static void pingpong(int rank, long n, double *lat)
{
    char buf[8] = { 0 };

    for (long i = 0; i < n; i++) {
        double t = lat ? MPI_Wtime() : 0;
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        if (lat)
            lat[i] = MPI_Wtime() - t;
    }
}

/* n MPI_Allreduce of one double over the world; each one's seconds in
 * lat[] (when not NULL). */
static double allreduce(long n, double *lat)
{
    double in = 1.0, out = 0.0, acc = 0.0;

    for (long i = 0; i < n; i++) {
        double t = lat ? MPI_Wtime() : 0;
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        acc += out;
        if (lat)
            lat[i] = MPI_Wtime() - t;
    }
    return acc;
}

int main(int argc, char **argv)
{
    int rank, size, kernel;
    long n, warm, per, calls;
    double t0, t1, c0, c1, sink = 0, batch[BATCHES], *lat;
    char *end;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = argc == 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc != 3 || *end || n < BATCHES ||
        (strcmp(argv[1], "pingpong") && strcmp(argv[1], "allreduce"))) {
        if (rank == 0)
            fprintf(stderr, "usage: %s pingpong|allreduce ITERATIONS "
                    "(at least %d)\n", argv[0], BATCHES);
        MPI_Finalize();
        return 2;
    }
    kernel = strcmp(argv[1], "pingpong") ? ALLREDUCE : PINGPONG;
    if (kernel == PINGPONG && size < 2) {
        if (rank == 0)
            fprintf(stderr, "%s: pingpong needs 2 ranks\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    warm = n / 10 < 100 ? 100 : n / 10;

    if (kernel == PINGPONG)
        pingpong(rank, warm, NULL);
    else
        sink += allreduce(warm, NULL);
    per = n / BATCHES;
    lat = malloc((size_t)(per * BATCHES) * sizeof *lat);
    if (!lat) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    c0 = thread_cpu();
    t0 = MPI_Wtime();
    for (int b = 0; b < BATCHES; b++) {
        double b0 = MPI_Wtime();
        if (kernel == PINGPONG)
            pingpong(rank, per, lat + b * per);
        else
            sink += allreduce(per, lat + b * per);
        batch[b] = MPI_Wtime() - b0;
    }
    t1 = MPI_Wtime();
    c1 = thread_cpu();
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        double per_calls = (double)(kernel == PINGPONG ? 2 * per : per);
        calls = (long)per_calls * BATCHES;
        long iters = per * BATCHES, slow = 0;
        double per_iter = kernel == PINGPONG ? 2.0 : 1.0;
        qsort(batch, BATCHES, sizeof batch[0], by_value);
        qsort(lat, (size_t)iters, sizeof lat[0], by_value);
        while (slow < iters && lat[iters - 1 - slow] * 1e9 > SLOW_NS)
            slow++;
        printf("ns_per_call %.1f median_batch %.1f min_batch %.1f "
               "cpu %.1f calls %ld p99 %.1f max %.1f slow %ld\n",
               (t1 - t0) * 1e9 / (double)calls,
               (batch[BATCHES / 2 - 1] + batch[BATCHES / 2]) / 2 * 1e9 /
                   per_calls,
               batch[0] * 1e9 / per_calls, (c1 - c0) * 1e9 / (double)calls,
               calls, lat[iters * 99 / 100] * 1e9 / per_iter,
               lat[iters - 1] * 1e9 / per_iter, slow);
        fflush(stdout); /* before MPI_Finalize, which may wait for weftd */
    }
    free(lat);
    MPI_Finalize();
    return sink < 0; /* keeps the allreduces' results alive */
}
