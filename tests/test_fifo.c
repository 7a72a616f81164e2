/* test_fifo.c - the one FIFO (proto/fifo.h): elements come out in the
 * order they went in, the queue is empty (head and tail NULL) when the
 * last one is taken, and it is usable again after. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_interleaved),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
