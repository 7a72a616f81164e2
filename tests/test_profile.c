/* test_profile.c - the region profile (summary/profile.c).
 *
 * Visits, inclusive and exclusive time of nested, recursive and
 * unprofiled frames; frames still open when a location ends; a table
 * that grows under open frames; the top rows of a location against its
 * sums; sums added across profiles; the result's order, names and
 * seconds; the inline Enter that needs no memory and when it declines;
 * the time outside any region, a row of its own (issue #32); the
 * paradigm each row says (issue #35).
 * (The profile of whole archives is tested in test_convert.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "testutil.h"
#include "unify.h"
#include "weft_errors.h"

#define NREGIONS 200

typedef struct fixture {
    weft_unifier *u;
    weft_profile p;
    weft_profile_loc l;
} fixture;

/* The paradigm and role of region i (by i % 5), and what rows say of
 * them. */
static const struct {
    OTF2_Paradigm paradigm;
    OTF2_RegionRole role;
    const char *name;
} kinds[] = {
    { OTF2_PARADIGM_COMPILER, OTF2_REGION_ROLE_FUNCTION, "compiler" },
    { OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT, "mpi" },
    { OTF2_PARADIGM_NONE, OTF2_REGION_ROLE_FILE_IO, "io" },
    { OTF2_PARADIGM_PTHREAD, OTF2_REGION_ROLE_FUNCTION, "pthread" },
    { OTF2_PARADIGM_OPENMP, OTF2_REGION_ROLE_BARRIER, "openmp" },
};
#define KINDS (sizeof kinds / sizeof kinds[0])

/* A profile of f's regions, keeping `keep` rows per location. */
static int init_profile(const fixture *f, weft_profile *p, size_t keep)
{
    return weft_profile_init(p, weft_unify_region_name,
                             weft_unify_region_paradigm, f->u, NREGIONS,
                             keep);
}

/* Regions 0..NREGIONS-1 named "r<id>", of kinds[id % KINDS]. */
static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char name[32], err[256];

    assert_non_null(f);
    f->u = weft_unify_new(0);
    assert_non_null(f->u);
    for (uint32_t i = 0; i < NREGIONS; i++) {
        weft_record s, r;
        snprintf(name, sizeof name, "r%u", i);
        s = str(i, name);
        r = region(i, i, i);
        r.u.Region.paradigm = kinds[i % KINDS].paradigm;
        r.u.Region.regionRole = kinds[i % KINDS].role;
        assert_int_equal(weft_unify_add_def(f->u, 0, &s, err, sizeof err), 0);
        assert_int_equal(weft_unify_add_def(f->u, 0, &r, err, sizeof err), 0);
    }
    assert_int_equal(init_profile(f, &f->p, 100), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    weft_profile_loc_free(&f->l);
    weft_profile_free(&f->p);
    weft_unify_free(f->u);
    free(f);
    return 0;
}

static void open_frame(fixture *f, uint32_t region, uint64_t t)
{
    assert_int_equal(weft_profile_enter(&f->p, &f->l, region, t), 0);
}

/* The row of region `name` among rows[0..n) of location loc. */
static const weft_region_row *row_of(const weft_region_row *rows, size_t n,
                                     int64_t loc, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].location == loc && !strcmp(rows[i].region, name))
            return &rows[i];
    fail_msg("no row of %s at location %lld", name, (long long)loc);
    return NULL;
}

static void free_rows(weft_region_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].region);
        free(rows[i].paradigm);
    }
    free(rows);
}

/* A calls B: B's time is A's inclusive but not exclusive time. */
static void test_nested(void **state)
{
    fixture *f = *state;

    open_frame(f, 0, 0);
    open_frame(f, 1, 10);
    weft_profile_leave(&f->l, 30);
    weft_profile_leave(&f->l, 100);
    assert_int_equal(f->l.depth, 0);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 7, 100), 0);
    assert_int_equal(f->p.sum[0].visits, 1);
    assert_int_equal(f->p.sum[0].incl, 100);
    assert_int_equal(f->p.sum[0].excl, 80);
    assert_int_equal(f->p.sum[1].visits, 1);
    assert_int_equal(f->p.sum[1].incl, 20);
    assert_int_equal(f->p.sum[1].excl, 20);
    /* Rows by exclusive time, most first; the tables are freed. */
    assert_int_equal(f->p.nrows, 2);
    assert_string_equal(f->p.rows[0].region, "r0");
    assert_string_equal(f->p.rows[0].paradigm, "compiler");
    assert_int_equal(f->p.rows[0].location, 7);
    assert_string_equal(f->p.rows[1].region, "r1");
    assert_string_equal(f->p.rows[1].paradigm, "mpi");
    assert_null(f->l.stack);
    assert_null(f->l.slots.cells);
}

