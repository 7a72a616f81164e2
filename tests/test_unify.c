/* test_unify.c - definition unification (daemon/unify.c) and, end to end
 * on hand-written journals, trace conversion (daemon/convert.c).
 *
 * Unification: identical definitions from members that number them
 * differently get the same dense, first-seen global ids; different
 * content gets different ids; events and array references are mapped;
 * undefined references, redefinitions, daemon-only records and limits are
 * refused with messages that name member, record, field and value.
 * Conversion: two members' journals (with resent entries) become an
 * archive that `otf2-print -Werror` accepts, with the expected figures;
 * and decreasing timestamps, a corrupt tail, a wrong trace size and an
 * undefined reference each fail with a message naming the journal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec.h"
#include "convert.h"
#include "journal.h"
#include "record.h"
#include "unify.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* ---- record builders ---------------------------------------------------- */

static weft_record str(OTF2_StringRef self, const char *s)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_String;
    r.u.String.self = self;
    r.u.String.string = s;
    return r;
}

static weft_record region(OTF2_RegionRef self, OTF2_StringRef name,
                          uint32_t line)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Region;
    r.u.Region.self = self;
    r.u.Region.name = name;
    r.u.Region.canonicalName = name;
    r.u.Region.description = OTF2_UNDEFINED_STRING;
    r.u.Region.regionRole = OTF2_REGION_ROLE_FUNCTION;
    r.u.Region.paradigm = OTF2_PARADIGM_COMPILER;
    r.u.Region.regionFlags = OTF2_REGION_FLAG_NONE;
    r.u.Region.sourceFile = OTF2_UNDEFINED_STRING;
    r.u.Region.beginLineNumber = line;
    r.u.Region.endLineNumber = line + 10;
    return r;
}

static weft_record metric_member(OTF2_MetricMemberRef self,
                                 OTF2_StringRef name)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricMember;
    r.u.MetricMember.self = self;
    r.u.MetricMember.name = name;
    r.u.MetricMember.description = name;
    r.u.MetricMember.metricType = OTF2_METRIC_TYPE_OTHER;
    r.u.MetricMember.metricMode = OTF2_METRIC_ACCUMULATED_START;
    r.u.MetricMember.valueType = OTF2_TYPE_UINT64;
    r.u.MetricMember.base = OTF2_BASE_DECIMAL;
    r.u.MetricMember.exponent = 0;
    r.u.MetricMember.unit = name;
    return r;
}

static weft_record metric_class(OTF2_MetricRef self, uint8_t n,
                                const OTF2_MetricMemberRef *members)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricClass;
    r.u.MetricClass.self = self;
    r.u.MetricClass.numberOfMetrics = n;
    r.u.MetricClass.metricMembers = members;
    r.u.MetricClass.metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT;
    r.u.MetricClass.recorderKind = OTF2_RECORDER_KIND_CPU;
    return r;
}

static weft_record enter(uint64_t t, OTF2_RegionRef reg, int leave)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = leave ? WEFT_REC_Leave : WEFT_REC_Enter;
    r.time = t;
    if (leave)
        r.u.Leave.region = reg;
    else
        r.u.Enter.region = reg;
    return r;
}

static weft_record metric_event(uint64_t t, OTF2_MetricRef m, uint8_t n,
                                const OTF2_Type *types,
                                const OTF2_MetricValue *values)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Metric;
    r.time = t;
    r.u.Metric.metric = m;
    r.u.Metric.numberOfMetrics = n;
    r.u.Metric.typeIDs = types;
    r.u.Metric.metricValues = values;
    return r;
}

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
    assert_non_null(strstr(err, "ClockProperties"));
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

