/* test_convert_maps.c - events keep their member's own ids (#33): the
 * converter (daemon/convert/replay.c, otf2out.c) writes each member's
 * events with the ids the member gave its definitions and, in each
 * location's local definitions, OTF2 mapping tables from them to the
 * archive's global ids, which readers apply.
 *
 * Two members name the same regions in opposite orders and the second
 * one a region of its own that it never leaves (nesting adds the Leave,
 * with the weft::nesting attribute, which only weftd defines, after the
 * first member's attribute). Read raw
 * (local definitions not read), the second member's events hold its own
 * ids; read as every reader does, the global ones; its mapping tables
 * map exactly its ids, the nesting attribute's too, while the first
 * member, whose ids are the global ones, needs none. otf2-print -Werror
 * reads the archive.
 *
 * What the report sums is summed in each member's own ids too (replay.c)
 * and only then taken to the archive's: two members name regions and
 * files in opposite orders, one of them a region twice (an Enter of one
 * id matched by a Leave of the other, as the archive's one region), and
 * the profile, the files and the timelines' regions come out by name as
 * the archive has them.
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

#include <otf2/otf2.h>

#include "convert_util.h"
#include "testutil.h"
#include "weft_errors.h"

#define MAX_EVENTS 16
#define N(a) (sizeof (a) / sizeof (a)[0])
#define MAX_MAPS 16

typedef struct seen {
    /* events of the location read */
    size_t n;
    OTF2_RegionRef region[MAX_EVENTS];
    int leave[MAX_EVENTS];
    uint32_t nattrs[MAX_EVENTS];
    OTF2_AttributeRef attr[MAX_EVENTS]; /* the first one's id */
    /* its mapping tables */
    size_t nmaps;
    OTF2_MappingType type[MAX_MAPS];
    uint64_t global_of[MAX_MAPS][5]; /* of local ids 0..3, and of
                                        weftd's own id of weft::nesting */
    /* global definitions */
    OTF2_AttributeRef nest_attr;
    OTF2_StringRef nest_name;
    OTF2_StringRef region_name[8];
    char strings[64][32];
} seen;

