/* test_diskres.c - the spool's free-disk reserve (daemon/traces/diskres.c):
 * nothing is refused with no reserve (and statvfs is then not called);
 * what is free is looked at once per WEFT_DISKRES_INTERVAL_MS, the bytes
 * taken in between counted against it, so that a burst is refused before
 * the next look; the refusal names min_free_spool_bytes, the spool and
 * the figures; a failed look keeps the last figure (none: nothing
 * refused); the real statvfs answers for an existing directory. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "diskres.h"
#include "weft_errors.h"

static uint64_t fake_avail;
static int fake_rc;
static unsigned fake_calls;

static int fake_stat(const char *path, uint64_t *avail)
{
    (void)path;
    fake_calls++;
    if (fake_rc < 0)
        return fake_rc;
    *avail = fake_avail;
    return 0;
}

static void reset(weft_diskres *r, uint64_t avail)
{
    memset(r, 0, sizeof *r);
    r->stat = fake_stat;
    fake_avail = avail;
    fake_rc = 0;
    fake_calls = 0;
}

static void test_off(void **state)
{
    weft_diskres r;
    char err[256];

    (void)state;
    reset(&r, 0);
    assert_int_equal(weft_diskres_check(&r, "/spool", 0, 5000, 0, 1u << 30, err,
                                        sizeof err), 0);
    assert_int_equal(fake_calls, 0);
}

static void test_reserve(void **state)
{
    weft_diskres r;
    char err[256];

    (void)state;
    reset(&r, 10000);
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5000, 0, 6000, err,
                                        sizeof err), 0);
    assert_int_equal(fake_calls, 1);
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5000, 0, 6001, err,
                                        sizeof err), WEFT_ELIMIT);
    assert_non_null(strstr(err, "min_free_spool_bytes is 4000"));
    assert_non_null(strstr(err, "(/spool) has 10000 bytes free"));
    /* Taken since the look: counted until the next one. */
    weft_diskres_take(&r, 5000);
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5500, 0, 1000, err,
                                        sizeof err), 0);
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5500, 0, 1001, err,
                                        sizeof err), WEFT_ELIMIT);
    weft_diskres_take(&r, 6000);  /* past all of it: 0 free, not below */
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5900, 0, 0, err,
                                        sizeof err), WEFT_ELIMIT);
    assert_non_null(strstr(err, "has 0 bytes free"));
    assert_int_equal(fake_calls, 1);  /* one look per interval */
    /* The next look sees what was freed meanwhile. */
    fake_avail = 9000;
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000,
                                        5000 + WEFT_DISKRES_INTERVAL_MS, 0, 5000,
                                        err, sizeof err), 0);
    assert_int_equal(fake_calls, 2);
    assert_int_equal(r.since, 0);
}

/* Under twice the reserve, one user may take half of what is left above
 * it; above that, any share. */
static void test_share(void **state)
{
    weft_diskres r;
    char err[256];

    (void)state;
    reset(&r, 10000);
    assert_int_equal(weft_diskres_share(&r, 7, 4000, 0, 9000, 100, err,
                                        sizeof err), 0);  /* not looked */
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5000, 0, 0, err,
                                        sizeof err), 0);
    /* 10000 free >= 2 x 4000: no share */
    assert_int_equal(weft_diskres_share(&r, 7, 4000, 0, 9000, 100, err,
                                        sizeof err), 0);
    weft_diskres_take(&r, 3000);  /* 7000 free: 3000 above, 1500 each */
    assert_int_equal(weft_diskres_share(&r, 7, 4000, 0, 1400, 100, err,
                                        sizeof err), 0);
    assert_int_equal(weft_diskres_share(&r, 7, 4000, 0, 1400, 101, err,
                                        sizeof err), WEFT_ELIMIT);
    assert_non_null(strstr(err, "uid 7's recording traces are charged 1400"));
    assert_non_null(strstr(err, "min_free_spool_bytes (4000)"));
    assert_int_equal(weft_diskres_share(&r, 7, 0, 0, 1400, 101, err,
                                        sizeof err), 0);  /* no reserve */
    /* Archives promised count as taken: 1000 above, 500 each. */
    assert_int_equal(weft_diskres_share(&r, 7, 4000, 2000, 400, 100, err,
                                        sizeof err), 0);
    assert_int_equal(weft_diskres_share(&r, 7, 4000, 2000, 400, 101, err,
                                        sizeof err), WEFT_ELIMIT);
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5000, 2000,
                                        1000, err, sizeof err), 0);
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 5000, 2000,
                                        1001, err, sizeof err), WEFT_ELIMIT);
    assert_non_null(strstr(err, "has 5000 bytes free, the archives"));
}

static void test_stat_fails(void **state)
{
    weft_diskres r;
    char err[256];

    (void)state;
    reset(&r, 100);
    fake_rc = -EACCES;
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000, 1000, 0, 0, err,
                                        sizeof err), 0);  /* never known */
    assert_int_equal(r.err, EACCES);
    fake_rc = 0;
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000,
                                        1000 + WEFT_DISKRES_INTERVAL_MS, 0, 0,
                                        err, sizeof err), WEFT_ELIMIT);
    fake_rc = -EIO;  /* the last figure stays */
    fake_avail = 1u << 30;
    assert_int_equal(weft_diskres_check(&r, "/spool", 4000,
                                        1000 + 2 * WEFT_DISKRES_INTERVAL_MS, 0,
                                        0, err, sizeof err), WEFT_ELIMIT);
    assert_int_equal(r.err, EIO);
}

static void test_statvfs(void **state)
{
    uint64_t avail = 0;

    (void)state;
    assert_int_equal(weft_diskres_statvfs(".", &avail), 0);
    assert_true(avail > 0);
    assert_int_equal(weft_diskres_statvfs("/nonexistent/weft", &avail),
                     -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_stat_fails),
        cmocka_unit_test(test_statvfs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
