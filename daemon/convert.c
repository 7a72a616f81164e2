/* convert.c - journals of a finished trace -> one OTF2 archive.
 *
 * DESIGN: two passes over the member journals (rank-<R>.wj), in rank
 * order and, within a journal, in entry order.
 *   Pass 1 reads Hello and Goodbye entries, learns every location (thread)
 *   of every member and feeds all definitions through the unifier, so
 *   that pass 2 never meets an event whose definition comes later.
 *   Pass 2 replays the event batches through libotf2, one EvtWriter per
 *   location; a member's writers are closed when its journal is done, so
 *   only the members being replayed hold writers.
 * Entries whose seq is not above the last one seen for the same (member,
 * location) or (member, definitions) are resends and are skipped, the
 * same way in both passes. Then one empty local DefWriter per location,
 * and the global definitions: clock, strings, system tree (root "weft",
 * one node per host), one location group per member ("Process R"; ids
 * are dense in rank order, so id = rank unless members are missing, as
 * readers refuse gaps), the locations (id = rank << 32 | thread), then the
 * unified definitions in first-seen order, which puts each after what it
 * references.
 *
 * Records reach libotf2 through switches generated from the record table
 * (write_event, write_def, write_local_def); the definitions weftd derives
 * itself are built as weft_records and go through the same switch. An
 * event's attribute list becomes one reused OTF2_AttributeList.
 * Members name derived definitions by convention (weft_records.def), so
 * pass 1 tells the unifier what a member's system tree nodes 0 and 1 and
 * the ranks of location groups are; a member's ClockOffset records are
 * kept aside and written to the local definitions of each of its
 * locations. Locations that records name but where nothing was recorded
 * (a definition or attribute naming an idle thread) get an empty event
 * file before the event files are closed, so every reference resolves.
 *
 * The region profile (issue #6) is computed in pass 2 where each event
 * is written, from Enter and Leave (unified region ids), per location:
 *   - a stack of open Enters (region, enter time, time of direct children)
 *     and a small open-addressing table of the regions the location
 *     touched (visits, inclusive and exclusive ticks, open frames); no
 *     allocation per event, memory bounded by the regions touched;
 *   - visits count every Enter; exclusive time of a visit is its duration
 *     minus that of its direct children; inclusive time is counted once
 *     per outermost visit of a region (a recursive f inside f adds its
 *     exclusive time, not its inclusive time again);
 *   - a Leave whose region is not the innermost open one is an anomaly
 *     (counted in profile_anomalies; ingest does not check the nesting,
 *     so such traces reach us). The archive is made to nest (see
 *     "nesting" above nest_enter: Leaves added, Leaves of regions not
 *     open left out, gaps and a location's end closed) and the profile
 *     is fed exactly the Enters and Leaves written, so it is what any
 *     reader computes from the archive.
 * When a member's journal is done its locations are folded into the sums
 * over all locations (an array by region id) and keep their top
 * WEFT_PROFILE_ROWS_PER_LOCATION regions by exclusive time as rows; the
 * tables are freed.
 * Times go out in seconds at the resolution written to ClockProperties.
 *
 * Threads (issue #5): pass 2 replays several members at once, one member
 * per worker thread at a time (weft_convert_input.threads; 1 replays them
 * one after the other on the calling thread). Workers claim members in
 * rank order; each has its own copy of the conversion state for pass 2
 * (decoder, unifier scratch, attribute list, referenced locations, time
 * range, profile sums and its error) and writes only the locations of the
 * member it holds, which libotf2 allows once its pthread locking
 * callbacks are installed. What a member yields that depends on order
 * (its per-location profile rows, its error) is kept with the member; the
 * rest (sums, min/max, sets) does not depend on order. After the workers
 * are joined everything is merged in rank order, and the error reported
 * is that of the lowest rank that failed (no member is claimed after a
 * failure, and every lower rank was claimed before), so the archive and
 * the result are the same whatever the number of threads.
 *
 * Clocks (see proto/clock.h and README "Clocks"): traces from several
 * hosts line up through OTF2 ClockOffset definitions, not by rewriting
 * timestamps. libweft measures its offset to weftd's CLOCK_MONOTONIC at
 * start and before Goodbye and sends it as ClockOffset records (offset in
 * ns), which go to the local definitions of the member's locations;
 * readers (otf2-print, the otf2 Python module) apply them, interpolating
 * linearly between them. The archive's timer resolution is the members'
 * common one; when members differ (WEFT_CLOCK=tsc calibrates a frequency
 * per process), or a member not counting ns has ClockOffsets, it is 1 ns
 * and the timestamps of the other members (event times, BufferFlush
 * stopTime, ClockOffset times, the Hello's clock_at_realtime) are scaled
 * to ns. ClockProperties' globalOffset and traceLength, and the catalog's
 * time range, are in corrected (offset-applied) time.
 *
 * libotf2 keeps up to 128 MiB of chunks per event writer by default; the
 * memory callbacks below bound that to POOL_PER_WRITER chunks per writer
 * and POOL_TOTAL overall (a writer may always have one), and give a
 * definition writer one chunk at a time, so it is written out when full.
 * The overall count is shared by the workers (a mutex).
 *
 * A full disk (issue #11). libotf2 3.0 buffers what it writes to a file
 * in a 4 MiB buffer (OTF2_FILE_BUFFER_SIZE, OTF2_File.c); when writing
 * that buffer out fails it frees the buffer but keeps the pointer, and
 * the next write or the close of the file copies into or out of freed
 * memory: weftd died in memcpy under OTF2_Archive_CloseEvtWriter. Chunk
 * sizes cannot work around it: readers size a buffer per location by
 * them (4 MiB event chunks made otf2-print need 12 GiB for a
 * 3000-location archive). So libotf2 never meets a full disk: before a
 * chunk is flushed (pre_flush) the archive's file system must have
 * MIN_FREE left, room for that chunk and for the file buffer the flush
 * may make libotf2 write out; else the conversion fails with "No space
 * left on device" and libotf2 writes nothing more. (Another process
 * filling the disk between two checks can still meet the bug.) libotf2
 * does not return every error (the close of a file ignores a failed
 * write of its last bytes), so its error callback records them in the
 * conversion of the calling thread (a thread-local pointer: the callback
 * is process-wide); any error fails the conversion. Once it failed, the
 * pre-flush callback tells libotf2 to write nothing more: closing the
 * writers only frees memory.
 */
#include "convert.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <otf2/otf2.h>
#include <otf2/OTF2_Pthread_Locks.h>

#include "clock.h"
#include "codec.h"
#include "journal.h"
#include "record.h"
#include "unify.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* libotf2's file buffer (OTF2_File.h): writes this big bypass it. */
#define OTF2_FILE_BUFFER (4u << 20)
#define EVT_CHUNK (1u << 20)       /* >= OTF2_CHUNK_SIZE_MIN (256 KiB) */
#define DEF_CHUNK OTF2_FILE_BUFFER
/* Free space an event flush needs: the file buffer it may write out and
 * the chunk. (Workers converting in parallel can pass the check at once;
 * a definition chunk of 4 MiB bypasses the buffer.) */
#define MIN_FREE (OTF2_FILE_BUFFER + EVT_CHUNK)
#define POOL_PER_WRITER 2          /* event chunks per writer */
#define POOL_TOTAL 16              /* event chunks over all writers */
#define DEFAULT_RESOLUTION 1000000000u
#define ARCHIVE_NAME "traces"
/* The attribute (UINT8 1) of the Leaves and Enters weftd writes so that
 * every location nests; defined only in archives that have some. */
#define NEST_ATTRIBUTE "weft::nesting"
#define NEST_ATTRIBUTE_DESC "written by weftd, not recorded: regions open " \
    "at a measurement gap or at the end of a location are left there " \
    "(and entered again after the gap)"

/* ---- region profile state (see the DESIGN comment) ---- */

#define NO_SLOT UINT32_MAX  /* pframe.slot of a region without a row */

typedef struct pframe {
    uint32_t region;     /* unified id */
    uint32_t slot;       /* its index in prof_loc.slots */
    uint64_t enter;      /* time of the Enter */
    uint64_t child;      /* ticks spent in direct children */
} pframe;

typedef struct pslot {
    uint32_t key;        /* region + 1; 0: empty */
    uint32_t open;       /* frames of this region on the stack */
    uint64_t visits, incl, excl;  /* incl and excl in ticks */
} pslot;

typedef struct prof_loc {
    pframe *stack;
    size_t depth, cap;
    pslot *slots;        /* power-of-two table, at most 3/4 full */
    size_t nslots, used;
} prof_loc;

typedef struct prof_sum {
    uint64_t visits, incl, excl;
} prof_sum;

typedef struct loc {
    uint32_t thread;
    prof_loc prof;      /* pass 2, while the member is replayed; its
                           stack is the regions open in the archive */
    uint64_t last_seq;  /* last batch seq seen in the current pass */
    uint64_t events;    /* written (with those nesting adds) */
    uint64_t journaled; /* events in its journal entries (pass 1) */
    uint64_t replayed;  /* of those, read back in pass 2 */
    int said_goodbye;   /* a Goodbye named it: sent and dropped hold */
    uint64_t sent;      /* from the last Goodbye */
    uint64_t dropped;   /* from the last Goodbye */
    uint64_t last_time; /* of the last event written */
    uint32_t *gap;      /* regions left at MeasurementOnOff OFF, outermost
                           first, entered again at ON (pass 2) */
    size_t ngap, gap_cap;
    int off;            /* between OFF and ON */
    OTF2_EvtWriter *w;  /* pass 2, while the member is replayed */
} loc;

typedef struct member {
    uint32_t rank;
    char *path;
    int has_hello;
    int has_goodbye;    /* its journal holds a Goodbye */
    uint32_t size;      /* trace size from Hello */
    char *hostname;
    uint64_t timer_resolution;
    uint64_t realtime_ns, clock_at_realtime;
    uint64_t defs_seq;  /* last definitions seq seen in the current pass */
    uint64_t good_end;  /* end of its journal's entries, from pass 1 */
    loc *locs;          /* sorted by thread */
    size_t nlocs, locs_cap;
    uint64_t node;      /* system tree node of its host, from pass 1 */
    weft_record *local_defs; /* WEFT_DF_LOCAL records (scalars only) */
    size_t nlocal, local_cap;
    int rescale;        /* its ticks are scaled to the trace's ns */
    weft_clock_point *offsets; /* its ClockOffsets by time (trace ticks) */
    size_t noffsets;
    /* Pass 2, set by the worker that replayed it: */
    weft_region_row *prows; /* its per-location profile rows (ticks) */
    size_t nprows;
    int rc;             /* 0, or why it failed with error (malloc'd) */
    char *error;
} member;

/* Event chunks held by all writers of the archive (memory callbacks),
 * and whether the conversion failed (flush callback: write no more). */
typedef struct chunk_budget {
    pthread_mutex_t lock;
    size_t chunks;
    int failed;          /* under lock */
} chunk_budget;

/* The state of one conversion. During pass 2 each worker has a copy
 * (worker_init): the members, unifier, archive and the figures of pass 1
 * are shared and read only (each member is touched by the one worker
 * that replays it); the fields marked "own" are the worker's. */
