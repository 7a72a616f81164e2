/* sender.c - libweft's sender thread: the only thread that reads and
 * writes the socket once weft_open has returned. It ships definitions and
 * event batches in order, takes weftd's Acks, reconnects with backoff,
 * measures the closing clock offset, says Goodbye, and gives up when
 * weft_close's time is up. The frames it writes are packed in
 * outframe.c.
 *
 * DESIGN
 * A state machine with one function per state (weft__sender_state in
 * client_session.h):
 *
 *   OPENING --HelloAck, starting clock offset--> STREAMING
 *   OPENING --refused--> DONE (tracing off)
 *   OPENING --broken, or no HelloAck in time--> DISCONNECTED (the
 *             starting clock offset is then taken on the next connection)
 *   (start) --weft_open's connection broke before its Hello--> DISCONNECTED
 *   DISCONNECTED --attempt due--> CONNECTING --HelloAck, resumed--> STREAMING
 *        ^                            |  refused for good: DONE (discard)
 *        +-------- failed, backoff ---+
 *   STREAMING --broken, or a transient Error--> DISCONNECTED
 *   STREAMING --Goodbye written--> CLOSING
 *   CLOSING --weftd hung up, the connection lost (not reopened), or
 *             the EOF time up--> DONE;  a transient Error--> DISCONNECTED
 *   STREAMING, CLOSING --refused for good--> DONE (tracing off)
 *
 * weft_open connects and writes the Hello, but (unless WEFT_REQUIRED=1)
 * does not wait for the HelloAck: the sender reads it (OPENING) while the
 * program runs and records, so that starting a traced process does not
 * wait for weftd's disk; weftd knows the process from its Hello on, also
 * if it is killed at once. A process weftd refuses is told once. A
 * connection that breaks before the HelloAck (weftd restarted as the job
 * started) is made again like any other: weftd may or may not have taken
 * the Hello, and the next HelloAck says what it holds.
 *
 * Every round first does what does not depend on the state (round_begin):
 * a fatal signal's close, the periodic flush request, and, while closing,
 * giving up at the close deadline or once weftd has been unreachable for
 * WEFT_STALL_MS (DONE; what weftd has not acknowledged counts as dropped).
 *
 * The sender takes frames in this order under the mutex: pending
 * definitions first, then the oldest event batch. Every flush period it
 * raises each thread's `attention` flag so partly filled buffers are
 * handed over on the thread's next record.
 *
 * Reconnection uses jittered exponential backoff (WEFT__BACKOFF_*), which
 * starts over only after a connection that lasted WEFT__BACKOFF_MAX_MS. A
 * connection that breaks after the whole Goodbye was written is not
 * opened again: everything was acknowledged before the Goodbye, and a new
 * Hello would open a new, empty trace of the same name if weftd had taken
 * the Goodbye and converted the trace meanwhile.
 *
 * Fatal signals: the handler (session.c) only publishes its thread and
 * wakes the sender; signal_close here closes the session as weft_close
 * would, taking over only that thread's buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "client_internal.h"
#include "fifo.h"
#include "frame.h"
#include "recorder.h"
#include "client_session.h"
#include "weft_errors.h"

#define warn weft__warn

/* Reconnection backoff: doubles from MIN to MAX, jittered. */
#define WEFT__BACKOFF_MIN_MS 50u
#define WEFT__BACKOFF_MAX_MS 2000u
/* After Goodbye: how long weftd may take to journal it and hang up. */
#define WEFT__EOF_TIMEOUT_MS 5000u


void (*weft__sender_hook)(weft__sender_state from, weft__sender_state to);

/* Gives up every batch not acknowledged yet: its events count as dropped
 * on its thread, its buffer goes back to the pool; unacknowledged
 * definitions are freed. Returns the events given up, *nbatches the
 * batches. mu held. */
static uint64_t abandon_locked(size_t *nbatches)
{
    weft__buf *lists[2] = { weft__S.f_head, weft__S.q_head };
    uint64_t lost = 0;
    size_t n = 0;

    weft__S.f_head = weft__S.f_tail = weft__S.q_head = weft__S.q_tail = NULL;
    for (int i = 0; i < 2; i++) {
        while (lists[i]) {
            weft__buf *b = lists[i];
            weft__thread *t = weft__thread_of_locked(b->location);
            lists[i] = b->next;
            if (t) {
                t->recorded -= b->events;
                weft__count_dropped_locked(t, b->data, b->len, b->base_time,
                                     b->events);
            }
            lost += b->events;
            n++;
            weft__buf_free_locked(b);
        }
    }
    weft__chunks_free(&weft__S.d_head);
    weft__chunks_free(&weft__S.df_head);
    weft__S.d_tail = weft__S.df_tail = NULL;
    *nbatches = n;
    return lost;
}

