/* record.h - in-memory records and their descriptors, from the record table.
 *
 * For every entry of weft_records.def this yields WEFT_REC_<Name> (its wire
 * id), a struct weft_<Name> with the fields in libotf2 order, and a
 * descriptor (weft_rec_desc) listing each field's wire encoding, reference
 * kind and offset, so generic code (codec, unification, validation,
 * printing) walks records without a switch over the record list.
 */
#ifndef WEFT_RECORD_H
#define WEFT_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#define WEFT_DF_CLIENT 0u
#define WEFT_DF_DAEMON 1u

/* Id spaces of definitions. */
typedef enum {
    WEFT_REF_NONE = 0,
#define WEFT_REFKIND(KIND, ctype, undef) WEFT_REF_##KIND,
#include "weft_records.def"
    WEFT_REF__COUNT
} weft_ref_kind;

/* Wire encodings of one value. */
typedef enum {
    WEFT_WIRE_U = 1, /* unsigned varint */
    WEFT_WIRE_I,     /* zigzag varint */
    WEFT_WIRE_D,     /* 8 bytes, IEEE double */
    WEFT_WIRE_Z,     /* varint length + bytes, no NUL inside */
    WEFT_WIRE_X      /* 8 raw bytes */
} weft_wire;

/* Wire ids. */
typedef enum {
#define WEFT_DEF(id, Name, flags, fields) WEFT_REC_##Name = id,
#define WEFT_EVENT(id, Name, fields) WEFT_REC_##Name = id,
#include "weft_records.def"
    WEFT_REC__MAX_ID = 0x3fff
} weft_rec_type;

/* One struct per record. Arrays point to their elements (owned by whoever
 * built the record: the caller, or a decoder's scratch space). */
#define S(ctype, name, K) ctype name;
#define R(ctype, name, K) ctype name;
#define F(ctype, name, W) ctype name;
#define FA(ctype, name, count, W) const ctype *name;
#define RA(ctype, name, count, K) const ctype *name;
#define WEFT_DEF(id, Name, flags, fields) typedef struct { fields } weft_##Name;
#define WEFT_EVENT(id, Name, fields) typedef struct { fields } weft_##Name;
#include "weft_records.def"
#undef S
#undef R
#undef F
#undef FA
#undef RA

/* A decoded record of any kind. `time` is absolute, events only. */
typedef struct weft_record {
    uint32_t type;
    uint64_t time;
    union {
#define WEFT_DEF(id, Name, flags, fields) weft_##Name Name;
#define WEFT_EVENT(id, Name, fields) weft_##Name Name;
#include "weft_records.def"
    } u;
} weft_record;

/* How one field is stored and encoded. */
typedef struct weft_field_desc {
    const char *name;
    uint8_t wire;        /* weft_wire of the value or of each element */
    uint8_t ref;         /* weft_ref_kind, WEFT_REF_NONE for plain values */
    uint8_t is_self;     /* the definition's own id */
    uint8_t is_array;
    uint8_t size;        /* bytes of the value or of each element */
    uint8_t count_size;  /* arrays: bytes of the count field */
    uint16_t offset;     /* in weft_record */
    uint16_t count_offset; /* arrays: offset of the count field */
} weft_field_desc;

typedef struct weft_rec_desc {
    const char *name;    /* OTF2's name, e.g. "Enter" */
    uint32_t type;       /* wire id */
    uint8_t is_event;
    uint8_t flags;       /* WEFT_DF_* */
    uint8_t nfields;
    int8_t self_field;   /* index of the S field, -1 if none */
    const weft_field_desc *fields;
} weft_rec_desc;

/* Descriptor of a wire id, NULL if the id is unknown. */
const weft_rec_desc *weft_rec_desc_of(uint32_t type);
/* Descriptors in table order (definitions and events), *n set to the count. */
const weft_rec_desc *const *weft_rec_descs(size_t *n);
/* Name of a reference kind, e.g. "REGION". */
const char *weft_ref_kind_name(unsigned kind);
/* The "undefined" value of a reference kind (OTF2_UNDEFINED_*). */
uint64_t weft_ref_kind_undefined(unsigned kind);

/* Reads/writes a scalar field of a record as a 64-bit value (zero/sign
 * extended per the field's size and wire type). */
uint64_t weft_field_get(const weft_record *r, const weft_field_desc *f);
void weft_field_set(weft_record *r, const weft_field_desc *f, uint64_t v);
/* Element i of an array field as a 64-bit value. */
uint64_t weft_field_get_elem(const weft_record *r, const weft_field_desc *f,
                             size_t i);
/* Number of elements of an array field (value of its count field). */
size_t weft_field_count(const weft_record *r, const weft_field_desc *f);
/* Pointer to the field inside the record. */
void *weft_field_ptr(weft_record *r, const weft_field_desc *f);
const void *weft_field_cptr(const weft_record *r, const weft_field_desc *f);

/* Prints a record on one line, e.g. "Enter time=12 region=3". */
void weft_record_print(FILE *out, const weft_record *r);

#endif
