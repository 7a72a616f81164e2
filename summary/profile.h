/* profile.h - the region profile of a trace (issue #6): visits,
 * inclusive and exclusive time per region, per location and summed over
 * all locations, from the Enters and Leaves that a conversion writes.
 *
 * The converter's replay (replay.c) keeps one weft_profile_loc per
 * location while it replays the location's member, and one weft_profile
 * per replaying thread (the sums and rows that thread gathered); the
 * threads' profiles are added up, and their rows gathered in rank order,
 * into the conversion's. `weft import` (cli/import.c) feeds it the Enters
 * and Leaves of an archive it reads, so it names regions through a
 * function of the caller's and knows nothing of the unifier (it is a
 * library of its own, libweftsummary, that weftd and weft link). Nothing
 * here locks: a thread owns what it is given. Times are in ticks until weft_profile_result. No allocation per
 * event; memory is bounded by the regions a location touched.
 */
#ifndef WEFT_PROFILE_H
#define WEFT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "hashtab.h"

/* weft_profile_frame.slot of a region without a row. */
#define WEFT_PROFILE_NO_SLOT UINT32_MAX

/* The row of a location's time outside any traced region (issue #32):
 * from its first event (weft_profile_loc.start) to its end, less the
 * time of its outermost frames; visits 0. A region of the program that
 * bears this name is stored as WEFT_PROFILE_OUTSIDE_REGION. */
#define WEFT_PROFILE_OUTSIDE "outside traced calls"
#define WEFT_PROFILE_OUTSIDE_REGION "outside traced calls (a region)"

/* One open Enter of a location. */
typedef struct weft_profile_frame {
    uint32_t region;     /* unified id */
    uint32_t slot;       /* its index in weft_profile_loc.slots */
    uint64_t enter;      /* time of the Enter */
    uint64_t child;      /* ticks spent in direct children */
} weft_profile_frame;

/* What one location did in one region. */
typedef struct weft_profile_slot {
    uint32_t key;        /* region + 1; 0: empty */
    uint32_t open;       /* frames of this region on the stack */
    uint64_t visits, incl, excl;  /* incl and excl in ticks */
} weft_profile_slot;

/* The profile of one location: a stack of open Enters and a table of
 * the regions it touched. The converter's nesting reads the stack (what
 * is open in the archive). */
typedef struct weft_profile_loc {
    weft_profile_frame *stack;   /* innermost last */
    size_t depth, cap;
    weft_hashtab slots;          /* weft_profile_slot cells */
    uint64_t top;                /* ticks in outermost frames */
    uint64_t start;              /* its first event; the caller sets it
                                    before weft_profile_finish_loc */
} weft_profile_loc;

typedef struct weft_profile_sum {
    uint64_t visits, incl, excl;
} weft_profile_sum;

/* The name of region id ("" if it has none), owned by arg. */
typedef const char *(*weft_profile_name_fn)(const void *arg, uint32_t id);
/* Room for a paradigm's name (weft_profile_paradigm_name), NUL included:
 * the longest, "measurement_system", or "paradigm N" of any unsigned N. */
#define WEFT_PROFILE_PARADIGM_NAME 20
/* The paradigm of region id as its rows say it: weft_profile_paradigm_name
 * of its Region definition, "" when there is no such region; a static
 * string, or buf (WEFT_PROFILE_PARADIGM_NAME bytes), or owned by arg. */
typedef const char *(*weft_profile_paradigm_fn)(const void *arg, uint32_t id,
                                                char *buf);

/* What one thread gathered over the locations it finished. */
typedef struct weft_profile {
    weft_profile_name_fn name;  /* names the regions */
    weft_profile_paradigm_fn paradigm; /* their paradigm; NULL: none */
    const void *name_arg;       /* name's and paradigm's argument; not
                                   owned */
    size_t nregions;          /* unified regions: ids below are profiled */
    size_t keep;              /* rows kept per location */
    const uint32_t *order;    /* not owned; NULL: regions of equal
                                 exclusive time are kept in id order,
                                 else in the order of order[id] */
    size_t norder;            /* ids with an order[] entry */
    weft_profile_sum *sum;    /* by region id, over the locations */
    uint64_t outside;         /* ticks outside any region, summed */
    weft_region_row *rows;    /* per-location rows, times in ticks */
    size_t nrows, cap;
} weft_profile;

/* Makes p empty with sums for nregions regions (ids 0..nregions-1; an
 * Enter of another id nests but has no row), keeping the `keep` regions
 * of most exclusive time of each location as its rows; name(name_arg,
 * id) names the regions, paradigm(name_arg, id) tells their paradigm
 * (issue #35; NULL: every row's paradigm is ""). 0 or WEFT_ENOMEM;
 * weft_profile_free frees p either way. */
int weft_profile_init(weft_profile *p, weft_profile_name_fn name,
                      weft_profile_paradigm_fn paradigm,
                      const void *name_arg, size_t nregions, size_t keep);

