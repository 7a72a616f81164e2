/* members.c - what ingest asks of a member's trace (members.h): its
 * charges, its figures and its names. Loop thread. */
#include "members.h"

#include "quota.h"
#include "trace.h"

void weft_member_charge(weft_memberin *in, uint64_t bytes)
{
    weft_trace *t = in->member->trace;

    /* Charged with the archive it will make (quota.h), given back when
     * the trace is freed. */
    if (weft_quota_live(&t->d->quota, t->uid, (int64_t)bytes) == 0)
        t->charged += bytes;
}

uint64_t weft_member_def_bytes(weft_memberin *in, uint64_t add,
                               uint64_t sub)
{
    weft_trace *t = in->member->trace;

    t->def_bytes += add;
    t->def_bytes -= sub < t->def_bytes ? sub : t->def_bytes;
    return t->def_bytes;
}

void weft_member_unjournaled(weft_memberin *in, uint64_t count, int err)
{
    weft_trace *t = in->member->trace;

    t->unjournaled += count;
    t->unjournaled_errno = err;
}

void weft_member_describe(const weft_memberin *in, weft_log_ctx *ctx)
{
    const weft_trace *t = in->member->trace;

    ctx->trace = t->name;
    ctx->key = t->key;
    ctx->rank = in->rank;
}

const char *weft_member_name(const weft_memberin *in)
{
    return in->member->trace->name;
}

const char *weft_member_dir(const weft_memberin *in)
{
    return in->member->trace->dir;
}

uint32_t weft_member_joined(const weft_memberin *in)
{
    return in->member->trace->joined;
}
