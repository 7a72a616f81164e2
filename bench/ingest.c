/* bench/ingest.c - weftd under many clients, and end to end.
 *
 * Two measurements in one run, against a weftd this program starts
 * (WEFT_BENCH_WEFTD or ./weftd) on a free loopback port and a temporary
 * spool:
 *
 *  1. Fan-in: C concurrent connections (default 1000), each one member of
 *     one trace with one location, streaming B batches of E Enter/Leave
 *     events with at most W batches unacknowledged (like libweft's pool).
 *     Reports weftd's peak RSS (VmHWM) and the ingest rate until the last
 *     ack.
 *  2. End to end: P connections (default 8) sending N events in all; time
 *     from the first connect until the catalog says the trace is complete
 *     (journals -> OTF2 archive), next to libotf2 writing the same events
 *     for the same locations in this process (the baseline: an archive
 *     readers take, with the local and global definitions weftd writes
 *     too, and weftd's chunk sizes; until issue #16 it wrote the event
 *     files alone, which no reader opens). Also the
 *     conversion time after the last goodbye, scaled to 10 M events, and
 *     the CPU time weftd, the clients and libotf2 spent (weftd's per
 *     event: receiving, journaling and converting). R rounds (default
 *     5), the baseline first in every other one, each side started alike
 *     (see settle());
 *     the ratio reported is the median of the rounds' ratios, as other
 *     tenants of a shared machine make single runs swing. Batches hold what libweft ships by default
 *     (-E: events per batch, default as many Enter/Leave as fit in one
 *     64 KiB buffer).
 *
 * One thread drives all connections with poll(2); the protocol is spoken
 * directly (proto/frame.h, proto/codec.h) so that the client side costs
 * little next to weftd.
 *
 *  3. With -i IDLE, only this: IDLE connections, half that said Hello
 *     and send nothing, half that connected and sent nothing; weftd's
 *     resident memory before and after (the bound: 10 000 idle
 *     connections within 256 MiB).
 *
 *  With -L LOCS each of the P processes of part 2 has LOCS locations
 *  (threads; at most 4096, weftd's max_locations), its batches going to
 *  them in turn: P x LOCS locations share the N events (many locations:
 *  -p 10 -L 100 is 1000, -p 25 -L 4000 is 100 000), and the baseline
 *  writes as many.
 *
 *  4. With -A ADDR, only the clients of part 1, against a weftd running
 *     at ADDR (HOST:PORT or unix:PATH): CONNS connections playing ranks
 *     FIRST (-R) to FIRST+CONNS-1 of a job of SIZE (-S) in trace TRACE
 *     (-T), for bench/cluster.sh, which starts one on each node; prints
 *     when every batch was acknowledged.
 *
 *   bench/ingest [-c CONNS] [-b BATCHES] [-e EVENTS] [-p PROCS] [-L LOCS]
 *                [-n EVENTS] [-E EVENTS] [-r ROUNDS]
 *   bench/ingest -i IDLE
 *   bench/ingest -A ADDR [-T TRACE] [-R FIRST] [-S SIZE] [-c CONNS]
 *                [-b BATCHES] [-e EVENTS]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "bind.h"
#include "codec.h"
#include "cred.h"
#include "frame.h"
#include "mac.h"
#include "weftd.h"

#define WINDOW 8
/* libweft's default buffer (WEFT_BUFFER_SIZE): what one batch carries. */
#define LIBWEFT_BUFFER (64u << 10)

/* Locations (threads) of each connection's process (-L): its batches go
 * to them in turn. */
static uint32_t locs_per_conn = 1;

typedef struct conn {
    int fd;
    uint32_t rank;
    uint64_t next_seq;    /* next batch to send, over all its locations */
    uint64_t acked;       /* batches acked */
    uint8_t *out;         /* bytes waiting to be written */
    size_t out_len, out_off;
    weft_frame_reader reader;
    weft_mac *mac;        /* WEFT_BENCH_AUTH=munge: the session MAC */
    int done;             /* goodbye sent */
    int closed;
} conn;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The weftd started, ended by die() too. */
static pid_t weftd_pid;

static void die(const char *what)
{
    fprintf(stderr, "bench/ingest: %s: %s\n", what, strerror(errno));
    if (weftd_pid > 0)
        kill(weftd_pid, SIGKILL);
    exit(1);
}

static void queue(conn *c, const Weft__Envelope *env)
{
    uint8_t *frame;
    ssize_t n = weft_frame_pack_room(env, WEFT_MAC_TAG, &frame);

    if (n < 0)
        die("pack");
    if (c->mac)
        n = (ssize_t)weft_mac_seal_in_place(c->mac, frame, (size_t)n);
    c->out = realloc(c->out, c->out_len + (size_t)n);
    if (!c->out)
        die("realloc");
    memcpy(c->out + c->out_len, frame, (size_t)n);
    c->out_len += (size_t)n;
    free(frame);
}

