/* test_fifo.c - the one FIFO (proto/fifo.h): elements come out in the
 * order they went in, the queue is empty (head and tail NULL) when the
 * last one is taken, and it is usable again after. Its doubly linked
 * form: elements leave from anywhere, the others keep their order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fifo.h"

typedef struct item {
    struct item *next;
    int v;
} item;

static void test_order(void **state)
{
    item it[5], *head = NULL, *tail = NULL;

    (void)state;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 5; i++) {
            it[i].v = i;
            it[i].next = &it[0];  /* junk the push must clear */
            WEFT_FIFO_PUSH(head, tail, &it[i]);
            assert_ptr_equal(tail, &it[i]);
            assert_null(tail->next);
        }
        assert_ptr_equal(head, &it[0]);
        for (int i = 0; i < 5; i++) {
            item *x = WEFT_FIFO_SHIFT(head, tail);
            assert_int_equal(x->v, i);
        }
        assert_null(head);
        assert_null(tail);
    }
}

/* Taking and adding in turns keeps the order. */
static void test_interleaved(void **state)
{
    item it[4], *head = NULL, *tail = NULL, *x;

    (void)state;
    for (int i = 0; i < 4; i++)
        it[i].v = i;
    WEFT_FIFO_PUSH(head, tail, &it[0]);
    WEFT_FIFO_PUSH(head, tail, &it[1]);
    x = WEFT_FIFO_SHIFT(head, tail);
    assert_int_equal(x->v, 0);
    WEFT_FIFO_PUSH(head, tail, &it[2]);
    x = WEFT_FIFO_SHIFT(head, tail);
    assert_int_equal(x->v, 1);
    x = WEFT_FIFO_SHIFT(head, tail);
    assert_int_equal(x->v, 2);
    assert_null(head);
    assert_null(tail);
    WEFT_FIFO_PUSH(head, tail, &it[3]);
    assert_ptr_equal(head, &it[3]);
    assert_ptr_equal(tail, &it[3]);
}

typedef struct ditem {
    struct ditem *prev, *next;
    int v;
} ditem;

/* The list from head to tail holds exactly want[0..n), and its links
 * agree both ways. */
static void check_dlist(ditem *head, ditem *tail, const int *want, int n)
{
    ditem *x = head, *last = NULL;

    for (int i = 0; i < n; i++, last = x, x = x->next) {
        assert_non_null(x);
        assert_int_equal(x->v, want[i]);
        assert_ptr_equal(x->prev, last);
    }
    assert_null(x);
    assert_ptr_equal(tail, last);
}

static void test_dlist(void **state)
{
    ditem it[4], *head = NULL, *tail = NULL;
    static const int all[] = { 3, 0, 1, 2 }, mid[] = { 3, 1, 2 },
                     ends[] = { 1 };

    (void)state;
    for (int i = 0; i < 4; i++)
        it[i] = (ditem){ &it[3], &it[3], i };  /* junk links */
    WEFT_DLIST_PUSH_TAIL(head, tail, &it[0], prev, next);
    WEFT_DLIST_PUSH_TAIL(head, tail, &it[1], prev, next);
    WEFT_DLIST_PUSH_TAIL(head, tail, &it[2], prev, next);
    WEFT_DLIST_PUSH_HEAD(head, tail, &it[3], prev, next);
    check_dlist(head, tail, all, 4);
    WEFT_DLIST_UNLINK(head, tail, &it[0], prev, next);  /* the middle */
    assert_null(it[0].prev);
    assert_null(it[0].next);
    check_dlist(head, tail, mid, 3);
    WEFT_DLIST_UNLINK(head, tail, &it[3], prev, next);  /* the head */
    WEFT_DLIST_UNLINK(head, tail, &it[2], prev, next);  /* the tail */
    check_dlist(head, tail, ends, 1);
    WEFT_DLIST_UNLINK(head, tail, &it[1], prev, next);  /* the last */
    check_dlist(head, tail, NULL, 0);
    assert_null(head);
    WEFT_DLIST_PUSH_HEAD(head, tail, &it[2], prev, next);
    assert_ptr_equal(head, &it[2]);
    assert_ptr_equal(tail, &it[2]);
    assert_null(it[2].prev);
    assert_null(it[2].next);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_interleaved),
        cmocka_unit_test(test_dlist),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
