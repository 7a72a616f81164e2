/* abort.c - an MPI program (any number of ranks >= 2) whose rank 1 ends
 * the run badly after some traffic: `abort` calls MPI_Abort, `segv`
 * dies of SIGSEGV, `exit` exits with status 4 without MPI_Finalize. The
 * other ranks wait in a barrier that never
 * completes until the launcher kills them. Its trace is partial and says
 * how rank 1 ended; both OTF2 readers accept it. MPI_Init_thread (not
 * MPI_Init) opens it, so that call is exercised too.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, provided, i, s, r = -1, sum;
    volatile int *volatile nowhere = NULL;

    if (argc != 2 || (strcmp(argv[1], "abort") != 0 &&
                      strcmp(argv[1], "segv") != 0 &&
                      strcmp(argv[1], "exit") != 0)) {
        fprintf(stderr, "usage: abort abort|segv|exit\n");
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "abort: run me on 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (i = 0; i < 10; i++) {
        s = 1000 * rank + i;
        MPI_Sendrecv(&s, 1, MPI_INT, (rank + 1) % size, i, &r, 1, MPI_INT,
                     (rank + size - 1) % size, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (r != 1000 * ((rank + size - 1) % size) + i) {
            fprintf(stderr, "abort: rank %d got %d\n", rank, r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        fprintf(stderr, "abort: rank 1 ends with %s\n", argv[1]);
        if (strcmp(argv[1], "abort") == 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
        if (strcmp(argv[1], "exit") == 0)
            exit(4);
        *nowhere = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);  /* never completes: rank 1 is gone */
    MPI_Finalize();
    return 0;
}