/* A frame of c's unpacked, its MAC checked first if c has one. */
static Weft__Envelope *unpack(conn *c, const uint8_t *frame, uint32_t len)
{
    if (c->mac) {
        char why[128];
        ssize_t n = weft_mac_open(c->mac, frame, len, why, sizeof why);
        if (n < 0) {
            fprintf(stderr, "bench/ingest: weftd's %s\n", why);
            exit(1);
        }
        len = (uint32_t)n;
    }
    return weft_frame_unpack(frame, len);
}

/* The batch every connection sends: Enter/Leave events, 50 ns apart,
 * timestamps relative to the batch base; `events` of them, or with
 * events 0 as many as fit in `bytes` (what a libweft buffer of that size
 * ships). */
static uint8_t *batch_records;
static size_t batch_len;
static uint32_t batch_events;

static void make_batch(uint32_t events, size_t bytes)
{
    uint64_t prev = 0, t = 0;
    size_t cap = events ? (size_t)events * 16 + 32 : bytes + 32;

    free(batch_records);
    batch_records = malloc(cap);
    if (!batch_records)
        die("malloc");
    batch_len = 0;
    batch_events = 0;
    /* Enter/Leave pairs, so that every batch leaves what it entered. */
    while (events ? batch_events < events : batch_len < bytes) {
        weft_record r = { .type = WEFT_REC_Enter };
        uint64_t p = prev;
        uint8_t pair[256];   /* weft_encode wants room for its bound */
        ssize_t k;
        size_t n;
        r.u.Enter.region = 0;
        r.time = t + 50;
        if ((k = weft_encode(&r, &p, pair, 128)) <= 0)
            die("encode");
        n = (size_t)k;
        r.type = WEFT_REC_Leave;
        r.u.Leave.region = 0;
        r.time = t + 100;
        if ((k = weft_encode(&r, &p, pair + n, 128)) <= 0)
            die("encode");
        n += (size_t)k;
        if (!events && batch_len + n > bytes)
            break;
        memcpy(batch_records + batch_len, pair, n);
        batch_len += n;
        prev = p;
        t += 100;
        batch_events += 2;
    }
}

static void queue_hello(conn *c, const char *trace, uint32_t size)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Definitions d = WEFT__DEFINITIONS__INIT;
    uint8_t defs[512];
    uint64_t prev = 0;
    size_t len = 0;
    weft_record s = { .type = WEFT_REC_String }, r = { .type = WEFT_REC_Region };

    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)trace;
    h.rank = c->rank;
    h.size = size;
    h.hostname = "bench";
    h.pid = (uint32_t)getpid();
    h.timer_resolution = 1000000000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    queue(c, &env);
    s.u.String.self = 0;
    s.u.String.string = "work";
    r.u.Region.self = 0;
    r.u.Region.sourceFile = OTF2_UNDEFINED_STRING;
    r.u.Region.regionRole = OTF2_REGION_ROLE_FUNCTION;
    len += (size_t)weft_encode(&s, &prev, defs + len, sizeof defs - len);
    len += (size_t)weft_encode(&r, &prev, defs + len, sizeof defs - len);
    d.seq = 1;
    d.records.data = defs;
    d.records.len = len;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &d;
    queue(c, &env);
}

static void queue_batch(conn *c)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__EventBatch b = WEFT__EVENT_BATCH__INIT;

    uint64_t k = (c->next_seq - 1) / locs_per_conn; /* the location's */

    b.location = (uint32_t)((c->next_seq - 1) % locs_per_conn);
    b.seq = k + 1;
    /* Each batch of a location continues its clock. */
    b.base_time = k * 50 * (uint64_t)batch_events;
    b.events = batch_events;
    b.records.data = batch_records;
    b.records.len = batch_len;
    env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
    env.event_batch = &b;
    queue(c, &env);
    c->next_seq++;
}

static void queue_goodbye(conn *c)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    queue(c, &env);
    c->done = 1;
}

