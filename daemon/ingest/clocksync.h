/* clocksync.h - weftd's answers to ClockSync requests: the clock every
 * archive's times are on (CLOCK_MONOTONIC in ns; a node's parts' members
 * get their head's, partlink.h), for a member's connection (bounded per
 * connection) and for a node's link. Loop thread. */
#ifndef WEFT_CLOCKSYNC_H
#define WEFT_CLOCKSYNC_H

#include <stdint.h>

#include "server.h"
#include "weft.pb-c.h"

/* ClockSync requests answered per connection: libweft sends 8 when it
 * starts and 8 before its Goodbye; more is a client measuring in a loop,
 * which would cost the loop thread, so it is a protocol error. */
#define WEFT_MAX_CLOCK_SYNCS 64u

/* weftd's clock for clock offsets: CLOCK_MONOTONIC in ns. */
uint64_t weft_clocksync_now(void);
/* Answers cs at once on c with the same id and client_time and weftd's
 * clock now (the head's for a part's member). Nothing is stored: the
 * client computes its offset and sends it as a ClockOffset definition,
 * journaled like every definition; a node keeps its offset to its head
 * in memory (uplink.c). A part's member asking before its node knows the
 * head's clock (the node started again, its link not measured yet) is
 * answered once it does (weft_clocksync_head_known): its newest request
 * waits; an answer on the node's own clock would put the process on the
 * wrong clock. libweft takes an answer within its time limit (a long
 * round trip, a wide error bound) and ignores a later one. */
void weft_clocksync_answer(weft_conn *c, const Weft__ClockSync *cs);
/* A node learnt its head's clock: the requests that waited for it are
 * answered. */
void weft_clocksync_head_known(weft_daemon *d);
/* A member's ClockSync: answered, at most WEFT_MAX_CLOCK_SYNCS per
 * connection. 0, or WEFT_ELIMIT after failing c. */
int weft_clocksync_member(weft_conn *c, const Weft__ClockSync *cs);

#endif