/* Tracing stops for the rest of the process (weftd refused us for good):
 * unacknowledged batches are counted as dropped, pending definitions are
 * freed, recording threads are told. `what` says what happened. */
static void go_discard(const char *what)
{
    uint64_t lost;
    size_t n;
    int was_closing, was_opening;

    pthread_mutex_lock(&weft__S.mu);
    was_closing = weft__S.closing;
    was_opening = atomic_load(&weft__S.opening);
    if (atomic_load(&weft__S.state) == WEFT__ST_ACTIVE)
        atomic_store(&weft__S.state, WEFT__ST_DISCARD);
    atomic_store(&weft__S.connected, 0);
    atomic_store(&weft__S.opening, 0);
    lost = abandon_locked(&n);
    if (!was_opening) /* else off from the start, as weft_open decided */
        weft__S.close_rc = WEFT_EIO;
    weft__raise_attention_locked();
    pthread_cond_broadcast(&weft__S.pool_cv);
    pthread_mutex_unlock(&weft__S.mu);
    if (was_opening) /* weftd never had any of it */
        warn("%s; tracing is off for this process (%" PRIu64 " events "
             "recorded meanwhile dropped)", what, lost);
    else
        warn("%s; %s (%" PRIu64 " unacknowledged events dropped)", what,
             was_closing ? "the trace of this process is incomplete"
                         : "tracing is off for the rest of this process",
             lost);
}

/* At close, weftd could not be reached in time: what it does not hold is
 * counted as dropped and no Goodbye is sent (weftd converts the trace as
 * partial after its grace period). `reason` completes "gave up ...". */
static void give_up(const char *reason)
{
    uint64_t lost;
    size_t n;

    pthread_mutex_lock(&weft__S.mu);
    lost = abandon_locked(&n);
    weft__S.close_rc = WEFT_EIO;
    pthread_mutex_unlock(&weft__S.mu);
    if (n)
        warn("gave up on weftd at %s %s: %" PRIu64 " events in %zu "
             "unacknowledged batches are counted as dropped; the trace of "
             "rank %u is incomplete", weft__S.cfg.server, reason, lost, n,
             weft__S.cfg.rank);
    else
        warn("gave up on weftd at %s %s before it took the Goodbye of rank "
             "%u; it will convert the trace as partial", weft__S.cfg.server,
             reason, weft__S.cfg.rank);
}

/* Sets every live thread's attention so it hands over a partly filled
 * buffer on its next record. */
static void request_flush(void)
{
    pthread_mutex_lock(&weft__S.mu);
    for (weft__thread *t = weft__S.threads; t; t = t->next)
        if (!t->exited)
            atomic_store_explicit(&t->attention, 1, memory_order_relaxed);
    pthread_mutex_unlock(&weft__S.mu);
}

enum { RECONNECT_RETRY = 1 };

/* Takes connected fd and its HelloAck (freed here): weftd must hold what
 * it acknowledged and nothing more; unacknowledged frames are queued
 * again (*resend batches of them). 0 with weft__S.fd set, or WEFT_EPROTO
 * with why and fd closed. Sender only. */
static int take_connection(int fd, Weft__Envelope *ack, size_t *resend,
                           char *why, size_t whylen)
{
    int rc;

    pthread_mutex_lock(&weft__S.mu);
    rc = weft__resume_locked(ack->hello_ack, resend, why, whylen);
    if (rc == 0) {
        atomic_store(&weft__S.connected, 1);
        weft__S.goodbye_queued = 0;
        weft__progress_locked();
        pthread_cond_broadcast(&weft__S.pool_cv);
    }
    pthread_mutex_unlock(&weft__S.mu);
    weft_frame_free_envelope(ack);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    weft__S.fd = fd;
    return 0;
}

/* One attempt to connect again (giving up at the deadline). Returns 0
 * (connected, weft__S.fd set, unacknowledged frames queued again, *resend
 * batches of them), RECONNECT_RETRY (why says why), or WEFT_EPROTO when
 * weftd refuses this process for good (*codep its code). Sender only. */
