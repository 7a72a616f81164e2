/* fuzz_frame.c - libFuzzer target for the frame reader and the Envelope
 * unpacker (proto/frame.c, protobuf-c code generated from weft.proto).
 *
 * Input: a control byte, a seed byte, then the bytes of a connection.
 * Control bits 0-1 pick the reader's max_frame. The stream is fed once in
 * one piece and once in chunks whose sizes come from the seed; both must
 * give the same frames and end in the same state, since a socket may
 * split the stream anywhere. Every complete frame is unpacked; what
 * unpacks is packed again and must read, unpack and pack back to the
 * same bytes. Record payloads inside Definitions and EventBatch go
 * through the record decoder as weftd would decode them.
 *
 * Protocol 6's sealed frames and credential payload go through the same
 * inputs (proto/mac.c, proto/bind.c): every frame read is sealed as a
 * client would seal it, under a key taken from the input, and must open
 * at weftd's end to the same bytes, while a copy with a flipped bit (in
 * its Envelope, its tag or its length), the frame unsealed, the frame
 * opened out of turn or by the wrong direction is refused, with a
 * reason, without counting it; the same for weftd's frames at the
 * client's end. The input's first WEFT_BIND_PAYLOAD bytes (and the whole
 * input) are decoded as a credential's payload: what decodes encodes
 * back to the same bytes, the rest is refused with a reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "bind.h"
#include "codec.h"
#include "frame.h"
#include "mac.h"
#include "weft_errors.h"

static const size_t max_frames[4] = { 0, 64, 4096, WEFT_DEFAULT_MAX_FRAME };

typedef struct frame_list {
    uint8_t **frame;
    uint32_t *len;
    size_t n, cap;
    int rc;          /* last result: 0 (needs more) or a WEFT_E* code */
    size_t pending;  /* weft_frame_reader_pending at the end */
} frame_list;

/* Decodes a record payload to its end or first error. */
static void decode_records(const uint8_t *buf, size_t len, int events,
                           uint64_t base)
{
    weft_decoder d;
    weft_record r;
    int rc;

    weft_decoder_init(&d, buf, len, events, base);
    while ((rc = weft_decoder_next(&d, &r)) == 1)
        ;
    CHECK(rc == 0 || d.error[0] != '\0');
    weft_decoder_free(&d);
}

static void add_frame(frame_list *l, uint8_t *frame, uint32_t len)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->frame = realloc(l->frame, l->cap * sizeof *l->frame);
        l->len = realloc(l->len, l->cap * sizeof *l->len);
        CHECK(l->frame && l->len);
    }
    l->frame[l->n] = frame;
    l->len[l->n++] = len;
}

/* Feeds buf to a reader in chunks (sizes drawn from seed, 0 included;
 * seed 0: one piece). Collects every frame; stops at the first error. */
static void read_frames(const uint8_t *buf, size_t len, size_t max_frame,
                        uint32_t seed, frame_list *out)
{
    weft_frame_reader rd;
    size_t fed = 0, framed = 0;

    memset(out, 0, sizeof *out);
    weft_frame_reader_init(&rd, max_frame);
    while (fed < len) {
        size_t chunk = len - fed, left;
        const uint8_t *p = buf + fed;
        if (seed) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            chunk = seed % 8 == 0 ? seed % 300 : seed % 7;
            if (chunk > len - fed)
                chunk = len - fed;
        }
        left = chunk;
        for (;;) {
            uint8_t *frame = NULL;
            uint32_t flen = 0;
            int rc = weft_frame_reader_feed(&rd, &p, &left, &frame, &flen);
            CHECK(p + left == buf + fed + chunk);
            if (rc == 1) {
                CHECK(frame && flen <= max_frame);
                add_frame(out, frame, flen);
                framed += WEFT_FRAME_HEADER + flen;
                continue;
            }
            if (rc == 0) {
                CHECK(left == 0);
                break;
            }
            CHECK(rc == WEFT_ETOOBIG);
            out->rc = rc;
            weft_frame_reader_free(&rd);
            return;
        }
        fed += chunk;
        CHECK(weft_frame_reader_pending(&rd) == fed - framed);
    }
    out->pending = weft_frame_reader_pending(&rd);
    weft_frame_reader_free(&rd);
}

