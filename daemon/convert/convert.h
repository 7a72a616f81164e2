/* convert.h - turns the journals of a finished trace into an OTF2 archive.
 * Runs on a worker thread; touches no libuv and no catalog.
 *
 * Reads every member journal (rank-*.wj) in a trace directory, unifies the
 * members' definitions into dense global ids, replays the event batches
 * through libotf2's writers and writes the global definitions, with the
 * system tree, location groups (one per rank) and locations (id
 * rank * 2^32 + thread) derived from the members' Hello entries.
 * Replaying events may use several threads (one member each at a time);
 * the archive and the result do not depend on their number.
 */
#ifndef WEFT_CONVERT_H
#define WEFT_CONVERT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "summary.h"

typedef struct weft_convert_input {
    const char *trace_dir;   /* holds the rank-<R>.wj journals */
    const char *archive_dir; /* created; receives traces.otf2 etc. */
    const char *trace_name;  /* for the archive's description */
    uint32_t members;        /* expected members (trace size) */
    unsigned threads;        /* members converted at once (pass 2);
                                0: online CPUs, at most
                                WEFT_CONVERT_MAX_THREADS */
    int sync;                /* fsync the archive's files and directories
                                (and archive_dir's entry) before returning:
                                with durability = fsync the journals go
                                once the catalog says complete */
    uint64_t max_writers;    /* event writers open at once over all
                                threads (each holds a libotf2 chunk of
                                WEFT_CONVERT_WRITER_BYTES): a member with
                                more locations than its thread's share is
                                replayed in groups of locations, one pass
                                over its journal each; 0: no bound.
                                weft_convert_writers() derives it from a
                                memory budget */
    /* Called (on the converting thread) as the conversion reaches its
     * "unify" and "defs" phases (testhook.h), when not NULL. */
    void (*reached)(void *arg, const char *phase);
    void *reached_arg;
    /* ---- a weftd per node (issue #34, step B; last, so that the
     * initializers that end before them stay whole) ---- */
    uint64_t resolution;     /* the archive's timer resolution: 0, rank
                                0's rate (or 1 ns when the members' rates
                                differ more than 10 ppm); else
                                WEFT_CONVERT_NS (no other), every member
                                whose rate differs rescaled to ns. A
                                stream with it writes the members of any
                                rate; a node's needs it */
    int events_only;         /* a stream's: a node's (see
                                weft_convert_stream_sums) */
    const struct weft_convert_remote *remote; /* the members whose
                                events a node's stream wrote (rank order
                                not needed); a conversion with a stream
                                (weft_convert_trace_stream) only */
    size_t nremote;
} weft_convert_input;

/* The one fixed resolution weft_convert_input.resolution takes: 1 ns. */
#define WEFT_CONVERT_NS UINT64_C(1000000000)

/* A member whose node's stream (events_only) wrote its event files
 * into the trace's archive directory: the head's journal of it holds
 * its Hello, Definitions, ClockSync and Goodbye but no events, and
 * sums (len bytes, the caller's) are what weft_convert_stream_sums
 * packed of it on the node. sums NULL: the node never sent them (its
 * node died, the link broke): the member's events are lost, its
 * locations get empty event files (what its node wrote is truncated or
 * removed) and weft_convert_result.lost counts it. */
typedef struct weft_convert_remote {
    uint32_t rank;
    const uint8_t *sums;
    size_t len;
} weft_convert_remote;

/* Upper bound of weft_convert_input.threads (and of its default); the
 * number of members found bounds it too. */
#define WEFT_CONVERT_MAX_THREADS 8

/* Memory one open event writer holds (its libotf2 chunk: libotf2's
 * least, which made 10 000 small locations convert 1.5x faster than
 * 1 MiB and costs large ones nothing measurable), and what a conversion
 * holds besides its writers' chunks: the chunks writers may borrow
 * beyond their first, and the definition writers' one chunk. */
