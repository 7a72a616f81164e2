/* addrmap.c - the writer side of the lock-free address map (addrmap.h):
 * insertion and growth. Readers never wait for any of it.
 */
#include <stdlib.h>

#include "addrmap.h"
#include "weft_errors.h"

#define NOINSTR __attribute__((no_instrument_function))

/* A zeroed table of `slots` slots (a power of 2), or NULL. */
NOINSTR static weft__addrmap_table *table_new(size_t slots)
{
    weft__addrmap_table *t =
        calloc(1, sizeof *t + slots * sizeof(weft__addrmap_slot));
    unsigned bits = 0;

    if (!t)
        return NULL;
    while (((size_t)1 << bits) < slots)
        bits++;
    t->mask = slots - 1;
    t->shift = 64 - bits;
    return t;
}

/* Stores key -> value in the first free slot of its probe sequence; the
 * value first, then the key with release order (see DESIGN). */
NOINSTR static void table_store(weft__addrmap_table *t, uintptr_t key,
                                uint32_t value)
{
    size_t i = weft__addrmap_hash(key, t->shift);

    while (atomic_load_explicit(&t->slot[i].key, memory_order_relaxed))
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slot[i].value, value, memory_order_relaxed);
    atomic_store_explicit(&t->slot[i].key, key, memory_order_release);
}

NOINSTR int weft__addrmap_put(weft__addrmap *m, uintptr_t key,
                              uint32_t value)
{
    weft__addrmap_table *t =
        atomic_load_explicit(&m->cur, memory_order_relaxed);
    uint32_t old;

    if (key == 0)
        return WEFT_EINVAL;
    if (weft__addrmap_get(m, key, &old))
        return WEFT_EEXIST;
    if (!t || (m->count + 1) * 2 > t->mask + 1) {
        size_t slots = t ? (t->mask + 1) * 2 : WEFT__ADDRMAP_MIN_SLOTS;
        weft__addrmap_table *n;

        if (slots > WEFT__ADDRMAP_MAX_SLOTS)
            return WEFT_ELIMIT;
        n = table_new(slots);
        if (!n)
            return WEFT_ENOMEM;
        for (size_t i = 0; t && i <= t->mask; i++) {
            uintptr_t k =
                atomic_load_explicit(&t->slot[i].key, memory_order_relaxed);

            if (k)
                table_store(n, k, atomic_load_explicit(&t->slot[i].value,
                                                       memory_order_relaxed));
        }
        n->prev = t;
        atomic_store_explicit(&m->cur, n, memory_order_release);
        t = n;
    }
    table_store(t, key, value);
    m->count++;
    return 0;
}

NOINSTR void weft__addrmap_free(weft__addrmap *m)
{
    weft__addrmap_table *t =
        atomic_load_explicit(&m->cur, memory_order_relaxed);

    while (t) {
        weft__addrmap_table *prev = t->prev;

        free(t);
        t = prev;
    }
    atomic_store_explicit(&m->cur, NULL, memory_order_relaxed);
    m->count = 0;
}
