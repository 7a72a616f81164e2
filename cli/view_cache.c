/* view_cache.c - weft view's index files in the user's cache (see
 * view_file.c for what one holds): where they are, and how the cache is
 * kept from growing without end.
 *
 * DESIGN
 * An index file's modification time is when it was last used: weft view
 * sets it each time it maps one. As a view starts, the cache directory
 * loses the index files not used for WEFT__VIEW_CACHE_DAYS days (their
 * trace removed, most likely: the catalog is not asked, since one
 * user's cache serves every catalog the user views), the temporary files
 * of builds that never ended (older than a day), and then, while the
 * index files add up to more than the limit (--cache-max), the least
 * recently used ones; never those the view itself uses, whatever their
 * size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "view_index.h"

/* Makes dir and its parents (0700 for the ones made). 0, or -1. */
static int make_dirs(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
            *p = '/';
            return -1;
        }
        *p = '/';
    }
    return mkdir(dir, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

char *weft__view_cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *dir = NULL;

    if (xdg && *xdg == '/') {
        if (asprintf(&dir, "%s/weft/view", xdg) < 0)
            return NULL;
    } else if (home && *home == '/') {
        if (asprintf(&dir, "%s/.cache/weft/view", home) < 0)
            return NULL;
    } else {
        return NULL;
    }
    if (make_dirs(dir) < 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

char *weft__view_cache_file(const char *dir, const char *key)
{
    char *file = NULL;

    if (asprintf(&file, "%s/%s.idx", dir, key) < 0)
        return NULL;
    for (char *p = file + strlen(dir) + 1; *p && strcmp(p, ".idx"); p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
              *p == '_'))
            *p = '_';
    return file;
}

void weft__view_cache_used(const char *file)
{
    /* (a file we cannot touch is merely pruned sooner) */
    (void)utimensat(AT_FDCWD, file, NULL, 0);
}

typedef struct cached {
    char *name;
    time_t used;
    uint64_t bytes;
    int keep;
} cached;

static int by_use(const void *a, const void *b)
{
    const cached *x = a, *y = b;

    return x->used < y->used ? -1 : x->used > y->used;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);

    return n > m && strcmp(s + n - m, tail) == 0;
}

int weft__view_cache_prune(const char *dir, uint64_t max,
                           char *const *keep, size_t nkeep,
                           weft__vcache_pruned *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    cached *c = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        struct stat st;
        int idx = ends_with(e->d_name, ".idx"), tmp = ends_with(e->d_name, ".tmp");
        if ((!idx && !tmp) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != geteuid())
            continue;
        if (tmp) {      /* a build that ended without its rename */
            if (now - st.st_mtime > WEFT__VIEW_CACHE_TMP_S &&
                unlinkat(dirfd(d), e->d_name, 0) == 0) {
                out->files++;
                out->bytes += (uint64_t)st.st_size;
            }
            continue;
        }
        if (n == cap) {
            cached *m = realloc(c, (cap = cap ? cap * 2 : 64) * sizeof *m);
            if (!m) {
                rc = -1;
                break;
            }
            c = m;
        }
        c[n] = (cached){ .name = strdup(e->d_name), .used = st.st_mtime,
                         .bytes = (uint64_t)st.st_size };
        if (!c[n].name) {
            rc = -1;
            break;
        }
        for (size_t k = 0; k < nkeep; k++) {
            const char *base = strrchr(keep[k], '/');
            if (strcmp(base ? base + 1 : keep[k], e->d_name) == 0)
                c[n].keep = 1;
        }
        total += c[n].bytes;
        n++;
    }
    if (rc == 0 && n > 1)
        qsort(c, n, sizeof *c, by_use);
    /* oldest first: unused too long, then over the limit */
    for (size_t k = 0; rc == 0 && k < n; k++) {
        int stale = now - c[k].used > WEFT__VIEW_CACHE_DAYS * 86400;
        if (c[k].keep || (!stale && total <= max))
            continue;
        if (unlinkat(dirfd(d), c[k].name, 0) == 0) {
            out->files++;
            out->bytes += c[k].bytes;
            total -= c[k].bytes;
        }
    }
    out->kept = total;
    for (size_t k = 0; k < n; k++)
        free(c[k].name);
    free(c);
    closedir(d);
    return rc;
}
