/* test_validate.c - the checks of what a member sends (daemon/ingest/validate.c:
 * weft_validate_defs, weft_validate_events, weft_validate_tags), pure
 * functions over a weft_member built by hand (no loop, no socket).
 *
 * Generic over the record table: for every definition and event a record
 * is built from the descriptors that passes (every reference names
 * something defined, every enum value is valid, every count matches);
 * then, one at a time, each enum value is put out of its enum, each
 * reference (plain, typed, selected, in arrays) is pointed at nothing,
 * and the record must be refused with a message naming record, field
 * and value (and no limit). Targeted cases: typed values without a type,
 * counts that differ from the referenced definition's, attribute types
 * that differ from the attribute's declaration, what weftd derives,
 * duplicate ids, the conventions for derived references, and attribute
 * lists.
 *
 * Case by case: valid definitions then events pass; every refusal names
 * the record, field, kind and value: undefined references (scalars and
 * arrays), redefinitions, daemon-only records, ids beyond
 * max_definitions and strings beyond max_string (each reported as that
 * limit), Metric value counts that differ from the class, a batch that
 * starts before the thread's last time, an announced count that differs
 * from the records, records of the wrong stream, truncated and unknown
 * records. OTF2's undefined references are accepted, and a refused
 * payload defines nothing. A Hello's tags: each rule, and a value beyond
 * max_string reported as that limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "daemon.h"
#include "record.h"
#include "testutil.h"
#include "trace.h"
#include "validate.h"
#include "weft_errors.h"

#define TRACE_SIZE 3
#define MEMBER_RANK 1
#define ERR_MAX 512

/* ---- a member of a trace, without a daemon around it ------------------- */

typedef struct fixture {
    weft_daemon d;
    weft_trace t;
    weft_member m;
    weft_loc_state loc;
} fixture;

static void member_init(fixture *x)
{
    memset(x, 0, sizeof *x);
    weft_config_init(&x->d.cfg);
    x->t.d = &x->d;
    x->t.size = TRACE_SIZE;
    x->m.trace = &x->t;
    x->m.rank = MEMBER_RANK;
    x->m.locs = &x->loc;
    x->m.nlocs = 1;
}

static void member_free(fixture *x)
{
    for (unsigned k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&x->m.in.defined[k]);
    weft_config_free(&x->d.cfg);
}

/* Id 0 of k is declared with 1 element and type `type`. */
static void set_decl(fixture *x, unsigned k, uint8_t type)
{
    weft_decl dl = { 1, type };

    assert_int_equal(weft_idset_put(&x->m.in.defined[k], 0,
                                    weft_decl_pack(dl)), 0);
}

/* Every id space has id 0 defined; counted and typed ones say 1 element
 * and OTF2_TYPE_UINT8, which is what valid_record builds. */
static void define_zeros(fixture *x)
{
    for (unsigned k = WEFT_REF_NONE + 1; k < WEFT_REF__COUNT; k++) {
        assert_int_equal(weft_idset_add(&x->m.in.defined[k], 0, 1000), 0);
        if (weft_ref_kind_has_decl(k))
            set_decl(x, k, OTF2_TYPE_UINT8);
    }
}

/* Encodes r alone and runs it through the member's checks. */
static int check(fixture *x, const weft_record *r, char *err)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);
    enum weft_limit limit = WEFT_LIMIT__COUNT;
    uint8_t *buf;
    uint64_t prev = 0, last = 0;
    ssize_t n;
    int rc;

    assert_non_null(d);
    buf = malloc(weft_encode_bound(r));
    assert_non_null(buf);
    n = weft_encode(r, &prev, buf, weft_encode_bound(r));
    if (n < 0)
        fail_msg("%s: encode: %s", d->name, weft_strerror((int)n));
    err[0] = 0;
    if (d->is_event)
        rc = weft_validate_events(&x->m, 0, 0, 1, buf, (size_t)n, &last,
                                  &limit, err, ERR_MAX);
    else
        rc = weft_validate_defs(&x->m, buf, (size_t)n, &limit, err, ERR_MAX);
    free(buf);
    /* None of these records is near a limit. */
    assert_int_equal(limit, WEFT_LIMIT_NONE);
    return rc;
}

/* ---- valid records, from the descriptors ------------------------------- */

typedef struct built {
    weft_record r;
    uint64_t elems[16]; /* one element per array field */
} built;

static int is_type_selector(const weft_rec_desc *d, unsigned i)
{
    for (unsigned k = 0; k < d->nfields; k++)
        if (d->fields[k].sel_map == WEFT_SEL_TYPE && d->fields[k].sel == (int)i)
            return 1;
    for (unsigned k = 0; k < d->nfields; k++)
        if (d->fields[k].decl_ref >= 0 && k == i)
            return 1;
    return 0;
}

static int is_count(const weft_rec_desc *d, const weft_field_desc *f)
{
    for (unsigned i = 0; i < d->nfields; i++)
        if (d->fields[i].is_array && d->fields[i].count_offset == f->offset)
            return 1;
    return 0;
}

/* The smallest valid value of enum `id`. */
static uint64_t first_valid(int id)
{
    for (uint64_t v = 0; v < 64; v++)
        if (weft_enum_valid(id, v))
            return v;
    fail_msg("enum %s has no value below 64", weft_enum_name(id));
    return 0;
}

/* A value outside enum `id`. */
static uint64_t invalid_value(int id)
{
    if (weft_enum_is_flags(id))
        return (uint64_t)1 << 30;
    for (uint64_t v = 0; v < 256; v++)
        if (!weft_enum_valid(id, v))
            return v;
    fail_msg("enum %s takes every byte", weft_enum_name(id));
    return 0;
}

/* A record of d that the checks accept in a member made by define_zeros:
 * references 0, a new own id 1, enums at their first value, types
 * UINT8, one element per array, strings empty. */
static void valid_record(built *b, const weft_rec_desc *d)
{
    unsigned na = 0;

    memset(b, 0, sizeof *b);
    b->r.type = d->type;
    b->r.time = 10;
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = "";
            memcpy(weft_field_ptr(&b->r, f), &s, sizeof s);
        } else if (f->is_array) {
            const void *p = &b->elems[na++];
            memcpy(weft_field_ptr(&b->r, f), &p, sizeof p);
            weft_field_set_elem(&b->r, f, 0,
                                is_type_selector(d, i) ? OTF2_TYPE_UINT8
                                : f->enum_id >= 0 ? first_valid(f->enum_id)
                                                  : 0);
        } else if (is_count(d, f)) {
            weft_field_set(&b->r, f, 1);
        } else if (f->is_self) {
            weft_field_set(&b->r, f, 1);
        } else if (is_type_selector(d, i)) {
            weft_field_set(&b->r, f, OTF2_TYPE_UINT8);
        } else if (f->enum_id >= 0) {
            weft_field_set(&b->r, f, first_valid(f->enum_id));
        }
    }
}

