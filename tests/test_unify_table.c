/* test_unify_table.c - unification (daemon/convert/unify.c) of the record forms
 * beyond plain references: definitions identified by key fields or by a
 * NATURE id (merged when identical, a conflict naming both members when
 * not), typed values and selected references, attribute lists, derived
 * id spaces (and a unifier that keeps them as they are), every record
 * kind of the table once, and one unifier's ids in another's (compose).
 * (test_unify.c covers plain references, limits and conversion.)
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

#include "record.h"
#include "unify.h"
#include "weft_errors.h"

#define ERR_MAX 512

static weft_record str(OTF2_StringRef self, const char *s)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_String;
    r.u.String.self = self;
    r.u.String.string = s;
    return r;
}

static void add_ok(weft_unifier *u, uint32_t member, weft_record r)
{
    char err[ERR_MAX];
    int rc = weft_unify_add_def(u, member, &r, err, sizeof err);

    if (rc != 0)
        fail_msg("add_def: %s (%s)", weft_strerror(rc), err);
}

static uint64_t global(weft_unifier *u, uint32_t member, unsigned kind,
                       uint64_t local)
{
    uint64_t g = UINT64_MAX;

    assert_int_equal(weft_unify_lookup(u, member, kind, local, &g), 0);
    return g;
}

static weft_record paradigm(OTF2_Paradigm p, OTF2_StringRef name,
                            OTF2_ParadigmClass cls)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Paradigm;
    r.u.Paradigm.paradigm = p;
    r.u.Paradigm.name = name;
    r.u.Paradigm.paradigmClass = cls;
    return r;
}

/* Members 0 and 1 number the same strings differently. */
static weft_unifier *two_members(void)
{
    weft_unifier *u = weft_unify_new(0);

    assert_non_null(u);
    add_ok(u, 0, str(0, "MPI"));
    add_ok(u, 0, str(1, "mpi"));
    add_ok(u, 1, str(0, "mpi"));
    add_ok(u, 1, str(1, "MPI"));
    return u;
}

static void test_keyed_identical_merged(void **state)
{
    weft_unifier *u = two_members();

    (void)state;
    add_ok(u, 0, paradigm(OTF2_PARADIGM_MPI, 0, OTF2_PARADIGM_CLASS_PROCESS));
    add_ok(u, 1, paradigm(OTF2_PARADIGM_MPI, 1, OTF2_PARADIGM_CLASS_PROCESS));
    add_ok(u, 1, paradigm(OTF2_PARADIGM_MPI, 1, OTF2_PARADIGM_CLASS_PROCESS));
    assert_int_equal(weft_unify_count(u, WEFT_REC_Paradigm), 1);
    /* Another paradigm is another definition. */
    add_ok(u, 1, paradigm(OTF2_PARADIGM_OPENMP, 1,
                          OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN));
    assert_int_equal(weft_unify_count(u, WEFT_REC_Paradigm), 2);
    weft_unify_free(u);
}

static void test_keyed_conflict(void **state)
{
    weft_unifier *u = two_members();
    weft_record r;
    char err[ERR_MAX];

    (void)state;
    add_ok(u, 0, paradigm(OTF2_PARADIGM_MPI, 0, OTF2_PARADIGM_CLASS_PROCESS));
    /* Member 1's string 0 is "mpi", not "MPI". */
    r = paradigm(OTF2_PARADIGM_MPI, 0, OTF2_PARADIGM_CLASS_PROCESS);
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_ECONFLICT);
    assert_non_null(strstr(err, "member 1: Paradigm conflicts"));
    assert_non_null(strstr(err, "member 0 has {Paradigm paradigm=4 name=0"));
    assert_non_null(strstr(err, "member 1 has {Paradigm paradigm=4 name=1"));
    /* Also within one member. */
    r = paradigm(OTF2_PARADIGM_MPI, 0, OTF2_PARADIGM_CLASS_ACCELERATOR);
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ECONFLICT);
    assert_int_equal(weft_unify_count(u, WEFT_REC_Paradigm), 1);
    /* Keeping the first (what a converter does): 1, the same message,
     * and the first definition stands. */
    weft_unify_keep_first(u, 1);
    err[0] = 0;
    r = paradigm(OTF2_PARADIGM_MPI, 0, OTF2_PARADIGM_CLASS_PROCESS);
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err), 1);
    assert_non_null(strstr(err, "member 1: Paradigm conflicts"));
    assert_int_equal(weft_unify_count(u, WEFT_REC_Paradigm), 1);
    assert_int_equal(weft_unify_get(u, WEFT_REC_Paradigm, 0)
                         ->u.Paradigm.paradigmClass,
                     OTF2_PARADIGM_CLASS_PROCESS);
    assert_int_equal(weft_unify_get(u, WEFT_REC_Paradigm, 0)->u.Paradigm.name,
                     global(u, 0, WEFT_REF_STRING, 0));
    weft_unify_free(u);
}

