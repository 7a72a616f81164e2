/* test_iosum.c - file I/O per handle (summary/iosum.c): an operation is
 * matched by handle and matchingId on its location (also when others
 * are in flight, or the same id is used by two handles), its time runs
 * from Begin to Complete or Cancelled, its bytes count as read or
 * written by the Begin's mode (none when undefined or cancelled, none
 * for a flush), an end without a Begin and a Begin beyond the bound of
 * operations in flight are not counted, sums merge, and the files are
 * named by the handle's file (or its parent's, or the handle's own
 * name), merged by name, ordered by time and capped with an "others"
 * row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <otf2/OTF2_Events.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iosum.h"
#include "testutil.h"
#include "unify.h"
#include "weft_errors.h"

#define R OTF2_IO_OPERATION_MODE_READ
#define W OTF2_IO_OPERATION_MODE_WRITE
#define F OTF2_IO_OPERATION_MODE_FLUSH

static const weft_iosum_cell *of(const weft_iosum *s, uint32_t handle)
{
    return weft_hashtab_find(&s->t, handle + 1, sizeof(weft_iosum_cell));
}

static void test_match(void **state)
{
    weft_iosum s = { 0 };
    weft_iolive l = { 0 };
    const weft_iosum_cell *c;

    (void)state;
    /* two in flight on handle 1 and one on 2 with the same id */
    assert_int_equal(weft_iosum_begin(&l, 1, R, 7, 100), 0);
    assert_int_equal(weft_iosum_begin(&l, 1, W, 8, 110), 0);
    assert_int_equal(weft_iosum_begin(&l, 2, W, 7, 120), 0);
    assert_int_equal(weft_iosum_end(&s, &l, 1, 7, 4096, 0, 200), 0);
    assert_int_equal(weft_iosum_end(&s, &l, 2, 7, 10, 0, 125), 0);
    assert_int_equal(weft_iosum_end(&s, &l, 1, 8, 50, 1, 150), 0);
    assert_int_equal(l.n, 0);
    c = of(&s, 1);
    assert_non_null(c);
    assert_int_equal(c->operations, 2);
    assert_int_equal(c->bytes_read, 4096);
    assert_int_equal(c->bytes_written, 0);   /* cancelled: no bytes */
    assert_int_equal(c->ticks, 100 + 40);
    c = of(&s, 2);
    assert_int_equal(c->bytes_written, 10);
    assert_int_equal(c->ticks, 5);
    /* failed (undefined bytes), a flush, an end without a Begin */
    assert_int_equal(weft_iosum_begin(&l, 2, W, 9, 300), 0);
    assert_int_equal(weft_iosum_end(&s, &l, 2, 9, OTF2_UNDEFINED_UINT64, 0,
                                    301), 0);
    assert_int_equal(weft_iosum_begin(&l, 2, F, 10, 400), 0);
    assert_int_equal(weft_iosum_end(&s, &l, 2, 10, 0, 0, 410), 0);
    assert_int_equal(weft_iosum_end(&s, &l, 2, 11, 99, 0, 500), 0);
    c = of(&s, 2);
    assert_int_equal(c->operations, 3);
    assert_int_equal(c->bytes_written, 10);
    assert_int_equal(c->ticks, 5 + 1 + 10);
    weft_iolive_free(&l);
    weft_iosum_free(&s);
}

static void test_bound_and_add(void **state)
{
    weft_iosum s = { 0 }, t = { 0 };
    weft_iolive l = { 0 };

    (void)state;
    for (uint64_t i = 0; i < WEFT_IOSUM_PENDING + 5; i++)
        assert_int_equal(weft_iosum_begin(&l, 3, R, i, i), 0);
    assert_int_equal(l.n, WEFT_IOSUM_PENDING);
    for (uint64_t i = 0; i < WEFT_IOSUM_PENDING + 5; i++)
        assert_int_equal(weft_iosum_end(&s, &l, 3, i, 1, 0, 1000), 0);
    assert_int_equal(of(&s, 3)->operations, WEFT_IOSUM_PENDING);
    assert_int_equal(of(&s, 3)->bytes_read, WEFT_IOSUM_PENDING);
    /* many handles grow the table; adding sums */
    for (uint32_t h = 0; h < 100; h++) {
        assert_int_equal(weft_iosum_begin(&l, h, W, 1, 0), 0);
        assert_int_equal(weft_iosum_end(&t, &l, h, 1, h, 0, 2), 0);
    }
    assert_int_equal(t.t.used, 100);
    assert_int_equal(weft_iosum_add(&t, &s), 0);
    assert_int_equal(weft_iosum_add(&t, &s), 0);
    assert_int_equal(t.t.used, 100);
    assert_int_equal(of(&t, 3)->operations, 2 * WEFT_IOSUM_PENDING + 1);
    assert_int_equal(of(&t, 3)->bytes_written, 3);
    assert_int_equal(of(&t, 99)->bytes_written, 99);
    weft_iolive_free(&l);
    weft_iosum_free(&s);
    weft_iosum_free(&t);
}

