/* server.c - weftd's connections: the read path (read -> frame reader,
 * limit checked as bytes arrive -> unpack -> on_frame, weft_server_cbs:
 * the session), writes, pauses, closing, and the timeouts. One read
 * callback handles at most one read buffer of bytes. Listening and
 * accepting, with the limits on connections, are accept.c's.
 */
#include "accept.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "connlog.h"
#include "log.h"
#include "preauth.h"
#include "relay.h"
#include "reserve.h"
#include "status.h"
#include "weft_errors.h"

typedef struct write_req {
    uv_write_t req;
    uint8_t *frame;
} write_req;

static const char *const limit_names[] = {
#define WEFT_LIMIT_NAME(id, name) name,
    WEFT_LIMITS(WEFT_LIMIT_NAME)
#undef WEFT_LIMIT_NAME
};

int weft_server_init(weft_daemon *d)
{
    d->srv = calloc(1, sizeof *d->srv);
    return d->srv ? 0 : WEFT_ENOMEM;
}

void weft_server_free(weft_daemon *d)
{
    if (!d->srv)
        return;
    weft_reserve_free(d);
    weft_uidmap_free(&d->srv->users);
    free(d->srv);
    d->srv = NULL;
}

const char *weft_limit_name(enum weft_limit l)
{
    assert(l < WEFT_LIMIT__COUNT);
    return limit_names[l];
}

void weft_limit_hit(weft_daemon *d, enum weft_limit l)
{
    assert(l < WEFT_LIMIT__COUNT);
    d->limit_hits[l]++;
}

