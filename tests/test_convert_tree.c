/* test_convert_tree.c - conversion of a process tree's trace
 * (daemon/convert/convert.c's Hello checks, otf2defs.c's location
 * groups) on hand-written member journals.
 *
 * The members of a process tree (Hello.tree, size 0) convert into one
 * location group per process named "PROG (pid N)", created by the group
 * of the member with its parent's pid that joined last before it (pids
 * are reused), undefined for the root and for a member whose parent is
 * no member; libotf2's reader, otf2-print -Werror and python3's otf2
 * module read them back; a rank beyond the members that joined (a join
 * that failed) converts. A trace whose Hellos mix tree and fixed-size
 * members and a tree Hello with a size are corrupt journals, named by
 * file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "convert_util.h"
#include "testutil.h"
#include "weft_errors.h"

#define NPROCS 6
#define MAX_STRINGS 64

/* make starts cc1 (pid 101) and, through an untraced shell (999), as;
 * pid 101 comes back as a second cc1, whose child (104) must be given to
 * it, not to the first; the last member has no command. */
static const tree_proc procs[NPROCS] = {
    { 100, 50, "make -j2", 1 },
    { 101, 100, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet a.c", 1 },
    { 102, 999, "as -o a.o", 1 },
    { 101, 100, "  cc1 b.c", 1 },
    { 104, 101, "./tool", 1 },
    { 105, 104, "", 1 },
};

static const char *const want_name[NPROCS] = {
    "make (pid 100)", "cc1 (pid 101)", "as (pid 102)", "cc1 (pid 101)",
    "tool (pid 104)", "process (pid 105)",
};

static const uint64_t want_creator[NPROCS] = {
    OTF2_UNDEFINED_LOCATION_GROUP, 0, OTF2_UNDEFINED_LOCATION_GROUP, 0, 3, 4,
};

/* The location groups read back. */
typedef struct groups {
    char *strings[MAX_STRINGS];
    size_t n;
    OTF2_StringRef name[NPROCS];
    uint64_t creator[NPROCS];
} groups;

static OTF2_CallbackCode on_string(void *ud, OTF2_StringRef self,
                                   const char *s)
{
    groups *g = ud;

    if (self < MAX_STRINGS)
        g->strings[self] = strdup(s);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *ud, OTF2_LocationGroupRef self,
                                  OTF2_StringRef name,
                                  OTF2_LocationGroupType type,
                                  OTF2_SystemTreeNodeRef parent,
                                  OTF2_LocationGroupRef creator)
{
    groups *g = ud;

    (void)type;
    (void)parent;
    if (self >= NPROCS)
        return OTF2_CALLBACK_INTERRUPT;
    g->name[self] = name;
    g->creator[self] = creator;
    g->n++;
    return OTF2_CALLBACK_SUCCESS;
}

/* Reads the location groups of the archive in dir into g. */
static void read_groups(const char *dir, groups *g)
{
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();

    assert_non_null(cb);
    memset(g, 0, sizeof *g);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_group);
    assert_int_equal(OTF2_Reader_Close(read_global_defs(dir, cb, g)),
                     OTF2_SUCCESS);
}

static void free_groups(groups *g)
{
    for (size_t i = 0; i < MAX_STRINGS; i++)
        free(g->strings[i]);
}

/* Member `rank` as p says, with a batch of Enter/Leave pairs. */
static void write_proc(const ctx *c, uint32_t rank, uint32_t size,
                       const tree_proc *p)
{
    weft_journal *j = open_journal(c, rank);
    weft_record defs[] = { str(0, "main"), region(0, 0, 1),
                           region(1, 0, 2), region(2, 0, 3) };

    append_hello_tree(j, rank, size, p);
    append_defs(j, defs, sizeof defs / sizeof defs[0]);
    append_pairs(j, 0, 1, 1000 + rank, 0);
    weft_journal_close(j);
}

