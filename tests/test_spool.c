/* test_spool.c - the spool's lock, trace keys and archives outside the
 * spool (spool/spool.c): a second lock on a locked spool is refused
 * naming the holder's pid; keys give back the name and the creation
 * time; an archive_root's directories follow their trace's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"
#include "tmpdir.h"
#include "weft_errors.h"

static void test_lock(void **state)
{
    char *dir = tu_tmpdir("weft-test-spool");
    char err[512], want[128], path[256], buf[64];
    int a = -1, b = -1, fd, flags;
    ssize_t n;

    (void)state;
    assert_int_equal(weft_spool_lock(dir, "weftd", &a, err, sizeof err), 0);
    assert_true(a >= 0);
    flags = fcntl(a, F_GETFD);
    assert_true(flags & FD_CLOEXEC);
    snprintf(path, sizeof path, "%s/" WEFT_SPOOL_LOCK_FILE, dir);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    assert_true(n > 0);
    buf[n] = 0;
    snprintf(want, sizeof want, "%ld weftd\n", (long)getpid());
    assert_string_equal(buf, want);

    /* Another open file description conflicts, even in this process. */
    assert_int_equal(weft_spool_lock(dir, "weft-reindex", &b, err,
                                     sizeof err), WEFT_EEXIST);
    assert_int_equal(b, -1);
    snprintf(want, sizeof want, "spool %s is in use by weftd pid %ld", dir,
             (long)getpid());
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, path));

    weft_spool_unlock(a);
    assert_int_equal(weft_spool_lock(dir, "weft-reindex", &b, err,
                                     sizeof err), 0);
    weft_spool_unlock(b);
    tu_rmrf(dir);
    free(dir);

    /* No spool directory: an I/O error naming it. */
    assert_int_equal(weft_spool_lock("/nonexistent/spool", "weftd", &a, err,
                                     sizeof err), WEFT_EIO);
    assert_non_null(strstr(err, "/nonexistent/spool"));
}

static void test_key_parse(void **state)
{
    char name[64];
    int64_t created;

    (void)state;
    weft_spool_key_parse("my_run-20261124T004000Z-12", name, sizeof name,
                         &created);
    assert_string_equal(name, "my_run");
    assert_int_equal(created, 1795480800);
    /* A dash in the name is no stamp. */
    weft_spool_key_parse("a-b-20261124T004000Z-1", name, sizeof name,
                         &created);
    assert_string_equal(name, "a-b");
    assert_int_equal(created, 1795480800);
    weft_spool_key_parse("no-stamp-here", name, sizeof name, &created);
    assert_string_equal(name, "no-stamp-here");
    assert_int_equal(created, 0);
    weft_spool_key_parse("longname-20261124T004000Z-1", name, 5, &created);
    assert_string_equal(name, "long");
}

/* Keys end in 16 random hexadecimal digits, not a serial another user
 * could guess (#30): two keys of one name and second differ, and parse
 * back; weft_spool_reserve's directories too. */
static void test_key_random(void **state)
{
    char *a = weft_spool_key_make("my run", 1795480800, 0x1234),
         *b = weft_spool_key_make("my run", 1795480800,
                                  weft_spool_key_random()),
         *c = weft_spool_key_make("my run", 1795480800,
                                  weft_spool_key_random());
    char *dir = tu_tmpdir("weft-test-spool"), *k1, *d1, *k2, *d2, err[256];
    char traces[256], name[64];
    int64_t created;
    size_t n;

    (void)state;
    assert_string_equal(a, "my_run-20261124T004000Z-0000000000001234");
    n = strlen("my_run-20261124T004000Z-");
    assert_int_equal(strlen(b), n + 16);
    assert_int_equal(strspn(b + n, "0123456789abcdef"), 16);
    assert_string_not_equal(b, c);
    weft_spool_key_parse(b, name, sizeof name, &created);
    assert_string_equal(name, "my_run");
    assert_int_equal(created, 1795480800);

    snprintf(traces, sizeof traces, "%s/traces", dir);
    assert_int_equal(mkdir(traces, 0711), 0);
    assert_int_equal(weft_spool_reserve(dir, "imp", 1795480800, &k1, &d1,
                                        err, sizeof err), 0);
    assert_int_equal(weft_spool_reserve(dir, "imp", 1795480800, &k2, &d2,
                                        err, sizeof err), 0);
    assert_string_not_equal(k1, k2);
    assert_int_equal(strlen(k1), strlen("imp-20261124T004000Z-") + 16);
    free(k1);
    free(d1);
    free(k2);
    free(d2);
    tu_rmrf(dir);
    free(dir);
    free(a);
    free(b);
    free(c);
}

