/* record.h - in-memory records and their descriptors, from the record table.
 *
 * For every entry of weft_records.def this yields WEFT_REC_<Name> (its wire
 * id), a struct weft_<Name> with the fields in libotf2 order, and a
 * descriptor (weft_rec_desc) listing each field's wire encoding, reference
 * kind, links to sibling fields and offset, so generic code (codec,
 * validation, unification, printing) walks records without a switch over
 * the record list. The helpers below answer the questions that depend on
 * a record's values: which id space a typed value or selected reference
 * belongs to; enum.h whether a value is inside its OTF2 enum.
 */
#ifndef WEFT_RECORD_H
#define WEFT_RECORD_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_AttributeValue.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#include "enum.h"

#define WEFT_DF_CLIENT 0u
#define WEFT_DF_DAEMON 1u
#define WEFT_DF_LOCAL 2u
#define WEFT_DF_WEFT 4u

/* Id spaces of definitions. */
typedef enum {
    WEFT_REF_NONE = 0,
#define WEFT_REFKIND(KIND, ctype, undef, scope) WEFT_REF_##KIND,
#include "weft_records.def"
    WEFT_REF__COUNT
} weft_ref_kind;

/* Who numbers an id space (see weft_records.def). */
typedef enum {
    WEFT_SCOPE_LOCAL = 0,
    WEFT_SCOPE_NATURE,
    WEFT_SCOPE_DERIVED
} weft_ref_scope;

/* Wire encodings of one value. */
typedef enum {
    WEFT_WIRE_U = 1, /* unsigned varint */
    WEFT_WIRE_I,     /* zigzag varint */
    WEFT_WIRE_D,     /* 8 bytes, IEEE double */
    WEFT_WIRE_Z,     /* varint length + bytes, no NUL inside */
    WEFT_WIRE_X,     /* 8 raw bytes */
    WEFT_WIRE_T      /* typed by a sibling OTF2_Type: see weft_typed_wire */
} weft_wire;

/* How a sibling field selects the id space of a value (TV, RS fields). */
typedef enum {
    WEFT_SEL_NONE = 0,
    WEFT_SEL_TYPE,         /* OTF2_Type */
    WEFT_SEL_METRIC_SCOPE, /* OTF2_MetricScope */
    WEFT_SEL_GROUP_TYPE    /* OTF2_GroupType */
} weft_sel_map;

/* How many definition and event records the table has. */
enum {
    WEFT_DEF_KINDS = 0
#define WEFT_DEF(id, Name, flags, fields) + 1
#include "weft_records.def"
};
enum {
    WEFT_EVENT_KINDS = 0
#define WEFT_EVENT(id, Name, fields) + 1
#include "weft_records.def"
};

/* Wire ids. */
typedef enum {
#define WEFT_DEF(id, Name, flags, fields) WEFT_REC_##Name = id,
#define WEFT_EVENT(id, Name, fields) WEFT_REC_##Name = id,
#define WEFT_PSEUDO(id, Name, fields) WEFT_REC_##Name = id,
#include "weft_records.def"
    WEFT_REC__MAX_ID = 0x3fff
} weft_rec_type;

/* One struct per record. Arrays point to their elements (owned by whoever
 * built the record: the caller, or a decoder's scratch space). */
#define WEFT_SCALAR(ctype, name, W, sel) ctype name;
#define WEFT_ARRAY(ctype, name, count, W, sel) const ctype *name;
#define WEFT_DEF(id, Name, flags, fields) typedef struct { fields } weft_##Name;
#define WEFT_EVENT(id, Name, fields) typedef struct { fields } weft_##Name;
#define WEFT_PSEUDO(id, Name, fields) typedef struct { fields } weft_##Name;
#include "weft_records.def"
#undef WEFT_SCALAR
#undef WEFT_ARRAY

/* A decoded record of any kind. `time` is absolute, events only.
 * `attributes` is the AttributeList record of an event, NULL if it has
 * none; it belongs to whoever owns the event (a decoder, the caller). */
typedef struct weft_record {
    uint32_t type;
    uint64_t time;
    const struct weft_record *attributes;
    union {
#define WEFT_DEF(id, Name, flags, fields) weft_##Name Name;
#define WEFT_EVENT(id, Name, fields) weft_##Name Name;
#define WEFT_PSEUDO(id, Name, fields) weft_##Name Name;
#include "weft_records.def"
    } u;
} weft_record;

