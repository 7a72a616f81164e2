/* otf2out.c - the converter's side of libotf2 (otf2out.h).
 *
 * DESIGN: records reach libotf2 through switches generated from the
 * record table (weft__otf2_write_event, weft__otf2_write_def,
 * write_local_def); the definitions weftd derives itself are built as
 * weft_records and go through the same switch. An event's attribute list
 * becomes one reused OTF2_AttributeList.
 * A stream writes its event files through an archive of their own
 * (weft__otf2_open_events: the second of a group of two, whose one
 * collective call libotf2 makes, a broadcast, is answered here) beside
 * the primary archive that writes the rest (stream.c).
 * After the events: one local DefWriter per location, holding its
 * member's mapping tables (its events keep the member's own ids, see
 * otf2out.h) and ClockOffsets, and the global definitions (otf2defs.c).
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
 * may make libotf2 write out (counted down from what statvfs said, which
 * is asked again before the count could fall short, and every
 * ROOM_RECHECK flushes); else the conversion fails with "No space left on
 * device" and libotf2 writes nothing more. (Another process filling the
 * disk between two checks can still meet the bug.) libotf2
 * does not return every error (the close of a file ignores a failed
 * write of its last bytes), so its error callback records them in the
 * conversion of the calling thread (a thread-local pointer: the callback
 * is process-wide); any error fails the conversion. Once it failed, the
 * pre-flush callback tells libotf2 to write nothing more: closing the
 * writers only frees memory.
 */
#include "otf2out.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <otf2/OTF2_Pthread_Locks.h>

#include "stream.h"
#include "weft_errors.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* libotf2's file buffer (OTF2_File.h): writes this big bypass it. */
#define OTF2_FILE_BUFFER ((uint32_t)WEFT_CONVERT_FILE_BUFFER_BYTES)
/* >= OTF2_CHUNK_SIZE_MIN (256 KiB) */
#define EVT_CHUNK ((uint32_t)WEFT_CONVERT_WRITER_BYTES)
/* libotf2 clears a definition writer's chunk when it makes it, one per
 * location: at 4 MiB that was 13% of weftd's CPU converting a trace of
 * 1000 locations (issue #16). The least libotf2 takes; the local
 * definitions of a location are a few ClockOffsets, and readers size a
 * buffer per location by it too. */
#define DEF_CHUNK (256u << 10)
/* Free space a flush needs: the file buffer it may write out and the
 * chunk. (Workers converting in parallel can pass the check at once.) */
#define MIN_FREE (OTF2_FILE_BUFFER + EVT_CHUNK)
/* Flushes at most between two looks at the free space (pre_flush). */
#define ROOM_RECHECK 64
#define POOL_PER_WRITER 2          /* event chunks per writer */
#define POOL_TOTAL 16              /* event chunks over all writers */
#define ARCHIVE_NAME "traces"
/* The chunks of one writer (libotf2's per-buffer pointer). */
typedef struct chunk_pool {
    size_t n;
    void *chunk[POOL_PER_WRITER];
} chunk_pool;

/* Called by weft__conv_fail, on any thread. */
void weft__otf2_budget_fail(chunk_budget *b)
{
    pthread_mutex_lock(&b->lock);
    b->failed = 1;
    pthread_mutex_unlock(&b->lock);
}

int weft__otf2_open_writer(conv *c, member *m, loc *l)
{
    chunk_budget *b = c->pool;

    assert(!l->w);
    l->w = OTF2_Archive_GetEvtWriter(c->archive, weft__loc_id(m, l));
    if (!l->w)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: libotf2 gives no event "
                               "writer for thread %" PRIu32, m->path,
                               l->thread);
    pthread_mutex_lock(&b->lock);
    if (++b->writers > b->writers_peak)
        b->writers_peak = b->writers;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

OTF2_ErrorCode weft__otf2_close_writer(conv *c, loc *l)
{
    OTF2_ErrorCode orc = OTF2_Archive_CloseEvtWriter(c->archive, l->w);

    l->w = NULL;
    pthread_mutex_lock(&c->pool->lock);
    c->pool->writers--;
    pthread_mutex_unlock(&c->pool->lock);
    return orc;
}