/* f inside f: both visits count, the inclusive time once (the outermost
 * visit), the exclusive time of each. */
static void test_recursive(void **state)
{
    fixture *f = *state;

    open_frame(f, 3, 0);
    open_frame(f, 3, 10);
    weft_profile_leave(&f->l, 20);
    weft_profile_leave(&f->l, 50);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 50), 0);
    assert_int_equal(f->p.sum[3].visits, 2);
    assert_int_equal(f->p.sum[3].incl, 50);
    assert_int_equal(f->p.sum[3].excl, 50);
}

/* A region outside the profile has a frame (its time is not its
 * parent's exclusive time) but no row. */
static void test_unprofiled(void **state)
{
    fixture *f = *state;

    open_frame(f, 0, 0);
    open_frame(f, NREGIONS + 5, 10);
    open_frame(f, 2, 12);
    weft_profile_leave(&f->l, 14);
    weft_profile_leave(&f->l, 30);
    weft_profile_leave(&f->l, 40);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 40), 0);
    assert_int_equal(f->p.sum[0].incl, 40);
    assert_int_equal(f->p.sum[0].excl, 20);
    assert_int_equal(f->p.sum[2].excl, 2);
    assert_int_equal(f->p.nrows, 2);
}

/* What is open when the location ends is closed at its end. */
static void test_open_at_end(void **state)
{
    fixture *f = *state;

    open_frame(f, 0, 0);
    open_frame(f, 1, 40);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 100), 0);
    assert_int_equal(f->p.sum[0].incl, 100);
    assert_int_equal(f->p.sum[0].excl, 40);
    assert_int_equal(f->p.sum[1].incl, 60);
    assert_int_equal(f->l.depth, 0);
}

/* Entering every region, one inside the other, grows the table while
 * all of them are open: each frame still closes its own region. */
static void test_growth_under_open_frames(void **state)
{
    fixture *f = *state;

    for (uint32_t i = 0; i < NREGIONS; i++)
        open_frame(f, i, i);
    assert_true(f->l.slots.ncells >= NREGIONS);
    for (uint32_t i = NREGIONS; i-- > 0;)
        weft_profile_leave(&f->l, 2 * NREGIONS - i);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 0), 0);
    for (uint32_t i = 0; i < NREGIONS; i++) {
        assert_int_equal(f->p.sum[i].visits, 1);
        /* Entered at i, left at 2 * NREGIONS - i. */
        assert_int_equal(f->p.sum[i].incl, 2 * NREGIONS - 2 * i);
        assert_int_equal(f->p.sum[i].excl, 2);
    }
}

/* weft_profile_enter_fast opens a frame only when that needs no memory:
 * not for a region without a slot, nor on a full stack (l unchanged
 * then); it does for a region outside the profile, and after
 * weft_profile_enter made room. Both give the same sums. */
static void test_enter_fast(void **state)
{
    fixture *f = *state;
    weft_profile_loc before;

    assert_int_equal(weft_profile_enter_fast(&f->l, NREGIONS, 3, 0), 0);
    assert_int_equal(f->l.depth, 0);
    assert_null(f->l.stack);
    open_frame(f, 3, 0);                 /* room for 16, a slot for 3 */
    weft_profile_leave(&f->l, 5);
    before = f->l;
    assert_int_equal(weft_profile_enter_fast(&f->l, NREGIONS, 4, 5), 0);
    assert_memory_equal(&before, &f->l, sizeof before);
    assert_int_equal(weft_profile_enter_fast(&f->l, NREGIONS, 3, 5), 1);
    assert_int_equal(weft_profile_enter_fast(&f->l, NREGIONS,
                                             (uint32_t)NREGIONS + 7, 6), 1);
    assert_int_equal(f->l.stack[1].slot, WEFT_PROFILE_NO_SLOT);
    for (uint64_t t = 7; f->l.depth < f->l.cap; t++)
        assert_int_equal(weft_profile_enter_fast(&f->l, NREGIONS, 3, t), 1);
    before = f->l;
    assert_int_equal(weft_profile_enter_fast(&f->l, NREGIONS, 3, 100), 0);
    assert_memory_equal(&before, &f->l, sizeof before);
    open_frame(f, 3, 100);               /* the stack grows */
    assert_true(f->l.cap > before.cap);
    while (f->l.depth)
        weft_profile_leave(&f->l, 200);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 200), 0);
    /* 3: 0..5, then entered at 5, 7, 8, ..., 20 and 100 and all left at
     * 200: 17 visits; inclusive time 5 and that of the outermost of the
     * second lot (5..200). */
    assert_int_equal(f->p.sum[3].visits, 17);
    assert_int_equal(f->p.sum[3].incl, 5 + 195);
    assert_int_equal(f->p.sum[4].visits, 0);
}

