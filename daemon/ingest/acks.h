/* acks.h - Acks of a member's frames and the envelopes weftd sends
 * (acks.c). Loop thread. */
#ifndef WEFT_ACKS_H
#define WEFT_ACKS_H

#include <stdint.h>

#include "memberin.h"
#include "server.h"
#include "weft.pb-c.h"

/* Packs env and sends it on c (closes c when it cannot be packed). */
void weft_conn_send_env(weft_conn *c, const Weft__Envelope *env);
/* Acknowledges a Definitions (definitions=1) or EventBatch frame: at
 * once, or with durability = fsync after the journal reached stable
 * storage. */
void weft_ack_send(weft_conn *c, int definitions, uint32_t loc,
                   uint64_t seq);
/* Starts an fdatasync covering every ack waiting, unless one runs: the
 * acks that arrive meanwhile wait for the next, so fsyncs are batched.
 * Nothing once the syncer has stopped (weftd is closing its
 * connections). When it is done, a connection whose Goodbye is written
 * (close_when_synced) closes after the Acks. */
void weft_ack_kick_sync(weft_memberin *m);

#endif