int weft__otf2_empty_events(conv *c, uint64_t id)
{
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(c->archive, id);
    OTF2_ErrorCode orc = w ? OTF2_Archive_CloseEvtWriter(c->archive, w)
                           : OTF2_ERROR_MEM_ALLOC_FAILED;

    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: location %" PRIu64
                               ": libotf2 cannot make its event file: %s",
                               c->in->archive_dir, id, weft__otf2_msg(orc));
    return 0;
}

static int budget_failed(chunk_budget *b)
{
    int f;

    pthread_mutex_lock(&b->lock);
    f = b->failed;
    pthread_mutex_unlock(&b->lock);
    return f;
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
    weft__conv_fail(otf2_sink, WEFT_EOTF2, "libotf2: %s: %s",
                    desc ? desc : "error", msg);
    return code;
}

static pthread_once_t otf2_error_once = PTHREAD_ONCE_INIT;

static void install_otf2_error_callback(void)
{
    OTF2_Error_RegisterCallback(on_otf2_error, NULL);
}

/* Any thread, any number of times. */
void weft__otf2_init(void)
{
    pthread_once(&otf2_error_once, install_otf2_error_callback);
}

/* The calling thread's sink is c from now on. */
conv *weft__otf2_sink(conv *c)
{
    conv *was = otf2_sink;

    otf2_sink = c;
    return was;
}

/* Never NULL. */
const char *weft__otf2_msg(OTF2_ErrorCode rc)
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

/* OTF2_EvtWriter_<Name> of r's type. */
OTF2_ErrorCode weft__otf2_write_event(OTF2_EvtWriter *w,
                                      OTF2_AttributeList *al,
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

/* See otf2out.h. */
OTF2_ErrorCode weft__otf2_write_def(OTF2_GlobalDefWriter *gw, const weft_record *r)
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
#define WEFT__DEF_WEFT(Name, ...)
#define WX(ctype, name, W) /* weft's own fields: not OTF2's */
#define WEFT_DEF(id, Name, flags, fields) WEFT__DEF_##flags(Name, fields)
#include "weft_records.def"
#undef WEFT__DEF_CLIENT
#undef WEFT__DEF_DAEMON
#undef WEFT__DEF_LOCAL
#undef WEFT__DEF_WEFT
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
#define WEFT__DEF_WEFT(Name, ...)
#define WEFT_DEF(id, Name, flags, fields) WEFT__DEF_##flags(Name, fields)
#include "weft_records.def"
#undef WEFT__DEF_CLIENT
#undef WEFT__DEF_DAEMON
#undef WEFT__DEF_LOCAL
#undef WEFT__DEF_WEFT
    default:
        return OTF2_ERROR_INVALID_ARGUMENT;
    }
}

#pragma GCC diagnostic pop

#undef WEFT_SCALAR
#undef WEFT_ARRAY

/* Whether attribute i of global list ga was named before it. */
static int named_before(const weft_AttributeList *ga, uint32_t i)
{
    for (uint32_t k = 0; k < i; k++)
        if (ga->attributes[k] == ga->attributes[i])
            return 1;
    return 0;
}

/* al is the caller's; *out is al or NULL. */
OTF2_ErrorCode weft__otf2_attributes(OTF2_AttributeList *al,
                                     const weft_record *r,
                                     const weft_record *g,
                                     OTF2_AttributeList **out)
{
    const weft_AttributeList *a, *ga;
    OTF2_ErrorCode orc;

    *out = NULL;
    if (!r->attributes || !r->attributes->u.AttributeList.numberOfAttributes)
        return OTF2_SUCCESS;
    a = &r->attributes->u.AttributeList;
    ga = &g->attributes->u.AttributeList;
    orc = OTF2_AttributeList_RemoveAllAttributes(al);
    /* An OTF2 attribute list holds an attribute once: a second value of
     * one (named twice, or two definitions that unified into one, which
     * a reader maps to one) is left out, the first wins. */
    for (uint32_t i = 0; i < a->numberOfAttributes && orc == OTF2_SUCCESS; i++)
        if (!named_before(ga, i))
            orc = OTF2_AttributeList_AddAttribute(al, a->attributes[i],
                                                  a->types[i], a->values[i]);
    if (orc == OTF2_SUCCESS)
        *out = al;
    return orc;
}

/* ---- mapping tables ---------------------------------------------------- */

/* The id spaces written with the member's own ids: each with its OTF2
 * mapping. */
