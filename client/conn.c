/* conn.c - libweft's connection to weftd: connecting (TCP or a Unix
 * socket), the Hello and its HelloAck, resuming after a reconnection,
 * and the frames that weftd sends (Acks, Errors). The clock offset
 * measured over the connection is offset.c's.
 *
 * DESIGN
 * Reconnection: batches and definitions chunks stay in flight (in send
 * order) until acknowledged. When a new connection's HelloAck arrives it
 * says which Definitions and, per location, which batch sequence numbers
 * weftd holds. Everything in flight goes back to the front of the queues,
 * what weftd holds is released, and the rest is sent again in the
 * original order, so weftd sees every sequence without gap or duplicate.
 * A HelloAck that holds less than weftd acknowledged before (its spool was
 * lost, or the trace was converted meanwhile) or more than was sent
 * (another process uses this rank) is refused (WEFT_EPROTO: tracing goes
 * off).
 *
 * Everything here runs on the sender thread, or on the opening thread
 * before the sender starts; the socket is non-blocking and every wait has
 * a deadline (ms, CLOCK_MONOTONIC).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "auth.h"
#include "client_internal.h"
#include "clock.h"
#include "codec.h"
#include "fifo.h"
#include "frame.h"
#include "procid.h"
#include "record.h"
#include "client_session.h"
#include "weft_errors.h"

#define warn weft__warn

#define WEFT__CONNECT_TIMEOUT_MS 5000u
/* How long the answer to a Hello may take at least: a weftd that
 * accepted the connection is busy, not gone, so it gets WEFT_STALL_MS if
 * that is longer (see hello_wait_ms). */
#define WEFT__HELLO_TIMEOUT_MS 5000u

/* When weft_close began and asked the sender to finish within
 * WEFT_CLOSE_TIMEOUT_MS: that deadline (ms, trace clock), else never. */
static uint64_t close_deadline(void)
{
    uint64_t d = UINT64_MAX;

    pthread_mutex_lock(&weft__S.mu);
    if (weft__S.closing)
        d = weft__S.close_start_ms + weft__S.close_limit_ms;
    pthread_mutex_unlock(&weft__S.mu);
    return d;
}

