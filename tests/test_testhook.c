/* test_testhook.c - WEFT_TEST_STOP_AT (daemon/testhook.h): what weftd
 * takes and refuses, and that only the N-th arrival at the phase named
 * would stop (arrivals before it, and at other phases, go on; the stop
 * itself, SIGSTOP, is tests/e2e_phases.sh's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testhook.h"
#include "weft_errors.h"

static int init(const char *value, weft_testhook *h, char *err, size_t len)
{
    if (value)
        setenv("WEFT_TEST_STOP_AT", value, 1);
    else
        unsetenv("WEFT_TEST_STOP_AT");
    err[0] = '\0';
    return weft_testhook_init(h, err, len);
}

static void test_values(void **state)
{
    static const char *const bad[] = { "bogus", "unify:", "unify:0",
                                       "unify:x", "unify:2x", ":3",
                                       "commit:-1", "streams",
                                       "unify:99999999999999999999999" };
    weft_testhook h;
    char err[256];

    (void)state;
    assert_int_equal(init(NULL, &h, err, sizeof err), 0);
    assert_false(h.on);
    assert_int_equal(init("", &h, err, sizeof err), 0);
    assert_false(h.on);
    assert_int_equal(init("stream", &h, err, sizeof err), 0);
    assert_true(h.on);
    assert_string_equal(h.phase, "stream");
    assert_int_equal(h.at, 1);
    assert_int_equal(init("committed:7", &h, err, sizeof err), 0);
    assert_string_equal(h.phase, "committed");
    assert_int_equal(h.at, 7);
    assert_int_equal(init("hello:2", &h, err, sizeof err), 0);
    assert_string_equal(h.phase, "hello");
    assert_int_equal(h.at, 2);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(init(bad[i], &h, err, sizeof err), WEFT_ECONFIG);
        assert_false(h.on);
        assert_non_null(strstr(err, "WEFT_TEST_STOP_AT="));
        assert_non_null(strstr(err, bad[i]));
    }
}

/* Arrivals are counted at the phase named only; the 3rd would stop, so
 * two arrivals and any number elsewhere return. */
static void test_counts(void **state)
{
    weft_testhook h;
    char err[256];

    (void)state;
    assert_int_equal(init("defs:3", &h, err, sizeof err), 0);
    weft_testhook_reach(&h, "unify");
    weft_testhook_reach(&h, "commit");
    weft_testhook_reach(&h, "defs");
    weft_testhook_reach(&h, "unify");
    weft_testhook_reach(&h, "defs");
    assert_int_equal(h.seen, 2);
    weft_testhook_reach(NULL, "defs");
    assert_int_equal(init(NULL, &h, err, sizeof err), 0);
    weft_testhook_reach(&h, "defs");
    assert_int_equal(h.seen, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
