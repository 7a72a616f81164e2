/* userlim.c - per-user bounds over all of a user's recording traces (see
 * userlim.h). A walk over the traces recording: at most max_traces_per_user of them
 * per user, and it is done once per new member's Hello.
 */
#include "userlim.h"

#include <inttypes.h>
#include <stdio.h>

#include "trace.h"
#include "weft_errors.h"

uint64_t weft_userlim_count_members(const weft_daemon *d, uint32_t uid)
{
    uint64_t n = 0;

    for (const weft_trace *t = weft_trace_first(d, WEFT_TRACE_RECORDING); t;
         t = weft_trace_next(t))
        if (t->uid == uid)
            n += t->joined;
    return n;
}

int weft_userlim_members(const weft_daemon *d, uint32_t uid, char *err,
                         size_t errlen)
{
    uint64_t n = weft_userlim_count_members(d, uid);

    if (n < d->cfg.max_members_per_user)
        return 0;
    snprintf(err, errlen, "uid %" PRIu32 " has %" PRIu64 " processes in "
             "traces recording already: max_members_per_user is %" PRIu64,
             uid, n, d->cfg.max_members_per_user);
    return WEFT_ELIMIT;
}
