/* test_config.c - weftd configuration: defaults, file, flags, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weftd_config.h"
#include "weft_errors.h"

static char *write_file(const char *text)
{
    static char path[64];
    FILE *f;
    int fd;

    strcpy(path, "/tmp/weft-test-config-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_defaults(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    assert_string_equal(c.listen, WEFT_DEFAULT_LISTEN);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_non_null(strstr(c.catalog, "/catalog.db"));
    assert_int_equal(strncmp(c.catalog, c.spool, strlen(c.spool)), 0);
    weft_config_free(&c);
}

static void test_file_and_override(void **state)
{
    weft_config c;
    char err[256];
    char *path = write_file("; comment\n[weftd]\nlisten = 127.0.0.1:9999\n"
                            "spool = /tmp/x\nlog_level = debug\n"
                            "[limits]\nmax_frame = 64k\nmax_connections = 7\n");

    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, path, 0, err, sizeof err), 0);
    assert_string_equal(c.listen, "127.0.0.1:9999");
    assert_int_equal(c.max_frame, 65536);
    assert_int_equal(c.max_connections, 7);
    assert_int_equal(c.log_level, 3);
    assert_int_equal(weft_config_set(&c, "weftd", "spool", "/tmp/y", err,
                                     sizeof err), 0);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_string_equal(c.catalog, "/tmp/y/catalog.db");
    weft_config_free(&c);
    unlink(path);
}

static void expect_file_error(const char *text, const char *needle)
{
    weft_config c;
    char err[512];
    char *path = write_file(text);

    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, path, 0, err, sizeof err),
                     WEFT_ECONFIG);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not mention '%s'", err, needle);
    weft_config_free(&c);
    unlink(path);
}

static void test_file_errors(void **state)
{
    expect_file_error("[weftd]\nlisten = a:1\nbogus = 1\n", ":3: unknown key 'bogus'");
    expect_file_error("[limits]\nmax_frame = lots\n", "max_frame = 'lots'");
    expect_file_error("[limits]\nmax_frame = 12\n", "must be between");
    expect_file_error("[limits]\n\nmax_connections = 4k\n", ":3:");
    expect_file_error("[weftd]\nlog_level = loud\n", "log_level");
    expect_file_error("[weftd]\nthis is not ini\n", ":2:");
    expect_file_error("[other]\nlisten = x:1\n", "section [other]");
}

static void test_missing_file(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, "/nonexistent/weftd.conf", 1,
                                           err, sizeof err), 0);
    assert_int_equal(weft_config_load_file(&c, "/nonexistent/weftd.conf", 0,
                                           err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "/nonexistent/weftd.conf"));
    weft_config_free(&c);
}

static void test_finish_checks(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    weft_config_set(&c, "weftd", "listen", "nocolon", err, sizeof err);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "HOST:PORT"));
    weft_config_set(&c, "weftd", "listen", "", err, sizeof err);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "nothing to listen on"));
    weft_config_free(&c);
}

static void test_print_roundtrip(void **state)
{
    weft_config a, b;
    char err[256], *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char *path;

    weft_config_init(&a);
    weft_config_set(&a, "limits", "max_locations", "99", err, sizeof err);
    weft_config_finish(&a, err, sizeof err);
    weft_config_print(&a, f);
    fclose(f);
    path = write_file(buf);
    weft_config_init(&b);
    assert_int_equal(weft_config_load_file(&b, path, 0, err, sizeof err), 0);
    assert_int_equal(b.max_locations, 99);
    assert_string_equal(b.catalog, a.catalog);
    free(buf);
    unlink(path);
    weft_config_free(&a);
    weft_config_free(&b);
}

/* The shipped etc/weftd.conf parses and states the built-in defaults. */
static void test_shipped_file(void **state)
{
    weft_config a, b;
    char err[256], path[4096];
    const char *src = getenv("WEFT_SRCDIR");

    snprintf(path, sizeof path, "%s/etc/weftd.conf", src ? src : ".");
    weft_config_init(&a);
    weft_config_init(&b);
    assert_int_equal(weft_config_load_file(&a, path, 0, err, sizeof err), 0);
    assert_int_equal(a.max_frame, b.max_frame);
    assert_string_equal(a.listen, b.listen);
    weft_config_free(&a);
    weft_config_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_file_and_override),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_finish_checks),
        cmocka_unit_test(test_print_roundtrip),
        cmocka_unit_test(test_shipped_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
