/* test_preload.c - weft run's recorder table and LD_PRELOAD steps
 * (cli/preload.c): -t lists (known, unknown, empty names, repeats),
 * which library each flavour gets, the default choice, and the user's
 * LD_PRELOAD kept, never doubled, never given a path it cannot carry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "preload.h"
#include "weft_errors.h"

/* The index of recorder name in the table, failing when absent. */
static size_t rec(const char *name)
{
    for (size_t i = 0; i < weft__nrecorders; i++)
        if (strcmp(weft__recorders[i].name, name) == 0)
            return i;
    fail_msg("no recorder %s", name);
    return 0;
}

/* What detect.c found of a program with MPI flavour f and no OpenMP. */
static const weft_mpi_found *found(weft_mpi_flavour f)
{
    static weft_mpi_found fd;

    memset(&fd, 0, sizeof fd);
    fd.flavour = f;
    return &fd;
}

static void test_table(void **state)
{
    (void)state;
    assert_true(weft__nrecorders >= 1);
    for (size_t i = 0; i < weft__nrecorders; i++) {
        const weft_recorder *r = &weft__recorders[i];
        assert_non_null(r->name);
        assert_non_null(r->what);
        assert_null(strpbrk(r->name, ", "));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(r->name, weft__recorders[j].name);
    }
}

static void test_parse(void **state)
{
    weft_rec_set set = 0;
    char err[256];
    size_t mpi = rec("mpi");

    (void)state;
    assert_int_equal(weft__preload_parse("mpi", &set, err, sizeof err), 0);
    assert_int_equal(set, 1u << mpi);
    set = 0;
    assert_int_equal(weft__preload_parse("mpi,mpi", &set, err, sizeof err),
                     0);
    assert_int_equal(set, 1u << mpi);
    set = 0;
    assert_int_equal(weft__preload_parse("io,mpi", &set, err, sizeof err),
                     0);
    assert_int_equal(set, 1u << mpi | 1u << rec("io"));
}

static void expect_refused(const char *list, const char *msg)
{
    weft_rec_set set = 0;
    char err[256] = "";

    assert_int_equal(weft__preload_parse(list, &set, err, sizeof err),
                     WEFT_EINVAL);
    if (!strstr(err, msg))
        fail_msg("-t %s: '%s', expected '%s'", list, err, msg);
}

static void test_parse_refused(void **state)
{
    (void)state;
    /* Names not built yet are unknown, and the known ones are listed. */
    expect_refused("bogus", "unknown recorder 'bogus' (known: mpi, pthread, io");
    expect_refused("pthreads", "unknown recorder 'pthreads'");
    expect_refused("mpi,bogus", "unknown recorder 'bogus'");
    expect_refused("MPI", "unknown recorder 'MPI'");
    expect_refused("mpi ", "unknown recorder 'mpi '");
    expect_refused("mp", "unknown recorder 'mp'");
    expect_refused("mpii", "unknown recorder 'mpii'");
    expect_refused("", "empty recorder name in ''");
    expect_refused("mpi,", "empty recorder name in 'mpi,'");
    expect_refused(",mpi", "empty recorder name");
    expect_refused("mpi,,mpi", "empty recorder name");
}

static void test_known(void **state)
{
    char buf[256], tiny[3];

    (void)state;
    weft__preload_known(buf, sizeof buf);
    assert_int_equal(strncmp(buf, "mpi", 3), 0);
    weft__preload_known(tiny, sizeof tiny);       /* cut, terminated */
    assert_int_equal(strlen(tiny), 2);
}

