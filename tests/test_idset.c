/* test_idset.c - the map of defined ids (daemon/idset.c): an empty set
 * has nothing, ids are found once added and their neighbours are not,
 * it grows for an id far beyond it and keeps what it held, the limit
 * refuses an id without touching the set, a freed set is empty and
 * usable again; its memory follows the number of ids held, never their
 * size (the largest ids of a member cost what small ones do: issue 30
 * finding 3); values and deletions agree with a plain array under a
 * random mix of dense and sparse ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "idset.h"
#include "weft_errors.h"

static void test_empty(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_false(weft_idset_has(&s, 0));
    assert_false(weft_idset_has(&s, 1u << 20));
    assert_false(weft_idset_has(&s, UINT64_MAX));
    weft_idset_free(&s);  /* nothing to free: fine */
}

static void test_add_has(void **state)
{
    weft_idset s = { 0 };
    const uint64_t ids[] = { 0, 7, 8, 9, 1023 };

    (void)state;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        assert_int_equal(weft_idset_add(&s, ids[i], 1u << 20), 0);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        assert_true(weft_idset_has(&s, ids[i]));
    assert_false(weft_idset_has(&s, 1));
    assert_false(weft_idset_has(&s, 6));
    assert_false(weft_idset_has(&s, 10));
    assert_false(weft_idset_has(&s, 1022));
    assert_false(weft_idset_has(&s, 1024));
    assert_int_equal(s.n, 5);
    /* 1023 is far beyond 4 ids: in the table, not a 1024-id array. */
    assert_true(s.ndense <= 64);
    assert_int_equal(s.nsparse, 1);
    /* Adding twice is fine. */
    assert_int_equal(weft_idset_add(&s, 7, 1u << 20), 0);
    assert_true(weft_idset_has(&s, 7));
    weft_idset_free(&s);
}

static void test_grows(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_int_equal(weft_idset_add(&s, 3, 1u << 30), 0);
    assert_int_equal(weft_idset_add(&s, 100000, 1u << 30), 0);
    assert_true(weft_idset_has(&s, 3));
    assert_true(weft_idset_has(&s, 100000));
    assert_false(weft_idset_has(&s, 99999));
    assert_false(weft_idset_has(&s, 100001));
    for (uint64_t id = 0; id < 200000; id++)
        if (id != 100000 && id != 3)
            assert_false(weft_idset_has(&s, id));
    /* Filling the ids below it moves it into a dense array that covers
     * them all (a power of two). */
    for (uint64_t id = 0; id < 100000; id++)
        assert_int_equal(weft_idset_add(&s, id, 1u << 30), 0);
    assert_true(s.ndense > 100000);
    assert_int_equal(s.ndense & (s.ndense - 1), 0);
    assert_int_equal(s.nsparse, 0);
    assert_int_equal(s.n, 100001);
    assert_true(weft_idset_has(&s, 100000));
    assert_false(weft_idset_has(&s, 100001));
    weft_idset_free(&s);
}

static void test_limit(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_int_equal(weft_idset_add(&s, 16, 16), WEFT_ELIMIT);
    assert_int_equal(s.n, 0);  /* untouched */
    assert_null(s.dense);
    assert_null(s.slots);
    assert_int_equal(weft_idset_add(&s, 15, 16), 0);
    assert_int_equal(weft_idset_add(&s, UINT64_MAX, 16), WEFT_ELIMIT);
    assert_true(weft_idset_has(&s, 15));
    assert_false(weft_idset_has(&s, 16));
    weft_idset_free(&s);
}

static void test_free_reuse(void **state)
{
    weft_idset s = { 0 };

    (void)state;
    assert_int_equal(weft_idset_add(&s, 5000, 1u << 20), 0);
    weft_idset_free(&s);
    assert_null(s.dense);
    assert_null(s.slots);
    assert_int_equal(s.n, 0);
    assert_false(weft_idset_has(&s, 5000));
    assert_int_equal(weft_idset_add(&s, 2, 1u << 20), 0);
    assert_true(weft_idset_has(&s, 2));
    assert_false(weft_idset_has(&s, 5000));
    weft_idset_free(&s);
}

/* A member defining the largest ids of an id space holds what one
 * defining as many small ones does: ~bytes per id, not per id's size. */
