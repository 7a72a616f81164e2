/* tmpdir.h - scratch directories for the unit tests: every test makes its
 * temporary files in a directory of its own under $TMPDIR (/tmp when
 * TMPDIR is unset or empty) and removes it when done; tu_scratch is the
 * whole fixture of a test that needs no more than that. Header-only
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

/* The fixture of a test that needs a scratch directory and the name of
 * one file in it. */
typedef struct tu_scratch {
    char *dir;   /* removed, with what it holds, by tu_scratch_teardown */
    char *path;  /* dir/FILE, not created */
} tu_scratch;

/* A cmocka setup's work: *state becomes a tu_scratch with a new
 * directory TAG.XXXXXX and path its FILE. */
static inline int tu_scratch_setup(void **state, const char *tag,
                                   const char *file)
{
    tu_scratch *s = calloc(1, sizeof *s);

    assert_non_null(s);
    s->dir = tu_tmpdir(tag);
    s->path = tu_path(s->dir, file);
    *state = s;
    return 0;
}

/* The cmocka teardown of tu_scratch_setup. */
static inline int tu_scratch_teardown(void **state)
{
    tu_scratch *s = *state;

    tu_rmrf(s->dir);
    free(s->path);
    free(s->dir);
    free(s);
    return 0;
}

#endif
