/* test_view_index.c - weft view's index (cli/view_index.c): visits built
 * by hand, windows checked against every visit there (exact when a
 * column wide, binned when narrower, none missed), a visit's details
 * (exclusive time, call path), what the building does with nesting
 * gone wrong (too deep, a Leave too many, visits never left), and MPI
 * messages matched send to receive and sent with the windows they
 * cross; the index file written and mapped back, and not used when it
 * is another archive's or cut short.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "view_index.h"

/* A view of nloc locations and nreg regions named r0, r1, ... */
static void make_view(weft__view *v, size_t nloc, size_t nreg)
{
    memset(v, 0, sizeof *v);
    v->resolution = 1000000000;
    v->locs = calloc(nloc, sizeof *v->locs);
    v->nlocs = nloc;
    for (size_t i = 0; i < nloc; i++) {
        v->locs[i].loc = 100 + i;
        v->locs[i].name = strdup("thread");
        v->locs[i].group = strdup("rank 0");
        v->locs[i].host = strdup("node");
    }
    v->regions = calloc(nreg, sizeof *v->regions);
    v->nregions = nreg;
    for (size_t r = 0; r < nreg; r++) {
        char name[16];
        snprintf(name, sizeof name, "r%zu", r);
        v->regions[r].name = strdup(name);
    }
}

/* Random properly nested visits on location i from t = 1 on: returns
 * the end. */
static uint64_t random_visits(weft__view *v, size_t i, unsigned nvisits,
                              unsigned seed)
{
    unsigned depth = 0;
    uint64_t t = 1;

    srand(seed);
    for (unsigned k = 0; k < nvisits; k++) {
        if (depth < 6 && (depth == 0 || rand() % 3)) {
            assert_int_equal(weft__view_enter(v, i, (uint32_t)(rand() % 5),
                                              t, &depth), 0);
        } else {
            assert_int_equal(weft__view_leave(v, i, t, &depth), 0);
        }
        /* lengths from 1 tick to 100 000: some visits far narrower than
         * a column, some far wider */
        t += 1 + (uint64_t)(rand() % 4 == 0 ? rand() % 100000 : rand() % 10);
    }
    while (depth > 0)
        assert_int_equal(weft__view_leave(v, i, t++, &depth), 0);
    return t;
}

/* Checks one row of a window against every visit of l. */
static void check_row(const weft__vloc *l, json_t *row, uint64_t t0,
                      uint64_t t1, unsigned px)
{
    double w = (double)(t1 - t0) / px;
    json_t *spans = json_object_get(row, "spans");
    json_t *bins = json_object_get(row, "bins");
    size_t want = 0, k;
    json_t *e;

    assert_non_null(spans);
    assert_non_null(bins);
    for (unsigned d = 0; d < l->ndepth; d++) {
        /* columns where a narrower visit of this depth lies */
        char *narrow = calloc(px, 1);
        for (size_t s = 0; s < l->depth[d].n; s++) {
            const weft__vspan *v = &l->depth[d].v[s];
            int found = 0;
            if (v->end <= t0 || v->start >= t1)
                continue;
            if ((double)(v->end - v->start) < w) {
                uint64_t from = v->start > t0 ? v->start : t0;
                uint64_t to = v->end < t1 ? v->end : t1;
                for (uint64_t c = (uint64_t)((double)(from - t0) / w);
                     c < px && (double)c * w + (double)t0 < (double)to; c++)
                    narrow[c] = 1;
                continue;
            }
            want++;
            json_array_foreach(spans, k, e) {
                if ((uint64_t)json_integer_value(json_array_get(e, 0)) ==
                        v->start &&
                    (uint64_t)json_integer_value(json_array_get(e, 3)) == d) {
                    assert_int_equal(json_integer_value(json_array_get(e, 1)),
                                     v->end);
                    assert_int_equal(json_integer_value(json_array_get(e, 2)),
                                     v->region);
                    found = 1;
                }
            }
            assert_true(found);    /* every visit a column wide is sent */
        }
        /* every bin is a column with a narrow visit; none is repeated */
        {
            char *seen = calloc(px, 1);
            json_array_foreach(bins, k, e) {
                uint64_t c = (uint64_t)json_integer_value(json_array_get(e, 0));
                if ((unsigned)json_integer_value(json_array_get(e, 1)) != d)
                    continue;
                assert_true(c < px);
                /* a level's bucket (at most a column wide) gives the
                 * column it starts in: its visit may start in the next */
                assert_true(narrow[c] || (c + 1 < px && narrow[c + 1]));
                assert_false(seen[c]);
                seen[c] = 1;
            }
            free(seen);
        }
        free(narrow);
    }
    assert_int_equal(json_array_size(spans), want);
}