/* One frame read from blocking fd (the handshake's). Exits on error. */
static Weft__Envelope *read_frame(int fd)
{
    uint8_t hdr[WEFT_FRAME_HEADER], body[1024];
    uint32_t len;
    size_t got = 0;

    while (got < sizeof hdr + 0) {
        ssize_t k = read(fd, hdr + got, sizeof hdr - got);
        if (k <= 0)
            die("read (handshake)");
        got += (size_t)k;
    }
    len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
          (uint32_t)hdr[2] << 8 | hdr[3];
    if (len > sizeof body)
        die("handshake frame too long");
    for (got = 0; got < len;) {
        ssize_t k = read(fd, body + got, len - got);
        if (k <= 0)
            die("read (handshake)");
        got += (size_t)k;
    }
    return weft_frame_unpack(body, len);
}

/* weftd's Challenge, and with WEFT_BENCH_AUTH=munge the Auth libweft
 * sends (a credential bound to fd, proto/bind.h) and the AuthAck: then
 * *mac is the session's. */
static void handshake(int fd, weft_mac **mac)
{
    const char *auth = getenv("WEFT_BENCH_AUTH");
    Weft__Envelope *ch = read_frame(fd), *ack, env = WEFT__ENVELOPE__INIT;
    Weft__Auth a = WEFT__AUTH__INIT;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    uint8_t payload[WEFT_BIND_PAYLOAD], *frame;
    weft_bind b;
    char err[256], *cred = NULL;
    ssize_t n;

    if (!ch || ch->msg_case != WEFT__ENVELOPE__MSG_CHALLENGE)
        die("no Challenge from weftd");
    if (!auth || strcmp(auth, "munge") != 0) {
        weft_frame_free_envelope(ch);
        return;
    }
    memset(&b, 0, sizeof b);
    memcpy(b.nonce, ch->challenge->nonce.data, WEFT_AUTH_NONCE);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    weft_bind_addr_from(&b.client, (struct sockaddr *)&ss);
    sl = sizeof ss;
    getpeername(fd, (struct sockaddr *)&ss, &sl);
    weft_bind_addr_from(&b.server, (struct sockaddr *)&ss);
    memset(b.key, 0x5a, sizeof b.key); /* a benchmark's: not secret */
    weft_bind_encode(&b, payload);
    if (weft_auth_encode(getenv("WEFT_MUNGE_SOCKET"),
                         ch->challenge->server_uid, 0, payload,
                         sizeof payload, &cred, err, sizeof err) < 0) {
        fprintf(stderr, "bench/ingest: %s\n", err);
        exit(1);
    }
    weft_frame_free_envelope(ch);
    a.protocol_version = WEFT_PROTOCOL_VERSION;
    a.credential.data = (uint8_t *)cred;
    a.credential.len = strlen(cred);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &a;
    if ((n = weft_frame_pack(&env, &frame)) < 0 ||
        write(fd, frame, (size_t)n) != n)
        die("Auth");
    free(frame);
    free(cred);
    ack = read_frame(fd);
    if (!ack || ack->msg_case != WEFT__ENVELOPE__MSG_AUTH_ACK ||
        !weft_mac_proof_ok(b.key, b.nonce, WEFT_AUTH_NONCE,
                           ack->auth_ack->proof.data,
                           ack->auth_ack->proof.len)) {
        errno = EPROTO;
        die("AuthAck");
    }
    weft_frame_free_envelope(ack);
    *mac = weft_mac_new(b.key, WEFT_MAC_CLIENT);
}

static int connect_to(const char *addr, weft_mac **mac)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    const char *colon = strrchr(addr, ':');
    char host[64];
    int fd;

    if (strncmp(addr, "unix:", 5) == 0) { /* the kernel says who we are */
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        snprintf(sun.sun_path, sizeof sun.sun_path, "%s", addr + 5);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0)
            die("connect");
        *mac = NULL;
        fcntl(fd, F_SETFL, O_NONBLOCK);
        return fd;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    sin.sin_port = htons((uint16_t)atoi(colon + 1));
    inet_pton(AF_INET, host, &sin.sin_addr);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
        die("connect");
    handshake(fd, mac);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* Streams `batches` batches on each of n connections (over its
 * locs_per_conn locations); returns when every connection said goodbye
 * and weftd closed it. */