static weft_record paradigm_property(OTF2_Paradigm p,
                                     OTF2_ParadigmProperty prop,
                                     OTF2_Type type, uint64_t raw)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ParadigmProperty;
    r.u.ParadigmProperty.paradigm = p;
    r.u.ParadigmProperty.property = prop;
    r.u.ParadigmProperty.type = type;
    memcpy(&r.u.ParadigmProperty.value, &raw, sizeof raw);
    return r;
}

/* A string-typed value is a reference: mapped, and compared mapped. */
static void test_typed_values(void **state)
{
    weft_unifier *u = two_members();
    const weft_record *g;
    weft_record r;
    char err[ERR_MAX];

    (void)state;
    add_ok(u, 0, paradigm_property(OTF2_PARADIGM_MPI,
                                   OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
                                   OTF2_TYPE_STRING, 1));
    add_ok(u, 1, paradigm_property(OTF2_PARADIGM_MPI,
                                   OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
                                   OTF2_TYPE_STRING, 0));
    assert_int_equal(weft_unify_count(u, WEFT_REC_ParadigmProperty), 1);
    g = weft_unify_get(u, WEFT_REC_ParadigmProperty, 0);
    assert_int_equal(g->u.ParadigmProperty.value.stringRef,
                     global(u, 0, WEFT_REF_STRING, 1));
    /* The same key with another value conflicts. */
    r = paradigm_property(OTF2_PARADIGM_MPI,
                          OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
                          OTF2_TYPE_STRING, 1);
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_ECONFLICT);
    /* Plain values are compared as they are; a dangling string is not
     * mapped. */
    add_ok(u, 0, paradigm_property(OTF2_PARADIGM_SHMEM,
                                   OTF2_PARADIGM_PROPERTY_RMA_ONLY,
                                   OTF2_TYPE_UINT8, 1));
    r = paradigm_property(OTF2_PARADIGM_SHMEM,
                          OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
                          OTF2_TYPE_STRING, 9);
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "ParadigmProperty.value = 9"));
    weft_unify_free(u);
}

static weft_record io_paradigm(OTF2_IoParadigmRef self, OTF2_StringRef id,
                               OTF2_IoParadigmClass cls)
{
    static const OTF2_IoParadigmProperty props[1] = {
        OTF2_IO_PARADIGM_PROPERTY_VERSION
    };
    static const OTF2_Type types[1] = { OTF2_TYPE_UINT32 };
    static const OTF2_AttributeValue values[1] = { { .uint32 = 3 } };
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_IoParadigm;
    r.u.IoParadigm.self = self;
    r.u.IoParadigm.identification = id;
    r.u.IoParadigm.name = id;
    r.u.IoParadigm.ioParadigmClass = cls;
    r.u.IoParadigm.numberOfProperties = 1;
    r.u.IoParadigm.properties = props;
    r.u.IoParadigm.types = types;
    r.u.IoParadigm.values = values;
    return r;
}

/* IoParadigm ids mean the same everywhere; the archive still gets dense
 * ids in first-seen order. */
