/* keep-journals.c - an LD_PRELOAD library for scripts/compare-archives:
 * when weftd removes a member journal (SPOOL/traces/KEY/rank-N.wj, once
 * the trace's archive is committed), a hard link to it (a copy across file
 * systems) is kept first as $WEFT_KEEP_JOURNALS/PID/KEY/rank-N.wj, so that
 * the journals of real runs can be converted again by other builds; and,
 * at the first journal of a trace, its archive as weftd wrote it (while
 * the trace recorded, #33) as .../KEY/live/archive.
 * Without WEFT_KEEP_JOURNALS, or for any other file, unlink is unchanged.
 * Not part of weft: a tool for comparing builds. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_journal(const char *base)
{
    size_t n = strlen(base);

    return strncmp(base, "rank-", 5) == 0 && n > 8 &&
           strcmp(base + n - 3, ".wj") == 0;
}

static int copy_file(const char *from, const char *to)
{
    char buf[65536];
    ssize_t n = 0;
    int in = open(from, O_RDONLY), out = -1, rc = -1;

    if (in < 0)
        return -1;
    out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out < 0)
        goto out;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            goto out;
    rc = n == 0 ? 0 : -1;
out:
    if (out >= 0)
        close(out);
    close(in);
    return rc;
}

/* Links (copies) the files below directory from into to, made. */
static void keep_tree(const char *from, const char *to)
{
    DIR *d = opendir(from);
    struct dirent *de;

    if (!d || mkdir(to, 0700) != 0) {
        if (d)
            closedir(d);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        char a[PATH_MAX], b[PATH_MAX];
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(a, sizeof a, "%s/%s", from, de->d_name);
        snprintf(b, sizeof b, "%s/%s", to, de->d_name);
        if (lstat(a, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            keep_tree(a, b);
        else if (S_ISREG(st.st_mode) && link(a, b) != 0 && errno == EXDEV)
            copy_file(a, b);
    }
    closedir(d);
}

static void keep(const char *path)
{
    const char *root = getenv("WEFT_KEEP_JOURNALS");
    const char *base = strrchr(path, '/'), *key;
    char dir[PATH_MAX], to[PATH_MAX];
    int saved = errno;

    if (!root || !base || !is_journal(base + 1))
        return;
    for (key = base; key > path && key[-1] != '/'; key--)
        ;
    if (key == base)
        return;
    snprintf(dir, sizeof dir, "%s/%ld", root, (long)getpid());
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/%ld/%.*s", root, (long)getpid(),
             (int)(base - key), key);
    mkdir(dir, 0700);
    snprintf(to, sizeof to, "%s%s", dir, base);
    if (link(path, to) != 0 && errno == EXDEV)
        copy_file(path, to);
    {
        char from[PATH_MAX], live[PATH_MAX + 16];
        snprintf(live, sizeof live, "%s/live", dir);
        snprintf(from, sizeof from, "%.*sarchive", (int)(base - path + 1),
                 path);
        if (mkdir(live, 0700) == 0) {
            snprintf(live, sizeof live, "%s/live/archive", dir);
            keep_tree(from, live);
        }
    }
    errno = saved;
}

int unlink(const char *path)
{
    static int (*real)(const char *);

    if (!real)
        real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    keep(path);
    return real(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
    static int (*real)(int, const char *, int);

    if (!real)
        real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
    if (path[0] == '/')
        keep(path);
    return real(dirfd, path, flags);
}