/* ---- conversion --------------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void put_rec(bytes *b, const weft_record *r, uint64_t *prev)
{
    size_t need = weft_encode_bound(r);
    ssize_t k;

    if (b->n + need > b->cap) {
        b->cap = (b->n + need) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    k = weft_encode(r, prev, b->p + b->n, b->cap - b->n);
    assert_true(k > 0);
    b->n += (size_t)k;
}

typedef struct ctx {
    char dir[64];
    char trace[96];
    char archive[96];
} ctx;

static int conv_setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);

    assert_non_null(c);
    snprintf(c->dir, sizeof c->dir, "/tmp/wutest.XXXXXX");
    assert_non_null(mkdtemp(c->dir));
    snprintf(c->trace, sizeof c->trace, "%s/spool", c->dir);
    snprintf(c->archive, sizeof c->archive, "%s/archive", c->dir);
    assert_int_equal(mkdir(c->trace, 0700), 0);
    *state = c;
    return 0;
}

static int conv_teardown(void **state)
{
    ctx *c = *state;
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    assert_int_equal(system(cmd), 0);
    free(c);
    return 0;
}

static void append(weft_journal *j, uint8_t kind, uint32_t location,
                   uint32_t count, uint64_t seq, uint64_t base,
                   const void *p, size_t n)
{
    weft_journal_entry e;

    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.location = location;
    e.count = count;
    e.seq = seq;
    e.base_time = base;
    e.payload = p;
    e.len = (uint32_t)n;
    assert_int_equal(weft_journal_append(j, &e), 0);
}

static void append_hello(weft_journal *j, uint32_t rank, uint32_t size,
                         const char *host)
{
    Weft__Hello h = WEFT__HELLO__INIT;
    uint8_t buf[256];
    size_t n;

    h.protocol_version = 1;
    h.trace = (char *)"smoke";
    h.rank = rank;
    h.size = size;
    h.hostname = (char *)host;
    h.pid = 1000 + rank;
    h.timer_resolution = 1000000000;
    h.realtime_ns = 1700000000000000000ull;
    h.clock_at_realtime = 50;
    assert_true(weft__hello__get_packed_size(&h) <= sizeof buf);
    n = weft__hello__pack(&h, buf);
    append(j, WEFT_JE_HELLO, 0, 0, 0, 0, buf, n);
}

static void append_goodbye(weft_journal *j, uint32_t nloc,
                           const uint32_t *threads, const uint64_t *events,
                           const uint64_t *dropped)
{
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd ends[4];
    Weft__LocationEnd *pends[4];
    uint8_t buf[256];
    size_t n;

    assert_true(nloc <= 4);
    for (uint32_t i = 0; i < nloc; i++) {
        Weft__LocationEnd init = WEFT__LOCATION_END__INIT;
        ends[i] = init;
        ends[i].location = threads[i];
        ends[i].events = events[i];
        ends[i].dropped = dropped[i];
        pends[i] = &ends[i];
    }
    g.n_locations = nloc;
    g.locations = pends;
    n = weft__goodbye__pack(&g, buf);
    append(j, WEFT_JE_GOODBYE, 0, 0, 0, 0, buf, n);
}

/* Appends an event batch of n records. */
static void append_events(weft_journal *j, uint32_t thread, uint64_t seq,
                          uint64_t base, const weft_record *evs, size_t n)
{
    bytes b = { 0 };
    uint64_t prev = base;

    for (size_t i = 0; i < n; i++)
        put_rec(&b, &evs[i], &prev);
    append(j, WEFT_JE_EVENTS, thread, (uint32_t)n, seq, base, b.p, b.n);
    free(b.p);
}

static weft_journal *open_journal(const ctx *c, uint32_t rank)
{
    char path[160];
    weft_journal *j = NULL;

    snprintf(path, sizeof path, "%s/rank-%" PRIu32 ".wj", c->trace, rank);
    assert_int_equal(weft_journal_open(path, &j, NULL), 0);
    return j;
}

/* Rank 0: strings main, foo; regions main (0), foo (1); one metric.
 * Thread 0: two batches (the first resent), thread 3: one batch.
 * Rank 1: the same names numbered the other way round, one thread. */
static void write_member0(const ctx *c, uint64_t second_base)
{
    weft_journal *j = open_journal(c, 0);
    OTF2_MetricMemberRef mm[] = { 0 };
    OTF2_Type types[] = { OTF2_TYPE_UINT64 };
    OTF2_MetricValue vals[] = { { .unsigned_int = 42 } };
    weft_record defs[] = {
        str(0, "main"), str(1, "foo"), region(0, 0, 1), region(1, 1, 20),
        str(2, "cycles"), metric_member(0, 2), metric_class(0, 1, mm),
    };
    weft_record b1[] = {
        enter(100, 0, 0), enter(110, 1, 0),
        metric_event(111, 0, 1, types, vals), enter(120, 1, 1),
    };
    weft_record b2[] = { enter(second_base, 1, 0),
                         enter(second_base + 5, 1, 1),
                         enter(second_base + 9, 0, 1) };
    weft_record t3[] = { enter(105, 1, 0), enter(106, 1, 1) };
    /* Thread 5 recorded nothing it could send. */
    uint32_t threads[] = { 0, 3, 5 };
    uint64_t events[] = { 7, 2, 0 }, dropped[] = { 4, 0, 2 };
    bytes b = { 0 };

    append_hello(j, 0, 2, "node-a");
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        put_rec(&b, &defs[i], NULL);
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n);
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n); /* resent */
    free(b.p);
    append_events(j, 0, 1, 90, b1, 4);
    append_events(j, 3, 1, 100, t3, 2);
    append_events(j, 0, 1, 90, b1, 4); /* resent */
    append_events(j, 0, 2, second_base, b2, 3);
    append_goodbye(j, 3, threads, events, dropped);
    weft_journal_close(j);
}

