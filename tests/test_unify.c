/* test_unify.c - definition unification (daemon/convert/unify.c).
 *
 * Identical definitions from members that number them differently get
 * the same dense, first-seen global ids; different content gets different
 * ids; events and array references are mapped; undefined references,
 * redefinitions, daemon-only records and limits are refused with messages
 * that name member, record, field and value. (Conversion of journals to
 * an archive is tested in test_convert.c.)
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
#include "testutil.h"
#include "unify.h"
#include "weft_errors.h"

static void add_ok(weft_unifier *u, uint32_t member, weft_record r)
{
    char err[256] = "";
    int rc = weft_unify_add_def(u, member, &r, err, sizeof err);

    if (rc != 0)
        print_error("add_def: %s\n", err);
    assert_int_equal(rc, 0);
}

static uint64_t global(const weft_unifier *u, uint32_t member, unsigned kind,
                       uint64_t local)
{
    uint64_t g = 12345;

    assert_int_equal(weft_unify_lookup(u, member, kind, local, &g), 0);
    return g;
}

/* ---- unification -------------------------------------------------------- */

static void define_two_members(weft_unifier *u)
{
    char main_buf[] = "main";

    /* Member 0: main = 0, foo = 1. Member 1: foo = 5, main = 3. */
    add_ok(u, 0, str(0, main_buf));
    add_ok(u, 0, str(1, "foo"));
    add_ok(u, 0, region(0, 0, 10));
    add_ok(u, 0, region(1, 1, 20));
    add_ok(u, 1, str(5, "foo"));
    add_ok(u, 1, str(3, "main"));
    add_ok(u, 1, region(7, 5, 20));
    add_ok(u, 1, region(2, 3, 10));
    /* Strings are copied: the caller's buffer is not kept. */
    strcpy(main_buf, "XXXX");
}

static void test_same_content_same_ids(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    const weft_record *r;

    (void)state;
    assert_non_null(u);
    define_two_members(u);
    assert_int_equal(weft_unify_count(u, WEFT_REC_String), 2);
    assert_int_equal(weft_unify_count(u, WEFT_REC_Region), 2);
    assert_int_equal(global(u, 0, WEFT_REF_STRING, 0), 0);
    assert_int_equal(global(u, 0, WEFT_REF_STRING, 1), 1);
    assert_int_equal(global(u, 1, WEFT_REF_STRING, 3), 0);
    assert_int_equal(global(u, 1, WEFT_REF_STRING, 5), 1);
    assert_int_equal(global(u, 1, WEFT_REF_REGION, 2), 0);
    assert_int_equal(global(u, 1, WEFT_REF_REGION, 7), 1);

    /* Dense, first-seen, global ids inside the stored records. */
    r = weft_unify_get(u, WEFT_REC_String, 0);
    assert_non_null(r);
    assert_int_equal(r->u.String.self, 0);
    assert_string_equal(r->u.String.string, "main");
    r = weft_unify_get(u, WEFT_REC_String, 1);
    assert_string_equal(r->u.String.string, "foo");
    r = weft_unify_get(u, WEFT_REC_Region, 1);
    assert_int_equal(r->u.Region.self, 1);
    assert_int_equal(r->u.Region.name, 1);
    assert_int_equal(r->u.Region.description, OTF2_UNDEFINED_STRING);
    assert_null(weft_unify_get(u, WEFT_REC_Region, 2));
    assert_int_equal(weft_unify_ndefs(u), 4);
    assert_int_equal(weft_unify_lookup(u, 1, WEFT_REF_STRING, 4,
                                       &(uint64_t){ 0 }), WEFT_ENOTFOUND);
    assert_int_equal(weft_unify_lookup(u, 9, WEFT_REF_STRING, 0,
                                       &(uint64_t){ 0 }), WEFT_ENOTFOUND);
    weft_unify_free(u);
}

