/* test_idset.c - the set of defined ids (daemon/idset.c): an empty set
 * has nothing, ids are found once added and their neighbours are not,
 * the bitmap grows (doubling) for an id far beyond it and keeps what it
 * held, the limit refuses an id without touching the set, and a freed
 * set is empty and usable again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idset.h"
#include "weft_errors.h"

static void test_empty(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_false(weft_idset_has(&s, 0));
    assert_false(weft_idset_has(&s, 1u << 20));
    assert_false(weft_idset_has(&s, UINT64_MAX));
    weft_idset_free(&s);  /* nothing to free: fine */
}

static void test_add_has(void **state)
{
    weft_idset s = { 0 };
    const uint64_t ids[] = { 0, 7, 8, 9, 1023 };

    (void)state;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        assert_int_equal(weft_idset_add(&s, ids[i], 1u << 20), 0);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        assert_true(weft_idset_has(&s, ids[i]));
    assert_false(weft_idset_has(&s, 1));
    assert_false(weft_idset_has(&s, 6));
    assert_false(weft_idset_has(&s, 10));
    assert_false(weft_idset_has(&s, 1022));
    assert_false(weft_idset_has(&s, 1024));
    assert_int_equal(s.cap, 1024);  /* all fit in the first bitmap */
    /* Adding twice is fine. */
    assert_int_equal(weft_idset_add(&s, 7, 1u << 20), 0);
    assert_true(weft_idset_has(&s, 7));
    weft_idset_free(&s);
}

static void test_grows(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_int_equal(weft_idset_add(&s, 3, 1u << 30), 0);
    assert_int_equal(weft_idset_add(&s, 100000, 1u << 30), 0);
    assert_true(s.cap > 100000);
    assert_int_equal(s.cap & (s.cap - 1), 0);  /* a power of two */
    assert_true(weft_idset_has(&s, 3));
    assert_true(weft_idset_has(&s, 100000));
    assert_false(weft_idset_has(&s, 99999));
    assert_false(weft_idset_has(&s, 100001));
    /* The new part of the bitmap starts empty. */
    for (uint64_t id = 1024; id < s.cap; id++)
        if (id != 100000)
            assert_false(weft_idset_has(&s, id));
    weft_idset_free(&s);
}

static void test_limit(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_int_equal(weft_idset_add(&s, 16, 16), WEFT_ELIMIT);
    assert_int_equal(s.cap, 0);  /* untouched */
    assert_null(s.bits);
    assert_int_equal(weft_idset_add(&s, 15, 16), 0);
    assert_int_equal(weft_idset_add(&s, UINT64_MAX, 16), WEFT_ELIMIT);
    assert_true(weft_idset_has(&s, 15));
    assert_false(weft_idset_has(&s, 16));
    weft_idset_free(&s);
}

static void test_free_reuse(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_int_equal(weft_idset_add(&s, 5000, 1u << 20), 0);
    weft_idset_free(&s);
    assert_null(s.bits);
    assert_int_equal(s.cap, 0);
    assert_false(weft_idset_has(&s, 5000));
    assert_int_equal(weft_idset_add(&s, 2, 1u << 20), 0);
    assert_true(weft_idset_has(&s, 2));
    assert_false(weft_idset_has(&s, 5000));
    weft_idset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_add_has),
        cmocka_unit_test(test_grows),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_free_reuse),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
