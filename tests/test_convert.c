/* test_convert.c - trace conversion (daemon/convert.c, replay.c,
 * otf2out.c), end to end on hand-written member journals.
 *
 * Two members' journals (with resent entries) become an archive that
 * `otf2-print -Werror` accepts, with the expected figures, and whose
 * ClockProperties (read back with libotf2's reader) cover every event; a
 * member that only said Hello is one location with no events; decreasing
 * timestamps, a corrupt or torn tail (named by file and offset), a wrong
 * trace size, an undefined reference and bad journal names each fail with
 * a message naming the journal. The short way of runs of Enters and
 * Leaves gives the archive and result of the general way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "codec.h"
#include "convert.h"
#include "journal.h"
#include "record.h"
#include "testutil.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

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

/* A Hello of a process whose clock counts res ticks per second, named
 * clock (NULL: none, as older clients). */
static void append_hello_clock(weft_journal *j, uint32_t rank, uint32_t size,
                               const char *host, uint64_t res,
                               const char *clock)
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
    h.timer_resolution = res;
    if (clock)
        h.clock = (char *)clock;
    h.realtime_ns = 1700000000000000000ull;
    h.clock_at_realtime = 50;
    assert_true(weft__hello__get_packed_size(&h) <= sizeof buf);
    n = weft__hello__pack(&h, buf);
    append(j, WEFT_JE_HELLO, 0, 0, 0, 0, buf, n);
}

static void append_hello(weft_journal *j, uint32_t rank, uint32_t size,
                         const char *host)
{
    append_hello_clock(j, rank, size, host, 1000000000, NULL);
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

/* Converts in into *res, which must succeed. */
static void convert_ok(const weft_convert_input *in, weft_convert_result *res)
{
    int rc = weft_convert_trace(in, res);

    if (rc)
        print_error("convert: %s\n", res->error);
    assert_int_equal(rc, 0);
}

/* Appends Definitions seq 1 holding defs[0..n-1]. */
static void append_defs(weft_journal *j, const weft_record *defs, size_t n)
{
    bytes b = { 0 };

    for (size_t i = 0; i < n; i++)
        put_rec(&b, &defs[i], NULL);
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n);
    free(b.p);
}

static weft_journal *open_journal(const ctx *c, uint32_t rank)
{
    char path[160], name[WEFT_JOURNAL_NAME_MAX];
    weft_journal *j = NULL;

    snprintf(path, sizeof path, "%s/%s", c->trace,
             weft_journal_name(name, sizeof name, rank));
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

    append_hello(j, 1, size, "node-b");
    append_defs(j, defs, sizeof defs / sizeof defs[0]);
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
    weft_convert_input in = { c->trace, c->archive, "smoke trace", 2, 0, 0, 0 };
    weft_convert_result res;
    int rc;

    write_member0(c, 130);
    write_member1(c, 2, 0);
    convert_ok(&in, &res);
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
    /* the metric as a series of one bin on thread 0; no I/O */
    assert_int_equal(res.nmetrics, 1);
    assert_int_equal(res.metrics[0].location, 0);
    assert_string_equal(res.metrics[0].name, "cycles");
    assert_string_equal(res.metrics[0].unit, "cycles");
    assert_int_equal(res.metrics[0].npoints, 1);
    assert_int_equal(res.metrics[0].series_total, 1);
    assert_true(res.metrics[0].points[2] == 42.0);
    assert_true(res.metrics[0].start_s > 15e-9 &&
                res.metrics[0].start_s < 17e-9);  /* 111 - 95 ns */
    assert_int_equal(res.nio_files, 0);
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
    weft_convert_input in = { c->trace, c->archive, "partial", 2, 0, 0, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
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
    weft_convert_input in = { "/nonexistent/weft", c->archive, "t", 2, 0, 0,
                              0 };
    weft_convert_result res;

    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ENOTFOUND);
    assert_non_null(strstr(res.error, "/nonexistent/weft"));
    weft_convert_result_free(&res);
}

/* ---- reading an archive back with libotf2 ------------------------------ */

typedef struct archive_info {
    int nclock;
    uint64_t resolution, offset, length, realtime;
    size_t nlocs;
    OTF2_LocationRef locs[16];
    uint64_t loc_events[16];  /* numberOfEvents of each Location */
    uint64_t events_read[16]; /* events actually found there */
    uint64_t events, tmin, tmax;
    int ordered;              /* times never decrease per location */
    uint64_t last[16];
} archive_info;

static OTF2_CallbackCode on_clock(void *ud, uint64_t res, uint64_t off,
                                  uint64_t len, uint64_t realtime)
{
    archive_info *a = ud;

    a->nclock++;
    a->resolution = res;
    a->offset = off;
    a->length = len;
    a->realtime = realtime;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *ud, OTF2_LocationRef self,
                                     OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t n,
                                     OTF2_LocationGroupRef group)
{
    archive_info *a = ud;

    if (a->nlocs == sizeof a->locs / sizeof a->locs[0])
        return OTF2_CALLBACK_INTERRUPT;
    a->locs[a->nlocs] = self;
    a->loc_events[a->nlocs++] = n;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode seen(archive_info *a, OTF2_LocationRef loc,
                              OTF2_TimeStamp t)
{
    for (size_t i = 0; i < a->nlocs; i++) {
        if (a->locs[i] != loc)
            continue;
        if (a->events_read[i] && t < a->last[i])
            a->ordered = 0;
        a->events_read[i]++;
        a->last[i] = t;
        if (!a->events || t < a->tmin)
            a->tmin = t;
        if (!a->events || t > a->tmax)
            a->tmax = t;
        a->events++;
        return OTF2_CALLBACK_SUCCESS;
    }
    return OTF2_CALLBACK_INTERRUPT; /* an event of an unknown location */
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef r)
{
    return seen(ud, loc, t);
}

static OTF2_CallbackCode on_metric(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                   void *ud, OTF2_AttributeList *al,
                                   OTF2_MetricRef m, uint8_t n,
                                   const OTF2_Type *types,
                                   const OTF2_MetricValue *values)
{
    return seen(ud, loc, t);
}

/* Reads the clock, the locations and every event of archive_dir. */
static void read_archive(const char *archive_dir, archive_info *a)
{
    char anchor[256];
    OTF2_Reader *rd;
    OTF2_GlobalDefReader *gdr;
    OTF2_GlobalDefReaderCallbacks *dcb;
    OTF2_GlobalEvtReader *ger;
    OTF2_GlobalEvtReaderCallbacks *ecb;
    uint64_t n = 0;
    int defs_open;

    memset(a, 0, sizeof *a);
    a->ordered = 1;
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", archive_dir);
    rd = OTF2_Reader_Open(anchor);
    assert_non_null(rd);
    assert_int_equal(OTF2_Reader_SetSerialCollectiveCallbacks(rd),
                     OTF2_SUCCESS);
    gdr = OTF2_Reader_GetGlobalDefReader(rd);
    assert_non_null(gdr);
    dcb = OTF2_GlobalDefReaderCallbacks_New();
    assert_non_null(dcb);
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dcb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, on_location);
    assert_int_equal(OTF2_Reader_RegisterGlobalDefCallbacks(rd, gdr, dcb, a),
                     OTF2_SUCCESS);
    OTF2_GlobalDefReaderCallbacks_Delete(dcb);
    assert_int_equal(OTF2_Reader_ReadAllGlobalDefinitions(rd, gdr, &n),
                     OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_CloseGlobalDefReader(rd, gdr), OTF2_SUCCESS);
    for (size_t i = 0; i < a->nlocs; i++)
        assert_int_equal(OTF2_Reader_SelectLocation(rd, a->locs[i]),
                         OTF2_SUCCESS);
    defs_open = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
    assert_int_equal(OTF2_Reader_OpenEvtFiles(rd), OTF2_SUCCESS);
    for (size_t i = 0; i < a->nlocs; i++) {
        if (defs_open) {
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, a->locs[i]);
            if (dr) {
                uint64_t k = 0;
                OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &k);
                OTF2_Reader_CloseDefReader(rd, dr);
            }
        }
        assert_non_null(OTF2_Reader_GetEvtReader(rd, a->locs[i]));
    }
    if (defs_open)
        OTF2_Reader_CloseDefFiles(rd);
    ger = OTF2_Reader_GetGlobalEvtReader(rd);
    assert_non_null(ger);
    ecb = OTF2_GlobalEvtReaderCallbacks_New();
    assert_non_null(ecb);
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ecb, on_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ecb, on_enter);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(ecb, on_metric);
    assert_int_equal(OTF2_Reader_RegisterGlobalEvtCallbacks(rd, ger, ecb, a),
                     OTF2_SUCCESS);
    OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
    assert_int_equal(OTF2_Reader_ReadAllGlobalEvents(rd, ger, &n),
                     OTF2_SUCCESS);
    assert_int_equal(n, a->events);
    assert_int_equal(OTF2_Reader_CloseGlobalEvtReader(rd, ger), OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_CloseEvtFiles(rd), OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_Close(rd), OTF2_SUCCESS);
}

