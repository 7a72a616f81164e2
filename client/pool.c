/* pool.c - libweft's threads, buffers, the buffer pool and gaps: the
 * record path's slow side (weft__record_slow) and the accounting of what
 * is dropped.
 *
 * DESIGN
 * Buffers cycle: pool -> thread (filling) -> send queue -> in flight
 * (written to the socket, waiting for weftd's Ack) -> pool. The pool
 * allocates lazily up to WEFT_POOL_SIZE units of 64 KiB (a buffer that a
 * busy thread fills further takes several, see "how far buffers are
 * filled" below), and never fewer buffers than the live threads + 1:
 * each live thread holds at most one buffer, so a thread
 * waiting for one always has another coming back from weftd and cannot
 * wait forever behind threads that hold theirs while blocked in the app.
 * When the pool is exhausted the thread waits (lossless), unless
 * WEFT_OVERFLOW=discard, or weftd has made no progress (no Ack, no
 * HelloAck) for WEFT_STALL_MS: then the thread enters a *gap* and its
 * records are discarded and counted per location and type (see
 * client_internal.h) until a buffer is free again. The first buffer after
 * a gap opens with MeasurementOnOff OFF and ON, so readers see where
 * records are missing.
 *
 * Thread states live as long as the process: weftd's Goodbye needs their
 * counts, and late records from other TLS destructors must find theirs.
 */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "codec.h"
#include "fifo.h"
#include "record.h"
#include "recorder.h"
#include "client_session.h"
#include "weft.h"
#include "weft_errors.h"

#define warn weft__warn

__thread weft__thread *weft__tls __attribute__((tls_model("initial-exec")));

static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static int thread_key_ok;
/* p and end of a thread without a buffer point here (p == end). */
static uint8_t no_buffer[1];

void weft__raise_attention_locked(void)
{
    for (weft__thread *t = weft__S.threads; t; t = t->next)
        atomic_store(&t->attention, 1);
}

/* Threads in a gap look for a buffer on their next record. mu held. */
static void raise_gap_attention_locked(void)
{
    for (weft__thread *t = weft__S.threads; t; t = t->next)
        if (t->in_gap)
            atomic_store(&t->attention, 1);
}

/* Adds 1 to the wake-up eventfd's count (add) or reads it, counted in
 * wake_users (fdclaim.c). EAGAIN is no failure: the count was already
 * non-zero, or drained already. */
static void wake_fd_io(int add)
{
    uint64_t v = 1;
    int fd;

    atomic_fetch_add(&weft__S.wake_users, 1);
    fd = weft__S.wake_fd;
    if (fd >= 0 &&
        (add ? write(fd, &v, sizeof v) : read(fd, &v, sizeof v)) < 0) {
        /* EAGAIN */
    }
    atomic_fetch_sub(&weft__S.wake_users, 1);
}

void weft__wake_sender(void)
{
    wake_fd_io(1);
}

void weft__wake_fd_drain(void)
{
    wake_fd_io(0);
}

/* The state of location `location`, NULL if no thread has it. mu held. */
weft__thread *weft__thread_of_locked(uint32_t location)
{
    for (weft__thread *t = weft__S.threads; t; t = t->next)
        if (t->location == location)
            return t;
    return NULL;
}

