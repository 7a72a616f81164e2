/* client_config.h - libweft's configuration: every WEFT_* variable (and the
 * launcher's rank, size and job variables) read and checked once, at
 * weft_open, into one weft__config.
 *
 * Pure apart from its messages: the environment comes through a lookup
 * callback (as in runid.h) and what describes the process (program name,
 * host, pid, start time) through a weft__proc, so tests give their own.
 * Nothing here connects, calibrates a clock or allocates.
 */
#ifndef WEFT_CLIENT_CONFIG_H
#define WEFT_CLIENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "frame.h"
#include "runid.h"

/* Where a launcher gives each task its rank, the first one set counting
 * (WEFT_RANK first: the user's word). weft run reads them too: set, the
 * process is a task of a parallel launch. */
#define WEFT__RANK_VARS                                                      \
    "WEFT_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",            \
        "SLURM_PROCID", "MV2_COMM_WORLD_RANK"
/* 1 when the calling process is a task of a parallel launch (one of
 * WEFT__RANK_VARS set): for weft run and the recorders, which read the
 * process's own environment. */
static inline int weft__launched(void)
{
    static const char *const vars[] = { WEFT__RANK_VARS, NULL };

    for (size_t i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return 1;
    }
    return 0;
}
/* Set by weft run to the pid of the program it starts (the task itself):
 * a process it starts in turn is another pid (recorder.h, 4). */
#define WEFT__TASK_PID_VAR "WEFT_TASK_PID"

/* 1 when task (WEFT_TASK_PID's value, NULL when unset) names another
 * process than pid: weft run started a program, and this is one that
 * program runs in turn. */
static inline int weft__not_the_task(const char *task, long pid)
{
    char me[24];

    if (!task)
        return 0;
    snprintf(me, sizeof me, "%ld", pid);
    return strcmp(task, me) != 0;
}

#define WEFT__DEFAULT_SERVER "127.0.0.1:7411"
#define WEFT__DEFAULT_PORT "7411"
/* The system weftd's Unix socket (its spool, config/weftd_config.h's
 * WEFT_SYSTEM_SPOOL, and the unit's StateDirectory, /weftd.sock): with
 * no WEFT_SERVER a process reaches the weftd of its host there when
 * there is one (session.c), where the kernel tells weftd who connects
 * (SO_PEERCRED): no MUNGE round trip, nothing on the network. */
#define WEFT__SYSTEM_SOCKET "/var/lib/weft/weftd.sock"
/* A thread's first buffers are filled this far (pool.c), and the pool's
 * budget counts in these units: WEFT_POOL_SIZE of them. */
#define WEFT__FILL_UNIT (64u << 10)
/* A buffer filled within this many ms: the thread's next is filled twice
 * as far (pool.c). */
#define WEFT__GROW_MS 50u
/* Above the largest Metric record (255 members: about 4.6 KB). */
#define WEFT__MIN_BUFFER (8u << 10)
/* What an EventBatch frame holds besides the records, and more. */
#define WEFT__FRAME_SLACK (4u << 10)
/* A batch frame must stay below weftd's default frame limit. */
#define WEFT__MAX_BUFFER (WEFT_DEFAULT_MAX_FRAME - WEFT__FRAME_SLACK)
/* The largest batch a thread's buffer grows to (pool.c): all of it. */
#define WEFT__DEFAULT_BUFFER WEFT__MAX_BUFFER
/* 16 MiB of 64 KiB units, allocated as needed */
#define WEFT__DEFAULT_POOL 256u
#define WEFT__MIN_POOL 2u
#define WEFT__MAX_POOL (1u << 20)
#define WEFT__DEFAULT_FLUSH_MS 500u
/* Well below weftd's default session_timeout (3600 s). */
#define WEFT__DEFAULT_HEARTBEAT_MS 60000u
#define WEFT__DEFAULT_CLOSE_TIMEOUT_MS 30000u
#define WEFT__DEFAULT_STALL_MS 30000u
#define WEFT__MAX_MS 3600000u
#define WEFT__TRACE_MAX 255
/* WEFT_TAGS: at most this many tags, this many bytes in all. */
#define WEFT__MAX_TAGS 64u
#define WEFT__TAGS_MAX 4095u
#define WEFT__TAG_KEY_MAX 64u   /* weftd refuses longer keys */
/* Default of WEFT_SIGNAL_FLUSH_MS: how long a fatal signal waits for the
 * sender to ship what was recorded. */
#define WEFT__DEFAULT_SIGNAL_FLUSH_MS 1000u
#define WEFT__MAX_SIGNAL_FLUSH_MS 60000u
/* WEFT_LOCK_THRESHOLD_NS: a lock call that got its lock at once is
 * counted, not recorded, unless it took longer than this (pthread
 * recorder, issue #32). */
#define WEFT__DEFAULT_LOCK_THRESHOLD_NS 10000u
#define WEFT__MAX_LOCK_THRESHOLD_NS 1000000000u