/* A reference of `kind` that names nothing the member may refer to. */
static uint64_t dangling(unsigned kind)
{
    switch (kind) {
    case WEFT_REF_LOCATION: return (uint64_t)TRACE_SIZE << 32;
    case WEFT_REF_LOCATION_GROUP: return TRACE_SIZE;
    case WEFT_REF_SYSTEM_TREE_NODE: return 2;
    default: return 7;
    }
}

static int client_record(const weft_rec_desc *d)
{
    return !d->is_pseudo && !(d->flags & WEFT_DF_DAEMON);
}

/* ---- generic over the table ---------------------------------------------- */

static void test_valid_records_pass(void **state)
{
    size_t n, tested = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char err[ERR_MAX];

    (void)state;
    for (size_t i = 0; i < n; i++) {
        fixture x;
        built b;
        if (!client_record(all[i]))
            continue;
        member_init(&x);
        define_zeros(&x);
        valid_record(&b, all[i]);
        if (check(&x, &b.r, err) != 0)
            fail_msg("%s: a valid record is refused: %s", all[i]->name, err);
        tested++;
        member_free(&x);
    }
    assert_true(tested > 100);
}

static void test_every_enum_field_checked(void **state)
{
    size_t n, tested = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char err[ERR_MAX], want[64];

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        if (!client_record(d))
            continue;
        for (unsigned k = 0; k < d->nfields; k++) {
            const weft_field_desc *f = &d->fields[k];
            fixture x;
            built b;
            uint64_t bad;
            if (f->enum_id < 0)
                continue;
            member_init(&x);
            define_zeros(&x);
            valid_record(&b, d);
            bad = invalid_value(f->enum_id);
            if (f->is_array)
                weft_field_set_elem(&b.r, f, 0, bad);
            else
                weft_field_set(&b.r, f, bad);
            if (check(&x, &b.r, err) != WEFT_EPROTO)
                fail_msg("%s.%s = %" PRIu64 " (not a %s) is accepted: %s",
                         d->name, f->name, bad, weft_enum_name(f->enum_id),
                         err);
            snprintf(want, sizeof want, "%s.%s", d->name, f->name);
            if (!strstr(err, want) || !strstr(err, weft_enum_name(f->enum_id)))
                fail_msg("message does not name %s and %s: %s", want,
                         weft_enum_name(f->enum_id), err);
            snprintf(want, sizeof want, weft_enum_is_flags(f->enum_id)
                     ? "%#" PRIx64 : "%" PRIu64, bad);
            if (!strstr(err, want))
                fail_msg("message does not name the value %s: %s", want, err);
            tested++;
            member_free(&x);
        }
    }
    assert_true(tested > 50);
}

static void test_every_reference_checked(void **state)
{
    size_t n, tested = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char err[ERR_MAX], want[64];

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        if (!client_record(d))
            continue;
        for (unsigned k = 0; k < d->nfields; k++) {
            const weft_field_desc *f = &d->fields[k];
            fixture x;
            built b;
            unsigned kind;
            if (f->is_self || f->wire == WEFT_WIRE_Z)
                continue;
            member_init(&x);
            define_zeros(&x);
            valid_record(&b, d);
            /* Typed values become strings, selected references regions
             * (groups) or locations (metric scopes) to have a kind. */
            if (f->sel_map == WEFT_SEL_TYPE) {
                const weft_field_desc *sf = &d->fields[f->sel];
                if (sf->is_array)
                    weft_field_set_elem(&b.r, sf, 0, OTF2_TYPE_STRING);
                else
                    weft_field_set(&b.r, sf, OTF2_TYPE_STRING);
                if (sf->decl_ref >= 0)
                    set_decl(&x, d->fields[sf->decl_ref].ref,
                             OTF2_TYPE_STRING);
            } else if (f->sel_map == WEFT_SEL_GROUP_TYPE) {
                weft_field_set(&b.r, &d->fields[f->sel],
                               OTF2_GROUP_TYPE_REGIONS);
            }
            kind = weft_field_kind(&b.r, d, f, 0);
            if (kind == WEFT_REF_NONE) {
                member_free(&x);
                continue;
            }
            /* Still valid with the reference at 0. */
            if (check(&x, &b.r, err) != 0)
                fail_msg("%s.%s: refused at 0: %s", d->name, f->name, err);
            member_free(&x);
            member_init(&x);
            define_zeros(&x);
            if (f->sel_map == WEFT_SEL_TYPE &&
                d->fields[f->sel].decl_ref >= 0)
                set_decl(&x, d->fields[d->fields[f->sel].decl_ref].ref,
                         OTF2_TYPE_STRING);
            if (f->is_array)
                weft_field_set_elem(&b.r, f, 0, dangling(kind));
            else
                weft_field_set(&b.r, f, dangling(kind));
            if (check(&x, &b.r, err) != WEFT_EREF)
                fail_msg("%s.%s = %" PRIu64 " (%s) is accepted: %s", d->name,
                         f->name, dangling(kind), weft_ref_kind_name(kind),
                         err);
            snprintf(want, sizeof want, "%s.%s", d->name, f->name);
            if (!strstr(err, want))
                fail_msg("message does not name %s: %s", want, err);
            snprintf(want, sizeof want, "%" PRIu64, dangling(kind));
            if (!strstr(err, want))
                fail_msg("message does not name the value %s: %s", want, err);
            tested++;
            member_free(&x);
        }
    }
    assert_true(tested > 100);
}

/* ---- targeted cases -------------------------------------------------------- */

static const weft_rec_desc *desc(uint32_t type)
{
    const weft_rec_desc *d = weft_rec_desc_of(type);

    assert_non_null(d);
    return d;
}

static void test_typed_value_needs_a_type(void **state)
{
    fixture x;
    built b;
    char err[ERR_MAX];

    (void)state;
    member_init(&x);
    define_zeros(&x);
    valid_record(&b, desc(WEFT_REC_ParadigmProperty));
    b.r.u.ParadigmProperty.type = OTF2_TYPE_NONE;
    assert_int_equal(check(&x, &b.r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "ParadigmProperty.value"));
    assert_non_null(strstr(err, "OTF2_TYPE_NONE"));
    /* An unknown type is an enum error of the type field. */
    b.r.u.ParadigmProperty.type = OTF2_TYPE_LOCATION_GROUP + 1;
    assert_int_equal(check(&x, &b.r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "ParadigmProperty.type"));
    member_free(&x);
}

