/* idset.h - a map from definition ids to nonzero 64-bit values whose
 * memory grows with the number of ids it holds, never with their size:
 * the ids a member defined so far and what later records check against
 * them (validate.c), and a member's local -> global ids (unify.c).
 *
 * Ingest asks it for every reference of every record and conversion for
 * every Enter and Leave, so the usual case is an inline array read: ids
 * from 0 up to a few times the number held live in a dense array; the
 * others (a peer defining id 2^24 - 1 and nothing below it) in an open
 * addressing hash table. At most ~100 bytes per id held in all (the
 * most it held: nothing shrinks on removal).
 * Not thread safe; whoever owns the set owns its memory.
 */
#ifndef WEFT_IDSET_H
#define WEFT_IDSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_idset_slot {
    uint64_t id;
    uint64_t value;  /* 0: the slot is free */
} weft_idset_slot;

typedef struct weft_idset {
    uint64_t *dense;        /* values by id for ids < ndense, 0: none */
    uint64_t ndense;        /* 0, or a power of two at most 4 x (n + 16) */
    weft_idset_slot *slots; /* ids >= ndense; NULL or nslots long */
    uint64_t nslots;        /* a power of two, at least 2 x nsparse */
    uint64_t nsparse;       /* ids held in slots */
    uint64_t n;             /* ids held in all */
} weft_idset;

/* Sets the value of id in s to `value` (not 0), adding id if s does not
 * hold it. Returns 0 or WEFT_ENOMEM (s unchanged). */
int weft_idset_put(weft_idset *s, uint64_t id, uint64_t value);

/* Adds id to s (value 1). Returns 0, WEFT_ELIMIT if id >= limit (s
 * unchanged), or WEFT_ENOMEM. */
int weft_idset_add(weft_idset *s, uint64_t id, uint64_t limit);

uint64_t weft__idset_sparse_get(const weft_idset *s, uint64_t id);

/* The value of id in s, 0 when s does not hold it. */
static inline uint64_t weft_idset_get(const weft_idset *s, uint64_t id)
{
    if (id < s->ndense)
        return s->dense[id];
    return s->nsparse ? weft__idset_sparse_get(s, id) : 0;
}

/* Is id in s? 1 or 0. */
static inline int weft_idset_has(const weft_idset *s, uint64_t id)
{
    return weft_idset_get(s, id) != 0;
}

/* Removes id from s (nothing if s does not hold it). */
void weft_idset_del(weft_idset *s, uint64_t id);

/* The dense part of s for hot loops: values by id, *n long (ids beyond
 * it may still be in s: ask weft_idset_get). Valid until s changes. */
static inline const uint64_t *weft_idset_dense(const weft_idset *s,
                                               size_t *n)
{
    *n = (size_t)s->ndense;
    return s->dense;
}

/* Calls fn(arg, id, value) for each id s holds: the dense part in
 * increasing id order, then the others in no order. Stops at the first
 * nonzero return of fn and returns it; 0 when all were seen. s must not
 * change meanwhile. */
int weft_idset_each(const weft_idset *s,
                    int (*fn)(void *arg, uint64_t id, uint64_t value),
                    void *arg);

/* Bytes of memory s holds (its arrays). */
size_t weft_idset_bytes(const weft_idset *s);

/* Frees the memory; s is then the empty set again (and may be reused). */
void weft_idset_free(weft_idset *s);

#endif