int weft_conn_check_version(weft_conn *c, uint32_t version)
{
    if (version == WEFT_PROTOCOL_VERSION)
        return 0;
    weft_conn_fail(c, WEFT_EVERSION, "protocol version %u is not supported: "
                   "this weftd speaks version %d", version,
                   WEFT_PROTOCOL_VERSION);
    return WEFT_EVERSION;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void consume(weft_conn *c);
static void on_resume(uv_idle_t *idle);
static void stop_conn(weft_conn *c);
static uint64_t conn_pending(weft_conn *c);

/* Sets c->held to what its frame reader holds, keeping d->srv->buffered the
 * sum over all connections; a fall below the low-water mark schedules
 * the connections paused for max_buffered to read again. */
static void account(weft_conn *c, uint64_t held)
{
    weft_daemon *d = c->d;

    if (c->preauth) { /* apart from max_buffered (preauth.h) */
        weft_preauth_account(c, held);
        return;
    }
    assert(d->srv->buffered >= c->held);
    d->srv->buffered = d->srv->buffered - c->held + held;
    c->held = held;
    weft_server_buffered_fell(d);
}

void weft_server_buffered_fell(weft_daemon *d)
{
    if (d->srv->npaused_buffered > 0 && d->srv->have_resume &&
        d->srv->buffered < d->cfg.max_buffered / 4 * 3)
        uv_idle_start(&d->srv->resume, on_resume);
}

/* Starts or stops reading as c->paused says. 0 or a libuv error. */
static int update_reading(weft_conn *c)
{
    int rc;

    if (c->link) {
        weft__relay_update(c);
        return 0;
    }
    if (weft_conn_closing(c) || uv_is_closing(&c->h.handle))
        return 0;
    if (c->paused)
        return uv_read_stop(&c->h.stream);
    rc = uv_read_start(&c->h.stream, on_alloc, on_read);
    return rc == UV_EALREADY ? 0 : rc;
}

/* Clears pause bits; feeds what was stashed and reads again if nothing
 * else holds the connection. */
static void unpause(weft_conn *c, unsigned bits)
{
    c->paused &= ~bits;
    c->last_frame = uv_now(c->d->loop); /* weftd held it, not the peer */
    if (c->link) { /* its frames are its link's */
        weft__relay_update(c);
        return;
    }
    if (weft_conn_closing(c) || c->paused)
        return;
    consume(c);
    if (!weft_conn_closing(c) && !c->paused && update_reading(c) != 0)
        weft_conn_close(c);
}

/* Outside any read callback: the connections weft_conn_resume released,
 * and those paused for max_buffered while it is below 3/4. */
static void on_resume(uv_idle_t *idle)
{
    weft_daemon *d = idle->data;

    uv_idle_stop(idle);
    for (weft_conn *c = d->srv->conns; c; c = c->next) {
        if (c->resume_due) { /* weft_conn_resume */
            c->resume_due = 0;
            unpause(c, 0);
        }
        if (!(c->paused & WEFT_PAUSE_BUFFERED) ||
            d->srv->buffered >= d->cfg.max_buffered / 4 * 3)
            continue; /* account() starts us again when it falls */
        d->srv->npaused_buffered--;
        weft_conn_log(c, WEFT_LOG_DEBUG, "%llu bytes buffered in all: "
                      "reading again", (unsigned long long)d->srv->buffered);
        unpause(c, WEFT_PAUSE_BUFFERED);
    }
}

void weft_conn_log(const weft_conn *c, int level, const char *fmt, ...)
{
    weft_log_ctx ctx = { NULL, NULL, -1, c->peer };
    char msg[1024];
    va_list ap;

    if (level > c->d->cfg.log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->d->server_cbs->describe)
        c->d->server_cbs->describe(c, &ctx);
    if (ctx.trace)
        weft_logc(c->d->cfg.log_level, level, &ctx,
                  "peer %s trace '%s' rank %u: %s", c->peer, ctx.trace,
                  (unsigned)ctx.rank, msg);
    else
        weft_logc(c->d->cfg.log_level, level, &ctx, "peer %s: %s",
                  c->peer, msg);
}

/* Frees c's own stash, if it has one (not d->srv->rbuf, which is lent). */
static void drop_stash(weft_conn *c)
{
    if (c->stash != c->d->srv->rbuf)
        free(c->stash);
    c->stash = NULL;
    c->stash_len = 0;
}


static void on_close(uv_handle_t *h)
{
    weft_conn *c = h->data;
    weft_daemon *d = c->d;

    if (c->prev)
        c->prev->next = c->next;
    else
        d->srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    d->srv->nconns--;
    if (weft_conn_closing(c))
        d->srv->nclosing--;
    if (c->paused & WEFT_PAUSE_BUFFERED)
        d->srv->npaused_buffered--;
    account(c, 0);
    weft_frame_reader_free(&c->reader);
    weft_mac_free(c->mac);
    drop_stash(c);
    if (d->srv->nconns == 0) {
        free(d->srv->rbuf);
        d->srv->rbuf = NULL;
    }
    free(c);
    weft__server_take_held(d);
}

void weft__conn_close_now(weft_conn *c)
{
    if (!uv_is_closing(&c->h.handle))
        uv_close(&c->h.handle, on_close);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    weft__conn_close_now(req->data);
}

int weft_conn_event(weft_conn *c, enum weft_conn_event ev, const char *name)
{
    enum weft_conn_mode next;
    const char *why;
    int rc = weft_connmode_next(c->mode, ev, &next, &why);

    if (!name)
        name = weft_connmode_event_name(ev);
    if (rc < 0) {
        weft_conn_fail(c, rc, why, name);
        return rc;
    }
    if (next != c->mode)
        weft_conn_log(c, WEFT_LOG_DEBUG, "%s: %s -> %s", name,
                      weft_connmode_name(c->mode), weft_connmode_name(next));
    c->mode = next;
    return 0;
}

void weft_conn_close(weft_conn *c)
{
    if (weft_conn_closing(c))
        return;
    if (c->link) {
        weft__relay_close(c);
        return;
    }
    weft_conn_event(c, WEFT_CONN_EV_CLOSE, NULL);
    c->d->srv->nclosing++;
    uv_read_stop(&c->h.stream);
    weft_preauth_leave(c);
    weft__conn_uncharge_user(c);
    c->d->server_cbs->on_closed(c);
    c->shutdown_req.data = c;
    if (uv_shutdown(&c->shutdown_req, &c->h.stream, on_shutdown) != 0)
        weft__conn_close_now(c);
}

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    weft_conn *c = req->handle->data;

    if (status < 0 && status != UV_ECANCELED && !weft_conn_closing(c))
        weft_connlog(c, WEFT_CONNLOG_WRITE_FAILED, WEFT_LOG_INFO,
                     "write failed: %s", uv_strerror(status));
    free(w->frame);
    free(w);
    if (status < 0 && !weft_conn_closing(c)) {
        weft_conn_close(c);
        return;
    }
    weft_conn_drained(c);
    if (c->on_written && !weft_conn_closing(c) &&
        uv_stream_get_write_queue_size(&c->h.stream) == 0)
        c->on_written(c);
}

