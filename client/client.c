/* client.c - libweft's session: configuration from the environment, the
 * connection to weftd, per-thread states, the buffer pool, definitions and
 * the sender thread.
 *
 * DESIGN
 * One session per process (a client library without handles has no other
 * place for it than a static struct). Recording threads write into their
 * own buffers without locks (api.c); they touch the session mutex only
 * when a buffer is full, when the sender asked for a flush, on their first
 * and last record, and for definitions, which are rare.
 *
 * Buffers cycle: pool -> thread (filling) -> send queue -> in flight
 * (written to the socket, waiting for weftd's Ack) -> pool. The pool
 * allocates lazily up to WEFT_POOL_SIZE buffers, and never fewer than the
 * live threads + 1: each live thread holds at most one buffer, so a thread
 * waiting for one always has another coming back from weftd and cannot
 * wait forever behind threads that hold theirs while blocked in the app.
 * When the pool is exhausted the thread waits (lossless), unless
 * WEFT_OVERFLOW=discard, or weftd has made no progress (no Ack, no
 * HelloAck) for WEFT_STALL_MS: then the thread enters a *gap* and its
 * records are discarded and counted per location and type (see
 * client_internal.h) until a buffer is free again.
 *
 * The sender thread is the only one that reads and writes the socket
 * (non-blocking, one poll loop). It takes frames in this order under the
 * mutex: pending definitions first, then the oldest event batch; because
 * both are checked in one critical section, every definition made before
 * a batch was handed over goes out before that batch. Every flush period
 * it raises each thread's `attention` flag so partly filled buffers are
 * handed over on the thread's next record.
 *
 * Session states: NONE (not opened) -> ACTIVE (recording; connected or
 * reconnecting) or DISCARD (weftd unreachable at open, or it refused this
 * process for good: records are counted and dropped) -> CLOSED. FORKED
 * marks the copy of an open session in a child of fork(). The state is
 * written under the mutex and read lock-free by the record slow path;
 * whoever changes it raises every thread's `attention` afterwards, and the
 * slow path clears `attention` before reading the state (both seq_cst), so
 * no thread misses a change.
 *
 * Reconnection: batches and definitions chunks stay in flight (in send
 * order) until acknowledged. When the connection breaks, the sender
 * reconnects with jittered exponential backoff; the HelloAck says which
 * Definitions and, per location, which batch sequence numbers weftd holds.
 * Everything in flight goes back to the front of the queues, what weftd
 * holds is released, and the rest is sent again in the original order, so
 * weftd sees every sequence without gap or duplicate. A HelloAck that
 * holds less than weftd acknowledged before (its spool was lost, or the
 * trace was converted meanwhile) or more than was sent (another process
 * uses this rank) turns tracing off. weft_close keeps reconnecting until
 * WEFT_CLOSE_TIMEOUT_MS, or until weftd has been unreachable for
 * WEFT_STALL_MS; what is still unacknowledged then is counted as dropped.
 * A connection that breaks after the whole Goodbye was written is not
 * opened again: everything was acknowledged before the Goodbye, and a new
 * Hello would open a new, empty trace of the same name if weftd had taken
 * the Goodbye and converted the trace meanwhile.
 *
 * Clock offsets: weft_open (after the HelloAck) and the sender (once
 * everything is acknowledged, before the Goodbye) measure the trace
 * clock's offset to weftd's with ClockSync round trips on the socket and
 * queue it as a ClockOffset definition, so it is acknowledged, journaled
 * and resent like any definition (proto/clock.h, daemon/convert.c).
 *
 * Fatal signals: the handler (on_fatal_signal) only publishes its thread
 * and wakes the sender; the sender closes the session as weft_close
 * would, taking over only that thread's buffer, and the handler polls
 * sender_done before re-raising the signal with its default action.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_internal.h"
#include "clock.h"
#include "codec.h"
#include "frame.h"
#include "record.h"
#include "runid.h"
#include "weft.h"
#include "weft_errors.h"

#define WEFT__DEFAULT_SERVER "127.0.0.1:7411"
#define WEFT__DEFAULT_PORT "7411"
#define WEFT__DEFAULT_BUFFER (64u << 10)
/* Above the largest Metric record (255 members: about 4.6 KB). */
#define WEFT__MIN_BUFFER (8u << 10)
/* A batch frame must stay below weftd's default frame limit. */
#define WEFT__MAX_BUFFER (WEFT_DEFAULT_MAX_FRAME - (4u << 10))
#define WEFT__DEFAULT_POOL 256u /* 16 MiB of 64 KiB buffers, allocated as needed */
#define WEFT__MIN_POOL 2u
#define WEFT__MAX_POOL (1u << 20)
#define WEFT__DEFAULT_FLUSH_MS 500u
#define WEFT__DEFAULT_CLOSE_TIMEOUT_MS 30000u
#define WEFT__DEFAULT_STALL_MS 30000u
/* Reconnection backoff: doubles from MIN to MAX, jittered. */
#define WEFT__BACKOFF_MIN_MS 50u
#define WEFT__BACKOFF_MAX_MS 2000u
/* Records of a gap are written here before being counted: room for the
 * largest event record (a Metric of 255 members, about 4.6 KB). */
#define WEFT__SCRATCH_SIZE WEFT__MIN_BUFFER
#define WEFT__MAX_MS 3600000u
#define WEFT__CONNECT_TIMEOUT_MS 5000u
/* How long the answer to a Hello may take at least: a weftd that
 * accepted the connection is busy, not gone, so it gets WEFT_STALL_MS if
 * that is longer (see connect_and_hello). */
#define WEFT__HELLO_TIMEOUT_MS 5000u
/* After Goodbye: how long weftd may take to journal it and hang up. */
#define WEFT__EOF_TIMEOUT_MS 5000u
#define WEFT__TRACE_MAX 255
/* Definitions are shipped in chunks of at most this many bytes (one
 * record may be larger, up to WEFT__MAX_BUFFER). */
#define WEFT__DEFS_CHUNK (256u << 10)
/* WEFT_TAGS: at most this many tags, this many bytes in all. */
#define WEFT__MAX_TAGS 64u
#define WEFT__TAGS_MAX 4095u
#define WEFT__TAG_KEY_MAX 64u   /* weftd refuses longer keys */
/* Default of WEFT_SIGNAL_FLUSH_MS: how long a fatal signal waits for the
 * sender to ship what was recorded. */
#define WEFT__DEFAULT_SIGNAL_FLUSH_MS 1000u
#define WEFT__MAX_SIGNAL_FLUSH_MS 60000u
/* Round trips of a clock offset measurement, and how long one may take. */
#define WEFT__SYNC_ROUNDS 8u
#define WEFT__SYNC_TIMEOUT_MS 1000u
/* weft_metric remembers value types for metric ids below this. */
#define WEFT__METRIC_TYPES 4096

enum { ST_NONE, ST_ACTIVE, ST_DISCARD, ST_CLOSED, ST_FORKED };

/* One event buffer. `data` holds cfg.buffer_size bytes. */
typedef struct weft__buf {
    struct weft__buf *next;  /* in the free list, send queue or in flight */
    uint64_t base_time;      /* the owner's previous event time at start */
    uint64_t seq;            /* batch sequence number, per location */
    uint32_t location;
    uint32_t events;         /* records in data[0..len) */
    size_t len;
    uint8_t data[];
} weft__buf;

/* A piece of the definitions stream. */
typedef struct weft__chunk {
    struct weft__chunk *next;
    uint64_t seq;            /* Definitions sequence number once sent */
    size_t len, cap;
    uint8_t *data;
} weft__chunk;

typedef struct intern_slot {
    char *key;               /* owned */
    uint32_t id;
} intern_slot;

/* String -> id, open addressing, power-of-two capacity. */
typedef struct intern_table {
    intern_slot *slots;
    size_t cap, n;
} intern_table;

typedef struct weft__config {
    char server[512];        /* WEFT_SERVER as given, for messages */
    int is_unix;
    char host[256];          /* TCP: name or address, brackets removed */
    char port[8];
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char trace[WEFT__TRACE_MAX + 1];
    char run[WEFT__RUN_MAX + 1]; /* the launch (runid.h); "" if unknown */
    char job_id[256];
    uint32_t rank, size;
    size_t buffer_size;      /* bytes */
    uint32_t pool_size;      /* buffers */
    uint32_t flush_ms;       /* 0: no periodic flush */
    uint32_t close_timeout_ms;
    uint32_t stall_ms;       /* see WEFT_STALL_MS */
    int overflow_discard;    /* WEFT_OVERFLOW=discard */
    int required;
    uint64_t resolution;     /* trace clock ticks per second (WEFT_CLOCK) */
    int signals;             /* WEFT_SIGNALS: flush on fatal signals */
    uint32_t signal_flush_ms; /* WEFT_SIGNAL_FLUSH_MS */
    /* WEFT_TAGS: ntags key/value pairs, NUL-terminated in tagbuf. */
    uint32_t ntags;
    uint16_t tag_key[WEFT__MAX_TAGS], tag_value[WEFT__MAX_TAGS];
    char tagbuf[WEFT__TAGS_MAX + 1];
} weft__config;

/* Bytes arriving from weftd, cut into frames. Sender thread only (the
 * opening thread before the sender starts). */
typedef struct weft__input {
    uint8_t buf[16384];
    size_t off, len;
    weft_frame_reader rd;
} weft__input;

/* A frame being written. Sender thread only. */
typedef struct weft__out {
    uint8_t *data;           /* malloc'd frame, NULL when idle */
    size_t len, off;
    int is_goodbye;
} weft__out;

static struct weft__session {
    pthread_mutex_t open_mu;   /* serializes weft_open and weft_close */
    pthread_mutex_t mu;        /* everything below unless noted */
    pthread_cond_t pool_cv;    /* a buffer came back or the state changed */
    atomic_int state;          /* ST_*: written under mu, read anywhere */
    weft__config cfg;          /* set by weft_open before any use; then read-only */
    int hooks_installed;       /* atexit/atfork; under open_mu */
    int signals_installed;     /* fatal signal handlers; under open_mu */
    /* Buffers. Lists are in send order (per location: by sequence). */
    weft__buf *free_list;
    size_t nbufs;              /* allocated */
    weft__buf *q_head, *q_tail; /* handed over (or to resend), not yet sent */
    weft__buf *f_head, *f_tail; /* sent, waiting for an Ack */
    /* Definitions. */
    weft__chunk *d_head, *d_tail; /* pending (or to resend) */
    weft__chunk *df_head, *df_tail; /* sent, waiting for an Ack */
    uint64_t defs_seq;         /* last Definitions sequence number used */
    /* Flow control. */
    atomic_int connected;      /* written under mu by the sender */
    uint64_t progress_ms;      /* last sign that weftd works: an Ack, a
                                * HelloAck, or nothing owed to us */
    int stalled;               /* no progress for WEFT_STALL_MS: pool
                                * waits give up; cleared by progress */
    int stall_warned;
    uint32_t gaps;             /* threads in a gap */
    uint64_t close_start_ms;   /* when weft_close began */
    uint32_t close_limit_ms;   /* WEFT_CLOSE_TIMEOUT_MS, or after a fatal
                                * signal WEFT_SIGNAL_FLUSH_MS if shorter */
    int end_synced;            /* the closing clock offset is measured;
                                * sender only */
    intern_table strings, regions;
    uint32_t next_string, next_region, next_member, next_metric;
    /* Threads. */
    weft__thread *threads;     /* registry, newest first */
    uint32_t nthreads;         /* location indexes handed out */
    uint32_t live;             /* threads not exited */
    /* Connection: fd and input belong to the sender once it runs. */
    int fd;
    int wake_fd;               /* eventfd: app threads -> sender */
    weft__input in;
    pthread_t sender;
    int sender_started;        /* under open_mu */
    int closing;               /* weft_close asked the sender to finish */
    int goodbye_queued;        /* on this connection; sender only */
    int close_rc;              /* set by the sender before it exits */
    /* Fatal signals (on_fatal_signal): the handler publishes the signal
     * and its thread's state, the sender closes the session and says
     * sender_done when it has finished. */
    atomic_int signal_seen;    /* a fatal signal's flush has begun */
    atomic_int signal_pending;
    _Atomic(weft__thread *) signal_thread;
    atomic_int sender_done;
    atomic_int sender_tid;
} S = {
    .open_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .pool_cv = PTHREAD_COND_INITIALIZER,
    .fd = -1,
    .wake_fd = -1,
};

