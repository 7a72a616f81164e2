/* weft-demo-all-table.h - what weft-demo-all.c (the records of weft-demo
 * --all-records and their values) takes from weft-demo-all-table.c (what
 * the record table's descriptors drive): writing a record down and
 * sending it. The kinds and the schema line are in weft-demo-all.h.
 */
#ifndef WEFT_DEMO_ALL_TABLE_H
#define WEFT_DEMO_ALL_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include <weft.h>

#include "record.h"

/* Writes r to f as one JSON line: {"rank", "thread" (-1 for
 * definitions), "kind", "time", "fields", "attributes" (the attribute
 * list's fields or null)}. */
void demo__json_record(FILE *f, uint32_t rank, int64_t thread,
                       const weft_record *r);
/* Hands r to its weft_def_<Name> / weft_evt_<Name> (with the attribute
 * list al for an event, may be NULL); what that returns. */
int demo__send_record(weft_attribute_list *al, const weft_record *r);

#endif