static void free_frames(frame_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->frame[i]);
    free(l->frame);
    free(l->len);
}

/* Packs env; the frame must read back whole and unpack and pack to the
 * same bytes. */
static void check_repack(const Weft__Envelope *env)
{
    uint8_t *packed = NULL, *packed2 = NULL, *frame = NULL;
    uint32_t flen = 0, announced;
    const uint8_t *p;
    size_t left;
    weft_frame_reader rd;
    Weft__Envelope *env2;
    ssize_t n, n2;

    n = weft_frame_pack(env, &packed);
    CHECK(n >= WEFT_FRAME_HEADER);
    announced = (uint32_t)packed[0] << 24 | (uint32_t)packed[1] << 16 |
                (uint32_t)packed[2] << 8 | packed[3];
    CHECK(announced == (size_t)n - WEFT_FRAME_HEADER);
    /* A frame exactly at the limit is accepted. */
    weft_frame_reader_init(&rd, announced);
    p = packed;
    left = (size_t)n;
    CHECK(weft_frame_reader_feed(&rd, &p, &left, &frame, &flen) == 1);
    CHECK(left == 0 && flen == announced);
    CHECK(memcmp(frame, packed + WEFT_FRAME_HEADER, flen) == 0);
    weft_frame_reader_free(&rd);

    env2 = weft_frame_unpack(frame, flen);
    CHECK(env2 && env2->msg_case == env->msg_case);
    n2 = weft_frame_pack(env2, &packed2);
    CHECK(n2 == n && memcmp(packed, packed2, (size_t)n) == 0);
    weft_frame_free_envelope(env2);
    free(frame);
    free(packed);
    free(packed2);
}

static void check_frame(const uint8_t *buf, uint32_t len)
{
    Weft__Envelope *env = weft_frame_unpack(buf, len);
    uint8_t *err = NULL;
    ssize_t n;

    if (!env)
        return;
    CHECK(env->msg_case != WEFT__ENVELOPE__MSG__NOT_SET);
    CHECK(strcmp(weft_frame_kind_name(env->msg_case), "none") != 0);
    check_repack(env);
    switch (env->msg_case) {
    case WEFT__ENVELOPE__MSG_DEFINITIONS:
        CHECK(env->definitions);
        decode_records(env->definitions->records.data,
                       env->definitions->records.len, 0, 0);
        break;
    case WEFT__ENVELOPE__MSG_EVENT_BATCH:
        CHECK(env->event_batch);
        decode_records(env->event_batch->records.data,
                       env->event_batch->records.len, 1,
                       env->event_batch->base_time);
        break;
    case WEFT__ENVELOPE__MSG_ERROR:
        CHECK(env->error);
        n = weft_frame_pack_error(&err, env->error->code, "%s",
                                  env->error->message);
        CHECK(n >= WEFT_FRAME_HEADER);
        free(err);
        break;
    default:
        break;
    }
    weft_frame_free_envelope(env);
}

/* ---- protocol 6: credential payloads and sealed frames ------------------ */

/* p (len bytes) as a credential's payload: decodes and encodes back to
 * the same bytes, or is refused saying why; its ends name themselves. */