static void test_window_exact(void **state)
{
    weft__view v;
    uint64_t end;

    (void)state;
    make_view(&v, 2, 5);
    end = random_visits(&v, 0, 60000, 7);
    random_visits(&v, 1, 5000, 11);
    v.length = end;
    assert_int_equal(weft__view_levels(&v, 0), 0);
    assert_int_equal(weft__view_levels(&v, 1), 0);
    /* location 0's deepest depths have levels (15 000 visits at depth
     * 5; the windows over them are checked below), location 1 has too
     * few visits for any */
    assert_int_equal(v.locs[0].ndepth, 6);
    assert_true(v.locs[0].depth[5].nlv >= 2);
    for (unsigned d = 0; d < v.locs[1].ndepth; d++)
        assert_int_equal(v.locs[1].depth[d].nlv, 0);
    /* the whole trace, a middle window, a window a few ticks wide, one
     * pixel, and the most columns */
    const struct { uint64_t t0, t1; unsigned px; } w[] = {
        { 0, end, 1000 }, { 0, end, 97 }, { end / 7, end / 7 + end / 5, 333 },
        { end / 3, end / 3 + end / 50, 800 },
        { end / 2, end / 2 + 7, 1000 }, { 0, end, 1 },
        { 1, end, WEFT__VIEW_PX_MAX },
    };
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
        json_t *o = weft__view_window(&v, w[k].t0, w[k].t1, w[k].px, NULL, 0);
        json_t *rows = json_object_get(o, "rows");
        assert_int_equal(json_array_size(rows), 2);
        for (size_t i = 0; i < 2; i++)
            check_row(&v.locs[i], json_array_get(rows, i), w[k].t0, w[k].t1,
                      w[k].px);
        json_decref(o);
    }
    /* a window of one location: only its row */
    {
        size_t one = 1;
        json_t *o = weft__view_window(&v, 0, end, 100, &one, 1);
        json_t *rows = json_object_get(o, "rows");
        assert_int_equal(json_array_size(rows), 1);
        assert_int_equal(json_integer_value(json_object_get(
                             json_array_get(rows, 0), "loc")), 101);
        json_decref(o);
    }
    weft__view_free(&v);
}

/* The answer stays small however many visits the window holds. */
static void test_window_bounded(void **state)
{
    weft__view v;
    unsigned depth = 0;
    json_t *o, *row;

    (void)state;
    make_view(&v, 1, 2);
    assert_int_equal(weft__view_enter(&v, 0, 0, 0, &depth), 0);
    for (uint64_t t = 1; t < 2000001; t += 2) {
        assert_int_equal(weft__view_enter(&v, 0, 1, t, &depth), 0);
        assert_int_equal(weft__view_leave(&v, 0, t + 1, &depth), 0);
    }
    assert_int_equal(weft__view_leave(&v, 0, 2000001, &depth), 0);
    o = weft__view_window(&v, 0, 2000001, 500, NULL, 0);
    row = json_array_get(json_object_get(o, "rows"), 0);
    assert_int_equal(json_array_size(json_object_get(row, "spans")), 1);
    assert_int_equal(json_array_size(json_object_get(row, "bins")), 500);
    json_decref(o);
    /* zoomed in to 10 ticks: 5 visits, each exact */
    o = weft__view_window(&v, 1001, 1011, 1000, NULL, 0);
    row = json_array_get(json_object_get(o, "rows"), 0);
    assert_int_equal(json_array_size(json_object_get(row, "spans")), 1 + 5);
    assert_int_equal(json_array_size(json_object_get(row, "bins")), 0);
    json_decref(o);
    weft__view_free(&v);
}

