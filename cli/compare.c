/* compare.c - weft compare A B: the region profiles of two traces side by
 * side (the rows summed over all locations, matched by region name), the
 * regions whose exclusive time changed most first, with the totals of all
 * regions; as a table or one JSON object. The matching, the order and the
 * limit are SQL (weft_catalog_compare). One run of each side tells
 * nothing of noise, and says so; --runs N compares N runs of each side
 * (compare_runs.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"

#define COMPARE_DEFAULT_TOP 20
/* --runs N at most: the runs' profiles are held in memory at once. */
#define COMPARE_MAX_RUNS 1000

typedef struct compare_ctx {
    weft__table t;
    json_t *arr;              /* --json: the region objects */
    size_t n;                 /* rows seen */
    weft_region_pair totals;  /* the figures of all regions (no region) */
} compare_ctx;

/* Rounded to 4 decimals (either sign): the last bits of a quotient are
 * noise in JSON. */
static double round4(double x)
{
    double r = x * 1e4;

    return (double)(int64_t)(r < 0 ? r - 0.5 : r + 0.5) / 1e4;
}

/* The change from a to b in percent of a; 0 when both are 0. Returns 0
 * when there is none (a is 0, b is not). */
static int change_pct(double a, double b, double *pct)
{
    if (a > 0) {
        *pct = 100.0 * (b - a) / a;
        return 1;
    }
    *pct = 0;
    return b == a;
}

/* See cli.h. */
char *weft__compare_fmt_change(double d)
{
    char buf[64];

    /* below the 6 decimals shown: no change, not "-0.000000" */
    if (d > -5e-7 && d < 5e-7)
        return weft__cli_xstrdup("0.000000");
    snprintf(buf, sizeof buf, "%+.6f", d);
    return weft__cli_xstrdup(buf);
}

/* The CHANGE % cell: "new", "gone", "+12.5", or "-" when b's time came
 * from nothing. */
static char *fmt_pct(int in_a, int in_b, double a, double b)
{
    char buf[64];
    double pct;

    if (!in_a)
        return weft__cli_xstrdup("new");
    if (!in_b)
        return weft__cli_xstrdup("gone");
    if (!change_pct(a, b, &pct))
        return weft__cli_xstrdup("-");
    snprintf(buf, sizeof buf, pct == 0 ? "%.1f" : "%+.1f", pct);
    return weft__cli_xstrdup(buf);
}

/* The figures of one row (a region, or the totals: region NULL) into
 * JSON object o; a side the region is not in has null. */
static void pair_json(json_t *o, const char *region, int in_a, int in_b,
                      uint64_t va, uint64_t vb, double ea, double eb)
{
    double pct;

    if (region) {
        weft__cli_jset(o, "region", weft__cli_jstr(region));
        weft__cli_jset(o, "status", json_string(!in_a ? "new"
                                                : !in_b ? "gone" : "both"));
    }
    weft__cli_jset(o, "visits_a", in_a ? weft__cli_ju64(va) : json_null());
    weft__cli_jset(o, "visits_b", in_b ? weft__cli_ju64(vb) : json_null());
    weft__cli_jset(o, "excl_s_a", in_a ? json_real(ea) : json_null());
    weft__cli_jset(o, "excl_s_b", in_b ? json_real(eb) : json_null());
    weft__cli_jset(o, "change_s", json_real(eb - ea));
    weft__cli_jset(o, "change_pct", change_pct(ea, eb, &pct)
                                    ? json_real(round4(pct)) : json_null());
}

/* The cells of one row (a region, or the totals) into table t. */
static void pair_cells(weft__table *t, char *label, int in_a, int in_b,
                       uint64_t va, uint64_t vb, double ea, double eb)
{
    char *cells[7];

    cells[0] = label;
    cells[1] = in_a ? weft__cli_fmt_u64(va) : weft__cli_xstrdup("-");
    cells[2] = in_b ? weft__cli_fmt_u64(vb) : weft__cli_xstrdup("-");
    cells[3] = in_a ? weft__cli_fmt_secs(ea) : weft__cli_xstrdup("-");
    cells[4] = in_b ? weft__cli_fmt_secs(eb) : weft__cli_xstrdup("-");
    cells[5] = weft__compare_fmt_change(eb - ea);
    cells[6] = fmt_pct(in_a, in_b, ea, eb);
    weft__cli_table_add(t, cells);
}

static int compare_row(const weft_region_pair *r, void *arg)
{
    compare_ctx *x = arg;

    if (x->n++ == 0) {
        x->totals = *r;
        x->totals.region = NULL;
    }
    if (x->arr) {
        json_t *o = json_object();
        if (!o || json_array_append_new(x->arr, o) != 0) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        pair_json(o, r->region, r->in_a, r->in_b, r->visits_a, r->visits_b,
                  r->excl_a, r->excl_b);
    } else {
        pair_cells(&x->t, weft__cli_escape(r->region), r->in_a, r->in_b,
                   r->visits_a, r->visits_b, r->excl_a, r->excl_b);
    }
    return 0;
}