static void test_convert_clock_covers_events(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "clock", 2, 0, 0, 0 };
    weft_convert_result res;
    archive_info a;

    write_member0(c, 130);
    write_member1(c, 2, 0);
    assert_int_equal(weft_convert_trace(&in, &res), 0);
    read_archive(c->archive, &a);
    assert_int_equal(a.nclock, 1);
    assert_int_equal(a.resolution, 1000000000);
    /* Every event inside [globalOffset, globalOffset + traceLength). */
    assert_int_equal(a.events, res.events);
    assert_true(a.events > 0);
    assert_true(a.offset <= a.tmin);
    assert_true(a.offset + a.length > a.tmax);
    assert_int_equal(a.tmin, res.time_first);
    assert_int_equal(a.tmax, res.time_last);
    assert_true(a.ordered);
    /* Each Location announces the events it holds. */
    assert_int_equal(a.nlocs, res.nlocations);
    for (size_t i = 0; i < a.nlocs; i++) {
        assert_int_equal(a.loc_events[i], a.events_read[i]);
        for (size_t k = 0; k < res.nlocations; k++)
            if (res.locations[k].id == a.locs[i])
                assert_int_equal(res.locations[k].events, a.events_read[i]);
    }
    /* The wall clock of globalOffset, from the Hello's sample at 50. */
    assert_int_equal(a.realtime, 1700000000000000000ull + (a.offset - 50));
    weft_convert_result_free(&res);
}

static weft_record clock_offset(uint64_t t, int64_t offset_ns)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockOffset;
    r.u.ClockOffset.time = t;
    r.u.ClockOffset.offset = offset_ns;
    r.u.ClockOffset.standardDeviation = 100.0;
    return r;
}

/* A member of rank (of 2) on a clock of res ticks/s named clock, with
 * ClockOffsets (t, ns) at offsets[0..noff-1], an Enter at 5000 and its
 * Leave at 6000 ticks. */
static void write_clocked(const ctx *c, uint32_t rank, uint64_t res,
                          const char *clock, const int64_t (*offsets)[2],
                          size_t noff)
{
    weft_journal *j;
    weft_record defs[4] = { str(0, "main"), region(0, 0, 1) };
    weft_record evs[] = { enter(5000, 0, 0), enter(6000, 0, 1) };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { 2 }, dropped[] = { 0 };

    char path[160], name[WEFT_JOURNAL_NAME_MAX];

    /* A new journal, not one more Hello in the last one. */
    snprintf(path, sizeof path, "%s/%s", c->trace,
             weft_journal_name(name, sizeof name, rank));
    unlink(path);
    j = open_journal(c, rank);
    for (size_t i = 0; i < noff; i++)
        defs[2 + i] = clock_offset((uint64_t)offsets[i][0], offsets[i][1]);
    append_hello_clock(j, rank, 2, "node", res, clock);
    append_defs(j, defs, 2 + noff);
    append_events(j, 0, 1, 5000, evs, 2);
    append_goodbye(j, 1, threads, events, dropped);
    weft_journal_close(j);
}

/* The archive's WEFT::CLOCK property, "" without one. */
static void archive_clock(const char *archive_dir, char *buf, size_t len)
{
    char anchor[256], *v = NULL;
    OTF2_Reader *rd;

    snprintf(anchor, sizeof anchor, "%s/traces.otf2", archive_dir);
    rd = OTF2_Reader_Open(anchor);
    assert_non_null(rd);
    buf[0] = 0;
    if (OTF2_Reader_GetProperty(rd, "WEFT::CLOCK", &v) == OTF2_SUCCESS && v)
        snprintf(buf, len, "%s", v);
    free(v);
    OTF2_Reader_Close(rd);
}

/* Processes of one host reading its TSC: the archive keeps their ticks
 * at the lowest rank's rate, also for a process whose calibration came
 * out a kHz off (0.4 ppm; its offsets correct it), with the offsets in
 * those ticks; a lone offset (no Goodbye's) is applied by the readers
 * too. With a CLOCK_MONOTONIC process the archive counts ns. */
static void test_convert_tsc_clocks(void **state)
{
    ctx *c = *state;
    const uint64_t R = 2445402000u;
    const int64_t two[2][2] = { { 1000, -500 }, { 24454020000, -500 } };
    const int64_t lone[1][2] = { { 1000, 2000 } };
    weft_convert_input in = { c->trace, c->archive, "tsc", 2, 0, 0, 0 };
    weft_convert_result res;
    archive_info a;
    char clock[64];

    write_clocked(c, 0, R, "tsc", two, 2);
    write_clocked(c, 1, R + 1000, "tsc", lone, 1);
    convert_ok(&in, &res);
    assert_int_equal(res.timer_resolution, R);
    assert_string_equal(res.clock, "tsc");
    /* Rank 0: -500 ns is -1223 ticks. Rank 1: its ticks in the archive's
     * rate plus 2000 ns (4891 ticks) at both ends of its events. */
    assert_int_equal(res.time_first, 5000 - 1223 - 1);
    assert_int_equal(res.time_last, 6000 + 4891 + 1);
    read_archive(c->archive, &a);
    assert_int_equal(a.resolution, R);
    assert_int_equal(a.tmin, 5000 - 1223);
    assert_int_equal(a.tmax, 6000 + 4891);
    assert_true(a.offset <= a.tmin && a.offset + a.length > a.tmax);
    archive_clock(c->archive, clock, sizeof clock);
    assert_string_equal(clock, "tsc");
    weft_convert_result_free(&res);

    /* TSC and CLOCK_MONOTONIC: ns, the TSC's ticks scaled. */
    write_clocked(c, 1, 1000000000, "monotonic", lone, 1);
    convert_ok(&in, &res);
    assert_int_equal(res.timer_resolution, 1000000000);
    assert_string_equal(res.clock, "monotonic,tsc");
    read_archive(c->archive, &a);
    assert_int_equal(a.resolution, 1000000000);
    /* Rank 0's Enter: 5000 ticks are 2045 ns, then -500 ns; rank 1's
     * Leave at 6000 + 2000 ns. */
    assert_int_equal(a.tmin, 2045 - 500);
    assert_int_equal(a.tmax, 6000 + 2000);
    archive_clock(c->archive, clock, sizeof clock);
    assert_string_equal(clock, "monotonic,tsc");
    weft_convert_result_free(&res);

    /* Rates 1 % apart (hosts of different TSC frequencies): ns. */
    write_clocked(c, 1, R + R / 100, "tsc", lone, 1);
    convert_ok(&in, &res);
    assert_int_equal(res.timer_resolution, 1000000000);
    assert_string_equal(res.clock, "tsc");
    weft_convert_result_free(&res);
}

/* The offsets libweft measured at open and before Goodbye, 150 ns apart
 * with error bounds of 100 ns that overlap, are one offset as far as
 * they tell: the archive gets it at both points (the first, moved into
 * the second's bound: -550 ns), and no rate the noise made up (readers
 * would stretch every duration by it). 300 ns apart, beyond their error,
 * they are real drift and readers interpolate. Rank 1 counts at the same
 * rate without offsets. */