static void test_nature_ids(void **state)
{
    weft_unifier *u = two_members();
    weft_record r;
    char err[ERR_MAX];

    (void)state;
    add_ok(u, 0, io_paradigm(7, 0, OTF2_IO_PARADIGM_CLASS_SERIAL));
    add_ok(u, 1, io_paradigm(7, 1, OTF2_IO_PARADIGM_CLASS_SERIAL));
    assert_int_equal(weft_unify_count(u, WEFT_REC_IoParadigm), 1);
    assert_int_equal(global(u, 0, WEFT_REF_IO_PARADIGM, 7), 0);
    assert_int_equal(global(u, 1, WEFT_REF_IO_PARADIGM, 7), 0);
    add_ok(u, 1, io_paradigm(2, 0, OTF2_IO_PARADIGM_CLASS_PARALLEL));
    assert_int_equal(global(u, 1, WEFT_REF_IO_PARADIGM, 2), 1);
    assert_int_equal(weft_unify_get(u, WEFT_REC_IoParadigm, 1)
                         ->u.IoParadigm.self, 1);
    /* Member 0's id 2 must be what member 1 said it is. */
    r = io_paradigm(2, 0, OTF2_IO_PARADIGM_CLASS_PARALLEL);
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ECONFLICT);
    assert_non_null(strstr(err, "IoParadigm conflicts with the definition "
                            "of member 1"));
    /* Keeping the first, member 0's id 2 means member 1's definition, so
     * its references resolve. */
    weft_unify_keep_first(u, 1);
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err), 1);
    assert_int_equal(global(u, 0, WEFT_REF_IO_PARADIGM, 2), 1);
    assert_int_equal(weft_unify_count(u, WEFT_REC_IoParadigm), 2);
    weft_unify_keep_first(u, 0);
    r = io_paradigm(2, 1, OTF2_IO_PARADIGM_CLASS_PARALLEL);
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err), 0);
    assert_int_equal(global(u, 0, WEFT_REF_IO_PARADIGM, 2), 1);
    weft_unify_free(u);
}

static weft_record group(OTF2_GroupRef self, OTF2_GroupType type,
                         uint32_t n, const uint64_t *members)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Group;
    r.u.Group.self = self;
    r.u.Group.name = 0;
    r.u.Group.groupType = type;
    r.u.Group.paradigm = OTF2_PARADIGM_MPI;
    r.u.Group.numberOfMembers = n;
    r.u.Group.members = members;
    return r;
}

static weft_record region(OTF2_RegionRef self, OTF2_StringRef name)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Region;
    r.u.Region.self = self;
    r.u.Region.name = name;
    r.u.Region.canonicalName = name;
    r.u.Region.description = OTF2_UNDEFINED_STRING;
    r.u.Region.sourceFile = OTF2_UNDEFINED_STRING;
    return r;
}

/* Group members are regions, metrics, locations or ranks, as the group
 * type says; only regions and metrics are renumbered. */
static void test_group_members(void **state)
{
    weft_unifier *u = two_members();
    uint64_t regions[2] = { 5, 6 };
    uint64_t ranks[3] = { 0, 5, 6 };
    uint64_t locations[2] = { (uint64_t)1 << 32, 5 };
    const weft_record *g;

    (void)state;
    add_ok(u, 1, region(5, 0));
    add_ok(u, 1, region(6, 1));
    add_ok(u, 1, group(0, OTF2_GROUP_TYPE_REGIONS, 2, regions));
    add_ok(u, 1, group(1, OTF2_GROUP_TYPE_COMM_GROUP, 3, ranks));
    add_ok(u, 1, group(2, OTF2_GROUP_TYPE_COMM_LOCATIONS, 2, locations));
    g = weft_unify_get(u, WEFT_REC_Group, 0);
    assert_int_equal(g->u.Group.members[0], 0);
    assert_int_equal(g->u.Group.members[1], 1);
    assert_int_equal(regions[0], 5); /* the caller's array is untouched */
    g = weft_unify_get(u, WEFT_REC_Group, 1);
    assert_int_equal(g->u.Group.members[1], 5);
    assert_int_equal(g->u.Group.members[2], 6);
    g = weft_unify_get(u, WEFT_REC_Group, 2);
    assert_true(g->u.Group.members[0] == (uint64_t)1 << 32);
    weft_unify_free(u);
}

/* System tree nodes and location groups come from weftd's tables; a
 * member's "1" is its own host. */
