/* test_tracestate.c - a trace's lifecycle (daemon/traces/trace.h): every
 * event in every state is accepted, moving the trace to the state the
 * table below says and onto that state's list, or refused with
 * WEFT_ESTATE, the trace staying where it was. The table here is written
 * out again from the lifecycle's description, not taken from trace.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"

#define NS WEFT_TRACE__NSTATES
#define NE WEFT_TEV__COUNT
#define REFUSED (-1)

/* want[state][event]: the new state, or REFUSED. */
static int want[NS][NE];

static void fill_want(void)
{
    for (int s = 0; s < NS; s++)
        for (int e = 0; e < NE; e++)
            want[s][e] = REFUSED;
    want[WEFT_TRACE_RECORDING][WEFT_TEV_END] = WEFT_TRACE_SYNCING;
    want[WEFT_TRACE_RECORDING][WEFT_TEV_NO_DIR] = WEFT_TRACE_DROPPED;
    want[WEFT_TRACE_RECORDING][WEFT_TEV_FORGET] = WEFT_TRACE_DONE;
    want[WEFT_TRACE_SYNCING][WEFT_TEV_WRITTEN] = WEFT_TRACE_CONVERTING;
    want[WEFT_TRACE_SYNCING][WEFT_TEV_FORGET] = WEFT_TRACE_DONE;
    want[WEFT_TRACE_CONVERTING][WEFT_TEV_FAILED] = WEFT_TRACE_RETRY_WAIT;
    want[WEFT_TRACE_CONVERTING][WEFT_TEV_FINISHED] = WEFT_TRACE_DONE;
    want[WEFT_TRACE_RETRY_WAIT][WEFT_TEV_RETRY] = WEFT_TRACE_SYNCING;
    want[WEFT_TRACE_RETRY_WAIT][WEFT_TEV_FORGET] = WEFT_TRACE_DONE;
    want[WEFT_TRACE_DROPPED][WEFT_TEV_FORGET] = WEFT_TRACE_DONE;
}

/* The table as a pure function, and out-of-range input refused. */
static void test_table(void **state)
{
    (void)state;
    fill_want();
    for (int s = 0; s < NS; s++)
        for (int e = 0; e < NE; e++) {
            int got = weft_trace_next_state((enum weft_trace_state)s,
                                            (enum weft_trace_event)e);
            if (want[s][e] == REFUSED)
                assert_int_equal(got, WEFT_ESTATE);
            else
                assert_int_equal(got, want[s][e]);
        }
    assert_int_equal(weft_trace_next_state(NS, WEFT_TEV_END), WEFT_ESTATE);
    assert_int_equal(weft_trace_next_state(WEFT_TRACE_RECORDING, NE),
                     WEFT_ESTATE);
    assert_string_equal(weft_trace_state_name(WEFT_TRACE_RETRY_WAIT),
                        "retry-wait");
    assert_string_equal(weft_trace_event_name(WEFT_TEV_NO_DIR), "no-dir");
    assert_string_equal(weft_trace_state_name(NS), "?");
}

/* Is t on the list of state s (and on no other)? */
static int listed_only_in(const weft_daemon *d, const weft_trace *t, int s)
{
    int found = 0;

    for (int l = 0; l < WEFT_TRACE_LISTS; l++)
        for (const weft_trace *u = weft_trace_first(d, l); u;
             u = weft_trace_next(u))
            if (u == t) {
                if (l != s)
                    return 0;
                found++;
            }
    return s == WEFT_TRACE_DONE ? found == 0 : found == 1;
}

/* A bare trace in state s, on its list behind another trace there. */
static weft_trace *bare(weft_daemon *d, int s, weft_trace *other)
{
    weft_trace *t = calloc(1, sizeof *t);

    assert_non_null(t);
    t->d = d;
    t->state = (enum weft_trace_state)s;
    t->key = strdup("k");
    t->name = strdup("n");
    assert_non_null(t->key);
    assert_non_null(t->name);
    if (s < WEFT_TRACE_LISTS) {
        /* other first, t at the head: both walks are tested */
        other->state = (enum weft_trace_state)s;
        other->next = NULL;
        other->prev = t;
        t->next = other;
        d->traces->lists[s] = t;
    }
    return t;
}

/* weft_trace_on: every event in every state, on a trace that has a
 * neighbour on its list (the neighbour stays there, alone). */
static void test_on(void **state)
{
    weft_daemon d;
    weft_trace other;

    (void)state;
    fill_want();
    for (int s = 0; s < NS; s++)
        for (int e = 0; e < NE; e++) {
            assert_int_equal(weft_daemon_init(&d), 0);
            memset(&other, 0, sizeof other);
            d.cfg.log_level = -1;
            weft_trace *t = bare(&d, s, &other);
            int rc = weft_trace_on(t, (enum weft_trace_event)e);
            if (want[s][e] == REFUSED) {
                assert_int_equal(rc, WEFT_ESTATE);
                assert_int_equal(t->state, s);
                assert_true(listed_only_in(&d, t, s));
                free(t->key);
                free(t->name);
                free(t);
            } else {
                assert_int_equal(rc, 0);
                if (want[s][e] != WEFT_TRACE_DONE) {
                    assert_int_equal(t->state, want[s][e]);
                    assert_true(listed_only_in(&d, t, want[s][e]));
                    assert_int_equal(weft_trace_count(&d, want[s][e]),
                                     want[s][e] == s ? 2 : 1);
                    free(t->key);
                    free(t->name);
                    free(t);
                } /* else freed by DONE (ASan tells a leak) */
            }
            if (s < WEFT_TRACE_LISTS && want[s][e] != REFUSED) {
                assert_ptr_equal(weft_trace_first(&d, s), &other);
                assert_null(other.prev);
                assert_null(other.next);
            }
            weft_daemon_free(&d); /* and the quota freeing t gave back */
        }
}

/* A trace found by key only in its own state's list. */
static void test_find(void **state)
{
    weft_daemon d;
    weft_trace other;
    weft_trace *t;

    (void)state;
    assert_int_equal(weft_daemon_init(&d), 0);
    memset(&other, 0, sizeof other);
    other.key = "o";
    t = bare(&d, WEFT_TRACE_RETRY_WAIT, &other);
    assert_ptr_equal(weft_trace_find(&d, WEFT_TRACE_RETRY_WAIT, "k"), t);
    assert_ptr_equal(weft_trace_find(&d, WEFT_TRACE_RETRY_WAIT, "o"),
                     &other);
    assert_null(weft_trace_find(&d, WEFT_TRACE_RECORDING, "k"));
    assert_null(weft_trace_find(&d, WEFT_TRACE_RETRY_WAIT, "x"));
    assert_int_equal(weft_trace_count(&d, WEFT_TRACE_RETRY_WAIT), 2);
    assert_int_equal(weft_trace_syncing(t), 0);
    free(t->key);
    free(t->name);
    free(t);
    weft_daemon_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_on),
        cmocka_unit_test(test_find),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
