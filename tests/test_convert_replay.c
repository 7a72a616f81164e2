/* test_convert_replay.c - the conversion's replay (daemon/convert/replay.c) on
 * hand-written member journals: several threads converting members in
 * parallel give the archive and result of one (and a failure the same
 * message); gaps and lost records are repaired so that every location
 * nests, the profile saying the same as the archive; the short way of
 * runs of Enters and Leaves gives the archive and result of the general
 * way; convert_memory bounds the event writers open at once, the archive
 * unchanged.
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

/* ---- several threads (issue #5) ---------------------------------------- */

#define PAR_MEMBERS 6
enum { PAR_OK, PAR_LATE_TIME, PAR_BAD_COUNT };

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
    defs[5].u.Region.paradigm = OTF2_PARADIGM_MPI;  /* its rows say so */
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
        assert_string_equal(x->paradigm, y->paradigm);
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
                                  nthreads[k], 0, 0, NULL, NULL,
                                  0, 0, NULL, 0 };
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
    /* Sums: main, foo, each rank's own region and the time outside any
     * region; per location: three regions and the time outside on
     * threads 0 and 1. */
    assert_int_equal(res[0].nregions,
                     2 + PAR_MEMBERS + 1 + PAR_MEMBERS * 2 * (3 + 1));
    assert_int_equal(res[0].regions[0].location, WEFT_PROFILE_ALL);
    assert_string_equal(res[0].regions[0].region, "main");
    assert_string_equal(res[0].regions[0].paradigm, "compiler");
    assert_int_equal(res[0].regions[0].visits,
                     PAR_MEMBERS * (5 * PAR_PAIRS / 3 + 1));
    /* each row its region's paradigm, whatever a member's ids */
    for (size_t i = 0; i < res[0].nregions; i++) {
        const weft_region_row *r = &res[0].regions[i];
        assert_string_equal(r->paradigm,
                            !strcmp(r->region, "foo") ? "mpi"
                            : !strcmp(r->region, WEFT_PROFILE_OUTSIDE) ? ""
                            : "compiler");
    }
    assert_string_equal(res[0].regions[2 + PAR_MEMBERS].region,
                        WEFT_PROFILE_OUTSIDE);
    assert_int_equal(res[0].regions[2 + PAR_MEMBERS].location,
                     WEFT_PROFILE_ALL);
    assert_int_equal(res[0].regions[3 + PAR_MEMBERS].location, 0);
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
                                  nthreads[k], 0, 0, NULL, NULL,
                                  0, 0, NULL, 0 };
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
                                  4, 0, 0, NULL, NULL, 0, 0, NULL, 0 };
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

/* The regions open at OFF are left there and entered again at ON, the
 * Leave of a region not open is left out, what is open at the end is
 * left at the last event; the profile is that of the archive. */
static void test_convert_nesting(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "gaps", 1, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
    weft_convert_input in = { c->trace, c->archive, "short", 1, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
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
/* The wild member's definitions: a name and a region for each of
 * WILD_REGIONS (in reverse order on rank 1, whose clock has a peak in
 * the middle). Returns how many. */
static size_t wild_defs(uint32_t rank, weft_record *defs,
                        char names[][16])
{
    size_t nd = 0;

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
    return nd;
}

/* Thread 0's first two batches, by hand: every case of nesting. */
static void wild_by_hand(weft_journal *j, weft_record *evs, uint64_t *tp,
                         uint64_t *events)
{
    uint64_t t = *tp;
    size_t n = 0;

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
    append_wild(j, 0, 1, evs, n, events);
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
    append_wild(j, 0, 2, evs, n, events);
    *tp = t;
}

/* WILD_BATCHES batches on both threads, at random. */
static void wild_random(weft_journal *j, weft_record *evs, uint64_t t,
                        uint32_t seed, uint64_t *events)
{
    size_t n;

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
}

static void write_wild_member(const ctx *c, uint32_t rank)
{
    weft_journal *j = open_journal(c, rank);
    weft_record defs[2 * WILD_REGIONS + 4], *evs;
    char names[WILD_REGIONS][16];
    uint32_t threads[] = { 0, 1 };
    uint64_t events[] = { 0, 0 }, dropped[] = { 0, 0 };
    uint64_t t = 1000;
    size_t nd;

    evs = calloc(WILD_EVENTS + 4 * WILD_REGIONS + 64, sizeof *evs);
    assert_non_null(evs);
    nd = wild_defs(rank, defs, names);
    append_hello(j, rank, 2, rank ? "node-b" : "node-a");
    append_defs(j, defs, nd);
    wild_by_hand(j, evs, &t, events);
    wild_random(j, evs, t, 7 + rank, events);
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
                                  runs[k].threads, 0, 0, NULL, NULL,
                                  0, 0, NULL, 0 };
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
                                  runs[k].threads, 0, runs[k].writers, NULL,
                                  NULL, 0, 0, NULL, 0 };
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

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, conv_setup, conv_teardown)
    const struct CMUnitTest tests[] = {
        T(test_convert_threads_identical),
        T(test_convert_threads_error),
        T(test_convert_nesting),
        T(test_convert_short_of_goodbye),
        T(test_convert_short_way_identical),
        T(test_convert_memory_bound),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
