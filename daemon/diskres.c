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

int weft_diskres_check(weft_diskres *r, const char *spool, uint64_t min_free,
                       uint64_t now_ms, uint64_t more, char *err,
                       size_t errlen)
{
    uint64_t free_now;

    if (min_free == 0)
        return 0;
    look(r, spool, now_ms);
    if (!r->looked)
        return 0;  /* never known (statvfs fails): nothing refused */
    free_now = r->avail > r->since ? r->avail - r->since : 0;
    if (free_now >= min_free && more <= free_now - min_free)
        return 0;
    snprintf(err, errlen, "the spool's file system (%s) has %" PRIu64
             " bytes free: min_free_spool_bytes is %" PRIu64, spool,
             free_now, min_free);
    return WEFT_ELIMIT;
}
