/* client_internal.h - what api.c (the record path, generated from the
 * record table) shares with the rest of libweft: the per-thread state,
 * the slow path (pool.c), definitions (defs.c), the trace clock (timer.c)
 * and messages (log.c). The session itself is client_session.h.
 *
 * DESIGN
 * Each recording thread owns a weft__thread, reached through the
 * initial-exec thread-local pointer weft__tls, and writes records straight
 * into its current buffer between `p` and `end`. The common case is: load
 * weft__tls, check room and the `attention` flag (a relaxed atomic load),
 * check the timestamp, encode, advance `p`: no lock, no syscall, no
 * allocation. Everything else - no thread state yet, buffer full, a flush
 * requested by the sender, the session not open, closed or discarding - is
 * routed to weft__record_slow() by making that check fail: a thread without
 * a buffer has p == end, and other threads (sender, weft_close) raise
 * `attention` when they need the owner to look at the session state.
 */
#ifndef WEFT_CLIENT_INTERNAL_H
#define WEFT_CLIENT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "record.h"
#include "varint.h"
#include "weft.h"

#define WEFT__HIDDEN __attribute__((visibility("hidden")))
#define WEFT__LIKELY(x) __builtin_expect(!!(x), 1)
#define WEFT__UNLIKELY(x) __builtin_expect(!!(x), 0)

struct weft__buf;

/* Attributes per list: far more than any event needs, and small enough
 * that a list's encoding fits the smallest buffer. */
#define WEFT__MAX_ATTRIBUTES 64u

/* weft.h's attribute list; the caller's, one thread at a time. Values are
 * kept canonical (weft_typed_canon). */
struct weft_attribute_list {
    uint32_t n, cap;
    OTF2_AttributeRef *ids;
    OTF2_Type *types;
    OTF2_AttributeValue *values;
};

/* One more than the largest event record type of the record table: the
 * size of per-type drop counters. */
union weft__event_ids {
#define WEFT_EVENT(id, Name, fields) char Name[(id) + 1];
#include "weft_records.def"
};
#define WEFT__EVENT_TYPES sizeof(union weft__event_ids)

/* Per-thread recording state. Allocated on the thread's first use and kept
 * until the process ends (weftd's Goodbye needs its counts, and late
 * records from other TLS destructors must still find it).
 *
 * While the thread is in a *gap* (the pool is exhausted and records are
 * being discarded, or tracing is off) `p` and `end` point into `scratch`
 * instead of a pool buffer: records are encoded there as usual, and when
 * the slow path next runs they are decoded only to be counted per type as
 * dropped. So discarding costs no lock per record and the counts say
 * exactly which records are missing. */
/* Bytes of a cache line (x86-64 and most others). */
#define WEFT__CACHE_LINE 64

typedef struct weft__thread {
    /* Owner thread only (weft_close may take them over, see weft_close). */
    uint8_t *p;              /* write cursor in cur's or scratch's data */
    uint8_t *end;            /* end of that data; p == end without either */
    uint64_t prev_time;      /* time of the last event recorded, ns */
    uint32_t nevents;        /* records in cur (or in scratch in a gap) */
    struct weft__buf *cur;   /* the buffer being filled, or NULL */
    struct weft__buf *scratch; /* receives the records of a gap, or NULL */
    uint64_t gap_start;      /* time of the first record of the gap, ns */
    /* Under the session mutex (written by the owner, weft_close and the
     * sender; read by weft_dropped and the Goodbye). */
    int in_gap;              /* records are discarded: p/end in scratch */
    size_t want;             /* bytes of its next buffer to fill (pool.c) */
    uint64_t cur_ms;         /* when cur was handed to it */
    uint64_t seq;            /* last batch sequence number handed over */
    uint64_t recorded;       /* events in batches handed over, minus those
                              * given up unacknowledged */
    uint64_t dropped;        /* records discarded */
    uint64_t dropped_type[WEFT__EVENT_TYPES]; /* of those, by record type */
    /* Set by the sender (flush, buffers back) and by state changes; read
     * relaxed by the owner on every record, cleared by the owner in the
     * slow path. */
    atomic_int attention;
    /* Set at creation, read-only after. */
    uint32_t location;       /* location index: order of first use */
    /* Under the session mutex. */
    int exited;              /* the thread has ended (key destructor ran) */
    struct weft__thread *next; /* registry of all thread states */
    /* Its own cache lines (pool.c allocates it aligned): the owner writes
     * p, prev_time and nevents on every record and reads attention, and
     * a neighbour's state on the same line would make every record of
     * two threads miss in each other's cache. */
} __attribute__((aligned(WEFT__CACHE_LINE))) weft__thread;