static void test_tree_groups(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "tree", NPROCS, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    groups g;

    for (uint32_t r = 0; r < NPROCS; r++)
        write_proc(c, r, 0, &procs[r]);
    convert_ok(&in, &res);
    assert_int_equal(res.members, NPROCS);
    assert_int_equal(res.events, NPROCS * 2 * PAR_PAIRS);
    /* The catalog's location rows say the process and program. */
    assert_int_equal(res.nlocations, NPROCS);
    assert_string_equal(res.locations[3].process, "cc1 (pid 101)");
    assert_string_equal(res.locations[3].program, "cc1");
    assert_string_equal(res.locations[5].process, "process (pid 105)");
    assert_string_equal(res.locations[5].program, "");
    weft_convert_result_free(&res);
    read_groups(c->archive, &g);
    assert_int_equal(g.n, NPROCS);
    for (size_t i = 0; i < NPROCS; i++) {
        assert_true(g.name[i] < MAX_STRINGS);
        assert_string_equal(g.strings[g.name[i]], want_name[i]);
        assert_int_equal(g.creator[i], want_creator[i]);
    }
    free_groups(&g);
    if (have_otf2_print())
        assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                             "traces.otf2 && otf2-print -G traces.otf2 | "
                             "grep -q 'LOCATION_GROUP .*\"tool (pid 104)\"'",
                             c->archive), 0);
    /* python3's otf2 module gives each group its creator. */
    assert_int_equal(run("cd '%s' && /usr/bin/python3 -c 'import otf2; "
                         "r = otf2.reader.Reader(\"traces.otf2\"); "
                         "g = {x.name: x.creating_location_group for x in "
                         "r.definitions.location_groups}; "
                         "assert g[\"tool (pid 104)\"].name == "
                         "\"cc1 (pid 101)\", g; "
                         "assert g[\"make (pid 100)\"] is None; "
                         "assert g[\"as (pid 102)\"] is None'",
                         c->archive), 0);
}

/* A fixed-size trace keeps "Process R", created by nobody. */
static void test_fixed_size_groups(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "mpi", 2, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    tree_proc p[2] = { { 100, 50, "lulesh", 0 }, { 101, 100, "lulesh", 0 } };
    groups g;
    char name[32];

    for (uint32_t r = 0; r < 2; r++)
        write_proc(c, r, 2, &p[r]);
    convert_ok(&in, &res);
    assert_null(res.locations[1].process);
    weft_convert_result_free(&res);
    read_groups(c->archive, &g);
    assert_int_equal(g.n, 2);
    for (uint32_t i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "Process %" PRIu32, i);
        assert_string_equal(g.strings[g.name[i]], name);
        assert_int_equal(g.creator[i], OTF2_UNDEFINED_LOCATION_GROUP);
    }
    free_groups(&g);
}

/* Converts what the journals hold, expecting it to fail as corrupt with
 * a message that holds want. */
static void convert_corrupt(const ctx *c, uint32_t members, const char *want)
{
    weft_convert_input in = { c->trace, c->archive, "bad", members, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;

    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ECORRUPT);
    if (!strstr(res.error, want))
        fail_msg("error \"%s\" lacks \"%s\"", res.error, want);
    weft_convert_result_free(&res);
    assert_int_equal(run("cd '%s' && rm -rf spool/rank-*.wj archive",
                         c->dir), 0);
}

/* A fixed-size member among tree members, and the other way round. */
static void test_mixed_tree(void **state)
{
    ctx *c = *state;
    tree_proc fixed = procs[1];

    fixed.tree = 0;
    write_proc(c, 0, 0, &procs[0]);
    write_proc(c, 1, 2, &fixed);
    convert_corrupt(c, 2, "/rank-1.wj: entry at offset 8: Hello of a "
                    "fixed-size trace's member, the Hellos before it of a "
                    "process tree's");
    fixed = procs[0];
    fixed.tree = 0;
    write_proc(c, 0, 2, &fixed);
    write_proc(c, 1, 0, &procs[1]);
    convert_corrupt(c, 2, "/rank-1.wj: entry at offset 8: Hello of a "
                    "process tree's member, the Hellos before it are not");
}

/* A tree Hello that gives a size is corrupt; a rank beyond the members
 * that joined is not (weftd does not give again the rank of a join that
 * failed): its group is the next one, created by its parent's. */
static void test_tree_sizes(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "gap", 2, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    groups g;

    write_proc(c, 0, 3, &procs[0]);
    convert_corrupt(c, 0, "/rank-0.wj: entry at offset 8: Hello of a "
                    "process tree says the trace has 3 members, "
                    "expected 0");
    write_proc(c, 0, 0, &procs[0]);
    write_proc(c, 2, 0, &procs[1]);
    convert_ok(&in, &res);
    assert_int_equal(res.members, 2);
    assert_int_equal(res.locations[1].id, UINT64_C(2) << 32);
    weft_convert_result_free(&res);
    read_groups(c->archive, &g);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.strings[g.name[1]], "cc1 (pid 101)");
    assert_int_equal(g.creator[1], 0);
    free_groups(&g);
    if (have_otf2_print())
        assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                             "traces.otf2", c->archive), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, conv_setup, conv_teardown)
    const struct CMUnitTest tests[] = {
        T(test_tree_groups),
        T(test_fixed_size_groups),
        T(test_mixed_tree),
        T(test_tree_sizes),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
