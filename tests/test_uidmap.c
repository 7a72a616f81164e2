/* test_uidmap.c - the per-user table (daemon/uidmap.c): an empty map
 * finds nothing, cells come in uid order whatever the order they were
 * made in, a second get is the same cell with what it held, find says
 * where a missing uid would go (the round robin's "next user"), removal
 * keeps the order, and a freed map is empty and usable again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "uidmap.h"

typedef struct user {
    uint32_t uid;
    uint64_t n;
} user;

static void test_empty(void **state)
{
    weft_uidmap m = { 0 };

    (void)state;
    assert_null(weft_uidmap_lookup(&m, 0, sizeof(user)));
    assert_int_equal(weft_uidmap_find(&m, 1000, sizeof(user)), 0);
    weft_uidmap_free(&m);
}

static void test_order(void **state)
{
    static const uint32_t uids[] = { 1000, 0, UINT32_MAX, 42, 1001, 7,
                                     500, 3, 2, 99, 12 };
    enum { N = sizeof uids / sizeof *uids };
    weft_uidmap m = { 0 };
    user *u;

    (void)state;
    for (size_t i = 0; i < N; i++) {
        u = weft_uidmap_get(&m, uids[i], sizeof *u);
        assert_non_null(u);
        assert_int_equal(u->uid, uids[i]);
        assert_int_equal(u->n, 0);
        u->n = uids[i] + 1;
    }
    assert_int_equal(m.n, N);
    for (size_t i = 1; i < m.n; i++)
        assert_true(((user *)weft_uidmap_at(&m, i - 1, sizeof *u))->uid <
                    ((user *)weft_uidmap_at(&m, i, sizeof *u))->uid);
    u = weft_uidmap_get(&m, 42, sizeof *u);   /* again: same contents */
    assert_int_equal(u->n, 43);
    assert_int_equal(m.n, N);
    assert_ptr_equal(weft_uidmap_lookup(&m, 42, sizeof *u), u);
    assert_null(weft_uidmap_lookup(&m, 43, sizeof *u));
    /* 43 would go before 99: after 0 2 3 7 12 42. */
    assert_int_equal(weft_uidmap_find(&m, 43, sizeof *u), 6);
    weft_uidmap_remove(&m, 6, sizeof *u);     /* 99 */
    assert_int_equal(m.n, N - 1);
    assert_null(weft_uidmap_lookup(&m, 99, sizeof *u));
    assert_int_equal(((user *)weft_uidmap_at(&m, 6, sizeof *u))->uid, 500);
    assert_int_equal(((user *)weft_uidmap_lookup(&m, 500, sizeof *u))->n,
                     501);
    weft_uidmap_remove(&m, m.n - 1, sizeof *u); /* UINT32_MAX, the last */
    assert_null(weft_uidmap_lookup(&m, UINT32_MAX, sizeof *u));
    weft_uidmap_free(&m);
    assert_int_equal(m.n, 0);
    assert_non_null(weft_uidmap_get(&m, 5, sizeof *u)); /* usable again */
    weft_uidmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_order),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