static void test_different_content_different_ids(void **state)
{
    weft_unifier *u = weft_unify_new(0);

    (void)state;
    define_two_members(u);
    /* Same name, other lines: a different region. */
    add_ok(u, 2, str(0, "main"));
    add_ok(u, 2, region(0, 0, 11));
    assert_int_equal(global(u, 2, WEFT_REF_REGION, 0), 2);
    /* "Main" is not "main". */
    add_ok(u, 2, str(1, "Main"));
    assert_int_equal(global(u, 2, WEFT_REF_STRING, 1), 2);
    /* Same local id in another id space is independent. */
    add_ok(u, 2, region(1, 1, 10));
    assert_int_equal(global(u, 2, WEFT_REF_REGION, 1), 3);
    assert_int_equal(weft_unify_count(u, WEFT_REC_Region), 4);
    /* The empty string is a string like any other. */
    add_ok(u, 2, str(2, ""));
    assert_int_equal(global(u, 2, WEFT_REF_STRING, 2), 3);
    weft_unify_free(u);
}

static void test_map_events(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_unify_scratch s = { 0 };
    OTF2_MetricMemberRef mm0[] = { 0, 1 };
    OTF2_Type types[] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_MetricValue values[2] = { { .unsigned_int = 7 },
                                   { .unsigned_int = 8 } };
    weft_record ev;
    char err[256];

    (void)state;
    define_two_members(u);
    add_ok(u, 1, metric_member(0, 3));
    add_ok(u, 1, metric_member(1, 5));
    add_ok(u, 1, metric_class(4, 2, mm0));

    ev = enter(100, 7, 0);
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err), 0);
    assert_int_equal(ev.u.Enter.region, 1);
    assert_int_equal(ev.time, 100);
    ev = enter(101, 2, 1);
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err), 0);
    assert_int_equal(ev.u.Leave.region, 0);

    ev = metric_event(102, 4, 2, types, values);
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err), 0);
    assert_int_equal(ev.u.Metric.metric, 0);
    /* Value arrays are not references: untouched, same memory. */
    assert_ptr_equal(ev.u.Metric.typeIDs, types);
    assert_ptr_equal(ev.u.Metric.metricValues, values);

    /* The undefined region stays undefined. */
    ev = enter(103, OTF2_UNDEFINED_REGION, 0);
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err), 0);
    assert_int_equal(ev.u.Enter.region, OTF2_UNDEFINED_REGION);

    /* A definition is not an event. */
    ev = str(0, "x");
    assert_int_equal(weft_unify_map_event(u, 1, &ev, &s, err, sizeof err),
                     WEFT_ETYPE);
    weft_unify_scratch_free(&s);
    weft_unify_free(u);
}

static void test_undefined_reference(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_unify_scratch s = { 0 };
    weft_record r;
    char err[256] = "";

    (void)state;
    define_two_members(u);
    r = region(3, 9, 1);
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "member 1"));
    assert_non_null(strstr(err, "Region.name = 9"));
    assert_non_null(strstr(err, "STRING"));
    /* Nothing was added. */
    assert_int_equal(weft_unify_count(u, WEFT_REC_Region), 2);
    assert_int_equal(weft_unify_lookup(u, 1, WEFT_REF_REGION, 3,
                                       &(uint64_t){ 0 }), WEFT_ENOTFOUND);

    /* Member 0 defined string 0, member 1 did not: ids are per member. */
    r = region(3, 0, 1);
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_EREF);

    /* Events: a region of another member, a member that defined nothing. */
    err[0] = 0;
    r = enter(5, 1, 0);
    assert_int_equal(weft_unify_map_event(u, 1, &r, &s, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "member 1: Enter.region = 1"));
    r = enter(5, 0, 1);
    assert_int_equal(weft_unify_map_event(u, 8, &r, &s, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "member 8: Leave.region = 0"));

    /* Defining the undefined id itself. */
    r = str(OTF2_UNDEFINED_STRING, "u");
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_EREF);
    /* err may be NULL. */
    r = region(3, 9, 1);
    assert_int_equal(weft_unify_add_def(u, 1, &r, NULL, 0), WEFT_EREF);
    weft_unify_scratch_free(&s);
    weft_unify_free(u);
}

