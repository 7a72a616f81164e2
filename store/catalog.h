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

#define WEFT_CATALOG_SCHEMA_VERSION 15

typedef struct weft_catalog weft_catalog;

/* Trace states as stored in the catalog. */
#define WEFT_STATE_RECORDING "recording"
#define WEFT_STATE_CONVERTING "converting"
#define WEFT_STATE_COMPLETE "complete"
#define WEFT_STATE_PARTIAL "partial"
#define WEFT_STATE_FAILED "failed"
/* Its archive and journals were removed by weftd's retention (the row
 * stays, its error saying why). */
#define WEFT_STATE_REMOVED "removed"

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
    uint64_t dropped;     /* records dropped: by clients (their buffers
                             full) and `refused` */
    uint64_t time_first;  /* first and last event timestamp, trace clock */
    uint64_t time_last;
    uint64_t timer_resolution; /* ticks per second */
    char *error;          /* why conversion failed, else NULL */
    char *hosts;          /* distinct member hosts, sorted, comma-separated */
    char *command;        /* rank 0's command line, else the lowest rank's */
    char *job_id;         /* batch job id the client reported, or "" */
    uint32_t protocol_version; /* of the members' Hello */
    char *run;            /* the launch it is (Hello.run), "" if unknown;
                             names repeat, (name, run) tells runs apart */
    /* Live figures (schema 4): while the trace records, weftd rewrites
     * joined, locations, events and bytes (then: bytes received so far,
     * its journals) every few seconds, and live_updated with them. */
    uint32_t joined;      /* members that joined so far */
    char *clock;          /* schema 5: the members' trace clocks once
                             converted ("tsc", "monotonic,tsc"), else "" */
    int64_t live_updated; /* unix time of the last live figures; 0: none
                             (also once the final figures are written) */
    int64_t retry_at;     /* schema 8: a failed trace weftd converts again
                             (the cause was outside its journals: space,
                             permissions, memory): unix time of that
                             attempt; 0: none */
    uint64_t refused;     /* schema 12: of `dropped`, the records weftd
                             did not store (max_user_spool_bytes,
                             min_free_spool_bytes, a failed write) */
} weft_trace_row;

/* One location (thread) of a trace. */
typedef struct weft_location_row {
    uint64_t id;          /* OTF2 location id: rank * 2^32 + thread */
    uint32_t rank;
    uint32_t thread;
    char *name;
    uint64_t events;
    uint64_t dropped;
    /* Schema 13: of a process tree's trace, its process ("cc1 (pid
     * 4242)", its location group's name) and program ("cc1"); NULL or ""
     * in other traces */
    char *process;
    char *program;
} weft_location_row;

/* Member states (members.state). */
#define WEFT_MEMBER_COMPLETE "complete"   /* said goodbye */
#define WEFT_MEMBER_ABORTED "aborted"     /* said goodbye, but ended
                                             abnormally (MPI_Abort, a
                                             fatal signal): the trace is
                                             partial */
#define WEFT_MEMBER_MISSING "missing"     /* never came, or gave up on */
#define WEFT_MEMBER_RECORDING "recording"

/* One member (process) of a trace. A rank that never connected has no
 * row (older weftd wrote one: host "", pid 0, state missing); readers
 * count the ranks below the trace's `members` without a row as missing. */
typedef struct weft_member_row {
    uint32_t rank;
    char *host;
    uint32_t pid;
    char *state;          /* one of WEFT_MEMBER_* */
    uint64_t locations;
    uint64_t events;
    uint64_t dropped;
    uint32_t parent_pid;  /* schema 14: a process tree member's parent
                             process (getppid() at its start), 0: none
                             or not known */
} weft_member_row;

/* One key=value tag of a trace. */
typedef struct weft_tag {
    char *key;
    char *value;
} weft_tag;

/* Marks the summed-over-all-locations row of a region profile. */
#define WEFT_PROFILE_ALL (-1)

/* One row of a trace's region profile: one region on one location, or
 * summed over all locations (location WEFT_PROFILE_ALL, stored as NULL). */
typedef struct weft_region_row {
    int64_t location;     /* OTF2 location id, or WEFT_PROFILE_ALL */
    char *region;         /* region name */
    uint64_t visits;      /* Enters */
    double incl_s;        /* inclusive seconds (outermost visits) */
    double excl_s;        /* exclusive seconds */
    char *paradigm;       /* schema 15: the region's OTF2 paradigm in
                             lower case ("mpi", "openmp", "none"; see
                             weft_profile_paradigm_name), "" for none
                             (the outside rows, rows stored before);
                             NULL is stored as "" */
    /* when read back by weft_catalog_regions only: */
    char *location_name;  /* "" for the sum rows */
    double total_excl_s;  /* exclusive seconds of all regions of the same
                             location (or of the sum rows) */
} weft_region_row;