static void test_convert_offset_noise(void **state)
{
    ctx *c = *state;
    const uint64_t R = 2445402000u;
    const int64_t near[2][2] = { { 1000, -500 }, { 20000, -650 } };
    const int64_t far[2][2] = { { 1000, -500 }, { 20000, -800 } };
    weft_convert_input in = { c->trace, c->archive, "noise", 2, 0, 0, 0 };
    weft_convert_result res;
    archive_info a;

    write_clocked(c, 0, R, "tsc", near, 2);
    write_clocked(c, 1, R, "tsc", NULL, 0);
    convert_ok(&in, &res);
    assert_int_equal(res.timer_resolution, R);
    read_archive(c->archive, &a);
    /* -550 ns is -1345 ticks, at the Enter (5000) as at the Leave */
    assert_int_equal(a.tmin, 5000 - 1345);
    assert_in_range(res.time_first, 5000 - 1345 - 1, 5000 - 1345);
    weft_convert_result_free(&res);

    write_clocked(c, 0, R, "tsc", far, 2);
    convert_ok(&in, &res);
    read_archive(c->archive, &a);
    /* -500 ns - 300 * 4000 / 19000 at 5000: -563 ns, -1377 ticks */
    assert_in_range(a.tmin, 5000 - 1378, 5000 - 1376);
    weft_convert_result_free(&res);
}

static void test_convert_empty_member(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "empty", 1, 0, 0, 0 };
    weft_convert_result res;
    weft_journal *j = open_journal(c, 0);
    archive_info a;

    append_hello(j, 0, 1, "node-a");
    weft_journal_close(j);
    convert_ok(&in, &res);
    assert_int_equal(res.members, 1);
    assert_int_equal(res.events, 0);
    assert_int_equal(res.nlocations, 1);
    assert_int_equal(res.locations[0].id, 0);
    assert_int_equal(res.locations[0].rank, 0);
    assert_int_equal(res.locations[0].thread, 0);
    assert_int_equal(res.locations[0].events, 0);
    assert_string_equal(res.locations[0].name, "Master thread");
    assert_int_equal(res.time_first, 0);
    assert_int_equal(res.time_last, 0);
    assert_int_equal(res.timer_resolution, 1000000000);
    assert_true(res.bytes > 0);
    weft_convert_result_free(&res);

    read_archive(c->archive, &a);
    assert_int_equal(a.nclock, 1);
    assert_int_equal(a.nlocs, 1);
    assert_int_equal(a.locs[0], 0);
    assert_int_equal(a.loc_events[0], 0);
    assert_int_equal(a.events, 0);
    assert_true(a.length >= 1);
    if (!have_otf2_print()) {
        print_message("otf2-print not installed: archive not validated\n");
        return;
    }
    assert_int_equal(run("otf2-print -Werror --silent '%s/traces.otf2' "
                         ">/dev/null 2>&1", c->archive), 0);
}

/* An event whose attribute list names an attribute twice (or two that
 * unify into one) converts: OTF2 keeps one value per attribute, the
 * first (fuzz/regress/fuzz_daemon found it failing the conversion). */
static void test_convert_attribute_twice(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "attrs", 1, 0, 0, 0 };
    weft_convert_result res;
    weft_journal *j = open_journal(c, 0);
    weft_record defs[] = { str(0, "main"), region(0, 0, 1), str(1, "n") };
    weft_record attr, list, ev = enter(10, 0, 0);
    OTF2_AttributeRef ids[2] = { 0, 0 };
    OTF2_Type types[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    OTF2_AttributeValue vals[2] = { { .uint64 = 1 }, { .uint64 = 2 } };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { 1 }, dropped[] = { 0 };
    bytes b = { 0 };

    memset(&attr, 0, sizeof attr);
    attr.type = WEFT_REC_Attribute;
    attr.u.Attribute.self = 0;
    attr.u.Attribute.name = 1;
    attr.u.Attribute.description = 1;
    attr.u.Attribute.type = OTF2_TYPE_UINT64;
    memset(&list, 0, sizeof list);
    list.type = WEFT_REC_AttributeList;
    list.u.AttributeList.numberOfAttributes = 2;
    list.u.AttributeList.attributes = ids;
    list.u.AttributeList.types = types;
    list.u.AttributeList.values = vals;
    ev.attributes = &list;
    append_hello(j, 0, 1, "node-a");
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        put_rec(&b, &defs[i], NULL);
    put_rec(&b, &attr, NULL);
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n);
    free(b.p);
    append_events(j, 0, 1, 0, &ev, 1);
    append_goodbye(j, 1, threads, events, dropped);
    weft_journal_close(j);
    convert_ok(&in, &res);
    assert_int_equal(res.events, 2); /* and the Leave nesting adds */
    weft_convert_result_free(&res);
}

static uint64_t size_of(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* Converting fails at the entry of journal `path` at off; want gets the
 * start of the message. */
static void expect_torn(const weft_convert_input *in, weft_convert_result *res,
                        const char *path, uint64_t off, char *want,
                        size_t wantlen)
{
    assert_int_equal(weft_convert_trace(in, res), WEFT_ECORRUPT);
    snprintf(want, wantlen, "%s: torn or corrupt entry at offset %" PRIu64
             " ", path, off);
    if (!strstr(res->error, want))
        print_error("error: %s\nwanted: %s\n", res->error, want);
    assert_non_null(strstr(res->error, want));
}

static void test_convert_torn_tail(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
    weft_convert_result res;
    weft_record more[] = { enter(99, 5, 0), enter(100, 5, 1) };
    char path[160], want[256];
    weft_journal *j;
    uint64_t good, full;

    write_member1(c, 2, 0);
    snprintf(path, sizeof path, "%s/rank-1.wj", c->trace);
    good = size_of(path);
    j = open_journal(c, 1);
    append_events(j, 0, 2, 98, more, 2);
    weft_journal_close(j);
    full = size_of(path);
    assert_true(full > good + WEFT_JOURNAL_HEADER);

    /* The process died while writing the header of its last entry... */
    assert_int_equal(truncate(path, (off_t)good + 10), 0);
    expect_torn(&in, &res, path, good, want, sizeof want);
    assert_non_null(strstr(res.error, "10 bytes from there"));
    assert_null(res.locations);
    weft_convert_result_free(&res);

    /* ...or its payload. */
    assert_int_equal(truncate(path, (off_t)full - 1), 0);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ECORRUPT);
    assert_non_null(strstr(res.error, want));
    snprintf(want, sizeof want, "%" PRIu64 " bytes from there",
             full - 1 - good);
    assert_non_null(strstr(res.error, want));
    weft_convert_result_free(&res);

    /* Cut at the entry boundary, the journal converts again. */
    assert_int_equal(truncate(path, (off_t)good), 0);
    assert_int_equal(weft_convert_trace(&in, &res), 0);
    assert_int_equal(res.events, 4);
    weft_convert_result_free(&res);
}

/* A flipped byte inside an event batch with entries after it: pass 1
 * steps over event payloads, pass 2 finds the bad checksum and names the
 * entry. */
static void test_convert_corrupt_events(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0 };
    weft_convert_result res;
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    char path[160], want[256];
    uint64_t off = 0, at = 0;
    uint8_t b;
    FILE *f;

    write_member1(c, 2, 0);
    snprintf(path, sizeof path, "%s/rank-1.wj", c->trace);
    assert_int_equal(weft_journal_reader_open(path, &r), 0);
    for (;;) {
        off = weft_journal_reader_offset(r);
        assert_int_equal(weft_journal_reader_next(r, &e), 1);
        if (e.kind == WEFT_JE_EVENTS)
            break;
    }
    weft_journal_reader_close(r);
    at = off + WEFT_JOURNAL_HEADER + 2;
    f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    assert_int_equal(fread(&b, 1, 1, f), 1);
    b ^= 0x10;
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    assert_int_equal(fwrite(&b, 1, 1, f), 1);
    fclose(f);
    expect_torn(&in, &res, path, off, want, sizeof want);
    assert_null(res.locations);
    weft_convert_result_free(&res);
}

