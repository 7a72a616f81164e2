/* api.c - the record path of libweft: one weft_evt_<Name> and one
 * weft_def_<Name> function per record of the record table, and the
 * convenience events (weft_enter, weft_leave, weft_metric_*).
 *
 * Events are encoded in place into the calling thread's buffer (see the
 * DESIGN note in client_internal.h): varint type, varint time delta, then
 * the fields as codec.h describes, byte for byte what weft_encode would
 * write. Definitions are rare and go through the generic weft_encode.
 *
 * How the table is turned into code: each field macro becomes a tuple
 * (shape, ctype, name, wire, count, sel) with shape SC (scalar) or AR
 * (array),
 * and WEFT__FOREACH applies one operation to every tuple of a record: its
 * parameter list, its size bound, its checks, its encoding. A leading NO
 * tuple keeps the list non-empty.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "codec.h"
#include "record.h"
#include "varint.h"
#include "weft.h"
#include "weft_errors.h"

/* ---- a FOREACH over up to 20 tuples --------------------------------------- */
#define WEFT__CAT_(a, b) a##b
#define WEFT__CAT(a, b) WEFT__CAT_(a, b)
#define WEFT__NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,  \
                     _14, _15, _16, _17, _18, _19, _20, N, ...) N
#define WEFT__NARGS(...)                                                     \
    WEFT__NARGS_(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, \
                 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WEFT__APPLY(op, tuple) op tuple
#define WEFT__FE1(op, a) WEFT__APPLY(op, a)
#define WEFT__FE2(op, a, ...) WEFT__APPLY(op, a) WEFT__FE1(op, __VA_ARGS__)
#define WEFT__FE3(op, a, ...) WEFT__APPLY(op, a) WEFT__FE2(op, __VA_ARGS__)
#define WEFT__FE4(op, a, ...) WEFT__APPLY(op, a) WEFT__FE3(op, __VA_ARGS__)
#define WEFT__FE5(op, a, ...) WEFT__APPLY(op, a) WEFT__FE4(op, __VA_ARGS__)
#define WEFT__FE6(op, a, ...) WEFT__APPLY(op, a) WEFT__FE5(op, __VA_ARGS__)
#define WEFT__FE7(op, a, ...) WEFT__APPLY(op, a) WEFT__FE6(op, __VA_ARGS__)
#define WEFT__FE8(op, a, ...) WEFT__APPLY(op, a) WEFT__FE7(op, __VA_ARGS__)
#define WEFT__FE9(op, a, ...) WEFT__APPLY(op, a) WEFT__FE8(op, __VA_ARGS__)
#define WEFT__FE10(op, a, ...) WEFT__APPLY(op, a) WEFT__FE9(op, __VA_ARGS__)
#define WEFT__FE11(op, a, ...) WEFT__APPLY(op, a) WEFT__FE10(op, __VA_ARGS__)
#define WEFT__FE12(op, a, ...) WEFT__APPLY(op, a) WEFT__FE11(op, __VA_ARGS__)
#define WEFT__FE13(op, a, ...) WEFT__APPLY(op, a) WEFT__FE12(op, __VA_ARGS__)
#define WEFT__FE14(op, a, ...) WEFT__APPLY(op, a) WEFT__FE13(op, __VA_ARGS__)
#define WEFT__FE15(op, a, ...) WEFT__APPLY(op, a) WEFT__FE14(op, __VA_ARGS__)
#define WEFT__FE16(op, a, ...) WEFT__APPLY(op, a) WEFT__FE15(op, __VA_ARGS__)
#define WEFT__FE17(op, a, ...) WEFT__APPLY(op, a) WEFT__FE16(op, __VA_ARGS__)
#define WEFT__FE18(op, a, ...) WEFT__APPLY(op, a) WEFT__FE17(op, __VA_ARGS__)
#define WEFT__FE19(op, a, ...) WEFT__APPLY(op, a) WEFT__FE18(op, __VA_ARGS__)
#define WEFT__FE20(op, a, ...) WEFT__APPLY(op, a) WEFT__FE19(op, __VA_ARGS__)
#define WEFT__FOREACH(op, ...)                                               \
    WEFT__CAT(WEFT__FE, WEFT__NARGS(__VA_ARGS__))(op, __VA_ARGS__)
#define WEFT__TAIL_(first, ...) __VA_ARGS__
#define WEFT__TAIL(...) WEFT__TAIL_(__VA_ARGS__)

/* Fields as tuples (shape, ctype, name, wire, count, sel): references and
 * ids are unsigned varints, typed values (wire T) are encoded as the
 * OTF2_Type in `sel` says (the element of the type array for arrays). */
#define WEFT_SCALAR(ctype, name, W, sel) , (SC, ctype, name, W, ~, sel)
#define WEFT_ARRAY(ctype, name, count, W, sel)                               \
    , (AR, ctype, name, W, count, sel)
#define WEFT__NO_FIELD (NO, ~, ~, NO, ~, ~)

/* Parameter list, as declared in weft.h. */
#define WEFT__PARAM(shape, ctype, name, w, n, s) WEFT__PARAM_##shape(ctype, name)
#define WEFT__PARAM_NO(ctype, name)
#define WEFT__PARAM_SC(ctype, name) , ctype name
#define WEFT__PARAM_AR(ctype, name) , const ctype *name

/* Upper bound of the encoded size. */
#define WEFT__BOUND(shape, ctype, name, w, n, s)                             \
    WEFT__BOUND_##shape##_##w(name, n)
#define WEFT__BOUND_NO_NO(name, n)
#define WEFT__BOUND_SC_U(name, n) + WEFT_VARINT_MAX
#define WEFT__BOUND_SC_I(name, n) + WEFT_VARINT_MAX
#define WEFT__BOUND_SC_D(name, n) + 8
#define WEFT__BOUND_SC_X(name, n) + 8
#define WEFT__BOUND_SC_T(name, n) + WEFT_VARINT_MAX
#define WEFT__BOUND_SC_Z(name, n) + WEFT_VARINT_MAX + weft__strlen0(name)
#define WEFT__BOUND_AR_U(name, n) + (size_t)(n) * WEFT_VARINT_MAX
#define WEFT__BOUND_AR_I(name, n) + (size_t)(n) * WEFT_VARINT_MAX
#define WEFT__BOUND_AR_D(name, n) + (size_t)(n) * 8
#define WEFT__BOUND_AR_X(name, n) + (size_t)(n) * 8
#define WEFT__BOUND_AR_T(name, n) + (size_t)(n) * WEFT_VARINT_MAX

/* Checks before anything is written: arrays need their elements, raw
 * words and typed values are 8 bytes. */
#define WEFT__CHECK(shape, ctype, name, w, n, s)                             \
    WEFT__CHECK_##shape##_##w(ctype, name, n)
#define WEFT__CHECK_NO_NO(ctype, name, n)
#define WEFT__CHECK_SC_U(ctype, name, n)
#define WEFT__CHECK_SC_I(ctype, name, n)
#define WEFT__CHECK_SC_D(ctype, name, n)
#define WEFT__CHECK_SC_Z(ctype, name, n)
#define WEFT__CHECK_SC_X(ctype, name, n)                                     \
    _Static_assert(sizeof(ctype) == 8, #name ": X fields are 8 bytes");
#define WEFT__CHECK_SC_T(ctype, name, n) WEFT__CHECK_SC_X(ctype, name, n)
#define WEFT__CHECK_AR(ctype, name, n)                                       \
    if ((n) > 0 && !(name))                                                  \
        return WEFT_EINVAL;
#define WEFT__CHECK_AR_U(ctype, name, n) WEFT__CHECK_AR(ctype, name, n)
#define WEFT__CHECK_AR_I(ctype, name, n) WEFT__CHECK_AR(ctype, name, n)
#define WEFT__CHECK_AR_D(ctype, name, n) WEFT__CHECK_AR(ctype, name, n)
#define WEFT__CHECK_AR_X(ctype, name, n)                                     \
    WEFT__CHECK_AR(ctype, name, n)                                           \
    _Static_assert(sizeof(ctype) == 8, #name ": X fields are 8 bytes");
#define WEFT__CHECK_AR_T(ctype, name, n) WEFT__CHECK_AR_X(ctype, name, n)

/* Encoding, the same bytes as weft_encode: unsigned values are
 * zero-extended from their C type, as weft_field_get does. */
#define WEFT__MASK(size) ((size) >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * (size))) - 1)
#define WEFT__PUT1_U(p, ctype, v)                                            \
    weft__put_uvarint(p, (uint64_t)(v) & WEFT__MASK(sizeof(ctype)))
#define WEFT__PUT1_I(p, ctype, v) weft__put_svarint(p, (int64_t)(v))
#define WEFT__PUT1_D(p, ctype, v) weft__put_double(p, (double)(v))
#define WEFT__PUT1_X(p, ctype, v) weft__put_raw8(p, &(v))
#define WEFT__PUT1_Z(p, ctype, v) weft__put_string(p, v)
#define WEFT__PUT(shape, ctype, name, w, n, s)                               \
    WEFT__PUT_##shape(ctype, name, w, n, s)
#define WEFT__PUT_NO(ctype, name, w, n, s)
#define WEFT__PUT_SC(ctype, name, w, n, s) WEFT__PUTSC_##w(ctype, name, s)
#define WEFT__PUTSC_U(ctype, name, s) p_ = WEFT__PUT1_U(p_, ctype, name);
#define WEFT__PUTSC_I(ctype, name, s) p_ = WEFT__PUT1_I(p_, ctype, name);
#define WEFT__PUTSC_D(ctype, name, s) p_ = WEFT__PUT1_D(p_, ctype, name);
#define WEFT__PUTSC_X(ctype, name, s) p_ = WEFT__PUT1_X(p_, ctype, name);
#define WEFT__PUTSC_Z(ctype, name, s) p_ = WEFT__PUT1_Z(p_, ctype, name);
#define WEFT__PUTSC_T(ctype, name, s)                                        \
    p_ = weft__put_typed(p_, (s), weft__raw8(&(name)));
#define WEFT__PUT_AR(ctype, name, w, n, s) WEFT__PUTAR_##w(ctype, name, n, s)
#define WEFT__PUTAR_ANY(ctype, name, w, n)                                   \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++)                              \
        p_ = WEFT__PUT1_##w(p_, ctype, (name)[i_]);
#define WEFT__PUTAR_U(ctype, name, n, s) WEFT__PUTAR_ANY(ctype, name, U, n)
#define WEFT__PUTAR_I(ctype, name, n, s) WEFT__PUTAR_ANY(ctype, name, I, n)
#define WEFT__PUTAR_D(ctype, name, n, s) WEFT__PUTAR_ANY(ctype, name, D, n)
#define WEFT__PUTAR_X(ctype, name, n, s) WEFT__PUTAR_ANY(ctype, name, X, n)
#define WEFT__PUTAR_T(ctype, name, n, s)                                     \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++)                              \
        p_ = weft__put_typed(p_, (s)[i_], weft__raw8(&(name)[i_]));

/* Parameters a function does not need. */
#define WEFT__UNUSED(shape, ctype, name, w, n, s) WEFT__UNUSED_##shape(name)
#define WEFT__UNUSED_NO(name)
#define WEFT__UNUSED_SC(name) (void)(name);
#define WEFT__UNUSED_AR(name) (void)(name);

/* Filling a weft_record for the generic encoder. */
#define WEFT__FILL(shape, ctype, name, w, n, s) WEFT__FILL_##shape(name)
#define WEFT__FILL_NO(name)
#define WEFT__FILL_SC(name) d_->name = name;
#define WEFT__FILL_AR(name) d_->name = name;

static inline size_t weft__strlen0(const char *s)
{
    return s ? strlen(s) : 0;
}

static inline uint64_t weft__raw8(const void *v)
{
    uint64_t w;

    memcpy(&w, v, sizeof w);
    return w;
}

static inline uint8_t *weft__put_raw8(uint8_t *p, const void *v)
{
    return weft__put_u64le(p, weft__raw8(v));
}

static inline uint8_t *weft__put_string(uint8_t *p, const char *s)
{
    size_t n = weft__strlen0(s);

    p = weft__put_uvarint(p, n);
    if (n)
        memcpy(p, s, n);
    return p + n;
}

/* ---- attribute lists ------------------------------------------------------ */

/* A new empty list, or NULL. */
WEFT_API weft_attribute_list *weft_attribute_list_new(void)
{
    return calloc(1, sizeof(weft_attribute_list));
}

WEFT_API void weft_attribute_list_free(weft_attribute_list *list)
{
    if (!list)
        return;
    free(list->ids);
    free(list->types);
    free(list->values);
    free(list);
}

/* Appends (attribute, type, value); 0, WEFT_EEXIST, WEFT_EINVAL,
 * WEFT_ELIMIT or WEFT_ENOMEM. The value is kept in canonical form. */
WEFT_API int weft_attribute_list_add(weft_attribute_list *list,
                                     OTF2_AttributeRef attribute,
                                     OTF2_Type type, OTF2_AttributeValue value)
{
    if (!list || type == OTF2_TYPE_NONE || type > OTF2_TYPE_LOCATION_GROUP)
        return WEFT_EINVAL;
    for (uint32_t i = 0; i < list->n; i++)
        if (list->ids[i] == attribute)
            return WEFT_EEXIST;
    if (list->n == list->cap) {
        uint32_t cap = list->cap ? 2 * list->cap : 8;
        OTF2_AttributeRef *ids;
        OTF2_Type *types;
        OTF2_AttributeValue *values;
        if (cap > WEFT__MAX_ATTRIBUTES)
            return WEFT_ELIMIT;
        ids = realloc(list->ids, cap * sizeof *ids);
        if (ids)
            list->ids = ids;
        types = realloc(list->types, cap * sizeof *types);
        if (types)
            list->types = types;
        values = realloc(list->values, cap * sizeof *values);
        if (values)
            list->values = values;
        if (!ids || !types || !values)
            return WEFT_ENOMEM;
        list->cap = cap;
    }
    list->ids[list->n] = attribute;
    list->types[list->n] = type;
    memset(&list->values[list->n], 0, sizeof list->values[list->n]);
    {
        uint64_t v = weft_typed_canon(type, weft__raw8(&value));
        memcpy(&list->values[list->n], &v, sizeof v);
    }
    list->n++;
    return 0;
}

WEFT_API void weft_attribute_list_remove_all(weft_attribute_list *list)
{
    if (list)
        list->n = 0;
}

WEFT_API uint32_t weft_attribute_list_count(const weft_attribute_list *list)
{
    return list ? list->n : 0;
}

/* The pseudo-record (the attribute list, codec.h) as the table has it:
 * bound_<Name> and put_<Name> take its fields as parameters. */
#define WEFT__PSEUDO(id, Name, ...)                                          \
    static inline size_t bound_##Name(                                       \
        WEFT__TAIL(~ WEFT__FOREACH(WEFT__PARAM, __VA_ARGS__)))               \
    {                                                                        \
        WEFT__FOREACH(WEFT__UNUSED, __VA_ARGS__)                             \
        return WEFT_VARINT_MAX WEFT__FOREACH(WEFT__BOUND, __VA_ARGS__);      \
    }                                                                        \
                                                                             \
    static inline uint8_t *put_##Name(                                       \
        uint8_t *p_ WEFT__FOREACH(WEFT__PARAM, __VA_ARGS__))                 \
    {                                                                        \
        p_ = weft__put_uvarint(p_, WEFT_REC_##Name);                         \
        WEFT__FOREACH(WEFT__PUT, __VA_ARGS__)                                \
        return p_;                                                           \
    }
#define WEFT_PSEUDO(id, Name, fields)                                        \
    WEFT__PSEUDO(id, Name, WEFT__NO_FIELD fields)
#include "weft_records.def"

static inline size_t attr_bound(const weft_attribute_list *a)
{
    return a && a->n ? bound_AttributeList(a->n, a->ids, a->types, a->values)
                     : 0;
}

static uint8_t *put_attributes(uint8_t *p, const weft_attribute_list *a)
{
    return put_AttributeList(p, a->n, a->ids, a->types, a->values);
}

/* ---- events --------------------------------------------------------------- */

/* evt_<Name>: the record path. Finds room for `bound_` bytes (the fast
 * check inline, everything else in weft__record_slow), then encodes in
 * place, the attribute list first. Returns 0 (and empties `attributes`,
 * as libotf2 does), or what weft__record_slow says. */
#define WEFT__EVT(id, Name, ...)                                             \
    static inline int evt_##Name(weft_attribute_list *attributes,            \
                                 OTF2_TimeStamp time                         \
                                 WEFT__FOREACH(WEFT__PARAM, __VA_ARGS__))    \
    {                                                                        \
        const size_t bound_ = 2 * WEFT_VARINT_MAX + attr_bound(attributes)   \
                              WEFT__FOREACH(WEFT__BOUND, __VA_ARGS__);       \
        weft__thread *t_ = weft__tls;                                        \
        uint8_t *p_;                                                         \
                                                                             \
        WEFT__FOREACH(WEFT__CHECK, __VA_ARGS__)                              \
        if (WEFT__UNLIKELY(!t_ || (size_t)(t_->end - t_->p) < bound_ ||      \
                           atomic_load_explicit(&t_->attention,              \
                                                memory_order_relaxed))) {    \
            int rc_ = weft__record_slow(bound_, time);                       \
            if (rc_ <= 0) {                                                  \
                if (rc_ == 0 && attributes)                                  \
                    attributes->n = 0;                                       \
                return rc_;                                                  \
            }                                                                \
            t_ = weft__tls;                                                  \
        }                                                                    \
        if (WEFT__UNLIKELY(time < t_->prev_time))                            \
            return WEFT_ETIME;                                               \
        p_ = t_->p;                                                          \
        if (WEFT__UNLIKELY(attributes && attributes->n)) {                   \
            p_ = put_attributes(p_, attributes);                             \
            attributes->n = 0;                                               \
        }                                                                    \
        p_ = weft__put_uvarint(p_, WEFT_REC_##Name);                         \
        p_ = weft__put_uvarint(p_, time - t_->prev_time);                    \
        WEFT__FOREACH(WEFT__PUT, __VA_ARGS__)                                \
        t_->p = p_;                                                          \
        t_->prev_time = time;                                                \
        t_->nevents++;                                                       \
        return 0;                                                            \
    }                                                                        \
                                                                             \
    WEFT_API int weft_evt_##Name(weft_attribute_list *attributes,            \
                                 OTF2_TimeStamp time                         \
                                 WEFT__FOREACH(WEFT__PARAM, __VA_ARGS__))    \
    {                                                                        \
        return evt_##Name(attributes, time WEFT__FOREACH(WEFT__ARG,          \
                                                         __VA_ARGS__));      \
    }
