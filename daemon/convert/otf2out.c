/* otf2out.c - the converter's side of libotf2 (otf2out.h).
 *
 * DESIGN: records reach libotf2 through switches generated from the
 * record table (weft__otf2_write_event, write_def, write_local_def); the
 * definitions weftd derives itself are built as weft_records and go
 * through the same switch. An event's attribute list becomes one reused
 * OTF2_AttributeList.
 * After the events: one local DefWriter per location, holding its
 * member's ClockOffsets, and the global definitions: clock, strings,
 * system tree (root "weft", one node per host), one location group per
 * member ("Process R"; ids are dense in rank order, so id = rank unless
 * members are missing, as readers refuse gaps), the locations (id =
 * rank << 32 | thread), then the unified definitions in first-seen order,
 * which puts each after what it references.
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

#include "weft_errors.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* libotf2's file buffer (OTF2_File.h): writes this big bypass it. */
#define OTF2_FILE_BUFFER (4u << 20)
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
/* The attribute (UINT8 1) of the Leaves and Enters weftd writes so that
 * every location nests; defined only in archives that have some. */
#define NEST_ATTRIBUTE "weft::nesting"
#define NEST_ATTRIBUTE_DESC "written by weftd, not recorded: regions open " \
    "at a measurement gap or at the end of a location are left there " \
    "(and entered again after the gap)"

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

/* The location group of ghost location c->ghosts[k], given that of the
 * one before (g; any for k = 0): one per rank, after the members'. */