static void def(weft_unifier *u, weft_record r)
{
    char err[256];

    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err), 0);
}

/* One operation of `ticks` writing n bytes on handle h. */
static void op(weft_iosum *s, uint32_t h, uint64_t n, uint64_t ticks)
{
    weft_iolive l = { 0 };

    assert_int_equal(weft_iosum_begin(&l, h, W, 0, 0), 0);
    assert_int_equal(weft_iosum_end(s, &l, h, 0, n, 0, ticks), 0);
    weft_iolive_free(&l);
}

static void test_files(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_defview defs = weft_unify_view(u);
    weft_iosum s = { 0 };
    weft_io_file_row *rows = NULL;
    size_t n = 0;
    char name[32];

    (void)state;
    assert_non_null(u);
    def(u, str(0, "/data/a"));
    def(u, str(1, "/data/a (fd 3)"));
    def(u, str(2, "/data/a (fd 4)"));
    def(u, str(3, "stream"));
    def(u, str(4, "socket"));
    def(u, io_file(0, 0));
    def(u, io_handle(0, 1, 0, OTF2_UNDEFINED_IO_HANDLE));
    def(u, io_handle(1, 2, 0, OTF2_UNDEFINED_IO_HANDLE));
    def(u, io_handle(2, 3, OTF2_UNDEFINED_IO_FILE, 0));  /* fdopen's stream */
    def(u, io_handle(3, 4, OTF2_UNDEFINED_IO_FILE, OTF2_UNDEFINED_IO_HANDLE));
    for (uint32_t i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "f%u", i);
        def(u, str(5 + i, name));
        def(u, io_file(1 + i, 5 + i));
        def(u, io_handle(4 + i, 5 + i, 1 + i, OTF2_UNDEFINED_IO_HANDLE));
    }
    op(&s, 0, 100, 1000000);  /* three handles of /data/a */
    op(&s, 1, 20, 1000000);
    op(&s, 2, 3, 1000000);
    op(&s, 3, 1, 5000000);    /* "socket": most time */
    for (uint32_t i = 0; i < 10; i++)
        op(&s, 4 + i, i, 1000 * (i + 1));
    assert_int_equal(weft_iosum_files(&s, &defs, 1000000000, 5, &rows, &n), 0);
    assert_int_equal(n, 6);
    assert_string_equal(rows[0].name, "socket");
    assert_string_equal(rows[1].name, "/data/a");
    assert_int_equal(rows[1].bytes_written, 123);
    assert_int_equal(rows[1].operations, 3);
    assert_true(rows[1].time_s > 0.0029 && rows[1].time_s < 0.0031);
    assert_string_equal(rows[2].name, "f9");
    assert_string_equal(rows[3].name, "f8");
    assert_string_equal(rows[4].name, "f7");
    assert_string_equal(rows[5].name, "");
    assert_int_equal(rows[5].others, 7);
    assert_int_equal(rows[5].bytes_written, 0 + 1 + 2 + 3 + 4 + 5 + 6);
    assert_int_equal(rows[5].operations, 7);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(rows[i].others, 0);
    for (size_t i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
    /* no cap reached: no others row; nothing: no rows */
    assert_int_equal(weft_iosum_files(&s, &defs, 1000000000, 100, &rows, &n), 0);
    assert_int_equal(n, 12);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].others, 0);
        free(rows[i].name);
    }
    free(rows);
    weft_iosum_free(&s);
    assert_int_equal(weft_iosum_files(&s, &defs, 1000000000, 5, &rows, &n), 0);
    assert_int_equal(n, 0);
    assert_null(rows);
    weft_unify_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_bound_and_add),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
