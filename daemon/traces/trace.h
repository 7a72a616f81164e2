/* trace.h - traces being recorded and their members (processes): the
 * trace lifecycle's own header, which ingest never includes (it sees a
 * member as its weft_memberin and calls what members.h declares). Loop
 * thread only, except the conversion job which owns a finished trace.
 *
 * A trace is one run (launch) of a program: the first Hello with a new
 * (owner, name, run) creates it (run "" from older clients: by name
 * only). It lives in SPOOL/traces/KEY/ (one journal per member:
 * rank-R.wj), and when all `size` members said goodbye it is handed to a
 * worker thread that converts the journals to
 * SPOOL/traces/KEY/archive/traces.otf2 and records the result in the
 * catalog.
 */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "catalog.h"
#include "daemon.h"
#include "hashtab.h"
#include "idset.h"
#include "journal.h"
#include "log.h"
#include "memberin.h"
#include "members.h"
#include "record.h"
#include "weft.pb-c.h"

typedef struct weft_member {
    struct weft_trace *trace;
    /* From the member's Hello, for the catalog (validate.c checked the
     * tags: keys unique, within the limits). Owned. */
    char *command;
    char *job_id;
    weft_tag *tags;
    size_t ntags;
    uint32_t protocol_version;
    int makes_dir;                /* its open job makes the trace's
                                     directory (loop thread, set before) */
    weft_memberin in;             /* ingest's: rank, pid, host, its
                                     connection, journal, threads, ids
                                     defined, writes out, Goodbye
                                     (memberin.h) */
    int damaged;                  /* journal corrupt in the middle: kept as
                                     it is, journal NULL, cannot rejoin */
    int stream_due;               /* written since its trace's stream last
                                     read it (streamjob.c) */
    int stream_off;               /* the stream left it to the conversion */
    int finished;                 /* a part's: its stream wrote it whole
                                     and partlink.h's `finished` was
                                     called */
    int remote;                   /* a head's member whose node writes its
                                     events (its journal's Hello names
                                     events_node): no stream here writes
                                     them; its sums come in its journal */
    int key_sent;                 /* such a member: its node knows where,
                                     on its connection */
} weft_member;

/* A process a tree's member named in its Goodbye (a child still
 * running, or itself after an exec), which the trace waits for to join
 * (tree.c). */
typedef struct weft_expected {
    uint32_t pid;
    uint64_t start;      /* its start time (procwatch.h), 0: not watched */
    uint64_t until;      /* uv_now() after which it is not waited for */
} weft_expected;

/* A cell of a trace's members table (proto/hashtab.h): key is the rank
 * + 1 through murmur3's finalizer (a bijection, never 0), so that ranks
 * in strides spread over the low bits the table indexes with. */
typedef struct weft_member_cell {
    uint32_t key;
    weft_member *m;
} weft_member_cell;

/* What the catalog last got as a trace's live figures (live.c; loop
 * thread): a trace whose figures did not change is not written again. */
typedef struct weft_live_mark {
    uint64_t events;
    uint64_t refused;    /* events weftd did not store */
    uint64_t locations;
    uint32_t joined;
    uint32_t goodbyes;
    int written;         /* 0: write at the next chance */
} weft_live_mark;

/* What the open job of a new trace's first member (weft_member_open, on
 * the journal writer's open thread) made of the trace's directory:
 * written there once, read there by the jobs of the members after it,
 * and on the loop thread once that job is handed back. */
typedef struct weft_trace_made {
    int rc;              /* 0 not yet, 1 made, or the WEFT_E* code */
    uint64_t serial;     /* the key's random tag (spool.h): tried first,
                            then the one used */
    char *key;           /* the key used: the trace's, unless an earlier
                            run of weftd had taken it */
    char *dir;           /* SPOOL/traces/key */
    char err[512];       /* why it failed */
} weft_trace_made;

