/* convert_util.c - what the conversion tests share (test_convert.c,
 * test_convert_replay.c): a temporary trace directory, member journals
 * written by hand, and an archive read back with libotf2.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "convert_util.h"
#include "codec.h"
#include "testutil.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

int conv_setup(void **state)
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

int conv_teardown(void **state)
{
    ctx *c = *state;
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    assert_int_equal(system(cmd), 0);
    free(c);
    return 0;
}

void append(weft_journal *j, uint8_t kind, uint32_t location,
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

/* Appends Hello h of trace "smoke". */
static void put_hello(weft_journal *j, Weft__Hello *h)
{
    uint8_t buf[512];
    size_t n;

    h->protocol_version = 1;
    h->trace = (char *)"smoke";
    assert_true(weft__hello__get_packed_size(h) <= sizeof buf);
    n = weft__hello__pack(h, buf);
    append(j, WEFT_JE_HELLO, 0, 0, 0, 0, buf, n);
}

/* A Hello of a process whose clock counts res ticks per second, named
 * clock (NULL: none, as older clients). */
void append_hello_clock(weft_journal *j, uint32_t rank, uint32_t size,
                        const char *host, uint64_t res,
                        const char *clock)
{
    Weft__Hello h = WEFT__HELLO__INIT;

    h.rank = rank;
    h.size = size;
    h.hostname = (char *)host;
    h.pid = 1000 + rank;
    h.timer_resolution = res;
    if (clock)
        h.clock = (char *)clock;
    h.realtime_ns = 1700000000000000000ull;
    h.clock_at_realtime = 50;
    put_hello(j, &h);
}

void append_hello(weft_journal *j, uint32_t rank, uint32_t size,
                  const char *host)
{
    append_hello_clock(j, rank, size, host, 1000000000, NULL);
}

void append_hello_tree(weft_journal *j, uint32_t rank, uint32_t size,
                       const tree_proc *p)
{
    Weft__Hello h = WEFT__HELLO__INIT;

    h.rank = rank;
    h.size = size;
    h.hostname = (char *)"node-a";
    h.pid = p->pid;
    h.command = (char *)p->command;
    h.timer_resolution = 1000000000;
    h.tree = p->tree;
    h.parent_pid = p->parent_pid;
    h.root = rank == 0;
    put_hello(j, &h);
}

