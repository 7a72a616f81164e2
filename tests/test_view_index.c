/* test_view_index.c - weft view's index (cli/view_index.c): visits built
 * by hand, windows checked against every visit there (exact when a
 * column wide, binned when narrower, none missed), a visit's details
 * (exclusive time, call path), what the building does with nesting
 * gone wrong (too deep, a Leave too many, visits never left), and MPI
 * messages matched send to receive and sent with the windows they
 * cross; marks (collectives, locks, I/O, thread arrows) paired, thinned
 * per column and found past a long one; the index file written and
 * mapped back, and not used when it is another archive's or cut
 * short.
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
#include <fcntl.h>
#include <sys/stat.h>

#include "profile.h"
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

/* Random properly nested visits on location i from t = 1 on, also
 * into weft profile's pl (when not NULL): returns the end. */
static uint64_t random_profiled(weft__view *v, size_t i, unsigned nvisits,
                                unsigned seed, const weft_profile *p,
                                weft_profile_loc *pl)
{
    unsigned depth = 0;
    uint64_t t = 1;

    srand(seed);
    for (unsigned k = 0; k < nvisits; k++) {
        if (depth < 6 && (depth == 0 || rand() % 3)) {
            uint32_t r = (uint32_t)(rand() % 5);
            assert_int_equal(weft__view_enter(v, i, r, t, &depth), 0);
            if (pl)
                assert_int_equal(weft_profile_enter(p, pl, r, t), 0);
        } else {
            assert_int_equal(weft__view_leave(v, i, t, &depth), 0);
            if (pl)
                weft_profile_leave(pl, t);
        }
        /* lengths from 1 tick to 100 000: some visits far narrower than
         * a column, some far wider */
        t += 1 + (uint64_t)(rand() % 4 == 0 ? rand() % 100000 : rand() % 10);
    }
    for (; depth > 0; t++) {
        assert_int_equal(weft__view_leave(v, i, t, &depth), 0);
        if (pl)
            weft_profile_leave(pl, t);
    }
    return t;
}

static uint64_t random_visits(weft__view *v, size_t i, unsigned nvisits,
                              unsigned seed)
{
    return random_profiled(v, i, nvisits, seed, NULL, NULL);
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
    /* r2 is defined in a source file (lines 7 to 9), the others not */
    v.regions[2].file = strdup("src/r2.c");
    v.regions[2].begin = 7;
    v.regions[2].end = 9;
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
    assert_true(json_is_null(json_object_get(o, "source")));
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
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(o, "source"), "file")),
                        "src/r2.c");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(o, "source"), "begin")),
                     7);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(o, "source"), "end")),
                     9);
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
    weft__xchan_key a = { .kind = WEFT__XCHAN_MESSAGE, .to = 1 },
                    b = { .kind = WEFT__XCHAN_MESSAGE, .to = 1, .tag = 9 };
    json_t *o;

    (void)state;
    make_view(&v, 2, 1);
    for (uint64_t k = 0; k < WEFT__VIEW_MSG_MAX + 5; k++) {
        assert_int_equal(weft__view_msg_end(&v, &a, 0, 0, 10 * k, 1), 0);
        assert_int_equal(weft__view_msg_end(&v, &a, 1, 1, 10 * k + 5, 1), 0);
    }
    /* one more, sent first and received last: in flight throughout */
    assert_int_equal(weft__view_msg_end(&v, &b, 0, 0, 1, 1), 0);
    assert_int_equal(weft__view_msg_end(&v, &b, 1, 1, 10 * WEFT__VIEW_MSG_MAX + 90, 1), 0);
    assert_int_equal(weft__view_match(&v), 0);
    o = weft__view_window(&v, 0, UINT32_MAX, 100, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(o, "messages")),
                     WEFT__VIEW_MSG_MAX);
    assert_int_equal(json_integer_value(json_object_get(o, "messages_more")),
                     6);
    json_decref(o);
    /* near the end, past thousands of messages (their blocks skipped):
     * the three in flight there (20000 .. 20002) and the long one */
    o = weft__view_window(&v, 10 * 20000, 10 * 20003, 100, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(o, "messages")), 4);
    assert_int_equal(json_integer_value(json_array_get(
                         json_array_get(json_object_get(o, "messages"), 0), 1)),
                     1);
    json_decref(o);
    weft__view_free(&v);
}

/* The index file: written location by location, mapped back, the same
 * answers; one made from another archive, another version or cut short
 * is not used. */
/* A temporary directory (dir, a mkdtemp template) with an index file's
 * name (path) and a file standing in for an archive's anchor (other,
 * holding text; its stat in *anchor). */
static void temp_anchor(char *dir, char *path, size_t pathlen, char *other,
                        size_t otherlen, const char *text,
                        struct stat *anchor)
{
    FILE *fp;

