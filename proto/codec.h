/* codec.h - the compact binary record stream inside Definitions and
 * EventBatch messages. Pure functions over bytes: no sockets, no state
 * beyond the decoder's cursor.
 *
 * One record on the wire:
 *   varint type | events only: varint (time - previous time) | fields
 * Fields in table order: varints (zigzag for signed), 8-byte little-endian
 * doubles and raw words, strings as varint length + bytes, arrays as their
 * elements (the count is a field before them), typed values (TV) encoded
 * as their OTF2_Type says (see weft_records.def). The first event of a
 * batch takes its delta from the batch's base time.
 *
 * An event with attributes is preceded by one AttributeList pseudo-record:
 *   varint 0x3f | its fields (count, attributes, types, values)
 * It has no time and does not count as an event; the decoder hands it out
 * as the `attributes` of the event that follows, which must be there.
 */
#ifndef WEFT_CODEC_H
#define WEFT_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"
#include "varint.h"

#define WEFT_DECODER_ERROR_MAX 256

/* Memory for the strings and arrays of one decoded record. */
typedef struct weft_scratch {
    uint8_t *buf;
    size_t len, cap;
} weft_scratch;

typedef struct weft_decoder {
    const uint8_t *p;
    const uint8_t *end;
    uint64_t time;       /* absolute time of the previous event */
    int events;          /* 1: an event stream, 0: definitions */
    size_t max_string;   /* longest string accepted, bytes */
    weft_scratch scratch;  /* strings and arrays of the current record */
    weft_scratch ascratch; /* arrays of its attribute list */
    weft_record attrs;   /* the attribute list of the current event */
    char error[WEFT_DECODER_ERROR_MAX]; /* set when next() fails */
} weft_decoder;

/* Starts decoding `len` bytes at `buf` (not copied; must outlive the
 * decoder). `events` selects an event stream with timestamps relative to
 * `base_time`, else definitions. */
void weft_decoder_init(weft_decoder *d, const void *buf, size_t len,
                       int events, uint64_t base_time);
/* Decodes the next record into *out. Returns 1 for a record, 0 at the end
 * of the input, or a negative WEFT_E* code with d->error naming the
 * record, field and value. Strings and arrays of *out, and its
 * attributes, point into the decoder and stay valid until the next call. */
int weft_decoder_next(weft_decoder *d, weft_record *out);
/* Enter and Leave without attributes, most of any trace, decoded inline
 * for the hot loops of ingest and conversion without the walk over the
 * descriptor: 1 when *out holds one, 0 when weft_decoder_next must decode
 * what comes (another record, the end, or one it will report as
 * malformed). Only type, time and region of *out are set. */
static inline int weft_decoder_next_enter_leave(weft_decoder *d,
                                                weft_record *out)
{
    const uint8_t *p;
    uint64_t dt, region;
    uint8_t type;

    if (d->p >= d->end || !d->events)
        return 0;
    type = *d->p;
    if (type != WEFT_REC_Enter && type != WEFT_REC_Leave)
        return 0;
    p = weft__get_uvarint(d->p + 1, d->end, &dt);
    if (!p || dt > UINT64_MAX - d->time)
        return 0;
    p = weft__get_uvarint(p, d->end, &region);
    if (!p || region > UINT32_MAX)
        return 0;
    d->p = p;
    d->time += dt;
    /* No memset of the whole record: storing the four fields is cheaper,
     * and Enter and Leave have nothing else. */
    out->type = type;
    out->time = d->time;
    out->attributes = NULL;
    _Static_assert(sizeof out->u.Enter.region == sizeof(uint32_t) &&
                   sizeof out->u.Leave.region == sizeof(uint32_t),
                   "Enter and Leave carry one 32-bit region");
    if (type == WEFT_REC_Enter)
        out->u.Enter.region = (uint32_t)region;
    else
        out->u.Leave.region = (uint32_t)region;
    return 1;
}

/* Frees the decoder's scratch space. */
void weft_decoder_free(weft_decoder *d);

/* Upper bound of the encoded size of r (with its attributes). */
size_t weft_encode_bound(const weft_record *r);
/* Encodes r (preceded by its attribute list, if any) into buf (cap
 * bytes). For events, *prev_time is the time of the previous event and
 * is updated; an event earlier than it gives WEFT_ETIME. Typed values are
 * written in their canonical form (weft_typed_canon). Returns the number
 * of bytes written or a WEFT_E* code. */
ssize_t weft_encode(const weft_record *r, uint64_t *prev_time, uint8_t *buf,
                    size_t cap);
/* Writes one typed value: v holds the bytes of an OTF2_AttributeValue or
 * OTF2_MetricValue read as OTF2_Type `type`. p needs WEFT_VARINT_MAX
 * bytes; returns the end. Shared with the client's record path. */
uint8_t *weft__put_typed(uint8_t *p, uint64_t type, uint64_t v);

#endif
