/* test_ifilter.c - WEFT_FILTER (client/ifilter.c): the empty filter
 * includes everything; signs, bare patterns, globs, blanks around rules
 * and first-match-wins, also for a function with two names (a C++
 * function's demangled name and symbol); every malformed list (empty rule, sign without a
 * pattern, blank inside a pattern, unclosed '[', lone '\', too many rules,
 * too long a pattern) is refused with a message naming the rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ifilter.h"
#include "weft_errors.h"

/* Parses spec, which must be valid. */
static weft__ifilter parse_ok(const char *spec)
{
    weft__ifilter f;
    char err[256];
    int rc = weft__ifilter_parse(spec, &f, err, sizeof err);

    if (rc != 0)
        fail_msg("'%s' refused: %s", spec ? spec : "(null)", err);
    return f;
}

/* Parses spec, which must be refused with a message containing `want`. */
static void parse_bad(const char *spec, const char *want)
{
    weft__ifilter f = { 0, NULL };
    char err[256];

    assert_int_equal(weft__ifilter_parse(spec, &f, err, sizeof err),
                     WEFT_EINVAL);
    assert_int_equal(f.n, 0);
    assert_null(f.rules);
    if (!strstr(err, want))
        fail_msg("'%s': message '%s' lacks '%s'", spec, err, want);
}

static void test_empty(void **state)
{
    weft__ifilter f;

    (void)state;
    f = parse_ok(NULL);
    assert_int_equal(f.n, 0);
    assert_true(weft__ifilter_match(&f, "anything"));
    f = parse_ok("");
    assert_int_equal(f.n, 0);
    f = parse_ok("  \t ");
    assert_int_equal(f.n, 0);
    assert_true(weft__ifilter_match(&f, "main"));
    weft__ifilter_free(&f);
}

static void test_exclude(void **state)
{
    weft__ifilter f = parse_ok("-helper_*");

    (void)state;
    assert_int_equal(f.n, 1);
    assert_false(weft__ifilter_match(&f, "helper_square"));
    assert_false(weft__ifilter_match(&f, "helper_"));
    assert_true(weft__ifilter_match(&f, "main"));
    assert_true(weft__ifilter_match(&f, "my_helper_x"));
    weft__ifilter_free(&f);
    weft__ifilter_free(&f); /* idempotent */
}

static void test_first_match_wins(void **state)
{
    weft__ifilter f = parse_ok(" +main , solve?, -* ");

    (void)state;
    assert_int_equal(f.n, 3);
    assert_true(f.rules[0].include);
    assert_string_equal(f.rules[0].pattern, "main");
    assert_true(f.rules[1].include);
    assert_string_equal(f.rules[1].pattern, "solve?");
    assert_false(f.rules[2].include);
    assert_true(weft__ifilter_match(&f, "main"));
    assert_true(weft__ifilter_match(&f, "solve1"));
    assert_false(weft__ifilter_match(&f, "solve12"));
    assert_false(weft__ifilter_match(&f, "fib"));
    weft__ifilter_free(&f);

    f = parse_ok("-fib,+fib,[a-c]x,-[!a-c]x");
    assert_false(weft__ifilter_match(&f, "fib"));
    assert_true(weft__ifilter_match(&f, "bx"));
    assert_false(weft__ifilter_match(&f, "dx"));
    assert_true(weft__ifilter_match(&f, "other"));
    weft__ifilter_free(&f);

    /* Escapes and a ']' first in a bracket are glob syntax, not errors. */
    f = parse_ok("-a\\*b,-[]x]y");
    assert_false(weft__ifilter_match(&f, "a*b"));
    assert_true(weft__ifilter_match(&f, "axb"));
    assert_false(weft__ifilter_match(&f, "]y"));
    assert_false(weft__ifilter_match(&f, "xy"));
    weft__ifilter_free(&f);

    /* Unresolved functions are named "module+0xoffset". */
    f = parse_ok("-libfoo.so+*");
    assert_false(weft__ifilter_match(&f, "libfoo.so+0x1139"));
    assert_true(weft__ifilter_match(&f, "foo"));
    weft__ifilter_free(&f);
}

