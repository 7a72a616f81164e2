/* idset.c - a map of ids whose memory follows the ids held (see idset.h).
 *
 * DESIGN: the dense array covers ids 0..ndense-1 and grows (doubling) to
 * take a new id only while it stays below 4 x (n + 16) entries, so it is
 * never more than ~32 bytes per id held; the other ids go to a linear
 * probing table kept at most half full (16-byte slots, 32 to 64 bytes
 * per id). When the dense array grows, the table's ids it now covers
 * move into it and the table shrinks to what stays. Deleting from the table shifts the entries after the hole
 * back, so no tombstones pile up. Not proto/hashtab.h (the one table):
 * ids are 64-bit, entries are deleted one by one, and the table shrinks.
 */
#include "idset.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

#define IDSET_FIRST_DENSE 64
#define IDSET_FIRST_SLOTS 16

static uint64_t slot_of(uint64_t id, uint64_t nslots)
{
    return (id * UINT64_C(0x9E3779B97F4A7C15)) >> 17 & (nslots - 1);
}

/* The slot holding id, or the free slot where it would go. */
static weft_idset_slot *find(const weft_idset_slot *slots, uint64_t nslots,
                             uint64_t id)
{
    uint64_t i = slot_of(id, nslots);

    while (slots[i].value && slots[i].id != id)
        i = (i + 1) & (nslots - 1);
    return (weft_idset_slot *)&slots[i];
}

uint64_t weft__idset_sparse_get(const weft_idset *s, uint64_t id)
{
    return find(s->slots, s->nslots, id)->value;
}

/* Makes the dense array `ndense` ids long (a power of two, not less
 * than now) and the table nslots slots (0 with no ids to hold), moving
 * each id of the table to the dense array when it covers it. WEFT_ENOMEM
 * leaves s unchanged. */
static int reshape(weft_idset *s, uint64_t ndense, uint64_t nslots)
{
    weft_idset_slot *slots = NULL;
    uint64_t nsparse = 0;

    if (nslots && !(slots = calloc(nslots, sizeof *slots)))
        return WEFT_ENOMEM;
    if (ndense > s->ndense) {
        uint64_t *p = realloc(s->dense, ndense * sizeof *p);
        if (!p) {
            free(slots);
            return WEFT_ENOMEM;
        }
        memset(p + s->ndense, 0, (ndense - s->ndense) * sizeof *p);
        s->dense = p;
        s->ndense = ndense;
    }
    for (uint64_t i = 0; i < s->nslots; i++) {
        const weft_idset_slot *o = &s->slots[i];
        if (!o->value)
            continue;
        if (o->id < s->ndense) {
            s->dense[o->id] = o->value;
        } else {
            assert(slots);
            *find(slots, nslots, o->id) = *o;
            nsparse++;
        }
    }
    free(s->slots);
    s->slots = slots;
    s->nslots = nslots;
    s->nsparse = nsparse;
    return 0;
}

/* Slots for the table's ids at or beyond `ndense`: a power of two at
 * least twice as many (IDSET_FIRST_SLOTS at least), 0 for none. */
static uint64_t slots_for(const weft_idset *s, uint64_t ndense)
{
    uint64_t stay = 0, n = IDSET_FIRST_SLOTS;

    for (uint64_t i = 0; i < s->nslots; i++)
        stay += s->slots[i].value && s->slots[i].id >= ndense;
    if (!stay)
        return 0;
    while (n < 2 * stay)
        n *= 2;
    return n;
}

static int sparse_put(weft_idset *s, uint64_t id, uint64_t value)
{
    weft_idset_slot *slot;

    if ((s->nsparse + 1) * 2 > s->nslots) {
        int rc = reshape(s, s->ndense, s->nslots ? s->nslots * 2
                                                 : IDSET_FIRST_SLOTS);
        if (rc < 0)
            return rc;
    }
    slot = find(s->slots, s->nslots, id);
    slot->id = id;
    slot->value = value;
    s->nsparse++;
    s->n++;
    return 0;
}

int weft_idset_put(weft_idset *s, uint64_t id, uint64_t value)
{
    uint64_t want = s->ndense ? s->ndense : IDSET_FIRST_DENSE;
    int rc;

    assert(value != 0);
    if (id >= s->ndense && s->nsparse) {
        weft_idset_slot *slot = find(s->slots, s->nslots, id);
        if (slot->value) {
            slot->value = value;
            return 0;
        }
    }
    if (id >= s->ndense) {
        while (want <= id && want <= 4 * (s->n + 16))
            want *= 2;
        if (want > id && want <= 4 * (s->n + 16)) {
            /* The ids that move leave the table: it shrinks to what
             * stays (none when all of them move). */
            if ((rc = reshape(s, want, slots_for(s, want))) < 0)
                return rc;
        } else {
            return sparse_put(s, id, value);
        }
    }
    if (!s->dense[id])
        s->n++;
    s->dense[id] = value;
    return 0;
}

int weft_idset_add(weft_idset *s, uint64_t id, uint64_t limit)
{
    if (id >= limit)
        return WEFT_ELIMIT;
    return weft_idset_put(s, id, 1);
}

void weft_idset_del(weft_idset *s, uint64_t id)
{
    weft_idset_slot *hole;
    uint64_t mask = s->nslots - 1, i, j;

    if (id < s->ndense) {
        if (s->dense[id])
            s->n--;
        s->dense[id] = 0;
        return;
    }
    if (!s->nsparse || !(hole = find(s->slots, s->nslots, id))->value)
        return;
    hole->value = 0;
    s->nsparse--;
    s->n--;
    /* Shift back the entries of the run after the hole that would no
     * longer be found past it. */
    i = (uint64_t)(hole - s->slots);
    for (j = (i + 1) & mask; s->slots[j].value; j = (j + 1) & mask) {
        uint64_t home = slot_of(s->slots[j].id, s->nslots);
        /* j's entry may move to i if its home is not in (i, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->slots[i] = s->slots[j];
            s->slots[j].value = 0;
            i = j;
        }
    }
}

int weft_idset_each(const weft_idset *s,
                    int (*fn)(void *arg, uint64_t id, uint64_t value),
                    void *arg)
{
    int rc;

    for (uint64_t i = 0; i < s->ndense; i++)
        if (s->dense[i] && (rc = fn(arg, i, s->dense[i])) != 0)
            return rc;
    for (uint64_t i = 0; s->nsparse && i < s->nslots; i++)
        if (s->slots[i].value &&
            (rc = fn(arg, s->slots[i].id, s->slots[i].value)) != 0)
            return rc;
    return 0;
}

size_t weft_idset_bytes(const weft_idset *s)
{
    return (size_t)(s->ndense * sizeof *s->dense +
                    s->nslots * sizeof *s->slots);
}

void weft_idset_free(weft_idset *s)
{
    free(s->dense);
    free(s->slots);
    memset(s, 0, sizeof *s);
}
