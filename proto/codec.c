/* codec.c - generic encoder and decoder of the record stream, driven by the
 * record descriptors (see codec.h for the format). */
#include "codec.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varint.h"
#include "weft_errors.h"

#define WEFT_DEFAULT_MAX_STRING (1u << 20)

void weft_decoder_init(weft_decoder *d, const void *buf, size_t len,
                       int events, uint64_t base_time)
{
    memset(d, 0, sizeof *d);
    d->p = buf;
    d->end = len ? d->p + len : d->p; /* buf may be NULL when len is 0 */
    d->events = events;
    d->time = base_time;
    d->max_string = WEFT_DEFAULT_MAX_STRING;
}

void weft_decoder_free(weft_decoder *d)
{
    free(d->scratch);
    d->scratch = NULL;
    d->scratch_cap = d->scratch_len = 0;
}

__attribute__((format(printf, 3, 4)))
static int fail(weft_decoder *d, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(d->error, sizeof d->error, fmt, ap);
    va_end(ap);
    return code;
}

/* Reserves n bytes of scratch; returns their offset or -1. Allocates even
 * for n == 0: an empty array still gets a pointer into the scratch. */
static ssize_t scratch_alloc(weft_decoder *d, size_t n)
{
    size_t off = (d->scratch_len + 7) & ~(size_t)7;

    if (!d->scratch || off + n > d->scratch_cap) {
        size_t cap = d->scratch_cap ? d->scratch_cap : 256;
        uint8_t *p;
        while (cap < off + n)
            cap *= 2;
        p = realloc(d->scratch, cap);
        if (!p)
            return -1;
        d->scratch = p;
        d->scratch_cap = cap;
    }
    d->scratch_len = off + n;
    return (ssize_t)off;
}

static int fits(uint64_t v, unsigned size, int is_signed)
{
    if (size >= 8)
        return 1;
    if (is_signed) {
        int64_t s = (int64_t)v;
        int64_t lim = (int64_t)1 << (size * 8 - 1);
        return s >= -lim && s < lim;
    }
    return v < ((uint64_t)1 << (size * 8));
}

/* Reads one value of wire type `wire` and checks it fits `size` bytes. */
static int get_value(weft_decoder *d, const weft_rec_desc *rd,
                     const weft_field_desc *f, uint64_t *v)
{
    const uint8_t *p;

    switch (f->wire) {
    case WEFT_WIRE_D:
    case WEFT_WIRE_X:
        p = weft__get_u64le(d->p, d->end, v);
        break;
    case WEFT_WIRE_I:
        p = weft__get_uvarint(d->p, d->end, v);
        if (p)
            *v = (uint64_t)weft__unzigzag(*v);
        break;
    default:
        p = weft__get_uvarint(d->p, d->end, v);
        break;
    }
    if (!p)
        return fail(d, WEFT_ETRUNC, "%s.%s: truncated or malformed value",
                    rd->name, f->name);
    d->p = p;
    if (!fits(*v, f->size, f->wire == WEFT_WIRE_I))
        return fail(d, WEFT_EPROTO, "%s.%s: value %" PRIu64
                    " out of range for a %u-byte field", rd->name, f->name,
                    *v, f->size);
    return 0;
}

