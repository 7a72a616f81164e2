/* session.h - the protocol of one client connection: handshake,
 * definitions, event batches, goodbye. Validates every record against the
 * member's definitions and clock before it is journaled and acked. */
#ifndef WEFT_SESSION_H
#define WEFT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "jwriter.h"
#include "trace.h"
#include "weft.pb-c.h"

struct weft_conn;

/* Handles one frame from the client. On bad input it sends an Error and
 * closes the connection (weft_conn_fail). */
void weft_session_frame(struct weft_conn *c, const Weft__Envelope *env);
/* The connection is closing: detach it from its member. */
void weft_session_closed(struct weft_conn *c);
/* The writer thread is done with entry j (jwriter.h): acknowledges it to
 * the connection that sent it, if that is still the member's, or on a
 * failed write fails that connection; the member's state follows what is
 * journaled. Loop thread. */
void weft_session_written(weft_daemon *d, struct weft_jentry *j);

/* Checks a Definitions payload of member m and records the ids it defines
 * (and, for the id spaces later records are checked against, their counts
 * and declared types). Generic over the record table: OTF2 enum values,
 * typed values with a type, references (defined by this member, or the
 * conventions for what weftd derives), counts and attribute types that
 * match their definitions, no definitions weftd derives itself, no id
 * twice. 0, or a WEFT_E* code with err naming the record, field and
 * value. */
int weft_session_check_defs(weft_member *m, const uint8_t *buf, size_t len,
                            char *err, size_t errlen);
/* Checks an EventBatch payload of member m for thread `loc`: record
 * types, the same value checks as definitions (attribute lists too),
 * non-decreasing times, count. On success *last_time is the time of the
 * batch's last event. */
int weft_session_check_events(weft_member *m, uint32_t loc, uint64_t base,
                              uint32_t count, const uint8_t *buf, size_t len,
                              uint64_t *last_time, char *err, size_t errlen);

#endif
