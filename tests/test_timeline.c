/* test_timeline.c - the timeline summary of a location (summary/timeline.c):
 * bins start at the first note, a bin's dominant is the region with the
 * most exclusive time in it (idle time counts as "no region"), a note
 * far ahead fills the bins between with the region open all along,
 * full bins merge in pairs and the width doubles (the merged bin keeps
 * the heavier dominant, or the sum of one), a bin with more regions
 * than candidates still finds its heavy one, the result does not depend
 * on how often the same region is noted, and a location without a
 * timeline ignores notes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "timeline.h"
#include "weft_errors.h"

#define NONE WEFT_TIMELINE_NONE

/* The dominant region id of bin i (NONE for idle). */
static uint32_t bin(const weft_timeline *tl, uint32_t i)
{
    assert_true(i < tl->n);
    return tl->bins[i] - 1;
}

static void test_first_bins(void **state)
{
    weft_timeline tl;

    (void)state;
    assert_int_equal(weft_timeline_init(&tl, 16, 10), 0);
    assert_int_equal(tl.cap, 16);
    weft_timeline_note(&tl, NONE, 100);  /* first: starts at 100 */
    assert_int_equal(tl.first, 100);
    /* bin 0 [100,110): region 1 for 3, region 2 for 7 */
    weft_timeline_note(&tl, 1, 103);
    weft_timeline_note(&tl, 2, 110);
    /* bin 1 [110,120): region 2 for 4, region 5 for 6 */
    weft_timeline_note(&tl, 2, 114);
    weft_timeline_note(&tl, 5, 120);
    /* bin 2 [120,130): idle for 6, region 1 for 4 */
    weft_timeline_note(&tl, NONE, 126);
    weft_timeline_finish(&tl, 1, 130);
    assert_int_equal(tl.n, 3);
    assert_int_equal(tl.width, 10);
    assert_int_equal(bin(&tl, 0), 2);
    assert_int_equal(bin(&tl, 1), 5);
    assert_int_equal(bin(&tl, 2), NONE);
    assert_null(tl.ticks);
    weft_timeline_free(&tl);
}

static void test_span_fills_bins(void **state)
{
    weft_timeline tl;

    (void)state;
    assert_int_equal(weft_timeline_init(&tl, 64, 10), 0);
    weft_timeline_note(&tl, NONE, 0);
    weft_timeline_note(&tl, NONE, 2);
    /* region 7 open from 2 to 45: bins 0..3 are its, bin 4 [40,50) has
     * 5 of it and 5 of region 3: equal, the lower id wins */
    weft_timeline_note(&tl, 7, 45);
    weft_timeline_finish(&tl, 3, 50);
    assert_int_equal(tl.n, 5);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(bin(&tl, i), 7);
    assert_int_equal(bin(&tl, 4), 3);
    weft_timeline_free(&tl);
}

static void test_doubling_merges_pairs(void **state)
{
    weft_timeline tl;

    (void)state;
    assert_int_equal(weft_timeline_init(&tl, 4, 10), 0);
    weft_timeline_note(&tl, NONE, 0);
    /* bins of 10: a=1 [0,10), b=2 [10,20) mostly, 2 [20,30), 3 [30,40):
     * closing the 4th merges to width 20: (1|2) -> the heavier 2 has 6
     * vs 10... */
    weft_timeline_note(&tl, 1, 10);   /* bin 0: 1 x10 */
    weft_timeline_note(&tl, 2, 16);   /* bin 1: 2 x6 */
    weft_timeline_note(&tl, 4, 20);   /*        4 x4 */
    weft_timeline_note(&tl, 2, 30);   /* bin 2: 2 x10 */
    weft_timeline_note(&tl, 3, 40);   /* bin 3: 3 x10 -> merge */
    assert_int_equal(tl.width, 20);
    assert_int_equal(tl.n, 2);
    /* (1 x10 | 2 x6) -> 1; (2 x10 | 3 x10) -> equal: the first stays */
    assert_int_equal(bin(&tl, 0), 1);
    assert_int_equal(bin(&tl, 1), 2);
    /* the open bin is [40,60) */
    assert_int_equal(tl.end, 60);
    weft_timeline_note(&tl, 2, 50);
    weft_timeline_note(&tl, 2, 60);  /* closes [40,60): 2 x20 */
    weft_timeline_note(&tl, 2, 65);
    weft_timeline_note(&tl, 3, 80);  /* [60,80): 2 x5, 3 x15 -> merge */
    assert_int_equal(tl.width, 40);
    assert_int_equal(tl.n, 2);
    /* (1|2) -> 1 x10 vs 2 x10 -> 1 (first); (2 x20 | 3 x15) -> 2 */
    assert_int_equal(bin(&tl, 0), 1);
    assert_int_equal(bin(&tl, 1), 2);
    weft_timeline_finish(&tl, NONE, 90);
    assert_int_equal(tl.n, 3);
    assert_int_equal(bin(&tl, 2), NONE);  /* [80,120): idle 10 */
    weft_timeline_free(&tl);
}

