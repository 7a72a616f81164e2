/* parts.h - a node's share of its head's traces, sent to the head (issue
 * #34; what ingest and the traces ask of it is partlink.h).
 *
 * A member that joins a part here (partlink.h) is journaled and
 * acknowledged by this weftd; the head learns of it over the link as a
 * member of the head's trace whose events this node writes (NodeRelay
 * events_here), numbered on the link with WEFT_PART_ID_BIT set (the
 * forwarded connections' numbers never have it). What the head gets is
 * copied here as it is journaled: the Hello, each Definitions (kept
 * until the head acknowledges it), the Goodbye; at the member's end the
 * sums its part's stream made, sent before the Goodbye. Each new link
 * sends the Hello of every member not done again; the head's HelloAck
 * says which Definitions it holds, and the rest follow. The head's
 * NodeRelay archive_key says where the member's event files go; its
 * `closed` after the Goodbye says it holds all of it: the member is
 * done here. An Error from the head (the trace ended, a limit) ends the
 * member's connection here with the head's words. Loop thread.
 */
#ifndef WEFT_PARTS_H
#define WEFT_PARTS_H

#include <stdint.h>

#include "daemon.h"
#include "partlink.h"
#include "weft.pb-c.h"

/* The bit of a part's member's number on the link. */
#define WEFT_PART_ID_BIT 0x80000000u

/* The callbacks (partlink.h) main.c wires on a node. */
extern const weft_part_cbs weft_part_cbs_node;

/* The table (weft_uplink_start). 0 or WEFT_ENOMEM. */
int weft_parts_init(weft_daemon *d);
/* uplink.c's, through forward.c: the link is made (the Hellos go out
 * again), ended, and what the head sent for a member of a part. */
void weft__parts_linked(weft_daemon *d);
void weft__parts_unlinked(weft_daemon *d);
void weft__parts_from_head(weft_daemon *d, const Weft__NodeRelay *r);
/* Each heartbeat while linked: the members the head refused for now
 * (their rank still connected there: the link before this one has not
 * let go of it) say Hello again. */
void weft__parts_tick(weft_daemon *d);
/* Members of parts whose head has not all of them yet, for the status. */
uint64_t weft_parts_count(const weft_daemon *d);
/* Frees the table (weftd stopped). */
void weft_parts_free(weft_daemon *d);

#endif
