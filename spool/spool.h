/* spool.h - what weftd and weft (no libuv) share about a spool: its lock
 * and the names of its trace directories.
 *
 * One process at a time on a spool: weftd for as long as it runs, `weft
 * reindex` while it rebuilds the catalog.
 * The lock is flock(2) on SPOOL/weftd.lock, so the kernel releases it when
 * its holder exits in any way (SIGKILL included): a lock is never stale.
 * The holder writes its pid into the file after locking so that a refused
 * process can name it; the pid is informative only, the flock is the
 * lock. The descriptor is O_CLOEXEC: children never inherit the lock.
 */
#ifndef WEFT_SPOOL_H
#define WEFT_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define WEFT_SPOOL_LOCK_FILE "weftd.lock"

/* Takes the lock of spool (a directory that must exist) without waiting;
 * `who` (e.g. "weftd") goes into the file after the pid. Returns 0 with
 * *fd the lock's descriptor (closing it releases the lock), WEFT_EEXIST
 * when another process holds it, or WEFT_EIO; on failure err says why,
 * naming the spool, the lock file and the holder's pid when known. */
int weft_spool_lock(const char *spool, const char *who, int *fd, char *err,
                    size_t errlen);
/* Releases the lock (fd < 0 is fine). The file stays. */
void weft_spool_unlock(int fd);

/* A trace directory SPOOL/traces/KEY is named NAME-YYYYmmddTHHMMSSZ-TAG
 * (weft_spool_key_make), NAME being the trace name made file-safe and TAG
 * 16 random hexadecimal digits: traces/ lets everyone pass (the owner
 * reaches their archive through it), so a key must not be guessable, or
 * anyone could stat SPOOL/traces/KEY to learn that a trace of that name
 * was made at that second (and keys of an older weftd, ending in a
 * serial, were). Sets
 * *created to the stamp's unix time (0 when the key has none) and copies
 * the NAME part (the whole key when it has no stamp) into name. */
void weft_spool_key_parse(const char *key, char *name, size_t namelen,
                          int64_t *created);
/* The key NAME-YYYYmmddTHHMMSSZ-TAG of a trace called name created at
 * now, TAG being tag in 16 hexadecimal digits (malloc'd; NULL when out of
 * memory). Any thread. */
char *weft_spool_key_make(const char *name, time_t now, uint64_t tag);
/* 64 random bits for a key's tag (getrandom(2)). Any thread. */
uint64_t weft_spool_key_random(void);
/* A trace directory of its own for a trace called name created at now
 * (weft import): creates SPOOL/traces/KEY (0700) with a random tag
 * whose directory does not exist yet, as weftd does for a new trace, so
 * that the key is never one weftd or another import takes. 0 with *key
 * and *dir (malloc'd), or a WEFT_E* code with err saying why. */
int weft_spool_reserve(const char *spool, const char *name, time_t now,
                       char **key, char **dir, char *err, size_t errlen);

/* A trace's archive is SPOOL/traces/KEY/archive, or, when weftd writes
 * archives elsewhere ([cluster] archive_root: a shared or parallel file
 * system), ROOT/KEY/archive, SPOOL/traces/KEY/archive being a symbolic
 * link weftd made to it with the trace's directory: a trace keeps its
 * archive's place whatever the configuration says later. ROOT/KEY is
 * weftd's alone (0700) but for its owner's ACL entry, as the trace's
 * directory. Worker threads, or weft (no libuv). */

/* Makes ROOT/KEY/archive and the link to it in the trace's directory
 * tdir (SPOOL/traces/KEY). 0; WEFT_EEXIST when ROOT/KEY exists (another
 * trace's: the caller takes another key); else WEFT_EIO with err saying
 * why (nothing left behind). */
int weft_spool_archive_make(const char *root, const char *key,
                            const char *tdir, char *err, size_t errlen);
/* The archive directory of the trace in tdir: the link's target, else
 * tdir/archive (malloc'd; NULL when out of memory). */
char *weft_spool_archive_dir(const char *tdir);
/* ROOT/KEY, the directory of the trace in tdir outside the spool, or
 * NULL when its archive is in the spool (malloc'd). */
char *weft_spool_archive_outside(const char *tdir);
/* Removes what the archive of the trace in tdir holds (a conversion
 * starts it anew); a directory outside the spool stays, empty. */
void weft_spool_archive_clear(const char *tdir);
/* Removes the trace directory tdir and its archive outside the spool
 * (ROOT/KEY, the link's target's parent, only when its name is tdir's:
 * never another directory). Best effort, as weft_rm_tree. */
void weft_spool_trace_remove(const char *tdir);
/* Lets uid read the trace in tdir and its archive outside the spool
 * (weft_share_tree). 0, or -1 with err saying why. */
int weft_spool_trace_share(const char *tdir, uint32_t uid, char *err,
                           size_t errlen);

#endif
