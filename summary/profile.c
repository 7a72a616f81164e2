/* profile.c - the region profile of a trace (profile.h).
 *
 * DESIGN: per location,
 *   - a stack of open Enters (region, enter time, time of direct children)
 *     and a small open-addressing table of the regions the location
 *     touched (visits, inclusive and exclusive ticks, open frames); no
 *     allocation per event, memory bounded by the regions touched;
 *   - visits count every Enter; exclusive time of a visit is its duration
 *     minus that of its direct children; inclusive time is counted once
 *     per outermost visit of a region (a recursive f inside f adds its
 *     exclusive time, not its inclusive time again);
 *   - the time outside any region (issue #32): the location's span, from
 *     its first event to its end, less that of its outermost frames,
 *     as a row of its own (WEFT_PROFILE_OUTSIDE), so that the exclusive
 *     times of a location's rows add up to its span.
 * The caller feeds exactly the Enters and Leaves it writes to the
 * archive, and every Leave closes the innermost frame (the converter
 * makes every location nest, see replay.c), so the profile is what any
 * reader computes from the archive.
 * When a location is done it is folded into the sums over all locations
 * (an array by region id) and keeps its top `keep` regions by exclusive
 * time as rows; its tables are freed. A row carries its region's name
 * and paradigm (issue #35), both as text, as the catalog stores them.
 */
#include "profile.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_GeneralDefinitions.h>

#include "weft_errors.h"

/* OTF2_Paradigm's constants in lower case, without OTF2_PARADIGM_. */
static const char *const paradigm_names[] = {
    [OTF2_PARADIGM_UNKNOWN] = "unknown",
    [OTF2_PARADIGM_USER] = "user",
    [OTF2_PARADIGM_COMPILER] = "compiler",
    [OTF2_PARADIGM_OPENMP] = "openmp",
    [OTF2_PARADIGM_MPI] = "mpi",
    [OTF2_PARADIGM_CUDA] = "cuda",
    [OTF2_PARADIGM_MEASUREMENT_SYSTEM] = "measurement_system",
    [OTF2_PARADIGM_PTHREAD] = "pthread",
    [OTF2_PARADIGM_HMPP] = "hmpp",
    [OTF2_PARADIGM_OMPSS] = "ompss",
    [OTF2_PARADIGM_HARDWARE] = "hardware",
    [OTF2_PARADIGM_GASPI] = "gaspi",
    [OTF2_PARADIGM_UPC] = "upc",
    [OTF2_PARADIGM_SHMEM] = "shmem",
    [OTF2_PARADIGM_WINTHREAD] = "winthread",
    [OTF2_PARADIGM_QTTHREAD] = "qtthread",
    [OTF2_PARADIGM_ACETHREAD] = "acethread",
    [OTF2_PARADIGM_TBBTHREAD] = "tbbthread",
    [OTF2_PARADIGM_OPENACC] = "openacc",
    [OTF2_PARADIGM_OPENCL] = "opencl",
    [OTF2_PARADIGM_MTAPI] = "mtapi",
    [OTF2_PARADIGM_SAMPLING] = "sampling",
    [OTF2_PARADIGM_NONE] = "none",
    [OTF2_PARADIGM_HIP] = "hip",
    [OTF2_PARADIGM_KOKKOS] = "kokkos",
};

/* See profile.h. */
const char *weft_profile_paradigm_name(unsigned paradigm, unsigned role,
                                       char *buf)
{
    if (paradigm == OTF2_PARADIGM_NONE &&
        (role == OTF2_REGION_ROLE_FILE_IO ||
         role == OTF2_REGION_ROLE_FILE_IO_METADATA))
        return "io";
    if (paradigm < sizeof paradigm_names / sizeof *paradigm_names &&
        paradigm_names[paradigm])
        return paradigm_names[paradigm];
    snprintf(buf, WEFT_PROFILE_PARADIGM_NAME, "paradigm %u", paradigm);
    return buf;
}

/* Sums for nregions regions; 0 or WEFT_ENOMEM. */
int weft_profile_init(weft_profile *p, weft_profile_name_fn name,
                      weft_profile_paradigm_fn paradigm,
                      const void *name_arg, size_t nregions, size_t keep)
{
    memset(p, 0, sizeof *p);
    p->name = name;
    p->paradigm = paradigm;
    p->name_arg = name_arg;
    p->nregions = nregions;
    p->keep = keep;
    p->sum = calloc(nregions ? nregions : 1, sizeof *p->sum);
    return p->sum ? 0 : WEFT_ENOMEM;
}

/* p can be made again with weft_profile_init. */
void weft_profile_free(weft_profile *p)
{
    free(p->sum);
    for (size_t i = 0; i < p->nrows; i++) {
        free(p->rows[i].region);
        free(p->rows[i].paradigm);
    }
    free(p->rows);
    p->sum = NULL;
    p->rows = NULL;
    p->nrows = p->cap = 0;
}

