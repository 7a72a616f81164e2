/* record.c - record descriptors generated from the record table, and the
 * generic field accessors and printer built on them.
 *
 * Field offsets need the record's struct type inside each field macro,
 * which an X-macro cannot pass down; so each record gets a small init
 * function that binds a local typedef T and appends its fields. They run
 * once, from a constructor, before any descriptor is handed out.
 */
#include "record.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#define WEFT__MAX_FIELDS 16

#define OFFSET_OF(T, name)                                                   \
    ((uint16_t)(offsetof(weft_record, u) + offsetof(T, name)))
#define SIZE_OF(T, name) ((uint8_t)sizeof(((T *)0)->name))
#define ADD(fd) (assert(n < WEFT__MAX_FIELDS), out[n++] = (fd))

#define S(ctype, nm, K)                                                      \
    ADD(((weft_field_desc){ #nm, WEFT_WIRE_U, WEFT_REF_##K, 1, 0,           \
                            sizeof(ctype), 0, OFFSET_OF(T, nm), 0 }));
#define R(ctype, nm, K)                                                      \
    ADD(((weft_field_desc){ #nm, WEFT_WIRE_U, WEFT_REF_##K, 0, 0,           \
                            sizeof(ctype), 0, OFFSET_OF(T, nm), 0 }));
#define F(ctype, nm, W)                                                      \
    ADD(((weft_field_desc){ #nm, WEFT_WIRE_##W, WEFT_REF_NONE, 0, 0,        \
                            sizeof(ctype), 0, OFFSET_OF(T, nm), 0 }));
#define FA(ctype, nm, count, W)                                              \
    ADD(((weft_field_desc){ #nm, WEFT_WIRE_##W, WEFT_REF_NONE, 0, 1,        \
                            sizeof(ctype), SIZE_OF(T, count),                \
                            OFFSET_OF(T, nm), OFFSET_OF(T, count) }));
#define RA(ctype, nm, count, K)                                              \
    ADD(((weft_field_desc){ #nm, WEFT_WIRE_U, WEFT_REF_##K, 0, 1,           \
                            sizeof(ctype), SIZE_OF(T, count),                \
                            OFFSET_OF(T, nm), OFFSET_OF(T, count) }));

#define WEFT__RECORD(id, Name, is_event, flags, fields)                      \
    static weft_field_desc fields_##Name[WEFT__MAX_FIELDS];                  \
    static weft_rec_desc desc_##Name = { #Name, id, is_event, flags, 0, -1,  \
                                         fields_##Name };                    \
    static void init_##Name(void)                                            \
    {                                                                        \
        typedef weft_##Name T;                                               \
        weft_field_desc *out = fields_##Name;                                \
        unsigned n = 0;                                                      \
        fields                                                               \
        desc_##Name.nfields = (uint8_t)n;                                    \
        for (unsigned i = 0; i < n; i++)                                     \
            if (out[i].is_self)                                              \
                desc_##Name.self_field = (int8_t)i;                          \
    }
