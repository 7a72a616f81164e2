/* compare_runs.c - weft compare A B --runs N (issue #32): the N newest
 * traces of A's name against the N newest of B's, so that a change can be
 * told from run-to-run noise.
 *
 * Per region (the rows summed over all locations, matched by name, the
 * outside row included): the mean exclusive time of each side's runs (0
 * in a run without the region), the change of the means, and the noise:
 * the larger of the two sides' spreads (slowest run less fastest). A
 * change not above the noise is "within noise"; with fewer than two runs
 * on a side the noise is unknown and nothing is marked. Each run is
 * listed with its duration (its events' time range).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"

/* One side: the runs of one name, newest first. */
typedef struct side {
    const char *name;     /* the traces' name (of the trace given) */
    int64_t want;         /* runs asked for */
    json_t *runs;         /* [{id, key, duration_s}] */
    json_t *excl;         /* region -> [excl_s of each run] */
    size_t run;           /* the run whose rows are read */
} side;

/* A region's figures over both sides. */
typedef struct change {
    const char *region;   /* owned by a side's excl */
    double a, b;          /* mean exclusive seconds */
    double noise;         /* < 0: unknown */
} change;

/* See cli.h. */
double weft__compare_duration(const weft_trace_row *row)
{
    return row->timer_resolution && row->time_last > row->time_first
               ? (double)(row->time_last - row->time_first) /
                     (double)row->timer_resolution
               : 0.0;
}