#define WEFT__ARG(shape, ctype, name, w, n, s) WEFT__ARG_##shape(name)
#define WEFT__ARG_NO(name)
#define WEFT__ARG_SC(name) , name
#define WEFT__ARG_AR(name) , name

#define WEFT_EVENT(id, Name, fields) WEFT__EVT(id, Name, WEFT__NO_FIELD fields)
#include "weft_records.def"

/* ---- definitions ---------------------------------------------------------- */

/* weft_def_<Name>: fills a weft_record and hands it to the definitions
 * buffer. Returns 0 or what weft__def_append says; WEFT_EINVAL for an
 * array without elements. The caller keeps its strings and arrays. */
#define WEFT__DEFGEN_DAEMON(id, Name, ...)
#define WEFT__DEFGEN_WEFT(id, Name, ...)
#define WEFT__DEFGEN_LOCAL(id, Name, ...) WEFT__DEFGEN_CLIENT(id, Name, __VA_ARGS__)
#define WEFT__DEFGEN_CLIENT(id, Name, ...)                                   \
    WEFT_API int weft_def_##Name(                                            \
        WEFT__TAIL(~ WEFT__FOREACH(WEFT__PARAM, __VA_ARGS__)))               \
    {                                                                        \
        weft_record r_;                                                      \
        weft_##Name *d_ = &r_.u.Name;                                        \
                                                                             \
        WEFT__FOREACH(WEFT__CHECK, __VA_ARGS__)                              \
        memset(&r_, 0, sizeof r_);                                           \
        r_.type = WEFT_REC_##Name;                                           \
        WEFT__FOREACH(WEFT__FILL, __VA_ARGS__)                               \
        return weft__def_append(&r_);                                        \
    }