/* Journal entries c's member handed on and not written yet (0 before
 * Hello: the session counts them); *bytes, if not NULL, their memory. */
static uint64_t member_pending(const weft_conn *c, uint64_t *bytes)
{
    uint64_t n = 0, b = 0;

    if (c->d->server_cbs->pending)
        n = c->d->server_cbs->pending(c, &b);
    if (bytes)
        *bytes = b;
    return n;
}

/* Bytes of replies to c not written to its socket yet (none for a
 * relayed member: its link's). */
static size_t write_queue(const weft_conn *c)
{
    return c->link ? 0 : uv_stream_get_write_queue_size(&c->h.stream);
}

/* Bytes c holds for its peer: replies not written to the socket yet, and
 * what it sent that waits for the journal writer. */
static uint64_t conn_pending(weft_conn *c)
{
    uint64_t bytes;

    member_pending(c, &bytes);
    return write_queue(c) + bytes;
}

void weft_conn_drained(weft_conn *c)
{
    if ((c->paused & WEFT_PAUSE_PENDING) && !weft_conn_closing(c) &&
        conn_pending(c) <= c->d->cfg.max_conn_pending / 2) {
        weft_conn_log(c, WEFT_LOG_DEBUG, "replies and journal drained; "
                      "reading again");
        unpause(c, WEFT_PAUSE_PENDING);
    }
}

/* A client that does not read its acks gets no more reads until it does:
 * TCP then slows it down, and our memory stays bounded. */
void weft_conn_check_pending(weft_conn *c)
{
    uint64_t journal;

    if (!weft_conn_closing(c) && !(c->paused & WEFT_PAUSE_PENDING) &&
        conn_pending(c) > c->d->cfg.max_conn_pending) {
        member_pending(c, &journal);
        weft_limit_hit(c->d, WEFT_LIMIT_MAX_CONN_PENDING);
        c->paused |= WEFT_PAUSE_PENDING;
        if (update_reading(c) != 0) {
            weft_conn_close(c);
            return;
        }
        weft_conn_log(c, WEFT_LOG_DEBUG, "%zu bytes of replies unread and %"
                      PRIu64 " waiting for the journal, over max_conn_pending "
                      "(%llu): reading paused", write_queue(c), journal,
                      (unsigned long long)c->d->cfg.max_conn_pending);
    }
}

void weft_conn_send(weft_conn *c, uint8_t *frame, size_t len)
{
    write_req *w;
    uv_buf_t buf;

    if (c->link) {
        weft__relay_send(c, frame, len);
        return;
    }
    if (uv_is_closing(&c->h.handle)) {
        free(frame);
        return;
    }
    if (c->mac) {
        ssize_t n = weft_mac_seal(c->mac, &frame, len);
        if (n < 0) {
            free(frame);
            weft_conn_close(c);
            return;
        }
        len = (size_t)n;
    }
    w = malloc(sizeof *w);
    if (!w) {
        free(frame);
        weft_conn_close(c);
        return;
    }
    w->frame = frame;
    buf = uv_buf_init((char *)frame, (unsigned)len);
    if (uv_write(&w->req, &c->h.stream, &buf, 1, on_write) != 0) {
        free(frame);
        free(w);
        weft_conn_close(c);
        return;
    }
    weft_conn_check_pending(c); /* acks also come from the journal writer */
}

