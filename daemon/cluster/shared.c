/* shared.c - the head's archive_root, marked and checked (see shared.h). */
#include "shared.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int weft_shared_mark(const char *root, const char *host,
                     char token[WEFT_ARCHIVE_TOKEN_LEN + 1], char *err,
                     size_t errlen)
{
    unsigned char r[WEFT_ARCHIVE_TOKEN_LEN / 2];
    char path[PATH_MAX], tmp[PATH_MAX], line[600];
    int fd, n, ok;

    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        snprintf(err, errlen, "cannot draw a token: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(token + 2 * i, 3, "%02x", r[i]);
    if ((size_t)snprintf(path, sizeof path, "%s/" WEFT_ARCHIVE_MARK, root)
            >= sizeof path - 16) {
        snprintf(err, errlen, "%.300s: path too long", root);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%.4000s.%ld", path, (long)getpid());
    n = snprintf(line, sizeof line, "weft head %s %s\n", host, token);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ok = fd >= 0 && n > 0 && write(fd, line, (size_t)n) == n &&
         fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %.300s: %s", path,
                 strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void weft_shared_check_run(const char *path, const char *token,
                           const char *node, weft_shared_check *out)
{
    char mark[PATH_MAX], probe[PATH_MAX], line[600] = "", want[64];
    int fd;
    ssize_t n;

    snprintf(out->path, sizeof out->path, "%s", path);
    out->error[0] = 0;
    out->state = WEFT_SHARED_UNUSABLE;
    snprintf(mark, sizeof mark, "%s/" WEFT_ARCHIVE_MARK, path);
    fd = open(mark, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(out->error, sizeof out->error, "%.300s: %s: is the head's "
                 "archive_root (a shared file system) mounted here?", mark,
                 strerror(errno));
        return;
    }
    n = read(fd, line, sizeof line - 1);
    close(fd);
    line[n > 0 ? n : 0] = 0;
    snprintf(want, sizeof want, " %s\n", token);
    if (strncmp(line, "weft head ", 10) != 0 || !strstr(line, want)) {
        snprintf(out->error, sizeof out->error, "%.200s is not this "
                 "head's (it names another head, or one started since): is "
                 "%.200s the head's archive_root, shared?", mark, path);
        return;
    }
    snprintf(probe, sizeof probe, "%.3000s/.weft-node-%.64s.%ld", path, node,
             (long)getpid());
    if (mkdir(probe, 0700) != 0 && errno != EEXIST) {
        snprintf(out->error, sizeof out->error, "cannot make a directory "
                 "in %.300s: %s", path, strerror(errno));
        return;
    }
    rmdir(probe);
    out->state = WEFT_SHARED_OK;
}

const char *weft_shared_state_name(enum weft_shared_state s)
{
    static const char *const names[] = { "none", "checking", "ok",
                                         "unusable" };

    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}