static int reconnect(uint64_t deadline, size_t *resend, int *codep,
                     char *why, size_t whylen)
{
    Weft__Envelope *ack = NULL;
    int fd = -1, rc;

    *codep = 0;
    rc = weft__connect_and_hello(&weft__S.cfg, deadline, &fd, &ack, codep,
                                 why, whylen);
    if (rc == WEFT_EPROTO) /* EEXIST: weftd has not noticed the break yet */
        return weft__transient_code(*codep) ? RECONNECT_RETRY : WEFT_EPROTO;
    if (rc < 0)
        return RECONNECT_RETRY;
    return take_connection(fd, ack, resend, why, whylen);
}

/* The connection broke: Acks that arrived before the break are still
 * taken (fewer frames to send again, and exact counts should weftd never
 * come back); the frame being written is dropped (its batch or chunk is
 * still in flight and goes again after reconnecting). */
static void disconnect(weft__out *out, const char *why)
{
    Weft__Envelope *env;
    char ignored[256];
    int transient;

    while (weft__input_next(weft__S.fd, &weft__S.in, &env, ignored,
                            sizeof ignored) == 1) {
        int rc = weft__handle_frame(env, &transient, ignored, sizeof ignored);
        weft_frame_free_envelope(env);
        if (rc < 0)
            break;
    }
    close(weft__S.fd);
    weft__S.fd = -1;
    free(out->data);
    out->data = NULL;
    pthread_mutex_lock(&weft__S.mu);
    atomic_store(&weft__S.connected, 0);
    weft__S.goodbye_queued = 0;
    /* Nothing was owed: weftd is unreachable from now on, not before. */
    if (!weft__S.f_head && !weft__S.q_head && !weft__S.df_head &&
        !weft__S.d_head)
        weft__S.progress_ms = weft__now_ms();
    pthread_mutex_unlock(&weft__S.mu);
    warn("lost the connection to weftd at %s: %s; reconnecting",
         weft__S.cfg.server, why);
}

/* A random number for backoff jitter (xorshift32). */
static uint32_t jitter_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

enum { PUMP_OK, PUMP_DONE, PUMP_UNSURE, PUMP_BROKEN, PUMP_FATAL };

/* 1 while a frame sent on this connection awaits its Ack. */
static int in_flight(void)
{
    int n;

    pthread_mutex_lock(&weft__S.mu);
    n = weft__S.f_head || weft__S.df_head;
    pthread_mutex_unlock(&weft__S.mu);
    return n;
}

/* One round on a live connection: waits (until wake_at at most) for the
 * socket or a wake-up, reads and handles weftd's frames, writes some of
 * the current frame. Returns PUMP_OK, PUMP_DONE (weftd hung up after our
 * Goodbye), PUMP_UNSURE (the connection broke after the whole Goodbye was
 * written), PUMP_BROKEN (reconnect) or PUMP_FATAL, with why. Sender
 * only. */
static int pump(weft__out *out, uint64_t wake_at, int *goodbye_sent,
                char *why, size_t whylen)
{
    struct pollfd pfd[2];
    uint64_t now = weft__now_ms();
    int rc, transient;

    pfd[0].fd = weft__S.fd;
    pfd[0].events = (short)(POLLIN | (out->data ? POLLOUT : 0));
    pfd[1].fd = weft__S.wake_fd;
    pfd[1].events = POLLIN;
    pfd[0].revents = pfd[1].revents = 0;
    rc = poll(pfd, 2, wake_at == UINT64_MAX ? -1
                      : wake_at <= now ? 0
                      : (int)weft__min_u64(wake_at - now, INT_MAX));
    if (rc < 0 && errno != EINTR) {
        snprintf(why, whylen, "poll: %s", strerror(errno));
        return PUMP_FATAL;
    }
    if (rc <= 0)
        return PUMP_OK;
    if (pfd[1].revents & POLLIN)
        weft__wake_fd_drain();
    if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        Weft__Envelope *env;
        while ((rc = weft__input_next(weft__S.fd, &weft__S.in, &env, why,
                                      whylen)) == 1) {
            rc = weft__handle_frame(env, &transient, why, whylen);
            weft_frame_free_envelope(env);
            if (rc < 0)
                return transient ? PUMP_BROKEN : PUMP_FATAL;
        }
        /* weftd hangs up after the Acks of all that came before the
         * Goodbye: anything still unacknowledged is to be sent again. */
        if (rc == WEFT_ECLOSED && *goodbye_sent)
            return in_flight() ? PUMP_BROKEN : PUMP_DONE; /* orderly end */
        if (rc == WEFT_EPROTO)
            return PUMP_FATAL;
        if (rc < 0)
            return *goodbye_sent && !in_flight() ? PUMP_UNSURE : PUMP_BROKEN;
    }
    if (out->data && (pfd[0].revents & POLLOUT)) {
        ssize_t n = send(weft__S.fd, out->data + out->off, out->len - out->off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
            errno != EINTR) {
            snprintf(why, whylen, "%s", strerror(errno));
            return PUMP_BROKEN;
        }
        if (n > 0)
            out->off += (size_t)n;
        if (out->off == out->len) {
            if (out->is_goodbye)
                *goodbye_sent = 1;
            free(out->data);
            out->data = NULL;
        }
    }
    return PUMP_OK;
}