static void add_sum(weft_profile_sum *to, const weft_profile_sum *from)
{
    to->visits += from->visits;
    to->incl += from->incl;
    to->excl += from->excl;
}

/* Sums only: rows are moved by their owner. */
void weft_profile_add(weft_profile *to, const weft_profile *from)
{
    to->outside += from->outside;
    for (size_t r = 0; r < to->nregions; r++)
        add_sum(&to->sum[r], &from->sum[r]);
}

void weft_profile_add_mapped(weft_profile *to, const weft_profile *from,
                             const uint32_t *map, size_t nmap)
{
    to->outside += from->outside;
    for (size_t r = 0; r < from->nregions && r < nmap; r++)
        if (map[r] < to->nregions)
            add_sum(&to->sum[map[r]], &from->sum[r]);
}

/* The slot of region, added when new; NULL when out of memory. Growing
 * the table moves slots: the open frames learn their new place. */
static weft_profile_slot *slot_get(weft_profile_loc *l, uint32_t region)
{
    size_t ncells = l->slots.ncells;
    weft_profile_slot *sl = weft_hashtab_get(&l->slots, region + 1,
                                             sizeof *sl);

    if (sl && l->slots.ncells != ncells)  /* grown: the slots moved */
        for (size_t i = 0; i < l->depth; i++)
            if (l->stack[i].slot != WEFT_PROFILE_NO_SLOT)
                l->stack[i].slot = (uint32_t)(
                    weft__profile_find(l, l->stack[i].region) -
                    (weft_profile_slot *)l->slots.cells);
    return sl;
}

/* Opens a frame of region at t: makes room on the stack and a slot for
 * the region, then weft_profile_enter_fast. A region outside the profile
 * (OTF2_UNDEFINED_REGION) has a frame for the nesting, no row. 0 or
 * WEFT_ENOMEM. */