typedef struct conv {
    const weft_convert_input *in;
    weft_convert_result *out; /* own: a worker's error goes to its own */
    member *mems;       /* sorted by rank */
    size_t nmems;
    weft_unifier *u;
    weft_unify_scratch scratch; /* own */
    OTF2_Archive *archive;
    chunk_budget *pool; /* shared by the memory callbacks */
    uint64_t resolution;
    uint64_t tmin, tmax; /* own */
    int any_event;      /* own */
    uint64_t nodes;     /* system tree nodes: the root and one per host */
    OTF2_AttributeList *al; /* own; reused for every event with attributes */
    uint64_t *loc_refs; /* own; location ids referenced by records */
    size_t nloc_refs, loc_refs_cap;
    size_t nregions;    /* unified regions (known after pass 1) */
    prof_sum *psum;     /* own; by region id, over all locations */
    weft_region_row *prows; /* own; per-location rows, times in ticks */
    size_t nprows, prows_cap;
    uint64_t anomalies; /* own */
    uint64_t added;     /* own: Leaves and Enters written for nesting */
    OTF2_AttributeList *nest_al; /* own; marks those (NEST_ATTRIBUTE) */
    uint32_t nest_attr; /* global id of NEST_ATTRIBUTE (after pass 1) */
    uint64_t unmatched; /* own: Leaves of regions not open, not written */
} conv;

typedef struct chunk_pool {
    size_t n;
    void *chunk[POOL_PER_WRITER];
} chunk_pool;

static void budget_set_failed(chunk_budget *b)
{
    pthread_mutex_lock(&b->lock);
    b->failed = 1;
    pthread_mutex_unlock(&b->lock);
}

static int budget_failed(chunk_budget *b)
{
    int f;

    pthread_mutex_lock(&b->lock);
    f = b->failed;
    pthread_mutex_unlock(&b->lock);
    return f;
}

__attribute__((format(printf, 3, 4)))
static int fail(conv *c, int code, const char *fmt, ...)
{
    va_list ap;

    if (!c->out->error[0]) {
        va_start(ap, fmt);
        vsnprintf(c->out->error, sizeof c->out->error, fmt, ap);
        va_end(ap);
    }
    if (c->pool)
        budget_set_failed(c->pool);
    return code;
}

/* ---- libotf2's errors (see the DESIGN note) --------------------------- */

/* The conversion the calling thread works for, NULL outside one. */
static __thread conv *otf2_sink;

static OTF2_ErrorCode on_otf2_error(void *data, const char *file,
                                    uint64_t line, const char *function,
                                    OTF2_ErrorCode code, const char *fmt,
                                    va_list va)
{
    char msg[300];
    const char *desc = OTF2_Error_GetDescription(code);

    (void)data, (void)function;
    vsnprintf(msg, sizeof msg, fmt, va);
    if (!otf2_sink) {
        fprintf(stderr, "[OTF2] %s:%" PRIu64 ": error: %s: %s\n", file, line,
                desc ? desc : "?", msg);
        return code;
    }
    fail(otf2_sink, WEFT_EOTF2, "libotf2: %s: %s", desc ? desc : "error",
         msg);
    return code;
}

static pthread_once_t otf2_error_once = PTHREAD_ONCE_INIT;

static void install_otf2_error_callback(void)
{
    OTF2_Error_RegisterCallback(on_otf2_error, NULL);
}

static const char *otf2_msg(OTF2_ErrorCode rc)
{
    const char *s = OTF2_Error_GetDescription(rc);
    return s ? s : "unknown libotf2 error";
}

/* ---- dispatch generated from the record table ------------------------- */

/* OTF2 3.0 deprecates the Omp* events and Callsite definitions, but they
 * are records of the format and weft carries every record. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define WEFT_SCALAR(ctype, name, W, sel) , x->name
#define WEFT_ARRAY(ctype, name, count, W, sel) , x->name

static OTF2_ErrorCode write_event(OTF2_EvtWriter *w, OTF2_AttributeList *al,
                                  const weft_record *r)
{
    switch (r->type) {
#define WEFT_EVENT(id, Name, fields)                                         \
    case WEFT_REC_##Name: {                                                  \
        const weft_##Name *x = &r->u.Name;                                   \
        (void)x;                                                             \
        return OTF2_EvtWriter_##Name(w, al, r->time fields);                 \
    }
#include "weft_records.def"
    default:
        return OTF2_ERROR_INVALID_ARGUMENT;
    }
}

/* Global definitions; LOCAL ones go to write_local_def. */
static OTF2_ErrorCode write_def(OTF2_GlobalDefWriter *gw, const weft_record *r)
{
    switch (r->type) {
/* `fields` arrives expanded to ", x->a, x->b" (commas and all). */
#define WEFT__GLOBAL_DEF(Name, ...)                                          \
    case WEFT_REC_##Name: {                                                  \
        const weft_##Name *x = &r->u.Name;                                   \
        return OTF2_GlobalDefWriter_Write##Name(gw __VA_ARGS__);             \
    }
#define WEFT__DEF_CLIENT(Name, ...) WEFT__GLOBAL_DEF(Name, __VA_ARGS__)
#define WEFT__DEF_DAEMON(Name, ...) WEFT__GLOBAL_DEF(Name, __VA_ARGS__)
#define WEFT__DEF_LOCAL(Name, ...)
#define WEFT_DEF(id, Name, flags, fields) WEFT__DEF_##flags(Name, fields)
#include "weft_records.def"
#undef WEFT__DEF_CLIENT
#undef WEFT__DEF_DAEMON
#undef WEFT__DEF_LOCAL
    default:
        return OTF2_ERROR_INVALID_ARGUMENT;
    }
}

/* Definitions of one location (WEFT_DF_LOCAL). */
static OTF2_ErrorCode write_local_def(OTF2_DefWriter *dw, const weft_record *r)
{
    switch (r->type) {
#define WEFT__DEF_LOCAL(Name, ...)                                           \
    case WEFT_REC_##Name: {                                                  \
        const weft_##Name *x = &r->u.Name;                                   \
        return OTF2_DefWriter_Write##Name(dw __VA_ARGS__);                   \
    }
#define WEFT__DEF_CLIENT(Name, ...)
#define WEFT__DEF_DAEMON(Name, ...)
#define WEFT_DEF(id, Name, flags, fields) WEFT__DEF_##flags(Name, fields)
#include "weft_records.def"
#undef WEFT__DEF_CLIENT
#undef WEFT__DEF_DAEMON
#undef WEFT__DEF_LOCAL
    default:
        return OTF2_ERROR_INVALID_ARGUMENT;
    }
}

#pragma GCC diagnostic pop

#undef WEFT_SCALAR
#undef WEFT_ARRAY

/* Sets *out to al filled with the attributes of event r, or to NULL when
 * it has none. Returns what libotf2 says. */
static OTF2_ErrorCode attribute_list(OTF2_AttributeList *al,
                                     const weft_record *r,
                                     OTF2_AttributeList **out)
{
    const weft_AttributeList *a;
    OTF2_ErrorCode orc;

    *out = NULL;
    if (!r->attributes || !r->attributes->u.AttributeList.numberOfAttributes)
        return OTF2_SUCCESS;
    a = &r->attributes->u.AttributeList;
    orc = OTF2_AttributeList_RemoveAllAttributes(al);
    for (uint32_t i = 0; i < a->numberOfAttributes && orc == OTF2_SUCCESS; i++)
        orc = OTF2_AttributeList_AddAttribute(al, a->attributes[i],
                                              a->types[i], a->values[i]);
    if (orc == OTF2_SUCCESS)
        *out = al;
    return orc;
}

/* ---- libotf2 callbacks ------------------------------------------------ */

/* Nothing more is written once the conversion failed: closing writers
 * then only frees their memory (see the DESIGN note). */
static OTF2_FlushType pre_flush(void *data, OTF2_FileType type,
                                OTF2_LocationRef location, void *writer,
                                bool final)
{
    conv *c = otf2_sink;
    struct statvfs fs;

    (void)type, (void)location, (void)writer, (void)final;
    if (budget_failed(data))
        return OTF2_NO_FLUSH;
    if (c && statvfs(c->in->archive_dir, &fs) == 0 &&
        (uint64_t)fs.f_bavail * fs.f_frsize < MIN_FREE) {
        fail(c, WEFT_EIO, "%s: No space left on device (less than %u MiB "
             "free for the archive)", c->in->archive_dir, MIN_FREE >> 20);
        return OTF2_NO_FLUSH;
    }
    return OTF2_FLUSH;
}

/* No post-flush callback: it would insert BufferFlush events. */
static const OTF2_FlushCallbacks flush_callbacks = { pre_flush, NULL };

static void chunk_budget_put(chunk_budget *b, size_t n)
{
    pthread_mutex_lock(&b->lock);
    assert(b->chunks >= n);
    b->chunks -= n;
    pthread_mutex_unlock(&b->lock);
}

/* Called by the thread that uses the writer (any worker). */
static void *chunk_alloc(void *data, OTF2_FileType type,
                         OTF2_LocationRef location, void **per_buffer,
                         uint64_t size)
{
    chunk_budget *b = data;
    chunk_pool *p = *per_buffer;
    int events = type == OTF2_FILETYPE_EVENTS;
    void *chunk;

    (void)location;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            return NULL;
        *per_buffer = p;
    }
    /* NULL makes libotf2 write out this buffer's chunks and free them. */
    if (p->n >= (events ? POOL_PER_WRITER : 1))
        return NULL;
    if (events) {
        int full;
        pthread_mutex_lock(&b->lock);
        full = p->n > 0 && b->chunks >= POOL_TOTAL;
        if (!full)
            b->chunks++;
        pthread_mutex_unlock(&b->lock);
        if (full)
            return NULL;
    }
    chunk = malloc(size);
    if (!chunk) {
        if (events)
            chunk_budget_put(b, 1);
        return NULL;
    }
    p->chunk[p->n++] = chunk;
    return chunk;
}

static void chunk_free_all(void *data, OTF2_FileType type,
                           OTF2_LocationRef location, void **per_buffer,
                           bool final)
{
    chunk_budget *b = data;
    chunk_pool *p = *per_buffer;

    (void)location;
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->chunk[i]);
    if (type == OTF2_FILETYPE_EVENTS && p->n)
        chunk_budget_put(b, p->n);
    p->n = 0;
    if (final) {
        free(p);
        *per_buffer = NULL;
    }
}

static const OTF2_MemoryCallbacks memory_callbacks = { chunk_alloc,
                                                       chunk_free_all };

/* ---- members and locations -------------------------------------------- */