/* An archive outside the spool ([cluster] archive_root): made with its
 * link, found through it, cleared, shared and removed with its trace; a
 * key taken there is EEXIST; a link weftd did not make (elsewhere, or to
 * another key's directory) is not believed: nothing beyond it is
 * touched. */
static void test_archive_outside(void **state)
{
    char *dir = tu_tmpdir("weft-test-spool");
    char root[256], tdir[256], other[256], p[512], err[256], *a, *o;
    struct stat st;
    int fd;

    (void)state;
    snprintf(root, sizeof root, "%s/shared/weft", dir);
    snprintf(tdir, sizeof tdir, "%s/traces/k1", dir);
    snprintf(p, sizeof p, "%s/traces", dir);
    assert_int_equal(mkdir(p, 0711), 0);
    assert_int_equal(mkdir(tdir, 0700), 0);
    assert_int_equal(weft_spool_archive_make(root, "k1", tdir, err,
                                             sizeof err), 0);
    assert_int_equal(stat(root, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0711);
    snprintf(p, sizeof p, "%s/k1/archive", root);
    a = weft_spool_archive_dir(tdir);
    assert_string_equal(a, p);
    free(a);
    o = weft_spool_archive_outside(tdir);
    snprintf(p, sizeof p, "%s/k1", root);
    assert_string_equal(o, p);
    free(o);
    assert_int_equal(lstat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    /* the key taken there: another trace directory cannot have it */
    snprintf(other, sizeof other, "%s/traces/k1b", dir);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(weft_spool_archive_make(root, "k1", other, err,
                                             sizeof err), WEFT_EEXIST);
    /* cleared: its files go, its directory stays */
    snprintf(p, sizeof p, "%s/k1/archive/traces.otf2", root);
    fd = open(p, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    weft_spool_archive_clear(tdir);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/k1/archive", root);
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* removed with its trace */
    weft_spool_trace_remove(tdir);
    assert_int_equal(access(tdir, F_OK), -1);
    snprintf(p, sizeof p, "%s/k1", root);
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(access(root, F_OK), 0);

    /* a link to another key's directory, or a relative one: not believed */
    assert_int_equal(weft_spool_archive_make(root, "k2", other, err,
                                             sizeof err), 0);
    snprintf(p, sizeof p, "%s/archive", other);  /* k1b -> k2: foreign */
    o = weft_spool_archive_outside(other);
    assert_null(o);
    a = weft_spool_archive_dir(other);
    assert_string_equal(a, p);
    free(a);
    weft_spool_trace_remove(other);
    assert_int_equal(access(other, F_OK), -1);
    snprintf(p, sizeof p, "%s/k2/archive", root);
    assert_int_equal(access(p, F_OK), 0);  /* untouched */
    assert_int_equal(mkdir(other, 0700), 0);
    snprintf(p, sizeof p, "%s/archive", other);
    assert_int_equal(symlink("../k2/archive", p), 0);
    assert_null(weft_spool_archive_outside(other));
    weft_spool_archive_clear(other);  /* the link only */
    assert_int_equal(lstat(p, &st), -1);
    snprintf(p, sizeof p, "%s/k2/archive", root);
    assert_int_equal(access(p, F_OK), 0);

    /* no link: the archive is in the spool */
    snprintf(p, sizeof p, "%s/archive", other);
    a = weft_spool_archive_dir(other);
    assert_string_equal(a, p);
    free(a);
    assert_null(weft_spool_archive_outside(other));
    /* a root that cannot be made */
    snprintf(p, sizeof p, "%s/file", dir);
    fd = open(p, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    strcat(p, "/root");
    assert_int_equal(weft_spool_archive_make(p, "k3", other, err,
                                             sizeof err), WEFT_EIO);
    assert_non_null(strstr(err, "archive_root"));
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_key_parse),
        cmocka_unit_test(test_key_random),
        cmocka_unit_test(test_archive_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
