/* test_rekey.c - an older weftd's trace directories get keys others
 * cannot guess (daemon/traces/rekey.c, #30): a finished trace's directory
 * NAME-STAMP-3 becomes NAME-STAMP-3-TAG, row (key, path) first; a rename
 * a crash cut short is finished; traces weftd holds, tagged keys, imports'
 * paths outside the spool and directories that are not there are left
 * as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "rekey.h"
#include "tmpdir.h"
#include "weft_errors.h"

#define OLD "run-20261124T004000Z-3"
#define TAG "0123456789abcdef"

typedef struct fx {
    char *spool, *traces;
    weft_catalog *cat;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    char *cat = NULL, *msg = NULL;

    f->spool = tu_tmpdir("weft-test-rekey");
    f->traces = tu_path(f->spool, "traces");
    assert_int_equal(mkdir(f->traces, 0711), 0);
    cat = tu_path(f->spool, "catalog.db");
    assert_int_equal(weft_catalog_open(cat, 0, &f->cat, &msg), 0);
    free(cat);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;

    weft_catalog_close(f->cat);
    tu_rmrf(f->spool);
    free(f->spool);
    free(f->traces);
    free(f);
    return 0;
}

/* A trace of key in state, its archive at path (NULL: in its directory,
 * which is made unless nodir). */
static void trace(fx *f, const char *key, const char *state,
                  const char *path, int nodir)
{
    weft_trace_row row = { 0 };
    char dir[512], arch[600];

    snprintf(dir, sizeof dir, "%s/%s", f->traces, key);
    snprintf(arch, sizeof arch, "%s/archive", dir);
    if (!nodir) {
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(mkdir(arch, 0700), 0);
    }
    row.key = (char *)key;
    row.name = (char *)key; /* found by name once the key changed */
    row.state = (char *)state;
    row.path = (char *)(path ? path : arch);
    assert_int_equal(weft_catalog_trace_begin(f->cat, &row), 0);
    assert_int_equal(weft_catalog_trace_set_state(f->cat, key, state), 0);
}

/* weft_rekey_row on the catalog's row of key. */
static int rekey(fx *f, const char *key, char *err, size_t errlen)
{
    weft_trace_row row;
    int rc;

    assert_int_equal(weft_catalog_find(f->cat, key, &row), 0);
    rc = weft_rekey_row(f->cat, f->spool, &row, err, errlen);
    weft_catalog_trace_free(&row);
    return rc;
}

static int is_dir(fx *f, const char *key)
{
    char dir[512];
    struct stat st;

    snprintf(dir, sizeof dir, "%s/%s", f->traces, key);
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_tagged(void **state)
{
    (void)state;
    assert_true(weft_rekey_tagged("a-20261124T004000Z-" TAG));
    assert_true(weft_rekey_tagged(OLD "-" TAG));
    assert_false(weft_rekey_tagged(OLD));
    assert_false(weft_rekey_tagged("a-20261124T004000Z-0123456789ABCDEF"));
    assert_false(weft_rekey_tagged("a-20261124T004000Z-0123456789abcde"));
    assert_false(weft_rekey_tagged(TAG));
}

static void test_rekey_finished(void **state)
{
    fx *f = *state;
    weft_trace_row row;
    char err[512], want[600];
    size_t n = strlen(OLD "-");

    trace(f, OLD, WEFT_STATE_COMPLETE, NULL, 0);
    assert_int_equal(rekey(f, OLD, err, sizeof err), 1);
    assert_false(is_dir(f, OLD));
    assert_int_equal(weft_catalog_find(f->cat, OLD, &row), 0);
    assert_int_equal(strncmp(row.key, OLD "-", n), 0);
    assert_true(weft_rekey_tagged(row.key));
    assert_true(is_dir(f, row.key));
    snprintf(want, sizeof want, "%s/%s/archive", f->traces, row.key);
    assert_string_equal(row.path, want);
    /* Once is enough. */
    assert_int_equal(weft_rekey_row(f->cat, f->spool, &row, err,
                                    sizeof err), 0);
    weft_catalog_trace_free(&row);
}

/* The row has OLD-TAG, the directory is still OLD: renamed. */
static void test_rekey_interrupted(void **state)
{
    fx *f = *state;
    char err[512], dir[512];

    trace(f, OLD "-" TAG, WEFT_STATE_PARTIAL, NULL, 1);
    snprintf(dir, sizeof dir, "%s/" OLD, f->traces);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(rekey(f, OLD "-" TAG, err, sizeof err), 1);
    assert_false(is_dir(f, OLD));
    assert_true(is_dir(f, OLD "-" TAG));
    assert_int_equal(rekey(f, OLD "-" TAG, err, sizeof err), 0);
}

static void test_rekey_left_alone(void **state)
{
    fx *f = *state;
    weft_trace_row row;
    char err[512];

    /* weftd holds them */
    trace(f, "rec-20261124T004000Z-1", WEFT_STATE_RECORDING, NULL, 0);
    assert_int_equal(rekey(f, "rec-20261124T004000Z-1", err, sizeof err), 0);
    assert_true(is_dir(f, "rec-20261124T004000Z-1"));
    trace(f, "conv-20261124T004000Z-1", WEFT_STATE_CONVERTING, NULL, 0);
    assert_int_equal(rekey(f, "conv-20261124T004000Z-1", err, sizeof err),
                     0);
    /* no directory (removed by retention) */
    trace(f, "gone-20261124T004000Z-1", WEFT_STATE_REMOVED, NULL, 1);
    assert_int_equal(rekey(f, "gone-20261124T004000Z-1", err, sizeof err),
                     0);
    assert_int_equal(weft_catalog_find(f->cat, "gone-20261124T004000Z-1",
                                       &row), 0);
    weft_catalog_trace_free(&row);
    /* an import: its reserved directory is renamed, its path stays */
    trace(f, "imp-20261124T004000Z-1", WEFT_STATE_COMPLETE, "/home/a/arch",
          0);
    assert_int_equal(rekey(f, "imp-20261124T004000Z-1", err, sizeof err),
                     1);
    assert_false(is_dir(f, "imp-20261124T004000Z-1"));
    assert_int_equal(weft_catalog_find(f->cat, "imp-20261124T004000Z-1",
                                       &row), 0);
    assert_true(weft_rekey_tagged(row.key));
    assert_string_equal(row.path, "/home/a/arch");
    weft_catalog_trace_free(&row);
}

/* A directory that cannot be renamed (its parent not writable: not as
 * root) keeps its row's key. */
static void test_rekey_fails(void **state)
{
    fx *f = *state;
    weft_trace_row row;
    char err[512];

    if (geteuid() == 0)
        skip();
    trace(f, OLD, WEFT_STATE_COMPLETE, NULL, 0);
    assert_int_equal(chmod(f->traces, 0500), 0);
    assert_int_equal(rekey(f, OLD, err, sizeof err), WEFT_EIO);
    assert_non_null(strstr(err, "cannot rename"));
    assert_int_equal(chmod(f->traces, 0700), 0);
    assert_int_equal(weft_catalog_find(f->cat, OLD, &row), 0);
    weft_catalog_trace_free(&row);
    assert_true(is_dir(f, OLD));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tagged),
        cmocka_unit_test_setup_teardown(test_rekey_finished, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rekey_interrupted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rekey_left_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rekey_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