/* See client_session.h. */
int weft__wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        struct pollfd p[2] = { { fd, events, 0 },
                               { weft__S.wake_fd, POLLIN, 0 } };
        uint64_t now = weft__now_ms();
        int rc;
        if (now >= deadline)
            return 0;
        rc = poll(p, weft__S.wake_fd >= 0 ? 2 : 1,
                  (int)weft__min_u64(deadline - now, INT_MAX));
        if (rc > 0 && (p[0].revents & (events | POLLERR | POLLHUP)))
            return 1;
        if (rc > 0) {
            /* The sender loop re-checks everything it could have been
             * woken for. */
            weft__wake_fd_drain();
            deadline = weft__min_u64(deadline, close_deadline());
            continue;
        }
        if (rc == 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

/* See client_session.h. */
int weft__fd_aside(int fd)
{
    struct rlimit rl;
    long min = WEFT__FD_ASIDE;
    int high;

    if (fd < 0 || fd >= WEFT__FD_ASIDE / 2)
        return fd;
    /* EINVAL: the limit of descriptors is at most WEFT__FD_ASIDE (asked
     * only then: one system call fewer at every connection). */
    high = fcntl(fd, F_DUPFD_CLOEXEC, (int)min);
    if (high < 0 && errno == EINVAL && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur <= min) {
        min = (long)rl.rlim_cur / 2;
        high = min <= fd ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, (int)min);
    }
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

/* Connects one address, non-blocking, before the deadline. Returns the
 * socket or -1 with why filled. */
static int connect_addr(const struct sockaddr *sa, socklen_t salen,
                        int family, uint64_t deadline, char *why,
                        size_t whylen)
{
    int fd = weft__fd_aside(socket(family,
                                   SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                   0));
    int err = 0;
    socklen_t errlen = sizeof err;

    if (fd < 0) {
        snprintf(why, whylen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, sa, salen) == 0)
        return fd;
    if (errno != EINPROGRESS && errno != EINTR) {
        snprintf(why, whylen, "%s", strerror(errno));
        goto fail;
    }
    switch (weft__wait_fd(fd, POLLOUT, deadline)) {
    case 1:
        break;
    case 0:
        snprintf(why, whylen, "no connection within %u ms",
                 WEFT__CONNECT_TIMEOUT_MS);
        goto fail;
    default:
        snprintf(why, whylen, "poll: %s", strerror(errno));
        goto fail;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
        err = errno;
    if (err) {
        snprintf(why, whylen, "%s", strerror(err));
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}

/* Connects to the configured server before the deadline. Returns the
 * socket (non-blocking) or -1 with why filled. */
static int connect_server(const weft__config *c, uint64_t deadline,
                          char *why, size_t whylen)
{
    struct addrinfo hints, *res = NULL;
    int fd = -1, rc, one = 1;

    if (c->is_unix) {
        struct sockaddr_un sun;
        memset(&sun, 0, sizeof sun);
        sun.sun_family = AF_UNIX;
        memcpy(sun.sun_path, c->path, strlen(c->path) + 1);
        return connect_addr((const struct sockaddr *)&sun, sizeof sun,
                            AF_UNIX, deadline, why, whylen);
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(c->host, c->port, &hints, &res);
    if (rc != 0) {
        snprintf(why, whylen, "%s", rc == EAI_SYSTEM ? strerror(errno)
                                                     : gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        fd = connect_addr(ai->ai_addr, ai->ai_addrlen, ai->ai_family,
                          deadline, why, whylen);
    freeaddrinfo(res);
    /* Small frames (Goodbye, the last partial batches) should not wait. */
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* The next complete frame from fd. Returns 1 with *env (the caller frees
 * it with weft_frame_free_envelope), 0 when the socket has no more bytes
 * for now, WEFT_ECLOSED at end of stream, WEFT_EIO or WEFT_EPROTO with
 * why filled. */
int weft__input_next(int fd, weft__input *in, Weft__Envelope **env,
                      char *why, size_t whylen)
{
    for (;;) {
        while (in->off < in->len) {
            const uint8_t *p = in->buf + in->off;
            size_t left = in->len - in->off;
            uint8_t *frame = NULL;
            uint32_t flen = 0;
            int rc = weft_frame_reader_feed(&in->rd, &p, &left, &frame, &flen);
            in->off = in->len - left;
            if (rc < 0) {
                snprintf(why, whylen, "bad frame from weftd: %s",
                         weft_strerror(rc));
                return WEFT_EPROTO;
            }
            if (rc == 1) {
                if (in->mac) {
                    char bad[128];
                    ssize_t n = weft_mac_open(in->mac, frame, flen, bad,
                                              sizeof bad);
                    if (n < 0) {
                        free(frame);
                        snprintf(why, whylen, "weftd's %s", bad);
                        return WEFT_EPROTO;
                    }
                    flen = (uint32_t)n;
                }
                *env = weft_frame_unpack(frame, flen);
                free(frame);
                if (!*env) {
                    snprintf(why, whylen, "weftd sent an undecodable frame "
                             "of %" PRIu32 " bytes", flen);
                    return WEFT_EPROTO;
                }
                return 1;
            }
        }
        in->off = in->len = 0;
        ssize_t n = recv(fd, in->buf, sizeof in->buf, MSG_DONTWAIT);
        if (n > 0) {
            in->len = (size_t)n;
            continue;
        }
        if (n == 0) {
            snprintf(why, whylen, "weftd closed the connection");
            return WEFT_ECLOSED;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        if (errno != EINTR) {
            snprintf(why, whylen, "%s", strerror(errno));
            return WEFT_EIO;
        }
    }
}

/* See client_session.h. */
ssize_t weft__pack(const Weft__Envelope *env, uint8_t **out)
{
    weft_mac *m = weft__S.in.mac;
    ssize_t n = weft_frame_pack_room(env, m ? WEFT_MAC_TAG : 0, out);

    if (n < 0 || !m)
        return n;
    return (ssize_t)weft_mac_seal_in_place(m, *out, (size_t)n);
}

/* See client_session.h. */
void weft__input_reset(weft__input *in)
{
    weft_frame_reader_free(&in->rd);
    weft_mac_free(in->mac);
    memset(in, 0, sizeof *in);
    weft_frame_reader_init(&in->rd, WEFT_DEFAULT_MAX_FRAME);
}

/* See client_session.h. */
int weft__send_all(int fd, const uint8_t *buf, size_t len, uint64_t deadline,
                   char *why, size_t whylen)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
            errno != EINTR) {
            snprintf(why, whylen, "%s", strerror(errno));
            return -1;
        }
        if (weft__wait_fd(fd, POLLOUT, deadline) <= 0) {
            snprintf(why, whylen, "weftd does not take what is sent");
            return -1;
        }
    }
    return 0;
}

/* The command line, arguments separated by spaces. */
static void read_command(char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/cmdline", "re");
    size_t n = 0;

    if (f) {
        n = fread(out, 1, cap - 1, f);
        fclose(f);
    }
    if (n == 0) {
        snprintf(out, cap, "%s", program_invocation_name);
        return;
    }
    while (n > 0 && out[n - 1] == 0)
        n--;
    for (size_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
    out[n] = 0;
}

/* The wall clock and the trace clock at one moment: the wall clock read
 * between two trace clock reads, keeping the tightest of a few tries. */
static void clock_pair(uint64_t *realtime, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;

    for (int i = 0; i < 5; i++) {
        struct timespec ts;
        uint64_t m1 = weft__now(), m2;
        clock_gettime(CLOCK_REALTIME, &ts);
        m2 = weft__now();
        if (m2 - m1 < best) {
            best = m2 - m1;
            *mono = m1 + (m2 - m1) / 2;
            *realtime = (uint64_t)ts.tv_sec * 1000000000u +
                        (uint64_t)ts.tv_nsec;
        }
    }
}

/* Packs this process's Hello (malloc'd into *frame). Returns its length
 * or a WEFT_E* code. */
static ssize_t pack_hello(const weft__config *c, uint8_t **frame)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Tag tags[WEFT__MAX_TAGS], *tagp[WEFT__MAX_TAGS];
    char host[256] = "", command[4096];

    gethostname(host, sizeof host - 1);
    read_command(command, sizeof command);
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)c->trace;
    h.rank = c->rank;
    h.size = c->size;
    h.hostname = host;
    h.pid = (uint32_t)getpid();
    /* The effective uid: the one SO_PEERCRED and a MUNGE credential name
     * (a set-user-ID program's traces are its owner's). */
    h.uid = (uint32_t)geteuid();
    h.command = command;
    h.job_id = (char *)c->job_id;
    h.run = (char *)c->run;
    h.tree = c->tree;
    h.root = c->root;
    h.parent_pid = c->tree ? (uint32_t)getppid() : 0;
    if (!c->is_unix) {
        /* Over TCP weftd tells a process that ended from one that lives
         * by these (procwatch.c); over the Unix socket it reads the
         * peer's own /proc entry, so this process need not read its. */
        h.proc_start = weft_proc_self_start();
        h.pid_ns = weft_proc_pidns();
    }
    h.timer_resolution = c->resolution;
    h.clock = (char *)c->clock_name;
    h.resumes = atomic_load(&weft__S.hello_acked);
    for (uint32_t i = 0; i < c->ntags; i++) {
        weft__tag__init(&tags[i]);
        tags[i].key = (char *)c->tagbuf + c->tag_key[i];
        tags[i].value = (char *)c->tagbuf + c->tag_value[i];
        tagp[i] = &tags[i];
    }
    h.n_tags = c->ntags;
    h.tags = tagp;
    clock_pair(&h.realtime_ns, &h.clock_at_realtime);
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    return weft__pack(&env, frame);
}

/* Reads weftd's answer to `what` (the frame just sent) on fd from the
 * input S.in (which then holds what followed it). Returns 0 with *replyp
 * (an envelope of kind `expect`), WEFT_ECONNECT, or WEFT_EPROTO when
 * weftd refused (*codep, why). */
static int await_reply(int fd, uint64_t deadline, uint32_t wait_ms,
                       const char *what, int expect,
                       Weft__Envelope **replyp, int *codep, char *why,
                       size_t whylen)
{
    Weft__Envelope *reply = NULL;
    int rc;

    while ((rc = weft__input_next(fd, &weft__S.in, &reply, why, whylen)) ==
           0) {
        if (weft__wait_fd(fd, POLLIN, deadline) <= 0) {
            snprintf(why, whylen, "no answer to %s within %u ms", what,
                     wait_ms);
            return WEFT_ECONNECT;
        }
    }
    if (rc == WEFT_ECLOSED || (rc < 0 && !why[0]))
        snprintf(why, whylen, "%s: %s", what,
                 rc == WEFT_ECLOSED ? "weftd closed the connection before "
                                      "answering"
                                    : weft_strerror(rc));
    if (rc < 0)
        return WEFT_ECONNECT;
    if ((int)reply->msg_case == expect) {
        *replyp = reply;
        return 0;
    }
    if (reply->msg_case == WEFT__ENVELOPE__MSG_ERROR) {
        if (reply->error->message && reply->error->message[0])
            snprintf(why, whylen, "%s", reply->error->message);
        else  /* a weftd says why; a peer that does not still failed */
            snprintf(why, whylen, "weftd refused %s (error %d, no message)",
                     what, (int)reply->error->code);
        *codep = reply->error->code;
        rc = WEFT_EPROTO;
    } else {
        snprintf(why, whylen, "weftd answered %s with %s", what,
                 weft_frame_kind_name(reply->msg_case));
        rc = WEFT_ECONNECT;
    }
    weft_frame_free_envelope(reply);
    return rc;
}

/* Over TCP weftd speaks first: reads its Challenge and checks the
 * version and the uid it says it runs as (unless WEFT_AUTH=none). 0
 * with *chp (free it with weft_frame_free_envelope), or as await_reply;
 * WEFT_EAUTH with why. */
static int read_challenge(const weft__config *c, int fd, uint64_t deadline,
                          uint32_t wait_ms, Weft__Envelope **chp,
                          int *codep, char *why, size_t whylen)
{
    Weft__Envelope *env = NULL;
    const Weft__Challenge *ch;
    int rc;

    rc = await_reply(fd, deadline, wait_ms, "connecting (weftd's Challenge; "
                     "a weftd older than protocol 6 sends none)",
                     WEFT__ENVELOPE__MSG_CHALLENGE, &env, codep, why,
                     whylen);
    if (rc < 0)
        return rc;
    ch = env->challenge;
    if (ch->protocol_version != WEFT_PROTOCOL_VERSION) {
        snprintf(why, whylen, "weftd speaks protocol %u, this libweft %u",
                 (unsigned)ch->protocol_version, WEFT_PROTOCOL_VERSION);
        *codep = WEFT_EVERSION;
        rc = WEFT_EPROTO;
    } else if (!c->auth_none &&
               !weft__auth_server_uid_ok(c, ch->server_uid, why, whylen)) {
        rc = WEFT_EAUTH;
    }
    if (rc < 0) {
        weft_frame_free_envelope(env);
        return rc;
    }
    *chp = env;
    return 0;
}

/* Proves who this process is and checks who weftd is (client/auth.h)
 * before anything else is said; over TCP then turns the MAC on
 * (weft__S.in.mac). 0, WEFT_EAUTH with why (munged or the server's
 * answer), or as await_reply. */
static int authenticate(const weft__config *c, int fd, uint64_t deadline,
                        uint32_t wait_ms, int *codep, char *why,
                        size_t whylen)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT, *ch = NULL, *reply = NULL;
    Weft__Auth auth = WEFT__AUTH__INIT;
    weft_bind b;
    uint8_t *frame = NULL;
    uint32_t server_uid;
    char *cred = NULL;
    ssize_t len;
    int rc;

    memset(&b, 0, sizeof b);
    if (c->is_unix)
        return c->auth_none ? 0 : weft__auth_check_unix(c, fd, why, whylen);
    if ((rc = read_challenge(c, fd, deadline, wait_ms, &ch, codep, why,
                             whylen)) < 0 || c->auth_none)
        goto out;
    server_uid = ch->challenge->server_uid;
    if (weft__lazylib_load(why, whylen) < 0) { /* MUNGE and the MAC */
        rc = WEFT_EAUTH;
        goto out;
    }
    if ((rc = weft__auth_bind(fd, ch->challenge->nonce.data,
                              ch->challenge->nonce.len, &b, why,
                              whylen)) < 0 ||
        (rc = weft__auth_credential(c, server_uid, &b, &cred, why,
                                    whylen)) < 0)
        goto out;
    auth.protocol_version = WEFT_PROTOCOL_VERSION;
    auth.credential.data = (uint8_t *)cred;
    auth.credential.len = strlen(cred);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &auth;
    if ((len = weft_frame_pack(&env, &frame)) < 0) {
        snprintf(why, whylen, "%s", weft_strerror((int)len));
        rc = WEFT_ECONNECT;
        goto out;
    }
    if (weft__send_all(fd, frame, (size_t)len, deadline, why, whylen) < 0) {
        rc = WEFT_ECONNECT;
        goto out;
    }
    if ((rc = await_reply(fd, deadline, wait_ms, "Auth",
                          WEFT__ENVELOPE__MSG_AUTH_ACK, &reply, codep, why,
                          whylen)) < 0 ||
        (rc = weft__auth_check_ack(&b, reply->auth_ack->proof.data,
                                   reply->auth_ack->proof.len, server_uid,
                                   why, whylen)) < 0)
        goto out;
    if (!(weft__S.in.mac = weft_mac_new(b.key, WEFT_MAC_CLIENT))) {
        snprintf(why, whylen, "out of memory");
        rc = WEFT_ECONNECT;
    }
out:
    memset(&b, 0, sizeof b);
    weft_frame_free_envelope(reply);
    weft_frame_free_envelope(ch);
    free(frame);
    free(cred);
    return rc;
}

/* How long weftd may take to answer the Hello and what comes before it:
 * a weftd that accepted the connection is busy, not gone, so it is waited
 * for as long as any other lack of progress, WEFT_STALL_MS: giving up
 * here would turn tracing off at open. */
static uint32_t hello_wait_ms(const weft__config *c)
{
    return c->stall_ms > WEFT__HELLO_TIMEOUT_MS ? c->stall_ms
                                                : WEFT__HELLO_TIMEOUT_MS;
}

/* See client_session.h. Connects, proves who this process is and checks
 * who weftd is (unless WEFT_AUTH=none), and writes the Hello, giving up
 * at the deadline (ms; connecting and the answers also have their own
 * time limits). */
int weft__connect_send_hello(const weft__config *c, uint64_t deadline,
                             int *fdp, int *reached, int *codep, char *why,
                             size_t whylen)
{
    uint8_t *frame = NULL;
    uint64_t deadline_connect;
    uint32_t hello_ms = hello_wait_ms(c);
    ssize_t len;
    int fd, rc;

    *codep = 0;
    deadline_connect = weft__min_u64(deadline, weft__now_ms() +
                                                   WEFT__CONNECT_TIMEOUT_MS);
    fd = connect_server(c, deadline_connect, why, whylen);
    if (fd < 0)
        return WEFT_ECONNECT;
    if (reached)
        *reached = 1;
    deadline = weft__min_u64(deadline, weft__now_ms() + hello_ms);
    weft__input_reset(&weft__S.in);
    if ((rc = authenticate(c, fd, deadline, hello_ms, codep, why,
                           whylen)) < 0)
        goto out;
    len = pack_hello(c, &frame);
    if (len < 0) {
        snprintf(why, whylen, "%s", weft_strerror((int)len));
        rc = WEFT_ECONNECT;
        goto out;
    }
    if (weft__send_all(fd, frame, (size_t)len, deadline, why, whylen) < 0)
        rc = WEFT_ECONNECT;
out:
    free(frame);
    if (rc < 0) {
        close(fd);
    } else {
        *fdp = fd;
        atomic_fetch_add(&weft__S.conn_serial, 1);
    }
    return rc;
}

/* See client_session.h. */
int weft__await_hello_ack(const weft__config *c, int fd, uint64_t deadline,
                          Weft__Envelope **ackp, int *codep, char *why,
                          size_t whylen)
{
    uint32_t hello_ms = hello_wait_ms(c);

    *codep = 0;
    deadline = weft__min_u64(deadline, weft__now_ms() + hello_ms);
    return await_reply(fd, deadline, hello_ms, "Hello",
                       WEFT__ENVELOPE__MSG_HELLO_ACK, ackp, codep, why,
                       whylen);
}

/* See client_session.h. */
int weft__connect_and_hello(const weft__config *c, uint64_t deadline,
                            int *fdp, Weft__Envelope **ackp, int *codep,
                            char *why, size_t whylen)
{
    int fd = -1, rc;

    rc = weft__connect_send_hello(c, deadline, &fd, NULL, codep, why,
                                  whylen);
    if (rc == 0)
        rc = weft__await_hello_ack(c, fd, deadline, ackp, codep, why, whylen);
    if (rc < 0 && fd >= 0)
        close(fd);
    else if (rc == 0)
        *fdp = fd;
    return rc;
}

static size_t count_list(const weft__buf *b)
{
    size_t n = 0;

    for (; b; b = b->next)
        n++;
    return n;
}

/* The last batch sequence number of location `loc` that the HelloAck says
 * weftd holds (0: none). */
static uint64_t held_seq(const Weft__HelloAck *a, uint32_t loc)
{
    for (size_t i = 0; i < a->n_locations; i++)
        if (a->locations[i]->location == loc)
            return a->locations[i]->seq;
    return 0;
}

/* Everything in flight goes back to the front of its queue, keeping the
 * send order and the sequence numbers. mu held. */
static void requeue_in_flight_locked(void)
{
    if (weft__S.f_head) {
        weft__S.f_tail->next = weft__S.q_head;
        if (!weft__S.q_head)
            weft__S.q_tail = weft__S.f_tail;
        weft__S.q_head = weft__S.f_head;
        weft__S.f_head = weft__S.f_tail = NULL;
    }
    if (weft__S.df_head) {
        weft__S.df_tail->next = weft__S.d_head;
        if (!weft__S.d_head)
            weft__S.d_tail = weft__S.df_tail;
        weft__S.d_head = weft__S.df_head;
        weft__S.df_head = weft__S.df_tail = NULL;
    }
}

/* weftd must hold at least everything it acknowledged and nothing this
 * process did not send. Returns 0 or WEFT_EPROTO with why. mu held, in
 * flight requeued. */
static int check_held_locked(const Weft__HelloAck *a, char *why,
                             size_t whylen)
{
    uint64_t first, h = a->definitions_seq;

    first = weft__S.d_head && weft__S.d_head->seq ? weft__S.d_head->seq
                                                  : weft__S.defs_seq + 1;
    if (h > weft__S.defs_seq) {
        snprintf(why, whylen, "weftd holds Definitions %" PRIu64 " but this "
                 "process sent %" PRIu64 " (does another process use rank "
                 "%u of trace '%s'?)", h, weft__S.defs_seq, weft__S.cfg.rank,
                 weft__S.cfg.trace);
        return WEFT_EPROTO;
    }
    if (h + 1 < first) {
        snprintf(why, whylen, "weftd holds Definitions up to %" PRIu64
                 " only, but had acknowledged up to %" PRIu64 " (was the "
                 "trace converted meanwhile, or its spool lost?)", h,
                 first - 1);
        return WEFT_EPROTO;
    }
    for (size_t i = 0; i < a->n_locations; i++) {
        if (a->locations[i]->seq &&
            !weft__thread_of_locked(a->locations[i]->location)) {
            snprintf(why, whylen, "weftd holds batches of thread %u, which "
                     "this process never used (does another process use "
                     "rank %u of trace '%s'?)", a->locations[i]->location,
                     weft__S.cfg.rank, weft__S.cfg.trace);
            return WEFT_EPROTO;
        }
    }
    for (weft__thread *t = weft__S.threads; t; t = t->next) {
        uint64_t low = t->seq + 1;
        h = held_seq(a, t->location);
        for (weft__buf *b = weft__S.q_head; b; b = b->next) {
            if (b->location == t->location) {
                low = b->seq;
                break;
            }
        }
        if (h > t->seq) {
            snprintf(why, whylen, "weftd holds batch %" PRIu64 " of thread "
                     "%u but this process sent %" PRIu64 " (does another "
                     "process use rank %u of trace '%s'?)", h, t->location,
                     t->seq, weft__S.cfg.rank, weft__S.cfg.trace);
            return WEFT_EPROTO;
        }
        if (h + 1 < low) {
            snprintf(why, whylen, "weftd holds batches of thread %u up to %"
                     PRIu64 " only, but had acknowledged up to %" PRIu64
                     " (was the trace converted meanwhile, or its spool "
                     "lost?)", t->location, h, low - 1);
            return WEFT_EPROTO;
        }
    }
    return 0;
}

/* Frees the definitions and batches that the HelloAck says weftd holds;
 * *resend is the batches left to send. mu held. */
static void release_held_locked(const Weft__HelloAck *a, size_t *resend)
{
    weft__buf **lb, *pb = NULL;
    weft__chunk *c;

    /* What weftd holds: numbered chunks are first, in order. */
    while ((c = weft__S.d_head) && c->seq && c->seq <= a->definitions_seq) {
        (void)WEFT_FIFO_SHIFT(weft__S.d_head, weft__S.d_tail);
        free(c->data);
        free(c);
    }
    for (lb = &weft__S.q_head; *lb;) {
        weft__buf *b = *lb;
        if (b->seq <= held_seq(a, b->location)) {
            *lb = b->next;
            weft__buf_free_locked(b);
            continue;
        }
        pb = b;
        lb = &b->next;
    }
    weft__S.q_tail = pb;
    *resend = count_list(weft__S.q_head);
}

/* After a HelloAck on a new connection: everything that was in flight goes
 * back to the front of its queue (keeping the send order and the sequence
 * numbers), and what weftd holds is done with. weftd must hold at least
 * everything it acknowledged and nothing this process did not send. A
 * tree member takes the rank it names (the first time; after that it must
 * name the same). Returns 0 with *resend (batches to send), or WEFT_EPROTO with why. mu
 * held. */
int weft__resume_locked(const Weft__HelloAck *a, size_t *resend, char *why,
                        size_t whylen)
{
    int rc;

    if (weft__S.cfg.tree) {
        /* A tree member's rank is weftd's to give, once. */
        if (weft__S.cfg.rank == UINT32_MAX && a->rank != UINT32_MAX) {
            weft__S.cfg.rank = a->rank;
        } else if (a->rank != weft__S.cfg.rank) {
            snprintf(why, whylen, "weftd says this process is rank %u "
                     "of trace '%s', but it is rank %u", a->rank,
                     weft__S.cfg.trace, weft__S.cfg.rank);
            return WEFT_EPROTO;
        }
    }
    requeue_in_flight_locked();
    rc = check_held_locked(a, why, whylen);
    if (rc < 0)
        return rc;
    release_held_locked(a, resend);
    atomic_store(&weft__S.hello_acked, 1);
    /* Batches fill at most what a frame of max_frame holds (pool.c). */
    weft__S.batch_cap = a->max_frame > WEFT__FRAME_SLACK
                            ? a->max_frame - WEFT__FRAME_SLACK : 0;
    return 0;
}

/* Refusals that may go away: try again later. */
int weft__transient_code(int code)
{
    return code == WEFT_EEXIST || code == WEFT_ELIMIT || code == WEFT_EIO ||
           code == WEFT_ENOMEM;
}

/* Handles one frame from weftd. Returns 0 or a WEFT_E* code with why;
 * *transient then says whether reconnecting may help. */
int weft__handle_frame(const Weft__Envelope *env, int *transient, char *why,
                        size_t whylen)
{
    const Weft__Ack *ack;
    int rc = 0;

    *transient = 0;
    switch (env->msg_case) {
    case WEFT__ENVELOPE__MSG_ACK:
        ack = env->ack;
        pthread_mutex_lock(&weft__S.mu);
        if (ack->definitions) {
            weft__chunk **l = &weft__S.df_head, *prev = NULL;
            while (*l && (*l)->seq != ack->seq) {
                prev = *l;
                l = &(*l)->next;
            }
            if (*l) {
                weft__chunk *c = *l;
                *l = c->next;
                if (weft__S.df_tail == c)
                    weft__S.df_tail = prev;
                free(c->data);
                free(c);
                weft__progress_locked();
            } else {
                rc = WEFT_EPROTO;
            }
        } else {
            weft__buf **l = &weft__S.f_head, *prev = NULL;
            while (*l && ((*l)->location != ack->location ||
                          (*l)->seq != ack->seq)) {
                prev = *l;
                l = &(*l)->next;
            }
            if (*l) {
                weft__buf *b = *l;
                *l = b->next;
                if (weft__S.f_tail == b)
                    weft__S.f_tail = prev;
                weft__buf_free_locked(b);
                weft__progress_locked();
            } else {
                rc = WEFT_EPROTO;
            }
        }
        pthread_mutex_unlock(&weft__S.mu);
        if (rc < 0)
            snprintf(why, whylen, "weftd acknowledged %s %" PRIu64
                     " (location %" PRIu32 ") that is not in flight",
                     ack->definitions ? "definitions" : "batch", ack->seq,
                     ack->location);
        return rc;
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC:
        /* A late answer to a round that clock_sync stopped waiting for
         * (weftd was slow): that measurement was given up, and an answer
         * after its time says nothing about the offset. */
        return 0;
    case WEFT__ENVELOPE__MSG_ERROR:
        snprintf(why, whylen, "weftd ended the session: %s",
                 env->error->message);
        *transient = weft__transient_code(env->error->code);
        return WEFT_EPROTO;
    default:
        snprintf(why, whylen, "unexpected %s frame from weftd",
                 weft_frame_kind_name(env->msg_case));
        return WEFT_EPROTO;
    }
}