static int rank_cmp(const void *a, const void *b)
{
    const member *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int list_journals(conv *c)
{
    DIR *dir = NULL;
    struct dirent *de;
    size_t cap = 0;
    int rc = 0;

    dir = opendir(c->in->trace_dir);
    if (!dir)
        return fail(c, errno == ENOENT ? WEFT_ENOTFOUND : WEFT_EIO,
                    "%s: cannot open the trace directory: %s",
                    c->in->trace_dir, strerror(errno));
    while ((errno = 0, de = readdir(dir)) != NULL) {
        uint32_t rank = 0;
        int k = weft_journal_name_parse(de->d_name, &rank);
        member *m;
        if (k == 0)
            continue;
        if (k < 0) {
            rc = fail(c, WEFT_ECORRUPT, "%s/%s: not a valid journal name "
                      "(expected rank-<R>.wj)", c->in->trace_dir,
                      de->d_name);
            goto out;
        }
        if (c->nmems == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            member *p = realloc(c->mems, ncap * sizeof *p);
            if (!p) {
                rc = fail(c, WEFT_ENOMEM, "out of memory");
                goto out;
            }
            c->mems = p;
            cap = ncap;
        }
        m = &c->mems[c->nmems];
        memset(m, 0, sizeof *m);
        m->rank = rank;
        if (asprintf(&m->path, "%s/%s", c->in->trace_dir, de->d_name) < 0) {
            m->path = NULL;
            rc = fail(c, WEFT_ENOMEM, "out of memory");
            goto out;
        }
        c->nmems++;
    }
    if (errno) {
        rc = fail(c, WEFT_EIO, "%s: cannot read the trace directory: %s",
                  c->in->trace_dir, strerror(errno));
        goto out;
    }
    if (c->nmems)
        qsort(c->mems, c->nmems, sizeof *c->mems, rank_cmp);
out:
    closedir(dir);
    return rc;
}

/* The location of thread t of m, added (pass 1) if create is set. */
static loc *loc_get(member *m, uint32_t t, int create)
{
    size_t lo = 0, hi = m->nlocs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->locs[mid].thread == t)
            return &m->locs[mid];
        if (m->locs[mid].thread < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!create)
        return NULL;
    if (m->nlocs == m->locs_cap) {
        size_t ncap = m->locs_cap ? m->locs_cap * 2 : 8;
        loc *p = realloc(m->locs, ncap * sizeof *p);
        if (!p)
            return NULL;
        m->locs = p;
        m->locs_cap = ncap;
    }
    memmove(m->locs + lo + 1, m->locs + lo, (m->nlocs - lo) * sizeof *m->locs);
    memset(&m->locs[lo], 0, sizeof m->locs[lo]);
    m->locs[lo].thread = t;
    m->nlocs++;
    return &m->locs[lo];
}

static uint64_t loc_id(const member *m, const loc *l)
{
    return (uint64_t)m->rank << 32 | l->thread;
}

/* ---- pass 1 ----------------------------------------------------------- */

/* Gives m the system tree node of its host: hosts get nodes 1.. in rank
 * order of first appearance (members are read in rank order), the root
 * is 0. Tells the unifier what the member's system tree node references
 * mean: 0 the machine, 1 its host. */
static int place_host(conv *c, member *m)
{
    char msg[256];
    int rc;

    m->node = 0;
    for (member *k = c->mems; k < m; k++)
        if (k->has_hello && !strcmp(k->hostname, m->hostname)) {
            m->node = k->node;
            break;
        }
    if (!m->node)
        m->node = c->nodes++;
    rc = weft_unify_set_derived(c->u, m->rank, WEFT_REF_SYSTEM_TREE_NODE, 0, 0,
                                msg, sizeof msg);
    if (rc == 0)
        rc = weft_unify_set_derived(c->u, m->rank, WEFT_REF_SYSTEM_TREE_NODE,
                                    1, m->node, msg, sizeof msg);
    return rc < 0 ? fail(c, rc, "%s: %s", m->path, msg) : 0;
}

/* Location groups are numbered densely in rank order (readers refuse
 * gaps); clients name them by rank. */
static int number_location_groups(conv *c)
{
    char msg[256];

    for (size_t i = 0; i < c->nmems; i++) {
        int rc = weft_unify_set_derived(c->u, WEFT_UNIFY_ALL,
                                        WEFT_REF_LOCATION_GROUP,
                                        c->mems[i].rank, i, msg, sizeof msg);
        if (rc < 0)
            return fail(c, rc, "%s: %s", c->mems[i].path, msg);
    }
    return 0;
}

/* Keeps a location definition (ClockOffset) of m for its local files. */
static int keep_local_def(conv *c, member *m, const weft_record *r)
{
    if (m->nlocal == m->local_cap) {
        size_t cap = m->local_cap ? 2 * m->local_cap : 8;
        weft_record *p = realloc(m->local_defs, cap * sizeof *p);
        if (!p)
            return fail(c, WEFT_ENOMEM, "out of memory");
        m->local_defs = p;
        m->local_cap = cap;
    }
    m->local_defs[m->nlocal++] = *r;
    return 0;
}

/* Remembers the location ids that record r (global ids) refers to: they
 * must be locations of the archive even if nothing was recorded there. */
static int note_locations(conv *c, const weft_record *r)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    for (unsigned i = 0; d->names_location && i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        size_t n = f->wire == WEFT_WIRE_Z ? 0 : weft_field_nvalues(r, f);
        for (size_t k = 0; k < n; k++) {
            uint64_t v;
            if (f->is_self ||
                weft_field_kind(r, d, f, k) != WEFT_REF_LOCATION)
                continue;
            v = weft_field_value(r, f, k);
            if (v == OTF2_UNDEFINED_LOCATION)
                continue;
            if (c->nloc_refs == c->loc_refs_cap) {
                size_t cap = c->loc_refs_cap ? 2 * c->loc_refs_cap : 64;
                uint64_t *p = realloc(c->loc_refs, cap * sizeof *p);
                if (!p)
                    return fail(c, WEFT_ENOMEM, "out of memory");
                c->loc_refs = p;
                c->loc_refs_cap = cap;
            }
            c->loc_refs[c->nloc_refs++] = v;
        }
    }
    return r->attributes ? note_locations(c, r->attributes) : 0;
}

static int on_hello(conv *c, member *m, const weft_journal_entry *e,
                    uint64_t off)
{
    Weft__Hello *h = weft__hello__unpack(NULL, e->len, e->payload);
    uint32_t expect = c->in->members;
    int rc = 0;

    if (!h)
        return fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64
                    ": Hello does not unpack", m->path, off);
    if (!expect && c->nmems && c->mems[0].has_hello)
        expect = c->mems[0].size;
    if (h->rank != m->rank) {
        rc = fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64 ": Hello"
                  " of rank %" PRIu32 " in the journal of rank %" PRIu32,
                  m->path, off, h->rank, m->rank);
    } else if (expect && h->size != expect) {
        rc = fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64 ": Hello"
                  " says the trace has %" PRIu32 " members, expected %"
                  PRIu32, m->path, off, h->size, expect);
    } else if (h->rank >= h->size) {
        rc = fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64 ": rank "
                  "%" PRIu32 " outside a trace of %" PRIu32 " members",
                  m->path, off, h->rank, h->size);
    } else if (m->has_hello) {
        /* A reconnect repeats Hello; the first one stands. */
    } else {
        m->hostname = strdup(h->hostname && h->hostname[0] ? h->hostname
                                                           : "unknown host");
        if (!m->hostname) {
            rc = fail(c, WEFT_ENOMEM, "out of memory");
        } else {
            m->has_hello = 1;
            /* Every process has at least one thread: an archive without
             * locations is not valid OTF2, and a member that recorded
             * nothing is still a process of the trace. */
            if (!loc_get(m, 0, 1))
                rc = fail(c, WEFT_ENOMEM, "out of memory");
            m->size = h->size;
            m->timer_resolution = h->timer_resolution;
            m->realtime_ns = h->realtime_ns;
            m->clock_at_realtime = h->clock_at_realtime;
            if (rc == 0)
                rc = place_host(c, m);
        }
    }
    weft__hello__free_unpacked(h, NULL);
    return rc;
}

static int on_goodbye(conv *c, member *m, const weft_journal_entry *e,
                      uint64_t off)
{
    Weft__Goodbye *g = weft__goodbye__unpack(NULL, e->len, e->payload);
    int rc = 0;

    if (!g)
        return fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64
                    ": Goodbye does not unpack", m->path, off);
    m->has_goodbye = 1;
    for (size_t i = 0; i < g->n_locations; i++) {
        loc *l = loc_get(m, g->locations[i]->location, 1);
        if (!l) {
            rc = fail(c, WEFT_ENOMEM, "out of memory");
            break;
        }
        l->said_goodbye = 1;
        l->sent = g->locations[i]->events;
        l->dropped = g->locations[i]->dropped;
    }
    weft__goodbye__free_unpacked(g, NULL);
    return rc;
}

static int on_defs(conv *c, member *m, const weft_journal_entry *e,
                   uint64_t off)
{
    weft_decoder d;
    weft_record r;
    char msg[256];
    uint64_t n = 0;
    int rc;

    weft_decoder_init(&d, e->payload, e->len, 0, 0);
    while ((rc = weft_decoder_next(&d, &r)) == 1) {
        n++;
        if (weft_rec_desc_of(r.type)->flags & WEFT_DF_LOCAL) {
            if ((rc = keep_local_def(c, m, &r)) < 0)
                break;
            continue;
        }
        rc = weft_unify_add_def(c->u, m->rank, &r, msg, sizeof msg);
        if (rc < 0) {
            fail(c, rc, "%s: entry at offset %" PRIu64 " (definitions seq %"
                 PRIu64 "), record %" PRIu64 ": %s", m->path, off, e->seq, n,
                 msg);
            break;
        }
    }
    if (rc < 0 && !c->out->error[0])
        fail(c, rc, "%s: entry at offset %" PRIu64 " (definitions seq %"
             PRIu64 "), record %" PRIu64 ": %s", m->path, off, e->seq, n + 1,
             d.error);
    weft_decoder_free(&d);
    return rc < 0 ? rc : 0;
}

/* ---- region profile (pass 2) ------------------------------------------ */

static pslot *prof_slot(prof_loc *p, uint32_t region)
{
    size_t mask = p->nslots - 1, i = (region * 2654435761u) & mask;

    while (p->slots[i].key && p->slots[i].key != region + 1)
        i = (i + 1) & mask;
    return &p->slots[i];
}

/* The slot of region, added when new; NULL when out of memory. Growing
 * the table moves slots: the open frames learn their new place. */
static pslot *prof_get(prof_loc *p, uint32_t region)
{
    pslot *sl;

    if ((p->used + 1) * 4 > p->nslots * 3) {
        size_t n = p->nslots ? p->nslots * 2 : 16;
        prof_loc q = *p;
        q.slots = calloc(n, sizeof *q.slots);
        if (!q.slots)
            return NULL;
        q.nslots = n;
        for (size_t i = 0; i < p->nslots; i++)
            if (p->slots[i].key)
                *prof_slot(&q, p->slots[i].key - 1) = p->slots[i];
        for (size_t i = 0; i < q.depth; i++)
            if (q.stack[i].slot != NO_SLOT)
                q.stack[i].slot =
                    (uint32_t)(prof_slot(&q, q.stack[i].region) - q.slots);
        free(p->slots);
        *p = q;
    }
    sl = prof_slot(p, region);
    if (!sl->key) {
        sl->key = region + 1;
        p->used++;
    }
    return sl;
}

/* Closes the innermost open frame at time t. */
static void prof_pop(prof_loc *p, uint64_t t)
{
    pframe f = p->stack[--p->depth];
    uint64_t dur = t - f.enter;
    pslot *sl;

    if (f.slot != NO_SLOT) {
        sl = &p->slots[f.slot];
        sl->excl += dur > f.child ? dur - f.child : 0;
        if (--sl->open == 0)
            sl->incl += dur;
    }
    if (p->depth)
        p->stack[p->depth - 1].child += dur;
}

/* Opens a frame of region at t. A region outside the profile
 * (OTF2_UNDEFINED_REGION) has a frame for the nesting, no row. */