/* A trace's lifecycle. It is born RECORDING (trace_new, recovery) and
 * lives on the list of its state (d->traces->lists, newest first) until
 * DONE frees it. Events (weft_trace_on) move it along this table; any
 * other event in a state is refused with WEFT_ESTATE:
 *
 *   RECORDING  --END-->      SYNCING     every member said goodbye, no
 *                                        one came back within the grace
 *                                        period, or restored so; its run
 *                                        is remembered as ended
 *   RECORDING  --NO_DIR-->   DROPPED     its directory could not be made
 *   SYNCING    --WRITTEN-->  CONVERTING  no journal write or fdatasync of
 *                                        its members is out any more: its
 *                                        conversion job owns it
 *   CONVERTING --FAILED-->   RETRY_WAIT  failed for a cause a retry may
 *                                        get past; tried at retry_at
 *   RETRY_WAIT --RETRY-->    SYNCING     retry_at came
 *   CONVERTING --FINISHED--> DONE        converted, failed for good, or
 *                                        could not be queued
 *   RECORDING, SYNCING, RETRY_WAIT, DROPPED --FORGET--> DONE
 *                                        dropped unconverted: no member
 *                                        left, recovery gave up, weftd
 *                                        exits (the journals stay)
 */
#define WEFT_TRACE_STATES(X) \
    X(RECORDING, "recording") X(SYNCING, "syncing") \
    X(CONVERTING, "converting") X(RETRY_WAIT, "retry-wait") \
    X(DROPPED, "dropped") X(DONE, "done")

enum weft_trace_state {
#define WEFT_TRACE_STATE_ENUM(id, name) WEFT_TRACE_##id,
    WEFT_TRACE_STATES(WEFT_TRACE_STATE_ENUM)
#undef WEFT_TRACE_STATE_ENUM
    WEFT_TRACE__NSTATES
};

#define WEFT_TRACE_EVENTS(X) \
    X(END, "end") X(WRITTEN, "written") X(FAILED, "failed") \
    X(RETRY, "retry") X(FINISHED, "finished") X(NO_DIR, "no-dir") \
    X(FORGET, "forget")

enum weft_trace_event {
#define WEFT_TRACE_EVENT_ENUM(id, name) WEFT_TEV_##id,
    WEFT_TRACE_EVENTS(WEFT_TRACE_EVENT_ENUM)
#undef WEFT_TRACE_EVENT_ENUM
    WEFT_TEV__COUNT
};

typedef struct weft_trace {
    weft_daemon *d;
    char *name;          /* as the client gave it */
    char *run;           /* the launch (Hello.run), "" if not given */
    char *key;           /* unique, safe as a file name */
    char *dir;           /* SPOOL/traces/KEY */
    uint32_t uid;
    uint32_t size;       /* members expected; of a tree, those joined */
    int tree;            /* a process tree (Hello.tree): weftd gives the
                            ranks, in the order members join */
    int part;            /* on a node: this node's members of its head's
                            trace (partlink.h), which the head catalogs
                            and converts: no catalog row here, its end
                            is its stream's (part.c) */
    char *part_archive;  /* a part's: where its events go (the head's
                            archive as this node sees it), NULL until
                            the head said */
    int part_refused;    /* a part's: the head refused a member of it:
                            it ends without waiting for where */
    void *part_link;     /* a part's: the cluster's record of its
                            directory (partlink.h), released when t is
                            freed */
    int part_ended;      /* a part's: it ended, its members written */
    int restored;        /* made by recovery at this weftd's start */
    int nodes_files;     /* restored, and its nodes wrote event files into
                            its archive before: no stream (a new primary
                            would clear them); its conversion makes the
                            archive anew with them (aside.c) */
    uint32_t next_rank;  /* tree: the rank of the next new member */
    weft_idset pids;     /* tree: the pids of its members (value 1) */
    struct weft_expected *expected; /* tree: processes its members said
                            will come, which it waits for (tree.c) */
    uint32_t nexpected, expected_cap;
    uint64_t def_bytes;  /* what its members' accepted Definitions
                            charge (validate.h), max_definition_bytes */
    /* The members that joined (`joined` of them), by rank in an
     * open-addressing table: what a trace holds grows with the members
     * that came, never with the size a Hello announces. Find one with
     * weft_trace_member, list them in rank order with
     * weft_trace_members, or visit them in no order with
     * weft_trace_member_at over members.ncells cells. */
    weft_hashtab members; /* of weft_member_cell */
    uint32_t joined;
    uint32_t goodbyes;
    uint32_t gone;       /* members whose process ended without Goodbye
                            (procwatch.h): done as well, not complete */
    uint32_t connected;  /* members with a live connection */
    int aborting;        /* a member ended abnormally: the others get
                            abort_grace_period, not grace_period */
    uint64_t idle_since; /* uv_now() when the last one left, 0 if any is
                            connected or the trace is done */
    enum weft_trace_state state; /* changed by weft_trace_on only */
    uint64_t retry_at;   /* uv_now() of the next conversion attempt after
                            a failed one (RETRY_WAIT) */
    uint64_t retry_delay; /* ms before that attempt; doubles each time */
    int64_t created;
    uint64_t charged;    /* bytes of its journals charged to its owner
                            (quota.h), released when it is freed */
    uint64_t unjournaled; /* events of batches not stored whose journals
                            could not say so either (the file system
                            full): conversion counts them as dropped */
    int unjournaled_errno; /* why, the last time */
    weft_trace_made made;
    weft_live_mark live;
    struct weft_trace_stream *stream; /* RECORDING: its archive written
                            while it records (streamjob.c), NULL: none */
    struct weft_trace *next, *prev; /* on d->traces->lists[state] */
} weft_trace;

