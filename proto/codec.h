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
/* A run of Enter and Leave events without attributes (most of any
 * trace) read in place, for the hot loops of ingest and conversion: a
 * small value the compiler keeps in registers, where the decoder lives in
 * memory. Begin it at the decoder's position, take events with
 * weft_el_next until it says 0, and hand the position back with
 * weft_el_end before calling weft_decoder_next. */
typedef struct weft_el_run {
    const uint8_t *p, *end;
    uint64_t time;       /* of the last event taken */
} weft_el_run;

static inline weft_el_run weft_el_begin(const weft_decoder *d)
{
    weft_el_run r = { d->p, d->events ? d->end : d->p, d->time };
    return r;
}

static inline void weft_el_end(const weft_el_run *r, weft_decoder *d)
{
    d->p = r->p;
    d->time = r->time;
}

/* Takes the next event: 1 with *type (WEFT_REC_Enter or WEFT_REC_Leave),
 * *region and r->time its time; 0, taking nothing, when the next record
 * is for weft_decoder_next (another one, the end, or one it will report
 * as malformed). */
static inline int weft_el_next(weft_el_run *r, uint32_t *type,
                               uint32_t *region)
{
    const uint8_t *p = r->p;
    uint64_t dt, reg;

    /* Most of them: a delta of one or two bytes (below 16384 ticks), a
     * region of one. */
    if (r->end - p >= 4 &&
        (p[0] == WEFT_REC_Enter || p[0] == WEFT_REC_Leave)) {
        uint32_t d = p[1], k = 2;
        if (d & 0x80) {
            d = (d & 0x7f) | (uint32_t)p[2] << 7;
            k = 3;
        }
        if (!((p[k - 1] | p[k]) & 0x80) && d <= UINT64_MAX - r->time) {
            *type = p[0];
            *region = p[k];
            r->time += d;
            r->p = p + k + 1;
            return 1;
        }
    }
    if (r->p >= r->end ||
        (*r->p != WEFT_REC_Enter && *r->p != WEFT_REC_Leave))
        return 0;
    p = weft__get_uvarint(r->p + 1, r->end, &dt);
    if (!p || dt > UINT64_MAX - r->time)
        return 0;
    p = weft__get_uvarint(p, r->end, &reg);
    if (!p || reg > UINT32_MAX)
        return 0;
    *type = *r->p;
    *region = (uint32_t)reg;
    r->p = p;
    r->time += dt;
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
