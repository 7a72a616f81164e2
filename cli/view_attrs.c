/* view_attrs.c - the attributes of the Enter events of a trace (an
 * OTF2 attribute list: what a program attached through weft_evt_Enter's
 * list, or an imported archive's), for a visit's details in weft view
 * (api/span's "attributes").
 *
 * DESIGN
 * Few events carry attributes, so they are kept aside, not per visit:
 * as a location's Enters are read, each one with a list becomes a record
 * (its time, its depth, where its text is) and its attributes a JSON
 * text, [[name, type, value], ...] in the list's order, in one pool of
 * text per trace; a location's records are one range, in time order. A
 * visit's details find its Enter's record by a binary search on the
 * time (then the depth, among Enters at the same tick). A value is the
 * number (a 64-bit unsigned one above 2^63 - 1, and a float that is no
 * number, as text), the string, or for a reference the name of what it
 * references and its id ("name <id>"); null where it is undefined. A
 * list whose text would pass WEFT__VIEW_ATTRS_MAX bytes says so instead.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_index.h"

/* OTF2_Type's names, as otf2-print writes them. */
static const char *const type_names[] = {
    "NONE", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32",
    "INT64", "FLOAT", "DOUBLE", "STRING", "ATTRIBUTE", "LOCATION", "REGION",
    "GROUP", "METRIC", "COMM", "PARAMETER", "RMA_WIN",
    "SOURCE_CODE_LOCATION", "CALLING_CONTEXT", "INTERRUPT_GENERATOR",
    "IO_FILE", "IO_HANDLE", "LOCATION_GROUP",
};

/* The id space a reference type names (WEFT_REF_NONE: not one). */
static unsigned ref_kind(OTF2_Type type)
{
    switch (type) {
    case OTF2_TYPE_ATTRIBUTE: return WEFT_REF_ATTRIBUTE;
    case OTF2_TYPE_LOCATION: return WEFT_REF_LOCATION;
    case OTF2_TYPE_REGION: return WEFT_REF_REGION;
    case OTF2_TYPE_GROUP: return WEFT_REF_GROUP;
    case OTF2_TYPE_METRIC: return WEFT_REF_METRIC;
    case OTF2_TYPE_COMM: return WEFT_REF_COMM;
    case OTF2_TYPE_PARAMETER: return WEFT_REF_PARAMETER;
    case OTF2_TYPE_RMA_WIN: return WEFT_REF_RMA_WIN;
    case OTF2_TYPE_SOURCE_CODE_LOCATION: return WEFT_REF_SOURCE_CODE_LOCATION;
    case OTF2_TYPE_CALLING_CONTEXT: return WEFT_REF_CALLING_CONTEXT;
    case OTF2_TYPE_INTERRUPT_GENERATOR: return WEFT_REF_INTERRUPT_GENERATOR;
    case OTF2_TYPE_IO_FILE: return WEFT_REF_IO_FILE;
    case OTF2_TYPE_IO_HANDLE: return WEFT_REF_IO_HANDLE;
    case OTF2_TYPE_LOCATION_GROUP: return WEFT_REF_LOCATION_GROUP;
    default: return WEFT_REF_NONE;
    }
}

/* A JSON string of s, or of a note where s is no UTF-8. */
static json_t *text(const char *s)
{
    json_t *j = json_string(s);

    return j ? j : json_string("(not UTF-8)");
}

