/* connmode.h - a connection's mode: one enum, one transition table.
 *
 * What a connection may say next depends on what it said before: a TCP
 * connection is challenged (FRESH), may prove its user with Auth
 * (AUTHENTICATING while MUNGE checks it, then AUTHENTICATED), and joins a
 * trace with Hello (MEMBER), whose records follow; another weftd joins
 * this one, its head, as a node with NodeHello (NODE), then relays its
 * members' frames (NodeRelay: each member is a connection of its own
 * here, AUTHENTICATED by what the node vouches for); the weft command asks
 * with one Query (ASKING), an import's Query waits for its ImportTrace
 * (IMPORTING). CLOSING takes no frame any more. weft_connmode_next says,
 * for every event in every mode, the next mode or the error the event is
 * refused with; weft_conn_event (server.h) is the one place that changes
 * weft_conn.mode. Pure: no socket, no daemon.
 *
 * Back-pressure (weft_conn.paused) is not a mode: it holds the frames of
 * any mode back and lets them through unchanged, so its bits stay
 * orthogonal flags (server.h).
 */
#ifndef WEFT_CONNMODE_H
#define WEFT_CONNMODE_H

#define WEFT_CONN_MODES(XX)                                                  \
    XX(FRESH, "fresh")              /* accepted; nothing said yet */         \
    XX(AUTHENTICATING, "authenticating") /* its Auth is being checked */     \
    XX(AUTHENTICATED, "authenticated")   /* its Auth was accepted */         \
    XX(MEMBER, "member")            /* its Hello was accepted */             \
    XX(NODE, "node")                /* its NodeHello was accepted */         \
    XX(ASKING, "asking")            /* it sent its Query */                  \
    XX(IMPORTING, "importing")      /* its Query{IMPORT} awaits ImportTrace */\
    XX(CLOSING, "closing")          /* no more frames are processed */

enum weft_conn_mode {
#define XX(name, str) WEFT_CONN_##name,
    WEFT_CONN_MODES(XX)
#undef XX
    WEFT_CONN_NMODES
};

/* What moves a connection: a frame of each kind it may send, and what
 * weftd decides about it (its Auth accepted, its Query an import, its
 * close). */
#define WEFT_CONN_EVENTS(XX)                                                 \
    XX(AUTH, "Auth")                                                         \
    XX(AUTH_OK, "accepted Auth")                                             \
    XX(HELLO, "Hello")                                                       \
    XX(NODE_HELLO, "NodeHello")                                              \
    XX(NODE_STATUS, "NodeStatus")                                            \
    XX(NODE_RELAY, "NodeRelay")                                              \
    XX(QUERY, "Query")                                                       \
    XX(IMPORT_QUERY, "Query to import")                                      \
    XX(IMPORT_TRACE, "ImportTrace")                                          \
    XX(DEFINITIONS, "Definitions")                                           \
    XX(EVENT_BATCH, "EventBatch")                                            \
    XX(GOODBYE, "Goodbye")                                                   \
    XX(CLOCK_SYNC, "ClockSync")                                              \
    XX(HEARTBEAT, "Heartbeat")                                               \
    XX(OTHER, "other frame")  /* a kind a client never sends */              \
    XX(CLOSE, "close")

enum weft_conn_event {
#define XX(name, str) WEFT_CONN_EV_##name,
    WEFT_CONN_EVENTS(XX)
#undef XX
    WEFT_CONN_NEVENTS
};

/* 0 with *next set when event ev is accepted in mode `mode`, or the
 * WEFT_E* code it is refused with, *why set to the message (a printf
 * format with one %s: the name of the frame or event). */
int weft_connmode_next(enum weft_conn_mode mode, enum weft_conn_event ev,
                       enum weft_conn_mode *next, const char **why);
/* The event of a frame of kind msg_case (Weft__Envelope's). */
enum weft_conn_event weft_connmode_event_of(int msg_case);
/* 1 when a connection in mode `mode` said its Hello or NodeHello: its
 * frames may be of max_frame, and session_timeout (a node: its
 * heartbeats) decides when its silence ends it. */
int weft_connmode_joined(enum weft_conn_mode mode);
/* "member", ...; "?" out of range. */
const char *weft_connmode_name(enum weft_conn_mode mode);
/* "Hello", ...; "?" out of range. */
const char *weft_connmode_event_name(enum weft_conn_event ev);

#endif