static const struct {
    unsigned kind;
    OTF2_MappingType type;
} mapped[] = {
    { WEFT_REF_STRING, OTF2_MAPPING_STRING },
    { WEFT_REF_ATTRIBUTE, OTF2_MAPPING_ATTRIBUTE },
    { WEFT_REF_REGION, OTF2_MAPPING_REGION },
    { WEFT_REF_GROUP, OTF2_MAPPING_GROUP },
    { WEFT_REF_METRIC, OTF2_MAPPING_METRIC },
    { WEFT_REF_COMM, OTF2_MAPPING_COMM },
    { WEFT_REF_PARAMETER, OTF2_MAPPING_PARAMETER },
    { WEFT_REF_RMA_WIN, OTF2_MAPPING_RMA_WIN },
    { WEFT_REF_SOURCE_CODE_LOCATION, OTF2_MAPPING_SOURCE_CODE_LOCATION },
    { WEFT_REF_CALLING_CONTEXT, OTF2_MAPPING_CALLING_CONTEXT },
    { WEFT_REF_INTERRUPT_GENERATOR, OTF2_MAPPING_INTERRUPT_GENERATOR },
    { WEFT_REF_IO_FILE, OTF2_MAPPING_IO_FILE },
    { WEFT_REF_IO_HANDLE, OTF2_MAPPING_IO_HANDLE },
};
#define NMAPPED (sizeof mapped / sizeof mapped[0])

uint32_t weft__otf2_global_kinds(void)
{
    uint32_t local = 0;

    for (size_t i = 0; i < NMAPPED; i++)
        local |= UINT32_C(1) << mapped[i].kind;
    return ~local;
}

/* A member's local -> global ids of one id space, as collected. */
typedef struct idpairs {
    uint64_t *local, *global;
    size_t n, cap;
    uint64_t max;       /* largest local id */
    int identity;       /* every pair maps an id to itself */
} idpairs;

static int add_pair(void *arg, uint64_t local, uint64_t global)
{
    idpairs *p = arg;

    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        uint64_t *l = realloc(p->local, cap * sizeof *l), *g;
        if (l)
            p->local = l;
        g = l ? realloc(p->global, cap * sizeof *g) : NULL;
        if (!g)
            return WEFT_ENOMEM;
        p->global = g;
        p->cap = cap;
    }
    p->local[p->n] = local;
    p->global[p->n++] = global;
    if (local > p->max)
        p->max = local;
    p->identity &= local == global;
    return 0;
}

/* The OTF2 map of pairs p: a dense array (local ids that map nowhere
 * map to themselves; no event names them) when the ids are dense
 * enough, else the pairs that are no identity; libotf2 keeps the
 * smaller form. NULL when out of memory. */
static OTF2_IdMap *make_map(const idpairs *p)
{
    OTF2_IdMap *map = NULL;

    if (p->max < 2 * p->n + 64) {
        uint64_t *v = malloc((p->max + 1) * sizeof *v);
        if (!v)
            return NULL;
        for (uint64_t i = 0; i <= p->max; i++)
            v[i] = i;
        for (size_t i = 0; i < p->n; i++)
            v[p->local[i]] = p->global[i];
        map = OTF2_IdMap_CreateFromUint64Array(p->max + 1, v, true);
        free(v);
        return map;
    }
    if (!(map = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, p->n)))
        return NULL;
    for (size_t i = 0; i < p->n; i++)
        if (p->local[i] != p->global[i] &&
            OTF2_IdMap_AddIdPair(map, p->local[i], p->global[i]) !=
                OTF2_SUCCESS) {
            OTF2_IdMap_Free(map);
            return NULL;
        }
    return map;
}

/* m's mapping tables, one per id space it has ids of that are not all
 * mapped to themselves, into maps[NMAPPED] (NULL: none). 0 or
 * WEFT_ENOMEM. */
static int member_maps(conv *c, const member *m, OTF2_IdMap **maps)
{
    idpairs p = { 0 };
    int rc = 0;

    for (size_t i = 0; i < NMAPPED && rc == 0; i++) {
        p.n = 0;
        p.max = 0;
        p.identity = 1;
        rc = weft_unify_each_local(c->u, m->rank, mapped[i].kind, add_pair,
                                   &p);
        if (rc == 0 && mapped[i].kind == WEFT_REF_ATTRIBUTE && m->nested)
            rc = add_pair(&p, WEFT__NEST_LOCAL, c->nest_attr);
        if (rc == 0 && p.n && !p.identity && !(maps[i] = make_map(&p)))
            rc = WEFT_ENOMEM;
    }
    free(p.local);
    free(p.global);
    return rc;
}

