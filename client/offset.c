/* offset.c - the trace clock's offset to weftd's, measured over the
 * connection (conn.c) and queued as a ClockOffset definition.
 *
 * DESIGN
 * The sender (after weft_open's HelloAck, and as the session closes)
 * measures the trace
 * clock's offset to weftd's with ClockSync round trips on the socket and
 * queue it as a ClockOffset definition, so it is acknowledged, journaled
 * and resent like any definition (proto/clock.h, daemon/convert/convert.c).
 * A weftd on this host (its Unix socket, or TCP to a loopback or own
 * address) reads the same CLOCK_MONOTONIC, unless it runs in another
 * time namespace: the first round trip in CLOCK_MONOTONIC ns whose
 * offset is within its error bound says so, once. From then on the
 * trace clock's offset is read here, without a round trip: the trace
 * clock (the TSC, or a test's shifted clock) read on both sides of
 * CLOCK_MONOTONIC, at both ends; on CLOCK_MONOTONIC itself the offset is
 * 0 and nothing is sent (two readers of one kernel clock cannot drift
 * apart). Each round trip is two wake-ups of weftd's loop and of this
 * process, which on a busy host is most of what starting and ending a
 * traced process costs (bench/procs.sh). A weftd elsewhere, or on this
 * host with another CLOCK_MONOTONIC, gets WEFT__SYNC_ROUNDS at both ends
 * (WEFT__SYNC_ROUNDS_LOCAL for an unshifted CLOCK_MONOTONIC). The first
 * of these on a new process's connection to a weftd on this host goes
 * out right behind its Hello (weft__offset_presend), so its answer comes
 * right after the HelloAck, not a round trip later.
 *
 * Everything here runs on the sender thread, or on the opening thread
 * before the sender starts.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client_internal.h"
#include "clock.h"
#include "frame.h"
#include "record.h"
#include "client_session.h"
#include "weft_errors.h"

#define warn weft__warn

/* Round trips of a clock offset measurement, and how long one may take. */
#define WEFT__SYNC_ROUNDS 8u
/* At most this many with a weftd on this host (see DESIGN above): the
 * first says the clock is shared unless weftd's answer came late. */
#define WEFT__SYNC_ROUNDS_LOCAL 2u
#define WEFT__SYNC_TIMEOUT_MS 1000u

/* The client's time for a ClockSync sample: CLOCK_MONOTONIC in ns
 * (mono), else the trace clock. */
static uint64_t sync_now(int mono)
{
    return mono ? weft__mono_ns() : weft__now();
}

/* Sends ClockSync request `id` stamped with sync_now(mono); *t_send is
 * that time. 0 or -1 with why. */
static int sync_send(int fd, uint32_t id, int mono, uint64_t deadline,
                     uint64_t *t_send, char *why, size_t whylen)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;
    uint8_t *frame = NULL;
    ssize_t len;
    int rc;

    cs.id = id;
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &cs;
    cs.client_time = *t_send = sync_now(mono);
    len = weft__pack(&env, &frame);
    if (len < 0) {
        snprintf(why, whylen, "%s", weft_strerror((int)len));
        return -1;
    }
    rc = weft__send_all(fd, frame, (size_t)len, deadline, why, whylen);
    free(frame);
    return rc;
}

/* 1 if fd's peer is on this host: a Unix socket, or TCP whose peer
 * address is a loopback one or the address this end has. */