/* A location keeps its `keep` rows of most exclusive time; the sums keep
 * every region. Equal times go by region id. */
static void test_top_rows(void **state)
{
    fixture *f = *state;

    weft_profile_free(&f->p);
    assert_int_equal(init_profile(f, &f->p, 2), 0);
    open_frame(f, 5, 0);     /* 5: 10 */
    weft_profile_leave(&f->l, 10);
    open_frame(f, 6, 10);    /* 6: 30 */
    weft_profile_leave(&f->l, 40);
    open_frame(f, 4, 40);    /* 4: 30 */
    weft_profile_leave(&f->l, 70);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 1, 70), 0);
    assert_int_equal(f->p.nrows, 2);
    assert_string_equal(f->p.rows[0].region, "r4");
    assert_string_equal(f->p.rows[1].region, "r6");
    assert_int_equal(f->p.sum[5].visits, 1);
    assert_int_equal(f->p.sum[5].excl, 10);
}

/* Two profiles of one trace add up; the result has the sums first (by
 * region id), then the rows, in seconds. */
static void test_add_and_result(void **state)
{
    fixture *f = *state;
    weft_profile other;
    weft_profile_loc l2;
    weft_region_row *rows = NULL;
    size_t n = 0;

    memset(&l2, 0, sizeof l2);
    assert_int_equal(init_profile(f, &other, 100), 0);
    open_frame(f, 1, 0);
    weft_profile_leave(&f->l, 500);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 10, 500), 0);
    assert_int_equal(weft_profile_enter(&other, &l2, 1, 0), 0);
    assert_int_equal(weft_profile_enter(&other, &l2, 0, 100), 0);
    weft_profile_leave(&l2, 350);
    weft_profile_leave(&l2, 1000);
    assert_int_equal(weft_profile_finish_loc(&other, &l2, 11, 1000), 0);
    weft_profile_add(&f->p, &other);
    assert_int_equal(f->p.sum[1].visits, 2);
    assert_int_equal(f->p.sum[1].excl, 500 + 750);

    assert_int_equal(weft_profile_result(&f->p, 1000, &rows, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].location, WEFT_PROFILE_ALL);
    assert_string_equal(rows[0].region, "r0");
    assert_string_equal(rows[0].paradigm, "compiler");
    assert_int_equal(rows[0].visits, 1);
    assert_true(rows[0].excl_s == 0.25);
    assert_int_equal(rows[1].location, WEFT_PROFILE_ALL);
    assert_string_equal(rows[1].region, "r1");
    assert_string_equal(rows[1].paradigm, "mpi");
    assert_true(rows[1].incl_s == 1.5);
    assert_true(rows[1].excl_s == 1.25);
    assert_true(row_of(rows, n, 10, "r1")->incl_s == 0.5);
    assert_string_equal(row_of(rows, n, 10, "r1")->paradigm, "mpi");
    assert_string_equal(other.rows[1].region, "r0");
    assert_string_equal(other.rows[1].paradigm, "compiler");
    assert_null(f->p.rows);
    assert_int_equal(f->p.nrows, 0);
    free_rows(rows, n);
    weft_profile_free(&other);
}

/* No Enter anywhere: no rows. */
static void test_empty_result(void **state)
{
    fixture *f = *state;
    weft_region_row *rows = (weft_region_row *)1;
    size_t n = 99;

    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 0), 0);
    assert_int_equal(weft_profile_result(&f->p, 1000000000, &rows, &n), 0);
    assert_null(rows);
    assert_int_equal(n, 0);
}

