/* tally.h - the pure part of counting lock calls (count.c, issue #32):
 * what to do with a lock call once its try returned, the locks a thread
 * holds by a counted acquisition. No libweft, no globals: count.c keeps
 * one per thread (the counts are callcount.h's).
 */
#ifndef WEFT_PT_TALLY_H
#define WEFT_PT_TALLY_H

#include <errno.h>
#include <stdint.h>

/* Locks a thread may hold at once by counted acquisitions; beyond, an
 * acquisition is recorded (its release then is too). */
#define PT_TALLY_HELD_MAX 64

/* What becomes of a lock call once its try returned. */
enum pt_verdict {
    PT_COUNT,    /* got at once within the threshold: counted */
    PT_RECORD,   /* got, but slowly or with no room left: recorded as it
                    happened */
    PT_BUSY      /* not got: the lock was busy, the call is recorded */
};

/* A try that returned this holds the lock all the same (a robust mutex
 * whose owner died): never to be tried again. */
static inline int pt_tally_holds(int rc)
{
    return rc == 0 || rc == EOWNERDEAD;
}

/* The verdict on a try that returned rc after `ticks`, with `threshold`
 * ticks allowed and `room` (1: the thread can remember one more counted
 * lock). A robust mutex got from a dead owner is recorded (the program
 * is told). */
static inline enum pt_verdict pt_tally_verdict(int rc, uint64_t ticks,
                                               uint64_t threshold, int room)
{
    if (!pt_tally_holds(rc))
        return PT_BUSY;
    if (rc != 0)
        return PT_RECORD;
    return ticks <= threshold && room ? PT_COUNT : PT_RECORD;
}

/* The locks a thread holds by counted acquisitions, latest last. */
typedef struct pt_tally_held {
    const void *lock[PT_TALLY_HELD_MAX];
    uint32_t n;
} pt_tally_held;

/* Remembers lock: 1, or 0 when h is full. */
int pt_tally_hold(pt_tally_held *h, const void *lock);
/* Forgets the latest counted acquisition of lock: 1, or 0 if h has none
 * (its acquisition was recorded, or made before recording began). */
int pt_tally_release(pt_tally_held *h, const void *lock);

#endif