static void test_same_region_merges_sum(void **state)
{
    weft_timeline tl;

    (void)state;
    assert_int_equal(weft_timeline_init(&tl, 2, 100), 0);
    weft_timeline_note(&tl, NONE, 0);
    /* bin 0: 5 x60, 6 x40; bin 1: 5 x60, 7 x40 -> merged: 5 x120 */
    weft_timeline_note(&tl, 5, 60);
    weft_timeline_note(&tl, 6, 100);
    weft_timeline_note(&tl, 5, 160);
    weft_timeline_note(&tl, 7, 200);
    assert_int_equal(tl.n, 1);
    assert_int_equal(tl.width, 200);
    assert_int_equal(bin(&tl, 0), 5);
    assert_int_equal(tl.ticks[0], 120);
    weft_timeline_finish(&tl, NONE, 200);
    /* ended where the open bin starts: it is not a bin */
    assert_int_equal(tl.n, 1);
    weft_timeline_free(&tl);
}

static void test_many_regions_in_a_bin(void **state)
{
    weft_timeline tl;
    uint64_t t = 0;

    (void)state;
    assert_int_equal(weft_timeline_init(&tl, 8, 100000), 0);
    weft_timeline_note(&tl, NONE, 0);
    /* 40 regions of 1 tick each, region 99 with 10 ticks each time it
     * comes, in slots that collide */
    for (uint32_t r = 0; r < 40; r++) {
        t += 1;
        weft_timeline_note(&tl, r * 8, t);
        t += 10;
        weft_timeline_note(&tl, 99, t);
    }
    weft_timeline_finish(&tl, NONE, t);
    assert_int_equal(tl.n, 1);
    assert_int_equal(bin(&tl, 0), 99);
    weft_timeline_free(&tl);
}

/* Noting the same region many times with small steps gives what one note
 * over the whole span gives. */
static void test_steps_equal_span(void **state)
{
    weft_timeline a, b;

    (void)state;
    assert_int_equal(weft_timeline_init(&a, 32, 7), 0);
    assert_int_equal(weft_timeline_init(&b, 32, 7), 0);
    weft_timeline_note(&a, NONE, 3);
    weft_timeline_note(&b, NONE, 3);
    for (uint64_t t = 4; t <= 2000; t++)
        weft_timeline_note(&a, (uint32_t)(t / 300), t);
    for (uint64_t t = 300; t <= 2000; t += 300)
        weft_timeline_note(&b, (uint32_t)(t / 300) - 1, t - 1);
    weft_timeline_finish(&a, NONE, 2000);
    weft_timeline_finish(&b, 6, 2000);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.width, b.width);
    assert_true(a.n <= 32);
    assert_true(a.first + (uint64_t)a.n * a.width >= 2000);
    for (uint32_t i = 0; i < a.n; i++)
        assert_int_equal(a.bins[i], b.bins[i]);
    weft_timeline_free(&a);
    weft_timeline_free(&b);
}

static void test_bounds(void **state)
{
    weft_timeline tl;

    (void)state;
    assert_int_equal(weft_timeline_init(&tl, 1000, 0), 0);
    assert_int_equal(tl.cap, 512);  /* a power of two */
    assert_int_equal(tl.width, 1);
    weft_timeline_note(&tl, 1, 0);
    weft_timeline_note(&tl, 1, UINT64_C(1) << 40);  /* many doublings */
    assert_true(tl.n <= 512 && tl.n >= 256);
    for (uint32_t i = 0; i < tl.n; i++)
        assert_int_equal(bin(&tl, i), 1);
    weft_timeline_finish(&tl, NONE, UINT64_C(1) << 40);
    weft_timeline_free(&tl);
    /* no timeline (init not called, or free'd): notes change nothing */
    weft_timeline_note(&tl, 1, 5);
    weft_timeline_note(&tl, 2, 50);
    weft_timeline_finish(&tl, NONE, 60);
    assert_int_equal(tl.n, 0);
    assert_null(tl.bins);
    /* nothing noted: no bins */
    assert_int_equal(weft_timeline_init(&tl, 8, 10), 0);
    weft_timeline_finish(&tl, NONE, 60);
    assert_int_equal(tl.n, 0);
    weft_timeline_free(&tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_bins),
        cmocka_unit_test(test_span_fills_bins),
        cmocka_unit_test(test_doubling_merges_pairs),
        cmocka_unit_test(test_same_region_merges_sum),
        cmocka_unit_test(test_many_regions_in_a_bin),
        cmocka_unit_test(test_steps_equal_span),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