static void test_files(void **state)
{
    const weft_recorder *mpi = &weft__recorders[rec("mpi")];
    const char *why;

    (void)state;
    assert_string_equal(weft__preload_file(mpi, found(WEFT_MPI_OPENMPI),
                                           &why),
                        "libweft-mpi-openmpi.so");
    assert_null(why);
    assert_string_equal(weft__preload_file(mpi, found(WEFT_MPI_MPICH), &why),
                        "libweft-mpi-mpich.so");
    assert_null(weft__preload_file(mpi, found(WEFT_MPI_NONE), &why));
    assert_string_equal(why, "uses no MPI library");
    /* io applies to every dynamic program, MPI or not. */
    assert_string_equal(weft__preload_file(&weft__recorders[rec("io")],
                                           found(WEFT_MPI_NONE), &why),
                        "libweft-io.so");
    assert_null(why);
    assert_string_equal(weft__preload_file(&weft__recorders[rec("io")],
                                           found(WEFT_MPI_MPICH), &why),
                        "libweft-io.so");
}

/* The pthread recorder: one library for every dynamic program, with MPI
 * or without, by default or with -t pthread. */
static void test_pthread(void **state)
{
    const weft_recorder *pt = &weft__recorders[rec("pthread")];
    weft_rec_set set = 0;
    char err[256] = "";
    const char *why;

    (void)state;
    assert_string_equal(weft__preload_file(pt, found(WEFT_MPI_NONE), &why),
                        "libweft-pthread.so");
    assert_null(why);
    assert_string_equal(weft__preload_file(pt, found(WEFT_MPI_MPICH), &why),
                        "libweft-pthread.so");
    assert_true(pt->by_default);
    assert_int_equal(weft__preload_parse("mpi,pthread", &set, err,
                                         sizeof err), 0);
    assert_int_equal(set, (1u << rec("mpi")) | (1u << rec("pthread")));
}

static void test_choose(void **state)
{
    weft_rec_set all = 0;

    (void)state;
    for (size_t i = 0; i < weft__nrecorders; i++)
        if (weft__recorders[i].by_default)
            all |= 1u << i;
    assert_true(all & (1u << rec("mpi")));
    assert_true(all & (1u << rec("pthread")));
    assert_true(all & (1u << rec("io")));
    assert_int_equal(weft__preload_choose(0, 0, 0), all);
    /* A task of a parallel launch without MPI: only mpi (which will not
     * apply), so that the task runs untraced. */
    assert_int_equal(weft__preload_choose(0, 0, 1), 1u << rec("mpi"));
    /* -t: exactly what it named, also for such a task. */
    assert_int_equal(weft__preload_choose(1u << rec("mpi"), 1, 0),
                     1u << rec("mpi"));
    assert_int_equal(weft__preload_choose(1u << rec("io"), 1, 1),
                     1u << rec("io"));
}

static void expect_append(const char *old, const char *add,
                          const char *want)
{
    char *out = NULL;

    assert_int_equal(weft__preload_append(old, add, &out), 0);
    assert_non_null(out);
    if (strcmp(out, want) != 0)
        fail_msg("'%s' + '%s' = '%s', expected '%s'", old ? old : "(null)",
                 add, out, want);
    free(out);
}

static void test_append(void **state)
{
    char *out = (char *)"x";

    (void)state;
    expect_append(NULL, "/l/a.so", "/l/a.so");
    expect_append("", "/l/a.so", "/l/a.so");
    expect_append(" : ", "/l/a.so", "/l/a.so");
    /* The user's libraries first, in their order and separators. */
    expect_append("/u/x.so", "/l/a.so", "/u/x.so:/l/a.so");
    expect_append("/u/x.so /u/y.so", "/l/a.so", "/u/x.so /u/y.so:/l/a.so");
    expect_append("libx.so", "/l/a.so", "libx.so:/l/a.so");
    /* Already there (a nested weft run, mpirun -x LD_PRELOAD): once. */
    expect_append("/l/a.so", "/l/a.so", "/l/a.so");
    expect_append("/u/x.so:/l/a.so", "/l/a.so", "/u/x.so:/l/a.so");
    expect_append("/l/a.so /u/x.so", "/l/a.so", "/l/a.so /u/x.so");
    /* A prefix or suffix of an entry is another library. */
    expect_append("/l/a.so.1", "/l/a.so", "/l/a.so.1:/l/a.so");
    expect_append("/x/l/a.so", "/l/a.so", "/x/l/a.so:/l/a.so");
    /* LD_PRELOAD splits at spaces and colons: such a path cannot go. */
    assert_int_equal(weft__preload_append(NULL, "/my dir/a.so", &out),
                     WEFT_EINVAL);
    assert_null(out);
    assert_int_equal(weft__preload_append("/u/x.so", "/a:b/a.so", &out),
                     WEFT_EINVAL);
    assert_int_equal(weft__preload_append("/u/x.so", "", &out),
                     WEFT_EINVAL);
}