static int prof_enter(conv *c, loc *l, uint32_t region, uint64_t t)
{
    prof_loc *p = &l->prof;
    pslot *sl;

    if (p->depth == p->cap) {
        size_t n = p->cap ? p->cap * 2 : 16;
        pframe *v = realloc(p->stack, n * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        p->stack = v;
        p->cap = n;
    }
    if (region >= c->nregions) {
        p->stack[p->depth++] = (pframe){ region, NO_SLOT, t, 0 };
        return 0;
    }
    if (!(sl = prof_get(p, region)))
        return WEFT_ENOMEM;
    sl->visits++;
    sl->open++;
    p->stack[p->depth++] =
        (pframe){ region, (uint32_t)(sl - p->slots), t, 0 };
    return 0;
}


/* The name of unified region id, "" if it has none. Owned by the
 * unifier. */
static const char *region_name(const conv *c, uint32_t id)
{
    const weft_record *r = weft_unify_get(c->u, WEFT_REC_Region, id);
    const weft_record *s;

    if (!r || r->u.Region.self != id)
        return "";
    s = weft_unify_get(c->u, WEFT_REC_String, r->u.Region.name);
    if (!s || s->u.String.self != r->u.Region.name || !s->u.String.string)
        return "";
    return s->u.String.string;
}

static int cmp_slot_excl(const void *a, const void *b)
{
    const pslot *x = a, *y = b;

    if (x->excl != y->excl)
        return x->excl < y->excl ? 1 : -1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Adds a row (times in ticks until fill_result) to c->prows. */
static int prof_row(conv *c, int64_t location, uint32_t region,
                    uint64_t visits, uint64_t incl, uint64_t excl)
{
    weft_region_row *row;

    if (c->nprows == c->prows_cap) {
        size_t n = c->prows_cap ? c->prows_cap * 2 : 64;
        weft_region_row *v = realloc(c->prows, n * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        c->prows = v;
        c->prows_cap = n;
    }
    row = &c->prows[c->nprows];
    memset(row, 0, sizeof *row);
    row->location = location;
    row->visits = visits;
    row->incl_s = (double)incl;
    row->excl_s = (double)excl;
    if (!(row->region = strdup(region_name(c, region))))
        return WEFT_ENOMEM;
    c->nprows++;
    return 0;
}

static void prof_loc_free(prof_loc *p)
{
    free(p->stack);
    free(p->slots);
    memset(p, 0, sizeof *p);
}

/* A location is done: closes what is still open at its last event's
 * time, adds it to the sums, keeps its top rows, frees its tables. */
static int prof_finish_loc(conv *c, const member *m, loc *l)
{
    prof_loc *p = &l->prof;
    size_t k = 0, keep;
    int rc = 0;

    while (p->depth)
        prof_pop(p, l->last_time);
    for (size_t i = 0; i < p->nslots; i++) {
        pslot *sl = &p->slots[i];
        if (!sl->key)
            continue;
        c->psum[sl->key - 1].visits += sl->visits;
        c->psum[sl->key - 1].incl += sl->incl;
        c->psum[sl->key - 1].excl += sl->excl;
        p->slots[k++] = *sl;  /* compact in place for sorting */
    }
    if (k)
        qsort(p->slots, k, sizeof *p->slots, cmp_slot_excl);
    keep = WEFT_PROFILE_ROWS_PER_LOCATION;
    for (size_t i = 0; i < k && i < keep && rc == 0; i++)
        rc = prof_row(c, (int64_t)loc_id(m, l), p->slots[i].key - 1,
                      p->slots[i].visits, p->slots[i].incl,
                      p->slots[i].excl);
    prof_loc_free(p);
    return rc < 0 ? fail(c, rc, "out of memory") : 0;
}

/* The profile rows of the result: the sums over all locations (regions
 * by id) then the per-location rows, in seconds. */
static int prof_result(conv *c)
{
    weft_convert_result *out = c->out;
    double res = (double)c->resolution;
    size_t first = c->nprows;

    for (size_t r = 0; r < c->nregions; r++)
        if (c->psum[r].visits &&
            prof_row(c, WEFT_PROFILE_ALL, (uint32_t)r, c->psum[r].visits,
                     c->psum[r].incl, c->psum[r].excl) < 0)
            return fail(c, WEFT_ENOMEM, "out of memory");
    out->profile_anomalies = c->anomalies;
    out->nesting_added = c->added;
    out->nesting_unmatched = c->unmatched;
    if (c->nprows == 0)
        return 0;
    out->regions = malloc(c->nprows * sizeof *out->regions);
    if (!out->regions)
        return fail(c, WEFT_ENOMEM, "out of memory");
    memcpy(out->regions, c->prows + first,
           (c->nprows - first) * sizeof *out->regions);
    memcpy(out->regions + (c->nprows - first), c->prows,
           first * sizeof *out->regions);
    out->nregions = c->nprows;
    for (size_t i = 0; i < out->nregions; i++) {
        out->regions[i].incl_s /= res;
        out->regions[i].excl_s /= res;
    }
    free(c->prows);
    c->prows = NULL;
    c->nprows = c->prows_cap = 0;
    return 0;
}

/* ---- clocks ------------------------------------------------------------ */

/* m's time t (trace ticks) on weftd's clock: t plus m's ClockOffset at t,
 * as readers apply it; 0 when that would be negative. */
static uint64_t corrected(const member *m, uint64_t t)
{
    int64_t off = weft_clock_offset_at(m->offsets, m->noffsets, t);

    if (off < 0 && (uint64_t)-off > t)
        return 0;
    return t + (uint64_t)off;
}

/* Widens the trace's time range by m's event at t. */
static void note_time(conv *c, const member *m, uint64_t t)
{
    uint64_t lo = t, hi = t;

    if (m->noffsets) {
        /* A ns of margin: readers may round the interpolated offset the
         * other way. */
        lo = hi = corrected(m, t);
        lo -= lo > 0;
        hi += hi < UINT64_MAX - 1;
    }
    if (!c->any_event || lo < c->tmin)
        c->tmin = lo;
    if (!c->any_event || hi > c->tmax)
        c->tmax = hi;
    c->any_event = 1;
}

/* Scales the timestamps of event r of m from its ticks to ns. */
static void rescale_event(const member *m, weft_record *r)
{
    r->time = weft_clock_ticks_to_ns(r->time, m->timer_resolution);
    if (r->type == WEFT_REC_BufferFlush)
        r->u.BufferFlush.stopTime = weft_clock_ticks_to_ns(
            r->u.BufferFlush.stopTime, m->timer_resolution);
}

/* Orders m's ClockOffsets by time (readers interpolate between
 * neighbours; a member's own records come in time order, but a process
 * may add some of its own), scales their times when m is rescaled, and
 * keeps the (time, offset) points for corrected(). */
static int prepare_offsets(conv *c, member *m)
{
    size_t n = 0;

    for (size_t i = 1; i < m->nlocal; i++) {
        weft_record r = m->local_defs[i];
        size_t k = i;
        if (r.type != WEFT_REC_ClockOffset)
            continue;
        while (k > 0 && m->local_defs[k - 1].type == WEFT_REC_ClockOffset &&
               m->local_defs[k - 1].u.ClockOffset.time >
                   r.u.ClockOffset.time) {
            m->local_defs[k] = m->local_defs[k - 1];
            k--;
        }
        m->local_defs[k] = r;
    }
    for (size_t i = 0; i < m->nlocal; i++) {
        weft_record *r = &m->local_defs[i];
        if (r->type != WEFT_REC_ClockOffset)
            continue;
        if (m->rescale)
            r->u.ClockOffset.time = weft_clock_ticks_to_ns(
                r->u.ClockOffset.time, m->timer_resolution);
        n++;
    }
    if (!n)
        return 0;
    m->offsets = calloc(n, sizeof *m->offsets);
    if (!m->offsets)
        return fail(c, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->nlocal; i++) {
        const weft_record *r = &m->local_defs[i];
        if (r->type != WEFT_REC_ClockOffset)
            continue;
        m->offsets[m->noffsets].time = r->u.ClockOffset.time;
        m->offsets[m->noffsets].offset = r->u.ClockOffset.offset;
        m->noffsets++;
    }
    return 0;
}

/* ---- pass 2 ----------------------------------------------------------- */

/* Counts an event at time t written to location l of m. Without
 * ClockOffsets a location's times only grow: its first event widens the
 * time range here, its last when its writer is closed. */
static void wrote(conv *c, const member *m, loc *l, uint64_t t)
{
    if (m->noffsets || !l->events)
        note_time(c, m, t);
    l->events++;
    l->last_time = t;
}

/* ---- nesting (issue #11) ----------------------------------------------
 * Every location of the archive nests: each Leave closes the innermost
 * open region. l->prof.stack is what is open, and these functions are the
 * only writers of Enter and Leave:
 *   - a Leave of a region open further down first leaves the regions
 *     above it, at its time; a Leave of a region that is not open is not
 *     written (a lost Enter: records dropped in a gap, or a client bug);
 *   - MeasurementOnOff OFF leaves every open region at its time (after
 *     them the OFF), and the next ON enters them again at its time (after
 *     it), outermost first: a reader sees no time in regions during a gap
 *     (Enters and Leaves lost in the gap are not guessed at);
 *   - regions still open at a location's end are left at its last
 *     event's time (a process killed mid-run).
 * The profile sees exactly what is written, so `weft profile` equals what
 * any reader computes from the archive. */

/* The attribute list of an event nesting adds (libotf2 empties it once
 * the event is written), NULL when out of memory. */
static OTF2_AttributeList *nest_mark(conv *c)
{
    if (OTF2_AttributeList_RemoveAllAttributes(c->nest_al) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddUint8(c->nest_al, c->nest_attr, 1) !=
            OTF2_SUCCESS)
        return NULL;
    return c->nest_al;
}

/* Writes an Enter of region at t on l: the journal's record r with
 * attributes al, or without r one of its own (`added` says nesting added
 * it). */
static int nest_enter(conv *c, member *m, loc *l, uint32_t region, uint64_t t,
                      OTF2_AttributeList *al, const weft_record *r,
                      int added)
{
    OTF2_ErrorCode orc;
    int rc;

    if (added && !(al = nest_mark(c)))
        return fail(c, WEFT_ENOMEM, "out of memory");
    orc = r ? write_event(l->w, al, r)
            : OTF2_EvtWriter_Enter(l->w, al, t, region);

    if (orc != OTF2_SUCCESS)
        return fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": libotf2 refused "
                    "an Enter at %" PRIu64 ": %s", m->path, l->thread, t,
                    otf2_msg(orc));
    if ((rc = prof_enter(c, l, region, t)) < 0)
        return fail(c, rc, "out of memory");
    wrote(c, m, l, t);
    c->added += added != 0;
    return 0;
}

/* Writes a Leave of the innermost open region at t: the journal's record
 * r with attributes al, or without r one of its own (`added` says nesting
 * added it). */
static int nest_leave_top(conv *c, member *m, loc *l, uint64_t t,
                          OTF2_AttributeList *al, const weft_record *r,
                          int added)
{
    uint32_t region = l->prof.stack[l->prof.depth - 1].region;
    OTF2_ErrorCode orc;

    if (added && !(al = nest_mark(c)))
        return fail(c, WEFT_ENOMEM, "out of memory");
    orc = r ? write_event(l->w, al, r)
            : OTF2_EvtWriter_Leave(l->w, al, t, region);

    if (orc != OTF2_SUCCESS)
        return fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": libotf2 refused "
                    "a Leave at %" PRIu64 ": %s", m->path, l->thread, t,
                    otf2_msg(orc));
    prof_pop(&l->prof, t);
    wrote(c, m, l, t);
    c->added += added != 0;
    return 0;
}

/* A Leave of region at t (r: its record with attributes al, or NULL). */
static int nest_leave(conv *c, member *m, loc *l, uint32_t region, uint64_t t,
                      OTF2_AttributeList *al, const weft_record *r)
{
    prof_loc *p = &l->prof;
    size_t i = p->depth;
    int rc;

    while (i > 0 && p->stack[i - 1].region != region)
        i--;
    if (i == 0 || i != p->depth)
        c->anomalies++;
    if (i == 0) {
        c->unmatched++;
        return 0;
    }
    while (p->depth > i)
        if ((rc = nest_leave_top(c, m, l, t, NULL, NULL, 1)) < 0)
            return rc;
    return nest_leave_top(c, m, l, t, al, r, 0);
}

/* MeasurementOnOff r (attributes al): see the nesting note. */
static int nest_onoff(conv *c, member *m, loc *l, OTF2_AttributeList *al,
                      const weft_record *r)
{
    OTF2_ErrorCode orc;
    prof_loc *p = &l->prof;
    int on = r->u.MeasurementOnOff.measurementMode == OTF2_MEASUREMENT_ON;
    int rc;

    if (!on) {
        /* A second OFF: what was entered since the first one is open
         * inside what the first one left. */
        if (!l->off)
            l->ngap = 0;
        if (l->ngap + p->depth > l->gap_cap) {
            size_t n = l->ngap + p->depth;
            uint32_t *v = realloc(l->gap, n * sizeof *v);
            if (!v)
                return fail(c, WEFT_ENOMEM, "out of memory");
            l->gap = v;
            l->gap_cap = n;
        }
        for (size_t i = 0; i < p->depth; i++)
            l->gap[l->ngap + i] = p->stack[i].region;
        l->ngap += p->depth;
        l->off = 1;
        while (p->depth)
            if ((rc = nest_leave_top(c, m, l, r->time, NULL, NULL, 1)) < 0)
                return rc;
    }
    orc = write_event(l->w, al, r);
    if (orc != OTF2_SUCCESS)
        return fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": libotf2 refused "
                    "a MeasurementOnOff at %" PRIu64 ": %s", m->path,
                    l->thread, r->time, otf2_msg(orc));
    wrote(c, m, l, r->time);
    if (on && l->off) {
        l->off = 0;
        for (size_t i = 0; i < l->ngap; i++)
            if ((rc = nest_enter(c, m, l, l->gap[i], r->time, NULL, NULL,
                                 1)) < 0)
                return rc;
        l->ngap = 0;
    }
    return 0;
}

