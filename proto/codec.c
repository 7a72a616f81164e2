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
#define MAX_FIELDS 32

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

static void scratch_free(weft_scratch *s)
{
    free(s->buf);
    memset(s, 0, sizeof *s);
}

void weft_decoder_free(weft_decoder *d)
{
    scratch_free(&d->scratch);
    scratch_free(&d->ascratch);
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
static ssize_t scratch_alloc(weft_scratch *s, size_t n)
{
    size_t off = (s->len + 7) & ~(size_t)7;

    if (!s->buf || off + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        uint8_t *p;
        while (cap < off + n)
            cap *= 2;
        p = realloc(s->buf, cap);
        if (!p)
            return -1;
        s->buf = p;
        s->cap = cap;
    }
    s->len = off + n;
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

/* Reads one value of wire type `wire` (a weft_wire or WEFT_TYPED_F4) into
 * *v, checking that it fits `size` bytes. */
static int get_wire(weft_decoder *d, const weft_rec_desc *rd,
                    const weft_field_desc *f, unsigned wire, unsigned size,
                    uint64_t *v)
{
    const uint8_t *p;

    switch (wire) {
    case WEFT_WIRE_D:
    case WEFT_WIRE_X:
        p = weft__get_u64le(d->p, d->end, v);
        break;
    case WEFT_TYPED_F4:
        p = weft__get_u32le(d->p, d->end, v);
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
    if (!fits(*v, size, wire == WEFT_WIRE_I))
        return fail(d, WEFT_EPROTO, "%s.%s: value %" PRIu64
                    " out of range for a %u-byte %s", rd->name, f->name,
                    *v, size, f->wire == WEFT_WIRE_T ? "typed value" : "field");
    return 0;
}

/* Reads a value of OTF2_Type `type` for field f (TV, TVA), canonical. */
static int get_typed(weft_decoder *d, const weft_rec_desc *rd,
                     const weft_field_desc *f, uint64_t type, uint64_t *v)
{
    int rc = get_wire(d, rd, f, weft_typed_wire(type),
                      weft_typed_width(type), v);

    if (rc == 0)
        *v = weft_typed_canon(type, *v);
    return rc;
}

static int get_value(weft_decoder *d, const weft_rec_desc *rd,
                     const weft_field_desc *f, uint64_t *v)
{
    return get_wire(d, rd, f, f->wire, f->size, v);
}

/* The short way of decode_fields for a record of scalar fields only
 * (rd->is_scalar): each one read, checked and stored in line; the first
 * value that needs more (a long varint, one out of range, the end of
 * the input) goes to get_value, which says what is wrong. */
static int decode_scalars(weft_decoder *d, const weft_rec_desc *rd,
                          weft_record *rec)
{
    const uint8_t *p = d->p, *end = d->end;
    int rc;

    for (unsigned i = 0; i < rd->nfields; i++) {
        const weft_field_desc *f = &rd->fields[i];
        uint64_t v;
        if ((f->wire == WEFT_WIRE_U || f->wire == WEFT_WIRE_I) && p < end &&
            *p < 0x80) {
            /* One byte: fits any size; zigzag keeps it within 7 bits. */
            v = *p++;
            if (f->wire == WEFT_WIRE_I)
                v = (uint64_t)weft__unzigzag(v);
        } else {
            d->p = p;
            if ((rc = get_value(d, rd, f, &v)) < 0)
                return rc;
            p = d->p;
        }
        weft_field_set(rec, f, v);
    }
    d->p = p;
    return 0;
}

/* Decodes the fields of rd into rec; strings and arrays go to s. */
static int decode_fields(weft_decoder *d, const weft_rec_desc *rd,
                         weft_record *rec, weft_scratch *s)
{
    ssize_t offsets[MAX_FIELDS];
    const uint8_t *p;
    uint64_t v;
    int rc;

    assert(rd->nfields <= MAX_FIELDS);
    if (rd->is_scalar)
        return decode_scalars(d, rd, rec);
    s->len = 0;
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
            off = scratch_alloc(s, len + 1);
            if (off < 0)
                return fail(d, WEFT_ENOMEM, "%s.%s: out of memory",
                            rd->name, f->name);
            memcpy(s->buf + off, p, len);
            s->buf[off + len] = 0;
            d->p = p + len;
            offsets[i] = off;
        } else if (f->is_array) {
            size_t n = weft_field_count(rec, f);
            size_t min_wire = (f->wire == WEFT_WIRE_D || f->wire == WEFT_WIRE_X)
                              ? 8 : 1;
            const weft_field_desc *types = NULL;
            ssize_t off;
            if (n > (size_t)(d->end - d->p) / min_wire)
                return fail(d, WEFT_ETRUNC, "%s.%s: %zu elements announced, "
                            "input too short", rd->name, f->name, n);
            off = scratch_alloc(s, n * f->size);
            if (off < 0)
                return fail(d, WEFT_ENOMEM, "%s.%s: out of memory",
                            rd->name, f->name);
            if (f->wire == WEFT_WIRE_T && rd->fields[f->sel].is_array)
                types = &rd->fields[f->sel];
            for (size_t k = 0; k < n; k++) {
                if (f->wire == WEFT_WIRE_T) {
                    uint64_t type = 0;
                    if (types) /* decoded before, into this scratch */
                        memcpy(&type, s->buf + offsets[f->sel] +
                               k * types->size, types->size);
                    else
                        type = weft_field_get(rec, &rd->fields[f->sel]);
                    rc = get_typed(d, rd, f, type, &v);
                } else {
                    rc = get_value(d, rd, f, &v);
                }
                if (rc < 0)
                    return rc;
                memcpy(s->buf + off + k * f->size, &v, f->size);
            }
            offsets[i] = off;
        } else if (f->wire == WEFT_WIRE_T) {
            rc = get_typed(d, rd, f, weft_field_get(rec, &rd->fields[f->sel]),
                           &v);
            if (rc < 0)
                return rc;
            weft_field_set(rec, f, v);
        } else {
            rc = get_value(d, rd, f, &v);
            if (rc < 0)
                return rc;
            weft_field_set(rec, f, v);
        }
    }
    /* Scratch may have moved while growing: set pointers only now. */
    for (unsigned i = 0; i < rd->nfields; i++) {
        if (offsets[i] >= 0) {
            const void *ptr = s->buf + offsets[i];
            memcpy(weft_field_ptr(rec, &rd->fields[i]), &ptr, sizeof ptr);
        }
    }
    return 0;
}

/* Reads a record type; *rd is its descriptor. */
static int get_type(weft_decoder *d, uint64_t *type,
                    const weft_rec_desc **rd)
{
    const uint8_t *p = weft__get_uvarint(d->p, d->end, type);

    if (!p)
        return fail(d, WEFT_ETRUNC, "truncated record type");
    d->p = p;
    *rd = *type <= UINT32_MAX ? weft_rec_desc_of((uint32_t)*type) : NULL;
    if (!*rd)
        return fail(d, WEFT_ETYPE, "unknown record type %" PRIu64, *type);
    return 0;
}

int weft_decoder_next(weft_decoder *d, weft_record *out)
{
    const weft_rec_desc *rd;
    const weft_record *attrs = NULL;
    uint64_t type, v;
    const uint8_t *p;
    int rc;

    if (d->p >= d->end)
        return 0;
    {
        weft_el_run run = weft_el_begin(d);
        uint32_t el, region;
        if (weft_el_next(&run, &el, &region)) {
            weft_el_end(&run, d);
            /* No memset of the whole record: Enter and Leave have only
             * these fields. */
            _Static_assert(sizeof out->u.Enter.region == sizeof(uint32_t) &&
                           sizeof out->u.Leave.region == sizeof(uint32_t),
                           "Enter and Leave carry one 32-bit region");
            out->type = el;
            out->time = d->time;
            out->attributes = NULL;
            if (el == WEFT_REC_Enter)
                out->u.Enter.region = region;
            else
                out->u.Leave.region = region;
            return 1;
        }
    }
    if ((rc = get_type(d, &type, &rd)) < 0)
        return rc;
    if (rd->is_pseudo) {
        if (!d->events)
            return fail(d, WEFT_ETYPE, "%s in a definition stream",
                        rd->name);
        memset(&d->attrs, 0, sizeof d->attrs);
        d->attrs.type = (uint32_t)type;
        if ((rc = decode_fields(d, rd, &d->attrs, &d->ascratch)) < 0)
            return rc;
        if (d->p >= d->end)
            return fail(d, WEFT_ETRUNC, "%s: no event follows it", rd->name);
        if ((rc = get_type(d, &type, &rd)) < 0)
            return rc;
        if (rd->is_pseudo)
            return fail(d, WEFT_EPROTO, "%s: two in a row before one event",
                        rd->name);
        attrs = &d->attrs;
    }
    if (rd->is_event != d->events)
        return fail(d, WEFT_ETYPE, "%s: %s record in a %s stream", rd->name,
                    rd->is_event ? "event" : "definition",
                    d->events ? "event" : "definition");
    memset(out, 0, sizeof *out);
    out->type = (uint32_t)type;
    out->attributes = attrs;
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
    if ((rc = decode_fields(d, rd, out, &d->scratch)) < 0)
        return rc;
    return 1;
}

static const char *string_of(const weft_record *r, const weft_field_desc *f)
{
    const char *s;

    memcpy(&s, weft_field_cptr(r, f), sizeof s);
    return s ? s : "";
}

static size_t fields_bound(const weft_rec_desc *rd, const weft_record *r)
{
    size_t n = WEFT_VARINT_MAX;

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

size_t weft_encode_bound(const weft_record *r)
{
    const weft_rec_desc *rd = weft_rec_desc_of(r->type);
    size_t n = 2 * WEFT_VARINT_MAX;

    if (!rd)
        return n;
    n += fields_bound(rd, r);
    if (rd->is_event && r->attributes) {
        const weft_rec_desc *ad = weft_rec_desc_of(r->attributes->type);
        if (ad)
            n += fields_bound(ad, r->attributes);
    }
    return n;
}

static uint8_t *put_wire(uint8_t *p, unsigned wire, uint64_t v)
{
    switch (wire) {
    case WEFT_WIRE_D:
    case WEFT_WIRE_X: return weft__put_u64le(p, v);
    case WEFT_TYPED_F4: return weft__put_u32le(p, (uint32_t)v);
    case WEFT_WIRE_I: return weft__put_svarint(p, (int64_t)v);
    default: return weft__put_uvarint(p, v);
    }
}

/* A typed value: canonical, signed types sign-extended for zigzag. */
uint8_t *weft__put_typed(uint8_t *p, uint64_t type, uint64_t v)
{
    unsigned wire = weft_typed_wire(type), w = weft_typed_width(type);

    v = weft_typed_canon(type, v);
    if (wire == WEFT_WIRE_I && w < 8) {
        unsigned shift = 64 - 8 * w;
        v = (uint64_t)((int64_t)(v << shift) >> shift);
    }
    return put_wire(p, wire, v);
}

static uint8_t *put_fields(uint8_t *p, const weft_rec_desc *rd,
                           const weft_record *r)
{
    for (unsigned i = 0; i < rd->nfields; i++) {
        const weft_field_desc *f = &rd->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = string_of(r, f);
            size_t len = strlen(s);
            p = weft__put_uvarint(p, len);
            memcpy(p, s, len);
            p += len;
        } else if (f->wire == WEFT_WIRE_T) {
            size_t n = weft_field_nvalues(r, f);
            for (size_t k = 0; k < n; k++)
                p = weft__put_typed(p, weft_field_selector(r, rd, f, k),
                              weft_field_value(r, f, k));
        } else if (f->is_array) {
            size_t n = weft_field_count(r, f);
            for (size_t k = 0; k < n; k++)
                p = put_wire(p, f->wire, weft_field_get_elem(r, f, k));
        } else {
            p = put_wire(p, f->wire, weft_field_get(r, f));
        }
    }
    return p;
}

ssize_t weft_encode(const weft_record *r, uint64_t *prev_time, uint8_t *buf,
                    size_t cap)
{
    const weft_rec_desc *rd = weft_rec_desc_of(r->type);
    uint8_t *p = buf;

    if (!rd || rd->is_pseudo)
        return WEFT_ETYPE;
    if (cap < weft_encode_bound(r))
        return WEFT_ETOOBIG;
    if (rd->is_event && r->attributes) {
        const weft_rec_desc *ad = weft_rec_desc_of(r->attributes->type);
        if (!ad || !ad->is_pseudo)
            return WEFT_ETYPE;
    }
    if (rd->is_event) {
        assert(prev_time);
        if (r->time < *prev_time)
            return WEFT_ETIME;
    }
    if (rd->is_event && r->attributes) {
        p = weft__put_uvarint(p, r->attributes->type);
        p = put_fields(p, weft_rec_desc_of(r->attributes->type),
                       r->attributes);
    }
    p = weft__put_uvarint(p, r->type);
    if (rd->is_event) {
        p = weft__put_uvarint(p, r->time - *prev_time);
        *prev_time = r->time;
    }
    p = put_fields(p, rd, r);
    return p - buf;
}
