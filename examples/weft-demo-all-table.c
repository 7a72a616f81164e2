/* weft-demo-all-table.c - what weft-demo --all-records (weft-demo-all.c)
 * takes from the record table and its descriptors, with no value chosen
 * by hand: the kinds counted in reports, the JSON printer that writes a
 * record down as one line and the schema line, and the switch that hands
 * a record to libweft's generated weft_def_<Name> / weft_evt_<Name>. So a
 * record added to the table is logged and sent without a line here.
 */
#include "weft-demo-all.h"
#include "weft-demo-all-table.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <weft.h>

#include "record.h"

/* ---- the kinds ------------------------------------------------------------- */

static const char *const kind_names[] = {
#define WEFT_EVENT(id, Name, fields) #Name,
#include "weft_records.def"
#define WEFT__K_CLIENT(Name) #Name,
#define WEFT__K_LOCAL(Name) #Name,
#define WEFT__K_DAEMON(Name)
#define WEFT__K_WEFT(Name)
#define WEFT_DEF(id, Name, flags, fields) WEFT__K_##flags(Name)
#include "weft_records.def"
#undef WEFT__K_CLIENT
#undef WEFT__K_LOCAL
#undef WEFT__K_DAEMON
#undef WEFT__K_WEFT
};
#define NKINDS ((int)(sizeof kind_names / sizeof kind_names[0]))
_Static_assert(sizeof kind_names / sizeof kind_names[0] <= DEMO_MAX_KINDS,
               "DEMO_MAX_KINDS too small");

int demo_nkinds(void)
{
    return NKINDS;
}

const char *demo_kind_name(int kind)
{
    return kind >= 0 && kind < NKINDS ? kind_names[kind] : "?";
}

int demo_kind(const char *name)
{
    for (int i = 0; i < NKINDS; i++)
        if (!strcmp(kind_names[i], name))
            return i;
    return -1;
}

uint32_t demo_kind_event_type(int kind)
{
    const char *name = demo_kind_name(kind);
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i]->name, name))
            return all[i]->is_event ? all[i]->type : 0;
    return 0;
}

int demo_kind_is_event(int kind)
{
    const char *name = demo_kind_name(kind);
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i]->name, name))
            return all[i]->is_event;
    return 0;
}

/* ---- JSON -------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;
         p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Signed values as numbers, doubles, raw words and typed values as their
 * 64 bits (unsigned), so that NaN survives JSON. */
static void json_value(FILE *f, const weft_field_desc *fd, uint64_t v)
{
    if (fd->wire == WEFT_WIRE_I)
        fprintf(f, "%" PRId64, (int64_t)v);
    else
        fprintf(f, "%" PRIu64, v);
}

static void json_fields(FILE *f, const weft_rec_desc *d, const weft_record *r)
{
    fputc('{', f);
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *fd = &d->fields[i];
        if (i)
            fputc(',', f);
        json_string(f, fd->name);
        fputc(':', f);
        if (fd->wire == WEFT_WIRE_Z) {
            const char *s;
            memcpy(&s, weft_field_cptr(r, fd), sizeof s);
            json_string(f, s);
        } else if (fd->is_array) {
            size_t n = weft_field_count(r, fd);
            fputc('[', f);
            for (size_t k = 0; k < n; k++) {
                if (k)
                    fputc(',', f);
                json_value(f, fd, fd->wire == WEFT_WIRE_T
                           ? weft_typed_canon(weft_field_selector(r, d, fd, k),
                                              weft_field_get_elem(r, fd, k))
                           : weft_field_get_elem(r, fd, k));
            }
            fputc(']', f);
        } else {
            json_value(f, fd, fd->wire == WEFT_WIRE_T
                       ? weft_typed_canon(weft_field_selector(r, d, fd, 0),
                                          weft_field_get(r, fd))
                       : weft_field_get(r, fd));
        }
    }
    fputc('}', f);
}

/* One line: {"rank", "thread" (-1 for definitions), "kind", "time",
 * "fields", "attributes" (the attribute list's fields or null)}. */
void demo__json_record(FILE *f, uint32_t rank, int64_t thread,
                       const weft_record *r)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    fprintf(f, "{\"rank\":%" PRIu32 ",\"thread\":%" PRId64 ",\"kind\":",
            rank, thread);
    json_string(f, d->name);
    fprintf(f, ",\"time\":%" PRIu64 ",\"fields\":", r->time);
    json_fields(f, d, r);
    fputs(",\"attributes\":", f);
    if (r->attributes)
        json_fields(f, weft_rec_desc_of(r->attributes->type), r->attributes);
    else
        fputs("null", f);
    fputs("}\n", f);
}

static const char *wire_name(unsigned w)
{
    static const char *const names[] = { "?", "U", "I", "D", "Z", "X", "T" };
    return w < sizeof names / sizeof names[0] ? names[w] : "?";
}

static const char *sel_name(unsigned m)
{
    static const char *const names[] = { NULL, "TYPE", "METRIC_SCOPE",
                                         "GROUP_TYPE" };
    return m < sizeof names / sizeof names[0] ? names[m] : NULL;
}

