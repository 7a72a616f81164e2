/* timeline.c - the timeline summary of one location (timeline.h).
 *
 * DESIGN: the open bin's candidates are a tiny open-addressing table by
 * region key, so the common note (same bin, region in its home slot) is
 * a compare and an add, inline in the converter's loop. Everything else
 * comes here: the first note, a region elsewhere in the table or not in
 * it, a note past the open bin. A bin with more regions than candidates
 * keeps the heaviest in the Space-Saving way (the newcomer replaces the
 * lightest candidate and inherits its time), so a region that has most
 * of a bin's time is always among them. Closing a bin picks its
 * candidate of most time; a note far past the open bin closes the bins
 * between, each with the region that was open all along. When the last
 * bin closes, the bins are merged in pairs and the width doubles, so
 * the bins always cover the location from its first note with cap bins
 * at most: the cost is one merge of cap bins per doubling, and about
 * cap / 2 bin closings per doubling.
 */
#include "timeline.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

#define MASK (WEFT_TIMELINE_CANDS - 1)

/* 0 or WEFT_ENOMEM. */
int weft_timeline_init(weft_timeline *tl, uint32_t cap, uint64_t width)
{
    uint32_t c = 2;

    memset(tl, 0, sizeof *tl);
    while (c * 2 <= cap && c < (UINT32_C(1) << 30))
        c *= 2;
    tl->cap = c;
    tl->width = width ? width : 1;
    tl->bins = malloc(c * sizeof *tl->bins);
    tl->ticks = malloc(c * sizeof *tl->ticks);
    if (!tl->bins || !tl->ticks) {
        weft_timeline_free(tl);
        return WEFT_ENOMEM;
    }
    return 0;
}

void weft_timeline_free(weft_timeline *tl)
{
    free(tl->bins);
    free(tl->ticks);
    memset(tl, 0, sizeof *tl);
}

/* Adds d ticks of key to the open bin's candidates. */
static void add(weft_timeline *tl, uint32_t key, uint64_t d)
{
    weft_timeline_cand *min = NULL;

    for (uint32_t i = 0; i < WEFT_TIMELINE_CANDS; i++) {
        weft_timeline_cand *k = &tl->cand[(key + i) & MASK];
        if (k->key == key) {
            k->ticks += d;
            return;
        }
        if (k->key == 0 && k->ticks == 0) {
            /* Free (the table only fills up within a bin): take it. */
            k->key = key;
            k->ticks = d;
            return;
        }
        if (!min || k->ticks < min->ticks)
            min = k;
    }
    min->key = key;
    min->ticks += d;
}

/* Merges the closed bins in pairs and doubles the width. */
static void merge_pairs(weft_timeline *tl)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < tl->n; i += 2, n++) {
        uint32_t a = tl->bins[i];
        uint64_t ta = tl->ticks[i];
        if (i + 1 < tl->n) {
            uint32_t b = tl->bins[i + 1];
            uint64_t tb = tl->ticks[i + 1];
            if (a == b)
                ta += tb;
            else if (tb > ta) {
                a = b;
                ta = tb;
            }
        }
        tl->bins[n] = a;
        tl->ticks[n] = ta;
    }
    tl->n = n;
    tl->width *= 2;
}

/* Closes the open bin: its dominant is the candidate of most time (of
 * equals a region before "no region", then the lowest id, so the result
 * does not depend on slots). */
static void close_bin(weft_timeline *tl)
{
    weft_timeline_cand best = { 0, 0 };

    for (uint32_t i = 0; i < WEFT_TIMELINE_CANDS; i++) {
        const weft_timeline_cand *k = &tl->cand[i];
        if (k->ticks > best.ticks ||
            (k->ticks == best.ticks && k->ticks &&
             k->key - 1u < best.key - 1u))
            best = *k;
    }
    assert(tl->n < tl->cap);
    tl->bins[tl->n] = best.key;
    tl->ticks[tl->n] = best.ticks;
    tl->n++;
    memset(tl->cand, 0, sizeof tl->cand);
    if (tl->n == tl->cap)
        merge_pairs(tl);
    tl->end = tl->first + (uint64_t)(tl->n + 1) * tl->width;
}

/* See timeline.h. */
void weft__timeline_note(weft_timeline *tl, uint32_t region, uint64_t t)
{
    uint32_t key = region + 1;

    if (!tl->ticks)
        return;  /* no timeline here, or finished */
    if (!tl->end) {
        tl->first = tl->since = t;
        tl->end = t + tl->width;
        if (tl->end <= t)
            tl->end = UINT64_MAX;
        return;
    }
    if (t < tl->since)
        t = tl->since;  /* the converter never goes back; be safe */
    while (t >= tl->end && tl->end != UINT64_MAX) {
        if (tl->end > tl->since) {
            add(tl, key, tl->end - tl->since);
            tl->since = tl->end;
        }
        close_bin(tl);
    }
    add(tl, key, t - tl->since);
    tl->since = t;
}

/* See timeline.h. */
void weft_timeline_finish(weft_timeline *tl, uint32_t region, uint64_t t)
{
    if (!tl->ticks)
        return;
    if (tl->end) {
        weft__timeline_note(tl, region, t);
        /* The open bin, unless the location ended where it starts. */
        if (tl->since > tl->end - tl->width || tl->n == 0)
            close_bin(tl);
    }
    free(tl->ticks);
    tl->ticks = NULL;
}

void weft_timeline_remap(weft_timeline *tl, const uint32_t *map,
                         size_t nmap)
{
    for (uint32_t i = 0; tl->bins && i < tl->n; i++) {
        uint32_t r = tl->bins[i] - 1u;  /* key 0: UINT32_MAX, none */
        if (tl->bins[i])
            tl->bins[i] = r < nmap && map[r] != UINT32_MAX ? map[r] + 1u
                                                           : 0;
    }
}