/* Keeps the side's newest traces of exactly its name with a profile. */
static int on_trace(const weft_trace_row *row, void *arg)
{
    side *s = arg;
    json_t *o;

    if (strcmp(row->name, s->name) != 0 ||
        (strcmp(row->state, WEFT_STATE_COMPLETE) != 0 &&
         strcmp(row->state, WEFT_STATE_PARTIAL) != 0))
        return 0;
    if (!(o = json_object()) || json_array_append_new(s->runs, o) != 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    weft__cli_jset(o, "id", json_integer(row->id));
    weft__cli_jset(o, "key", weft__cli_jstr(row->key));
    weft__cli_jset(o, "duration_s", json_real(weft__compare_duration(row)));
    return (int64_t)json_array_size(s->runs) >= s->want;
}

/* A sum row of run s->run: its time into the region's array. */
static int on_region(const weft_region_row *r, void *arg)
{
    side *s = arg;
    json_t *v = json_object_get(s->excl, r->region);

    if (!v) {
        size_t n = json_array_size(s->runs);
        if (!(v = json_array()) || json_object_set_new(s->excl, r->region,
                                                       v) != 0) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        for (size_t i = 0; i < n; i++)
            json_array_append_new(v, json_real(0.0));
    }
    json_array_set_new(v, s->run, json_real(r->excl_s));
    return 0;
}

/* The runs of side s and their profiles. EXIT_OK or EXIT_FAIL (said). */
static int load(cli *c, side *s)
{
    weft_list_filter f = { 0 };
    size_t n;

    f.sort = WEFT_SORT_CREATED;
    if (weft_catalog_query(c->catalog, &f, on_trace, s) < 0)
        return weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
    n = json_array_size(s->runs);
    for (s->run = 0; s->run < n; s->run++) {
        json_t *id = json_object_get(json_array_get(s->runs, s->run), "id");
        if (weft_catalog_regions(c->catalog, json_integer_value(id),
                                 WEFT_RGROUP_ALL,
                                 WEFT_RSORT_NAME, 0, on_region, s) < 0)
            return weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
    }
    if (json_object_size(s->excl) == 0) {
        char *name = weft__cli_escape(s->name);
        weft__cli_fail("no converted trace named '%s' has a profile", name);
        free(name);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

/* The mean and spread (max - min; -1 below two runs) of v's n runs. */
static double mean_of(const json_t *v, size_t n, double *spread)
{
    double sum = 0, lo = INFINITY, hi = -INFINITY;

    for (size_t i = 0; i < n; i++) {
        double x = v ? json_real_value(json_array_get(v, i)) : 0.0;
        sum += x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    *spread = n > 1 ? hi - lo : -1;
    return n ? sum / (double)n : 0;
}

/* The change of region (its arrays va, vb, NULL where it is not). */
static change change_of(const char *region, const side *a, const side *b,
                        const json_t *va, const json_t *vb)
{
    change ch = { region, 0, 0, -1 };
    double sa, sb;

    ch.a = mean_of(va, json_array_size(a->runs), &sa);
    ch.b = mean_of(vb, json_array_size(b->runs), &sb);
    if (sa >= 0 && sb >= 0)
        ch.noise = sa > sb ? sa : sb;
    return ch;
}

static int within(const change *ch)
{
    return ch->noise >= 0 && fabs(ch->b - ch->a) <= ch->noise;
}

static int cmp_change(const void *x, const void *y)
{
    const change *p = x, *q = y;
    double dp = fabs(p->b - p->a), dq = fabs(q->b - q->a);

    if (dp != dq)
        return dp < dq ? 1 : -1;
    return strcmp(p->region, q->region);
}

/* Every region of either side, the one that changed most first; *n of
 * them (malloc'd; exits when out of memory). */
static change *changes(const side *a, const side *b, size_t *n)
{
    size_t cap = json_object_size(a->excl) + json_object_size(b->excl), k = 0;
    change *v = calloc(cap ? cap : 1, sizeof *v);
    const char *region;
    json_t *arr;

    if (!v) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    json_object_foreach(a->excl, region, arr)
        v[k++] = change_of(region, a, b, arr,
                           json_object_get(b->excl, region));
    json_object_foreach(b->excl, region, arr)
        if (!json_object_get(a->excl, region))
            v[k++] = change_of(region, a, b, NULL, arr);
    qsort(v, k, sizeof *v, cmp_change);
    *n = k;
    return v;
}

/* The per-run totals of side s (all its regions), as a new array. */
static json_t *totals(const side *s)
{
    size_t n = json_array_size(s->runs);
    json_t *t = json_array();
    const char *region;
    json_t *arr;

    for (size_t i = 0; t && i < n; i++) {
        double sum = 0;
        json_object_foreach(s->excl, region, arr)
            sum += json_real_value(json_array_get(arr, i));
        json_array_append_new(t, json_real(sum));
    }
    if (!t) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    return t;
}

static char *fmt_pct(const change *ch)
{
    char buf[64];

    if (ch->a <= 0)
        return weft__cli_xstrdup("-");
    snprintf(buf, sizeof buf, "%+.1f", 100.0 * (ch->b - ch->a) / ch->a);
    return weft__cli_xstrdup(buf);
}

static void row_cells(weft__table *t, char *label, const change *ch)
{
    char *cells[7];

    cells[0] = label;
    cells[1] = weft__cli_fmt_secs(ch->a);
    cells[2] = weft__cli_fmt_secs(ch->b);
    cells[3] = weft__compare_fmt_change(ch->b - ch->a);
    cells[4] = fmt_pct(ch);
    cells[5] = ch->noise >= 0 ? weft__cli_fmt_secs(ch->noise)
                              : weft__cli_xstrdup("unknown");
    cells[6] = weft__cli_xstrdup(within(ch) ? "within noise" : "");
    weft__cli_table_add(t, cells);
}

static json_t *row_json(const change *ch)
{
    json_t *o = json_object();

    if (!o) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    if (ch->region)
        weft__cli_jset(o, "region", weft__cli_jstr(ch->region));
    weft__cli_jset(o, "excl_s_a", json_real(ch->a));
    weft__cli_jset(o, "excl_s_b", json_real(ch->b));
    weft__cli_jset(o, "change_s", json_real(ch->b - ch->a));
    weft__cli_jset(o, "change_pct", ch->a > 0 ? json_real(100.0 * (ch->b -
                                                ch->a) / ch->a)
                                              : json_null());
    weft__cli_jset(o, "noise_s", ch->noise >= 0 ? json_real(ch->noise)
                                                : json_null());
    weft__cli_jset(o, "within_noise", json_boolean(within(ch)));
    return o;
}

static void runs_text(const char *label, const side *s)
{
    char *name = weft__cli_escape(s->name);
    size_t i;
    json_t *r;

    printf("%s '%s', %zu run%s:", label, name, json_array_size(s->runs),
           json_array_size(s->runs) == 1 ? "" : "s");
    json_array_foreach(s->runs, i, r) {
        char *d = weft__cli_fmt_secs(
            json_real_value(json_object_get(r, "duration_s")));
        printf(" #%" PRId64 " %s s%s",
               (int64_t)json_integer_value(json_object_get(r, "id")), d,
               i + 1 < json_array_size(s->runs) ? "," : "\n");
        free(d);
    }
    free(name);
}

static int print(cli *c, const side *a, const side *b, const change *v,
                 size_t n, size_t shown, const change *total)
{
    weft__table t = { 7, { "REGION", "EXCL S A", "EXCL S B", "CHANGE S",
                           "CHANGE %", "NOISE S", "" },
                      { 0, 1, 1, 1, 1, 1, 0 }, NULL, 0, 0 };

    if (c->json) {
        json_t *o = json_object(), *regions = json_array(), *sa, *sb;
        if (!o || !regions || !(sa = json_object()) || !(sb = json_object()))
            return weft__cli_fail("out of memory");
        weft__cli_jset(sa, "name", weft__cli_jstr(a->name));
        weft__cli_jset(sa, "runs", json_incref(a->runs));
        weft__cli_jset(sb, "name", weft__cli_jstr(b->name));
        weft__cli_jset(sb, "runs", json_incref(b->runs));
        weft__cli_jset(o, "a", sa);
        weft__cli_jset(o, "b", sb);
        for (size_t i = 0; i < shown; i++)
            json_array_append_new(regions, row_json(&v[i]));
        weft__cli_jset(o, "regions", regions);
        weft__cli_jset(o, "total", row_json(total));
        return weft__cli_print_json(o);
    }
    runs_text("A:", a);
    runs_text("B:", b);
    printf("times: means of the runs; noise: the larger spread (slowest "
           "run less fastest) of a side%s\n\n", total->noise < 0
           ? " (unknown: a side has one run)" : "");
    for (size_t i = 0; i < shown; i++)
        row_cells(&t, weft__cli_escape(v[i].region), &v[i]);
    row_cells(&t, weft__cli_xstrdup("(total)"), total);
    weft__cli_table_print(&t, stdout);
    weft__cli_table_free(&t);
    if (shown < n)
        printf("\n(the %zu regions that changed most of %zu; --top 0 shows "
               "all)\n", shown, n);
    return EXIT_OK;
}

/* See cli.h. */
int weft__compare_runs(cli *c, const weft_trace_row *ta,
                       const weft_trace_row *tb, int64_t runs, int64_t top)
{
    side a = { ta->name, runs, json_array(), json_object(), 0 };
    side b = { tb->name, runs, json_array(), json_object(), 0 };
    json_t *sa = NULL, *sb = NULL;
    change *v = NULL, total;
    size_t n = 0;
    int status = EXIT_FAIL;

    if (!a.runs || !a.excl || !b.runs || !b.excl) {
        weft__cli_fail("out of memory");
        goto out;
    }
    if (load(c, &a) != EXIT_OK || load(c, &b) != EXIT_OK)
        goto out;
    v = changes(&a, &b, &n);
    sa = totals(&a);
    sb = totals(&b);
    total = change_of(NULL, &a, &b, sa, sb);
    status = print(c, &a, &b, v, n,
                   top > 0 && (size_t)top < n ? (size_t)top : n, &total);
out:
    free(v);
    json_decref(sa);
    json_decref(sb);
    json_decref(a.runs);
    json_decref(a.excl);
    json_decref(b.runs);
    json_decref(b.excl);
    return status;
}
