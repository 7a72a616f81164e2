/* callcount.h - calls a recorder counts instead of recording each one
 * (issue #32; proto/counts.h says how the counts travel): the pthread
 * recorder's uncontended lock calls, the I/O recorder's stdio calls
 * served from a stream's buffer. Compiled into each recorder that
 * counts; the counts themselves are the recorder's, per thread.
 */
#ifndef WEFT_CALLCOUNT_H
#define WEFT_CALLCOUNT_H

#include <stdatomic.h>
#include <stdint.h>

#include <otf2/OTF2_GeneralDefinitions.h>

/* Counts of one call on one thread: calls and ticks spent in them. */
typedef struct callcount {
    uint64_t calls, ticks;
} callcount;

/* Adds a call of `ticks` to c. */
static inline void callcount_add(callcount *c, uint64_t ticks)
{
    c->calls++;
    c->ticks += ticks;
}

/* ticks at `resolution` per second in ns. */
static inline uint64_t callcount_ns(uint64_t ticks, uint64_t resolution)
{
    if (resolution == 1000000000u || resolution == 0)
        return ticks;
    return (uint64_t)((long double)ticks * 1e9L / (long double)resolution);
}

/* The metric class a recorder's counts travel in: two members (calls,
 * time) per counted call, named as the call's region. Laid out once by
 * callcount_prepare; defined by the first flush that has counts to
 * ship, so that a process that counts nothing (most of a build's
 * processes) sends weftd none of its definitions. */
typedef struct callcount_class {
    OTF2_MetricRef metric;      /* once state is CALLCOUNT_DEFINED */
    unsigned n;                 /* the recorder's calls */
    const uint8_t *counted;     /* [n]: 1 for a call it counts */
    uint8_t *slot;              /* [n]: a counted call's first member */
    uint8_t nmembers;           /* 2 per counted call */
    uint64_t resolution;        /* trace clock ticks per second */
    const char *(*name)(unsigned); /* a call's name */
    _Atomic int state;          /* CALLCOUNT_*: whether it is defined */
} callcount_class;

enum { CALLCOUNT_NONE, CALLCOUNT_DEFINING, CALLCOUNT_DEFINED,
       CALLCOUNT_FAILED };

/* Lays out c's class (c->n, counted and slot set by the caller) with
 * the calls' names from name(i), defined as it is first needed: 0, or
 * -1 when it counts more than 127 calls. */
int callcount_prepare(callcount_class *c, const char *(*name)(unsigned))
    __attribute__((visibility("hidden")));
/* Records at t one Metric event of c's class with counts[0 .. c->n)
 * (ticks as ns) and zeroes them, defining the class first if no flush
 * did; nothing when libweft refuses its definitions (the session is
 * closed). Guard raised, may record. */
void callcount_flush(callcount_class *c, uint64_t t, callcount *counts)
    __attribute__((visibility("hidden")));

#endif
