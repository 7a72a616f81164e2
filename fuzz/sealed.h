/* sealed.h - what a fuzzer needs to speak protocol 6's TCP path to a
 * weftd in its own process: a loopback listener and connections to it,
 * a stand-in for munged (sealed.c defines weft_auth_decode and
 * weft_auth_encode of proto/cred.h, so a fuzzer linking it leaves
 * proto/cred.c out), the client's credential bound to a connection, and
 * frames sealed with the session MAC, now and then tampered with.
 *
 * The stand-in's credential is text, not MUNGE's: "FZ:", a verdict (0:
 * valid; 1: refused as munged refuses a replayed one), ':', the uid in 8
 * hex digits, ':', then the payload (proto/bind.h) in hex. Only a fuzzer
 * makes or reads it; weftd's checks of what a credential says (its
 * payload against the connection, its uid against the Hello's) and
 * libweft's of weftd's answer are their own. weft_auth_encode makes a
 * valid one of the calling process (libweft's, in fuzz_client).
 */
#ifndef WEFT_FUZZ_SEALED_H
#define WEFT_FUZZ_SEALED_H

#include <stddef.h>
#include <stdint.h>

#include "bind.h"
#include "mac.h"

/* The longest credential fz_credential makes. */
#define FZ_CREDENTIAL (14 + 2 * (WEFT_AUTH_MAX_PAYLOAD + 1) + 1)

/* A TCP socket listening on 127.0.0.1 on a port of the kernel's choice
 * (*port). Its descriptor. */
int fz_listen(uint16_t *port);
/* A connection to 127.0.0.1:port, non-blocking once connected; tag gets
 * its own end as weftd names its peer ("127.0.0.1:PORT"). Its
 * descriptor. */
int fz_connect(uint16_t port, char *tag, size_t cap);

/* What the client's credential on fd carries for the Challenge's nonce
 * and key, as libweft makes it (both ends as fd sees them). */
void fz_bind(int fd, const uint8_t nonce[WEFT_AUTH_NONCE],
             const uint8_t key[WEFT_MAC_KEY], weft_bind *b);
/* How a credential is spoilt (fz_credential's `spoil`). */
enum fz_spoil {
    FZ_GOOD,        /* as libweft makes it */
    FZ_NONCE,       /* for another challenge (a replay) */
    FZ_CLIENT_END,  /* made on another connection (a relay) */
    FZ_SERVER_END,  /* made for another server */
    FZ_REFUSED,     /* refused by "munged" (expired, replayed) */
    FZ_PAYLOAD,     /* a payload that binds nothing (an old client) */
    FZ_SPOILS
};
/* The stand-in credential of uid for b, spoilt as said, into out
 * (FZ_CREDENTIAL bytes, NUL-terminated). Its length. */
size_t fz_credential(char *out, uint32_t uid, const weft_bind *b,
                     enum fz_spoil spoil);

/* How a sealed frame is tampered with (fz_seal's `tamper`). */
enum fz_tamper {
    FZ_SEALED,      /* as it should be */
    FZ_BAD_TAG,     /* a bit of its tag flipped */
    FZ_BAD_BODY,    /* a bit of its Envelope flipped */
    FZ_SKIPPED,     /* a frame number skipped (one sealed, never sent) */
    FZ_UNSEALED,    /* sent without a tag */
    FZ_TAMPERS
};
/* Seals *frame (a packed frame of len bytes, reallocated) at m, tampered
 * with as said (bits: which byte/bit). Returns its new length. */
size_t fz_seal(weft_mac *m, uint8_t **frame, size_t len,
               enum fz_tamper tamper, uint8_t bits);

#endif