void append_goodbye(weft_journal *j, uint32_t nloc,
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
void append_events(weft_journal *j, uint32_t thread, uint64_t seq,
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
void convert_ok(const weft_convert_input *in, weft_convert_result *res)
{
    int rc = weft_convert_trace(in, res);

    if (rc)
        print_error("convert: %s\n", res->error);
    assert_int_equal(rc, 0);
}

/* Appends Definitions seq 1 holding defs[0..n-1]. */
void append_defs_seq(weft_journal *j, uint64_t seq, const weft_record *defs,
                     size_t n)
{
    bytes b = { 0 };

    for (size_t i = 0; i < n; i++)
        put_rec(&b, &defs[i], NULL);
    append(j, WEFT_JE_DEFS, 0, 0, seq, 0, b.p, b.n);
    free(b.p);
}

void append_defs(weft_journal *j, const weft_record *defs, size_t n)
{
    append_defs_seq(j, 1, defs, n);
}

weft_journal *open_journal(const ctx *c, uint32_t rank)
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
void write_member0(const ctx *c, uint64_t second_base)
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

void write_member1(const ctx *c, uint32_t size, int undefined_ref)
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

int run(const char *fmt, const char *arg)
{
    char cmd[512];
    int st;

    snprintf(cmd, sizeof cmd, fmt, arg);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int have_otf2_print(void)
{
    return access("/usr/bin/otf2-print", X_OK) == 0;
}

/* ---- reading an archive back with libotf2 ------------------------------ */

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

/* See convert_util.h. */
OTF2_Reader *read_global_defs(const char *archive_dir,
                              OTF2_GlobalDefReaderCallbacks *cb, void *ud)
{
    char anchor[256];
    OTF2_Reader *rd;
    OTF2_GlobalDefReader *gdr;
    uint64_t n = 0;

    snprintf(anchor, sizeof anchor, "%s/traces.otf2", archive_dir);
    rd = OTF2_Reader_Open(anchor);
    assert_non_null(rd);
    assert_int_equal(OTF2_Reader_SetSerialCollectiveCallbacks(rd),
                     OTF2_SUCCESS);
    gdr = OTF2_Reader_GetGlobalDefReader(rd);
    assert_non_null(gdr);
    assert_int_equal(OTF2_Reader_RegisterGlobalDefCallbacks(rd, gdr, cb, ud),
                     OTF2_SUCCESS);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    assert_int_equal(OTF2_Reader_ReadAllGlobalDefinitions(rd, gdr, &n),
                     OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_CloseGlobalDefReader(rd, gdr), OTF2_SUCCESS);
    return rd;
}

/* Reads the clock, the locations and every event of archive_dir. */
void read_archive(const char *archive_dir, archive_info *a)
{
    OTF2_Reader *rd;
    OTF2_GlobalDefReaderCallbacks *dcb;
    OTF2_GlobalEvtReader *ger;
    OTF2_GlobalEvtReaderCallbacks *ecb;
    uint64_t n = 0;
    int defs_open;

    memset(a, 0, sizeof *a);
    a->ordered = 1;
    dcb = OTF2_GlobalDefReaderCallbacks_New();
    assert_non_null(dcb);
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dcb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, on_location);
    rd = read_global_defs(archive_dir, dcb, a);
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

/* Appends a batch of PAR_PAIRS Enter/Leave pairs of regions 0..2 from
 * t, announcing count more than it holds. */
uint64_t append_pairs(weft_journal *j, uint32_t thread, uint64_t seq,
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

const weft_region_row *sum_row(const weft_convert_result *res,
                               const char *name)
{
    for (size_t i = 0; i < res->nregions; i++)
        if (res->regions[i].location == WEFT_PROFILE_ALL &&
            strcmp(res->regions[i].region, name) == 0)
            return &res->regions[i];
    fail_msg("no profile row for %s", name);
    return NULL;
}

void write_two(const ctx *c, const weft_record *defs0, size_t ndefs0,
               const weft_record *evs0, size_t nevs0,
               const weft_record *defs1, size_t ndefs1,
               const weft_record *evs1, size_t nevs1)
{
    const weft_record *defs[] = { defs0, defs1 }, *evs[] = { evs0, evs1 };
    size_t ndefs[] = { ndefs0, ndefs1 };
    uint32_t threads[] = { 0 };
    uint64_t events[][1] = { { nevs0 }, { nevs1 } }, dropped[] = { 0 };

    for (uint32_t rank = 0; rank < 2; rank++) {
        weft_journal *j = open_journal(c, rank);
        append_hello(j, rank, 2, "node-a");
        append_defs(j, defs[rank], ndefs[rank]);
        append_events(j, 0, 1, 0, evs[rank], events[rank][0]);
        append_goodbye(j, 1, threads, events[rank], dropped);
        weft_journal_close(j);
    }
}

/* See convert_util.h. */
void same_archive(const char *a, const char *b)
{
    char cmd[400];  /* run() adds its words to it */

    snprintf(cmd, sizeof cmd, "diff -r -q -x traces.otf2 '%s' '%s'", a, b);
    assert_int_equal(system(cmd), 0);
    if (!have_otf2_print())
        return;
    snprintf(cmd, sizeof cmd,
             "diff <(otf2-print -A '%s/traces.otf2' | grep -vi 'trace id') "
             "<(otf2-print -A '%s/traces.otf2' | grep -vi 'trace id')", a,
             b);
    assert_int_equal(run("bash -c \"%s\"", cmd), 0);
    assert_int_equal(run("otf2-print -Werror --silent %s/traces.otf2 "
                         ">/dev/null 2>&1", a), 0);
}

/* Doubles equal, NaN too. */
static int same_double(double x, double y)
{
    return x == y || (x != x && y != y);
}

/* See convert_util.h. */
void same_result(const weft_convert_result *x, const weft_convert_result *y)
{
    assert_int_equal(x->members, y->members);
    assert_int_equal(x->events, y->events);
    assert_int_equal(x->dropped, y->dropped);
    assert_int_equal(x->refused, y->refused);
    assert_int_equal(x->nlocations, y->nlocations);
    for (size_t i = 0; i < x->nlocations; i++) {
        assert_int_equal(x->locations[i].id, y->locations[i].id);
        assert_int_equal(x->locations[i].events, y->locations[i].events);
        assert_string_equal(x->locations[i].name, y->locations[i].name);
    }
    assert_int_equal(x->time_first, y->time_first);
    assert_int_equal(x->time_last, y->time_last);
    assert_int_equal(x->timer_resolution, y->timer_resolution);
    assert_string_equal(x->clock, y->clock);
    assert_int_equal(x->profile_anomalies, y->profile_anomalies);
    assert_int_equal(x->nesting_added, y->nesting_added);
    assert_int_equal(x->nesting_unmatched, y->nesting_unmatched);
    assert_string_equal(x->incomplete, y->incomplete);
    assert_int_equal(x->nregions, y->nregions);
    for (size_t i = 0; i < x->nregions; i++) {
        assert_int_equal(x->regions[i].location, y->regions[i].location);
        assert_string_equal(x->regions[i].region, y->regions[i].region);
        assert_string_equal(x->regions[i].paradigm, y->regions[i].paradigm);
        assert_int_equal(x->regions[i].visits, y->regions[i].visits);
        assert_true(x->regions[i].excl_s == y->regions[i].excl_s);
        assert_true(x->regions[i].incl_s == y->regions[i].incl_s);
    }
    assert_int_equal(x->ntimelines, y->ntimelines);
    for (size_t i = 0; i < x->ntimelines; i++) {
        assert_int_equal(x->timelines[i].location, y->timelines[i].location);
        assert_true(x->timelines[i].start_s == y->timelines[i].start_s);
        assert_true(x->timelines[i].width_s == y->timelines[i].width_s);
        assert_int_equal(x->timelines[i].nbins, y->timelines[i].nbins);
        assert_memory_equal(x->timelines[i].bins, y->timelines[i].bins,
                            x->timelines[i].nbins *
                                sizeof *x->timelines[i].bins);
    }
    assert_int_equal(x->ntimeline_regions, y->ntimeline_regions);
    for (size_t i = 0; i < x->ntimeline_regions; i++) {
        assert_int_equal(x->timeline_regions[i].id,
                         y->timeline_regions[i].id);
        assert_string_equal(x->timeline_regions[i].name,
                            y->timeline_regions[i].name);
    }
    assert_int_equal(x->nmessages, y->nmessages);
    if (x->nmessages)
        assert_memory_equal(x->messages, y->messages,
                            x->nmessages * sizeof *x->messages);
    assert_int_equal(x->nio_files, y->nio_files);
    for (size_t i = 0; i < x->nio_files; i++) {
        const weft_io_file_row *a = &x->io_files[i], *b = &y->io_files[i];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->others, b->others);
        assert_int_equal(a->bytes_read, b->bytes_read);
        assert_int_equal(a->bytes_written, b->bytes_written);
        assert_int_equal(a->operations, b->operations);
        assert_true(a->time_s == b->time_s);
    }
    assert_int_equal(x->nmetrics, y->nmetrics);
    for (size_t i = 0; i < x->nmetrics; i++) {
        const weft_metric_row *a = &x->metrics[i], *b = &y->metrics[i];
        assert_int_equal(a->location, b->location);
        assert_int_equal(a->member, b->member);
        assert_string_equal(a->name, b->name);
        assert_true(a->start_s == b->start_s);
        assert_true(a->width_s == b->width_s);
        assert_int_equal(a->npoints, b->npoints);
        assert_int_equal(a->series_total, b->series_total);
        for (size_t k = 0; k < 3 * a->npoints; k++)
            assert_true(same_double(a->points[k], b->points[k]));
    }
}
