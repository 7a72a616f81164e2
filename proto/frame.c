/* frame.c - length-prefixed protobuf-c envelopes (see frame.h). */
#include "frame.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varint.h"
#include "weft_errors.h"

void weft_frame_reader_init(weft_frame_reader *r, size_t max_frame)
{
    memset(r, 0, sizeof *r);
    r->max_frame = max_frame;
}

void weft_frame_reader_free(weft_frame_reader *r)
{
    free(r->payload);
    r->payload = NULL;
}

size_t weft_frame_reader_pending(const weft_frame_reader *r)
{
    return r->hdr_len + r->have;
}

size_t weft_frame_reader_allocated(const weft_frame_reader *r)
{
    return r->payload ? r->cap : 0;
}

int weft_frame_reader_feed(weft_frame_reader *r, const uint8_t **buf,
                           size_t *len, uint8_t **frame, uint32_t *frame_len)
{
    while (*len > 0) {
        if (r->hdr_len < WEFT_FRAME_HEADER) {
            size_t n = WEFT_FRAME_HEADER - r->hdr_len;
            if (n > *len)
                n = *len;
            memcpy(r->hdr + r->hdr_len, *buf, n);
            r->hdr_len += n;
            *buf += n;
            *len -= n;
            if (r->hdr_len < WEFT_FRAME_HEADER)
                return 0;
            r->payload_len = (uint32_t)r->hdr[0] << 24 |
                             (uint32_t)r->hdr[1] << 16 |
                             (uint32_t)r->hdr[2] << 8 | r->hdr[3];
            if (r->payload_len > r->max_frame)
                return WEFT_ETOOBIG;
            /* Memory follows the bytes that arrive, not the length a
             * header announces (a peer could announce and never send). */
            r->cap = r->payload_len < WEFT_FRAME_FIRST_CHUNK
                         ? (r->payload_len ? r->payload_len : 1)
                         : WEFT_FRAME_FIRST_CHUNK;
            r->payload = malloc(r->cap);
            if (!r->payload)
                return WEFT_ENOMEM;
            r->have = 0;
        }
        if (r->have < r->payload_len) {
            size_t n = r->payload_len - r->have;
            if (n > *len)
                n = *len;
            if (r->have + n > r->cap) {
                size_t cap = (size_t)r->cap * 2;
                uint8_t *p;
                if (cap < r->have + n)
                    cap = r->have + n;
                if (cap > r->payload_len)
                    cap = r->payload_len;
                if (!(p = realloc(r->payload, cap)))
                    return WEFT_ENOMEM;
                r->payload = p;
                r->cap = (uint32_t)cap;
            }
            memcpy(r->payload + r->have, *buf, n);
            r->have += (uint32_t)n;
            *buf += n;
            *len -= n;
        }
        if (r->have == r->payload_len)
            break;
    }
    if (r->hdr_len < WEFT_FRAME_HEADER || r->have < r->payload_len)
        return 0;
    *frame = r->payload;
    *frame_len = r->payload_len;
    r->payload = NULL;
    r->hdr_len = 0;
    r->have = 0;
    r->cap = 0;
    r->payload_len = 0;
    return 1;
}

/* 1 if m or a message inside it carries fields this protocol version does
 * not define. Such frames are refused: the version check is how peers
 * evolve, and protobuf-c does not re-pack every unknown field faithfully
 * (found by fuzz/fuzz_frame). */
static int has_unknown_fields(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;

    if (m->n_unknown_fields)
        return 1;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *base = (const char *)m;
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            ProtobufCMessage *const *v =
                *(ProtobufCMessage *const *const *)(base + f->offset);
            for (size_t k = 0; k < n; k++)
                if (v[k] && has_unknown_fields(v[k]))
                    return 1;
        } else {
            const ProtobufCMessage *sub =
                *(const ProtobufCMessage *const *)(base + f->offset);
            if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF &&
                *(const uint32_t *)(base + f->quantifier_offset) != f->id)
                continue;
            if (sub && has_unknown_fields(sub))
                return 1;
        }
    }
    return 0;
}

Weft__Envelope *weft_frame_unpack(const uint8_t *buf, size_t len)
{
    Weft__Envelope *env = weft__envelope__unpack(NULL, len, buf);

    if (env && (env->msg_case == WEFT__ENVELOPE__MSG__NOT_SET ||
                has_unknown_fields(&env->base))) {
        weft__envelope__free_unpacked(env, NULL);
        return NULL;
    }
    return env;
}

void weft_frame_free_envelope(Weft__Envelope *env)
{
    if (env)
        weft__envelope__free_unpacked(env, NULL);
}