/* See client_session.h. */
weft__buf *weft__buf_new(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t need = sizeof(weft__buf) + size;
    size_t room = (need + page - 1) / page * page;
    uint8_t *map = mmap(NULL, room + page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    weft__buf *b;

    if (map == MAP_FAILED)
        return NULL;
    if (mprotect(map + room, page, PROT_NONE) != 0) {
        munmap(map, room + page);
        return NULL;
    }
    b = (weft__buf *)(map + ((room - need) & ~(size_t)15));
    b->map = map;
    b->mapped = room + page;
    return b;
}

/* See client_session.h. */
void weft__buf_delete(weft__buf *b)
{
    if (b)
        munmap(b->map, b->mapped);
}

/* Returns b to the pool: one waiting thread and the threads in a gap are
 * told. mu held. */
void weft__buf_free_locked(weft__buf *b)
{
    b->next = weft__S.free_list;
    weft__S.free_list = b;
    pthread_cond_signal(&weft__S.pool_cv);
    if (weft__S.gaps)
        raise_gap_attention_locked();
}

/* weftd made progress: pool waits start over, gaps may end. mu held. */
void weft__progress_locked(void)
{
    weft__S.progress_ms = weft__now_ms();
    if (weft__S.stalled) {
        weft__S.stalled = 0;
        pthread_cond_broadcast(&weft__S.pool_cv);
        raise_gap_attention_locked();
    }
}

/* Counts the `n` event records encoded in data[0..len) (times relative to
 * base_time) as dropped on t, by type. mu held. */
void weft__count_dropped_locked(weft__thread *t, const uint8_t *data,
                                 size_t len, uint64_t base_time, uint32_t n)
{
    weft_decoder dec;
    weft_record r;

    weft_decoder_init(&dec, data, len, 1, base_time);
    while (weft_decoder_next(&dec, &r) == 1)
        if (r.type < WEFT__EVENT_TYPES)
            t->dropped_type[r.type]++;
    weft_decoder_free(&dec);
    t->dropped += n;
}

/* Counts what t wrote into its scratch buffer as dropped and rewinds it;
 * the gap goes on. mu held. */
static void gap_drain_locked(weft__thread *t)
{
    weft__buf *s = t->scratch;

    if (!t->in_gap)
        return;
    if (s && t->nevents > 0)
        weft__count_dropped_locked(t, s->data, (size_t)(t->p - s->data),
                             s->base_time, t->nevents);
    t->nevents = 0;
    if (s) {
        s->base_time = t->prev_time;
        t->p = s->data;
        t->end = s->data + WEFT__SCRATCH_SIZE;
    }
}

/* Ends t's gap after counting its last records. mu held. */
void weft__gap_end_locked(weft__thread *t)
{
    if (!t->in_gap)
        return;
    gap_drain_locked(t);
    t->in_gap = 0;
    weft__S.gaps--;
    t->p = t->end = no_buffer;
}

/* Starts (or continues) a gap in which t's records are discarded; the
 * record of `bound` bytes at `time` is its first. Returns 1 when the
 * caller encodes into the scratch buffer (counted later), 0 when the
 * record was counted as dropped now (no scratch: out of memory, or a
 * record larger than it). mu held. */
static int gap_enter_locked(weft__thread *t, size_t bound, uint64_t time)
{
    assert(!t->cur);
    if (!t->in_gap) {
        t->in_gap = 1;
        t->gap_start = time;
        weft__S.gaps++;
        /* The first buffer after the gap begins with MeasurementOnOff
         * OFF at gap_start and ON at the last discarded record's time
         * (buf_acquire_locked), so readers see where records are missing.
         * A gap still open when the thread or session ends has no marks:
         * nothing follows it. */
    }
    if (!t->scratch) {
        t->scratch = weft__buf_new(WEFT__SCRATCH_SIZE);
        if (t->scratch)
            t->scratch->base_time = t->prev_time;
    }
    if (!t->scratch || bound > WEFT__SCRATCH_SIZE) {
        t->p = t->end = no_buffer;
        t->nevents = 0;
        t->dropped++;
        t->prev_time = time;
        return 0;
    }
    if (t->end != t->scratch->data + WEFT__SCRATCH_SIZE) {
        /* Not writing into the scratch buffer yet. */
        t->scratch->base_time = t->prev_time;
        t->p = t->scratch->data;
        t->nevents = 0;
    }
    t->end = t->scratch->data + WEFT__SCRATCH_SIZE;
    return 1;
}

/* Hands t's buffer on: to the send queue if it holds events and the
 * session is active, else back to the pool (its events then count as
 * dropped). In a gap, counts the scratch records instead. Sets *wake when
 * the sender should look at the queue. mu held. */
void weft__buf_release_locked(weft__thread *t, int *wake)
{
    weft__buf *b = t->cur;

    if (!b) {
        gap_drain_locked(t);
        return;
    }
    if (t->nevents > 0 && atomic_load(&weft__S.state) == WEFT__ST_ACTIVE) {
        b->len = (size_t)(t->p - b->data);
        b->events = t->nevents;
        b->seq = ++t->seq;
        b->location = t->location;
        t->recorded += t->nevents;
        /* Nothing was owed by weftd until now: the stall clock starts. */
        if (atomic_load(&weft__S.connected) && !weft__S.q_head &&
            !weft__S.f_head)
            weft__S.progress_ms = weft__now_ms();
        WEFT_FIFO_PUSH(weft__S.q_head, weft__S.q_tail, b);
        *wake = 1;
    } else {
        if (t->nevents > 0)
            weft__count_dropped_locked(t, b->data, (size_t)(t->p - b->data),
                                 b->base_time, t->nevents);
        weft__buf_free_locked(b);
    }
    t->cur = NULL;
    t->p = t->end = no_buffer;
    t->nevents = 0;
}

/* ---- how far buffers are filled ----------------------------------------
 * Every buffer maps cfg.buffer_size bytes (WEFT_BUFFER_SIZE, 4092 KiB by
 * default), but a thread fills only the first `fill` of it: a unit (64
 * KiB) at first, twice as much each time it filled one within
 * WEFT__GROW_MS, up to the buffer or the largest batch weftd takes (its
 * HelloAck's max_frame). Threads that record a lot ship a few large
 * batches (each batch wakes the sender and weftd: on a machine whose
 * cores the program keeps busy, that costs it more than the bytes), the
 * others small ones, and untouched pages cost no memory. The pool's
 * budget is WEFT_POOL_SIZE units (16 MiB by default) of fill; a buffer
 * keeps its fill (its pages stay touched) when it comes back. */

/* The pool's unit: WEFT__FILL_UNIT, or the whole buffer if smaller. */
static size_t fill_unit(void)
{
    return weft__S.cfg.buffer_size < WEFT__FILL_UNIT ? weft__S.cfg.buffer_size
                                                     : WEFT__FILL_UNIT;
}

static size_t units_of(size_t bytes)
{
    return (bytes + fill_unit() - 1) / fill_unit();
}

/* How far t wants its next buffer filled. */
static size_t want_of(const weft__thread *t)
{
    return t->want ? t->want : fill_unit();
}

/* The most a thread may fill: the buffer, within weftd's largest batch;
 * a unit until weftd said (a HelloAck). mu held. */
static size_t fill_limit_locked(void)
{
    size_t cap = weft__S.cfg.buffer_size;

    if (!weft__S.batch_cap)
        return fill_unit();
    if (weft__S.batch_cap < cap)
        cap = weft__S.batch_cap;
    return cap < fill_unit() ? fill_unit() : cap;
}

/* Lets t fill b as far as it wants, within the pool's budget, and at
 * least `bound` bytes (one record) and a unit whatever the budget (the
 * pool's floor, see buf_acquire_locked). A fill never shrinks. mu held. */
static void fill_locked(weft__buf *b, const weft__thread *t, size_t bound)
{
    size_t have = units_of(b->fill), need = units_of(want_of(t));
    size_t must = bound > fill_unit() ? units_of(bound) : 1;
    size_t budget = weft__S.cfg.pool_size;

    if (need > have) {
        size_t room = budget > weft__S.units ? budget - weft__S.units : 0;
        if (need - have > room)
            need = have + room;
    }
    if (need < must)
        need = must;
    if (need > have) {
        size_t bytes = need * fill_unit(), most = fill_limit_locked();
        if (most < bound)
            most = bound;
        weft__S.units += need - have;
        b->fill = bytes < most ? bytes : most;
    }
}

/* Where t's writing in b ends: its fill, within weftd's largest batch
 * (which a reconnection may have lowered) but for a record of `bound`
 * bytes. mu held. */
static uint8_t *fill_end_locked(const weft__buf *b, size_t bound)
{
    size_t room = b->fill, most = fill_limit_locked();

    if (room > most)
        room = most > bound ? most : bound;
    return (uint8_t *)b->data + room;
}

/* t filled its buffer: if that took less than WEFT__GROW_MS, its next
 * one is filled twice as far. mu held. */
static void note_full_locked(weft__thread *t)
{
    size_t limit = fill_limit_locked(), want = want_of(t);

    if (weft__now_ms() - t->cur_ms < weft__S.cfg.grow_ms)
        want *= 2;
    t->want = want < limit ? want : limit;
}

/* Waits on pool_cv until `deadline_ms` (trace clock). mu held. */
static void pool_wait_until(uint64_t deadline_ms)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(deadline_ms / 1000u);
    ts.tv_nsec = (long)(deadline_ms % 1000u) * 1000000L;
    pthread_cond_timedwait(&weft__S.pool_cv, &weft__S.mu, &ts);
}

