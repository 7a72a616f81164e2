/* test_convq.c - the conversion queue's order (daemon/traces/convq.c): one
 * user's FIFO is kept; with several users waiting the turns go round by
 * uid from the one served last, so bob's eight conversions queued before
 * alice's one delay hers by at most one of his; a user who comes later
 * gets a turn in the round; the queue empties and refills. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "convq.h"
#include "weft_errors.h"

#define ALICE 1000u
#define BOB 1001u
#define CAROL 999u

static void test_fifo_one_user(void **state)
{
    weft_convq q = { 0 };
    weft_convq_item it[4];

    (void)state;
    assert_null(weft_convq_pop(&q));
    for (int i = 0; i < 4; i++)
        assert_int_equal(weft_convq_push(&q, &it[i], BOB), 0);
    assert_int_equal(q.count, 4);
    for (int i = 0; i < 4; i++)
        assert_ptr_equal(weft_convq_pop(&q), &it[i]);
    assert_null(weft_convq_pop(&q));
    assert_int_equal(q.count, 0);
    weft_convq_free(&q);
}

/* Bob's eight queued first, then alice's: alice's comes second. */
static void test_bob_then_alice(void **state)
{
    weft_convq q = { 0 };
    weft_convq_item bob[8], alice;

    (void)state;
    for (int i = 0; i < 8; i++)
        assert_int_equal(weft_convq_push(&q, &bob[i], BOB), 0);
    assert_ptr_equal(weft_convq_pop(&q), &bob[0]);  /* served: bob */
    assert_int_equal(weft_convq_push(&q, &alice, ALICE), 0);
    /* After bob comes the next uid above his, wrapping: alice. */
    assert_ptr_equal(weft_convq_pop(&q), &alice);
    for (int i = 1; i < 8; i++)
        assert_ptr_equal(weft_convq_pop(&q), &bob[i]);
    assert_null(weft_convq_pop(&q));
    weft_convq_free(&q);
}

/* All queued before any is served: the turns alternate by uid. */
static void test_round_robin(void **state)
{
    weft_convq q = { 0 };
    weft_convq_item a[2], b[4], c[1];
    weft_convq_item *want[] = { &c[0], &a[0], &b[0], &a[1], &b[1], &b[2],
                                &b[3] };

    (void)state;
    for (int i = 0; i < 4; i++)
        assert_int_equal(weft_convq_push(&q, &b[i], BOB), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(weft_convq_push(&q, &a[i], ALICE), 0);
    assert_int_equal(weft_convq_push(&q, &c[0], CAROL), 0);
    assert_int_equal(q.users.n, 3);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        weft_convq_item *it = weft_convq_pop(&q);
        assert_ptr_equal(it, want[i]);
        assert_int_equal(q.last_uid, it->uid);
    }
    assert_null(weft_convq_pop(&q));
    assert_int_equal(q.users.n, 0);
    weft_convq_free(&q);
}

/* A user who comes while another's are served gets the next turn after
 * the current one, not the end of the line. */
static void test_latecomer(void **state)
{
    weft_convq q = { 0 };
    weft_convq_item b[3], a;

    (void)state;
    for (int i = 0; i < 3; i++)
        assert_int_equal(weft_convq_push(&q, &b[i], BOB), 0);
    assert_ptr_equal(weft_convq_pop(&q), &b[0]);
    assert_ptr_equal(weft_convq_pop(&q), &b[1]);
    assert_int_equal(weft_convq_push(&q, &a, CAROL), 0);
    assert_ptr_equal(weft_convq_pop(&q), &a);
    assert_ptr_equal(weft_convq_pop(&q), &b[2]);
    /* Refilled after emptying: still in order. */
    assert_int_equal(weft_convq_push(&q, &b[0], UINT32_MAX), 0);
    assert_int_equal(weft_convq_push(&q, &a, 0), 0);
    assert_ptr_equal(weft_convq_pop(&q), &b[0]);  /* after BOB: the max */
    assert_ptr_equal(weft_convq_pop(&q), &a);     /* wraps around */
    assert_null(weft_convq_pop(&q));
    weft_convq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_one_user),
        cmocka_unit_test(test_bob_then_alice),
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_latecomer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
