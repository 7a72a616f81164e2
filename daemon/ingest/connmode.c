/* connmode.c - a connection's transition table (see connmode.h). */
#include "connmode.h"

#include <stddef.h>

#include "frame.h"
#include "weft_errors.h"

typedef struct step {
    unsigned char accepted;
    unsigned char next;     /* enum weft_conn_mode, if accepted */
    int code;               /* WEFT_E*, if refused */
    const char *why;        /* if refused: printf format, one %s */
} step;

#define TO(m) { 1, WEFT_CONN_##m, 0, NULL }
#define NO(fmt) { 0, 0, WEFT_EPROTO, fmt }

/* The messages a client sees (the wire protocol's Error texts). */
#define SECOND NO("second %s on one connection")
#define BEFORE_HELLO NO("%s before Hello")
#define AFTER_AUTH NO("%s after Auth")
#define AFTER_HELLO NO("%s after Hello")
#define AFTER_QUERY NO("%s after a Query")
#define NO_IMPORT NO("%s without a Query to import before it")
#define FROM_NODE NO("%s on a node's link")

/* Records: what a member sends once its Hello was accepted. */
#define RECORDS(s)                                                           \
    [WEFT_CONN_EV_DEFINITIONS] = s, [WEFT_CONN_EV_EVENT_BATCH] = s,          \
    [WEFT_CONN_EV_GOODBYE] = s, [WEFT_CONN_EV_CLOCK_SYNC] = s,               \
    [WEFT_CONN_EV_HEARTBEAT] = s

/* Every (mode, event) left out is refused with WEFT_ESTATE (out_of_order):
 * weftd's own events out of turn, and every frame once closing. */
static const step table[WEFT_CONN_NMODES][WEFT_CONN_NEVENTS] = {
    [WEFT_CONN_FRESH] = {
        [WEFT_CONN_EV_AUTH] = TO(AUTHENTICATING),
        [WEFT_CONN_EV_HELLO] = TO(MEMBER),
        [WEFT_CONN_EV_NODE_HELLO] = TO(NODE),
        [WEFT_CONN_EV_QUERY] = TO(ASKING),
        [WEFT_CONN_EV_IMPORT_TRACE] = NO_IMPORT,
        RECORDS(BEFORE_HELLO),
        [WEFT_CONN_EV_OTHER] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_STATUS] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_RELAY] = BEFORE_HELLO,
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_AUTHENTICATING] = { /* paused: no frame comes meanwhile */
        [WEFT_CONN_EV_AUTH] = SECOND,
        [WEFT_CONN_EV_AUTH_OK] = TO(AUTHENTICATED),
        [WEFT_CONN_EV_HELLO] = NO("%s before its Auth was checked"),
        [WEFT_CONN_EV_NODE_HELLO] = NO("%s before its Auth was checked"),
        [WEFT_CONN_EV_QUERY] = AFTER_AUTH,
        [WEFT_CONN_EV_IMPORT_TRACE] = NO_IMPORT,
        RECORDS(BEFORE_HELLO),
        [WEFT_CONN_EV_OTHER] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_STATUS] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_RELAY] = BEFORE_HELLO,
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_AUTHENTICATED] = {
        [WEFT_CONN_EV_AUTH] = SECOND,
        [WEFT_CONN_EV_HELLO] = TO(MEMBER),
        [WEFT_CONN_EV_NODE_HELLO] = TO(NODE),
        [WEFT_CONN_EV_QUERY] = AFTER_AUTH,
        [WEFT_CONN_EV_IMPORT_TRACE] = NO_IMPORT,
        RECORDS(BEFORE_HELLO),
        [WEFT_CONN_EV_OTHER] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_STATUS] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_RELAY] = BEFORE_HELLO,
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_MEMBER] = {
        [WEFT_CONN_EV_AUTH] = AFTER_HELLO,
        [WEFT_CONN_EV_HELLO] = SECOND,
        [WEFT_CONN_EV_NODE_HELLO] = AFTER_HELLO,
        [WEFT_CONN_EV_QUERY] = AFTER_HELLO,
        [WEFT_CONN_EV_IMPORT_TRACE] = NO_IMPORT,
        RECORDS(TO(MEMBER)),
        [WEFT_CONN_EV_OTHER] = NO("unexpected %s from a client"),
        [WEFT_CONN_EV_NODE_STATUS] = NO("unexpected %s from a client"),
        [WEFT_CONN_EV_NODE_RELAY] = NO("unexpected %s from a client"),
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_NODE] = { /* a node's link: Heartbeats, figures, members */
        [WEFT_CONN_EV_AUTH] = FROM_NODE,
        [WEFT_CONN_EV_HELLO] = FROM_NODE,
        [WEFT_CONN_EV_NODE_HELLO] = SECOND,
        [WEFT_CONN_EV_QUERY] = FROM_NODE,
        [WEFT_CONN_EV_IMPORT_TRACE] = NO_IMPORT,
        [WEFT_CONN_EV_DEFINITIONS] = FROM_NODE,
        [WEFT_CONN_EV_EVENT_BATCH] = FROM_NODE,
        [WEFT_CONN_EV_GOODBYE] = FROM_NODE,
        [WEFT_CONN_EV_CLOCK_SYNC] = TO(NODE), /* the node times its
                                                 members on this clock */
        [WEFT_CONN_EV_HEARTBEAT] = TO(NODE),
        [WEFT_CONN_EV_NODE_STATUS] = TO(NODE),
        [WEFT_CONN_EV_NODE_RELAY] = TO(NODE),
        [WEFT_CONN_EV_OTHER] = FROM_NODE,
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_ASKING] = {
        [WEFT_CONN_EV_AUTH] = AFTER_QUERY,
        [WEFT_CONN_EV_HELLO] = AFTER_QUERY,
        [WEFT_CONN_EV_NODE_HELLO] = AFTER_QUERY,
        [WEFT_CONN_EV_QUERY] = AFTER_QUERY,
        [WEFT_CONN_EV_IMPORT_QUERY] = TO(IMPORTING),
        [WEFT_CONN_EV_IMPORT_TRACE] = NO_IMPORT,
        RECORDS(BEFORE_HELLO),
        [WEFT_CONN_EV_OTHER] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_STATUS] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_RELAY] = BEFORE_HELLO,
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_IMPORTING] = {
        [WEFT_CONN_EV_AUTH] = AFTER_QUERY,
        [WEFT_CONN_EV_HELLO] = AFTER_QUERY,
        [WEFT_CONN_EV_NODE_HELLO] = AFTER_QUERY,
        [WEFT_CONN_EV_QUERY] = AFTER_QUERY,
        [WEFT_CONN_EV_IMPORT_TRACE] = TO(ASKING),
        RECORDS(BEFORE_HELLO),
        [WEFT_CONN_EV_OTHER] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_STATUS] = BEFORE_HELLO,
        [WEFT_CONN_EV_NODE_RELAY] = BEFORE_HELLO,
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
    [WEFT_CONN_CLOSING] = {
        [WEFT_CONN_EV_CLOSE] = TO(CLOSING),
    },
};