static void test_derived(void **state)
{
    weft_unifier *u = two_members();
    weft_record r;
    const weft_record *g;
    char err[ERR_MAX];

    (void)state;
    assert_int_equal(weft_unify_set_derived(u, WEFT_UNIFY_ALL,
                                            WEFT_REF_LOCATION_GROUP, 0, 0,
                                            err, sizeof err), 0);
    assert_int_equal(weft_unify_set_derived(u, WEFT_UNIFY_ALL,
                                            WEFT_REF_LOCATION_GROUP, 1, 1,
                                            err, sizeof err), 0);
    assert_int_equal(weft_unify_set_derived(u, 0, WEFT_REF_SYSTEM_TREE_NODE,
                                            1, 1, err, sizeof err), 0);
    assert_int_equal(weft_unify_set_derived(u, 1, WEFT_REF_SYSTEM_TREE_NODE,
                                            1, 2, err, sizeof err), 0);
    assert_int_equal(weft_unify_set_derived(u, 1, WEFT_REF_LOCATION, 1, 2,
                                            err, sizeof err), WEFT_EINVAL);
    assert_int_equal(weft_unify_set_derived(u, 1, WEFT_REF_STRING, 1, 2,
                                            err, sizeof err), WEFT_EINVAL);

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_IoRegularFile;
    r.u.IoRegularFile.self = 0;
    r.u.IoRegularFile.name = 0;
    r.u.IoRegularFile.scope = 1;
    add_ok(u, 0, r);
    r.u.IoRegularFile.name = 1;
    add_ok(u, 1, r); /* same name, another host: another file */
    assert_int_equal(weft_unify_count(u, WEFT_REC_IoRegularFile), 2);
    assert_int_equal(weft_unify_get(u, WEFT_REC_IoRegularFile, 0)
                         ->u.IoRegularFile.scope, 1);
    assert_int_equal(weft_unify_get(u, WEFT_REC_IoRegularFile, 1)
                         ->u.IoRegularFile.scope, 2);
    r.u.IoRegularFile.self = 1;
    r.u.IoRegularFile.scope = 0; /* no member has 0 set */
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "IoRegularFile.scope = 0"));

    /* A metric instance's scope is a location group here, by rank. */
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricClass;
    add_ok(u, 1, r);
    r.type = WEFT_REC_MetricInstance;
    r.u.MetricInstance.self = 1;
    r.u.MetricInstance.metricClass = 0;
    r.u.MetricInstance.recorder = (uint64_t)1 << 32;
    r.u.MetricInstance.metricScope = OTF2_SCOPE_LOCATION_GROUP;
    r.u.MetricInstance.scope = 1;
    add_ok(u, 1, r);
    g = weft_unify_get(u, WEFT_REC_MetricInstance, 0);
    assert_int_equal(g->u.MetricInstance.scope, 1);
    assert_true(g->u.MetricInstance.recorder == (uint64_t)1 << 32);
    r.u.MetricInstance.self = 2;
    r.u.MetricInstance.scope = 2; /* no rank 2 */
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_EREF);
    weft_unify_free(u);
}

static weft_record attribute(OTF2_AttributeRef self, OTF2_StringRef name,
                             OTF2_Type type)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Attribute;
    r.u.Attribute.self = self;
    r.u.Attribute.name = name;
    r.u.Attribute.description = name;
    r.u.Attribute.type = type;
    return r;
}

static void test_attribute_lists(void **state)
{
    weft_unifier *u = two_members();
    weft_unify_scratch s = { 0 };
    OTF2_AttributeRef ids[2] = { 4, 9 };
    OTF2_Type types[2] = { OTF2_TYPE_STRING, OTF2_TYPE_DOUBLE };
    OTF2_AttributeValue values[2];
    weft_record al, ev;
    char err[ERR_MAX];

    (void)state;
    add_ok(u, 0, attribute(0, 0, OTF2_TYPE_DOUBLE));
    add_ok(u, 1, attribute(4, 1, OTF2_TYPE_STRING));
    add_ok(u, 1, attribute(9, 0, OTF2_TYPE_DOUBLE));
    add_ok(u, 1, region(0, 0));
    memset(values, 0, sizeof values);
    values[0].stringRef = 1;
    values[1].float64 = -0.5;
    memset(&al, 0, sizeof al);
    al.type = WEFT_REC_AttributeList;
    al.u.AttributeList.numberOfAttributes = 2;
    al.u.AttributeList.attributes = ids;
    al.u.AttributeList.types = types;
    al.u.AttributeList.values = values;
    memset(&ev, 0, sizeof ev);
    ev.type = WEFT_REC_Enter;
    ev.time = 5;
    ev.attributes = &al;
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err), 0);
    assert_ptr_not_equal(ev.attributes, &al);
    assert_int_equal(ev.attributes->u.AttributeList.attributes[0],
                     global(u, 1, WEFT_REF_ATTRIBUTE, 4));
    assert_int_equal(ev.attributes->u.AttributeList.attributes[1],
                     global(u, 1, WEFT_REF_ATTRIBUTE, 9));
    assert_int_equal(ev.attributes->u.AttributeList.values[0].stringRef,
                     global(u, 1, WEFT_REF_STRING, 1));
    assert_true(ev.attributes->u.AttributeList.values[1].float64 == -0.5);
    assert_int_equal(ids[0], 4); /* the decoder's memory is untouched */
    assert_int_equal(values[0].stringRef, 1);

    ids[1] = 3;
    ev.attributes = &al;
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "AttributeList.attributes = 3"));
    weft_unify_scratch_free(&s);
    weft_unify_free(u);
}