    assert_non_null(mkdtemp(dir));
    snprintf(path, pathlen, "%s/t.idx", dir);
    snprintf(other, otherlen, "%s/anchor", dir);
    fp = fopen(other, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(stat(other, anchor), 0);
}

static void test_file(void **state)
{
    char dir[] = "/tmp/test_view_index.XXXXXX", path[64], other[64];
    weft__view v, w;
    weft__vfile f;
    weft__xchan_key k = { .kind = WEFT__XCHAN_MESSAGE, .to = 1 };
    struct stat anchor, moved;
    json_t *before, *after;
    uint64_t end;

    (void)state;
    temp_anchor(dir, path, sizeof path, other, sizeof other, "anchor",
                &anchor);

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
    for (uint64_t t = 5; t < end; t += end / 700) {
        weft__vmark m = { .t = t, .end = t + 3, .loc = 2, .to = 2,
                          .kind = WEFT__VMARK_IO, .ref = 1, .bytes = t };
        assert_int_equal(weft__view_mark(&v, &m), 0);
    }
    assert_int_equal(weft__view_thread_end(&v, 0, 1, 0, 0, 7), 0);
    assert_int_equal(weft__view_thread_end(&v, 0, 1, 1, 2, 90), 0);
    assert_int_equal(weft__view_marks_done(&v), 0);
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
    assert_int_equal(w.nmarks, v.nmarks);
    assert_int_equal(w.mark_kinds[WEFT__VMARK_CREATE], 1);
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

/* The marks of a window: [kind, loc, t, end, to, op, ref, peer, bytes]
 * in `got`, how many of kind k at location id loc. */
static size_t count_marks(const json_t *w, unsigned kind, uint64_t loc)
{
    const json_t *m, *marks = json_object_get(w, "marks");
    size_t i, n = 0;

    json_array_foreach(marks, i, m)
        if (json_integer_value(json_array_get(m, 0)) == (json_int_t)kind &&
            json_integer_value(json_array_get(m, 1)) == (json_int_t)loc)
            n++;
    return n;
}

/* Marks built by hand: a thread's arrows paired (create with begin, end
 * with wait; one alone is unmatched), a lock held for the whole run
 * found by a window at its end past thousands of short marks (their
 * blocks skipped), narrow marks thinned to one per location, kind and
 * column, wide ones all sent, and a window at one location sends the
 * marks with an end there. */
static void test_marks(void **state)
{
    weft__view v;
    json_t *w, *m;
    size_t i, arrows = 0;

    (void)state;
    make_view(&v, 3, 1);
    /* thread 2 created by 0 at 10, begins at 12; ends at 900, joined
     * by 0 at 950; a ThreadCreate with no begin */
    assert_int_equal(weft__view_thread_end(&v, 4, 1, 1, 2, 12), 0);
    assert_int_equal(weft__view_thread_end(&v, 4, 1, 0, 0, 10), 0);
    assert_int_equal(weft__view_thread_end(&v, 4, 1, 3, 0, 950), 0);
    assert_int_equal(weft__view_thread_end(&v, 4, 1, 2, 2, 900), 0);
    assert_int_equal(weft__view_thread_end(&v, 4, 2, 0, 0, 20), 0);
    /* location 1 holds lock 9 from 0 to 1000; I/O every tick on 0 */
    weft__vmark lock = { .t = 0, .end = 1000, .loc = 1, .to = 1,
                         .kind = WEFT__VMARK_LOCK, .ref = 9, .op = 7 };
    assert_int_equal(weft__view_mark(&v, &lock), 0);
    for (uint64_t t = 1; t < 1000; t++) {
        weft__vmark io = { .t = t, .end = t, .loc = 0, .to = 0,
                           .kind = WEFT__VMARK_IO, .ref = 3, .bytes = 8 };
        assert_int_equal(weft__view_mark(&v, &io), 0);
    }
    assert_int_equal(weft__view_marks_done(&v), 0);
    assert_int_equal(v.unmatched_marks, 1);
    assert_int_equal(v.mark_kinds[WEFT__VMARK_CREATE], 1);
    assert_int_equal(v.mark_kinds[WEFT__VMARK_JOIN], 1);
    assert_true(v.nmark_blk >= 3);

    /* the whole run on 1000 columns: everything, one I/O per tick */
    w = weft__view_window(&v, 0, 1000, 1000, NULL, 0);
    assert_int_equal(count_marks(w, WEFT__VMARK_IO, 100), 999);
    assert_int_equal(count_marks(w, WEFT__VMARK_LOCK, 101), 1);
    json_array_foreach(json_object_get(w, "marks"), i, m) {
        int64_t kind = json_integer_value(json_array_get(m, 0));
        if (kind != WEFT__VMARK_CREATE && kind != WEFT__VMARK_JOIN)
            continue;
        arrows++;
        assert_int_equal(json_integer_value(json_array_get(m, 1)),
                         kind == WEFT__VMARK_CREATE ? 100 : 102);
        assert_int_equal(json_integer_value(json_array_get(m, 2)),
                         kind == WEFT__VMARK_CREATE ? 10 : 900);
        assert_int_equal(json_integer_value(json_array_get(m, 3)),
                         kind == WEFT__VMARK_CREATE ? 12 : 950);
        assert_int_equal(json_integer_value(json_array_get(m, 4)),
                         kind == WEFT__VMARK_CREATE ? 102 : 100);
    }
    assert_int_equal(arrows, 2);
    assert_int_equal(json_integer_value(json_object_get(w, "marks_more")), 0);
    json_decref(w);
    /* on 10 columns: the I/O thinned to one a column; the lock whole */
    w = weft__view_window(&v, 0, 1000, 10, NULL, 0);
    assert_int_equal(count_marks(w, WEFT__VMARK_IO, 100), 10);
    assert_int_equal(count_marks(w, WEFT__VMARK_LOCK, 101), 1);
    json_decref(w);
    /* at the end, past every short mark: the lock */
    w = weft__view_window(&v, 999, 1000, 10, NULL, 0);
    assert_int_equal(count_marks(w, WEFT__VMARK_LOCK, 101), 1);
    assert_int_equal(count_marks(w, WEFT__VMARK_IO, 100), 1);
    json_decref(w);
    /* location 2 only: its arrows, not the lock nor the I/O */
    {
        size_t loc2 = 2;
        w = weft__view_window(&v, 0, 1000, 1000, &loc2, 1);
        assert_int_equal(json_array_size(json_object_get(w, "marks")), 2);
        json_decref(w);
    }
    /* a window after every mark: none */
    w = weft__view_window(&v, 1001, 2000, 100, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(w, "marks")), 0);
    json_decref(w);
    weft__view_free(&v);
}

/* api/traces' object: the trace, its locations (the first and last
 * event's times of those that had any), regions and paradigms. */
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
    /* location 1 had events from 7 to 90, location 0 none */
    {
        unsigned depth = 0;
        weft__view_enter(&v, 1, 0, 7, &depth);
        weft__view_leave(&v, 1, 90, &depth);
    }
    o = weft__view_describe(&v, 3);
    assert_int_equal(json_integer_value(json_object_get(o, "index")), 3);
    assert_null(json_object_get(json_array_get(json_object_get(o, "locations"), 0),
                                "first"));
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(o, "locations"), 1), "first")),
                     7);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(o, "locations"), 1), "last")),
                     90);
    assert_int_equal(json_integer_value(json_object_get(o, "t1")), 1234);
    assert_int_equal(json_array_size(json_object_get(o, "locations")), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(o, "regions"), 1),
                            "paradigm")), "mpi");
    json_decref(o);
    weft__view_free(&v);
}