static void test_counts_must_match(void **state)
{
    fixture x;
    built b;
    char err[ERR_MAX];
    OTF2_Type types[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_MetricValue values[2] = { { .unsigned_int = 1 },
                                   { .unsigned_int = 2 } };
    uint32_t coords[2] = { 0, 0 };

    (void)state;
    member_init(&x);
    define_zeros(&x); /* METRIC 0 and CART_TOPOLOGY 0 have 1 element */
    memset(&b, 0, sizeof b);
    b.r.type = WEFT_REC_Metric;
    b.r.u.Metric.metric = 0;
    b.r.u.Metric.numberOfMetrics = 2;
    b.r.u.Metric.typeIDs = types;
    b.r.u.Metric.metricValues = values;
    assert_int_equal(check(&x, &b.r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "Metric.numberOfMetrics: 2"));
    assert_non_null(strstr(err, "METRIC 0"));
    b.r.u.Metric.numberOfMetrics = 1;
    assert_int_equal(check(&x, &b.r, err), 0);

    valid_record(&b, desc(WEFT_REC_CartCoordinate));
    b.r.u.CartCoordinate.numberOfDimensions = 2;
    b.r.u.CartCoordinate.coordinates = coords;
    assert_int_equal(check(&x, &b.r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "CartCoordinate.numberOfDimensions"));
    member_free(&x);
}

/* Counts come from the definitions the member sent, a MetricInstance
 * taking its class's. */
static void test_counts_from_definitions(void **state)
{
    fixture x;
    built b;
    char err[ERR_MAX];
    OTF2_MetricMemberRef mm[2] = { 0, 0 };
    OTF2_Type types[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_DOUBLE };
    OTF2_MetricValue values[2] = { { .unsigned_int = 1 },
                                   { .floating_point = 0.5 } };

    (void)state;
    member_init(&x);
    define_zeros(&x);
    valid_record(&b, desc(WEFT_REC_MetricClass));
    b.r.u.MetricClass.self = 3;
    b.r.u.MetricClass.numberOfMetrics = 2;
    b.r.u.MetricClass.metricMembers = mm;
    assert_int_equal(check(&x, &b.r, err), 0);
    valid_record(&b, desc(WEFT_REC_MetricInstance));
    b.r.u.MetricInstance.self = 4;
    b.r.u.MetricInstance.metricClass = 3;
    assert_int_equal(check(&x, &b.r, err), 0);
    memset(&b, 0, sizeof b);
    b.r.type = WEFT_REC_Metric;
    b.r.u.Metric.metric = 4;
    b.r.u.Metric.numberOfMetrics = 2;
    b.r.u.Metric.typeIDs = types;
    b.r.u.Metric.metricValues = values;
    assert_int_equal(check(&x, &b.r, err), 0);
    b.r.u.Metric.numberOfMetrics = 1;
    assert_int_equal(check(&x, &b.r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "METRIC 4"));
    member_free(&x);
}

static weft_record with_attributes(weft_record ev, weft_record *al,
                                   uint32_t n, const OTF2_AttributeRef *ids,
                                   const OTF2_Type *types,
                                   const OTF2_AttributeValue *values)
{
    memset(al, 0, sizeof *al);
    al->type = WEFT_REC_AttributeList;
    al->u.AttributeList.numberOfAttributes = n;
    al->u.AttributeList.attributes = ids;
    al->u.AttributeList.types = types;
    al->u.AttributeList.values = values;
    ev.attributes = al;
    return ev;
}

static void test_attribute_lists(void **state)
{
    fixture x;
    built b, ev;
    weft_record al, r;
    char err[ERR_MAX];
    OTF2_AttributeRef ids[2] = { 2, 3 };
    OTF2_Type types[2] = { OTF2_TYPE_STRING, OTF2_TYPE_LOCATION };
    OTF2_AttributeValue values[2];

    (void)state;
    member_init(&x);
    define_zeros(&x);
    valid_record(&b, desc(WEFT_REC_Attribute));
    b.r.u.Attribute.self = 2;
    b.r.u.Attribute.type = OTF2_TYPE_STRING;
    assert_int_equal(check(&x, &b.r, err), 0);
    b.r.u.Attribute.self = 3;
    b.r.u.Attribute.type = OTF2_TYPE_LOCATION;
    assert_int_equal(check(&x, &b.r, err), 0);
    valid_record(&ev, desc(WEFT_REC_Enter));

    memset(values, 0, sizeof values);
    values[0].stringRef = 0;
    values[1].locationRef = (uint64_t)2 << 32 | 5; /* rank 2, thread 5 */
    r = with_attributes(ev.r, &al, 2, ids, types, values);
    assert_int_equal(check(&x, &r, err), 0);

    /* A string that is not defined. */
    values[0].stringRef = 9;
    assert_int_equal(check(&x, &r, err), WEFT_EREF);
    assert_non_null(strstr(err, "AttributeList.values[0]"));
    assert_non_null(strstr(err, "STRING 9"));
    values[0].stringRef = OTF2_UNDEFINED_STRING;
    assert_int_equal(check(&x, &r, err), 0);

    /* A location of a rank beyond the trace. */
    values[1].locationRef = (uint64_t)TRACE_SIZE << 32;
    assert_int_equal(check(&x, &r, err), WEFT_EREF);
    assert_non_null(strstr(err, "AttributeList.values[1]"));
    values[1].locationRef = 0;

    /* An attribute that is not defined. */
    ids[1] = 4;
    assert_int_equal(check(&x, &r, err), WEFT_EREF);
    assert_non_null(strstr(err, "AttributeList.attributes[1]"));
    ids[1] = 3;

    /* A type other than the attribute's. */
    types[1] = OTF2_TYPE_UINT64;
    assert_int_equal(check(&x, &r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "AttributeList.types[1]"));
    assert_non_null(strstr(err, "ATTRIBUTE 3"));
    member_free(&x);
}

static void test_derived_definitions_refused(void **state)
{
    size_t n, tested = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char err[ERR_MAX];

    (void)state;
    for (size_t i = 0; i < n; i++) {
        fixture x;
        built b;
        if (!(all[i]->flags & WEFT_DF_DAEMON))
            continue;
        member_init(&x);
        define_zeros(&x);
        valid_record(&b, all[i]);
        assert_int_equal(check(&x, &b.r, err), WEFT_ETYPE);
        assert_non_null(strstr(err, all[i]->name));
        assert_non_null(strstr(err, "derived by weftd"));
        tested++;
        member_free(&x);
    }
    assert_int_equal(tested, 4); /* clock, system tree, groups, locations */
}

static void test_ids_once(void **state)
{
    fixture x;
    built b;
    char err[ERR_MAX];

    (void)state;
    member_init(&x);
    define_zeros(&x);
    valid_record(&b, desc(WEFT_REC_IoParadigm));
    assert_int_equal(check(&x, &b.r, err), 0);
    assert_int_equal(check(&x, &b.r, err), WEFT_EEXIST);
    assert_non_null(strstr(err, "IO_PARADIGM 1"));
    b.r.u.IoParadigm.self = OTF2_UNDEFINED_IO_PARADIGM;
    assert_int_equal(check(&x, &b.r, err), WEFT_EPROTO);
    assert_non_null(strstr(err, "undefined"));
    member_free(&x);
}

/* Derived references: locations by global id, groups by rank, system
 * tree nodes 0 and 1; the OTF2 undefined values are fine everywhere. */
static void test_derived_references(void **state)
{
    fixture x;
    built b;
    char err[ERR_MAX];

    (void)state;
    member_init(&x);
    define_zeros(&x);
    valid_record(&b, desc(WEFT_REC_LocationProperty));
    b.r.u.LocationProperty.location = (uint64_t)(TRACE_SIZE - 1) << 32 | 77;
    assert_int_equal(check(&x, &b.r, err), 0);
    b.r.u.LocationProperty.location = OTF2_UNDEFINED_LOCATION;
    assert_int_equal(check(&x, &b.r, err), 0);
    valid_record(&b, desc(WEFT_REC_LocationGroupProperty));
    b.r.u.LocationGroupProperty.locationGroup = TRACE_SIZE - 1;
    assert_int_equal(check(&x, &b.r, err), 0);
    valid_record(&b, desc(WEFT_REC_IoRegularFile));
    b.r.u.IoRegularFile.scope = 1;
    assert_int_equal(check(&x, &b.r, err), 0);
    b.r.u.IoRegularFile.self = 2;
    b.r.u.IoRegularFile.scope = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    assert_int_equal(check(&x, &b.r, err), 0);
    b.r.u.IoRegularFile.self = 3;
    b.r.u.IoRegularFile.scope = 2;
    assert_int_equal(check(&x, &b.r, err), WEFT_EREF);
    assert_non_null(strstr(err, "0 (the machine) or 1"));
    member_free(&x);
}

/* Group members are what the group type says: ranks stay values. */
static void test_group_members(void **state)
{
    fixture x;
    built b;
    char err[ERR_MAX];
    uint64_t members[2] = { 0, 5 };

    (void)state;
    member_init(&x);
    define_zeros(&x);
    valid_record(&b, desc(WEFT_REC_Group));
    b.r.u.Group.numberOfMembers = 2;
    b.r.u.Group.members = members;
    b.r.u.Group.groupType = OTF2_GROUP_TYPE_COMM_GROUP;
    assert_int_equal(check(&x, &b.r, err), 0);
    b.r.u.Group.self = 2;
    b.r.u.Group.groupType = OTF2_GROUP_TYPE_METRIC;
    assert_int_equal(check(&x, &b.r, err), WEFT_EREF);
    assert_non_null(strstr(err, "Group.members[1]"));
    assert_non_null(strstr(err, "METRIC 5"));
    b.r.u.Group.groupType = OTF2_GROUP_TYPE_COMM_LOCATIONS;
    members[1] = (uint64_t)2 << 32;
    assert_int_equal(check(&x, &b.r, err), 0);
    member_free(&x);
}

/* ---- case by case ------------------------------------------------------- */

#define MAX_DEFS 16
#define MAX_STRING 16

typedef struct case_fixture {
    weft_daemon d;
    weft_trace t;
    weft_member m;
    enum weft_limit limit; /* of the last refusal */
    char err[512];
} case_fixture;

static int case_setup(void **state)
{
    case_fixture *f = calloc(1, sizeof *f);

    assert_non_null(f);
    weft_config_init(&f->d.cfg);
    f->d.cfg.max_definitions = MAX_DEFS;
    f->d.cfg.max_string = MAX_STRING;
    f->d.cfg.max_locations = 4;
    f->t.d = &f->d;
    f->t.name = "session";
    f->t.size = 1;
    f->m.trace = &f->t;
    f->m.nlocs = 2;
    f->m.locs = calloc(f->m.nlocs, sizeof *f->m.locs);
    assert_non_null(f->m.locs);
    *state = f;
    return 0;
}

static int case_teardown(void **state)
{
    case_fixture *f = *state;

    for (int k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&f->m.in.defined[k]);
    free(f->m.locs);
    weft_config_free(&f->d.cfg);
    free(f);
    return 0;
}

/* Checks n definitions as one Definitions payload. */
static int defs(case_fixture *f, const weft_record *recs, size_t n)
{
    bytes b = encode(recs, n, 0, 0);
    int rc;

    f->err[0] = 0;
    rc = weft_validate_defs(&f->m, b.p, b.n, &f->limit, f->err,
                            sizeof f->err);
    free(b.p);
    return rc;
}

static void defs_ok(case_fixture *f, const weft_record *recs, size_t n)
{
    int rc = defs(f, recs, n);

    if (rc != 0)
        print_error("check_defs: %s\n", f->err);
    assert_int_equal(rc, 0);
}

/* Checks n events as one EventBatch of thread loc announcing `count`
 * events; on success the thread's last time advances as on_batch does. */
static int events(case_fixture *f, uint32_t loc, uint64_t base, uint32_t count,
                  const weft_record *recs, size_t n, uint64_t *last)
{
    bytes b = encode(recs, n, 1, base);
    uint64_t t = 12345;
    int rc;

    f->err[0] = 0;
    rc = weft_validate_events(&f->m, loc, base, count, b.p, b.n, &t,
                              &f->limit, f->err, sizeof f->err);
    free(b.p);
    if (rc == 0 && count)
        f->m.locs[loc].last_time = t;
    if (last)
        *last = t;
    return rc;
}

static void events_ok(case_fixture *f, uint32_t loc, uint64_t base,
                      const weft_record *recs, size_t n)
{
    int rc = events(f, loc, base, (uint32_t)n, recs, n, NULL);

    if (rc != 0)
        print_error("check_events: %s\n", f->err);
    assert_int_equal(rc, 0);
}

static int raw_defs(case_fixture *f, const uint8_t *p, size_t n)
{
    f->err[0] = 0;
    return weft_validate_defs(&f->m, p, n, &f->limit, f->err, sizeof f->err);
}

static int raw_events(case_fixture *f, uint64_t base, uint32_t count,
                      const uint8_t *p, size_t n)
{
    uint64_t t;

    f->err[0] = 0;
    return weft_validate_events(&f->m, 0, base, count, p, n, &t, &f->limit,
                                f->err, sizeof f->err);
}

#define assert_err(f, s)                                                     \
    do {                                                                     \
        if (!strstr((f)->err, (s)))                                          \
            print_error("message \"%s\" lacks \"%s\"\n", (f)->err, (s));     \
        assert_non_null(strstr((f)->err, (s)));                              \
    } while (0)

static const OTF2_MetricMemberRef two_members[] = { 0, 1 };

/* Strings 0 "main", 1 "foo", 2 "cycles"; regions 0 main, 1 foo; metric
 * members 0, 1 and MetricClass 0 with both. */
static void define_basics(case_fixture *f)
{
    weft_record d[] = {
        str(0, "main"), str(1, "foo"), str(2, "cycles"),
        region(0, 0, 1), region(1, 1, 20),
        metric_member(0, 2), metric_member(1, 2),
        metric_class(0, 2, two_members),
    };

    defs_ok(f, d, sizeof d / sizeof d[0]);
}

/* ---- the valid path ------------------------------------------------------ */

static void test_valid_defs_then_events(void **state)
{
    case_fixture *f = *state;
    OTF2_Type types[] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_MetricValue vals[] = { { .unsigned_int = 1 },
                                { .unsigned_int = 2 } };
    weft_record later[] = { str(3, "bar"), region(2, 3, 40) };
    weft_record b1[] = { enter(100, 0, 0), enter(110, 1, 0),
                         metric_event(111, 0, 2, types, vals),
                         enter(120, 1, 1), enter(120, 0, 1) };
    weft_record b2[] = { enter(120, 2, 0), enter(130, 2, 1) };
    weft_record t1[] = { enter(5, 1, 0) };
    uint64_t last = 0;

    define_basics(f);
    /* A later payload may refer to what earlier ones defined. */
    defs_ok(f, later, 2);
    assert_int_equal(events(f, 0, 90, 5, b1, 5, &last), 0);
    assert_int_equal(last, 120);
    /* The next batch may start exactly at the last time. */
    events_ok(f, 0, 120, b2, 2);
    assert_int_equal(f->m.locs[0].last_time, 130);
    /* Threads have their own clocks' history. */
    events_ok(f, 1, 0, t1, 1);
    /* An empty batch is fine and leaves the last time alone. */
    assert_int_equal(events(f, 0, 130, 0, NULL, 0, &last), 0);
    assert_int_equal(last, 130);
    /* An empty Definitions payload too. */
    assert_int_equal(raw_defs(f, NULL, 0), 0);
}

static void test_undefined_otf2_refs_accepted(void **state)
{
    case_fixture *f = *state;
    const OTF2_MetricMemberRef some_undefined[] = {
        0, OTF2_UNDEFINED_METRIC_MEMBER };
    weft_record d[] = {
        str(0, "main"), region(0, 0, 1), metric_member(0, 0),
        metric_class(1, 2, some_undefined),
    };
    weft_record r = region(1, OTF2_UNDEFINED_STRING, 1);
    weft_record ev[] = { enter(10, OTF2_UNDEFINED_REGION, 0),
                         enter(11, OTF2_UNDEFINED_REGION, 1),
                         metric_event(12, OTF2_UNDEFINED_METRIC, 0, NULL,
                                      NULL) };

    /* region() leaves description and sourceFile undefined. */
    defs_ok(f, d, sizeof d / sizeof d[0]);
    r.u.Region.canonicalName = OTF2_UNDEFINED_STRING;
    defs_ok(f, &r, 1);
    events_ok(f, 0, 0, ev, 3);
}

/* ---- references and ids -------------------------------------------------- */

static void test_undefined_reference(void **state)
{
    case_fixture *f = *state;
    const OTF2_MetricMemberRef bad_members[] = { 0, 9 };
    weft_record r = region(0, 7, 1);
    weft_record mc = metric_class(3, 2, bad_members);
    weft_record ev = enter(10, 5, 0);
    weft_record mev = metric_event(10, 4, 0, NULL, NULL);

    assert_int_equal(defs(f, &r, 1), WEFT_EREF);
    assert_err(f, "Region.name: STRING 7 is not defined");
    assert_int_equal(f->limit, WEFT_LIMIT_NONE);
    define_basics(f);
    assert_int_equal(defs(f, &mc, 1), WEFT_EREF);
    assert_err(f, "MetricClass.metricMembers[1]: METRIC_MEMBER 9 is not "
               "defined");
    assert_int_equal(events(f, 0, 0, 1, &ev, 1, NULL), WEFT_EREF);
    assert_err(f, "Enter.region: REGION 5 is not defined");
    ev = enter(10, 5, 1);
    assert_int_equal(events(f, 0, 0, 1, &ev, 1, NULL), WEFT_EREF);
    assert_err(f, "Leave.region: REGION 5");
    assert_int_equal(events(f, 0, 0, 1, &mev, 1, NULL), WEFT_EREF);
    assert_err(f, "Metric.metric: METRIC 4 is not defined");
    /* Id spaces are apart: string 2 exists, region 2 does not. */
    ev = enter(10, 2, 0);
    assert_int_equal(events(f, 0, 0, 1, &ev, 1, NULL), WEFT_EREF);
}

static void test_redefinition(void **state)
{
    case_fixture *f = *state;
    weft_record again = str(1, "other");
    weft_record twice[] = { region(5, 0, 1), region(5, 0, 1) };

    define_basics(f);
    assert_int_equal(defs(f, &again, 1), WEFT_EEXIST);
    assert_err(f, "String.self: STRING 1 is already defined");
    /* Inside one payload as well. */
    assert_int_equal(defs(f, twice, 2), WEFT_EEXIST);
    assert_err(f, "Region.self: REGION 5 is already defined");
}

static void test_undefined_id_cannot_be_defined(void **state)
{
    case_fixture *f = *state;
    weft_record r = str(OTF2_UNDEFINED_STRING, "u");

    assert_int_equal(defs(f, &r, 1), WEFT_EPROTO);
    assert_err(f, "String.self: the undefined id cannot be defined");
}

static void test_daemon_definitions_refused(void **state)
{
    case_fixture *f = *state;
    weft_record r;
    static const uint32_t types[] = { WEFT_REC_ClockProperties,
                                      WEFT_REC_SystemTreeNode,
                                      WEFT_REC_LocationGroup,
                                      WEFT_REC_Location };

    define_basics(f);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const weft_rec_desc *rd = weft_rec_desc_of(types[i]);
        char want[128];
        memset(&r, 0, sizeof r);
        r.type = types[i];
        assert_int_equal(defs(f, &r, 1), WEFT_ETYPE);
        snprintf(want, sizeof want, "%s definitions are derived by weftd",
                 rd->name);
        assert_err(f, want);
    }
}