static void check_bind(const uint8_t *p, size_t len)
{
    uint8_t out[WEFT_BIND_PAYLOAD];
    char why[256] = "", name[64];
    weft_bind b;
    int rc = weft_bind_decode(p, len, &b, why, sizeof why);

    if (rc < 0) {
        CHECK(rc == WEFT_EAUTH && why[0] != '\0');
        CHECK(len != WEFT_BIND_PAYLOAD || p[0] != WEFT_BIND_VERSION);
        return;
    }
    CHECK(rc == 0 && len == WEFT_BIND_PAYLOAD);
    weft_bind_encode(&b, out);
    CHECK(memcmp(out, p, WEFT_BIND_PAYLOAD) == 0);
    weft_bind_addr_name(&b.client, name, sizeof name);
    CHECK(strlen(name) < sizeof name);
    weft_bind_addr_name(&b.server, name, sizeof name);
    CHECK(strlen(name) < sizeof name);
    /* Checked against the ends it names: accepted when they are known;
     * against a nonce one bit off, refused. */
    why[0] = '\0';
    rc = weft_bind_check(&b, b.nonce, &b.server, &b.client, why, sizeof why);
    CHECK(rc == 0 ? b.server.family && b.client.family
                  : rc == WEFT_EAUTH && why[0] != '\0');
    b.nonce[p[1] % WEFT_AUTH_NONCE] ^= 1;
    CHECK(weft_bind_check(&b, out + 1, &b.server, &b.client, why,
                          sizeof why) == WEFT_EAUTH);
}

/* Opens frame (a sealed frame, header included, of len bytes) at `to`:
 * accepted as the env_len bytes of env, or (want_ok 0) refused without
 * counting it. */
static void open_one(weft_mac *to, const uint8_t *frame, size_t len,
                     const uint8_t *env, size_t env_len, int want_ok)
{
    uint64_t before = weft_mac_received(to);
    char why[128] = "";
    ssize_t n = weft_mac_open(to, frame + WEFT_FRAME_HEADER,
                              len - WEFT_FRAME_HEADER, why, sizeof why);

    if (want_ok) {
        CHECK(n == (ssize_t)env_len);
        CHECK(memcmp(frame + WEFT_FRAME_HEADER, env, env_len) == 0);
        CHECK(weft_mac_received(to) == before + 1);
        return;
    }
    CHECK(n == WEFT_EAUTH && why[0] != '\0');
    CHECK(weft_mac_received(to) == before);
}

/* Seals the frame env (len bytes, no header) at `from` and opens it at
 * `to`, after refusing altered copies, itself unsealed, and itself at
 * `wrong` (the sender's side). r: bits for the alterations. */
static void seal_open(weft_mac *from, weft_mac *to, weft_mac *wrong,
                      const uint8_t *env, uint32_t len, uint32_t r)
{
    uint8_t *frame = malloc(WEFT_FRAME_HEADER + (size_t)len + 1), *bad;
    size_t sealed_len;
    ssize_t n;

    CHECK(frame != NULL);
    frame[0] = (uint8_t)(len >> 24);
    frame[1] = (uint8_t)(len >> 16);
    frame[2] = (uint8_t)(len >> 8);
    frame[3] = (uint8_t)len;
    memcpy(frame + WEFT_FRAME_HEADER, env, len);
    /* unsealed: shorter than a tag, or a tag that is not one */
    open_one(to, frame, WEFT_FRAME_HEADER + (size_t)len, NULL, 0, 0);
    n = weft_mac_seal(from, &frame, WEFT_FRAME_HEADER + (size_t)len);
    CHECK(n == (ssize_t)(WEFT_FRAME_HEADER + len + WEFT_MAC_TAG));
    sealed_len = (size_t)n;
    CHECK(((uint32_t)frame[0] << 24 | (uint32_t)frame[1] << 16 |
           (uint32_t)frame[2] << 8 | frame[3]) == len + WEFT_MAC_TAG);
    CHECK((bad = malloc(sealed_len)) != NULL);
    /* one bit flipped in its Envelope or its tag */
    memcpy(bad, frame, sealed_len);
    bad[WEFT_FRAME_HEADER + r % (len + WEFT_MAC_TAG)] ^= 1u << (r >> 8 & 7);
    open_one(to, bad, sealed_len, NULL, 0, 0);
    /* one byte less or more in it (a length altered on the way) */
    if (r & 0x10000)
        open_one(to, frame, sealed_len - 1, NULL, 0, 0);
    /* at the sender's own side: the wrong direction */
    if (r & 0x20000)
        open_one(wrong, frame, sealed_len, NULL, 0, 0);
    open_one(to, frame, sealed_len, env, len, 1);
    /* once accepted, the same frame again is a replay */
    open_one(to, frame, sealed_len, NULL, 0, 0);
    free(bad);
    free(frame);
}

