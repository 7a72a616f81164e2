/* count.c - lock calls counted instead of recorded (issue #32; see
 * calls.def's `first` and pt.h).
 *
 * DESIGN
 * By default (WEFT_LOCKS=contended) a lock call first runs the lock's try
 * function with the guard raised: a try never waits nor runs the
 * program's code, so nothing can be recorded on this thread meanwhile
 * and what is recorded after it may carry its start time. A lock got at
 * once within WEFT_LOCK_THRESHOLD_NS is counted per call and thread
 * (calls and time in them) and remembered in the thread's held stack
 * (tally.h), so that its unlock is counted too; a lock got slowly (or
 * with the stack full, or a robust mutex from a dead owner) is recorded
 * as it happened, Enter at the try's start; a busy lock is recorded as
 * before, the wait included. Every recorded acquisition is released
 * recorded, every counted one counted: the archive's acquire and release
 * events still pair. A pthread_once of a control that is done already
 * (its routine ran: the call returns at once) is counted too, within
 * WEFT_LOCK_THRESHOLD_NS, and not passed on to glibc, whose answer (0)
 * it would be.
 *
 * The counts leave as one Metric event of the class defined at open
 * (two members per counted call, named as its region, proto/counts.h)
 * when the thread ends (thread.c) or the process exits, with what the
 * thread counted since its previous one; `weft profile` adds them to the
 * calls' rows. WEFT_LOCKS=all records every call as before.
 */
#include "callcount.h"
#include "pt.h"
#include "tally.h"

/* Which calls are counted, from calls.def's kinds. */
static const uint8_t counted[PT__COUNT] = {
#define PT(name, role, kind, params, args, lock, first)                      \
    [PT_##name] = PT_COUNTS_##kind,
#include "calls.def"
};

/* Set once by pt_count_setup, read after. */
static uint8_t slot[PT__COUNT];
static struct {
    _Atomic int ready;           /* policy read, metrics defined */
    int all;                     /* WEFT_LOCKS=all */
    uint64_t threshold;          /* ticks */
    callcount_class counts;      /* the counts' metric class */
} P = { .counts = { .metric = OTF2_UNDEFINED_METRIC, .n = PT__COUNT,
                    .counted = counted, .slot = slot } };

static __thread pt_tally_held held PT_TLS;
static __thread callcount tally[PT__COUNT] PT_TLS;
static __thread int tallied PT_TLS;

/* See pt.h. */
void pt_count_setup(void)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    weft__countpolicy lp;

    if (atomic_flag_test_and_set(&once))
        return;
    weft__recorder_countpolicy(&lp);
    P.all = lp.all;
    P.threshold = lp.threshold;
    P.counts.resolution = lp.resolution;
    if (!P.all && callcount_prepare(&P.counts, pt_call_name) < 0)
        P.all = 1; /* no way to ship counts: record everything */
    atomic_store_explicit(&P.ready, 1, memory_order_release);
}

/* See pt.h. */
int pt_count_begin(pt_call *c, unsigned call, const void *caller,
                   const void *lock, int release)
{
    int r = pt_recording();

    if (r == 0 || weft__recorder_foreign(caller))
        return 0;
    pt_guard(c);
    if ((r < 0 && !pt_ready_slow()) || pt_excluded(call) ||
        !atomic_load_explicit(&P.ready, memory_order_acquire) || P.all ||
        (release == 1 && !pt_tally_release(&held, lock)))
        goto no;
    return 1;
no:
    pt_unguard(c);
    return 0;
}

/* See pt.h. */
int pt_count_end(pt_call *c, unsigned call, const void *lock, int rc,
                 uint64_t t0, int release)
{
    uint64_t t1 = weft_time(), d = t1 > t0 ? t1 - t0 : 0;
    int once = release == PT_RELEASES_ONCE; /* holds nothing */
    OTF2_RegionRef region;

    if (release && !once) {
        callcount_add(&tally[call], d);
        tallied = 1;
        goto done;
    }
    /* A lock got at once, or a once done already (rc 0): counted within
     * the threshold, else recorded as it took. */
    switch (pt_tally_verdict(rc, d, P.threshold,
                             once || held.n < PT_TALLY_HELD_MAX)) {
    case PT_COUNT:
        if (!once)
            pt_tally_hold(&held, lock);
        callcount_add(&tally[call], d);
        tallied = 1;
        break;
    case PT_RECORD:
        region = pt_region(call);
        if (region == OTF2_UNDEFINED_REGION)
            break;
        weft_evt_Enter(NULL, t0, region);
        if (!once)
            pt_lock_acquired(lock, t1);
        weft_evt_Leave(NULL, t1, region);
        break;
    case PT_BUSY:
        pt_unguard(c);
        return 0;
    }
done:
    pt_unguard(c);
    return 1;
}

/* See pt.h. */
int pt_count_drop(const void *lock)
{
    return pt_tally_release(&held, lock);
}

/* See pt.h. */
void pt_count_flush(uint64_t t)
{
    if (!tallied)
        return;
    callcount_flush(&P.counts, t, tally);
    tallied = 0;
}