static int peer_is_local_now(int fd)
{
    struct sockaddr_storage me, peer;
    socklen_t melen = sizeof me, peerlen = sizeof peer;

    if (getpeername(fd, (struct sockaddr *)&peer, &peerlen) < 0 ||
        getsockname(fd, (struct sockaddr *)&me, &melen) < 0)
        return 0;
    if (peer.ss_family == AF_UNIX)
        return 1;
    if (peer.ss_family == AF_INET && me.ss_family == AF_INET) {
        const struct in_addr *p = &((struct sockaddr_in *)&peer)->sin_addr;
        const struct in_addr *m = &((struct sockaddr_in *)&me)->sin_addr;
        return (ntohl(p->s_addr) >> 24) == IN_LOOPBACKNET ||
               p->s_addr == m->s_addr;
    }
    if (peer.ss_family == AF_INET6 && me.ss_family == AF_INET6) {
        const struct in6_addr *p = &((struct sockaddr_in6 *)&peer)->sin6_addr;
        const struct in6_addr *m = &((struct sockaddr_in6 *)&me)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(p) || IN6_ARE_ADDR_EQUAL(p, m);
    }
    return 0;
}

/* peer_is_local_now of the session's connection, asked once per
 * connection (it is asked before the HelloAck, at the start and at the
 * end; by the opening thread, then by the sender): the serial of
 * weft__S.conn_serial it was asked at. */
static int peer_is_local(int fd)
{
    static int local = -1;
    static unsigned serial;
    unsigned now = atomic_load(&weft__S.conn_serial);

    if (local < 0 || serial != now) {
        local = peer_is_local_now(fd);
        serial = now;
    }
    return local;
}

/* Measures the offset of the trace clock (of CLOCK_MONOTONIC with
 * `mono`) to weftd's over fd: up to `rounds` ClockSync round trips, one
 * at a time, within WEFT__SYNC_TIMEOUT_MS (and the deadline); the one
 * with the smallest round trip counts. With `until_zero` the first
 * estimate within its error bound ends it. Other frames that arrive
 * meanwhile (Acks) are handled as usual. Returns 0 with *est, or -1 with
 * why. Sender thread, or the opening thread before the sender starts. */
static int clock_sync(int fd, uint64_t deadline, uint32_t rounds,
                      int until_zero, int mono, weft_clock_estimate *est,
                      char *why, size_t whylen)
{
    weft_clock_sample smp[WEFT__SYNC_ROUNDS];
    uint64_t res = mono ? 1000000000u : weft__S.cfg.resolution;
    size_t n = 0;

    deadline = weft__min_u64(deadline, weft__now_ms() + WEFT__SYNC_TIMEOUT_MS);
    rounds = (uint32_t)weft__min_u64(rounds, WEFT__SYNC_ROUNDS);
    for (uint32_t id = 1; id <= rounds; id++) {
        Weft__Envelope *reply = NULL;
        uint64_t t_send = weft__S.sync_sent;
        int rc, transient;
        weft__S.sync_sent = 0;
        if (!(id == 1 && mono && t_send) &&
            sync_send(fd, id, mono, deadline, &t_send, why, whylen) < 0)
            return -1;
        for (;;) {
            rc = weft__input_next(fd, &weft__S.in, &reply, why, whylen);
            if (rc == 0) {
                if (weft__wait_fd(fd, POLLIN, deadline) <= 0) {
                    snprintf(why, whylen, "no ClockSync answer within %u ms",
                             WEFT__SYNC_TIMEOUT_MS);
                    return -1;
                }
                continue;
            }
            if (rc < 0)
                return -1;
            if (reply->msg_case == WEFT__ENVELOPE__MSG_CLOCK_SYNC &&
                reply->clock_sync->id == id) {
                smp[n].t_send = t_send;
                smp[n].t_recv = sync_now(mono);
                smp[n].server_ns = reply->clock_sync->server_time;
                n++;
                weft_frame_free_envelope(reply);
                break;
            }
            rc = weft__handle_frame(reply, &transient, why, whylen);
            weft_frame_free_envelope(reply);
            if (rc < 0)
                return -1;
        }
        if (until_zero && weft_clock_best(smp, n, res, est) == 0 &&
            weft_clock_is_zero(est))
            return 0;
    }
    if (weft_clock_best(smp, n, res, est) < 0) {
        snprintf(why, whylen, "the trace clock went backwards");
        return -1;
    }
    return 0;
}