/* Schema 6 (issue #17): what `weft report` draws, computed during
 * conversion. The timeline summary of one location: its time cut into
 * nbins bins of width_s seconds from start_s (seconds after the trace's
 * time_first), each holding the region that dominated it (the innermost
 * open region with the most time in it) as its global region id + 1, 0
 * when mostly no region was open; names in weft_timeline_region rows. */
typedef struct weft_timeline_row {
    uint64_t location;    /* OTF2 location id */
    double start_s, width_s;
    uint32_t *bins;       /* the writer's; malloc'd when read */
    size_t nbins;
} weft_timeline_row;

/* A region that timeline bins name. */
typedef struct weft_timeline_region {
    uint32_t id;          /* global region id (bins hold id + 1) */
    char *name;
} weft_timeline_region;

/* MPI point-to-point messages from one world rank to another (MpiSend
 * and MpiIsend): the communication matrix. */
typedef struct weft_message_row {
    uint32_t sender, receiver;
    uint64_t messages, bytes;
} weft_message_row;

/* Schema 7 (issue #17): file I/O per file (IoOperationBegin to its
 * Complete or Cancelled), the files of most time in I/O, and one
 * "others" row summing the rest (others: how many files; name ""). */
typedef struct weft_io_file_row {
    char *name;           /* the file's name (or its handle's) */
    uint64_t others;      /* 0: one file; else the files summed here */
    uint64_t bytes_read, bytes_written, operations;
    double time_s;        /* in its operations */
} weft_io_file_row;

/* Schema 7: the values of one metric member on one location over time,
 * npoints bins of width_s seconds from start_s (after the trace's
 * time_first), each bin's minimum, maximum and last value (points[3 * i
 * ...]; NaN for a bin without a value). series_total: the series the
 * conversion saw (more than it stored when capped). */
typedef struct weft_metric_row {
    uint64_t location;    /* OTF2 location id */
    uint32_t member;      /* global MetricMember id */
    char *name, *unit;
    double start_s, width_s;
    double *points;       /* the writer's; malloc'd when read */
    size_t npoints;
    uint64_t series_total;
} weft_metric_row;

/* What weft_catalog_trace_finish_detail stores besides the trace row.
 * Each array replaces what the catalog held for the trace. */
typedef struct weft_trace_detail {
    const weft_location_row *locations;
    size_t nlocations;
    const weft_member_row *members;
    size_t nmembers;
    const weft_tag *tags;
    size_t ntags;
    const weft_region_row *regions;
    size_t nregions;
    const weft_timeline_row *timelines;
    size_t ntimelines;
    const weft_timeline_region *timeline_regions;
    size_t ntimeline_regions;
    const weft_message_row *messages;
    size_t nmessages;
    const weft_io_file_row *io_files;
    size_t nio_files;
    const weft_metric_row *metrics;
    size_t nmetrics;
} weft_trace_detail;

/* Orders of weft_catalog_query. */
enum weft_list_sort {
    WEFT_SORT_CREATED,    /* newest first */
    WEFT_SORT_NAME,       /* A..Z */
    WEFT_SORT_EVENTS,     /* most first */
    WEFT_SORT_SIZE,       /* biggest archive first */
    WEFT_SORT_DURATION,   /* longest (finished - created) first */
    WEFT_SORT_STATE,      /* A..Z */
};

/* A filter for weft_catalog_query: zero-initialised matches everything.
 * All conditions must hold. Strings are the caller's. */
typedef struct weft_list_filter {
    int has_uid;
    uint32_t uid;
    const char *name_glob;  /* SQLite GLOB on the name, NULL: any */
    const char *state;      /* exact state, NULL: any */
    int64_t since, until;   /* created >= since / <= until (unix s); 0: open */
    const weft_tag *tags;   /* each key=value must be a tag of the trace */
    size_t ntags;
    const char *host;       /* one of the trace's member hosts */
    enum weft_list_sort sort;
    int reverse;            /* the other way round */
    int64_t limit;          /* at most this many rows; 0: all */
} weft_list_filter;

/* Orders of weft_catalog_regions. */
enum weft_region_sort {
    WEFT_RSORT_EXCL,      /* most exclusive time first */
    WEFT_RSORT_INCL,
    WEFT_RSORT_VISITS,
    WEFT_RSORT_NAME,      /* A..Z */
};

