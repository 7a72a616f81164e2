/* fuzz_sums.c - libFuzzer target for the head's decoder of a node's
 * MemberSums (daemon/convert/sums.c, issue #34): bytes from the network,
 * checked before the conversion uses them.
 *
 * Input: a header of 8 bytes saying the member the sums must be of (what
 * the head's pass 1 knows of it), then the MemberSums bytes:
 *   byte 0  rank            byte 4  I/O handles of its unifier
 *   byte 1  trace size      byte 5  definitions of its unifier
 *   byte 2  regions         byte 6  bit 0: its ticks are rescaled
 *   byte 3  metric members  byte 7  its rate: 0 1 GHz, else 2.5 GHz
 * The archive's resolution is 1 ns (the cluster's fixed resolution).
 *
 * Checked beyond memory safety: weft__sums_unpack returns 0 or
 * WEFT_ECORRUPT (WEFT_ENOMEM only when out of memory) with a message
 * naming the rank; what it accepts is what the conversion can use
 * without any further check: locations of the rank, sorted, each
 * profile's regions, timeline bins and metric members within the
 * unifier's counts; then the conversion's own consumers of them run
 * (the profile finished, the timelines and series remapped, the I/O and
 * sends summed as the report sums them) and everything is freed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sums.h"
#include "weft_errors.h"

#define HEADER 8

static const char *no_name(const void *arg, uint32_t id)
{
    (void)arg, (void)id;
    return "r";
}

/* What the conversion does with an adopted member's sums, on x. */
static void consume(const weft__sums_want *w, weft__sums *x)
{
    uint32_t map[256];
    weft_profile p;
    weft_iosum all = { { NULL, 0, 0 } };
    weft_message_row *rows = NULL;
    size_t nrows = 0, cap = 0;

    for (uint32_t i = 0; i < 256; i++)
        map[i] = i;
    CHECK(x->m.nlocs <= WEFT_SUMS_MAX_LOCATIONS);
    CHECK(weft_profile_init(&p, no_name, NULL, NULL, w->nregions, 100) == 0);
    for (size_t k = 0; k < x->m.nlocs; k++) {
        loc *l = &x->m.locs[k];
        CHECK(!k || l->thread > x->m.locs[k - 1].thread);
        CHECK(!l->prof.depth);
        for (uint32_t i = 0; i < l->tl.n; i++)
            CHECK(l->tl.bins[i] <= w->nregions);
        CHECK(l->tl.n < l->tl.cap || !l->tl.bins);
        CHECK(l->ml.n <= WEFT_METRICSUM_PER_LOC);
        for (size_t i = 0; i < l->ml.n; i++)
            CHECK(l->ml.s[i].member < w->nmetric_members &&
                  l->ml.s[i].n <= WEFT_METRICSUM_BINS);
        weft_timeline_remap(&l->tl, map, w->nregions);
        weft_metricloc_remap(&l->ml, map, w->nmetric_members);
        CHECK(weft_profile_finish_loc(&p, &l->prof,
                                      (int64_t)((uint64_t)w->rank << 32 |
                                                l->thread),
                                      l->last_time) == 0);
    }
    CHECK(weft_iosum_add_mapped(&all, &x->m.io, map, w->nio_handles) == 0);
    CHECK(weft_commsum_rows(&x->m.sends, w->rank, &rows, &nrows, &cap) == 0);
    for (size_t i = 0; i < nrows; i++)
        CHECK(rows[i].receiver < w->size);
    for (size_t i = 0; i < x->n.nloc_refs; i++)
        CHECK(x->n.loc_refs[i] >> 32 < w->size);
    free(rows);
    weft_iosum_free(&all);
    weft_profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft__sums_want w;
    weft__sums *x = NULL;
    char err[400], rank[32];
    int rc;

    if (size < HEADER)
        return 0;
    memset(&w, 0, sizeof w);
    w.rank = data[0];
    w.size = data[1];
    w.nregions = data[2];
    w.nmetric_members = data[3];
    w.nio_handles = data[4];
    w.ndefs = data[5];
    w.rescale = data[6] & 1;
    w.timer_resolution = data[7] ? 2500000000u : 1000000000u;
    w.resolution = 1000000000u;
    err[0] = '\0';
    rc = weft__sums_unpack(&w, data + HEADER, size - HEADER, &x, err,
                           sizeof err);
    if (rc < 0) {
        CHECK(rc == WEFT_ECORRUPT || rc == WEFT_ENOMEM);
        CHECK(!x);
        snprintf(rank, sizeof rank, "rank %u: ", data[0]);
        CHECK(strncmp(err, rank, strlen(rank)) == 0);
        return 0;
    }
    CHECK(rc == 0 && x);
    consume(&w, x);
    weft__sums_free(x);
    return 0;
}