/* Logs a line about trace t with its name and key as journal fields
 * (log.h); the message names the trace itself too. */
#define weft_tlog(t, level, ...)                                             \
    weft_dlog_ctx((t)->d, level,                                             \
                  (&(const weft_log_ctx){ (t)->name, (t)->key, -1, NULL }),  \
                  __VA_ARGS__)

/* A run whose trace stopped recording (all members said goodbye, or weftd
 * gave up on the rest after the grace period). A member of it that comes
 * back later is refused rather than made the first member of a new,
 * otherwise empty trace. Loop thread; newest first in
 * d->traces->ended_runs, at most WEFT_ENDED_RUNS_MAX (the oldest are
 * forgotten). */
typedef struct weft_ended_run {
    struct weft_ended_run *next;
    uint32_t uid;
    char *name;
    char *run;
    char *key;           /* the trace it was */
    int partial;         /* some member had not said goodbye */
} weft_ended_run;

#define WEFT_ENDED_RUNS_MAX 4096

/* Joining, leaving, a member's journal writes and what it costs: the
 * functions ingest calls are declared in members.h (defined in trace.c
 * and members.c). */
/* The three steps at once, for tests: 0 with *out set, or a WEFT_E* code
 * with err saying why. */
int weft_trace_join(weft_daemon *d, const Weft__Hello *hello, uint32_t uid,
                    weft_member **out, char *err, size_t errlen);

/* Member `rank` of t, NULL if it has not joined. */
weft_member *weft_trace_member(const weft_trace *t, uint32_t rank);
/* Cell i (i < t->members.ncells) of t's members table: its member, or
 * NULL for a free cell. */
weft_member *weft_trace_member_at(const weft_trace *t, size_t i);
/* The t->joined members of t in rank order: a malloc'd array (free it),
 * NULL only when out of memory. */
weft_member **weft_trace_members(const weft_trace *t);

/* Recovery (recover.c): a trace rebuilt from SPOOL/traces/KEY = dir; its
 * name, run and size come from the first member restored. NULL on
 * failure. */
weft_trace *weft_trace_restore(weft_daemon *d, const char *key,
                               const char *dir, int64_t created, char *err,
                               size_t errlen);
/* Adds the member of a journaled Hello (uid already the effective owner)
 * with its journal reopened for appending. */
int weft_trace_restore_member(weft_trace *t, const Weft__Hello *h,
                              weft_member **out, char *err, size_t errlen);