/* A fatal signal arrived (on_fatal_signal): closes the session as
 * weft_close would, but takes over only the buffer of the thread that got
 * the signal (it waits in the handler) - other live threads may be in the
 * middle of a record, so their partly filled buffers stay theirs and are
 * lost; what they handed over before is shipped. The close is bounded by
 * WEFT_SIGNAL_FLUSH_MS. Sender only. */
static void signal_close(void)
{
    weft__thread *t = atomic_exchange(&weft__S.signal_thread, NULL);
    int wake = 0, sig = atomic_exchange(&weft__S.signal_pending, 0);
    const char *abbrev = sigabbrev_np(sig);
    char why[64];

    snprintf(why, sizeof why, "signal %d (%s%s)", sig, abbrev ? "SIG" : "",
             abbrev ? abbrev : "unknown");
    pthread_mutex_lock(&weft__S.mu);
    weft__ended_locked(why);
    if (t && atomic_load(&weft__S.state) == WEFT__ST_ACTIVE && !t->exited)
        weft__buf_release_locked(t, &wake);
    if (atomic_load(&weft__S.state) == WEFT__ST_ACTIVE)
        atomic_store(&weft__S.state, WEFT__ST_CLOSED);
    weft__raise_attention_locked();
    pthread_cond_broadcast(&weft__S.pool_cv);
    if (!weft__S.closing) {
        weft__S.closing = 1;
        weft__S.close_start_ms = weft__now_ms();
        weft__S.close_limit_ms = weft__S.cfg.close_timeout_ms;
    }
    if (weft__S.cfg.signal_flush_ms < weft__S.close_limit_ms) {
        uint64_t elapsed = weft__now_ms() - weft__S.close_start_ms;
        weft__S.close_limit_ms = (uint32_t)weft__min_u64(
            weft__S.close_limit_ms, elapsed + weft__S.cfg.signal_flush_ms);
    }
    pthread_mutex_unlock(&weft__S.mu);
}

/* The sender's own state: locals of one thread, kept in one place so
 * each state function sees them. */
typedef struct sender {
    weft__sender_state state;
    weft__out out;           /* the frame being written */
    char why[512];           /* why the last step failed */
    uint64_t next_flush;     /* next flush request, ms */
    uint64_t eof_deadline;   /* CLOSING: weftd should hang up by then */
    uint64_t next_attempt;   /* DISCONNECTED: next connection attempt */
    uint64_t backoff;        /* current backoff, ms; 0 before a failure */
    uint64_t up_since;       /* when the connection was last made */
    uint64_t down_since;     /* when the connection broke */
    uint32_t rng;            /* backoff jitter */
    /* Read at the start of each round (round_begin). */
    uint64_t now;
    int closing;             /* weft_close (or a fatal signal) began */
    uint64_t close_at;       /* close deadline; never unless closing */
    uint64_t progress;       /* weft__S.progress_ms */
    uint64_t last_frame;     /* when the last frame was packed, ms */
    int goodbye_written;     /* a Goodbye went out whole, on any connection */
    int start_offset_owed;   /* the first HelloAck never came: the starting
                                clock offset is taken on the next connection */
    /* Where a process's start and end go, for WEFT_DEBUG=1 (ns,
     * CLOCK_MONOTONIC; 0 until it happened). */
    uint64_t t_start;        /* the sender started (weft_open) */
    uint64_t t_close;        /* it saw weft_close begin */
    uint64_t t_goodbye;      /* the Goodbye was written */
} sender;