static void test_span_details(void **state)
{
    weft__view v;
    unsigned depth = 0;
    json_t *o, *path;
    int missing;

    (void)state;
    make_view(&v, 1, 3);
    /* r0 [10, 100) holds r1 [20, 50) (which holds r2 [30, 35)) and
     * r2 [60, 70) */
    weft__view_enter(&v, 0, 0, 10, &depth);
    weft__view_enter(&v, 0, 1, 20, &depth);
    weft__view_enter(&v, 0, 2, 30, &depth);
    weft__view_leave(&v, 0, 35, &depth);
    weft__view_leave(&v, 0, 50, &depth);
    weft__view_enter(&v, 0, 2, 60, &depth);
    weft__view_leave(&v, 0, 70, &depth);
    weft__view_leave(&v, 0, 100, &depth);

    o = weft__view_span(&v, 0, 0, 15, &missing);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "duration")), 90);
    assert_int_equal(json_integer_value(json_object_get(o, "exclusive")),
                     90 - 30 - 10);
    json_decref(o);

    o = weft__view_span(&v, 0, 2, 32, &missing);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "name")), "r2");
    assert_int_equal(json_integer_value(json_object_get(o, "exclusive")), 5);
    path = json_object_get(o, "path");
    assert_int_equal(json_array_size(path), 3);
    assert_string_equal(json_string_value(json_array_get(path, 0)), "r0");
    assert_string_equal(json_string_value(json_array_get(path, 1)), "r1");
    assert_string_equal(json_string_value(json_array_get(path, 2)), "r2");
    json_decref(o);

    /* the second r2 is r0's child: path r0, r2 */
    o = weft__view_span(&v, 0, 1, 65, &missing);
    assert_non_null(o);
    path = json_object_get(o, "path");
    assert_int_equal(json_array_size(path), 2);
    assert_string_equal(json_string_value(json_array_get(path, 1)), "r2");
    json_decref(o);

    /* nothing at depth 1 between the two, nothing at depth 5, nothing
     * after the end */
    assert_null(weft__view_span(&v, 0, 1, 55, &missing));
    assert_true(missing);
    assert_null(weft__view_span(&v, 0, 5, 32, &missing));
    assert_true(missing);
    assert_null(weft__view_span(&v, 0, 0, 100, &missing));
    assert_true(missing);
    weft__view_free(&v);
}

static void test_bad_nesting(void **state)
{
    weft__view v;
    unsigned depth = 0;

    (void)state;
    make_view(&v, 1, 1);
    /* a Leave with nothing open is counted, not kept */
    assert_int_equal(weft__view_leave(&v, 0, 5, &depth), 0);
    assert_int_equal(v.unmatched, 1);
    /* deeper than kept: counted, and the Leaves still pair */
    for (unsigned k = 0; k < WEFT__VIEW_DEPTH_MAX + 3; k++)
        assert_int_equal(weft__view_enter(&v, 0, 0, 10 + k, &depth), 0);
    assert_int_equal(v.too_deep, 3);
    assert_int_equal(v.locs[0].ndepth, WEFT__VIEW_DEPTH_MAX);
    for (unsigned k = 0; k < WEFT__VIEW_DEPTH_MAX + 3; k++)
        assert_int_equal(weft__view_leave(&v, 0, 1000 - k, &depth), 0);
    assert_int_equal(depth, 0);
    assert_int_equal(v.locs[0].depth[0].v[0].end, 1000 - WEFT__VIEW_DEPTH_MAX - 2);
    assert_int_equal(v.locs[0].depth[WEFT__VIEW_DEPTH_MAX - 1].v[0].end, 1000 - 3);
    /* a Leave earlier than its Enter (a clock gone back) ends it there */
    assert_int_equal(weft__view_enter(&v, 0, 0, 2000, &depth), 0);
    assert_int_equal(weft__view_leave(&v, 0, 1990, &depth), 0);
    assert_int_equal(v.locs[0].depth[0].v[1].end, 2000);
    weft__view_free(&v);
}

/* Messages: the n-th send of a channel with its n-th receive, whatever
 * the order the locations were read in; ends without a partner counted;
 * a window sends those in flight during it at its locations. */
