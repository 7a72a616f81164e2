/* gen.c - records built from a fuzzer's bytes (gen.h): each field from
 * the record table's descriptor, references to what the peer's model
 * says it defined.
 */
#include <string.h>
#include <sys/types.h>

#include "codec.h"
#include "gen.h"

static const char *const strings[] = { "main", "compute", "a.c", "",
                                       "MPI_Send", "x", "cycles", "#" };

/* Storage for the arrays of the records being built. */
typedef struct arena {
    uint8_t b[1024];
    size_t used;
} arena;

static void *arena_get(arena *a, size_t n)
{
    void *p;

    n = (n + 7) & ~(size_t)7;
    if (a->used + n > sizeof a->b)
        return NULL;
    p = a->b + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

static const weft_field_desc *count_of(const weft_rec_desc *d,
                                       const weft_field_desc *arr)
{
    for (unsigned i = 0; i < d->nfields; i++)
        if (!d->fields[i].is_array && d->fields[i].wire != WEFT_WIRE_Z &&
            d->fields[i].offset == arr->count_offset)
            return &d->fields[i];
    return NULL;
}

static int is_count(const weft_rec_desc *d, const weft_field_desc *f)
{
    for (unsigned i = 0; i < d->nfields; i++)
        if (d->fields[i].is_array && d->fields[i].count_offset == f->offset)
            return 1;
    return 0;
}

/* A reference of kind from byte b: a derived id as clients make them, one
 * the peer defined, or (b 255, or nothing defined) the undefined one. */
static uint64_t gen_ref(const model *m, unsigned kind, uint32_t rank,
                        uint8_t b)
{
    const char *name = weft_ref_kind_name(kind);

    if (weft_ref_kind_scope(kind) == WEFT_SCOPE_DERIVED) {
        if (strcmp(name, "LOCATION") == 0)
            return (uint64_t)rank << 32 | (b & (NLOCS - 1));
        if (strcmp(name, "LOCATION_GROUP") == 0)
            return b & 0x80 ? rank + 1 : rank;
        return b & 1;
    }
    if (b == 255 || m->next[kind] == 0)
        return weft_ref_kind_undefined(kind);
    if (kind == m->self_kind && b % m->next[kind] >= m->self_id)
        return weft_ref_kind_undefined(kind); /* a parent: none */
    return b % m->next[kind];
}

/* Value i of field f of r (record descriptor d) from byte b. */
static uint64_t gen_value(model *m, weft_record *r, const weft_rec_desc *d,
                          const weft_field_desc *f, size_t i, uint32_t rank,
                          uint8_t b)
{
    unsigned kind = weft_field_kind(r, d, f, i);

    if (f->is_self) {
        uint32_t id = m->next[f->ref];
        if (b == 255) /* an id out of order */
            return id + 1;
        m->next[f->ref]++;
        m->self_kind = f->ref;
        m->self_id = id;
        return id;
    }
    if (f->decl_ref >= 0) { /* TD: the declared type of what it refers to */
        const weft_field_desc *rf = &d->fields[f->decl_ref];
        uint64_t id = weft_field_value(r, rf, i);
        if (id < MAXID && b != 255)
            return m->type[rf->ref][id];
    }
    if (kind != WEFT_REF_NONE)
        return gen_ref(m, kind, rank, b);
    if (f->wire == WEFT_WIRE_T)
        return weft_typed_canon(weft_field_selector(r, d, f, i),
                                b & 0x80 ? UINT64_MAX - b : b);
    if (f->enum_id >= 0) {
        uint64_t lo = weft_enum_first(f->enum_id);
        uint64_t hi = weft_enum_last(f->enum_id);
        uint64_t v = lo + (b + 1u) % (hi - lo + 1); /* 0: not the first,
                                                      often NONE */
        return weft_enum_valid(f->enum_id, v) ? v : lo;
    }
    if (f->wire == WEFT_WIRE_I)
        return (uint64_t)(int64_t)(int8_t)b;
    if (f->wire == WEFT_WIRE_D || f->wire == WEFT_WIRE_X)
        return b;
    return b < 200 ? b : UINT64_MAX - b;
}

/* Record of descriptor d built from the bytes of in (zeros past its end:
 * the first enum values, the first ids defined). 0, or -1 when its arrays
 * do not fit. */
static int gen_record(model *m, const weft_rec_desc *d, cursor *in,
                      uint32_t rank, arena *a, weft_record *r)
{
    memset(r, 0, sizeof *r);
    r->type = d->type;
    m->self_kind = WEFT_REF_NONE;
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = strings[byte(in) % (sizeof strings /
                                                 sizeof strings[0])];
            memcpy(weft_field_ptr(r, f), &s, sizeof s);
        } else if (f->is_array) {
            const weft_field_desc *cf = count_of(d, f);
            uint8_t b = byte(in);
            size_t n = b & 3;
            uint8_t *elems;
            for (unsigned j = 0; j < i; j++)
                if (d->fields[j].is_array &&
                    d->fields[j].count_offset == f->count_offset) {
                    b = 0; /* the count an array before it set */
                    n = weft_field_count(r, f);
                }
            if (b && cf && cf->count_ref >= 0 && !(b & 4)) {
                /* CN: the count its reference declared */
                const weft_field_desc *rf = &d->fields[cf->count_ref];
                uint64_t id = weft_field_get(r, rf);
                if (id < MAXID)
                    n = m->count[weft_field_kind(r, d, rf, 0)][id] & 7;
            }
            if (!(elems = arena_get(a, (n ? n : 1) * f->size)))
                return -1;
            if (cf)
                weft_field_set(r, cf, n);
            memcpy(weft_field_ptr(r, f), &elems, sizeof elems);
            for (size_t k = 0; k < n; k++)
                weft_field_set_elem(r, f, k, gen_value(m, r, d, f, k, rank,
                                                       byte(in)));
        } else if (!is_count(d, f)) {
            weft_field_set(r, f, gen_value(m, r, d, f, 0, rank, byte(in)));
        }
    }
    if (d->self_field >= 0) {
        const weft_field_desc *sf = &d->fields[d->self_field];
        uint64_t id = weft_field_get(r, sf);
        if (id < MAXID && d->count_field >= 0)
            m->count[sf->ref][id] =
                (uint8_t)weft_field_get(r, &d->fields[d->count_field]);
        if (id < MAXID && d->decl_type_field >= 0)
            m->type[sf->ref][id] =
                (uint8_t)weft_field_get(r, &d->fields[d->decl_type_field]);
    }
    return 0;
}