/* The schema line: id spaces, the selector maps and typed-value widths,
 * and every record's fields, from the descriptors. */
void demo_all_schema(FILE *out)
{
    static const char *const scopes[] = { "LOCAL", "NATURE", "DERIVED" };
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    fputs("{\"schema\":{\"refkinds\":{", out);
    for (unsigned k = WEFT_REF_NONE + 1; k < WEFT_REF__COUNT; k++)
        fprintf(out, "%s\"%s\":{\"scope\":\"%s\",\"undefined\":%" PRIu64 "}",
                k > 1 ? "," : "", weft_ref_kind_name(k),
                scopes[weft_ref_kind_scope(k)], weft_ref_kind_undefined(k));
    fputs("},\"maps\":{", out);
    for (unsigned m = WEFT_SEL_TYPE; m <= WEFT_SEL_GROUP_TYPE; m++) {
        const char *sep = "";
        fprintf(out, "%s\"%s\":{", m > WEFT_SEL_TYPE ? "," : "", sel_name(m));
        for (unsigned v = 0; v < 64; v++)
            if (weft_sel_kind(m, v) != WEFT_REF_NONE) {
                fprintf(out, "%s\"%u\":\"%s\"", sep, v,
                        weft_ref_kind_name(weft_sel_kind(m, v)));
                sep = ",";
            }
        fputc('}', out);
    }
    fputs("},\"typed_width\":{", out);
    for (unsigned t = 0; t <= OTF2_TYPE_LOCATION_GROUP; t++)
        fprintf(out, "%s\"%u\":%u", t ? "," : "", t, weft_typed_width(t));
    fputs("},\"records\":{", out);
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        fprintf(out, "%s\"%s\":{\"class\":\"%s\",\"flags\":%u,\"fields\":[",
                i ? "," : "", d->name,
                d->is_event ? "event" : d->is_pseudo ? "pseudo" : "definition",
                d->flags);
        for (unsigned k = 0; k < d->nfields; k++) {
            const weft_field_desc *f = &d->fields[k];
            const char *sm = sel_name(f->sel_map);
            int count = -1;
            for (unsigned c = 0; f->is_array && c < d->nfields; c++)
                if (!d->fields[c].is_array &&
                    d->fields[c].offset == f->count_offset)
                    count = (int)c;
            fprintf(out, "%s{\"name\":\"%s\",\"ctype\":\"%s\",\"wire\":\"%s\","
                    "\"ref\":%s%s%s,\"self\":%s,\"array\":%s,\"key\":%s,\"weft\":%s,"
                    "\"sel\":%d,\"map\":%s%s%s,\"count\":%d}",
                    k ? "," : "", f->name, f->ctype, wire_name(f->wire),
                    f->ref ? "\"" : "", f->ref ? weft_ref_kind_name(f->ref)
                                               : "null", f->ref ? "\"" : "",
                    f->is_self ? "true" : "false",
                    f->is_array ? "true" : "false",
                    f->is_key ? "true" : "false",
                    f->is_weft ? "true" : "false", f->sel,
                    sm ? "\"" : "", sm ? sm : "null", sm ? "\"" : "", count);
        }
        fputs("]}", out);
    }
    fputs("}}}\n", out);
}

/* ---- sending ----------------------------------------------------------------- */

#define WEFT_SCALAR(ctype, name, W, sel) , x->name
#define WEFT_ARRAY(ctype, name, count, W, sel) , x->name
#define DEMO__DROP_(first, ...) __VA_ARGS__
#define DEMO__DROP(...) DEMO__DROP_(__VA_ARGS__)

/* Hands r to its weft_def_<Name> / weft_evt_<Name>; what that returns. */
int demo__send_record(weft_attribute_list *al, const weft_record *r)
{
    switch (r->type) {
#define WEFT_EVENT(id, Name, fields)                                         \
    case WEFT_REC_##Name: {                                                  \
        const weft_##Name *x = &r->u.Name;                                   \
        (void)x;                                                             \
        return weft_evt_##Name(al, r->time fields);                          \
    }
#define DEMO__DEF_CLIENT(Name, ...)                                          \
    case WEFT_REC_##Name: {                                                  \
        const weft_##Name *x = &r->u.Name;                                   \
        return weft_def_##Name(DEMO__DROP(~ __VA_ARGS__));                   \
    }
#define DEMO__DEF_LOCAL(Name, ...) DEMO__DEF_CLIENT(Name, __VA_ARGS__)
#define DEMO__DEF_DAEMON(Name, ...)
#define DEMO__DEF_WEFT(Name, ...)
#define WX(ctype, name, W) /* not in weft.h's API */
#define WEFT_DEF(id, Name, flags, fields) DEMO__DEF_##flags(Name, fields)
#include "weft_records.def"
    default:
        return WEFT_EINVAL;
    }
}

#undef WEFT_SCALAR
#undef WEFT_ARRAY