static void test_redefinition(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_record r;
    char err[256] = "";

    (void)state;
    define_two_members(u);
    /* A resend of the same definition is fine. */
    add_ok(u, 1, str(5, "foo"));
    add_ok(u, 1, region(7, 5, 20));
    assert_int_equal(weft_unify_count(u, WEFT_REC_String), 2);
    /* Same local id, other content. */
    r = str(5, "bar");
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_EEXIST);
    assert_non_null(strstr(err, "member 1: String self = 5"));
    assert_non_null(strstr(err, "bar"));
    assert_int_equal(weft_unify_count(u, WEFT_REC_String), 2);
    assert_int_equal(global(u, 1, WEFT_REF_STRING, 5), 1);
    /* Other content that exists globally under another id. */
    r = region(7, 3, 10);
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_EEXIST);
    assert_int_equal(global(u, 1, WEFT_REF_REGION, 7), 1);
    /* Two local ids with the same content share a global id. */
    add_ok(u, 1, str(9, "foo"));
    assert_int_equal(global(u, 1, WEFT_REF_STRING, 9), 1);
    weft_unify_free(u);
}

static void test_metric_class_arrays(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    OTF2_MetricMemberRef m0[] = { 0, 1 };
    OTF2_MetricMemberRef m1[] = { 6, 2 };
    OTF2_MetricMemberRef m1_copy[] = { 6, 2 };
    OTF2_MetricMemberRef bad[] = { 6, 3 };
    const weft_record *r;
    weft_record d;
    char err[256] = "";

    (void)state;
    /* Both members: cycles, instructions; member 1 numbers them 6, 2. */
    add_ok(u, 0, str(0, "cycles"));
    add_ok(u, 0, str(1, "instructions"));
    add_ok(u, 0, metric_member(0, 0));
    add_ok(u, 0, metric_member(1, 1));
    add_ok(u, 0, metric_class(0, 2, m0));
    add_ok(u, 1, str(0, "instructions"));
    add_ok(u, 1, str(1, "cycles"));
    add_ok(u, 1, metric_member(2, 0));
    add_ok(u, 1, metric_member(6, 1));
    add_ok(u, 1, metric_class(3, 2, m1));
    /* The caller's array was not written through. */
    assert_memory_equal(m1, m1_copy, sizeof m1);
    assert_int_equal(weft_unify_count(u, WEFT_REC_MetricMember), 2);
    assert_int_equal(weft_unify_count(u, WEFT_REC_MetricClass), 1);
    assert_int_equal(global(u, 1, WEFT_REF_METRIC, 3), 0);
    r = weft_unify_get(u, WEFT_REC_MetricClass, 0);
    assert_int_equal(r->u.MetricClass.numberOfMetrics, 2);
    assert_int_equal(r->u.MetricClass.metricMembers[0], 0);
    assert_int_equal(r->u.MetricClass.metricMembers[1], 1);
    assert_true(r->u.MetricClass.metricMembers != m0);

    /* Reversed order is other content. */
    {
        OTF2_MetricMemberRef rev[] = { 2, 6 };
        add_ok(u, 1, metric_class(4, 2, rev));
        assert_int_equal(global(u, 1, WEFT_REF_METRIC, 4), 1);
        r = weft_unify_get(u, WEFT_REC_MetricClass, 1);
        assert_int_equal(r->u.MetricClass.metricMembers[0], 1);
        assert_int_equal(r->u.MetricClass.metricMembers[1], 0);
    }
    /* An undefined element is named. */
    d = metric_class(5, 2, bad);
    assert_int_equal(weft_unify_add_def(u, 1, &d, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "MetricClass.metricMembers = 3"));
    /* An empty class. */
    add_ok(u, 0, metric_class(1, 0, NULL));
    r = weft_unify_get(u, WEFT_REC_MetricClass, 2);
    assert_int_equal(r->u.MetricClass.numberOfMetrics, 0);
    weft_unify_free(u);
}

static void test_daemon_definitions_rejected(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_record r;
    char err[256] = "";

    (void)state;
    add_ok(u, 0, str(0, "n"));
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockProperties;
    r.u.ClockProperties.timerResolution = 1000;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    assert_string_equal(err, "member 0: ClockProperties definitions are "
                        "made by weftd, not sent by members");
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockOffset;    /* a location's own */
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    assert_string_equal(err, "member 0: ClockOffset definitions belong to "
                        "locations and are not unified");
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_SystemTreeNode;
    r.u.SystemTreeNode.parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_LocationGroup;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Location;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    assert_non_null(strstr(err, "member 0: Location"));
    /* Events and unknown types are not definitions. */
    r = enter(1, 0, 0);
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    r.type = 0x3000;
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ETYPE);
    assert_int_equal(weft_unify_ndefs(u), 1);
    weft_unify_free(u);
}

