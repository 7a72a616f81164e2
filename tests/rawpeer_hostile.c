/* rawpeer_hostile.c - weft-rawpeer's modes of the adversary suite
 * (issue #30: tests/e2e_hostile.sh and the cases in tests/hostile/): ids and
 * strings as large as weftd allows, many connections held open or
 * stalled mid-frame, a Goodbye naming thousands of threads. What each
 * does is said above it; weft-rawpeer.c's mode table calls them.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "frame.h"
#include "rawpeer.h"
#include "weft_errors.h"

/* ---- MODEs big-ids and big-strings (issue 30, finding 3) ---------------- */

int run_big_ids(const char *trace)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    uint32_t id = (uint32_t)env_u64("RAWPEER_ID", (1u << 20) - 1);
    weft_record d[6] = { rec_string(id, "x"), rec_region(id, id) };
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, id),
                          rec_event(WEFT_REC_Leave, 200, id) };

    d[2].type = WEFT_REC_Attribute;
    d[2].u.Attribute.self = id;
    d[2].u.Attribute.name = id;
    d[2].u.Attribute.description = id;
    d[2].u.Attribute.type = OTF2_TYPE_UINT64;
    d[3].type = WEFT_REC_Parameter;
    d[3].u.Parameter.self = id;
    d[3].u.Parameter.name = id;
    d[3].u.Parameter.parameterType = OTF2_PARAMETER_TYPE_INT64;
    d[4].type = WEFT_REC_SourceCodeLocation;
    d[4].u.SourceCodeLocation.self = id;
    d[4].u.SourceCodeLocation.file = id;
    d[4].u.SourceCodeLocation.lineNumber = 1;
    d[5].type = WEFT_REC_CallingContext;
    d[5].u.CallingContext.self = id;
    d[5].u.CallingContext.region = id;
    d[5].u.CallingContext.sourceCodeLocation = id;
    d[5].u.CallingContext.parent = OTF2_UNDEFINED_CALLING_CONTEXT;
    ensure_auth();
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)trace;
    h.rank = (uint32_t)env_u64("RAWPEER_RANK", 0);
    h.size = (uint32_t)env_u64("RAWPEER_SIZE", 1);
    h.hostname = "rawpeer";
    h.pid = hello_pid();
    h.uid = (uint32_t)getuid();
    h.timer_resolution = 1000000000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    send_env(&env);
    send_records(0, 0, 1, 0, d, 6);
    send_records(1, 0, 1, 0, ev, 2);
    send_goodbye_counts(2, 0);
    return await_reply(30000) == 0 ? 0 : 1;
}

/* send_big_strings: Definitions of `per` distinct strings of `slen`
 * characters each, one batch after the other (each awaiting its Ack)
 * until `total` bytes are sent, then a Goodbye; strs (per x slen + 1)
 * and d (per) are the batch's room. */
static int send_big_strings(const char *trace, uint64_t total, size_t slen,
                            size_t per, char *strs, weft_record *d)
{
    static uint8_t buf[512u << 10];
    uint64_t sent = 0;
    uint32_t id = 0;
    int got;

    send_hello(trace, WEFT_PROTOCOL_VERSION);
    for (uint64_t seq = 1; sent < total; seq++) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
        size_t len = 0;
        uint64_t prev = 0;
        for (size_t i = 0; i < per; i++, id++) {
            char *str = strs + i * (slen + 1);
            ssize_t k;
            memset(str, 'a' + id % 26, slen);
            str[slen] = 0;
            snprintf(str, 11, "%010u", id); /* distinct */
            if (slen > 10)
                str[10] = '-';
            d[i] = rec_string(id, str);
            k = weft_encode(&d[i], &prev, buf + len, sizeof buf - len);
            if (k < 0)
                return 2;
            len += (size_t)k;
        }
        defs.seq = seq;
        defs.records.data = buf;
        defs.records.len = len;
        env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
        env.definitions = &defs;
        send_env(&env);
        sent += len;
        /* Its Ack before the next (an Error ends it). */
        if ((got = await_reply_n(30000, seq)) == 1)
            return 0;
        if (got != 2) {
            fprintf(stderr, "rawpeer: no Ack of Definitions %llu\n",
                    (unsigned long long)seq);
            return 1;
        }
    }
    send_goodbye();
    got = await_reply(60000);
    return got == 1 ? 0 : 3;
}

int run_big_strings(const char *trace)
{
    enum { STR = 4096 };
    uint64_t total = env_u64("RAWPEER_BYTES", UINT64_C(64) << 20);
    size_t slen = (size_t)env_u64("RAWPEER_STRLEN", STR);
    size_t per;
    char *strs;
    weft_record *d;
    int rc;

    slen = slen < 10 ? 10 : slen > STR ? STR : slen;
    per = (256u << 10) / (slen + 8);
    /* One batch's room on the heap: a static array for the largest batch
     * took 268 MB that AddressSanitizer poisoned at every start of
     * weft-rawpeer, whatever the mode (0.8 s each). */
    strs = malloc(per * (slen + 1));
    d = calloc(per, sizeof *d);
    rc = strs && d ? send_big_strings(trace, total, slen, per, strs, d) : 2;
    free(strs);
    free(d);
    return rc;
}

