/* timeline.h - the timeline summary of one location (issue #17): its
 * time cut into bins, each bin holding the region that dominated it (the
 * innermost open region with the most time in the bin), computed while
 * the converter writes the location's Enters and Leaves, for `weft
 * report`'s picture of a trace without reading its events.
 *
 * The converter (replay.c) tells it, at each Enter and Leave it writes,
 * which region was the innermost open one until then
 * (weft_timeline_note); the time since the previous Enter or Leave is
 * that region's exclusive time. The range is not known until the end,
 * so the bins are adaptive: the first is `width` ticks from the first
 * Enter or Leave, and when the bins are full they are merged in pairs
 * and the width doubled. A bin's dominant region is chosen among a few
 * candidates (WEFT_TIMELINE_CANDS) when it closes; two merged bins keep
 * the dominant with the more time (their sum when it is the same
 * region), an approximation of the merged bin's own dominant.
 * One thread owns a weft_timeline; no allocation after init.
 */
#ifndef WEFT_TIMELINE_H
#define WEFT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

/* Bins of one location, at most (a power of two). */
#define WEFT_TIMELINE_BINS 1024
/* Candidates for a bin's dominant region (a power of two). */
#define WEFT_TIMELINE_CANDS 8
/* "No region open" as a region id. */
#define WEFT_TIMELINE_NONE UINT32_MAX

/* Time of one region in the open bin. key: region + 1; 0 is "no region
 * open" (WEFT_TIMELINE_NONE + 1 wraps to 0), and also a free slot while
 * ticks is 0. */
typedef struct weft_timeline_cand {
    uint32_t key;
    uint64_t ticks;
} weft_timeline_cand;

typedef struct weft_timeline {
    uint64_t end;        /* end of the open bin; 0 before the first note */
    uint64_t since;      /* time of the last note */
    weft_timeline_cand cand[WEFT_TIMELINE_CANDS]; /* of the open bin,
                                                     slot key & mask first */
    uint64_t first;      /* time of the first note: bin 0 starts there */
    uint64_t width;      /* ticks per bin */
    uint32_t n;          /* closed bins */
    uint32_t cap;        /* bins at most (a power of two, >= 2) */
    uint32_t *bins;      /* [cap] dominant key of each closed bin (0: no
                            region open most of that time); NULL: this
                            location has no timeline */
    uint64_t *ticks;     /* [cap] that key's ticks in the bin (merging);
                            freed by weft_timeline_finish */
} weft_timeline;

/* Makes tl empty with room for cap bins (rounded down to a power of two,
 * at least 2) of width ticks at first (at least 1). 0 or WEFT_ENOMEM
 * (tl then has no timeline); weft_timeline_free frees it either way. */
int weft_timeline_init(weft_timeline *tl, uint32_t cap, uint64_t width);
/* Renames the regions of tl's closed bins: region r becomes map[r]
 * (r < nmap and map[r] not UINT32_MAX; else the bin names none): a
 * process's timeline, kept in its own region ids, in the trace's. */
void weft_timeline_remap(weft_timeline *tl, const uint32_t *map,
                         size_t nmap);
/* Frees tl's arrays and zeroes it. */
void weft_timeline_free(weft_timeline *tl);

/* The general way of weft_timeline_note (timeline.c). */
void weft__timeline_note(weft_timeline *tl, uint32_t region, uint64_t t);

/* Region (a region id, or WEFT_TIMELINE_NONE) was the innermost open
 * region from the previous note until t (t never less than it); the
 * first note starts the timeline. Inline for the converter's loop over
 * Enters and Leaves: while t is in the open bin and the region is in
 * its slot, a compare and an add. */
static inline void weft_timeline_note(weft_timeline *tl, uint32_t region,
                                      uint64_t t)
{
    uint32_t key = region + 1;
    weft_timeline_cand *k = &tl->cand[key & (WEFT_TIMELINE_CANDS - 1)];

    if (t < tl->end && k->key == key) {
        k->ticks += t - tl->since;
        tl->since = t;
        return;
    }
    weft__timeline_note(tl, region, t);
}

/* The location ended at t: the time until t goes to region (normally
 * WEFT_TIMELINE_NONE: nothing is open any more), the open bin is closed
 * when time passed in it, and the merging ticks are freed. tl->bins
 * holds tl->n bins afterwards (none when nothing was noted). */
void weft_timeline_finish(weft_timeline *tl, uint32_t region, uint64_t t);

#endif