static const char out_of_order[] = "%s out of order";

int weft_connmode_next(enum weft_conn_mode mode, enum weft_conn_event ev,
                       enum weft_conn_mode *next, const char **why)
{
    const step *s;

    if ((unsigned)mode >= WEFT_CONN_NMODES ||
        (unsigned)ev >= WEFT_CONN_NEVENTS) {
        *why = out_of_order;
        return WEFT_ESTATE;
    }
    s = &table[mode][ev];
    if (s->accepted) {
        *next = (enum weft_conn_mode)s->next;
        return 0;
    }
    *why = s->why ? s->why : out_of_order;
    return s->why ? s->code : WEFT_ESTATE;
}

enum weft_conn_event weft_connmode_event_of(int msg_case)
{
    switch (msg_case) {
    case WEFT__ENVELOPE__MSG_AUTH: return WEFT_CONN_EV_AUTH;
    case WEFT__ENVELOPE__MSG_HELLO: return WEFT_CONN_EV_HELLO;
    case WEFT__ENVELOPE__MSG_NODE_HELLO: return WEFT_CONN_EV_NODE_HELLO;
    case WEFT__ENVELOPE__MSG_NODE_STATUS: return WEFT_CONN_EV_NODE_STATUS;
    case WEFT__ENVELOPE__MSG_NODE_RELAY: return WEFT_CONN_EV_NODE_RELAY;
    case WEFT__ENVELOPE__MSG_QUERY: return WEFT_CONN_EV_QUERY;
    case WEFT__ENVELOPE__MSG_IMPORT_TRACE: return WEFT_CONN_EV_IMPORT_TRACE;
    case WEFT__ENVELOPE__MSG_DEFINITIONS: return WEFT_CONN_EV_DEFINITIONS;
    case WEFT__ENVELOPE__MSG_EVENT_BATCH: return WEFT_CONN_EV_EVENT_BATCH;
    case WEFT__ENVELOPE__MSG_GOODBYE: return WEFT_CONN_EV_GOODBYE;
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC: return WEFT_CONN_EV_CLOCK_SYNC;
    case WEFT__ENVELOPE__MSG_HEARTBEAT: return WEFT_CONN_EV_HEARTBEAT;
    default: return WEFT_CONN_EV_OTHER;
    }
}

int weft_connmode_joined(enum weft_conn_mode mode)
{
    return mode == WEFT_CONN_MEMBER || mode == WEFT_CONN_NODE;
}

const char *weft_connmode_name(enum weft_conn_mode mode)
{
    static const char *const names[] = {
#define XX(name, str) str,
        WEFT_CONN_MODES(XX)
#undef XX
    };

    return (unsigned)mode < WEFT_CONN_NMODES ? names[mode] : "?";
}

const char *weft_connmode_event_name(enum weft_conn_event ev)
{
    static const char *const names[] = {
#define XX(name, str) str,
        WEFT_CONN_EVENTS(XX)
#undef XX
    };

    return (unsigned)ev < WEFT_CONN_NEVENTS ? names[ev] : "?";
}