/* Only the id spaces asked for are mapped: the attribute list's ids and
 * string values stay the member's own when only regions are asked for,
 * and an undefined id of a space not asked for is not checked. */
static void test_map_some_kinds(void **state)
{
    weft_unifier *u = two_members();
    weft_unify_scratch s = { 0 };
    OTF2_AttributeRef ids[1] = { 4 };
    OTF2_Type types[1] = { OTF2_TYPE_STRING };
    OTF2_AttributeValue values[1];
    weft_record al, ev;
    char err[ERR_MAX];

    (void)state;
    add_ok(u, 0, attribute(0, 0, OTF2_TYPE_DOUBLE));
    add_ok(u, 1, attribute(4, 1, OTF2_TYPE_STRING));
    add_ok(u, 0, region(0, 0));
    add_ok(u, 1, region(0, 1));
    memset(values, 0, sizeof values);
    values[0].stringRef = 0;
    memset(&al, 0, sizeof al);
    al.type = WEFT_REC_AttributeList;
    al.u.AttributeList.numberOfAttributes = 1;
    al.u.AttributeList.attributes = ids;
    al.u.AttributeList.types = types;
    al.u.AttributeList.values = values;
    memset(&ev, 0, sizeof ev);
    ev.type = WEFT_REC_Enter;
    ev.attributes = &al;
    assert_int_equal(weft_unify_map_event_kinds(u, 1, &ev, &s,
                                                1u << WEFT_REF_REGION, err,
                                                sizeof err), 0);
    assert_int_equal(ev.u.Enter.region, global(u, 1, WEFT_REF_REGION, 0));
    assert_int_equal(ev.attributes->u.AttributeList.attributes[0], 4);
    assert_int_equal(ev.attributes->u.AttributeList.values[0].stringRef, 0);

    ev.attributes = &al;
    ev.u.Enter.region = 0;
    assert_int_equal(weft_unify_map_event_kinds(
                         u, 1, &ev, &s,
                         1u << WEFT_REF_ATTRIBUTE | 1u << WEFT_REF_STRING,
                         err, sizeof err), 0);
    assert_int_equal(ev.u.Enter.region, 0);
    assert_int_equal(ev.attributes->u.AttributeList.attributes[0],
                     global(u, 1, WEFT_REF_ATTRIBUTE, 4));
    assert_int_equal(ev.attributes->u.AttributeList.values[0].stringRef,
                     global(u, 1, WEFT_REF_STRING, 0));

    ev.attributes = NULL;
    ev.u.Enter.region = 7; /* not defined, not asked for */
    assert_int_equal(weft_unify_map_event_kinds(u, 1, &ev, &s,
                                                1u << WEFT_REF_STRING, err,
                                                sizeof err), 0);
    assert_int_equal(ev.u.Enter.region, 7);
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err),
                     WEFT_EREF);
    weft_unify_scratch_free(&s);
    weft_unify_free(u);
}

typedef struct pairs {
    uint64_t local[8], global[8];
    size_t n, stop_at;
} pairs;

static int collect(void *arg, uint64_t local, uint64_t global)
{
    pairs *p = arg;

    if (p->n == p->stop_at)
        return 42;
    assert_true(p->n < 8);
    p->local[p->n] = local;
    p->global[p->n++] = global;
    return 0;
}

/* A member's own ids and what they map to, ids it never defined not
 * among them; a nonzero return stops the walk. */
static void test_each_local(void **state)
{
    weft_unifier *u = two_members();
    pairs p = { .stop_at = 8 };

    (void)state;
    add_ok(u, 1, str(1u << 20, "far"));
    assert_int_equal(weft_unify_each_local(u, 1, WEFT_REF_STRING, collect,
                                           &p), 0);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.local[0], 0);
    assert_int_equal(p.global[0], global(u, 1, WEFT_REF_STRING, 0));
    assert_int_equal(p.local[1], 1);
    assert_int_equal(p.global[1], global(u, 1, WEFT_REF_STRING, 1));
    assert_int_equal(p.local[2], 1u << 20);
    assert_int_equal(p.global[2], global(u, 1, WEFT_REF_STRING, 1u << 20));
    p.n = 0;
    assert_int_equal(weft_unify_each_local(u, 1, WEFT_REF_REGION, collect,
                                           &p), 0);
    assert_int_equal(p.n, 0);
    assert_int_equal(weft_unify_each_local(u, 7, WEFT_REF_STRING, collect,
                                           &p), 0);
    p.stop_at = 1;
    assert_int_equal(weft_unify_each_local(u, 0, WEFT_REF_STRING, collect,
                                           &p), 42);
    assert_int_equal(p.n, 1);
    weft_unify_free(u);
}

