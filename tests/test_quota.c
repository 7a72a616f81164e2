/* test_quota.c - each user's bytes in the spool (daemon/traces/quota.c): live
 * journal bytes and stored bytes add up per uid and apart from other
 * uids; a release never goes below zero; the check refuses what would go
 * past max (0: no bound) naming the key; a catalog count replaces the
 * stored figures but keeps what was stored while it ran, and a failed
 * count keeps the old figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "quota.h"
#include "weft_errors.h"

static void test_live_and_stored(void **state)
{
    weft_quota q = { 0 };

    (void)state;
    assert_int_equal(weft_quota_used(&q, 1000), 0);
    assert_int_equal(weft_quota_live(&q, 1001, 500), 0);
    assert_int_equal(weft_quota_live(&q, 1000, 100), 0);
    assert_int_equal(weft_quota_stored(&q, 1000, 30), 0);
    assert_int_equal(weft_quota_live(&q, 999, 7), 0);
    assert_int_equal(weft_quota_used(&q, 1000), 130);
    assert_int_equal(weft_quota_used(&q, 1001), 500);
    assert_int_equal(weft_quota_used(&q, 999), 7);
    assert_int_equal(q.live_total, 607);
    assert_int_equal(weft_quota_live_of(&q, 1000), 100);
    assert_int_equal(weft_quota_promised(&q), 607 / 4 * 3);
    /* what recording traces wrote of their archives is promised no more */
    weft_quota_streamed(&q, 100);
    assert_int_equal(weft_quota_promised(&q), 607 / 4 * 3 - 100);
    weft_quota_streamed(&q, 1000);
    assert_int_equal(weft_quota_promised(&q), 0);
    weft_quota_streamed(&q, -2000);
    assert_int_equal(q.streamed, 0);
    assert_int_equal(weft_quota_promised(&q), 607 / 4 * 3);
    assert_int_equal(q.users.n, 3);
    {
        const weft_quota_user *u =
            weft_uidmap_at(&q.users, 0, sizeof *u);
        assert_true(u[0].uid < u[1].uid && u[1].uid < u[2].uid);
    }
    assert_int_equal(weft_quota_live(&q, 1000, -100), 0);
    assert_int_equal(weft_quota_used(&q, 1000), 30);
    assert_int_equal(weft_quota_live(&q, 1000, -100), 0);  /* not below */
    assert_int_equal(weft_quota_used(&q, 1000), 30);
    assert_int_equal(q.live_total, 507);
    weft_quota_free(&q);
    assert_int_equal(q.users.n, 0);
}

static void test_check(void **state)
{
    weft_quota q = { 0 };
    char err[256];

    (void)state;
    assert_int_equal(weft_quota_live(&q, 1001, 900), 0);
    assert_int_equal(weft_quota_check(&q, 1001, 1000, 100, err, sizeof err),
                     0);
    err[0] = 0;
    assert_int_equal(weft_quota_check(&q, 1001, 1000, 101, err, sizeof err),
                     WEFT_ELIMIT);
    assert_non_null(strstr(err, "max_user_spool_bytes is 1000"));
    assert_non_null(strstr(err, "uid 1001 has 900 bytes"));
    /* Another uid is not charged bob's bytes. */
    assert_int_equal(weft_quota_check(&q, 1000, 1000, 1000, err, sizeof err),
                     0);
    /* 0: no bound; a huge `more` does not wrap around. */
    assert_int_equal(weft_quota_check(&q, 1001, 0, UINT64_MAX, err,
                                      sizeof err), 0);
    assert_int_equal(weft_quota_check(&q, 1001, 1000, UINT64_MAX, err,
                                      sizeof err), WEFT_ELIMIT);
    /* At max, nothing more (as a new trace is refused at max). */
    assert_int_equal(weft_quota_live(&q, 1001, 100), 0);
    assert_int_equal(weft_quota_check(&q, 1001, 1000, 0, err, sizeof err),
                     WEFT_ELIMIT);
    weft_quota_free(&q);
}

static void test_count(void **state)
{
    weft_quota q = { 0 };
    const weft_quota_sum sums[] = { { 1000, 5000 }, { 1002, 42 } };

    (void)state;
    assert_int_equal(weft_quota_stored(&q, 1000, 100), 0);
    assert_int_equal(weft_quota_stored(&q, 1001, 100), 0);
    assert_int_equal(weft_quota_live(&q, 1001, 10), 0);
    weft_quota_count_begin(&q);
    /* Stored while the job reads the catalog: kept after it. */
    assert_int_equal(weft_quota_stored(&q, 1001, 7), 0);
    weft_quota_count_end(&q, sums, 2, 1);
    assert_int_equal(weft_quota_used(&q, 1000), 5000);
    assert_int_equal(weft_quota_used(&q, 1001), 7 + 10);  /* live kept */
    assert_int_equal(weft_quota_used(&q, 1002), 42);
    /* A failed count changes nothing. */
    weft_quota_count_begin(&q);
    weft_quota_count_end(&q, NULL, 0, 0);
    assert_int_equal(weft_quota_used(&q, 1000), 5000);
    assert_int_equal(q.counting, 0);
    weft_quota_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_and_stored),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
