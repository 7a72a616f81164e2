/* test_iobuffered.c - whether a stdio call was served from its stream's
 * buffer (recorders/io/buffered.h), on real glibc streams: a file and a
 * pipe. Writes within the buffer are served; the first write (the buffer
 * allocated), one that flushes, one larger than the buffer, a line on a
 * line-buffered stream, any write to an unbuffered one, and a failed
 * call are not. Reads from the buffer are served; the read that fills
 * it, one that refills it, and the end of the file are not. A flush is
 * served when it had nothing to do: not one that wrote the buffer out
 * or dropped read-ahead input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buffered.h"

/* fputs(s, fp): served? */
static int put(FILE *fp, const char *s)
{
    io_bufview a, b;
    int rc;

    io_bufview_take(&a, fp);
    rc = fputs(s, fp);
    io_bufview_take(&b, fp);
    return io_buffer_served(&a, &b, 1, rc == EOF ? -1 : (int64_t)strlen(s));
}

/* fread of n bytes: served? */
static int get(FILE *fp, size_t n, char *out)
{
    io_bufview a, b;
    size_t rc;

    io_bufview_take(&a, fp);
    rc = fread(out, 1, n, fp);
    io_bufview_take(&b, fp);
    return io_buffer_served(&a, &b, 0, rc == n ? (int64_t)rc : -1);
}

/* fflush(fp): served (nothing to do)? */
static int flush(FILE *fp)
{
    io_bufview a, b;
    int rc;

    io_bufview_take(&a, fp);
    rc = fflush(fp);
    io_bufview_take(&b, fp);
    return io_buffer_served(&a, &b, 2, rc == 0 ? 0 : -1);
}

static FILE *scratch(char *path, const char *mode)
{
    int fd;
    FILE *fp;

    strcpy(path, "/tmp/weft-iobuffered-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    fp = fopen(path, mode);
    assert_non_null(fp);
    return fp;
}

static void test_writes(void **state)
{
    char path[64], big[3 * BUFSIZ];
    FILE *fp = scratch(path, "w");
    int served = 0, calls = 0;

    (void)state;
    assert_false(put(fp, "first")); /* the buffer is allocated */
    assert_true(put(fp, "second"));
    assert_true(put(fp, ""));
    /* fill the buffer: every call but the ones that flush is served */
    for (int i = 0; i < 5000; i++, calls++)
        served += put(fp, "0123456789abcdef\n");
    /* 85 000 bytes: one flush per buffer (st_blksize, >= 512 bytes) */
    assert_true(served < calls && served >= calls - 85000 / 512);
    assert_int_equal(fflush(fp), 0);
    assert_true(put(fp, "after a flush"));
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(put(fp, big)); /* around the buffer */
    assert_int_equal(fclose(fp), 0);
    unlink(path);
}

static void test_line_and_unbuffered(void **state)
{
    char path[64];
    FILE *fp = scratch(path, "w");

    (void)state;
    assert_int_equal(setvbuf(fp, NULL, _IOLBF, BUFSIZ), 0);
    assert_false(put(fp, "x"));      /* allocates */
    assert_true(put(fp, "no newline"));
    assert_false(put(fp, "a line\n"));
    assert_true(put(fp, "more"));
    assert_int_equal(fclose(fp), 0);
    fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(setvbuf(fp, NULL, _IONBF, 0), 0);
    for (int i = 0; i < 10; i++)
        assert_false(put(fp, "unbuffered"));
    assert_int_equal(fclose(fp), 0);
    unlink(path);
}

static void test_failed_write(void **state)
{
    char path[64];
    FILE *fp = scratch(path, "r"); /* not open for writing */

    (void)state;
    assert_false(put(fp, "nope"));
    assert_int_equal(fclose(fp), 0);
    unlink(path);
}

static void test_reads(void **state)
{
    char path[64], buf[256];
    FILE *fp = scratch(path, "w");
    int served = 0, calls = 0;

    (void)state;
    for (int i = 0; i < 3 * BUFSIZ / 16; i++)
        fputs("0123456789abcde\n", fp);
    assert_int_equal(fclose(fp), 0);
    fp = fopen(path, "r");
    assert_non_null(fp);
    assert_false(get(fp, 16, buf)); /* fills the buffer */
    assert_true(get(fp, 16, buf));
    assert_int_equal(memcmp(buf, "0123456789abcde\n", 16), 0);
    while (!feof(fp) && calls < 100000) {
        served += get(fp, 16, buf);
        calls++;
    }
    /* all but the refills and the end of the file */
    assert_true(served >= calls - 3 * BUFSIZ / 512 - 1);
    assert_true(served < calls);
    assert_false(get(fp, 1, buf)); /* the end */
    assert_int_equal(fclose(fp), 0);
    unlink(path);
}

static void test_pipe(void **state)
{
    int p[2];
    FILE *r, *w;
    char buf[8];

    (void)state;
    assert_int_equal(pipe(p), 0);
    r = fdopen(p[0], "r");
    w = fdopen(p[1], "w");
    assert_non_null(r);
    assert_non_null(w);
    assert_false(put(w, "hello"));
    assert_true(put(w, " world"));
    assert_int_equal(fflush(w), 0);
    assert_false(get(r, 5, buf)); /* reads the pipe */
    assert_true(get(r, 6, buf));
    assert_int_equal(memcmp(buf, " world", 6), 0);
    assert_int_equal(fclose(w), 0);
    assert_false(get(r, 1, buf)); /* end of the pipe */
    assert_int_equal(fclose(r), 0);
}

static void test_flush(void **state)
{
    char path[64], buf[8];
    FILE *fp = scratch(path, "w+");
    long at;

    (void)state;
    assert_true(flush(fp)); /* nothing written yet */
    assert_false(put(fp, "hello\n")); /* the buffer allocated */
    assert_false(flush(fp)); /* writes it */
    assert_true(flush(fp));  /* nothing left */
    assert_true(flush(fp));
    assert_true(put(fp, "more\n"));
    assert_false(flush(fp));
    /* Read-ahead input: the flush drops it (and seeks back). */
    rewind(fp);
    assert_false(get(fp, 2, buf));
    at = ftell(fp);
    assert_false(flush(fp));
    assert_int_equal(ftell(fp), at);
    assert_true(flush(fp)); /* nothing read ahead any more */
    /* A flush that fails is no flush served. */
    {
        io_bufview a;
        io_bufview_take(&a, fp);
        assert_false(io_buffer_served(&a, &a, 2, -1));
    }
    assert_int_equal(fclose(fp), 0);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes),
        cmocka_unit_test(test_line_and_unbuffered),
        cmocka_unit_test(test_failed_write),
        cmocka_unit_test(test_reads),
        cmocka_unit_test(test_pipe),
        cmocka_unit_test(test_flush),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