/* Time outside any frame, from the location's first event to its end,
 * is the outside row's, so that a location's rows add up to its span;
 * nested frames count once. The sums add it up over the locations. */
static void test_outside(void **state)
{
    fixture *f = *state;
    double sum = 0;
    weft_profile other;
    weft_profile_loc l2;
    weft_region_row *rows = NULL;
    size_t n = 0;

    f->l.start = 10;
    open_frame(f, 0, 20);
    open_frame(f, 1, 30);
    weft_profile_leave(&f->l, 40);
    weft_profile_leave(&f->l, 50);
    open_frame(f, 2, 60);
    weft_profile_leave(&f->l, 70);
    open_frame(f, 3, 95);    /* open at the end: closed at 100 */
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 4, 100), 0);
    assert_int_equal(f->p.outside, 90 - 30 - 10 - 5);
    assert_int_equal(f->p.nrows, 5);
    assert_string_equal(f->p.rows[4].region, WEFT_PROFILE_OUTSIDE);
    assert_string_equal(f->p.rows[4].paradigm, "");
    assert_int_equal(f->p.rows[4].visits, 0);
    assert_true(f->p.rows[4].excl_s == 45);
    assert_true(f->p.rows[4].incl_s == 45);
    for (size_t i = 0; i < f->p.nrows; i++)
        sum += f->p.rows[i].excl_s;
    assert_true(sum == 90);

    memset(&l2, 0, sizeof l2);  /* a location without frames: all of it */
    assert_int_equal(init_profile(f, &other, 100), 0);
    l2.start = 1000;
    assert_int_equal(weft_profile_finish_loc(&other, &l2, 5, 1300), 0);
    weft_profile_add(&f->p, &other);
    assert_int_equal(weft_profile_result(&f->p, 10, &rows, &n), 0);
    assert_true(row_of(rows, n, WEFT_PROFILE_ALL,    /* 45 + 300 ticks */
                       WEFT_PROFILE_OUTSIDE)->excl_s == 34.5);
    assert_string_equal(row_of(rows, n, WEFT_PROFILE_ALL,
                               WEFT_PROFILE_OUTSIDE)->paradigm, "");
    assert_string_equal(row_of(rows, n, WEFT_PROFILE_ALL, "r2")->paradigm,
                        "io");
    assert_true(row_of(rows, n, 4, WEFT_PROFILE_OUTSIDE)->excl_s == 4.5);
    free_rows(rows, n);
    weft_profile_free(&other);
    rows = NULL;
    assert_int_equal(init_profile(f, &other, 100), 0);
    other.outside = 300;     /* outside time, but no region entered */
    assert_int_equal(weft_profile_result(&other, 10, &rows, &n), 0);
    assert_null(rows);
    assert_int_equal(n, 0);
    weft_profile_free(&other);
}

/* Locations that entered no region make no profile: no outside rows
 * alone. */
static void test_outside_only(void **state)
{
    fixture *f = *state;
    weft_region_row *rows = (weft_region_row *)1;
    size_t n = 99;

    f->l.start = 5;
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 50), 0);
    assert_int_equal(f->p.nrows, 1);
    assert_int_equal(weft_profile_result(&f->p, 1000, &rows, &n), 0);
    assert_null(rows);
    assert_int_equal(n, 0);
}

static const char *outside_named(const void *arg, uint32_t id)
{
    (void)arg;
    return id == 0 ? WEFT_PROFILE_OUTSIDE : "other";
}

/* A region of the program named like the outside row keeps rows of its
 * own, under another name. */
static void test_outside_name_taken(void **state)
{
    fixture *f = *state;
    weft_region_row *rows = NULL;
    size_t n = 0;

    weft_profile_free(&f->p);
    assert_int_equal(weft_profile_init(&f->p, outside_named, NULL, NULL, 2,
                                       100), 0);
    open_frame(f, 0, 0);
    weft_profile_leave(&f->l, 10);
    f->l.start = 0;
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 0, 30), 0);
    assert_int_equal(weft_profile_result(&f->p, 1, &rows, &n), 0);
    assert_int_equal(n, 4);
    assert_true(row_of(rows, n, WEFT_PROFILE_ALL,
                       WEFT_PROFILE_OUTSIDE_REGION)->excl_s == 10);
    assert_true(row_of(rows, n, WEFT_PROFILE_ALL,
                       WEFT_PROFILE_OUTSIDE)->excl_s == 20);
    assert_true(row_of(rows, n, 0, WEFT_PROFILE_OUTSIDE)->excl_s == 20);
    free_rows(rows, n);
}

