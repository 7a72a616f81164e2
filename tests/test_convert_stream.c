/* test_convert_stream.c - a trace converted while it records
 * (daemon/convert/stream.c, issue #33): a stream writes each member's
 * events as its journal grows, and the conversion at the end finishes
 * the archive; the archive and the result must be those of a conversion
 * of the same journals alone.
 *
 * Four members, the journals growing between steps: rank 0 defines a
 * region after its first batch, has two threads and resends a batch;
 * rank 1 numbers the regions its own way (one twice), leaves a region
 * open, sends more after the stream's last look, and never says goodbye
 * (the conversion's catch-up reads the rest and ends it); rank 2's clock
 * counts at another rate (left to the conversion from its Hello); rank
 * 3's second batch names a location group in an attribute value, an id
 * only the trace's definitions number (left to the conversion, which
 * writes its files anew). Then: the budget's shares of its owners, a
 * writer budget too small for rank 0's second thread, one too small for libotf2's file buffer once a writer
 * flushes, a file system short of the budget's free floor, and an
 * archive that cannot be made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert_util.h"
#include "testutil.h"
#include "weft_errors.h"

#define N(a) (sizeof (a) / sizeof (a)[0])

static const uint32_t attr_ids[] = { 0 };
static const OTF2_Type attr_types[] = { OTF2_TYPE_LOCATION_GROUP };
static const OTF2_AttributeValue attr_values[] = {
    { .locationGroupRef = 1 }
};

/* The members' journals, open for appending while the test runs. */
typedef struct journals {
    weft_journal *j[4];
} journals;

static void rank0_start(const ctx *c, journals *js)
{
    weft_record defs[] = { str(0, "main"), str(1, "work"),
                           region(0, 0, 1), region(1, 1, 1) };
    weft_record evs[] = { enter(10, 0, 0), enter(20, 1, 0),
                          enter(30, 1, 1) };

    js->j[0] = open_journal(c, 0);
    append_hello(js->j[0], 0, 4, "node-a");
    append_defs(js->j[0], defs, N(defs));
    append_events(js->j[0], 0, 1, 0, evs, N(evs));
}

static void rank0_more(journals *js)
{
    weft_record defs[] = { str(2, "late"), region(2, 2, 1) };
    weft_record evs[] = { enter(40, 2, 0), enter(50, 2, 1),
                          enter(60, 0, 1) };
    weft_record evs1[] = { enter(15, 1, 0), enter(25, 1, 1) };
    weft_record resend[] = { enter(10, 0, 0), enter(20, 1, 0),
                             enter(30, 1, 1) };

    append_defs_seq(js->j[0], 2, defs, N(defs));
    append_events(js->j[0], 0, 2, 0, evs, N(evs));
    append_events(js->j[0], 1, 1, 0, evs1, N(evs1));
    append_events(js->j[0], 0, 1, 0, resend, N(resend));
}

static void rank0_end(journals *js)
{
    uint32_t threads[] = { 0, 1 };
    uint64_t events[] = { 6, 2 }, dropped[] = { 0, 0 };

    append_goodbye(js->j[0], 2, threads, events, dropped);
}

static void rank1_start(const ctx *c, journals *js)
{
    /* work, main, and main again */
    weft_record defs[] = { str(0, "work"), str(1, "main"),
                           region(0, 0, 1), region(1, 1, 1),
                           region(2, 1, 1) };
    weft_record evs[] = { enter(100, 2, 0), enter(110, 0, 0),
                          enter(120, 0, 1), enter(130, 1, 1),
                          enter(140, 0, 0) /* left open */ };

    js->j[1] = open_journal(c, 1);
    append_hello(js->j[1], 1, 4, "node-a");
    append_defs(js->j[1], defs, N(defs));
    append_events(js->j[1], 0, 1, 0, evs, N(evs));
}

static void rank1_more(journals *js)
{
    weft_record evs[] = { enter(150, 0, 1), enter(160, 1, 0) };

    append_events(js->j[1], 0, 2, 0, evs, N(evs));
}