/* A file of system tree node `scope` named by string 0. */
static weft_record file_in(uint64_t self, OTF2_SystemTreeNodeRef scope)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_IoRegularFile;
    r.u.IoRegularFile.self = self;
    r.u.IoRegularFile.name = 0;
    r.u.IoRegularFile.scope = scope;
    return r;
}

static void test_derived_own(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_record r = file_in(0, 1);
    char err[ERR_MAX];

    (void)state;
    add_ok(u, 3, str(0, "/tmp/f"));
    /* off: node 1 of member 3 means nothing yet */
    assert_int_equal(weft_unify_add_def(u, 3, &r, err, sizeof err),
                     WEFT_EREF);
    weft_unify_derived_own(u, 1);
    add_ok(u, 3, file_in(0, 1));
    assert_int_equal(weft_unify_get(u, WEFT_REC_IoRegularFile, 0)
                         ->u.IoRegularFile.scope, 1);
    /* a mapping still applies */
    assert_int_equal(weft_unify_set_derived(u, 3, WEFT_REF_SYSTEM_TREE_NODE,
                                            2, 7, err, sizeof err), 0);
    add_ok(u, 3, file_in(1, 2));
    assert_int_equal(weft_unify_get(u, WEFT_REC_IoRegularFile, 1)
                         ->u.IoRegularFile.scope, 7);
    weft_unify_free(u);
}