static void test_memory_by_count(void **state)
{
    weft_idset big = { 0 }, small = { 0 };
    const uint64_t top = (UINT64_C(1) << 24) - 1;

    (void)state;
    for (uint64_t i = 0; i < 1000; i++) {
        assert_int_equal(weft_idset_add(&big, top - i * 7, UINT64_MAX), 0);
        assert_int_equal(weft_idset_add(&small, i, UINT64_MAX), 0);
    }
    assert_int_equal(big.n, 1000);
    assert_true(weft_idset_bytes(&big) <= 1000 * 64 + 1024);
    assert_true(weft_idset_bytes(&small) <= 1000 * 32 + 1024);
    for (uint64_t i = 0; i < 1000; i++) {
        assert_true(weft_idset_has(&big, top - i * 7));
        assert_false(weft_idset_has(&big, top - i * 7 - 1));
    }
    /* One id at the very top costs a few slots. */
    weft_idset_free(&big);
    assert_int_equal(weft_idset_add(&big, UINT64_MAX - 1, UINT64_MAX), 0);
    assert_true(weft_idset_bytes(&big) <= 1024);
    assert_true(weft_idset_has(&big, UINT64_MAX - 1));
    weft_idset_free(&big);
    weft_idset_free(&small);
}

/* Values are kept and replaced; ids are removed (from both parts), and a
 * random mix agrees with a plain array throughout, also after the dense
 * part grew over ids that were in the table. */
static void test_values_del_random(void **state)
{
    enum { SPAN = 1 << 16, OPS = 200000 };
    uint64_t *ref = calloc(SPAN, sizeof *ref);
    weft_idset s = { 0 };
    uint64_t n = 0, peak = 0;

    (void)state;
    assert_non_null(ref);
    srand(30);
    for (int op = 0; op < OPS; op++) {
        /* Mostly small ids, some far ones (a sparse table first). */
        uint64_t id = op % 5 == 0 ? (uint64_t)rand() % SPAN
                                  : (uint64_t)rand() % (op / 50 + 64);
        if (rand() % 3 == 0) {
            weft_idset_del(&s, id);
            n -= ref[id] != 0;
            ref[id] = 0;
        } else {
            uint64_t v = (uint64_t)rand() << 20 | 1;
            assert_int_equal(weft_idset_put(&s, id, v), 0);
            n += ref[id] == 0;
            ref[id] = v;
            peak = n > peak ? n : peak;
        }
        if (op % 1000 == 0 || op == OPS - 1) {
            for (uint64_t i = 0; i < SPAN; i++)
                assert_true(weft_idset_get(&s, i) == ref[i]);
            assert_true(s.n == n);
            /* Memory follows the most ids held (nothing shrinks). */
            assert_true(weft_idset_bytes(&s) <= 100 * (peak + 16) + 1024);
        }
    }
    weft_idset_free(&s);
    free(ref);
}

typedef struct seen {
    uint64_t ids[8], values[8];
    size_t n;
} seen;

static int note(void *arg, uint64_t id, uint64_t value)
{
    seen *s = arg;

    if (s->n == 8)
        return 7;
    s->ids[s->n] = id;
    s->values[s->n++] = value;
    return 0;
}

/* Every id once, with its value: the dense ones in order, then the far
 * ones; a nonzero return ends the walk with it. */
static void test_each(void **state)
{
    weft_idset s = { 0 };
    seen v = { 0 };

    (void)state;
    assert_int_equal(weft_idset_each(&s, note, &v), 0);
    assert_int_equal(v.n, 0);
    assert_int_equal(weft_idset_put(&s, 3, 30), 0);
    assert_int_equal(weft_idset_put(&s, 1, 10), 0);
    assert_int_equal(weft_idset_put(&s, UINT64_C(1) << 40, 50), 0);
    assert_int_equal(weft_idset_put(&s, 2, 20), 0);
    weft_idset_del(&s, 2);
    assert_int_equal(weft_idset_each(&s, note, &v), 0);
    assert_int_equal(v.n, 3);
    assert_int_equal(v.ids[0], 1);
    assert_int_equal(v.values[0], 10);
    assert_int_equal(v.ids[1], 3);
    assert_int_equal(v.values[1], 30);
    assert_int_equal(v.ids[2], UINT64_C(1) << 40);
    assert_int_equal(v.values[2], 50);
    for (uint64_t i = 100; i < 110; i++)
        assert_int_equal(weft_idset_put(&s, i, i), 0);
    v.n = 0;
    assert_int_equal(weft_idset_each(&s, note, &v), 7);
    assert_int_equal(v.n, 8);
    weft_idset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_add_has),
        cmocka_unit_test(test_grows),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_free_reuse),
        cmocka_unit_test(test_memory_by_count),
        cmocka_unit_test(test_values_del_random),
        cmocka_unit_test(test_each),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