#define WX(ctype, name, W) /* weft's own fields stay 0 here */
#define WEFT_DEF(id, Name, flags, fields)                                    \
    WEFT__DEFGEN_##flags(id, Name, WEFT__NO_FIELD fields)
#include "weft_records.def"

#undef WEFT_SCALAR
#undef WEFT_ARRAY

/* ---- convenience events --------------------------------------------------- */

/* Enter/Leave on the calling thread, timestamped now. Return 0 (also when
 * tracing is off: the record is counted as dropped) or a WEFT_E* code. */
WEFT_API int weft_enter(OTF2_RegionRef region)
{
    return evt_Enter(NULL, weft__now(), region);
}

WEFT_API int weft_leave(OTF2_RegionRef region)
{
    return evt_Leave(NULL, weft__now(), region);
}

/* One-member metric value; `type` must match what weft_metric declared
 * when the metric came from there. */
static int metric_one(OTF2_MetricRef metric, OTF2_Type type,
                      OTF2_MetricValue value)
{
    OTF2_Type declared = weft__metric_type(metric);

    if (declared != OTF2_TYPE_NONE && declared != type)
        return WEFT_EINVAL;
    return evt_Metric(NULL, weft__now(), metric, 1, &type, &value);
}

/* One value of a weft_metric metric, timestamped now. 0, WEFT_EINVAL when
 * the type differs from the metric's, or what the record path says. */
WEFT_API int weft_metric_u64(OTF2_MetricRef metric, uint64_t value)
{
    OTF2_MetricValue v = { .unsigned_int = value };

    return metric_one(metric, OTF2_TYPE_UINT64, v);
}

WEFT_API int weft_metric_i64(OTF2_MetricRef metric, int64_t value)
{
    OTF2_MetricValue v = { .signed_int = value };

    return metric_one(metric, OTF2_TYPE_INT64, v);
}

WEFT_API int weft_metric_double(OTF2_MetricRef metric, double value)
{
    OTF2_MetricValue v = { .floating_point = value };

    return metric_one(metric, OTF2_TYPE_DOUBLE, v);
}

/* The trace clock: CLOCK_MONOTONIC in ns, or TSC ticks with
 * WEFT_CLOCK=tsc (timer.c). */
WEFT_API uint64_t weft_time(void)
{
    return weft__now();
}