static void rank2_all(const ctx *c, journals *js)
{
    weft_record defs[] = { str(0, "main"), region(0, 0, 1) };
    weft_record evs[] = { enter(1, 0, 0), enter(2, 0, 1) };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { 2 }, dropped[] = { 0 };

    js->j[2] = open_journal(c, 2);
    append_hello_clock(js->j[2], 2, 4, "node-b", 1000000, NULL);
    append_defs(js->j[2], defs, N(defs));
    append_events(js->j[2], 0, 1, 0, evs, N(evs));
    append_goodbye(js->j[2], 1, threads, events, dropped);
}

static void rank3_start(const ctx *c, journals *js)
{
    weft_record defs[] = { str(0, "main"), str(1, "peer"), region(0, 0, 1),
                           attribute(0, 1, OTF2_TYPE_LOCATION_GROUP) };
    weft_record evs[] = { enter(200, 0, 0), enter(210, 0, 1) };

    js->j[3] = open_journal(c, 3);
    append_hello(js->j[3], 3, 4, "node-a");
    append_defs(js->j[3], defs, N(defs));
    append_events(js->j[3], 0, 1, 0, evs, N(evs));
}

static void rank3_more(journals *js)
{
    weft_record al;
    weft_record evs[] = { enter(220, 0, 0), enter(230, 0, 1) };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { 4 }, dropped[] = { 0 };

    memset(&al, 0, sizeof al);
    al.type = WEFT_REC_AttributeList;
    al.u.AttributeList.numberOfAttributes = 1;
    al.u.AttributeList.attributes = attr_ids;
    al.u.AttributeList.types = attr_types;
    al.u.AttributeList.values = attr_values;
    evs[0].attributes = &al;
    append_events(js->j[3], 0, 2, 0, evs, N(evs));
    append_goodbye(js->j[3], 1, threads, events, dropped);
}

static void close_all(journals *js)
{
    for (size_t i = 0; i < N(js->j); i++)
        if (js->j[i])
            weft_journal_close(js->j[i]);
    memset(js, 0, sizeof *js);
}

/* res (a conversion with a stream of in) is what a conversion of the
 * same journals alone makes: the result and the archive (into
 * c->dir/alone); its passes into *passes. */
static void same_as_alone(const ctx *c, const weft_convert_input *in,
                          const weft_convert_result *res, uint64_t *passes)
{
    weft_convert_input alone_in = *in;
    weft_convert_result alone;
    char dir[160];

    snprintf(dir, sizeof dir, "%s/alone", c->dir);
    alone_in.archive_dir = dir;
    convert_ok(&alone_in, &alone);
    same_result(res, &alone);
    same_archive(in->archive_dir, dir);
    *passes = alone.passes;
    weft_convert_result_free(&alone);
}