static uint64_t ghost_group(const conv *c, size_t k, uint64_t g)
{
    if (k == 0)
        return c->nmems;
    return g + (c->ghosts[k] >> 32 != c->ghosts[k - 1] >> 32);
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

/* al is the caller's; *out is al or NULL. */
OTF2_ErrorCode weft__otf2_attributes(OTF2_AttributeList *al,
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
    /* An OTF2 attribute list holds an attribute once: a second value of
     * one (named twice, or two definitions that unified into one) is
     * left out, the first wins. */
    for (uint32_t i = 0; i < a->numberOfAttributes && orc == OTF2_SUCCESS; i++)
        if (!OTF2_AttributeList_TestAttributeByID(al, a->attributes[i]))
            orc = OTF2_AttributeList_AddAttribute(al, a->attributes[i],
                                                  a->types[i], a->values[i]);
    if (orc == OTF2_SUCCESS)
        *out = al;
    return orc;
}

/* ---- libotf2 callbacks ------------------------------------------------ */

/* Whether a flush may write (MIN_FREE at most, see the DESIGN note):
 * the file system is asked (statvfs) when what the flushes since it was
 * last asked may have written could leave less than MIN_FREE, and after
 * ROOM_RECHECK flushes at most, as other processes write too; asking at
 * every flush was 1% of weftd's CPU converting 1000 locations. */
static int room_for_flush(conv *c, chunk_budget *b)
{
    struct statvfs fs;
    int ok = 1;

    pthread_mutex_lock(&b->lock);
    if (b->room < 2 * (uint64_t)MIN_FREE || b->unchecked >= ROOM_RECHECK) {
        b->room = statvfs(c->in->archive_dir, &fs) == 0
                      ? (uint64_t)fs.f_bavail * fs.f_frsize
                      : UINT64_MAX;  /* unknown: libotf2 says what fails */
        b->unchecked = 0;
        ok = b->room >= MIN_FREE;
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

    (void)type, (void)location, (void)writer, (void)final;
    if (budget_failed(data))
        return OTF2_NO_FLUSH;
    if (c && !room_for_flush(c, data)) {
        weft__conv_fail(c, WEFT_EIO, "%s: No space left on device (less "
                        "than %u MiB free for the archive)",
                        c->in->archive_dir, MIN_FREE >> 20);
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

/* The flush and memory callbacks get c->pool. */
int weft__otf2_open(conv *c)
{
    char clocks[WEFT_CLOCK_NAMES];
    OTF2_ErrorCode orc;

    weft__otf2_clean(c->in->archive_dir);
    c->archive = OTF2_Archive_Open(c->in->archive_dir, ARCHIVE_NAME,
                                   OTF2_FILEMODE_WRITE, EVT_CHUNK, DEF_CHUNK,
                                   OTF2_SUBSTRATE_POSIX,
                                   OTF2_COMPRESSION_NONE);
    if (!c->archive)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: libotf2 cannot create "
                               "the archive", c->in->archive_dir);
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
    /* Which clocks the processes read (README, Clocks): `weft reindex`
     * finds it here. */
    weft__conv_clocks(c, clocks, sizeof clocks);
    if (orc == OTF2_SUCCESS && clocks[0])
        orc = OTF2_Archive_SetProperty(c->archive, WEFT_CLOCK_PROPERTY,
                                       clocks, false);
    if (orc == OTF2_SUCCESS)
        orc = OTF2_Archive_OpenEvtFiles(c->archive);
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

    for (size_t i = 0; i < c->nmems && orc == OTF2_SUCCESS; i++) {
        member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs && orc == OTF2_SUCCESS; k++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(
                c->archive, weft__loc_id(m, &m->locs[k]));
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

/* ---- global definitions ----------------------------------------------- */

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
        return weft__conv_fail(c, rc, "adding string \"%s\": %s", s, msg);
    *id = (OTF2_StringRef)gid;
    return 0;
}

/* The names weftd gives: a member's location group and its threads. */
static void process_name(char *buf, size_t n, uint32_t rank)
{
    snprintf(buf, n, "Process %" PRIu32, rank);
}

/* Also the name of the catalog's location rows (convert.c). */
void weft__otf2_thread_name(char *buf, size_t n, uint32_t thread)
{
    if (thread == 0)
        snprintf(buf, n, "Master thread");
    else
        snprintf(buf, n, "Thread %" PRIu32, thread);
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
    return weft__conv_fail(c, WEFT_EOTF2, "%s: writing global definition "
                           "%s: %s", c->in->archive_dir, d ? d->name : "?",
                           weft__otf2_msg(orc));
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
    at = weft__conv_corrected(m, at);
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
        return weft__conv_fail(c, rc, "adding attribute " NEST_ATTRIBUTE
                               ": %s", msg);
    if (gid != c->nest_attr)  /* a member defined the very same one */
        return weft__conv_fail(c, WEFT_ECONFLICT, "attribute "
                               NEST_ATTRIBUTE " got id %" PRIu64 ", events "
                               "name %" PRIu32, gid, c->nest_attr);
    return 0;
}

/* The definitions weftd adds, before any string is written: they must be
 * in the unifier by then. Hosts got nodes 1.. in pass 1. */
static int add_own_definitions(conv *c, tree_strings *ts)
{
    int rc;

    if ((rc = string_id(c, "weft", &ts->weft)) < 0 ||
        (rc = string_id(c, "machine", &ts->machine)) < 0 ||
        (rc = string_id(c, "node", &ts->node)) < 0)
        return rc;
    if (c->added && (rc = define_nest_attribute(c)) < 0)
        return rc;
    return 0;
}

static int put_clock_properties(conv *c, OTF2_GlobalDefWriter *gw)
{
    weft_record r;

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
    return put(c, gw, &r);
}

/* Every string, the names of the members and their threads included
 * (they need their strings before any string is written). */
static int put_strings(conv *c, OTF2_GlobalDefWriter *gw)
{
    int rc;

    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        char name[64];
        OTF2_StringRef sid;
        if ((rc = string_id(c, m->hostname, &sid)) < 0)
            return rc;
        process_name(name, sizeof name, m->rank);
        if ((rc = string_id(c, name, &sid)) < 0)
            return rc;
        for (size_t k = 0; k < m->nlocs; k++) {
            const char *s = weft__conv_loc_name(&m->locs[k], name,
                                                sizeof name);
            if ((rc = string_id(c, s, &sid)) < 0)
                return rc;
        }
    }
    for (size_t k = 0; k < c->nghosts; k++) {
        char name[64];
        OTF2_StringRef sid;
        process_name(name, sizeof name, (uint32_t)(c->ghosts[k] >> 32));
        if ((rc = string_id(c, name, &sid)) < 0)
            return rc;
        weft__otf2_thread_name(name, sizeof name, (uint32_t)c->ghosts[k]);
        if ((rc = string_id(c, name, &sid)) < 0)
            return rc;
    }
    for (size_t i = 0; i < weft_unify_count(c->u, WEFT_REC_String); i++)
        if ((rc = put(c, gw, weft_unify_get(c->u, WEFT_REC_String, i))) < 0)
            return rc;
    return 0;
}

/* The root, then one node per host. string_id() finds the strings
 * put_strings added. */
static int put_system_tree(conv *c, OTF2_GlobalDefWriter *gw,
                           const tree_strings *ts)
{
    weft_record r;
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_SystemTreeNode;
    r.u.SystemTreeNode.self = 0;
    r.u.SystemTreeNode.name = ts->weft;
    r.u.SystemTreeNode.className = ts->machine;
    r.u.SystemTreeNode.parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    if ((rc = put(c, gw, &r)) < 0)
        return rc;
    for (uint64_t node = 1; node < c->nodes; node++) {
        for (size_t i = 0; i < c->nmems; i++) {
            if (c->mems[i].node != node)
                continue;
            r.u.SystemTreeNode.self = (OTF2_SystemTreeNodeRef)node;
            if ((rc = string_id(c, c->mems[i].hostname,
                                &r.u.SystemTreeNode.name)) < 0)
                return rc;
            r.u.SystemTreeNode.className = ts->node;
            r.u.SystemTreeNode.parent = 0;
            if ((rc = put(c, gw, &r)) < 0)
                return rc;
            break;
        }
    }
    return 0;
}

/* Location group ids must be dense (otf2-print -Werror refuses gaps):
 * the member's index, which is its rank unless members are missing. */
static int put_location_group(conv *c, OTF2_GlobalDefWriter *gw,
                              uint64_t self, uint32_t rank, uint64_t node)
{
    weft_record r;
    char name[64];
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_LocationGroup;
    r.u.LocationGroup.self = (OTF2_LocationGroupRef)self;
    process_name(name, sizeof name, rank);
    if ((rc = string_id(c, name, &r.u.LocationGroup.name)) < 0)
        return rc;
    r.u.LocationGroup.locationGroupType = OTF2_LOCATION_GROUP_TYPE_PROCESS;
    r.u.LocationGroup.systemTreeParent = (OTF2_SystemTreeNodeRef)node;
    r.u.LocationGroup.creatingLocationGroup = OTF2_UNDEFINED_LOCATION_GROUP;
    return put(c, gw, &r);
}

/* One per member (id = its index), then one per rank of the ghost
 * locations (see conv), under the root of the system tree. */
static int put_location_groups(conv *c, OTF2_GlobalDefWriter *gw)
{
    int rc;

    for (size_t i = 0; i < c->nmems; i++)
        if ((rc = put_location_group(c, gw, i, c->mems[i].rank,
                                     c->mems[i].node)) < 0)
            return rc;
    for (size_t k = 0, g = 0; k < c->nghosts; k++) {
        uint64_t next = ghost_group(c, k, g);
        if ((k == 0 || next != g) &&
            (rc = put_location_group(c, gw, next,
                                     (uint32_t)(c->ghosts[k] >> 32), 0)) < 0)
            return rc;
        g = next;
    }
    return 0;
}

/* Location self (of loc l, NULL for a ghost: its default name). */
static int put_location(conv *c, OTF2_GlobalDefWriter *gw, uint64_t self,
                        const loc *l, uint64_t events, uint64_t group)
{
    weft_record r;
    char name[64];
    const char *s = name;
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Location;
    r.u.Location.self = self;
    if (l)
        s = weft__conv_loc_name(l, name, sizeof name);
    else
        weft__otf2_thread_name(name, sizeof name, (uint32_t)self);
    if ((rc = string_id(c, s, &r.u.Location.name)) < 0)
        return rc;
    r.u.Location.locationType = OTF2_LOCATION_TYPE_CPU_THREAD;
    r.u.Location.numberOfEvents = events;
    r.u.Location.locationGroup = (OTF2_LocationGroupRef)group;
    return put(c, gw, &r);
}

static int put_locations(conv *c, OTF2_GlobalDefWriter *gw)
{
    int rc;

    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs; k++)
            if ((rc = put_location(c, gw, weft__loc_id(m, &m->locs[k]),
                                   &m->locs[k], m->locs[k].events, i)) < 0)
                return rc;
    }
    for (size_t k = 0, g = 0; k < c->nghosts; k++) {
        g = ghost_group(c, k, g);
        if ((rc = put_location(c, gw, c->ghosts[k], NULL, 0, g)) < 0)
            return rc;
    }
    return 0;
}

/* The members' definitions, first-seen order (dependency-safe). */
static int put_unified(conv *c, OTF2_GlobalDefWriter *gw)
{
    int rc;

    for (size_t i = 0; i < weft_unify_ndefs(c->u); i++) {
        const weft_record *d = weft_unify_def(c->u, i);
        if (d->type == WEFT_REC_String)
            continue;
        if ((rc = put(c, gw, d)) < 0)
            return rc;
    }
    return 0;
}

/* 0 or a WEFT_E* code. */
int weft__otf2_write_global_defs(conv *c)
{
    OTF2_GlobalDefWriter *gw;
    OTF2_ErrorCode orc;
    tree_strings ts;
    int rc;

    if ((rc = add_own_definitions(c, &ts)) < 0)
        return rc;
    gw = OTF2_Archive_GetGlobalDefWriter(c->archive);
    if (!gw)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: libotf2 gives no global "
                               "definition writer", c->in->archive_dir);
    if ((rc = put_clock_properties(c, gw)) < 0 ||
        (rc = put_strings(c, gw)) < 0 ||
        (rc = put_system_tree(c, gw, &ts)) < 0 ||
        (rc = put_location_groups(c, gw)) < 0 ||
        (rc = put_locations(c, gw)) < 0 || (rc = put_unified(c, gw)) < 0)
        return rc;
    orc = OTF2_Archive_CloseGlobalDefWriter(c->archive, gw);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: closing the global "
                               "definitions: %s", c->in->archive_dir,
                               weft__otf2_msg(orc));
    return 0;
}
