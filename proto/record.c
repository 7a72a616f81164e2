/* record.c - record descriptors generated from the record table, the
 * tables of id-space selectors, and the generic field accessors and
 * printer built on them.
 *
 * Field offsets need the record's struct type inside each field macro,
 * which an X-macro cannot pass down; so each record gets a small init
 * function that binds a local typedef T and appends its fields. Each
 * runs once, when its descriptor is first handed out (ready_desc), and
 * then links between fields (a typed value's type field, a count's
 * reference) are resolved from names into indexes and each field's enum
 * found by the name of its C type (enum.h). Lazily, not from a
 * constructor: a traced process uses a dozen of the descriptors, and
 * filling all of them wrote some 100 KB of pages in every process that
 * loads libweft (bench/procs.sh).
 */
#include "record.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define WEFT__MAX_FIELDS 16
#define UNRESOLVED (-2)

#define OFFSET_OF(T, name)                                                   \
    ((uint16_t)(offsetof(weft_record, u) + offsetof(T, name)))
#define SIZE_OF(T, name) ((uint8_t)sizeof(((T *)0)->name))
#define ADD(fd) (assert(n < WEFT__MAX_FIELDS), out[n++] = (fd))

#define SCALAR(ctype_, nm, wire_)                                            \
    .name = #nm, .ctype = #ctype_, .wire = (wire_),                          \
    .size = sizeof(ctype_), .offset = OFFSET_OF(T, nm)
#define ARRAY(ctype_, nm, count, wire_)                                      \
    SCALAR(ctype_, nm, wire_), .is_array = 1,                                \
    .count_size = SIZE_OF(T, count), .count_offset = OFFSET_OF(T, count)

#define S(ctype, nm, K)                                                      \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_U),                  \
                            .ref = WEFT_REF_##K, .is_self = 1 }));
#define R(ctype, nm, K)                                                      \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_U),                  \
                            .ref = WEFT_REF_##K }));
#define RK(ctype, nm, K)                                                     \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_U),                  \
                            .ref = WEFT_REF_##K, .is_key = 1 }));
#define F(ctype, nm, W)                                                      \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_##W) }));
#define WX(ctype, nm, W)                                                     \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_##W), .is_weft = 1 }));
#define FK(ctype, nm, W)                                                     \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_##W), .is_key = 1 }));
#define CN(ctype, nm, reffield)                                              \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_U),                  \
                            .count_ref = UNRESOLVED, .link = #reffield }));