__thread weft__thread *weft__tls __attribute__((tls_model("initial-exec")));

static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static int thread_key_ok;
/* p and end of a thread without a buffer point here (p == end). */
static uint8_t no_buffer[1];
static _Atomic uint8_t metric_types[WEFT__METRIC_TYPES];

void weft__warn(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One write, so lines from several processes do not interleave. */
    fprintf(stderr, "weft: %s\n", line);
}

#define warn weft__warn

/* CLOCK_MONOTONIC in ms: timeouts, waits (not the trace clock). */
static uint64_t now_ms(void)
{
    return weft__mono_ns() / 1000000u;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* ---- configuration from the environment ---------------------------------- */

/* The variable's value, NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);

    return v && *v ? v : NULL;
}

/* env() as runid.h's lookup callback. */
static const char *env_fn(const char *name, void *arg)
{
    (void)arg;
    return env(name);
}

/* CLOCK_REALTIME in ns: tells apart two processes that had the same pid. */
static uint64_t realtime_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The first variable of `names` that is set, NULL if none. */
static const char *env_first(const char *const *names, const char **which)
{
    for (; *names; names++) {
        const char *v = env(*names);
        if (v) {
            *which = *names;
            return v;
        }
    }
    return NULL;
}

/* Plain decimal: digits only. 0, or -1 for bad syntax, -2 above max. */
static int parse_decimal(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (UINT64_MAX - 9) / 10)
            return -2;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v > max)
        return -2;
    *out = v;
    return 0;
}

/* A number from variable `name` in [min, max], def if unset. Returns 0 or
 * WEFT_ECONFIG after saying what is wrong. */
static int env_number(const char *name, uint64_t min, uint64_t max,
                      uint64_t def, uint64_t *out)
{
    const char *v = env(name);
    uint64_t n = 0;
    int rc;

    if (!v) {
        *out = def;
        return 0;
    }
    rc = parse_decimal(v, max, &n);
    if (rc == -1) {
        warn("%s='%s' is not a plain decimal number", name, v);
        return WEFT_ECONFIG;
    }
    if (rc < 0 || n < min) {
        warn("%s='%s' is out of range (%" PRIu64 " to %" PRIu64 ")", name, v,
             min, max);
        return WEFT_ECONFIG;
    }
    *out = n;
    return 0;
}

/* WEFT_BUFFER_SIZE: bytes with an optional k/K or m/M suffix. */
static int env_buffer_size(size_t *out)
{
    const char *v = env("WEFT_BUFFER_SIZE");
    char digits[32];
    uint64_t n = 0, mult = 1;
    size_t len;

    if (!v) {
        *out = WEFT__DEFAULT_BUFFER;
        return 0;
    }
    len = strlen(v);
    if (len >= sizeof digits)
        goto bad;
    memcpy(digits, v, len + 1);
    if (len > 0 && strchr("kKmM", digits[len - 1])) {
        mult = (digits[len - 1] == 'k' || digits[len - 1] == 'K') ? 1024
                                                                  : 1024 * 1024;
        digits[--len] = 0;
    }
    if (parse_decimal(digits, UINT32_MAX, &n) == -1)
        goto bad;
    n *= mult;
    if (n < WEFT__MIN_BUFFER || n > WEFT__MAX_BUFFER) {
        warn("WEFT_BUFFER_SIZE='%s' is out of range (%u to %u bytes)", v,
             WEFT__MIN_BUFFER, WEFT__MAX_BUFFER);
        return WEFT_ECONFIG;
    }
    *out = (size_t)n;
    return 0;
bad:
    warn("WEFT_BUFFER_SIZE='%s' is not a size (a decimal number of bytes, "
         "optionally followed by k or m)", v);
    return WEFT_ECONFIG;
}

/* WEFT_SERVER: "host:port", "[v6addr]:port", "host" or "unix:/path". */
static int parse_server(weft__config *c)
{
    const char *v = env("WEFT_SERVER");
    const char *host, *colon, *port;
    size_t hlen;
    uint64_t n;

    if (!v)
        v = WEFT__DEFAULT_SERVER;
    if (strlen(v) >= sizeof c->server) {
        warn("WEFT_SERVER is longer than %zu bytes", sizeof c->server - 1);
        return WEFT_ECONFIG;
    }
    strcpy(c->server, v);
    if (strncmp(v, "unix:", 5) == 0) {
        c->is_unix = 1;
        if (!v[5] || strlen(v + 5) >= sizeof c->path) {
            warn("WEFT_SERVER='%s': the socket path must be 1 to %zu bytes",
                 v, sizeof c->path - 1);
            return WEFT_ECONFIG;
        }
        strcpy(c->path, v + 5);
        return 0;
    }
    if (v[0] == '[') {
        const char *close = strchr(v, ']');
        if (!close || (close[1] && close[1] != ':'))
            goto bad;
        host = v + 1;
        hlen = (size_t)(close - host);
        port = close[1] ? close + 2 : WEFT__DEFAULT_PORT;
    } else {
        colon = strchr(v, ':');
        if (colon && strchr(colon + 1, ':'))
            goto bad; /* a bare IPv6 address: put it in brackets */
        host = v;
        hlen = colon ? (size_t)(colon - v) : strlen(v);
        port = colon ? colon + 1 : WEFT__DEFAULT_PORT;
    }
    if (hlen == 0 || hlen >= sizeof c->host)
        goto bad;
    if (parse_decimal(port, 65535, &n) < 0 || n == 0)
        goto bad;
    memcpy(c->host, host, hlen);
    c->host[hlen] = 0;
    snprintf(c->port, sizeof c->port, "%" PRIu64, n);
    return 0;
bad:
    warn("WEFT_SERVER='%s' is not HOST:PORT, [IPV6]:PORT or unix:/PATH "
         "(port 1 to 65535)", v);
    return WEFT_ECONFIG;
}

/* WEFT_TEST_CLOCK_SHIFT_NS: for tests only, a signed number of ns added
 * to the trace clock (a host whose clock is off). 0 or WEFT_ECONFIG. */
static int env_shift(int64_t *out)
{
    const char *v = env("WEFT_TEST_CLOCK_SHIFT_NS");
    uint64_t n;

    *out = 0;
    if (!v)
        return 0;
    if (parse_decimal(v + (v[0] == '-'), INT64_MAX, &n) < 0) {
        warn("WEFT_TEST_CLOCK_SHIFT_NS='%s' is not a decimal number of ns "
             "(from -%" PRId64 " to %" PRId64 ")", v, INT64_MAX, INT64_MAX);
        return WEFT_ECONFIG;
    }
    *out = v[0] == '-' ? -(int64_t)n : (int64_t)n;
    return 0;
}

/* 1 if c may be part of a tag key. */
static int tag_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* Parses WEFT_TAGS ("key=value,key=value"; `\,` and `\\` in values are
 * a comma and a backslash) into c's tags. A bad value is reported, naming
 * the bad part, and the tags are ignored; with WEFT_REQUIRED=1 it is an
 * error. Returns 0 or WEFT_ECONFIG. */
static int parse_tags(weft__config *c)
{
    const char *v = env("WEFT_TAGS"), *s;
    char *out = c->tagbuf, bad[160];
    size_t klen;

    c->ntags = 0;
    if (!v)
        return 0;
    if (strlen(v) > WEFT__TAGS_MAX) {
        snprintf(bad, sizeof bad, "longer than %u bytes", WEFT__TAGS_MAX);
        goto bad;
    }
    for (s = v; *s;) {
        const char *start = s;
        if (c->ntags == WEFT__MAX_TAGS) {
            snprintf(bad, sizeof bad, "more than %u tags", WEFT__MAX_TAGS);
            goto bad;
        }
        for (klen = 0; tag_key_char(s[klen]); klen++)
            ;
        if (klen == 0 || klen > WEFT__TAG_KEY_MAX || s[klen] != '=') {
            size_t n = strcspn(start, ",");
            snprintf(bad, sizeof bad, "'%.*s' is not key=value with a key "
                     "of 1 to %u characters [A-Za-z0-9_.-]",
                     (int)(n > 48 ? 48 : n), start, WEFT__TAG_KEY_MAX);
            goto bad;
        }
        for (uint32_t i = 0; i < c->ntags; i++) {
            if (strlen(c->tagbuf + c->tag_key[i]) == klen &&
                memcmp(c->tagbuf + c->tag_key[i], s, klen) == 0) {
                snprintf(bad, sizeof bad, "key '%.*s' appears twice",
                         (int)klen, s);
                goto bad;
            }
        }
        c->tag_key[c->ntags] = (uint16_t)(out - c->tagbuf);
        memcpy(out, s, klen);
        out += klen;
        *out++ = 0;
        s += klen + 1;
        c->tag_value[c->ntags] = (uint16_t)(out - c->tagbuf);
        for (; *s && *s != ','; s++) {
            if (*s == '\\' && (s[1] == ',' || s[1] == '\\'))
                s++;
            *out++ = *s;
        }
        *out++ = 0;
        c->ntags++;
        if (*s == ',') {
            s++;
            if (!*s) {
                snprintf(bad, sizeof bad, "a ',' ends the list");
                goto bad;
            }
        }
    }
    return 0;
bad:
    c->ntags = 0;
    /* A long list is cut short in the message; `bad` names the part. */
    if (c->required) {
        warn("WEFT_TAGS='%.80s%s': %s (WEFT_REQUIRED=1)", v,
             strlen(v) > 80 ? "..." : "", bad);
        return WEFT_ECONFIG;
    }
    warn("WEFT_TAGS='%.80s%s': %s; the trace gets no tags", v,
         strlen(v) > 80 ? "..." : "", bad);
    return 0;
}

/* Reads and checks the whole configuration. Returns 0 or WEFT_ECONFIG
 * after one message on stderr naming the variable and its value. */