/* ---- hostile modes (#30): many connections ----
 *
 * RAWPEER_COUNT (default 1000) says how many; RAWPEER_SECONDS (default
 * 20) how long the holding modes hold.
 *  hello-hangup  that many processes of one trace (size: the count) each
 *                connect, say Hello, wait for the answer and hang up;
 *                prints how many were accepted and refused (the first
 *                and last refusals)
 *  hold-open     that many connections that never send a byte, each
 *                opened again when weftd closes it
 *  stall-header  the same, each sending a frame header announcing
 *                RAWPEER_FRAME bytes (default 65536) and one byte of it
 *                (RAWPEER_ONCE=1: each connection is opened once only)
 * The holding modes print how many connections weftd closed and how
 * many connects failed; they exit 0. */
int hello_hangup(const char *addr, const char *trace)
{
    unsigned n = env_count("RAWPEER_COUNT", 1000), ok = 0, refused = 0;
    unsigned lost = 0;
    char first[512] = "";

    stop_at_hello_ack = 1;
    quiet_errors = 1;
    for (unsigned i = 0; i < n; i++) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Hello h = WEFT__HELLO__INIT;
        int got;
        if (i > 0 && (close(sock), connect_to(addr)) < 0) {
            lost++;
            usleep(10000);
            continue;
        }
        if (strncmp(addr, "unix:", 5) != 0) {
            authenticated = 0;
            if (!send_auth(NULL, 0, NULL)) {
                refused++;
                continue;
            }
        }
        h.protocol_version = WEFT_PROTOCOL_VERSION;
        h.trace = (char *)trace;
        h.rank = i;
        h.size = n;
        h.hostname = "rawpeer";
        h.pid = hello_pid();
        h.uid = (uint32_t)getuid();
        h.timer_resolution = 1000000000;
        h.run = "hello-hangup";
        env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
        env.hello = &h;
        send_env(&env);
        got = await_reply_n(5000, 0);
        if (got == 4) {
            ok++;
        } else {
            refused++;
            if (!first[0])
                snprintf(first, sizeof first, "%s", last_error);
        }
    }
    close(sock);
    printf("hello-hangup: %u accepted, %u refused, %u connects failed\n",
           ok, refused, lost);
    if (first[0])
        printf("first refusal: %s\nlast refusal: %s\n", first, last_error);
    return 0;
}

int hold_connections(const char *addr, int stall)
{
    unsigned n = env_count("RAWPEER_COUNT", 1000);
    unsigned seconds = env_count("RAWPEER_SECONDS", 20);
    unsigned once = env_count("RAWPEER_ONCE", 0);
    unsigned opened = 1;
    uint32_t announce = env_count("RAWPEER_FRAME", 65536);
    uint8_t head[5] = { (uint8_t)(announce >> 24), (uint8_t)(announce >> 16),
                        (uint8_t)(announce >> 8), (uint8_t)announce, 0x0a };
    struct pollfd *pfd = calloc(n, sizeof *pfd);
    unsigned long closed = 0, failed = 0;
    struct timeval t0, now;

    if (!pfd)
        return 2;
    for (unsigned i = 0; i < n; i++)
        pfd[i].fd = -1;
    pfd[0].fd = sock;
    pfd[0].events = POLLIN;
    if (stall && write(sock, head, sizeof head) < 0)
        (void)0; /* its closing shows in poll */
    gettimeofday(&t0, NULL);
    for (;;) {
        for (unsigned i = 0; i < n; i++) {
            if (pfd[i].fd >= 0 || (once && opened >= n))
                continue;
            opened++;
            if (connect_to(addr) < 0) {
                if (sock >= 0)
                    close(sock);
                failed++;
                break; /* weftd's queue is full: try again later */
            }
            pfd[i].fd = sock;
            pfd[i].events = POLLIN;
            if (stall && write(sock, head, sizeof head) < 0)
                (void)0; /* its closing shows in poll */
        }
        gettimeofday(&now, NULL);
        if (now.tv_sec - t0.tv_sec >= (long)seconds)
            break;
        if (poll(pfd, n, 100) < 0 && errno != EINTR)
            break;
        for (unsigned i = 0; i < n; i++) {
            char b[4096];
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP |
                                                     POLLERR)))
                continue;
            if (read(pfd[i].fd, b, sizeof b) > 0)
                continue; /* an Error frame: its EOF follows */
            close(pfd[i].fd);
            pfd[i].fd = -1;
            closed++;
        }
    }
    printf("%s: %u connections held %u s: weftd closed %lu, %lu connects "
           "failed\n", stall ? "stall-header" : "hold-open", n, seconds,
           closed, failed);
    for (unsigned i = 0; i < n; i++)
        if (pfd[i].fd >= 0)
            close(pfd[i].fd);
    free(pfd);
    return 0;
}