#define WEFT_CONVERT_WRITER_BYTES (UINT64_C(256) << 10)
/* What libotf2 holds for a location's file once a writer flushed to it,
 * until the writer is closed (OTF2_File.c's buffer). */
#define WEFT_CONVERT_FILE_BUFFER_BYTES (UINT64_C(4) << 20)
#define WEFT_CONVERT_FIXED_BYTES (UINT64_C(24) << 20)

/* The max_writers that keep a conversion's libotf2 buffers within
 * `memory` bytes (at least 1); 0 for memory 0 (no bound). */
uint64_t weft_convert_writers(uint64_t memory);

/* Room for every clock name a member may give (README, Clocks), and the
 * archive property that lists them. */
#define WEFT_CLOCK_NAMES 64
#define WEFT_CLOCK_PROPERTY "WEFT::CLOCK"

typedef struct weft_convert_result {
    uint32_t members;             /* members found in journals */
    uint64_t events;              /* events written */
    uint64_t bytes;               /* archive bytes on disk */
    uint64_t time_first;          /* first/last timestamp written */
    uint64_t time_last;
    uint64_t timer_resolution;
    char clock[WEFT_CLOCK_NAMES]; /* the members' trace clocks, distinct,
                                     sorted, comma-separated ("tsc",
                                     "monotonic,tsc"; "" without members) */
    uint64_t dropped;             /* from the members' Goodbye, and
                                     `refused` */
    uint64_t refused;             /* of those, what weftd did not store
                                     (WEFT_JE_REFUSED: quota, disk reserve,
                                     failed writes) */
    weft_location_row *locations; /* malloc'd, names malloc'd */
    size_t nlocations;
    /* The region profile from the Enter/Leave events (see profile.c): the
     * rows summed over all locations (location WEFT_PROFILE_ALL) first,
     * then per location. malloc'd, region names and paradigms
     * malloc'd. */
    weft_region_row *regions;
    size_t nregions;
    /* What `weft report` draws (issue #17; catalog.h, schema 6): the
     * timelines of the first WEFT_CONVERT_TIMELINES locations (rank
     * order) that wrote an Enter or Leave (bins malloc'd), the names of
     * the regions their bins hold, and the MPI messages per sender and
     * receiver world rank (the WEFT_CONVERT_MESSAGE_ROWS of most bytes).
     * All malloc'd, names too. */
    weft_timeline_row *timelines;
    size_t ntimelines;
    weft_timeline_region *timeline_regions;
    size_t ntimeline_regions;
    weft_message_row *messages;
    size_t nmessages;
    /* Schema 7: file I/O per file (WEFT_CONVERT_IO_FILES and "others")
     * and metric series (WEFT_CONVERT_METRIC_SERIES at most). All
     * malloc'd, names and points too. */
    weft_io_file_row *io_files;
    size_t nio_files;
    weft_metric_row *metrics;
    size_t nmetrics;
    uint64_t profile_anomalies;   /* Leaves that did not match their
                                     location's open region */
    uint64_t nesting_added;       /* Leaves and Enters written so that
                                     every location nests (see replay.c) */
    uint64_t nesting_unmatched;   /* Leaves of regions not open: not
                                     written */
    uint64_t writers_peak;        /* event writers open at once, at most */
    uint64_t passes;              /* journal passes of pass 2 (one per
                                     member without a bound; more when
                                     max_writers split a member's
                                     locations into groups; none for a
                                     member streamed) */
    uint32_t streamed;            /* members whose events a stream wrote
                                     while the trace recorded (stream.c;
                                     a node's stream too) */
    uint32_t lost;                /* remote members whose events are lost
                                     (their sums never came, or the
                                     archive was made anew); incomplete
                                     names the first */
    char incomplete[512];         /* "" when every member with a Goodbye
                                     sent what arrived; else which thread
                                     differs (the trace is partial) */
    char error[512];              /* set when conversion fails */
} weft_convert_result;