static void note_event(seen *s, OTF2_RegionRef region, int leave,
                       OTF2_AttributeList *al)
{
    assert_true(s->n < MAX_EVENTS);
    s->region[s->n] = region;
    s->leave[s->n] = leave;
    s->nattrs[s->n] = al ? OTF2_AttributeList_GetNumberOfElements(al) : 0;
    if (s->nattrs[s->n]) {
        OTF2_Type t;
        OTF2_AttributeValue v;
        assert_int_equal(OTF2_AttributeList_GetAttributeByIndex(
                             al, 0, &s->attr[s->n], &t, &v),
                         OTF2_SUCCESS);
    }
    s->n++;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud,
                                  OTF2_AttributeList *al,
                                  OTF2_RegionRef region)
{
    (void)loc;
    (void)t;
    (void)pos;
    note_event(ud, region, 0, al);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud,
                                  OTF2_AttributeList *al,
                                  OTF2_RegionRef region)
{
    (void)loc;
    (void)t;
    (void)pos;
    note_event(ud, region, 1, al);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_map(void *ud, OTF2_MappingType type,
                                const OTF2_IdMap *map)
{
    seen *s = ud;

    assert_true(s->nmaps < MAX_MAPS);
    s->type[s->nmaps] = type;
    for (uint64_t i = 0; i < 5; i++)
        assert_int_equal(OTF2_IdMap_GetGlobalId(
                             map, i < 4 ? i : OTF2_UNDEFINED_ATTRIBUTE - 1u,
                             &s->global_of[s->nmaps][i]),
                         OTF2_SUCCESS);
    s->nmaps++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_string(void *ud, OTF2_StringRef self,
                                   const char *string)
{
    seen *s = ud;

    if (self < 64)
        snprintf(s->strings[self], sizeof s->strings[self], "%s", string);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_region(void *ud, OTF2_RegionRef self,
                                   OTF2_StringRef name, OTF2_StringRef cname,
                                   OTF2_StringRef desc, OTF2_RegionRole role,
                                   OTF2_Paradigm paradigm,
                                   OTF2_RegionFlag flags, OTF2_StringRef file,
                                   uint32_t begin, uint32_t end)
{
    seen *s = ud;

    (void)cname, (void)desc, (void)role, (void)paradigm, (void)flags;
    (void)file, (void)begin, (void)end;
    if (self < 8)
        s->region_name[self] = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_attribute(void *ud, OTF2_AttributeRef self,
                                      OTF2_StringRef name,
                                      OTF2_StringRef desc, OTF2_Type type)
{
    seen *s = ud;

    (void)desc, (void)type;
    if (name < 64 && !strcmp(s->strings[name], "weft::nesting")) {
        s->nest_attr = self;
        s->nest_name = name;
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* Reads location loc of the archive into s: its local definitions (and
 * so its mapping tables applied to its events) only with `local`. */
static void read_location(const char *archive_dir, OTF2_LocationRef loc,
                          int local, seen *s)
{
    OTF2_GlobalDefReaderCallbacks *dcb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_EvtReaderCallbacks *ecb = OTF2_EvtReaderCallbacks_New();
    OTF2_DefReaderCallbacks *lcb = OTF2_DefReaderCallbacks_New();
    OTF2_Reader *rd;
    OTF2_EvtReader *er;
    uint64_t n = 0;

    memset(s, 0, sizeof *s);
    s->nest_attr = OTF2_UNDEFINED_ATTRIBUTE;
    assert_non_null(dcb);
    assert_non_null(ecb);
    assert_non_null(lcb);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(dcb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dcb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(dcb, on_attribute);
    rd = read_global_defs(archive_dir, dcb, s);
    assert_int_equal(OTF2_Reader_SelectLocation(rd, loc), OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_OpenEvtFiles(rd), OTF2_SUCCESS);
    er = OTF2_Reader_GetEvtReader(rd, loc);
    assert_non_null(er);
    if (local) {
        OTF2_DefReader *dr;
        assert_int_equal(OTF2_Reader_OpenDefFiles(rd), OTF2_SUCCESS);
        dr = OTF2_Reader_GetDefReader(rd, loc);
        assert_non_null(dr);
        OTF2_DefReaderCallbacks_SetMappingTableCallback(lcb, on_map);
        assert_int_equal(OTF2_Reader_RegisterDefCallbacks(rd, dr, lcb, s),
                         OTF2_SUCCESS);
        assert_int_equal(OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n),
                         OTF2_SUCCESS);
        OTF2_Reader_CloseDefReader(rd, dr);
        OTF2_Reader_CloseDefFiles(rd);
    }
    OTF2_EvtReaderCallbacks_SetEnterCallback(ecb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(ecb, on_leave);
    assert_int_equal(OTF2_Reader_RegisterEvtCallbacks(rd, er, ecb, s),
                     OTF2_SUCCESS);
    assert_int_equal(OTF2_Reader_ReadAllLocalEvents(rd, er, &n),
                     OTF2_SUCCESS);
    assert_int_equal(n, s->n);
    OTF2_Reader_CloseEvtReader(rd, er);
    OTF2_Reader_CloseEvtFiles(rd);
    OTF2_Reader_Close(rd);
    OTF2_EvtReaderCallbacks_Delete(ecb);
    OTF2_DefReaderCallbacks_Delete(lcb);
}

/* The mapping table of type t that s read, or -1. */
static int map_of(const seen *s, OTF2_MappingType t)
{
    for (size_t i = 0; i < s->nmaps; i++)
        if (s->type[i] == t)
            return (int)i;
    return -1;
}

static const char *region_named(const seen *s, OTF2_RegionRef r)
{
    assert_true(r < 8);
    return s->strings[s->region_name[r]];
}

static void write_members(const ctx *c)
{
    /* an attribute of its own: weft::nesting is global attribute 1 */
    weft_record defs0[] = { str(0, "alpha"), str(1, "beta"),
                            region(0, 0, 1), region(1, 1, 1),
                            attribute(0, 0, OTF2_TYPE_UINT64) };
    weft_record evs0[] = { enter(10, 0, 0), enter(20, 0, 1) };
    /* the same regions the other way round, and one of its own */
    weft_record defs1[] = { str(0, "beta"), str(1, "alpha"), str(2, "gamma"),
                            region(0, 0, 1), region(1, 1, 1),
                            region(2, 2, 1) };
    weft_record evs1[] = { enter(30, 0, 0), enter(40, 0, 1),
                           enter(50, 1, 0), enter(60, 1, 1),
                           enter(70, 2, 0) };

    write_two(c, defs0, N(defs0), evs0, N(evs0), defs1, N(defs1), evs1,
              N(evs1));
}

static void test_maps_local_ids(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "maps", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    seen raw, mapped, first;
    int k;

    write_members(c);
    convert_ok(&in, &res);
    assert_int_equal(res.events, 2 + 6); /* and the Leave nesting adds */
    weft_convert_result_free(&res);

    /* as written: member 1's own region ids, its attribute id 0 */
    read_location(c->archive, (uint64_t)1 << 32, 0, &raw);
    assert_int_equal(raw.n, 6);
    assert_int_equal(raw.region[0], 0);
    assert_int_equal(raw.region[2], 1);
    assert_int_equal(raw.region[4], 2);
    assert_int_equal(raw.region[5], 2);
    assert_int_equal(raw.nattrs[5], 1);
    assert_int_equal(raw.attr[5], OTF2_UNDEFINED_ATTRIBUTE - 1u);

    /* as readers see it: the archive's regions by name, weft::nesting */
    read_location(c->archive, (uint64_t)1 << 32, 1, &mapped);
    assert_int_equal(mapped.n, 6);
    assert_string_equal(region_named(&mapped, mapped.region[0]), "beta");
    assert_string_equal(region_named(&mapped, mapped.region[1]), "beta");
    assert_string_equal(region_named(&mapped, mapped.region[2]), "alpha");
    assert_string_equal(region_named(&mapped, mapped.region[4]), "gamma");
    assert_int_equal(mapped.leave[5], 1);
    assert_string_equal(region_named(&mapped, mapped.region[5]), "gamma");
    assert_int_not_equal(mapped.nest_attr, OTF2_UNDEFINED_ATTRIBUTE);
    assert_int_equal(mapped.nattrs[5], 1);
    assert_int_equal(mapped.attr[5], mapped.nest_attr);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(mapped.nattrs[i], 0);

    /* its tables: regions 0 <-> 1 swapped, strings too, the attribute */
    k = map_of(&mapped, OTF2_MAPPING_REGION);
    assert_true(k >= 0);
    assert_string_equal(region_named(&mapped, mapped.global_of[k][0]),
                        "beta");
    assert_string_equal(region_named(&mapped, mapped.global_of[k][1]),
                        "alpha");
    assert_string_equal(region_named(&mapped, mapped.global_of[k][2]),
                        "gamma");
    k = map_of(&mapped, OTF2_MAPPING_STRING);
    assert_true(k >= 0);
    assert_string_equal(mapped.strings[mapped.global_of[k][0]], "beta");
    assert_string_equal(mapped.strings[mapped.global_of[k][2]], "gamma");
    k = map_of(&mapped, OTF2_MAPPING_ATTRIBUTE);
    assert_true(k >= 0);
    assert_int_equal(mapped.nest_attr, 1);
    assert_int_equal(mapped.global_of[k][4], mapped.nest_attr);
    assert_int_equal(map_of(&mapped, OTF2_MAPPING_COMM), -1);

    /* member 0 numbered everything as the archive does: no table */
    read_location(c->archive, 0, 1, &first);
    assert_int_equal(first.n, 2);
    assert_string_equal(region_named(&first, first.region[0]), "alpha");
    assert_int_equal(first.nmaps, 0);

    if (have_otf2_print())
        assert_int_equal(run("otf2-print -Werror --silent %s/traces.otf2 "
                             ">/dev/null 2>&1", c->archive), 0);
}

static const OTF2_MetricMemberRef members0[] = { 0, 1 };
static const OTF2_MetricMemberRef members1[] = { 1, 0 };
static const OTF2_Type mtypes[] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
/* cycles 100, misses 5 */
static const OTF2_MetricValue mvalues[] = { { .unsigned_int = 100 },
                                            { .unsigned_int = 5 } };

static void write_sum_members(const ctx *c)
{
    weft_record defs0[] = { str(0, "alpha"), str(1, "beta"),
                            str(2, "/tmp/a"), str(3, "/tmp/b"),
                            region(0, 0, 1), region(1, 1, 1),
                            io_file(0, 2), io_file(1, 3),
                            io_handle(0, 2, 0, OTF2_UNDEFINED_IO_HANDLE),
                            io_handle(1, 3, 1, OTF2_UNDEFINED_IO_HANDLE),
                            str(4, "cycles"), str(5, "misses"),
                            metric_member(0, 4), metric_member(1, 5),
                            metric_class(0, 2, members0) };
    weft_record evs0[] = { enter(10, 0, 0), io_op(20, 0, 5, 0),
                           io_op(30, 0, 5, 1),
                           metric_event(35, 0, 2, mtypes, mvalues),
                           enter(40, 0, 1) };
    /* the other way round, and alpha twice (ids 1 and 2) */
    weft_record defs1[] = { str(0, "/tmp/b"), str(1, "/tmp/a"),
                            str(2, "beta"), str(3, "alpha"),
                            region(0, 2, 1), region(1, 3, 1),
                            region(2, 3, 1),
                            io_file(0, 0), io_file(1, 1),
                            io_handle(0, 0, 0, OTF2_UNDEFINED_IO_HANDLE),
                            io_handle(1, 1, 1, OTF2_UNDEFINED_IO_HANDLE),
                            str(4, "misses"), str(5, "cycles"),
                            metric_member(0, 4), metric_member(1, 5),
                            metric_class(0, 2, members1) };
    weft_record evs1[] = { enter(100, 0, 0), enter(110, 0, 1),
                           enter(120, 2, 0),
                           metric_event(130, 0, 2, mtypes, mvalues),
                           io_op(160, 1, 7, 0), io_op(170, 1, 7, 1),
                           io_op(180, 0, 11, 0), io_op(200, 0, 11, 1),
                           enter(250, 1, 1) };

    write_two(c, defs0, N(defs0), evs0, N(evs0), defs1, N(defs1), evs1,
              N(evs1));
}

static const weft_io_file_row *file_row(const weft_convert_result *res,
                                        const char *name)
{
    for (size_t i = 0; i < res->nio_files; i++)
        if (!strcmp(res->io_files[i].name, name))
            return &res->io_files[i];
    fail_msg("no row of file %s", name);
    return NULL;
}

/* The name of the region that timeline bin b (id + 1) holds. */
static const char *timeline_region(const weft_convert_result *res,
                                   uint32_t b)
{
    for (size_t n = 0; b && n < res->ntimeline_regions; n++)
        if (res->timeline_regions[n].id + 1u == b)
            return res->timeline_regions[n].name;
    return "";
}

static void test_sums_in_member_ids(void **state)
{
    ctx *c = *state;
    weft_convert_result res;
    const weft_region_row *r;
    const weft_io_file_row *f;

    write_sum_members(c);
    for (unsigned threads = 1; threads <= 2; threads++) {
        weft_convert_input in = { c->trace, c->archive, "sums", 2, 0, 0,
                                  0, NULL, NULL, 0, 0, NULL, 0 };
        in.threads = threads;
        convert_ok(&in, &res);
        assert_int_equal(res.events, 5 + 9);
        assert_int_equal(res.profile_anomalies, 0);
        assert_int_equal(res.nesting_added, 0);
        r = sum_row(&res, "alpha");
        assert_int_equal(r->visits, 2);
        assert_int_equal((int)(r->excl_s * 1e9 + 0.5), 30 + 130);
        r = sum_row(&res, "beta");
        assert_int_equal(r->visits, 1);
        assert_int_equal((int)(r->incl_s * 1e9 + 0.5), 10);
        f = file_row(&res, "/tmp/a");
        assert_int_equal(f->bytes_written, 5 + 7);
        assert_int_equal(f->operations, 2);
        f = file_row(&res, "/tmp/b");
        assert_int_equal(f->bytes_written, 11);
        assert_int_equal(f->operations, 1);
        /* one bin each (1 us wide), alpha's most of it on both */
        assert_int_equal(res.ntimelines, 2);
        for (size_t i = 0; i < res.ntimelines; i++) {
            assert_int_equal(res.timelines[i].nbins, 1);
            assert_string_equal(timeline_region(&res,
                                                res.timelines[i].bins[0]),
                                "alpha");
        }
        /* both series of both: cycles 100, misses 5 */
        assert_int_equal(res.nmetrics, 4);
        for (size_t i = 0; i < res.nmetrics; i++) {
            const weft_metric_row *m = &res.metrics[i];
            assert_true(m->npoints >= 1);
            assert_true(m->points[2] ==
                        (strcmp(m->name, "cycles") ? 5.0 : 100.0));
        }
        weft_convert_result_free(&res);
    }
    if (have_otf2_print())
        assert_int_equal(run("otf2-print -Werror --silent %s/traces.otf2 "
                             ">/dev/null 2>&1", c->archive), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_maps_local_ids, conv_setup,
                                        conv_teardown),
        cmocka_unit_test_setup_teardown(test_sums_in_member_ids, conv_setup,
                                        conv_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
