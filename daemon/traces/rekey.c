/* rekey.c - tagged keys for an older weftd's trace directories (see
 * rekey.h). */
#include "rekey.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"
#include "weft_errors.h"

#define TAG_DIGITS 16

int weft_rekey_tagged(const char *key)
{
    size_t n = strlen(key);

    return n > TAG_DIGITS && key[n - TAG_DIGITS - 1] == '-' &&
           strspn(key + n - TAG_DIGITS, "0123456789abcdef") == TAG_DIGITS;
}

/* A directory of weftd's own at path (not a link). */
static int own_dir(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
           st.st_uid == geteuid();
}

/* Traces weftd holds are renamed by no one: their files are in use. */
static int held(const weft_trace_row *row)
{
    return strcmp(row->state, WEFT_STATE_RECORDING) == 0 ||
           strcmp(row->state, WEFT_STATE_CONVERTING) == 0 ||
           row->retry_at != 0;
}

/* row's path with its prefix olddir replaced by newdir (malloc'd), or a
 * copy when it is elsewhere (an import's archive). NULL: no memory. */
static char *moved_path(const char *path, const char *olddir,
                        const char *newdir)
{
    size_t n = strlen(olddir);
    char *p = NULL;

    if (strncmp(path, olddir, n) != 0 || (path[n] && path[n] != '/'))
        return strdup(path);
    if (asprintf(&p, "%s%s", newdir, path + n) < 0)
        return NULL;
    return p;
}

/* The row changed first, then the directory: see rekey.h. */
static int rekey(weft_catalog *cat, const weft_trace_row *row,
                 const char *olddir, const char *traces, char *err,
                 size_t errlen)
{
    char *key = NULL, *newdir = NULL, *path = NULL;
    int rc;

    if (asprintf(&key, "%s-%0*" PRIx64, row->key, TAG_DIGITS,
                 weft_spool_key_random()) < 0)
        key = NULL;
    if (!key || asprintf(&newdir, "%s/%s", traces, key) < 0 ||
        !(path = moved_path(row->path, olddir, newdir))) {
        rc = WEFT_ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rc = weft_catalog_trace_rekey(cat, row->key, key, path);
    if (rc < 0) {
        snprintf(err, errlen, "%s", weft_catalog_errmsg(cat));
        goto out;
    }
    if (rename(olddir, newdir) != 0) {
        int e = errno;
        rc = WEFT_EIO;
        snprintf(err, errlen, "cannot rename %s to %s: %s", olddir, newdir,
                 strerror(e));
        if (weft_catalog_trace_rekey(cat, key, row->key, row->path) < 0)
            snprintf(err, errlen, "cannot rename %s to %s (%s), nor give "
                     "its row its key back: %s", olddir, newdir, strerror(e),
                     weft_catalog_errmsg(cat));
        goto out;
    }
    rc = 1;
out:
    free(key);
    free(newdir);
    free(path);
    return rc;
}

int weft_rekey_row(weft_catalog *cat, const char *spool,
                   const weft_trace_row *row, char *err, size_t errlen)
{
    char *traces = NULL, *dir = NULL, *old = NULL;
    int rc = 0;

    if (held(row) || strchr(row->key, '/') || row->key[0] == '.' ||
        !row->key[0])
        return 0;
    if (asprintf(&traces, "%s/traces", spool) < 0 ||
        asprintf(&dir, "%s/%s", traces, row->key) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = WEFT_ENOMEM;
        goto out;
    }
    if (!weft_rekey_tagged(row->key)) {
        if (own_dir(dir))
            rc = rekey(cat, row, dir, traces, err, errlen);
        goto out;
    }
    /* A rename a crash cut short: the row has OLD-TAG, the directory
     * is still OLD (an untagged key: no trace of today has it). */
    if (own_dir(dir))
        goto out;
    old = strdup(dir);
    if (!old) {
        snprintf(err, errlen, "out of memory");
        rc = WEFT_ENOMEM;
        goto out;
    }
    old[strlen(old) - TAG_DIGITS - 1] = 0;
    if (!weft_rekey_tagged(old) && own_dir(old)) {
        if (rename(old, dir) == 0) {
            rc = 1;
        } else {
            snprintf(err, errlen, "cannot rename %s to %s: %s", old, dir,
                     strerror(errno));
            rc = WEFT_EIO;
        }
    }
out:
    free(traces);
    free(dir);
    free(old);
    return rc;
}