/* Converts a trace. Returns 0, or a WEFT_E* code with out->error saying
 * what failed (which journal, which record); then, if every journal could
 * be read, out->members, locations, events and dropped say what the
 * journals hold (no archive: bytes and times are 0). */
int weft_convert_trace(const weft_convert_input *in, weft_convert_result *out);
/* weft_convert_trace, with general_only set: every Enter and Leave takes
 * the general way of the replay (replay.c), whose archive and result its
 * short way for runs of Enters and Leaves must equal (tests compare
 * them). */
int weft__convert_trace(const weft_convert_input *in, int general_only,
                        weft_convert_result *out);
void weft_convert_result_free(weft_convert_result *out);

/* ---- streaming (issue #33; stream.c) ----------------------------------
 * A trace converted while it records: each member's events are written
 * into the archive's event files as its journal grows, in its own ids;
 * at the end, weft_convert_trace_stream does what needs every member
 * (unification, mapping tables, global definitions) and replays only
 * what the stream could not. The archive is the same as without it.
 *
 * The memory of the event writers all of a daemon's streams hold at
 * once: WEFT_CONVERT_WRITER_BYTES for each, and libotf2's file buffer
 * (WEFT_CONVERT_FILE_BUFFER_BYTES) once it flushed; a member whose
 * writers would take more is left to its trace's conversion (its writers
 * closed, their memory given back). The streams of one owner (uid) hold
 * at most half of it (at least one writer and its file buffer), so that
 * one user's traces, recording long with many threads, cannot keep every
 * other user's from being written while they record. */
typedef struct weft_convert_budget_owner {
    uint32_t uid;
    uint64_t bytes;      /* held by its streams */
} weft_convert_budget_owner;

typedef struct weft_convert_budget {
    pthread_mutex_t lock;
    uint64_t max;        /* bytes at most (0: no bound) */
    uint64_t open;       /* bytes held, under lock */
    uint64_t floor;      /* free bytes of the archives' file system below
                            which a stream writes no more (and removes
                            what it wrote: the journals need the room),
                            read when a stream is made */
    weft_convert_budget_owner *owners; /* those holding bytes, under lock */
    size_t nowners, owners_cap;
} weft_convert_budget;

/* The most the streams of one owner hold of a budget of max bytes
 * (0: no bound). */
uint64_t weft_convert_budget_share(uint64_t max);
/* Why weft_convert_budget_take refused. */
enum { WEFT_BUDGET_FULL = 1, WEFT_BUDGET_SHARE = 2 };
/* `bytes` more for a stream of owner uid: 0 if the budget has room for
 * them and so has the owner's share (weft_convert_budget_share), else
 * WEFT_BUDGET_FULL or WEFT_BUDGET_SHARE and nothing taken. Any thread. */
int weft_convert_budget_take(weft_convert_budget *b, uint32_t uid,
                             uint64_t bytes);
/* `bytes` that owner uid's streams held go back. Any thread. */
void weft_convert_budget_give(weft_convert_budget *b, uint32_t uid,
                              uint64_t bytes);

void weft_convert_budget_init(weft_convert_budget *b, uint64_t max);
void weft_convert_budget_destroy(weft_convert_budget *b);

typedef struct weft_convert_stream weft_convert_stream;

/* A stream of the trace of `in` (its trace_dir, archive_dir, trace_name
 * and members are copied; threads, sync and max_writers are the final
 * conversion's), owned by uid `owner`: nothing read or written yet.
 * budget (may be NULL: no bound) outlives it. NULL when out of memory. */
weft_convert_stream *weft_convert_stream_new(const weft_convert_input *in,
                                             weft_convert_budget *budget,
                                             uint32_t owner);
/* Writes what member `rank`'s journal holds beyond what was written of
 * it (the first call makes the archive: an archive there before is
 * replaced; a node's joins its head's, weft_convert_stream_open).
 * Reads only whole entries: a journal being appended to is read up to
 * its last whole entry, the rest at the next call. A member the stream
 * cannot write (its clock's rate differs from the first member's
 * without a fixed resolution, an event names an id only the trace's
 * definitions number, a bad record, no writer left in the budget) is
 * left to the final conversion, which also says what was wrong with
 * it; a failure of the archive itself (libotf2, the disk) leaves
 * everything to it. Any thread, one call at a time per stream. Returns
 * 1 when the member is still streamed, else 0. */