static void expect_remove(const char *old, const char *drop,
                          const char *want)
{
    char *out = NULL;

    assert_int_equal(weft__preload_remove(old, drop, &out), 0);
    assert_non_null(out);
    if (strcmp(out, want) != 0)
        fail_msg("'%s' - '%s' = '%s', expected '%s'", old, drop, out, want);
    free(out);
}

/* A task of weft run -- LAUNCHER: libweft-launch.so taken out of
 * LD_PRELOAD, the user's libraries kept in order. */
static void test_remove(void **state)
{
    (void)state;
    expect_remove("/l/launch.so", "/l/launch.so", "");
    expect_remove("/u/x.so:/l/launch.so", "/l/launch.so", "/u/x.so");
    expect_remove("/u/x.so /l/launch.so:/u/y.so", "/l/launch.so",
                  "/u/x.so:/u/y.so");
    expect_remove("/l/launch.so.1 /x/l/launch.so", "/l/launch.so",
                  "/l/launch.so.1:/x/l/launch.so");
    expect_remove(" : /u/x.so: ", "/l/launch.so", "/u/x.so");
    expect_remove("", "/l/launch.so", "");
}

/* The OpenMP recorder: for a program whose loader's list names GCC's
 * libgomp, or LLVM's libomp when built as its OMPT tool, by default; a
 * program of another runtime, or none, is told apart in words. */
static void test_openmp(void **state)
{
    const weft_recorder *om = &weft__recorders[rec("openmp")];
    weft_mpi_found fd;
    const char *why;

    (void)state;
    assert_true(om->by_default);
    assert_int_equal(weft__detect_mpi_in_list(
                         "\tlibgomp.so.1 => /usr/lib/x86_64-linux-gnu/"
                         "libgomp.so.1 (0x7f00)\n", &fd), 1);
    assert_int_equal(fd.omp, WEFT_OMP_GNU);
    assert_string_equal(fd.omp_lib, "libgomp.so.1");
    assert_string_equal(weft__preload_file(om, &fd, &why),
                        "libweft-openmp.so");
    assert_null(why);
    assert_int_equal(weft__detect_mpi_in_list(
                         "\tlibomp.so.5 => /usr/lib/llvm-14/lib/libomp.so.5 "
                         "(0x7f00)\n", &fd), 1);
    assert_int_equal(fd.omp, WEFT_OMP_LLVM);
#ifdef WEFT_HAVE_OMPT /* its OMPT tool */
    assert_string_equal(weft__preload_file(om, &fd, &why),
                        "libweft-openmp.so");
    assert_null(why);
#else
    assert_null(weft__preload_file(om, &fd, &why));
    assert_non_null(strstr(why, "libomp-dev"));
#endif
    fd.omp = WEFT_OMP_INTEL;
    assert_null(weft__preload_file(om, &fd, &why));
    assert_non_null(strstr(why, "libiomp5"));
    assert_null(weft__preload_file(om, found(WEFT_MPI_MPICH), &why));
    assert_string_equal(why, "uses no OpenMP runtime");
    assert_int_equal(weft__detect_omp_library("/opt/intel/lib/libiomp5.so"),
                     WEFT_OMP_INTEL);
    assert_int_equal(weft__detect_omp_library("libgompx.so"), WEFT_OMP_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refused),
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_openmp),
        cmocka_unit_test(test_pthread),
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_append),
        cmocka_unit_test(test_remove),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