/* Start-up, before listening (blocks on the catalog): remembers the runs
 * of the traces the catalog holds as ended (complete, partial, failed),
 * newest first, up to WEFT_ENDED_RUNS_MAX, so that a member of one is
 * refused after a restart too. Returns 0, or a WEFT_E* code after logging
 * it (weftd goes on without them). */
int weft_trace_load_ended_runs(weft_daemon *d);
/* All members restored: convert if all said goodbye, else wait for them
 * (grace period). Frees a trace with no readable member. */
void weft_trace_restored(weft_trace *t);
/* Recovery gives up on t (a journal it cannot use; recover.c records
 * why in the catalog): forgets it without converting, its files stay. */
void weft_trace_abandon(weft_trace *t);

/* The lifecycle table: the state that event ev moves a trace in state s
 * to, or WEFT_ESTATE when s refuses ev. */
int weft_trace_next_state(enum weft_trace_state s, enum weft_trace_event ev);
/* The one place a trace's state changes: moves t along the table (see
 * above) from the list of its state to the new one's, logging the step
 * at debug level; DONE frees t. 0, or WEFT_ESTATE (logged; t unchanged)
 * when its state refuses ev. Loop thread. */
int weft_trace_on(weft_trace *t, enum weft_trace_event ev);
/* Names, for logs and tests. */
const char *weft_trace_state_name(enum weft_trace_state s);
const char *weft_trace_event_name(enum weft_trace_event ev);
/* The traces in state s, newest first: the first, and the one after t
 * (NULL at the end). Loop thread; a walker may move t along the table,
 * not the trace after it. */
weft_trace *weft_trace_first(const weft_daemon *d, enum weft_trace_state s);
weft_trace *weft_trace_next(const weft_trace *t);
/* How many traces are in state s. */
unsigned weft_trace_count(const weft_daemon *d, enum weft_trace_state s);
/* The trace in state s with this key, NULL if none. */
weft_trace *weft_trace_find(const weft_daemon *d, enum weft_trace_state s,
                            const char *key);
/* 1 while t waits for its members' journal writes and fdatasync jobs
 * before it converts (SYNCING). */
int weft_trace_syncing(const weft_trace *t);

/* A member's fdatasync job ended: starts a conversion that waited for it. */
void weft_trace_synced(weft_trace *t);

/* Converts traces that had no member connected for grace_period seconds,
 * and retries failed conversions whose time has come; called once a
 * second by the daemon's tick timer. */
void weft_trace_check_idle(weft_daemon *d);
/* Frees the traces still recording (at exit; their journals stay in the
 * spool), the ended runs remembered and the conversion queue's table. */
void weft_trace_free_all(weft_daemon *d);
/* The traces' parts' state made, empty (weft_daemon_init): d->traces
 * (trace_internal.h), d->retain (retain.h), d->live (live.h), d->catjob
 * (catjob.h); 0 or WEFT_ENOMEM (nothing left allocated). And freed
 * (weft_daemon_free, after weft_trace_free_all and the loop's last run:
 * the workers that stop write NULL in them). */
int weft_traces_init(weft_daemon *d);
void weft_traces_free(weft_daemon *d);
/* Conversions handed to the converter (d->traces->converter, worker.h):
 * those waiting for one of the max_conversions slots, those running, and the
 * most that ever ran at once; in flight, those and any whose end has not
 * been taken on the loop thread yet. */
typedef struct weft_trace_conversions {
    unsigned queued;
    unsigned running;
    unsigned peak;
    unsigned in_flight;
} weft_trace_conversions;
weft_trace_conversions weft_trace_count_conversions(const weft_daemon *d);
/* Sets max_conversions (SIGHUP): running conversions go on, the queue
 * follows the new bound. */
void weft_trace_set_max_conversions(weft_daemon *d, uint64_t max);

/* Events t's stream has written to its archive's event files, as of its
 * last step (0: no stream, or it failed): streamjob.c. Loop thread. */
uint64_t weft__stream_events(const weft_trace *t);

#endif