/* Opens (and when writable, creates or migrates) the catalog at path.
 * Returns 0 or a WEFT_E* code; on failure *errmsg (malloc'd, the caller
 * frees) says why, naming the file. */
int weft_catalog_open(const char *path, int readonly, weft_catalog **out,
                      char **errmsg);
void weft_catalog_close(weft_catalog *c);
/* The catalog at path as a database image of its own (catalog_image.c):
 * its schema, the traces of uid (all traces when all) and the rows of
 * every table that refer to them; read in one transaction, the file is
 * opened read-only. 0 with *bytes (sqlite3_free) and *len, or a WEFT_E*
 * code with *errmsg (malloc'd) naming the file. */
int weft_catalog_image(const char *path, int all, uint32_t uid,
                       unsigned char **bytes, size_t *len, char **errmsg);
/* Opens a copy of such an image read-only as a catalog; name stands for
 * the file in messages. Returns as weft_catalog_open; WEFT_ECORRUPT when
 * the bytes are not a database. */
int weft_catalog_open_image(const unsigned char *bytes, size_t len,
                            const char *name, weft_catalog **out,
                            char **errmsg);
/* Loads a copy of an image read-only as db's main database (a new
 * connection, ":memory:"); an SQLite result code. */
struct sqlite3;
int weft_catalog_load_image(struct sqlite3 *db, const unsigned char *bytes,
                            size_t len);
/* Checks the file at path with SQLite's quick_check without changing it.
 * Returns 0 (sound, or no file yet), WEFT_ECORRUPT when it is damaged or
 * not an SQLite database, or another WEFT_E* code when it cannot be read;
 * on failure *errmsg (malloc'd) says why, naming the file. */
int weft_catalog_verify(const char *path, char **errmsg);
/* 1 if the file system of the catalog at path has less room than SQLite
 * needs to open it (its -wal and -shm files), else 0. */
int weft_catalog_disk_full(const char *path);
/* Message of the last failure on this handle. */
const char *weft_catalog_errmsg(const weft_catalog *c);
/* 1 while a transaction is open on this handle (one a failure left
 * behind), else 0. */
int weft_catalog_in_transaction(const weft_catalog *c);
/* How new traces get their ids in this catalog from now on (the catalog
 * keeps it): sequential (1): one above the highest ever given, short
 * ids for a machine with one user; 0 (the default): drawn at random
 * among the ids never given, so that a user's ids do not tell how many
 * traces others made in between. 0 or WEFT_EDB. */
int weft_catalog_set_sequential_ids(weft_catalog *c, int sequential);
/* Random ids are floor + 1 .. floor + this (floor: the highest id of the
 * catalog when it became schema 10, 0 for a new one): up to 7 digits. */
#define WEFT_CATALOG_ID_RANGE 9000000

/* Records a new trace (state recording) unless one with row->key exists.
 * Sets row->id. */
int weft_catalog_trace_begin(weft_catalog *c, weft_trace_row *row);
/* Adds tags to the trace with this catalog id; keys it has keep their
 * value. */
int weft_catalog_trace_add_tags(weft_catalog *c, int64_t trace_id,
                                const weft_tag *tags, size_t ntags);
/* Sets what the trace with this key costs its owner's quota besides its
 * archive's bytes (an import: its catalog rows). 0, WEFT_ENOTFOUND or a
 * WEFT_E* code. */
int weft_catalog_trace_charge(weft_catalog *c, const char *key,
                              uint64_t bytes);
/* Sets the state of the trace with this key. */
int weft_catalog_trace_set_state(weft_catalog *c, const char *key,
                                 const char *state);
/* The trace of key old gets key and archive directory path (its spool
 * directory renamed: weftd's rekey.c). 0, WEFT_ENOTFOUND or WEFT_EDB. */
int weft_catalog_trace_rekey(weft_catalog *c, const char *old,
                             const char *key, const char *path);
/* In one transaction: stores all figures of row (matched by row->key,
 * inserted if missing) including its state, and replaces its locations. */
int weft_catalog_trace_finish(weft_catalog *c, const weft_trace_row *row,
                              const weft_location_row *locs, size_t nlocs);
/* The same, and replaces the trace's members, tags and region profile by
 * those of detail (NULL: none). */
int weft_catalog_trace_finish_detail(weft_catalog *c,
                                     const weft_trace_row *row,
                                     const weft_trace_detail *detail);