static void test_limits(void **state)
{
    weft_unifier *u = weft_unify_new(4);
    weft_record r;
    char err[256] = "";

    (void)state;
    /* Local ids. */
    r = str(4, "a");
    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err),
                     WEFT_ELIMIT);
    assert_non_null(strstr(err, "String.self = 4"));
    add_ok(u, 0, str(3, "a"));
    /* Member numbers. */
    r = str(0, "a");
    assert_int_equal(weft_unify_add_def(u, 4, &r, err, sizeof err),
                     WEFT_ELIMIT);
    /* Global definitions per id space. */
    add_ok(u, 0, str(0, "b"));
    add_ok(u, 0, str(1, "c"));
    add_ok(u, 0, str(2, "d"));
    r = str(0, "e");
    assert_int_equal(weft_unify_add_def(u, 1, &r, err, sizeof err),
                     WEFT_ELIMIT);
    assert_non_null(strstr(err, "STRING"));
    /* Known content still maps. */
    add_ok(u, 1, str(0, "c"));
    assert_int_equal(global(u, 1, WEFT_REF_STRING, 0), 2);
    /* Other id spaces have their own count. */
    add_ok(u, 1, region(3, 0, 1));
    weft_unify_free(u);
}

static void test_add_global(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_record r;
    uint64_t gid = 99;
    char err[256] = "";

    (void)state;
    define_two_members(u);
    r = str(0, "foo");
    assert_int_equal(weft_unify_add_global(u, &r, &gid, err, sizeof err), 0);
    assert_int_equal(gid, 1);
    r = str(77, "weft");
    assert_int_equal(weft_unify_add_global(u, &r, &gid, err, sizeof err), 0);
    assert_int_equal(gid, 2);
    /* A member later defining the same string gets the same id. */
    add_ok(u, 1, str(8, "weft"));
    assert_int_equal(global(u, 1, WEFT_REF_STRING, 8), 2);
    /* References are global ids and must exist. */
    r = region(0, 2, 5);
    assert_int_equal(weft_unify_add_global(u, &r, &gid, err, sizeof err), 0);
    assert_int_equal(gid, 2);
    r = region(0, 3, 5);
    assert_int_equal(weft_unify_add_global(u, &r, &gid, err, sizeof err),
                     WEFT_EREF);
    assert_non_null(strstr(err, "Region.name = 3"));
    weft_unify_free(u);
}

static void test_first_seen_order_is_dependency_safe(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    OTF2_MetricMemberRef mm[] = { 0 };
    size_t seen_strings = 0, seen_members = 0;

    (void)state;
    add_ok(u, 0, str(0, "m"));
    add_ok(u, 0, metric_member(0, 0));
    add_ok(u, 0, metric_class(0, 1, mm));
    add_ok(u, 0, str(1, "r"));
    add_ok(u, 0, region(0, 1, 1));
    assert_int_equal(weft_unify_ndefs(u), 5);
    for (size_t i = 0; i < weft_unify_ndefs(u); i++) {
        const weft_record *r = weft_unify_def(u, i);
        if (r->type == WEFT_REC_String)
            seen_strings++;
        if (r->type == WEFT_REC_MetricMember) {
            assert_true(r->u.MetricMember.name < seen_strings);
            seen_members++;
        }
        if (r->type == WEFT_REC_MetricClass)
            assert_true(r->u.MetricClass.metricMembers[0] < seen_members);
        if (r->type == WEFT_REC_Region)
            assert_true(r->u.Region.name < seen_strings);
    }
    assert_null(weft_unify_def(u, 5));
    weft_unify_free(u);
}