/* A Hello of rank $RAWPEER_RANK (0) of a trace of $RAWPEER_SIZE (1)
 * members as this process; the caller changes what its mode needs. */
static void member_hello(Weft__Hello *h, const char *trace)
{
    weft__hello__init(h);
    h->protocol_version = WEFT_PROTOCOL_VERSION;
    h->trace = (char *)trace;
    h->rank = env_u32("RAWPEER_RANK", 0);
    h->size = env_u32("RAWPEER_SIZE", 1);
    h->hostname = "rawpeer";
    h->pid = hello_pid();
    h->uid = (uint32_t)getuid();
    h->timer_resolution = 1000000000;
}

/* Sends h, one region's definitions and its Enter/Leave on thread 0,
 * then g; waits for weftd's answer and hangs up. 0 once weftd closed
 * the connection or answered with an Error (printed), 1 on a timeout. */
static int member_run(Weft__Hello *h, Weft__Goodbye *g)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                          rec_event(WEFT_REC_Leave, 200, 0) };
    int got;

    ensure_auth();
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = h;
    send_env(&env);
    send_defs_region();
    send_records(1, 0, 1, 0, ev, 2);
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = g;
    send_env(&env);
    got = await_reply(30000);
    close(sock);
    return got == 0 || got == 1 ? 0 : 1;
}

/* ---- MODE goodbye-threads ------------------------------------------------
 * Rank $RAWPEER_RANK (0) of a trace of $RAWPEER_SIZE (1) members sends one
 * batch on thread 0, then a Goodbye naming $RAWPEER_THREADS (4096)
 * threads, the others reporting $RAWPEER_EVENTS (0) events each though
 * they sent none: conversion used to make a location of each. Exit 0
 * once weftd closed the connection (after the Goodbye) or answered with
 * an Error (printed), 1 on a timeout. */
int run_goodbye_threads(const char *trace)
{
    Weft__Hello h;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    uint32_t n = env_u32("RAWPEER_THREADS", 4096);
    uint64_t events = env_u32("RAWPEER_EVENTS", 0);
    Weft__LocationEnd *ends = calloc(n ? n : 1, sizeof *ends);
    Weft__LocationEnd **endp = calloc(n ? n : 1, sizeof *endp);
    int rc;

    if (!ends || !endp)
        return 2;
    member_hello(&h, trace);
    for (uint32_t i = 0; i < n; i++) {
        weft__location_end__init(&ends[i]);
        ends[i].location = i;
        ends[i].events = i == 0 ? 2 : events;
        endp[i] = &ends[i];
    }
    g.n_locations = n;
    g.locations = endp;
    rc = member_run(&h, &g);
    free(ends);
    free(endp);
    return rc;
}


/* ---- MODE tree-join ------------------------------------------------------
 * A member of the process tree $RAWPEER_RUN (another user's `weft run`:
 * its WEFT_TREE) in trace `trace`: a Hello as a tree member would send
 * (tree, rank UINT32_MAX, size 0; root when $RAWPEER_ROOT is 1; pid
 * $RAWPEER_PID), one Enter/Leave, then a Goodbye naming the processes
 * $RAWPEER_CHILDREN (comma-separated pids) as its children still running
 * and, with $RAWPEER_EXEC=1, an exec: all that could make a trace wait.
 * weftd keys a tree by its owner too, so this joins a trace of the
 * sender's own. Exit 0 once weftd closed the connection or answered with
 * an Error (printed), 1 on a timeout. */
int run_tree_join(const char *trace)
{
    Weft__Hello h;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    uint32_t kids[WEFT_MAX_CHILDREN];
    size_t nkids = 0;
    const char *list = getenv("RAWPEER_CHILDREN");

    for (const char *p = list; p && *p && nkids < WEFT_MAX_CHILDREN;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            break;
        kids[nkids++] = (uint32_t)v;
        p = *end == ',' ? end + 1 : end;
    }
    member_hello(&h, trace);
    h.rank = UINT32_MAX;
    h.size = 0;
    h.tree = 1;
    h.root = env_u32("RAWPEER_ROOT", 0) == 1;
    h.run = getenv("RAWPEER_RUN") ? getenv("RAWPEER_RUN") : "";
    h.parent_pid = 1;
    g.n_children = nkids;
    g.children = kids;
    g.exec = env_u32("RAWPEER_EXEC", 0) == 1;
    return member_run(&h, &g);
}
