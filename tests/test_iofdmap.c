/* test_iofdmap.c - libweft-io's descriptor map (recorders/io/fdmap.c):
 * entries, replacement and removal, the range limits, and threads
 * setting and taking disjoint descriptors at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "fdmap.h"

static io_fdmap map;

static void test_entry_encoding(void **state)
{
    uint64_t e = io_entry(7, 3);

    (void)state;
    assert_int_not_equal(e, 0);
    assert_int_equal(io_entry_handle(e), 7);
    assert_int_equal(io_entry_file(e), 3);
    e = io_entry(0, UINT32_MAX);         /* a handle of no file */
    assert_int_not_equal(e, 0);
    assert_int_equal(io_entry_handle(e), 0);
    assert_int_equal(io_entry_file(e), UINT32_MAX);
}

static void test_set_get_take(void **state)
{
    (void)state;
    io_fdmap_clear(&map);
    assert_int_equal(io_fdmap_get(&map, 3), 0);
    assert_int_equal(io_fdmap_set(&map, 3, io_entry(1, 1)), 0);
    assert_int_equal(io_fdmap_get(&map, 3), io_entry(1, 1));
    /* a reused descriptor replaces the old entry and returns it */
    assert_int_equal(io_fdmap_set(&map, 3, io_entry(2, 1)), io_entry(1, 1));
    assert_int_equal(io_fdmap_take(&map, 3), io_entry(2, 1));
    assert_int_equal(io_fdmap_take(&map, 3), 0);
    assert_int_equal(io_fdmap_get(&map, 3), 0);
}

static void test_range(void **state)
{
    int big = (int)(IO_FDMAP_CHUNK * IO_FDMAP_CHUNKS);

    (void)state;
    assert_int_equal(io_fdmap_set(&map, -1, io_entry(1, 1)), 0);
    assert_int_equal(io_fdmap_get(&map, -1), 0);
    assert_int_equal(io_fdmap_set(&map, big, io_entry(1, 1)), 0);
    assert_int_equal(io_fdmap_get(&map, big), 0);
    /* the last descriptor and one in a far chunk work */
    assert_int_equal(io_fdmap_set(&map, big - 1, io_entry(5, 6)), 0);
    assert_int_equal(io_fdmap_get(&map, big - 1), io_entry(5, 6));
    assert_int_equal(io_fdmap_take(&map, big - 1), io_entry(5, 6));
    /* get and take in a chunk never allocated allocate nothing */
    assert_int_equal(io_fdmap_get(&map, 70000), 0);
    assert_int_equal(io_fdmap_take(&map, 70000), 0);
    assert_null(map.chunk[70000 / IO_FDMAP_CHUNK]);
}

#define NTHREADS 4
#define PER 20000

static void *worker(void *arg)
{
    int base = (int)(intptr_t)arg;
    intptr_t bad = 0;

    for (int round = 0; round < 3; round++)
        for (int i = 0; i < PER; i++) {
            int fd = base + i * NTHREADS;
            uint64_t e = io_entry((uint32_t)fd, (uint32_t)round);
            if (io_fdmap_set(&map, fd, e) != 0 ||
                io_fdmap_get(&map, fd) != e || io_fdmap_take(&map, fd) != e)
                bad++;
        }
    return (void *)bad;
}

static void test_threads(void **state)
{
    pthread_t t[NTHREADS];

    (void)state;
    io_fdmap_clear(&map);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker,
                                        (void *)(intptr_t)i), 0);
    for (int i = 0; i < NTHREADS; i++) {
        void *bad;
        assert_int_equal(pthread_join(t[i], &bad), 0);
        assert_null(bad);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_encoding),
        cmocka_unit_test(test_set_get_take),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
