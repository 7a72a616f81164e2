/* test_addrmap.c - the lock-free address map of libweft-instrument
 * (recorders/instrument/addrmap.c): put/get, refusals (key 0, a key twice), growth
 * keeping every entry, the WEFT__ADDRMAP_MAX_SLOTS limit, and readers on
 * other threads that always find every entry published before their
 * lookup began while a writer keeps adding and growing the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "addrmap.h"
#include "weft_errors.h"

/* Code-like keys: 16-byte aligned, clustered. */
static uintptr_t key_of(size_t i)
{
    return (uintptr_t)0x555555554000u + 16 * (uintptr_t)i;
}

static void test_basic(void **state)
{
    weft__addrmap m = WEFT__ADDRMAP_INIT;
    uint32_t v = 7;

    (void)state;
    assert_int_equal(weft__addrmap_get(&m, key_of(1), &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(weft__addrmap_put(&m, 0, 1), WEFT_EINVAL);
    assert_int_equal(weft__addrmap_put(&m, key_of(1), 10), 0);
    assert_int_equal(weft__addrmap_put(&m, key_of(2), UINT32_MAX), 0);
    assert_int_equal(weft__addrmap_put(&m, key_of(1), 11), WEFT_EEXIST);
    assert_int_equal(weft__addrmap_get(&m, key_of(1), &v), 1);
    assert_int_equal(v, 10);
    assert_int_equal(weft__addrmap_get(&m, key_of(2), &v), 1);
    assert_int_equal(v, UINT32_MAX);
    assert_int_equal(weft__addrmap_get(&m, key_of(3), &v), 0);
    assert_int_equal(m.count, 2);
    weft__addrmap_free(&m);
    assert_int_equal(weft__addrmap_get(&m, key_of(1), &v), 0);
    weft__addrmap_free(&m);
}

/* Fills the map up to its limit: every entry survives each growth, and
 * the first key too many is refused without changing anything. */
static void test_grow_to_limit(void **state)
{
    weft__addrmap m = WEFT__ADDRMAP_INIT;
    const size_t max = WEFT__ADDRMAP_MAX_SLOTS / 2;
    uint32_t v;
    size_t i;
    int rc = 0;

    (void)state;
    for (i = 0; i < max + 1; i++) {
        rc = weft__addrmap_put(&m, key_of(i), (uint32_t)i);
        if (rc != 0)
            break;
    }
    assert_int_equal(rc, WEFT_ELIMIT);
    assert_int_equal(i, max);
    assert_int_equal(m.count, max);
    for (i = 0; i < max; i += 7) {
        assert_int_equal(weft__addrmap_get(&m, key_of(i), &v), 1);
        assert_int_equal(v, (uint32_t)i);
    }
    assert_int_equal(weft__addrmap_get(&m, key_of(max), &v), 0);
    weft__addrmap_free(&m);
}

#define READERS 3
#define KEYS 200000

typedef struct shared {
    weft__addrmap m;
    pthread_mutex_t mu;        /* the writers' lock */
    atomic_size_t published;   /* keys 0 .. published-1 are in the map */
    atomic_int done;
    size_t misses;             /* by readers, of published keys; under mu */
} shared;

static void *reader(void *arg)
{
    shared *s = arg;
    uint64_t x = (uint64_t)(uintptr_t)&x | 1;
    size_t misses = 0;

    while (!atomic_load(&s->done)) {
        size_t n = atomic_load(&s->published), i;
        uint32_t v;

        if (n == 0)
            continue;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        i = (size_t)(x % n);
        if (!weft__addrmap_get(&s->m, key_of(i), &v) || v != (uint32_t)i)
            misses++;
    }
    pthread_mutex_lock(&s->mu);
    s->misses += misses;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    static shared s = { .m = WEFT__ADDRMAP_INIT,
                        .mu = PTHREAD_MUTEX_INITIALIZER };
    pthread_t tid[READERS];
    uint32_t v;

    (void)state;
    for (int i = 0; i < READERS; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, reader, &s), 0);
    for (size_t i = 0; i < KEYS; i++) {
        pthread_mutex_lock(&s.mu);
        if (!weft__addrmap_get(&s.m, key_of(i), &v))
            assert_int_equal(weft__addrmap_put(&s.m, key_of(i), (uint32_t)i),
                             0);
        pthread_mutex_unlock(&s.mu);
        atomic_store(&s.published, i + 1);
    }
    atomic_store(&s.done, 1);
    for (int i = 0; i < READERS; i++)
        pthread_join(tid[i], NULL);
    assert_int_equal(s.misses, 0);
    assert_int_equal(s.m.count, KEYS);
    weft__addrmap_free(&s.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_grow_to_limit),
        cmocka_unit_test(test_concurrent_readers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