/* ---- summaries and find, against every visit ---------------------------- */

static uint64_t clip(const weft__vspan *s, uint64_t t0, uint64_t t1)
{
    uint64_t from = s->start > t0 ? s->start : t0;
    uint64_t to = s->end < t1 ? s->end : t1;

    return to > from ? to - from : 0;
}

static int overlaps(const weft__vspan *s, uint64_t t0, uint64_t t1)
{
    return s->end > t0 && s->start < t1;
}

/* Adds visits, incl, excl to the [visits, incl, excl] of key in o. */
static void add3(json_t *o, const char *key, uint64_t visits, uint64_t incl,
                 uint64_t excl)
{
    json_t *e = json_object_get(o, key);

    if (!e) {
        e = json_pack("[III]", (json_int_t)0, (json_int_t)0, (json_int_t)0);
        json_object_set_new(o, key, e);
    }
    for (size_t k = 0; k < 3; k++) {
        uint64_t add = k == 0 ? visits : k == 1 ? incl : excl;
        json_array_set_new(e, k, json_integer(json_integer_value(
                                     json_array_get(e, k)) + (json_int_t)add));
    }
}

/* A call path's key: its region ids, outermost first, '/' between. */
static void key_of_array(json_t *path, char *buf, size_t len)
{
    size_t k, at = 0;
    json_t *e;

    buf[0] = 0;
    json_array_foreach(path, k, e)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", k ? "/" : "",
                               (long long)json_integer_value(e));
}

static void key_of_visit(const weft__vloc *l, unsigned d, size_t k,
                         char *buf, size_t len)
{
    json_t *path = json_array();

    for (unsigned e = d + 1; e-- > 0;) {
        json_array_insert_new(path, 0, json_integer(l->depth[e].v[k].region));
        k = l->depth[e].v[k].parent;
    }
    key_of_array(path, buf, len);
    json_decref(path);
}

/* Is visit k at depth d inside a visit of its own region? */
static int nested(const weft__vloc *l, unsigned d, size_t k)
{
    uint32_t r = l->depth[d].v[k].region;

    while (d-- > 0) {
        k = l->depth[d + 1].v[k].parent;
        if (l->depth[d].v[k].region == r)
            return 1;
    }
    return 0;
}

static const char *paradigm_of(const weft__view *v, uint32_t r)
{
    return r < v->nregions && v->regions[r].paradigm[0]
               ? v->regions[r].paradigm : "unknown";
}

/* Checks weft__view_summary(v, t0, t1, locs, n) against every visit. */
static void check_summary(const weft__view *v, uint64_t t0, uint64_t t1,
                          const size_t *locs, size_t n)
{
    json_t *o = weft__view_summary(v, t0, t1, locs, n);
    json_t *paths = json_object(), *regions = json_object(), *e, *x;
    json_t *cps, *larr, *mx, *want_mx = json_object();
    uint64_t count = 0, bytes = 0, last_incl = UINT64_MAX, max_left = 0;
    size_t k, shown = 0;
    char key[512];

    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "t0")), t0);
    assert_int_equal(json_integer_value(json_object_get(o, "t1")), t1);
    larr = json_object_get(o, "locations");
    assert_int_equal(json_array_size(larr), locs ? n : v->nlocs);
    for (size_t r = 0; r < (locs ? n : v->nlocs); r++) {
        const weft__vloc *l = &v->locs[locs ? locs[r] : r];
        json_t *par = json_object(), *got;
        uint64_t top = 0, outside = 0;
        const char *pk;

        for (unsigned d = 0; d < l->ndepth; d++) {
            const weft__vdepth *dv = &l->depth[d];
            uint64_t *kids = calloc(dv->n + 1, sizeof *kids);
            if (d + 1 < l->ndepth)
                for (size_t c = 0; c < l->depth[d + 1].n; c++)
                    kids[l->depth[d + 1].v[c].parent] +=
                        clip(&l->depth[d + 1].v[c], t0, t1);
            for (size_t i = 0; i < dv->n; i++) {
                const weft__vspan *s = &dv->v[i];
                uint64_t in = clip(s, t0, t1);
                char rk[16];
                if (!overlaps(s, t0, t1))
                    continue;
                key_of_visit(l, d, i, key, sizeof key);
                add3(paths, key, 1, in, in - kids[i]);
                snprintf(rk, sizeof rk, "%u", s->region);
                add3(regions, rk, 1, nested(l, d, i) ? 0 : in, in - kids[i]);
                add3(par, paradigm_of(v, s->region), 0, 0, in - kids[i]);
                top += d == 0 ? in : 0;
            }
            free(kids);
        }
        if (l->any) {
            uint64_t from = l->first > t0 ? l->first : t0;
            uint64_t to = l->last < t1 ? l->last : t1;
            if (to > from && to - from > top)
                outside = to - from - top;
        } else {
            outside = 0;
        }
        e = json_array_get(larr, r);
        assert_int_equal(json_integer_value(json_object_get(e, "loc")),
                         l->loc);
        got = json_object_get(e, "paradigms");
        assert_int_equal(json_integer_value(json_object_get(got, "outside")),
                         outside);
        json_object_foreach(par, pk, x)
            if (json_integer_value(json_array_get(x, 2)))
                assert_int_equal(json_integer_value(json_object_get(got, pk)),
                                 json_integer_value(json_array_get(x, 2)));
        json_object_foreach(got, pk, x)
            if (strcmp(pk, "outside"))
                assert_non_null(json_object_get(par, pk));
        json_decref(par);
    }
    /* call paths: the heaviest, by inclusive time */
    cps = json_object_get(o, "callpaths");
    json_array_foreach(cps, k, e) {
        json_t *w;
        uint64_t incl =
            (uint64_t)json_integer_value(json_object_get(e, "incl"));
        key_of_array(json_object_get(e, "path"), key, sizeof key);
        w = json_object_get(paths, key);
        assert_non_null(w);
        assert_int_equal(json_integer_value(json_object_get(e, "visits")),
                         json_integer_value(json_array_get(w, 0)));
        assert_int_equal(incl, json_integer_value(json_array_get(w, 1)));
        assert_int_equal(json_integer_value(json_object_get(e, "excl")),
                         json_integer_value(json_array_get(w, 2)));
        assert_true(incl <= last_incl);
        last_incl = incl;
        json_object_del(paths, key);
        shown++;
    }
    assert_true(shown <= WEFT__VIEW_CALLPATHS_MAX);
    assert_int_equal(json_integer_value(json_object_get(o, "callpaths_more")),
                     json_object_size(paths));
    {
        const char *pk;
        json_object_foreach(paths, pk, x)
            if ((uint64_t)json_integer_value(json_array_get(x, 1)) > max_left)
                max_left = (uint64_t)json_integer_value(json_array_get(x, 1));
    }
    assert_true(json_object_size(paths) == 0 || max_left <= last_incl);
    /* regions */
    json_array_foreach(json_object_get(o, "regions"), k, e) {
        json_t *w;
        snprintf(key, sizeof key, "%lld",
                 (long long)json_integer_value(json_object_get(e, "region")));
        w = json_object_get(regions, key);
        assert_non_null(w);
        assert_int_equal(json_integer_value(json_object_get(e, "visits")),
                         json_integer_value(json_array_get(w, 0)));
        assert_int_equal(json_integer_value(json_object_get(e, "incl")),
                         json_integer_value(json_array_get(w, 1)));
        assert_int_equal(json_integer_value(json_object_get(e, "excl")),
                         json_integer_value(json_array_get(w, 2)));
        json_object_del(regions, key);
    }
    assert_int_equal(json_object_size(regions), 0);
    /* messages sent in the window from the locations */
    for (size_t m = 0; m < v->nmsgs; m++) {
        const weft__vmsg *g = &v->msgs[m];
        int in = !locs;
        for (size_t r = 0; r < n && locs; r++)
            in |= locs[r] == g->send_loc;
        if (!in || g->send_t < t0 || g->send_t >= t1)
            continue;
        count++;
        bytes += g->bytes;
        snprintf(key, sizeof key, "%llu/%llu",
                 (unsigned long long)v->locs[g->send_loc].loc,
                 (unsigned long long)v->locs[g->recv_loc].loc);
        add3(want_mx, key, 1, g->bytes, 0);
    }
    e = json_object_get(o, "messages");
    assert_int_equal(json_integer_value(json_object_get(e, "count")), count);
    assert_int_equal(json_integer_value(json_object_get(e, "bytes")), bytes);
    mx = json_object_get(e, "matrix");
    assert_int_equal(json_array_size(mx), json_object_size(want_mx));
    json_array_foreach(mx, k, e) {
        json_t *w;
        snprintf(key, sizeof key, "%lld/%lld",
                 (long long)json_integer_value(json_array_get(e, 0)),
                 (long long)json_integer_value(json_array_get(e, 1)));
        w = json_object_get(want_mx, key);
        assert_non_null(w);
        assert_int_equal(json_integer_value(json_array_get(e, 2)),
                         json_integer_value(json_array_get(w, 0)));
        assert_int_equal(json_integer_value(json_array_get(e, 3)),
                         json_integer_value(json_array_get(w, 1)));
    }
    json_decref(want_mx);
    json_decref(paths);
    json_decref(regions);
    json_decref(o);
}

