/* export.h - what the files of `weft export` share: the streaming JSON
 * writer (export_json.c), the matching of MPI sends with their receives
 * (export_mpi.c), the conversion of each event kind (export_events.c) and
 * the exporter state they all work on; the command is export.c.
 *
 * One exporter reads one archive location by location, twice when it has
 * communicators: pass 1 notes every MPI point-to-point and thread
 * create/begin/end/wait event, so that pass 2, which writes, knows which
 * send has a matching receive (and the other way round) before drawing
 * an arrow.
 */
#ifndef WEFT_CLI_EXPORT_H
#define WEFT_CLI_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <zlib.h>

#include "archive.h"
#include "out.h"

/* ---- the JSON writer (export_json.c) ------------------------------------ */

/* Output in a buffer, written to a file (plain or gzip) when it is full.
 * Strings of the archive are escaped once, by jansson, and kept. */
typedef struct weft__xout {
    weft__sbuf b;            /* not yet written */
    FILE *f;                 /* plain output, or NULL */
    gzFile gz;               /* gzip output (FILE.gz), or NULL */
    int err;                 /* errno of the first failed write, else 0 */
    const weft__arc *a;
    char **esc;              /* StringRef -> its JSON text, NULL until used */
    size_t nesc;
} weft__xout;

/* Opens path for writing ("-": stdout; a name ending in .gz: gzip).
 * Returns 0, or -1 with errno set. */
int weft__xout_open(weft__xout *o, const char *path, const weft__arc *a);
/* Writes what is buffered when there is enough of it (force: all). */
void weft__xout_flush(weft__xout *o, int force);
/* Flushes and closes (not stdout). Returns 0, or -1 with errno set for
 * the first failure of any write. */
int weft__xout_close(weft__xout *o);

/* Appenders to a buffer: a JSON string of s (invalid UTF-8 as U+FFFD,
 * via jansson), of archive string s (cached in o), a number, a double
 * (null for NaN and infinities), and t (archive ticks) as microseconds
 * since `zero` with nanosecond digits ("-" before zero). */
void weft__xj_str(weft__sbuf *b, const char *s);
/* s quoted as it is: for the exporter's own names, ASCII that needs no
 * escape. */
void weft__xj_ascii(weft__sbuf *b, const char *s);
void weft__xj_sref(weft__xout *o, weft__sbuf *b, OTF2_StringRef s);
void weft__xj_u64(weft__sbuf *b, uint64_t v);
void weft__xj_i64(weft__sbuf *b, int64_t v);
void weft__xj_double(weft__sbuf *b, double v);
void weft__xj_us(weft__sbuf *b, uint64_t t, uint64_t zero, uint64_t res);
#define weft__xj_lit(b, s) weft__cli_sb_add((b), (s), sizeof(s) - 1)

/* ---- arrows: MPI send/receive matching (export_mpi.c) ------------------- */

/* Messages travel on channels: (communicator, sending process, receiving
 * process, tag); processes are location groups. The n-th send of a
 * channel matches its n-th receive (MPI's non-overtaking rule). Thread
 * creation and join are channels too: comm the thread contingent, from
 * and to the halves of the sequence count; ThreadCreate and ThreadEnd
 * "send", ThreadBegin and ThreadWait "receive". */
enum { WEFT__XCHAN_MESSAGE, WEFT__XCHAN_CREATE, WEFT__XCHAN_JOIN };

typedef struct weft__xchan_key {
    uint32_t kind;           /* WEFT__XCHAN_* */
    uint32_t comm, from, to, tag;
} weft__xchan_key;

typedef struct weft__xmpi weft__xmpi;

weft__xmpi *weft__xmpi_new(const weft__arc *a);
void weft__xmpi_free(weft__xmpi *m);
/* The process (location group) of rank `rank` of communicator comm, for
 * an event of process self (MPI_COMM_SELF's one rank). */
uint32_t weft__xmpi_process(weft__xmpi *m, uint32_t comm, uint32_t rank,
                            uint32_t self);
/* Pass 1: one send (recv 0) or receive (recv 1) of channel k, exported
 * or not (its location's rank and time inside the filters). */
void weft__xmpi_note(weft__xmpi *m, const weft__xchan_key *k, int recv,
                     int exported);
/* Between the passes: numbers the messages. */
void weft__xmpi_seal(weft__xmpi *m);
/* Pass 2, for every send or receive in the order of pass 1 (of the
 * locations pass 2 reads): the id of its message's flow when both ends
 * are exported, else 0. */
uint64_t weft__xmpi_flow(weft__xmpi *m, const weft__xchan_key *k, int recv);

/* ---- the exporter (export_events.c) ------------------------------------- */

/* An Enter or begin event waiting for its end. */
typedef struct weft__xopen {
    uint64_t t;              /* archive ticks */
    const char *name;        /* slice name (static), NULL: from the end */
    uint32_t what;           /* region (Enter), else the pair's index */
    uint64_t key[3];         /* the fields that find the end */
    char *args;              /* its args object ("{...}"), or NULL */
} weft__xopen;

typedef struct weft__xstack {
    weft__xopen *v;
    size_t n, cap;
} weft__xstack;

typedef struct weft__export {
    weft__xout out;
    const weft__arc *a;
    weft__xmpi *mpi;         /* NULL: the archive has no communicators */
    int pass;                /* 1: MPI matching only, 2: writing */
    /* Filters, in archive ticks: what overlaps [from, to]; slices of at
     * least min_dur; regions whose region_ok is 1 (NULL: all). */
    uint64_t from, to, min_dur;
    uint8_t *region_ok;
    size_t nregion_ok;
    uint8_t *rank_ok;        /* by location group; NULL: all */
    size_t nrank_ok;
    /* The location being read. */
    size_t loc;
    uint32_t pid, tid;
    uint64_t last_t;         /* time of its latest event */
    weft__xstack regions;    /* open Enters */
    weft__xstack pairs;      /* open begin events (I/O, locks, ...) */
    uint64_t next_id;        /* async slice ids */
    weft__sbuf scratch;
    char **counter_names;    /* metric -> JSON name text, this location */
    size_t ncounter_names;
    int first;               /* nothing written yet into traceEvents */
    /* Progress. */
    uint64_t events, total;
    int progress;
} weft__export;

/* Reader callbacks for pass 1 (the ends of arrows) or 2 (every
 * event kind); NULL when out of memory. */
OTF2_EvtReaderCallbacks *weft__export_callbacks(int pass);
/* Before and after reading location i. */
void weft__export_location_begin(weft__export *e, size_t i);
void weft__export_location_end(weft__export *e);
/* The process of location group g: pid g + 1 (Perfetto's pid 0 is the
 * idle process); its thread: the location's thread index. */
uint32_t weft__export_tid(const weft__arc *a, size_t i);
/* Is location i's rank exported? */
int weft__export_rank_ok(const weft__export *e, size_t i);

#endif
