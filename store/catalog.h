/* catalog.h - the SQLite catalog of traces, shared by weftd (writer) and
 * the weft command (reader). Never includes uv.h.
 *
 * The catalog is one SQLite file in WAL mode with a busy timeout, schema
 * versioned by PRAGMA user_version. All statements use bound parameters.
 * A weft_catalog handle is used by one thread at a time.
 */
#ifndef WEFT_CATALOG_H
#define WEFT_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_CATALOG_SCHEMA_VERSION 1

typedef struct weft_catalog weft_catalog;

/* Trace states as stored in the catalog. */
#define WEFT_STATE_RECORDING "recording"
#define WEFT_STATE_CONVERTING "converting"
#define WEFT_STATE_COMPLETE "complete"
#define WEFT_STATE_PARTIAL "partial"
#define WEFT_STATE_FAILED "failed"

/* One trace. Strings are owned by whoever filled the struct: the caller
 * when writing, the catalog (freed by weft_catalog_trace_free) when read. */
typedef struct weft_trace_row {
    int64_t id;           /* catalog id, assigned on insert */
    char *key;            /* unique spool key, e.g. "myrun-20261121T2240-1" */
    char *name;           /* trace name as given by the client */
    uint32_t uid;         /* owner */
    char *state;          /* one of WEFT_STATE_* */
    int64_t created;      /* unix time, seconds */
    int64_t finished;     /* unix time, seconds; 0 while not finished */
    char *path;           /* archive directory (contains traces.otf2) */
    uint32_t members;     /* processes (expected while recording) */
    uint64_t locations;
    uint64_t events;
    uint64_t bytes;       /* archive size on disk */
    uint64_t dropped;     /* records dropped by clients */
    uint64_t time_first;  /* first and last event timestamp, trace clock */
    uint64_t time_last;
    uint64_t timer_resolution; /* ticks per second */
    char *error;          /* why conversion failed, else NULL */
} weft_trace_row;

/* One location (thread) of a trace. */
typedef struct weft_location_row {
    uint64_t id;          /* OTF2 location id: rank * 2^32 + thread */
    uint32_t rank;
    uint32_t thread;
    char *name;
    uint64_t events;
    uint64_t dropped;
} weft_location_row;

/* Opens (and when writable, creates or migrates) the catalog at path.
 * Returns 0 or a WEFT_E* code; on failure *errmsg (malloc'd, the caller
 * frees) says why, naming the file. */
int weft_catalog_open(const char *path, int readonly, weft_catalog **out,
                      char **errmsg);
void weft_catalog_close(weft_catalog *c);
/* Message of the last failure on this handle. */
const char *weft_catalog_errmsg(const weft_catalog *c);

/* Records a new trace (state recording) unless one with row->key exists.
 * Sets row->id. */
int weft_catalog_trace_begin(weft_catalog *c, weft_trace_row *row);
/* Sets the state of the trace with this key. */
int weft_catalog_trace_set_state(weft_catalog *c, const char *key,
                                 const char *state);
/* In one transaction: stores all figures of row (matched by row->key,
 * inserted if missing) including its state, and replaces its locations. */
int weft_catalog_trace_finish(weft_catalog *c, const weft_trace_row *row,
                              const weft_location_row *locs, size_t nlocs);

/* Calls fn for each trace, newest first. Stops early when fn returns
 * non-zero and returns that value. The row is valid during the call. */
typedef int (*weft_catalog_trace_fn)(const weft_trace_row *row, void *arg);
int weft_catalog_list(weft_catalog *c, weft_catalog_trace_fn fn, void *arg);
/* Finds a trace by catalog id ("12" or "#12"), key, or name (the newest
 * with that name). Returns 0 and fills *out (free with
 * weft_catalog_trace_free), or WEFT_ENOTFOUND. */
int weft_catalog_find(weft_catalog *c, const char *what, weft_trace_row *out);
void weft_catalog_trace_free(weft_trace_row *row);
/* Calls fn for each location of trace id, by location id. */
typedef int (*weft_catalog_location_fn)(const weft_location_row *row,
                                        void *arg);
int weft_catalog_locations(weft_catalog *c, int64_t trace_id,
                           weft_catalog_location_fn fn, void *arg);

/* Deletes the trace with this catalog id and its locations, in one
 * transaction (needs a writable handle). Returns 0, WEFT_ENOTFOUND, or
 * another WEFT_E* code with nothing changed. */
int weft_catalog_trace_delete(weft_catalog *c, int64_t id);

#endif