/* durability = fsync: the archive is synced before conversion returns;
 * what cannot be synced (here a symlink, never followed) fails it, so
 * the journals stay. */
static void test_convert_sync(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "synced", 1, 1, 1, 0 };
    weft_convert_result res;
    weft_journal *j = open_journal(c, 0);
    char link[200];

    append_hello(j, 0, 1, "node-a");
    weft_journal_close(j);
    convert_ok(&in, &res);
    assert_true(res.bytes > 0);
    weft_convert_result_free(&res);

    snprintf(link, sizeof link, "%s/elsewhere", c->archive);
    assert_int_equal(symlink("/nonexistent", link), 0);
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_EIO);
    if (!strstr(res.error, link))
        print_error("error: %s\n", res.error);
    assert_non_null(strstr(res.error, link));
    assert_non_null(strstr(res.error, "cannot sync it to disk"));
    weft_convert_result_free(&res);
    unlink(link);
}

static void test_convert_resumed_member(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "resumed", 1, 0, 0, 0 };
    weft_convert_result res;
    weft_journal *j = open_journal(c, 0);
    weft_record defs[] = { str(0, "main"), region(0, 0, 1) };
    weft_record b1[] = { enter(10, 0, 0) };
    weft_record b2[] = { enter(20, 0, 1) };
    bytes b = encode(defs, 2, 0, 0);

    /* A member that reconnected: a second Hello (whose host is ignored),
     * the resent last batch, then the rest. */
    append_hello(j, 0, 1, "node-a");
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n);
    append_events(j, 0, 1, 10, b1, 1);
    append_hello(j, 0, 1, "node-z");
    append(j, WEFT_JE_DEFS, 0, 0, 1, 0, b.p, b.n);
    append_events(j, 0, 1, 10, b1, 1);
    append_events(j, 0, 2, 20, b2, 1);
    weft_journal_close(j);
    free(b.p);
    assert_int_equal(weft_convert_trace(&in, &res), 0);
    assert_int_equal(res.members, 1);
    assert_int_equal(res.events, 2);
    assert_int_equal(res.time_first, 10);
    assert_int_equal(res.time_last, 20);
    weft_convert_result_free(&res);
    if (have_otf2_print()) {
        assert_int_equal(run("otf2-print -Werror --silent '%s/traces.otf2' "
                             ">/dev/null", c->archive), 0);
        assert_int_equal(run("otf2-print -G '%s/traces.otf2' | grep -q "
                             "'Name: \"node-a\"'", c->archive), 0);
    }
}

/* ---- several threads (issue #5) ---------------------------------------- */

#define PAR_MEMBERS 6
#define PAR_PAIRS 300    /* Enter/Leave pairs per batch of thread 0 */

enum { PAR_OK, PAR_LATE_TIME, PAR_BAD_COUNT };

/* Appends a batch of PAR_PAIRS Enter/Leave pairs of regions 0..2 from
 * t, announcing count more than it holds. */
static uint64_t append_pairs(weft_journal *j, uint32_t thread, uint64_t seq,
                             uint64_t t, uint32_t more)
{
    weft_record evs[2 * PAR_PAIRS];
    bytes b = { 0 };
    uint64_t prev = t;

    for (uint32_t i = 0; i < PAR_PAIRS; i++) {
        evs[2 * i] = enter(t + 3 * i, i % 3, 0);
        evs[2 * i + 1] = enter(t + 3 * i + 2 + i % 2, i % 3, 1);
    }
    for (size_t i = 0; i < 2 * PAR_PAIRS; i++)
        put_rec(&b, &evs[i], &prev);
    append(j, WEFT_JE_EVENTS, thread, 2 * PAR_PAIRS + more, seq, t, b.p,
           b.n);
    free(b.p);
    return t + 3 * PAR_PAIRS;
}

/* Member `rank` of PAR_MEMBERS: regions main, foo and one of its own;
 * thread 0 has three batches (the second resent) and a last one with an
 * Enter whose attribute names idle thread 7 of the next rank and a Leave
 * of a region that is not open (a profile anomaly); thread 1 one batch.
 * fault PAR_LATE_TIME makes that last batch go back in time (found at
 * the end of the journal), PAR_BAD_COUNT makes the first batch announce
 * one event too many (found at once). */
static void write_par_member(const ctx *c, uint32_t rank, int fault)
{
    weft_journal *j = open_journal(c, rank);
    char own[32];
    OTF2_AttributeRef ids[1] = { 0 };
    OTF2_Type types[1] = { OTF2_TYPE_LOCATION };
    OTF2_AttributeValue vals[1];
    weft_record defs[8], al, last[3];
    uint32_t threads[] = { 0, 1 };
    uint64_t events[] = { 4 * 2 * PAR_PAIRS + 3, 2 * PAR_PAIRS };
    uint64_t dropped[] = { rank, 0 };
    uint64_t t = 1000 + 7 * rank, t1, t2, t3;

    snprintf(own, sizeof own, "work of rank %" PRIu32, rank);
    /* Odd ranks number the shared names the other way round. */
    defs[0] = str(rank % 2, "main");
    defs[1] = str(1 - rank % 2, "foo");
    defs[2] = str(2, own);
    defs[3] = str(3, "peer");
    defs[4] = region(0, rank % 2, 1);
    defs[5] = region(1, 1 - rank % 2, 20);
    defs[6] = region(2, 2, 30);
    memset(&defs[7], 0, sizeof defs[7]);
    defs[7].type = WEFT_REC_Attribute;
    defs[7].u.Attribute.self = 0;
    defs[7].u.Attribute.name = 3;
    defs[7].u.Attribute.description = 3;
    defs[7].u.Attribute.type = OTF2_TYPE_LOCATION;
    append_hello(j, rank, PAR_MEMBERS, rank % 2 ? "node-b" : "node-a");
    append_defs(j, defs, sizeof defs / sizeof defs[0]);

    t1 = append_pairs(j, 0, 1, t, fault == PAR_BAD_COUNT);
    t2 = append_pairs(j, 0, 2, t1, 0);
    append_pairs(j, 0, 2, t1, 0); /* resent */
    append_pairs(j, 1, 1, t + 1, 0);
    t3 = append_pairs(j, 0, 3, t2, 0);
    t3 = append_pairs(j, 0, 4, t3, 0);

    vals[0].locationRef = (uint64_t)((rank + 1) % PAR_MEMBERS) << 32 | 7;
    memset(&al, 0, sizeof al);
    al.type = WEFT_REC_AttributeList;
    al.u.AttributeList.numberOfAttributes = 1;
    al.u.AttributeList.attributes = ids;
    al.u.AttributeList.types = types;
    al.u.AttributeList.values = vals;
    if (fault == PAR_LATE_TIME)
        t3 = t2;
    last[0] = enter(t3, 0, 0);
    last[0].attributes = &al;
    last[1] = enter(t3 + 4, 1, 1); /* foo is not open */
    last[2] = enter(t3 + 9, 0, 1);
    append_events(j, 0, 5, t3, last, 3);
    append_goodbye(j, 2, threads, events, dropped);
    weft_journal_close(j);
}