#define FA(ctype, nm, count, W)                                              \
    ADD(((weft_field_desc){ ARRAY(ctype, nm, count, WEFT_WIRE_##W) }));
#define RA(ctype, nm, count, K)                                              \
    ADD(((weft_field_desc){ ARRAY(ctype, nm, count, WEFT_WIRE_U),            \
                            .ref = WEFT_REF_##K }));
#define TD(ctype, nm, count, reffield)                                       \
    ADD(((weft_field_desc){ ARRAY(ctype, nm, count, WEFT_WIRE_U),            \
                            .decl_ref = UNRESOLVED, .link = #reffield }));
#define TV(ctype, nm, typefield)                                             \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_T),                  \
                            .sel_map = WEFT_SEL_TYPE, .sel = UNRESOLVED,     \
                            .link = #typefield }));
#define TVA(ctype, nm, count, types)                                         \
    ADD(((weft_field_desc){ ARRAY(ctype, nm, count, WEFT_WIRE_T),            \
                            .sel_map = WEFT_SEL_TYPE, .sel = UNRESOLVED,     \
                            .link = #types }));
#define RS(ctype, nm, selector, MAP)                                         \
    ADD(((weft_field_desc){ SCALAR(ctype, nm, WEFT_WIRE_U),                  \
                            .sel_map = WEFT_SEL_##MAP, .sel = UNRESOLVED,    \
                            .link = #selector }));
#define RSA(ctype, nm, count, selector, MAP)                                 \
    ADD(((weft_field_desc){ ARRAY(ctype, nm, count, WEFT_WIRE_U),            \
                            .sel_map = WEFT_SEL_##MAP, .sel = UNRESOLVED,    \
                            .link = #selector }));

#define WEFT__RECORD(id_, Name, event_, pseudo_, flags_, list_)              \
    static weft_field_desc fields_##Name[WEFT__MAX_FIELDS];                  \
    static void init_##Name(void);                                           \
    static weft_rec_desc desc_##Name = {                                     \
        .name = #Name, .type = id_, .is_event = event_,                      \
        .is_pseudo = pseudo_, .flags = flags_, .self_field = -1,             \
        .count_field = -1, .decl_type_field = -1, .fields = fields_##Name }; \
    static void init_##Name(void)                                            \
    {                                                                        \
        typedef weft_##Name T;                                               \
        weft_field_desc *out = fields_##Name;                                \
        unsigned n = 0;                                                      \
        list_                                                                \
        desc_##Name.nfields = (uint8_t)n;                                    \
        (void)out;                                                           \
        (void)sizeof(T);                                                     \
    }
#define WEFT_DEF(id, Name, flags, fields)                                    \
    WEFT__RECORD(id, Name, 0, 0, WEFT_DF_##flags, fields)
#define WEFT_EVENT(id, Name, fields) WEFT__RECORD(id, Name, 1, 0, 0, fields)
#define WEFT_PSEUDO(id, Name, fields) WEFT__RECORD(id, Name, 0, 1, 0, fields)
#include "weft_records.def"

static weft_rec_desc *const all_descs[] = {
#define WEFT_DEF(id, Name, flags, fields) &desc_##Name,
#define WEFT_EVENT(id, Name, fields) &desc_##Name,
#define WEFT_PSEUDO(id, Name, fields) &desc_##Name,
#include "weft_records.def"
};
#define NDESCS (sizeof all_descs / sizeof all_descs[0])

/* Each descriptor's init function and whether it ran (ready_desc). */
static void (*const init_of[])(void) = {
#define WEFT_DEF(id, Name, flags, fields) init_##Name,
#define WEFT_EVENT(id, Name, fields) init_##Name,
#define WEFT_PSEUDO(id, Name, fields) init_##Name,
#include "weft_records.def"
};
static _Atomic uint8_t ready[NDESCS];
static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;

/* Table positions, for by_id. */
enum {
#define WEFT_DEF(id, Name, flags, fields) POS_##Name,
#define WEFT_EVENT(id, Name, fields) POS_##Name,
#define WEFT_PSEUDO(id, Name, fields) POS_##Name,
#include "weft_records.def"
};

/* Id spaces whose definitions CN and TD fields look at; complete once
 * every descriptor is ready (all_ready). */
static uint8_t has_decl[WEFT_REF__COUNT];

/* Wire id -> table position + 1 (0: no such record). A wire id used
 * twice is an initializer overridden, which -Wextra reports. */
#define DIRECT_IDS 256
#define BY_ID(id, Name)                                                      \
    _Static_assert((id) > 0 && (id) < DIRECT_IDS, #Name ": wire id");
#define WEFT_DEF(id, Name, flags, fields) BY_ID(id, Name)
#define WEFT_EVENT(id, Name, fields) BY_ID(id, Name)
#define WEFT_PSEUDO(id, Name, fields) BY_ID(id, Name)
#include "weft_records.def"
#undef BY_ID
static const uint16_t by_id[DIRECT_IDS] = {
#define WEFT_DEF(id, Name, flags, fields) [id] = POS_##Name + 1,
#define WEFT_EVENT(id, Name, fields) [id] = POS_##Name + 1,
#define WEFT_PSEUDO(id, Name, fields) [id] = POS_##Name + 1,
#include "weft_records.def"
};

static const char *const ref_names[] = {
    "NONE",
#define WEFT_REFKIND(KIND, ctype, undef, scope) #KIND,
#include "weft_records.def"
};

static const uint64_t ref_undefined[] = {
    0,
#define WEFT_REFKIND(KIND, ctype, undef, scope) (uint64_t)(undef),
#include "weft_records.def"
};

static const uint8_t ref_scope[] = {
    WEFT_SCOPE_LOCAL,
#define WEFT_REFKIND(KIND, ctype, undef, scope) WEFT_SCOPE_##scope,
#include "weft_records.def"
};

/* ---- selectors: which id space a typed or selected value is in ---------- */

static const uint8_t type_kinds[] = {
    [OTF2_TYPE_STRING] = WEFT_REF_STRING,
    [OTF2_TYPE_ATTRIBUTE] = WEFT_REF_ATTRIBUTE,
    [OTF2_TYPE_LOCATION] = WEFT_REF_LOCATION,
    [OTF2_TYPE_REGION] = WEFT_REF_REGION,
    [OTF2_TYPE_GROUP] = WEFT_REF_GROUP,
    [OTF2_TYPE_METRIC] = WEFT_REF_METRIC,
    [OTF2_TYPE_COMM] = WEFT_REF_COMM,
    [OTF2_TYPE_PARAMETER] = WEFT_REF_PARAMETER,
    [OTF2_TYPE_RMA_WIN] = WEFT_REF_RMA_WIN,
    [OTF2_TYPE_SOURCE_CODE_LOCATION] = WEFT_REF_SOURCE_CODE_LOCATION,
    [OTF2_TYPE_CALLING_CONTEXT] = WEFT_REF_CALLING_CONTEXT,
    [OTF2_TYPE_INTERRUPT_GENERATOR] = WEFT_REF_INTERRUPT_GENERATOR,
    [OTF2_TYPE_IO_FILE] = WEFT_REF_IO_FILE,
    [OTF2_TYPE_IO_HANDLE] = WEFT_REF_IO_HANDLE,
    [OTF2_TYPE_LOCATION_GROUP] = WEFT_REF_LOCATION_GROUP,
};

static const uint8_t scope_kinds[] = {
    [OTF2_SCOPE_LOCATION] = WEFT_REF_LOCATION,
    [OTF2_SCOPE_LOCATION_GROUP] = WEFT_REF_LOCATION_GROUP,
    [OTF2_SCOPE_SYSTEM_TREE_NODE] = WEFT_REF_SYSTEM_TREE_NODE,
    [OTF2_SCOPE_GROUP] = WEFT_REF_GROUP,
};

/* COMM_GROUP members are ranks, not references. */
static const uint8_t group_kinds[] = {
    [OTF2_GROUP_TYPE_LOCATIONS] = WEFT_REF_LOCATION,
    [OTF2_GROUP_TYPE_REGIONS] = WEFT_REF_REGION,
    [OTF2_GROUP_TYPE_METRIC] = WEFT_REF_METRIC,
    [OTF2_GROUP_TYPE_COMM_LOCATIONS] = WEFT_REF_LOCATION,
};

#define LOOKUP(table, v)                                                     \
    ((v) < sizeof(table) / sizeof((table)[0]) ? (table)[v] : WEFT_REF_NONE)

unsigned weft_sel_kind(unsigned map, uint64_t v)
{
    switch (map) {
    case WEFT_SEL_TYPE: return LOOKUP(type_kinds, v);
    case WEFT_SEL_METRIC_SCOPE: return LOOKUP(scope_kinds, v);
    case WEFT_SEL_GROUP_TYPE: return LOOKUP(group_kinds, v);
    default: return WEFT_REF_NONE;
    }
}

unsigned weft_typed_wire(uint64_t type)
{
    switch (type) {
    case OTF2_TYPE_UINT8: case OTF2_TYPE_UINT16: case OTF2_TYPE_UINT32:
    case OTF2_TYPE_UINT64:
        return WEFT_WIRE_U;
    case OTF2_TYPE_INT8: case OTF2_TYPE_INT16: case OTF2_TYPE_INT32:
    case OTF2_TYPE_INT64:
        return WEFT_WIRE_I;
    case OTF2_TYPE_FLOAT:
        return WEFT_TYPED_F4;
    default:
        return weft_sel_kind(WEFT_SEL_TYPE, type) != WEFT_REF_NONE
                   ? WEFT_WIRE_U : WEFT_WIRE_X;
    }
}

unsigned weft_typed_width(uint64_t type)
{
    switch (type) {
    case OTF2_TYPE_UINT8: case OTF2_TYPE_INT8: return 1;
    case OTF2_TYPE_UINT16: case OTF2_TYPE_INT16: return 2;
    case OTF2_TYPE_UINT32: case OTF2_TYPE_INT32: case OTF2_TYPE_FLOAT:
        return 4;
    case OTF2_TYPE_LOCATION: return sizeof(OTF2_LocationRef);
    default:
        return weft_sel_kind(WEFT_SEL_TYPE, type) != WEFT_REF_NONE ? 4 : 8;
    }
}

uint64_t weft_typed_canon(uint64_t type, uint64_t v)
{
    unsigned w = weft_typed_width(type);

    return w >= 8 ? v : v & ((((uint64_t)1) << (8 * w)) - 1);
}

/* ---- descriptors ---------------------------------------------------------- */

static int8_t field_index(const weft_rec_desc *d, const char *name)
{
    for (unsigned i = 0; i < d->nfields; i++)
        if (!strcmp(d->fields[i].name, name))
            return (int8_t)i;
    assert(!"a field links to a field its record does not have");
    return -1;
}

static int8_t resolve(const weft_rec_desc *d, int8_t v, const char *link)
{
    return v == UNRESOLVED ? field_index(d, link) : -1;
}

/* Links, enums and the record-level facts derived from the fields. */
static void finish(weft_rec_desc *d)
{
    weft_field_desc *fields = (weft_field_desc *)d->fields;

    d->is_scalar = 1;
    for (unsigned i = 0; i < d->nfields; i++) {
        weft_field_desc *f = &fields[i];
        if (f->is_array || f->wire == WEFT_WIRE_Z || f->wire == WEFT_WIRE_T)
            d->is_scalar = 0;
        f->sel = resolve(d, f->sel, f->link);
        f->count_ref = resolve(d, f->count_ref, f->link);
        f->decl_ref = resolve(d, f->decl_ref, f->link);
        f->enum_id = (int8_t)weft_enum_find(f->ctype);
        assert(f->sel < (int)i && f->count_ref < (int)i &&
               f->decl_ref < (int)i && "links point backwards");
        if (f->count_ref >= 0)
            has_decl[fields[f->count_ref].ref] = 1;
        if (f->decl_ref >= 0)
            has_decl[fields[f->decl_ref].ref] = 1;
        if (f->is_self) {
            d->self_field = (int8_t)i;
            if (ref_scope[f->ref] == WEFT_SCOPE_NATURE)
                d->is_keyed = 1;
        }
        if (f->is_key)
            d->is_keyed = 1;
        if (!f->is_self && (f->ref == WEFT_REF_LOCATION ||
                            f->sel_map != WEFT_SEL_NONE))
            d->names_location = 1;
        if (f->is_array && d->count_field < 0 && !d->is_event) {
            for (unsigned k = 0; k < i; k++)
                if (!fields[k].is_array && fields[k].offset == f->count_offset)
                    d->count_field = (int8_t)k;
        }
        if (!f->is_array && d->decl_type_field < 0 && !d->is_event &&
            !strcmp(f->ctype, "OTF2_Type"))
            d->decl_type_field = (int8_t)i;
    }
    if (d->self_field < 0)
        d->decl_type_field = -1;
}

/* Descriptor i of the table, its fields filled and finished on first
 * use. Any thread. */
static const weft_rec_desc *ready_desc(size_t i)
{
    if (!atomic_load_explicit(&ready[i], memory_order_acquire)) {
        pthread_mutex_lock(&ready_mu);
        if (!atomic_load_explicit(&ready[i], memory_order_relaxed)) {
            init_of[i]();
            finish(all_descs[i]);
            atomic_store_explicit(&ready[i], 1, memory_order_release);
        }
        pthread_mutex_unlock(&ready_mu);
    }
    return all_descs[i];
}

/* Every descriptor ready (what has_decl and the whole table need). */
static void all_ready(void)
{
    static _Atomic int done;

    if (atomic_load_explicit(&done, memory_order_acquire))
        return;
    for (size_t i = 0; i < NDESCS; i++)
        ready_desc(i);
    atomic_store_explicit(&done, 1, memory_order_release);
}

const weft_rec_desc *weft_rec_desc_of(uint32_t type)
{
    return type < DIRECT_IDS && by_id[type] ? ready_desc(by_id[type] - 1u)
                                             : NULL;
}

const weft_rec_desc *const *weft_rec_descs(size_t *n)
{
    all_ready();
    *n = NDESCS;
    return (const weft_rec_desc *const *)all_descs;
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

unsigned weft_ref_kind_scope(unsigned kind)
{
    return kind < WEFT_REF__COUNT ? ref_scope[kind] : WEFT_SCOPE_LOCAL;
}

int weft_ref_kind_has_decl(unsigned kind)
{
    all_ready();
    return kind < WEFT_REF__COUNT && kind != WEFT_REF_NONE && has_decl[kind];
}

/* ---- field access ------------------------------------------------------------ */

/* The accessors are inline in record.h. */


/* ---- printing ------------------------------------------------------------------ */

static void print_value(FILE *out, unsigned wire, uint64_t v)
{
    double d;

    switch (wire) {
    case WEFT_WIRE_I: fprintf(out, "%" PRId64, (int64_t)v); break;
    case WEFT_WIRE_D: memcpy(&d, &v, sizeof d); fprintf(out, "%g", d); break;
    case WEFT_WIRE_X:
    case WEFT_WIRE_T: fprintf(out, "0x%" PRIx64, v); break;
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
    if (d->is_event && r->attributes) {
        fputs(" {", out);
        weft_record_print(out, r->attributes);
        fputc('}', out);
    }
}
