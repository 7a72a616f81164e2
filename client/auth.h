/* auth.h (client) - who weftd is, and proving who this process is.
 *
 * Over TCP weftd speaks first: a Challenge with a nonce and the uid it
 * runs as, which must be one weftd may run as: root, the "weft" system
 * user (the systemd unit's), the calling user (a weftd of one's own), or
 * WEFT_DAEMON_USER. The process answers with a MUNGE credential that
 * only that uid can decode (Auth), carrying the nonce, both ends of the
 * connection as it sees them and a fresh session key (proto/bind.h), and
 * accepts weftd only if its AuthAck proves it read that key (so it is a
 * process of that uid, and no relay: weftd refuses a credential made for
 * other ends). From then on every frame both ways carries a MAC with the
 * key (proto/mac.h). On the Unix socket the kernel says who the server
 * is (SO_PEERCRED) under the same rule. Until then the process has said
 * nothing about itself: a program that took weftd's port, or relays it,
 * learns no command line, tag or trace name. WEFT_AUTH=none skips all of
 * this but the Challenge (which weftd always sends over TCP).
 */
#ifndef WEFT_CLIENT_AUTH_H
#define WEFT_CLIENT_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "bind.h"
#include "cred.h"
#include "client_config.h"
#include "client_internal.h"

/* What this process's credential on TCP socket fd binds to: the
 * Challenge's nonce, both ends of fd and a new random session key. 0
 * with *b, or WEFT_EAUTH with why. */
WEFT__HIDDEN int weft__auth_bind(int fd, const uint8_t *nonce, size_t len,
                                 weft_bind *b, char *why, size_t whylen);
/* A credential of this process carrying b, that only server_uid can
 * decode. 0 with *cred (free() it), or WEFT_EAUTH with why. */
WEFT__HIDDEN int weft__auth_credential(const weft__config *c,
                                       uint32_t server_uid,
                                       const weft_bind *b, char **cred,
                                       char *why, size_t whylen);
/* Checks weftd's AuthAck proof (len bytes) against b's key and nonce. 0,
 * or WEFT_EAUTH with why. */
WEFT__HIDDEN int weft__auth_check_ack(const weft_bind *b,
                                      const uint8_t *proof, size_t len,
                                      uint32_t server_uid, char *why,
                                      size_t whylen);
/* Checks the server at the other end of Unix socket fd. 0 or WEFT_EAUTH
 * with why. */
WEFT__HIDDEN int weft__auth_check_unix(const weft__config *c, int fd,
                                       char *why, size_t whylen);
/* 1 when uid is one weftd may run as (see above); 0 with why. */
WEFT__HIDDEN int weft__auth_server_uid_ok(const weft__config *c, uint32_t uid,
                                          char *why, size_t whylen);

#endif