/* The frames of l sealed both ways under a key from data, and the
 * AuthAck's proof of that key. */
static void check_mac(const frame_list *l, const uint8_t *data, size_t size,
                      uint32_t seed)
{
    uint8_t key[WEFT_MAC_KEY] = { 0 }, proof[WEFT_MAC_TAG];
    weft_mac *client, *server;

    memcpy(key, data, size < sizeof key ? size : sizeof key);
    key[0] ^= (uint8_t)seed;
    CHECK((client = weft_mac_new(key, WEFT_MAC_CLIENT)) != NULL);
    CHECK((server = weft_mac_new(key, WEFT_MAC_SERVER)) != NULL);
    for (size_t i = 0; i < l->n; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        if (i & 1)
            seal_open(server, client, server, l->frame[i], l->len[i], seed);
        else
            seal_open(client, server, client, l->frame[i], l->len[i], seed);
    }
    CHECK(weft_mac_sent(client) == weft_mac_received(server));
    CHECK(weft_mac_sent(server) == weft_mac_received(client));
    /* The proof of the key over the input's first bytes as a nonce:
     * accepted; the input's own bytes or the proof one bit off are not. */
    weft_mac_proof(key, data, size < WEFT_AUTH_NONCE ? size : WEFT_AUTH_NONCE,
                   proof);
    CHECK(weft_mac_proof_ok(key, data, size < WEFT_AUTH_NONCE ? size
                                                            : WEFT_AUTH_NONCE,
                            proof, sizeof proof) == 1);
    if (size >= WEFT_MAC_TAG && memcmp(data, proof, WEFT_MAC_TAG) != 0)
        CHECK(weft_mac_proof_ok(key, data, WEFT_AUTH_NONCE < size
                                               ? WEFT_AUTH_NONCE : size,
                                data, WEFT_MAC_TAG) == 0);
    CHECK(weft_mac_proof_ok(key, data, 0, proof, sizeof proof - 1) == 0);
    proof[seed % WEFT_MAC_TAG] ^= 0x80;
    CHECK(weft_mac_proof_ok(key, data, size < WEFT_AUTH_NONCE
                                           ? size : WEFT_AUTH_NONCE,
                            proof, sizeof proof) == 0);
    weft_mac_free(client);
    weft_mac_free(server);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frame_list whole, chunked;
    size_t max_frame;
    uint32_t seed;

    if (size < 2)
        return 0;
    max_frame = max_frames[data[0] & 3];
    seed = data[1] * 2654435761u | 1;
    data += 2;
    size -= 2;

    read_frames(data, size, max_frame, 0, &whole);
    read_frames(data, size, max_frame, seed, &chunked);
    CHECK(whole.n == chunked.n);
    CHECK(whole.rc == chunked.rc);
    CHECK(whole.pending == chunked.pending);
    for (size_t i = 0; i < whole.n; i++) {
        CHECK(whole.len[i] == chunked.len[i]);
        CHECK(memcmp(whole.frame[i], chunked.frame[i], whole.len[i]) == 0);
        check_frame(whole.frame[i], whole.len[i]);
    }
    check_mac(&whole, data, size, seed);
    check_bind(data, size);
    if (size > WEFT_BIND_PAYLOAD)
        check_bind(data, WEFT_BIND_PAYLOAD);
    free_frames(&whole);
    free_frames(&chunked);
    return 0;
}
