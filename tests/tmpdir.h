/* tmpdir.h - scratch directories for the unit tests: every test makes its
 * temporary files in a directory of its own under $TMPDIR (/tmp when
 * TMPDIR is unset or empty) and removes it when done. Header-only
 * (static inline), included by testutil.h or alone by tests that need
 * nothing else of it. Include after cmocka.h.
 */
#ifndef WEFT_TMPDIR_H
#define WEFT_TMPDIR_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where scratch files go: $TMPDIR, or /tmp when it is unset or empty. */
static inline const char *tu_tmpbase(void)
{
    const char *tmp = getenv("TMPDIR");

    return tmp && *tmp ? tmp : "/tmp";
}

/* "dir/name" in a new string the caller frees. */
static inline char *tu_path(const char *dir, const char *name)
{
    char *p = NULL;

    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* A new empty directory TAG.XXXXXX in tu_tmpbase(). The caller removes
 * it with tu_rmrf and frees the path. */
static inline char *tu_tmpdir(const char *tag)
{
    char *dir = NULL;

    assert_true(asprintf(&dir, "%s/%s.XXXXXX", tu_tmpbase(), tag) > 0);
    if (!mkdtemp(dir))
        fail_msg("mkdtemp %s: %s", dir, strerror(errno));
    return dir;
}

static inline int tu__remove(const char *path, const struct stat *st,
                             int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    if (remove(path) != 0) {
        print_error("remove %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Removes dir and everything below it (links are removed, not followed). */
static inline void tu_rmrf(const char *dir)
{
    assert_int_equal(nftw(dir, tu__remove, 16, FTW_DEPTH | FTW_PHYS), 0);
}

#endif