static int config_load(weft__config *c)
{
    static const char *const rank_vars[] = {
        "WEFT_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
        "SLURM_PROCID", "MV2_COMM_WORLD_RANK", NULL };
    static const char *const size_vars[] = {
        "WEFT_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
        "MV2_COMM_WORLD_SIZE", NULL };
    static const char *const job_vars[] = {
        "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", NULL };
    const char *rank_var = "default", *size_var = "default", *trace_var;
    const char *v;
    char host[256] = "host", why[256];
    weft__run run;
    int64_t shift = 0;
    uint64_t n;
    int rc;

    memset(c, 0, sizeof *c);
    rc = parse_server(c);
    if (rc < 0)
        return rc;

    c->size = 1;
    v = env_first(size_vars, &size_var);
    if (v) {
        rc = parse_decimal(v, UINT32_MAX, &n);
        if (rc < 0 || n == 0) {
            warn("%s='%s' is not a valid trace size (a plain decimal number "
                 "from 1 to %u)", size_var, v, UINT32_MAX);
            return WEFT_ECONFIG;
        }
        c->size = (uint32_t)n;
    }
    v = env_first(rank_vars, &rank_var);
    if (v) {
        if (parse_decimal(v, UINT32_MAX - 1, &n) < 0) {
            warn("%s='%s' is not a valid rank (a plain decimal number)",
                 rank_var, v);
            return WEFT_ECONFIG;
        }
        c->rank = (uint32_t)n;
    }
    if (c->rank >= c->size) {
        warn("rank %u (from %s) is not below the trace size %u (from %s)",
             c->rank, rank_var, c->size, size_var);
        return WEFT_ECONFIG;
    }

    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    rc = weft__run_identify(env_fn, NULL, c->size, host, (long)getpid(),
                            realtime_ns(), &run, why, sizeof why);
    if (rc < 0) {
        warn("%s", why);
        return WEFT_ECONFIG;
    }
    memcpy(c->run, run.id, sizeof c->run);
    v = env("WEFT_TRACE");
    if (v) {
        if (strlen(v) > WEFT__TRACE_MAX) {
            warn("WEFT_TRACE is longer than %d bytes and cannot name a "
                 "trace", WEFT__TRACE_MAX);
            return WEFT_ECONFIG;
        }
        for (const char *s = v; *s; s++) {
            if ((unsigned char)*s < 0x20 || *s == 0x7f) {
                warn("WEFT_TRACE contains control characters and cannot "
                     "name a trace");
                return WEFT_ECONFIG;
            }
        }
        strcpy(c->trace, v);
    } else if (weft__run_default_name(env_fn, NULL,
                                      program_invocation_short_name, &run,
                                      c->trace, sizeof c->trace) < 0) {
        warn("WEFT_TRACE is not set and nothing identifies this launch "
             "(WEFT_RUN, PMIX_NAMESPACE, SLURM_JOB_ID, PBS_JOBID, "
             "LSB_JOBID): the %u processes of this trace need a common "
             "name (rank %u, size from %s)", c->size, c->rank, size_var);
        return WEFT_ECONFIG;
    }
    v = env_first(job_vars, &trace_var);
    if (v)
        snprintf(c->job_id, sizeof c->job_id, "%s", v);

    rc = env_buffer_size(&c->buffer_size);
    if (rc < 0)
        return rc;
    rc = env_number("WEFT_POOL_SIZE", WEFT__MIN_POOL, WEFT__MAX_POOL,
                    WEFT__DEFAULT_POOL, &n);
    if (rc < 0)
        return rc;
    c->pool_size = (uint32_t)n;
    rc = env_number("WEFT_FLUSH_MS", 0, WEFT__MAX_MS, WEFT__DEFAULT_FLUSH_MS,
                    &n);
    if (rc < 0)
        return rc;
    c->flush_ms = (uint32_t)n;
    rc = env_number("WEFT_CLOSE_TIMEOUT_MS", 0, WEFT__MAX_MS,
                    WEFT__DEFAULT_CLOSE_TIMEOUT_MS, &n);
    if (rc < 0)
        return rc;
    c->close_timeout_ms = (uint32_t)n;
    rc = env_number("WEFT_STALL_MS", 0, WEFT__MAX_MS, WEFT__DEFAULT_STALL_MS,
                    &n);
    if (rc < 0)
        return rc;
    c->stall_ms = (uint32_t)n;
    v = env("WEFT_OVERFLOW");
    if (v && strcmp(v, "wait") != 0 && strcmp(v, "discard") != 0) {
        warn("WEFT_OVERFLOW='%s' must be wait or discard", v);
        return WEFT_ECONFIG;
    }
    c->overflow_discard = v && strcmp(v, "discard") == 0;
    v = env("WEFT_REQUIRED");
    if (v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        warn("WEFT_REQUIRED='%s' must be 0 or 1", v);
        return WEFT_ECONFIG;
    }
    c->required = v && v[0] == '1';
    rc = env_number("WEFT_SIGNALS", 0, 1, 1, &n);
    if (rc < 0)
        return rc;
    c->signals = (int)n;
    rc = env_number("WEFT_SIGNAL_FLUSH_MS", 0, WEFT__MAX_SIGNAL_FLUSH_MS,
                    WEFT__DEFAULT_SIGNAL_FLUSH_MS, &n);
    if (rc < 0)
        return rc;
    c->signal_flush_ms = (uint32_t)n;
    rc = parse_tags(c);
    if (rc < 0)
        return rc;
    rc = env_shift(&shift);
    if (rc < 0)
        return rc;
    return weft__clock_setup(env("WEFT_CLOCK"), shift, &c->resolution);
}

/* ---- interning ------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot holding s, or the empty slot where it would go. cap > 0. */
static intern_slot *intern_slot_of(const intern_table *t, const char *s)
{
    size_t mask = t->cap - 1, i = (size_t)hash_str(s) & mask;

    while (t->slots[i].key && strcmp(t->slots[i].key, s) != 0)
        i = (i + 1) & mask;
    return &t->slots[i];
}

/* The id of s, or -1 if it is not in the table. */
static int64_t intern_find(const intern_table *t, const char *s)
{
    const intern_slot *sl;

    if (t->cap == 0)
        return -1;
    sl = intern_slot_of(t, s);
    return sl->key ? (int64_t)sl->id : -1;
}

/* Adds s -> id (s not present). Returns 0 or WEFT_ENOMEM. */
static int intern_add(intern_table *t, const char *s, uint32_t id)
{
    intern_slot *sl;
    char *key;

    if (2 * (t->n + 1) > t->cap) {
        intern_table bigger = { NULL, t->cap ? 2 * t->cap : 64, t->n };
        bigger.slots = calloc(bigger.cap, sizeof *bigger.slots);
        if (!bigger.slots)
            return WEFT_ENOMEM;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].key)
                *intern_slot_of(&bigger, t->slots[i].key) = t->slots[i];
        free(t->slots);
        *t = bigger;
    }
    key = strdup(s);
    if (!key)
        return WEFT_ENOMEM;
    sl = intern_slot_of(t, s);
    sl->key = key;
    sl->id = id;
    t->n++;
    return 0;
}

static void intern_free(intern_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].key);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* ---- threads ----------------------------------------------------------------- */

static void raise_attention_locked(void)
{
    for (weft__thread *t = S.threads; t; t = t->next)
        atomic_store(&t->attention, 1);
}

/* Threads in a gap look for a buffer on their next record. mu held. */
static void raise_gap_attention_locked(void)
{
    for (weft__thread *t = S.threads; t; t = t->next)
        if (t->in_gap)
            atomic_store(&t->attention, 1);
}

static void wake_sender(void)
{
    uint64_t one = 1;

    if (S.wake_fd >= 0 && write(S.wake_fd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is already non-zero, the sender will wake. */
    }
}

/* The state of location `location`, NULL if no thread has it. mu held. */
static weft__thread *thread_of_locked(uint32_t location)
{
    for (weft__thread *t = S.threads; t; t = t->next)
        if (t->location == location)
            return t;
    return NULL;
}

static void bufq_push(weft__buf **head, weft__buf **tail, weft__buf *b)
{
    b->next = NULL;
    if (*tail)
        (*tail)->next = b;
    else
        *head = b;
    *tail = b;
}

/* Returns b to the pool: one waiting thread and the threads in a gap are
 * told. mu held. */
static void buf_free_locked(weft__buf *b)
{
    b->next = S.free_list;
    S.free_list = b;
    pthread_cond_signal(&S.pool_cv);
    if (S.gaps)
        raise_gap_attention_locked();
}

/* weftd made progress: pool waits start over, gaps may end. mu held. */
static void progress_locked(void)
{
    S.progress_ms = now_ms();
    if (S.stalled) {
        S.stalled = 0;
        pthread_cond_broadcast(&S.pool_cv);
        raise_gap_attention_locked();
    }
}

/* Counts the `n` event records encoded in data[0..len) (times relative to
 * base_time) as dropped on t, by type. mu held. */
static void count_dropped_locked(weft__thread *t, const uint8_t *data,
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
        count_dropped_locked(t, s->data, (size_t)(t->p - s->data),
                             s->base_time, t->nevents);
    t->nevents = 0;
    if (s) {
        s->base_time = t->prev_time;
        t->p = s->data;
        t->end = s->data + WEFT__SCRATCH_SIZE;
    }
}

/* Ends t's gap after counting its last records. mu held. */
static void gap_end_locked(weft__thread *t)
{
    if (!t->in_gap)
        return;
    gap_drain_locked(t);
    t->in_gap = 0;
    S.gaps--;
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
        S.gaps++;
        /* The first buffer after the gap begins with MeasurementOnOff
         * OFF at gap_start and ON at the last discarded record's time
         * (buf_acquire_locked), so readers see where records are missing.
         * A gap still open when the thread or session ends has no marks:
         * nothing follows it. */
    }
    if (!t->scratch) {
        t->scratch = malloc(sizeof *t->scratch + WEFT__SCRATCH_SIZE);
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
static void buf_release_locked(weft__thread *t, int *wake)
{
    weft__buf *b = t->cur;

    if (!b) {
        gap_drain_locked(t);
        return;
    }
    if (t->nevents > 0 && atomic_load(&S.state) == ST_ACTIVE) {
        b->len = (size_t)(t->p - b->data);
        b->events = t->nevents;
        b->seq = ++t->seq;
        b->location = t->location;
        t->recorded += t->nevents;
        /* Nothing was owed by weftd until now: the stall clock starts. */
        if (atomic_load(&S.connected) && !S.q_head && !S.f_head)
            S.progress_ms = now_ms();
        bufq_push(&S.q_head, &S.q_tail, b);
        *wake = 1;
    } else {
        if (t->nevents > 0)
            count_dropped_locked(t, b->data, (size_t)(t->p - b->data),
                                 b->base_time, t->nevents);
        buf_free_locked(b);
    }
    t->cur = NULL;
    t->p = t->end = no_buffer;
    t->nevents = 0;
}

/* Waits on pool_cv until `deadline_ms` (trace clock). mu held. */
static void pool_wait_until(uint64_t deadline_ms)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(deadline_ms / 1000u);
    ts.tv_nsec = (long)(deadline_ms % 1000u) * 1000000L;
    pthread_cond_timedwait(&S.pool_cv, &S.mu, &ts);
}

/* pool_cv waits on the trace clock (CLOCK_MONOTONIC). */
static void pool_cv_init(void)
{
    pthread_condattr_t a;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&S.pool_cv, &a);
    pthread_condattr_destroy(&a);
}

#define WEFT__GAP 2

/* Gives t a buffer. While the pool is exhausted it waits, unless
 * WEFT_OVERFLOW=discard or weftd has made no progress for WEFT_STALL_MS
 * (then it gives up: stalled). Returns 1 (t has a buffer), WEFT__GAP (no
 * buffer: discard), 0 if the session left ACTIVE meanwhile, or
 * WEFT_ENOMEM. *warn_ms is set to how long weftd has been unreachable
 * when the caller should warn that discarding begins. mu held. */