/* How one field is stored and encoded. Links to other fields of the
 * record are indexes into its descriptor's fields, -1 for none. */
typedef struct weft_field_desc {
    const char *name;
    const char *ctype;   /* C type as written in the table */
    uint8_t wire;        /* weft_wire of the value or of each element */
    uint8_t ref;         /* weft_ref_kind, WEFT_REF_NONE for plain values
                          * and for typed or selected ones (see sel_map) */
    uint8_t is_self;     /* the definition's own id */
    uint8_t is_array;
    uint8_t is_key;      /* FK/RK: identity of an unnumbered definition */
    uint8_t is_weft;     /* WX: weft's own field, never passed to libotf2 */
    uint8_t sel_map;     /* weft_sel_map: TV, TVA, RS, RSA */
    int8_t sel;          /* field holding the type or selector */
    int8_t count_ref;    /* CN: the reference whose definition's count
                          * this count must equal */
    int8_t decl_ref;     /* TD: the reference array whose definitions'
                          * declared types these types must equal */
    int8_t enum_id;      /* OTF2 enum of the C type (enum.h), -1 */
    uint8_t size;        /* bytes of the value or of each element */
    uint8_t count_size;  /* arrays: bytes of the count field */
    uint16_t offset;     /* in weft_record */
    uint16_t count_offset; /* arrays: offset of the count field */
    const char *link;    /* name of the linked field (sel, count_ref,
                          * decl_ref), resolved into the index at start */
} weft_field_desc;

typedef struct weft_rec_desc {
    const char *name;    /* OTF2's name, e.g. "Enter" */
    uint32_t type;       /* wire id */
    uint8_t is_event;
    uint8_t is_pseudo;   /* the attribute list */
    uint8_t flags;       /* WEFT_DF_* */
    uint8_t nfields;
    int8_t self_field;   /* index of the S field, -1 if none */
    int8_t count_field;  /* definitions: the count of their first array,
                          * -1 if none (what CN fields compare with) */
    int8_t decl_type_field; /* definitions with an id: their first scalar
                          * OTF2_Type field, -1 (what TD fields compare
                          * with) */
    uint8_t is_keyed;    /* has FK/RK fields, or its id is NATURE */
    uint8_t names_location; /* some value may be a location reference */
    uint8_t is_scalar;   /* every field a number of its own wire (no
                          * string, array or typed value): most events,
                          * decoded the short way (codec.c) */
    const weft_field_desc *fields;
} weft_rec_desc;

/* Descriptor of a wire id, NULL if the id is unknown. */
const weft_rec_desc *weft_rec_desc_of(uint32_t type);
/* Descriptors in table order (definitions, events, the attribute list),
 * *n set to the count. */
const weft_rec_desc *const *weft_rec_descs(size_t *n);
/* Name of a reference kind, e.g. "REGION". */
const char *weft_ref_kind_name(unsigned kind);
/* The "undefined" value of a reference kind (OTF2_UNDEFINED_*). */
uint64_t weft_ref_kind_undefined(unsigned kind);
/* weft_ref_scope of a reference kind. */
unsigned weft_ref_kind_scope(unsigned kind);
/* 1 if some field (CN, TD) checks values against definitions of this
 * kind, which validation must then remember (their count and type). */
int weft_ref_kind_has_decl(unsigned kind);

/* Reference kind that selector value v maps to in map (weft_sel_map). */
unsigned weft_sel_kind(unsigned map, uint64_t v);

/* ---- field access: inline, every record of a trace goes through them
 * (decoding, validation, id mapping) ---- */

