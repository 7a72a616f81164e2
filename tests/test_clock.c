/* test_clock.c - clock arithmetic (proto/clock.c): the offset estimate of
 * round-trip samples (smallest round trip wins, unusable samples skipped,
 * error bound), the zero test that keeps same-host times exact, tick to
 * ns scaling (TSC frequencies, rounding, saturation), and ClockOffset
 * interpolation as OTF2 readers apply it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clock.h"
#include "weft_errors.h"

#define NS 1000000000u

static void test_best_picks_smallest_rtt(void **state)
{
    /* Client clock = server clock - 5 s; the second sample is the
     * tightest (rtt 100 ns) and its server time is exactly mid + 5 s. */
    weft_clock_sample s[3] = {
        { 1000, 3000, 5 * (uint64_t)NS + 1500 + 700 }, /* rtt 2000 */
        { 4000, 4100, 5 * (uint64_t)NS + 4050 },       /* rtt 100 */
        { 6000, 7000, 5 * (uint64_t)NS + 6000 },       /* rtt 1000 */
    };
    weft_clock_estimate e;

    (void)state;
    assert_int_equal(weft_clock_best(s, 3, NS, &e), 0);
    assert_int_equal(e.time, 4050);
    assert_int_equal(e.offset, 5 * (int64_t)NS);
    assert_int_equal(e.error_ns, 50 + 1); /* rtt/2 + one tick of rounding */
    assert_false(weft_clock_is_zero(&e));
}

static void test_best_negative_offset(void **state)
{
    weft_clock_sample s = { 10 * (uint64_t)NS, 10 * (uint64_t)NS + 200,
                            7 * (uint64_t)NS + 100 };
    weft_clock_estimate e;

    (void)state;
    assert_int_equal(weft_clock_best(&s, 1, NS, &e), 0);
    assert_int_equal(e.offset, -3 * (int64_t)NS);
}

static void test_best_skips_backwards(void **state)
{
    weft_clock_sample bad = { 5000, 4000, 1 };
    weft_clock_sample two[2] = { { 5000, 4000, 1 }, { 10, 30, 20 } };
    weft_clock_estimate e;

    (void)state;
    assert_int_equal(weft_clock_best(&bad, 1, NS, &e), WEFT_ENOTFOUND);
    assert_int_equal(weft_clock_best(NULL, 0, NS, &e), WEFT_ENOTFOUND);
    assert_int_equal(weft_clock_best(two, 2, NS, &e), 0);
    assert_int_equal(e.time, 20);
    assert_int_equal(e.offset, 0);
}

/* One clock (same host): the server reads it between send and receive,
 * so the estimate is within its error bound of 0, wherever in the round
 * trip the server answered. */
static void test_same_clock_is_zero(void **state)
{
    weft_clock_estimate e;

    (void)state;
    for (uint64_t at = 1000; at <= 1777; at++) {
        weft_clock_sample s = { 1000, 1777, at };
        assert_int_equal(weft_clock_best(&s, 1, NS, &e), 0);
        assert_true(weft_clock_is_zero(&e));
    }
    {
        weft_clock_sample s = { 1000, 1777, 1777 + 2 };
        assert_int_equal(weft_clock_best(&s, 1, NS, &e), 0);
        assert_false(weft_clock_is_zero(&e));
    }
}

/* A TSC at 2.5 GHz: ticks are scaled to ns for the offset. */
static void test_best_tsc(void **state)
{
    const uint64_t hz = 2500000000u;
    weft_clock_sample s = { 2500000000u, 2500000250u, 42 * (uint64_t)NS };
    weft_clock_estimate e;

    (void)state;
    assert_int_equal(weft_clock_best(&s, 1, hz, &e), 0);
    assert_int_equal(e.time, 2500000125u);
    /* mid = 1 s + 50 ns */
    assert_int_equal(e.offset, 41 * (int64_t)NS - 50);
    assert_int_equal(e.error_ns, 50 + 0 + 0);
}

static void test_ticks_to_ns(void **state)
{
    (void)state;
    assert_int_equal(weft_clock_ticks_to_ns(123, NS), 123);
    assert_int_equal(weft_clock_ticks_to_ns(123, 0), 123);
    assert_int_equal(weft_clock_ticks_to_ns(3, 2000000000u), 2); /* 1.5 up */
    assert_int_equal(weft_clock_ticks_to_ns(1, 3000000000u), 0);
    assert_int_equal(weft_clock_ticks_to_ns(1000, 1000u), NS);
    assert_int_equal(weft_clock_ticks_to_ns(UINT64_MAX, 1000u), UINT64_MAX);
    /* A day of a 3.1 GHz TSC: exact to the ns. */
    assert_int_equal(weft_clock_ticks_to_ns(86400ull * 3100000000ull,
                                            3100000000u),
                     86400ull * NS);
    /* Monotonic: consecutive ticks never go back. */
    for (uint64_t t = 1000000; t < 1001000; t++)
        assert_true(weft_clock_ticks_to_ns(t + 1, 2899999999u) >=
                    weft_clock_ticks_to_ns(t, 2899999999u));
}

static void test_offset_at(void **state)
{
    weft_clock_point p[3] = { { 1000, 100 }, { 2000, 300 }, { 4000, -100 } };

    (void)state;
    assert_int_equal(weft_clock_offset_at(NULL, 0, 5), 0);
    assert_int_equal(weft_clock_offset_at(p, 1, 0), 100);
    assert_int_equal(weft_clock_offset_at(p, 1, 99999), 100);
    /* Before the first point and after the last, the nearest interval
     * goes on (slope 0.2, then -0.2), as in libotf2's reader. */
    assert_int_equal(weft_clock_offset_at(p, 3, 0), -100);
    assert_int_equal(weft_clock_offset_at(p, 3, 1000), 100);
    assert_int_equal(weft_clock_offset_at(p, 3, 1500), 200);  /* between */
    assert_int_equal(weft_clock_offset_at(p, 3, 2000), 300);
    assert_int_equal(weft_clock_offset_at(p, 3, 3000), 100);
    assert_int_equal(weft_clock_offset_at(p, 3, 3500), 0);
    assert_int_equal(weft_clock_offset_at(p, 3, 4000), -100);
    assert_int_equal(weft_clock_offset_at(p, 3, 9000), -1100);
    assert_int_equal(weft_clock_offset_at(p, 2, 9000), 1700);
    /* Rounded like rint: 1/3 ns steps. */
    {
        weft_clock_point q[2] = { { 0, 0 }, { 3, 1 } };
        assert_int_equal(weft_clock_offset_at(q, 2, 1), 0);
        assert_int_equal(weft_clock_offset_at(q, 2, 2), 1);
    }
}

/* Start and end offsets of a client whose clock runs 100 ppm slow and
 * 5 s behind: interpolation maps its times onto the server's. */
static void test_drift_between_offsets(void **state)
{
    weft_clock_point p[2] = { { 10 * (uint64_t)NS, 5 * (int64_t)NS },
                              { 20 * (uint64_t)NS,
                                5 * (int64_t)NS + 1000000 } };

    (void)state;
    assert_int_equal(weft_clock_offset_at(p, 2, 15 * (uint64_t)NS),
                     5 * (int64_t)NS + 500000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_best_picks_smallest_rtt),
        cmocka_unit_test(test_best_negative_offset),
        cmocka_unit_test(test_best_skips_backwards),
        cmocka_unit_test(test_same_clock_is_zero),
        cmocka_unit_test(test_best_tsc),
        cmocka_unit_test(test_ticks_to_ns),
        cmocka_unit_test(test_offset_at),
        cmocka_unit_test(test_drift_between_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
