/* test_validate.c - the checks of what a member sends (daemon/ingest/validate.c:
 * weft_validate_defs, weft_validate_events), pure functions over a
 * member's ingest state (memberin.h) built by hand: no trace, no loop,
 * no socket. Its cases one by one are in test_validate_cases.c.
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
#include "validate.h"
#include "weft_errors.h"

#define TRACE_SIZE 3
#define ERR_MAX 512

/* ---- a member's ingest state, without a daemon around it --------------- */

typedef struct fixture {
    weft_daemon d;
    weft_memberin in;
    weft_loc_state loc;
} fixture;

static void member_init(fixture *x)
{
    memset(x, 0, sizeof *x);
    weft_config_init(&x->d.cfg);
    x->in.d = &x->d;
    x->in.size = TRACE_SIZE;
    x->in.locs = &x->loc;
    x->in.nlocs = 1;
}

static void member_free(fixture *x)
{
    for (unsigned k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&x->in.defined[k]);
    weft_config_free(&x->d.cfg);
}

/* Id 0 of k is declared with 1 element and type `type`. */
static void set_decl(fixture *x, unsigned k, uint8_t type)
{
    weft_decl dl = { 1, type };

    assert_int_equal(weft_idset_put(&x->in.defined[k], 0,
                                    weft_decl_pack(dl)), 0);
}

/* Every id space has id 0 defined; counted and typed ones say 1 element
 * and OTF2_TYPE_UINT8, which is what valid_record builds. */
static void define_zeros(fixture *x)
{
    for (unsigned k = WEFT_REF_NONE + 1; k < WEFT_REF__COUNT; k++) {
        assert_int_equal(weft_idset_add(&x->in.defined[k], 0, 1000), 0);
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
    uint64_t prev = 0, last = 0, charge;
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
        rc = weft_validate_events(&x->in, 0, 0, 1, buf, (size_t)n, &last,
                                  &limit, err, ERR_MAX);
    else
        rc = weft_validate_defs(&x->in, buf, (size_t)n, &charge, &limit, err,
                                ERR_MAX);
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

    return cmocka_run_group_tests_name("over the record table", generic, NULL,
                                       NULL);
}