/* A C++ function has two names: a rule applies when it matches either,
 * the first rule that applies decides. */
static void test_two_names(void **state)
{
    weft__ifilter f = parse_ok("+ns::Solver::step(int), -ns::*, -_ZN2ns5twice*");
    const char *step = "_ZN2ns6Solver4stepEi";

    (void)state;
    assert_true(weft__ifilter_match2(&f, "ns::Solver::step(int)", step));
    assert_false(weft__ifilter_match2(&f, "ns::scale(long)", "_ZN2ns5scaleEl"));
    assert_false(weft__ifilter_match2(&f, "int twice<int>(int)",
                                      "_ZN2ns5twiceIiEET_S1_"));
    assert_true(weft__ifilter_match2(&f, "int twice<int>(int)", NULL));
    assert_true(weft__ifilter_match2(&f, "main", "main"));
    weft__ifilter_free(&f);
    f = parse_ok("-_ZN2ns6Solver4stepEi, +ns::*, -*");
    /* The symbol's rule comes first: it decides. */
    assert_false(weft__ifilter_match2(&f, "ns::Solver::step(int)", step));
    assert_true(weft__ifilter_match2(&f, "ns::scale(long)", "_ZN2ns5scaleEl"));
    assert_false(weft__ifilter_match2(&f, "main", "main"));
    weft__ifilter_free(&f);
}

static void test_malformed(void **state)
{
    char many[(WEFT__IFILTER_MAX_RULES + 1) * 2 + 1];
    char big[WEFT__IFILTER_MAX_PATTERN + 3];
    weft__ifilter f;

    (void)state;
    parse_bad("a,,b", "rule 2 ('') is empty");
    parse_bad(",a", "rule 1 ('') is empty");
    parse_bad("a,", "rule 2 ('') is empty");
    parse_bad("a, ,b", "rule 2 ('') is empty");
    parse_bad("-foo,+", "rule 2 ('+') has no pattern");
    parse_bad("-", "rule 1 ('-') has no pattern");
    parse_bad("-foo -bar", "rule 1 ('-foo -bar') contains a blank");
    parse_bad("a,-x[ab", "rule 2 ('-x[ab') has a '[' without a closing ']'");
    parse_bad("-x[]", "without a closing ']'");
    parse_bad("x\\", "ends with a lone '\\'");

    /* Exactly the limit of rules is fine, one more is not. */
    for (size_t i = 0; i < WEFT__IFILTER_MAX_RULES; i++) {
        many[2 * i] = 'a';
        many[2 * i + 1] = ',';
    }
    many[2 * WEFT__IFILTER_MAX_RULES - 1] = '\0';
    f = parse_ok(many);
    assert_int_equal(f.n, WEFT__IFILTER_MAX_RULES);
    weft__ifilter_free(&f);
    many[2 * WEFT__IFILTER_MAX_RULES - 1] = ',';
    many[2 * WEFT__IFILTER_MAX_RULES] = 'b';
    many[2 * WEFT__IFILTER_MAX_RULES + 1] = '\0';
    parse_bad(many, "is one too many");

    /* A pattern of the limit's length is fine (the sign does not count). */
    big[0] = '-';
    memset(big + 1, 'x', WEFT__IFILTER_MAX_PATTERN);
    big[WEFT__IFILTER_MAX_PATTERN + 1] = '\0';
    f = parse_ok(big);
    weft__ifilter_free(&f);
    big[WEFT__IFILTER_MAX_PATTERN + 1] = 'x';
    big[WEFT__IFILTER_MAX_PATTERN + 2] = '\0';
    parse_bad(big, "is too long");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_exclude),
        cmocka_unit_test(test_first_match_wins),
        cmocka_unit_test(test_two_names),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