static void test_compose(void **state)
{
    weft_unifier *all = two_members(), *own = weft_unify_new(0);
    uint32_t *v = NULL;
    size_t n = 0;
    char err[ERR_MAX];

    (void)state;
    /* member 1 alone: "mpi" 0, "MPI" 1, and "mpi" again as local 2 */
    add_ok(own, 1, str(0, "mpi"));
    add_ok(own, 1, str(1, "MPI"));
    add_ok(own, 1, str(2, "mpi"));
    add_ok(all, 1, str(2, "mpi"));
    assert_int_equal(weft_unify_compose(own, all, 1, WEFT_REF_STRING, &v, &n,
                                        err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[0], global(all, 1, WEFT_REF_STRING, 0));
    assert_int_equal(v[1], global(all, 1, WEFT_REF_STRING, 1));
    assert_int_equal(v[0], 1);  /* member 0 named "mpi" second */
    free(v);
    /* no regions: nothing */
    assert_int_equal(weft_unify_compose(own, all, 1, WEFT_REF_REGION, &v, &n,
                                        err, sizeof err), 0);
    assert_null(v);
    assert_int_equal(n, 0);
    /* a member the other unifier has not: none of its ids is there */
    assert_int_equal(weft_unify_compose(own, all, 5, WEFT_REF_STRING, &v, &n,
                                        err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[0], WEFT_UNIFY_NO_ID);
    assert_int_equal(v[1], WEFT_UNIFY_NO_ID);
    free(v);
    /* one id of `own` that is two of `all`'s */
    add_ok(own, 1, str(3, "x"));
    add_ok(own, 1, str(4, "x"));
    add_ok(all, 1, str(3, "x"));
    add_ok(all, 1, str(4, "y"));
    assert_int_equal(weft_unify_compose(own, all, 1, WEFT_REF_STRING, &v, &n,
                                        err, sizeof err), WEFT_ECONFLICT);
    assert_null(v);
    if (!strstr(err, "member 1: ") || !strstr(err, " 4 is "))
        fail_msg("%s", err);
    weft_unify_free(own);
    weft_unify_free(all);
}

static void test_local_definitions_not_unified(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_record r;
    char err[ERR_MAX];

    (void)state;
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockOffset;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    assert_non_null(strstr(err, "ClockOffset"));
    assert_int_equal(weft_unify_add_global(u, &r, NULL, err, sizeof err),
                     WEFT_ETYPE);
    r.type = WEFT_REC_AttributeList;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    weft_unify_free(u);
}

/* Every client definition and every event of the table, all references
 * 0 (defined first, in table order of id spaces), goes through. */
static void test_every_kind(void **state)
{
    size_t n, defs = 0, events = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    weft_unifier *u = weft_unify_new(0);
    weft_unify_scratch s = { 0 };
    uint64_t elems[16];
    uint64_t self[256], next[WEFT_REF__COUNT] = { 0 };
    char err[ERR_MAX];

    (void)state;
    /* Ids 0, 1, ... per id space, for records sharing one (MetricClass and
     * MetricInstance, Comm and InterComm, IoRegularFile and IoDirectory). */
    assert_true(n <= 256);
    for (size_t i = 0; i < n; i++)
        if (all[i]->self_field >= 0)
            self[i] = next[all[i]->fields[all[i]->self_field].ref]++;
    assert_int_equal(weft_unify_set_derived(u, WEFT_UNIFY_ALL,
                                            WEFT_REF_SYSTEM_TREE_NODE, 0, 0,
                                            err, sizeof err), 0);
    assert_int_equal(weft_unify_set_derived(u, WEFT_UNIFY_ALL,
                                            WEFT_REF_LOCATION_GROUP, 0, 0,
                                            err, sizeof err), 0);
    /* Definitions twice: what refers to a kind defined later in the table
     * gets its turn once everything has an id 0; then the events. */
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < n; i++) {
            const weft_rec_desc *d = all[i];
            weft_record r;
            unsigned na = 0;
            int rc;
            if (d->is_pseudo || (d->flags & (WEFT_DF_DAEMON | WEFT_DF_LOCAL)))
                continue;
            if (!d->is_event && round == 2)
                continue;
            if (d->is_event && round < 2)
                continue;
            memset(&r, 0, sizeof r);
            memset(elems, 0, sizeof elems);
            r.type = d->type;
            for (unsigned k = 0; k < d->nfields; k++) {
                const weft_field_desc *f = &d->fields[k];
                if (f->wire == WEFT_WIRE_Z) {
                    const char *z = "";
                    memcpy(weft_field_ptr(&r, f), &z, sizeof z);
                } else if (f->is_array) {
                    const void *p = &elems[na++];
                    memcpy(weft_field_ptr(&r, f), &p, sizeof p);
                }
            }
            for (unsigned k = 0; k < d->nfields; k++) /* one element each */
                for (unsigned a = 0; a < d->nfields; a++)
                    if (d->fields[a].is_array &&
                        d->fields[a].count_offset == d->fields[k].offset)
                        weft_field_set(&r, &d->fields[k], 1);
            if (d->self_field >= 0) {
                unsigned kind = d->fields[d->self_field].ref;
                weft_field_set(&r, &d->fields[d->self_field], self[i]);
                for (unsigned k = 0; k < d->nfields; k++) /* parents */
                    if (!d->fields[k].is_self && !d->fields[k].is_array &&
                        d->fields[k].ref == kind)
                        weft_field_set(&r, &d->fields[k],
                                       weft_ref_kind_undefined(kind));
            }
            if (d->is_event) {
                rc = weft_unify_map_event(u, 0, &r, &s, err, sizeof err);
                if (rc != 0)
                    fail_msg("%s: %s", d->name, err);
                events++;
                continue;
            }
            rc = weft_unify_add_def(u, 0, &r, err, sizeof err);
            if (rc == WEFT_EREF && round == 0)
                continue;
            if (rc != 0)
                fail_msg("%s: %s", d->name, err);
            defs += round == 1;
        }
    }
    assert_true(defs >= 30);
    assert_int_equal(events, WEFT_EVENT_KINDS);
    weft_unify_scratch_free(&s);
    weft_unify_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyed_identical_merged),
        cmocka_unit_test(test_keyed_conflict),
        cmocka_unit_test(test_typed_values),
        cmocka_unit_test(test_nature_ids),
        cmocka_unit_test(test_group_members),
        cmocka_unit_test(test_derived),
        cmocka_unit_test(test_attribute_lists),
        cmocka_unit_test(test_map_some_kinds),
        cmocka_unit_test(test_each_local),
        cmocka_unit_test(test_derived_own),
        cmocka_unit_test(test_compose),
        cmocka_unit_test(test_local_definitions_not_unified),
        cmocka_unit_test(test_every_kind),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