/* pool_cv waits on the trace clock (CLOCK_MONOTONIC). */
void weft__pool_cv_init(void)
{
    pthread_condattr_t a;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&weft__S.pool_cv, &a);
    pthread_condattr_destroy(&a);
}

#define WEFT__GAP 2

/* Appends MeasurementOnOff `mode` at `time` (the previous event at `prev`)
 * to t's fresh buffer, encoded as the record table says. */
static void put_gap_mark(weft__thread *t, uint64_t prev, uint64_t time,
                         OTF2_MeasurementMode mode)
{
    weft_record r = { .type = WEFT_REC_MeasurementOnOff, .time = time,
                      .u.MeasurementOnOff.measurementMode = mode };
    ssize_t n = weft_encode(&r, &prev, t->p, (size_t)(t->end - t->p));

    assert(n > 0 && "a fresh buffer holds two small records");
    if (n > 0)
        t->p += n;
}

/* Gives t a buffer with room for a record of `bound` bytes. While the
 * pool is exhausted (its units spent, and at least the live threads + 1
 * buffers) it waits, unless WEFT_OVERFLOW=discard or weftd has made no
 * progress for WEFT_STALL_MS (then it gives up: stalled). Returns 1 (t
 * has a buffer), WEFT__GAP (no buffer: discard), 0 if the session left
 * ACTIVE meanwhile, or WEFT_ENOMEM. *warn_ms is set to how long weftd has
 * been unreachable when the caller should warn that discarding begins.
 * mu held. */