static void write_member1(const ctx *c, uint32_t size, int undefined_ref)
{
    weft_journal *j = open_journal(c, 1);
    weft_record defs[] = { str(4, "foo"), str(9, "main"), region(5, 9, 1),
                           region(2, 4, 20) };
    weft_record evs[] = { enter(95, 5, 0), enter(96, 2, 0),
                          enter(97, 2, 1),
                          enter(98, undefined_ref ? 3 : 5, 1) };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { 4 }, dropped[] = { 1 };
    bytes b = { 0 };

    append_hello(j, 1, size, "node-b");
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        put_rec(&b, &defs[i], NULL);
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n);
    free(b.p);
    append_events(j, 0, 1, 95, evs, 4);
    append_goodbye(j, 1, threads, events, dropped);
    weft_journal_close(j);
}

static int run(const char *fmt, const char *arg)
{
    char cmd[512];
    int st;

    snprintf(cmd, sizeof cmd, fmt, arg);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int have_otf2_print(void)
{
    return access("/usr/bin/otf2-print", X_OK) == 0;
}

static void test_convert_smoke(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "smoke trace", 2 };
    weft_convert_result res;
    int rc;

    write_member0(c, 130);
    write_member1(c, 2, 0);
    rc = weft_convert_trace(&in, &res);
    if (rc)
        print_error("convert: %s\n", res.error);
    assert_int_equal(rc, 0);
    assert_int_equal(res.members, 2);
    assert_int_equal(res.events, 4 + 3 + 2 + 4);
    assert_int_equal(res.nlocations, 4);
    assert_int_equal(res.dropped, 7);
    assert_int_equal(res.time_first, 95);
    assert_int_equal(res.time_last, 139);
    assert_int_equal(res.timer_resolution, 1000000000);
    assert_true(res.bytes > 0);
    assert_int_equal(res.locations[0].id, 0);
    assert_string_equal(res.locations[0].name, "Master thread");
    assert_int_equal(res.locations[0].events, 7);
    assert_int_equal(res.locations[0].dropped, 4);
    assert_int_equal(res.locations[1].id, 3);
    assert_string_equal(res.locations[1].name, "Thread 3");
    assert_int_equal(res.locations[2].id, 5);
    assert_int_equal(res.locations[2].events, 0);
    assert_int_equal(res.locations[2].dropped, 2);
    assert_int_equal(res.locations[3].id, (uint64_t)1 << 32);
    assert_int_equal(res.locations[3].rank, 1);
    assert_int_equal(res.locations[3].thread, 0);
    assert_int_equal(res.locations[3].events, 4);
    assert_int_equal(res.error[0], 0);
    weft_convert_result_free(&res);

    if (!have_otf2_print()) {
        print_message("otf2-print not installed: archive not validated\n");
        return;
    }
    assert_int_equal(run("otf2-print -Werror --silent '%s/traces.otf2' "
                         ">/dev/null", c->archive), 0);
    /* Both members' "main" is global region 0, "foo" region 1. */
    assert_int_equal(run("test \"$(otf2-print '%s/traces.otf2' | "
                         "grep -c '^\\(ENTER\\|LEAVE\\).*Region: \"main\"')\""
                         " = 4", c->archive), 0);
    assert_int_equal(run("test \"$(otf2-print '%s/traces.otf2' | "
                         "grep -c '^METRIC')\" = 1", c->archive), 0);
    assert_int_equal(run("otf2-print -G '%s/traces.otf2' | grep -q "
                         "'^REGION .* 1 .*Name: \"foo\"'", c->archive), 0);
    /* Offset 95 is 45 ticks (ns) after the Hello's wall clock sample. */
    assert_int_equal(run("otf2-print -G '%s/traces.otf2' | grep -q "
                         "'Global Offset: 95, Length: 45, "
                         "Date: 2023-11-14 22:13:20.000000045'", c->archive),
                     0);

    /* Converting again replaces the archive. */
    rc = weft_convert_trace(&in, &res);
    assert_int_equal(rc, 0);
    weft_convert_result_free(&res);
    assert_int_equal(run("otf2-print -Werror --silent '%s/traces.otf2' "
                         ">/dev/null", c->archive), 0);
}