/* WEFT_TSC_KHZ's largest value (100 GHz). */
#define WEFT__MAX_TSC_KHZ 100000000u
/* WEFT_CLOCK's values. */
enum { WEFT__CLOCK_AUTO, WEFT__CLOCK_MONOTONIC, WEFT__CLOCK_TSC };

/* Written once by weft_open (before the sender starts), read-only after. */
typedef struct weft__config {
    char server[512];        /* WEFT_SERVER as given, for messages */
    int is_unix;
    char host[256];          /* TCP: name or address, brackets removed */
    char port[8];
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char trace[WEFT__TRACE_MAX + 1];
    char run[WEFT__RUN_MAX + 1]; /* the launch (runid.h); "" if unknown */
    char job_id[256];
    uint32_t rank, size;     /* a tree's member: UINT32_MAX until weftd
                              * gives it its rank (open, under mu), 0 */
    int tree;                /* a process of weft run's tree (WEFT_TREE) */
    int root;                /* the tree's root: the program weft run
                              * started */
    size_t buffer_size;      /* bytes: the most a thread's buffer holds */
    uint32_t pool_size;      /* units of WEFT__FILL_UNIT (pool.c) */
    uint32_t grow_ms;        /* WEFT__GROW_MS (tests change it) */
    uint32_t flush_ms;       /* 0: no periodic flush */
    uint32_t heartbeat_ms;   /* WEFT_HEARTBEAT_MS: a Heartbeat after this
                                long without a frame; 0: never */
    uint32_t close_timeout_ms;
    uint32_t stall_ms;       /* see WEFT_STALL_MS */
    int overflow_discard;    /* WEFT_OVERFLOW=discard */
    int required;
    int clock;               /* WEFT_CLOCK: a WEFT__CLOCK_* (timer.c
                              * decides at open what auto and tsc give) */
    int debug;               /* WEFT_DEBUG=1: debug lines on stderr */
    uint32_t tsc_khz;        /* WEFT_TSC_KHZ: the TSC's kHz, 0: measure
                              * (timer.c) */
    uint64_t tsc_from_tsc;   /* WEFT_TSC_FROM: the TSC and */
    uint64_t tsc_from_ns;    /* CLOCK_MONOTONIC_RAW when weft run started */
    char tsc_from_host[256]; /* on this host; 0 0 "": unset */
    int64_t clock_shift_ns;  /* WEFT_TEST_CLOCK_SHIFT_NS, tests only */
    uint64_t resolution;     /* trace clock ticks per second: set by
                              * weft__clock_setup at open, not parsed */
    const char *clock_name;  /* the clock chosen at open ("tsc" or
                              * "monotonic", static), for Hello */
    int signals;             /* WEFT_SIGNALS: flush on fatal signals */
    /* WEFT_AUTH=none: no Auth over TCP and no check of who weftd is
     * (single-user machines). Else (munge, the default) the process
     * proves its uid with MUNGE and weftd must prove it runs as root, the
     * weft user, the calling user or WEFT_DAEMON_USER (client/auth.h). */
    int auth_none;
    char daemon_user[64];    /* WEFT_DAEMON_USER: a name or a uid */
    char munge_socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
                             /* WEFT_MUNGE_SOCKET, "" for the default */
    uint32_t signal_flush_ms; /* WEFT_SIGNAL_FLUSH_MS */
    int locks_all;           /* WEFT_LOCKS=all: every lock call recorded */
    int stdio_all;           /* WEFT_STDIO=all: every stdio call recorded */
    uint32_t lock_threshold_ns; /* WEFT_LOCK_THRESHOLD_NS */
    /* WEFT_TAGS: ntags key/value pairs, NUL-terminated in tagbuf. */
    uint32_t ntags;
    uint16_t tag_key[WEFT__MAX_TAGS], tag_value[WEFT__MAX_TAGS];
    char tagbuf[WEFT__TAGS_MAX + 1];
} weft__config;

/* What the configuration needs to know about the process itself. */
typedef struct weft__proc {
    const char *program;     /* short program name: default trace names */
    const char *host;        /* host name: the run of a single process */
    long pid;
    uint64_t start_ns;       /* CLOCK_REALTIME now: tells two processes with
                              * the same pid apart */
    const char *system_socket; /* WEFT__SYSTEM_SOCKET when a socket is
                              * there (the system weftd runs on this
                              * host), else NULL: the default server */
} weft__proc;

/* Reads and checks the whole configuration from `env` into *c (cleared
 * first). Returns 0 or WEFT_ECONFIG after one message on stderr naming the
 * variable and its value (weft__warn); a bad WEFT_TAGS without
 * WEFT_REQUIRED=1 is only reported and leaves no tags. */
int weft__config_parse(weft__env_fn env, void *arg, const weft__proc *proc,
                       weft__config *c);

#endif
