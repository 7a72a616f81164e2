/* diskres.c - the spool's free-disk reserve (see diskres.h). */
#include "diskres.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "weft_errors.h"

int weft_diskres_statvfs(const char *path, uint64_t *avail)
{
    struct statvfs st;

    if (statvfs(path, &st) < 0)
        return -errno;
    *avail = (uint64_t)st.f_bavail * (uint64_t)st.f_frsize;
    return 0;
}

void weft_diskres_take(weft_diskres *r, uint64_t bytes)
{
    r->since += bytes;
}

/* Looks at the file system again when the last look is old enough. */
static void look(weft_diskres *r, const char *spool, uint64_t now_ms)
{
    weft_diskres_statfn stat = r->stat ? r->stat : weft_diskres_statvfs;
    uint64_t avail;
    int rc;

    if (r->looked_ms && now_ms - r->looked_ms < WEFT_DISKRES_INTERVAL_MS)
        return;
    r->looked_ms = now_ms ? now_ms : 1;
    rc = stat(spool, &avail);
    if (rc < 0) {
        r->err = -rc;
        return;
    }
    r->err = 0;
    r->avail = avail;
    r->since = 0;
    r->looked = 1;
}

/* What is free now: the last look, less what was taken and promised. */
static uint64_t free_now_of(const weft_diskres *r, uint64_t promised)
{
    uint64_t taken = r->since + promised;

    return r->avail > taken ? r->avail - taken : 0;
}

int weft_diskres_share(const weft_diskres *r, uint32_t uid,
                       uint64_t min_free, uint64_t promised, uint64_t mine,
                       uint64_t more, char *err, size_t errlen)
{
    uint64_t free_now, room;

    if (min_free == 0 || !r->looked)
        return 0;
    free_now = free_now_of(r, promised);
    if (free_now >= 2 * min_free)
        return 0;
    room = free_now > min_free ? free_now - min_free : 0;
    if (mine + more <= room / 2)
        return 0;
    snprintf(err, errlen, "uid %u's recording traces are charged %" PRIu64
             " bytes and the spool's file system has %" PRIu64 " bytes free:"
             " under twice min_free_spool_bytes (%" PRIu64 "), one user may "
             "take half of what is left above it", uid, mine, free_now,
             min_free);
    return WEFT_ELIMIT;
}

int weft_diskres_check(weft_diskres *r, const char *spool, uint64_t min_free,
                       uint64_t now_ms, uint64_t promised, uint64_t more,
                       char *err, size_t errlen)
{
    uint64_t free_now;

    if (min_free == 0)
        return 0;
    look(r, spool, now_ms);
    if (!r->looked)
        return 0;  /* never known (statvfs fails): nothing refused */
    free_now = free_now_of(r, promised);
    if (free_now >= min_free && more <= free_now - min_free)
        return 0;
    snprintf(err, errlen, "the spool's file system (%s) has %" PRIu64
             " bytes free, the archives of the traces recording counted: "
             "min_free_spool_bytes is %" PRIu64, spool, free_now, min_free);
    return WEFT_ELIMIT;
}
