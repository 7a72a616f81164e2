/* test_convert.c - trace conversion (daemon/convert/convert.c, replay.c,
 * otf2out.c), end to end on hand-written member journals.
 *
 * Two members' journals (with resent entries) become an archive that
 * `otf2-print -Werror` accepts, with the expected figures, and whose
 * ClockProperties (read back with libotf2's reader) cover every event; a
 * member that only said Hello is one location with no events; decreasing
 * timestamps, a corrupt or torn tail (named by file and offset), a wrong
 * trace size, an undefined reference and bad journal names each fail with
 * a message naming the journal; clocks (TSC and CLOCK_MONOTONIC members,
 * their offsets), resumed members, torn and corrupt events, definitions
 * that conflict or are missing. test_convert_replay.c has the replay's
 * ways: threads in parallel, nesting repaired, the short way, the memory
 * bound; convert_util.c what both share.
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
#include "convert_util.h"
#include "testutil.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

static void test_convert_smoke(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "smoke trace", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "partial", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
                              0, NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;

    assert_int_equal(weft_convert_trace(&in, &res), WEFT_ENOTFOUND);
    assert_non_null(strstr(res.error, "/nonexistent/weft"));
    weft_convert_result_free(&res);
}

static void test_convert_clock_covers_events(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "clock", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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

static weft_record clock_offset(uint64_t t, int64_t offset_ns, double sd)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockOffset;
    r.u.ClockOffset.time = t;
    r.u.ClockOffset.offset = offset_ns;
    r.u.ClockOffset.standardDeviation = sd;
    return r;
}

/* A member of rank (of 2) on a clock of res ticks/s named clock, with
 * ClockOffsets (t, ns) at offsets[0..noff-1] (error bound sd ns), an
 * Enter at 5000 and its Leave at 6000 ticks. */
static void write_clocked(const ctx *c, uint32_t rank, uint64_t res,
                          const char *clock, const int64_t (*offsets)[2],
                          size_t noff, double sd)
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
        defs[2 + i] = clock_offset((uint64_t)offsets[i][0], offsets[i][1],
                                   sd);
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
    weft_convert_input in = { c->trace, c->archive, "tsc", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    archive_info a;
    char clock[64];

    write_clocked(c, 0, R, "tsc", two, 2, 100.0);
    write_clocked(c, 1, R + 1000, "tsc", lone, 1, 100.0);
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
    write_clocked(c, 1, 1000000000, "monotonic", lone, 1, 100.0);
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
    write_clocked(c, 1, R + R / 100, "tsc", lone, 1, 100.0);
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
 * they are real drift and readers interpolate; so do points without a
 * bound (NaN, negative). Rank 1 counts at the same rate without
 * offsets. */
static void test_convert_offset_noise(void **state)
{
    ctx *c = *state;
    const uint64_t R = 2445402000u;
    const int64_t near[2][2] = { { 1000, -500 }, { 20000, -650 } };
    const int64_t far[2][2] = { { 1000, -500 }, { 20000, -800 } };
    weft_convert_input in = { c->trace, c->archive, "noise", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    archive_info a;

    write_clocked(c, 0, R, "tsc", near, 2, 100.0);
    write_clocked(c, 1, R, "tsc", NULL, 0, 100.0);
    convert_ok(&in, &res);
    assert_int_equal(res.timer_resolution, R);
    read_archive(c->archive, &a);
    /* -550 ns is -1345 ticks, at the Enter (5000) as at the Leave */
    assert_int_equal(a.tmin, 5000 - 1345);
    assert_in_range(res.time_first, 5000 - 1345 - 1, 5000 - 1345);
    weft_convert_result_free(&res);

    write_clocked(c, 0, R, "tsc", far, 2, 100.0);
    convert_ok(&in, &res);
    read_archive(c->archive, &a);
    /* -500 ns - 300 * 4000 / 19000 at 5000: -563 ns, -1377 ticks */
    assert_in_range(a.tmin, 5000 - 1378, 5000 - 1376);
    weft_convert_result_free(&res);

    /* A bound that is none (NaN, negative: a process's own ClockOffset
     * may say anything) makes a point exact: nothing flattened, -500 ns
     * - 150 * 4000 / 19000 at 5000: -532 ns, -1300 ticks. */
    for (int k = 0; k < 2; k++) {
        write_clocked(c, 0, R, "tsc", near, 2, k ? -100.0 : NAN);
        convert_ok(&in, &res);
        read_archive(c->archive, &a);
        assert_in_range(a.tmin, 5000 - 1301, 5000 - 1299);
        weft_convert_result_free(&res);
    }
}

static void test_convert_empty_member(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "empty", 1, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "attrs", 1, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "t", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "synced", 1, 1, 1, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "resumed", 1, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "conflict", 2, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "absent", 2, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "ghosts", 3, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
        T(test_convert_conflict_keeps_first),
        T(test_convert_absent_location_group),
        T(test_convert_absent_location),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
