/* weft-demo-all.h - weft-demo --all-records: every record kind of the
 * record table, sent through libweft's generated API with boundary
 * values, and written down as JSON lines for the end-to-end checker.
 *
 * Unlike the rest of weft-demo this part uses weft's internal record
 * descriptors (proto/record.h) to log what it sends generically; it is a
 * test driver, not an example to copy.
 */
#ifndef WEFT_DEMO_ALL_H
#define WEFT_DEMO_ALL_H

#include <stdint.h>
#include <stdio.h>

/* Kinds counted in reports: every event, then every client definition;
 * at most DEMO_MAX_KINDS. */
#define DEMO_MAX_KINDS 128
int demo_nkinds(void);
const char *demo_kind_name(int kind);
/* Index of the kind named `name`, -1 if none. */
int demo_kind(const char *name);
/* 1 for events, 0 for definitions. */
int demo_kind_is_event(int kind);
/* Wire id (= WEFT_TYPE_<Name>) of an event kind, 0 for a definition. */
uint32_t demo_kind_event_type(int kind);

/* In a child (rank `rank` of `size`, `threads` threads each), after
 * weft_open: defines every client definition kind, counting them into
 * counts[] (by kind) and logging them as JSON lines to `log` (may be
 * NULL). 0, or -1 after a message on stderr. */
int demo_all_define(uint32_t rank, uint32_t size, uint32_t threads,
                    FILE *log, uint64_t *counts);
/* In each recording thread: records every event kind at least once,
 * counting into counts[] and logging to `log` (may be NULL; the thread's
 * own file). Returns 0 or the first WEFT_E* code with *failed naming the
 * call. */
int demo_all_events(FILE *log, uint64_t *counts, const char **failed);
/* Writes the descriptors of every record kind and id space as JSON lines
 * (what the checker needs to resolve references generically). */
void demo_all_schema(FILE *out);

#endif