/* The trace clock's offset to this host's CLOCK_MONOTONIC, read here:
 * CLOCK_MONOTONIC between two reads of the trace clock, the tightest of
 * a few tries; the error bound is half their distance. */
static void local_estimate(weft_clock_estimate *est)
{
    uint64_t res = weft__S.cfg.resolution, best = UINT64_MAX;

    for (int i = 0; i < 5; i++) {
        uint64_t t1 = weft__now(), n = weft__mono_ns(), t2 = weft__now();
        if (t2 < t1 || t2 - t1 >= best)
            continue;
        best = t2 - t1;
        est->time = t1 + (t2 - t1) / 2;
        est->offset = (int64_t)(n - weft_clock_ticks_to_ns(est->time, res));
        est->error_ns = weft_clock_ticks_to_ns((t2 - t1) / 2 + 1, res);
    }
}

/* Queues est as a ClockOffset definition (offset in ns to weftd's clock,
 * standardDeviation = its error bound in ns), unless it is a zero offset
 * on a clock counting ns: the process shares weftd's clock as far as can
 * be told, and its times stay exactly as recorded. */
static void queue_offset(const weft_clock_estimate *est, const char *when)
{
    weft_record r;
    int rc;

    if (weft__S.cfg.resolution == 1000000000u && weft_clock_is_zero(est))
        return;
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockOffset;
    r.u.ClockOffset.time = est->time;
    r.u.ClockOffset.offset = est->offset;
    r.u.ClockOffset.standardDeviation = (double)est->error_ns;
    pthread_mutex_lock(&weft__S.mu);
    rc = weft__defs_append_locked(&r);
    pthread_mutex_unlock(&weft__S.mu);
    if (rc < 0)
        warn("cannot keep the clock offset measured %s: %s", when,
             weft_strerror(rc));
}

/* See client_session.h. The request is the one clock_sync would send
 * first on this host (in CLOCK_MONOTONIC ns): weftd answers it after the
 * HelloAck, and a reply delayed behind weftd's disk only widens the
 * error bound, which a shared clock stays within. */
void weft__offset_presend(int fd)
{
    char why[256];
    uint64_t t_send;

    weft__S.sync_sent = 0;
    if (peer_is_local(fd) &&
        sync_send(fd, 1, 1, weft__now_ms() + WEFT__SYNC_TIMEOUT_MS, &t_send,
                  why, sizeof why) == 0)
        weft__S.sync_sent = t_send;
}

/* Measures the trace clock's offset to weftd's and queues it as a
 * ClockOffset definition (see DESIGN above). On this host, a first
 * measurement in CLOCK_MONOTONIC ns (one round trip, two at most) says
 * whether weftd reads the same CLOCK_MONOTONIC; if it does, the offset
 * is read here now and at the end (local_estimate). `when` names the
 * moment for a warning. */
void weft__measure_offset(int fd, uint64_t deadline, const char *when)
{
    weft_clock_estimate est;
    char why[256];
    int local = peer_is_local(fd), plain = !weft__clock_tsc &&
                                           weft__clock_shift == 0;

    if (local && !weft__S.clock_shared) {
        if (clock_sync(fd, deadline, WEFT__SYNC_ROUNDS_LOCAL, 1, 1, &est, why,
                       sizeof why) < 0)
            goto fail;
        weft__S.clock_shared = weft_clock_is_zero(&est);
        if (!weft__S.clock_shared && plain) { /* that was the trace clock */
            queue_offset(&est, when);
            return;
        }
    }
    if (local && weft__S.clock_shared) {
        local_estimate(&est);
        queue_offset(&est, when);
        return;
    }
    if (clock_sync(fd, deadline, WEFT__SYNC_ROUNDS, 0, 0, &est, why,
                   sizeof why) < 0)
        goto fail;
    queue_offset(&est, when);
    return;
fail:
    warn("cannot measure the clock offset to weftd at %s %s: %s",
         weft__S.cfg.server, when, why);
}
