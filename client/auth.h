/* auth.h (client) - who weftd is, and proving who this process is.
 *
 * Over TCP the process sends a MUNGE credential of its own carrying a
 * fresh nonce (Auth) and accepts weftd only if its answer (AuthAck) is a
 * credential that this uid alone could decode, carrying the nonce back,
 * made by a process of a uid weftd may run as: root, the "weft" system
 * user (the systemd unit's), the calling user (a weftd of one's own), or
 * WEFT_DAEMON_USER. On the Unix socket the kernel says who the server is
 * (SO_PEERCRED) under the same rule. Until then the process has said
 * nothing about itself: a program that took weftd's port learns no
 * command line, tag or trace name. WEFT_AUTH=none skips all of this.
 */
#ifndef WEFT_CLIENT_AUTH_H
#define WEFT_CLIENT_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "cred.h"
#include "client_config.h"
#include "client_internal.h"

/* A credential of this process with a new random nonce (stored in
 * nonce). 0 with *cred (free() it), or WEFT_EAUTH with why. */
WEFT__HIDDEN int weft__auth_credential(const weft__config *c,
                                       uint8_t nonce[WEFT_AUTH_NONCE],
                                       char **cred, char *why,
                                       size_t whylen);
/* Checks weftd's AuthAck credential against the nonce sent. 0, or
 * WEFT_EAUTH with why (not decodable, wrong nonce, a uid weftd may not
 * run as). */
WEFT__HIDDEN int weft__auth_check_reply(const weft__config *c,
                                        const uint8_t *cred, size_t len,
                                        const uint8_t nonce[WEFT_AUTH_NONCE],
                                        char *why, size_t whylen);
/* Checks the server at the other end of Unix socket fd. 0 or WEFT_EAUTH
 * with why. */
WEFT__HIDDEN int weft__auth_check_unix(const weft__config *c, int fd,
                                       char *why, size_t whylen);
/* 1 when uid is one weftd may run as (see above); 0 with why. */
WEFT__HIDDEN int weft__auth_server_uid_ok(const weft__config *c, uint32_t uid,
                                          char *why, size_t whylen);

#endif