#define NEVER UINT64_MAX

/* Milliseconds from a to b (ns), for debug lines. */
static double ms_between(uint64_t a, uint64_t b)
{
    return b >= a ? (double)(b - a) / 1e6 : 0.0;
}

/* Doubles the backoff (from WEFT__BACKOFF_MIN_MS to _MAX_MS) and
 * schedules the next connection attempt after it, jittered. */
static void back_off(sender *s)
{
    s->backoff = s->backoff ? weft__min_u64(2 * s->backoff,
                                            WEFT__BACKOFF_MAX_MS)
                            : WEFT__BACKOFF_MIN_MS;
    s->next_attempt = weft__now_ms() + s->backoff / 2 +
                      jitter_next(&s->rng) % (s->backoff / 2 + 1);
}

/* Waits for a wake-up of the sender (no socket) until wake_at. */
static void wait_wakeup(uint64_t wake_at)
{
    struct pollfd p = { weft__S.wake_fd, POLLIN, 0 };
    uint64_t now = weft__now_ms();

    if (poll(&p, 1, wake_at <= now ? 0
                    : (int)weft__min_u64(wake_at - now, INT_MAX)) > 0)
        weft__wake_fd_drain();
}

/* What every round does whatever the state: a fatal signal's close, the
 * flush request, and while closing, giving up when time is up. Returns
 * WEFT__SND_DONE to end, else s->state. */
static weft__sender_state round_begin(sender *s)
{
    char reason[128] = "";
    int connected = s->state == WEFT__SND_STREAMING ||
                    s->state == WEFT__SND_CLOSING;

    if (atomic_load(&weft__S.signal_pending))
        signal_close();
    weft__relocate_pending();
    s->now = weft__now_ms();
    pthread_mutex_lock(&weft__S.mu);
    s->closing = weft__S.closing;
    s->close_at = s->closing ? weft__S.close_start_ms + weft__S.close_limit_ms
                             : NEVER;
    s->progress = weft__S.progress_ms;
    pthread_mutex_unlock(&weft__S.mu);
    if (s->closing && !s->t_close)
        s->t_close = weft__mono_ns();
    if (s->now >= s->next_flush) {
        request_flush();
        s->next_flush = s->now + weft__S.cfg.flush_ms;
    }
    if (s->state == WEFT__SND_CLOSING) {
        if (s->now < s->eof_deadline)
            return s->state;
        if (!in_flight())
            return WEFT__SND_DONE; /* weftd holds everything; it is just
                                      slow to hang up */
        /* else eof_deadline is close_at: given up on below */
    }
    if (!s->closing)
        return s->state;
    if (s->now >= s->close_at)
        snprintf(reason, sizeof reason, "after %u ms (%s)",
                 weft__S.close_limit_ms,
                 weft__S.close_limit_ms == weft__S.cfg.close_timeout_ms
                     ? "WEFT_CLOSE_TIMEOUT_MS"
                     : "WEFT_SIGNAL_FLUSH_MS, after a fatal signal");
    else if (!connected && s->now >= s->progress + weft__S.cfg.stall_ms)
        snprintf(reason, sizeof reason, "after it was unreachable "
                 "for %" PRIu64 " ms (WEFT_STALL_MS=%u)",
                 s->now - s->progress, weft__S.cfg.stall_ms);
    if (!reason[0])
        return s->state;
    give_up(reason);
    return WEFT__SND_DONE;
}

/* DISCONNECTED: waits for the next attempt, a flush, a wake-up, or (while
 * closing) the deadlines of round_begin. */
static weft__sender_state state_disconnected(sender *s)
{
    uint64_t wake_at;

    if (s->now >= s->next_attempt)
        return WEFT__SND_CONNECTING;
    wake_at = weft__min_u64(s->next_attempt, s->next_flush);
    if (s->closing)
        wake_at = weft__min_u64(wake_at,
                                weft__min_u64(s->close_at,
                                              s->progress +
                                                  weft__S.cfg.stall_ms));
    wait_wakeup(wake_at);
    return WEFT__SND_DISCONNECTED;
}

