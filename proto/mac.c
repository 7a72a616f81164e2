/* mac.c - the session MAC of an authenticated connection (see mac.h). */
#include "mac.h"

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "weft_errors.h"

/* What the AuthAck's proof is over before the nonce: its first byte (0)
 * is no direction, so no frame's tag is ever a proof. */
static const uint8_t proof_label[] = "\0weft AuthAck";

struct weft_mac {
    struct hmac_sha256_ctx ctx; /* keyed; digest() returns it to that */
    uint8_t send_dir, recv_dir; /* WEFT_MAC_CLIENT or WEFT_MAC_SERVER */
    uint64_t sent, received;    /* frames sealed, opened */
};

weft_mac *weft_mac_new(const uint8_t key[WEFT_MAC_KEY],
                       enum weft_mac_side side)
{
    weft_mac *m = calloc(1, sizeof *m);

    if (!m)
        return NULL;
    hmac_sha256_set_key(&m->ctx, WEFT_MAC_KEY, key);
    m->send_dir = (uint8_t)side;
    m->recv_dir = side == WEFT_MAC_CLIENT ? WEFT_MAC_SERVER : WEFT_MAC_CLIENT;
    return m;
}

void weft_mac_free(weft_mac *m)
{
    if (m)
        memset(m, 0, sizeof *m);
    free(m);
}

/* The tag of frame number n going direction dir. */
static void tag(weft_mac *m, uint8_t dir, uint64_t n, const uint8_t *env,
                size_t len, uint8_t out[WEFT_MAC_TAG])
{
    uint8_t head[9];

    head[0] = dir;
    for (int i = 0; i < 8; i++)
        head[1 + i] = (uint8_t)(n >> (56 - 8 * i));
    hmac_sha256_update(&m->ctx, sizeof head, head);
    hmac_sha256_update(&m->ctx, len, env);
    hmac_sha256_digest(&m->ctx, WEFT_MAC_TAG, out);
}

size_t weft_mac_seal_in_place(weft_mac *m, uint8_t *buf, size_t len)
{
    size_t n = len - WEFT_FRAME_HEADER + WEFT_MAC_TAG;

    tag(m, m->send_dir, ++m->sent, buf + WEFT_FRAME_HEADER,
        len - WEFT_FRAME_HEADER, buf + len);
    buf[0] = (uint8_t)(n >> 24);
    buf[1] = (uint8_t)(n >> 16);
    buf[2] = (uint8_t)(n >> 8);
    buf[3] = (uint8_t)n;
    return len + WEFT_MAC_TAG;
}

ssize_t weft_mac_seal(weft_mac *m, uint8_t **frame, size_t len)
{
    uint8_t *p = realloc(*frame, len + WEFT_MAC_TAG);

    if (!p)
        return WEFT_ENOMEM;
    *frame = p;
    return (ssize_t)weft_mac_seal_in_place(m, p, len);
}

ssize_t weft_mac_open(weft_mac *m, const uint8_t *payload, size_t len,
                      char *why, size_t whylen)
{
    uint8_t want[WEFT_MAC_TAG];
    uint64_t n = m->received + 1;

    if (len < WEFT_MAC_TAG) {
        snprintf(why, whylen, "frame %llu: %zu bytes, shorter than its MAC",
                 (unsigned long long)n, len);
        return WEFT_EAUTH;
    }
    len -= WEFT_MAC_TAG;
    tag(m, m->recv_dir, n, payload, len, want);
    if (!memeql_sec(want, payload + len, WEFT_MAC_TAG)) {
        snprintf(why, whylen, "frame %llu: bad MAC (altered or injected)",
                 (unsigned long long)n);
        return WEFT_EAUTH;
    }
    m->received = n;
    return (ssize_t)len;
}

uint64_t weft_mac_sent(const weft_mac *m)
{
    return m->sent;
}

uint64_t weft_mac_received(const weft_mac *m)
{
    return m->received;
}

void weft_mac_proof(const uint8_t key[WEFT_MAC_KEY], const uint8_t *nonce,
                    size_t nonce_len, uint8_t out[WEFT_MAC_TAG])
{
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, WEFT_MAC_KEY, key);
    hmac_sha256_update(&ctx, sizeof proof_label - 1, proof_label);
    hmac_sha256_update(&ctx, nonce_len, nonce);
    hmac_sha256_digest(&ctx, WEFT_MAC_TAG, out);
    memset(&ctx, 0, sizeof ctx);
}

int weft_mac_proof_ok(const uint8_t key[WEFT_MAC_KEY], const uint8_t *nonce,
                      size_t nonce_len, const uint8_t *proof, size_t len)
{
    uint8_t want[WEFT_MAC_TAG];

    if (len != WEFT_MAC_TAG)
        return 0;
    weft_mac_proof(key, nonce, nonce_len, want);
    return memeql_sec(want, proof, WEFT_MAC_TAG) ? 1 : 0;
}
