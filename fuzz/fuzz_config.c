/* fuzz_config.c - libFuzzer target for weftd's configuration file parser
 * (weft_config_load_file, libinih underneath, and weft_config_finish).
 *
 * Input: the text of a configuration file. Checked beyond memory safety:
 * a file is either taken or refused with WEFT_ECONFIG and a message that
 * names the file and a line; a file taken and finished prints (weftd
 * --check-config) to a file that loads back to the same configuration.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "weft_errors.h"
#include "weftd_config.h"

static char files[2][64]; /* put_file's, "a" and "b" */

/* At exit: the files put_file made are removed (libFuzzer's runs end
 * with exit), not left in /tmp after every run of the fuzzer. */
static void remove_files(void)
{
    for (int i = 0; i < 2; i++)
        if (files[i][0])
            unlink(files[i]);
}

/* A file of the process's own holding buf (rewritten each time). */
static const char *put_file(const char *which, const void *buf, size_t len)
{
    int i = which[0] == 'b';
    FILE *f;

    if (!files[0][0] && !files[1][0])
        atexit(remove_files);
    if (!files[i][0])
        snprintf(files[i], sizeof files[i], "/tmp/weft-fuzz-config-%s.%d",
                 which, (int)getpid());
    f = fopen(files[i], "w");
    CHECK(f);
    CHECK(fwrite(buf, 1, len, f) == len);
    CHECK(fclose(f) == 0);
    return files[i];
}

/* The same configuration: every key, as weft_config_print says it. */
static void check_same(const weft_config *a, const weft_config *b)
{
    char *pa = NULL, *pb = NULL;
    size_t la = 0, lb = 0;
    FILE *fa = open_memstream(&pa, &la), *fb = open_memstream(&pb, &lb);

    CHECK(fa && fb);
    weft_config_print(a, fa);
    weft_config_print(b, fb);
    fclose(fa);
    fclose(fb);
    CHECK(la == lb && memcmp(pa, pb, la) == 0);
    free(pa);
    free(pb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_config c, again;
    char err[512] = "", *printed = NULL;
    size_t plen = 0;
    const char *path = put_file("a", data, size);
    FILE *out;
    int rc;

    weft_config_init(&c);
    rc = weft_config_load_file(&c, path, 0, err, sizeof err);
    if (rc < 0) {
        CHECK(rc == WEFT_ECONFIG);
        CHECK(strstr(err, path) != NULL);
        weft_config_free(&c);
        return 0;
    }
    if (weft_config_finish(&c, err, sizeof err) < 0) {
        CHECK(err[0] != 0);
        weft_config_free(&c);
        return 0;
    }
    out = open_memstream(&printed, &plen);
    CHECK(out);
    weft_config_print(&c, out);
    fclose(out);
    weft_config_init(&again);
    path = put_file("b", printed, plen);
    rc = weft_config_load_file(&again, path, 0, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "printed configuration refused: %s\n%s", err,
                printed);
    CHECK(rc == 0);
    CHECK(weft_config_finish(&again, err, sizeof err) == 0);
    check_same(&c, &again);
    free(printed);
    weft_config_free(&again);
    weft_config_free(&c);
    return 0;
}