static void vfail(weft_conn *c, enum weft_limit l, int code,
                  const char *fmt, va_list ap)
{
    char msg[768];
    uint8_t *frame;
    ssize_t n;
    uint64_t held_back;

    if (weft_conn_closing(c))
        return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* A flood of refusals must not fill the disk with its log */
    if (weft_ratelimit_allow(&c->d->srv->refusal_log[l], uv_now(c->d->loop),
                             c->d->cfg.max_log_refusals, &held_back)) {
        if (held_back)
            weft_conn_log(c, WEFT_LOG_WARNING, "refused: %s (and %llu more "
                          "refusals for %s not logged: max_log_refusals "
                          "is %llu a second)", msg,
                          (unsigned long long)held_back,
                          l == WEFT_LIMIT_NONE ? "other causes"
                                               : weft_limit_name(l),
                          (unsigned long long)c->d->cfg.max_log_refusals);
        else
            weft_conn_log(c, WEFT_LOG_WARNING, "refused: %s", msg);
    }
    c->d->refused++;
    if (l != WEFT_LIMIT_NONE)
        weft_limit_hit(c->d, l);
    n = weft_frame_pack_error(&frame, code, "%s", msg);
    if (n > 0)
        weft_conn_send(c, frame, (size_t)n);
    weft_conn_close(c);
}

void weft_conn_fail(weft_conn *c, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(c, WEFT_LIMIT_NONE, code, fmt, ap);
    va_end(ap);
}

void weft_conn_fail_limit(weft_conn *c, enum weft_limit l, int code,
                          const char *fmt, ...)
{
    va_list ap;

    assert(l <= WEFT_LIMIT_NONE);
    va_start(ap, fmt);
    vfail(c, l, code, fmt, ap);
    va_end(ap);
}

/* Every read lands in d->srv->rbuf: libuv calls alloc, read and on_read for
 * one connection before the next, and on_read keeps what it could not
 * feed in a buffer of the connection's own. */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    weft_conn *c = h->data;

    (void)suggested;
    *buf = uv_buf_init((char *)c->d->srv->rbuf, WEFT_READ_CHUNK);
}

/* Unpacks a complete frame and hands it on. 0 if it was accepted, or the
 * WEFT_E* code it was refused with (c is closing). */
static int handle_frame(weft_conn *c, const uint8_t *frame, uint32_t len)
{
    Weft__Envelope *env;
    char why[128];
    int rc;

    if (c->mac) {
        ssize_t n = weft_mac_open(c->mac, frame, len, why, sizeof why);
        if (n < 0) {
            weft_conn_fail(c, (int)n, "%s", why);
            return (int)n;
        }
        len = (uint32_t)n;
    }
    if (!(env = weft_frame_unpack(frame, len))) {
        weft_conn_fail(c, WEFT_EPROTO, "frame of %u bytes is not a weft "
                       "protocol message (expected a weft.Envelope; is this "
                       "a weft client?)", len);
        return WEFT_EPROTO;
    }
    rc = c->d->server_cbs->on_frame(c, env);
    weft_frame_free_envelope(env);
    return rc;
}

/* Stopping: c reads no more and closes once what it sent is journaled
 * and acknowledged (weft_conn_written), or now if nothing is queued. */
static void stop_conn(weft_conn *c)
{
    c->paused |= WEFT_PAUSE_STOPPING;
    if (update_reading(c) != 0 || member_pending(c, NULL) == 0)
        weft_conn_close(c);
}

void weft_conn_written(weft_conn *c)
{
    if ((c->paused & WEFT_PAUSE_STOPPING) && !weft_conn_closing(c))
        weft_conn_close(c);
}

void weft_conn_hold(weft_conn *c)
{
    c->paused |= WEFT_PAUSE_GOODBYE;
    if (update_reading(c) != 0)
        weft_conn_close(c);
}