static void assert_same_result(const weft_convert_result *a,
                               const weft_convert_result *b)
{
    assert_int_equal(a->members, b->members);
    assert_int_equal(a->events, b->events);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->time_first, b->time_first);
    assert_int_equal(a->time_last, b->time_last);
    assert_int_equal(a->timer_resolution, b->timer_resolution);
    assert_int_equal(a->dropped, b->dropped);
    assert_int_equal(a->profile_anomalies, b->profile_anomalies);
    assert_int_equal(a->nesting_added, b->nesting_added);
    assert_int_equal(a->nesting_unmatched, b->nesting_unmatched);
    assert_int_equal(a->nlocations, b->nlocations);
    for (size_t i = 0; i < a->nlocations; i++) {
        const weft_location_row *x = &a->locations[i], *y = &b->locations[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->rank, y->rank);
        assert_int_equal(x->thread, y->thread);
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->events, y->events);
        assert_int_equal(x->dropped, y->dropped);
    }
    assert_int_equal(a->ntimelines, b->ntimelines);
    for (size_t i = 0; i < a->ntimelines; i++) {
        const weft_timeline_row *x = &a->timelines[i], *y = &b->timelines[i];
        assert_int_equal(x->location, y->location);
        assert_true(x->start_s == y->start_s && x->width_s == y->width_s);
        assert_int_equal(x->nbins, y->nbins);
        assert_memory_equal(x->bins, y->bins, x->nbins * sizeof *x->bins);
    }
    assert_int_equal(a->ntimeline_regions, b->ntimeline_regions);
    for (size_t i = 0; i < a->ntimeline_regions; i++)
        assert_string_equal(a->timeline_regions[i].name,
                            b->timeline_regions[i].name);
    assert_int_equal(a->nio_files, b->nio_files);
    for (size_t i = 0; i < a->nio_files; i++) {
        const weft_io_file_row *x = &a->io_files[i], *y = &b->io_files[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->others, y->others);
        assert_int_equal(x->bytes_read, y->bytes_read);
        assert_int_equal(x->bytes_written, y->bytes_written);
        assert_int_equal(x->operations, y->operations);
        assert_true(x->time_s == y->time_s);
    }
    assert_int_equal(a->nmetrics, b->nmetrics);
    for (size_t i = 0; i < a->nmetrics; i++) {
        const weft_metric_row *x = &a->metrics[i], *y = &b->metrics[i];
        assert_int_equal(x->location, y->location);
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->npoints, y->npoints);
        assert_int_equal(x->series_total, y->series_total);
        assert_memory_equal(x->points, y->points,
                            x->npoints * 3 * sizeof *x->points);
    }
    assert_int_equal(a->nregions, b->nregions);
    for (size_t i = 0; i < a->nregions; i++) {
        const weft_region_row *x = &a->regions[i], *y = &b->regions[i];
        assert_int_equal(x->location, y->location);
        assert_string_equal(x->region, y->region);
        assert_int_equal(x->visits, y->visits);
        assert_true(x->incl_s == y->incl_s);
        assert_true(x->excl_s == y->excl_s);
    }
}

/* The n conversions res (archives in dirs) gave the same result, the
 * same event and definition files byte for byte, and the same otf2-print
 * output (traces.otf2 itself differs in its random trace identifier,
 * from run to run even with one thread); otf2-print -Werror accepts
 * each. Frees the results. */
static void assert_all_same(weft_convert_result *res, char (*dirs)[80],
                            size_t n)
{
    for (size_t k = 1; k < n; k++)
        assert_same_result(&res[0], &res[k]);
    for (size_t k = 0; k < n; k++)
        weft_convert_result_free(&res[k]);
    /* otf2-print's output goes next to each archive (run from there,
     * it names no directory), so diff compares it too. */
    for (size_t k = 0; k < n && have_otf2_print(); k++)
        assert_int_equal(run("cd '%s' && otf2-print traces.otf2 >print && "
                             "otf2-print -G traces.otf2 >print-G && "
                             "otf2-print -A traces.otf2 | grep -v "
                             "'^Trace identifier' >print-A && "
                             "otf2-print -Werror --silent traces.otf2",
                             dirs[k]), 0);
    for (size_t k = 1; k < n; k++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "diff -r -x traces.otf2 '%s' '%s'",
                 dirs[0], dirs[k]);
        assert_int_equal(system(cmd), 0);
    }
}

/* The same journals converted with 1, 2 and 4 threads give the same
 * archive and result (assert_all_same). */
static void test_convert_threads_identical(void **state)
{
    ctx *c = *state;
    static const unsigned nthreads[] = { 1, 2, 4 };
    weft_convert_result res[3];
    char dirs[3][80];

    for (uint32_t r = 0; r < PAR_MEMBERS; r++)
        write_par_member(c, r, PAR_OK);
    for (size_t k = 0; k < 3; k++) {
        weft_convert_input in = { c->trace, dirs[k], "threads", PAR_MEMBERS,
                                  nthreads[k], 0, 0 };
        int rc;
        snprintf(dirs[k], sizeof dirs[k], "%s/a%u", c->dir, nthreads[k]);
        rc = weft_convert_trace(&in, &res[k]);
        if (rc)
            print_error("convert (%u threads): %s\n", nthreads[k],
                        res[k].error);
        assert_int_equal(rc, 0);
    }
    /* Figures that a lost merge would change. */
    assert_int_equal(res[0].members, PAR_MEMBERS);
    /* Threads 0 and 1, and the idle thread 7 that an attribute names. */
    assert_int_equal(res[0].nlocations, 3 * PAR_MEMBERS);
    /* The Leave of foo, which is not open, is not written (issue #11:
     * every location nests). */
    assert_int_equal(res[0].events,
                     PAR_MEMBERS * (5 * 2 * PAR_PAIRS + 3 - 1));
    assert_int_equal(res[0].nesting_unmatched, PAR_MEMBERS);
    assert_int_equal(res[0].profile_anomalies, PAR_MEMBERS);
    assert_int_equal(res[0].time_first, 1000);
    assert_int_equal(res[0].dropped, PAR_MEMBERS * (PAR_MEMBERS - 1) / 2);
    /* Sums: main, foo, and each rank's own region; per location: three
     * regions on threads 0 and 1. */
    assert_int_equal(res[0].nregions,
                     2 + PAR_MEMBERS + PAR_MEMBERS * 2 * 3);
    assert_int_equal(res[0].regions[0].location, WEFT_PROFILE_ALL);
    assert_string_equal(res[0].regions[0].region, "main");
    assert_int_equal(res[0].regions[0].visits,
                     PAR_MEMBERS * (5 * PAR_PAIRS / 3 + 1));
    assert_int_equal(res[0].regions[2 + PAR_MEMBERS].location, 0);
    assert_int_equal(res[0].regions[res[0].nregions - 1].location,
                     (int64_t)(PAR_MEMBERS - 1) << 32 | 1);
    assert_all_same(res, dirs, 3);
}

/* A bad journal in a middle rank fails the same way with 1 and 4
 * threads: the error of the lowest rank that failed, even when a higher
 * rank (found at once) fails before it (found at its end). */
static void test_convert_threads_error(void **state)
{
    ctx *c = *state;
    static const unsigned nthreads[] = { 1, 4 };
    weft_convert_result res[2];

    for (uint32_t r = 0; r < PAR_MEMBERS; r++)
        write_par_member(c, r, r == 2 ? PAR_LATE_TIME
                               : r == 3 ? PAR_BAD_COUNT : PAR_OK);
    for (size_t k = 0; k < 2; k++) {
        weft_convert_input in = { c->trace, c->archive, "bad", PAR_MEMBERS,
                                  nthreads[k], 0, 0 };
        int rc = weft_convert_trace(&in, &res[k]);
        if (rc != WEFT_ETIME)
            print_error("convert (%u threads): %s\n", nthreads[k],
                        res[k].error);
        assert_int_equal(rc, WEFT_ETIME);
        assert_non_null(strstr(res[k].error, "rank-2.wj"));
        assert_non_null(strstr(res[k].error, "thread 0 seq 5"));
        assert_non_null(strstr(res[k].error, "is before the previous"));
        assert_null(res[k].locations);
        assert_null(res[k].regions);
    }
    assert_string_equal(res[0].error, res[1].error);
    for (size_t k = 0; k < 2; k++)
        weft_convert_result_free(&res[k]);

    /* Rank 3 alone still fails, and names its own journal. */
    {
        char path[160];
        snprintf(path, sizeof path, "%s/rank-2.wj", c->trace);
        assert_int_equal(unlink(path), 0);
    }
    write_par_member(c, 2, PAR_OK);
    {
        weft_convert_input in = { c->trace, c->archive, "bad", PAR_MEMBERS,
                                  4, 0, 0 };
        assert_int_equal(weft_convert_trace(&in, &res[0]), WEFT_ECORRUPT);
        assert_non_null(strstr(res[0].error, "rank-3.wj"));
        assert_non_null(strstr(res[0].error, "announces 601 events but "
                                             "holds 600"));
        weft_convert_result_free(&res[0]);
    }
}