static int buf_acquire_locked(weft__thread *t, uint64_t *warn_ms)
{
    weft__buf *b;
    int in_gap;

    assert(!t->cur);
    for (;;) {
        size_t limit = S.cfg.pool_size > S.live + 1 ? S.cfg.pool_size
                                                    : (size_t)S.live + 1;
        uint64_t now, deadline;
        if (atomic_load(&S.state) != ST_ACTIVE)
            return 0;
        if (S.free_list) {
            b = S.free_list;
            S.free_list = b->next;
            break;
        }
        if (S.nbufs < limit) {
            b = malloc(sizeof *b + S.cfg.buffer_size);
            if (!b)
                return WEFT_ENOMEM;
            S.nbufs++;
            break;
        }
        if (S.cfg.overflow_discard || S.stalled)
            return WEFT__GAP;
        now = now_ms();
        deadline = S.progress_ms + S.cfg.stall_ms;
        if (now >= deadline) {
            S.stalled = 1;
            pthread_cond_broadcast(&S.pool_cv);
            if (!S.stall_warned) {
                S.stall_warned = 1;
                *warn_ms = now - S.progress_ms + 1;
            }
            return WEFT__GAP;
        }
        pool_wait_until(deadline);
    }
    b->next = NULL;
    b->base_time = t->prev_time;
    in_gap = t->in_gap;
    gap_end_locked(t); /* counts the gap's last records first */
    t->cur = b;
    t->p = b->data;
    t->end = b->data + S.cfg.buffer_size;
    t->nevents = 0;
    if (in_gap) {
        /* Discarded records advanced prev_time past gap_start, which is
         * not below any record shipped before the gap. */
        b->base_time = t->gap_start;
        t->p = weft__put_uvarint(t->p, WEFT_REC_MeasurementOnOff);
        t->p = weft__put_uvarint(t->p, 0);
        t->p = weft__put_uvarint(t->p, OTF2_MEASUREMENT_OFF);
        t->p = weft__put_uvarint(t->p, WEFT_REC_MeasurementOnOff);
        t->p = weft__put_uvarint(t->p, t->prev_time - t->gap_start);
        t->p = weft__put_uvarint(t->p, OTF2_MEASUREMENT_ON);
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

    pthread_mutex_lock(&S.mu);
    buf_release_locked(t, &wake);
    gap_end_locked(t);
    if (!t->exited) {
        t->exited = 1;
        S.live--;
    }
    free(t->scratch);
    t->scratch = NULL;
    atomic_store(&t->attention, 1);
    pthread_mutex_unlock(&S.mu);
    if (wake)
        wake_sender();
}

static void make_thread_key(void)
{
    thread_key_ok = pthread_key_create(&thread_key, thread_exit) == 0;
}

/* The calling thread's state, created (with the next location index) on
 * first use; NULL when out of memory. The session owns it. */
static weft__thread *thread_self(void)
{
    weft__thread *t = weft__tls;

    if (t)
        return t;
    pthread_once(&thread_key_once, make_thread_key);
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->p = t->end = no_buffer;
    atomic_init(&t->attention, 0);
    pthread_mutex_lock(&S.mu);
    t->location = S.nthreads++;
    t->next = S.threads;
    S.threads = t;
    S.live++;
    pthread_mutex_unlock(&S.mu);
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
         S.cfg.server, unreachable_ms, S.cfg.stall_ms);
}

/* See client_internal.h: 1 (room made in the caller's buffer or, in a
 * gap, in its scratch buffer), 0 (record dropped and counted), or a
 * WEFT_E* code. May wait for a free buffer. */
int weft__record_slow(size_t bound, uint64_t time)
{
    weft__thread *t = thread_self();
    uint64_t warn_ms = 0;
    int wake, rc, gap;

    if (!t)
        return WEFT_ENOMEM;
retry:
    if (time < t->prev_time)
        return WEFT_ETIME;
    atomic_store(&t->attention, 0);
    switch (atomic_load(&S.state)) {
    case ST_ACTIVE:
        break;
    case ST_DISCARD:
    case ST_FORKED:
        /* Tracing is off: one long gap. */
        pthread_mutex_lock(&S.mu);
        if (t->cur) {
            wake = 0;
            buf_release_locked(t, &wake);
        }
        gap_drain_locked(t);
        rc = gap_enter_locked(t, bound, time);
        pthread_mutex_unlock(&S.mu);
        return rc;
    default:
        atomic_store(&t->attention, 1);
        return WEFT_ECLOSED;
    }
    if (t->exited) {
        atomic_store(&t->attention, 1);
        pthread_mutex_lock(&S.mu);
        t->dropped++;
        pthread_mutex_unlock(&S.mu);
        return WEFT_ECLOSED;
    }
    if (bound > S.cfg.buffer_size)
        return WEFT_ETOOBIG;
    /* A buffer with room and nothing in it: only a flush request. */
    if (t->cur && t->nevents == 0)
        return 1;
    wake = 0;
    gap = 0;
    pthread_mutex_lock(&S.mu);
    /* full, a flush was requested, or the end of a scratch buffer */
    buf_release_locked(t, &wake);
    rc = buf_acquire_locked(t, &warn_ms);
    if (rc == WEFT__GAP) {
        rc = gap_enter_locked(t, bound, time);
        gap = 1;
    }
    pthread_mutex_unlock(&S.mu);
    if (wake)
        wake_sender();
    if (warn_ms)
        warn_stall(warn_ms - 1);
    if (rc == 0 && !gap)
        goto retry; /* the session changed state while we waited */
    return rc;
}

/* ---- definitions ------------------------------------------------------------- */

/* Encodes r at the end of the pending definitions. mu held. Returns 0,
 * WEFT_ETOOBIG or WEFT_ENOMEM. */
static int defs_append_locked(const weft_record *r)
{
    size_t bound = weft_encode_bound(r);
    weft__chunk *c = S.d_tail;
    ssize_t n;

    if (bound > WEFT__MAX_BUFFER)
        return WEFT_ETOOBIG;
    if (!c || c->seq || (c->len > 0 && c->len + bound > WEFT__DEFS_CHUNK)) {
        c = calloc(1, sizeof *c);
        if (!c)
            return WEFT_ENOMEM;
        if (S.d_tail)
            S.d_tail->next = c;
        else
            S.d_head = c;
        S.d_tail = c;
    }
    if (c->len + bound > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        uint8_t *p;
        while (cap < c->len + bound)
            cap *= 2;
        p = realloc(c->data, cap);
        if (!p)
            return WEFT_ENOMEM;
        c->data = p;
        c->cap = cap;
    }
    n = weft_encode(r, NULL, c->data + c->len, c->cap - c->len);
    if (n < 0)
        return (int)n;
    c->len += (size_t)n;
    return 0;
}

/* See client_internal.h: 0, WEFT_ECLOSED, WEFT_ETOOBIG or WEFT_ENOMEM.
 * The encoded bytes are the session's; r stays the caller's. */
int weft__def_append(const weft_record *r)
{
    int rc = 0;

    pthread_mutex_lock(&S.mu);
    switch (atomic_load(&S.state)) {
    case ST_ACTIVE:
        rc = defs_append_locked(r);
        break;
    case ST_DISCARD:
    case ST_FORKED:
        break;
    default:
        rc = WEFT_ECLOSED;
        break;
    }
    pthread_mutex_unlock(&S.mu);
    return rc;
}

static int session_usable(void)
{
    int st = atomic_load(&S.state);

    return st == ST_ACTIVE || st == ST_DISCARD || st == ST_FORKED;
}

/* Defines a record unless tracing is off. mu held. */
static int define_locked(const weft_record *r)
{
    return atomic_load(&S.state) == ST_ACTIVE ? defs_append_locked(r) : 0;
}

/* The id of string s, defining it on first use. mu held.
 * OTF2_UNDEFINED_STRING on failure. */
static OTF2_StringRef string_locked(const char *s)
{
    weft_record r = { .type = WEFT_REC_String };
    int64_t found = intern_find(&S.strings, s);
    OTF2_StringRef id;

    if (found >= 0)
        return (OTF2_StringRef)found;
    id = S.next_string;
    if (id == OTF2_UNDEFINED_STRING)
        return OTF2_UNDEFINED_STRING;
    r.u.String.self = id;
    r.u.String.string = s;
    if (define_locked(&r) < 0)
        return OTF2_UNDEFINED_STRING;
    S.next_string++;
    /* Without memory to remember it, s is defined again next time. */
    (void)intern_add(&S.strings, s, id);
    return id;
}

/* The id of s (interned: equal strings, one id), defined on first use;
 * OTF2_UNDEFINED_STRING when the session is not open. s is copied. */
WEFT_API OTF2_StringRef weft_string(const char *s)
{
    OTF2_StringRef id = OTF2_UNDEFINED_STRING;

    if (!s)
        return OTF2_UNDEFINED_STRING;
    pthread_mutex_lock(&S.mu);
    if (session_usable())
        id = string_locked(s);
    pthread_mutex_unlock(&S.mu);
    return id;
}

/* A user function region named `name` (interned by name, so calling it
 * again returns the same id); OTF2_UNDEFINED_REGION when the session is
 * not open or out of memory. */
WEFT_API OTF2_RegionRef weft_region(const char *name)
{
    weft_record r = { .type = WEFT_REC_Region };
    weft_Region *d = &r.u.Region;
    OTF2_RegionRef id = OTF2_UNDEFINED_REGION;
    int64_t found;

    if (!name)
        return OTF2_UNDEFINED_REGION;
    pthread_mutex_lock(&S.mu);
    if (!session_usable())
        goto out;
    found = intern_find(&S.regions, name);
    if (found >= 0) {
        id = (OTF2_RegionRef)found;
        goto out;
    }
    if (S.next_region == OTF2_UNDEFINED_REGION)
        goto out;
    d->self = S.next_region;
    d->name = d->canonicalName = string_locked(name);
    d->description = d->sourceFile = string_locked("");
    if (d->name == OTF2_UNDEFINED_STRING ||
        d->description == OTF2_UNDEFINED_STRING)
        goto out;
    d->regionRole = OTF2_REGION_ROLE_FUNCTION;
    d->paradigm = OTF2_PARADIGM_USER;
    d->regionFlags = OTF2_REGION_FLAG_NONE;
    if (define_locked(&r) < 0)
        goto out;
    id = S.next_region++;
    (void)intern_add(&S.regions, name, id);
out:
    pthread_mutex_unlock(&S.mu);
    return id;
}

/* A one-member metric (MetricMember + MetricClass). Value types: UINT64,
 * INT64, DOUBLE; the weft_metric_* call used must match it. Returns the
 * metric id or OTF2_UNDEFINED_METRIC. */
