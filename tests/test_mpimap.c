/* test_mpimap.c - libweft-mpi's hash map (recorders/mpi/map.c): values
 * found by key, replaced, removed; removal leaves the keys that probed
 * past it reachable; growth and rehashing keep every value; clear calls
 * back once per value; wm_mix separates what it mixes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "map.h"

static int cleared;

static void count_clear(void *v)
{
    (void)v;
    cleared++;
}

static void test_put_get_del(void **state)
{
    wm_map m = { 0 };
    int a, b;

    (void)state;
    assert_null(wm_map_get(&m, 1));
    assert_null(wm_map_del(&m, 1));
    assert_int_equal(wm_map_put(&m, 1, &a), 0);
    assert_int_equal(wm_map_put(&m, 0, &b), 0);
    assert_ptr_equal(wm_map_get(&m, 1), &a);
    assert_ptr_equal(wm_map_get(&m, 0), &b);
    assert_int_equal(wm_map_put(&m, 1, &b), 0);
    assert_ptr_equal(wm_map_get(&m, 1), &b);
    assert_int_equal(m.count, 2);
    assert_ptr_equal(wm_map_del(&m, 1), &b);
    assert_null(wm_map_get(&m, 1));
    assert_null(wm_map_del(&m, 1));
    assert_int_equal(m.count, 1);
    cleared = 0;
    wm_map_clear(&m, count_clear);
    assert_int_equal(cleared, 1);
    assert_null(wm_map_get(&m, 0));
}

/* Many keys, half removed, more added: every key still maps to its own
 * value (tombstones and rehashing). */
static void test_growth_and_tombstones(void **state)
{
    enum { N = 5000 };
    static uint64_t v[2 * N];
    wm_map m = { 0 };

    (void)state;
    for (uint64_t k = 0; k < N; k++) {
        v[k] = k;
        assert_int_equal(wm_map_put(&m, k * 4096, &v[k]), 0);
    }
    for (uint64_t k = 0; k < N; k += 2)
        assert_ptr_equal(wm_map_del(&m, k * 4096), &v[k]);
    for (uint64_t k = N; k < 2 * N; k++) {
        v[k] = k;
        assert_int_equal(wm_map_put(&m, k * 4096, &v[k]), 0);
    }
    for (uint64_t k = 0; k < 2 * N; k++) {
        uint64_t *p = wm_map_get(&m, k * 4096);
        if (k < N && k % 2 == 0) {
            assert_null(p);
        } else {
            assert_non_null(p);
            assert_int_equal(*p, k);
        }
    }
    assert_int_equal(m.count, N + N / 2);
    assert_true(m.used * 4 <= m.cap * 3);
    cleared = 0;
    wm_map_clear(&m, count_clear);
    assert_int_equal(cleared, N + N / 2);
}

/* Removing and re-adding the same few keys forever does not fill the
 * table with tombstones. */
static void test_churn(void **state)
{
    wm_map m = { 0 };
    int x;

    (void)state;
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(wm_map_put(&m, (uint64_t)i, &x), 0);
        assert_ptr_equal(wm_map_del(&m, (uint64_t)i), &x);
    }
    assert_int_equal(m.count, 0);
    assert_true(m.cap <= 64);
    wm_map_clear(&m, NULL);
}

static void test_mix(void **state)
{
    (void)state;
    assert_int_not_equal(wm_mix(1, 1), wm_mix(1, 2));
    assert_int_not_equal(wm_mix(1, 2), wm_mix(2, 1));
    assert_int_equal(wm_mix(7, 9), wm_mix(7, 9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_del),
        cmocka_unit_test(test_growth_and_tombstones),
        cmocka_unit_test(test_churn),
        cmocka_unit_test(test_mix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