/* ---- nesting and what the Goodbye reported (issue #11) ---------------- */

static weft_record onoff(uint64_t t, OTF2_MeasurementMode mode)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MeasurementOnOff;
    r.time = t;
    r.u.MeasurementOnOff.measurementMode = mode;
    return r;
}

/* One member, regions main (0) and foo (1), thread 0: main and foo open
 * at a gap (OFF 120, ON 150), a Leave of foo that is not open, foo open
 * at the end; its Goodbye reports `reported` events sent. */
static void write_gappy_member(const ctx *c, uint64_t reported)
{
    weft_journal *j = open_journal(c, 0);
    weft_record defs[] = { str(0, "main"), str(1, "foo"), region(0, 0, 1),
                           region(1, 1, 20) };
    weft_record evs[] = {
        enter(100, 0, 0), enter(110, 1, 0), onoff(120, OTF2_MEASUREMENT_OFF),
        onoff(150, OTF2_MEASUREMENT_ON), enter(160, 1, 1),
        enter(170, 1, 1) /* foo is not open */, enter(180, 1, 0),
    };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { reported }, dropped[] = { 3 };

    append_hello(j, 0, 1, "node-a");
    append_defs(j, defs, sizeof defs / sizeof defs[0]);
    append_events(j, 0, 1, 100, evs, sizeof evs / sizeof evs[0]);
    append_goodbye(j, 1, threads, events, dropped);
    weft_journal_close(j);
}

static const weft_region_row *sum_row(const weft_convert_result *res,
                                      const char *name)
{
    for (size_t i = 0; i < res->nregions; i++)
        if (res->regions[i].location == WEFT_PROFILE_ALL &&
            strcmp(res->regions[i].region, name) == 0)
            return &res->regions[i];
    fail_msg("no profile row for %s", name);
    return NULL;
}

/* The regions open at OFF are left there and entered again at ON, the
 * Leave of a region not open is left out, what is open at the end is
 * left at the last event; the profile is that of the archive. */
static void test_convert_nesting(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "gaps", 1, 1, 0, 0 };
    weft_convert_result res;
    const weft_region_row *r;

    write_gappy_member(c, 7);
    convert_ok(&in, &res);
    /* 7 recorded, 1 left out, 6 added: Leave foo and main at 120, Enter
     * main and foo at 150, Leave foo and main at 180. */
    assert_int_equal(res.events, 12);
    assert_int_equal(res.nesting_added, 6);
    assert_int_equal(res.nesting_unmatched, 1);
    assert_string_equal(res.incomplete, "");
    assert_int_equal(res.time_last, 180);
    /* main: 100..120 and 150..180 with foo 150..160 and 180..180 in it;
     * foo: 110..120, 150..160, 180..180. */
    r = sum_row(&res, "main");
    assert_int_equal(r->visits, 2);
    assert_true(fabs(r->incl_s - 50e-9) < 1e-15);
    assert_true(fabs(r->excl_s - 30e-9) < 1e-15);
    r = sum_row(&res, "foo");
    assert_int_equal(r->visits, 3);
    assert_true(fabs(r->incl_s - 20e-9) < 1e-15);
    assert_true(fabs(r->excl_s - 20e-9) < 1e-15);
    /* The timeline: one bin of 1 us from the first event, where main
     * (30 ns) ties with no region open (the gap, 30 ns): the region wins;
     * foo has 20 ns. */
    assert_int_equal(res.ntimelines, 1);
    assert_int_equal(res.timelines[0].location, 0);
    assert_int_equal(res.timelines[0].nbins, 1);
    assert_true(res.timelines[0].start_s == 0.0);
    assert_true(fabs(res.timelines[0].width_s - 1e-6) < 1e-15);
    assert_int_equal(res.ntimeline_regions, 1);
    assert_int_equal(res.timelines[0].bins[0],
                     res.timeline_regions[0].id + 1);
    assert_string_equal(res.timeline_regions[0].name, "main");
    assert_int_equal(res.nmessages, 0);
    weft_convert_result_free(&res);
    if (have_otf2_print()) {
        assert_int_equal(run("otf2-print -Werror --silent '%s/traces.otf2' "
                             ">/dev/null", c->archive), 0);
        /* Exactly the six added events carry weft::nesting. */
        assert_int_equal(run("test \"$(otf2-print '%s/traces.otf2' | "
                             "grep -c 'ADDITIONAL ATTRIBUTES: (\\\"weft::"
                             "nesting\\\"')\" = 6", c->archive), 0);
    }
}

/* A Goodbye that reports more events sent than the journal holds: the
 * result says which thread and by how much (the trace is partial). */
static void test_convert_short_of_goodbye(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "short", 1, 1, 0, 0 };
    weft_convert_result res;

    write_gappy_member(c, 8);
    assert_int_equal(weft_convert_trace(&in, &res), 0);
    assert_string_equal(res.incomplete, "rank 0 thread 0: 7 events arrived, "
                        "its Goodbye reported 8 sent (3 dropped)");
    weft_convert_result_free(&res);
}

/* ---- the short way of Enters and Leaves (issue #16) --------------------- */

#define WILD_REGIONS 40  /* more than a profile table's first 16 slots and
                            a profile stack's first 16 frames */
#define WILD_BATCHES 12
#define WILD_EVENTS 700  /* per random batch */

static uint32_t wild_next(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 16;
}

/* Appends events evs[0..n) as batch seq of thread (base: the first
 * event's time) and counts them in *count. */
static void append_wild(weft_journal *j, uint32_t thread, uint64_t seq,
                        const weft_record *evs, size_t n, uint64_t *count)
{
    append_events(j, thread, seq, evs[0].time, evs, n);
    *count += n;
}

/* Member `rank` of 2 for the short way against the general way: regions
 * 0..WILD_REGIONS-1, numbered the other way round by rank 1 (its table
 * maps them), rank 1 with ClockOffsets (each of its events may widen the
 * time range). Thread 0 opens with what the short way hands to nest_enter
 * and nest_leave (a region's first Enter, a table and a stack that grow
 * under open frames, recursion, the undefined region, a Leave of a region
 * open further down, a Leave of one not open, MeasurementOnOff gaps, equal
 * times); then both threads have batches of random Enters and Leaves
 * (mostly of the innermost region, some of another or of none open,
 * now and then a gap), regions open at the end. */