int weft_profile_enter(const weft_profile *p, weft_profile_loc *l,
                       uint32_t region, uint64_t t)
{
    int done;

    if (l->depth == l->cap) {
        size_t n = l->cap ? l->cap * 2 : 16;
        weft_profile_frame *v = realloc(l->stack, n * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        l->stack = v;
        l->cap = n;
    }
    if (region < p->nregions && !slot_get(l, region))
        return WEFT_ENOMEM;
    done = weft_profile_enter_fast(l, p->nregions, region, t);
    assert(done);
    (void)done;
    return 0;
}

/* See profile.h. */
int weft_profile_count(const weft_profile *p, weft_profile_loc *l,
                       uint32_t region, uint64_t visits, uint64_t ticks)
{
    weft_profile_slot *sl;

    if (region >= p->nregions)
        return 0;
    if (!(sl = slot_get(l, region)))
        return WEFT_ENOMEM;
    sl->visits += visits;
    sl->excl += ticks;
    if (!sl->open)
        sl->incl += ticks;
    /* The time is taken from where the calls were made: the region open
     * now, else the time outside traced calls. */
    if (l->depth)
        l->stack[l->depth - 1].child += ticks;
    else
        l->top += ticks;
    return 0;
}

/* The place of region key - 1 among those of equal exclusive time. */
static uint64_t tie_order(const weft_profile *p, uint32_t key)
{
    return p->order && key - 1u < p->norder ? p->order[key - 1u]
                                            : (uint64_t)key - 1u;
}

static int cmp_slot_excl(const void *a, const void *b, void *arg)
{
    const weft_profile_slot *x = a, *y = b;
    uint64_t i, k;

    if (x->excl != y->excl)
        return x->excl < y->excl ? 1 : -1;
    i = tie_order(arg, x->key);
    k = tie_order(arg, y->key);
    return i < k ? -1 : i > k;
}

/* The name of region's rows: its own, unless that is the outside row's. */
static const char *region_name(const weft_profile *p, uint32_t region)
{
    const char *name = p->name(p->name_arg, region);

    return strcmp(name, WEFT_PROFILE_OUTSIDE) ? name
                                              : WEFT_PROFILE_OUTSIDE_REGION;
}

/* The paradigm of region's rows. */
static const char *region_paradigm(const weft_profile *p, uint32_t region,
                                   char *buf)
{
    return p->paradigm ? p->paradigm(p->name_arg, region, buf) : "";
}

/* Adds a row named `name` of paradigm `paradigm` (times in ticks until
 * weft_profile_result) to p->rows. */
static int add_row(weft_profile *p, int64_t location, const char *name,
                   const char *paradigm, uint64_t visits, uint64_t incl,
                   uint64_t excl)
{
    weft_region_row *row;

    if (p->nrows == p->cap) {
        size_t n = p->cap ? p->cap * 2 : 64;
        weft_region_row *v = realloc(p->rows, n * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        p->rows = v;
        p->cap = n;
    }
    row = &p->rows[p->nrows];
    memset(row, 0, sizeof *row);
    row->location = location;
    row->visits = visits;
    row->incl_s = (double)incl;
    row->excl_s = (double)excl;
    row->region = strdup(name);
    row->paradigm = strdup(paradigm);
    p->nrows++;  /* freed with the rows, also when a strdup failed */
    return row->region && row->paradigm ? 0 : WEFT_ENOMEM;
}

/* Also for a location whose member failed before it was finished. */
void weft_profile_loc_free(weft_profile_loc *l)
{
    free(l->stack);
    weft_hashtab_free(&l->slots);
    memset(l, 0, sizeof *l);
}

/* A location is done: closes what is still open at `end`, adds it to the
 * sums, keeps its top rows, frees its tables. 0 or WEFT_ENOMEM. */
int weft_profile_finish_loc(weft_profile *p, weft_profile_loc *l,
                            int64_t location, uint64_t end)
{
    weft_profile_slot *v = (weft_profile_slot *)l->slots.cells;
    uint64_t span = end > l->start ? end - l->start : 0, outside;
    char buf[WEFT_PROFILE_PARADIGM_NAME];
    size_t k = 0;
    int rc = 0;

    while (l->depth)
        weft_profile_leave(l, end);
    outside = span > l->top ? span - l->top : 0;
    p->outside += outside;
    for (size_t i = 0; i < l->slots.ncells; i++) {
        weft_profile_slot *sl = weft_hashtab_at(&l->slots, i, sizeof *sl);
        if (!sl)
            continue;
        add_sum(&p->sum[sl->key - 1],
                &(weft_profile_sum){ sl->visits, sl->incl, sl->excl });
        v[k++] = *sl;  /* compact in place for sorting */
    }
    if (k)
        qsort_r(v, k, sizeof *v, cmp_slot_excl, p);
    for (size_t i = 0; i < k && i < p->keep && rc == 0; i++)
        rc = add_row(p, location, region_name(p, v[i].key - 1),
                     region_paradigm(p, v[i].key - 1, buf), v[i].visits,
                     v[i].incl, v[i].excl);
    if (outside && rc == 0)
        rc = add_row(p, location, WEFT_PROFILE_OUTSIDE, "", 0, outside,
                     outside);
    weft_profile_loc_free(l);
    return rc;
}

/* Did a location enter a profiled region? */
static int any_visit(const weft_profile *p)
{
    for (size_t r = 0; r < p->nregions; r++)
        if (p->sum[r].visits)
            return 1;
    return 0;
}

/* The sum rows first, then the per-location rows, in seconds; *rows is
 * the caller's. 0 or WEFT_ENOMEM. */
int weft_profile_result(weft_profile *p, uint64_t resolution,
                        weft_region_row **rows, size_t *nrows)
{
    double res = (double)resolution;
    int any = any_visit(p);
    char buf[WEFT_PROFILE_PARADIGM_NAME];
    size_t first;
    weft_region_row *v;

    *rows = NULL;
    *nrows = 0;
    if (!any) {
        /* no Enter anywhere: no profile, not one of outside rows only */
        for (size_t i = 0; i < p->nrows; i++) {
            free(p->rows[i].region);
            free(p->rows[i].paradigm);
        }
        p->nrows = 0;
    }
    first = p->nrows;
    for (size_t r = 0; r < p->nregions; r++)
        if (p->sum[r].visits &&
            add_row(p, WEFT_PROFILE_ALL, region_name(p, (uint32_t)r),
                    region_paradigm(p, (uint32_t)r, buf), p->sum[r].visits,
                    p->sum[r].incl, p->sum[r].excl) < 0)
            return WEFT_ENOMEM;
    if (any && p->outside &&
        add_row(p, WEFT_PROFILE_ALL, WEFT_PROFILE_OUTSIDE, "", 0, p->outside,
                p->outside) < 0)
        return WEFT_ENOMEM;
    if (p->nrows == 0)
        return 0;
    v = malloc(p->nrows * sizeof *v);
    if (!v)
        return WEFT_ENOMEM;
    memcpy(v, p->rows + first, (p->nrows - first) * sizeof *v);
    memcpy(v + (p->nrows - first), p->rows, first * sizeof *v);
    for (size_t i = 0; i < p->nrows; i++) {
        v[i].incl_s /= res;
        v[i].excl_s /= res;
    }
    *rows = v;
    *nrows = p->nrows;
    free(p->rows);
    p->rows = NULL;
    p->nrows = p->cap = 0;
    return 0;
}
