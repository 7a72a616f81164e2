/* test_iopath.c - libweft-io's file names: the path a program gave made
 * absolute and cleaned without the kernel (recorders/io/path.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "path.h"

/* io_path_clean(dir, path) into a buffer of len bytes: rc and name. */
static int clean(const char *dir, const char *path, size_t len, char *out)
{
    return io_path_clean(dir, path, out, len);
}

static void expect(const char *dir, const char *path, const char *want)
{
    char out[256];

    assert_int_equal(clean(dir, path, sizeof out, out), 0);
    assert_string_equal(out, want);
}

static void test_absolute(void **state)
{
    (void)state;
    expect("/ignored", "/usr/include/stdio.h", "/usr/include/stdio.h");
    expect(NULL, "/a//b///c", "/a/b/c");
    expect(NULL, "/a/./b/.", "/a/b");
    expect(NULL, "/a/b/", "/a/b");
    expect(NULL, "/", "/");
    expect(NULL, "//", "/");
    expect(NULL, "/.", "/");
}

static void test_relative(void **state)
{
    (void)state;
    expect("/home/u/src", "x.c", "/home/u/src/x.c");
    expect("/home/u/src", "./x.c", "/home/u/src/x.c");
    expect("/home/u/src/", "sub//x.c", "/home/u/src/sub/x.c");
    expect("/", "x", "/x");
    expect("/home/u", ".", "/home/u");
    expect("/home/u", "./", "/home/u");
}

static void test_dotdot(void **state)
{
    (void)state;
    expect("/home/u/src", "../include/x.h", "/home/u/include/x.h");
    expect("/home/u/src", "sub/../x.c", "/home/u/src/x.c");
    expect(NULL, "/a/b/../../c", "/c");
    /* never above the root */
    expect(NULL, "/..", "/");
    expect(NULL, "/../../etc/passwd", "/etc/passwd");
    expect("/a", "../../..", "/");
    /* a component that only starts with dots is a name */
    expect("/a", "..x/.y/...", "/a/..x/.y/...");
}

static void test_refused(void **state)
{
    char out[64] = "junk";

    (void)state;
    assert_int_equal(clean("/a", "", sizeof out, out), -1);
    assert_string_equal(out, "");
    assert_int_equal(clean("/a", NULL, sizeof out, out), -1);
    /* a relative path needs an absolute directory */
    assert_int_equal(clean(NULL, "x", sizeof out, out), -1);
    assert_int_equal(clean("", "x", sizeof out, out), -1);
    assert_int_equal(clean("rel/dir", "x", sizeof out, out), -1);
    assert_int_equal(clean("/a", "x", 0, out), -1);
}

/* The name and its NUL must fit: exactly len - 1 characters do. */
static void test_length(void **state)
{
    char out[8];

    (void)state;
    assert_int_equal(clean(NULL, "/abcdef", sizeof out, out), 0);
    assert_string_equal(out, "/abcdef");
    assert_int_equal(clean(NULL, "/abcdefg", sizeof out, out), -1);
    assert_string_equal(out, "");
    assert_int_equal(clean("/abc", "defg", sizeof out, out), -1);
    assert_string_equal(out, "");
    /* what ".." takes away makes room */
    assert_int_equal(clean("/abcdef", "../xy", sizeof out, out), 0);
    assert_string_equal(out, "/xy");
    assert_int_equal(clean(NULL, "/", 2, out), 0);
    assert_string_equal(out, "/");
    assert_int_equal(clean(NULL, "/", 1, out), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absolute),
        cmocka_unit_test(test_relative),
        cmocka_unit_test(test_dotdot),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