/* OPENING: weft_open wrote the Hello; its HelloAck and the starting
 * clock offset, then STREAMING. A weftd that refuses this process turns
 * tracing off (DONE) with one warning, as weft_open does with
 * WEFT_REQUIRED=1. A connection that breaks, or a weftd that does not
 * answer within WEFT_STALL_MS, is tried again as in STREAMING
 * (DISCONNECTED): a weftd restarted as the job started must not leave a
 * rank untraced, and a trace waiting for it. */
static weft__sender_state state_opening(sender *s)
{
    Weft__Envelope *ack = NULL;
    char what[1200];
    size_t resend = 0;
    uint64_t t_ack;
    int code = 0, rc;

    rc = weft__await_hello_ack(&weft__S.cfg, weft__S.fd, s->close_at, &ack,
                               &code, s->why, sizeof s->why);
    if (rc < 0)
        weft__S.sync_sent = 0; /* its answer went with the connection */
    if (rc == WEFT_ECONNECT) {
        close(weft__S.fd);
        weft__S.fd = -1;
        pthread_mutex_lock(&weft__S.mu);
        atomic_store(&weft__S.opening, 0);
        weft__raise_attention_locked();
        pthread_mutex_unlock(&weft__S.mu);
        warn("lost the connection to weftd at %s before its HelloAck: %s; "
             "reconnecting", weft__S.cfg.server, s->why);
        s->start_offset_owed = 1;
        s->down_since = weft__now_ms();
        back_off(s);
        return WEFT__SND_DISCONNECTED;
    }
    if (rc == 0)
        rc = take_connection(weft__S.fd, ack, &resend, s->why,
                             sizeof s->why);
    else
        close(weft__S.fd);
    if (rc < 0) {
        weft__S.fd = -1;
        weft__S.sync_sent = 0;
        if (rc == WEFT_EPROTO)
            snprintf(what, sizeof what, "weftd refused this process: %s",
                     s->why);
        else
            snprintf(what, sizeof what, "weftd at %s did not take this "
                     "process: %s", weft__S.cfg.server, s->why);
        go_discard(what);
        return WEFT__SND_DONE;
    }
    t_ack = weft__mono_ns();
    weft__measure_offset(weft__S.fd, s->close_at, "at the start");
    atomic_store(&weft__S.opening, 0);
    s->up_since = s->last_frame = weft__now_ms();
    weft__debug("started: HelloAck %.2f ms after the Hello, the clock "
                "offset %.2f ms after it", ms_between(s->t_start, t_ack),
                ms_between(t_ack, weft__mono_ns()));
    return WEFT__SND_STREAMING;
}

/* weftd refused this process because its trace ended with every
 * goodbye (WEFT_EENDED), after this process wrote its Goodbye on an
 * earlier connection: weftd journaled that Goodbye, so it holds every
 * frame written before it, whose Acks were lost with the connection.
 * Takes what is in flight as acknowledged and returns 1, or returns 0
 * when something was never written (then weftd may not have it). */
static int settle_delivered(void)
{
    int ok;

    pthread_mutex_lock(&weft__S.mu);
    ok = !weft__S.q_head && !weft__S.d_head;
    if (ok) {
        while (weft__S.f_head) {
            weft__buf *b = weft__S.f_head;
            weft__S.f_head = b->next;
            weft__buf_free_locked(b);
        }
        weft__chunks_free(&weft__S.df_head);
        weft__S.f_tail = NULL;
        weft__S.df_tail = NULL;
        weft__progress_locked();
        pthread_cond_broadcast(&weft__S.pool_cv);
    }
    pthread_mutex_unlock(&weft__S.mu);
    return ok;
}

/* CONNECTING: one attempt to connect, say Hello and resume. */
static weft__sender_state state_connecting(sender *s)
{
    char what[1200];
    size_t resend = 0;
    int code, rc;

    rc = reconnect(s->close_at, &resend, &code, s->why, sizeof s->why);
    if (rc < 0 && code == WEFT_EENDED && s->goodbye_written &&
        settle_delivered()) {
        warn("weftd had taken the Goodbye of rank %u before the "
             "connection broke: it holds everything of this process, and "
             "the trace is complete", weft__S.cfg.rank);
        return WEFT__SND_DONE;
    }
    if (rc == 0) {
        warn("reconnected to weftd at %s after %" PRIu64 " ms; sending %zu "
             "batches again", weft__S.cfg.server,
             weft__now_ms() - s->down_since, resend);
        if (s->start_offset_owed) {
            weft__measure_offset(weft__S.fd, s->close_at, "at the start");
            s->start_offset_owed = 0;
        }
        s->up_since = s->last_frame = weft__now_ms();
        return WEFT__SND_STREAMING;
    }
    if (rc < 0) {
        snprintf(what, sizeof what, "weftd at %s refused this process when "
                 "it reconnected: %s", weft__S.cfg.server, s->why);
        go_discard(what);
        return WEFT__SND_DONE;
    }
    back_off(s);
    return WEFT__SND_DISCONNECTED;
}