static void drive_ranks(const char *addr, const char *trace, uint32_t first,
                        uint32_t n, uint32_t size, uint64_t batches)
{
    conn *cs = calloc(n, sizeof *cs);
    struct pollfd *pfd = calloc(n, sizeof *pfd);
    uint32_t open = n;

    for (uint32_t i = 0; i < n; i++) {
        cs[i].rank = first + i;
        cs[i].next_seq = 1;
        cs[i].fd = connect_to(addr, &cs[i].mac);
        weft_frame_reader_init(&cs[i].reader, WEFT_DEFAULT_MAX_FRAME);
        queue_hello(&cs[i], trace, size);
    }
    while (open > 0) {
        for (uint32_t i = 0; i < n; i++) {
            conn *c = &cs[i];
            while (!c->done && c->next_seq <= batches &&
                   c->next_seq - 1 - c->acked < WINDOW)
                queue_batch(c);
            if (!c->done && c->acked == batches)
                queue_goodbye(c);
            pfd[i].fd = c->closed ? -1 : c->fd;
            pfd[i].events = POLLIN | (c->out_off < c->out_len ? POLLOUT : 0);
        }
        if (poll(pfd, n, 10000) <= 0)
            die("poll (weftd stopped answering?)");
        for (uint32_t i = 0; i < n; i++) {
            conn *c = &cs[i];
            if (c->closed)
                continue;
            if (pfd[i].revents & POLLOUT) {
                ssize_t k = write(c->fd, c->out + c->out_off,
                                  c->out_len - c->out_off);
                if (k > 0)
                    c->out_off += (size_t)k;
                if (c->out_off == c->out_len)
                    c->out_off = c->out_len = 0;
            }
            if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                uint8_t buf[65536];
                ssize_t k = read(c->fd, buf, sizeof buf);
                const uint8_t *p = buf;
                size_t left = k > 0 ? (size_t)k : 0;
                if (k == 0 || (k < 0 && errno != EAGAIN)) {
                    if (!c->done)
                        fprintf(stderr, "bench/ingest: connection %u closed "
                                "early\n", i);
                    c->closed = 1;
                    open--;
                    close(c->fd);
                    continue;
                }
                while (left > 0) {
                    uint8_t *frame;
                    uint32_t flen;
                    Weft__Envelope *env;
                    if (weft_frame_reader_feed(&c->reader, &p, &left, &frame,
                                               &flen) != 1)
                        break;
                    env = unpack(c, frame, flen);
                    free(frame);
                    if (env && env->msg_case == WEFT__ENVELOPE__MSG_ACK &&
                        !env->ack->definitions)
                        c->acked++;
                    else if (env && env->msg_case == WEFT__ENVELOPE__MSG_ERROR) {
                        fprintf(stderr, "bench/ingest: weftd: %s\n",
                                env->error->message);
                        exit(1);
                    }
                    weft_frame_free_envelope(env);
                }
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        free(cs[i].out);
        weft_frame_reader_free(&cs[i].reader);
        weft_mac_free(cs[i].mac);
    }
    free(cs);
    free(pfd);
}

/* The n ranks of a trace of their own on n connections (parts 1, 2). */
static void drive(const char *addr, const char *trace, uint32_t n,
                  uint64_t batches)
{
    drive_ranks(addr, trace, 0, n, n, batches);
}

/* Field `what` (VmHWM: the peak, VmRSS: now) of pid's memory, KiB. */
static long vm_kib(pid_t pid, const char *what)
{
    char path[64], line[256];
    size_t n = strlen(what);
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, what, n) == 0 && line[n] == ':' &&
            sscanf(line + n + 1, "%ld", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* Reads frames from c (blocking, at most 60 s) until a HelloAck. */
static void await_hello_ack(conn *c)
{
    uint8_t buf[4096];

    for (;;) {
        struct pollfd p = { c->fd, POLLIN, 0 };
        const uint8_t *q = buf;
        uint8_t *frame;
        uint32_t flen;
        ssize_t k;
        size_t left;
        if (poll(&p, 1, 60000) != 1 || (k = read(c->fd, buf, sizeof buf)) <= 0)
            die("waiting for HelloAck");
        left = (size_t)k;
        while (weft_frame_reader_feed(&c->reader, &q, &left, &frame,
                                      &flen) == 1) {
            Weft__Envelope *env = unpack(c, frame, flen);
            int ack = env && env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK;
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_ERROR) {
                errno = 0;
                fprintf(stderr, "bench/ingest: weftd: %s\n",
                        env->error->message);
                die("refused");
            }
            weft_frame_free_envelope(env);
            free(frame);
            if (ack)
                return;
        }
    }
}

/* 3. idle connections, n in all: half that said Hello (members of a
 * trace that waits for one more member) and then send nothing, half that
 * connected and sent nothing (a session needs two of weftd's descriptors,
 * its socket and its journal, a bare connection one); weftd's resident
 * memory before and after each half: what a quiet connection costs. */
static void run_idle(const char *addr, pid_t weftd, uint32_t n)
{
    uint32_t ns = n / 2;
    conn *cs = calloc(n, sizeof *cs);
    long before, sessions, all;

    if (!cs)
        die("calloc");
    sleep(1);
    before = vm_kib(weftd, "VmRSS");
    for (uint32_t i = 0; i < ns; i++) {
        conn *c = &cs[i];
        c->fd = connect_to(addr, &c->mac);
        fcntl(c->fd, F_SETFL, 0); /* blocking: a Hello is small */
        c->rank = i;
        weft_frame_reader_init(&c->reader, 1u << 20);
        queue_hello(c, "idle", ns + 1);
        if (write(c->fd, c->out, c->out_len) != (ssize_t)c->out_len)
            die("write Hello");
        free(c->out);
        c->out = NULL;
        await_hello_ack(c);
    }
    sleep(1);
    sessions = vm_kib(weftd, "VmRSS");
    for (uint32_t i = ns; i < n; i++)
        cs[i].fd = connect_to(addr, &cs[i].mac);
    sleep(1);
    all = vm_kib(weftd, "VmRSS");
    printf("idle: weftd RSS %.1f MiB; with %u sessions that said Hello and "
           "send nothing %.1f MiB (%.1f KiB each, journal included); with "
           "%u more connections that sent nothing %.1f MiB (%.1f KiB "
           "each)\n", before / 1024.0, ns, sessions / 1024.0,
           ns ? (double)(sessions - before) / ns : 0.0, n - ns,
           all / 1024.0, n > ns ? (double)(all - sessions) / (n - ns) : 0.0);
    printf("idle: %u connections cost %.1f MiB (target: 10000 within 256 "
           "MiB)\n", n, (all - before) / 1024.0);
    for (uint32_t i = 0; i < n; i++) {
        close(cs[i].fd);
        weft_frame_reader_free(&cs[i].reader);
        weft_mac_free(cs[i].mac);
    }
    free(cs);
}

/* Waits until the catalog has the trace in a final state; returns 1 if
 * complete. Its archive directory goes to path (pathlen bytes). */
static int wait_complete(const char *catalog, const char *trace, char *path,
                         size_t pathlen)
{
    for (int i = 0; i < 24000; i++) { /* 2 min */
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        int done = 0, ok = 0;
        if (sqlite3_open_v2(catalog, &db, SQLITE_OPEN_READONLY, NULL) ==
                SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT state, path FROM traces WHERE "
                               "name = ?", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, trace, -1, SQLITE_STATIC);
            if (sqlite3_step(st) == SQLITE_ROW) {
                const char *s = (const char *)sqlite3_column_text(st, 0);
                const char *p = (const char *)sqlite3_column_text(st, 1);
                ok = s && strcmp(s, "complete") == 0;
                done = s && (ok || strcmp(s, "failed") == 0 ||
                             strcmp(s, "partial") == 0);
                snprintf(path, pathlen, "%s", p ? p : "");
            }
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        if (done)
            return ok;
        usleep(5000);
    }
    return 0;
}

/* What the phase before wrote, removed before the next one starts. */
static char prev_output[600];

/* Removes the previous phase's output and writes back dirty pages, so
 * that every timed phase starts alike: first writes to memory this VM
 * never touched cost twice those to pages a removed file gave back, and
 * neither side should pay for the other's writeback. */
static void settle(void)
{
    char cmd[700];

    if (prev_output[0] && strchr(prev_output, '\'') == NULL) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", prev_output);
        if (system(cmd) != 0)
            fprintf(stderr, "bench/ingest: could not remove %s\n",
                    prev_output);
    }
    prev_output[0] = 0;
    sync();
}