WEFT_API OTF2_MetricRef weft_metric(const char *name, const char *unit,
                                    OTF2_Type value_type,
                                    OTF2_MetricMode mode)
{
    weft_record mr = { .type = WEFT_REC_MetricMember };
    weft_record cr = { .type = WEFT_REC_MetricClass };
    weft_MetricMember *m = &mr.u.MetricMember;
    weft_MetricClass *c = &cr.u.MetricClass;
    OTF2_MetricRef id = OTF2_UNDEFINED_METRIC;
    OTF2_MetricMemberRef member;

    if (!name || (value_type != OTF2_TYPE_UINT64 &&
                  value_type != OTF2_TYPE_INT64 &&
                  value_type != OTF2_TYPE_DOUBLE))
        return OTF2_UNDEFINED_METRIC;
    pthread_mutex_lock(&S.mu);
    if (!session_usable() || S.next_metric == OTF2_UNDEFINED_METRIC ||
        S.next_member == OTF2_UNDEFINED_METRIC_MEMBER)
        goto out;
    member = S.next_member;
    m->self = member;
    m->name = string_locked(name);
    m->description = string_locked("");
    m->unit = string_locked(unit ? unit : "");
    if (m->name == OTF2_UNDEFINED_STRING ||
        m->description == OTF2_UNDEFINED_STRING ||
        m->unit == OTF2_UNDEFINED_STRING)
        goto out;
    m->metricType = OTF2_METRIC_TYPE_USER;
    m->metricMode = mode;
    m->valueType = value_type;
    m->base = OTF2_BASE_DECIMAL;
    m->exponent = 0;
    c->self = S.next_metric;
    c->numberOfMetrics = 1;
    c->metricMembers = &member;
    c->metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT;
    c->recorderKind = OTF2_RECORDER_KIND_ABSTRACT;
    if (define_locked(&mr) < 0)
        goto out;
    S.next_member++;
    if (define_locked(&cr) < 0)
        goto out;
    id = S.next_metric++;
    if (id < WEFT__METRIC_TYPES)
        atomic_store_explicit(&metric_types[id], value_type,
                              memory_order_relaxed);
out:
    pthread_mutex_unlock(&S.mu);
    return id;
}

/* See client_internal.h. Lock-free: read on the record path. */
OTF2_Type weft__metric_type(OTF2_MetricRef metric)
{
    if (metric >= WEFT__METRIC_TYPES)
        return OTF2_TYPE_NONE;
    return atomic_load_explicit(&metric_types[metric], memory_order_relaxed);
}

/* ---- connection -------------------------------------------------------------- */

/* When weft_close began and asked the sender to finish within
 * WEFT_CLOSE_TIMEOUT_MS: that deadline (ms, trace clock), else never. */
static uint64_t close_deadline(void)
{
    uint64_t d = UINT64_MAX;

    pthread_mutex_lock(&S.mu);
    if (S.closing)
        d = S.close_start_ms + S.close_limit_ms;
    pthread_mutex_unlock(&S.mu);
    return d;
}

