/* test_import.c - weftd's checks of an ImportTrace (import/import.c:
 * weft_import_check), and the rows it becomes and comes from.
 *
 * A valid request passes; then each rule, one at a time, on a copy made
 * bad: the name, the path (relative, with "..", "//", a trailing slash,
 * a control character, too long), the state and its error, the clock,
 * tags (count, key characters, duplicates), members (count, ranks,
 * duplicates), locations (count, rank beyond the members, duplicates,
 * events that do not add up), profile rows (a location the trace does
 * not have, a time that is not a number), timelines (bins, count,
 * location), message rows (count, a pair twice), file rows (count, a
 * name with a control character, a time that is not a number), metric
 * series (count, a location it does not have, values not in threes or
 * too many, an infinite value, a series twice). Every refusal names what
 * it refused. Rows -> message -> rows keeps every value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "weft_errors.h"

/* A valid request of 2 members and 3 locations, built from rows. */
typedef struct fixture {
    weft_import_rows r;
    weft_member_row mem[2];
    weft_location_row loc[3];
    weft_tag tag[1];
    weft_region_row reg[2];
    uint32_t bins[4];
    weft_timeline_row tl[1];
    weft_timeline_region tlr[1];
    weft_message_row msg[2];
    weft_io_file_row io[2];
    double points[6];
    weft_metric_row met[2];
    Weft__ImportTrace m;
    char err[512];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    assert_non_null(f);
    f->r.row.name = "run";
    f->r.row.path = "/data/run";
    f->r.row.state = WEFT_STATE_COMPLETE;
    f->r.row.hosts = "a,b";
    f->r.row.members = 2;
    f->r.row.events = 30;
    f->r.row.time_first = 10;
    f->r.row.time_last = 20;
    f->r.row.timer_resolution = 1000000000;
    f->mem[0] = (weft_member_row){ .rank = 0, .host = "a" };
    f->mem[1] = (weft_member_row){ .rank = 1, .host = "b" };
    for (int i = 0; i < 3; i++)
        f->loc[i] = (weft_location_row){ .id = (uint64_t)i * 7,
            .rank = (uint32_t)(i / 2), .name = "t", .events = 10 };
    f->tag[0] = (weft_tag){ "app", "x" };
    f->reg[0] = (weft_region_row){ .location = WEFT_PROFILE_ALL,
        .region = "main", .visits = 3, .incl_s = 1.5, .excl_s = 0.5,
        .paradigm = "user" };
    f->reg[1] = (weft_region_row){ .location = 7, .region = "main",
        .visits = 1, .incl_s = 0.5, .excl_s = 0.25 };
    f->tl[0] = (weft_timeline_row){ .location = 14, .start_s = 0,
        .width_s = 1e-6, .bins = f->bins, .nbins = 4 };
    f->tlr[0] = (weft_timeline_region){ 0, "main" };
    f->msg[0] = (weft_message_row){ 0, 1, 5, 500 };
    f->msg[1] = (weft_message_row){ 1, 0, 2, 64 };
    f->io[0] = (weft_io_file_row){ .name = "/data/in", .bytes_read = 4096,
        .operations = 2, .time_s = 0.125 };
    f->io[1] = (weft_io_file_row){ .name = "", .others = 3,
        .bytes_written = 10, .operations = 3, .time_s = 0.5 };
    f->points[0] = 1, f->points[1] = 2, f->points[2] = 2;
    f->points[3] = NAN, f->points[4] = NAN, f->points[5] = NAN;
    f->met[0] = (weft_metric_row){ .location = 0, .member = 0,
        .name = "flops", .unit = "ops", .start_s = 0, .width_s = 0.5,
        .points = f->points, .npoints = 2, .series_total = 2 };
    f->met[1] = (weft_metric_row){ .location = 7, .member = 0,
        .name = "flops", .unit = "ops", .width_s = 0.5, .points = f->points,
        .npoints = 1, .series_total = 2 };
    f->r.detail = (weft_trace_detail){ .members = f->mem, .nmembers = 2,
        .locations = f->loc, .nlocations = 3, .tags = f->tag, .ntags = 1,
        .regions = f->reg, .nregions = 2, .timelines = f->tl,
        .ntimelines = 1, .timeline_regions = f->tlr,
        .ntimeline_regions = 1, .messages = f->msg, .nmessages = 2,
        .io_files = f->io, .nio_files = 2, .metrics = f->met,
        .nmetrics = 2 };
    f->r.row.locations = 3;
    assert_int_equal(weft_import_to_msg(&f->r, &f->m), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    weft_import_msg_free(&f->m);
    free(f);
    return 0;
}

/* m is refused with code, the message holding what. */
static void refused(fixture *f, int code, const char *what)
{
    int rc = weft_import_check(&f->m, f->err, sizeof f->err);

    if (rc != code || !strstr(f->err, what))
        fail_msg("got %d '%s', expected %d '%s'", rc, f->err, code, what);
}

static void test_valid(void **state)
{
    fixture *f = *state;

    assert_int_equal(weft_import_check(&f->m, f->err, sizeof f->err), 0);
}

static void test_name_and_path(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = { "data/run", "/data/../run",
        "/data//run", "/data/run/", "/data/./run", "/data/..", "" };
    char *long_path = malloc(WEFT_IMPORT_MAX_STRING + 2);

    f->m.name = "";
    refused(f, WEFT_EINVAL, "name is empty");
    f->m.name = "a\nb";
    refused(f, WEFT_EINVAL, "name has a control character (0x0a)");
    f->m.name = "run";
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f->m.path = (char *)bad[i];
        refused(f, WEFT_EINVAL, "path");
    }
    f->m.path = "/data/r\x7fn";
    refused(f, WEFT_EINVAL, "control character (0x7f)");
    assert_non_null(long_path);
    memset(long_path, 'x', WEFT_IMPORT_MAX_STRING + 1);
    long_path[0] = '/';
    long_path[WEFT_IMPORT_MAX_STRING + 1] = 0;
    f->m.path = long_path;
    refused(f, WEFT_ELIMIT, "path is 4097 bytes long");
    free(long_path);
}