static OTF2_FlushType pre_flush(void *d, OTF2_FileType ft, OTF2_LocationRef l,
                                void *cb, bool final)
{
    return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cbs = { pre_flush, NULL };

/* The definitions a reader needs (and weftd writes): a local definition
 * file per location, and the global ones: clock, strings, the region,
 * one system tree node, a location group per process, the locations. */
static void otf2_baseline_defs(OTF2_Archive *a, uint32_t locations,
                               uint64_t events)
{
    OTF2_GlobalDefWriter *g;

    OTF2_Archive_OpenDefFiles(a);
    for (uint32_t l = 0; l < locations; l++)
        OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(
                                           a, (uint64_t)l << 32));
    OTF2_Archive_CloseDefFiles(a);
    g = OTF2_Archive_GetGlobalDefWriter(a);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0,
                                              events * 50 + 1, 0);
    OTF2_GlobalDefWriter_WriteString(g, 0, "work");
    OTF2_GlobalDefWriter_WriteString(g, 1, "bench");
    OTF2_GlobalDefWriter_WriteString(g, 2, "Process");
    OTF2_GlobalDefWriter_WriteString(g, 3, "Thread");
    OTF2_GlobalDefWriter_WriteRegion(g, 0, 0, 0, OTF2_UNDEFINED_STRING,
                                     OTF2_REGION_ROLE_FUNCTION,
                                     OTF2_PARADIGM_USER,
                                     OTF2_REGION_FLAG_NONE,
                                     OTF2_UNDEFINED_STRING, 0, 0);
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1,
                                             OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (uint32_t l = 0; l < locations; l++)
        OTF2_GlobalDefWriter_WriteLocationGroup(
            g, l, 2, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
            OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t l = 0; l < locations; l++)
        OTF2_GlobalDefWriter_WriteLocation(g, (uint64_t)l << 32, 3,
                                           OTF2_LOCATION_TYPE_CPU_THREAD,
                                           events, l);
    OTF2_Archive_CloseGlobalDefWriter(a, g);
}