/* What a pump round on a live connection leads to (STREAMING and
 * CLOSING). */
static weft__sender_state after_pump(sender *s, int rc, int goodbye_sent)
{
    char what[1200];

    if (goodbye_sent)
        s->goodbye_written = 1;
    switch (rc) {
    case PUMP_DONE:
        if (s->t_close && s->t_goodbye)
            weft__debug("ended: the Goodbye written %.2f ms after "
                        "weft_close began, everything acknowledged and "
                        "weftd's hang-up %.2f ms after the Goodbye",
                        ms_between(s->t_close, s->t_goodbye),
                        ms_between(s->t_goodbye, weft__mono_ns()));
        return WEFT__SND_DONE;
    case PUMP_UNSURE:
        /* Everything was acknowledged, the Goodbye sent. Connecting
         * again to send it once more could make a new, empty trace of the
         * same name if weftd did take it and converted the trace, so this
         * ends here. */
        warn("the connection to weftd at %s broke right after the Goodbye "
             "of rank %u (%s): weftd holds all its events, but if the "
             "Goodbye did not arrive it converts the trace as partial "
             "after its grace period", weft__S.cfg.server,
             weft__S.cfg.rank, s->why);
        return WEFT__SND_DONE;
    case PUMP_FATAL:
        snprintf(what, sizeof what, "lost the connection to weftd at %s: "
                 "%s", weft__S.cfg.server, s->why);
        go_discard(what);
        return WEFT__SND_DONE;
    case PUMP_BROKEN:
        disconnect(&s->out, s->why);
        s->eof_deadline = NEVER;
        s->down_since = weft__now_ms();
        /* A connection that lasted starts the backoff over; one that weftd
         * ended at once (it refuses what it cannot journal, e.g. on a full
         * disk) backs off further, or the process would reconnect (and
         * warn) every 50 ms for as long as the cause lasts. */
        if (s->down_since - s->up_since >= WEFT__BACKOFF_MAX_MS)
            s->backoff = 0;
        back_off(s);
        return WEFT__SND_DISCONNECTED;
    default:
        break;
    }
    if (goodbye_sent && s->state != WEFT__SND_CLOSING) {
        s->t_goodbye = weft__mono_ns();
        /* Behind batches not yet acknowledged, as long as closing may
         * take; once weftd holds everything, WEFT__EOF_TIMEOUT_MS more. */
        s->eof_deadline = in_flight()
            ? s->close_at
            : weft__min_u64(weft__now_ms() + WEFT__EOF_TIMEOUT_MS,
                            s->close_at);
        return WEFT__SND_CLOSING;
    }
    return s->state;
}

/* STREAMING: the closing clock offset when everything is acknowledged,
 * else the next frame, then one pump round. */
/* 1 when the connection has carried no frame for WEFT_HEARTBEAT_MS. */
static int heartbeat_due(const sender *s)
{
    return weft__S.cfg.heartbeat_ms &&
           s->now >= s->last_frame + weft__S.cfg.heartbeat_ms;
}

