/* preauth.h - connections whose user is not known yet.
 *
 * DESIGN: a TCP connection is nobody's until its Auth is accepted (or,
 * with auth = none, its Hello): nothing can be charged to a user, so
 * what such connections may hold is bounded apart, here, in the
 * connection layer (whatever the handshake's messages):
 *  - how many there are in all (max_preauth_connections) and from one
 *    source address (max_preauth_per_address), or, for a connection
 *    from this host, from one uid (the kernel knows whose socket is at
 *    the other end, peeruid.h: every local user comes from the same
 *    addresses, and must not crowd out the others). At either bound the
 *    newcomer is served and the OLDEST such connection (of that address,
 *    for the second) is closed instead: a peer that holds connections
 *    open keeps none of them for long, and a client that authenticates
 *    in time (milliseconds) is never locked out by one that does not;
 *  - the bytes of their frames (max_preauth_buffered), counted apart
 *    from max_buffered, so that they can never stall authenticated
 *    sessions; at the bound the oldest one holding a partial frame is
 *    closed. Their frames are small (max_preauth_frame, server.c);
 *  - the time from accept to a known user (preauth_timeout, checked by
 *    weft_server_tick): counted from accept, renewed by nothing.
 * A connection whose credential is being checked (an Auth job out) has
 * said all it had to say and is neither closed for room nor timed out.
 * Unix socket connections are known at accept (SO_PEERCRED) and never
 * pre-authentication ones.
 *
 * Loop thread only. The connections are in a FIFO, oldest first, which
 * exists while it is not empty.
 */
#ifndef WEFT_PREAUTH_H
#define WEFT_PREAUTH_H

#include <stdint.h>

#include "daemon.h"

struct weft_conn;

/* c was just accepted over TCP, its peer named: counts it (c->preauth)
 * and makes room by closing the oldest pre-authentication connections
 * beyond max_preauth_connections or max_preauth_per_address. 0, or
 * WEFT_ENOMEM (c is not counted; the caller refuses it). */
int weft_preauth_enter(struct weft_conn *c);
/* c's user is known (or c closes): it no longer counts; the bytes of its
 * frame in progress move to d->srv->buffered unless it is closing. */
void weft_preauth_leave(struct weft_conn *c);
/* c, counted, holds `held` bytes of a partial frame (was c->held):
 * updates the total and closes the oldest holders (c last) while it is
 * above max_preauth_buffered. */
void weft_preauth_account(struct weft_conn *c, uint64_t held);
/* Connections counted, and the bytes they hold. */
uint64_t weft_preauth_count(const weft_daemon *d);
uint64_t weft_preauth_buffered(const weft_daemon *d);

#endif