int weft_convert_stream_step(weft_convert_stream *s, uint32_t rank);
/* Makes s's archive now (what the first step would do): a head makes
 * the trace's archive at its creation, before any member has events, so
 * that its nodes' streams (events_only) can write beside it; a node's
 * stream joins the archive its head made (its directory must be there:
 * WEFT_ESTATE, the error naming it, when it is not; and it needs a
 * fixed resolution). 0, or a WEFT_E* code with
 * weft_convert_stream_error saying why (s then writes nothing: make
 * another). As weft_convert_stream_step. */
int weft_convert_stream_open(weft_convert_stream *s);
/* A node's end of a member (issue #34, step B): member `rank` of s
 * ended (its journal read to the end, its open regions left, its event
 * files closed: what a step does once its Goodbye is read; done here
 * first for a member without one, whose connection ended), the
 * protobuf-packed MemberSums (weft.proto) of it into *buf (malloc'd,
 * *len bytes, the caller's) for the head's weft_convert_remote. Again
 * for the same member: the same bytes. 0; WEFT_ENOTFOUND when s never
 * stepped that member; WEFT_ESTATE when s cannot give them (the member
 * was left to a conversion, weft_convert_stream_why says why, or s
 * failed, weft_convert_stream_error), then the member's events are
 * lost for the head. s keeps each member's sums until it is freed (at
 * most a timeline of WEFT_TIMELINE_BINS and WEFT_METRICSUM_PER_LOC
 * metric series per location). As weft_convert_stream_step. */
int weft_convert_stream_sums(weft_convert_stream *s, uint32_t rank,
                             uint8_t **buf, size_t *len);
/* Whether s wrote member `rank` whole: its journal read through its
 * Goodbye, its event files closed (its sums are ready, and packing them
 * ends nothing). As weft_convert_stream_step. */
int weft_convert_stream_done(weft_convert_stream *s, uint32_t rank);
/* Whether the stream still writes its archive (no failure of its own);
 * when not, why ("" when it did not say). */
int weft_convert_stream_ok(const weft_convert_stream *s);
const char *weft_convert_stream_error(const weft_convert_stream *s);
/* Bytes of s's archive written so far (its full chunks; 0 once it
 * failed: its files are removed). Any thread. */
uint64_t weft_convert_stream_written(weft_convert_stream *s);
/* Events of s's members read from their journals and written to the
 * archive's event files so far (0 once it failed). As
 * weft_convert_stream_step: not while a step runs. */
uint64_t weft_convert_stream_replayed(weft_convert_stream *s);
/* Why member `rank` was left to the conversion, NULL if it was not (or
 * for no reason of its own). As weft_convert_stream_step. */
const char *weft_convert_stream_why(weft_convert_stream *s, uint32_t rank);
/* weft_convert_trace of s's trace: first the stream writes what its
 * members' journals hold beyond what it wrote; members it wrote whole
 * are only finished, the others replayed. in is the final input (the
 * trace's size may have grown); its remote members (a head's) are
 * adopted from their sums, never opening their locations' event files
 * (s's archive, which their nodes wrote into); bad sums fail the
 * conversion (WEFT_ECORRUPT, out->error naming the rank and what was
 * wrong). A remote member without sums, or all of them when s failed
 * and the archive is made anew, is lost (out->lost, out->incomplete).
 * s (not a node's) is consumed either way (freed). */
int weft_convert_trace_stream(const weft_convert_input *in,
                              weft_convert_stream *s,
                              weft_convert_result *out);
/* Frees s without converting (its archive, if any, left half written:
 * the caller removes it or converts again). NULL is fine. */
void weft_convert_stream_free(weft_convert_stream *s);

#endif