void weft_conn_pause(weft_conn *c)
{
    c->paused |= WEFT_PAUSE_SESSION;
    if (update_reading(c) != 0)
        weft_conn_close(c);
}

/* The frames are taken from the idle callback: never inside the caller
 * (the journal writer's hand-back), and not at all once the server
 * stops or drains (the idle handle is closed then). */
void weft_conn_resume(weft_conn *c)
{
    weft_daemon *d = c->d;

    if (!(c->paused & WEFT_PAUSE_SESSION))
        return;
    c->paused &= ~WEFT_PAUSE_SESSION;
    if (c->link) { /* its link resumes, from the idle callback too */
        weft__relay_update(c);
        return;
    }
    c->resume_due = 1;
    if (d->srv->have_resume)
        uv_idle_start(&d->srv->resume, on_resume);
}

void weft_conn_relay_hold(weft_conn *link, int hold)
{
    weft_daemon *d = link->d;

    if (hold) {
        if (link->relay_holds++ == 0) {
            link->paused |= WEFT_PAUSE_RELAY;
            if (update_reading(link) != 0)
                weft_conn_close(link);
        }
        return;
    }
    if (link->relay_holds == 0 || --link->relay_holds > 0)
        return;
    link->paused &= ~WEFT_PAUSE_RELAY;
    link->resume_due = 1; /* never inside the caller: on_resume feeds it */
    if (d->srv->have_resume)
        uv_idle_start(&d->srv->resume, on_resume);
}

/* Pauses c for max_buffered; the unfed bytes stay in its stash. */
static void pause_buffered(weft_conn *c)
{
    weft_daemon *d = c->d;

    if (d->srv->npaused_buffered++ == 0)
        weft_limit_hit(d, WEFT_LIMIT_MAX_BUFFERED);
    c->paused |= WEFT_PAUSE_BUFFERED;
    uv_read_stop(&c->h.stream);
    weft_conn_log(c, WEFT_LOG_DEBUG, "%llu bytes of frames buffered in all, "
                  "max_buffered is %llu: reading paused",
                  (unsigned long long)d->srv->buffered,
                  (unsigned long long)d->cfg.max_buffered);
}

/* The frame limit of c for Envelopes of at most max bytes: a sealed
 * frame carries its MAC's tag beyond the Envelope (proto/mac.h). */
static size_t frame_limit(const weft_conn *c, size_t max)
{
    return max + (c->mac ? WEFT_MAC_TAG : 0);
}

/* c's user is known (its Auth accepted, or its Hello with auth = none):
 * it leaves the pre-authentication bounds, and its frames may be as
 * large as a Hello's (max_frame once it said Hello). Between frames. */
static void authenticated(weft_conn *c)
{
    weft_daemon *d = c->d;

    weft_preauth_leave(c);
    if (!weft_connmode_joined(c->mode) && !c->reader.payload &&
        c->reader.hdr_len == 0)
        c->reader.max_frame = frame_limit(
            c, d->cfg.max_frame < WEFT_MAX_HELLO_FRAME ? d->cfg.max_frame
                                                       : WEFT_MAX_HELLO_FRAME);
}

/* Feeds the stashed bytes to the frame reader and handles each
 * complete frame, until they are used up or the connection is paused or
 * closing. A new frame is started only while d->srv->buffered is below
 * max_buffered; while stopping, none is. */