/* Ends the trace with row->key as failed with row->error (a trace that
 * recovery cannot use): a row that exists keeps its figures, name and
 * owner, and gets state failed, error and finished (a row already
 * failed keeps its finish time); a missing row is inserted from row (its
 * state is forced to failed). */
int weft_catalog_trace_fail(weft_catalog *c, const weft_trace_row *row);
/* The live figures of one trace still recording (weftd's live.c): what
 * it received so far. Everything is the caller's. */
typedef struct weft_live_figures {
    const char *key;
    uint32_t joined;                  /* members that said Hello */
    uint64_t locations, events;       /* journaled so far */
    uint64_t bytes;                   /* its journals' size */
    const weft_member_row *members;   /* the members that joined */
    size_t nmembers;
    const weft_location_row *locs;    /* the locations that sent events */
    size_t nlocs;
    uint64_t refused;                 /* records weftd did not store so
                                         far (its dropped and refused) */
} weft_live_figures;

/* In one transaction, for each of the n traces of v whose row is still
 * recording: sets its joined, locations, events and bytes, live_updated
 * to now, and replaces its member and location rows by v's. Rows in any
 * other state are left alone, so the conversion's final figures win over
 * live ones however the two jobs interleave. stored (may be NULL) gets
 * n flags: 1 where the row was updated, 0 where it was not recording or
 * not there (yet). */
int weft_catalog_trace_live(weft_catalog *c, const weft_live_figures *v,
                            size_t n, int64_t now, uint8_t *stored);

/* Calls fn for each trace, newest first. Stops early when fn returns
 * non-zero and returns that value. The row is valid during the call. */
typedef int (*weft_catalog_trace_fn)(const weft_trace_row *row, void *arg);
int weft_catalog_list(weft_catalog *c, weft_catalog_trace_fn fn, void *arg);
/* Calls fn for each trace that passes filter (NULL: all), in its order;
 * one SQL query with bound parameters. Returns like weft_catalog_list;
 * WEFT_EINVAL for a filter it cannot express (an unknown sort). */
int weft_catalog_query(weft_catalog *c, const weft_list_filter *filter,
                       weft_catalog_trace_fn fn, void *arg);
/* Finds a trace by catalog id ("12" or "#12"), key, or name (the newest
 * with that name). Returns 0 and fills *out (free with
 * weft_catalog_trace_free), or WEFT_ENOTFOUND. */
int weft_catalog_find(weft_catalog *c, const char *what, weft_trace_row *out);
void weft_catalog_trace_free(weft_trace_row *row);
/* Sets *n to the number of traces named `name`: weft says so when a name
 * it was given picks one of several. */
int weft_catalog_count_name(weft_catalog *c, const char *name, uint64_t *n);
/* Calls fn for each location of trace id, by location id. */
typedef int (*weft_catalog_location_fn)(const weft_location_row *row,
                                        void *arg);
int weft_catalog_locations(weft_catalog *c, int64_t trace_id,
                           weft_catalog_location_fn fn, void *arg);

/* Calls fn for each member of trace id, by rank. */
typedef int (*weft_catalog_member_fn)(const weft_member_row *row, void *arg);
int weft_catalog_members(weft_catalog *c, int64_t trace_id,
                         weft_catalog_member_fn fn, void *arg);
/* Calls fn for each tag of trace id, by key. */
typedef int (*weft_catalog_tag_fn)(const weft_tag *tag, void *arg);
int weft_catalog_tags(weft_catalog *c, int64_t trace_id,
                      weft_catalog_tag_fn fn, void *arg);
/* Groups of weft_catalog_regions: the rows summed over all locations, the
 * per-location rows, or those summed per program (the locations'
 * `program`; "-" for locations without one; rows of one region name and
 * paradigm added up), each program's rows given its name as
 * location_name and location 0. */
enum weft_region_group {
    WEFT_RGROUP_ALL, WEFT_RGROUP_LOCATION, WEFT_RGROUP_PROGRAM
};
/* Calls fn for the region profile of trace id grouped as `group` says,
 * by location id or program; within a group in `sort` order, at most
 * limit rows per group (0: all). total_excl_s of each row is its group's
 * total. */
typedef int (*weft_catalog_region_fn)(const weft_region_row *row, void *arg);
int weft_catalog_regions(weft_catalog *c, int64_t trace_id,
                         enum weft_region_group group,
                         enum weft_region_sort sort, int64_t limit,
                         weft_catalog_region_fn fn, void *arg);

/* One region of two traces' profiles side by side (weft_catalog_compare):
 * the rows summed over all locations, matched by region name (rows of
 * one trace with the same name are added up). */