/* Paradigms by name (issue #35): OTF2's in lower case, "io" for I/O
 * calls (paradigm NONE, an I/O role), a number OTF2 does not name as
 * itself. */
static void test_paradigm_names(void **state)
{
    static const char *const all[] = {
        "unknown", "user", "compiler", "openmp", "mpi", "cuda",
        "measurement_system", "pthread", "hmpp", "ompss", "hardware",
        "gaspi", "upc", "shmem", "winthread", "qtthread", "acethread",
        "tbbthread", "openacc", "opencl", "mtapi", "sampling", "none",
        "hip", "kokkos",
    };
    char buf[WEFT_PROFILE_PARADIGM_NAME];

    (void)state;
    assert_int_equal(sizeof all / sizeof *all, OTF2_PARADIGM_KOKKOS + 1);
    for (unsigned p = 0; p < sizeof all / sizeof *all; p++)
        assert_string_equal(weft_profile_paradigm_name(
            p, OTF2_REGION_ROLE_FUNCTION, buf), all[p]);
    assert_string_equal(weft_profile_paradigm_name(
        OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT, buf), "mpi");
    assert_string_equal(weft_profile_paradigm_name(
        OTF2_PARADIGM_NONE, OTF2_REGION_ROLE_FILE_IO, buf), "io");
    assert_string_equal(weft_profile_paradigm_name(
        OTF2_PARADIGM_NONE, OTF2_REGION_ROLE_FILE_IO_METADATA, buf), "io");
    assert_string_equal(weft_profile_paradigm_name(
        OTF2_PARADIGM_NONE, OTF2_REGION_ROLE_WRAPPER, buf), "none");
    /* MPI-IO's calls stay MPI's */
    assert_string_equal(weft_profile_paradigm_name(
        OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_FILE_IO, buf), "mpi");
    assert_string_equal(weft_profile_paradigm_name(
        OTF2_PARADIGM_KOKKOS + 1, OTF2_REGION_ROLE_FUNCTION, buf),
        "paradigm 25");
    assert_string_equal(weft_profile_paradigm_name(
        255, OTF2_REGION_ROLE_FILE_IO, buf), "paradigm 255");
}

/* Each row says its region's paradigm; without a paradigm function, or
 * for an id the definitions lack, it is "". */
static void test_paradigm_rows(void **state)
{
    fixture *f = *state;
    char buf[WEFT_PROFILE_PARADIGM_NAME];

    for (uint32_t r = 0; r < KINDS; r++) {
        open_frame(f, r, 10 * r);
        weft_profile_leave(&f->l, 10 * r + 10 - r);
    }
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 3, 50), 0);
    assert_int_equal(f->p.nrows, KINDS + 1);
    for (size_t i = 0; i < KINDS; i++)   /* most exclusive time first */
        assert_string_equal(f->p.rows[i].paradigm, kinds[i].name);
    assert_string_equal(f->p.rows[KINDS].region, WEFT_PROFILE_OUTSIDE);
    assert_string_equal(f->p.rows[KINDS].paradigm, "");
    assert_string_equal(weft_unify_region_paradigm(f->u, NREGIONS, buf), "");

    weft_profile_free(&f->p);
    assert_int_equal(weft_profile_init(&f->p, weft_unify_region_name, NULL,
                                       f->u, NREGIONS, 100), 0);
    open_frame(f, 1, 0);
    weft_profile_leave(&f->l, 10);
    assert_int_equal(weft_profile_finish_loc(&f->p, &f->l, 3, 10), 0);
    assert_string_equal(f->p.rows[0].region, "r1");
    assert_string_equal(f->p.rows[0].paradigm, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recursive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unprofiled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_at_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_growth_under_open_frames, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_enter_fast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_top_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_and_result, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_empty_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outside_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outside_name_taken, setup,
                                        teardown),
        cmocka_unit_test(test_paradigm_names),
        cmocka_unit_test_setup_teardown(test_paradigm_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