static void test_max_definitions(void **state)
{
    case_fixture *f = *state;
    weft_record ok = str(MAX_DEFS - 1, "last");
    weft_record over = str(MAX_DEFS, "over");
    weft_record far = region(1u << 30, MAX_DEFS - 1, 1);

    defs_ok(f, &ok, 1);
    assert_int_equal(defs(f, &over, 1), WEFT_ELIMIT);
    assert_err(f, "String.self: id 16 exceeds max_definitions (16)");
    assert_int_equal(f->limit, WEFT_LIMIT_MAX_DEFINITIONS);
    /* Every id space has the limit. */
    assert_int_equal(defs(f, &far, 1), WEFT_ELIMIT);
    assert_err(f, "Region.self: id 1073741824 exceeds max_definitions");
    assert_int_equal(f->limit, WEFT_LIMIT_MAX_DEFINITIONS);
}

/* The largest ids cost what small ones do (issue 30, finding 3): a
 * member that defines id 2^24 - 1 of strings, regions, metric members and
 * classes holds a few KB for them, not arrays sized by the id, and the
 * decl kept for its metric class still checks its events; a refused
 * payload is not charged to the trace, an accepted one is (its bytes and
 * WEFT_DEF_OVERHEAD per record), until it is undefined again. */
static void test_big_ids_cost_little(void **state)
{
    case_fixture *f = *state;
    const uint32_t top = (1u << 24) - 1;
    const OTF2_MetricMemberRef members[2] = { (1u << 24) - 1,
                                              (1u << 24) - 1 };
    OTF2_Type types[] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_MetricValue vals[2] = { { .unsigned_int = 1 } };
    weft_record d[4] = { str(top, "far"), region(top, top, 1),
                         metric_member(top, top),
                         metric_class(top, 2, members) };
    weft_record ev = metric_event(10, top, 2, types, vals);
    weft_record bad = metric_event(20, top, 1, types, vals);
    weft_record again = str(top, "again");
    bytes b = encode(d, 4, 0, 0);
    size_t held = 0;

    f->d.cfg.max_definitions = 1u << 24;
    defs_ok(f, d, 4);
    for (int k = 0; k < WEFT_REF__COUNT; k++)
        held += weft_idset_bytes(&f->m.in.defined[k]);
    assert_true(held <= 4 * 1024);
    assert_int_equal(f->t.def_bytes, b.n + 4 * WEFT_DEF_OVERHEAD);
    events_ok(f, 0, 0, &ev, 1);
    assert_int_equal(events(f, 0, 20, 1, &bad, 1, NULL), WEFT_EPROTO);
    assert_err(f, "1 elements, but METRIC 16777215 (metric) has 2");
    assert_int_equal(defs(f, &again, 1), WEFT_EEXIST);
    assert_int_equal(f->t.def_bytes, b.n + 4 * WEFT_DEF_OVERHEAD);
    weft_validate_undefine(&f->m, b.p, b.n);
    assert_int_equal(f->t.def_bytes, 0);
    assert_false(weft_idset_has(&f->m.in.defined[WEFT_REF_STRING], top));
    free(b.p);
}