static void identity_text(const char *label, const weft_trace_row *row)
{
    char *name = weft__cli_escape(row->name), *key = weft__cli_escape(row->key),
         *when = weft__cli_fmt_time(row->created),
         *dur = weft__cli_fmt_secs(weft__compare_duration(row));

    printf("%s #%" PRId64 " '%s' %s, %s (%s), duration %s s\n", label,
           row->id, name, row->state, when, key, dur);
    free(name);
    free(key);
    free(when);
    free(dur);
}

static int print_json(compare_ctx *x, const weft_trace_row *a,
                      const weft_trace_row *b)
{
    const weft_region_pair *s = &x->totals;
    json_t *o = json_object(), *total = json_object();

    if (!o || !total) {
        json_decref(o);
        json_decref(total);
        return weft__cli_fail("out of memory");
    }
    weft__cli_jset(o, "a", weft__cli_trace_json(a));
    weft__cli_jset(o, "b", weft__cli_trace_json(b));
    weft__cli_jset(json_object_get(o, "a"), "duration_s",
                   json_real(weft__compare_duration(a)));
    weft__cli_jset(json_object_get(o, "b"), "duration_s",
                   json_real(weft__compare_duration(b)));
    weft__cli_jset(o, "regions", x->arr);
    x->arr = NULL;
    weft__cli_jset(total, "regions", weft__cli_ju64(s->regions));
    weft__cli_jset(total, "new", weft__cli_ju64(s->regions - s->regions_a));
    weft__cli_jset(total, "gone", weft__cli_ju64(s->regions - s->regions_b));
    pair_json(total, NULL, 1, 1, s->total_visits_a, s->total_visits_b,
              s->total_excl_a, s->total_excl_b);
    weft__cli_jset(o, "total", total);
    weft__cli_jset(o, "noise", json_null());  /* unknown: one run a side */
    return weft__cli_print_json(o);
}

static int print_text(compare_ctx *x, const weft_trace_row *a,
                      const weft_trace_row *b)
{
    const weft_region_pair *s = &x->totals;

    identity_text("A:", a);
    identity_text("B:", b);
    printf("regions: %" PRIu64 " (%" PRIu64 " new in B, %" PRIu64
           " gone from A)\n", s->regions, s->regions - s->regions_a,
           s->regions - s->regions_b);
    printf("noise: unknown (one run of each side; --runs N compares the N "
           "newest runs of each name)\n\n");
    pair_cells(&x->t, weft__cli_xstrdup("(total)"), 1, 1, s->total_visits_a,
               s->total_visits_b, s->total_excl_a, s->total_excl_b);
    weft__cli_table_print(&x->t, stdout);
    if (x->n < s->regions)
        printf("\n(the %zu regions that changed most of %" PRIu64
               "; --top 0 shows all)\n", x->n, s->regions);
    return EXIT_OK;
}

int weft__cmd_compare(cli *c)
{
    compare_ctx x = { { 7, { "REGION", "VISITS A", "VISITS B", "EXCL S A",
                             "EXCL S B", "CHANGE S", "CHANGE %" },
                        { 0, 1, 1, 1, 1, 1, 1 }, NULL, 0, 0 },
                      NULL, 0, { 0 } };
    weft_trace_row a = { 0 }, b = { 0 };
    int64_t top = COMPARE_DEFAULT_TOP, runs = 1;
    int rc, status = EXIT_FAIL;

    if (c->top && weft__cli_parse_int(c->top, 0, INT64_MAX, &top) < 0)
        return weft__cli_usage("compare", "--top '%s': not a number (0: "
                               "all regions)", c->top);
    if (c->runs && weft__cli_parse_int(c->runs, 1, COMPARE_MAX_RUNS,
                                       &runs) < 0)
        return weft__cli_usage("compare", "--runs '%s': not a number of "
                               "runs (1 to %d)", c->runs, COMPARE_MAX_RUNS);
    if (weft__cli_find(c, c->args[0], &a) != EXIT_OK)
        return EXIT_FAIL;
    if (weft__cli_find(c, c->args[1], &b) != EXIT_OK)
        goto out;
    if (a.id == b.id)
        fprintf(stderr, "weft compare: A and B are the same trace (#%" PRId64
                ")\n", a.id);
    if (c->runs) {
        status = weft__compare_runs(c, &a, &b, runs, top);
        goto out;
    }
    if (c->json && !(x.arr = json_array())) {
        weft__cli_fail("out of memory");
        goto out;
    }
    rc = weft_catalog_compare(c->catalog, a.id, b.id, top, compare_row, &x);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    /* Every row carries the counts; no row: neither has a profile. */
    if (x.totals.regions_a == 0) {
        weft__cli_no_profile(&a);
        goto out;
    }
    if (x.totals.regions_b == 0) {
        weft__cli_no_profile(&b);
        goto out;
    }
    status = c->json ? print_json(&x, &a, &b) : print_text(&x, &a, &b);
out:
    json_decref(x.arr);
    weft__cli_table_free(&x.t);
    weft_catalog_trace_free(&a);
    weft_catalog_trace_free(&b);
    return status;
}
