/* test_connmode.c - a connection's transition table (daemon/ingest/
 * connmode.c): every event in every mode is either accepted, moving to
 * the mode this test expects, or refused with a named WEFT_E* code and a
 * message with one %s; the messages clients see for the refusals of the
 * protocol (before Hello, a second Hello, ...); weftd's own events out
 * of turn are refused as WEFT_ESTATE; every frame kind maps to its
 * event; names in and out of range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "connmode.h"
#include "frame.h"
#include "weft_errors.h"

#define F(x) WEFT_CONN_##x
#define E(x) WEFT_CONN_EV_##x

/* The transitions a connection may take, written here apart from the
 * table under test: anything not listed must be refused. */
static const struct {
    enum weft_conn_mode from;
    enum weft_conn_event ev;
    enum weft_conn_mode to;
} legal[] = {
    { F(FRESH), E(AUTH), F(AUTHENTICATING) },
    { F(FRESH), E(HELLO), F(MEMBER) },
    { F(FRESH), E(QUERY), F(ASKING) },
    { F(FRESH), E(NODE_HELLO), F(NODE) },
    { F(AUTHENTICATED), E(NODE_HELLO), F(NODE) },
    { F(NODE), E(HEARTBEAT), F(NODE) },
    { F(NODE), E(NODE_STATUS), F(NODE) },
    { F(NODE), E(NODE_RELAY), F(NODE) },
    { F(NODE), E(CLOCK_SYNC), F(NODE) },  /* a node times its parts */
    { F(AUTHENTICATING), E(AUTH_OK), F(AUTHENTICATED) },
    { F(AUTHENTICATED), E(HELLO), F(MEMBER) },
    { F(MEMBER), E(DEFINITIONS), F(MEMBER) },
    { F(MEMBER), E(EVENT_BATCH), F(MEMBER) },
    { F(MEMBER), E(GOODBYE), F(MEMBER) },
    { F(MEMBER), E(CLOCK_SYNC), F(MEMBER) },
    { F(MEMBER), E(HEARTBEAT), F(MEMBER) },
    { F(ASKING), E(IMPORT_QUERY), F(IMPORTING) },
    { F(IMPORTING), E(IMPORT_TRACE), F(ASKING) },
};

static int expected(enum weft_conn_mode from, enum weft_conn_event ev,
                    enum weft_conn_mode *to)
{
    if (ev == E(CLOSE)) { /* from anywhere, idempotent */
        *to = F(CLOSING);
        return 1;
    }
    for (size_t i = 0; i < sizeof legal / sizeof legal[0]; i++)
        if (legal[i].from == from && legal[i].ev == ev) {
            *to = legal[i].to;
            return 1;
        }
    return 0;
}

/* weftd's own events: never a client's frame. */
static int internal(enum weft_conn_event ev)
{
    return ev == E(AUTH_OK) || ev == E(IMPORT_QUERY) || ev == E(CLOSE);
}

static void test_every_event_in_every_mode(void **state)
{
    (void)state;
    for (int m = 0; m < WEFT_CONN_NMODES; m++) {
        for (int ev = 0; ev < WEFT_CONN_NEVENTS; ev++) {
            enum weft_conn_mode next = WEFT_CONN_NMODES, want;
            const char *why = NULL, *p;
            int rc = weft_connmode_next(m, ev, &next, &why);

            if (expected(m, ev, &want)) {
                if (rc != 0 || next != want)
                    fail_msg("%s in %s: rc %d, to %s; expected %s",
                             weft_connmode_event_name(ev),
                             weft_connmode_name(m), rc,
                             weft_connmode_name(next),
                             weft_connmode_name(want));
                continue;
            }
            if (rc >= 0 || !why)
                fail_msg("%s in %s accepted (to %s)",
                         weft_connmode_event_name(ev), weft_connmode_name(m),
                         weft_connmode_name(next));
            assert_string_not_equal(weft_err_name(rc), "EUNKNOWN");
            /* a client's frame out of turn is its protocol error, unless
             * the connection is closing; weftd's own event is a bug */
            if (internal(ev) || m == F(CLOSING))
                assert_int_equal(rc, WEFT_ESTATE);
            else
                assert_int_equal(rc, WEFT_EPROTO);
            p = strchr(why, '%');
            assert_non_null(p);
            assert_int_equal(p[1], 's');
            assert_null(strchr(p + 2, '%'));
        }
    }
}

static void refused_as(enum weft_conn_mode m, enum weft_conn_event ev,
                       const char *name, const char *msg)
{
    enum weft_conn_mode next;
    const char *why;
    char got[128];

    assert_true(weft_connmode_next(m, ev, &next, &why) < 0);
    snprintf(got, sizeof got, why, name);
    assert_string_equal(got, msg);
}