/* A ThreadName names a thread below max_locations, with a defined
 * string. */
static void test_thread_name(void **state)
{
    case_fixture *f = *state;
    weft_record s = str(3, "worker"), n = { .type = WEFT_REC_ThreadName };

    defs_ok(f, &s, 1);
    n.u.ThreadName.thread = 3;
    n.u.ThreadName.name = 3;
    defs_ok(f, &n, 1);
    n.u.ThreadName.thread = 4;
    assert_int_equal(defs(f, &n, 1), WEFT_ELIMIT);
    assert_err(f, "ThreadName.thread: thread 4 exceeds max_locations (4)");
    assert_int_equal(f->limit, WEFT_LIMIT_MAX_LOCATIONS);
    n.u.ThreadName.thread = 0;
    n.u.ThreadName.name = 7;
    assert_int_equal(defs(f, &n, 1), WEFT_EREF);
    assert_err(f, "ThreadName.name");
}

static void test_max_string(void **state)
{
    case_fixture *f = *state;
    char longest[MAX_STRING + 1], over[MAX_STRING + 2];
    weft_record r;

    memset(longest, 'x', MAX_STRING);
    longest[MAX_STRING] = 0;
    memset(over, 'y', MAX_STRING + 1);
    over[MAX_STRING + 1] = 0;
    r = str(0, longest);
    defs_ok(f, &r, 1);
    r = str(1, over);
    assert_int_equal(defs(f, &r, 1), WEFT_ETOOBIG);
    assert_err(f, "String.string: string of 17 bytes exceeds the limit of "
               "16");
    assert_int_equal(f->limit, WEFT_LIMIT_MAX_STRING);
    /* A refusal of a batch for another reason names no limit. */
    assert_int_equal(raw_events(f, 0, 1, NULL, 0), WEFT_EPROTO);
    assert_int_equal(f->limit, WEFT_LIMIT_NONE);
}