/* m's journal is done: leaves what is still open on its locations. */
static int nest_finish(conv *c, member *m)
{
    for (size_t i = 0; i < m->nlocs; i++) {
        loc *l = &m->locs[i];
        int rc;
        while (l->w && l->prof.depth)
            if ((rc = nest_leave_top(c, m, l, l->last_time, NULL, NULL,
                                     1)) < 0)
                return rc;
    }
    return 0;
}

static int on_events(conv *c, member *m, loc *l, const weft_journal_entry *e,
                     uint64_t off)
{
    weft_decoder d;
    weft_record r;
    OTF2_AttributeList *al;
    OTF2_ErrorCode orc;
    const uint32_t *table;
    size_t ntable = 0;
    char msg[256];
    uint64_t n = 0;
    int rc;

#define WHERE "%s: entry at offset %" PRIu64 " (thread %" PRIu32 " seq %"    \
              PRIu64 "), event %" PRIu64
#define WHERE_ARGS m->path, off, l->thread, e->seq, n
    weft_decoder_init(&d, e->payload, e->len, 1, e->base_time);
    /* Members that count ns have nothing to rescale: their Enter and
     * Leave take the short way. */
    table = m->rescale ? NULL : weft_unify_id_table(c->u, m->rank,
                                                    WEFT_REF_REGION, &ntable);
    for (;;) {
        weft_el_run run = weft_el_begin(&d), at = run;
        uint32_t type, region;
        while (table && weft_el_next(&run, &type, &region)) {
            uint32_t g = region < ntable ? table[region] : 0;
            if ((!g && region != OTF2_UNDEFINED_REGION) ||
                (l->events && run.time < l->last_time)) {
                run = at;  /* unread: the general way says what is wrong */
                break;
            }
            n++;
            region = g ? g - 1u : region;
            rc = type == WEFT_REC_Enter
                     ? nest_enter(c, m, l, region, run.time, NULL, NULL, 0)
                     : nest_leave(c, m, l, region, run.time, NULL, NULL);
            if (rc < 0)
                goto out;
            at = run;
        }
        weft_el_end(&run, &d);
        if ((rc = weft_decoder_next(&d, &r)) != 1)
            break;
        n++;
        if (m->rescale)
            rescale_event(m, &r);
        rc = weft_unify_map_event(c->u, m->rank, &r, &c->scratch, msg,
                                  sizeof msg);
        if (rc < 0) {
            fail(c, rc, WHERE ": %s", WHERE_ARGS, msg);
            goto out;
        }
        if (l->events && r.time < l->last_time) {
            rc = fail(c, WEFT_ETIME, WHERE ": time %" PRIu64 " is before the "
                      "previous event of this location (%" PRIu64 ")",
                      WHERE_ARGS, r.time, l->last_time);
            goto out;
        }
        if ((rc = note_locations(c, &r)) < 0)
            goto out;
        orc = attribute_list(c->al, &r, &al);
        if (orc != OTF2_SUCCESS) {
            rc = fail(c, WEFT_EOTF2, WHERE ": libotf2 refused it: %s",
                      WHERE_ARGS, otf2_msg(orc));
            goto out;
        }
        switch (r.type) {
        case WEFT_REC_Enter:
            rc = nest_enter(c, m, l, r.u.Enter.region, r.time, al, &r, 0);
            break;
        case WEFT_REC_Leave:
            rc = nest_leave(c, m, l, r.u.Leave.region, r.time, al, &r);
            break;
        case WEFT_REC_MeasurementOnOff:
            rc = nest_onoff(c, m, l, al, &r);
            break;
        default:
            orc = write_event(l->w, al, &r);
            if (orc != OTF2_SUCCESS)
                rc = fail(c, WEFT_EOTF2, WHERE ": libotf2 refused it: %s",
                          WHERE_ARGS, otf2_msg(orc));
            else
                wrote(c, m, l, r.time);
            break;
        }
        if (rc < 0)
            goto out;
    }
    if (rc < 0) {
        n++;
        fail(c, rc, WHERE ": %s", WHERE_ARGS, d.error);
        goto out;
    }
    if (n != e->count)
        rc = fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64 " (thread"
                  " %" PRIu32 " seq %" PRIu64 ") announces %" PRIu32
                  " events but holds %" PRIu64, m->path, off, l->thread,
                  e->seq, e->count, n);
    else
        l->replayed += n;
#undef WHERE
#undef WHERE_ARGS
out:
    weft_decoder_free(&d);
    return rc < 0 ? rc : 0;
}

static int open_writers(conv *c, member *m)
{
    for (size_t i = 0; i < m->nlocs; i++) {
        loc *l = &m->locs[i];
        l->w = OTF2_Archive_GetEvtWriter(c->archive, loc_id(m, l));
        if (!l->w)
            return fail(c, WEFT_EOTF2, "%s: libotf2 gives no event writer "
                        "for thread %" PRIu32, m->path, l->thread);
    }
    return 0;
}

static int close_writers(conv *c, member *m)
{
    int rc = 0;

    for (size_t i = 0; i < m->nlocs; i++) {
        loc *l = &m->locs[i];
        uint64_t n = 0;
        OTF2_ErrorCode orc;
        if (!l->w)
            continue;
        if (l->events && !m->noffsets)
            note_time(c, m, l->last_time);  /* see wrote() */
        orc = OTF2_EvtWriter_GetNumberOfEvents(l->w, &n);
        if (orc == OTF2_SUCCESS && n != l->events)
            rc = fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": libotf2 "
                      "counted %" PRIu64 " events, weft wrote %" PRIu64,
                      m->path, l->thread, n, l->events);
        if (orc == OTF2_SUCCESS)
            orc = OTF2_Archive_CloseEvtWriter(c->archive, l->w);
        l->w = NULL;
        if (orc != OTF2_SUCCESS)
            rc = fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": closing its "
                      "events failed: %s", m->path, l->thread,
                      otf2_msg(orc));
    }
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static member *member_of_rank(conv *c, uint32_t rank)
{
    size_t lo = 0, hi = c->nmems;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->mems[mid].rank == rank)
            return &c->mems[mid];
        if (c->mems[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Locations that records name but where nothing was recorded become
 * locations without events (an empty event file each), so that readers
 * resolve every reference. A location of a process without a journal
 * cannot be made: that is an error. */
static int add_referenced_locations(conv *c)
{
    if (c->nloc_refs)
        qsort(c->loc_refs, c->nloc_refs, sizeof *c->loc_refs, cmp_u64);
    for (size_t i = 0; i < c->nloc_refs; i++) {
        uint64_t id = c->loc_refs[i];
        member *m = member_of_rank(c, (uint32_t)(id >> 32));
        loc *l;
        if (i && id == c->loc_refs[i - 1])
            continue;
        if (!m)
            return fail(c, WEFT_EREF, "a record refers to location %" PRIu64
                        " (rank %" PRIu64 ", thread %" PRIu64 "), but rank %"
                        PRIu64 " sent nothing", id, id >> 32,
                        id & 0xffffffffu, id >> 32);
        if (loc_get(m, (uint32_t)id, 0))
            continue;
        if (!(l = loc_get(m, (uint32_t)id, 1)))
            return fail(c, WEFT_ENOMEM, "out of memory");
        l->w = OTF2_Archive_GetEvtWriter(c->archive, id);
        if (!l->w)
            return fail(c, WEFT_EOTF2, "%s: libotf2 gives no event writer "
                        "for thread %" PRIu32, m->path, (uint32_t)id);
        if (close_writers(c, m) < 0)
            return WEFT_EOTF2;
    }
    return 0;
}

/* ---- reading a journal ------------------------------------------------ */

/* Fails for the entry of m's journal at off that cannot be read, up to
 * end. */
static int torn(conv *c, const member *m, uint64_t off, uint64_t end)
{
    return fail(c, WEFT_ECORRUPT, "%s: torn or corrupt entry at offset %"
                PRIu64 " (bad length, checksum or end of file); %" PRIu64
                " bytes from there cannot be read", m->path, off, end - off);
}

/* Reads m's journal; pass 1 gathers, pass 2 replays events. */
static int read_member(conv *c, member *m, int pass)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    struct stat st;
    uint64_t off = 0;
    int rc;

    m->defs_seq = 0;
    for (size_t i = 0; i < m->nlocs; i++)
        m->locs[i].last_seq = 0;
    rc = weft_journal_reader_open(m->path, &r);
    if (rc < 0) {
        fail(c, rc, "%s: cannot read the journal: %s", m->path,
             rc == WEFT_ECORRUPT ? "not a weft journal (bad magic)"
                                 : weft_strerror(rc));
        goto out;
    }
    /* Pass 1 steps over the events: pass 2 reads and checks them. */
    if (pass == 1)
        weft_journal_reader_skip(r, WEFT_JE_EVENTS);
    for (;;) {
        loc *l;
        off = weft_journal_reader_offset(r);
        rc = weft_journal_reader_next(r, &e);
        if (rc < 0) {
            fail(c, rc, "%s: reading the entry at offset %" PRIu64 ": %s",
                 m->path, off, weft_strerror(rc));
            goto out;
        }
        if (rc == 0)
            break;
        switch (e.kind) {
        case WEFT_JE_HELLO:
            if (pass == 1)
                rc = on_hello(c, m, &e, off);
            break;
        case WEFT_JE_DEFS:
            if (e.seq <= m->defs_seq)
                break;
            m->defs_seq = e.seq;
            if (pass == 1)
                rc = on_defs(c, m, &e, off);
            break;
        case WEFT_JE_EVENTS:
            l = loc_get(m, e.location, pass == 1);
            if (!l) {
                rc = fail(c, pass == 1 ? WEFT_ENOMEM : WEFT_ESTATE,
                          "%s: entry at offset %" PRIu64 ": thread %" PRIu32
                          ": %s", m->path, off, e.location,
                          pass == 1 ? "out of memory" : "unknown location");
                break;
            }
            if (e.seq <= l->last_seq)
                break;
            l->last_seq = e.seq;
            if (pass == 1)
                l->journaled += e.count;
            else
                rc = on_events(c, m, l, &e, off);
            break;
        case WEFT_JE_GOODBYE:
            if (pass == 1)
                rc = on_goodbye(c, m, &e, off);
            break;
        default:
            rc = fail(c, WEFT_ECORRUPT, "%s: entry at offset %" PRIu64
                      " has unknown kind %u", m->path, off, e.kind);
            break;
        }
        if (rc < 0)
            goto out;
    }
    rc = 0;
    off = weft_journal_reader_offset(r);
    if (pass == 1) {
        m->good_end = off;
        if (stat(m->path, &st) < 0) {
            rc = fail(c, WEFT_EIO, "%s: %s", m->path, strerror(errno));
        } else if ((uint64_t)st.st_size > off) {
            rc = torn(c, m, off, (uint64_t)st.st_size);
        } else if (!m->has_hello) {
            rc = fail(c, WEFT_ECORRUPT, "%s: no Hello entry", m->path);
        }
    } else if (off < m->good_end) {
        rc = torn(c, m, off, m->good_end);  /* a bad checksum of events */
    }
out:
    weft_journal_reader_close(r);
    return rc;
}

/* ---- the archive ------------------------------------------------------ */

/* fsync(2)s path, and with `deep` everything below it first when it is a
 * directory. 0, or -errno with *bad (malloc'd) naming what failed. */
static int sync_tree(const char *path, int deep, char **bad)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    int rc = 0;

    if (fd < 0 || fstat(fd, &st) < 0) {
        rc = -errno;
        goto out;
    }
    if (deep && S_ISDIR(st.st_mode)) {
        int dfd = dup(fd);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        struct dirent *de;
        if (!d) {
            rc = -errno;
            if (dfd >= 0)
                close(dfd);
            goto out;
        }
        while (rc == 0 && (de = readdir(d)) != NULL) {
            char sub[4096];
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) >=
                sizeof sub) {
                rc = -ENAMETOOLONG;
                *bad = strdup(sub);
                break;
            }
            rc = sync_tree(sub, 1, bad);
        }
        closedir(d);
        if (rc < 0)
            goto out;
    }
    if (fsync(fd) < 0)
        rc = -errno;