static void test_state_and_clock(void **state)
{
    fixture *f = *state;

    f->m.state = "recording";
    refused(f, WEFT_EINVAL, "state 'recording'");
    f->m.state = WEFT_STATE_PARTIAL;
    refused(f, WEFT_EINVAL, "a partial trace says why");
    f->m.error = "2 events missing";
    assert_int_equal(weft_import_check(&f->m, f->err, sizeof f->err), 0);
    f->m.state = WEFT_STATE_COMPLETE;
    refused(f, WEFT_EINVAL, "a complete one has none");
    f->m.error = "";
    f->m.timer_resolution = 0;
    refused(f, WEFT_EINVAL, "timer resolution 0");
    f->m.timer_resolution = 1;
    f->m.time_first = 30;
    refused(f, WEFT_EINVAL, "time 30 .. 20");
}

static void test_tags(void **state)
{
    fixture *f = *state;
    Weft__Tag t2 = WEFT__TAG__INIT, *tags[2] = { f->m.tags[0], &t2 };
    Weft__Tag **own = f->m.tags;

    f->m.tags[0]->key = "a b";
    refused(f, WEFT_EINVAL, "tag key 'a b' has a character");
    f->m.tags[0]->key = "app";
    t2.key = "app";
    t2.value = "y";
    f->m.tags = tags;
    f->m.n_tags = 2;
    refused(f, WEFT_EINVAL, "tag 'app' is given twice");
    f->m.n_tags = WEFT_IMPORT_MAX_TAGS + 1;
    refused(f, WEFT_ELIMIT, "65 tags");
    f->m.n_tags = 1;
    f->m.tags = own; /* teardown frees the fixture's array */
}