static void test_convert_missing_member(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "partial", 2 };
    weft_convert_result res;

    write_member1(c, 2, 0);
    assert_int_equal(weft_convert_trace(&in, &res), 0);
    assert_int_equal(res.members, 1);
    assert_int_equal(res.events, 4);
    weft_convert_result_free(&res);
    if (have_otf2_print())
        assert_int_equal(run("otf2-print -Werror --silent "
                             "'%s/traces.otf2' >/dev/null", c->archive), 0);
}

static void test_convert_decreasing_time(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2 };
    weft_convert_result res;

    /* The second batch of thread 0 starts before the first one ended. */
    write_member0(c, 115);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ETIME);
    assert_non_null(strstr(res.error, "rank-0.wj"));
    assert_non_null(strstr(res.error, "thread 0 seq 2"));
    assert_non_null(strstr(res.error, "time 115"));
    assert_null(res.locations);
    weft_convert_result_free(&res);
}

static void test_convert_bad_size(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2 };
    weft_convert_result res;

    write_member0(c, 130);
    write_member1(c, 3, 0);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ECORRUPT);
    assert_non_null(strstr(res.error, "rank-1.wj"));
    assert_non_null(strstr(res.error, "3 members, expected 2"));
    weft_convert_result_free(&res);
}

static void test_convert_undefined_ref(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2 };
    weft_convert_result res;

    write_member1(c, 2, 1);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_EREF);
    assert_non_null(strstr(res.error, "rank-1.wj"));
    assert_non_null(strstr(res.error, "event 4"));
    assert_non_null(strstr(res.error, "Leave.region = 3"));
    weft_convert_result_free(&res);
}

static void test_convert_corrupt_tail(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2 };
    weft_convert_result res;
    char path[160];
    FILE *f;

    write_member0(c, 130);
    snprintf(path, sizeof path, "%s/rank-0.wj", c->trace);
    f = fopen(path, "ab");
    assert_non_null(f);
    fputs("garbage after the last entry, longer than a header", f);
    fclose(f);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ECORRUPT);
    assert_non_null(strstr(res.error, "rank-0.wj"));
    assert_non_null(strstr(res.error, "offset"));
    weft_convert_result_free(&res);
}

static void test_convert_journal_names(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2 };
    weft_convert_result res;
    char path[160];
    FILE *f;

    write_member1(c, 2, 0);
    /* Other files are not journals... */
    snprintf(path, sizeof path, "%s/rank-0.wj.tmp", c->trace);
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(weft_convert_trace(&in, &res), 0);
    assert_int_equal(res.members, 1);
    weft_convert_result_free(&res);
    /* ...but a journal name that could mean two ranks is refused. */
    snprintf(path, sizeof path, "%s/rank-01.wj", c->trace);
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ECORRUPT);
    assert_non_null(strstr(res.error, "rank-01.wj"));
    weft_convert_result_free(&res);
}

static void test_convert_no_trace_dir(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { "/nonexistent/weft", c->archive, "t", 2 };
    weft_convert_result res;

    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ENOTFOUND);
    assert_non_null(strstr(res.error, "/nonexistent/weft"));
    weft_convert_result_free(&res);
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
        cmocka_unit_test_setup_teardown(test_convert_smoke, conv_setup,
                                        conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_missing_member,
                                        conv_setup, conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_decreasing_time,
                                        conv_setup, conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_bad_size, conv_setup,
                                        conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_undefined_ref,
                                        conv_setup, conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_corrupt_tail,
                                        conv_setup, conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_journal_names,
                                        conv_setup, conv_teardown),
        cmocka_unit_test_setup_teardown(test_convert_no_trace_dir,
                                        conv_setup, conv_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