out:
    if (rc < 0 && !*bad)
        *bad = strdup(path);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* With in->sync: the archive on stable storage, and its entry in the
 * directory above. */
static int sync_archive(conv *c)
{
    char parent[4096], *slash, *bad = NULL;
    int rc;

    if (!c->in->sync)
        return 0;
    rc = sync_tree(c->in->archive_dir, 1, &bad);
    if (rc == 0) {
        snprintf(parent, sizeof parent, "%s", c->in->archive_dir);
        slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = 0;
            rc = sync_tree(parent, 0, &bad);
        }
    }
    if (rc < 0)
        fail(c, WEFT_EIO, "%s: cannot sync it to disk: %s",
             bad ? bad : c->in->archive_dir, strerror(-rc));
    free(bad);
    return rc < 0 ? WEFT_EIO : 0;
}

/* Removes what an earlier attempt may have left in the archive dir. */
static void clean_archive(const char *dir)
{
    char path[4096];
    DIR *d;
    struct dirent *de;

    snprintf(path, sizeof path, "%s/" ARCHIVE_NAME ".otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/" ARCHIVE_NAME ".def", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/" ARCHIVE_NAME, dir);
    d = opendir(path);
    if (!d)
        return;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n > 4 && (strcmp(de->d_name + n - 4, ".evt") == 0 ||
                      strcmp(de->d_name + n - 4, ".def") == 0))
            unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
    rmdir(path);
}

static uint64_t dir_bytes(int dfd)
{
    DIR *d = fdopendir(dfd);
    struct dirent *de;
    uint64_t sum = 0;

    if (!d) {
        close(dfd);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISREG(st.st_mode)) {
            sum += (uint64_t)st.st_size;
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd(d), de->d_name,
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (sub >= 0)
                sum += dir_bytes(sub);
        }
    }
    closedir(d);
    return sum;
}

static int open_archive(conv *c)
{
    OTF2_ErrorCode orc;

    clean_archive(c->in->archive_dir);
    c->archive = OTF2_Archive_Open(c->in->archive_dir, ARCHIVE_NAME,
                                   OTF2_FILEMODE_WRITE, EVT_CHUNK, DEF_CHUNK,
                                   OTF2_SUBSTRATE_POSIX,
                                   OTF2_COMPRESSION_NONE);
    if (!c->archive)
        return fail(c, WEFT_EOTF2, "%s: libotf2 cannot create the archive",
                    c->in->archive_dir);
    orc = OTF2_Archive_SetFlushCallbacks(c->archive, &flush_callbacks,
                                         c->pool);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetMemoryCallbacks(c->archive, &memory_callbacks,
                                              c->pool);
    /* Workers get and close event writers of one archive at once. */
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Pthread_Archive_SetLockingCallbacks(c->archive, NULL);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetSerialCollectiveCallbacks(c->archive);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetCreator(c->archive, "weft " PACKAGE_VERSION);
    if (orc == OTF2_SUCCESS && c->in->trace_name)
        orc = OTF2_Archive_SetDescription(c->archive, c->in->trace_name);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_OpenEvtFiles(c->archive);
    if (orc != OTF2_SUCCESS)
        return fail(c, WEFT_EOTF2, "%s: setting up the archive: %s",
                    c->in->archive_dir, otf2_msg(orc));
    return 0;
}

static int write_local_defs(conv *c)
{
    OTF2_ErrorCode orc = OTF2_Archive_OpenDefFiles(c->archive);

    for (size_t i = 0; i < c->nmems && orc == OTF2_SUCCESS; i++) {
        member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs && orc == OTF2_SUCCESS; k++) {
            OTF2_DefWriter *dw =
                OTF2_Archive_GetDefWriter(c->archive, loc_id(m, &m->locs[k]));
            if (!dw) {
                orc = OTF2_ERROR_MEM_ALLOC_FAILED;
                break;
            }
            /* A process's clock offsets apply to each of its locations. */
            for (size_t j = 0; j < m->nlocal && orc == OTF2_SUCCESS; j++)
                orc = write_local_def(dw, &m->local_defs[j]);
            if (orc == OTF2_SUCCESS)
                orc = OTF2_Archive_CloseDefWriter(c->archive, dw);
        }
    }
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_CloseDefFiles(c->archive);
    if (orc != OTF2_SUCCESS)
        return fail(c, WEFT_EOTF2, "%s: writing the local definitions: %s",
                    c->in->archive_dir, otf2_msg(orc));
    return 0;
}

/* Global id of string s (added to the unifier if new). */
static int string_id(conv *c, const char *s, OTF2_StringRef *id)
{
    weft_record r;
    uint64_t gid;
    char msg[256];
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_String;
    r.u.String.string = s;
    rc = weft_unify_add_global(c->u, &r, &gid, msg, sizeof msg);
    if (rc < 0)
        return fail(c, rc, "adding string \"%s\": %s", s, msg);
    *id = (OTF2_StringRef)gid;
    return 0;
}

/* Strings of the system tree's root. */
typedef struct tree_strings {
    OTF2_StringRef weft, machine, node;
} tree_strings;

static int put(conv *c, OTF2_GlobalDefWriter *gw, const weft_record *r)
{
    OTF2_ErrorCode orc = write_def(gw, r);
    const weft_rec_desc *d;

    if (orc == OTF2_SUCCESS)
        return 0;
    d = weft_rec_desc_of(r->type);
    return fail(c, WEFT_EOTF2, "%s: writing global definition %s: %s",
                c->in->archive_dir, d ? d->name : "?", otf2_msg(orc));
}

/* Wall clock (ns since the epoch) at trace time t, from m's Hello;
 * OTF2_UNDEFINED_TIMESTAMP when unknown or out of range. long double
 * holds 64 bits exactly, so nanoseconds survive. */
static uint64_t realtime_at(const member *m, uint64_t t, uint64_t res)
{
    long double ns;
    uint64_t at;

    if (!m->realtime_ns)
        return OTF2_UNDEFINED_TIMESTAMP;
    at = m->rescale ? weft_clock_ticks_to_ns(m->clock_at_realtime,
                                             m->timer_resolution)
                    : m->clock_at_realtime;
    at = corrected(m, at);
    ns = (long double)m->realtime_ns +
         ((long double)t - (long double)at) * 1e9L / (long double)res;
    if (ns < 0 || ns >= 18446744073709551615.0L)
        return OTF2_UNDEFINED_TIMESTAMP;
    return (uint64_t)(ns + 0.5L);
}

/* Defines NEST_ATTRIBUTE with the id pass 2 gave it. */
static int define_nest_attribute(conv *c)
{
    weft_record r;
    uint64_t gid;
    char msg[256];
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Attribute;
    if ((rc = string_id(c, NEST_ATTRIBUTE, &r.u.Attribute.name)) < 0 ||
        (rc = string_id(c, NEST_ATTRIBUTE_DESC,
                        &r.u.Attribute.description)) < 0)
        return rc;
    r.u.Attribute.type = OTF2_TYPE_UINT8;
    rc = weft_unify_add_global(c->u, &r, &gid, msg, sizeof msg);
    if (rc < 0)
        return fail(c, rc, "adding attribute " NEST_ATTRIBUTE ": %s", msg);
    if (gid != c->nest_attr)  /* a member defined the very same one */
        return fail(c, WEFT_ECONFLICT, "attribute " NEST_ATTRIBUTE " got id "
                    "%" PRIu64 ", events name %" PRIu32, gid, c->nest_attr);
    return 0;
}