/* ---- events -------------------------------------------------------------- */

static void test_metric_count_mismatch(void **state)
{
    case_fixture *f = *state;
    OTF2_Type types[] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64,
                          OTF2_TYPE_UINT64 };
    OTF2_MetricValue vals[3] = { { .unsigned_int = 1 } };
    weft_record one = metric_event(10, 0, 1, types, vals);
    weft_record three = metric_event(10, 0, 3, types, vals);
    weft_record empty_class = metric_class(1, 0, NULL);
    weft_record none = metric_event(10, 1, 0, NULL, NULL);

    define_basics(f);
    assert_int_equal(events(f, 0, 0, 1, &one, 1, NULL), WEFT_EPROTO);
    assert_err(f, "Metric.numberOfMetrics: 1 elements, but METRIC 0 (metric) "
               "has 2");
    assert_int_equal(events(f, 0, 0, 1, &three, 1, NULL), WEFT_EPROTO);
    assert_err(f, "3 elements, but METRIC 0");
    defs_ok(f, &empty_class, 1);
    events_ok(f, 0, 0, &none, 1);
    one.u.Metric.metric = 1;
    assert_int_equal(events(f, 0, 10, 1, &one, 1, NULL), WEFT_EPROTO);
    assert_err(f, "1 elements, but METRIC 1 (metric) has 0");
}