/* The paradigm of a region of OTF2 paradigm `paradigm` (OTF2_Paradigm)
 * and role `role` (OTF2_RegionRole) as its rows say it: OTF2's name in
 * lower case ("mpi", "openmp", "pthread", "user", "compiler", "none",
 * ...; libotf2 has no function that names OTF2_Paradigm's constants),
 * except "io" for a region of paradigm NONE whose role is FILE_IO or
 * FILE_IO_METADATA: OTF2 has no I/O paradigm, and weft's I/O recorder
 * and Score-P define I/O calls so (Score-P calls that paradigm "io");
 * "paradigm N" for a number OTF2 does not name. A static string or buf
 * (WEFT_PROFILE_PARADIGM_NAME bytes). */
const char *weft_profile_paradigm_name(unsigned paradigm, unsigned role,
                                       char *buf);
/* Frees p's sums and rows. */
void weft_profile_free(weft_profile *p);
/* Adds the sums of `from` to those of `to` (same regions). */
void weft_profile_add(weft_profile *to, const weft_profile *from);
/* Adds the sums of `from`'s region id r to `to`'s region map[r] (r <
 * nmap; map[r] below to->nregions, else r is left out): a process's
 * regions, profiled in its own ids, added to the trace's. */
void weft_profile_add_mapped(weft_profile *to, const weft_profile *from,
                             const uint32_t *map, size_t nmap);

/* Opens a frame of region at t on location l. 0 or WEFT_ENOMEM. */
int weft_profile_enter(const weft_profile *p, weft_profile_loc *l,
                       uint32_t region, uint64_t t);

/* Adds `visits` calls of region and `ticks` of time in them to l, calls
 * made but not recorded one by one (callcounts.h): no frame, the time
 * is exclusive, and inclusive unless the region is open; it is taken
 * from the exclusive time of the innermost open frame, or from the time
 * outside traced calls when none is open (where the calls are counted:
 * at a thread's end). 0 or WEFT_ENOMEM; nothing for a region outside
 * the profile. */
int weft_profile_count(const weft_profile *p, weft_profile_loc *l,
                       uint32_t region, uint64_t visits, uint64_t ticks);

/* The converter calls the three below for each Enter and Leave it
 * writes, so they are inline: its loop over runs of Enters and Leaves
 * keeps a location's weft_profile_loc in a local, where every field
 * stays in a register. */

/* The slot of region in l's table, NULL when it has none. */
static inline weft_profile_slot *weft__profile_find(const weft_profile_loc *l,
                                                    uint32_t region)
{
    return weft_hashtab_find(&l->slots, region + 1,
                             sizeof(weft_profile_slot));
}

/* Opens a frame of region at t on l (of a profile of nregions regions)
 * when that needs no memory: there is room on the stack, and the region
 * has a slot or is outside the profile. 1, or 0 with l unchanged (then
 * weft_profile_enter does it). */
static inline int weft_profile_enter_fast(weft_profile_loc *l,
                                          size_t nregions, uint32_t region,
                                          uint64_t t)
{
    weft_profile_slot *sl = NULL;

    if (l->depth == l->cap)
        return 0;
    if (region < nregions) {
        if (!(sl = weft__profile_find(l, region)))
            return 0;
        sl->visits++;
        sl->open++;
    }
    l->stack[l->depth++] = (weft_profile_frame){
        region,
        sl ? (uint32_t)(sl - (weft_profile_slot *)l->slots.cells)
           : WEFT_PROFILE_NO_SLOT,
        t, 0
    };
    return 1;
}

/* Closes l's innermost open frame at t (there must be one). */
static inline void weft_profile_leave(weft_profile_loc *l, uint64_t t)
{
    weft_profile_frame f = l->stack[--l->depth];
    uint64_t dur = t - f.enter;

    if (f.slot != WEFT_PROFILE_NO_SLOT) {
        weft_profile_slot *sl = (weft_profile_slot *)l->slots.cells + f.slot;
        sl->excl += dur > f.child ? dur - f.child : 0;
        if (--sl->open == 0)
            sl->incl += dur;
    }
    if (l->depth)
        l->stack[l->depth - 1].child += dur;
    else
        l->top += dur;
}

/* Location l (OTF2 id `location`) is done: closes what is still open at
 * `end`, adds it to p's sums, adds its top rows to p->rows, and its
 * WEFT_PROFILE_OUTSIDE row (l->start to end less its outermost frames)
 * when that time is not 0, and frees its tables. 0 or WEFT_ENOMEM. */
int weft_profile_finish_loc(weft_profile *p, weft_profile_loc *l,
                            int64_t location, uint64_t end);
/* Frees l's stack and table and zeroes it. */
void weft_profile_loc_free(weft_profile_loc *l);

/* The rows of a trace: the sums over all locations (WEFT_PROFILE_ALL, by
 * region id, then WEFT_PROFILE_OUTSIDE's) then p->rows, times in seconds
 * at `resolution` ticks per second; none when no location entered a
 * region. *rows (malloc'd, NULL when there is none, region names and
 * paradigms malloc'd; the outside rows' paradigm "") becomes the
 * caller's; p keeps no rows. 0 or WEFT_ENOMEM. */
int weft_profile_result(weft_profile *p, uint64_t resolution,
                        weft_region_row **rows, size_t *nrows);

#endif