static int write_global_defs(conv *c)
{
    OTF2_GlobalDefWriter *gw = NULL;
    tree_strings ts;
    weft_record r;
    uint64_t nodes = c->nodes;
    int rc;

    /* Names first: they must be in the unifier before strings are
     * written. Hosts got nodes 1.. in pass 1 (place_host). */
    if ((rc = string_id(c, "weft", &ts.weft)) < 0 ||
        (rc = string_id(c, "machine", &ts.machine)) < 0 ||
        (rc = string_id(c, "node", &ts.node)) < 0)
        return rc;
    if (c->added && (rc = define_nest_attribute(c)) < 0)
        return rc;

    gw = OTF2_Archive_GetGlobalDefWriter(c->archive);
    if (!gw)
        return fail(c, WEFT_EOTF2, "%s: libotf2 gives no global definition "
                    "writer", c->in->archive_dir);

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockProperties;
    r.u.ClockProperties.timerResolution = c->resolution;
    r.u.ClockProperties.globalOffset = c->any_event ? c->tmin : 0;
    r.u.ClockProperties.traceLength = c->any_event ? c->tmax - c->tmin + 1 : 1;
    /* The first member that knows its wall clock dates the trace. */
    r.u.ClockProperties.realtimeTimestamp = OTF2_UNDEFINED_TIMESTAMP;
    for (size_t i = 0; i < c->nmems; i++) {
        if (c->mems[i].realtime_ns) {
            r.u.ClockProperties.realtimeTimestamp =
                realtime_at(&c->mems[i], r.u.ClockProperties.globalOffset,
                            c->resolution);
            break;
        }
    }
    if ((rc = put(c, gw, &r)) < 0)
        return rc;

    /* Member names need their strings before any string is written. */
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        char name[64];
        OTF2_StringRef sid;
        if ((rc = string_id(c, m->hostname, &sid)) < 0)
            return rc;
        snprintf(name, sizeof name, "Process %" PRIu32, m->rank);
        if ((rc = string_id(c, name, &sid)) < 0)
            return rc;
        for (size_t k = 0; k < m->nlocs; k++) {
            if (m->locs[k].thread == 0)
                snprintf(name, sizeof name, "Master thread");
            else
                snprintf(name, sizeof name, "Thread %" PRIu32,
                         m->locs[k].thread);
            if ((rc = string_id(c, name, &sid)) < 0)
                return rc;
        }
    }
    for (size_t i = 0; i < weft_unify_count(c->u, WEFT_REC_String); i++)
        if ((rc = put(c, gw, weft_unify_get(c->u, WEFT_REC_String, i))) < 0)
            return rc;

    /* System tree. string_id() finds the strings added above. */
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_SystemTreeNode;
    r.u.SystemTreeNode.self = 0;
    r.u.SystemTreeNode.name = ts.weft;
    r.u.SystemTreeNode.className = ts.machine;
    r.u.SystemTreeNode.parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    if ((rc = put(c, gw, &r)) < 0)
        return rc;
    for (uint64_t node = 1; node < nodes; node++) {
        for (size_t i = 0; i < c->nmems; i++) {
            if (c->mems[i].node != node)
                continue;
            r.u.SystemTreeNode.self = (OTF2_SystemTreeNodeRef)node;
            if ((rc = string_id(c, c->mems[i].hostname,
                                &r.u.SystemTreeNode.name)) < 0)
                return rc;
            r.u.SystemTreeNode.className = ts.node;
            r.u.SystemTreeNode.parent = 0;
            if ((rc = put(c, gw, &r)) < 0)
                return rc;
            break;
        }
    }

    /* Location group ids must be dense (otf2-print -Werror refuses gaps):
     * the member's index, which is its rank unless members are missing. */
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        char name[64];
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_LocationGroup;
        r.u.LocationGroup.self = (OTF2_LocationGroupRef)i;
        snprintf(name, sizeof name, "Process %" PRIu32, m->rank);
        if ((rc = string_id(c, name, &r.u.LocationGroup.name)) < 0)
            return rc;
        r.u.LocationGroup.locationGroupType = OTF2_LOCATION_GROUP_TYPE_PROCESS;
        r.u.LocationGroup.systemTreeParent = (OTF2_SystemTreeNodeRef)m->node;
        r.u.LocationGroup.creatingLocationGroup =
            OTF2_UNDEFINED_LOCATION_GROUP;
        if ((rc = put(c, gw, &r)) < 0)
            return rc;
    }

    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs; k++) {
            const loc *l = &m->locs[k];
            char name[64];
            memset(&r, 0, sizeof r);
            r.type = WEFT_REC_Location;
            r.u.Location.self = loc_id(m, l);
            if (l->thread == 0)
                snprintf(name, sizeof name, "Master thread");
            else
                snprintf(name, sizeof name, "Thread %" PRIu32, l->thread);
            if ((rc = string_id(c, name, &r.u.Location.name)) < 0)
                return rc;
            r.u.Location.locationType = OTF2_LOCATION_TYPE_CPU_THREAD;
            r.u.Location.numberOfEvents = l->events;
            r.u.Location.locationGroup = (OTF2_LocationGroupRef)i;
            if ((rc = put(c, gw, &r)) < 0)
                return rc;
        }
    }

    /* The members' definitions, first-seen order (dependency-safe). */
    for (size_t i = 0; i < weft_unify_ndefs(c->u); i++) {
        const weft_record *d = weft_unify_def(c->u, i);
        if (d->type == WEFT_REC_String)
            continue;
        if ((rc = put(c, gw, d)) < 0)
            return rc;
    }

    {
        OTF2_ErrorCode orc = OTF2_Archive_CloseGlobalDefWriter(c->archive, gw);
        if (orc != OTF2_SUCCESS)
            return fail(c, WEFT_EOTF2, "%s: closing the global definitions: "
                        "%s", c->in->archive_dir, otf2_msg(orc));
    }
    return 0;
}

/* Fills c->out with the figures of the archive, or with `held` (after a
 * failure) with the members, events and drops the journals hold as pass
 * 1 counted them, and no locations: a failed trace is never catalogued
 * with 0 events over journals that hold some. */
static int fill_result(conv *c, int held)
{
    weft_convert_result *out = c->out;
    size_t n = 0, k = 0;
    int dfd;

    if (held) {
        for (size_t i = 0; i < c->nmems; i++)
            for (size_t j = 0; j < c->mems[i].nlocs; j++) {
                out->events += c->mems[i].locs[j].journaled;
                out->dropped += c->mems[i].locs[j].dropped;
            }
        out->members = (uint32_t)c->nmems;
        return 0;
    }

    for (size_t i = 0; i < c->nmems; i++)
        n += c->mems[i].nlocs;
    out->locations = n ? calloc(n, sizeof *out->locations) : NULL;
    if (n && !out->locations)
        return fail(c, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t j = 0; j < m->nlocs; j++) {
            const loc *l = &m->locs[j];
            weft_location_row *row = &out->locations[k++];
            out->nlocations = k;
            row->id = loc_id(m, l);
            row->rank = m->rank;
            row->thread = l->thread;
            row->events = l->events;
            row->dropped = l->dropped;
            if (l->thread == 0)
                row->name = strdup("Master thread");
            else if (asprintf(&row->name, "Thread %" PRIu32, l->thread) < 0)
                row->name = NULL;
            if (!row->name)
                return fail(c, WEFT_ENOMEM, "out of memory");
            out->events += row->events;
            out->dropped += l->dropped;
        }
    }
    out->members = (uint32_t)c->nmems;
    out->time_first = c->any_event ? c->tmin : 0;
    out->time_last = c->any_event ? c->tmax : 0;
    out->timer_resolution = c->resolution;
    dfd = open(c->in->archive_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    out->bytes = dfd >= 0 ? dir_bytes(dfd) : 0;
    return 0;
}

/* 1 if m has ClockOffset records. */
static int has_offsets(const member *m)
{
    for (size_t i = 0; i < m->nlocal; i++)
        if (m->local_defs[i].type == WEFT_REC_ClockOffset)
            return 1;
    return 0;
}

/* Picks the trace's resolution: the members' common one, else 1 ns, with
 * the members that count otherwise rescaled (see the DESIGN note); then
 * prepares every member's clock offsets. */
static int pick_resolution(conv *c)
{
    int differ = 0, rc;

    c->resolution = 0;
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        if (!m->timer_resolution)
            continue;
        if ((c->resolution && m->timer_resolution != c->resolution) ||
            (m->timer_resolution != DEFAULT_RESOLUTION && has_offsets(m)))
            differ = 1;
        c->resolution = m->timer_resolution;
    }
    if (!c->resolution || differ)
        c->resolution = DEFAULT_RESOLUTION;
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        m->rescale = m->timer_resolution &&
                     m->timer_resolution != c->resolution;
        if ((rc = prepare_offsets(c, m)) < 0)
            return rc;
    }
    return 0;
}

/* ---- pass 2 on worker threads (see the DESIGN note) ------------------ */

/* Hands the members out to the workers in rank order. */
typedef struct pass2 {
    pthread_mutex_t lock;
    size_t next;        /* index of the next member to replay */
    int stop;           /* a member failed: hand out no more */
} pass2;

typedef struct worker {
    pass2 *p;
    conv c;                  /* the trace's, with its own pass-2 part */
    weft_convert_result out; /* only its error is used */
    pthread_t tid;
    int started;             /* tid is a thread to join */
} worker;

/* Gives w a copy of c whose "own" fields are new and empty. Returns 0 or
 * WEFT_ENOMEM; worker_free frees what it got either way. */
static int worker_init(worker *w, const conv *c, pass2 *p)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->c = *c;
    w->c.out = &w->out;
    memset(&w->c.scratch, 0, sizeof w->c.scratch);
    w->c.tmin = w->c.tmax = 0;
    w->c.any_event = 0;
    w->c.loc_refs = NULL;
    w->c.nloc_refs = w->c.loc_refs_cap = 0;
    w->c.prows = NULL;
    w->c.nprows = w->c.prows_cap = 0;
    w->c.anomalies = 0;
    w->c.added = w->c.unmatched = 0;
    w->c.al = OTF2_AttributeList_New();
    w->c.nest_al = OTF2_AttributeList_New();
    w->c.psum = calloc(c->nregions ? c->nregions : 1, sizeof *w->c.psum);
    return w->c.al && w->c.nest_al && w->c.psum ? 0 : WEFT_ENOMEM;
}

static void worker_free(worker *w)
{
    if (w->c.al)
        OTF2_AttributeList_Delete(w->c.al);
    if (w->c.nest_al)
        OTF2_AttributeList_Delete(w->c.nest_al);
    free(w->c.psum);
    free(w->c.loc_refs);
    for (size_t i = 0; i < w->c.nprows; i++)
        free(w->c.prows[i].region);
    free(w->c.prows);
    weft_unify_scratch_free(&w->c.scratch);
}

/* Replays member m with c (a worker's copy), closes its writers, finishes
 * the profiles of its locations and gives m its rows. */
static int replay_member(conv *c, member *m)
{
    int rc = open_writers(c, m);

    if (rc == 0)
        rc = read_member(c, m, 2);
    if (rc == 0)
        rc = nest_finish(c, m);
    if (rc == 0)
        rc = close_writers(c, m);
    else
        close_writers(c, m);
    for (size_t k = 0; rc == 0 && k < m->nlocs; k++)
        rc = prof_finish_loc(c, m, &m->locs[k]);
    m->prows = c->prows;
    m->nprows = c->nprows;
    c->prows = NULL;
    c->nprows = c->prows_cap = 0;
    return rc;
}

/* The next member to replay, NULL when there is none or one failed. */
static member *claim_member(pass2 *p, const conv *c)
{
    member *m = NULL;

    pthread_mutex_lock(&p->lock);
    if (!p->stop && p->next < c->nmems)
        m = &c->mems[p->next++];
    pthread_mutex_unlock(&p->lock);
    return m;
}

static void *worker_run(void *arg)
{
    worker *w = arg;
    conv *sink = otf2_sink;
    member *m;

    otf2_sink = &w->c;
    while ((m = claim_member(w->p, &w->c)) != NULL) {
        w->out.error[0] = '\0';
        m->rc = replay_member(&w->c, m);
        if (m->rc == 0 && w->out.error[0])
            m->rc = WEFT_EOTF2;  /* an error libotf2 did not return */
        if (m->rc < 0) {
            m->error = strdup(w->out.error);
            pthread_mutex_lock(&w->p->lock);
            w->p->stop = 1;
            pthread_mutex_unlock(&w->p->lock);
        }
    }
    otf2_sink = sink;
    return NULL;
}

