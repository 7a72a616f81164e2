/* weft-clocktest.c - a traced program for the clock tests: records a
 * "mark" region, N Enter/Leave pairs of "work", sleeps, another "mark"
 * and N more pairs, and prints CLOCK_MONOTONIC (ns, read with
 * clock_gettime, not libweft's clock) just before each mark, so a test
 * can check where the archive puts the marks on weftd's clock.
 *
 *   weft-clocktest N SLEEP_MS
 *
 * Prints "mark NS" twice, then "events E". Exit 0, 1 on a libweft error,
 * 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "weft.h"

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int mark(OTF2_RegionRef r)
{
    printf("mark %llu\n", (unsigned long long)mono_ns());
    return weft_enter(r) | weft_leave(r);
}

static int work(OTF2_RegionRef r, long n)
{
    int rc = 0;

    for (long i = 0; i < n; i++)
        rc |= weft_enter(r) | weft_leave(r);
    return rc;
}

int main(int argc, char **argv)
{
    OTF2_RegionRef m, w;
    struct timespec nap;
    long n, ms;
    int rc;

    if (argc != 3 || (n = atol(argv[1])) < 0 || (ms = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: weft-clocktest N SLEEP_MS\n");
        return 2;
    }
    if (weft_open() < 0)
        return 1;
    m = weft_region("mark");
    w = weft_region("work");
    rc = mark(m) | work(w, n);
    nap.tv_sec = ms / 1000;
    nap.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&nap, NULL);
    rc |= mark(m) | work(w, n);
    printf("events %ld\n", 4 * n + 4);
    fflush(stdout);
    if (weft_close() < 0 || rc)
        return 1;
    return 0;
}