static void test_messages(void **state)
{
    weft__view v;
    weft__xchan_key a = { .kind = WEFT__XCHAN_MESSAGE, .comm = 0, .from = 0,
                          .to = 1, .tag = 7 };
    weft__xchan_key b = a;
    json_t *o, *msgs, *m;
    size_t only2 = 2;

    (void)state;
    b.tag = 8;
    make_view(&v, 3, 1);
    /* location 1 (the receiver of both channels) read first */
    assert_int_equal(weft__view_msg_end(&v, &a, 1, 1, 150, 64), 0);
    assert_int_equal(weft__view_msg_end(&v, &b, 1, 1, 160, 8), 0);
    assert_int_equal(weft__view_msg_end(&v, &a, 1, 1, 350, 64), 0);
    /* then location 0, the sender: a twice, b twice (one never received) */
    assert_int_equal(weft__view_msg_end(&v, &a, 0, 0, 100, 64), 0);
    assert_int_equal(weft__view_msg_end(&v, &b, 0, 0, 120, 8), 0);
    assert_int_equal(weft__view_msg_end(&v, &a, 0, 0, 300, 32), 0);
    assert_int_equal(weft__view_msg_end(&v, &b, 0, 0, 500, 8), 0);
    assert_int_equal(weft__view_match(&v), 0);
    assert_int_equal(v.nmsgs, 3);
    assert_int_equal(v.unmatched_msgs, 1);
    /* by send time: a 100->150, b 120->160, a 300->350 */
    assert_int_equal(v.msgs[0].send_t, 100);
    assert_int_equal(v.msgs[0].recv_t, 150);
    assert_int_equal(v.msgs[1].tag, 8);
    assert_int_equal(v.msgs[1].recv_t, 160);
    assert_int_equal(v.msgs[2].send_t, 300);
    assert_int_equal(v.msgs[2].recv_t, 350);
    assert_int_equal(v.msgs[2].bytes, 32);
    assert_int_equal(v.msgs[2].send_loc, 0);
    assert_int_equal(v.msgs[2].recv_loc, 1);

    /* [140, 310): the first two in flight, the third sent in it */
    o = weft__view_window(&v, 140, 310, 100, NULL, 0);
    msgs = json_object_get(o, "messages");
    assert_int_equal(json_array_size(msgs), 3);
    m = json_array_get(msgs, 2);
    assert_int_equal(json_integer_value(json_array_get(m, 0)), 100);
    assert_int_equal(json_integer_value(json_array_get(m, 1)), 300);
    assert_int_equal(json_integer_value(json_array_get(m, 2)), 101);
    assert_int_equal(json_integer_value(json_array_get(m, 3)), 350);
    assert_int_equal(json_integer_value(json_array_get(m, 4)), 7);
    assert_int_equal(json_integer_value(json_array_get(m, 5)), 32);
    json_decref(o);
    /* [170, 290): nothing in flight; [0, 100): nothing sent yet */
    o = weft__view_window(&v, 170, 290, 100, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(o, "messages")), 0);
    json_decref(o);
    o = weft__view_window(&v, 0, 100, 100, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(o, "messages")), 0);
    json_decref(o);
    /* location 2 alone has none */
    o = weft__view_window(&v, 0, 1000, 100, &only2, 1);
    assert_int_equal(json_array_size(json_object_get(o, "messages")), 0);
    json_decref(o);
    weft__view_free(&v);
}

/* More messages than an answer holds: the earliest, and how many more. */
static void test_messages_capped(void **state)
{
    weft__view v;
    weft__xchan_key a = { .kind = WEFT__XCHAN_MESSAGE, .to = 1 };
    json_t *o;

    (void)state;
    make_view(&v, 2, 1);
    for (uint64_t k = 0; k < WEFT__VIEW_MSG_MAX + 5; k++) {
        assert_int_equal(weft__view_msg_end(&v, &a, 0, 0, 10 * k, 1), 0);
        assert_int_equal(weft__view_msg_end(&v, &a, 1, 1, 10 * k + 5, 1), 0);
    }
    assert_int_equal(weft__view_match(&v), 0);
    o = weft__view_window(&v, 0, UINT32_MAX, 100, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(o, "messages")),
                     WEFT__VIEW_MSG_MAX);
    assert_int_equal(json_integer_value(json_object_get(o, "messages_more")),
                     5);
    json_decref(o);
    weft__view_free(&v);
}

