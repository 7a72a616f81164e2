/* cred.h - who is at the other end of a TCP connection: MUNGE credentials
 * (libmunge), the mechanism Slurm sites already run.
 *
 * A credential is a NUL-free ASCII string made by the local munged; any
 * munged sharing the key decodes it into the uid and gid of the process
 * that asked for it, once (a second decode is a replay) and within its
 * time to live. Over TCP weftd speaks first (Challenge: a nonce, its
 * uid); the client's credential (Auth), which only that uid may decode,
 * carries the nonce, both ends of the connection and a session key
 * (proto/bind.h); weftd's AuthAck proves it read the key (proto/mac.h),
 * so the client knows it talks to weftd's uid before it says anything
 * about itself, and every later frame carries a MAC.
 *
 * Both functions talk to munged over its Unix socket (socket: its path,
 * NULL or "" for libmunge's default): they block for as long as munged
 * takes, so weftd calls them on a worker thread. Thread-safe.
 */
#ifndef WEFT_CRED_H
#define WEFT_CRED_H

#include <stddef.h>
#include <stdint.h>

/* The longest credential accepted (one with proto/bind.h's payload is
 * about 300 bytes). */
#define WEFT_AUTH_MAX_CREDENTIAL 1024
/* Bytes of the nonce of weftd's Challenge. */
#define WEFT_AUTH_NONCE 16
/* The largest payload a credential may carry (proto/bind.h's is 87). */
#define WEFT_AUTH_MAX_PAYLOAD 128
/* No uid restriction (weft_auth_encode). */
#define WEFT_AUTH_ANYONE ((int64_t)-1)

/* What a decoded credential says. */
typedef struct weft_auth_id {
    uint32_t uid, gid;
    uint8_t payload[WEFT_AUTH_MAX_PAYLOAD];
    size_t payload_len;
} weft_auth_id;

/* Makes a credential of the calling process carrying payload (at most
 * WEFT_AUTH_MAX_PAYLOAD bytes), decodable only by uid `for_uid` unless it is
 * WEFT_AUTH_ANYONE, valid for ttl seconds (0: munged's default). Returns
 * 0 with *cred (free() it), or WEFT_EAUTH with err naming munge's error. */
int weft_auth_encode(const char *socket, int64_t for_uid, unsigned ttl,
                     const void *payload, size_t len, char **cred,
                     char *err, size_t errlen);

/* Decodes a credential of len bytes (not NUL-terminated). Returns 0 with
 * *id, or WEFT_EAUTH with err saying why ("expired", "replayed", ...,
 * or a payload longer than WEFT_AUTH_MAX_PAYLOAD). */
int weft_auth_decode(const char *socket, const uint8_t *cred, size_t len,
                     weft_auth_id *id, char *err, size_t errlen);

#endif
