/* mac.h - the session MAC of an authenticated TCP connection.
 *
 * The client's MUNGE credential carries a fresh 32-byte session key that
 * only weftd's uid can read (proto/bind.h). From the AuthAck on, every
 * frame in both directions carries a 16-byte tag after its Envelope (the
 * frame's length covers both): HMAC-SHA256, truncated, over a direction
 * byte, the frame's number in that direction (from 1) and the Envelope's
 * bytes. A relay or a reader of the network, without the key, can then
 * neither inject, alter, reorder, replay nor drop a frame unnoticed.
 * The AuthAck itself carries a proof (weft_mac_proof) that its sender
 * read the key, i.e. decoded the credential.
 *
 * Pure functions over bytes (nettle's HMAC-SHA256). One weft_mac per
 * connection; not thread-safe (its counters change with every frame).
 */
#ifndef WEFT_MAC_H
#define WEFT_MAC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bytes of a session key, and of the tag each frame carries. */
#define WEFT_MAC_KEY 32
#define WEFT_MAC_TAG 16

typedef struct weft_mac weft_mac;

/* Who holds a weft_mac: its frames go one way, its peer's the other. */
enum weft_mac_side { WEFT_MAC_CLIENT = 1, WEFT_MAC_SERVER = 2 };

/* A MAC state for key seen from side. NULL when out of memory. Free
 * with weft_mac_free (NULL is fine). */
weft_mac *weft_mac_new(const uint8_t key[WEFT_MAC_KEY],
                       enum weft_mac_side side);
void weft_mac_free(weft_mac *m);

/* Seals the next frame sent: buf holds a packed frame (4-byte length,
 * Envelope) of len bytes and has WEFT_MAC_TAG bytes of room after it.
 * Writes the tag there and the new length in the header. Returns the
 * sealed frame's length. */
size_t weft_mac_seal_in_place(weft_mac *m, uint8_t *buf, size_t len);
/* The same for a malloc'd frame without room: *frame is reallocated.
 * Returns the new length or WEFT_ENOMEM (*frame unchanged). */
ssize_t weft_mac_seal(weft_mac *m, uint8_t **frame, size_t len);

/* Checks the next frame received: payload (what followed the length) of
 * len bytes. Returns the length of its Envelope (len - WEFT_MAC_TAG), or
 * WEFT_EAUTH with why ("frame 7: bad MAC (altered or injected)", "frame
 * 7: 3 bytes, shorter than its MAC"); a refused frame is not counted. */
ssize_t weft_mac_open(weft_mac *m, const uint8_t *payload, size_t len,
                      char *why, size_t whylen);

/* Frames sealed and opened so far. */
uint64_t weft_mac_sent(const weft_mac *m);
uint64_t weft_mac_received(const weft_mac *m);

/* The AuthAck's proof that its sender holds key: a tag over the
 * challenge's nonce, distinct from any frame's tag. */
void weft_mac_proof(const uint8_t key[WEFT_MAC_KEY], const uint8_t *nonce,
                    size_t nonce_len, uint8_t out[WEFT_MAC_TAG]);
/* 1 when proof (len bytes) is key's proof of nonce, else 0. Constant
 * time. */
int weft_mac_proof_ok(const uint8_t key[WEFT_MAC_KEY], const uint8_t *nonce,
                      size_t nonce_len, const uint8_t *proof, size_t len);

#endif
