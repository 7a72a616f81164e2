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
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec.h"
#include "frame.h"
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
    free_frames(&whole);
    free_frames(&chunked);
    return 0;
}
