/* pairs.h - what tests/weft-signaltest.c and weft-exittest.c record:
 * Enter/Leave pairs of one region, on the calling thread (pairs_record)
 * and on a worker thread that ends (pairs_worker, pairs_n of them). */
#ifndef WEFT_TEST_PAIRS_H
#define WEFT_TEST_PAIRS_H

#include "weft.h"

static OTF2_RegionRef pairs_region;
static long pairs_n;

static void pairs_record(long n)
{
    for (long i = 0; i < n; i++) {
        weft_enter(pairs_region);
        weft_leave(pairs_region);
    }
}

static void *pairs_worker(void *arg)
{
    (void)arg;
    pairs_record(pairs_n);
    return NULL;
}

#endif