typedef struct weft_region_pair {
    char *region;
    int in_a, in_b;           /* the region is in trace a's, b's profile */
    uint64_t visits_a, visits_b; /* 0 where the region is not */
    double excl_a, excl_b;    /* exclusive seconds, 0 where it is not */
    /* of all regions of the comparison, whatever the limit: */
    uint64_t regions_a, regions_b; /* regions of each profile */
    uint64_t total_visits_a, total_visits_b;
    double total_excl_a, total_excl_b;
    uint64_t regions;         /* regions of either */
} weft_region_pair;

/* Calls fn for the regions of the profiles of traces a and b, the one
 * whose exclusive time changed most (|excl_b - excl_a|) first, then by
 * name; at most limit rows (0: all). One query. Returns 0 after all
 * rows (also when neither trace has a profile: no call), fn's first
 * non-zero value, or a WEFT_E* code. */
typedef int (*weft_catalog_pair_fn)(const weft_region_pair *row, void *arg);
int weft_catalog_compare(weft_catalog *c, int64_t a, int64_t b,
                         int64_t limit, weft_catalog_pair_fn fn, void *arg);

/* Calls fn for each timeline of trace id, by location (row->bins is
 * malloc'd and valid during the call only). Returns like
 * weft_catalog_list; WEFT_ECORRUPT for bins that do not decode. */
typedef int (*weft_catalog_timeline_fn)(const weft_timeline_row *row,
                                        void *arg);
int weft_catalog_timelines(weft_catalog *c, int64_t trace_id,
                           weft_catalog_timeline_fn fn, void *arg);
/* Calls fn for each region the timelines of trace id name, by id. */
typedef int (*weft_catalog_timeline_region_fn)(
    const weft_timeline_region *row, void *arg);
int weft_catalog_timeline_regions(weft_catalog *c, int64_t trace_id,
                                  weft_catalog_timeline_region_fn fn,
                                  void *arg);
/* Calls fn for each sender -> receiver pair of trace id, by sender then
 * receiver. */
typedef int (*weft_catalog_message_fn)(const weft_message_row *row,
                                       void *arg);
int weft_catalog_messages(weft_catalog *c, int64_t trace_id,
                          weft_catalog_message_fn fn, void *arg);

/* Calls fn for each file row of trace id (schema 7), most time first,
 * the "others" row last (names valid during the call only). */
typedef int (*weft_catalog_io_file_fn)(const weft_io_file_row *row,
                                       void *arg);
int weft_catalog_io_files(weft_catalog *c, int64_t trace_id,
                          weft_catalog_io_file_fn fn, void *arg);
/* Calls fn for each metric series of trace id (schema 7), by location
 * then member (row's strings and points valid during the call only).
 * WEFT_ECORRUPT for points that do not decode. */
typedef int (*weft_catalog_metric_fn)(const weft_metric_row *row,
                                      void *arg);
int weft_catalog_metrics(weft_catalog *c, int64_t trace_id,
                         weft_catalog_metric_fn fn, void *arg);

/* ---- retention (weftd's daemon/traces/retain.c) ---- */

/* The oldest finished trace (complete or partial: a failed one keeps its
 * journals for a look and a retry; by finished, then id) that finished before `before` (unix s; 0: any time). 0 with
 * *out (weft_catalog_trace_free), WEFT_ENOTFOUND, or a WEFT_E* code. */
int weft_catalog_oldest_finished(weft_catalog *c, int64_t before,
                                 weft_trace_row *out);
/* Sets the trace's state to removed with `why` as its error. 0,
 * WEFT_ENOTFOUND or a WEFT_E* code. */
int weft_catalog_trace_removed(weft_catalog *c, int64_t id, const char *why);
/* Bytes of the traces not removed: *total, and fn(uid, bytes, arg) per
 * owner with the bytes of their finished traces (those recording or
 * converting are weftd's to count: their journals, quota.h) and what
 * those were charged besides (weft_catalog_trace_charge). 0 or a WEFT_E*
 * code. */
typedef void (*weft_catalog_bytes_fn)(uint32_t uid, uint64_t bytes,
                                      void *arg);
int weft_catalog_spool_bytes(weft_catalog *c, uint64_t *total,
                             weft_catalog_bytes_fn fn, void *arg);

/* Deletes the trace with this catalog id and its locations, in one
 * transaction (needs a writable handle); members, tags and regions go
 * with it (ON DELETE CASCADE). Returns 0, WEFT_ENOTFOUND, or
 * another WEFT_E* code with nothing changed. */
int weft_catalog_trace_delete(weft_catalog *c, int64_t id);

#endif