static void consume(weft_conn *c)
{
    weft_daemon *d = c->d;

    while (c->stash_len > 0 && !weft_conn_closing(c) && !c->paused) {
        const uint8_t *p = c->stash + c->stash_off;
        size_t left = c->stash_len;
        uint8_t *frame = NULL;
        uint32_t flen = 0;
        int rc;

        if (c->preauth && (c->has_peer_uid || c->charged))
            authenticated(c);
        if (!c->reader.payload && d->stopping) {
            c->stash_len = 0; /* not acked: the client sends it again */
            stop_conn(c);
            return;
        }
        if (!c->reader.payload && !c->preauth &&
            d->srv->buffered >= d->cfg.max_buffered) {
            pause_buffered(c);
            return;
        }
        if (c->reader.hdr_len == 0) /* idle_timeout: from its beginning */
            c->last_frame = uv_now(d->loop);
        rc = weft_frame_reader_feed(&c->reader, &p, &left, &frame, &flen);
        c->stash_off += (uint32_t)(c->stash_len - left);
        c->stash_len = (uint32_t)left;
        if (rc == WEFT_ETOOBIG && c->preauth &&
            c->reader.max_frame == d->cfg.max_preauth_frame) {
            weft_conn_fail_limit(c, WEFT_LIMIT_MAX_PREAUTH_FRAME,
                                 WEFT_ETOOBIG, "frame of %u bytes before "
                                 "authentication: max_preauth_frame is %llu",
                                 c->reader.payload_len, (unsigned long long)
                                     d->cfg.max_preauth_frame);
            return;
        }
        if (rc == WEFT_ETOOBIG && !weft_connmode_joined(c->mode) &&
            c->reader.max_frame < d->cfg.max_frame) {
            weft_conn_fail_limit(c, WEFT_LIMIT_MAX_FRAME, WEFT_ETOOBIG,
                                 "frame of %u bytes before Hello (at most "
                                 "%u bytes until then)",
                                 c->reader.payload_len,
                                 (unsigned)c->reader.max_frame);
            return;
        }
        if (rc == WEFT_ETOOBIG) {
            weft_conn_fail_limit(c, WEFT_LIMIT_MAX_FRAME, WEFT_ETOOBIG,
                                 "frame of %u bytes exceeds max_frame (%llu "
                                 "bytes)", c->reader.payload_len,
                                 (unsigned long long)c->reader.max_frame);
            return;
        }
        if (rc < 0) {
            weft_conn_fail(c, rc, "cannot receive frame: %s",
                           weft_strerror(rc));
            return;
        }
        if (rc == 0) {
            account(c, weft_frame_reader_allocated(&c->reader));
            continue;
        }
        c->last_frame = uv_now(d->loop);
        rc = handle_frame(c, frame, flen);
        free(frame);
        account(c, 0);
        if (rc < 0)
            return; /* refused: c is closing */
        if (c->preauth && (c->has_peer_uid || c->charged))
            authenticated(c);
        /* Hello (NodeHello) taken: frames of max_frame (after a SIGHUP
         * too), or of the larger one a HelloAck announced to the member,
         * which fills its batches for that. */
        if (weft_connmode_joined(c->mode))
            c->reader.max_frame = frame_limit(
                c, (d->cfg.max_frame > c->member_max_frame
                        ? d->cfg.max_frame
                        : c->member_max_frame) +
                       (c->mode == WEFT_CONN_NODE ? WEFT_RELAY_OVERHEAD : 0));
    }
    if (c->stash_len == 0)
        drop_stash(c);
    if (c->stash_len == 0 && !c->reader.payload && d->stopping &&
        !weft_conn_closing(c))
        stop_conn(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    weft_conn *c = s->data;

    if (nread < 0) {
        if (nread != UV_EOF)
            weft_connlog(c, WEFT_CONNLOG_READ_FAILED, WEFT_LOG_INFO,
                         "read failed: %s", uv_strerror((int)nread));
        else if (weft_frame_reader_pending(&c->reader) > 0)
            weft_connlog(c, WEFT_CONNLOG_CUT_FRAME, WEFT_LOG_WARNING,
                         "connection closed in the middle of a frame");
        weft_conn_close(c);
        return;
    }
    assert(c->stash_len == 0 && (uint8_t *)buf->base == c->d->srv->rbuf);
    c->stash = c->d->srv->rbuf;
    c->stash_off = 0;
    c->stash_len = (uint32_t)nread;
    consume(c);
    if (c->stash_len > 0 && !weft_conn_closing(c)) {
        /* paused with bytes left: they wait in a copy of c's own */
        uint8_t *own = malloc(c->stash_len);
        if (!own) {
            uint32_t n = c->stash_len;
            c->stash = NULL;
            c->stash_len = 0;
            weft_conn_fail(c, WEFT_ENOMEM, "out of memory keeping %u bytes "
                           "read", (unsigned)n);
            return;
        }
        memcpy(own, c->stash + c->stash_off, c->stash_len);
        c->stash = own;
        c->stash_off = 0;
    } else if (c->stash == c->d->srv->rbuf) {
        c->stash = NULL;
        c->stash_len = 0;
    }
    weft_conn_check_pending(c);
}

int weft__conn_read_start(weft_conn *c)
{
    return uv_read_start(&c->h.stream, on_alloc, on_read);
}

/* libuv writes to sockets with write(2), without MSG_NOSIGNAL: a peer
 * that reset its connection while acks were still queued for it would
 * raise SIGPIPE and kill weftd. Ignored, the write fails with EPIPE and
 * on_write closes that one connection. A handler someone installed is
 * left alone. */
static void ignore_sigpipe(void)
{
    struct sigaction sa;

    if (sigaction(SIGPIPE, NULL, &sa) != 0 || sa.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
}

int weft_server_start(weft_daemon *d, const weft_server_cbs *cbs)
{
    assert(cbs && cbs->on_frame && cbs->on_closed && cbs->on_stop);
    ignore_sigpipe();
    d->server_cbs = cbs;
    uv_idle_init(d->loop, &d->srv->resume);
    d->srv->resume.data = d;
    d->srv->have_resume = 1;
    return weft__server_listen(d);
}

void weft_server_stop(weft_daemon *d)
{
    weft__server_stop_listening(d);
    /* What was received is written (and handed back, acks going nowhere:
     * the connections close below) before weftd goes. */
    if (d->server_cbs)
        d->server_cbs->on_stop(d);
    if (d->srv->have_resume) {
        uv_close((uv_handle_t *)&d->srv->resume, NULL);
        d->srv->have_resume = 0;
    }
    if (d->srv->have_shutdown_timer) {
        uv_close((uv_handle_t *)&d->srv->shutdown_timer, NULL);
        d->srv->have_shutdown_timer = 0;
    }
    /* Closed now rather than after their writes drain: a peer that does
     * not read would hold its shutdown, and so the loop, forever. What
     * was journaled is safe; a client resumes from its HelloAck. */
    for (weft_conn *c = d->srv->conns; c; c = c->next) {
        weft_conn_close(c);
        weft__conn_close_now(c);
    }
}

static void on_shutdown_timeout(uv_timer_t *t)
{
    weft_daemon *d = t->data;
    unsigned left = 0, running = 0, queued = 0, in_flight = 0;

    for (const weft_conn *c = d->srv->conns; c; c = c->next)
        left++;
    if (d->status_src) /* the traces' figures, which ingest cannot see */
        d->status_src->conversions(d, &running, &queued, &in_flight);
    weft_dlog(d, WEFT_LOG_WARNING, "shutdown_timeout (%llu s) reached: "
              "closing %u connections still draining, %u conversions still "
              "running", (unsigned long long)d->cfg.shutdown_timeout, left,
              in_flight);
    weft_server_stop(d);
    if (d->jobs > 0) {
        /* A worker cannot be cancelled. Exiting is as safe as SIGKILL:
         * journals go only after the archive and its catalog row are
         * committed, and the next start converts again. */
        weft_dlog(d, WEFT_LOG_WARNING, "exiting with %u jobs unfinished; "
                  "their traces are converted again at the next start",
                  d->jobs);
        fflush(stderr);
        _exit(0);
    }
}

void weft_server_drain(weft_daemon *d)
{
    assert(d->stopping);
    weft__server_stop_listening(d);
    if (d->srv->have_resume) {
        uv_close((uv_handle_t *)&d->srv->resume, NULL);
        d->srv->have_resume = 0;
    }
    uv_timer_init(d->loop, &d->srv->shutdown_timer);
    d->srv->shutdown_timer.data = d;
    d->srv->have_shutdown_timer = 1;
    uv_timer_start(&d->srv->shutdown_timer, on_shutdown_timeout,
                   d->cfg.shutdown_timeout * 1000, 0);
    uv_unref((uv_handle_t *)&d->srv->shutdown_timer); /* no reason to stay */
    for (weft_conn *c = d->srv->conns; c; c = c->next) {
        if (weft_conn_closing(c))
            continue;
        if (c->paused & WEFT_PAUSE_BUFFERED) {
            c->paused &= ~WEFT_PAUSE_BUFFERED;
            d->srv->npaused_buffered--;
        }
        if (!c->reader.payload) {
            /* Between frames: what was read of the next one is dropped
             * unacknowledged; the client sends it again. */
            weft_conn_log(c, WEFT_LOG_DEBUG, "stopping: closing between "
                          "frames");
            c->stash_len = 0;
            stop_conn(c);
        } else {
            weft_conn_log(c, WEFT_LOG_INFO, "stopping: finishing the frame "
                          "of %u bytes being received",
                          c->reader.payload_len);
            unpause(c, WEFT_PAUSE_PENDING);
        }
    }
}

void weft_server_tick(weft_daemon *d)
{
    uint64_t now = uv_now(d->loop), limit = d->cfg.idle_timeout * 1000;
    uint64_t quiet = d->cfg.session_timeout * 1000;
    uint64_t preauth = d->cfg.preauth_timeout * 1000;

    for (weft_conn *c = d->srv->conns; c; c = c->next) {
        int mid_frame = c->reader.hdr_len > 0;
        if (c->preauth && !weft_conn_closing(c) && !c->auth_job &&
            now - c->accepted >= preauth) {
            /* From accept, whatever it sent or weftd held (preauth.h) */
            weft_limit_hit(d, WEFT_LIMIT_PREAUTH_TIMEOUT);
            weft_conn_fail(c, WEFT_ELIMIT, "preauth_timeout: not "
                           "authenticated within %llu s of connecting",
                           (unsigned long long)d->cfg.preauth_timeout);
            continue;
        }
        if (weft_conn_closing(c) || (c->paused & ~WEFT_PAUSE_PENDING))
            continue;
        if (c->mode == WEFT_CONN_NODE && !mid_frame) {
            /* A node's link: its Heartbeats keep it (nodes.h). */
            uint64_t node_quiet = WEFT_NODE_SILENT_BEATS * 1000 *
                                  d->cfg.cluster_heartbeat;
            if (now - c->last_frame < node_quiet)
                continue;
            weft_conn_fail(c, WEFT_ELIMIT, "node silent: nothing received "
                           "for %llu s (%d heartbeats)",
                           (unsigned long long)(node_quiet / 1000),
                           WEFT_NODE_SILENT_BEATS);
            continue;
        }
        if (c->mode == WEFT_CONN_MEMBER && !mid_frame) {
            /* A session between frames: libweft's Heartbeat keeps it. */
            if (quiet == 0 || now - c->last_frame < quiet)
                continue;
            weft_limit_hit(d, WEFT_LIMIT_SESSION_TIMEOUT);
            weft_conn_fail(c, WEFT_ELIMIT, "session_timeout: nothing "
                           "received for %llu s",
                           (unsigned long long)d->cfg.session_timeout);
            continue;
        }
        if (limit == 0 || now - c->last_frame < limit)
            continue;
        weft_limit_hit(d, WEFT_LIMIT_IDLE_TIMEOUT);
        if (weft_connmode_joined(c->mode))
            weft_conn_fail(c, WEFT_ELIMIT, "idle_timeout: a frame was begun "
                           "(%u of %u bytes arrived), then nothing for %llu s",
                           c->reader.have, c->reader.payload_len,
                           (unsigned long long)d->cfg.idle_timeout);
        else
            weft_conn_fail(c, WEFT_ELIMIT, "idle_timeout: no Hello within "
                           "%llu s of connecting",
                           (unsigned long long)d->cfg.idle_timeout);
    }
}
