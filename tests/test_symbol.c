/* test_symbol.c - what libweft-instrument says about a function besides
 * its symbol (recorders/instrument/symbol.c): C++ symbols demangled and
 * anything else left alone, and the source file and lines of functions
 * of this very test (built with -g) from its own DWARF: the line of the
 * name, the closing brace, code inlined from further down the file not
 * counted, the file's path absolute; a function of a module without
 * DWARF has none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "symbol.h"

static void test_demangle(void **state)
{
    static const struct {
        const char *sym, *want; /* want NULL: not demangled */
    } cases[] = {
        { "_ZN2ns6Solver4stepEi", "ns::Solver::step(int)" },
        { "_Z5twiceIdET_S0_", "double twice<double>(double)" },
        { "_Z3fibj.constprop.0", "fib(unsigned int) [clone .constprop.0]" },
        { "main", NULL },
        { "i", NULL }, /* a type, not a symbol */
        { "_Z", NULL },
        { "_Zqqq", NULL },
        { "", NULL },
    };

    (void)state;
    assert_null(weft__demangle(NULL));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = weft__demangle(cases[i].sym);

        if (cases[i].want)
            assert_string_equal(got, cases[i].want);
        else
            assert_null(got);
        free(got);
    }
}

/* ---- source lines: the functions looked up ---- */

static inline int helper_below(int x) __attribute__((always_inline));

static const int sample_begin = __LINE__ + 1;
__attribute__((noinline)) int sample(int x);
__attribute__((noinline)) int sample(int x)
{
    int y = helper_below(x);

    __asm__ volatile("" : "+r"(y));
    return y + 1;
}
static const int sample_end = __LINE__ - 1;

static const int oneline_line = __LINE__ + 1;
__attribute__((noinline)) int oneline(int x); __attribute__((noinline)) int oneline(int x) { __asm__ volatile("" : "+r"(x)); return x; }

/* Inlined into sample: its lines are not sample's. */
static inline int helper_below(int x)
{
    int z = x * 7;

    __asm__ volatile("" : "+r"(z));
    return z;
}

static char *no_path;

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                        Dwarf_Addr base, const char *file_name,
                        const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
    (void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_debuginfo,
    .debuginfo_path = &no_path,
};

static int setup(void **state)
{
    Dwfl *d = dwfl_begin(&callbacks);

    if (!d)
        return -1;
    dwfl_report_begin(d);
    if (dwfl_linux_proc_report(d, getpid()) != 0 ||
        dwfl_report_end(d, NULL, NULL) != 0) {
        dwfl_end(d);
        return -1;
    }
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    dwfl_end(*state);
    return 0;
}

static void lookup(Dwfl *d, uintptr_t a, weft__srcloc *loc, int want_rc)
{
    Dwfl_Module *m = dwfl_addrmodule(d, a);

    assert_non_null(m);
    assert_int_equal(weft__srcloc_of(m, a, loc), want_rc);
}

static void assert_this_file(char *file)
{
    size_t n, k = strlen("tests/test_symbol.c");

    assert_non_null(file);
    /* Absolute (the unit's directory joined), without "." or "..". */
    assert_true(file[0] == '/');
    assert_null(strstr(file, "/./"));
    assert_null(strstr(file, "/../"));
    n = strlen(file);
    assert_true(n >= k);
    assert_string_equal(file + n - k, "tests/test_symbol.c");
    free(file);
}

static void test_lines(void **state)
{
    weft__srcloc loc;

    assert_int_equal(sample(1), 8);
    lookup(*state, (uintptr_t)sample, &loc, 0);
    assert_this_file(loc.file);
    assert_int_equal(loc.begin_line, sample_begin + 1); /* the definition */
    assert_int_equal(loc.end_line, sample_end);

    assert_int_equal(oneline(1), 1);
    lookup(*state, (uintptr_t)oneline, &loc, 0);
    assert_this_file(loc.file);
    assert_int_equal(loc.begin_line, oneline_line);
    assert_int_equal(loc.end_line, oneline_line);

    lookup(*state, (uintptr_t)teardown, &loc, 0);
    assert_this_file(loc.file);
    assert_true(loc.begin_line > 0 && loc.end_line > loc.begin_line);
}

/* libc has no DWARF here (no separate debug files are read). */
static void test_no_dwarf(void **state)
{
    weft__srcloc loc = { NULL, 1, 1 };

    lookup(*state, (uintptr_t)getpid, &loc, -1);
    assert_null(loc.file);
    assert_int_equal(loc.begin_line, 0);
    assert_int_equal(loc.end_line, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demangle),
        cmocka_unit_test_setup_teardown(test_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_dwarf, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