/* Does region r's name hold q, case aside? */
static int name_holds(const weft__view *v, uint32_t r, const char *q)
{
    return r < v->nregions && strcasestr(v->regions[r].name, q);
}

/* (t, i, d) against (u, j, e) in the order of start, location index,
 * depth: -1, 0 or 1. */
static int cmp_place(uint64_t t, size_t i, unsigned d, uint64_t u, size_t j,
                     unsigned e)
{
    if (t != u)
        return t < u ? -1 : 1;
    if (i != j)
        return i < j ? -1 : 1;
    return d < e ? -1 : d > e;
}

/* Checks weft__view_find_next from the cursor (t, ci, cd) in direction
 * dir against every visit: the first after it (dir 1) or the last before
 * it (-1) in that order; ci SIZE_MAX: the first starting after t, the
 * last starting before it. Returns the hit's start (UINT64_MAX: none),
 * its place in *hi, *hd. */
static uint64_t check_next(const weft__view *v, const char *q, uint64_t t,
                           size_t ci, unsigned cd, int dir,
                           const size_t *locs, size_t n, size_t *hi,
                           unsigned *hd)
{
    const weft__vspan *best = NULL;
    size_t bi = 0, nl = locs ? n : v->nlocs;
    unsigned bd = 0;
    const char *bad = "x";
    json_t *o, *hit;
    uint64_t start = UINT64_MAX;

    for (size_t r = 0; r < nl; r++) {
        size_t i = locs ? locs[r] : r;
        const weft__vloc *l = &v->locs[i];
        for (unsigned d = 0; d < l->ndepth; d++)
            for (size_t j = 0; j < l->depth[d].n; j++) {
                const weft__vspan *s = &l->depth[d].v[j];
                int c = ci == SIZE_MAX
                            ? (s->start > t) - (s->start < t)
                            : cmp_place(s->start, i, d, t, ci, cd);
                if (!name_holds(v, s->region, q) || c != dir)
                    continue;
                if (!best ||
                    cmp_place(s->start, i, d, best->start, bi, bd) == -dir) {
                    best = s;
                    bi = i;
                    bd = d;
                }
            }
    }
    o = weft__view_find_next(v, q, t, ci, cd, dir, locs, n, &bad);
    assert_non_null(o);
    hit = json_object_get(o, "hit");
    if (!best) {
        assert_true(json_is_null(hit));
    } else {
        assert_int_equal(json_integer_value(json_object_get(hit, "loc")),
                         v->locs[bi].loc);
        assert_int_equal(json_integer_value(json_object_get(hit, "depth")), bd);
        assert_int_equal(json_integer_value(json_object_get(hit, "start")),
                         best->start);
        assert_int_equal(json_integer_value(json_object_get(hit, "end")),
                         best->end);
        assert_int_equal(json_integer_value(json_object_get(hit, "region")),
                         best->region);
        start = best->start;
        if (hi)
            *hi = bi, *hd = bd;
    }
    json_decref(o);
    return start;
}