/* A COMM_GROUP of world ranks and a Comm on it, as libweft-mpi sends them. */
static weft_record comm_group(uint64_t self, uint64_t *ranks, uint32_t n)
{
    weft_record r = { .type = WEFT_REC_Group };

    r.u.Group.self = self;
    r.u.Group.name = OTF2_UNDEFINED_STRING;
    r.u.Group.groupType = OTF2_GROUP_TYPE_COMM_GROUP;
    r.u.Group.paradigm = OTF2_PARADIGM_MPI;
    r.u.Group.numberOfMembers = n;
    r.u.Group.members = ranks;
    return r;
}

static weft_record comm(uint64_t self, uint64_t group, uint64_t identity)
{
    weft_record r = { .type = WEFT_REC_Comm };

    r.u.Comm.self = self;
    r.u.Comm.name = OTF2_UNDEFINED_STRING;
    r.u.Comm.group = group;
    r.u.Comm.parent = OTF2_UNDEFINED_COMM;
    r.u.Comm.identity = identity;
    return r;
}

/* Communicators are one Comm when their members agree on the identity
 * and the group, whatever local ids they use; two communicators with
 * the same members but another identity (two Comm_dups of the world)
 * stay two. */
static void test_comm_identity(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    uint64_t world[2] = { 0, 1 }, one[1] = { 1 };

    (void)state;
    for (uint32_t m = 0; m < 2; m++) {
        add_ok(u, m, comm_group(m, world, 2));
        /* the world, then two dups of it; member 1 numbers them 7, 5, 6 */
        add_ok(u, m, comm(m ? 7 : 0, m, 100));
        add_ok(u, m, comm(m ? 5 : 1, m, 101));
        add_ok(u, m, comm(m ? 6 : 2, m, 102));
    }
    assert_int_equal(weft_unify_count(u, WEFT_REC_Group), 1);
    assert_int_equal(weft_unify_count(u, WEFT_REC_Comm), 3);
    assert_int_equal(global(u, 1, WEFT_REF_COMM, 7), global(u, 0, WEFT_REF_COMM, 0));
    assert_int_equal(global(u, 1, WEFT_REF_COMM, 5), global(u, 0, WEFT_REF_COMM, 1));
    assert_int_equal(global(u, 1, WEFT_REF_COMM, 6), global(u, 0, WEFT_REF_COMM, 2));
    assert_int_not_equal(global(u, 0, WEFT_REF_COMM, 1), global(u, 0, WEFT_REF_COMM, 2));
    /* Same identity, other members (the other color of a Comm_split):
     * another communicator. */
    add_ok(u, 1, comm_group(9, one, 1));
    add_ok(u, 1, comm(8, 9, 101));
    assert_int_equal(weft_unify_count(u, WEFT_REC_Comm), 4);

    /* CommName renames the unified Comm (the first one wins) and adds
     * nothing; one naming no communicator is refused. */
    {
        weft_record n = { .type = WEFT_REC_CommName };
        const weft_record *c;
        char err[256] = "";

        add_ok(u, 1, str(20, "rows"));
        add_ok(u, 0, str(21, "cols"));
        n.u.CommName.comm = 5;
        n.u.CommName.name = 20;
        add_ok(u, 1, n);
        n.u.CommName.comm = 1;
        n.u.CommName.name = 21;
        add_ok(u, 0, n);
        c = weft_unify_get(u, WEFT_REC_Comm, global(u, 0, WEFT_REF_COMM, 1));
        assert_int_equal(c->u.Comm.name, global(u, 1, WEFT_REF_STRING, 20));
        assert_int_equal(c->u.Comm.identity, 101);
        assert_int_equal(weft_unify_count(u, WEFT_REC_Comm), 4);
        n.u.CommName.comm = 7777;
        assert_int_equal(weft_unify_add_def(u, 0, &n, err, sizeof err),
                         WEFT_EREF);
        print_message("refused: %s\n", err);
    }
    weft_unify_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_content_same_ids),
        cmocka_unit_test(test_different_content_different_ids),
        cmocka_unit_test(test_map_events),
        cmocka_unit_test(test_undefined_reference),
        cmocka_unit_test(test_redefinition),
        cmocka_unit_test(test_metric_class_arrays),
        cmocka_unit_test(test_daemon_definitions_rejected),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_add_global),
        cmocka_unit_test(test_first_seen_order_is_dependency_safe),
        cmocka_unit_test(test_comm_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