/* The calling thread's state, NULL before its first use. */
extern __thread weft__thread *weft__tls
    __attribute__((tls_model("initial-exec"))) WEFT__HIDDEN;

/* Slow path of every event call, with the encoded size bound of the record
 * and its time. Returns 1 when weft__tls now has `bound` bytes free (the
 * caller encodes; in a gap the bytes are counted as dropped later), 0 when
 * the record was discarded and counted as dropped right away, WEFT_ETIME,
 * WEFT_ECLOSED (session not open or closed), WEFT_ETOOBIG (record larger
 * than a buffer) or WEFT_ENOMEM. */
WEFT__HIDDEN int weft__record_slow(size_t bound, uint64_t time);

/* Encodes a definition record into the process's pending definitions.
 * Returns 0 (also when tracing is off: nothing is kept), WEFT_ECLOSED,
 * WEFT_ETOOBIG or WEFT_ENOMEM. r and what it points to stay the caller's. */
WEFT__HIDDEN int weft__def_append(const weft_record *r);

/* Value type (OTF2_Type) of a metric made by weft_metric, or
 * OTF2_TYPE_NONE when unknown (self-defined or beyond the table). */
WEFT__HIDDEN OTF2_Type weft__metric_type(OTF2_MetricRef metric);

/* ---- the trace clock (timer.c) ---- */

typedef int (*weft__gettime_fn)(clockid_t, struct timespec *);

/* clock_gettime without a PLT call: the vDSO's, else libc's (resolved
 * when the library is loaded). */
extern weft__gettime_fn weft__gettime WEFT__HIDDEN;
/* 1: the trace clock is the TSC (timer.c); set by weft_open. */
extern int weft__clock_tsc WEFT__HIDDEN;
/* Added to every trace clock reading, in ticks: WEFT_TEST_CLOCK_SHIFT_NS,
 * for tests only (a host whose clock is off). */
extern uint64_t weft__clock_shift WEFT__HIDDEN;

/* 1: WEFT_DEBUG=1, weft__debug prints; set by weft_open. */
extern int weft__debug_on WEFT__HIDDEN;

/* Chooses the trace clock for c->clock (WEFT_CLOCK, a WEFT__CLOCK_*) and
 * sets the test shift (c->clock_shift_ns); a TSC the kernel trusts runs
 * at c->tsc_khz when that is not 0 (WEFT_TSC_KHZ), else it is measured,
 * from weft run's start (WEFT_TSC_FROM) when that is set; sets
 * c->resolution (ticks per second, for Hello) and c->clock_name ("tsc"
 * or "monotonic", static). Says which at debug level. Returns 0: a TSC
 * that cannot be had gives CLOCK_MONOTONIC (with a warning when tsc was
 * asked for). */
struct weft__config;
WEFT__HIDDEN int weft__clock_setup(struct weft__config *c);
/* CLOCK_MONOTONIC in ns, whatever the trace clock: timeouts and waits. */
WEFT__HIDDEN uint64_t weft__mono_ns(void);
/* One line "weft: ..." on stderr (log.c). */
/* Runs the weft__recorder_before_close functions (recorder.c). */
WEFT__HIDDEN void weft__recorder_closing(void);
/* Loads libmunge and nettle (client/lazylib.c), before the first MUNGE
 * credential or MAC; never with weft__S.mu held. 0, or -1 with why. */
WEFT__HIDDEN int weft__lazylib_load(char *why, size_t whylen);
WEFT__HIDDEN void weft__warn(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* One line "weft: debug: ..." on stderr when WEFT_DEBUG=1 (log.c). */
WEFT__HIDDEN void weft__debug(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* The trace clock in ticks (ns unless it is the TSC). Inline and without
 * PLT calls: the record path's clock. */
static inline uint64_t weft__now(void)
{
    struct timespec ts;

#if defined(__x86_64__)
    if (WEFT__UNLIKELY(weft__clock_tsc))
        return __builtin_ia32_rdtsc() + weft__clock_shift;
#endif
    weft__gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
           weft__clock_shift;
}

#endif