/* Checks weft__view_find and weft__view_find_next against every visit. */
static void check_find(const weft__view *v, const char *q, uint64_t t0,
                       uint64_t t1, const size_t *locs, size_t n)
{
    const char *bad = "x";
    json_t *o = weft__view_find(v, q, t0, t1, locs, n, &bad);
    json_t *per, *e;
    uint64_t all = 0, t = t0 + (t1 - t0) / 3;
    size_t nl = locs ? n : v->nlocs, k;

    assert_non_null(o);
    assert_null(bad);
    assert_string_equal(json_string_value(json_object_get(o, "q")), q);
    json_array_foreach(json_object_get(o, "regions"), k, e)
        assert_true(name_holds(v, (uint32_t)json_integer_value(e), q));
    k = 0;
    for (uint32_t r = 0; r < v->nregions; r++)
        k += name_holds(v, r, q);
    assert_int_equal(json_array_size(json_object_get(o, "regions")), k);
    per = json_object_get(o, "per_loc");
    assert_int_equal(json_array_size(per), nl);
    for (size_t r = 0; r < nl; r++) {
        const weft__vloc *l = &v->locs[locs ? locs[r] : r];
        uint64_t c = 0;
        for (unsigned d = 0; d < l->ndepth; d++)
            for (size_t i = 0; i < l->depth[d].n; i++)
                c += overlaps(&l->depth[d].v[i], t0, t1) &&
                     name_holds(v, l->depth[d].v[i].region, q);
        assert_int_equal(json_integer_value(json_array_get(
                             json_array_get(per, r), 0)), l->loc);
        assert_int_equal(json_integer_value(json_array_get(
                             json_array_get(per, r), 1)), c);
        all += c;
    }
    assert_int_equal(json_integer_value(json_object_get(o, "count")), all);
    json_decref(o);

    /* the next after t and the previous before it */
    for (int dir = -1; dir <= 1; dir += 2)
        check_next(v, q, t, SIZE_MAX, 0, dir, locs, n, NULL, NULL);
}

/* A view of 3 locations (the middle one with few visits), regions of
 * several paradigms (and one without), summary blocks of `block`
 * visits, and messages between them. Returns the trace's end. */
static uint64_t summary_view(weft__view *v, unsigned block)
{
    weft__xchan_key k = { .kind = WEFT__XCHAN_MESSAGE, .to = 1 };
    uint64_t end;

    make_view(v, 3, 6);     /* region 5 is never entered */
    strcpy(v->regions[0].paradigm, "user");
    strcpy(v->regions[1].paradigm, "mpi");
    strcpy(v->regions[2].paradigm, "openmp");
    strcpy(v->regions[3].paradigm, "mpi");
    free(v->regions[3].name);
    v->regions[3].name = strdup("MPI_Recv");
    v->block = block;
    end = random_visits(v, 0, 3000, 11);
    for (size_t i = 1; i < 3; i++) {
        uint64_t e = random_visits(v, i, i == 1 ? 40 : 2000,
                                   12 + (unsigned)i);
        end = e > end ? e : end;
    }
    /* a visit of a region the archive does not define */
    {
        unsigned depth = 0;
        assert_int_equal(weft__view_enter(v, 1, 9, end, &depth), 0);
        assert_int_equal(weft__view_leave(v, 1, end + 5, &depth), 0);
        end += 6;
    }
    v->length = end;
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(weft__view_levels(v, i), 0);
    for (uint64_t m = 0; m < 50; m++) {
        k.tag = (uint32_t)(m % 3);
        weft__view_msg_end(v, &k, 0, m % 3, m * 97, m + 1);
        weft__view_msg_end(v, &k, 1, (m + 1) % 3, m * 97 + 40, m + 1);
    }
    assert_int_equal(weft__view_match(v), 0);
    return end;
}

/* Random windows, some cutting visits, some not; a few location sets. */
static void check_windows(const weft__view *v, uint64_t end, unsigned seed)
{
    static const size_t some[] = { 2, 0 }, one[] = { 1 };

    srand(seed);
    check_summary(v, 0, end + 1, NULL, 0);
    check_summary(v, 0, end + 1, some, 2);
    check_find(v, "r", 0, end + 1, NULL, 0);
    check_find(v, "mpi_", 0, end + 1, NULL, 0);
    for (unsigned w = 0; w < 40; w++) {
        uint64_t t0 = (uint64_t)rand() % end, t1;
        uint64_t len = w % 4 == 0 ? 1 + (uint64_t)rand() % 50
                                  : 1 + (uint64_t)rand() % (end / 2);
        t1 = t0 + len;
        check_summary(v, t0, t1, NULL, 0);
        check_summary(v, t0, t1, w % 2 ? some : one, w % 2 ? 2 : 1);
        check_find(v, w % 3 ? "R2" : "recv", t0, t1, w % 2 ? some : NULL,
                   w % 2 ? 2 : 0);
    }
}

static void test_summary_exact(void **state)
{
    weft__view v;
    uint64_t end;

    (void)state;
    /* blocks of 1, 7 and the default visits: the edges walked, the
     * whole blocks between added up, or no whole block at all */
    for (unsigned b = 0; b < 3; b++) {
        static const unsigned sizes[] = { 1, 7, 0 };
        end = summary_view(&v, sizes[b]);
        assert_int_equal(v.locs[0].depth[0].nblk,
                         (v.locs[0].depth[0].n + weft__view_block(&v) - 1) /
                             weft__view_block(&v));
        check_windows(&v, end, 5 + b);
        weft__view_free(&v);
    }
}

/* Recursion and windows cutting through it, by hand: r1 inside r1
 * inside r0, the inner r1 counted once in r1's inclusive time. */
