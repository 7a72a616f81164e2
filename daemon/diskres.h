/* diskres.h - the spool's free-disk reserve, min_free_spool_bytes: the
 * bytes of its file system that weftd leaves free, so that no user (nor
 * all of them) fills it, and the catalog (SQLite) and the archives of
 * conversions always have room.
 *
 * What is free is the file system's f_bavail (statvfs(3)): the blocks an
 * unprivileged user may take, so that the reserve comes on top of the
 * blocks ext4 keeps for root (weftd runs as its service user, and a
 * weftd run as root does not count root's blocks as its own either).
 * statvfs runs at most every WEFT_DISKRES_INTERVAL_MS on the loop thread;
 * in between, the bytes weftd accepted since (journal entries, charged
 * by weft_diskres_take) are taken off the last figure, so that a burst
 * cannot run past the reserve between two looks. Below the reserve, the
 * batches that arrive are refused (acknowledged, counted as dropped:
 * WEFT_JE_REFUSED entries) and new traces refused; what frees room (a
 * weft rm, retention, journals removed after conversion) counts at the
 * next look. What the recording traces' conversions will still write
 * (`promised`: their archives, as the quota charges them) counts as
 * taken too, so that their archives fit. Within twice the reserve (less than 2 x min_free_spool_bytes
 * free), one user's recording journals, counted as the quota charges
 * them (with the archives their conversions will write), may take at
 * most half of what is left above the reserve (weft_diskres_share): a
 * user writing as fast as they can stops there, the others still have
 * room for theirs, and the archives room to be written.
 * Loop thread only (test_diskres).
 */
#ifndef WEFT_DISKRES_H
#define WEFT_DISKRES_H

#include <stddef.h>
#include <stdint.h>

/* statvfs runs at most this often (ms). */
#define WEFT_DISKRES_INTERVAL_MS 1000

/* Bytes an unprivileged user may still write on path's file system, in
 * *avail: 0, or -errno. Replaceable for tests. */
typedef int (*weft_diskres_statfn)(const char *path, uint64_t *avail);

typedef struct weft_diskres {
    weft_diskres_statfn stat;  /* NULL: statvfs */
    uint64_t looked_ms;        /* when stat last ran */
    uint64_t avail;            /* what it said */
    uint64_t since;            /* bytes taken since */
    int looked;                /* stat ran (successfully) once */
    int err;                   /* errno of the last failed stat, or 0 */
} weft_diskres;

/* statvfs(3)'s f_bavail * f_frsize of path: the default stat. */
int weft_diskres_statvfs(const char *path, uint64_t *avail);
/* Bytes weftd accepted to write (counted against the last look). */
void weft_diskres_take(weft_diskres *r, uint64_t bytes);
/* 0 when `more` bytes may go to spool's file system at now_ms and keep
 * min_free free (0: no reserve) besides `promised` bytes; else WEFT_ELIMIT with err naming
 * min_free_spool_bytes, the spool and what is free. Looks again (stat)
 * when the last look is WEFT_DISKRES_INTERVAL_MS old; when stat fails,
 * the last figure stays (none yet: nothing refused). */
int weft_diskres_check(weft_diskres *r, const char *spool, uint64_t min_free,
                       uint64_t now_ms, uint64_t promised, uint64_t more,
                       char *err, size_t errlen);

/* After weft_diskres_check passed: 0 when uid, whose recording traces'
 * journals are charged `mine` bytes (quota.h's live), may add `more`; WEFT_ELIMIT (err says why,
 * naming min_free_spool_bytes) when the file system has less than twice
 * min_free free and mine + more would be over half of what is left above
 * min_free. No look (statvfs): the last one's figure. */
int weft_diskres_share(const weft_diskres *r, uint32_t uid,
                       uint64_t min_free, uint64_t promised, uint64_t mine,
                       uint64_t more, char *err, size_t errlen);

#endif