static void test_members_and_locations(void **state)
{
    fixture *f = *state;

    f->m.member_rows[1]->rank = 2;
    refused(f, WEFT_EINVAL, "member rank 2 of 2 members");
    f->m.member_rows[1]->rank = 0;
    refused(f, WEFT_EINVAL, "member rank 0 is given twice");
    f->m.member_rows[1]->rank = 1;
    f->m.members = WEFT_IMPORT_MAX_MEMBERS + 1;
    refused(f, WEFT_ELIMIT, "members");
    f->m.members = 2;
    f->m.locations[2]->rank = 5;
    refused(f, WEFT_EINVAL, "location 14 has rank 5 of 2 members");
    f->m.locations[2]->rank = 1;
    f->m.locations[2]->events = 11;
    refused(f, WEFT_EINVAL, "30 events, its locations hold 31");
    f->m.locations[2]->events = 10;
    f->m.locations[2]->id = 7;
    refused(f, WEFT_EINVAL, "location 7 is given twice");
    f->m.locations[2]->id = 14;
    f->m.n_locations = WEFT_IMPORT_MAX_LOCATIONS + 1;
    refused(f, WEFT_ELIMIT, "locations, at most");
    f->m.n_locations = 3;
}

static void test_profile_and_timelines(void **state)
{
    fixture *f = *state;
    char para[WEFT_IMPORT_MAX_PARADIGM + 2];

    f->m.regions[1]->location = 8;
    refused(f, WEFT_EINVAL, "a profile row of location 8");
    f->m.regions[1]->location = 7;
    f->m.regions[0]->excl_s = NAN;
    refused(f, WEFT_EINVAL, "exclusive time is nan");
    f->m.regions[0]->excl_s = -1;
    refused(f, WEFT_EINVAL, "exclusive time is -1");
    f->m.regions[0]->excl_s = 0.5;
    f->m.regions[0]->paradigm = "mpi\t";
    refused(f, WEFT_EINVAL, "a region's paradigm has a control character");
    memset(para, 'x', sizeof para - 1);
    para[sizeof para - 1] = 0;
    f->m.regions[0]->paradigm = para;
    refused(f, WEFT_ELIMIT, "a region's paradigm is 65 bytes long");
    f->m.regions[0]->paradigm = "";  /* a weft before schema 15 */
    assert_int_equal(weft_import_check(&f->m, f->err, sizeof f->err), 0);
    f->m.regions[0]->paradigm = "user";
    f->m.timelines[0]->location = 1;
    refused(f, WEFT_EINVAL, "a timeline of location 1");
    f->m.timelines[0]->location = 14;
    f->m.timelines[0]->n_bins = WEFT_IMPORT_MAX_BINS + 1;
    refused(f, WEFT_ELIMIT, "a timeline of 1025 bins");
    f->m.timelines[0]->n_bins = 4;
    f->m.timelines[0]->width_s = INFINITY;
    refused(f, WEFT_EINVAL, "bin width is inf");
    f->m.timelines[0]->width_s = 1e-6;
    f->m.n_timelines = WEFT_IMPORT_MAX_TIMELINES + 1;
    refused(f, WEFT_ELIMIT, "4097 timelines");
    f->m.n_timelines = 1;
    assert_int_equal(weft_import_check(&f->m, f->err, sizeof f->err), 0);
}