int weft_decoder_next(weft_decoder *d, weft_record *out)
{
    const weft_rec_desc *rd;
    uint64_t type, v;
    ssize_t offsets[32];
    const uint8_t *p;
    int rc;

    if (d->p >= d->end)
        return 0;
    d->scratch_len = 0;
    p = weft__get_uvarint(d->p, d->end, &type);
    if (!p)
        return fail(d, WEFT_ETRUNC, "truncated record type");
    d->p = p;
    rd = type <= UINT32_MAX ? weft_rec_desc_of((uint32_t)type) : NULL;
    if (!rd)
        return fail(d, WEFT_ETYPE, "unknown record type %" PRIu64, type);
    if (rd->is_event != d->events)
        return fail(d, WEFT_ETYPE, "%s: %s record in a %s stream", rd->name,
                    rd->is_event ? "event" : "definition",
                    d->events ? "event" : "definition");
    memset(out, 0, sizeof *out);
    out->type = (uint32_t)type;
    if (rd->is_event) {
        p = weft__get_uvarint(d->p, d->end, &v);
        if (!p)
            return fail(d, WEFT_ETRUNC, "%s: truncated timestamp", rd->name);
        if (v > UINT64_MAX - d->time)
            return fail(d, WEFT_ETIME, "%s: timestamp overflows 64 bits",
                        rd->name);
        d->p = p;
        d->time += v;
        out->time = d->time;
    }
    assert(rd->nfields <= sizeof offsets / sizeof offsets[0]);
    for (unsigned i = 0; i < rd->nfields; i++) {
        const weft_field_desc *f = &rd->fields[i];
        offsets[i] = -1;
        if (f->wire == WEFT_WIRE_Z) {
            uint64_t len;
            ssize_t off;
            p = weft__get_uvarint(d->p, d->end, &len);
            if (!p || len > (uint64_t)(d->end - p))
                return fail(d, WEFT_ETRUNC, "%s.%s: truncated string",
                            rd->name, f->name);
            if (len > d->max_string)
                return fail(d, WEFT_ETOOBIG, "%s.%s: string of %" PRIu64
                            " bytes exceeds the limit of %zu", rd->name,
                            f->name, len, d->max_string);
            if (memchr(p, 0, len))
                return fail(d, WEFT_EPROTO, "%s.%s: string contains a NUL "
                            "byte", rd->name, f->name);
            off = scratch_alloc(d, len + 1);
            if (off < 0)
                return fail(d, WEFT_ENOMEM, "%s.%s: out of memory",
                            rd->name, f->name);
            memcpy(d->scratch + off, p, len);
            d->scratch[off + len] = 0;
            d->p = p + len;
            offsets[i] = off;
        } else if (f->is_array) {
            size_t n = weft_field_count(out, f);
            size_t min_wire = (f->wire == WEFT_WIRE_D || f->wire == WEFT_WIRE_X)
                              ? 8 : 1;
            ssize_t off;
            if (n > (size_t)(d->end - d->p) / min_wire)
                return fail(d, WEFT_ETRUNC, "%s.%s: %zu elements announced, "
                            "input too short", rd->name, f->name, n);
            off = scratch_alloc(d, n * f->size);
            if (off < 0)
                return fail(d, WEFT_ENOMEM, "%s.%s: out of memory",
                            rd->name, f->name);
            for (size_t k = 0; k < n; k++) {
                rc = get_value(d, rd, f, &v);
                if (rc < 0)
                    return rc;
                memcpy(d->scratch + off + k * f->size, &v, f->size);
            }
            offsets[i] = off;
        } else {
            rc = get_value(d, rd, f, &v);
            if (rc < 0)
                return rc;
            weft_field_set(out, f, v);
        }
    }
    /* Scratch may have moved while growing: set pointers only now. */
    for (unsigned i = 0; i < rd->nfields; i++) {
        if (offsets[i] >= 0) {
            const void *ptr = d->scratch + offsets[i];
            memcpy(weft_field_ptr(out, &rd->fields[i]), &ptr, sizeof ptr);
        }
    }
    return 1;
}

static const char *string_of(const weft_record *r, const weft_field_desc *f)
{
    const char *s;

    memcpy(&s, weft_field_cptr(r, f), sizeof s);
    return s ? s : "";
}

size_t weft_encode_bound(const weft_record *r)
{
    const weft_rec_desc *rd = weft_rec_desc_of(r->type);
    size_t n = 2 * WEFT_VARINT_MAX;

    if (!rd)
        return n;
    for (unsigned i = 0; i < rd->nfields; i++) {
        const weft_field_desc *f = &rd->fields[i];
        if (f->wire == WEFT_WIRE_Z)
            n += WEFT_VARINT_MAX + strlen(string_of(r, f));
        else if (f->is_array)
            n += weft_field_count(r, f) * WEFT_VARINT_MAX;
        else
            n += WEFT_VARINT_MAX;
    }
    return n;
}

static uint8_t *put_value(uint8_t *p, unsigned wire, uint64_t v)
{
    switch (wire) {
    case WEFT_WIRE_D:
    case WEFT_WIRE_X: return weft__put_u64le(p, v);
    case WEFT_WIRE_I: return weft__put_svarint(p, (int64_t)v);
    default: return weft__put_uvarint(p, v);
    }
}

ssize_t weft_encode(const weft_record *r, uint64_t *prev_time, uint8_t *buf,
                    size_t cap)
{
    const weft_rec_desc *rd = weft_rec_desc_of(r->type);
    uint8_t *p = buf;

    if (!rd)
        return WEFT_ETYPE;
    if (cap < weft_encode_bound(r))
        return WEFT_ETOOBIG;
    p = weft__put_uvarint(p, r->type);
    if (rd->is_event) {
        assert(prev_time);
        if (r->time < *prev_time)
            return WEFT_ETIME;
        p = weft__put_uvarint(p, r->time - *prev_time);
        *prev_time = r->time;
    }
    for (unsigned i = 0; i < rd->nfields; i++) {
        const weft_field_desc *f = &rd->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = string_of(r, f);
            size_t len = strlen(s);
            p = weft__put_uvarint(p, len);
            memcpy(p, s, len);
            p += len;
        } else if (f->is_array) {
            size_t n = weft_field_count(r, f);
            for (size_t k = 0; k < n; k++)
                p = put_value(p, f->wire, weft_field_get_elem(r, f, k));
        } else {
            p = put_value(p, f->wire, weft_field_get(r, f));
        }
    }
    return p - buf;
}
