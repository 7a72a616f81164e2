/* stencil.c - an OpenMP sweep whose work grows with the index, so that
 * its team waits for its last thread at every loop's end: the load
 * imbalance tests/e2e_report.sh looks for in weft report (and the
 * picture README shows). An ordinary program (gcc -fopenmp), no weft in
 * it.
 *
 *   stencil [SWEEPS]
 *
 * Each of SWEEPS (6) sweeps is a team of 4: a schedule(static) loop
 * over 62 cells where cell i sleeps 40 * i us (the last thread's quarter
 * takes the longest; GCC ends the loop with GOMP_barrier), then a
 * schedule(dynamic, 4) loop of the same cost (chunks go to whoever is
 * free: less waiting). Prints the value of one cell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CELLS 64
#define THREADS 4
#define UNIT_US 40

int main(int argc, char **argv)
{
    static double a[CELLS], b[CELLS];
    int sweeps = argc > 1 ? atoi(argv[1]) : 6;

    for (int sweep = 0; sweep < sweeps; sweep++) {
#pragma omp parallel num_threads(THREADS)
        {
#pragma omp for schedule(static)
            for (int i = 1; i < CELLS - 1; i++) {
                usleep((useconds_t)(UNIT_US * i));
                b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0 + 1.0;
            }
#pragma omp for schedule(dynamic, 4)
            for (int i = 1; i < CELLS - 1; i++) {
                usleep((useconds_t)(UNIT_US * i));
                a[i] = b[i];
            }
        }
    }
    printf("a[%d] = %.3f\n", CELLS / 2, a[CELLS / 2]);
    return 0;
}
