/* memberin.c - a member's ingest state (see memberin.h). */
#include "memberin.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "weft_errors.h"

int weft_memberin_location(weft_memberin *in, uint32_t loc, char *err,
                           size_t errlen)
{
    uint64_t max = in->d->cfg.max_locations;
    weft_loc_state *p;

    if (loc < in->nlocs)
        return 0;
    if (loc >= max)
        return weft__fail(err, errlen, WEFT_ELIMIT, "thread %u exceeds "
                          "max_locations (%" PRIu64 ")", loc, max);
    p = realloc(in->locs, (size_t)(loc + 1) * sizeof *p);
    if (!p)
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    memset(p + in->nlocs, 0, (loc + 1 - in->nlocs) * sizeof *p);
    in->locs = p;
    in->nlocs = loc + 1;
    return 0;
}

void weft_memberin_free(weft_memberin *in)
{
    free(in->host);
    free(in->node);
    free(in->ended);
    free(in->children);
    free(in->locs);
    in->host = in->ended = in->node = NULL;
    in->locs = NULL;
    in->nlocs = 0;
    for (int k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&in->defined[k]);
    free(in->waiting.v);
    free(in->syncing.v);
    in->waiting = in->syncing = (weft_ackq){ NULL, 0, 0 };
}
