/* test_hashtab.c - the one hash table (proto/hashtab.h): an empty table
 * finds nothing, a key is found once added and its neighbours are not,
 * a second get of a key is the same cell, the table grows when half full
 * and keeps every cell's contents, cell order walks every key once, and
 * a freed table is empty and usable again; keys that hash to the same
 * cell each get their own; counts agree with a plain array under a
 * random mix of keys; removing keys (runs that wrap around the table's
 * end among them) leaves every other key findable with its contents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "hashtab.h"

typedef struct cell {
    uint32_t key;
    uint64_t count;
} cell;

static void test_empty(void **state)
{
    weft_hashtab t = { 0 };

    (void)state;
    assert_null(weft_hashtab_find(&t, 1, sizeof(cell)));
    assert_null(weft_hashtab_find(&t, UINT32_MAX, sizeof(cell)));
    weft_hashtab_free(&t);  /* nothing to free: fine */
    assert_int_equal(t.used, 0);
}

static void test_get_find(void **state)
{
    weft_hashtab t = { 0 };
    cell *c, *d;

    (void)state;
    c = weft_hashtab_get(&t, 7, sizeof *c);
    assert_non_null(c);
    assert_int_equal(c->key, 7);
    assert_int_equal(c->count, 0);
    c->count = 42;
    d = weft_hashtab_get(&t, 7, sizeof *d);
    assert_ptr_equal(c, d);
    assert_int_equal(d->count, 42);
    assert_int_equal(t.used, 1);
    assert_ptr_equal(weft_hashtab_find(&t, 7, sizeof(cell)), c);
    assert_null(weft_hashtab_find(&t, 6, sizeof(cell)));
    assert_null(weft_hashtab_find(&t, 8, sizeof(cell)));
    weft_hashtab_free(&t);
    assert_null(weft_hashtab_find(&t, 7, sizeof(cell)));
    assert_non_null(weft_hashtab_get(&t, 9, sizeof(cell)));  /* reusable */
    weft_hashtab_free(&t);
}

/* Keys whose hash picks the same cell of the first table (16 cells):
 * the probe moves on, and each keeps its own cell. */
static void test_collisions(void **state)
{
    weft_hashtab t = { 0 };
    uint32_t keys[4], n = 0;
    cell *c[4];

    (void)state;
    for (uint32_t k = 1; n < 4; k++)
        if (((k * 2654435761u) & 15) == 3)
            keys[n++] = k;
    for (uint32_t i = 0; i < 4; i++) {
        c[i] = weft_hashtab_get(&t, keys[i], sizeof(cell));
        assert_non_null(c[i]);
        c[i]->count = i + 100;
    }
    assert_int_equal(t.ncells, 16);
    for (uint32_t i = 0; i < 4; i++) {
        cell *f = weft_hashtab_find(&t, keys[i], sizeof(cell));
        assert_ptr_equal(f, c[i]);
        assert_int_equal(f->count, i + 100);
        assert_ptr_equal((unsigned char *)f - t.cells,
                         (3 + i) * sizeof(cell));
    }
    weft_hashtab_free(&t);
}

/* Many keys: every count survives the growths, the table stays at most
 * half full, and walking it meets each key once. */
static void test_grows_and_walks(void **state)
{
    enum { N = 5000 };
    weft_hashtab t = { 0 };
    static uint64_t want[N + 1];
    static unsigned seen[N + 1];
    uint32_t keys[N];
    unsigned seed = 12345;
    size_t walked = 0;

    (void)state;
    for (uint32_t i = 0; i < N; i++)
        keys[i] = (i + 1) * 16;
    for (int round = 0; round < 4 * N; round++) {
        uint32_t i;
        cell *c;
        seed = seed * 1103515245u + 12345u;
        i = (seed >> 8) % N;
        c = weft_hashtab_get(&t, keys[i], sizeof *c);
        assert_non_null(c);
        c->count++;
        want[i]++;
        assert_true(t.used * 2 <= t.ncells);
    }
    for (uint32_t i = 0; i < N; i++) {
        cell *c = weft_hashtab_find(&t, keys[i], sizeof *c);
        if (!want[i]) {
            assert_null(c);
            continue;
        }
        assert_non_null(c);
        assert_int_equal(c->count, want[i]);
    }
    for (size_t j = 0; j < t.ncells; j++) {
        cell *c = weft_hashtab_at(&t, j, sizeof *c);
        uint32_t i;
        if (!c)
            continue;
        walked++;
        i = c->key / 16 - 1;
        assert_true(i < N && keys[i] == c->key);
        assert_int_equal(seen[i]++, 0);
    }
    assert_int_equal(walked, t.used);
    weft_hashtab_free(&t);
}

/* Key i (0..299) of test_delete: ten homes, 30 keys each (keys equal
 * in their low 16 bits share a home in any table of up to 65536 cells),
 * so that the probe runs are long and wrap around the table's end. */
static uint32_t del_key(uint32_t i)
{
    return (i % 10) * 97 + 1 + (i / 10) * 65536u;
}

/* Removes and adds keys at random, against a plain array of which keys
 * are in and what they hold. */
static void test_delete(void **state)
{
    weft_hashtab t = { 0 };
    uint64_t want[300] = { 0 };   /* 0: absent, else its count */
    uint32_t seed = 12345;
    size_t n = 0;

    (void)state;
    for (int step = 0; step < 200000; step++) {
        uint32_t k;
        cell *c;

        seed = seed * 1103515245u + 12345u;
        k = (seed >> 8) % 300;
        if ((seed >> 4) % 3 == 0) {
            weft_hashtab_del(&t, del_key(k), sizeof(cell));
            n -= want[k] != 0;
            want[k] = 0;
        } else {
            c = weft_hashtab_get(&t, del_key(k), sizeof *c);
            assert_non_null(c);
            n += want[k] == 0;
            want[k] = c->count = (uint64_t)step + 1;
        }
        assert_int_equal(t.used, n);
        if (step % 997 == 0)
            for (uint32_t j = 0; j < 300; j++) {
                c = weft_hashtab_find(&t, del_key(j), sizeof *c);
                if (want[j]) {
                    assert_non_null(c);
                    assert_int_equal(c->count, want[j]);
                } else {
                    assert_null(c);
                }
            }
    }
    /* Removing what is absent changes nothing; an empty table too. */
    weft_hashtab_del(&t, del_key(300), sizeof(cell));
    assert_int_equal(t.used, n);
    weft_hashtab_free(&t);
    weft_hashtab_del(&t, 1, sizeof(cell));
    assert_int_equal(t.used, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_get_find),
        cmocka_unit_test(test_collisions),
        cmocka_unit_test(test_grows_and_walks),
        cmocka_unit_test(test_delete),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