static void test_report_rows(void **state)
{
    fixture *f = *state;

    f->m.n_messages = WEFT_IMPORT_MAX_MESSAGES + 1;
    refused(f, WEFT_ELIMIT, "65537 message rows");
    f->m.n_messages = 2;
    f->m.messages[1]->sender = 0, f->m.messages[1]->receiver = 1;
    refused(f, WEFT_EINVAL, "two message rows from rank 0 to rank 1");
    f->m.messages[1]->sender = 1, f->m.messages[1]->receiver = 0;
    f->m.n_io_files = WEFT_IMPORT_MAX_IO_FILES + 1;
    refused(f, WEFT_ELIMIT, "52 file I/O rows");
    f->m.n_io_files = 2;
    f->m.io_files[0]->name = "/data/\nin";
    refused(f, WEFT_EINVAL, "a file's name has a control character");
    f->m.io_files[0]->name = "/data/in";
    f->m.io_files[1]->time_s = NAN;
    refused(f, WEFT_EINVAL, "a file's time in I/O is nan");
    f->m.io_files[1]->time_s = 0.5;
    f->m.n_metrics = WEFT_IMPORT_MAX_METRICS + 1;
    refused(f, WEFT_ELIMIT, "17 metric series");
    f->m.n_metrics = 2;
    f->m.metrics[1]->location = 8;
    refused(f, WEFT_EINVAL, "a metric series of location 8");
    f->m.metrics[1]->location = 0;
    refused(f, WEFT_EINVAL, "two series of metric member 0 on location 0");
    f->m.metrics[1]->location = 7;
    f->m.metrics[0]->n_points = 5;
    refused(f, WEFT_EINVAL, "a metric series of 5 values");
    f->m.metrics[0]->n_points = WEFT_IMPORT_MAX_POINTS + 3;
    refused(f, WEFT_EINVAL, "of at most 256 bins");
    f->m.metrics[0]->n_points = 6;
    f->points[1] = -INFINITY;
    refused(f, WEFT_EINVAL, "a metric series has the value -inf");
    f->points[1] = 2;
    f->m.metrics[0]->width_s = -1;
    refused(f, WEFT_EINVAL, "bin width is -1");
    f->m.metrics[0]->width_s = 0.5;
    assert_int_equal(weft_import_check(&f->m, f->err, sizeof f->err), 0);
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    weft_import_rows r;

    assert_int_equal(weft_import_from_msg(&f->m, &r), 0);
    assert_string_equal(r.row.name, "run");
    assert_string_equal(r.row.path, "/data/run");
    assert_null(r.row.error);
    assert_int_equal(r.row.events, 30);
    assert_int_equal(r.row.locations, 3);
    assert_int_equal(r.detail.nmembers, 2);
    assert_string_equal(r.detail.members[1].host, "b");
    assert_string_equal(r.detail.members[1].state, WEFT_MEMBER_COMPLETE);
    assert_int_equal(r.detail.locations[2].id, 14);
    assert_int_equal(r.detail.regions[0].location, WEFT_PROFILE_ALL);
    assert_int_equal(r.detail.regions[1].location, 7);
    assert_true(r.detail.regions[1].excl_s == 0.25);
    assert_string_equal(r.detail.regions[0].paradigm, "user");
    assert_string_equal(r.detail.regions[1].paradigm, ""); /* NULL sent */
    assert_int_equal(r.detail.timelines[0].nbins, 4);
    assert_ptr_equal(r.detail.timelines[0].bins, f->bins);
    assert_string_equal(r.detail.tags[0].key, "app");
    assert_string_equal(r.detail.timeline_regions[0].name, "main");
    assert_int_equal(r.detail.nmessages, 2);
    assert_int_equal(r.detail.messages[0].receiver, 1);
    assert_int_equal(r.detail.messages[0].bytes, 500);
    assert_int_equal(r.detail.messages[1].messages, 2);
    assert_int_equal(r.detail.nio_files, 2);
    assert_string_equal(r.detail.io_files[0].name, "/data/in");
    assert_int_equal(r.detail.io_files[0].bytes_read, 4096);
    assert_int_equal(r.detail.io_files[1].others, 3);
    assert_true(r.detail.io_files[1].time_s == 0.5);
    assert_int_equal(r.detail.nmetrics, 2);
    assert_int_equal(r.detail.metrics[1].location, 7);
    assert_string_equal(r.detail.metrics[0].unit, "ops");
    assert_int_equal(r.detail.metrics[0].npoints, 2);
    assert_true(r.detail.metrics[0].points[2] == 2);
    assert_true(isnan(r.detail.metrics[0].points[5]));
    assert_int_equal(r.detail.metrics[1].series_total, 2);
    weft_import_rows_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_name_and_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_and_clock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_members_and_locations, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_profile_and_timelines, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