static int buf_acquire_locked(weft__thread *t, size_t bound,
                              uint64_t *warn_ms)
{
    weft__buf *b;
    int in_gap;

    assert(!t->cur);
    for (;;) {
        uint64_t now, deadline;
        if (atomic_load(&weft__S.state) != WEFT__ST_ACTIVE)
            return 0;
        if (weft__S.free_list) {
            b = weft__S.free_list;
            weft__S.free_list = b->next;
            break;
        }
        if (weft__S.units < weft__S.cfg.pool_size ||
            weft__S.nbufs < (size_t)weft__S.live + 1) {
            b = weft__buf_new(weft__S.cfg.buffer_size);
            if (!b)
                return WEFT_ENOMEM;
            b->fill = 0;
            weft__S.nbufs++;
            break;
        }
        if (weft__S.cfg.overflow_discard || weft__S.stalled)
            return WEFT__GAP;
        now = weft__now_ms();
        deadline = weft__S.progress_ms + weft__S.cfg.stall_ms;
        if (now >= deadline) {
            weft__S.stalled = 1;
            pthread_cond_broadcast(&weft__S.pool_cv);
            if (!weft__S.stall_warned) {
                weft__S.stall_warned = 1;
                *warn_ms = now - weft__S.progress_ms + 1;
            }
            return WEFT__GAP;
        }
        pool_wait_until(deadline);
    }
    b->next = NULL;
    b->base_time = t->prev_time;
    fill_locked(b, t, bound);
    in_gap = t->in_gap;
    weft__gap_end_locked(t); /* counts the gap's last records first */
    t->cur = b;
    t->cur_ms = weft__now_ms();
    t->p = b->data;
    t->end = fill_end_locked(b, bound);
    t->nevents = 0;
    if (in_gap) {
        /* Discarded records advanced prev_time past gap_start, which is
         * not below any record shipped before the gap. */
        b->base_time = t->gap_start;
        put_gap_mark(t, b->base_time, t->gap_start, OTF2_MEASUREMENT_OFF);
        put_gap_mark(t, t->gap_start, t->prev_time, OTF2_MEASUREMENT_ON);
        t->nevents = 2;
    }
    return 1;
}

