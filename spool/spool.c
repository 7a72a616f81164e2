/* spool.c - the spool lock and trace keys (see spool.h). */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "weft_errors.h"

__attribute__((format(printf, 4, 5)))
static int say(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

/* What the holder wrote: "PID WHO\n". Returns the pid or 0. */
static long read_holder(int fd, char *who, size_t wholen)
{
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    char *end;
    long pid;

    who[0] = 0;
    if (n <= 0)
        return 0;
    buf[n] = 0;
    pid = strtol(buf, &end, 10);
    if (end == buf || pid <= 0)
        return 0;
    if (*end == ' ') {
        size_t k = strcspn(end + 1, "\n");
        snprintf(who, wholen, "%.*s", (int)k, end + 1);
    }
    return pid;
}

int weft_spool_lock(const char *spool, const char *who, int *fd, char *err,
                    size_t errlen)
{
    char *path = NULL, line[128], holder[64];
    int lfd = -1, rc;
    long pid;

    *fd = -1;
    if (asprintf(&path, "%s/" WEFT_SPOOL_LOCK_FILE, spool) < 0)
        return say(err, errlen, WEFT_ENOMEM, "out of memory");
    lfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (lfd < 0) {
        rc = say(err, errlen, WEFT_EIO, "spool %s: cannot open its lock "
                 "file %s: %s", spool, path, strerror(errno));
        goto out;
    }
    while ((rc = flock(lfd, LOCK_EX | LOCK_NB)) < 0 && errno == EINTR)
        ;
    if (rc < 0) {
        if (errno != EWOULDBLOCK) {
            rc = say(err, errlen, WEFT_EIO, "spool %s: cannot lock %s: %s",
                     spool, path, strerror(errno));
            goto out;
        }
        pid = read_holder(lfd, holder, sizeof holder);
        if (pid)
            rc = say(err, errlen, WEFT_EEXIST, "spool %s is in use by %s "
                     "pid %ld (it holds the lock %s); one weftd per spool",
                     spool, holder[0] ? holder : "process", pid, path);
        else
            rc = say(err, errlen, WEFT_EEXIST, "spool %s is in use by "
                     "another process (it holds the lock %s); one weftd per "
                     "spool", spool, path);
        goto out;
    }
    snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), who);
    if (ftruncate(lfd, 0) < 0 ||
        pwrite(lfd, line, strlen(line), 0) != (ssize_t)strlen(line)) {
        rc = say(err, errlen, WEFT_EIO, "spool %s: cannot write %s: %s",
                 spool, path, strerror(errno));
        goto out;
    }
    *fd = lfd;
    lfd = -1;
    rc = 0;
out:
    if (lfd >= 0)
        close(lfd);
    free(path);
    return rc;
}

void weft_spool_unlock(int fd)
{
    if (fd >= 0)
        close(fd);
}

void weft_spool_key_parse(const char *key, char *name, size_t namelen,
                          int64_t *created)
{
    const char *p = key;
    struct tm tm;

    *created = 0;
    snprintf(name, namelen, "%s", key);
    while ((p = strchr(p, '-')) != NULL) {
        const char *end;
        memset(&tm, 0, sizeof tm);
        end = strptime(p + 1, "%Y%m%dT%H%M%SZ", &tm);
        if (end && *end == '-') {
            *created = (int64_t)timegm(&tm);
            snprintf(name, namelen, "%.*s", (int)(p - key), key);
            return;
        }
        p++;
    }
}

/* See spool.h. */
uint64_t weft_spool_key_random(void)
{
    static __thread uint64_t fallback;
    struct timespec ts;
    uint64_t v;

    if (getrandom(&v, sizeof v, 0) == (ssize_t)sizeof v)
        return v;
    /* No entropy to be had (never after boot): unique, if guessable. */
    clock_gettime(CLOCK_REALTIME, &ts);
    v = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    v ^= (uint64_t)getpid() << 40 ^ ++fallback * 0x9e3779b97f4a7c15u;
    return v;
}

/* See spool.h: the name's safe characters, the creation time and a
 * random tag. Trace names never reach the file system as given. */
char *weft_spool_key_make(const char *name, time_t now, uint64_t tag)
{
    char safe[65], stamp[32], *key;
    size_t n = 0;
    struct tm tm;

    for (const char *p = name; *p && n < sizeof safe - 1; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
                 (ch == '.' && n > 0);
        safe[n++] = ok ? ch : '_';
    }
    safe[n] = 0;
    if (n == 0)
        strcpy(safe, "trace");
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    n = strlen(safe) + strlen(stamp) + 32;
    key = malloc(n);
    if (key)
        snprintf(key, n, "%s-%s-%016" PRIx64, safe, stamp, tag);
    return key;
}