static void write_wild_member(const ctx *c, uint32_t rank)
{
    weft_journal *j = open_journal(c, rank);
    weft_record defs[2 * WILD_REGIONS + 4], *evs;
    char names[WILD_REGIONS][16];
    uint32_t threads[] = { 0, 1 };
    uint64_t events[] = { 0, 0 }, dropped[] = { 0, 0 };
    uint64_t t = 1000;
    uint32_t seed = 7 + rank;
    size_t n = 0, nd = 0;

    evs = calloc(WILD_EVENTS + 4 * WILD_REGIONS + 64, sizeof *evs);
    assert_non_null(evs);
    for (uint32_t i = 0; i < WILD_REGIONS; i++) {
        uint32_t name = rank ? WILD_REGIONS - 1 - i : i;
        snprintf(names[i], sizeof names[i], "r%u", name);
        defs[nd++] = str(i, names[i]);
    }
    for (uint32_t i = 0; i < WILD_REGIONS; i++)
        defs[nd++] = region(i, i, 100 + (rank ? WILD_REGIONS - 1 - i : i));
    if (rank) {
        /* A peak in the middle: the latest event on weftd's clock is
         * neither a location's first nor its last. */
        static const uint64_t at[] = { 1000, 5000, 9000, 30000 };
        for (int k = 0; k < 4; k++) {
            memset(&defs[nd], 0, sizeof defs[nd]);
            defs[nd].type = WEFT_REC_ClockOffset;
            defs[nd].u.ClockOffset.time = at[k];
            defs[nd].u.ClockOffset.offset = k == 1 ? 100000 : 0;
            nd++;
        }
    }
    append_hello(j, rank, 2, rank ? "node-b" : "node-a");
    append_defs(j, defs, nd);

    /* Thread 0, by hand. */
    evs[n++] = enter(t, 0, 0);
    for (int k = 0; k < 2; k++) {            /* first and second visit */
        evs[n++] = enter(t += 2, 1, 0);
        evs[n++] = enter(t += 3, 1, 1);
    }
    evs[n++] = enter(t += 1, 2, 0);          /* recursion */
    evs[n++] = enter(t += 1, 2, 0);
    evs[n++] = enter(t += 4, 2, 1);
    evs[n++] = enter(t, 2, 1);               /* equal times */
    for (int k = 0; k < 2; k++) {            /* deep, then again */
        for (uint32_t r = 3; r < WILD_REGIONS; r++)
            evs[n++] = enter(t += 1, r, 0);
        for (uint32_t r = WILD_REGIONS; r-- > 3;)
            evs[n++] = enter(t += 2, r, 1);
    }
    evs[n++] = enter(t += 1, OTF2_UNDEFINED_REGION, 0);
    evs[n++] = enter(t += 1, 5, 0);
    evs[n++] = enter(t += 1, OTF2_UNDEFINED_REGION, 1); /* leaves 5 */
    evs[n++] = enter(t += 1, 6, 0);
    evs[n++] = enter(t += 1, 7, 0);
    evs[n++] = enter(t += 1, 8, 0);
    evs[n++] = enter(t += 1, 6, 1);          /* leaves 8 and 7 first */
    evs[n++] = enter(t += 1, 9, 1);          /* not open */
    evs[n++] = enter(t += 1, 10, 0);
    append_wild(j, 0, 1, evs, n, &events[0]);
    n = 0;
    evs[n++] = enter(t += 1, 11, 0);
    evs[n] = onoff(t += 5, OTF2_MEASUREMENT_OFF);
    n++;
    evs[n++] = enter(t += 1, 12, 0);         /* in the gap */
    evs[n] = onoff(t += 1, OTF2_MEASUREMENT_OFF);
    n++;
    evs[n] = onoff(t += 1, OTF2_MEASUREMENT_ON);
    n++;
    evs[n++] = enter(t += 1, 12, 1);
    evs[n++] = enter(t += 1, 11, 1);
    evs[n++] = enter(t += 1, 10, 1);
    append_wild(j, 0, 2, evs, n, &events[0]);

    /* Both threads, at random. */
    for (uint64_t b = 0; b < WILD_BATCHES; b++) {
        for (uint32_t th = 0; th < 2; th++) {
            n = 0;
            while (n < WILD_EVENTS) {
                uint32_t x = wild_next(&seed) % 100;
                uint32_t r = wild_next(&seed) % WILD_REGIONS;
                t += wild_next(&seed) % 3;
                if (x < 45)
                    evs[n++] = enter(t, x < 2 ? OTF2_UNDEFINED_REGION : r,
                                     0);
                else if (x < 97)
                    evs[n++] = enter(t, r, 1); /* mostly the innermost:
                                                  see below */
                else {
                    evs[n] = onoff(t, x == 99 ? OTF2_MEASUREMENT_ON
                                              : OTF2_MEASUREMENT_OFF);
                    n++;
                }
            }
            /* Make most Leaves leave the innermost open region. */
            {
                uint32_t open[WILD_EVENTS];
                size_t depth = 0;
                for (size_t i = 0; i < n; i++) {
                    if (evs[i].type == WEFT_REC_Enter)
                        open[depth++] = evs[i].u.Enter.region;
                    else if (evs[i].type == WEFT_REC_Leave && depth &&
                             wild_next(&seed) % 16)
                        evs[i].u.Leave.region = open[--depth];
                }
            }
            append_wild(j, th, 3 + b, evs, n, &events[th]);
        }
    }
    append_goodbye(j, 2, threads, events, dropped);
    weft_journal_close(j);
    free(evs);
}

/* Two members whose Enters and Leaves give the short way every case it
 * hands on convert to the same archive (files byte for byte, otf2-print
 * output) and the same result (profile rows, nesting figures) as when
 * they all take the general way; with 1 and 2 threads. */
static void test_convert_short_way_identical(void **state)
{
    ctx *c = *state;
    static const struct { unsigned threads; int general_only; } runs[] = {
        { 1, 1 }, { 1, 0 }, { 2, 0 }
    };
    weft_convert_result res[3];
    char dirs[3][80];

    write_wild_member(c, 0);
    write_wild_member(c, 1);
    for (size_t k = 0; k < 3; k++) {
        weft_convert_input in = { c->trace, dirs[k], "short way", 2,
                                  runs[k].threads, 0, 0 };
        int rc;
        snprintf(dirs[k], sizeof dirs[k], "%s/w%zu", c->dir, k);
        rc = weft__convert_trace(&in, runs[k].general_only, &res[k]);
        if (rc)
            print_error("convert (run %zu): %s\n", k, res[k].error);
        assert_int_equal(rc, 0);
    }
    /* The cases are there. */
    assert_int_equal(res[0].nlocations, 4);
    assert_true(res[0].nesting_added > 100);
    assert_true(res[0].nesting_unmatched > 100);
    assert_true(res[0].profile_anomalies > res[0].nesting_unmatched);
    assert_true(res[0].nregions > 4 * WILD_REGIONS);
    assert_true(res[0].time_last > 100000);  /* rank 1's peak */
    assert_all_same(res, dirs, 3);
}

/* A member of MANY_THREADS threads (two batches each, the first resent
 * after the second), regions 0..2, no Goodbye. */
#define MANY_THREADS 9

static void write_many_member(const ctx *c, uint32_t rank, uint32_t size)
{
    weft_journal *j = open_journal(c, rank);
    weft_record defs[6];

    defs[0] = str(0, "main");
    defs[1] = str(1, "foo");
    defs[2] = str(2, "bar");
    defs[3] = region(0, 0, 1);
    defs[4] = region(1, 1, 20);
    defs[5] = region(2, 2, 30);
    append_hello(j, rank, size, "node-a");
    append_defs(j, defs, sizeof defs / sizeof defs[0]);
    for (uint32_t t = 0; t < MANY_THREADS; t++) {
        uint64_t t0 = 1000 + 11 * t + rank;
        append_pairs(j, t, 2, append_pairs(j, t, 1, t0, 0), 0);
    }
    for (uint32_t t = 0; t < MANY_THREADS; t += 2)
        append_pairs(j, t, 1, 1000 + 11 * t + rank, 0); /* resent */
    weft_journal_close(j);
}

/* A memory bound (max_writers) that splits the members' locations into
 * groups, one journal pass each: never more writers open than it allows,
 * and the same result and files as without a bound, with 1 and 2
 * threads. weft_convert_writers turns convert_memory into that bound. */
static void test_convert_memory_bound(void **state)
{
    ctx *c = *state;
    static const struct { unsigned threads; uint64_t writers, passes; }
        runs[] = { { 1, 0, 2 }, { 1, 3, 6 }, { 2, 4, 10 }, { 2, 1, 18 } };
    weft_convert_result res[4];
    char dirs[4][80];

    assert_int_equal(weft_convert_writers(0), 0);
    assert_int_equal(weft_convert_writers(1), 1);
    assert_int_equal(weft_convert_writers(32u << 20), 32);
    assert_int_equal(weft_convert_writers(256u << 20), 928);
    write_many_member(c, 0, 2);
    write_many_member(c, 1, 2);
    for (size_t k = 0; k < 4; k++) {
        weft_convert_input in = { c->trace, dirs[k], "bound", 2,
                                  runs[k].threads, 0, runs[k].writers };
        int rc;
        snprintf(dirs[k], sizeof dirs[k], "%s/b%zu", c->dir, k);
        rc = weft_convert_trace(&in, &res[k]);
        if (rc)
            print_error("convert (run %zu): %s\n", k, res[k].error);
        assert_int_equal(rc, 0);
        assert_int_equal(res[k].nlocations, 2 * MANY_THREADS);
        assert_int_equal(res[k].events, 2 * MANY_THREADS * 4 * PAR_PAIRS);
        assert_int_equal(res[k].passes, runs[k].passes);
        if (runs[k].writers)
            assert_true(res[k].writers_peak <= runs[k].writers);
        else
            assert_int_equal(res[k].writers_peak, MANY_THREADS);
    }
    assert_all_same(res, dirs, 4);
}