/* Thread exit (pthread key destructor): ship what the thread recorded.
 * The state stays registered for the Goodbye, and weft__tls keeps
 * pointing at it so records from later destructors are refused. */
static void thread_exit(void *arg)
{
    weft__thread *t = arg;
    int wake = 0;

    weft__inside++;
    weft__recorder_thread_ending();
    pthread_mutex_lock(&weft__S.mu);
    weft__buf_release_locked(t, &wake);
    weft__gap_end_locked(t);
    if (!t->exited) {
        t->exited = 1;
        weft__S.live--;
    }
    weft__buf_delete(t->scratch);
    t->scratch = NULL;
    atomic_store(&t->attention, 1);
    pthread_mutex_unlock(&weft__S.mu);
    if (wake)
        weft__wake_sender();
    weft__inside--;
}

static void make_thread_key(void)
{
    thread_key_ok = pthread_key_create(&thread_key, thread_exit) == 0;
}

void weft__thread_key_init(void)
{
    pthread_once(&thread_key_once, make_thread_key);
}

/* See client_session.h. */
weft__thread *weft__thread_self(void)
{
    weft__thread *t = weft__tls;

    if (t)
        return t;
    pthread_once(&thread_key_once, make_thread_key);
    t = aligned_alloc(WEFT__CACHE_LINE, sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->p = t->end = no_buffer;
    atomic_init(&t->attention, 0);
    pthread_mutex_lock(&weft__S.mu);
    t->location = weft__S.nthreads++;
    t->next = weft__S.threads;
    weft__S.threads = t;
    weft__S.live++;
    pthread_mutex_unlock(&weft__S.mu);
    if (thread_key_ok)
        pthread_setspecific(thread_key, t);
    weft__tls = t;
    return t;
}

static void warn_stall(uint64_t unreachable_ms)
{
    warn("weftd at %s has been unreachable (nothing acknowledged) for %"
         PRIu64 " ms (WEFT_STALL_MS=%u) and the buffer pool is exhausted: "
         "discarding records until it is back (they are counted and "
         "reported)",
         weft__S.cfg.server, unreachable_ms, weft__S.cfg.stall_ms);
}

/* weft__record_slow's work, inside libweft (recorder.h). */
static int record_slow(size_t bound, uint64_t time)
{
    weft__thread *t = weft__thread_self();
    uint64_t warn_ms = 0;
    int wake, rc, gap;

    if (!t)
        return WEFT_ENOMEM;
retry:
    if (time < t->prev_time)
        return WEFT_ETIME;
    atomic_store(&t->attention, 0);
    switch (atomic_load(&weft__S.state)) {
    case WEFT__ST_ACTIVE:
        break;
    case WEFT__ST_DISCARD:
    case WEFT__ST_FORKED:
        /* Tracing is off: one long gap. */
        pthread_mutex_lock(&weft__S.mu);
        if (t->cur) {
            wake = 0;
            weft__buf_release_locked(t, &wake);
        }
        gap_drain_locked(t);
        rc = gap_enter_locked(t, bound, time);
        pthread_mutex_unlock(&weft__S.mu);
        return rc;
    default:
        atomic_store(&t->attention, 1);
        return WEFT_ECLOSED;
    }
    if (t->exited) {
        atomic_store(&t->attention, 1);
        pthread_mutex_lock(&weft__S.mu);
        t->dropped++;
        pthread_mutex_unlock(&weft__S.mu);
        return WEFT_ECLOSED;
    }
    if (bound > weft__S.cfg.buffer_size)
        return WEFT_ETOOBIG;
    /* A buffer with room and nothing in it: only a flush request. */
    if (t->cur && t->nevents == 0)
        return 1;
    wake = 0;
    gap = 0;
    pthread_mutex_lock(&weft__S.mu);
    /* full, a flush was requested, or the end of a scratch buffer */
    if (t->cur && (size_t)(t->end - t->p) < bound)
        note_full_locked(t);
    weft__buf_release_locked(t, &wake);
    rc = buf_acquire_locked(t, bound, &warn_ms);
    if (rc == WEFT__GAP) {
        rc = gap_enter_locked(t, bound, time);
        gap = 1;
    }
    pthread_mutex_unlock(&weft__S.mu);
    if (wake)
        weft__wake_sender();
    if (warn_ms)
        warn_stall(warn_ms - 1);
    if (rc == 0 && !gap)
        goto retry; /* the session changed state while we waited */
    return rc;
}

/* See client_internal.h: 1 (room made in the caller's buffer or, in a
 * gap, in its scratch buffer), 0 (record dropped and counted), or a
 * WEFT_E* code. May wait for a free buffer. */
int weft__record_slow(size_t bound, uint64_t time)
{
    int rc;

    weft__inside++;
    rc = record_slow(bound, time);
    weft__inside--;
    return rc;
}

/* 1 if `type` is an event record type of the record table. */
static int is_event_type(uint32_t type)
{
    switch (type) {
#define WEFT_EVENT(id, Name, fields) case id:
#include "weft_records.def"
        return 1;
    default:
        return 0;
    }
}

/* See weft.h: 0 with *count, or WEFT_EINVAL. */
WEFT_API int weft_dropped(uint32_t location, uint32_t type, uint64_t *count)
{
    weft__thread *t;
    int rc = WEFT_EINVAL;

    if (!count || (type != WEFT_TYPE_ANY && !is_event_type(type)))
        return WEFT_EINVAL;
    pthread_mutex_lock(&weft__S.mu);
    t = weft__thread_of_locked(location);
    if (t) {
        *count = type == WEFT_TYPE_ANY ? t->dropped : t->dropped_type[type];
        rc = 0;
    }
    pthread_mutex_unlock(&weft__S.mu);
    return rc;
}

/* The caller's location index, assigning the next one on first use;
 * UINT32_MAX when out of memory. */
WEFT_API uint32_t weft_location_index(void)
{
    weft__thread *t = weft__thread_self();

    return t ? t->location : UINT32_MAX;
}

/* See client_session.h. mu held. */
void weft__bufs_free_locked(void)
{
    weft__buf *lists[3] = { weft__S.free_list, weft__S.q_head, weft__S.f_head };

    for (int i = 0; i < 3; i++) {
        while (lists[i]) {
            weft__buf *b = lists[i];
            lists[i] = b->next;
            weft__buf_delete(b);
        }
    }
    weft__S.free_list = weft__S.q_head = weft__S.q_tail = NULL;
    weft__S.f_head = weft__S.f_tail = NULL;
    weft__S.nbufs = weft__S.units = 0;
}