/* See spool.h. */
int weft_spool_reserve(const char *spool, const char *name, time_t now,
                       char **key, char **dir, char *err, size_t errlen)
{
    char *k = NULL, *d = NULL;

    *key = *dir = NULL;
    for (int tries = 0; tries < 1000; tries++) {
        free(k);
        free(d);
        d = NULL;
        if (!(k = weft_spool_key_make(name, now, weft_spool_key_random())) ||
            asprintf(&d, "%s/traces/%s", spool, k) < 0) {
            free(k);
            snprintf(err, errlen, "out of memory");
            return WEFT_ENOMEM;
        }
        if (mkdir(d, 0700) == 0) {
            *key = k;
            *dir = d;
            return 0;
        }
        if (errno != EEXIST) {
            snprintf(err, errlen, "cannot create trace directory %s: %s", d,
                     strerror(errno));
            free(k);
            free(d);
            return WEFT_EIO;
        }
    }
    snprintf(err, errlen, "no free trace directory for '%s' in %s/traces",
             name, spool);
    free(k);
    free(d);
    return WEFT_EEXIST;
}

/* ---- archives outside the spool --------------------------------------- */

/* The target of tdir's archive link, or NULL (no link, out of memory). */
static char *link_target(const char *tdir)
{
    char link[PATH_MAX], target[PATH_MAX];
    ssize_t n;

    if ((size_t)snprintf(link, sizeof link, "%s/archive", tdir) >=
        sizeof link)
        return NULL;
    n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return NULL;
    target[n] = 0;
    return strdup(target);
}

/* See spool.h: the link is one weftd makes (absolute, to
 * .../KEY/archive, KEY being tdir's name), or it is not believed. */
char *weft_spool_archive_outside(const char *tdir)
{
    char *t = link_target(tdir), *slash;
    const char *key = strrchr(tdir, '/');
    size_t klen;

    if (!t || !key || !*++key)
        goto no;
    klen = strlen(key);
    slash = strrchr(t, '/');
    if (t[0] != '/' || !slash || strcmp(slash, "/archive") != 0)
        goto no;
    *slash = 0;
    slash = strrchr(t, '/');
    if (!slash || slash == t || strlen(slash + 1) != klen ||
        strcmp(slash + 1, key) != 0 || strstr(t, "/../") ||
        strstr(t, "/./"))
        goto no;
    return t;
no:
    free(t);
    return NULL;
}

/* See spool.h. */
int weft_spool_archive_make(const char *root, const char *key,
                            const char *tdir, char *err, size_t errlen)
{
    char kdir[PATH_MAX], adir[PATH_MAX], link[PATH_MAX];

    if ((size_t)snprintf(kdir, sizeof kdir, "%s/%s", root, key) >=
            sizeof kdir ||
        (size_t)snprintf(adir, sizeof adir, "%s/archive", kdir) >=
            sizeof adir ||
        (size_t)snprintf(link, sizeof link, "%s/archive", tdir) >=
            sizeof link) {
        snprintf(err, errlen, "archive directory %s/%s/archive: path too "
                 "long", root, key);
        return WEFT_EIO;
    }
    /* (made at start; again should it have gone, an unmounted share) */
    if (weft_mkdir_p(root, 0755, 0711) != 0) {
        snprintf(err, errlen, "cannot create archive_root %s: %s", root,
                 strerror(errno));
        return WEFT_EIO;
    }
    if (mkdir(kdir, 0700) != 0) {
        if (errno == EEXIST)
            return WEFT_EEXIST;
        snprintf(err, errlen, "cannot create %s: %s", kdir, strerror(errno));
        return WEFT_EIO;
    }
    if (mkdir(adir, 0700) != 0 || symlink(adir, link) != 0) {
        snprintf(err, errlen, "cannot make the archive directory %s and "
                 "%s, a link to it: %s", adir, link, strerror(errno));
        rmdir(adir);
        rmdir(kdir);
        return WEFT_EIO;
    }
    return 0;
}

/* See spool.h. */
char *weft_spool_archive_dir(const char *tdir)
{
    char *t = weft_spool_archive_outside(tdir), *dir = NULL;

    if (t) {
        if (asprintf(&dir, "%s/archive", t) < 0)
            dir = NULL;
        free(t);
        return dir;
    }
    return weft_path_join(tdir, "archive");
}

/* See spool.h. */
void weft_spool_archive_clear(const char *tdir)
{
    char *t = weft_spool_archive_outside(tdir), *dir;

    if (t && asprintf(&dir, "%s/archive", t) >= 0) {
        weft_rm_tree(dir);
        mkdir(dir, 0700);
        free(dir);
    } else if ((dir = weft_path_join(tdir, "archive")) != NULL) {
        weft_rm_tree(dir);  /* (a link weftd did not make: the link) */
        free(dir);
    }
    free(t);
}

/* See spool.h. */
void weft_spool_trace_remove(const char *tdir)
{
    char *t = weft_spool_archive_outside(tdir);

    if (t)
        weft_rm_tree(t);
    free(t);
    weft_rm_tree(tdir);
}

/* See spool.h. */
int weft_spool_trace_share(const char *tdir, uint32_t uid, char *err,
                           size_t errlen)
{
    char *t = weft_spool_archive_outside(tdir);
    int rc = weft_share_tree(tdir, uid, err, errlen);

    if (rc == 0 && t)
        rc = weft_share_tree(t, uid, err, errlen);
    free(t);
    return rc;
}
