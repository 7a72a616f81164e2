/* status.h - the status file that `weft status` reads: DIR/weftd.status
 * (DIR being the catalog's directory), weftd's live figures as one JSON
 * object (connections, traces recording and converting, limits
 * reached...), rewritten every second and removed when weftd stops.
 *
 * The loop thread builds the content; a thread of its own (worker.h)
 * writes it to DIR/weftd.status.tmp and renames that over the file, so a
 * stalled disk stalls no loop. One write at a time: while one is out,
 * only the newest content waits for it (older ones are dropped), so a
 * stalled disk costs one pending copy, not one per second. Loop thread.
 */
#ifndef WEFT_STATUS_H
#define WEFT_STATUS_H

#include <stdint.h>

#include "daemon.h"

/* One trace recording, as the status shows it. */
typedef struct weft_status_trace {
    const char *name;
    const char *key;
    uint32_t uid;
    uint32_t size, joined, connected, goodbyes;
    uint64_t events;      /* journaled */
    uint64_t written;     /* of them, in the archive's event files
                             (streamjob.c; 0 until the trace ends when it
                             is not written while it records) */
} weft_status_trace;

typedef void (*weft_status_trace_fn)(const weft_status_trace *t, void *arg);

/* A node of this weftd's cluster (cluster/nodes.h). */
typedef struct weft_status_node {
    const char *name;
    const char *peer;     /* where its link comes from */
    const char *server;   /* its weftd version */
    int linked;           /* 0: gone */
    int64_t since;        /* unix time it linked, or went */
    uint64_t links;       /* NodeHellos accepted under its name */
    uint64_t heartbeats;  /* on its current link */
    /* its last NodeStatus: connections open there, traces recording,
     * their events journaled and, of those, written to the archives */
    uint64_t connections, recording, events, written;
    uint64_t relayed;     /* its processes this weftd serves (relay.h) */
    /* what it found of this weftd's archive_root (cluster/shared.h):
     * "none", "checking", "ok", "unusable" (error says why); where */
    const char *archive_state, *archive_path, *archive_error;
} weft_status_node;

typedef void (*weft_status_node_fn)(const weft_status_node *n, void *arg);

/* This weftd's link to its head, when it is a node (cluster/uplink.h). */
typedef struct weft_status_head {
    const char *address;  /* [cluster] head */
    const char *state;    /* "linked", "connecting", "waiting" ... */
    const char *name;     /* the head's host name, once linked */
    const char *error;    /* why the last link ended or failed; "" */
    int64_t since;        /* unix time of the state */
    uint64_t links;       /* links made */
    uint64_t forwarded;   /* processes forwarded to it (forward.h) */
    uint64_t parts;       /* members journaled here, written into its
                             archive, that it does not hold all of yet
                             (parts.h) */
    /* what this node found of the head's archive_root, as in
     * weft_status_node */
    const char *archive_state, *archive_path, *archive_error;
} weft_status_head;

/* Ingest's figures, as the status shows them. */
typedef struct weft_status_ingest {
    uint64_t conns;       /* connections open */
    uint64_t paused;      /* of them, paused for their journal writes or
                             max_buffered */
    uint64_t buffered;    /* bytes counted against max_buffered */
    uint64_t fd_limit;    /* RLIMIT_NOFILE (soft) in effect */
    const char *bound;    /* the TCP address bound, "" if none */
} weft_status_ingest;

/* What the status tells of the parts status.c does not include (ingest's
 * connections, the traces' lifecycle): their functions, which main.c
 * wires in d->status_src. Without it those figures are 0 (no address
 * bound) and the list of traces recording is empty. */
typedef struct weft_status_src {
    /* ingest's figures in *out */
    void (*ingest)(const weft_daemon *d, weft_status_ingest *out);
    /* connections of uid (charged to it, or whose peer it is) */
    uint64_t (*user_conns)(const weft_daemon *d, uint32_t uid);
    /* conversions running, waiting for a max_conversions slot, and in
     * flight (those, and any whose end the loop has not taken yet) */
    void (*conversions)(const weft_daemon *d, unsigned *running,
                        unsigned *queued, unsigned *in_flight);
    /* fn(t, arg) for each trace recording */
    void (*recording)(const weft_daemon *d, weft_status_trace_fn fn,
                      void *arg);
    /* the configuration key of limit l (server.c keeps the names) */
    const char *(*limit_name)(enum weft_limit l);
    /* fn(n, arg) for each node of this weftd's cluster */
    void (*nodes)(const weft_daemon *d, weft_status_node_fn fn, void *arg);
    /* 1 with *out when this weftd is a node, else 0 */
    int (*head)(const weft_daemon *d, weft_status_head *out);
} weft_status_src;

/* Starts the writer thread of d's status file. 0 or a WEFT_E* code. */
int weft_status_start(weft_daemon *d);
/* The status of d as compact JSON (malloc'd; NULL when out of memory):
 * all (root, weftd's user, admin_group: ask.c) the whole machine's
 * figures ("scope": "all"); else uid's own only ("scope": "user": their
 * connections, traces recording and events, weftd's version, pid,
 * address and max_connections; nothing of other users' activity). */
char *weft_status_text(const weft_daemon *d, int all, uint32_t uid);
/* Builds the status of d now and queues its write (see above). Nothing
 * when the writer is not started or stopped. */
void weft_status_update(weft_daemon *d);
/* Removes the status file, after the last write queued, and stops the
 * writer (its thread ends once the removal is done; the loop finishes
 * it). Idempotent. */
void weft_status_stop(weft_daemon *d);
/* hold 1: nothing is written (as a disk that stalls) until called with
 * 0. Any thread; for tests. */
void weft_status_hold(weft_daemon *d, int hold);

#endif