/* The definitions the members below start with: strings "main" and
 * `second` (ids 0 and 1), regions 0..2 named "main". Fills defs[0..4]. */
static void first_defs(weft_record *defs, const char *second)
{
    defs[0] = str(0, "main");
    defs[1] = str(1, second);
    for (uint32_t i = 0; i < 3; i++)
        defs[2 + i] = region(i, 0, 1 + i);
}

/* Rank `rank` of `size` (host node-a) with definitions defs[0..n-1] and
 * one batch of Enter/Leave pairs on thread 0. */
static void write_member_with(const ctx *c, uint32_t rank, uint32_t size,
                              const weft_record *defs, size_t n)
{
    weft_journal *j = open_journal(c, rank);

    append_hello(j, rank, size, "node-a");
    append_defs(j, defs, n);
    append_pairs(j, 0, 1, 1000 + rank, 0);
    weft_journal_close(j);
}

/* Member `rank` of 2 whose Paradigm MPI is named `mpi_name`, with one
 * batch of Enter/Leave pairs. */
static void write_paradigm_member(const ctx *c, uint32_t rank,
                                  const char *mpi_name)
{
    weft_record defs[6];

    first_defs(defs, mpi_name);
    memset(&defs[5], 0, sizeof defs[5]);
    defs[5].type = WEFT_REC_Paradigm;
    defs[5].u.Paradigm.paradigm = OTF2_PARADIGM_MPI;
    defs[5].u.Paradigm.name = 1;
    defs[5].u.Paradigm.paradigmClass = OTF2_PARADIGM_CLASS_PROCESS;
    write_member_with(c, rank, 2, defs, sizeof defs / sizeof defs[0]);
}

/* Two members name Paradigm MPI differently (a key defined twice, not
 * the same): the first stands, every event is kept, and the trace says
 * what was left out (partial) instead of failing whole. */
static void test_convert_conflict_keeps_first(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "conflict", 2, 1, 0, 0 };
    weft_convert_result res;

    write_paradigm_member(c, 0, "MPI");
    write_paradigm_member(c, 1, "Message Passing");
    convert_ok(&in, &res);
    assert_int_equal(res.events, 2 * 2 * PAR_PAIRS);
    assert_non_null(strstr(res.incomplete, "1 definition left out (another "
                           "of the same key came first): member 1: Paradigm "
                           "conflicts with the definition of member 0"));
    weft_convert_result_free(&res);
    if (have_otf2_print())
        assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                             "traces.otf2 && otf2-print -G traces.otf2 | "
                             "grep -q 'PARADIGM .*\"MPI\"'", c->archive), 0);
}

/* Rank 0 of two names the location group of rank 1 (ingest takes any
 * rank of the trace), which never came: that property is left out, the
 * rest converts, and the trace says what was left out (partial). */
static void test_convert_absent_location_group(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "absent", 2, 1, 0, 0 };
    weft_convert_result res;
    weft_record defs[7];

    first_defs(defs, "weight");
    for (uint32_t i = 0; i < 2; i++) {
        weft_record *r = &defs[5 + i];
        memset(r, 0, sizeof *r);
        r->type = WEFT_REC_LocationGroupProperty;
        r->u.LocationGroupProperty.locationGroup = i;  /* rank 0, rank 1 */
        r->u.LocationGroupProperty.name = 1;
        r->u.LocationGroupProperty.type = OTF2_TYPE_UINT64;
        r->u.LocationGroupProperty.value.uint64 = 7;
    }
    write_member_with(c, 0, 2, defs, sizeof defs / sizeof defs[0]);
    convert_ok(&in, &res);
    assert_int_equal(res.members, 1);
    assert_int_equal(res.events, 2 * PAR_PAIRS);
    assert_non_null(strstr(res.incomplete, "1 definition left out (they "
                           "name the location group of a process that sent "
                           "nothing): "));
    assert_non_null(strstr(res.incomplete, "record 7: "
                           "LocationGroupProperty"));
    weft_convert_result_free(&res);
    if (have_otf2_print())
        assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                             "traces.otf2", c->archive), 0);
}

/* Rank 0 of 3 names, in a group of locations, threads of ranks 1 and 2,
 * which never came (ingest takes any rank's locations): they become
 * empty locations of location groups of their own, the acknowledged
 * events convert, and the trace says what was made. */
static void test_convert_absent_location(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "ghosts", 3, 1, 0, 0 };
    static const uint64_t members[] = { 0, UINT64_C(1) << 32,
                                        UINT64_C(2) << 32 | 3,
                                        UINT64_C(2) << 32 | 5 };
    weft_convert_result res;
    weft_record defs[6];

    first_defs(defs, "everyone");
    memset(&defs[5], 0, sizeof defs[5]);
    defs[5].type = WEFT_REC_Group;
    defs[5].u.Group.name = 1;
    defs[5].u.Group.groupType = OTF2_GROUP_TYPE_LOCATIONS;
    defs[5].u.Group.paradigm = OTF2_PARADIGM_UNKNOWN;
    defs[5].u.Group.numberOfMembers = 4;
    defs[5].u.Group.members = members;
    write_member_with(c, 0, 3, defs, sizeof defs / sizeof defs[0]);
    convert_ok(&in, &res);
    assert_int_equal(res.members, 1);
    assert_int_equal(res.nlocations, 1);
    assert_int_equal(res.events, 2 * PAR_PAIRS);
    assert_non_null(strstr(res.incomplete, "3 locations of processes that "
                           "sent nothing named by records, made empty "
                           "(first: rank 1 thread 0)"));
    weft_convert_result_free(&res);
    if (have_otf2_print())
        assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                             "traces.otf2 && test \"$(otf2-print -G "
                             "traces.otf2 | grep -c '^LOCATION ')\" = 4 && "
                             "test \"$(otf2-print -G traces.otf2 | grep -c "
                             "'^LOCATION_GROUP ')\" = 3 && /usr/bin/python3 "
                             "-c 'import otf2; r = otf2.reader.Reader("
                             "\"traces.otf2\"); assert len(r.definitions."
                             "locations) == 4; assert sum(1 for _ in "
                             "r.events) == 600'", /* 2 PAR_PAIRS */
                             c->archive), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, conv_setup, conv_teardown)
    const struct CMUnitTest tests[] = {
        T(test_convert_smoke),
        T(test_convert_missing_member),
        T(test_convert_decreasing_time),
        T(test_convert_bad_size),
        T(test_convert_undefined_ref),
        T(test_convert_corrupt_tail),
        T(test_convert_journal_names),
        T(test_convert_no_trace_dir),
        T(test_convert_clock_covers_events),
        T(test_convert_tsc_clocks),
        T(test_convert_offset_noise),
        T(test_convert_empty_member),
        T(test_convert_attribute_twice),
        T(test_convert_torn_tail),
        T(test_convert_corrupt_events),
        T(test_convert_sync),
        T(test_convert_resumed_member),
        T(test_convert_threads_identical),
        T(test_convert_threads_error),
        T(test_convert_nesting),
        T(test_convert_short_of_goodbye),
        T(test_convert_short_way_identical),
        T(test_convert_memory_bound),
        T(test_convert_conflict_keeps_first),
        T(test_convert_absent_location_group),
        T(test_convert_absent_location),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