ssize_t weft_frame_pack(const Weft__Envelope *env, uint8_t **out)
{
    return weft_frame_pack_room(env, 0, out);
}

ssize_t weft_frame_pack_room(const Weft__Envelope *env, size_t room,
                             uint8_t **out)
{
    size_t n = weft__envelope__get_packed_size(env);
    uint8_t *buf;

    if (n > UINT32_MAX - room)
        return WEFT_ETOOBIG;
    buf = malloc(WEFT_FRAME_HEADER + n + room);
    if (!buf)
        return WEFT_ENOMEM;
    buf[0] = (uint8_t)(n >> 24);
    buf[1] = (uint8_t)(n >> 16);
    buf[2] = (uint8_t)(n >> 8);
    buf[3] = (uint8_t)n;
    weft__envelope__pack(env, buf + WEFT_FRAME_HEADER);
    *out = buf;
    return (ssize_t)(WEFT_FRAME_HEADER + n);
}

ssize_t weft_frame_pack_bare(const Weft__Envelope *env, uint8_t **out)
{
    size_t n = weft__envelope__get_packed_size(env);

    if (n > UINT32_MAX)
        return WEFT_ETOOBIG;
    if (!(*out = malloc(n ? n : 1)))
        return WEFT_ENOMEM;
    weft__envelope__pack(env, *out);
    return (ssize_t)n;
}

ssize_t weft_frame_pack_error(uint8_t **out, int code, const char *fmt, ...)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Error err = WEFT__ERROR__INIT;
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    err.code = code;
    err.message = msg;
    env.msg_case = WEFT__ENVELOPE__MSG_ERROR;
    env.error = &err;
    return weft_frame_pack(&env, out);
}

const char *weft_frame_kind_name(int msg_case)
{
    switch (msg_case) {
    case WEFT__ENVELOPE__MSG_HELLO: return "Hello";
    case WEFT__ENVELOPE__MSG_HELLO_ACK: return "HelloAck";
    case WEFT__ENVELOPE__MSG_DEFINITIONS: return "Definitions";
    case WEFT__ENVELOPE__MSG_EVENT_BATCH: return "EventBatch";
    case WEFT__ENVELOPE__MSG_ACK: return "Ack";
    case WEFT__ENVELOPE__MSG_GOODBYE: return "Goodbye";
    case WEFT__ENVELOPE__MSG_ERROR: return "Error";
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC: return "ClockSync";
    case WEFT__ENVELOPE__MSG_IMPORT_TRACE: return "ImportTrace";
    case WEFT__ENVELOPE__MSG_AUTH: return "Auth";
    case WEFT__ENVELOPE__MSG_AUTH_ACK: return "AuthAck";
    case WEFT__ENVELOPE__MSG_HEARTBEAT: return "Heartbeat";
    case WEFT__ENVELOPE__MSG_QUERY: return "Query";
    case WEFT__ENVELOPE__MSG_ANSWER: return "Answer";
    case WEFT__ENVELOPE__MSG_CHALLENGE: return "Challenge";
    case WEFT__ENVELOPE__MSG_NODE_HELLO: return "NodeHello";
    case WEFT__ENVELOPE__MSG_NODE_HELLO_ACK: return "NodeHelloAck";
    case WEFT__ENVELOPE__MSG_NODE_STATUS: return "NodeStatus";
    case WEFT__ENVELOPE__MSG_NODE_RELAY: return "NodeRelay";
    default: return "none";
    }
}

/* The end of the top-level field at p (before end): NULL when it is
 * truncated or not a field. */
static const uint8_t *field_end(const uint8_t *p, const uint8_t *end)
{
    uint64_t key, n;

    if (!(p = weft__get_uvarint(p, end, &key)) || key >> 3 == 0)
        return NULL;
    switch (key & 7) {
    case 0: /* varint */
        return weft__get_uvarint(p, end, &n);
    case 1: /* 64 bits */
        return end - p >= 8 ? p + 8 : NULL;
    case 2: /* length-delimited */
        if (!(p = weft__get_uvarint(p, end, &n)) ||
            n > (uint64_t)(end - p))
            return NULL;
        return p + n;
    case 5: /* 32 bits */
        return end - p >= 4 ? p + 4 : NULL;
    default: /* (groups, long gone from protobuf: weft has none) */
        return NULL;
    }
}

ssize_t weft_frame_cut(const uint8_t *p, size_t len, size_t max)
{
    const uint8_t *end = p + len, *at = p, *next;

    assert(p && len > 0);
    while (at < end) {
        if (!(next = field_end(at, end)))
            return WEFT_EPROTO;
        if ((size_t)(next - p) > max)
            break;
        at = next;
    }
    return at - p;
}