static void test_time_before_last(void **state)
{
    case_fixture *f = *state;
    weft_record a = enter(500, 0, 0), b = enter(600, 0, 1);

    define_basics(f);
    events_ok(f, 0, 400, &a, 1);
    assert_int_equal(f->m.locs[0].last_time, 500);
    assert_int_equal(events(f, 0, 499, 1, &b, 1, NULL), WEFT_ETIME);
    assert_err(f, "batch base time 499 is smaller than the last time 500 of "
               "thread 0");
    /* Another thread is not bound by thread 0's clock. */
    a = enter(1, 0, 0);
    events_ok(f, 1, 0, &a, 1);
    events_ok(f, 0, 500, &b, 1);
}

static void test_count_mismatch(void **state)
{
    case_fixture *f = *state;
    weft_record ev[] = { enter(1, 0, 0), enter(2, 0, 1) };

    define_basics(f);
    assert_int_equal(events(f, 0, 0, 3, ev, 2, NULL), WEFT_EPROTO);
    assert_err(f, "EventBatch announces 3 events but holds 2");
    assert_int_equal(events(f, 0, 0, 1, ev, 2, NULL), WEFT_EPROTO);
    assert_err(f, "announces 1 events but holds 2");
    assert_int_equal(events(f, 0, 0, 1, NULL, 0, NULL), WEFT_EPROTO);
    assert_err(f, "announces 1 events but holds 0");
    /* Nothing moved the thread's clock. */
    assert_int_equal(f->m.locs[0].last_time, 0);
}

/* ---- malformed payloads -------------------------------------------------- */

static void test_wrong_stream(void **state)
{
    case_fixture *f = *state;
    weft_record ev = enter(5, 0, 0);
    weft_record def = str(9, "late");
    bytes b;

    define_basics(f);
    b = encode(&ev, 1, 1, 0);
    assert_int_equal(raw_defs(f, b.p, b.n), WEFT_ETYPE);
    assert_err(f, "Enter: event record in a definition stream");
    free(b.p);
    b = encode(&def, 1, 0, 0);
    assert_int_equal(raw_events(f, 0, 1, b.p, b.n), WEFT_ETYPE);
    assert_err(f, "String: definition record in a");
    free(b.p);
    /* The refused String was not defined. */
    ev = enter(5, 9, 0);
    assert_int_equal(events(f, 0, 0, 1, &ev, 1, NULL), WEFT_EREF);
}

/* Forgets every definition of the member. */
static void reset_member(case_fixture *f)
{
    for (int k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&f->m.in.defined[k]);
}

static void test_truncated(void **state)
{
    case_fixture *f = *state;
    weft_record d[] = { str(0, "main"), region(0, 0, 1000) };
    weft_record ev[] = { enter(100000, 0, 0), enter(100001, 0, 1) };
    bytes b = encode(d, 2, 0, 0), first = encode(d, 1, 0, 0), e;

    /* Every cut inside the Region is refused, and the String before the
     * cut is not kept (it can be sent again). */
    for (size_t n = first.n + 1; n < b.n; n++) {
        assert_int_equal(raw_defs(f, b.p, n), WEFT_ETRUNC);
        assert_err(f, "Region.");
        assert_err(f, "truncated");
        assert_int_equal(raw_defs(f, b.p, first.n), 0);
        reset_member(f);
    }
    /* Inside the String. */
    for (size_t n = 1; n < first.n; n++)
        assert_int_equal(raw_defs(f, b.p, n), WEFT_ETRUNC);
    assert_int_equal(raw_defs(f, b.p, 3), WEFT_ETRUNC);
    assert_err(f, "String.string: truncated string");
    defs_ok(f, d, 2);
    e = encode(ev, 2, 1, 0);
    for (size_t n = 1; n < e.n; n++) {
        int rc = raw_events(f, 0, 2, e.p, n);
        /* A cut between records leaves a batch that holds fewer events
         * than announced. */
        assert_true(rc == WEFT_ETRUNC || rc == WEFT_EPROTO);
        if (rc == WEFT_ETRUNC)
            assert_err(f, "truncated");
        else
            assert_err(f, "announces 2 events but holds 1");
    }
    assert_int_equal(raw_events(f, 0, 2, e.p, e.n), 0);
    free(b.p);
    free(first.p);
    free(e.p);
}

static void test_unknown_and_malformed(void **state)
{
    case_fixture *f = *state;
    static const uint8_t unknown[] = { 0x7e, 1, 2, 3 };
    static const uint8_t bad_varint[] = { 0x41, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff,
                                          0x01 };
    static const uint8_t nul_in_string[] = { 0x41, 0x00, 0x03, 'a', 0, 'b' };
    /* Region 0 with name 0 and a beginLineNumber of 2^32. */
    static const uint8_t too_wide[] = { 0x45, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0x80, 0x80, 0x80, 0x80, 0x10, 0 };
    static const uint8_t str0[] = { 0x41, 0x00, 0x01, 'a' };

    assert_int_equal(raw_defs(f, unknown, sizeof unknown), WEFT_ETYPE);
    assert_err(f, "unknown record type 126");
    assert_int_equal(raw_events(f, 0, 1, unknown, sizeof unknown),
                     WEFT_ETYPE);
    assert_err(f, "unknown record type 126");
    assert_int_equal(raw_defs(f, bad_varint, sizeof bad_varint),
                     WEFT_ETRUNC);
    assert_int_equal(raw_defs(f, nul_in_string, sizeof nul_in_string),
                     WEFT_EPROTO);
    assert_err(f, "String.string: string contains a NUL byte");
    assert_int_equal(raw_defs(f, str0, sizeof str0), 0);
    assert_int_equal(raw_defs(f, too_wide, sizeof too_wide), WEFT_EPROTO);
    assert_err(f, "Region.beginLineNumber: value 4294967296 out of range");
}

/* ---- a refused payload leaves no trace -------------------------------------- */