/* See gen.h. */
size_t gen_records(model *m, int events, cursor *in, uint32_t rank,
                   uint8_t *buf, uint64_t *time, uint32_t *n)
{
    static const weft_rec_desc *defs[WEFT_DEF_KINDS], *evs[WEFT_EVENT_KINDS];
    static size_t nd, ne;
    const weft_rec_desc *const *kinds = events ? evs : defs;
    size_t nkinds, len = 0;
    unsigned count = byte(in) % 16;

    if (!ne) { /* the table's order, definitions weftd makes left out */
        size_t na = 0;
        const weft_rec_desc *const *all = weft_rec_descs(&na);
        for (size_t i = 0; i < na; i++) {
            if (all[i]->is_pseudo || (all[i]->flags & WEFT_DF_DAEMON))
                continue;
            if (all[i]->is_event)
                evs[ne++] = all[i];
            else
                defs[nd++] = all[i];
        }
    }
    nkinds = events ? ne : nd;

    *n = 0;
    for (unsigned i = 0; i < count && in->p < in->end; i++) {
        const weft_rec_desc *d = kinds[byte(in) % nkinds];
        cursor fields = sub(in, byte(in));
        weft_record r, attrs;
        arena a = { .used = 0 };
        uint8_t step = events ? byte(&fields) : 0;
        ssize_t w;
        if (gen_record(m, d, &fields, rank, &a, &r) < 0)
            continue;
        if (events) {
            r.time = *time + (step & 0x7f);
            if ((step & 0x80) &&
                gen_record(m, weft_rec_desc_of(WEFT_REC_AttributeList),
                           &fields, rank, &a, &attrs) == 0)
                r.attributes = &attrs;
        }
        if (weft_encode_bound(&r) > PAYLOAD_MAX - len)
            break;
        w = weft_encode(&r, events ? time : NULL, buf + len,
                        PAYLOAD_MAX - len);
        if (w < 0)
            continue;
        len += (size_t)w;
        ++*n;
    }
    return len;
}
