/* idset.h - a growable set of ids (a bitmap), for the definition ids a
 * member has defined so far: ingest asks it for every reference of every
 * record (session.c), so membership is an inline bit test. Not thread
 * safe; whoever owns the member owns its sets (the loop thread).
 */
#ifndef WEFT_IDSET_H
#define WEFT_IDSET_H

#include <stdint.h>

typedef struct weft_idset {
    uint8_t *bits;
    uint64_t cap;  /* ids the bitmap can hold: a power of two, 0 when
                      empty */
} weft_idset;

/* Adds id to s, growing the bitmap (doubling) as needed. Returns 0,
 * WEFT_ELIMIT if id >= limit (s unchanged), or WEFT_ENOMEM. */
int weft_idset_add(weft_idset *s, uint64_t id, uint64_t limit);

/* Is id in s? 1 or 0; any id beyond the bitmap is not. */
static inline int weft_idset_has(const weft_idset *s, uint64_t id)
{
    return id < s->cap && (s->bits[id / 8] & (1u << (id % 8)));
}

/* Frees the bitmap; s is then the empty set again (and may be reused). */
void weft_idset_free(weft_idset *s);

#endif
