/* buffered.c - stdio calls served from the stream's buffer, counted
 * instead of recorded (issue #32; calls.def's IOB and IOVB entries).
 *
 * DESIGN
 * By default (WEFT_STDIO=syscalls) a wrapper of a call that a stream's
 * buffer may serve (fputc, fputs, fwrite, fprintf, fgetc, fgets, fread,
 * getline ...) raises the guard, takes the start time and the stream's
 * buffer pointers and calls the real function without recording its
 * Enter. When the call moved its bytes within the buffer (buffered.h)
 * it is counted per call and thread (calls, time) and its bytes are
 * added to what the thread owes the stream's handle; else - it read or
 * wrote the file, or failed - it is recorded as it happened, Enter at
 * its start: the guard kept anything else from being recorded on the
 * thread meanwhile. A compiler writing its assembly with putc and fputs
 * makes one recorded call per buffer (4 KiB) instead of one per string.
 * An fflush that found nothing to write (bash flushes its standard
 * output after every command) is counted the same way.
 *
 * The counts leave as one Metric event (recorders/callcount.h,
 * proto/counts.h) when the thread ends or the process exits or execs;
 * `weft profile` adds them to the calls' rows. The bytes leave as one
 * IoOperationBegin/Complete pair per handle and direction, of no
 * duration, at the handle's next recorded operation (the call that
 * flushes or refills its buffer, at that call's start), at its close,
 * or with the counts: the handle's bytes stay whole in the I/O summary
 * and on the timeline they appear where the stream's buffer met the
 * file. WEFT_STDIO=all records every call as before.
 */
#include <errno.h>
#include <stdlib.h>

#include "buffered.h"
#include "callcount.h"
#include "io.h"
#include "session.h"

/* Which calls are counted, from calls.def. */
static const uint8_t counted[IO__COUNT] = {
#define IOB(name, ret, role, hook, params, args, mode) [IO_##name] = 1,
#define IOVB(name, ret, role, hook, mode) [IO_##name] = 1,
#include "calls.def"
};

static uint8_t slot[IO__COUNT];
/* Set once by io_count_setup, read after. */
static struct {
    _Atomic int on;             /* calls are counted */
    callcount_class counts;     /* the counts' metric class */
} P = { .counts = { .metric = OTF2_UNDEFINED_METRIC, .n = IO__COUNT,
                    .counted = counted, .slot = slot } };

/* Bytes the calls counted on this thread moved through a stream's
 * buffer, not yet recorded on its handle (map entry `entry` of stream
 * descriptor fd). */
#define IO_OWED_MAX 8
typedef struct io_owed {
    uint64_t entry;
    int fd;
    uint64_t bytes[2];          /* read, written */
} io_owed;

#define IO_TLS __attribute__((tls_model("initial-exec")))
static __thread callcount tally[IO__COUNT] IO_TLS;
static __thread int tallied IO_TLS;      /* counts since the last flush */
static __thread int attached IO_TLS;     /* libweft knows the thread */
static __thread io_owed owed[IO_OWED_MAX] IO_TLS;
static __thread unsigned nowed IO_TLS;

/* Records at t what this thread owes owed[i]'s handle and forgets it.
 * A handle whose stream another thread closed meanwhile is owed
 * nothing. */
static void pay(unsigned i, uint64_t t)
{
    io_owed o = owed[i];

    owed[i] = owed[--nowed];
    if (io_fdmap_get(&io_streams, o.fd) != o.entry)
        return;
    for (int w = 0; w < 2; w++) {
        uint64_t match;
        if (!o.bytes[w])
            continue;
        match = io_match();
        weft_evt_IoOperationBegin(
            NULL, t, io_entry_handle(o.entry),
            w ? OTF2_IO_OPERATION_MODE_WRITE : OTF2_IO_OPERATION_MODE_READ,
            OTF2_IO_OPERATION_FLAG_NONE, o.bytes[w], match);
        weft_evt_IoOperationComplete(NULL, t, io_entry_handle(o.entry),
                                     o.bytes[w], match);
    }
}

/* See io.h. */
void io_owed_pay(uint64_t entry, uint64_t t)
{
    for (unsigned i = 0; i < nowed; i++)
        if (owed[i].entry == entry) {
            pay(i, t);
            return;
        }
}

/* Adds `bytes` moved through stream fp's buffer (w: written) to what
 * this thread owes its handle; with no room left, pays the oldest first
 * (at t). */
static void owe(FILE *fp, int w, uint64_t bytes, uint64_t t)
{
    int fd = fileno_unlocked(fp);
    uint64_t e = fd < 0 ? 0 : io_fdmap_get(&io_streams, fd);
    unsigned i;

    if (!e || !bytes)
        return;
    for (i = 0; i < nowed && owed[i].entry != e; i++)
        ;
    if (i == nowed) {
        if (nowed == IO_OWED_MAX)
            pay(0, t);
        i = nowed++;
        owed[i] = (io_owed){ .entry = e, .fd = fd };
    }
    owed[i].bytes[w] += bytes;
}

/* Records at t this thread's counts and everything it owes. Guard
 * raised. */
static void flush(uint64_t t)
{
    while (nowed)
        pay(nowed - 1, t);
    if (tallied) {
        callcount_flush(&P.counts, t, tally);
        tallied = 0;
    }
}

/* At exit, an exec or _exit (the calling thread) and as each thread
 * ends (libweft's thread exit): the thread's counts and bytes. */
static void at_end(void)
{
    weft__rguard g;

    if ((!tallied && !nowed) || io_session_on() != 1)
        return;
    if (weft__inside) { /* a thread's end: inside libweft already */
        flush(weft_time());
        return;
    }
    if (weft__recorder_begin(&g)) {
        flush(weft_time());
        weft__recorder_end(&g);
    }
}

/* See io.h. */
void io_count_setup(void)
{
    weft__countpolicy cp;

    weft__recorder_countpolicy(&cp);
    if (cp.stdio_all)
        return;
    P.counts.resolution = cp.resolution;
    if (callcount_prepare(&P.counts, io_call_name) < 0)
        return; /* no way to ship counts: record everything */
    atexit(at_end);
    weft__recorder_before_exec(at_end);
    weft__recorder_at_thread_exit(at_end);
    atomic_store_explicit(&P.on, 1, memory_order_release);
}

/* See io.h. */
int io_count_view(io_frame *f, FILE *fp, io_bufview *v)
{
    if (!fp || !atomic_load_explicit(&P.on, memory_order_relaxed)) {
        io_enter(f);
        return 0;
    }
    io_bufview_take(v, fp);
    return 1;
}

/* See io.h. */
int io_count_served(io_frame *f, FILE *fp, const io_bufview *v, int w,
                    int64_t bytes)
{
    io_bufview now;

    io_bufview_take(&now, fp);
    if (!io_buffer_served(v, &now, w, bytes))
        return 0;
    if (!attached)
        attached = weft__recorder_thread_attach();
    callcount_add(&tally[f->call], f->t > f->t0 ? f->t - f->t0 : 0);
    tallied = 1;
    if (w != IO_IS_WRITE_FLUSH)
        owe(fp, w, (uint64_t)bytes, f->t);
    weft__recorder_end(&f->g);
    errno = f->g.saved_errno;
    return 1;
}

/* See io.h. */
uint64_t io_count_missed(io_frame *f)
{
    uint64_t t = f->t;

    f->t = f->t0;
    io_enter(f);
    return t;
}
