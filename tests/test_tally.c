/* test_tally.c - counting lock calls (recorders/pthread/tally.c): a try
 * that got its lock within the threshold is counted, one over it or with
 * no room left is recorded, a failed one is busy; the held stack forgets
 * the latest acquisition of a lock in any order and refuses beyond
 * PT_TALLY_HELD_MAX; counts add calls and ticks, and ticks become ns
 * (recorders/callcount.h); a try that got a robust mutex from a dead
 * owner is recorded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "callcount.h"
#include "tally.h"

static void test_verdict(void **state)
{
    (void)state;
    assert_int_equal(pt_tally_verdict(0, 0, 10000, 1), PT_COUNT);
    assert_int_equal(pt_tally_verdict(0, 10000, 10000, 1), PT_COUNT);
    assert_int_equal(pt_tally_verdict(0, 10001, 10000, 1), PT_RECORD);
    assert_int_equal(pt_tally_verdict(0, 5, 10000, 0), PT_RECORD);
    assert_int_equal(pt_tally_verdict(EBUSY, 5, 10000, 1), PT_BUSY);
    assert_int_equal(pt_tally_verdict(EBUSY, 50000, 10000, 1), PT_BUSY);
    assert_int_equal(pt_tally_verdict(EAGAIN, 5, 10000, 1), PT_BUSY);
    /* a robust mutex's dead owner: held, recorded, not tried again */
    assert_int_equal(pt_tally_verdict(EOWNERDEAD, 5, 10000, 1), PT_RECORD);
    /* WEFT_LOCK_THRESHOLD_NS=0: only a try that took no tick is counted */
    assert_int_equal(pt_tally_verdict(0, 1, 0, 1), PT_RECORD);
    assert_int_equal(pt_tally_verdict(0, 0, 0, 1), PT_COUNT);
}

static void test_held(void **state)
{
    static pt_tally_held h;
    static int a, b, c, x[PT_TALLY_HELD_MAX];

    (void)state;
    assert_false(pt_tally_release(&h, &a));
    assert_true(pt_tally_hold(&h, &a));
    assert_true(pt_tally_hold(&h, &b));
    assert_true(pt_tally_hold(&h, &a)); /* recursive */
    assert_true(pt_tally_hold(&h, &c));
    /* out of order: a (latest), then b, a, c */
    assert_true(pt_tally_release(&h, &a));
    assert_int_equal(h.n, 3);
    assert_ptr_equal(h.lock[0], &a);
    assert_ptr_equal(h.lock[1], &b);
    assert_ptr_equal(h.lock[2], &c);
    assert_true(pt_tally_release(&h, &b));
    assert_true(pt_tally_release(&h, &a));
    assert_false(pt_tally_release(&h, &a));
    assert_true(pt_tally_release(&h, &c));
    assert_int_equal(h.n, 0);
    for (int i = 0; i < PT_TALLY_HELD_MAX; i++)
        assert_true(pt_tally_hold(&h, &x[i]));
    assert_false(pt_tally_hold(&h, &a));
    assert_int_equal(h.n, PT_TALLY_HELD_MAX);
    assert_false(pt_tally_release(&h, &a));
    assert_true(pt_tally_release(&h, &x[0]));
    assert_ptr_equal(h.lock[0], &x[1]);
}

static void test_counts(void **state)
{
    callcount c = { 0, 0 };

    (void)state;
    for (int i = 0; i < 1000; i++)
        callcount_add(&c, 30);
    assert_int_equal(c.calls, 1000);
    assert_int_equal(c.ticks, 30000);
    assert_int_equal(callcount_ns(12345, 1000000000u), 12345);
    assert_int_equal(callcount_ns(3000, 3000000000u), 1000);
    assert_int_equal(callcount_ns(1, 1000u), 1000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_held),
        cmocka_unit_test(test_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