static weft__sender_state state_streaming(sender *s)
{
    char what[1200];
    uint64_t wake_at;
    int idle, rc, goodbye_sent = 0;

    pthread_mutex_lock(&weft__S.mu);
    idle = !weft__S.d_head && !weft__S.q_head && !weft__S.f_head &&
           !weft__S.df_head;
    pthread_mutex_unlock(&weft__S.mu);
    if (s->closing && !weft__S.end_synced && weft__S.clock_shared) {
        /* Read here, without a round trip (conn.c): it goes out with
         * the last batches rather than after their Acks. */
        weft__S.end_synced = 1;
        weft__measure_offset(weft__S.fd, s->close_at, "at the end");
    }
    if (s->closing && idle && !weft__S.end_synced && !s->out.data) {
        /* The closing offset goes out (and is acknowledged) before the
         * Goodbye, like every definition. */
        weft__S.end_synced = 1;
        weft__measure_offset(weft__S.fd, s->close_at, "at the end");
        return WEFT__SND_STREAMING;
    }
    if (!s->out.data) {
        /* The Goodbye once the closing offset is queued: measured with
         * round trips (a weftd elsewhere) only once all is acknowledged. */
        rc = weft__next_frame(&s->out, s->closing && weft__S.end_synced, s->why,
                        sizeof s->why);
        if (rc == 0 && !s->closing && heartbeat_due(s))
            rc = weft__pack_heartbeat(&s->out, s->why, sizeof s->why);
        if (rc < 0) {
            snprintf(what, sizeof what, "cannot send to weftd at %s: %s",
                     weft__S.cfg.server, s->why);
            go_discard(what);
            return WEFT__SND_DONE;
        }
        if (rc > 0)
            s->last_frame = s->now;
    }
    wake_at = s->next_flush;
    if (weft__S.cfg.heartbeat_ms && !s->closing)
        wake_at = weft__min_u64(wake_at,
                                s->last_frame + weft__S.cfg.heartbeat_ms);
    if (s->closing)
        wake_at = weft__min_u64(wake_at, s->close_at);
    rc = pump(&s->out, wake_at, &goodbye_sent, s->why, sizeof s->why);
    return after_pump(s, rc, goodbye_sent);
}

/* CLOSING: the Goodbye is written; Acks and weftd's hang-up are read
 * until eof_deadline (round_begin ends it then). */
static weft__sender_state state_closing(sender *s)
{
    int goodbye_sent = 1, rc;

    rc = pump(&s->out, weft__min_u64(s->next_flush, s->eof_deadline),
              &goodbye_sent, s->why, sizeof s->why);
    return after_pump(s, rc, goodbye_sent);
}

static void set_state(sender *s, weft__sender_state to)
{
    weft__sender_state from = s->state;

    s->state = to;
    if (from != to && weft__sender_hook)
        weft__sender_hook(from, to);
}

/* See client_session.h. Ends after weftd hung up following our Goodbye, when
 * weft_close's time is up (what is not acknowledged is then counted as
 * dropped), or when weftd refuses this process for good (tracing goes
 * off). Sets weft__S.close_rc (through give_up and go_discard). */
void *weft__sender_main(void *arg)
{
    static weft__sender_state (*const run[])(sender *) = {
        [WEFT__SND_OPENING] = state_opening,
        [WEFT__SND_DISCONNECTED] = state_disconnected,
        [WEFT__SND_CONNECTING] = state_connecting,
        [WEFT__SND_STREAMING] = state_streaming,
        [WEFT__SND_CLOSING] = state_closing,
    };
    sender s;

    (void)arg;
    weft__inside = 1; /* for the thread's whole life (recorder.h) */
    memset(&s, 0, sizeof s);
    s.state = weft__S.fd < 0                  ? WEFT__SND_DISCONNECTED
              : atomic_load(&weft__S.opening) ? WEFT__SND_OPENING
                                              : WEFT__SND_STREAMING;
    s.next_flush = weft__S.cfg.flush_ms ? weft__now_ms() + weft__S.cfg.flush_ms
                                        : NEVER;
    s.eof_deadline = NEVER;
    /* Without a connection yet, its first one measures the start. */
    s.start_offset_owed = weft__S.fd < 0;
    s.up_since = weft__now_ms(); /* weft_open connected, or OPENING */
    s.down_since = s.up_since;   /* (if it did not connect) */
    s.last_frame = s.up_since;
    s.rng = (uint32_t)getpid() ^ (uint32_t)weft__now() ^ 0x9e3779b9u;
    s.t_start = weft__mono_ns();
    atomic_store(&weft__S.sender_tid, (int)gettid());
    for (;;) {
        set_state(&s, round_begin(&s));
        if (s.state == WEFT__SND_DONE)
            break;
        set_state(&s, run[s.state](&s));
        if (s.state == WEFT__SND_DONE)
            break;
    }
    free(s.out.data);
    if (weft__S.fd >= 0)
        close(weft__S.fd);
    weft__S.fd = -1;
    pthread_mutex_lock(&weft__S.mu);
    atomic_store(&weft__S.connected, 0);
    pthread_mutex_unlock(&weft__S.mu);
    atomic_store(&weft__S.sender_done, 1);
    return NULL;
}
