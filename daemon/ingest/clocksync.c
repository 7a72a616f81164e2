/* clocksync.c - weftd's answers to ClockSync requests (see clocksync.h). */
#include "clocksync.h"

#include <time.h>

#include "acks.h"
#include "memberin.h"
#include "partlink.h"
#include "weft_errors.h"

uint64_t weft_clocksync_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void weft_clocksync_answer(weft_conn *c, const Weft__ClockSync *cs)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync reply = WEFT__CLOCK_SYNC__INIT;
    int64_t offset;

    reply.id = cs->id;
    reply.client_time = cs->client_time;
    reply.server_time = weft_clocksync_now();
    /* A part's member (partlink.h) is timed on the head's clock, as the
     * head's own members and the other nodes' are. */
    if (c->member && c->member->in_part && c->d->part_cbs &&
        c->d->part_cbs->head_clock(c->d, &offset) == 0)
        reply.server_time = (uint64_t)((int64_t)reply.server_time + offset);
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &reply;
    weft_conn_send_env(c, &env);
}

int weft_clocksync_member(weft_conn *c, const Weft__ClockSync *cs)
{
    if (++c->clock_syncs > WEFT_MAX_CLOCK_SYNCS) {
        weft_conn_fail(c, WEFT_ELIMIT, "more than %u ClockSync requests on "
                       "one connection", WEFT_MAX_CLOCK_SYNCS);
        return WEFT_ELIMIT;
    }
    weft_clocksync_answer(c, cs);
    return 0;
}
