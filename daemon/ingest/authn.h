/* authn.h - who a TCP client is: weftd's Challenge (sent first), the
 * client's Auth frame (a MUNGE credential, proto/cred.h, bound to the
 * Challenge and to this connection's ends, proto/bind.h), checked on a
 * worker thread, and weftd's AuthAck, after which every frame both ways
 * carries a MAC (proto/mac.h, weft_conn.mac).
 *
 * A Unix socket client is who SO_PEERCRED says (server.c) and sends no
 * Auth. Over TCP with auth = munge a connection must be authenticated
 * before its Hello (weft_authn_hello_uid); with auth = none an Auth is
 * still checked if sent, and otherwise the Hello's uid is believed.
 */
#ifndef WEFT_AUTHN_H
#define WEFT_AUTHN_H

#include "server.h"
#include "weft.pb-c.h"

/* weft_server_cbs.on_tcp_open: sends c's Challenge (a fresh nonce, kept
 * in c->challenge, and weftd's uid). Loop thread. */
void weft_authn_challenge(weft_conn *c);
/* The Auth frame of c: pauses c while munged decodes the credential on
 * d->srv->authenticator and its payload is checked against c (the nonce, both
 * ends), then sends AuthAck (proof of the session key), turns the MAC on
 * and resumes c, or fails c naming the reason (expired, replayed,
 * relayed, ...). 0 when taken, or the WEFT_E* code c was failed with.
 * Loop thread. */
int weft_authn_auth(weft_conn *c, const Weft__Auth *a);
/* The uid that owns what c's Hello h opens: the authenticated one, or
 * with auth = none over TCP and no Auth, h's claim. 0 with *uid, or the
 * WEFT_E* code c was failed with (no credential where one is needed; a
 * Hello claiming another uid than its credential's). */
int weft_authn_hello_uid(weft_conn *c, const Weft__Hello *h, uint32_t *uid);
/* c is closing: a credential still being checked is forgotten. */
void weft_authn_closed(weft_conn *c);
/* At start: says in the log how clients are identified, and whether
 * munged answers (with auth = munge and no munged, TCP clients are
 * refused until it does). Blocks for one munged round trip. */
void weft_authn_report(weft_daemon *d);

#endif
