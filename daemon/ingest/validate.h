/* validate.h - the checks every record a member sends passes before it is
 * journaled and acknowledged (session.c), and again when recovery reads a
 * journal back (recover.c); and those of a Hello's tags.
 *
 * Generic over the record table: OTF2 enum values, typed values with a
 * type, references (defined by this member, or the conventions for what
 * weftd derives), counts and attribute types that match their
 * definitions, no definitions weftd derives itself, no id twice; for
 * events also non-decreasing times and the announced count. Pure
 * functions over a weft_member (its `defined` ids and their decls, which
 * Definitions that pass extend): no socket, no loop, no disk.
 *
 * A refusal returns a WEFT_E* code, a message naming the record, field
 * and value, and, when it went beyond a configured limit (max_string,
 * max_definitions), which one, so that the caller counts it without
 * reading the message.
 */
#ifndef WEFT_VALIDATE_H
#define WEFT_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "memberin.h"
#include "weft.pb-c.h"

/* What weftd keeps of a definition beyond its encoded bytes (its entries
 * in id sets and the unifier's maps), charged to max_definition_bytes. */
#define WEFT_DEF_OVERHEAD 64
/* Checks a Definitions payload of a member (its ingest state in) and
 * records the ids it defines (and, for the id spaces later records are
 * checked against, their counts and declared types). A payload is
 * accepted or refused as a whole: on a refusal the member defines
 * nothing more than before. *charge is what an accepted one costs its
 * trace (len + WEFT_DEF_OVERHEAD per record; 0 on a refusal), which the
 * caller adds to the trace's and compares with max_definition_bytes
 * (ingest refuses beyond, recovery takes what was acknowledged).
 * 0, or a WEFT_E* code with
 * err naming the record, field and value and *limit (if limit is not
 * NULL) the limit it went beyond, WEFT_LIMIT_NONE for other refusals. */
int weft_validate_defs(weft_memberin *in, const uint8_t *buf, size_t len,
                       uint64_t *charge, enum weft_limit *limit, char *err,
                       size_t errlen);
/* The most events (or dropped records) a thread may report, and how far
 * from its process's start (its Hello's clock) an event may lie. */
#define WEFT_MAX_COUNT (UINT64_C(1) << 48)
#define WEFT_MAX_EARLY_S 86400
#define WEFT_MAX_SPAN_S (366 * 86400)
/* Checks a Goodbye's per-thread figures: each thread below max_locations
 * (else WEFT_ELIMIT, *limit set), named once, its counts at most
 * WEFT_MAX_COUNT (else WEFT_EINVAL). 0 with *dropped their sum, or the
 * code with err. */
int weft_validate_goodbye(const Weft__Goodbye *g, uint64_t max_locations,
                          enum weft_limit *limit, uint64_t *dropped,
                          char *err, size_t errlen);
/* Checks an EventBatch payload of a member for thread `loc` (which it
 * has: in->nlocs > loc, weft_memberin_location): record types, the same
 * value checks as definitions (attribute lists too), times from `base`
 * on and not before the thread's last_time, `count` events. On success
 * *last_time is the time of the batch's last event; the thread's state
 * is the caller's to move on. Returns as weft_validate_defs. */
int weft_validate_events(const weft_memberin *in, uint32_t loc, uint64_t base,
                         uint32_t count, const uint8_t *buf, size_t len,
                         uint64_t *last_time, enum weft_limit *limit,
                         char *err, size_t errlen);
/* Forgets the ids a Definitions payload that weft_validate_defs accepted
 * defined: it was not journaled after all (or went beyond
 * max_definition_bytes), and a resend defines them. Returns the charge
 * weft_validate_defs gave it, for the caller to take back. */
uint64_t weft_validate_undefine(weft_memberin *in, const uint8_t *buf,
                                size_t len);
/* Checks the tags of Hello h (README, "Tags"): at most 64, keys of 1 to
 * 64 characters A-Z a-z 0-9 _ . -, each once, values up to max_string
 * bytes. Returns as weft_validate_defs, err naming the tag and the rule
 * it breaks. */
int weft_validate_tags(const Weft__Hello *h, uint64_t max_string,
                       enum weft_limit *limit, char *err, size_t errlen);
/* How Goodbye g says its process ended: *out is a copy of g->ended
 * (owned by the caller), NULL when the process ended normally. Returns 0,
 * WEFT_EINVAL when it is longer than WEFT_MAX_ENDED or holds a control
 * character, or WEFT_ENOMEM; err says which. */
int weft_goodbye_ended(const Weft__Goodbye *g, char **out, char *err,
                       size_t errlen);

#endif
