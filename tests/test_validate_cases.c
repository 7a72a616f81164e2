/* test_validate_cases.c - the checks of what a member sends
 * (daemon/ingest/validate.c), case by case, over a member's ingest state
 * (memberin.h) built by hand: no trace, no loop, no socket. Those
 * generic over the record table are in test_validate.c.
 *
 * Case by case: valid definitions then events pass; every refusal names
 * the record, field, kind and value: undefined references (scalars and
 * arrays), redefinitions, daemon-only records, ids beyond
 * max_definitions and strings beyond max_string (each reported as that
 * limit), the threads and thread numbers of ThreadName and TeamMember
 * records beyond max_locations, Metric value counts that differ from the
 * class, a batch that starts before the thread's last time, an announced
 * count that differs from the records, records of the wrong stream,
 * truncated and unknown records. OTF2's undefined references are
 * accepted, and a refused payload defines nothing. A Hello's tags: each
 * rule, and a value beyond max_string reported as that limit.
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

#define ERR_MAX 512

/* ---- case by case ------------------------------------------------------- */

#define MAX_DEFS 16
#define MAX_STRING 16

typedef struct case_fixture {
    weft_daemon d;
    weft_memberin in;
    uint64_t charged;      /* what accepted Definitions cost, as the
                              caller (session.c) adds it to the trace */
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
    f->in.d = &f->d;
    f->in.size = 1;
    f->in.nlocs = 2;
    f->in.locs = calloc(f->in.nlocs, sizeof *f->in.locs);
    assert_non_null(f->in.locs);
    *state = f;
    return 0;
}

static int case_teardown(void **state)
{
    case_fixture *f = *state;

    for (int k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&f->in.defined[k]);
    free(f->in.locs);
    weft_config_free(&f->d.cfg);
    free(f);
    return 0;
}

/* Checks n definitions as one Definitions payload. */
static int defs(case_fixture *f, const weft_record *recs, size_t n)
{
    bytes b = encode(recs, n, 0, 0);
    uint64_t charge = 7;
    int rc;

    f->err[0] = 0;
    rc = weft_validate_defs(&f->in, b.p, b.n, &charge, &f->limit, f->err,
                            sizeof f->err);
    free(b.p);
    if (rc < 0)
        assert_int_equal(charge, 0);
    f->charged += charge;
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
    rc = weft_validate_events(&f->in, loc, base, count, b.p, b.n, &t,
                              &f->limit, f->err, sizeof f->err);
    free(b.p);
    if (rc == 0 && count)
        f->in.locs[loc].last_time = t;
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
    uint64_t charge;

    f->err[0] = 0;
    return weft_validate_defs(&f->in, p, n, &charge, &f->limit, f->err,
                              sizeof f->err);
}

static int raw_events(case_fixture *f, uint64_t base, uint32_t count,
                      const uint8_t *p, size_t n)
{
    uint64_t t;

    f->err[0] = 0;
    return weft_validate_events(&f->in, 0, base, count, p, n, &t, &f->limit,
                                f->err, sizeof f->err);
}

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
    assert_int_equal(f->in.locs[0].last_time, 130);
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
 * payload is not charged (the caller adds the charge to the trace), an
 * accepted one is (its bytes and
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
        held += weft_idset_bytes(&f->in.defined[k]);
    assert_true(held <= 4 * 1024);
    assert_int_equal(f->charged, b.n + 4 * WEFT_DEF_OVERHEAD);
    events_ok(f, 0, 0, &ev, 1);
    assert_int_equal(events(f, 0, 20, 1, &bad, 1, NULL), WEFT_EPROTO);
    assert_err(f, "1 elements, but METRIC 16777215 (metric) has 2");
    assert_int_equal(defs(f, &again, 1), WEFT_EEXIST);
    assert_int_equal(f->charged, b.n + 4 * WEFT_DEF_OVERHEAD);
    f->charged -= weft_validate_undefine(&f->in, b.p, b.n);
    assert_int_equal(f->charged, 0);
    assert_false(weft_idset_has(&f->in.defined[WEFT_REF_STRING], top));
    free(b.p);
}

/* r alone is refused as beyond max_locations, saying msg. */
static void beyond_locations(case_fixture *f, const weft_record *r,
                             const char *msg)
{
    assert_int_equal(defs(f, r, 1), WEFT_ELIMIT);
    assert_err(f, msg);
    assert_int_equal(f->limit, WEFT_LIMIT_MAX_LOCATIONS);
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
    beyond_locations(f, &n, "ThreadName.thread: thread 4 exceeds "
                     "max_locations (4)");
    n.u.ThreadName.thread = 0;
    n.u.ThreadName.name = 7;
    assert_int_equal(defs(f, &n, 1), WEFT_EREF);
    assert_err(f, "ThreadName.name");
}

/* A TeamMember names a thread and a thread number below max_locations
 * and a communicator the member defined (OTF2's undefined one is taken,
 * as any undefined reference, and names nothing). */
static void test_team_member(void **state)
{
    case_fixture *f = *state;
    weft_record d[3] = { str(0, "team") };
    weft_record t = { .type = WEFT_REC_TeamMember };

    d[1].type = WEFT_REC_Group;  /* an empty team group, 0 */
    d[1].u.Group.groupType = OTF2_GROUP_TYPE_COMM_GROUP;
    d[1].u.Group.paradigm = OTF2_PARADIGM_OPENMP;
    d[2].type = WEFT_REC_Comm;
    d[2].u.Comm.parent = OTF2_UNDEFINED_COMM;  /* its team, comm 0 */
    defs_ok(f, d, 3);
    t.u.TeamMember.index = 3;
    t.u.TeamMember.thread = 3;
    defs_ok(f, &t, 1);
    t.u.TeamMember.thread = 4;
    beyond_locations(f, &t, "TeamMember.thread: thread 4 exceeds "
                     "max_locations (4)");
    t.u.TeamMember.thread = 0;
    t.u.TeamMember.index = 4;
    beyond_locations(f, &t, "TeamMember.index: index 4 exceeds "
                     "max_locations (4)");
    t.u.TeamMember.index = 0;
    t.u.TeamMember.comm = 5;
    assert_int_equal(defs(f, &t, 1), WEFT_EREF);
    assert_err(f, "TeamMember.comm: COMM 5 is not defined");
    assert_int_equal(f->limit, WEFT_LIMIT_NONE);
    t.u.TeamMember.comm = OTF2_UNDEFINED_COMM;
    defs_ok(f, &t, 1);
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
    assert_int_equal(f->in.locs[0].last_time, 500);
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
    assert_int_equal(f->in.locs[0].last_time, 0);
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
        weft_idset_free(&f->in.defined[k]);
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
        T(test_team_member),
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

    return cmocka_run_group_tests_name("case by case", cases, NULL, NULL);
}