/* libotf2 writing the same events for the same locations in-process, and
 * the definitions that make it an archive readers take, as weftd's is. */
static double otf2_baseline(const char *dir, uint32_t locations,
                            uint64_t batches)
{
    uint64_t start = now_ns();
    /* weftd's chunk sizes (otf2out.c): 4 MiB definition chunks, which
     * libotf2 clears for each location's definitions, would cost the
     * baseline more than the events here. */
    OTF2_Archive *a = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                        1 << 20, 256 << 10,
                                        OTF2_SUBSTRATE_POSIX,
                                        OTF2_COMPRESSION_NONE);

    OTF2_Archive_SetFlushCallbacks(a, &flush_cbs, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(a);
    OTF2_Archive_OpenEvtFiles(a);
    for (uint32_t l = 0; l < locations; l++) {
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(a, (uint64_t)l << 32);
        uint64_t t = 0;
        for (uint64_t i = 0; i < batches * batch_events; i++) {
            t += 50;
            if (i % 2)
                OTF2_EvtWriter_Leave(w, NULL, t, 0);
            else
                OTF2_EvtWriter_Enter(w, NULL, t, 0);
        }
        OTF2_Archive_CloseEvtWriter(a, w);
    }
    OTF2_Archive_CloseEvtFiles(a);
    otf2_baseline_defs(a, locations, batches * batch_events);
    OTF2_Archive_Close(a);
    return (double)(now_ns() - start) / 1e9;
}