/* Waits up to the deadline (ms, trace clock) for fd to become ready. On
 * the sender thread it also wakes when weft_close begins and then keeps to
 * the close deadline. Returns 1 ready, 0 timed out, -1 with errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        struct pollfd p[2] = { { fd, events, 0 }, { S.wake_fd, POLLIN, 0 } };
        uint64_t now = now_ms();
        int rc;
        if (now >= deadline)
            return 0;
        rc = poll(p, S.wake_fd >= 0 ? 2 : 1,
                  (int)min_u64(deadline - now, INT_MAX));
        if (rc > 0 && (p[0].revents & (events | POLLERR | POLLHUP)))
            return 1;
        if (rc > 0) {
            uint64_t v;
            if (read(S.wake_fd, &v, sizeof v) < 0) {
                /* EAGAIN: drained already. The sender loop re-checks
                 * everything it could have been woken for. */
            }
            deadline = min_u64(deadline, close_deadline());
            continue;
        }
        if (rc == 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

/* Connects one address, non-blocking, before the deadline. Returns the
 * socket or -1 with why filled. */
static int connect_addr(const struct sockaddr *sa, socklen_t salen,
                        int family, uint64_t deadline, char *why,
                        size_t whylen)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
    switch (wait_fd(fd, POLLOUT, deadline)) {
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
static int input_next(int fd, weft__input *in, Weft__Envelope **env,
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

/* Writes all of buf before the deadline. Returns 0 or -1 with why. */
static int send_all(int fd, const uint8_t *buf, size_t len, uint64_t deadline,
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
        if (wait_fd(fd, POLLOUT, deadline) <= 0) {
            snprintf(why, whylen, "cannot send Hello");
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

/* Connects and says Hello, giving up at the deadline (ms, trace clock;
 * connecting and the answer also have their own time limits). Returns 0
 * with *fdp set and *ackp the HelloAck envelope (the caller frees it with
 * weft_frame_free_envelope; S.in then holds what followed it),
 * WEFT_ECONNECT when weftd cannot be reached, or WEFT_EPROTO when weftd
 * refused (*codep is its error code, why holds its message). */
static int connect_and_hello(const weft__config *c, uint64_t deadline,
                             int *fdp, Weft__Envelope **ackp, int *codep,
                             char *why, size_t whylen)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT, *reply = NULL;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Tag tags[WEFT__MAX_TAGS], *tagp[WEFT__MAX_TAGS];
    char host[256] = "", command[4096];
    uint8_t *frame = NULL;
    ssize_t len;
    uint32_t hello_ms;
    int fd, rc;

    *codep = 0;
    fd = connect_server(c, min_u64(deadline,
                                   now_ms() + WEFT__CONNECT_TIMEOUT_MS),
                        why, whylen);
    if (fd < 0)
        return WEFT_ECONNECT;
    gethostname(host, sizeof host - 1);
    read_command(command, sizeof command);
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)c->trace;
    h.rank = c->rank;
    h.size = c->size;
    h.hostname = host;
    h.pid = (uint32_t)getpid();
    h.uid = (uint32_t)getuid();
    h.command = command;
    h.job_id = (char *)c->job_id;
    h.run = (char *)c->run;
    h.timer_resolution = c->resolution;
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
    len = weft_frame_pack(&env, &frame);
    if (len < 0) {
        snprintf(why, whylen, "%s", weft_strerror((int)len));
        rc = WEFT_ECONNECT;
        goto out;
    }
    /* A weftd slow to answer (a busy loop, a stalled disk, a stopped
     * process) is waited for as long as any other lack of progress,
     * WEFT_STALL_MS: giving up here would turn tracing off at open. */
    hello_ms = c->stall_ms > WEFT__HELLO_TIMEOUT_MS ? c->stall_ms
                                                    : WEFT__HELLO_TIMEOUT_MS;
    deadline = min_u64(deadline, now_ms() + hello_ms);
    if (send_all(fd, frame, (size_t)len, deadline, why, whylen) < 0) {
        rc = WEFT_ECONNECT;
        goto out;
    }
    weft_frame_reader_free(&S.in.rd);
    memset(&S.in, 0, sizeof S.in);
    weft_frame_reader_init(&S.in.rd, WEFT_DEFAULT_MAX_FRAME);
    while ((rc = input_next(fd, &S.in, &reply, why, whylen)) == 0) {
        rc = wait_fd(fd, POLLIN, deadline);
        if (rc <= 0) {
            snprintf(why, whylen, "no answer to Hello within %u ms",
                     hello_ms);
            rc = WEFT_ECONNECT;
            goto out;
        }
    }
    if (rc < 0) {
        rc = WEFT_ECONNECT;
        goto out;
    }
    switch (reply->msg_case) {
    case WEFT__ENVELOPE__MSG_HELLO_ACK:
        rc = 0;
        *ackp = reply;
        reply = NULL;
        break;
    case WEFT__ENVELOPE__MSG_ERROR:
        snprintf(why, whylen, "%s", reply->error->message);
        *codep = reply->error->code;
        rc = WEFT_EPROTO;
        break;
    default:
        snprintf(why, whylen, "weftd answered Hello with %s",
                 weft_frame_kind_name(reply->msg_case));
        rc = WEFT_ECONNECT;
        break;
    }
out:
    weft_frame_free_envelope(reply);
    free(frame);
    if (rc < 0)
        close(fd);
    else
        *fdp = fd;
    return rc;
}

/* ---- clock offsets ---------------------------------------------------------- */

/* Sends ClockSync request `id` stamped with the trace clock; *t_send is
 * that time. 0 or -1 with why. */
static int sync_send(int fd, uint32_t id, uint64_t deadline,
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
    cs.client_time = *t_send = weft__now();
    len = weft_frame_pack(&env, &frame);
    if (len < 0) {
        snprintf(why, whylen, "%s", weft_strerror((int)len));
        return -1;
    }
    rc = send_all(fd, frame, (size_t)len, deadline, why, whylen);
    free(frame);
    return rc;
}

static int handle_frame(const Weft__Envelope *env, int *transient, char *why,
                        size_t whylen);

/* Measures the trace clock's offset to weftd's over fd: WEFT__SYNC_ROUNDS
 * ClockSync round trips, one at a time, within WEFT__SYNC_TIMEOUT_MS (and
 * the deadline); the one with the smallest round trip counts. Other
 * frames that arrive meanwhile (Acks) are handled as usual. Returns 0
 * with *est, or -1 with why. Sender thread, or the opening thread before
 * the sender starts. */
static int clock_sync(int fd, uint64_t deadline, weft_clock_estimate *est,
                      char *why, size_t whylen)
{
    weft_clock_sample smp[WEFT__SYNC_ROUNDS];
    size_t n = 0;

    deadline = min_u64(deadline, now_ms() + WEFT__SYNC_TIMEOUT_MS);
    for (uint32_t id = 1; id <= WEFT__SYNC_ROUNDS; id++) {
        Weft__Envelope *reply = NULL;
        uint64_t t_send;
        int rc, transient;
        if (sync_send(fd, id, deadline, &t_send, why, whylen) < 0)
            return -1;
        for (;;) {
            rc = input_next(fd, &S.in, &reply, why, whylen);
            if (rc == 0) {
                if (wait_fd(fd, POLLIN, deadline) <= 0) {
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
                smp[n].t_recv = weft__now();
                smp[n].server_ns = reply->clock_sync->server_time;
                n++;
                weft_frame_free_envelope(reply);
                break;
            }
            rc = handle_frame(reply, &transient, why, whylen);
            weft_frame_free_envelope(reply);
            if (rc < 0)
                return -1;
        }
    }
    if (weft_clock_best(smp, n, S.cfg.resolution, est) < 0) {
        snprintf(why, whylen, "the trace clock went backwards");
        return -1;
    }
    return 0;
}

/* Measures the offset and queues it as a ClockOffset definition (offset
 * in ns to weftd's clock, standardDeviation = the error bound rtt/2 in
 * ns). An offset smaller than its error bound on a clock counting ns is
 * not sent: the process shares weftd's clock (the same host) as far as
 * can be told, and its times stay exactly as recorded. `when` names the
 * moment for a warning. */
static void measure_offset(int fd, uint64_t deadline, const char *when)
{
    weft_clock_estimate est;
    weft_record r;
    char why[256];
    int rc;

    if (clock_sync(fd, deadline, &est, why, sizeof why) < 0) {
        warn("cannot measure the clock offset to weftd at %s %s: %s",
             S.cfg.server, when, why);
        return;
    }
    if (S.cfg.resolution == 1000000000u && weft_clock_is_zero(&est))
        return;
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockOffset;
    r.u.ClockOffset.time = est.time;
    r.u.ClockOffset.offset = est.offset;
    r.u.ClockOffset.standardDeviation = (double)est.error_ns;
    pthread_mutex_lock(&S.mu);
    rc = defs_append_locked(&r);
    pthread_mutex_unlock(&S.mu);
    if (rc < 0)
        warn("cannot keep the clock offset measured %s: %s", when,
             weft_strerror(rc));
}

/* ---- sender thread ----------------------------------------------------------- */

static void free_chunks(weft__chunk **list)
{
    while (*list) {
        weft__chunk *c = *list;
        *list = c->next;
        free(c->data);
        free(c);
    }
}

static void chunkq_push(weft__chunk **head, weft__chunk **tail,
                        weft__chunk *c)
{
    c->next = NULL;
    if (*tail)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
}

static size_t count_list(const weft__buf *b)
{
    size_t n = 0;

    for (; b; b = b->next)
        n++;
    return n;
}

/* Gives up every batch not acknowledged yet: its events count as dropped
 * on its thread, its buffer goes back to the pool; unacknowledged
 * definitions are freed. Returns the events given up, *nbatches the
 * batches. mu held. */
static uint64_t abandon_locked(size_t *nbatches)
{
    weft__buf *lists[2] = { S.f_head, S.q_head };
    uint64_t lost = 0;
    size_t n = 0;

    S.f_head = S.f_tail = S.q_head = S.q_tail = NULL;
    for (int i = 0; i < 2; i++) {
        while (lists[i]) {
            weft__buf *b = lists[i];
            weft__thread *t = thread_of_locked(b->location);
            lists[i] = b->next;
            if (t) {
                t->recorded -= b->events;
                count_dropped_locked(t, b->data, b->len, b->base_time,
                                     b->events);
            }
            lost += b->events;
            n++;
            buf_free_locked(b);
        }
    }
    free_chunks(&S.d_head);
    free_chunks(&S.df_head);
    S.d_tail = S.df_tail = NULL;
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
    int was_closing;

    pthread_mutex_lock(&S.mu);
    was_closing = S.closing;
    if (atomic_load(&S.state) == ST_ACTIVE)
        atomic_store(&S.state, ST_DISCARD);
    atomic_store(&S.connected, 0);
    lost = abandon_locked(&n);
    S.close_rc = WEFT_EIO;
    raise_attention_locked();
    pthread_cond_broadcast(&S.pool_cv);
    pthread_mutex_unlock(&S.mu);
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

    pthread_mutex_lock(&S.mu);
    lost = abandon_locked(&n);
    S.close_rc = WEFT_EIO;
    pthread_mutex_unlock(&S.mu);
    if (n)
        warn("gave up on weftd at %s %s: %" PRIu64 " events in %zu "
             "unacknowledged batches are counted as dropped; the trace of "
             "rank %u is incomplete", S.cfg.server, reason, lost, n,
             S.cfg.rank);
    else
        warn("gave up on weftd at %s %s before it took the Goodbye of rank "
             "%u; it will convert the trace as partial", S.cfg.server,
             reason, S.cfg.rank);
}

/* Sets every live thread's attention so it hands over a partly filled
 * buffer on its next record. */
static void request_flush(void)
{
    pthread_mutex_lock(&S.mu);
    for (weft__thread *t = S.threads; t; t = t->next)
        if (!t->exited)
            atomic_store_explicit(&t->attention, 1, memory_order_relaxed);
    pthread_mutex_unlock(&S.mu);
}

/* The Goodbye: per location, events recorded and records dropped. Returns
 * the packed frame's length or a WEFT_E* code. mu held. */
static ssize_t pack_goodbye_locked(uint8_t **out)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd *ends = NULL, **ptrs = NULL;
    size_t n = 0;
    ssize_t len;

    ends = calloc(S.nthreads ? S.nthreads : 1, sizeof *ends);
    ptrs = calloc(S.nthreads ? S.nthreads : 1, sizeof *ptrs);
    if (!ends || !ptrs) {
        len = WEFT_ENOMEM;
        goto out;
    }
    for (weft__thread *t = S.threads; t; t = t->next) {
        if (t->recorded == 0 && t->dropped == 0)
            continue;
        weft__location_end__init(&ends[n]);
        ends[n].location = t->location;
        ends[n].events = t->recorded;
        ends[n].dropped = t->dropped;
        ptrs[n] = &ends[n];
        n++;
    }
    g.n_locations = n;
    g.locations = ptrs;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    len = weft_frame_pack(&env, out);
out:
    free(ends);
    free(ptrs);
    return len;
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

/* After a HelloAck on a new connection: everything that was in flight goes
 * back to the front of its queue (keeping the send order and the sequence
 * numbers), and what weftd holds is done with. weftd must hold at least
 * everything it acknowledged and nothing this process did not send.
 * Returns 0 with *resend (batches to send), or WEFT_EPROTO with why. mu
 * held. */
static int resume_locked(const Weft__HelloAck *a, size_t *resend, char *why,
                         size_t whylen)
{
    uint64_t first, h = a->definitions_seq;
    weft__buf **lb, *pb = NULL;
    weft__chunk *c;

    if (S.f_head) {
        S.f_tail->next = S.q_head;
        if (!S.q_head)
            S.q_tail = S.f_tail;
        S.q_head = S.f_head;
        S.f_head = S.f_tail = NULL;
    }
    if (S.df_head) {
        S.df_tail->next = S.d_head;
        if (!S.d_head)
            S.d_tail = S.df_tail;
        S.d_head = S.df_head;
        S.df_head = S.df_tail = NULL;
    }

    first = S.d_head && S.d_head->seq ? S.d_head->seq : S.defs_seq + 1;
    if (h > S.defs_seq) {
        snprintf(why, whylen, "weftd holds Definitions %" PRIu64 " but this "
                 "process sent %" PRIu64 " (does another process use rank "
                 "%u of trace '%s'?)", h, S.defs_seq, S.cfg.rank,
                 S.cfg.trace);
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
            !thread_of_locked(a->locations[i]->location)) {
            snprintf(why, whylen, "weftd holds batches of thread %u, which "
                     "this process never used (does another process use "
                     "rank %u of trace '%s'?)", a->locations[i]->location,
                     S.cfg.rank, S.cfg.trace);
            return WEFT_EPROTO;
        }
    }
    for (weft__thread *t = S.threads; t; t = t->next) {
        uint64_t low = t->seq + 1;
        h = held_seq(a, t->location);
        for (weft__buf *b = S.q_head; b; b = b->next) {
            if (b->location == t->location) {
                low = b->seq;
                break;
            }
        }
        if (h > t->seq) {
            snprintf(why, whylen, "weftd holds batch %" PRIu64 " of thread "
                     "%u but this process sent %" PRIu64 " (does another "
                     "process use rank %u of trace '%s'?)", h, t->location,
                     t->seq, S.cfg.rank, S.cfg.trace);
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

    /* What weftd holds: numbered chunks are first, in order. */
    while ((c = S.d_head) && c->seq && c->seq <= a->definitions_seq) {
        S.d_head = c->next;
        if (!S.d_head)
            S.d_tail = NULL;
        free(c->data);
        free(c);
    }
    for (lb = &S.q_head; *lb;) {
        weft__buf *b = *lb;
        if (b->seq <= held_seq(a, b->location)) {
            *lb = b->next;
            buf_free_locked(b);
            continue;
        }
        pb = b;
        lb = &b->next;
    }
    S.q_tail = pb;
    *resend = count_list(S.q_head);
    return 0;
}

/* Takes the next frame to write into *out: pending definitions first, then
 * the oldest batch, then (when closing and everything is acknowledged) the
 * Goodbye. Returns 1 with a frame, 0 with nothing to send, or a WEFT_E*
 * code with why filled. */
static int next_frame(weft__out *out, int closing, char *why, size_t whylen)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    Weft__EventBatch batch = WEFT__EVENT_BATCH__INIT;
    weft__chunk *c = NULL;
    weft__buf *b = NULL;
    ssize_t len = 0;
    int goodbye = 0;

    pthread_mutex_lock(&S.mu);
    if (S.d_head) {
        c = S.d_head;
        S.d_head = c->next;
        if (!S.d_head)
            S.d_tail = NULL;
        if (!c->seq) /* else a resend: same number */
            c->seq = ++S.defs_seq;
        chunkq_push(&S.df_head, &S.df_tail, c);
    } else if (S.q_head) {
        b = S.q_head;
        S.q_head = b->next;
        if (!S.q_head)
            S.q_tail = NULL;
        bufq_push(&S.f_head, &S.f_tail, b);
    } else if (closing && !S.goodbye_queued && !S.f_head && !S.df_head) {
        len = pack_goodbye_locked(&out->data);
        goodbye = 1;
        S.goodbye_queued = 1;
    }
    pthread_mutex_unlock(&S.mu);

    /* The chunk and batch are in flight now: only this thread touches
     * them until their Ack, so they are packed without the lock. */
    if (c) {
        defs.seq = c->seq;
        defs.records.data = c->data;
        defs.records.len = c->len;
        env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
        env.definitions = &defs;
        len = weft_frame_pack(&env, &out->data);
    } else if (b) {
        batch.location = b->location;
        batch.seq = b->seq;
        batch.base_time = b->base_time;
        batch.events = b->events;
        batch.records.data = b->data;
        batch.records.len = b->len;
        env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
        env.event_batch = &batch;
        len = weft_frame_pack(&env, &out->data);
    } else if (!goodbye) {
        return 0;
    }
    if (len < 0) {
        out->data = NULL;
        snprintf(why, whylen, "cannot pack a frame: %s",
                 weft_strerror((int)len));
        return (int)len;
    }
    out->len = (size_t)len;
    out->off = 0;
    out->is_goodbye = goodbye;
    return 1;
}

/* Refusals that may go away: try again later. */
static int transient_code(int code)
{
    return code == WEFT_EEXIST || code == WEFT_ELIMIT || code == WEFT_EIO ||
           code == WEFT_ENOMEM;
}

/* Handles one frame from weftd. Returns 0 or a WEFT_E* code with why;
 * *transient then says whether reconnecting may help. */
static int handle_frame(const Weft__Envelope *env, int *transient, char *why,
                        size_t whylen)
{
    const Weft__Ack *ack;
    int rc = 0;

    *transient = 0;
    switch (env->msg_case) {
    case WEFT__ENVELOPE__MSG_ACK:
        ack = env->ack;
        pthread_mutex_lock(&S.mu);
        if (ack->definitions) {
            weft__chunk **l = &S.df_head, *prev = NULL;
            while (*l && (*l)->seq != ack->seq) {
                prev = *l;
                l = &(*l)->next;
            }
            if (*l) {
                weft__chunk *c = *l;
                *l = c->next;
                if (S.df_tail == c)
                    S.df_tail = prev;
                free(c->data);
                free(c);
                progress_locked();
            } else {
                rc = WEFT_EPROTO;
            }
        } else {
            weft__buf **l = &S.f_head, *prev = NULL;
            while (*l && ((*l)->location != ack->location ||
                          (*l)->seq != ack->seq)) {
                prev = *l;
                l = &(*l)->next;
            }
            if (*l) {
                weft__buf *b = *l;
                *l = b->next;
                if (S.f_tail == b)
                    S.f_tail = prev;
                buf_free_locked(b);
                progress_locked();
            } else {
                rc = WEFT_EPROTO;
            }
        }
        pthread_mutex_unlock(&S.mu);
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
        *transient = transient_code(env->error->code);
        return WEFT_EPROTO;
    default:
        snprintf(why, whylen, "unexpected %s frame from weftd",
                 weft_frame_kind_name(env->msg_case));
        return WEFT_EPROTO;
    }
}

enum { RECONNECT_RETRY = 1 };

/* One attempt to connect again (giving up at the deadline). Returns 0
 * (connected, S.fd set, unacknowledged frames queued again, *resend
 * batches of them), RECONNECT_RETRY (why says why), or WEFT_EPROTO when
 * weftd refuses this process for good. Sender only. */
static int reconnect(uint64_t deadline, size_t *resend, char *why,
                     size_t whylen)
{
    Weft__Envelope *ack = NULL;
    int fd = -1, code = 0, rc;

    rc = connect_and_hello(&S.cfg, deadline, &fd, &ack, &code, why, whylen);
    if (rc == WEFT_EPROTO) /* EEXIST: weftd has not noticed the break yet */
        return transient_code(code) ? RECONNECT_RETRY : WEFT_EPROTO;
    if (rc < 0)
        return RECONNECT_RETRY;
    pthread_mutex_lock(&S.mu);
    rc = resume_locked(ack->hello_ack, resend, why, whylen);
    if (rc == 0) {
        atomic_store(&S.connected, 1);
        S.goodbye_queued = 0;
        progress_locked();
        pthread_cond_broadcast(&S.pool_cv);
    }
    pthread_mutex_unlock(&S.mu);
    weft_frame_free_envelope(ack);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    S.fd = fd;
    return 0;
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

    while (input_next(S.fd, &S.in, &env, ignored, sizeof ignored) == 1) {
        int rc = handle_frame(env, &transient, ignored, sizeof ignored);
        weft_frame_free_envelope(env);
        if (rc < 0)
            break;
    }
    close(S.fd);
    S.fd = -1;
    free(out->data);
    out->data = NULL;
    pthread_mutex_lock(&S.mu);
    atomic_store(&S.connected, 0);
    S.goodbye_queued = 0;
    /* Nothing was owed: weftd is unreachable from now on, not before. */
    if (!S.f_head && !S.q_head && !S.df_head && !S.d_head)
        S.progress_ms = now_ms();
    pthread_mutex_unlock(&S.mu);
    warn("lost the connection to weftd at %s: %s; reconnecting",
         S.cfg.server, why);
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
    uint64_t now = now_ms();
    int rc, transient;

    pfd[0].fd = S.fd;
    pfd[0].events = (short)(POLLIN | (out->data ? POLLOUT : 0));
    pfd[1].fd = S.wake_fd;
    pfd[1].events = POLLIN;
    pfd[0].revents = pfd[1].revents = 0;
    rc = poll(pfd, 2, wake_at == UINT64_MAX ? -1
                      : wake_at <= now ? 0
                      : (int)min_u64(wake_at - now, INT_MAX));
    if (rc < 0 && errno != EINTR) {
        snprintf(why, whylen, "poll: %s", strerror(errno));
        return PUMP_FATAL;
    }
    if (rc <= 0)
        return PUMP_OK;
    if (pfd[1].revents & POLLIN) {
        uint64_t v;
        if (read(S.wake_fd, &v, sizeof v) < 0) {
            /* EAGAIN: someone else drained it; nothing to do. */
        }
    }
    if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        Weft__Envelope *env;
        while ((rc = input_next(S.fd, &S.in, &env, why, whylen)) == 1) {
            rc = handle_frame(env, &transient, why, whylen);
            weft_frame_free_envelope(env);
            if (rc < 0)
                return transient ? PUMP_BROKEN : PUMP_FATAL;
        }
        if (rc == WEFT_ECLOSED && *goodbye_sent)
            return PUMP_DONE; /* the orderly end */
        if (rc == WEFT_EPROTO)
            return PUMP_FATAL;
        if (rc < 0)
            return *goodbye_sent ? PUMP_UNSURE : PUMP_BROKEN;
    }
    if (out->data && (pfd[0].revents & POLLOUT)) {
        ssize_t n = send(S.fd, out->data + out->off, out->len - out->off,
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
    weft__thread *t = atomic_exchange(&S.signal_thread, NULL);
    int wake = 0;

    atomic_store(&S.signal_pending, 0);
    pthread_mutex_lock(&S.mu);
    if (t && atomic_load(&S.state) == ST_ACTIVE && !t->exited)
        buf_release_locked(t, &wake);
    if (atomic_load(&S.state) == ST_ACTIVE)
        atomic_store(&S.state, ST_CLOSED);
    raise_attention_locked();
    pthread_cond_broadcast(&S.pool_cv);
    if (!S.closing) {
        S.closing = 1;
        S.close_start_ms = now_ms();
        S.close_limit_ms = S.cfg.close_timeout_ms;
    }
    if (S.cfg.signal_flush_ms < S.close_limit_ms) {
        uint64_t elapsed = now_ms() - S.close_start_ms;
        S.close_limit_ms = (uint32_t)min_u64(S.close_limit_ms,
                                             elapsed + S.cfg.signal_flush_ms);
    }
    pthread_mutex_unlock(&S.mu);
}

/* The sender: one poll loop over the socket and the wake-up eventfd, and
 * reconnection with backoff while the connection is down. Ends after weftd
 * hung up following our Goodbye, when weft_close's time is up (what is not
 * acknowledged is then counted as dropped), or when weftd refuses this
 * process for good (tracing goes off). Sets S.close_rc. */
static void *sender_main(void *arg)
{
    weft__out out = { NULL, 0, 0, 0 };
    char why[512] = "", what[768], reason[128];
    const uint64_t never = UINT64_MAX;
    uint64_t next_flush = S.cfg.flush_ms ? now_ms() + S.cfg.flush_ms : never;
    uint64_t eof_deadline = never, next_attempt = 0, backoff = 0;
    uint64_t down_since = 0;
    uint32_t rng = (uint32_t)getpid() ^ (uint32_t)weft__now() ^ 0x9e3779b9u;
    int goodbye_sent = 0, rc;

    (void)arg;
    atomic_store(&S.sender_tid, (int)gettid());
    for (;;) {
        uint64_t now = now_ms(), wake_at, cdl, stall_at, progress;
        int closing, connected = S.fd >= 0, idle;

        if (atomic_load(&S.signal_pending))
            signal_close();

        pthread_mutex_lock(&S.mu);
        closing = S.closing;
        cdl = closing ? S.close_start_ms + S.close_limit_ms : never;
        progress = S.progress_ms;
        pthread_mutex_unlock(&S.mu);
        stall_at = progress + S.cfg.stall_ms;
        if (now >= next_flush) {
            request_flush();
            next_flush = now + S.cfg.flush_ms;
        }
        if (goodbye_sent && now >= eof_deadline)
            break; /* weftd holds everything; it is just slow to hang up */
        if (closing && !goodbye_sent) {
            reason[0] = 0;
            if (now >= cdl)
                snprintf(reason, sizeof reason, "after %u ms (%s)",
                         S.close_limit_ms,
                         S.close_limit_ms == S.cfg.close_timeout_ms
                             ? "WEFT_CLOSE_TIMEOUT_MS"
                             : "WEFT_SIGNAL_FLUSH_MS, after a fatal signal");
            else if (!connected && now >= stall_at)
                snprintf(reason, sizeof reason, "after it was unreachable "
                         "for %" PRIu64 " ms (WEFT_STALL_MS=%u)",
                         now - progress, S.cfg.stall_ms);
            if (reason[0]) {
                give_up(reason);
                break;
            }
        }

        if (!connected) {
            if (now >= next_attempt) {
                size_t resend = 0;
                rc = reconnect(cdl, &resend, why, sizeof why);
                if (rc == 0) {
                    warn("reconnected to weftd at %s after %" PRIu64 " ms; "
                         "sending %zu batches again", S.cfg.server,
                         now_ms() - down_since, resend);
                    backoff = 0;
                    continue;
                }
                if (rc < 0) {
                    snprintf(what, sizeof what, "weftd at %s refused this "
                             "process when it reconnected: %s", S.cfg.server,
                             why);
                    go_discard(what);
                    break;
                }
                backoff = backoff ? min_u64(2 * backoff, WEFT__BACKOFF_MAX_MS)
                                  : WEFT__BACKOFF_MIN_MS;
                next_attempt = now_ms() + backoff / 2 +
                               jitter_next(&rng) % (backoff / 2 + 1);
                continue;
            }
            wake_at = min_u64(next_attempt, next_flush);
            if (closing)
                wake_at = min_u64(wake_at, min_u64(cdl, stall_at));
            /* Only wake-ups matter here; pump's poll with no socket. */
            {
                struct pollfd p = { S.wake_fd, POLLIN, 0 };
                now = now_ms();
                if (poll(&p, 1, wake_at <= now ? 0
                                : (int)min_u64(wake_at - now, INT_MAX)) > 0) {
                    uint64_t v;
                    if (read(S.wake_fd, &v, sizeof v) < 0) {
                        /* EAGAIN: drained already. */
                    }
                }
            }
            continue;
        }

        pthread_mutex_lock(&S.mu);
        idle = !S.d_head && !S.q_head && !S.f_head && !S.df_head;
        pthread_mutex_unlock(&S.mu);
        if (closing && idle && !S.end_synced && !out.data && !goodbye_sent) {
            /* The closing offset goes out (and is acknowledged) before
             * the Goodbye, like every definition. */
            S.end_synced = 1;
            measure_offset(S.fd, cdl, "at the end");
            continue;
        }
        if (!out.data && !goodbye_sent) {
            rc = next_frame(&out, closing, why, sizeof why);
            if (rc < 0) {
                snprintf(what, sizeof what, "cannot send to weftd at %s: %s",
                         S.cfg.server, why);
                go_discard(what);
                break;
            }
        }
        wake_at = min_u64(next_flush, eof_deadline);
        if (closing && !goodbye_sent)
            wake_at = min_u64(wake_at, cdl);
        rc = pump(&out, wake_at, &goodbye_sent, why, sizeof why);
        if (goodbye_sent && eof_deadline == never)
            eof_deadline = min_u64(now_ms() + WEFT__EOF_TIMEOUT_MS, cdl);
        if (rc == PUMP_DONE)
            break;
        if (rc == PUMP_UNSURE) {
            /* Everything was acknowledged before the Goodbye. Connecting
             * again to send it once more could make a new, empty trace of
             * the same name if weftd did take it and converted the trace,
             * so this ends here. */
            warn("the connection to weftd at %s broke right after the "
                 "Goodbye of rank %u (%s): weftd holds all its events, but "
                 "if the Goodbye did not arrive it converts the trace as "
                 "partial after its grace period", S.cfg.server, S.cfg.rank,
                 why);
            break;
        }
        if (rc == PUMP_FATAL) {
            snprintf(what, sizeof what, "lost the connection to weftd at %s: "
                     "%s", S.cfg.server, why);
            go_discard(what);
            break;
        }
        if (rc == PUMP_BROKEN) {
            disconnect(&out, why);
            goodbye_sent = 0;
            eof_deadline = never;
            down_since = now_ms();
            backoff = WEFT__BACKOFF_MIN_MS;
            next_attempt = down_since + backoff / 2 +
                           jitter_next(&rng) % (backoff / 2 + 1);
        }
    }
    free(out.data);
    if (S.fd >= 0)
        close(S.fd);
    S.fd = -1;
    pthread_mutex_lock(&S.mu);
    atomic_store(&S.connected, 0);
    pthread_mutex_unlock(&S.mu);
    atomic_store(&S.sender_done, 1);
    return NULL;
}

/* ---- fatal signals ----------------------------------------------------------- */

/* Signals that end the process by default and after which the trace is
 * still worth having: faults, abort, and what batch schedulers send. */
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                     SIGABRT, SIGTERM, SIGINT, SIGQUIT };

/* Handler of the fatal signals. Async-signal-safe only: it hands the
 * calling thread's state to the sender, wakes it, polls until the sender
 * has shipped everything, had it acknowledged and said Goodbye (at most
 * WEFT_SIGNAL_FLUSH_MS), then raises the signal again, which takes its
 * default action when the handler returns: exit status and core dumps
 * are as without libweft. */
static void on_fatal_signal(int sig)
{
    int saved = errno;
    weft__thread *expect = NULL;
    struct sigaction dfl;

    /* A second signal (on another thread) while the first one's flush
     * runs finds the session closed already: it waits for the same
     * flush instead of ending the process before it is done. */
    if ((atomic_load(&S.state) == ST_ACTIVE || atomic_load(&S.signal_seen)) &&
        S.wake_fd >= 0 && atomic_load(&S.sender_tid) != (int)gettid() &&
        !atomic_load(&S.sender_done)) {
        uint64_t one = 1;
        struct timespec ms = { 0, 1000000 };
        if (!atomic_exchange(&S.signal_seen, 1)) {
            atomic_compare_exchange_strong(&S.signal_thread, &expect,
                                           weft__tls);
            atomic_store(&S.signal_pending, sig);
            if (write(S.wake_fd, &one, sizeof one) < 0) {
                /* EAGAIN: the sender is being woken already. */
            }
        }
        for (uint32_t i = 0; i < S.cfg.signal_flush_ms &&
                             !atomic_load(&S.sender_done); i++)
            nanosleep(&ms, NULL);
    }
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    errno = saved;
}

/* Installs on_fatal_signal for every fatal signal whose disposition is
 * still the default: an application's handler (or SIG_IGN) is never
 * replaced. */
static void install_signal_handlers(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        struct sigaction old, sa;
        if (sigaction(fatal_signals[i], NULL, &old) < 0 ||
            (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t k = 0; k < sizeof fatal_signals / sizeof *fatal_signals;
             k++)
            sigaddset(&sa.sa_mask, fatal_signals[k]);
        /* No SA_RESETHAND: a second signal during the flush (a scheduler
         * signalling the process group and the process) may arrive on
         * another thread, and must wait there too, not kill at once. */
        sa.sa_flags = SA_RESTART;
        sigaction(fatal_signals[i], &sa, NULL);
    }
}

/* ---- open and close ---------------------------------------------------------- */

static void at_exit(void)
{
    weft_close();
}

/* In the child of fork(): the session belongs to the parent. Records are
 * dropped and weft_close does nothing; the child's copy of the socket is
 * closed so weftd sees the parent hang up. */
static void at_fork_child(void)
{
    int st = atomic_load(&S.state);

    pthread_mutex_init(&S.open_mu, NULL);
    pthread_mutex_init(&S.mu, NULL);
    pool_cv_init();
    S.sender_started = 0;
    atomic_store(&S.connected, 0);
    if (st == ST_ACTIVE || st == ST_DISCARD) {
        atomic_store(&S.state, ST_FORKED);
        if (S.fd >= 0)
            close(S.fd);
        if (S.wake_fd >= 0)
            close(S.wake_fd);
        S.fd = S.wake_fd = -1;
        raise_attention_locked();
    }
}

/* Starts the sender with all signals blocked, so the application's
 * handlers never run on it. Returns 0 or WEFT_ENOMEM. */
static int start_sender(void)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&S.sender, NULL, sender_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? 0 : WEFT_ENOMEM;
}

/* Reads the environment, connects and starts the sender. Returns 0 (also
 * when weftd is unreachable or refuses: tracing is then off, after one
 * warning), WEFT_ECONFIG, WEFT_ECONNECT with WEFT_REQUIRED=1, or
 * WEFT_ECLOSED after weft_close or in a forked child. Idempotent. */
WEFT_API int weft_open(void)
{
    weft__config cfg;
    Weft__Envelope *ack = NULL;
    char why[512] = "";
    size_t resend = 0;
    int fd = -1, rc = 0, st, code = 0;

    pthread_mutex_lock(&S.open_mu);
    st = atomic_load(&S.state);
    if (st == ST_ACTIVE || st == ST_DISCARD)
        goto out;
    if (st != ST_NONE) {
        rc = WEFT_ECLOSED;
        goto out;
    }
    rc = config_load(&cfg);
    if (rc < 0)
        goto out;
    pthread_once(&thread_key_once, make_thread_key);
    if (!S.hooks_installed) {
        atexit(at_exit);
        pthread_atfork(NULL, NULL, at_fork_child);
        S.hooks_installed = 1;
    }
    pool_cv_init(); /* nobody waits on it before ACTIVE */
    pthread_mutex_lock(&S.mu);
    S.cfg = cfg;
    pthread_mutex_unlock(&S.mu);

    rc = connect_and_hello(&cfg, UINT64_MAX, &fd, &ack, &code, why,
                           sizeof why);
    if (rc == 0) {
        /* A new member: weftd must hold nothing of it yet. */
        pthread_mutex_lock(&S.mu);
        rc = resume_locked(ack->hello_ack, &resend, why, sizeof why);
        pthread_mutex_unlock(&S.mu);
        weft_frame_free_envelope(ack);
        if (rc < 0)
            close(fd);
    }
    if (rc == WEFT_EPROTO) {
        warn("weftd refused this process: %s", why);
        rc = cfg.required ? WEFT_ECONNECT : 0;
        if (rc == 0)
            atomic_store(&S.state, ST_DISCARD);
        goto out;
    }
    if (rc < 0) {
        if (cfg.required) {
            warn("cannot reach weftd at %s: %s (WEFT_REQUIRED=1)",
                 cfg.server, why);
            rc = WEFT_ECONNECT;
        } else {
            warn("cannot reach weftd at %s: %s; tracing is off for this "
                 "process", cfg.server, why);
            atomic_store(&S.state, ST_DISCARD);
            rc = 0;
        }
        goto out;
    }
    S.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (S.wake_fd < 0) {
        warn("eventfd: %s; tracing is off for this process", strerror(errno));
        close(fd);
        atomic_store(&S.state, ST_DISCARD);
        goto out;
    }
    measure_offset(fd, UINT64_MAX, "at the start");
    S.fd = fd;
    S.close_rc = 0;
    pthread_mutex_lock(&S.mu);
    atomic_store(&S.connected, 1);
    S.progress_ms = now_ms();
    atomic_store(&S.state, ST_ACTIVE);
    raise_attention_locked();
    pthread_mutex_unlock(&S.mu);
    if (start_sender() < 0) {
        warn("cannot start the sender thread; tracing is off for this "
             "process");
        pthread_mutex_lock(&S.mu);
        atomic_store(&S.state, ST_DISCARD);
        atomic_store(&S.connected, 0);
        raise_attention_locked();
        pthread_mutex_unlock(&S.mu);
        close(S.fd);
        S.fd = -1;
        goto out;
    }
    S.sender_started = 1;
    if (cfg.signals && !S.signals_installed) {
        install_signal_handlers();
        S.signals_installed = 1;
    }
out:
    pthread_mutex_unlock(&S.open_mu);
    return rc;
}

/* Frees what the session holds except thread states. mu held. */
static void free_session_locked(void)
{
    weft__buf *lists[3] = { S.free_list, S.q_head, S.f_head };

    for (int i = 0; i < 3; i++) {
        while (lists[i]) {
            weft__buf *b = lists[i];
            lists[i] = b->next;
            free(b);
        }
    }
    S.free_list = S.q_head = S.q_tail = S.f_head = S.f_tail = NULL;
    S.nbufs = 0;
    free_chunks(&S.d_head);
    free_chunks(&S.df_head);
    S.d_tail = S.df_tail = NULL;
    intern_free(&S.strings);
    intern_free(&S.regions);
}

/* Hands over every thread's partial buffer, lets the sender ship them
 * (reconnecting if need be), wait for their Acks, send Goodbye and wait
 * for weftd to hang up - all within WEFT_CLOSE_TIMEOUT_MS, and giving up
 * early once weftd has been unreachable for WEFT_STALL_MS; what weftd has
 * not acknowledged then counts as dropped (weft_dropped). Then frees the
 * session (thread states stay: late records must find theirs). Must run
 * after the recording threads have finished: buffers of threads still
 * alive are taken over without their consent. Returns 0, or WEFT_EIO when
 * weftd may not hold everything. Idempotent; also run at exit. */
WEFT_API int weft_close(void)
{
    uint64_t dropped = 0;
    int rc = 0, st, wake = 0;

    pthread_mutex_lock(&S.open_mu);
    st = atomic_load(&S.state);
    if (st != ST_ACTIVE && st != ST_DISCARD)
        goto out;
    pthread_mutex_lock(&S.mu);
    /* Documented: the recording threads have finished. Buffers of threads
     * that have not exited (the caller's, and any still alive) are taken
     * over here while the session is still active, so they are sent. */
    for (weft__thread *t = S.threads; t; t = t->next) {
        buf_release_locked(t, &wake);
        gap_end_locked(t);
        free(t->scratch);
        t->scratch = NULL;
    }
    atomic_store(&S.state, ST_CLOSED);
    raise_attention_locked();
    pthread_cond_broadcast(&S.pool_cv);
    S.closing = 1;
    S.close_start_ms = now_ms();
    S.close_limit_ms = S.cfg.close_timeout_ms;
    pthread_mutex_unlock(&S.mu);
    if (S.sender_started) {
        wake_sender();
        pthread_join(S.sender, NULL);
        S.sender_started = 0;
        rc = S.close_rc;
    }
    pthread_mutex_lock(&S.mu);
    free_session_locked();
    for (weft__thread *t = S.threads; t; t = t->next)
        dropped += t->dropped;
    pthread_mutex_unlock(&S.mu);
    if (st == ST_ACTIVE && dropped)
        warn("%" PRIu64 " records of rank %u were dropped (%s)", dropped,
             S.cfg.rank, S.cfg.overflow_discard
                             ? "WEFT_OVERFLOW=discard"
                             : "weftd was unreachable");
    weft_frame_reader_free(&S.in.rd);
    if (S.wake_fd >= 0)
        close(S.wake_fd);
    S.wake_fd = -1;
out:
    pthread_mutex_unlock(&S.open_mu);
    return rc;
}

/* 1 while the session streams to weftd (0 while it reconnects). */
WEFT_API int weft_connected(void)
{
    return atomic_load(&S.state) == ST_ACTIVE && atomic_load(&S.connected);
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
    pthread_mutex_lock(&S.mu);
    t = thread_of_locked(location);
    if (t) {
        *count = type == WEFT_TYPE_ANY ? t->dropped : t->dropped_type[type];
        rc = 0;
    }
    pthread_mutex_unlock(&S.mu);
    return rc;
}

/* The caller's location index, assigning the next one on first use;
 * UINT32_MAX when out of memory. */
WEFT_API uint32_t weft_location_index(void)
{
    weft__thread *t = thread_self();

    return t ? t->location : UINT32_MAX;
}

/* Rank and size from the environment, valid after weft_open (0 and 1
 * before). */
WEFT_API uint32_t weft_rank(void)
{
    return S.cfg.rank;
}

WEFT_API uint32_t weft_size(void)
{
    return S.cfg.size ? S.cfg.size : 1;
}
