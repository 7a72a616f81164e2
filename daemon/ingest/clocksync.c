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

/* Sends the answer to request id (client_time) on c: weftd's clock now,
 * plus offset. */
static void answer(weft_conn *c, uint64_t id, uint64_t client_time,
                   int64_t offset)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync reply = WEFT__CLOCK_SYNC__INIT;

    reply.id = id;
    reply.client_time = client_time;
    reply.server_time = (uint64_t)((int64_t)weft_clocksync_now() + offset);
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &reply;
    weft_conn_send_env(c, &env);
}

void weft_clocksync_answer(weft_conn *c, const Weft__ClockSync *cs)
{
    int64_t offset = 0;

    /* A part's member (partlink.h) is timed on the head's clock, as the
     * head's own members and the other nodes' are. */
    if (c->member && c->member->in_part && c->d->part_cbs &&
        c->d->part_cbs->head_clock(c->d, &offset) < 0) {
        c->sync_waits = 1;
        c->sync_id = cs->id;
        c->sync_client_time = cs->client_time;
        return;
    }
    answer(c, cs->id, cs->client_time, offset);
}

void weft_clocksync_head_known(weft_daemon *d)
{
    int64_t offset;

    if (!d->part_cbs || d->part_cbs->head_clock(d, &offset) < 0)
        return;
    for (weft_conn *c = d->srv->conns; c; c = c->next) {
        if (!c->sync_waits)
            continue;
        c->sync_waits = 0;
        answer(c, c->sync_id, c->sync_client_time, offset);
    }
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