/* CPU seconds (user + system, all threads) process pid has used. */
static double cpu_seconds(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long ut = 0, st = 0;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* Fields 14 and 15, counted after the ")" that ends the name. */
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                     "%lu %lu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One round of part 2. */
typedef struct round {
    double e2e, conv, otf2;             /* wall seconds */
    double cpu_weftd, cpu_clients, cpu_otf2;
} round;

static int run_e2e(const char *addr, const char *catalog, pid_t weftd,
                   const char *trace, uint32_t procs, uint64_t batches,
                   round *r)
{
    double w0, c0;
    uint64_t t0, t1, t2;

    settle();
    w0 = cpu_seconds(weftd);
    c0 = self_cpu_seconds();
    t0 = now_ns();

    drive(addr, trace, procs, batches);
    t1 = now_ns();
    r->cpu_clients = self_cpu_seconds() - c0;
    if (!wait_complete(catalog, trace, prev_output, sizeof prev_output)) {
        fprintf(stderr, "bench/ingest: the end-to-end trace did not "
                "complete\n");
        return -1;
    }
    t2 = now_ns();
    r->cpu_weftd = cpu_seconds(weftd) - w0;
    r->e2e = (double)(t2 - t0) / 1e9;
    r->conv = (double)(t2 - t1) / 1e9;
    return 0;
}

static void run_baseline(const char *tmp, int i, uint32_t procs,
                         uint64_t batches, round *r)
{
    char dir[600];
    double c0;

    snprintf(dir, sizeof dir, "%s/baseline-%d", tmp, i);
    settle();
    c0 = self_cpu_seconds();
    r->otf2 = otf2_baseline(dir, procs, batches);
    r->cpu_otf2 = self_cpu_seconds() - c0;
    snprintf(prev_output, sizeof prev_output, "%s", dir);
}

/* What the command line asks for. */
typedef struct opts {
    uint32_t conns, procs, events, e2e_events, idle;
    uint64_t batches, total;
    int rounds;
    const char *addr, *trace;   /* -A, -T: clients only (part 4) */
    uint32_t first, size;       /* -R, -S */
} opts;

/* Fills o from argv; 0, or 2 (the exit status) after saying why not. */
static int parse_opts(int argc, char **argv, opts *o)
{
    int opt;

    *o = (opts){ .conns = 1000, .procs = 8, .events = 1000,
                 .batches = 40, .total = 10000000, .rounds = 5,
                 .trace = "cluster" };
    while ((opt = getopt(argc, argv, "c:b:e:p:n:E:r:i:L:A:T:R:S:")) != -1) {
        switch (opt) {
        case 'A': o->addr = optarg; break;
        case 'T': o->trace = optarg; break;
        case 'R': o->first = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'S': o->size = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'i': o->idle = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'c': o->conns = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'b': o->batches = strtoull(optarg, NULL, 10); break;
        case 'e': o->events = (uint32_t)strtoul(optarg, NULL, 10) & ~1u; break;
        case 'p': o->procs = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'n': o->total = strtoull(optarg, NULL, 10); break;
        case 'E':
            o->e2e_events = (uint32_t)strtoul(optarg, NULL, 10) & ~1u;
            if (!o->e2e_events)
                o->e2e_events = UINT32_MAX; /* refused below */
            break;
        case 'r': o->rounds = atoi(optarg); break;
        case 'L': locs_per_conn = (uint32_t)strtoul(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: bench/ingest [-c CONNS] [-b BATCHES] "
                    "[-e EVENTS] [-p PROCS] [-L LOCATIONS] [-n EVENTS] "
                    "[-E EVENTS] [-r ROUNDS] | -i IDLE | -A ADDR [-T TRACE] "
                    "[-R FIRST] [-S SIZE] [-c CONNS] [-b BATCHES] "
                    "[-e EVENTS]\n");
            return 2;
        }
    }
    if (!o->conns || !o->batches || !o->events || !o->procs || !o->total ||
        !locs_per_conn || locs_per_conn > 4096 ||
        o->e2e_events == UINT32_MAX || o->rounds < 1 || o->rounds > 64 ||
        (o->addr && o->size && o->first + o->conns > o->size)) {
        fprintf(stderr, "bench/ingest: every count must be > 0 (and "
                "-r 1..64, -L 1..4096: weftd's max_locations)\n");
        return 2;
    }
    return 0;
}

/* One descriptor per connection here, and one or two in weftd (a
 * session's journal too): the hard limit, raised where allowed. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max < 65536) {
        struct rlimit more = { 65536, 65536 };
        if (setrlimit(RLIMIT_NOFILE, &more) == 0)
            rl = more;
    }
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* Part 1: fan-in, one location per connection. */
static void run_fan_in(const opts *o, const char *addr, const char *catalog,
                       pid_t weftd)
{
    uint64_t t0, t1;
    double t_ingest;

    make_batch(o->events, 0);
    t0 = now_ns();
    drive(addr, "fan-in", o->conns, o->batches);
    t1 = now_ns();
    t_ingest = (double)(t1 - t0) / 1e9;
    printf("fan-in: %u connections x %" PRIu64 " batches x %u events = %"
           PRIu64 " events acked in %.2f s: %.2f M events/s, %.1f MB/s of "
           "records\n", o->conns, o->batches, o->events,
           (uint64_t)o->conns * o->batches * o->events, t_ingest,
           (double)o->conns * (double)o->batches * o->events / t_ingest / 1e6,
           (double)o->conns * (double)o->batches * (double)batch_len /
           t_ingest / 1e6);
    if (!wait_complete(catalog, "fan-in", prev_output, sizeof prev_output))
        fprintf(stderr, "bench/ingest: the fan-in trace did not complete\n");
    printf("fan-in: %u locations converted in %.2f s after the last "
           "goodbye\n", o->conns, (double)(now_ns() - t1) / 1e9);
    printf("weftd peak RSS (VmHWM) so far: %.1f MiB (target <= 256)\n",
           (double)vm_kib(weftd, "VmHWM") / 1024.0);
}

/* Part 2: end to end, and the libotf2 baseline, in alternating order.
 * 0, or -1 when a trace did not complete. */
static int run_end_to_end(const opts *o, const char *tmp, const char *addr,
                          const char *catalog, pid_t weftd)
{
    double ratios[64], convs[64], cpus[64], otf2_cpus[64];
    uint64_t nlocs, e2e_batches, total;
    char trace[64];
    int rounds = o->rounds;

    make_batch(o->e2e_events, o->e2e_events ? 0 : LIBWEFT_BUFFER);
    nlocs = (uint64_t)o->procs * locs_per_conn;
    e2e_batches = o->total / nlocs / batch_events;  /* per location */
    if (!e2e_batches)
        e2e_batches = 1;
    total = nlocs * e2e_batches * batch_events;
    printf("end to end: %u clients x %u locations x %" PRIu64 " batches x "
           "%u events = %" PRIu64 " events (%zu bytes a batch), %d rounds\n",
           o->procs, locs_per_conn, e2e_batches, batch_events, total,
           batch_len, rounds);
    for (int i = 0; i < rounds; i++) {
        round r;
        snprintf(trace, sizeof trace, "end-to-end-%d", i + 1);
        if (i % 2)
            run_baseline(tmp, i, (uint32_t)nlocs, e2e_batches, &r);
        if (run_e2e(addr, catalog, weftd, trace, o->procs,
                    e2e_batches * locs_per_conn, &r) < 0)
            return -1;
        if (i % 2 == 0)
            run_baseline(tmp, i, (uint32_t)nlocs, e2e_batches, &r);
        ratios[i] = r.otf2 / r.e2e;
        cpus[i] = r.cpu_weftd * 1e9 / (double)total;
        otf2_cpus[i] = r.cpu_otf2 * 1e9 / (double)total;
        convs[i] = r.conv * 1e7 / (double)total;
        printf("round %d: weft end to end %.2f s (%.2f M events/s; "
               "conversion after the last goodbye %.2f s), libotf2 "
               "in-process %.2f s (%.2f M events/s): ratio %.2f; CPU s: "
               "weftd %.2f + clients %.2f, libotf2 %.2f\n", i + 1, r.e2e,
               (double)total / r.e2e / 1e6, r.conv, r.otf2,
               (double)total / r.otf2 / 1e6, ratios[i], r.cpu_weftd,
               r.cpu_clients, r.cpu_otf2);
        fflush(stdout);
    }
    printf("ratio weft end to end / libotf2 in-process, median of %d "
           "rounds: %.2f (target >= 0.7)\n", rounds, median(ratios, rounds));
    printf("conversion after the last goodbye, median: %.2f s per 10 M "
           "events\n", median(convs, rounds));
    printf("weftd CPU per event (receive, journal, convert), median: %.1f "
           "ns (%.3f s per million events); libotf2 writing the same "
           "archive in-process: %.1f ns (ratio %.2f)\n", median(cpus, rounds),
           median(cpus, rounds) / 1e3, median(otf2_cpus, rounds),
           median(cpus, rounds) / median(otf2_cpus, rounds));
    return 0;
}

int main(int argc, char **argv)
{
    char tmp[512], addr[128], catalog[600], cmd[700];
    const char *tmpdir = getenv("TMPDIR");
    int status, rc;
    pid_t weftd;
    opts o;

    if ((rc = parse_opts(argc, argv, &o)) != 0)
        return rc;
    raise_fd_limit();
    if (o.addr) { /* part 4: the clients only */
        uint64_t t0 = now_ns();
        make_batch(o.events, 0);
        drive_ranks(o.addr, o.trace, o.first, o.conns,
                    o.size ? o.size : o.first + o.conns, o.batches);
        printf("clients: ranks %u-%u: %" PRIu64 " events acked in %.2f s\n",
               o.first, o.first + o.conns - 1,
               (uint64_t)o.conns * o.batches * o.events,
               (double)(now_ns() - t0) / 1e9);
        free(batch_records);
        return 0;
    }
    /* TMPDIR=/dev/shm measures without the disk's file system (both
     * sides create their files there). */
    snprintf(tmp, sizeof tmp, "%s/weft-ingest-XXXXXX",
             tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(tmp))
        die("mkdtemp");
    /* All clients connect at once from one address, as one user: the
     * limits that keep users and addresses from crowding others out
     * (issue #30) would refuse the most of them. */
    weftd = bench_start_weftd(tmp, "max_connections = 100000\n"
                              "max_connections_per_user = 100000\n"
                              "max_preauth_connections = 100000\n"
                              "max_preauth_per_address = 100000", addr,
                              sizeof addr);
    if (weftd < 0) {  /* no weftd: nothing of ours to keep */
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        return system(cmd) == 0 ? 1 : 2;
    }
    weftd_pid = weftd;
    if (o.idle) {
        run_idle(addr, weftd, o.idle);
        kill(weftd, SIGTERM);
        waitpid(weftd, &status, 0);
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
        return system(cmd) == 0 ? 0 : 1;
    }
    snprintf(catalog, sizeof catalog, "%s/spool/catalog.db", tmp);
    run_fan_in(&o, addr, catalog, weftd);
    if (run_end_to_end(&o, tmp, addr, catalog, weftd) < 0) {
        kill(weftd, SIGKILL);
        return 1;
    }
    printf("weftd peak RSS (VmHWM): %.1f MiB\n",
           (double)vm_kib(weftd, "VmHWM") / 1024.0);
    kill(weftd, SIGTERM);
    waitpid(weftd, &status, 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "bench/ingest: could not remove %s\n", tmp);
    free(batch_records);
    return 0;
}