/* The index file: written location by location, mapped back, the same
 * answers; one made from another archive, another version or cut short
 * is not used. */
static void test_file(void **state)
{
    char dir[] = "/tmp/test_view_index.XXXXXX", path[64], other[64];
    weft__view v, w;
    weft__vfile f;
    weft__xchan_key k = { .kind = WEFT__XCHAN_MESSAGE, .to = 1 };
    struct stat anchor, moved;
    json_t *before, *after;
    uint64_t end;
    FILE *fp;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.idx", dir);
    snprintf(other, sizeof other, "%s/anchor", dir);
    fp = fopen(other, "w");
    assert_non_null(fp);
    fputs("anchor", fp);
    fclose(fp);
    assert_int_equal(stat(other, &anchor), 0);

    make_view(&v, 3, 5);
    end = random_visits(&v, 0, 60000, 3);
    random_visits(&v, 2, 1000, 5);    /* location 1 has no visits */
    v.length = end;
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(weft__view_levels(&v, i), 0);
    assert_true(v.locs[0].depth[5].nlv >= 2);
    weft__view_msg_end(&v, &k, 0, 0, 10, 4);
    weft__view_msg_end(&v, &k, 1, 1, 20, 4);
    assert_int_equal(weft__view_match(&v), 0);
    /* from the visits, and (40 columns) from the levels */
    before = json_pack("[oo]", weft__view_window(&v, 0, end, 700, NULL, 0),
                       weft__view_window(&v, 0, end, 40, NULL, 0));

    assert_int_equal(weft__vfile_begin(&f, path), 0);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(weft__vfile_location(&f, &v, i), 0);
    assert_int_equal(weft__vfile_end(&f, &v, &anchor), 0);
    weft__vfile_free(&f);

    make_view(&w, 3, 5);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 1);
    assert_int_equal(w.length, end);
    assert_int_equal(w.visits, v.visits);
    assert_int_equal(w.nmsgs, 1);
    after = json_pack("[oo]", weft__view_window(&w, 0, end, 700, NULL, 0),
                      weft__view_window(&w, 0, end, 40, NULL, 0));
    assert_true(json_equal(before, after));
    json_decref(after);
    weft__view_free(&w);

    /* another archive (its anchor changed since): not used */
    make_view(&w, 3, 5);
    moved = anchor;
    moved.st_size++;
    assert_int_equal(weft__vfile_map(&w, path, &moved), 0);
    /* another number of locations: not used */
    weft__view_free(&w);
    make_view(&w, 2, 5);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 0);
    weft__view_free(&w);
    /* cut short: not used, nothing mapped */
    assert_int_equal(truncate(path, 100), 0);
    make_view(&w, 3, 5);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 0);
    assert_null(w.map);
    weft__view_free(&w);
    /* missing */
    unlink(path);
    make_view(&w, 3, 5);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 0);
    weft__view_free(&w);

    json_decref(before);
    weft__view_free(&v);
    unlink(other);
    rmdir(dir);
}

static void test_describe(void **state)
{
    weft__view v;
    json_t *o;

    (void)state;
    make_view(&v, 2, 2);
    strcpy(v.regions[1].paradigm, "mpi");
    v.name = strdup("run");
    v.key = strdup("run-key");
    v.length = 1234;
    o = weft__view_describe(&v, 3);
    assert_int_equal(json_integer_value(json_object_get(o, "index")), 3);
    assert_int_equal(json_integer_value(json_object_get(o, "t1")), 1234);
    assert_int_equal(json_array_size(json_object_get(o, "locations")), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(o, "regions"), 1),
                            "paradigm")), "mpi");
    json_decref(o);
    weft__view_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_exact),
        cmocka_unit_test(test_window_bounded),
        cmocka_unit_test(test_span_details),
        cmocka_unit_test(test_bad_nesting),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_messages_capped),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