static void test_stream_equals_conversion(void **state)
{
    ctx *c = *state;
    /* two threads: the catch-up and the replay in parallel */
    weft_convert_input in = { c->trace, c->archive, "stream", 4, 2, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_stream *s = weft_convert_stream_new(&in, NULL, 0);
    weft_convert_result res;
    uint64_t passes;
    journals js = { { NULL } };

    assert_non_null(s);
    rank0_start(c, &js);
    assert_int_equal(weft_convert_stream_step(s, 0), 1);
    rank1_start(c, &js);
    assert_int_equal(weft_convert_stream_step(s, 1), 1);
    rank0_more(&js);
    rank2_all(c, &js);
    rank3_start(c, &js);
    assert_int_equal(weft_convert_stream_step(s, 0), 1);
    assert_int_equal(weft_convert_stream_step(s, 2), 0);
    assert_int_equal(weft_convert_stream_step(s, 3), 1);
    rank0_end(&js);
    rank3_more(&js);
    assert_int_equal(weft_convert_stream_step(s, 0), 1);
    assert_int_equal(weft_convert_stream_step(s, 3), 0);
    rank1_more(&js);  /* after the stream's last look */
    close_all(&js);
    assert_true(weft_convert_stream_ok(s));

    assert_int_equal(weft_convert_trace_stream(&in, s, &res), 0);
    same_as_alone(c, &in, &res, &passes);
    assert_int_equal(res.events, 6 + 2 + 8 + 2 + 4);
    assert_true(res.nesting_added > 0);  /* rank 1's open region */
    /* ranks 0 and 1 were the stream's: only 2 and 3 read again */
    assert_int_equal(passes, 4);
    assert_int_equal(res.passes, 2);
    assert_int_equal(res.streamed, 2);
    weft_convert_result_free(&res);
}

/* A budget of one writer: rank 0's second thread finds none, and rank 0
 * is left to the conversion; the archive is the same. */
static void test_stream_budget(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "stream", 4, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_budget b;
    weft_convert_stream *s;
    weft_convert_result res;
    uint64_t passes;
    journals js = { { NULL } };

    weft_convert_budget_init(&b, WEFT_CONVERT_WRITER_BYTES);
    s = weft_convert_stream_new(&in, &b, 0);
    assert_non_null(s);
    rank0_start(c, &js);
    assert_int_equal(weft_convert_stream_step(s, 0), 1);
    assert_int_equal(b.open, WEFT_CONVERT_WRITER_BYTES);
    rank0_more(&js);
    assert_int_equal(weft_convert_stream_step(s, 0), 0);
    assert_int_equal(b.open, 0);  /* given back */
    rank0_end(&js);
    rank1_start(c, &js);
    assert_int_equal(weft_convert_stream_step(s, 1), 1);
    close_all(&js);
    assert_int_equal(weft_convert_trace_stream(&in, s, &res), 0);
    assert_int_equal(b.open, 0);
    assert_int_equal(res.passes, 1);  /* rank 0 */
    same_as_alone(c, &in, &res, &passes);
    weft_convert_result_free(&res);
    weft_convert_budget_destroy(&b);
}

/* The budget shared by owners: one owner's streams hold at most half of
 * it (at least a writer and its file buffer), whatever room is left; a
 * second owner still has the other half; what goes back is its owner's
 * again. No bound (0): no share either. */
static void test_budget_owners(void **state)
{
    const uint64_t least = WEFT_CONVERT_WRITER_BYTES +
                           WEFT_CONVERT_FILE_BUFFER_BYTES;
    const uint64_t max = 4 * least, w = WEFT_CONVERT_WRITER_BYTES;
    weft_convert_budget b;
    uint64_t held = 0;

    (void)state;
    assert_int_equal(weft_convert_budget_share(0), 0);
    assert_int_equal(weft_convert_budget_share(least), least);
    assert_int_equal(weft_convert_budget_share(max), 2 * least);
    weft_convert_budget_init(&b, max);
    while (weft_convert_budget_take(&b, 1000, w) == 0)
        held += w;
    assert_true(held <= max / 2 && held + w > max / 2);
    assert_int_equal(weft_convert_budget_take(&b, 1000, w), WEFT_BUDGET_SHARE);
    assert_int_equal(b.nowners, 1);
    /* the other owner fills the rest */
    for (uint64_t got = 0; got + w <= max - held; got += w)
        assert_int_equal(weft_convert_budget_take(&b, 1001, w), 0);
    assert_int_equal(weft_convert_budget_take(&b, 1002, w), WEFT_BUDGET_FULL);
    assert_int_equal(b.nowners, 2);  /* 1002 holds nothing: not kept */
    weft_convert_budget_give(&b, 1000, held);
    assert_int_equal(b.nowners, 1);
    assert_int_equal(weft_convert_budget_take(&b, 1002, w), 0);
    weft_convert_budget_give(&b, 1002, w);
    weft_convert_budget_give(&b, 1001, max);  /* more than held: all */
    assert_int_equal(b.open, 0);
    assert_int_equal(b.nowners, 0);
    weft_convert_budget_destroy(&b);
    weft_convert_budget_init(&b, 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(weft_convert_budget_take(&b, 7, least), 0);
    weft_convert_budget_give(&b, 7, 100 * least);
    assert_int_equal(b.nowners, 0);
    weft_convert_budget_destroy(&b);
}

/* A budget with room for a writer but not for libotf2's file buffer:
 * rank 0's thread writes enough for its writer to flush, and rank 0 is
 * left to the conversion at once, its memory given back. */
static void test_stream_file_buffer(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "stream", 1, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_record defs[] = { str(0, "a"), str(1, "b"), str(2, "c"),
                           region(0, 0, 1), region(1, 1, 1),
                           region(2, 2, 1) };
    uint32_t threads[] = { 0 };
    uint64_t events[] = { 0 }, dropped[] = { 0 }, t = 100;
    weft_convert_budget b;
    weft_convert_stream *s;
    weft_convert_result res;
    uint64_t passes;
    weft_journal *j;

    weft_convert_budget_init(&b, 2 * WEFT_CONVERT_WRITER_BYTES);
    s = weft_convert_stream_new(&in, &b, 0);
    j = open_journal(c, 0);
    append_hello(j, 0, 1, "node-a");
    append_defs(j, defs, N(defs));
    assert_int_equal(weft_convert_stream_step(s, 0), 1);
    /* 120 000 events: more than a writer's chunks hold */
    for (uint64_t seq = 1; seq <= 200; seq++)
        t = append_pairs(j, 0, seq, t, 0);
    events[0] = 200 * 2 * PAR_PAIRS;
    append_goodbye(j, 1, threads, events, dropped);
    weft_journal_close(j);
    assert_int_equal(weft_convert_stream_step(s, 0), 0);
    assert_non_null(strstr(weft_convert_stream_why(s, 0),
                           "file buffers hold convert_memory"));
    assert_true(weft_convert_stream_ok(s));
    assert_int_equal(b.open, 0);
    assert_int_equal(weft_convert_trace_stream(&in, s, &res), 0);
    assert_int_equal(res.streamed, 0);
    same_as_alone(c, &in, &res, &passes);
    weft_convert_result_free(&res);
    weft_convert_budget_destroy(&b);
}

/* A file system with less free than the budget's floor: the stream
 * stops at its first flush and removes what it wrote (the journals
 * need the room); the conversion then writes the archive as alone. */
static void test_stream_floor(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "stream", 4, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_budget b;
    weft_convert_stream *s;
    weft_convert_result res;
    uint64_t passes;
    journals js = { { NULL } };
    char cmd[256];

    weft_convert_budget_init(&b, 0);
    b.floor = UINT64_MAX / 4;
    s = weft_convert_stream_new(&in, &b, 0);
    rank0_start(c, &js);
    rank0_more(&js);
    rank0_end(&js);
    close_all(&js);
    assert_int_equal(weft_convert_stream_step(s, 0), 0);
    assert_false(weft_convert_stream_ok(s));
    assert_non_null(strstr(weft_convert_stream_error(s),
                           "No space left on device"));
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -type f)\"",
             c->archive);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(b.open, 0);
    assert_int_equal(weft_convert_trace_stream(&in, s, &res), 0);
    same_as_alone(c, &in, &res, &passes);
    weft_convert_result_free(&res);
    weft_convert_budget_destroy(&b);
}

