/* test_shared.c - the head's archive_root, marked and checked
 * (daemon/cluster/shared.c): a node reads the head's mark where the head
 * wrote it and may make a directory there (ok, nothing left behind); a
 * mark of another head (or of this one before it restarted), no mark,
 * and a root that is no directory are unusable, each saying why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared.h"
#include "tmpdir.h"

/* Entries of dir but . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_mark_and_check(void **state)
{
    char *dir = tu_tmpdir("weft-test-shared");
    char token[WEFT_ARCHIVE_TOKEN_LEN + 1], old[WEFT_ARCHIVE_TOKEN_LEN + 1];
    char err[256], path[512], line[128];
    weft_shared_check out;
    struct stat st;
    FILE *f;

    (void)state;
    assert_int_equal(weft_shared_mark(dir, "head7", token, err, sizeof err),
                     0);
    assert_int_equal(strlen(token), WEFT_ARCHIVE_TOKEN_LEN);
    assert_int_equal(strspn(token, "0123456789abcdef"),
                     WEFT_ARCHIVE_TOKEN_LEN);
    snprintf(path, sizeof path, "%s/" WEFT_ARCHIVE_MARK, dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_true(strncmp(line, "weft head head7 ", 16) == 0);
    assert_string_equal(line + 16, strcat(strcpy(err, token), "\n"));
    assert_int_equal(entries(dir), 1);  /* no temporary file left */

    weft_shared_check_run(dir, token, "n1", &out);
    assert_int_equal(out.state, WEFT_SHARED_OK);
    assert_string_equal(out.path, dir);
    assert_string_equal(out.error, "");
    assert_int_equal(entries(dir), 1);  /* its probe removed */
    assert_string_equal(weft_shared_state_name(out.state), "ok");

    /* the head restarted: a new token, the old one is not its */
    strcpy(old, token);
    assert_int_equal(weft_shared_mark(dir, "head7", token, err, sizeof err),
                     0);
    assert_string_not_equal(old, token);
    weft_shared_check_run(dir, old, "n1", &out);
    assert_int_equal(out.state, WEFT_SHARED_UNUSABLE);
    assert_non_null(strstr(out.error, "is not this head's"));

    /* no mark where the node looks */
    snprintf(path, sizeof path, "%s/elsewhere", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    weft_shared_check_run(path, token, "n1", &out);
    assert_int_equal(out.state, WEFT_SHARED_UNUSABLE);
    assert_non_null(strstr(out.error, "No such file or directory: is the "
                                      "head's archive_root (a shared file "
                                      "system) mounted here?"));
    /* a root the head cannot mark */
    snprintf(path, sizeof path, "%s/" WEFT_ARCHIVE_MARK "/x", dir);
    assert_int_equal(weft_shared_mark(path, "head7", token, err,
                                      sizeof err), -1);
    assert_non_null(strstr(err, "cannot write"));
    assert_string_equal(weft_shared_state_name(WEFT_SHARED_NONE), "none");
    assert_string_equal(weft_shared_state_name((enum weft_shared_state)9),
                        "?");
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_and_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