/* Adds what worker w gathered that does not depend on order to c. */
static int worker_merge(conv *c, const worker *w)
{
    const conv *x = &w->c;

    if (c->nloc_refs + x->nloc_refs > c->loc_refs_cap) {
        size_t cap = c->nloc_refs + x->nloc_refs;
        uint64_t *p = realloc(c->loc_refs, cap * sizeof *p);
        if (!p)
            return fail(c, WEFT_ENOMEM, "out of memory");
        c->loc_refs = p;
        c->loc_refs_cap = cap;
    }
    if (x->nloc_refs)
        memcpy(c->loc_refs + c->nloc_refs, x->loc_refs,
               x->nloc_refs * sizeof *x->loc_refs);
    c->nloc_refs += x->nloc_refs;
    if (x->any_event) {
        if (!c->any_event || x->tmin < c->tmin)
            c->tmin = x->tmin;
        if (!c->any_event || x->tmax > c->tmax)
            c->tmax = x->tmax;
        c->any_event = 1;
    }
    for (size_t r = 0; r < c->nregions; r++) {
        c->psum[r].visits += x->psum[r].visits;
        c->psum[r].incl += x->psum[r].incl;
        c->psum[r].excl += x->psum[r].excl;
    }
    c->anomalies += x->anomalies;
    c->added += x->added;
    c->unmatched += x->unmatched;
    return 0;
}

/* Moves the members' per-location profile rows to c->prows, in rank
 * order. */
static int gather_rows(conv *c)
{
    size_t n = 0;

    for (size_t i = 0; i < c->nmems; i++)
        n += c->mems[i].nprows;
    if (!n)
        return 0;
    c->prows = malloc(n * sizeof *c->prows);
    if (!c->prows)
        return fail(c, WEFT_ENOMEM, "out of memory");
    c->prows_cap = n;
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        if (m->nprows)
            memcpy(c->prows + c->nprows, m->prows,
                   m->nprows * sizeof *m->prows);
        c->nprows += m->nprows;
        free(m->prows);
        m->prows = NULL;
        m->nprows = 0;
    }
    return 0;
}

/* After pass 2: every event of the journals was replayed, and what the
 * members that said goodbye reported sending (net of what they dropped:
 * a Goodbye counts the events shipped) is what their journals hold; where
 * not, out->incomplete says so (the trace is not complete). A thread that
 * a Goodbye does not name is not compared: libweft names every thread
 * that recorded, but hand-written peers send empty Goodbyes. */
static int check_counts(conv *c)
{
    weft_convert_result *out = c->out;
    size_t len = 0, more = 0;

    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs; k++) {
            const loc *l = &m->locs[k];
            uint64_t sent = l->sent;
            if (l->replayed != l->journaled)
                return fail(c, WEFT_ECORRUPT, "%s: thread %" PRIu32 ": its "
                            "entries hold %" PRIu64 " events but %" PRIu64
                            " were read back", m->path, l->thread,
                            l->journaled, l->replayed);
            if (!m->has_goodbye || !l->said_goodbye || l->replayed == sent)
                continue;
            if (len) {
                more++;
                continue;
            }
            len = (size_t)snprintf(out->incomplete, sizeof out->incomplete,
                                   "rank %" PRIu32 " thread %" PRIu32 ": %"
                                   PRIu64 " events arrived, its Goodbye "
                                   "reported %" PRIu64 " sent (%" PRIu64
                                   " dropped)", m->rank, l->thread,
                                   l->replayed, sent, l->dropped);
        }
    }
    if (more && len < sizeof out->incomplete)
        snprintf(out->incomplete + len, sizeof out->incomplete - len,
                 "; %zu more threads differ", more);
    return 0;
}

/* Threads for pass 2: in->threads or the online CPUs, at most
 * WEFT_CONVERT_MAX_THREADS and at most one per member. */
static unsigned pick_threads(const conv *c)
{
    unsigned n = c->in->threads;

    if (!n) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (unsigned)(cpus < WEFT_CONVERT_MAX_THREADS
                                      ? cpus : WEFT_CONVERT_MAX_THREADS)
                     : 1;
    }
    if (n > WEFT_CONVERT_MAX_THREADS)
        n = WEFT_CONVERT_MAX_THREADS;
    if (n > c->nmems)
        n = (unsigned)c->nmems;
    return n ? n : 1;
}

/* Pass 2: replays every member on nthreads threads (this one and
 * nthreads - 1 started here) and merges their results into c in rank
 * order. Returns 0, or the code and error of the lowest rank that
 * failed. */
static int replay_members(conv *c, unsigned nthreads)
{
    pass2 p;
    worker *w;
    unsigned n = 0;
    int rc = 0;

    memset(&p, 0, sizeof p);
    pthread_mutex_init(&p.lock, NULL);
    w = calloc(nthreads, sizeof *w);
    if (!w) {
        rc = fail(c, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    for (n = 0; n < nthreads; n++) {
        if (worker_init(&w[n], c, &p) < 0) {
            n++;
            rc = fail(c, WEFT_ENOMEM, "out of memory");
            goto out;
        }
    }
    /* A thread that cannot be started leaves its share to the others. */
    for (unsigned i = 1; i < nthreads; i++)
        w[i].started = pthread_create(&w[i].tid, NULL, worker_run,
                                      &w[i]) == 0;
    worker_run(&w[0]);
    for (unsigned i = 1; i < nthreads; i++)
        if (w[i].started)
            pthread_join(w[i].tid, NULL);
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        if (m->rc < 0) {
            rc = fail(c, m->rc, "%s", m->error ? m->error : "out of memory");
            goto out;
        }
    }
    for (unsigned i = 0; i < nthreads && rc == 0; i++)
        rc = worker_merge(c, &w[i]);
    if (rc == 0)
        rc = gather_rows(c);
out:
    for (unsigned i = 0; i < n; i++)
        worker_free(&w[i]);
    free(w);
    pthread_mutex_destroy(&p.lock);
    return rc;
}

/* Converts the trace in in->trace_dir into an archive in
 * in->archive_dir (an archive left there by an earlier attempt is
 * replaced). Returns 0 with *out filled (out->locations is the caller's:
 * weft_convert_result_free), or a WEFT_E* code with out->error naming the
 * journal, entry offset and record that failed. Fewer journals than
 * in->members is not an error: out->members says how many were found. */
int weft_convert_trace(const weft_convert_input *in, weft_convert_result *out)
{
    conv c;
    chunk_budget pool;
    int rc = 0, read_all = 0;

    assert(in && in->trace_dir && in->archive_dir && out);
    pthread_once(&otf2_error_once, install_otf2_error_callback);
    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    memset(&pool, 0, sizeof pool);
    pthread_mutex_init(&pool.lock, NULL);
    c.in = in;
    c.out = out;
    c.pool = &pool;
    otf2_sink = &c;
    c.u = weft_unify_new(0);
    if (!c.u) {
        rc = fail(&c, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    c.nodes = 1;
    if ((rc = list_journals(&c)) < 0)
        goto out;
    if ((rc = number_location_groups(&c)) < 0)
        goto out;
    for (size_t i = 0; i < c.nmems; i++)
        if ((rc = read_member(&c, &c.mems[i], 1)) < 0)
            goto out;
    read_all = 1;
    for (size_t i = 0; i < weft_unify_ndefs(c.u); i++)
        if ((rc = note_locations(&c, weft_unify_def(c.u, i))) < 0)
            goto out;
    if ((rc = pick_resolution(&c)) < 0)
        goto out;
    c.nregions = weft_unify_count(c.u, WEFT_REC_Region);
    /* The next attribute id, defined after pass 2 if nesting used it. */
    c.nest_attr = (uint32_t)weft_unify_count(c.u, WEFT_REC_Attribute);
    c.psum = calloc(c.nregions ? c.nregions : 1, sizeof *c.psum);
    if (!c.psum) {
        rc = fail(&c, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = open_archive(&c)) < 0)
        goto out;
    if ((rc = replay_members(&c, pick_threads(&c))) < 0)
        goto out;
    if ((rc = add_referenced_locations(&c)) < 0)
        goto out;
    if ((rc = check_counts(&c)) < 0)
        goto out;
    {
        OTF2_ErrorCode orc = OTF2_Archive_CloseEvtFiles(c.archive);
        if (orc != OTF2_SUCCESS) {
            rc = fail(&c, WEFT_EOTF2, "%s: closing the event files: %s",
                      in->archive_dir, otf2_msg(orc));
            goto out;
        }
    }
    if ((rc = write_local_defs(&c)) < 0)
        goto out;
    if ((rc = write_global_defs(&c)) < 0)
        goto out;
    {
        OTF2_ErrorCode orc = OTF2_Archive_Close(c.archive);
        c.archive = NULL;
        if (orc != OTF2_SUCCESS) {
            rc = fail(&c, WEFT_EOTF2, "%s: closing the archive: %s",
                      in->archive_dir, otf2_msg(orc));
            goto out;
        }
    }
    if (out->error[0]) {  /* an error libotf2 did not return */
        rc = WEFT_EOTF2;
        goto out;
    }
    if ((rc = sync_archive(&c)) < 0)
        goto out;
    rc = fill_result(&c, 0);
    if (rc == 0)
        rc = prof_result(&c);
out:
    if (rc < 0)
        budget_set_failed(&pool);  /* closing writes nothing more */
    if (c.archive)
        OTF2_Archive_Close(c.archive);
    otf2_sink = NULL;
    /* A partial archive is no archive; the journals stay for a retry. */
    if (rc < 0) {
        char error[sizeof out->error];
        clean_archive(in->archive_dir);
        memcpy(error, out->error, sizeof error);
        weft_convert_result_free(out);
        memcpy(out->error, error, sizeof error);
        if (read_all)
            fill_result(&c, 1);  /* out->error stays the first error */
    }
    for (size_t i = 0; i < c.nmems; i++) {
        free(c.mems[i].path);
        free(c.mems[i].hostname);
        for (size_t k = 0; k < c.mems[i].nlocs; k++) {
            prof_loc_free(&c.mems[i].locs[k].prof);
            free(c.mems[i].locs[k].gap);
        }
        free(c.mems[i].locs);
        free(c.mems[i].local_defs);
        free(c.mems[i].offsets);
        for (size_t k = 0; k < c.mems[i].nprows; k++)
            free(c.mems[i].prows[k].region);
        free(c.mems[i].prows);
        free(c.mems[i].error);
    }
    free(c.mems);
    free(c.loc_refs);
    for (size_t i = 0; i < c.nprows; i++)
        free(c.prows[i].region);
    free(c.prows);
    free(c.psum);
    if (c.al)
        OTF2_AttributeList_Delete(c.al);
    weft_unify_scratch_free(&c.scratch);
    weft_unify_free(c.u);
    pthread_mutex_destroy(&pool.lock);
    return rc;
}

/* Frees the location rows of *out and zeroes it. */
void weft_convert_result_free(weft_convert_result *out)
{
    if (!out)
        return;
    for (size_t i = 0; i < out->nlocations; i++)
        free(out->locations[i].name);
    free(out->locations);
    for (size_t i = 0; i < out->nregions; i++)
        free(out->regions[i].region);
    free(out->regions);
    memset(out, 0, sizeof *out);
}