static inline uint64_t weft__load(const void *p, unsigned size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? (uint64_t)(int64_t)*(const int8_t *)p
                             : *(const uint8_t *)p;
    case 2: { uint16_t v; memcpy(&v, p, 2);
              return is_signed ? (uint64_t)(int64_t)(int16_t)v : v; }
    case 4: { uint32_t v; memcpy(&v, p, 4);
              return is_signed ? (uint64_t)(int64_t)(int32_t)v : v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline void weft__store(void *p, unsigned size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

/* Pointer to the field inside the record. Computed through an integer:
 * GCC cannot see which member the offset picks and, inlined, would warn
 * that a pointer-sized copy overflows `type`. */
static inline void *weft_field_ptr(weft_record *r, const weft_field_desc *f)
{
    return (void *)((uintptr_t)r + f->offset);
}

static inline const void *weft_field_cptr(const weft_record *r,
                                          const weft_field_desc *f)
{
    return (const void *)((uintptr_t)r + f->offset);
}

/* Reads/writes a scalar field of a record as a 64-bit value (zero/sign
 * extended per the field's size and wire type). */
static inline uint64_t weft_field_get(const weft_record *r,
                                      const weft_field_desc *f)
{
    assert(!f->is_array && f->wire != WEFT_WIRE_Z);
    return weft__load(weft_field_cptr(r, f), f->size, f->wire == WEFT_WIRE_I);
}

static inline void weft_field_set(weft_record *r, const weft_field_desc *f,
                                  uint64_t v)
{
    assert(!f->is_array && f->wire != WEFT_WIRE_Z);
    weft__store(weft_field_ptr(r, f), f->size, v);
}

/* Number of elements of an array field (value of its count field). */
static inline size_t weft_field_count(const weft_record *r,
                                      const weft_field_desc *f)
{
    assert(f->is_array);
    return (size_t)weft__load((const char *)r + f->count_offset,
                              f->count_size, 0);
}

/* Element i of an array field as a 64-bit value. */
static inline uint64_t weft_field_get_elem(const weft_record *r,
                                           const weft_field_desc *f, size_t i)
{
    const char *base;

    assert(f->is_array);
    memcpy(&base, weft_field_cptr(r, f), sizeof base);
    return weft__load(base + i * f->size, f->size, f->wire == WEFT_WIRE_I);
}

/* Stores element i of an array field; the array must be writable. */
static inline void weft_field_set_elem(weft_record *r,
                                       const weft_field_desc *f, size_t i,
                                       uint64_t v)
{
    char *base;

    assert(f->is_array);
    memcpy(&base, weft_field_cptr(r, f), sizeof base);
    weft__store(base + i * f->size, f->size, v);
}

/* Value i of a field: the element of an array, else the scalar (i 0). */
static inline uint64_t weft_field_value(const weft_record *r,
                                        const weft_field_desc *f, size_t i)
{
    return f->is_array ? weft_field_get_elem(r, f, i) : weft_field_get(r, f);
}

/* Number of values of a field: its count for arrays, else 1. */
static inline size_t weft_field_nvalues(const weft_record *r,
                                        const weft_field_desc *f)
{
    return f->is_array ? weft_field_count(r, f) : 1;
}

/* The selector value of value i of a TV/RS field f (its type or scope). */
static inline uint64_t weft_field_selector(const weft_record *r,
                                           const weft_rec_desc *d,
                                           const weft_field_desc *f, size_t i)
{
    const weft_field_desc *sf;

    assert(f->sel >= 0);
    sf = &d->fields[f->sel];
    return sf->is_array ? weft_field_get_elem(r, sf, i) : weft_field_get(r, sf);
}

/* The reference kind of value i of field f of r (record descriptor d):
 * f->ref for references, the kind selected by the sibling type or
 * selector for TV and RS fields, WEFT_REF_NONE for plain values. Self
 * ids count as references here. */
static inline unsigned weft_field_kind(const weft_record *r,
                                       const weft_rec_desc *d,
                                       const weft_field_desc *f, size_t i)
{
    if (f->sel_map != WEFT_SEL_NONE)
        return weft_sel_kind(f->sel_map, weft_field_selector(r, d, f, i));
    return f->ref;
}

/* Typed values (TV fields, attribute values): how a value of OTF2_Type
 * `type` is encoded (WEFT_WIRE_U, WEFT_WIRE_I, WEFT_WIRE_X for 8 raw
 * bytes, or 4 for FLOAT's 4 raw bytes), its width in bytes, and its
 * canonical 64-bit form: the low `width` bytes of v, the rest zero. */
unsigned weft_typed_wire(uint64_t type);
unsigned weft_typed_width(uint64_t type);
uint64_t weft_typed_canon(uint64_t type, uint64_t v);
#define WEFT_TYPED_F4 7u /* not a weft_wire: 4 raw bytes */

/* Prints a record on one line, e.g. "Enter time=12 region=3". */
void weft_record_print(FILE *out, const weft_record *r);

#endif
