/* profile.c - weft profile TRACE: the region profile weftd computed when
 * it converted the trace, summed over locations, per location or per
 * program (the processes of a process tree that ran the same one). Each
 * row says its region's paradigm (issue #35: "mpi", "openmp", ...; ""
 * for the time outside traced calls and for traces converted before
 * catalog schema 15).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"

#define PROFILE_DEFAULT_LIMIT 20

typedef struct profile_ctx {
    enum weft_region_group group;
    weft__table t;
    json_t *arr;
    size_t n;
} profile_ctx;

static double pct(double part, double total)
{
    return total > 0 ? 100.0 * part / total : 0.0;
}

static int profile_row(const weft_region_row *r, void *arg)
{
    profile_ctx *x = arg;
    char *cells[8], buf[32];
    size_t k = 0;

    x->n++;
    if (x->arr) {
        json_t *o = json_object();
        if (!o || json_array_append_new(x->arr, o) != 0) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        if (x->group == WEFT_RGROUP_LOCATION) {
            weft__cli_jset(o, "location", json_integer(r->location));
            weft__cli_jset(o, "location_name",
                           weft__cli_jstr(r->location_name));
        } else if (x->group == WEFT_RGROUP_PROGRAM) {
            weft__cli_jset(o, "program", weft__cli_jstr(r->location_name));
        }
        weft__cli_jset(o, "region", weft__cli_jstr(r->region));
        weft__cli_jset(o, "paradigm", weft__cli_jstr(r->paradigm));
        weft__cli_jset(o, "visits", weft__cli_ju64(r->visits));
        weft__cli_jset(o, "incl_s", json_real(r->incl_s));
        weft__cli_jset(o, "excl_s", json_real(r->excl_s));
        /* rounded: the window sum's last bits depend on the row order */
        weft__cli_jset(o, "excl_pct",
                       json_real((double)(int64_t)(pct(r->excl_s,
                                                       r->total_excl_s) *
                                                   1e4 + 0.5) / 1e4));
        return 0;
    }
    if (x->group == WEFT_RGROUP_LOCATION)
        cells[k++] = weft__cli_fmt_u64((uint64_t)r->location);
    if (x->group != WEFT_RGROUP_ALL)
        cells[k++] = weft__cli_escape(r->location_name);
    cells[k++] = weft__cli_escape(r->region);
    cells[k++] = weft__cli_escape(r->paradigm);
    cells[k++] = weft__cli_fmt_u64(r->visits);
    cells[k++] = weft__cli_fmt_secs(r->incl_s);
    cells[k++] = weft__cli_fmt_secs(r->excl_s);
    snprintf(buf, sizeof buf, "%.1f", pct(r->excl_s, r->total_excl_s));
    cells[k++] = weft__cli_xstrdup(buf);
    weft__cli_table_add(&x->t, cells);
    return 0;
}

int weft__cmd_profile(cli *c)
{
    static const char *const sorts[] = {
        [WEFT_RSORT_EXCL] = "excl", [WEFT_RSORT_INCL] = "incl",
        [WEFT_RSORT_VISITS] = "visits", [WEFT_RSORT_NAME] = "name",
    };
    profile_ctx x = { c->by_program ? WEFT_RGROUP_PROGRAM
                      : c->by_location ? WEFT_RGROUP_LOCATION
                                       : WEFT_RGROUP_ALL, { 0 }, NULL, 0 };
    enum weft_region_sort sort = WEFT_RSORT_EXCL;
    int64_t limit = PROFILE_DEFAULT_LIMIT;
    weft_trace_row row;
    int rc, status = EXIT_FAIL;

    if (c->sort) {
        int i = WEFT__WORD_INDEX(c->sort, sorts);
        if (i < 0)
            return weft__cli_usage("profile", "--sort '%s': not one of excl, "
                                   "incl, visits, name", c->sort);
        sort = (enum weft_region_sort)i;
    }
    if (c->limit && weft__cli_parse_int(c->limit, 0, INT64_MAX, &limit) < 0)
        return weft__cli_usage("profile", "--limit '%s': not a number (0: "
                               "all regions)", c->limit);
    if (c->by_program && c->by_location)
        return weft__cli_usage("profile", "--by-location and --by-program: "
                               "one or the other");
    if (x.group == WEFT_RGROUP_LOCATION) {
        weft__table t = { 8, { "LOCATION", "NAME", "REGION", "PARADIGM",
                               "VISITS", "INCL S", "EXCL S", "EXCL %" },
                          { 1, 0, 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 };
        x.t = t;
    } else if (x.group == WEFT_RGROUP_PROGRAM) {
        weft__table t = { 7, { "PROGRAM", "REGION", "PARADIGM", "VISITS",
                               "INCL S", "EXCL S", "EXCL %" },
                          { 0, 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 };
        x.t = t;
    } else {
        weft__table t = { 6, { "REGION", "PARADIGM", "VISITS", "INCL S",
                               "EXCL S", "EXCL %" },
                          { 0, 0, 1, 1, 1, 1 }, NULL, 0, 0 };
        x.t = t;
    }
    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    if (c->json && !(x.arr = json_array())) {
        weft__cli_fail("out of memory");
        goto out;
    }
    rc = weft_catalog_regions(c->catalog, row.id, x.group, sort, limit,
                              profile_row, &x);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (x.n == 0) {
        weft__cli_no_profile(&row);
        goto out;
    }
    if (c->json) {
        json_t *o = json_object();
        if (!o) {
            weft__cli_fail("out of memory");
            goto out;
        }
        weft__cli_jset(o, "id", json_integer(row.id));
        weft__cli_jset(o, "name", weft__cli_jstr(row.name));
        weft__cli_jset(o, "by_location",
                       json_boolean(x.group == WEFT_RGROUP_LOCATION));
        if (x.group == WEFT_RGROUP_PROGRAM)
            weft__cli_jset(o, "by_program", json_true());
        weft__cli_jset(o, "regions", x.arr);
        x.arr = NULL;
        status = weft__cli_print_json(o);
        goto out;
    }
    weft__cli_table_print(&x.t, stdout);
    status = EXIT_OK;
out:
    json_decref(x.arr);
    weft__cli_table_free(&x.t);
    weft_catalog_trace_free(&row);
    return status;
}
