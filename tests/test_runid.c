/* test_runid.c - which launch a process belongs to and the default trace
 * name (client/runid.c): each launcher's variables, their precedence,
 * Slurm restarts, WEFT_RUN's checks, the single-process fallback, and
 * names cut and cleaned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "runid.h"
#include "weft_errors.h"

/* A fake environment: NULL-terminated name, value pairs. */
static const char *lookup(const char *name, void *arg)
{
    const char *const *kv = arg;

    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static int identify(const char *const *envv, uint32_t size, weft__run *r)
{
    char why[128] = "";

    return weft__run_identify(lookup, (void *)envv, size, "node1", 4242,
                              99, r, why, sizeof why);
}

static void test_slurm_steps(void **state)
{
    const char *step0[] = { "SLURM_JOB_ID", "999", "SLURM_STEP_ID", "0",
                            "SLURM_PROCID", "1", NULL };
    const char *step1[] = { "SLURM_JOB_ID", "999", "SLURM_STEPID", "1",
                            NULL };
    weft__run a, b;
    char name[64];

    (void)state;
    assert_int_equal(identify(step0, 4, &a), 0);
    assert_string_equal(a.id, "slurm:999.0");
    assert_string_equal(a.label, "999.0");
    assert_int_equal(identify(step1, 4, &b), 0);
    assert_string_equal(b.id, "slurm:999.1");
    assert_int_equal(weft__run_default_name(lookup, step0, "lulesh", &a,
                                            name, sizeof name), 0);
    assert_string_equal(name, "lulesh-999.0");
}

static void test_slurm_restart(void **state)
{
    const char *env[] = { "SLURM_JOB_ID", "7", "SLURM_STEP_ID", "0",
                          "SLURM_RESTART_COUNT", "2", NULL };
    const char *first[] = { "SLURM_JOB_ID", "7", "SLURM_STEP_ID", "0",
                            "SLURM_RESTART_COUNT", "0", NULL };
    weft__run r;

    (void)state;
    assert_int_equal(identify(env, 2, &r), 0);
    assert_string_equal(r.id, "slurm:7.0+restart2");
    assert_string_equal(r.label, "7.0");
    assert_int_equal(identify(first, 2, &r), 0);
    assert_string_equal(r.id, "slurm:7.0");
}

static void test_pmix_wins(void **state)
{
    /* mpirun inside a batch job: the namespace, not the batch step. */
    const char *ompi[] = { "SLURM_JOB_ID", "999", "SLURM_STEP_ID", "4",
                           "PMIX_NAMESPACE", "prterun-n1-77@1",
                           "OMPI_MCA_ess_base_jobid", "5", NULL };
    const char *srun[] = { "PMIX_NAMESPACE", "slurm.pmix.999.3",
                           "SLURM_JOB_ID", "999", "SLURM_STEP_ID", "3",
                           NULL };
    const char *jobid[] = { "OMPI_MCA_ess_base_jobid", "123456", NULL };
    weft__run r;
    char name[64];

    (void)state;
    assert_int_equal(identify(ompi, 2, &r), 0);
    assert_string_equal(r.id, "pmix:prterun-n1-77@1");
    assert_string_equal(r.label, "prterun-n1-77@1");
    assert_string_equal(r.source, "PMIX_NAMESPACE");
    assert_int_equal(identify(srun, 2, &r), 0);
    assert_string_equal(r.id, "pmix:slurm.pmix.999.3");
    assert_string_equal(r.label, "999.3");
    assert_int_equal(weft__run_default_name(lookup, srun, "app", &r, name,
                                            sizeof name), 0);
    assert_string_equal(name, "app-999.3");
    assert_int_equal(identify(jobid, 2, &r), 0);
    assert_string_equal(r.id, "ompi:123456");
}

static void test_weft_run(void **state)
{
    const char *env[] = { "WEFT_RUN", "mine", "PMIX_NAMESPACE", "ns",
                          "SLURM_RESTART_COUNT", "3", NULL };
    const char *ctl[] = { "WEFT_RUN", "a\nb", NULL };
    char longv[WEFT__RUN_MAX + 2];
    const char *toolong[] = { "WEFT_RUN", longv, NULL };
    char why[128] = "";
    weft__run r;

    (void)state;
    assert_int_equal(identify(env, 8, &r), 0);
    assert_string_equal(r.id, "mine");
    assert_string_equal(r.source, "WEFT_RUN");
    assert_int_equal(weft__run_identify(lookup, (void *)ctl, 1, "h", 1, 1,
                                        &r, why, sizeof why), WEFT_ECONFIG);
    assert_non_null(strstr(why, "control"));
    memset(longv, 'x', sizeof longv - 1);
    longv[sizeof longv - 1] = 0;
    assert_int_equal(weft__run_identify(lookup, (void *)toolong, 1, "h", 1,
                                        1, &r, why, sizeof why),
                     WEFT_ECONFIG);
    assert_non_null(strstr(why, "longer"));
    longv[WEFT__RUN_MAX] = 0; /* exactly the limit */
    assert_int_equal(identify(toolong, 1, &r), 0);
    assert_int_equal(strlen(r.id), WEFT__RUN_MAX);
}

static void test_single_process(void **state)
{
    const char *none[] = { NULL };
    const char *batch[] = { "PBS_JOBID", "55.pbs", NULL };
    weft__run r;
    char name[64];

    (void)state;
    assert_int_equal(identify(none, 1, &r), 0);
    assert_string_equal(r.id, "proc:node1:4242:99");
    assert_string_equal(r.label, "node1-4242");
    assert_int_equal(weft__run_default_name(lookup, (void *)none, "fib", &r,
                                            name, sizeof name), 0);
    assert_string_equal(name, "fib-node1-4242");
    /* A batch job id alone does not tell two launches apart... */
    assert_int_equal(identify(batch, 1, &r), 0);
    assert_string_equal(r.id, "proc:node1:4242:99");
    /* ...and for several processes it names them but is no run. */
    assert_int_equal(identify(batch, 3, &r), 0);
    assert_string_equal(r.id, "");
    assert_int_equal(weft__run_default_name(lookup, (void *)batch, "fib", &r,
                                            name, sizeof name), 0);
    assert_string_equal(name, "fib-55.pbs");
    assert_int_equal(identify(none, 3, &r), 0);
    assert_string_equal(r.id, "");
    assert_int_equal(weft__run_default_name(lookup, (void *)none, "fib", &r,
                                            name, sizeof name),
                     WEFT_ENOTFOUND);
}

static void test_clean_and_cut(void **state)
{
    const char *env[] = { "PMIX_NAMESPACE", "n\ts", NULL };
    weft__run r;
    char name[8];

    (void)state;
    assert_int_equal(identify(env, 2, &r), 0);
    assert_string_equal(r.id, "pmix:n_s");
    assert_int_equal(weft__run_default_name(lookup, (void *)env,
                                            "program", &r, name,
                                            sizeof name), 0);
    assert_string_equal(name, "program");
    assert_int_equal(weft__run_default_name(lookup, (void *)env, "", &r,
                                            name, sizeof name), 0);
    assert_string_equal(name, "weft-n_");
}

/* weft run -- LAUNCHER: the launcher's rank variables kept, then a task
 * told from the launcher and its helpers by them. */
static void test_launch_tasks(void **state)
{
    const char *login[] = { "HOME", "/root", NULL };
    const char *batch[] = { "SLURM_PROCID", "0", "SLURM_STEP_ID", "batch",
                            NULL };
    const char *ompi_task[] = { "SLURM_PROCID", "0", "SLURM_STEP_ID",
                                "batch", "OMPI_COMM_WORLD_RANK", "3", NULL };
    const char *srun_task[] = { "SLURM_PROCID", "0", "SLURM_STEP_ID", "4",
                                NULL };
    const char *hydra_task[] = { "PMI_RANK", "1", NULL };
    const char *empty[] = { "PMI_RANK", "", NULL };
    const char *semi[] = { "WEFT_RANK", "1;2", NULL };
    char snap[WEFT__LAUNCH_FROM_MAX], tiny[8];

    (void)state;
    /* mpirun from a login shell: no variable, every task has one */
    assert_int_equal(weft__launch_snapshot(lookup, (void *)login, snap,
                                           sizeof snap), 0);
    assert_string_equal(snap, "");
    assert_int_equal(weft__launch_is_task(snap, lookup, (void *)login), 0);
    assert_int_equal(weft__launch_is_task(snap, lookup, (void *)hydra_task),
                     1);
    assert_int_equal(weft__launch_is_task(snap, lookup, (void *)empty), 0);
    /* mpirun in a batch script: the script's SLURM_PROCID=0 is the
     * launcher's own; a task has a rank of its launcher besides, or
     * another step */
    assert_int_equal(weft__launch_snapshot(lookup, (void *)batch, snap,
                                           sizeof snap), 0);
    assert_string_equal(snap, "SLURM_PROCID=0;SLURM_STEP_ID=batch");
    assert_int_equal(weft__launch_is_task(snap, lookup, (void *)batch), 0);
    assert_int_equal(weft__launch_is_task(snap, lookup, (void *)ompi_task),
                     1);
    assert_int_equal(weft__launch_is_task(snap, lookup, (void *)srun_task),
                     1);
    /* a name that is a prefix of another is not it */
    assert_int_equal(weft__launch_is_task("SLURM_PROCID=00", lookup,
                                          (void *)batch), 1);
    /* what cannot be kept is refused */
    assert_int_equal(weft__launch_snapshot(lookup, (void *)semi, snap,
                                           sizeof snap), WEFT_EINVAL);
    assert_int_equal(weft__launch_snapshot(lookup, (void *)batch, tiny,
                                           sizeof tiny), WEFT_EINVAL);
}

/* Launchers by their file names, with or without directories. */
static void test_launchers(void **state)
{
    static const char *const yes[] = {
        "mpirun", "/usr/bin/mpirun", "mpiexec", "orterun", "prterun",
        "/usr/bin/mpiexec.hydra", "mpirun.openmpi", "mpiexec.openmpi",
        "mpirun.mpich", "mpiexec.mpich", "srun",
    };
    static const char *const no[] = {
        "mpicc", "./ring", "/usr/bin/mpirun2", "mpirun/x", "", "runmpi",
        "/opt/srun.sh",
    };

    (void)state;
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!weft__run_launcher_name(yes[i]))
            fail_msg("%s: not a launcher", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (weft__run_launcher_name(no[i]))
            fail_msg("%s: a launcher", no[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_steps),
        cmocka_unit_test(test_slurm_restart),
        cmocka_unit_test(test_pmix_wins),
        cmocka_unit_test(test_weft_run),
        cmocka_unit_test(test_single_process),
        cmocka_unit_test(test_clean_and_cut),
        cmocka_unit_test(test_launch_tasks),
        cmocka_unit_test(test_launchers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
