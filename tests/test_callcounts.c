/* test_callcounts.c - calls counted, not recorded (summary/callcounts.c):
 * the MetricMembers described as proto/counts.h says count the region of
 * their name (calls, or ns); a Metric event of their class adds its
 * values to that region's row on its location (visits, and the time at
 * the archive's resolution), on top of the recorded visits; members of
 * other metrics, a member named as no region and values of another type
 * are left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "callcounts.h"
#include "counts.h"
#include "testutil.h"
#include "unify.h"
#include "weft_errors.h"

static void def(weft_unifier *u, weft_record r)
{
    char err[256];

    assert_int_equal(weft_unify_add_def(u, 0, &r, err, sizeof err), 0);
}

/* A member named `name` described `desc` (string ids). */
static weft_record member(OTF2_MetricMemberRef self, OTF2_StringRef name,
                          OTF2_StringRef desc)
{
    weft_record r = metric_member(self, name);

    r.u.MetricMember.description = desc;
    r.u.MetricMember.metricMode = OTF2_METRIC_ABSOLUTE_LAST;
    return r;
}

static void test_profile(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_defview defs = weft_unify_view(u);
    weft_metricmap mm;
    weft_callcounts cc;
    weft_profile p;
    weft_profile_loc l;
    weft_region_row *rows;
    size_t nrows;
    OTF2_MetricMemberRef m[5] = { 0, 1, 2, 3, 4 };
    OTF2_Type types[5] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64,
                           OTF2_TYPE_UINT64, OTF2_TYPE_UINT64,
                           OTF2_TYPE_INT64 };
    OTF2_MetricValue v[5];
    weft_record ev;

    (void)state;
    memset(&l, 0, sizeof l);
    l.start = 1000;  /* the location's first event */
    assert_non_null(u);
    def(u, str(0, "pthread_mutex_lock"));
    def(u, str(1, WEFT_COUNTS_CALLS));
    def(u, str(2, WEFT_COUNTS_TIME));
    def(u, str(3, "cycles"));
    def(u, str(4, "nowhere"));
    def(u, region(0, 0, 1));
    def(u, member(0, 0, 1));      /* lock: calls */
    def(u, member(1, 0, 2));      /* lock: time */
    def(u, member(2, 3, 3));      /* another metric */
    def(u, member(3, 4, 1));      /* counts a region nobody defined */
    ev = member(4, 0, 1);         /* INT64 values: not counts */
    ev.u.MetricMember.valueType = OTF2_TYPE_INT64;
    def(u, ev);
    def(u, metric_class(0, 5, m));
    def(u, metric_class(1, 2, m)); /* the lock's two counts alone */
    def(u, metric_class(2, 2, m + 2)); /* "cycles" and a count */
    def(u, metric_class(3, 1, m + 3)); /* a count of no region */
    assert_int_equal(weft_metricmap_build(&mm, &defs), 0);
    assert_int_equal(weft_profile_init(&p, weft_unify_region_name,
                                       weft_unify_region_paradigm, u, 1, 4),
                     0);
    assert_int_equal(weft_callcounts_build(&cc, &defs, &p), 0);
    assert_int_equal(cc.n, 5);
    assert_int_equal(cc.region[0], 1);
    assert_int_equal(cc.region[1], 1);
    assert_int_equal(cc.is_time[1], 1);
    assert_int_equal(cc.region[2], 0);
    assert_int_equal(cc.region[3], 0);
    /* one recorded visit of 100 ticks, then 1000 counted of 30000 ns */
    assert_int_equal(weft_profile_enter(&p, &l, 0, 1000), 0);
    weft_profile_leave(&l, 1100);
    v[0].unsigned_int = 1000;
    v[1].unsigned_int = 30000;
    v[2].unsigned_int = 7;
    v[3].unsigned_int = 9;
    v[4].signed_int = 5;
    ev = metric_event(2000, 0, 5, types, v);
    assert_int_equal(weft_callcounts_event(&cc, &mm, &p, &l, &ev,
                                           1000000000u), 0);
    /* a second one adds (ABSOLUTE_LAST: since the previous) */
    v[0].unsigned_int = 10;
    v[1].unsigned_int = 500;
    ev = metric_event(3000, 0, 5, types, v);
    assert_int_equal(weft_callcounts_event(&cc, &mm, &p, &l, &ev,
                                           1000000000u), 0);
    /* counts alone are no metric to plot; with another member they are */
    assert_int_equal(weft_callcounts_only(&cc, &mm, &ev), 0);
    ev = metric_event(3000, 1, 2, types, v);
    assert_int_equal(weft_callcounts_only(&cc, &mm, &ev), 1);
    ev = metric_event(3000, 2, 2, types + 2, v + 2);
    assert_int_equal(weft_callcounts_only(&cc, &mm, &ev), 0);
    ev = metric_event(3000, 3, 1, types + 3, v + 3);
    assert_int_equal(weft_callcounts_only(&cc, &mm, &ev), 1);
    /* an event of an undefined metric, and an Enter: nothing */
    ev = metric_event(3000, 9, 5, types, v);
    assert_int_equal(weft_callcounts_event(&cc, &mm, &p, &l, &ev, 1), 0);
    assert_int_equal(weft_callcounts_only(&cc, &mm, &ev), 0);
    ev = enter(3000, 0, 0);
    assert_int_equal(weft_callcounts_event(&cc, &mm, &p, &l, &ev, 1), 0);
    assert_int_equal(weft_callcounts_only(&cc, &mm, &ev), 0);
    /* the counted time comes out of the time outside traced calls:
     * 99000 ticks of span, 100 recorded, 30500 counted */
    assert_int_equal(weft_profile_finish_loc(&p, &l, 5, 100000), 0);
    assert_int_equal(p.outside, 99000 - 100 - 30500);
    assert_int_equal(weft_profile_result(&p, 1000000000u, &rows, &nrows),
                     0);
    assert_int_equal(nrows, 4);  /* the sums, then location 5's rows */
    for (size_t i = 0; i < nrows; i++) {
        if (strcmp(rows[i].region, WEFT_PROFILE_OUTSIDE) == 0) {
            assert_string_equal(rows[i].paradigm, "");
            free(rows[i].region);
            free(rows[i].paradigm);
            continue;
        }
        assert_string_equal(rows[i].region, "pthread_mutex_lock");
        assert_string_equal(rows[i].paradigm, "compiler"); /* region()'s */
        assert_int_equal(rows[i].visits, 1 + 1000 + 10);
        assert_true(rows[i].excl_s > 30599e-9 && rows[i].excl_s < 30601e-9);
        assert_true(rows[i].incl_s > 30599e-9 && rows[i].incl_s < 30601e-9);
        free(rows[i].region);
        free(rows[i].paradigm);
    }
    free(rows);
    /* ns at another resolution: 2 ticks per ns */
    weft_profile_free(&p);
    assert_int_equal(weft_profile_init(&p, weft_unify_region_name,
                                       weft_unify_region_paradigm, u, 1, 4),
                     0);
    ev = metric_event(2000, 0, 5, types, v);
    assert_int_equal(weft_callcounts_event(&cc, &mm, &p, &l, &ev,
                                           2000000000u), 0);
    assert_int_equal(weft_profile_finish_loc(&p, &l, 5, 4000), 0);
    assert_int_equal(p.sum[0].visits, 10);
    assert_int_equal(p.sum[0].excl, 1000);
    weft_profile_free(&p);
    weft_callcounts_free(&cc);
    weft_metricmap_free(&mm);
    weft_unify_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