/* An archive that cannot be made: the stream stops, the conversion says
 * why as it would alone; and a stream freed without converting. */
static void test_stream_broken(void **state)
{
    ctx *c = *state;
    char bad[160];
    weft_convert_input in = { c->trace, bad, "stream", 4, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_stream *s;
    weft_convert_result res;
    journals js = { { NULL } };
    FILE *f;

    snprintf(bad, sizeof bad, "%s/file", c->dir);
    assert_non_null(f = fopen(bad, "w"));
    fclose(f);
    snprintf(bad, sizeof bad, "%s/file/archive", c->dir);
    rank0_start(c, &js);
    rank0_end(&js);
    close_all(&js);
    s = weft_convert_stream_new(&in, NULL, 0);
    assert_non_null(s);
    assert_int_equal(weft_convert_stream_step(s, 0), 0);
    assert_false(weft_convert_stream_ok(s));
    assert_int_equal(weft_convert_trace_stream(&in, s, &res), WEFT_EOTF2);
    assert_non_null(strstr(res.error, "archive"));
    weft_convert_result_free(&res);

    in.archive_dir = c->archive;
    s = weft_convert_stream_new(&in, NULL, 0);
    assert_int_equal(weft_convert_stream_step(s, 0), 1);
    weft_convert_stream_free(s);
    weft_convert_stream_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stream_equals_conversion,
                                        conv_setup, conv_teardown),
        cmocka_unit_test(test_budget_owners),
        cmocka_unit_test_setup_teardown(test_stream_budget, conv_setup,
                                        conv_teardown),
        cmocka_unit_test_setup_teardown(test_stream_file_buffer, conv_setup,
                                        conv_teardown),
        cmocka_unit_test_setup_teardown(test_stream_floor, conv_setup,
                                        conv_teardown),
        cmocka_unit_test_setup_teardown(test_stream_broken, conv_setup,
                                        conv_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
