/* gen.h - building records weftd accepts from a fuzzer's bytes: a cursor
 * over the input and a peer's model of what it defined (ids, declared
 * counts and types), so that references point at defined ids, enums are
 * in range and arrays have the counts their definitions declared.
 * Used by fuzz_daemon.c; gen.c builds the records.
 */
#ifndef WEFT_FUZZ_GEN_H
#define WEFT_FUZZ_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define NLOCS 4
#define MAXID 32          /* ids per id space a peer's model remembers */
#define PAYLOAD_MAX 8192  /* bytes of records per frame */

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static inline uint8_t byte(cursor *in)
{
    return in->p < in->end ? *in->p++ : 0;
}

/* A cursor over the next n bytes of in (fewer at its end). */
static inline cursor sub(cursor *in, size_t n)
{
    cursor s = { in->p, in->p };

    if (n > (size_t)(in->end - in->p))
        n = (size_t)(in->end - in->p);
    s.end = in->p + n;
    in->p += n;
    return s;
}

/* What a peer defined: enough to build records weftd accepts. */
typedef struct model {
    uint32_t next[WEFT_REF__COUNT];        /* ids defined: 0..next-1 */
    uint8_t count[WEFT_REF__COUNT][MAXID]; /* declared element counts */
    uint8_t type[WEFT_REF__COUNT][MAXID];  /* declared OTF2_Types */
    unsigned self_kind;                    /* of the record being built */
    uint64_t self_id;
} model;

/* Records from in into buf (at most PAYLOAD_MAX bytes): per record a
 * kind byte (an index into the definitions or events of the table), a
 * length byte and that many bytes for its fields; events take their time
 * step from their first byte and an attribute list when its bit 7 is
 * set. *time: the time of the previous event. Returns the length; *n the
 * records. */
size_t gen_records(model *m, int events, cursor *in, uint32_t rank,
                   uint8_t *buf, uint64_t *time, uint32_t *n);

#endif