static void test_refused_defs_define_nothing(void **state)
{
    case_fixture *f = *state;
    OTF2_MetricMemberRef one[] = { 0 };
    weft_record bad[] = { str(0, "main"), region(0, 0, 1),
                          metric_member(0, 0), metric_class(0, 1, one),
                          region(1, 9, 1) };
    weft_record ev = enter(10, 0, 0);
    weft_record good[] = { str(0, "main"), str(9, "nine"), region(0, 0, 1),
                           metric_member(0, 0), metric_member(1, 9),
                           metric_class(0, 2, two_members),
                           region(1, 9, 1) };
    OTF2_Type types[] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_MetricValue vals[2] = { { .unsigned_int = 1 } };
    weft_record mev = metric_event(11, 0, 2, types, vals);

    assert_int_equal(defs(f, bad, 5), WEFT_EREF);
    assert_err(f, "Region.name: STRING 9");
    /* Region 0 was refused with its payload: events may not use it... */
    assert_int_equal(events(f, 0, 0, 1, &ev, 1, NULL), WEFT_EREF);
    /* ...and the client may send its corrected payload with the same ids
     * (the payload is not journaled, so these ids were never defined). */
    defs_ok(f, good, sizeof good / sizeof good[0]);
    events_ok(f, 0, 0, &ev, 1);
    /* The class counts as sent the second time. */
    events_ok(f, 0, 10, &mev, 1);
}


/* ---- a Hello's tags ------------------------------------------------------ */

/* Checks tags given as "key=value" strings. */
static int tags(case_fixture *f, const char *const *kv, size_t n)
{
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Tag *v = calloc(n ? n : 1, sizeof *v), **p = calloc(n ? n : 1,
                                                             sizeof *p);
    char *copies = NULL;
    size_t total = 0;
    int rc;

    assert_non_null(v);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        total += strlen(kv[i]) + 1;
    copies = malloc(total ? total : 1);
    assert_non_null(copies);
    for (size_t i = 0, off = 0; i < n; i++) {
        char *s = strcpy(copies + off, kv[i]), *eq = strchr(s, '=');
        assert_non_null(eq);
        *eq = 0;
        weft__tag__init(&v[i]);
        v[i].key = s;
        v[i].value = eq + 1;
        p[i] = &v[i];
        off += strlen(kv[i]) + 1;
    }
    h.n_tags = n;
    h.tags = p;
    f->err[0] = 0;
    rc = weft_validate_tags(&h, MAX_STRING, &f->limit, f->err, sizeof f->err);
    free(copies);
    free(p);
    free(v);
    return rc;
}

static void test_tags(void **state)
{
    case_fixture *f = *state;
    static const char *const good[] = { "a=1", "B.c-d_9=",
                                        "e=0123456789abcdef" };
    static const char *const twice[] = { "a=1", "b=2", "a=3" };
    static const char *const empty[] = { "a=1", "=x" };
    static const char *const space[] = { "bad key=1" };
    static const char *const long_value[] = { "k=0123456789abcdefg" };
    const char *many[65];
    char key[80];

    assert_int_equal(tags(f, good, 3), 0);
    assert_int_equal(tags(f, twice, 3), WEFT_EINVAL);
    assert_err(f, "Hello: tag 'a' is given twice");
    assert_int_equal(f->limit, WEFT_LIMIT_NONE);
    assert_int_equal(tags(f, empty, 2), WEFT_EINVAL);
    assert_err(f, "Hello: tag 2 has an empty key");
    assert_int_equal(tags(f, space, 1), WEFT_EINVAL);
    assert_err(f, "Hello: tag key 'bad key' has a character other than");
    memset(key, 'k', 65);
    strcpy(key + 65, "=1");
    many[0] = key;
    assert_int_equal(tags(f, many, 1), WEFT_EINVAL);
    assert_err(f, "is 65 bytes long, at most 64 are allowed");
    assert_int_equal(tags(f, long_value, 1), WEFT_ELIMIT);
    assert_err(f, "Hello: the value of tag 'k' is 17 bytes long, over "
               "max_string (16)");
    assert_int_equal(f->limit, WEFT_LIMIT_MAX_STRING);
    /* More than 64 tags is a limit of the protocol, not a setting. */
    for (int i = 0; i < 65; i++)
        many[i] = "t=1";
    assert_int_equal(tags(f, many, 65), WEFT_ELIMIT);
    assert_err(f, "Hello: 65 tags, at most 64 are allowed");
    assert_int_equal(f->limit, WEFT_LIMIT_NONE);
    /* 64 tags of 64-byte keys and 16-byte values: over the protocol's
     * 4096 bytes of tags at the 52nd (52 x 80 = 4160). */
    {
        static char kv[64][96];
        for (int i = 0; i < 64; i++) {
            snprintf(kv[i], sizeof kv[i], "%02d%.62s=0123456789abcdef", i,
                     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk");
            many[i] = kv[i];
        }
        assert_int_equal(tags(f, many, 64), WEFT_ELIMIT);
        assert_err(f, "Hello: the tags are over 4096 bytes (keys and values) "
                   "at tag '51");
    }
}

int main(void)
{
    const struct CMUnitTest generic[] = {
        cmocka_unit_test(test_valid_records_pass),
        cmocka_unit_test(test_every_enum_field_checked),
        cmocka_unit_test(test_every_reference_checked),
        cmocka_unit_test(test_typed_value_needs_a_type),
        cmocka_unit_test(test_counts_must_match),
        cmocka_unit_test(test_counts_from_definitions),
        cmocka_unit_test(test_attribute_lists),
        cmocka_unit_test(test_derived_definitions_refused),
        cmocka_unit_test(test_ids_once),
        cmocka_unit_test(test_derived_references),
        cmocka_unit_test(test_group_members),
    };
#define T(fn) cmocka_unit_test_setup_teardown(fn, case_setup, case_teardown)
    const struct CMUnitTest cases[] = {
        T(test_valid_defs_then_events),
        T(test_undefined_otf2_refs_accepted),
        T(test_undefined_reference),
        T(test_redefinition),
        T(test_undefined_id_cannot_be_defined),
        T(test_daemon_definitions_refused),
        T(test_max_definitions),
        T(test_big_ids_cost_little),
        T(test_thread_name),
        T(test_max_string),
        T(test_metric_count_mismatch),
        T(test_time_before_last),
        T(test_count_mismatch),
        T(test_wrong_stream),
        T(test_truncated),
        T(test_unknown_and_malformed),
        T(test_refused_defs_define_nothing),
        T(test_tags),
    };
#undef T
    int failed = cmocka_run_group_tests_name("over the record table", generic,
                                             NULL, NULL);

    failed += cmocka_run_group_tests_name("case by case", cases, NULL, NULL);
    return failed;
}