static void free_maps(OTF2_IdMap **maps)
{
    for (size_t i = 0; i < NMAPPED; i++) {
        if (maps[i])
            OTF2_IdMap_Free(maps[i]);
        maps[i] = NULL;
    }
}

/* ---- libotf2 callbacks ------------------------------------------------ */

/* Whether a flush may write (MIN_FREE at most, see the DESIGN note;
 * and b->floor more for a stream's): the file system is asked (statvfs)
 * when what the flushes since it was last asked may have written could
 * leave less than that, and after ROOM_RECHECK flushes at most, as other
 * processes write too; asking at every flush was 1% of weftd's CPU
 * converting 1000 locations. */
static int room_for_flush(conv *c, chunk_budget *b)
{
    struct statvfs fs;
    int ok = 1;

    pthread_mutex_lock(&b->lock);
    if (b->room < 2 * (uint64_t)MIN_FREE + b->floor ||
        b->unchecked >= ROOM_RECHECK) {
        b->room = statvfs(c->in->archive_dir, &fs) == 0
                      ? (uint64_t)fs.f_bavail * fs.f_frsize
                      : UINT64_MAX;  /* unknown: libotf2 says what fails */
        b->unchecked = 0;
        ok = b->room >= MIN_FREE + b->floor;
    }
    if (ok) {
        b->room -= MIN_FREE;
        b->unchecked++;
    }
    pthread_mutex_unlock(&b->lock);
    return ok;
}

/* Nothing more is written once the conversion failed: closing writers
 * then only frees their memory (see the DESIGN note). */
static OTF2_FlushType pre_flush(void *data, OTF2_FileType type,
                                OTF2_LocationRef location, void *writer,
                                bool final)
{
    conv *c = otf2_sink;

    (void)writer;
    if (budget_failed(data))
        return OTF2_NO_FLUSH;
    if (c && c->streaming && type == OTF2_FILETYPE_EVENTS && !final)
        weft__stream_flushed(c, location);
    if (c && !room_for_flush(c, data)) {
        weft__conv_fail(c, WEFT_EIO, "%s: No space left on device (less "
                        "than %" PRIu64 " MiB free for the archive)",
                        c->in->archive_dir,
                        (MIN_FREE + ((chunk_budget *)data)->floor) >> 20);
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

/* ---- the archive's files ---------------------------------------------- */

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

/* Nothing to do without c->in->sync. */
int weft__otf2_sync(conv *c)
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
        weft__conv_fail(c, WEFT_EIO, "%s: cannot sync it to disk: %s",
                        bad ? bad : c->in->archive_dir, strerror(-rc));
    free(bad);
    return rc < 0 ? WEFT_EIO : 0;
}

/* The anchor and definition files, and the event and local definition
 * files in ARCHIVE_NAME/; what else is there stays. */
void weft__otf2_clean(const char *dir)
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

/* Symbolic links are not followed. */
uint64_t weft__otf2_bytes(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    return dfd >= 0 ? dir_bytes(dfd) : 0;
}

/* ---- the archive ------------------------------------------------------ */

/* c->archive opened on c->in->archive_dir with weft's callbacks (the
 * flush and memory callbacks get c->pool). OTF2_SUCCESS, or an error
 * (c->archive NULL when libotf2 could not open it at all). */
static OTF2_ErrorCode open_archive(conv *c)
{
    OTF2_ErrorCode orc;

    c->archive = OTF2_Archive_Open(c->in->archive_dir, ARCHIVE_NAME,
                                   OTF2_FILEMODE_WRITE, EVT_CHUNK, DEF_CHUNK,
                                   OTF2_SUBSTRATE_POSIX,
                                   OTF2_COMPRESSION_NONE);
    if (!c->archive)
        return OTF2_ERROR_INVALID;
    orc = OTF2_Archive_SetFlushCallbacks(c->archive, &flush_callbacks,
                                         c->pool);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetMemoryCallbacks(c->archive, &memory_callbacks,
                                              c->pool);
    /* Workers get and close event writers of one archive at once. */
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Pthread_Archive_SetLockingCallbacks(c->archive, NULL);
    return orc;
}

int weft__otf2_open(conv *c)
{
    OTF2_ErrorCode orc;

    weft__otf2_clean(c->in->archive_dir);
    orc = open_archive(c);
    if (!c->archive)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: libotf2 cannot create "
                               "the archive", c->in->archive_dir);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetSerialCollectiveCallbacks(c->archive);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetCreator(c->archive, "weft " PACKAGE_VERSION);
    if (orc == OTF2_SUCCESS && c->in->trace_name)
        orc = OTF2_Archive_SetDescription(c->archive, c->in->trace_name);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_OpenEvtFiles(c->archive);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: setting up the archive: "
                               "%s", c->in->archive_dir, weft__otf2_msg(orc));
    return weft__otf2_set_clocks(c);
}