static void test_summary_recursion(void **state)
{
    weft__view v;
    unsigned depth = 0;
    json_t *o, *r;

    (void)state;
    make_view(&v, 1, 2);
    v.block = 2;
    for (uint64_t k = 0; k < 5; k++) {
        uint64_t t = 1000 * k;
        weft__view_enter(&v, 0, 0, t + 10, &depth);      /* [10, 100) */
        weft__view_enter(&v, 0, 1, t + 20, &depth);      /* [20, 90) */
        weft__view_enter(&v, 0, 1, t + 30, &depth);      /* [30, 60) */
        weft__view_leave(&v, 0, t + 60, &depth);
        weft__view_leave(&v, 0, t + 90, &depth);
        weft__view_leave(&v, 0, t + 100, &depth);
    }
    v.length = 4100;
    assert_int_equal(weft__view_levels(&v, 0), 0);
    check_summary(&v, 0, 4101, NULL, 0);
    check_summary(&v, 25, 2055, NULL, 0);
    check_summary(&v, 40, 50, NULL, 0);
    o = weft__view_summary(&v, 40, 50, NULL, 0);
    /* inside the inner r1 only: r1 10 ticks inclusive (once), r0 none
     * exclusive */
    r = json_array_get(json_object_get(o, "regions"), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "region")), 1);
    assert_int_equal(json_integer_value(json_object_get(r, "visits")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "incl")), 10);
    assert_int_equal(json_integer_value(json_object_get(r, "excl")), 10);
    assert_int_equal(json_array_size(json_object_get(o, "callpaths")), 3);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(
                         json_array_get(json_object_get(o, "locations"), 0),
                         "paradigms"), "outside")), 0);
    json_decref(o);
    /* before the first event and after the last: no time outside */
    o = weft__view_summary(&v, 0, 10, NULL, 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(
                         json_array_get(json_object_get(o, "locations"), 0),
                         "paradigms"), "outside")), 0);
    json_decref(o);
    /* between two visits of r0: all outside */
    o = weft__view_summary(&v, 200, 900, NULL, 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(
                         json_array_get(json_object_get(o, "locations"), 0),
                         "paradigms"), "outside")), 700);
    json_decref(o);
    weft__view_free(&v);
}

static const char *no_name(const void *arg, uint32_t id)
{
    (void)arg, (void)id;
    return "";
}

/* The whole trace at every location gives weft profile's figures. */
static void test_summary_profile(void **state)
{
    weft__view v;
    weft_profile p;
    json_t *o, *e;
    uint64_t outside = 0;
    size_t k;

    (void)state;
    make_view(&v, 2, 5);
    v.block = 16;
    assert_int_equal(weft_profile_init(&p, no_name, NULL, NULL, 5, 0), 0);
    for (size_t i = 0; i < 2; i++) {
        weft_profile_loc pl = { 0 };
        uint64_t end = random_profiled(&v, i, 5000, 21 + (unsigned)i, &p,
                                       &pl);
        /* events before the first Enter and after the last Leave */
        v.locs[i].first = pl.start = 0;
        v.locs[i].last = end + 50;
        assert_int_equal(weft_profile_finish_loc(&p, &pl, (int64_t)i,
                                                 end + 50), 0);
        if (end + 50 > v.length)
            v.length = end + 50;
        assert_int_equal(weft__view_levels(&v, i), 0);
    }
    o = weft__view_summary(&v, 0, v.length + 1, NULL, 0);
    json_array_foreach(json_object_get(o, "regions"), k, e) {
        json_int_t r = json_integer_value(json_object_get(e, "region"));
        assert_true(r >= 0 && r < 5);
        assert_int_equal(json_integer_value(json_object_get(e, "visits")),
                         p.sum[r].visits);
        assert_int_equal(json_integer_value(json_object_get(e, "incl")),
                         p.sum[r].incl);
        assert_int_equal(json_integer_value(json_object_get(e, "excl")),
                         p.sum[r].excl);
    }
    assert_int_equal(json_array_size(json_object_get(o, "regions")), 5);
    json_array_foreach(json_object_get(o, "locations"), k, e)
        outside += (uint64_t)json_integer_value(json_object_get(
            json_object_get(e, "paradigms"), "outside"));
    assert_true(outside > 0);
    assert_int_equal(outside, p.outside);
    json_decref(o);
    weft_profile_free(&p);
    weft__view_free(&v);
}

/* The index file keeps the summaries: the same answers mapped, and
 * exact against the mapped visits. */
static void test_summary_file(void **state)
{
    char dir[] = "/tmp/test_view_index.XXXXXX", path[64], other[64];
    weft__view v, w;
    weft__vfile f;
    struct stat anchor;
    json_t *before, *after;
    uint64_t end, last0;
    const char *bad;

    (void)state;
    temp_anchor(dir, path, sizeof path, other, sizeof other, "",
                &anchor);

    end = summary_view(&v, 7);
    last0 = v.locs[0].last;
    before = json_pack("[oooo]", weft__view_summary(&v, 0, end + 1, NULL, 0),
                       weft__view_summary(&v, end / 3, end / 2, NULL, 0),
                       weft__view_find(&v, "r1", 0, end, NULL, 0, &bad),
                       weft__view_find_next(&v, "r", end / 2, SIZE_MAX, 0, -1, NULL, 0,
                                            &bad));
    assert_non_null(before);
    assert_int_equal(weft__vfile_begin(&f, path), 0);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(weft__vfile_location(&f, &v, i), 0);
    assert_int_equal(weft__vfile_end(&f, &v, &anchor), 0);
    weft__vfile_free(&f);

    make_view(&w, 3, 6);
    memcpy(w.regions[1].paradigm, v.regions[1].paradigm, 32);
    memcpy(w.regions[2].paradigm, v.regions[2].paradigm, 32);
    memcpy(w.regions[3].paradigm, v.regions[3].paradigm, 32);
    memcpy(w.regions[0].paradigm, v.regions[0].paradigm, 32);
    free(w.regions[3].name);
    w.regions[3].name = strdup(v.regions[3].name);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 1);
    assert_int_equal(w.block, 7);
    assert_int_equal(w.npaths, v.npaths);
    assert_true(w.locs[0].any && w.locs[0].last == last0);
    after = json_pack("[oooo]", weft__view_summary(&w, 0, end + 1, NULL, 0),
                      weft__view_summary(&w, end / 3, end / 2, NULL, 0),
                      weft__view_find(&w, "r1", 0, end, NULL, 0, &bad),
                      weft__view_find_next(&w, "r", end / 2, SIZE_MAX, 0, -1, NULL, 0,
                                           &bad));
    assert_true(json_equal(before, after));
    check_windows(&w, end, 9);
    json_decref(before);
    json_decref(after);
    weft__view_free(&w);
    weft__view_free(&v);

    /* a file whose summary tables do not fit is not used: the tail ends
     * with the paths' offset, their count and the block size */
    for (int c = 0; c < 3; c++) {
        static const uint64_t block[] = { 0, 3, 7 };
        uint64_t tail[3];
        int fd = open(path, O_RDWR);
        off_t at = lseek(fd, -(off_t)sizeof tail, SEEK_END);
        assert_int_equal(pread(fd, tail, sizeof tail, at), sizeof tail);
        tail[2] = block[c];
        if (c == 2)
            tail[1] += 1000;       /* more paths than the file holds */
        assert_int_equal(pwrite(fd, tail, sizeof tail, at), sizeof tail);
        close(fd);
        make_view(&w, 3, 6);
        assert_int_equal(weft__vfile_map(&w, path, &anchor), 0);
        assert_null(w.map);
        weft__view_free(&w);
        fd = open(path, O_RDWR);
        tail[2] = 7;
        tail[1] -= c == 2 ? 1000 : 0;
        assert_int_equal(pwrite(fd, tail, sizeof tail, at), sizeof tail);
        close(fd);
    }
    make_view(&w, 3, 6);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 1);
    weft__view_free(&w);
    unlink(path);
    unlink(other);
    rmdir(dir);
}