/* The Error texts a client sees, as before the table existed. */
static void test_protocol_messages(void **state)
{
    (void)state;
    refused_as(F(FRESH), E(DEFINITIONS), "Definitions",
               "Definitions before Hello");
    refused_as(F(AUTHENTICATED), E(OTHER), "Challenge",
               "Challenge before Hello");
    refused_as(F(MEMBER), E(OTHER), "Ack", "unexpected Ack from a client");
    refused_as(F(MEMBER), E(HELLO), "Hello",
               "second Hello on one connection");
    refused_as(F(MEMBER), E(AUTH), "Auth", "Auth after Hello");
    refused_as(F(AUTHENTICATED), E(AUTH), "Auth",
               "second Auth on one connection");
    refused_as(F(MEMBER), E(QUERY), "Query", "Query after Hello");
    refused_as(F(ASKING), E(QUERY), "Query", "Query after a Query");
    refused_as(F(AUTHENTICATING), E(QUERY), "Query", "Query after Auth");
    refused_as(F(ASKING), E(HELLO), "Hello", "Hello after a Query");
    refused_as(F(IMPORTING), E(HELLO), "Hello", "Hello after a Query");
    refused_as(F(FRESH), E(IMPORT_TRACE), "ImportTrace",
               "ImportTrace without a Query to import before it");
    refused_as(F(ASKING), E(IMPORT_TRACE), "ImportTrace",
               "ImportTrace without a Query to import before it");
    /* a node's link carries no records, questions or second hellos */
    refused_as(F(NODE), E(HELLO), "Hello", "Hello on a node's link");
    refused_as(F(NODE), E(EVENT_BATCH), "EventBatch",
               "EventBatch on a node's link");
    refused_as(F(NODE), E(QUERY), "Query", "Query on a node's link");
    refused_as(F(NODE), E(NODE_HELLO), "NodeHello",
               "second NodeHello on one connection");
    refused_as(F(MEMBER), E(NODE_HELLO), "NodeHello",
               "NodeHello after Hello");
    refused_as(F(FRESH), E(NODE_STATUS), "NodeStatus",
               "NodeStatus before Hello");
    refused_as(F(MEMBER), E(NODE_STATUS), "NodeStatus",
               "unexpected NodeStatus from a client");
    /* only a node's link relays; a relayed member relays nothing */
    refused_as(F(AUTHENTICATED), E(NODE_RELAY), "NodeRelay",
               "NodeRelay before Hello");
    refused_as(F(MEMBER), E(NODE_RELAY), "NodeRelay",
               "unexpected NodeRelay from a client");
    refused_as(F(AUTHENTICATING), E(NODE_HELLO), "NodeHello",
               "NodeHello before its Auth was checked");
}

/* An illegal transition is refused and names none. */
static void test_illegal_refused(void **state)
{
    enum weft_conn_mode next = F(FRESH);
    const char *why = NULL;

    (void)state;
    assert_int_equal(weft_connmode_next(F(FRESH), E(AUTH_OK), &next, &why),
                     WEFT_ESTATE);
    assert_int_equal(next, F(FRESH)); /* untouched */
    assert_string_equal(why, "%s out of order");
    assert_int_equal(weft_connmode_next(F(CLOSING), E(HELLO), &next, &why),
                     WEFT_ESTATE);
    assert_int_equal(weft_connmode_next(F(MEMBER), E(IMPORT_QUERY), &next,
                                        &why), WEFT_ESTATE);
    assert_int_equal(weft_connmode_next(WEFT_CONN_NMODES, E(CLOSE), &next,
                                        &why), WEFT_ESTATE);
    assert_int_equal(weft_connmode_next(F(FRESH), WEFT_CONN_NEVENTS, &next,
                                        &why), WEFT_ESTATE);
}

static void test_event_of_frames(void **state)
{
    static const struct { int msg; enum weft_conn_event ev; } map[] = {
        { WEFT__ENVELOPE__MSG_AUTH, E(AUTH) },
        { WEFT__ENVELOPE__MSG_HELLO, E(HELLO) },
        { WEFT__ENVELOPE__MSG_NODE_HELLO, E(NODE_HELLO) },
        { WEFT__ENVELOPE__MSG_NODE_HELLO_ACK, E(OTHER) },
        { WEFT__ENVELOPE__MSG_NODE_STATUS, E(NODE_STATUS) },
        { WEFT__ENVELOPE__MSG_NODE_RELAY, E(NODE_RELAY) },
        { WEFT__ENVELOPE__MSG_QUERY, E(QUERY) },
        { WEFT__ENVELOPE__MSG_IMPORT_TRACE, E(IMPORT_TRACE) },
        { WEFT__ENVELOPE__MSG_DEFINITIONS, E(DEFINITIONS) },
        { WEFT__ENVELOPE__MSG_EVENT_BATCH, E(EVENT_BATCH) },
        { WEFT__ENVELOPE__MSG_GOODBYE, E(GOODBYE) },
        { WEFT__ENVELOPE__MSG_CLOCK_SYNC, E(CLOCK_SYNC) },
        { WEFT__ENVELOPE__MSG_HEARTBEAT, E(HEARTBEAT) },
        { WEFT__ENVELOPE__MSG_ACK, E(OTHER) },
        { WEFT__ENVELOPE__MSG_CHALLENGE, E(OTHER) },
        { WEFT__ENVELOPE__MSG__NOT_SET, E(OTHER) },
    };

    (void)state;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        assert_int_equal(weft_connmode_event_of(map[i].msg), map[i].ev);
}

static void test_names(void **state)
{
    (void)state;
    for (int m = 0; m < WEFT_CONN_NMODES; m++)
        assert_string_not_equal(weft_connmode_name(m), "?");
    for (int ev = 0; ev < WEFT_CONN_NEVENTS; ev++)
        assert_string_not_equal(weft_connmode_event_name(ev), "?");
    assert_string_equal(weft_connmode_name(F(MEMBER)), "member");
    assert_string_equal(weft_connmode_event_name(E(HELLO)), "Hello");
    assert_string_equal(weft_connmode_name(WEFT_CONN_NMODES), "?");
    assert_string_equal(weft_connmode_event_name(WEFT_CONN_NEVENTS), "?");
}

/* Joined: a member or a node (their frame limit and timeouts). */
static void test_joined(void **state)
{
    (void)state;
    for (int m = 0; m < WEFT_CONN_NMODES; m++)
        assert_int_equal(weft_connmode_joined(m),
                         m == F(MEMBER) || m == F(NODE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_event_in_every_mode),
        cmocka_unit_test(test_protocol_messages),
        cmocka_unit_test(test_joined),
        cmocka_unit_test(test_illegal_refused),
        cmocka_unit_test(test_event_of_frames),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