#define WEFT_DEF(id, Name, flags, fields)                                    \
    WEFT__RECORD(id, Name, 0, WEFT_DF_##flags, fields)
#define WEFT_EVENT(id, Name, fields) WEFT__RECORD(id, Name, 1, 0, fields)
#include "weft_records.def"
#undef S
#undef R
#undef F
#undef FA
#undef RA

static const weft_rec_desc *const all_descs[] = {
#define WEFT_DEF(id, Name, flags, fields) &desc_##Name,
#define WEFT_EVENT(id, Name, fields) &desc_##Name,
#include "weft_records.def"
};
#define NDESCS (sizeof all_descs / sizeof all_descs[0])

/* Wire ids below this are looked up directly; the rest by a scan. */
#define DIRECT_IDS 256
static const weft_rec_desc *by_id[DIRECT_IDS];

static const char *const ref_names[] = {
    "NONE",
#define WEFT_REFKIND(KIND, ctype, undef) #KIND,
#include "weft_records.def"
};

static const uint64_t ref_undefined[] = {
    0,
#define WEFT_REFKIND(KIND, ctype, undef) (uint64_t)(undef),
#include "weft_records.def"
};

__attribute__((constructor)) static void init_descs(void)
{
#define WEFT_DEF(id, Name, flags, fields) init_##Name();
#define WEFT_EVENT(id, Name, fields) init_##Name();
#include "weft_records.def"
    for (size_t i = 0; i < NDESCS; i++) {
        uint32_t id = all_descs[i]->type;
        if (id < DIRECT_IDS) {
            assert(by_id[id] == NULL && "wire id used twice in the table");
            by_id[id] = all_descs[i];
        }
    }
}

const weft_rec_desc *weft_rec_desc_of(uint32_t type)
{
    if (type < DIRECT_IDS)
        return by_id[type];
    for (size_t i = 0; i < NDESCS; i++)
        if (all_descs[i]->type == type)
            return all_descs[i];
    return NULL;
}

const weft_rec_desc *const *weft_rec_descs(size_t *n)
{
    *n = NDESCS;
    return all_descs;
}

const char *weft_ref_kind_name(unsigned kind)
{
    return kind < WEFT_REF__COUNT ? ref_names[kind] : "?";
}

uint64_t weft_ref_kind_undefined(unsigned kind)
{
    assert(kind > WEFT_REF_NONE && kind < WEFT_REF__COUNT);
    return ref_undefined[kind];
}

static uint64_t load(const void *p, unsigned size, int is_signed)
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

static void store(void *p, unsigned size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

void *weft_field_ptr(weft_record *r, const weft_field_desc *f)
{
    return (char *)r + f->offset;
}

const void *weft_field_cptr(const weft_record *r, const weft_field_desc *f)
{
    return (const char *)r + f->offset;
}

uint64_t weft_field_get(const weft_record *r, const weft_field_desc *f)
{
    assert(!f->is_array && f->wire != WEFT_WIRE_Z);
    return load(weft_field_cptr(r, f), f->size, f->wire == WEFT_WIRE_I);
}

void weft_field_set(weft_record *r, const weft_field_desc *f, uint64_t v)
{
    assert(!f->is_array && f->wire != WEFT_WIRE_Z);
    store(weft_field_ptr(r, f), f->size, v);
}

size_t weft_field_count(const weft_record *r, const weft_field_desc *f)
{
    assert(f->is_array);
    return (size_t)load((const char *)r + f->count_offset, f->count_size, 0);
}

uint64_t weft_field_get_elem(const weft_record *r, const weft_field_desc *f,
                             size_t i)
{
    const char *base;

    assert(f->is_array);
    memcpy(&base, weft_field_cptr(r, f), sizeof base);
    return load(base + i * f->size, f->size, f->wire == WEFT_WIRE_I);
}

static void print_value(FILE *out, unsigned wire, uint64_t v)
{
    double d;

    switch (wire) {
    case WEFT_WIRE_I: fprintf(out, "%" PRId64, (int64_t)v); break;
    case WEFT_WIRE_D: memcpy(&d, &v, sizeof d); fprintf(out, "%g", d); break;
    case WEFT_WIRE_X: fprintf(out, "0x%" PRIx64, v); break;
    default: fprintf(out, "%" PRIu64, v); break;
    }
}

void weft_record_print(FILE *out, const weft_record *r)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    if (!d) {
        fprintf(out, "?(type %" PRIu32 ")", r->type);
        return;
    }
    fputs(d->name, out);
    if (d->is_event)
        fprintf(out, " time=%" PRIu64, r->time);
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        fprintf(out, " %s=", f->name);
        if (f->wire == WEFT_WIRE_Z) {
            const char *s;
            memcpy(&s, weft_field_cptr(r, f), sizeof s);
            fprintf(out, "\"%s\"", s ? s : "");
        } else if (f->is_array) {
            size_t n = weft_field_count(r, f);
            fputc('[', out);
            for (size_t k = 0; k < n; k++) {
                if (k)
                    fputc(',', out);
                print_value(out, f->wire, weft_field_get_elem(r, f, k));
            }
            fputc(']', out);
        } else {
            print_value(out, f->wire, weft_field_get(r, f));
        }
    }
}
