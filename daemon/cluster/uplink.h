/* uplink.h - this weftd's link to its cluster's head, when weftd.conf
 * names one ([cluster] head = HOST:PORT): this weftd is then a node
 * (issue #34; the head's side is nodes.h).
 *
 * DESIGN: one TCP connection, made and remade by the loop thread. Its
 * states (one enum, changed in set_state only, the legal steps in one
 * table that weft_uplink_step_ok exposes to the tests):
 *
 *   WAITING -> RESOLVING -> CONNECTING -> CHALLENGED -> AUTHENTICATING
 *           -> JOINING -> LINKED
 *
 * and from any of them CLOSING (the link failed or ended: its handle
 * closes), then WAITING for the next attempt (1 s after the first
 * failure, doubling up to WEFT_UPLINK_MAX_RETRY; at once never, so a
 * head that refuses is not hammered), or STOPPED (weftd stops).
 *
 * The handshake is a client's (cred.h, bind.h): the head's Challenge
 * names its uid, which must be root or this weftd's own (else another
 * user's program holds the head's address); this weftd's MUNGE
 * credential, made on a worker thread (munged may be slow) for that uid
 * only, carries the nonce, both ends of this connection and a session
 * key; the head's AuthAck proves it read the key; NodeHello then goes
 * out MACed, as every frame after it, and the NodeHelloAck tells the
 * head's heartbeat. Linked, this weftd sends a Heartbeat every heartbeat
 * seconds and closes the link when nothing came from the head for
 * WEFT_NODE_SILENT_BEATS of them; a handshake that takes longer than
 * WEFT_UPLINK_HANDSHAKE_S is given up. Every end of a link is logged
 * once with its reason and shown by `weft status` (the head's address,
 * the state, the last error). Loop thread.
 */
#ifndef WEFT_UPLINK_H
#define WEFT_UPLINK_H

#include "daemon.h"
#include "status.h"

#define WEFT_UPLINK_MAX_RETRY 30     /* seconds between attempts, at most */
#define WEFT_UPLINK_HANDSHAKE_S 30   /* from connect to NodeHelloAck */
#define WEFT_UPLINK_CLOCK_SAMPLES 8  /* of the head's clock, the best kept */

#define WEFT_UPLINK_STATES(XX)                                               \
    XX(WAITING, "waiting")            /* for the next attempt */            \
    XX(RESOLVING, "resolving")        /* the head's host name */            \
    XX(CONNECTING, "connecting")                                            \
    XX(CHALLENGED, "authenticating")  /* its credential being made */       \
    XX(AUTHENTICATING, "authenticating") /* Auth sent */                    \
    XX(JOINING, "joining")            /* NodeHello sent */                  \
    XX(LINKED, "linked")                                                    \
    XX(CLOSING, "closing")            /* its handle closing */              \
    XX(STOPPED, "stopped")

enum weft_uplink_state {
#define XX(name, str) WEFT_UPLINK_##name,
    WEFT_UPLINK_STATES(XX)
#undef XX
    WEFT_UPLINK_NSTATES
};

/* Starts the link when d's configuration names a head (else nothing).
 * 0, or WEFT_ECONFIG when the head's address cannot be parsed, or
 * WEFT_ENOMEM (logged). */
int weft_uplink_start(weft_daemon *d);
/* Closes the link and stops trying (weftd stops); its handles close
 * with the loop's next run. Idempotent. */
void weft_uplink_stop(weft_daemon *d);
/* 1 with *out (valid until the loop runs again) when d is a node. */
int weft_uplink_status(const weft_daemon *d, weft_status_head *out);
/* Frees what stop left (after the loop's last run). */
void weft_uplink_free(weft_daemon *d);
/* 1 when a link may go from state `from` to `to`. Pure. */
int weft_uplink_step_ok(enum weft_uplink_state from,
                        enum weft_uplink_state to);
/* "linked", ...; "?" out of range. */
const char *weft_uplink_state_name(enum weft_uplink_state s);
/* Splits "HOST:PORT" (HOST may be "[v6]") into host and port. 0, or
 * WEFT_EINVAL with why. Pure. */
int weft_uplink_parse_head(const char *spec, char *host, size_t hostlen,
                           char *port, size_t portlen, char *why,
                           size_t whylen);

#endif