static json_t *real(double d)
{
    return isfinite(d) ? json_real(d)
                       : json_string(isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
}

/* A reference's value: "name <id>", null where undefined. */
static json_t *ref_value(const weft__arc *a, unsigned kind, uint64_t id,
                         int undefined)
{
    char *s;
    json_t *j;

    if (undefined)
        return json_null();
    if (asprintf(&s, "%s <%" PRIu64 ">", weft__arc_name(a, kind, id), id) < 0)
        return NULL;
    j = text(s);
    free(s);
    return j;
}

/* Attribute value v of type t as api/span says it. */
static json_t *value(const weft__arc *a, OTF2_Type t, OTF2_AttributeValue v)
{
    unsigned kind = ref_kind(t);

    switch (t) {
    case OTF2_TYPE_UINT8: return json_integer(v.uint8);
    case OTF2_TYPE_UINT16: return json_integer(v.uint16);
    case OTF2_TYPE_UINT32: return json_integer(v.uint32);
    case OTF2_TYPE_UINT64:
        if (v.uint64 > INT64_MAX) {
            char b[24];
            snprintf(b, sizeof b, "%" PRIu64, v.uint64);
            return json_string(b);
        }
        return json_integer((json_int_t)v.uint64);
    case OTF2_TYPE_INT8: return json_integer(v.int8);
    case OTF2_TYPE_INT16: return json_integer(v.int16);
    case OTF2_TYPE_INT32: return json_integer(v.int32);
    case OTF2_TYPE_INT64: return json_integer(v.int64);
    case OTF2_TYPE_FLOAT: return real(v.float32);
    case OTF2_TYPE_DOUBLE: return real(v.float64);
    case OTF2_TYPE_STRING:
        return v.stringRef == OTF2_UNDEFINED_STRING
                   ? json_null() : text(weft__arc_string(a, v.stringRef));
    case OTF2_TYPE_LOCATION:
        return ref_value(a, kind, v.locationRef,
                         v.locationRef == OTF2_UNDEFINED_LOCATION);
    default:
        /* every other reference is 32 bits wide */
        return kind != WEFT_REF_NONE
                   ? ref_value(a, kind, v.uint32, v.uint32 == UINT32_MAX)
                   : json_null();
    }
}

/* The JSON text of list al (malloc'd), or NULL out of memory. */
static char *attrs_text(const weft__arc *a, OTF2_AttributeList *al)
{
    uint32_t n = OTF2_AttributeList_GetNumberOfElements(al);
    json_t *arr = json_array();
    char *s;

    for (uint32_t k = 0; arr && k < n; k++) {
        OTF2_AttributeRef id;
        OTF2_Type t;
        OTF2_AttributeValue v;
        json_t *e;
        if (OTF2_AttributeList_GetAttributeByIndex(al, k, &id, &t, &v) !=
            OTF2_SUCCESS)
            continue;
        e = json_pack("[oso]", text(weft__arc_name(a, WEFT_REF_ATTRIBUTE, id)),
                      t < sizeof type_names / sizeof *type_names
                          ? type_names[t] : "?",
                      value(a, t, v));
        if (!e || json_array_append_new(arr, e) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    if (!arr)
        return NULL;
    s = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    if (s && strlen(s) > WEFT__VIEW_ATTRS_MAX) {
        free(s);
        s = strdup("[[\"(attributes)\", \"\", \"too long to show\"]]");
    }
    return s;
}

int weft__view_attrs_enter(weft__vloader *ld, OTF2_AttributeList *al,
                           uint64_t t, unsigned depth)
{
    char *s;
    int rc;

    if (!al || !ld->arc || OTF2_AttributeList_GetNumberOfElements(al) == 0)
        return 0;
    if (!(s = attrs_text(ld->arc, al)))
        return -1;
    rc = weft__view_attrs(ld->v, ld->i, t, depth, s);
    free(s);
    return rc;
}

int weft__view_attrs(weft__view *v, size_t i, uint64_t t, unsigned depth,
                     const char *json)
{
    weft__vloc *l = &v->locs[i];
    size_t len = strlen(json);

    if (l->nattr && (l->attr0 + l->nattr != v->nattrs ||
                     v->attrs[v->nattrs - 1].t > t))
        return 0;   /* (a location's are read at once, in order) */
    if (weft__view_grow(&v->attrs, &v->capattrs, v->nattrs + 1,
                        sizeof *v->attrs, 64) < 0 ||
        weft__view_grow(&v->apool, &v->capapool, v->napool + len, 1,
                        4096) < 0)
        return -1;
    if (!l->nattr)
        l->attr0 = v->nattrs;
    memcpy(v->apool + v->napool, json, len);
    v->attrs[v->nattrs++] = (weft__vattr){ .t = t, .depth = depth,
                                           .len = (uint32_t)len,
                                           .off = v->napool };
    v->napool += len;
    l->nattr++;
    return 0;
}

json_t *weft__view_attrs_of(const weft__view *v, size_t i, unsigned depth,
                            uint64_t t)
{
    const weft__vloc *l = &v->locs[i];
    const weft__vattr *a;
    size_t lo = 0, hi = l->nattr;

    if (!l->nattr || l->attr0 + l->nattr > v->nattrs)
        return NULL;
    a = v->attrs + l->attr0;
    while (lo < hi) {   /* the first at t or later */
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].t >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (; lo < l->nattr && a[lo].t == t; lo++)
        if (a[lo].depth == depth && a[lo].off <= v->napool &&
            a[lo].len <= v->napool - a[lo].off)
            return json_loadb(v->apool + a[lo].off, a[lo].len, 0, NULL);
    return NULL;
}
