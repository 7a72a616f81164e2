/* test_lockmap.c - libweft-pthread's lock id map (recorders/pthread/
 * lockmap.c): one id per address, dense from 0 in first-seen order;
 * find does not add; growth past several tables keeps every id; threads
 * adding the same addresses at once agree on their ids; free empties.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>

#include "lockmap.h"

#define NTHREADS 4
#define NSHARED 5000

static void test_ids(void **state)
{
    pt_lockmap m = PT_LOCKMAP_INIT;
    pt_lock *a, *b;

    (void)state;
    assert_null(pt_lockmap_find(&m, 0x1000));
    assert_null(pt_lockmap_get(&m, 0));
    a = pt_lockmap_get(&m, 0x1000);
    b = pt_lockmap_get(&m, 0x2000);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->id, 0);
    assert_int_equal(b->id, 1);
    assert_ptr_equal(pt_lockmap_get(&m, 0x1000), a);
    assert_ptr_equal(pt_lockmap_find(&m, 0x2000), b);
    assert_null(pt_lockmap_find(&m, 0x3000));
    assert_int_equal(pt_lockmap_count(&m), 2);
    assert_int_equal(atomic_load(&a->order), 0);
    pt_lockmap_free(&m);
    assert_int_equal(pt_lockmap_count(&m), 0);
    assert_null(pt_lockmap_find(&m, 0x1000));
}

static void test_growth(void **state)
{
    pt_lockmap m = PT_LOCKMAP_INIT;
    const uint32_t n = PT_LOCKMAP_FIRST * 20;

    (void)state;
    for (uint32_t i = 0; i < n; i++) {
        pt_lock *l = pt_lockmap_get(&m, 0x10000 + (uintptr_t)i * 40);
        assert_non_null(l);
        assert_int_equal(l->id, i);
    }
    assert_true(atomic_load(&m.ntables) > 2);
    for (uint32_t i = 0; i < n; i++) {
        pt_lock *l = pt_lockmap_find(&m, 0x10000 + (uintptr_t)i * 40);
        assert_non_null(l);
        assert_int_equal(l->id, i);
    }
    assert_int_equal(pt_lockmap_count(&m), n);
    pt_lockmap_free(&m);
}

static pt_lockmap shared = PT_LOCKMAP_INIT;
static uint32_t seen[NTHREADS][NSHARED];

static void *adder(void *arg)
{
    uint32_t *out = arg;

    for (uint32_t i = 0; i < NSHARED; i++) {
        pt_lock *l = pt_lockmap_get(&shared, 0x800000 + (uintptr_t)i * 64);
        out[i] = l ? l->id : UINT32_MAX;
        if (l)
            atomic_fetch_add(&l->order, 1);
    }
    return NULL;
}

static void test_threads(void **state)
{
    pthread_t t[NTHREADS];
    uint8_t *hit = calloc(NSHARED, 1);

    (void)state;
    assert_non_null(hit);
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_create(&t[k], NULL, adder, seen[k]), 0);
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_join(t[k], NULL), 0);
    assert_int_equal(pt_lockmap_count(&shared), NSHARED);
    for (uint32_t i = 0; i < NSHARED; i++) {
        pt_lock *l = pt_lockmap_find(&shared, 0x800000 + (uintptr_t)i * 64);
        assert_non_null(l);
        assert_int_equal(atomic_load(&l->order), NTHREADS);
        for (int k = 0; k < NTHREADS; k++)
            assert_int_equal(seen[k][i], l->id);
        assert_true(l->id < NSHARED);
        assert_int_equal(hit[l->id], 0); /* ids are distinct and dense */
        hit[l->id] = 1;
    }
    free(hit);
    pt_lockmap_free(&shared);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