/* More call paths than an answer lists: the heaviest, and how many
 * more. */
static void test_summary_capped(void **state)
{
    enum { N = WEFT__VIEW_CALLPATHS_MAX + 50 };
    weft__view v;
    unsigned depth = 0;
    json_t *o;

    (void)state;
    make_view(&v, 1, N);
    v.block = 64;
    for (uint32_t r = 0; r < N; r++) {
        /* region r: (r % 7) + 1 ticks, visited at depth 0 */
        assert_int_equal(weft__view_enter(&v, 0, r, 10 * r, &depth), 0);
        assert_int_equal(weft__view_leave(&v, 0, 10 * r + r % 7 + 1, &depth),
                         0);
    }
    v.length = 10 * N;
    assert_int_equal(weft__view_levels(&v, 0), 0);
    check_summary(&v, 0, v.length + 1, NULL, 0);
    check_summary(&v, 105, 10 * N - 33, NULL, 0);
    o = weft__view_summary(&v, 0, v.length + 1, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(o, "callpaths")),
                     WEFT__VIEW_CALLPATHS_MAX);
    assert_int_equal(json_integer_value(json_object_get(o, "callpaths_more")),
                     50);
    assert_int_equal(json_array_size(json_object_get(o, "regions")), N);
    json_decref(o);
    weft__view_free(&v);
}

/* What find takes: a text of 1 to WEFT__VIEW_FIND_MAX bytes. */
static void test_find_limits(void **state)
{
    weft__view v;
    char q[WEFT__VIEW_FIND_MAX + 2];
    const char *bad;
    json_t *o;

    (void)state;
    summary_view(&v, 0);
    memset(q, 'r', sizeof q - 1);
    q[sizeof q - 1] = 0;         /* one byte too long */
    assert_null(weft__view_find(&v, q, 0, 10, NULL, 0, &bad));
    assert_non_null(bad);
    assert_null(weft__view_find_next(&v, q, 0, SIZE_MAX, 0, 1, NULL, 0, &bad));
    assert_non_null(bad);
    assert_null(weft__view_find(&v, "", 0, 10, NULL, 0, &bad));
    assert_non_null(bad);
    assert_null(weft__view_find_next(&v, NULL, 0, SIZE_MAX, 0, -1, NULL, 0, &bad));
    assert_non_null(bad);
    assert_null(weft__view_find(&v, "r\xff", 0, 10, NULL, 0, &bad));
    assert_string_equal(bad, "q: not UTF-8");
    q[WEFT__VIEW_FIND_MAX] = 0;  /* the longest: found nowhere */
    o = weft__view_find(&v, q, 0, 10, NULL, 0, &bad);
    assert_non_null(o);
    assert_null(bad);
    assert_int_equal(json_integer_value(json_object_get(o, "count")), 0);
    json_decref(o);
    /* nothing before the first visit, nothing after the last */
    o = weft__view_find_next(&v, "r", 0, SIZE_MAX, 0, -1, NULL, 0, &bad);
    assert_true(json_is_null(json_object_get(o, "hit")));
    json_decref(o);
    o = weft__view_find_next(&v, "r", UINT64_MAX, SIZE_MAX, 0, 1, NULL, 0, &bad);
    assert_true(json_is_null(json_object_get(o, "hit")));
    json_decref(o);
    weft__view_free(&v);
}

/* Stepping through a search's visits with next and previous from the
 * visit found: visits starting at the same tick (at several locations,
 * and nested at one) are each met once, in the order of location and
 * depth, forward and back. */
static void test_find_same_tick(void **state)
{
    static const uint64_t want[][3] = {   /* start, location, depth */
        { 10, 0, 0 }, { 10, 0, 1 }, { 10, 1, 0 }, { 10, 1, 1 },
        { 10, 2, 0 }, { 10, 2, 1 }, { 50, 0, 0 }, { 50, 2, 0 },
    };
    const size_t nwant = sizeof want / sizeof *want;
    weft__view v;
    unsigned depth = 0;
    uint64_t t = 0;
    size_t ci = SIZE_MAX, k;
    unsigned cd = 0;

    (void)state;
    make_view(&v, 3, 2);
    for (size_t i = 0; i < 3; i++) {
        weft__view_enter(&v, i, 0, 10, &depth);
        weft__view_enter(&v, i, 1, 10, &depth);
        weft__view_leave(&v, i, 20, &depth);
        weft__view_leave(&v, i, 30, &depth);
        if (i != 1) {
            weft__view_enter(&v, i, 0, 50, &depth);
            weft__view_leave(&v, i, 60, &depth);
        }
        assert_int_equal(weft__view_levels(&v, i), 0);
    }
    for (k = 0; (t = check_next(&v, "r", t, ci, cd, 1, NULL, 0, &ci, &cd)) !=
                UINT64_MAX; k++) {
        assert_true(k < nwant);
        assert_int_equal(t, want[k][0]);
        assert_int_equal(ci, want[k][1]);
        assert_int_equal(cd, want[k][2]);
    }
    assert_int_equal(k, nwant);
    /* and back from the last */
    t = want[nwant - 1][0], ci = want[nwant - 1][1], cd = (unsigned)want[nwant - 1][2];
    for (k = nwant - 1; (t = check_next(&v, "r", t, ci, cd, -1, NULL, 0, &ci,
                                         &cd)) != UINT64_MAX;) {
        assert_true(k > 0);
        k--;
        assert_int_equal(t, want[k][0]);
        assert_int_equal(ci, want[k][1]);
        assert_int_equal(cd, want[k][2]);
    }
    assert_int_equal(k, 0);
    weft__view_free(&v);
}