/* ---- an archive that writes event files only -------------------------- */

/* The collectives of an archive that writes event files beside another
 * one, the primary, which made the directories and writes the anchor and
 * every definition (issue #34: a node's weftd writes its processes'
 * event files into an archive its head makes). It is the second of a
 * group of two; libotf2 3.0.2 makes one collective call of it, the
 * primary's error code broadcast at SetCollectiveCallbacks, which reads
 * success here (the primary exists: it was made first). Any other call
 * would need the primary, and fails. */
struct OTF2_CollectiveContext {
    uint32_t rank, size;
};

static OTF2_CollectiveContext events_only_group = { 1, 2 };

static OTF2_CallbackCode eo_get_size(void *u, OTF2_CollectiveContext *cc,
                                     uint32_t *size)
{
    (void)u;
    *size = cc->size;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode eo_get_rank(void *u, OTF2_CollectiveContext *cc,
                                     uint32_t *rank)
{
    (void)u;
    *rank = cc->rank;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode eo_bcast(void *u, OTF2_CollectiveContext *cc,
                                  void *data, uint32_t n, OTF2_Type type,
                                  uint32_t root)
{
    (void)u, (void)cc;
    if (root != OTF2_COLLECTIVES_ROOT || n != 1 ||
        (type != OTF2_TYPE_INT64 && type != OTF2_TYPE_UINT64))
        return OTF2_CALLBACK_ERROR;
    memset(data, 0, 8); /* the primary's OTF2_SUCCESS */
    return OTF2_CALLBACK_SUCCESS;
}

/* The calls libotf2 does not make of it (found by logging them). */
static OTF2_CallbackCode eo_create_local(void *u, OTF2_CollectiveContext **l,
                                         OTF2_CollectiveContext *g,
                                         uint32_t gr, uint32_t gs,
                                         uint32_t lr, uint32_t ls,
                                         uint32_t file, uint32_t nfiles)
{
    (void)u, (void)l, (void)g, (void)gr, (void)gs, (void)lr, (void)ls;
    (void)file, (void)nfiles;
    return OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode eo_free_local(void *u, OTF2_CollectiveContext *l)
{
    (void)u, (void)l;
    return OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode eo_barrier(void *u, OTF2_CollectiveContext *cc)
{
    (void)u, (void)cc;
    return OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode eo_gather(void *u, OTF2_CollectiveContext *cc,
                                   const void *in, void *out, uint32_t n,
                                   OTF2_Type type, uint32_t root)
{
    (void)u, (void)cc, (void)in, (void)out, (void)n, (void)type, (void)root;
    return OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode eo_gatherv(void *u, OTF2_CollectiveContext *cc,
                                    const void *in, uint32_t nin, void *out,
                                    const uint32_t *nout, OTF2_Type type,
                                    uint32_t root)
{
    (void)u, (void)cc, (void)in, (void)nin, (void)out, (void)nout;
    (void)type, (void)root;
    return OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode eo_scatter(void *u, OTF2_CollectiveContext *cc,
                                    const void *in, void *out, uint32_t n,
                                    OTF2_Type type, uint32_t root)
{
    (void)u, (void)cc, (void)in, (void)out, (void)n, (void)type, (void)root;
    return OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode eo_scatterv(void *u, OTF2_CollectiveContext *cc,
                                     const void *in, const uint32_t *nin,
                                     void *out, uint32_t nout,
                                     OTF2_Type type, uint32_t root)
{
    (void)u, (void)cc, (void)in, (void)nin, (void)out, (void)nout;
    (void)type, (void)root;
    return OTF2_CALLBACK_ERROR;
}

static void eo_release(void *u, OTF2_CollectiveContext *g,
                       OTF2_CollectiveContext *l)
{
    (void)u, (void)g, (void)l;
}

static const OTF2_CollectiveCallbacks events_only_collectives = {
    .otf2_release = eo_release,
    .otf2_get_size = eo_get_size,
    .otf2_get_rank = eo_get_rank,
    .otf2_create_local_comm = eo_create_local,
    .otf2_free_local_comm = eo_free_local,
    .otf2_barrier = eo_barrier,
    .otf2_bcast = eo_bcast,
    .otf2_gather = eo_gather,
    .otf2_gatherv = eo_gatherv,
    .otf2_scatter = eo_scatter,
    .otf2_scatterv = eo_scatterv,
};

int weft__otf2_open_events(conv *c)
{
    OTF2_ErrorCode orc = open_archive(c);

    if (!c->archive)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: libotf2 cannot open the "
                               "archive for event files", c->in->archive_dir);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_SetCollectiveCallbacks(
            c->archive, &events_only_collectives, NULL, &events_only_group,
            NULL);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_OpenEvtFiles(c->archive);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: setting up the event "
                               "files: %s", c->in->archive_dir,
                               weft__otf2_msg(orc));
    return 0;
}

/* 0 or WEFT_EOTF2. */
int weft__otf2_set_clocks(conv *c)
{
    char clocks[WEFT_CLOCK_NAMES];
    OTF2_ErrorCode orc = OTF2_SUCCESS;

    /* Which clocks the processes read (README, Clocks): `weft reindex`
     * finds it here. libotf2 writes properties with the anchor file, at
     * its close. */
    weft__conv_clocks(c, clocks, sizeof clocks);
    if (clocks[0])
        orc = OTF2_Archive_SetProperty(c->archive, WEFT_CLOCK_PROPERTY,
                                       clocks, false);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: setting up the archive: "
                               "%s", c->in->archive_dir, weft__otf2_msg(orc));
    return 0;
}

/* 0 or WEFT_EOTF2. */
int weft__otf2_close_events(conv *c)
{
    OTF2_ErrorCode orc = OTF2_Archive_CloseEvtFiles(c->archive);

    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: closing the event files: "
                               "%s", c->in->archive_dir, weft__otf2_msg(orc));
    return 0;
}

/* 0 or WEFT_EOTF2. */
int weft__otf2_write_local_defs(conv *c)
{
    OTF2_ErrorCode orc = OTF2_Archive_OpenDefFiles(c->archive);
    OTF2_IdMap *maps[NMAPPED] = { NULL };

    for (size_t i = 0; i < c->nmems && orc == OTF2_SUCCESS; i++) {
        member *m = &c->mems[i];
        if (m->nlocs && member_maps(c, m, maps) < 0) {
            free_maps(maps);
            return weft__conv_fail(c, WEFT_ENOMEM, "%s: out of memory",
                                   c->in->archive_dir);
        }
        for (size_t k = 0; k < m->nlocs && orc == OTF2_SUCCESS; k++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(
                c->archive, weft__loc_id(m, &m->locs[k]));
            if (!dw) {
                orc = OTF2_ERROR_MEM_ALLOC_FAILED;
                break;
            }
            /* A process's ids and clock offsets are those of each of its
             * locations. */
            for (size_t j = 0; j < NMAPPED && orc == OTF2_SUCCESS; j++)
                if (maps[j])
                    orc = OTF2_DefWriter_WriteMappingTable(dw, mapped[j].type,
                                                           maps[j]);
            for (size_t j = 0; j < m->nlocal && orc == OTF2_SUCCESS; j++)
                orc = write_local_def(dw, &m->local_defs[j]);
            if (orc == OTF2_SUCCESS)
                orc = OTF2_Archive_CloseDefWriter(c->archive, dw);
        }
        free_maps(maps);
    }
    for (size_t k = 0; k < c->nghosts && orc == OTF2_SUCCESS; k++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(c->archive,
                                                       c->ghosts[k]);
        orc = dw ? OTF2_Archive_CloseDefWriter(c->archive, dw)
                 : OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_CloseDefFiles(c->archive);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: writing the local "
                               "definitions: %s", c->in->archive_dir,
                               weft__otf2_msg(orc));
    return 0;
}

/* 0 or WEFT_EOTF2. */
int weft__otf2_close(conv *c)
{
    OTF2_ErrorCode orc = OTF2_Archive_Close(c->archive);

    c->archive = NULL;
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: closing the archive: %s",
                               c->in->archive_dir, weft__otf2_msg(orc));
    return 0;
}
