/* bind.h - what a client's MUNGE credential binds itself to over TCP.
 *
 * weftd speaks first on a TCP connection: a Challenge with a fresh nonce
 * and the uid it runs as. The client's credential (proto/cred.h), which
 * only that uid can decode, carries as its payload:
 *  - the challenge's nonce: the credential answers this connection only;
 *  - both ends of the connection as the client sees them (its own
 *    address and port, the server's): weftd refuses a credential made for
 *    a connection whose ends are not its own, so a program that relays
 *    the client's frames to weftd is refused;
 *  - a fresh session key for the MAC of every later frame (proto/mac.h).
 *
 * Layout (WEFT_BIND_PAYLOAD bytes): version 1, nonce, client end, server
 * end (each: family 4 or 6, 16 address bytes, port big-endian), key.
 * IPv4-mapped IPv6 addresses are taken as the IPv4 address they map, so
 * a weftd listening on [::] and a client of 127.0.0.1 agree.
 *
 * Pure functions over bytes; no socket is touched.
 */
#ifndef WEFT_BIND_H
#define WEFT_BIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cred.h"
#include "mac.h"

/* One end of a TCP connection. */
typedef struct weft_bind_addr {
    uint8_t family;       /* 4 or 6; 0: unknown */
    uint8_t addr[16];     /* IPv4: the first 4 bytes */
    uint16_t port;
} weft_bind_addr;

typedef struct weft_bind {
    uint8_t nonce[WEFT_AUTH_NONCE];
    weft_bind_addr client; /* the client's own end, as it sees it */
    weft_bind_addr server; /* the server's end, as the client sees it */
    uint8_t key[WEFT_MAC_KEY];
} weft_bind;

#define WEFT_BIND_VERSION 1
#define WEFT_BIND_ADDR 19
#define WEFT_BIND_PAYLOAD \
    (1 + WEFT_AUTH_NONCE + 2 * WEFT_BIND_ADDR + WEFT_MAC_KEY)

/* The end at sa (AF_INET or AF_INET6). 0, or WEFT_EINVAL for another
 * family. */
int weft_bind_addr_from(weft_bind_addr *a, const struct sockaddr *sa);
/* "127.0.0.1:5555" or "[::1]:5555" into out. */
void weft_bind_addr_name(const weft_bind_addr *a, char *out, size_t cap);

/* Writes b's payload into out. */
void weft_bind_encode(const weft_bind *b, uint8_t out[WEFT_BIND_PAYLOAD]);
/* Reads a payload of len bytes. 0 with *b, or WEFT_EAUTH with why. */
int weft_bind_decode(const uint8_t *p, size_t len, weft_bind *b, char *why,
                     size_t whylen);
/* weftd's check of a decoded payload b against its connection: the
 * nonce of its Challenge, its own end (`local`) and the client's end
 * (`peer`) as weftd sees them. 0, or WEFT_EAUTH with why naming what
 * does not match. */
int weft_bind_check(const weft_bind *b, const uint8_t nonce[WEFT_AUTH_NONCE],
                    const weft_bind_addr *local, const weft_bind_addr *peer,
                    char *why, size_t whylen);

#endif
