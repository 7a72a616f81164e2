/* spool.c - the spool lock and trace keys (see spool.h). */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

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
