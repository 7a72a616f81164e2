/* test_cli_out.c - the weft command's figures and words (cli/out.c):
 * spans of time kept to the millisecond below a minute, clock ticks as
 * exact seconds at their resolution, and the edit distance behind "did
 * you mean" (a swap of two letters counts one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "out.h"

/* Asserts that a malloc'd figure is want, and frees it. */
static void assert_fig(char *got, const char *want)
{
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_span(void **state)
{
    (void)state;
    /* the case of the issue: report's 14.183 ms, not show's "0s" */
    assert_fig(weft__cli_fmt_span(0.014183), "14.183 ms");
    assert_fig(weft__cli_fmt_span(0), "0.000 us");
    assert_fig(weft__cli_fmt_span(183e-6), "183.000 us");
    assert_fig(weft__cli_fmt_span(0.001), "1.000 ms");
    assert_fig(weft__cli_fmt_span(0.9999999), "1.000 s");
    assert_fig(weft__cli_fmt_span(2.35), "2.350 s");
    assert_fig(weft__cli_fmt_span(59.9994), "59.999 s");
    /* a minute and above: whole seconds, as fmt_duration */
    assert_fig(weft__cli_fmt_span(59.9996), "1m 00s");
    assert_fig(weft__cli_fmt_span(185.4), "3m 05s");
    assert_fig(weft__cli_fmt_span(90061), "1d 01h 01m 01s");
    assert_fig(weft__cli_fmt_span(-1), "-");
}

static void test_ticks(void **state)
{
    (void)state;
    assert_fig(weft__cli_fmt_ticks(1234567, 1000), "1234.567");
    assert_fig(weft__cli_fmt_ticks(100, 1000), "0.100");
    assert_fig(weft__cli_fmt_ticks(0, 1000), "0.000");
    assert_fig(weft__cli_fmt_ticks(5000000001ULL, 1000000000), "5.000000001");
    assert_fig(weft__cli_fmt_ticks(7, 1), "7");
    assert_fig(weft__cli_fmt_ticks(15, 10), "1.5");
    /* a TSC's 2.4 GHz: 9 decimals, never more */
    assert_fig(weft__cli_fmt_ticks(3600000000ULL, 2400000000ULL),
               "1.500000000");
    /* the largest ticks at the largest resolution do not overflow */
    assert_fig(weft__cli_fmt_ticks(UINT64_MAX, UINT64_MAX), "1.000000000");
    assert_fig(weft__cli_fmt_ticks(UINT64_MAX - 1, UINT64_MAX),
               "0.999999999");
    assert_fig(weft__cli_fmt_ticks(42, 0), "-");
}

static void test_edit_distance(void **state)
{
    static const struct { const char *a, *b; size_t d; } cases[] = {
        { "list", "list", 0 },
        /* a swap is one edit, so "wiat" is nearer "wait" than "list" */
        { "lsit", "list", 1 }, { "shwo", "show", 1 }, { "wiat", "wait", 1 },
        { "wiat", "list", 2 }, { "ab", "ba", 1 }, { "reprot", "report", 1 },
        { "ca", "abc", 3 },    /* optimal string alignment, not Damerau's 2 */
        { "lis", "list", 1 }, { "lists", "list", 1 }, { "", "wait", 4 },
        { "kitten", "sitting", 3 }, { "export", "report", 2 },
    };
    char longer[100];

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(weft__cli_edit_distance(cases[i].a, cases[i].b),
                         cases[i].d);
        assert_int_equal(weft__cli_edit_distance(cases[i].b, cases[i].a),
                         cases[i].d);
    }
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    assert_true(weft__cli_edit_distance(longer, "list") == SIZE_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_span),
        cmocka_unit_test(test_ticks),
        cmocka_unit_test(test_edit_distance),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