/* Region r's row of a summary's "regions" (NULL: none). */
static json_t *region_row(json_t *o, int64_t r)
{
    json_t *e;
    size_t k;

    json_array_foreach(json_object_get(o, "regions"), k, e)
        if (json_integer_value(json_object_get(e, "region")) == r)
            return e;
    return NULL;
}

static void check_region(json_t *o, int64_t r, int64_t visits, int64_t incl,
                         int64_t excl)
{
    json_t *e = region_row(o, r);

    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "visits")), visits);
    assert_int_equal(json_integer_value(json_object_get(e, "incl")), incl);
    assert_int_equal(json_integer_value(json_object_get(e, "excl")), excl);
}

/* Calls counted instead of recorded: a summary adds them as visits of
 * their path at the time they were counted, their time taken from the
 * visit open then (r2's 5 calls, 20 ticks inside r0) or from the time
 * outside traced regions (r1's 3 calls, 30 ticks between r0's visits);
 * a window without them has none; the index file keeps them. And an
 * Enter's attributes (the second r0's): in its visit's details, from the
 * file too; the first r0 has none. */
static void test_counts(void **state)
{
    char dir[] = "/tmp/test_view_index.XXXXXX", path[64], other[64];
    weft__view v, w;
    weft__vfile f;
    struct stat anchor;
    unsigned depth = 0;
    json_t *o, *o2, *loc;

    (void)state;
    make_view(&v, 1, 3);
    weft__view_enter(&v, 0, 0, 10, &depth);
    assert_int_equal(weft__view_count(&v, 0, 50, weft__view_path(
                         &v, v.locs[0].depth[0].path[0], 2), 5, 20), 0);
    weft__view_leave(&v, 0, 100, &depth);
    assert_int_equal(weft__view_count(&v, 0, 120, weft__view_path(
                         &v, WEFT__VIEW_NONE, 1), 3, 30), 0);
    assert_int_equal(weft__view_attrs(&v, 0, 150, 0, "[[\"a\",\"UINT8\",7]]"),
                     0);
    weft__view_enter(&v, 0, 0, 150, &depth);
    weft__view_leave(&v, 0, 200, &depth);
    assert_int_equal(weft__view_levels(&v, 0), 0);
    assert_int_equal(v.counted, 8);
    {
        int missing;
        json_t *sp = weft__view_span(&v, 0, 0, 160, &missing);
        assert_int_equal(json_integer_value(json_array_get(json_array_get(
                             json_object_get(sp, "attributes"), 0), 2)),
                         7);
        json_decref(sp);
        sp = weft__view_span(&v, 0, 0, 20, &missing);
        assert_null(json_object_get(sp, "attributes"));
        json_decref(sp);
    }

    o = weft__view_summary(&v, 0, 201, NULL, 0);
    assert_non_null(o);
    check_region(o, 0, 2, 140, 120);
    check_region(o, 2, 5, 20, 20);
    check_region(o, 1, 3, 30, 30);
    loc = json_object_get(json_array_get(json_object_get(o, "locations"), 0),
                          "paradigms");
    /* [10, 200]: 190 ticks, 140 in r0, 30 counted outside it */
    assert_int_equal(json_integer_value(json_object_get(loc, "outside")), 20);
    json_decref(o);
    o = weft__view_summary(&v, 0, 40, NULL, 0);
    assert_null(region_row(o, 2));
    assert_null(region_row(o, 1));
    check_region(o, 0, 1, 30, 30);
    json_decref(o);

    temp_anchor(dir, path, sizeof path, other, sizeof other, "",
                &anchor);
    o = weft__view_summary(&v, 0, 201, NULL, 0);
    assert_int_equal(weft__view_match(&v), 0);
    assert_int_equal(weft__view_marks_done(&v), 0);
    assert_int_equal(weft__vfile_begin(&f, path), 0);
    assert_int_equal(weft__vfile_location(&f, &v, 0), 0);
    assert_int_equal(weft__vfile_end(&f, &v, &anchor), 0);
    weft__vfile_free(&f);
    make_view(&w, 1, 3);
    assert_int_equal(weft__vfile_map(&w, path, &anchor), 1);
    assert_int_equal(w.counted, 8);
    {
        json_t *at = weft__view_attrs_of(&w, 0, 0, 150);
        assert_non_null(at);
        assert_string_equal(json_string_value(json_array_get(
                                json_array_get(at, 0), 0)), "a");
        json_decref(at);
        assert_null(weft__view_attrs_of(&w, 0, 1, 150));
        assert_null(weft__view_attrs_of(&w, 0, 0, 10));
    }
    o2 = weft__view_summary(&w, 0, 201, NULL, 0);
    assert_true(json_equal(o, o2));
    json_decref(o);
    json_decref(o2);
    weft__view_free(&w);
    weft__view_free(&v);
    unlink(path);
    unlink(other);
    rmdir(dir);
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
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_summary_exact),
        cmocka_unit_test(test_summary_recursion),
        cmocka_unit_test(test_summary_profile),
        cmocka_unit_test(test_summary_file),
        cmocka_unit_test(test_summary_capped),
        cmocka_unit_test(test_find_limits),
        cmocka_unit_test(test_find_same_tick),
        cmocka_unit_test(test_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
