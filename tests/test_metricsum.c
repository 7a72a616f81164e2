/* test_metricsum.c - metric values over time (summary/metricsum.c): the
 * first bin starts at the first value, a bin keeps its minimum, maximum
 * and last value, bins without a value stay empty (NaN), values beyond
 * the last bin merge the bins in pairs and double the width (never
 * more than WEFT_METRICSUM_BINS), a location keeps the points of its
 * first WEFT_METRICSUM_PER_LOC members and counts the others, and a
 * Metric event of a class or an instance gives each member its value
 * as the member's type says. The report's series of a trace are the
 * first ones in location order, each told how many there were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metricsum.h"
#include "testutil.h"
#include "unify.h"
#include "weft_errors.h"

static void test_bins(void **state)
{
    weft_metricloc l = { 0 };
    weft_metric_series *s;

    (void)state;
    assert_int_equal(weft_metricsum_add(&l, 4, 1000, 5.0, 10), 0);
    assert_int_equal(weft_metricsum_add(&l, 4, 1003, 2.0, 10), 0);
    assert_int_equal(weft_metricsum_add(&l, 4, 1009, 3.0, 10), 0);
    assert_int_equal(weft_metricsum_add(&l, 4, 1030, 7.0, 10), 0);
    assert_int_equal(l.n, 1);
    s = &l.s[0];
    assert_int_equal(s->member, 4);
    assert_int_equal(s->first, 1000);
    assert_int_equal(s->width, 10);
    assert_int_equal(s->n, 4);
    assert_true(s->bins[0].min == 2.0 && s->bins[0].max == 5.0 &&
                s->bins[0].last == 3.0);
    assert_true(isnan(s->bins[1].min) && isnan(s->bins[2].min));
    assert_true(s->bins[3].last == 7.0);
    /* far ahead: merged until it fits */
    assert_int_equal(weft_metricsum_add(&l, 4, 1000 + 10 * 1000, -1.0, 10),
                     0);
    assert_int_equal(s->width, 40);
    assert_int_equal(s->n, 251);
    assert_true(s->bins[0].min == 2.0 && s->bins[0].max == 7.0 &&
                s->bins[0].last == 7.0);
    assert_true(isnan(s->bins[1].min));
    assert_true(s->bins[250].last == -1.0);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(weft_metricsum_add(&l, 4, 20000 + (uint64_t)i * 7,
                                            i, 10), 0);
    assert_true(s->n <= WEFT_METRICSUM_BINS);
    assert_true(s->bins[s->n - 1].last == 99999.0);
    assert_true((uint64_t)s->n * s->width >= 20000 + 99999 * 7 - 1000);
    /* NaN is no value */
    assert_int_equal(weft_metricsum_add(&l, 5, 1, NAN, 10), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.s[1].n, 0);
    weft_metricloc_free(&l);
}

static void test_per_location_cap(void **state)
{
    weft_metricloc l = { 0 };

    (void)state;
    for (uint32_t m = 0; m < WEFT_METRICSUM_PER_LOC + 3; m++)
        for (int rep = 0; rep < 2; rep++)
            assert_int_equal(weft_metricsum_add(&l, m, 10 + (uint64_t)rep,
                                                m, 1), 0);
    assert_int_equal(l.n, WEFT_METRICSUM_PER_LOC);
    assert_int_equal(l.nothers, 3);
    assert_int_equal(l.others[0], WEFT_METRICSUM_PER_LOC);
    weft_metricloc_free(&l);
}

static void def(weft_unifier *u, weft_record r)
{
    char err[256];

    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err), 0);
}

static void test_event(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_defview defs = weft_unify_view(u);
    weft_metricmap m;
    weft_metricloc l = { 0 };
    OTF2_MetricMemberRef mm[3] = { 0, 1, 2 };
    OTF2_Type types[3] = { OTF2_TYPE_INT64, OTF2_TYPE_UINT64,
                           OTF2_TYPE_DOUBLE };
    OTF2_MetricValue v[3];
    weft_record inst, ev;

    (void)state;
    assert_non_null(u);
    def(u, str(0, "a"));
    def(u, str(1, "b"));
    def(u, str(2, "c"));
    def(u, metric_member(0, 0));
    def(u, metric_member(1, 1));
    def(u, metric_member(2, 2));
    def(u, metric_class(0, 3, mm));
    memset(&inst, 0, sizeof inst);
    inst.type = WEFT_REC_MetricInstance;
    inst.u.MetricInstance.self = 1;
    inst.u.MetricInstance.metricClass = 0;
    inst.u.MetricInstance.recorder = 0;
    inst.u.MetricInstance.metricScope = OTF2_SCOPE_LOCATION;
    inst.u.MetricInstance.scope = 0;
    def(u, inst);
    assert_int_equal(weft_metricmap_build(&m, &defs), 0);
    assert_int_equal(m.n, 2);
    assert_ptr_equal(m.cls[0], m.cls[1]);
    v[0].signed_int = -3;
    v[1].unsigned_int = 1ull << 40;
    v[2].floating_point = 0.5;
    ev = metric_event(100, 1, 3, types, v);
    assert_int_equal(weft_metricsum_event(&l, &m, &ev, 1), 0);
    assert_int_equal(l.n, 3);
    assert_true(l.s[0].bins[0].last == -3.0);
    assert_true(l.s[1].bins[0].last == (double)(1ull << 40));
    assert_true(l.s[2].bins[0].last == 0.5);
    ev = metric_event(100, 7, 3, types, v);  /* not defined: ignored */
    assert_int_equal(weft_metricsum_event(&l, &m, &ev, 1), 0);
    assert_int_equal(l.n, 3);
    weft_metricloc_free(&l);
    weft_metricmap_free(&m);
    weft_unify_free(u);
}

/* weft_metricsum_pick's row maker: the location and member as the name. */
static int name_row(void *ctx, size_t i, const weft_metric_series *s,
                    weft_metric_row *row)
{
    char buf[32];

    ++*(int *)ctx;
    snprintf(buf, sizeof buf, "%zu:%u", i, s->member);
    row->name = strdup(buf);
    return row->name ? 0 : WEFT_ENOMEM;
}

static void test_pick(void **state)
{
    weft_metricloc l[3] = { { 0 } };
    const weft_metricloc *v[3] = { &l[0], &l[1], &l[2] };
    weft_metric_row *rows;
    size_t n;
    int made = 0;

    (void)state;
    assert_int_equal(weft_metricsum_add(&l[0], 7, 10, 1.0, 5), 0);
    /* l[1] has none; l[2] two members */
    assert_int_equal(weft_metricsum_add(&l[2], 3, 20, 2.0, 5), 0);
    assert_int_equal(weft_metricsum_add(&l[2], 9, 21, 4.0, 5), 0);
    assert_int_equal(weft_metricsum_pick(v, 3, 2, name_row, &made, &rows,
                                         &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(made, 2);
    assert_string_equal(rows[0].name, "0:7");
    assert_string_equal(rows[1].name, "2:3");
    assert_int_equal(rows[0].series_total, 3);
    assert_int_equal(rows[1].series_total, 3);
    for (size_t i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
    /* none: no rows, nothing made */
    assert_int_equal(weft_metricsum_pick(v + 1, 1, 16, name_row, &made,
                                         &rows, &n), 0);
    assert_int_equal(n, 0);
    assert_null(rows);
    assert_int_equal(made, 2);
    for (int i = 0; i < 3; i++)
        weft_metricloc_free(&l[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bins),
        cmocka_unit_test(test_per_location_cap),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
